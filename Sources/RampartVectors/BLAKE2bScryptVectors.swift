// Runners for BLAKE2b and scrypt vectors: the project's own files and the BLAKE2 collections of Vectors/collected/blake2/.

import Foundation
@_spi(Testing) import Rampart

/// BLAKE2b of `msg` on `backend`, one-shot and split at a few points across `update` calls; returns
/// the one-shot digest, or the first split result that differs from it.
public func blake2b(_ msg: [UInt8], outputLength: Int, key: [UInt8], salt: [UInt8]?, personal: [UInt8]?,
                    backend: Backend) throws -> [UInt8] {
    var h = try BLAKE2b(outputByteCount: outputLength, key: key, salt: salt, personal: personal, backend: backend)
    let fresh = h
    h.update(data: msg)
    let one = h.finalize().bytes
    for cut in [1, 127, 128, 129, 255] where cut < msg.count {
        var s = fresh
        s.update(data: msg[..<cut])
        s.update(data: msg[cut...])
        let d = s.finalize().bytes
        if d != one { return d }
    }
    return one
}

/// scrypt on `backend`.
public func scrypt(password: [UInt8], salt: [UInt8], n: Int, r: Int, p: Int, length: Int, backend: Backend) throws -> [UInt8] {
    var out = [UInt8](repeating: 0, count: length)
    try password.withUnsafeBytes { pw in
        try salt.withUnsafeBytes { s in
            try out.withUnsafeMutableBytes { o in
                try Scrypt.derive(password: pw, salt: s, n: n, r: r, p: p, into: o, memoryLimit: 1 << 31, backend: backend)
            }
        }
    }
    return out
}

func optionalHex(_ c: [String: Any], _ k: String, _ id: String) throws -> [UInt8]? {
    guard let s = c[k] as? String, !s.isEmpty else { return nil }
    return try hexField(c, k, id)
}

extension OwnVectors {
    /// `{"msg", "outlen", "key", "salt"?, "personal"?, "digest"}`
    static func blake2bCase(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let msg = try hexField(c, "msg", id), want = try hexField(c, "digest", id)
        let outlen = try intField(c, "outlen", id)
        let key = try optionalHex(c, "key", id) ?? [], salt = try optionalHex(c, "salt", id), personal = try optionalHex(c, "personal", id)
        return check("blake2b", id, expected: want) { b in
            try blake2b(msg, outputLength: outlen, key: key, salt: salt, personal: personal, backend: b)
        }
    }

    /// `{"password", "salt", "n", "r", "p", "dk"}`
    static func scryptCase(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let pw = try hexField(c, "password", id), salt = try hexField(c, "salt", id), want = try hexField(c, "dk", id)
        let n = try intField(c, "n", id), r = try intField(c, "r", id), p = try intField(c, "p", id)
        return check("scrypt", id, expected: want) { b in
            try scrypt(password: pw, salt: salt, n: n, r: r, p: p, length: want.count, backend: b)
        }
    }
}

extension CollectedVectors {
    /// The BLAKE2b and scrypt entries of `rfc_standard_vectors.json`.
    static func extraRFCStandard(_ name: String, _ d: [String: Any], _ options: VectorOptions) throws -> [VectorResult] {
        var out: [VectorResult] = []
        if let hex = d["rfc7693_blake2b512_abc"] as? String {
            let want = try Hex.decode(hex)
            out.append(check("blake2b", "\(name)#rfc7693_blake2b512_abc", expected: want) { b in
                try blake2b(Array("abc".utf8), outputLength: 64, key: [], salt: nil, personal: nil, backend: b)
            })
        }
        for (i, c) in (d["rfc7914_scrypt"] as? [[String: Any]] ?? []).enumerated() {
            let n = try intField(c, "N", name), r = try intField(c, "r", name), p = try intField(c, "p", name)
            if n * r > 16384 * 8 && !options.includeHeavy { continue }
            guard let pw = c["P"] as? String, let salt = c["S"] as? String else { continue }
            let want = try hexField(c, "dk", name)
            out.append(check("scrypt", "\(name)#rfc7914_scrypt[\(i)]", expected: want) { b in
                try scrypt(password: Array(pw.utf8), salt: Array(salt.utf8), n: n, r: r, p: p, length: want.count, backend: b)
            })
        }
        return out
    }

