// `rampart threema serve`: a loopback Threema chat server (CSP) on 127.0.0.1. The identities,
// connections, routing and queues are RampartThreemaChatServer's ChatHub; this file owns the
// listening socket (through PollServer in Sockets.swift), the key and identity files, the trace file,
// the clocks and the signals.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartThreema
import RampartThreemaChatServer

let threemaServeUsage = """
usage: rampart threema serve --port P [--key FILE] [--dir DIR] [--identities FILE] [--register-on-login]
                             [--max-connections N] [--queue-limit N] [--queue-bytes N]
                             [--sender-queue-limit N] [--sender-queue-bytes N] [--address-queue-bytes N]
                             [--total-queue-bytes N]
                             [--message-lifetime S] [--ack-window S] [--max-identities N]
                             [--registration-rate R[:B]] [--handshake-rate R[:B]]
                             [--global-handshake-rate R[:B]]
                             [--handshake-timeout S] [--idle-timeout S] [--trace FILE]

  A chat server speaking the chat-server protocol (CSP) on 127.0.0.1:P only (--port 0 picks a free
  port): logins verified against known identities, end-to-end messages routed between logged-in
  identities (the server reads only the envelope header), offline queues delivered on login and kept
  until acknowledged, echo. Prints the server public key (`server key HEX`) and
  `listening on 127.0.0.1:PORT`; logs one line per event on stderr. Stops on SIGINT/SIGTERM with a
  summary line. Docs/Threema.md §9.5 describes the policies and the limits.

  --key FILE              the server permanent secret key (64 hex digits); created (mode 0600) with
                          a fresh key when FILE does not exist. Without it, a fresh key per run
  --dir DIR               keep registered identities and queued messages in DIR/journal (DIR must
                          exist; one server per DIR): every record is written and synced before the
                          server acknowledges what it commits to, so a kill loses nothing
                          acknowledged; the journal is compacted at start and as it grows.
                          Without it, state lives in memory only
  --identities FILE       known identities, one `ID PUBLIC-KEY-HEX` per line (# comments); they
                          never expire and take precedence over registrations in --dir
  --register-on-login     an unknown identity may send `rampart-register ‖ ID ‖ public key` before
                          its client-hello; it is registered once its login vouch verifies
  --max-connections N     open connections (default 1024); beyond it the least recently active
                          connection that has not logged in is shed (a logged-in one only if
                          there is none)
  --queue-limit N         messages queued per receiver (default 100); more are refused with an alert
  --queue-bytes N         bytes queued per receiver (default 524288)
  --sender-queue-limit N  messages one sender may have queued for all receivers (default 1000)
  --sender-queue-bytes N  bytes one sender may have queued for all receivers (default 1048576)
  --address-queue-bytes N bytes the senders on one address may have queued (default 16777216)
  --total-queue-bytes N   bytes queued in all (default 67108864). Queued bytes are charged as the
                          memory they take (envelope, allocation and queue entry)
  --message-lifetime S    seconds an undelivered message is kept (default 1209600, 14 days)
  --ack-window S          seconds a delivered message waits for the receiver's acknowledgement
                          before it is released (default 60)
  --max-identities N      identities known at most (default 100000); registered identities expire
                          90 days after their last login
  --registration-rate R[:B]  registrations per second per address, bursts of B (default 0.0167:64,
                          one a minute; 0: no limit)
  --handshake-rate R[:B]  handshakes per second per address (default 20:200; 0: no limit)
  --global-handshake-rate R[:B]  handshakes per second in all (default 500:1000; 0: no limit)
  --handshake-timeout S   seconds from connect to a verified login (default 10)
  --idle-timeout S        a logged-in connection without a complete payload for S seconds, or any
                          connection without traffic, is closed (default 300)
  --trace FILE            append every CSP payload the server handles, as hex, one per line
                          (`in|out CONNECTION ID TYPE DATA`)
"""

/// `rampart threema serve` and `rampart threema client-test` (ThreemaChatClientCommand.swift).
func threemaChatCommand(_ name: String, _ args: [String]) {
    if name == "serve" { threemaServeCommand(args) } else { threemaClientTestCommand(args) }
}

nonisolated(unsafe) var chatServerStopRequested: Int32 = 0

