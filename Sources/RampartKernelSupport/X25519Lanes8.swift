// Eight X25519 scalar multiplications at once (RFC 7748 §5), one per 64-bit lane of a vector: the batch
// a server or a group call's fan-out computes (`Curve25519.scalarMultiply(scalars:points:)`). The one
// body of two kernels, `@_alwaysEmitIntoClient` as in Salsa20Lanes8.swift: RampartAccelAVX2's
// `X25519Lanes8AVX2`, where LLVM splits each vector into two ymm registers, and RampartAccelAVX512's
// `X25519Lanes8AVX512`, where each vector is one zmm register. The registry runs the AVX-512 build when
// the processor has it; ctgrind runs the AVX2 one (valgrind has no AVX-512). Only generic `Builtin`
// vector instructions: a debug build of this module, which has no CPU features, compiles them too.
//
// Field arithmetic. GF(2^255 − 19) in radix 2^25.5: ten limbs h0…h9 of 26, 25, 26, 25, … bits, the value
// Σ h_i·2^⌈25.5·i⌉ (the representation of ref10 and of curve25519-donna's 32-bit code), unsigned. Every
// product of two limbs is one `vpmuludq` (32 × 32 → 64 bits), so every factor stays below 2^32:
//   - "carried" values (the output of `carry`, every product, square and the inputs) have limbs below
//     2^26 (even i) and 2^25 (odd i), except h1 and h5 below 2^25 + 2^18;
//   - a sum of two carried values, and a difference f + 2p − g of a carried g, have limbs below
//     3·2^26 + 2^20 (even) and 3·2^25 + 2^20 (odd): that is what the products and squares take;
//   - in a product the odd×odd terms are doubled (2^25.5 · 2^25.5 = 2 · 2^51) and the terms that wrap
//     past 2^255 are multiplied by 19 (2^255 ≡ 19): the factors 2·f_i, 4·f_i and 19·g_j stay below 2^32,
//     and every output column stays below 0.28 · 2^64 before its carry.
//
// Constant time: the ladder is the same 255 steps for every scalar, the conditional swap is a lane mask
// from the scalar bit (`x ^ ((x ^ y) & mask)`), and no memory is addressed by a secret. The scalar words
// are read at offsets that depend only on the (public) step.

import Swift

#if arch(x86_64)

@usableFromInline typealias Q8 = Builtin.Vec8xInt64

@usableFromInline @_alwaysEmitIntoClient @_transparent func qsplat(_ n: UInt64) -> Q8 { unsafeBitCast(SIMD8<UInt64>(repeating: n), to: Q8.self) }
@usableFromInline @_alwaysEmitIntoClient @_transparent func qadd(_ a: Q8, _ b: Q8) -> Q8 { Builtin.add_Vec8xInt64(a, b) }
@usableFromInline @_alwaysEmitIntoClient @_transparent func qsub(_ a: Q8, _ b: Q8) -> Q8 { Builtin.sub_Vec8xInt64(a, b) }
@usableFromInline @_alwaysEmitIntoClient @_transparent func qand(_ a: Q8, _ b: Q8) -> Q8 { Builtin.and_Vec8xInt64(a, b) }
@usableFromInline @_alwaysEmitIntoClient @_transparent func qxor(_ a: Q8, _ b: Q8) -> Q8 { Builtin.xor_Vec8xInt64(a, b) }
@usableFromInline @_alwaysEmitIntoClient @_transparent func qshr(_ a: Q8, _ n: UInt64) -> Q8 { Builtin.lshr_Vec8xInt64(a, qsplat(n)) }
@usableFromInline @_alwaysEmitIntoClient @_transparent func qshl(_ a: Q8, _ n: UInt64) -> Q8 { Builtin.shl_Vec8xInt64(a, qsplat(n)) }
/// The product of the low 32 bits of each lane (one `vpmuludq`: LLVM drops the masks).
@usableFromInline @_alwaysEmitIntoClient @_transparent func qmul(_ a: Q8, _ b: Q8) -> Q8 {
    let low = qsplat(0xFFFF_FFFF)
    return Builtin.mul_Vec8xInt64(qand(a, low), qand(b, low))
}
@usableFromInline @_alwaysEmitIntoClient @_transparent func qload(_ p: UnsafePointer<UInt64>) -> Q8 {
    unsafeBitCast(UnsafeRawPointer(p).loadUnaligned(as: SIMD8<UInt64>.self), to: Q8.self)
}
@usableFromInline @_alwaysEmitIntoClient @_transparent func qstore(_ p: UnsafeMutablePointer<UInt64>, _ v: Q8) {
    UnsafeMutableRawPointer(p).storeBytes(of: unsafeBitCast(v, to: SIMD8<UInt64>.self), as: SIMD8<UInt64>.self)
}

