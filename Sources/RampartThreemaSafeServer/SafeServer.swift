// The Threema Safe server's logic, sans-I/O: connections identified by the caller, bytes in,
// response bytes and log lines out, the clock passed in. Implements the API of the whitepaper's
// "Running a custom Threema Safe server" (Docs/Threema.md §4.2): GET config, PUT/GET/DELETE
// backups/<id>, with rate limiting (429), optional HTTP Basic auth (401), retention and bounded
// resources. `rampart threema safe-server` owns the sockets and feeds bytes in.

import Rampart
import RampartCodecs

/// One connection's handle in a ``SafeServer``.
public typealias SafeServerConnectionID = Int

/// What the server wants done after bytes arrived on a connection (or it was opened).
public struct SafeServerReply: Sendable {
    /// Bytes to write to the connection, in order.
    public var send: [UInt8] = []
    /// Close the connection once `send` is written.
    public var close = false
    /// Log lines (one event each).
    public var log: [String] = []
    /// Other connections the server has forgotten (to make room for this one): the caller closes them.
    public var closeOthers: [SafeServerConnectionID] = []

    /// Nothing to send, keep the connection, no log lines.
    public init() {}
}

/// A response before serialization.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code.
    public var status: Int
    /// Header fields besides Content-Length and Connection, which serialization adds.
    public var headers: [HTTPHeader]
    /// The body (not sent for 204, nor for HEAD requests).
    public var body: [UInt8]

    /// A response.
    public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name` (ASCII case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { asciiCaseInsensitiveEquals($0.name, name) }?.value
    }

    /// `seconds` since the Unix epoch as an HTTP date (IMF-fixdate, RFC 9110 §5.6.7), e.g.
    /// `Sun, 06 Nov 1994 08:49:37 GMT`. Negative or non-finite values give the epoch.
    public static func httpDate(_ seconds: Double) -> String {
        let t = seconds.isFinite && seconds > 0 ? Int64(min(seconds, 253_402_300_799)) : 0  // at most 9999-12-31
        let days = t / 86_400, rem = t % 86_400
        // Civil date from days since 1970-01-01 (Howard Hinnant's days_from_civil inverse).
        let z = days + 719_468
        let era = z / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][Int(days % 7)]
        let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][Int(m - 1)]
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(weekday), \(two(d)) \(month) \(y) \(two(rem / 3600)):\(two(rem / 60 % 60)):\(two(rem % 60)) GMT"
    }

    /// The standard reason phrase of the statuses this server sends.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 411: return "Length Required"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        case 507: return "Insufficient Storage"
        case 505: return "HTTP Version Not Supported"
        default: return "Status"
        }
    }

    /// The wire form: status line, the headers, `Content-Length` (omitted for 204), `Connection:
    /// close` when `close`, and the body unless `headOnly` (a HEAD request keeps the length).
    public func serialized(close: Bool, headOnly: Bool = false) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(HTTPResponse.reason(status))\r\n"
        for h in headers { head += "\(h.name): \(h.value)\r\n" }
        if status != 204 { head += "Content-Length: \(body.count)\r\n" }
        if close { head += "Connection: close\r\n" }
        head += "\r\n"
        var out = Array(head.utf8)
        if !headOnly && status != 204 { out += body }
        return out
    }
}

/// HTTP Basic credentials: one or more users, each kept only as a SHA-256 digest of `user:password`.
public struct SafeServerCredentials: Sendable {
    let digests: [String: SHA256.Digest]
    /// Compared against when the user is unknown, so that an unknown user costs what a known one does.
    private static let absent = SHA256.hash(data: Array("rampart: no such user".utf8))

    /// One user; `user` must not contain `:`.
    public init(user: String, password: String) {
        self.init(users: [(user, password)])
    }

    /// Several users (`user` must not contain `:`; for a name given twice the last password counts).
    public init(users: [(user: String, password: String)]) {
        var d: [String: SHA256.Digest] = [:]
        for (u, p) in users { d[u] = SHA256.hash(data: Array((u + ":" + p).utf8)) }
        digests = d
    }

