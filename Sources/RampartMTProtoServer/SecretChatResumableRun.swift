// A secret-chat run that survives being killed at any point (issue 38, Docs/Snapshots.md §7): the
// driver of `rampart mtproto secret-chat chat --state FILE`. Everything the run must not forget — the
// MTProto connection (auth key, salts, unanswered requests), the secret chat (keys, sequence numbers,
// messages kept for resends), the plan's progress and the encrypted messages not yet accepted by the
// server (the outbox) — is one snapshot, handed to `save` (which writes it atomically) before anything
// it describes reaches the network: a message is encrypted, saved in the outbox, then sent with its
// `random_id`, and sent again with the same `random_id` after a restart (the relay delivers a
// `random_id` once). Received messages are acknowledged with `messages.receivedQueue` after the state
// that has them is saved; the relay delivers again, on the next connection, what was not
// acknowledged, and the run skips what it has by qts. So every text arrives exactly once and in order
// however often either side is killed.

import RampartMTProto

extension SecretChatRelayClient {
    /// Which side of the chat a resumable run plays.
    public enum Role: UInt8, Sendable {
        /// Requests the chat (with ``runResumable(role:peer:plan:saved:save:)``'s `peer`) and ends it.
        case creator = 0
        /// Accepts the first chat requested.
        case acceptor = 1
    }

    /// The steps of a run, in order.
    enum Phase: UInt8 {
        /// Connected; the chat not yet requested (creator) or accepted (acceptor).
        case start = 0
        /// Creator: the request made (its random_id and g_a saved), not yet answered. Acceptor: the
        /// acceptance made (g_b and the fingerprint saved), not yet answered.
        case opening = 1
        /// Creator: the chat is waiting for the peer's acceptance.
        case waiting = 2
        /// The chat is established: texts both ways.
        case established = 3
        /// Creator: every text sent and received; the chat is being discarded.
        case discarding = 4
        /// The run is over.
        case done = 5
    }

    /// An encrypted message saved before it is sent.
    struct Pending {
        var randomID: Int64
        var isService: Bool
        var isResend: Bool
        var data: [UInt8]
    }

    /// What a resumable run keeps (snapshot type `CSCR`, the CLI's state file).
    struct Resumable {
        static let type = SnapshotType("CSCR")
        var role: Role
        var peer: Int64 = 0, peerAccessHash: Int64 = 0
        var user: Int64 = 0, accessHash: Int64 = 0
        var phase = Phase.start
        var requestRandomID: Int32 = 0
        var chatID: Int32 = 0, chatAccessHash: Int64 = 0
        var gB: [UInt8] = [], keyFingerprint: Int64 = 0
        var session: SecretChat.Session?
        var lastQts: Int32 = 0
        var sent = 0, nextFromPeer = 0, gaps = 0, resent = 0, restarts = 0
        var discarded = false
        var outbox: [Pending] = []

        var peerChat: SecretChat.API.InputEncryptedChat { .init(chatID: chatID, accessHash: chatAccessHash) }

        func snapshot(connection: ClientConnection) -> SnapshotBytes {
            var w = SnapshotWriter(type: Self.type, version: 1, capacity: 8_192 + outbox.reduce(0) { $0 + 24 + $1.data.count })
            w.uint8(role.rawValue)
            for v in [peer, peerAccessHash, user, accessHash] { w.int64(v) }
            w.uint8(phase.rawValue)
            w.int32(requestRandomID)
            w.int32(chatID)
            w.int64(chatAccessHash)
            w.bytes(gB)
            w.int64(keyFingerprint)
            connection.snapshot().withUnsafeBytes { w.bytes($0) }
            w.optional(session) { w, s in s.snapshot().withUnsafeBytes { w.bytes($0) } }
            w.int32(lastQts)
            for v in [sent, nextFromPeer, gaps, resent, restarts] { w.uint64(UInt64(v)) }
            w.bool(discarded)
            w.list(outbox) { w, p in
                w.int64(p.randomID)
                w.bool(p.isService)
                w.bool(p.isResend)
                w.bytes(p.data)
            }
            return w.finish()
        }

        init(role: Role) { self.role = role }

