// The end-to-end message envelope `message-with-metadata-box` and its legacy form without metadata
// (Docs/Threema.md §2.1, §2.2), the metadata protobuf, and sealing and opening.

import Rampart
import RampartCodecs

/// The envelope flags (Docs/Threema.md §2.1).
public struct MessageFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The server sends a push notification.
    public static let sendPush = MessageFlags(rawValue: 0x01)
    /// The server does not queue the message when the receiver is offline.
    public static let noServerQueuing = MessageFlags(rawValue: 0x02)
    /// The server sends no acknowledgement.
    public static let noServerAck = MessageFlags(rawValue: 0x04)
    /// Reserved; once marked group messages. Carried, never interpreted.
    public static let reservedGroup = MessageFlags(rawValue: 0x10)
    /// Short-lived: the server drops it after 60 s if undelivered.
    public static let shortLived = MessageFlags(rawValue: 0x20)
    /// The receiver sends no delivery receipts.
    public static let noDeliveryReceipts = MessageFlags(rawValue: 0x80)
}

/// `MessageMetadata` (`csp-e2e.proto`), the plaintext of the metadata box.
public struct MessageMetadata: Hashable, Sendable {
    /// Padding bytes (field 1); contents are ignored on reading.
    public var padding: [UInt8]
    /// The sender's public nickname (field 2).
    public var nickname: String?
    /// The message ID (field 3, fixed64); must equal the envelope's.
    public var messageID: UInt64
    /// Creation time in Unix milliseconds (field 4).
    public var createdAt: UInt64

    /// Metadata with padding chosen as the Android app does: zero bytes so that padding plus the
    /// nickname's UTF-8 are at least 16 bytes, hiding short nicknames' lengths.
    public init(nickname: String?, messageID: UInt64, createdAt: UInt64) {
        self.nickname = nickname
        self.messageID = messageID
        self.createdAt = createdAt
        padding = [UInt8](repeating: 0, count: max(0, 16 - (nickname?.utf8.count ?? 0)))
    }

    /// Metadata with explicit padding.
    public init(padding: [UInt8], nickname: String?, messageID: UInt64, createdAt: UInt64) {
        self.padding = padding
        self.nickname = nickname
        self.messageID = messageID
        self.createdAt = createdAt
    }

    /// Decodes the protobuf. Unknown fields are skipped; known fields with the wrong wire type or
    /// invalid UTF-8 are errors. Absent fields take protobuf's defaults (empty, nil, 0).
    public init<C: Collection<UInt8>>(decoding bytes: C) throws(ProtobufError) {
        try self.init(reading: ProtobufReader(bytes))
    }

