// The one error type of RampartThreema. Every decoder of untrusted bytes reports through it and
// never traps; see Docs/Threema.md for the formats.

import RampartCodecs

/// An error from RampartThreema. Every operation on untrusted input reports one of these (never a
/// trap) and leaves any state it was given (nonce store, key cache) unchanged.
public enum ThreemaError: Error, Equatable, Hashable, Sendable {
    /// Not a Threema ID: 8 characters `[0-9A-Z*][0-9A-Z]{7}` (Docs/Threema.md §2.4).
    case invalidIdentity
    /// A public key is not 32 bytes, or its X25519 shared secret is all zeros (a small-order point).
    case invalidPublicKey
    /// A `3mid:` contact QR payload does not follow the format.
    case invalidQRCode(QRCodeFault)
    /// An end-to-end message envelope is malformed (before any decryption).
    case malformedEnvelope(EnvelopeFault)
    /// The envelope is addressed to another identity than the one opening it.
    case wrongReceiver
    /// The nonce was seen before (replay); refused before decryption.
    case replayedNonce
    /// A box (message, metadata, blob, backup) did not authenticate: wrong key or tampered data.
    /// No plaintext is released.
    case authenticationFailed
    /// The metadata box decrypted but does not decode as `MessageMetadata`.
    case malformedMetadata(ProtobufError)
    /// The metadata's message ID differs from the envelope's.
    case metadataMessageIDMismatch
    /// The decrypted container's padding is malformed (length 0, or longer than the container
    /// allows).
    case invalidPadding
    /// A message body does not decode for its type.
    case malformedBody(MessageBodyFault)
    /// A password or passphrase outside the allowed length (bytes of UTF-8).
    case invalidPasswordLength(allowed: ClosedRange<Int>)
    /// A Threema ID backup string is malformed (alphabet, length or version).
    case malformedBackup(BackupFault)
    /// A backup or protected key was opened with a wrong password (the check bytes differ).
    case wrongPassword
    /// A Threema Safe backup is malformed or violates its schema.
    case malformedSafeBackup(SafeFault)
    /// An argument a caller controls is outside its allowed range.
    case invalidArgument(String)
    /// An Ibex forward-secrecy operation was refused (Docs/Threema.md §1).
    case ibex(IbexFault)
    /// A chat-server protocol step was refused (Docs/Threema.md, "Chat-server protocol").
    case csp(CSPFault)
    /// A group-call operation was refused (Docs/Threema.md §10).
    case groupCall(GroupCallFault)
}

/// Why a `3mid:` QR payload was refused.
public enum QRCodeFault: Error, Equatable, Hashable, Sendable {
    /// The payload does not start with `3mid:`.
    case wrongScheme
    /// Not two or three comma-separated fields.
    case wrongFieldCount
    /// The identity field is not a Threema ID.
    case invalidIdentity
    /// The public key is not 64 lowercase (or uppercase) hexadecimal digits.
    case invalidPublicKey
    /// The expiry is not a decimal number of seconds.
    case invalidExpiry
}

/// Why an envelope was refused.
public enum EnvelopeFault: Error, Equatable, Hashable, Sendable {
    /// Shorter than the 88-byte header and nonce plus a 16-byte box tag.
    case tooShort(Int)
    /// The sender field is not a Threema ID.
    case invalidSender
    /// The receiver field is not a Threema ID.
    case invalidReceiver
    /// The metadata length points past the end of the envelope (or leaves no room for the message
    /// box).
    case metadataLengthOutOfRange(Int)
    /// A metadata box shorter than its 16-byte tag.
    case metadataTooShort(Int)
}

/// Why a message body was refused.
public enum MessageBodyFault: Error, Equatable, Hashable, Sendable {
    /// The body is shorter than its type requires.
    case tooShort
    /// Bytes left over after a fixed-size body.
    case trailingBytes
    /// A text field is not UTF-8.
    case invalidUTF8
    /// A field has a value the type does not allow.
    case invalidValue(String)
}

/// Why an ID backup was refused.
public enum BackupFault: Error, Equatable, Hashable, Sendable {
    /// A character outside Base32 (after dashes, spaces and line breaks are dropped).
    case invalidCharacter
    /// The decoded length is neither the legacy 50 bytes nor a known versioned layout.
    case invalidLength(Int)
    /// A versioned backup with a version this library does not read.
    case unsupportedVersion(UInt8)
    /// The decrypted identity is not a Threema ID.
    case invalidIdentity
}

/// Why a Threema Safe backup was refused.
public enum SafeFault: Error, Equatable, Hashable, Sendable {
    /// Shorter than the 24-byte nonce plus the 16-byte tag.
    case tooShort
    /// The decrypted plaintext is neither gzip nor JSON, or the gzip stream is corrupt.
    case compression(String)
    /// The decompressed backup exceeds the size limit.
    case tooLarge(limit: Int)
    /// The JSON is malformed.
    case json(String)
    /// The JSON violates the Threema Safe schema (the path names the offending member).
    case schema(String)
    /// `info.version` is higher than this library reads.
    case unsupportedVersion(Int)
}
