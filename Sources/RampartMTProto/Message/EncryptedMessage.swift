// The MTProto 2.0 encrypted message (Docs/MTProto.md §1.1–§1.3, §1.6): auth_key_id ‖ msg_key ‖ AES-256-IGE
// ciphertext of salt ‖ session_id ‖ msg_id ‖ seq_no ‖ message_data_length ‖ message_data ‖ padding.

/// The plaintext header fields of an encrypted message (Docs/MTProto.md §1.1).
public struct MessageHeader: Sendable, Hashable {
    /// `salt`: the current server salt (Docs/MTProto.md §2.3).
    public var salt: Int64
    /// `session_id`: the client's random session id (Docs/MTProto.md §2.4).
    public var sessionId: Int64
    /// `msg_id` (Docs/MTProto.md §2.1).
    public var msgId: Int64
    /// `seq_no` (Docs/MTProto.md §2.2).
    public var seqNo: Int32

    public init(salt: Int64, sessionId: Int64, msgId: Int64, seqNo: Int32) {
        self.salt = salt
        self.sessionId = sessionId
        self.msgId = msgId
        self.seqNo = seqNo
    }
}

/// An encrypted message that passed every receiver check.
public struct DecryptedMessage: Sendable, Hashable {
    /// The header fields.
    public var header: MessageHeader
    /// `message_data`: the TL body (length a multiple of 4), without padding.
    public var body: [UInt8]
    /// The quick-ack value of this packet (Docs/MTProto.md §1.7), for a server whose transport was asked for one.
    public var quickAck: UInt32
    /// Whether the msg_id passed the time window (or none was checked). False only where the caller
    /// let a message outside it through (a client session, for the service messages that fix its
    /// clock or salt).
    public var isInTimeWindow = true
}

/// Encoding and decoding of MTProto 2.0 encrypted messages (Docs/MTProto.md §1).
///
/// ```swift
/// let (packet, _) = try EncryptedMessage.encrypt(body: ping, header: h, authKey: key,
///                                                direction: .clientToServer, using: &rng)
/// var window = ReplayWindow()
/// let m = try EncryptedMessage.decrypt(packet, authKey: key, direction: .clientToServer,
///                                      sessionId: h.sessionId, replayWindow: &window)
/// ```
///
/// ``Session`` builds on this and adds msg_id, seq_no, salts, containers and acks.
public enum EncryptedMessage {
    /// The largest `message_data` accepted or produced: 16 MiB, the transports' frame limit.
    public static let maxBodyLength = 1 << 24

    /// The `auth_key_id` a packet starts with (Docs/MTProto.md §1.1), read as ``AuthKey/id`` is: 0 marks an
    /// unencrypted message (``UnencryptedMessage``), anything else names the key to decrypt it with.
    /// Nil for a packet shorter than 8 bytes; nothing else is checked.
    public static func authKeyId<P: Collection<UInt8>>(of packet: P) -> UInt64? {
        withContiguousBytes(packet) { p in p.count >= 8 ? p.baseAddress!.loadLE64(0) : nil }
    }

    /// A packet from a padded-intermediate transport with its 0–15 trailing junk bytes dropped
    /// (Docs/MTProto.md §9.5): auth_key_id and msg_key, then whole 16-byte blocks. Other transports (`padded`
    /// false) deliver the packet unchanged.
    public static func droppingTransportJunk(_ packet: [UInt8], padded: Bool) -> [UInt8] {
        guard padded, packet.count > 24 else { return packet }
        return Array(packet.dropLast((packet.count - 24) % 16))
    }

