// MTProto over HTTP/1.1 (Docs/MTProto.md §6.8): each client packet is the body of a `POST /api`, each
// server packet the body of a `200` response, lengths from `Content-Length`, no other framing. The
// server answers every request exactly once and in order; a request that finds nothing to answer is
// held (a long poll) until a packet comes or its wait runs out (`http_wait`'s `max_wait`, 25 s when
// the client sent none), and is then answered with an empty body.

/// Reads HTTP/1.1 messages with a `Content-Length` body from a byte stream: requests on the server
/// side (only `POST`), responses on the client side (only `200`). No chunked bodies, no header
/// continuation lines, at most ``maxHeaderBytes`` of start line and headers.
package struct HTTPMessageReader: Sendable {
    /// The largest start line plus header block accepted.
    static let maxHeaderBytes = 8192

    let role: TransportRole
    let maxBodyLength: Int
    private(set) var buffer = ByteQueue()
    private var failure: MTProtoError?
    /// Bytes of the current header block already searched for its end (so that a header that
    /// arrives a byte at a time is not searched again from the start each time).
    private var scanned = 0

    package init(role: TransportRole, maxBodyLength: Int) {
        self.role = role
        self.maxBodyLength = maxBodyLength
    }

    package mutating func feed<C: Collection<UInt8>>(_ bytes: C) { buffer.append(contentsOf: bytes) }
    mutating func shrinkToFit() { buffer.shrinkToFit() }

    /// The next message's body, nil when more bytes are needed. Sticky errors.
    package mutating func next() throws(MTProtoError) -> [UInt8]? {
        if let failure { throw failure }
        do {
            return try parse()
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func parse() throws(MTProtoError) -> [UInt8]? {
        // The header block ends at the first CR LF CR LF.
        let limit = min(buffer.count, Self.maxHeaderBytes)
        var end: Int?
        if limit >= 4, max(0, scanned - 3) <= limit - 4 {
            for i in max(0, scanned - 3)...(limit - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
                end = i
                break
            }
        }
        guard let end else {
            scanned = limit
            if buffer.count >= Self.maxHeaderBytes { throw .invalidFrame("HTTP header block over \(Self.maxHeaderBytes) bytes") }
            try checkStartLinePrefix()
            return nil
        }
        let lines = split(buffer.bytes(0..<end))
        guard let start = lines.first else { throw .invalidFrame("empty HTTP message") }
        try checkStartLine(start)
        var contentLength: Int?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 0x3A) else { throw .invalidFrame("HTTP header line without a colon") }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            let value = trimmed(line[(colon + 1)...])
            switch name {
            case "content-length":
                guard !value.isEmpty, value.count <= 10, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    throw .invalidFrame("HTTP Content-Length is not a number")
                }
                let n = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                if let c = contentLength, c != n { throw .invalidFrame("two HTTP Content-Length values") }
                contentLength = n
            case "transfer-encoding":
                throw .invalidFrame("HTTP Transfer-Encoding is not supported")
            default:
                guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw .invalidFrame("malformed HTTP header name") }
            }
        }
        guard let length = contentLength else { throw .invalidFrame("HTTP message without Content-Length") }
        guard length <= maxBodyLength else { throw .frameTooLarge(length) }
        guard buffer.count >= end + 4 + length else { return nil }
        let body = buffer.bytes((end + 4)..<(end + 4 + length))
        buffer.consume(end + 4 + length)
        scanned = 0
        return body
    }

    /// What the start line must begin with.
    private var expectedPrefix: [UInt8] { role == .server ? Array("POST ".utf8) : Array("HTTP/1.".utf8) }

    /// Refuses early a stream whose first bytes cannot start the expected message.
    private func checkStartLinePrefix() throws(MTProtoError) {
        let p = expectedPrefix
        let n = min(p.count, buffer.count)
        guard buffer.bytes(0..<n) == Array(p[0..<n]) else { throw .invalidFrame("not an HTTP \(role == .server ? "POST" : "response")") }
    }

    private func checkStartLine(_ line: ArraySlice<UInt8>) throws(MTProtoError) {
        let text = String(decoding: line, as: UTF8.self)
        let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        switch role {
        case .server:
            guard parts.count == 3, parts[0] == "POST", parts[1].hasPrefix("/"), parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0" else {
                throw .invalidFrame("HTTP request line is not POST /… HTTP/1.x")
            }
        case .client:
            guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0" else { throw .invalidFrame("HTTP status line") }
            guard parts[1] == "200" else { throw .invalidFrame("HTTP status \(parts[1].prefix(3))") }
        }
    }

    private func split(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var from = 0
        var i = 0
        while i < bytes.count {
            if bytes[i] == 13, i + 1 < bytes.count, bytes[i + 1] == 10 {
                lines.append(bytes[from..<i])
                i += 2
                from = i
            } else {
                i += 1
            }
        }
        lines.append(bytes[from..<bytes.count])
        return lines
    }

    private func trimmed(_ s: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var s = s
        while let f = s.first, f == 0x20 || f == 0x09 { s = s.dropFirst() }
        while let l = s.last, l == 0x20 || l == 0x09 { s = s.dropLast() }
        return s
    }
}