    /// As ``init(decoding:)`` straight from memory: the receive path decodes the metadata where it
    /// was decrypted, without an array and a general field reader. The same grammar and the same
    /// errors as ``init(decoding:)`` (the tests hold the two to each other on random input).
    init(decoding b: UnsafeRawBufferPointer) throws(ProtobufError) {
        var padding: [UInt8] = []
        var nickname: String?
        var id: UInt64 = 0
        var created: UInt64 = 0
        var o = 0
        let end = b.count
        func varint() throws(ProtobufError) -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard o < end else { throw .truncated }
                let byte = b[o]
                o += 1
                if shift == 63 && byte > 1 { throw .varintOverflow }
                result |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return result }
                shift += 7
                if shift > 63 { throw .varintOverflow }
            }
        }
        while o < end {
            let tag = try varint()
            let wire = UInt8(truncatingIfNeeded: tag & 7)
            let number = tag >> 3
            guard number >= 1, number <= (1 << 29) - 1 else { throw .invalidFieldNumber(number) }
            let field = UInt32(number)
            switch wire {
            case 0:
                let v = try varint()
                switch field {
                case 4: created = v
                case 1, 2, 3: throw .wrongWireType(field: field)
                default: break
                }
            case 1:
                guard end - o >= 8 else { throw .truncated }
                let v = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: o, as: UInt64.self))
                o += 8
                switch field {
                case 3: id = v
                case 1, 2, 4: throw .wrongWireType(field: field)
                default: break
                }
            case 2:
                let length = try varint()
                guard length <= UInt64(end - o) else { throw .truncated }
                let value = UnsafeRawBufferPointer(rebasing: b[o..<(o + Int(length))])
                o += Int(length)
                switch field {
                case 1: padding = Self.sharedPadding(value)
                case 2:
                    let text = String(decoding: value, as: UTF8.self)
                    guard text.utf8.elementsEqual(value) else { throw .invalidUTF8(field: 2) }
                    nickname = text
                case 3, 4: throw .wrongWireType(field: field)
                default: break
                }
            case 5:
                guard end - o >= 4 else { throw .truncated }
                o += 4
                if (1...4).contains(field) { throw .wrongWireType(field: field) }
            default:
                throw .unsupportedWireType(wire)
            }
        }
        self.init(padding: padding, nickname: nickname, messageID: id, createdAt: created)
    }

    /// All-zero paddings of the lengths the apps write (0 ..< 32 bytes) share one immutable array
    /// each, so that decoding the usual metadata allocates nothing for its padding.
    private static let zeroPaddings: [[UInt8]] = (0..<32).map { [UInt8](repeating: 0, count: $0) }

    private static func sharedPadding(_ value: UnsafeRawBufferPointer) -> [UInt8] {
        guard value.count < zeroPaddings.count else { return Array(value) }
        var any: UInt8 = 0
        for b in value { any |= b }
        return any == 0 ? zeroPaddings[value.count] : Array(value)
    }

    /// As ``init(decoding:)`` for an array (no generic dispatch).
    public init(decoding bytes: [UInt8]) throws(ProtobufError) {
        try self.init(reading: ProtobufReader(bytes))
    }

    private init(reading reader: ProtobufReader) throws(ProtobufError) {
        var r = reader
        var padding: [UInt8] = []
        var nickname: String?
        var id: UInt64 = 0
        var created: UInt64 = 0
        while let f = try r.next() {
            switch f.number {
            case 1: padding = Array(try f.bytes())
            case 2: nickname = try f.string()
            case 3: id = try f.fixed64()
            case 4: created = try f.varint()
            default: break
            }
        }
        self.init(padding: padding, nickname: nickname, messageID: id, createdAt: created)
    }

    /// The length of ``encoded`` for metadata made by ``init(nickname:messageID:createdAt:)``, from
    /// the nickname's UTF-8 length (`nil`: no nickname).
    static func encodedByteCount(nicknameByteCount: Int?, createdAt: UInt64) -> Int {
        let nick = nicknameByteCount ?? 0
        let pad = max(0, 16 - nick)
        var n = 9                                                         // field 3: tag, fixed64
        if pad > 0 { n += 2 + pad }                                       // field 1: tag, length < 128
        if nicknameByteCount != nil { n += 1 + varintByteCount(UInt64(nick)) + nick }
        if createdAt != 0 { n += 1 + varintByteCount(createdAt) }
        return n
    }

    /// Writes the bytes of ``encoded`` for `MessageMetadata(nickname:messageID:createdAt:)` to `out`
    /// (``encodedByteCount(nicknameByteCount:createdAt:)`` bytes), without an intermediate array.
    static func encode(nickname: UnsafeRawBufferPointer?, messageID: UInt64, createdAt: UInt64,
                       into out: UnsafeMutableRawPointer) {
        var o = 0
        func put(_ b: UInt8) { out.storeBytes(of: b, toByteOffset: o, as: UInt8.self); o += 1 }
        func putVarint(_ v: UInt64) {
            var v = v
            while v >= 0x80 { put(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
            put(UInt8(v))
        }
        let nick = nickname?.count ?? 0
        let pad = max(0, 16 - nick)
        if pad > 0 {
            put(0x0a); put(UInt8(pad))
            (out + o).initializeMemory(as: UInt8.self, repeating: 0, count: pad); o += pad
        }
        if let nickname {
            put(0x12); putVarint(UInt64(nick))
            if nick > 0 { (out + o).copyMemory(from: nickname.baseAddress!, byteCount: nick); o += nick }
        }
        put(0x19); out.storeBytes(of: messageID.littleEndian, toByteOffset: o, as: UInt64.self); o += 8
        if createdAt != 0 { put(0x20); putVarint(createdAt) }
    }

    private static func varintByteCount(_ v: UInt64) -> Int { v == 0 ? 1 : (64 - v.leadingZeroBitCount + 6) / 7 }

    /// The protobuf encoding, fields in ascending order (empty padding and zero values omitted, as
    /// proto3 writers do; the message ID is always written).
    public var encoded: [UInt8] {
        var w = ProtobufWriter()
        if !padding.isEmpty { w.bytes(1, padding) }
        if let nickname { w.string(2, nickname) }
        w.fixed64(3, messageID)
        if createdAt != 0 { w.varint(4, createdAt) }
        return w.bytes
    }
}

/// A message to send.
public struct OutgoingMessage: Sendable {
    /// The random 8-byte message ID (the same for every member of a group send).
    public var messageID: UInt64
    /// Creation time in Unix milliseconds (the envelope carries it in seconds).
    public var createdAt: UInt64
    /// Envelope flags.
    public var flags: MessageFlags
    /// The sender's nickname, sent in the metadata box (and in the legacy field where that is the
    /// only place: legacy format, or a Gateway ID receiver).
    public var nickname: String?
    /// Type and body.
    public var container: MessageContainer

    /// A message; `messageID` is random unless given.
    public init<R: RandomNumberGenerator>(type: MessageType, body: [UInt8], createdAt: UInt64,
                                          flags: MessageFlags = [], nickname: String? = nil,
                                          messageID: UInt64? = nil, using rng: inout R) {
        self.messageID = messageID ?? rng.next()
        self.createdAt = createdAt
        self.flags = flags
        self.nickname = nickname
        container = MessageContainer(type: type, body: body)
    }
}

/// A message that was opened and authenticated.
public struct IncomingMessage: Sendable {
    /// The sender (the envelope's, authenticated by the box).
    public let sender: ThreemaID
    /// The receiver (your identity).
    public let receiver: ThreemaID
    /// The message ID (checked against the metadata's when there is metadata).
    public let messageID: UInt64
    /// Creation time in Unix milliseconds: the metadata's when present, else the envelope's seconds
    /// × 1000.
    public let createdAt: UInt64
    /// Envelope flags.
    public let flags: MessageFlags
    /// The nickname: the metadata's when present, else the legacy envelope field's (if any).
    public let nickname: String?
    /// Type and body.
    public let container: MessageContainer
    /// The 24-byte nonce.
    public let nonce: [UInt8]
    /// The decoded metadata, `nil` for the legacy format.
    public let metadata: MessageMetadata?
}

/// Which envelope layout to write.
public enum EnvelopeFormat: Sendable {
    /// `message-with-metadata-box` (what current apps send).
    case withMetadata
    /// `legacy-message`: no metadata box (metadata length 0).
    case legacy
}

/// A parsed (not yet decrypted) envelope: every field of `message-with-metadata-box`.
///
/// ```swift
/// let envelope = try MessageEnvelope(parsing: bytes)
/// let keys = try cache.keys(for: lookUp(envelope.sender))      // the directory's key for the sender
/// let message = try envelope.open(as: me, keys: keys, nonceStore: &store)
/// ```
public struct MessageEnvelope: Hashable, Sendable {
    /// Header and nonce size without boxes: 64 + 24 bytes.
    public static let overheadByteCount = 88

    public var sender: ThreemaID
    public var receiver: ThreemaID
    public var messageID: UInt64
    /// Creation time, Unix seconds.
    public var createdAt: UInt32
    public var flags: MessageFlags
    /// The reserved byte (0 when written here; carried unchanged when read).
    public var reserved: UInt8
    /// The 32-byte legacy nickname field (zero-padded UTF-8).
    public var legacyNickname: [UInt8]
    /// The metadata box (`tag ‖ ciphertext`), `nil` in the legacy format.
    public var metadataBox: [UInt8]?
    /// The 24-byte nonce of both boxes.
    public var nonce: [UInt8]
    /// The message box (`tag ‖ ciphertext`).
    public var messageBox: [UInt8]

    /// Parses an envelope. No decryption happens here; ``open(as:keys:nonceStore:)`` does it.
    ///
    /// - Throws: ``ThreemaError/malformedEnvelope(_:)``.
    public init<C: Collection<UInt8>>(parsing input: C) throws(ThreemaError) {
        let b = Array(input)
        let h = try b.withUnsafeBytes { p in Result { () throws(ThreemaError) in try Header(p) } }.get()
        let m = h.metadataByteCount
        sender = h.sender
        receiver = h.receiver
        messageID = h.messageID
        createdAt = h.createdAt
        flags = h.flags
        reserved = h.reserved
        legacyNickname = Array(b[32..<64])
        metadataBox = m == 0 ? nil : Array(b[64..<(64 + m)])
        nonce = Array(b[(64 + m)..<(88 + m)])
        messageBox = Array(b[(88 + m)...])
    }

    /// The fixed 64-byte header of an envelope, checked: the lengths fit, both IDs are valid.
    struct Header {
        var sender: ThreemaID, receiver: ThreemaID, messageID: UInt64, createdAt: UInt32
        var flags: MessageFlags, reserved: UInt8, metadataByteCount: Int

        init(sender: ThreemaID, receiver: ThreemaID, messageID: UInt64, createdAt: UInt32, flags: MessageFlags,
             reserved: UInt8, metadataByteCount: Int) {
            self.sender = sender
            self.receiver = receiver
            self.messageID = messageID
            self.createdAt = createdAt
            self.flags = flags
            self.reserved = reserved
            self.metadataByteCount = metadataByteCount
        }

        init(_ b: UnsafeRawBufferPointer) throws(ThreemaError) {
            let minimum = MessageEnvelope.overheadByteCount + Box.tagByteCount
            guard b.count >= minimum else { throw .malformedEnvelope(.tooShort(b.count)) }
            guard let s = try? ThreemaID(packed: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 0, as: UInt64.self))) else {
                throw .malformedEnvelope(.invalidSender)
            }
            guard let r = try? ThreemaID(packed: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self))) else {
                throw .malformedEnvelope(.invalidReceiver)
            }
            let m = Int(b[30]) | Int(b[31]) << 8
            guard m <= b.count - minimum else { throw .malformedEnvelope(.metadataLengthOutOfRange(m)) }
            guard m == 0 || m >= Box.tagByteCount else { throw .malformedEnvelope(.metadataTooShort(m)) }
            sender = s
            receiver = r
            messageID = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
            createdAt = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 24, as: UInt32.self))
            flags = MessageFlags(rawValue: b[28])
            reserved = b[29]
            metadataByteCount = m
        }
    }

    init(sender: ThreemaID, receiver: ThreemaID, messageID: UInt64, createdAt: UInt32, flags: MessageFlags,
         legacyNickname: [UInt8], metadataBox: [UInt8]?, nonce: [UInt8], messageBox: [UInt8]) {
        self.sender = sender
        self.receiver = receiver
        self.messageID = messageID
        self.createdAt = createdAt
        self.flags = flags
        reserved = 0
        self.legacyNickname = legacyNickname
        self.metadataBox = metadataBox
        self.nonce = nonce
        self.messageBox = messageBox
    }

    /// The wire bytes.
    public var encoded: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Self.overheadByteCount + (metadataBox?.count ?? 0) + messageBox.count)
        out += sender.bytes
        out += receiver.bytes
        appendLE(messageID, to: &out)
        appendLE(createdAt, to: &out)
        out.append(flags.rawValue)
        out.append(reserved)
        appendLE(UInt16(metadataBox?.count ?? 0), to: &out)
        out += legacyNickname.prefix(32) + [UInt8](repeating: 0, count: max(0, 32 - legacyNickname.count))
        out += metadataBox ?? []
        out += nonce
        out += messageBox
        return out
    }

    /// The legacy nickname field as text: the bytes before the first zero, if they are UTF-8.
    public var legacyNicknameText: String? { legacyNickname.withUnsafeBytes { Self.legacyText($0) } }

    /// Authenticates and decrypts the envelope for `identity` with the keys shared with its sender.
    ///
    /// Order of checks: receiver, sender/key match, nonce replay (before any decryption), message
    /// box, metadata box, metadata message ID, padding. The nonce is remembered only when all pass;
    /// on any error the store is unchanged and no plaintext is returned.
    ///
    /// - Throws: ``ThreemaError/wrongReceiver``, ``ThreemaError/invalidArgument(_:)`` (keys for
    ///   another contact), ``ThreemaError/replayedNonce``, ``ThreemaError/authenticationFailed``,
    ///   ``ThreemaError/malformedMetadata(_:)``, ``ThreemaError/metadataMessageIDMismatch``,
    ///   ``ThreemaError/invalidPadding``, and the store's own errors.
    public func open<S: NonceStore>(as identity: ThreemaIdentity, keys: PairKeys,
                                    nonceStore: inout S) throws(ThreemaError) -> IncomingMessage {
        guard receiver == identity.id else { throw .wrongReceiver }
        guard keys.contact.id == sender else { throw .invalidArgument("the keys belong to another contact than the sender") }
        let tag = NonceTag(nonce: nonce, identity: identity.id)
        guard !nonceStore.contains(tag) else { throw .replayedNonce }
        let message = try open(keys: keys)
        try nonceStore.insert(tag)
        return message
    }

    /// As ``open(as:keys:nonceStore:)`` without the receiver check and replay protection (for callers
    /// that track nonces themselves, and for tests). The keys must still be those of the sender the
    /// header names: keys of another contact are refused before any decryption (otherwise an envelope
    /// from that contact, its header's sender rewritten, would open and be attributed to the sender the
    /// header names; the sender field is not authenticated by the message box).
    ///
    /// - Throws: ``ThreemaError/invalidArgument(_:)`` (keys for another contact than ``sender``),
    ///   ``ThreemaError/authenticationFailed``, ``ThreemaError/malformedMetadata(_:)``,
    ///   ``ThreemaError/metadataMessageIDMismatch``, ``ThreemaError/invalidPadding``.
    public func open(keys: PairKeys) throws(ThreemaError) -> IncomingMessage {
        guard keys.contact.id == sender else { throw .invalidArgument("the keys belong to another contact than the sender") }
        // The fields are public and mutable, so their lengths are checked again here.
        guard nonce.count == SecretBox.nonceByteCount, messageBox.count >= Box.tagByteCount,
              (metadataBox?.count ?? Box.tagByteCount) >= Box.tagByteCount else { throw .authenticationFailed }
        let header = Header(sender: sender, receiver: receiver, messageID: messageID, createdAt: createdAt,
                            flags: flags, reserved: reserved, metadataByteCount: metadataBox?.count ?? 0)
        return try Self.withBytes(legacyNickname, metadataBox ?? [], nonce, messageBox) { l, m, n, b throws(ThreemaError) in
            try Self.open(header: header, legacyNickname: l, metadataBox: metadataBox == nil ? nil : m, nonce: n,
                          messageBox: b, keys: keys)
        }
    }

    private static func withBytes<T>(
        _ a: [UInt8], _ b: [UInt8], _ c: [UInt8], _ d: [UInt8],
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(ThreemaError) -> T
    ) throws(ThreemaError) -> T {
        let r: Result<T, ThreemaError> = a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in c.withUnsafeBytes { pc in
            d.withUnsafeBytes { pd in
                do throws(ThreemaError) { return .success(try body(pa, pb, pc, pd)) } catch { return .failure(error) }
            }
        } } }
        return try r.get()
    }

    /// The authenticated decryption of an envelope given as its parts (views into the wire bytes or
    /// into a parsed envelope's arrays); lengths checked by the caller (boxes ≥ 16 bytes, nonce 24).
    static func open(header h: Header, legacyNickname: UnsafeRawBufferPointer, metadataBox: UnsafeRawBufferPointer?,
                     nonce: UnsafeRawBufferPointer, messageBox: UnsafeRawBufferPointer,
                     keys: PairKeys) throws(ThreemaError) -> IncomingMessage {
        var plaintext: [UInt8]
        var metadata: MessageMetadata?
        if let metadataBox {
            // Both boxes share the nonce: verified together (their subkeys computed at once), the
            // message box straight into the array that becomes the body, the metadata into
            // temporary (stack) memory where it is decoded and wiped.
            let m = metadataBox.count - Box.tagByteCount, c = messageBox.count - Box.tagByteCount
            // Results through plain variables: a Result of a tuple would instantiate its generic
            // metadata at run time on every message.
            var body: [UInt8] = []
            var failure: ThreemaError? = nil
            withUnsafeTemporaryAllocation(byteCount: max(m, 1), alignment: 16) { raw in
                var ok = false
                body = [UInt8](unsafeUninitializedCapacity: max(c, 1)) { buffer, count in
                    ok = (try? SecretBox.openPair(metadataBox.baseAddress! + Box.tagByteCount, count: m,
                                                  tag: metadataBox.baseAddress!, into: raw.baseAddress!, using: keys.metadataKey,
                                                  messageBox.baseAddress! + Box.tagByteCount, count: c,
                                                  tag: messageBox.baseAddress!, into: buffer.baseAddress!,
                                                  using: keys.sharedKey.symmetricKey, nonce: nonce.baseAddress!)) ?? false
                    count = ok ? c : 0
                }
                guard ok else {
                    failure = .authenticationFailed
                    return
                }
                defer { secureZero(raw) }
                // Public by design from here: the authenticated plaintexts, which the receiver
                // parses. Tells the constant-time checker; no effect otherwise.
                declassify(raw.baseAddress!, m)
                body.withUnsafeBytes { declassify($0.baseAddress!, $0.count) }
                do throws(ProtobufError) {
                    metadata = try MessageMetadata(decoding: UnsafeRawBufferPointer(rebasing: raw[..<m]))
                } catch {
                    body.secureWipe()
                    failure = .malformedMetadata(error)
                }
            }
            if let failure { throw failure }
            plaintext = body
            guard metadata?.messageID == h.messageID else {
                plaintext.secureWipe()
                throw .metadataMessageIDMismatch
            }
        } else {
            // The message box straight into the array that becomes the body (no intermediate copy).
            guard let p = openBox(messageBox, nonce: nonce, key: keys.sharedKey.symmetricKey) else {
                throw .authenticationFailed
            }
            plaintext = p
            plaintext.withUnsafeBytes { if let p = $0.baseAddress { declassify(p, $0.count) } }
        }
        let container: MessageContainer
        do { container = try MessageContainer(consuming: &plaintext) } catch {
            plaintext.secureWipe()
            throw error
        }
        return IncomingMessage(
            sender: h.sender, receiver: h.receiver, messageID: h.messageID,
            createdAt: metadata?.createdAt ?? UInt64(h.createdAt) * 1000, flags: h.flags,
            nickname: metadata?.nickname ?? legacyText(legacyNickname), container: container, nonce: Array(nonce),
            metadata: metadata)
    }

    /// The legacy nickname field as text: the bytes before the first zero, if they are UTF-8.
    static func legacyText(_ field: UnsafeRawBufferPointer) -> String? {
        let bytes = field.prefix { $0 != 0 }
        return bytes.isEmpty ? nil : String(validating: bytes, as: UTF8.self)
    }

    /// Verifies and decrypts a `tag ‖ ciphertext` secretbox (at least 16 bytes) into a new array, or
    /// `nil` when the tag does not match (nothing is released then).
    private static func openBox(_ box: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, key: SymmetricKey) -> [UInt8]? {
        let n = box.count - Box.tagByteCount
        var ok = false
        // Capacity at least 1, so that the buffer has an address even for an empty plaintext.
        let out = [UInt8](unsafeUninitializedCapacity: max(n, 1)) { buffer, count in
            ok = (try? SecretBox.open(box.baseAddress! + Box.tagByteCount, count: n, tag: box.baseAddress!,
                                      into: buffer.baseAddress!, using: key, nonce: nonce.baseAddress!)) ?? false
            count = ok ? n : 0
        }
        return ok ? out : nil
    }
}

