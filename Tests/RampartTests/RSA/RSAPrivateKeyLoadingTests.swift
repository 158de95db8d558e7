// Loading RSA private keys in constant time (issue 36): DER integers at fixed width, the fixed-width
// limb helpers and the constant-time consistency checks, each against the variable-time code it
// replaced. (The constant time itself is checked by rampart-ctgrind's cases rsa-private-pem and
// rsa-private-der; PEM's line splitting is tested in PEMTests.swift.)

import Testing
@_spi(Testing) @testable import Rampart
import RampartTestSupport

/// The outcome of reading one INTEGER element.
private enum Read: Equatable {
    case value(BigUInt, limbs: Int)
    case failure(RampartError)
}

private func readPublic(_ der: [UInt8]) -> Read {
    var r = DERReader(der)
    do { return .value(try r.positiveInteger(), limbs: -1) } catch { return .failure(error) }
}

private func readSecret(_ der: [UInt8]) -> Read {
    var r = DERReader(der)
    do {
        let l = try r.secretInteger()
        return .value(BigUInt(limbs: l), limbs: l.count)
    } catch { return .failure(error) }
}

/// Checks that `secretInteger` reads `der` as `positiveInteger` does (same value or same error), at
/// the width its length gives.
private func expectSameReading(_ der: [UInt8], _ note: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
    let p = readPublic(der), s = readSecret(der)
    switch (p, s) {
    case (.value(let a, _), .value(let b, let limbs)):
        #expect(a == b, "\(note)", sourceLocation: sourceLocation)
        var inner = DERReader(der)
        let length = (try? inner.element(0x02))?.rest.count ?? -1
        #expect(limbs == (length + 7) / 8, "\(note)", sourceLocation: sourceLocation)
    default:
        #expect(p == s, "\(note)", sourceLocation: sourceLocation)
    }
}

@Suite struct DERIntegerTests {
    @Test func fixedWidthLimbs() {
        var rng = SplitMix64(seed: 361)
        for n in 0...40 {
            for zeros in [0, 1, 7, 8, 9, n] where zeros <= n {
                var raw = rng.bytes(n)
                for k in 0..<zeros { raw[k] = 0 }
                let l = raw.withUnsafeBytes { LimbMath.limbs(bigEndianFixed: $0) }
                #expect(l.count == (n + 7) / 8, "length \(n)")
                #expect(BigUInt(limbs: l) == BigUInt(bigEndian: raw), "length \(n), \(zeros) leading zeros")
            }
        }
    }

    @Test func edgeCases() {
        func int(_ content: [UInt8]) -> [UInt8] { DERWriter.element(0x02, content) }
        // Leading zeros, the high bit, the zero value, negative values.
        #expect(readSecret(int([0x00])) == .failure(.invalidDER(.zeroInteger)))
        #expect(readSecret(int([0x80])) == .failure(.invalidDER(.negativeInteger)))
        #expect(readSecret(int([0xFF])) == .failure(.invalidDER(.negativeInteger)))
        #expect(readSecret(int([0x00, 0x7F])) == .failure(.invalidDER(.nonMinimalInteger)))
        #expect(readSecret(int([0x00, 0x00])) == .failure(.invalidDER(.nonMinimalInteger)))
        #expect(readSecret(int([0xFF, 0x80])) == .failure(.invalidDER(.nonMinimalInteger)))
        #expect(readSecret(int([0xFF, 0x7F])) == .failure(.invalidDER(.negativeInteger)))
        #expect(readSecret(int([0x80, 0x00])) == .failure(.invalidDER(.negativeInteger)))
        #expect(readSecret(int([])) == .failure(.invalidDER(.truncated)))
        #expect(readSecret([0x30, 0x01, 0x01]) == .failure(.invalidDER(.unexpectedTag)))
        #expect(readSecret(int([0x01])) == .value(BigUInt(1), limbs: 1))
        #expect(readSecret(int([0x00, 0x80])) == .value(BigUInt(0x80), limbs: 1))
        // A leading zero byte that starts a limb of its own: the width keeps it (a zero top limb).
        let high = [0x00] + [UInt8](repeating: 0xFF, count: 8)
        #expect(readSecret(int(high)) == .value(BigUInt(UInt64.max), limbs: 2))
        #expect(readSecret(int([0x01] + [UInt8](repeating: 0, count: 8))) == .value(BigUInt(limbs: [0, 1]), limbs: 2))
        for content: [UInt8] in [[0x00], [0x01], [0x7F], [0x80], [0xFF], [0x00, 0x80], [0x00, 0x7F], [0x00, 0x00], [0xFF, 0x80],
                                 [0xFF, 0x7F], [0x80, 0x00], [], high, [0x00, 0x80, 0x00], [0x00, 0x00, 0x01]] {
            expectSameReading(int(content), "\(content)")
        }
    }

