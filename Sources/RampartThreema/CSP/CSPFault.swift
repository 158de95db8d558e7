// Typed failures of the chat-server protocol (Docs/Threema.md, "Chat-server protocol"). Reported
// through `ThreemaError.csp(_:)`.

/// Which box of the chat-server protocol failed to authenticate.
public enum CSPBox: Sendable, Hashable {
    /// The login box (`login-data`, client sequence number 1).
    case login
    /// The login extensions box (client sequence number 2).
    case loginExtensions
    /// The login acknowledgement (server sequence number 2).
    case loginAck
    /// A frame after the handshake; the sequence number is the one the receiver expected (a
    /// replayed, reordered or skipped frame fails here, because the sequence number is implicit in
    /// the nonce).
    case frame(sequenceNumber: UInt64)
}

/// Why a chat-server protocol step was refused. Every refusal leaves the connection object
/// unchanged; the caller closes the connection.
public enum CSPFault: Error, Equatable, Hashable, Sendable {
    /// The server cookie equals the client cookie (`server-hello`, either side).
    case cookiesEqual
    /// A repeated cookie differs: the client cookie in the server's challenge response, or the
    /// server cookie in the login data.
    case repeatedCookieMismatch
    /// The server's challenge-response box opened under none of the permitted server permanent keys
    /// (a server without a pinned key, or a tampered box).
    case serverKeyNotPermitted
    /// A box did not authenticate (wrong key, tampered bytes, or a sequence number other than the
    /// expected one).
    case authenticationFailed(CSPBox)
    /// A per-direction sequence number would pass 2⁶⁴ − 1 (never reused, never wrapped).
    case sequenceNumberExhausted
    /// The login names an identity the server's lookup does not know.
    case unknownIdentity(ThreemaID)
    /// The login vouch does not match the identity's key.
    case invalidVouch
    /// The login data's identity field is not a Threema ID.
    case invalidLoginIdentity
    /// A reserved field of the login data is not zero (the retired vouch-box format).
    case reservedNotZero
    /// The login's extension indicator announces an encrypted extension length that is neither 0
    /// nor between 16 and ``CSP/maximumExtensionsLength``.
    case invalidExtensionsLength(Int)
    /// The decrypted extensions do not parse (a truncated entry, a duplicate type, a wrong payload
    /// length for a known type, or client info that is not UTF-8).
    case malformedExtension(UInt8)
    /// A frame's length prefix exceeds ``CSP/maximumFrameLength``; refused before anything is
    /// allocated for it.
    case frameTooLarge(Int)
    /// A frame's length prefix is below the 16-byte tag plus the 4-byte container header.
    case frameTooShort(Int)
    /// A decrypted payload does not parse for its container type (the type is given): wrong
    /// length, bytes after a fixed-size struct, invalid UTF-8, or a message that is not an
    /// envelope.
    case malformedPayload(type: UInt8)
    /// A payload arrived that only this side may send (for example an incoming message or an
    /// alert sent by a client, or an outgoing message sent by the server).
    case unexpectedPayload(type: UInt8)
    /// An operation the connection's current state does not allow (sending before the handshake
    /// completed, handshake bytes after it, a payload of a type this side may not send).
    case invalidState
}
