// The test client of the secret-chat relay (Docs/MTProto.md §7.9): a blocking driver over any byte link
// (a socket in `rampart mtproto secret-chat chat`, an in-memory pipe in the tests) that logs in as a test
// user, opens or accepts a secret chat, runs the message exchange with re-keys, an induced gap and an
// encrypted file, and closes the chat. All cryptography is RampartMTProto's SecretChat.Session; this
// file only moves its messages through the relay's RPCs and checks what arrives.

import RampartMTProto

/// A byte stream to the server.
public protocol MTProtoLink: AnyObject {
    /// Writes all of `bytes`.
    func write(_ bytes: [UInt8]) throws(SecretChatRelayClient.Failure)
    /// Waits up to `timeoutMs` for bytes: an empty array on timeout; throws when the stream closed.
    func read(timeoutMs: Int) throws(SecretChatRelayClient.Failure) -> [UInt8]
}

/// A secret-chat client of the test server's relay.
public final class SecretChatRelayClient {
    /// Why a run failed.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// What went wrong.
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// What a run does (both sides must use the same values).
    public struct Plan: Sendable {
        /// Text messages in the chat, both directions together (rounded down to whole rounds).
        public var messages = 300
        /// Messages each side sends before it waits for the other's (a dropped message must not be
        /// the last of a burst: the receiver learns of a gap from the next message).
        public var burst = 10
        /// Size of the encrypted file the creator sends after the messages (0: none).
        public var fileBytes = 1 << 20
        /// Upload and download part size.
        public var partBytes = 512 << 10
        /// How long to wait for the peer before failing (milliseconds).
        public var timeoutMs = 20_000

        public init() {}
    }

    /// What a finished run saw.
    public struct Summary: Sendable {
        /// This side's test user.
        public var user: Int64 = 0
        /// The chat's key fingerprint at the end (after every re-key).
        public var fingerprint: Int64 = 0
        /// The chat's key hash (what the key image shows), fixed at the first key.
        public var keyHash: [UInt8] = []
        /// Re-keys completed.
        public var rekeys = 0
        /// Texts sent and received (every received one in order and as the peer wrote it).
        public var sent = 0, received = 0
        /// Messages sent again because the peer asked for them (decryptedMessageActionResend).
        public var resent = 0
        /// Times a gap in the peer's messages was seen (and a resend asked for).
        public var gaps = 0
        /// The file's SHA-256 when one was sent or received and checked.
        public var fileSHA256: [UInt8]?
        /// Times the run was started again from its saved state (``runResumable(role:peer:plan:saved:save:)``).
        public var restarts = 0
    }

    let link: MTProtoLink
    var connection: ClientConnection
    var rng = SecureRandom()
    let clock: @Sendable () -> Double
    var results: [RequestLayer.RequestID: Result<[UInt8], Failure>] = [:]
    var updates: [SecretChat.API.Update] = []
    var log: (String) -> Void
    /// The test user, after ``connect()``.
    public internal(set) var user: Int64 = 0
    /// The test user's access hash (what a peer needs to request a chat), after ``connect()``.
    public internal(set) var accessHash: Int64 = 0
    /// The transport and handshake the connection was made with (a restored one needs them again).
    let transportKind: ClientTransport.Kind
    let handshake: ClientHandshake.Configuration

    /// A client speaking `transport` to the server with the RSA keys `publicKeys`.
    /// - Parameters:
    ///   - clock: unix time in seconds.
    ///   - log: receives one line per step.
    public init(link: MTProtoLink, publicKeys: [RSA.PublicKey], transport: ClientTransport.Kind = .plain(.intermediate),
                dc: Int32 = 2, clock: @escaping @Sendable () -> Double, log: @escaping (String) -> Void) throws(Failure) {
        self.link = link
        self.clock = clock
        self.log = log
        transportKind = transport
        handshake = .init(publicKeys: publicKeys, dc: dc)
        var r = SecureRandom()
        do {
            connection = try ClientConnection(transport: transport, handshake: handshake, using: &r)
        } catch {
            throw Failure("client: \(error)")
        }
    }

    // MARK: Connection and RPCs

