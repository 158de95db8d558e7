// Primality: trial division by small primes, then Miller-Rabin with random bases from an injected
// generator. Random prime generation for RSA keys.

/// The odd primes below 2048 (306 of them), for trial division and sieving.
@usableFromInline
let smallOddPrimes: [UInt64] = {
    let limit = 2048
    var composite = [Bool](repeating: false, count: limit)
    var out: [UInt64] = []
    var i = 3
    while i < limit {
        if !composite[i] {
            out.append(UInt64(i))
            var k = i * i
            while k < limit { composite[k] = true; k += 2 * i }
        }
        i += 2
    }
    return out
}()

/// Groups of consecutive small primes whose product fits in 64 bits: one multi-limb remainder per
/// group instead of one per prime.
let smallPrimeGroups: [(product: UInt64, primes: [UInt64])] = {
    var groups: [(UInt64, [UInt64])] = []
    var product: UInt64 = 1
    var members: [UInt64] = []
    for p in smallOddPrimes {
        let (m, o) = product.multipliedReportingOverflow(by: p)
        if o {
            groups.append((product, members))
            product = p
            members = [p]
        } else {
            product = m
            members.append(p)
        }
    }
    if !members.isEmpty { groups.append((product, members)) }
    return groups
}()

/// Miller-Rabin outcome of the small-prime stage.
enum TrialDivision {
    /// Divisible by a small prime other than itself.
    case composite
    /// Equal to a small prime (or 2).
    case prime
    /// No small factor.
    case unknown
}

extension BigUInt {
    /// Trial division by 2 and the odd primes below 2048.
    func trialDivision() -> TrialDivision {
        if bitWidth <= 11 {
            let v = low64
            if v < 2 { return .composite }
            if v == 2 { return .prime }
            if v & 1 == 0 { return .composite }
            return smallOddPrimes.contains(v) ? .prime : .composite
        }
        if !isOdd { return .composite }
        for (product, primes) in smallPrimeGroups {
            let r = remainder(dividingByWord: product)
            for p in primes where r % p == 0 { return .composite }
        }
        return .unknown
    }

    /// Whether `self` is probably prime: trial division by the primes below 2048, then `rounds`
    /// Miller-Rabin rounds with bases drawn uniformly from `[2, n − 2]` by `rng`.
    ///
    /// A composite passes with probability at most 4^(−rounds) (much less for random inputs). Small
    /// values (below 2048²) are decided exactly by trial division. Variable time: for public
    /// candidates (DH primes); RSA key generation uses a constant-time variant.
    public func isProbablePrime<R: RandomNumberGenerator>(rounds: Int, using rng: inout R) -> Bool {
        millerRabin(rounds: rounds, using: &rng, secret: false)
    }

    /// ``isProbablePrime(rounds:using:)`` with the system's random number generator.
    public func isProbablePrime(rounds: Int = 64) -> Bool {
        var rng = SecureRandom()
        return isProbablePrime(rounds: rounds, using: &rng)
    }

    func millerRabin<R: RandomNumberGenerator>(rounds: Int, using rng: inout R, secret: Bool) -> Bool {
        switch trialDivision() {
        case .composite: return false
        case .prime: return true
        case .unknown: break
        }
        // Below 2048^2 no composite survives trial division by every prime below 2048.
        if bitWidth <= 22 && low64 < 2048 * 2048 { return true }
        guard let mod = try? Modulus(self) else { return false }
        return withExtendedLifetime(mod) { millerRabin(mod, rounds: rounds, using: &rng, secret: secret) }
    }

    private func millerRabin<R: RandomNumberGenerator>(_ mod: Modulus, rounds: Int, using rng: inout R, secret: Bool) -> Bool {
        let n = mod.limbCount
        // n − 1 = d · 2^s
        var nMinus1 = subtracting(knownSmaller: BigUInt(1))  // an odd modulus above one
        let s = nMinus1.trailingZeroBitCount
        var d = nMinus1 >> s
        nMinus1.wipe()
        var dl = Modulus.padded(d, d.limbs.count)
        d.wipe()
        defer { dl.withUnsafeMutableBytes { secureZero($0) } }
        // Montgomery forms of 1 and −1 (= m − R mod m).
        let one = mod.one, pm = mod.m
        var minusOne = [UInt64](repeating: 0, count: n)
        var borrow: UInt64 = 0
        for j in 0..<n {
            let (d1, o1) = pm[j].subtractingReportingOverflow(one[j])
            let (d2, o2) = d1.subtractingReportingOverflow(borrow)
            minusOne[j] = d2
            borrow = ctBit(o1) &+ ctBit(o2)
        }
        defer { minusOne.withUnsafeMutableBytes { secureZero($0) } }
        let baseBound = (try? self - BigUInt(3)) ?? BigUInt(1)   // bases 2 ... n − 2
        return mod.withWorkspace(limbs: 4 * n + 2) { ws in
            let x = ws, a = ws + n, tmp = a + n, t = tmp + n
            func equal(_ p: UnsafePointer<UInt64>, _ q: UnsafePointer<UInt64>) -> Bool {
                for j in 0..<n where p[j] != q[j] { return false }
                return true
            }
            for _ in 0..<Swift.max(rounds, 1) {
                let base = ((try? BigUInt.random(below: baseBound, using: &rng)) ?? BigUInt()) + BigUInt(2)
                let bl = Modulus.padded(base, n)
                for j in 0..<n { a[j] = bl[j] }
                dl.withUnsafeBufferPointer { e in
                    if secret {
                        // Constant-time exponentiation, then into Montgomery form for the comparisons.
                        mod.powerCT(x, a, e.baseAddress, e.count)
                        Montgomery.mul(x, x, mod.rr, pm, n, mod.m0inv, t, mod.hardware)
                    } else {
                        mod.powerVT(x, a, e.baseAddress, e.count, montgomeryOut: true)
                    }
                }
                let isMinusOne = minusOne.withUnsafeBufferPointer { equal(x, $0.baseAddress!) }
                if equal(x, one) || isMinusOne { continue }
                var witness = true
                minusOne.withUnsafeBufferPointer { mo in
                    for _ in 1..<Swift.max(s, 1) {
                        Montgomery.square(x, x, pm, n, mod.m0inv, t, mod.hardware)
                        if equal(x, mo.baseAddress!) { witness = false; break }
                        if equal(x, one) { break }  // nontrivial square root of 1: composite
                    }
                }
                _ = tmp
                if witness { return false }
            }
            return true
        }
    }

