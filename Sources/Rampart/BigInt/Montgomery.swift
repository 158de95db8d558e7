// Montgomery arithmetic modulo an odd modulus: the context (`Modulus`), the kernel dispatch, a
// constant-time fixed-window exponentiation for secret exponents and a sliding-window one for public
// exponents. Modelled on Go's crypto/internal/fips140/bigmod (nat.go): values whose limb
// count may leak but whose contents never do.
//
// Representation: every residue is an n-limb buffer (n = the modulus's limb count) holding a value
// in [0, m). Montgomery form of x is x·R mod m with R = 2^(64n).

//
// Implementations (Platform/Registrations.swift): `Montgomery.mul`/`square` run the `montgomery`
// registry's implementation for the modulus's backend (mulx/adcx/adox, or the portable
// product-scanning loops `mulPortable`/`squarePortable` of MontgomeryLoops.swift: RampartKernelSupport's
// body, which the BMI2 module compiles as well);
// powers modulo moduli a `modexp-ct` or `modexp-2048` kernel serves run that kernel (IFMA: constant
// time and public; AVX2: public, 2048-bit), the others the fixed- and sliding-window loops below.

internal import RampartKernelSupport

/// An odd modulus `m > 1` with its Montgomery constants, for modular multiplication and
/// exponentiation.
///
/// Building one costs about 64 modular doublings and a dozen Montgomery squarings, all constant
/// time in the value of `m` (only its limb count shows): a secret modulus (an RSA prime) may be
/// used. The limbs of `m` and its constants live in one allocation owned by the modulus and wiped
/// when the last copy is released. Exponents passed to ``constantTimePower(_:_:)`` never influence
/// timing (beyond their limb count); ``publicPower(_:_:)`` is for public exponents.
public struct Modulus: Sendable {
    /// The limbs of m and its constants: `m (n) | R² mod m (n) | R mod m (n) | [R'² mod m (n)] | [R''² mod m (n)]`
    /// (the AVX2 kernel's and the IFMA kernel's, when present).
    /// Owned (never shared with a caller's array) and wiped on release.
    final class Storage: @unchecked Sendable {
        // Immutable after init.
        let base: UnsafeMutablePointer<UInt64>
        let count: Int

        init(count: Int) {
            self.count = count
            base = .allocate(capacity: count)
            base.initialize(repeating: 0, count: count)
        }

        deinit {
            secureZero(UnsafeMutableRawBufferPointer(start: base, count: count * 8))
            base.deallocate()
        }
    }

    let storage: Storage
    /// The number of 64-bit limbs of `m`.
    public let limbCount: Int
    /// `-m⁻¹ mod 2⁶⁴`.
    let m0inv: UInt64
    /// The `modexp-2048` implementation public powers run, with `R'² mod m` for its radix stored
    /// (2048-bit moduli where its kernel is selected for the backend, or pinned, or asked for by the
    /// tests).
    let wide: (any MontgomeryWideImplementation.Type)?
    /// The `modexp-ct` implementation constant-time and public powers run, with `R''² mod m` for its
    /// radix stored (the moduli its kernel serves, where it is selected for the backend or pinned).
    let power: (any ModularPowerImplementation.Type)?
    /// The `montgomery` implementation multiplications run (the registry's for the backend).
    let hardware: any MontgomeryImplementation.Type

    var hasAVX2Constants: Bool { wide != nil }
    var hasIFMAConstants: Bool { power != nil }

    /// The limbs of `m` (exactly `limbCount` of them).
    var m: UnsafePointer<UInt64> { UnsafePointer(storage.base) }
    /// `R² mod m` (n limbs), R = 2^(64n).
    var rr: UnsafePointer<UInt64> { UnsafePointer(storage.base + limbCount) }
    /// `R mod m`, the Montgomery form of 1 (n limbs).
    var one: UnsafePointer<UInt64> { UnsafePointer(storage.base + 2 * limbCount) }
    /// `R'² mod m` of the ``wide`` implementation (32 limbs), when ``hasAVX2Constants``.
    var rrAVX2: UnsafePointer<UInt64> { UnsafePointer(storage.base + 3 * limbCount) }

    /// `R''² mod m` of the ``power`` implementation (n limbs), when ``hasIFMAConstants``.
    var rrIFMA: UnsafePointer<UInt64> { UnsafePointer(storage.base + (hasAVX2Constants ? 4 : 3) * limbCount) }

    /// The modulus `m` (a new value each time: the caller owns and may wipe it).
    public var value: BigUInt { BigUInt(limbs: Array(UnsafeBufferPointer(start: m, count: limbCount))) }

