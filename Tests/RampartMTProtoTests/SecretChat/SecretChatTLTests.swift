// The end-to-end TL schema of secret chats (Docs/MTProto.md §7.5): constructor ids against the schema text,
// round trips of every constructor, hand-built byte strings, the ≥ 15 random-bytes rule, truncation and
// random input.

import Foundation
import Testing
import RampartMTProto
import RampartCodecs
import RampartTestSupport

private typealias SC = SecretChat

/// The schema lines of `secret_api.tl` (tdlib, layer 144) for every constructor implemented, with the
/// constant the code uses for each.
private let e2eSchema: [(UInt32, String)] = [
    (SC.Constructor.decryptedMessageLayer, "decryptedMessageLayer#1be31789 random_bytes:bytes layer:int in_seq_no:int out_seq_no:int message:DecryptedMessage = DecryptedMessageLayer"),
    (SC.Constructor.decryptedMessage, "decryptedMessage#91cc4674 flags:# silent:flags.5?true random_id:long ttl:int message:string media:flags.9?DecryptedMessageMedia entities:flags.7?Vector<MessageEntity> via_bot_name:flags.11?string reply_to_random_id:flags.3?long grouped_id:flags.17?long = DecryptedMessage"),
    (SC.Constructor.decryptedMessage46, "decryptedMessage46#36b091de flags:# random_id:long ttl:int message:string media:flags.9?DecryptedMessageMedia entities:flags.7?Vector<MessageEntity> via_bot_name:flags.11?string reply_to_random_id:flags.3?long = DecryptedMessage"),
    (SC.Constructor.decryptedMessage23, "decryptedMessage23#204d3878 random_id:long ttl:int message:string media:DecryptedMessageMedia = DecryptedMessage"),
    (SC.Constructor.decryptedMessage8, "decryptedMessage8#1f814f1f random_id:long random_bytes:bytes message:string media:DecryptedMessageMedia = DecryptedMessage"),
    (SC.Constructor.decryptedMessageService, "decryptedMessageService#73164160 random_id:long action:DecryptedMessageAction = DecryptedMessage"),
    (SC.Constructor.decryptedMessageService8, "decryptedMessageService8#aa48327d random_id:long random_bytes:bytes action:DecryptedMessageAction = DecryptedMessage"),
    (SC.Constructor.actionRequestKey, "decryptedMessageActionRequestKey#f3c9611b exchange_id:long g_a:bytes = DecryptedMessageAction"),
    (SC.Constructor.actionAcceptKey, "decryptedMessageActionAcceptKey#6fe1735b exchange_id:long g_b:bytes key_fingerprint:long = DecryptedMessageAction"),
    (SC.Constructor.actionCommitKey, "decryptedMessageActionCommitKey#ec2e0b9b exchange_id:long key_fingerprint:long = DecryptedMessageAction"),
    (SC.Constructor.actionAbortKey, "decryptedMessageActionAbortKey#dd05ec6b exchange_id:long = DecryptedMessageAction"),
    (SC.Constructor.actionNoop, "decryptedMessageActionNoop#a82fdd63 = DecryptedMessageAction"),
    (SC.Constructor.actionNotifyLayer, "decryptedMessageActionNotifyLayer#f3048883 layer:int = DecryptedMessageAction"),
    (SC.Constructor.actionResend, "decryptedMessageActionResend#511110b0 start_seq_no:int end_seq_no:int = DecryptedMessageAction"),
    (SC.Constructor.actionSetMessageTTL, "decryptedMessageActionSetMessageTTL#a1733aec ttl_seconds:int = DecryptedMessageAction"),
    (SC.Constructor.actionReadMessages, "decryptedMessageActionReadMessages#c4f40be random_ids:Vector<long> = DecryptedMessageAction"),
    (SC.Constructor.actionDeleteMessages, "decryptedMessageActionDeleteMessages#65614304 random_ids:Vector<long> = DecryptedMessageAction"),
    (SC.Constructor.actionScreenshotMessages, "decryptedMessageActionScreenshotMessages#8ac1f475 random_ids:Vector<long> = DecryptedMessageAction"),
    (SC.Constructor.actionFlushHistory, "decryptedMessageActionFlushHistory#6719e45c = DecryptedMessageAction"),
    (SC.Constructor.actionTyping, "decryptedMessageActionTyping#ccb27641 action:SendMessageAction = DecryptedMessageAction"),
    (SC.Constructor.mediaEmpty, "decryptedMessageMediaEmpty#89f5c4a = DecryptedMessageMedia"),
    (SC.Constructor.mediaPhoto, "decryptedMessageMediaPhoto#f1fa8d78 thumb:bytes thumb_w:int thumb_h:int w:int h:int size:int key:bytes iv:bytes caption:string = DecryptedMessageMedia"),
    (SC.Constructor.mediaDocument, "decryptedMessageMediaDocument#6abd9782 thumb:bytes thumb_w:int thumb_h:int mime_type:string size:long key:bytes iv:bytes attributes:Vector<DocumentAttribute> caption:string = DecryptedMessageMedia"),
    (SC.Constructor.attributeImageSize, "documentAttributeImageSize#6c37c15c w:int h:int = DocumentAttribute"),
    (SC.Constructor.attributeAnimated, "documentAttributeAnimated#11b58939 = DocumentAttribute"),
    (SC.Constructor.attributeSticker23, "documentAttributeSticker23#fb0a5727 = DocumentAttribute"),
    (SC.Constructor.attributeVideo23, "documentAttributeVideo23#5910cccb duration:int w:int h:int = DocumentAttribute"),
    (SC.Constructor.attributeAudio23, "documentAttributeAudio23#51448e5 duration:int = DocumentAttribute"),
    (SC.Constructor.attributeFilename, "documentAttributeFilename#15590068 file_name:string = DocumentAttribute"),
    (SC.Constructor.attributeAudio45, "documentAttributeAudio45#ded218e0 duration:int title:string performer:string = DocumentAttribute"),
    (SC.Constructor.attributeSticker, "documentAttributeSticker#3a556302 alt:string stickerset:InputStickerSet = DocumentAttribute"),
    (SC.Constructor.attributeAudio, "documentAttributeAudio#9852f9c6 flags:# voice:flags.10?true duration:int title:flags.0?string performer:flags.1?string waveform:flags.2?bytes = DocumentAttribute"),
    (SC.Constructor.attributeVideo, "documentAttributeVideo#ef02ce6 flags:# round_message:flags.0?true duration:int w:int h:int = DocumentAttribute"),
    (SC.Constructor.inputStickerSetShortName, "inputStickerSetShortName#861cc8a0 short_name:string = InputStickerSet"),
    (SC.Constructor.inputStickerSetEmpty, "inputStickerSetEmpty#ffb62b95 = InputStickerSet"),
    (SC.SendMessageAction.typing.rawValue, "sendMessageTypingAction#16bf744e = SendMessageAction"),
    (SC.SendMessageAction.cancel.rawValue, "sendMessageCancelAction#fd5ec8f5 = SendMessageAction"),
    (SC.SendMessageAction.recordVideo.rawValue, "sendMessageRecordVideoAction#a187d66f = SendMessageAction"),
    (SC.SendMessageAction.uploadVideo.rawValue, "sendMessageUploadVideoAction#92042ff7 = SendMessageAction"),
    (SC.SendMessageAction.recordAudio.rawValue, "sendMessageRecordAudioAction#d52f73f7 = SendMessageAction"),
    (SC.SendMessageAction.uploadAudio.rawValue, "sendMessageUploadAudioAction#e6ac8a6f = SendMessageAction"),
    (SC.SendMessageAction.uploadPhoto.rawValue, "sendMessageUploadPhotoAction#990a3c1a = SendMessageAction"),
    (SC.SendMessageAction.uploadDocument.rawValue, "sendMessageUploadDocumentAction#8faee98e = SendMessageAction"),
    (SC.SendMessageAction.geoLocation.rawValue, "sendMessageGeoLocationAction#176f8ba1 = SendMessageAction"),
    (SC.SendMessageAction.chooseContact.rawValue, "sendMessageChooseContactAction#628cbc6f = SendMessageAction"),
    (SC.SendMessageAction.recordRound.rawValue, "sendMessageRecordRoundAction#88f27fbc = SendMessageAction"),
    (SC.SendMessageAction.uploadRound.rawValue, "sendMessageUploadRoundAction#bb718624 = SendMessageAction"),
    (SC.MessageEntity.Kind.unknown.constructor, "messageEntityUnknown#bb92ba95 offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.mention.constructor, "messageEntityMention#fa04579d offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.hashtag.constructor, "messageEntityHashtag#6f635b0d offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.botCommand.constructor, "messageEntityBotCommand#6cef8ac7 offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.url.constructor, "messageEntityUrl#6ed02538 offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.email.constructor, "messageEntityEmail#64e475c2 offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.bold.constructor, "messageEntityBold#bd610bc9 offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.italic.constructor, "messageEntityItalic#826f8b60 offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.code.constructor, "messageEntityCode#28a20571 offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.pre(language: "").constructor, "messageEntityPre#73924be0 offset:int length:int language:string = MessageEntity"),
    (SC.MessageEntity.Kind.textURL("").constructor, "messageEntityTextUrl#76a6d327 offset:int length:int url:string = MessageEntity"),
    (SC.MessageEntity.Kind.mentionName(userID: 0).constructor, "messageEntityMentionName#352dca58 offset:int length:int user_id:int = MessageEntity"),
    (SC.MessageEntity.Kind.phone.constructor, "messageEntityPhone#9b69e34b offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.cashtag.constructor, "messageEntityCashtag#4c4e743f offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.bankCard.constructor, "messageEntityBankCard#761e6af4 offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.underline.constructor, "messageEntityUnderline#9c4e7e8b offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.strike.constructor, "messageEntityStrike#bf0693d4 offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.blockquote.constructor, "messageEntityBlockquote#20df5d0 offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.spoiler.constructor, "messageEntitySpoiler#32ca960f offset:int length:int = MessageEntity"),
    (SC.MessageEntity.Kind.customEmoji(documentID: 0).constructor, "messageEntityCustomEmoji#c8cf05f8 offset:int length:int document_id:long = MessageEntity"),
]

/// The id written in a schema line (`name#hex ...`).
func schemaID(_ line: String) -> UInt32? {
    guard let hash = line.firstIndex(of: "#") else { return nil }
    let hex = line[line.index(after: hash)...].prefix { $0.isHexDigit }
    return UInt32(hex, radix: 16)
}

/// The CRC32 of a schema line as TL computes constructor ids: the id removed, `bytes` counted as
/// `string`, `flags.N?true` fields dropped, `<`/`>` of `Vector<T>` replaced by a space. With
/// `stripLayerSuffix`, tdlib's version suffix on the name (`decryptedMessage46`) is removed first.
func schemaCRC(_ line: String, stripLayerSuffix: Bool = false) -> UInt32 {
    var words = line.split(separator: " ").map(String.init)
    var name = String(words[0].prefix { $0 != "#" })
    if stripLayerSuffix { while name.last?.isNumber == true { name.removeLast() } }
    words[0] = name
    words = words.filter { !$0.hasSuffix("?true") }
    var text = words.joined(separator: " ")
    text = text.replacingOccurrences(of: ":bytes", with: ":string").replacingOccurrences(of: "?bytes", with: "?string")
    text = text.replacingOccurrences(of: "<", with: " ").replacingOccurrences(of: ">", with: "")
    return CRC32.checksum(data: Array(text.utf8))
}

@Test func secretChatConstructorIDsMatchTheSchema() {
    for (constant, line) in e2eSchema {
        #expect(schemaID(line) == constant, "\(line)")
        // Ids are the CRC32 of the constructor's text (under its original name, without tdlib's layer
        // suffix), except the layer-143 document, whose id is not derived from its text.
        if constant == SC.Constructor.mediaDocument { continue }
        let crc = schemaCRC(line), crcStripped = schemaCRC(line, stripLayerSuffix: true)
        #expect(crc == constant || crcStripped == constant, "CRC32 of \(line)")
    }
    // The ids quoted in Docs/MTProto.md §7.5 and the spec digest.
    #expect(SC.Constructor.decryptedMessageLayer == 0x1be31789)
    #expect(SC.Constructor.decryptedMessageService == 0x73164160)
    #expect(SC.Constructor.actionReadMessages == 0x0c4f40be)
    #expect(SC.Constructor.actionResend == 0x511110b0)
    #expect(SC.Constructor.actionNotifyLayer == 0xf3048883)
    #expect(SC.Constructor.actionTyping == 0xccb27641)
}

// MARK: Samples

private let key32 = (0..<32).map { UInt8($0) }
private let iv32 = (0..<32).map { UInt8(0xA0 + $0 / 2) }

private let allAttributes: [SC.DocumentAttribute] = [
    .imageSize(width: 640, height: 480), .animated, .sticker23, .video23(duration: 10, width: 320, height: 240),
    .audio23(duration: 3), .filename("report.pdf"), .audio45(duration: 61, title: "t", performer: "p"),
    .sticker(alt: "😀", stickerSet: .shortName("pack")), .sticker(alt: "", stickerSet: .empty),
    .audio(voice: true, duration: 5, title: nil, performer: nil, waveform: [1, 2, 3]),
    .audio(voice: false, duration: 200, title: "song", performer: "band", waveform: nil),
    .video(roundMessage: true, duration: 7, width: 240, height: 240),
    .video(roundMessage: false, duration: 0, width: 1, height: 2),
]

private let allEntities: [SC.MessageEntity] = {
    let kinds: [SC.MessageEntity.Kind] = [
        .unknown, .mention, .hashtag, .botCommand, .url, .email, .bold, .italic, .code, .pre(language: "swift"),
        .textURL("https://example.org"), .mentionName(userID: 42), .phone, .cashtag, .bankCard, .underline,
        .strike, .blockquote, .spoiler, .customEmoji(documentID: -7),
    ]
    return kinds.enumerated().map { SC.MessageEntity($0.element, offset: Int32($0.offset), length: 3) }
}()

private let allMedia: [SC.DecryptedMessageMedia] = [
    .empty,
    .photo(.init(thumb: [9, 9, 9], thumbWidth: 90, thumbHeight: 60, width: 1280, height: 853, size: 123_456,
                 key: key32, iv: iv32, caption: "a photo")),
    .document(.init(thumb: [], mimeType: "application/pdf", size: 5_000_000_000, key: key32, iv: iv32,
                    attributes: allAttributes, caption: "")),
]

private let allActions: [SC.DecryptedMessageAction] = [
    .requestKey(exchangeID: -1, gA: [UInt8](repeating: 0xC3, count: 256)),
    .acceptKey(exchangeID: 0x1122_3344_5566_7788, gB: [2, 3], keyFingerprint: -42),
    .commitKey(exchangeID: 5, keyFingerprint: 6), .abortKey(exchangeID: 7), .noop, .notifyLayer(144),
    .resend(startSeqNo: 3, endSeqNo: 9), .setMessageTTL(15), .readMessages([1, 2]), .deleteMessages([]),
    .screenshotMessages([Int64.min, Int64.max]), .flushHistory,
] + SC.SendMessageAction.allCases.map { .typing($0) }

private let allMessages: [SC.DecryptedMessage] = {
    var list: [SC.DecryptedMessage] = [
        .message(.init(randomID: 1, message: "hi")),
        .message(.init(silent: true, randomID: -9, ttl: 30, message: "héllo ✓", media: allMedia[1], entities: allEntities,
                       viaBotName: "bot", replyToRandomID: 77, groupedID: 88)),
        .message(.init(randomID: 2, message: "", entities: [])),
        .message46(.init(randomID: 3, ttl: 5, message: "old", media: .empty, entities: [allEntities[0]],
                         viaBotName: "v", replyToRandomID: 4)),
        .message23(randomID: 4, ttl: 0, message: "23", media: .empty),
        .message8(randomID: 5, randomBytes: [UInt8](repeating: 1, count: 15), message: "8", media: .empty),
        .service8(randomID: 6, randomBytes: [7, 7], action: .notifyLayer(144)),
    ]
    list += allMedia.map { .message(.init(randomID: 10, message: "m", media: $0)) }
    list += allActions.map { .service(randomID: 11, action: $0) }
    return list
}()

private func layer(_ m: SC.DecryptedMessage, random: Int = 15) throws -> SC.DecryptedMessageLayer {
    try SC.DecryptedMessageLayer(randomBytes: [UInt8](repeating: 0x5A, count: random), layer: 144, inSeqNo: 2,
                                 outSeqNo: 5, message: m)
}

// MARK: Round trips

@Test func secretChatEveryConstructorRoundTrips() throws {
    for m in allMessages {
        let bytes = m.serialized
        let back = try SC.DecryptedMessage.decode(bytes)
        #expect(back == m)
        #expect(back.serialized == bytes)
        let l = try layer(m)
        let lb = l.serialized
        #expect(try SC.DecryptedMessageLayer.decode(lb) == l)
        #expect(try SC.DecryptedPayload.decode(lb) == .layer(l))
    }
    for a in allActions { #expect(try SC.DecryptedMessageAction.decode(a.serialized) == a) }
    for m in allMedia { #expect(try SC.DecryptedMessageMedia.decode(m.serialized) == m) }
    for a in allAttributes { #expect(try SC.DocumentAttribute.decode(a.serialized) == a) }
    for e in allEntities { #expect(try SC.MessageEntity.decode(e.serialized) == e) }
    // Layer-8 messages travel bare.
    let legacy = SC.DecryptedMessage.service8(randomID: 1, randomBytes: [1, 2, 3], action: .notifyLayer(144))
    #expect(try SC.DecryptedPayload.decode(legacy.serialized) == .legacy(legacy))
}

@Test func secretChatLayer46FormDropsLayer73Fields() throws {
    let m = SC.PlainMessage(silent: true, randomID: 1, message: "x", groupedID: 5)
    let back = try SC.DecryptedMessage.decode(SC.DecryptedMessage.message46(m).serialized)
    #expect(back == .message46(SC.PlainMessage(randomID: 1, message: "x")))
}

// MARK: Hand-built bytes

/// `decryptedMessageLayer` with `n` random bytes 0x00…, layer 144, in 0, out 1 and
/// `decryptedMessageService(random_id = 0x0102030405060708, decryptedMessageActionNoop)`, written out from
/// the schema by hand.
private func handLayer(randomCount n: Int) -> [UInt8] {
    var b: [UInt8] = [0x89, 0x17, 0xE3, 0x1B]                 // decryptedMessageLayer#1be31789
    b += [UInt8(n)] + (0..<n).map { UInt8($0) }                // random_bytes, short form
    b += [UInt8](repeating: 0, count: (4 - (1 + n) % 4) % 4)   // padding
    b += [0x90, 0x00, 0x00, 0x00]                              // layer 144
    b += [0x00, 0x00, 0x00, 0x00]                              // in_seq_no 0
    b += [0x01, 0x00, 0x00, 0x00]                              // out_seq_no 1
    b += [0x60, 0x41, 0x16, 0x73]                              // decryptedMessageService#73164160
    b += [0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01]      // random_id
    b += [0x63, 0xDD, 0x2F, 0xA8]                              // decryptedMessageActionNoop#a82fdd63
    return b
}

@Test func secretChatDecodesHandBuiltLayer() throws {
    let l = try SC.DecryptedMessageLayer.decode(handLayer(randomCount: 15))
    #expect(l.randomBytes == (0..<15).map { UInt8($0) })
    #expect(l.layer == 144 && l.inSeqNo == 0 && l.outSeqNo == 1)
    #expect(l.message == .service(randomID: 0x0102_0304_0506_0708, action: .noop))
    #expect(l.serialized == handLayer(randomCount: 15))
    #expect(try SC.DecryptedMessageLayer.decode(handLayer(randomCount: 31)).randomBytes.count == 31)
}

/// serialize() is the checked form of `serialized`: a string or bytes field TL cannot hold (2^24 bytes
/// or more) is ``SecretChatError/invalidPlaintext(_:)``, where `serialized` traps; below that both agree.
@Test func secretChatSerializeRefusesFieldsTLCannotHold() throws {
    var rng = SplitMix64(seed: 0x51e)
    func layer(_ text: String) throws -> SecretChat.DecryptedMessageLayer {
        try SecretChat.DecryptedMessageLayer(inSeqNo: 0, outSeqNo: 1,
                                             message: .message(SecretChat.PlainMessage(randomID: 1, message: text)), using: &rng)
    }
    let fits = try layer(String(repeating: "b", count: TLWriter.maxBytesLength))
    #expect(try fits.serialize() == fits.serialized)
    #expect(try fits.serialize().count > SecretChat.Envelope.maxTLLength)   // fits TL, but not one message
    let over = try layer(String(repeating: "b", count: TLWriter.maxBytesLength + 1))
    #expect(throws: SecretChatError.invalidPlaintext("a TL bytes or string field longer than 16777215 bytes")) {
        try over.serialize()
    }
    // A bytes field counts too (here an action's).
    let requestKey = SecretChat.DecryptedMessage.service(randomID: 2, action: .requestKey(exchangeID: 3, gA: [UInt8](repeating: 7, count: 1 << 24)))
    #expect(throws: SecretChatError.self) { try requestKey.serialize() }
    let small = try layer("small")
    #expect(try small.serialize() == small.serialized)
}

@Test func secretChatRefusesFewerThan15RandomBytes() throws {
    for n in 0..<15 {
        #expect(throws: SecretChatError.tooFewRandomBytes(n)) { try SC.DecryptedMessageLayer.decode(handLayer(randomCount: n)) }
        #expect(throws: SecretChatError.tooFewRandomBytes(n)) { try layer(.service(randomID: 1, action: .noop), random: n) }
    }
    var rng = SplitMix64(seed: 1)
    let l = try SC.DecryptedMessageLayer(inSeqNo: 0, outSeqNo: 1, message: .service(randomID: 1, action: .noop), using: &rng)
    #expect(l.randomBytes.count == 31 && l.layer == SC.Layer.current)
    var rng2 = SplitMix64(seed: 1)
    let l2 = try SC.DecryptedMessageLayer(inSeqNo: 0, outSeqNo: 1, message: .service(randomID: 1, action: .noop), using: &rng2)
    #expect(l2.randomBytes == l.randomBytes)  // the injected generator decides them
    #expect(throws: SecretChatError.tooFewRandomBytes(14)) {
        try SC.DecryptedMessageLayer(inSeqNo: 0, outSeqNo: 1, message: .service(randomID: 1, action: .noop),
                                     randomByteCount: 14, using: &rng)
    }
}

@Test func secretChatUnknownConstructors() throws {
    // A geo point (decryptedMessageMediaGeoPoint#35480a59 lat:double long:double) is not implemented: alone
    // it is an unknown constructor; inside a layer the message is kept verbatim with valid numbers.
    var w = TLWriter()
    w.constructor(SC.Constructor.decryptedMessage)
    w.uint32(1 << 9)
    w.int64(99); w.int32(0); w.string("")
    w.constructor(0x3548_0a59); w.uint64(0x4049_0000_0000_0000); w.uint64(0x4024_0000_0000_0000)
    let message = w.bytes
    #expect(throws: SecretChatError.unknownConstructor(0x3548_0a59)) { try SC.DecryptedMessage.decode(message) }
    var lw = TLWriter()
    lw.constructor(SC.Constructor.decryptedMessageLayer)
    lw.tlBytes([UInt8](repeating: 1, count: 15)); lw.int32(144); lw.int32(4); lw.int32(7)
    lw.raw(message)
    let l = try SC.DecryptedMessageLayer.decode(lw.bytes)
    #expect(l.outSeqNo == 7 && l.inSeqNo == 4)
    #expect(l.message == .unsupported(.init(constructor: SC.Constructor.decryptedMessage,
                                             unknownConstructor: 0x3548_0a59, bytes: message)))
    #expect(l.serialized == lw.bytes)
    // An unknown message constructor, an unknown action and an unknown entity.
    #expect(throws: SecretChatError.unknownConstructor(0xdead_beef)) { try SC.DecryptedMessage.decode([0xEF, 0xBE, 0xAD, 0xDE]) }
    #expect(throws: SecretChatError.unknownConstructor(0xdead_beef)) {
        try SC.DecryptedMessageAction.decode([0xEF, 0xBE, 0xAD, 0xDE])
    }
    // Unknown flag bits and other defects refuse the whole layer.
    var fw = TLWriter()
    fw.constructor(SC.Constructor.decryptedMessageLayer)
    fw.tlBytes([UInt8](repeating: 1, count: 15)); fw.int32(144); fw.int32(0); fw.int32(1)
    fw.constructor(SC.Constructor.decryptedMessage); fw.uint32(1 << 20); fw.int64(1); fw.int32(0); fw.string("")
    #expect(throws: SecretChatError.self) { try SC.DecryptedMessageLayer.decode(fw.bytes) }
    #expect(throws: SecretChatError.self) { try SC.DecryptedMessageLayer.decode(handLayer(randomCount: 15) + [0, 0, 0, 0]) }
}

