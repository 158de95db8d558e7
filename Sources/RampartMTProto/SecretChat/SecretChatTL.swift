// The end-to-end TL schema of secret chats (Docs/MTProto.md §7.5; tdlib `secret_api.tl`): the
// `decryptedMessageLayer` envelope, the message forms of layers 8, 23, 46 and 73+, service messages and
// every action, the media and entities a layer-144 client needs. Values encode with `TLWriter` and decode
// strictly: every decoder returns a value or a typed ``SecretChatError`` for any input, never traps, and
// allocates nothing for a count or a length before the bytes it announces are present (vector counts go
// through `TLReader.vectorCount`, which checks them against the remaining bytes). The schema has no
// recursion (no message contains a message), so the nesting depth is fixed by the types.

extension SecretChat {
    /// A value of the secret-chat TL schemas (end-to-end or API layer) that encodes itself with a
    /// `TLWriter` and decodes strictly from a `TLReader`.
    public protocol TLObject: Equatable, Sendable {
        /// Appends the boxed serialization (constructor id first) to `writer`.
        func encode(into writer: inout TLWriter)
        /// Reads one boxed value at the reader's position. On an error the reader's position is
        /// unspecified: discard the reader.
        static func decode(from reader: inout TLReader) throws(SecretChatError) -> Self
    }
}

extension SecretChat.TLObject {
    /// The boxed serialization of the value.
    ///
    /// A `bytes` or `string` field of 2²⁴ bytes or more cannot be written in TL and traps here: for a
    /// value whose sizes come from outside (a text someone typed, a file's thumbnail) use
    /// ``serialize()``, which throws instead.
    public var serialized: [UInt8] {
        var w = TLWriter()
        encode(into: &w)
        return w.bytes
    }

    /// The boxed serialization of the value, checked: a `bytes` or `string` field longer than
    /// `TLWriter.maxBytesLength` (2²⁴ − 1 bytes) throws instead of trapping as ``serialized`` does.
    /// The whole may still exceed what a message carries (``SecretChat/Envelope/maxTLLength``);
    /// ``SecretChat/Envelope/encrypt(_:key:sender:padding:using:)`` checks that.
    /// - Throws: ``SecretChatError/invalidPlaintext(_:)``; what was written is wiped.
    public func serialize() throws(SecretChatError) -> [UInt8] {
        var w = TLWriter(recordingOversizedValues: ())
        encode(into: &w)
        guard !w.skippedOversizedValue else {
            w.wipe()
            throw .invalidPlaintext("a TL bytes or string field longer than \(TLWriter.maxBytesLength) bytes")
        }
        return w.bytes
    }

    /// Decodes a value that must fill `bytes` exactly (trailing bytes are an error).
    public static func decode(_ bytes: some Collection<UInt8>) throws(SecretChatError) -> Self {
        var r = TLReader(Array(bytes))
        let v = try decode(from: &r)
        try r.scFinish()
        return v
    }
}

// MARK: Reading with SecretChatError

extension SecretChatError {
    /// The secret-chat error for a TL reader error.
    init(tl error: MTProtoError) {
        switch error {
        case .truncated: self = .malformedTL("truncated")
        case .unexpectedConstructor(let id): self = .unknownConstructor(id)
        case .malformedTL(let s): self = .malformedTL(s)
        case .trailingBytes: self = .malformedTL("trailing bytes")
        default: self = .malformedTL("\(error)")
        }
    }
}

/// Large enough for any real value, small enough that no count is trusted: vector counts are also
/// checked against the bytes that remain.
let secretTLMaxVector = 1 << 20

extension TLReader {
    mutating func scInt32() throws(SecretChatError) -> Int32 {
        do { return try int32() } catch { throw SecretChatError(tl: error) }
    }

    mutating func scUInt32() throws(SecretChatError) -> UInt32 {
        do { return try uint32() } catch { throw SecretChatError(tl: error) }
    }

    mutating func scInt64() throws(SecretChatError) -> Int64 {
        do { return try int64() } catch { throw SecretChatError(tl: error) }
    }

    mutating func scBytes() throws(SecretChatError) -> [UInt8] {
        do { return try tlBytes() } catch { throw SecretChatError(tl: error) }
    }

    mutating func scString() throws(SecretChatError) -> String {
        do { return try string() } catch { throw SecretChatError(tl: error) }
    }

    mutating func scBool() throws(SecretChatError) -> Bool {
        do { return try bool() } catch { throw SecretChatError(tl: error) }
    }

    mutating func scExpect(_ id: UInt32) throws(SecretChatError) {
        do { try expect(id) } catch { throw SecretChatError(tl: error) }
    }

    mutating func scVectorCount(minElementSize: Int) throws(SecretChatError) -> Int {
        do { return try vectorCount(max: secretTLMaxVector, minElementSize: minElementSize) } catch {
            throw SecretChatError(tl: error)
        }
    }

    mutating func scInt64Vector() throws(SecretChatError) -> [Int64] {
        do { return try vectorOfInt64(max: secretTLMaxVector) } catch { throw SecretChatError(tl: error) }
    }

    /// Reads a `flags:#` word and refuses bits outside `allowed` (a field of a layer this code does not
    /// know would follow, so the rest could not be read reliably).
    mutating func scFlags(allowed: UInt32) throws(SecretChatError) -> UInt32 {
        let f = try scUInt32()
        guard f & ~allowed == 0 else {
            throw SecretChatError.malformedTL(String(format16: f & ~allowed, prefix: "unknown flag bits "))
        }
        return f
    }

    func scFinish() throws(SecretChatError) {
        guard isAtEnd else { throw SecretChatError.malformedTL("trailing bytes") }
    }
}

extension String {
    /// `prefix` followed by `v` in hex (no Foundation).
    init(format16 v: UInt32, prefix: String) {
        self = prefix + "0x" + String(v, radix: 16)
    }
}

// MARK: Constructor ids