private func chatLog(_ s: String) {
    let (sec, _) = wallClock()
    printError("[\(sec)] \(s)")
}

private func chatSeconds() -> Double {
    let (s, ns) = wallClock()
    return Double(s) + Double(ns) / 1e9
}

/// The port a bound socket listens on.
private func listeningPort(_ fd: Int32) -> UInt16? {
    var addr = sockaddr_in()
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    let r = withUnsafeMutablePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
    }
    return r == 0 ? UInt16(bigEndian: addr.sin_port) : nil
}

/// 64 hex digits (bytes, no String copy) as 32 bytes, or nil.
private func decodeHexKey(_ text: [UInt8]) -> [UInt8]? {
    guard text.count == 64 else { return nil }
    func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil
        }
    }
    var out = [UInt8](repeating: 0, count: 32)
    for i in 0..<32 {
        guard let hi = nibble(text[2 * i]), let lo = nibble(text[2 * i + 1]) else { out.secureWipe(); return nil }
        out[i] = hi << 4 | lo
    }
    return out
}

/// Reads the key file, or creates it (O_EXCL, mode 0600) with a fresh key. The file's bytes and the
/// raw key are wiped after use (no String copy is made).
private func loadOrCreateKey(_ path: String, _ c: String) -> Curve25519.KeyAgreement.PrivateKey {
    if access(path, F_OK) == 0 {
        var text = readFile(path, limit: 4096, c)
        defer { text.secureWipe() }
        while let last = text.last, last == 0x0A || last == 0x0D || last == 0x20 { text.removeLast() }
        guard var raw = decodeHexKey(text) else { usageError("\(c): --key \(path) must hold 64 hex digits") }
        defer { raw.secureWipe() }
        guard let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw) else { usageError("\(c): bad key in \(path)") }
        return key
    }
    var rng = SecureRandom()
    let key = Curve25519.KeyAgreement.PrivateKey(using: &rng)
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    guard fd >= 0 else { usageError("\(c): cannot create --key \(path)") }
    var raw = key.rawRepresentation
    defer { raw.secureWipe() }
    let digits = Array("0123456789abcdef".utf8)
    var line = [UInt8](repeating: 0x0A, count: 65)
    defer { line.secureWipe() }
    for i in 0..<32 {
        line[2 * i] = digits[Int(raw[i] >> 4)]
        line[2 * i + 1] = digits[Int(raw[i] & 0x0F)]
    }
    let n = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard n == line.count, fsync(fd) == 0 else { close(fd); unlink(path); usageError("\(c): cannot write --key \(path)") }
    close(fd)
    chatLog("created a new server key in \(path)")
    return key
}

private func loadIdentities(_ path: String, _ c: String) -> [ThreemaID: Curve25519.KeyAgreement.PublicKey] {
    guard let text = readTextFile(path) else { usageError("\(c): cannot read --identities \(path)") }
    var out: [ThreemaID: Curve25519.KeyAgreement.PublicKey] = [:]
    for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
        if words.isEmpty { continue }
        guard words.count == 2, let id = try? ThreemaID(String(words[0])), let key = try? Hex.decode(String(words[1])),
              let contact = try? ThreemaContact(id: id, publicKey: key) else {
            usageError("\(c): --identities \(path) line \(n + 1): expected `ID PUBLIC-KEY-HEX`")
        }
        out[id] = contact.publicKey
    }
    return out
}

/// `R` or `R:B` as a rate (burst 2R, at least 1, when B is left out); "0" is none. R is at most 1e9
/// (as B), so that the burst stays finite and fits an `Int`.
private func chatRate(_ text: String, _ option: String, _ c: String) -> ChatRate? {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count <= 2, let r = Double(parts[0]), r.isFinite, r >= 0, r <= 1e9 else {
        usageError("\(c): --\(option) takes R or R:B (events per second at most 1e9, burst)")
    }
    if r == 0 && parts.count == 1 { return nil }
    guard parts.count == 2 else { return ChatRate(perSecond: r, burst: max(1, 2 * r)) }
    guard let b = Double(parts[1]), b.isFinite, b >= 1, b <= 1e9 else { usageError("\(c): --\(option) burst must be 1...1e9") }
    return ChatRate(perSecond: r, burst: b)
}

