// The loopback chat server's logic, sans I/O: known identities, one `CSP.Server` per connection,
// routing of end-to-end messages between logged-in identities, bounded offline queues, echo, and
// replacement on a second login. `rampart threema serve` owns the sockets and feeds bytes in; the
// hub answers with actions (bytes for a connection, close a connection with a reason), log lines,
// trace records and journal records (Docs/Threema.md §9.5).
//
// Under abuse (Docs/Threema.md §9.5, "Limits"): every queued byte is charged to its receiver, its
// sender and the address it came from, each with its own share of the global budget, so one sender
// or one address cannot fill the server for everyone; undelivered messages expire, delivered ones
// are released on acknowledgement or after the acknowledgement window; registrations and
// handshakes are rate-limited per address (handshakes also in total); registered identities that
// stop logging in expire.

import Rampart
import RampartThreema

/// What the hub refuses an outgoing message for (reported to the sender as an `alert`, and logged;
/// the message is not acknowledged).
public enum ChatRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The receiver is not a known identity.
    case unknownReceiver(ThreemaID)
    /// The receiver's queue holds its maximum number of messages or bytes.
    case queueFull(ThreemaID)
    /// The sender has its maximum number of messages or bytes queued (for all receivers together).
    case senderQuota(ThreemaID)
    /// The senders on one address have their share of the global budget queued.
    case addressQuota(String)
    /// All queues together hold the hub's total byte budget.
    case serverFull

    public var description: String {
        switch self {
        case .unknownReceiver(let id): return "unknown receiver \(id)"
        case .queueFull(let id): return "the queue of \(id) is full"
        case .senderQuota(let id): return "\(id) has its share of the server's queues in use"
        case .addressQuota(let a): return "the senders on \(a) have their share of the server's queues in use"
        case .serverFull: return "the server's queue budget is exhausted"
        }
    }
}

/// A token-bucket rate: ``perSecond`` tokens flow in up to ``burst``; each event takes one.
public struct ChatRate: Sendable, Equatable {
    /// Tokens added per second (at least 0).
    public var perSecond: Double
    /// The bucket's size (at least 1).
    public var burst: Double

    /// A rate; a negative or non-finite `perSecond` counts as 0, `burst` is at least 1.
    public init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond.isFinite ? max(0, perSecond) : 0
        self.burst = burst.isFinite ? max(1, burst) : 1
    }
}

/// Token buckets by key (an address), bounded: beyond `maxKeys`, full buckets and then the least
/// recently used are forgotten (forgetting a full bucket changes nothing).
struct RateTable {
    struct Bucket {
        var tokens: Double
        var updated: Double
    }

    var buckets: [String: Bucket] = [:]
    let maxKeys: Int

    init(maxKeys: Int) { self.maxKeys = max(1, maxKeys) }

    /// Takes a token for `key` at `now`; false when none is left.
    mutating func take(_ key: String, _ rate: ChatRate, now: Double) -> Bool {
        var b = buckets[key] ?? Bucket(tokens: rate.burst, updated: now)
        if now > b.updated { b.tokens = min(rate.burst, b.tokens + (now - b.updated) * rate.perSecond); b.updated = now }
        guard b.tokens >= 1 else { buckets[key] = b; return false }
        b.tokens -= 1
        buckets[key] = b
        if buckets.count > maxKeys { forget(rate, now: now) }
        return true
    }

    private mutating func forget(_ rate: ChatRate, now: Double) {
        buckets = buckets.filter { _, b in b.tokens + max(0, now - b.updated) * rate.perSecond < rate.burst }
        while buckets.count > maxKeys, let oldest = buckets.min(by: { $0.value.updated < $1.value.updated }) {
            buckets[oldest.key] = nil
        }
    }
}

