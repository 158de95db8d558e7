// ChaCha20 keystream XOR (RFC 8439), eight blocks at a time on 256-bit vectors, alone or stitched with
// Poly1305: the one body of the eight-block kernels, compiled by each tier that runs it with its own
// features (RampartAccelAVX2/ChaCha20AVX2.swift; RampartAccelAVX512/ChaCha20AVX512VL.swift, where the
// rotations by 12 and 7 become one `vprold` each). `@_alwaysEmitIntoClient` as in Salsa20Lanes8.swift.
// The byte permutation `vpshufb` is the caller's (`shuffleBytes`): it is an AVX2 intrinsic, which this
// module, compiled without CPU features, cannot select (a debug build emits these bodies here too).
//
// Same shape and layout as Salsa20Lanes8.swift (whose helpers this file reuses): sixteen 256-bit
// vectors, vector i holding state word i of eight consecutive blocks (lane j = block counter + j), the
// quarter-rounds on whole vectors with `Builtin` vector instructions (fast to compile; see that file's
// comment), and the same transpose-and-store of each group of four words (`quad`). ChaCha's rotations
// by 16 and 8 are byte permutations inside each 32-bit lane: one `vpshufb` each; those by 12 and 7 are
// shift, shift, xor (the two halves never overlap, so XOR equals OR). The whole loop runs in one call
// per buffer.

import Swift

#if arch(x86_64)

/// A byte permutation, the caller's `vpshufb`: the bytes of each 128-bit half of a vector chosen by
/// the indices in the mask's bytes (the kernel tiers' `shuffle8`).
public typealias ChaCha20ShuffleBytes = (Builtin.Vec8xInt32, SIMD4<UInt64>) -> Builtin.Vec8xInt32

/// A byte permutation inside each 32-bit lane: the rotations by 16 and 8.
@usableFromInline @_alwaysEmitIntoClient @_transparent
func cshuffle(_ x: V, _ mask: SIMD32<UInt8>, _ shuffleBytes: ChaCha20ShuffleBytes) -> V {
    shuffleBytes(x, unsafeBitCast(mask, to: SIMD4<UInt64>.self))
}

/// Byte indices of `x <<< 16` and `x <<< 8` for every lane of both 128-bit halves, plus `z`, a zero
/// the optimizer cannot see: with constant masks LLVM recognizes the permutations as rotations and
/// emits `vpshuflw`/`vpshufhw` pairs for the 16-bit one on AVX2 (and `vprold` with AVX-512VL) instead
/// of one `vpshufb` each.
@usableFromInline @_alwaysEmitIntoClient @_transparent
func rotationMasks(_ z: W8) -> (rot16: SIMD32<UInt8>, rot8: SIMD32<UInt8>) {
    let rot16 = SIMD32<UInt8>(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
                              2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13)
    let rot8 = SIMD32<UInt8>(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
                             3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14)
    return (unsafeBitCast(unsafeBitCast(rot16, to: W8.self) &+ z, to: SIMD32<UInt8>.self),
            unsafeBitCast(unsafeBitCast(rot8, to: W8.self) &+ z, to: SIMD32<UInt8>.self))
}

/// Two independent ChaCha quarter-rounds, step by step.
@usableFromInline @_alwaysEmitIntoClient @_transparent
func cqr2(_ a0: inout V, _ b0: inout V, _ c0: inout V, _ d0: inout V,
          _ a1: inout V, _ b1: inout V, _ c1: inout V, _ d1: inout V,
          _ m16: SIMD32<UInt8>, _ m8: SIMD32<UInt8>, _ shuffleBytes: ChaCha20ShuffleBytes) {
    a0 = add8(a0, b0); a1 = add8(a1, b1)
    d0 = cshuffle(xor8(d0, a0), m16, shuffleBytes); d1 = cshuffle(xor8(d1, a1), m16, shuffleBytes)
    c0 = add8(c0, d0); c1 = add8(c1, d1)
    b0 = rotl8(xor8(b0, c0), 12); b1 = rotl8(xor8(b1, c1), 12)
    a0 = add8(a0, b0); a1 = add8(a1, b1)
    d0 = cshuffle(xor8(d0, a0), m8, shuffleBytes); d1 = cshuffle(xor8(d1, a1), m8, shuffleBytes)
    c0 = add8(c0, d0); c1 = add8(c1, d1)
    b0 = rotl8(xor8(b0, c0), 7); b1 = rotl8(xor8(b1, c1), 7)
}

