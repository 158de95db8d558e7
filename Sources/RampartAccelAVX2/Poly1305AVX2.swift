// Poly1305 over four message blocks at a time on AVX2 (`vpmuludq`, 256-bit registers) in radix
// 2^26, for processors without AVX-512 IFMA (RampartAccelIFMA/Poly1305IFMA.swift has the lane method,
// which this file follows: lane i takes blocks i, i + 4, ...; a step absorbs two groups,
// h = (h + a)·r^8 + b·r^4, and the last step multiplies lane i by r^(8 − i) and r^(4 − i)).
//
// Limbs. Five limbs of 26 bits; 2^130 ≡ 5, so s_i = 5·r_i fold the columns above 2^130:
//
//     d0 = h0·r0 + h1·s4 + h2·s3 + h3·s2 + h4·s1      d3 = h0·r3 + h1·r2 + h2·r1 + h3·r0 + h4·s4
//     d1 = h0·r1 + h1·r0 + h2·s4 + h3·s3 + h4·s2      d4 = h0·r4 + h1·r3 + h2·r2 + h3·r1 + h4·r0
//     d2 = h0·r2 + h1·r1 + h2·r0 + h3·s4 + h4·s3
//
// Bounds. After a carry pass every limb is below 2^26 + 2^11; adding a block keeps them below 2^27.2.
// Multipliers have limbs below 2^27 (r^1 ... r^4 from the scalar code, value below 2^131; r^5 ... r^8
// from a carry pass), so s_i < 2^29.4 and every product is below 2^56.6; a column sums at most ten
// of them (two groups), below 2^60. Every operand is below 2^32, as `vpmuludq` reads. Everything is
// branch-free; no address depends on data.

import Swift
import RampartKernelSupport

#if arch(x86_64)

typealias Q = SIMD4<UInt64>

/// Multipliers for one step: r0 ... r4 and s_i = 5·r_i (per lane).
struct P26 { var r0, r1, r2, r3, r4, s1, s2, s3, s4: Q }

/// The product of the low 32 bits of each lane (`vpmuludq`; the masks tell LLVM the high halves are zero).
@_transparent func m32(_ a: Q, _ b: Q) -> Q { let k = Q(repeating: 0xffff_ffff); return (a & k) &* (b & k) }

/// A radix-2^64 value (h2 small) as five 26-bit limbs (the top one up to 2^27).
@_transparent func limbs26(_ h0: UInt64, _ h1: UInt64, _ h2: UInt64) -> (UInt64, UInt64, UInt64, UInt64, UInt64) {
    let m: UInt64 = (1 << 26) - 1
    return (h0 & m, (h0 >> 26) & m, ((h0 >> 52) | (h1 << 12)) & m, (h1 >> 14) & m, (h1 >> 40) | (h2 << 24))
}

/// Limb vectors as multipliers.
@_transparent func mult(_ r0: Q, _ r1: Q, _ r2: Q, _ r3: Q, _ r4: Q) -> P26 {
    let f = Q(repeating: 5)
    return P26(r0: r0, r1: r1, r2: r2, r3: r3, r4: r4, s1: r1 &* f, s2: r2 &* f, s3: r3 &* f, s4: r4 &* f)
}

/// The five column sums d0 ... d4 of a product before the carries.
typealias D = (Q, Q, Q, Q, Q)

/// `acc` plus the column sums of h · r (mod 2^130 − 5: the columns above 2^130 folded in with s_i).
@_transparent func prod(_ acc: D, _ h0: Q, _ h1: Q, _ h2: Q, _ h3: Q, _ h4: Q, _ r: P26) -> D {
    (acc.0 &+ (m32(h0, r.r0) &+ m32(h1, r.s4)) &+ (m32(h2, r.s3) &+ m32(h3, r.s2)) &+ m32(h4, r.s1),
     acc.1 &+ (m32(h0, r.r1) &+ m32(h1, r.r0)) &+ (m32(h2, r.s4) &+ m32(h3, r.s3)) &+ m32(h4, r.s2),
     acc.2 &+ (m32(h0, r.r2) &+ m32(h1, r.r1)) &+ (m32(h2, r.r0) &+ m32(h3, r.s4)) &+ m32(h4, r.s3),
     acc.3 &+ (m32(h0, r.r3) &+ m32(h1, r.r2)) &+ (m32(h2, r.r1) &+ m32(h3, r.r0)) &+ m32(h4, r.s4),
     acc.4 &+ (m32(h0, r.r4) &+ m32(h1, r.r3)) &+ (m32(h2, r.r2) &+ m32(h3, r.r1)) &+ m32(h4, r.r0))
}

/// Carries with two chains in parallel (0→1→2→3, 3→4→0→1), as OpenSSL's vector code does.
@_transparent func carry(_ d: D) -> (Q, Q, Q, Q, Q) {
    let m = Q(repeating: (1 << 26) - 1)
    var d0 = d.0, d1 = d.1, d2 = d.2, d3 = d.3, d4 = d.4
    d1 &+= d0 &>> 26; d0 &= m
    d4 &+= d3 &>> 26; d3 &= m
    let c4 = d4 &>> 26; d4 &= m
    d0 &+= c4 &+ (c4 &<< 2)
    d2 &+= d1 &>> 26; d1 &= m
    d1 &+= d0 &>> 26; d0 &= m
    d3 &+= d2 &>> 26; d2 &= m
    d4 &+= d3 &>> 26; d3 &= m
    return (d0, d1, d2, d3, d4)
}

