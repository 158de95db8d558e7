// An MTProto session (Docs/MTProto.md §2) for either end: msg_id and seq_no generation, salts, the receiver
// checks of §1.6 with the replay and time windows, containers in both directions, and acks.

/// One message received in a session: a whole packet's body, or one message unpacked from a
/// `msg_container`.
public struct IncomingMessage: Sendable, Hashable {
    /// `msg_id` (the inner id for a message from a container).
    public var msgId: Int64
    /// `seq_no`; odd means content-related (the receiver must acknowledge it).
    public var seqNo: Int32
    /// The TL body.
    public var body: [UInt8]
    /// The container's msg_id when the message came inside one.
    public var containerId: Int64?
    /// The `salt` of the packet that carried it.
    public var salt: Int64
    /// The quick-ack value of the packet that carried it (Docs/MTProto.md §1.7).
    public var quickAck: UInt32

    /// Whether the sender marked it content-related (odd seq_no, Docs/MTProto.md §2.2).
    public var isContentRelated: Bool { seqNo & 1 == 1 }
    /// The body's constructor id (0 for a body shorter than 4 bytes).
    public var constructor: UInt32 { leadingConstructor(body) }
    /// The body decoded as a service message (``ServiceMessage/unknown(constructor:body:)`` for others).
    public func decoded() throws(MTProtoError) -> ServiceMessage { try ServiceMessage(decoding: body) }
}

/// An encrypted packet ready for the transport.
public struct OutgoingMessage: Sendable, Hashable {
    /// `auth_key_id ‖ msg_key ‖ encrypted_data`.
    public var packet: [UInt8]
    /// The packet's (outer) msg_id.
    public var msgId: Int64
    /// The packet's seq_no.
    public var seqNo: Int32
    /// For a container: the msg_ids given to its messages, in order. Empty otherwise.
    public var innerMsgIds: [Int64]
    /// The quick-ack value the server will send back if the transport asks for one (Docs/MTProto.md §1.7).
    public var quickAck: UInt32
}

/// A message whose msg_id, seq_no and salt a ``Session`` assigned (``Session/prepare(_:contentRelated:now:isResponse:using:)``)
/// and which is not encrypted yet; ``Session/seal(_:using:)`` encrypts many at once.
public struct PreparedMessage: Sendable {
    /// What will be encrypted: body, header, key, direction and padding policy.
    public let item: EncryptedMessage.BatchItem
    /// The assigned msg_id.
    public var msgId: Int64 { item.header.msgId }
    /// The assigned seq_no.
    public var seqNo: Int32 { item.header.seqNo }
}

/// A body to send, with how it must be numbered.
public struct OutgoingBody: Sendable, Hashable {
    /// The serialized TL object.
    public var body: [UInt8]
    /// Content-related (odd seq_no, must be acked): RPC queries and their results, not acks,
    /// containers, pongs (Docs/MTProto.md §2.2).
    public var contentRelated: Bool
    /// For a server: whether the msg_id marks a response (≡ 1 mod 4) rather than a
    /// server-initiated message (≡ 3). Ignored by a client.
    public var isResponse: Bool

    public init(_ body: [UInt8], contentRelated: Bool, isResponse: Bool = false) {
        self.body = body
        self.contentRelated = contentRelated
        self.isResponse = isResponse
    }

    /// A service message, content-related or not as ``ServiceMessage/isContentRelated`` says.
    public init(_ message: ServiceMessage, isResponse: Bool = false) {
        self.init(message.encoded(), contentRelated: message.isContentRelated, isResponse: isResponse)
    }
}

