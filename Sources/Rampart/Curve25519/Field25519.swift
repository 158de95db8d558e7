// Arithmetic modulo p = 2^255 − 19 in radix 2^51 (five 64-bit limbs), constant time.
//
// A value is l0 + l1·2^51 + l2·2^102 + l3·2^153 + l4·2^204. Limbs are not kept below 2^51 between
// operations ("lazy" reduction): the bounds the code relies on are stated per function. Products of
// limbs go through `multipliedFullWidth` into 128-bit accumulators (a pair of UInt64); 2^255 ≡ 19
// folds the high limbs back. No function branches on, or indexes memory by, a limb value.

internal import RampartKernelSupport

/// A 128-bit unsigned accumulator.
@usableFromInline
struct Acc128 {
    @usableFromInline var lo: UInt64
    @usableFromInline var hi: UInt64

    @inline(__always) init(_ a: UInt64, _ b: UInt64) {
        let p = a.multipliedFullWidth(by: b)
        lo = p.low; hi = p.high
    }

    /// `self += a·b` (the caller keeps the sum below 2^128).
    @inline(__always) mutating func add(_ a: UInt64, _ b: UInt64) {
        let p = a.multipliedFullWidth(by: b)
        let (l, c) = lo.addingReportingOverflow(p.low)
        lo = l
        hi = hi &+ p.high &+ ctBit(c)
    }

    /// `self += x`.
    @inline(__always) mutating func add(_ x: UInt64) {
        let (l, c) = lo.addingReportingOverflow(x)
        lo = l
        hi = hi &+ ctBit(c)
    }

    /// Bits 51 and up (the caller keeps them below 2^64).
    @inline(__always) var shifted51: UInt64 { (lo >> 51) | (hi << 13) }
    /// Bits 0..<51.
    @inline(__always) var low51: UInt64 { lo & Field25519.mask51 }
}

/// An element of GF(2^255 − 19).
@usableFromInline
struct Field25519 {
    @usableFromInline var l0, l1, l2, l3, l4: UInt64

    @usableFromInline static let mask51: UInt64 = (1 << 51) - 1

    @inline(__always) init(_ l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64, _ l4: UInt64) {
        self.l0 = l0; self.l1 = l1; self.l2 = l2; self.l3 = l3; self.l4 = l4
    }

    static var zero: Field25519 { Field25519(0, 0, 0, 0, 0) }
    static var one: Field25519 { Field25519(1, 0, 0, 0, 0) }

    /// Loads 32 little-endian bytes, ignoring the top bit (RFC 7748 §5: the u-coordinate's most
    /// significant bit is masked). Values from p to 2^255 − 1 are accepted and reduced in arithmetic.
    @inline(__always) init(bytes p: UnsafeRawPointer) {
        let w0 = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let w1 = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let w2 = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        let w3 = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        let m = Field25519.mask51
        l0 = w0 & m
        l1 = ((w0 >> 51) | (w1 << 13)) & m
        l2 = ((w1 >> 38) | (w2 << 26)) & m
        l3 = ((w2 >> 25) | (w3 << 39)) & m
        l4 = (w3 >> 12) & m
    }

    /// `a + b`. Limbs add without carrying: inputs below 2^53 give limbs below 2^54.
    @inline(__always) static func + (a: Field25519, b: Field25519) -> Field25519 {
        Field25519(a.l0 &+ b.l0, a.l1 &+ b.l1, a.l2 &+ b.l2, a.l3 &+ b.l3, a.l4 &+ b.l4)
    }

    /// `a − b`, computed as a + 2p − b so that no limb underflows, without carrying. Requires b's
    /// limbs below 2^52 − 38 (every output of `*`, `squared()`, `timesA24()` and `carried()`
    /// qualifies) and a's below 2^53; the result's limbs are below 2^54.
    @inline(__always) static func - (a: Field25519, b: Field25519) -> Field25519 {
        // 2p in radix 2^51: 2·(2^51 − 19), then 2·(2^51 − 1) four times.
        let twoP0: UInt64 = 0xF_FFFF_FFFF_FFDA
        let twoPi: UInt64 = 0xF_FFFF_FFFF_FFFE
        return Field25519(a.l0 &+ twoP0 &- b.l0, a.l1 &+ twoPi &- b.l1, a.l2 &+ twoPi &- b.l2,
                          a.l3 &+ twoPi &- b.l3, a.l4 &+ twoPi &- b.l4)
    }

    /// One carry pass: limbs below 2^51 except l0 (below 2^51 + 19·2^13 for 64-bit inputs).
    @inline(__always) func carried() -> Field25519 {
        let m = Field25519.mask51
        var r = self
        r.l1 &+= r.l0 >> 51; r.l0 &= m
        r.l2 &+= r.l1 >> 51; r.l1 &= m
        r.l3 &+= r.l2 >> 51; r.l2 &= m
        r.l4 &+= r.l3 >> 51; r.l3 &= m
        r.l0 &+= 19 &* (r.l4 >> 51); r.l4 &= m
        return r
    }