    /// Runs the auth-key handshake and asks the relay for this client's user (`users.getUsers` with
    /// `inputUserSelf`).
    public func connect(timeoutMs: Int = 20_000) throws(Failure) {
        do { try link.write(try connection.start(now: clock(), using: &rng)) } catch let e as Failure { throw e } catch { throw Failure("handshake: \(error)") }
        var done = false
        let deadline = clock() + Double(timeoutMs) / 1000
        while !done {
            for e in try pump(until: deadline, what: "the handshake") {
                if case .handshakeCompleted = e { done = true }
            }
        }
        let users: [SecretChat.API.User]
        do { users = try SecretChat.API.decodeUsers(try call(.getUsers(ids: [.inputSelf]))) } catch let e as Failure { throw e } catch { throw Failure("users.getUsers: \(error)") }
        guard let me = users.first, me.isSelf, users.count == 1 else { throw Failure("users.getUsers: no self user") }
        user = me.id
        accessHash = me.accessHash ?? 0
    }

    /// Sends `request` and waits for its `rpc_result`; an `rpc_error` is a failure. Updates that
    /// arrive meanwhile are queued.
    public func call(_ request: SecretChat.API.Request, timeoutMs: Int = 20_000) throws(Failure) -> [UInt8] {
        let id: RequestLayer.RequestID
        do {
            let sent = try connection.request(request.serialized, now: clock(), using: &rng)
            try link.write(sent.bytes)
            id = sent.id
        } catch let e as Failure { throw e } catch { throw Failure("send: \(error)") }
        let deadline = clock() + Double(timeoutMs) / 1000
        while true {
            if let r = results.removeValue(forKey: id) { return try r.get() }
            _ = try pump(until: deadline, what: "an rpc_result")
        }
    }

    /// The next pushed update, waiting up to the deadline.
    func nextUpdate(until deadline: Double, what: String) throws(Failure) -> SecretChat.API.Update {
        while updates.isEmpty { _ = try pump(until: deadline, what: what) }
        return updates.removeFirst()
    }

    /// Reads once (up to the deadline) and sorts what arrived: results by request, updates queued.
    func pump(until deadline: Double, what: String) throws(Failure) -> [ClientConnection.Event] {
        let left = Int((deadline - clock()) * 1000)
        guard left > 0 else { throw Failure("timed out waiting for \(what)") }
        let bytes = try link.read(timeoutMs: min(left, 1000))
        if bytes.isEmpty { return [] }
        let events: [ClientConnection.Event]
        do {
            let (reply, ev) = try connection.receive(bytes, now: clock(), using: &rng)
            if !reply.isEmpty { try link.write(reply) }
            events = ev
        } catch let e as Failure { throw e } catch { throw Failure("receive: \(error)") }
        for e in events {
            switch e {
            case .transportError(let code): throw Failure("transport error \(code) while waiting for \(what)")
            case .request(.result(let id, let body)):
                results[id] = .success(body)
            case .request(.rpcError(let id, let err)):
                results[id] = .failure(Failure("rpc_error \(err.code) \(err.message)"))
            case .request(.undecodableResult(let id, let why)):
                results[id] = .failure(Failure("undecodable answer: \(why)"))
            case .message(let m):
                if m.constructor == SecretChat.API.Constructor.updateShort
                            || m.constructor == SecretChat.API.Constructor.updates {
                    do { updates += try SecretChat.API.Updates.decode(m.body).updates } catch {
                        throw Failure("undecodable updates: \(error)")
                    }
                }
            default: break
            }
        }
        return events
    }

    // MARK: The chat

    /// The chat's state during a run.
    struct Chat {
        var session: SecretChat.Session
        var peer: SecretChat.API.InputEncryptedChat
        var summary = Summary()
        /// Texts expected next from the peer, by index.
        var nextFromPeer = 0
        var peerName: String
        var ownName: String
        /// The document and file of the last received file message.
        var file: (SecretChat.DecryptedMessageMedia.Document, SecretChat.API.EncryptedFile)?
        var discarded = false
    }

