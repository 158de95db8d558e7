// Runners for AES vectors: the project's own files (kind `aes`), the files of Vectors/collected/ (NIST
// CAVP CBC-256 KAT/MMT/MCT, OpenSSL IGE, libsodium's AES-256-GCM cases, Wycheproof AES-GCM and
// AES-CBC-PKCS5, the AES entries of rfc_standard_vectors.json) and the MTProto handshake sample. Every case
// runs through both backends: the AES-NI kernels and the portable bitsliced code.

import Foundation
@_spi(Testing) import Rampart

/// AES helpers on arrays, pinned to a backend.
public enum AESVectorOps {
    /// ECB encryption or decryption of whole blocks.
    public static func ecb(key: [UInt8], _ data: [UInt8], encrypt: Bool, backend: Backend) throws -> [UInt8] {
        let c = try AES.Cipher(key: key, backend: backend)
        var out = data
        try out.withUnsafeMutableBytes { b in
            if encrypt { try c.encrypt(blocks: b) } else { try c.decrypt(blocks: b) }
        }
        return out
    }

    /// IGE, one call and split in two calls (the IV carried over); returns the one-call result or
    /// the split result when they differ.
    public static func ige(key: [UInt8], iv: [UInt8], _ data: [UInt8], encrypt: Bool, backend: Backend) throws -> [UInt8] {
        let c = try AES.Cipher(key: key, backend: backend)
        let one = encrypt ? try AES.IGE.encrypt(data, using: c, iv: iv) : try AES.IGE.decrypt(data, using: c, iv: iv)
        guard data.count >= 32 else { return one }
        let cut = 16 * (data.count / 32)
        var split = data, v = iv
        try split.withUnsafeMutableBytes { b in
            try v.withUnsafeMutableBytes { vb in
                for part in [UnsafeMutableRawBufferPointer(rebasing: b[..<cut]), UnsafeMutableRawBufferPointer(rebasing: b[cut...])] {
                    if encrypt { try AES.IGE.encrypt(part, using: c, iv: vb) } else { try AES.IGE.decrypt(part, using: c, iv: vb) }
                }
            }
        }
        return split == one ? one : split
    }

    /// CBC without padding.
    public static func cbc(key: [UInt8], iv: [UInt8], _ data: [UInt8], encrypt: Bool, backend: Backend) throws -> [UInt8] {
        let c = try AES.Cipher(key: key, backend: backend)
        return encrypt ? try AES.CBC.encrypt(data, using: c, iv: iv, padding: .none)
                       : try AES.CBC.decrypt(data, using: c, iv: iv, padding: .none)
    }

    /// CTR, one call and split at a few points.
    public static func ctr(key: [UInt8], counter: [UInt8], _ data: [UInt8], backend: Backend) throws -> [UInt8] {
        let c = try AES.Cipher(key: key, backend: backend)
        let one = try AES.CTR(cipher: c, counter: counter).process(data)
        for cut in [1, 15, 17, 64, 129] where cut < data.count {
            let s = try AES.CTR(cipher: c, counter: counter)
            let split = s.process(data[..<cut]) + s.process(data[cut...])
            if split != one { return split }
        }
        return one
    }

    /// GCM seal: ciphertext ‖ tag.
    public static func gcmSeal(key: [UInt8], nonce: [UInt8], aad: [UInt8], _ msg: [UInt8], backend: Backend) throws -> [UInt8] {
        let box = try AES.GCM.seal(msg, using: try AES.Cipher(key: key, backend: backend),
                                   nonce: try AES.GCM.Nonce(data: nonce), authenticating: aad)
        return box.ciphertext + box.tag
    }

    /// GCM open; `nil` when authentication fails (or the nonce is rejected).
    public static func gcmOpen(key: [UInt8], nonce: [UInt8], aad: [UInt8], _ ct: [UInt8], tag: [UInt8], backend: Backend) throws -> [UInt8]? {
        let cipher = try AES.Cipher(key: key, backend: backend)
        do {
            let box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: nonce), ciphertext: ct, tag: tag)
            return try AES.GCM.open(box, using: cipher, authenticating: aad)
        } catch RampartError.authenticationFailure {
            return nil
        } catch RampartError.invalidNonceLength {
            return nil
        }
    }
}

