// The one seeded generator of the tests, fuzz targets, ctgrind cases and benchmarks.
//
// Not part of any library product: test-side code only.

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
/// a small deterministic generator, so that every run draws the same inputs and a failure reproduces.
///
/// Seed convention: the seed *is* the initial state (`SplitMix64(seed: s).state == s`), and each
/// test, case or fixture picks its own fixed literal seed (or one derived from its parameters, such
/// as `seed + UInt64(size)`), so tests do not share a stream and adding a draw to one test never
/// moves another test's inputs. The sequence is exactly the reference SplitMix64 and must never
/// change: known-answer expectations (moduli prefixes, packet hex, fuzz fixtures) were recorded
/// from it.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The current state; the seed before the first draw.
    public var state: UInt64

    /// A generator whose initial state is `seed`.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` bytes, one draw per byte (`randomBytes(count:using:)`).
    public mutating func bytes(_ count: Int) -> [UInt8] { randomBytes(count: count, using: &self) }
}

/// `count` bytes from `generator`, one draw per byte (the low byte of each `next()`).
///
/// The same bytes, draw for draw, as `(0..<count).map { _ in UInt8.random(in: 0...255, using: &g) }`
/// and as `UInt8(truncatingIfNeeded: g.next())` per byte, the two forms the tests used before.
public func randomBytes<G: RandomNumberGenerator>(count: Int, using generator: inout G) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(max(0, count))
    for _ in 0..<max(0, count) { out.append(UInt8(truncatingIfNeeded: generator.next())) }
    return out
}
