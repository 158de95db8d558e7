// `rampart threema client-test --side a|b --identities FILE --state FILE`: one party of a conversation
// through `rampart threema serve --register-on-login` that survives being killed (SIGKILL included) at
// any point (issue 38, Docs/Snapshots.md §7). Its Ibex sessions, its nonce store, its progress and the
// sealed messages the server has not acknowledged yet (the outbox) are one snapshot, written atomically
// before anything it describes reaches the server: a message is encapsulated (Ibex), sealed, saved in
// the outbox, then sent; after a restart the outbox goes again with the same nonces and message IDs.
// An incoming message is opened, its nonce recorded, its text checked, the state saved, and only then
// acknowledged; the server delivers again what was not acknowledged, and the nonce store recognises
// what this party already has (acknowledged again, not delivered twice).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartThreema
import RampartThreemaChatServer

/// What a resumable party keeps (snapshot type `TCTS`, the CLI's state file).
private struct ResumableState {
    static let type = SnapshotType("TCTS")
    var sent = 0, received = 0, restarts = 0
    var nonces = InMemoryNonceStore()
    var ibex: [Ibex.Session] = []
    /// Sealed messages not yet acknowledged by the server: message ID and the CSP message bytes.
    var outbox: [(id: UInt64, bytes: [UInt8])] = []

    init() {}

    func snapshot() -> SnapshotBytes {
        var w = SnapshotWriter(type: Self.type, version: 1, capacity: 4_096 + outbox.reduce(0) { $0 + 16 + $1.bytes.count })
        for v in [sent, received, restarts] { w.uint64(UInt64(v)) }
        nonces.snapshot().withUnsafeBytes { w.bytes($0) }
        w.list(ibex) { w, s in s.snapshot().withUnsafeBytes { w.bytes($0) } }
        w.list(outbox) { w, m in
            w.uint64(m.id)
            w.bytes(m.bytes)
        }
        return w.finish()
    }

    init(restoring bytes: SnapshotBytes, identity: ThreemaIdentity) throws(RampartError) {
        var r = try SnapshotReader(bytes, type: Self.type, versions: 1...1)
        var counters: [Int] = []
        for _ in 0..<3 {
            let v = try r.uint64()
            guard v <= 1 << 40 else { throw .invalidSnapshot(.invalidField("counter")) }
            counters.append(Int(v))
        }
        (sent, received, restarts) = (counters[0], counters[1], counters[2])
        func nested(_ r: inout SnapshotReader, _ field: String) throws(RampartError) -> SnapshotBytes {
            let n = Int(try r.uint32())
            guard n <= 64 << 20 else { throw .invalidSnapshot(.invalidField(field)) }
            return try r.secret(n)
        }
        nonces = try InMemoryNonceStore(restoring: try nested(&r, "nonce store"))
        ibex = try r.list("Ibex sessions", max: 64, minElementBytes: 4) { (r) throws(RampartError) in
            try Ibex.Session(restoring: try nested(&r, "Ibex session"), identity: identity)
        }
        outbox = try r.list("outbox", max: 1 << 16, minElementBytes: 12) { (r) throws(RampartError) in
            (try r.uint64(), try r.bytes("message", max: 1 << 16))
        }
        try r.finish()
    }
}

