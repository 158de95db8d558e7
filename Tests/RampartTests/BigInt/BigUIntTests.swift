// BigUInt arithmetic, Montgomery exponentiation, primality, DH checks and pq factoring.

import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

private func big(_ hex: String) -> BigUInt { try! BigUInt(hex: hex) }

private let rfc3526Group14 = big(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    + "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    + "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
    + "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
    + "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
    + "15728E5A8AACAA68FFFFFFFFFFFFFFFF")

@Suite struct BigUIntTests {
    @Test func bytesAndHexRoundTrip() throws {
        #expect(BigUInt(bigEndian: [UInt8]()).isZero)
        #expect(BigUInt(bigEndian: [0, 0, 1]) == BigUInt(1))
        #expect(BigUInt().bigEndianBytes() == [])
        #expect(BigUInt().hexString == "0")
        let x = big("0102030405060708090a0b0c0d0e0f10")
        #expect(x.bigEndianBytes() == Array(1...16))
        #expect(try x.bigEndianBytes(count: 18) == [0, 0] + Array(1...16))
        #expect(throws: RampartError.invalidOutputLength) { try x.bigEndianBytes(count: 15) }
        #expect(x.hexString == "102030405060708090a0b0c0d0e0f10")
        #expect(x.bitWidth == 121)
        #expect(try BigUInt(hex: "0x00ff") == BigUInt(255))
        #expect(throws: RampartError.invalidEncoding) { try BigUInt(hex: "") }
        #expect(throws: RampartError.invalidEncoding) { try BigUInt(hex: "12g4") }
        #expect(BigUInt(limbs: [5, 0, 0]).limbCount == 1)
    }

    @Test func arithmeticIdentities() throws {
        var rng = SplitMix64(seed: 1)
        for _ in 0..<300 {
            let a = BigUInt.random(bits: Int.random(in: 0...700, using: &rng), using: &rng)
            let b = BigUInt.random(bits: Int.random(in: 1...700, using: &rng), using: &rng)
            let s = a + b
            #expect(try s - b == a)
            #expect(try s - a == b)
            guard !b.isZero else { continue }
            let (q, r) = try a.quotientAndRemainder(dividingBy: b)
            #expect(r < b)
            #expect(q * b + r == a)
            let k = Int.random(in: 0...130, using: &rng)
            #expect((a << k) >> k == a)
            #expect(a >> k == (try a.quotientAndRemainder(dividingBy: BigUInt(1) << k)).quotient)
        }
        #expect(throws: RampartError.negativeResult) { try BigUInt(1) - BigUInt(2) }
        #expect(BigUInt(1).subtracting(BigUInt(2)) == nil)
        #expect(throws: RampartError.divisionByZero) { try BigUInt(5).quotientAndRemainder(dividingBy: BigUInt()) }
        #expect(BigUInt.gcd(BigUInt(12), BigUInt(18)) == BigUInt(6))
        #expect(BigUInt.gcd(BigUInt(), BigUInt(7)) == BigUInt(7))
    }

    @Test func modularInverse() throws {
        #expect(try BigUInt(3).inverse(modulo: BigUInt(7)) == BigUInt(5))
        #expect(throws: RampartError.noInverse) { try BigUInt(6).inverse(modulo: BigUInt(9)) }
        #expect(throws: RampartError.noInverse) { try BigUInt(6).inverse(modulo: BigUInt(1)) }
        #expect(throws: RampartError.noInverse) { try BigUInt(0).inverse(modulo: BigUInt(7)) }
        let p = DiffieHellman.telegramPrime
        var rng = SplitMix64(seed: 2)
        for _ in 0..<20 {
            let a = try BigUInt.random(below: p, using: &rng)
            guard !a.isZero else { continue }
            let inv = try a.inverse(modulo: p)
            #expect(try (a * inv).remainder(dividingBy: p) == BigUInt(1))
        }
    }

    @Test func modulusRejectsEvenZeroAndOne() {
        #expect(throws: RampartError.invalidModulus) { try Modulus(BigUInt()) }
        #expect(throws: RampartError.invalidModulus) { try Modulus(BigUInt(1)) }
        #expect(throws: RampartError.invalidModulus) { try Modulus(BigUInt(1) << 64) }
        #expect(throws: RampartError.divisionByZero) { try BigUInt(3).power(BigUInt(2), modulo: BigUInt()) }
    }

