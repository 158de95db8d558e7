// Randomized differential tests of AES (IGE, CBC, CTR, GCM) against OpenSSL and libsodium, through
// both Rampart paths: every length 0...4 KiB for the block modes, odd lengths for CTR/GCM, unaligned
// buffers, IVs carried across calls and CTR streams split at random points.

import Testing
import RampartReference
@_spi(Testing) import Rampart
import RampartTestSupport

private let aesBackends: [Backend] = [.hardware, .portable]

/// Backends pinned to each AES and GHASH implementation this processor runs (the selected ones run on
/// `.hardware`, the portable code on `.portable` too): AES-NI with and without VAES, every GHASH tier.
private let pinnedAESFamily: [Backend] = ["aes", "ghash"].flatMap { p in Kernels.implementations(of: p).map { Kernels.pinned(p, to: $0)! } }
/// Backends pinned to each AES implementation (AES-NI with and without VAES for CTR and CBC).
private let pinnedAES: [Backend] = Kernels.implementations(of: "aes").map { Kernels.pinned("aes", to: $0)! }

private func requireOpenSSLAES() -> OpenSSLAES? {
    if let o = OpenSSLAES.shared { return o }
    if Reference.required { Issue.record("RAMPART_REQUIRE_REFERENCE=1 but OpenSSL's AES functions were not found") }
    return nil
}

private func requireSodiumGCM() -> SodiumAES256GCM? {
    if let s = SodiumAES256GCM.shared { return s }
    if Reference.required { Issue.record("RAMPART_REQUIRE_REFERENCE=1 but libsodium's AES-256-GCM was not found (or the CPU lacks AES-NI)") }
    return nil
}

private let openSSLAESPresentOrRequired = OpenSSLAES.shared != nil || Reference.required
private let sodiumGCMPresentOrRequired = SodiumAES256GCM.shared != nil || Reference.required
private let noSodiumGCM = "libsodium AES-256-GCM not available (apt-get install libsodium23; needs AES-NI): cross-check skipped"

/// Byte counts 0...4096 for the stream modes: every length up to 300, then strides and random odd lengths.
private let aesStreamLengths: [Int] = {
    var g = SplitMix64(seed: 0xAE5)
    return Array(0...300) + Array(stride(from: 301, through: 1100, by: 7)) + (0..<40).map { _ in Int.random(in: 1101...4096, using: &g) } + [4095, 4096]
}()

/// Block counts 0...256 (0 to 4 KiB) for IGE and CBC.
private let aesBlockCounts: [Int] = Array(0...64) + Array(stride(from: 65, through: 256, by: 5)) + [255, 256]

private func randomKeyLength(_ g: inout SplitMix64) -> Int { [16, 24, 32, 32][Int.random(in: 0...3, using: &g)] }

/// Runs `body` on a copy of `message` placed at byte `offset` of a larger buffer (in place, unaligned)
/// and returns the bytes it left there.
private func inPlaceUnaligned(_ message: [UInt8], offset: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows -> [UInt8] {
    var storage = [UInt8](repeating: 0xEE, count: message.count + offset + 8)
    storage.replaceSubrange(offset..<(offset + message.count), with: message)
    try storage.withUnsafeMutableBytes { try body(UnsafeMutableRawBufferPointer(rebasing: $0[offset..<(offset + message.count)])) }
    #expect(storage[..<offset].allSatisfy { $0 == 0xEE } && storage[(offset + message.count)...].allSatisfy { $0 == 0xEE },
            "bytes outside the buffer were touched")
    return Array(storage[offset..<(offset + message.count)])
}

