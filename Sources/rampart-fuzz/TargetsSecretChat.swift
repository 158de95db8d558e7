// Fuzz target for the secret-chat TL and sequence numbers (Docs/MTProto.md §7.1, §7.4, §7.5). The first
// byte picks a mode:
//   0: a decrypted plaintext (DecryptedPayload: a decryptedMessageLayer or a bare layer-8 message);
//   1: the API layer (a relay's RPC, an update, a DH config, a send answer);
//   2: a program of sends and receives on SequenceNumbers from one role;
//   3: decryptedMessageLayer objects fed to SequenceNumbers and LayerNegotiation;
//   4: a program of RPCs to the test server's relay (SecretChatRelay) from its two users and a stranger.
//
// Properties: an accepted object re-encodes to exactly its bytes (the decoders are strict); a layer has at
// least 15 random bytes; a refused receive and a duplicate change nothing; counters never go back; what is
// delivered is what advanced the counter; outgoing numbers have our parities; a Resend request names
// the hole exactly; the peer's layer never goes down; the relay answers every request, and one it
// refuses (an rpc_error) pushes nothing and changes none of its counts; its pushes are well-formed
// Updates for a member; what it holds stays within its limits.

import RampartMTProto
import RampartMTProtoServer
import RampartTestSupport

private typealias SC = SecretChat

private func checkPayload(_ bytes: [UInt8]) {
    guard let p = try? SC.DecryptedPayload.decode(bytes) else { return }
    FuzzCheck.require(p.serialized == bytes, "an accepted secret-chat payload does not re-encode to its bytes")
    if case .layer(let l) = p {
        FuzzCheck.require(l.randomBytes.count >= SC.DecryptedMessageLayer.minimumRandomBytes, "fewer than 15 random bytes accepted")
        FuzzStats.note("layer")
        if case .unsupported = l.message { FuzzStats.note("layer with an unsupported message") }
    } else {
        FuzzStats.note("legacy message")
    }
}

private func checkAPI(_ bytes: [UInt8]) {
    func roundTrip<T: SC.TLObject>(_ type: T.Type, _ what: String) {
        guard let v = try? T.decode(bytes) else { return }
        FuzzCheck.require(v.serialized == bytes, "an accepted \(what) does not re-encode to its bytes")
        FuzzStats.note(what)
    }
    roundTrip(SC.API.Request.self, "API request")
    roundTrip(SC.API.Update.self, "API update")
    roundTrip(SC.API.DhConfig.self, "DhConfig")
    roundTrip(SC.API.SentEncryptedMessage.self, "SentEncryptedMessage")
    roundTrip(SC.API.EncryptedChat.self, "EncryptedChat")
    roundTrip(SC.API.Updates.self, "Updates")
    roundTrip(SC.API.User.self, "User")
    roundTrip(SC.API.UploadFile.self, "upload.File")
}

private let relayConstructors: [UInt32] = [
    SC.API.Constructor.getDhConfig, SC.API.Constructor.requestEncryption, SC.API.Constructor.acceptEncryption,
    SC.API.Constructor.discardEncryption, SC.API.Constructor.sendEncrypted, SC.API.Constructor.sendEncryptedFile,
    SC.API.Constructor.sendEncryptedService, SC.API.Constructor.getUsers, SC.API.Constructor.saveFilePart,
    SC.API.Constructor.getFile,
]