/// An MTProto session bound to one auth key, for a client or a server (Docs/MTProto.md §2).
///
/// Sans-I/O: ``encrypt(_:contentRelated:now:isResponse:using:)`` returns packets, ``decrypt(_:now:)``
/// takes them; time comes in as `now` (local Unix seconds) and randomness as a generator.
///
/// Client:
/// ```swift
/// var s = Session(client: key, sessionId: rng.next(), salt: initialSalt, timeOffset: serverTime - now)
/// let ping = try s.encrypt(ServiceMessage.ping(pingId: 1).encoded(), contentRelated: true, now: now, using: &rng)
/// let messages = try s.decrypt(reply, now: now)   // containers unpacked, acks recorded
/// if let ack = try s.encryptPendingAcks(now: now, using: &rng) { send(ack.packet) }
/// ```
///
/// Server (what to answer is the server's business; the loopback test server's policy is
/// `StandardServerReplies`):
/// ```swift
/// var s = Session(server: key, salt: salt)
/// do {
///     let messages = try s.decrypt(packet, now: now)  // adopts the client's session_id, checks the salt
///     let out = try s.encrypt(answers(to: messages), now: now, using: &rng)   // one message or a container
/// } catch .badServerSalt(let rejected) {
///     let out = try s.encryptBadServerSalt(answering: rejected, now: now, using: &rng)
/// }
/// ```
///
/// Receiving applies every check of Docs/MTProto.md §1.6 (auth_key_id, msg_key, lengths and padding,
/// session_id, msg_id parity, the replay window, and the time window: always for a server, for a
/// client once the clock offset is known) and the container rules of §2.5. A failed packet throws and
/// leaves the session exactly as it was: ``MTProtoError/rejectedMessage`` for the §1.6 checks,
/// ``MTProtoError/invalidServiceMessage(_:)`` for a container that breaks the rules.
public struct Session: Sendable {
    /// Which end this session works for.
    public let role: MTProtoRole
    /// The auth key.
    public let authKey: AuthKey
    /// `session_id`. A server session has none until the first message arrives.
    public private(set) var sessionId: Int64?
    /// The server salts (a client puts ``ServerSalts/current`` into every message).
    public var salts: ServerSalts
    /// msg_id generation and the clock offset.
    public var messageIds: MessageIDGenerator
    /// seq_no of outgoing messages.
    public private(set) var seqNo = SeqNoCounter()
    /// The last received msg_ids (Docs/MTProto.md §1.6.8).
    public private(set) var replayWindow: ReplayWindow
    /// Received content-related msg_ids not yet acknowledged, oldest first.
    public private(set) var pendingAcks: [Int64] = []
    /// How outgoing messages are padded.
    public var padding: PaddingPolicy
    /// The receiver's time window.
    public var timeWindow = TimeWindow.standard
    /// Server only: whether a message under a different session_id starts a new session (its
    /// session_id is adopted; seq_no, replay window and pending acks start over) instead of being
    /// rejected. Default true.
    public var acceptsNewSessions = true
    /// Server only: the first msg_id of the current session (the lowest id of the packet that
    /// started it), for `new_session_created.first_msg_id` (Docs/MTProto.md §2.4). A server owes that message
    /// whenever ``sessionId`` changes.
    public private(set) var firstMessageId: Int64?
    /// Client only: how many times the session started over because the clock went back (a new
    /// random session_id, seq_no from 0, an empty replay window, pending acks dropped; see
    /// ``MessageIDGenerator/clockWentBack(now:)``). Whatever was not acknowledged in the old session
    /// must be sent again in the new one.
    public private(set) var restartCount = 0

    /// A client session with the given `session_id` (random, chosen by the client, Docs/MTProto.md §2.4) and
    /// the current server salt; `timeOffset` = server time − local time when known (from the
    /// handshake's `server_time`).
    public init(client authKey: AuthKey, sessionId: Int64, salt: Int64, timeOffset: Double? = nil,
                padding: PaddingPolicy = .random, replayCapacity: Int = 1000) {
        role = .client
        self.authKey = authKey
        self.sessionId = sessionId
        salts = ServerSalts(current: salt)
        messageIds = MessageIDGenerator(role: .client, timeOffset: timeOffset)
        replayWindow = ReplayWindow(capacity: replayCapacity)
        self.padding = padding
    }

    /// A server session for `authKey`; it adopts the `session_id` of the first client message.
    /// `salt` is the salt it hands out (new_session_created, future_salts).
    public init(server authKey: AuthKey, salt: Int64, padding: PaddingPolicy = .random, replayCapacity: Int = 1000) {
        role = .server
        self.authKey = authKey
        sessionId = nil
        salts = ServerSalts(current: salt)
        messageIds = MessageIDGenerator(role: .server, timeOffset: 0)
        replayWindow = ReplayWindow(capacity: replayCapacity)
        self.padding = padding
    }

