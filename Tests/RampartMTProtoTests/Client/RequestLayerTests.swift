// The client's request layer (Docs/MTProto.md §2.6) against a server Session in memory: answers routed by
// req_msg_id (gzip_packed inflated, rpc_error), containers bounded by size, and every "send it again"
// rule of the service messages, each with what it must re-send; and the test server's msgs_state_req.

import Testing
@testable import RampartMTProto
@testable import RampartMTProtoServer
import RampartTestSupport

private let t0: Double = 1_705_754_877

/// A client session and layer, and the server session they talk to.
private struct Link {
    var client: Session
    var server: Session
    var layer = RequestLayer()
    var rng = SplitMix64(seed: 3)
    var now = t0

    init(seed: UInt64 = 1) {
        let key = msgRandomKey(seed)
        client = Session(client: key, sessionId: 0x0abc, salt: 7, timeOffset: 0)
        server = Session(server: key, salt: 7)
    }

    /// Packs what the layer has and delivers it to the server; returns what the server received.
    mutating func flush(acks: Bool = false) throws -> [IncomingMessage] {
        var got: [IncomingMessage] = []
        for p in try layer.makePackets(session: &client, now: now, flushAcks: acks, using: &rng) {
            got += try server.decrypt(p.packet, now: now)
        }
        return got
    }

    /// The server sends `bodies` (one packet); the layer's events.
    mutating func serverSends(_ bodies: [OutgoingBody]) throws -> [RequestLayer.Event] {
        let out = try server.encrypt(bodies, now: now, using: &rng)
        return layer.receive(try client.decrypt(out.packet, now: now), session: &client, using: &rng)
    }

    mutating func serverSends(_ m: ServiceMessage) throws -> [RequestLayer.Event] { try serverSends([OutgoingBody(m)]) }
}

/// A query body of `n` bytes (a made-up constructor and filler words).
private func query(_ tag: UInt32, bytes n: Int = 8) -> [UInt8] {
    var w = TLWriter()
    w.constructor(tag)
    for _ in 0..<(max(n, 8) - 4) / 4 { w.int32(Int32(bitPattern: tag)) }
    return w.bytes
}

private func tag(_ m: IncomingMessage) -> UInt32 { m.constructor }

/// The messages that are not acks (acks ride along with whatever goes out).
private func withoutAcks(_ ms: [IncomingMessage]) -> [IncomingMessage] { ms.filter { $0.constructor != ServiceConstructor.msgsAck } }

@Suite struct RequestLayerTests {
    @Test func answersAreRoutedByRequest() throws {
        var link = Link()
        let a = link.layer.enqueue(query(0xAAAA_0001)), b = link.layer.enqueue(query(0xAAAA_0002)), c = link.layer.enqueue(query(0xAAAA_0003))
        let got = try link.flush()
        #expect(got.map(tag) == [0xAAAA_0001, 0xAAAA_0002, 0xAAAA_0003] && got.allSatisfy { $0.containerId != nil })
        let ids = got.map(\.msgId)
        #expect(link.layer.msgId(of: a) == ids[0] && link.layer.msgId(of: c) == ids[2])
        // gzip_packed result (Python's gzip.compress of a 40-element Vector<long>), an rpc_error, a plain one.
        let gz = try Hex.decode("1f8b0800000000000203133db255468301019c9df8c1745b8b1c983e794c174cf370da82697f6f1f303da9371a4c5f3d9f05a62584aac074744827989e376d06987e786339985691de0ea6d3638f81e955f3af82e9b70f9f806903952f60ba388d9911446f5b2104a67fbe5204d336ba8660ba3edf014c1fdae80fa659bfc481690fb33c30dd5d510ba6cfedea01d3827f6783e910fbd5607a7ae32e307debf049302dcb76134c2778bc00d38bbbbe83e96767d89840b426bf1898ce095405d3eb279b80e94f579dc1b4a9443098060098a55bfa48010000")
        var vector = TLWriter()
        vector.vectorOfInt64((0..<40).map { Int64($0) * 1_000_003 })
        let events = try link.serverSends([
            OutgoingBody(.rpcResult(reqMsgId: ids[1], result: ServiceMessage.gzipPacked(gz).encoded()), isResponse: true),
            OutgoingBody(.rpcResult(reqMsgId: ids[0], result: ServiceMessage.rpcError(RPCError(code: 420, message: "FLOOD_WAIT_3")).encoded()),
                         isResponse: true),
            OutgoingBody(.rpcResult(reqMsgId: ids[2], result: [1, 2, 3, 4]), isResponse: true),
            OutgoingBody(.rpcResult(reqMsgId: 12345, result: [9, 9, 9, 9]), isResponse: true),  // no such request: ignored
        ])
        #expect(events == [.result(b, vector.bytes), .rpcError(a, RPCError(code: 420, message: "FLOOD_WAIT_3")), .result(c, [1, 2, 3, 4])])
        #expect(link.layer.pendingCount == 0)
        // A corrupt gzip_packed is a typed event, not a trap.
        let d = link.layer.enqueue(query(0xAAAA_0004))
        let sent = try link.flush()
        var bad = gz
        bad[40] ^= 0xFF
        let e = try link.serverSends(.rpcResult(reqMsgId: sent[0].msgId, result: ServiceMessage.gzipPacked(bad).encoded()))
        guard case .undecodableResult(d, _)? = e.first else { Issue.record("\(e)"); return }
    }