/// Mode 4: RPCs to a relay with users 1 and 2 and an accepted chat between them; user 3 is unknown.
private func runRelayProgram(_ input: inout FuzzInput) {
    var rng = SplitMix64(seed: 0x7e1a)
    var limits = SecretChatRelay.Limits()
    limits.maxUploadBytes = 1 << 16
    limits.maxFileBytes = 1 << 17
    limits.maxUploadsPerUser = 3
    var relay = SecretChatRelay(limits: limits, using: &rng)
    _ = relay.newUser()
    _ = relay.newUser()
    let now = 1_800_000_000.0
    let request = relay.handle(SC.API.Request.requestEncryption(userID: .user(userID: 2, accessHash: relay.accessHash(of: 2)),
                                                                randomID: 1, gA: [UInt8](repeating: 5, count: 256)).serialized,
                               from: 1, now: now, using: &rng)
    guard case .waiting(let w)? = try? SC.API.EncryptedChat.decode(request.result) else {
        FuzzCheck.require(false, "the relay did not open a chat")
        return
    }
    let peer = SC.API.InputEncryptedChat(chatID: w.id, accessHash: w.accessHash)
    _ = relay.handle(SC.API.Request.acceptEncryption(peer: peer, gB: [UInt8](repeating: 6, count: 256), keyFingerprint: 7).serialized,
                     from: 2, now: now, using: &rng)
    var files: [(Int64, Int64)] = []
    for _ in 0..<48 where !input.isAtEnd {
        let user = Int64(input.byte() % 3) + 1
        let body: [UInt8]
        switch input.byte() % 5 {
        case 0:
            var w = TLWriter()
            w.constructor(relayConstructors[Int(input.byte()) % relayConstructors.count])
            body = w.bytes + input.lengthPrefixed(max: 600)
        case 1:
            let target = input.bool() ? peer : .init(chatID: peer.chatID, accessHash: Int64(input.byte()))
            body = SC.API.Request.sendEncrypted(silent: false, peer: target, randomID: 1, data: input.lengthPrefixed(max: 300)).serialized
        case 2:
            let n = Int(input.u16()) % (40 << 10) + Int(input.byte() % 2)
            body = SC.API.Request.saveFilePart(fileID: Int64(input.byte() % 5), part: Int32(input.byte() % 5) - 1,
                                               bytes: [UInt8](repeating: 1, count: n)).serialized
        case 3:
            body = SC.API.Request.sendEncryptedFile(silent: false, peer: peer, randomID: 2, data: [1],
                                                    file: .uploaded(id: Int64(input.byte() % 5), parts: Int32(input.byte() % 5),
                                                                    md5Checksum: "", keyFingerprint: 3)).serialized
        default:
            let (id, hash) = files.isEmpty ? (Int64(0), Int64(0)) : files[Int(input.byte()) % files.count]
            body = SC.API.Request.getFile(precise: input.bool(), fileID: id, accessHash: input.bool() ? hash : hash ^ 1,
                                          offset: Int64(input.int(in: -1...300_000)), limit: Int32(input.int(in: -1...1_100_000))).serialized
        }
        let before = (relay.chatCount, relay.heldFileBytes, relay.relayedCount)
        let o = relay.handle(body, from: user, now: now, using: &rng)
        FuzzCheck.require(!o.result.isEmpty, "the relay gave no answer")
        if case .rpcError? = try? ServiceMessage(decoding: o.result) {
            FuzzCheck.require(o.pushes.isEmpty, "a refused relay request pushed updates")
            FuzzCheck.require(before == (relay.chatCount, relay.heldFileBytes, relay.relayedCount),
                              "a refused relay request changed the relay")
            FuzzStats.note("relay refused")
        } else {
            FuzzStats.note("relay answered")
        }
        if case .file(_, .file(let id, let hash, _, _, _))? = try? SC.API.SentEncryptedMessage.decode(o.result) { files.append((id, hash)) }
        for p in o.pushes {
            FuzzCheck.require(p.user == 1 || p.user == 2, "an update pushed to a non-member")
            FuzzCheck.require((try? SC.API.Updates.decode(p.updates)) != nil, "a pushed Updates does not decode")
        }
        FuzzCheck.require(relay.heldFileBytes <= limits.maxUploadBytes + limits.maxFileBytes, "the relay holds more than its limits")
    }
}