    /// Reduces five 128-bit column sums to limbs: l0 below 2^51 + 2^13, the rest below 2^51 (for
    /// sums below 2^115, which inputs with limbs below 2^54 guarantee).
    @inline(__always) static func reduce(_ t0: Acc128, _ t1: Acc128, _ t2: Acc128, _ t3: Acc128,
                                          _ t4: Acc128) -> Field25519 {
        var t1 = t1, t2 = t2, t3 = t3, t4 = t4
        let r0 = t0.low51
        t1.add(t0.shifted51)
        let r1 = t1.low51
        t2.add(t1.shifted51)
        let r2 = t2.low51
        t3.add(t2.shifted51)
        let r3 = t3.low51
        t4.add(t3.shifted51)
        let r4 = t4.low51
        // c < 2^64 / 19 for the stated bounds, so 19·c fits.
        let c = t4.shifted51
        var s0 = r0 &+ 19 &* c
        let s1 = r1 &+ (s0 >> 51)
        s0 &= Field25519.mask51
        return Field25519(s0, s1, r2, r3, r4)
    }

    /// `a · b`. Inputs' limbs below 2^54.
    ///
    /// Column by column, each column's carry passed into the next as soon as it is known: only one
    /// 128-bit accumulator is live at a time, which keeps the ladder's many values in registers
    /// (computing all five columns first spilled most of them to the stack).
    @_transparent static func * (a: Field25519, b: Field25519) -> Field25519 {
        mul(a, b, Times19(b))
    }

    /// 19 times limbs 1...4 of a multiplier (a multiplier used many times, like the ladder's x1,
    /// computes them once).
    @usableFromInline struct Times19 {
        @usableFromInline let l1, l2, l3, l4: UInt64
        @_transparent init(_ b: Field25519) { l1 = 19 &* b.l1; l2 = 19 &* b.l2; l3 = 19 &* b.l3; l4 = 19 &* b.l4 }
    }

    /// `a · b` with `b19 = Times19(b)`.
    @_transparent static func mul(_ a: Field25519, _ b: Field25519, _ b19: Times19) -> Field25519 {
        let b1 = b19.l1, b2 = b19.l2, b3 = b19.l3, b4 = b19.l4
        var t = Acc128(a.l0, b.l0); t.add(a.l1, b4); t.add(a.l2, b3); t.add(a.l3, b2); t.add(a.l4, b1)
        let r0 = t.low51
        var c = t.shifted51
        t = Acc128(a.l0, b.l1); t.add(a.l1, b.l0); t.add(a.l2, b4); t.add(a.l3, b3); t.add(a.l4, b2); t.add(c)
        let r1 = t.low51; c = t.shifted51
        t = Acc128(a.l0, b.l2); t.add(a.l1, b.l1); t.add(a.l2, b.l0); t.add(a.l3, b4); t.add(a.l4, b3); t.add(c)
        let r2 = t.low51; c = t.shifted51
        t = Acc128(a.l0, b.l3); t.add(a.l1, b.l2); t.add(a.l2, b.l1); t.add(a.l3, b.l0); t.add(a.l4, b4); t.add(c)
        let r3 = t.low51; c = t.shifted51
        t = Acc128(a.l0, b.l4); t.add(a.l1, b.l3); t.add(a.l2, b.l2); t.add(a.l3, b.l1); t.add(a.l4, b.l0); t.add(c)
        return wrap(r0, r1, r2, r3, t)
    }

    /// Finishes a product from its low four limbs and the fifth column: the fifth column's carry
    /// (below 2^64 / 19 for the stated input bounds) wraps to limb 0 times 19.
    @_transparent static func wrap(_ r0: UInt64, _ r1: UInt64, _ r2: UInt64, _ r3: UInt64,
                                   _ t4: Acc128) -> Field25519 {
        let r4 = t4.low51
        var s0 = r0 &+ 19 &* t4.shifted51
        let s1 = r1 &+ (s0 >> 51)
        s0 &= mask51
        return Field25519(s0, s1, r2, r3, r4)
    }

