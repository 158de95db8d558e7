// Unencrypted messages (Docs/MTProto.md §1.1, used by the handshake): auth_key_id = 0 ‖ msg_id ‖
// message_data_length ‖ message_data.

/// Unencrypted MTProto messages, as the auth-key handshake sends them (Docs/MTProto.md §1.1, §3).
///
/// Layout: 8 zero bytes (`auth_key_id = 0`), `msg_id` (int64), `message_data_length` (int32),
/// `message_data`. No salt, session, seq_no or padding.
public enum UnencryptedMessage {
    /// An unencrypted message.
    public struct Message: Sendable, Hashable {
        /// `msg_id`.
        public var msgId: Int64
        /// `message_data`.
        public var body: [UInt8]
    }

    /// Serializes `body` (normally a multiple of 4 bytes) under `msgId`.
    public static func encode(msgId: Int64, body: some Collection<UInt8>) -> [UInt8] {
        var w = TLWriter(capacity: 20 + body.count)
        w.uint64(0)
        w.int64(msgId)
        w.int32(Int32(truncatingIfNeeded: body.count))
        w.raw(body)
        return w.bytes
    }

    /// Decodes a packet strictly: at least 20 bytes, `auth_key_id` zero, a length that is
    /// non-negative, a multiple of 4, at most ``EncryptedMessage/maxBodyLength`` and equal to the
    /// bytes that follow.
    ///
    /// - Parameter allowTrailingBytes: accept bytes after `message_data` (the padded intermediate
    ///   transport appends 0–15 random bytes, Docs/MTProto.md §6.3, §9.5); they are ignored.
    /// - Throws: ``MTProtoError/invalidMessage(_:)``.
    public static func decode(_ packet: some Collection<UInt8>, allowTrailingBytes: Bool = false) throws(MTProtoError) -> Message {
        let b = Array(packet)
        guard b.count >= 20 else { throw .invalidMessage("unencrypted message shorter than 20 bytes") }
        var r = TLReader(b)
        guard (try r.uint64()) == 0 else { throw .invalidMessage("unencrypted message with a non-zero auth_key_id") }
        let msgId = try r.int64()
        let n = Int(try r.int32())
        guard n >= 0, n % 4 == 0, n <= EncryptedMessage.maxBodyLength else {
            throw .invalidMessage("unencrypted message_data_length \(n)")
        }
        guard allowTrailingBytes ? n <= r.remaining : n == r.remaining else {
            throw .invalidMessage("unencrypted message_data_length \(n) does not match the \(r.remaining) bytes that follow")
        }
        return Message(msgId: msgId, body: try r.raw(n))
    }
}
