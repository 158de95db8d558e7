// Key-file targets: RSA public keys (PKCS#1 and SubjectPublicKeyInfo, PEM and DER), RSA private
// keys (PKCS#1), and the PEM/Base64 armour they arrive in.
//
// Properties: the DER reader is strict (one encoding per value), so every accepted DER re-serializes
// byte for byte; a key that parses satisfies the documented invariants and its raw operations are
// consistent; PEM and Base64 round-trip.

@_spi(Testing) import Rampart
import RampartMTProto

/// The input's bytes as text (invalid UTF-8 becomes U+FFFD, as reading a file would give).
func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// Invariants of a parsed public key, and a bounded raw operation.
private func checkPublicKey(_ key: RSA.PublicKey, probe: [UInt8]) {
    let n = key.modulus, e = key.publicExponent
    FuzzCheck.require(n.isOdd && (512...16384).contains(n.bitWidth) && e.isOdd && e >= BigUInt(3) && e < n,
                      "a public key outside the documented ranges was accepted")
    FuzzCheck.require(key.byteCount == (n.bitWidth + 7) / 8 && key.keySizeInBits == n.bitWidth, "key sizes")
    _ = key.mtprotoFingerprint
    FuzzCheck.require((try? RSA.PublicKey(pkcs1DERRepresentation: key.pkcs1DERRepresentation)) == key, "PKCS#1 round trip")
    FuzzCheck.require((try? RSA.PublicKey(derRepresentation: key.derRepresentation)) == key, "SPKI round trip")
    FuzzCheck.require((try? RSA.PublicKey(pemRepresentation: key.pemRepresentation)) == key, "PEM round trip")
    FuzzCheck.require((try? RSA.PublicKey(pemRepresentation: key.pkcs1PEMRepresentation)) == key, "PKCS#1 PEM round trip")
    // The raw operation, where it is cheap (small exponent, modulus up to 4096 bits).
    guard e.bitWidth <= 32, n.bitWidth <= 4096 else { return }
    let x = Array(probe.prefix(key.byteCount + 1))
    do throws(RampartError) {
        let y = try key.rawPublic(x)
        FuzzCheck.require(x.count <= key.byteCount && BigUInt(bigEndian: x) < n, "rawPublic accepted an input not below n")
        FuzzCheck.require(y.count == key.byteCount && BigUInt(bigEndian: y) < n, "rawPublic output size or range")
        FuzzCheck.require(referencePower(BigUInt(bigEndian: x), e, n) == BigUInt(bigEndian: y), "rawPublic value is not x^e mod n")
    } catch {
        FuzzCheck.require(x.count > key.byteCount || BigUInt(bigEndian: x) >= n, "rawPublic refused a valid input: \(error)")
    }
}