    /// The number of users.
    public var userCount: Int { digests.count }

    /// The user whose credentials `Authorization` header `value` carries, or nil. The user name
    /// selects the stored digest; the digest of what was sent is compared with it in constant
    /// time, so neither the length nor the content of a password leaks through timing.
    public func user(authorization value: String?) -> String? {
        guard let v = value else { return nil }
        let t = v.trimmingSpaces()
        guard t.utf8.count > 6, asciiCaseInsensitiveEquals(String(t.prefix(6)), "basic ") else { return nil }
        guard var decoded = try? Base64.decode(t.dropFirst(6).trimmingSpaces()) else { return nil }
        defer { decoded.secureWipe() }
        guard let colon = decoded.firstIndex(of: 0x3A) else { return nil }
        let name = String(decoding: decoded[..<colon], as: UTF8.self)
        let stored = digests[name]
        let match = SHA256.hash(data: decoded) == (stored ?? Self.absent)
        return match && stored != nil ? name : nil
    }

    /// Whether `Authorization` header `value` carries the credentials of one of the users.
    public func accepts(authorization value: String?) -> Bool { user(authorization: value) != nil }
}

/// A token-bucket rate: ``perSecond`` tokens flow in continuously up to ``burst``; each request takes one.
public struct SafeServerRateLimit: Sendable, Equatable {
    /// Tokens added per second (at least 0).
    public var perSecond: Double
    /// The bucket's size: requests allowed at once after a quiet period (at least 1).
    public var burst: Double

    /// A rate; a negative or non-finite `perSecond` counts as 0, `burst` is at least 1.
    public init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond.isFinite ? max(0, perSecond) : 0
        self.burst = burst.isFinite ? max(1, burst) : 1
    }
}