/// The chat hub (one per server).
public struct ChatHub {
    /// Limits and keys.
    public struct Configuration: Sendable {
        /// The server permanent secret key.
        public var permanentKey: Curve25519.KeyAgreement.PrivateKey
        /// Whether an unknown identity may register its public key with a registration preamble
        /// (``registrationMagic``) sent before its client-hello; it is stored once its login verifies.
        public var registerOnLogin = false
        /// Messages queued per receiver at most (delivered or not, until released).
        public var queueLimit = 100
        /// Bytes queued per receiver at most, as charged (``chargedBytes(ofEnvelope:)``).
        public var queueByteLimit = 512 * 1024
        /// Messages one sender may have queued for all receivers together.
        public var senderQueueLimit = 1000
        /// Bytes one sender may have queued for all receivers together (default 1 MiB: 1/64 of the
        /// global budget).
        public var senderQueueByteLimit = 1 << 20
        /// Bytes the senders on one address may have queued together (default 16 MiB: a quarter of
        /// the global budget).
        public var addressQueueByteLimit = 16 << 20
        /// Bytes queued for all identities together at most.
        public var totalQueueByteLimit = 64 << 20
        /// Seconds an undelivered message is kept (default 14 days, the whitepaper's maximum message
        /// lifetime on the media server; the chat server's own figure is not published).
        public var messageLifetime: Double = 14 * 86_400
        /// Seconds a delivered message waits for the receiver's acknowledgement; after that it is
        /// released (counted as delivered). If the connection drops first, it is delivered again.
        public var acknowledgementWindow: Double = 60
        /// Identities known at most (registration is refused beyond it).
        public var maxIdentities = 100_000
        /// Seconds a registered identity is kept after its last login (default 90 days); identities
        /// given at start (``ChatHub/init(configuration:identities:random:)``) never expire.
        public var identityLifetime: Double = 90 * 86_400
        /// Registrations per address (default 1 a minute, bursts of 64); nil: unlimited.
        public var registrationRate: ChatRate? = ChatRate(perSecond: 1.0 / 60, burst: 64)
        /// Handshakes started per address (default 20/s, bursts of 200); nil: unlimited.
        public var handshakeRate: ChatRate? = ChatRate(perSecond: 20, burst: 200)
        /// Handshakes started by all addresses together (default 500/s, bursts of 1000); nil: unlimited.
        public var globalHandshakeRate: ChatRate? = ChatRate(perSecond: 500, burst: 1000)
        /// Addresses whose rate buckets are tracked at most.
        public var maxTrackedAddresses = 4096
        /// Seconds a connection may take from its first byte to a verified login.
        public var handshakeTimeout = 10.0
        /// Seconds a logged-in connection may go without a complete payload (bytes of an unfinished
        /// frame do not count); nil: no limit here (the socket owner's idle timeout still applies).
        public var idleTimeout: Double? = 300

        /// A configuration with default limits.
        public init(permanentKey: Curve25519.KeyAgreement.PrivateKey) { self.permanentKey = permanentKey }
    }

    /// The 16 bytes that start a registration preamble: `magic ‖ identity (8) ‖ public key (32)`.
    public static let registrationMagic: [UInt8] = Array("rampart-register".utf8)
    /// The length of a registration preamble.
    public static let registrationLength = 16 + 8 + 32

    /// The bytes a queued envelope of `n` bytes is charged: the envelope's heap block (the array
    /// header and malloc's rounding) plus the queue entry holding it, so that the budgets bound the
    /// memory really used. Checked against the process's resident size in Scripts/threema-chat-test.sh.
    public static func chargedBytes(ofEnvelope n: Int) -> Int {
        ((n + 32 + 8 + 15) & ~15) + 96
    }

    /// What the socket owner must do.
    public enum Action: Sendable, Hashable {
        /// Write these bytes to the connection.
        case send(Int, [UInt8])
        /// Close the connection once its pending bytes are written; the reason was logged.
        case close(Int, reason: String)
    }

    /// One traced payload: the direction (`in` from a client, `out` to it), the connection, the
    /// identity (if logged in) and the container type and data (the server never holds more).
    public struct TraceRecord: Sendable, Hashable {
        public var incoming: Bool
        public var connection: Int
        public var identity: ThreemaID?
        public var type: UInt8
        public var data: [UInt8]

        /// `in|out conn ID type hex-data`.
        public var line: String {
            "\(incoming ? "in" : "out") \(connection) \(identity?.string ?? "-") \(Hex.encode([type])) \(Hex.encode(data))"
        }
    }

    /// The hub's answer to an event.
    public struct Output: Sendable {
        public var actions: [Action] = []
        public var log: [String] = []
        public var trace: [TraceRecord] = []
        /// Journal records (``ChatJournal``) to append before any action is carried out: the
        /// acknowledgements in `actions` promise that these are durable.
        public var journal: [UInt8] = []
        public init() {}
    }