    /// Encrypts one message (Docs/MTProto.md §1.1–§1.3).
    ///
    /// Writes the plaintext `salt ‖ session_id ‖ msg_id ‖ seq_no ‖ message_data_length ‖ body ‖
    /// padding` straight into the output buffer (the only allocation besides the AES key schedule),
    /// computes `msg_key` over it with the sender's `x`, derives the AES-256-IGE key and IV and
    /// encrypts in place.
    ///
    /// - Parameters:
    ///   - body: `message_data`, a serialized TL object; its length must be a multiple of 4.
    ///   - direction: who sends: `.clientToServer` (x = 0) or `.serverToClient` (x = 8).
    ///   - padding: chooses `P` (12...1024); the padding bytes come from `rng`.
    /// - Returns: the packet `auth_key_id ‖ msg_key ‖ encrypted_data`, and its quick-ack value (§1.7).
    /// - Throws: ``MTProtoError/invalidMessage(_:)`` for a body that is not a multiple of 4 bytes or is
    ///   longer than ``maxBodyLength``.
    public static func encrypt<B: Collection<UInt8>, R: RandomNumberGenerator>(
        body: B, header: MessageHeader, authKey: AuthKey, direction: MTProtoDirection,
        padding: PaddingPolicy = .random, using rng: inout R
    ) throws(MTProtoError) -> (packet: [UInt8], quickAck: UInt32) {
        let bodyLength = body.count
        guard bodyLength % 4 == 0 else { throw .invalidMessage("message_data length \(bodyLength) is not a multiple of 4") }
        guard bodyLength <= maxBodyLength else { throw .invalidMessage("message_data longer than \(maxBodyLength) bytes") }
        let pad = padding.paddingLength(bodyLength: bodyLength, using: &rng)
        let plainLength = 32 + bodyLength + pad
        var quickAck: UInt32 = 0
        let packet = withContiguousBytes(body) { b in
            [UInt8](unsafeUninitializedCapacity: 24 + plainLength) { out, count in
                let o = UnsafeMutableRawPointer(out.baseAddress!)
                let pt = o + 24
                pt.storeLE64(UInt64(bitPattern: header.salt), 0)
                pt.storeLE64(UInt64(bitPattern: header.sessionId), 8)
                pt.storeLE64(UInt64(bitPattern: header.msgId), 16)
                pt.storeLE32(UInt32(bitPattern: header.seqNo), 24)
                pt.storeLE32(UInt32(truncatingIfNeeded: bodyLength), 28)
                if bodyLength > 0 { (pt + 32).copyMemory(from: b.baseAddress!, byteCount: bodyLength) }
                fillRandom(UnsafeMutableRawBufferPointer(start: pt + 32 + bodyLength, count: pad), using: &rng)
                quickAck = seal(o, plainLength: plainLength, authKey: authKey, x: direction.x)
                count = 24 + plainLength
            }
        }
        return (packet, quickAck)
    }

    /// Decrypts `packet` and applies every receiver check of Docs/MTProto.md §1.6.
    ///
    /// Checks, in order: the length (24 bytes of header plus at least 48 bytes of ciphertext, a
    /// multiple of 16); `auth_key_id`; `msg_key` recomputed over the whole decrypted plaintext
    /// (padding included) with the sender's `x` and compared in constant time; the length field
    /// (≥ 0, a multiple of 4, inside the plaintext) and the padding length (12...1024);
    /// `session_id` (when `sessionId` is given); msg_id parity for the sender (client ids ≡ 0 mod 4,
    /// server ids odd); the time window (only when `serverTime` is given, i.e. once the clock
    /// offset is known); the replay window (§1.6.8).
    ///
    /// Every failure throws the same ``MTProtoError/rejectedMessage``, whether it comes before or
    /// after the msg_key comparison; no plaintext is returned and the temporary plaintext is wiped.
    /// `replayWindow` changes only on success (the msg_id is recorded).
    ///
    /// - Parameters:
    ///   - direction: the *sender's* direction: a client decrypts `.serverToClient` (x = 8).
    ///   - sessionId: the expected `session_id`, or `nil` to accept any (a server meeting a new
    ///     session).
    ///   - serverTime: the current server time in Unix seconds, or `nil` before the offset is known.
    @_specialize(where P == [UInt8])
    public static func decrypt<P: Collection<UInt8>>(
        _ packet: P, authKey: AuthKey, direction: MTProtoDirection, sessionId: Int64?,
        replayWindow: inout ReplayWindow, serverTime: Double? = nil, timeWindow: TimeWindow = .standard
    ) throws(MTProtoError) -> DecryptedMessage {
        guard let m = open(packet, authKey: authKey, direction: direction, sessionId: sessionId,
                           serverTime: serverTime, timeWindow: timeWindow, window: replayWindow),
              replayWindow.insert(m.header.msgId)
        else {
            throw .rejectedMessage
        }
        return m
    }

