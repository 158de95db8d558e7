// Inversion in GF(2^255 − 19) by Fermat's little theorem, `z^(p − 2)`, with the usual addition chain
// (ref10's: 254 squarings and 11 multiplications, the same for every value): the one copy of the chain,
// which each X25519 implementation runs on its own field representation (radix 2^51 in Rampart's
// Field25519 and RampartAccelBMI2's, eight lanes of radix 2^25.5 in X25519Lanes8.swift).
// `@_alwaysEmitIntoClient @inline(__always)`, generic over the representation: each caller specializes
// and inlines it with its own multiplication and squaring, compiled with its own features.

import Swift

/// A representation of GF(2^255 − 19) (or of several elements at once, lane by lane) that the shared
/// inversion chain runs on. The operations must be constant time; the chain is.
public protocol Curve25519Field {
    /// The product of two elements.
    static func * (a: Self, b: Self) -> Self
    /// The square of this element.
    func squared() -> Self
    /// This element squared `n ≥ 1` times in a row.
    func squared(times n: Int) -> Self
}

extension Curve25519Field {
    /// `self^(p − 2)`, the inverse (zero maps to zero): 254 squarings and 11 multiplications,
    /// independent of the value.
    @_alwaysEmitIntoClient @inline(__always)
    public func invertedByFermat() -> Self {
        let z2 = squared()                      // 2
        let z9 = z2.squared(times: 2) * self    // 9
        let z11 = z9 * z2                       // 11
        let z2_5_0 = z11.squared() * z9         // 2^5 − 1
        let z2_10_0 = z2_5_0.squared(times: 5) * z2_5_0
        let z2_20_0 = z2_10_0.squared(times: 10) * z2_10_0
        let z2_40_0 = z2_20_0.squared(times: 20) * z2_20_0
        let z2_50_0 = z2_40_0.squared(times: 10) * z2_10_0
        let z2_100_0 = z2_50_0.squared(times: 50) * z2_50_0
        let z2_200_0 = z2_100_0.squared(times: 100) * z2_100_0
        let z2_250_0 = z2_200_0.squared(times: 50) * z2_50_0
        return z2_250_0.squared(times: 5) * z11 // 2^255 − 21 = p − 2
    }
}