    /// A queued message for one receiver.
    struct Queued {
        /// The envelope bytes as received (the parsed form is rebuilt on delivery: holding it would
        /// double the memory).
        var bytes: [UInt8]
        var sender: ThreemaID
        var messageID: UInt64
        var expiresAt: Double
        /// The address the sender used (charged with the bytes).
        var address: String
        /// The connection it was delivered on and when, while it awaits the acknowledgement.
        var sentOn: Int?
        var sentAt: Double = 0
        var charged: Int { ChatHub.chargedBytes(ofEnvelope: bytes.count) }
    }

    /// Messages and charged bytes.
    struct Usage {
        var count = 0
        var bytes = 0
    }

    struct Known {
        var key: Curve25519.KeyAgreement.PublicKey
        var lastLogin: Double
        /// Registered through the hub (journaled, may expire); false for identities given at start.
        var registered: Bool
    }

    /// The identity table a connection's `CSP.Server` looks keys up in. It holds a share of the
    /// hub's table and the connection's registration candidate only during `receive`: later
    /// registrations do not copy the table, and copies of the hub (which share this object) never
    /// see each other's state.
    final class Directory: @unchecked Sendable {
        var table: [ThreemaID: Known] = [:]
        var candidate: ThreemaContact?
    }

    struct Connection {
        var openedAt: Double
        var address: String
        /// Nil until the first bytes arrived (the preamble decision is taken then).
        var server: CSP.Server?
        var directory = Directory()
        var preamble: [UInt8] = []
        /// The identity a registration preamble announced.
        var candidate: ThreemaContact?
        var identity: ThreemaID?
        var handshakeBytes = 0
        /// When the last complete payload arrived (or the login verified).
        var lastPayloadAt: Double = 0
        /// Closing: further bytes are ignored.
        var closing = false
    }

    public private(set) var configuration: Configuration
    var known: [ThreemaID: Known] = [:]
    var connections: [Int: Connection] = [:]
    /// The established connection of each logged-in identity.
    var online: [ThreemaID: Int] = [:]
    var queues: [ThreemaID: [Queued]] = [:]
    var receiverUsage: [ThreemaID: Usage] = [:]
    var senderUsage: [ThreemaID: Usage] = [:]
    var addressUsage: [String: Int] = [:]
    var registrations: RateTable
    var handshakes: RateTable
    var globalHandshakes: RateTable
    /// Charged bytes in all queues.
    public private(set) var totalQueuedBytes = 0
    /// Messages in all queues.
    public private(set) var totalQueuedCount = 0
    /// Messages delivered and awaiting acknowledgement.
    var inFlight = 0
    var lastQueueSweep = -Double.infinity
    var lastIdentitySweep = -Double.infinity
    /// Counters for the summary line.
    public private(set) var messagesRouted = 0
    public private(set) var messagesRefused = 0
    public private(set) var messagesExpired = 0
    public private(set) var messagesReleasedUnacknowledged = 0
    public private(set) var violations = 0
    public private(set) var handshakesRefused = 0
    public private(set) var registrationsRefused = 0
    public private(set) var identitiesExpired = 0
    /// The source of the connections' temporary keys and cookies.
    private var rng: any RandomNumberGenerator

    /// A hub with known identities (never expired, never journaled); `random` makes the
    /// connections' temporary keys and cookies (the system generator unless a test or fuzz target
    /// needs a repeatable one).
    public init(configuration: Configuration, identities: [ThreemaID: Curve25519.KeyAgreement.PublicKey] = [:],
                random: any RandomNumberGenerator = SecureRandom()) {
        self.configuration = configuration
        for (id, key) in identities { known[id] = Known(key: key, lastLogin: 0, registered: false) }
        registrations = RateTable(maxKeys: configuration.maxTrackedAddresses)
        handshakes = RateTable(maxKeys: configuration.maxTrackedAddresses)
        globalHandshakes = RateTable(maxKeys: 1)
        rng = random
    }

    /// The server's public key (clients pin it).
    public var publicKey: Curve25519.KeyAgreement.PublicKey { configuration.permanentKey.publicKey }

    /// The known identities and their keys (a copy: for tests and tools).
    public var identities: [ThreemaID: Curve25519.KeyAgreement.PublicKey] { known.mapValues { $0.key } }

    /// How many identities are known.
    public var identityCount: Int { known.count }

    /// Queued messages of an identity, delivered or not (tests, the summary).
    public func queuedCount(of id: ThreemaID) -> Int { queues[id]?.count ?? 0 }

    /// Charged bytes queued by a sender, for all receivers.
    public func queuedBytes(from sender: ThreemaID) -> Int { senderUsage[sender]?.bytes ?? 0 }