/// Sums of lane products: Σ a_i·b_i.
@usableFromInline @_alwaysEmitIntoClient @_transparent func dot(_ a0: Q8, _ b0: Q8, _ a1: Q8, _ b1: Q8, _ a2: Q8, _ b2: Q8, _ a3: Q8, _ b3: Q8,
                       _ a4: Q8, _ b4: Q8) -> Q8 {
    qadd(qadd(qadd(qmul(a0, b0), qmul(a1, b1)), qadd(qmul(a2, b2), qmul(a3, b3))), qmul(a4, b4))
}
@usableFromInline @_alwaysEmitIntoClient @_transparent func dot(_ a0: Q8, _ b0: Q8, _ a1: Q8, _ b1: Q8, _ a2: Q8, _ b2: Q8, _ a3: Q8, _ b3: Q8,
                       _ a4: Q8, _ b4: Q8, _ a5: Q8, _ b5: Q8) -> Q8 {
    qadd(qadd(qadd(qmul(a0, b0), qmul(a1, b1)), qadd(qmul(a2, b2), qmul(a3, b3))), qadd(qmul(a4, b4), qmul(a5, b5)))
}
@usableFromInline @_alwaysEmitIntoClient @_transparent func dot(_ a0: Q8, _ b0: Q8, _ a1: Q8, _ b1: Q8, _ a2: Q8, _ b2: Q8, _ a3: Q8, _ b3: Q8,
                       _ a4: Q8, _ b4: Q8, _ a5: Q8, _ b5: Q8, _ a6: Q8, _ b6: Q8, _ a7: Q8, _ b7: Q8,
                       _ a8: Q8, _ b8: Q8, _ a9: Q8, _ b9: Q8) -> Q8 {
    qadd(dot(a0, b0, a1, b1, a2, b2, a3, b3, a4, b4), dot(a5, b5, a6, b6, a7, b7, a8, b8, a9, b9))
}

/// Eight elements of GF(2^255 − 19), one per lane, in radix 2^25.5 (see the bounds above).
@usableFromInline struct FeX8 {
    @usableFromInline var h0, h1, h2, h3, h4, h5, h6, h7, h8, h9: Q8

    @usableFromInline @_alwaysEmitIntoClient @_transparent init(_ h0: Q8, _ h1: Q8, _ h2: Q8, _ h3: Q8, _ h4: Q8, _ h5: Q8, _ h6: Q8, _ h7: Q8, _ h8: Q8, _ h9: Q8) {
        self.h0 = h0; self.h1 = h1; self.h2 = h2; self.h3 = h3; self.h4 = h4
        self.h5 = h5; self.h6 = h6; self.h7 = h7; self.h8 = h8; self.h9 = h9
    }

    /// Every lane `n` (a small constant).
    @usableFromInline @_alwaysEmitIntoClient @_transparent init(small n: UInt64) {
        let z = qsplat(0)
        self.init(qsplat(n), z, z, z, z, z, z, z, z, z)
    }

