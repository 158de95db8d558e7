// The client's request layer (Docs/MTProto.md §2.6), sans-I/O: queued RPCs get msg_ids when they are packed
// into packets (containers bounded by size and count), answers are routed back by req_msg_id, and every
// service message that says "send it again" (bad_msg_notification, bad_server_salt, new_session_created,
// msg_resend_req, msgs_all_info) re-queues what it names. It owns no socket and no clock: the caller hands
// it the session, the time and a generator, and writes the packets it returns.

import RampartCodecs

/// Client-side RPC bookkeeping on top of a ``Session``.
///
/// ```swift
/// var layer = RequestLayer()
/// let id = layer.enqueue(getConfigBody)
/// for p in try layer.makePackets(session: &session, now: now, using: &rng) { write(p.packet) }
/// // … on receipt:
/// for e in layer.receive(try session.decrypt(packet, now: now), session: &session, using: &rng) {
///     if case .result(id, let body) = e { … }
/// }
/// for p in try layer.makePackets(session: &session, now: now, using: &rng) { write(p.packet) }  // re-sends, acks
/// ```
public struct RequestLayer: Sendable {
    /// A queued request's handle.
    public struct RequestID: Hashable, Sendable, Comparable, CustomStringConvertible {
        /// The number, from 1 in the order of ``RequestLayer/enqueue(_:)``.
        public let value: UInt64
        public static func < (a: RequestID, b: RequestID) -> Bool { a.value < b.value }
        public var description: String { "request \(value)" }
    }

    /// What received messages mean for the requests.
    public enum Event: Sendable, Equatable {
        /// A request's answer: the `rpc_result`'s object (a `gzip_packed` one inflated), or for
        /// `ping` / `get_future_salts` / `msgs_state_req` the `pong` / `future_salts` /
        /// `msgs_state_info` message itself.
        case result(RequestID, [UInt8])
        /// A request's `rpc_error`.
        case rpcError(RequestID, RPCError)
        /// A request whose answer cannot be read (a corrupt `gzip_packed`, or one that inflates past
        /// ``RequestLayer/maxResultBytes``).
        case undecodableResult(RequestID, String)
        /// A message that answers no request (updates, and service messages this layer does not act on).
        case message(IncomingMessage)
        /// The session started over (bad_msg_notification 32/33 or a clock that went back): every
        /// unanswered request was queued again.
        case sessionRestarted
    }

    /// Bodies packed into one container at most (MtProtoKit's `MTMaxContainerSize`, 3 KiB); a larger
    /// message travels alone.
    public static let maxContainerBytes = 3 * 1024
    /// Received content-related messages that make an ack due on their own (MtProtoKit's
    /// `MTMaxUnacknowledgedMessageCount`).
    public static let ackCountThreshold = 64
    /// Received content-related bytes that make an ack due on their own (MtProtoKit's
    /// `MTMaxUnacknowledgedMessageSize`, 1 MiB).
    public static let ackByteThreshold = 1 << 20
    /// The largest answer a `gzip_packed` may inflate to (16 MiB).
    public static let maxResultBytes = 16 << 20

    struct Request: Sendable {
        let body: [UInt8]
        /// An `auth.bindTempAuthKey`, whose body is built at packing (it embeds its own msg_id).
        var bind: TempKeyBinding.Request?
        /// The msg_id of its latest sending; nil while queued.
        var msgId: Int64?
        /// The server acknowledged it (msgs_ack, or msgs_all_info "received").
        var acknowledged = false
        /// Must travel outside containers (after bad_msg_notification 64).
        var alone = false
    }

    private var requests: [RequestID: Request] = [:]
    /// Requests waiting to be sent, in order.
    private var queue: [RequestID] = []
    private var byMsgId: [Int64: RequestID] = [:]
    /// Container msg_id → the msg_ids inside (to resolve notifications that name a container).
    private var containers: [Int64: [Int64]] = [:]
    /// Service bodies owed to the server (rpc_drop_answer, msgs_state_info, msg_resend_req).
    private var owed: [OutgoingBody] = []
    private var unackedBytes = 0
    private var nextValue: UInt64 = 1

    public init() {}

