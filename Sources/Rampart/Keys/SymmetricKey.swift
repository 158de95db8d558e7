// Secret key material that is wiped when its last owner releases it.

/// Standard key sizes.
public struct SymmetricKeySize: Sendable, Equatable {
    /// The size in bits.
    public let bitCount: Int

    /// Creates a size.
    ///
    /// - Throws: ``RampartError/invalidKeyLength`` unless `bitCount` is a positive multiple of 8 of
    ///   at most ``maximumBitCount`` (a negative or odd count would otherwise make a short key
    ///   silently; CryptoKit traps instead).
    public init(bitCount: Int) throws(RampartError) {
        guard bitCount > 0, bitCount % 8 == 0, bitCount <= SymmetricKeySize.maximumBitCount else {
            throw .invalidKeyLength
        }
        self.bitCount = bitCount
    }

    private init(checked bitCount: Int) { self.bitCount = bitCount }

    /// The largest size a random key may have: 2^20 bits (128 KiB).
    public static let maximumBitCount = 1 << 20
    public static let bits128 = SymmetricKeySize(checked: 128)
    public static let bits192 = SymmetricKeySize(checked: 192)
    public static let bits256 = SymmetricKeySize(checked: 256)
}

/// A symmetric key (CryptoKit's shape). Its bytes live in one heap buffer that is zeroed when the
/// last copy of the key is released; equality is constant time.
public struct SymmetricKey: Sendable, Equatable {
    @usableFromInline
    final class Storage: @unchecked Sendable {
        // Immutable after init, so sharing between threads is safe.
        @usableFromInline let buffer: UnsafeMutableRawBufferPointer
        init(count: Int) {
            buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            self.count = count
        }
        @usableFromInline let count: Int
        deinit {
            secureZero(buffer)
            buffer.deallocate()
        }
    }

    // A var only for `replaceBytesIfUniquelyOwned(_:)`: the storage is never changed while shared.
    @usableFromInline var storage: Storage
    /// The implementation one-shot operations with this key run on, when pinned (tests); `nil`
    /// follows `CPU.defaultBackend`.
    @usableFromInline let pinnedBackend: Backend?

    /// The backend operations with this key run on (`CPU.defaultBackend` unless pinned).
    var backend: Backend { pinnedBackend ?? CPU.defaultBackend }

    /// The same key (the same wiped storage, no copy of the bytes) pinned to one implementation:
    /// every operation that takes this key (`SecretBox`, `XSalsa20`, `Salsa20`, `ChaCha20`, `ChaChaPoly`, `AES.Cipher(key:)`,
    /// `AES.GCM` with a key, ...) runs on `backend`. This is how tests run one vector through both paths:
    /// a backend is pinned on the object that owns the state or the secret (a hasher, a cipher, a
    /// modulus, a key), never by an extra parameter on one-shot calls.
    @_spi(Testing)
    public func pinned(to backend: Backend) -> SymmetricKey { SymmetricKey(storage: storage, pinnedBackend: backend) }

    private init(storage: Storage, pinnedBackend: Backend?) {
        self.storage = storage
        self.pinnedBackend = pinnedBackend
    }

    /// A key holding a copy of `data`.
    public init<D: Collection<UInt8>>(data: D) {
        pinnedBackend = nil
        storage = Storage(count: data.count)
        withContiguousBytes(data) { src in
            if let b = src.baseAddress, src.count > 0 {
                storage.buffer.baseAddress!.copyMemory(from: b, byteCount: src.count)
            }
        }
    }

    /// A key holding a copy of the bytes at `data` (no generic dispatch: derivations that make a
    /// key from a digest in place call this one).
    public init(data: UnsafeRawBufferPointer) {
        pinnedBackend = nil
        storage = Storage(count: data.count)
        if let b = data.baseAddress, data.count > 0 { storage.buffer.baseAddress!.copyMemory(from: b, byteCount: data.count) }
    }

    /// A key holding a copy of `data` (no generic dispatch).
    public init(data: [UInt8]) {
        pinnedBackend = nil
        let s = Storage(count: data.count)
        storage = s
        data.withUnsafeBytes { if let b = $0.baseAddress, $0.count > 0 { s.buffer.baseAddress!.copyMemory(from: b, byteCount: $0.count) } }
    }

    /// A random key of the given size from the system generator.
    public init(size: SymmetricKeySize) {
        var rng = SecureRandom()
        self.init(size: size, using: &rng)
    }

    /// A random key of the given size from `rng`.
    public init<R: RandomNumberGenerator>(size: SymmetricKeySize, using rng: inout R) {
        let n = size.bitCount / 8   // positive and whole: checked by SymmetricKeySize
        pinnedBackend = nil
        storage = Storage(count: n)
        fillRandom(UnsafeMutableRawBufferPointer(rebasing: storage.buffer[0..<n]), using: &rng)
    }

    /// Creates a key by letting `body` write exactly `count` bytes into fresh storage.
    @usableFromInline
    init(count: Int, initializingWith body: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        pinnedBackend = nil
        storage = Storage(count: count)
        try body(UnsafeMutableRawBufferPointer(rebasing: storage.buffer[0..<count]))
    }

    /// Overwrites the key bytes in place when this value is the only owner of its storage (no copy
    /// of the key, pinned or not, exists); returns `false` and changes nothing otherwise, so that the
    /// caller makes a new key. For ratchets that replace their key on every step: the old bytes are
    /// overwritten, not left for a later wipe, and no allocation is made.
    package mutating func replaceBytesIfUniquelyOwned(_ body: (UnsafeMutableRawBufferPointer) -> Void) -> Bool {
        guard isKnownUniquelyReferenced(&storage) else { return false }
        body(UnsafeMutableRawBufferPointer(rebasing: storage.buffer[0..<storage.count]))
        return true
    }

    /// The key length in bits.
    public var bitCount: Int { storage.count * 8 }
    /// The key length in bytes.
    public var byteCount: Int { storage.count }

    /// Calls `body` with the key bytes. Do not let the pointer escape.
    @inlinable
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage.buffer[0..<storage.count]))
    }

    /// Constant-time comparison.
    public static func == (a: SymmetricKey, b: SymmetricKey) -> Bool {
        a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in ConstantTime.equals(pa, pb) } }
    }
}

/// Fills a buffer from a random number generator, 8 bytes per draw (little-endian; the last draw
/// truncated), the same bytes on every platform for a seeded generator; ``SecureRandom`` fills the
/// whole buffer in one call. Shared by the package's modules.
@usableFromInline
package func fillRandom<R: RandomNumberGenerator>(_ buffer: UnsafeMutableRawBufferPointer, using rng: inout R) {
    // The library's own generator fills whole buffers in one call (a thread-local lookup per call,
    // not per eight bytes).
    if R.self == SecureRandom.self {
        SecureRandom.fill(buffer)
        return
    }
    var i = 0
    let n = buffer.count
    while i < n {
        var v = rng.next().littleEndian
        let take = min(8, n - i)
        withUnsafeBytes(of: &v) { buffer.baseAddress!.advanced(by: i).copyMemory(from: $0.baseAddress!, byteCount: take) }
        i += take
    }
}