    @Test func containersAreBoundedBySize() throws {
        var link = Link()
        for i in 0..<5 { _ = link.layer.enqueue(query(0xBBBB_0000 + UInt32(i), bytes: 1000)) }
        _ = link.layer.enqueue(query(0xBBBB_0009, bytes: 5000))
        let packets = try link.layer.makePackets(session: &link.client, now: t0, using: &link.rng)
        var perPacket: [Int] = []
        for p in packets { perPacket.append(try link.server.decrypt(p.packet, now: t0).count) }
        // 1000-byte bodies: three per 3 KiB container (3 × (16 + 1000) + 8 = 3056 bytes); the 5000-byte body alone.
        #expect(perPacket == [3, 2, 1], "\(perPacket)")
    }

    /// bad_msg_notification codes that ask for the same message again: the request is re-sent under a
    /// new msg_id; naming a container re-sends all of it; 64 (invalid container) sends it alone.
    @Test(arguments: [16, 17, 18, 19, 20, 34, 35, 64] as [Int32])
    func badMsgNotificationResends(code: Int32) throws {
        var link = Link()
        let a = link.layer.enqueue(query(0xCCCC_0001)), b = link.layer.enqueue(query(0xCCCC_0002))
        let first = try link.flush()
        let container = try #require(first.first?.containerId)
        let named = code == 19 || code == 64 ? container : first[0].msgId
        link.now += 1
        let events = try link.serverSends(.badMsgNotification(badMsgId: named, badMsgSeqNo: 1, errorCode: code))
        #expect(events.isEmpty)
        let again = try link.flush()
        let expected: [UInt32] = named == container ? [0xCCCC_0001, 0xCCCC_0002] : [0xCCCC_0001]
        #expect(again.map(tag) == expected)
        #expect(again.allSatisfy { m in !first.contains { $0.msgId == m.msgId } })
        if code == 64 { #expect(again.allSatisfy { $0.containerId == nil }) }
        #expect(link.layer.msgId(of: a) == again[0].msgId)
        _ = b
    }

    @Test func badServerSaltResendsUnderTheNewSalt() throws {
        var link = Link()
        _ = link.layer.enqueue(query(0xDDDD_0001))
        let first = try link.flush()
        link.server.salts.adopt(99)
        _ = try link.serverSends(.badServerSalt(badMsgId: first[0].msgId, badMsgSeqNo: 1, errorCode: 48, newServerSalt: 99))
        let again = try link.flush()
        #expect(again.map(tag) == [0xDDDD_0001] && again[0].salt == 99)
    }

    @Test(arguments: [32, 33] as [Int32])
    func seqNoErrorsStartANewSession(code: Int32) throws {
        var link = Link()
        _ = link.layer.enqueue(query(0xEEEE_0001))
        _ = link.layer.enqueue(query(0xEEEE_0002))
        let first = try link.flush()
        let sid = link.client.sessionId
        let events = try link.serverSends(.badMsgNotification(badMsgId: first[0].msgId, badMsgSeqNo: 1, errorCode: code))
        #expect(events == [.sessionRestarted] && link.client.sessionId != sid && link.client.restartCount == 1)
        let again = try link.flush()
        #expect(again.map(tag) == [0xEEEE_0001, 0xEEEE_0002] && link.server.sessionId == link.client.sessionId)
    }

    @Test func newSessionCreatedResendsWhatWasNotAcknowledged() throws {
        var link = Link()
        let a = link.layer.enqueue(query(0xF000_0001)), b = link.layer.enqueue(query(0xF000_0002))
        let first = try link.flush()
        _ = try link.serverSends(.msgsAck([first[0].msgId]))  // a is acknowledged, b is not
        link.now += 1
        let later = link.layer.enqueue(query(0xF000_0003))
        let second = try link.flush()
        // The server forgot the session: first_msg_id is the later request's id.
        _ = try link.serverSends(.newSessionCreated(firstMsgId: second[0].msgId, uniqueId: 1, serverSalt: 7))
        let again = withoutAcks(try link.flush())
        #expect(again.map(tag) == [0xF000_0002])
        _ = (a, b, later)
    }

    @Test func resendRequestsAndStateMessages() throws {
        var link = Link()
        _ = link.layer.enqueue(query(0x1111_0001))
        _ = link.layer.enqueue(query(0x1111_0002))
        _ = link.layer.enqueue(query(0x1111_0003))
        let first = try link.flush()
        link.now += 1
        // msg_resend_req for the second.
        _ = try link.serverSends(.msgResendReq([first[1].msgId]))
        let resent = withoutAcks(try link.flush())
        #expect(resent.map(tag) == [0x1111_0002])
        // msgs_all_info: the first not received (2), the third received (4).
        _ = try link.serverSends(.msgsAllInfo(msgIds: [first[0].msgId, first[2].msgId], info: [2, 4]))
        let notReceived = withoutAcks(try link.flush())
        #expect(notReceived.map(tag) == [0x1111_0001])
        // msgs_state_req from the server: answered with msgs_state_info from the client's replay window.
        let known = try link.server.encrypt([5, 5, 5, 5], contentRelated: true, now: link.now, using: &link.rng)
        _ = link.layer.receive(try link.client.decrypt(known.packet, now: link.now), session: &link.client, using: &link.rng)
        let ask = [known.msgId, known.msgId + 4_000_000_000, known.msgId - 4_000_000_000, known.msgId + 2]
        _ = try link.serverSends(.msgsStateReq(ask))
        let answer = try link.flush()
        let info = answer.compactMap { m -> [UInt8]? in
            if case .msgsStateInfo(_, let i)? = try? m.decoded() { i } else { nil }
        }
        #expect(info == [[4, 3, 1, 2]])
    }

    @Test func detailedInfoAcksOrAsksForTheAnswer() throws {
        var link = Link()
        _ = link.layer.enqueue(query(0x2222_0001))
        let first = try link.flush()
        let arrived = try link.server.encrypt([7, 7, 7, 7], contentRelated: true, now: link.now, using: &link.rng)
        _ = link.layer.receive(try link.client.decrypt(arrived.packet, now: link.now), session: &link.client, using: &link.rng)
        _ = try link.flush(acks: true)  // acks go out: nothing pending
        _ = try link.serverSends(.msgDetailedInfo(msgId: first[0].msgId, answerMsgId: arrived.msgId, bytes: 4, status: 0))
        let acked = try link.flush(acks: true)
        #expect(acked.contains { if case .msgsAck(let ids)? = try? $0.decoded() { ids.contains(arrived.msgId) } else { false } })
        let missing = arrived.msgId + (1 << 32)  // a second later: never received (the ids right after are this test's own)
        _ = try link.serverSends(.msgNewDetailedInfo(answerMsgId: missing, bytes: 4, status: 0))
        let asked = try link.flush()
        #expect(asked.contains { if case .msgResendReq(let ids)? = try? $0.decoded() { ids == [missing] } else { false } })
    }

    @Test func cancelDropsOrAsksToDropTheAnswer() throws {
        var link = Link()
        let queued = link.layer.enqueue(query(0x3333_0001))
        let cancelled = link.layer.cancel(queued), again = link.layer.cancel(queued)
        #expect(cancelled && !again)
        let nothing = try link.flush()
        #expect(nothing.isEmpty)
        let sentID = link.layer.enqueue(query(0x3333_0002))
        let sent = try link.flush()
        let cancelledSent = link.layer.cancel(sentID)
        #expect(cancelledSent)
        let drop = try link.flush()
        #expect(drop.contains { if case .rpcDropAnswer(sent[0].msgId)? = try? $0.decoded() { true } else { false } })
        // A late answer is ignored.
        let late = try link.serverSends(.rpcResult(reqMsgId: sent[0].msgId, result: [1, 1, 1, 1]))
        #expect(late.isEmpty)
    }

    @Test func acksGoOutOnTheirOwnAtMtProtoKitsThresholds() throws {
        var link = Link()
        _ = link.layer.enqueue(query(0x4444_0001))
        _ = try link.flush()
        for i in 0..<(RequestLayer.ackCountThreshold - 1) {
            _ = try link.serverSends([OutgoingBody([UInt8(i), 0, 0, 0], contentRelated: true)])
        }
        #expect(!link.layer.acksDue(in: link.client))
        let quiet = try link.layer.makePackets(session: &link.client, now: link.now, using: &link.rng)
        #expect(quiet.isEmpty)
        _ = try link.serverSends([OutgoingBody([0xFF, 0, 0, 0], contentRelated: true)])
        #expect(link.layer.acksDue(in: link.client))
        let acks = try link.flush()
        #expect(acks.count == 1)
        if case .msgsAck(let ids)? = try? acks[0].decoded() { #expect(ids.count == RequestLayer.ackCountThreshold) } else {
            Issue.record("no msgs_ack")
        }
        // One large message (1 MiB) makes them due too.
        _ = try link.serverSends([OutgoingBody([UInt8](repeating: 1, count: RequestLayer.ackByteThreshold), contentRelated: true)])
        #expect(link.layer.acksDue(in: link.client))
    }
}

/// The test server answers msgs_state_req with msgs_state_info (not an rpc_error), routed to the request.
@Test func testServerAnswersMsgsStateReq() throws {
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    var server = try TestServer(configuration: .init(handshake: .init(privateKeys: [priv], dc: 2)))
    var crng = SplitMix64(seed: 5), srng = SplitMix64(seed: 6)
    var client = try ClientConnection(transport: .plain(.intermediate), handshake: .init(publicKeys: [priv.publicKey], dc: 2), using: &crng)
    server.open(1)
    let now = 1_800_000_000.0
    var events: [ClientConnection.Event] = []
    func pump(_ bytes: [UInt8]) throws {
        var toServer = bytes
        for _ in 0..<10 where !toServer.isEmpty {
            let reply = server.receive(toServer, from: 1, now: now, using: &srng)
            let (back, ev) = try client.receive(reply.send, now: now, using: &crng)
            events += ev
            toServer = back
        }
    }
    try pump(try client.start(now: now, using: &crng))
    var ping = TLWriter()
    ping.constructor(ServiceConstructor.ping)
    ping.int64(1)
    let p = try client.request(ping.bytes, now: now, using: &crng)
    try pump(p.bytes)
    let pongs = events.compactMap { e -> Int64? in
        if case .request(.result(p.id, let body)) = e, case .pong(let id, 1)? = try? ServiceMessage(decoding: body) { id } else { nil }
    }
    let pingMsgId = try #require(pongs.first)
    let q = try client.request(ServiceMessage.msgsStateReq([pingMsgId, pingMsgId + (1 << 40)]).encoded(), now: now, using: &crng)
    try pump(q.bytes)
    let info = events.compactMap { e -> [UInt8]? in
        if case .request(.result(q.id, let body)) = e, case .msgsStateInfo(_, let i)? = try? ServiceMessage(decoding: body) { i } else { nil }
    }
    #expect(info == [[4, 3]])
}
