// An incremental HTTP/1.1 request parser for untrusted bytes (RFC 9112), sans-I/O: bytes go in as they
// arrive, whole requests come out. Strict where leniency would cost safety: CRLF line endings only,
// no obsolete line folding, Content-Length framing only (any Transfer-Encoding is refused with 411),
// one Content-Length value. Every buffer is bounded by the limits below; no input traps.

/// The HTTP versions the parser accepts.
public enum HTTPVersion: Sendable, Equatable {
    /// HTTP/1.0: the connection closes after each response unless the client asks for keep-alive.
    case http10
    /// HTTP/1.1: persistent connections, `Host` required.
    case http11
}

/// One header field as received (name case preserved; compare names with ``HTTPRequest/header(_:)``).
public struct HTTPHeader: Sendable, Equatable {
    /// The field name (a token).
    public var name: String
    /// The field value without leading and trailing whitespace (bytes above 0x7F decoded as UTF-8,
    /// invalid sequences replaced).
    public var value: String

    /// A header field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A complete, syntactically valid HTTP request.
public struct HTTPRequest: Sendable, Equatable {
    /// The method token, case-sensitive as RFC 9110 says (`GET`, `PUT`, …).
    public var method: String
    /// The request target as sent (origin form `/path?query` or absolute form).
    public var target: String
    /// The protocol version of the request line.
    public var version: HTTPVersion
    /// Header fields in the order received.
    public var headers: [HTTPHeader]
    /// The body (Content-Length bytes; empty without Content-Length).
    public var body: [UInt8]
    /// Whether the request carried `Expect: 100-continue`.
    public var expectsContinue: Bool

    /// A request (the parser makes them; tests and ``SafeServer/handle(_:address:now:log:)`` callers too).
    public init(method: String, target: String, version: HTTPVersion = .http11, headers: [HTTPHeader] = [],
                body: [UInt8] = [], expectsContinue: Bool = false) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
        self.expectsContinue = expectsContinue
    }

    /// The first value of the header `name` (ASCII case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        headers.first { asciiCaseInsensitiveEquals($0.name, name) }?.value
    }

    /// Whether the connection stays open after the response: HTTP/1.1 unless `Connection: close`,
    /// HTTP/1.0 only with `Connection: keep-alive`.
    public var keepAlive: Bool {
        let tokens = headers.filter { asciiCaseInsensitiveEquals($0.name, "connection") }
            .flatMap { $0.value.split(separator: ",").map { $0.trimmingSpaces().lowercasedASCII() } }
        switch version {
        case .http11: return !tokens.contains("close")
        case .http10: return tokens.contains("keep-alive") && !tokens.contains("close")
        }
    }
}

/// Why bytes are not a valid request. Each case maps to the status the server answers before it
/// closes the connection (``status``).
public enum HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request line is not `method SP target SP HTTP/x.y` with valid characters.
    case malformedRequestLine
    /// The request line is longer than ``HTTPRequestParser/Limits/maxRequestLineBytes``.
    case requestLineTooLong
    /// A version other than HTTP/1.0 and HTTP/1.1.
    case unsupportedVersion
    /// A header line is not `name: value` with valid characters (or is an obsolete folded line).
    case malformedHeader
    /// More header fields than ``HTTPRequestParser/Limits/maxHeaderCount``.
    case tooManyHeaders
    /// The request line and headers together exceed ``HTTPRequestParser/Limits/maxHeaderBytes``.
    case headersTooLarge
    /// Content-Length is not a decimal number, or several differ.
    case invalidContentLength
    /// A Transfer-Encoding header (chunked or any other): only Content-Length framing is accepted.
    case transferEncodingNotSupported
    /// Content-Length exceeds ``HTTPRequestParser/Limits/maxBodyBytes``; detected from the header,
    /// before any body byte is read. `contentLength` is the declared length (clamped to `Int.max`).
    case bodyTooLarge(contentLength: Int)

    /// The error in a plain sentence (the answer's body and the log line).
    public var description: String {
        switch self {
        case .malformedRequestLine: return "malformed request line"
        case .requestLineTooLong: return "request line too long"
        case .unsupportedVersion: return "only HTTP/1.0 and HTTP/1.1 are supported"
        case .malformedHeader: return "malformed header line"
        case .tooManyHeaders: return "too many header fields"
        case .headersTooLarge: return "request headers too large"
        case .invalidContentLength: return "invalid Content-Length"
        case .transferEncodingNotSupported: return "Transfer-Encoding is not supported: send Content-Length"
        case .bodyTooLarge(let n): return "a body of \(n) bytes is over the limit"
        }
    }

    /// The response status for this error: 400, 414, 505, 431, 411 or 413.
    public var status: Int {
        switch self {
        case .malformedRequestLine, .malformedHeader, .invalidContentLength: return 400
        case .requestLineTooLong: return 414
        case .unsupportedVersion: return 505
        case .tooManyHeaders, .headersTooLarge: return 431
        case .transferEncodingNotSupported: return 411
        case .bodyTooLarge: return 413
        }
    }
}

