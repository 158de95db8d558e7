// BLAKE2b compression (RFC 7693) with AVX2.
//
// Compiled with -parse-stdlib and +avx +avx2 +ssse3 +sse4.1 +bmi +bmi2 only. The caller must have checked
// for AVX2. The whole multi-block loop lives here: one call per buffer.
//
// Layout. The 4x4 state is four 256-bit rows a, b, c, d and one G step runs on all four lanes at once.
// The lanes hold the columns in the order 0, 2, 1, 3 (not 0, 1, 2, 3): then the diagonal step needs
// row d moved by two columns, which in this order is a swap inside each 128-bit half (vpshufd, one
// cycle, and the compiler folds it into the rot32 shuffle), and only rows a and c need a lane-crossing
// vpermq. Lane-crossing permutes are slow on the AMD cores this was tuned on (about 6 cycles latency,
// measured), so fewer of them is what made this layout faster than the natural one (~1020 vs ~960 MB/s
// at 1 MiB). Row b never moves: it is the value the next G step needs first.
//
// Rotations: 32 by vpshufd, 24 and 16 by vpshufb, 63 by shift + add (`&+`, not `|`: see
// Docs/Architecture.md §6.1). The vpshufb masks are XORed with an `opaqueZero()` so that LLVM cannot see
// them: with a known mask it rewrites the 16-bit rotation into vpshuflw + vpshufhw, two instructions
// (and two cycles) on the critical path instead of one.
//
// Message. Eight 128-bit loads q0...q7 (words 2k, 2k+1) per block. Each message vector is one 128-bit
// shuffle per half (or the load itself) plus vinserti128, independent of the state, so the
// out-of-order core computes them off the critical path. In the diagonal step, lane i (holding b of
// column c_i) runs the diagonal G through that b, which is G number 4 + (c_i + 3) % 4; the per-round
// comments list the message word indices, taken from RFC 7693's sigma table, in lane order.

import Swift
import RampartKernelSupport

#if arch(x86_64)

typealias Row = SIMD4<UInt64>
typealias M2 = SIMD2<UInt64>

@inline(__always) func pshufb(_ v: Row, _ mask: Row) -> Row {
    let r = Builtin.int_x86_avx2_pshuf_b(
        unsafeBitCast(v, to: Builtin.Vec32xInt8.self), unsafeBitCast(mask, to: Builtin.Vec32xInt8.self))
    return unsafeBitCast(r, to: Row.self)
}

/// Rotates each 64-bit lane right by 32: swaps its 32-bit halves (vpshufd).
@inline(__always) func rotr32(_ x: Row) -> Row {
    let w = unsafeBitCast(x, to: SIMD8<UInt32>.self)
    return unsafeBitCast(SIMD8(w[1], w[0], w[3], w[2], w[5], w[4], w[7], w[6]), to: Row.self)
}

/// Rotates each 64-bit lane right by 63 (left by 1).
@inline(__always) func rotr63(_ x: Row) -> Row { (x &>> 63) &+ (x &+ x) }

/// Zero, read with a volatile load so that the optimizer cannot know its value. XORed into the vpshufb
/// masks once per call, it keeps LLVM from treating them as constants (see the file comment). Not
/// `@_optimize(none)`: that attribute miscompiled callers in Swift 6.3.1 release builds (Wipe.swift).
@inline(__always) func opaqueZero() -> UInt64 {
    var zero: UInt64 = 0
    return withUnsafeMutablePointer(to: &zero) {
        UInt64(Builtin.atomicload_monotonic_volatile_Int64(UnsafeMutableRawPointer($0)._rawValue))
    }
}

/// The vpshufb masks (the same in both 128-bit halves): output byte j of a 64-bit lane takes input
/// byte (j + 3) % 8 (rotate right by 24) or (j + 2) % 8 (by 16).
struct RotationMasks {
    var r24: Row
    var r16: Row
}

struct Rows {
    var a: Row, b: Row, c: Row, d: Row
}

