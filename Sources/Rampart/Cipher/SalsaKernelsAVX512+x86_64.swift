// x86_64 binding of the AVX-512VL build of the Salsa20 and ChaCha20 kernels (RampartAccelAVX512Salsa:
// the same source files as RampartAccelAVX2Salsa's). In a file of its own because both modules declare
// the same names: this file imports only the AVX-512 one.
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelAVX512Salsa

enum SalsaAVX512 {
    /// `.zero` reaches the kernels as an opaque parameter (see SalsaShortAVX512.swift).
    @inline(__always)
    static func xsalsa20Input(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
        xsalsa20InputAVX512(key, nonce, counter, .zero)
    }

    @inline(__always)
    static func xsalsa20InputPair(_ keyA: UnsafeRawPointer, _ keyB: UnsafeRawPointer, _ nonce: UnsafeRawPointer)
        -> (SIMD16<UInt32>, SIMD16<UInt32>) {
        xsalsa20InputPairAVX512(keyA, keyB, nonce, .zero)
    }

    @inline(__always)
    static func blocks(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer, two: Bool) {
        salsa20BlocksAVX512(x, out, two, .zero)
    }

    @inline(__always)
    static func blocks4(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { salsa20Blocks4AVX512(x, out) }

    @inline(__always)
    static func scryptBlockMix(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer,
                               _ r: Int) -> UInt64 {
        scryptBlockMixAVX512(input, mask, output, r, .zero)
    }

    @inline(__always)
    static func salsa20XOR(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int) {
        salsa20XORAVX2(state, src, dst, groups)
    }

    @inline(__always)
    static func salsa20XORPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                                   _ dst: UnsafeMutableRawPointer, _ groups: Int,
                                   _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        salsa20XORPoly1305AVX2(state, src, srcStride, dst, groups, poly, mac, macLag)
    }

    @inline(__always)
    static func chacha20XOR(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int) {
        chacha20XORAVX2(state, src, dst, groups)
    }

    @inline(__always)
    static func chacha20XORPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                                    _ dst: UnsafeMutableRawPointer, _ groups: Int,
                                    _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        chacha20XORPoly1305AVX2(state, src, srcStride, dst, groups, poly, mac, macLag)
    }
}

#endif
