// The window digits of a fixed-window (constant-time) exponentiation, shared by the 64-bit Montgomery
// code (Rampart's `Modulus.powerCT`) and the IFMA kernel (RampartAccelIFMA).

import Swift

/// `w` bits of the exponent at `exp` starting at bit `pos`. Positions are public; the bits are not,
/// and nothing branches on them. The window may straddle two limbs; callers keep `pos + w` within the
/// exponent's limbs.
@inlinable @inline(__always)
public func exponentWindow(_ exp: UnsafePointer<UInt64>, _ pos: Int, _ w: Int) -> Int {
    let li = pos >> 6, sh = UInt64(pos & 63)
    var v = exp[li] >> sh
    if sh != 0, Int(sh) + w > 64, (pos + w - 1) >> 6 > li { v |= exp[li + 1] << (64 - sh) }
    return Int(truncatingIfNeeded: v & ((1 << UInt64(w)) - 1))
}
