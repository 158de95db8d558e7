// Poly1305 over eight message blocks at a time with AVX-512 IFMA (`vpmadd52luq`/`vpmadd52huq`) on
// 512-bit registers, in radix 2^44. The method is the one OpenSSL's poly1305-x86_64 uses for IFMA
// (lanes of the accumulator that each take every eighth block and are multiplied by r^8, combined at
// the end with r^8 ... r^1); this is an independent Swift implementation.
//
// Compiled with -parse-stdlib and the IFMA tier's features; Rampart's `poly1305` registry runs it only
// where the processor has them (AVX-512VL and IFMA, as `CPUFeatures.avx512ifma` requires).
//
// Representation. A number is three limbs h0 + h1·2^44 + h2·2^88 in the low bits of 64-bit lanes.
// A power r^k of the clamped key is kept the same way with s1 = 20·r1 and s2 = 20·r2, because
// 2^132 = 4·2^130 ≡ 20 (mod 2^130 − 5):
//
//     d0 = h0·r0 + h1·s2 + h2·s1       (weight 2^0)
//     d1 = h0·r1 + h1·r0 + h2·s2       (weight 2^44)
//     d2 = h0·r2 + h1·r1 + h2·r0       (weight 2^88)
//
// IFMA multiplies the low 52 bits of its operands and gives the product's low and high 52 bits, so
// each d is kept as a low sum and a high sum; a high sum weighs 2^52 = 2^44·2^8 more than its low
// sum and joins the next limb shifted left by 8 (d2's high sum weighs 2^140 ≡ 5·2^10).
//
// Steps. Lane i takes blocks i, i + 8, i + 16, ...; a step absorbs two groups of eight blocks,
// h = (h + a)·r^16 + b·r^8, with b's product computed off h's dependency chain and one carry pass for
// both, and the last step multiplies lane i by r^(16 − i) and r^(8 − i) instead, so that the sum of
// the lanes is the polynomial (an odd group count ends with one group times r^(8 − i)).
//
// Bounds. After a carry pass h0 < 2^44, h1 < 2^44 + 2^12 and h2 < 2^42; adding a block (limbs below
// 2^44, 2^44 and 2^41 with the 2^128 bit) keeps every limb below 2^46. Multipliers have limbs below
// 2^45 (r^1 ... r^8 come from the scalar code partially reduced, value below 2^131; r^9 ... r^16 from
// a carry pass), so s1, s2 < 2^50 and every product is below 2^96. Each partial sum adds at most six
// halves: low sums stay below 2^55, high sums below 2^46 (below 2^42 for d2, whose products use r
// only), so no lane overflows and no operand ever exceeds the 52 bits IFMA reads. Everything is
// branch-free; no address depends on data.

import Swift
import RampartKernelSupport

#if arch(x86_64)

typealias Z = SIMD8<UInt64>
typealias BZ = Builtin.Vec8xInt64

/// `acc + lo52(x·y)` per lane on 512-bit registers.
@_transparent func zlo(_ acc: Z, _ x: Z, _ y: Z) -> Z {
    unsafeBitCast(Builtin.int_x86_avx512_vpmadd52l_uq_512(unsafeBitCast(acc, to: BZ.self), unsafeBitCast(x, to: BZ.self),
                                                           unsafeBitCast(y, to: BZ.self)), to: Z.self)
}

/// `acc + hi52(x·y)` per lane (bits 52 ..< 104 of the product).
@_transparent func zhi(_ acc: Z, _ x: Z, _ y: Z) -> Z {
    unsafeBitCast(Builtin.int_x86_avx512_vpmadd52h_uq_512(unsafeBitCast(acc, to: BZ.self), unsafeBitCast(x, to: BZ.self),
                                                           unsafeBitCast(y, to: BZ.self)), to: Z.self)
}

/// Multipliers for one group: r0, r1, r2, s1 = 20·r1, s2 = 20·r2 (per lane).
struct Poly1305Powers {
    var r0: Z, r1: Z, r2: Z, s1: Z, s2: Z
}

/// A radix-2^64 value (h0, h1, h2 with h2 small) as three 44-bit limbs (the top one up to 2^43).
@_transparent func limbs44(_ h0: UInt64, _ h1: UInt64, _ h2: UInt64) -> (UInt64, UInt64, UInt64) {
    let m44: UInt64 = (1 << 44) - 1
    return (h0 & m44, ((h0 >> 44) | (h1 << 20)) & m44, (h1 >> 24) | (h2 << 40))
}

