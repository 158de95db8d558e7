// Encrypted-message targets: EncryptedMessage.decrypt, Session.decrypt (client and server, random
// packets and packets validly encrypted from fuzzed plaintexts, replays and mutations) and
// auth.bindTempAuthKey verification.
//
// The reference is the receiver procedure of Docs/MTProto.md §1.6 written here from the public primitives
// (MessageKey.v2, MessageKDF.v2, AES-IGE): a packet must be accepted exactly when the reference
// accepts it, with the same header and body; a failed decrypt changes nothing.

import Rampart
import RampartMTProto
import RampartMTProtoServer
import RampartTestSupport

/// The §1.6 receiver, rebuilt from the public primitives.
enum ReferenceEnvelope {
    struct Opened: Equatable {
        var header: MessageHeader
        var body: [UInt8]
        var plaintext: [UInt8]
        var quickAck: UInt32
    }

    /// `auth_key_id ‖ msg_key ‖ IGE(plaintext)` for a plaintext of whole blocks.
    static func seal(_ plaintext: [UInt8], key: AuthKey, direction: MTProtoDirection) -> [UInt8] {
        let msgKey = MessageKey.v2(authKey: key, plaintext: plaintext, direction: direction)
        guard plaintext.count % 16 == 0, let (k, iv) = try? MessageKDF.v2(authKey: key, messageKey: msgKey, direction: direction),
              let ct = try? AES.IGE.encrypt(plaintext, using: SymmetricKey(data: k), iv: iv) else {
            FuzzCheck.fail("reference seal")
        }
        return key.idBytes + msgKey + ct
    }

    /// The plaintext when auth_key_id, the lengths and msg_key check out (no other check).
    static func unseal(_ packet: [UInt8], key: AuthKey, direction: MTProtoDirection) -> [UInt8]? {
        guard packet.count >= 72, (packet.count - 24) % 16 == 0, Array(packet[0..<8]) == key.idBytes else { return nil }
        let msgKey = Array(packet[8..<24])
        guard let (k, iv) = try? MessageKDF.v2(authKey: key, messageKey: msgKey, direction: direction),
              let plain = try? AES.IGE.decrypt(packet[24...], using: SymmetricKey(data: k), iv: iv) else { return nil }
        guard MessageKey.v2(authKey: key, plaintext: plain, direction: direction) == msgKey else { return nil }
        return plain
    }

    static func le64(_ b: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) }
    }

    /// msg_id scale: `t · 2³²` clamped to `0...Int64.max` (the library's conversion, so that the
    /// window edges compare exactly; the window rule itself is re-derived here).
    static func scaled(_ t: Double) -> Int64 { MessageID.scaled(t) }

    /// Every check of §1.6 in the documented order of effect (one outcome: accepted or not).
    static func open(_ packet: [UInt8], key: AuthKey, direction: MTProtoDirection, sessionId: Int64?, serverTime: Double?,
                     window: ReplayWindow?) -> Opened? {
        guard let plain = unseal(packet, key: key, direction: direction) else { return nil }
        let header = MessageHeader(salt: Int64(bitPattern: le64(plain, 0)), sessionId: Int64(bitPattern: le64(plain, 8)),
                                   msgId: Int64(bitPattern: le64(plain, 16)),
                                   seqNo: Int32(bitPattern: UInt32(truncatingIfNeeded: le64(plain, 24))))
        let length = Int(Int32(bitPattern: UInt32(truncatingIfNeeded: le64(plain, 24) >> 32)))
        guard length >= 0, length % 4 == 0, length <= plain.count - 32 else { return nil }
        let pad = plain.count - 32 - length
        guard (12...1024).contains(pad) else { return nil }
        if let s = sessionId, s != header.sessionId { return nil }
        let parityOK = direction == .clientToServer ? header.msgId & 3 == 0 : header.msgId & 1 == 1
        guard parityOK else { return nil }
        if let t = serverTime {
            let now = scaled(t)
            let (hi, o1) = now.addingReportingOverflow(scaled(30)), (lo, o2) = now.subtractingReportingOverflow(scaled(300))
            guard header.msgId <= (o1 ? .max : hi), header.msgId >= (o2 ? .min : lo) else { return nil }
        }
        if let w = window, !w.accepts(header.msgId) { return nil }
        return Opened(header: header, body: Array(plain[32..<(32 + length)]), plaintext: plain,
                      quickAck: QuickAck.v2(authKey: key, plaintext: plain, direction: direction))
    }
}

