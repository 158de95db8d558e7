// One Poly1305 block in radix 2^64, shared by Rampart's MAC (MAC/Poly1305.swift, which documents the
// bounds) and the stitched Salsa20 and ChaCha20 kernels (Salsa20Lanes8.swift). Branch-free; the
// data never selects a memory address.

import Swift

/// A carry flag as a word without a select (`c ? 1 : 0` on carries compiled to conditional jumps).
@inlinable @inline(__always)
public func poly1305CarryBit(_ c: Bool) -> UInt64 { UInt64(unsafeBitCast(c, to: UInt8.self)) }

/// `a + b + carry` and the carry out (0 or 1).
@inlinable @inline(__always)
public func poly1305AddWithCarry(_ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
    let (s1, o1) = a.addingReportingOverflow(b)
    let (s2, o2) = s1.addingReportingOverflow(carry)
    return (s2, poly1305CarryBit(o1) | poly1305CarryBit(o2))
}

/// The 128-bit product of two words, as one `mul` (`multipliedFullWidth` stayed a call inside the
/// `-parse-stdlib` kernel modules).
@inlinable @inline(__always)
public func poly1305Multiply(_ a: UInt64, _ b: UInt64) -> (high: UInt64, low: UInt64) {
    let p = Builtin.mul_Int128(Builtin.zext_Int64_Int128(a._value), Builtin.zext_Int64_Int128(b._value))
    let shift = Builtin.zext_Int64_Int128(UInt64(64)._value)
    return (UInt64(Builtin.trunc_Int128_Int64(Builtin.lshr_Int128(p, shift))), UInt64(Builtin.trunc_Int128_Int64(p)))
}

/// h = (h + m + hibit·2^128) · r mod 2^130 − 5, partially reduced (h2 ≤ 4 afterwards), for the
/// message block m = m0 + m1·2^64 and the clamped key r = r0 + r1·2^64 with s1 = r1 + r1/4.
@inlinable @inline(__always)
public func poly1305Block(_ h0: inout UInt64, _ h1: inout UInt64, _ h2: inout UInt64, m0: UInt64, m1: UInt64,
                          hibit: UInt64, r0: UInt64, r1: UInt64, s1: UInt64) {
    var c: UInt64
    // h += m (+ hibit·2^128)
    (h0, c) = poly1305AddWithCarry(h0, m0, 0)
    (h1, c) = poly1305AddWithCarry(h1, m1, c)
    h2 = h2 &+ hibit &+ c
    // d0 = h0·r0 + h1·s1
    let a = poly1305Multiply(h0, r0)
    let b = poly1305Multiply(h1, s1)
    let (d0lo, c0) = poly1305AddWithCarry(a.low, b.low, 0)
    let d0hi = a.high &+ b.high &+ c0
    // d1 = h0·r1 + h1·r0 + h2·s1 + d0hi
    let e = poly1305Multiply(h0, r1)
    let f = poly1305Multiply(h1, r0)
    let (e1, c1) = poly1305AddWithCarry(e.low, f.low, 0)
    let (e2, c2) = poly1305AddWithCarry(e1, h2 &* s1, 0)
    let (d1lo, c3) = poly1305AddWithCarry(e2, d0hi, 0)
    let d1hi = e.high &+ f.high &+ c1 &+ c2 &+ c3
    // d2 = h2·r0 + d1hi; value = d0lo + d1lo·2^64 + d2·2^128. Fold bits ≥ 130: (d2 >> 2)·5 = (d2 & ~3) + (d2 >> 2).
    let d2 = h2 &* r0 &+ d1hi
    let fold = (d2 & ~3) &+ (d2 >> 2)
    (h0, c) = poly1305AddWithCarry(d0lo, fold, 0)
    (h1, c) = poly1305AddWithCarry(d1lo, 0, c)
    h2 = (d2 & 3) &+ c
}
