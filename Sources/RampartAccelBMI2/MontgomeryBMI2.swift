// Montgomery multiplication and squaring compiled with BMI2 and ADX, so LLVM can use `mulx` (which
// leaves the flags alone and takes any registers) in the product-scanning loops. Entry points take
// raw pointers and run the whole n² loop. The kernels are generated:
//   MontgomeryBMI2Loops.generated.swift  `mul`/`square` for any limb count: the portable kernels'
//       loops (Scripts/gen_montgomery_loops.py renders both from Scripts/templates/montgomery_loops.swift.in);
//   MontgomeryBMI2Fixed.swift  fully unrolled `mul16`/`square16`/`mul32`/`square32` (Scripts/gen_montgomery.py),
//       which `mul`/`square` hand over to for 16 and 32 limbs.

import Swift

#if arch(x86_64)

/// Montgomery kernels for processors with BMI2 and ADX (callers check `CPU.features`).
public enum MontgomeryBMI2 {}

#endif
