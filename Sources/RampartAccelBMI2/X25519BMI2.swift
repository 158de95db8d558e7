// X25519 (RFC 7748 §5) compiled with BMI2 and ADX: GF(2^255 − 19) in radix 2^64 (four 64-bit limbs),
// the way OpenSSL's x25519-x86_64 and the amd64-64 code of SUPERCOP represent it. A value is any
// v0 + v1·2^64 + v2·2^128 + v3·2^192 below 2^256 (not necessarily below p); every operation returns a
// value below 2^256 congruent to the exact result. Products are 4×4 schoolbook rows of `mulx` with
// add-with-carry chains into eight words; the high half folds back times 38 (2^256 ≡ 38 mod p).
//
// The whole scalar multiplication (ladder, inversion, final reduction) is one entry point, so every
// field operation is inlined into code compiled with `+bmi2,+adx` (see Docs/Architecture.md §2.2).
// Constant time: the ladder's conditional swap is a mask (through `valueBarrier`, so that LLVM cannot
// turn it back into a branch), carries become words by arithmetic, and nothing indexes memory by a
// secret. Rampart's portable radix-2^51 code (Sources/Rampart/Curve25519) is the reference the tests
// compare this kernel with.

import Swift
import RampartBarrier
import RampartKernelSupport

#if arch(x86_64)

/// X25519 for processors with BMI2 and ADX (callers check `CPU.features`).
public enum X25519BMI2 {}

/// 38 after a carry (or borrow), else 0: `sbb r, r` then `and`, no `setb`/`imul`.
@inline(__always) private func times38(_ c: CarryFlag) -> UInt64 {
    let (_, m) = subtractWithBorrow(c, 0, 0)
    return m & 38
}

/// An element of GF(2^255 − 19): four little-endian 64-bit limbs, value below 2^256.
///
/// Bounds: the products, squares and `timesA24()` return "reduced" values, below 2^255 + 2^24 (their
/// last fold is at bit 255, 2^255 ≡ 19). `+` takes two reduced values and `−` a reduced subtrahend;
/// that is what lets each of them fold its carry or borrow once, without a second pass. Every sum
/// and difference of the ladder feeds only products and squares (which take anything below 2^256),
/// and the ladder state is always a product or a square (or 0, 1, and u below 2^255).
private struct Fe {
    var v0, v1, v2, v3: UInt64

    @inline(__always) init(_ v0: UInt64, _ v1: UInt64, _ v2: UInt64, _ v3: UInt64) {
        self.v0 = v0; self.v1 = v1; self.v2 = v2; self.v3 = v3
    }

    /// `a + b` for reduced `a`, `b`: a carry out of 2^256 leaves a sum below 2^25 in limb 0 alone,
    /// so the 38 it stands for (2^256 ≡ 38) is added there without carrying. Below 2^256.
    @inline(__always) static func + (a: Fe, b: Fe) -> Fe {
        let (c, r0) = addWithCarry(noCarry, a.v0, b.v0)
        let (c1, r1) = addWithCarry(c, a.v1, b.v1)
        let (c2, r2) = addWithCarry(c1, a.v2, b.v2)
        let (c3, r3) = addWithCarry(c2, a.v3, b.v3)
        return Fe(r0 &+ times38(c3), r1, r2, r3)
    }

    /// `a − b` for `a` below 2^256 and reduced `b`: on a borrow subtract 38 (2^256 ≡ 38) from a
    /// value of at least 2^256 − b > 2^254, which cannot borrow again. Below 2^256.
    @inline(__always) static func - (a: Fe, b: Fe) -> Fe {
        var (c, r0) = subtractWithBorrow(noCarry, a.v0, b.v0)
        var (c1, r1) = subtractWithBorrow(c, a.v1, b.v1)
        var (c2, r2) = subtractWithBorrow(c1, a.v2, b.v2)
        var (c3, r3) = subtractWithBorrow(c2, a.v3, b.v3)
        (c, r0) = subtractWithBorrow(noCarry, r0, times38(c3))
        (c1, r1) = subtractWithBorrow(c, r1, 0)
        (c2, r2) = subtractWithBorrow(c1, r2, 0)
        (_, r3) = subtractWithBorrow(c2, r3, 0)
        return Fe(r0, r1, r2, r3)
    }

