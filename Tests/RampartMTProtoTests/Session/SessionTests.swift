// Session layer (Docs/MTProto.md §2): msg_id/seq_no, windows, salts, containers, service messages, the client
// and server Session values, and bad input that must leave a session unchanged.

import Foundation
import Testing
@testable import RampartMTProto
import RampartMTProtoServer
import RampartTestSupport

/// 2024-01-20 12:47:57 UTC, the handshake sample's server_time: exactly representable, so msg_id
/// edges are exact.
private let t0: Double = 1_705_754_877

private func pair(_ seed: UInt64 = 9) -> (Session, Session) {
    let key = msgRandomKey(seed)
    return (Session(client: key, sessionId: 0x0123_4567_89ab_cdef, salt: 77, timeOffset: 0),
            Session(server: key, salt: 77))
}

@Suite struct SessionTests {
    // MARK: msg_id, seq_no

    @Test func messageIdsAreMonotonicWithParity() {
        var c = MessageIDGenerator(role: .client, timeOffset: 0)
        var s = MessageIDGenerator(role: .server, timeOffset: 0)
        var last: Int64 = 0, lastS: Int64 = 0
        for i in 0..<2000 {
            let now = t0 + Double(i % 7) * 0.001 - (i % 13 == 0 ? 5 : 0)  // stalls and jumps back
            let id = c.next(now: now)
            #expect(id > last && id & 3 == 0 && id & 0xFFFF_FFFF != 0)
            last = id
            let r = i % 2 == 0
            let sid = s.next(now: now, isResponse: r)
            #expect(sid > lastS && sid & 3 == (r ? 1 : 3))
            lastS = sid
        }
        #expect(MessageID.seconds(of: c.next(now: t0 + 100)) >= t0 + 99.99)
    }

    @Test func messageIdUsesOffsetAndClamps() {
        var g = MessageIDGenerator(role: .client)
        g.synchronize(serverTime: t0 + 50, now: t0)
        #expect(g.timeOffset == 50)
        #expect(g.next(now: t0) >> 32 == Int64(t0) + 50)
        var h = MessageIDGenerator(role: .client)
        for bad in [Double.nan, -.infinity, .infinity, -1, 1e300] { _ = h.next(now: bad) }  // no trap
        #expect(h.lastId > 0)
    }

    @Test func seqNo() {
        var s = SeqNoCounter()
        #expect(s.next(contentRelated: false) == 0)
        #expect(s.next(contentRelated: true) == 1)
        #expect(s.next(contentRelated: true) == 3)
        #expect(s.next(contentRelated: false) == 4)
        #expect(s.next(contentRelated: true) == 5)
        #expect(s.contentRelatedCount == 3)
    }

    // MARK: windows

    @Test func timeWindowEdges() {
        let w = TimeWindow.standard
        let now = MessageID.scaled(t0)
        let s30: Int64 = 30 << 32, s300: Int64 = 300 << 32
        #expect(w.accepts(msgId: now + s30, serverTime: t0))
        #expect(!w.accepts(msgId: now + s30 + 1, serverTime: t0))
        #expect(w.accepts(msgId: now - s300, serverTime: t0))
        #expect(!w.accepts(msgId: now - s300 - 1, serverTime: t0))
        #expect(!w.accepts(msgId: .min, serverTime: t0) && !w.accepts(msgId: .max, serverTime: t0))
    }

    @Test func replayWindowRule() {
        var w = ReplayWindow(capacity: 4)
        func ins(_ id: Int64) -> Bool { w.insert(id) }
        #expect(ins(100) && ins(300) && ins(200))
        #expect(!ins(200))                      // duplicate
        #expect(!ins(50) && !w.accepts(99))     // lower than all stored: refused before the window is full too
        #expect(ins(150) && ins(250))           // between stored ids: fine
        #expect(w.isFull && w.lowest == 150 && !w.contains(100))
        #expect(!w.accepts(150) && !w.accepts(140))  // ≤ lowest is refused
        #expect(ins(151))                       // above the lowest: stored, lowest evicted
        #expect(w.lowest == 151 && w.count == 4 && !w.contains(150))
        #expect(ins(1000))
        #expect(w.lowest == 200)
        var all = true
        for i in 0..<5000 { all = all && ins(2000 + Int64(i) * 4) }  // eviction and compaction
        #expect(all)
        #expect(w.count == 4 && w.lowest == 2000 + 4996 * 4 - 12 + 12)
        #expect(!ins(2000 + 4996 * 4))
    }

    // MARK: salts

