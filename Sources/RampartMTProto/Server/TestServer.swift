// The loopback test server's logic, sans-I/O (spec §8 describes gotd's tgtest, which this follows):
// transport detection per connection, the auth-key handshake on unencrypted messages, then
// encrypted sessions answering the service messages. The `rampart mtproto serve` command owns the
// sockets and feeds bytes in; everything here is deterministic given the clock and the RNG.

/// One connection's handle in a ``TestServer``.
public typealias TestServerConnectionID = Int

/// What the server wants done after it has read bytes from a connection.
public struct TestServerReply: Sendable {
    /// Bytes to write to the connection, in order.
    public var send: [UInt8] = []
    /// Whether to close the connection after writing.
    public var close = false
    /// Log lines (one event each).
    public var log: [String] = []

    public init() {}
}

/// An in-memory MTProto server for tests and interop: handshakes (permanent and temporary keys,
/// RSA_PAD and the legacy padding), then encrypted sessions that answer `ping` with `pong`, send
/// `new_session_created` and acks, answer a wrong salt with `bad_server_salt`, unpack containers, bind temporary keys
/// (`auth.bindTempAuthKey`) and answer every other request with `rpc_error` 400
/// `METHOD_NOT_SUPPORTED`.
///
/// Not thread-safe: one caller drives it (the CLI's poll loop).
public struct TestServer {
    /// Fixed inputs.
    public struct Configuration: Sendable {
        /// The handshake's configuration (RSA keys, DH parameters, DC).
        public var handshake: ServerHandshake.Configuration
        /// Optional MTProxy secret for obfuscated2 connections.
        public var proxySecret: SymmetricKey?
        /// The largest transport packet accepted.
        public var maxPacketLength: Int
        /// Transports accepted, by ``TestServer/transportName(_:)``; nil accepts all.
        public var allowedTransports: Set<String>?

        public init(handshake: ServerHandshake.Configuration, proxySecret: SymmetricKey? = nil,
                    maxPacketLength: Int = 1 << 20) {
            self.handshake = handshake
            self.proxySecret = proxySecret
            self.maxPacketLength = maxPacketLength
        }
    }

    struct Connection {
        let transport: ServerTransport
        var handshake: ServerHandshake
        var ids = MessageIDGenerator(role: .server)
        var packets = 0
    }

    /// A key the server holds, with its session (one per key) and binding state.
    struct KeyState {
        var session: Session
        var expiresAt: Int64?
        /// For a temporary key: the permanent key id it is bound to.
        var boundTo: UInt64?
    }

    public let configuration: Configuration
    private let handshakeTemplate: ServerHandshake
    private var connections: [TestServerConnectionID: Connection] = [:]
    private var keys: [UInt64: KeyState] = [:]

    /// - Throws: as ``ServerHandshake/init(configuration:)``.
    public init(configuration: Configuration) throws(MTProtoError) {
        self.configuration = configuration
        handshakeTemplate = try ServerHandshake(configuration: configuration.handshake)
    }

    /// The number of auth keys created so far (permanent and temporary).
    public var keyCount: Int { keys.count }

    /// The transport names the server knows: `abridged`, `intermediate`, `padded-intermediate`,
    /// `full`, `obfuscated2`.
    public static let transportNames = ["abridged", "intermediate", "padded-intermediate", "full", "obfuscated2"]

    /// The name of a detected transport (one of ``transportNames``).
    public static func transportName(_ d: DetectedTransport) -> String {
        switch d {
        case .obfuscated2: return "obfuscated2"
        case .plain(.abridged): return "abridged"
        case .plain(.intermediate): return "intermediate"
        case .plain(.paddedIntermediate): return "padded-intermediate"
        case .plain(.full): return "full"
        }
    }

    /// Whether the key with this auth_key_id is known, and the permanent key it is bound to.
    public func binding(ofKey id: UInt64) -> UInt64?? { keys[id].map(\.boundTo) }

    /// Registers a new connection.
    public mutating func open(_ id: TestServerConnectionID) {
        connections[id] = Connection(transport: ServerTransport(secret: configuration.proxySecret,
                                                                maxPacketLength: configuration.maxPacketLength),
                                     handshake: handshakeTemplate)
    }

    /// Forgets a connection (its keys and sessions stay).
    public mutating func close(_ id: TestServerConnectionID) { connections[id] = nil }