    // MARK: Internals

    /// Decrypts and checks everything except recording the id: the replay window is consulted
    /// (`window`) but not changed. Returns nil on any failure.
    @_specialize(where P == [UInt8])
    static func open<P: Collection<UInt8>>(
        _ packet: P, authKey: AuthKey, direction: MTProtoDirection, sessionId: Int64?,
        serverTime: Double?, timeWindow: TimeWindow, window: ReplayWindow? = nil, allowOutsideTimeWindow: Bool = false
    ) -> DecryptedMessage? {
        withContiguousBytes(packet) { p -> DecryptedMessage? in
            let n = p.count
            guard n >= 24 + 48, (n - 24) % 16 == 0, let base = p.baseAddress else { return nil }
            guard base.loadLE64(0) == authKey.id else { return nil }
            let plainLength = n - 24
            var ok = false
            var header = MessageHeader(salt: 0, sessionId: 0, msgId: 0, seqNo: 0)
            var quickAck: UInt32 = 0
            var bodyLength = 0
            var plain = [UInt8](unsafeUninitializedCapacity: plainLength) { out, count in
                let pt = out.baseAddress!
                // Decrypted straight from the packet (no copy first): unseal writes every byte.
                count = plainLength
                guard let qa = unseal(UnsafeMutableRawPointer(pt), from: base + 24, plainLength: plainLength, msgKey: base + 8,
                                      authKey: authKey, x: direction.x) else { return }
                quickAck = qa
                let raw = UnsafeRawPointer(pt)
                header = MessageHeader(salt: Int64(bitPattern: raw.loadLE64(0)),
                                       sessionId: Int64(bitPattern: raw.loadLE64(8)),
                                       msgId: Int64(bitPattern: raw.loadLE64(16)),
                                       seqNo: Int32(bitPattern: raw.loadLE32(24)))
                let length = Int(Int32(bitPattern: raw.loadLE32(28)))
                // §1.6.5: length ≥ 0, a multiple of 4, inside the plaintext; padding in 12...1024.
                guard length >= 0, length % 4 == 0, length <= plainLength - 32 else { return }
                let pad = plainLength - 32 - length
                guard pad >= 12, pad <= 1024 else { return }
                bodyLength = length
                ok = true
            }
            var inTime = true
            if ok {
                inTime = serverTime.map { timeWindow.accepts(msgId: header.msgId, serverTime: $0) } ?? true
                ok = (sessionId.map { $0 == header.sessionId } ?? true)
                    && MessageID.hasValidParity(header.msgId, sender: direction)
                    && (inTime || allowOutsideTimeWindow)
                    && (window?.accepts(header.msgId) ?? true)
            }
            guard ok else {
                plain.secureWipe()
                return nil
            }
            // Move message_data to the front and drop header and padding in place (no new allocation).
            plain.withUnsafeMutableBytes { b in
                let q = b.baseAddress!
                if bodyLength > 0 { q.copyMemory(from: q + 32, byteCount: bodyLength) }
                secureZero(UnsafeMutableRawBufferPointer(rebasing: b[bodyLength...]))
            }
            plain.removeLast(plainLength - bodyLength)
            return DecryptedMessage(header: header, body: plain, quickAck: quickAck, isInTimeWindow: inTime)
        }
    }

    /// The session_id a packet claims: bytes 8..<16 of its first plaintext block, decrypted with the
    /// packet's msg_key **before** that is checked. Not authenticated: a server uses it only to choose
    /// which ``Session`` (of several under one auth key) then decrypts and checks the whole packet.
    /// Nil when the packet is too short or under another key.
    @_specialize(where P == [UInt8])
    package static func claimedSessionId<P: Collection<UInt8>>(_ packet: P, authKey: AuthKey,
                                                               direction: MTProtoDirection) -> Int64? {
        withContiguousBytes(packet) { p -> Int64? in
            guard p.count >= 24 + 48, (p.count - 24) % 16 == 0, let base = p.baseAddress,
                  base.loadLE64(0) == authKey.id else { return nil }
            var scratch = KDFScratch()
            var block = SIMD16<UInt8>()
            return withUnsafeMutableBytes(of: &scratch) { s -> Int64 in
                let keyIV = s.baseAddress! + 32
                kdfV2(authKey, direction.x, base + 8, into: keyIV)
                withUnsafeMutableBytes(of: &block) { b in
                    b.baseAddress!.copyMemory(from: base + 24, byteCount: 16)
                    AES.IGE.decrypt(b.baseAddress!, blocks: 1, key256: keyIV, iv: keyIV + 32)
                }
                secureZero(s)
                let sid = withUnsafeBytes(of: &block) { Int64(bitPattern: $0.baseAddress!.loadLE64(8)) }
                return declassified(sid)
            }
        }
    }