/// The HTTP transport (Docs/MTProto.md §6.8) vocabulary shared by both ends.
public enum HTTPTransport {
    /// How long the server holds a request that finds nothing to answer when the client sent no
    /// `http_wait` (the default `max_wait`, 25 000 ms).
    public static let defaultMaxWait = 25.0
    /// Requests the server holds at once per connection; a request beyond this is answered at once,
    /// with an empty body if nothing is queued.
    public static let maxHeldRequests = 64
    /// Bytes of packets the server queues per connection while no request is open.
    public static let maxQueuedBytes = 4 << 20

    /// A `POST /api` request carrying `packet`.
    public static func request<P: Collection<UInt8>>(_ packet: P, host: String) -> [UInt8] {
        var out = Array("POST /api HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/octet-stream\r\nConnection: keep-alive\r\nContent-Length: \(packet.count)\r\n\r\n".utf8)
        out += packet
        return out
    }

    /// A `200` response carrying `body`. Content-Length is the last header: Telethon's reader takes
    /// the line after it for the blank line that ends the headers.
    public static func response<P: Collection<UInt8>>(_ body: P) -> [UInt8] {
        var out = Array("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Type: application/octet-stream\r\nAccess-Control-Allow-Origin: *\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
        out += body
        return out
    }
}

/// The server end of an HTTP connection: requests in, one response per request out, in order.
final class HTTPServerCodec {
    private var reader: HTTPMessageReader
    /// Arrival times of the requests not yet answered, oldest first.
    private var held: [Double] = []
    /// Packets waiting for a request to answer.
    private var queued: [[UInt8]] = []
    private var queuedBytes = 0
    private var output: [UInt8] = []
    /// Seconds a request may be held (from the client's latest `http_wait`).
    var maxWait = HTTPTransport.defaultMaxWait
    /// Unix time now (the caller keeps it current), stamped on each request.
    var unixTime: Double = 0

    init(maxPacketLength: Int) {
        reader = HTTPMessageReader(role: .server, maxBodyLength: maxPacketLength)
    }

    var bufferedByteCount: Int { reader.buffer.count }
    func releaseSpareCapacity() { reader.shrinkToFit() }
    func feed<C: Collection<UInt8>>(_ bytes: C) { reader.feed(bytes) }
    /// Requests waiting for an answer.
    var heldCount: Int { held.count }

    func next() throws(MTProtoError) -> TransportEvent? {
        guard let body = try reader.next() else { return nil }
        held.append(unixTime)
        output += answerHeld()
        if held.count > HTTPTransport.maxHeldRequests {
            // Too many open requests: the oldest gets an empty answer now.
            held.removeFirst()
            output += HTTPTransport.response([UInt8]())
        }
        return .packet(body, quickAckRequested: false)
    }

    func takeOutput() -> [UInt8] {
        defer { output = [] }
        return output
    }

    /// Queues a packet; returns the responses that can go out now.
    func encode<P: Collection<UInt8>>(_ packet: P) throws(MTProtoError) -> [UInt8] {
        guard queuedBytes + packet.count <= HTTPTransport.maxQueuedBytes else {
            throw .invalidFrame("over \(HTTPTransport.maxQueuedBytes) bytes queued for a client that sends no requests")
        }
        queued.append(Array(packet))
        queuedBytes += packet.count
        return answerHeld()
    }

    /// Empty answers for the held requests whose wait ran out at `now`.
    func expire(now: Double) -> [UInt8] {
        var out: [UInt8] = []
        while let first = held.first, now - first >= maxWait {
            held.removeFirst()
            out += HTTPTransport.response([UInt8]())
        }
        return out
    }

    private func answerHeld() -> [UInt8] {
        var out: [UInt8] = []
        while !held.isEmpty, !queued.isEmpty {
            held.removeFirst()
            let p = queued.removeFirst()
            queuedBytes -= p.count
            out += HTTPTransport.response(p)
        }
        return out
    }
}

/// The client end of an HTTP connection.
final class HTTPClientCodec {
    private var reader: HTTPMessageReader
    let host: String

    init(host: String, maxPacketLength: Int) {
        self.host = host
        reader = HTTPMessageReader(role: .client, maxBodyLength: maxPacketLength)
    }

    func encode<P: Collection<UInt8>>(_ packet: P) -> [UInt8] { HTTPTransport.request(packet, host: host) }
    func feed<C: Collection<UInt8>>(_ bytes: C) { reader.feed(bytes) }

    /// The next packet or transport error; empty bodies (a long poll that ran out) are skipped.
    func next() throws(MTProtoError) -> TransportEvent? {
        while let body = try reader.next() {
            if body.isEmpty { continue }
            if body.count == 4 { return .transportError(Int32(bitPattern: readLE32(body, 0))) }
            return .packet(body, quickAckRequested: false)
        }
        return nil
    }
}
