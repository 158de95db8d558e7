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