/// One receive on `seq`, with the properties that hold for any input.
private func receiveChecked<Item: Equatable & Sendable>(_ seq: inout SC.SequenceNumbers<Item>, inSeqNo: Int32, outSeqNo: Int32,
                                                          resend: (startSeqNo: Int32, endSeqNo: Int32)?, item: Item) {
    let before = seq
    let r: SC.SequenceNumbers<Item>.Reception
    do {
        r = try seq.receive(inSeqNo: inSeqNo, outSeqNo: outSeqNo, resend: resend, item: item)
    } catch {
        FuzzCheck.require(seq == before, "a refused secret-chat message changed the sequence state")
        FuzzStats.note("refused")
        return
    }
    FuzzCheck.require(seq.receivedCount >= before.receivedCount && seq.peerReceivedCount >= before.peerReceivedCount,
                      "a sequence counter went back")
    FuzzCheck.require(r.delivered.count == Int(seq.receivedCount - before.receivedCount), "delivered count differs from the counter")
    FuzzCheck.require(seq.queuedCount <= seq.maximumQueued, "queue above its bound")
    if r.isDuplicate {
        FuzzCheck.require(seq == before && r.delivered.isEmpty, "a duplicate changed the state")
        FuzzStats.note("duplicate")
    }
    if let req = r.resendRequest {
        guard case .resend(let start, let end) = req else { FuzzCheck.fail("a resend request that is not a Resend") }
        FuzzCheck.require(start & 1 == seq.peerOutParity && end == outSeqNo - 2 && start <= end
                          && start >> 1 == before.highestSeen + 1, "Resend range is not the hole")
        FuzzStats.note("gap")
    }
    for n in r.toResend {
        FuzzCheck.require(n & 1 == seq.ourOutParity && n >> 1 < seq.sentCount, "asked to resend a message never sent")
    }
    if !r.delivered.isEmpty { FuzzStats.note(r.delivered.count > 1 ? "queue drained" : "in order") }
}

private func runSequenceProgram(_ input: inout FuzzInput) {
    let role: SC.SequenceRole = input.bool() ? .creator : .acceptor
    var seq = SC.SequenceNumbers<Int>(role: role, maximumQueued: 1 + Int(input.byte() % 16))
    var step = 0
    while !input.isAtEnd && step < 256 {
        step += 1
        let op = input.byte()
        if op & 3 == 0 {
            let sent = seq.sentCount
            guard let n = try? seq.nextOutgoing() else { continue }
            FuzzCheck.require(n.outSeqNo == 2 * sent + seq.ourOutParity && n.inSeqNo == 2 * seq.receivedCount + seq.ourInParity,
                              "outgoing numbers do not follow the counters")
            continue
        }
        // Mostly plausible numbers (small, near the counters), sometimes arbitrary ones.
        let inSeqNo: Int32, outSeqNo: Int32
        if op & 4 == 0 {
            inSeqNo = Int32(input.byte()) - 8
            outSeqNo = Int32(input.byte()) - 8
        } else {
            inSeqNo = Int32(bitPattern: input.u32())
            outSeqNo = Int32(bitPattern: input.u32())
        }
        let resend: (startSeqNo: Int32, endSeqNo: Int32)? = op & 8 == 0 ? nil : (Int32(input.byte()) - 4, Int32(input.byte()) - 4)
        receiveChecked(&seq, inSeqNo: inSeqNo, outSeqNo: outSeqNo, resend: resend, item: step)
    }
}

private func runLayers(_ input: inout FuzzInput) {
    var seq = SC.SequenceNumbers<SC.DecryptedMessageLayer>(role: input.bool() ? .creator : .acceptor, maximumQueued: 8)
    var layers = SC.LayerNegotiation()
    for _ in 0..<Int(input.byte() % 4) { _ = try? seq.nextOutgoing() }
    while !input.isAtEnd {
        let bytes = input.lengthPrefixed(max: 2048)
        guard let l = try? SC.DecryptedMessageLayer.decode(bytes) else { continue }
        FuzzCheck.require(l.serialized == bytes, "an accepted layer does not re-encode to its bytes")
        var resend: (startSeqNo: Int32, endSeqNo: Int32)?
        if case .resend(let s, let e)? = l.message.action { resend = (s, e) }
        receiveChecked(&seq, inSeqNo: l.inSeqNo, outSeqNo: l.outSeqNo, resend: resend, item: l)
        let remote = layers.remote
        layers.observe(l)
        FuzzCheck.require(layers.remote >= remote && layers.remote >= l.layer, "the peer's layer went down or missed a higher one")
        FuzzCheck.require(layers.allowsV1 == (min(layers.local, layers.remote) < SC.Layer.mtproto2), "allowsV1")
    }
}

