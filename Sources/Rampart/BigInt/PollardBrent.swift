// Factoring MTProto's pq (a product of two primes, usually below 2^63) with Pollard's rho in
// Brent's variant, in 64-bit Montgomery arithmetic; a BigUInt fallback for larger inputs.

/// Integer factorisation of semiprimes (MTProto `pq`) and 64-bit primality.
public enum Factorization {
    /// Splits `pq` into primes `p ≤ q` with `p · q = pq`.
    ///
    /// - Throws: ``RampartError/factorizationFailed(_:)`` with `.prime` when `pq` is prime or below
    ///   4, `.moreThanTwoFactors` when it has three or more prime factors.
    public static func factorPQ(_ pq: UInt64) throws(RampartError) -> (p: UInt64, q: UInt64) {
        guard pq >= 4, !isPrime(pq) else { throw .factorizationFailed(.prime) }
        let d: UInt64
        if pq & 1 == 0 {
            d = 2
        } else {
            guard let f = rho64(pq) else { throw .factorizationFailed(.notFound) }
            d = f
        }
        let e = pq / d
        let (p, q) = d <= e ? (d, e) : (e, d)
        guard isPrime(p), isPrime(q) else { throw .factorizationFailed(.moreThanTwoFactors) }
        return (p, q)
    }

    /// Splits `pq` of any size into primes `p ≤ q`; 64-bit inputs take the fast path.
    ///
    /// - Throws: ``RampartError/factorizationFailed(_:)`` as for the 64-bit form; `.notFound` when
    ///   no factor appears within the iteration budget (factors far above 2^40).
    public static func factorPQ(_ pq: BigUInt) throws(RampartError) -> (p: BigUInt, q: BigUInt) {
        if pq.bitWidth <= 64 {
            let (p, q) = try factorPQ(pq.low64)
            return (BigUInt(p), BigUInt(q))
        }
        var rng = SecureRandom()
        guard !pq.isProbablePrime(rounds: 32, using: &rng) else { throw .factorizationFailed(.prime) }
        let d: BigUInt
        if !pq.isOdd {
            d = BigUInt(2)
        } else {
            guard let f = rhoBig(pq) else { throw .factorizationFailed(.notFound) }
            d = f
        }
        let e = try pq.quotientAndRemainder(dividingBy: d).quotient
        let (p, q) = d <= e ? (d, e) : (e, d)
        guard p.isProbablePrime(rounds: 32, using: &rng), q.isProbablePrime(rounds: 32, using: &rng) else {
            throw .factorizationFailed(.moreThanTwoFactors)
        }
        return (p, q)
    }

    /// Deterministic primality for 64-bit values (Miller-Rabin with the first twelve prime bases,
    /// exact below 3.3 · 10^24).
    public static func isPrime(_ n: UInt64) -> Bool {
        if n < 2 { return false }
        for p: UInt64 in [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
            if n % p == 0 { return n == p }
        }
        let m = Mont64(n)
        var d = n - 1
        var s = 0
        while d & 1 == 0 { d >>= 1; s += 1 }
        let one = m.one, minusOne = n - m.one
        outer: for a: UInt64 in [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
            var x = m.power(m.toMont(a), d)
            if x == one || x == minusOne { continue }
            for _ in 1..<s {
                x = m.mul(x, x)
                if x == minusOne { continue outer }
            }
            return false
        }
        return true
    }

    /// Pollard-Brent on an odd composite `n`: a nontrivial factor, or nil.
    static func rho64(_ n: UInt64) -> UInt64? {
        // Perfect squares: rho finds their factor too, but a square root is immediate.
        let r = isqrt(n)
        if r * r == n { return r }
        let m = Mont64(n)
        let batch = 128
        for c in 1..<UInt64(64) {
            let cm = m.toMont(c)
            var y = m.toMont(2), x = y, ys = y
            var g: UInt64 = 1, q = m.one
            var len = 1
            while g == 1 {
                x = y
                for _ in 0..<len { y = m.add(m.mul(y, y), cm) }
                var k = 0
                while k < len && g == 1 {
                    ys = y
                    let steps = Swift.min(batch, len - k)
                    for _ in 0..<steps {
                        y = m.add(m.mul(y, y), cm)
                        q = m.mul(q, x > y ? x - y : y - x)
                    }
                    g = gcd(q, n)
                    k += steps
                }
                len <<= 1
                if len > 1 << 26 { break }
            }
            if g == n || g == 0 {
                // The batch overshot: step back one at a time from ys.
                repeat {
                    ys = m.add(m.mul(ys, ys), cm)
                    g = gcd(x > ys ? x - ys : ys - x, n)
                } while g == 1
            }
            if g != n && g > 1 { return g }
        }
        return nil
    }