    @Test func salts() {
        var s = ServerSalts(current: 1)
        s.add([FutureSalt(validSince: 100, validUntil: 200, salt: 2), FutureSalt(validSince: 150, validUntil: 300, salt: 3),
               FutureSalt(validSince: 5, validUntil: 5, salt: 9)])
        #expect(s.future.count == 2)
        #expect(s.salt(at: 50) == 1)              // nothing scheduled yet: the current salt (validity unknown)
        #expect(s.salt(at: 120) == 2)             // the only valid one
        #expect(s.accepts(3, at: 160) && !s.accepts(3, at: 120))
        #expect(s.salt(at: 160) == 3)             // both valid: the one valid the longest
        #expect(s.salt(at: 200) == 3)
        #expect(s.salt(at: 400) == 0 && s.future.isEmpty)  // every known salt expired: fall back to 0
        s.adopt(7)
        #expect(s.current == 7 && s.currentValidUntil == nil)
        #expect(s.salt(at: 500) == 7)             // unknown validity: kept
        #expect(ServerSalts.initialSalt(newNonce: [], serverNonce: []) == nil)
    }

    /// A server's schedule: the salt changes when its window ends, and the replaced one is accepted
    /// for 300 s more.
    @Test func serverSaltSchedule() {
        var s = ServerSalts(current: 1, validUntil: 100)
        s.add([FutureSalt(validSince: 100, validUntil: 200, salt: 2), FutureSalt(validSince: 200, validUntil: 300, salt: 3)])
        #expect(!s.advance(at: 99) && s.current == 1)
        #expect(s.advance(at: 150) && s.current == 2 && s.previous == 1 && s.previousValidUntil == 400)
        #expect(s.accepts(1, at: 399) && !s.accepts(1, at: 400))
        #expect(s.accepts(3, at: 200) && !s.accepts(3, at: 199) && !s.accepts(9, at: 150))
        let announced = s.announced(at: 150, count: 10)
        #expect(announced.map(\.salt) == [2, 3] && announced[0].validUntil == 200)
        #expect(s.announced(at: 150, count: 1).count == 1)
        #expect(s.advance(at: 250) && s.current == 3 && s.previous == 2 && s.previousValidUntil == 500)
        #expect(!s.advance(at: 350) && s.current == 3)  // nothing scheduled: the salt stays
    }

    // MARK: service messages and containers

    static let services: [ServiceMessage] = [
        .newSessionCreated(firstMsgId: 1, uniqueId: -2, serverSalt: 3),
        .badMsgNotification(badMsgId: 4, badMsgSeqNo: 5, errorCode: 16),
        .badServerSalt(badMsgId: 4, badMsgSeqNo: 5, errorCode: 48, newServerSalt: -6),
        .ping(pingId: 0x1122_3344_5566_7788), .pingDelayDisconnect(pingId: 1, disconnectDelay: 75),
        .pong(msgId: 0x65ab_c0fe_0000_0004, pingId: 0x1122_3344_5566_7788),
        .rpcResult(reqMsgId: 9, result: ServiceMessage.rpcError(.methodNotSupported).encoded()),
        .rpcError(RPCError(code: 420, message: "FLOOD_WAIT_30")),
        .msgsAck([]), .msgsAck([1, 2, 3]), .msgsAck((0..<8192).map { Int64($0) }),
        .getFutureSalts(num: 64),
        .futureSalts(reqMsgId: 1, now: 2, salts: [FutureSalt(validSince: 1, validUntil: 2, salt: 3), FutureSalt(validSince: 4, validUntil: 5, salt: 6)]),
        .gzipPacked([1, 2, 3, 4, 5]), .gzipPacked([UInt8](repeating: 7, count: 300)),
        .destroySession(sessionId: 5), .destroySessionOk(sessionId: 5), .destroySessionNone(sessionId: 5),
        .rpcDropAnswer(reqMsgId: 8), .rpcAnswerUnknown, .rpcAnswerDroppedRunning, .rpcAnswerDropped(msgId: 1, seqNo: 2, bytes: 3),
        .msgsStateReq([1]), .msgsStateInfo(reqMsgId: 1, info: [4]), .msgResendReq([1, 2]),
        .container([]), .container([ContainerMessage(msgId: 4, seqNo: 1, body: [1, 2, 3, 4]), ContainerMessage(msgId: 8, seqNo: 2, body: [0xec, 0x77, 0xbe, 0x7a, 1, 2, 3, 4, 5, 6, 7, 8])]),
        .unknown(constructor: 0xc4f9_186b, body: [0x6b, 0x18, 0xf9, 0xc4]),
    ]

    @Test(arguments: services)
    func serviceMessageRoundTrip(_ m: ServiceMessage) throws {
        let b = m.encoded()
        #expect(b.count % 4 == 0)
        #expect(try ServiceMessage(decoding: b) == m)
        // Every strict prefix fails (or, for rpc_result/unknown, decodes to something else) without trapping.
        for n in 0..<b.count {
            if let d = try? ServiceMessage(decoding: Array(b.prefix(n))) { #expect(d != m) }
        }
        if case .unknown = m { return }
        if case .rpcResult = m { return }
        #expect(throws: MTProtoError.self) { try ServiceMessage(decoding: b + [0, 0, 0, 0]) }
    }

    @Test func serviceWireBytes() {
        // D1's body and D2's body (Docs/MTProto.md §10.D).
        #expect(hexString(ServiceMessage.ping(pingId: 0x1122_3344_5566_7788).encoded()) == "ec77be7a8877665544332211")
        #expect(hexString(ServiceMessage.pong(msgId: 0x65ab_c0fe_0000_0004, pingId: 0x1122_3344_5566_7788).encoded())
                == "c573773404000000fec0ab658877665544332211")
    }