    /// Prepares Montgomery arithmetic modulo `m`, in constant time with respect to the value of `m`
    /// (its limb count is public), so `m` may be secret. The limbs are copied; the caller's value is
    /// not retained.
    ///
    /// - Throws: ``RampartError/invalidModulus`` when `m` is even, zero or one.
    public init(_ m: BigUInt) throws(RampartError) {
        try self.init(m, backend: CPU.defaultBackend)
    }

    /// As ``init(_:)``, pinned to one implementation: `.portable` never runs a hardware kernel (tests
    /// run every vector through both).
    @_spi(Testing)
    public init(_ m: BigUInt, backend: Backend) throws(RampartError) {
        try self.init(m, backend: backend, wideKernel: false)
    }

    /// As ``init(_:backend:)``; with `wideKernel` the AVX2 power kernel runs for a 2048-bit modulus on
    /// the hardware backend wherever the processor has AVX2, even where `Kernels.modexp2048` does not
    /// select it (its tests run it on every processor that can).
    ///
    /// With `ifmaKernel` false the IFMA kernel stays off even where `Kernels.modexpIFMA` is active (its
    /// tests compare it with the 64-bit kernels on the same processor).
    @_spi(Testing)
    public init(_ m: BigUInt, backend: Backend, wideKernel: Bool, ifmaKernel: Bool = true) throws(RampartError) {
        // Public by design: whether the modulus is usable (odd and above one), computed without a
        // branch on its value (`&&` would branch on the secret low bit first).
        let low = m.low64
        let usable = (low & 1) & (ctBit(m.limbs.count > 1) | ctBit(low >> 1 != 0))
        guard declassified(usable) == 1 else { throw .invalidModulus }
        let n = m.limbs.count
        limbCount = n
        hardware = Registries.montgomery.implementation(for: backend)
        var wide = Registries.modexp2048.kernelOrPin(for: backend)
        if wideKernel && backend == .hardware { wide = Registries.modexp2048.runnableImplementation(named: "avx2") ?? wide }
        self.wide = wide.flatMap { $0.limbs == n ? $0 : nil }
        let power = ifmaKernel ? Registries.modexpCT.kernelOrPin(for: backend) : nil
        self.power = power.flatMap { $0.serves(limbs: n) ? $0 : nil }
        storage = Storage(count: (3 + (self.wide != nil ? 1 : 0) + (self.power != nil ? 1 : 0)) * n)
        let base = storage.base
        m.limbs.withUnsafeBufferPointer { base.update(from: $0.baseAddress!, count: n) }
        // Newton iteration for m0^-1 mod 2^64: each step doubles the number of correct bits (x = m0
        // is right to 3 bits for odd m0).
        let m0 = m.limbs[0]
        var x = m0
        for _ in 0..<5 { x = x &* (2 &- m0 &* x) }
        m0inv = 0 &- x
        let inv = m0inv, avx2 = self.wide, ifma = self.power, hw = hardware
        Modulus.withWorkspace(limbs: 2 * n + 2) { ws in
            let tmp = ws, t = ws + n
            let pm = UnsafePointer(base), rr = base + n, one = base + 2 * n
            // R mod m: 2^(64(n−1)) is below m (the top limb of m is not zero and m is odd, so m is not
            // that power of two), then 64 constant-time doublings.
            one[n - 1] = n > 1 ? 1 : 0
            one[0] |= n > 1 ? 0 : 1
            for _ in 0..<64 { Montgomery.doubleMod(one, pm, n, tmp) }
            // R² mod m and R'² mod m are the Montgomery forms of 2^(64n) and 2^(4256 − 2048).
            Montgomery.montgomeryPowerOfTwo(64 * n, into: rr, one: one, pm, n, inv, tmp, t, hw)
            if let avx2 {
                Montgomery.montgomeryPowerOfTwo(2 * avx2.montgomeryBits - 64 * n, into: base + 3 * n,
                                                one: one, pm, n, inv, tmp, t, hw)
            }
            if let ifma {
                Montgomery.montgomeryPowerOfTwo(2 * ifma.montgomeryBits(limbs: n) - 64 * n,
                                                into: base + (avx2 != nil ? 4 : 3) * n, one: one, pm, n, inv, tmp, t, hw)
            }
        }
    }

    /// Copies `x` into `n` limbs (zero-extended; `x` must fit).
    @usableFromInline static func padded(_ x: BigUInt, _ n: Int) -> [UInt64] {
        var l = x.limbs
        if l.count < n { l += [UInt64](repeating: 0, count: n - l.count) }
        return l
    }

    /// The bit length of the modulus.
    public var bitWidth: Int {
        withExtendedLifetime(storage) { limbCount * 64 - m[limbCount - 1].leadingZeroBitCount }
    }

