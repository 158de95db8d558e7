// Runners for X25519 and NaCl box vectors: the project's `rfc7748_x25519.json` ("x25519") and
// `nacl_box.json` ("box"), and Wycheproof's `collected/wycheproof/x25519_test.json`.

import Foundation
@_spi(Testing) import Rampart

extension OwnVectors {
    /// `"kind": "x25519"`: `scalar`, `u`, `out` (raw X25519), or `iterations` and `out` (RFC 7748's
    /// iterated function from k = u = 9).
    static func x25519Case(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let want = try hexField(c, "out", id)
        if let n = c["iterations"] as? Int {
            return checkConcurrently("x25519", id, expected: want) { b in
                var k = [UInt8](repeating: 0, count: 32); k[0] = 9
                var u = k
                for _ in 0..<n {
                    let r = try Curve25519.scalarMultiply(scalar: k, point: u, backend: b)
                    u = k; k = r
                }
                return k
            }
        }
        let scalar = try hexField(c, "scalar", id), u = try hexField(c, "u", id)
        return check("x25519", id, expected: want) { b in
            try Curve25519.scalarMultiply(scalar: scalar, point: u, backend: b)
        }
    }

    /// `"kind": "box"`: `sk`, `pk`, `nonce`, `m`, `beforenm`, `box` (tag || ciphertext). Checks the
    /// precomputed key, the one-shot seal, and that open returns `m`.
    static func boxCase(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let sk = try hexField(c, "sk", id), pk = try hexField(c, "pk", id), nonce = try hexField(c, "nonce", id)
        let m = try hexField(c, "m", id), beforenm = try hexField(c, "beforenm", id), box = try hexField(c, "box", id)
        return checkOnce("box", id, expected: beforenm + box + m) {
            let priv = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: sk)
            let pub = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: pk)
            let shared = try Box.SharedKey(publicKey: pub, privateKey: priv)
            let k = shared.symmetricKey.withUnsafeBytes { Array($0) }
            // Seal one way (sk -> pk) and open the published box, as the vector's two ids describe.
            let sealed = try Box.seal(m, nonce: nonce, to: pub, from: priv)
            let opened = try Box.open(box, nonce: nonce, from: pub, to: priv)
            return k + sealed + opened
        }
    }
}

extension CollectedVectors {
    /// Wycheproof `x25519_test.json`: every case (valid and acceptable: twist points, small-order and
    /// non-canonical public keys, edge-case scalars) through the raw function; cases whose shared
    /// secret is all zeros must also be refused by the key-agreement API.
    static func wycheproofX25519(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        guard let d = json as? [String: Any], let groups = d["testGroups"] as? [[String: Any]] else {
            throw VectorFileError.malformed(name, "no testGroups")
        }
        var out: [VectorResult] = []
        for g in groups {
            for t in g["tests"] as? [[String: Any]] ?? [] {
                let id = "\(name)#\(t["tcId"] as? Int ?? -1)"
                let pub = try hexField(t, "public", id), priv = try hexField(t, "private", id)
                let shared = try hexField(t, "shared", id)
                let result = t["result"] as? String ?? ""
                if result == "invalid" {
                    out.append(VectorResult(family: "x25519", id: id, passed: false, detail: "unexpected invalid case"))
                    continue
                }
                var r = check("x25519", id, expected: shared) { b in
                    try Curve25519.scalarMultiply(scalar: priv, point: pub, backend: b)
                }
                if r.passed && shared.allSatisfy({ $0 == 0 }) {
                    let k = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: priv)
                    let p = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: pub)
                    do {
                        _ = try k.sharedSecretFromKeyAgreement(with: p)
                        r = VectorResult(family: "x25519", id: id, passed: false, detail: "zero shared secret accepted")
                    } catch RampartError.invalidPublicKey {
                    } catch {
                        r = VectorResult(family: "x25519", id: id, passed: false, detail: "\(error)")
                    }
                }
                out.append(r)
            }
        }
        return out
    }
}

/// Like `check`, for primitives with a single implementation.
func checkOnce(_ family: String, _ id: String, expected: [UInt8], _ compute: () throws -> [UInt8]) -> VectorResult {
    do {
        let got = try compute()
        if got == expected { return VectorResult(family: family, id: id, passed: true) }
        return VectorResult(family: family, id: id, passed: false,
                            detail: "got \(Hex.encode(got)) want \(Hex.encode(expected))")
    } catch {
        return VectorResult(family: family, id: id, passed: false, detail: "threw \(error)")
    }
}