    @Test func serviceLimits() {
        var w = TLWriter()
        w.constructor(ServiceConstructor.msgsAck); w.vectorOfInt64((0..<8193).map { Int64($0) })
        #expect(throws: MTProtoError.self) { try ServiceMessage(decoding: w.bytes) }
        var c = TLWriter()
        c.constructor(ServiceConstructor.msgContainer); c.int32(1025)
        for i in 0..<1025 { c.int64(Int64(i) * 4); c.int32(0); c.int32(4); c.uint32(0) }
        #expect(throws: MTProtoError.self) { try MessageContainer.decode(c.bytes, containerMsgId: nil) }
        let nested = MessageContainer.encode([ContainerMessage(msgId: 4, seqNo: 0, body: MessageContainer.encode([]))])
        #expect(throws: MTProtoError.self) { try MessageContainer.decode(nested, containerMsgId: nil) }
        let inner = MessageContainer.encode([ContainerMessage(msgId: 8, seqNo: 0, body: [1, 2, 3, 4])])
        #expect(throws: MTProtoError.self) { try MessageContainer.decode(inner, containerMsgId: 8) }
        #expect((try? MessageContainer.decode(inner, containerMsgId: 12))?.count == 1)
        var odd = inner; odd[20] = 3  // inner length 3
        #expect(throws: MTProtoError.self) { try MessageContainer.decode(odd, containerMsgId: nil) }
    }

