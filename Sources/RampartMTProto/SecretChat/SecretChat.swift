// Telegram secret chats (end-to-end encryption between two devices), sans-I/O: the key exchange, the
// message encryption (v2, and v1 for old layers), the end-to-end TL schema, sequence numbers, re-keying,
// fingerprints and the key image, encrypted files. Docs/MTProto.md §7 describes the protocol as the
// Telegram clients implement it.

/// The namespace of Telegram secret chats (Docs/MTProto.md §7).
public enum SecretChat {}

/// Errors of the secret-chat layer. Every decoder and every receive step throws one of these for bad
/// input and leaves the chat unchanged.
public enum SecretChatError: Error, Equatable, Hashable, Sendable {
    // MARK: Crypto (key exchange, message and file encryption)
    /// An encrypted secret-chat message failed a check (fingerprint unknown, msg_key, length,
    /// padding). One case for all of them so that a sender cannot tell them apart.
    case rejectedMessage
    /// The DH parameters or a DH value failed a check of Docs/MTProto.md §4.
    case dhCheckFailed(String)
    /// The key fingerprint the peer sent does not match the computed key: the chat must be discarded.
    case fingerprintMismatch
    /// A secret-chat key that is not exactly 256 bytes (Docs/MTProto.md §7.2).
    case invalidKey
    /// An outgoing message or file that cannot be encrypted (TL not a multiple of 4 bytes or too
    /// long, a file buffer that is not whole AES blocks); the text is for people.
    case invalidPlaintext(String)

    // MARK: TL and sequence numbers
    /// The decrypted end-to-end TL is malformed (the text is for people).
    case malformedTL(String)
    /// A protocol rule was broken (wrong parity, bad in_seq_no, unsatisfiable resend …): the chat must
    /// be aborted (Docs/MTProto.md §7.4).
    case protocolViolation(String)
    /// A TL constructor this implementation does not know at that position (a media, entity, attribute
    /// or action of a layer it does not implement, or garbage). Inside a `decryptedMessageLayer` the
    /// message is then kept as ``SecretChat/DecryptedMessage/unsupported(_:)`` instead.
    case unknownConstructor(UInt32)
    /// A `decryptedMessageLayer` carries fewer than 15 random bytes (the count it carried); receivers must
    /// ignore such messages (Docs/MTProto.md §7.3).
    case tooFewRandomBytes(Int)

    // MARK: Session
    /// A call the chat's state does not allow (sending before the key exists, accepting twice, a
    /// re-key while one is open …); the text is for people. Nothing changed.
    case wrongState(String)
}
