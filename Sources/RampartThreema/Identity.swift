// Threema IDs, identity key pairs, public-key fingerprints and verification levels
// (Docs/Threema.md §2.4; whitepaper "Key Distribution and Trust").

import Rampart

/// A Threema ID: 8 characters, the first from `0-9`, `A-Z` or `*` (a Gateway ID), the other seven
/// from `0-9` and `A-Z`. Stored as its 8 ASCII bytes, as it travels on the wire.
public struct ThreemaID: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The 8 ASCII bytes packed little-endian (byte 0 lowest): cheap to hash and compare.
    public let packed: UInt64

    /// Validates `string`.
    ///
    /// - Throws: ``ThreemaError/invalidIdentity``.
    public init(_ string: String) throws(ThreemaError) {
        try self.init(bytes: Array(string.utf8))
    }

    /// Validates 8 ASCII bytes (as found in envelopes and backups).
    ///
    /// - Throws: ``ThreemaError/invalidIdentity``.
    public init<C: Collection<UInt8>>(bytes: C) throws(ThreemaError) {
        guard bytes.count == 8 else { throw .invalidIdentity }
        func alnum(_ c: UInt8) -> Bool { (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) }
        var v: UInt64 = 0
        for (i, c) in bytes.enumerated() {
            guard alnum(c) || (i == 0 && c == 0x2A) else { throw .invalidIdentity }
            v |= UInt64(c) << (8 * UInt64(i))
        }
        packed = v
    }

    /// Validates 8 ASCII bytes packed little-endian (byte 0 lowest), as read from an envelope header.
    ///
    /// - Throws: ``ThreemaError/invalidIdentity``.
    init(packed v: UInt64) throws(ThreemaError) {
        var w = v
        for i in 0..<8 {
            let c = UInt8(truncatingIfNeeded: w)
            guard (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (i == 0 && c == 0x2A) else {
                throw .invalidIdentity
            }
            w >>= 8
        }
        packed = v
    }

    /// The 8 ASCII bytes.
    public var bytes: [UInt8] { withUnsafeBytes(of: packed.littleEndian) { Array($0) } }
    /// The ID as a string.
    public var string: String { String(decoding: bytes, as: UTF8.self) }
    public var description: String { string }
    /// Whether this is a Gateway ID (starts with `*`).
    public var isGatewayID: Bool { packed & 0xFF == 0x2A }

    public static func < (a: ThreemaID, b: ThreemaID) -> Bool { a.packed.byteSwapped < b.packed.byteSwapped }
}

/// A contact: a Threema ID and its X25519 identity public key (the "client key", CK).
public struct ThreemaContact: Hashable, Sendable {
    /// The contact's ID.
    public let id: ThreemaID
    /// The contact's identity public key.
    public let publicKey: Curve25519.KeyAgreement.PublicKey

    /// A contact from an ID and a public key.
    public init(id: ThreemaID, publicKey: Curve25519.KeyAgreement.PublicKey) {
        self.id = id
        self.publicKey = publicKey
    }

    /// A contact from an ID and 32 public-key bytes.
    ///
    /// - Throws: ``ThreemaError/invalidPublicKey`` for a key that is not 32 bytes.
    public init<C: Collection<UInt8>>(id: ThreemaID, publicKey bytes: C) throws(ThreemaError) {
        guard bytes.count == 32, let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: bytes) else {
            throw .invalidPublicKey
        }
        self.init(id: id, publicKey: key)
    }

    /// The public-key fingerprint the apps show: ``ThreemaFingerprint``.
    public var fingerprint: ThreemaFingerprint { ThreemaFingerprint(publicKey: publicKey) }

    public static func == (a: ThreemaContact, b: ThreemaContact) -> Bool {
        a.id == b.id && a.publicKey == b.publicKey
    }

    public func hash(into h: inout Hasher) {
        h.combine(id)
        publicKey.rawRepresentation.withUnsafeBytes { h.combine(bytes: $0) }
    }
}

