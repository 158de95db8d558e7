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
                                   [--base PATH] [--max-connections N] [--max-connections-per-address N]
                                   [--idle-timeout S] [--request-timeout S] [--auth-failure-rate R[:B]]
                                   [--new-backups-per-day N] [--max-backups N] [--max-stored-bytes N]

  Serves the Threema Safe API of the whitepaper ("Running a custom Threema Safe server") over
  plain HTTP/1.1 on 127.0.0.1:P only (put a TLS proxy in front for the apps, which require
  https): GET <base>config, PUT/GET/DELETE <base>backups/<64 lowercase hex>. --port 0 picks a
  free port. Prints `listening on 127.0.0.1:PORT` (the real port) once it accepts connections;
  logs one line per event on stderr (never any part of a backup ID). Stops on SIGINT/SIGTERM.

  --dir DIR               backups, one file per ID (must exist); writes are atomic (temporary
                          file, fsync, rename, directory fsync); temporary files left by a crash
                          are removed at start
  --max-backup-bytes N    largest backup accepted; larger uploads get 413 (default 524288, at
                          most 64 MiB)
  --retention-days N      backups not re-uploaded for N days are deleted (default 180)
  --auth-file FILE        HTTP Basic credentials, one `user:password` a line (empty lines and
                          lines starting with # skipped); every request must carry one (401
                          otherwise). Passwords are never taken from argv
  --rate R[:B]            requests per second per client, bursts of B (default 10:20; 0: no
                          limit); over it: 429 with Retry-After. A client is its user with
                          --auth-file, else its address
  --auth-failure-rate R[:B]  with --auth-file: requests without valid credentials per second per
                          address (default 1:10; 0: no limit); over it they get 429, while
                          authenticated users go on
  --new-backups-per-day N backups one client may create a day, bursts of N (default 10; 0: no
                          limit); over it: 429
  --max-backups N         backups stored at most (default 10000); over it a new one gets 507
  --max-stored-bytes N    bytes stored at most, each backup rounded up to 4 KiB (default
                          1073741824); over it: 507
  --global-rate R[:B]     the same for all clients together (default: no limit)
  --base PATH             path prefix of the API (default /)
  --max-connections N     open connections (default 256); at the cap the connection idle the
                          longest is closed for a new one, and when all are inside a request
                          the new one gets 503
  --max-connections-per-address N  open connections of one address (default 32; behind a proxy
                          on this machine raise it to --max-connections); one more gets 503
  --idle-timeout S        a connection is closed S seconds after its last response unless it
                          completes another request (default 60)
  --request-timeout S     a request must arrive completely within S seconds of its first byte
                          (default 30): slow clients are closed. Bytes that complete no request
                          (empty lines, a trickle) restart neither timer
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
                                    "base", "max-connections", "max-connections-per-address", "idle-timeout",
                                    "request-timeout", "auth-failure-rate", "new-backups-per-day", "max-backups",
                                    "max-stored-bytes"], positional: 0...0, command: c)
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
    if let text = o.values["rate"] { conf.rateLimitPerClient = parseRate(text, "rate")! }
    if let text = o.values["global-rate"] { conf.rateLimitGlobal = parseRate(text, "global-rate")! }
    if let text = o.values["auth-failure-rate"] { conf.authFailureRate = parseRate(text, "auth-failure-rate")! }
    if let n = o.int("new-backups-per-day", c) {
        guard n <= 1_000_000 else { usageError("\(c): --new-backups-per-day must be at most 1000000") }
        conf.creationRate = n == 0 ? nil : SafeServerRateLimit(perSecond: Double(n) / 86_400, burst: Double(n))
    }
    // Timers and counts are bounded so that no value overflows the arithmetic they enter.
    func bounded(_ name: String, default d: Int, max m: Int) -> Int {
        let v = atLeastOne(name, default: d)
        guard v <= m else { usageError("\(c): --\(name) must be at most \(m)") }
        return v
    }
    conf.maxConnections = bounded("max-connections", default: 256, max: 1 << 20)
    conf.maxConnectionsPerAddress = bounded("max-connections-per-address", default: 32, max: 1 << 20)
    conf.idleTimeout = Double(bounded("idle-timeout", default: 60, max: 86_400))
    conf.requestTimeout = Double(bounded("request-timeout", default: 30, max: 86_400))
    conf.maxBackups = bounded("max-backups", default: 10_000, max: 1 << 40)
    conf.maxStoredBytes = bounded("max-stored-bytes", default: 1 << 30, max: 1 << 50)
    if let path = o.values["auth-file"] {
        guard let text = readTextFile(path) else { usageError("\(c): cannot read --auth-file \(path)") }
        var users: [(user: String, password: String)] = []
        for (k, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let colon = line.firstIndex(of: ":"), colon > line.startIndex else {
                usageError("\(c): --auth-file line \(k + 1) is not user:password")
            }
            let user = String(line[..<colon])
            guard !users.contains(where: { $0.user == user }) else { usageError("\(c): --auth-file names user \(user) twice") }
            users.append((user, String(line[line.index(after: colon)...])))
        }
        guard !users.isEmpty else { usageError("\(c): --auth-file holds no user:password line") }
        conf.credentials = SafeServerCredentials(users: users)
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
    do {
        let n = try store.removeStaleTemporaries(now: wallSeconds())
        if n > 0 { safeLog("removed \(n) temporary files left by an earlier run") }
    } catch {
        safeLog("cannot clean temporary files: \(error)")
    }
    print("listening on 127.0.0.1:\(port)")
    fflush(nil)
    let rate = conf.rateLimitPerClient.map { "\($0.perSecond)/s burst \($0.burst)" } ?? "none"
    let global = conf.rateLimitGlobal.map { "\($0.perSecond)/s burst \($0.burst)" } ?? "none"
    safeLog("safe-server: dir \(dir), base \(conf.basePath), max-backup-bytes \(maxBackupBytes), retention-days "
            + "\(conf.retentionDays), auth \(conf.credentials == nil ? "off" : "on"), rate \(rate), global-rate \(global), "
            + "auth-failure-rate \(conf.authFailureRate.map { "\($0.perSecond)/s burst \($0.burst)" } ?? "none"), "
            + "new-backups-per-day \(conf.creationRate.map { "\(Int(($0.perSecond * 86_400).rounded()))" } ?? "unlimited"), "
            + "max-backups \(conf.maxBackups), max-stored-bytes \(conf.maxStoredBytes), "
            + "max-connections \(conf.maxConnections) (\(conf.maxConnectionsPerAddress) an address), idle-timeout \(Int(conf.idleTimeout)), "
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
        // Connections the server let go for this one: closed at the next tick (and answered with
        // a close should they send before).
        refused += reply.closeOthers.map { Int32($0) }
        if reply.close {
            // A fresh socket's send buffer takes the short 503 at once; closed at the next tick.
            _ = reply.send.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            refused.append(fd)
        }
    }, onData: { fd, bytes in
        let reply = server.receive(bytes, from: Int(fd), now: wallSeconds())
        for line in reply.log { safeLog(line) }
        // A connection that has had a request answered counts as established: at the poll loop's
        // own cap, connections that never completed one are shed first.
        return PollServer.Reply(send: reply.send, close: reply.close, buffered: server.bufferedByteCount(of: Int(fd)),
                                established: reply.send.isEmpty ? nil : true)
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
        out += refused.map { ($0, "refused or replaced (connection cap)") }
        refused = []
        for (fd, why) in out { safeLog("connection \(fd): closing (\(why))") }
        return out
    })
    close(listener)
    safeLog("stopped; \(server.requestsServed) requests served, \(server.rateLimited) rate limited, "
            + "\(server.malformed) malformed")
}