    /// Limb i of lane j at `p[8·i + j]`.
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) init(_ p: UnsafePointer<UInt64>) {
        self.init(qload(p), qload(p + 8), qload(p + 16), qload(p + 24), qload(p + 32),
                  qload(p + 40), qload(p + 48), qload(p + 56), qload(p + 64), qload(p + 72))
    }

    @usableFromInline @_alwaysEmitIntoClient @inline(__always) func store(_ p: UnsafeMutablePointer<UInt64>) {
        qstore(p, h0); qstore(p + 8, h1); qstore(p + 16, h2); qstore(p + 24, h3); qstore(p + 32, h4)
        qstore(p + 40, h5); qstore(p + 48, h6); qstore(p + 56, h7); qstore(p + 64, h8); qstore(p + 72, h9)
    }

    /// Carries columns below 2^64 into a carried value (ref10's order: two interleaved chains, the
    /// carry out of h9 comes back times 19 into h0).
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) static func carry(_ h0: Q8, _ h1: Q8, _ h2: Q8, _ h3: Q8, _ h4: Q8, _ h5: Q8, _ h6: Q8,
                                        _ h7: Q8, _ h8: Q8, _ h9: Q8) -> FeX8 {
        let m26 = qsplat((1 << 26) - 1), m25 = qsplat((1 << 25) - 1)
        var h0 = h0, h1 = h1, h2 = h2, h3 = h3, h4 = h4, h5 = h5, h6 = h6, h7 = h7, h8 = h8, h9 = h9
        h1 = qadd(h1, qshr(h0, 26)); h0 = qand(h0, m26)
        h5 = qadd(h5, qshr(h4, 26)); h4 = qand(h4, m26)
        h2 = qadd(h2, qshr(h1, 25)); h1 = qand(h1, m25)
        h6 = qadd(h6, qshr(h5, 25)); h5 = qand(h5, m25)
        h3 = qadd(h3, qshr(h2, 26)); h2 = qand(h2, m26)
        h7 = qadd(h7, qshr(h6, 26)); h6 = qand(h6, m26)
        h4 = qadd(h4, qshr(h3, 25)); h3 = qand(h3, m25)
        h8 = qadd(h8, qshr(h7, 25)); h7 = qand(h7, m25)
        h5 = qadd(h5, qshr(h4, 26)); h4 = qand(h4, m26)
        h9 = qadd(h9, qshr(h8, 26)); h8 = qand(h8, m26)
        // The carry out of h9 is below 2^39: 19·c = c + 2c + 16c by shifts (it does not fit vpmuludq).
        let c = qshr(h9, 25)
        h9 = qand(h9, m25)
        h0 = qadd(h0, qadd(qadd(c, qshl(c, 1)), qshl(c, 4)))
        h1 = qadd(h1, qshr(h0, 26)); h0 = qand(h0, m26)
        return FeX8(h0, h1, h2, h3, h4, h5, h6, h7, h8, h9)
    }

    /// `f + g` (no carry).
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) static func + (f: FeX8, g: FeX8) -> FeX8 {
        FeX8(qadd(f.h0, g.h0), qadd(f.h1, g.h1), qadd(f.h2, g.h2), qadd(f.h3, g.h3), qadd(f.h4, g.h4),
             qadd(f.h5, g.h5), qadd(f.h6, g.h6), qadd(f.h7, g.h7), qadd(f.h8, g.h8), qadd(f.h9, g.h9))
    }

    /// `f + 2p − g` for a carried `g` (every limb of g at most the limb of 2p: no lane wraps).
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) static func - (f: FeX8, g: FeX8) -> FeX8 {
        let p0 = qsplat(0x7FF_FFDA), pe = qsplat(0x7FF_FFFE), po = qsplat(0x3FF_FFFE)
        return FeX8(qsub(qadd(f.h0, p0), g.h0), qsub(qadd(f.h1, po), g.h1), qsub(qadd(f.h2, pe), g.h2),
                    qsub(qadd(f.h3, po), g.h3), qsub(qadd(f.h4, pe), g.h4), qsub(qadd(f.h5, po), g.h5),
                    qsub(qadd(f.h6, pe), g.h6), qsub(qadd(f.h7, po), g.h7), qsub(qadd(f.h8, pe), g.h8),
                    qsub(qadd(f.h9, po), g.h9))
    }

    /// `f · g`, carried.
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) static func * (f: FeX8, g: FeX8) -> FeX8 {
        let n19 = qsplat(19)
        let f1x2 = qadd(f.h1, f.h1)
        let f3x2 = qadd(f.h3, f.h3)
        let f5x2 = qadd(f.h5, f.h5)
        let f7x2 = qadd(f.h7, f.h7)
        let f9x2 = qadd(f.h9, f.h9)
        let g1x19 = qmul(g.h1, n19)
        let g2x19 = qmul(g.h2, n19)
        let g3x19 = qmul(g.h3, n19)
        let g4x19 = qmul(g.h4, n19)
        let g5x19 = qmul(g.h5, n19)
        let g6x19 = qmul(g.h6, n19)
        let g7x19 = qmul(g.h7, n19)
        let g8x19 = qmul(g.h8, n19)
        let g9x19 = qmul(g.h9, n19)
        let h0 = dot(f.h0, g.h0, f1x2, g9x19, f.h2, g8x19, f3x2, g7x19, f.h4, g6x19, f5x2, g5x19, f.h6, g4x19, f7x2, g3x19, f.h8, g2x19, f9x2, g1x19)
        let h1 = dot(f.h0, g.h1, f.h1, g.h0, f.h2, g9x19, f.h3, g8x19, f.h4, g7x19, f.h5, g6x19, f.h6, g5x19, f.h7, g4x19, f.h8, g3x19, f.h9, g2x19)
        let h2 = dot(f.h0, g.h2, f1x2, g.h1, f.h2, g.h0, f3x2, g9x19, f.h4, g8x19, f5x2, g7x19, f.h6, g6x19, f7x2, g5x19, f.h8, g4x19, f9x2, g3x19)
        let h3 = dot(f.h0, g.h3, f.h1, g.h2, f.h2, g.h1, f.h3, g.h0, f.h4, g9x19, f.h5, g8x19, f.h6, g7x19, f.h7, g6x19, f.h8, g5x19, f.h9, g4x19)
        let h4 = dot(f.h0, g.h4, f1x2, g.h3, f.h2, g.h2, f3x2, g.h1, f.h4, g.h0, f5x2, g9x19, f.h6, g8x19, f7x2, g7x19, f.h8, g6x19, f9x2, g5x19)
        let h5 = dot(f.h0, g.h5, f.h1, g.h4, f.h2, g.h3, f.h3, g.h2, f.h4, g.h1, f.h5, g.h0, f.h6, g9x19, f.h7, g8x19, f.h8, g7x19, f.h9, g6x19)
        let h6 = dot(f.h0, g.h6, f1x2, g.h5, f.h2, g.h4, f3x2, g.h3, f.h4, g.h2, f5x2, g.h1, f.h6, g.h0, f7x2, g9x19, f.h8, g8x19, f9x2, g7x19)
        let h7 = dot(f.h0, g.h7, f.h1, g.h6, f.h2, g.h5, f.h3, g.h4, f.h4, g.h3, f.h5, g.h2, f.h6, g.h1, f.h7, g.h0, f.h8, g9x19, f.h9, g8x19)
        let h8 = dot(f.h0, g.h8, f1x2, g.h7, f.h2, g.h6, f3x2, g.h5, f.h4, g.h4, f5x2, g.h3, f.h6, g.h2, f7x2, g.h1, f.h8, g.h0, f9x2, g9x19)
        let h9 = dot(f.h0, g.h9, f.h1, g.h8, f.h2, g.h7, f.h3, g.h6, f.h4, g.h5, f.h5, g.h4, f.h6, g.h3, f.h7, g.h2, f.h8, g.h1, f.h9, g.h0)
        return carry(h0, h1, h2, h3, h4, h5, h6, h7, h8, h9)
    }

    /// `f²`, carried.
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) func squared() -> FeX8 { FeX8.square(self) }

    /// `f²`, carried. Static, so that a column name it fails to define cannot resolve to a limb of self.
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) static func square(_ f: FeX8) -> FeX8 {
        let n19 = qsplat(19)
        let f0x2 = qadd(f.h0, f.h0)
        let f1x2 = qadd(f.h1, f.h1)
        let f1x4 = qshl(f.h1, 2)
        let f2x2 = qadd(f.h2, f.h2)
        let f3x2 = qadd(f.h3, f.h3)
        let f3x4 = qshl(f.h3, 2)
        let f4x2 = qadd(f.h4, f.h4)
        let f5x2 = qadd(f.h5, f.h5)
        let f5x4 = qshl(f.h5, 2)
        let f6x2 = qadd(f.h6, f.h6)
        let f7x2 = qadd(f.h7, f.h7)
        let f7x4 = qshl(f.h7, 2)
        let f8x2 = qadd(f.h8, f.h8)
        let f9x2 = qadd(f.h9, f.h9)
        let f5x19 = qmul(f.h5, n19)
        let f6x19 = qmul(f.h6, n19)
        let f7x19 = qmul(f.h7, n19)
        let f8x19 = qmul(f.h8, n19)
        let f9x19 = qmul(f.h9, n19)
        let h0 = dot(f.h0, f.h0, f1x4, f9x19, f2x2, f8x19, f3x4, f7x19, f4x2, f6x19, f5x2, f5x19)
        let h1 = dot(f0x2, f.h1, f2x2, f9x19, f3x2, f8x19, f4x2, f7x19, f5x2, f6x19)
        let h2 = dot(f0x2, f.h2, f1x2, f.h1, f3x4, f9x19, f4x2, f8x19, f5x4, f7x19, f.h6, f6x19)
        let h3 = dot(f0x2, f.h3, f1x2, f.h2, f4x2, f9x19, f5x2, f8x19, f6x2, f7x19)
        let h4 = dot(f0x2, f.h4, f1x4, f.h3, f.h2, f.h2, f5x4, f9x19, f6x2, f8x19, f7x2, f7x19)
        let h5 = dot(f0x2, f.h5, f1x2, f.h4, f2x2, f.h3, f6x2, f9x19, f7x2, f8x19)
        let h6 = dot(f0x2, f.h6, f1x4, f.h5, f2x2, f.h4, f3x2, f.h3, f7x4, f9x19, f.h8, f8x19)
        let h7 = dot(f0x2, f.h7, f1x2, f.h6, f2x2, f.h5, f3x2, f.h4, f8x2, f9x19)
        let h8 = dot(f0x2, f.h8, f1x4, f.h7, f2x2, f.h6, f3x4, f.h5, f.h4, f.h4, f9x2, f9x19)
        let h9 = dot(f0x2, f.h9, f1x2, f.h8, f2x2, f.h7, f3x2, f.h6, f4x2, f.h5)
        return carry(h0, h1, h2, h3, h4, h5, h6, h7, h8, h9)
    }

    @usableFromInline @_alwaysEmitIntoClient @inline(__always) func squared(times n: Int) -> FeX8 {
        var r = squared()
        var i = 1
        while i < n { r = r.squared(); i &+= 1 }
        return r
    }

    /// `121665 · f`, carried (the ladder's (A − 2)/4).
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) func timesA24() -> FeX8 {
        let a = qsplat(121_665)
        return FeX8.carry(qmul(h0, a), qmul(h1, a), qmul(h2, a), qmul(h3, a), qmul(h4, a),
                          qmul(h5, a), qmul(h6, a), qmul(h7, a), qmul(h8, a), qmul(h9, a))
    }

    /// `f^(p − 2)` = 1/f (0 for 0): ref10's chain, 254 squarings and 11 products.
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) func inverted() -> FeX8 {
        invertedByFermat()  // the shared chain (RampartKernelSupport/Curve25519Inversion.swift)
    }

    /// Swaps the lanes of `a` and `b` where `mask` is all ones, keeps them where it is zero.
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) static func conditionalSwap(_ a: inout FeX8, _ b: inout FeX8, _ mask: Q8) {
        var t = qand(qxor(a.h0, b.h0), mask); a.h0 = qxor(a.h0, t); b.h0 = qxor(b.h0, t)
        t = qand(qxor(a.h1, b.h1), mask); a.h1 = qxor(a.h1, t); b.h1 = qxor(b.h1, t)
        t = qand(qxor(a.h2, b.h2), mask); a.h2 = qxor(a.h2, t); b.h2 = qxor(b.h2, t)
        t = qand(qxor(a.h3, b.h3), mask); a.h3 = qxor(a.h3, t); b.h3 = qxor(b.h3, t)
        t = qand(qxor(a.h4, b.h4), mask); a.h4 = qxor(a.h4, t); b.h4 = qxor(b.h4, t)
        t = qand(qxor(a.h5, b.h5), mask); a.h5 = qxor(a.h5, t); b.h5 = qxor(b.h5, t)
        t = qand(qxor(a.h6, b.h6), mask); a.h6 = qxor(a.h6, t); b.h6 = qxor(b.h6, t)
        t = qand(qxor(a.h7, b.h7), mask); a.h7 = qxor(a.h7, t); b.h7 = qxor(b.h7, t)
        t = qand(qxor(a.h8, b.h8), mask); a.h8 = qxor(a.h8, t); b.h8 = qxor(b.h8, t)
        t = qand(qxor(a.h9, b.h9), mask); a.h9 = qxor(a.h9, t); b.h9 = qxor(b.h9, t)
    }
}

