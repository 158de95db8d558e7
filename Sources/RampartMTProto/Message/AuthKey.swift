// The 2048-bit MTProto authorization key (Docs/MTProto.md §1.5, §3), its auth_key_id and aux_hash.

/// An MTProto authorization key: exactly 256 bytes (the big-endian DH result `g_ab mod dh_prime`,
/// left-padded with zeros), with its derived identifiers.
///
/// The key bytes live in one heap allocation that is wiped when the last copy of the value is
/// released. Equality compares the 256 bytes in constant time. Only bytes 0..<128 enter the message
/// KDF and msg_key (Docs/MTProto.md §1.2–§1.4); the whole key enters `auth_key_id` and `aux_hash`.
///
/// ```swift
/// let key = try AuthKey(bytes)     // 256 bytes from the handshake
/// key.id                           // auth_key_id as a UInt64 (little-endian reading)
/// key.idBytes                      // the 8 bytes that start every encrypted packet
/// ```
public struct AuthKey: Sendable, Equatable, Hashable {
    /// The key bytes (256, 64-byte aligned), wiped on release.
    final class Storage: @unchecked Sendable {
        // Immutable after init.
        let base: UnsafeMutableRawPointer

        init(_ bytes: UnsafeRawBufferPointer) {
            base = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 64)
            base.copyMemory(from: bytes.baseAddress!, byteCount: 256)
        }

        deinit {
            secureZero(UnsafeMutableRawBufferPointer(start: base, count: 256))
            base.deallocate()
        }
    }

    let storage: Storage

    /// `auth_key_id`: the 64 lower-order bits of SHA1(auth_key), i.e. digest bytes 12..<20 read
    /// little-endian (Docs/MTProto.md §1.5). Putting it on the wire as a TL `long` gives ``idBytes``.
    public let id: UInt64

    /// `aux_hash`: the 64 higher-order bits of SHA1(auth_key), digest bytes 0..<8 read
    /// little-endian (Docs/MTProto.md §0, §3).
    public let auxHash: UInt64

    /// The number of bytes in an auth key.
    public static let byteCount = 256

    /// Takes a copy of `bytes`, which must be exactly 256 bytes. The key keeps its own copy (wiped
    /// on release); `bytes` stays the caller's to wipe.
    /// - Throws: ``MTProtoError/invalidAuthKey`` for any other length.
    public init(_ bytes: some Collection<UInt8>) throws(MTProtoError) {
        guard bytes.count == AuthKey.byteCount else { throw .invalidAuthKey }
        if let s = bytes.withContiguousStorageIfAvailable({ Storage(UnsafeRawBufferPointer($0)) }) {
            storage = s
        } else {
            // Not contiguous: one temporary copy, wiped in place (it is never shared).
            var copy = [UInt8](repeating: 0, count: AuthKey.byteCount)
            for (i, b) in bytes.enumerated() { copy[i] = b }
            storage = copy.withUnsafeBytes { Storage($0) }
            copy.secureWipe()
        }
        let digest = Insecure.SHA1.hash(bufferPointer: UnsafeRawBufferPointer(start: storage.base, count: 256))
        let (i, a) = digest.withUnsafeBytes { d in (d.baseAddress!.loadLE64(12), d.baseAddress!.loadLE64(0)) }
        // Public by design: auth_key_id travels in clear at the start of every packet.
        id = declassified(i)
        auxHash = a
    }

    /// `auth_key_id` as it appears on the wire: SHA1(auth_key) bytes 12..<20.
    public var idBytes: [UInt8] { littleEndianBytes(id) }

    /// `aux_hash` as bytes: SHA1(auth_key) bytes 0..<8.
    public var auxHashBytes: [UInt8] { littleEndianBytes(auxHash) }

    /// Calls `body` with the 256 key bytes. Do not let the pointer escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage.base, count: 256))
    }

    /// Constant-time comparison of the 256 key bytes.
    public static func == (a: AuthKey, b: AuthKey) -> Bool {
        ConstantTime.equals(UnsafeRawBufferPointer(start: a.storage.base, count: 256),
                            UnsafeRawBufferPointer(start: b.storage.base, count: 256))
    }

    /// Hashes the public `auth_key_id` only (the key bytes never reach a `Hasher`).
    public func hash(into h: inout Hasher) { h.combine(id) }

    /// Pointer to key byte `offset` (internal fast paths).
    @inline(__always) func pointer(_ offset: Int) -> UnsafeRawPointer { UnsafeRawPointer(storage.base + offset) }
}

// MARK: - Small byte helpers

func littleEndianBytes(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }
