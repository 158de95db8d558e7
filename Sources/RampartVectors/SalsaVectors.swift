// Runners for the Salsa20 family, Poly1305 and secretbox vectors: the project's own files (kinds
// `stream`, `hsalsa20`, `poly1305`, `secretbox`) and `collected/nacl_classic.json`. Every case runs
// on both backends (the AVX2 and the portable Salsa20 paths), one-shot and split across calls.

import Foundation
@_spi(Testing) import Rampart

enum SalsaVectors {
    /// Keystream XOR of `msg` from block `counter`, one call and split at a few points; returns the
    /// one-call result, or the first split result that differs from it.
    static func stream(_ cipher: String, key: [UInt8], nonce: [UInt8], counter: UInt64, _ msg: [UInt8],
                       backend: Backend) throws -> [UInt8] {
        let k = SymmetricKey(data: key)
        func make() throws -> (inout [UInt8]) -> Void {
            if cipher == "salsa20" {
                var s = try Salsa20(key: k.pinned(to: backend), nonce: nonce, counter: counter)
                return { buf in buf.withUnsafeMutableBytes { s.xor(inPlace: $0) } }
            } else if cipher == "xsalsa20" {
                var s = try XSalsa20(key: k.pinned(to: backend), nonce: nonce, counter: counter)
                return { buf in buf.withUnsafeMutableBytes { s.xor(inPlace: $0) } }
            }
            throw VectorFileError.malformed(cipher, "unknown cipher")
        }
        let whole = try make()
        var one = msg
        whole(&one)
        for cut in [1, 63, 64, 65, 300, 511, 512, 513] where cut < msg.count {
            let split = try make()
            var a = Array(msg[..<cut]), b = Array(msg[cut...])
            split(&a)
            split(&b)
            if a + b != one { return a + b }
        }
        return one
    }

    /// SHA-256 of the first `length` keystream bytes (the NaCl 4 MiB checks).
    static func streamHash(_ cipher: String, key: [UInt8], nonce: [UInt8], length: Int, backend: Backend) throws -> [UInt8] {
        let k = SymmetricKey(data: key)
        var ks: [UInt8]
        if cipher == "salsa20" {
            var s = try Salsa20(key: k.pinned(to: backend), nonce: nonce)
            ks = s.keystream(count: length)
        } else {
            var s = try XSalsa20(key: k.pinned(to: backend), nonce: nonce)
            ks = s.keystream(count: length)
        }
        return SHA256.hash(data: ks).withUnsafeBytes { Array($0) }
    }

    /// Seals on `backend`, checks that every form agrees and that open returns the message; returns
    /// the combined box.
    static func secretbox(key: [UInt8], nonce: [UInt8], msg: [UInt8], backend: Backend) throws -> [UInt8] {
        let k = SymmetricKey(data: key)
        let box = try SecretBox.seal(msg, using: k.pinned(to: backend), nonce: nonce)
        let opened = try SecretBox.open(box, using: k.pinned(to: backend), nonce: nonce)
        guard opened == msg else { throw VectorFileError.malformed("secretbox", "open did not return the message") }
        var inPlace = msg
        var tag = [UInt8](repeating: 0, count: 16)
        try inPlace.withUnsafeMutableBytes { b in
            try tag.withUnsafeMutableBytes { t in try SecretBox.seal(inPlace: b, tag: t, using: k.pinned(to: backend), nonce: nonce) }
        }
        guard tag + inPlace == box else { throw VectorFileError.malformed("secretbox", "in-place seal differs from combined") }
        // A corrupted box must not open.
        if !box.isEmpty {
            var bad = box
            bad[bad.count / 2] ^= 0x01
            do {
                _ = try SecretBox.open(bad, using: k.pinned(to: backend), nonce: nonce)
                throw VectorFileError.malformed("secretbox", "a corrupted box opened")
            } catch RampartError.authenticationFailure {}
        }
        return box
    }

    /// Poly1305 one-shot and split across updates; returns the one-shot tag or the first differing one.
    static func poly1305(key: [UInt8], msg: [UInt8]) throws -> [UInt8] {
        let k = SymmetricKey(data: key)
        let one = try Poly1305.authenticationCode(for: msg, using: k).bytes
        for cut in [1, 15, 16, 17, 100] where cut < msg.count {
            var m = try Poly1305(key: k)
            m.update(data: msg[..<cut])
            m.update(data: msg[cut...])
            let t = m.finalize().bytes
            if t != one { return t }
        }
        return one
    }
}