/// Eight independent X25519 scalar multiplications, one per lane: the body of the kernel tiers' entry
/// points (`X25519Lanes8AVX2`, `X25519Lanes8AVX512`), which check the CPU features.
public enum X25519Lanes {
    /// Words of the `points` and `result` buffers (10 limbs × 8 lanes) and of `scalars` (4 × 8).
    public static let fieldWords = 80, scalarWords = 32

    /// `result = X25519(k_j, u_j)` for the eight lanes j, as x/z before the final reduction.
    ///
    /// - `points`: 80 words, limb i of lane j's u-coordinate at `8·i + j`, radix 2^25.5 with limbs below
    ///   2^26 (even i) and 2^25 (odd i), the value below 2^255;
    /// - `scalars`: 32 words, 64-bit word w of lane j's clamped scalar at `8·w + j`;
    /// - `result`: 80 words in the layout of `points`, carried limbs (below 2^26 + 2^18); the caller
    ///   reduces modulo p and encodes. It may not alias the inputs.
    ///
    /// Constant time in the scalars and the points: the same instructions for every input.
    @_alwaysEmitIntoClient @inline(__always)
    public static func scalarMultiply(_ result: UnsafeMutablePointer<UInt64>, _ points: UnsafePointer<UInt64>,
                                      _ scalars: UnsafePointer<UInt64>) {
        let x1 = FeX8(points)
        var x2 = FeX8(small: 1), z2 = FeX8(small: 0)
        var x3 = x1, z3 = FeX8(small: 1)
        var swap = qsplat(0)
        let one = qsplat(1), zero = qsplat(0)
        // Bits 254 down to 0 (bit 255 is clear after clamping, bits 0…2 are zero but still run).
        var t = 254
        while t >= 0 {
            let bit = qand(qshr(qload(scalars + 8 * (t >> 6)), UInt64(t & 63)), one)   // t is public
            swap = qxor(swap, bit)
            let mask = qsub(zero, swap)
            FeX8.conditionalSwap(&x2, &x3, mask)
            FeX8.conditionalSwap(&z2, &z3, mask)
            swap = bit

            let a = x2 + z2
            let aa = a.squared()
            let b = x2 - z2
            let bb = b.squared()
            let e = aa - bb
            let c = x3 + z3
            let d = x3 - z3
            let da = d * a
            let cb = c * b
            x3 = (da + cb).squared()
            z3 = (da - cb).squared() * x1
            x2 = aa * bb
            z2 = e * (aa + e.timesA24())
            t &-= 1
        }
        let mask = qsub(zero, swap)
        FeX8.conditionalSwap(&x2, &x3, mask)
        FeX8.conditionalSwap(&z2, &z3, mask)
        (x2 * z2.inverted()).store(result)
        x25519LanesWipe(&x2); x25519LanesWipe(&z2); x25519LanesWipe(&x3); x25519LanesWipe(&z3)
    }
}

/// Volatile stores of zero over a ladder variable's stack slot, so that they are not dropped as dead.
@usableFromInline @_alwaysEmitIntoClient @inline(__always) func x25519LanesWipe(_ x: inout FeX8) {
    withUnsafeMutableBytes(of: &x) { volatileZero($0.baseAddress!, $0.count) }
}

extension FeX8: Curve25519Field {}

#endif
