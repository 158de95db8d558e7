// Salsa20/20 with AVX-512VL: every entry point of the Salsa20 registry on this tier. The eight-block
// stream loops, alone and stitched with Poly1305 for `SecretBox`, are RampartKernelSupport's body
// (Salsa20Lanes8.swift) compiled with this tier's features: on the same 256-bit registers as the AVX2
// build, each rotation (two shifts and an OR) becomes one `vprold`. The short-message blocks are
// SalsaShortAVX512.swift's, scrypt's BlockMix ScryptAVX512.swift's. The caller must have checked for
// AVX2 and AVX-512VL.

import Swift
import RampartKernelSupport

#if arch(x86_64)

/// XORs `groups` × 512 bytes of Salsa20/20 keystream from `src` into `dst` (``salsa20XORLanes8``).
@inline(never)
public func salsa20XORAVX512VL(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                               _ groups: Int) {
    salsa20XORLanes8(state, src, dst, groups)
}

/// Salsa20/20 stitched with Poly1305 (``salsa20XORPoly1305Lanes8``).
@inline(never)
public func salsa20XORPoly1305AVX512VL(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                                       _ dst: UnsafeMutableRawPointer, _ groups: Int,
                                       _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
    salsa20XORPoly1305Lanes8(state, src, srcStride, dst, groups, poly, mac, macLag)
}

/// Salsa20 on AVX-512VL (`avx512vl`): the stream loops and the short-message blocks. `.zero` reaches
/// the short-message kernels as the opaque parameter of a public function (SalsaShortAVX512.swift).
public enum Salsa20AVX512VL: Salsa20Implementation {
    public static let name = "avx512vl"
    public static let requires: KernelFeatures = [.avx2, .avx512vl]
    public static let vectorBlocks = true
    @inline(__always)
    public static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int) {
        salsa20XORAVX512VL(state, src, dst, groups)
    }
    @inline(__always)
    public static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                                   _ dst: UnsafeMutableRawPointer, _ groups: Int,
                                   _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        salsa20XORPoly1305AVX512VL(state, src, srcStride, dst, groups, poly, mac, macLag)
    }
    @inline(__always)
    public static func xsalsa20Input(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
        xsalsa20InputAVX512(key, nonce, counter, .zero)
    }
    @inline(__always)
    public static func block(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { salsa20BlocksAVX512(x, out, false, .zero) }
    @inline(__always)
    public static func xsalsa20InputPair(_ keyA: UnsafeRawPointer, _ keyB: UnsafeRawPointer, _ nonce: UnsafeRawPointer)
        -> (SIMD16<UInt32>, SIMD16<UInt32>) {
        xsalsa20InputPairAVX512(keyA, keyB, nonce, .zero)
    }
    @inline(__always)
    public static func blocks2(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { salsa20BlocksAVX512(x, out, true, .zero) }
    @inline(__always)
    public static func blocks4(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { salsa20Blocks4AVX512(x, out) }
    @inline(__always)
    public static func scryptBlockMix(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer,
                                      _ r: Int) -> UInt64 {
        scryptBlockMixAVX512(input, mask, output, r, .zero)
    }
}

#endif