extension SecretChat {
    /// Constructor ids of the end-to-end schema (tdlib `secret_api.tl`, Docs/MTProto.md §7.5).
    public enum Constructor {
        /// `decryptedMessageLayer#1be31789`
        public static let decryptedMessageLayer: UInt32 = 0x1be3_1789
        /// `decryptedMessage#91cc4674` (layer 73 and later)
        public static let decryptedMessage: UInt32 = 0x91cc_4674
        /// `decryptedMessage46#36b091de`
        public static let decryptedMessage46: UInt32 = 0x36b0_91de
        /// `decryptedMessage23#204d3878`
        public static let decryptedMessage23: UInt32 = 0x204d_3878
        /// `decryptedMessage8#1f814f1f`
        public static let decryptedMessage8: UInt32 = 0x1f81_4f1f
        /// `decryptedMessageService#73164160`
        public static let decryptedMessageService: UInt32 = 0x7316_4160
        /// `decryptedMessageService8#aa48327d`
        public static let decryptedMessageService8: UInt32 = 0xaa48_327d

        /// `decryptedMessageActionRequestKey#f3c9611b`
        public static let actionRequestKey: UInt32 = 0xf3c9_611b
        /// `decryptedMessageActionAcceptKey#6fe1735b`
        public static let actionAcceptKey: UInt32 = 0x6fe1_735b
        /// `decryptedMessageActionCommitKey#ec2e0b9b`
        public static let actionCommitKey: UInt32 = 0xec2e_0b9b
        /// `decryptedMessageActionAbortKey#dd05ec6b`
        public static let actionAbortKey: UInt32 = 0xdd05_ec6b
        /// `decryptedMessageActionNoop#a82fdd63`
        public static let actionNoop: UInt32 = 0xa82f_dd63
        /// `decryptedMessageActionNotifyLayer#f3048883`
        public static let actionNotifyLayer: UInt32 = 0xf304_8883
        /// `decryptedMessageActionResend#511110b0`
        public static let actionResend: UInt32 = 0x5111_10b0
        /// `decryptedMessageActionSetMessageTTL#a1733aec`
        public static let actionSetMessageTTL: UInt32 = 0xa173_3aec
        /// `decryptedMessageActionReadMessages#0c4f40be` (tdlib writes `c4f40be`)
        public static let actionReadMessages: UInt32 = 0x0c4f_40be
        /// `decryptedMessageActionDeleteMessages#65614304`
        public static let actionDeleteMessages: UInt32 = 0x6561_4304
        /// `decryptedMessageActionScreenshotMessages#8ac1f475`
        public static let actionScreenshotMessages: UInt32 = 0x8ac1_f475
        /// `decryptedMessageActionFlushHistory#6719e45c`
        public static let actionFlushHistory: UInt32 = 0x6719_e45c
        /// `decryptedMessageActionTyping#ccb27641`
        public static let actionTyping: UInt32 = 0xccb2_7641

        /// `decryptedMessageMediaEmpty#089f5c4a`
        public static let mediaEmpty: UInt32 = 0x089f_5c4a
        /// `decryptedMessageMediaPhoto#f1fa8d78` (layer 46)
        public static let mediaPhoto: UInt32 = 0xf1fa_8d78
        /// `decryptedMessageMediaDocument#6abd9782` (layer 143: `size:long`)
        public static let mediaDocument: UInt32 = 0x6abd_9782

        /// `documentAttributeImageSize#6c37c15c`
        public static let attributeImageSize: UInt32 = 0x6c37_c15c
        /// `documentAttributeAnimated#11b58939`
        public static let attributeAnimated: UInt32 = 0x11b5_8939
        /// `documentAttributeSticker23#fb0a5727`
        public static let attributeSticker23: UInt32 = 0xfb0a_5727
        /// `documentAttributeVideo23#5910cccb`
        public static let attributeVideo23: UInt32 = 0x5910_cccb
        /// `documentAttributeAudio23#051448e5`
        public static let attributeAudio23: UInt32 = 0x0514_48e5
        /// `documentAttributeFilename#15590068`
        public static let attributeFilename: UInt32 = 0x1559_0068
        /// `documentAttributeAudio45#ded218e0`
        public static let attributeAudio45: UInt32 = 0xded2_18e0
        /// `documentAttributeSticker#3a556302`
        public static let attributeSticker: UInt32 = 0x3a55_6302
        /// `documentAttributeAudio#9852f9c6`
        public static let attributeAudio: UInt32 = 0x9852_f9c6
        /// `documentAttributeVideo#0ef02ce6` (layer 66)
        public static let attributeVideo: UInt32 = 0x0ef0_2ce6
        /// `inputStickerSetShortName#861cc8a0`
        public static let inputStickerSetShortName: UInt32 = 0x861c_c8a0
        /// `inputStickerSetEmpty#ffb62b95`
        public static let inputStickerSetEmpty: UInt32 = 0xffb6_2b95
    }
}

// MARK: decryptedMessageLayer

extension SecretChat {
    /// `decryptedMessageLayer#1be31789 random_bytes:bytes layer:int in_seq_no:int out_seq_no:int
    /// message:DecryptedMessage`: the object a secret-chat message encrypts from layer 17 on
    /// (Docs/MTProto.md §7.3, §7.5). `inSeqNo` and `outSeqNo` are in wire form (§7.4).
    ///
    /// Decoding refuses fewer than 15 random bytes (``SecretChatError/tooFewRandomBytes(_:)``). The
    /// header (random bytes, layer, sequence numbers) is always decoded strictly; a message that uses a
    /// constructor this implementation does not know (an older media form, a venue, a newer action)
    /// becomes ``DecryptedMessage/unsupported(_:)`` with its bytes, so that its sequence numbers can still
    /// be processed. Any other defect refuses the whole layer.
    public struct DecryptedMessageLayer: TLObject {
        /// The fewest random bytes a receiver accepts.
        public static let minimumRandomBytes = 15
        /// The random bytes the random-number initializer writes by default (tdlib sends 31).
        public static let defaultRandomByteCount = 31
        /// The most random bytes the random-number initializer writes.
        public static let maximumRandomByteCount = 1024

        /// `random_bytes`: at least 15.
        public let randomBytes: [UInt8]
        /// The sender's layer.
        public var layer: Int32
        /// `in_seq_no` in wire form.
        public var inSeqNo: Int32
        /// `out_seq_no` in wire form.
        public var outSeqNo: Int32
        /// The message.
        public var message: DecryptedMessage

