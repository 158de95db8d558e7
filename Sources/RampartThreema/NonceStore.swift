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
