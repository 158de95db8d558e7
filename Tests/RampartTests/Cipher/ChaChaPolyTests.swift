// ChaCha20 and ChaCha20-Poly1305: tamper resistance (every bit flip of tag, ciphertext and associated
// data is refused and releases nothing), argument errors, the 32-bit counter limit, HChaCha20, and the
// AVX2 kernel against the portable path at every length around its 512-byte groups. The published
// vectors (RFC 8439, all of Wycheproof) run from Vectors/ through both backends.

import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

private let backends: [Backend] = [.hardware, .portable]

private func expectError(_ expected: RampartError, sourceLocation: SourceLocation = #_sourceLocation,
                         _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected \(expected), nothing was thrown", sourceLocation: sourceLocation)
    } catch let e as RampartError {
        #expect(e == expected, sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}

@Suite struct ChaChaPolyTests {
    @Test(arguments: backends)
    func everyBitFlipIsRejectedAndReleasesNothing(_ backend: Backend) throws {
        var rng = SplitMix64(seed: 8439 + (backend == .portable ? 1 : 0))
        for size in [0, 1, 15, 16, 17, 64, 65, 600, 1100, 2100] {  // 1100, 2100: the stitched kernel (two or more 512-byte groups)
            let key = SymmetricKey(data: rng.bytes(32)).pinned(to: backend)
            let nonce = try ChaChaPoly.Nonce(data: rng.bytes(12))
            let msg = rng.bytes(size), aad = rng.bytes(size % 23)
            let box = try ChaChaPoly.seal(msg, using: key, nonce: nonce, authenticating: aad)
            #expect(try ChaChaPoly.open(box, using: key, authenticating: aad) == msg)
            func refused(ct: [UInt8], tag: [UInt8], aad a: [UInt8], _ what: String) throws {
                // Allocating form: throws authenticationFailure.
                let b = try ChaChaPoly.SealedBox(nonce: nonce, ciphertext: ct, tag: tag)
                expectError(.authenticationFailure) { _ = try ChaChaPoly.open(b, using: key, authenticating: a) }
                // In place: the buffer is left as ciphertext.
                var buf = ct
                let threw = buf.withUnsafeMutableBytes { bb in tag.withUnsafeBytes { t in
                    nonce.withUnsafeBytes { n in a.withUnsafeBytes { ab in
                        (try? ChaChaPoly.open(bb, tag: t, using: key, nonce: n, authenticating: ab)) == nil
                    } }
                } }
                #expect(threw && buf == ct, "\(what): in-place open released or changed bytes")
                // Separate output: zero-filled.
                var out = [UInt8](repeating: 0xA5, count: ct.count)
                let threw2 = ct.withUnsafeBytes { c in out.withUnsafeMutableBytes { o in tag.withUnsafeBytes { t in
                    nonce.withUnsafeBytes { n in a.withUnsafeBytes { ab in
                        (try? ChaChaPoly.open(c, into: o, tag: t, using: key, nonce: n, authenticating: ab)) == nil
                    } }
                } } }
                #expect(threw2 && out.allSatisfy { $0 == 0 }, "\(what): output not wiped")
            }
            for bit in 0..<(16 * 8) {
                var t = box.tag
                t[bit / 8] ^= UInt8(1) << (bit % 8)
                try refused(ct: box.ciphertext, tag: t, aad: aad, "tag bit \(bit)")
            }
            for bit in 0..<(box.ciphertext.count * 8) where size <= 65 || bit % (size > 1000 ? 29 : 7) == 0 {
                var c = box.ciphertext
                c[bit / 8] ^= UInt8(1) << (bit % 8)
                try refused(ct: c, tag: box.tag, aad: aad, "ciphertext bit \(bit)")
            }
            for bit in 0..<(aad.count * 8) {
                var a = aad
                a[bit / 8] ^= UInt8(1) << (bit % 8)
                try refused(ct: box.ciphertext, tag: box.tag, aad: a, "aad bit \(bit)")
            }
            // Truncated or extended ciphertext, a dropped AAD byte, a wrong nonce, a wrong key.
            if size > 0 { try refused(ct: Array(box.ciphertext.dropLast()), tag: box.tag, aad: aad, "truncated") }
            try refused(ct: box.ciphertext + [0], tag: box.tag, aad: aad, "extended")
            if !aad.isEmpty { try refused(ct: box.ciphertext, tag: box.tag, aad: Array(aad.dropFirst()), "short aad") }
            let other = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: rng.bytes(12)), ciphertext: box.ciphertext, tag: box.tag)
            expectError(.authenticationFailure) { _ = try ChaChaPoly.open(other, using: key, authenticating: aad) }
            expectError(.authenticationFailure) {
                _ = try ChaChaPoly.open(box, using: SymmetricKey(data: rng.bytes(32)).pinned(to: backend), authenticating: aad)
            }
        }
    }

    @Test func argumentErrors() throws {
        let key = SymmetricKey(data: [UInt8](repeating: 7, count: 32))
        expectError(.invalidNonceLength) { _ = try ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 11)) }
        expectError(.invalidNonceLength) { _ = try ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 24)) }
        expectError(.invalidKeyLength) { _ = try ChaChaPoly.seal([1, 2, 3], using: SymmetricKey(data: [UInt8](repeating: 1, count: 16))) }
        expectError(.authenticationFailure) {
            _ = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(), ciphertext: [1], tag: [UInt8](repeating: 0, count: 15))
        }
        expectError(.invalidInputLength) { _ = try ChaChaPoly.SealedBox(combined: [UInt8](repeating: 0, count: 27)) }
        // Combined form round trip; a random nonce each time.
        let box = try ChaChaPoly.seal(Array("hello".utf8), using: key)
        #expect(box.combined.count == 12 + 5 + 16)
        #expect(try ChaChaPoly.open(ChaChaPoly.SealedBox(combined: box.combined), using: key) == Array("hello".utf8))
        #expect(try ChaChaPoly.seal([], using: key).nonce != ChaChaPoly.seal([], using: key).nonce)
        // Raw API: tag buffer of the wrong size, mismatched output.
        var buf = [UInt8](repeating: 0, count: 10), tag = [UInt8](repeating: 0, count: 15)
        let nonce = [UInt8](repeating: 0, count: 12)
        expectError(.invalidOutputLength) {
            try buf.withUnsafeMutableBytes { b in try tag.withUnsafeMutableBytes { t in try nonce.withUnsafeBytes { n in
                try ChaChaPoly.seal(b, tag: t, using: key, nonce: n, authenticating: UnsafeRawBufferPointer(start: nil, count: 0))
            } } }
        }
        // The stream: bad lengths, and the 32-bit counter limit (the last block is 2^32 − 1).
        expectError(.invalidNonceLength) { _ = try ChaCha20.xor([1], key: key, nonce: [UInt8](repeating: 0, count: 8)) }
        expectError(.invalidKeyLength) { _ = try ChaCha20.xor([1], key: SymmetricKey(data: [1]), nonce: nonce) }
        #expect(try ChaCha20.xor([UInt8](repeating: 0, count: 64), key: key, nonce: nonce, counter: .max).count == 64)
        expectError(.invalidInputLength) { _ = try ChaCha20.xor([UInt8](repeating: 0, count: 65), key: key, nonce: nonce, counter: .max) }
        #expect(try ChaCha20.xor([], key: key, nonce: nonce, counter: .max).isEmpty)
    }

    @Test func hchacha20() throws {
        // draft-irtf-cfrg-xchacha-03 §2.2.1 (re-checked with libsodium's crypto_core_hchacha20).
        let sub = try ChaCha20.hchacha20(key: SymmetricKey(data: (0..<32).map { UInt8($0) }),
                                         input: try Hex.decode("000000090000004a0000000031415927"))
        #expect(sub.withUnsafeBytes { Hex.encode(Array($0)) } == "82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc")
        expectError(.invalidNonceLength) { _ = try ChaCha20.hchacha20(key: sub, input: [UInt8](repeating: 0, count: 12)) }
    }

    @Test func kernelMatchesPortableAtEveryLengthAroundTheGroups() throws {
        var rng = SplitMix64(seed: 512)
        let key = rng.bytes(32), nonce = rng.bytes(12)
        let lengths = Array(0...1100) + [1535, 1536, 1537, 4095, 4096, 4097, 8191, 8193]
        let msg = rng.bytes(8193)
        for n in lengths {
            let m = Array(msg[0..<n])
            let hw = try ChaCha20.xor(m, key: SymmetricKey(data: key).pinned(to: .hardware), nonce: nonce, counter: 3)
            let pt = try ChaCha20.xor(m, key: SymmetricKey(data: key).pinned(to: .portable), nonce: nonce, counter: 3)
            if hw != pt { Issue.record("length \(n): kernel and portable differ"); return }
        }
        // A counter that wraps inside an eight-block group is refused, one that ends at 2^32 − 1 is not.
        let big = [UInt8](repeating: 0, count: 4096)
        for b in backends {
            let k = SymmetricKey(data: key).pinned(to: b)
            #expect(try ChaCha20.xor(big, key: k, nonce: nonce, counter: UInt32.max - 63).count == 4096)
            expectError(.invalidInputLength) { _ = try ChaCha20.xor(big, key: k, nonce: nonce, counter: UInt32.max - 62) }
        }
    }
}
