// The one error type of RampartMTProto. Every decoder (transport frames, obfuscation headers, TL,
// encrypted packets, handshake messages) throws one of these for bad input and leaves its state
// unchanged; nothing in this module traps on bytes from the network.

/// Errors of the MTProto module.
///
/// Receiver checks on encrypted messages that precede or follow the `msg_key` comparison all report
/// ``MTProtoError/rejectedMessage`` so that a sender cannot tell them apart (Docs/MTProto.md §1.6).
public enum MTProtoError: Error, Equatable, Hashable, Sendable {
    // MARK: TL
    /// TL data ended before the value being read was complete.
    case truncated
    /// A constructor id other than the one(s) acceptable at this point.
    case unexpectedConstructor(UInt32)
    /// A TL value is malformed (bad `bytes` padding, negative or oversized count or length).
    case malformedTL(String)
    /// Bytes remained after a value that must fill its buffer exactly.
    case trailingBytes

    // MARK: Message layer
    /// An encrypted message failed a receiver check (auth_key_id, msg_key, length, padding, session,
    /// msg_id parity, replay or time window). One case for all of them, by design.
    case rejectedMessage
    /// An outgoing message could not be built (body too long or not a multiple of 4, bad padding
    /// policy), or an unencrypted (auth_key_id = 0) message is malformed.
    case invalidMessage(String)
    /// An auth key that is not exactly 256 bytes.
    case invalidAuthKey

    // MARK: Session layer
    /// A service message or container that does not follow the rules of Docs/MTProto.md §2.
    case invalidServiceMessage(String)
    /// Server: a message that passed every check of Docs/MTProto.md §1.6 carries a salt the server does not
    /// accept (Docs/MTProto.md §2.3). It was not processed and the session is unchanged (its msg_id is not
    /// consumed); answer it with ``Session/encryptBadServerSalt(answering:now:using:)``.
    case badServerSalt(RejectedSalt)
    /// Server: an authentic message whose msg_id lies outside the time window (Docs/MTProto.md §1.6.9):
    /// not processed, the session unchanged; answer it with
    /// ``Session/encryptBadMsgNotification(answering:now:using:)`` (code 16 or 17), from which the
    /// client corrects its clock and sends it again.
    case badMessageTime(RejectedTime)

    // MARK: Handshake
    /// A handshake message that does not fit the current state, or whose nonces do not match.
    /// The text is for people; code that must react to a particular failure gets its own case.
    case handshakeFailed(String)
    /// Server: the client's `p_q_inner_data_dc` names another DC than the server's (Docs/MTProto.md §3.2; the
    /// server answers transport error −444). `requested` is the client's `dc` as sent (test DCs add
    /// 10000, media DCs are negative), `served` the server's configured DC.
    case wrongDC(requested: Int32, served: Int32)
    /// The DH parameters or values failed a check of Docs/MTProto.md §4.
    case dhCheckFailed(String)
    /// No RSA key with one of the offered fingerprints is known.
    case unknownFingerprint
    /// A primitive of the Rampart module refused its input.
    case primitive(RampartError)

    // MARK: Transports
    /// A transport frame, header or length is invalid.
    case invalidFrame(String)
    /// A frame announces more than the transport's length limit; nothing was allocated for it.
    case frameTooLarge(Int)
    /// The first bytes of a connection match no known transport.
    case unknownTransport
    /// A full-transport frame has a bad CRC32 or sequence number.
    case frameCheckFailed(String)
    /// A fake-TLS record or server hello failed verification.
    case fakeTLSFailed(String)
    /// An MTProxy secret of the wrong length or kind (Docs/MTProto.md §6.6: 16 bytes, `dd` + 16, `ee` + 16 + domain).
    case invalidProxySecret(String)
    /// A stored auth key (``AuthKeyRecord``) does not open with this password, or was altered.
    case wrongPassword
    /// A stored auth key record is not in the format ``AuthKeyRecord`` writes.
    case invalidKeyRecord(String)
}