/// The Threema Safe server API over HTTP/1.1, sans-I/O.
///
/// Requests, in the order they are checked:
///
/// 1. a malformed request: 400 (or 414, 431, 411, 413, 505 per ``HTTPParseError/status``), then the
///    connection is closed; an HTTP/1.1 request without `Host`: 400;
/// 2. credentials configured: missing or wrong ones get 401 with `WWW-Authenticate: Basic`, or 429
///    once the client address has failed more often than ``Configuration/authFailureRate`` allows
///    (an authenticated request is never refused for another's failures);
/// 3. over the rate limit of the client (its user when credentials are configured, else its
///    address; then the global limit): 429 with `Retry-After`;
/// 4. a path other than `<base>config` and `<base>backups/<id>`: 404; a method the path does not
///    take: 405 with `Allow`;
/// 5. `GET`/`HEAD config`: 200, `application/json` `{"maxBackupBytes": n, "retentionDays": n}`;
/// 6. `PUT backups/<id>`: 400 unless `<id>` is 64 lowercase hex, `Content-Type` is
///    `application/octet-stream` and the body is not empty; 413 over maxBackupBytes (answered from
///    Content-Length before the body is read); a new backup over the client's
///    ``Configuration/creationRate``: 429; over the storage quota (``Configuration/maxBackups``,
///    ``Configuration/maxStoredBytes``): 507; 201 when created, 204 when replaced;
/// 7. `GET`/`HEAD backups/<id>`: 400 for a bad id or an `Accept` without `application/octet-stream`;
///    404 when absent or expired; 200 with the blob;
/// 8. `DELETE backups/<id>`: 400 for a bad id; 404 when absent or expired; 204.
///
/// A storage failure is a 500 and a log line. Keep-alive and pipelining are supported: responses go
/// out in request order; `Connection: close` (or HTTP/1.0 without keep-alive) closes after the
/// response. No log line holds any part of a backup ID (the ID is the output of scrypt over the
/// user's password: a prefix would help an offline guess). Not thread-safe: one caller drives it.
///
/// Connections: a request must arrive completely within ``Configuration/requestTimeout`` of its
/// first byte, and a connection between requests is closed ``Configuration/idleTimeout`` after its
/// last response (or its opening): only a complete request restarts either timer, so bytes that
/// make no progress (empty lines, a trickle) hold a connection no longer than that. One address holds
/// at most ``Configuration/maxConnectionsPerAddress`` connections; at ``Configuration/maxConnections``
/// the connection idle between requests the longest is closed for the newcomer, and only when every
/// connection is inside a request does the newcomer get 503.
public struct SafeServer {
    /// Fixed inputs.
    public struct Configuration {
        /// The largest backup accepted (and the parser's body limit). Default 524288, the whitepaper's example.
        public var maxBackupBytes: Int
        /// Days a backup is kept after its last upload. Default 180, the whitepaper's example.
        public var retentionDays: Int
        /// The path the API lives under, starting and ending with `/` (default `/`).
        public var basePath: String
        /// Basic-auth credentials every request must carry; nil: no authentication.
        public var credentials: SafeServerCredentials?
        /// Requests per client (token bucket): per user when ``credentials`` are set, else per
        /// address; nil: unlimited. Default 10/s, bursts of 20.
        public var rateLimitPerClient: SafeServerRateLimit? = SafeServerRateLimit(perSecond: 10, burst: 20)
        /// Requests of all clients together; nil (default): unlimited.
        public var rateLimitGlobal: SafeServerRateLimit?
        /// With ``credentials``: requests without valid credentials per address (each 401 takes a
        /// token; when none is left the answer is 429). Default 1/s, bursts of 10; nil: unlimited.
        public var authFailureRate: SafeServerRateLimit? = SafeServerRateLimit(perSecond: 1, burst: 10)
        /// New backups (a PUT that creates) per client, as ``rateLimitPerClient`` counts clients.
        /// Default 10 a day, bursts of 10; nil: unlimited.
        public var creationRate: SafeServerRateLimit? = SafeServerRateLimit(perSecond: 10.0 / 86_400, burst: 10)
        /// Backups stored at most; a PUT that would create one more gets 507. Default 10000.
        public var maxBackups = 10_000
        /// Bytes stored at most, each backup counted as its size rounded up to 4 KiB (the file
        /// system's block); a PUT that would exceed it gets 507. Default 1 GiB.
        public var maxStoredBytes = 1 << 30
        /// Clients whose buckets are tracked at most (per bucket kind); beyond it full buckets, then
        /// the least recently used, are forgotten. Default 4096.
        public var maxTrackedAddresses = 4096
        /// Open connections at most (see ``SafeServer``). Default 256.
        public var maxConnections = 256
        /// Open connections of one address at most; one more gets 503 and is closed. Default 32.
        /// Behind a proxy on the same machine every connection comes from the proxy: raise it to
        /// ``maxConnections`` there and let the proxy bound its clients.
        public var maxConnectionsPerAddress = 32
        /// Seconds a request may take to arrive completely from its first byte. Default 30.
        public var requestTimeout: Double = 30
        /// Seconds a connection may stay open after its last response without completing another
        /// request. Default 60.
        public var idleTimeout: Double = 60
        /// Request-line and header limits; the body limit is always maxBackupBytes.
        public var headerLimits = HTTPRequestParser.Limits()
        /// Response bytes one ``SafeServer/receive(_:from:now:)`` may produce for pipelined requests;
        /// a client pipelining more (without reading) is closed. Default 4 × maxBackupBytes + 64 KiB.
        public var maxOutputBytesPerReceive: Int?
        /// After a 413, a declared body up to this size is read and discarded, so the client reads
        /// the answer instead of a reset; a larger one closes the connection at once. Default
        /// 4 × maxBackupBytes.
        public var maxDiscardBytes: Int?