/// `salt ‖ session_id ‖ msg_id ‖ seq_no ‖ length ‖ body ‖ padding`, zero-extended to whole blocks.
func messagePlaintext(_ h: MessageHeader, length: Int32? = nil, body: [UInt8], padding: [UInt8]) -> [UInt8] {
    var w = TLWriter(capacity: 32 + body.count + padding.count + 16)
    w.int64(h.salt); w.int64(h.sessionId); w.int64(h.msgId); w.int32(h.seqNo)
    w.int32(length ?? Int32(truncatingIfNeeded: body.count))
    w.raw(body); w.raw(padding)
    var b = w.bytes
    while b.count % 16 != 0 { b.append(0) }
    return b
}

/// A service message or other body chosen by the input (always a whole number of words).
func fuzzBody(_ input: inout FuzzInput) -> [UInt8] {
    switch input.byte() % 11 {
    case 0: return ServiceMessage.ping(pingId: Int64(bitPattern: input.u64())).encoded()
    case 1: return ServiceMessage.msgsAck((0..<Int(input.byte() % 4)).map { _ in Int64(bitPattern: input.u64()) }).encoded()
    case 2: return ServiceMessage.newSessionCreated(firstMsgId: 4, uniqueId: 5, serverSalt: Int64(bitPattern: input.u64())).encoded()
    case 3: return ServiceMessage.badServerSalt(badMsgId: 4, badMsgSeqNo: 1, errorCode: 48, newServerSalt: Int64(bitPattern: input.u64())).encoded()
    case 4:
        let codes: [Int32] = [16, 17, 20, 32]
        return ServiceMessage.badMsgNotification(badMsgId: 4, badMsgSeqNo: 1, errorCode: codes[Int(input.byte() % 4)]).encoded()
    case 5:
        var salts: [FutureSalt] = []
        for i in 0..<Int(input.byte() % 4) {
            let since = Int32(1_700_000_000 + i * 100)
            let until = Int32(1_700_000_000 + Int(input.u16()))
            salts.append(FutureSalt(validSince: since, validUntil: until, salt: Int64(i + 1)))
        }
        return ServiceMessage.futureSalts(reqMsgId: 4, now: 1_700_000_000, salts: salts).encoded()
    case 6: return ServiceMessage.rpcResult(reqMsgId: 4, result: ServiceMessage.rpcError(RPCError(code: 400, message: "X")).encoded()).encoded()
    case 7: return ServiceMessage.pong(msgId: 4, pingId: 5).encoded()
    case 8: return ServiceMessage.getFutureSalts(num: 3).encoded()
    case 9: return ServiceMessage.destroySession(sessionId: Int64(bitPattern: input.u64())).encoded()
    default:
        var b = input.bytes(Int(input.byte()))
        b.removeLast(b.count % 4)
        return b
    }
}

// MARK: - encrypted-message

