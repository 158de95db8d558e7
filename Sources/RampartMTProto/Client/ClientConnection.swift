// A sans-I/O MTProto client connection: a transport codec, the auth-key handshake on unencrypted
// messages, then an encrypted session. `rampart mtproto ping` drives it over a socket; the tests
// drive it against the test server (RampartMTProtoServer) in memory.

/// A client connection: bytes in, bytes and events out.
public struct ClientConnection {
    /// Something the server sent.
    public enum Event: Sendable {
        /// The handshake finished; the session is ready.
        case handshakeCompleted(HandshakeResult)
        /// A decrypted message (containers already unpacked).
        case message(IncomingMessage)
        /// A quick acknowledgement (Docs/MTProto.md §1.7).
        case quickAck(UInt32)
        /// A transport error code from the server (−404, −444, …).
        case transportError(Int32)
    }

    public let transport: ClientTransport
    let paddedFraming: Bool
    var handshake: ClientHandshake
    var ids = MessageIDGenerator(role: .client)
    /// The encrypted session, once the handshake has finished.
    public private(set) var session: Session?

    /// - Throws: as ``ClientTransport/init(_:maxPacketLength:using:)``.
    public init<R: RandomNumberGenerator>(transport kind: ClientTransport.Kind, handshake: ClientHandshake.Configuration,
                                          using rng: inout R) throws(MTProtoError) {
        transport = try ClientTransport(kind, using: &rng)
        switch kind {
        case .plain(let f), .obfuscated2(let f, _, _): paddedFraming = f == .paddedIntermediate
        case .fakeTLS: paddedFraming = true
        }
        self.handshake = ClientHandshake(configuration: handshake)
    }

    /// The first bytes to send: the transport's opening and `req_pq_multi`.
    public mutating func start<R: RandomNumberGenerator>(now: Double, using rng: inout R) throws(MTProtoError) -> [UInt8] {
        let body = handshake.start(using: &rng)
        return try transport.encode(UnencryptedMessage.encode(msgId: ids.next(now: now), body: body), using: &rng)
    }

    /// Handles bytes from the server: returns what to send back (handshake steps) and the events.
    public mutating func receive<R: RandomNumberGenerator>(_ bytes: [UInt8], now: Double,
                                                           using rng: inout R) throws(MTProtoError) -> (send: [UInt8], events: [Event]) {
        transport.feed(bytes)
        var out: [UInt8] = []
        var events: [Event] = []
        while let event = try transport.next() {
            switch event {
            case .quickAck(let v): events.append(.quickAck(v))
            case .transportError(let c): events.append(.transportError(c))
            case .packet(let packet, _):
                if var s = session {
                    let trimmed = EncryptedMessage.droppingTransportJunk(packet, padded: paddedFraming)
                    for m in try s.decrypt(trimmed, now: now) { events.append(.message(m)) }
                    session = s
                    continue
                }
                let message = try UnencryptedMessage.decode(packet, allowTrailingBytes: true)
                switch try handshake.receive(message.body, now: Int64(now), using: &rng) {
                case .send(let body):
                    out += try transport.encode(UnencryptedMessage.encode(msgId: ids.next(now: now), body: body), using: &rng)
                case .completed(let result):
                    session = Session(client: result.authKey, sessionId: Int64(bitPattern: rng.next()), salt: result.serverSalt,
                                      timeOffset: Double(result.timeOffset))
                    events.append(.handshakeCompleted(result))
                }
            }
        }
        return (out, events)
    }

    /// Encrypts and frames one message (content-related: an RPC query) and returns the bytes and its
    /// msg_id. Pending acks ride along in a container.
    /// - Throws: ``MTProtoError/handshakeFailed(_:)`` before the handshake has finished.
    public mutating func send<R: RandomNumberGenerator>(_ body: [UInt8], now: Double, quickAck: Bool = false,
                                                        using rng: inout R) throws(MTProtoError) -> (bytes: [UInt8], msgId: Int64) {
        guard var s = session else { throw .handshakeFailed("no session yet") }
        var bodies = [OutgoingBody(body, contentRelated: true)]
        if let acks = s.takeAckBody() { bodies.append(OutgoingBody(acks, contentRelated: false)) }
        let out = try s.encrypt(bodies, now: now, using: &rng)
        let bytes = try transport.encode(out.packet, quickAckRequest: quickAck, using: &rng)
        session = s
        return (bytes, out.innerMsgIds.first ?? out.msgId)
    }
}