        /// A layer object with the given random bytes; fewer than 15 is
        /// ``SecretChatError/tooFewRandomBytes(_:)``.
        public init(randomBytes: [UInt8], layer: Int32, inSeqNo: Int32, outSeqNo: Int32,
                    message: DecryptedMessage) throws(SecretChatError) {
            guard randomBytes.count >= Self.minimumRandomBytes else { throw .tooFewRandomBytes(randomBytes.count) }
            guard randomBytes.count < 1 << 24 else { throw .malformedTL("random_bytes longer than 2^24 - 1") }
            self.randomBytes = randomBytes
            self.layer = layer
            self.inSeqNo = inSeqNo
            self.outSeqNo = outSeqNo
            self.message = message
        }

        /// A layer object whose `randomByteCount` random bytes (15…1024, default 31) come from `rng`.
        public init<R: RandomNumberGenerator>(layer: Int32 = SecretChat.Layer.current, inSeqNo: Int32, outSeqNo: Int32,
                                              message: DecryptedMessage,
                                              randomByteCount: Int = DecryptedMessageLayer.defaultRandomByteCount,
                                              using rng: inout R) throws(SecretChatError) {
            guard randomByteCount >= Self.minimumRandomBytes else { throw .tooFewRandomBytes(randomByteCount) }
            guard randomByteCount <= Self.maximumRandomByteCount else {
                throw .malformedTL("more than \(Self.maximumRandomByteCount) random bytes requested")
            }
            try self.init(randomBytes: Rampart.randomBytes(randomByteCount, using: &rng), layer: layer,
                          inSeqNo: inSeqNo, outSeqNo: outSeqNo, message: message)
        }

        public func encode(into w: inout TLWriter) {
            w.constructor(Constructor.decryptedMessageLayer)
            w.tlBytes(randomBytes)
            w.int32(layer)
            w.int32(inSeqNo)
            w.int32(outSeqNo)
            message.encode(into: &w)
        }

        /// Reads a layer object. The message is the last field and runs to the end of the reader (the
        /// plaintext's length prefix bounds it, Docs/MTProto.md §7.3), so an unknown constructor inside it
        /// keeps the whole remainder as ``DecryptedMessage/unsupported(_:)``.
        public static func decode(from r: inout TLReader) throws(SecretChatError) -> DecryptedMessageLayer {
            try r.scExpect(Constructor.decryptedMessageLayer)
            let random = try r.scBytes()
            guard random.count >= minimumRandomBytes else { throw .tooFewRandomBytes(random.count) }
            let layer = try r.scInt32()
            let inSeq = try r.scInt32()
            let outSeq = try r.scInt32()
            let start = r.position
            let message: DecryptedMessage
            do throws(SecretChatError) {
                let m = try DecryptedMessage.decode(from: &r)
                try r.scFinish()
                message = m
            } catch {
                guard case .unknownConstructor(let unknown) = error else { throw error }
                var rest = TLReader(Array(r.buffer[start...]))
                let top = try rest.scUInt32()
                message = .unsupported(UnsupportedMessage(constructor: top, unknownConstructor: unknown,
                                                          bytes: Array(r.buffer[start...])))
                try r.skipToEnd()
            }
            return try DecryptedMessageLayer(randomBytes: random, layer: layer, inSeqNo: inSeq, outSeqNo: outSeq,
                                             message: message)
        }
    }

    /// A message inside a `decryptedMessageLayer` that uses a constructor this implementation does not
    /// know. Its sequence numbers are valid; its content is kept verbatim.
    public struct UnsupportedMessage: Equatable, Sendable {
        /// The message's own constructor id (its first four bytes).
        public var constructor: UInt32
        /// The constructor that was not recognised (the message's own or one nested in it).
        public var unknownConstructor: UInt32
        /// The serialized message, constructor id included (re-encoded verbatim).
        public var bytes: [UInt8]

        /// An unsupported message with the given fields.
        public init(constructor: UInt32, unknownConstructor: UInt32, bytes: [UInt8]) {
            self.constructor = constructor
            self.unknownConstructor = unknownConstructor
            self.bytes = bytes
        }
    }

    /// What a decrypted secret-chat plaintext holds: from layer 17 on a `decryptedMessageLayer`, before
    /// that a bare layer-8 message (no sequence numbers).
    public enum DecryptedPayload: TLObject {
        /// A `decryptedMessageLayer` (layer 17 and later).
        case layer(DecryptedMessageLayer)
        /// A bare message of layer 8 (`decryptedMessage8`, `decryptedMessageService8`; tdlib also wraps
        /// the first NotifyLayer this way).
        case legacy(DecryptedMessage)

        public func encode(into w: inout TLWriter) {
            switch self {
            case .layer(let l): l.encode(into: &w)
            case .legacy(let m): m.encode(into: &w)
            }
        }

        public static func decode(from r: inout TLReader) throws(SecretChatError) -> DecryptedPayload {
            let id: UInt32
            do { id = try r.peekConstructor() } catch { throw SecretChatError(tl: error) }
            if id == Constructor.decryptedMessageLayer { return .layer(try DecryptedMessageLayer.decode(from: &r)) }
            return .legacy(try DecryptedMessage.decode(from: &r))
        }
    }
}

extension TLReader {
    mutating func skipToEnd() throws(SecretChatError) {
        do { try skip(remaining) } catch { throw SecretChatError(tl: error) }
    }
}

// MARK: DecryptedMessage

extension SecretChat {
    /// The fields of `decryptedMessage#91cc4674` (layer 73+) and `decryptedMessage46#36b091de`.
    ///
    /// `silent` and `groupedID` exist only in the layer-73 form: the layer-46 form does not write them
    /// and decodes them as `false` and `nil`. Optional fields are present exactly when their flag is set,
    /// so `entities == []` and `entities == nil` are different encodings.
    public struct PlainMessage: Equatable, Sendable {
        /// `silent:flags.5?true` (layer 73 form only).
        public var silent: Bool
        /// `random_id:long`
        public var randomID: Int64
        /// `ttl:int` (self-destruct timer in seconds, 0 for none)
        public var ttl: Int32
        /// `message:string`
        public var message: String
        /// `media:flags.9?DecryptedMessageMedia`
        public var media: DecryptedMessageMedia?
        /// `entities:flags.7?Vector<MessageEntity>`
        public var entities: [MessageEntity]?
        /// `via_bot_name:flags.11?string`
        public var viaBotName: String?
        /// `reply_to_random_id:flags.3?long`
        public var replyToRandomID: Int64?
        /// `grouped_id:flags.17?long` (layer 73 form only).
        public var groupedID: Int64?

