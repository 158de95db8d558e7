// The Montgomery product-scanning loops for any limb count: the one body of the portable kernels
// (`Montgomery.mulPortable`/`squarePortable`, Rampart/BigInt/MontgomeryLoops.swift) and of the same
// loops compiled with BMI2 and ADX (`MontgomeryBMI2.mul`/`square`, RampartAccelBMI2), where the module's
// target features let LLVM use mulx. `@_alwaysEmitIntoClient @inline(__always)` as in
// Salsa20Lanes8.swift: each entry point (`@inline(never)`, its own name) holds the whole loop, compiled
// with its module's features; Scripts/ct-jumps.sh fails if a tier calls into this module instead.
// Until 2026-12 this source was a template rendered into both modules (Scripts/gen_montgomery_loops.py).
//
// Constant time: the loop bounds depend only on the (public) limb count; carries become words without
// a select (`c ? 1 : 0` on carries compiled to conditional jumps in the BMI2 kernels), and the final
// subtraction is a masked blend behind a value barrier.

import Swift
import RampartBarrier

/// A carry as a word without a select.
@usableFromInline @_alwaysEmitIntoClient @inline(__always)
func montgomeryCarryBit(_ c: Bool) -> UInt64 { UInt64(unsafeBitCast(c, to: UInt8.self)) }

/// A three-word column accumulator (c2:c1:c0) for product scanning. Bounds: a column sums at
/// most 2n products below 2^128, so it stays below 2^(128 + log2(2n)) < 2^192.
@usableFromInline struct MontgomeryAccumulator {
    @usableFromInline var c0: UInt64 = 0, c1: UInt64 = 0, c2: UInt64 = 0
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) init() {}
    /// (c2:c1:c0) += x · y
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) mutating func mac(_ x: UInt64, _ y: UInt64) {
        let p = x.multipliedFullWidth(by: y)
        let (s0, o0) = c0.addingReportingOverflow(p.low)
        // p.high ≤ 2^64 − 2, so adding the carry cannot wrap.
        let (s1, o1) = c1.addingReportingOverflow(p.high &+ montgomeryCarryBit(o0))
        c0 = s0
        c1 = s1
        c2 &+= montgomeryCarryBit(o1)
    }
    /// self += 2 · o
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) mutating func addTwice(_ o: MontgomeryAccumulator) {
        let d0 = o.c0 << 1, d1 = (o.c1 << 1) | (o.c0 >> 63), d2 = (o.c2 << 1) | (o.c1 >> 63)
        let (s0, o0) = c0.addingReportingOverflow(d0)
        let (s1a, o1a) = c1.addingReportingOverflow(d1)
        let (s1, o1b) = s1a.addingReportingOverflow(montgomeryCarryBit(o0))
        c0 = s0
        c1 = s1
        c2 = c2 &+ d2 &+ montgomeryCarryBit(o1a) &+ montgomeryCarryBit(o1b)
    }
    /// Drops c0 (the finished column word).
    @usableFromInline @_alwaysEmitIntoClient @inline(__always) mutating func shift() {
        c0 = c1
        c1 = c2
        c2 = 0
    }
}

/// `r = a · a · R⁻¹ mod m` for n ≥ 4 limbs (product scanning; each off-diagonal product computed
/// once). `t` is scratch of n + 2 limbs. Callers send n < 4 to the multiplication.
@_alwaysEmitIntoClient @inline(__always)
public func montgomerySquareLoops(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                                  _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
    let q = t
    var acc = MontgomeryAccumulator()
    for i in 0..<(2 * n - 1) {
        // Off-diagonal a[j]·a[i−j], j < i − j, doubled; then the diagonal and the q·m terms.
        var off = MontgomeryAccumulator()
        let lo = i < n ? 0 : i - n + 1
        var j = lo
        while j < i - j { off.mac(a[j], a[i - j]); j += 1 }
        acc.addTwice(off)
        if i & 1 == 0 { acc.mac(a[i >> 1], a[i >> 1]) }
        if i < n {
            j = 0
            while j < i { acc.mac(q[j], m[i - j]); j += 1 }
            let qi = acc.c0 &* m0inv
            q[i] = qi
            acc.mac(qi, m[0])
        } else {
            j = i - n + 1
            while j < n { acc.mac(q[j], m[i - j]); j += 1 }
            q[i - n] = acc.c0  // q[i − n] is not read again
        }
        acc.shift()
    }
    // Column 2n − 1 holds only the carry.
    q[n - 1] = acc.c0
    montgomerySubtractIfAtLeast(r, q, acc.c1, m, n)
}

/// `r = a · b · R⁻¹ mod m`, fully reduced, for `a < R` and `b < m` (both n limbs): Montgomery
/// multiplication in product-scanning form (Koç et al.'s FIPS), with the column sums in a
/// three-register accumulator; the final subtraction is masked (constant time). `r` may alias
/// `a` or `b`. `t` is scratch of n + 2 limbs.
@_alwaysEmitIntoClient @inline(__always)
public func montgomeryMulLoops(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                               _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
    let q = t
    var acc = MontgomeryAccumulator()
    for i in 0..<n {
        var j = 0
        while j < i {
            acc.mac(a[j], b[i - j])
            acc.mac(q[j], m[i - j])
            j += 1
        }
        acc.mac(a[i], b[0])
        let qi = acc.c0 &* m0inv
        q[i] = qi
        acc.mac(qi, m[0])  // clears c0
        acc.shift()
    }
    for i in n..<(2 * n) {
        var j = i - n + 1
        while j < n {
            acc.mac(a[j], b[i - j])
            acc.mac(q[j], m[i - j])
            j += 1
        }
        q[i - n] = acc.c0  // q[i − n] is not read again
        acc.shift()
    }
    montgomerySubtractIfAtLeast(r, q, acc.c0, m, n)
}

/// `r = (top:t) − m` when that is non-negative, else `t`, chosen with a mask. `(top:t) < 2m`.
@_alwaysEmitIntoClient @inline(__always)
public func montgomerySubtractIfAtLeast(_ r: UnsafeMutablePointer<UInt64>, _ t: UnsafeMutablePointer<UInt64>, _ top: UInt64,
                                        _ m: UnsafePointer<UInt64>, _ n: Int) {
    var borrow: UInt64 = 0
    for j in 0..<n {
        // 128-bit difference: sub/sbb, no branch on the borrow.
        let d = UInt128(t[j]) &- UInt128(m[j]) &- UInt128(borrow)
        r[j] = UInt64(truncatingIfNeeded: d)
        borrow = UInt64(truncatingIfNeeded: d >> 64) & 1
    }
    // The subtraction went negative exactly when top < borrow (top, borrow ∈ {0, 1}). The mask
    // passes a value barrier so that the selection below stays a masked blend
    // (`ConstantTime.select(keepT, t[j], r[j])` written out: the kernel tiers cannot see it).
    let keepT = valueBarrier(0 &- ((~top & borrow) & 1))
    for j in 0..<n { r[j] = r[j] ^ (keepT & (t[j] ^ r[j])) }
}