    // MARK: Sending

    /// Encrypts one message: a fresh msg_id from `now`, the next seq_no, the current salt.
    /// - Throws: ``MTProtoError/invalidMessage(_:)`` for a bad body, or for a server session that has
    ///   no session_id yet.
    public mutating func encrypt<R: RandomNumberGenerator>(
        _ body: [UInt8], contentRelated: Bool, now: Double, isResponse: Bool = false, using rng: inout R
    ) throws(MTProtoError) -> OutgoingMessage {
        if role == .client, messageIds.clockWentBack(now: now) {
            var s = self
            s.restart(using: &rng)
            let out = try s.encrypt(body, contentRelated: contentRelated, now: now, isResponse: isResponse, using: &rng)
            self = s
            return out
        }
        guard let sid = sessionId else { throw .invalidMessage("no session yet: a server sends after the client's first message") }
        var seq = seqNo
        let out = try seal(body, contentRelated: contentRelated, sessionId: sid, seqNo: &seq, now: now,
                           isResponse: isResponse, using: &rng)
        seqNo = seq
        return out
    }

    /// Client: starts a new session now (what bad_msg_notification 32/33 asks for; a backward clock
    /// does it by itself): see ``restartCount``.
    public mutating func startNewSession<R: RandomNumberGenerator>(using rng: inout R) {
        guard role == .client else { return }
        restart(using: &rng)
    }

    /// Queues an ack for `msgId` (a message received earlier whose answer the peer announced with
    /// msg_detailed_info), unless one is pending already.
    public mutating func scheduleAck(_ msgId: Int64) {
        if !pendingAcks.contains(msgId) { pendingAcks.append(msgId) }
    }

    /// Client: a new session (the clock went back): a random session_id, seq_no and msg_ids from the
    /// start, an empty replay window, no pending acks (they belong to the old session).
    private mutating func restart<R: RandomNumberGenerator>(using rng: inout R) {
        sessionId = Int64(bitPattern: rng.next())
        seqNo = SeqNoCounter()
        messageIds.restart()
        replayWindow = ReplayWindow(capacity: replayWindow.capacity)
        pendingAcks = []
        restartCount += 1
    }

    /// The salts with the one to send under now current: a client picks by server time
    /// (``ServerSalts/salt(at:)``: the longest-valid known salt, 0 when every known one expired), a
    /// server moves along its schedule (``ServerSalts/advance(at:grace:)``).
    private func saltsForSending(now: Double) -> ServerSalts {
        var sl = salts
        let t = messageIds.serverTime(at: now)
        if role == .client { _ = sl.salt(at: t) } else { sl.advance(at: t) }
        return sl
    }

    /// Server: encrypts the `bad_server_salt` (error code 48, Docs/MTProto.md §2.3) owed for a message that
    /// ``decrypt(_:now:)`` refused with ``MTProtoError/badServerSalt(_:)``. It names the message's
    /// msg_id and seq_no, carries the current salt, and goes in the message's session_id, which
    /// this session has not adopted (a packet that would have started a new session did not). It
    /// is a response (msg_id ≡ 1 mod 4) and not content-related; the receive state (session_id,
    /// replay window, pending acks) is untouched.
    /// - Throws: ``MTProtoError/invalidMessage(_:)`` for a client session.
    public mutating func encryptBadServerSalt<R: RandomNumberGenerator>(
        answering rejected: RejectedSalt, now: Double, using rng: inout R
    ) throws(MTProtoError) -> OutgoingMessage {
        guard role == .server else { throw .invalidMessage("bad_server_salt is sent by a server") }
        let body = ServiceMessage.badServerSalt(badMsgId: rejected.msgId, badMsgSeqNo: rejected.seqNo, errorCode: 48,
                                                newServerSalt: saltsForSending(now: now).current).encoded()
        // Not content-related, so the counter does not move: a session not started yet numbers from 0.
        var seq = rejected.sessionId == sessionId ? seqNo : SeqNoCounter()
        return try seal(body, contentRelated: false, sessionId: rejected.sessionId, seqNo: &seq, now: now,
                        isResponse: true, using: &rng)
    }

