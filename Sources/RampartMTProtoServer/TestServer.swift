// The loopback test server's logic, sans-I/O (Docs/MTProto.md §8 describes gotd's tgtest, which this follows):
// transport detection per connection, the auth-key handshake on unencrypted messages, then
// encrypted sessions answering the service messages. The `rampart mtproto serve` command owns the
// sockets and feeds bytes in; everything here is deterministic given the clock and the RNG. Its own
// target (RampartMTProtoServer): the RampartMTProto library carries the protocol, not this server.

import RampartMTProto

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
    /// Bytes for other connections (updates the secret-chat relay pushes to a chat's other member),
    /// each to be queued like ``send`` on that connection.
    public var push: [TestServerPush] = []

    public init() {}
}

/// Bytes for another connection than the one that sent the data.
public struct TestServerPush: Sendable, Equatable {
    /// The connection to write to.
    public var connection: TestServerConnectionID
    /// The framed, encrypted bytes.
    public var bytes: [UInt8]
}

/// An in-memory MTProto server for tests and interop: handshakes (permanent and temporary keys,
/// RSA_PAD and the legacy padding), then encrypted sessions that answer `ping` with `pong`, send
/// `new_session_created` and acks, answer a wrong salt with `bad_server_salt`, unpack containers, bind temporary keys
/// (`auth.bindTempAuthKey`), relay secret chats between numbered test users (``SecretChatRelay``:
/// `users.getUsers`, `messages.getDhConfig`, the chat handshake, `sendEncrypted*`, file parts, with the
/// updates pushed on the other member's connection) and answer every other request with `rpc_error`
/// 400 `METHOD_NOT_SUPPORTED`.
///
/// Not thread-safe: one caller drives it (the CLI's poll loop).
public struct TestServer {
    /// Fixed inputs.
    public struct Configuration: Sendable {
        /// The handshake's configuration (RSA keys, DH parameters, DC).
        public var handshake: ServerHandshake.Configuration
        /// Optional MTProxy secret for obfuscated2 connections.
        public var proxySecret: SymmetricKey?
        /// Whether ``proxySecret`` is an `ee` secret: connections must then open with a fake-TLS
        /// ClientHello (Docs/MTProto.md §6.7), and a ClientHello seen before is refused (a replay).
        public var proxyFakeTLS = false
        /// The largest transport packet accepted.
        public var maxPacketLength: Int
        /// Transports accepted, by ``TestServer/transportName(_:)``; nil accepts all.
        public var allowedTransports: Set<String>?
        /// How many auth keys the server holds and for how long (default: 1024 keys, forgotten after
        /// an hour unused). Each key with one session takes about 9 kB (each further session of the
        /// key, up to ``maxSessionsPerKey``, another 9 kB), so this bounds the memory a stream of
        /// handshakes can pin.
        public var keyEviction: KeyEviction = KeyEviction()
        /// The RSA private operations (`req_DH_params`, each followed by two 2048-bit DH powers) one
        /// client address may force: a token bucket per address given to ``TestServer/open(_:address:)``
        /// (connections opened without an address share one bucket). Default 20 per second, bursts
        /// of 40; nil: unlimited. A `req_DH_params` over the limit is answered with transport error
        /// −429 and the connection is closed before any RSA work.
        public var rsaLimitPerAddress: RateLimit? = RateLimit(perSecond: 20, burst: 40)
        /// The RSA private operations all clients together may force (a global budget on top of the
        /// per-address one). Default 50 per second, bursts of 50; nil: unlimited.
        public var rsaLimitGlobal: RateLimit? = RateLimit(perSecond: 50, burst: 50)
        /// What the secret-chat relay may hold.
        public var relayLimits = SecretChatRelay.Limits()
        /// 1-based indices of `sendEncrypted` calls the relay acknowledges but does not deliver (a
        /// test hook: the receiver sees a gap and asks for a resend).
        public var dropSecretMessages: Set<Int> = []
        /// Updates held for a user without a live connection (delivered on its next message): at most
        /// this many per user; the oldest are dropped (default 1024).
        public var maxPendingUpdatesPerUser = 1024
        /// The same, in bytes over all users (default 32 MiB).
        public var maxPendingUpdateBytes = 32 << 20
        /// Whether every received message gets a log line (default false: one line per connection
        /// event, with the message count in the line that closes the connection).
        public var logMessages = false
        /// Sessions held per auth key (default 4: real clients open several, for media and for
        /// several devices); a new one beyond it replaces the least recently used.
        public var maxSessionsPerKey = 4
        /// Seconds each server salt is valid before the next one takes over (nil: one salt per key,
        /// never changed). With a period, each key's salts follow a schedule announced by
        /// `get_future_salts` (three ahead), and a replaced salt is still accepted for 300 s
        /// (``ServerSalts/previousSaltGrace``).
        public var saltPeriod: Double?

