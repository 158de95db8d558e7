// Every BLAKE2b kernel this processor runs (the AVX2 one and the scalar BMI2 one, not only the one the
// registry selected) against the portable compression: random states and blocks at odd offsets, one to
// five blocks per call, the last block's length at its edges (0, 1, 127, 128 or none), and counters
// about to carry from t[0] into t[1]. The selected kernel also runs every BLAKE2b, Argon2 and cross-check
// test through the public types.

#if arch(x86_64)
@_spi(Testing) @testable import Rampart
import RampartTestSupport
import Testing

@Suite("BLAKE2b kernels")
struct BLAKE2bKernelTests {
    @Test("Every BLAKE2b kernel equals the portable compression")
    func everyKernelMatchesPortable() {
        let tiers = Kernels.implementations(of: "blake2b").compactMap { Registries.blake2b.runnableImplementation(named: $0) }
        if tiers.count == 1 { print("note: no BLAKE2b kernel on this processor; nothing to compare") }
        var rng = SplitMix64(seed: 0xb1a2b)
        for tier in tiers {
            for count in 1...5 {
                for lastLength in [-1, 0, 1, 127, 128] {
                    for t0 in [UInt64(0), 1 << 40, UInt64.max - 200, UInt64.max - 127] {
                        let offset = (count &+ lastLength &+ 8) % 8
                        let data = rng.bytes(offset + 128 * count)
                        var state = [UInt64](repeating: 0, count: 10)
                        for w in 0..<8 { state[w] = rng.next() }
                        state[8] = t0
                        state[9] = rng.next() >> 1
                        var viaKernel = state, viaPortable = state
                        data.withUnsafeBytes { d in
                            let src = d.baseAddress! + offset
                            viaKernel.withUnsafeMutableBufferPointer { tier.blocks($0.baseAddress!, src, count, lastLength) }
                            viaPortable.withUnsafeMutableBytes { blake2bBlocksPortable($0.baseAddress!, src, count, lastLength) }
                        }
                        #expect(viaKernel == viaPortable, "\(tier.name as String): \(count) blocks, last length \(lastLength), t0 \(t0)")
                    }
                }
            }
        }
    }
}
#endif
