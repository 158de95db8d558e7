// Portable constant-time GHASH (the GCM authenticator), without tables.
//
// Like the PCLMULQDQ kernel, it works through POLYVAL (RFC 8452, appendix A): a GHASH block read as a
// big-endian 128-bit integer is the POLYVAL element of the byte-reversed block, the product needs no
// bit shift, and the reduction is a Montgomery step (multiplication by x^-128 modulo
// x^128 + x^127 + x^126 + x^121 + 1), made only of shifts here. H is pre-multiplied by x.
//
// The 64 x 64 carry-less multiplications use ordinary integer multiplications on operands with
// holes (BearSSL's "ctmul64" idea): each operand is split into four classes of bits four apart, so no
// carry of the integer products can reach a bit of the same class within the low 64 bits. The high
// 64 bits of a product come from the product of the bit-reversed operands. Integer multiplication
// runs in constant time on the 64-bit processors Rampart targets (x86_64, arm64).

/// The low 64 bits of the carry-less product of `x` and `y`, in constant time.
@inline(__always)
func clmulLow64(_ x: UInt64, _ y: UInt64) -> UInt64 {
    let m0: UInt64 = 0x1111_1111_1111_1111, m1 = m0 << 1, m2 = m0 << 2, m3 = m0 << 3
    let x0 = x & m0, x1 = x & m1, x2 = x & m2, x3 = x & m3
    let y0 = y & m0, y1 = y & m1, y2 = y & m2, y3 = y & m3
    var z0 = (x0 &* y0) ^ (x1 &* y3) ^ (x2 &* y2) ^ (x3 &* y1)
    var z1 = (x0 &* y1) ^ (x1 &* y0) ^ (x2 &* y3) ^ (x3 &* y2)
    var z2 = (x0 &* y2) ^ (x1 &* y1) ^ (x2 &* y0) ^ (x3 &* y3)
    var z3 = (x0 &* y3) ^ (x1 &* y2) ^ (x2 &* y1) ^ (x3 &* y0)
    z0 &= m0; z1 &= m1; z2 &= m2; z3 &= m3
    return z0 | z1 | z2 | z3
}

/// Reverses the order of the 64 bits.
@inline(__always)
func reverseBits64(_ v: UInt64) -> UInt64 {
    var x = v
    x = ((x & 0x5555_5555_5555_5555) << 1) | ((x >> 1) & 0x5555_5555_5555_5555)
    x = ((x & 0x3333_3333_3333_3333) << 2) | ((x >> 2) & 0x3333_3333_3333_3333)
    x = ((x & 0x0f0f_0f0f_0f0f_0f0f) << 4) | ((x >> 4) & 0x0f0f_0f0f_0f0f_0f0f)
    return x.byteSwapped
}

/// A POLYVAL-domain field element: `hi` and `lo` 64-bit halves of the 128-bit integer.
@usableFromInline
struct GF128: Equatable {
    @usableFromInline var hi: UInt64
    @usableFromInline var lo: UInt64
    @inlinable init(hi: UInt64, lo: UInt64) { self.hi = hi; self.lo = lo }
}

/// Precomputed hash key for the portable GHASH: H·x and the bit reversals of its halves.
struct GHASHPortableKey {
    var h: GF128
    var h0r: UInt64, h1r: UInt64, h2: UInt64, h2r: UInt64

    /// From the GHASH key H = E_K(0^128) (16 bytes).
    init(hashKey p: UnsafeRawPointer) {
        var hi = p.loadBE64(0), lo = p.loadBE64(8)
        // mulX: multiply by x and fold the bit that leaves, with a mask instead of a branch.
        let carry = 0 &- (hi >> 63)
        hi = (hi << 1) | (lo >> 63)
        lo = lo << 1
        lo ^= carry & 1
        hi ^= carry & 0xc200_0000_0000_0000
        h = GF128(hi: hi, lo: lo)
        h0r = reverseBits64(lo); h1r = reverseBits64(hi)
        h2 = lo ^ hi; h2r = h0r ^ h1r
    }

    /// (y * H) * x^-128 modulo the POLYVAL polynomial.
    @inline(__always)
    func multiply(_ y: GF128) -> GF128 {
        let y0 = y.lo, y1 = y.hi, y2 = y0 ^ y1
        let y0r = reverseBits64(y0), y1r = reverseBits64(y1), y2r = y0r ^ y1r
        // Karatsuba on three 64 x 64 products; the high halves come from the reversed operands.
        let z0 = clmulLow64(y0, h.lo), z1 = clmulLow64(y1, h.hi)
        var z2 = clmulLow64(y2, h2)
        var z0h = clmulLow64(y0r, h0r), z1h = clmulLow64(y1r, h1r)
        var z2h = clmulLow64(y2r, h2r)
        z2 ^= z0 ^ z1
        z2h ^= z0h ^ z1h
        z0h = reverseBits64(z0h) >> 1
        z1h = reverseBits64(z1h) >> 1
        z2h = reverseBits64(z2h) >> 1
        // The 256-bit product w3:w2:w1:w0.
        let w0 = z0, w1 = z0h ^ z2, w2 = z1 ^ z2h, w3 = z1h
        return polyvalReduce(w0, w1, w2, w3)
    }
}

/// Montgomery reduction: (w3:w2:w1:w0) * x^-128 modulo x^128 + x^127 + x^126 + x^121 + 1, in two
/// 64-bit steps, each adding a multiple of the modulus that clears the lowest word.
@inline(__always)
func polyvalReduce(_ w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) -> GF128 {
    // w0 * (x^57 + x^62 + x^63) as a 128-bit value (t1:t0).
    let t0 = (w0 << 57) ^ (w0 << 62) ^ (w0 << 63)
    let t1 = (w0 >> 7) ^ (w0 >> 2) ^ (w0 >> 1)
    let v1 = w1 ^ t0
    let v2 = w2 ^ t1 ^ w0
    let u0 = (v1 << 57) ^ (v1 << 62) ^ (v1 << 63)
    let u1 = (v1 >> 7) ^ (v1 >> 2) ^ (v1 >> 1)
    return GF128(hi: w3 ^ u1 ^ v1, lo: v2 ^ u0)
}

enum GHASHPortable {
    /// Absorbs `blocks` 16-byte blocks into `state` (16 bytes, GHASH byte order).
    static func absorb(_ key: GHASHPortableKey, _ state: UnsafeMutableRawPointer, _ data: UnsafeRawPointer, _ blocks: Int) {
        let st = UnsafeRawPointer(state)
        var y = GF128(hi: st.loadBE64(0), lo: st.loadBE64(8))
        for i in 0..<blocks {
            y.hi ^= data.loadBE64(16 * i)
            y.lo ^= data.loadBE64(16 * i + 8)
            y = key.multiply(y)
        }
        state.storeBE64(y.hi, 0)
        state.storeBE64(y.lo, 8)
    }
}