        /// A message; every optional field absent by default.
        public init(silent: Bool = false, randomID: Int64, ttl: Int32 = 0, message: String,
                    media: DecryptedMessageMedia? = nil, entities: [MessageEntity]? = nil, viaBotName: String? = nil,
                    replyToRandomID: Int64? = nil, groupedID: Int64? = nil) {
            self.silent = silent
            self.randomID = randomID
            self.ttl = ttl
            self.message = message
            self.media = media
            self.entities = entities
            self.viaBotName = viaBotName
            self.replyToRandomID = replyToRandomID
            self.groupedID = groupedID
        }

        static let flagReply: UInt32 = 1 << 3
        static let flagSilent: UInt32 = 1 << 5
        static let flagEntities: UInt32 = 1 << 7
        static let flagMedia: UInt32 = 1 << 9
        static let flagVia: UInt32 = 1 << 11
        static let flagGrouped: UInt32 = 1 << 17
        static let flags46: UInt32 = flagReply | flagEntities | flagMedia | flagVia
        static let flags73: UInt32 = flags46 | flagSilent | flagGrouped

        func encode(into w: inout TLWriter, layer73: Bool) {
            var flags: UInt32 = 0
            if layer73 && silent { flags |= Self.flagSilent }
            if media != nil { flags |= Self.flagMedia }
            if entities != nil { flags |= Self.flagEntities }
            if viaBotName != nil { flags |= Self.flagVia }
            if replyToRandomID != nil { flags |= Self.flagReply }
            if layer73 && groupedID != nil { flags |= Self.flagGrouped }
            w.uint32(flags)
            w.int64(randomID)
            w.int32(ttl)
            w.string(message)
            if let media { media.encode(into: &w) }
            if let entities {
                w.vectorHeader(count: entities.count)
                for e in entities { e.encode(into: &w) }
            }
            if let viaBotName { w.string(viaBotName) }
            if let replyToRandomID { w.int64(replyToRandomID) }
            if layer73, let groupedID { w.int64(groupedID) }
        }

        static func decode(from r: inout TLReader, layer73: Bool) throws(SecretChatError) -> PlainMessage {
            let flags = try r.scFlags(allowed: layer73 ? flags73 : flags46)
            let randomID = try r.scInt64()
            let ttl = try r.scInt32()
            let text = try r.scString()
            var m = PlainMessage(silent: flags & flagSilent != 0, randomID: randomID, ttl: ttl, message: text)
            if flags & flagMedia != 0 { m.media = try DecryptedMessageMedia.decode(from: &r) }
            if flags & flagEntities != 0 {
                let n = try r.scVectorCount(minElementSize: 12)
                var list: [MessageEntity] = []
                list.reserveCapacity(n)
                for _ in 0..<n { list.append(try MessageEntity.decode(from: &r)) }
                m.entities = list
            }
            if flags & flagVia != 0 { m.viaBotName = try r.scString() }
            if flags & flagReply != 0 { m.replyToRandomID = try r.scInt64() }
            if flags & flagGrouped != 0 { m.groupedID = try r.scInt64() }
            return m
        }
    }

    /// A `DecryptedMessage`: the message forms of every layer and the service messages.
    public enum DecryptedMessage: TLObject {
        /// `decryptedMessage#91cc4674` (layer 73 and later).
        case message(PlainMessage)
        /// `decryptedMessage46#36b091de` (layers 46–72; `silent` and `groupedID` are not written).
        case message46(PlainMessage)
        /// `decryptedMessage23#204d3878 random_id:long ttl:int message:string media:DecryptedMessageMedia`
        case message23(randomID: Int64, ttl: Int32, message: String, media: DecryptedMessageMedia)
        /// `decryptedMessage8#1f814f1f random_id:long random_bytes:bytes message:string media:DecryptedMessageMedia`
        case message8(randomID: Int64, randomBytes: [UInt8], message: String, media: DecryptedMessageMedia)
        /// `decryptedMessageService#73164160 random_id:long action:DecryptedMessageAction`
        case service(randomID: Int64, action: DecryptedMessageAction)
        /// `decryptedMessageService8#aa48327d random_id:long random_bytes:bytes action:DecryptedMessageAction`
        case service8(randomID: Int64, randomBytes: [UInt8], action: DecryptedMessageAction)
        /// A message with a constructor this implementation does not know, kept verbatim. Only
        /// ``DecryptedMessageLayer/decode(from:)`` produces it; encoding writes its bytes back.
        case unsupported(UnsupportedMessage)

        /// The message's `random_id` (nil for an unsupported message).
        public var randomID: Int64? {
            switch self {
            case .message(let m), .message46(let m): m.randomID
            case .message23(let id, _, _, _), .message8(let id, _, _, _), .service(let id, _), .service8(let id, _, _): id
            case .unsupported: nil
            }
        }

        /// The action of a service message (nil for other messages).
        public var action: DecryptedMessageAction? {
            switch self {
            case .service(_, let a), .service8(_, _, let a): a
            default: nil
            }
        }

        public func encode(into w: inout TLWriter) {
            switch self {
            case .message(let m):
                w.constructor(Constructor.decryptedMessage)
                m.encode(into: &w, layer73: true)
            case .message46(let m):
                w.constructor(Constructor.decryptedMessage46)
                m.encode(into: &w, layer73: false)
            case .message23(let id, let ttl, let text, let media):
                w.constructor(Constructor.decryptedMessage23)
                w.int64(id)
                w.int32(ttl)
                w.string(text)
                media.encode(into: &w)
            case .message8(let id, let random, let text, let media):
                w.constructor(Constructor.decryptedMessage8)
                w.int64(id)
                w.tlBytes(random)
                w.string(text)
                media.encode(into: &w)
            case .service(let id, let action):
                w.constructor(Constructor.decryptedMessageService)
                w.int64(id)
                action.encode(into: &w)
            case .service8(let id, let random, let action):
                w.constructor(Constructor.decryptedMessageService8)
                w.int64(id)
                w.tlBytes(random)
                action.encode(into: &w)
            case .unsupported(let u):
                w.raw(u.bytes)
            }
        }