    /// Handles bytes read from connection `id`. `now` is unix time in seconds.
    public mutating func receive<R: RandomNumberGenerator>(_ bytes: [UInt8], from id: TestServerConnectionID, now: Double,
                                                           using rng: inout R) -> TestServerReply {
        var reply = TestServerReply()
        guard var conn = connections[id] else {
            reply.close = true
            reply.log.append("connection \(id): unknown")
            return reply
        }
        conn.transport.feed(bytes)
        while true {
            let event: TransportEvent?
            do {
                event = try conn.transport.next()
            } catch {
                reply.log.append("connection \(id): transport error \(error), closing")
                reply.close = true
                break
            }
            guard let event else { break }
            if conn.packets == 0, let d = conn.transport.detected {
                let name = TestServer.transportName(d)
                reply.log.append("connection \(id): transport \(name)\(conn.transport.dcId.map { " dc \($0)" } ?? "")")
                if let allowed = configuration.allowedTransports, !allowed.contains(name) {
                    reply.log.append("connection \(id): transport \(name) not enabled, closing")
                    reply.close = true
                    break
                }
            }
            guard case .packet(let packet, let quickAck) = event else {
                reply.log.append("connection \(id): unexpected transport event, closing")
                reply.close = true
                break
            }
            conn.packets += 1
            if handle(packet, quickAck: quickAck, conn: &conn, id: id, now: now, reply: &reply, using: &rng) == false {
                reply.close = true
                break
            }
        }
        connections[id] = reply.close ? nil : conn
        return reply
    }

    /// One transport packet; false means close the connection.
    private mutating func handle<R: RandomNumberGenerator>(_ packet: [UInt8], quickAck: Bool, conn: inout Connection,
                                                           id: TestServerConnectionID, now: Double,
                                                           reply: inout TestServerReply, using rng: inout R) -> Bool {
        guard packet.count >= 8 else {
            reply.log.append("connection \(id): packet of \(packet.count) bytes, closing")
            return false
        }
        var keyId: UInt64 = 0
        for i in 0..<8 { keyId |= UInt64(packet[i]) << (8 * UInt64(i)) }
        if keyId == 0 { return handshake(packet, conn: &conn, id: id, now: now, reply: &reply, using: &rng) }
        guard var state = keys[keyId] else {
            reply.log.append("connection \(id): unknown auth_key_id \(hex64(keyId)), answering -404")
            send(error: -404, conn, &reply, using: &rng)
            return false
        }
        if let e = state.expiresAt, Int64(now) > e {
            keys[keyId] = nil
            reply.log.append("connection \(id): temporary key \(hex64(keyId)) expired, answering -404")
            send(error: -404, conn, &reply, using: &rng)
            return false
        }
        let messages: [IncomingMessage]
        do {
            let trimmed = EncryptedMessage.droppingTransportJunk(packet, padded: conn.transport.framing == .paddedIntermediate)
            messages = try state.session.decrypt(trimmed, now: now)
        } catch {
            reply.log.append("connection \(id): message rejected (\(error)), closing")
            return false
        }
        // Server salt (spec §2.3): a message under a salt that is neither current nor a valid
        // future one gets bad_server_salt (code 48) with the current salt and is not processed; the
        // client adopts the salt and re-sends under a new msg_id.
        if let first = messages.first, !state.session.salts.accepts(first.salt, at: now) {
            var replies: [OutgoingBody] = []
            if state.session.needsNewSessionCreated {
                replies.append(OutgoingBody(state.session.makeNewSessionCreated(uniqueId: Int64(bitPattern: rng.next()))))
            }
            replies.append(OutgoingBody(.badServerSalt(badMsgId: first.containerId ?? first.msgId, badMsgSeqNo: first.seqNo,
                                                       errorCode: 48, newServerSalt: state.session.salts.current)))
            reply.log.append("connection \(id): bad server salt \(hex64(UInt64(bitPattern: first.salt))), answering bad_server_salt")
            let sent = send(replies, session: &state.session, conn, id: id, now: now, reply: &reply, using: &rng)
            keys[keyId] = state
            return sent
        }
        if quickAck, let first = messages.first {
            if let b = try? conn.transport.encodeQuickAck(first.quickAck) { reply.send += b }
        }
        var bodies: [OutgoingBody] = []
        var rest: [IncomingMessage] = []
        for m in messages {
            if m.constructor == HandshakeConstructor.bindTempAuthKey {
                bodies.append(bindTempKey(m, keyId: keyId, state: &state, reply: &reply))
            } else {
                rest.append(m)
            }
        }
        // Standard answers; they include new_session_created (first) and the acks (last, also of
        // bind requests); the bind results go right after new_session_created.
        let startsSession = state.session.needsNewSessionCreated
        var standard = state.session.standardServerReplies(to: rest, uniqueId: Int64(bitPattern: rng.next()), now: now)
        standard.insert(contentsOf: bodies, at: startsSession ? 1 : 0)
        let sent = standard.isEmpty || send(standard, session: &state.session, conn, id: id, now: now, reply: &reply, using: &rng)
        if sent { for m in messages { reply.log.append("connection \(id): \(describe(m))") } }
        keys[keyId] = state
        return sent
    }

    /// Encrypts `bodies` (one message or a container) and frames them; false (logged) on failure.
    private func send<R: RandomNumberGenerator>(_ bodies: [OutgoingBody], session: inout Session, _ conn: Connection,
                                                id: TestServerConnectionID, now: Double, reply: inout TestServerReply,
                                                using rng: inout R) -> Bool {
        do {
            let out = try session.encrypt(bodies, now: now, using: &rng)
            reply.send += try conn.transport.encode(out.packet, using: &rng)
            return true
        } catch {
            reply.log.append("connection \(id): cannot answer (\(error)), closing")
            return false
        }
    }