        public init(handshake: ServerHandshake.Configuration, proxySecret: SymmetricKey? = nil,
                    maxPacketLength: Int = 1 << 20) {
            self.handshake = handshake
            self.proxySecret = proxySecret
            self.maxPacketLength = maxPacketLength
        }
    }

    /// The auth-key eviction policy: an LRU bound and an idle expiry.
    ///
    /// A key is *used* when it is created and whenever a message under it is decrypted. When a new
    /// key would make more than ``maxKeys``, the least recently used key is forgotten (with its
    /// session and binding); a key unused for longer than ``idleLifetime`` seconds is forgotten on
    /// its next use or by ``TestServer/sweep(now:)``. A client whose key was forgotten gets transport
    /// error −404 and makes a new key, as with a real server that lost it. Temporary keys are also
    /// forgotten when they expire.
    public struct KeyEviction: Sendable, Equatable {
        /// The most keys held at once (at least 1).
        public var maxKeys: Int
        /// Seconds a key may stay unused before it is forgotten; nil: only the LRU bound applies.
        public var idleLifetime: Double?

        /// - Parameters:
        ///   - maxKeys: the LRU bound (values below 1 count as 1). Default 1024.
        ///   - idleLifetime: seconds without use before a key is forgotten. Default one hour.
        public init(maxKeys: Int = 1024, idleLifetime: Double? = 3600) {
            self.maxKeys = max(1, maxKeys)
            self.idleLifetime = idleLifetime
        }
    }

    /// A token bucket: ``perSecond`` tokens flow in continuously up to ``burst``; each admitted
    /// operation takes one.
    public struct RateLimit: Sendable, Equatable {
        /// Tokens added per second (at least 0).
        public var perSecond: Double
        /// The bucket's size: operations allowed at once after a quiet period (at least 1).
        public var burst: Double

        public init(perSecond: Double, burst: Double) {
            self.perSecond = perSecond.isFinite ? max(0, perSecond) : 0
            self.burst = burst.isFinite ? max(1, burst) : 1
        }
    }

    /// One token bucket's state.
    struct TokenBucket {
        var tokens: Double
        var updated: Double

        init(_ limit: RateLimit, now: Double) {
            tokens = limit.burst
            updated = now
        }

        /// Adds the tokens earned since the last update (a clock that goes back earns nothing).
        mutating func refill(_ limit: RateLimit, now: Double) {
            guard now > updated else { return }
            tokens = min(limit.burst, tokens + (now - updated) * limit.perSecond)
            updated = now
        }
    }

    struct Connection {
        let transport: ServerTransport
        /// The client's address, for the RSA rate limit ("" when not given).
        let address: String
        var handshake: ServerHandshake
        var ids = MessageIDGenerator(role: .server)
        var packets = 0
        /// Messages received in encrypted packets (containers unpacked).
        var messages = 0
        /// Whether a fake-TLS ClientHello was checked against the replay cache.
        var helloChecked = false
    }

    /// A session under a key that is not the one being served right now.
    struct SessionSlot {
        var session: Session
        var replies = StandardServerReplies()
        var lastUse: UInt64 = 0
    }

    /// A key the server holds, with its sessions and binding state. `session` is the session of the
    /// packet being handled (the one last used); the others wait in `otherSessions` by session_id.
    struct KeyState {
        var session: Session
        /// What the server answers in that session (and which session it has announced).
        var replies = StandardServerReplies()
        /// The key's other sessions, at most ``Configuration/maxSessionsPerKey`` − 1.
        var otherSessions: [Int64: SessionSlot] = [:]
        var expiresAt: Int64?
        /// When the key was last created or used (unix seconds), for the idle expiry.
        var lastUsedAt: Double
        /// The use counter's value at the last use, for the LRU order.
        var lastUseTick: UInt64
        /// For a temporary key: the permanent key id it is bound to.
        var boundTo: UInt64?
        /// The test user of this key (assigned on its first relay request; a bound temporary key
        /// acts as its permanent key's user).
        var user: SecretChatRelay.UserID?
    }

    /// Where a user's pushed updates go: the connection, key and session it last used.
    struct Home {
        var connection: TestServerConnectionID
        var key: UInt64
        var session: Int64?
    }

    public let configuration: Configuration
    private let handshakeTemplate: ServerHandshake
    private var connections: [TestServerConnectionID: Connection] = [:]
    private var keys: [UInt64: KeyState] = [:]
    private var useTick: UInt64 = 0
    private var rsaBuckets: [String: TokenBucket] = [:]
    private var rsaGlobalBucket: TokenBucket?
    /// The secret-chat relay (users, chats, files).
    public private(set) var relay: SecretChatRelay
    private var homes: [SecretChatRelay.UserID: Home] = [:]
    private var pending: [SecretChatRelay.UserID: [[UInt8]]] = [:]
    /// Bytes held in ``pending`` and ``retained`` together (bounded by
    /// ``Configuration/maxPendingUpdateBytes``).
    private var pendingBytes = 0
    /// For users that acknowledge their encrypted messages (`messages.receivedQueue`, once is
    /// enough to opt in): every update not yet acknowledged, delivered again whenever the user comes
    /// back on another connection or session (a client that restarted). Bounded as ``pending`` is,
    /// and to 1/16 of the byte budget per user.
    private var retained: [SecretChatRelay.UserID: [Retained]] = [:]
    private var retainedBytes: [SecretChatRelay.UserID: Int] = [:]