private struct ResumableFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// The two identities of `--identities FILE` (`ID SECRET-HEX` per line), created atomically when
/// missing (the first of the two parties to start writes it; the other reads it).
private func sharedIdentities(_ path: String, _ c: String) -> (ThreemaIdentity, ThreemaIdentity) {
    if let text = readTextFile(path) {
        guard let pair = parseIdentityPair(text) else { usageError("\(c): --identities \(path) is not an identities file") }
        return pair
    }
    var rng = SecureRandom()
    let a = ThreemaIdentity.generate(id: randomID(&rng), using: &rng), b = ThreemaIdentity.generate(id: randomID(&rng), using: &rng)
    let text = Array([a, b].map { "\($0.id) \(Hex.encode($0.privateKey.rawRepresentation))\n" }.joined().utf8)
    // Written whole under a temporary name, then linked to the path: link fails when the other party
    // got there first, and then its file is the one.
    let temporary = path + ".\(getpid()).tmp"
    guard text.withUnsafeBytes({ writeFileAtomically(temporary, $0) }) else { usageError("\(c): cannot write \(temporary)") }
    let linked = link(temporary, path) == 0
    unlink(temporary)
    guard linked || errno == EEXIST, let written = readTextFile(path), let pair = parseIdentityPair(written) else {
        usageError("\(c): cannot create --identities \(path)")
    }
    return pair
}