let encryptedMessageTarget = FuzzTarget(
    name: "encrypted-message",
    summary: "EncryptedMessage.decrypt on random and validly encrypted (then mutated) packets: accepted iff the §1.6 reference accepts, same header/body, replay window changed only on success; encrypt round trip",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let direction: MTProtoDirection = flags & 1 == 0 ? .clientToServer : .serverToClient
        let key = flags & 0x40 == 0 ? Fixtures.authKey : Fixtures.permanentAuthKey
        var packet: [UInt8]
        var header = MessageHeader(salt: 0, sessionId: 0, msgId: 0, seqNo: 0)
        var mutated = false
        if flags & 0x80 != 0 {
            encryptRoundTrip(&input, direction: direction)
            return
        }
        if flags & 8 != 0 {
            header = MessageHeader(salt: Int64(bitPattern: input.u64()), sessionId: Int64(bitPattern: input.u64()),
                                   msgId: Int64(bitPattern: input.u64()), seqNo: Int32(bitPattern: input.u32()))
            let lengthMode = input.byte()
            let body = input.fixed(Int(input.u16() % 1500))
            let pad = input.fixed(Int(input.u16() % 1100))
            let length: Int32? = lengthMode & 1 == 0 ? nil : Int32(bitPattern: input.u32())
            packet = ReferenceEnvelope.seal(messagePlaintext(header, length: length, body: body, padding: pad),
                                            key: Fixtures.authKey, direction: direction)
            if flags & 0x10 != 0 {
                let before = packet
                packet = mutate(packet, &input)
                mutated = packet != before
            }
        } else {
            packet = input.rest()
        }
        let sessionId: Int64? = flags & 2 == 0 ? nil : (input.bool() ? header.sessionId : Int64(bitPattern: input.u64()))
        let serverTime: Double? = flags & 4 == 0 ? nil : MessageID.seconds(of: header.msgId) + Double(Int8(bitPattern: input.byte())) * 3
        var window = ReplayWindow(capacity: 1 + Int(input.byte() % 8))
        for _ in 0..<Int(input.byte() % 4) { window.insert(header.msgId &+ Int64(Int8(bitPattern: input.byte())) * 4) }
        if flags & 0x20 != 0 { window.insert(header.msgId) }

        let reference = ReferenceEnvelope.open(packet, key: key, direction: direction, sessionId: sessionId, serverTime: serverTime,
                                               window: window)
        var w = window
        do throws(MTProtoError) {
            let m = try EncryptedMessage.decrypt(packet, authKey: key, direction: direction, sessionId: sessionId, replayWindow: &w,
                                                 serverTime: serverTime)
            guard let reference else { FuzzCheck.fail("a packet the §1.6 reference refuses was accepted") }
            FuzzCheck.require(!mutated, "a mutated packet was accepted")
            FuzzCheck.require(m.header == reference.header && m.body == reference.body && m.quickAck == reference.quickAck,
                              "decrypted message differs from the reference")
            var expected = window
            expected.insert(m.header.msgId)
            FuzzCheck.require(w == expected, "replay window not updated with the msg_id")
            FuzzStats.note("encrypted-message: accepted")
        } catch {
            FuzzCheck.require(error == .rejectedMessage, "decrypt threw \(error), not rejectedMessage")
            FuzzCheck.require(reference == nil, "a packet the §1.6 reference accepts was rejected")
            FuzzCheck.require(w == window, "a rejected packet changed the replay window")
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        for (i, dir) in [MTProtoDirection.clientToServer, .serverToClient].enumerated() {
            var w = SeedWriter()
            w.byte(UInt8(i) | 2 | 4 | 8)
            w.u64(0x1122_3344_5566_7788); w.u64(0x99)
            w.u64(UInt64(bitPattern: MessageID.scaled(1_700_000_000)) | (dir == .clientToServer ? 0 : 1)); w.u32(3)
            w.byte(0)
            let body = ServiceMessage.ping(pingId: 7).encoded()
            w.u16(UInt16(body.count)); w.raw(body)
            w.u16(28); w.raw([UInt8](repeating: 0xAB, count: 28))
            w.byte(1); w.byte(0); w.byte(3); w.byte(1); w.byte(0xFC)
            out.append(w.bytes)
        }
        var w = SeedWriter()
        w.byte(0x80); w.byte(2); w.u16(3); w.u64(1); w.u32(1000); w.u16(44)
        w.u64(1); w.u64(2); w.u64(0x51E5_7AC4_0000_0004); w.u32(1); w.u16(12); w.raw(ServiceMessage.ping(pingId: 1).encoded())
        out.append(w.bytes)
        out.append([0] + [UInt8](repeating: 0x44, count: 88))
        return out
    })