    private mutating func handshake<R: RandomNumberGenerator>(_ packet: [UInt8], conn: inout Connection,
                                                              id: TestServerConnectionID, now: Double,
                                                              reply: inout TestServerReply, using rng: inout R) -> Bool {
        let message: UnencryptedMessage.Message
        do {
            message = try UnencryptedMessage.decode(packet, allowTrailingBytes: true)
        } catch {
            reply.log.append("connection \(id): bad unencrypted message (\(error)), answering -404")
            send(error: -404, conn, &reply, using: &rng)
            return false
        }
        let step: ServerHandshake.Step
        do {
            step = try conn.handshake.receive(message.body, now: Int64(now), using: &rng)
        } catch {
            let code: Int32 = error == .handshakeFailed(ServerHandshake.dcMismatch) ? -444 : -404
            reply.log.append("connection \(id): handshake refused (\(error)), answering \(code)")
            send(error: code, conn, &reply, using: &rng)
            return false
        }
        let body: [UInt8]
        switch step {
        case .send(let b):
            body = b
        case .failed(let b):
            body = b
            reply.log.append("connection \(id): handshake ended with dh_gen_fail")
            conn.handshake = handshakeTemplate
        case .completed(let result, let b):
            body = b
            let keyId = result.authKey.id
            var session = Session(server: result.authKey, salt: result.serverSalt)
            session.acceptsNewSessions = true
            keys[keyId] = KeyState(session: session, expiresAt: result.expiresIn.map { Int64(now) + Int64($0) }, boundTo: nil)
            reply.log.append("connection \(id): auth key \(hex64(keyId)) created\(result.expiresIn.map { " (temporary, expires in \($0) s)" } ?? "")")
            // A new handshake on this connection may follow (e.g. a temporary key after the permanent one).
            conn.handshake = handshakeTemplate
        }
        let msgId = conn.ids.next(now: now, isResponse: true)
        do {
            reply.send += try conn.transport.encode(UnencryptedMessage.encode(msgId: msgId, body: body), using: &rng)
        } catch {
            reply.log.append("connection \(id): cannot answer (\(error)), closing")
            return false
        }
        return true
    }

    /// `auth.bindTempAuthKey` (spec §5) arriving on the temporary key `keyId`: an `rpc_result` with
    /// `boolTrue`, or an rpc_error 400 `ENCRYPTED_MESSAGE_INVALID`.
    private func bindTempKey(_ m: IncomingMessage, keyId: UInt64, state: inout KeyState,
                             reply: inout TestServerReply) -> OutgoingBody {
        let result: [UInt8]
        do {
            guard state.expiresAt != nil else { throw MTProtoError.handshakeFailed("not a temporary key") }
            guard let sessionId = state.session.sessionId else { throw MTProtoError.handshakeFailed("no session") }
            let binding = try TempKeyBinding.verify(m.body, outerMsgId: m.msgId, temporaryKey: state.session.authKey,
                                                    sessionId: sessionId) { id in
                guard let k = keys[id], k.expiresAt == nil else { return nil }
                return k.session.authKey
            }
            state.boundTo = binding.permanentKeyId
            reply.log.append("temporary key \(hex64(keyId)) bound to permanent key \(hex64(binding.permanentKeyId))")
            var w = TLWriter()
            w.bool(true)
            result = w.bytes
        } catch {
            reply.log.append("auth.bindTempAuthKey refused: \(error)")
            result = ServiceMessage.rpcError(RPCError(code: 400, message: "ENCRYPTED_MESSAGE_INVALID")).encoded()
        }
        return OutgoingBody(ServiceMessage.rpcResult(reqMsgId: m.msgId, result: result), isResponse: true)
    }

    private func send<R: RandomNumberGenerator>(error code: Int32, _ conn: Connection, _ reply: inout TestServerReply,
                                                using rng: inout R) {
        if let b = try? conn.transport.encodeTransportError(code, using: &rng) { reply.send += b }
    }

    private func describe(_ m: IncomingMessage) -> String {
        let name: String
        switch try? m.decoded() {
        case .ping?: name = "ping"
        case .pingDelayDisconnect?: name = "ping_delay_disconnect"
        case .msgsAck?: name = "msgs_ack"
        case .getFutureSalts?: name = "get_future_salts"
        default:
            name = m.constructor == HandshakeConstructor.bindTempAuthKey ? "auth.bindTempAuthKey" : "request #\(String(m.constructor, radix: 16))"
        }
        return "\(name) msg_id \(hex64(UInt64(bitPattern: m.msgId)))"
    }
}

/// 16 lower-case hex digits.
func hex64(_ v: UInt64) -> String {
    let s = String(v, radix: 16)
    return String(repeating: "0", count: 16 - s.count) + s
}