    /// An update kept until acknowledged.
    struct Retained {
        /// The encrypted message's qts; nil for a chat's state change.
        var qts: Int32?
        /// For a state change: the user's qts when it was sent (it goes once a later one is acknowledged).
        var after: Int32
        var updates: [UInt8]

        /// Whether an acknowledgement up to `maxQts` covers it.
        func acknowledged(by maxQts: Int32) -> Bool { qts.map { $0 <= maxQts } ?? (after < maxQts) }
    }
    /// fake-TLS `client_random`s seen (a replay cache of the last 65 536).
    private var seenHellos = RecentSet<[UInt8]>(capacity: 65_536)

    /// - Throws: as ``ServerHandshake/init(configuration:)``.
    public init(configuration: Configuration) throws(MTProtoError) {
        self.configuration = configuration
        handshakeTemplate = try ServerHandshake(configuration: configuration.handshake)
        var seed = SecureRandom()
        relay = SecretChatRelay(limits: configuration.relayLimits, using: &seed)
        relay.dropMessages = configuration.dropSecretMessages
    }

    /// Updates held for users without a live connection.
    public var pendingUpdateCount: Int { pending.values.reduce(0) { $0 + $1.count } }
    /// Updates kept until acknowledged (`messages.receivedQueue`), all users together.
    public var retainedUpdateCount: Int { retained.values.reduce(0) { $0 + $1.count } }

    /// The number of auth keys held now (permanent and temporary), at most
    /// ``KeyEviction/maxKeys``.
    public var keyCount: Int { keys.count }
    /// Auth keys created since the server started.
    public private(set) var keysCreated = 0
    /// Auth keys forgotten by the eviction policy (LRU bound, idle expiry, temporary-key expiry).
    public private(set) var keysEvicted = 0
    /// RSA private operations admitted by the rate limits (`req_DH_params` handled).
    public private(set) var rsaOperations = 0
    /// `req_DH_params` refused by the rate limits.
    public private(set) var rsaRefusals = 0

    /// The transport names the server knows: `abridged`, `intermediate`, `padded-intermediate`,
    /// `full`, `obfuscated2`, `fake-tls`, `http`.
    public static let transportNames = ["abridged", "intermediate", "padded-intermediate", "full", "obfuscated2", "fake-tls", "http"]

    /// The name of a detected transport (one of ``transportNames``).
    public static func transportName(_ d: DetectedTransport) -> String {
        switch d {
        case .obfuscated2: return "obfuscated2"
        case .plain(.abridged): return "abridged"
        case .plain(.intermediate): return "intermediate"
        case .plain(.paddedIntermediate): return "padded-intermediate"
        case .plain(.full): return "full"
        case .fakeTLS: return "fake-tls"
        case .http: return "http"
        }
    }

    /// Whether the key with this auth_key_id is known, and the permanent key it is bound to.
    public func binding(ofKey id: UInt64) -> UInt64?? { keys[id].map(\.boundTo) }

    /// Registers a new connection from `address` (the client's IP address as text, which selects
    /// its RSA rate-limit bucket; nil shares one bucket with every other connection without one).
    public mutating func open(_ id: TestServerConnectionID, address: String? = nil) {
        connections[id] = Connection(transport: ServerTransport(secret: configuration.proxySecret, fakeTLS: configuration.proxyFakeTLS,
                                                                maxPacketLength: configuration.maxPacketLength),
                                     address: address ?? "", handshake: handshakeTemplate)
    }

    /// Bytes received on connection `id` and held until a packet is complete (at most
    /// ``Configuration/maxPacketLength`` plus a frame header and padding); 0 for an unknown id.
    public func bufferedByteCount(of id: TestServerConnectionID) -> Int {
        connections[id]?.transport.bufferedByteCount ?? 0
    }

    /// Forgets what the limits allow to be forgotten at `now` (unix seconds): keys unused for longer
    /// than ``KeyEviction/idleLifetime``, expired temporary keys, and rate-limit buckets that are
    /// full again. Call it now and then (the CLI does every few seconds); returns one log line per
    /// forgotten key.
    public mutating func sweep(now: Double) -> [String] {
        var log: [String] = []
        for (id, state) in keys {
            if let why = expiry(of: state, now: now) {
                keys[id] = nil
                keysEvicted += 1
                log.append("auth key \(hex64(id)) forgotten (\(why))")
            }
        }
        if let limit = configuration.rsaLimitPerAddress {
            rsaBuckets = rsaBuckets.filter { _, b in
                var b = b
                b.refill(limit, now: now)
                return b.tokens < limit.burst
            }
        } else {
            rsaBuckets = [:]
        }
        return log
    }

