// Eight 32-bit lanes as `Builtin.Vec8xInt32`: the vector operations that the eight-lane kernels share
// (Salsa20Lanes8.swift, ChaCha20Lanes8.swift, SHA256Lanes8.swift here; SHA-1 and SHA-256 of
// RampartAccelAVX2), and the volatile wipe of their stack tables. All `@_alwaysEmitIntoClient
// @_transparent`: this module (no CPU features) emits no code for them, and each kernel tier compiles
// them with its own features. Only generic `Builtin` vector instructions, no x86 intrinsic, so that a
// debug build of this module, which does emit them, needs no feature (the byte shuffles that need
// SSSE3/AVX2 stay in RampartAccelAVX2/Vec8Shuffle.swift).
//
// The kernels' vector code uses these Builtin operations, not the SIMD types' operators: through those
// (measured, Swift 6.3.1) LLVM turned 64-bit shifts into per-lane extracts, scalar shifts and
// broadcasts, and narrowed computations to the lanes a later shuffle keeps with blends and inserts,
// about fifteen more instructions per SHA-256 schedule step, a quarter of that kernel's speed; and the
// stdlib's `^`, `&<<` and `&>>` on SIMD types are generic per-lane loops that cost the SIL optimizer
// minutes on the unrolled Salsa20 rounds (Salsa20Lanes8.swift).

import Swift

#if arch(x86_64)

/// A 256-bit vector of eight `UInt32` lanes as LLVM sees it.
public typealias V8 = Builtin.Vec8xInt32

@_alwaysEmitIntoClient @_transparent public func splat8(_ n: UInt32) -> V8 { unsafeBitCast(SIMD8<UInt32>(repeating: n), to: V8.self) }
@_alwaysEmitIntoClient @_transparent public func add8(_ a: V8, _ b: V8) -> V8 { Builtin.add_Vec8xInt32(a, b) }
@_alwaysEmitIntoClient @_transparent public func xor8(_ a: V8, _ b: V8) -> V8 { Builtin.xor_Vec8xInt32(a, b) }
@_alwaysEmitIntoClient @_transparent public func and8(_ a: V8, _ b: V8) -> V8 { Builtin.and_Vec8xInt32(a, b) }
@_alwaysEmitIntoClient @_transparent public func or8(_ a: V8, _ b: V8) -> V8 { Builtin.or_Vec8xInt32(a, b) }
@_alwaysEmitIntoClient @_transparent public func shr8(_ a: V8, _ n: UInt32) -> V8 { Builtin.lshr_Vec8xInt32(a, splat8(n)) }
@_alwaysEmitIntoClient @_transparent public func shl8(_ a: V8, _ n: UInt32) -> V8 { Builtin.shl_Vec8xInt32(a, splat8(n)) }
/// Rotations of every lane: two shifts and an OR (AVX2 has no vector rotate; with AVX-512VL LLVM
/// makes them one vprold).
@_alwaysEmitIntoClient @_transparent public func rotr8(_ a: V8, _ n: UInt32) -> V8 { or8(shr8(a, n), shl8(a, 32 &- n)) }
@_alwaysEmitIntoClient @_transparent public func rotl8(_ a: V8, _ n: UInt32) -> V8 { or8(shl8(a, n), shr8(a, 32 &- n)) }
/// A right shift of each 64-bit lane.
@_alwaysEmitIntoClient @_transparent public func shr64x4(_ a: V8, _ n: UInt64) -> V8 {
    let q: Builtin.Vec4xInt64 = Builtin.bitcast_Vec8xInt32_Vec4xInt64(a)
    let amount = unsafeBitCast(SIMD4<UInt64>(repeating: n), to: Builtin.Vec4xInt64.self)
    return Builtin.bitcast_Vec4xInt64_Vec8xInt32(Builtin.lshr_Vec4xInt64(q, amount))
}
@_alwaysEmitIntoClient @_transparent public func vector8(_ v: SIMD8<UInt32>) -> V8 { unsafeBitCast(v, to: V8.self) }
@_alwaysEmitIntoClient @_transparent public func simd8(_ v: V8) -> SIMD8<UInt32> { unsafeBitCast(v, to: SIMD8<UInt32>.self) }

/// The low and high 128-bit halves of eight lanes. The stdlib's `lowHalf`/`highHalf` stayed out-of-line
/// calls in the eight-block Salsa20 kernels' transposes (64 calls per 512-byte group, to whichever
/// module's copy of the specialization the linker kept: code compiled for another tier).
@_alwaysEmitIntoClient @_transparent public func halves8(_ v: SIMD8<UInt32>) -> (low: SIMD4<UInt32>, high: SIMD4<UInt32>) {
    unsafeBitCast(v, to: (SIMD4<UInt32>, SIMD4<UInt32>).self)
}

/// Zeroes `bytes` bytes (a multiple of 8) at `p` with volatile stores, which the optimizer cannot
/// remove as dead: the kernels' stack tables hold message schedules and ladder variables.
@_alwaysEmitIntoClient @_transparent public func volatileZero(_ p: UnsafeMutableRawPointer, _ bytes: Int) {
    var off = 0
    while off < bytes {
        Builtin.atomicstore_monotonic_volatile_Int64((p + off)._rawValue, Int64(0)._value)
        off &+= 8
    }
}

#endif