    /// `x mod m` (variable time in `x`).
    public func reduce(_ x: BigUInt) -> BigUInt {
        (try? x.remainder(dividingBy: value)) ?? BigUInt()
    }

    /// `x mod m` as n limbs, constant time in the value of `x` (its limb count shows): a value of at
    /// most n limbs enters Montgomery form directly; a longer one goes through ``reduceCT(_:)``.
    func reducedLimbs(_ x: BigUInt) -> [UInt64] {
        let n = limbCount
        if x.limbs.count <= n {
            // x < R: x·R² / R = x·R mod m, then · 1 / R.
            var out = Modulus.padded(x, n)
            withWorkspace(limbs: 2 * n + 2) { ws in
                let unit = ws, t = ws + n
                unit[0] = 1
                out.withUnsafeMutableBufferPointer { po in
                    Montgomery.mul(po.baseAddress!, po.baseAddress!, rr, m, n, m0inv, t, hardware)
                    Montgomery.mul(po.baseAddress!, po.baseAddress!, unit, m, n, m0inv, t, hardware)
                }
            }
            return out
        }
        return reduceCT(x.limbs)
    }

    /// `a · b mod m` (inputs reduced first, in constant time for their limb counts).
    public func multiply(_ a: BigUInt, _ b: BigUInt) -> BigUInt {
        var ra = reducedLimbs(a), rb = reducedLimbs(b)
        defer {
            ra.withUnsafeMutableBytes { secureZero($0) }
            rb.withUnsafeMutableBytes { secureZero($0) }
        }
        var out = multiplyCT(ra, rb)
        defer { out.withUnsafeMutableBytes { secureZero($0) } }
        return BigUInt(secretLimbs: out)
    }

    /// `base^exponent mod m` in time independent of the values of base and exponent (only their
    /// limb counts and the modulus may show). Fixed 4- or 5-bit window; every table entry is read
    /// for every window and selected with masks the optimizer cannot see through. Use this for
    /// secret exponents and secret bases.
    ///
    /// The result's limb count is public (it is a `BigUInt`); ``constantTimePower(_:_:byteCount:)``
    /// returns fixed-width bytes instead.
    public func constantTimePower(_ base: BigUInt, _ exponent: BigUInt) -> BigUInt {
        var out = constantTimePowerLimbs(base, exponent)
        defer { out.withUnsafeMutableBytes { secureZero($0) } }
        return BigUInt(secretLimbs: out)
    }

    /// `base^exponent mod m` as exactly `byteCount` big-endian bytes (left-padded with zeros), in
    /// time independent of the values of base and exponent: the form Diffie-Hellman and RSA need
    /// (no length of the result shows).
    ///
    /// - Throws: ``RampartError/invalidOutputLength`` when `byteCount` is smaller than the
    ///   modulus's byte length.
    public func constantTimePower(_ base: BigUInt, _ exponent: BigUInt, byteCount: Int) throws(RampartError) -> [UInt8] {
        guard byteCount >= (bitWidth + 7) / 8 else { throw .invalidOutputLength }
        var out = constantTimePowerLimbs(base, exponent)
        defer { out.withUnsafeMutableBytes { secureZero($0) } }
        return LimbMath.bigEndianBytes(out, count: byteCount)
    }

    /// `base^e mod m` in constant time with the exponent given as big-endian bytes read at their full
    /// width: no leading zero byte is skipped and the limb count depends only on `e.count`, so no
    /// branch or length follows the exponent's value (a `BigUInt` made from the bytes would strip
    /// leading zeros). For secret exponents drawn as bytes (Diffie-Hellman). The result as a
    /// `BigUInt` (its limb count is public, as for ``constantTimePower(_:_:)``).
    package func constantTimePower(_ base: BigUInt, exponentBigEndian e: UnsafeRawBufferPointer) -> BigUInt {
        var out = constantTimePowerLimbs(base, exponentBigEndian: e)
        defer { out.withUnsafeMutableBytes { secureZero($0) } }
        return BigUInt(secretLimbs: out)
    }

    /// As ``constantTimePower(_:exponentBigEndian:)``, the result as exactly `byteCount` big-endian bytes.
    ///
    /// - Throws: ``RampartError/invalidOutputLength`` when `byteCount` is smaller than the
    ///   modulus's byte length.
    package func constantTimePower(_ base: BigUInt, exponentBigEndian e: UnsafeRawBufferPointer,
                                   byteCount: Int) throws(RampartError) -> [UInt8] {
        guard byteCount >= (bitWidth + 7) / 8 else { throw .invalidOutputLength }
        var out = constantTimePowerLimbs(base, exponentBigEndian: e)
        defer { out.withUnsafeMutableBytes { secureZero($0) } }
        return LimbMath.bigEndianBytes(out, count: byteCount)
    }