    /// Why a key is to be forgotten at `now`, or nil.
    private func expiry(of state: KeyState, now: Double) -> String? {
        if let e = state.expiresAt, Int64(now) > e { return "temporary key expired" }
        if let life = configuration.keyEviction.idleLifetime, now - state.lastUsedAt > life {
            return "unused for \(Int(now - state.lastUsedAt)) s"
        }
        return nil
    }

    /// Takes a token for one RSA private operation from `address`'s bucket and the global one;
    /// false (nothing taken) when either is empty.
    private mutating func admitRSA(address: String, now: Double) -> Bool {
        var global: TokenBucket?
        if let limit = configuration.rsaLimitGlobal {
            var g = rsaGlobalBucket ?? TokenBucket(limit, now: now)
            g.refill(limit, now: now)
            rsaGlobalBucket = g
            guard g.tokens >= 1 else { return false }
            global = g
        }
        if let limit = configuration.rsaLimitPerAddress {
            var b = rsaBuckets[address] ?? TokenBucket(limit, now: now)
            b.refill(limit, now: now)
            guard b.tokens >= 1 else {
                rsaBuckets[address] = b
                return false
            }
            b.tokens -= 1
            if rsaBuckets[address] == nil && rsaBuckets.count >= 65_536 { _ = sweep(now: now) }
            rsaBuckets[address] = b
        }
        if var g = global {
            g.tokens -= 1
            rsaGlobalBucket = g
        }
        return true
    }

    /// Marks key `id` as used at `now`.
    private mutating func touch(_ state: inout KeyState, now: Double) {
        useTick &+= 1
        state.lastUseTick = useTick
        state.lastUsedAt = max(state.lastUsedAt, now)
    }

    /// Forgets least recently used keys (never `keep`) until at most ``KeyEviction/maxKeys`` remain.
    private mutating func evictOverLimit(keeping keep: UInt64, connection id: TestServerConnectionID,
                                         reply: inout TestServerReply) {
        while keys.count > configuration.keyEviction.maxKeys {
            var victim: (id: UInt64, tick: UInt64)?
            for (k, state) in keys where k != keep && state.lastUseTick < (victim?.tick ?? .max) {
                victim = (k, state.lastUseTick)
            }
            guard let victim else { return }
            keys[victim.id] = nil
            keysEvicted += 1
            reply.log.append("connection \(id): auth key \(hex64(victim.id)) evicted (least recently used; limit \(configuration.keyEviction.maxKeys) keys)")
        }
    }

    /// HTTP connections (Docs/MTProto.md §6.8): empty responses for the requests held longer than their
    /// `http_wait` `max_wait` (25 s without one) at `now`. Call it about once a second (the CLI does).
    public mutating func expireLongPolls(now: Double) -> [TestServerPush] {
        var out: [TestServerPush] = []
        for (id, conn) in connections where conn.transport.heldRequestCount > 0 {
            let bytes = conn.transport.expireHeldRequests(now: now)
            if !bytes.isEmpty { out.append(TestServerPush(connection: id, bytes: bytes)) }
        }
        return out
    }

    /// Forgets every temporary key (a test hook: temporary keys live in memory only, and a server
    /// restart loses them). Their clients get −404 and make new ones.
    public mutating func forgetTemporaryKeys() {
        keys = keys.filter { $0.value.expiresAt == nil }
    }

    /// Forgets every session while keeping the keys and their salts (a test hook: what a server
    /// restart that kept only the keys looks like). The next message of each client starts a new
    /// session there, with `new_session_created`.
    public mutating func forgetSessions() {
        for (id, var state) in keys {
            var fresh = Session(server: state.session.authKey, salt: state.session.salts.current)
            fresh.salts = state.session.salts
            fresh.acceptsNewSessions = true
            state.session = fresh
            state.replies = StandardServerReplies()
            state.otherSessions = [:]
            keys[id] = state
        }
    }

    /// Messages received on connection `id` so far (for the log line that closes it); 0 for an
    /// unknown id.
    public func messageCount(of id: TestServerConnectionID) -> Int { connections[id]?.messages ?? 0 }

    /// Forgets a connection (its keys and sessions stay; updates for its user are held until the
    /// user's next message).
    public mutating func close(_ id: TestServerConnectionID) {
        connections[id] = nil
        homes = homes.filter { $0.value.connection != id }
    }

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
        let packetsBefore = conn.packets
        while true {
            let event: TransportEvent?
            do {
                conn.transport.unixTime = now.isFinite ? Int64(max(0, min(now, 4e9))) : 0
                event = try conn.transport.next(using: &rng)
            } catch {
                reply.log.append("connection \(id): transport error (\(error)), closing")
                reply.close = true
                break
            }
            // Fake-TLS's server hello, once its ClientHello checked out (and is no replay).
            if !conn.helloChecked, let random = conn.transport.fakeTLSClientRandom {
                conn.helloChecked = true
                guard rememberClientHello(random) else {
                    reply.log.append("connection \(id): fake-TLS ClientHello seen before (a replay), closing")
                    reply.close = true
                    break
                }
                reply.log.append("connection \(id): fake-TLS ClientHello verified")
            }
            reply.send += conn.transport.takeOutput()
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
        if !reply.close && conn.packets > packetsBefore {
            // Packets were consumed: drop the capacity a large frame left behind.
            conn.transport.releaseSpareCapacity()
        }
        connections[id] = reply.close ? nil : conn
        return reply
    }