/// EncryptedMessage.encrypt under every padding policy, read back by the reference, and the
/// policies' length invariants.
private func encryptRoundTrip(_ input: inout FuzzInput, direction: MTProtoDirection) {
    let policy: PaddingPolicy
    switch input.byte() % 3 {
    case 0: policy = .minimal
    case 1: policy = .buckets
    default: policy = .random(maxExtraBlocks: Int(Int16(bitPattern: input.u16())))
    }
    var rng = SplitMix64(seed: input.u64())
    // The padding length rule, including lengths far beyond what is encrypted here.
    for l in [Int(input.u32() % UInt32(EncryptedMessage.maxBodyLength + 1)) & ~3, Int(input.u16()) & ~3] {
        let p = policy.paddingLength(bodyLength: l, using: &rng)
        FuzzCheck.require((12...1024).contains(p) && (32 + l + p) % 16 == 0, "\(policy) gives padding \(p) for \(l) bytes")
    }
    let header = MessageHeader(salt: Int64(bitPattern: input.u64()), sessionId: Int64(bitPattern: input.u64()),
                               msgId: Int64(bitPattern: input.u64()), seqNo: Int32(bitPattern: input.u32()))
    let body = input.bytes(Int(input.u16() % 3000))
    do throws(MTProtoError) {
        let (packet, qa) = try EncryptedMessage.encrypt(body: body, header: header, authKey: Fixtures.authKey, direction: direction,
                                                        padding: policy, using: &rng)
        FuzzCheck.require(body.count % 4 == 0, "a body of \(body.count) bytes was encrypted")
        guard let plain = ReferenceEnvelope.unseal(packet, key: Fixtures.authKey, direction: direction) else {
            FuzzCheck.fail("the reference cannot open what encrypt produced")
        }
        FuzzCheck.require(Array(plain[32..<(32 + body.count)]) == body && plain.count - 32 - body.count >= 12
                          && plain.count - 32 - body.count <= 1024, "encrypt's plaintext layout")
        FuzzCheck.require(qa == QuickAck.v2(authKey: Fixtures.authKey, plaintext: plain, direction: direction), "quick ack value")
        var window = ReplayWindow()
        let reference = ReferenceEnvelope.open(packet, key: Fixtures.authKey, direction: direction, sessionId: header.sessionId,
                                               serverTime: nil, window: window)
        let m = try? EncryptedMessage.decrypt(packet, authKey: Fixtures.authKey, direction: direction, sessionId: header.sessionId,
                                              replayWindow: &window)
        FuzzCheck.require(m?.body == reference?.body && m?.header == reference?.header, "encrypt → decrypt differs from the reference")
        FuzzCheck.require(reference == nil || reference!.header == header, "header changed on the way")
    } catch {
        FuzzCheck.require(body.count % 4 != 0, "encrypt refused a \(body.count)-byte body: \(error)")
    }
}

// MARK: - session-decrypt

/// Everything observable about a session.
struct SessionSnapshot: Equatable {
    var sessionId: Int64?, salts: ServerSalts, messageIds: MessageIDGenerator, seqNo: SeqNoCounter
    var replayWindow: ReplayWindow, pendingAcks: [Int64], firstMessageId: Int64?
    init(_ s: Session) {
        sessionId = s.sessionId; salts = s.salts; messageIds = s.messageIds; seqNo = s.seqNo
        replayWindow = s.replayWindow; pendingAcks = s.pendingAcks; firstMessageId = s.firstMessageId
    }
}

