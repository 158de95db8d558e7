// The service messages of Docs/MTProto.md §2.5 as Swift values, with strict TL encoding and decoding.

/// Constructor ids of the MTProto service messages (Docs/MTProto.md §2.5), as written in TL.
public enum ServiceConstructor {
    public static let msgContainer: UInt32 = 0x73f1_f8dc
    public static let msgCopy: UInt32 = 0xe060_46b2
    public static let gzipPacked: UInt32 = 0x3072_cfa1
    public static let rpcResult: UInt32 = 0xf35c_6d01
    public static let rpcError: UInt32 = 0x2144_ca19
    public static let msgsAck: UInt32 = 0x62d6_b459
    public static let badMsgNotification: UInt32 = 0xa7ef_f811
    public static let badServerSalt: UInt32 = 0xedab_447b
    public static let newSessionCreated: UInt32 = 0x9ec2_0908
    public static let ping: UInt32 = 0x7abe_77ec
    public static let pingDelayDisconnect: UInt32 = 0xf342_7b8c
    public static let pong: UInt32 = 0x3477_73c5
    public static let getFutureSalts: UInt32 = 0xb921_bd04
    public static let futureSalts: UInt32 = 0xae50_0895
    public static let futureSalt: UInt32 = 0x0949_d9dc
    public static let rpcDropAnswer: UInt32 = 0x58e4_a740
    public static let rpcAnswerUnknown: UInt32 = 0x5e2a_d36e
    public static let rpcAnswerDroppedRunning: UInt32 = 0xcd78_e586
    public static let rpcAnswerDropped: UInt32 = 0xa43a_d8b7
    public static let destroySession: UInt32 = 0xe751_2126
    public static let destroySessionOk: UInt32 = 0xe220_45fc
    public static let destroySessionNone: UInt32 = 0x62d3_50c9
    public static let msgsStateReq: UInt32 = 0xda69_fb52
    public static let msgsStateInfo: UInt32 = 0x04de_b57d
    public static let msgResendReq: UInt32 = 0x7d86_1a08
    public static let msgsAllInfo: UInt32 = 0x8cc0_d131
    public static let msgDetailedInfo: UInt32 = 0x276d_3ec6
    public static let msgNewDetailedInfo: UInt32 = 0x809d_b6df
    public static let httpWait: UInt32 = 0x9299_359f
}

/// `future_salt#0949d9dc valid_since:int valid_until:int salt:long` (Docs/MTProto.md §2.3, §2.5).
public struct FutureSalt: Sendable, Hashable {
    /// Unix time from which the salt is valid.
    public var validSince: Int32
    /// Unix time until which the salt is valid.
    public var validUntil: Int32
    /// The salt.
    public var salt: Int64

    public init(validSince: Int32, validUntil: Int32, salt: Int64) {
        self.validSince = validSince
        self.validUntil = validUntil
        self.salt = salt
    }
}

/// `rpc_error#2144ca19 error_code:int error_message:string`, the error result of an RPC.
public struct RPCError: Sendable, Hashable, Error, CustomStringConvertible {
    /// `error_code` (e.g. 400, 401, 420).
    public var code: Int32
    /// `error_message` (e.g. `METHOD_NOT_SUPPORTED`, `FLOOD_WAIT_30`).
    public var message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// `RPC error 400 METHOD_NOT_SUPPORTED`.
    public var description: String { "RPC error \(code) \(message)" }

    /// What the loopback server answers to an RPC it does not implement: 400 `METHOD_NOT_SUPPORTED`.
    public static let methodNotSupported = RPCError(code: 400, message: "METHOD_NOT_SUPPORTED")
}

