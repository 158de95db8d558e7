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
        /// What the request layer made of the messages: answers and errors routed to their
        /// requests, a session that started over. (Every message is also reported as ``message(_:)``.)
        case request(RequestLayer.Event)
    }

    public let transport: ClientTransport
    let paddedFraming: Bool
    var handshake: ClientHandshake
    var ids = MessageIDGenerator(role: .client)
    /// The encrypted session, once the handshake has finished.
    public private(set) var session: Session?
    /// The requests in flight (Docs/MTProto.md §2.6): ``send(_:now:quickAck:using:)`` and
    /// ``request(_:now:using:)`` queue through it, ``receive(_:now:using:)`` routes answers and
    /// returns the re-sends it asks for.
    public private(set) var requests = RequestLayer()

    /// - Throws: as ``ClientTransport/init(_:maxPacketLength:using:)``.
    public init<R: RandomNumberGenerator>(transport kind: ClientTransport.Kind, handshake: ClientHandshake.Configuration,
                                          using rng: inout R) throws(MTProtoError) {
        transport = try ClientTransport(kind, using: &rng)
        switch kind {
        case .plain(let f), .obfuscated2(let f, _, _): paddedFraming = f == .paddedIntermediate
        case .fakeTLS: paddedFraming = true
        case .http: paddedFraming = false
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
                    let messages = try s.decrypt(trimmed, now: now)
                    for m in messages { events.append(.message(m)) }
                    for e in requests.receive(messages, session: &s, using: &rng) {
                        if case .message = e { continue }
                        events.append(.request(e))
                    }
                    // Re-sends, owed answers and acks that are due go out at once.
                    for p in try requests.makePackets(session: &s, now: now, using: &rng) {
                        out += try transport.encode(p.packet, using: &rng)
                    }
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

    /// Queues one RPC query in ``requests`` and encrypts and frames what is due (the query, with
    /// pending acks riding along in a container). Returns the bytes and the request's handle; its
    /// answer arrives as ``Event/request(_:)``.
    /// - Throws: ``MTProtoError/handshakeFailed(_:)`` before the handshake has finished.
    public mutating func request<R: RandomNumberGenerator>(_ body: [UInt8], now: Double, quickAck: Bool = false,
                                                           using rng: inout R) throws(MTProtoError) -> (bytes: [UInt8], id: RequestLayer.RequestID) {
        guard var s = session else { throw .handshakeFailed("no session yet") }
        var layer = requests
        let id = layer.enqueue(body)
        var bytes: [UInt8] = []
        for p in try layer.makePackets(session: &s, now: now, using: &rng) {
            bytes += try transport.encode(p.packet, quickAckRequest: quickAck, using: &rng)
        }
        session = s
        requests = layer
        return (bytes, id)
    }

    /// ``request(_:now:quickAck:using:)`` returning the msg_id the query went out under.
    public mutating func send<R: RandomNumberGenerator>(_ body: [UInt8], now: Double, quickAck: Bool = false,
                                                        using rng: inout R) throws(MTProtoError) -> (bytes: [UInt8], msgId: Int64) {
        let (bytes, id) = try request(body, now: now, quickAck: quickAck, using: &rng)
        return (bytes, requests.msgId(of: id) ?? 0)
    }

    /// Cancels a request (``RequestLayer/cancel(_:)``) and returns the bytes to send (its
    /// `rpc_drop_answer`, if it was sent).
    public mutating func cancel<R: RandomNumberGenerator>(_ id: RequestLayer.RequestID, now: Double,
                                                          using rng: inout R) throws(MTProtoError) -> [UInt8] {
        guard var s = session else { return [] }
        var layer = requests
        guard layer.cancel(id) else { return [] }
        var bytes: [UInt8] = []
        for p in try layer.makePackets(session: &s, now: now, using: &rng) { bytes += try transport.encode(p.packet, using: &rng) }
        session = s
        requests = layer
        return bytes
    }
}
