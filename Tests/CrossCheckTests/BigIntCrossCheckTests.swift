// BigUInt and Modulus against OpenSSL's BN_* on seeded random operands of random sizes.

import Testing
import RampartReference
@_spi(Testing) import Rampart
import RampartTestSupport

private let bnPresentOrRequired = OpenSSLBN.shared != nil || Reference.required

private func requireBN() -> OpenSSLBN? {
    if let b = OpenSSLBN.shared { return b }
    if Reference.required { Issue.record("RAMPART_REQUIRE_REFERENCE=1 but OpenSSL BN functions were not found") }
    return nil
}

/// Random operand bytes: sizes from 0 to `maxBytes`, with runs of 0x00 and 0xFF limbs mixed in
/// (carry and borrow chains, Knuth D's rare correction steps).
private func operand(_ g: inout SplitMix64, maxBytes: Int) -> [UInt8] {
    let n = Int.random(in: 0...maxBytes, using: &g)
    var b = g.bytes(n)
    switch Int.random(in: 0..<6, using: &g) {
    case 0: for i in b.indices where Int.random(in: 0..<3, using: &g) == 0 { b[i] = 0xFF }
    case 1: for i in b.indices where Int.random(in: 0..<3, using: &g) == 0 { b[i] = 0 }
    case 2: if !b.isEmpty { b[0] = 0xFF }
    default: break
    }
    return b
}

private func minimal(_ b: [UInt8]) -> [UInt8] { Array(b.drop { $0 == 0 }) }

@Suite(.enabled(if: bnPresentOrRequired, "OpenSSL libcrypto not found (apt-get install libssl3): BigUInt cross-check skipped"))
struct BigIntCrossCheckTests {
    @Test func arithmeticMatchesOpenSSL() throws {
        guard let bn = requireBN() else { return }
        var g = SplitMix64(seed: 0xB16)
        for i in 0..<1500 {
            let maxBytes = i < 500 ? 40 : 300
            let a = operand(&g, maxBytes: maxBytes), b = operand(&g, maxBytes: maxBytes)
            let x = BigUInt(bigEndian: a), y = BigUInt(bigEndian: b)
            #expect((x + y).bigEndianBytes() == (try bn.add(a, b)), "add \(x) \(y)")
            #expect((x * y).bigEndianBytes() == (try bn.mul(a, b)), "mul \(x) \(y)")
            let (d, neg) = try bn.sub(a, b)
            if neg {
                #expect(throws: RampartError.negativeResult) { try x - y }
                #expect(x.subtractingReportingOverflow(y).overflow)
            } else {
                #expect((try x - y).bigEndianBytes() == d, "sub \(x) \(y)")
            }
            if !y.isZero {
                let (q, r) = try x.quotientAndRemainder(dividingBy: y)
                let (eq, er) = try bn.divMod(a, b)
                #expect(q.bigEndianBytes() == eq && r.bigEndianBytes() == er, "div \(x) / \(y)")
            } else {
                #expect(throws: RampartError.divisionByZero) { try x.quotientAndRemainder(dividingBy: y) }
            }
            let s = Int.random(in: 0...200, using: &g)
            #expect((x << s).bigEndianBytes() == (try bn.shiftLeft(a, s)), "shl \(x) \(s)")
            #expect((x >> s).bigEndianBytes() == (try bn.shiftRight(a, s)), "shr \(x) \(s)")
            #expect(BigUInt.gcd(x, y).bigEndianBytes() == (try bn.gcd(a, b)), "gcd \(x) \(y)")
            #expect(BigUInt(bigEndian: minimal(a)) == x)
            #expect(try BigUInt(hex: x.hexString) == x)
        }
    }

    @Test func divisionEdgeCasesMatchOpenSSL() throws {
        guard let bn = requireBN() else { return }
        var g = SplitMix64(seed: 0xD1F)
        // Divisors with top limbs of all ones / a single top bit: qhat = b − 1 and add-back paths.
        for _ in 0..<800 {
            let dl = Int.random(in: 2...6, using: &g)
            var dv = [UInt64](repeating: 0, count: dl)
            for k in 0..<dl { dv[k] = [UInt64.max, 0, 1 << 63, g.next(), UInt64.max - 1][Int.random(in: 0..<5, using: &g)] }
            if dv[dl - 1] == 0 { dv[dl - 1] = 1 << 63 }
            let ul = dl + Int.random(in: 0...4, using: &g)
            var uv = [UInt64](repeating: 0, count: ul)
            for k in 0..<ul { uv[k] = [UInt64.max, 0, g.next(), 1 << 63][Int.random(in: 0..<4, using: &g)] }
            let x = BigUInt(limbs: uv), y = BigUInt(limbs: dv)
            let (q, r) = try x.quotientAndRemainder(dividingBy: y)
            let (eq, er) = try bn.divMod(x.bigEndianBytes(), y.bigEndianBytes())
            #expect(q.bigEndianBytes() == eq && r.bigEndianBytes() == er, "div \(x) / \(y)")
        }
    }

