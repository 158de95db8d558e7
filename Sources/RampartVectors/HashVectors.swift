// Runners for SHA-1/256/512, HMAC and PBKDF2 vectors.

import Foundation
@_spi(Testing) import Rampart

/// Hashes `msg` with the named algorithm on `backend`.
public func digest(_ algorithm: String, _ msg: UnsafeRawBufferPointer, backend: Backend) throws -> [UInt8] {
    switch algorithm {
    case "sha1": var h = Insecure.SHA1(backend: backend); h.update(bufferPointer: msg); return h.finalize().bytes
    case "sha256": var h = SHA256(backend: backend); h.update(bufferPointer: msg); return h.finalize().bytes
    case "sha512": var h = SHA512(backend: backend); h.update(bufferPointer: msg); return h.finalize().bytes
    case "md5": var h = Insecure.MD5(backend: backend); h.update(bufferPointer: msg); return h.finalize().bytes
    default: throw VectorFileError.malformed(algorithm, "unknown hash algorithm")
    }
}

/// HMAC of `msg` under `key` with the named hash on `backend`.
public func hmac(_ algorithm: String, key: [UInt8], _ msg: [UInt8], backend: Backend) throws -> [UInt8] {
    let k = SymmetricKey(data: key)
    switch algorithm {
    case "sha1":
        var h = HMAC<Insecure.SHA1>(key: k, makeHash: { Insecure.SHA1(backend: backend) }); h.update(data: msg); return h.finalize().bytes
    case "sha256":
        var h = HMAC<SHA256>(key: k, makeHash: { SHA256(backend: backend) }); h.update(data: msg); return h.finalize().bytes
    case "sha512":
        var h = HMAC<SHA512>(key: k, makeHash: { SHA512(backend: backend) }); h.update(data: msg); return h.finalize().bytes
    default: throw VectorFileError.malformed(algorithm, "unknown HMAC hash")
    }
}

func prf(_ name: String) throws -> PBKDF2.PseudoRandomFunction {
    switch name {
    case "sha1", "hmac-sha1": return .hmacSHA1
    case "sha256", "hmac-sha256": return .hmacSHA256
    case "sha512", "hmac-sha512": return .hmacSHA512
    default: throw VectorFileError.malformed(name, "unknown PBKDF2 PRF")
    }
}

/// PBKDF2 on `backend`.
public func pbkdf2(_ prfName: String, password: [UInt8], salt: [UInt8], iterations: Int, length: Int,
                   backend: Backend) throws -> [UInt8] {
    var out = [UInt8](repeating: 0, count: length)
    let p = try prf(prfName)
    try password.withUnsafeBytes { pw in
        try salt.withUnsafeBytes { s in
            try out.withUnsafeMutableBytes { o in
                try PBKDF2.derive(password: pw, salt: s, prf: p, iterations: iterations, into: o, backend: backend)
            }
        }
    }
    return out
}

enum OwnVectors {
    /// `{"algorithm", "msg" | ("repeat", "times"), "digest"}`
    static func hash(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let alg: String = try field(c, "algorithm", id)
        var msg: [UInt8]
        if c["repeat"] != nil {
            let unit = try hexField(c, "repeat", id)
            let times = try intField(c, "times", id)
            msg = []
            msg.reserveCapacity(unit.count * times)
            for _ in 0..<times { msg += unit }
        } else {
            msg = try hexField(c, "msg", id)
        }
        let want = try hexField(c, "digest", id)
        return check(alg, id, expected: want) { b in
            // One-shot, then the same message split at a few points across updates.
            let one = try msg.withUnsafeBytes { try digest(alg, $0, backend: b) }
            for cut in [1, 63, 64, 65, 127, 129] where cut < msg.count {
                let split = try splitDigest(alg, msg, cut, backend: b)
                if split != one { return split }
            }
            return one
        }
    }

    /// `{"algorithm", "key", "msg", "mac"}`; `mac` may be a truncated prefix.
    static func hmac(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let alg: String = try field(c, "algorithm", id)
        let key = try hexField(c, "key", id), msg = try hexField(c, "msg", id), want = try hexField(c, "mac", id)
        return check("hmac-" + alg, id, expected: want) { b in Array(try Rampart_hmac(alg, key, msg, b).prefix(want.count)) }
    }

    /// `{"prf", "password", "salt", "iterations", "dk"}`
    static func pbkdf2(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let p: String = try field(c, "prf", id)
        let pw = try hexField(c, "password", id), salt = try hexField(c, "salt", id), want = try hexField(c, "dk", id)
        let iters = try intField(c, "iterations", id)
        return check("pbkdf2-hmac-" + p, id, expected: want) { b in
            try RampartVectors.pbkdf2(p, password: pw, salt: salt, iterations: iters, length: want.count, backend: b)
        }
    }
}

extension OwnVectors {
    /// `{"hash", "ikm", "salt", "info", "okm"}`: HKDF (RFC 5869) with the hash pinned to a backend.
    static func hkdf(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let alg: String = try field(c, "hash", id)
        let ikm = SymmetricKey(data: try hexField(c, "ikm", id))
        let salt = try hexField(c, "salt", id), info = try hexField(c, "info", id), want = try hexField(c, "okm", id)
        return check("hkdf-" + alg, id, expected: want) { b in
            let key: SymmetricKey
            switch alg {
            case "sha1": key = HKDF<Insecure.SHA1>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info,
                                                            outputByteCount: want.count, makeHash: { Insecure.SHA1(backend: b) })
            case "sha256": key = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info,
                                                       outputByteCount: want.count, makeHash: { SHA256(backend: b) })
            case "sha512": key = HKDF<SHA512>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info,
                                                       outputByteCount: want.count, makeHash: { SHA512(backend: b) })
            default: throw VectorFileError.unknownFormat("hkdf hash \(alg)")
            }
            return key.withUnsafeBytes { Array($0) }
        }
    }
}

func Rampart_hmac(_ alg: String, _ key: [UInt8], _ msg: [UInt8], _ b: Backend) throws -> [UInt8] {
    try hmac(alg, key: key, msg, backend: b)
}

func splitDigest(_ alg: String, _ msg: [UInt8], _ cut: Int, backend: Backend) throws -> [UInt8] {
    switch alg {
    case "sha1":
        var h = Insecure.SHA1(backend: backend); h.update(data: msg[..<cut]); h.update(data: msg[cut...]); return h.finalize().bytes
    case "sha256":
        var h = SHA256(backend: backend); h.update(data: msg[..<cut]); h.update(data: msg[cut...]); return h.finalize().bytes
    case "sha512":
        var h = SHA512(backend: backend); h.update(data: msg[..<cut]); h.update(data: msg[cut...]); return h.finalize().bytes
    case "md5":
        var h = Insecure.MD5(backend: backend); h.update(data: msg[..<cut]); h.update(data: msg[cut...]); return h.finalize().bytes
    default: throw VectorFileError.malformed(alg, "unknown hash algorithm")
    }
}