/// One ChaCha double round (column round, then diagonal round) on eight blocks.
@usableFromInline @_alwaysEmitIntoClient @_transparent
func chachaDoubleRound(_ s: inout Lanes8, _ m16: SIMD32<UInt8>, _ m8: SIMD32<UInt8>, _ shuffleBytes: ChaCha20ShuffleBytes) {
    var x0 = s.x0, x1 = s.x1, x2 = s.x2, x3 = s.x3, x4 = s.x4, x5 = s.x5, x6 = s.x6, x7 = s.x7
    var x8 = s.x8, x9 = s.x9, x10 = s.x10, x11 = s.x11, x12 = s.x12, x13 = s.x13, x14 = s.x14, x15 = s.x15
    cqr2(&x0, &x4, &x8, &x12, &x1, &x5, &x9, &x13, m16, m8, shuffleBytes)
    cqr2(&x2, &x6, &x10, &x14, &x3, &x7, &x11, &x15, m16, m8, shuffleBytes)
    cqr2(&x0, &x5, &x10, &x15, &x1, &x6, &x11, &x12, m16, m8, shuffleBytes)
    cqr2(&x2, &x7, &x8, &x13, &x3, &x4, &x9, &x14, m16, m8, shuffleBytes)
    s = Lanes8(x0: x0, x1: x1, x2: x2, x3: x3, x4: x4, x5: x5, x6: x6, x7: x7,
               x8: x8, x9: x9, x10: x10, x11: x11, x12: x12, x13: x13, x14: x14, x15: x15)
}

/// XORs `groups` × 512 bytes of ChaCha20 keystream from `src` into `dst` (the same buffer or disjoint
/// ones): the body of every tier's `chacha20XOR…` entry point.
///
/// `state` holds the 16-word ChaCha20 input block (native-endian `UInt32`s, the 32-bit block counter
/// in word 12); the counter is advanced by `8 · groups`, modulo 2^32. The caller must have checked
/// the CPU's features; `shuffleBytes` is its `vpshufb`.
@_alwaysEmitIntoClient @inline(__always)
public func chacha20XORLanes8(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                              _ groups: Int, shuffleBytes: ChaCha20ShuffleBytes) {
    // The input words broadcast once, plus the opaque zero: left to itself LLVM broadcasts them again
    // in every group (two instructions each) instead of keeping the vectors.
    let z = W8(repeating: UInt32(truncatingIfNeeded: opaqueZero()))
    func w(_ i: Int) -> W8 { W8(repeating: state.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) &+ z }
    let i0 = w(0), i1 = w(1), i2 = w(2), i3 = w(3), i4 = w(4), i5 = w(5), i6 = w(6), i7 = w(7)
    let i8 = w(8), i9 = w(9), i10 = w(10), i11 = w(11), i13 = w(13), i14 = w(14), i15 = w(15)
    let (m16, m8) = rotationMasks(z)
    var counter = state.loadUnaligned(fromByteOffset: 48, as: UInt32.self)
    var src = src
    var dst = dst
    var g = 0
    while g < groups {
        let c12 = W8(repeating: counter) &+ W8(0, 1, 2, 3, 4, 5, 6, 7)
        var s = Lanes8(x0: vector8(i0), x1: vector8(i1), x2: vector8(i2), x3: vector8(i3), x4: vector8(i4), x5: vector8(i5), x6: vector8(i6),
                       x7: vector8(i7), x8: vector8(i8), x9: vector8(i9), x10: vector8(i10), x11: vector8(i11), x12: vector8(c12),
                       x13: vector8(i13), x14: vector8(i14), x15: vector8(i15))
        var r = 0
        while r < 10 {
            chachaDoubleRound(&s, m16, m8, shuffleBytes)
            r &+= 1
        }
        quad(simd8(s.x0) &+ i0, simd8(s.x1) &+ i1, simd8(s.x2) &+ i2, simd8(s.x3) &+ i3, 0, src, dst, z)
        quad(simd8(s.x4) &+ i4, simd8(s.x5) &+ i5, simd8(s.x6) &+ i6, simd8(s.x7) &+ i7, 1, src, dst, z)
        quad(simd8(s.x8) &+ i8, simd8(s.x9) &+ i9, simd8(s.x10) &+ i10, simd8(s.x11) &+ i11, 2, src, dst, z)
        quad(simd8(s.x12) &+ c12, simd8(s.x13) &+ i13, simd8(s.x14) &+ i14, simd8(s.x15) &+ i15, 3, src, dst, z)
        counter &+= 8
        src += 512
        dst += 512
        g &+= 1
    }
    state.storeBytes(of: counter, toByteOffset: 48, as: UInt32.self)
}