    @Test func serviceDecoderFuzz() {
        var rng = SplitMix64(seed: 11)
        let seeds = SessionTests.services.map { $0.encoded() }
        for i in 0..<20000 {
            var b: [UInt8]
            if i % 2 == 0, !seeds.isEmpty {
                b = seeds[i % seeds.count]
                for _ in 0..<(1 + Int(rng.next() % 4)) where !b.isEmpty {
                    b[Int(rng.next() % UInt64(b.count))] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
                }
                if rng.next() % 4 == 0 { b = Array(b.prefix(Int(rng.next() % UInt64(b.count + 1)))) }
            } else {
                b = (0..<Int(rng.next() % 64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                if b.count >= 4, rng.next() % 2 == 0 {  // a known constructor with random fields
                    let ids: [UInt32] = [ServiceConstructor.msgContainer, ServiceConstructor.futureSalts, ServiceConstructor.msgsAck,
                                         ServiceConstructor.rpcError, ServiceConstructor.gzipPacked, ServiceConstructor.rpcResult]
                    let id = ids[Int(rng.next() % UInt64(ids.count))]
                    for k in 0..<4 { b[k] = UInt8(truncatingIfNeeded: id >> (8 * UInt32(k))) }
                }
            }
            _ = try? ServiceMessage(decoding: b)
            _ = try? MessageContainer.decode(b, containerMsgId: Int64(bitPattern: rng.next()))
        }
    }

    // MARK: Session: client ↔ server

    @Test func pingPongWithNewSessionAndAcks() throws {
        var (client, server) = pair()
        var rng = SplitMix64(seed: 1)
        let ping = try client.encrypt(ServiceMessage.ping(pingId: 42).encoded(), contentRelated: true, now: t0, using: &rng)
        #expect(ping.msgId & 3 == 0 && ping.seqNo == 1)

        let received = try server.decrypt(ping.packet, now: t0)
        #expect(received.count == 1 && received[0].msgId == ping.msgId && received[0].isContentRelated)
        #expect(server.sessionId == client.sessionId && server.firstMessageId == ping.msgId)
        #expect(server.pendingAcks == [ping.msgId])

        var policy = StandardServerReplies()
        let replies = policy.replies(to: received, in: &server, uniqueId: 555, now: t0)
        #expect(replies.count == 3)  // new_session_created, pong, msgs_ack
        #expect(policy.announcedSessionId == client.sessionId && server.pendingAcks.isEmpty)
        let out = try server.encrypt(replies, now: t0, using: &rng)
        #expect(out.innerMsgIds.count == 3 && out.innerMsgIds.allSatisfy { $0 < out.msgId } && out.msgId & 1 == 1)

        let got = try client.decrypt(out.packet, now: t0)
        #expect(got.count == 3 && got.allSatisfy { $0.containerId == out.msgId })
        #expect(try got[0].decoded() == .newSessionCreated(firstMsgId: ping.msgId, uniqueId: 555, serverSalt: 77))
        #expect(try got[1].decoded() == .pong(msgId: ping.msgId, pingId: 42))
        #expect(got[1].msgId & 3 == 1)  // a response
        #expect(try got[2].decoded() == .msgsAck([ping.msgId]))
        #expect(client.pendingAcks == [got[0].msgId])  // only new_session_created is content-related
        let ack = try #require(try client.encryptPendingAcks(now: t0, using: &rng))
        #expect(client.pendingAcks.isEmpty && ack.seqNo == 2)
        let serverSees = try server.decrypt(ack.packet, now: t0)
        #expect(try serverSees[0].decoded() == .msgsAck([got[0].msgId]))
        #expect(policy.replies(to: serverSees, in: &server, uniqueId: 0, now: t0).isEmpty)
    }

    @Test func unknownRPCGetsMethodNotSupported() throws {
        var (client, server) = pair()
        var rng = SplitMix64(seed: 2)
        let query: [UInt8] = [0x6b, 0x18, 0xf9, 0xc4]  // help.getConfig#c4f9186b
        let sent = try client.encrypt([
            OutgoingBody(query, contentRelated: true), OutgoingBody(ServiceMessage.getFutureSalts(num: 1)),
            OutgoingBody(ServiceMessage.pingDelayDisconnect(pingId: 7, disconnectDelay: 75)),
        ], now: t0, using: &rng)
        #expect(sent.innerMsgIds.count == 3 && sent.seqNo == 6)
        let msgs = try server.decrypt(sent.packet, now: t0)
        #expect(msgs.map(\.msgId) == sent.innerMsgIds)
        var policy = StandardServerReplies()
        let replies = policy.replies(to: msgs, in: &server, uniqueId: 1, now: t0)
        let decoded = try replies.map { try ServiceMessage(decoding: $0.body) }
        #expect(decoded.contains(.rpcResult(reqMsgId: sent.innerMsgIds[0], result: ServiceMessage.rpcError(.methodNotSupported).encoded())))
        #expect(decoded.contains(.pong(msgId: sent.innerMsgIds[2], pingId: 7)))
        #expect(decoded.contains { if case .futureSalts(let r, _, let s) = $0 { return r == sent.innerMsgIds[1] && s.count == 1 }; return false })
        #expect(decoded.contains(.msgsAck(sent.innerMsgIds)))
        let out = try server.encrypt(replies, now: t0, using: &rng)
        let back = try client.decrypt(out.packet, now: t0)
        #expect(back.count == replies.count)
        #expect(client.salts.future.count == 1)
        if case .rpcResult(_, let r)? = try? back.first(where: { $0.constructor == ServiceConstructor.rpcResult })?.decoded() {
            #expect(try ServiceMessage(decoding: r) == .rpcError(RPCError(code: 400, message: "METHOD_NOT_SUPPORTED")))
        } else { Issue.record("no rpc_result") }
    }

    @Test(arguments: [0, 4, 12, 100, 1000, 4096, 65536])
    func sessionRoundTripSizes(_ size: Int) throws {
        var (client, server) = pair(UInt64(size))
        var rng = SplitMix64(seed: UInt64(size))
        for i in 0..<5 {
            let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 ^ i) }
            let out = try client.encrypt(body, contentRelated: true, now: t0 + Double(i), using: &rng)
            let m = try server.decrypt(out.packet, now: t0 + Double(i))
            #expect(m.map(\.body) == [body])
            let back = try server.encrypt(body, contentRelated: false, now: t0 + Double(i), using: &rng)
            #expect(try client.decrypt(back.packet, now: t0 + Double(i)).map(\.body) == [body])
        }
    }

    @Test func clientLearnsFromService() throws {
        var (client, server) = pair()
        var rng = SplitMix64(seed: 4)
        let first = try client.encrypt([0, 0, 0, 0], contentRelated: true, now: t0, using: &rng)
        _ = try server.decrypt(first.packet, now: t0)
        let salt = try server.encrypt(ServiceMessage.badServerSalt(badMsgId: first.msgId, badMsgSeqNo: 1, errorCode: 48, newServerSalt: 1234).encoded(),
                                      contentRelated: false, now: t0, using: &rng)
        _ = try client.decrypt(salt.packet, now: t0)
        #expect(client.salts.current == 1234)
        // bad_msg_notification 17 (msg_id too high): resync from the notification's own id, sent 20 s "later".
        let bad = try server.encrypt(ServiceMessage.badMsgNotification(badMsgId: first.msgId, badMsgSeqNo: 1, errorCode: 17).encoded(),
                                     contentRelated: false, now: t0 + 20, using: &rng)
        _ = try client.decrypt(bad.packet, now: t0)
        #expect(abs((client.messageIds.timeOffset ?? 0) - 20) < 0.01)
    }