        public static func decode(from r: inout TLReader) throws(SecretChatError) -> DecryptedMessage {
            switch try r.scUInt32() {
            case Constructor.decryptedMessage:
                return .message(try PlainMessage.decode(from: &r, layer73: true))
            case Constructor.decryptedMessage46:
                return .message46(try PlainMessage.decode(from: &r, layer73: false))
            case Constructor.decryptedMessage23:
                let id = try r.scInt64()
                let ttl = try r.scInt32()
                let text = try r.scString()
                return .message23(randomID: id, ttl: ttl, message: text, media: try DecryptedMessageMedia.decode(from: &r))
            case Constructor.decryptedMessage8:
                let id = try r.scInt64()
                let random = try r.scBytes()
                let text = try r.scString()
                return .message8(randomID: id, randomBytes: random, message: text,
                                 media: try DecryptedMessageMedia.decode(from: &r))
            case Constructor.decryptedMessageService:
                let id = try r.scInt64()
                return .service(randomID: id, action: try DecryptedMessageAction.decode(from: &r))
            case Constructor.decryptedMessageService8:
                let id = try r.scInt64()
                let random = try r.scBytes()
                return .service8(randomID: id, randomBytes: random, action: try DecryptedMessageAction.decode(from: &r))
            case let id:
                throw .unknownConstructor(id)
            }
        }
    }
}

// MARK: Actions

extension SecretChat {
    /// `SendMessageAction` of the end-to-end schema: every constructor has no fields.
    public enum SendMessageAction: UInt32, TLObject, CaseIterable {
        /// `sendMessageTypingAction#16bf744e`
        case typing = 0x16bf_744e
        /// `sendMessageCancelAction#fd5ec8f5`
        case cancel = 0xfd5e_c8f5
        /// `sendMessageRecordVideoAction#a187d66f`
        case recordVideo = 0xa187_d66f
        /// `sendMessageUploadVideoAction#92042ff7`
        case uploadVideo = 0x9204_2ff7
        /// `sendMessageRecordAudioAction#d52f73f7`
        case recordAudio = 0xd52f_73f7
        /// `sendMessageUploadAudioAction#e6ac8a6f`
        case uploadAudio = 0xe6ac_8a6f
        /// `sendMessageUploadPhotoAction#990a3c1a`
        case uploadPhoto = 0x990a_3c1a
        /// `sendMessageUploadDocumentAction#8faee98e`
        case uploadDocument = 0x8fae_e98e
        /// `sendMessageGeoLocationAction#176f8ba1`
        case geoLocation = 0x176f_8ba1
        /// `sendMessageChooseContactAction#628cbc6f`
        case chooseContact = 0x628c_bc6f
        /// `sendMessageRecordRoundAction#88f27fbc` (layer 66)
        case recordRound = 0x88f2_7fbc
        /// `sendMessageUploadRoundAction#bb718624` (layer 66)
        case uploadRound = 0xbb71_8624

        public func encode(into w: inout TLWriter) { w.constructor(rawValue) }

        public static func decode(from r: inout TLReader) throws(SecretChatError) -> SendMessageAction {
            let id = try r.scUInt32()
            guard let a = SendMessageAction(rawValue: id) else { throw .unknownConstructor(id) }
            return a
        }
    }

    /// `DecryptedMessageAction`: the actions of service messages (Docs/MTProto.md §7.5, §7.6).
    /// `g_a`/`g_b` are the big-endian DH values as TL `bytes`; their checks belong to the key exchange.
    public enum DecryptedMessageAction: TLObject {
        /// `decryptedMessageActionRequestKey#f3c9611b exchange_id:long g_a:bytes`
        case requestKey(exchangeID: Int64, gA: [UInt8])
        /// `decryptedMessageActionAcceptKey#6fe1735b exchange_id:long g_b:bytes key_fingerprint:long`
        case acceptKey(exchangeID: Int64, gB: [UInt8], keyFingerprint: Int64)
        /// `decryptedMessageActionCommitKey#ec2e0b9b exchange_id:long key_fingerprint:long`
        case commitKey(exchangeID: Int64, keyFingerprint: Int64)
        /// `decryptedMessageActionAbortKey#dd05ec6b exchange_id:long`
        case abortKey(exchangeID: Int64)
        /// `decryptedMessageActionNoop#a82fdd63`
        case noop
        /// `decryptedMessageActionNotifyLayer#f3048883 layer:int`
        case notifyLayer(Int32)
        /// `decryptedMessageActionResend#511110b0 start_seq_no:int end_seq_no:int` (wire-form numbers)
        case resend(startSeqNo: Int32, endSeqNo: Int32)
        /// `decryptedMessageActionSetMessageTTL#a1733aec ttl_seconds:int`
        case setMessageTTL(Int32)
        /// `decryptedMessageActionReadMessages#0c4f40be random_ids:Vector<long>`
        case readMessages([Int64])
        /// `decryptedMessageActionDeleteMessages#65614304 random_ids:Vector<long>`
        case deleteMessages([Int64])
        /// `decryptedMessageActionScreenshotMessages#8ac1f475 random_ids:Vector<long>`
        case screenshotMessages([Int64])
        /// `decryptedMessageActionFlushHistory#6719e45c`
        case flushHistory
        /// `decryptedMessageActionTyping#ccb27641 action:SendMessageAction`
        case typing(SendMessageAction)

        public func encode(into w: inout TLWriter) {
            switch self {
            case .requestKey(let id, let gA):
                w.constructor(Constructor.actionRequestKey); w.int64(id); w.tlBytes(gA)
            case .acceptKey(let id, let gB, let fp):
                w.constructor(Constructor.actionAcceptKey); w.int64(id); w.tlBytes(gB); w.int64(fp)
            case .commitKey(let id, let fp):
                w.constructor(Constructor.actionCommitKey); w.int64(id); w.int64(fp)
            case .abortKey(let id):
                w.constructor(Constructor.actionAbortKey); w.int64(id)
            case .noop:
                w.constructor(Constructor.actionNoop)
            case .notifyLayer(let layer):
                w.constructor(Constructor.actionNotifyLayer); w.int32(layer)
            case .resend(let start, let end):
                w.constructor(Constructor.actionResend); w.int32(start); w.int32(end)
            case .setMessageTTL(let ttl):
                w.constructor(Constructor.actionSetMessageTTL); w.int32(ttl)
            case .readMessages(let ids):
                w.constructor(Constructor.actionReadMessages); w.vectorOfInt64(ids)
            case .deleteMessages(let ids):
                w.constructor(Constructor.actionDeleteMessages); w.vectorOfInt64(ids)
            case .screenshotMessages(let ids):
                w.constructor(Constructor.actionScreenshotMessages); w.vectorOfInt64(ids)
            case .flushHistory:
                w.constructor(Constructor.actionFlushHistory)
            case .typing(let a):
                w.constructor(Constructor.actionTyping); a.encode(into: &w)
            }
        }

