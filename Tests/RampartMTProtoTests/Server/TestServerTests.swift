// The loopback test server's logic driven in memory by the Swift client connection, over every
// transport: handshake, ping → pong, rpc_error for an unknown request, temporary-key binding, and
// garbage connections that are closed while others keep working.

import Testing
@testable import RampartMTProto
@testable import RampartMTProtoServer
import RampartTestSupport

private struct Pair {
    var server: TestServer
    var client: ClientConnection
    var crng = SplitMix64(seed: 21)
    var srng = SplitMix64(seed: 22)
    let id: TestServerConnectionID
    var log: [String] = []
    var closed = false
    var now = 1_800_000_000.0

    init(server: TestServer, transport: ClientTransport.Kind, keys: [RSA.PublicKey], mode: ClientHandshake.Mode = .permanent,
         id: Int = 1) throws {
        self.server = server
        var r = SplitMix64(seed: UInt64(id) &* 7)
        client = try ClientConnection(transport: transport, handshake: .init(publicKeys: keys, dc: 2, mode: mode), using: &r)
        self.id = id
        self.server.open(id)
    }

    /// Sends `bytes` to the server and relays until both sides are quiet; returns the client's events.
    mutating func pump(_ bytes: [UInt8]) throws -> [ClientConnection.Event] {
        var toServer = bytes
        var events: [ClientConnection.Event] = []
        for _ in 0..<10 where !toServer.isEmpty {
            let reply = server.receive(toServer, from: id, now: now, using: &srng)
            log += reply.log
            if reply.close { closed = true }
            let (back, ev) = try client.receive(reply.send, now: now, using: &crng)
            events += ev
            toServer = back
        }
        return events
    }
}

private func testServer() throws -> (TestServer, RSA.PublicKey) {
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    return (try TestServer(configuration: .init(handshake: .init(privateKeys: [priv], dc: 2))), priv.publicKey)
}

private func pongs(_ events: [ClientConnection.Event]) -> [ServiceMessage] {
    events.compactMap { if case .message(let m) = $0 { return try? m.decoded() } else { return nil } }
}

private let transports: [(String, ClientTransport.Kind)] = [
    ("abridged", .plain(.abridged)), ("intermediate", .plain(.intermediate)),
    ("padded intermediate", .plain(.paddedIntermediate)), ("full", .plain(.full)),
    ("obfuscated2 abridged", .obfuscated2(.abridged, dcId: 2, secret: nil)),
    ("obfuscated2 padded", .obfuscated2(.paddedIntermediate, dcId: -2, secret: nil)),
    ("http", .http(host: "127.0.0.1:443")),
]

@Test(arguments: transports.indices)
func serverAnswersHandshakePingAndUnknownRequests(_ index: Int) throws {
    let (name, kind) = transports[index]
    let (server, pub) = try testServer()
    var pair = try Pair(server: server, transport: kind, keys: [pub])
    let events = try pair.pump(try pair.client.start(now: pair.now, using: &pair.crng))
    guard case .handshakeCompleted(let result)? = events.first else {
        Issue.record("\(name): no handshake (\(events), log \(pair.log))"); return
    }
    #expect(pair.server.keyCount == 1)
    // ping → pong with the ping's msg_id, after new_session_created.
    var w = TLWriter()
    w.constructor(ServiceConstructor.ping)
    w.int64(0x1234_5678)
    let (bytes, pingId) = try pair.client.send(w.bytes, now: pair.now, using: &pair.crng)
    let answers = pongs(try pair.pump(bytes))
    #expect(answers.contains { if case .newSessionCreated = $0 { true } else { false } }, "\(name)")
    #expect(answers.contains(.pong(msgId: pingId, pingId: 0x1234_5678)), "\(name): \(answers)")
    // help.getNearestDc → rpc_result { rpc_error 400 METHOD_NOT_SUPPORTED }.
    var q = TLWriter()
    q.constructor(0x1fb3_3026)
    let (qb, qid) = try pair.client.send(q.bytes, now: pair.now, using: &pair.crng)
    let errs = pongs(try pair.pump(qb))
    let expected = ServiceMessage.rpcResult(reqMsgId: qid, result: ServiceMessage.rpcError(.methodNotSupported).encoded())
    #expect(errs.contains(expected), "\(name): \(errs)")
    #expect(!pair.closed, "\(name): \(pair.log)")
    _ = result
}

