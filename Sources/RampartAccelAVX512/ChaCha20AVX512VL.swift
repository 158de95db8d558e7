// ChaCha20 (RFC 8439), eight blocks at a time on 256-bit registers with AVX-512VL: RampartKernelSupport's
// eight-block body (ChaCha20Lanes8.swift) compiled with this tier's features, where each rotation by
// 12 or 7 (two shifts and an OR) is one `vprold`; those by 16 and 8 stay Vec8.swift's `shuffle8`
// (`vpshufb`). The caller must have checked for AVX2 and AVX-512VL.

import Swift
import RampartKernelSupport
import RampartAccelAVX2

#if arch(x86_64)

/// XORs `groups` × 512 bytes of ChaCha20 keystream from `src` into `dst` (``chacha20XORLanes8``).
@inline(never)
public func chacha20XORAVX512VL(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                                _ groups: Int) {
    chacha20XORLanes8(state, src, dst, groups, shuffleBytes: shuffle8)
}

/// ChaCha20 stitched with Poly1305 (``chacha20XORPoly1305Lanes8``).
@inline(never)
public func chacha20XORPoly1305AVX512VL(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                                        _ dst: UnsafeMutableRawPointer, _ groups: Int,
                                        _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
    chacha20XORPoly1305Lanes8(state, src, srcStride, dst, groups, poly, mac, macLag, shuffleBytes: shuffle8)
}

/// ChaCha20 on AVX-512VL (`avx512vl`).
public enum ChaCha20AVX512VL: ChaCha20Implementation {
    public static let name = "avx512vl"
    public static let requires: KernelFeatures = [.avx2, .avx512vl]
    @inline(__always)
    public static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int) {
        chacha20XORAVX512VL(state, src, dst, groups)
    }
    @inline(__always)
    public static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                                   _ dst: UnsafeMutableRawPointer, _ groups: Int,
                                   _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        chacha20XORPoly1305AVX512VL(state, src, srcStride, dst, groups, poly, mac, macLag)
    }
}

#endif