extension MTProtoError: CustomStringConvertible {
    /// A one-line reason, lowercase, for logs and command-line tools.
    public var description: String {
        switch self {
        case .truncated: return "TL data ends inside a value"
        case .unexpectedConstructor(let c):
            let hex = String(c, radix: 16)
            return "unexpected TL constructor 0x" + String(repeating: "0", count: max(0, 8 - hex.count)) + hex
        case .malformedTL(let why): return "malformed TL: \(why)"
        case .trailingBytes: return "bytes remain after the TL value"
        case .rejectedMessage: return "encrypted message rejected"
        case .invalidMessage(let why): return "invalid message: \(why)"
        case .invalidAuthKey: return "the auth key is not 256 bytes"
        case .invalidServiceMessage(let why): return "invalid service message: \(why)"
        case .badServerSalt(let r):
            return "message \(hex16(UInt64(bitPattern: r.msgId))) under server salt \(hex16(UInt64(bitPattern: r.salt))) not accepted"
        case .badMessageTime(let r):
            return "message \(hex16(UInt64(bitPattern: r.msgId))) outside the time window (code \(r.code))"
        case .handshakeFailed(let why): return "handshake failed: \(why)"
        case let .wrongDC(requested, served): return "handshake failed: the client asked for DC \(requested), this server is DC \(served)"
        case .dhCheckFailed(let why): return "Diffie-Hellman check failed: \(why)"
        case .unknownFingerprint: return "no known RSA key has one of the offered fingerprints"
        case .primitive(let e): return e.description
        case .invalidFrame(let why): return "invalid transport frame: \(why)"
        case .frameTooLarge(let n): return "frame of \(n) bytes over the transport's length limit"
        case .unknownTransport: return "the first bytes match no known transport"
        case .frameCheckFailed(let why): return "full transport check failed: \(why)"
        case .fakeTLSFailed(let why): return "fake-TLS verification failed: \(why)"
        case .invalidProxySecret(let why): return "invalid MTProxy secret: \(why)"
        case .wrongPassword: return "wrong password for the stored auth key (or the record was altered)"
        case .invalidKeyRecord(let why): return "invalid auth key record: \(why)"
        }
    }
}

/// What ``MTProtoError/badServerSalt(_:)`` reports about the refused message: enough to answer it with
/// `bad_server_salt` in the message's own session (which the server session has not adopted).
public struct RejectedSalt: Sendable, Hashable {
    /// The packet's (outer) msg_id: `bad_msg_id` of the answer.
    public var msgId: Int64
    /// The packet's (outer) seq_no: `bad_msg_seqno` of the answer.
    public var seqNo: Int32
    /// The packet's session_id, in which the answer goes.
    public var sessionId: Int64
    /// The salt the packet carried.
    public var salt: Int64

    public init(msgId: Int64, seqNo: Int32, sessionId: Int64, salt: Int64) {
        self.msgId = msgId
        self.seqNo = seqNo
        self.sessionId = sessionId
        self.salt = salt
    }
}

/// What a server needs to answer a message whose msg_id is outside the time window with
/// `bad_msg_notification` (Docs/MTProto.md §2.5).
public struct RejectedTime: Sendable, Hashable {
    /// The packet's (outer) msg_id: `bad_msg_id` of the answer.
    public var msgId: Int64
    /// The packet's (outer) seq_no: `bad_msg_seqno` of the answer.
    public var seqNo: Int32
    /// The packet's session_id, in which the answer goes.
    public var sessionId: Int64
    /// 16 (msg_id too low: the client's clock is behind) or 17 (too high: ahead).
    public var code: Int32

    public init(msgId: Int64, seqNo: Int32, sessionId: Int64, code: Int32) {
        self.msgId = msgId
        self.seqNo = seqNo
        self.sessionId = sessionId
        self.code = code
    }
}

/// `0x` and 16 lower-case hex digits.
private func hex16(_ v: UInt64) -> String {
    let s = String(v, radix: 16)
    return "0x" + String(repeating: "0", count: 16 - s.count) + s
}
