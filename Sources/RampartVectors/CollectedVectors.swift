// Runners for the files of `Vectors/collected/`: published vectors in their original formats, copied
// byte for byte (origins, licences and SHA-256 in Vectors/README.md).

import Foundation
@_spi(Testing) import Rampart

enum CollectedVectors {
    /// `rfc_standard_vectors.json`: the hash/MAC/KDF entries (the cipher entries belong to later families).
    static func rfcStandard(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let d = json as? [String: Any] else { throw VectorFileError.malformed(name, "not an object") }
        var out: [VectorResult] = []
        func ascii(_ c: [String: Any], _ k: String) throws -> [UInt8] {
            guard let s = c[k] as? String else { throw VectorFileError.malformed(name, "missing \(k)") }
            // Strings with a NUL are written as "pass<NUL>word (70 61 73 73 00 77 6f 72 64)": use the bytes.
            if s.contains("<NUL>"), let open = s.firstIndex(of: "("), let close = s.lastIndex(of: ")") {
                let hex = s[s.index(after: open)..<close].filter { !$0.isWhitespace }
                return try Hex.decode(String(hex))
            }
            return Array(s.utf8)
        }
        let hashes: [(String, String, [UInt8])] = [
            ("sha256_abc", "sha256", Array("abc".utf8)),
            ("sha256_empty", "sha256", []),
            ("sha256_448bit", "sha256", Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
            ("sha256_million_a", "sha256", [UInt8](repeating: 0x61, count: 1_000_000)),
        ]
        for (key, alg, msg) in hashes {
            guard let hex = d[key] as? String else { continue }
            let want = try Hex.decode(hex)
            out.append(check(alg, "\(name)#\(key)", expected: want) { b in try msg.withUnsafeBytes { try digest(alg, $0, backend: b) } })
        }
        for key in ["rfc4231_hmac_sha256_tc1", "rfc4231_hmac_sha256_tc2"] {
            guard let c = d[key] as? [String: Any] else { continue }
            let k = try hexField(c, "key", name), msg = try ascii(c, "data"), want = try hexField(c, "mac", name)
            out.append(check("hmac-sha256", "\(name)#\(key)", expected: want) { b in try hmac("sha256", key: k, msg, backend: b) })
        }
        for (key, p) in [("rfc6070_pbkdf2_sha1", "sha1"), ("rfc7914_pbkdf2_sha256", "sha256"), ("pbkdf2_sha256_common", "sha256")] {
            guard let cases = d[key] as? [[String: Any]] else { continue }
            for (i, c) in cases.enumerated() {
                let iters = try intField(c, "c", name)
                if iters > 100_000 && !options.includeHeavy { continue }
                let pw = try ascii(c, "P"), salt = try ascii(c, "S"), want = try hexField(c, "dk", name)
                out.append(check("pbkdf2-hmac-" + p, "\(name)#\(key)[\(i)]", expected: want) { b in
                    try pbkdf2(p, password: pw, salt: salt, iterations: iters, length: want.count, backend: b)
                })
            }
        }
        out += try extraRFCStandard(name, d, options)
        out += try aesRFCStandard(name, d)
        return out
    }

    /// Wycheproof `hmac_sha256_test.json`: valid cases must match (tag may be truncated), invalid
    /// cases must be rejected by `isValidAuthenticationCode`.
    static func wycheproofHMAC(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let d = json as? [String: Any], let groups = d["testGroups"] as? [[String: Any]] else {
            throw VectorFileError.malformed(name, "no testGroups")
        }
        var out: [VectorResult] = []
        for g in groups {
            for t in g["tests"] as? [[String: Any]] ?? [] {
                let id = "\(name)#\(t["tcId"] as? Int ?? -1)"
                let key = try hexField(t, "key", id), msg = try hexField(t, "msg", id), tag = try hexField(t, "tag", id)
                let valid = (t["result"] as? String) == "valid"
                var failures: [String] = []
                for b in allBackends {
                    let full = try hmac("sha256", key: key, msg, backend: b)
                    let matches = !tag.isEmpty && full.count >= tag.count && ConstantTime.equals(full.prefix(tag.count), tag)
                    if matches != valid { failures.append("\(b): \(valid ? "mismatch" : "accepted invalid tag")") }
                }
                if tag.count == 32 {
                    let api = HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: msg, using: SymmetricKey(data: key))
                    if api != valid { failures.append("isValidAuthenticationCode returned \(api)") }
                }
                out.append(VectorResult(family: "hmac-sha256", id: id, passed: failures.isEmpty, detail: failures.joined(separator: "; ")))
            }
        }
        return out
    }

    /// Wycheproof `pbkdf2_hmacsha{1,256}_test.json`.
    static func wycheproofPBKDF2(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let d = json as? [String: Any], let groups = d["testGroups"] as? [[String: Any]] else {
            throw VectorFileError.malformed(name, "no testGroups")
        }
        let alg = (d["algorithm"] as? String ?? "").lowercased()
        let p = alg.hasSuffix("sha1") ? "sha1" : alg.hasSuffix("sha256") ? "sha256" : alg.hasSuffix("sha512") ? "sha512" : ""
        guard !p.isEmpty else { throw VectorFileError.malformed(name, "unknown algorithm \(alg)") }
        var out: [VectorResult] = []
        for g in groups {
            for t in g["tests"] as? [[String: Any]] ?? [] {
                let id = "\(name)#\(t["tcId"] as? Int ?? -1)"
                let iters = try intField(t, "iterationCount", id)
                if iters > 100_000 && !options.includeHeavy { continue }
                let pw = try hexField(t, "password", id), salt = try hexField(t, "salt", id), want = try hexField(t, "dk", id)
                let len = try intField(t, "dkLen", id)
                guard (t["result"] as? String) == "valid" else { continue }
                out.append(check("pbkdf2-hmac-" + p, id, expected: want) { b in
                    try pbkdf2(p, password: pw, salt: salt, iterations: iters, length: len, backend: b)
                })
            }
        }
        return out
    }
}
