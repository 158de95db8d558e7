// Loopback TCP for the MTProto, Threema Safe and Threema chat servers and their clients: the only
// socket code in the project (the protocol modules are sans-I/O). IPv4 127.0.0.1 only, non-blocking
// sockets and one poll() loop.

#if canImport(Glibc)
import Glibc
private let systemListen = Glibc.listen
private let systemConnect = Glibc.connect
#elseif canImport(Darwin)
import Darwin
private let systemListen = Darwin.listen
private let systemConnect = Darwin.connect
#endif

/// A socket error with the failing call and errno's text.
struct SocketError: Error, CustomStringConvertible {
    var call: String
    var code: Int32
    var description: String { "\(call): \(String(cString: strerror(code)))" }
}

enum Socket {
    /// 127.0.0.1:port as a sockaddr_in.
    static func loopback(_ port: UInt16) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return a
    }

    static func tcp() throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw SocketError(call: "socket", code: errno) }
        return fd
    }

    /// A listening socket on 127.0.0.1:port.
    static func listen(port: UInt16) throws -> Int32 {
        let fd = try tcp()
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = loopback(port)
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard r == 0 else { let e = errno; close(fd); throw SocketError(call: "bind 127.0.0.1:\(port)", code: e) }
        guard systemListen(fd, 64) == 0 else { let e = errno; close(fd); throw SocketError(call: "listen", code: e) }
        try setNonBlocking(fd)
        return fd
    }

    /// A connected socket to 127.0.0.1:port (blocking connect), from the loopback address
    /// `source` (127.0.0.0/8, as 32-bit host order) when given: tests play clients on several
    /// addresses without leaving the machine.
    static func connect(port: UInt16, source: UInt32? = nil) throws -> Int32 {
        let fd = try tcp()
        if let source {
            var from = loopback(0)
            from.sin_addr.s_addr = source.bigEndian
            let r = withUnsafePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard r == 0 else { let e = errno; close(fd); throw SocketError(call: "bind source address", code: e) }
        }
        var addr = loopback(port)
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard r == 0 else { let e = errno; close(fd); throw SocketError(call: "connect 127.0.0.1:\(port)", code: e) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    static func setNonBlocking(_ fd: Int32) throws {
        let flags = fcntl(fd, F_GETFL, 0)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { throw SocketError(call: "fcntl", code: errno) }
    }

    /// Writes all of `bytes`, waiting with poll() while the socket is full (at most `timeoutMs`).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], timeoutMs: Int32 = 10_000) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            if n > 0 { off += n; continue }
            let e = errno
            guard n < 0, e == EAGAIN || e == EWOULDBLOCK || e == EINTR else { throw SocketError(call: "send", code: e) }
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&p, 1, timeoutMs) > 0 else { throw SocketError(call: "send (timeout)", code: ETIMEDOUT) }
        }
    }

    /// Reads what is available (up to `max` bytes), waiting at most `timeoutMs`; [] means the peer
    /// closed the connection.
    static func readSome(_ fd: Int32, max: Int = 65_536, timeoutMs: Int32) throws -> [UInt8] {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let r = poll(&p, 1, timeoutMs)
        guard r > 0 else { throw SocketError(call: "recv (timeout)", code: ETIMEDOUT) }
        var buf = [UInt8](repeating: 0, count: max)
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n >= 0 else { throw SocketError(call: "recv", code: errno) }
        return Array(buf[0..<n])
    }
}

/// Milliseconds of the monotonic clock.
func monotonicMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

/// The wall clock as (seconds, nanoseconds) since the Unix epoch.
func wallClock() -> (seconds: Int64, nanoseconds: Int64) {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return (Int64(ts.tv_sec), Int64(ts.tv_nsec))
}


/// The process's soft limit on open file descriptors (RLIMIT_NOFILE), or nil when unknown or
/// unlimited.
func fileDescriptorLimit() -> Int? {
    var rl = rlimit()
    #if canImport(Glibc)
    let r = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &rl)
    #else
    let r = getrlimit(RLIMIT_NOFILE, &rl)
    #endif
    guard r == 0, rl.rlim_cur <= rlim_t(Int32.max) else { return nil }  // RLIM_INFINITY is above it
    return Int(rl.rlim_cur)
}

