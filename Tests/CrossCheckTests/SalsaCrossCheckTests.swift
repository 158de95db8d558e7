// Randomized differential tests of Salsa20, XSalsa20, HSalsa20, Poly1305 and SecretBox against
// libsodium: sizes 0...4 KiB (every length up to 1100), unaligned buffers, streams split across calls,
// seeking, both backends.

import Testing
import RampartReference
@_spi(Testing) import Rampart
import RampartTestSupport

private let salsaSkip = Comment(rawValue: noSodium)

/// libsodium's Salsa20 functions, or nil (skip; a recorded failure with RAMPART_REQUIRE_REFERENCE=1).
private func requireSodiumSalsa() -> SodiumSalsa? {
    guard requireSodium() != nil else { return nil }
    if let s = SodiumSalsa.shared { return s }
    Issue.record("libsodium loaded but its crypto_stream/secretbox/onetimeauth symbols were not found")
    return nil
}

/// XORs `msg` through `stream`, split at `cuts`; the input sits at byte `offset` of a larger buffer
/// and the output at byte `offset + 3` of another, so kernels see unaligned buffers.
private func xorSplit<S>(_ stream: inout S, _ msg: [UInt8], offset: Int, cuts: [Int],
                         _ xor: (inout S, UnsafeRawBufferPointer, UnsafeMutableRawBufferPointer) -> Void) -> [UInt8] {
    var storage = [UInt8](repeating: 0xEE, count: msg.count + offset + 8)
    storage.replaceSubrange(offset..<(offset + msg.count), with: msg)
    let o = offset + 3
    var out = [UInt8](repeating: 0, count: msg.count + o + 8)
    storage.withUnsafeBytes { s in
        out.withUnsafeMutableBytes { d in
            var start = 0
            for c in cuts + [msg.count] {
                xor(&stream, UnsafeRawBufferPointer(rebasing: s[(offset + start)..<(offset + c)]),
                    UnsafeMutableRawBufferPointer(rebasing: d[(o + start)..<(o + c)]))
                start = c
            }
        }
    }
    return Array(out[o..<(o + msg.count)])
}

private func randomCuts(_ n: Int, _ rng: inout SplitMix64) -> [Int] {
    guard n > 1 else { return [] }
    return (0..<Int.random(in: 0...4, using: &rng)).map { _ in Int.random(in: 0...n, using: &rng) }.sorted()
}

@Test(.enabled(if: sodiumPresentOrRequired, salsaSkip), arguments: backends)
func xsalsa20MatchesLibsodium(_ backend: Backend) throws {
    guard let s = requireSodiumSalsa() else { return }
    var rng = SplitMix64(seed: 2020 + (backend == .portable ? 1 : 0))
    for n in crossLengths {
        let key = rng.bytes(32), nonce = rng.bytes(24), msg = rng.bytes(n)
        let want = s.xsalsa20Xor(msg, nonce: nonce, key: key)
        var x = try XSalsa20(key: SymmetricKey(data: key).pinned(to: backend), nonce: nonce)
        let got = xorSplit(&x, msg, offset: n % 7, cuts: randomCuts(n, &rng)) { st, i, o in try! st.xor(i, into: o) }
        if got != want {
            Issue.record("XSalsa20 \(backend) length \(n) differs from crypto_stream_xsalsa20_xor")
            return
        }
    }
}

@Test(.enabled(if: sodiumPresentOrRequired, salsaSkip), arguments: backends)
func salsa20MatchesLibsodiumWithCounters(_ backend: Backend) throws {
    guard let s = requireSodiumSalsa() else { return }
    var rng = SplitMix64(seed: 2021 + (backend == .portable ? 1 : 0))
    // Counters near the 32-bit boundary exercise the carry into word 9 in every lane.
    let counters: [UInt64] = [0, 1, 7, 0xFFFF_FFFF, 0xFFFF_FFFE, 0xFFFF_FFF9, 0x1_0000_0000, UInt64.max - 3]
    for (i, n) in crossLengths.enumerated() where i % 3 == 0 {
        let key = rng.bytes(32), nonce = rng.bytes(8), msg = rng.bytes(n)
        let ic = counters[i % counters.count]
        let want = s.salsa20Xor(msg, nonce: nonce, key: key, ic: ic)
        var x = try Salsa20(key: SymmetricKey(data: key).pinned(to: backend), nonce: nonce, counter: ic)
        let got = xorSplit(&x, msg, offset: (n * 3) % 5, cuts: randomCuts(n, &rng)) { st, i, o in try! st.xor(i, into: o) }
        if got != want {
            Issue.record("Salsa20 \(backend) length \(n) counter \(ic) differs from crypto_stream_salsa20_xor_ic")
            return
        }
    }
}

