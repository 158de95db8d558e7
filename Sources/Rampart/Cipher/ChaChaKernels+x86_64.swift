// x86_64 binding of the ChaCha20 kernel (see Platform/Kernels.swift): eight blocks at a time on AVX2
// (RampartAccelAVX2Salsa/ChaCha20AVX2.swift).
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelAVX2Salsa

enum ChaChaKernel {
    static let name: String? = "avx2"
    static func supported(_ f: CPUFeatures) -> Bool { f.avx2 }

    /// XORs `groups` · 512 bytes of keystream from `src` into `dst`; advances the counter in `state`.
    @inline(__always)
    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                    _ groups: Int) {
        chacha20XORAVX2(state, src, dst, groups)
    }
}

#endif
