import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

private let backends: [Backend] = [.hardware, .portable]

private let key = SymmetricKey(data: hexBytes("1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389"))
private let nonce = hexBytes("69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37")
private let message = hexBytes("be075fc53c81f2d5cf141316ebeb0c7b5228c52a4c62cbd44b66849b64244ffce5ecbaaf33bd751a1ac728d45e6c61296cdc3c01233561f41db66cce314adb310e3be8250c46f06dceea3a7fa1348057e2f6556ad6b1318a024a838f21af1fde048977eb48f59ffd4924ca1c60902e52f0a089bc76897040e082f937763848645e0705")
private let box = hexBytes("f3ffc7703f9400e52a7dfb4b3d3305d98e993b9f48681273c29650ba32fc76ce48332ea7164d96a4476fb8c531a1186ac0dfc17c98dce87b4da7f011ec48c97271d2c20f9b928fe2270d6fb863d51738b48eeee314a7cc8ab932164548e526ae90224368517acfeabd6bb3732bc0e9da99832b61ca01b6de56244a9e88d5f9b37973f622a43d14a6599b1f654cb45a74e355a5")

/// `n` bytes from the shared seeded generator, one stream per seed.
private func pattern(_ n: Int, seed: UInt8 = 1) -> [UInt8] {
    var g = SplitMix64(seed: UInt64(seed))
    return g.bytes(n)
}

private func expectError(_ expected: RampartError, sourceLocation: SourceLocation = #_sourceLocation,
                         _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected \(expected), nothing was thrown", sourceLocation: sourceLocation)
    } catch {
        #expect(error as? RampartError == expected, sourceLocation: sourceLocation)
    }
}

@Suite("SecretBox (XSalsa20-Poly1305)")
struct SecretBoxTests {
    @Test("NaCl classic vector: seal and open", arguments: backends)
    func classic(_ backend: Backend) throws {
        #expect(try SecretBox.seal(message, using: key.pinned(to: backend), nonce: nonce) == box)
        #expect(try SecretBox.open(box, using: key.pinned(to: backend), nonce: nonce) == message)
        let (ct, tag) = try SecretBox.sealDetached(message, using: key, nonce: nonce)
        #expect(tag == Array(box[..<16]) && ct == Array(box[16...]))
        #expect(try SecretBox.openDetached(ciphertext: ct, tag: tag, using: key, nonce: nonce) == message)
    }