extension OwnVectors {
    /// `{"cipher": "salsa20"|"xsalsa20", "key", "nonce", "counter"?, "msg", "out"}` or
    /// `{"cipher", "key", "nonce", "length", "sha256"}`.
    static func streamCase(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let cipher: String = try field(c, "cipher", id)
        let key = try hexField(c, "key", id), nonce = try hexField(c, "nonce", id)
        if c["sha256"] != nil {
            let length = try intField(c, "length", id), want = try hexField(c, "sha256", id)
            return check(cipher, id, expected: want) { b in
                try SalsaVectors.streamHash(cipher, key: key, nonce: nonce, length: length, backend: b)
            }
        }
        let counter = (c["counter"] as? NSNumber)?.uint64Value ?? 0
        let msg = try hexField(c, "msg", id), want = try hexField(c, "out", id)
        return check(cipher, id, expected: want) { b in
            try SalsaVectors.stream(cipher, key: key, nonce: nonce, counter: counter, msg, backend: b)
        }
    }

    /// `{"key", "input", "output"}`
    static func hsalsa20Case(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let key = try hexField(c, "key", id), input = try hexField(c, "input", id), want = try hexField(c, "output", id)
        return check("hsalsa20", id, expected: want) { _ in
            try HSalsa20.hash(key: SymmetricKey(data: key), input: input).withUnsafeBytes { Array($0) }
        }
    }

    /// `{"key", "msg", "tag"}`
    static func poly1305Case(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let key = try hexField(c, "key", id), msg = try hexField(c, "msg", id), want = try hexField(c, "tag", id)
        return check("poly1305", id, expected: want) { _ in try SalsaVectors.poly1305(key: key, msg: msg) }
    }

    /// `{"key", "nonce", "msg", "box"}` (box = tag || ciphertext)
    static func secretboxCase(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let key = try hexField(c, "key", id), nonce = try hexField(c, "nonce", id)
        let msg = try hexField(c, "msg", id), want = try hexField(c, "box", id)
        return check("secretbox", id, expected: want) { b in
            try SalsaVectors.secretbox(key: key, nonce: nonce, msg: msg, backend: b)
        }
    }
}

extension CollectedVectors {
    /// `nacl_classic.json`: the classic NaCl values (HSalsa20 keys, secretbox, stream, onetimeauth).
    static func naclClassic(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let d = json as? [String: Any] else { throw VectorFileError.malformed(name, "not an object") }
        func hex(_ k: String) throws -> [UInt8] { try hexField(d, k, name) }
        let shared = try hex("x25519_shared_raw"), firstkey = try hex("hsalsa20_shared_zero16__firstkey__box_beforenm")
        let nonce = try hex("nonce24"), secondkey = try hex("hsalsa20_firstkey_nonce0_16__secondkey")
        let m = try hex("m131"), box = try hex("box__tag16_then_ct131")
        let rs = try hex("xsalsa20_keystream_first32__poly1305_key_rs"), tag = try hex("poly1305_tag_over_ct131_with_rs")
        let hash = try hex("xsalsa20_4MiB_sha256")
        var out: [VectorResult] = []
        out.append(check("hsalsa20", "\(name)#core1", expected: firstkey) { _ in
            try HSalsa20.hash(key: SymmetricKey(data: shared), input: [UInt8](repeating: 0, count: 16)).withUnsafeBytes { Array($0) }
        })
        out.append(check("hsalsa20", "\(name)#core2", expected: secondkey) { _ in
            try HSalsa20.hash(key: SymmetricKey(data: firstkey), input: nonce[..<16]).withUnsafeBytes { Array($0) }
        })
        out.append(check("secretbox", "\(name)#secretbox", expected: box) { b in
            try SalsaVectors.secretbox(key: firstkey, nonce: nonce, msg: m, backend: b)
        })
        out.append(check("xsalsa20", "\(name)#stream3", expected: rs) { b in
            try SalsaVectors.stream("xsalsa20", key: firstkey, nonce: nonce, counter: 0, [UInt8](repeating: 0, count: 32), backend: b)
        })
        out.append(check("xsalsa20", "\(name)#stream4", expected: rs + box[16...]) { b in
            try SalsaVectors.stream("xsalsa20", key: firstkey, nonce: nonce, counter: 0, [UInt8](repeating: 0, count: 32) + m, backend: b)
        })
        out.append(check("poly1305", "\(name)#onetimeauth", expected: tag) { _ in try SalsaVectors.poly1305(key: rs, msg: Array(box[16...])) })
        out.append(check("xsalsa20", "\(name)#stream-4MiB", expected: hash) { b in
            try SalsaVectors.streamHash("xsalsa20", key: firstkey, nonce: nonce, length: 4_194_304, backend: b)
        })
        out.append(check("salsa20", "\(name)#stream2-4MiB", expected: hash) { b in
            try SalsaVectors.streamHash("salsa20", key: secondkey, nonce: Array(nonce[16...]), length: 4_194_304, backend: b)
        })
        return out
    }
}
