// Threema's BLAKE2b key derivation and the per-contact key pair cache (Docs/Threema.md §0.2, §2.2).

import Rampart

/// Threema's key derivation: keyed BLAKE2b with a short salt and personalisation string, each
/// zero-padded to 16 bytes in the parameter block (Docs/Threema.md §0.2), as
/// `BLAKE2b(out, key, salt, personal, input)`.
public enum ThreemaKDF {
    /// `BLAKE2b(out = outputByteCount, key, salt, personal, input)` for the protocol's own derivations:
    /// constant salt and personal strings (at most 16 bytes) and keys of 32 or 64 bytes from the
    /// module's own key types, so it cannot fail; callers with other inputs use the throwing form.
    static func derive(key: SymmetricKey, salt: String, personal: String,
                       input: [UInt8] = [], outputByteCount: Int = 32) -> SymmetricKey {
        do {
            return try derive(key: key, salt: Array(salt.utf8), personal: Array(personal.utf8), input: input,
                              outputByteCount: outputByteCount)
        } catch {
            preconditionFailure("ThreemaKDF: \(error) (an internal derivation with invalid constants)")
        }
    }

    /// Keyed BLAKE2b-256 with no salt and no personalisation (the second step of the directory
    /// response and of the login vouch).
    static func mac(key: SymmetricKey, input: [UInt8]) -> [UInt8] {
        var h = try! BLAKE2b(outputByteCount: 32, key: key)
        h.update(data: input)
        return h.finalize().bytes
    }

    /// `bytes` (at most 16) zero-padded to the 16 bytes of a BLAKE2b salt or personalisation.
    static func padded16(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: 16 - bytes.count) }

    /// `s` as UTF-8, zero-padded to 16 bytes.
    static func padded16(_ s: String) -> [UInt8] { padded16(Array(s.utf8)) }

    /// `BLAKE2b(out = outputByteCount, key, salt, personal, input)` with salt and personal given as
    /// bytes (at most 16 each, zero-padded), for derivations whose strings are not fixed.
    ///
    /// - Throws: ``ThreemaError/invalidArgument(_:)`` for a salt or personal over 16 bytes, a key
    ///   outside 1...64 bytes or an output outside 1...64 bytes.
    public static func derive(key: SymmetricKey, salt: [UInt8], personal: [UInt8], input: [UInt8] = [],
                              outputByteCount: Int = 32) throws(ThreemaError) -> SymmetricKey {
        guard salt.count <= 16, personal.count <= 16 else { throw .invalidArgument("salt and personal have at most 16 bytes") }
        guard (1...64).contains(key.byteCount), (1...64).contains(outputByteCount) else {
            throw .invalidArgument("BLAKE2b keys and outputs have 1...64 bytes")
        }
        var h = try! BLAKE2b(outputByteCount: outputByteCount, key: key,
                             salt: padded16(salt), personal: padded16(personal))
        h.update(data: input)
        return h.finalize().withUnsafeBytes { SymmetricKey(data: $0) }
    }

}

/// The keys one identity shares with one contact, computed once and reused for every message
/// (whitepaper "Message Encryption"): the box key `S = X25519HSalsa20(own secret, peer public)`
/// (`crypto_box_beforenm`) and the metadata key `MMK = BLAKE2b(key = S, salt "mm", personal "3ma-csp")`.
/// Both are wiped when the last copy is released.
public struct PairKeys: Sendable {
    /// The contact these keys are shared with.
    public let contact: ThreemaContact
    /// The precomputed box key `S`.
    public let sharedKey: Box.SharedKey
    /// The metadata-box key `MMK`.
    public let metadataKey: SymmetricKey

    /// Derives the keys between `identity` and `contact`: one X25519 and two hashes.
    ///
    /// - Throws: ``ThreemaError/invalidPublicKey`` when the contact's key is of small order (the
    ///   shared secret would be all zeros).
    public init(identity: ThreemaIdentity, contact: ThreemaContact) throws(ThreemaError) {
        self.contact = contact
        sharedKey = try Self.sharedKey(identity.privateKey, contact.publicKey)
        metadataKey = ThreemaKDF.derive(key: sharedKey.symmetricKey, salt: "mm", personal: "3ma-csp")
    }

