// An incremental HTTP/1.1 response reader for untrusted bytes (RFC 9112), sans-I/O: the client
// side of the Safe API (`rampart threema safe backup|restore`). Bytes go in as they arrive; the
// response comes out once complete. Linear in the bytes received, every buffer bounded, no input
// traps: a hostile server gets a typed error, never a crash.

/// Why bytes are not an acceptable HTTP response.
public enum HTTPResponseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The status line is not `HTTP/1.x NNN reason`.
    case malformedStatusLine
    /// A header line is not `name: value`.
    case malformedHeader
    /// The status line and headers are longer than ``HTTPResponseReader/Limits/maxHeaderBytes`` or
    /// have more than ``HTTPResponseReader/Limits/maxHeaderCount`` fields.
    case headersTooLarge
    /// Content-Length is not a decimal number, or several differ.
    case invalidContentLength
    /// A transfer coding other than `chunked`.
    case unsupportedTransferEncoding
    /// A chunk-size line that is not hexadecimal, or a chunk without its CRLF.
    case malformedChunk
    /// The body is longer than ``HTTPResponseReader/Limits/maxBodyBytes`` (declared or received).
    case bodyTooLarge
    /// The connection ended before the response was complete.
    case truncated
    /// More interim (1xx) responses than a server has a reason to send.
    case tooManyInterimResponses

    public var description: String {
        switch self {
        case .malformedStatusLine: return "malformed status line"
        case .malformedHeader: return "malformed header line"
        case .headersTooLarge: return "response headers too large"
        case .invalidContentLength: return "invalid Content-Length"
        case .unsupportedTransferEncoding: return "unsupported Transfer-Encoding"
        case .malformedChunk: return "malformed chunked body"
        case .bodyTooLarge: return "response body too large"
        case .truncated: return "the connection closed before the response was complete"
        case .tooManyInterimResponses: return "too many interim responses"
        }
    }
}

/// Reads one HTTP/1.1 response from the bytes of a connection.
///
/// Feed bytes with ``append(_:)`` and ask ``response()`` for the result (nil: more bytes needed);
/// when the peer closes, ``finish()`` gives the response whose body runs to the end of the
/// connection, or ``HTTPResponseError/truncated``. Interim 1xx responses are skipped. The body is
/// framed by `Transfer-Encoding: chunked`, by Content-Length, or by the end of the connection; no
/// body for HEAD requests and 1xx/204/304. Each byte is examined a bounded number of times, and
/// the reader holds at most `maxHeaderBytes + maxBodyBytes` plus the last append (plus one chunk
/// header).
public struct HTTPResponseReader: Sendable {
    /// Bounds on what a response may use.
    public struct Limits: Sendable, Equatable {
        /// Status line plus header lines (with their CRLFs) at most. Default 16384.
        public var maxHeaderBytes: Int
        /// Header fields at most. Default 100.
        public var maxHeaderCount: Int
        /// The body at most. Default 1 MiB.
        public var maxBodyBytes: Int

        /// Limits (negative values count as 0; the head at least 64 bytes).
        public init(maxHeaderBytes: Int = 16_384, maxHeaderCount: Int = 100, maxBodyBytes: Int = 1 << 20) {
            self.maxHeaderBytes = max(64, maxHeaderBytes)
            self.maxHeaderCount = max(0, maxHeaderCount)
            self.maxBodyBytes = max(0, maxBodyBytes)
        }
    }

    /// A complete response.
    public struct Response: Sendable, Equatable {
        /// The status code (100...999).
        public var status: Int
        /// Header fields in the order received.
        public var headers: [HTTPHeader]
        /// The body, with any chunked coding removed.
        public var body: [UInt8]