/// Sealing end-to-end messages.
public enum EndToEnd {
    /// The sender of an envelope, from its header alone (to look up the sender's key before
    /// ``open(_:as:keys:nonceStore:)``). Nothing is decrypted or authenticated: treat the result as a
    /// claim until the envelope opens.
    ///
    /// - Throws: ``ThreemaError/malformedEnvelope(_:)``.
    public static func sender(of envelope: [UInt8]) throws(ThreemaError) -> ThreemaID {
        try envelope.withUnsafeBytes { p in Result { () throws(ThreemaError) in try MessageEnvelope.Header(p) } }.get().sender
    }

    /// Parses, authenticates and decrypts the wire bytes of an envelope for `identity` in one pass,
    /// without the intermediate arrays of ``MessageEnvelope`` (the boxes are opened where they lie).
    /// The checks and their order are those of ``MessageEnvelope/open(as:keys:nonceStore:)``, after
    /// the header checks of ``MessageEnvelope/init(parsing:)``.
    ///
    /// - Throws: ``ThreemaError/malformedEnvelope(_:)`` and the errors of
    ///   ``MessageEnvelope/open(as:keys:nonceStore:)``.
    public static func open<S: NonceStore>(_ envelope: [UInt8], as identity: ThreemaIdentity, keys: PairKeys,
                                           nonceStore: inout S) throws(ThreemaError) -> IncomingMessage {
        try withParts(envelope) { h, l, m, n, b throws(ThreemaError) in
            guard h.receiver == identity.id else { throw .wrongReceiver }
            guard keys.contact.id == h.sender else {
                throw .invalidArgument("the keys belong to another contact than the sender")
            }
            let tag = NonceTag(nonce: Array(n), identity: identity.id)
            guard !nonceStore.contains(tag) else { throw .replayedNonce }
            let message = try MessageEnvelope.open(header: h, legacyNickname: l, metadataBox: m, nonce: n,
                                                   messageBox: b, keys: keys)
            try nonceStore.insert(tag)
            return message
        }
    }

