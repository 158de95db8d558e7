// `rampart threema client-test`: pairs of Swift CSP clients, one thread per pair, through a running
// `rampart threema serve --register-on-login`: plain end-to-end messages with metadata boxes, an Ibex
// session (Init, Accept, 4DH both ways), a receiver that goes offline while messages are queued for it,
// its reconnection and the queue, more talking. Every plaintext must arrive exactly once and in order.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartThreema
import RampartThreemaChatServer

let threemaClientTestUsage = """
usage: rampart threema client-test --port P --server-key HEX [--pairs N] [--messages N] [--marker S]
                                   [--timeout S] [--duration S]
       rampart threema client-test --port P --server-key HEX --probe oversize|slow-reader
       rampart threema client-test --port P --server-key HEX --probe queue-flood [--receivers N]
                                   [--count N] [--size N]
       rampart threema client-test --port P --server-key HEX --probe register-flood [--count N]
       rampart threema client-test --port P --server-key HEX --probe idle [--idle S]
       rampart threema client-test --port P --server-key HEX --probe store|fetch --state FILE
                                   [--count N]
       rampart threema client-test --port P --server-key HEX --side a|b --identities FILE --state FILE
                                   [--messages N] [--burst N] [--timeout S]
       (every form also takes --source ADDRESS: connect from that 127.x.y.z address)

  Runs N pairs (default 1) of clients concurrently (a thread per pair) against
  `rampart threema serve --register-on-login` on 127.0.0.1:P, pinning --server-key (64 hex digits).
  Per pair: two fresh identities register and log in; N messages (default 5) each way as plain
  end-to-end messages (metadata box); an Ibex session (Init and a 2DH message, Accept, then N 4DH
  messages each way); the receiver disconnects, N messages are queued for it, it reconnects and
  receives them before queue-send-complete; N more each way, repeated until --duration seconds
  have passed since the start (default 0: once). Every message is acknowledged by the
  server and by the receiver. Each plaintext is `MARKER-m<pair>-<direction>-<n>` (--marker, default
  random); one echo request per pair carries `MARKER-echo` (a control for trace checks).
  Prints one summary line; exit status 1 unless every plaintext arrived exactly once and in order.

  --probe registers and logs in a fresh identity, then misbehaves: `oversize` sends a frame length
  prefix of 65535 (over the 8192-byte limit); `slow-reader` sends 8000-byte echo requests and never
  reads the answers. Exit status 0 when the server closed the connection (within --timeout).

  Attacks and durability checks (Scripts/threema-chat-test.sh), each printing one `probe` line:
  `queue-flood` registers --receivers throwaway identities (default 131) that then stay offline,
  and one sender sends them --count envelopes each (default 64) of about --size bytes (default
  8000): the line counts the server's acks and refusals. `register-flood` registers --count fresh
  identities (default 1000) one after another and counts the registrations the server refused.
  `idle` logs in, stays silent for --idle seconds (default 10), then needs an echo answered.
  `store` registers two identities (kept in --state FILE, secret keys in hex, mode 0600; reused
  when FILE exists), the receiver leaves, and the sender queues --count texts (default 20) for it,
  printing how many the server acknowledged even if the server dies meanwhile; `fetch` logs the
  receiver in without registering, acknowledges everything queued and prints how many arrived;
  exit status 1 if any arrived twice or out of order.

  --side runs one party of a conversation that survives being killed (SIGKILL included) at any
  point and started again with the same options: the two identities are in --identities FILE
  (`ID SECRET-HEX` per line, mode 0600; the first party to start creates it), this party's Ibex
  sessions, nonce store, progress and the sealed messages the server has not acknowledged are in
  --state FILE (written atomically before anything it describes reaches the server; mode 0600; not
  encrypted: keep it private). Party a starts the Ibex session; both send --messages texts (default
  5, at most 100000) `a #n` / `b #n` through Ibex in bursts of --burst (default 10), a first; each checks that every
  text of the other arrives once and in order. Exit status 0 once it has sent and received them all
  (`restarts: N` in its line).
"""

/// The loopback source address of every connection (`--source`), host order; nil: the default.
nonisolated(unsafe) private var chatClientSource: UInt32?

/// One pair's outcome.
private struct PairOutcome {
    var delivered = 0
    var expected = 0
    var failure: String?
}