    @Test func maximalLengths() {
        var rng = SplitMix64(seed: 362)
        // Long-form lengths up to a 16384-bit number with its zero byte (2049 content bytes: 257
        // limbs, the top one zero), and every length-octet count up to the limit of 4.
        for n in [127, 128, 129, 255, 256, 257, 1024, 2048, 2049, 4096] {
            var content = rng.bytes(n)
            content[0] = n % 2 == 1 ? 0x00 : content[0] & 0x7F | 0x01
            if n % 2 == 1 { content[1] |= 0x80 }
            let der = DERWriter.element(0x02, content)
            expectSameReading(der, "length \(n)")
            if case .value(_, let limbs) = readSecret(der) { #expect(limbs == (n + 7) / 8) } else { Issue.record("length \(n) refused") }
        }
        let body = [UInt8](repeating: 0x11, count: 300)
        let lengths: [[UInt8]] = [
            [0x80],                          // indefinite
            [0x81, 0x7F],                    // long form below 128
            [0x82, 0x00, 0x80],              // leading zero length octet
            [0x84, 0x00, 0x00, 0x01, 0x2C],  // four octets, leading zeros
            [0x84, 0x01, 0x00, 0x00, 0x00],  // four octets: 16 MiB, truncated
            [0x85, 0x01, 0x00, 0x00, 0x00, 0x00], // five octets
            [0x82, 0x01, 0x2C],              // 300: valid
            [0x82, 0x01, 0x2D],              // 301: truncated
        ]
        for l in lengths { expectSameReading([0x02] + l + body, "length octets \(l)") }
    }

    @Test func randomEncodings() {
        var rng = SplitMix64(seed: 363)
        for _ in 0..<3000 {
            let n = 1 + Int(rng.next() % 40)
            var content = rng.bytes(n)
            let first: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFF, content[0]]
            content[0] = first[Int(rng.next() % 6)]
            if n > 1, rng.next() % 2 == 0 { content[1] = [0x00, 0x7F, 0x80, 0xFF][Int(rng.next() % 4)] }
            if rng.next() % 4 == 0 { for k in 0..<n { content[k] = 0 } }
            expectSameReading(DERWriter.element(0x02, content), "\(content)")
        }
    }
}

@Suite struct FixedWidthLimbTests {
    @Test func fitAndMasks() {
        var r = [UInt64](repeating: 7, count: 3)
        r.withUnsafeMutableBufferPointer { p in
            #expect(LimbMath.fit([1, 2, 3], into: p.baseAddress!, 2) == ~0)
            #expect(LimbMath.fit([1, 2, 0, 0], into: p.baseAddress!, 2) == 0)
            #expect(Array(p.prefix(2)) == [1, 2])
            #expect(LimbMath.fit([5], into: p.baseAddress!, 3) == 0)
            #expect(Array(p) == [5, 0, 0])
        }
        let a: [UInt64] = [1, 0, 9], b: [UInt64] = [1, 0, 9], c: [UInt64] = [0, 1, 9], one: [UInt64] = [1, 0, 0]
        #expect(LimbMath.equalMask(a, b, 3) == ~0)
        #expect(LimbMath.equalMask(a, c, 3) == 0)
        #expect(LimbMath.lessMask(a, c, 3) == ~0 && LimbMath.lessMask(c, a, 3) == 0 && LimbMath.lessMask(a, b, 3) == 0)   // limbs little-endian
        #expect(LimbMath.isOneMask(one, 3) == ~0 && LimbMath.isOneMask(a, 3) == 0)
        #expect(LimbMath.isOneMask([1], 1) == ~0 && LimbMath.isOneMask([3], 1) == 0)
    }