    /// Creator: opens a chat with `peer` (a user id from the relay), exchanges the plan's messages,
    /// sends the file, waits for the peer's confirmation and discards the chat.
    public func runCreator(peer: Int64, peerAccessHash: Int64, plan: Plan) throws(Failure) -> Summary {
        let deadline = { self.clock() + Double(plan.timeoutMs) / 1000 }
        let config = try dhConfig()
        var session: SecretChat.Session
        do {
            let c = clock
            session = try .requesting(config: config.0, serverRandom: config.1, clock: { Int64(c()) }, using: &rng)
        } catch { throw Failure("requesting: \(error)") }
        let waiting: SecretChat.API.EncryptedChat
        do {
            waiting = try .decode(try call(.requestEncryption(userID: .user(userID: peer, accessHash: peerAccessHash),
                                                              randomID: Int32(truncatingIfNeeded: rng.next()), gA: session.gA ?? [])))
        } catch let e as Failure { throw e } catch { throw Failure("requestEncryption: \(error)") }
        guard case .waiting(let w) = waiting else { throw Failure("requestEncryption: not encryptedChatWaiting") }
        log("chat \(w.id) requested; waiting for user \(peer)")
        var outgoing: [SecretChat.Session.Outgoing] = []
        while true {
            guard case .encryption(let chat, _) = try nextUpdate(until: deadline(), what: "the peer's acceptance") else { continue }
            guard case .chat(let c) = chat, c.id == w.id else {
                if case .discarded = chat { throw Failure("the peer declined the chat") }
                continue
            }
            do { outgoing = try session.handleEncryptedChat(gAOrB: c.gAOrB, keyFingerprint: c.keyFingerprint, using: &rng) } catch {
                throw Failure("encryptedChat: \(error)")
            }
            break
        }
        var chat = Chat(session: session, peer: .init(chatID: w.id, accessHash: w.accessHash), peerName: "acceptor", ownName: "creator")
        chat.summary.user = user
        log("chat \(w.id) established: key_fingerprint \(hex64(UInt64(bitPattern: chat.session.fingerprint ?? 0)))")
        for o in outgoing { try send(o, in: &chat) }
        let rounds = plan.messages / (2 * max(plan.burst, 1))
        for _ in 0..<rounds {
            try sendBurst(plan.burst, in: &chat)
            try awaitTexts( plan.burst, in: &chat, plan: plan)
        }
        if plan.fileBytes > 0 {
            try sendFile(plan: plan, in: &chat)
            try awaitTexts( 1, in: &chat, plan: plan)
        }
        _ = try call(.discardEncryption(deleteHistory: false, chatID: chat.peer.chatID))
        return finish(&chat)
    }

    /// Acceptor: waits for a chat request, accepts it and runs its side of the plan until the creator
    /// discards the chat.
    public func runAcceptor(plan: Plan) throws(Failure) -> Summary {
        let deadline = { self.clock() + Double(plan.timeoutMs) / 1000 }
        var requested: SecretChat.API.EncryptedChat.Requested?
        while requested == nil {
            if case .encryption(.requested(let r), _) = try nextUpdate(until: deadline(), what: "a chat request") { requested = r }
        }
        guard let r = requested else { throw Failure("no chat request") }
        log("chat \(r.id) requested by user \(r.adminID); accepting")
        let config = try dhConfig()
        let c = clock
        var session = SecretChat.Session.requested(gA: r.gA, clock: { Int64(c()) })
        let accepted: (gB: [UInt8], keyFingerprint: Int64)
        do { accepted = try session.accept(config: config.0, serverRandom: config.1, using: &rng) } catch {
            throw Failure("accept: \(error)")
        }
        let peer = SecretChat.API.InputEncryptedChat(chatID: r.id, accessHash: r.accessHash)
        let outgoing: [SecretChat.Session.Outgoing]
        do {
            let answer = try SecretChat.API.EncryptedChat.decode(try call(.acceptEncryption(peer: peer, gB: accepted.gB,
                                                                                            keyFingerprint: accepted.keyFingerprint)))
            guard case .chat(let c) = answer else { throw Failure("acceptEncryption: not encryptedChat") }
            outgoing = try session.handleEncryptedChat(gAOrB: c.gAOrB, keyFingerprint: c.keyFingerprint, using: &rng)
        } catch let e as Failure { throw e } catch { throw Failure("acceptEncryption: \(error)") }
        var chat = Chat(session: session, peer: peer, peerName: "creator", ownName: "acceptor")
        chat.summary.user = user
        log("chat \(r.id) established: key_fingerprint \(hex64(UInt64(bitPattern: chat.session.fingerprint ?? 0)))")
        for o in outgoing { try send(o, in: &chat) }
        let rounds = plan.messages / (2 * max(plan.burst, 1))
        for _ in 0..<rounds {
            try awaitTexts( plan.burst, in: &chat, plan: plan)
            try sendBurst(plan.burst, in: &chat)
        }
        if plan.fileBytes > 0 {
            try awaitTexts( 1, in: &chat, plan: plan)
            try receiveFile(plan: plan, in: &chat)
        }
        let end = deadline()
        while !chat.discarded {
            try handle(try nextUpdate(until: end, what: "the end of the chat"), in: &chat)
        }
        return finish(&chat)
    }

