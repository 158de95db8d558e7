// The Diffie-Hellman parameter and value checks MTProto requires (auth-key generation and secret
// chats): Docs/MTProto.md §4 ("DH parameter and value checks").

/// MTProto's checks of Diffie-Hellman parameters (`dh_prime`, `g`) and public values (`g_a`, `g_b`).
public enum DiffieHellman {
    /// Telegram's well-known 2048-bit safe prime (`dh_prime` in every server_DH_inner_data).
    public static let telegramPrime: BigUInt = try! BigUInt(hex:
        "C71CAEB9C6B1C9048E6C522F70F13F73980D40238E3E21C14934D037563D930F"
        + "48198A0AA7C14058229493D22530F4DBFA336F6E0AC925139543AED44CCE7C37"
        + "20FD51F69458705AC68CD4FE6B6B13ABDC9746512969328454F18FAF8C595F64"
        + "2477FE96BB2A941D5BCD1D4AC8CC49880708FA9B378E3C4F3A9060BEE67CF9A4"
        + "A4A695811051907E162753B56B0F6B410DBA74D8A84B2A14B3144E0EF1284754"
        + "FD17ED950D5965B4B9DD46582DB1178D169C6BC465B0D6FF9CA3928FEF5B9AE4"
        + "E418FC15E83EBEA0F87FA9FF5EED70050DED2849F47BF959D956850CE929851F"
        + "0D8115F635B105EE2E4E15D04B2454BF6F4FADF034B10403119CD8E3B92FCC5B")

    /// Whether `p` is a 2048-bit safe prime: exactly 2048 bits (top bit set), `p` prime and
    /// `(p − 1) / 2` prime, each after `rounds` Miller-Rabin rounds (64 by default; the spec accepts
    /// 15 when time is short).
    ///
    /// Telegram's prime is recognised without testing when `useKnownPrimes` is true.
    public static func isSafePrime<R: RandomNumberGenerator>(_ p: BigUInt, rounds: Int = 64, useKnownPrimes: Bool = true,
                                                             using rng: inout R) -> Bool {
        guard p.bitWidth == 2048 else { return false }
        if useKnownPrimes && p == telegramPrime { return true }
        return isSafePrimeAnySize(p, rounds: rounds, using: &rng)
    }

    /// ``isSafePrime(_:rounds:useKnownPrimes:using:)`` with the system random number generator.
    public static func isSafePrime(_ p: BigUInt, rounds: Int = 64) -> Bool {
        var rng = SecureRandom()
        return isSafePrime(p, rounds: rounds, using: &rng)
    }

    /// Whether `p` and `(p − 1) / 2` are both (probably) prime, for any size.
    public static func isSafePrimeAnySize<R: RandomNumberGenerator>(_ p: BigUInt, rounds: Int = 64, using rng: inout R) -> Bool {
        guard p.isOdd, p.bitWidth >= 3 else { return false }
        let q = p >> 1
        if p.bitWidth > 13 {
            // Cheap filter on both at once: p = 2q + 1 has a small factor r when p ≡ 0 (mod r), and
            // q does when p ≡ 1 (mod r).
            for (product, primes) in smallPrimeGroups {
                let rp = p.remainder(dividingByWord: product)
                for r in primes {
                    let v = rp % r
                    if v == 0 || v == 1 { return false }
                }
            }
        }
        // q first: it fails more often for random inputs.
        return q.isProbablePrime(rounds: rounds, using: &rng) && p.isProbablePrime(rounds: rounds, using: &rng)
    }

    /// Whether `g` passes MTProto's generator rule for the safe prime `p`: g ∈ {2, …, 7} and g is a
    /// quadratic residue mod p (it generates the subgroup of order (p − 1)/2), by the residue table
    /// of Docs/MTProto.md §4. Does not test `p` itself.
    public static func isValidGenerator(_ g: Int, prime p: BigUInt) -> Bool {
        (try? checkGenerator(g, prime: p)) != nil
    }

    /// Throwing form of ``isValidGenerator(_:prime:)``.
    ///
    /// - Throws: ``RampartError/dhCheckFailed(_:)`` with `.generatorNotAllowed` for g outside 2…7,
    ///   `.generatorNotQuadraticResidue` when the residue condition fails.
    public static func checkGenerator(_ g: Int, prime p: BigUInt) throws(RampartError) {
        let ok: Bool
        switch g {
        case 2: ok = p.remainder(dividingByWord: 8) == 7
        case 3: ok = p.remainder(dividingByWord: 3) == 2
        case 4: ok = true
        case 5: let r = p.remainder(dividingByWord: 5); ok = r == 1 || r == 4
        case 6: let r = p.remainder(dividingByWord: 24); ok = r == 19 || r == 23
        case 7: let r = p.remainder(dividingByWord: 7); ok = r == 3 || r == 5 || r == 6
        default: throw .dhCheckFailed(.generatorNotAllowed)
        }
        if !ok { throw .dhCheckFailed(.generatorNotQuadraticResidue) }
    }

    /// Checks a public value `g_a` or `g_b` against the 2048-bit prime `p`: 1 < v < p − 1 and
    /// 2^(2048−64) ≤ v ≤ p − 2^(2048−64).
    ///
    /// - Throws: ``RampartError/dhCheckFailed(_:)`` with `.valueOutOfRange`, or `.primeBitLength`
    ///   when `p` is not 2048 bits long.
    public static func checkPublicValue(_ v: BigUInt, prime p: BigUInt) throws(RampartError) {
        guard p.bitWidth == 2048 else { throw .dhCheckFailed(.primeBitLength) }
        let one = BigUInt(1)
        let bound = one << (2048 - 64)
        guard let pMinus1 = p.subtracting(one), let upper = p.subtracting(bound) else {
            throw .dhCheckFailed(.valueOutOfRange)
        }
        guard v > one, v < pMinus1, v >= bound, v <= upper else { throw .dhCheckFailed(.valueOutOfRange) }
    }

    /// All parameter checks for a received (g, dh_prime): the prime is a 2048-bit safe prime and g
    /// passes the generator rule (g itself then satisfies 1 < g < p − 1).
    ///
    /// - Throws: ``RampartError/dhCheckFailed(_:)`` naming the first failed check.
    public static func checkParameters<R: RandomNumberGenerator>(g: Int, prime p: BigUInt, rounds: Int = 64,
                                                                 using rng: inout R) throws(RampartError) {
        guard p.bitWidth == 2048 else { throw .dhCheckFailed(.primeBitLength) }
        try checkGenerator(g, prime: p)
        guard isSafePrime(p, rounds: rounds, using: &rng) else { throw .dhCheckFailed(.notSafePrime) }
    }
}