let sessionDecryptTarget = FuzzTarget(
    name: "session-decrypt",
    summary: "Session.decrypt (client and server) on sequences of random, validly encrypted, container, replayed and mutated packets: failures change nothing, replays are refused, results match the §1.6 reference, replies open",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let role: MTProtoRole = flags & 1 == 0 ? .client : .server
        let capacity = [1000, 1, 4, 2][Int(flags >> 3) & 3]
        let now = 1_700_000_000 + Double(input.u16())
        let key = Fixtures.authKey
        var session: Session
        let clientSession: Int64 = 0x0123_4567_89AB_CDEF
        if role == .client {
            let offset: Double? = flags & 4 == 0 ? nil : Double(Int8(bitPattern: input.byte()))
            session = Session(client: key, sessionId: clientSession, salt: 77, timeOffset: offset, padding: .minimal,
                              replayCapacity: capacity)
        } else {
            session = Session(server: key, salt: 77, padding: .minimal, replayCapacity: capacity)
            session.acceptsNewSessions = flags & 2 != 0
        }
        var rng = SplitMix64(seed: UInt64(flags))
        var policy = StandardServerReplies()
        let incoming = role.incoming
        var last: [UInt8] = []
        for _ in 0..<8 where !input.isAtEnd {
            let kind = input.byte()
            var packet: [UInt8]
            var outerBody: [UInt8]? = nil
            switch kind % 8 {
            case 0:
                packet = input.lengthPrefixed(max: 2048)
            case 6:
                packet = last
            case 7:
                packet = mutate(last, &input)
            default:
                let serverTime = session.messageIds.serverTime(at: now)
                var msgId = MessageID.scaled(serverTime) &+ Int64(Int16(bitPattern: input.u16())) << 22
                switch input.byte() % 4 {
                case 0: break
                default: msgId = incoming == .clientToServer ? msgId & ~3 : (msgId & ~3) | (kind & 2 == 0 ? 1 : 3)
                }
                let sessionIds: [Int64] = [session.sessionId ?? clientSession, clientSession, 0x7777, Int64(bitPattern: input.u64())]
                let header = MessageHeader(salt: input.bool() ? 77 : Int64(bitPattern: input.u64()),
                                           sessionId: sessionIds[Int(input.byte() % 4)], msgId: msgId,
                                           seqNo: Int32(input.byte()))
                var body: [UInt8]
                if kind % 8 == 5 {
                    // A container of inner messages around the outer id.
                    var inner: [ContainerMessage] = []
                    for _ in 0..<Int(input.byte() % 5) {
                        var id = msgId &- Int64(input.byte()) * 4
                        if input.byte() & 7 == 0 { id = msgId &+ 4 }
                        if incoming == .serverToClient { id |= 1 }
                        let b = input.byte() & 15 == 0 ? MessageContainer.encode([]) : fuzzBody(&input)
                        inner.append(ContainerMessage(msgId: id, seqNo: Int32(input.byte() % 8), body: b))
                    }
                    body = MessageContainer.encode(inner)
                } else {
                    body = fuzzBody(&input)
                }
                outerBody = body
                let pad = [UInt8](repeating: 0xC3, count: 12 + 16 * Int(input.byte() % 3))
                packet = ReferenceEnvelope.seal(messagePlaintext(header, body: body, padding: pad), key: key, direction: incoming)
            }
            last = packet
            checkSessionPacket(&session, &policy, packet, now: now, structuredBody: outerBody, using: &rng)
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        for role in 0..<2 {
            var w = SeedWriter()
            w.byte(UInt8(role) | 2 | 4)
            w.u16(100)
            if role == 0 { w.byte(0) }
            // A ping.
            w.byte(1); w.u16(0); w.byte(1); w.u64(0); w.byte(1); w.byte(0); w.byte(1)
            w.byte(0); w.u64(42)
            w.byte(0)
            // A container: a ping and an ack.
            w.byte(5); w.u16(8); w.byte(1); w.u64(0); w.byte(1); w.byte(0); w.byte(2)
            w.byte(2)
            w.byte(1); w.byte(1); w.byte(1); w.byte(0); w.u64(5); w.byte(1)
            w.byte(2); w.byte(1); w.byte(1); w.byte(1); w.byte(1); w.u64(6); w.byte(0)
            w.byte(1)
            // A replay of it, then a one-bit mutation.
            w.byte(6)
            w.byte(7); w.byte(1); w.byte(0); w.u16(30); w.byte(0)
            // new_session_created and a message under another session id.
            w.byte(2); w.u16(16); w.byte(1); w.u64(0x4444); w.byte(1); w.byte(3); w.byte(1)
            w.byte(2); w.u64(99)
            w.byte(2)
            out.append(w.bytes)
        }
        return out
    })

/// Whether `body` is bad_msg_notification 16/17 or bad_server_salt (what a client takes outside the
/// time window).
private func isRepair(_ body: [UInt8]) -> Bool {
    switch try? ServiceMessage(decoding: body) {
    case .badMsgNotification(_, _, let code)?: code == 16 || code == 17
    case .badServerSalt?: true
    default: false
    }
}