    /// One transport packet; false means close the connection.
    private mutating func handle<R: RandomNumberGenerator>(_ packet: [UInt8], quickAck: Bool, conn: inout Connection,
                                                           id: TestServerConnectionID, now: Double,
                                                           reply: inout TestServerReply, using rng: inout R) -> Bool {
        guard let keyId = EncryptedMessage.authKeyId(of: packet) else {
            reply.log.append("connection \(id): packet of \(packet.count) bytes, closing")
            return false
        }
        if keyId == 0 { return handshake(packet, conn: &conn, id: id, now: now, reply: &reply, using: &rng) }
        // Taken out of the dictionary while it is worked on, so that the session's buffers (the replay
        // window, pending acks) are uniquely referenced and change in place; a copy left in the
        // dictionary made every packet copy them. Every path below puts it back, unless the key is
        // forgotten.
        guard var state = keys.removeValue(forKey: keyId) else {
            reply.log.append("connection \(id): unknown auth_key_id \(hex64(keyId)), answering -404")
            send(error: -404, conn, &reply, using: &rng)
            return false
        }
        if let why = expiry(of: state, now: now) {
            keysEvicted += 1
            reply.log.append("connection \(id): auth key \(hex64(keyId)) forgotten (\(why)), answering -404")
            send(error: -404, conn, &reply, using: &rng)
            return false
        }
        if let period = configuration.saltPeriod { scheduleSalts(&state.session.salts, period: period, now: now, using: &rng) }
        let trimmed = EncryptedMessage.droppingTransportJunk(packet, padded: conn.transport.framing == .paddedIntermediate)
        selectSession(&state, for: trimmed)
        let messages: [IncomingMessage]
        do {
            messages = try state.session.decrypt(trimmed, now: now)
        } catch .badServerSalt(let rejected) {
            // Server salt (Docs/MTProto.md §2.3): the message was authentic but is not processed, and the
            // session did not consume its msg_id; bad_server_salt (code 48) carries the current
            // salt, and the client re-sends under it.
            reply.log.append("connection \(id): bad server salt \(hex64(UInt64(bitPattern: rejected.salt))), answering bad_server_salt")
            return answerUnprocessed(&state, keyId: keyId, conn: conn, id: id, now: now, reply: &reply, using: &rng) { s, r throws(MTProtoError) in
                try s.encryptBadServerSalt(answering: rejected, now: now, using: &r)
            }
        } catch .badMessageTime(let rejected) {
            // Time window (Docs/MTProto.md §1.6.9): an authentic message whose msg_id is too far off
            // is answered with bad_msg_notification 16/17, whose msg_id carries the server's time;
            // the client corrects its clock and sends it again. Nothing was committed.
            reply.log.append("connection \(id): msg_id outside the time window, answering bad_msg_notification \(rejected.code)")
            return answerUnprocessed(&state, keyId: keyId, conn: conn, id: id, now: now, reply: &reply, using: &rng) { s, r throws(MTProtoError) in
                try s.encryptBadMsgNotification(answering: rejected, now: now, using: &r)
            }
        } catch {
            reply.log.append("connection \(id): message rejected (\(error)), closing")
            keys[keyId] = state
            return false
        }
        touch(&state, now: now)
        if quickAck, let first = messages.first {
            do {
                reply.send += try conn.transport.encodeQuickAck(first.quickAck)
            } catch {
                reply.log.append("connection \(id): cannot answer (\(error)), closing")
                keys[keyId] = state
                return false
            }
        }
        // new_session_created first, then the bind results, the standard answers, and last the
        // acks (also of bind requests).
        var bodies: [OutgoingBody] = []
        if let created = state.replies.newSessionCreated(for: state.session, uniqueId: Int64(bitPattern: rng.next())) {
            bodies.append(created)
        }
        for m in messages where m.constructor == ServiceConstructor.httpWait {
            // HTTP long poll (§6.8): how long this connection's requests may be held.
            if case .httpWait(_, _, let maxWait)? = try? m.decoded() { conn.transport.httpMaxWait = Double(max(0, maxWait)) / 1000 }
        }
        for m in messages where m.constructor == HandshakeConstructor.bindTempAuthKey {
            bodies.append(bindTempKey(m, keyId: keyId, state: &state, reply: &reply))
        }
        var pushes: [SecretChatRelay.Push] = []
        var user: SecretChatRelay.UserID?
        for m in messages where SecretChatRelay.handles(m.constructor) {
            let u = self.user(of: keyId, &state)
            user = u
            let outcome = relay.handle(m.body, from: u, now: now, using: &rng)
            bodies.append(OutgoingBody(.rpcResult(reqMsgId: m.msgId, result: outcome.result), isResponse: true))
            if let acked = outcome.acknowledgedQts { acknowledge(u, upTo: acked) }
            for line in outcome.log { reply.log.append("connection \(id): \(line)") }
            pushes += outcome.pushes
        }
        for m in messages where m.constructor != HandshakeConstructor.bindTempAuthKey && !SecretChatRelay.handles(m.constructor) {
            if let a = StandardServerReplies.answer(to: m, session: state.session, now: now) { bodies.append(a) }
        }
        if let acks = state.session.takeAckBody() { bodies.append(OutgoingBody(acks, contentRelated: false)) }
        let sent = bodies.isEmpty || send(bodies, session: &state.session, conn, id: id, now: now, reply: &reply, using: &rng)
        // One log line per connection event, not per message (unless asked): the count goes into
        // the close line.
        conn.messages += messages.count
        if configuration.logMessages, sent { for m in messages { reply.log.append("connection \(id): \(describe(m))") } }
        if user == nil { user = state.user ?? state.boundTo.flatMap { keys[$0]?.user } }
        keys[keyId] = state
        guard sent else { return false }
        if let user {
            // This connection is now where the user's updates go; what was held for it follows.
            let previous = homes[user]
            let home = Home(connection: id, key: keyId, session: keys[keyId]?.session.sessionId)
            homes[user] = home
            if let kept = retained[user] {
                // A user that acknowledges: on a new connection or session (a restart), everything
                // not yet acknowledged again, in order (the client skips what it has by qts).
                if previous?.connection != home.connection || previous?.session != home.session {
                    for r in kept { deliver(r.updates, to: user, now: now, current: id, reply: &reply, using: &rng) }
                }
            } else if let held = pending.removeValue(forKey: user) {
                pendingBytes -= held.reduce(0) { $0 + $1.count }
                for updates in held { deliver(updates, to: user, now: now, current: id, reply: &reply, using: &rng) }
            }
        }
        for p in pushes {
            if retained[p.user] != nil { retain(p, reply: &reply) }
            deliver(p.updates, to: p.user, now: now, current: id, reply: &reply, using: &rng)
        }
        return true
    }