        /// A configuration; sizes below 1 count as 1, and `basePath` gets its leading and trailing `/`.
        public init(maxBackupBytes: Int = 524_288, retentionDays: Int = 180, basePath: String = "/",
                    credentials: SafeServerCredentials? = nil) {
            self.maxBackupBytes = max(1, maxBackupBytes)
            self.retentionDays = max(1, retentionDays)
            var b = basePath.hasPrefix("/") ? basePath : "/" + basePath
            if !b.hasSuffix("/") { b += "/" }
            self.basePath = b
            self.credentials = credentials
        }

        var parserLimits: HTTPRequestParser.Limits {
            var l = headerLimits
            l.maxBodyBytes = maxBackupBytes
            return l
        }
    }

    struct Bucket {
        var tokens: Double
        var updated: Double

        init(_ limit: SafeServerRateLimit, now: Double) {
            tokens = limit.burst
            updated = now
        }

        /// Adds the tokens earned since the last update (a clock that goes back earns nothing).
        mutating func refill(_ limit: SafeServerRateLimit, now: Double) {
            guard now > updated else { return }
            tokens = min(limit.burst, tokens + (now - updated) * limit.perSecond)
            updated = now
        }

        /// Seconds until one token is available.
        func wait(_ limit: SafeServerRateLimit) -> Int {
            guard limit.perSecond > 0 else { return 3600 }
            return max(1, Int(min(86_400 * 365, ((1 - tokens) / limit.perSecond).rounded(.up))))
        }
    }

    /// The token buckets of one kind, bounded in number.
    struct Buckets {
        var table: [String: Bucket] = [:]

        /// Takes a token for `key` when one is there (nil), else the seconds to wait.
        mutating func take(_ key: String, _ limit: SafeServerRateLimit, now: Double, maxTracked: Int,
                           commit: Bool = true) -> Int? {
            var b = table[key] ?? Bucket(limit, now: now)
            b.refill(limit, now: now)
            guard b.tokens >= 1 else { table[key] = b; return b.wait(limit) }
            if commit { b.tokens -= 1 }
            table[key] = b
            if table.count > maxTracked { forget(limit, now: now, keep: maxTracked) }
            return nil
        }

        /// Drops refilled buckets (forgetting them changes nothing), then the least recently used.
        mutating func forget(_ l: SafeServerRateLimit, now: Double, keep: Int) {
            table = table.filter { _, b in
                var r = b
                r.refill(l, now: now)
                return r.tokens < l.burst
            }
            while table.count > keep, let oldest = table.min(by: { $0.value.updated < $1.value.updated }) {
                table[oldest.key] = nil
            }
        }
    }

    struct Connection {
        let address: String
        var parser: HTTPRequestParser
        /// When the connection opened or its last request was answered.
        var idleSince: Double
        /// When the first byte after that arrived (a request, or what may become one).
        var requestStarted: Double?
        /// After a 413: body bytes still to discard before closing.
        var discarding: Int?
    }

    /// The configuration the server was made with.
    public let configuration: Configuration
    /// Where the backups live.
    public let store: any SafeBackupStore
    private var connections: [SafeServerConnectionID: Connection] = [:]
    private var perAddress: [String: Int] = [:]
    private var clientBuckets = Buckets()
    private var failureBuckets = Buckets()
    private var creationBuckets = Buckets()
    private var globalBucket: Bucket?
    /// Backups and charged bytes in the store; nil until first needed (then read from the store).
    private var usage: (count: Int, bytes: Int)?

    /// Requests parsed and answered (any status).
    public private(set) var requestsServed = 0
    /// Requests answered 429.
    public private(set) var rateLimited = 0
    /// Connections closed for malformed or over-limit requests.
    public private(set) var malformed = 0

    /// A server with no connections.
    public init(configuration: Configuration, store: any SafeBackupStore) {
        self.configuration = configuration
        self.store = store
    }

    /// Open connections.
    public var connectionCount: Int { connections.count }

    /// The bytes a backup of `n` bytes is charged against ``Configuration/maxStoredBytes``.
    public static func chargedBytes(_ n: Int) -> Int { (max(n, 1) + 4095) / 4096 * 4096 }

