// Runners for the ChaCha20 (`chacha20`), ChaCha20-Poly1305 (`chacha20poly1305`, the RFC 8439 file and
// all Wycheproof cases) and Argon2id (`argon2id`) vector files. Every case runs on both backends (the
// AVX2 kernels and the portable code); the stream also split across calls at block boundaries.

import Foundation
@_spi(Testing) import Rampart

enum ChaChaArgon2Vectors {
    /// `chacha20`: key, nonce, counter, msg → out. One call, then split into two calls at several
    /// 64-byte boundaries (the second part continuing at the right block counter).
    static func chacha20Case(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let key = try hexField(c, "key", id), nonce = try hexField(c, "nonce", id), msg = try hexField(c, "msg", id)
        let want = try hexField(c, "out", id), counter = UInt32(try intField(c, "counter", id))
        return check("chacha20", id, expected: want) { b in
            let k = SymmetricKey(data: key).pinned(to: b)
            let one = try ChaCha20.xor(msg, key: k, nonce: nonce, counter: counter)
            for cut in [64, 256, 512, 576] where cut < msg.count {
                let a = try ChaCha20.xor(msg[..<cut], key: k, nonce: nonce, counter: counter)
                let rest = try ChaCha20.xor(msg[cut...], key: k, nonce: nonce, counter: counter + UInt32(cut / 64))
                if a + rest != one { return a + rest }
            }
            return one
        }
    }

    /// `chacha20poly1305`: valid cases must seal to `ct ‖ tag` and open (allocating and in-place
    /// forms); invalid ones must be refused by open, releasing nothing.
    static func aeadCase(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let key = try hexField(c, "key", id), nonce = try hexField(c, "nonce", id), aad = try hexField(c, "aad", id)
        let msg = try hexField(c, "msg", id), ct = try hexField(c, "ct", id), tag = try hexField(c, "tag", id)
        let valid = (c["result"] as? String) == "valid"
        let expected: [UInt8]? = valid ? ct + tag + msg : nil
        return checkOptional("chacha20poly1305", id, expected: expected) { b in
            let k = SymmetricKey(data: key).pinned(to: b)
            // Open first: an invalid case must be refused (a bad nonce length included).
            var opened: [UInt8]? = nil
            do {
                let n = try ChaChaPoly.Nonce(data: nonce)
                opened = try ChaChaPoly.open(try ChaChaPoly.SealedBox(nonce: n, ciphertext: ct, tag: tag), using: k,
                                             authenticating: aad)
            } catch RampartError.authenticationFailure {
            } catch RampartError.invalidNonceLength {}
            // The in-place open must agree and leave the buffer as ciphertext on failure.
            var buf = ct
            let inPlaceOK = buf.withUnsafeMutableBytes { bb in
                tag.withUnsafeBytes { t in nonce.withUnsafeBytes { n in aad.withUnsafeBytes { a in
                    (try? ChaChaPoly.open(bb, tag: t, using: k, nonce: n, authenticating: a)) != nil
                } } }
            }
            guard inPlaceOK == (opened != nil) else { throw VectorFileError.malformed(id, "in-place open disagrees") }
            guard let opened else {
                guard buf == ct else { throw VectorFileError.malformed(id, "failed in-place open changed the buffer") }
                return nil
            }
            guard buf == opened else { throw VectorFileError.malformed(id, "in-place open differs") }
            let box = try ChaChaPoly.seal(msg, using: k, nonce: try ChaChaPoly.Nonce(data: nonce), authenticating: aad)
            return box.ciphertext + box.tag + opened
        }
    }

    /// `argon2id`: password, salt, secret, ad, t, m, p → tag.
    static func argon2idCase(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let pw = try hexField(c, "password", id), salt = try hexField(c, "salt", id)
        let secret = try hexField(c, "secret", id), ad = try hexField(c, "ad", id), want = try hexField(c, "tag", id)
        let t = try intField(c, "t", id), m = try intField(c, "m", id), p = try intField(c, "p", id)
        return check("argon2id", id, expected: want) { b in
            try Argon2id.deriveKey(password: pw, salt: salt, iterations: t, memoryKiB: m, parallelism: p,
                                   outputByteCount: want.count, secret: secret, associatedData: ad, backend: b)
                .withUnsafeBytes { Array($0) }
        }
    }

    /// The Wycheproof file itself (`Vectors/collected/wycheproof/chacha20_poly1305_test.json`): every
    /// case through ``aeadCase(_:_:)`` (the project's converted copy is
    /// `Vectors/wycheproof_chacha20_poly1305.json`).
    static func wycheproofCollected(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let obj = json as? [String: Any], let groups = obj["testGroups"] as? [[String: Any]] else {
            throw VectorFileError.malformed(name, "no testGroups")
        }
        var out: [VectorResult] = []
        for g in groups {
            for t in g["tests"] as? [[String: Any]] ?? [] {
                var c = t
                c["nonce"] = t["iv"]
                let id = "\(name)#tc\(t["tcId"] as? Int ?? -1)"
                do { out.append(try aeadCase(id, c)) } catch {
                    out.append(VectorResult(family: "chacha20poly1305", id: id, passed: false, detail: "\(error)"))
                }
            }
        }
        return out
    }
}