        public static func decode(from r: inout TLReader) throws(SecretChatError) -> DecryptedMessageAction {
            switch try r.scUInt32() {
            case Constructor.actionRequestKey:
                let id = try r.scInt64()
                return .requestKey(exchangeID: id, gA: try r.scBytes())
            case Constructor.actionAcceptKey:
                let id = try r.scInt64()
                let gB = try r.scBytes()
                return .acceptKey(exchangeID: id, gB: gB, keyFingerprint: try r.scInt64())
            case Constructor.actionCommitKey:
                let id = try r.scInt64()
                return .commitKey(exchangeID: id, keyFingerprint: try r.scInt64())
            case Constructor.actionAbortKey: return .abortKey(exchangeID: try r.scInt64())
            case Constructor.actionNoop: return .noop
            case Constructor.actionNotifyLayer: return .notifyLayer(try r.scInt32())
            case Constructor.actionResend:
                let start = try r.scInt32()
                return .resend(startSeqNo: start, endSeqNo: try r.scInt32())
            case Constructor.actionSetMessageTTL: return .setMessageTTL(try r.scInt32())
            case Constructor.actionReadMessages: return .readMessages(try r.scInt64Vector())
            case Constructor.actionDeleteMessages: return .deleteMessages(try r.scInt64Vector())
            case Constructor.actionScreenshotMessages: return .screenshotMessages(try r.scInt64Vector())
            case Constructor.actionFlushHistory: return .flushHistory
            case Constructor.actionTyping: return .typing(try SendMessageAction.decode(from: &r))
            case let id: throw .unknownConstructor(id)
            }
        }
    }
}

// MARK: Media

extension SecretChat {
    /// `DecryptedMessageMedia`: the empty media, photos and documents (the forms a layer-144 client
    /// sends for files). Other media (geo points, contacts, venues, web pages, the video and audio forms
    /// of old layers, external documents) are ``SecretChatError/unknownConstructor(_:)``: TL carries no
    /// lengths, so an unknown constructor cannot be skipped; inside a `decryptedMessageLayer` the message
    /// is then kept as ``DecryptedMessage/unsupported(_:)``. `key` and `iv` are the file's AES-256-IGE key
    /// and IV (32 bytes each); their length is checked where they are used, not here.
    public enum DecryptedMessageMedia: TLObject {
        /// `decryptedMessageMediaEmpty#089f5c4a`
        case empty
        /// `decryptedMessageMediaPhoto#f1fa8d78`
        case photo(Photo)
        /// `decryptedMessageMediaDocument#6abd9782` (layer 143: `size:long`)
        case document(Document)

        /// `decryptedMessageMediaPhoto#f1fa8d78 thumb:bytes thumb_w:int thumb_h:int w:int h:int size:int
        /// key:bytes iv:bytes caption:string`
        public struct Photo: Equatable, Sendable {
            /// `thumb`
            public var thumb: [UInt8]
            /// `thumb_w`
            public var thumbWidth: Int32
            /// `thumb_h`
            public var thumbHeight: Int32
            /// `w`
            public var width: Int32
            /// `h`
            public var height: Int32
            /// `size` (of the encrypted file)
            public var size: Int32
            /// `key`
            public var key: [UInt8]
            /// `iv`
            public var iv: [UInt8]
            /// `caption`
            public var caption: String

            /// A photo media value.
            public init(thumb: [UInt8] = [], thumbWidth: Int32 = 0, thumbHeight: Int32 = 0, width: Int32, height: Int32,
                        size: Int32, key: [UInt8], iv: [UInt8], caption: String = "") {
                self.thumb = thumb
                self.thumbWidth = thumbWidth
                self.thumbHeight = thumbHeight
                self.width = width
                self.height = height
                self.size = size
                self.key = key
                self.iv = iv
                self.caption = caption
            }
        }

        /// `decryptedMessageMediaDocument#6abd9782 thumb:bytes thumb_w:int thumb_h:int mime_type:string
        /// size:long key:bytes iv:bytes attributes:Vector<DocumentAttribute> caption:string`
        public struct Document: Equatable, Sendable {
            /// `thumb`
            public var thumb: [UInt8]
            /// `thumb_w`
            public var thumbWidth: Int32
            /// `thumb_h`
            public var thumbHeight: Int32
            /// `mime_type`
            public var mimeType: String
            /// `size` (a `long` from layer 143 on)
            public var size: Int64
            /// `key`
            public var key: [UInt8]
            /// `iv`
            public var iv: [UInt8]
            /// `attributes`
            public var attributes: [DocumentAttribute]
            /// `caption`
            public var caption: String

            /// A document media value.
            public init(thumb: [UInt8] = [], thumbWidth: Int32 = 0, thumbHeight: Int32 = 0, mimeType: String, size: Int64,
                        key: [UInt8], iv: [UInt8], attributes: [DocumentAttribute] = [], caption: String = "") {
                self.thumb = thumb
                self.thumbWidth = thumbWidth
                self.thumbHeight = thumbHeight
                self.mimeType = mimeType
                self.size = size
                self.key = key
                self.iv = iv
                self.attributes = attributes
                self.caption = caption
            }
        }

        public func encode(into w: inout TLWriter) {
            switch self {
            case .empty:
                w.constructor(Constructor.mediaEmpty)
            case .photo(let p):
                w.constructor(Constructor.mediaPhoto)
                w.tlBytes(p.thumb); w.int32(p.thumbWidth); w.int32(p.thumbHeight)
                w.int32(p.width); w.int32(p.height); w.int32(p.size)
                w.tlBytes(p.key); w.tlBytes(p.iv); w.string(p.caption)
            case .document(let d):
                w.constructor(Constructor.mediaDocument)
                w.tlBytes(d.thumb); w.int32(d.thumbWidth); w.int32(d.thumbHeight)
                w.string(d.mimeType); w.int64(d.size)
                w.tlBytes(d.key); w.tlBytes(d.iv)
                w.vectorHeader(count: d.attributes.count)
                for a in d.attributes { a.encode(into: &w) }
                w.string(d.caption)
            }
        }