let secretChatTLTarget = FuzzTarget(
    name: "mtproto-secret-tl",
    summary: "secret-chat TL (decryptedMessageLayer, layer-8 messages, actions, media; the API layer's RPCs and updates), sequence numbers and the test server's relay: accepted objects re-encode byte for byte, ≥ 15 random bytes, a refused or duplicate message leaves the sequence state unchanged, counters never go back, Resend ranges name the hole, the peer's layer only rises; the relay answers everything, a refused RPC changes nothing and pushes nothing, pushes go to members, holdings stay within limits",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        switch input.byte() % 5 {
        case 0: checkPayload(input.rest())
        case 1: checkAPI(input.rest())
        case 2: runSequenceProgram(&input)
        case 3: runLayers(&input)
        default: runRelayProgram(&input)
        }
    },
    seeds: {
        var rng = SplitMix64(seed: 0x5ec)
        var seeds: [[UInt8]] = []
        let doc = SC.DecryptedMessageMedia.document(.init(mimeType: "image/png", size: 1 << 20, key: rng.packedBytes(32),
                                                          iv: rng.packedBytes(32), attributes: [.filename("a.png"), .imageSize(width: 2, height: 3)]))
        let messages: [SC.DecryptedMessage] = [
            .message(.init(randomID: 1, message: "hello", media: doc, entities: [.init(.bold, offset: 0, length: 5)])),
            .service(randomID: 2, action: .notifyLayer(144)),
            .service(randomID: 3, action: .resend(startSeqNo: 1, endSeqNo: 3)),
            .service(randomID: 4, action: .requestKey(exchangeID: 5, gA: rng.packedBytes(256))),
            .message46(.init(randomID: 6, message: "old")),
        ]
        var layerBytes: [[UInt8]] = []
        for (i, m) in messages.enumerated() {
            let l = try! SC.DecryptedMessageLayer(inSeqNo: 1, outSeqNo: Int32(2 * i), message: m, using: &rng)
            layerBytes.append(l.serialized)
            seeds.append([0] + l.serialized)
        }
        seeds.append([0] + SC.DecryptedMessage.service8(randomID: 7, randomBytes: rng.packedBytes(15), action: .notifyLayer(144)).serialized)
        let peer = SC.API.InputEncryptedChat(chatID: 1, accessHash: 2)
        let apiValues: [[UInt8]] = [
            SC.API.Request.getDhConfig(version: 0, randomLength: 256).serialized,
            SC.API.Request.sendEncrypted(silent: false, peer: peer, randomID: 3, data: rng.packedBytes(64)).serialized,
            SC.API.Request.sendEncryptedFile(silent: true, peer: peer, randomID: 4, data: [1],
                                             file: .uploaded(id: 5, parts: 1, md5Checksum: "", keyFingerprint: 6)).serialized,
            SC.API.Update.newEncryptedMessage(message: .service(randomID: 1, chatID: 1, date: 2, bytes: [3]), qts: 4).serialized,
            SC.API.Update.encryption(chat: .requested(.init(id: 1, accessHash: 2, date: 3, adminID: 4, participantID: 5,
                                                           gA: rng.packedBytes(256))), date: 6).serialized,
        ]
        seeds += apiValues.map { [1] + $0 }
        // A program: send two, receive in order, a gap, a duplicate, the fill, a Resend.
        seeds.append([2, 1, 8, 0, 0, 1, 10, 1, 2, 8 + 6, 1, 10 + 6, 1, 10, 1, 2 + 8, 9, 2, 12, 5, 7])
        seeds.append([2, 0, 3, 0, 1, 9, 1, 9, 13, 9, 5, 6, 5, 1, 9, 3])
        var program: [UInt8] = [3, 1, 2]
        for i in [0, 2, 1, 1, 3] {
            let b = layerBytes[i]
            program += [UInt8(b.count & 0xFF), UInt8(b.count >> 8)] + b
        }
        seeds.append(program)
        // Relay programs: a message, parts, a file send, downloads; garbage under a relay constructor.
        seeds.append([4, 0, 1, 1, 3, 0, 1, 2, 3, 1, 2, 0, 16, 0, 1, 1, 1, 2, 2, 0, 16, 0, 1, 2, 0, 3, 1, 2,
                      0, 4, 0, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 1, 1, 1, 0, 4, 0, 0, 0, 0, 0, 0, 4])
        seeds.append([4, 1, 0, 7, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 2, 0, 2, 4, 0, 0, 0, 0])
        return seeds
    })