        init(restoring bytes: SnapshotBytes, client: SecretChatRelayClient) throws(RampartError) {
            var r = try SnapshotReader(bytes, type: Self.type, versions: 1...1)
            guard let role = Role(rawValue: try r.uint8()) else { throw .invalidSnapshot(.invalidField("role")) }
            self.role = role
            peer = try r.int64()
            peerAccessHash = try r.int64()
            user = try r.int64()
            accessHash = try r.int64()
            guard let phase = Phase(rawValue: try r.uint8()) else { throw .invalidSnapshot(.invalidField("phase")) }
            self.phase = phase
            requestRandomID = try r.int32()
            chatID = try r.int32()
            chatAccessHash = try r.int64()
            gB = try r.bytes("g_b", max: 256)
            keyFingerprint = try r.int64()
            let n = Int(try r.uint32())
            guard n <= 64 << 20 else { throw .invalidSnapshot(.invalidField("connection")) }
            let connection = try r.secret(n)
            var rng = SecureRandom()
            client.connection = try ClientConnection(restoring: connection, transport: client.transportKind, handshake: client.handshake,
                                                     using: &rng)
            let c = client.clock
            session = try r.optional("secret chat") { (r) throws(RampartError) in
                let n = Int(try r.uint32())
                guard n <= 64 << 20 else { throw .invalidSnapshot(.invalidField("secret chat")) }
                return try SecretChat.Session(restoring: try r.secret(n), clock: { Int64(c()) })
            }
            lastQts = try r.int32()
            var counters: [Int] = []
            for _ in 0..<5 {
                let v = try r.uint64()
                guard v <= 1 << 40 else { throw .invalidSnapshot(.invalidField("counter")) }
                counters.append(Int(v))
            }
            (sent, nextFromPeer, gaps, resent, restarts) = (counters[0], counters[1], counters[2], counters[3], counters[4])
            discarded = try r.bool("discarded")
            outbox = try r.list("outbox", max: 1 << 16, minElementBytes: 14) { (r) throws(RampartError) in
                Pending(randomID: try r.int64(), isService: try r.bool("service"), isResend: try r.bool("resend"),
                        data: try r.bytes("message", max: 1 << 20))
            }
            try r.finish()
            guard phase.rawValue < Phase.established.rawValue || session != nil else { throw .invalidSnapshot(.invalidField("secret chat")) }
        }
    }

