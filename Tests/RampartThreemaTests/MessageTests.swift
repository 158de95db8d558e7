import Rampart
import RampartCodecs
import RampartTestSupport
import Testing
@_spi(Testing) @testable import RampartThreema

@Suite("Threema end-to-end messages")
struct MessageTests {
    func text(_ s: String, nickname: String? = "Alice", id: UInt64? = nil, rng: inout SplitMix64) -> OutgoingMessage {
        OutgoingMessage(type: .text, body: Array(s.utf8), createdAt: 1_700_000_000_123, flags: [.sendPush],
                        nickname: nickname, messageID: id, using: &rng)
    }

    @Test(arguments: [EnvelopeFormat.withMetadata, .legacy])
    func sealAndOpen(format: EnvelopeFormat) throws {
        var rng = SplitMix64(seed: 10)
        let msg = text("Hello", rng: &rng)
        let sealed = try EndToEnd.seal(msg, from: alice, keys: PairKeys(identity: alice, contact: bob.contact),
                                       format: format, using: &rng)
        let env = try MessageEnvelope(parsing: sealed)
        #expect(env.encoded == sealed)
        #expect(env.sender == alice.id && env.receiver == bob.id && env.messageID == msg.messageID)
        #expect((env.metadataBox == nil) == (format == .legacy))
        // The nickname stays out of the clear header unless the format needs it.
        #expect(env.legacyNicknameText == (format == .legacy ? "Alice" : nil))
        var store = InMemoryNonceStore()
        let opened = try env.open(as: bob, keys: PairKeys(identity: bob, contact: alice.contact), nonceStore: &store)
        #expect(opened.container == msg.container)
        #expect(opened.nickname == "Alice")
        #expect(opened.flags == [.sendPush])
        #expect(opened.createdAt == (format == .legacy ? 1_700_000_000_000 : 1_700_000_000_123))
        #expect(store.count == 1)
        // The same bytes again: a replay, refused before decryption; the store does not change.
        #expect(throws: ThreemaError.replayedNonce) {
            try env.open(as: bob, keys: PairKeys(identity: bob, contact: alice.contact), nonceStore: &store)
        }
        #expect(store.count == 1)
    }

    @Test func paddingHidesShortBodies() throws {
        var rng = SplitMix64(seed: 11)
        for length in [0, 1, 31, 32, 200] {
            let container = MessageContainer(type: .text, body: [UInt8](repeating: 0x41, count: length))
            for _ in 0..<50 {
                let enc = container.encoded(using: &rng)
                let n = Int(enc.last!)
                #expect((1...255).contains(n))
                #expect(enc.count - 1 >= 32)
                #expect(try MessageContainer(decoding: enc) == container)
            }
        }
    }

    /// Every producer's padding decodes: the protocol/SDK rule, Android's (type byte counted), and
    /// any N from 1 to 255.
    @Test func everyPaddingVariantDecodes() throws {
        let body = Array("hi".utf8)
        for n in 1...255 {
            let c = MessageContainer(type: .text, body: body)
            #expect(try MessageContainer(decoding: c.encoded(paddingLength: n)) == c)
        }
        // Android: type ‖ body ‖ padding ≥ 32 with N in 1...254.
        let android = [UInt8(0x01)] + body + [UInt8](repeating: 29, count: 29)
        #expect(try MessageContainer(decoding: android).body == body)
    }

    @Test(arguments: [[UInt8](), [0x01], [0x01, 0x00], [0x01, 0x02], [0x01, 0x41, 0x03], [0x01] + [UInt8](repeating: 0xff, count: 254)])
    func malformedPaddingIsRefused(_ bytes: [UInt8]) {
        #expect(throws: ThreemaError.invalidPadding) { try MessageContainer(decoding: bytes) }
    }

    @Test func tamperingAnyByteIsRefused() throws {
        var rng = SplitMix64(seed: 12)
        let sealed = try EndToEnd.seal(text("tamper me", rng: &rng), from: alice,
                                       keys: PairKeys(identity: alice, contact: bob.contact), using: &rng)
        let keys = try PairKeys(identity: bob, contact: alice.contact)
        for i in 0..<sealed.count {
            var t = sealed
            t[i] ^= 0x01
            var store = InMemoryNonceStore()
            do {
                let env = try MessageEnvelope(parsing: t)
                let m = try env.open(as: bob, keys: keys, nonceStore: &store)
                // Only unauthenticated header fields may change without an error: the flags, the
                // reserved byte, the envelope time, the legacy nickname (all overridden or carried).
                #expect([28, 29, 24, 25, 26, 27].contains(i) || (32..<64).contains(i), "byte \(i) changed silently")
                #expect(m.container.body == Array("tamper me".utf8))
            } catch let e {
                #expect(store.count == 0)
                switch e {
                case .authenticationFailed, .malformedEnvelope, .wrongReceiver, .invalidArgument,
                     .metadataMessageIDMismatch: break
                default: Issue.record("byte \(i): unexpected \(e)")
                }
            }
        }
    }

    @Test func metadataMessageIDMustMatch() throws {
        var rng = SplitMix64(seed: 13)
        let msg = text("x", id: 42, rng: &rng)
        let keys = try PairKeys(identity: alice, contact: bob.contact)
        var env = try EndToEnd.seal(msg, from: alice, keys: keys, format: .withMetadata,
                                    nonce: [UInt8](repeating: 9, count: 24), paddingLength: 40)
        env.messageID = 43   // the envelope's ID no longer matches the authenticated metadata's
        #expect(throws: ThreemaError.metadataMessageIDMismatch) {
            try MessageEnvelope(parsing: env.encoded).open(keys: PairKeys(identity: bob, contact: alice.contact))
        }
    }

    @Test func wrongReceiverAndWrongKeys() throws {
        var rng = SplitMix64(seed: 14)
        let sealed = try EndToEnd.seal(text("x", rng: &rng), from: alice, keys: PairKeys(identity: alice, contact: bob.contact), using: &rng)
        let env = try MessageEnvelope(parsing: sealed)
        var store = InMemoryNonceStore()
        #expect(throws: ThreemaError.wrongReceiver) {
            try env.open(as: eve, keys: PairKeys(identity: eve, contact: alice.contact), nonceStore: &store)
        }
        #expect(throws: ThreemaError.invalidArgument("the keys belong to another contact than the sender")) {
            try env.open(as: bob, keys: PairKeys(identity: bob, contact: eve.contact), nonceStore: &store)
        }
        // A forged sender: Eve's key under Alice's ID fails authentication, nothing remembered.
        let forged = ThreemaContact(id: alice.id, publicKey: eve.publicKey)
        #expect(throws: ThreemaError.authenticationFailed) {
            try env.open(as: bob, keys: PairKeys(identity: bob, contact: forged), nonceStore: &store)
        }
        #expect(store.count == 0)
    }

    /// The header's sender is not authenticated by the boxes, so the opening calls without a nonce
    /// store must check it against the keys too: an envelope whose sender was rewritten opens under
    /// the real sender's keys only if nobody compares, and then names the wrong sender.
    @Test(arguments: [EnvelopeFormat.withMetadata, .legacy])
    func openWithoutNonceStoreChecksTheSender(format: EnvelopeFormat) throws {
        var rng = SplitMix64(seed: 18)
        let sealed = try EndToEnd.seal(text("who sent this", rng: &rng), from: alice,
                                       keys: PairKeys(identity: alice, contact: bob.contact), format: format, using: &rng)
        let keys = try PairKeys(identity: bob, contact: alice.contact)
        // Unchanged: both forms open it, with Alice as the sender.
        #expect(try EndToEnd.open(sealed, keys: keys).sender == alice.id)
        #expect(try MessageEnvelope(parsing: sealed).open(keys: keys).sender == alice.id)
        // One sender byte changed to another valid ID character: still a well-formed envelope.
        var relabeled = sealed
        relabeled[7] = relabeled[7] == 0x5A ? 0x59 : (relabeled[7] == 0x39 ? 0x38 : relabeled[7] + 1)
        let env = try MessageEnvelope(parsing: relabeled)
        #expect(env.sender != alice.id)
        let refusal = ThreemaError.invalidArgument("the keys belong to another contact than the sender")
        #expect(throws: refusal) { try env.open(keys: keys) }
        #expect(throws: refusal) { try EndToEnd.open(relabeled, keys: keys) }
        // The nonce-store forms refused it already.
        var store = InMemoryNonceStore()
        #expect(throws: refusal) { try env.open(as: bob, keys: keys, nonceStore: &store) }
        #expect(throws: refusal) { try EndToEnd.open(relabeled, as: bob, keys: keys, nonceStore: &store) }
        #expect(store.count == 0)
        // Keys for the claimed sender do not authenticate Alice's boxes.
        let claimed = try PairKeys(identity: bob, contact: ThreemaContact(id: env.sender, publicKey: eve.publicKey))
        #expect(throws: ThreemaError.authenticationFailed) { try env.open(keys: claimed) }
    }

    @Test func envelopeParserRejectsMalformedHeaders() throws {
        #expect(throws: ThreemaError.malformedEnvelope(.tooShort(103))) { try MessageEnvelope(parsing: [UInt8](repeating: 0x41, count: 103)) }
        var rng = SplitMix64(seed: 15)
        let sealed = try EndToEnd.seal(text("x", rng: &rng), from: alice, keys: PairKeys(identity: alice, contact: bob.contact), using: &rng)
        var b = sealed; b[0] = 0x61
        #expect(throws: ThreemaError.malformedEnvelope(.invalidSender)) { try MessageEnvelope(parsing: b) }
        b = sealed; b[15] = 0x20
        #expect(throws: ThreemaError.malformedEnvelope(.invalidReceiver)) { try MessageEnvelope(parsing: b) }
        b = sealed; b[30] = 0xff; b[31] = 0xff
        #expect(throws: ThreemaError.malformedEnvelope(.metadataLengthOutOfRange(0xffff))) { try MessageEnvelope(parsing: b) }
        b = sealed; b[30] = 5; b[31] = 0
        #expect(throws: ThreemaError.malformedEnvelope(.metadataTooShort(5))) { try MessageEnvelope(parsing: b) }
    }

    @Test func randomAndMutatedEnvelopesNeverTrap() throws {
        var rng = SplitMix64(seed: 16)
        let keys = try PairKeys(identity: bob, contact: alice.contact)
        let valid = try EndToEnd.seal(text("fuzz", rng: &rng), from: alice, keys: PairKeys(identity: alice, contact: bob.contact), using: &rng)
        var store = InMemoryNonceStore()
        for i in 0..<4000 {
            let input = i % 4 == 0 ? randomBytes(count: Int(rng.next() % 300), using: &rng) : mutated(valid, &rng)
            guard let env = try? MessageEnvelope(parsing: input) else { continue }
            _ = try? env.open(as: bob, keys: keys, nonceStore: &store)
        }
        // Only an unchanged message box and metadata can authenticate: at most the one valid nonce.
        #expect(store.count <= 1)
    }

    /// `EndToEnd.open` (one pass over the wire bytes) must give exactly what parsing and then opening
    /// gives: the same message or the same error, for every single-bit flip of a valid envelope, for
    /// mutated and random inputs, in both formats; a replay is refused by both.
    @Test(arguments: [EnvelopeFormat.withMetadata, .legacy])
    func oneShotOpenAgreesWithParsedOpen(format: EnvelopeFormat) throws {
        var rng = SplitMix64(seed: 17)
        let keys = try PairKeys(identity: bob, contact: alice.contact)
        let valid = try EndToEnd.seal(text("one pass", rng: &rng), from: alice,
                                      keys: PairKeys(identity: alice, contact: bob.contact), format: format, using: &rng)
        #expect(try EndToEnd.sender(of: valid) == alice.id)
        func outcome(_ r: Result<IncomingMessage, ThreemaError>) -> String {
            switch r {
            case .success(let m):
                return "\(m.sender) \(m.receiver) \(m.messageID) \(m.createdAt) \(m.flags.rawValue) \(m.nickname ?? "-") "
                    + "\(m.container) \(m.nonce) \(String(describing: m.metadata))"
            case .failure(let e): return "error \(e)"
            }
        }
        var inputs: [[UInt8]] = []
        for i in 0..<valid.count { var t = valid; t[i] ^= 1 << (i % 8); inputs.append(t) }
        for i in 0..<600 { inputs.append(i % 3 == 0 ? randomBytes(count: Int(rng.next() % 300), using: &rng) : mutated(valid, &rng)) }
        inputs.append(valid)
        var agreed = 0, opened = 0
        for input in inputs {
            var s1 = InMemoryNonceStore(), s2 = InMemoryNonceStore()
            let parsed: Result<IncomingMessage, ThreemaError> = Result { () throws(ThreemaError) in
                try MessageEnvelope(parsing: input).open(as: bob, keys: keys, nonceStore: &s1)
            }
            let oneShot: Result<IncomingMessage, ThreemaError> = Result { () throws(ThreemaError) in
                try EndToEnd.open(input, as: bob, keys: keys, nonceStore: &s2)
            }
            #expect(outcome(parsed) == outcome(oneShot))
            #expect(s1.count == s2.count)
            let bare: Result<IncomingMessage, ThreemaError> = Result { () throws(ThreemaError) in try EndToEnd.open(input, keys: keys) }
            let bareParsed: Result<IncomingMessage, ThreemaError> = Result { () throws(ThreemaError) in
                try MessageEnvelope(parsing: input).open(keys: keys)
            }
            #expect(outcome(bare) == outcome(bareParsed))
            if outcome(parsed) == outcome(oneShot) { agreed += 1 }
            if case .success = oneShot {
                opened += 1
                #expect(throws: ThreemaError.replayedNonce) { try EndToEnd.open(input, as: bob, keys: keys, nonceStore: &s2) }
            }
        }
        #expect(agreed == inputs.count)
        #expect(opened >= 1)   // at least the unmodified envelope
    }

    /// The receive path decodes metadata from memory with its own loop; it must agree with the
    /// ProtobufReader-based decoder (same value or same error) on valid encodings, their mutations
    /// and truncations, and random bytes built from protobuf-looking pieces.
    @Test func rawMetadataDecoderAgreesWithReaderDecoder() {
        var rng = SplitMix64(seed: 0x3e7a)
        func both(_ b: [UInt8]) {
            let viaReader = Result { () throws(ProtobufError) in try MessageMetadata(decoding: b[...]) }
            let viaRaw = b.withUnsafeBytes { p in Result { () throws(ProtobufError) in try MessageMetadata(decoding: p) } }
            #expect(viaReader == viaRaw, "\(b)")
        }
        let pieces: [[UInt8]] = [[0x0a, 0x03, 0, 0, 0], [0x12, 0x05] + Array("Alice".utf8), [0x12, 0x02, 0xc3, 0x28],
                                 [0x19, 1, 2, 3, 4, 5, 6, 7, 8], [0x20, 0xff, 0x01], [0x08, 0x01], [0x0d, 1, 2, 3, 4],
                                 [0x11, 1, 2, 3, 4, 5, 6, 7, 8], [0x1a, 0x00], [0x22, 0x01, 0x41], [0x25, 0, 0, 0, 0],
                                 [0x2a, 0x00], [0x0b], [0x00], [0x80, 0x80], [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
                                 [0x98, 0x01, 0x05], [0xfa, 0xff, 0xff, 0xff, 0x0f, 0x00]]
        for nick in [nil, "", "Bob", String(repeating: "n", count: 20)] {
            let valid = MessageMetadata(nickname: nick, messageID: rng.next(), createdAt: rng.next() >> 20).encoded
            both(valid)
            for cut in 0..<valid.count { both(Array(valid[..<cut])) }
            for _ in 0..<300 { both(mutated(valid, &rng)) }
        }
        for _ in 0..<5000 {
            var b: [UInt8] = []
            for _ in 0..<Int(rng.next() % 5) { b += pieces[Int(rng.next() % UInt64(pieces.count))] }
            if rng.next() % 4 == 0, !b.isEmpty { b[Int(rng.next() % UInt64(b.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            both(b)
        }
    }

    /// The envelope writes the metadata protobuf in place; it must be byte for byte what
    /// `MessageMetadata.encoded` (the ProtobufWriter form) gives, for every nickname length class.
    @Test(arguments: [nil, "", "A", "Alice", String(repeating: "x", count: 15), String(repeating: "x", count: 16),
                      String(repeating: "y", count: 17), String(repeating: "é", count: 70), String(repeating: "z", count: 300)])
    func inPlaceMetadataEncoderMatchesProtobufWriter(nickname: String?) {
        for createdAt: UInt64 in [0, 1, 127, 128, 1_700_000_000_123, .max] {
            let m = MessageMetadata(nickname: nickname, messageID: 0x0123_4567_89ab_cdef, createdAt: createdAt)
            var nick = nickname ?? ""
            let direct: [UInt8] = nick.withUTF8 { u in
                let n = MessageMetadata.encodedByteCount(nicknameByteCount: nickname == nil ? nil : u.count, createdAt: createdAt)
                return [UInt8](unsafeUninitializedCapacity: n) { b, c in
                    MessageMetadata.encode(nickname: nickname == nil ? nil : UnsafeRawBufferPointer(u), messageID: m.messageID,
                                           createdAt: createdAt, into: UnsafeMutableRawPointer(b.baseAddress!))
                    c = n
                }
            }
            #expect(direct == m.encoded, "nickname \(String(describing: nickname)), createdAt \(createdAt)")
        }
    }

    @Test func metadataProtobufDecoding() throws {
        let m = MessageMetadata(nickname: "Jo", messageID: 7, createdAt: 123)
        #expect(m.padding.count == 14)
        #expect(try MessageMetadata(decoding: m.encoded) == m)
        // Unknown fields are skipped; a wrong wire type is an error.
        var w = ProtobufWriter()
        w.varint(9, 1); w.fixed64(3, 5)
        #expect(try MessageMetadata(decoding: w.bytes).messageID == 5)
        var bad = ProtobufWriter()
        bad.varint(3, 5)
        #expect(throws: ProtobufError.wrongWireType(field: 3)) { try MessageMetadata(decoding: bad.bytes) }
        var rng = SplitMix64(seed: 17)
        for _ in 0..<3000 { _ = try? MessageMetadata(decoding: mutated(m.encoded, &rng)) }
    }

    @Test func gatewayReceiverGetsLegacyNickname() throws {
        var rng = SplitMix64(seed: 18)
        let gw = testIdentity("*GATEWAY", seed: 4)
        let env = try MessageEnvelope(parsing: EndToEnd.seal(text("x", nickname: "Alice", rng: &rng), from: alice,
                                                             keys: PairKeys(identity: alice, contact: gw.contact), using: &rng))
        #expect(env.legacyNicknameText == "Alice")
        #expect(env.metadataBox != nil)
    }

    @Test func groupSealReusesKeysAndRefusesBadMembers() throws {
        var rng = SplitMix64(seed: 19)
        let members = (0..<100).map { testIdentity(String(format: "M%07d", $0), seed: 100 + UInt64($0)) }
        var cache = PairKeyCache(identity: alice)
        let zero = try ThreemaContact(id: ThreemaID("BADKEY00"), publicKey: [UInt8](repeating: 0, count: 32))
        let prefix = GroupPrefix(creator: alice.id, groupID: 0x1122334455667788)
        let msg = OutgoingMessage(type: .groupText, body: prefix.encoded + Array("hi all".utf8), createdAt: 1, using: &rng)
        let result = EndToEnd.sealForGroup(msg, to: members.map(\.contact) + [zero], cache: &cache, using: &rng)
        #expect(result.sealed.count == 100)
        #expect(result.refused.count == 1 && result.refused[0].0 == zero.id && result.refused[0].1 == .invalidPublicKey)
        #expect(cache.count == 100)
        var nonces = Set<[UInt8]>()
        for (member, (id, bytes)) in zip(members, result.sealed) {
            #expect(member.id == id)
            var store = InMemoryNonceStore()
            let env = try MessageEnvelope(parsing: bytes)
            nonces.insert(env.nonce)
            let m = try env.open(as: member, keys: PairKeys(identity: member, contact: alice.contact), nonceStore: &store)
            #expect(m.messageID == msg.messageID)
            guard case .group(let p, .text(let t)) = try MessageBody(m.container) else {
                Issue.record("not a group text"); continue
            }
            #expect(p == prefix && t.text == "hi all")
        }
        #expect(nonces.count == 100)
        // A second send costs no new key agreement: the cache is unchanged in size and the keys are
        // the cached ones.
        _ = EndToEnd.sealForGroup(msg, to: members.map(\.contact), cache: &cache, using: &rng)
        #expect(cache.count == 100)
    }

    @Test func nonceStoreCapacity() throws {
        var store = InMemoryNonceStore(capacity: 2)
        let tags = (0..<3).map { NonceTag(nonce: [UInt8](repeating: UInt8($0), count: 24), identity: bob.id) }
        try store.insert(tags[0]); try store.insert(tags[1]); try store.insert(tags[1])
        #expect(throws: ThreemaError.self) { try store.insert(tags[2]) }
        #expect(store.contains(tags[0]) && !store.contains(tags[2]))
        #expect(tags[0] != NonceTag(nonce: [UInt8](repeating: 0, count: 24), identity: alice.id))
    }
}

@Suite("Threema message bodies")
struct MessageBodyTests {
    @Test func roundTrips() throws {
        let loc = LocationMessage(latitude: 47.3769, longitude: 8.5417, accuracy: 12.5, name: "Zürich HB", address: "Bahnhofplatz")
        #expect(try LocationMessage(decoding: loc.encoded) == loc)
        let addrOnly = LocationMessage(latitude: -33.9, longitude: 151.2, address: "Sydney")
        #expect(try LocationMessage(decoding: addrOnly.encoded) == addrOnly)
        let receipt = DeliveryReceipt(status: .read, messageIDs: [1, 0xffff_ffff_ffff_ffff])
        #expect(try DeliveryReceipt(decoding: receipt.encoded) == receipt)
        #expect(try TypingIndicator(decoding: [1]).isTyping)
        let pic = try SetProfilePicture(blobID: [UInt8](repeating: 1, count: 16), size: 1234, key: [UInt8](repeating: 2, count: 32))
        #expect(try SetProfilePicture(decoding: pic.encoded) == pic)
        #expect(try MessageBody(MessageContainer(type: .text, body: Array("hé".utf8))) == .text(TextMessage("hé")))
        #expect(try MessageBody(MessageContainer(type: MessageType(rawValue: 0x77), body: [1, 2])) == .opaque(MessageType(rawValue: 0x77), [1, 2]))
        #expect(MessageType(rawValue: 0x77).isKnown == false && MessageType.file.name == "file")
        let creator = GroupPrefix(groupID: 5)
        #expect(try MessageBody(MessageContainer(type: .groupName, body: creator.encoded + Array("n".utf8)))
                == .group(creator, .opaque(.groupName, Array("n".utf8))))
    }

    @Test(arguments: [
        (MessageType.text, [UInt8]([0xc3, 0x28])),
        (.location, Array("91,0".utf8)), (.location, Array("1,2,-1".utf8)), (.location, Array("nan,1".utf8)),
        (.location, Array("1,2\na\nb\nc".utf8)), (.location, Array("1".utf8)), (.location, Array("1e5,2".utf8)),
        (.deliveryReceipt, [1]), (.deliveryReceipt, [1, 2, 3]), (.deliveryReceipt, [UInt8](repeating: 0, count: 10)),
        (.typingIndicator, []), (.typingIndicator, [2]), (.typingIndicator, [1, 1]),
        (.contactSetProfilePicture, [UInt8](repeating: 0, count: 51)), (.contactDeleteProfilePicture, [0]),
        (.groupText, [UInt8](repeating: 0x41, count: 15)), (.groupSetup, [1, 2, 3]),
        (.groupText, Array("abcdefgh".utf8) + [UInt8](repeating: 0, count: 8)),
    ] as [(MessageType, [UInt8])])
    func malformedBodiesAreTyped(_ type: MessageType, _ body: [UInt8]) {
        #expect(throws: ThreemaError.self) { try MessageBody(MessageContainer(type: type, body: body)) }
    }

    @Test func randomBodiesNeverTrap() {
        var rng = SplitMix64(seed: 20)
        for _ in 0..<20000 {
            let t = MessageType(rawValue: UInt8(truncatingIfNeeded: rng.next()))
            _ = try? MessageBody(MessageContainer(type: t, body: randomBytes(count: Int(rng.next() % 80), using: &rng)))
        }
    }
}

@Suite("Threema blobs")
struct BlobTests {
    @Test(arguments: [0, 1, 15, 16, 17, 1000, 65537])
    func roundTripAndInPlace(size: Int) throws {
        var rng = SplitMix64(seed: UInt64(size))
        let key = ThreemaBlob.generateKey(using: &rng)
        let data = randomBytes(count: size, using: &rng)
        let blob = try ThreemaBlob.encrypt(data, key: key, kind: .file)
        #expect(blob.count == size + 16)
        #expect(try ThreemaBlob.decrypt(blob, key: key, kind: .file) == data)
        // The thumbnail nonce differs: a file blob does not open as a thumbnail.
        #expect(throws: ThreemaError.authenticationFailed) { try ThreemaBlob.decrypt(blob, key: key, kind: .thumbnail) }
        // In place gives the same bytes; decrypting in place restores the data.
        var buffer = [UInt8](repeating: 0, count: 16) + data
        try buffer.withUnsafeMutableBytes { try ThreemaBlob.encrypt(inPlace: $0, key: key, kind: .file) }
        #expect(buffer == blob)
        try buffer.withUnsafeMutableBytes { try ThreemaBlob.decrypt(inPlace: $0, key: key, kind: .file) }
        #expect(Array(buffer[16...]) == data)
        // A flipped bit anywhere: refused, and the in-place buffer is left as it was.
        if size > 0 {
            var t = blob
            t[Int(rng.next() % UInt64(t.count))] ^= 0x80
            let before = t
            #expect(throws: ThreemaError.authenticationFailed) {
                try t.withUnsafeMutableBytes { try ThreemaBlob.decrypt(inPlace: $0, key: key, kind: .file) }
            }
            #expect(t == before)
        }
    }

    @Test func fixedNonces() {
        #expect(ThreemaBlob.Kind.file.nonce == [UInt8](repeating: 0, count: 23) + [1])
        #expect(ThreemaBlob.Kind.thumbnail.nonce == [UInt8](repeating: 0, count: 23) + [2])
    }
}
