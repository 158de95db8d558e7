// A sans-I/O MTProto client connection: a transport codec, the auth-key handshake on unencrypted
// messages, then an encrypted session; with a permanent key given, temporary keys as a lifecycle
// (Docs/MTProto.md §5.1): bound automatically, rotated before they expire, made again when the server
// has lost one. `rampart mtproto ping` drives it over a socket; the tests drive it against the test
// server (RampartMTProtoServer) in memory.

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
        /// The temporary key was bound to ``permanentKey`` (`auth.bindTempAuthKey` answered true):
        /// the requests held until then go out with the bytes of the same call.
        case temporaryKeyBound(expiresAt: Int32)
        /// The server no longer knows the key in use (transport error −404 under it: a temporary key
        /// that expired or was lost, or a forgotten key). The session is dropped and the unanswered
        /// requests wait; the server closes the connection after −404, so open a new one and call
        /// ``reconnect(now:using:)``, which makes (and binds) a new key first.
        case keyLost
    }

    /// The transport this connection was created with (``reconnect(now:using:)`` opens another of it).
    public let transportKind: ClientTransport.Kind
    /// The transport codec of the current connection.
    public private(set) var transport: ClientTransport
    let paddedFraming: Bool
    let handshakeConfiguration: ClientHandshake.Configuration
    var handshake: ClientHandshake
    /// Whether a handshake is under way (the first one, or a new key while the old one still serves).
    public private(set) var handshakeInProgress = false
    var ids = MessageIDGenerator(role: .client)
    /// The permanent key every temporary key is bound to (perfect forward secrecy, Docs/MTProto.md §5):
    /// with one, the handshake makes temporary keys and each is bound before anything else is sent
    /// under it. nil: the handshake's key is used as it is.
    public let permanentKey: AuthKey?
    /// How long before a temporary key's expiry ``tick(now:using:)`` starts the next one (seconds;
    /// default 60, at most half the key's lifetime).
    public var rotationMargin: Double = 60
    /// When the key in use expires (local clock, unix seconds); nil for a permanent key.
    public private(set) var keyExpiresAt: Double?
    /// The pending `auth.bindTempAuthKey`, if one is in flight.
    var bindRequest: RequestLayer.RequestID?
    /// Temporary keys made, bound and lost over this object's life.
    public private(set) var keysMade = 0, keysBound = 0, keysLost = 0
    /// Packets under an auth key other than the current one (a replaced key's late answers), ignored.
    public private(set) var ignoredPackets = 0
    /// Packets under the current key that the session refused (``MTProtoError/rejectedMessage``: a
    /// duplicate, a replay, a failed check), dropped without ending the connection.
    public private(set) var rejectedPackets = 0
    /// The encrypted session, once the handshake has finished.
    public private(set) var session: Session?
    /// The requests in flight (Docs/MTProto.md §2.6): ``send(_:now:quickAck:using:)`` and
    /// ``request(_:now:using:)`` queue through it, ``receive(_:now:using:)`` routes answers and
    /// returns the re-sends it asks for.
    public private(set) var requests = RequestLayer()

    /// - Parameters:
    ///   - permanentKey: bind every key the handshake makes to this one (the handshake's mode must
    ///     then be ``ClientHandshake/Mode/temporary(expiresIn:)``).
    /// - Throws: as ``ClientTransport/init(_:maxPacketLength:using:)``; ``MTProtoError/handshakeFailed(_:)``
    ///   for a permanent key with a permanent-key handshake.
    public init<R: RandomNumberGenerator>(transport kind: ClientTransport.Kind, handshake: ClientHandshake.Configuration,
                                          permanentKey: AuthKey? = nil, using rng: inout R) throws(MTProtoError) {
        if permanentKey != nil, case .permanent = handshake.mode {
            throw .handshakeFailed("a permanent key binds temporary keys: the handshake must make temporary ones")
        }
        transportKind = kind
        transport = try ClientTransport(kind, using: &rng)
        self.permanentKey = permanentKey
        handshakeConfiguration = handshake
        switch kind {
        case .plain(let f), .obfuscated2(let f, _, _): paddedFraming = f == .paddedIntermediate
        case .fakeTLS: paddedFraming = true
        case .http: paddedFraming = false
        }
        self.handshake = ClientHandshake(configuration: handshake)
    }

    /// The first bytes to send: the transport's opening and `req_pq_multi`.
    public mutating func start<R: RandomNumberGenerator>(now: Double, using rng: inout R) throws(MTProtoError) -> [UInt8] {
        try startHandshake(now: now, using: &rng)
    }

    private mutating func startHandshake<R: RandomNumberGenerator>(now: Double, using rng: inout R) throws(MTProtoError) -> [UInt8] {
        handshake = ClientHandshake(configuration: handshakeConfiguration)
        handshakeInProgress = true
        let body = handshake.start(using: &rng)
        return try transport.encode(UnencryptedMessage.encode(msgId: ids.next(now: now), body: body), using: &rng)
    }

    /// What is due at `now` without anything received: a new temporary key when the current one
    /// expires within ``rotationMargin`` (its handshake runs on this connection while the old key
    /// keeps serving; the new key replaces it once bound, and the unanswered requests go again under
    /// it), and acks that are due. Call it now and then (every few seconds).
    public mutating func tick<R: RandomNumberGenerator>(now: Double, using rng: inout R) throws(MTProtoError) -> [UInt8] {
        var out: [UInt8] = []
        if let expiry = keyExpiresAt, session != nil, !handshakeInProgress,
           now >= expiry - rotationMargin {
            out += try startHandshake(now: now, using: &rng)
        }
        if var s = session, requests.acksDue(in: s) {
            out += try pack(&s, now: now, using: &rng)
            session = s
        }
        return out
    }

    /// Starts over on a new connection of the same transport (after the server closed the old one,
    /// after ``Event/keyLost``, or after ``receive(_:now:using:)`` threw): returns the first bytes for it. Without a key, a new handshake
    /// (and, with ``permanentKey``, its binding); with one, the unanswered requests again, under new
    /// msg_ids (what was sent on the old connection may never be answered).
    public mutating func reconnect<R: RandomNumberGenerator>(now: Double, using rng: inout R) throws(MTProtoError) -> [UInt8] {
        transport = try ClientTransport(transportKind, using: &rng)
        let opening = transport.takeOpening()
        guard var s = session else { return opening + (try startHandshake(now: now, using: &rng)) }
        // A new key's handshake on the old connection is abandoned; ``tick(now:using:)`` starts it again.
        handshakeInProgress = false
        requests.requeueUnanswered()
        let out = try pack(&s, now: now, using: &rng)
        session = s
        return opening + out
    }

    /// Encrypts and frames what the request layer has due.
    private mutating func pack<R: RandomNumberGenerator>(_ s: inout Session, now: Double, using rng: inout R) throws(MTProtoError) -> [UInt8] {
        var out: [UInt8] = []
        for p in try requests.makePackets(session: &s, now: now, using: &rng) { out += try transport.encode(p.packet, using: &rng) }
        return out
    }

    /// The key in use is gone: drop the session, keep the requests for the next key.
    private mutating func loseKey() {
        session = nil
        keyExpiresAt = nil
        bindRequest = nil
        handshakeInProgress = false
        keysLost += 1
        requests.requeueUnanswered()
        requests.holdsRequests = permanentKey != nil
    }

    /// Handles bytes from the server: returns what to send back (handshake steps, re-sends, acks,
    /// the binding of a new key and the requests it was holding) and the events.
    /// - Throws: the transport's and the session's errors; ``MTProtoError/handshakeFailed(_:)`` when
    ///   the server refuses to bind a temporary key.
    public mutating func receive<R: RandomNumberGenerator>(_ bytes: [UInt8], now: Double,
                                                           using rng: inout R) throws(MTProtoError) -> (send: [UInt8], events: [Event]) {
        transport.feed(bytes)
        var out: [UInt8] = []
        var events: [Event] = []
        while let event = try transport.next() {
            switch event {
            case .quickAck(let v): events.append(.quickAck(v))
            case .transportError(let c):
                events.append(.transportError(c))
                if c == -404, session != nil || handshakeInProgress {
                    loseKey()
                    events.append(.keyLost)
                }
            case .packet(let packet, _):
                let keyId = EncryptedMessage.authKeyId(of: packet)
                if var s = session, keyId != 0 {
                    guard keyId == s.authKey.id else {
                        ignoredPackets += 1  // a replaced key's late answer: its requests went again
                        continue
                    }
                    let trimmed = EncryptedMessage.droppingTransportJunk(packet, padded: paddedFraming)
                    let messages: [IncomingMessage]
                    do {
                        messages = try s.decrypt(trimmed, now: now)
                    } catch .rejectedMessage {
                        // A duplicate, a replay or a packet that fails the checks: dropped, nothing
                        // released, the connection goes on (as MtProtoKit drops what it cannot accept).
                        rejectedPackets += 1
                        continue
                    }
                    for m in messages { events.append(.message(m)) }
                    for e in requests.receive(messages, session: &s, using: &rng) {
                        if case .message = e { continue }
                        if let id = bindRequest, try bindAnswered(e, id: id, now: now) {
                            bindRequest = nil
                            keysBound += 1
                            requests.holdsRequests = false
                            events.append(.temporaryKeyBound(expiresAt: Int32(clamping: Int64(s.messageIds.serverTime(at: now)
                                + (keyExpiresAt ?? now) - now))))
                            continue
                        }
                        events.append(.request(e))
                    }
                    // Re-sends, owed answers, acks that are due, requests a binding released.
                    out += try pack(&s, now: now, using: &rng)
                    session = s
                    continue
                }
                guard handshakeInProgress else {
                    ignoredPackets += 1
                    continue
                }
                let message = try UnencryptedMessage.decode(packet, allowTrailingBytes: true)
                switch try handshake.receive(message.body, now: Int64(now), using: &rng) {
                case .send(let body):
                    out += try transport.encode(UnencryptedMessage.encode(msgId: ids.next(now: now), body: body), using: &rng)
                case .completed(let result):
                    handshakeInProgress = false
                    out += try adopt(result, now: now, using: &rng)
                    events.append(.handshakeCompleted(result))
                }
            }
        }
        return (out, events)
    }

    /// A new key from the handshake: a new session under it (a replaced key's unanswered requests go
    /// again here), and with ``permanentKey`` its binding first, everything else held until bound.
    private mutating func adopt<R: RandomNumberGenerator>(_ result: HandshakeResult, now: Double,
                                                          using rng: inout R) throws(MTProtoError) -> [UInt8] {
        let replacing = session != nil
        var s = Session(client: result.authKey, sessionId: Int64(bitPattern: rng.next()), salt: result.serverSalt,
                        timeOffset: Double(result.timeOffset))
        keysMade += 1
        keyExpiresAt = result.expiresIn.map { now + Double($0) }
        if let e = result.expiresIn { rotationMargin = min(rotationMargin, Double(e) / 2) }
        if replacing { requests.requeueUnanswered() }
        guard let perm = permanentKey, let lifetime = result.expiresIn else {
            let out = try pack(&s, now: now, using: &rng)  // what waited for the key
            session = s
            return out
        }
        let expiresAt = Int32(clamping: Int64(s.messageIds.serverTime(at: now)) + Int64(lifetime))
        requests.holdsRequests = true
        bindRequest = requests.enqueueBind(TempKeyBinding.Request(permanentKey: perm, temporaryKey: result.authKey,
                                                                  expiresAt: expiresAt, using: &rng))
        let out = try pack(&s, now: now, using: &rng)
        session = s
        return out
    }

    /// Whether `event` answers the binding `id`: true when it says `boolTrue`.
    /// - Throws: ``MTProtoError/handshakeFailed(_:)`` when the server refused the binding.
    private func bindAnswered(_ event: RequestLayer.Event, id: RequestLayer.RequestID, now: Double) throws(MTProtoError) -> Bool {
        switch event {
        case .result(id, let body):
            guard body == [0xB5, 0x75, 0x72, 0x99] else { throw .handshakeFailed("auth.bindTempAuthKey answered false") }
            return true
        case .rpcError(id, let e): throw .handshakeFailed("auth.bindTempAuthKey refused: \(e.code) \(e.message)")
        case .undecodableResult(id, let why): throw .handshakeFailed("auth.bindTempAuthKey: \(why)")
        default: return false
        }
    }

    /// Queues one RPC query in ``requests`` and encrypts and frames what is due (the query, with
    /// pending acks riding along in a container). Returns the bytes and the request's handle; its
    /// answer arrives as ``Event/request(_:)``. Before the handshake has finished (or while a new
    /// key is being made or bound) the bytes are empty: the query goes out with the key.
    public mutating func request<R: RandomNumberGenerator>(_ body: [UInt8], now: Double, quickAck: Bool = false,
                                                           using rng: inout R) throws(MTProtoError) -> (bytes: [UInt8], id: RequestLayer.RequestID) {
        guard var s = session else {
            // No key yet (or it was lost): the query waits and goes out once the key is there.
            return ([], requests.enqueue(body))
        }
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

// MARK: - Snapshot

/// Snapshot (type `MCON`, version 1, Docs/Snapshots.md §4): the permanent key (optional, 256 bytes),
/// the session (optional: a whole `MSES` snapshot as bytes), the pending `auth.bindTempAuthKey`
/// (optional uint64 request number), the key's expiry (optional double, local unix seconds), the
/// rotation margin (double), the counters keysMade, keysBound, keysLost, ignoredPackets,
/// rejectedPackets (uint64 each), the msg_id generator of unencrypted messages, and the request layer
/// (``RequestLayer``: the unanswered requests, the owed service messages).
///
/// The transport and the handshake configuration are not in it: the application gives them again
/// (they hold the server's RSA keys and a proxy's secret, which it has anyway). A restored connection
/// is one whose socket closed: call ``reconnect(now:using:)`` on a new socket, which sends every
/// unanswered request again (or first makes a key, when the snapshot had none). A handshake under
/// way when the snapshot was taken starts again. Restoring with `newSession: false` and reconnecting
/// is exactly a ``reconnect(now:using:)`` of the connection the snapshot was taken from: the same
/// bytes and events follow.
///
/// Old snapshots: requests answered after the snapshot was taken are in it and go again (MTProto
/// requests are at least once across a restart, as in every client: methods that must not repeat
/// carry a `random_id` the server deduplicates). By default the session restarts (a new session_id,
/// as ``Session/resumed(from:using:)``), so nothing received in the old one is accepted again.
extension ClientConnection {
    /// `MCON`.
    public static let snapshotType = SnapshotType("MCON")

    /// The connection's state, to restore with ``init(restoring:transport:handshake:newSession:using:)``.
    public func snapshot() -> SnapshotBytes {
        var w = SnapshotWriter(type: Self.snapshotType, version: 1, capacity: 2_048 + requests.snapshotByteEstimate)
        w.optional(permanentKey) { w, key in key.withUnsafeBytes { w.fixed($0) } }
        w.optional(session) { w, s in s.snapshot().withUnsafeBytes { w.bytes($0) } }
        w.optional(bindRequest) { $0.uint64($1.value) }
        w.optional(keyExpiresAt) { $0.double($1) }
        w.double(rotationMargin)
        for c in [keysMade, keysBound, keysLost, ignoredPackets, rejectedPackets] { w.uint64(UInt64(c)) }
        ids.write(to: &w)
        requests.write(to: &w)
        return w.finish()
    }

    /// A connection restored from `snapshot`, to be started with ``reconnect(now:using:)``.
    /// - Parameters:
    ///   - kind, handshake: as for ``init(transport:handshake:permanentKey:using:)``.
    ///   - newSession: start a new session under the restored key (the default; `false` only when the
    ///     snapshot is certainly the latest one taken, see above).
    /// - Throws: ``RampartError/invalidSnapshot(_:)`` for bytes that are not a version-1 `MCON`
    ///   snapshot, and for a snapshot with a permanent key restored with a permanent-key handshake.
    public init<R: RandomNumberGenerator>(restoring snapshot: SnapshotBytes, transport kind: ClientTransport.Kind,
                                          handshake: ClientHandshake.Configuration, newSession: Bool = true,
                                          using rng: inout R) throws(RampartError) {
        var r = try SnapshotReader(snapshot, type: Self.snapshotType, versions: 1...1)
        let permanent = try r.optional("permanent key") { (r) throws(RampartError) -> AuthKey in
            var bytes = try r.fixed(AuthKey.byteCount)
            defer { bytes.secureWipe() }
            do { return try AuthKey(bytes) } catch { throw .invalidSnapshot(.invalidField("permanent key")) }
        }
        var session = try r.optional("session") { (r) throws(RampartError) -> Session in
            let n = Int(try r.uint32())
            guard n <= 64 << 20 else { throw .invalidSnapshot(.invalidField("session")) }
            return try Session(restoring: try r.secret(n))
        }
        guard session?.role ?? .client == .client else { throw .invalidSnapshot(.invalidField("session")) }
        let bind = try r.optional("binding") { (r) throws(RampartError) in RequestLayer.RequestID(value: try r.uint64()) }
        let expiry = try r.optional("key expiry") { (r) throws(RampartError) in try r.double("key expiry") }
        // Under a permanent key, the key in use is a temporary one: it expires, and it may be waiting
        // for its binding.
        guard expiry.map({ $0.isFinite }) ?? true, expiry == nil || session != nil,
              permanent == nil || session == nil || expiry != nil else { throw .invalidSnapshot(.invalidField("key expiry")) }
        guard bind == nil || (permanent != nil && session != nil) else { throw .invalidSnapshot(.invalidField("binding")) }
        let margin = try r.double("rotation margin")
        guard margin.isFinite, margin >= 0 else { throw .invalidSnapshot(.invalidField("rotation margin")) }
        var counters: [Int] = []
        for _ in 0..<5 {
            let c = try r.uint64()
            guard c <= UInt64(Int.max) else { throw .invalidSnapshot(.invalidField("counter")) }
            counters.append(Int(c))
        }
        let ids = try MessageIDGenerator(role: .client, reading: &r)
        let keys = permanent.flatMap { p in session.map { (p, $0.authKey) } }
        let layer = try RequestLayer(reading: &r, keys: keys)
        try r.finish()
        if let bind { guard layer.isBinding(bind) else { throw .invalidSnapshot(.invalidField("binding")) } }
        var restored: ClientConnection
        do {
            restored = try ClientConnection(transport: kind, handshake: handshake, permanentKey: permanent, using: &rng)
        } catch {
            throw .invalidSnapshot(.invalidField("permanent key (the handshake given makes permanent keys)"))
        }
        if newSession { session?.startNewSession(using: &rng) }
        restored.session = session
        restored.bindRequest = bind
        restored.keyExpiresAt = expiry
        restored.rotationMargin = margin
        restored.keysMade = counters[0]
        restored.keysBound = counters[1]
        restored.keysLost = counters[2]
        restored.ignoredPackets = counters[3]
        restored.rejectedPackets = counters[4]
        restored.ids = ids
        restored.requests = layer
        self = restored
    }
}
