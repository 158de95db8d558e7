// The AVX-512 IFMA exponentiation (RampartAccelIFMA: radix 2^52, 20 digits for 16-limb moduli, 40 for
// 32-limb ones, constant-time and sliding-window powers, and the interleaved pair of 16-limb powers
// RSA-CRT uses) against BigUInt arithmetic, the portable kernels and the 64-bit (mulx) kernels: moduli at the edges of their limb
// counts, values 0, 1, m − 1, exponents of every window shape. Skipped (with a note) on processors
// without IFMA, where `Kernels.modexpIFMA` is inactive and nothing reaches the kernel.

import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

/// Moduli of `n` limbs: the shapes of `montgomeryTestModuli` plus 2^(64n−1) + 2^k + 1 and
/// 2^(64n) − 2^k − 1 for a few k.
private func ifmaTestModuli(_ n: Int, _ g: inout SplitMix64, random: Int) -> [[UInt64]] {
    var out = montgomeryTestModuli(n, &g, random: random)
    for k in [1, 52, 104, 64 * n - 9] {
        var lo = [UInt64](repeating: 0, count: n)
        lo[n - 1] = 1 << 63; lo[0] |= 1; lo[k >> 6] |= 1 << UInt64(k & 63)
        out.append(lo)
        var hi = [UInt64](repeating: .max, count: n)
        hi[k >> 6] &= ~(1 << UInt64(k & 63)); hi[0] |= 1
        out.append(hi)
    }
    return out
}

private let ifmaAvailable = Kernels.modexpIFMA.isActive

private func randomLimbs(_ n: Int, _ g: inout SplitMix64) -> BigUInt {
    BigUInt(limbs: (0..<n).map { _ in UInt64.random(in: 0...UInt64.max, using: &g) })
}

@Suite struct BigIntMontgomeryIFMATests {
    /// The end-of-product carry resolution: lanes whose first carry step leaves runs of digits equal to
    /// 2^52 − 1 (which pass a carry on) after a digit above it (which makes one): a case random products
    /// almost never reach. Against BigUInt: the same value mod 2^(52N), every digit below 2^52.
    @Test(arguments: [20, 40])
    func carryNormalisationResolvesRuns(digits n: Int) throws {
        guard ifmaAvailable else { print("BigIntMontgomeryIFMATests: no AVX-512 IFMA, skipped"); return }
        var g = SplitMix64(seed: 0x4E4F_524D &+ UInt64(n))
        let mask: UInt64 = (1 << 52) - 1
        let shapes: [UInt64] = [0, 1, mask - 1, mask, mask + 1, mask + 2, 1 << 53, (1 << 59) + 12345]
        let modulus = BigUInt(1) << (52 * n)
        var runs = 0
        for trial in 0..<400 {
            var lanes: [UInt64]
            switch trial % 4 {
            case 0: lanes = (0..<n).map { _ in shapes[Int.random(in: 0..<shapes.count, using: &g)] }
            case 1: lanes = (0..<n).map { _ in UInt64.random(in: 0..<(1 << 60), using: &g) }
            case 2:
                // A generating digit, then a run of propagating ones across register boundaries.
                lanes = [UInt64](repeating: mask, count: n)
                let start = Int.random(in: 0..<(n - 1), using: &g)
                lanes[start] = mask + 1 + UInt64.random(in: 0..<4096, using: &g)
                if start > 0 { lanes[start - 1] = UInt64.random(in: 0..<(1 << 52), using: &g) }
                lanes[n - 1] = UInt64.random(in: 0..<mask, using: &g)
            default:
                // All ones: the carry from lane 0 runs to the top and out.
                lanes = [UInt64](repeating: mask, count: n)
                lanes[0] = mask + UInt64(trial % 7)
            }
            let out = try #require(Modulus.ifmaNormalise(lanes))
            #expect(out.allSatisfy { $0 <= mask }, "lanes \(lanes)")
            var want = BigUInt(), got = BigUInt()
            for j in (0..<n).reversed() {
                want = (want << 52) + BigUInt(lanes[j])
                got = (got << 52) + BigUInt(out[j])
            }
            #expect(try want.remainder(dividingBy: modulus) == got, "lanes \(lanes)")
            if lanes.contains(mask) { runs += 1 }
        }
        #expect(runs > 100)
    }