/// Runs `compute` on both backends and compares with `expected` (`nil`: must fail/reject).
func checkOptional(_ family: String, _ id: String, expected: [UInt8]?, _ compute: (Backend) throws -> [UInt8]?) -> VectorResult {
    var failures: [String] = []
    for b in allBackends {
        do {
            let got = try compute(b)
            if got != expected {
                failures.append("\(b): got \(got.map { Hex.encode($0) } ?? "rejection") want \(expected.map { Hex.encode($0) } ?? "rejection")")
            }
        } catch {
            failures.append("\(b): threw \(error)")
        }
    }
    return VectorResult(family: family, id: id, passed: failures.isEmpty, detail: failures.joined(separator: "; "))
}

extension OwnVectors {
    /// `{"mode": ecb|ige|cbc|cbc-pkcs7|ctr|gcm, "key", "iv"?, "nonce"?, "aad"?, "plaintext", "ciphertext", "tag"?}`:
    /// encryption must give the ciphertext and decryption the plaintext.
    static func aesCase(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let mode: String = try field(c, "mode", id)
        let key = try hexField(c, "key", id), pt = try hexField(c, "plaintext", id), ct = try hexField(c, "ciphertext", id)
        let family = "aes-" + mode
        switch mode {
        case "ecb":
            return both(check(family, id, expected: ct) { b in try AESVectorOps.ecb(key: key, pt, encrypt: true, backend: b) },
                        check(family, id, expected: pt) { b in try AESVectorOps.ecb(key: key, ct, encrypt: false, backend: b) })
        case "ige":
            let iv = try hexField(c, "iv", id)
            return both(check(family, id, expected: ct) { b in try AESVectorOps.ige(key: key, iv: iv, pt, encrypt: true, backend: b) },
                        check(family, id, expected: pt) { b in try AESVectorOps.ige(key: key, iv: iv, ct, encrypt: false, backend: b) })
        case "cbc":
            let iv = try hexField(c, "iv", id)
            return both(check(family, id, expected: ct) { b in try AESVectorOps.cbc(key: key, iv: iv, pt, encrypt: true, backend: b) },
                        check(family, id, expected: pt) { b in try AESVectorOps.cbc(key: key, iv: iv, ct, encrypt: false, backend: b) })
        case "cbc-pkcs7":
            let iv = try hexField(c, "iv", id)
            return both(check(family, id, expected: ct) { b in try AES.CBC.encrypt(pt, using: try AES.Cipher(key: key, backend: b), iv: iv) },
                        check(family, id, expected: pt) { b in try AES.CBC.decrypt(ct, using: try AES.Cipher(key: key, backend: b), iv: iv) })
        case "ctr":
            let iv = try hexField(c, "iv", id)
            return both(check(family, id, expected: ct) { b in try AESVectorOps.ctr(key: key, counter: iv, pt, backend: b) },
                        check(family, id, expected: pt) { b in try AESVectorOps.ctr(key: key, counter: iv, ct, backend: b) })
        case "gcm":
            let nonce = try hexField(c, "nonce", id), aad = try hexField(c, "aad", id), tag = try hexField(c, "tag", id)
            return both(check(family, id, expected: ct + tag) { b in try AESVectorOps.gcmSeal(key: key, nonce: nonce, aad: aad, pt, backend: b) },
                        checkOptional(family, id, expected: pt) { b in
                            try AESVectorOps.gcmOpen(key: key, nonce: nonce, aad: aad, ct, tag: tag, backend: b)
                        })
        default:
            throw VectorFileError.malformed(id, "unknown AES mode \(mode)")
        }
    }

    /// Merges two results of one case.
    static func both(_ a: VectorResult, _ b: VectorResult) -> VectorResult {
        VectorResult(family: a.family, id: a.id, passed: a.passed && b.passed,
                     detail: [a.detail, b.detail].filter { !$0.isEmpty }.joined(separator: "; "))
    }
}

