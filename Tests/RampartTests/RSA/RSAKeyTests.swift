// RSA keys: Telegram's published keys and fingerprints, strict DER/PEM rejection, raw operations,
// key generation and private-key PEM round trips.

import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

/// Telegram's production key (Docs/MTProto.md §3.6), PKCS#1 PEM.
private let telegramProductionPEM = """
-----BEGIN RSA PUBLIC KEY-----
MIIBCgKCAQEA6LszBcC1LGzyr992NzE0ieY+BSaOW622Aa9Bd4ZHLl+TuFQ4lo4g
5nKaMBwK/BIb9xUfg0Q29/2mgIR6Zr9krM7HjuIcCzFvDtr+L0GQjae9H0pRB2OO
62cECs5HKhT5DZ98K33vmWiLowc621dQuwKWSQKjWf50XYFw42h21P2KXUGyp2y/
+aEyZ+uVgLLQbRA1dEjSDZ2iGRy12Mk5gpYc397aYp438fsJoHIgJ2lgMv5h7WY9
t6N/byY9Nw9p21Og3AoXSL2q/2IJ1WRUhebgAdGVMlV1fkuOQoEzR7EdpqtQD9Cs
5+bfo3Nhmcyvk5ftB0WkJ9z6bNZ7yxrP8wIDAQAB
-----END RSA PUBLIC KEY-----
"""

/// Telegram's published keys (Vectors/mtproto/telegram_public_keys.pem; provenance in Vectors/README.md).
private let telegramKeysPath = projectRoot + "/Vectors/mtproto/telegram_public_keys.pem"

