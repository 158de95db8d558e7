import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

// The classic NaCl box test (libsodium test/default/box.c; keys of RFC 7748 §6.1).
private let aliceSK = hexBytes("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
private let bobSK = hexBytes("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
private let naclNonce = hexBytes("69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37")

@Suite("Box")
struct BoxTests {
    let alice = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: aliceSK)
    let bob = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bobSK)

    @Test("beforenm of the NaCl test keys")
    func beforenm() throws {
        let k1 = try Box.SharedKey(publicKey: bob.publicKey, privateKey: alice)
        let k2 = try Box.SharedKey(publicKey: alice.publicKey, privateKey: bob)
        #expect(k1.symmetricKey == k2.symmetricKey)
        #expect(k1.symmetricKey.withUnsafeBytes { Hex.encode(Array($0)) }
            == "1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389")
    }

    @Test("Round trips in every form; precomputed and one-shot agree")
    func roundTrips() throws {
        var rng = SplitMix64(seed: 99)
        for n in [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 131, 1000, 4097] {
            let m = randomBytes(count: n, using: &rng)
            let nonce = randomBytes(count: 24, using: &rng)
            let sealed = try Box.seal(m, nonce: nonce, to: bob.publicKey, from: alice)
            #expect(sealed.count == n + 16)
            #expect(try Box.open(sealed, nonce: nonce, from: alice.publicKey, to: bob) == m)
            let shared = try Box.SharedKey(publicKey: alice.publicKey, privateKey: bob)
            #expect(try shared.open(sealed, nonce: nonce) == m)
            let (ct, tag) = try Box.sealDetached(m, nonce: nonce, to: bob.publicKey, from: alice)
            #expect(tag + ct == sealed)
            #expect(try Box.openDetached(ciphertext: ct, tag: tag, nonce: nonce, from: alice.publicKey, to: bob) == m)
            var buf = m
            var t = [UInt8](repeating: 0, count: 16)
            try buf.withUnsafeMutableBytes { b in try t.withUnsafeMutableBytes { try shared.seal(inPlace: b, tag: $0, nonce: nonce) } }
            #expect(t + buf == sealed)
            try buf.withUnsafeMutableBytes { b in try t.withUnsafeBytes { try shared.open(inPlace: b, tag: $0, nonce: nonce) } }
            #expect(buf == m)
        }
    }

    @Test("A tampered box, a wrong key or a wrong nonce releases nothing")
    func tampering() throws {
        let m = Array("attack at dawn".utf8)
        let sealed = try Box.seal(m, nonce: naclNonce, to: bob.publicKey, from: alice)
        for i in 0..<sealed.count {
            var bad = sealed
            bad[i] ^= 0x01
            #expect(throws: RampartError.authenticationFailure) { try Box.open(bad, nonce: naclNonce, from: alice.publicKey, to: bob) }
        }
        var otherNonce = naclNonce; otherNonce[23] ^= 1
        #expect(throws: RampartError.authenticationFailure) { try Box.open(sealed, nonce: otherNonce, from: alice.publicKey, to: bob) }
        #expect(throws: RampartError.authenticationFailure) { try Box.open(sealed, nonce: naclNonce, from: bob.publicKey, to: bob) }
        #expect(throws: RampartError.invalidInputLength) { try Box.open([UInt8](repeating: 0, count: 15), nonce: naclNonce, from: alice.publicKey, to: bob) }
        #expect(throws: RampartError.invalidNonceLength) { try Box.seal(m, nonce: [UInt8](repeating: 0, count: 23), to: bob.publicKey, from: alice) }
    }

    @Test("A small-order peer key is refused before anything is sealed")
    func smallOrderPeer() throws {
        let zero = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: [UInt8](repeating: 0, count: 32))
        #expect(throws: RampartError.invalidPublicKey) { try Box.SharedKey(publicKey: zero, privateKey: alice) }
        #expect(throws: RampartError.invalidPublicKey) { try Box.seal([1, 2, 3], nonce: naclNonce, to: zero, from: alice) }
    }
}