    /// `blake2/blake2b-kat-subset.json`: `[{"hash": "blake2b", "in", "key", "out"}]`.
    static func blake2bKATSubset(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let list = json as? [[String: Any]] else { throw VectorFileError.malformed(name, "not a list") }
        return try list.enumerated().compactMap { i, c in
            guard (c["hash"] as? String) == "blake2b" else { return nil }
            let id = "\(name)#\(i)"
            let msg = try hexField(c, "in", id), key = try hexField(c, "key", id), want = try hexField(c, "out", id)
            return check("blake2b", id, expected: want) { b in
                try blake2b(msg, outputLength: want.count, key: key, salt: nil, personal: nil, backend: b)
            }
        }
    }

    /// `blake2/blake2b-emilbayes-salt-personal.json`: `{"vectors": [{"outlen", "out", "input", "key", "salt", "personal"}]}`.
    static func blake2bSaltPersonal(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let d = json as? [String: Any], let list = d["vectors"] as? [[String: Any]] else {
            throw VectorFileError.malformed(name, "no vectors")
        }
        return try list.enumerated().map { i, c in
            let id = "\(name)#\(i)"
            let msg = try hexField(c, "input", id), want = try hexField(c, "out", id)
            let outlen = try intField(c, "outlen", id)
            let key = try optionalHex(c, "key", id) ?? [], salt = try optionalHex(c, "salt", id), personal = try optionalHex(c, "personal", id)
            return check("blake2b", id, expected: want) { b in
                try blake2b(msg, outputLength: outlen, key: key, salt: salt, personal: personal, backend: b)
            }
        }
    }

    /// `blake2/blake2b-kat.txt`: blocks of `in:\tHEX`, `key:\tHEX`, `hash:\tHEX`.
    static func blake2bKATText(_ name: String, _ raw: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let data = raw as? Data else { throw VectorFileError.malformed(name, "not text") }
        var out: [VectorResult] = []
        var fields: [String: String] = [:]
        func flush() throws {
            defer { fields = [:] }
            guard let hash = fields["hash"] else { return }
            let id = "\(name)#\(out.count)"
            let msg = try Hex.decode(fields["in"] ?? ""), key = try Hex.decode(fields["key"] ?? ""), want = try Hex.decode(hash)
            out.append(check("blake2b", id, expected: want) { b in
                try blake2b(msg, outputLength: want.count, key: key, salt: nil, personal: nil, backend: b)
            })
        }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            let t = line.trimmingCharacters(in: .whitespaces)
            if t.isEmpty { try flush(); continue }
            let parts = t.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        try flush()
        return out
    }

    /// `blake2/pycryptodome-blake2b-tv{1,2}.txt`: h(100) chains, h(1) = H(""), h(x) = H(h(x-1) || ... || h(1)),
    /// tv1 over digest sizes 1..64 (unkeyed), tv2 over key sizes 1..64 of "A"s (64-byte digests).
    static func blake2bChains(_ name: String, _ raw: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let data = raw as? Data else { throw VectorFileError.malformed(name, "not text") }
        let keyed = name.contains("tv2")
        var out: [VectorResult] = []
        var index = 0
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix("digest") {
            index += 1
            guard let colon = line.firstIndex(of: ":") else { continue }
            let want = try Hex.decode(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            let size = keyed ? 64 : want.count
            let key = keyed ? [UInt8](repeating: 0x41, count: index) : []
            out.append(check("blake2b", "\(name)#\(index)", expected: want) { b in
                var chain: [[UInt8]] = []
                for _ in 0..<100 {
                    let msg = Array(chain.reversed().joined())
                    var h = try BLAKE2b(outputByteCount: size, key: key, salt: nil, personal: nil, backend: b)
                    h.update(data: msg)
                    chain.append(h.finalize().bytes)
                }
                return chain.last!
            })
        }
        return out
    }
}
