// The hash-function protocol (CryptoKit's shape) and the fixed-size digest values.

/// A cryptographic digest: a fixed-size value whose equality is checked in constant time.
public protocol Digest: Hashable, Sequence, CustomStringConvertible, Sendable where Element == UInt8 {
    /// The digest size in bytes.
    static var byteCount: Int { get }
    /// Calls `body` with the digest bytes.
    func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R
}

extension Digest {
    /// The digest bytes as an array.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
    /// Lowercase hexadecimal.
    public var description: String { withUnsafeBytes { Hex.encode($0) } }
    /// Iterates the digest bytes.
    public func makeIterator() -> Array<UInt8>.Iterator { bytes.makeIterator() }

    /// Compares the digest with the bytes of `other` in constant time (lengths may leak).
    public func constantTimeEquals<C: Collection<UInt8>>(_ other: C) -> Bool {
        withUnsafeBytes { mine in withContiguousBytes(other) { ConstantTime.equals(mine, $0) } }
    }
}

/// A hash function in CryptoKit's shape: `H.hash(data:)`, or `var h = H(); h.update(data:);
/// h.finalize()`. `finalize()` does not change the hasher, so more data may follow.
public protocol HashFunction: Sendable {
    /// The digest type.
    associatedtype Digest: Rampart.Digest
    /// The internal block size in bytes (what HMAC pads keys to).
    static var blockByteCount: Int { get }
    /// The digest size in bytes.
    static var byteCount: Int { get }
    /// A hasher with no input yet.
    init()
    /// Absorbs bytes.
    mutating func update(bufferPointer: UnsafeRawBufferPointer)
    /// Returns the digest of everything absorbed so far, leaving the hasher unchanged.
    func finalize() -> Digest
}

extension HashFunction {
    /// Absorbs a collection of bytes (contiguous collections are read in place).
    @inlinable
    public mutating func update<D: Collection<UInt8>>(data: D) {
        withContiguousBytes(data) { self.update(bufferPointer: $0) }
    }

    /// The digest of `data`.
    @inlinable
    public static func hash<D: Collection<UInt8>>(data: D) -> Digest {
        var h = Self()
        h.update(data: data)
        return h.finalize()
    }

    /// The digest of the bytes in `bufferPointer`.
    @inlinable
    public static func hash(bufferPointer: UnsafeRawBufferPointer) -> Digest {
        var h = Self()
        h.update(bufferPointer: bufferPointer)
        return h.finalize()
    }
}

/// Digest storage shared by the digest types: 64 bytes inline (a digest uses a prefix), no heap.
///
/// Deliberately not generic over the size (`InlineArray<N, UInt8>` with a value parameter): with
/// Swift 6.3.1, release builds of unspecialised code over such a type passed a garbage output
/// pointer to `SHA1Compressor.store` and crashed.
@usableFromInline
struct DigestBytes: Sendable {
    @usableFromInline var storage: SIMD8<UInt64>

    @inlinable init() { storage = SIMD8(repeating: 0) }

    @inlinable
    func withBytes<R, E: Error>(count: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var copy = storage
        return try Swift.withUnsafeBytes(of: &copy) { (raw: UnsafeRawBufferPointer) throws(E) -> R in
            try body(UnsafeRawBufferPointer(rebasing: raw[0..<count]))
        }
    }

    @inlinable
    mutating func withMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) -> R) -> R {
        Swift.withUnsafeMutableBytes(of: &storage) { body($0) }
    }
}

/// Declares `==` (constant time) and `hash(into:)` for a digest type.
@usableFromInline
internal func digestEquals<D: Digest>(_ a: D, _ b: D) -> Bool {
    a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in ConstantTime.equals(pa, pb) } }
}
