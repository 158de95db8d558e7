/// A generator that replays fixed bytes: the randomness a protocol step is known to draw (a
/// vector's nonce, padding, a captured init packet), so that the step's output comes out exactly.
///
/// Each chunk is read eight bytes per `next()`, little-endian (the order in which the codecs turn
/// `next()` into bytes); the last word of a chunk is zero-padded and a new chunk starts at a new
/// draw (an empty chunk costs one draw of 0), matching `MTProtoRandom.bytes`, which draws ⌈n/8⌉
/// words for n bytes. After the last chunk the generator continues with `fallback`, or returns 0
/// forever when there is none.
public struct ReplayRNG: RandomNumberGenerator, Sendable {
    /// The chunks not yet fully read.
    public private(set) var chunks: [[UInt8]]
    private var offset = 0
    private var fallback: SplitMix64?

    /// Replays `chunks` in order, each starting at a fresh draw, then `fallback` (or zeros).
    public init(chunks: [[UInt8]], then fallback: SplitMix64? = nil) {
        self.chunks = chunks
        self.fallback = fallback
    }

    /// Replays `bytes`, then `fallback` (or zeros).
    public init(_ bytes: [UInt8], then fallback: SplitMix64? = nil) {
        self.init(chunks: bytes.isEmpty ? [] : [bytes], then: fallback)
    }

    public mutating func next() -> UInt64 {
        guard !chunks.isEmpty else { return fallback?.next() ?? 0 }
        var w: UInt64 = 0
        for k in 0..<8 where offset + k < chunks[0].count {
            w |= UInt64(chunks[0][offset + k]) << (8 * UInt64(k))
        }
        offset += 8
        if offset >= chunks[0].count {
            chunks.removeFirst()
            offset = 0
        }
        return w
    }
}
