// Buffering and padding shared by SHA-1, SHA-256 and SHA-512 (Merkle-Damgard construction).

/// A compression function with its state layout: what `MDEngine` needs to hash a message.
@usableFromInline
protocol MDCompressor {
    /// The chaining value (for example eight `UInt32` words).
    associatedtype Words: Sendable
    /// Raw storage for one block (64 or 128 bytes).
    associatedtype Block: Sendable
    /// Block size in bytes.
    static var blockSize: Int { get }
    /// Digest size in bytes.
    static var digestSize: Int { get }
    /// Size of the big-endian length field in the last block (8 or 16).
    static var lengthSize: Int { get }
    /// The initial chaining value.
    static var initialWords: Words { get }
    /// A zeroed block.
    static var zeroBlock: Block { get }
    /// Processes `count` consecutive blocks.
    static func compress(_ words: inout Words, _ blocks: UnsafeRawPointer, _ count: Int, _ backend: Backend)
    /// Writes the digest (big-endian words) to `out`.
    static func store(_ words: Words, _ out: UnsafeMutableRawPointer)
    /// Whether the bit length in the last block is little-endian (MD5) rather than big-endian (SHA).
    static var lengthIsLittleEndian: Bool { get }
}

extension MDCompressor {
    @usableFromInline static var lengthIsLittleEndian: Bool { false }
}

/// Streaming state for a Merkle-Damgard hash: chaining value, partial block, total length.
@usableFromInline
struct MDEngine<C: MDCompressor>: Sendable {
    @usableFromInline var words: C.Words
    @usableFromInline var pendingBlock: C.Block
    @usableFromInline var pendingCount: Int = 0
    @usableFromInline var total: UInt64 = 0
    @usableFromInline let backend: Backend

    /// A state that has already absorbed `total` bytes (a whole number of blocks) ending in `words`.
    @inlinable
    init(words: C.Words, total: UInt64, backend: Backend) {
        self.words = words
        pendingBlock = C.zeroBlock
        self.total = total
        self.backend = backend
    }

    @inlinable
    init(backend: Backend) {
        words = C.initialWords
        pendingBlock = C.zeroBlock
        self.backend = backend
    }

    @usableFromInline
    mutating func update(_ input: UnsafeRawBufferPointer) {
        guard let p = input.baseAddress, input.count > 0 else { return }
        total &+= UInt64(input.count)
        absorb(p, input.count)
    }

    /// Pads a copy of the state and writes the digest to `out` (which holds `C.digestSize` bytes).
    @usableFromInline
    func finalize(into out: UnsafeMutableRawPointer) {
        var w = words
        var b = pendingBlock
        let used = pendingCount
        let bs = C.blockSize
        let bitLength = total &<< 3
        let highBits = total >> 61
        withUnsafeMutableBytes(of: &b) { buf in
            let base = buf.baseAddress!
            base.storeBytes(of: 0x80, toByteOffset: used, as: UInt8.self)
            var start = used + 1
            if start > bs - C.lengthSize {
                (base + start).initializeMemory(as: UInt8.self, repeating: 0, count: bs - start)
                C.compress(&w, UnsafeRawPointer(base), 1, backend)
                start = 0
            }
            (base + start).initializeMemory(as: UInt8.self, repeating: 0, count: bs - 8 - start)
            if C.lengthIsLittleEndian { base.storeLE64(bitLength, bs - 8) } else { base.storeBE64(bitLength, bs - 8) }
            if C.lengthSize == 16 { base.storeBE64(highBits, bs - 16) }
            C.compress(&w, UnsafeRawPointer(base), 1, backend)
        }
        C.store(w, out)
        wipe(&b)
    }
}

extension MDEngine: BlockAbsorbing {
    static var absorbBlockSize: Int { C.blockSize }
    static var holdsBackFullBlock: Bool { false }
    mutating func compressBlocks(_ blocks: UnsafeRawPointer, _ count: Int) {
        C.compress(&words, blocks, count, backend)
    }
}

/// The SHA-family hashers, which expose their Merkle-Damgard engine to HMAC-based KDFs.
@usableFromInline
protocol MDHash: HashFunction {
    associatedtype Compressor: MDCompressor
    var engine: MDEngine<Compressor> { get }
    init(backend: Backend)
}

extension Insecure.SHA1: MDHash {}
extension SHA256: MDHash {}
extension SHA512: MDHash {}

/// 128 bytes of inline block storage (SHA-512).
///
/// Block buffers are plain SIMD values, not `InlineArray`: with Swift 6.3.1, release builds that
/// copied a hasher holding an `InlineArray` through generic code corrupted it (crashes in
/// `MDEngine.finalize` reached from a `HashFunction`-generic caller).
@usableFromInline
struct Block128: Sendable {
    @usableFromInline var low = SIMD64<UInt8>(repeating: 0)
    @usableFromInline var high = SIMD64<UInt8>(repeating: 0)
    @inlinable init() {}
}