    /// While true, ``makePackets(session:now:flushAcks:using:)`` sends only `auth.bindTempAuthKey`
    /// calls (``enqueueBind(_:)``) and service messages; other requests wait. An unbound temporary
    /// key may carry nothing else (Docs/MTProto.md §5); ``ClientConnection`` sets it until its key is
    /// bound.
    public var holdsRequests = false

    /// Requests not yet answered (queued or sent).
    public var pendingCount: Int { requests.count }
    /// Requests waiting to be packed.
    public var queuedCount: Int { queue.count }

    /// The msg_id a request was last sent under (nil while queued, or once answered).
    public func msgId(of id: RequestID) -> Int64? { requests[id]?.msgId }

    /// Queues `body` (a TL query) and returns its handle.
    public mutating func enqueue(_ body: [UInt8]) -> RequestID {
        let id = RequestID(value: nextValue)
        nextValue += 1
        requests[id] = Request(body: body)
        queue.append(id)
        return id
    }

    /// Queues an `auth.bindTempAuthKey` call. It travels alone, its body built when it is packed (and
    /// rebuilt for each re-send) with the msg_id and session_id of the message that carries it, and
    /// it goes out even while ``holdsRequests`` is set.
    public mutating func enqueueBind(_ request: TempKeyBinding.Request) -> RequestID {
        let id = enqueue([])
        requests[id]?.bind = request
        requests[id]?.alone = true
        return id
    }

    /// Queues every request that was sent and not answered again (with new msg_ids at the next
    /// packing): what a client does when its messages can no longer be answered where they went (a
    /// new connection, a new key).
    public mutating func requeueUnanswered() { requeueAll() }

    /// Forgets a request: a queued one is dropped, a sent one gets `rpc_drop_answer` (its answer, if
    /// any still comes, is ignored). Returns whether the request was pending.
    @discardableResult
    public mutating func cancel(_ id: RequestID) -> Bool {
        guard let r = requests.removeValue(forKey: id) else { return false }
        queue.removeAll { $0 == id }
        if let m = r.msgId {
            byMsgId[m] = nil
            owed.append(OutgoingBody(.rpcDropAnswer(reqMsgId: m)))
        }
        return true
    }

    /// Whether acks are due on their own (``ackCountThreshold`` messages or ``ackByteThreshold`` bytes).
    public func acksDue(in session: Session) -> Bool {
        session.pendingAcks.count >= Self.ackCountThreshold || unackedBytes >= Self.ackByteThreshold
    }

