// Randomized differential tests of ChaCha20, ChaCha20-Poly1305 and Argon2id against libsodium:
// every length 0...1100 plus random ones up to 4 KiB, odd offsets (unaligned buffers), random AAD,
// counters up to the 32-bit limit, both backends; Argon2id at small parameters (p = 1, libsodium's
// only lane count) with random passwords, salts and output lengths.

import Testing
import RampartReference
@_spi(Testing) import Rampart
import RampartTestSupport

private let chachaSkip = Comment(rawValue: noSodium)

/// libsodium's ChaCha20/Argon2id functions, or nil (skip; a recorded failure with RAMPART_REQUIRE_REFERENCE=1).
private func requireSodiumChaCha() -> SodiumChaCha? {
    guard requireSodium() != nil else { return nil }
    if let s = SodiumChaCha.shared { return s }
    Issue.record("libsodium loaded but its chacha20/aead/pwhash symbols were not found")
    return nil
}

@Test(.enabled(if: sodiumPresentOrRequired, chachaSkip), arguments: backends)
func chacha20MatchesLibsodium(_ backend: Backend) throws {
    guard let s = requireSodiumChaCha() else { return }
    var rng = SplitMix64(seed: 8439 + (backend == .portable ? 1 : 0))
    for n in crossLengths {
        let key = rng.bytes(32), nonce = rng.bytes(12), msg = rng.bytes(n)
        // Counters stay clear of 2^32 (libsodium carries into the nonce word there; RFC 8439 stops).
        let ic = n % 3 == 0 ? UInt32.random(in: 0...UInt32.max - 80, using: &rng) : UInt32(n % 5)
        let want = s.chacha20Xor(msg, nonce: nonce, key: key, ic: ic)
        let offset = n % 7, outOffset = (n * 3) % 5
        var out = [UInt8](repeating: 0, count: n + outOffset + 8)
        withUnaligned(msg, offset: offset) { src in
            out.withUnsafeMutableBytes { o in
                try! ChaCha20.xor(src, into: UnsafeMutableRawBufferPointer(rebasing: o[outOffset..<(outOffset + n)]),
                                  key: SymmetricKey(data: key).pinned(to: backend), nonce: nonce, counter: ic)
            }
        }
        if Array(out[outOffset..<(outOffset + n)]) != want {
            Issue.record("ChaCha20 \(backend) length \(n) counter \(ic) differs from crypto_stream_chacha20_ietf_xor_ic")
            return
        }
    }
}

@Test(.enabled(if: sodiumPresentOrRequired, chachaSkip), arguments: backends)
func chachaPolyMatchesLibsodium(_ backend: Backend) throws {
    guard let s = requireSodiumChaCha() else { return }
    var rng = SplitMix64(seed: 2808 + (backend == .portable ? 1 : 0))
    for n in crossLengths {
        let key = rng.bytes(32), nonce = rng.bytes(12), msg = rng.bytes(n)
        let aad = rng.bytes(Int.random(in: 0...(n % 4 == 0 ? 300 : 40), using: &rng))
        let k = SymmetricKey(data: key).pinned(to: backend)
        let want = s.aeadEncrypt(msg, aad: aad, nonce: nonce, key: key)
        // Seal from an unaligned buffer into an unaligned buffer.
        let off = n % 9
        var out = [UInt8](repeating: 0, count: n + 16 + off + 3)
        withUnaligned(msg, offset: (n * 5) % 11) { src in
            aad.withUnsafeBytes { a in nonce.withUnsafeBytes { nb in out.withUnsafeMutableBytes { o in
                try! ChaChaPoly.seal(src, into: UnsafeMutableRawBufferPointer(rebasing: o[off..<(off + n)]),
                                     tag: UnsafeMutableRawBufferPointer(rebasing: o[(off + n)..<(off + n + 16)]),
                                     using: k, nonce: nb, authenticating: a)
            } } }
        }
        if Array(out[off..<(off + n + 16)]) != want {
            Issue.record("ChaCha20-Poly1305 \(backend) length \(n) aad \(aad.count) differs from crypto_aead_chacha20poly1305_ietf_encrypt")
            return
        }
        // Rampart opens libsodium's box; libsodium opens Rampart's.
        let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: want[0..<n], tag: want[n...])
        guard try ChaChaPoly.open(box, using: k, authenticating: aad) == msg,
              s.aeadDecrypt(box.ciphertext + box.tag, aad: aad, nonce: nonce, key: key) == msg else {
            Issue.record("ChaCha20-Poly1305 \(backend) length \(n): open disagrees with libsodium")
            return
        }
        // Into a separate, unaligned buffer (with AVX2 and two or more groups: the stitched open).
        var opened = [UInt8](repeating: 0x5A, count: n + 5)
        want.withUnsafeBytes { w in opened.withUnsafeMutableBytes { o in nonce.withUnsafeBytes { nb in aad.withUnsafeBytes { a in
            try! ChaChaPoly.open(UnsafeRawBufferPointer(rebasing: w[0..<n]), into: UnsafeMutableRawBufferPointer(rebasing: o[5...]),
                                 tag: UnsafeRawBufferPointer(rebasing: w[n...]), using: k, nonce: nb, authenticating: a)
        } } } }
        guard Array(opened[5...]) == msg else {
            Issue.record("ChaCha20-Poly1305 \(backend) length \(n): open(into:) of libsodium's box differs")
            return
        }
        // A corrupted box is refused by both.
        if n > 0 {
            var bad = want
            bad[Int.random(in: 0..<bad.count, using: &rng)] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
            let badBox = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: bad[0..<n], tag: bad[n...])
            #expect((try? ChaChaPoly.open(badBox, using: k, authenticating: aad)) == nil)
            #expect(s.aeadDecrypt(bad, aad: aad, nonce: nonce, key: key) == nil)
        }
    }
}

@Test(.enabled(if: sodiumPresentOrRequired, chachaSkip), arguments: backends)
func argon2idMatchesLibsodium(_ backend: Backend) throws {
    guard let s = requireSodiumChaCha() else { return }
    var rng = SplitMix64(seed: 9106 + (backend == .portable ? 1 : 0))
    for _ in 0..<40 {
        let t = Int.random(in: 1...3, using: &rng), m = Int.random(in: 8...256, using: &rng)
        let length = Int.random(in: 16...64, using: &rng)
        let pw = rng.bytes(Int.random(in: 0...48, using: &rng)), salt = rng.bytes(16)
        guard let want = s.argon2id(password: pw, salt: salt, iterations: t, memoryKiB: m, length: length) else {
            Issue.record("crypto_pwhash refused t=\(t) m=\(m) len=\(length)")
            return
        }
        let got = try Argon2id.deriveKey(password: pw, salt: salt, iterations: t, memoryKiB: m, parallelism: 1,
                                         outputByteCount: length, backend: backend).withUnsafeBytes { Array($0) }
        if got != want {
            Issue.record("Argon2id \(backend) t=\(t) m=\(m) len=\(length) pw \(pw.count) bytes differs from crypto_pwhash")
            return
        }
    }
}
