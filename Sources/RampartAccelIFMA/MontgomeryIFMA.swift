// Modular exponentiation with AVX-512 IFMA (`vpmadd52luq`/`vpmadd52huq`) in radix 2^52, for 1024-bit
// moduli (RSA-2048's CRT primes, both halves at once) and 2048-bit moduli (Diffie-Hellman, RSA public
// operations): constant time for secret exponents, a sliding window for public ones.
// The method is Gueron & Drucker's almost-Montgomery multiplication with 52-bit digits ("Fast modular
// squaring with AVX512IFMA", 2018), as OpenSSL's rsaz-2k-avx512 uses it; this is an independent Swift
// implementation.
//
// Compiled with -parse-stdlib and +avx +avx2 +avx512f +avx512vl +avx512ifma +bmi2 +adx; callers check
// `CPUFeatures.avx512ifma`. Only 256-bit registers are used (as OpenSSL does for these sizes).
//
// Representation. A number is N digits of 52 bits (N = 20 for 1024-bit moduli, 40 for 2048-bit), one
// digit per 64-bit lane, R' = 2^(52·N). Values kept between multiplications are below 2m with every
// digit below 2^52 (almost-Montgomery: a, b < 2m and 4m < R' give a·b/R' + m·y/R' < 2m, so no
// subtraction is needed until the very end).
//
// Multiplication (the generated `amm20`, `amm20x2`, `amm40`). For each digit b_i of b: digit 0 of the
// accumulator is kept exactly in a scalar register (acc + a_0·b_i as a 128-bit sum), y = acc·k0 mod
// 2^52 makes it divisible by 2^52, and the carry (acc + a_0·b_i + m_0·y) >> 52 is exact. The vector
// accumulators get the low 52 bits of a_j·b_i and m_j·y at lane j, shift down one lane (`valignq`), hand
// the new lane 0 to the scalar, then get the high 52 bits of the same products (which belong one digit
// up, so after the shift at lane j again). Lane 0 of the vectors is never read after the shift except
// through the scalar, which already holds those high halves. Each lane receives at most 4 values
// below 2^52 per step, so after 40 steps it is below 2^60: no carry is propagated inside the loop.
// At the end, `normalise5`/`normalise10` resolve all carries without a branch.
//
// Exponentiation: a fixed window (4 or 5 bits, as `Modulus.powerCT`), every table entry read for every
// window with masks from value barriers, the window bits extracted at public positions; public
// exponents take RampartKernelSupport's sliding window. Docs/Architecture.md §6.11 has the measurements
// and the object-code review (Scripts/ct-jumps.sh).

import Swift
import RampartBarrier
import RampartKernelSupport

#if arch(x86_64)

typealias Y = SIMD4<UInt64>
typealias BY = Builtin.Vec4xInt64

let mask52: UInt64 = (1 << 52) - 1

/// `acc + lo52(x·y)` per lane (`vpmadd52luq`; the low 52 bits of each operand lane are multiplied).
@inline(__always) func madd52lo(_ acc: Y, _ x: Y, _ y: Y) -> Y {
    unsafeBitCast(Builtin.int_x86_avx512_vpmadd52l_uq_256(unsafeBitCast(acc, to: BY.self), unsafeBitCast(x, to: BY.self),
                                                           unsafeBitCast(y, to: BY.self)), to: Y.self)
}

/// `acc + hi52(x·y)` per lane (`vpmadd52huq`: bits 52 ..< 104 of the 104-bit product).
@inline(__always) func madd52hi(_ acc: Y, _ x: Y, _ y: Y) -> Y {
    unsafeBitCast(Builtin.int_x86_avx512_vpmadd52h_uq_256(unsafeBitCast(acc, to: BY.self), unsafeBitCast(x, to: BY.self),
                                                           unsafeBitCast(y, to: BY.self)), to: Y.self)
}

/// Vector `k` (lanes 4k ..< 4k+4) of the digits at `p`.
@inline(__always) func ld(_ p: UnsafePointer<UInt64>, _ k: Int) -> Y {
    UnsafeRawPointer(p + 4 * k).loadUnaligned(as: Y.self)
}

@inline(__always) func st(_ p: UnsafeMutablePointer<UInt64>, _ k: Int, _ v: Y) {
    UnsafeMutableRawPointer(p + 4 * k).storeBytes(of: v, as: Y.self)
}

/// Lanes 1, 2, 3 of `x` and lane 0 of `next` (one digit down across a register pair: `valignq $1`).
@inline(__always) func shr1(_ x: Y, _ next: Y) -> Y { Y(x[1], x[2], x[3], next[0]) }