/// A message of the MTProto service layer (Docs/MTProto.md §2.5), or any other TL object as ``unknown(constructor:body:)``.
///
/// ```swift
/// let m = try ServiceMessage(decoding: body)       // strict: known constructors must fill `body`
/// if case .ping(let id) = m { reply = ServiceMessage.pong(msgId: incoming.msgId, pingId: id).encoded() }
/// ```
///
/// Decoding never traps: truncated or malformed bodies throw ``MTProtoError`` (``MTProtoError/truncated``,
/// ``MTProtoError/malformedTL(_:)``, ``MTProtoError/trailingBytes``, ``MTProtoError/invalidServiceMessage(_:)``).
public enum ServiceMessage: Sendable, Hashable {
    /// `msg_container#73f1f8dc messages:vector<%message>` (see ``MessageContainer``).
    case container([ContainerMessage])
    /// `new_session_created#9ec20908 first_msg_id:long unique_id:long server_salt:long`.
    case newSessionCreated(firstMsgId: Int64, uniqueId: Int64, serverSalt: Int64)
    /// `bad_msg_notification#a7eff811 bad_msg_id:long bad_msg_seqno:int error_code:int`.
    case badMsgNotification(badMsgId: Int64, badMsgSeqNo: Int32, errorCode: Int32)
    /// `bad_server_salt#edab447b bad_msg_id:long bad_msg_seqno:int error_code:int new_server_salt:long` (code 48).
    case badServerSalt(badMsgId: Int64, badMsgSeqNo: Int32, errorCode: Int32, newServerSalt: Int64)
    /// `ping#7abe77ec ping_id:long`.
    case ping(pingId: Int64)
    /// `ping_delay_disconnect#f3427b8c ping_id:long disconnect_delay:int`.
    case pingDelayDisconnect(pingId: Int64, disconnectDelay: Int32)
    /// `pong#347773c5 msg_id:long ping_id:long`; `msgId` is the id of the ping message.
    case pong(msgId: Int64, pingId: Int64)
    /// `rpc_result#f35c6d01 req_msg_id:long result:Object`; `result` is the serialized object
    /// (opaque here: decode it with ``ServiceMessage/init(decoding:)`` for rpc_error or gzip_packed).
    case rpcResult(reqMsgId: Int64, result: [UInt8])
    /// `rpc_error#2144ca19` (normally inside an rpc_result).
    case rpcError(RPCError)
    /// `msgs_ack#62d6b459 msg_ids:Vector<long>` (at most 8192 ids).
    case msgsAck([Int64])
    /// `get_future_salts#b921bd04 num:int`.
    case getFutureSalts(num: Int32)
    /// `future_salts#ae500895 req_msg_id:long now:int salts:vector<future_salt>` (bare vector).
    case futureSalts(reqMsgId: Int64, now: Int32, salts: [FutureSalt])
    /// `gzip_packed#3072cfa1 packed_data:bytes`; the gzip stream is kept opaque.
    case gzipPacked([UInt8])
    /// `destroy_session#e7512126 session_id:long`.
    case destroySession(sessionId: Int64)
    /// `destroy_session_ok#e22045fc session_id:long`.
    case destroySessionOk(sessionId: Int64)
    /// `destroy_session_none#62d350c9 session_id:long`.
    case destroySessionNone(sessionId: Int64)
    /// `rpc_drop_answer#58e4a740 req_msg_id:long`.
    case rpcDropAnswer(reqMsgId: Int64)
    /// `rpc_answer_unknown#5e2ad36e`.
    case rpcAnswerUnknown
    /// `rpc_answer_dropped_running#cd78e586`.
    case rpcAnswerDroppedRunning
    /// `rpc_answer_dropped#a43ad8b7 msg_id:long seq_no:int bytes:int`.
    case rpcAnswerDropped(msgId: Int64, seqNo: Int32, bytes: Int32)
    /// `msgs_state_req#da69fb52 msg_ids:Vector<long>`.
    case msgsStateReq([Int64])
    /// `msgs_state_info#04deb57d req_msg_id:long info:bytes`.
    case msgsStateInfo(reqMsgId: Int64, info: [UInt8])
    /// `msg_resend_req#7d861a08 msg_ids:Vector<long>`.
    case msgResendReq([Int64])
    /// `msgs_all_info#8cc0d131 msg_ids:Vector<long> info:bytes`: the states of the listed messages
    /// (one ``msgs_state_info`` byte each), volunteered.
    case msgsAllInfo(msgIds: [Int64], info: [UInt8])
    /// `msg_detailed_info#276d3ec6 msg_id:long answer_msg_id:long bytes:int status:int`: the answer to
    /// `msg_id` exists as `answer_msg_id` (`bytes` long).
    case msgDetailedInfo(msgId: Int64, answerMsgId: Int64, bytes: Int32, status: Int32)
    /// `msg_new_detailed_info#809db6df answer_msg_id:long bytes:int status:int`: the same for a message
    /// the receiver did not send (a server-initiated one).
    case msgNewDetailedInfo(answerMsgId: Int64, bytes: Int32, status: Int32)
    /// `http_wait#9299359f max_delay:int wait_after:int max_wait:int` (HTTP only, Docs/MTProto.md §6.8):
    /// how long, in milliseconds, the server may hold the HTTP request that carries it.
    case httpWait(maxDelay: Int32, waitAfter: Int32, maxWait: Int32)
    /// Any other object (an RPC query or result): its constructor id and the whole body, constructor included.
    case unknown(constructor: UInt32, body: [UInt8])

