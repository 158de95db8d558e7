// The sliding-window schedule of a public-exponent power, shared by the portable/BMI2 Montgomery code
// (Rampart) and the AVX2 radix-2^28 kernel (RampartAccelAVX2/MontgomeryAVX2.swift). Variable time in the exponent by
// design: public exponents only (RSA encryption, Miller-Rabin on public candidates, DH checks).

import Swift

/// The window width for a `bits`-bit exponent: it minimises table multiplications (2^(w−1)) plus
/// window multiplications (≈ bits / (w + 1)); 6 from ~700 bits, as OpenSSL's
/// BN_window_bits_for_exponent_size (2047 bits: 324 multiplications instead of 357 with 5).
@inlinable @inline(__always)
public func slidingWindowWidth(bits: Int) -> Int { bits > 768 ? 6 : bits > 256 ? 5 : bits > 32 ? 4 : 1 }

/// Walks the exponent at `exp` (`bits` significant bits, bit `bits − 1` set) from the top in windows
/// of at most `width` bits that start and end with a one. The first window calls `start(k)`; after
/// that, each zero bit outside a window calls `square()`, and each window of length L calls `square()`
/// L times then `multiply(k)`, where k is the index of the odd power x^(2k+1) in the caller's table.
@inlinable @inline(__always)
public func slidingWindowScan(_ exp: UnsafePointer<UInt64>, bits: Int, width: Int,
                              start: (Int) -> Void, square: () -> Void, multiply: (Int) -> Void) {
    func bit(_ i: Int) -> Bool { (exp[i >> 6] >> UInt64(i & 63)) & 1 == 1 }
    var i = bits - 1
    var started = false
    while i >= 0 {
        if !bit(i) {
            square()  // started is true here: the top bit is one
            i -= 1
            continue
        }
        var l = Swift.max(i - width + 1, 0)
        while !bit(l) { l += 1 }
        var v = 0
        for k in stride(from: i, through: l, by: -1) { v = v << 1 | (bit(k) ? 1 : 0) }
        if started {
            for _ in 0...(i - l) { square() }
            multiply(v >> 1)
        } else {
            start(v >> 1)
            started = true
        }
        i = l - 1
    }
}
