// `rampart mtproto serve` (the loopback test server) and `rampart mtproto ping` (the Swift client
// counterpart). The protocol logic is RampartMTProtoServer's TestServer and RampartMTProto's
// ClientConnection; this file only owns sockets, files, the clock and signals.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartMTProto
import RampartMTProtoServer

let mtprotoUsage = """
usage: rampart mtproto serve --port P [--rsa-key FILE] [--transports all|NAME,...] [--secret HEX] [--drop-secret-message N] [limits]
       rampart mtproto ping --port P --rsa-key PUB.pem --transport NAME [--dc N] [--secret HEX] [--pfs SECONDS]
       rampart mtproto secret-chat visualize|chat|dh-config|dh|seal|open|encode|decode|file-* ... (see rampart mtproto secret-chat --help)

  serve  listens on 127.0.0.1:P only. Loads the RSA private key (PKCS#1 PEM) from --rsa-key, or
         creates one there (mode 0600) when the file does not exist (a fresh key in memory without
         --rsa-key), and prints its public PEM and `mtproto-fingerprint: HEX`, then
         `listening on 127.0.0.1:P`. Detects the transport from each connection's first bytes
         (abridged, intermediate, padded-intermediate, full, obfuscated2, http: POST /api with
         keep-alive, one response per request, a request with nothing to answer held up to
         http_wait's max_wait, 25 s without one), completes handshakes
         (permanent and temporary keys, RSA_PAD and the legacy SHA-1 padding), keeps sessions in
         memory, answers ping with pong, sends new_session_created and acks, unpacks containers,
         binds temporary keys, relays secret chats between numbered test users (users.getUsers,
         messages.getDhConfig, requestEncryption, acceptEncryption, discardEncryption,
         sendEncrypted, sendEncryptedService, sendEncryptedFile, upload.saveFilePart,
         upload.getFile; updateEncryption and updateNewEncryptedMessage pushed on the other
         member's connection; Docs/MTProto.md §7.9) and answers any other request with rpc_error
         400 METHOD_NOT_SUPPORTED.
           --log-messages on|off    a log line for every received message (default off: one line
                                    per connection event; the close line counts the messages);
                                    with on, lines are written in batches
           --drop-secret-message N[,M...]  test hook: acknowledge the Nth sendEncrypted call (counted
                                    over all chats from 1) but do not deliver it
         A connection that sends garbage is closed with a log line (stderr). Stops on SIGINT/SIGTERM.
         Every resource a client can make the server hold is bounded (a connection closed by a
         limit gets a log line saying which):
           --max-connections N      open connections (default 1024, or RLIMIT_NOFILE - 32 if
                                    lower); at the cap a new connection is accepted and the least
                                    recently active one is closed; on EMFILE the same, never a
                                    busy loop
           --max-frame-bytes N      largest transport packet accepted (default 1048576)
           --max-output-bytes N     unwritten output per connection (default 2097152: two of the
                                    largest frames, as a file download answers); a peer that
                                    does not read is closed when it is exceeded
           --max-buffer-bytes N     received-but-incomplete plus unwritten bytes of all connections
                                    together (default 33554432); above it the connection holding
                                    the most is closed
           --max-keys N             auth keys held (default 1024); the least recently used is
                                    forgotten when a new one would exceed it
           --key-idle-seconds S     a key unused this long is forgotten (default 3600; 0: never)
           --rsa-per-second R       RSA private operations (req_DH_params) one client address may
                                    force per second, bursts of 2R (default 20; 0: no limit);
                                    over the limit: transport error -429 and the connection closed
           --rsa-global-per-second R  the same for all clients together, bursts of R (default 50;
                                    0: no limit)
           --idle-timeout S         a connection without traffic this long is closed (default 300)
           --salt-period S          each auth key's server salt changes every S seconds on a
                                    schedule get_future_salts announces; the old salt is accepted
                                    300 s more (default 0: one salt per key, never changed)
         Ceilings (a larger value is bad usage): max-connections 1048576, max-frame-bytes 67108864,
         max-output-bytes 2^32, max-buffer-bytes 2^40, max-keys 2^24, rsa rates 1000000, idle-timeout
         30 days, key-idle-seconds and salt-period 10 years.
         --secret HEX               act as an MTProxy with this secret (Docs/MTProto.md §6.6, §6.7): 16 bytes
                                    (plain) or dd + 16 bytes (secure) take obfuscated2 connections
                                    under the secret's key; ee + 16 bytes + domain takes fake-TLS
                                    ones (the ClientHello's digest and time are checked, a replayed
                                    one is refused, the server hello is signed with the secret).
                                    Other openings are refused (--transports overrides)
  ping   connects with transport NAME (abridged, intermediate, padded-intermediate, full,
         obfuscated2 [abridged inside], obfuscated2-intermediate, obfuscated2-padded, http), runs the
         handshake against the public key(s) in PUB.pem (or a private key file's public half),
         sends ping and checks the pong, sends help.getNearestDc and checks the rpc_error. With
         --secret (as serve's) it goes through the MTProxy: dd uses padded intermediate, ee fake-TLS. Prints
         one line per step; exit status 0 when all passed, 1 otherwise. With --pfs SECONDS it then
         opens a second connection, makes a temporary key of that lifetime, binds it to the
         permanent key (auth.bindTempAuthKey, sent by itself) and checks that a ping queued before
         the binding is answered after it.
"""

