// Randomized differential tests of SHA-1/256/512 and BLAKE2b-512 against OpenSSL and libsodium.

import Testing
import RampartReference
@_spi(Testing) import Rampart
import RampartTestSupport

@Test(.enabled(if: openSSLPresentOrRequired, Comment(rawValue: noOpenSSL)),
      arguments: ["sha1", "sha256", "sha512", "blake2b-512"], backends)
func digestsMatchOpenSSL(_ alg: String, _ backend: Backend) throws {
    guard let o = requireOpenSSL() else { return }
    var rng = SplitMix64(seed: UInt64(alg.utf8.count * 7919))
    for n in crossLengths {
        let msg = rng.bytes(n)
        let want = try o.digest(alg, msg)
        let got = rampartDigest(alg, msg, backend: backend, offset: n % 8, rng: &rng)
        if got != want {
            Issue.record("\(alg) \(backend) length \(n): \(Hex.encode(got)) != OpenSSL \(Hex.encode(want))")
            return
        }
    }
}

@Test(.enabled(if: sodiumPresentOrRequired, Comment(rawValue: noSodium)),
      arguments: ["sha256", "sha512", "blake2b-512"], backends)
func digestsMatchLibsodium(_ alg: String, _ backend: Backend) throws {
    guard let s = requireSodium() else { return }
    var rng = SplitMix64(seed: UInt64(alg.utf8.count * 104729))
    for n in crossLengths where n % 3 == 0 || n > 1100 {
        let msg = rng.bytes(n)
        let want = try s.digest(alg, msg)
        let got = rampartDigest(alg, msg, backend: backend, offset: (n + 3) % 8, rng: &rng)
        if got != want {
            Issue.record("\(alg) \(backend) length \(n): \(Hex.encode(got)) != libsodium \(Hex.encode(want))")
            return
        }
    }
}

@Test(.enabled(if: sodiumPresentOrRequired, Comment(rawValue: noSodium)), arguments: backends)
func blake2bParametersMatchLibsodium(_ backend: Backend) throws {
    guard let s = requireSodium() else { return }
    var rng = SplitMix64(seed: 2026)
    for i in 0..<1500 {
        let outlen = Int.random(in: 1...64, using: &rng)
        let key = rng.bytes([0, 1, 16, 32, 63, 64, Int.random(in: 0...64, using: &rng)][i % 7])
        let salt: [UInt8]? = i % 2 == 0 ? rng.bytes(16) : nil
        let personal: [UInt8]? = i % 3 == 0 ? rng.bytes(16) : nil
        let msg = rng.bytes(Int.random(in: 0...600, using: &rng))
        let want = try s.blake2b(msg, outputLength: outlen, key: key, salt: salt, personal: personal)
        var h = try BLAKE2b(outputByteCount: outlen, key: key, salt: salt, personal: personal, backend: backend)
        let cut = msg.isEmpty ? 0 : Int.random(in: 0...msg.count, using: &rng)
        h.update(data: msg[..<cut])
        h.update(data: msg[cut...])
        let got = h.finalize().bytes
        if got != want {
            Issue.record("case \(i) outlen \(outlen) key \(key.count) salt \(salt != nil) personal \(personal != nil) msg \(msg.count)")
            return
        }
    }
}

/// MD5 against OpenSSL: every length 0...300 and the longer random ones, at unaligned offsets,
/// fed in random pieces (Insecure.MD5 has one path; the backend argument is ignored).
@Test(.enabled(if: openSSLPresentOrRequired, Comment(rawValue: noOpenSSL)))
func md5MatchesOpenSSL() throws {
    guard let o = requireOpenSSL() else { return }
    var rng = SplitMix64(seed: 1321)
    for n in Array(0...300) + crossLengths.filter({ $0 > 300 && $0 % 7 == 0 }) {
        let msg = rng.bytes(n)
        let want = try o.digest("md5", msg)
        for offset in [0, 1, 3, 7] {
            let got = rampartDigest("md5", msg, backend: .portable, offset: offset, rng: &rng)
            if got != want {
                Issue.record("md5 length \(n) offset \(offset): \(Hex.encode(got)) != OpenSSL \(Hex.encode(want))")
                return
            }
        }
    }
}