    /// Encrypts what is due: owed service messages, queued requests and, riding along or when due on
    /// their own (or `flushAcks`), the session's pending acks. Bodies share containers up to
    /// ``maxContainerBytes`` (and 1024 messages); a larger body, or one that must travel alone, gets
    /// a packet of its own. Empty when nothing is due.
    /// - Throws: the session's encryption errors (a body that is not a whole number of words); the
    ///   requests of the packet that failed and those after it stay queued.
    public mutating func makePackets<R: RandomNumberGenerator>(session: inout Session, now: Double, flushAcks: Bool = false,
                                                              using rng: inout R) throws(MTProtoError) -> [OutgoingMessage] {
        if session.role == .client, session.messageIds.clockWentBack(now: now) {
            // A new session (as the first encrypt would start): nothing sent in the old one will be answered.
            session.startNewSession(using: &rng)
            requeueAll()
        }
        queue.sort()  // re-sent requests go in the order they were made (sorted once here, not per re-send)
        var held: [RequestID] = []
        if holdsRequests {
            held = queue.filter { requests[$0]?.bind == nil }
            queue = queue.filter { requests[$0]?.bind != nil }
        }
        defer { queue = held + queue }
        let sendAcks = flushAcks || acksDue(in: session) || !queue.isEmpty || !owed.isEmpty
        var items: [(body: OutgoingBody, request: RequestID?, alone: Bool)] = owed.map { ($0, nil, false) }
        for id in queue {
            guard let r = requests[id] else { continue }
            items.append((OutgoingBody(r.body, contentRelated: true), id, r.alone))
        }
        let ackIndex = items.count
        if sendAcks, let acks = session.takeAckBody() {
            items.append((OutgoingBody(acks, contentRelated: false), nil, false))
            unackedBytes = 0
        }
        owed = []
        queue = []
        var packets: [OutgoingMessage] = []
        var i = 0
        while i < items.count {
            // One packet: items[i], plus followers while they fit.
            var j = i + 1
            var bytes = items[i].body.body.count
            if !items[i].alone && bytes <= Self.maxContainerBytes {
                while j < items.count, !items[j].alone, j - i < MessageContainer.maxMessages,
                      bytes + items[j].body.body.count + 16 <= Self.maxContainerBytes {
                    bytes += items[j].body.body.count + 16
                    j += 1
                }
            }
            var group = items[i..<j]
            let out: OutgoingMessage
            do throws(MTProtoError) {
                if let id = group.first?.request, let bind = requests[id]?.bind, let sid = session.sessionId {
                    // auth.bindTempAuthKey names its own msg_id: build it for the id this message gets.
                    var probe = session.messageIds
                    let msgId = probe.next(now: now)
                    group[i].body = OutgoingBody(try bind.body(msgId: msgId, temporarySessionId: sid), contentRelated: true)
                    out = try session.encrypt(group.map(\.body), now: now, using: &rng)
                    guard out.msgId == msgId else { throw .invalidMessage("auth.bindTempAuthKey went out under another msg_id") }
                } else {
                    out = try session.encrypt(group.map(\.body), now: now, using: &rng)
                }
            } catch {
                // What was not sent goes back in order.
                for (k, item) in items.enumerated() where k >= i && k != ackIndex {
                    if let id = item.request { queue.append(id) } else { owed.append(item.body) }
                }
                throw error
            }
            let ids = group.count == 1 ? [out.msgId] : out.innerMsgIds
            if group.count > 1 { containers[out.msgId] = out.innerMsgIds }
            for (item, msgId) in zip(group, ids) {
                guard let id = item.request else { continue }
                if let old = requests[id]?.msgId { byMsgId[old] = nil }
                requests[id]?.msgId = msgId
                requests[id]?.acknowledged = false
                byMsgId[msgId] = id
            }
            packets.append(out)
            i = j
        }
        pruneContainers()
        return packets
    }

    /// Acts on received messages (what ``Session/decrypt(_:now:)`` returned) and returns what they
    /// mean. Re-sends and owed answers are queued: call ``makePackets(session:now:flushAcks:using:)``
    /// afterwards.
    public mutating func receive<R: RandomNumberGenerator>(_ messages: [IncomingMessage], session: inout Session,
                                                          using rng: inout R) -> [Event] {
        var events: [Event] = []
        for m in messages {
            if m.isContentRelated { unackedBytes += m.body.count }
            guard let s = try? m.decoded() else {
                events.append(.message(m))
                continue
            }
            switch s {
            case let .rpcResult(req, result):
                guard let id = byMsgId.removeValue(forKey: req), requests.removeValue(forKey: id) != nil else { continue }
                events.append(Self.answer(id, result))
            case let .pong(req, _), let .futureSalts(req, _, _), let .msgsStateInfo(req, _):
                if let id = byMsgId.removeValue(forKey: req), requests.removeValue(forKey: id) != nil {
                    events.append(.result(id, m.body))
                } else {
                    events.append(.message(m))
                }
            case .msgsAck(let ids):
                for msgId in ids { if let id = byMsgId[msgId] { requests[id]?.acknowledged = true } }
            case let .badMsgNotification(bad, _, code):
                switch code {
                case 32, 33:
                    // seq_no out of step: only a new session repairs it (Docs/MTProto.md §2.5).
                    session.startNewSession(using: &rng)
                    requeueAll()
                    events.append(.sessionRestarted)
                case 64:
                    for id in requestIDs(naming: bad) { requeue(id, alone: true) }
                case 16, 17, 18, 19, 20, 34, 35:
                    // 16/17: the session has resynchronized its clock; the others: a new msg_id and
                    // seq_no fix it. Either way the message goes again.
                    for id in requestIDs(naming: bad) { requeue(id) }
                default:
                    events.append(.message(m))
                }
            case let .badServerSalt(bad, _, _, _):
                // The session has adopted the new salt.
                for id in requestIDs(naming: bad) { requeue(id) }
            case let .newSessionCreated(first, _, _):
                // The server lost the session: what it did not acknowledge from before must go again.
                for (id, r) in requests where !r.acknowledged { if let msgId = r.msgId, msgId < first { requeue(id) } }
                events.append(.message(m))
            case .msgResendReq(let ids):
                for msgId in ids { if let id = byMsgId[msgId] { requeue(id) } }
            case .msgsStateReq(let ids):
                let info = ids.map { session.replayWindow.stateByte(of: $0) }
                owed.append(OutgoingBody(.msgsStateInfo(reqMsgId: m.msgId, info: info)))
            case let .msgsAllInfo(ids, info):
                for (msgId, state) in zip(ids, info) {
                    guard let id = byMsgId[msgId] else { continue }
                    switch state & 7 {
                    case 2, 3: requeue(id)
                    case 4: requests[id]?.acknowledged = true
                    default: break
                    }
                }
            case let .msgDetailedInfo(_, answer, _, _), let .msgNewDetailedInfo(answer, _, _):
                // The answer exists: acknowledge it if it arrived, or ask for it.
                if session.replayWindow.contains(answer) {
                    session.scheduleAck(answer)
                } else {
                    owed.append(OutgoingBody(.msgResendReq([answer])))
                }
            default:
                events.append(.message(m))
            }
        }
        return events
    }