    /// The identity logged in on a connection.
    public func identity(of connection: Int) -> ThreemaID? { connections[connection]?.identity }

    /// Received bytes held for a connection (an incomplete frame or handshake step), for the
    /// socket owner's memory budget.
    public func bufferedByteCount(of connection: Int) -> Int {
        guard let c = connections[connection] else { return 0 }
        if let t = c.server?.transport { return t.bufferedByteCount }
        return min(c.handshakeBytes, CSP.loginBoxLength + CSP.maximumExtensionsLength) + c.preamble.count
    }

    /// A new connection from `address` (an IPv4 address as text: the key of the per-address limits).
    public mutating func open(_ connection: Int, address: String = "local", now: Double) {
        connections[connection] = Connection(openedAt: now, address: address)
    }

    /// The connection is gone (closed by either side): forgotten; its identity goes offline.
    /// Messages delivered on it and not acknowledged are delivered again on the next login.
    public mutating func close(_ connection: Int) {
        guard let c = connections.removeValue(forKey: connection) else { return }
        if let id = c.identity {
            if online[id] == connection { online[id] = nil }
            returnUnacknowledged(of: id, on: connection)
        }
    }

    /// Timers at `now`: connections whose handshake did not complete in time or that sent no
    /// complete payload for the idle timeout are closed; undelivered messages past their lifetime
    /// and delivered ones past the acknowledgement window are released; registered identities past
    /// their lifetime are forgotten. Log lines and journal records as for any event.
    public mutating func expire(now: Double) -> Output {
        var out = Output()
        for (fd, c) in connections where !c.closing {
            if c.identity == nil, now - c.openedAt > configuration.handshakeTimeout {
                closeConnection(fd, "handshake not completed within \(Int(configuration.handshakeTimeout)) s", &out)
            } else if c.identity != nil, let idle = configuration.idleTimeout, now - c.lastPayloadAt > idle {
                closeConnection(fd, "no complete payload for \(Int(idle)) s", &out)
            }
        }
        if now - lastQueueSweep >= 5 || now < lastQueueSweep {
            lastQueueSweep = now
            sweepQueues(now: now, &out)
        }
        if now - lastIdentitySweep >= 60 || now < lastIdentitySweep {
            lastIdentitySweep = now
            sweepIdentities(now: now, &out)
        }
        return out
    }

    /// Bytes from a connection.
    public mutating func receive(_ bytes: [UInt8], from connection: Int, now: Double) -> Output {
        var out = Output()
        // Taken out of the table while it changes, so its buffers are not copied on write.
        guard var c = connections.removeValue(forKey: connection) else { return out }
        guard !c.closing else { connections[connection] = c; return out }
        var input = bytes[...]
        if c.server == nil {
            // The optional registration preamble (only with registerOnLogin), then the CSP handshake.
            if configuration.registerOnLogin {
                let want = ChatHub.registrationLength - c.preamble.count
                let head = input.prefix(want)
                let magicSoFar = c.preamble + head
                let n = min(magicSoFar.count, ChatHub.registrationMagic.count)
                if magicSoFar.prefix(n).elementsEqual(ChatHub.registrationMagic.prefix(n)) {
                    c.preamble += head
                    input = input.dropFirst(head.count)
                    if c.preamble.count < ChatHub.registrationLength {
                        connections[connection] = c
                        return out
                    }
                    let p = c.preamble
                    guard let id = try? ThreemaID(bytes: p[16..<24]),
                          let contact = try? ThreemaContact(id: id, publicKey: p[24..<56]) else {
                        connections[connection] = c
                        closeConnection(connection, "malformed registration preamble", &out, violation: true)
                        return out
                    }
                    c.candidate = contact
                } else if !c.preamble.isEmpty {
                    connections[connection] = c
                    closeConnection(connection, "malformed registration preamble", &out, violation: true)
                    return out
                }
            }
            if input.isEmpty {
                connections[connection] = c
                return out
            }
            // The handshake costs the server a key pair and two key agreements: rate-limited per
            // address and in total before any of it is done.
            if !admitHandshake(c.address, now: now) {
                handshakesRefused += 1
                connections[connection] = c
                closeConnection(connection, "handshake refused: rate limit for \(c.address) or the server reached", &out)
                return out
            }
            let directory = c.directory
            let lookUp: @Sendable (ThreemaID) -> Curve25519.KeyAgreement.PublicKey? = { id in
                if let k = directory.table[id] { return k.key }
                if let candidate = directory.candidate, candidate.id == id { return candidate.publicKey }
                return nil
            }
            c.server = CSP.Server(configuration: .init(permanentKey: configuration.permanentKey, lookUpIdentity: lookUp),
                                  using: &rng)
        }
        c.handshakeBytes += c.identity == nil ? input.count : 0
        let result: CSP.Output
        if c.identity == nil {
            c.directory.table = known
            c.directory.candidate = c.candidate
        }
        do {
            result = try c.server!.receive(input)
            c.directory.table = [:]   // before any registration below changes the table
            c.directory.candidate = nil
        } catch {
            c.directory.table = [:]
            c.directory.candidate = nil
            connections[connection] = c
            closeConnection(connection, "protocol violation: \(error)", &out, violation: true)
            return out
        }
        connections[connection] = c
        if !result.outgoing.isEmpty { out.actions.append(.send(connection, result.outgoing)) }
        for event in result.events {
            guard let now1 = connections[connection], !now1.closing else { break }
            switch event {
            case .loggedIn(let login): loggedIn(connection, login, now: now, &out)
            case .payload(let p):
                connections[connection]?.lastPayloadAt = now
                handle(p, from: connection, now: now, &out)
            case .loginAcknowledged: break
            }
        }
        return out
    }