nonisolated(unsafe) var mtprotoStopRequested: Int32 = 0

func mtprotoCommand(_ args: [String]) {
    if args.first == "secret-chat" { secretChatCommand(Array(args.dropFirst())); return }
    let o = Options(args, allowed: Set(["port", "rsa-key", "transports", "transport", "dc", "drop-secret-message", "log-messages", "secret", "pfs"]).union(serveLimitOptions),
                    positional: 1...1, command: "mtproto")
    if o.help { print(mtprotoUsage); exit(0) }
    guard let portValue = o.int("port", "mtproto"), (1...65_535).contains(portValue) else {
        usageError("mtproto: --port must be 1...65535")
    }
    let port = UInt16(portValue)
    switch o.positional[0] {
    case "serve":
        guard o.values["transport"] == nil, o.values["dc"] == nil, o.values["pfs"] == nil else { usageError("mtproto serve: unknown option") }
        var drops: Set<Int> = []
        for part in (o.values["drop-secret-message"] ?? "").split(separator: ",") {
            guard let n = Int(part), n >= 1 else { usageError("mtproto serve: --drop-secret-message takes message numbers (1, 2, ...)") }
            drops.insert(n)
        }
        let logMessages: Bool
        switch o.values["log-messages"] ?? "off" {
        case "on": logMessages = true
        case "off": logMessages = false
        default: usageError("mtproto serve: --log-messages takes on or off")
        }
        let secret: MTProxySecret?
        do { secret = try o.values["secret"].map { try MTProxySecret(hex: $0) } } catch { usageError("mtproto serve: --secret: \(error)") }
        serve(port: port, keyPath: o.values["rsa-key"], transports: o.values["transports"], secret: secret,
              limits: ServeLimits(o), dropSecretMessages: drops, logMessages: logMessages)
    case "ping":
        guard o.values["transports"] == nil, o.values["drop-secret-message"] == nil, o.values["log-messages"] == nil else {
            usageError("mtproto ping: unknown option --transports, --drop-secret-message or --log-messages")
        }
        if let extra = serveLimitOptions.first(where: { o.values[$0] != nil }) {
            usageError("mtproto ping: unknown option --\(extra)")
        }
        let keyPath = o.require("rsa-key", "mtproto ping")
        let name = o.require("transport", "mtproto ping")
        let dc = o.int("dc", "mtproto ping") ?? 2
        let secret: MTProxySecret?
        do { secret = try o.values["secret"].map { try MTProxySecret(hex: $0) } } catch { usageError("mtproto ping: --secret: \(error)") }
        let pfs = o.int("pfs", "mtproto ping")
        if let pfs, !(1...86_400).contains(pfs) { usageError("mtproto ping: --pfs takes 1...86400 seconds") }
        ping(port: port, keyPath: keyPath, transport: name, dc: Int32(clamping: dc), secret: secret, pfs: pfs.map { Int32($0) })
    default:
        usageError("mtproto: unknown subcommand '\(o.positional[0])' (serve, ping)")
    }
}

/// The options of `serve` that set its limits.
private let serveLimitOptions: Set<String> = [
    "salt-period", "max-connections", "max-frame-bytes", "max-output-bytes", "max-buffer-bytes", "max-keys", "key-idle-seconds",
    "rsa-per-second", "rsa-global-per-second", "idle-timeout",
]

/// The limits of `rampart mtproto serve`, from its options (defaults in ``mtprotoUsage``).
private struct ServeLimits {
    var descriptorLimit: Int?
    var maxConnections: Int
    var maxFrameBytes: Int
    var maxOutputBytes: Int
    var maxBufferBytes: Int
    var maxKeys: Int
    var keyIdleSeconds: Int
    var rsaPerSecond: Int
    var rsaGlobalPerSecond: Int
    var idleTimeoutSeconds: Int
    var saltPeriodSeconds: Int