/// Lane 3 of `previous` and lanes 0, 1, 2 of `x` (one digit up: `valignq $3`).
@inline(__always) func up(_ previous: Y, _ x: Y) -> Y { Y(previous[3], x[0], x[1], x[2]) }

/// Bit k set where lane k of `v` is above `t` (a vector compare into a mask register; no branch).
@inline(__always) func aboveBits(_ v: Y, _ t: Y) -> UInt64 {
    let c = Builtin.cmp_ugt_Vec4xInt64(unsafeBitCast(v, to: BY.self), unsafeBitCast(t, to: BY.self))
    return UInt64(Builtin.zext_Int4_Int64(Builtin.bitcast_Vec4xInt1_Int4(c)))
}

/// Bit k set where lane k of `v` equals `t`.
@inline(__always) func equalBits(_ v: Y, _ t: Y) -> UInt64 {
    let c = Builtin.cmp_eq_Vec4xInt64(unsafeBitCast(v, to: BY.self), unsafeBitCast(t, to: BY.self))
    return UInt64(Builtin.zext_Int4_Int64(Builtin.bitcast_Vec4xInt1_Int4(c)))
}

/// All ones when `k == index`, else zero, through a value barrier (the optimizer must not learn that
/// the mask is a comparison: it turned such a selection into a branch once; see Montgomery.select).
@inline(__always) func entryMask(_ k: Int, _ index: Int) -> UInt64 {
    let x = UInt64(truncatingIfNeeded: k ^ index)
    // All ones exactly when x == 0 (x < 2^63).
    return valueBarrier(((x | (0 &- x)) >> 63) &- 1)
}

/// Lane k = bit k of `bits` (k = 0...3).
@inline(__always) func laneBits(_ bits: UInt64) -> Y {
    (Y(repeating: bits) &>> Y(0, 1, 2, 3)) & Y(repeating: 1)
}

/// Constant-time modular exponentiation on AVX-512 IFMA (callers check `CPUFeatures.avx512ifma`).
public enum MontgomeryIFMA {
    /// The 52-bit digit count for a modulus of `limbs` 64-bit limbs, or nil for sizes without a kernel.
    public static func digits(limbs: Int) -> Int? {
        switch limbs {
        case 16: return 20
        case 32: return 40
        default: return nil
        }
    }

    /// R' = 2^(52·digits): callers precompute `R'² mod m` for ``powerCT(_:_:_:_:_:_:_:_:_:_:)``.
    public static func montgomeryBits(limbs: Int) -> Int { 52 * (digits(limbs: limbs) ?? 0) }

    /// Table entries for a window of `width` bits.
    static func entries(_ width: Int) -> Int { 1 << width }

    /// Lanes of one operand's working set: m, R'², x, acc, sel, one, the 64-bit conversion scratch
    /// (N lanes ≥ limbs + 1) and 32 table entries, N lanes each.
    static func operandLanes(_ n: Int) -> Int { 39 * n }

    /// 64-bit words of workspace ``powerCT(_:_:_:_:_:_:_:_:_:_:)`` needs for a `limbs`-limb modulus
    /// (and ``powerCTPair(_:_:_:_:_:_:_:_:_:_:_:_:_:_:_:)`` for two), including alignment slack.
    public static func workspaceLanes(limbs: Int, pair: Bool = false) -> Int {
        let n = digits(limbs: limbs) ?? 0
        return (pair ? 2 : 1) * operandLanes(n) + 8
    }

    /// One modulus's working set in the workspace.
    struct Operand {
        let n: Int
        let limbs: Int
        let k0: UInt64
        let base: UnsafeMutablePointer<UInt64>
        var m: UnsafeMutablePointer<UInt64> { base }
        var rr: UnsafeMutablePointer<UInt64> { base + n }
        var x: UnsafeMutablePointer<UInt64> { base + 2 * n }
        var acc: UnsafeMutablePointer<UInt64> { base + 3 * n }
        var sel: UnsafeMutablePointer<UInt64> { base + 4 * n }
        var one: UnsafeMutablePointer<UInt64> { base + 5 * n }
        var scratch: UnsafeMutablePointer<UInt64> { base + 6 * n }
        func table(_ k: Int) -> UnsafeMutablePointer<UInt64> { base + (7 + k) * n }