        public static func decode(from r: inout TLReader) throws(SecretChatError) -> DecryptedMessageMedia {
            switch try r.scUInt32() {
            case Constructor.mediaEmpty:
                return .empty
            case Constructor.mediaPhoto:
                let thumb = try r.scBytes()
                let tw = try r.scInt32(), th = try r.scInt32()
                let width = try r.scInt32(), height = try r.scInt32(), size = try r.scInt32()
                let key = try r.scBytes(), iv = try r.scBytes()
                let caption = try r.scString()
                return .photo(Photo(thumb: thumb, thumbWidth: tw, thumbHeight: th, width: width, height: height,
                                    size: size, key: key, iv: iv, caption: caption))
            case Constructor.mediaDocument:
                let thumb = try r.scBytes()
                let tw = try r.scInt32(), th = try r.scInt32()
                let mime = try r.scString()
                let size = try r.scInt64()
                let key = try r.scBytes(), iv = try r.scBytes()
                let n = try r.scVectorCount(minElementSize: 4)
                var attributes: [DocumentAttribute] = []
                attributes.reserveCapacity(n)
                for _ in 0..<n { attributes.append(try DocumentAttribute.decode(from: &r)) }
                let caption = try r.scString()
                return .document(Document(thumb: thumb, thumbWidth: tw, thumbHeight: th, mimeType: mime, size: size,
                                          key: key, iv: iv, attributes: attributes, caption: caption))
            case let id:
                throw .unknownConstructor(id)
            }
        }
    }

    /// `InputStickerSet` of the end-to-end schema.
    public enum InputStickerSet: TLObject {
        /// `inputStickerSetShortName#861cc8a0 short_name:string`
        case shortName(String)
        /// `inputStickerSetEmpty#ffb62b95`
        case empty

        public func encode(into w: inout TLWriter) {
            switch self {
            case .shortName(let s): w.constructor(Constructor.inputStickerSetShortName); w.string(s)
            case .empty: w.constructor(Constructor.inputStickerSetEmpty)
            }
        }

        public static func decode(from r: inout TLReader) throws(SecretChatError) -> InputStickerSet {
            switch try r.scUInt32() {
            case Constructor.inputStickerSetShortName: return .shortName(try r.scString())
            case Constructor.inputStickerSetEmpty: return .empty
            case let id: throw .unknownConstructor(id)
            }
        }
    }

    /// `DocumentAttribute` of the end-to-end schema, every form of `secret_api.tl`.
    public enum DocumentAttribute: TLObject {
        /// `documentAttributeImageSize#6c37c15c w:int h:int`
        case imageSize(width: Int32, height: Int32)
        /// `documentAttributeAnimated#11b58939`
        case animated
        /// `documentAttributeSticker23#fb0a5727`
        case sticker23
        /// `documentAttributeVideo23#5910cccb duration:int w:int h:int`
        case video23(duration: Int32, width: Int32, height: Int32)
        /// `documentAttributeAudio23#051448e5 duration:int`
        case audio23(duration: Int32)
        /// `documentAttributeFilename#15590068 file_name:string`
        case filename(String)
        /// `documentAttributeAudio45#ded218e0 duration:int title:string performer:string`
        case audio45(duration: Int32, title: String, performer: String)
        /// `documentAttributeSticker#3a556302 alt:string stickerset:InputStickerSet`
        case sticker(alt: String, stickerSet: InputStickerSet)
        /// `documentAttributeAudio#9852f9c6 flags:# voice:flags.10?true duration:int title:flags.0?string
        /// performer:flags.1?string waveform:flags.2?bytes`
        case audio(voice: Bool, duration: Int32, title: String?, performer: String?, waveform: [UInt8]?)
        /// `documentAttributeVideo#0ef02ce6 flags:# round_message:flags.0?true duration:int w:int h:int`
        case video(roundMessage: Bool, duration: Int32, width: Int32, height: Int32)

        public func encode(into w: inout TLWriter) {
            switch self {
            case .imageSize(let width, let height):
                w.constructor(Constructor.attributeImageSize); w.int32(width); w.int32(height)
            case .animated:
                w.constructor(Constructor.attributeAnimated)
            case .sticker23:
                w.constructor(Constructor.attributeSticker23)
            case .video23(let d, let width, let height):
                w.constructor(Constructor.attributeVideo23); w.int32(d); w.int32(width); w.int32(height)
            case .audio23(let d):
                w.constructor(Constructor.attributeAudio23); w.int32(d)
            case .filename(let name):
                w.constructor(Constructor.attributeFilename); w.string(name)
            case .audio45(let d, let title, let performer):
                w.constructor(Constructor.attributeAudio45); w.int32(d); w.string(title); w.string(performer)
            case .sticker(let alt, let set):
                w.constructor(Constructor.attributeSticker); w.string(alt); set.encode(into: &w)
            case .audio(let voice, let d, let title, let performer, let waveform):
                w.constructor(Constructor.attributeAudio)
                var flags: UInt32 = voice ? 1 << 10 : 0
                if title != nil { flags |= 1 }
                if performer != nil { flags |= 2 }
                if waveform != nil { flags |= 4 }
                w.uint32(flags)
                w.int32(d)
                if let title { w.string(title) }
                if let performer { w.string(performer) }
                if let waveform { w.tlBytes(waveform) }
            case .video(let round, let d, let width, let height):
                w.constructor(Constructor.attributeVideo)
                w.uint32(round ? 1 : 0); w.int32(d); w.int32(width); w.int32(height)
            }
        }