@Test func serverBindsTemporaryKeys() throws {
    let (server, pub) = try testServer()
    var perm = try Pair(server: server, transport: .plain(.intermediate), keys: [pub])
    guard case .handshakeCompleted(let permResult)? = try perm.pump(try perm.client.start(now: perm.now, using: &perm.crng)).first else {
        Issue.record("no permanent key"); return
    }
    // A second connection to the same server makes a temporary key and binds it.
    var temp = try Pair(server: perm.server, transport: .plain(.abridged), keys: [pub], mode: .temporary(expiresIn: 3600), id: 2)
    guard case .handshakeCompleted(let tempResult)? = try temp.pump(try temp.client.start(now: temp.now, using: &temp.crng)).first else {
        Issue.record("no temporary key"); return
    }
    #expect(tempResult.expiresIn == 3600)
    #expect(temp.server.keyCount == 2)
    // Build the bind request with the msg_id the outer message will get.
    var session = try #require(temp.client.session)
    var probe = session.messageIds
    let msgId = probe.next(now: temp.now)
    let body = try TempKeyBinding.makeRequest(permanentKey: permResult.authKey, temporaryKey: tempResult.authKey,
                                              temporarySessionId: try #require(session.sessionId), expiresAt: Int32(temp.now) + 3600,
                                              msgId: msgId, using: &temp.crng)
    let out = try session.encrypt(body, contentRelated: true, now: temp.now, using: &temp.crng)
    #expect(out.msgId == msgId)
    _ = session
    let answers = pongs(try temp.pump(try temp.client.transport.encode(out.packet, using: &temp.crng)))
    var yes = TLWriter()
    yes.bool(true)
    // The client's session did not encrypt this message itself, so it only checks the server's answer.
    #expect(answers.contains(.rpcResult(reqMsgId: msgId, result: yes.bytes)), "\(answers)")
    #expect(temp.server.binding(ofKey: tempResult.authKey.id) == .some(permResult.authKey.id), "\(temp.log)")

    // A binding with a wrong expires_at (inner ≠ outer) is refused with ENCRYPTED_MESSAGE_INVALID.
    var bad = try TempKeyBinding.makeRequest(permanentKey: permResult.authKey, temporaryKey: tempResult.authKey,
                                             temporarySessionId: try #require(session.sessionId), expiresAt: 5, msgId: msgId, using: &temp.crng)
    bad[16] ^= 1  // outer expires_at
    #expect(throws: MTProtoError.self) {
        _ = try TempKeyBinding.verify(bad, outerMsgId: msgId, temporaryKey: tempResult.authKey, sessionId: session.sessionId!) {
            $0 == permResult.authKey.id ? permResult.authKey : nil
        }
    }
    let good = try TempKeyBinding.makeRequest(permanentKey: permResult.authKey, temporaryKey: tempResult.authKey,
                                              temporarySessionId: 99, expiresAt: 5, msgId: msgId, using: &temp.crng)
    #expect(throws: MTProtoError.self, "wrong session") {
        _ = try TempKeyBinding.verify(good, outerMsgId: msgId, temporaryKey: tempResult.authKey, sessionId: 98) {
            $0 == permResult.authKey.id ? permResult.authKey : nil
        }
    }
    #expect(throws: MTProtoError.self, "wrong outer msg_id") {
        _ = try TempKeyBinding.verify(good, outerMsgId: msgId + 4, temporaryKey: tempResult.authKey, sessionId: 99) {
            $0 == permResult.authKey.id ? permResult.authKey : nil
        }
    }
    let ok = try TempKeyBinding.verify(good, outerMsgId: msgId, temporaryKey: tempResult.authKey, sessionId: 99) {
        $0 == permResult.authKey.id ? permResult.authKey : nil
    }
    #expect(ok.permanentKeyId == permResult.authKey.id && ok.temporaryKeyId == tempResult.authKey.id)
}