    /// Server: encrypts the `bad_msg_notification` (code 16 or 17) owed for a message that
    /// ``decrypt(_:now:)`` refused with ``MTProtoError/badMessageTime(_:)``, in that message's
    /// session_id, like ``encryptBadServerSalt(answering:now:using:)``; its msg_id carries the server's
    /// time, from which the client corrects its clock.
    /// - Throws: ``MTProtoError/invalidMessage(_:)`` for a client session.
    public mutating func encryptBadMsgNotification<R: RandomNumberGenerator>(
        answering rejected: RejectedTime, now: Double, using rng: inout R
    ) throws(MTProtoError) -> OutgoingMessage {
        guard role == .server else { throw .invalidMessage("bad_msg_notification 16/17 is sent by a server") }
        let body = ServiceMessage.badMsgNotification(badMsgId: rejected.msgId, badMsgSeqNo: rejected.seqNo,
                                                     errorCode: rejected.code).encoded()
        var seq = rejected.sessionId == sessionId ? seqNo : SeqNoCounter()
        return try seal(body, contentRelated: false, sessionId: rejected.sessionId, seqNo: &seq, now: now,
                        isResponse: true, using: &rng)
    }

    /// Encrypts one body under `sid` with the next msg_id and the seq_no from `seq`; commits the
    /// msg_id generator and `seq` only on success.
    private mutating func seal<R: RandomNumberGenerator>(
        _ body: [UInt8], contentRelated: Bool, sessionId sid: Int64, seqNo seq: inout SeqNoCounter, now: Double,
        isResponse: Bool, using rng: inout R
    ) throws(MTProtoError) -> OutgoingMessage {
        guard body.count % 4 == 0, body.count <= EncryptedMessage.maxBodyLength else {
            throw .invalidMessage("message_data length \(body.count)")
        }
        var ids = messageIds, counter = seq
        let id = ids.next(now: now, isResponse: isResponse)
        let s = counter.next(contentRelated: contentRelated)
        let sl = saltsForSending(now: now)
        let header = MessageHeader(salt: sl.current, sessionId: sid, msgId: id, seqNo: s)
        let (packet, qa) = try EncryptedMessage.encrypt(body: body, header: header, authKey: authKey,
                                                        direction: role.outgoing, padding: padding, using: &rng)
        messageIds = ids
        salts = sl
        seq = counter
        return OutgoingMessage(packet: packet, msgId: id, seqNo: s, innerMsgIds: [], quickAck: qa)
    }

    /// Assigns the next msg_id, seq_no and salt to `body` exactly as ``encrypt(_:contentRelated:now:isResponse:using:)``
    /// does, without encrypting it: ``seal(_:using:)`` then encrypts many prepared messages, of any
    /// sessions, at once (a server pushing one update to many clients). The session's counters move
    /// now; seal what you prepare, in any order.
    /// - Throws: ``MTProtoError/invalidMessage(_:)`` for a bad body, or for a server session that has
    ///   no session_id yet; then nothing changes.
    public mutating func prepare<R: RandomNumberGenerator>(
        _ body: [UInt8], contentRelated: Bool, now: Double, isResponse: Bool = false, using rng: inout R
    ) throws(MTProtoError) -> PreparedMessage {
        guard body.count % 4 == 0, body.count <= EncryptedMessage.maxBodyLength else {
            throw .invalidMessage("message_data length \(body.count)")
        }
        if role == .client, messageIds.clockWentBack(now: now) { restart(using: &rng) }
        guard let sid = sessionId else { throw .invalidMessage("no session yet: a server sends after the client's first message") }
        let id = messageIds.next(now: now, isResponse: isResponse)
        let s = seqNo.next(contentRelated: contentRelated)
        salts = saltsForSending(now: now)
        let header = MessageHeader(salt: salts.current, sessionId: sid, msgId: id, seqNo: s)
        return PreparedMessage(item: EncryptedMessage.BatchItem(body: body, header: header, authKey: authKey, direction: role.outgoing,
                                                                 padding: padding))
    }

