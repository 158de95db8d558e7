import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

@Suite("X25519")
struct X25519Tests {
    @Test("RFC 7748 §5.2 iterated 1 000 000 times from k = u = 9 (release builds)",
          .enabled(if: runsHeavyCases, "debug build: run `swift test -c release --filter X25519`; CI also runs this case through `rampart vectors`"))
    func rfc7748IteratedMillion() throws {
        var k = [UInt8](repeating: 0, count: 32); k[0] = 9
        var u = k
        for _ in 0..<1_000_000 {
            let r = try Curve25519.scalarMultiply(scalar: k, point: u)
            u = k; k = r
        }
        #expect(Hex.encode(k) == "7c3911e0ab2586fd864497297e575e6f3bc601c0883c30df5f4dd2d24f665424")
    }

    @Test("RFC 7748 §5.2 test vectors 1 and 2")
    func rfc7748Vectors() throws {
        let cases = [
            ("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
             "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
             "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"),
            ("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
             "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
             "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"),
        ]
        for (k, u, out) in cases {
            let r = try Curve25519.scalarMultiply(scalar: hexBytes(k), point: hexBytes(u))
            #expect(Hex.encode(r) == out)
        }
    }

    @Test("RFC 7748 §5.2 iterated: 1 and 1000 iterations from k = u = 9")
    func rfc7748Iterated() throws {
        var k = [UInt8](repeating: 0, count: 32); k[0] = 9
        var u = k
        for i in 1...1000 {
            let r = try Curve25519.scalarMultiply(scalar: k, point: u)
            u = k; k = r
            if i == 1 { #expect(Hex.encode(k) == "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079") }
        }
        #expect(Hex.encode(k) == "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51")
    }

    @Test("RFC 7748 §6.1 Diffie-Hellman through the CryptoKit-shaped API")
    func rfc7748DiffieHellman() throws {
        let alice = try Curve25519.KeyAgreement.PrivateKey(
            rawRepresentation: hexBytes("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let bob = try Curve25519.KeyAgreement.PrivateKey(
            rawRepresentation: hexBytes("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
        #expect(Hex.encode(alice.publicKey.rawRepresentation) == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        #expect(Hex.encode(bob.publicKey.rawRepresentation) == "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        let s1 = try alice.sharedSecretFromKeyAgreement(with: bob.publicKey)
        let s2 = try bob.sharedSecretFromKeyAgreement(with: alice.publicKey)
        #expect(s1 == s2)
        #expect(s1.withUnsafeBytes { Hex.encode(Array($0)) } == "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
    }

    @Test("Small-order points give a typed error, wrong lengths too")
    func badPublicKeys() throws {
        let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0x42, count: 32))
        // u = 0, u = 1 and u = p − 1 have small order; so does u = p (= 0 mod p, non-canonical).
        let smallOrder = [
            "0000000000000000000000000000000000000000000000000000000000000000",
            "0100000000000000000000000000000000000000000000000000000000000000",
            "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
            "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        ]
        for u in smallOrder {
            let pk = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: hexBytes(u))
            #expect(throws: RampartError.invalidPublicKey) { try key.sharedSecretFromKeyAgreement(with: pk) }
        }
        #expect(throws: RampartError.invalidPublicKey) { try Curve25519.KeyAgreement.PublicKey(rawRepresentation: [UInt8](repeating: 1, count: 31)) }
        #expect(throws: RampartError.invalidKeyLength) { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 1, count: 33)) }
        #expect(throws: RampartError.invalidKeyLength) { try Curve25519.scalarMultiply(scalar: [UInt8](repeating: 1, count: 31), point: [UInt8]?.none) }
    }

    @Test("Key generation from an injected generator is deterministic and agrees")
    func injectedRNG() throws {
        var rng1 = SplitMix64(seed: 7), rng2 = SplitMix64(seed: 7), rng3 = SplitMix64(seed: 8)
        let a = Curve25519.KeyAgreement.PrivateKey(using: &rng1)
        let a2 = Curve25519.KeyAgreement.PrivateKey(using: &rng2)
        let b = Curve25519.KeyAgreement.PrivateKey(using: &rng3)
        #expect(a.rawRepresentation == a2.rawRepresentation)
        #expect(a.rawRepresentation != b.rawRepresentation)
        #expect(try a.sharedSecretFromKeyAgreement(with: b.publicKey) == b.sharedSecretFromKeyAgreement(with: a.publicKey))
    }
}