    @Test func reduceAgainstDivision() {
        var rng = SplitMix64(seed: 364)
        func check(_ x: [UInt64], _ m: [UInt64], sourceLocation: SourceLocation = #_sourceLocation) {
            let k = m.count
            var r = [UInt64](repeating: 0xAA, count: k), v = [UInt64](repeating: 0x55, count: k + 1)
            r.withUnsafeMutableBufferPointer { pr in v.withUnsafeMutableBufferPointer { pv in
                LimbMath.reduceCT(pr.baseAddress!, x, x.count, modulo: m, k, scratch: pv.baseAddress!)
            } }
            #expect(BigUInt(limbs: r) == (try? BigUInt(limbs: x).remainder(dividingBy: BigUInt(limbs: m))), "x \(x), m \(m)",
                    sourceLocation: sourceLocation)
        }
        let top: [UInt64] = [1, 2, 3, 0xFFFF, 1 << 63, UInt64.max - 1, UInt64.max]
        let low: [UInt64] = [0, 1, UInt64.max - 1, UInt64.max]
        for round in 0..<6000 {
            let k = 1 + Int(rng.next() % 5), xn = Int(rng.next() % 9)
            var m = (0..<k).map { _ in rng.next() }
            var x = (0..<xn).map { _ in rng.next() }
            switch round % 6 {
            case 0: m[0] &= ~1                                       // even, like p − 1
            case 1: m[k - 1] = top[Int(rng.next() % 7)]              // extreme top limbs (D up to 2^128)
                    if k > 1 { m[k - 2] = low[Int(rng.next() % 4)] }
            case 2: for j in 0..<xn { x[j] = [0, UInt64.max][Int(rng.next() % 2)] }   // extreme words
            case 3: if xn >= k { for j in 0..<k { x[xn - k + j] = m[j] } }           // x starts with m
            case 4: m[k - 1] >>= rng.next() % 64                     // a short top limb
            default: break
            }
            m[k - 1] |= m[k - 1] == 0 ? 1 : 0                        // the top limb is not zero (reduceCT's contract)
            check(x, m)
        }
        // x = q·m + r with the largest remainders and digits.
        for _ in 0..<500 {
            let k = 1 + Int(rng.next() % 4)
            var m = (0..<k).map { _ in rng.next() }
            m[k - 1] |= 1
            let mv = BigUInt(limbs: m)
            let q = BigUInt(limbs: (0..<(1 + Int(rng.next() % 4))).map { _ in UInt64.max - rng.next() % 3 })
            let x = q * mv + mv.subtracting(knownSmaller: BigUInt(1 + rng.next() % 2))
            check(x.limbs, m)
        }
        check([], [7])
        check([5], [7])
        check([UInt64.max, UInt64.max, UInt64.max], [UInt64.max, UInt64.max])   // D = 2^128
        check([UInt64.max, UInt64.max, UInt64.max], [0, 1])                     // D − 1 = 2^64 exactly
    }
}

@Suite struct RSAPrivateKeyLoadingTests {
    /// A 1024-bit key and its numbers.
    static let key: RSA.PrivateKey = {
        var rng = SplitMix64(seed: 36)
        return try! RSA.PrivateKey.generate(bits: 1024, using: &rng)
    }()

    struct Numbers {
        var n, e, d, p, q, dp, dq, qinv: BigUInt
        var der: [UInt8] {
            DERWriter.sequence([DERWriter.integer(BigUInt()), DERWriter.integer(n), DERWriter.integer(e), DERWriter.integer(d),
                                DERWriter.integer(p), DERWriter.integer(q), DERWriter.integer(dp), DERWriter.integer(dq),
                                DERWriter.integer(qinv)])
        }
        /// Loads through both paths and checks that they agree.
        func load(sourceLocation: SourceLocation = #_sourceLocation) -> RSA.PrivateKey? {
            let a = try? RSA.PrivateKey(modulus: n, publicExponent: e, privateExponent: d, prime1: p, prime2: q,
                                        exponent1: dp, exponent2: dq, coefficient: qinv)
            let b = try? RSA.PrivateKey(pkcs1DERRepresentation: der)
            #expect((a == nil) == (b == nil), sourceLocation: sourceLocation)
            if let a, let b { #expect(a.pkcs1DERRepresentation == b.pkcs1DERRepresentation, sourceLocation: sourceLocation) }
            return b
        }
    }

    static var numbers: Numbers {
        let s = key.secrets
        return Numbers(n: key.publicKey.modulus, e: key.publicKey.publicExponent, d: s.d.value, p: s.p.value, q: s.q.value,
                       dp: s.dp.value, dq: s.dq.value, qinv: s.qinv.value)
    }