/// Results written by the pair threads (each its own slot, through a fixed buffer: no shared array
/// is mutated) and read after they are joined.
private final class Outcomes: @unchecked Sendable {
    let slots: UnsafeMutableBufferPointer<PairOutcome>
    init(_ n: Int) {
        slots = .allocate(capacity: n)
        slots.initialize(repeating: PairOutcome())
    }
    deinit {
        slots.deinitialize()
        slots.deallocate()
    }
    var items: [PairOutcome] { Array(slots) }
}

private final class ThreadBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

#if canImport(Glibc)
private typealias ThreadHandle = pthread_t
#else
private typealias ThreadHandle = pthread_t?
#endif

private func startThread(_ body: @escaping () -> Void) -> ThreadHandle? {
    #if canImport(Glibc)
    var tid = pthread_t()
    #else
    var tid: pthread_t? = nil
    #endif
    let arg = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    let r = pthread_create(&tid, nil, { p in
        Unmanaged<ThreadBody>.fromOpaque(p!).takeRetainedValue().run()
        return nil
    }, arg)
    guard r == 0 else { Unmanaged<ThreadBody>.fromOpaque(arg).release(); return nil }
    return tid
}

private func joinThread(_ t: ThreadHandle) {
    #if canImport(Glibc)
    pthread_join(t, nil)
    #else
    pthread_join(t!, nil)
    #endif
}

private struct DriverFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// One party of a pair.
private struct Party {
    let name: String
    let identity: ThreemaIdentity
    let peer: ThreemaContact
    let keys: PairKeys
    var ibex: Ibex.Processor<Ibex.InMemorySessionStore>
    var nonces = InMemoryNonceStore()
    var fd: Int32 = -1
    var client: CSP.Client?
    var loggedIn = false
    var queueComplete = false
    var deliveredAtQueueComplete = 0
    var delivered: [String] = []
    var pendingAcks: Set<UInt64> = []
    var echoes = 0
    var rng = SecureRandom()
    /// Probes: alerts and acknowledgements are counted instead of failing the run.
    var tolerant = false
    var alerts: [String] = []
    var acked = 0

    init(name: String, identity: ThreemaIdentity, peer: ThreemaContact) throws {
        self.name = name
        self.identity = identity
        self.peer = peer
        keys = try PairKeys(identity: identity, contact: peer)
        ibex = Ibex.Processor(identity: identity, store: Ibex.InMemorySessionStore())
    }

    var connected: Bool { fd >= 0 }

    mutating func connect(port: UInt16, serverKey: Curve25519.KeyAgreement.PublicKey, register: Bool) throws {
        fd = try Socket.connect(port: port, source: chatClientSource)
        let (c, hello) = try CSP.Client.start(configuration: .init(identity: identity, permittedServerKeys: [serverKey]), using: &rng)
        client = c
        loggedIn = false
        queueComplete = false
        var first = hello
        if register {
            first = ChatHub.registrationMagic + identity.id.bytes + identity.publicKey.rawRepresentation + hello
        }
        try Socket.writeAll(fd, first)
    }

    mutating func disconnect() {
        if fd >= 0 { close(fd) }
        fd = -1
        client = nil
    }

    mutating func send(_ payload: CSP.Payload) throws {
        guard connected, client != nil else { throw DriverFailure("\(name): not connected") }
        let frame = try client!.send(payload)
        try Socket.writeAll(fd, frame)
    }

    /// Seals an e2e message to the peer and sends it; its acknowledgement is awaited.
    mutating func sendE2E(type: MessageType, body: [UInt8]) throws {
        let message = OutgoingMessage(type: type, body: body, createdAt: UInt64(wallClock().seconds) * 1000,
                                      flags: .sendPush, using: &rng)
        let wire = try EndToEnd.seal(message, from: identity, keys: keys, using: &rng)
        pendingAcks.insert(message.messageID)
        try send(.outgoingMessage(try CSP.Message(wire)))
    }

    /// A text to the peer: plain, or through Ibex (Init, Accept or refresh messages may go first).
    mutating func sendText(_ text: String, ibexOn: Bool) throws {
        guard ibexOn else { return try sendE2E(type: .text, body: Array(text.utf8)) }
        let out = try ibex.encapsulate(type: .text, body: Array(text.utf8), to: peer, now: UInt64(wallClock().seconds), using: &rng)
        for m in out { try sendE2E(type: m.type, body: try m.body()) }
    }