/// The hub's journal in `--dir`: read and compacted at start, appended (write, fdatasync) before
/// the server acts on a batch of records, compacted again when it has grown well past the state.
private struct JournalFile {
    let dir: String
    var path: String { dir + "/journal" }
    var fd: Int32 = -1
    var size = 0

    /// Reads the whole journal (empty when there is none).
    func read(_ c: String) -> [UInt8] {
        access(path, F_OK) == 0 ? readFile(path, limit: 4 << 30, c) : []
    }

    /// Writes `bytes` to the journal's temporary file, syncs it, renames it over the journal,
    /// syncs the directory, and reopens the journal for appending. False on any failure (the old
    /// journal is then still in place).
    mutating func replace(with bytes: [UInt8]) -> Bool {
        guard bytes.withUnsafeBytes({ writeFileAtomically(path, $0) }) else { return false }
        if fd >= 0 { close(fd) }
        fd = open(path, O_WRONLY | O_APPEND)
        guard fd >= 0 else { return false }
        size = bytes.count
        return true
    }

    /// Appends records and syncs them.
    mutating func append(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return true }
        guard fd >= 0, writeFully(fd, bytes), fdatasync(fd) == 0 else { return false }
        size += bytes.count
        return true
    }
}

func threemaServeCommand(_ args: [String]) {
    let c = "threema serve"
    var rest: [String] = []
    var register = false
    for a in args { if a == "--register-on-login" { register = true } else { rest.append(a) } }
    let o = Options(rest, allowed: ["port", "key", "dir", "identities", "max-connections", "queue-limit", "queue-bytes",
                                    "sender-queue-limit", "sender-queue-bytes", "address-queue-bytes", "total-queue-bytes", "message-lifetime",
                                    "ack-window", "max-identities", "registration-rate", "handshake-rate",
                                    "global-handshake-rate", "handshake-timeout", "idle-timeout", "trace"], positional: 0...0,
                    command: c)
    if o.help { print(threemaServeUsage); exit(0) }
    guard let portValue = o.int("port", c), (0...65_535).contains(portValue) else { usageError("\(c): --port must be 0...65535") }
    func number(_ name: String, default d: Int, max m: Int) -> Int {
        guard let v = o.int(name, c) else { return d }
        guard v >= 1, v <= m else { usageError("\(c): --\(name) must be 1...\(m)") }
        return v
    }
    let key: Curve25519.KeyAgreement.PrivateKey
    if let path = o.values["key"] { key = loadOrCreateKey(path, c) } else {
        var rng = SecureRandom()
        key = .init(using: &rng)
    }
    var conf = ChatHub.Configuration(permanentKey: key)
    conf.registerOnLogin = register
    conf.queueLimit = number("queue-limit", default: 100, max: 1_000_000)
    conf.queueByteLimit = number("queue-bytes", default: 512 * 1024, max: 64 << 20)
    conf.senderQueueByteLimit = number("sender-queue-bytes", default: conf.senderQueueByteLimit, max: 1 << 40)
    conf.addressQueueByteLimit = number("address-queue-bytes", default: conf.addressQueueByteLimit, max: 1 << 40)
    conf.totalQueueByteLimit = number("total-queue-bytes", default: conf.totalQueueByteLimit, max: 1 << 40)
    conf.senderQueueLimit = number("sender-queue-limit", default: max(conf.senderQueueLimit, conf.queueLimit), max: 100_000_000)
    conf.messageLifetime = Double(number("message-lifetime", default: Int(conf.messageLifetime), max: 10 * 365 * 86_400))
    conf.acknowledgementWindow = Double(number("ack-window", default: Int(conf.acknowledgementWindow), max: 86_400))
    conf.maxIdentities = number("max-identities", default: conf.maxIdentities, max: 100_000_000)
    if let t = o.values["registration-rate"] { conf.registrationRate = chatRate(t, "registration-rate", c) }
    if let t = o.values["handshake-rate"] { conf.handshakeRate = chatRate(t, "handshake-rate", c) }
    if let t = o.values["global-handshake-rate"] { conf.globalHandshakeRate = chatRate(t, "global-handshake-rate", c) }
    conf.handshakeTimeout = Double(number("handshake-timeout", default: 10, max: 86_400))
    let idle = number("idle-timeout", default: 300, max: 30 * 86_400)
    conf.idleTimeout = Double(idle)
    let maxConnections = number("max-connections", default: PollLimits.defaultMaxConnections(descriptorLimit: fileDescriptorLimit()),
                                max: 1 << 20)
    let identities = o.values["identities"].map { loadIdentities($0, c) } ?? [:]
    var trace: Int32 = -1
    if let path = o.values["trace"] {
        trace = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard trace >= 0 else { usageError("\(c): cannot open --trace \(path)") }
    }
    var hub = ChatHub(configuration: conf, identities: identities)

    // Durable state: replay the journal, then compact it (which also drops a torn tail).
    var journal: JournalFile?
    if let dir = o.values["dir"] {
        var st = stat()
        guard stat(dir, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { usageError("\(c): --dir \(dir) is not a directory") }
        var j = JournalFile(dir: dir)
        let lock = open(dir + "/lock", O_RDWR | O_CREAT, 0o600)
        guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            usageError("\(c): --dir \(dir) is in use by another server (or DIR/lock cannot be opened)")
        }
        let bytes = j.read(c)
        guard let summary = hub.restore(journal: bytes, now: chatSeconds()) else {
            usageError("\(c): \(j.path) is not a chat server journal")
        }
        chatLog("journal: \(summary.records) records replayed, \(summary.identities) registered identities, "
                + "\(summary.messages) queued messages, \(summary.expired) expired while stopped"
                + (summary.ignoredTailBytes > 0 ? ", \(summary.ignoredTailBytes) bytes of a torn last record ignored" : ""))
        guard j.replace(with: hub.journalSnapshot()) else { usageError("\(c): cannot write \(j.path): \(String(cString: strerror(errno)))") }
        journal = j
    }

    let listener: Int32
    do { listener = try Socket.listen(port: UInt16(portValue)) } catch { usageError("\(c): \(error)") }
    guard let port = listeningPort(listener) else { usageError("\(c): getsockname failed") }
    signal(SIGPIPE, SIG_IGN)
    signal(SIGINT) { _ in chatServerStopRequested = 1 }
    signal(SIGTERM) { _ in chatServerStopRequested = 1 }
    print("server key \(Hex.encode(key.publicKey.rawRepresentation))")
    print("listening on 127.0.0.1:\(port)")
    fflush(nil)
    func rateText(_ r: ChatRate?) -> String { r.map { "\($0.perSecond)/s burst \(Int($0.burst))" } ?? "none" }
    chatLog("threema serve: \(hub.identityCount) known identities, register-on-login \(register ? "on" : "off"), "
            + "max-connections \(maxConnections), queue-limit \(conf.queueLimit), queue-bytes \(conf.queueByteLimit), "
            + "sender-queue-bytes \(conf.senderQueueByteLimit), address-queue-bytes \(conf.addressQueueByteLimit), "
            + "total-queue-bytes \(conf.totalQueueByteLimit), message-lifetime \(Int(conf.messageLifetime)), "
            + "ack-window \(Int(conf.acknowledgementWindow)), registration-rate \(rateText(conf.registrationRate)), "
            + "handshake-rate \(rateText(conf.handshakeRate)), global-handshake-rate \(rateText(conf.globalHandshakeRate)), "
            + "handshake-timeout \(Int(conf.handshakeTimeout)), idle-timeout \(idle), trace \(trace >= 0 ? "on" : "off"), "
            + "dir \(o.values["dir"] ?? "none (memory only)")")

    // A login may flush a whole queue at once: the output budget of a connection covers it.
    var limits = PollLimits(maxConnections: maxConnections, maxOutputBytes: conf.queueByteLimit + (1 << 20),
                            maxBufferBytes: 256 << 20)
    // The hub closes logged-in connections that send no complete payload; this is the backstop
    // for any connection without traffic.
    limits.idleTimeoutMs = Int64(idle) * 1000 + 5_000
    var loop = PollServer(listener: listener, limits: limits)
    var connectionsServed = 0
    var journalFailed = false

    /// Makes the hub's records durable before anything they commit to goes out. A journal that
    /// cannot be written stops the server: acknowledging what is not stored would be a lie.
    func commit(_ records: [UInt8]) -> Bool {
        guard !records.isEmpty, journal != nil else { return true }
        if journal!.append(records) { return true }
        chatLog("journal: write to \(journal!.path) failed (\(String(cString: strerror(errno)))); stopping")
        journalFailed = true
        chatServerStopRequested = 1
        return false
    }

    func writeTrace(_ records: [ChatHub.TraceRecord]) {
        guard trace >= 0, !records.isEmpty else { return }
        var text = ""
        for r in records { text += r.line + "\n" }
        guard writeFully(trace, Array(text.utf8)) else { chatLog("trace: write failed; tracing stops"); close(trace); trace = -1; return }
    }

    /// Hub actions as a reply for `fd` and pushes to the others.
    func reply(_ out: ChatHub.Output, for fd: Int32) -> PollServer.Reply {
        for line in out.log { chatLog(line) }
        var r = PollServer.Reply()
        guard commit(out.journal) else { r.close = true; return r }
        writeTrace(out.trace)
        for a in out.actions {
            switch a {
            case .send(let target, let bytes):
                if Int32(target) == fd { r.send += bytes } else if let i = r.push.lastIndex(where: { $0.fd == Int32(target) }) {
                    r.push[i].bytes += bytes
                } else {
                    r.push.append(PollServer.Push(fd: Int32(target), bytes: bytes))
                }
            case .close(let target, _):
                if Int32(target) == fd { r.close = true } else if let i = r.push.lastIndex(where: { $0.fd == Int32(target) }) {
                    r.push[i].close = true
                } else {
                    r.push.append(PollServer.Push(fd: Int32(target), bytes: [], close: true))
                }
            }
        }
        r.buffered = hub.bufferedByteCount(of: Int(fd))
        r.established = hub.identity(of: Int(fd)) != nil
        return r
    }

    loop.run(onOpen: { fd, address in
        connectionsServed += 1
        hub.open(Int(fd), address: address, now: chatSeconds())
    }, onData: { fd, bytes in
        reply(hub.receive(bytes, from: Int(fd), now: chatSeconds()), for: fd)
    }, onClose: { fd, why in
        let id = hub.identity(of: Int(fd))
        hub.close(Int(fd))
        if case .other(let text) = why, text == "peer closed" || text == "closed by server" {
            if let id { chatLog("connection \(fd): \(id) disconnected") }
        } else {
            chatLog("connection \(fd): closed (\(why))")
        }
    }, onTick: { _ in
        // Compaction: the journal is rewritten once it holds more than twice the live state.
        guard var j = journal, j.size > 2 * hub.journalLiveByteCount + (1 << 20) else { return }
        let before = j.size
        if j.replace(with: hub.journalSnapshot()) {
            chatLog("journal: compacted \(before) -> \(j.size) bytes")
        } else {
            chatLog("journal: compaction failed (\(String(cString: strerror(errno)))); appending to the old file")
        }
        journal = j
    }, log: chatLog, shouldStop: { chatServerStopRequested != 0 }, expire: { _ in
        let out = hub.expire(now: chatSeconds())
        for line in out.log { chatLog(line) }
        _ = commit(out.journal)
        return out.actions.compactMap { if case .close(let fd, let why) = $0 { (Int32(fd), why) } else { nil } }
    })
    close(listener)
    if trace >= 0 { close(trace) }
    var usage = rusage()
    #if canImport(Glibc)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    chatLog("stopped; \(connectionsServed) connections, \(hub.identityCount) identities, \(hub.messagesRouted) messages routed, "
            + "\(hub.messagesRefused) refused, \(hub.messagesExpired) expired, \(hub.messagesReleasedUnacknowledged) released "
            + "unacknowledged, \(hub.handshakesRefused) handshakes and \(hub.registrationsRefused) registrations refused, "
            + "\(hub.violations) protocol violations, \(hub.totalQueuedCount) messages (\(hub.totalQueuedBytes) bytes) still queued, "
            + "peak RSS \(usage.ru_maxrss) KiB")
    if journalFailed { exit(1) }
}