    /// Under ThreadSanitizer (Scripts/sanitizers.sh) this reported a data race: opening a box with
    /// an empty plaintext wrote into the standard library's shared empty-array storage.
    @Test("Empty boxes open concurrently on many threads")
    func emptyBoxesConcurrently() async throws {
        let empty = try SecretBox.seal([UInt8](), using: key, nonce: nonce)
        #expect(empty.count == 16)
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<200).allSatisfy { _ in (try? SecretBox.open(empty, using: key, nonce: nonce)) == [] }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }

    @Test("Round trip for every length 0...600 and a few large ones", arguments: backends)
    func roundTrip(_ backend: Backend) throws {
        let k = SymmetricKey(data: pattern(32, seed: 3)), n = pattern(24, seed: 4)
        for len in Array(0...600) + [4095, 4096, 4097, 8192 + 33, 70_000] {
            let m = pattern(len, seed: UInt8(truncatingIfNeeded: len))
            let b = try SecretBox.seal(m, using: k.pinned(to: backend), nonce: n)
            #expect(b.count == len + 16)
            let o = try SecretBox.open(b, using: k.pinned(to: backend), nonce: n)
            if o != m { Issue.record("length \(len) did not round-trip"); return }
        }
    }

    @Test("Every single-bit change of a box is rejected", arguments: backends)
    func tamper(_ backend: Backend) throws {
        let small = try SecretBox.seal(pattern(40), using: key.pinned(to: backend), nonce: nonce)
        for i in 0..<small.count {
            for bit in 0..<8 {
                var bad = small
                bad[i] ^= UInt8(1) << UInt8(bit)
                expectError(.authenticationFailure) { _ = try SecretBox.open(bad, using: key.pinned(to: backend), nonce: nonce) }
            }
        }
    }

    @Test("Wrong key, wrong nonce, truncated or extended box fail")
    func wrongInputs() throws {
        var otherNonce = nonce
        otherNonce[23] ^= 1
        expectError(.authenticationFailure) { _ = try SecretBox.open(box, using: key, nonce: otherNonce) }
        expectError(.authenticationFailure) { _ = try SecretBox.open(box, using: SymmetricKey(data: pattern(32)), nonce: nonce) }
        expectError(.authenticationFailure) { _ = try SecretBox.open(box.dropLast(), using: key, nonce: nonce) }
        expectError(.authenticationFailure) { _ = try SecretBox.open(box + [0], using: key, nonce: nonce) }
        expectError(.invalidInputLength) { _ = try SecretBox.open(box[..<15], using: key, nonce: nonce) }
        expectError(.invalidInputLength) { _ = try SecretBox.open([UInt8](), using: key, nonce: nonce) }
        expectError(.authenticationFailure) {
            _ = try SecretBox.openDetached(ciphertext: box[16...], tag: box[..<15], using: key, nonce: nonce)
        }
    }

    @Test("Bad key and nonce lengths are typed errors")
    func badLengths() throws {
        expectError(.invalidKeyLength) { _ = try SecretBox.seal(message, using: SymmetricKey(data: pattern(31)), nonce: nonce) }
        expectError(.invalidKeyLength) { _ = try SecretBox.open(box, using: SymmetricKey(data: pattern(33)), nonce: nonce) }
        expectError(.invalidNonceLength) { _ = try SecretBox.seal(message, using: key, nonce: nonce.dropLast()) }
        expectError(.invalidNonceLength) { _ = try SecretBox.open(box, using: key, nonce: nonce + [0]) }
    }

    @Test("In-place open: a failure leaves the buffer untouched; success decrypts it", arguments: backends)
    func inPlace(_ backend: Backend) throws {
        var buffer = Array(box[16...])
        var badTag = Array(box[..<16])
        badTag[0] ^= 0x80
        expectError(.authenticationFailure) {
            try buffer.withUnsafeMutableBytes { b in
                try badTag.withUnsafeBytes { t in try SecretBox.open(inPlace: b, tag: t, using: key.pinned(to: backend), nonce: nonce) }
            }
        }
        #expect(buffer == Array(box[16...]))
        let tag = Array(box[..<16])
        try buffer.withUnsafeMutableBytes { b in
            try tag.withUnsafeBytes { t in try SecretBox.open(inPlace: b, tag: t, using: key.pinned(to: backend), nonce: nonce) }
        }
        #expect(buffer == message)
        // Seal in place gives the same box back.
        var tagOut = [UInt8](repeating: 0, count: 16)
        try buffer.withUnsafeMutableBytes { b in
            try tagOut.withUnsafeMutableBytes { t in try SecretBox.seal(inPlace: b, tag: t, using: key.pinned(to: backend), nonce: nonce) }
        }
        #expect(tagOut + buffer == box)
    }

    @Test("Raw buffers: sizes are checked; a failed open zero-fills the output", arguments: backends)
    func rawBuffers(_ backend: Backend) throws {
        var out = [UInt8](repeating: 0xAA, count: message.count + 16)
        try message.withUnsafeBytes { m in
            try out.withUnsafeMutableBytes { o in try SecretBox.seal(m, into: o, using: key.pinned(to: backend), nonce: nonce) }
        }
        #expect(out == box)
        var plain = [UInt8](repeating: 0xAA, count: message.count)
        var bad = box
        bad[100] ^= 1
        expectError(.authenticationFailure) {
            try bad.withUnsafeBytes { b in
                try plain.withUnsafeMutableBytes { o in try SecretBox.open(b, into: o, using: key.pinned(to: backend), nonce: nonce) }
            }
        }
        #expect(plain.allSatisfy { $0 == 0 })
        try box.withUnsafeBytes { b in
            try plain.withUnsafeMutableBytes { o in try SecretBox.open(b, into: o, using: key.pinned(to: backend), nonce: nonce) }
        }
        #expect(plain == message)
        var small = [UInt8](repeating: 0, count: 10)
        expectError(.invalidOutputLength) {
            try message.withUnsafeBytes { m in try small.withUnsafeMutableBytes { o in try SecretBox.seal(m, into: o, using: key, nonce: nonce) } }
        }
        expectError(.invalidOutputLength) {
            try box.withUnsafeBytes { b in try small.withUnsafeMutableBytes { o in try SecretBox.open(b, into: o, using: key, nonce: nonce) } }
        }
        var tag15 = [UInt8](repeating: 0, count: 15)
        expectError(.invalidOutputLength) {
            try small.withUnsafeMutableBytes { b in try tag15.withUnsafeMutableBytes { t in try SecretBox.seal(inPlace: b, tag: t, using: key, nonce: nonce) } }
        }
    }

    /// The paired entry points (two keys, one nonce; the Threema envelope's two boxes) must give
    /// exactly the boxes of two single seals, on both sides of the short-path limit and on both
    /// backends; openPair writes nothing unless both tags verify.
    @Test("Paired seal and open equal two single ones; a bad tag on either side releases nothing", arguments: backends)
    func pairs(_ backend: Backend) throws {
        let keyA = SymmetricKey(data: pattern(32, seed: 3)).pinned(to: backend)
        let keyB = SymmetricKey(data: pattern(32, seed: 4)).pinned(to: backend)
        let lengths = [0, 1, 15, 16, 17, 31, 32, 33, 40, 95, 96, 97, 200, 224, 225, 256, 300, 479, 480, 481, 600, 1500]
        var g = SplitMix64(seed: 7)
        for la in lengths {
            for _ in 0..<3 {
                let r = g.next()
                let lb = lengths[Int(r >> 33) % lengths.count]
                let a = pattern(la, seed: UInt8(truncatingIfNeeded: la)), b = pattern(lb, seed: UInt8(truncatingIfNeeded: lb &+ 9))
                let want = (try SecretBox.seal(a, using: keyA, nonce: nonce), try SecretBox.seal(b, using: keyB, nonce: nonce))
                var pa = [UInt8](repeating: 0, count: 16) + a, pb = [UInt8](repeating: 0, count: 16) + b
                try pa.withUnsafeMutableBytes { ba in try pb.withUnsafeMutableBytes { bb in try nonce.withUnsafeBytes { n in
                    try SecretBox.sealPair(inPlace: ba.baseAddress! + 16, count: la, tag: ba.baseAddress!, using: keyA,
                                           inPlace: bb.baseAddress! + 16, count: lb, tag: bb.baseAddress!, using: keyB,
                                           nonce: n.baseAddress!)
                } } }
                #expect(pa == want.0 && pb == want.1, "sealPair \(la)/\(lb) \(backend)")
                // Open: intact, then each side with one flipped bit (tag or ciphertext).
                for flip in [nil, 0, 1] as [Int?] {
                    var ca = want.0, cb = want.1
                    if flip == 0 { ca[Int(r >> 40) % ca.count] ^= 0x20 }
                    if flip == 1 { cb[Int(r >> 40) % cb.count] ^= 0x04 }
                    var oa = [UInt8](repeating: 0xAA, count: max(la, 1)), ob = [UInt8](repeating: 0xBB, count: max(lb, 1))
                    let ok = try ca.withUnsafeBytes { sa in try cb.withUnsafeBytes { sb in try nonce.withUnsafeBytes { n in
                        try oa.withUnsafeMutableBytes { da in try ob.withUnsafeMutableBytes { db in
                            try SecretBox.openPair(sa.baseAddress! + 16, count: la, tag: sa.baseAddress!, into: da.baseAddress!,
                                                   using: keyA, sb.baseAddress! + 16, count: lb, tag: sb.baseAddress!,
                                                   into: db.baseAddress!, using: keyB, nonce: n.baseAddress!)
                        } }
                    } } }
                    if flip == nil {
                        #expect(ok && Array(oa.prefix(la)) == a && Array(ob.prefix(lb)) == b, "openPair \(la)/\(lb) \(backend)")
                    } else {
                        #expect(!ok, "openPair accepted a flipped bit \(la)/\(lb) \(backend)")
                        // Nothing released: the outputs hold their fill or zeros (a long box that
                        // verified first is wiped again; a long failed open zero-fills), never plaintext.
                        #expect(oa.allSatisfy { $0 == 0xAA || $0 == 0 }, "A released \(la)/\(lb)")
                        #expect(ob.allSatisfy { $0 == 0xBB || $0 == 0 }, "B released \(la)/\(lb)")
                    }
                }
            }
        }
    }

    @Test("Empty message: the box is just the tag and opens to nothing")
    func empty() throws {
        let b = try SecretBox.seal([UInt8](), using: key, nonce: nonce)
        #expect(b.count == 16)
        #expect(try SecretBox.open(b, using: key, nonce: nonce) == [])
    }
}