    /// Answers an authentic message the session refused before processing it (a bad salt, a msg_id
    /// outside the time window) with `answer`'s packet, keeps the key (used now) and returns whether
    /// the answer went out (false: close the connection).
    private mutating func answerUnprocessed<R: RandomNumberGenerator>(
        _ state: inout KeyState, keyId: UInt64, conn: Connection, id: TestServerConnectionID, now: Double,
        reply: inout TestServerReply, using rng: inout R,
        _ answer: (inout Session, inout R) throws(MTProtoError) -> OutgoingMessage
    ) -> Bool {
        touch(&state, now: now)
        defer { keys[keyId] = state }
        do {
            let out = try answer(&state.session, &rng)
            reply.send += try conn.transport.encode(out.packet, using: &rng)
            return true
        } catch {
            reply.log.append("connection \(id): cannot answer (\(error)), closing")
            return false
        }
    }

    /// Makes the session the packet claims (``EncryptedMessage/claimedSessionId(_:authKey:direction:)``,
    /// not yet authenticated) the key's current one: a held session, or a new one, which the decrypt
    /// then adopts or refuses. The salts are the key's and move along. Nothing is created for a
    /// packet that does not name another session.
    private mutating func selectSession(_ state: inout KeyState, for packet: [UInt8]) {
        guard let current = state.session.sessionId,
              let claimed = EncryptedMessage.claimedSessionId(packet, authKey: state.session.authKey, direction: .clientToServer),
              claimed != current else { return }
        useTick &+= 1
        let salts = state.session.salts
        var incoming: SessionSlot
        if let held = state.otherSessions.removeValue(forKey: claimed) {
            incoming = held
        } else {
            var fresh = Session(server: state.session.authKey, salt: salts.current)
            fresh.acceptsNewSessions = true
            incoming = SessionSlot(session: fresh)
        }
        state.otherSessions[current] = SessionSlot(session: state.session, replies: state.replies, lastUse: useTick)
        incoming.session.salts = salts
        state.session = incoming.session
        state.replies = incoming.replies
        while state.otherSessions.count > max(0, configuration.maxSessionsPerKey - 1),
              let oldest = state.otherSessions.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            state.otherSessions[oldest.key] = nil
        }
    }

    /// Keeps three salts scheduled after the current one, each valid for `period` seconds, back to
    /// back from the end of the last known one (or from `now` when the schedule has run out).
    private func scheduleSalts<R: RandomNumberGenerator>(_ salts: inout ServerSalts, period: Double, now: Double,
                                                         using rng: inout R) {
        var start = salts.future.last.map { Double($0.validUntil) } ?? salts.currentValidUntil ?? now
        if start < now { start = now }
        var added: [FutureSalt] = []
        let have = salts.future.filter({ Double($0.validUntil) > now }).count
        for _ in 0..<max(0, 3 - have) {
            let since = clampedInt32(start), until = clampedInt32(start + max(period, 1))
            added.append(FutureSalt(validSince: since, validUntil: until, salt: Int64(bitPattern: rng.next())))
            start += max(period, 1)
        }
        salts.add(added)
    }

    /// A time in seconds as an `int` of TL, clamped (a period of years, or an infinite one, gives
    /// `Int32.max` rather than a failed conversion).
    private func clampedInt32(_ t: Double) -> Int32 {
        guard t < Double(Int32.max) else { return .max }
        guard t > Double(Int32.min) else { return .min }
        return Int32(t)
    }

    /// Records a fake-TLS `client_random`; false when it was seen before.
    private mutating func rememberClientHello(_ random: [UInt8]) -> Bool {
        seenHellos.insert(random)
    }

    /// The test user of key `keyId` (a bound temporary key's is its permanent key's), assigned on first use.
    private mutating func user(of keyId: UInt64, _ state: inout KeyState) -> SecretChatRelay.UserID {
        if let bound = state.boundTo, bound != keyId, var permanent = keys[bound] {
            if let u = permanent.user { return u }
            let u = relay.newUser()
            permanent.user = u
            keys[bound] = permanent
            return u
        }
        if let u = state.user { return u }
        let u = relay.newUser()
        state.user = u
        return u
    }

    /// Keeps `push` for its user until acknowledged (the oldest go over the limits, logged).
    private mutating func retain(_ push: SecretChatRelay.Push, reply: inout TestServerReply) {
        let user = push.user
        var kept = retained[user] ?? []
        kept.append(Retained(qts: push.qts, after: relay.qts(of: user), updates: push.updates))
        pendingBytes += push.updates.count
        retainedBytes[user, default: 0] += push.updates.count
        while !kept.isEmpty, kept.count > configuration.maxPendingUpdatesPerUser || pendingBytes > configuration.maxPendingUpdateBytes
                || retainedBytes[user, default: 0] > configuration.maxPendingUpdateBytes / 16 {
            let gone = kept.removeFirst().updates.count
            pendingBytes -= gone
            retainedBytes[user, default: 0] -= gone
            reply.log.append("update for user \(user) no longer kept for redelivery (pending-update limit)")
        }
        retained[user] = kept
    }

    /// `messages.receivedQueue` from `user`: what it acknowledged goes; the first one opts it in.
    private mutating func acknowledge(_ user: SecretChatRelay.UserID, upTo maxQts: Int32) {
        var kept = retained[user] ?? []
        let before = kept.reduce(0) { $0 + $1.updates.count }
        kept.removeAll { $0.acknowledged(by: maxQts) }
        let gone = before - kept.reduce(0) { $0 + $1.updates.count }
        pendingBytes -= gone
        retainedBytes[user, default: 0] -= gone
        retained[user] = kept
        if let held = pending.removeValue(forKey: user) {
            // Held before the user opted in: kept from now on instead.
            pendingBytes -= held.reduce(0) { $0 + $1.count }
            for updates in held { retainHeld(updates, for: user) }
        }
    }

    private mutating func retainHeld(_ updates: [UInt8], for user: SecretChatRelay.UserID) {
        var ignored = TestServerReply()
        retain(SecretChatRelay.Push(user: user, updates: updates, qts: nil), reply: &ignored)
    }

    /// Sends `updates` (a serialized `Updates`) to `user` as a server-initiated message on its home
    /// connection, or holds it (bounded) until the user is next seen.
    private mutating func deliver<R: RandomNumberGenerator>(_ updates: [UInt8], to user: SecretChatRelay.UserID, now: Double,
                                                            current: TestServerConnectionID, reply: inout TestServerReply,
                                                            using rng: inout R) {
        // (The current connection's entry is a stale copy until receive returns, but its transport is
        // the same object.)
        if let home = homes[user], var state = keys[home.key], let transport = connections[home.connection]?.transport,
           home.session == state.session.sessionId || home.session.map({ state.otherSessions[$0] != nil }) == true {
            do {
                let body = [OutgoingBody(updates, contentRelated: true)]
                let bytes: [UInt8]
                if home.session == state.session.sessionId {
                    bytes = try transport.encode(try state.session.encrypt(body, now: now, using: &rng).packet, using: &rng)
                } else if let sid = home.session, var slot = state.otherSessions[sid] {
                    bytes = try transport.encode(try slot.session.encrypt(body, now: now, using: &rng).packet, using: &rng)
                    state.otherSessions[sid] = slot
                } else {
                    throw MTProtoError.invalidMessage("the user's session is gone")
                }
                keys[home.key] = state
                if home.connection == current {
                    reply.send += bytes
                } else {
                    reply.push.append(TestServerPush(connection: home.connection, bytes: bytes))
                }
                return
            } catch {
                reply.log.append("update for user \(user) not sent (\(error)); held")
            }
        }
        // A user that acknowledges has it kept already (``retained``): sent when it comes back.
        guard retained[user] == nil else { return }
        var held = pending[user] ?? []
        held.append(updates)
        pendingBytes += updates.count
        while held.count > configuration.maxPendingUpdatesPerUser || pendingBytes > configuration.maxPendingUpdateBytes,
              !held.isEmpty {
            pendingBytes -= held.removeFirst().count
            reply.log.append("update for user \(user) dropped (pending-update limit)")
        }
        pending[user] = held.isEmpty ? nil : held
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
        // req_DH_params costs an RSA private operation and a 2048-bit DH power (the next step
        // another): charged to the client's address and the global budget before any of it runs.
        // (A body too short for a constructor is not req_DH_params; the handshake refuses it below.)
        if conn.handshake.awaitsReqDHParams,
           (try? TLReader(message.body).peekConstructor()) == HandshakeConstructor.reqDHParams {
            guard admitRSA(address: conn.address, now: now) else {
                rsaRefusals += 1
                let from = conn.address.isEmpty ? "" : " from \(conn.address)"
                reply.log.append("connection \(id): RSA rate limit exceeded\(from), answering -429, closing")
                send(error: -429, conn, &reply, using: &rng)
                return false
            }
            rsaOperations += 1
        }
        let isReqPQ = [HandshakeConstructor.reqPQMulti, HandshakeConstructor.reqPQ].contains(try? TLReader(message.body).peekConstructor())
        let step: ServerHandshake.Step
        do {
            step = try conn.handshake.receive(message.body, now: Int64(now), using: &rng)
        } catch {
            let code: Int32
            if case .wrongDC = error { code = -444 } else { code = -404 }
            reply.log.append("connection \(id): handshake refused (\(error)), answering \(code)")
            send(error: code, conn, &reply, using: &rng)
            return false
        }
        let body: [UInt8]
        switch step {
        case .send(let b):
            body = b
            if isReqPQ { reply.log.append("connection \(id): req_pq answered (handshake started)") }
        case .failed(let b):
            body = b
            reply.log.append("connection \(id): handshake ended with dh_gen_fail")
            conn.handshake = handshakeTemplate
        case .completed(let result, let b):
            body = b
            let keyId = result.authKey.id
            var session = Session(server: result.authKey, salt: result.serverSalt)
            session.acceptsNewSessions = true
            if let period = configuration.saltPeriod {
                session.salts = ServerSalts(current: result.serverSalt, validUntil: now + period)
                scheduleSalts(&session.salts, period: period, now: now, using: &rng)
            }
            var state = KeyState(session: session, expiresAt: result.expiresIn.map { Int64(now) + Int64($0) },
                                 lastUsedAt: now, lastUseTick: 0, boundTo: nil)
            touch(&state, now: now)
            keys[keyId] = state
            keysCreated += 1
            reply.log.append("connection \(id): auth key \(hex64(keyId)) created\(result.expiresIn.map { " (temporary, expires in \($0) s)" } ?? "")")
            evictOverLimit(keeping: keyId, connection: id, reply: &reply)
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

    /// `auth.bindTempAuthKey` (Docs/MTProto.md §5) arriving on the temporary key `keyId`: an `rpc_result` with
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

    /// Frames transport error `code` (the connection is closed after it). When that fails (no
    /// transport detected yet) nothing is sent, and the log says so.
    private func send<R: RandomNumberGenerator>(error code: Int32, _ conn: Connection, _ reply: inout TestServerReply,
                                                using rng: inout R) {
        do {
            reply.send += try conn.transport.encodeTransportError(code, using: &rng)
        } catch {
            reply.log.append("cannot send transport error \(code) (\(error))")
        }
    }

    /// A log name for a message; a body that does not decode is named by its constructor.
    private func describe(_ m: IncomingMessage) -> String {
        let name: String
        switch try? m.decoded() {
        case .ping?: name = "ping"
        case .pingDelayDisconnect?: name = "ping_delay_disconnect"
        case .msgsAck?: name = "msgs_ack"
        case .getFutureSalts?: name = "get_future_salts"
        case .msgsStateReq?: name = "msgs_state_req"
        default:
            if m.constructor == HandshakeConstructor.bindTempAuthKey {
                name = "auth.bindTempAuthKey"
            } else if SecretChatRelay.handles(m.constructor) {
                name = "secret-chat request #\(String(m.constructor, radix: 16))"
            } else {
                name = "request #\(String(m.constructor, radix: 16))"
            }
        }
        return "\(name) msg_id \(hex64(UInt64(bitPattern: m.msgId)))"
    }
}

/// 16 lower-case hex digits.
func hex64(_ v: UInt64) -> String {
    let s = String(v, radix: 16)
    return String(repeating: "0", count: 16 - s.count) + s
}
