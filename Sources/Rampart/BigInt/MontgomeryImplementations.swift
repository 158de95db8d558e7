// Modular arithmetic's portable implementations as the registry sees them (Platform/Registry.swift):
// Montgomery products, and the fixed- and sliding-window powers that stand where the `modexp-2048`
// and `modexp-ct` kernels do not run (one body, Montgomery.powerCT/powerVT, which Modulus runs too);
// their known-answer self-tests and the fault switch's corrupted forms. The kernels declare their own
// conformances (RampartAccelBMI2/MontgomeryBMI2.swift, RampartAccelAVX2/MontgomeryAVX2.swift, RampartAccelIFMA).

internal import RampartKernelSupport

/// The product-scanning loops of MontgomeryLoops.swift (RampartKernelSupport's body).
enum MontgomeryPortable: MontgomeryImplementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static func mul(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                    _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        Montgomery.mulPortable(r, a, b, m, n, m0inv, t)
    }
    static func square(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                       _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        Montgomery.squarePortable(r, a, m, n, m0inv, t)
    }
}

/// `R mod m` from `rr = R² mod m`: the Montgomery product of rr and 1. `t` is n + 2 limbs.
private func montgomeryOne(_ one: UnsafeMutablePointer<UInt64>, _ rr: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                           _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
    let unit = t + n + 2
    unit.update(repeating: 0, count: n)
    unit[0] = 1
    Montgomery.mulPortable(one, rr, unit, m, n, m0inv, t)
}

/// Public powers modulo 2048-bit moduli with the sliding window on the portable products (R' = R =
/// 2^2048: `rr` is the ordinary R² mod m).
enum MontgomeryWidePortable: MontgomeryWideImplementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static let limbs = 32
    static let montgomeryBits = 2048
    static let workspaceLanes = Montgomery.powerVTWorkspace(limbs: 32)
    static func powerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                        _ el: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ rr: UnsafePointer<UInt64>,
                        _ ws: UnsafeMutablePointer<UInt64>) {
        Montgomery.powerVT(out, base, exp, el, m, 32, m0inv, rr: rr, montgomeryOut: false, MontgomeryPortable.self, ws)
    }
    static func mul(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                    _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ ws: UnsafeMutablePointer<UInt64>) {
        Montgomery.mulPortable(out, a, b, m, 32, m0inv, ws)
    }
}

/// Constant-time and public powers with the fixed and sliding windows on the portable products, for
/// the sizes the IFMA kernel serves (R' = R = 2^(64·limbs)).
enum ModularPowerPortable: ModularPowerImplementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static func serves(limbs: Int) -> Bool { limbs == 16 || limbs == 32 }
    static func montgomeryBits(limbs: Int) -> Int { 64 * limbs }
    /// A power's window table and scratch, then R mod m (and n + 2 more words for its computation).
    static func workspaceLanes(limbs n: Int, pair: Bool) -> Int {
        (Montgomery.powerCTWorkspace(limbs: n, window: 5) + 2 * n + 4) * (pair ? 2 : 1)
    }
    static func powerCT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                        _ expLimbs: Int, window: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ rr: UnsafePointer<UInt64>,
                        limbs n: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        let one = ws + Montgomery.powerCTWorkspace(limbs: n, window: 5)
        montgomeryOne(one, rr, m, n, m0inv, ws)
        Montgomery.powerCT(out, base, exp, expLimbs, window: window, m, n, m0inv, rr: rr, one: UnsafePointer(one),
                           MontgomeryPortable.self, ws)
    }
    static func powerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                        _ expLimbs: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ rr: UnsafePointer<UInt64>,
                        limbs n: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        Montgomery.powerVT(out, base, exp, expLimbs, m, n, m0inv, rr: rr, montgomeryOut: false, MontgomeryPortable.self, ws)
    }
    static func powerCTPair(_ out1: UnsafeMutablePointer<UInt64>, _ base1: UnsafePointer<UInt64>, _ exp1: UnsafePointer<UInt64>,
                            _ m1: UnsafePointer<UInt64>, _ m0inv1: UInt64, _ rr1: UnsafePointer<UInt64>,
                            _ out2: UnsafeMutablePointer<UInt64>, _ base2: UnsafePointer<UInt64>, _ exp2: UnsafePointer<UInt64>,
                            _ m2: UnsafePointer<UInt64>, _ m0inv2: UInt64, _ rr2: UnsafePointer<UInt64>,
                            expLimbs: Int, window: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        powerCT(out1, base1, exp1, expLimbs, window: window, m1, m0inv1, rr1, limbs: 16, ws)
        powerCT(out2, base2, exp2, expLimbs, window: window, m2, m0inv2, rr2, limbs: 16, ws + workspaceLanes(limbs: 16, pair: false))
    }
    static func mul(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                    _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, limbs n: Int, pair: Bool, _ ws: UnsafeMutablePointer<UInt64>) -> Bool {
        Montgomery.mulPortable(out, a, b, m, n, m0inv, ws)
        return true
    }
}