/// An incremental HTTP/1.1 request parser.
///
/// Feed bytes with ``append(_:)`` as they arrive, then call ``nextRequest()`` until it returns nil
/// (pipelined requests come out one per call, in order). After an error the parser is finished:
/// every later call throws the same error, and the connection should be answered with
/// ``HTTPParseError/status`` and closed.
///
/// Memory bound: after every ``nextRequest()`` that returns nil, the parser holds at most
/// `maxHeaderBytes + maxBodyBytes` bytes (an incomplete head longer than `maxHeaderBytes` or a
/// declared body longer than `maxBodyBytes` is an error at once), so with appends of at most `c`
/// bytes it never holds more than `maxHeaderBytes + maxBodyBytes + c`.
public struct HTTPRequestParser: Sendable {
    /// Bounds on what one request may use.
    public struct Limits: Sendable, Equatable {
        /// The request line's length at most (without its CRLF). Default 8192.
        public var maxRequestLineBytes: Int
        /// Header fields at most. Default 64.
        public var maxHeaderCount: Int
        /// Request line plus header lines (with their CRLFs and the final empty line) at most.
        /// Default 16384.
        public var maxHeaderBytes: Int
        /// The body's length at most. Default 524288 (the whitepaper's example maxBackupBytes).
        public var maxBodyBytes: Int

        /// Limits; each is raised to a small floor (the request line to 16, the head to the request
        /// line plus CRLF, at least one header) so that no setting makes every request invalid.
        public init(maxRequestLineBytes: Int = 8192, maxHeaderCount: Int = 64, maxHeaderBytes: Int = 16384,
                    maxBodyBytes: Int = 524_288) {
            self.maxRequestLineBytes = max(16, maxRequestLineBytes)
            self.maxHeaderCount = max(1, maxHeaderCount)
            self.maxHeaderBytes = max(self.maxRequestLineBytes + 2, maxHeaderBytes)
            self.maxBodyBytes = max(0, maxBodyBytes)
        }
    }

    /// A parsed head whose body has not fully arrived.
    struct PendingHead: Sendable {
        var request: HTTPRequest
        var contentLength: Int
        var continueReported = false
    }

    /// The limits this parser enforces.
    public let limits: Limits
    private var buffer: [UInt8] = []
    private var pending: PendingHead?
    private var failure: HTTPParseError?
    /// How far the search for the end of the head has got (bytes before it hold no CRLFCRLF).
    private var scanned = 0
    /// Whether the request line's CRLF has been found.
    private var requestLineSeen = false

    /// A parser waiting for the first byte of a request.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Bytes received and not yet returned as part of a request.
    public var bufferedByteCount: Int { buffer.count }

    /// After ``HTTPParseError/bodyTooLarge(contentLength:)``: how many body bytes had already
    /// arrived with the head (and were dropped), so the caller can discard the rest of the body.
    public private(set) var bodyBytesReceivedAtError = 0