/// Four consecutive 16-byte blocks at `p` as limbs, block i in lane i, with the 2^128 bit.
@_transparent func load4(_ p: UnsafeRawPointer) -> (Q, Q, Q, Q, Q) {
    let a = p.loadUnaligned(as: Q.self), b = p.loadUnaligned(fromByteOffset: 32, as: Q.self)
    let w0 = Q(a[0], a[2], b[0], b[2]), w1 = Q(a[1], a[3], b[1], b[3])
    let m = Q(repeating: (1 << 26) - 1)
    return (w0 & m, (w0 &>> 26) & m, ((w0 &>> 52) | (w1 &<< 12)) & m, (w1 &>> 14) & m, (w1 &>> 40) | Q(repeating: 1 << 24))
}

/// Absorbs `groups` × 64 bytes at `p` (full blocks, with the 2^128 bit) into the Poly1305 state at
/// `state`: six words r0, r1, s1, h0, h1, h2 in radix 2^64 (Rampart's `Poly1305State.stitched`
/// layout); only h0, h1, h2 are written, partially reduced as the scalar code leaves them (h2 ≤ 4).
/// `groups` must be at least 1. r^2 ... r^4 come from three scalar blocks, r^5 ... r^8 from one
/// vector product; every two groups then cost fifty `vpmuludq` on four lanes.
@inline(never)
public func poly1305BlocksAVX2(_ state: UnsafeMutablePointer<UInt64>, _ p: UnsafeRawPointer, _ groups: Int) {
    let r0 = state[0], r1 = state[1], s1 = state[2]
    var a0 = r0, a1 = r1, a2: UInt64 = 0
    @inline(__always) func next() -> (UInt64, UInt64, UInt64, UInt64, UInt64) {
        poly1305Block(&a0, &a1, &a2, m0: 0, m1: 0, hibit: 0, r0: r0, r1: r1, s1: s1)
        return limbs26(a0, a1, a2)
    }
    let q1 = limbs26(r0, r1, 0)
    let q2 = next(), q3 = next(), q4 = next()
    let last4 = mult(Q(q4.0, q3.0, q2.0, q1.0), Q(q4.1, q3.1, q2.1, q1.1), Q(q4.2, q3.2, q2.2, q1.2),
                     Q(q4.3, q3.3, q2.3, q1.3), Q(q4.4, q3.4, q2.4, q1.4))
    let p4 = mult(Q(repeating: q4.0), Q(repeating: q4.1), Q(repeating: q4.2), Q(repeating: q4.3), Q(repeating: q4.4))
    let z = Q(repeating: 0)
    let none: D = (z, z, z, z, z)
    let c = limbs26(state[3], state[4], state[5])
    var h0 = Q(c.0, 0, 0, 0), h1 = Q(c.1, 0, 0, 0), h2 = Q(c.2, 0, 0, 0), h3 = Q(c.3, 0, 0, 0), h4 = Q(c.4, 0, 0, 0)
    var p = p
    var g = groups
    if g >= 2 {
        let q = carry(prod(none, last4.r0, last4.r1, last4.r2, last4.r3, last4.r4, p4))
        let last8 = mult(q.0, q.1, q.2, q.3, q.4)
        let p8 = mult(Q(repeating: q.0[0]), Q(repeating: q.1[0]), Q(repeating: q.2[0]), Q(repeating: q.3[0]), Q(repeating: q.4[0]))
        while g >= 2 {
            let a = load4(p), b = load4(p + 64)
            let final = g == 2
            let db = prod(none, b.0, b.1, b.2, b.3, b.4, final ? last4 : p4)
            (h0, h1, h2, h3, h4) = carry(prod(db, h0 &+ a.0, h1 &+ a.1, h2 &+ a.2, h3 &+ a.3, h4 &+ a.4, final ? last8 : p8))
            p += 128
            g &-= 2
        }
    }
    if g == 1 {
        let a = load4(p)
        (h0, h1, h2, h3, h4) = carry(prod(none, h0 &+ a.0, h1 &+ a.1, h2 &+ a.2, h3 &+ a.3, h4 &+ a.4, last4))
    }
    let m: UInt64 = (1 << 26) - 1
    var t0 = h0.wrappedSum(), t1 = h1.wrappedSum(), t2 = h2.wrappedSum(), t3 = h3.wrappedSum(), t4 = h4.wrappedSum()
    t1 &+= t0 >> 26; t0 &= m
    t2 &+= t1 >> 26; t1 &= m
    t3 &+= t2 >> 26; t2 &= m
    t4 &+= t3 >> 26; t3 &= m
    let top = t4 >> 26; t4 &= m
    t0 &+= top &+ (top << 2)
    t1 &+= t0 >> 26; t0 &= m
    t2 &+= t1 >> 26; t1 &= m
    t3 &+= t2 >> 26; t2 &= m
    t4 &+= t3 >> 26; t3 &= m
    // value = t0 + t1·2^26 + t2·2^52 + t3·2^78 + t4·2^104, t4 < 2^26 + 1
    state[3] = t0 | (t1 << 26) | (t2 << 52)
    state[4] = (t2 >> 12) | (t3 << 14) | (t4 << 40)
    state[5] = t4 >> 24
}

/// Poly1305 four blocks a group on AVX2 (`avx2`), for processors without AVX-512 IFMA.
public enum Poly1305AVX2: Poly1305Implementation {
    public static let name = "avx2"
    public static let requires: KernelFeatures = [.avx2, .bmi2]
    public static let groupBlocks = 4
    @inline(__always)
    public static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ groups: Int) {
        poly1305BlocksAVX2(state, data, groups)
    }
}

#endif