/// Your own identity: a Threema ID and its X25519 identity key pair. The secret key is wiped when
/// the last copy is released (it lives in Rampart's key type).
public struct ThreemaIdentity: Sendable {
    /// The ID.
    public let id: ThreemaID
    /// The identity secret key (the apps' "client key" CK).
    public let privateKey: Curve25519.KeyAgreement.PrivateKey
    /// The identity public key.
    public let publicKey: Curve25519.KeyAgreement.PublicKey

    /// An identity from an ID and an existing secret key.
    public init(id: ThreemaID, privateKey: Curve25519.KeyAgreement.PrivateKey) {
        self.id = id
        self.privateKey = privateKey
        self.publicKey = privateKey.publicKey
    }

    /// An identity from an ID and 32 secret-key bytes.
    ///
    /// - Throws: ``ThreemaError/invalidArgument(_:)`` unless the key has 32 bytes.
    public init<C: Collection<UInt8>>(id: ThreemaID, privateKey bytes: C) throws(ThreemaError) {
        guard let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes) else {
            throw .invalidArgument("an identity secret key has 32 bytes")
        }
        self.init(id: id, privateKey: key)
    }

    /// A new random key pair for `id` (IDs themselves are assigned by the directory server).
    public static func generate<R: RandomNumberGenerator>(id: ThreemaID, using rng: inout R) -> ThreemaIdentity {
        ThreemaIdentity(id: id, privateKey: .init(using: &rng))
    }

    /// This identity as others see it.
    public var contact: ThreemaContact { ThreemaContact(id: id, publicKey: publicKey) }
}

/// The fingerprint of an identity public key as the apps display it: the first 16 bytes of
/// SHA-256 over the 32-byte key, in lowercase hex.
public struct ThreemaFingerprint: Hashable, Sendable, CustomStringConvertible {
    /// The 16 fingerprint bytes.
    public let bytes: [UInt8]

    /// The fingerprint of `publicKey`.
    public init(publicKey: Curve25519.KeyAgreement.PublicKey) {
        bytes = Array(SHA256.hash(data: publicKey.rawRepresentation).bytes.prefix(16))
    }

    /// 32 lowercase hex digits.
    public var description: String { Hex.encode(bytes) }
}

/// How far a contact's public key is trusted (whitepaper "Key Distribution and Trust"). The raw
/// values are those of the Threema Safe schema's `verification` member (0, 1, 2); the whitepaper's
/// colours are levels 1, 2, 3. Threema Work's blue levels are the same levels with ``workVerified``.
public struct VerificationLevel: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The level: 0 unverified (red), 1 server-verified (orange), 2 fully verified (green).
    public let rawValue: Int
    /// A Threema Work internal contact (shown blue).
    public let workVerified: Bool

    /// Red: the key came from the directory and matches nothing in the address book.
    public static let unverified = VerificationLevel(checked: 0)
    /// Orange: matched with an address-book contact by phone number or e-mail.
    public static let serverVerified = VerificationLevel(checked: 1)
    /// Green: the user scanned the contact's `3mid:` QR code.
    public static let fullyVerified = VerificationLevel(checked: 2)

    private init(checked: Int, workVerified: Bool = false) {
        rawValue = checked
        self.workVerified = workVerified
    }

    /// A level from its raw value (0, 1 or 2), or `nil`.
    public init?(rawValue: Int, workVerified: Bool = false) {
        guard (0...2).contains(rawValue) else { return nil }
        self.init(checked: rawValue, workVerified: workVerified)
    }

    /// The level after the user scanned a QR code whose key matches: fully verified, keeping the
    /// Work flag. (A mismatching key never raises the level; see ``ContactQRCode/verifies(_:)``.)
    public func afterMatchingQRScan() -> VerificationLevel { VerificationLevel(checked: 2, workVerified: workVerified) }

    public static func < (a: VerificationLevel, b: VerificationLevel) -> Bool { a.rawValue < b.rawValue }

    public var description: String {
        let names = ["unverified", "server-verified", "fully verified"]
        return names[rawValue] + (workVerified ? " (work)" : "")
    }
}
