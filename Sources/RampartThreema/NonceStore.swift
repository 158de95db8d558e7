// Replay prevention (whitepaper "Replay Prevention"; Docs/Threema.md §2.2): remember every nonce,
// refuse a message whose nonce was seen. The Android app stores HMAC-SHA256(key = own identity,
// nonce) rather than the nonce; so does this module.

import Rampart

/// What a nonce store remembers of a nonce: `HMAC-SHA256(key = UTF-8 own identity, message = nonce)`.
public struct NonceTag: Hashable, Sendable {
    /// The 32 bytes.
    public let bytes: [UInt8]

    /// The tag of `nonce` for `identity`.
    public init(nonce: [UInt8], identity: ThreemaID) {
        bytes = HMAC<SHA256>.authenticationCode(for: nonce, using: SymmetricKey(data: identity.bytes)).bytes
    }

    /// A tag from 32 stored bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }
}

/// Where seen nonces are kept (a database in an app). ``MessageEnvelope/open(as:keys:nonceStore:)``
/// asks ``contains(_:)`` before decrypting and calls ``insert(_:)`` only after the message
/// authenticated and decoded.
public protocol NonceStore {
    /// Whether `tag` was stored before.
    func contains(_ tag: NonceTag) -> Bool
    /// Stores `tag`. Throws when the store cannot take it (the message is then not accepted).
    mutating func insert(_ tag: NonceTag) throws(ThreemaError)
}

/// A nonce store in memory, bounded: at most `capacity` tags (about 100 bytes each). When it is full,
/// inserting fails with ``ThreemaError/invalidArgument(_:)`` rather than forgetting old nonces, which
/// would re-open them to replay.
public struct InMemoryNonceStore: NonceStore, Sendable {
    private var tags: Set<NonceTag> = []
    /// The most tags kept.
    public let capacity: Int

    /// An empty store.
    public init(capacity: Int = 1 << 20) { self.capacity = capacity }

    /// The number of stored tags.
    public var count: Int { tags.count }

    public func contains(_ tag: NonceTag) -> Bool { tags.contains(tag) }

    public mutating func insert(_ tag: NonceTag) throws(ThreemaError) {
        guard tags.count < capacity || tags.contains(tag) else { throw .invalidArgument("nonce store full") }
        tags.insert(tag)
    }
}

/// Snapshot (type `TNST`, version 1, Docs/Snapshots.md §4): the capacity (uint64), then the tags as a
/// list of 32-byte values in ascending byte order (so that equal stores give equal bytes).
///
/// Old snapshots: a store restored from an older snapshot has forgotten the nonces inserted since, and
/// would accept those messages again. Take a snapshot after inserting and before acknowledging the
/// message to the server (the chat server delivers again what was not acknowledged), and never restore
/// one older than the last acknowledged message.
extension InMemoryNonceStore: Snapshottable {
    /// `TNST`.
    public static let snapshotType = SnapshotType("TNST")
    /// The largest capacity a snapshot may declare.
    public static let maxSnapshotCapacity = 1 << 26

    public func snapshot() -> SnapshotBytes {
        var w = SnapshotWriter(type: Self.snapshotType, version: 1)
        w.uint64(UInt64(capacity))
        let sorted = tags.map(\.bytes).sorted { $0.lexicographicallyPrecedes($1) }
        w.list(sorted) { $0.fixed($1) }
        return w.finish()
    }

    public init(restoring snapshot: SnapshotBytes) throws(RampartError) {
        var r = try SnapshotReader(snapshot, type: Self.snapshotType, versions: 1...1)
        let capacity = try r.uint64()
        guard capacity >= 1, capacity <= UInt64(Self.maxSnapshotCapacity) else { throw .invalidSnapshot(.invalidField("capacity")) }
        let list = try r.list("tags", max: Int(capacity), minElementBytes: 32) { (r) throws(RampartError) in try r.fixed(32) }
        try r.finish()
        // Canonical: strictly ascending (no duplicate, one byte string per store).
        for i in list.indices.dropFirst() where !list[i - 1].lexicographicallyPrecedes(list[i]) {
            throw .invalidSnapshot(.invalidField("tags order"))
        }
        self.init(capacity: Int(capacity))
        tags.reserveCapacity(list.count)
        for t in list { tags.insert(NonceTag(bytes: t)!) }
    }
}
