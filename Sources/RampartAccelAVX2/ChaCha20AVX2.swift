// ChaCha20 (RFC 8439), eight blocks at a time, with AVX2: RampartKernelSupport's eight-block body
// (ChaCha20Lanes8.swift) compiled with this tier's features, alone and stitched with Poly1305 for
// ChaCha20-Poly1305; the rotations by 16 and 8 are Vec8.swift's `shuffle8` (`vpshufb`). The caller
// must have checked for AVX2. The whole loop lives in each entry point.

import Swift
import RampartKernelSupport

#if arch(x86_64)

/// XORs `groups` × 512 bytes of ChaCha20 keystream from `src` into `dst` (``chacha20XORLanes8``).
@inline(never)
public func chacha20XORAVX2(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                            _ groups: Int) {
    chacha20XORLanes8(state, src, dst, groups, shuffleBytes: shuffle8)
}

/// ChaCha20 stitched with Poly1305 (``chacha20XORPoly1305Lanes8``).
@inline(never)
public func chacha20XORPoly1305AVX2(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                                    _ dst: UnsafeMutableRawPointer, _ groups: Int,
                                    _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
    chacha20XORPoly1305Lanes8(state, src, srcStride, dst, groups, poly, mac, macLag, shuffleBytes: shuffle8)
}

/// ChaCha20 on AVX2 (`avx2`).
public enum ChaCha20AVX2: ChaCha20Implementation {
    public static let name = "avx2"
    public static let requires: KernelFeatures = [.avx2]
    @inline(__always)
    public static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int) {
        chacha20XORAVX2(state, src, dst, groups)
    }
    @inline(__always)
    public static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                                   _ dst: UnsafeMutableRawPointer, _ groups: Int,
                                   _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        chacha20XORPoly1305AVX2(state, src, srcStride, dst, groups, poly, mac, macLag)
    }
}

#endif