    @Test func modularExponentiationMatchesOpenSSL() throws {
        guard let bn = requireBN() else { return }
        var g = SplitMix64(seed: 0xE4B)
        for i in 0..<160 {
            let mBytes = i < 100 ? Int.random(in: 1...80, using: &g) : Int.random(in: 100...256, using: &g)
            var mb = g.bytes(mBytes)
            mb[mb.count - 1] |= 1
            if mb[0] == 0 { mb[0] = 1 }
            let m = BigUInt(bigEndian: mb)
            guard m > BigUInt(1) else { continue }
            let mod = try Modulus(m)
            let a = operand(&g, maxBytes: mBytes + 8)
            let e = operand(&g, maxBytes: i % 3 == 0 ? 300 : 40)
            let x = BigUInt(bigEndian: a), ex = BigUInt(bigEndian: e)
            guard let want = try? bn.modExp(a, e, mb) else {
                Issue.record("BN_mod_exp failed for \(Hex.encode(a)) ^ \(Hex.encode(e)) mod \(Hex.encode(mb))")
                continue
            }
            #expect(mod.publicPower(x, ex).bigEndianBytes() == want, "vt \(x)^\(ex) mod \(m)")
            #expect(mod.constantTimePower(x, ex).bigEndianBytes() == want, "ct \(x)^\(ex) mod \(m)")
            #expect((try x.power(ex, modulo: m)).bigEndianBytes() == want)
            let xr = mod.reduce(x)
            #expect(try mod.constantTimePower(xr, ex).bigEndianBytes() == bn.modExpConsttime(xr.bigEndianBytes(), e, mb))
            let y = BigUInt(bigEndian: operand(&g, maxBytes: mBytes))
            #expect(mod.multiply(x, y) == (try (x * y).remainder(dividingBy: m)))
        }
        // Even moduli go through BigUInt.power's plain path.
        for _ in 0..<40 {
            var mb = g.bytes(Int.random(in: 1...40, using: &g))
            mb[mb.count - 1] &= 0xFE
            let m = BigUInt(bigEndian: mb)
            guard !m.isZero else { continue }
            let a = operand(&g, maxBytes: 40), e = operand(&g, maxBytes: 20)
            guard let want = try? bn.modExp(a, e, mb) else {
                Issue.record("BN_mod_exp failed for \(Hex.encode(a)) ^ \(Hex.encode(e)) mod \(Hex.encode(mb))")
                continue
            }
            #expect((try BigUInt(bigEndian: a).power(BigUInt(bigEndian: e), modulo: m)).bigEndianBytes() == want)
        }
    }