    func dhConfig() throws(Failure) -> (SecretChat.DHConfig, [UInt8]) {
        do {
            guard case .config(let g, let p, let version, let random) = try SecretChat.API.DhConfig.decode(
                try call(.getDhConfig(version: 0, randomLength: 256))) else { throw Failure("getDhConfig: not a config") }
            return (try SecretChat.DHConfig(g: g, prime: p, version: version, using: &rng), random)
        } catch let e as Failure { throw e } catch { throw Failure("getDhConfig: \(error)") }
    }

    private func finish(_ chat: inout Chat) -> Summary {
        var s = chat.summary
        s.fingerprint = chat.session.fingerprint ?? 0
        s.keyHash = chat.session.keyHash
        s.rekeys = chat.session.rekeyCount
        chat.session.terminate()
        return s
    }

    /// Sends one encrypted message through the relay.
    private func send(_ o: SecretChat.Session.Outgoing, in chat: inout Chat,
                      file: SecretChat.API.InputEncryptedFile? = nil) throws(Failure) {
        let id = Int64(bitPattern: rng.next())
        let request: SecretChat.API.Request
        if let file {
            request = .sendEncryptedFile(silent: false, peer: chat.peer, randomID: id, data: o.data, file: file)
        } else if o.isService {
            request = .sendEncryptedService(peer: chat.peer, randomID: id, data: o.data)
        } else {
            request = .sendEncrypted(silent: false, peer: chat.peer, randomID: id, data: o.data)
        }
        _ = try call(request)
        if o.isResend { chat.summary.resent += 1 }
    }

    private func sendBurst(_ n: Int, in chat: inout Chat) throws(Failure) {
        for _ in 0..<n {
            let text = "\(chat.ownName) #\(chat.summary.sent)"
            let out: [SecretChat.Session.Outgoing]
            do {
                out = try chat.session.send(.message(.init(randomID: Int64(bitPattern: rng.next()), message: text)), using: &rng)
            } catch { throw Failure("send: \(error)") }
            for o in out { try send(o, in: &chat) }
            chat.summary.sent += 1
        }
    }

    /// Handles updates until `n` more texts from the peer have arrived in order.
    private func awaitTexts(_ n: Int, in chat: inout Chat, plan: Plan) throws(Failure) {
        let target = chat.nextFromPeer + n
        var deadline = clock() + Double(plan.timeoutMs) / 1000
        while chat.nextFromPeer < target {
            let before = chat.nextFromPeer
            try handle(try nextUpdate(until: deadline, what: "message \(chat.peerName) #\(chat.nextFromPeer)"), in: &chat)
            if chat.nextFromPeer > before { deadline = clock() + Double(plan.timeoutMs) / 1000 }
            if chat.discarded { throw Failure("the peer discarded the chat early") }
        }
    }

    /// One update: a message for the chat (decrypted, its protocol messages answered, its texts
    /// checked) or the chat's end.
    private func handle(_ update: SecretChat.API.Update, in chat: inout Chat) throws(Failure) {
        switch update {
        case .encryption(.discarded(_, let id), _) where id == chat.peer.chatID:
            chat.discarded = true
            log("chat \(id) discarded by the peer")
        case .encryption:
            break
        case .newEncryptedMessage(let message, _):
            let data: [UInt8], file: SecretChat.API.EncryptedFile
            switch message {
            case .message(_, let id, _, let bytes, let f):
                guard id == chat.peer.chatID else { return }
                data = bytes
                file = f
            case .service(_, let id, _, let bytes):
                guard id == chat.peer.chatID else { return }
                data = bytes
                file = .empty
            }
            let received: SecretChat.Session.Received
            do { received = try chat.session.receive(data, using: &rng) } catch {
                throw Failure("receive: \(error) (a message of \(data.count) bytes)")
            }
            if chat.session.status.queuedCount > 0, !received.outgoing.isEmpty { chat.summary.gaps += 1 }
            for o in received.outgoing { try send(o, in: &chat) }
            for m in received.messages {
                guard case .message(let plain) = m.message else { continue }
                if case .document(let doc)? = plain.media {
                    chat.file = (doc, file)
                } else if chat.summary.fileSHA256 == nil || !plain.message.hasPrefix("file ok ") {
                    let expected = "\(chat.peerName) #\(chat.nextFromPeer)"
                    guard plain.message == expected else {
                        throw Failure("expected \"\(expected)\", received \"\(plain.message)\"")
                    }
                } else {
                    guard plain.message == "file ok " + Hex.encode(chat.summary.fileSHA256 ?? []) else {
                        throw Failure("the peer reports another file: \(plain.message)")
                    }
                    log("the peer confirmed the file")
                }
                chat.nextFromPeer += 1
                chat.summary.received += 1
            }
            if received.keyChanged {
                log("re-key: key_fingerprint \(hex64(UInt64(bitPattern: chat.session.fingerprint ?? 0)))")
            }
        }
    }

