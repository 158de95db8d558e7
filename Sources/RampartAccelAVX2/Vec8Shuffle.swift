// The byte shuffles of eight 32-bit lanes (`vpshufb` on 256-bit registers), which the SHA-1, SHA-256
// and ChaCha20 kernels of this tier and RampartAccelAVX512's ChaCha20 use. They need an AVX2
// intrinsic, so they live here and not with the generic eight-lane operations of
// RampartKernelSupport/Vec8.swift (whose debug build has no CPU features); `@_alwaysEmitIntoClient`,
// so that RampartAccelAVX512 compiles them with its own features.

import Swift
import RampartKernelSupport

#if arch(x86_64)

/// vpshufb: the bytes of each 128-bit half chosen by `mask` (0x80 gives zero).
@_alwaysEmitIntoClient @_transparent public func shuffle8(_ v: V8, _ mask: SIMD4<UInt64>) -> V8 {
    let r = Builtin.int_x86_avx2_pshuf_b(Builtin.bitcast_Vec8xInt32_Vec32xInt8(v), unsafeBitCast(mask, to: Builtin.Vec32xInt8.self))
    return Builtin.bitcast_Vec32xInt8_Vec8xInt32(r)
}

/// Byte swap of every 32-bit lane.
@_alwaysEmitIntoClient @_transparent public func byteSwap8(_ v: V8) -> V8 {
    shuffle8(v, SIMD4<UInt64>(0x0405060700010203, 0x0c0d0e0f08090a0b, 0x0405060700010203, 0x0c0d0e0f08090a0b))
}

#endif