    static func sharedKey(_ secret: Curve25519.KeyAgreement.PrivateKey,
                          _ peer: Curve25519.KeyAgreement.PublicKey) throws(ThreemaError) -> Box.SharedKey {
        do { return try Box.SharedKey(publicKey: peer, privateKey: secret) } catch { throw .invalidPublicKey }
    }
}

/// A cache of ``PairKeys`` by contact, so that sealing to a group of N members costs N X25519
/// operations once, not once per message. A contact whose public key changed gets new keys.
public struct PairKeyCache: Sendable {
    /// The identity the keys belong to.
    public let identity: ThreemaIdentity
    private var entries: [ThreemaID: PairKeys] = [:]
    /// The most entries kept; the cache is emptied when a new contact would exceed it.
    public let capacity: Int

    /// An empty cache for `identity`.
    public init(identity: ThreemaIdentity, capacity: Int = 4096) {
        self.identity = identity
        self.capacity = max(1, capacity)
    }

    /// The number of cached contacts.
    public var count: Int { entries.count }

    /// The keys for `contact`, derived on first use.
    ///
    /// - Throws: ``ThreemaError/invalidPublicKey``; the cache is unchanged then.
    public mutating func keys(for contact: ThreemaContact) throws(ThreemaError) -> PairKeys {
        if let cached = entries[contact.id], cached.contact == contact { return cached }
        let keys = try PairKeys(identity: identity, contact: contact)
        if entries[contact.id] == nil, entries.count >= capacity { entries.removeAll() }
        entries[contact.id] = keys
        return keys
    }
}

// MARK: - Snapshot

extension PairKeyCache {
    /// `TPKC`.
    public static let snapshotType = SnapshotType("TPKC")

    /// Snapshot (type `TPKC`, version 1, Docs/Snapshots.md §4): the identity's ID (8 bytes), the
    /// capacity (uint32), then the cached contacts in ascending ID order (ID 8 bytes, public key 32
    /// bytes). No key material: ``init(restoring:identity:)`` derives the keys again (one X25519 per
    /// contact), so the snapshot holds nothing secret. Old snapshots are harmless: a cache only saves
    /// work.
    public func snapshot() -> SnapshotBytes {
        var w = SnapshotWriter(type: Self.snapshotType, version: 1, capacity: 64 + 40 * entries.count)
        w.fixed(identity.id.bytes)
        w.uint32(UInt32(clamping: capacity))
        let contacts = entries.values.map(\.contact).sorted { $0.id.packed.byteSwapped < $1.id.packed.byteSwapped }
        w.list(contacts) { w, c in
            w.fixed(c.id.bytes)
            w.fixed(c.publicKey.rawRepresentation)
        }
        return w.finish()
    }

    /// The cache of `snapshot` for `identity` (whose ID must be the snapshot's), its keys derived again.
    /// - Throws: ``RampartError/invalidSnapshot(_:)`` (also for a contact key of small order).
    public init(restoring snapshot: SnapshotBytes, identity: ThreemaIdentity) throws(RampartError) {
        var r = try SnapshotReader(snapshot, type: Self.snapshotType, versions: 1...1)
        let own = try r.fixed(8)
        guard own == identity.id.bytes else { throw .invalidSnapshot(.invalidField("identity")) }
        let capacity = Int(try r.uint32())
        guard capacity >= 1, capacity <= 1 << 20 else { throw .invalidSnapshot(.invalidField("capacity")) }
        let contacts = try r.list("contacts", max: capacity, minElementBytes: 40) { (r) throws(RampartError) -> ThreemaContact in
            let id = try r.fixed(8), key = try r.fixed(32)
            do {
                return ThreemaContact(id: try ThreemaID(bytes: id), publicKey: try .init(rawRepresentation: key))
            } catch {
                throw .invalidSnapshot(.invalidField("contact"))
            }
        }
        try r.finish()
        self.init(identity: identity, capacity: capacity)
        var last: UInt64?
        for c in contacts {
            let order = c.id.packed.byteSwapped   // the ID's bytes read big-endian: ascending ID order
            guard last.map({ $0 < order }) ?? true else { throw .invalidSnapshot(.invalidField("contacts order")) }
            last = order
            do { entries[c.id] = try PairKeys(identity: identity, contact: c) } catch { throw .invalidSnapshot(.invalidField("contact key")) }
        }
    }
}