    /// Encrypts prepared messages (of one session or many) together through
    /// ``EncryptedMessage/encrypt(batch:using:)``: the same packets as encrypting each alone, in less
    /// time in total. Returns one ``OutgoingMessage`` per prepared message, in order.
    public static func seal<R: RandomNumberGenerator>(_ messages: [PreparedMessage], using rng: inout R) -> [OutgoingMessage] {
        let sealed = EncryptedMessage.sealChecked(messages.map(\.item), backend: CPU.defaultBackend, using: &rng)
        return zip(messages, sealed).map { m, s in
            OutgoingMessage(packet: s.packet, msgId: m.msgId, seqNo: m.seqNo, innerMsgIds: [], quickAck: s.quickAck)
        }
    }

    /// Encrypts several bodies: one alone as a plain message, two or more (at most 1024) in a
    /// `msg_container` whose msg_id is above all of theirs and whose seq_no is non-content (Docs/MTProto.md §2.5).
    public mutating func encrypt<R: RandomNumberGenerator>(
        _ bodies: [OutgoingBody], now: Double, using rng: inout R
    ) throws(MTProtoError) -> OutgoingMessage {
        guard !bodies.isEmpty else { throw .invalidMessage("nothing to send") }
        if role == .client, messageIds.clockWentBack(now: now) {
            var s = self
            s.restart(using: &rng)
            let out = try s.encrypt(bodies, now: now, using: &rng)
            self = s
            return out
        }
        if bodies.count == 1 {
            return try encrypt(bodies[0].body, contentRelated: bodies[0].contentRelated, now: now,
                               isResponse: bodies[0].isResponse, using: &rng)
        }
        guard bodies.count <= MessageContainer.maxMessages else { throw .invalidMessage("more than 1024 messages for one container") }
        let saved = (messageIds, seqNo)
        var inner: [ContainerMessage] = []
        for b in bodies {
            guard b.body.count >= 4, b.body.count % 4 == 0 else { throw .invalidMessage("container message length \(b.body.count)") }
            let id = messageIds.next(now: now, isResponse: b.isResponse)
            inner.append(ContainerMessage(msgId: id, seqNo: seqNo.next(contentRelated: b.contentRelated), body: b.body))
        }
        do {
            var out = try encrypt(MessageContainer.encode(inner), contentRelated: false, now: now, using: &rng)
            out.innerMsgIds = inner.map(\.msgId)
            return out
        } catch {
            (messageIds, seqNo) = saved
            throw error
        }
    }

    /// Takes up to `max` (≤ 8192) pending acks and returns them as a `msgs_ack` body, or nil when
    /// nothing is pending. Send it as a non-content-related message.
    public mutating func takeAckBody(max: Int = ServiceMessage.maxAckIds) -> [UInt8]? {
        guard !pendingAcks.isEmpty else { return nil }
        let n = Swift.min(Swift.max(1, Swift.min(max, ServiceMessage.maxAckIds)), pendingAcks.count)
        let ids = Array(pendingAcks.prefix(n))
        pendingAcks.removeFirst(n)
        return ServiceMessage.msgsAck(ids).encoded()
    }

    /// Encrypts the pending acks (up to 8192) as one `msgs_ack` message, or returns nil when none
    /// are pending.
    public mutating func encryptPendingAcks<R: RandomNumberGenerator>(now: Double, using rng: inout R) throws(MTProtoError) -> OutgoingMessage? {
        let saved = pendingAcks
        guard let body = takeAckBody() else { return nil }
        do {
            return try encrypt(body, contentRelated: false, now: now, using: &rng)
        } catch {
            pendingAcks = saved
            throw error
        }
    }

    // MARK: Receiving