    @Test func consistentKeysLoad() throws {
        let k = Self.numbers
        let loaded = try #require(k.load())
        #expect(loaded.pkcs1DERRepresentation == Self.key.pkcs1DERRepresentation)
        // p and q in the other order (PKCS#1 does not require p > q), with the CRT numbers to match.
        var swapped = k
        swapped.p = k.q; swapped.q = k.p; swapped.dp = k.dq; swapped.dq = k.dp
        swapped.qinv = try k.p.inverse(modulo: k.q)
        let other = try #require(swapped.load())
        var rng = SplitMix64(seed: 365)
        for _ in 0..<3 {
            let m = try BigUInt.random(below: k.n, using: &rng).bigEndianBytes(count: 128)
            #expect(try other.rawPrivate(Self.key.publicKey.rawPublic(m)) == m)
        }
        // Fixed widths wider than the numbers (zero limbs on top) load the same key.
        let wide = try RSA.PrivateKey(modulus: k.n, publicExponent: k.e,
                                      fixedWidth: (d: k.d.limbs + [0], p: k.p.limbs + [0, 0], q: k.q.limbs + [0], dp: k.dp.limbs + [0],
                                                   dq: k.dq.limbs, qinv: k.qinv.limbs + [0]))
        #expect(wide.pkcs1DERRepresentation == Self.key.pkcs1DERRepresentation)
    }

    @Test func privateKeyPEMWithCRLF() throws {
        let key = Self.key
        let crlf = key.pemRepresentation.split(separator: "\n").joined(separator: "\r\n") + "\r\n"
        #expect(try RSA.PrivateKey(pemRepresentation: crlf).pkcs1DERRepresentation == key.pkcs1DERRepresentation)
    }

    @Test func everyConsistencyCheckRefuses() throws {
        let k = Self.numbers
        let one = BigUInt(1), two = BigUInt(2)
        var cases: [(String, Numbers)] = []
        func with(_ name: String, _ change: (inout Numbers) throws -> Void) rethrows {
            var x = k
            try change(&x)
            cases.append((name, x))
        }
        try with("d") { $0.d = try $0.d - two }                       // d mod (p − 1) ≠ dp
        with("p") { $0.p = $0.p + two }                               // n ≠ p·q
        with("q") { $0.q = $0.q + two }
        with("dp") { $0.dp = $0.dp + two }                            // d mod (p − 1) ≠ dp
        with("dq") { $0.dq = $0.dq + two }
        with("qinv") { $0.qinv = $0.qinv + one }                      // q·qinv ≢ 1 (mod p)
        with("qinv + p") { $0.qinv = $0.qinv + $0.p }                 // the same residue, not below p
        with("dp + (p − 1)") { $0.dp = $0.dp + $0.p.subtracting(knownSmaller: one) }
        with("e") { $0.e = $0.e + two }                               // e·dp ≢ 1 (mod p − 1)
        with("d ≥ 2^(64·limbs(n))") { $0.d = $0.d + (one << (64 * $0.n.limbCount)) }
        with("p = 1") { $0.p = one }
        with("p even") { $0.p = $0.p + one }
        for (name, x) in cases {
            #expect(x.load() == nil, "\(name)")
            #expect(throws: RampartError.invalidRSAKey, "\(name)") { try RSA.PrivateKey(pkcs1DERRepresentation: x.der) }
        }
        // Limb counts that cannot multiply to n's are refused before any arithmetic.
        let huge = [UInt64](repeating: 1, count: k.n.limbCount + 2)
        #expect(throws: RampartError.invalidRSAKey) {
            try RSA.PrivateKey(modulus: k.n, publicExponent: k.e,
                               fixedWidth: (d: k.d.limbs, p: huge, q: k.q.limbs, dp: k.dp.limbs, dq: k.dq.limbs, qinv: k.qinv.limbs))
        }
        #expect(throws: RampartError.invalidRSAKey) {
            try RSA.PrivateKey(modulus: k.n, publicExponent: k.e,
                               fixedWidth: (d: k.d.limbs, p: [0, 0], q: k.q.limbs, dp: k.dp.limbs, dq: k.dq.limbs, qinv: k.qinv.limbs))
        }
        // A secret integer that is not well formed keeps its DER error.
        var der = k.der
        var seq = DERReader(der)
        var inner = try seq.element(0x30)
        for _ in 0..<3 { _ = try inner.element(0x02) }     // version, n, e: d's tag follows
        let lengthByte = der[inner.offset + 1]
        let content = inner.offset + 2 + (lengthByte < 0x80 ? 0 : Int(lengthByte & 0x7F))
        der[content] = 0x00                                  // 00 00 …: a redundant leading byte
        der[content + 1] = 0x00
        #expect(throws: RampartError.invalidDER(.nonMinimalInteger)) { try RSA.PrivateKey(pkcs1DERRepresentation: der) }
        der[content] = 0x80                                  // a negative d
        #expect(throws: RampartError.invalidDER(.negativeInteger)) { try RSA.PrivateKey(pkcs1DERRepresentation: der) }
    }
}
