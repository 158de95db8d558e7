// Binding a temporary auth key to a permanent one (Docs/MTProto.md §5): `auth.bindTempAuthKey` with its
// `bind_auth_key_inner`, encrypted MTProto 1.0 style (msg_key v1, KDF v1 with x = 0) under the
// permanent key. The client builds the request; the server verifies it.

/// `auth.bindTempAuthKey` and `bind_auth_key_inner` (Docs/MTProto.md §5).
public enum TempKeyBinding {
    /// What a verified binding says.
    public struct Binding: Sendable, Equatable {
        public var permanentKeyId: UInt64
        public var temporaryKeyId: UInt64
        public var nonce: Int64
        public var expiresAt: Int32
        public var temporarySessionId: Int64
    }

    /// An `auth.bindTempAuthKey` call whose randomness is drawn but whose msg_id is not known yet: the
    /// body embeds the msg_id and session of the message that carries it, so a request layer builds
    /// it when it packs the message (and again, with the new msg_id, for every re-send).
    public struct Request: Sendable {
        public let permanentKey: AuthKey
        public let temporaryKey: AuthKey
        /// `expires_at`, unix seconds.
        public let expiresAt: Int32
        /// The call's and the inner object's `nonce`.
        public let nonce: Int64
        /// 16 bytes standing in for salt and session, then the 8 padding bytes.
        let filler: [UInt8]

        /// Draws the randomness: the nonce, then the 16 bytes standing in for salt and session, then
        /// the padding (the order ``TempKeyBinding/makeRequest(permanentKey:temporaryKey:temporarySessionId:expiresAt:msgId:using:)`` uses).
        public init<R: RandomNumberGenerator>(permanentKey: AuthKey, temporaryKey: AuthKey, expiresAt: Int32, using rng: inout R) {
            self.permanentKey = permanentKey
            self.temporaryKey = temporaryKey
            self.expiresAt = expiresAt
            nonce = Int64(bitPattern: rng.next())
            filler = MTProtoRandom.bytes(16, using: &rng) + MTProtoRandom.bytes(8, using: &rng)
        }

        /// A call whose randomness was drawn before (a restored connection's pending binding).
        init(permanentKey: AuthKey, temporaryKey: AuthKey, expiresAt: Int32, nonce: Int64, filler: [UInt8]) {
            self.permanentKey = permanentKey
            self.temporaryKey = temporaryKey
            self.expiresAt = expiresAt
            self.nonce = nonce
            self.filler = filler
        }

        /// The call's body for the message `msgId` in session `temporarySessionId` under the
        /// temporary key.
        public func body(msgId: Int64, temporarySessionId: Int64) throws(MTProtoError) -> [UInt8] {
            var inner = TLWriter(capacity: 40)
            inner.constructor(HandshakeConstructor.bindAuthKeyInner)
            inner.int64(nonce)
            inner.uint64(temporaryKey.id)
            inner.uint64(permanentKey.id)
            inner.int64(temporarySessionId)
            inner.int32(expiresAt)
            var plain = TLWriter(capacity: 80)
            plain.raw(filler[0..<16])
            plain.int64(msgId)
            plain.int32(0)
            plain.int32(Int32(inner.bytes.count))
            plain.raw(inner.bytes)
            let msgKey = MessageKey.v1(plaintext: plain.bytes)
            var padded = plain.bytes + filler[16..<(16 + (16 - plain.bytes.count % 16) % 16)]
            defer { padded.withUnsafeMutableBytes { secureZero($0) } }
            var (key, iv) = try MessageKDF.v1(authKey: permanentKey, messageKey: msgKey, direction: .clientToServer)
            defer { key.withUnsafeMutableBytes { secureZero($0) }; iv.withUnsafeMutableBytes { secureZero($0) } }
            let encrypted: [UInt8]
            do {
                encrypted = try AES.IGE.encrypt(padded, using: try AES.Cipher(key: key), iv: iv)
            } catch {
                throw .primitive(error)
            }
            var w = TLWriter(capacity: 128)
            w.constructor(HandshakeConstructor.bindTempAuthKey)
            w.uint64(permanentKey.id)
            w.int64(nonce)
            w.int32(expiresAt)
            w.tlBytes(permanentKey.idBytes + msgKey + encrypted)
            return w.bytes
        }
    }

