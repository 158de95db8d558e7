// Salsa20/20 keystream XOR, eight blocks at a time on 256-bit vectors, alone or stitched with
// Poly1305: the one body of the eight-block kernels, compiled by each tier that runs it with its own
// features (RampartAccelAVX2/Salsa20AVX2.swift for AVX2; RampartAccelAVX512/Salsa20AVX512VL.swift with
// AVX-512F and VL as well, where LLVM turns each rotation, two shifts and an OR, into one `vprold`).
// Everything here is `@_alwaysEmitIntoClient`: this module (no CPU features) emits no code for it, and
// each kernel's entry point (`@inline(never)`, a unique name per tier) holds the whole loop.
//
// Shape, for compile time: the rounds (and the final XOR) use `Builtin` vector instructions on
// `Builtin.Vec8xInt32` (`vadd`, `vxor`, `Builtin.shl/lshr_Vec8xInt32`), not `SIMD8<UInt32>` operators.
// The stdlib implements `^`, `|`, `&<<` and `&>>` on SIMD types as generic per-lane loops (only `&+`,
// `&-`, `&*` and the comparisons have concrete vector forms), so with the ten double rounds unrolled
// the SIL optimizer inlined and unrolled one eight-lane loop per shift and XOR, a few thousand of them:
// about five minutes of release (WMO) compilation for this file alone, almost all of it SIL
// optimization (-stats-output-dir: 308 s SIL, 5 s LLVM). With the builtins it takes under two seconds,
// and the machine code is the same (same instruction mix in the disassembly: 320 vpslld / vpsrld /
// vpor and 354 vpaddd in `salsa20XORAVX2`; rampart-bench unchanged). The transposes still use SIMD8
// lane subscripts (a fixed few per group, cheap to compile).
//
// Layout (libsodium's `avx2` Salsa20 code has the same one): sixteen 256-bit vectors, vector i holds
// state word i of eight consecutive blocks (lane j = block counter + j). The quarter-rounds then act
// on whole vectors with no shuffles at all; the rotations (7, 9, 13, 18: none a multiple of 8, so no
// vpshufb) are shift, shift, or: with AVX2 enabled LLVM keeps the `|` form in vector registers (it
// scalarises it only on baseline SSE2, see Docs/Architecture.md §6.1; checked in the disassembly). The
// quarter-rounds run two at a time, step by step, as libsodium pairs them. Helpers are `@_transparent`:
// with `@inline(__always)` they stayed calls (one per rotation) in this large function. After the
// rounds and the feed-forward addition, each group of four words is transposed inside the 128-bit halves
// (vpunpck{l,h}{dq,qdq}) and stored 16 bytes at a time, as libsodium does.

import Swift

#if arch(x86_64)

@usableFromInline typealias W8 = SIMD8<UInt32>

/// Zero, read with a volatile load so that the optimizer cannot know its value.
@usableFromInline @_alwaysEmitIntoClient @inline(__always) func opaqueZero() -> UInt64 {
    var zero: UInt64 = 0
    return withUnsafeMutablePointer(to: &zero) {
        UInt64(Builtin.atomicload_monotonic_volatile_Int64(UnsafeMutableRawPointer($0)._rawValue))
    }
}

/// The eight-lane vector of the rounds (Vec8.swift): `Builtin` vector instructions, not `SIMD8<UInt32>`
/// operators (see the file comment).
@usableFromInline typealias V = V8

/// One step of two independent quarter-rounds at once: `b_i ^= (a_i + d_i) <<< n` (the pairing of
/// libsodium's code: enough independent work for the scheduler, few live temporaries).
@usableFromInline @_alwaysEmitIntoClient @_transparent
func step2(_ b0: inout V, _ a0: V, _ d0: V, _ b1: inout V, _ a1: V, _ d1: V, _ n: UInt32) {
    let t0 = add8(a0, d0), t1 = add8(a1, d1)
    let l = splat8(n), r = splat8(32 &- n)
    b0 = xor8(b0, Builtin.shl_Vec8xInt32(t0, l))
    b1 = xor8(b1, Builtin.shl_Vec8xInt32(t1, l))
    b0 = xor8(b0, Builtin.lshr_Vec8xInt32(t0, r))
    b1 = xor8(b1, Builtin.lshr_Vec8xInt32(t1, r))
}

