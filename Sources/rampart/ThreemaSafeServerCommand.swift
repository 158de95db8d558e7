// `rampart threema safe-server`: a Threema Safe backup server on 127.0.0.1. The HTTP and Safe logic
// is RampartThreemaSafeServer's SafeServer; this file owns the listening socket (through PollServer
// in Sockets.swift), the files, the clocks and the signals.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RampartThreemaSafeServer

let threemaSafeServerUsage = """
usage: rampart threema safe-server --port P --dir DIR [--max-backup-bytes N] [--retention-days N]
                                   [--auth-file FILE] [--rate R[:B]] [--global-rate R[:B]]
                                   [--base PATH] [--max-connections N] [--idle-timeout S]
                                   [--request-timeout S]

  Serves the Threema Safe API of the whitepaper ("Running a custom Threema Safe server") over
  plain HTTP/1.1 on 127.0.0.1:P only (put a TLS proxy in front for the apps, which require
  https): GET <base>config, PUT/GET/DELETE <base>backups/<64 lowercase hex>. --port 0 picks a
  free port. Prints `listening on 127.0.0.1:PORT` (the real port) once it accepts connections;
  logs one line per event on stderr. Stops on SIGINT/SIGTERM.

  --dir DIR               backups, one file per ID (must exist); writes are atomic (temporary
                          file, fsync, rename, directory fsync)
  --max-backup-bytes N    largest backup accepted; larger uploads get 413 (default 524288, at
                          most 64 MiB)
  --retention-days N      backups not re-uploaded for N days are deleted (default 180)
  --auth-file FILE        HTTP Basic credentials, one line `user:password`; every request must
                          carry them (401 otherwise). Passwords are never taken from argv
  --rate R[:B]            requests per second per client address, bursts of B (default 10:20;
                          0: no limit); over it: 429 with Retry-After
  --global-rate R[:B]     the same for all clients together (default: no limit)
  --base PATH             path prefix of the API (default /)
  --max-connections N     open connections (default 256); one more gets 503 and is closed
  --idle-timeout S        a connection idle this long between requests is closed (default 60)
  --request-timeout S     a request must arrive completely within S seconds of its first byte
                          (default 30): slow clients are closed
"""

nonisolated(unsafe) var safeServerStopRequested: Int32 = 0

/// `R` or `R:B` as a rate limit; "0" is none. Default burst 2R (at least 1).
private func parseRate(_ text: String, _ option: String) -> SafeServerRateLimit?? {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count <= 2, let r = Double(parts[0]), r.isFinite, r >= 0 else {
        usageError("threema safe-server: --\(option) takes R or R:B (requests per second, burst)")
    }
    if r == 0 && parts.count == 1 { return .some(nil) }
    var burst = max(1, 2 * r)
    if parts.count == 2 {
        guard let b = Double(parts[1]), b.isFinite, b >= 1 else { usageError("threema safe-server: --\(option) burst must be at least 1") }
        burst = b
    }
    return .some(SafeServerRateLimit(perSecond: r, burst: burst))
}

/// The port a bound socket listens on.
private func boundPort(_ fd: Int32) -> UInt16? {
    var addr = sockaddr_in()
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    let r = withUnsafeMutablePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
    }
    return r == 0 ? UInt16(bigEndian: addr.sin_port) : nil
}

private func safeLog(_ s: String) {
    let (sec, _) = wallClock()
    printError("[\(sec)] \(s)")
}

private func wallSeconds() -> Double {
    let (s, ns) = wallClock()
    return Double(s) + Double(ns) / 1e9
}