let rsaPublicKeyTarget = FuzzTarget(
    name: "rsa-public-key",
    summary: "RSA.PublicKey from PEM (one block and lists), PKCS#1 DER and SPKI DER: accepted DER re-serializes exactly, invariants hold, rawPublic is x^e mod n",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let mode = input.byte()
        let probe = input.lengthPrefixed(max: 600)
        let body = input.rest()
        switch mode % 4 {
        case 0:
            guard let key = try? RSA.PublicKey(pemRepresentation: text(body)) else { return }
            FuzzStats.note("rsa public: PEM accepted")
            guard let blocks = try? PEM.decodeAll(text(body)), blocks.count == 1 else { FuzzCheck.fail("PEM with \(body.count) bytes: block count") }
            let der = blocks[0].label == "RSA PUBLIC KEY" ? key.pkcs1DERRepresentation : key.derRepresentation
            FuzzCheck.require(der == blocks[0].der && ["RSA PUBLIC KEY", "PUBLIC KEY"].contains(blocks[0].label), "PEM key DER round trip")
            checkPublicKey(key, probe: probe)
        case 1:
            guard let key = try? RSA.PublicKey(pkcs1DERRepresentation: body) else { return }
            FuzzCheck.require(key.pkcs1DERRepresentation == body, "PKCS#1 DER is not re-serialized byte for byte")
            checkPublicKey(key, probe: probe)
        case 2:
            guard let key = try? RSA.PublicKey(derRepresentation: body) else { return }
            FuzzCheck.require(key.derRepresentation == body, "SPKI DER is not re-serialized byte for byte")
            checkPublicKey(key, probe: probe)
        default:
            guard let keys = try? RSA.PublicKey.all(pemRepresentation: text(body)) else { return }
            guard let blocks = try? PEM.decodeAll(text(body)) else { FuzzCheck.fail("key list without PEM blocks") }
            FuzzCheck.require(keys.count == blocks.count, "a key list skipped blocks")
            for k in keys.prefix(3) { checkPublicKey(k, probe: probe) }
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        let pub = Fixtures.rsa2048.publicKey, small = Fixtures.rsa1024.publicKey
        var w = SeedWriter()
        w.byte(0); w.lengthPrefixed([1, 2, 3]); w.raw(Array(TelegramPublicKeys.productionPEM.utf8))
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(0); w.lengthPrefixed([]); w.raw(Array(pub.pemRepresentation.utf8))
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(1); w.lengthPrefixed([0xFF, 0xFF]); w.raw(small.pkcs1DERRepresentation)
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(2); w.lengthPrefixed([7]); w.raw(small.derRepresentation)
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(3); w.lengthPrefixed([]); w.raw(Array((TelegramPublicKeys.productionPEM + "\r\n" + small.pkcs1PEMRepresentation).utf8))
        out.append(w.bytes)
        return out
    })

let rsaPrivateKeyTarget = FuzzTarget(
    name: "rsa-private-key",
    summary: "RSA.PrivateKey from PEM and DER (PKCS#1, PKCS#8): consistency checks, exact DER re-serialization, rawPublic(rawPrivate(x)) = x",
    maxLength: 8192,
    run: { data in
        var input = FuzzInput(data)
        let mode = input.byte()
        let probe = input.lengthPrefixed(max: 600)
        let body = input.rest()
        let key: RSA.PrivateKey
        if mode & 1 == 0 {
            guard let k = try? RSA.PrivateKey(pemRepresentation: text(body)) else { return }
            guard let blocks = try? PEM.decodeAll(text(body)), blocks.count == 1,
                  blocks[0].label == "RSA PRIVATE KEY" || blocks[0].label == "PRIVATE KEY" else {
                FuzzCheck.fail("private PEM without exactly one RSA PRIVATE KEY or PRIVATE KEY block was accepted")
            }
            let der = blocks[0].label == "PRIVATE KEY" ? k.pkcs8DERRepresentation : k.pkcs1DERRepresentation
            FuzzCheck.require(der == blocks[0].der, "private PEM DER round trip")
            key = k
        } else if mode & 2 == 0 {
            guard let k = try? RSA.PrivateKey(pkcs1DERRepresentation: body) else { return }
            FuzzCheck.require(k.pkcs1DERRepresentation == body, "private DER is not re-serialized byte for byte")
            key = k
        } else {
            guard let k = try? RSA.PrivateKey(pkcs8DERRepresentation: body) else { return }
            FuzzCheck.require(k.pkcs8DERRepresentation == body, "PKCS#8 DER is not re-serialized byte for byte")
            key = k
        }
        FuzzStats.note("rsa private: accepted")
        guard let again = try? RSA.PrivateKey(pemRepresentation: key.pemRepresentation),
              again.pkcs1DERRepresentation == key.pkcs1DERRepresentation else { FuzzCheck.fail("private PEM round trip") }
        let pub = key.publicKey
        guard pub.modulus.bitWidth <= 2048, pub.publicExponent.bitWidth <= 32 else { return }
        let x = Array(probe.prefix(pub.byteCount))
        guard BigUInt(bigEndian: x) < pub.modulus else {
            FuzzCheck.require((try? key.rawPrivate(x)) == nil, "rawPrivate accepted an input not below n")
            return
        }
        guard let y = try? key.rawPrivate(x) else {
            // The key checks do not test primality: with composite "primes" the CRT self-check may
            // fail, as documented. With real primes it must not.
            let (p, q) = primes(of: key.pkcs1DERRepresentation)
            FuzzCheck.require(!(p.isProbablePrime(rounds: 16) && q.isProbablePrime(rounds: 16)), "rawPrivate refused an input below n")
            return
        }
        FuzzCheck.require((try? pub.rawPublic(y)) == (try? BigUInt(bigEndian: x).bigEndianBytes(count: pub.byteCount)),
                          "rawPublic(rawPrivate(x)) != x")
    },
    seeds: {
        var out: [[UInt8]] = []
        var w = SeedWriter()
        w.byte(0); w.lengthPrefixed([1, 2, 3, 4]); w.raw(Array(Fixtures.rsa1024PEM.utf8))
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(1); w.lengthPrefixed([9, 9]); w.raw(Fixtures.rsa1024.pkcs1DERRepresentation)
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(0); w.lengthPrefixed([0xFF]); w.raw(Array(Fixtures.rsa2048PEM.utf8))
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(3); w.lengthPrefixed([7]); w.raw(Fixtures.rsa1024.pkcs8DERRepresentation)
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(0); w.lengthPrefixed([5, 5]); w.raw(Array(Fixtures.rsa1024.pkcs8PEMRepresentation.utf8))
        out.append(w.bytes)
        return out
    })