    init(_ o: Options) {
        let c = "mtproto serve"
        // Every limit has a ceiling, so that the arithmetic on it (milliseconds, bursts, salt times) cannot
        // overflow; the ceilings are far above any useful setting.
        func limit(_ name: String, default d: Int, min lower: Int = 1, max upper: Int, why: String = "") -> Int {
            guard let v = o.int(name, c) else { return d }
            guard v >= lower else { usageError("\(c): --\(name) must be at least \(lower)\(why)") }
            guard v <= upper else { usageError("\(c): --\(name) must be at most \(upper)") }
            return v
        }
        let tenYears = 10 * 365 * 86_400
        descriptorLimit = fileDescriptorLimit()
        maxConnections = limit("max-connections", default: PollLimits.defaultMaxConnections(descriptorLimit: descriptorLimit),
                               max: 1 << 20)
        maxFrameBytes = limit("max-frame-bytes", default: 1 << 20, min: 4096, max: 1 << 26)
        maxOutputBytes = limit("max-output-bytes", default: 2 << 20, min: 4096, max: 1 << 32)
        maxBufferBytes = limit("max-buffer-bytes", default: 32 << 20, min: maxFrameBytes, max: 1 << 40,
                               why: " (--max-frame-bytes)")
        maxKeys = limit("max-keys", default: 1024, max: 1 << 24)
        keyIdleSeconds = limit("key-idle-seconds", default: 3600, min: 0, max: tenYears)
        rsaPerSecond = limit("rsa-per-second", default: 20, min: 0, max: 1_000_000)
        rsaGlobalPerSecond = limit("rsa-global-per-second", default: 50, min: 0, max: 1_000_000)
        idleTimeoutSeconds = limit("idle-timeout", default: 300, max: 30 * 86_400)
        saltPeriodSeconds = limit("salt-period", default: 0, min: 0, max: tenYears)
    }

    var poll: PollLimits {
        var p = PollLimits(maxConnections: maxConnections, maxOutputBytes: maxOutputBytes, maxBufferBytes: maxBufferBytes)
        p.idleTimeoutMs = Int64(idleTimeoutSeconds) * 1000
        return p
    }

    func apply(to conf: inout TestServer.Configuration) {
        conf.maxPacketLength = maxFrameBytes
        conf.saltPeriod = saltPeriodSeconds == 0 ? nil : Double(saltPeriodSeconds)
        conf.keyEviction = .init(maxKeys: maxKeys, idleLifetime: keyIdleSeconds == 0 ? nil : Double(keyIdleSeconds))
        conf.rsaLimitPerAddress = rsaPerSecond == 0 ? nil : .init(perSecond: Double(rsaPerSecond), burst: Double(2 * rsaPerSecond))
        conf.rsaLimitGlobal = rsaGlobalPerSecond == 0 ? nil
            : .init(perSecond: Double(rsaGlobalPerSecond), burst: Double(rsaGlobalPerSecond))
    }

    /// One log line with every limit in force.
    var summary: String {
        let fd = descriptorLimit.map(String.init) ?? "unlimited"
        return "limits: max-connections \(maxConnections) (RLIMIT_NOFILE \(fd)), max-frame-bytes \(maxFrameBytes), "
            + "max-output-bytes \(maxOutputBytes), max-buffer-bytes \(maxBufferBytes), max-keys \(maxKeys), "
            + "key-idle-seconds \(keyIdleSeconds), rsa-per-second \(rsaPerSecond), "
            + "rsa-global-per-second \(rsaGlobalPerSecond), idle-timeout \(idleTimeoutSeconds), salt-period \(saltPeriodSeconds)"
    }
}

func unixNow() -> Double {
    let (s, ns) = wallClock()
    return Double(s) + Double(ns) / 1e9
}

/// Whether log lines are collected and written in batches (with --log-messages on: a line per
/// message would otherwise be a write(2) per message).
nonisolated(unsafe) private var logBuffered = false
nonisolated(unsafe) private var logPending: [UInt8] = []

func logLine(_ s: String) {
    let (sec, _) = wallClock()
    guard logBuffered else {
        printError("[\(sec)] \(s)")
        return
    }
    logPending += Array("[\(sec)] \(s)\n".utf8)
    if logPending.count >= 64 << 10 { flushLog() }
}

