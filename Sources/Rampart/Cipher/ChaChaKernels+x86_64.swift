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
    /// Keystream XOR and Poly1305 in one pass (see `chacha20XORPoly1305AVX2`).
    @inline(__always)
    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        chacha20XORPoly1305AVX2(state, src, srcStride, dst, groups, poly, mac, macLag)
    }
}

#endif