    /// As ``open(_:as:keys:nonceStore:)`` without the receiver check and replay protection (for
    /// callers that track nonces themselves, and for tests): the one-pass form of
    /// ``MessageEnvelope/open(keys:)``. The keys must be those of the sender the header names.
    ///
    /// - Throws: ``ThreemaError/malformedEnvelope(_:)``, ``ThreemaError/invalidArgument(_:)`` (keys for
    ///   another contact than the header's sender) and the errors of ``MessageEnvelope/open(keys:)``.
    public static func open(_ envelope: [UInt8], keys: PairKeys) throws(ThreemaError) -> IncomingMessage {
        try withParts(envelope) { h, l, m, n, b throws(ThreemaError) in
            guard keys.contact.id == h.sender else {
                throw .invalidArgument("the keys belong to another contact than the sender")
            }
            return try MessageEnvelope.open(header: h, legacyNickname: l, metadataBox: m, nonce: n, messageBox: b, keys: keys)
        }
    }

    /// The checked header and views of the legacy nickname, metadata box, nonce and message box.
    private static func withParts<T>(
        _ envelope: [UInt8],
        _ body: (MessageEnvelope.Header, UnsafeRawBufferPointer, UnsafeRawBufferPointer?, UnsafeRawBufferPointer,
                 UnsafeRawBufferPointer) throws(ThreemaError) -> T
    ) throws(ThreemaError) -> T {
        let r: Result<T, ThreemaError> = envelope.withUnsafeBytes { p in
            do throws(ThreemaError) {
                let h = try MessageEnvelope.Header(p)
                let m = h.metadataByteCount
                return .success(try body(h, UnsafeRawBufferPointer(rebasing: p[32..<64]),
                                         m == 0 ? nil : UnsafeRawBufferPointer(rebasing: p[64..<(64 + m)]),
                                         UnsafeRawBufferPointer(rebasing: p[(64 + m)..<(88 + m)]),
                                         UnsafeRawBufferPointer(rebasing: p[(88 + m)...])))
            } catch { return .failure(error) }
        }
        return try r.get()
    }