    /// Reduces r0 + r1·2^64 + r2·2^128 + r3·2^192 + top·2^256 (top below 2^20) to a reduced value:
    /// bits 255 and up, h = 2·top + bit 255, come back as 19·h (2^255 ≡ 19) into the low 255 bits,
    /// which gives less than 2^255 + 2^24 and cannot carry out.
    @inline(__always) static func fold(_ r0: UInt64, _ r1: UInt64, _ r2: UInt64, _ r3: UInt64, _ top: UInt64) -> Fe {
        let h = (top &<< 1) | (r3 >> 63)
        let (c, s0) = addWithCarry(noCarry, r0, h &* 19)
        let (c1, s1) = addWithCarry(c, r1, 0)
        let (c2, s2) = addWithCarry(c1, r2, 0)
        let (_, s3) = addWithCarry(c2, r3 & ((1 << 63) - 1), 0)
        return Fe(s0, s1, s2, s3)
    }

    /// Reduces the eight-word product t0…t7: t0…t3 + 38·(t4…t7) (a fifth word below 39), then `fold`.
    @inline(__always) static func reduce(_ t0: UInt64, _ t1: UInt64, _ t2: UInt64, _ t3: UInt64,
                                         _ t4: UInt64, _ t5: UInt64, _ t6: UInt64, _ t7: UInt64) -> Fe {
        let q0 = t4.multipliedFullWidth(by: 38), q1 = t5.multipliedFullWidth(by: 38)
        let q2 = t6.multipliedFullWidth(by: 38), q3 = t7.multipliedFullWidth(by: 38)
        let (c, r0) = addWithCarry(noCarry, t0, q0.low)
        var (c1, r1) = addWithCarry(c, t1, q1.low)
        var (c2, r2) = addWithCarry(c1, t2, q2.low)
        var (c3, r3) = addWithCarry(c2, t3, q3.low)
        var top = addWithCarry(c3, q3.high, 0).1
        (c1, r1) = addWithCarry(noCarry, r1, q0.high)
        (c2, r2) = addWithCarry(c1, r2, q1.high)
        (c3, r3) = addWithCarry(c2, r3, q2.high)
        top = addWithCarry(c3, top, 0).1
        return fold(r0, r1, r2, r3, top)
    }

    /// x · (b0…b3) as five words.
    @inline(__always) static func row(_ x: UInt64, _ b: Fe) -> (UInt64, UInt64, UInt64, UInt64, UInt64) {
        let p0 = x.multipliedFullWidth(by: b.v0), p1 = x.multipliedFullWidth(by: b.v1)
        let p2 = x.multipliedFullWidth(by: b.v2), p3 = x.multipliedFullWidth(by: b.v3)
        let (c1, r1) = addWithCarry(noCarry, p0.high, p1.low)
        let (c2, r2) = addWithCarry(c1, p1.high, p2.low)
        let (c3, r3) = addWithCarry(c2, p2.high, p3.low)
        return (p0.low, r1, r2, r3, addWithCarry(c3, p3.high, 0).1)
    }

    /// `a · b`: four rows of four `mulx`, each row added into the running sum with one carry chain.
    @inline(__always) static func * (a: Fe, b: Fe) -> Fe {
        let (t0, r1, r2, r3, r4) = row(a.v0, b)
        var t1 = r1, t2 = r2, t3 = r3, t4 = r4
        var c = noCarry
        // Row 1 at word 1.
        var (u0, u1, u2, u3, u4) = row(a.v1, b)
        (c, t1) = addWithCarry(noCarry, t1, u0)
        (c, t2) = addWithCarry(c, t2, u1)
        (c, t3) = addWithCarry(c, t3, u2)
        (c, t4) = addWithCarry(c, t4, u3)
        var t5 = addWithCarry(c, u4, 0).1
        // Row 2 at word 2.
        (u0, u1, u2, u3, u4) = row(a.v2, b)
        (c, t2) = addWithCarry(noCarry, t2, u0)
        (c, t3) = addWithCarry(c, t3, u1)
        (c, t4) = addWithCarry(c, t4, u2)
        (c, t5) = addWithCarry(c, t5, u3)
        var t6 = addWithCarry(c, u4, 0).1
        // Row 3 at word 3.
        (u0, u1, u2, u3, u4) = row(a.v3, b)
        (c, t3) = addWithCarry(noCarry, t3, u0)
        (c, t4) = addWithCarry(c, t4, u1)
        (c, t5) = addWithCarry(c, t5, u2)
        (c, t6) = addWithCarry(c, t6, u3)
        let t7 = addWithCarry(c, u4, 0).1
        return reduce(t0, t1, t2, t3, t4, t5, t6, t7)
    }

