// The loopback test server's reply policy: which service messages it answers and how. The protocol
// mechanics it relies on (the receiver checks, containers, acks, the salt check, the session's first
// msg_id) belong to ``Session``; this type only decides what to say.

import RampartMTProto

/// The standard answers of the loopback test server to what a server ``Session`` received, for one
/// session (it remembers which session_id it has announced with `new_session_created`).
///
/// ```swift
/// var policy = StandardServerReplies()
/// let messages = try session.decrypt(packet, now: now)    // a server session: salt checked too
/// let replies = policy.replies(to: messages, in: &session, uniqueId: rng.next(), now: now)
/// if !replies.isEmpty { send(try session.encrypt(replies, now: now, using: &rng).packet) }
/// ```
public struct StandardServerReplies: Sendable, Hashable {
    /// The session_id whose `new_session_created` has been produced; nil before the first.
    public private(set) var announcedSessionId: Int64?

    /// A policy that has announced no session yet.
    public init() {}

    /// `new_session_created` (Docs/MTProto.md §2.4: the session's first msg_id, the caller's random
    /// `unique_id`, the current salt) when `session` has a session_id this policy has not announced
    /// yet, which it then records; nil otherwise.
    public mutating func newSessionCreated(for session: Session, uniqueId: Int64) -> OutgoingBody? {
        guard let sid = session.sessionId, sid != announcedSessionId else { return nil }
        announcedSessionId = sid
        return OutgoingBody(.newSessionCreated(firstMsgId: session.firstMessageId ?? 0, uniqueId: uniqueId,
                                               serverSalt: session.salts.current))
    }

    /// The answer to one received message, or nil when it gets none:
    /// - `ping` / `ping_delay_disconnect` → `pong` with `msg_id` = the ping's msg_id;
    /// - `get_future_salts num` → `future_salts` with the current salt and the scheduled ones
    ///   (``ServerSalts/announced(at:count:)``: the current one valid for an hour from `now` when it
    ///   has no window), at most `num`;
    /// - `rpc_drop_answer` → `rpc_result` { `rpc_answer_unknown` };
    /// - `destroy_session` → `destroy_session_none`;
    /// - any other content-related message (an RPC, gzip_packed — not unpacked here — or a body
    ///   that does not decode as a service message) → `rpc_result` { `rpc_error` 400
    ///   `METHOD_NOT_SUPPORTED` };
    /// - acks, pongs, `http_wait` and other non-content messages → nil.
    public static func answer(to m: IncomingMessage, salt: Int64, now: Double) -> OutgoingBody? {
        answer(to: m, salts: ServerSalts(current: salt), now: now)
    }

    /// ``answer(to:salt:now:)`` for a server session: `get_future_salts` announces its salt schedule,
    /// and `msgs_state_req` is answered with `msgs_state_info` from its replay window
    /// (``ReplayWindow/stateByte(of:)``).
    public static func answer(to m: IncomingMessage, session: Session, now: Double) -> OutgoingBody? {
        if case .msgsStateReq(let ids)? = try? m.decoded() {
            let info = ids.map { session.replayWindow.stateByte(of: $0) }
            return OutgoingBody(.msgsStateInfo(reqMsgId: m.msgId, info: info), isResponse: true)
        }
        return answer(to: m, salts: session.salts, now: now)
    }

    /// ``answer(to:salt:now:)`` for a server whose salts follow a schedule (`get_future_salts`
    /// announces it).
    public static func answer(to m: IncomingMessage, salts: ServerSalts, now: Double) -> OutgoingBody? {
        let decoded: ServiceMessage
        do {
            decoded = try m.decoded()
        } catch {
            // Not a well-formed service message: for this server, a request it does not implement.
            decoded = .unknown(constructor: m.constructor, body: m.body)
        }
        let unix = now.isNaN ? 0 : Int32(clamping: Int64(Swift.max(0, Swift.min(now, 2_000_000_000))))
        switch decoded {
        case .ping(let id), .pingDelayDisconnect(let id, _):
            return OutgoingBody(.pong(msgId: m.msgId, pingId: id), isResponse: true)
        case .getFutureSalts(let num):
            return OutgoingBody(.futureSalts(reqMsgId: m.msgId, now: unix, salts: salts.announced(at: now, count: Int(num))),
                                isResponse: true)
        case .rpcDropAnswer:
            return OutgoingBody(.rpcResult(reqMsgId: m.msgId, result: ServiceMessage.rpcAnswerUnknown.encoded()), isResponse: true)
        case .destroySession(let id):
            return OutgoingBody(.destroySessionNone(sessionId: id), isResponse: true)
        case .msgsAck:
            return nil
        case .httpWait:
            // HTTP long-poll timing (Docs/MTProto.md §6.8): the transport holds the request; no answer.
            return nil
        case .msgResendReq:
            // This server keeps no sent messages to send again; the request is only acknowledged.
            return nil
        default:
            guard m.isContentRelated else { return nil }
            return OutgoingBody(.rpcResult(reqMsgId: m.msgId, result: ServiceMessage.rpcError(.methodNotSupported).encoded()),
                                isResponse: true)
        }
    }

    /// Everything the server says after `messages` (what `session.decrypt` returned), in order:
    /// `new_session_created` when the session is new (``newSessionCreated(for:uniqueId:)``), the
    /// ``answer(to:salt:now:)`` of each message, and last a `msgs_ack` of the session's pending
    /// content-related ids (taken from `session`). Encrypt the result with
    /// ``Session/encrypt(_:now:using:)`` (one message or a container); it is empty when nothing is owed.
    public mutating func replies(to messages: [IncomingMessage], in session: inout Session, uniqueId: Int64,
                                 now: Double) -> [OutgoingBody] {
        var out: [OutgoingBody] = []
        if let created = newSessionCreated(for: session, uniqueId: uniqueId) { out.append(created) }
        for m in messages {
            if let a = Self.answer(to: m, session: session, now: now) { out.append(a) }
        }
        if let acks = session.takeAckBody() { out.append(OutgoingBody(acks, contentRelated: false)) }
        return out
    }
}