    /// A client whose clock jumped by an hour: ordinary messages outside the time window are dropped,
    /// but bad_msg_notification 16/17 and bad_server_salt still arrive (alone or in a container, where
    /// only they are taken) and resynchronize the clock or set the salt.
    @Test func clockAndSaltRepairsArriveOutsideTheTimeWindow() throws {
        var (client, server) = pair()
        var rng = SplitMix64(seed: 14)
        let first = try client.encrypt([0, 0, 0, 0], contentRelated: true, now: t0, using: &rng)
        _ = try server.decrypt(first.packet, now: t0)
        // The server is an hour ahead of what the client believes.
        let late = t0 + 3600
        let ordinary = try server.encrypt(ServiceMessage.pong(msgId: first.msgId, pingId: 1).encoded(), contentRelated: false,
                                          now: late, using: &rng)
        #expect(throws: MTProtoError.rejectedMessage) { try client.decrypt(ordinary.packet, now: t0) }
        let salt = try server.encrypt(ServiceMessage.badServerSalt(badMsgId: first.msgId, badMsgSeqNo: 1, errorCode: 48,
                                                                   newServerSalt: 4321).encoded(),
                                      contentRelated: false, now: late, using: &rng)
        let got = try client.decrypt(salt.packet, now: t0)
        #expect(got.count == 1 && client.salts.current == 4321)
        // A container with a pong and bad_msg_notification 16: only the notification is taken.
        let mixed = try server.encrypt([OutgoingBody(.pong(msgId: first.msgId, pingId: 2)),
                                        OutgoingBody(.badMsgNotification(badMsgId: first.msgId, badMsgSeqNo: 1, errorCode: 16))],
                                       now: late, using: &rng)
        let repaired = try client.decrypt(mixed.packet, now: t0)
        #expect(repaired.count == 1)
        if case .badMsgNotification(_, _, 16)? = try? repaired.first?.decoded() {} else { Issue.record("not the notification") }
        #expect(abs((client.messageIds.timeOffset ?? 0) - 3600) < 1)
        // Now in sync: ordinary messages pass again.
        let after = try server.encrypt(ServiceMessage.pong(msgId: first.msgId, pingId: 3).encoded(), contentRelated: false,
                                       now: late + 1, using: &rng)
        #expect(try client.decrypt(after.packet, now: t0 + 1).count == 1)
        // Other codes (e.g. 32, seq_no too low) are not exempt.
        let other = try server.encrypt(ServiceMessage.badMsgNotification(badMsgId: first.msgId, badMsgSeqNo: 1, errorCode: 32).encoded(),
                                       contentRelated: false, now: late + 7200, using: &rng)
        #expect(throws: MTProtoError.rejectedMessage) { try client.decrypt(other.packet, now: t0 + 2) }
    }

    /// A clock that goes back more than 10 s makes the client start a new session (new session_id,
    /// seq_no from the start, ids from the clock); a small step back only continues the ids; the
    /// server takes the new session with new_session_created.
    @Test func backwardClockStartsANewSession() throws {
        var (client, server) = pair()
        var rng = SplitMix64(seed: 15)
        let a = try client.encrypt([0, 0, 0, 0], contentRelated: true, now: t0, using: &rng)
        _ = try server.decrypt(a.packet, now: t0)
        let sid = client.sessionId
        let b = try client.encrypt([0, 0, 0, 0], contentRelated: true, now: t0 - 5, using: &rng)
        #expect(client.sessionId == sid && client.restartCount == 0 && b.msgId == a.msgId + 4 && b.seqNo == 3)
        let c = try client.encrypt([0, 0, 0, 0], contentRelated: true, now: t0 - 60, using: &rng)
        #expect(client.sessionId != sid && client.restartCount == 1)
        #expect(c.msgId < a.msgId && c.seqNo == 1)
        let got = try server.decrypt(c.packet, now: t0 - 60)
        #expect(got.count == 1 && server.sessionId == client.sessionId)
        // A failed encrypt (a bad body) restarts nothing.
        let before = client.sessionId
        #expect(throws: MTProtoError.self) { _ = try client.encrypt([1, 2, 3], contentRelated: true, now: t0 - 200, using: &rng) }
        #expect(client.sessionId == before && client.restartCount == 1)
    }

