// x86_64 bindings of the Salsa20 kernels (see Platform/Kernels.swift): eight blocks at a time on AVX2,
// alone or stitched with Poly1305 for `SecretBox` (RampartAccelAVX2Salsa).
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelAVX2Salsa

enum SalsaKernel {
    static let name: String? = "avx2"
    static func supported(_ f: CPUFeatures) -> Bool { f.avx2 }

    /// XORs `groups` · 512 bytes of keystream from `src` into `dst`; advances the counter in `state`.
    @inline(__always)
    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                    _ groups: Int) {
        salsa20XORAVX2(state, src, dst, groups)
    }

    /// Keystream XOR and Poly1305 in one pass (see `salsa20XORPoly1305AVX2`).
    @inline(__always)
    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        salsa20XORPoly1305AVX2(state, src, srcStride, dst, groups, poly, mac, macLag)
    }
}

#endif