/// G on all four lanes with message words x, y.
@inline(__always)
func g(_ s: inout Rows, _ x: Row, _ y: Row, _ m: RotationMasks) {
    s.a = s.a &+ x &+ s.b
    s.d = rotr32(s.d ^ s.a)
    s.c = s.c &+ s.d
    s.b = pshufb(s.b ^ s.c, m.r24)
    s.a = s.a &+ y &+ s.b
    s.d = pshufb(s.d ^ s.a, m.r16)
    s.c = s.c &+ s.d
    s.b = rotr63(s.b ^ s.c)
}

/// One round: G on the columns, move rows a, c, d onto the diagonals through b, G, move them back.
/// Lane positions 0...3 hold columns 0, 2, 1, 3. In the diagonal step the lane holding b of column j
/// needs a of column j - 1, c of column j + 1 and d of column j + 2.
@inline(__always)
func round(_ s: inout Rows, _ x0: Row, _ y0: Row, _ x1: Row, _ y1: Row, _ m: RotationMasks) {
    g(&s, x0, y0, m)
    s.a = Row(s.a[3], s.a[2], s.a[0], s.a[1])
    s.c = Row(s.c[2], s.c[3], s.c[1], s.c[0])
    s.d = Row(s.d[1], s.d[0], s.d[3], s.d[2])
    g(&s, x1, y1, m)
    s.a = Row(s.a[2], s.a[3], s.a[1], s.a[0])
    s.c = Row(s.c[3], s.c[2], s.c[0], s.c[1])
    s.d = Row(s.d[1], s.d[0], s.d[3], s.d[2])
}