    func constantTimePowerLimbs(_ base: BigUInt, exponentBigEndian e: UnsafeRawBufferPointer) -> [UInt64] {
        let n = max(1, (e.count + 7) / 8)
        var limbs = [UInt64](repeating: 0, count: n)
        defer { limbs.withUnsafeMutableBytes { secureZero($0) } }
        for i in 0..<e.count {
            let k = e.count - 1 - i   // byte position from the least significant
            limbs[k >> 3] |= UInt64(e[i]) << (UInt64(k & 7) * 8)
        }
        var out = reducedLimbs(base)
        limbs.withUnsafeBufferPointer { l in
            out.withUnsafeMutableBufferPointer { po in
                powerCT(po.baseAddress!, po.baseAddress!, l.baseAddress, l.count)
            }
        }
        return out
    }

    /// `base^exponent mod m` as n limbs (see ``constantTimePower(_:_:)``).
    func constantTimePowerLimbs(_ base: BigUInt, _ exponent: BigUInt) -> [UInt64] {
        var out = reducedLimbs(base)
        exponent.limbs.withUnsafeBufferPointer { e in
            out.withUnsafeMutableBufferPointer { po in
                powerCT(po.baseAddress!, po.baseAddress!, e.baseAddress, e.count)
            }
        }
        return out
    }

    /// `base^exponent mod m` with a sliding window, in time that depends on the exponent: only for
    /// public exponents (RSA e, Miller-Rabin's odd part of n - 1).
    public func publicPower(_ base: BigUInt, _ exponent: BigUInt) -> BigUInt {
        let b = Modulus.padded(reduce(base), limbCount)
        var out = [UInt64](repeating: 0, count: limbCount)
        exponent.limbs.withUnsafeBufferPointer { e in
            b.withUnsafeBufferPointer { pb in
                out.withUnsafeMutableBufferPointer { po in
                    powerVT(po.baseAddress!, pb.baseAddress!, e.baseAddress, e.count, montgomeryOut: false)
                }
            }
        }
        return BigUInt(limbs: out)
    }

    // MARK: Limb-level operations (n-limb buffers)

    /// Runs `body` with a zeroed heap buffer of `limbs` 64-bit words, wiped and freed afterwards.
    @usableFromInline func withWorkspace<R>(limbs count: Int, _ body: (UnsafeMutablePointer<UInt64>) -> R) -> R {
        withExtendedLifetime(storage) { Modulus.withWorkspace(limbs: count, body) }
    }

    /// Runs `body` with a zeroed heap buffer of `limbs` 64-bit words, wiped and freed afterwards.
    @usableFromInline static func withWorkspace<R>(limbs count: Int, _ body: (UnsafeMutablePointer<UInt64>) -> R) -> R {
        let p = UnsafeMutablePointer<UInt64>.allocate(capacity: count)
        p.initialize(repeating: 0, count: count)
        defer {
            secureZero(UnsafeMutableRawBufferPointer(start: p, count: count * 8))
            p.deallocate()
        }
        return body(p)
    }

    /// The Montgomery window width for an exponent of `limbs` limbs.
    static func window(forExponentLimbs limbs: Int) -> Int { limbs > 8 ? 5 : 4 }