@Test(.enabled(if: openSSLAESPresentOrRequired, Comment(rawValue: noOpenSSL)), arguments: aesBackends + pinnedAES)
func igeMatchesOpenSSL(_ backend: Backend) throws {
    guard let o = requireOpenSSLAES() else { return }
    var g = SplitMix64(seed: 1)
    for blocks in aesBlockCounts {
        let key = g.bytes(randomKeyLength(&g)), iv = g.bytes(32), msg = g.bytes(16 * blocks)
        let cipher = try AES.Cipher(key: key, backend: backend)
        let wantC = try o.ige(key: key, iv: iv, msg, encrypt: true)
        let wantP = try o.ige(key: key, iv: iv, msg, encrypt: false)
        // In place at an odd offset, the IV carried across two calls split at a random block.
        for (encrypt, want) in [(true, wantC), (false, wantP)] {
            var v = iv
            let cut = 16 * Int.random(in: 0...blocks, using: &g)
            let got = try inPlaceUnaligned(msg, offset: blocks % 7) { b in
                try v.withUnsafeMutableBytes { vb in
                    for part in [UnsafeMutableRawBufferPointer(rebasing: b[..<cut]), UnsafeMutableRawBufferPointer(rebasing: b[cut...])] {
                        if encrypt { try AES.IGE.encrypt(part, using: cipher, iv: vb) } else { try AES.IGE.decrypt(part, using: cipher, iv: vb) }
                    }
                }
            }
            if got != want {
                Issue.record("IGE \(encrypt ? "encrypt" : "decrypt") \(backend) key \(key.count) blocks \(blocks) cut \(cut) differs from AES_ige_encrypt")
                return
            }
        }
        #expect(try AES.IGE.decrypt(wantC, using: cipher, iv: iv) == msg)
    }
}

@Test(.enabled(if: openSSLAESPresentOrRequired, Comment(rawValue: noOpenSSL)), arguments: aesBackends + pinnedAES)
func cbcMatchesOpenSSL(_ backend: Backend) throws {
    guard let o = requireOpenSSLAES() else { return }
    var g = SplitMix64(seed: 2)
    for blocks in aesBlockCounts {
        let key = g.bytes(randomKeyLength(&g)), iv = g.bytes(16), msg = g.bytes(16 * blocks)
        let cipher = try AES.Cipher(key: key, backend: backend)
        let wantC = try o.crypt(mode: "cbc", key: key, iv: iv, msg, encrypt: true)
        let wantP = try o.crypt(mode: "cbc", key: key, iv: iv, msg, encrypt: false)
        for (encrypt, want) in [(true, wantC), (false, wantP)] {
            var v = iv
            let cut = 16 * Int.random(in: 0...blocks, using: &g)
            let got = try inPlaceUnaligned(msg, offset: (blocks + 3) % 8) { b in
                try v.withUnsafeMutableBytes { vb in
                    for part in [UnsafeMutableRawBufferPointer(rebasing: b[..<cut]), UnsafeMutableRawBufferPointer(rebasing: b[cut...])] {
                        if encrypt { try AES.CBC.encrypt(part, using: cipher, iv: vb) } else { try AES.CBC.decrypt(part, using: cipher, iv: vb) }
                    }
                }
            }
            if got != want {
                Issue.record("CBC \(encrypt ? "encrypt" : "decrypt") \(backend) key \(key.count) blocks \(blocks) differs from EVP")
                return
            }
        }
        // PKCS#7: any message length; OpenSSL is run without padding on our padded plaintext.
        let n = 16 * blocks + Int.random(in: 0...15, using: &g) - (blocks == 0 ? 0 : Int.random(in: 0...15, using: &g))
        let m = g.bytes(max(0, n))
        let padded = m + [UInt8](repeating: UInt8(16 - m.count % 16), count: 16 - m.count % 16)
        let ct = try AES.CBC.encrypt(m, using: cipher, iv: iv)
        #expect(ct == (try o.crypt(mode: "cbc", key: key, iv: iv, padded, encrypt: true)), "PKCS#7 length \(m.count)")
        #expect(try AES.CBC.decrypt(ct, using: cipher, iv: iv) == m)
    }
}

@Test(.enabled(if: openSSLAESPresentOrRequired, Comment(rawValue: noOpenSSL)), arguments: aesBackends + pinnedAES)
func ctrMatchesOpenSSL(_ backend: Backend) throws {
    guard let o = requireOpenSSLAES() else { return }
    var g = SplitMix64(seed: 3)
    for n in aesStreamLengths {
        let key = g.bytes(randomKeyLength(&g)), msg = g.bytes(n)
        var counter = g.bytes(16)
        // Every fourth case starts near a carry across 64 bits or near the 2^128 wrap.
        if n % 4 == 1 { for i in 8..<16 { counter[i] = 0xff } }
        if n % 4 == 2 { for i in 0..<16 { counter[i] = 0xff } }
        let want = try o.crypt(mode: "ctr", key: key, iv: counter, msg, encrypt: true)
        let stream = try AES.CTR(cipher: try AES.Cipher(key: key, backend: backend), counter: counter)
        var cuts = (0..<Int.random(in: 0...4, using: &g)).map { _ in Int.random(in: 0...n, using: &g) }.sorted()
        cuts.append(n)
        let got = inPlaceUnaligned(msg, offset: n % 8) { b in
            var start = 0
            for c in cuts {
                stream.xor(UnsafeMutableRawBufferPointer(rebasing: b[start..<c]))
                start = c
            }
        }
        if got != want {
            Issue.record("CTR \(backend) key \(key.count) length \(n) cuts \(cuts) counter \(Hex.encode(counter)) differs from EVP")
            return
        }
    }
}