    /// Encrypts the plaintext at `packet + 24` (`plainLength` bytes, a multiple of 16) in place and
    /// writes auth_key_id and msg_key in front of it. Returns the quick-ack value.
    @inline(__always)
    static func seal(_ packet: UnsafeMutableRawPointer, plainLength: Int, authKey: AuthKey, x: Int) -> UInt32 {
        let pt = packet + 24
        var scratch = KDFScratch()
        let quickAck = withUnsafeMutableBytes(of: &scratch) { s -> UInt32 in
            let large = s.baseAddress!, keyIV = large + 32
            messageKeyLarge(authKey, x, UnsafeRawBufferPointer(start: pt, count: plainLength), into: large)
            packet.storeLE64(authKey.id, 0)
            (packet + 8).copyMemory(from: large + 8, byteCount: 16)
            kdfV2(authKey, x, large + 8, into: keyIV)
            let qa = large.loadLE32(0) | 0x8000_0000
            // Non-throwing by construction (a 32-byte key, whole blocks): no path leaves the packet
            // unencrypted. A length that is not whole blocks is a bug in this module: trap rather
            // than send a plaintext tail.
            precondition(plainLength % 16 == 0, "MTProto plaintext is padded to whole AES blocks")
            AES.IGE.encrypt(pt, blocks: plainLength / 16, key256: keyIV, iv: keyIV + 32)
            secureZero(s)
            return qa
        }
        return quickAck
    }

    /// Decrypts `plainLength` bytes from `source` (nil: in place at `pt`) into `pt` with the key and IV
    /// derived from the packet's `msgKey`, recomputes msg_key over the result and compares it in
    /// constant time. Returns the quick-ack value, or nil on a mismatch. Every byte of `pt` is written
    /// (zeros when `plainLength` is not a whole number of blocks).
    @inline(__always)
    static func unseal(_ pt: UnsafeMutableRawPointer, from source: UnsafeRawPointer? = nil, plainLength: Int, msgKey: UnsafeRawPointer,
                       authKey: AuthKey, x: Int) -> UInt32? {
        var scratch = KDFScratch()
        return withUnsafeMutableBytes(of: &scratch) { s -> UInt32? in
            let large = s.baseAddress!, keyIV = large + 32
            kdfV2(authKey, x, msgKey, into: keyIV)
            guard plainLength % 16 == 0 else {
                secureZero(s)
                pt.initializeMemory(as: UInt8.self, repeating: 0, count: plainLength)
                return nil
            }
            // Decryption and msg_key_large = SHA-256(auth_key[88 + x ..< 120 + x] ‖ plaintext) in one pass
            // (one stitched loop where AES-NI and SHA-NI exist).
            AES.IGE.decryptHashing(pt, from: source, blocks: plainLength / 16, key256: keyIV, iv: keyIV + 32,
                                   prefix: UnsafeRawBufferPointer(start: authKey.pointer(88 + x), count: 32), digest: large)
            let same = ConstantTime.equals(UnsafeRawBufferPointer(start: large + 8, count: 16),
                                           UnsafeRawBufferPointer(start: msgKey, count: 16))
            // Public by design: the quick-ack value (sent in clear by the server) and, once msg_key
            // matched, the authenticated plaintext, which the receiver parses.
            let qa = declassified(large.loadLE32(0) | 0x8000_0000)
            if same { declassify(UnsafeRawPointer(pt), plainLength) }
            secureZero(s)
            return same ? qa : nil
        }
    }
}

/// 96 bytes of stack scratch: msg_key_large (32), then aes_key (32) and aes_iv (32).
struct KDFScratch {
    var a = SIMD32<UInt8>(), b = SIMD64<UInt8>()
}
