// The loopback chat server's logic, sans I/O: known identities, one `CSP.Server` per connection,
// routing of end-to-end messages between logged-in identities, bounded offline queues, echo, and
// replacement on a second login. `rampart threema serve` owns the sockets and feeds bytes in; the
// hub answers with actions (bytes for a connection, close a connection with a reason), log lines
// and trace records (Docs/Threema.md §9.5).

import Rampart
import RampartThreema

/// What the hub refuses an outgoing message for (reported to the sender as an `alert`, and logged;
/// the message is not acknowledged).
public enum ChatRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The receiver is not a known identity.
    case unknownReceiver(ThreemaID)
    /// The receiver's queue holds its maximum number of messages or bytes.
    case queueFull(ThreemaID)
    /// All queues together hold the hub's total byte budget.
    case serverFull

    public var description: String {
        switch self {
        case .unknownReceiver(let id): return "unknown receiver \(id)"
        case .queueFull(let id): return "the queue of \(id) is full"
        case .serverFull: return "the server's queue budget is exhausted"
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
        /// Messages queued per identity at most (delivered or not, until acknowledged).
        public var queueLimit = 100
        /// Envelope bytes queued per identity at most.
        public var queueByteLimit = 512 * 1024
        /// Envelope bytes queued for all identities together at most.
        public var totalQueueByteLimit = 64 << 20
        /// Identities known at most (registration is refused beyond it).
        public var maxIdentities = 100_000
        /// Seconds a connection may take from its first byte to a verified login.
        public var handshakeTimeout = 10.0

        /// A configuration with default limits.
        public init(permanentKey: Curve25519.KeyAgreement.PrivateKey) { self.permanentKey = permanentKey }
    }

    /// The 16 bytes that start a registration preamble: `magic ‖ identity (8) ‖ public key (32)`.
    public static let registrationMagic: [UInt8] = Array("rampart-register".utf8)
    /// The length of a registration preamble.
    public static let registrationLength = 16 + 8 + 32

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
        public init() {}
    }

    /// A queued message for one receiver (sent or not: it stays until acknowledged, and every login
    /// gets the whole queue).
    struct Queued {
        var message: CSP.Message
    }

    struct Connection {
        var openedAt: Double
        /// Nil until the first bytes arrived (the preamble decision is taken then).
        var server: CSP.Server?
        var preamble: [UInt8] = []
        var candidate: ThreemaContact?
        var identity: ThreemaID?
        var handshakeBytes = 0
        /// Closing: further bytes are ignored.
        var closing = false
    }

    public private(set) var configuration: Configuration
    /// The known identities.
    public private(set) var identities: [ThreemaID: Curve25519.KeyAgreement.PublicKey]
    var connections: [Int: Connection] = [:]
    /// The established connection of each logged-in identity.
    var online: [ThreemaID: Int] = [:]
    var queues: [ThreemaID: [Queued]] = [:]
    var queueBytes: [ThreemaID: Int] = [:]
    /// Envelope bytes in all queues.
    public private(set) var totalQueuedBytes = 0
    /// Counters for the summary line.
    public private(set) var messagesRouted = 0
    public private(set) var messagesRefused = 0
    public private(set) var violations = 0
    /// The source of the connections' temporary keys and cookies.
    private var rng: any RandomNumberGenerator

    /// A hub with known identities; `random` makes the connections' temporary keys and cookies (the
    /// system generator unless a test or fuzz target needs a repeatable one).
    public init(configuration: Configuration, identities: [ThreemaID: Curve25519.KeyAgreement.PublicKey] = [:],
                random: any RandomNumberGenerator = SecureRandom()) {
        self.configuration = configuration
        self.identities = identities
        rng = random
    }

    /// The server's public key (clients pin it).
    public var publicKey: Curve25519.KeyAgreement.PublicKey { configuration.permanentKey.publicKey }

    /// Queued messages of an identity (tests, the summary).
    public func queuedCount(of id: ThreemaID) -> Int { queues[id]?.count ?? 0 }

    /// The identity logged in on a connection.
    public func identity(of connection: Int) -> ThreemaID? { connections[connection]?.identity }

    /// Received bytes held for a connection (an incomplete frame or handshake step), for the
    /// socket owner's memory budget.
    public func bufferedByteCount(of connection: Int) -> Int {
        guard let c = connections[connection] else { return 0 }
        if let t = c.server?.transport { return t.bufferedByteCount }
        return min(c.handshakeBytes, CSP.loginBoxLength + CSP.maximumExtensionsLength) + c.preamble.count
    }

    /// A new connection.
    public mutating func open(_ connection: Int, now: Double) {
        connections[connection] = Connection(openedAt: now)
    }

    /// The connection is gone (closed by either side): forgotten; its identity goes offline.
    public mutating func close(_ connection: Int) {
        guard let c = connections.removeValue(forKey: connection) else { return }
        // Messages sent on it and not acknowledged go out again on the next login.
        if let id = c.identity, online[id] == connection { online[id] = nil }
    }

    /// Connections whose handshake did not complete in time: closed, with a log line each.
    public mutating func expire(now: Double) -> Output {
        var out = Output()
        for (fd, c) in connections where !c.closing && c.identity == nil && now - c.openedAt > configuration.handshakeTimeout {
            closeConnection(fd, "handshake not completed within \(Int(configuration.handshakeTimeout)) s", &out)
        }
        return out
    }

    /// Bytes from a connection.
    public mutating func receive(_ bytes: [UInt8], from connection: Int, now: Double) -> Output {
        var out = Output()
        guard var c = connections[connection], !c.closing else { return out }
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
            let known = identities
            let candidate = c.candidate
            let lookUp: @Sendable (ThreemaID) -> Curve25519.KeyAgreement.PublicKey? = { id in
                if let key = known[id] { return key }
                if let candidate, candidate.id == id { return candidate.publicKey }
                return nil
            }
            c.server = CSP.Server(configuration: .init(permanentKey: configuration.permanentKey, lookUpIdentity: lookUp),
                                  using: &rng)
            if input.isEmpty {
                connections[connection] = c
                return out
            }
        }
        c.handshakeBytes += c.identity == nil ? input.count : 0
        let result: CSP.Output
        do {
            result = try c.server!.receive(input)
        } catch {
            connections[connection] = c
            closeConnection(connection, "protocol violation: \(error)", &out, violation: true)
            return out
        }
        connections[connection] = c
        if !result.outgoing.isEmpty { out.actions.append(.send(connection, result.outgoing)) }
        for event in result.events {
            guard let now = connections[connection], !now.closing else { break }
            switch event {
            case .loggedIn(let login): loggedIn(connection, login, &out)
            case .payload(let p): handle(p, from: connection, &out)
            case .loginAcknowledged: break
            }
        }
        return out
    }

    // MARK: Events

    private mutating func loggedIn(_ connection: Int, _ login: CSP.Login, _ out: inout Output) {
        let id = login.identity
        if let key = identities[id] {
            guard key == login.publicKey else {
                closeConnection(connection, "\(id) was registered with another key meanwhile", &out, violation: true)
                return
            }
        } else {
            guard identities.count < configuration.maxIdentities else {
                closeConnection(connection, "registration of \(id) refused: \(configuration.maxIdentities) identities known",
                                &out, closeError: "identity limit reached")
                return
            }
            identities[id] = login.publicKey
            out.log.append("registered \(id)")
        }
        connections[connection]!.identity = id
        if let old = online[id], old != connection {
            // The newer login wins; the older connection is told and closed.
            sendPayload(.closeError(canReconnect: false, message: "another connection logged in as \(id)"), to: old, &out)
            closeConnection(old, "replaced by a new login of \(id) on connection \(connection)", &out)
        }
        online[id] = connection
        out.log.append("connection \(connection): \(id) logged in")
        // The queue: every message not yet acknowledged, in order, then queue-send-complete.
        var payloads: [CSP.Payload] = []
        for q in queues[id] ?? [] { payloads.append(.incomingMessage(q.message)) }
        payloads.append(.queueSendComplete)
        sendPayloads(payloads, to: connection, &out)
    }

    private mutating func handle(_ payload: CSP.Payload, from connection: Int, _ out: inout Output) {
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
            route(m, from: connection, &out)
        case .incomingMessageAck(let ack):
            guard var q = queues[me], let i = q.firstIndex(where: { $0.message.sender == ack.identity && $0.message.messageID == ack.messageID })
            else { return }
            let removed = q.remove(at: i)
            queues[me] = q.isEmpty ? nil : q
            let n = removed.message.bytes.count
            queueBytes[me] = (queueBytes[me] ?? n) - n
            if queueBytes[me] == 0 { queueBytes[me] = nil }
            totalQueuedBytes -= n
        default:
            // Other container types (opaque ones a client may send) are accepted and ignored.
            break
        }
    }

    private mutating func route(_ m: CSP.Message, from connection: Int, _ out: inout Output) {
        let to = m.receiver
        let flags = m.envelope.flags
        var refusal: ChatRefusal?
        let n = m.bytes.count
        if identities[to] == nil {
            refusal = .unknownReceiver(to)
        } else if let target = online[to] {
            if !flags.contains(.noServerQueuing) {
                refusal = admit(n, for: to)
                if refusal == nil { enqueue(m, for: to) }
            }
            if refusal == nil { sendPayload(.incomingMessage(m), to: target, &out) }
        } else if !flags.contains(.noServerQueuing) {
            refusal = admit(n, for: to)
            if refusal == nil { enqueue(m, for: to) }
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

    private func admit(_ n: Int, for id: ThreemaID) -> ChatRefusal? {
        if (queues[id]?.count ?? 0) >= configuration.queueLimit || (queueBytes[id] ?? 0) + n > configuration.queueByteLimit {
            return .queueFull(id)
        }
        if totalQueuedBytes + n > configuration.totalQueueByteLimit { return .serverFull }
        return nil
    }

    private mutating func enqueue(_ m: CSP.Message, for id: ThreemaID) {
        queues[id, default: []].append(Queued(message: m))
        queueBytes[id, default: 0] += m.bytes.count
        totalQueuedBytes += m.bytes.count
    }

    // MARK: Output helpers

    private mutating func sendPayload(_ p: CSP.Payload, to connection: Int, _ out: inout Output) {
        sendPayloads([p], to: connection, &out)
    }

    private mutating func sendPayloads(_ ps: [CSP.Payload], to connection: Int, _ out: inout Output) {
        guard var c = connections[connection], !c.closing, c.server != nil else { return }
        do {
            let bytes = try c.server!.send(contentsOf: ps)
            connections[connection] = c
            for p in ps {
                out.trace.append(TraceRecord(incoming: false, connection: connection, identity: c.identity, type: p.type, data: p.data))
            }
            out.actions.append(.send(connection, bytes))
        } catch {
            closeConnection(connection, "cannot send: \(error)", &out)
        }
    }

    private mutating func closeConnection(_ connection: Int, _ reason: String, _ out: inout Output,
                                          violation: Bool = false, closeError: String? = nil) {
        guard var c = connections[connection], !c.closing else { return }
        if let closeError { sendPayload(.closeError(canReconnect: false, message: closeError), to: connection, &out) }
        c.closing = true
        if let id = c.identity, online[id] == connection { online[id] = nil }
        connections[connection] = c
        if violation { violations += 1 }
        out.log.append("connection \(connection): closing (\(reason))")
        out.actions.append(.close(connection, reason: reason))
    }
}

private func hex64(_ v: UInt64) -> String { Hex.encode(withUnsafeBytes(of: v.bigEndian) { Array($0) }) }