/// ChaCha20 over `groups` × 512 bytes, stitched with Poly1305 over 512 bytes per group (the
/// ChaCha20-Poly1305 AEAD): the vector rounds and the scalar MAC multiplications overlap in one loop,
/// as `salsa20XORPoly1305Lanes8` does for secretbox (same arguments and the same `PolyState`). The
/// body of every tier's `chacha20XORPoly1305…` entry point.
///
/// Keystream: as ``chacha20XORLanes8(_:_:_:_:)``, except that `src` advances by `srcStride` per group
/// (0 with a 512-byte zero buffer writes the bare keystream). MAC: during group `g ≥ macLag` the 32
/// blocks at `mac + 512 · (g − macLag)` are absorbed into `poly` (r0, r1, s1, h0, h1, h2), every block
/// with the 2^128 bit. `macLag` 1 authenticates the ciphertext this call writes, one group behind
/// (seal); 0 an independent buffer (open). The caller must have checked the CPU's features;
/// `shuffleBytes` is its `vpshufb`.
@_alwaysEmitIntoClient @inline(__always)
public func chacha20XORPoly1305Lanes8(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                                      _ dst: UnsafeMutableRawPointer, _ groups: Int,
                                      _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int,
                                      shuffleBytes: ChaCha20ShuffleBytes) {
    // The input words broadcast once, plus the opaque zero: left to itself LLVM broadcasts them again
    // in every group (two instructions each) instead of keeping the vectors.
    let z = W8(repeating: UInt32(truncatingIfNeeded: opaqueZero()))
    func w(_ i: Int) -> W8 { W8(repeating: state.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) &+ z }
    let i0 = w(0), i1 = w(1), i2 = w(2), i3 = w(3), i4 = w(4), i5 = w(5), i6 = w(6), i7 = w(7)
    let i8 = w(8), i9 = w(9), i10 = w(10), i11 = w(11), i13 = w(13), i14 = w(14), i15 = w(15)
    let (m16, m8) = rotationMasks(z)
    var counter = state.loadUnaligned(fromByteOffset: 48, as: UInt32.self)
    var ps = PolyState(h0: poly[3], h1: poly[4], h2: poly[5], r0: poly[0], r1: poly[1], s1: poly[2])
    var src = src
    var dst = dst
    var m = mac
    var g = 0
    while g < groups {
        let c12 = W8(repeating: counter) &+ W8(0, 1, 2, 3, 4, 5, 6, 7)
        var s = Lanes8(x0: vector8(i0), x1: vector8(i1), x2: vector8(i2), x3: vector8(i3), x4: vector8(i4), x5: vector8(i5), x6: vector8(i6),
                       x7: vector8(i7), x8: vector8(i8), x9: vector8(i9), x10: vector8(i10), x11: vector8(i11), x12: vector8(c12),
                       x13: vector8(i13), x14: vector8(i14), x15: vector8(i15))
        if g >= macLag {
            // 30 MAC blocks inside the rounds, 2 after them.
            var r = 0
            while r < 10 {
                ps.block(m)
                chachaDoubleRound(&s, m16, m8, shuffleBytes)
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
                chachaDoubleRound(&s, m16, m8, shuffleBytes)
                r &+= 1
            }
        }
        quad(simd8(s.x0) &+ i0, simd8(s.x1) &+ i1, simd8(s.x2) &+ i2, simd8(s.x3) &+ i3, 0, src, dst, z)
        quad(simd8(s.x4) &+ i4, simd8(s.x5) &+ i5, simd8(s.x6) &+ i6, simd8(s.x7) &+ i7, 1, src, dst, z)
        quad(simd8(s.x8) &+ i8, simd8(s.x9) &+ i9, simd8(s.x10) &+ i10, simd8(s.x11) &+ i11, 2, src, dst, z)
        quad(simd8(s.x12) &+ c12, simd8(s.x13) &+ i13, simd8(s.x14) &+ i14, simd8(s.x15) &+ i15, 3, src, dst, z)
        counter &+= 8
        src += srcStride
        dst += 512
        g &+= 1
    }
    poly[3] = ps.h0; poly[4] = ps.h1; poly[5] = ps.h2
    state.storeBytes(of: counter, toByteOffset: 48, as: UInt32.self)
}

#endif
