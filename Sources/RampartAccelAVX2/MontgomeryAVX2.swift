// 2048-bit Montgomery arithmetic with AVX2 in a redundant radix-2^28 representation (the idea of
// Gueron & Krasnov's RSAZ-AVX2, "Software Implementation of Modular Exponentiation, Using Advanced
// Vector Instructions Architectures"; this is an independent Swift implementation for 2048 bits).
//
// Compiled with -parse-stdlib and +avx +avx2 +ssse3 +sse4.1 +bmi +bmi2 only. Callers check for AVX2.
//
// Representation. A number is 76 digits of 28 bits (R' = 2^(28·76) = 2^2128), one digit per 64-bit
// lane, stored in a "slot" of `slotLanes` lanes: 4 zero lanes, the 76 digits (digits 74 and 75 are 0
// for values below 2^2072), then zero lanes. Values kept between multiplications are < 2m with every
// digit < 2^28 (almost-Montgomery: inputs < 2m and 4m < R' give an output < 2m, so no subtraction is
// needed until the very end).
//
// Multiplication (operand scanning, word-serial reduction in 28-bit digits). The accumulator T (152
// lanes, in memory) gets a·b_i + m·q_i at digit offset i for i = 0 ..< 76, four steps per pass. The
// four q of a pass are computed in scalar registers from the low digits (the only carry propagated
// during the loop is the one out of the dropped digits); the vector part adds the 8 products per
// 4-lane column with `vpmuludq` (32×32→64) without carries. Carry headroom: a column receives at most
// 2·76 products < 2^56 plus a carry < 2^40, so it stays below 2^63.3 — no normalisation is needed
// inside a multiplication. Then one serial carry pass normalises the 76 result digits.
//
// The shifted operand vectors are independent of the pass: lanes 4k−s ..< 4k−s+4 of a and m for
// s = 0...3, read with unaligned loads from the zero-padded slots (never stored to during a pass).

import Swift
import RampartKernelSupport

#if arch(x86_64)

private typealias V = SIMD4<UInt64>

/// Digit bits, digit mask, digits per number.
@usableFromInline let digitBits: UInt64 = 28
let digitMask: UInt64 = (1 << 28) - 1
let digits = 76
/// Lanes before digit 0 in a slot, and the slot size (4 + 76 + 8).
let pad = 4

@inline(__always) private func load(_ p: UnsafePointer<UInt64>, _ lane: Int) -> V {
    UnsafeRawPointer(p + lane).loadUnaligned(as: V.self)
}

@inline(__always) private func store(_ p: UnsafeMutablePointer<UInt64>, _ lane: Int, _ v: V) {
    UnsafeMutableRawPointer(p + lane).storeBytes(of: v, as: V.self)
}

/// Lane-wise product of the low 32 bits of each lane (one `vpmuludq`).
@inline(__always) private func mulLo(_ x: V, _ y: V) -> V {
    let lo = V(repeating: 0xFFFF_FFFF)
    return (x & lo) &* (y & lo)
}

/// Montgomery kernels on redundant 2048-bit numbers (callers check `CPU.features.avx2`).
public enum MontgomeryAVX2 {
    /// Lanes of one padded slot.
    public static let slotLanes = 88
    /// 64-bit limbs of the moduli these kernels take.
    public static let limbs = 32
    /// `R'² mod m` is what callers precompute: R' = 2^`montgomeryBits`.
    public static let montgomeryBits = 2128
    /// Slots of the exponentiation workspace: m, R'², x², acc, scratch, 32 table entries, T (2 slots).
    static let powerSlots = 5 + 32 + 2
    /// Lanes of the shifted copies of one operand (see ``shiftedCopies(_:_:)``).
    static let shiftedLanes = 4 * 80
    /// Lanes (64-bit words) of workspace ``powerVT(_:_:_:_:_:_:_:_:)`` needs (+8 for alignment).
    public static let workspaceLanes = powerSlots * slotLanes + 2 * shiftedLanes + 8

    /// The workspace layout, from a 64-byte aligned base.
    struct Layout {
        let base: UnsafeMutablePointer<UInt64>
        init(_ ws: UnsafeMutablePointer<UInt64>) {
            ws.update(repeating: 0, count: workspaceLanes)
            base = UnsafeMutablePointer(bitPattern: (Int(bitPattern: ws) + 63) & ~63)!
        }
        /// Digit 0 of slot k.
        func slot(_ k: Int) -> UnsafeMutablePointer<UInt64> { base + k * slotLanes + pad }
        /// The shifted copies of the `a` operand and of m.
        var aShifted: UnsafeMutablePointer<UInt64> { base + powerSlots * slotLanes }
        var mShifted: UnsafeMutablePointer<UInt64> { base + powerSlots * slotLanes + shiftedLanes }
    }