    // MARK: Internals

    /// The event for `result`: inflated if gzip_packed, an rpc_error, or the object.
    static func answer(_ id: RequestID, _ result: [UInt8]) -> Event {
        var object = result
        if result.count >= 4, UInt32(result[0]) | UInt32(result[1]) << 8 | UInt32(result[2]) << 16 | UInt32(result[3]) << 24
            == ServiceConstructor.gzipPacked {
            guard case .gzipPacked(let packed)? = try? ServiceMessage(decoding: result) else {
                return .undecodableResult(id, "malformed gzip_packed")
            }
            do {
                object = try Gzip.decompress(packed, maxOutputBytes: maxResultBytes)
            } catch {
                return .undecodableResult(id, "gzip_packed: \(error)")
            }
        }
        if case .rpcError(let e)? = try? ServiceMessage(decoding: object) { return .rpcError(id, e) }
        return .result(id, object)
    }

    /// The requests a notification names: the message itself, or every message of the container.
    private func requestIDs(naming msgId: Int64) -> [RequestID] {
        if let id = byMsgId[msgId] { return [id] }
        return (containers[msgId] ?? []).compactMap { byMsgId[$0] }
    }

    private mutating func requeue(_ id: RequestID, alone: Bool = false) {
        guard var r = requests[id] else { return }
        if let m = r.msgId { byMsgId[m] = nil }
        r.msgId = nil
        r.acknowledged = false
        if alone { r.alone = true }
        requests[id] = r
        if !queue.contains(id) { queue.append(id) }  // makePackets sends in request order
    }

    private mutating func requeueAll() {
        // By number: a new connection sends them in the order they were made.
        for id in requests.keys.sorted() where requests[id]?.msgId != nil { requeue(id) }
    }

    /// Forgets containers none of whose messages is still waiting for an answer.
    private mutating func pruneContainers() {
        guard containers.count > 64 else { return }
        containers = containers.filter { $0.value.contains { byMsgId[$0] != nil } }
    }
}

// MARK: - Snapshot fields (ClientConnection's snapshot, Docs/Snapshots.md §4)

extension RequestLayer {
    /// The most unanswered requests (and owed service messages) a snapshot may hold.
    static let maxSnapshotRequests = 1 << 16
    /// The largest request body a snapshot may hold (an upload part is 512 KiB).
    static let maxSnapshotRequestBytes = 1 << 20

    /// Bytes the fields below take (to size the writer once).
    var snapshotByteEstimate: Int {
        requests.values.reduce(64) { $0 + 48 + $1.body.count } + owed.reduce(0) { $0 + 5 + $1.body.count }
    }