    /// Pollard-Brent over BigUInt (slow; for inputs above 64 bits).
    static func rhoBig(_ n: BigUInt) -> BigUInt? {
        guard let mod = try? Modulus(n) else { return nil }
        let one = BigUInt(1)
        for c in 1..<UInt64(16) {
            let cb = BigUInt(c)
            func f(_ v: BigUInt) -> BigUInt { mod.reduce(mod.multiply(v, v) + cb) }
            func absDiff(_ a: BigUInt, _ b: BigUInt) -> BigUInt { a.distance(to: b) }
            var y = BigUInt(2), x = y, ys = y
            var g = one, q = one
            var len = 1
            var total = 0
            while g == one {
                x = y
                for _ in 0..<len { y = f(y) }
                var k = 0
                while k < len && g == one {
                    ys = y
                    let steps = Swift.min(64, len - k)
                    for _ in 0..<steps {
                        y = f(y)
                        q = mod.multiply(q, absDiff(x, y))
                    }
                    g = BigUInt.gcd(q, n)
                    k += steps
                }
                len <<= 1
                total += len
                if total > 1 << 22 { return nil }
            }
            if g == n || g.isZero {
                repeat {
                    ys = f(ys)
                    g = BigUInt.gcd(absDiff(x, ys), n)
                } while g == one
            }
            if g != n && g > one { return g }
        }
        return nil
    }

    static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var a = a, b = b
        if a == 0 { return b }
        if b == 0 { return a }
        let shift = (a | b).trailingZeroBitCount
        a >>= a.trailingZeroBitCount
        repeat {
            b >>= b.trailingZeroBitCount
            if a > b { swap(&a, &b) }
            b -= a
        } while b != 0
        return a << shift
    }

    static func isqrt(_ n: UInt64) -> UInt64 {
        if n < 2 { return n }
        var x = UInt64(Double(n).squareRoot())
        while true {
            let (sq, o) = x.multipliedReportingOverflow(by: x)
            if o || sq > n { x -= 1 } else { break }
        }
        while true {
            let (sq, o) = (x + 1).multipliedReportingOverflow(by: x + 1)
            if o || sq > n { break }
            x += 1
        }
        return x
    }
}

/// Montgomery arithmetic modulo an odd 64-bit `n` (R = 2^64).
struct Mont64 {
    let n: UInt64
    let nInvNeg: UInt64   // −n⁻¹ mod 2^64
    let one: UInt64       // R mod n
    let r2: UInt64        // R² mod n

    init(_ n: UInt64) {
        self.n = n
        var x = n
        for _ in 0..<5 { x = x &* (2 &- n &* x) }
        nInvNeg = 0 &- x
        one = n.dividingFullWidth((1, 0)).remainder
        r2 = n.dividingFullWidth(one.multipliedFullWidth(by: one)).remainder
    }

    /// a · b / R mod n for a, b < n.
    @inline(__always) func mul(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let p = a.multipliedFullWidth(by: b)
        let q = p.low &* nInvNeg
        let qn = q.multipliedFullWidth(by: n)
        let (_, c) = p.low.addingReportingOverflow(qn.low)
        let (h1, o1) = p.high.addingReportingOverflow(qn.high)
        let (h2, o2) = h1.addingReportingOverflow(ctBit(c))
        // The true value h = p.high + qn.high + c < 2n; reduce once.
        if o1 || o2 || h2 >= n { return h2 &- n }
        return h2
    }

    @inline(__always) func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (s, o) = a.addingReportingOverflow(b)
        return (o || s >= n) ? s &- n : s
    }

    func toMont(_ a: UInt64) -> UInt64 { mul(a % n, r2) }

    func power(_ base: UInt64, _ e: UInt64) -> UInt64 {
        var result = one, b = base, e = e
        while e > 0 {
            if e & 1 == 1 { result = mul(result, b) }
            b = mul(b, b)
            e >>= 1
        }
        return result
    }
}
