// The AVX2 radix-2^28 Montgomery kernel for 2048-bit moduli (RampartAccelAVX2/MontgomeryAVX2.swift) against the
// portable 64-bit kernel, BigUInt arithmetic and the other exponentiations, for moduli at the edges
// of 32 limbs and values 0, 1, m − 1, on every processor with AVX2 (where Kernels.modexp2048 selects
// it and where it does not). Skipped (with a note) on processors without AVX2.

import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

/// 32-limb moduli: the shapes of `montgomeryTestModuli` plus 2^2047 + 2^k + 1 and 2^2048 − 2^k − 1.
private func avx2TestModuli(_ g: inout SplitMix64) -> [[UInt64]] {
    var out = montgomeryTestModuli(32, &g, random: 6)
    for k in [1, 64, 1000, 2040] {
        var lo = [UInt64](repeating: 0, count: 32)
        lo[31] = 1 << 63; lo[0] |= 1; lo[k >> 6] |= 1 << UInt64(k & 63)
        out.append(lo)
        var hi = [UInt64](repeating: .max, count: 32)
        hi[k >> 6] &= ~(1 << UInt64(k & 63)); hi[0] |= 1
        out.append(hi)
    }
    return out
}

private let avx2Available = (try? Modulus(BigUInt(1) << 2047 | BigUInt(1), backend: .hardware, wideKernel: true))?.publicPowerAVX2(BigUInt(2), BigUInt(3)) != nil

@Suite struct BigIntMontgomeryAVX2Tests {
    @Test func productsMatchPortableAndBigUInt() throws {
        guard avx2Available else { print("BigIntMontgomeryAVX2Tests: no AVX2, skipped"); return }
        var g = SplitMix64(seed: 0x4156_5832)
        let r80 = BigUInt(1) << 80, r2128 = BigUInt(1) << 2128
        var checked = 0
        for mLimbs in avx2TestModuli(&g) {
            let mod = try Modulus(BigUInt(limbs: mLimbs), backend: .hardware, wideKernel: true)
            let m = mod.value
            let values = montgomeryTestValues(mod, &g, random: 4)
            for (i, a) in values.enumerated() {
                for b in [values[(i * 5 + 2) % values.count], a] {
                    let x = try #require(mod.montgomeryProductAVX2(a, b))
                    #expect(x < m, "m=\(m)")
                    // x · 2^2128 ≡ a · b (mod m)
                    #expect(try (x * r2128).remainder(dividingBy: m) == (a * b).remainder(dividingBy: m), "m=\(m) a=\(a) b=\(b)")
                    // x · 2^80 ≡ the portable kernel's a · b · 2^−2048
                    let p = mod.montgomeryProduct(a, b, backend: .portable)
                    #expect(try (x * r80).remainder(dividingBy: m) == p, "m=\(m) a=\(a) b=\(b)")
                    checked += 1
                }
            }
        }
        #expect(checked > 100)
    }

    @Test func powersMatchOtherExponentiations() throws {
        guard avx2Available else { print("BigIntMontgomeryAVX2Tests: no AVX2, skipped"); return }
        var g = SplitMix64(seed: 0x706F_7732)
        let moduli = avx2TestModuli(&g)
        for (k, mLimbs) in moduli.enumerated() {
            let mod = try Modulus(BigUInt(limbs: mLimbs), backend: .hardware, wideKernel: true)
            let m = mod.value
            let values = montgomeryTestValues(mod, &g, random: 1)
            let mMinus1 = try m - BigUInt(1)
            // Exponents: short ones (every window width), a full-size random one, m − 1.
            var exps: [BigUInt] = [BigUInt(1), BigUInt(2), BigUInt(3), BigUInt(65537),
                                   BigUInt(limbs: [UInt64.random(in: 1...UInt64.max, using: &g)])]
            if k % 3 == 0 {
                exps.append(BigUInt(limbs: (0..<32).map { _ in UInt64.random(in: 0...UInt64.max, using: &g) }))
                exps.append(mMinus1)
            }
            for (i, e) in exps.enumerated() {
                let base = values[(i + k) % values.count]
                let x = try #require(mod.publicPowerAVX2(base, e))
                #expect(x == mod.constantTimePower(base, e), "m=\(m) base=\(base) e=\(e)")
                #expect(x == mod.publicPower(base, e), "m=\(m) base=\(base) e=\(e)")
            }
            // Edge bases with a short exponent, checked against BigUInt arithmetic.
            for base in [BigUInt(), BigUInt(1), mMinus1] {
                let x = try #require(mod.publicPowerAVX2(base, BigUInt(5)))
                let b2 = try (base * base).remainder(dividingBy: m)
                let b4 = try (b2 * b2).remainder(dividingBy: m)
                #expect(x == (try (b4 * base).remainder(dividingBy: m)), "m=\(m) base=\(base)")
            }
        }
    }
}