    @Test func exponentiationPathsAgree() throws {
        var rng = SplitMix64(seed: 3)
        let m = DiffieHellman.telegramPrime
        let mod = try Modulus(m)
        // Fermat: a^(p−1) = 1 for the prime p, on both paths.
        let pm1 = try m - BigUInt(1)
        for _ in 0..<3 {
            let a = try BigUInt.random(below: m, using: &rng)
            #expect(mod.publicPower(a, pm1) == BigUInt(1))
            #expect(mod.constantTimePower(a, pm1) == BigUInt(1))
        }
        // Small cases against schoolbook square-and-multiply with division.
        for bits in [3, 64, 65, 127, 128, 200, 1024] {
            var mv = BigUInt.random(bits: bits, using: &rng) | BigUInt(1) | (BigUInt(1) << (bits - 1))
            if mv == BigUInt(1) { mv = BigUInt(3) }
            let md = try Modulus(mv)
            for _ in 0..<4 {
                let a = BigUInt.random(bits: bits + 10, using: &rng)
                let e = BigUInt.random(bits: Int.random(in: 0...300, using: &rng), using: &rng)
                var want = BigUInt(1)
                var i = e.bitWidth - 1
                while i >= 0 {
                    want = try (want * want).remainder(dividingBy: mv)
                    if e.bit(i) { want = try (want * a).remainder(dividingBy: mv) }
                    i -= 1
                }
                want = try want.remainder(dividingBy: mv)
                #expect(md.publicPower(a, e) == want)
                #expect(md.constantTimePower(a, e) == want)
            }
        }
        #expect(mod.constantTimePower(BigUInt(5), BigUInt()) == BigUInt(1))
        #expect(mod.publicPower(BigUInt(5), BigUInt()) == BigUInt(1))
    }
}

@Suite struct PrimalityTests {
    private let knownPrimes = [
        "2", "3", "5", "7F", "7FFFFFFF", "FFFFFFFFFFFFFFC5",
        "7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",                                          // 2^127 − 1
        "7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFED",          // 2^255 − 19
        "FFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF",          // P-256
        "1" + String(repeating: "F", count: 130),                                     // 2^521 − 1
    ]
    // Carmichael numbers (the last is (6k+1)(12k+1)(18k+1), k = 10^20 + 1...) and strong pseudoprimes to base 2
    // (the last three to every prime base up to 23, 37 and 41).
    private let composites: [String] = [
        "231", "451", "6C1", "9A1", "B05", "19C9", "22CF", "A051", "C9791", "13252E81",
        "32680B630D77C8A82BE8FD6880B42C88AA160F11403E48530EC01",
        "7FF", "CCD", "FC1", "1249", "2081", "3DE1", "729D", "A72F", "BFF5",
        "351591274F9AF9FB", "437AE92817F9FC85B7E5", "2BE6951ADC5B22410A5FD",
        "0", "1", "4", "FFFFFFFFFFFFFFFF",
    ]