    /// At most this many ids in msgs_ack, msgs_state_req and msg_resend_req (Docs/MTProto.md §2.5).
    public static let maxAckIds = 8192
    /// At most this many salts in future_salts (get_future_salts asks for 1...64).
    public static let maxFutureSalts = 64
    /// Longest rpc_error message accepted.
    public static let maxErrorMessageLength = 4096

    /// Decodes a TL body. Known constructors must fill `body` exactly; anything else becomes
    /// ``unknown(constructor:body:)``.
    public init(decoding body: [UInt8]) throws(MTProtoError) {
        var r = TLReader(body)
        let id = try r.constructor()
        typealias C = ServiceConstructor
        switch id {
        case C.msgContainer:
            self = .container(try MessageContainer.decode(body, containerMsgId: nil))
            return
        case C.newSessionCreated:
            self = .newSessionCreated(firstMsgId: try r.int64(), uniqueId: try r.int64(), serverSalt: try r.int64())
        case C.badMsgNotification:
            self = .badMsgNotification(badMsgId: try r.int64(), badMsgSeqNo: try r.int32(), errorCode: try r.int32())
        case C.badServerSalt:
            self = .badServerSalt(badMsgId: try r.int64(), badMsgSeqNo: try r.int32(), errorCode: try r.int32(),
                                  newServerSalt: try r.int64())
        case C.ping:
            self = .ping(pingId: try r.int64())
        case C.pingDelayDisconnect:
            self = .pingDelayDisconnect(pingId: try r.int64(), disconnectDelay: try r.int32())
        case C.pong:
            self = .pong(msgId: try r.int64(), pingId: try r.int64())
        case C.rpcResult:
            let req = try r.int64()
            guard r.remaining >= 4 else { throw .truncated }
            self = .rpcResult(reqMsgId: req, result: Array(r.rest))
            return
        case C.rpcError:
            self = .rpcError(RPCError(code: try r.int32(), message: try r.string(maxLength: ServiceMessage.maxErrorMessageLength)))
        case C.msgsAck:
            self = .msgsAck(try r.vectorOfInt64(max: ServiceMessage.maxAckIds))
        case C.getFutureSalts:
            self = .getFutureSalts(num: try r.int32())
        case C.futureSalts:
            let req = try r.int64(), now = try r.int32()
            let n = try r.vectorCount(boxed: false, max: ServiceMessage.maxFutureSalts, minElementSize: 20)
            var salts: [FutureSalt] = []
            for _ in 0..<n {
                try r.expect(C.futureSalt)
                salts.append(FutureSalt(validSince: try r.int32(), validUntil: try r.int32(), salt: try r.int64()))
            }
            self = .futureSalts(reqMsgId: req, now: now, salts: salts)
        case C.gzipPacked:
            self = .gzipPacked(try r.tlBytes(maxLength: EncryptedMessage.maxBodyLength))
        case C.destroySession:
            self = .destroySession(sessionId: try r.int64())
        case C.destroySessionOk:
            self = .destroySessionOk(sessionId: try r.int64())
        case C.destroySessionNone:
            self = .destroySessionNone(sessionId: try r.int64())
        case C.rpcDropAnswer:
            self = .rpcDropAnswer(reqMsgId: try r.int64())
        case C.httpWait:
            self = .httpWait(maxDelay: try r.int32(), waitAfter: try r.int32(), maxWait: try r.int32())
        case C.rpcAnswerUnknown:
            self = .rpcAnswerUnknown
        case C.rpcAnswerDroppedRunning:
            self = .rpcAnswerDroppedRunning
        case C.rpcAnswerDropped:
            self = .rpcAnswerDropped(msgId: try r.int64(), seqNo: try r.int32(), bytes: try r.int32())
        case C.msgsStateReq:
            self = .msgsStateReq(try r.vectorOfInt64(max: ServiceMessage.maxAckIds))
        case C.msgsStateInfo:
            self = .msgsStateInfo(reqMsgId: try r.int64(), info: try r.tlBytes(maxLength: ServiceMessage.maxAckIds))
        case C.msgResendReq:
            self = .msgResendReq(try r.vectorOfInt64(max: ServiceMessage.maxAckIds))
        case C.msgsAllInfo:
            self = .msgsAllInfo(msgIds: try r.vectorOfInt64(max: ServiceMessage.maxAckIds),
                                info: try r.tlBytes(maxLength: ServiceMessage.maxAckIds))
        case C.msgDetailedInfo:
            self = .msgDetailedInfo(msgId: try r.int64(), answerMsgId: try r.int64(), bytes: try r.int32(), status: try r.int32())
        case C.msgNewDetailedInfo:
            self = .msgNewDetailedInfo(answerMsgId: try r.int64(), bytes: try r.int32(), status: try r.int32())
        default:
            self = .unknown(constructor: id, body: body)
            return
        }
        try r.finish()
    }