    /// Runs one side of the chat so that it can be killed at any point and started again from the
    /// last state `save` received (`saved`; nil for a first start). Texts only: the plan's file is
    /// not sent. Returns the summary once the chat is over (at once when the saved run was over).
    /// - Parameters:
    ///   - peer: the creator's peer (user id and access hash); nil for the acceptor.
    ///   - save: writes the state (atomically: a partly written state would lose the chat); it is
    ///     called before every step whose effect reaches the server.
    public func runResumable(role: Role, peer: (id: Int64, accessHash: Int64)?, plan: Plan, saved: SnapshotBytes?,
                             save: (SnapshotBytes) throws(Failure) -> Void) throws(Failure) -> Summary {
        var st: Resumable
        if let saved {
            do { st = try Resumable(restoring: saved, client: self) } catch { throw Failure("the state file: \(error)") }
            guard st.role == role else { throw Failure("the state file is the \(st.role == .creator ? "creator" : "acceptor")'s") }
            st.restarts += 1
            do { try link.write(try connection.reconnect(now: clock(), using: &rng)) } catch let e as Failure { throw e } catch {
                throw Failure("reconnect: \(error)")
            }
            log("restart \(st.restarts): phase \(st.phase), \(st.sent) texts sent, \(st.nextFromPeer) received, qts \(st.lastQts), "
                + "\(st.outbox.count) messages to send again")
        } else {
            st = Resumable(role: role)
            if let peer { (st.peer, st.peerAccessHash) = (peer.id, peer.accessHash) }
            try connect()
            st.user = user
            st.accessHash = accessHash
            try save(st.snapshot(connection: connection))
        }
        // On a new connection the relay delivers again what was not acknowledged (the first call
        // opts in): users.getUsers confirms the user and moves its updates here.
        let users: [SecretChat.API.User]
        do { users = try SecretChat.API.decodeUsers(try call(.getUsers(ids: [.inputSelf]))) } catch let e as Failure { throw e } catch {
            throw Failure("users.getUsers: \(error)")
        }
        guard let me = users.first, me.isSelf, me.id == st.user else { throw Failure("the server does not know this user any more") }
        (user, accessHash) = (st.user, st.accessHash)
        _ = try call(.receivedQueue(maxQts: st.lastQts))
        log("user \(user) access-hash \(accessHash)")
        let rounds = plan.messages / (2 * max(plan.burst, 1))
        let total = rounds * plan.burst
        var deadline = clock() + Double(plan.timeoutMs) / 1000
        func progress() { deadline = clock() + Double(plan.timeoutMs) / 1000 }
        func persist() throws(Failure) { try save(st.snapshot(connection: connection)) }
        while st.phase != .done {
            // What was saved to send goes first, in order; each leaves the outbox once the relay took it.
            while let p = st.outbox.first {
                let request: SecretChat.API.Request = p.isService
                    ? .sendEncryptedService(peer: st.peerChat, randomID: p.randomID, data: p.data)
                    : .sendEncrypted(silent: false, peer: st.peerChat, randomID: p.randomID, data: p.data)
                _ = try call(request)
                if p.isResend { st.resent += 1 }
                st.outbox.removeFirst()
                try persist()
            }
            switch st.phase {
            case .start where role == .creator:
                let config = try dhConfig()
                let c = clock
                do { st.session = try .requesting(config: config.0, serverRandom: config.1, clock: { Int64(c()) }, using: &rng) } catch {
                    throw Failure("requesting: \(error)")
                }
                st.requestRandomID = Int32(truncatingIfNeeded: rng.next())
                st.phase = .opening
                try persist()
                continue
            case .opening where role == .creator:
                let answer: SecretChat.API.EncryptedChat
                do {
                    answer = try .decode(try call(.requestEncryption(userID: .user(userID: st.peer, accessHash: st.peerAccessHash),
                                                                     randomID: st.requestRandomID, gA: st.session?.gA ?? [])))
                } catch let e as Failure { throw e } catch { throw Failure("requestEncryption: \(error)") }
                guard case .waiting(let w) = answer else { throw Failure("requestEncryption: not encryptedChatWaiting") }
                (st.chatID, st.chatAccessHash, st.phase) = (w.id, w.accessHash, .waiting)
                try persist()
                log("chat \(w.id) requested; waiting for user \(st.peer)")
                continue
            case .opening:
                // Acceptor: the acceptance again (the relay answers a repeated one alike).
                let answer: SecretChat.API.EncryptedChat
                do {
                    answer = try .decode(try call(.acceptEncryption(peer: st.peerChat, gB: st.gB, keyFingerprint: st.keyFingerprint)))
                } catch let e as Failure { throw e } catch { throw Failure("acceptEncryption: \(error)") }
                guard case .chat(let c) = answer, var session = st.session else { throw Failure("acceptEncryption: not encryptedChat") }
                do {
                    st.outbox += try session.handleEncryptedChat(gAOrB: c.gAOrB, keyFingerprint: c.keyFingerprint, using: &rng)
                        .map { pending($0) }
                } catch { throw Failure("encryptedChat: \(error)") }
                st.session = session
                st.phase = .established
                try persist()
                log("chat \(st.chatID) established: key_fingerprint \(hex64(UInt64(bitPattern: session.fingerprint ?? 0)))")
                continue
            case .established where role == .creator && st.sent >= total && st.nextFromPeer >= total:
                st.phase = .discarding
                try persist()
                continue
            case .discarding:
                do { _ = try call(.discardEncryption(deleteHistory: false, chatID: st.chatID)) } catch {
                    // Discarded before the restart that brought us here.
                    guard error.description.contains("ENCRYPTION_ALREADY_DECLINED") else { throw error }
                }
                st.phase = .done
                try persist()
                continue
            case .established where role == .acceptor && st.discarded:
                st.phase = .done
                try persist()
                continue
            case .established:
                // The creator sends burst k once it has k bursts from the peer; the acceptor after k + 1.
                let allowed = min(total, plan.burst * (st.nextFromPeer / plan.burst + (role == .creator ? 1 : 0)))
                if st.sent < allowed, var session = st.session {
                    let text = "\(role == .creator ? "creator" : "acceptor") #\(st.sent)"
                    do {
                        st.outbox += try session.send(.message(.init(randomID: Int64(bitPattern: rng.next()), message: text)), using: &rng)
                            .map { pending($0) }
                    } catch { throw Failure("send: \(error)") }
                    st.session = session
                    st.sent += 1
                    try persist()
                    continue
                }
            default:
                break
            }
            // Nothing to do but wait for the peer.
            let update = try nextUpdate(until: deadline, what: "the peer (phase \(st.phase), \(st.nextFromPeer) texts received)")
            if try handle(update, state: &st, plan: plan) {
                progress()
                try persist()
                if st.lastQts > 0 { _ = try call(.receivedQueue(maxQts: st.lastQts)) }
            }
        }
        var summary = Summary()
        summary.user = st.user
        summary.fingerprint = st.session?.fingerprint ?? 0
        summary.keyHash = st.session?.keyHash ?? []
        summary.rekeys = st.session?.rekeyCount ?? 0
        summary.sent = st.sent
        summary.received = st.nextFromPeer
        summary.gaps = st.gaps
        summary.resent = st.resent
        summary.restarts = st.restarts
        return summary
    }