@Test(.enabled(if: sodiumPresentOrRequired, salsaSkip), arguments: backends)
func xsalsa20SeekMatchesLibsodium(_ backend: Backend) throws {
    guard let s = requireSodiumSalsa() else { return }
    var rng = SplitMix64(seed: 2022)
    let key = rng.bytes(32), nonce = rng.bytes(24)
    let full = s.xsalsa20Keystream(count: 8192, nonce: nonce, key: key)
    var x = try XSalsa20(key: SymmetricKey(data: key).pinned(to: backend), nonce: nonce)
    for _ in 0..<300 {
        let start = Int.random(in: 0..<8192, using: &rng)
        let len = Int.random(in: 0...(8192 - start), using: &rng)
        x.seek(toByteOffset: UInt64(start))
        let got = x.keystream(count: len)
        if got[...] != full[start..<(start + len)] {
            Issue.record("XSalsa20 \(backend) seek to \(start), \(len) bytes differs from libsodium")
            return
        }
    }
    // Block seek and the _ic counter agree.
    let ic: UInt64 = 0x1234_5678_9ABC
    let msg = rng.bytes(1000)
    x.seek(toBlock: ic)
    #expect(x.xor(msg) == s.xsalsa20Xor(msg, nonce: nonce, key: key, ic: ic))
}

@Test(.enabled(if: sodiumPresentOrRequired, salsaSkip))
func hsalsa20MatchesLibsodium() throws {
    guard let s = requireSodiumSalsa() else { return }
    var rng = SplitMix64(seed: 2023)
    for _ in 0..<200 {
        let key = rng.bytes(32), input = rng.bytes(16)
        let got = try HSalsa20.hash(key: SymmetricKey(data: key), input: input).withUnsafeBytes { Array($0) }
        #expect(got == s.hsalsa20(key: key, input: input))
    }
}

@Test(.enabled(if: sodiumPresentOrRequired, salsaSkip))
func poly1305MatchesLibsodium() throws {
    guard let s = requireSodiumSalsa() else { return }
    var rng = SplitMix64(seed: 1305)
    for n in crossLengths {
        // Keys with all-ones and all-zeros halves too: they stress the carries and the final reduction.
        var key = rng.bytes(32)
        if n % 11 == 0 { key = [UInt8](repeating: 0xFF, count: 32) }
        if n % 13 == 0 { for i in 16..<32 { key[i] = 0xFF } }
        var msg = rng.bytes(n)
        if n % 5 == 0 { msg = [UInt8](repeating: 0xFF, count: n) }
        let want = s.poly1305(msg, key: key)
        let k = SymmetricKey(data: key)
        let oneShot = withUnaligned(msg, offset: n % 9) { buf in (try? Poly1305.authenticationCode(for: buf, using: k))?.bytes ?? [] }
        var mac = try Poly1305(key: k)
        var start = 0
        for c in randomCuts(n, &rng) + [n] {
            mac.update(data: msg[start..<c])
            start = c
        }
        let split = mac.finalize().bytes
        if oneShot != want || split != want {
            Issue.record("Poly1305 length \(n) differs from crypto_onetimeauth_poly1305 (one-shot \(oneShot == want), split \(split == want))")
            return
        }
        #expect(try Poly1305.isValidAuthenticationCode(want, authenticating: msg, using: k))
    }
    // libsodium's own incremental API agrees with its one-shot one (sanity of the binding).
    let key = rng.bytes(32), msg = rng.bytes(1000)
    #expect(s.poly1305(parts: [Array(msg[..<17]), Array(msg[17...])], key: key) == s.poly1305(msg, key: key))
}