    @Test(arguments: [16, 32])
    func productsMatchBigUIntAndPortable(n: Int) throws {
        guard ifmaAvailable else { print("BigIntMontgomeryIFMATests: no AVX-512 IFMA, skipped"); return }
        var g = SplitMix64(seed: 0x4946_4D41 &+ UInt64(n))
        let digitBits = n == 16 ? 1040 : 2080
        let rPrime = BigUInt(1) << digitBits, shift = BigUInt(1) << (digitBits - 64 * n)
        var checked = 0
        for mLimbs in ifmaTestModuli(n, &g, random: 6) {
            let mod = try Modulus(BigUInt(limbs: mLimbs))
            #expect(mod.usesIFMA)
            let m = mod.value
            let values = montgomeryTestValues(mod, &g, random: 4)
            for (i, a) in values.enumerated() {
                for b in [values[(i * 5 + 2) % values.count], a] {
                    let x = try #require(mod.montgomeryProductIFMA(a, b, pair: false))
                    #expect(x < m, "m=\(m)")
                    // x · R' ≡ a · b (mod m)
                    #expect(try (x * rPrime).remainder(dividingBy: m) == (a * b).remainder(dividingBy: m), "m=\(m) a=\(a) b=\(b)")
                    // x · 2^(52N − 64n) ≡ the portable kernel's a · b · 2^−64n
                    let p = mod.montgomeryProduct(a, b, backend: .portable)
                    #expect(try (x * shift).remainder(dividingBy: m) == p, "m=\(m) a=\(a) b=\(b)")
                    if n == 16 {
                        // Both halves of the interleaved kernel (the second on swapped operands) agree.
                        #expect(mod.montgomeryProductIFMA(a, b, pair: true) == x, "pair m=\(m) a=\(a) b=\(b)")
                    }
                    checked += 1
                }
            }
        }
        #expect(checked > 100)
    }