    /// Seals `message` from `identity` to the contact of `keys`: a fresh random nonce, the container
    /// padded at random, and (by default) a metadata box. The envelope is built in one buffer and both
    /// boxes are sealed in place.
    ///
    /// - Throws: ``ThreemaError/invalidArgument(_:)`` for a nickname over 32 bytes where the legacy
    ///   field must carry it, or metadata over 65 519 bytes.
    public static func seal<R: RandomNumberGenerator>(
        _ message: OutgoingMessage, from identity: ThreemaIdentity, keys: PairKeys,
        format: EnvelopeFormat = .withMetadata, using rng: inout R
    ) throws(ThreemaError) -> [UInt8] {
        // The randomness first (the caller's generator is generic and, across modules, reached
        // through its witness table), then one non-generic pass that writes the envelope.
        var nonce = randomNonce(&rng)
        let padding = MessageContainer.paddingLength(bodyByteCount: message.container.body.count, using: &rng)
        let r: Result<[UInt8], ThreemaError> = withUnsafeBytes(of: &nonce) { n in
            do throws(ThreemaError) { return .success(try sealBytes(message, sender: identity.id, keys: keys,
                                               withMetadata: format == .withMetadata, nonce: n.baseAddress!,
                                               paddingLength: padding)) } catch { return .failure(error) }
        }
        return try r.get()
    }