@Test(.enabled(if: sodiumPresentOrRequired, salsaSkip), arguments: backends)
func secretBoxMatchesLibsodium(_ backend: Backend) throws {
    guard let s = requireSodiumSalsa() else { return }
    var rng = SplitMix64(seed: 4242 + (backend == .portable ? 1 : 0))
    for n in crossLengths {
        let key = rng.bytes(32), nonce = rng.bytes(24), msg = rng.bytes(n)
        let k = SymmetricKey(data: key)
        let want = s.secretboxEasy(msg, nonce: nonce, key: key)
        let got = try SecretBox.seal(msg, using: k.pinned(to: backend), nonce: nonce)
        if got != want {
            Issue.record("SecretBox.seal \(backend) length \(n) differs from crypto_secretbox_easy")
            return
        }
        // Our open accepts libsodium's box; libsodium's open accepts ours (equal bytes, but check the API).
        let opened = try SecretBox.open(want, using: k.pinned(to: backend), nonce: nonce)
        #expect(opened == msg)
        #expect(s.secretboxOpenEasy(got, nonce: nonce, key: key) == msg)
        // Detached and in-place forms on an unaligned buffer.
        if n % 17 == 0 {
            let (ct, tag) = try SecretBox.sealDetached(msg, using: k, nonce: nonce)
            #expect(tag + ct == want)
            var storage = [UInt8](repeating: 0, count: n + 3)
            storage.replaceSubrange(3..<(3 + n), with: ct)
            try storage.withUnsafeMutableBytes { b in
                try tag.withUnsafeBytes { t in
                    try SecretBox.open(inPlace: UnsafeMutableRawBufferPointer(rebasing: b[3...]), tag: t, using: k.pinned(to: backend),
                                       nonce: nonce)
                }
            }
            #expect(Array(storage[3...]) == msg)
        }
        // A flipped bit anywhere is rejected by both.
        if n % 7 == 0 {
            var bad = want
            let i = Int.random(in: 0..<bad.count, using: &rng)
            bad[i] ^= UInt8(1) << UInt8(Int.random(in: 0..<8, using: &rng))
            #expect(s.secretboxOpenEasy(bad, nonce: nonce, key: key) == nil)
            #expect(throws: RampartError.authenticationFailure) { try SecretBox.open(bad, using: k.pinned(to: backend), nonce: nonce) }
        }
    }
}

/// The short path of SecretBox (all keystream blocks at once: 1, 2, 4 or 8 of them) has thresholds at
/// 32, 96, 224 and 480 message bytes: every length 0...600, in place on a buffer at an odd offset, for
/// both seal and open, against libsodium.
@Test(.enabled(if: sodiumPresentOrRequired, salsaSkip), arguments: backends)
func secretBoxShortPathInPlaceMatchesLibsodium(_ backend: Backend) throws {
    guard let s = requireSodiumSalsa() else { return }
    var rng = SplitMix64(seed: 4343 + (backend == .portable ? 1 : 0))
    for n in 0...600 {
        let key = rng.bytes(32), nonce = rng.bytes(24), msg = rng.bytes(n)
        let k = SymmetricKey(data: key).pinned(to: backend)
        let want = s.secretboxEasy(msg, nonce: nonce, key: key)
        var storage = [UInt8](repeating: 0xA5, count: n + 5)
        storage.replaceSubrange(5..<(5 + n), with: msg)
        var tag = [UInt8](repeating: 0, count: 16)
        try storage.withUnsafeMutableBytes { b in
            try tag.withUnsafeMutableBytes { t in
                try SecretBox.seal(inPlace: UnsafeMutableRawBufferPointer(rebasing: b[5...]), tag: t, using: k, nonce: nonce)
            }
        }
        if tag + storage[5...] != want {
            Issue.record("SecretBox.seal(inPlace:) \(backend) length \(n) differs from crypto_secretbox_easy")
            return
        }
        try storage.withUnsafeMutableBytes { b in
            try tag.withUnsafeBytes { t in
                try SecretBox.open(inPlace: UnsafeMutableRawBufferPointer(rebasing: b[5...]), tag: t, using: k, nonce: nonce)
            }
        }
        if Array(storage[5...]) != msg || storage[..<5] != [0xA5, 0xA5, 0xA5, 0xA5, 0xA5] {
            Issue.record("SecretBox.open(inPlace:) \(backend) length \(n) does not restore the message")
            return
        }
    }
}
