// Big-number rows: constant-time modexp, the 2048-bit safe-prime check, RSA-2048 public, pq factoring.

@_spi(Testing) import Rampart
import RampartReference
import RampartMTProto
import RampartTestSupport

/// `modexp-2048-2048`, `modexp-2048-256` (constant time, precomputed Montgomery contexts on both
/// sides), `safe-prime-check-2048`, `rsa2048-public`, `pq-factorize`.
func bigIntRows() -> [Row] {
    var rows: [Row] = []
    var rng = SplitMix64(seed: 2048)
    let bn = OpenSSLBN.shared
    // A random odd 2048-bit modulus with the top bit set, a base below it.
    let m = BigUInt.random(bits: 2048, using: &rng) | (BigUInt(1) << 2047) | BigUInt(1)
    let mod = try! Modulus(m)
    let base = mod.reduce(BigUInt.random(bits: 2048, using: &rng))
    for expBits in [2048, 256] {
        let e = BigUInt.random(bits: expBits, using: &rng) | (BigUInt(1) << (expBits - 1))
        var cs = [Contender(implementation: "rampart") { consume(UInt8(truncatingIfNeeded: mod.constantTimePower(base, e).low64)) }]
        if let bn, let p = OpenSSLBN.ModExpProblem(bn, base: base.bigEndianBytes(), exponent: e.bigEndianBytes(), modulus: m.bigEndianBytes()) {
            cs.append(Contender(implementation: "openssl") { p.run() })
            if let q = OpenSSLBN.ModExpProblem(bn, base: base.bigEndianBytes(), exponent: e.bigEndianBytes(),
                                               modulus: m.bigEndianBytes(), constantTime: false) {
                cs.append(Contender(implementation: "openssl-vartime") { q.run() })
            }
        }
        cs.append(Contender(implementation: "rampart-vartime") { consume(UInt8(truncatingIfNeeded: mod.publicPower(base, e).low64)) })
        rows.append(Row(operation: "modexp-2048-\(expBits)", size: 0, unit: .opsps, contenders: cs))
    }

    // p and (p − 1)/2, 64 Miller-Rabin rounds each, Telegram's prime without the known-prime shortcut.
    let p = DiffieHellman.telegramPrime
    var cs = [Contender(implementation: "rampart") {
        var r = SplitMix64(seed: 64)
        consume(DiffieHellman.isSafePrime(p, rounds: 64, useKnownPrimes: false, using: &r) ? 1 : 0)
    }]
    if let bn {
        let pb = p.bigEndianBytes(), qb = (p >> 1).bigEndianBytes()
        cs.append(Contender(implementation: "openssl") { consume(bn.isPrime(pb, rounds: 64) && bn.isPrime(qb, rounds: 64) ? 1 : 0) })
    }
    rows.append(Row(operation: "safe-prime-check-2048", size: 0, unit: .opsps, contenders: cs))

    // Raw RSA-2048 public operation with Telegram's key.
    let key = try! RSA.PublicKey(pemRepresentation: TelegramPublicKeys.productionPEM)
    var msg = randomBytes(count: 256, using: &rng)
    msg[0] = 0x12
    let input = msg
    cs = [Contender(implementation: "rampart") { consume(try! key.rawPublic(input)[0]) }]
    if let bn, let ref = OpenSSLBN.RSAPublicKey(bn, modulus: key.modulus.bigEndianBytes(), exponent: key.publicExponent.bigEndianBytes()) {
        let out = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 64)
        let inp = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 64)
        input.withUnsafeBytes { inp.copyMemory(from: $0.baseAddress!, byteCount: 256) }
        cs.append(Contender(implementation: "openssl") { _ = ref.encryptRaw(inp, into: out); consume(out) })
    }
    rows.append(Row(operation: "rsa2048-public", size: 0, unit: .opsps, contenders: cs))

    // Raw RSA-2048 private operation (CRT): what a server pays once per handshake (req_DH_params). Rampart's
    // is constant time (no blinding needed); OpenSSL's is RSA_private_decrypt, CRT with blinding.
    var keyRNG = SplitMix64(seed: 0x5253_4132)
    if let priv = try? RSA.PrivateKey.generate(bits: 2048, using: &keyRNG) {
        var m = randomBytes(count: 256, using: &rng)
        m[0] = 0x23
        let cin = m
        cs = [Contender(implementation: "rampart") { consume(try! priv.rawPrivate(cin)[0]) }]
        if let bn, let ref = OpenSSLBN.RSAPrivateKey(bn, pkcs1DER: priv.pkcs1DERRepresentation, modulusBytes: 256) {
            let out = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 64)
            let inp = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 64)
            cin.withUnsafeBytes { inp.copyMemory(from: $0.baseAddress!, byteCount: 256) }
            guard ref.decryptRaw(inp, into: out), Array(UnsafeRawBufferPointer(start: out, count: 256)) == (try! priv.rawPrivate(cin)) else {
                fail("rsa2048-private: OpenSSL and Rampart disagree")
            }
            cs.append(Contender(implementation: "openssl") { _ = ref.decryptRaw(inp, into: out); consume(out) })
        }
        rows.append(Row(operation: "rsa2048-private", size: 0, unit: .opsps, contenders: cs))
    }

    // 63-bit semiprimes (two 31/32-bit primes), a rotating set of eight.
    var semiprimes: [UInt64] = []
    func prime(near x: UInt64) -> UInt64 {
        var c = x | 1
        while !Factorization.isPrime(c) { c += 2 }
        return c
    }
    while semiprimes.count < 8 {
        let a = prime(near: UInt64.random(in: 2_100_000_000...2_400_000_000, using: &rng))
        let b = prime(near: UInt64.random(in: 2_700_000_000...3_000_000_000, using: &rng))
        semiprimes.append(a * b)  // between 2^62 and 2^63: a 63-bit semiprime
    }
    var k = 0
    let list = semiprimes
    rows.append(Row(operation: "pq-factorize", size: 0, unit: .opsps, contenders: [Contender(implementation: "rampart") {
        let (pp, _) = try! Factorization.factorPQ(list[k % list.count])
        k += 1
        consume(UInt8(truncatingIfNeeded: pp))
    }]))
    return rows
}