/// The sixteen state vectors of eight blocks.
@usableFromInline
struct Lanes8 {
    @usableFromInline var x0: V, x1: V, x2: V, x3: V, x4: V, x5: V, x6: V, x7: V
    @usableFromInline var x8: V, x9: V, x10: V, x11: V, x12: V, x13: V, x14: V, x15: V

    @_alwaysEmitIntoClient @_transparent
    init(x0: V, x1: V, x2: V, x3: V, x4: V, x5: V, x6: V, x7: V,
         x8: V, x9: V, x10: V, x11: V, x12: V, x13: V, x14: V, x15: V) {
        self.x0 = x0; self.x1 = x1; self.x2 = x2; self.x3 = x3; self.x4 = x4; self.x5 = x5; self.x6 = x6; self.x7 = x7
        self.x8 = x8; self.x9 = x9; self.x10 = x10; self.x11 = x11; self.x12 = x12; self.x13 = x13; self.x14 = x14
        self.x15 = x15
    }
}

/// One Salsa20 double round on eight blocks.
@usableFromInline @_alwaysEmitIntoClient @_transparent
func doubleRound(_ s: inout Lanes8) {
    var x0 = s.x0, x1 = s.x1, x2 = s.x2, x3 = s.x3, x4 = s.x4, x5 = s.x5, x6 = s.x6, x7 = s.x7
    var x8 = s.x8, x9 = s.x9, x10 = s.x10, x11 = s.x11, x12 = s.x12, x13 = s.x13, x14 = s.x14, x15 = s.x15
    // Column round: quarter-rounds (x0, x4, x8, x12), (x5, x9, x13, x1), (x10, x14, x2, x6),
    // (x15, x3, x7, x11), two at a time, step by step.
    step2(&x4, x0, x12, &x9, x5, x1, 7)
    step2(&x8, x4, x0, &x13, x9, x5, 9)
    step2(&x12, x8, x4, &x1, x13, x9, 13)
    step2(&x0, x12, x8, &x5, x1, x13, 18)
    step2(&x14, x10, x6, &x3, x15, x11, 7)
    step2(&x2, x14, x10, &x7, x3, x15, 9)
    step2(&x6, x2, x14, &x11, x7, x3, 13)
    step2(&x10, x6, x2, &x15, x11, x7, 18)
    // Row round: (x0, x1, x2, x3), (x5, x6, x7, x4), (x10, x11, x8, x9), (x15, x12, x13, x14).
    step2(&x1, x0, x3, &x6, x5, x4, 7)
    step2(&x2, x1, x0, &x7, x6, x5, 9)
    step2(&x3, x2, x1, &x4, x7, x6, 13)
    step2(&x0, x3, x2, &x5, x4, x7, 18)
    step2(&x11, x10, x9, &x12, x15, x14, 7)
    step2(&x8, x11, x10, &x13, x12, x15, 9)
    step2(&x9, x8, x11, &x14, x13, x12, 13)
    step2(&x10, x9, x8, &x15, x14, x13, 18)
    s = Lanes8(x0: x0, x1: x1, x2: x2, x3: x3, x4: x4, x5: x5, x6: x6, x7: x7,
               x8: x8, x9: x9, x10: x10, x11: x11, x12: x12, x13: x13, x14: x14, x15: x15)
}

/// The input block broadcast to all lanes, and the lane counters of a group.
@usableFromInline
struct Input8 {
    @usableFromInline var i0: W8, i1: W8, i2: W8, i3: W8, i4: W8, i5: W8, i6: W8, i7: W8
    @usableFromInline var i10: W8, i11: W8, i12: W8, i13: W8, i14: W8, i15: W8

