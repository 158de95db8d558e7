// How many padding bytes an outgoing encrypted message gets (Docs/MTProto.md §1.1).

/// Chooses the padding length `P` of an outgoing encrypted message (Docs/MTProto.md §1.1).
///
/// Every policy yields `12 ≤ P ≤ 1024` with `(32 + L + P) % 16 == 0`, where `L` is the body length.
/// The padding *bytes* are always random (drawn from the caller's generator after the length).
public enum PaddingPolicy: Sendable, Hashable {
    /// The smallest valid padding: 12 to 27 bytes (no length randomization).
    case minimal
    /// The smallest valid padding plus `16·r` extra bytes with `r` uniform in `0...maxExtraBlocks`
    /// (capped so that `P ≤ 1024`). gotd uses 15 extra blocks; tdlib with `use_random_padding`
    /// about 16.
    case random(maxExtraBlocks: Int)
    /// tdlib's buckets: round `32 + L + 12` up to a multiple of 16, then up to the first of
    /// 64, 128, 192, 256, 384, 512, 768, 1024, 1280; above 1280, up to 1280 + a multiple of 448.
    /// Hides the body length within a bucket.
    case buckets

    /// Random padding with gotd's range (up to 15 extra blocks).
    public static let random = PaddingPolicy.random(maxExtraBlocks: 15)

    static let bucketSizes = [64, 128, 192, 256, 384, 512, 768, 1024, 1280]

    /// The padding length for a body of `bodyLength` bytes (non-negative, a multiple of 4).
    /// `.random` draws one value from `rng`; the others draw nothing.
    public func paddingLength<R: RandomNumberGenerator>(bodyLength: Int, using rng: inout R) -> Int {
        let base = 32 + bodyLength
        let minimal = 12 + (16 - (base + 12) % 16) % 16  // 12...27
        switch self {
        case .minimal:
            return minimal
        case .random(let maxExtra):
            let cap = min(max(maxExtra, 0), (1024 - minimal) / 16)
            guard cap > 0 else { return minimal }
            return minimal + 16 * Int(rng.next(upperBound: UInt64(cap + 1)))
        case .buckets:
            let rounded = base + minimal
            var total = rounded
            if let b = PaddingPolicy.bucketSizes.first(where: { $0 >= rounded }) {
                total = b
            } else {
                total = 1280 + (rounded - 1280 + 447) / 448 * 448
            }
            return total - base
        }
    }
}