/// The resumable party; exits 0 once it has sent and received every text (each once, in order).
func runResumableParty(side: String, identitiesPath: String, statePath: String, port: UInt16,
                       serverKey: Curve25519.KeyAgreement.PublicKey, messages: Int, burst: Int, timeoutMs: Int64) -> Never {
    let c = "threema client-test"
    let (ia, ib) = sharedIdentities(identitiesPath, c)
    let (me, peer) = side == "a" ? (ia, ib.contact) : (ib, ia.contact)
    let peerSide = side == "a" ? "b" : "a"
    var st = ResumableState()
    if access(statePath, F_OK) == 0 {
        var bytes = readFile(statePath, limit: 64 << 20, c)
        let saved = SnapshotBytes(copying: bytes)
        bytes.secureWipe()
        do { st = try ResumableState(restoring: saved, identity: me) } catch { checkFailure("\(c): the state file \(statePath): \(error)") }
        st.restarts += 1
    }
    var ibex = Ibex.Processor(identity: me, store: Ibex.InMemorySessionStore())
    for s in st.ibex { ibex.store.store(s) }
    var rng = SecureRandom()
    func log(_ s: String) { print(s); fflush(nil) }
    func save() throws {
        st.ibex = ibex.store.sessions(peer: peer.id)
        guard st.snapshot().withUnsafeBytes({ writeFileAtomically(statePath, $0) }) else {
            throw ResumableFailure("cannot write the state to \(statePath): \(String(cString: strerror(errno)))")
        }
    }
    do {
        let keys = try PairKeys(identity: me, contact: peer)
        if st.restarts > 0 {
            log("restart \(st.restarts): \(st.sent) texts sent, \(st.received) received, \(st.outbox.count) messages to send again, "
                + "\(ibex.store.sessions(peer: peer.id).count) Ibex sessions")
        } else {
            try save()
        }
        let fd = try Socket.connect(port: port)
        defer { close(fd) }
        var (client, hello) = try CSP.Client.start(configuration: .init(identity: me, permittedServerKeys: [serverKey]), using: &rng)
        try Socket.writeAll(fd, ChatHub.registrationMagic + me.id.bytes + me.publicKey.rawRepresentation + hello)
        log("party \(side) \(me.id) talking to \(peer.id)")
        var loggedIn = false
        var inFlight: Set<UInt64> = []
        var deadline = monotonicMilliseconds() + timeoutMs
        func send(_ p: CSP.Payload) throws { try Socket.writeAll(fd, try client.send(p)) }
        /// Encapsulates and seals a text (Ibex messages first when a session is new) into the outbox.
        func enqueueText(_ text: String) throws {
            for m in try ibex.encapsulate(type: .text, body: Array(text.utf8), to: peer, now: UInt64(wallClock().seconds), using: &rng) {
                try enqueue(type: m.type, body: try m.body())
            }
        }
        func enqueue(type: MessageType, body: [UInt8]) throws {
            let message = OutgoingMessage(type: type, body: body, createdAt: UInt64(wallClock().seconds) * 1000, flags: .sendPush, using: &rng)
            st.outbox.append((message.messageID, try EndToEnd.seal(message, from: me, keys: keys, using: &rng)))
        }
        while !(st.sent >= messages && st.received >= messages && st.outbox.isEmpty) {
            guard monotonicMilliseconds() < deadline else {
                throw ResumableFailure("timed out (\(st.sent) sent, \(st.received) received, \(st.outbox.count) unacknowledged)")
            }
            if loggedIn {
                // The outbox in order, each message once per connection (its ack removes it).
                for m in st.outbox where !inFlight.contains(m.id) {
                    try send(.outgoingMessage(try CSP.Message(m.bytes)))
                    inFlight.insert(m.id)
                }
                // Party a sends burst k once it has k bursts from b; b after k + 1.
                let allowed = min(messages, burst * (st.received / burst + (side == "a" ? 1 : 0)))
                if st.sent < allowed {
                    try enqueueText("\(side) #\(st.sent)")
                    st.sent += 1
                    try save()
                    continue
                }
            }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, 200)
            if r < 0 && errno != EINTR { throw ResumableFailure("poll failed") }
            guard r > 0 else { continue }
            let bytes = try Socket.readSome(fd, timeoutMs: 0)
            guard !bytes.isEmpty else { throw ResumableFailure("the server closed the connection") }
            let out = try client.receive(bytes[...])
            if !out.outgoing.isEmpty { try Socket.writeAll(fd, out.outgoing) }
            for e in out.events {
                guard case .payload(let payload) = e else {
                    if case .loginAcknowledged = e { loggedIn = true }
                    continue
                }
                switch payload {
                case .incomingMessage(let m):
                    let ack = CSP.Payload.incomingMessageAck(CSP.MessageAck(identity: m.sender, messageID: m.messageID))
                    var nonces = st.nonces
                    var openedOrReplay: IncomingMessage?
                    do {
                        openedOrReplay = try m.envelope.open(as: me, keys: keys, nonceStore: &nonces)
                    } catch {
                        guard case .replayedNonce = error else { throw error }
                    }
                    guard let opened = openedOrReplay else {
                        // Delivered again (the last run had it and was killed before its ack went out).
                        try send(ack)
                        continue
                    }
                    st.nonces = nonces
                    var text: String?
                    if opened.container.type == .forwardSecurityEnvelope {
                        let result = try ibex.receive(body: opened.container.body, from: peer, messageID: opened.messageID,
                                                      now: UInt64(wallClock().seconds), using: &rng)
                        switch result.event {
                        case .message(_, let body, _, _): text = String(decoding: body, as: UTF8.self)
                        case .sessionStarted, .sessionEstablished, .empty: break
                        default: throw ResumableFailure("Ibex: \(result.event)")
                        }
                        for reply in result.replies { try enqueue(type: .forwardSecurityEnvelope, body: try reply.encoded()) }
                    } else {
                        throw ResumableFailure("unexpected e2e type \(opened.container.type.rawValue)")
                    }
                    if let text {
                        let expected = "\(peerSide) #\(st.received)"
                        guard text == expected else { throw ResumableFailure("expected \"\(expected)\", received \"\(text)\"") }
                        st.received += 1
                        deadline = monotonicMilliseconds() + timeoutMs
                    }
                    try save()
                    try send(ack)
                case .outgoingMessageAck(let a):
                    guard let i = st.outbox.firstIndex(where: { $0.id == a.messageID }) else { continue }  // a resend's second ack
                    st.outbox.remove(at: i)
                    inFlight.remove(a.messageID)
                    try save()
                case .closeError(_, let text): throw ResumableFailure("close-error: \(text)")
                case .alert(let text): throw ResumableFailure("alert: \(text)")
                default: break
                }
            }
        }
    } catch {
        checkFailure("client-test party \(side): \(error)")
    }
    print("client-test party \(side): \(st.sent) texts sent, \(st.received) received, each once and in order, "
          + "\(ibex.store.sessions(peer: peer.id).count) Ibex session(s), restarts: \(st.restarts)")
    exit(0)
}
