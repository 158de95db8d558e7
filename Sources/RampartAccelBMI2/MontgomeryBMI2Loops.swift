// Montgomery multiplication and squaring (any limb count) compiled with BMI2 and ADX, so LLVM can use
// `mulx` (which leaves the flags alone and takes any registers) in the product-scanning loops:
// RampartKernelSupport's loops (MontgomeryLoops.swift, the portable kernels' body) compiled in this
// module. For 16 and 32 limbs they hand over to the unrolled kernels of
// MontgomeryBMI2Fixed.generated.swift.

import Swift
import RampartKernelSupport

#if arch(x86_64)

extension MontgomeryBMI2 {
    /// `r = a · a · R⁻¹ mod m` (product scanning; each off-diagonal product computed once).
    @inline(never)
    public static func square(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                              _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        // The limb count is public: the unrolled kernels for 2048 and 1024 bits.
        if n == 32 { square32(r, a, m, m0inv, t); return }
        if n == 16 { square16(r, a, m, m0inv, t); return }
        if n < 4 { mul(r, a, a, m, n, m0inv, t); return }
        montgomerySquareLoops(r, a, m, n, m0inv, t)
    }

    /// `r = a · b · R⁻¹ mod m`, fully reduced, for `a < R` and `b < m` (both n limbs); `r` may alias
    /// `a` or `b`; `t` is scratch of n + 2 limbs. Constant time.
    @inline(never)
    public static func mul(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                           _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        if n == 32 { mul32(r, a, b, m, m0inv, t); return }
        if n == 16 { mul16(r, a, b, m, m0inv, t); return }
        montgomeryMulLoops(r, a, b, m, n, m0inv, t)
    }
}

#endif