    /// Seals with a given nonce and padding length (vectors and tests; reusing a nonce with the
    /// same keys breaks the encryption, so production code uses the random form).
    public static func seal(
        _ message: OutgoingMessage, from identity: ThreemaIdentity, keys: PairKeys,
        format: EnvelopeFormat, nonce: [UInt8], paddingLength: Int
    ) throws(ThreemaError) -> MessageEnvelope {
        guard nonce.count == 24 else { throw .invalidArgument("a nonce has 24 bytes") }
        guard (1...255).contains(paddingLength) else { throw .invalidArgument("padding is 1...255 bytes") }
        let r: Result<[UInt8], ThreemaError> = nonce.withUnsafeBytes { n in
            do throws(ThreemaError) { return .success(try sealBytes(message, sender: identity.id, keys: keys,
                                               withMetadata: format == .withMetadata, nonce: n.baseAddress!,
                                               paddingLength: paddingLength)) } catch { return .failure(error) }
        }
        let bytes = try r.get()
        do { return try MessageEnvelope(parsing: bytes) } catch { throw .invalidArgument("the sealed message does not form an envelope: \(error)") }
    }

    /// A random 24-byte nonce as three words (the bytes of `randomBytes(24, using:)`, in place).
    @inline(__always)
    static func randomNonce<R: RandomNumberGenerator>(_ rng: inout R) -> (UInt64, UInt64, UInt64) {
        (rng.next().littleEndian, rng.next().littleEndian, rng.next().littleEndian)
    }