/// Also through a cipher made with `init(gcmKey:)`, whose GHASH table is computed once at key setup
/// (`prepared`) instead of in every call, and with every AES and GHASH implementation this processor
/// runs (the VAES tiers' sixteen-block loops and the 128-bit ones).
@Test(.enabled(if: openSSLAESPresentOrRequired, Comment(rawValue: noOpenSSL)), arguments: aesBackends + pinnedAESFamily, [false, true])
func gcmMatchesOpenSSL(_ backend: Backend, prepared: Bool) throws {
    guard let o = requireOpenSSLAES() else { return }
    var g = SplitMix64(seed: 4)
    for n in aesStreamLengths {
        let key = g.bytes(randomKeyLength(&g)), msg = g.bytes(n)
        let nonceLength = n % 3 == 0 ? Int.random(in: 1...80, using: &g) : 12
        let nonce = g.bytes(nonceLength), aad = g.bytes(Int.random(in: 0...(n % 5 == 0 ? 300 : 40), using: &g))
        let (wantC, wantT) = try o.gcmSeal(key: key, nonce: nonce, aad: aad, msg)
        let cipher = prepared ? try AES.Cipher(gcmKey: SymmetricKey(data: key).pinned(to: backend))
                              : try AES.Cipher(key: SymmetricKey(data: key), backend: backend)
        var tag = [UInt8](repeating: 0, count: 16)
        let got = try inPlaceUnaligned(msg, offset: (n + 5) % 8) { b in
            try nonce.withUnsafeBytes { nb in try aad.withUnsafeBytes { a in try tag.withUnsafeMutableBytes { t in
                try AES.GCM.seal(b, tag: t, using: cipher, nonce: nb, authenticating: a)
            } } }
        }
        if got != wantC || tag != wantT {
            Issue.record("GCM seal \(backend) prepared \(prepared) key \(key.count) length \(n) nonce \(nonceLength) aad \(aad.count) differs from EVP")
            return
        }
        let box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: nonce), ciphertext: wantC, tag: wantT)
        #expect(try AES.GCM.open(box, using: cipher, authenticating: aad) == msg)
        // A flipped bit anywhere is rejected by both.
        var bad = wantC + wantT
        if !bad.isEmpty {
            bad[Int.random(in: 0..<bad.count, using: &g)] ^= 1 << UInt8.random(in: 0...7, using: &g)
            let badBox = try AES.GCM.SealedBox(nonce: box.nonce, ciphertext: bad.prefix(n), tag: bad.suffix(16))
            #expect(throws: RampartError.authenticationFailure) { try AES.GCM.open(badBox, using: cipher, authenticating: aad) }
            #expect(try o.gcmOpen(key: key, nonce: nonce, aad: aad, Array(bad.prefix(n)), tag: Array(bad.suffix(16))) == nil)
        }
    }
}

@Test(.enabled(if: sodiumGCMPresentOrRequired, Comment(rawValue: noSodiumGCM)), arguments: aesBackends)
func gcmMatchesLibsodium(_ backend: Backend) throws {
    guard let s = requireSodiumGCM() else { return }
    var g = SplitMix64(seed: 5)
    for n in aesStreamLengths where n % 2 == 0 || n > 300 {
        let key = g.bytes(32), nonce = g.bytes(12), msg = g.bytes(n), aad = g.bytes(Int.random(in: 0...64, using: &g))
        let want = try s.seal(key: key, nonce: nonce, aad: aad, msg)
        let box = try AES.GCM.seal(msg, using: try AES.Cipher(key: key, backend: backend), nonce: try AES.GCM.Nonce(data: nonce),
                                   authenticating: aad)
        if box.ciphertext + box.tag != want {
            Issue.record("GCM \(backend) length \(n) aad \(aad.count) differs from crypto_aead_aes256gcm_encrypt")
            return
        }
        #expect(try s.open(key: key, nonce: nonce, aad: aad, want) == msg)
    }
}
