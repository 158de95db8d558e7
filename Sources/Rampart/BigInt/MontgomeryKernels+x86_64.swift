// x86_64 bindings of the Montgomery kernels (see Platform/Kernels.swift): multiplication and squaring
// at every size with mulx/adcx/adox (RampartAccelBMI2), and 2048-bit public-exponent powers on AVX2 in
// radix 2^28 (RampartAccelAVX2Mont).
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelBMI2
internal import RampartAccelAVX2Mont
internal import RampartAccelIFMA

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

    // The IFMA kernel: powers modulo 1024-bit moduli (16 limbs; RSA-2048's CRT halves, two at once) and
    // 2048-bit moduli (32 limbs; Diffie-Hellman, RSA public operations), in radix 2^52 on AVX-512 IFMA:
    // constant-time ones for secret exponents, sliding-window ones for public exponents.
    static let ifmaName: String? = "avx512ifma"
    static func ifmaSupported(_ f: CPUFeatures) -> Bool { f.avx512vl && f.avx512ifma && f.bmi2 && f.adx }
    /// Whether the IFMA kernel serves moduli of `limbs` limbs.
    static func ifmaServes(limbs: Int) -> Bool { MontgomeryIFMA.digits(limbs: limbs) != nil }
    /// R' = 2^`ifmaMontgomeryBits(limbs:)` is the IFMA kernel's Montgomery radix power.
    static func ifmaMontgomeryBits(limbs: Int) -> Int { MontgomeryIFMA.montgomeryBits(limbs: limbs) }
    /// The workspace the IFMA kernel needs, in 64-bit lanes.
    static func ifmaWorkspaceLanes(limbs: Int, pair: Bool) -> Int { MontgomeryIFMA.workspaceLanes(limbs: limbs, pair: pair) }

    /// `out = base^exp mod m`, constant time (see `MontgomeryIFMA.powerCT`).
    @inline(__always)
    static func ifmaPowerCT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                            _ expLimbs: Int, window: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64,
                            _ rr: UnsafePointer<UInt64>, limbs: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        MontgomeryIFMA.powerCT(out, base, exp, expLimbs, window: window, m, m0inv, rr, limbs: limbs, ws)
    }

    /// `out = base^exp mod m`, sliding window, variable time (public exponents; see `MontgomeryIFMA.powerVT`).
    @inline(__always)
    static func ifmaPowerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                            _ expLimbs: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64,
                            _ rr: UnsafePointer<UInt64>, limbs: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        MontgomeryIFMA.powerVT(out, base, exp, expLimbs, m, m0inv, rr, limbs: limbs, ws)
    }

    /// Two constant-time powers modulo two 16-limb moduli at once (see `MontgomeryIFMA.powerCTPair`).
    @inline(__always)
    static func ifmaPowerCTPair(_ out1: UnsafeMutablePointer<UInt64>, _ base1: UnsafePointer<UInt64>, _ exp1: UnsafePointer<UInt64>,
                                _ m1: UnsafePointer<UInt64>, _ m0inv1: UInt64, _ rr1: UnsafePointer<UInt64>,
                                _ out2: UnsafeMutablePointer<UInt64>, _ base2: UnsafePointer<UInt64>, _ exp2: UnsafePointer<UInt64>,
                                _ m2: UnsafePointer<UInt64>, _ m0inv2: UInt64, _ rr2: UnsafePointer<UInt64>,
                                expLimbs: Int, window: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        MontgomeryIFMA.powerCTPair(out1, base1, exp1, m1, m0inv1, rr1, out2, base2, exp2, m2, m0inv2, rr2,
                                   expLimbs: expLimbs, window: window, ws)
    }

    /// The IFMA kernel's carry normalisation of 20 or 40 lanes (testing).
    static func ifmaNormalise(_ out: UnsafeMutablePointer<UInt64>, _ lanes: UnsafePointer<UInt64>, digits: Int) {
        MontgomeryIFMA.normalise(out, lanes, digits: digits)
    }

    /// `out = a · b · 2^−(52·N) mod m` through one IFMA product (testing); false when the paired
    /// kernel's two halves disagree.
    static func ifmaMul(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                        _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, limbs: Int, pair: Bool,
                        _ ws: UnsafeMutablePointer<UInt64>) -> Bool {
        MontgomeryIFMA.mul(out, a, b, m, m0inv, limbs: limbs, pair: pair, ws)
    }
}

#endif