/// The six partial sums of a product h · r before the carries (the low and high 52-bit halves of
/// d0, d1, d2), added to `acc`.
@_transparent func products(_ acc: (Z, Z, Z, Z, Z, Z), _ h0: Z, _ h1: Z, _ h2: Z, _ r: Poly1305Powers) -> (Z, Z, Z, Z, Z, Z) {
    let z = Z(repeating: 0)
    // Two partial sums per limb, so that each accumulation chain is two products long, not three.
    return (zlo(zlo(acc.0, h0, r.r0), h1, r.s2) &+ zlo(z, h2, r.s1),
            zhi(zhi(acc.1, h0, r.r0), h1, r.s2) &+ zhi(z, h2, r.s1),
            zlo(zlo(acc.2, h0, r.r1), h1, r.r0) &+ zlo(z, h2, r.s2),
            zhi(zhi(acc.3, h0, r.r1), h1, r.r0) &+ zhi(z, h2, r.s2),
            zlo(zlo(acc.4, h0, r.r2), h1, r.r1) &+ zlo(z, h2, r.r0),
            zhi(zhi(acc.5, h0, r.r2), h1, r.r1) &+ zhi(z, h2, r.r0))
}

/// Carries the partial sums `d` into a partially reduced h: limb 0 → 1 → 2, bits at 2^130 and above
/// back to limb 0 times 5, then limb 0 → 1 once more.
@_transparent func carry(_ d: (Z, Z, Z, Z, Z, Z)) -> (Z, Z, Z) {
    let m44 = Z(repeating: (1 << 44) - 1), m42 = Z(repeating: (1 << 42) - 1)
    let e1 = d.2 &+ (d.0 &>> 44) &+ (d.1 &<< 8)
    let e2 = d.4 &+ (e1 &>> 44) &+ (d.3 &<< 8)
    let top = (e2 &>> 42) &+ (d.5 &<< 10)
    let e0 = (d.0 & m44) &+ top &+ (top &<< 2)
    return (e0 & m44, (e1 & m44) &+ (e0 &>> 44), e2 & m42)
}

/// Limb vectors as multipliers (s1 = 20·r1, s2 = 20·r2).
@_transparent func multipliers(_ r0: Z, _ r1: Z, _ r2: Z) -> Poly1305Powers {
    Poly1305Powers(r0: r0, r1: r1, r2: r2, s1: r1 &* Z(repeating: 20), s2: r2 &* Z(repeating: 20))
}

/// Lane 0 of each limb of `p` in every lane.
@_transparent func broadcast0(_ p: Poly1305Powers) -> Poly1305Powers {
    Poly1305Powers(r0: Z(repeating: p.r0[0]), r1: Z(repeating: p.r1[0]), r2: Z(repeating: p.r2[0]),
                   s1: Z(repeating: p.s1[0]), s2: Z(repeating: p.s2[0]))
}

/// Eight consecutive 16-byte blocks at `p` as limbs, block i in lane i, with the 2^128 bit.
@_transparent func loadGroup(_ p: UnsafeRawPointer) -> (Z, Z, Z) {
    let a = p.loadUnaligned(as: Z.self), b = p.loadUnaligned(fromByteOffset: 64, as: Z.self)
    let w0 = Z(UInt64(littleEndian: a[0]), UInt64(littleEndian: a[2]), UInt64(littleEndian: a[4]), UInt64(littleEndian: a[6]),
               UInt64(littleEndian: b[0]), UInt64(littleEndian: b[2]), UInt64(littleEndian: b[4]), UInt64(littleEndian: b[6]))
    let w1 = Z(UInt64(littleEndian: a[1]), UInt64(littleEndian: a[3]), UInt64(littleEndian: a[5]), UInt64(littleEndian: a[7]),
               UInt64(littleEndian: b[1]), UInt64(littleEndian: b[3]), UInt64(littleEndian: b[5]), UInt64(littleEndian: b[7]))
    let m44 = Z(repeating: (1 << 44) - 1)
    return (w0 & m44, ((w0 &>> 44) | (w1 &<< 20)) & m44, (w1 &>> 24) | Z(repeating: 1 << 40))
}

