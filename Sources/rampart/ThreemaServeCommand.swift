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
usage: rampart threema serve --port P [--key FILE] [--identities FILE] [--register-on-login]
                             [--max-connections N] [--queue-limit N] [--queue-bytes N]
                             [--handshake-timeout S] [--idle-timeout S] [--trace FILE]

  A chat server speaking the chat-server protocol (CSP) on 127.0.0.1:P only (--port 0 picks a free
  port): logins verified against known identities, end-to-end messages routed between logged-in
  identities (the server reads only the envelope header), offline queues delivered on login and kept
  until acknowledged, echo. Prints the server public key (`server key HEX`) and
  `listening on 127.0.0.1:PORT`; logs one line per event on stderr. Stops on SIGINT/SIGTERM with a
  summary line. Docs/Threema.md §9.5 describes the policies.

  --key FILE              the server permanent secret key (64 hex digits); created (mode 0600) with
                          a fresh key when FILE does not exist. Without it, a fresh key per run
  --identities FILE       known identities, one `ID PUBLIC-KEY-HEX` per line (# comments)
  --register-on-login     an unknown identity may send `rampart-register ‖ ID ‖ public key` before
                          its client-hello; it is registered once its login vouch verifies
  --max-connections N     open connections (default 1024); beyond it the least recently active
                          connection is shed
  --queue-limit N         messages queued per identity (default 100); more are refused with an alert
  --queue-bytes N         envelope bytes queued per identity (default 524288)
  --handshake-timeout S   seconds from connect to a verified login (default 10)
  --idle-timeout S        a connection without traffic for S seconds is closed (default 300)
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

func threemaServeCommand(_ args: [String]) {
    let c = "threema serve"
    var rest: [String] = []
    var register = false
    for a in args { if a == "--register-on-login" { register = true } else { rest.append(a) } }
    let o = Options(rest, allowed: ["port", "key", "identities", "max-connections", "queue-limit", "queue-bytes",
                                    "handshake-timeout", "idle-timeout", "trace"], command: c)
    if o.help { print(threemaServeUsage); exit(0) }
    if !o.positional.isEmpty { usageError("\(c): unexpected argument \(o.positional[0])") }
    guard let portValue = o.int("port", c), portValue <= 65_535 else { usageError("\(c): --port must be 0...65535") }
    func atLeastOne(_ name: String, default d: Int) -> Int {
        guard let v = o.int(name, c) else { return d }
        guard v >= 1 else { usageError("\(c): --\(name) must be at least 1") }
        return v
    }
    let key: Curve25519.KeyAgreement.PrivateKey
    if let path = o.values["key"] { key = loadOrCreateKey(path, c) } else {
        var rng = SecureRandom()
        key = .init(using: &rng)
    }
    var conf = ChatHub.Configuration(permanentKey: key)
    conf.registerOnLogin = register
    conf.queueLimit = atLeastOne("queue-limit", default: 100)
    conf.queueByteLimit = atLeastOne("queue-bytes", default: 512 * 1024)
    guard conf.queueByteLimit <= 64 << 20 else { usageError("\(c): --queue-bytes must be at most 67108864") }
    conf.handshakeTimeout = Double(atLeastOne("handshake-timeout", default: 10))
    let idle = atLeastOne("idle-timeout", default: 300)
    let maxConnections = atLeastOne("max-connections", default: PollLimits.defaultMaxConnections(descriptorLimit: fileDescriptorLimit()))
    let identities = o.values["identities"].map { loadIdentities($0, c) } ?? [:]
    var trace: Int32 = -1
    if let path = o.values["trace"] {
        trace = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard trace >= 0 else { usageError("\(c): cannot open --trace \(path)") }
    }
    var hub = ChatHub(configuration: conf, identities: identities)

    let listener: Int32
    do { listener = try Socket.listen(port: UInt16(portValue)) } catch { usageError("\(c): \(error)") }
    guard let port = listeningPort(listener) else { usageError("\(c): getsockname failed") }
    signal(SIGPIPE, SIG_IGN)
    signal(SIGINT) { _ in chatServerStopRequested = 1 }
    signal(SIGTERM) { _ in chatServerStopRequested = 1 }
    print("server key \(Hex.encode(key.publicKey.rawRepresentation))")
    print("listening on 127.0.0.1:\(port)")
    fflush(nil)
    chatLog("threema serve: \(identities.count) known identities, register-on-login \(register ? "on" : "off"), "
            + "max-connections \(maxConnections), queue-limit \(conf.queueLimit), queue-bytes \(conf.queueByteLimit), "
            + "handshake-timeout \(Int(conf.handshakeTimeout)), idle-timeout \(idle), trace \(trace >= 0 ? "on" : "off")")

    // A login may flush a whole queue at once: the output budget of a connection covers it.
    var limits = PollLimits(maxConnections: maxConnections, maxOutputBytes: conf.queueByteLimit + (1 << 20),
                            maxBufferBytes: 256 << 20)
    limits.idleTimeoutMs = Int64(idle) * 1000
    var loop = PollServer(listener: listener, limits: limits)
    var connectionsServed = 0

    func writeTrace(_ records: [ChatHub.TraceRecord]) {
        guard trace >= 0, !records.isEmpty else { return }
        var text = ""
        for r in records { text += r.line + "\n" }
        var bytes = Array(text.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { write(trace, $0.baseAddress! + off, $0.count - off) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { chatLog("trace: write failed; tracing stops"); close(trace); trace = -1; return }
            off += n
        }
        bytes.removeAll()
    }

    /// Hub actions as a reply for `fd` and pushes to the others.
    func reply(_ out: ChatHub.Output, for fd: Int32) -> PollServer.Reply {
        for line in out.log { chatLog(line) }
        writeTrace(out.trace)
        var r = PollServer.Reply()
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
        return r
    }

    loop.run(onOpen: { fd, _ in
        connectionsServed += 1
        hub.open(Int(fd), now: chatSeconds())
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
    }, onTick: { _ in }, log: chatLog, shouldStop: { chatServerStopRequested != 0 }, expire: { _ in
        let out = hub.expire(now: chatSeconds())
        for line in out.log { chatLog(line) }
        return out.actions.compactMap { if case .close(let fd, let why) = $0 { (Int32(fd), why) } else { nil } }
    })
    close(listener)
    if trace >= 0 { close(trace) }
    chatLog("stopped; \(connectionsServed) connections, \(hub.identities.count) identities, \(hub.messagesRouted) messages routed, "
            + "\(hub.messagesRefused) refused, \(hub.violations) protocol violations, \(hub.totalQueuedBytes) bytes still queued")
}