@Test func serverClosesGarbageConnectionsAndKeepsServing() throws {
    var (server, pub) = try testServer()
    var rng = SplitMix64(seed: 5)
    // Random bytes on several connections: each is closed with a log line, nothing traps.
    for c in 100..<160 {
        server.open(c)
        var closed = false
        for _ in 0..<4 where !closed {
            let r = server.receive(MTProtoRandom.bytes(Int(rng.next() % 300) + 1, using: &rng), from: c, now: 0, using: &rng)
            closed = r.close
            if closed { #expect(!r.log.isEmpty) }
        }
        server.close(c)
    }
    // An unknown auth_key_id gets −404 and a close.
    server.open(7)
    var enc = TransportEncoder(framing: .intermediate, role: .client)
    let unknown = try enc.encode([UInt8](repeating: 0xAB, count: 8) + [UInt8](repeating: 0, count: 40), using: &rng)
    let r = server.receive(unknown, from: 7, now: 0, using: &rng)
    #expect(r.close)
    var dec = TransportDecoder(framing: .intermediate, role: .client)
    dec.feed(r.send)
    #expect(try dec.next() == .transportError(-404))
    // A good client still completes a handshake and a ping afterwards.
    var pair = try Pair(server: server, transport: .plain(.full), keys: [pub], id: 1)
    guard case .handshakeCompleted? = try pair.pump(try pair.client.start(now: pair.now, using: &pair.crng)).first else {
        Issue.record("no handshake after garbage"); return
    }
}

@Test func serverAnswersAWrongSaltWithBadServerSalt() throws {
    let (server, pub) = try testServer()
    var pair = try Pair(server: server, transport: .plain(.intermediate), keys: [pub])
    guard case .handshakeCompleted(let result)? = try pair.pump(try pair.client.start(now: pair.now, using: &pair.crng)).first else {
        Issue.record("no handshake"); return
    }
    // A second session under the same key with a wrong salt, framed on the same connection.
    var s = Session(client: result.authKey, sessionId: 77, salt: result.serverSalt ^ 0x5555, timeOffset: 0)
    var enc = TransportEncoder(framing: .intermediate, role: .client, sendsTag: false)
    var dec = TransportDecoder(framing: .intermediate, role: .client, expectsTag: false)
    var w = TLWriter()
    w.constructor(ServiceConstructor.ping)
    w.int64(99)
    let now = pair.now, connection = pair.id
    var server2 = pair.server
    var crng = SplitMix64(seed: 61), srng = SplitMix64(seed: 62)
    func roundTrip(_ s: inout Session) throws -> (Int64, [ServiceMessage]) {
        let out = try s.encrypt(w.bytes, contentRelated: true, now: now, using: &crng)
        let framed = try enc.encode(out.packet, using: &crng)
        let reply = server2.receive(framed, from: connection, now: now, using: &srng)
        #expect(!reply.close, "\(reply.log)")
        dec.feed(reply.send)
        var got: [ServiceMessage] = []
        while case .packet(let p, _)? = try dec.next() {
            got += try s.decrypt(p, now: now).compactMap { try? $0.decoded() }
        }
        return (out.msgId, got)
    }
    let (badId, first) = try roundTrip(&s)
    #expect(first.contains(.badServerSalt(badMsgId: badId, badMsgSeqNo: 1, errorCode: 48, newServerSalt: result.serverSalt)), "\(first)")
    #expect(!first.contains { if case .pong = $0 { true } else { false } }, "a message under a bad salt is not processed")
    #expect(!first.contains { if case .newSessionCreated = $0 { true } else { false } }, "a refused message starts no session: \(first)")
    #expect(s.salts.current == result.serverSalt, "the client adopted the salt")
    let (goodId, second) = try roundTrip(&s)
    #expect(second.contains(.pong(msgId: goodId, pingId: 99)), "\(second)")
    #expect(second.contains { if case .newSessionCreated(goodId, _, result.serverSalt) = $0 { true } else { false } }, "\(second)")
}

@Test func standardAnswersTreatAnUndecodableServiceMessageAsAnUnknownRequest() throws {
    var w = TLWriter()
    w.constructor(ServiceConstructor.ping)
    w.int32(7)  // ping_id is a long: 4 bytes short
    let bad = IncomingMessage(msgId: 0x100, seqNo: 1, body: w.bytes, containerId: nil, salt: 1, quickAck: 0)
    #expect(throws: MTProtoError.self) { try bad.decoded() }
    let answer = try #require(StandardServerReplies.answer(to: bad, salt: 1, now: 0))
    #expect(try ServiceMessage(decoding: answer.body)
            == .rpcResult(reqMsgId: 0x100, result: ServiceMessage.rpcError(.methodNotSupported).encoded()))
    var quiet = bad
    quiet.seqNo = 2  // not content-related: no answer
    #expect(StandardServerReplies.answer(to: quiet, salt: 1, now: 0) == nil)
    let ping = IncomingMessage(msgId: 0x104, seqNo: 3, body: ServiceMessage.ping(pingId: 9).encoded(), containerId: nil, salt: 1, quickAck: 0)
    #expect(StandardServerReplies.answer(to: ping, salt: 1, now: 0) == OutgoingBody(.pong(msgId: 0x104, pingId: 9), isResponse: true))
}