    /// `out = base^exp mod m`, constant time in the values of base and exponent. `base` is n limbs
    /// (any value below R); `out` may alias `base`.
    func powerCT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>,
                 _ exp: UnsafePointer<UInt64>?, _ expLimbs: Int) {
        let n = limbCount
        guard let exp, expLimbs > 0 else {
            // x^0 = 1 (m > 1).
            out.update(repeating: 0, count: n)
            out[0] = 1
            return
        }
        let w = Modulus.window(forExponentLimbs: expLimbs)
        if let power {
            withWorkspace(limbs: power.workspaceLanes(limbs: n, pair: false)) { ws in
                power.powerCT(out, base, exp, expLimbs, window: w, m, m0inv, rrIFMA, limbs: n, ws)
            }
            return
        }
        withWorkspace(limbs: Montgomery.powerCTWorkspace(limbs: n, window: w)) { ws in
            Montgomery.powerCT(out, base, exp, expLimbs, window: w, m, n, m0inv, rr: rr, one: one, hardware, ws)
        }
    }

    /// `out = base^exp mod m` (or its Montgomery form when `montgomeryOut`), sliding window,
    /// variable time. `base` is n limbs and `< m`; `out` may alias `base`.
    func powerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>,
                 _ exp: UnsafePointer<UInt64>?, _ expLimbs: Int, montgomeryOut: Bool) {
        let n = limbCount
        var el = expLimbs
        if let exp { while el > 0 && exp[el - 1] == 0 { el -= 1 } }
        guard let exp, el > 0 else {
            if montgomeryOut {
                withExtendedLifetime(storage) { out.update(from: one, count: n) }
            } else {
                out.update(repeating: 0, count: n)
                out[0] = 1
            }
            return
        }
        if hasIFMAConstants || hasAVX2Constants {
            if let power {
                withWorkspace(limbs: power.workspaceLanes(limbs: n, pair: false)) { ws in
                    power.powerVT(out, base, exp, el, m, m0inv, rrIFMA, limbs: n, ws)
                }
            } else {
                powerVTAVX2(out, base, exp, el)
            }
            if montgomeryOut {
                withWorkspace(limbs: n + 2) { t in
                    Montgomery.mul(out, out, rr, m, n, m0inv, t, hardware)
                }
            }
            return
        }
        withWorkspace(limbs: Montgomery.powerVTWorkspace(limbs: n)) { ws in
            Montgomery.powerVT(out, base, exp, el, m, n, m0inv, rr: rr, montgomeryOut: montgomeryOut, hardware, ws)
        }
    }
}

extension Modulus {
    /// `outP = baseP^expP mod p` and `outQ = baseQ^expQ mod q` in constant time, both exponents of
    /// `expLimbs` limbs (as ``powerCT(_:_:_:_:)`` for each): the two halves of an RSA-CRT private
    /// operation. Where both moduli are 16 limbs on the IFMA kernel the two powers run interleaved,
    /// otherwise one after the other.
    static func powerCTPair(_ p: Modulus, _ outP: UnsafeMutablePointer<UInt64>, _ baseP: UnsafePointer<UInt64>,
                            _ expP: UnsafePointer<UInt64>, _ q: Modulus, _ outQ: UnsafeMutablePointer<UInt64>,
                            _ baseQ: UnsafePointer<UInt64>, _ expQ: UnsafePointer<UInt64>, expLimbs: Int) {
        guard let power = p.power, let qPower = q.power, power == qPower, p.limbCount == 16, q.limbCount == 16,
              expLimbs > 0 else {
            p.powerCT(outP, baseP, expP, expLimbs)
            q.powerCT(outQ, baseQ, expQ, expLimbs)
            return
        }
        withExtendedLifetime((p.storage, q.storage)) {
            Modulus.withWorkspace(limbs: power.workspaceLanes(limbs: 16, pair: true)) { ws in
                power.powerCTPair(outP, baseP, expP, p.m, p.m0inv, p.rrIFMA, outQ, baseQ, expQ, q.m, q.m0inv, q.rrIFMA,
                                  expLimbs: expLimbs, window: Modulus.window(forExponentLimbs: expLimbs), ws)
            }
        }
    }

    /// Whether constant-time powers modulo this modulus run the IFMA kernel (testing).
    @_spi(Testing) public var usesIFMA: Bool { hasIFMAConstants }

    /// Testing hook: `(bp^ep mod p, bq^eq mod q)` through ``powerCTPair(_:_:_:_:_:_:_:_:expLimbs:)`` (the
    /// interleaved IFMA kernel where both moduli are 16 limbs on it). Bases below their moduli; the
    /// exponents are zero-extended to a common limb count.
    @_spi(Testing) public static func constantTimePowerPair(_ p: Modulus, base bp: BigUInt, exponent ep: BigUInt,
                                                           _ q: Modulus, base bq: BigUInt, exponent eq: BigUInt) -> (BigUInt, BigUInt) {
        let el = max(ep.limbs.count, eq.limbs.count, 1)
        let xp = Modulus.padded(ep, el), xq = Modulus.padded(eq, el)
        var op = Modulus.padded(bp, p.limbCount), oq = Modulus.padded(bq, q.limbCount)
        xp.withUnsafeBufferPointer { pe in xq.withUnsafeBufferPointer { qe in
            op.withUnsafeMutableBufferPointer { po in oq.withUnsafeMutableBufferPointer { qo in
                powerCTPair(p, po.baseAddress!, po.baseAddress!, pe.baseAddress!, q, qo.baseAddress!, qo.baseAddress!,
                            qe.baseAddress!, expLimbs: el)
            } }
        } }
        return (BigUInt(limbs: op), BigUInt(limbs: oq))
    }