    /// Decrypts and checks one packet, unpacks a container, and records the content-related
    /// msg_ids in ``pendingAcks``.
    ///
    /// Inside a container, a message whose msg_id was already received is dropped silently (a
    /// resend in a new container, Docs/MTProto.md §2.1); the others are returned in order.
    ///
    /// A client also updates itself from what it receives: the clock offset from the first server
    /// msg_id when none is known yet and from bad_msg_notification codes 16/17; the salt from
    /// bad_server_salt and new_session_created; future salts from future_salts. A message outside the
    /// time window reaches a client only if it is (or its container holds) bad_msg_notification 16/17
    /// or bad_server_salt, and then only those messages are returned: they are how a client whose clock
    /// jumped resynchronizes (Docs/MTProto.md §1.6.9).
    ///
    /// - Parameter now: local time in Unix seconds.
    /// A server also checks the salt (Docs/MTProto.md §2.3) before it commits anything: a message under a salt
    /// that ``ServerSalts/accepts(_:at:)`` refuses throws ``MTProtoError/badServerSalt(_:)`` and does
    /// not consume its msg_id, start a session or queue an ack.
    ///
    /// - Throws: ``MTProtoError/rejectedMessage`` for any §1.6 check; ``MTProtoError/badServerSalt(_:)``
    ///   (server) for a salt it does not accept; ``MTProtoError/invalidServiceMessage(_:)`` or a TL
    ///   error for a malformed container. The session is unchanged then.
    @_specialize(where P == [UInt8])
    public mutating func decrypt<P: Collection<UInt8>>(_ packet: P, now: Double) throws(MTProtoError) -> [IncomingMessage] {
        let enforceTime = role == .server || messageIds.timeOffset != nil
        let serverTime: Double? = enforceTime ? messageIds.serverTime(at: now) : nil
        let expected: Int64? = role == .server && (sessionId == nil || acceptsNewSessions) ? nil : sessionId
        guard var m = EncryptedMessage.open(packet, authKey: authKey, direction: role.incoming, sessionId: expected,
                                            serverTime: serverTime, timeWindow: timeWindow,
                                            window: role == .client ? replayWindow : nil,
                                            allowOutsideTimeWindow: true)
        else { throw .rejectedMessage }
        do {
            return try accept(m, now: now)
        } catch {
            m.body.secureWipe()  // no plaintext outlives a failure
            throw error
        }
    }

    /// The session-level checks and the commit of a packet that passed §1.6.1–§1.6.7 and §1.6.9.
    private mutating func accept(_ m: DecryptedMessage, now: Double) throws(MTProtoError) -> [IncomingMessage] {
        let newSession = role == .server && m.header.sessionId != sessionId
        let window = newSession ? ReplayWindow(capacity: replayWindow.capacity) : replayWindow
        guard window.accepts(m.header.msgId) else { throw .rejectedMessage }
        // Server: an authentic message outside the time window is answered with bad_msg_notification
        // 16/17 (the client's only way to learn that its clock is off), not processed, nothing committed.
        if role == .server, !m.isInTimeWindow {
            let tooHigh = m.header.msgId > MessageID.scaled(messageIds.serverTime(at: now))
            throw .badMessageTime(RejectedTime(msgId: m.header.msgId, seqNo: m.header.seqNo, sessionId: m.header.sessionId,
                                               code: tooHigh ? 17 : 16))
        }
        // Server salt (Docs/MTProto.md §2.3), checked before anything is committed: a message under a salt
        // that is neither current nor a valid future one is not processed, and must not consume its
        // msg_id or start a session (the client re-sends it under the new salt).
        var scheduled = salts
        if role == .server { scheduled.advance(at: messageIds.serverTime(at: now)) }
        if role == .server, !scheduled.accepts(m.header.salt, at: messageIds.serverTime(at: now)) {
            throw .badServerSalt(RejectedSalt(msgId: m.header.msgId, seqNo: m.header.seqNo,
                                              sessionId: m.header.sessionId, salt: m.header.salt))
        }

        // Unpack a container (checked completely before anything changes).
        var messages: [IncomingMessage] = []
        let h = m.header
        if leadingConstructor(m.body) == ServiceConstructor.msgContainer {
            guard h.seqNo & 1 == 0 else { throw .invalidServiceMessage("container with a content-related seq_no") }
            let inner = try MessageContainer.decode(m.body, containerMsgId: h.msgId)
            var seen = Set<Int64>()
            for c in inner {
                guard MessageID.hasValidParity(c.msgId, sender: role.incoming) else {
                    throw .invalidServiceMessage("inner msg_id with the wrong parity")
                }
                guard c.seqNo <= h.seqNo else { throw .invalidServiceMessage("inner seq_no above the container's") }
                // Already received (or too old to tell): drop it, as a resend.
                guard window.accepts(c.msgId), seen.insert(c.msgId).inserted else { continue }
                messages.append(IncomingMessage(msgId: c.msgId, seqNo: c.seqNo, body: c.body, containerId: h.msgId,
                                                salt: h.salt, quickAck: m.quickAck))
            }
        } else {
            if leadingConstructor(m.body) == ServiceConstructor.msgsAck, h.seqNo & 1 == 1 {
                throw .invalidServiceMessage("msgs_ack with a content-related seq_no")
            }
            messages.append(IncomingMessage(msgId: h.msgId, seqNo: h.seqNo, body: m.body, containerId: nil,
                                            salt: h.salt, quickAck: m.quickAck))
        }

        // Outside the time window a client takes only what repairs its clock or salt
        // (Docs/MTProto.md §1.6.9): without it, a client whose clock jumped could never resync.
        if !m.isInTimeWindow {
            messages = messages.filter(Self.repairsClockOrSalt)
            guard !messages.isEmpty else { throw .rejectedMessage }
        }

        // Commit.
        salts = scheduled
        if newSession {
            sessionId = h.sessionId
            replayWindow = window
            seqNo = SeqNoCounter()
            pendingAcks = []
            firstMessageId = messages.map(\.msgId).min().map { Swift.min($0, h.msgId) } ?? h.msgId
        }
        for msg in messages where msg.msgId != h.msgId { replayWindow.insert(msg.msgId) }
        replayWindow.insert(h.msgId)
        for msg in messages where msg.isContentRelated { pendingAcks.append(msg.msgId) }
        if role == .client { learn(from: messages, outerMsgId: h.msgId, now: now) }
        return messages
    }

