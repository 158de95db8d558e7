// The last step of an almost-Montgomery exponentiation, shared by the radix-2^28 kernel
// (RampartAccelAVX2/MontgomeryAVX2.swift) and the radix-2^52 kernel (RampartAccelIFMA): their results are below 2m
// and leave the kernel fully reduced through one masked subtraction.

import Swift
import RampartBarrier

/// `out = x mod m` for an (`limbs` + 1)-limb `x < 2m` and `limbs`-limb `m`: `x − m` with a borrow
/// chain, then a masked choice between `x` and `x − m`, constant time in both values. The mask passes
/// a value barrier: without it LLVM turned the blend into a branch (found by the ctgrind check with a
/// secret base, as in RSA's fault check).
@inlinable @inline(__always)
public func reduceBelowTwoModuli(_ out: UnsafeMutablePointer<UInt64>, _ x: UnsafePointer<UInt64>,
                                 _ m: UnsafePointer<UInt64>, limbs: Int) {
    var borrow: UInt64 = 0
    for j in 0..<limbs {
        let d = UInt128(x[j]) &- UInt128(m[j]) &- UInt128(borrow)
        out[j] = UInt64(truncatingIfNeeded: d)
        borrow = UInt64(truncatingIfNeeded: d >> 64) & 1
    }
    // x − m < 0 exactly when the top word cannot absorb the borrow.
    let keepX = valueBarrier(0 &- ((~x[limbs] & borrow) & 1))
    for j in 0..<limbs { out[j] = (keepX & x[j]) | (~keepX & out[j]) }
}