    /// Whether a request has started (some of its bytes are buffered) but is not complete.
    public var hasPartialRequest: Bool { pending != nil || !buffer.isEmpty }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard failure == nil else { return }
        buffer.append(contentsOf: bytes)
    }

    /// True once per request when its head asked for `Expect: 100-continue` and its body is still
    /// missing: the server should then send `HTTP/1.1 100 Continue` (RFC 9110 §10.1.1).
    public mutating func takeContinueRequest() -> Bool {
        guard var p = pending, p.request.expectsContinue, !p.continueReported, p.request.version == .http11 else {
            return false
        }
        p.continueReported = true
        pending = p
        return true
    }

    /// The next complete request, or nil when more bytes are needed.
    public mutating func nextRequest() throws(HTTPParseError) -> HTTPRequest? {
        if let f = failure { throw f }
        do {
            return try parseNext()
        } catch {
            failure = error
            buffer = []
            pending = nil
            throw error
        }
    }

    private mutating func parseNext() throws(HTTPParseError) -> HTTPRequest? {
        if pending == nil {
            // RFC 9112 §2.2: ignore empty lines before a request line.
            var skip = 0
            while skip + 1 < buffer.count, buffer[skip] == 13, buffer[skip + 1] == 10 { skip += 2 }
            if skip > 0 { buffer.removeFirst(skip); scanned = 0 }
            guard let headEnd = try findHeadEnd() else { return nil }
            let head: PendingHead
            do {
                head = try parseHead(buffer[0..<headEnd])
            } catch {
                if case .bodyTooLarge = error { bodyBytesReceivedAtError = buffer.count - (headEnd + 4) }
                throw error
            }
            buffer.removeFirst(headEnd + 4)
            scanned = 0
            requestLineSeen = false
            pending = head
        }
        guard let p = pending, buffer.count >= p.contentLength else { return nil }
        var request = p.request
        request.body = Array(buffer[0..<p.contentLength])
        buffer.removeFirst(p.contentLength)
        pending = nil
        return request
    }

    /// The index of the CRLFCRLF ending the head, nil when it has not arrived; throws when the
    /// request line or the head is already over its limit. Resumes where the last call stopped
    /// (``scanned``), so a head trickling in byte by byte costs linear time, not quadratic.
    private mutating func findHeadEnd() throws(HTTPParseError) -> Int? {
        let n = buffer.count
        if !requestLineSeen {
            let lineLimit = min(n, limits.maxRequestLineBytes + 2)
            while scanned < lineLimit {
                let b = buffer[scanned]
                if b == 10, scanned > 0, buffer[scanned - 1] == 13 { requestLineSeen = true; scanned -= 1; break }
                // Reject early what can never become a request line.
                guard (b >= 0x20 && b < 0x7F) || b == 13 else { throw .malformedRequestLine }
                scanned += 1
            }
            if !requestLineSeen {
                if n >= limits.maxRequestLineBytes + 2 { throw .requestLineTooLong }
                return nil
            }
        }
        let headLimit = min(n, limits.maxHeaderBytes)
        while scanned + 3 < headLimit {
            let j = scanned
            if buffer[j] == 13 && buffer[j + 1] == 10 && buffer[j + 2] == 13 && buffer[j + 3] == 10 { return j }
            scanned += 1
        }
        if n >= limits.maxHeaderBytes { throw .headersTooLarge }
        return nil
    }

    private func parseHead(_ head: ArraySlice<UInt8>) throws(HTTPParseError) -> PendingHead {
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var k = head.startIndex
        while k < head.endIndex {
            if head[k] == 13, k + 1 < head.endIndex, head[k + 1] == 10 {
                lines.append(head[start..<k])
                k += 2
                start = k
                if lines.count > limits.maxHeaderCount + 1 { throw .tooManyHeaders }
                continue
            }
            k += 1
        }
        lines.append(head[start..<head.endIndex])
        if lines.count > limits.maxHeaderCount + 1 { throw .tooManyHeaders }

        // Request line.
        let line = lines[0]
        let parts = line.split(separator: 32, maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty,
              parts[0].allSatisfy(isTokenByte), parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .malformedRequestLine
        }
        let version: HTTPVersion
        switch Array(parts[2]) {
        case Array("HTTP/1.1".utf8): version = .http11
        case Array("HTTP/1.0".utf8): version = .http10
        case let v where v.count == 8 && v.starts(with: "HTTP/".utf8) && isDigit(v[5]) && v[6] == 0x2E && isDigit(v[7]):
            throw .unsupportedVersion
        default: throw .malformedRequestLine
        }

        // Header fields.
        var headers: [HTTPHeader] = []
        var contentLength: Int?
        var expectsContinue = false
        for l in lines.dropFirst() {
            guard let colon = l.firstIndex(of: 0x3A), colon > l.startIndex,
                  l[l.startIndex..<colon].allSatisfy(isTokenByte) else { throw .malformedHeader }
            var v = l[(colon + 1)...]
            while let f = v.first, f == 32 || f == 9 { v = v.dropFirst() }
            while let b = v.last, b == 32 || b == 9 { v = v.dropLast() }
            guard v.allSatisfy({ $0 == 9 || ($0 >= 0x20 && $0 != 0x7F) }) else { throw .malformedHeader }
            let name = String(decoding: l[l.startIndex..<colon], as: UTF8.self)
            let value = String(decoding: v, as: UTF8.self)
            if asciiCaseInsensitiveEquals(name, "transfer-encoding") { throw .transferEncodingNotSupported }
            if asciiCaseInsensitiveEquals(name, "content-length") {
                guard !v.isEmpty, v.allSatisfy(isDigit) else { throw .invalidContentLength }
                var n = 0
                for d in v {
                    let (m, o1) = n.multipliedReportingOverflow(by: 10)
                    let (s, o2) = m.addingReportingOverflow(Int(d - 0x30))
                    n = o1 || o2 ? Int.max : s
                }
                if let previous = contentLength, previous != n { throw .invalidContentLength }
                contentLength = n
            }
            if asciiCaseInsensitiveEquals(name, "expect"), value.lowercasedASCII() == "100-continue" { expectsContinue = true }
            headers.append(HTTPHeader(name: name, value: value))
        }
        let length = contentLength ?? 0
        if length > limits.maxBodyBytes { throw .bodyTooLarge(contentLength: length) }
        let request = HTTPRequest(method: String(decoding: parts[0], as: UTF8.self),
                                  target: String(decoding: parts[1], as: UTF8.self), version: version,
                                  headers: headers, body: [], expectsContinue: expectsContinue)
        return PendingHead(request: request, contentLength: length)
    }
}

// MARK: - Character classes (RFC 9110 §5.6.2)

@inline(__always) func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

/// tchar: "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
    case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: return true
    default: return false
    }
}

func asciiCaseInsensitiveEquals(_ a: String, _ b: String) -> Bool {
    let x = a.utf8, y = b.utf8
    guard x.count == y.count else { return false }
    return zip(x, y).allSatisfy { lowerASCII($0) == lowerASCII($1) }
}

@inline(__always) func lowerASCII(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b | 0x20 : b }

extension StringProtocol {
    /// ASCII lowercase (other characters unchanged).
    func lowercasedASCII() -> String { String(decoding: utf8.map(lowerASCII), as: UTF8.self) }

    /// Without leading and trailing spaces and tabs.
    func trimmingSpaces() -> Substring {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}