    /// Testing hook: the IFMA kernel's carry normalisation of 20 or 40 accumulator lanes (each below
    /// 2^60) into digits below 2^52, or nil where the kernel does not run.
    @_spi(Testing) public static func ifmaNormalise(_ lanes: [UInt64]) -> [UInt64]? {
        guard lanes.count == 20 || lanes.count == 40, let normalise = Registries.modexpCTNormalise else { return nil }
        var out = [UInt64](repeating: 0, count: lanes.count)
        lanes.withUnsafeBufferPointer { l in out.withUnsafeMutableBufferPointer { o in
            normalise(o.baseAddress!, l.baseAddress!, lanes.count)
        } }
        return out
    }

    /// Testing hook: `a · b · 2^−(52·N) mod m` through one IFMA product (`pair`: both halves of the
    /// interleaved kernel, which must agree), or nil where the kernel does not run. `a, b < m`.
    @_spi(Testing) public func montgomeryProductIFMA(_ a: BigUInt, _ b: BigUInt, pair: Bool) -> BigUInt? {
        guard let power, a < value, b < value, !pair || limbCount == 16 else { return nil }
        let pa = Modulus.padded(a, limbCount), pb = Modulus.padded(b, limbCount)
        var out = [UInt64](repeating: 0, count: limbCount)
        var agree = true
        withWorkspace(limbs: power.workspaceLanes(limbs: limbCount, pair: true)) { ws in
            pa.withUnsafeBufferPointer { xa in pb.withUnsafeBufferPointer { xb in
                out.withUnsafeMutableBufferPointer { po in
                    agree = power.mul(po.baseAddress!, xa.baseAddress!, xb.baseAddress!, m, m0inv,
                                      limbs: limbCount, pair: pair, ws)
                }
            } }
        }
        return agree ? BigUInt(limbs: out) : nil
    }

    /// `out = base^exp mod m` through the AVX2 radix-2^28 kernel (2048-bit moduli, `rrAVX2` set),
    /// sliding window, variable time; `exp[el − 1] ≠ 0`.
    func powerVTAVX2(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>,
                     _ exp: UnsafePointer<UInt64>, _ el: Int) {
        guard let wide else { return }
        withWorkspace(limbs: wide.workspaceLanes) { ws in
            wide.powerVT(out, base, exp, el, m, m0inv, rrAVX2, ws)
        }
    }

    /// Testing hook: `base^exponent mod m` through the AVX2 kernel, or nil where it does not run
    /// (not 32 limbs, no AVX2). `base < m`.
    @_spi(Testing) public func publicPowerAVX2(_ base: BigUInt, _ exponent: BigUInt) -> BigUInt? {
        guard hasAVX2Constants, base < value else { return nil }
        let b = Modulus.padded(base, limbCount)
        var el = exponent.limbs.count
        while el > 0 && exponent.limbs[el - 1] == 0 { el -= 1 }
        if el == 0 { return BigUInt(1) }
        var out = [UInt64](repeating: 0, count: limbCount)
        exponent.limbs.withUnsafeBufferPointer { e in b.withUnsafeBufferPointer { pb in
            out.withUnsafeMutableBufferPointer { po in powerVTAVX2(po.baseAddress!, pb.baseAddress!, e.baseAddress!, el) }
        } }
        return BigUInt(limbs: out)
    }

    /// Testing hook: `a · b · 2^−2128 mod m` through the AVX2 kernel's multiplication, or nil where
    /// it does not run. `a, b < m`.
    @_spi(Testing) public func montgomeryProductAVX2(_ a: BigUInt, _ b: BigUInt) -> BigUInt? {
        guard let wide, a < value, b < value else { return nil }
        let pa = Modulus.padded(a, limbCount), pb = Modulus.padded(b, limbCount)
        var out = [UInt64](repeating: 0, count: limbCount)
        withWorkspace(limbs: wide.workspaceLanes) { ws in
            pa.withUnsafeBufferPointer { xa in pb.withUnsafeBufferPointer { xb in
                out.withUnsafeMutableBufferPointer { po in
                    wide.mul(po.baseAddress!, xa.baseAddress!, xb.baseAddress!, m, m0inv, ws)
                }
            } }
        }
        return BigUInt(limbs: out)
    }
}

/// The Montgomery kernels on raw limb buffers.
@usableFromInline
enum Montgomery {
    /// `r = a · b · R⁻¹ mod m` (see ``mulPortable(_:_:_:_:_:_:_:)``) with `impl` (the modulus's
    /// ``Modulus/hardware``).
    @inline(__always)
    static func mul(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                    _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>,
                    _ impl: any MontgomeryImplementation.Type) {
        impl.mul(r, a, b, m, n, m0inv, t)
    }

