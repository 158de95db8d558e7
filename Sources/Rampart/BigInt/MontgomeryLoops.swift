// The portable Montgomery kernels (any limb count) for `Montgomery.mul`/`square` in Montgomery.swift:
// RampartKernelSupport's product-scanning loops (MontgomeryLoops.swift) compiled here, with no CPU
// features. RampartAccelBMI2/MontgomeryBMI2Loops.swift compiles the same loops with BMI2 and ADX.

internal import RampartKernelSupport

extension Montgomery {
    /// `r = a · a · R⁻¹ mod m` (product scanning; each off-diagonal product computed once).
    @inline(never)
    static func squarePortable(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                               _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        if n < 4 { mulPortable(r, a, a, m, n, m0inv, t); return }
        montgomerySquareLoops(r, a, m, n, m0inv, t)
    }

    /// `r = a · b · R⁻¹ mod m`, fully reduced, for `a < R` and `b < m` (both n limbs); `r` may alias
    /// `a` or `b`; `t` is scratch of n + 2 limbs. Constant time.
    @inline(never)
    static func mulPortable(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                            _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        montgomeryMulLoops(r, a, b, m, n, m0inv, t)
    }

    /// `r = (top:t) − m` when that is non-negative, else `t`, chosen with a mask. `(top:t) < 2m`.
    @inline(__always)
    static func subtractIfAtLeast(_ r: UnsafeMutablePointer<UInt64>, _ t: UnsafeMutablePointer<UInt64>, _ top: UInt64,
                                  _ m: UnsafePointer<UInt64>, _ n: Int) {
        montgomerySubtractIfAtLeast(r, t, top, m, n)
    }
}