    /// Reads what arrived and handles it.
    mutating func readAvailable() throws {
        var buf = [UInt8](repeating: 0, count: 65_536)
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            if errno == EINTR || errno == EAGAIN { return }
            throw DriverFailure("\(name): recv: \(String(cString: strerror(errno)))")
        }
        if n == 0 { throw DriverFailure("\(name): the server closed the connection") }
        let out = try client!.receive(buf[0..<n])
        if !out.outgoing.isEmpty { try Socket.writeAll(fd, out.outgoing) }
        for e in out.events {
            switch e {
            case .loginAcknowledged: loggedIn = true
            case .loggedIn: break
            case .payload(let p): try handle(p)
            }
        }
    }

    private mutating func handle(_ p: CSP.Payload) throws {
        switch p {
        case .incomingMessage(let m):
            let opened = try m.envelope.open(as: identity, keys: keys, nonceStore: &nonces)
            try send(.incomingMessageAck(CSP.MessageAck(identity: m.sender, messageID: m.messageID)))
            if opened.container.type == .forwardSecurityEnvelope {
                let r = try ibex.receive(body: opened.container.body, from: peer, messageID: opened.messageID,
                                         now: UInt64(wallClock().seconds), using: &rng)
                switch r.event {
                case .message(_, let body, _, _): delivered.append(String(decoding: body, as: UTF8.self))
                case .sessionStarted, .sessionEstablished, .empty: break
                default: throw DriverFailure("\(name): Ibex: \(r.event)")
                }
                for reply in r.replies { try sendE2E(type: .forwardSecurityEnvelope, body: try reply.encoded()) }
            } else if opened.container.type == .text {
                delivered.append(String(decoding: opened.container.body, as: UTF8.self))
            } else {
                throw DriverFailure("\(name): unexpected e2e type \(opened.container.type.rawValue)")
            }
        case .outgoingMessageAck(let a):
            guard pendingAcks.remove(a.messageID) != nil else { throw DriverFailure("\(name): unexpected ack") }
            acked += 1
        case .queueSendComplete:
            queueComplete = true
            deliveredAtQueueComplete = delivered.count
        case .echoResponse: echoes += 1
        case .closeError(_, let text): throw DriverFailure("\(name): close-error: \(text)")
        case .alert(let text) where tolerant: alerts.append(text)
        case .alert(let text): throw DriverFailure("\(name): alert: \(text)")
        default: break
        }
    }
}

/// Reads from both parties until `done` holds (or the deadline passes).
private func pump(_ a: inout Party, _ b: inout Party, timeoutMs: Int64, _ what: String,
                  until done: (Party, Party) -> Bool) throws {
    let deadline = monotonicMilliseconds() + timeoutMs
    while !done(a, b) {
        let now = monotonicMilliseconds()
        guard now < deadline else { throw DriverFailure("timeout waiting for \(what)") }
        var fds = [pollfd(fd: a.fd, events: Int16(POLLIN), revents: 0), pollfd(fd: b.fd, events: Int16(POLLIN), revents: 0)]
        let r = poll(&fds, 2, Int32(min(200, deadline - now)))
        if r < 0 && errno != EINTR { throw DriverFailure("poll failed") }
        if fds[0].revents != 0 && a.connected { try a.readAvailable() }
        if fds[1].revents != 0 && b.connected { try b.readAvailable() }
    }
}

/// A random ID of eight capitals and digits (the fixed alphabet makes `try!` unreachable).
func randomID(_ rng: inout SecureRandom) -> ThreemaID {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
    let bytes = (0..<8).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
    return try! ThreemaID(bytes: bytes)
}