    @Test func knownPrimesPass() {
        var rng = SplitMix64(seed: 4)
        for h in knownPrimes { #expect(big(h).isProbablePrime(rounds: 16, using: &rng), "\(h)") }
        #expect(big("7FF").isProbablePrime(rounds: 1, using: &rng) == false)  // 2047 = 23 · 89
    }

    @Test func compositesFail() {
        var rng = SplitMix64(seed: 5)
        for h in composites {
            #expect(!big(h).isProbablePrime(rounds: 16, using: &rng), "\(h)")
        }
        // 2^521 − 1 times a prime, and the square of a prime.
        let m521 = big("1" + String(repeating: "F", count: 130))
        #expect(!(m521 * big("7FFFFFFF")).isProbablePrime(rounds: 8, using: &rng))
        #expect(!(m521 * m521).isProbablePrime(rounds: 8, using: &rng))
    }

    @Test func smallValuesExact() {
        var rng = SplitMix64(seed: 6)
        for n in 0..<3000 {
            var isP = n >= 2
            var d = 2
            while d * d <= n { if n % d == 0 { isP = false; break }; d += 1 }
            #expect(BigUInt(UInt64(n)).isProbablePrime(rounds: 4, using: &rng) == isP, "\(n)")
            #expect(Factorization.isPrime(UInt64(n)) == isP)
        }
    }

    @Test func telegramPrimeIsSafe() {
        var rng = SplitMix64(seed: 7)
        let p = DiffieHellman.telegramPrime
        #expect(DiffieHellman.isSafePrime(p, using: &rng))
        // The full test: few rounds keep debug builds fast (release tests and the benchmark use 64).
        #expect(DiffieHellman.isSafePrime(p, rounds: 2, useKnownPrimes: false, using: &rng))
        #expect((p >> 1).isProbablePrime(rounds: 2, using: &rng))
        #expect(DiffieHellman.isSafePrime(rfc3526Group14, rounds: 2, using: &rng))
        // Not safe / not prime / wrong size.
        #expect(!DiffieHellman.isSafePrime(p + BigUInt(2), rounds: 2, using: &rng))
        #expect(!DiffieHellman.isSafePrime(p >> 1, rounds: 2, using: &rng))
        #expect(!DiffieHellman.isSafePrime(BigUInt(1) << 2047, rounds: 2, using: &rng))
        // 2^521 − 1 is prime, (2^521 − 2)/2 = 2^520 − 1 is not.
        let m521 = big("1" + String(repeating: "F", count: 130))
        #expect(!DiffieHellman.isSafePrimeAnySize(m521, rounds: 4, using: &rng))
        #expect(DiffieHellman.isSafePrimeAnySize(BigUInt(23), rounds: 4, using: &rng))
        #expect(!DiffieHellman.isSafePrimeAnySize(BigUInt(29), rounds: 4, using: &rng))
    }

    @Test func generatorRule() throws {
        let p = DiffieHellman.telegramPrime
        // Docs/MTProto.md §4: for Telegram's prime g ∈ {3, 4, 7} are valid and {2, 5, 6} are not.
        for g in [3, 4, 7] { #expect(DiffieHellman.isValidGenerator(g, prime: p), "g = \(g)") }
        for g in [2, 5, 6] {
            #expect(throws: RampartError.dhCheckFailed(.generatorNotQuadraticResidue)) { try DiffieHellman.checkGenerator(g, prime: p) }
        }
        for g in [-1, 0, 1, 8, 65537] {
            #expect(throws: RampartError.dhCheckFailed(.generatorNotAllowed)) { try DiffieHellman.checkGenerator(g, prime: p) }
        }
        // The table agrees with Euler's criterion g^((p−1)/2) = 1 on both 2048-bit safe primes.
        let mod = try Modulus(p), mod14 = try Modulus(rfc3526Group14)
        for g in 2...7 {
            #expect(DiffieHellman.isValidGenerator(g, prime: p) == (mod.publicPower(BigUInt(UInt64(g)), p >> 1) == BigUInt(1)))
            #expect(DiffieHellman.isValidGenerator(g, prime: rfc3526Group14)
                    == (mod14.publicPower(BigUInt(UInt64(g)), rfc3526Group14 >> 1) == BigUInt(1)))
        }
        var rng = SplitMix64(seed: 8)
        try DiffieHellman.checkParameters(g: 3, prime: p, using: &rng)
        #expect(throws: RampartError.dhCheckFailed(.generatorNotQuadraticResidue)) { try DiffieHellman.checkParameters(g: 2, prime: p, using: &rng) }
        #expect(throws: RampartError.dhCheckFailed(.primeBitLength)) { try DiffieHellman.checkParameters(g: 3, prime: p >> 1, using: &rng) }
        #expect(throws: RampartError.dhCheckFailed(.notSafePrime)) {
            try DiffieHellman.checkParameters(g: 4, prime: p + BigUInt(4), rounds: 2, using: &rng)
        }
    }

    @Test func publicValueRange() throws {
        let p = DiffieHellman.telegramPrime
        let bound = BigUInt(1) << 1984
        try DiffieHellman.checkPublicValue(bound, prime: p)
        try DiffieHellman.checkPublicValue(try p - bound, prime: p)
        try DiffieHellman.checkPublicValue(p >> 1, prime: p)
        for bad in [BigUInt(), BigUInt(1), BigUInt(2), try bound - BigUInt(1), try p - bound + BigUInt(1),
                    try p - BigUInt(2), try p - BigUInt(1), p, p + BigUInt(1), BigUInt(1) << 2048] {
            #expect(throws: RampartError.dhCheckFailed(.valueOutOfRange)) { try DiffieHellman.checkPublicValue(bad, prime: p) }
        }
        #expect(throws: RampartError.dhCheckFailed(.primeBitLength)) { try DiffieHellman.checkPublicValue(bound, prime: p >> 1) }
    }
}