private func readText(_ path: String) -> String? {
    guard let f = fopen(path, "r") else { return nil }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n <= 0 { break }
        bytes += buf[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct RSAPublicKeyTests {
    @Test func telegramProductionKeyAndFingerprint() throws {
        let key = try RSA.PublicKey(pemRepresentation: telegramProductionPEM)
        #expect(key.keySizeInBits == 2048)
        #expect(key.publicExponent == BigUInt(65537))
        #expect(key.modulus.hexString.hasPrefix("e8bb3305c0b52c6c") && key.modulus.hexString.hasSuffix("fa6cd67bcb1acff3"))
        #expect(key.mtprotoFingerprint == 0xD09D1D85DE64FD85)
        // Re-encoding is byte-identical, in both formats.
        #expect(key.pkcs1PEMRepresentation == telegramProductionPEM + "\n")
        #expect(try RSA.PublicKey(pemRepresentation: key.pemRepresentation) == key)
        #expect(try RSA.PublicKey(derRepresentation: key.derRepresentation) == key)
    }

    @Test func telegramKeysParse() throws {
        let keys = try RSA.PublicKey.all(pemRepresentation: try #require(readText(telegramKeysPath)))
        #expect(keys.count == 2)
        #expect(keys.map(\.mtprotoFingerprint) == [0xB25898DF208D2603, 0xD09D1D85DE64FD85])
        #expect(keys[0].modulus.hexString.hasPrefix("c8c11d635691fac0") && keys[0].modulus.hexString.hasSuffix("3cfd2a433a1be7f5"))
    }

    @Test func rawPublicRange() throws {
        let key = try RSA.PublicKey(pemRepresentation: telegramProductionPEM)
        #expect(try key.rawPublic([UInt8]()) == [UInt8](repeating: 0, count: 256))
        #expect(try key.rawPublic([1]) == [UInt8](repeating: 0, count: 255) + [1])
        #expect(throws: RampartError.invalidRSAKey) { try key.rawPublic(key.modulus.bigEndianBytes()) }
        #expect(throws: RampartError.invalidRSAKey) { try key.rawPublic([UInt8](repeating: 0, count: 257)) }
        #expect(throws: RampartError.invalidRSAKey) { try key.rawPublic([UInt8](repeating: 0xFF, count: 256)) }
    }

    @Test func malformedDERIsRejected() throws {
        let good = try RSA.PublicKey(pemRepresentation: telegramProductionPEM).pkcs1DERRepresentation
        func reject(_ der: [UInt8], _ fault: DERFault, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(throws: RampartError.invalidDER(fault), sourceLocation: sourceLocation) { try RSA.PublicKey(pkcs1DERRepresentation: der) }
        }
        // Truncated anywhere.
        for cut in [0, 1, 2, 3, 4, 10, 100, good.count - 1] { reject(Array(good[..<cut]), .truncated) }
        // Wrong outer tag, wrong integer tag.
        var d = good; d[0] = 0x31; reject(d, .unexpectedTag)
        d = good; d[4] = 0x03; reject(d, .unexpectedTag)
        // Trailing bytes after the sequence, and inside it.
        reject(good + [0], .trailingData)
        let n = BigUInt(65537) * BigUInt(1) << 600 | BigUInt(1)
        let e = BigUInt(3)
        reject(DERWriter.sequence([DERWriter.integer(n), DERWriter.integer(e), DERWriter.integer(e)]), .trailingData)
        // Non-minimal lengths: long form for a short length, a leading zero length byte, indefinite.
        let ints = DERWriter.integer(n) + DERWriter.integer(e)
        reject([0x30, 0x81, UInt8(ints.count)] + ints, ints.count < 128 ? .nonMinimalLength : .nonMinimalLength)
        reject([0x30, 0x83, 0x00, UInt8(ints.count >> 8), UInt8(ints.count & 0xFF)] + ints, .nonMinimalLength)
        reject([0x30, 0x80] + ints + [0, 0], .nonMinimalLength)
        reject([0x30, 0x85, 1, 0, 0, 0, 0] + ints, .lengthTooLarge)
        reject([0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF] + ints, .truncated)
        // Integers: redundant leading zero, negative modulus, zero modulus.
        let nb = n.bigEndianBytes()
        reject(DERWriter.sequence([DERWriter.element(0x02, [0] + nb), DERWriter.integer(e)]), .nonMinimalInteger)
        reject(DERWriter.sequence([DERWriter.element(0x02, [0xFF, 0x80] + nb), DERWriter.integer(e)]), .nonMinimalInteger)
        reject(DERWriter.sequence([DERWriter.element(0x02, [0x80] + nb), DERWriter.integer(e)]), .negativeInteger)
        reject(DERWriter.sequence([DERWriter.element(0x02, [0x00]), DERWriter.integer(e)]), .zeroInteger)
        reject(DERWriter.sequence([DERWriter.element(0x02, []), DERWriter.integer(e)]), .truncated)
        // Numbers that parse but make no key: even modulus, e = 1, e ≥ n, tiny modulus.
        for (nn, ee) in [(n + BigUInt(1), e), (n, BigUInt(1)), (n, n), (BigUInt(0xFFFF_FFFF_FFFF_FFC5), e)] {
            #expect(throws: RampartError.invalidRSAKey) {
                try RSA.PublicKey(pkcs1DERRepresentation: DERWriter.sequence([DERWriter.integer(nn), DERWriter.integer(ee)]))
            }
        }
    }

    @Test func malformedSPKIAndPEMAreRejected() throws {
        let key = try RSA.PublicKey(pemRepresentation: telegramProductionPEM)
        let spki = key.derRepresentation
        var d = spki; d[8] ^= 1  // OID byte
        #expect(throws: RampartError.invalidDER(.unsupported)) { try RSA.PublicKey(derRepresentation: d) }
        d = spki; d[d.count - key.pkcs1DERRepresentation.count - 1] = 1  // BIT STRING unused-bits byte
        #expect(throws: RampartError.invalidDER(.unsupported)) { try RSA.PublicKey(derRepresentation: d) }
        #expect(throws: RampartError.invalidDER(.trailingData)) { try RSA.PublicKey(derRepresentation: spki + [0]) }
        // PKCS#1 DER fed to the SPKI parser: the first inner element is an INTEGER, not a SEQUENCE.
        #expect(throws: RampartError.invalidDER(.unexpectedTag)) { try RSA.PublicKey(derRepresentation: key.pkcs1DERRepresentation) }

        let lines = telegramProductionPEM.split(separator: "\n").map(String.init)
        func pem(_ l: [String]) -> String { l.joined(separator: "\n") }
        let bad: [String] = [
            "",
            pem(Array(lines.dropLast())),                                      // no END
            pem(Array(lines.dropFirst())),                                     // no BEGIN
            pem([lines[0]] + lines[1...5] + ["-----END RSA PRIVATE KEY-----"]), // mismatched label
            pem([lines[0], lines[1] + "!"] + lines[2...]),                     // bad character
            pem([lines[0], String(lines[1].dropLast())] + lines[2...]),        // length not a multiple of 4
            pem([lines[0], " " + lines[1]] + lines[2...]),                     // whitespace
            pem([lines[0]] + lines[1...5] + ["5+bfo3Nhmcyvk5ftB0WkJ9z6bNZ7yxrP8wIDAQAB=="] + [lines[7]]), // padding mid-way
            pem([lines[0]] + lines[1...5] + ["5+bfo3Nhmcyvk5ftB0WkJ9z6bNZ7yxrP8wIDAQAC"] + [lines[7]]),   // changes e? (valid b64)
            telegramProductionPEM + telegramProductionPEM,                    // two blocks where one is expected
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        ]
        for (i, text) in bad.enumerated() {
            if i == 8 {
                // Valid Base64 of a different exponent: parses, but not to the same key.
                #expect((try? RSA.PublicKey(pemRepresentation: text)) != key)
                continue
            }
            #expect(throws: RampartError.self, "case \(i)") { try RSA.PublicKey(pemRepresentation: text) }
        }
        // Non-canonical Base64 (non-zero pad bits): "AB==" decodes like "AA==" in lax decoders.
        #expect(throws: RampartError.invalidDER(.invalidPEM)) { try PEM.base64Decode(Array("AB==".utf8)) }
        #expect(try PEM.base64Decode(Array("AA==".utf8)) == [0])
        // CRLF line endings are accepted.
        let crlf = telegramProductionPEM.split(separator: "\n").joined(separator: "\r\n") + "\r\n"
        #expect(try RSA.PublicKey(pemRepresentation: crlf) == key)
    }

    @Test func base64RoundTrip() throws {
        var rng = SplitMix64(seed: 11)
        for n in 0..<70 {
            let d = randomBytes(count: n, using: &rng)
            if n == 0 { continue }
            #expect(try PEM.base64Decode(PEM.base64Encode(d)) == d)
        }
    }
}

@Suite struct RSAPrivateKeyTests {
    @Test func generateSignAndRoundTrip() throws {
        var rng = SplitMix64(seed: 12)
        let key = try RSA.PrivateKey.generate(bits: 1024, using: &rng)
        #expect(key.publicKey.keySizeInBits == 1024)
        #expect(key.publicKey.publicExponent == BigUInt(65537))
        for _ in 0..<5 {
            var m = randomBytes(count: 128, using: &rng)
            m[0] &= 0x7F
            let c = try key.publicKey.rawPublic(m)
            #expect(try key.rawPrivate(c) == m)
            #expect(try key.publicKey.rawPublic(key.rawPrivate(m)) == m)
        }
        #expect(throws: RampartError.invalidRSAKey) { try key.rawPrivate(key.publicKey.modulus.bigEndianBytes()) }
        // PEM round trip.
        let pem = key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN RSA PRIVATE KEY-----\n"))
        let back = try RSA.PrivateKey(pemRepresentation: pem)
        #expect(back.publicKey == key.publicKey)
        #expect(back.pkcs1DERRepresentation == key.pkcs1DERRepresentation)
        // A corrupted CRT value is refused.
        var der = key.pkcs1DERRepresentation
        der[der.count - 1] ^= 1
        #expect(throws: RampartError.invalidRSAKey) { try RSA.PrivateKey(pkcs1DERRepresentation: der) }
        #expect(throws: RampartError.invalidDER(.trailingData)) { try RSA.PrivateKey(pkcs1DERRepresentation: key.pkcs1DERRepresentation + [0]) }
        #expect(throws: RampartError.invalidDER(.invalidPEM)) { try RSA.PrivateKey(pemRepresentation: key.publicKey.pkcs1PEMRepresentation) }
        #expect(throws: RampartError.invalidParameter("bits")) { try RSA.PrivateKey.generate(bits: 1000, using: &rng) }
    }
}
