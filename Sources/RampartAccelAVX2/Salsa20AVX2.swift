// Salsa20/20 keystream XOR, eight blocks at a time, with AVX2.
//
// Compiled with -parse-stdlib and +avx +avx2 +ssse3 +sse4.1 +bmi2 only. The caller must have checked
// for AVX2. The whole loop lives here: one call per buffer.
//
// Layout (libsodium's `avx2` Salsa20 code has the same one): sixteen 256-bit vectors, vector i holds
// state word i of eight consecutive blocks (lane j = block counter + j). The quarter-rounds then act
// on whole vectors with no shuffles at all; the rotations (7, 9, 13, 18: none a multiple of 8, so no
// vpshufb) are shift, shift, or: with AVX2 enabled LLVM keeps the `|` form in vector registers (it
// scalarises it only on baseline SSE2, see swift-performance.md; checked in the disassembly). The
// quarter-rounds run two at a time, step by step, as libsodium pairs them. Helpers are `@_transparent`:
// with `@inline(__always)` they stayed calls (one per rotation) in this large function. After the
// rounds and the feed-forward addition, each group of four words is transposed inside the 128-bit halves
// (vpunpck{l,h}{dq,qdq}) and two halves are joined per 32 output bytes (vperm2i128), as libsodium does.

import Swift

#if arch(x86_64)

typealias W8 = SIMD8<UInt32>

/// One step of two independent quarter-rounds at once: `b_i ^= (a_i + d_i) <<< n` (the pairing of
/// libsodium's code: enough independent work for the scheduler, few live temporaries).
@_transparent
func step2(_ b0: inout W8, _ a0: W8, _ d0: W8, _ b1: inout W8, _ a1: W8, _ d1: W8, _ n: UInt32) {
    let t0 = a0 &+ d0, t1 = a1 &+ d1
    b0 ^= (t0 &<< n) | (t0 &>> (32 &- n))
    b1 ^= (t1 &<< n) | (t1 &>> (32 &- n))
}

/// Transposes four word vectors inside each 128-bit half: lane half h of result k holds words
/// (a, b, c, d) of block k (h = 0) or block k + 4 (h = 1).
@_transparent
func transpose(_ a: W8, _ b: W8, _ c: W8, _ d: W8) -> (W8, W8, W8, W8) {
    let t0 = W8(a[0], b[0], a[1], b[1], a[4], b[4], a[5], b[5])
    let t1 = W8(a[2], b[2], a[3], b[3], a[6], b[6], a[7], b[7])
    let t2 = W8(c[0], d[0], c[1], d[1], c[4], d[4], c[5], d[5])
    let t3 = W8(c[2], d[2], c[3], d[3], c[6], d[6], c[7], d[7])
    return (W8(t0[0], t0[1], t2[0], t2[1], t0[4], t0[5], t2[4], t2[5]),
            W8(t0[2], t0[3], t2[2], t2[3], t0[6], t0[7], t2[6], t2[7]),
            W8(t1[0], t1[1], t3[0], t3[1], t1[4], t1[5], t3[4], t3[5]),
            W8(t1[2], t1[3], t3[2], t3[3], t1[6], t1[7], t3[6], t3[7]))
}

/// XORs 32 bytes at `offset` of `src` with `k` into `dst`.
@_transparent
func xor32(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ offset: Int, _ k: W8) {
    dst.storeBytes(of: src.loadUnaligned(fromByteOffset: offset, as: W8.self) ^ k, toByteOffset: offset, as: W8.self)
}