/// Absorbs `groups` × 128 bytes at `p` (each 16 bytes a full block, with the 2^128 bit) into the
/// Poly1305 state at `state`: six words r0, r1, s1, h0, h1, h2 in radix 2^64 (the layout of Rampart's
/// `Poly1305State.stitched`); only h0, h1, h2 are written. `groups` must be at least 1.
///
/// The result is the scalar code's h after the same blocks, partially reduced the same way (h2 ≤ 4).
/// The powers r^1 ... r^8 are computed here with the scalar block function (seven products), then
/// every group costs eighteen IFMA products on eight lanes.
@inline(never)
public func poly1305BlocksIFMA(_ state: UnsafeMutablePointer<UInt64>, _ p: UnsafeRawPointer, _ groups: Int) {
    let r0 = state[0], r1 = state[1], s1 = state[2]
    // Powers r^1 ... r^8 in radix 2^64 (partially reduced: h2 ≤ 4), as limbs; lane i of `last8` gets
    // r^(8 − i).
    var a0 = r0, a1 = r1, a2: UInt64 = 0
    @inline(__always) func next() -> (UInt64, UInt64, UInt64) {
        poly1305Block(&a0, &a1, &a2, m0: 0, m1: 0, hibit: 0, r0: r0, r1: r1, s1: s1)
        return limbs44(a0, a1, a2)
    }
    let q1 = limbs44(r0, r1, 0)
    let q2 = next(), q3 = next(), q4 = next(), q5 = next(), q6 = next(), q7 = next(), q8 = next()
    let l0 = Z(q8.0, q7.0, q6.0, q5.0, q4.0, q3.0, q2.0, q1.0)
    let l1 = Z(q8.1, q7.1, q6.1, q5.1, q4.1, q3.1, q2.1, q1.1)
    let l2 = Z(q8.2, q7.2, q6.2, q5.2, q4.2, q3.2, q2.2, q1.2)
    let zero = Z(repeating: 0)
    let none = (zero, zero, zero, zero, zero, zero)
    let last8 = multipliers(l0, l1, l2)  // lane i: r^(8 − i)
    let p8 = broadcast0(last8)
    // The running accumulator enters lane 0 with the first block.
    let (c0, c1, c2) = limbs44(state[3], state[4], state[5])
    var h0 = Z(c0, 0, 0, 0, 0, 0, 0, 0), h1 = Z(c1, 0, 0, 0, 0, 0, 0, 0), h2 = Z(c2, 0, 0, 0, 0, 0, 0, 0)
    var p = p
    var g = groups
    if g >= 2 {
        // Two groups a step: h = (h + a)·r^16 + b·r^8, one carry pass for both products; the product
        // of b does not depend on h, so each step's dependency chain is one product and one carry.
        let (q0, q1, q2) = carry(products(none, l0, l1, l2, p8))
        let last16 = multipliers(q0, q1, q2)  // lane i: r^(16 − i)
        let p16 = broadcast0(last16)
        while g >= 2 {
            let (a0, a1, a2) = loadGroup(p)
            let (b0, b1, b2) = loadGroup(p + 128)
            let final = g == 2
            let db = products(none, b0, b1, b2, final ? last8 : p8)
            (h0, h1, h2) = carry(products(db, h0 &+ a0, h1 &+ a1, h2 &+ a2, final ? last16 : p16))
            p += 256
            g &-= 2
        }
    }
    if g == 1 {
        // One group left (an odd count): h = (h + m)·r^8 ... r^1.
        let (m0, m1, m2) = loadGroup(p)
        (h0, h1, h2) = carry(products(none, h0 &+ m0, h1 &+ m1, h2 &+ m2, last8))
    }
    // Sum the lanes (each limb below 2^47 then) and carry to h0, h1 < 2^44, h2 < 2^42 + 2.
    let m44: UInt64 = (1 << 44) - 1
    var t0 = h0.wrappedSum(), t1 = h1.wrappedSum(), t2 = h2.wrappedSum()
    t1 &+= t0 >> 44; t0 &= m44
    t2 &+= t1 >> 44; t1 &= m44
    let top = t2 >> 42
    t2 &= (1 << 42) - 1
    t0 &+= top &+ (top << 2)
    t1 &+= t0 >> 44; t0 &= m44
    t2 &+= t1 >> 44; t1 &= m44
    state[3] = t0 | (t1 << 44)
    state[4] = (t1 >> 20) | (t2 << 24)
    state[5] = t2 >> 40
}

/// Poly1305 eight blocks a group on AVX-512 IFMA (`avx512ifma`). `RAMPART_DISABLE_FEATURES` may hide
/// AVX-512VL (ctgrind does: valgrind cannot run AVX-512) and leave the detected IFMA bit set, hence
/// both.
public enum Poly1305IFMA: Poly1305Implementation {
    public static let name = "avx512ifma"
    public static let requires: KernelFeatures = [.avx512vl, .avx512ifma, .bmi2, .adx]
    public static let groupBlocks = 8
    @inline(__always)
    public static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ groups: Int) {
        poly1305BlocksIFMA(state, data, groups)
    }
}

#endif
