import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

private let backends: [Backend] = [.hardware, .portable]

// NaCl's classic values (libsodium test/default core1, core2, stream*, secretbox).
private let shared = hexBytes("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
private let firstkey = hexBytes("1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389")
private let secondkey = hexBytes("dc908dda0b9344a953629b733820778880f3ceb421bb61b91cbd4c3e66256ce4")
private let nonce = hexBytes("69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37")
private let rs = hexBytes("eea6a7251c1e72916d11c2cb214d3c252539121d8e234e652d651fa4c8cff880")

/// Deterministic bytes.
/// `n` bytes from the shared seeded generator, one stream per seed.
private func pattern(_ n: Int, seed: UInt8 = 1) -> [UInt8] {
    var g = SplitMix64(seed: UInt64(seed))
    return g.bytes(n)
}

/// Expects `body` to throw exactly `expected`.
private func expectError(_ expected: RampartError, sourceLocation: SourceLocation = #_sourceLocation,
                         _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected \(expected), nothing was thrown", sourceLocation: sourceLocation)
    } catch {
        #expect(error as? RampartError == expected, sourceLocation: sourceLocation)
    }
}

@Suite("Salsa20, HSalsa20, XSalsa20")
struct Salsa20Tests {
    @Test("HSalsa20: NaCl core1 and core2")
    func hsalsa20() throws {
        let k1 = try HSalsa20.hash(key: SymmetricKey(data: shared), input: [UInt8](repeating: 0, count: 16))
        #expect(k1.withUnsafeBytes { Array($0) } == firstkey)
        let k2 = try HSalsa20.hash(key: SymmetricKey(data: firstkey), input: nonce[..<16])
        #expect(k2.withUnsafeBytes { Array($0) } == secondkey)
    }

    @Test("Salsa20 specification §10: expansion of k = 1..16, 201..216 and n = 101..116", arguments: backends)
    func specExpansion(_ backend: Backend) throws {
        let key = Array(1...16) + Array(201...216) as [UInt8]
        let n = Array(101...116) as [UInt8]
        var counter: UInt64 = 0
        for (i, b) in n[8...].enumerated() { counter |= UInt64(b) << (8 * UInt64(i)) }
        var s = try Salsa20(key: SymmetricKey(data: key).pinned(to: backend), nonce: n[..<8], counter: counter)
        let expected: [UInt8] = [69, 37, 68, 39, 41, 15, 107, 193, 255, 139, 122, 6, 170, 233, 217, 98, 89, 144, 182, 106,
                                 21, 51, 200, 65, 239, 49, 222, 34, 215, 114, 40, 126, 104, 197, 7, 225, 197, 153, 31, 2,
                                 102, 78, 76, 176, 84, 245, 246, 184, 177, 160, 133, 130, 6, 72, 149, 119, 192, 195, 132,
                                 236, 234, 103, 246, 74]
        #expect(s.keystream(count: 64) == expected)
    }

    @Test("XSalsa20: NaCl stream3 and stream4", arguments: backends)
    func naclStream(_ backend: Backend) throws {
        var s = try XSalsa20(key: SymmetricKey(data: firstkey).pinned(to: backend), nonce: nonce)
        #expect(s.keystream(count: 32) == rs)
        let m = hexBytes("be075fc53c81f2d5cf141316ebeb0c7b5228c52a4c62cbd44b66849b64244ffce5ecbaaf33bd751a1ac728d45e6c61296cdc3c01233561f41db66cce314adb310e3be8250c46f06dceea3a7fa1348057e2f6556ad6b1318a024a838f21af1fde048977eb48f59ffd4924ca1c60902e52f0a089bc76897040e082f937763848645e0705")
        let ct = hexBytes("8e993b9f48681273c29650ba32fc76ce48332ea7164d96a4476fb8c531a1186ac0dfc17c98dce87b4da7f011ec48c97271d2c20f9b928fe2270d6fb863d51738b48eeee314a7cc8ab932164548e526ae90224368517acfeabd6bb3732bc0e9da99832b61ca01b6de56244a9e88d5f9b37973f622a43d14a6599b1f654cb45a74e355a5")
        // stream4: the keystream continues after the 32 bytes above.
        #expect(s.xor(m) == ct)
        #expect(try XSalsa20.xor([UInt8](repeating: 0, count: 32) + m, key: SymmetricKey(data: firstkey), nonce: nonce) == rs + ct)
    }