/// The limits of a ``PollServer``: every resource a client can make the server hold is bounded.
struct PollLimits {
    /// File descriptors kept free below RLIMIT_NOFILE for everything that is not a connection
    /// (stdio, the listener, the reserve descriptor, files).
    static let descriptorHeadroom = 32

    /// Open connections at most. A new connection beyond it is still accepted, and the least
    /// recently active connection is closed (shed) to make room, preferring connections the
    /// handler has not marked established (``PollServer/Reply/established``).
    var maxConnections: Int
    /// Bytes waiting to be written to one connection at most; a connection whose peer does not read
    /// enough to stay under it is closed.
    var maxOutputBytes: Int
    /// Bytes held for all connections together at most: received bytes of incomplete frames (as
    /// reported by the handler) plus unwritten output. Above it, the connection holding the most is
    /// closed, until the total is under the budget again.
    var maxBufferBytes: Int
    /// A connection with no traffic for this long is closed.
    var idleTimeoutMs: Int64 = 300_000
    /// A connection the handler asked to close gets this long to take its last bytes.
    var lingerMs: Int64 = 2_000
    /// After an accept() failure that shedding could not cure (EMFILE with nothing to shed, ENFILE,
    /// ENOBUFS, ENOMEM), the listener is left out of poll() for this long: no busy loop.
    var acceptBackoffMs: Int64 = 100
    /// Connections accepted per loop turn at most, so that a connection flood cannot starve the
    /// connections already open.
    var acceptBatch = 256
    /// Bytes read from one connection per loop turn at most: the work one client can queue ahead
    /// of the others in a turn (a 16 KiB batch of the cheapest request takes a few ms).
    var readChunk = 16_384

    /// The default connection cap: 1024, or the descriptor limit minus ``descriptorHeadroom`` when
    /// that is lower (at least 1).
    static func defaultMaxConnections(descriptorLimit: Int?) -> Int {
        guard let limit = descriptorLimit else { return 1024 }
        return min(1024, max(1, limit - descriptorHeadroom))
    }
}

/// A single-threaded poll() loop serving many connections on non-blocking sockets: it accepts on
/// `listener`, reads what arrives and hands it to `onData`, queues what that returns and writes it
/// when the socket takes it (POLLOUT). Nothing in the loop blocks on one client. The resources a
/// client can make it hold are bounded by ``PollLimits``; each connection closed by a limit gets a
/// reason through `onClose`.
struct PollServer {
    /// The handler's answer to received bytes.
    struct Reply {
        /// Bytes to write to the connection, in order.
        var send: [UInt8] = []
        /// Close the connection once `send` is written.
        var close = false
        /// Received bytes the handler holds for this connection now (an incomplete frame), counted
        /// against ``PollLimits/maxBufferBytes``.
        var buffered = 0
        /// Bytes for other connections (routing), each queued like `send` and subject to the same
        /// output limit; `close` closes that connection once its bytes are written. Entries for
        /// connections that are gone or already closing are dropped.
        var push: [Push] = []
        /// When set, whether the connection is established (logged in): at the connection cap and
        /// when descriptors run out, connections not established are shed first.
        var established: Bool? = nil
    }

    /// Bytes for another connection than the one that sent the data.
    struct Push {
        var fd: Int32
        var bytes: [UInt8]
        var close = false
    }

    /// Why the loop closed a connection: shed by a limit (counted in the server's summary) or
    /// anything else. The description is the log text (a shed reason starts with "shed: ").
    enum CloseReason: CustomStringConvertible {
        /// Closed to stay within a limit: the connection cap, the descriptors, the buffer budget.
        case shed(String)
        /// Closed by the peer, the handler, an error, the idle timeout or the server stopping.
        case other(String)

        var description: String {
            switch self {
            case .shed(let why): return "shed: " + why
            case .other(let why): return why
            }
        }
    }

    /// One connection's state.
    struct Client {
        let address: String
        /// Monotonic ms of the last read or write progress (or of the accept).
        var lastActivity: Int64
        var out: [UInt8] = []
        var outStart = 0
        var inBytes = 0
        /// When the handler asked to close it (the last bytes are being written).
        var closingSince: Int64?
        /// Established (``Reply/established``): shed only when no other connection is left to shed.
        var established = false