// MARK: - Known-answer self-tests

/// Hex (big-endian digits) as little-endian limbs, `count` of them.
private func limbs(_ hex: String, _ count: Int) -> [UInt64] {
    let digits = Array(hex.utf8)
    var out = [UInt64](repeating: 0, count: count)
    for (i, c) in digits.reversed().enumerated() {
        let v = UInt64(c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57)
        out[i / 16] |= v << (4 * UInt64(i % 16))
    }
    return out
}

/// −m⁻¹ mod 2^64 (Newton).
private func negInverse(_ m0: UInt64) -> UInt64 {
    var x = m0
    for _ in 0..<5 { x = x &* (2 &- m0 &* x) }
    return 0 &- x
}

/// 2^(2·bits) mod m, variable time (public values): BigUInt's division.
private func rrFor(_ m: [UInt64], bits: Int) -> [UInt64] {
    let r = (try? (BigUInt(1) << (2 * bits)).quotientAndRemainder(dividingBy: BigUInt(limbs: m)).remainder) ?? BigUInt()
    var l = r.limbs
    if l.count < m.count { l += [UInt64](repeating: 0, count: m.count - l.count) }
    return l
}

/// m = 2^255 − 19, a = 3^100 mod m, b = 5^100 mod m: a·b·2^−256 and a²·2^−256 mod m (computed with
/// Python's integers).
private let montgomeryM = limbs("7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed", 4)
private let montgomeryA = limbs("5a4653ca673768565b41f775d6947d55cf3813d1", 4)
private let montgomeryB = limbs("1249ad2594c37ceb0b2784c4ce0bf38ace408e211a7caab24308a82e8f1", 4)
private let montgomeryAB = limbs("e19a46ecbd09c6e8622004b398fd46aa9c4fabf5979a34dd15ff9a7e8df3756", 4)
private let montgomeryAA = limbs("7b00b309f5a815fa86ab783ff453f2b3f5ff7fc320f6f05f58263c1b5e229c0a", 4)

func montgomerySelfTest(_ impl: any MontgomeryImplementation.Type) -> Bool {
    var r = [UInt64](repeating: 0, count: 4), s = r, t = [UInt64](repeating: 0, count: 6)
    let inv = negInverse(montgomeryM[0])
    montgomeryA.withUnsafeBufferPointer { a in montgomeryB.withUnsafeBufferPointer { b in montgomeryM.withUnsafeBufferPointer { m in
        t.withUnsafeMutableBufferPointer { tp in
            r.withUnsafeMutableBufferPointer { impl.mul($0.baseAddress!, a.baseAddress!, b.baseAddress!, m.baseAddress!, 4, inv, tp.baseAddress!) }
            s.withUnsafeMutableBufferPointer { impl.square($0.baseAddress!, a.baseAddress!, m.baseAddress!, 4, inv, tp.baseAddress!) }
        }
    } } }
    return r == montgomeryAB && s == montgomeryAA
}