    @Test("NaCl stream and stream2: SHA-256 of 4 MiB of XSalsa20 and Salsa20 keystream", arguments: backends)
    func fourMiB(_ backend: Backend) throws {
        let want = hexBytes("662b9d0e3463029156069b12f918691a98f7dfb2ca0393c96bbfc6b1fbd630a2")
        var x = try XSalsa20(key: SymmetricKey(data: firstkey).pinned(to: backend), nonce: nonce)
        #expect(SHA256.hash(data: x.keystream(count: 4_194_304)).bytes == want)
        var s = try Salsa20(key: SymmetricKey(data: secondkey).pinned(to: backend), nonce: nonce[16...])
        #expect(SHA256.hash(data: s.keystream(count: 4_194_304)).bytes == want)
    }

    @Test("Both backends agree for every length 0...1200, in one call and split")
    func backendsAgree() throws {
        let key = SymmetricKey(data: pattern(32)), n = pattern(24, seed: 9)
        for len in 0...1200 {
            let msg = pattern(len, seed: UInt8(truncatingIfNeeded: len))
            var h = try XSalsa20(key: key.pinned(to: .hardware), nonce: n)
            var p = try XSalsa20(key: key.pinned(to: .portable), nonce: n)
            let a = h.xor(msg), b = p.xor(msg)
            var q = try XSalsa20(key: key.pinned(to: .hardware), nonce: n)
            let cut = len / 3
            let c = q.xor(msg[..<cut]) + q.xor(msg[cut...])
            if a != b || a != c {
                Issue.record("length \(len): hardware/portable/split disagree")
                return
            }
        }
    }

    @Test("Seeking: byte offsets and blocks match the continuous keystream", arguments: backends)
    func seeking(_ backend: Backend) throws {
        let key = SymmetricKey(data: pattern(32, seed: 3))
        var s = try Salsa20(key: key.pinned(to: backend), nonce: pattern(8))
        let full = s.keystream(count: 5000)
        for start in [0, 1, 63, 64, 65, 511, 512, 513, 1000, 4095] {
            s.seek(toByteOffset: UInt64(start))
            #expect(s.keystream(count: 5000 - start)[...] == full[start...], "offset \(start)")
        }
        s.seek(toBlock: 10)
        #expect(s.keystream(count: 100)[...] == full[640..<740])
        // A stream started at block 10 is the same as seeking there.
        var t = try Salsa20(key: key.pinned(to: backend), nonce: pattern(8), counter: 10)
        #expect(t.keystream(count: 100)[...] == full[640..<740])
    }

    @Test("The block counter carries from the low into the high word (lanes straddling 2^32)", arguments: backends)
    func counterCarry(_ backend: Backend) throws {
        let key = SymmetricKey(data: pattern(32, seed: 4)), n = pattern(8, seed: 5)
        let start: UInt64 = 0xFFFF_FFFD
        var bulk = try Salsa20(key: key.pinned(to: backend), nonce: n, counter: start)
        let ks = bulk.keystream(count: 64 * 16)
        for i in 0..<16 {
            var one = try Salsa20(key: key.pinned(to: .portable), nonce: n, counter: start + UInt64(i))
            #expect(one.keystream(count: 64)[...] == ks[(64 * i)..<(64 * i + 64)], "block \(i)")
        }
        // The counter wraps at 2^64 (as libsodium's does) instead of trapping.
        var end = try Salsa20(key: key.pinned(to: backend), nonce: n, counter: UInt64.max)
        let wrap = end.keystream(count: 128)
        var zero = try Salsa20(key: key.pinned(to: backend), nonce: n, counter: 0)
        #expect(wrap[64...] == zero.keystream(count: 64)[...])
    }