    /// The next request number (uint64), whether requests are held (bool), the bytes received since
    /// the last acks (uint64), the owed service messages (list of body bytes and a content-related
    /// bool), then the unanswered requests in the order a new connection sends them (the queue, then
    /// those that were sent, by number): each its number (uint64), whether it travels alone (bool),
    /// and either (tag 0) its body as bytes or (tag 1) an `auth.bindTempAuthKey`'s expires_at
    /// (int32), nonce (int64) and 24 random bytes (its keys are the connection's).
    func write(to w: inout SnapshotWriter) {
        w.uint64(nextValue)
        w.bool(holdsRequests)
        w.uint64(UInt64(unackedBytes))
        w.list(owed) { w, b in
            w.bytes(b.body)
            w.bool(b.contentRelated)
        }
        // The queue first, then the requests sent, by number (found by index: one pass, no hashing).
        let queued = Set(queue)
        var sent: [(value: UInt64, index: Dictionary<RequestID, Request>.Index)] = []
        sent.reserveCapacity(requests.count)
        var i = requests.startIndex
        while i != requests.endIndex {
            let id = requests[i].key
            if requests[i].value.msgId != nil && !queued.contains(id) { sent.append((id.value, i)) }
            requests.formIndex(after: &i)
        }
        sent.sort { $0.value < $1.value }
        w.uint32(UInt32(queue.count + sent.count))
        for id in queue { if let r = requests[id] { Self.write(r, id: id.value, to: &w) } }
        for e in sent { Self.write(requests[e.index].value, id: e.value, to: &w) }
    }

    private static func write(_ r: Request, id: UInt64, to w: inout SnapshotWriter) {
        w.uint64(id)
        w.bool(r.alone)
        if let b = r.bind {
            w.uint8(1)
            w.int32(b.expiresAt)
            w.int64(b.nonce)
            w.fixed(b.filler)
        } else {
            w.uint8(0)
            w.bytes(r.body)
        }
    }

    /// Whether `id` is a pending `auth.bindTempAuthKey`.
    func isBinding(_ id: RequestID) -> Bool { requests[id]?.bind != nil }

    /// Every request restored is queued, in the order written (it goes out again under a new
    /// msg_id, as after ``requeueUnanswered()``). A binding needs `keys` (permanent, temporary).
    init(reading r: inout SnapshotReader, keys: (AuthKey, AuthKey)?) throws(RampartError) {
        self.init()
        nextValue = try r.uint64()
        holdsRequests = try r.bool("holds requests")
        let unacked = try r.uint64()
        guard unacked <= 1 << 40 else { throw .invalidSnapshot(.invalidField("unacknowledged bytes")) }
        unackedBytes = Int(unacked)
        owed = try r.list("owed messages", max: Self.maxSnapshotRequests, minElementBytes: 5) { (r) throws(RampartError) in
            let body = try r.bytes("owed message", max: Self.maxSnapshotRequestBytes)
            return OutgoingBody(body, contentRelated: try r.bool("content related"))
        }
        let count = Int(try r.uint32())
        guard count <= Self.maxSnapshotRequests, count <= r.remaining / 14 else { throw .invalidSnapshot(.invalidField("requests")) }
        requests.reserveCapacity(count)
        queue.reserveCapacity(count)
        for _ in 0..<count {
            let value = try r.uint64()
            let alone = try r.bool("request alone")
            var request: Request
            switch try r.uint8() {
            case 0:
                request = Request(body: try r.bytes("request body", max: Self.maxSnapshotRequestBytes))
            case 1:
                let expiresAt = try r.int32(), nonce = try r.int64(), filler = try r.fixed(24)
                guard let (permanent, temporary) = keys else { throw .invalidSnapshot(.invalidField("binding without keys")) }
                request = Request(body: [], bind: TempKeyBinding.Request(permanentKey: permanent, temporaryKey: temporary,
                                                                         expiresAt: expiresAt, nonce: nonce, filler: filler))
            default:
                throw .invalidSnapshot(.invalidField("request kind"))
            }
            request.alone = alone
            // Numbers from 1 below the next one, each once (so that a new request never takes a
            // restored one's handle).
            let id = RequestID(value: value)
            guard value >= 1, value < nextValue, requests.updateValue(request, forKey: id) == nil else {
                throw .invalidSnapshot(.invalidField("request number"))
            }
            queue.append(id)
        }
    }
}
