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
"""

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

    init(name: String, identity: ThreemaIdentity, peer: ThreemaContact) throws {
        self.name = name
        self.identity = identity
        self.peer = peer
        keys = try PairKeys(identity: identity, contact: peer)
        ibex = Ibex.Processor(identity: identity, store: Ibex.InMemorySessionStore())
    }

    var connected: Bool { fd >= 0 }

    mutating func connect(port: UInt16, serverKey: Curve25519.KeyAgreement.PublicKey, register: Bool) throws {
        fd = try Socket.connect(port: port)
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
        case .queueSendComplete:
            queueComplete = true
            deliveredAtQueueComplete = delivered.count
        case .echoResponse: echoes += 1
        case .closeError(_, let text): throw DriverFailure("\(name): close-error: \(text)")
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

private func randomID(_ rng: inout SecureRandom) -> ThreemaID {
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
    let o = Options(args, allowed: ["port", "server-key", "pairs", "messages", "marker", "timeout", "probe", "duration"], command: c)
    if o.help { print(threemaClientTestUsage); exit(0) }
    if !o.positional.isEmpty { usageError("\(c): unexpected argument \(o.positional[0])") }
    guard let port = o.int("port", c), (1...65_535).contains(port) else { usageError("\(c): --port must be 1...65535") }
    guard let keyBytes = o.hex("server-key", c), keyBytes.count == 32,
          let serverKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: keyBytes) else {
        usageError("\(c): --server-key must be 32 bytes (64 hex digits)")
    }
    let pairs = o.int("pairs", c) ?? 1
    let messages = o.int("messages", c) ?? 5
    guard (1...500).contains(pairs) else { usageError("\(c): --pairs must be 1...500") }
    guard (1...1000).contains(messages) else { usageError("\(c): --messages must be 1...1000") }
    var rng = SecureRandom()
    let marker = o.values["marker"] ?? "RMK" + Hex.encode(randomBytes(6, using: &rng))
    guard !marker.isEmpty, marker.utf8.count <= 64, marker.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
        usageError("\(c): --marker must be 1 to 64 printable ASCII characters")
    }
    let timeoutMs = Int64(o.int("timeout", c) ?? 60) * 1000
    signal(SIGPIPE, SIG_IGN)
    if let probe = o.values["probe"] {
        guard probe == "oversize" || probe == "slow-reader" else { usageError("\(c): --probe is oversize or slow-reader") }
        runProbe(probe, port: UInt16(port), serverKey: serverKey, timeoutMs: timeoutMs)
    }
    let start = monotonicMilliseconds()
    let endAt = start + Int64(o.int("duration", c) ?? 0) * 1000
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