/// p and q of a PKCS#1 RSAPrivateKey (DER already checked by the library): the 5th and 6th INTEGERs.
private func primes(of der: [UInt8]) -> (BigUInt, BigUInt) {
    var i = 0
    func length() -> Int {
        let first = Int(der[i]); i += 1
        guard first & 0x80 != 0 else { return first }
        var n = 0
        for _ in 0..<(first & 0x7F) { n = n << 8 | Int(der[i]); i += 1 }
        return n
    }
    i = 1
    _ = length()  // the SEQUENCE
    var ints: [BigUInt] = []
    while ints.count < 6 {
        i += 1  // INTEGER tag
        let n = length()
        ints.append(BigUInt(bigEndian: der[i..<(i + n)]))
        i += n
    }
    return (ints[4], ints[5])
}

let pemTarget = FuzzTarget(
    name: "pem",
    summary: "PEM.decodeAll on arbitrary text and strict Base64: decoded blocks re-encode and decode to the same blocks; accepted Base64 re-encodes to the same text",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let mode = input.byte()
        let body = input.rest()
        if mode & 1 == 1 {
            guard let d = try? PEM.base64Decode(body) else { return }
            FuzzCheck.require(PEM.base64Encode(d) == body, "strict Base64 accepted a non-canonical encoding")
            return
        }
        guard let blocks = try? PEM.decodeAll(text(body)) else { return }
        FuzzCheck.require(!blocks.isEmpty, "decodeAll returned no block without throwing")
        FuzzStats.note("pem: decoded")
        let rebuilt = blocks.map { PEM.encode(label: $0.label, der: $0.der) }.joined()
        guard let back = try? PEM.decodeAll(rebuilt), back.count == blocks.count else { FuzzCheck.fail("re-encoded PEM does not decode") }
        for (a, b) in zip(blocks, back) { FuzzCheck.require(a.label == b.label && a.der == b.der, "PEM round trip") }
    },
    seeds: {
        [[0] + Array(PEM.encode(label: "TEST", der: [1, 2, 3, 4, 5]).utf8),
         [0] + Array(("junk\r\n" + PEM.encode(label: "A B", der: Array(0..<100)) + PEM.encode(label: "C", der: [0xFF])).utf8),
         [1] + Array("QUJDRA==".utf8)]
    })

let keyTargets: [FuzzTarget] = [rsaPublicKeyTarget, rsaPrivateKeyTarget, pemTarget]