    @_alwaysEmitIntoClient @_transparent
    init(_ state: UnsafeRawPointer) {
        func w(_ i: Int) -> W8 { W8(repeating: state.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
        i0 = w(0); i1 = w(1); i2 = w(2); i3 = w(3); i4 = w(4); i5 = w(5); i6 = w(6); i7 = w(7)
        i10 = w(10); i11 = w(11); i12 = w(12); i13 = w(13); i14 = w(14); i15 = w(15)
    }

    /// Words 8 and 9 of blocks `counter ... counter + 7` (the carry into word 9 per lane).
    @_alwaysEmitIntoClient @_transparent
    static func counters(_ counter: UInt64) -> (W8, W8) {
        let lo = UInt32(truncatingIfNeeded: counter)
        let c8 = W8(repeating: lo) &+ W8(0, 1, 2, 3, 4, 5, 6, 7)
        let c9 = W8(repeating: UInt32(truncatingIfNeeded: counter >> 32))
            &+ W8(repeating: 0).replacing(with: 1, where: c8 .< W8(repeating: lo))
        return (c8, c9)
    }

    @_alwaysEmitIntoClient @_transparent
    func start(_ c8: W8, _ c9: W8) -> Lanes8 {
        Lanes8(x0: vector8(i0), x1: vector8(i1), x2: vector8(i2), x3: vector8(i3), x4: vector8(i4), x5: vector8(i5), x6: vector8(i6),
               x7: vector8(i7), x8: vector8(c8), x9: vector8(c9), x10: vector8(i10), x11: vector8(i11), x12: vector8(i12),
               x13: vector8(i13), x14: vector8(i14), x15: vector8(i15))
    }
}

/// XORs 16 bytes at `offset` of `src` with `k` into `dst` (`Builtin` XOR: `^` on SIMD4 is a per-lane loop).
@usableFromInline @_alwaysEmitIntoClient @_transparent
func xor16(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ offset: Int, _ k: SIMD4<UInt32>) {
    let x = Builtin.xor_Vec4xInt32(unsafeBitCast(src.loadUnaligned(fromByteOffset: offset, as: SIMD4<UInt32>.self),
                                                 to: Builtin.Vec4xInt32.self),
                                   unsafeBitCast(k, to: Builtin.Vec4xInt32.self))
    dst.storeBytes(of: unsafeBitCast(x, to: SIMD4<UInt32>.self), toByteOffset: offset, as: SIMD4<UInt32>.self)
}

/// Words 4q...4q+3 of the eight blocks: transposed inside the 128-bit halves, then stored 16 bytes at
/// a time (the low half of result k is block k, the high half block k + 4), as libsodium does. Joining
/// two halves into 32-byte stores instead let LLVM merge the shuffles of two transposes into about
/// 250 blends and inserts per group.
@usableFromInline @_alwaysEmitIntoClient @_transparent
func quad(_ a: W8, _ b: W8, _ c: W8, _ d: W8, _ q: Int, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
          _ z: W8) {
    // First unpack stage, then an addition of a zero LLVM cannot see: without that barrier it merged
    // both stages and the half extraction into per-output blends and scalar inserts (~250 instructions).
    let t0 = W8(a[0], b[0], a[1], b[1], a[4], b[4], a[5], b[5]) &+ z
    let t1 = W8(a[2], b[2], a[3], b[3], a[6], b[6], a[7], b[7]) &+ z
    let t2 = W8(c[0], d[0], c[1], d[1], c[4], d[4], c[5], d[5]) &+ z
    let t3 = W8(c[2], d[2], c[3], d[3], c[6], d[6], c[7], d[7]) &+ z
    let u0 = W8(t0[0], t0[1], t2[0], t2[1], t0[4], t0[5], t2[4], t2[5])
    let u1 = W8(t0[2], t0[3], t2[2], t2[3], t0[6], t0[7], t2[6], t2[7])
    let u2 = W8(t1[0], t1[1], t3[0], t3[1], t1[4], t1[5], t3[4], t3[5])
    let u3 = W8(t1[2], t1[3], t3[2], t3[3], t1[6], t1[7], t3[6], t3[7])
    let h0 = halves8(u0), h1 = halves8(u1), h2 = halves8(u2), h3 = halves8(u3)
    xor16(src, dst, 16 * q, h0.low)
    xor16(src, dst, 64 + 16 * q, h1.low)
    xor16(src, dst, 128 + 16 * q, h2.low)
    xor16(src, dst, 192 + 16 * q, h3.low)
    xor16(src, dst, 256 + 16 * q, h0.high)
    xor16(src, dst, 320 + 16 * q, h1.high)
    xor16(src, dst, 384 + 16 * q, h2.high)
    xor16(src, dst, 448 + 16 * q, h3.high)
}

/// Feed-forward addition, transposition, and `dst[0..<512] = src[0..<512] ^ keystream`.
@usableFromInline @_alwaysEmitIntoClient @_transparent
func finish(_ s: Lanes8, _ i: Input8, _ c8: W8, _ c9: W8, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
            _ z: W8) {
    quad(simd8(s.x0) &+ i.i0, simd8(s.x1) &+ i.i1, simd8(s.x2) &+ i.i2, simd8(s.x3) &+ i.i3, 0, src, dst, z)
    quad(simd8(s.x4) &+ i.i4, simd8(s.x5) &+ i.i5, simd8(s.x6) &+ i.i6, simd8(s.x7) &+ i.i7, 1, src, dst, z)
    quad(simd8(s.x8) &+ c8, simd8(s.x9) &+ c9, simd8(s.x10) &+ i.i10, simd8(s.x11) &+ i.i11, 2, src, dst, z)
    quad(simd8(s.x12) &+ i.i12, simd8(s.x13) &+ i.i13, simd8(s.x14) &+ i.i14, simd8(s.x15) &+ i.i15, 3, src, dst, z)
}

/// XORs `groups` × 512 bytes of Salsa20/20 keystream from `src` into `dst` (the same buffer or
/// disjoint ones): the body of every tier's `salsa20XOR…` entry point.
///
/// `state` holds the 16-word Salsa20 input block (native-endian `UInt32`s, the block counter in words
/// 8 and 9); the counter is advanced by `8 · groups`. The caller must have checked the CPU's features.
@_alwaysEmitIntoClient @inline(__always)
public func salsa20XORLanes8(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                             _ groups: Int) {
    let input = Input8(state)
    let z = W8(repeating: UInt32(truncatingIfNeeded: opaqueZero()))
    var counter = UInt64(state.loadUnaligned(fromByteOffset: 32, as: UInt32.self))
        | UInt64(state.loadUnaligned(fromByteOffset: 36, as: UInt32.self)) << 32
    var src = src
    var dst = dst
    var g = 0
    while g < groups {
        let (c8, c9) = Input8.counters(counter)
        var s = input.start(c8, c9)
        doubleRound(&s); doubleRound(&s); doubleRound(&s); doubleRound(&s); doubleRound(&s)
        doubleRound(&s); doubleRound(&s); doubleRound(&s); doubleRound(&s); doubleRound(&s)
        finish(s, input, c8, c9, src, dst, z)
        counter &+= 8
        src += 512
        dst += 512
        g &+= 1
    }
    state.storeBytes(of: UInt32(truncatingIfNeeded: counter), toByteOffset: 32, as: UInt32.self)
    state.storeBytes(of: UInt32(truncatingIfNeeded: counter >> 32), toByteOffset: 36, as: UInt32.self)
}

// MARK: - Salsa20 stitched with Poly1305 (secretbox)
//
// Salsa20 keeps the vector units busy and leaves the scalar multiplier idle; Poly1305 is one long
// chain of scalar multiplications and leaves the vector units idle. Running both in one loop, with
// three Poly1305 blocks written into every double round, lets the out-of-order core overlap them:
// a secretbox costs about as much as the slower of the two instead of their sum.

// The Poly1305 block itself is poly1305Block (Poly1305Block.swift, shared with Rampart's MAC).

/// The Poly1305 accumulator and clamped key, radix 2^64 (Rampart's MAC/Poly1305.swift has the bounds).
@usableFromInline
struct PolyState {
    @usableFromInline var h0: UInt64, h1: UInt64, h2: UInt64
    @usableFromInline let r0: UInt64, r1: UInt64, s1: UInt64

    @_alwaysEmitIntoClient @_transparent
    init(h0: UInt64, h1: UInt64, h2: UInt64, r0: UInt64, r1: UInt64, s1: UInt64) {
        self.h0 = h0; self.h1 = h1; self.h2 = h2; self.r0 = r0; self.r1 = r1; self.s1 = s1
    }

    /// h = (h + m + 2^128) · r, partially reduced (h2 ≤ 4), for the 16-byte block at `p`.
    @_alwaysEmitIntoClient @_transparent
    mutating func block(_ p: UnsafeRawPointer) {
        poly1305Block(&h0, &h1, &h2, m0: UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)),
                      m1: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                      hibit: 1, r0: r0, r1: r1, s1: s1)
    }
}