/// Writes the batched log lines (every tick, when 64 KiB have collected, and at exit).
private func flushLog() {
    guard !logPending.isEmpty else { return }
    logPending.withUnsafeBytes { b in
        var off = 0
        while off < b.count {
            let n = write(2, b.baseAddress! + off, b.count - off)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            off += n
        }
    }
    logPending.removeAll(keepingCapacity: true)
}

private func serve(port: UInt16, keyPath: String?, transports: String?, secret: MTProxySecret?, limits: ServeLimits,
                   dropSecretMessages: Set<Int>, logMessages: Bool) {
    var allowed: Set<String>? = nil
    // Behind a secret only what an MTProxy speaks: obfuscated2 (plain and dd secrets), fake-TLS (ee).
    let transports = transports ?? (secret == nil ? "all" : { if case .fakeTLS = secret!.mode { "fake-tls" } else { "obfuscated2" } }())
    if transports != "all" {
        let names = Set(transports.split(separator: ",").map(String.init))
        guard !names.isEmpty, names.isSubset(of: TestServer.transportNames) else {
            usageError("mtproto serve: --transports takes all or a list of \(TestServer.transportNames.joined(separator: ","))")
        }
        allowed = names
    }
    var rng = SecureRandom()
    let key: RSA.PrivateKey
    if let path = keyPath, access(path, F_OK) == 0 {
        guard let text = readTextFile(path) else { usageError("mtproto serve: cannot read \(path)") }
        do { key = try RSA.PrivateKey(pemRepresentation: text) } catch { usageError("mtproto serve: \(path): \(error)") }
    } else {
        do { key = try RSA.PrivateKey.generate(bits: 2048, using: &rng) } catch { usageError("mtproto serve: \(error)") }
        if let path = keyPath {
            let pem = Array(key.pemRepresentation.utf8)
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            guard fd >= 0 else { usageError("mtproto serve: cannot create \(path)") }
            let written = pem.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            guard written == pem.count else { usageError("mtproto serve: cannot write \(path)") }
        }
    }
    var server: TestServer
    do {
        var conf = TestServer.Configuration(handshake: .init(privateKeys: [key]))
        conf.allowedTransports = allowed
        conf.proxySecret = secret?.key
        if case .fakeTLS? = secret?.mode { conf.proxyFakeTLS = true }
        conf.dropSecretMessages = dropSecretMessages
        conf.logMessages = logMessages
        logBuffered = logMessages
        limits.apply(to: &conf)
        server = try TestServer(configuration: conf)
    } catch {
        usageError("mtproto serve: \(error)")
    }
    let listener: Int32
    do { listener = try Socket.listen(port: port) } catch { usageError("mtproto serve: \(error)") }
    print(key.publicKey.pkcs1PEMRepresentation, terminator: "")
    let f = String(key.publicKey.mtprotoFingerprint, radix: 16)
    print("mtproto-fingerprint: " + String(repeating: "0", count: 16 - f.count) + f)
    print("listening on 127.0.0.1:\(port)")
    fflush(nil)
    signal(SIGPIPE, SIG_IGN)
    signal(SIGINT) { _ in mtprotoStopRequested = 1 }
    signal(SIGTERM) { _ in mtprotoStopRequested = 1 }
    logLine(limits.summary)
    if let fdLimit = limits.descriptorLimit, limits.maxConnections > fdLimit - PollLimits.descriptorHeadroom {
        logLine("warning: --max-connections \(limits.maxConnections) is above RLIMIT_NOFILE \(fdLimit) minus "
                + "\(PollLimits.descriptorHeadroom); at the descriptor limit connections are shed as at the cap")
    }
    var loop = PollServer(listener: listener, limits: limits.poll)
    var shed = 0
    var lastSweep = monotonicMilliseconds()
    loop.run(onOpen: { fd, address in
        server.open(Int(fd), address: address)
        logLine("connection \(fd): opened from \(address)")
    }, onData: { fd, bytes in
        let reply = server.receive(bytes, from: Int(fd), now: unixNow(), using: &rng)
        for line in reply.log { logLine(line) }
        return PollServer.Reply(send: reply.send, close: reply.close, buffered: server.bufferedByteCount(of: Int(fd)),
                                push: reply.push.map { PollServer.Push(fd: Int32(clamping: $0.connection), bytes: $0.bytes) })
    }, onClose: { fd, why in
        let messages = server.messageCount(of: Int(fd))
        server.close(Int(fd))
        if case .shed = why { shed += 1 }
        logLine("connection \(fd): closed (\(why)) after \(messages) messages")
    }, onTick: { now in
        flushLog()
        guard now - lastSweep >= 5_000 else { return }
        lastSweep = now
        for line in server.sweep(now: unixNow()) { logLine(line) }
    }, log: logLine, shouldStop: { mtprotoStopRequested != 0 }, tickPush: { _ in
        server.expireLongPolls(now: unixNow()).map { PollServer.Push(fd: Int32(clamping: $0.connection), bytes: $0.bytes) }
    })
    close(listener)
    logLine("stopped; \(server.keysCreated) auth keys were created")
    logLine("limits hit: \(shed) connections shed, \(server.keysEvicted) auth keys forgotten (\(server.keyCount) held), "
            + "\(server.rsaOperations) RSA operations, \(server.rsaRefusals) refused by the rate limit")
    flushLog()
}

