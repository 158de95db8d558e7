// Salsa20/20, eight blocks at a time, with AVX2: RampartKernelSupport's eight-block body
// (Salsa20Lanes8.swift) compiled with this tier's features, alone and stitched with Poly1305 for
// `SecretBox`. The caller must have checked for AVX2 (the tier: with BMI1 and BMI2). The whole loop
// lives in each entry point: one call per buffer.
//
// On this tier the short-message blocks (the XSalsa20 input block, one, two or four keystream blocks,
// scrypt's BlockMix) stay with the portable code, which is as fast here (Rampart's registrations pair
// the two); RampartAccelAVX512/Salsa20AVX512VL.swift has the AVX-512VL build of both.

import Swift
import RampartKernelSupport

#if arch(x86_64)

/// XORs `groups` × 512 bytes of Salsa20/20 keystream from `src` into `dst` (``salsa20XORLanes8``).
@inline(never)
public func salsa20XORAVX2(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                           _ groups: Int) {
    salsa20XORLanes8(state, src, dst, groups)
}

/// Salsa20/20 stitched with Poly1305 (``salsa20XORPoly1305Lanes8``).
@inline(never)
public func salsa20XORPoly1305AVX2(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                                   _ dst: UnsafeMutableRawPointer, _ groups: Int,
                                   _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
    salsa20XORPoly1305Lanes8(state, src, srcStride, dst, groups, poly, mac, macLag)
}

/// The AVX2 stream loops of the Salsa20 registry (`avx2`).
public enum Salsa20AVX2: Salsa20StreamImplementation {
    public static let name = "avx2"
    public static let requires: KernelFeatures = [.avx2]
    @inline(__always)
    public static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int) {
        salsa20XORAVX2(state, src, dst, groups)
    }
    @inline(__always)
    public static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                                   _ dst: UnsafeMutableRawPointer, _ groups: Int,
                                   _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        salsa20XORPoly1305AVX2(state, src, srcStride, dst, groups, poly, mac, macLag)
    }
}

#endif