/// Salsa20/20 over `groups` × 512 bytes, stitched with Poly1305 over 512 bytes per group: the body of
/// every tier's `salsa20XORPoly1305…` entry point.
///
/// Keystream: as ``salsa20XORLanes8(_:_:_:_:)``, except that `src` advances by `srcStride` per group
/// (0 with a 512-byte zero buffer writes the bare keystream). MAC: during group `g ≥ macLag` the 32
/// blocks at `mac + 512 · (g − macLag)` are absorbed into the Poly1305 state `poly` (r0, r1, s1, h0,
/// h1, h2; the accumulator is updated), every block with the 2^128 bit. `macLag` 1 authenticates the
/// ciphertext this call writes, one group behind (seal); 0 authenticates an independent buffer
/// (open). The caller must have checked the CPU's features.
@_alwaysEmitIntoClient @inline(__always)
public func salsa20XORPoly1305Lanes8(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                                     _ dst: UnsafeMutableRawPointer, _ groups: Int,
                                     _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
    let input = Input8(state)
    let z = W8(repeating: UInt32(truncatingIfNeeded: opaqueZero()))
    var counter = UInt64(state.loadUnaligned(fromByteOffset: 32, as: UInt32.self))
        | UInt64(state.loadUnaligned(fromByteOffset: 36, as: UInt32.self)) << 32
    var ps = PolyState(h0: poly[3], h1: poly[4], h2: poly[5], r0: poly[0], r1: poly[1], s1: poly[2])
    var src = src
    var dst = dst
    var m = mac
    var g = 0
    while g < groups {
        let (c8, c9) = Input8.counters(counter)
        var s = input.start(c8, c9)
        if g >= macLag {
            // 30 MAC blocks inside the rounds, 2 after them.
            var r = 0
            while r < 10 {
                ps.block(m)
                doubleRound(&s)
                ps.block(m + 16)
                ps.block(m + 32)
                m += 48
                r &+= 1
            }
            ps.block(m)
            ps.block(m + 16)
            m += 32
        } else {
            var r = 0
            while r < 10 {
                doubleRound(&s)
                r &+= 1
            }
        }
        finish(s, input, c8, c9, src, dst, z)
        counter &+= 8
        src += srcStride
        dst += 512
        g &+= 1
    }
    poly[3] = ps.h0; poly[4] = ps.h1; poly[5] = ps.h2
    state.storeBytes(of: UInt32(truncatingIfNeeded: counter), toByteOffset: 32, as: UInt32.self)
    state.storeBytes(of: UInt32(truncatingIfNeeded: counter >> 32), toByteOffset: 36, as: UInt32.self)
}

#endif