/// The server's RSA public key(s) from a PEM file (public keys, or a private key's public half);
/// a usage error when it cannot be read.
func readServerPublicKeys(_ path: String, _ command: String) -> [RSA.PublicKey] {
    guard let text = readTextFile(path) else { usageError("\(command): cannot read \(path)") }
    do {
        if text.contains("-----BEGIN RSA PRIVATE KEY-----") {
            return [try RSA.PrivateKey(pemRepresentation: text).publicKey]
        }
        return try RSA.PublicKey.all(pemRepresentation: text)
    } catch {
        usageError("\(command): \(path): \(error)")
    }
}

/// Client transports by name.
func clientTransport(_ name: String, dc: Int32, port: UInt16 = 443) -> ClientTransport.Kind? {
    let d = Int16(clamping: dc)
    switch name {
    case "http": return .http(host: "127.0.0.1:\(port)")
    case "abridged": return .plain(.abridged)
    case "intermediate": return .plain(.intermediate)
    case "padded-intermediate": return .plain(.paddedIntermediate)
    case "full": return .plain(.full)
    case "obfuscated2": return .obfuscated2(.abridged, dcId: d, secret: nil)
    case "obfuscated2-intermediate": return .obfuscated2(.intermediate, dcId: d, secret: nil)
    case "obfuscated2-padded": return .obfuscated2(.paddedIntermediate, dcId: d, secret: nil)
    default: return nil
    }
}

