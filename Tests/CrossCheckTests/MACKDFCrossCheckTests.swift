// Randomized differential tests of HMAC, PBKDF2 and scrypt against OpenSSL and libsodium.

import Testing
import RampartReference
@_spi(Testing) import Rampart
import RampartTestSupport

@Test(.enabled(if: openSSLPresentOrRequired, Comment(rawValue: noOpenSSL)),
      arguments: ["sha1", "sha256", "sha512"], backends)
func hmacMatchesOpenSSL(_ alg: String, _ backend: Backend) throws {
    guard let o = requireOpenSSL() else { return }
    var rng = SplitMix64(seed: 77 + UInt64(alg.utf8.count))
    for i in 0..<600 {
        let key = rng.bytes([0, 1, 20, 32, 63, 64, 65, 127, 128, 129, 300][i % 11])
        let msg = rng.bytes(i < 300 ? i : Int.random(in: 0...4096, using: &rng))
        let want = try o.hmac(alg, key: key, data: msg)
        let k = SymmetricKey(data: key)
        let got: [UInt8]
        switch alg {
        case "sha1": var h = HMAC<Insecure.SHA1>(key: k, makeHash: { Insecure.SHA1(backend: backend) }); h.update(data: msg); got = h.finalize().bytes
        case "sha256": var h = HMAC<SHA256>(key: k, makeHash: { SHA256(backend: backend) }); h.update(data: msg); got = h.finalize().bytes
        default: var h = HMAC<SHA512>(key: k, makeHash: { SHA512(backend: backend) }); h.update(data: msg); got = h.finalize().bytes
        }
        if got != want {
            Issue.record("HMAC-\(alg) \(backend) key \(key.count) msg \(msg.count) differs from OpenSSL")
            return
        }
    }
}

@Test(.enabled(if: sodiumPresentOrRequired, Comment(rawValue: noSodium)))
func hmacSHA256MatchesLibsodium() throws {
    guard let s = requireSodium() else { return }
    var rng = SplitMix64(seed: 99)
    for i in 0..<400 {
        let key = rng.bytes(i % 150), msg = rng.bytes(Int.random(in: 0...2000, using: &rng))
        let got = HMAC<SHA256>.authenticationCode(for: msg, using: SymmetricKey(data: key)).bytes
        #expect(got == s.hmacSHA256(key: key, data: msg), "key \(key.count) msg \(msg.count)")
    }
}

@Test(.enabled(if: openSSLPresentOrRequired, Comment(rawValue: noOpenSSL)),
      arguments: [PBKDF2.PseudoRandomFunction.hmacSHA1, .hmacSHA256, .hmacSHA512], backends)
func pbkdf2MatchesOpenSSL(_ prf: PBKDF2.PseudoRandomFunction, _ backend: Backend) throws {
    guard let o = requireOpenSSL() else { return }
    let name = prf == .hmacSHA1 ? "sha1" : prf == .hmacSHA256 ? "sha256" : "sha512"
    var rng = SplitMix64(seed: 5 + UInt64(name.utf8.count))
    for i in 0..<40 {
        let pw = rng.bytes(Int.random(in: 0...200, using: &rng)), salt = rng.bytes(Int.random(in: 0...70, using: &rng))
        let iterations = [1, 2, 3, 17, 100, 1000][i % 6]
        let length = Int.random(in: 1...150, using: &rng)
        let want = try o.pbkdf2(name, password: pw, salt: salt, iterations: iterations, length: length)
        var got = [UInt8](repeating: 0, count: length)
        try pw.withUnsafeBytes { p in
            try salt.withUnsafeBytes { s in
                try got.withUnsafeMutableBytes { try PBKDF2.derive(password: p, salt: s, prf: prf, iterations: iterations, into: $0, backend: backend) }
            }
        }
        #expect(got == want, "PBKDF2-\(name) \(backend) pw \(pw.count) salt \(salt.count) c \(iterations) len \(length)")
    }
}

@Test(.enabled(if: openSSLPresentOrRequired || sodiumPresentOrRequired, Comment(rawValue: noSodium)), arguments: backends)
func scryptMatchesReferences(_ backend: Backend) throws {
    let o = requireOpenSSL(), s = requireSodium()
    var rng = SplitMix64(seed: 7914)
    for (n, r, p) in [(2, 1, 1), (4, 2, 1), (16, 1, 3), (64, 3, 2), (256, 8, 1), (1024, 1, 1), (8, 5, 4)] {
        let pw = rng.bytes(Int.random(in: 0...40, using: &rng)), salt = rng.bytes(Int.random(in: 0...40, using: &rng))
        let length = Int.random(in: 1...100, using: &rng)
        var got = [UInt8](repeating: 0, count: length)
        try pw.withUnsafeBytes { pp in
            try salt.withUnsafeBytes { ss in
                try got.withUnsafeMutableBytes {
                    try Scrypt.derive(password: pp, salt: ss, n: n, r: r, p: p, into: $0, memoryLimit: 1 << 30, backend: backend)
                }
            }
        }
        if let o {
            #expect(got == (try o.scrypt(password: pw, salt: salt, n: UInt64(n), r: UInt64(r), p: UInt64(p), length: length)), "OpenSSL n \(n) r \(r) p \(p)")
        }
        if let s {
            #expect(got == (try s.scrypt(password: pw, salt: salt, n: UInt64(n), r: UInt32(r), p: UInt32(p), length: length)), "libsodium n \(n) r \(r) p \(p)")
        }
    }
}