extension CollectedVectors {
    /// NIST CAVP AESAVS `.rsp` files for CBC with 256-bit keys: KAT (GFSbox, KeySbox, VarKey, VarTxt)
    /// and MMT cases are single encryptions/decryptions; MCT cases run the 1000-step Monte Carlo
    /// chain of AESVS section 6.4.2 from each record's KEY/IV/input.
    static func cavpCBC(_ name: String, _ raw: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let data = raw as? Data else { throw VectorFileError.malformed(name, "not text") }
        let text = String(decoding: data, as: UTF8.self)
        let monteCarlo = name.contains("MCT")
        var out: [VectorResult] = []
        var encrypt = true
        var record: [String: String] = [:]
        func flush() throws {
            guard let count = record["COUNT"], let k = record["KEY"], let v = record["IV"],
                  let p = record["PLAINTEXT"], let c = record["CIPHERTEXT"] else { record = [:]; return }
            let key = try Hex.decode(k), iv = try Hex.decode(v), pt = try Hex.decode(p), ct = try Hex.decode(c)
            let id = "\(name)#\(encrypt ? "encrypt" : "decrypt")-\(count)"
            let family = monteCarlo ? "aes-cbc-mct" : "aes-cbc"
            if monteCarlo {
                out.append(check(family, id, expected: encrypt ? ct : pt) { b in
                    try cbcMonteCarlo(key: key, iv: iv, input: encrypt ? pt : ct, encrypt: encrypt, backend: b)
                })
            } else if encrypt {
                out.append(check(family, id, expected: ct) { b in try AESVectorOps.cbc(key: key, iv: iv, pt, encrypt: true, backend: b) })
            } else {
                out.append(check(family, id, expected: pt) { b in try AESVectorOps.cbc(key: key, iv: iv, ct, encrypt: false, backend: b) })
            }
            record = [:]
        }
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let s = line.trimmingCharacters(in: .whitespaces)
            if s == "[ENCRYPT]" { try flush(); encrypt = true; continue }
            if s == "[DECRYPT]" { try flush(); encrypt = false; continue }
            if s.isEmpty { try flush(); continue }
            if s.hasPrefix("#") { continue }
            let parts = s.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2 { record[parts[0]] = parts[1] }
        }
        try flush()
        return out
    }

    /// One AESVS CBC Monte Carlo record: 1000 chained block operations, returning the last output.
    static func cbcMonteCarlo(key: [UInt8], iv: [UInt8], input: [UInt8], encrypt: Bool, backend: Backend) throws -> [UInt8] {
        let cipher = try AES.Cipher(key: key, backend: backend)
        var chain = iv            // the CBC chaining value, advanced by each call
        var block = input         // the block fed to step j
        var previous: [UInt8] = [] // output of step j - 1
        var output: [UInt8] = []
        for j in 0..<1000 {
            output = block
            try output.withUnsafeMutableBytes { b in
                try chain.withUnsafeMutableBytes { v in
                    if encrypt { try AES.CBC.encrypt(b, using: cipher, iv: v) } else { try AES.CBC.decrypt(b, using: cipher, iv: v) }
                }
            }
            block = j == 0 ? iv : previous
            previous = output
        }
        return output
    }

    /// `ige_openssl.json`: `{"ige": [{key, iv, in, out, op}]}` from OpenSSL's test/igetest.c.
    static func igeOpenSSL(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let d = json as? [String: Any], let list = d["ige"] as? [[String: Any]] else { throw VectorFileError.malformed(name, "no ige list") }
        return try list.enumerated().map { i, c in
            let id = "\(name)#\(i)"
            let key = try hexField(c, "key", id), iv = try hexField(c, "iv", id)
            let input = try hexField(c, "in", id), output = try hexField(c, "out", id)
            let encrypt = (c["op"] as? String) != "decrypt"
            return OwnVectors.both(
                check("aes-ige", id, expected: output) { b in try AESVectorOps.ige(key: key, iv: iv, input, encrypt: encrypt, backend: b) },
                check("aes-ige", id, expected: input) { b in try AESVectorOps.ige(key: key, iv: iv, output, encrypt: !encrypt, backend: b) })
        }
    }

    /// `mtproto/handshake_sample.json`: the AES-256-IGE steps of the auth-key sample.
    /// tmp_aes_key/tmp_aes_iv decrypt encrypted_answer to answer_with_hash (and back), and encrypt
    /// SHA1(client_DH_inner_data) ‖ client_DH_inner_data ‖ padding to client_encrypted_data.
    static func mtprotoHandshakeAES(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let d = json as? [String: Any] else { throw VectorFileError.malformed(name, "not an object") }
        let key = try hexField(d, "tmp_aes_key", name), iv = try hexField(d, "tmp_aes_iv", name)
        let answer = try hexField(d, "answer_with_hash", name), encrypted = try hexField(d, "encrypted_answer", name)
        var out = [
            check("aes-ige", "\(name)#encrypted_answer", expected: answer) { b in
                try AESVectorOps.ige(key: key, iv: iv, encrypted, encrypt: false, backend: b)
            },
            check("aes-ige", "\(name)#answer_with_hash", expected: encrypted) { b in
                try AESVectorOps.ige(key: key, iv: iv, answer, encrypt: true, backend: b)
            },
        ]
        if let inner = try? hexField(d, "client_dh_inner_data", name), let padding = try? hexField(d, "client_padding", name),
           let want = try? hexField(d, "client_encrypted_data", name) {
            let plain = Insecure.SHA1.hash(data: inner).bytes + inner + padding
            out.append(check("aes-ige", "\(name)#client_encrypted_data", expected: want) { b in
                try AESVectorOps.ige(key: key, iv: iv, plain, encrypt: true, backend: b)
            })
        }
        return out
    }

    /// `aes256gcm_libsodium.json`: libsodium's 383 AES-256-GCM cases (seal, and open of the result).
    static func sodiumAES256GCM(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let d = json as? [String: Any], let tests = d["tests"] as? [[String: Any]] else { throw VectorFileError.malformed(name, "no tests") }
        return try tests.enumerated().map { i, c in
            let id = "\(name)#\(i)"
            let key = try hexField(c, "key", id), nonce = try hexField(c, "nonce", id), msg = try hexField(c, "message", id)
            let ad = try hexField(c, "ad", id), ct = try hexField(c, "ciphertext", id), tag = try hexField(c, "tag", id)
            return OwnVectors.both(
                check("aes-gcm", id, expected: ct + tag) { b in try AESVectorOps.gcmSeal(key: key, nonce: nonce, aad: ad, msg, backend: b) },
                checkOptional("aes-gcm", id, expected: msg) { b in try AESVectorOps.gcmOpen(key: key, nonce: nonce, aad: ad, ct, tag: tag, backend: b) })
        }
    }

    /// Wycheproof `aes_gcm_test.json`: valid cases must seal to ct ‖ tag and open; invalid ones
    /// (modified tags, an empty IV) must be rejected.
    static func wycheproofAESGCM(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let d = json as? [String: Any], let groups = d["testGroups"] as? [[String: Any]] else { throw VectorFileError.malformed(name, "no testGroups") }
        var out: [VectorResult] = []
        for g in groups {
            for t in g["tests"] as? [[String: Any]] ?? [] {
                let id = "\(name)#\(t["tcId"] as? Int ?? -1)"
                let key = try hexField(t, "key", id), iv = try hexField(t, "iv", id), aad = try hexField(t, "aad", id)
                let msg = try hexField(t, "msg", id), ct = try hexField(t, "ct", id), tag = try hexField(t, "tag", id)
                let valid = (t["result"] as? String) == "valid"
                let opened = checkOptional("aes-gcm", id, expected: valid ? msg : nil) { b in
                    try AESVectorOps.gcmOpen(key: key, nonce: iv, aad: aad, ct, tag: tag, backend: b)
                }
                if valid {
                    out.append(OwnVectors.both(check("aes-gcm", id, expected: ct + tag) { b in
                        try AESVectorOps.gcmSeal(key: key, nonce: iv, aad: aad, msg, backend: b)
                    }, opened))
                } else {
                    out.append(opened)
                }
            }
        }
        return out
    }

    /// Wycheproof `aes_cbc_pkcs5_test.json`: valid cases encrypt (with PKCS#7) to ct and decrypt back;
    /// invalid ones (bad padding) must fail with ``RampartError/invalidPadding``.
    static func wycheproofAESCBC(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let d = json as? [String: Any], let groups = d["testGroups"] as? [[String: Any]] else { throw VectorFileError.malformed(name, "no testGroups") }
        var out: [VectorResult] = []
        for g in groups {
            for t in g["tests"] as? [[String: Any]] ?? [] {
                let id = "\(name)#\(t["tcId"] as? Int ?? -1)"
                let key = try hexField(t, "key", id), iv = try hexField(t, "iv", id)
                let msg = try hexField(t, "msg", id), ct = try hexField(t, "ct", id)
                let valid = (t["result"] as? String) == "valid"
                let decrypted = checkOptional("aes-cbc-pkcs7", id, expected: valid ? msg : nil) { b in
                    do {
                        return try AES.CBC.decrypt(ct, using: try AES.Cipher(key: key, backend: b), iv: iv)
                    } catch RampartError.invalidPadding {
                        return nil
                    } catch RampartError.invalidInputLength {
                        return nil
                    }
                }
                if valid {
                    out.append(OwnVectors.both(check("aes-cbc-pkcs7", id, expected: ct) { b in
                        try AES.CBC.encrypt(msg, using: try AES.Cipher(key: key, backend: b), iv: iv)
                    }, decrypted))
                } else {
                    out.append(decrypted)
                }
            }
        }
        return out
    }

    /// The AES entries of `rfc_standard_vectors.json`: FIPS-197 C.3 and GCM spec cases 13, 14, 16.
    static func aesRFCStandard(_ name: String, _ d: [String: Any]) throws -> [VectorResult] {
        var out: [VectorResult] = []
        if let c = d["fips197_c3_aes256"] as? [String: Any] {
            let key = try hexField(c, "key", name), pt = try hexField(c, "pt", name), ct = try hexField(c, "ct", name)
            out.append(OwnVectors.both(
                check("aes-ecb", "\(name)#fips197_c3_aes256", expected: ct) { b in try AESVectorOps.ecb(key: key, pt, encrypt: true, backend: b) },
                check("aes-ecb", "\(name)#fips197_c3_aes256", expected: pt) { b in try AESVectorOps.ecb(key: key, ct, encrypt: false, backend: b) }))
        }
        var gcm: [(String, [String: Any])] = []
        for (i, c) in (d["gcm_spec_tc13_14_aes256"] as? [[String: Any]] ?? []).enumerated() { gcm.append(("gcm_spec_tc13_14_aes256[\(i)]", c)) }
        if let c = d["gcm_spec_tc16_aes256"] as? [String: Any] { gcm.append(("gcm_spec_tc16_aes256", c)) }
        for (key, c) in gcm {
            let k = try hexField(c, "key", name), iv = try hexField(c, "iv", name), pt = try hexField(c, "pt", name)
            let aad = try hexField(c, "aad", name), ctTag = try hexField(c, "ct_tag", name)
            out.append(check("aes-gcm", "\(name)#\(key)", expected: ctTag) { b in try AESVectorOps.gcmSeal(key: k, nonce: iv, aad: aad, pt, backend: b) })
        }
        return out
    }

    /// The collected AES files (relative to `Vectors/`) and their runners, appended to the runner's
    /// list; the MTProto handshake sample's IGE steps run with the sample's own runner.
    static var aesRunners: [(String, VectorRunner.FileRunner)] { [
        ("collected/nist-cavp-aes/CBCGFSbox256.rsp", cavpCBC),
        ("collected/nist-cavp-aes/CBCKeySbox256.rsp", cavpCBC),
        ("collected/nist-cavp-aes/CBCVarKey256.rsp", cavpCBC),
        ("collected/nist-cavp-aes/CBCVarTxt256.rsp", cavpCBC),
        ("collected/nist-cavp-aes/CBCMMT256.rsp", cavpCBC),
        ("collected/nist-cavp-aes/CBCMCT256.rsp", cavpCBC),
        ("collected/ige_openssl.json", igeOpenSSL),
        ("collected/aes256gcm_libsodium.json", sodiumAES256GCM),
        ("collected/wycheproof/aes_gcm_test.json", wycheproofAESGCM),
        ("collected/wycheproof/aes_cbc_pkcs5_test.json", wycheproofAESCBC),
    ] }
}