    /// The TL serialization.
    ///
    /// Values outside the protocol's limits (more than 8192 ack ids, more than 1024 container
    /// messages, an rpc_result with an empty result) are serialized as given; ``init(decoding:)``
    /// of the peer will refuse them.
    public func encoded() -> [UInt8] {
        var w = TLWriter()
        typealias C = ServiceConstructor
        switch self {
        case .container(let messages):
            return MessageContainer.encode(messages)
        case let .newSessionCreated(first, unique, salt):
            w.constructor(C.newSessionCreated); w.int64(first); w.int64(unique); w.int64(salt)
        case let .badMsgNotification(id, seq, code):
            w.constructor(C.badMsgNotification); w.int64(id); w.int32(seq); w.int32(code)
        case let .badServerSalt(id, seq, code, salt):
            w.constructor(C.badServerSalt); w.int64(id); w.int32(seq); w.int32(code); w.int64(salt)
        case .ping(let id):
            w.constructor(C.ping); w.int64(id)
        case let .pingDelayDisconnect(id, delay):
            w.constructor(C.pingDelayDisconnect); w.int64(id); w.int32(delay)
        case let .pong(msgId, pingId):
            w.constructor(C.pong); w.int64(msgId); w.int64(pingId)
        case let .rpcResult(req, result):
            w = TLWriter(capacity: 12 + result.count)
            w.constructor(C.rpcResult); w.int64(req); w.raw(result)
        case .rpcError(let e):
            w.constructor(C.rpcError); w.int32(e.code); w.string(e.message)
        case .msgsAck(let ids):
            w = TLWriter(capacity: 12 + 8 * ids.count)
            w.constructor(C.msgsAck); w.vectorOfInt64(ids)
        case .getFutureSalts(let n):
            w.constructor(C.getFutureSalts); w.int32(n)
        case let .futureSalts(req, now, salts):
            w.constructor(C.futureSalts); w.int64(req); w.int32(now)
            w.int32(Int32(truncatingIfNeeded: salts.count))
            for s in salts {
                w.constructor(C.futureSalt); w.int32(s.validSince); w.int32(s.validUntil); w.int64(s.salt)
            }
        case .gzipPacked(let data):
            w = TLWriter(capacity: 8 + data.count)
            w.constructor(C.gzipPacked); w.tlBytes(data)
        case .destroySession(let id):
            w.constructor(C.destroySession); w.int64(id)
        case .destroySessionOk(let id):
            w.constructor(C.destroySessionOk); w.int64(id)
        case .destroySessionNone(let id):
            w.constructor(C.destroySessionNone); w.int64(id)
        case .rpcDropAnswer(let id):
            w.constructor(C.rpcDropAnswer); w.int64(id)
        case let .httpWait(maxDelay, waitAfter, maxWait):
            w.constructor(C.httpWait); w.int32(maxDelay); w.int32(waitAfter); w.int32(maxWait)
        case .rpcAnswerUnknown:
            w.constructor(C.rpcAnswerUnknown)
        case .rpcAnswerDroppedRunning:
            w.constructor(C.rpcAnswerDroppedRunning)
        case let .rpcAnswerDropped(id, seq, bytes):
            w.constructor(C.rpcAnswerDropped); w.int64(id); w.int32(seq); w.int32(bytes)
        case .msgsStateReq(let ids):
            w.constructor(C.msgsStateReq); w.vectorOfInt64(ids)
        case let .msgsStateInfo(req, info):
            w.constructor(C.msgsStateInfo); w.int64(req); w.tlBytes(info)
        case .msgResendReq(let ids):
            w.constructor(C.msgResendReq); w.vectorOfInt64(ids)
        case let .msgsAllInfo(ids, info):
            w.constructor(C.msgsAllInfo); w.vectorOfInt64(ids); w.tlBytes(info)
        case let .msgDetailedInfo(id, answer, bytes, status):
            w.constructor(C.msgDetailedInfo); w.int64(id); w.int64(answer); w.int32(bytes); w.int32(status)
        case let .msgNewDetailedInfo(answer, bytes, status):
            w.constructor(C.msgNewDetailedInfo); w.int64(answer); w.int32(bytes); w.int32(status)
        case .unknown(_, let body):
            return body
        }
        return w.bytes
    }