func threemaSafeServerCommand(_ args: [String]) {
    let c = "threema safe-server"
    let o = Options(args, allowed: ["port", "dir", "max-backup-bytes", "retention-days", "auth-file", "rate", "global-rate",
                                    "base", "max-connections", "idle-timeout", "request-timeout"], positional: 0...0, command: c)
    if o.help { print(threemaSafeServerUsage); exit(0) }
    if !o.positional.isEmpty { usageError("\(c): unexpected argument \(o.positional[0])") }
    guard let portValue = o.int("port", c), portValue <= 65_535 else { usageError("\(c): --port must be 0...65535") }
    let dir = o.require("dir", c)
    func atLeastOne(_ name: String, default d: Int) -> Int {
        guard let v = o.int(name, c) else { return d }
        guard v >= 1 else { usageError("\(c): --\(name) must be at least 1") }
        return v
    }
    let maxBackupBytes = atLeastOne("max-backup-bytes", default: 524_288)
    guard maxBackupBytes <= 64 << 20 else { usageError("\(c): --max-backup-bytes must be at most 67108864 (64 MiB)") }
    var conf = SafeServer.Configuration(maxBackupBytes: maxBackupBytes,
                                        retentionDays: atLeastOne("retention-days", default: 180),
                                        basePath: o.values["base"] ?? "/")
    if let text = o.values["rate"] { conf.rateLimitPerAddress = parseRate(text, "rate")! }
    if let text = o.values["global-rate"] { conf.rateLimitGlobal = parseRate(text, "global-rate")! }
    conf.maxConnections = atLeastOne("max-connections", default: 256)
    conf.idleTimeout = Double(atLeastOne("idle-timeout", default: 60))
    conf.requestTimeout = Double(atLeastOne("request-timeout", default: 30))
    if let path = o.values["auth-file"] {
        guard let text = readTextFile(path) else { usageError("\(c): cannot read --auth-file \(path)") }
        let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map { $0.hasSuffix("\r") ? $0.dropLast() : $0 } ?? ""
        guard let colon = line.firstIndex(of: ":"), colon > line.startIndex else {
            usageError("\(c): --auth-file must hold one line user:password")
        }
        conf.credentials = SafeServerCredentials(user: String(line[..<colon]), password: String(line[line.index(after: colon)...]))
    }
    let store: DirectoryBackupStore
    do { store = try DirectoryBackupStore(directory: dir) } catch { usageError("\(c): \(error)") }
    store.maxFileBytes = maxBackupBytes

    let listener: Int32
    do { listener = try Socket.listen(port: UInt16(portValue)) } catch { usageError("\(c): \(error)") }
    guard let port = boundPort(listener) else { usageError("\(c): getsockname failed") }
    var server = SafeServer(configuration: conf, store: store)
    signal(SIGPIPE, SIG_IGN)
    signal(SIGINT) { _ in safeServerStopRequested = 1 }
    signal(SIGTERM) { _ in safeServerStopRequested = 1 }
    for line in server.sweep(now: wallSeconds()) { safeLog(line) }
    print("listening on 127.0.0.1:\(port)")
    fflush(nil)
    let rate = conf.rateLimitPerAddress.map { "\($0.perSecond)/s burst \($0.burst)" } ?? "none"
    let global = conf.rateLimitGlobal.map { "\($0.perSecond)/s burst \($0.burst)" } ?? "none"
    safeLog("safe-server: dir \(dir), base \(conf.basePath), max-backup-bytes \(maxBackupBytes), retention-days "
            + "\(conf.retentionDays), auth \(conf.credentials == nil ? "off" : "on"), rate \(rate), global-rate \(global), "
            + "max-connections \(conf.maxConnections), idle-timeout \(Int(conf.idleTimeout)), "
            + "request-timeout \(Int(conf.requestTimeout))")

    // The poll loop sheds beyond the server's own cap plus room for the 503 answers.
    var limits = PollLimits(maxConnections: conf.maxConnections + 64, maxOutputBytes: 4 * maxBackupBytes + (1 << 20),
                            maxBufferBytes: max(64 << 20, 4 * maxBackupBytes))
    limits.idleTimeoutMs = Int64(conf.idleTimeout * 1000) + 5_000
    var loop = PollServer(listener: listener, limits: limits)
    var lastSweep = monotonicMilliseconds()
    var refused: [Int32] = []
    loop.run(onOpen: { fd, address in
        let reply = server.open(Int(fd), address: address, now: wallSeconds())
        for line in reply.log { safeLog(line) }
        if reply.close {
            // A fresh socket's send buffer takes the short 503 at once; closed at the next tick.
            _ = reply.send.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            refused.append(fd)
        }
    }, onData: { fd, bytes in
        let reply = server.receive(bytes, from: Int(fd), now: wallSeconds())
        for line in reply.log { safeLog(line) }
        return PollServer.Reply(send: reply.send, close: reply.close, buffered: server.bufferedByteCount(of: Int(fd)))
    }, onClose: { fd, why in
        server.close(Int(fd))
        if case .other(let text) = why, text == "peer closed" || text == "closed by server" {} else {
            safeLog("connection \(fd): closed (\(why))")
        }
        refused.removeAll { $0 == fd }
    }, onTick: { now in
        guard now - lastSweep >= 3_600_000 else { return }
        lastSweep = now
        for line in server.sweep(now: wallSeconds()) { safeLog(line) }
        if let n = try? store.removeStaleTemporaries(now: wallSeconds()), n > 0 { safeLog("removed \(n) stale temporary files") }
    }, log: safeLog, shouldStop: { safeServerStopRequested != 0 }, expire: { _ in
        var out = server.expiredConnections(now: wallSeconds()).map { (Int32($0.id), $0.reason) }
        out += refused.map { ($0, "refused (connection cap)") }
        refused = []
        for (fd, why) in out { safeLog("connection \(fd): closing (\(why))") }
        return out
    })
    close(listener)
    safeLog("stopped; \(server.requestsServed) requests served, \(server.rateLimited) rate limited, "
            + "\(server.malformed) malformed")
}