    /// `r = a² · R⁻¹ mod m` with `impl`.
    @inline(__always)
    static func square(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                       _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>, _ impl: any MontgomeryImplementation.Type) {
        impl.square(r, a, m, n, m0inv, t)
    }

    /// Words of workspace ``powerCT(_:_:_:_:window:_:_:_:rr:one:_:_:)`` needs.
    static func powerCTWorkspace(limbs n: Int, window w: Int) -> Int { (1 << w) * n + 3 * n + 2 }

    /// `out = base^exp mod m` with a fixed window of `w` bits, constant time in the values of base
    /// and exponent, on the Montgomery implementation `impl` (R = 2^(64n); `rr` = R² mod m, `one` =
    /// R mod m). `base` is n limbs (any value below R); `out` may alias `base`; `ws` holds
    /// ``powerCTWorkspace(limbs:window:)`` words.
    static func powerCT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                        _ expLimbs: Int, window w: Int, _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64,
                        rr: UnsafePointer<UInt64>, one: UnsafePointer<UInt64>, _ impl: any MontgomeryImplementation.Type,
                        _ ws: UnsafeMutablePointer<UInt64>) {
        let size = 1 << w
        // Layout: table (size·n) | acc (n) | sel (n) | t (n + 2)
        let table = ws, acc = ws + size * n, sel = acc + n, t = sel + n
        table.update(from: one, count: n)
        mul(table + n, base, rr, m, n, m0inv, t, impl)  // x·R
        for k in 2..<size {
            mul(table + k * n, table + (k - 1) * n, table + n, m, n, m0inv, t, impl)
        }
        let totalBits = expLimbs * 64
        var pos = totalBits - (totalBits % w == 0 ? w : totalBits % w)
        select(acc, table, size, n, bits(exp, pos, totalBits - pos))
        while pos > 0 {
            pos -= w
            for _ in 0..<w { square(acc, acc, m, n, m0inv, t, impl) }
            select(sel, table, size, n, bits(exp, pos, w))
            mul(acc, acc, sel, m, n, m0inv, t, impl)
        }
        // Leave Montgomery form: acc · 1 / R.
        sel.update(repeating: 0, count: n)
        sel[0] = 1
        mul(out, acc, sel, m, n, m0inv, t, impl)
    }

    /// Words of workspace ``powerVT(_:_:_:_:_:_:_:rr:montgomeryOut:_:_:)`` needs (the widest window, 6 bits).
    static func powerVTWorkspace(limbs n: Int) -> Int { 32 * n + 3 * n + 2 }

    /// `out = base^exp mod m` (or its Montgomery form when `montgomeryOut`) with a sliding window,
    /// variable time, on `impl` (R = 2^(64n), `rr` = R² mod m). `base` is n limbs and below m,
    /// `exp[el − 1] ≠ 0`; `out` may alias `base`; `ws` holds ``powerVTWorkspace(limbs:)`` words.
    static func powerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                        _ el: Int, _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64, rr: UnsafePointer<UInt64>,
                        montgomeryOut: Bool, _ impl: any MontgomeryImplementation.Type, _ ws: UnsafeMutablePointer<UInt64>) {
        let bits = el * 64 - exp[el - 1].leadingZeroBitCount
        let w = slidingWindowWidth(bits: bits)
        let odd = 1 << (w - 1)   // table of x, x^3, ..., x^(2^w - 1)
        let table = ws, acc = ws + odd * n, x2 = acc + n, t = x2 + n
        mul(table, base, rr, m, n, m0inv, t, impl)
        if odd > 1 {
            square(x2, table, m, n, m0inv, t, impl)
            for k in 1..<odd { mul(table + k * n, table + (k - 1) * n, x2, m, n, m0inv, t, impl) }
        }
        slidingWindowScan(exp, bits: bits, width: w,
                          start: { acc.update(from: table + $0 * n, count: n) },
                          square: { square(acc, acc, m, n, m0inv, t, impl) },
                          multiply: { mul(acc, acc, table + $0 * n, m, n, m0inv, t, impl) })
        if montgomeryOut {
            out.update(from: acc, count: n)
        } else {
            x2.update(repeating: 0, count: n)
            x2[0] = 1
            mul(out, acc, x2, m, n, m0inv, t, impl)
        }
    }

    /// `w` bits of `exp` starting at bit `pos` (RampartKernelSupport's `exponentWindow`, which the IFMA
    /// kernel reads its windows with too).
    @inline(__always)
    static func bits(_ exp: UnsafePointer<UInt64>, _ pos: Int, _ w: Int) -> Int { exponentWindow(exp, pos, w) }

    /// `out = table[index]` reading every entry (constant time in `index`): a gather in the style of
    /// OpenSSL's `BN_mod_exp_mont_consttime` and Go's bigmod, with each entry's mask passed through a
    /// value barrier. Without the barrier LLVM saw that the mask is `k == index` and compiled the loop
    /// into `cmp k, index; jne` with the entry read only when it matched (a secret-dependent branch
    /// and load, found by the ctgrind check).
    @inline(never)
    static func select(_ out: UnsafeMutablePointer<UInt64>, _ table: UnsafePointer<UInt64>, _ size: Int, _ n: Int, _ index: Int) {
        out.update(repeating: 0, count: n)
        for k in 0..<size {
            let mask = ConstantTime.isZeroMaskBarrier(UInt64(truncatingIfNeeded: k ^ index))
            let e = table + k * n
            for j in 0..<n { out[j] |= e[j] & mask }
        }
    }

    /// `x = 2·x mod m` for `x < m` (n limbs), constant time. `t` is n limbs of scratch.
    static func doubleMod(_ x: UnsafeMutablePointer<UInt64>, _ m: UnsafePointer<UInt64>, _ n: Int,
                          _ t: UnsafeMutablePointer<UInt64>) {
        var carry: UInt64 = 0
        for j in 0..<n {
            let v = x[j]
            t[j] = (v << 1) | carry
            carry = v >> 63
        }
        subtractIfAtLeast(x, t, carry, m, n)
    }

    /// `out = 2^k · R mod m` (the Montgomery form of 2^k) from `one = R mod m`, by left-to-right
    /// square-and-double over the bits of the public `k`: constant time in the value of m.
    /// `tmp` is n limbs and `t` n + 2 limbs of scratch.
    static func montgomeryPowerOfTwo(_ k: Int, into out: UnsafeMutablePointer<UInt64>, one: UnsafePointer<UInt64>,
                                     _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64,
                                     _ tmp: UnsafeMutablePointer<UInt64>, _ t: UnsafeMutablePointer<UInt64>,
                                     _ hw: any MontgomeryImplementation.Type) {
        out.update(from: one, count: n)
        guard k > 0 else { return }
        var bit = Int.bitWidth - 1 - k.leadingZeroBitCount
        while bit >= 0 {
            square(out, out, m, n, m0inv, t, hw)
            if (k >> bit) & 1 == 1 { doubleMod(out, m, n, tmp) }
            bit -= 1
        }
    }
}