/// Salt rotation (issue 16): a server with a 60 s salt period accepts the replaced salt for 300 s, then
/// answers bad_server_salt with the current one; a client that asked for the future salts switches by
/// itself and is never refused.
@Test func serverRotatesSaltsAndClientsFollow() throws {
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    var conf = TestServer.Configuration(handshake: .init(privateKeys: [priv], dc: 2))
    conf.saltPeriod = 60
    var pair = try Pair(server: try TestServer(configuration: conf), transport: .plain(.intermediate), keys: [priv.publicKey])
    guard case .handshakeCompleted(let result)? = try pair.pump(try pair.client.start(now: pair.now, using: &pair.crng)).first else {
        Issue.record("no handshake"); return
    }
    var rng = SplitMix64(seed: 40)
    func send(_ body: [UInt8]) throws -> [ServiceMessage] {
        let now = pair.now
        let bytes = try pair.client.send(body, now: now, using: &rng).bytes
        return pongs(try pair.pump(bytes))
    }
    func ping(_ id: Int64) throws -> [ServiceMessage] {
        var w = TLWriter()
        w.constructor(ServiceConstructor.ping)
        w.int64(id)
        return try send(w.bytes)
    }
    func badSalts(_ m: [ServiceMessage]) -> [Int64] {
        m.compactMap { if case .badServerSalt(_, _, _, let salt) = $0 { salt } else { nil } }
    }
    let start = pair.now
    #expect(badSalts(try ping(1)).isEmpty)
    // 100 s later the salt has changed (at +60), but the old one is good until +360.
    pair.now = start + 100
    let inGrace = try ping(2)
    #expect(badSalts(inGrace).isEmpty && inGrace.contains { if case .pong = $0 { true } else { false } })
    // At +400 the old salt is refused: bad_server_salt with the current one, which the client adopts.
    pair.now = start + 400
    let refused = badSalts(try ping(3))
    #expect(refused.count == 1 && refused.first != result.serverSalt)
    #expect(pair.client.session?.salts.current == refused.first)
    // A client that knows the schedule switches on time and is never refused.
    var w = TLWriter()
    w.constructor(ServiceConstructor.getFutureSalts)
    w.int32(8)
    let answer = try send(w.bytes)
    guard case .futureSalts(_, _, let list)? = answer.first(where: { if case .futureSalts = $0 { true } else { false } }) else {
        Issue.record("no future_salts: \(answer)"); return
    }
    #expect(list.count >= 3 && list[0].salt == refused.first)
    for step in 1...10 {
        pair.now = start + 400 + Double(step) * 45
        let m = try ping(Int64(10 + step))
        #expect(badSalts(m).isEmpty, "step \(step): \(m)")
        // Keep the schedule known, as a client would (every few periods).
        if step % 2 == 0 { _ = try send(w.bytes) }
    }
}

/// Two sessions under one auth key, on two connections, alternating (issue 16): each gets one
/// new_session_created, not one per switch, and neither's replay window is reset by the other's
/// traffic (a replayed packet of the first session is still refused after the second has spoken).
@Test func severalSessionsUnderOneKeyDoNotChurn() throws {
    let (server, pub) = try testServer()
    var pair = try Pair(server: server, transport: .plain(.intermediate), keys: [pub])
    guard case .handshakeCompleted(let result)? = try pair.pump(try pair.client.start(now: pair.now, using: &pair.crng)).first else {
        Issue.record("no handshake"); return
    }
    pair.server.open(2)
    var rng = SplitMix64(seed: 50)
    var enc = TransportEncoder(framing: .intermediate, role: .client)
    var dec = TransportDecoder(framing: .intermediate, role: .client, expectsTag: false)
    var second = Session(client: result.authKey, sessionId: 0x5e55_10e2, salt: result.serverSalt, timeOffset: 0)
    func isCreated(_ m: ServiceMessage) -> Bool { if case .newSessionCreated = m { true } else { false } }
    var created = 0, pongsOnSecond = 0
    var firstSessionPacket: [UInt8] = []
    for round in 0..<10 {
        var w = TLWriter()
        w.constructor(ServiceConstructor.ping)
        w.int64(Int64(round))
        let now = pair.now
        let sent = try pair.client.send(w.bytes, now: now, using: &rng)
        if round == 0 { firstSessionPacket = sent.bytes }
        created += pongs(try pair.pump(sent.bytes)).filter(isCreated).count
        let out = try second.encrypt(w.bytes, contentRelated: true, now: now, using: &rng)
        let reply = pair.server.receive(try enc.encode(out.packet, using: &rng), from: 2, now: now, using: &rng)
        #expect(!reply.close, "\(reply.log)")
        dec.feed(reply.send)
        while case .packet(let p, _)? = try dec.next() {
            for m in try second.decrypt(p, now: now) {
                guard let s = try? m.decoded() else { continue }
                if isCreated(s) { created += 1 }
                if case .pong = s { pongsOnSecond += 1 }
            }
        }
    }
    #expect(created == 2 && pongsOnSecond == 10)
    // The first session's first packet again, on the first connection: refused as a replay.
    let replay = pair.server.receive(firstSessionPacket, from: 1, now: pair.now, using: &rng)
    #expect(replay.close && replay.log.contains { $0.contains("rejected") }, "\(replay.log)")
}
