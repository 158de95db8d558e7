// X25519 and NaCl box against OpenSSL (EVP X25519) and libsodium (crypto_scalarmult, crypto_box_*).

import Testing
import RampartReference
@_spi(Testing) import Rampart
import RampartTestSupport

private func requireOpenSSLX25519() -> OpenSSLX25519? {
    if let o = OpenSSLX25519.shared { return o }
    if Reference.required { Issue.record("RAMPART_REQUIRE_REFERENCE=1 but OpenSSL's X25519 was not found") }
    return nil
}

private func requireSodiumBox() -> SodiumBox? {
    if let s = SodiumBox.shared { return s }
    if Reference.required { Issue.record("RAMPART_REQUIRE_REFERENCE=1 but libsodium's crypto_box was not found") }
    return nil
}

@Test("X25519 public keys and shared secrets equal OpenSSL's and libsodium's on random keys",
      .enabled(if: openSSLPresentOrRequired || sodiumPresentOrRequired, Comment(rawValue: noOpenSSL + "; " + noSodium)))
func x25519MatchesReferences() throws {
    let o = requireOpenSSLX25519(), s = requireSodiumBox()
    guard o != nil || s != nil else { return }
    var rng = SplitMix64(seed: 25519)
    for i in 0..<200 {
        var a = rng.bytes(32), b = rng.bytes(32)
        // Include scalars with the bits clamping changes, and peers with the top bit set.
        if i % 5 == 0 { a[0] |= 7; a[31] |= 0xC0 }
        if i % 7 == 0 { b[31] |= 0x80 }
        let ka = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: a)
        let pubB = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: b).publicKey.rawRepresentation
        let mine = try ka.sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: pubB))
            .withUnsafeBytes { Array($0) }
        if let o {
            #expect(o.publicKey(privateKey: a) == ka.publicKey.rawRepresentation, "public key \(i)")
            #expect(o.sharedSecret(privateKey: a, peerPublicKey: pubB) == mine, "OpenSSL shared \(i)")
        }
        if let s {
            #expect(s.publicKey(secretKey: a) == ka.publicKey.rawRepresentation, "libsodium public key \(i)")
            #expect(s.scalarMult(scalar: a, point: pubB) == mine, "libsodium shared \(i)")
        }
        // Raw multiplication by arbitrary 32-byte strings (non-canonical and twist points included).
        let u = rng.bytes(32)
        if let s, let want = s.scalarMult(scalar: a, point: u) {
            #expect(try Curve25519.scalarMultiply(scalar: a, point: u) == want, "raw \(i)")
            // Both implementations: the kernel (Kernels.x25519, when active) and the portable ladder.
            #expect(try Curve25519.scalarMultiply(scalar: a, point: u, backend: .hardware) == want, "raw hardware \(i)")
            #expect(try Curve25519.scalarMultiply(scalar: a, point: u, backend: .portable) == want, "raw portable \(i)")
        }
    }
}

@Test("Box seal/open and beforenm equal libsodium's crypto_box across lengths",
      .enabled(if: sodiumPresentOrRequired, Comment(rawValue: noSodium)))
func boxMatchesLibsodium() throws {
    guard let s = requireSodiumBox() else { return }
    var rng = SplitMix64(seed: 0xB0C5)
    for n in Array(0...300) + [1023, 1024, 1025, 4095, 4096] {
        let skA = rng.bytes(32), skB = rng.bytes(32), nonce = rng.bytes(24), m = rng.bytes(n)
        let a = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: skA)
        let b = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: skB)
        let sealed = try Box.seal(m, nonce: nonce, to: b.publicKey, from: a)
        #expect(sealed == s.seal(m, nonce: nonce, publicKey: b.publicKey.rawRepresentation, secretKey: skA), "seal \(n)")
        #expect(s.open(sealed, nonce: nonce, publicKey: a.publicKey.rawRepresentation, secretKey: skB) == m, "libsodium opens \(n)")
        #expect(try Box.open(sealed, nonce: nonce, from: a.publicKey, to: b) == m, "open \(n)")
        if n % 50 == 0 {
            let k = try Box.SharedKey(publicKey: b.publicKey, privateKey: a).symmetricKey.withUnsafeBytes { Array($0) }
            #expect(k == s.beforeNM(publicKey: b.publicKey.rawRepresentation, secretKey: skA), "beforenm \(n)")
        }
    }
}

@Test("X25519 batches equal libsodium's crypto_scalarmult pair by pair, on every lane kernel",
      .enabled(if: sodiumPresentOrRequired, Comment(rawValue: noSodium)))
func x25519BatchMatchesLibsodium() throws {
    guard let s = requireSodiumBox() else { return }
    var rng = SplitMix64(seed: 0xBA7C4)
    for n in [1, 3, 7, 8, 9, 16, 21] {
        let scalars = (0..<n).map { _ in rng.bytes(32) }, points = (0..<n).map { _ in rng.bytes(32) }
        // crypto_scalarmult refuses an all-zero result (nil); random points give none.
        let want = zip(scalars, points).map { s.scalarMult(scalar: $0, point: $1) }
        var ways = [("default", try Curve25519.scalarMultiply(scalars: scalars, points: points))]
        for kernel in Curve25519.x25519LaneKernels {
            ways.append((kernel, try Curve25519.scalarMultiply(scalars: scalars, points: points, backend: .hardware, laneKernel: kernel)))
        }
        for (way, got) in ways {
            for i in 0..<n { #expect(got[i] == want[i], "n=\(n) pair \(i) \(way)") }
        }
    }
}