        /// Lays out the operand at `base` and converts m and R'² to digits.
        init(_ base: UnsafeMutablePointer<UInt64>, limbs: Int, m: UnsafePointer<UInt64>, m0inv: UInt64,
             rr: UnsafePointer<UInt64>) {
            n = digits(limbs: limbs)!
            self.limbs = limbs
            self.base = base
            k0 = m0inv & mask52
            // Every other region is written before it is read (conversions, products, table reads).
            toDigits(self.m, m, limbs, n)
            toDigits(self.rr, rr, limbs, n)
            one.update(repeating: 0, count: n)
            one[0] = 1
        }
    }

    /// 64-byte aligned start of the workspace.
    static func aligned(_ ws: UnsafeMutablePointer<UInt64>) -> UnsafeMutablePointer<UInt64> {
        UnsafeMutablePointer(bitPattern: (Int(bitPattern: ws) + 63) & ~63)!
    }

    /// `d` (N digits) ← `x` (`limbs` limbs).
    static func toDigits(_ d: UnsafeMutablePointer<UInt64>, _ x: UnsafePointer<UInt64>, _ limbs: Int, _ n: Int) {
        for j in 0..<n {
            let bit = 52 * j
            let li = bit >> 6, sh = UInt64(bit & 63)
            var v: UInt64 = li < limbs ? x[li] >> sh : 0
            if sh > 12, li + 1 < limbs { v |= x[li + 1] << (64 - sh) }
            d[j] = v & mask52
        }
    }

    /// `x` (`limbs` + 1 limbs) ← `d` (N normalised digits, a value below 2^(64·(limbs + 1))).
    static func fromDigits(_ x: UnsafeMutablePointer<UInt64>, _ d: UnsafePointer<UInt64>, _ limbs: Int, _ n: Int) {
        x.update(repeating: 0, count: limbs + 1)
        for j in 0..<n {
            let bit = 52 * j
            let li = bit >> 6, sh = UInt64(bit & 63)
            if li <= limbs { x[li] |= d[j] << sh }
            if sh > 12, li + 1 <= limbs { x[li + 1] |= d[j] >> (64 - sh) }
        }
    }

    /// `out = x mod m` for (`limbs` + 1)-limb x < 2m: a masked subtraction (RampartKernelSupport's,
    /// shared with the AVX2 kernel), kept out of line so that its object code is reviewed once.
    @inline(never)
    static func reduceOnce(_ out: UnsafeMutablePointer<UInt64>, _ x: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                           _ limbs: Int) {
        reduceBelowTwoModuli(out, x, m, limbs: limbs)
    }

    /// `w` bits of the exponent from bit `pos` (RampartKernelSupport's `exponentWindow`; positions are
    /// public, the bits are not, and nothing branches on them). Kept out of line so that its object code
    /// is reviewed once (Scripts/ct-jumps.sh).
    @inline(never)
    static func bits(_ exp: UnsafePointer<UInt64>, _ pos: Int, _ w: Int) -> Int { exponentWindow(exp, pos, w) }

    /// `out = table[index]` (N digits), reading every entry (the generated `select20`/`select40`).
    @inline(__always)
    static func select(_ out: UnsafeMutablePointer<UInt64>, _ op: Operand, _ count: Int, _ index: Int) {
        if op.n == 20 { select20(out, op.table(0), index, count) } else { select40(out, op.table(0), index, count) }
    }

    /// One almost-Montgomery product for the operand's size.
    @inline(__always)
    static func amm(_ op: Operand, _ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>) {
        if op.n == 20 { amm20(r, a, b, op.m, op.k0) } else { amm40(r, a, b, op.m, op.k0) }
    }

    /// Leaves the Montgomery domain: out (`limbs` limbs) = acc / R' mod m, fully reduced.
    static func finish(_ out: UnsafeMutablePointer<UInt64>, _ op: Operand, _ originalM: UnsafePointer<UInt64>) {
        // acc · 1 / R' ≤ m (acc < 2m); equal to m only when acc ≡ 0, which the subtraction handles.
        amm(op, op.acc, op.acc, op.one)
        fromDigits(op.scratch, op.acc, op.limbs, op.n)
        reduceOnce(out, op.scratch, originalM, op.limbs)
    }

    /// Fills the window table: entry k = x^k · R' (almost reduced); `op.x` holds the base digits.
    static func fillTable(_ op: Operand, _ count: Int) {
        amm(op, op.table(0), op.rr, op.one)    // R'² / R' = R'
        amm(op, op.table(1), op.x, op.rr)      // x · R'
        for k in 2..<count { amm(op, op.table(k), op.table(k - 1), op.table(1)) }
    }