    /// The Montgomery kernels at and around the generated unrolled sizes (16 and 32 limbs) against
    /// OpenSSL's multiplication and division: x = a·b·R⁻¹ mod m must satisfy x·R ≡ a·b (mod m).
    @Test(arguments: [15, 16, 17, 31, 32, 33])
    func montgomeryKernelsMatchOpenSSL(n: Int) throws {
        guard let bn = requireBN() else { return }
        var g = SplitMix64(seed: 0x307 &+ UInt64(n))
        for k in 0..<24 {
            var ml = (0..<n).map { _ in g.next() }
            switch k % 4 {
            case 0: ml[n - 1] |= 1 << 63
            case 1: for j in 1..<n { ml[j] = .max }          // close to 2^(64n)
            case 2: ml[n - 1] = 1                             // just above 2^(64(n−1))
            default: break
            }
            if ml[n - 1] == 0 { ml[n - 1] = 1 }
            ml[0] |= 1
            let m = BigUInt(limbs: ml), mb = m.bigEndianBytes()
            let mod = try Modulus(m)
            var values = (0..<4).map { _ in mod.reduce(BigUInt(limbs: (0..<n).map { _ in g.next() })) }
            values.append(try m - BigUInt(1))
            values.append(BigUInt(1))
            let rBytes = (BigUInt(1) << (64 * n)).bigEndianBytes()
            for (i, a) in values.enumerated() {
                let b = values[(i + 1) % values.count]
                let ab = a.bigEndianBytes(), bb = b.bigEndianBytes()
                let want = try bn.divMod(try bn.mul(ab, bb), mb).1
                let x = mod.montgomeryProduct(a, b, backend: .hardware)
                let got = try bn.divMod(try bn.mul(x.bigEndianBytes(), rBytes), mb).1
                #expect(got == want, "mul n=\(n) m=\(m)")
                #expect(x == mod.montgomeryProduct(a, b, backend: .portable))
                let s = mod.montgomerySquare(a, backend: .hardware)
                let wantSq = try bn.divMod(try bn.mul(ab, ab), mb).1
                let gotSq = try bn.divMod(try bn.mul(s.bigEndianBytes(), rBytes), mb).1
                #expect(gotSq == wantSq, "square n=\(n) m=\(m)")
            }
            // Whole exponentiations at this size, constant time and sliding window.
            let base = mod.reduce(BigUInt(limbs: (0..<n).map { _ in g.next() }))
            let e = BigUInt(limbs: (0..<(k % 2 == 0 ? n : 4)).map { _ in g.next() })
            let want = try bn.modExpConsttime(base.bigEndianBytes(), e.bigEndianBytes(), mb)
            #expect(mod.constantTimePower(base, e).bigEndianBytes() == want, "ct n=\(n)")
            #expect(mod.publicPower(base, e).bigEndianBytes() == want, "vt n=\(n)")
        }
    }

    @Test func modularInverseMatchesOpenSSL() throws {
        guard let bn = requireBN() else { return }
        var g = SplitMix64(seed: 0x1F4)
        var found = 0, missing = 0
        for _ in 0..<600 {
            let mb = operand(&g, maxBytes: 140), ab = operand(&g, maxBytes: 140)
            let m = BigUInt(bigEndian: mb), a = BigUInt(bigEndian: ab)
            guard m > BigUInt(1) else { continue }
            if let want = bn.modInverse(ab, mb) {
                #expect((try a.inverse(modulo: m)).bigEndianBytes() == want, "inv \(a) mod \(m)")
                found += 1
            } else {
                #expect(throws: RampartError.noInverse) { try a.inverse(modulo: m) }
                missing += 1
            }
        }
        #expect(found > 100 && missing > 50)
    }

    @Test func primalityMatchesOpenSSL() throws {
        guard let bn = requireBN() else { return }
        var g = SplitMix64(seed: 0x9A1)
        var primes = 0
        for i in 0..<400 {
            var b = g.bytes(i < 300 ? Int.random(in: 1...12, using: &g) : Int.random(in: 20...64, using: &g))
            if !b.isEmpty { b[b.count - 1] |= 1 }
            let x = BigUInt(bigEndian: b)
            let ours = x.isProbablePrime(rounds: 20, using: &g)
            #expect(ours == bn.isPrime(b, rounds: 20), "isProbablePrime \(x)")
            if ours { primes += 1 }
        }
        #expect(primes > 20)
    }

    /// 1024-bit keys (512-bit primes: the mulx kernels) and 2048-bit keys (1024-bit primes: on processors
    /// with IFMA both CRT halves run interleaved in radix 2^52): OpenSSL's public operation against
    /// Rampart's, and Rampart's private operation inverts OpenSSL's.
    @Test(arguments: [1024, 2048])
    func rsaPublicMatchesOpenSSL(bits: Int) throws {
        guard let bn = requireBN() else { return }
        var g = SplitMix64(seed: 0x45A &+ UInt64(bits))
        let key = try RSA.PrivateKey.generate(bits: bits, using: &g)
        let pub = key.publicKey
        let ref = try #require(OpenSSLBN.RSAPublicKey(bn, modulus: pub.modulus.bigEndianBytes(),
                                                      exponent: pub.publicExponent.bigEndianBytes()))
        for _ in 0..<(bits == 1024 ? 20 : 6) {
            var msg = g.bytes(bits / 8)
            msg[0] &= 0x7F
            let c = try pub.rawPublic(msg)
            #expect(c == ref.encryptRaw(msg))
            #expect(try key.rawPrivate(c) == msg)
        }
    }
}