    /// `a²`: the six products a_i·a_j (i < j) once, doubled, plus the four squares (10 `mulx`).
    @inline(__always) func squared() -> Fe {
        let p01 = v0.multipliedFullWidth(by: v1), p02 = v0.multipliedFullWidth(by: v2)
        let p03 = v0.multipliedFullWidth(by: v3), p12 = v1.multipliedFullWidth(by: v2)
        let p13 = v1.multipliedFullWidth(by: v3), p23 = v2.multipliedFullWidth(by: v3)
        // v0 · (v1, v2, v3) at word 1.
        var t1 = p01.low
        var (c, t2) = addWithCarry(noCarry, p01.high, p02.low)
        var t3: UInt64, t4: UInt64, t5: UInt64, t6: UInt64
        (c, t3) = addWithCarry(c, p02.high, p03.low)
        t4 = addWithCarry(c, p03.high, 0).1
        // v1 · (v2, v3) at word 3.
        var (k, u1) = addWithCarry(noCarry, p12.high, p13.low)
        let u2 = addWithCarry(k, p13.high, 0).1
        (c, t3) = addWithCarry(noCarry, t3, p12.low)
        (c, t4) = addWithCarry(c, t4, u1)
        t5 = addWithCarry(c, u2, 0).1
        // v2 · v3 at word 5.
        (c, t5) = addWithCarry(noCarry, t5, p23.low)
        t6 = addWithCarry(c, p23.high, 0).1
        // Double.
        (c, t1) = addWithCarry(noCarry, t1, t1)
        (c, t2) = addWithCarry(c, t2, t2)
        (c, t3) = addWithCarry(c, t3, t3)
        (c, t4) = addWithCarry(c, t4, t4)
        (c, t5) = addWithCarry(c, t5, t5)
        (c, t6) = addWithCarry(c, t6, t6)
        var t7 = addWithCarry(c, 0, 0).1
        // The squares on the diagonal.
        let s0 = v0.multipliedFullWidth(by: v0), s1 = v1.multipliedFullWidth(by: v1)
        let s2 = v2.multipliedFullWidth(by: v2), s3 = v3.multipliedFullWidth(by: v3)
        (c, t1) = addWithCarry(noCarry, t1, s0.high)
        (c, t2) = addWithCarry(c, t2, s1.low)
        (c, t3) = addWithCarry(c, t3, s1.high)
        (c, t4) = addWithCarry(c, t4, s2.low)
        (c, t5) = addWithCarry(c, t5, s2.high)
        (c, t6) = addWithCarry(c, t6, s3.low)
        (k, t7) = addWithCarry(c, t7, s3.high)
        return Fe.reduce(s0.low, t1, t2, t3, t4, t5, t6, t7)
    }

    /// `self` squared `n` times (n ≥ 1).
    @inline(__always) func squared(times n: Int) -> Fe {
        var r = squared()
        var i = 1
        while i < n { r = r.squared(); i &+= 1 }
        return r
    }

    /// `self · 121665` (the ladder's (A − 2)/4).
    @inline(__always) func timesA24() -> Fe {
        let (r0, r1, r2, r3, r4) = Fe.row(121_665, self)
        return Fe.fold(r0, r1, r2, r3, r4)
    }

    /// `self^(p − 2)`, the inverse (zero maps to zero): 254 squarings and 11 multiplications.
    func inverted() -> Fe {
        invertedByFermat()  // the shared chain (RampartKernelSupport/Curve25519Inversion.swift)
    }

    /// The unique representative below p, as 32 little-endian bytes.
    func store(_ out: UnsafeMutableRawPointer) {
        let low63: UInt64 = (1 << 63) - 1
        // Fold bit 255 (2^255 ≡ 19): now below 2^255 + 19.
        var (c, r0) = addWithCarry(noCarry, v0, 19 &* (v3 >> 63))
        var (c1, r1) = addWithCarry(c, v1, 0)
        var (c2, r2) = addWithCarry(c1, v2, 0)
        var (_, r3) = addWithCarry(c2, v3 & low63, 0)
        // Subtract p when the value is at least p: bit 255 of value + 19 says so, then keep
        // value + 19 − 2^255.
        (c, _) = addWithCarry(noCarry, r0, 19)
        (c1, _) = addWithCarry(c, r1, 0)
        (c2, _) = addWithCarry(c1, r2, 0)
        let (_, top) = addWithCarry(c2, r3, 0)
        let q = top >> 63
        (c, r0) = addWithCarry(noCarry, r0, 19 &* q)
        (c1, r1) = addWithCarry(c, r1, 0)
        (c2, r2) = addWithCarry(c1, r2, 0)
        (_, r3) = addWithCarry(c2, r3, 0)
        r3 &= low63
        out.storeBytes(of: r0.littleEndian, toByteOffset: 0, as: UInt64.self)
        out.storeBytes(of: r1.littleEndian, toByteOffset: 8, as: UInt64.self)
        out.storeBytes(of: r2.littleEndian, toByteOffset: 16, as: UInt64.self)
        out.storeBytes(of: r3.littleEndian, toByteOffset: 24, as: UInt64.self)
    }