    private mutating func admitHandshake(_ address: String, now: Double) -> Bool {
        if let r = configuration.handshakeRate, !handshakes.take(address, r, now: now) { return false }
        if let g = configuration.globalHandshakeRate, !globalHandshakes.take("", g, now: now) { return false }
        return true
    }

    // MARK: Events

    private mutating func loggedIn(_ connection: Int, _ login: CSP.Login, now: Double, _ out: inout Output) {
        let id = login.identity
        let address = connections[connection]!.address
        if let k = known[id] {
            guard k.key == login.publicKey else {
                closeConnection(connection, "\(id) was registered with another key meanwhile", &out, violation: true)
                return
            }
            if k.registered {
                known[id]!.lastLogin = now
                var p = id.bytes
                ChatJournal.appendTime(now, to: &p)
                out.journal += ChatJournal.record(.login, p)
            }
        } else {
            guard known.count < configuration.maxIdentities else {
                registrationsRefused += 1
                closeConnection(connection, "registration of \(id) refused: \(configuration.maxIdentities) identities known",
                                &out, closeError: "identity limit reached")
                return
            }
            if let r = configuration.registrationRate, !registrations.take(address, r, now: now) {
                registrationsRefused += 1
                closeConnection(connection, "registration of \(id) refused: registration rate limit for \(address) reached",
                                &out, closeError: "registration rate limit reached, try again later")
                return
            }
            known[id] = Known(key: login.publicKey, lastLogin: now, registered: true)
            var p = id.bytes + login.publicKey.rawRepresentation
            ChatJournal.appendTime(now, to: &p)
            out.journal += ChatJournal.record(.identity, p)
            out.log.append("registered \(id)")
        }
        connections[connection]!.identity = id
        connections[connection]!.lastPayloadAt = now
        if let old = online[id], old != connection {
            // The newer login wins; the older connection is told and closed.
            sendPayload(.closeError(canReconnect: false, message: "another connection logged in as \(id)"), to: old, &out)
            closeConnection(old, "replaced by a new login of \(id) on connection \(connection)", &out)
        }
        online[id] = connection
        out.log.append("connection \(connection): \(id) logged in")
        // The queue: every message not yet released, in order, then queue-send-complete.
        var payloads: [CSP.Payload] = []
        if var q = queues[id] {
            for i in q.indices {
                guard let m = try? CSP.Message(q[i].bytes) else { continue }  // parsed when it was queued
                if q[i].sentOn == nil { inFlight += 1 }
                q[i].sentOn = connection
                q[i].sentAt = now
                payloads.append(.incomingMessage(m))
            }
            queues[id] = q
        }
        payloads.append(.queueSendComplete)
        sendPayloads(payloads, to: connection, &out)
    }