        public static func decode(from r: inout TLReader) throws(SecretChatError) -> DocumentAttribute {
            switch try r.scUInt32() {
            case Constructor.attributeImageSize:
                let width = try r.scInt32()
                return .imageSize(width: width, height: try r.scInt32())
            case Constructor.attributeAnimated: return .animated
            case Constructor.attributeSticker23: return .sticker23
            case Constructor.attributeVideo23:
                let d = try r.scInt32(), width = try r.scInt32()
                return .video23(duration: d, width: width, height: try r.scInt32())
            case Constructor.attributeAudio23: return .audio23(duration: try r.scInt32())
            case Constructor.attributeFilename: return .filename(try r.scString())
            case Constructor.attributeAudio45:
                let d = try r.scInt32(), title = try r.scString()
                return .audio45(duration: d, title: title, performer: try r.scString())
            case Constructor.attributeSticker:
                let alt = try r.scString()
                return .sticker(alt: alt, stickerSet: try InputStickerSet.decode(from: &r))
            case Constructor.attributeAudio:
                let flags = try r.scFlags(allowed: 1 << 10 | 7)
                let d = try r.scInt32()
                let title = flags & 1 != 0 ? try r.scString() : nil
                let performer = flags & 2 != 0 ? try r.scString() : nil
                let waveform = flags & 4 != 0 ? try r.scBytes() : nil
                return .audio(voice: flags & 1 << 10 != 0, duration: d, title: title, performer: performer, waveform: waveform)
            case Constructor.attributeVideo:
                let flags = try r.scFlags(allowed: 1)
                let d = try r.scInt32(), width = try r.scInt32()
                return .video(roundMessage: flags & 1 != 0, duration: d, width: width, height: try r.scInt32())
            case let id:
                throw .unknownConstructor(id)
            }
        }
    }
}

// MARK: Entities

extension SecretChat {
    /// `MessageEntity` of the end-to-end schema (layers 46, 101 and 144): a kind over the UTF-16 range
    /// `offset ..< offset + length` of the message text.
    public struct MessageEntity: TLObject {
        /// The entity's kind and its extra field, if any.
        public enum Kind: Equatable, Sendable {
            /// `messageEntityUnknown#bb92ba95`
            case unknown
            /// `messageEntityMention#fa04579d`
            case mention
            /// `messageEntityHashtag#6f635b0d`
            case hashtag
            /// `messageEntityBotCommand#6cef8ac7`
            case botCommand
            /// `messageEntityUrl#6ed02538`
            case url
            /// `messageEntityEmail#64e475c2`
            case email
            /// `messageEntityBold#bd610bc9`
            case bold
            /// `messageEntityItalic#826f8b60`
            case italic
            /// `messageEntityCode#28a20571`
            case code
            /// `messageEntityPre#73924be0 … language:string`
            case pre(language: String)
            /// `messageEntityTextUrl#76a6d327 … url:string`
            case textURL(String)
            /// `messageEntityMentionName#352dca58 … user_id:int`
            case mentionName(userID: Int32)
            /// `messageEntityPhone#9b69e34b`
            case phone
            /// `messageEntityCashtag#4c4e743f`
            case cashtag
            /// `messageEntityBankCard#761e6af4`
            case bankCard
            /// `messageEntityUnderline#9c4e7e8b` (layer 101)
            case underline
            /// `messageEntityStrike#bf0693d4` (layer 101)
            case strike
            /// `messageEntityBlockquote#020df5d0` (layer 101)
            case blockquote
            /// `messageEntitySpoiler#32ca960f` (layer 144)
            case spoiler
            /// `messageEntityCustomEmoji#c8cf05f8 … document_id:long` (layer 144)
            case customEmoji(documentID: Int64)

            /// The constructor id of this kind.
            public var constructor: UInt32 {
                switch self {
                case .unknown: 0xbb92_ba95
                case .mention: 0xfa04_579d
                case .hashtag: 0x6f63_5b0d
                case .botCommand: 0x6cef_8ac7
                case .url: 0x6ed0_2538
                case .email: 0x64e4_75c2
                case .bold: 0xbd61_0bc9
                case .italic: 0x826f_8b60
                case .code: 0x28a2_0571
                case .pre: 0x7392_4be0
                case .textURL: 0x76a6_d327
                case .mentionName: 0x352d_ca58
                case .phone: 0x9b69_e34b
                case .cashtag: 0x4c4e_743f
                case .bankCard: 0x761e_6af4
                case .underline: 0x9c4e_7e8b
                case .strike: 0xbf06_93d4
                case .blockquote: 0x020d_f5d0
                case .spoiler: 0x32ca_960f
                case .customEmoji: 0xc8cf_05f8
                }
            }

            /// The kinds without an extra field, by constructor.
            static let plain: [UInt32: Kind] = {
                var m: [UInt32: Kind] = [:]
                for k: Kind in [.unknown, .mention, .hashtag, .botCommand, .url, .email, .bold, .italic, .code, .phone,
                                .cashtag, .bankCard, .underline, .strike, .blockquote, .spoiler] {
                    m[k.constructor] = k
                }
                return m
            }()
        }

        /// The kind.
        public var kind: Kind
        /// `offset` (UTF-16 code units)
        public var offset: Int32
        /// `length` (UTF-16 code units)
        public var length: Int32

        /// An entity.
        public init(_ kind: Kind, offset: Int32, length: Int32) {
            self.kind = kind
            self.offset = offset
            self.length = length
        }

        public func encode(into w: inout TLWriter) {
            w.constructor(kind.constructor)
            w.int32(offset)
            w.int32(length)
            switch kind {
            case .pre(let language): w.string(language)
            case .textURL(let url): w.string(url)
            case .mentionName(let user): w.int32(user)
            case .customEmoji(let doc): w.int64(doc)
            default: break
            }
        }

        public static func decode(from r: inout TLReader) throws(SecretChatError) -> MessageEntity {
            let id = try r.scUInt32()
            let known = Kind.plain[id] != nil || [0x7392_4be0, 0x76a6_d327, 0x352d_ca58, 0xc8cf_05f8].contains(id)
            guard known else { throw .unknownConstructor(id) }
            let offset = try r.scInt32()
            let length = try r.scInt32()
            let kind: Kind
            switch id {
            case 0x7392_4be0: kind = .pre(language: try r.scString())
            case 0x76a6_d327: kind = .textURL(try r.scString())
            case 0x352d_ca58: kind = .mentionName(userID: try r.scInt32())
            case 0xc8cf_05f8: kind = .customEmoji(documentID: try r.scInt64())
            default: kind = Kind.plain[id] ?? .unknown
            }
            return MessageEntity(kind, offset: offset, length: length)
        }
    }
}