    @Test("Copies are independent (value semantics)")
    func valueSemantics() throws {
        var a = try XSalsa20(key: SymmetricKey(data: pattern(32)), nonce: pattern(24))
        _ = a.keystream(count: 10)
        var b = a
        let fromA = a.keystream(count: 100)
        let fromB = b.keystream(count: 100)
        #expect(fromA == fromB)
    }

    @Test("In-place, raw-buffer and unaligned forms agree", arguments: backends)
    func rawForms(_ backend: Backend) throws {
        let key = SymmetricKey(data: pattern(32, seed: 7)), n = pattern(24, seed: 8)
        let msg = pattern(3000, seed: 2)
        var ref = try XSalsa20(key: key.pinned(to: backend), nonce: n)
        let want = ref.xor(msg)
        var storage = [UInt8](repeating: 0, count: 3005)
        storage.replaceSubrange(5..<3005, with: msg)
        var s = try XSalsa20(key: key.pinned(to: backend), nonce: n)
        storage.withUnsafeMutableBytes { s.xor(inPlace: UnsafeMutableRawBufferPointer(rebasing: $0[5...])) }
        #expect(Array(storage[5...]) == want)
        var out = [UInt8](repeating: 0, count: 3001)
        var t = try XSalsa20(key: key.pinned(to: backend), nonce: n)
        try msg.withUnsafeBytes { i in
            try out.withUnsafeMutableBytes { o in try t.xor(i, into: UnsafeMutableRawBufferPointer(rebasing: o[1...])) }
        }
        #expect(Array(out[1...]) == want)
    }

    @Test("Bad lengths are typed errors")
    func badLengths() throws {
        let key = SymmetricKey(data: pattern(32))
        expectError(.invalidKeyLength) { _ = try XSalsa20(key: SymmetricKey(data: pattern(31)), nonce: pattern(24)) }
        expectError(.invalidKeyLength) { _ = try Salsa20(key: SymmetricKey(data: pattern(16)), nonce: pattern(8)) }
        expectError(.invalidNonceLength) { _ = try XSalsa20(key: key, nonce: pattern(8)) }
        expectError(.invalidNonceLength) { _ = try Salsa20(key: key, nonce: pattern(24)) }
        expectError(.invalidNonceLength) { _ = try HSalsa20.hash(key: key, input: pattern(15)) }
        expectError(.invalidKeyLength) { _ = try HSalsa20.hash(key: SymmetricKey(data: []), input: pattern(16)) }
        var s = try XSalsa20(key: key, nonce: pattern(24))
        let input = pattern(10)
        var out = [UInt8](repeating: 0, count: 9)
        expectError(.invalidOutputLength) {
            try input.withUnsafeBytes { i in try out.withUnsafeMutableBytes { o in try s.xor(i, into: o) } }
        }
        // Empty input is fine and consumes nothing.
        #expect(s.xor([UInt8]()) == [])
        #expect(s.keystream(count: -5) == [])
    }

    @Test("Threema ID backup shape: XSalsa20 with a zero nonce round-trips 42 bytes")
    func idBackupShape() throws {
        let key = SymmetricKey(data: pattern(32, seed: 42))
        let plain = Array("ECHOECHO".utf8) + pattern(34)
        let zero = [UInt8](repeating: 0, count: 24)
        let ct = try XSalsa20.xor(plain, key: key, nonce: zero)
        #expect(ct != plain && ct.count == 42)
        #expect(try XSalsa20.xor(ct, key: key, nonce: zero) == plain)
        #expect(try XSalsa20.keystream(count: 42, key: key, nonce: zero) == zip(ct, plain).map { $0 ^ $1 })
    }
}