    private mutating func handle(_ payload: CSP.Payload, from connection: Int, now: Double, _ out: inout Output) {
        guard let me = connections[connection]?.identity else { return }
        out.trace.append(TraceRecord(incoming: true, connection: connection, identity: me, type: payload.type, data: payload.data))
        switch payload {
        case .echoRequest(let data):
            sendPayload(.echoResponse(data), to: connection, &out)
        case .echoResponse:
            break
        case .outgoingMessage(let m):
            guard m.sender == me else {
                closeConnection(connection, "protocol violation: outgoing message with sender \(m.sender) from \(me)", &out,
                                violation: true)
                return
            }
            route(m, from: connection, now: now, &out)
        case .incomingMessageAck(let ack):
            guard let q = queues[me], let i = q.firstIndex(where: { $0.sender == ack.identity && $0.messageID == ack.messageID })
            else { return }
            release(me, at: i, &out)
        default:
            // Other container types (opaque ones a client may send) are accepted and ignored.
            break
        }
    }

    private mutating func route(_ m: CSP.Message, from connection: Int, now: Double, _ out: inout Output) {
        let to = m.receiver
        let flags = m.envelope.flags
        let address = connections[connection]!.address
        var refusal: ChatRefusal?
        if known[to] == nil {
            refusal = .unknownReceiver(to)
        } else if let target = online[to] {
            if !flags.contains(.noServerQueuing) {
                refusal = admit(m, address: address)
                if refusal == nil { enqueue(m, address: address, now: now, sentOn: target, &out) }
            }
            if refusal == nil { sendPayload(.incomingMessage(m), to: target, &out) }
        } else if !flags.contains(.noServerQueuing) {
            refusal = admit(m, address: address)
            if refusal == nil { enqueue(m, address: address, now: now, sentOn: nil, &out) }
        }
        if let refusal {
            messagesRefused += 1
            out.log.append("connection \(connection): message \(hex64(m.messageID)) from \(m.sender) refused: \(refusal)")
            sendPayload(.alert("message \(hex64(m.messageID)) refused: \(refusal)"), to: connection, &out)
            return
        }
        messagesRouted += 1
        if !flags.contains(.noServerAck) {
            sendPayload(.outgoingMessageAck(CSP.MessageAck(identity: to, messageID: m.messageID)), to: connection, &out)
        }
    }

    /// Whether a message fits every share: its receiver's, its sender's, its address's and the total.
    private func admit(_ m: CSP.Message, address: String) -> ChatRefusal? {
        let n = ChatHub.chargedBytes(ofEnvelope: m.bytes.count)
        let r = receiverUsage[m.receiver] ?? Usage()
        if r.count >= configuration.queueLimit || r.bytes + n > configuration.queueByteLimit { return .queueFull(m.receiver) }
        let s = senderUsage[m.sender] ?? Usage()
        if s.count >= configuration.senderQueueLimit || s.bytes + n > configuration.senderQueueByteLimit {
            return .senderQuota(m.sender)
        }
        if (addressUsage[address] ?? 0) + n > configuration.addressQueueByteLimit { return .addressQuota(address) }
        if totalQueuedBytes + n > configuration.totalQueueByteLimit { return .serverFull }
        return nil
    }

    private mutating func enqueue(_ m: CSP.Message, address: String, now: Double, sentOn: Int?, _ out: inout Output) {
        let q = Queued(bytes: m.bytes, sender: m.sender, messageID: m.messageID,
                       expiresAt: now + configuration.messageLifetime, address: address,
                       sentOn: sentOn, sentAt: now)
        out.journal += ChatHub.enqueueRecord(q, receiver: m.receiver)
        insert(q, for: m.receiver)
    }

    static func enqueueRecord(_ q: Queued, receiver: ThreemaID) -> [UInt8] {
        var p = receiver.bytes
        ChatJournal.appendTime(q.expiresAt, to: &p)
        let a = Array(q.address.utf8.prefix(255))
        p.append(UInt8(a.count))
        p += a
        p += q.bytes
        return ChatJournal.record(.enqueue, p)
    }

    private mutating func insert(_ q: Queued, for receiver: ThreemaID) {
        let n = q.charged
        queues[receiver, default: []].append(q)
        receiverUsage[receiver, default: Usage()].count += 1
        receiverUsage[receiver]!.bytes += n
        senderUsage[q.sender, default: Usage()].count += 1
        senderUsage[q.sender]!.bytes += n
        addressUsage[q.address, default: 0] += n
        totalQueuedBytes += n
        totalQueuedCount += 1
        if q.sentOn != nil { inFlight += 1 }
    }

