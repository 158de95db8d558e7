// BLAKE2b compression (RFC 7693) with AVX2.
//
// Compiled with -parse-stdlib and +avx +avx2 +ssse3 +sse4.1 +bmi2 only. The caller must have checked
// for AVX2. The whole multi-block loop lives here: one call per buffer.

import Swift

#if arch(x86_64)

typealias Row = SIMD4<UInt64>

@inline(__always) func pshufb(_ v: Row, _ mask: Row) -> Row {
    let r = Builtin.int_x86_avx2_pshuf_b(
        unsafeBitCast(v, to: Builtin.Vec32xInt8.self), unsafeBitCast(mask, to: Builtin.Vec32xInt8.self))
    return unsafeBitCast(r, to: Row.self)
}

/// Rotate each 64-bit lane right by 32: swap the 32-bit halves (vpshufd).
@inline(__always) func rotr32(_ x: Row) -> Row {
    let w = unsafeBitCast(x, to: SIMD8<UInt32>.self)
    return unsafeBitCast(SIMD8(w[1], w[0], w[3], w[2], w[5], w[4], w[7], w[6]), to: Row.self)
}
@inline(__always) func rotr63(_ x: Row) -> Row { (x &>> 63) &+ (x &+ x) }

/// Compresses `count` 128-byte blocks into `state` (h[0..7], then the byte counter t[0], t[1]).
///
/// Every block adds 128 to the counter, except that when `lastLength >= 0` the final block of the
/// run is the message's last block: it adds `lastLength` and is compressed with the final flag.
@inline(never)
public func blake2bBlocksAVX2(_ state: UnsafeMutablePointer<UInt64>, _ blocks: UnsafeRawPointer, _ count: Int,
                              _ lastLength: Int) {
    guard count > 0 else { return }
    let raw = UnsafeMutableRawPointer(state)
    var h0 = raw.loadUnaligned(as: Row.self)
    var h1 = raw.loadUnaligned(fromByteOffset: 32, as: Row.self)
    var t0 = state[8], t1 = state[9]
    let iv0 = Row(0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1)
    let iv1 = Row(0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179)
    // vpshufb masks (the same in both 128-bit lanes): rotate each 64-bit lane right by 24 / 16 bits.
    let r24 = Row(0x0201_0007_0605_0403, 0x0a09_080f_0e0d_0c0b, 0x0201_0007_0605_0403, 0x0a09_080f_0e0d_0c0b)
    let r16 = Row(0x0100_0706_0504_0302, 0x0908_0f0e_0d0c_0b0a, 0x0100_0706_0504_0302, 0x0908_0f0e_0d0c_0b0a)
    var p = blocks
    for i in 0..<count {
        let isLast = lastLength >= 0 && i == count - 1
        let inc = UInt64(truncatingIfNeeded: isLast ? lastLength : 128)
        t0 &+= inc
        if t0 < inc { t1 &+= 1 }
        let f0: UInt64 = isLast ? ~0 : 0

        var a = h0, b = h1, c = iv0
        var d = iv1 ^ Row(t0, t1, f0, 0)

        @inline(__always) func g(_ x: Row, _ y: Row) {
            a = a &+ b &+ x
            d = rotr32(d ^ a)
            c = c &+ d
            b = pshufb(b ^ c, r24)
            a = a &+ b &+ y
            d = pshufb(d ^ a, r16)
            c = c &+ d
            b = rotr63(b ^ c)
        }
        @inline(__always) func m(_ i: Int) -> UInt64 { p.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self) }
        @inline(__always) func round(_ s0: Int, _ s1: Int, _ s2: Int, _ s3: Int, _ s4: Int, _ s5: Int,
                                     _ s6: Int, _ s7: Int, _ s8: Int, _ s9: Int, _ s10: Int, _ s11: Int,
                                     _ s12: Int, _ s13: Int, _ s14: Int, _ s15: Int) {
            g(Row(m(s0), m(s2), m(s4), m(s6)), Row(m(s1), m(s3), m(s5), m(s7)))
            b = Row(b[1], b[2], b[3], b[0])
            c = Row(c[2], c[3], c[0], c[1])
            d = Row(d[3], d[0], d[1], d[2])
            g(Row(m(s8), m(s10), m(s12), m(s14)), Row(m(s9), m(s11), m(s13), m(s15)))
            b = Row(b[3], b[0], b[1], b[2])
            c = Row(c[2], c[3], c[0], c[1])
            d = Row(d[1], d[2], d[3], d[0])
        }
        round(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
        round(14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3)
        round(11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4)
        round(7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8)
        round(9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13)
        round(2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9)
        round(12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11)
        round(13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10)
        round(6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5)
        round(10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0)
        round(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
        round(14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3)

        h0 ^= a ^ c
        h1 ^= b ^ d
        p += 128
    }
    raw.storeBytes(of: h0, as: Row.self)
    raw.storeBytes(of: h1, toByteOffset: 32, as: Row.self)
    state[8] = t0
    state[9] = t1
}

#endif