    // MARK: Entry points

    /// `out = base^exp mod m` in constant time for the values of base, exponent and modulus (only
    /// `limbs` and `expLimbs` show). `limbs` is 16 or 32 (see ``digits(limbs:)``), `m` odd with its top
    /// limb non-zero, `base` any `limbs`-limb value, `m0inv = −m⁻¹ mod 2^64`, `rr = 2^(2·52·N) mod m`
    /// (``montgomeryBits(limbs:)``), `window` 1...5 bits. `ws` holds ``workspaceLanes(limbs:pair:)``
    /// words. `out` may alias `base`.
    @inline(never)
    public static func powerCT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>,
                               _ exp: UnsafePointer<UInt64>, _ expLimbs: Int, window: Int,
                               _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ rr: UnsafePointer<UInt64>,
                               limbs: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        let op = Operand(aligned(ws), limbs: limbs, m: m, m0inv: m0inv, rr: rr)
        toDigits(op.x, base, limbs, op.n)
        let count = entries(window)
        fillTable(op, count)
        let totalBits = expLimbs * 64
        var pos = totalBits - (totalBits % window == 0 ? window : totalBits % window)
        select(op.acc, op, count, bits(exp, pos, totalBits - pos))
        while pos > 0 {
            pos -= window
            for _ in 0..<window { amm(op, op.acc, op.acc, op.acc) }
            select(op.sel, op, count, bits(exp, pos, window))
            amm(op, op.acc, op.acc, op.sel)
        }
        finish(out, op, m)
    }

    /// `out = base^exp mod m` with a sliding window, in time that depends on the exponent: public
    /// exponents only (RSA's e, the fault check of the private operation). `base < m`; `exp` has
    /// `expLimbs` limbs, the top one non-zero; the rest as ``powerCT(_:_:_:_:window:_:_:_:limbs:_:)``.
    @inline(never)
    public static func powerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>,
                               _ exp: UnsafePointer<UInt64>, _ expLimbs: Int,
                               _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ rr: UnsafePointer<UInt64>,
                               limbs: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        let op = Operand(aligned(ws), limbs: limbs, m: m, m0inv: m0inv, rr: rr)
        toDigits(op.x, base, limbs, op.n)
        let bits = expLimbs * 64 - exp[expLimbs - 1].leadingZeroBitCount
        let width = slidingWindowWidth(bits: bits)
        let odd = 1 << (width - 1)   // x, x^3, ..., x^(2^width − 1): at most 32 entries
        amm(op, op.table(0), op.x, op.rr)   // x · R'
        if odd > 1 {
            amm(op, op.sel, op.table(0), op.table(0))
            for k in 1..<odd { amm(op, op.table(k), op.table(k - 1), op.sel) }
        }
        slidingWindowScan(exp, bits: bits, width: width,
                          start: { op.acc.update(from: op.table($0), count: op.n) },
                          square: { amm(op, op.acc, op.acc, op.acc) },
                          multiply: { amm(op, op.acc, op.acc, op.table($0)) })
        finish(out, op, m)
    }

    /// Two independent powers modulo two 1024-bit moduli (16 limbs each) at once, with exponents of the
    /// same `expLimbs`: the two halves of an RSA-CRT private operation. Each half as in
    /// ``powerCT(_:_:_:_:window:_:_:_:limbs:_:)``; the products run interleaved (`amm20x2`).
    @inline(never)
    public static func powerCTPair(_ out1: UnsafeMutablePointer<UInt64>, _ base1: UnsafePointer<UInt64>,
                                   _ exp1: UnsafePointer<UInt64>, _ m1: UnsafePointer<UInt64>, _ m0inv1: UInt64,
                                   _ rr1: UnsafePointer<UInt64>,
                                   _ out2: UnsafeMutablePointer<UInt64>, _ base2: UnsafePointer<UInt64>,
                                   _ exp2: UnsafePointer<UInt64>, _ m2: UnsafePointer<UInt64>, _ m0inv2: UInt64,
                                   _ rr2: UnsafePointer<UInt64>,
                                   expLimbs: Int, window: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        let start = aligned(ws)
        let p = Operand(start, limbs: 16, m: m1, m0inv: m0inv1, rr: rr1)
        let q = Operand(start + operandLanes(20), limbs: 16, m: m2, m0inv: m0inv2, rr: rr2)
        toDigits(p.x, base1, 16, 20)
        toDigits(q.x, base2, 16, 20)
        let count = entries(window)
        // The table: both halves' products interleaved.
        amm20x2(p.table(0), p.rr, p.one, p.m, p.k0, q.table(0), q.rr, q.one, q.m, q.k0)
        amm20x2(p.table(1), p.x, p.rr, p.m, p.k0, q.table(1), q.x, q.rr, q.m, q.k0)
        for k in 2..<count {
            amm20x2(p.table(k), p.table(k - 1), p.table(1), p.m, p.k0, q.table(k), q.table(k - 1), q.table(1), q.m, q.k0)
        }
        let totalBits = expLimbs * 64
        var pos = totalBits - (totalBits % window == 0 ? window : totalBits % window)
        select20x2(p.acc, p.table(0), bits(exp1, pos, totalBits - pos),
                   q.acc, q.table(0), bits(exp2, pos, totalBits - pos), count)
        while pos > 0 {
            pos -= window
            for _ in 0..<window { amm20x2(p.acc, p.acc, p.acc, p.m, p.k0, q.acc, q.acc, q.acc, q.m, q.k0) }
            select20x2(p.sel, p.table(0), bits(exp1, pos, window),
                       q.sel, q.table(0), bits(exp2, pos, window), count)
            amm20x2(p.acc, p.acc, p.sel, p.m, p.k0, q.acc, q.acc, q.sel, q.m, q.k0)
        }
        amm20x2(p.acc, p.acc, p.one, p.m, p.k0, q.acc, q.acc, q.one, q.m, q.k0)
        fromDigits(p.scratch, p.acc, 16, 20)
        reduceOnce(out1, p.scratch, m1, 16)
        fromDigits(q.scratch, q.acc, 16, 20)
        reduceOnce(out2, q.scratch, m2, 16)
    }

    /// Testing entry: `out` (N = 20 or 40 digits) = the N lanes at `lanes` (each below 2^60) with every
    /// carry propagated (`normalise5`/`normalise10`), the carry out of the top digit dropped.
    public static func normalise(_ out: UnsafeMutablePointer<UInt64>, _ lanes: UnsafePointer<UInt64>, digits n: Int) {
        if n == 20 {
            normalise5(out, ld(lanes, 0), ld(lanes, 1), ld(lanes, 2), ld(lanes, 3), ld(lanes, 4))
        } else {
            normalise10(out, ld(lanes, 0), ld(lanes, 1), ld(lanes, 2), ld(lanes, 3), ld(lanes, 4),
                        ld(lanes, 5), ld(lanes, 6), ld(lanes, 7), ld(lanes, 8), ld(lanes, 9))
        }
    }

    /// `out = a · b · 2^−(52·N) mod m` fully reduced, for a, b < m (testing entry: one product of the
    /// kernel, with `limbs` and `ws` as for ``powerCT(_:_:_:_:window:_:_:_:limbs:_:)``). With `pair`,
    /// the product runs as both halves of `amm20x2` (16 limbs only), the second on swapped operands,
    /// and the two results must agree; a disagreement returns false.
    public static func mul(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                           _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, limbs: Int, pair: Bool,
                           _ ws: UnsafeMutablePointer<UInt64>) -> Bool {
        let op = Operand(aligned(ws), limbs: limbs, m: m, m0inv: m0inv, rr: m)
        toDigits(op.x, a, limbs, op.n)
        toDigits(op.sel, b, limbs, op.n)
        if pair {
            let q = Operand(aligned(ws) + operandLanes(op.n), limbs: limbs, m: m, m0inv: m0inv, rr: m)
            toDigits(q.x, b, limbs, q.n)
            toDigits(q.sel, a, limbs, q.n)
            amm20x2(op.acc, op.x, op.sel, op.m, op.k0, q.acc, q.x, q.sel, q.m, q.k0)
            for j in 0..<op.n where op.acc[j] != q.acc[j] { return false }
        } else {
            amm(op, op.acc, op.x, op.sel)
        }
        fromDigits(op.scratch, op.acc, limbs, op.n)
        reduceOnce(out, op.scratch, m, limbs)
        return true
    }
}

/// Powers modulo 1024- and 2048-bit moduli on AVX-512 IFMA in radix 2^52.
extension MontgomeryIFMA: ModularPowerImplementation {
    public static let name = "avx512ifma"
    public static let requires: KernelFeatures = [.avx512vl, .avx512ifma, .bmi2, .adx]
    public static func serves(limbs: Int) -> Bool { digits(limbs: limbs) != nil }
}

#endif