    /// Removes message `i` of `receiver`'s queue, with its charges and a journal record.
    private mutating func release(_ receiver: ThreemaID, at i: Int, _ out: inout Output) {
        guard var q = queues[receiver], q.indices.contains(i) else { return }
        let removed = q.remove(at: i)
        queues[receiver] = q.isEmpty ? nil : q
        uncharge(removed, receiver: receiver)
        var p = receiver.bytes + removed.sender.bytes
        ChatJournal.appendLE(removed.messageID, to: &p)
        out.journal += ChatJournal.record(.remove, p)
    }

    private mutating func uncharge(_ q: Queued, receiver: ThreemaID) {
        let n = q.charged
        func drop(_ u: inout Usage?) {
            guard var v = u else { return }
            v.count -= 1
            v.bytes -= n
            u = v.count <= 0 ? nil : v
        }
        drop(&receiverUsage[receiver])
        drop(&senderUsage[q.sender])
        let a = (addressUsage[q.address] ?? n) - n
        addressUsage[q.address] = a <= 0 ? nil : a
        totalQueuedBytes -= n
        totalQueuedCount -= 1
        if q.sentOn != nil { inFlight -= 1 }
    }

    /// Messages delivered on `connection` and not acknowledged become undelivered again.
    private mutating func returnUnacknowledged(of id: ThreemaID, on connection: Int) {
        guard var q = queues[id] else { return }
        for i in q.indices where q[i].sentOn == connection {
            q[i].sentOn = nil
            inFlight -= 1
        }
        queues[id] = q
    }

    private mutating func sweepQueues(now: Double, _ out: inout Output) {
        var expired = 0, released = 0
        for receiver in Array(queues.keys) {
            var i = 0
            while let q = queues[receiver], i < q.count {
                let e = q[i]
                if e.sentOn != nil && now - e.sentAt > configuration.acknowledgementWindow {
                    release(receiver, at: i, &out)
                    released += 1
                } else if e.sentOn == nil && now > e.expiresAt {
                    release(receiver, at: i, &out)
                    expired += 1
                } else {
                    i += 1
                }
            }
        }
        messagesExpired += expired
        messagesReleasedUnacknowledged += released
        if expired > 0 { out.log.append("\(expired) undelivered messages expired (lifetime \(Int(configuration.messageLifetime)) s)") }
        if released > 0 {
            out.log.append("\(released) delivered messages released without acknowledgement "
                           + "(window \(Int(configuration.acknowledgementWindow)) s)")
        }
    }

    private mutating func sweepIdentities(now: Double, _ out: inout Output) {
        var forgotten = 0
        for (id, k) in known where k.registered && online[id] == nil && now - k.lastLogin > configuration.identityLifetime {
            forget(id, &out)
            forgotten += 1
        }
        identitiesExpired += forgotten
        if forgotten > 0 {
            out.log.append("\(forgotten) registered identities expired (no login for \(Int(configuration.identityLifetime)) s)")
        }
    }

    /// Forgets a registered identity and its queue (journaled).
    private mutating func forget(_ id: ThreemaID, _ out: inout Output) {
        known[id] = nil
        for q in queues.removeValue(forKey: id) ?? [] { uncharge(q, receiver: id) }
        out.journal += ChatJournal.record(.forget, id.bytes)
    }

    // MARK: Durable state

    /// The journal that recreates the hub's durable state: the registered identities and every
    /// queued message (as undelivered), with the file header. The socket owner writes it to a
    /// temporary file and renames it over the journal.
    public func journalSnapshot() -> [UInt8] {
        var out = ChatJournal.header
        for (id, k) in known.sorted(by: { $0.key < $1.key }) where k.registered {
            var p = id.bytes + k.key.rawRepresentation
            ChatJournal.appendTime(k.lastLogin, to: &p)
            out += ChatJournal.record(.identity, p)
        }
        for (receiver, q) in queues.sorted(by: { $0.key < $1.key }) {
            for e in q { out += ChatHub.enqueueRecord(e, receiver: receiver) }
        }
        return out
    }

    /// About how many bytes ``journalSnapshot()`` would take (the socket owner compacts the journal
    /// when the file has grown well past it).
    public var journalLiveByteCount: Int {
        ChatJournal.header.count + 57 * known.count + totalQueuedCount * 40 + totalQueuedBytes
    }