        var pendingOut: Int { out.count - outStart }
        /// Bytes counted against the buffer budget.
        var held: Int { pendingOut + inBytes }
    }

    let listener: Int32
    var limits: PollLimits
    private(set) var clients: [Int32: Client] = [:]
    /// The sum of ``Client/held`` over all clients.
    private(set) var totalBuffered = 0
    /// A descriptor kept open to be given up when accept() fails with EMFILE and no connection can
    /// be shed: accepting and closing the pending connection takes it off the listen queue.
    private var reserveDescriptor: Int32 = -1
    private var acceptPausedUntil: Int64 = 0
    private var lastAcceptErrorLog: Int64?
    private var suppressedAcceptErrors = 0

    init(listener: Int32, limits: PollLimits) {
        self.listener = listener
        self.limits = limits
    }

    /// Runs until `shouldStop()` is true (checked at least every 500 ms). `onOpen` gets each new
    /// connection and its IPv4 address; `onTick` runs about once a second; `log` gets the loop's own
    /// events (accept failures). `expire` runs with `onTick` and names connections the handler wants
    /// closed now (its own timeouts), with the reason; `tickPush`, also with `onTick`, gives bytes to
    /// queue on connections (HTTP long polls that ran out).
    mutating func run(onOpen: (Int32, String) -> Void, onData: (Int32, [UInt8]) -> Reply,
                      onClose: (Int32, CloseReason) -> Void, onTick: (Int64) -> Void, log: (String) -> Void,
                      shouldStop: () -> Bool, expire: (Int64) -> [(Int32, String)] = { _ in [] },
                      tickPush: (Int64) -> [Push] = { _ in [] }) {
        reserveDescriptor = open("/dev/null", O_RDONLY)
        var buffer = [UInt8](repeating: 0, count: limits.readChunk)
        var lastTick = monotonicMilliseconds()
        var fds: [pollfd] = []
        while !shouldStop() {
            var now = monotonicMilliseconds()
            let listening = now >= acceptPausedUntil
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: listening ? listener : -1, events: Int16(POLLIN), revents: 0))
            for (fd, c) in clients {
                var events: Int32 = 0
                if c.closingSince == nil { events |= Int32(POLLIN) }
                if c.pendingOut > 0 { events |= Int32(POLLOUT) }
                fds.append(pollfd(fd: fd, events: Int16(events), revents: 0))
            }
            let timeout = listening ? 500 : Int32(max(1, min(500, acceptPausedUntil - now)))
            let r = poll(&fds, nfds_t(fds.count), timeout)
            if r < 0 {
                if errno == EINTR { continue }
                log("poll: \(String(cString: strerror(errno))); stopping")
                break
            }
            now = monotonicMilliseconds()
            // Connections first, then the listener: a descriptor closed while accepting (shed) and
            // reused by a new connection must not inherit this turn's events.
            for p in fds.dropFirst() where p.revents != 0 {
                let fd = p.fd
                guard let before = clients[fd] else { continue }
                if p.revents & Int16(POLLNVAL) != 0 {
                    drop(fd, .other("invalid descriptor"), onClose)
                    continue
                }
                if before.closingSince != nil && p.revents & Int16(POLLOUT) == 0
                    && p.revents & Int16(POLLERR | POLLHUP) != 0 {
                    // Not read any more, so a hang-up would be reported on every turn: close now.
                    drop(fd, .other("closed by server (the peer left before taking \(before.pendingOut) bytes)"), onClose)
                    continue
                }
                if p.revents & Int16(POLLOUT) != 0 {
                    guard flush(fd, now: now, onClose) else { continue }
                }
                guard let c = clients[fd], c.closingSince == nil,
                      p.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 else { continue }
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n < 0 {
                    let e = errno
                    if e == EAGAIN || e == EWOULDBLOCK || e == EINTR { continue }
                    drop(fd, .other("recv: \(String(cString: strerror(e)))"), onClose)
                    continue
                }
                if n == 0 {
                    drop(fd, .other("peer closed"), onClose)
                    continue
                }
                let reply = onData(fd, Array(buffer[0..<n]))
                update(fd) { c in
                    c.lastActivity = now
                    c.inBytes = max(0, reply.buffered)
                    if !reply.send.isEmpty { c.out += reply.send }
                    if reply.close { c.closingSince = now }
                    if let e = reply.established { c.established = e }
                }
                deliver(reply.push.filter { $0.fd != fd }, now: now, onClose)
                guard flush(fd, now: now, onClose), let after = clients[fd] else { continue }
                if after.pendingOut > limits.maxOutputBytes {
                    drop(fd, .other("output buffer over \(limits.maxOutputBytes) bytes: the peer is not reading"), onClose)
                    continue
                }
                enforceBudget(onClose)
            }
            if fds[0].revents & Int16(POLLIN | POLLERR) != 0 { acceptPending(now: now, onOpen: onOpen, onClose: onClose, log: log) }
            if now - lastTick >= 1000 {
                lastTick = now
                for (fd, c) in clients {
                    if let since = c.closingSince, now - since > limits.lingerMs {
                        drop(fd, .other("closed by server (\(c.pendingOut) bytes not taken by the peer)"), onClose)
                    } else if now - c.lastActivity > limits.idleTimeoutMs {
                        drop(fd, .other("idle timeout"), onClose)
                    }
                }
                for (fd, why) in expire(now) { drop(fd, .other(why), onClose) }
                onTick(now)
                deliver(tickPush(now), now: now, onClose)
            }
        }
        for fd in clients.keys { drop(fd, .other("server stopping"), onClose) }
        if reserveDescriptor >= 0 { close(reserveDescriptor) }
        reserveDescriptor = -1
    }

    /// Changes a client, keeping ``totalBuffered`` in step.
    private mutating func update(_ fd: Int32, _ body: (inout Client) -> Void) {
        guard var c = clients[fd] else { return }
        let before = c.held
        body(&c)
        totalBuffered += c.held - before
        clients[fd] = c
    }

    /// Writes what the socket takes now. False when the connection is gone (closed here: an error,
    /// or a close request whose bytes are all written).
    /// Queues bytes for other connections (``Reply/push``, or what a tick produced) and writes what
    /// the sockets take; a connection whose output then exceeds the limit is closed.
    private mutating func deliver(_ pushes: [Push], now: Int64, _ onClose: (Int32, CloseReason) -> Void) {
        for p in pushes {
            guard let t = clients[p.fd], t.closingSince == nil else { continue }
            update(p.fd) { c in
                if !p.bytes.isEmpty { c.out += p.bytes }
                if p.close { c.closingSince = now }
            }
            guard flush(p.fd, now: now, onClose), let after = clients[p.fd] else { continue }
            if after.pendingOut > limits.maxOutputBytes {
                drop(p.fd, .other("output buffer over \(limits.maxOutputBytes) bytes: the peer is not reading"), onClose)
            }
        }
    }

    private mutating func flush(_ fd: Int32, now: Int64, _ onClose: (Int32, CloseReason) -> Void) -> Bool {
        guard var c = clients[fd] else { return false }
        let before = c.held
        var failure: Int32?
        while c.pendingOut > 0 {
            let start = c.outStart
            let n = c.out.withUnsafeBytes { send(fd, $0.baseAddress! + start, $0.count - start, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                c.outStart += n
                c.lastActivity = now
                continue
            }
            let e = errno
            if n < 0 && e == EINTR { continue }
            if n < 0 && (e == EAGAIN || e == EWOULDBLOCK) { break }
            failure = n < 0 ? e : EPIPE
            break
        }
        if c.pendingOut == 0 {
            c.out = []  // give the capacity back
            c.outStart = 0
        } else if c.outStart >= c.out.count / 2 {
            c.out.removeFirst(c.outStart)
            c.outStart = 0
        }
        totalBuffered += c.held - before
        clients[fd] = c
        if let e = failure {
            drop(fd, .other("send: \(String(cString: strerror(e)))"), onClose)
            return false
        }
        if c.closingSince != nil && c.pendingOut == 0 {
            drop(fd, .other("closed by server"), onClose)
            return false
        }
        return true
    }

    /// Closes the connections holding the most bytes until the total is within the budget.
    private mutating func enforceBudget(_ onClose: (Int32, CloseReason) -> Void) {
        while totalBuffered > limits.maxBufferBytes {
            guard let (fd, c) = clients.max(by: { $0.value.held < $1.value.held }), c.held > 0 else { return }
            drop(fd, .shed("\(totalBuffered) bytes buffered over the budget of \(limits.maxBufferBytes); "
                     + "this connection held the most (\(c.held))"), onClose)
        }
    }

    /// The connection to shed for a new one: one already closing, else the least recently active
    /// of those not established, else the least recently active established one. So a flood of
    /// connections that never finish a handshake sheds its own kind, not logged-in users.
    private func sheddingCandidate() -> (Int32, Client)? {
        func rank(_ c: Client) -> Int { c.closingSince != nil ? 0 : (c.established ? 2 : 1) }
        var best: (Int32, Client)?
        for (fd, c) in clients {
            guard let b = best?.1 else { best = (fd, c); continue }
            let rc = rank(c), rb = rank(b)
            if rc != rb ? rc < rb : c.lastActivity < b.lastActivity { best = (fd, c) }
        }
        return best
    }

    private mutating func acceptPending(now: Int64, onOpen: (Int32, String) -> Void, onClose: (Int32, CloseReason) -> Void,
                                        log: (String) -> Void) {
        for _ in 0..<limits.acceptBatch {
            var addr = sockaddr_in()
            var len = socklen_t(MemoryLayout<sockaddr_in>.size)
            let c = withUnsafeMutablePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &len) }
            }
            if c < 0 {
                let e = errno
                switch e {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    logAcceptError(e, now: now, log)
                    if e == EMFILE || e == ENFILE, let (victim, v) = sheddingCandidate() {
                        // Give a descriptor back and take the new connection.
                        drop(victim, .shed("out of file descriptors (\(String(cString: strerror(e)))); "
                                     + "\(v.established ? "established" : "not established"), least recently active (\(now - v.lastActivity) ms ago)"), onClose)
                        continue
                    }
                    if reserveDescriptor >= 0 {
                        // Nothing to shed: use the reserve to take the connection off the queue.
                        close(reserveDescriptor)
                        let extra = accept(listener, nil, nil)
                        if extra >= 0 { close(extra) }
                        reserveDescriptor = open("/dev/null", O_RDONLY)
                    }
                    acceptPausedUntil = now + limits.acceptBackoffMs
                    return
                default:
                    logAcceptError(e, now: now, log)
                    acceptPausedUntil = now + limits.acceptBackoffMs
                    return
                }
            }
            try? Socket.setNonBlocking(c)
            var one: Int32 = 1
            setsockopt(c, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if clients.count >= limits.maxConnections, let (victim, v) = sheddingCandidate() {
                drop(victim, .shed("connection limit of \(limits.maxConnections) reached; "
                             + "\(v.established ? "established" : "not established"), least recently active (\(now - v.lastActivity) ms ago)"), onClose)
            }
            let a = UInt32(bigEndian: addr.sin_addr.s_addr)
            let address = Int32(addr.sin_family) == AF_INET
                ? "\(a >> 24).\(a >> 16 & 0xFF).\(a >> 8 & 0xFF).\(a & 0xFF)" : "unknown"
            clients[c] = Client(address: address, lastActivity: now)
            onOpen(c, address)
        }
    }

    /// At most one line a second about accept() failures.
    private mutating func logAcceptError(_ e: Int32, now: Int64, _ log: (String) -> Void) {
        if let last = lastAcceptErrorLog, now - last < 1000 { suppressedAcceptErrors += 1; return }
        let more = suppressedAcceptErrors > 0 ? " (\(suppressedAcceptErrors) more since the last report)" : ""
        log("accept: \(String(cString: strerror(e))) with \(clients.count) connections open\(more)")
        lastAcceptErrorLog = now
        suppressedAcceptErrors = 0
    }

    private mutating func drop(_ fd: Int32, _ why: CloseReason, _ onClose: (Int32, CloseReason) -> Void) {
        guard let c = clients.removeValue(forKey: fd) else { return }
        totalBuffered -= c.held
        close(fd)
        onClose(fd, why)
    }
}