    /// Client-side updates from service messages (clock offset, salts).
    /// Whether `message` is bad_msg_notification 16/17 (msg_id too low/high) or bad_server_salt.
    static func repairsClockOrSalt(_ message: IncomingMessage) -> Bool {
        switch try? message.decoded() {
        case .badMsgNotification(_, _, let code)?: code == 16 || code == 17
        case .badServerSalt?: true
        default: false
        }
    }

    private mutating func learn(from messages: [IncomingMessage], outerMsgId: Int64, now: Double) {
        if messageIds.timeOffset == nil { messageIds.synchronize(serverMsgId: outerMsgId, now: now) }
        for msg in messages {
            // A body that does not decode teaches nothing; it is still delivered, and the caller
            // gets the decoding error from `decoded()` itself.
            guard let s = try? msg.decoded() else { continue }
            switch s {
            case let .badMsgNotification(_, _, code) where code == 16 || code == 17:
                messageIds.synchronize(serverMsgId: outerMsgId, now: now)
            case let .badServerSalt(_, _, _, salt):
                salts.adopt(salt)
            case let .newSessionCreated(_, _, salt):
                salts.adopt(salt)
            case let .futureSalts(_, _, list):
                salts.add(list)
            default:
                break
            }
        }
    }
}

// MARK: - Snapshot

/// Snapshot (type `MSES`, version 1, Docs/Snapshots.md §4): role (uint8: 0 client, 1 server), the auth
/// key (256 bytes), session_id (optional int64), the salts, the msg_id generator, seq_no, the replay
/// window, the pending acks (list of int64), the padding policy (uint8: 0 minimal, 1 random with its
/// extra blocks as uint32, 2 buckets), the time window (two doubles), whether new sessions are
/// accepted, the first msg_id (optional int64) and the restart count (uint64).
///
/// Old snapshots: an older snapshot has an older seq_no (the server answers bad_msg_notification 32,
/// and the session starts over) and an older replay window, which has forgotten the msg_ids received
/// since: within the five-minute time window those messages would be accepted again under the same
/// session_id. A client that cannot be sure its snapshot is the latest restores with
/// ``resumed(from:using:)``, which starts a new session (a new random session_id: messages of the old
/// one no longer decrypt into it), as MTProto clients do after a restart anyway.
extension Session: Snapshottable {
    /// `MSES`.
    public static let snapshotType = SnapshotType("MSES")
    /// The most pending acks a snapshot may hold.
    static let maxSnapshotPendingAcks = 1 << 16