    /// Replays a journal file into a hub that has no connections yet. Records that no longer
    /// apply are skipped: messages past their lifetime, records of an identity given at start with
    /// another key, a message for an unknown receiver. Returns nil when the bytes are not a journal.
    public mutating func restore(journal file: [UInt8], now: Double) -> ChatRestoreSummary? {
        guard let (records, valid) = ChatJournal.parse(file) else { return nil }
        var s = ChatRestoreSummary()
        // The live paths apply forget and remove records; what they would journal is already there.
        var replayed = Output()
        s.validLength = valid
        s.ignoredTailBytes = file.count - valid
        for (kind, p) in records {
            let b = p.startIndex
            switch kind {
            case .identity:
                guard p.count == 48, let id = try? ThreemaID(bytes: p[b..<(b + 8)]),
                      let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: Array(p[(b + 8)..<(b + 40)])),
                      let t = ChatJournal.readTime(p, b + 40) else { continue }
                if let k = known[id], !k.registered { continue }   // the file at start wins
                known[id] = Known(key: key, lastLogin: t, registered: true)
            case .forget:
                guard p.count == 8, let id = try? ThreemaID(bytes: p), known[id]?.registered == true else { continue }
                forget(id, &replayed)
            case .login:
                guard p.count == 16, let id = try? ThreemaID(bytes: p[b..<(b + 8)]), let t = ChatJournal.readTime(p, b + 8),
                      known[id]?.registered == true else { continue }
                known[id]!.lastLogin = t
            case .enqueue:
                guard p.count >= 17, let receiver = try? ThreemaID(bytes: p[b..<(b + 8)]),
                      let expires = ChatJournal.readTime(p, b + 8) else { continue }
                let alen = Int(p[b + 16])
                guard p.count >= 17 + alen, known[receiver] != nil,
                      let m = try? CSP.Message(Array(p[(b + 17 + alen)...])), m.receiver == receiver else { continue }
                let address = String(decoding: p[(b + 17)..<(b + 17 + alen)], as: UTF8.self)
                insert(Queued(bytes: m.bytes, sender: m.sender, messageID: m.messageID, expiresAt: expires,
                              address: address, sentOn: nil), for: receiver)
            case .remove:
                guard p.count == 24, let receiver = try? ThreemaID(bytes: p[b..<(b + 8)]),
                      let sender = try? ThreemaID(bytes: p[(b + 8)..<(b + 16)]) else { continue }
                let id = ChatJournal.readLE64(p, b + 16)
                guard let i = queues[receiver]?.firstIndex(where: { $0.sender == sender && $0.messageID == id }) else { continue }
                release(receiver, at: i, &replayed)
            }
            s.records += 1
        }
        // Lifetimes that ended while the server was down.
        for receiver in Array(queues.keys) {
            let before = queues[receiver]!
            let keep = before.filter { $0.expiresAt >= now }
            for e in before where e.expiresAt < now { uncharge(e, receiver: receiver); s.expired += 1 }
            queues[receiver] = keep.isEmpty ? nil : keep
        }
        s.identities = known.values.filter(\.registered).count
        s.messages = totalQueuedCount
        return s
    }

    // MARK: Output helpers

    private mutating func sendPayload(_ p: CSP.Payload, to connection: Int, _ out: inout Output) {
        sendPayloads([p], to: connection, &out)
    }

    private mutating func sendPayloads(_ ps: [CSP.Payload], to connection: Int, _ out: inout Output) {
        guard var c = connections.removeValue(forKey: connection) else { return }
        guard !c.closing, c.server != nil else { connections[connection] = c; return }
        do {
            let bytes = try c.server!.send(contentsOf: ps)
            connections[connection] = c
            for p in ps {
                out.trace.append(TraceRecord(incoming: false, connection: connection, identity: c.identity, type: p.type, data: p.data))
            }
            out.actions.append(.send(connection, bytes))
        } catch {
            connections[connection] = c
            closeConnection(connection, "cannot send: \(error)", &out)
        }
    }

    private mutating func closeConnection(_ connection: Int, _ reason: String, _ out: inout Output,
                                          violation: Bool = false, closeError: String? = nil) {
        guard var c = connections[connection], !c.closing else { return }
        if let closeError { sendPayload(.closeError(canReconnect: false, message: closeError), to: connection, &out) }
        c.closing = true
        if let id = c.identity, online[id] == connection {
            online[id] = nil
            returnUnacknowledged(of: id, on: connection)
        }
        connections[connection] = c
        if violation { violations += 1 }
        out.log.append("connection \(connection): closing (\(reason))")
        out.actions.append(.close(connection, reason: reason))
    }
}

private func hex64(_ v: UInt64) -> String { Hex.encode(withUnsafeBytes(of: v.bigEndian) { Array($0) }) }