    @Test func clientWithoutOffsetLearnsIt() throws {
        let key = msgRandomKey(3)
        var client = Session(client: key, sessionId: 1, salt: 0)
        var server = Session(server: key, salt: 0)
        var rng = SplitMix64(seed: 5)
        // The client's clock is an hour behind: no time window before the offset is known. The server
        // refuses the message and owes bad_msg_notification 16 (msg_id too low), from whose msg_id the
        // client learns the server's time.
        let out = try client.encrypt([1, 2, 3, 4], contentRelated: true, now: t0, using: &rng)
        #expect(throws: MTProtoError.badMessageTime(RejectedTime(msgId: out.msgId, seqNo: out.seqNo, sessionId: 1, code: 16))) {
            try server.decrypt(out.packet, now: t0 + 3600)
        }
        #expect(server.sessionId == nil)
        let first = try client.encrypt([1, 2, 3, 4], contentRelated: true, now: t0 + 3600, using: &rng)
        _ = try server.decrypt(first.packet, now: t0 + 3600)
        let reply = try server.encrypt([5, 6, 7, 8], contentRelated: true, now: t0 + 3600, using: &rng)
        _ = try client.decrypt(reply.packet, now: t0)
        #expect(abs((client.messageIds.timeOffset ?? 0) - 3600) < 0.01)
    }

    // MARK: bad input leaves the session unchanged

    /// Builds a packet from the server to the client with chosen header fields, body and padding.
    private func serverPacket(_ key: AuthKey, sessionId: Int64 = 0x0123_4567_89ab_cdef, msgId: Int64, seqNo: Int32 = 2,
                              body: [UInt8] = [1, 2, 3, 4], padding: PaddingPolicy = .minimal) throws -> [UInt8] {
        var rng = SplitMix64(seed: UInt64(bitPattern: msgId))
        return try EncryptedMessage.encrypt(body: body, header: MessageHeader(salt: 77, sessionId: sessionId, msgId: msgId, seqNo: seqNo),
                                            authKey: key, direction: .serverToClient, padding: padding, using: &rng).packet
    }

    /// A packet with a hand-made plaintext (for length/padding violations the encoder refuses to make).
    private func rawPacket(_ key: AuthKey, plaintext: [UInt8], direction: MTProtoDirection = .serverToClient) -> [UInt8] {
        let mk = MessageKey.v2(authKey: key, plaintext: plaintext, direction: direction)
        let (k, iv) = try! MessageKDF.v2(authKey: key, messageKey: mk, direction: direction)
        return key.idBytes + mk + (try! AES.IGE.encrypt(plaintext, using: AES.Cipher(key: k), iv: iv))
    }

    private func plaintext(sessionId: Int64 = 0x0123_4567_89ab_cdef, msgId: Int64, length: Int32, total: Int) -> [UInt8] {
        var w = TLWriter()
        w.int64(77); w.int64(sessionId); w.int64(msgId); w.int32(2); w.int32(length)
        return w.bytes + [UInt8](repeating: 0xAB, count: total - 32)
    }

    static let badCases = ["short", "not-multiple-of-16", "auth-key-id", "msg-key", "ciphertext-bit", "length-negative",
                           "length-not-4", "length-too-long", "padding-11", "padding-1025", "session", "parity-even",
                           "replay", "too-old", "too-new", "client-parity", "other-key", "odd-container", "container-inner-parity"]

    @Test(arguments: badCases)
    func receiverCheckFailsAlone(_ name: String) throws {
        var (client, server) = pair()
        var rng = SplitMix64(seed: 8)
        let key = client.authKey
        // Establish state: one message each way, an offset known, one pending ack.
        let hello = try client.encrypt([1, 1, 1, 1], contentRelated: true, now: t0, using: &rng)
        _ = try server.decrypt(hello.packet, now: t0)
        let welcome = try server.encrypt([2, 2, 2, 2], contentRelated: true, now: t0, using: &rng)
        _ = try client.decrypt(welcome.packet, now: t0)
        let base = MessageID.scaled(t0) & ~3
        let good = base + (10 << 20) + 1
        // The control: a good packet is accepted by a copy.
        var copy = client
        #expect(throws: Never.self) { try copy.decrypt(try serverPacket(key, msgId: good), now: t0) }

        var packet: [UInt8]
        var target = "client"
        switch name {
        case "short": packet = Array(try serverPacket(key, msgId: good).prefix(24 + 32))
        case "not-multiple-of-16": packet = try serverPacket(key, msgId: good) + [0]
        case "auth-key-id": packet = try serverPacket(key, msgId: good); packet[0] ^= 1
        case "msg-key": packet = try serverPacket(key, msgId: good); packet[8 + 15] ^= 0x80
        case "ciphertext-bit": packet = try serverPacket(key, msgId: good); packet[packet.count - 1] ^= 1
        case "length-negative": packet = rawPacket(key, plaintext: plaintext(msgId: good, length: -4, total: 64))
        case "length-not-4": packet = rawPacket(key, plaintext: plaintext(msgId: good, length: 6, total: 64))
        case "length-too-long": packet = rawPacket(key, plaintext: plaintext(msgId: good, length: 36, total: 64))
        case "padding-11": packet = rawPacket(key, plaintext: plaintext(msgId: good, length: 20, total: 64))  // 64-32-20 = 12 is fine; 21 is not ×4
        case "padding-1025": packet = rawPacket(key, plaintext: plaintext(msgId: good, length: 4, total: 32 + 4 + 1036))
        case "session": packet = try serverPacket(key, sessionId: 5, msgId: good)
        case "parity-even": packet = try serverPacket(key, msgId: good - 1)
        case "replay": packet = welcome.packet
        case "too-old": packet = try serverPacket(key, msgId: base - (301 << 32) + 1)
        case "too-new": packet = try serverPacket(key, msgId: base + (31 << 32) + 1)
        case "client-parity": packet = try serverPacket(key, msgId: good); target = "server"  // server→client packet sent to the server
        case "other-key": packet = try EncryptedMessage.encrypt(body: [0, 0, 0, 0], header: MessageHeader(salt: 77, sessionId: 0x0123_4567_89ab_cdef, msgId: good, seqNo: 2),
                                                                authKey: msgRandomKey(999), direction: .serverToClient, using: &rng).packet
        case "odd-container": packet = try serverPacket(key, msgId: good, seqNo: 3, body: MessageContainer.encode([]))
        case "container-inner-parity": packet = try serverPacket(key, msgId: good, seqNo: 4, body: MessageContainer.encode([ContainerMessage(msgId: good - 1, seqNo: 2, body: [1, 2, 3, 4])]))
        default: Issue.record("unknown case"); return
        }
        if name == "padding-11" {
            // 12 ≤ P holds at length 20 / total 64; the real violation: total 48, length 8 → P = 8.
            packet = rawPacket(key, plaintext: plaintext(msgId: good, length: 8, total: 48))
        }
        if target == "server" {
            let before = server.replayWindow, acks = server.pendingAcks, sid = server.sessionId
            #expect(throws: MTProtoError.rejectedMessage) { try server.decrypt(packet, now: t0) }
            #expect(server.replayWindow == before && server.pendingAcks == acks && server.sessionId == sid)
            return
        }
        let before = client.replayWindow, acks = client.pendingAcks, salts = client.salts, offset = client.messageIds.timeOffset
        let expected: MTProtoError? = name.contains("container") ? nil : .rejectedMessage
        do {
            _ = try client.decrypt(packet, now: t0)
            Issue.record("\(name): accepted")
        } catch {
            if let e = expected { #expect(error == e, "\(name)") }
        }
        #expect(client.replayWindow == before && client.pendingAcks == acks && client.salts == salts && client.messageIds.timeOffset == offset)
    }

    @Test(arguments: [(-300, 1, true), (-300, -3, false), (30, -3, true), (30, 1, false)])
    func sessionTimeWindowEdges(_ seconds: Int64, _ ticks: Int64, _ accepted: Bool) throws {
        var (client, _) = pair()
        let id = MessageID.scaled(t0) + (seconds << 32) + ticks  // ticks keep the id odd (a server id)
        #expect(id & 1 == 1)
        let packet = try serverPacket(client.authKey, msgId: id)
        let result = Result { () throws(MTProtoError) in try client.decrypt(packet, now: t0) }
        if accepted { #expect((try? result.get())?.count == 1) } else { #expect(throws: MTProtoError.rejectedMessage) { try result.get() } }
        #expect(client.replayWindow.contains(id) == accepted)
    }

    @Test func duplicateInsideContainerIsDropped() throws {
        var (client, server) = pair()
        var rng = SplitMix64(seed: 12)
        let a = try client.encrypt([9, 9, 9, 9], contentRelated: true, now: t0, using: &rng)
        _ = try server.decrypt(a.packet, now: t0)
        // The same message resent inside a new container, next to a fresh one.
        let freshId = client.messageIds.next(now: t0)
        var ids = client.messageIds
        let containerId = ids.next(now: t0)
        let body = MessageContainer.encode([ContainerMessage(msgId: a.msgId, seqNo: 1, body: [9, 9, 9, 9]),
                                            ContainerMessage(msgId: freshId, seqNo: 3, body: [8, 8, 8, 8])])
        let packet = try EncryptedMessage.encrypt(body: body, header: MessageHeader(salt: 77, sessionId: client.sessionId!, msgId: containerId, seqNo: 4),
                                                  authKey: client.authKey, direction: .clientToServer, using: &rng).packet
        let got = try server.decrypt(packet, now: t0)
        #expect(got.map(\.msgId) == [freshId])
    }

    @Test func serverRefusesAWrongSaltBeforeCommitting() throws {
        var (client, server) = pair()
        var rng = SplitMix64(seed: 31)
        let sid = try #require(client.sessionId)
        _ = try server.decrypt(try client.encrypt(ServiceMessage.ping(pingId: 1).encoded(), contentRelated: true, now: t0, using: &rng).packet,
                               now: t0)
        let windowBefore = server.replayWindow, acksBefore = server.pendingAcks, firstBefore = server.firstMessageId
        // One msg_id sealed under a wrong salt, then under the right one.
        let msgId = client.messageIds.next(now: t0)
        func packet(salt: Int64, session: Int64, id: Int64) throws -> [UInt8] {
            try EncryptedMessage.encrypt(body: ServiceMessage.ping(pingId: 2).encoded(),
                                         header: MessageHeader(salt: salt, sessionId: session, msgId: id, seqNo: 3),
                                         authKey: client.authKey, direction: .clientToServer, using: &rng).packet
        }
        let bad = try packet(salt: 78, session: sid, id: msgId)
        #expect(throws: MTProtoError.badServerSalt(RejectedSalt(msgId: msgId, seqNo: 3, sessionId: sid, salt: 78))) {
            try server.decrypt(bad, now: t0)
        }
        #expect(server.replayWindow == windowBefore && server.pendingAcks == acksBefore && server.sessionId == sid)
        // The msg_id was not consumed: the same id under the right salt is processed.
        let good = try server.decrypt(try packet(salt: 77, session: sid, id: msgId), now: t0)
        #expect(good.map(\.msgId) == [msgId] && server.pendingAcks == acksBefore + [msgId])

        // A wrong salt on the first packet of another session starts nothing.
        let otherId = client.messageIds.next(now: t0)
        let rejected = RejectedSalt(msgId: otherId, seqNo: 3, sessionId: 42, salt: 78)
        #expect(throws: MTProtoError.badServerSalt(rejected)) { try server.decrypt(try packet(salt: 78, session: 42, id: otherId), now: t0) }
        #expect(server.sessionId == sid && server.firstMessageId == firstBefore)
        // The answer goes in that session, names the message and carries the current salt.
        let answer = try server.encryptBadServerSalt(answering: rejected, now: t0, using: &rng)
        var other = Session(client: client.authKey, sessionId: 42, salt: 78, timeOffset: 0)
        let got = try other.decrypt(answer.packet, now: t0)
        #expect(try got.map { try $0.decoded() } == [.badServerSalt(badMsgId: otherId, badMsgSeqNo: 3, errorCode: 48, newServerSalt: 77)])
        #expect(other.salts.current == 77 && answer.msgId & 3 == 1 && answer.seqNo == 0)
        #expect(server.sessionId == sid && server.replayWindow.accepts(otherId))
        // A client session cannot send it.
        #expect(throws: MTProtoError.self) { try client.encryptBadServerSalt(answering: rejected, now: t0, using: &rng) }
    }

    @Test func serverStartsNewSessionOnOtherSessionId() throws {
        var (client, server) = pair()
        var rng = SplitMix64(seed: 13)
        _ = try server.decrypt(try client.encrypt([1, 1, 1, 1], contentRelated: true, now: t0, using: &rng).packet, now: t0)
        var policy = StandardServerReplies()
        #expect(policy.replies(to: [], in: &server, uniqueId: 1, now: t0).count == 2)  // new_session_created, msgs_ack
        #expect(policy.newSessionCreated(for: server, uniqueId: 1) == nil, "announced once")
        var other = Session(client: client.authKey, sessionId: 42, salt: 77, timeOffset: 0)
        let m = try other.encrypt([2, 2, 2, 2], contentRelated: true, now: t0, using: &rng)
        _ = try server.decrypt(m.packet, now: t0)
        #expect(server.sessionId == 42 && server.firstMessageId == m.msgId && server.pendingAcks == [m.msgId])
        #expect(policy.newSessionCreated(for: server, uniqueId: 2) == OutgoingBody(.newSessionCreated(firstMsgId: m.msgId, uniqueId: 2, serverSalt: 77)))
        server.acceptsNewSessions = false
        #expect(throws: MTProtoError.rejectedMessage) {
            try server.decrypt(try client.encrypt([3, 3, 3, 3], contentRelated: true, now: t0, using: &rng).packet, now: t0)
        }
    }

    @Test func decryptFuzzNeverTraps() throws {
        var (client, server) = pair()
        var rng = SplitMix64(seed: 21)
        let valid = try (0..<8).map { i in try client.encrypt((0..<(i * 12)).map { UInt8($0) }, contentRelated: true, now: t0, using: &rng).packet }
        let before = server.replayWindow
        for i in 0..<4000 {
            var p: [UInt8]
            switch i % 3 {
            case 0:
                p = valid[i % valid.count]
                let bit = Int(rng.next() % UInt64(p.count * 8))
                p[bit / 8] ^= 1 << (bit % 8)
            case 1:
                p = (0..<Int(rng.next() % 200)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                if p.count >= 8, rng.next() % 2 == 0 { p.replaceSubrange(0..<8, with: client.authKey.idBytes) }
            default:
                p = valid[i % valid.count]
                p = Array(p.prefix(Int(rng.next() % UInt64(p.count))))
            }
            #expect(throws: MTProtoError.self) { try server.decrypt(p, now: t0) }
        }
        #expect(server.replayWindow == before && server.sessionId == nil)
    }
}