    /// The body of `auth.bindTempAuthKey(perm_auth_key_id, nonce, expires_at, encrypted_message)`,
    /// to be sent as a content-related message with msg_id `msgId` in session `temporarySessionId`
    /// under the temporary key. Randomness: the nonce, then the 16 bytes standing in for salt and
    /// session, then the padding.
    public static func makeRequest<R: RandomNumberGenerator>(permanentKey: AuthKey, temporaryKey: AuthKey,
                                                             temporarySessionId: Int64, expiresAt: Int32, msgId: Int64,
                                                             using rng: inout R) throws(MTProtoError) -> [UInt8] {
        try Request(permanentKey: permanentKey, temporaryKey: temporaryKey, expiresAt: expiresAt, using: &rng)
            .body(msgId: msgId, temporarySessionId: temporarySessionId)
    }

    /// Verifies an `auth.bindTempAuthKey` body that arrived as message `outerMsgId` in session
    /// `sessionId` under `temporaryKey`. `permanentKey` looks up a permanent key by its id. Checks
    /// the msg_key (constant time), the inner length and padding, and that nonce, perm_auth_key_id
    /// and expires_at match the outer call, temp_auth_key_id the key the call came on,
    /// temp_session_id its session and the inner msg_id the outer one.
    ///
    /// - Throws: ``MTProtoError/handshakeFailed(_:)`` (the server answers `ENCRYPTED_MESSAGE_INVALID`).
    public static func verify(_ body: [UInt8], outerMsgId: Int64, temporaryKey: AuthKey, sessionId: Int64,
                              permanentKey: (UInt64) -> AuthKey?) throws(MTProtoError) -> Binding {
        let invalid = MTProtoError.handshakeFailed("ENCRYPTED_MESSAGE_INVALID")
        var r = TLReader(body)
        try r.expect(HandshakeConstructor.bindTempAuthKey)
        let permId = try r.uint64()
        let nonce = try r.int64()
        let expiresAt = try r.int32()
        let message = try r.tlBytes(maxLength: 1024)
        try r.finish()
        guard let perm = permanentKey(permId) else { throw invalid }
        guard message.count >= 24 + 16, (message.count - 24) % 16 == 0,
              ConstantTime.equals(message[0..<8], perm.idBytes) else { throw invalid }
        let msgKey = Array(message[8..<24])
        var (key, iv) = try MessageKDF.v1(authKey: perm, messageKey: msgKey, direction: .clientToServer)
        defer { key.withUnsafeMutableBytes { secureZero($0) }; iv.withUnsafeMutableBytes { secureZero($0) } }
        var plain: [UInt8]
        do {
            plain = try AES.IGE.decrypt(message[24...], using: try AES.Cipher(key: key), iv: iv)
        } catch {
            throw invalid
        }
        defer { plain.withUnsafeMutableBytes { secureZero($0) } }
        var p = TLReader(plain)
        try p.skip(16)
        let innerMsgId = try p.int64()
        _ = try p.int32()
        let length = Int(try p.int32())
        guard length == 40, 32 + length <= plain.count, plain.count - 32 - length < 16 else { throw invalid }
        guard ConstantTime.equals(MessageKey.v1(plaintext: plain[0..<(32 + length)]), msgKey) else { throw invalid }
        try p.expect(HandshakeConstructor.bindAuthKeyInner)
        let innerNonce = try p.int64()
        let tempId = try p.uint64()
        let innerPermId = try p.uint64()
        let tempSession = try p.int64()
        let innerExpires = try p.int32()
        guard innerNonce == nonce, tempId == temporaryKey.id, innerPermId == permId, tempSession == sessionId,
              innerExpires == expiresAt, innerMsgId == outerMsgId else { throw invalid }
        return Binding(permanentKeyId: permId, temporaryKeyId: tempId, nonce: nonce, expiresAt: expiresAt,
                       temporarySessionId: tempSession)
    }
}