// MARK: Hostile input

@Test func secretChatTruncationAtEveryOffsetIsATypedError() throws {
    for m in allMessages {
        let bytes = try layer(m).serialized
        for cut in 0..<bytes.count {
            #expect(throws: SecretChatError.self) { try SC.DecryptedMessageLayer.decode(bytes[0..<cut]) }
        }
        let bare = m.serialized
        for cut in 0..<bare.count {
            #expect(throws: SecretChatError.self) { try SC.DecryptedMessage.decode(bare[0..<cut]) }
        }
    }
}

@Test func secretChatRandomInputNeverTraps() throws {
    var rng = SplitMix64(seed: 0x5ec7e7)
    let valid = try allMessages.map { try layer($0).serialized }
    for i in 0..<20_000 {
        var input: [UInt8]
        if i % 2 == 0 {
            input = (0..<Int(rng.next() % 200)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if i % 4 == 0, input.count >= 4 {  // start with a real constructor to get past the first check
                let ids: [UInt32] = [SC.Constructor.decryptedMessageLayer, SC.Constructor.decryptedMessage,
                                     SC.Constructor.decryptedMessageService, SC.Constructor.mediaDocument]
                let id = ids[Int(rng.next() % 4)]
                for k in 0..<4 { input[k] = UInt8(truncatingIfNeeded: id >> (8 * UInt32(k))) }
            }
        } else {
            input = valid[Int(rng.next() % UInt64(valid.count))]
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                input[Int(rng.next() % UInt64(input.count))] = UInt8(truncatingIfNeeded: rng.next())
            }
        }
        if let l = try? SC.DecryptedPayload.decode(input) { #expect(l.serialized == input) }
        if let m = try? SC.DecryptedMessage.decode(input) { #expect(m.serialized == input) }
        _ = try? SC.DecryptedMessageAction.decode(input)
        _ = try? SC.DecryptedMessageMedia.decode(input)
        _ = try? SC.MessageEntity.decode(input)
        _ = try? SC.DocumentAttribute.decode(input)
    }
}

@Test func secretChatHugeCountsAllocateNothing() {
    // readMessages announcing 2^31 - 1 ids with 8 bytes present, and a document with 10^6 attributes.
    var w = TLWriter()
    w.constructor(SC.Constructor.actionReadMessages); w.constructor(TL.vector); w.int32(Int32.max); w.int64(1)
    #expect(throws: SecretChatError.self) { try SC.DecryptedMessageAction.decode(w.bytes) }
    var d = TLWriter()
    d.constructor(SC.Constructor.mediaDocument); d.tlBytes([]); d.int32(0); d.int32(0); d.string("a"); d.int64(1)
    d.tlBytes([]); d.tlBytes([]); d.constructor(TL.vector); d.int32(1_000_000)
    #expect(throws: SecretChatError.self) { try SC.DecryptedMessageMedia.decode(d.bytes) }
}

// MARK: API layer (Docs/MTProto.md §7.1)

private typealias API = SecretChat.API

/// The current API schema's lines (gotd/td `_schema/telegram.tl`) for every constructor implemented.
private let apiSchema: [(UInt32, String)] = [
    (API.Constructor.getDhConfig, "messages.getDhConfig#26cf8950 version:int random_length:int = messages.DhConfig"),
    (API.Constructor.dhConfig, "messages.dhConfig#2c221edd g:int p:bytes version:int random:bytes = messages.DhConfig"),
    (API.Constructor.dhConfigNotModified, "messages.dhConfigNotModified#c0e24635 random:bytes = messages.DhConfig"),
    (API.Constructor.requestEncryption, "messages.requestEncryption#f64daf43 user_id:InputUser random_id:int g_a:bytes = EncryptedChat"),
    (API.Constructor.acceptEncryption, "messages.acceptEncryption#3dbc0415 peer:InputEncryptedChat g_b:bytes key_fingerprint:long = EncryptedChat"),
    (API.Constructor.discardEncryption, "messages.discardEncryption#f393aea0 flags:# delete_history:flags.0?true chat_id:int = Bool"),
    (API.Constructor.sendEncrypted, "messages.sendEncrypted#44fa7a15 flags:# silent:flags.0?true peer:InputEncryptedChat random_id:long data:bytes = messages.SentEncryptedMessage"),
    (API.Constructor.sendEncryptedFile, "messages.sendEncryptedFile#5559481d flags:# silent:flags.0?true peer:InputEncryptedChat random_id:long data:bytes file:InputEncryptedFile = messages.SentEncryptedMessage"),
    (API.Constructor.sendEncryptedService, "messages.sendEncryptedService#32d439a4 peer:InputEncryptedChat random_id:long data:bytes = messages.SentEncryptedMessage"),
    (API.Constructor.encryptedChatEmpty, "encryptedChatEmpty#ab7ec0a0 id:int = EncryptedChat"),
    (API.Constructor.encryptedChatWaiting, "encryptedChatWaiting#66b25953 id:int access_hash:long date:int admin_id:long participant_id:long = EncryptedChat"),
    (API.Constructor.encryptedChatRequested, "encryptedChatRequested#48f1d94c flags:# folder_id:flags.0?int id:int access_hash:long date:int admin_id:long participant_id:long g_a:bytes = EncryptedChat"),
    (API.Constructor.encryptedChat, "encryptedChat#61f0d4c7 id:int access_hash:long date:int admin_id:long participant_id:long g_a_or_b:bytes key_fingerprint:long = EncryptedChat"),
    (API.Constructor.encryptedChatDiscarded, "encryptedChatDiscarded#1e1c7c45 flags:# history_deleted:flags.0?true id:int = EncryptedChat"),
    (API.Constructor.inputEncryptedChat, "inputEncryptedChat#f141b5e1 chat_id:int access_hash:long = InputEncryptedChat"),
    (API.Constructor.encryptedMessage, "encryptedMessage#ed18c118 random_id:long chat_id:int date:int bytes:bytes file:EncryptedFile = EncryptedMessage"),
    (API.Constructor.encryptedMessageService, "encryptedMessageService#23734b06 random_id:long chat_id:int date:int bytes:bytes = EncryptedMessage"),
    (API.Constructor.updateEncryption, "updateEncryption#b4a2e88d chat:EncryptedChat date:int = Update"),
    (API.Constructor.updateNewEncryptedMessage, "updateNewEncryptedMessage#12bcbd9a message:EncryptedMessage qts:int = Update"),
    (API.Constructor.inputEncryptedFileEmpty, "inputEncryptedFileEmpty#1837c364 = InputEncryptedFile"),
    (API.Constructor.inputEncryptedFileUploaded, "inputEncryptedFileUploaded#64bd0306 id:long parts:int md5_checksum:string key_fingerprint:int = InputEncryptedFile"),
    (API.Constructor.inputEncryptedFile, "inputEncryptedFile#5a17b5e5 id:long access_hash:long = InputEncryptedFile"),
    (API.Constructor.inputEncryptedFileBigUploaded, "inputEncryptedFileBigUploaded#2dc173c8 id:long parts:int key_fingerprint:int = InputEncryptedFile"),
    (API.Constructor.encryptedFileEmpty, "encryptedFileEmpty#c21f497e = EncryptedFile"),
    (API.Constructor.encryptedFile, "encryptedFile#a8008cd8 id:long access_hash:long size:long dc_id:int key_fingerprint:int = EncryptedFile"),
    (API.Constructor.sentEncryptedMessage, "messages.sentEncryptedMessage#560f8935 date:int = messages.SentEncryptedMessage"),
    (API.Constructor.sentEncryptedFile, "messages.sentEncryptedFile#9493ff32 date:int file:EncryptedFile = messages.SentEncryptedMessage"),
    (API.Constructor.inputUserEmpty, "inputUserEmpty#b98886cf = InputUser"),
    (API.Constructor.inputUserSelf, "inputUserSelf#f7c1b13f = InputUser"),
    (API.Constructor.inputUser, "inputUser#f21158c6 user_id:long access_hash:long = InputUser"),
    (API.Constructor.getUsers, "users.getUsers#d91a548 id:Vector<InputUser> = Vector<User>"),
    (API.Constructor.userEmpty, "userEmpty#d3bc4b7a id:long = User"),
    (API.Constructor.user, "user#20b1422 flags:# self:flags.10?true contact:flags.11?true mutual_contact:flags.12?true deleted:flags.13?true bot:flags.14?true bot_chat_history:flags.15?true bot_nochats:flags.16?true verified:flags.17?true restricted:flags.18?true min:flags.20?true bot_inline_geo:flags.21?true support:flags.23?true scam:flags.24?true apply_min_photo:flags.25?true fake:flags.26?true bot_attach_menu:flags.27?true premium:flags.28?true attach_menu_enabled:flags.29?true flags2:# bot_can_edit:flags2.1?true close_friend:flags2.2?true stories_hidden:flags2.3?true stories_unavailable:flags2.4?true contact_require_premium:flags2.10?true bot_business:flags2.11?true bot_has_main_app:flags2.13?true id:long access_hash:flags.0?long first_name:flags.1?string last_name:flags.2?string username:flags.3?string phone:flags.4?string photo:flags.5?UserProfilePhoto status:flags.6?UserStatus bot_info_version:flags.14?int restriction_reason:flags.18?Vector<RestrictionReason> bot_inline_placeholder:flags.19?string lang_code:flags.22?string emoji_status:flags.30?EmojiStatus usernames:flags2.0?Vector<Username> stories_max_id:flags2.5?int color:flags2.8?PeerColor profile_color:flags2.9?PeerColor bot_active_users:flags2.12?int bot_verification_icon:flags2.14?long send_paid_messages_stars:flags2.15?long = User"),
    (API.Constructor.updateShort, "updateShort#78d4dec1 update:Update date:int = Updates"),
    (API.Constructor.updates, "updates#74ae4240 updates:Vector<Update> users:Vector<User> chats:Vector<Chat> date:int seq:int = Updates"),
    (API.Constructor.saveFilePart, "upload.saveFilePart#b304a621 file_id:long file_part:int bytes:bytes = Bool"),
    (API.Constructor.getFile, "upload.getFile#be5335be flags:# precise:flags.0?true cdn_supported:flags.1?true location:InputFileLocation offset:long limit:int = upload.File"),
    (API.Constructor.inputEncryptedFileLocation, "inputEncryptedFileLocation#f5235d55 id:long access_hash:long = InputFileLocation"),
    (API.Constructor.uploadFile, "upload.file#96a18d5 type:storage.FileType mtime:int bytes:bytes = upload.File"),
    (API.Constructor.storageFileUnknown, "storage.fileUnknown#aa963b05 = storage.FileType"),
]

@Test func secretChatAPIConstructorIDsMatchTheSchema() {
    for (constant, line) in apiSchema {
        #expect(schemaID(line) == constant, "\(line)")
        #expect(schemaCRC(line) == constant, "CRC32 of \(line)")  // every one of these is the CRC of its text
    }
    // The ids quoted in Docs/MTProto.md §7.1 of the spec digest.
    #expect(API.Constructor.getDhConfig == 0x26cf8950 && API.Constructor.updateEncryption == 0xb4a2e88d)
    #expect(API.Constructor.encryptedMessage == 0xed18c118 && API.Constructor.inputEncryptedChat == 0xf141b5e1)
}

private let peer = API.InputEncryptedChat(chatID: 77, accessHash: -5)
private let files: [API.EncryptedFile] = [.empty, .file(id: 1, accessHash: 2, size: 1 << 33, dcID: 2, keyFingerprint: -3)]
private let chats: [API.EncryptedChat] = [
    .empty(id: 1),
    .waiting(.init(id: 2, accessHash: 3, date: 4, adminID: 5, participantID: 6)),
    .requested(.init(id: 2, accessHash: 3, date: 4, adminID: 5, participantID: 6, gA: [UInt8](repeating: 9, count: 256))),
    .requested(.init(folderID: 1, id: 2, accessHash: 3, date: 4, adminID: 5, participantID: 6, gA: [1])),
    .chat(.init(id: 2, accessHash: 3, date: 4, adminID: 5, participantID: 6, gAOrB: [2, 2], keyFingerprint: -1)),
    .discarded(historyDeleted: true, id: 9), .discarded(historyDeleted: false, id: 9),
]
private let requests: [API.Request] = [
    .getDhConfig(version: 0, randomLength: 256),
    .requestEncryption(userID: .user(userID: 1_000_000_000_123, accessHash: 7), randomID: -4, gA: [3, 4, 5]),
    .requestEncryption(userID: .inputSelf, randomID: 1, gA: []),
    .requestEncryption(userID: .empty, randomID: 1, gA: []),
    .acceptEncryption(peer: peer, gB: [UInt8](repeating: 1, count: 256), keyFingerprint: 0x0102_0304_0506_0708),
    .discardEncryption(deleteHistory: true, chatID: 77), .discardEncryption(deleteHistory: false, chatID: 77),
    .sendEncrypted(silent: true, peer: peer, randomID: 8, data: [1, 2, 3, 4, 5]),
    .sendEncrypted(silent: false, peer: peer, randomID: 8, data: []),
    .sendEncryptedFile(silent: false, peer: peer, randomID: 9, data: [6], file: .uploaded(id: 1, parts: 2, md5Checksum: "abc", keyFingerprint: 3)),
    .sendEncryptedFile(silent: true, peer: peer, randomID: 9, data: [6], file: .bigUploaded(id: 1, parts: 2, keyFingerprint: 3)),
    .sendEncryptedFile(silent: true, peer: peer, randomID: 9, data: [6], file: .file(id: 1, accessHash: 2)),
    .sendEncryptedFile(silent: true, peer: peer, randomID: 9, data: [6], file: .empty),
    .sendEncryptedService(peer: peer, randomID: 10, data: [UInt8](repeating: 0xEE, count: 300)),
    .getUsers(ids: [.inputSelf, .user(userID: 5, accessHash: -6), .empty]), .getUsers(ids: []),
    .saveFilePart(fileID: -1, part: 3, bytes: [UInt8](repeating: 1, count: 1000)),
    .getFile(precise: true, fileID: 1, accessHash: -2, offset: 1 << 20, limit: 512 << 10),
    .getFile(precise: false, fileID: 1, accessHash: 2, offset: 0, limit: 1024),
]

@Test func secretChatAPIRoundTrips() throws {
    func check<T: SecretChat.TLObject>(_ values: [T]) throws {
        for v in values {
            let b = v.serialized
            #expect(try T.decode(b) == v)
            for cut in 0..<b.count { #expect(throws: SecretChatError.self) { try T.decode(b[0..<cut]) } }
            #expect(throws: SecretChatError.self) { try T.decode(b + [0, 0, 0, 0]) }
        }
    }
    try check(requests)
    try check(chats)
    try check(files)
    try check(chats.map { API.Update.encryption(chat: $0, date: 5) })
    let messages: [API.EncryptedMessage] = files.map { .message(randomID: 1, chatID: 2, date: 3, bytes: [4, 5], file: $0) }
        + [.service(randomID: 1, chatID: 2, date: 3, bytes: [UInt8](repeating: 6, count: 1000))]
    try check(messages)
    try check(messages.map { API.Update.newEncryptedMessage(message: $0, qts: 11) })
    try check([API.DhConfig.config(g: 3, p: [UInt8](repeating: 0xFF, count: 256), version: 2, random: [1, 2]),
               .notModified(random: [UInt8](repeating: 7, count: 256))])
    try check(files.map { API.SentEncryptedMessage.file(date: 1, file: $0) } + [.message(date: 9)])
    let users = [API.User(id: 1), API.User(id: -2, accessHash: 3, firstName: "x", isSelf: true), API.User(id: 4, isSelf: true)]
    try check(users)
    try check([API.Updates.short(update: .encryption(chat: chats[1], date: 2), date: 3),
               .updates([], date: 1, seq: 0), .updates(messages.map { .newEncryptedMessage(message: $0, qts: 4) }, date: 5, seq: 6)])
    try check([API.UploadFile(modified: 1, bytes: []), API.UploadFile(modified: -1, bytes: [UInt8](repeating: 3, count: 600))])
    #expect(try API.decodeUsers(API.encodeUsers(users)) == users)
}

@Test func secretChatAPIHandBuilt() throws {
    // messages.getDhConfig(version: 0, random_length: 256), from the schema by hand.
    let get: [UInt8] = [0x50, 0x89, 0xCF, 0x26, 0, 0, 0, 0, 0x00, 0x01, 0, 0]
    #expect(try API.Request.decode(get) == .getDhConfig(version: 0, randomLength: 256))
    // messages.discardEncryption(delete_history, chat_id: 77)
    let discard: [UInt8] = [0xA0, 0xAE, 0x93, 0xF3, 1, 0, 0, 0, 77, 0, 0, 0]
    #expect(try API.Request.decode(discard) == .discardEncryption(deleteHistory: true, chatID: 77))
    // Unknown flag bits, an old-layer constructor (sendEncrypted#a9776773 without flags), an unknown file.
    #expect(throws: SecretChatError.self) { try API.Request.decode([0xA0, 0xAE, 0x93, 0xF3, 2, 0, 0, 0, 77, 0, 0, 0]) }
    #expect(throws: SecretChatError.unknownConstructor(0xa977_6773)) { try API.Request.decode([0x73, 0x67, 0x77, 0xA9]) }
    #expect(throws: SecretChatError.unknownConstructor(0x4a70_994c)) { try API.EncryptedFile.decode([0x4C, 0x99, 0x70, 0x4A]) }
}

@Test func secretChatAPIRandomInputNeverTraps() {
    var rng = SplitMix64(seed: 0xa91)
    let valid = requests.map(\.serialized) + chats.map { API.Update.encryption(chat: $0, date: 1).serialized }
    for _ in 0..<10_000 {
        var input = valid[Int(rng.next() % UInt64(valid.count))]
        for _ in 0..<(1 + Int(rng.next() % 3)) {
            input[Int(rng.next() % UInt64(input.count))] = UInt8(truncatingIfNeeded: rng.next())
        }
        if rng.next() % 3 == 0 { input = Array(input.prefix(Int(rng.next() % UInt64(input.count + 1)))) }
        if let v = try? API.Request.decode(input) { #expect(v.serialized == input) }
        if let v = try? API.Update.decode(input) { #expect(v.serialized == input) }
        _ = try? API.EncryptedChat.decode(input)
        _ = try? API.DhConfig.decode(input)
        _ = try? API.SentEncryptedMessage.decode(input)
    }
}

/// The decrypted layer of vector Docs/MTProto.md §10.D4 (Vectors/mtproto/derived_vectors.json,
/// `secret_chat_creator.decrypted_layer_tl`, computed independently from the schema): 16 random bytes,
/// layer 144, in 0, out 1, a Noop service message.
@Test func secretChatDecodesVectorD4Layer() throws {
    guard let data = mtprotoVectorFile("derived_vectors.json") else { return }
    let d = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let v = try #require(d["secret_chat_creator"] as? [String: Any])
    let tl = hexBytes((try #require(v["decrypted_layer_tl"] as? String)).lowercased())
    let plaintext = hexBytes((try #require(v["plaintext"] as? String)).lowercased())
    let l = try SC.DecryptedMessageLayer.decode(tl)
    #expect(l.randomBytes == (0x10...0x1F).map { UInt8($0) })
    #expect(l.layer == 144 && l.inSeqNo == 0 && l.outSeqNo == 1)
    #expect(l.message == .service(randomID: 0x0102_0304_0506_0708, action: .noop))
    let built = try SC.DecryptedMessageLayer(randomBytes: (0x10...0x1F).map { UInt8($0) }, layer: SC.Layer.current, inSeqNo: 0,
                                             outSeqNo: 1, message: .service(randomID: 0x0102_0304_0506_0708, action: .noop))
    #expect(built.serialized == tl)
    // The plaintext is the int32 length, the object, then padding (Docs/MTProto.md §7.3).
    let n = Int(plaintext[0]) | Int(plaintext[1]) << 8 | Int(plaintext[2]) << 16 | Int(plaintext[3]) << 24
    #expect(n == tl.count && Array(plaintext[4..<(4 + n)]) == tl)
}