    /// Creator: encrypts a random file (AES-256-IGE, a fresh key and IV), uploads it in parts and sends
    /// it with a document message whose caption is the plaintext's SHA-256.
    private func sendFile(plan: Plan, in chat: inout Chat) throws(Failure) {
        var plaintext = [UInt8](repeating: 0, count: plan.fileBytes)
        for i in plaintext.indices { plaintext[i] = UInt8(truncatingIfNeeded: rng.next()) }
        let digest = SHA256.hash(data: plaintext).bytes
        let key = SecretChat.FileKey(using: &rng)
        let encrypted = key.encrypt(plaintext)
        let fileID = Int64(bitPattern: rng.next())
        var parts: Int32 = 0
        var offset = 0
        while offset < encrypted.count {
            let end = min(offset + plan.partBytes, encrypted.count)
            _ = try call(.saveFilePart(fileID: fileID, part: parts, bytes: Array(encrypted[offset..<end])))
            parts += 1
            offset = end
        }
        let doc = SecretChat.DecryptedMessageMedia.Document(mimeType: "application/octet-stream", size: Int64(plan.fileBytes),
                                                             key: key.key, iv: key.iv, caption: Hex.encode(digest))
        let out: [SecretChat.Session.Outgoing]
        do {
            out = try chat.session.send(.message(.init(randomID: Int64(bitPattern: rng.next()), message: "",
                                                       media: .document(doc))), using: &rng)
        } catch { throw Failure("send file: \(error)") }
        for (i, o) in out.enumerated() {
            let file: SecretChat.API.InputEncryptedFile? = i == out.count - 1
                ? .uploaded(id: fileID, parts: parts, md5Checksum: "", keyFingerprint: key.fingerprint) : nil
            try send(o, in: &chat, file: file)
        }
        chat.summary.fileSHA256 = digest
        log("file sent: \(plan.fileBytes) bytes in \(parts) parts, sha256 \(Hex.encode(digest))")
    }

    /// Acceptor: downloads the file of the last document message, checks its key fingerprint, decrypts
    /// it, compares its SHA-256 with the caption and confirms with a text.
    private func receiveFile(plan: Plan, in chat: inout Chat) throws(Failure) {
        guard let (doc, file) = chat.file, case .file(let id, let hash, let size, _, let fp) = file else {
            throw Failure("no file message")
        }
        let key: SecretChat.FileKey
        do { key = try SecretChat.FileKey(key: doc.key, iv: doc.iv) } catch { throw Failure("file key: \(error)") }
        guard key.fingerprint == fp else { throw Failure("file key_fingerprint mismatch") }
        guard size >= 0, size <= Int64(plan.fileBytes) + 16 else { throw Failure("file size \(size) unexpected") }
        var encrypted: [UInt8] = []
        while encrypted.count < Int(size) {
            let part: SecretChat.API.UploadFile
            do {
                part = try .decode(try call(.getFile(precise: false, fileID: id, accessHash: hash, offset: Int64(encrypted.count),
                                                     limit: Int32(plan.partBytes))))
            } catch let e as Failure { throw e } catch { throw Failure("upload.getFile: \(error)") }
            guard !part.bytes.isEmpty else { break }
            encrypted += part.bytes
        }
        let plaintext: [UInt8]
        do { plaintext = try key.decrypt(encrypted, size: Int(doc.size)) } catch { throw Failure("file decrypt: \(error)") }
        let digest = SHA256.hash(data: plaintext).bytes
        guard Hex.encode(digest) == doc.caption else { throw Failure("file SHA-256 differs from the caption") }
        chat.summary.fileSHA256 = digest
        log("file received: \(plaintext.count) bytes, sha256 \(Hex.encode(digest))")
        let out: [SecretChat.Session.Outgoing]
        do {
            out = try chat.session.send(.message(.init(randomID: Int64(bitPattern: rng.next()),
                                                       message: "file ok " + Hex.encode(digest))), using: &rng)
        } catch { throw Failure("send: \(error)") }
        for o in out { try send(o, in: &chat) }
        chat.summary.sent += 1
    }
}