/// RFC 3526's 2048-bit MODP prime p (group 14) and RFC 2409's 1024-bit one (group 2), and 3^65537
/// modulo the 1024-bit one (computed with Python's integers). The public powers are checked on (p − 3)^5 = p − 243 mod p:
/// the base and every intermediate value in Montgomery form are full-width numbers, and five is cheap
/// for the portable code that stands where no kernel runs (17 squarings of 32 limbs cost about 100 µs
/// of the start-up self-tests).
private let modp2048 = limbs("FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3BE39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA051015728E5A8AACAA68FFFFFFFFFFFFFFFF", 32)
private let modp1024 = limbs("FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF", 16)
private let modp1024Power = limbs("123c66c4d2624beafa61ff0a81eb4acbdfe68c885251ca2c7378c4fb08a93a7b8e4545b40ad0d4078e46806c3a7ec82699da799cc61fba78214d3bc337f5bda6db67290b9a00a2a1a3e4d24834cbbdf2cc50dc340d7051d698230af58b3d4467f9ed5b62e504d5b25b9dbf68c5a5a2539a35871fd003622ef6175a6e025d09ae", 16)

/// p − k for the 2048-bit prime, whose low limb is 2^64 − 1 (no borrow for k < 2^64).
private func modp2048Minus(_ k: UInt64) -> [UInt64] {
    var l = modp2048
    l[0] -= k
    return l
}

func montgomeryWideSelfTest(_ impl: any MontgomeryWideImplementation.Type) -> Bool {
    guard impl.limbs == 32 else { return false }
    let rr = rrFor(modp2048, bits: impl.montgomeryBits)
    let base = modp2048Minus(3), exp: [UInt64] = [5]
    var out = [UInt64](repeating: 0, count: 32), ws = [UInt64](repeating: 0, count: impl.workspaceLanes)
    out.withUnsafeMutableBufferPointer { o in base.withUnsafeBufferPointer { b in exp.withUnsafeBufferPointer { e in
        modp2048.withUnsafeBufferPointer { m in rr.withUnsafeBufferPointer { r in ws.withUnsafeMutableBufferPointer { w in
            impl.powerVT(o.baseAddress!, b.baseAddress!, e.baseAddress!, 1, m.baseAddress!, negInverse(modp2048[0]),
                         r.baseAddress!, w.baseAddress!)
        } } }
    } } }
    return out == modp2048Minus(243)
}

/// The constant-time power 3^65537 modulo the 1024-bit prime, and the public (p − 3)^5 modulo the
/// 2048-bit prime p.
func modularPowerSelfTest(_ impl: any ModularPowerImplementation.Type) -> Bool {
    guard impl.serves(limbs: 16), impl.serves(limbs: 32) else { return false }
    func run(_ m: [UInt64], _ expected: [UInt64], constantTime: Bool) -> Bool {
        let n = m.count
        let rr = rrFor(m, bits: impl.montgomeryBits(limbs: n))
        var base = [UInt64](repeating: 0, count: n), out = base
        var ws = [UInt64](repeating: 0, count: impl.workspaceLanes(limbs: n, pair: false))
        base[0] = 3
        var exp: [UInt64] = [65537]
        if !constantTime { base = modp2048Minus(3); exp = [5] }
        out.withUnsafeMutableBufferPointer { o in base.withUnsafeBufferPointer { b in exp.withUnsafeBufferPointer { e in
            m.withUnsafeBufferPointer { mp in rr.withUnsafeBufferPointer { r in ws.withUnsafeMutableBufferPointer { w in
                if constantTime {
                    impl.powerCT(o.baseAddress!, b.baseAddress!, e.baseAddress!, 1, window: 4, mp.baseAddress!,
                                 negInverse(m[0]), r.baseAddress!, limbs: n, w.baseAddress!)
                } else {
                    impl.powerVT(o.baseAddress!, b.baseAddress!, e.baseAddress!, 1, mp.baseAddress!, negInverse(m[0]),
                                 r.baseAddress!, limbs: n, w.baseAddress!)
                }
            } } }
        } } }
        return out == expected
    }
    return run(modp1024, modp1024Power, constantTime: true) && run(modp2048, modp2048Minus(243), constantTime: false)
}

// MARK: - The fault switch's corrupted forms