    /// `self²` (15 products instead of 25). Limbs below 2^54.
    @_transparent func squared() -> Field25519 {
        let d0 = 2 &* l0, d1 = 2 &* l1, d2 = 2 &* l2, d3 = 2 &* l3
        let l3_19 = 19 &* l3, l4_19 = 19 &* l4
        var t = Acc128(l0, l0); t.add(d1, l4_19); t.add(d2, l3_19)
        let r0 = t.low51
        var c = t.shifted51
        t = Acc128(d0, l1); t.add(d2, l4_19); t.add(l3, l3_19); t.add(c)
        let r1 = t.low51; c = t.shifted51
        t = Acc128(d0, l2); t.add(l1, l1); t.add(d3, l4_19); t.add(c)
        let r2 = t.low51; c = t.shifted51
        t = Acc128(d0, l3); t.add(d1, l2); t.add(l4, l4_19); t.add(c)
        let r3 = t.low51; c = t.shifted51
        t = Acc128(d0, l4); t.add(d1, l3); t.add(l2, l2); t.add(c)
        return Field25519.wrap(r0, r1, r2, r3, t)
    }

    /// `self` squared `n` times (n ≥ 1).
    @inline(__always) func squared(times n: Int) -> Field25519 {
        var r = squared()
        var i = 1
        while i < n { r = r.squared(); i &+= 1 }
        return r
    }

    /// `self · 121665` (the ladder's (A − 2)/4). Limbs below 2^54.
    @inline(__always) func timesA24() -> Field25519 {
        let k: UInt64 = 121_665
        return Field25519.reduce(Acc128(l0, k), Acc128(l1, k), Acc128(l2, k), Acc128(l3, k), Acc128(l4, k))
    }

    /// `self^(p − 2)`, the inverse (zero maps to zero), by the usual addition chain: 254 squarings
    /// and 11 multiplications, independent of the value.
    func inverted() -> Field25519 {
        ChainField25519(value: self).invertedByFermat().value  // the shared chain (RampartKernelSupport/Curve25519Inversion.swift)
    }

    /// Fully reduced little-endian bytes (the unique representative below p).
    func store(_ out: UnsafeMutableRawPointer) {
        let m = Field25519.mask51
        var r = carried().carried()
        // Now r < 2^255 + small; subtract p when r ≥ p, without branching: add 19, see whether
        // bit 255 is set (then r ≥ p), and keep r + 19 − 2^255 in that case.
        var q = (r.l0 &+ 19) >> 51
        q = (r.l1 &+ q) >> 51
        q = (r.l2 &+ q) >> 51
        q = (r.l3 &+ q) >> 51
        q = (r.l4 &+ q) >> 51        // 1 when r ≥ p, else 0
        r.l0 &+= 19 &* q
        r.l1 &+= r.l0 >> 51; r.l0 &= m
        r.l2 &+= r.l1 >> 51; r.l1 &= m
        r.l3 &+= r.l2 >> 51; r.l2 &= m
        r.l4 &+= r.l3 >> 51; r.l3 &= m
        r.l4 &= m                    // drops 2^255 when q = 1
        let w0 = r.l0 | (r.l1 << 51)
        let w1 = (r.l1 >> 13) | (r.l2 << 38)
        let w2 = (r.l2 >> 26) | (r.l3 << 25)
        let w3 = (r.l3 >> 39) | (r.l4 << 12)
        out.storeBytes(of: w0.littleEndian, toByteOffset: 0, as: UInt64.self)
        out.storeBytes(of: w1.littleEndian, toByteOffset: 8, as: UInt64.self)
        out.storeBytes(of: w2.littleEndian, toByteOffset: 16, as: UInt64.self)
        out.storeBytes(of: w3.littleEndian, toByteOffset: 24, as: UInt64.self)
    }

    /// Swaps `a` and `b` when `bit` is 1, leaves them when it is 0, with the same instructions
    /// either way.
    @inline(__always) static func conditionalSwap(_ a: inout Field25519, _ b: inout Field25519, _ bit: UInt64) {
        let mask = 0 &- bit
        var t = mask & (a.l0 ^ b.l0); a.l0 ^= t; b.l0 ^= t
        t = mask & (a.l1 ^ b.l1); a.l1 ^= t; b.l1 ^= t
        t = mask & (a.l2 ^ b.l2); a.l2 ^= t; b.l2 ^= t
        t = mask & (a.l3 ^ b.l3); a.l3 ^= t; b.l3 ^= t
        t = mask & (a.l4 ^ b.l4); a.l4 ^= t; b.l4 ^= t
    }
}

/// Field25519 as the shared inversion chain sees it. A wrapper and not a conformance of Field25519
/// itself: that type is `@usableFromInline`, and RampartKernelSupport is imported internally.
private struct ChainField25519: Curve25519Field {
    var value: Field25519
    @inline(__always) static func * (a: ChainField25519, b: ChainField25519) -> ChainField25519 { ChainField25519(value: a.value * b.value) }
    @inline(__always) func squared() -> ChainField25519 { ChainField25519(value: value.squared()) }
    @inline(__always) func squared(times n: Int) -> ChainField25519 { ChainField25519(value: value.squared(times: n)) }
}
