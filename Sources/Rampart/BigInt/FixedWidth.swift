// Fixed-width limb arithmetic for secrets whose width is public and whose value is not: the numbers
// of an RSA private key as they are loaded (Go's bigmod has the same shape: "values whose limb count
// may leak but whose contents never do"). Every loop runs a count fixed by the lengths, every memory
// address follows from the lengths, and every selection is a mask: no branch or address depends on
// a limb's value. `BigUInt` (variable time, normalised) is kept for public numbers.

internal import RampartBarrier

extension LimbMath {
    /// The big-endian bytes `raw` as `⌈raw.count / 8⌉` little-endian limbs, every byte at its fixed
    /// position: leading zero bytes are kept (as zero bytes and zero limbs), so the width follows
    /// from the length alone. `BigUInt(bigEndian:)` skips them instead (a branch on each).
    static func limbs(bigEndianFixed raw: UnsafeRawBufferPointer) -> [UInt64] {
        let n = raw.count, k = (n + 7) / 8
        var l = [UInt64](repeating: 0, count: k)
        l.withUnsafeMutableBufferPointer { out in
            var hi = n   // limb i holds bytes max(hi − 8, 0)..<hi
            for i in 0..<k {
                if hi >= 8 {
                    out[i] = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: hi - 8, as: UInt64.self))
                } else {
                    var v: UInt64 = 0
                    for j in 0..<hi { v = v << 8 | UInt64(raw[j]) }
                    out[i] = v
                }
                hi -= 8
            }
        }
        return l
    }

    /// Writes `x` cut or zero-extended to exactly `count` limbs into `r`; returns a mask that is all
    /// ones when a limb beyond `count` was not zero (the value did not fit: the caller folds it into
    /// its verdict).
    static func fit(_ x: [UInt64], into r: UnsafeMutablePointer<UInt64>, _ count: Int) -> UInt64 {
        r.update(repeating: 0, count: count)
        var high: UInt64 = 0
        for i in 0..<x.count {
            if i < count { r[i] = x[i] } else { high |= x[i] }   // i and count are public
        }
        return ~ConstantTime.isZeroMask(high)
    }

    /// All ones when the `n`-limb values are equal, else zero.
    static func equalMask(_ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>, _ n: Int) -> UInt64 {
        var d: UInt64 = 0
        for i in 0..<n { d |= a[i] ^ b[i] }
        return ConstantTime.isZeroMask(d)
    }

    /// All ones when the `n`-limb value `a` is below `b`, else zero (the borrow of `a − b`).
    static func lessMask(_ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>, _ n: Int) -> UInt64 {
        var borrow: UInt64 = 0
        for i in 0..<n {
            let d = UInt128(a[i]) &- UInt128(b[i]) &- UInt128(borrow)
            borrow = UInt64(truncatingIfNeeded: d >> 64) & 1
        }
        return 0 &- borrow
    }

    /// All ones when the `n`-limb value is one, else zero.
    static func isOneMask(_ a: UnsafePointer<UInt64>, _ n: Int) -> UInt64 {
        var d = a[0] ^ 1
        for i in 1..<n { d |= a[i] }
        return ConstantTime.isZeroMask(d)
    }

    /// `r = x mod m` for an `xn`-limb `x` and a `k`-limb `m` of any parity (an RSA `p − 1`) whose
    /// top limb is not zero, in time that depends on `xn` and `k` only. `r` is `k` limbs, `v`
    /// `k + 1` limbs of scratch.
    ///
    /// Schoolbook division one word at a time (Knuth's algorithm D) with every data-dependent step
    /// replaced by a fixed one:
    ///
    /// - The top `k − 1` limbs of `x` are below 2^(64(k−1)) ≤ m: they are the remainder so far as
    ///   they stand. Each further word enters as `V = r·2^64 + word` (k + 1 limbs, `V < 2^64·m`).
    /// - The quotient digit is estimated from the top three words of V, `V_top = ⌊V / B⌋` with
    ///   B = 2^(64(k−2)), divided by `D = ⌊m / B⌋ + 1` (129 bits at most) by
    ///   ``quotientDigit(_:_:_:divisorHigh:divisorLow:)``: a restoring division, one masked subtraction
    ///   per quotient bit, 64 of them, instead of a hardware divide whose timing depends on its
    ///   operands. No normalisation is needed (and so no shift by a secret count).
    /// - Bounds: `q̂·m < q̂·D·B ≤ V_top·B ≤ V`, so `q̂ ≤ q`; and `q < (V_top + 1)/(D − 1)` with
    ///   `D − 1 = ⌊m / B⌋ ≥ 2^64` and `V_top < 2^64·D` give `q − q̂ < 2 + 2^−64`: after `V −= q̂·m`,
    ///   `0 ≤ V < 3m`, and two masked conditional subtractions of m finish the step.
    /// - For k = 1 the divisor is m itself (B = 1 and `D = m`: the digit is exact).
    ///
    /// An RSA-2048 `d mod (p − 1)` takes 17 such words. The bit-serial reduction of Go bigmod's
    /// `shiftIn`, tried first, made loading an RSA-2048 key about three times slower (some 250 µs
    /// against 80 µs for the variable-time checks); with this one loading costs about 10–30 % more.
    static func reduceCT(_ r: UnsafeMutablePointer<UInt64>, _ x: UnsafePointer<UInt64>, _ xn: Int,
                         modulo m: UnsafePointer<UInt64>, _ k: Int, scratch v: UnsafeMutablePointer<UInt64>) {
        let preload = min(xn, k - 1)
        r.update(repeating: 0, count: k)
        r.update(from: x + (xn - preload), count: preload)
        // D = ⌊m / B⌋ + 1 as (high bit, low 128 bits); m itself for k = 1.
        let dHigh: UInt64, dLow: UInt128
        if k == 1 {
            dHigh = 0
            dLow = UInt128(m[0])
        } else {
            let (sum, overflow) = (UInt128(m[k - 1]) << 64 | UInt128(m[k - 2])).addingReportingOverflow(1)
            dHigh = ctBit(overflow)
            dLow = sum
        }
        var i = xn - preload - 1
        while i >= 0 {
            // V = r·2^64 + x[i].
            v[0] = x[i]
            (v + 1).update(from: r, count: k)
            let q = k == 1 ? quotientDigit(0, v[1], v[0], divisorHigh: dHigh, divisorLow: dLow)
                           : quotientDigit(v[k], v[k - 1], v[k - 2], divisorHigh: dHigh, divisorLow: dLow)
            // V −= q·m (V stays non-negative: q ≤ the true digit).
            var carry: UInt64 = 0, borrow: UInt64 = 0
            for j in 0..<k {
                let p = q.multipliedFullWidth(by: m[j])
                let low = UInt128(p.low) &+ UInt128(carry)
                carry = p.high &+ UInt64(truncatingIfNeeded: low >> 64)
                let d = UInt128(v[j]) &- UInt128(UInt64(truncatingIfNeeded: low)) &- UInt128(borrow)
                v[j] = UInt64(truncatingIfNeeded: d)
                borrow = UInt64(truncatingIfNeeded: d >> 64) & 1
            }
            v[k] = v[k] &- carry &- borrow
            // V < 3m: subtract m twice where it fits (r is scratch here).
            subtractIfAtLeast(v, m, k, scratch: r)
            subtractIfAtLeast(v, m, k, scratch: r)
            r.update(from: v, count: k)   // v[k] is zero now: V < m
            i -= 1
        }
    }

    /// `⌊N / D⌋` for the 192-bit `N = (n2, n1, n0)` and `D = divisorHigh·2^128 + divisorLow` (at most
    /// 129 bits), given `⌊N / 2^64⌋ < D` (so the quotient fits in 64 bits): restoring division with
    /// the 64 bits of `n0` entering one at a time, each comparison and subtraction done always and
    /// its result selected with a mask through a value barrier. The partial remainder stays below D
    /// before each step, so twice it plus a bit is below 2D and one subtraction suffices.
    @inline(__always)
    static func quotientDigit(_ n2: UInt64, _ n1: UInt64, _ n0: UInt64, divisorHigh: UInt64, divisorLow: UInt128) -> UInt64 {
        var rem = UInt128(n2) << 64 | UInt128(n1)
        var q: UInt64 = 0
        var b = 63
        while b >= 0 {
            let top = UInt64(truncatingIfNeeded: rem >> 127)
            rem = rem << 1 | UInt128((n0 >> UInt64(b)) & 1)
            let (diff, borrow) = rem.subtractingReportingOverflow(divisorLow)
            // (top, rem) ≥ D exactly when top − divisorHigh − borrow is not negative (it is in −2…1).
            let geq = valueBarrier(~UInt64(bitPattern: Int64(bitPattern: top &- divisorHigh &- ctBit(borrow)) >> 63))
            let mask = UInt128(geq) << 64 | UInt128(geq)
            rem = rem ^ (mask & (diff ^ rem))
            q = q << 1 | (geq & 1)
            b -= 1
        }
        return q
    }

    /// `v = v − m` when `v ≥ m`, for a `k + 1`-limb `v` and a `k`-limb `m`: the subtraction always
    /// runs (into `t`, `k` limbs, and one top word) and the result is selected with a mask.
    @inline(__always)
    static func subtractIfAtLeast(_ v: UnsafeMutablePointer<UInt64>, _ m: UnsafePointer<UInt64>, _ k: Int,
                                  scratch t: UnsafeMutablePointer<UInt64>) {
        var borrow: UInt64 = 0
        for j in 0..<k {
            let d = UInt128(v[j]) &- UInt128(m[j]) &- UInt128(borrow)
            t[j] = UInt64(truncatingIfNeeded: d)
            borrow = UInt64(truncatingIfNeeded: d >> 64) & 1
        }
        let (top, under) = v[k].subtractingReportingOverflow(borrow)
        let take = valueBarrier(0 &- (ctBit(under) ^ 1))   // all ones when v ≥ m
        for j in 0..<k { v[j] = v[j] ^ (take & (t[j] ^ v[j])) }
        v[k] = v[k] ^ (take & (top ^ v[k]))
    }
}