enum FaultyMontgomery<Base: MontgomeryImplementation>: MontgomeryImplementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static func mul(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                    _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        Base.mul(r, a, b, m, n, m0inv, t)
        r[0] ^= 1
    }
    static func square(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                       _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        Base.square(r, a, m, n, m0inv, t)
        r[0] ^= 1
    }
}

enum FaultyMontgomeryWide<Base: MontgomeryWideImplementation>: MontgomeryWideImplementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static var limbs: Int { Base.limbs }
    static var montgomeryBits: Int { Base.montgomeryBits }
    static var workspaceLanes: Int { Base.workspaceLanes }
    static func powerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                        _ el: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ rr: UnsafePointer<UInt64>,
                        _ ws: UnsafeMutablePointer<UInt64>) {
        Base.powerVT(out, base, exp, el, m, m0inv, rr, ws)
        out[0] ^= 1
    }
    static func mul(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                    _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ ws: UnsafeMutablePointer<UInt64>) {
        Base.mul(out, a, b, m, m0inv, ws)
        out[0] ^= 1
    }
}

enum FaultyModularPower<Base: ModularPowerImplementation>: ModularPowerImplementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static func serves(limbs: Int) -> Bool { Base.serves(limbs: limbs) }
    static func montgomeryBits(limbs: Int) -> Int { Base.montgomeryBits(limbs: limbs) }
    static func workspaceLanes(limbs: Int, pair: Bool) -> Int { Base.workspaceLanes(limbs: limbs, pair: pair) }
    static func powerCT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                        _ expLimbs: Int, window: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ rr: UnsafePointer<UInt64>,
                        limbs: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        Base.powerCT(out, base, exp, expLimbs, window: window, m, m0inv, rr, limbs: limbs, ws)
        out[0] ^= 1
    }
    static func powerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                        _ expLimbs: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ rr: UnsafePointer<UInt64>,
                        limbs: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        Base.powerVT(out, base, exp, expLimbs, m, m0inv, rr, limbs: limbs, ws)
        out[0] ^= 1
    }
    static func powerCTPair(_ out1: UnsafeMutablePointer<UInt64>, _ base1: UnsafePointer<UInt64>, _ exp1: UnsafePointer<UInt64>,
                            _ m1: UnsafePointer<UInt64>, _ m0inv1: UInt64, _ rr1: UnsafePointer<UInt64>,
                            _ out2: UnsafeMutablePointer<UInt64>, _ base2: UnsafePointer<UInt64>, _ exp2: UnsafePointer<UInt64>,
                            _ m2: UnsafePointer<UInt64>, _ m0inv2: UInt64, _ rr2: UnsafePointer<UInt64>,
                            expLimbs: Int, window: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        Base.powerCTPair(out1, base1, exp1, m1, m0inv1, rr1, out2, base2, exp2, m2, m0inv2, rr2,
                         expLimbs: expLimbs, window: window, ws)
        out1[0] ^= 1
    }
    static func mul(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                    _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, limbs: Int, pair: Bool, _ ws: UnsafeMutablePointer<UInt64>) -> Bool {
        let agree = Base.mul(out, a, b, m, m0inv, limbs: limbs, pair: pair, ws)
        out[0] ^= 1
        return agree
    }
}

func faultyMontgomery(_ b: any MontgomeryImplementation.Type) -> any MontgomeryImplementation.Type {
    func wrap<B: MontgomeryImplementation>(_: B.Type) -> any MontgomeryImplementation.Type { FaultyMontgomery<B>.self }
    return wrap(b)
}
func faultyMontgomeryWide(_ b: any MontgomeryWideImplementation.Type) -> any MontgomeryWideImplementation.Type {
    func wrap<B: MontgomeryWideImplementation>(_: B.Type) -> any MontgomeryWideImplementation.Type { FaultyMontgomeryWide<B>.self }
    return wrap(b)
}
func faultyModularPower(_ b: any ModularPowerImplementation.Type) -> any ModularPowerImplementation.Type {
    func wrap<B: ModularPowerImplementation>(_: B.Type) -> any ModularPowerImplementation.Type { FaultyModularPower<B>.self }
    return wrap(b)
}