/// Compresses `count` 128-byte blocks into `state` (h[0..7], then the byte counter t[0], t[1]).
///
/// Every block adds 128 to the counter, except that when `lastLength >= 0` the final block of the
/// run is the message's last block: it adds `lastLength` (0...128) and is compressed with the final
/// flag set. The caller must have checked that the CPU has AVX2.
@inline(never)
public func blake2bBlocksAVX2(_ state: UnsafeMutablePointer<UInt64>, _ blocks: UnsafeRawPointer, _ count: Int,
                              _ lastLength: Int) {
    guard count > 0 else { return }
    // Lanes hold columns 0, 2, 1, 3.
    var h0 = Row(state[0], state[2], state[1], state[3])
    var h1 = Row(state[4], state[6], state[5], state[7])
    var t0 = state[8], t1 = state[9]
    let iv0 = Row(0x6a09e667f3bcc908, 0x3c6ef372fe94f82b, 0xbb67ae8584caa73b, 0xa54ff53a5f1d36f1)
    let iv1 = Row(0x510e527fade682d1, 0x1f83d9abfb41bd6b, 0x9b05688c2b3e6c1f, 0x5be0cd19137e2179)
    let z = Row(repeating: opaqueZero())
    let m = RotationMasks(
        r24: z ^ Row(0x0201_0007_0605_0403, 0x0a09_080f_0e0d_0c0b, 0x0201_0007_0605_0403, 0x0a09_080f_0e0d_0c0b),
        r16: z ^ Row(0x0100_0706_0504_0302, 0x0908_0f0e_0d0c_0b0a, 0x0100_0706_0504_0302, 0x0908_0f0e_0d0c_0b0a))
    var p = blocks
    var remaining = count
    while remaining > 0 {
        let isLast = lastLength >= 0 && remaining == 1
        let inc = UInt64(truncatingIfNeeded: isLast ? lastLength : 128)
        t0 &+= inc
        if t0 < inc { t1 &+= 1 }
        let f0: UInt64 = isLast ? ~0 : 0

        // Message words 2k, 2k+1 (little-endian, as x86_64 is).
        let q0 = p.loadUnaligned(as: M2.self)
        let q1 = p.loadUnaligned(fromByteOffset: 16, as: M2.self)
        let q2 = p.loadUnaligned(fromByteOffset: 32, as: M2.self)
        let q3 = p.loadUnaligned(fromByteOffset: 48, as: M2.self)
        let q4 = p.loadUnaligned(fromByteOffset: 64, as: M2.self)
        let q5 = p.loadUnaligned(fromByteOffset: 80, as: M2.self)
        let q6 = p.loadUnaligned(fromByteOffset: 96, as: M2.self)
        let q7 = p.loadUnaligned(fromByteOffset: 112, as: M2.self)

        // d = IV[4...7] ^ (t0, t1, f0, f1 = 0), in lane order 0, 2, 1, 3.
        var s = Rows(a: h0, b: h1, c: iv0, d: iv1 ^ Row(t0, f0, t1, 0))

        // Round 0: columns x (0, 4, 2, 6), y (1, 5, 3, 7); diagonals x (14, 10, 8, 12), y (15, 11, 9, 13).
        round(&s,
              Row(lowHalf: M2(q0[0], q2[0]), highHalf: M2(q1[0], q3[0])),
              Row(lowHalf: M2(q0[1], q2[1]), highHalf: M2(q1[1], q3[1])),
              Row(lowHalf: M2(q7[0], q5[0]), highHalf: M2(q4[0], q6[0])),
              Row(lowHalf: M2(q7[1], q5[1]), highHalf: M2(q4[1], q6[1])), m)
        // Round 1: columns x (14, 9, 4, 13), y (10, 15, 8, 6); diagonals x (5, 0, 1, 11), y (3, 2, 12, 7).
        round(&s,
              Row(lowHalf: M2(q7[0], q4[1]), highHalf: M2(q2[0], q6[1])),
              Row(lowHalf: M2(q5[0], q7[1]), highHalf: M2(q4[0], q3[0])),
              Row(lowHalf: M2(q2[1], q0[0]), highHalf: M2(q0[1], q5[1])),
              Row(lowHalf: M2(q1[1], q1[0]), highHalf: M2(q6[0], q3[1])), m)
        // Round 2: columns x (11, 5, 12, 15), y (8, 2, 0, 13); diagonals x (9, 3, 10, 7), y (4, 6, 14, 1).
        round(&s,
              Row(lowHalf: M2(q5[1], q2[1]), highHalf: M2(q6[0], q7[1])),
              Row(lowHalf: M2(q4[0], q1[0]), highHalf: M2(q0[0], q6[1])),
              Row(lowHalf: M2(q4[1], q1[1]), highHalf: M2(q5[0], q3[1])),
              Row(lowHalf: M2(q2[0], q3[0]), highHalf: M2(q7[0], q0[1])), m)
        // Round 3: columns x (7, 13, 3, 11), y (9, 12, 1, 14); diagonals x (15, 5, 2, 4), y (8, 10, 6, 0).
        round(&s,
              Row(lowHalf: M2(q3[1], q6[1]), highHalf: M2(q1[1], q5[1])),
              Row(lowHalf: M2(q4[1], q6[0]), highHalf: M2(q0[1], q7[0])),
              Row(lowHalf: M2(q7[1], q2[1]), highHalf: M2(q1[0], q2[0])),
              Row(lowHalf: M2(q4[0], q5[0]), highHalf: M2(q3[0], q0[0])), m)
        // Round 4: columns x (9, 2, 5, 10), y (0, 4, 7, 15); diagonals x (3, 11, 14, 6), y (13, 12, 1, 8).
        round(&s,
              Row(lowHalf: M2(q4[1], q1[0]), highHalf: M2(q2[1], q5[0])),
              Row(lowHalf: M2(q0[0], q2[0]), highHalf: M2(q3[1], q7[1])),
              Row(lowHalf: M2(q1[1], q5[1]), highHalf: M2(q7[0], q3[0])),
              Row(lowHalf: M2(q6[1], q6[0]), highHalf: M2(q0[1], q4[0])), m)
        // Round 5: columns x (2, 0, 6, 8), y (12, 11, 10, 3); diagonals x (1, 7, 4, 15), y (9, 5, 13, 14).
        round(&s,
              Row(lowHalf: M2(q1[0], q0[0]), highHalf: M2(q3[0], q4[0])),
              Row(lowHalf: M2(q6[0], q5[1]), highHalf: M2(q5[0], q1[1])),
              Row(lowHalf: M2(q0[1], q3[1]), highHalf: M2(q2[0], q7[1])),
              Row(lowHalf: M2(q4[1], q2[1]), highHalf: M2(q6[1], q7[0])), m)
        // Round 6: columns x (12, 14, 1, 4), y (5, 13, 15, 10); diagonals x (8, 6, 0, 9), y (11, 3, 7, 2).
        round(&s,
              Row(lowHalf: M2(q6[0], q7[0]), highHalf: M2(q0[1], q2[0])),
              Row(lowHalf: M2(q2[1], q6[1]), highHalf: M2(q7[1], q5[0])),
              Row(lowHalf: M2(q4[0], q3[0]), highHalf: M2(q0[0], q4[1])),
              Row(lowHalf: M2(q5[1], q1[1]), highHalf: M2(q3[1], q1[0])), m)
        // Round 7: columns x (13, 12, 7, 3), y (11, 1, 14, 9); diagonals x (2, 15, 5, 8), y (10, 4, 0, 6).
        round(&s,
              Row(lowHalf: M2(q6[1], q6[0]), highHalf: M2(q3[1], q1[1])),
              Row(lowHalf: M2(q5[1], q0[1]), highHalf: M2(q7[0], q4[1])),
              Row(lowHalf: M2(q1[0], q7[1]), highHalf: M2(q2[1], q4[0])),
              Row(lowHalf: M2(q5[0], q2[0]), highHalf: M2(q0[0], q3[0])), m)
        // Round 8: columns x (6, 11, 14, 0), y (15, 3, 9, 8); diagonals x (10, 13, 12, 1), y (5, 7, 2, 4).
        round(&s,
              Row(lowHalf: M2(q3[0], q5[1]), highHalf: M2(q7[0], q0[0])),
              Row(lowHalf: M2(q7[1], q1[1]), highHalf: M2(q4[1], q4[0])),
              Row(lowHalf: M2(q5[0], q6[1]), highHalf: M2(q6[0], q0[1])),
              Row(lowHalf: M2(q2[1], q3[1]), highHalf: M2(q1[0], q2[0])), m)
        // Round 9: columns x (10, 7, 8, 1), y (2, 6, 4, 5); diagonals x (13, 9, 15, 3), y (0, 14, 11, 12).
        round(&s,
              Row(lowHalf: M2(q5[0], q3[1]), highHalf: M2(q4[0], q0[1])),
              Row(lowHalf: M2(q1[0], q3[0]), highHalf: q2),
              Row(lowHalf: M2(q6[1], q4[1]), highHalf: M2(q7[1], q1[1])),
              Row(lowHalf: M2(q0[0], q7[0]), highHalf: M2(q5[1], q6[0])), m)
        // Round 10: columns x (0, 4, 2, 6), y (1, 5, 3, 7); diagonals x (14, 10, 8, 12), y (15, 11, 9, 13).
        round(&s,
              Row(lowHalf: M2(q0[0], q2[0]), highHalf: M2(q1[0], q3[0])),
              Row(lowHalf: M2(q0[1], q2[1]), highHalf: M2(q1[1], q3[1])),
              Row(lowHalf: M2(q7[0], q5[0]), highHalf: M2(q4[0], q6[0])),
              Row(lowHalf: M2(q7[1], q5[1]), highHalf: M2(q4[1], q6[1])), m)
        // Round 11: columns x (14, 9, 4, 13), y (10, 15, 8, 6); diagonals x (5, 0, 1, 11), y (3, 2, 12, 7).
        round(&s,
              Row(lowHalf: M2(q7[0], q4[1]), highHalf: M2(q2[0], q6[1])),
              Row(lowHalf: M2(q5[0], q7[1]), highHalf: M2(q4[0], q3[0])),
              Row(lowHalf: M2(q2[1], q0[0]), highHalf: M2(q0[1], q5[1])),
              Row(lowHalf: M2(q1[1], q1[0]), highHalf: M2(q6[0], q3[1])), m)

        h0 ^= s.a ^ s.c
        h1 ^= s.b ^ s.d
        p += 128
        remaining -= 1
    }
    state[0] = h0[0]; state[1] = h0[2]; state[2] = h0[1]; state[3] = h0[3]
    state[4] = h1[0]; state[5] = h1[2]; state[6] = h1[1]; state[7] = h1[3]
    state[8] = t0
    state[9] = t1
}

/// BLAKE2b with the four columns in one AVX2 vector.
public enum BLAKE2bAVX2: BLAKE2bImplementation {
    public static let name = "avx2"
    public static let requires: KernelFeatures = [.avx2]
    @inline(__always)
    public static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ count: Int, _ lastLength: Int) {
        blake2bBlocksAVX2(state, data, count, lastLength)
    }
}

#endif
