// Montgomery multiplication and squaring compiled with BMI2 and ADX, so LLVM can use `mulx` (which
// leaves the flags alone and takes any registers) in the product-scanning loops. Entry points take
// raw pointers and run the whole n² loop. The kernels are generated:
//   MontgomeryBMI2Loops.swift  `mul`/`square` for any limb count: the portable kernels' loops
//       (RampartKernelSupport/MontgomeryLoops.swift, compiled here with BMI2 and ADX);
//   MontgomeryBMI2Fixed.generated.swift  fully unrolled `mul16`/`square16`/`mul32`/`square32` (Scripts/gen_montgomery.py),
//       which `mul`/`square` hand over to for 16 and 32 limbs.

import Swift
import RampartKernelSupport

#if arch(x86_64)

/// Montgomery kernels for processors with BMI2 and ADX (callers check `CPU.features`).
public enum MontgomeryBMI2 {}

/// Montgomery multiplication and squaring with `mulx`, `adcx` and `adox`.
public enum MontgomeryMULX: MontgomeryImplementation {
    public static let name = "bmi2+adx"
    public static let requires: KernelFeatures = [.bmi2, .adx]
    @inline(__always)
    public static func mul(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                           _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        MontgomeryBMI2.mul(r, a, b, m, n, m0inv, t)
    }
    @inline(__always)
    public static func square(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                              _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        MontgomeryBMI2.square(r, a, m, n, m0inv, t)
    }
}

#endif
