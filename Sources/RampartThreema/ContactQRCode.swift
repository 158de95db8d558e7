// The contact QR code payload `3mid:<ID>,<public key hex>[,<expiry>]` (Docs/Threema.md §2.4;
// whitepaper "Key Distribution and Trust"). The whitepaper gives two fields; the Android reader also
// accepts a third, an expiry in Unix seconds, so the parser does too.

import Rampart

/// The payload of a Threema contact QR code.
///
/// ```swift
/// let qr = try ContactQRCode(parsing: "3mid:ECHOECHO,4a6a1b34…")
/// if qr.verifies(contactFromDirectory) { level = level.afterMatchingQRScan() }
/// ```
public struct ContactQRCode: Hashable, Sendable {
    /// The identity the code names.
    public let id: ThreemaID
    /// The 32-byte public key it carries.
    public let publicKey: [UInt8]
    /// When the code stops being valid (Unix seconds), when present.
    public let expiry: UInt64?

    /// The payload of `identity`'s own code.
    public init(identity: ThreemaIdentity, expiry: UInt64? = nil) {
        self.init(contact: identity.contact, expiry: expiry)
    }

    /// The payload for a contact.
    public init(contact: ThreemaContact, expiry: UInt64? = nil) {
        id = contact.id
        publicKey = contact.publicKey.rawRepresentation
        self.expiry = expiry
    }

    /// Strict parse of a scanned payload: the `3mid:` prefix, a valid ID, exactly 64 hex digits
    /// (either case; written lowercase), and an optional decimal expiry of at most 20 digits. No
    /// spaces, no empty fields, nothing else.
    ///
    /// - Throws: ``ThreemaError/invalidQRCode(_:)``.
    public init(parsing payload: String) throws(ThreemaError) {
        let utf8 = Array(payload.utf8)
        let prefix = Array("3mid:".utf8)
        guard utf8.count <= 128, utf8.starts(with: prefix) else { throw .invalidQRCode(.wrongScheme) }
        let fields = utf8[prefix.count...].split(separator: 0x2C, omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3 else { throw .invalidQRCode(.wrongFieldCount) }
        guard let id = try? ThreemaID(bytes: fields[0]) else { throw .invalidQRCode(.invalidIdentity) }
        guard fields[1].count == 64, let key = try? Hex.decode(String(decoding: fields[1], as: UTF8.self)) else {
            throw .invalidQRCode(.invalidPublicKey)
        }
        var expiry: UInt64?
        if fields.count == 3 {
            let digits = fields[2]
            guard !digits.isEmpty, digits.count <= 20, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let value = UInt64(String(decoding: digits, as: UTF8.self)) else {
                throw .invalidQRCode(.invalidExpiry)
            }
            expiry = value
        }
        self.id = id
        self.publicKey = key
        self.expiry = expiry
    }

    /// The payload text: `3mid:<ID>,<64 lowercase hex>` plus `,<expiry>` when set.
    public var payload: String {
        "3mid:\(id),\(Hex.encode(publicKey))" + (expiry.map { ",\($0)" } ?? "")
    }

    /// Whether the code matches `contact` (same ID and key; the key compared in constant time) and
    /// has not expired at `now` (Unix seconds). Only a match may raise a contact to
    /// ``VerificationLevel/fullyVerified``.
    public func verifies(_ contact: ThreemaContact, now: UInt64? = nil) -> Bool {
        if let expiry, let now, now > expiry { return false }
        return contact.id == id && ConstantTime.equals(contact.publicKey.rawRepresentation, publicKey)
    }
}