    /// A random prime of exactly `bits` bits whose two top bits are set (so the product of two such
    /// primes has exactly `2·bits` bits), with `gcd(p − 1, e) = 1` when `coprimeTo` is given.
    ///
    /// Candidates are sieved by the primes below 2048 and then tested with `rounds` Miller-Rabin
    /// rounds in constant-time exponentiation (the candidate is a secret).
    /// - Throws: ``RampartError/invalidParameter(_:)`` for `bits < 16`.
    public static func randomPrime<R: RandomNumberGenerator>(bits: Int, coprimeTo e: BigUInt? = nil, rounds: Int = 20,
                                                             using rng: inout R) throws(RampartError) -> BigUInt {
        guard bits >= 16 else { throw .invalidParameter("bits") }
        while true {
            var c = BigUInt.random(bits: bits, using: &rng)
            // Set the two top bits and the low bit, in place (no temporary copies of the candidate).
            c.setBitsInPlace(top: bits)
            // Residues of the start candidate; step by 2 while updating them.
            var residues = smallOddPrimes.map { c.remainder(dividingByWord: $0) }
            var delta: UInt64 = 0
            let maxDelta: UInt64 = 1 << 20
            while delta < maxDelta {
                var ok = true
                for (i, p) in smallOddPrimes.enumerated() {
                    let r = (residues[i] + delta) % p
                    if r == 0 { ok = false; break }
                }
                if ok {
                    // One copy of c, made unique and then added to in place; wiped unless returned.
                    var cand = c
                    cand.addInPlace(delta)
                    if cand.bitWidth != bits { cand.wipe(); break }
                    var good = true
                    if let e {
                        var pm1 = cand.subtracting(knownSmaller: BigUInt(1))  // `bits` bits, above one
                        good = BigUInt.gcd(pm1, e) == BigUInt(1)
                        pm1.wipe()
                    }
                    if good && cand.millerRabin(rounds: rounds, using: &rng, secret: true) {
                        c.wipe()
                        residues.withUnsafeMutableBytes { secureZero($0) }
                        return cand
                    }
                    cand.wipe()
                }
                delta += 2
            }
            c.wipe()
            residues.withUnsafeMutableBytes { secureZero($0) }
        }
    }

    /// Sets bits `top − 1`, `top − 2` and 0 of a value below 2^top, in place.
    mutating func setBitsInPlace(top: Int) {
        let n = (top + 63) / 64
        if limbs.count < n { limbs.append(contentsOf: repeatElement(0, count: n - limbs.count)) }
        limbs[(top - 1) >> 6] |= 1 << UInt64((top - 1) & 63)
        limbs[(top - 2) >> 6] |= 1 << UInt64((top - 2) & 63)
        limbs[0] |= 1
    }

    /// `self += x` in place (the buffer is made unique first, then written; no further copy).
    mutating func addInPlace(_ x: UInt64) {
        if limbs.isEmpty { limbs = [x]; normalize(); return }
        var carry = x
        var i = 0
        while carry != 0 && i < limbs.count {
            let (s, o) = limbs[i].addingReportingOverflow(carry)
            limbs[i] = s
            carry = o ? 1 : 0
            i += 1
        }
        if carry != 0 { limbs.append(carry) }
    }

    /// Bitwise OR.
    public static func | (a: BigUInt, b: BigUInt) -> BigUInt {
        var r = a.limbs.count >= b.limbs.count ? a.limbs : b.limbs
        let s = a.limbs.count >= b.limbs.count ? b.limbs : a.limbs
        for i in 0..<s.count { r[i] |= s[i] }
        return BigUInt(limbs: r)
    }
}