/// One packet into `session`, checked against the reference and the session's promises.
private func checkSessionPacket(_ session: inout Session, _ policy: inout StandardServerReplies, _ packet: [UInt8], now: Double,
                                structuredBody: [UInt8]?,
                                using rng: inout SplitMix64) {
    let role = session.role
    let before = SessionSnapshot(session)
    let serverTime: Double? = role == .server || session.messageIds.timeOffset != nil ? session.messageIds.serverTime(at: now) : nil
    let expectedSession: Int64? = role == .server && (session.sessionId == nil || session.acceptsNewSessions) ? nil : session.sessionId
    var reference = ReferenceEnvelope.open(packet, key: session.authKey, direction: role.incoming, sessionId: expectedSession,
                                           serverTime: serverTime, window: role == .client ? session.replayWindow : nil)
    // A client still takes bad_msg_notification 16/17 and bad_server_salt outside the time window, and
    // from such a packet only those (Docs/MTProto.md §1.6.9).
    var outsideWindow = false
    if reference == nil, role == .client, serverTime != nil,
       let r = ReferenceEnvelope.open(packet, key: session.authKey, direction: role.incoming, sessionId: expectedSession,
                                      serverTime: nil, window: session.replayWindow),
       isRepair(r.body) || (try? MessageContainer.decode(r.body, containerMsgId: r.header.msgId))?.contains(where: { isRepair($0.body) }) == true {
        reference = r
        outsideWindow = true
    }
    // A server answers an authentic message outside the time window with bad_msg_notification 16/17
    // (nothing committed), if its replay window would take it.
    var timeRejection: RejectedTime?
    if reference == nil, role == .server, let t = serverTime,
       let r = ReferenceEnvelope.open(packet, key: session.authKey, direction: role.incoming, sessionId: expectedSession,
                                      serverTime: nil, window: nil) {
        let window = r.header.sessionId != session.sessionId ? ReplayWindow(capacity: session.replayWindow.capacity) : session.replayWindow
        if window.accepts(r.header.msgId) {
            timeRejection = RejectedTime(msgId: r.header.msgId, seqNo: r.header.seqNo, sessionId: r.header.sessionId,
                                         code: r.header.msgId > MessageID.scaled(t) ? 17 : 16)
        }
    }
    if let r = reference, role == .server {
        // The server's window: a fresh one for a packet that starts a new session.
        let window = r.header.sessionId != session.sessionId ? ReplayWindow(capacity: session.replayWindow.capacity) : session.replayWindow
        if !window.accepts(r.header.msgId) { reference = nil }
    }
    // A server refuses (without committing) an authentic message under a salt it does not accept.
    var saltRejection: RejectedSalt?
    var scheduled = session.salts
    if let t = serverTime, role == .server { scheduled.advance(at: t) }
    if let r = reference, role == .server, let t = serverTime, !scheduled.accepts(r.header.salt, at: t) {
        saltRejection = RejectedSalt(msgId: r.header.msgId, seqNo: r.header.seqNo, sessionId: r.header.sessionId, salt: r.header.salt)
        reference = nil
    }
    let messages: [IncomingMessage]
    do throws(MTProtoError) {
        messages = try session.decrypt(packet, now: now)
    } catch {
        FuzzCheck.require(SessionSnapshot(session) == before, "a failed decrypt (\(error)) changed the session")
        if let want = timeRejection {
            FuzzCheck.require(error == .badMessageTime(want), "a message outside the time window threw \(error)")
            FuzzStats.note("session: msg_id outside the time window answered")
            guard let out = try? session.encryptBadMsgNotification(answering: want, now: now, using: &rng),
                  let opened = ReferenceEnvelope.open(out.packet, key: session.authKey, direction: role.outgoing,
                                                      sessionId: want.sessionId, serverTime: nil, window: nil) else {
                FuzzCheck.fail("the bad_msg_notification answer does not open")
            }
            FuzzCheck.require(opened.body == ServiceMessage.badMsgNotification(badMsgId: want.msgId, badMsgSeqNo: want.seqNo,
                                                                               errorCode: want.code).encoded(), "bad_msg_notification body")
            FuzzCheck.require(SessionSnapshot(session).replayWindow == before.replayWindow
                              && SessionSnapshot(session).sessionId == before.sessionId, "answering a time rejection changed the receive state")
            return
        }
        if let want = saltRejection {
            FuzzCheck.require(error == .badServerSalt(want), "a message under a bad salt threw \(error)")
            FuzzStats.note("session: bad salt refused")
            // The answer goes in the message's session and opens there.
            guard let out = try? session.encryptBadServerSalt(answering: want, now: now, using: &rng),
                  let opened = ReferenceEnvelope.open(out.packet, key: session.authKey, direction: role.outgoing,
                                                      sessionId: want.sessionId, serverTime: nil, window: nil) else {
                FuzzCheck.fail("the bad_server_salt answer does not open")
            }
            FuzzCheck.require(opened.body == ServiceMessage.badServerSalt(badMsgId: want.msgId, badMsgSeqNo: want.seqNo, errorCode: 48,
                                                                          newServerSalt: scheduled.current).encoded(),
                              "bad_server_salt body")
            FuzzCheck.require(SessionSnapshot(session).replayWindow == before.replayWindow
                              && SessionSnapshot(session).sessionId == before.sessionId, "answering a bad salt changed the receive state")
            return
        }
        if let r = reference, readLE32(r.body) != ServiceConstructor.msgContainer, readLE32(r.body) != ServiceConstructor.msgsAck {
            FuzzCheck.fail("a plain message the §1.6 reference accepts was refused: \(error)")
        }
        return
    }
    guard let reference else { FuzzCheck.fail("a packet the §1.6 reference refuses was accepted") }
    if outsideWindow {
        FuzzCheck.require(messages.allSatisfy { isRepair($0.body) }, "outside the time window, a message that repairs nothing was delivered")
        FuzzStats.note("session: clock or salt repair outside the time window")
    }
    if let b = structuredBody { FuzzCheck.require(reference.body == b, "reference body") }
    if readLE32(reference.body) == ServiceConstructor.msgContainer {
        guard let inner = try? MessageContainer.decode(reference.body, containerMsgId: reference.header.msgId) else {
            FuzzCheck.fail("an invalid container was accepted")
        }
        var seen = Set<Int64>()
        for m in messages {
            FuzzCheck.require(m.containerId == reference.header.msgId, "container id")
            FuzzCheck.require(inner.contains { $0.msgId == m.msgId && $0.seqNo == m.seqNo && $0.body == m.body }, "a message not in the container")
            FuzzCheck.require(seen.insert(m.msgId).inserted, "a msg_id delivered twice from one container")
            FuzzCheck.require(m.seqNo <= reference.header.seqNo, "inner seq_no above the container's")
        }
        FuzzCheck.require(reference.header.seqNo & 1 == 0, "a content-related container was accepted")
    } else {
        FuzzCheck.require(messages.count == 1 && messages[0].body == reference.body && messages[0].msgId == reference.header.msgId
                          && messages[0].seqNo == reference.header.seqNo && messages[0].salt == reference.header.salt
                          && messages[0].containerId == nil && messages[0].quickAck == reference.quickAck,
                          "decrypted message differs from the reference")
    }
    for m in messages where m.isContentRelated {
        FuzzCheck.require(session.pendingAcks.contains(m.msgId), "a content-related message was not queued for an ack")
    }
    FuzzCheck.require(session.sessionId == reference.header.sessionId, "session id after a message")
    FuzzStats.note("session: accepted \(messages.count) message(s)")
    // The same packet again is a replay.
    let afterFirst = SessionSnapshot(session)
    if (try? session.decrypt(packet, now: now)) != nil { FuzzCheck.fail("a replayed packet was accepted") }
    FuzzCheck.require(SessionSnapshot(session) == afterFirst, "a refused replay changed the session")
    // Whatever the session answers opens under the reference in the other direction.
    let replies: [OutgoingBody]
    if role == .server {
        let announced = policy.announcedSessionId
        replies = policy.replies(to: messages, in: &session, uniqueId: 99, now: now)
        let created = replies.first.flatMap { try? ServiceMessage(decoding: $0.body) }
        FuzzCheck.require((announced != session.sessionId) == (created == .newSessionCreated(firstMsgId: session.firstMessageId ?? 0,
                                                                                             uniqueId: 99, serverSalt: session.salts.current)),
                          "new_session_created not exactly once per new session")
    } else {
        replies = session.takeAckBody().map { [OutgoingBody($0, contentRelated: false)] } ?? []
    }
    guard !replies.isEmpty, let out = try? session.encrypt(replies, now: now, using: &rng) else { return }
    guard let opened = ReferenceEnvelope.open(out.packet, key: session.authKey, direction: role.outgoing, sessionId: session.sessionId,
                                              serverTime: nil, window: nil) else {
        FuzzCheck.fail("the session's reply does not open")
    }
    FuzzCheck.require(opened.header.msgId == out.msgId && opened.header.seqNo == out.seqNo, "reply header")
    if replies.count == 1 {
        FuzzCheck.require(opened.body == replies[0].body, "reply body")
    } else {
        guard let inner = try? MessageContainer.decode(opened.body, containerMsgId: out.msgId) else { FuzzCheck.fail("reply container") }
        FuzzCheck.require(inner.map(\.body) == replies.map(\.body) && inner.map(\.msgId) == out.innerMsgIds, "reply container contents")
    }
}