    /// Registers a new connection from `address`. Over the address's cap, or at the connection cap
    /// with every connection inside a request, the reply is a 503 and a close; at the cap otherwise
    /// the connection idle the longest is forgotten and named in ``SafeServerReply/closeOthers``.
    public mutating func open(_ id: SafeServerConnectionID, address: String, now: Double) -> SafeServerReply {
        var reply = SafeServerReply()
        forget(id)  // a handle reused without a close: the old connection is gone
        func refuse(_ why: String) -> SafeServerReply {
            let r = HTTPResponse(status: 503, headers: [HTTPHeader(name: "Date", value: HTTPResponse.httpDate(now)),
                                                        HTTPHeader(name: "Retry-After", value: "1")])
            reply.send = r.serialized(close: true)
            reply.close = true
            reply.log.append("connection \(id) from \(address): 503, \(why); closing")
            return reply
        }
        if perAddress[address, default: 0] >= configuration.maxConnectionsPerAddress {
            return refuse("\(configuration.maxConnectionsPerAddress) connections open from this address")
        }
        if connections.count >= configuration.maxConnections {
            let idle = connections.filter { $0.value.requestStarted == nil }
            guard let victim = idle.min(by: { $0.value.idleSince < $1.value.idleSince }) else {
                return refuse("\(configuration.maxConnections) connections open, all inside a request")
            }
            forget(victim.key)
            reply.closeOthers.append(victim.key)
            reply.log.append("connection \(victim.key) from \(victim.value.address): closed for a new connection "
                             + "(\(configuration.maxConnections) open; idle the longest, \(Int(now - victim.value.idleSince)) s)")
        }
        connections[id] = Connection(address: address, parser: HTTPRequestParser(limits: configuration.parserLimits),
                                     idleSince: now)
        perAddress[address, default: 0] += 1
        return reply
    }

    /// Forgets a connection (closed by either side).
    public mutating func close(_ id: SafeServerConnectionID) {
        forget(id)
    }

    private mutating func forget(_ id: SafeServerConnectionID) {
        guard let c = connections.removeValue(forKey: id) else { return }
        let n = perAddress[c.address, default: 1] - 1
        perAddress[c.address] = n > 0 ? n : nil
    }

    /// Received bytes held for connection `id` (an incomplete request).
    public func bufferedByteCount(of id: SafeServerConnectionID) -> Int {
        connections[id]?.parser.bufferedByteCount ?? 0
    }