    @Test(arguments: [16, 32])
    func powersMatchPortableAndPublicPowers(n: Int) throws {
        guard ifmaAvailable else { print("BigIntMontgomeryIFMATests: no AVX-512 IFMA, skipped"); return }
        var g = SplitMix64(seed: 0x706F_7749 &+ UInt64(n))
        for (k, mLimbs) in ifmaTestModuli(n, &g, random: 3).enumerated() {
            let mod = try Modulus(BigUInt(limbs: mLimbs))
            let portable = try Modulus(BigUInt(limbs: mLimbs), backend: .portable)
            let bmi2 = try Modulus(BigUInt(limbs: mLimbs), backend: .hardware, wideKernel: false, ifmaKernel: false)
            #expect(mod.usesIFMA && !portable.usesIFMA && !bmi2.usesIFMA)
            let m = mod.value
            let values = montgomeryTestValues(mod, &g, random: 1)
            let mMinus1 = try m - BigUInt(1)
            // Exponents: 0, short ones (4-bit windows below 9 limbs), one of 9 limbs (5-bit windows, a
            // top window of 1 bit), and a full-size random one, m − 1 and 2^(64n) − 1.
            // Full-size exponents on every fourth modulus (debug builds run the kernel slowly).
            var exps: [BigUInt] = [BigUInt(), BigUInt(1), BigUInt(2), BigUInt(3), BigUInt(65537), randomLimbs(1, &g),
                                   randomLimbs(4, &g), randomLimbs(9, &g)]
            if k % 4 == 0 { exps += [randomLimbs(n, &g), mMinus1, BigUInt(limbs: [UInt64](repeating: .max, count: n))] }
            for (i, e) in exps.enumerated() {
                let base = values[(i + k) % values.count]
                let x = mod.constantTimePower(base, e)
                // The IFMA kernel's two powers against the 64-bit (mulx) kernel's; the portable
                // constant-time power (slow in debug builds) on every fourth modulus.
                #expect(x == bmi2.constantTimePower(base, e), "m=\(m) base=\(base) e=\(e)")
                #expect(mod.publicPower(base, e) == x, "m=\(m) base=\(base) e=\(e)")
                if k % 4 == 0 { #expect(x == portable.constantTimePower(base, e), "m=\(m) base=\(base) e=\(e)") }
            }
            // Edge bases with a short exponent, against BigUInt arithmetic; a base of n limbs above m.
            for base in [BigUInt(), BigUInt(1), mMinus1, BigUInt(limbs: [UInt64](repeating: .max, count: n))] {
                let x = mod.constantTimePower(base, BigUInt(5))
                let r = try base.remainder(dividingBy: m)
                let b2 = try (r * r).remainder(dividingBy: m)
                let b4 = try (b2 * b2).remainder(dividingBy: m)
                #expect(x == (try (b4 * r).remainder(dividingBy: m)), "m=\(m) base=\(base)")
            }
            // The exponent read as bytes at full width (leading zero bytes kept: Diffie-Hellman's form).
            let e = randomLimbs(k % 4 == 0 ? n : 2, &g)
            var bytes = [UInt8](repeating: 0, count: 3) + e.bigEndianBytes()
            let viaBytes = bytes.withUnsafeBytes { mod.constantTimePower(values[0], exponentBigEndian: $0) }
            #expect(viaBytes == bmi2.publicPower(values[0], e))
            bytes.removeAll()
        }
    }

    @Test func pairedPowersMatchSinglePowers() throws {
        guard ifmaAvailable else { print("BigIntMontgomeryIFMATests: no AVX-512 IFMA, skipped"); return }
        var g = SplitMix64(seed: 0x5041_4952)
        let moduli = ifmaTestModuli(16, &g, random: 5)
        for (k, pl) in moduli.enumerated() {
            let ql = moduli[(k * 7 + 3) % moduli.count]
            let p = try Modulus(BigUInt(limbs: pl)), q = try Modulus(BigUInt(limbs: ql))
            let portableP = try Modulus(BigUInt(limbs: pl), backend: .portable)
            let portableQ = try Modulus(BigUInt(limbs: ql), backend: .portable)
            let refP = try Modulus(BigUInt(limbs: pl), backend: .hardware, wideKernel: false, ifmaKernel: false)
            let refQ = try Modulus(BigUInt(limbs: ql), backend: .hardware, wideKernel: false, ifmaKernel: false)
            let vp = montgomeryTestValues(p, &g, random: 1), vq = montgomeryTestValues(q, &g, random: 1)
            // Exponents of equal limb counts (as dp and dq): full size, short, and one with a zero top limb.
            for (i, (ep, eq)) in [(randomLimbs(16, &g), randomLimbs(16, &g)), (BigUInt(3), BigUInt(65537)),
                                   (randomLimbs(15, &g), randomLimbs(16, &g))].enumerated() {
                let bp = vp[(i + k) % vp.count], bq = vq[(i * 3 + k) % vq.count]
                let (xp, xq) = Modulus.constantTimePowerPair(p, base: bp, exponent: ep, q, base: bq, exponent: eq)
                #expect(xp == refP.constantTimePower(bp, ep), "p=\(p.value) base=\(bp) e=\(ep)")
                #expect(xq == refQ.constantTimePower(bq, eq), "q=\(q.value) base=\(bq) e=\(eq)")
                if k == 0 {
                    #expect(xp == portableP.constantTimePower(bp, ep) && xq == portableQ.constantTimePower(bq, eq))
                }
            }
        }
    }

    @Test func rsaPrivateOperationRoundTrips() throws {
        guard ifmaAvailable else { print("BigIntMontgomeryIFMATests: no AVX-512 IFMA, skipped"); return }
        // A 2048-bit key (1024-bit primes: the paired kernel): the private operation's output goes back
        // to the input under the public exponent (and its own fault check, which throws on a wrong half).
        var g = SplitMix64(seed: 0x5253_4132)
        let key = try RSA.PrivateKey.generate(bits: 2048, using: &g)
        let n = key.publicKey.modulus
        for i in 0..<4 {
            var input = try randomLimbs(32, &g).remainder(dividingBy: n).bigEndianBytes()
            input = [UInt8](repeating: 0, count: 256 - input.count) + input
            let out = try key.rawPrivate(input)
            #expect(out.count == 256)
            #expect(try key.publicKey.rawPublic(out) == input, "input \(i)")
        }
    }
}