    /// The envelope in one allocation: header, metadata (encoded in place and sealed there), nonce,
    /// message box (container written and sealed in place). `nonce` points at 24 bytes.
    static func sealBytes(_ message: OutgoingMessage, sender: ThreemaID, keys: PairKeys, withMetadata: Bool,
                          nonce: UnsafeRawPointer, paddingLength: Int) throws(ThreemaError) -> [UInt8] {
        var nickname = message.nickname ?? ""
        let r: Result<[UInt8], ThreemaError> = nickname.withUTF8 { nick in
            do throws(ThreemaError) { return .success(try sealBytes(message, sender: sender, keys: keys, nickname: UnsafeRawBufferPointer(nick),
                                               withMetadata: withMetadata, nonce: nonce, paddingLength: paddingLength)) }
            catch { return .failure(error) }
        }
        return try r.get()
    }

    private static func sealBytes(_ message: OutgoingMessage, sender: ThreemaID, keys: PairKeys,
                                  nickname: UnsafeRawBufferPointer, withMetadata: Bool, nonce: UnsafeRawPointer,
                                  paddingLength: Int) throws(ThreemaError) -> [UInt8] {
        let receiver = keys.contact.id
        let legacyNeeded = !withMetadata || receiver.isGatewayID
        if legacyNeeded, nickname.count > 32 { throw .invalidArgument("a legacy nickname has at most 32 bytes") }
        let metadataLength = withMetadata
            ? MessageMetadata.encodedByteCount(nicknameByteCount: message.nickname == nil ? nil : nickname.count,
                                               createdAt: message.createdAt)
            : 0
        let metaBoxLength = withMetadata ? metadataLength + 16 : 0
        guard metaBoxLength <= Int(UInt16.max) else { throw .invalidArgument("metadata too long") }
        let body = message.container.body
        let containerLength = 1 + body.count + paddingLength
        let total = MessageEnvelope.overheadByteCount + metaBoxLength + 16 + containerLength
        var failed = false
        let out = [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
            let p = UnsafeMutableRawPointer(buffer.baseAddress!)
            p.storeBytes(of: sender.packed.littleEndian, toByteOffset: 0, as: UInt64.self)
            p.storeBytes(of: receiver.packed.littleEndian, toByteOffset: 8, as: UInt64.self)
            p.storeBytes(of: message.messageID.littleEndian, toByteOffset: 16, as: UInt64.self)
            p.storeBytes(of: UInt32(clamping: message.createdAt / 1000).littleEndian, toByteOffset: 24, as: UInt32.self)
            p.storeBytes(of: message.flags.rawValue, toByteOffset: 28, as: UInt8.self)
            p.storeBytes(of: 0, toByteOffset: 29, as: UInt8.self)
            p.storeBytes(of: UInt16(metaBoxLength).littleEndian, toByteOffset: 30, as: UInt16.self)
            (p + 32).initializeMemory(as: UInt8.self, repeating: 0, count: 32)
            if legacyNeeded, nickname.count > 0 { (p + 32).copyMemory(from: nickname.baseAddress!, byteCount: nickname.count) }
            let n = p + 64 + metaBoxLength
            n.copyMemory(from: nonce, byteCount: 24)
            let boxTag = n + 24, c = n + 24 + 16
            c.storeBytes(of: message.container.type.rawValue, as: UInt8.self)
            body.withUnsafeBytes { if $0.count > 0 { (c + 1).copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
            (c + 1 + body.count).initializeMemory(as: UInt8.self, repeating: UInt8(paddingLength), count: paddingLength)
            do {
                if withMetadata {
                    // Both boxes share the nonce: sealed together (their subkeys computed at once).
                    MessageMetadata.encode(nickname: message.nickname == nil ? nil : nickname, messageID: message.messageID,
                                           createdAt: message.createdAt, into: p + 64 + 16)
                    try SecretBox.sealPair(inPlace: p + 64 + 16, count: metadataLength, tag: p + 64, using: keys.metadataKey,
                                           inPlace: c, count: containerLength, tag: boxTag, using: keys.sharedKey.symmetricKey,
                                           nonce: UnsafeRawPointer(n))
                } else {
                    try SecretBox.seal(inPlace: c, count: containerLength, tag: boxTag, using: keys.sharedKey.symmetricKey,
                                       nonce: UnsafeRawPointer(n))
                }
            } catch { failed = true }
            count = total
        }
        // Only a key of the wrong size can fail here, and PairKeys never holds one.
        guard !failed else { throw .invalidArgument("key") }
        return out
    }

    /// Seals one message for every member of a group: each member gets its own envelope and nonce,
    /// the same message ID and container. Keys come from `cache` (one X25519 per new member, none for
    /// members already cached). A member whose key is invalid (small order) is reported in
    /// ``GroupSealResult/refused`` and the others are still sealed.
    public static func sealForGroup<R: RandomNumberGenerator>(
        _ message: OutgoingMessage, to members: [ThreemaContact], cache: inout PairKeyCache,
        format: EnvelopeFormat = .withMetadata, using rng: inout R
    ) -> GroupSealResult {
        var result = GroupSealResult()
        result.sealed.reserveCapacity(members.count)
        let padding = MessageContainer.paddingLength(bodyByteCount: message.container.body.count, using: &rng)
        for member in members {
            do throws(ThreemaError) {
                let keys = try cache.keys(for: member)
                var nonce = randomNonce(&rng)
                let r: Result<[UInt8], ThreemaError> = withUnsafeBytes(of: &nonce) { n in
                    do throws(ThreemaError) { return .success(try sealBytes(message, sender: cache.identity.id, keys: keys,
                                                       withMetadata: format == .withMetadata, nonce: n.baseAddress!,
                                                       paddingLength: padding)) } catch { return .failure(error) }
                }
                let bytes = try r.get()
                result.sealed.append((member.id, bytes))
            } catch {
                result.refused.append((member.id, error))
            }
        }
        return result
    }
}

/// The outcome of ``EndToEnd/sealForGroup(_:to:cache:format:using:)``.
public struct GroupSealResult: Sendable {
    /// One envelope per member that could be sealed, in member order.
    public var sealed: [(ThreemaID, [UInt8])] = []
    /// Members refused, with the reason (an invalid public key).
    public var refused: [(ThreemaID, ThreemaError)] = []
}
