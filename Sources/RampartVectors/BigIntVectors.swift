// Runners for the big-number vector files: kinds `modexp` (both exponentiation paths and, for odd
// moduli, BigUInt.power), `primality` (Miller-Rabin and, for 2048-bit entries, the safe-prime check)
// and `pq` (Pollard-Brent factorisation and its refusals).

import Foundation
@_spi(Testing) import Rampart
import RampartTestSupport

enum BigIntVectors {
    static func big(_ c: [String: Any], _ k: String, _ id: String) throws -> BigUInt {
        let s: String = try field(c, k, id)
        do { return try BigUInt(hex: s) } catch { throw VectorFileError.malformed(id, "bad hex in \(k)") }
    }

    static func modexp(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let b = try big(c, "base", id), e = try big(c, "exponent", id), m = try big(c, "modulus", id)
        let want = try big(c, "result", id)
        var failures: [String] = []
        if let got = try? b.power(e, modulo: m), got != want { failures.append("power: \(got)") }
        if m.isOdd, let mod = try? Modulus(m) {
            let ct = mod.constantTimePower(b, e), vt = mod.publicPower(b, e)
            if ct != want { failures.append("constantTimePower: \(ct)") }
            if vt != want { failures.append("publicPower: \(vt)") }
        }
        return VectorResult(family: "modexp", id: id, passed: failures.isEmpty, detail: failures.joined(separator: "; "))
    }

    static func primality(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let n = try big(c, "n", id)
        let prime: Bool = try field(c, "prime", id)
        let safe = c["safe"] as? Bool ?? false
        var rng = SplitMix64(seed: id.utf8.reduce(UInt64(0x5EED)) { $0 &* 31 &+ UInt64($1) })
        var failures: [String] = []
        // 2048-bit entries are costly in debug builds: a few rounds there, 16 otherwise.
        let rounds = n.bitWidth > 1024 ? 3 : 16
        if n.isProbablePrime(rounds: rounds, using: &rng) != prime { failures.append("isProbablePrime != \(prime)") }
        if n.bitWidth == 2048 && DiffieHellman.isSafePrime(n, rounds: rounds, useKnownPrimes: false, using: &rng) != safe {
            failures.append("isSafePrime != \(safe)")
        }
        return VectorResult(family: "primality", id: id, passed: failures.isEmpty, detail: failures.joined(separator: "; "))
    }

    static func pq(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let n = try big(c, "pq", id)
        if let err = c["error"] as? String {
            let expected: FactorizationFailure = err == "prime" ? .prime : .moreThanTwoFactors
            do {
                let r = try Factorization.factorPQ(n.low64)
                return VectorResult(family: "pq", id: id, passed: false, detail: "factored as \(r) instead of failing")
            } catch {
                return VectorResult(family: "pq", id: id, passed: error == .factorizationFailed(expected), detail: "\(error)")
            }
        }
        let p = try big(c, "p", id), q = try big(c, "q", id)
        do {
            let (gp, gq) = try Factorization.factorPQ(n.low64)
            let (bp, bq) = try Factorization.factorPQ(n)
            let ok = BigUInt(gp) == p && BigUInt(gq) == q && bp == p && bq == q
            return VectorResult(family: "pq", id: id, passed: ok, detail: ok ? "" : "got \(gp) \(gq) / \(bp) \(bq)")
        } catch {
            return VectorResult(family: "pq", id: id, passed: false, detail: "threw \(error)")
        }
    }
}
