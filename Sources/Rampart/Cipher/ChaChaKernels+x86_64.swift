// x86_64 binding of the ChaCha20 kernel (see Platform/Kernels.swift): eight blocks at a time, in the
// AVX2 build (RampartAccelAVX2Salsa/ChaCha20AVX2.swift) and the AVX-512VL build of the same source
// (RampartAccelAVX512Salsa), chosen as for Salsa20 (``SalsaKernelTier``).
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelAVX2Salsa

enum ChaChaKernel {
    static let name: String? = SalsaKernel.name
    static func supported(_ f: CPUFeatures) -> Bool { SalsaKernelTier.avx2.capable(f) }

    /// XORs `groups` · 512 bytes of keystream from `src` into `dst`; advances the counter in `state`.
    @inline(__always)
    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                    _ groups: Int, tier: SalsaKernelTier? = SalsaKernelTier.selected) {
        if tier == .avx512 {
            SalsaAVX512.chacha20XOR(state, src, dst, groups)
        } else {
            chacha20XORAVX2(state, src, dst, groups)
        }
    }
    /// Keystream XOR and Poly1305 in one pass (see `chacha20XORPoly1305AVX2`).
    @inline(__always)
    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int,
                            tier: SalsaKernelTier? = SalsaKernelTier.selected) {
        if tier == .avx512 {
            SalsaAVX512.chacha20XORPoly1305(state, src, srcStride, dst, groups, poly, mac, macLag)
        } else {
            chacha20XORPoly1305AVX2(state, src, srcStride, dst, groups, poly, mac, macLag)
        }
    }
}

#endif