/// One pair's whole conversation; returns the delivered and expected counts.
private func runPair(_ index: Int, port: UInt16, serverKey: Curve25519.KeyAgreement.PublicKey, messages m: Int,
                     marker: String, timeoutMs: Int64, until endAt: Int64) -> PairOutcome {
    var outcome = PairOutcome()
    var rng = SecureRandom()
    var sentAB: [String] = [], sentBA: [String] = []
    var seq = 0
    func text(_ dir: String) -> String { seq += 1; return "\(marker)-m\(index)-\(dir)-\(seq)" }
    do {
        let ia = ThreemaIdentity.generate(id: randomID(&rng), using: &rng)
        let ib = ThreemaIdentity.generate(id: randomID(&rng), using: &rng)
        var a = try Party(name: "pair \(index) \(ia.id)", identity: ia, peer: ib.contact)
        var b = try Party(name: "pair \(index) \(ib.id)", identity: ib, peer: ia.contact)
        defer { a.disconnect(); b.disconnect() }
        func settled(_ a: Party, _ b: Party) -> Bool {
            a.pendingAcks.isEmpty && b.pendingAcks.isEmpty && b.delivered.count == sentAB.count && a.delivered.count == sentBA.count
        }
        func talk(_ n: Int, ibexOn: Bool, _ what: String) throws {
            for _ in 0..<n {
                let t1 = text("ab"); sentAB.append(t1); try a.sendText(t1, ibexOn: ibexOn)
                let t2 = text("ba"); sentBA.append(t2); try b.sendText(t2, ibexOn: ibexOn)
            }
            try pump(&a, &b, timeoutMs: timeoutMs, what, until: settled)
        }
        // Register and log in.
        try a.connect(port: port, serverKey: serverKey, register: true)
        try b.connect(port: port, serverKey: serverKey, register: true)
        try pump(&a, &b, timeoutMs: timeoutMs, "login") { $0.queueComplete && $1.queueComplete }
        // Plain e2e messages with metadata boxes.
        try talk(m, ibexOn: false, "plain messages")
        // Ibex: A's Init and a 2DH message; B's Accept; then 4DH both ways.
        let first = text("ab"); sentAB.append(first)
        try a.sendText(first, ibexOn: true)
        try pump(&a, &b, timeoutMs: timeoutMs, "the Ibex session") { a, b in
            settled(a, b) && a.ibex.store.sessions(peer: b.identity.id).contains { $0.state == .rl44 }
        }
        try talk(m, ibexOn: true, "4DH messages")
        // The echo control, then B leaves (after an echo round trip: the server has its acks).
        try a.send(.echoRequest(Array("\(marker)-echo".utf8)))
        try b.send(.echoRequest([UInt8(truncatingIfNeeded: index)]))
        try pump(&a, &b, timeoutMs: timeoutMs, "echo") { $0.echoes == 1 && $1.echoes == 1 }
        b.disconnect()
        // Messages for B while it is offline: acknowledged by the server, queued.
        for _ in 0..<m { let t = text("ab"); sentAB.append(t); try a.sendText(t, ibexOn: true) }
        try pump(&a, &b, timeoutMs: timeoutMs, "acks of queued messages") { a, _ in a.pendingAcks.isEmpty }
        let before = b.delivered.count
        try b.connect(port: port, serverKey: serverKey, register: false)
        try pump(&a, &b, timeoutMs: timeoutMs, "the queue") { _, b in b.queueComplete }
        guard b.deliveredAtQueueComplete == before + m else {
            throw DriverFailure("\(b.name): \(b.deliveredAtQueueComplete - before) of \(m) queued messages before queue-send-complete")
        }
        // Keep talking.
        try talk(m, ibexOn: true, "messages after the reconnection")
        while monotonicMilliseconds() < endAt { try talk(m, ibexOn: true, "more messages") }
        outcome.expected = sentAB.count + sentBA.count
        outcome.delivered = zip(b.delivered, sentAB).filter { $0 == $1 }.count + zip(a.delivered, sentBA).filter { $0 == $1 }.count
        if b.delivered != sentAB || a.delivered != sentBA {
            outcome.failure = "pair \(index): delivered texts differ from the sent ones (\(b.delivered.count)/\(sentAB.count), "
                + "\(a.delivered.count)/\(sentBA.count))"
        }
    } catch {
        outcome.expected = sentAB.count + sentBA.count
        outcome.failure = "pair \(index): \(error)"
    }
    return outcome
}

