// Every build of the Salsa20 and ChaCha20 kernels this processor runs (the AVX2 build, and the AVX-512VL
// build of the same sources where present, Cipher/SalsaKernels+x86_64.swift), not only the one the
// registry selected, against the portable code: whole 512-byte groups from states with random keys,
// nonces and counters (some straddling a 32-bit carry), at odd buffer offsets. The short-message blocks
// of the AVX-512VL build (the XSalsa20 input block and its pair, one, two or four keystream blocks)
// and the scalar input block and keystream block (RampartAccelBMI2, selected on AMD processors)
// against the portable diagonal and four-block code; scrypt's BlockMix of that build against the portable
// one. The selected build also runs every other Salsa20
// and box test; CI runs those once more with AVX-512VL hidden.

#if arch(x86_64)
@testable import Rampart
import RampartTestSupport
import Testing

@Suite("Salsa20 and ChaCha20 kernel builds")
struct SalsaKernelBuildTests {
    /// A Salsa20 input block with random key and nonce words and block counter `counter`.
    private static func salsaState(_ rng: inout SplitMix64, counter: UInt64) -> SIMD16<UInt32> {
        var x = SIMD16<UInt32>()
        for i in 0..<16 { x[i] = UInt32(truncatingIfNeeded: rng.next()) }
        x[0] = 0x6170_7865; x[5] = 0x3320_646e; x[10] = 0x7962_2d32; x[15] = 0x6b20_6574
        x[8] = UInt32(truncatingIfNeeded: counter)
        x[9] = UInt32(truncatingIfNeeded: counter >> 32)
        return x
    }

    @Test("Every build of the eight-block kernels equals the portable code (Salsa20, ChaCha20)")
    func everyBuildMatchesPortable() {
        let tiers = SalsaKernelTier.available
        if tiers.isEmpty { print("note: no Salsa20 kernel build on this processor; nothing to compare") }
        var rng = SplitMix64(seed: 0x5a15a)
        for tier in tiers {
            for groups in 1...3 {
                for counter: UInt64 in [0, 7, 0xffff_fffa, 0x1_ffff_fff9] {
                    let offset = groups % 3
                    let data = rng.bytes(offset + 512 * groups)
                    let count = 512 * groups
                    // Salsa20: the kernel against the portable path (which the kernel never runs).
                    let x = Self.salsaState(&rng, counter: counter)
                    var kernelState = x, portableState = x
                    var viaKernel = [UInt8](repeating: 0, count: count), viaPortable = viaKernel
                    data.withUnsafeBytes { d in
                        let src = d.baseAddress! + offset
                        viaKernel.withUnsafeMutableBytes { o in
                            withUnsafeMutableBytes(of: &kernelState) { SalsaKernel.xor($0.baseAddress!, src, o.baseAddress!, groups, tier: tier) }
                        }
                        viaPortable.withUnsafeMutableBytes { o in
                            salsa20XORPortable(&portableState, src, o.baseAddress!, count, short: false)
                        }
                    }
                    #expect(viaKernel == viaPortable, "salsa20 \(tier.name): \(groups) groups from counter \(counter)")
                    #expect(kernelState == portableState, "salsa20 \(tier.name): the counter after \(groups) groups")

                    // ChaCha20 (32-bit counter in word 12, kept below 2^31 so that 24 blocks cannot wrap it).
                    var c = x
                    c[12] = UInt32(truncatingIfNeeded: counter) & 0x7fff_ffff
                    var chachaKernel = c, chachaPortable = c
                    data.withUnsafeBytes { d in
                        let src = d.baseAddress! + offset
                        viaKernel.withUnsafeMutableBytes { o in
                            withUnsafeMutableBytes(of: &chachaKernel) { ChaChaKernel.xor($0.baseAddress!, src, o.baseAddress!, groups, tier: tier) }
                        }
                        viaPortable.withUnsafeMutableBytes { o in
                            chacha20XORPortable(&chachaPortable, src, o.baseAddress!, count)
                        }
                    }
                    #expect(viaKernel == viaPortable, "chacha20 \(tier.name): \(groups) groups from counter \(counter)")
                    #expect(chachaKernel == chachaPortable, "chacha20 \(tier.name): the counter after \(groups) groups")
                }
            }
        }
    }