/// The first four bytes as a little-endian word (0 when shorter).
func readLE32(_ b: [UInt8]) -> UInt32 {
    b.count < 4 ? 0 : UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
}

// MARK: - temp-key-binding

let tempKeyBindingTarget = FuzzTarget(
    name: "temp-key-binding",
    summary: "TempKeyBinding.verify on random and genuine-then-mutated auth.bindTempAuthKey bodies: only the untouched request with matching parameters verifies",
    maxLength: 2048,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let sessionId = Int64(bitPattern: input.u64()), msgId = Int64(bitPattern: input.u64())
        let expiresAt = Int32(bitPattern: input.u32())
        let lookup: (UInt64) -> AuthKey? = { $0 == Fixtures.permanentAuthKey.id ? Fixtures.permanentAuthKey : nil }
        var body: [UInt8]
        var genuine = false
        if flags & 1 == 0 {
            body = input.rest()
        } else {
            var rng = SplitMix64(seed: input.u64())
            guard let req = try? TempKeyBinding.makeRequest(permanentKey: Fixtures.permanentAuthKey, temporaryKey: Fixtures.authKey,
                                                            temporarySessionId: sessionId, expiresAt: expiresAt, msgId: msgId,
                                                            using: &rng) else { FuzzCheck.fail("makeRequest failed") }
            body = flags & 2 == 0 ? req : mutate(req, &input)
            genuine = body == req
        }
        let checkSession = flags & 4 == 0 ? sessionId : sessionId &+ 1
        let checkMsgId = flags & 8 == 0 ? msgId : msgId &+ 4
        do throws(MTProtoError) {
            let b = try TempKeyBinding.verify(body, outerMsgId: checkMsgId, temporaryKey: Fixtures.authKey, sessionId: checkSession,
                                              permanentKey: lookup)
            FuzzCheck.require(genuine && flags & 12 == 0, "a forged or mismatched binding verified")
            FuzzStats.note("binding: verified")
            FuzzCheck.require(b.permanentKeyId == Fixtures.permanentAuthKey.id && b.temporaryKeyId == Fixtures.authKey.id
                              && b.expiresAt == expiresAt && b.temporarySessionId == sessionId, "binding fields")
        } catch {
            FuzzCheck.require(!(genuine && flags & 12 == 0), "a genuine binding was refused: \(error)")
        }
    },
    seeds: {
        var w = SeedWriter()
        w.byte(1); w.u64(5); w.u64(0x51E5_7AC4_0000_0004); w.u32(1_700_003_600); w.u64(1)
        var m = SeedWriter()
        m.byte(3); m.u64(5); m.u64(0x51E5_7AC4_0000_0004); m.u32(1_700_003_600); m.u64(2); m.byte(1); m.byte(0); m.u16(100); m.byte(0x10)
        return [w.bytes, m.bytes]
    })

let messageTargets: [FuzzTarget] = [encryptedMessageTarget, sessionDecryptTarget, tempKeyBindingTarget]