    /// `dst[80·s + j] = a[j − s]` for s = 0...3, j = 0 ..< 80 (zero outside the digits): the pass
    /// loop then reads the shifted operand vectors with aligned, non-overlapping loads. Not inlined,
    /// so the optimiser cannot rewrite those loads into blends and lane-crossing permutes of
    /// overlapping unaligned loads (which it did, at 2.5× the cost).
    @inline(never)
    static func shiftedCopies(_ dst: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>) {
        for s in 0..<4 {
            for q in 0..<20 { store(dst, 80 * s + 4 * q, load(a, 4 * q - s)) }
        }
    }

    // MARK: Core multiplication

    /// `r = a · b / R' mod m` up to one multiple of m: r < 2m when a, b < 2m, digits normalised.
    /// `a`, `b`, `r`, `m` point at digit 0 of padded slots; `t` is 152+ lanes of scratch. `r` may
    /// alias `a` or `b`. The schedule depends only on public sizes.
    @inline(__always)
    static func mont(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                     _ m: UnsafePointer<UInt64>, _ k0: UInt64, _ w: Layout) {
        let t = w.slot(powerSlots - 2)
        let aS = w.aShifted, mS = UnsafePointer(w.mShifted)
        shiftedCopies(aS, a)
        let zero = V(repeating: 0)
        for k in 0..<38 { store(t, 4 * k, zero) }
        let a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3]
        let m0 = m[0], m1 = m[1], m2 = m[2], m3 = m[3]
        var carry: UInt64 = 0
        var i = 0
        while i < digits {
            let b0 = b[i], b1 = b[i + 1], b2 = b[i + 2], b3 = b[i + 3]
            // Scalar: the four low digits, exactly, to get q0...q3.
            var x0 = t[i] &+ carry &+ a0 &* b0
            let q0 = (x0 &* k0) & digitMask
            x0 = x0 &+ m0 &* q0
            var x1 = t[i + 1] &+ (x0 >> digitBits) &+ a1 &* b0 &+ m1 &* q0 &+ a0 &* b1
            let q1 = (x1 &* k0) & digitMask
            x1 = x1 &+ m0 &* q1
            var x2 = t[i + 2] &+ (x1 >> digitBits) &+ a2 &* b0 &+ m2 &* q0 &+ a1 &* b1 &+ m1 &* q1 &+ a0 &* b2
            let q2 = (x2 &* k0) & digitMask
            x2 = x2 &+ m0 &* q2
            var x3 = t[i + 3] &+ (x2 >> digitBits) &+ a3 &* b0 &+ m3 &* q0 &+ a2 &* b1 &+ m2 &* q1
                &+ a1 &* b2 &+ m1 &* q2 &+ a0 &* b3
            let q3 = (x3 &* k0) & digitMask
            x3 = x3 &+ m0 &* q3
            carry = x3 >> digitBits
            // Vector: columns i+4 ..< i+80 (the four dropped digits are done above).
            let vb0 = V(repeating: b0), vb1 = V(repeating: b1), vb2 = V(repeating: b2), vb3 = V(repeating: b3)
            let vq0 = V(repeating: q0), vq1 = V(repeating: q1), vq2 = V(repeating: q2), vq3 = V(repeating: q3)
            let tp = t + i
            for k in 1..<20 {
                let l = 4 * k
                var s0 = mulLo(load(aS, l), vb0) &+ mulLo(load(mS, l), vq0)
                var s1 = mulLo(load(aS, 80 + l), vb1) &+ mulLo(load(mS, 80 + l), vq1)
                s0 = s0 &+ mulLo(load(aS, 160 + l), vb2) &+ mulLo(load(mS, 160 + l), vq2)
                s1 = s1 &+ mulLo(load(aS, 240 + l), vb3) &+ mulLo(load(mS, 240 + l), vq3)
                store(tp, l, load(tp, l) &+ (s0 &+ s1))
            }
            i += 4
        }
        // Normalise digits 76 ..< 152 (+ the carry) into r.
        var c = carry
        for j in 0..<digits {
            let v = t[digits + j] &+ c
            r[j] = v & digitMask
            c = v >> digitBits
        }
    }

    // MARK: Conversions

    /// Slot digits ← 32 limbs (x < 2^2048).
    static func toDigits(_ d: UnsafeMutablePointer<UInt64>, _ x: UnsafePointer<UInt64>) {
        for j in 0..<digits {
            let bit = j * 28
            let li = bit >> 6, sh = bit & 63
            var v: UInt64 = li < limbs ? x[li] >> UInt64(sh) : 0
            if sh > 36, li + 1 < limbs { v |= x[li + 1] << UInt64(64 - sh) }
            d[j] = v & digitMask
        }
    }

    /// 33 limbs ← normalised slot digits.
    static func fromDigits(_ x: UnsafeMutablePointer<UInt64>, _ d: UnsafePointer<UInt64>) {
        for l in 0...limbs { x[l] = 0 }
        for j in 0..<digits {
            let bit = j * 28
            let li = bit >> 6, sh = bit & 63
            if li <= limbs { x[li] |= d[j] << UInt64(sh) }
            if sh > 36, li + 1 <= limbs { x[li + 1] |= d[j] >> UInt64(64 - sh) }
        }
    }

    /// `out = x mod m` for 33-limb x < 2m (masked subtraction).
    static func reduceOnce(_ out: UnsafeMutablePointer<UInt64>, _ x: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>) {
        reduceBelowTwoModuli(out, x, m, limbs: limbs)
    }

    // MARK: Entry points

    /// `out = a · b · 2^−2128 mod m` (fully reduced), for 32-limb a, b < m and odd m < 2^2048 with
    /// `m0inv = −m⁻¹ mod 2^64`. `ws` holds ``workspaceLanes`` words. Testing entry.
    @inline(never)
    public static func mul(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                           _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ ws: UnsafeMutablePointer<UInt64>) {
        let w = Layout(ws)
        let sm = w.slot(0), sa = w.slot(1), sb = w.slot(2), sr = w.slot(3)
        toDigits(sm, m); toDigits(sa, a); toDigits(sb, b)
        shiftedCopies(w.mShifted, sm)
        mont(sr, sa, sb, sm, m0inv & digitMask, w)
        let x = w.slot(4)
        fromDigits(x, sr)
        reduceOnce(out, x, m)
    }

    /// `out = base^exp mod m`, sliding window, variable time in the exponent: public exponents only.
    /// `base` < m, 32 limbs; `exp` has `expLimbs` limbs, the top one non-zero; `rr2` = R'² mod m.
    /// `ws` holds ``workspaceLanes`` words.
    @inline(never)
    public static func powerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>,
                               _ exp: UnsafePointer<UInt64>, _ expLimbs: Int, _ m: UnsafePointer<UInt64>,
                               _ m0inv: UInt64, _ rr2: UnsafePointer<UInt64>, _ ws: UnsafeMutablePointer<UInt64>) {
        let w = Layout(ws)
        let k0 = m0inv & digitMask
        let sm = w.slot(0), srr = w.slot(1), x2 = w.slot(2), acc = w.slot(3), tmp = w.slot(4)
        func table(_ k: Int) -> UnsafeMutablePointer<UInt64> { w.slot(5 + k) }
        toDigits(sm, m)
        shiftedCopies(w.mShifted, sm)
        toDigits(srr, rr2)
        toDigits(tmp, base)
        let bits = expLimbs * 64 - exp[expLimbs - 1].leadingZeroBitCount
        let win = slidingWindowWidth(bits: bits)
        let odd = 1 << (win - 1)
        mont(table(0), tmp, srr, sm, k0, w)   // x·R'
        if odd > 1 {
            mont(x2, table(0), table(0), sm, k0, w)
            for k in 1..<odd { mont(table(k), table(k - 1), x2, sm, k0, w) }
        }
        slidingWindowScan(exp, bits: bits, width: win,
                          start: { acc.update(from: table($0), count: digits) },
                          square: { mont(acc, acc, acc, sm, k0, w) },
                          multiply: { mont(acc, acc, table($0), sm, k0, w) })
        // Leave the R' domain: acc · 1 / R' (< 2m), then reduce.
        for j in 0..<digits { tmp[j] = 0 }
        tmp[0] = 1
        mont(acc, acc, tmp, sm, k0, w)
        let x = tmp
        fromDigits(x, acc)
        reduceOnce(out, x, m)
        _ = x2
    }
}
/// Public powers modulo 2048-bit moduli on AVX2 in radix 2^28 (RSAZ style).
extension MontgomeryAVX2: MontgomeryWideImplementation {
    public static let name = "avx2"
    public static let requires: KernelFeatures = [.avx2]
}

#endif