    /// Swaps `a` and `b` when `mask` is all ones, leaves them when it is 0, with the same instructions.
    @inline(__always) static func conditionalSwap(_ a: inout Fe, _ b: inout Fe, _ mask: UInt64) {
        var t = mask & (a.v0 ^ b.v0); a.v0 ^= t; b.v0 ^= t
        t = mask & (a.v1 ^ b.v1); a.v1 ^= t; b.v1 ^= t
        t = mask & (a.v2 ^ b.v2); a.v2 ^= t; b.v2 ^= t
        t = mask & (a.v3 ^ b.v3); a.v3 ^= t; b.v3 ^= t
    }
}

/// Zeroes a value's memory through volatile stores the optimizer keeps.
@inline(__always) private func wipe(_ x: inout Fe) {
    withUnsafeMutablePointer(to: &x) { p in
        p.withMemoryRebound(to: UInt64.self, capacity: 4) { w in
            for i in 0..<4 { Builtin.atomicstore_monotonic_volatile_Int64(UnsafeMutableRawPointer(w + i)._rawValue, UInt64(0)._value) }
        }
    }
}

extension X25519BMI2 {
    /// X25519(k, u) into `out` (32 bytes): `k0…k3` are the scalar's words, already clamped
    /// (RFC 7748 §5, decodeScalar25519); `point` is the 32-byte u-coordinate (its top bit is ignored,
    /// values from p up are reduced), or nil for the base point 9. Constant time in the scalar and the
    /// point.
    @inline(never)
    public static func scalarMultiply(_ out: UnsafeMutableRawPointer, _ k0: UInt64, _ k1: UInt64, _ k2: UInt64,
                                      _ k3: UInt64, _ point: UnsafeRawPointer?) {
        let x1: Fe
        if let p = point {
            x1 = Fe(UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                    UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                    UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
                    UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)) & ((1 << 63) - 1))
        } else {
            x1 = Fe(9, 0, 0, 0)
        }
        var x2 = Fe(1, 0, 0, 0), z2 = Fe(0, 0, 0, 0)
        var x3 = x1, z3 = Fe(1, 0, 0, 0)
        var swap: UInt64 = 0

        // Bits 254 down to 0 (bit 255 is clear after clamping).
        var i = 254
        while i >= 0 {
            let word = i < 64 ? k0 : i < 128 ? k1 : i < 192 ? k2 : k3   // i is public
            let bit = (word >> UInt64(i & 63)) & 1
            let mask = valueBarrier(0 &- (swap ^ bit))
            Fe.conditionalSwap(&x2, &x3, mask)
            Fe.conditionalSwap(&z2, &z3, mask)
            swap = bit

            // x2, z2, x3, z3 die early; then the two chains of three products (z3, z2) start before
            // the two of two (x3, x2): the step is bound by latency more than by throughput.
            let a = x2 + z2
            let b = x2 - z2
            let c = x3 + z3
            let d = x3 - z3
            let da = d * a
            let cb = c * b
            let aa = a.squared()
            let bb = b.squared()
            let t = (da - cb).squared()
            let e = aa - bb
            let f = aa + e.timesA24()
            z3 = t * x1
            x3 = (da + cb).squared()
            z2 = e * f
            x2 = aa * bb
            i &-= 1
        }
        let mask = valueBarrier(0 &- swap)
        Fe.conditionalSwap(&x2, &x3, mask)
        Fe.conditionalSwap(&z2, &z3, mask)

        (x2 * z2.inverted()).store(out)
        wipe(&x2); wipe(&z2); wipe(&x3); wipe(&z3)
    }
}

/// X25519 in radix 2^64 with `mulx`, `adcx` and `adox`.
public enum X25519MULX: X25519Implementation {
    public static let name = "bmi2+adx"
    public static let requires: KernelFeatures = [.bmi2, .adx]
    @inline(__always)
    public static func scalarMultiply(_ out: UnsafeMutableRawPointer, _ k0: UInt64, _ k1: UInt64, _ k2: UInt64, _ k3: UInt64,
                                      _ point: UnsafeRawPointer?) {
        X25519BMI2.scalarMultiply(out, k0, k1, k2, k3, point)
    }
}

extension Fe: Curve25519Field {}

#endif