    @Test("The short-message blocks of the AVX-512VL build equal the portable diagonal and four-block code")
    func shortBlocksMatchPortable() {
        guard SalsaKernelTier.available.contains(.avx512) else {
            print("note: no AVX-512VL on this processor; the short-message blocks are not compiled in")
            return
        }
        var rng = SplitMix64(seed: 0x5b10c)
        for counter: UInt64 in [0, 1, 0xffff_ffff, 0xffff_fffd, 0x1234_5678_9abc_def0] {
            let key = rng.bytes(32), keyB = rng.bytes(32), nonce = rng.bytes(24)
            key.withUnsafeBytes { k in keyB.withUnsafeBytes { kb in nonce.withUnsafeBytes { n in
                let portable = xsalsa20InputCore(k.baseAddress!, n.baseAddress!, counter, .zero)
                #expect(SalsaKernel.xsalsa20Input(k.baseAddress!, n.baseAddress!, counter) == portable, "input block, counter \(counter)")
                let pair = SalsaKernel.xsalsa20InputPair(k.baseAddress!, kb.baseAddress!, n.baseAddress!)
                let portablePair = xsalsa20InputPairCore(k.baseAddress!, kb.baseAddress!, n.baseAddress!, .zero)
                #expect(pair.0 == portablePair.0 && pair.1 == portablePair.1, "input block pair")

                let x = portable
                var got = [UInt8](repeating: 0, count: 256), want = got
                got.withUnsafeMutableBytes { g in want.withUnsafeMutableBytes { w in
                    SalsaKernel.blocks(x, g.baseAddress!, two: false)
                    salsa20BlockCore(x, w.baseAddress!, .zero)
                } }
                #expect(got == want, "one block, counter \(counter)")
                got.withUnsafeMutableBytes { g in want.withUnsafeMutableBytes { w in
                    SalsaKernel.blocks(x, g.baseAddress!, two: true)
                    salsa20Block2Core(x, w.baseAddress!, .zero)
                } }
                #expect(got == want, "two blocks, counter \(counter)")
                got.withUnsafeMutableBytes { g in want.withUnsafeMutableBytes { w in
                    SalsaKernel.blocks4(x, g.baseAddress!)
                    let base = w.baseAddress!
                    salsa20x4(x, counter, hardware: false) { j, q, v in
                        base.storeBytes(of: v, toByteOffset: 64 * j + 16 * q, as: SIMD4<UInt32>.self)
                    }
                } }
                #expect(got == want, "four blocks, counter \(counter)")
            } } }
        }
    }

    @Test("The scalar short-message cores (the XSalsa20 input block, one keystream block) equal the portable ones")
    func scalarShortCoresMatchPortable() {
        guard CPU.features.bmi2 else {
            print("note: no BMI2 on this processor; the scalar Salsa20 cores are not compiled in")
            return
        }
        var rng = SplitMix64(seed: 0x5ca1a)
        for counter: UInt64 in [0, 1, 0xffff_ffff, 0xffff_fffd, 0x1234_5678_9abc_def0] {
            for _ in 0..<20 {
                let key = rng.bytes(32), nonce = rng.bytes(24)
                key.withUnsafeBytes { k in nonce.withUnsafeBytes { n in
                    let portable = xsalsa20InputCore(k.baseAddress!, n.baseAddress!, counter, .zero)
                    #expect(SalsaKernel.xsalsa20InputScalar(k.baseAddress!, n.baseAddress!, counter) == portable,
                            "input block, counter \(counter)")
                    var got = [UInt8](repeating: 0, count: 64), want = got
                    got.withUnsafeMutableBytes { g in want.withUnsafeMutableBytes { w in
                        SalsaKernel.blockScalar(portable, g.baseAddress!)
                        salsa20BlockCore(portable, w.baseAddress!, .zero)
                    } }
                    #expect(got == want, "one block, counter \(counter)")
                } }
            }
        }
    }

    @Test("scryptBlockMix of the AVX-512VL build equals the portable one (with and without the XOR block)")
    func scryptBlockMixMatchesPortable() {
        guard SalsaKernelTier.available.contains(.avx512) else {
            print("note: no AVX-512VL on this processor; the scrypt BlockMix kernel is not compiled in")
            return
        }
        var rng = SplitMix64(seed: 0x5c1217)
        for r in [1, 2, 3, 8] {
            let bb = 128 * r
            for masked in [false, true] {
                let input = rng.bytes(bb), mask = rng.bytes(bb)
                var viaKernel = [UInt8](repeating: 0, count: bb), viaPortable = viaKernel
                var jKernel: UInt64 = 0, jPortable: UInt64 = 1
                input.withUnsafeBytes { i in mask.withUnsafeBytes { m in
                    // Whole 16-byte words (the portable code loads the diagonal layout aligned).
                    let src = i.baseAddress!, msk: UnsafeRawPointer? = masked ? m.baseAddress! : nil
                    viaKernel.withUnsafeMutableBytes { jKernel = SalsaKernel.scryptBlockMix(src, msk, $0.baseAddress!, r) }
                    viaPortable.withUnsafeMutableBytes { jPortable = scryptBlockMix(src, msk, $0.baseAddress!, r) }
                } }
                #expect(viaKernel == viaPortable, "r = \(r), mask \(masked)")
                #expect(jKernel == jPortable, "Integerify, r = \(r), mask \(masked)")
            }
        }
    }
}
#endif