func threemaClientTestCommand(_ args: [String]) {
    let c = "threema client-test"
    let o = Options(args, allowed: ["port", "server-key", "pairs", "messages", "marker", "timeout", "probe", "duration",
                                    "source", "receivers", "count", "size", "idle", "state",
                                    "side", "identities", "burst"], positional: 0...0, command: c)
    if o.help { print(threemaClientTestUsage); exit(0) }
    guard let port = o.int("port", c), (1...65_535).contains(port) else { usageError("\(c): --port must be 1...65535") }
    guard let keyBytes = o.hex("server-key", c), keyBytes.count == 32,
          let serverKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: keyBytes) else {
        usageError("\(c): --server-key must be 32 bytes (64 hex digits)")
    }
    let pairs = o.int("pairs", c) ?? 1
    let messages = o.int("messages", c) ?? 5
    guard (1...500).contains(pairs) else { usageError("\(c): --pairs must be 1...500") }
    // A resumable party (--side) may run longer conversations: they are what a kill test needs.
    let maxMessages = o.values["side"] == nil ? 1000 : 100_000
    guard (1...maxMessages).contains(messages) else { usageError("\(c): --messages must be 1...\(maxMessages)") }
    var rng = SecureRandom()
    let marker = o.values["marker"] ?? "RMK" + Hex.encode(randomBytes(6, using: &rng))
    guard !marker.isEmpty, marker.utf8.count <= 64, marker.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
        usageError("\(c): --marker must be 1 to 64 printable ASCII characters")
    }
    let timeout = o.int("timeout", c) ?? 60
    guard (1...3600).contains(timeout) else { usageError("\(c): --timeout must be 1...3600") }
    let timeoutMs = Int64(timeout) * 1000
    if let source = o.values["source"] {
        let parts = source.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        guard parts.count == 4, parts.allSatisfy({ $0 != nil }), parts[0] == 127 else {
            usageError("\(c): --source must be a loopback address 127.x.y.z")
        }
        chatClientSource = parts.reduce(UInt32(0)) { $0 << 8 | UInt32($1!) }
    }
    signal(SIGPIPE, SIG_IGN)
    if let side = o.values["side"] {
        guard side == "a" || side == "b" else { usageError("\(c): --side is a or b") }
        guard o.values["probe"] == nil else { usageError("\(c): --side and --probe do not go together") }
        guard let identities = o.values["identities"], let state = o.values["state"] else {
            usageError("\(c): --side needs --identities FILE and --state FILE")
        }
        let burst = o.int("burst", c) ?? 10
        guard (1...100).contains(burst) else { usageError("\(c): --burst must be 1...100") }
        runResumableParty(side: side, identitiesPath: identities, statePath: state, port: UInt16(port), serverKey: serverKey,
                          messages: messages, burst: burst, timeoutMs: timeoutMs)
    }
    if let probe = o.values["probe"] {
        func count(_ name: String, _ d: Int, _ r: ClosedRange<Int>) -> Int {
            let v = o.int(name, c) ?? d
            guard r.contains(v) else { usageError("\(c): --\(name) must be \(r.lowerBound)...\(r.upperBound)") }
            return v
        }
        let p = UInt16(port)
        switch probe {
        case "oversize", "slow-reader":
            runProbe(probe, port: p, serverKey: serverKey, timeoutMs: timeoutMs)
        case "queue-flood":
            runQueueFlood(port: p, serverKey: serverKey, receivers: count("receivers", 131, 1...10_000),
                          each: count("count", 64, 1...10_000), size: count("size", 8000, 1...8000), timeoutMs: timeoutMs)
        case "register-flood":
            runRegisterFlood(port: p, serverKey: serverKey, count: count("count", 1000, 1...1_000_000), timeoutMs: timeoutMs)
        case "idle":
            runIdle(port: p, serverKey: serverKey, idleSeconds: count("idle", 10, 0...3600), timeoutMs: timeoutMs)
        case "store", "fetch":
            guard let state = o.values["state"] else { usageError("\(c): --probe \(probe) needs --state FILE") }
            runStoreFetch(probe == "store", state: state, port: p, serverKey: serverKey, count: count("count", 20, 1...100_000),
                          timeoutMs: timeoutMs)
        default:
            usageError("\(c): --probe is oversize, slow-reader, queue-flood, register-flood, idle, store or fetch")
        }
    }
    // Bounded, so that the deadline arithmetic cannot overflow.
    let duration = o.int("duration", c, in: 0...(30 * 86_400)) ?? 0
    let start = monotonicMilliseconds()
    let endAt = start + Int64(duration) * 1000
    let outcomes = Outcomes(pairs)
    var threads: [ThreadHandle] = []
    for i in 0..<pairs {
        guard let t = startThread({
            outcomes.slots[i] = runPair(i, port: UInt16(port), serverKey: serverKey, messages: messages, marker: marker,
                                        timeoutMs: timeoutMs, until: endAt)
        }) else { checkFailure("\(c): cannot start a thread") }
        threads.append(t)
    }
    for t in threads { joinThread(t) }
    let ms = monotonicMilliseconds() - start
    let failures = outcomes.items.compactMap(\.failure)
    for f in failures.prefix(10) { printError("client-test: \(f)") }
    let delivered = outcomes.items.reduce(0) { $0 + $1.delivered }
    let expected = outcomes.items.reduce(0) { $0 + $1.expected }
    print("client-test: marker \(marker), \(pairs) pairs, \(delivered)/\(expected) messages delivered exactly once and in order, "
          + "\(failures.count) failed pairs, \(ms) ms")
    if !failures.isEmpty || delivered != expected { exit(1) }
}