    private func pending(_ o: SecretChat.Session.Outgoing) -> Pending {
        Pending(randomID: Int64(bitPattern: rng.next()), isService: o.isService, isResend: o.isResend, data: o.data)
    }

    /// One update for a resumable run; true when it changed the state (to be saved, then acknowledged).
    private func handle(_ update: SecretChat.API.Update, state st: inout Resumable, plan: Plan) throws(Failure) -> Bool {
        switch update {
        case .encryption(.requested(let r), _) where st.role == .acceptor && st.phase == .start:
            log("chat \(r.id) requested by user \(r.adminID); accepting")
            let config = try dhConfig()
            let c = clock
            var session = SecretChat.Session.requested(gA: r.gA, clock: { Int64(c()) })
            do { (st.gB, st.keyFingerprint) = try session.accept(config: config.0, serverRandom: config.1, using: &rng) } catch {
                throw Failure("accept: \(error)")
            }
            st.session = session
            (st.chatID, st.chatAccessHash, st.phase) = (r.id, r.accessHash, .opening)
            return true
        case .encryption(.chat(let c), _) where st.role == .creator && st.phase == .waiting && c.id == st.chatID:
            guard var session = st.session else { return false }
            do {
                st.outbox += try session.handleEncryptedChat(gAOrB: c.gAOrB, keyFingerprint: c.keyFingerprint, using: &rng).map { pending($0) }
            } catch { throw Failure("encryptedChat: \(error)") }
            st.session = session
            st.phase = .established
            log("chat \(c.id) established: key_fingerprint \(hex64(UInt64(bitPattern: session.fingerprint ?? 0)))")
            return true
        case .encryption(.discarded(_, let id), _) where id == st.chatID && !st.discarded:
            guard st.phase == .established || st.phase == .discarding else { return false }
            st.discarded = true
            log("chat \(id) discarded by the peer")
            return true
        case .encryption:
            return false  // again after a restart, or another chat's
        case .newEncryptedMessage(let message, let qts):
            // Delivered again after a restart: what the saved state has already.
            guard qts > st.lastQts else { return false }
            guard qts == st.lastQts + 1 else { throw Failure("qts \(qts) after \(st.lastQts): the relay lost a message") }
            st.lastQts = qts
            let data: [UInt8]
            switch message {
            case .message(_, let id, _, let bytes, _), .service(_, let id, _, let bytes):
                guard id == st.chatID else { return true }
                data = bytes
            }
            guard st.phase == .established, var session = st.session else { throw Failure("a message before the chat was established") }
            let received: SecretChat.Session.Received
            do { received = try session.receive(data, using: &rng) } catch {
                throw Failure("receive: \(error) (a message of \(data.count) bytes)")
            }
            if session.status.queuedCount > 0, !received.outgoing.isEmpty { st.gaps += 1 }
            st.outbox += received.outgoing.map { pending($0) }
            let peerName = st.role == .creator ? "acceptor" : "creator"
            for m in received.messages {
                guard case .message(let plain) = m.message else { continue }
                let expected = "\(peerName) #\(st.nextFromPeer)"
                guard plain.message == expected else { throw Failure("expected \"\(expected)\", received \"\(plain.message)\"") }
                st.nextFromPeer += 1
            }
            if received.keyChanged { log("re-key: key_fingerprint \(hex64(UInt64(bitPattern: session.fingerprint ?? 0)))") }
            st.session = session
            return true
        }
    }
}