        /// The first value of header `name` (ASCII case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { asciiCaseInsensitiveEquals($0.name, name) }?.value
        }
    }

    private enum Framing {
        case length(Int)
        case chunked
        case toClose
    }

    private enum ChunkState {
        /// Waiting for a chunk-size line.
        case size
        /// Inside a chunk's data: bytes left.
        case data(Int)
        /// After a chunk's data: its CRLF.
        case dataEnd
        /// After the last chunk: trailer lines until an empty one.
        case trailer
    }

    /// The limits this reader enforces.
    public let limits: Limits
    private let headRequest: Bool
    private var buffer: [UInt8] = []
    /// Bytes of `buffer` already consumed (head, or decoded chunk framing and data).
    private var position = 0
    /// How far the search for the end of the head has got.
    private var scanned = 0
    private var head: (status: Int, headers: [HTTPHeader])?
    private var framing: Framing = .toClose
    private var body: [UInt8] = []
    private var chunk: ChunkState = .size
    /// Bytes of trailer fields so far (bounded by maxHeaderBytes).
    private var trailerBytes = 0
    private var interim = 0
    private var done: Response?
    private var failure: HTTPResponseError?

    /// A reader for the response to a request; `headRequest`: the request was HEAD (no body).
    public init(limits: Limits = Limits(), headRequest: Bool = false) {
        self.limits = limits
        self.headRequest = headRequest
    }

    /// Bytes held (undecoded input plus the decoded body).
    public var heldByteCount: Int { buffer.count - position + body.count }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard failure == nil, done == nil else { return }
        if position > 0 && position >= buffer.count / 2 {
            buffer.removeFirst(position)
            scanned = max(0, scanned - position)
            position = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The response once complete, nil while more bytes are needed.
    public mutating func response() throws(HTTPResponseError) -> Response? {
        if let f = failure { throw f }
        if let d = done { return d }
        do {
            return try advance()
        } catch {
            failure = error
            buffer = []
            body = []
            throw error
        }
    }

    /// The response at the end of the connection: complete, or one whose body runs to the close.
    public mutating func finish() throws(HTTPResponseError) -> Response {
        if let r = try response() { return r }
        guard let h = head, case .toClose = framing else { failure = .truncated; throw .truncated }
        let r = Response(status: h.status, headers: h.headers, body: body)
        done = r
        return r
    }

    private mutating func advance() throws(HTTPResponseError) -> Response? {
        while head == nil {
            guard let end = try findHeadEnd() else { return nil }
            let parsed = try parseHead(buffer[position..<end])
            position = end + 4
            scanned = position
            if (100...199).contains(parsed.status) {
                interim += 1
                if interim > 8 { throw .tooManyInterimResponses }
                continue
            }
            head = parsed
            if headRequest || parsed.status == 204 || parsed.status == 304 {
                framing = .length(0)
            } else {
                framing = try Self.framing(parsed.headers, limit: limits.maxBodyBytes)
            }
        }
        switch framing {
        case .length(let n):
            let take = min(n - body.count, buffer.count - position)
            body.append(contentsOf: buffer[position..<(position + take)])
            position += take
            if body.count == n { return complete() }
            return nil
        case .toClose:
            body.append(contentsOf: buffer[position...])
            position = buffer.count
            if body.count > limits.maxBodyBytes { throw .bodyTooLarge }
            return nil
        case .chunked:
            return try decodeChunks()
        }
    }

    private mutating func complete() -> Response {
        let r = Response(status: head!.status, headers: head!.headers, body: body)
        done = r
        buffer = []
        position = 0
        return r
    }

    /// The index of the CRLFCRLF ending the head (from `position`), nil when not there yet.
    private mutating func findHeadEnd() throws(HTTPResponseError) -> Int? {
        let limit = min(buffer.count, position + limits.maxHeaderBytes)
        scanned = max(scanned, position)
        while scanned + 3 < limit {
            let j = scanned
            if buffer[j] == 13 && buffer[j + 1] == 10 && buffer[j + 2] == 13 && buffer[j + 3] == 10 { return j }
            scanned += 1
        }
        if buffer.count - position >= limits.maxHeaderBytes { throw .headersTooLarge }
        return nil
    }

    private func parseHead(_ bytes: ArraySlice<UInt8>) throws(HTTPResponseError) -> (status: Int, headers: [HTTPHeader]) {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex, k = bytes.startIndex
        while k < bytes.endIndex {
            if bytes[k] == 13, k + 1 < bytes.endIndex, bytes[k + 1] == 10 {
                lines.append(bytes[start..<k])
                k += 2
                start = k
                if lines.count > limits.maxHeaderCount + 1 { throw .headersTooLarge }
                continue
            }
            k += 1
        }
        lines.append(bytes[start..<bytes.endIndex])
        if lines.count > limits.maxHeaderCount + 1 { throw .headersTooLarge }
        // Status line: HTTP/1.x SP 3DIGIT [SP reason].
        let s = Array(lines[0])
        guard s.count >= 12, s.starts(with: Array("HTTP/1.".utf8)), isDigit(s[7]), s[8] == 0x20,
              isDigit(s[9]), isDigit(s[10]), isDigit(s[11]), s.count == 12 || s[12] == 0x20,
              s[9] != 0x30 else { throw .malformedStatusLine }
        let status = Int(s[9] - 0x30) * 100 + Int(s[10] - 0x30) * 10 + Int(s[11] - 0x30)
        var headers: [HTTPHeader] = []
        for l in lines.dropFirst() {
            guard let colon = l.firstIndex(of: 0x3A), colon > l.startIndex,
                  l[l.startIndex..<colon].allSatisfy(isTokenByte) else { throw .malformedHeader }
            var v = l[(colon + 1)...]
            while let f = v.first, f == 32 || f == 9 { v = v.dropFirst() }
            while let b = v.last, b == 32 || b == 9 { v = v.dropLast() }
            guard v.allSatisfy({ $0 == 9 || ($0 >= 0x20 && $0 != 0x7F) }) else { throw .malformedHeader }
            headers.append(HTTPHeader(name: String(decoding: l[l.startIndex..<colon], as: UTF8.self),
                                      value: String(decoding: v, as: UTF8.self)))
        }
        return (status, headers)
    }

    /// The body's framing (RFC 9112 §6.3): chunked wins over Content-Length; a declared length
    /// over the limit is refused before any body byte is read.
    private static func framing(_ headers: [HTTPHeader], limit: Int) throws(HTTPResponseError) -> Framing {
        var length: Int?
        var chunked = false
        for h in headers {
            if asciiCaseInsensitiveEquals(h.name, "transfer-encoding") {
                let codings = h.value.split(separator: ",").map { $0.trimmingSpaces().lowercasedASCII() }
                guard codings == ["chunked"], !chunked else { throw .unsupportedTransferEncoding }
                chunked = true
            } else if asciiCaseInsensitiveEquals(h.name, "content-length") {
                let v = h.value.utf8
                guard !v.isEmpty, v.count <= 18, v.allSatisfy(isDigit) else {
                    // Nineteen digits and more could overflow; any such length is over every limit.
                    if !v.isEmpty && v.allSatisfy(isDigit) { throw .bodyTooLarge }
                    throw .invalidContentLength
                }
                let n = v.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                if let previous = length, previous != n { throw .invalidContentLength }
                length = n
            }
        }
        if chunked { return .chunked }
        if let n = length {
            guard n <= limit else { throw .bodyTooLarge }
            return .length(n)
        }
        return .toClose
    }

    /// Decodes what has arrived of a chunked body; the response once its last chunk and trailers are in.
    private mutating func decodeChunks() throws(HTTPResponseError) -> Response? {
        while true {
            switch chunk {
            case .size, .trailer:
                // A line: chunk-size [; extensions] CRLF (at most 256 bytes), or a trailer field
                // (all trailer fields together, each with its CRLF, at most maxHeaderBytes; the empty
                // line that ends them always fits). The limits hold however the bytes arrive: the
                // search for the CRLF never looks past them. (A trailer's CRLF once went uncounted
                // here, so that a response one field over the limit was accepted whole and refused
                // when its last line arrived alone: found by the safe-client-response fuzz target.)
                let isTrailer: Bool
                if case .trailer = chunk { isTrailer = true } else { isTrailer = false }
                let maxLine = isTrailer ? max(0, limits.maxHeaderBytes - trailerBytes - 2) : 256
                guard let lineEnd = findCRLF(within: maxLine) else {
                    if buffer.count - position >= maxLine + 2 { throw .malformedChunk }
                    return nil
                }
                let line = buffer[position..<lineEnd]
                position = lineEnd + 2
                if isTrailer {
                    if line.isEmpty { return complete() }
                    trailerBytes += line.count + 2
                    continue
                }
                let sizeDigits = line.prefix { $0 != 0x3B }.reversed().drop { $0 == 32 || $0 == 9 }.reversed()
                guard !sizeDigits.isEmpty, sizeDigits.count <= 15 else { throw .malformedChunk }
                var n = 0
                for d in sizeDigits {
                    guard let v = hexValue(d) else { throw .malformedChunk }
                    n = n << 4 | v
                }
                guard n <= limits.maxBodyBytes - body.count else { throw .bodyTooLarge }
                chunk = n == 0 ? .trailer : .data(n)
            case .data(let left):
                let take = min(left, buffer.count - position)
                body.append(contentsOf: buffer[position..<(position + take)])
                position += take
                if take < left { chunk = .data(left - take); return nil }
                chunk = .dataEnd
            case .dataEnd:
                guard buffer.count - position >= 2 else { return nil }
                guard buffer[position] == 13, buffer[position + 1] == 10 else { throw .malformedChunk }
                position += 2
                chunk = .size
            }
        }
    }

    /// The index of the next CRLF at or after `position` that ends a line of at most `maxLine`
    /// bytes, resuming the scan where it stopped.
    private mutating func findCRLF(within maxLine: Int) -> Int? {
        scanned = max(scanned, position)
        let limit = min(buffer.count, position + max(0, maxLine) + 2)
        while scanned + 1 < limit {
            if buffer[scanned] == 13 && buffer[scanned + 1] == 10 {
                let at = scanned
                scanned = at + 2
                return at
            }
            scanned += 1
        }
        return nil
    }
}

@inline(__always) private func hexValue(_ b: UInt8) -> Int? {
    switch b {
    case 0x30...0x39: return Int(b - 0x30)
    case 0x41...0x46: return Int(b - 0x37)
    case 0x61...0x66: return Int(b - 0x57)
    default: return nil
    }
}