private func randomBytes(_ n: Int, using rng: inout SecureRandom) -> [UInt8] {
    (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
}

/// A client that logs in and then misbehaves; exits 0 once the server closed the connection.
private func runProbe(_ probe: String, port: UInt16, serverKey: Curve25519.KeyAgreement.PublicKey, timeoutMs: Int64) -> Never {
    var rng = SecureRandom()
    let me = ThreemaIdentity.generate(id: randomID(&rng), using: &rng)
    var other = try! Party(name: "unused", identity: me, peer: me.contact)
    do {
        var p = try Party(name: "probe \(me.id)", identity: me, peer: me.contact)
        try p.connect(port: port, serverKey: serverKey, register: true)
        try pump(&p, &other, timeoutMs: timeoutMs, "login") { p, _ in p.queueComplete }
        var sent = 0
        if probe == "oversize" {
            try Socket.writeAll(p.fd, [0xFF, 0xFF])
            sent = 2
        } else {
            // Echo requests whose answers are never read, until the server stops taking them.
            let request = [UInt8](repeating: 0x2E, count: 8000)
            while sent < 64 << 20 {
                do { try p.send(.echoRequest(request)) } catch { break }
                sent += 8000
            }
        }
        // The server must close the connection: read (and discard) until end of stream or an error.
        let deadline = monotonicMilliseconds() + timeoutMs
        while monotonicMilliseconds() < deadline {
            do {
                if try Socket.readSome(p.fd, timeoutMs: 1000).isEmpty { break }
            } catch let e as SocketError where e.code == ETIMEDOUT {
                continue
            } catch {
                break
            }
        }
        guard monotonicMilliseconds() < deadline else { checkFailure("probe \(probe): the server kept the connection open") }
        print("probe \(probe): \(me.id) sent \(sent) bytes; the server closed the connection")
        exit(0)
    } catch {
        checkFailure("probe \(probe): \(error)")
    }
}

/// A party alone (its peer is itself; nothing is sent to it): logs in, registering when asked.
private func soloLogin(_ identity: ThreemaIdentity, peer: ThreemaContact, port: UInt16,
                       serverKey: Curve25519.KeyAgreement.PublicKey, register: Bool, timeoutMs: Int64) throws -> Party {
    var p = try Party(name: "\(identity.id)", identity: identity, peer: peer)
    p.tolerant = true
    var other = try Party(name: "unused", identity: identity, peer: identity.contact)
    try p.connect(port: port, serverKey: serverKey, register: register)
    try pump(&p, &other, timeoutMs: timeoutMs, "login of \(identity.id)") { p, _ in p.queueComplete }
    return p
}

/// Reads until `done` holds for one party.
private func pumpOne(_ p: inout Party, timeoutMs: Int64, _ what: String, until done: (Party) -> Bool) throws {
    var other = try Party(name: "unused", identity: p.identity, peer: p.identity.contact)
    try pump(&p, &other, timeoutMs: timeoutMs, what) { a, _ in done(a) }
}

/// The attack that once stopped all delivery: throwaway receivers that stay offline, one sender
/// filling their queues. Prints the server's acks and refusals.
private func runQueueFlood(port: UInt16, serverKey: Curve25519.KeyAgreement.PublicKey, receivers: Int, each: Int, size: Int,
                           timeoutMs: Int64) -> Never {
    var rng = SecureRandom()
    do {
        var targets: [ThreemaIdentity] = []
        for _ in 0..<receivers {
            let t = ThreemaIdentity.generate(id: randomID(&rng), using: &rng)
            var p = try soloLogin(t, peer: t.contact, port: port, serverKey: serverKey, register: true, timeoutMs: timeoutMs)
            p.disconnect()
            targets.append(t)
        }
        let me = ThreemaIdentity.generate(id: randomID(&rng), using: &rng)
        var sender = try soloLogin(me, peer: me.contact, port: port, serverKey: serverKey, register: true, timeoutMs: timeoutMs)
        let body = [UInt8](repeating: 0x61, count: max(1, size - 400))   // the envelope adds about 400 bytes
        var sent = 0
        for _ in 0..<each {
            for t in targets {
                let keys = try PairKeys(identity: me, contact: t.contact)
                let message = OutgoingMessage(type: .text, body: body, createdAt: 1, flags: [], using: &rng)
                let wire = try EndToEnd.seal(message, from: me, keys: keys, using: &rng)
                sender.pendingAcks.insert(message.messageID)
                try sender.send(.outgoingMessage(try CSP.Message(wire)))
                sent += 1
                if sent % 64 == 0 {
                    let want = sent
                    try pumpOne(&sender, timeoutMs: timeoutMs, "answers") { $0.acked + $0.alerts.count >= want }
                }
            }
        }
        try pumpOne(&sender, timeoutMs: timeoutMs, "answers") { $0.acked + $0.alerts.count >= sent }
        print("probe queue-flood: \(receivers) receivers, \(sent) sent, \(sender.acked) accepted, \(sender.alerts.count) refused"
              + (sender.alerts.first.map { " (first refusal: \($0))" } ?? ""))
        exit(0)
    } catch {
        checkFailure("probe queue-flood: \(error)")
    }
}

/// Fresh identities registered one after another; prints how many the server refused.
private func runRegisterFlood(port: UInt16, serverKey: Curve25519.KeyAgreement.PublicKey, count: Int, timeoutMs: Int64) -> Never {
    var rng = SecureRandom()
    var registered = 0, refused = 0
    var firstRefusal: String?
    for _ in 0..<count {
        let t = ThreemaIdentity.generate(id: randomID(&rng), using: &rng)
        do {
            var p = try soloLogin(t, peer: t.contact, port: port, serverKey: serverKey, register: true, timeoutMs: timeoutMs)
            p.disconnect()
            registered += 1
        } catch {
            refused += 1
            if firstRefusal == nil { firstRefusal = "\(error)" }
        }
    }
    print("probe register-flood: \(count) tried, \(registered) registered, \(refused) refused"
          + (firstRefusal.map { " (first: \($0))" } ?? ""))
    exit(0)
}

/// Logs in, stays silent, then needs an echo answered: a logged-in user that outlives a flood.
private func runIdle(port: UInt16, serverKey: Curve25519.KeyAgreement.PublicKey, idleSeconds: Int, timeoutMs: Int64) -> Never {
    var rng = SecureRandom()
    let me = ThreemaIdentity.generate(id: randomID(&rng), using: &rng)
    do {
        var p = try soloLogin(me, peer: me.contact, port: port, serverKey: serverKey, register: true, timeoutMs: timeoutMs)
        print("probe idle: \(me.id) logged in; silent for \(idleSeconds) s")
        fflush(nil)
        // Silent, but watching: a close by the server ends the probe at once.
        let until = monotonicMilliseconds() + Int64(idleSeconds) * 1000
        while monotonicMilliseconds() < until {
            var f = pollfd(fd: p.fd, events: Int16(POLLIN), revents: 0)
            if poll(&f, 1, 200) > 0 { try p.readAvailable() }
        }
        try p.send(.echoRequest([0x49]))
        try pumpOne(&p, timeoutMs: timeoutMs, "the echo") { $0.echoes == 1 }
        print("probe idle: \(me.id) still served after \(idleSeconds) s")
        exit(0)
    } catch {
        checkFailure("probe idle: \(me.id) lost: \(error)")
    }
}

/// Two identities as `ID SECRET-HEX` lines (the `--state` file of the store/fetch probes and the
/// `--identities` file of a resumable party); nil for anything else.
func parseIdentityPair(_ text: String) -> (ThreemaIdentity, ThreemaIdentity)? {
    let rows = text.split(separator: "\n").map { $0.split(separator: " ") }
    guard rows.count == 2, rows.allSatisfy({ $0.count == 2 }),
          let a = try? ThreemaIdentity(id: ThreemaID(String(rows[0][0])), privateKey: .init(rawRepresentation: Hex.decode(String(rows[0][1])))),
          let b = try? ThreemaIdentity(id: ThreemaID(String(rows[1][0])), privateKey: .init(rawRepresentation: Hex.decode(String(rows[1][1]))))
    else { return nil }
    return (a, b)
}

/// The two identities of `--state FILE` (created when missing): `ID SECRET-HEX` per line.
private func stateIdentities(_ path: String, create: Bool) -> (ThreemaIdentity, ThreemaIdentity) {
    if let text = readTextFile(path) {
        guard let pair = parseIdentityPair(text) else { usageError("threema client-test: --state \(path) is not a state file") }
        return pair
    }
    guard create else { usageError("threema client-test: cannot read --state \(path)") }
    var rng = SecureRandom()
    let a = ThreemaIdentity.generate(id: randomID(&rng), using: &rng)
    let b = ThreemaIdentity.generate(id: randomID(&rng), using: &rng)
    let text = [a, b].map { "\($0.id) \(Hex.encode($0.privateKey.rawRepresentation))\n" }.joined()
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    guard fd >= 0 else { usageError("threema client-test: cannot create --state \(path)") }
    let bytes = Array(text.utf8)
    guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
        usageError("threema client-test: cannot write --state \(path)")
    }
    close(fd)
    return (a, b)
}