@Suite struct FactorizationTests {
    @Test func telegramSamplePQ() throws {
        // The official handshake sample (Docs/MTProto.md §10.A) and gotd's older one (Docs/MTProto.md §9.3).
        let (p, q) = try Factorization.factorPQ(0x17ED48941A08F981)
        #expect(p == 0x494C553B && q == 0x53911073)
        let (p2, q2) = try Factorization.factorPQ(1468428376148703121)
        #expect(p2 * q2 == 1468428376148703121 && p2 < q2)
        #expect(Factorization.isPrime(p2) && Factorization.isPrime(q2))
    }

    @Test func randomSemiprimes() throws {
        var rng = SplitMix64(seed: 9)
        for bits in [4, 8, 16, 20, 24, 28, 31, 32] {
            for _ in 0..<4 {
                func prime() -> UInt64 {
                    while true {
                        let c = UInt64.random(in: (1 << (bits - 1))..<(1 << bits), using: &rng) | 1
                        if Factorization.isPrime(c) { return c }
                    }
                }
                let a = prime(), b = prime()
                let (p, q) = try Factorization.factorPQ(a * b)
                #expect(p == min(a, b) && q == max(a, b), "\(a) * \(b)")
            }
        }
        #expect(try Factorization.factorPQ(UInt64(4)) == (2, 2))
        #expect(try Factorization.factorPQ(UInt64(2 * 1_000_000_007)) == (2, 1_000_000_007))
        let s = UInt64(4_294_967_291)  // largest prime below 2^32
        #expect(try Factorization.factorPQ(s * s) == (s, s))
    }

    @Test func rejectsPrimesAndThreeFactors() {
        for n: UInt64 in [0, 1, 2, 3, 5, 4_294_967_291, 0xFFFF_FFFF_FFFF_FFC5] {
            #expect(throws: RampartError.factorizationFailed(.prime)) { try Factorization.factorPQ(n) }
        }
        for n: UInt64 in [8, 12, 30, 3 * 5 * 7, 1_000_003 * 1_000_033 * 101, 0x494C553B * 0x53911073 * 3] {
            #expect(throws: RampartError.factorizationFailed(.moreThanTwoFactors)) { try Factorization.factorPQ(n) }
        }
    }

    @Test func bigFallback() throws {
        // 64-bit primes multiply to a 128-bit pq with a small factor on one side: BigUInt Pollard-Brent.
        let a = BigUInt(1_000_003), b = BigUInt(0xFFFF_FFFF_FFFF_FFC5) * BigUInt(1) // prime below 2^64
        let (p, q) = try Factorization.factorPQ(a * b)
        #expect(p == a && q == b)
        #expect(try Factorization.factorPQ(BigUInt(0x17ED48941A08F981)) == (BigUInt(0x494C553B), BigUInt(0x53911073)))
        #expect(throws: RampartError.factorizationFailed(.prime)) {
            try Factorization.factorPQ(big("7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"))
        }
        #expect(throws: RampartError.factorizationFailed(.moreThanTwoFactors)) {
            try Factorization.factorPQ(a * b * BigUInt(3))
        }
    }

    @Test func randomPrimeGeneration() throws {
        var rng = SplitMix64(seed: 10)
        for bits in [64, 128, 256] {
            let p = try BigUInt.randomPrime(bits: bits, coprimeTo: BigUInt(65537), using: &rng)
            #expect(p.bitWidth == bits && p.bit(bits - 2))
            #expect(p.isProbablePrime(rounds: 16, using: &rng))
        }
        #expect(throws: RampartError.invalidParameter("bits")) { try BigUInt.randomPrime(bits: 8, using: &rng) }
    }
}

@Test("subtracting(knownSmaller:) and distance(to:) agree with the throwing subtraction")
func knownOrderSubtraction() throws {
    let a = try BigUInt(hex: "1000000000000000000000000000000000001"), b = try BigUInt(hex: "ffffffffffffffffffff")
    #expect(a.subtracting(knownSmaller: b) == (try a - b))
    #expect(a.subtracting(knownSmaller: a) == BigUInt())
    #expect(a.distance(to: b) == (try a - b))
    #expect(b.distance(to: a) == (try a - b))
    #expect(BigUInt(7).distance(to: BigUInt(7)).isZero)
    #expect(throws: RampartError.negativeResult) { try b - a }
}

#if os(Linux) || os(macOS)
@Test("subtracting(knownSmaller:) traps when the order does not hold (a programming error)")
func knownOrderSubtractionTraps() async {
    await #expect(processExitsWith: .failure) {
        _ = BigUInt(1).subtracting(knownSmaller: BigUInt(2))
    }
}
#endif