extension Modulus {
    /// Testing hook: `a · b · R⁻¹ mod m` (R = 2^(64n)) through one backend's kernel on n-limb buffers
    /// (`.hardware` is the dispatched kernel, `.portable` the Swift one). Requires `a < R`, `b < m`.
    @_spi(Testing) public func montgomeryProduct(_ x: BigUInt, _ y: BigUInt, backend: Backend) -> BigUInt {
        precondition(x.limbCount <= limbCount && y < value)
        let a = Modulus.padded(x, limbCount), b = Modulus.padded(y, limbCount)
        var out = [UInt64](repeating: 0, count: limbCount)
        withWorkspace(limbs: limbCount + 2) { t in
            a.withUnsafeBufferPointer { pa in b.withUnsafeBufferPointer { pb in
                out.withUnsafeMutableBufferPointer { po in
                    if backend == .portable {
                        Montgomery.mulPortable(po.baseAddress!, pa.baseAddress!, pb.baseAddress!, m, limbCount, m0inv, t)
                    } else {
                        Montgomery.mul(po.baseAddress!, pa.baseAddress!, pb.baseAddress!, m, limbCount, m0inv, t,
                                       Registries.montgomery.implementation(for: backend))
                    }
                }
            } }
        }
        return BigUInt(limbs: out)
    }

    /// Testing hook: `a² · R⁻¹ mod m` through one backend's squaring kernel. Requires `a < m`.
    @_spi(Testing) public func montgomerySquare(_ x: BigUInt, backend: Backend) -> BigUInt {
        precondition(x < value)
        let a = Modulus.padded(x, limbCount)
        var out = [UInt64](repeating: 0, count: limbCount)
        withWorkspace(limbs: limbCount + 2) { t in
            a.withUnsafeBufferPointer { pa in
                out.withUnsafeMutableBufferPointer { po in
                    if backend == .portable {
                        Montgomery.squarePortable(po.baseAddress!, pa.baseAddress!, m, limbCount, m0inv, t)
                    } else {
                        Montgomery.square(po.baseAddress!, pa.baseAddress!, m, limbCount, m0inv, t,
                                          Registries.montgomery.implementation(for: backend))
                    }
                }
            }
        }
        return BigUInt(limbs: out)
    }
}