    /// Handles bytes received on connection `id` at `now` (Unix seconds): parses every complete
    /// request and answers each in order. Takes time linear in the bytes (a body arriving in many
    /// pieces is not copied per piece).
    public mutating func receive(_ bytes: [UInt8], from id: SafeServerConnectionID, now: Double) -> SafeServerReply {
        var reply = SafeServerReply()
        // Taken out of the table while it is worked on, so the parser's buffer has one owner and
        // appending to it does not copy it.
        guard var c = connections.removeValue(forKey: id) else {
            reply.close = true
            return reply
        }
        func closing() -> SafeServerReply {
            reply.close = true
            let n = perAddress[c.address, default: 1] - 1
            perAddress[c.address] = n > 0 ? n : nil
            return reply
        }
        if let remaining = c.discarding {
            let left = remaining - bytes.count
            if left <= 0 { return closing() }
            c.discarding = left
            connections[id] = c
            return reply
        }
        if c.requestStarted == nil && !bytes.isEmpty { c.requestStarted = now }
        c.parser.append(bytes)
        let budget = configuration.maxOutputBytesPerReceive ?? (4 * configuration.maxBackupBytes + 65_536)
        while true {
            let request: HTTPRequest?
            do {
                request = try c.parser.nextRequest()
            } catch {
                malformed += 1
                let r = HTTPResponse(status: error.status,
                                     headers: [HTTPHeader(name: "Date", value: HTTPResponse.httpDate(now))] + textType,
                                     body: Array("\(error)\n".utf8))
                reply.send += r.serialized(close: true)
                reply.log.append("connection \(id) from \(c.address): \(error.status) \(error); closing")
                if case .bodyTooLarge(let declared) = error {
                    let rest = declared - c.parser.bodyBytesReceivedAtError
                    if rest > 0 && declared <= (configuration.maxDiscardBytes ?? 4 * configuration.maxBackupBytes) {
                        c.discarding = rest
                        c.requestStarted = c.requestStarted ?? now  // the request timer bounds the discarding
                        connections[id] = c
                        return reply  // closed once the body has been discarded
                    }
                }
                return closing()
            }
            guard let req = request else { break }
            // A complete request: the progress that restarts the timers.
            c.idleSince = now
            c.requestStarted = c.parser.hasPartialRequest ? now : nil
            let response = handle(req, address: c.address, now: now, log: &reply.log)
            requestsServed += 1
            let keep = req.keepAlive
            reply.log.append("connection \(id) from \(c.address): \(req.method) \(logTarget(req.target)) "
                             + "\(response.status) \(response.body.count)")
            var r = response
            r.headers.insert(HTTPHeader(name: "Date", value: HTTPResponse.httpDate(now)), at: 0)
            if keep && req.version == .http10 { r.headers.append(HTTPHeader(name: "Connection", value: "keep-alive")) }
            reply.send += r.serialized(close: !keep, headOnly: req.method == "HEAD")
            if !keep { return closing() }
            if reply.send.count > budget {
                reply.log.append("connection \(id) from \(c.address): pipelined responses over \(budget) bytes "
                                 + "in one read; closing")
                return closing()
            }
        }
        if c.parser.takeContinueRequest() {
            reply.send += Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
        }
        connections[id] = c
        return reply
    }

    /// Connections to close at `now`: a request (or any byte after the last response) that has
    /// not completed within ``Configuration/requestTimeout``, or no complete request for
    /// ``Configuration/idleTimeout`` since the last response. They are forgotten here; the caller
    /// closes them.
    public mutating func expiredConnections(now: Double) -> [(id: SafeServerConnectionID, reason: String)] {
        var result: [(id: SafeServerConnectionID, reason: String)] = []
        for (id, c) in connections {
            if let started = c.requestStarted {
                if now - started > configuration.requestTimeout {
                    result.append((id, "request incomplete after \(Int(configuration.requestTimeout)) s (slow client)"))
                }
            } else if now - c.idleSince > configuration.idleTimeout {
                result.append((id, "idle for \(Int(configuration.idleTimeout)) s"))
            }
        }
        for (id, _) in result { forget(id) }
        return result
    }

    /// Whether a backup modified at `modified` has expired at `now`.
    public func isExpired(modified: Double, now: Double) -> Bool {
        now - modified > Double(configuration.retentionDays) * 86_400
    }

    /// Deletes every backup older than retentionDays; returns log lines. The storage use is read
    /// again from the store afterwards.
    public mutating func sweep(now: Double) -> [String] {
        usage = nil
        do {
            var removed = 0
            for (id, modified) in try store.list() where isExpired(modified: modified, now: now) {
                if try store.delete(id) { removed += 1 }
            }
            return removed == 0 ? [] : ["retention: \(removed) backups older than \(configuration.retentionDays) days deleted"]
        } catch {
            return ["retention sweep failed: \(error)"]
        }
    }

    /// Backups stored and bytes charged, as the quota counts them.
    public mutating func storageUse() throws(SafeStoreError) -> (count: Int, bytes: Int) {
        if let u = usage { return u }
        var count = 0, bytes = 0
        for (id, _) in try store.list() {
            guard let n = try store.byteCount(of: id) else { continue }
            count += 1
            bytes += Self.chargedBytes(n)
        }
        usage = (count, bytes)
        return (count, bytes)
    }

    // MARK: - Requests