/// XORs `groups` × 512 bytes of Salsa20/20 keystream from `src` into `dst` (the same buffer or
/// disjoint ones).
///
/// `state` holds the 16-word Salsa20 input block (native-endian `UInt32`s, the block counter in words
/// 8 and 9); the counter is advanced by `8 · groups`. The caller must have checked that the CPU has
/// AVX2.
@inline(never)
public func salsa20XORAVX2(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                           _ groups: Int) {
    @inline(__always) func w(_ i: Int) -> W8 { W8(repeating: state.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
    let i0 = w(0), i1 = w(1), i2 = w(2), i3 = w(3), i4 = w(4), i5 = w(5), i6 = w(6), i7 = w(7)
    let i10 = w(10), i11 = w(11), i12 = w(12), i13 = w(13), i14 = w(14), i15 = w(15)
    var counter = UInt64(state.loadUnaligned(fromByteOffset: 32, as: UInt32.self))
        | UInt64(state.loadUnaligned(fromByteOffset: 36, as: UInt32.self)) << 32
    var src = src
    var dst = dst
    var g = 0
    while g < groups {
        let lo = UInt32(truncatingIfNeeded: counter)
        let c8 = W8(repeating: lo) &+ W8(0, 1, 2, 3, 4, 5, 6, 7)
        let c9 = W8(repeating: UInt32(truncatingIfNeeded: counter >> 32))
            &+ W8(repeating: 0).replacing(with: 1, where: c8 .< W8(repeating: lo))
        var x0 = i0, x1 = i1, x2 = i2, x3 = i3, x4 = i4, x5 = i5, x6 = i6, x7 = i7
        var x8 = c8, x9 = c9, x10 = i10, x11 = i11, x12 = i12, x13 = i13, x14 = i14, x15 = i15
        var r = 0
        while r < 10 {
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
            r &+= 1
        }
        x0 &+= i0; x1 &+= i1; x2 &+= i2; x3 &+= i3; x4 &+= i4; x5 &+= i5; x6 &+= i6; x7 &+= i7
        x8 &+= c8; x9 &+= c9; x10 &+= i10; x11 &+= i11; x12 &+= i12; x13 &+= i13; x14 &+= i14; x15 &+= i15

        // Words 0...7 of every block.
        let (a0, a1, a2, a3) = transpose(x0, x1, x2, x3)
        let (b0, b1, b2, b3) = transpose(x4, x5, x6, x7)
        xor32(src, dst, 0, W8(lowHalf: a0.lowHalf, highHalf: b0.lowHalf))
        xor32(src, dst, 64, W8(lowHalf: a1.lowHalf, highHalf: b1.lowHalf))
        xor32(src, dst, 128, W8(lowHalf: a2.lowHalf, highHalf: b2.lowHalf))
        xor32(src, dst, 192, W8(lowHalf: a3.lowHalf, highHalf: b3.lowHalf))
        xor32(src, dst, 256, W8(lowHalf: a0.highHalf, highHalf: b0.highHalf))
        xor32(src, dst, 320, W8(lowHalf: a1.highHalf, highHalf: b1.highHalf))
        xor32(src, dst, 384, W8(lowHalf: a2.highHalf, highHalf: b2.highHalf))
        xor32(src, dst, 448, W8(lowHalf: a3.highHalf, highHalf: b3.highHalf))
        // Words 8...15.
        let (c0, c1, c2, c3) = transpose(x8, x9, x10, x11)
        let (d0, d1, d2, d3) = transpose(x12, x13, x14, x15)
        xor32(src, dst, 32, W8(lowHalf: c0.lowHalf, highHalf: d0.lowHalf))
        xor32(src, dst, 96, W8(lowHalf: c1.lowHalf, highHalf: d1.lowHalf))
        xor32(src, dst, 160, W8(lowHalf: c2.lowHalf, highHalf: d2.lowHalf))
        xor32(src, dst, 224, W8(lowHalf: c3.lowHalf, highHalf: d3.lowHalf))
        xor32(src, dst, 288, W8(lowHalf: c0.highHalf, highHalf: d0.highHalf))
        xor32(src, dst, 352, W8(lowHalf: c1.highHalf, highHalf: d1.highHalf))
        xor32(src, dst, 416, W8(lowHalf: c2.highHalf, highHalf: d2.highHalf))
        xor32(src, dst, 480, W8(lowHalf: c3.highHalf, highHalf: d3.highHalf))

        counter &+= 8
        src += 512
        dst += 512
        g &+= 1
    }
    state.storeBytes(of: UInt32(truncatingIfNeeded: counter), toByteOffset: 32, as: UInt32.self)
    state.storeBytes(of: UInt32(truncatingIfNeeded: counter >> 32), toByteOffset: 36, as: UInt32.self)
}

#endif