private func ping(port: UInt16, keyPath: String, transport name: String, dc: Int32, secret: MTProxySecret?, pfs: Int32?) {
    guard var kind = clientTransport(name, dc: dc, port: port) else { usageError("mtproto ping: unknown transport '\(name)'") }
    if let secret {
        // Through an MTProxy: obfuscated2 with the secret (dd: padded intermediate inside), or fake-TLS (ee).
        switch (secret.mode, kind) {
        case (.fakeTLS, _):
            kind = .fakeTLS(secret, dcId: Int16(clamping: dc), unixTime: UInt32(clamping: Int64(unixNow())))
        case (.secure, _):
            kind = .obfuscated2(.paddedIntermediate, dcId: Int16(clamping: dc), secret: secret.key)
        case (.plain, .obfuscated2(let f, let d, _)):
            kind = .obfuscated2(f, dcId: d, secret: secret.key)
        case (.plain, _):
            usageError("mtproto ping: a plain secret goes with an obfuscated2 transport")
        }
    }
    let keys = readServerPublicKeys(keyPath, "mtproto ping")
    func fail(_ s: String) -> Never {
        print("FAIL \(name): \(s)")
        exit(1)
    }
    var rng = SecureRandom()
    let fd: Int32
    do { fd = try Socket.connect(port: port) } catch { fail("\(error)") }
    defer { close(fd) }
    var client: ClientConnection
    do { client = try ClientConnection(transport: kind, handshake: .init(publicKeys: keys, dc: dc), using: &rng) } catch { fail("\(error)") }

    /// Reads until `done` picks something out of the events (10 s without progress is a failure).
    func awaitEvent<T>(_ what: String, _ done: (ClientConnection.Event) -> T?) -> T {
        awaitEvent(on: &client, fd, what, done)
    }
    func awaitEvent<T>(on client: inout ClientConnection, _ fd: Int32, _ what: String, _ done: (ClientConnection.Event) -> T?) -> T {
        while true {
            let bytes: [UInt8]
            do { bytes = try Socket.readSome(fd, timeoutMs: 10_000) } catch { fail("waiting for \(what): \(error)") }
            if bytes.isEmpty { fail("server closed the connection while waiting for \(what)") }
            do {
                let (reply, events) = try client.receive(bytes, now: unixNow(), using: &rng)
                if !reply.isEmpty { try Socket.writeAll(fd, reply) }
                for e in events {
                    if case .transportError(let code) = e { fail("transport error \(code) while waiting for \(what)") }
                    if let t = done(e) { return t }
                }
            } catch {
                fail("while waiting for \(what): \(error)")
            }
        }
    }

    let t0 = monotonicMilliseconds()
    do { try Socket.writeAll(fd, try client.start(now: unixNow(), using: &rng)) } catch { fail("\(error)") }
    let result = awaitEvent("the handshake") { if case .handshakeCompleted(let r) = $0 { return r } else { return nil } }
    print("handshake ok (\(name)): auth_key_id \(hexWord(result.authKey.id)), \(monotonicMilliseconds() - t0) ms")

    let pingId = Int64(bitPattern: rng.next())
    var w = TLWriter()
    w.constructor(ServiceConstructor.ping)
    w.int64(pingId)
    let t1 = monotonicMilliseconds()
    let sent: (bytes: [UInt8], msgId: Int64)
    do { sent = try client.send(w.bytes, now: unixNow(), using: &rng); try Socket.writeAll(fd, sent.bytes) } catch { fail("\(error)") }
    _ = awaitEvent("pong") { e -> Bool? in
        guard case .message(let m) = e, case .pong(let msgId, let id)? = try? m.decoded() else { return nil }
        guard msgId == sent.msgId, id == pingId else { fail("pong for msg_id \(msgId), ping_id \(id): not ours") }
        return true
    }
    print("pong ok: ping_id \(hexWord(UInt64(bitPattern: pingId))), \(monotonicMilliseconds() - t1) ms")

    var q = TLWriter()
    q.constructor(0x1fb3_3026)  // help.getNearestDc
    let query: (bytes: [UInt8], id: RequestLayer.RequestID)
    do { query = try client.request(q.bytes, now: unixNow(), using: &rng); try Socket.writeAll(fd, query.bytes) } catch { fail("\(error)") }
    let err = awaitEvent("rpc_error") { e -> RPCError? in
        switch e {
        case .request(.rpcError(query.id, let err)): return err
        case .request(.result(query.id, _)), .request(.undecodableResult(query.id, _)): fail("the answer is not an rpc_error")
        default: return nil
        }
    }
    guard err == .methodNotSupported else { fail("expected 400 METHOD_NOT_SUPPORTED, got \(err.code) \(err.message)") }
    print("rpc_error ok: \(err.code) \(err.message)")

    guard let lifetime = pfs else { return }
    // Perfect forward secrecy (Docs/MTProto.md §5.1): on a second connection, a temporary key bound to
    // the permanent one just made; a ping queued at once waits for the binding, then is answered.
    guard let permanent = client.session?.authKey else { fail("no permanent key") }
    let fd2: Int32
    do { fd2 = try Socket.connect(port: port) } catch { fail("\(error)") }
    defer { close(fd2) }
    var temp: ClientConnection
    do {
        temp = try ClientConnection(transport: kind, handshake: .init(publicKeys: keys, dc: dc, mode: .temporary(expiresIn: lifetime)),
                                    permanentKey: permanent, using: &rng)
        var opening = try temp.start(now: unixNow(), using: &rng)
        let early = try temp.request(ServiceMessage.ping(pingId: 77).encoded(), now: unixNow(), using: &rng)
        opening += early.bytes
        try Socket.writeAll(fd2, opening)
        let expiresAt = awaitEvent(on: &temp, fd2, "the binding") { if case .temporaryKeyBound(let at) = $0 { return at } else { return nil } }
        guard let tempKey = temp.session?.authKey else { fail("no temporary key") }
        print("pfs ok: temporary key \(hexWord(tempKey.id)) bound to \(hexWord(permanent.id)), expires_at \(expiresAt)")
        _ = awaitEvent(on: &temp, fd2, "the pong under the temporary key") { e -> Bool? in
            guard case .request(.result(early.id, let body)) = e else { return nil }
            guard case .pong(_, 77)? = try? ServiceMessage(decoding: body) else { fail("not the pong") }
            return true
        }
        print("pfs ping ok: the request queued before the binding was answered after it")
    } catch {
        fail("pfs: \(error)")
    }
}

private func hexWord(_ v: UInt64) -> String {
    let s = String(v, radix: 16)
    return String(repeating: "0", count: 16 - s.count) + s
}