    /// The target for a log line: at most 80 characters, non-printable bytes as `?`, and whatever
    /// follows `backups/` replaced by `<id>`: no part of a backup ID reaches the log, whatever the
    /// base path's length.
    func logTarget(_ target: String) -> String {
        var t = Substring(target)
        if let r = t.firstRange(of: "backups/") {
            t = t[..<r.upperBound]
            return Self.printable(t) + "<id>"
        }
        return Self.printable(t)
    }

    private static func printable(_ s: Substring) -> String {
        String(decoding: s.utf8.prefix(80).map { $0 >= 0x21 && $0 < 0x7F ? $0 : 0x3F }, as: UTF8.self)
    }

    private var textType: [HTTPHeader] { [HTTPHeader(name: "Content-Type", value: "text/plain; charset=utf-8")] }

    private func plain(_ status: Int, _ text: String, _ extra: [HTTPHeader] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: textType + extra, body: Array((text + "\n").utf8))
    }

    private func tooMany(_ text: String, wait: Int) -> HTTPResponse {
        plain(429, text, [HTTPHeader(name: "Retry-After", value: String(wait))])
    }

    /// Takes one token from `client`'s bucket and the global one; nil when admitted, else the
    /// seconds to wait.
    private mutating func admit(_ client: String, now: Double) -> Int? {
        if let g = configuration.rateLimitGlobal {
            var b = globalBucket ?? Bucket(g, now: now)
            b.refill(g, now: now)
            globalBucket = b
            guard b.tokens >= 1 else { return b.wait(g) }
        }
        if let l = configuration.rateLimitPerClient,
           let wait = clientBuckets.take(client, l, now: now, maxTracked: configuration.maxTrackedAddresses) {
            return wait
        }
        if configuration.rateLimitGlobal != nil { globalBucket!.tokens -= 1 }
        return nil
    }

    /// The path relative to the base, nil when the target is outside it.
    private func relativePath(_ target: String) -> Substring? {
        var t = Substring(target)
        for scheme in ["http://", "https://"] where t.lowercasedASCII().hasPrefix(scheme) {
            t = t.dropFirst(scheme.count)
            guard let slash = t.firstIndex(of: "/") else { return nil }
            t = t[slash...]
        }
        if let q = t.firstIndex(where: { $0 == "?" || $0 == "#" }) { t = t[..<q] }
        guard t.hasPrefix(configuration.basePath) else { return nil }
        return t.dropFirst(configuration.basePath.count)
    }

    /// Whether the media type of a Content-Type value is `type` (parameters ignored).
    private func mediaType(_ value: String?, is type: String) -> Bool {
        guard let v = value else { return false }
        let main = v.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return main.trimmingSpaces().lowercasedASCII() == type
    }

    /// Whether an Accept value lists `type` (parameters ignored; wildcards do not count).
    private func accepts(_ value: String?, _ type: String) -> Bool {
        guard let v = value else { return false }
        return v.split(separator: ",").contains { mediaType(String($0), is: type) }
    }

    /// Answers one parsed request from `address` at `now`; log lines go to `log`.
    public mutating func handle(_ req: HTTPRequest, address: String, now: Double, log: inout [String]) -> HTTPResponse {
        if req.version == .http11 && req.header("host") == nil { return plain(400, "missing Host header") }
        let client: String
        if let creds = configuration.credentials {
            guard let user = creds.user(authorization: req.header("authorization")) else {
                if let l = configuration.authFailureRate,
                   let wait = failureBuckets.take(address, l, now: now, maxTracked: configuration.maxTrackedAddresses) {
                    rateLimited += 1
                    return tooMany("too many requests without valid credentials", wait: wait)
                }
                return plain(401, "authentication required",
                             [HTTPHeader(name: "WWW-Authenticate", value: "Basic realm=\"Threema Safe\", charset=\"UTF-8\"")])
            }
            client = "user " + user
        } else {
            client = "address " + address
        }
        if let wait = admit(client, now: now) {
            rateLimited += 1
            return tooMany("rate limit reached", wait: wait)
        }
        guard let path = relativePath(req.target) else { return plain(404, "not found") }
        if path == "config" {
            guard req.method == "GET" || req.method == "HEAD" else {
                return plain(405, "method not allowed", [HTTPHeader(name: "Allow", value: "GET, HEAD")])
            }
            let json = "{\"maxBackupBytes\":\(configuration.maxBackupBytes),\"retentionDays\":\(configuration.retentionDays)}"
            return HTTPResponse(status: 200, headers: [HTTPHeader(name: "Content-Type", value: "application/json")],
                                body: Array(json.utf8))
        }
        guard path.hasPrefix("backups/"), !path.dropFirst(8).contains("/") else { return plain(404, "not found") }
        let idText = path.dropFirst(8)
        guard ["GET", "HEAD", "PUT", "DELETE"].contains(req.method) else {
            return plain(405, "method not allowed", [HTTPHeader(name: "Allow", value: "GET, HEAD, PUT, DELETE")])
        }
        guard let id = SafeBackupID(idText) else { return plain(400, "the backup ID must be 64 lowercase hex characters") }
        do {
            switch req.method {
            case "PUT":
                guard mediaType(req.header("content-type"), is: "application/octet-stream") else {
                    return plain(400, "Content-Type must be application/octet-stream")
                }
                guard !req.body.isEmpty else { return plain(400, "empty backup") }
                guard req.body.count <= configuration.maxBackupBytes else { return plain(413, "backup too large") }
                let modified = try store.modificationTime(of: id)
                let existed = modified.map { !isExpired(modified: $0, now: now) } ?? false
                let oldBytes = modified == nil ? nil : try store.byteCount(of: id)
                let use = try storageUse()
                let count = use.count + (oldBytes == nil ? 1 : 0)
                let bytes = use.bytes - (oldBytes.map(Self.chargedBytes) ?? 0) + Self.chargedBytes(req.body.count)
                guard count <= configuration.maxBackups, bytes <= configuration.maxStoredBytes else {
                    log.append("storage quota reached: \(use.count) backups, \(use.bytes) bytes (limits "
                               + "\(configuration.maxBackups), \(configuration.maxStoredBytes))")
                    return plain(507, "the server's storage quota is reached")
                }
                if !existed, let l = configuration.creationRate,
                   let wait = creationBuckets.take(client, l, now: now, maxTracked: configuration.maxTrackedAddresses) {
                    rateLimited += 1
                    return tooMany("too many new backups from this client", wait: wait)
                }
                try store.write(id, req.body, now: now)
                usage = (count, bytes)
                return HTTPResponse(status: existed ? 204 : 201)
            case "DELETE":
                guard let m = try store.modificationTime(of: id) else { return plain(404, "no such backup") }
                try remove(id)
                return isExpired(modified: m, now: now) ? plain(404, "no such backup") : HTTPResponse(status: 204)
            default:  // GET, HEAD
                guard accepts(req.header("accept"), "application/octet-stream") else {
                    return plain(400, "Accept must be application/octet-stream")
                }
                guard let b = try store.read(id) else { return plain(404, "no such backup") }
                if isExpired(modified: b.modified, now: now) {
                    try remove(id)
                    return plain(404, "no such backup")
                }
                return HTTPResponse(status: 200, headers: [HTTPHeader(name: "Content-Type", value: "application/octet-stream")],
                                    body: b.bytes)
            }
        } catch {
            // The store's messages never name the backup (Docs/Threema.md §4.2).
            log.append("storage error on \(req.method): \(error)")
            return plain(500, "storage error")
        }
    }

    /// Deletes a backup and takes it off the storage use.
    private mutating func remove(_ id: SafeBackupID) throws(SafeStoreError) {
        let n = try store.byteCount(of: id)
        if try store.delete(id), let n, let u = usage {
            usage = (u.count - 1, u.bytes - Self.chargedBytes(n))
        }
    }
}
