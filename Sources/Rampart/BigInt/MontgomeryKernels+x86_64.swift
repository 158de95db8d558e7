// x86_64 bindings of the Montgomery kernels (see Platform/Kernels.swift): multiplication and squaring
// at every size with mulx/adcx/adox (RampartAccelBMI2), and 2048-bit public-exponent powers on AVX2 in
// radix 2^28 (RampartAccelAVX2Mont).
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelBMI2
internal import RampartAccelAVX2Mont

enum MontgomeryKernel {
    static let name: String? = "bmi2+adx"
    static func supported(_ f: CPUFeatures) -> Bool { f.bmi2 && f.adx }

    /// `r = a · b · R⁻¹ mod m` (see `Montgomery.mulPortable`).
    @inline(__always)
    static func mul(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                    _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        MontgomeryBMI2.mul(r, a, b, m, n, m0inv, t)
    }

    /// `r = a² · R⁻¹ mod m`.
    @inline(__always)
    static func square(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                       _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        MontgomeryBMI2.square(r, a, m, n, m0inv, t)
    }

    // The wide kernel: 2048-bit moduli only. It is selected on AMD processors, where it measured
    // faster than the BMI2 kernels (Zen 3), and not on Intel's, where it measured slower
    // (Cascade Lake: the RSA-2048 public operation 37.6 µs against 23.0 µs with the BMI2 kernels, in
    // one run). Both vendors run it correctly; the tests run it wherever AVX2 is present.
    static let wideName: String? = "avx2"
    static func wideSupported(_ f: CPUFeatures) -> Bool { f.avx2 }
    static func widePreferred() -> Bool { CPU.isAMD }
    /// The limb count the wide kernel serves.
    static let wideLimbs = MontgomeryAVX2.limbs
    /// R' = 2^`wideMontgomeryBits` is the wide kernel's Montgomery radix power.
    static let wideMontgomeryBits = MontgomeryAVX2.montgomeryBits
    /// The workspace the wide kernel needs, in 64-bit lanes.
    static let wideWorkspaceLanes = MontgomeryAVX2.workspaceLanes

    /// `out = base^exp mod m`, sliding window, variable time (public exponents).
    @inline(__always)
    static func widePowerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>,
                            _ exp: UnsafePointer<UInt64>, _ el: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64,
                            _ rr: UnsafePointer<UInt64>, _ ws: UnsafeMutablePointer<UInt64>) {
        MontgomeryAVX2.powerVT(out, base, exp, el, m, m0inv, rr, ws)
    }

    /// `out = a · b · 2^−2128 mod m` through the wide kernel.
    @inline(__always)
    static func wideMul(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                        _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ ws: UnsafeMutablePointer<UInt64>) {
        MontgomeryAVX2.mul(out, a, b, m, m0inv, ws)
    }
}

#endif
