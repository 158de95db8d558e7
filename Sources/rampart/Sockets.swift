// Loopback TCP for the MTProto test server and client: the only socket code in the project (the
// protocol module is sans-I/O). IPv4 127.0.0.1 only, non-blocking sockets and one poll() loop.

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

    /// A connected socket to 127.0.0.1:port (blocking connect).
    static func connect(port: UInt16) throws -> Int32 {
        let fd = try tcp()
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

/// A single-threaded poll() loop serving many connections: it accepts on `listener`, reads what
/// arrives and hands it to `onData`, which returns bytes to send and whether to close.
struct PollServer {
    struct Reply {
        var send: [UInt8] = []
        var close = false
    }

    let listener: Int32
    var clients: [Int32: Int64] = [:]  // fd → last activity (monotonic ms)
    /// Idle connections are closed after this many milliseconds.
    var idleTimeoutMs: Int64 = 300_000

    init(listener: Int32) { self.listener = listener }

    /// Runs until `shouldStop()` is true (checked at least every 500 ms).
    mutating func run(onOpen: (Int32) -> Void, onData: (Int32, [UInt8]) -> Reply, onClose: (Int32, String) -> Void,
                      shouldStop: () -> Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !shouldStop() {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            fds += clients.keys.sorted().map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let r = poll(&fds, nfds_t(fds.count), 500)
            if r < 0 { if errno == EINTR { continue }; break }
            let now = monotonicMilliseconds()
            if fds[0].revents & Int16(POLLIN) != 0 {
                while true {
                    let c = accept(listener, nil, nil)
                    if c < 0 { break }
                    try? Socket.setNonBlocking(c)
                    var one: Int32 = 1
                    setsockopt(c, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                    clients[c] = now
                    onOpen(c)
                }
            }
            for p in fds.dropFirst() where p.revents != 0 {
                let fd = p.fd
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
                if n <= 0 {
                    drop(fd, n == 0 ? "peer closed" : "recv: \(String(cString: strerror(errno)))", onClose)
                    continue
                }
                clients[fd] = now
                let reply = onData(fd, Array(buffer[0..<n]))
                if !reply.send.isEmpty {
                    do { try Socket.writeAll(fd, reply.send) } catch {
                        drop(fd, "\(error)", onClose)
                        continue
                    }
                }
                if reply.close { drop(fd, "closed by server", onClose) }
            }
            for (fd, last) in clients where now - last > idleTimeoutMs { drop(fd, "idle timeout", onClose) }
        }
        for fd in clients.keys { drop(fd, "server stopping", onClose) }
    }

    private mutating func drop(_ fd: Int32, _ why: String, _ onClose: (Int32, String) -> Void) {
        guard clients.removeValue(forKey: fd) != nil else { return }
        close(fd)
        onClose(fd, why)
    }
}