/// `store`: the sender queues texts for the offline receiver; `fetch`: the receiver takes them.
private func runStoreFetch(_ store: Bool, state: String, port: UInt16, serverKey: Curve25519.KeyAgreement.PublicKey,
                           count: Int, timeoutMs: Int64) -> Never {
    let (a, b) = stateIdentities(state, create: store)
    if store {
        var acked = 0
        do {
            var receiver = try soloLogin(b, peer: a.contact, port: port, serverKey: serverKey, register: true, timeoutMs: timeoutMs)
            receiver.disconnect()
            var sender = try soloLogin(a, peer: b.contact, port: port, serverKey: serverKey, register: true, timeoutMs: timeoutMs)
            sender.tolerant = false
            for k in 0..<count {
                try sender.sendE2E(type: .text, body: Array("stored-\(k)".utf8))
                // One at a time: the count printed is exactly what the server acknowledged.
                try pumpOne(&sender, timeoutMs: timeoutMs, "the ack of stored-\(k)") { $0.pendingAcks.isEmpty }
                acked = k + 1
            }
            print("probe store: \(acked) of \(count) acknowledged")
            exit(0)
        } catch {
            print("probe store: \(acked) of \(count) acknowledged before: \(error)")
            exit(1)
        }
    }
    do {
        var receiver = try Party(name: "\(b.id)", identity: b, peer: a.contact)
        try receiver.connect(port: port, serverKey: serverKey, register: false)
        try pumpOne(&receiver, timeoutMs: timeoutMs, "the queue") { $0.queueComplete }
        // The acks went out with each message; an echo round trip makes sure the server has them.
        try receiver.send(.echoRequest([0x46]))
        try pumpOne(&receiver, timeoutMs: timeoutMs, "the echo") { $0.echoes == 1 }
        let got = receiver.delivered
        let indices = got.compactMap { $0.hasPrefix("stored-") ? Int($0.dropFirst(7)) : nil }
        let ordered = indices.count == got.count && zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }
        print("probe fetch: \(got.count) messages" + (got.isEmpty ? "" : ", stored-\(indices.first ?? -1) to stored-\(indices.last ?? -1)")
              + (ordered ? ", each once and in order" : ", REPEATED OR OUT OF ORDER"))
        exit(ordered ? 0 : 1)
    } catch {
        checkFailure("probe fetch: \(error)")
    }
}