    public func snapshot() -> SnapshotBytes {
        var w = SnapshotWriter(type: Self.snapshotType, version: 1)
        w.uint8(role == .client ? 0 : 1)
        authKey.withUnsafeBytes { w.fixed($0) }
        w.optional(sessionId) { $0.int64($1) }
        salts.write(to: &w)
        messageIds.write(to: &w)
        seqNo.write(to: &w)
        replayWindow.write(to: &w)
        w.list(pendingAcks) { $0.int64($1) }
        switch padding {
        case .minimal: w.uint8(0)
        case .random(let extra): w.uint8(1); w.uint32(UInt32(clamping: extra))
        case .buckets: w.uint8(2)
        }
        w.double(timeWindow.maxFuture)
        w.double(timeWindow.maxPast)
        w.bool(acceptsNewSessions)
        w.optional(firstMessageId) { $0.int64($1) }
        w.uint64(UInt64(restartCount))
        return w.finish()
    }

    public init(restoring snapshot: SnapshotBytes) throws(RampartError) {
        var r = try SnapshotReader(snapshot, type: Self.snapshotType, versions: 1...1)
        let role: MTProtoRole
        switch try r.uint8() {
        case 0: role = .client
        case 1: role = .server
        default: throw .invalidSnapshot(.invalidField("role"))
        }
        var keyBytes = try r.fixed(AuthKey.byteCount)
        defer { keyBytes.secureWipe() }
        let key: AuthKey
        do { key = try AuthKey(keyBytes) } catch { throw .invalidSnapshot(.invalidField("auth key")) }
        let sessionId = try r.optional("session_id") { (r) throws(RampartError) in try r.int64() }
        guard role == .server || sessionId != nil else { throw .invalidSnapshot(.invalidField("session_id")) }
        let salts = try ServerSalts(reading: &r)
        let messageIds = try MessageIDGenerator(role: role, reading: &r)
        let seqNo = try SeqNoCounter(reading: &r)
        let replayWindow = try ReplayWindow(reading: &r)
        let acks = try r.list("pending acks", max: Self.maxSnapshotPendingAcks, minElementBytes: 8) { (r) throws(RampartError) in try r.int64() }
        let padding: PaddingPolicy
        switch try r.uint8() {
        case 0: padding = .minimal
        case 1:
            let extra = try r.uint32()
            guard extra <= 1 << 16 else { throw .invalidSnapshot(.invalidField("padding")) }
            padding = .random(maxExtraBlocks: Int(extra))
        case 2: padding = .buckets
        default: throw .invalidSnapshot(.invalidField("padding"))
        }
        let maxFuture = try r.double("time window"), maxPast = try r.double("time window")
        guard maxFuture >= 0, maxPast >= 0, maxFuture.isFinite, maxPast.isFinite else { throw .invalidSnapshot(.invalidField("time window")) }
        let acceptsNew = try r.bool("accepts new sessions")
        let first = try r.optional("first msg_id") { (r) throws(RampartError) in try r.int64() }
        let restarts = try r.uint64()
        guard restarts <= UInt64(Int.max) else { throw .invalidSnapshot(.invalidField("restart count")) }
        try r.finish()
        if role == .client {
            self.init(client: key, sessionId: sessionId!, salt: salts.current, padding: padding, replayCapacity: replayWindow.capacity)
        } else {
            self.init(server: key, salt: salts.current, padding: padding, replayCapacity: replayWindow.capacity)
        }
        self.sessionId = sessionId
        self.salts = salts
        self.messageIds = messageIds
        self.seqNo = seqNo
        self.replayWindow = replayWindow
        pendingAcks = acks
        timeWindow = TimeWindow(maxFuture: maxFuture, maxPast: maxPast)
        acceptsNewSessions = acceptsNew
        firstMessageId = first
        restartCount = Int(restarts)
    }

    /// A client session restored from `snapshot` that starts a new session at once (a new random
    /// session_id, seq_no from 0, an empty replay window; salts, clock offset and the last msg_id
    /// kept): safe with a snapshot that may not be the latest (see the snapshot rule above). A server
    /// session is restored as it is (it adopts the client's next session_id by itself).
    /// - Throws: as ``init(restoring:)``.
    public static func resumed<R: RandomNumberGenerator>(from snapshot: SnapshotBytes, using rng: inout R) throws(RampartError) -> Session {
        var s = try Session(restoring: snapshot)
        s.startNewSession(using: &rng)
        return s
    }
}
