// Eight 32-bit lanes as `Builtin.Vec8xInt32`, the operations the SHA-1 and SHA-256 kernels of this tier
// share, and the volatile wipe of their stack tables. Also compiled into RampartAccelAVX512 (a symbolic
// link to this file), with the eight-lane SHA-256 kernel.
//
// The kernels' vector code uses these Builtin operations, not the SIMD types' operators: through those
// (measured, Swift 6.3.1) LLVM turned 64-bit shifts into per-lane extracts, scalar shifts and
// broadcasts, and narrowed computations to the lanes a later shuffle keeps with blends and inserts,
// about fifteen more instructions per SHA-256 schedule step, a quarter of that kernel's speed.

import Swift

#if arch(x86_64)

typealias V8 = Builtin.Vec8xInt32

@_transparent func splat8(_ n: UInt32) -> V8 { unsafeBitCast(SIMD8<UInt32>(repeating: n), to: V8.self) }
@_transparent func add8(_ a: V8, _ b: V8) -> V8 { Builtin.add_Vec8xInt32(a, b) }
@_transparent func xor8(_ a: V8, _ b: V8) -> V8 { Builtin.xor_Vec8xInt32(a, b) }
@_transparent func and8(_ a: V8, _ b: V8) -> V8 { Builtin.and_Vec8xInt32(a, b) }
@_transparent func or8(_ a: V8, _ b: V8) -> V8 { Builtin.or_Vec8xInt32(a, b) }
@_transparent func shr8(_ a: V8, _ n: UInt32) -> V8 { Builtin.lshr_Vec8xInt32(a, splat8(n)) }
@_transparent func shl8(_ a: V8, _ n: UInt32) -> V8 { Builtin.shl_Vec8xInt32(a, splat8(n)) }
/// Rotations of every lane: two shifts and an OR (AVX2 has no vector rotate; with AVX-512VL LLVM
/// makes them one vprold).
@_transparent func rotr8(_ a: V8, _ n: UInt32) -> V8 { or8(shr8(a, n), shl8(a, 32 &- n)) }
@_transparent func rotl8(_ a: V8, _ n: UInt32) -> V8 { or8(shl8(a, n), shr8(a, 32 &- n)) }
/// A right shift of each 64-bit lane.
@_transparent func shr64x4(_ a: V8, _ n: UInt64) -> V8 {
    let q: Builtin.Vec4xInt64 = Builtin.bitcast_Vec8xInt32_Vec4xInt64(a)
    let amount = unsafeBitCast(SIMD4<UInt64>(repeating: n), to: Builtin.Vec4xInt64.self)
    return Builtin.bitcast_Vec4xInt64_Vec8xInt32(Builtin.lshr_Vec4xInt64(q, amount))
}
@_transparent func vector8(_ v: SIMD8<UInt32>) -> V8 { unsafeBitCast(v, to: V8.self) }
@_transparent func simd8(_ v: V8) -> SIMD8<UInt32> { unsafeBitCast(v, to: SIMD8<UInt32>.self) }

/// vpshufb: the bytes of each 128-bit half chosen by `mask` (0x80 gives zero).
@_transparent func shuffle8(_ v: V8, _ mask: SIMD4<UInt64>) -> V8 {
    let r = Builtin.int_x86_avx2_pshuf_b(Builtin.bitcast_Vec8xInt32_Vec32xInt8(v), unsafeBitCast(mask, to: Builtin.Vec32xInt8.self))
    return Builtin.bitcast_Vec32xInt8_Vec8xInt32(r)
}

/// Byte swap of every 32-bit lane.
@_transparent func byteSwap8(_ v: V8) -> V8 {
    shuffle8(v, SIMD4<UInt64>(0x0405060700010203, 0x0c0d0e0f08090a0b, 0x0405060700010203, 0x0c0d0e0f08090a0b))
}

/// Zeroes `bytes` bytes (a multiple of 8) at `p` with volatile stores, which the optimizer cannot
/// remove as dead: the kernels' stack tables hold message schedules.
@_transparent func volatileZero(_ p: UnsafeMutableRawPointer, _ bytes: Int) {
    var off = 0
    while off < bytes {
        Builtin.atomicstore_monotonic_volatile_Int64((p + off)._rawValue, Int64(0)._value)
        off &+= 8
    }
}

#endif