    /// Whether a message with this body must be content-related (odd seq_no) per Docs/MTProto.md §2.2:
    /// false for msgs_ack, msg_container, msg_copy, gzip_packed, pong and the other replies that
    /// need no acknowledgement; true for queries (ping, get_future_salts, destroy_session, any
    /// RPC) and for new_session_created, rpc_result and the notifications a client must ack.
    public var isContentRelated: Bool {
        switch self {
        case .container, .msgsAck, .pong, .gzipPacked, .msgsStateInfo: return false
        case .msgsAllInfo, .msgDetailedInfo, .msgNewDetailedInfo: return false
        case .rpcAnswerUnknown, .rpcAnswerDroppedRunning, .rpcAnswerDropped: return false
        case .destroySessionOk, .destroySessionNone: return false
        case .httpWait: return false  // "a special service query not requiring an acknowledgement"
        case .badMsgNotification, .badServerSalt: return false
        default: return true
        }
    }
}

/// One message inside a container: the bare `message msg_id:long seqno:int bytes:int body:Object`.
public struct ContainerMessage: Sendable, Hashable {
    /// The inner `msg_id`.
    public var msgId: Int64
    /// The inner `seqno`.
    public var seqNo: Int32
    /// The inner body (its length is the `bytes` field).
    public var body: [UInt8]

    public init(msgId: Int64, seqNo: Int32, body: [UInt8]) {
        self.msgId = msgId
        self.seqNo = seqNo
        self.body = body
    }
}

/// `msg_container#73f1f8dc messages:vector<%message>` (Docs/MTProto.md §2.5): a bare vector (count, no
/// `vector` constructor) of at most 1024 messages, no nesting, every inner msg_id below the
/// container's own id. Empty containers are legal.
public enum MessageContainer {
    /// At most this many messages per container.
    public static let maxMessages = 1024

    /// Serializes `messages` into a container body.
    public static func encode(_ messages: [ContainerMessage]) -> [UInt8] {
        var w = TLWriter(capacity: 8 + messages.reduce(0) { $0 + 16 + $1.body.count })
        w.constructor(ServiceConstructor.msgContainer)
        w.int32(Int32(truncatingIfNeeded: messages.count))
        for m in messages {
            w.int64(m.msgId)
            w.int32(m.seqNo)
            w.int32(Int32(truncatingIfNeeded: m.body.count))
            w.raw(m.body)
        }
        return w.bytes
    }

    /// Decodes a container body strictly.
    ///
    /// - Parameter containerMsgId: the container's own msg_id; when given, every inner id must be
    ///   strictly below it.
    /// - Throws: TL errors for truncated or trailing data; ``MTProtoError/invalidServiceMessage(_:)``
    ///   for a count above 1024, an inner length that is negative, not a multiple of 4 or below 4,
    ///   a nested container, or an inner id not below the container's.
    public static func decode(_ body: [UInt8], containerMsgId: Int64?) throws(MTProtoError) -> [ContainerMessage] {
        var r = TLReader(body)
        try r.expect(ServiceConstructor.msgContainer)
        let count = Int(try r.int32())
        guard count >= 0, count <= maxMessages else { throw .invalidServiceMessage("container with \(count) messages") }
        guard count <= r.remaining / 16 else { throw .truncated }
        var out: [ContainerMessage] = []
        out.reserveCapacity(count)
        for _ in 0..<count {
            let id = try r.int64(), seq = try r.int32(), n = Int(try r.int32())
            guard n >= 4, n % 4 == 0 else { throw .invalidServiceMessage("inner message length \(n)") }
            let inner = try r.raw(n)
            if let c = containerMsgId, id >= c { throw .invalidServiceMessage("inner msg_id not below the container's") }
            if leadingConstructor(inner) == ServiceConstructor.msgContainer { throw .invalidServiceMessage("nested container") }
            out.append(ContainerMessage(msgId: id, seqNo: seq, body: inner))
        }
        try r.finish()
        return out
    }
}

/// The TL constructor at the start of a body (0 when the body is shorter than 4 bytes).
func leadingConstructor(_ body: [UInt8]) -> UInt32 { body.count >= 4 ? readLE32(body, 0) : 0 }
