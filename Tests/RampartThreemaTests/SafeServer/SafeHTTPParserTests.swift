// The Safe server's HTTP/1.1 parser: whole, fragmented (byte by byte) and pipelined requests, every
// typed error with its status, the limits, and seeded random and mutated inputs (typed error or
// request, never a trap, never more buffered than the stated bound).

import RampartTestSupport
import Testing
@testable import RampartThreemaSafeServer

private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

/// Feeds `input` in pieces of `piece` bytes and collects the requests (or the first error).
private func parseAll(_ input: [UInt8], piece: Int = Int.max,
                      limits: HTTPRequestParser.Limits = .init()) -> (requests: [HTTPRequest], error: HTTPParseError?) {
    var p = HTTPRequestParser(limits: limits)
    var out: [HTTPRequest] = []
    var i = 0
    repeat {
        let end = min(input.count, i + max(1, piece))
        p.append(input[i..<end])
        i = end
        do {
            while let r = try p.nextRequest() { out.append(r) }
        } catch {
            return (out, error)
        }
    } while i < input.count
    return (out, nil)
}

@Suite("Threema Safe server: HTTP parser")
struct SafeHTTPParserTests {
    static let put = "PUT /backups/abc HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 5\r\n\r\nhello"

    @Test func wholeRequest() throws {
        let (rs, err) = parseAll(bytes(Self.put))
        #expect(err == nil)
        let r = try #require(rs.first)
        #expect(rs.count == 1)
        #expect(r.method == "PUT" && r.target == "/backups/abc" && r.version == .http11)
        #expect(r.header("content-type") == "application/octet-stream")
        #expect(r.header("HOST") == "x")
        #expect(r.body == bytes("hello"))
        #expect(r.keepAlive)
    }

    @Test(arguments: [1, 2, 3, 7, 16])
    func fragmentedAndPipelined(piece: Int) {
        let get = "GET /config HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n"
        let input = bytes(Self.put + get + "\r\n" + Self.put + get)
        let (rs, err) = parseAll(input, piece: piece)
        #expect(err == nil)
        #expect(rs.map(\.method) == ["PUT", "GET", "PUT", "GET"])
        #expect(rs[2].body == bytes("hello"))
        #expect(rs[3].header("accept") == "application/json")
    }

    @Test func incompleteIsNotAnError() throws {
        var p = HTTPRequestParser()
        let all = bytes(Self.put)
        for b in all.dropLast() {
            p.append([b])
            #expect(try p.nextRequest() == nil)
            #expect(p.hasPartialRequest)
        }
        p.append([all.last!])
        #expect(try p.nextRequest()?.body == bytes("hello"))
        #expect(!p.hasPartialRequest && p.bufferedByteCount == 0)
    }

    @Test func keepAliveRules() {
        func ka(_ version: String, _ connection: String?) -> Bool {
            let h = connection.map { "Connection: \($0)\r\n" } ?? ""
            return parseAll(bytes("GET / \(version)\r\nHost: x\r\n\(h)\r\n")).requests.first!.keepAlive
        }
        #expect(ka("HTTP/1.1", nil))
        #expect(!ka("HTTP/1.1", "close"))
        #expect(!ka("HTTP/1.1", "Keep-Alive, Close"))
        #expect(!ka("HTTP/1.0", nil))
        #expect(ka("HTTP/1.0", "keep-alive"))
    }

    @Test func expectContinueReportedOnce() throws {
        var p = HTTPRequestParser()
        p.append(bytes("PUT /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"))
        #expect(try p.nextRequest() == nil)
        let first = p.takeContinueRequest()
        let second = p.takeContinueRequest()
        #expect(first && !second)
        p.append(bytes("abc"))
        let r = try #require(try p.nextRequest())
        #expect(r.expectsContinue && r.body == bytes("abc"))
    }

    @Test(arguments: [
        ("GET\r\n\r\n", HTTPParseError.malformedRequestLine),
        ("GET /  HTTP/1.1\r\n\r\n", .malformedRequestLine),
        ("GET / HTTP/1.1 \r\n\r\n", .malformedRequestLine),
        ("G(T / HTTP/1.1\r\n\r\n", .malformedRequestLine),
        ("GET / HTTP/2.0\r\n\r\n", .unsupportedVersion),
        ("GET / HTTP/1.1\r\nHost x\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\n: x\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHo st: x\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHost: a\nb\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHost: a\u{7F}\r\n\r\n", .malformedHeader),
        ("PUT / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", .invalidContentLength),
        ("PUT / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n", .invalidContentLength),
        ("PUT / HTTP/1.1\r\nContent-Length: \r\n\r\n", .invalidContentLength),
        ("PUT / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", .invalidContentLength),
        ("PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", .transferEncodingNotSupported),
        ("PUT / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: gzip\r\n\r\n", .transferEncodingNotSupported),
        ("PUT / HTTP/1.1\r\nContent-Length: 524289\r\n\r\n", .bodyTooLarge(contentLength: 524_289)),
        ("PUT / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", .bodyTooLarge(contentLength: Int.max)),
        ("\u{16}\u{03}\u{01}\u{02}\u{00}", .malformedRequestLine),  // a TLS ClientHello
    ])
    func typedErrors(_ input: String, _ expected: HTTPParseError) {
        // Whole and byte by byte: the same error.
        #expect(parseAll(bytes(input)).error == expected)
        #expect(parseAll(bytes(input), piece: 1).error == expected)
    }

    @Test func statuses() {
        #expect(HTTPParseError.malformedRequestLine.status == 400)
        #expect(HTTPParseError.requestLineTooLong.status == 414)
        #expect(HTTPParseError.unsupportedVersion.status == 505)
        #expect(HTTPParseError.tooManyHeaders.status == 431)
        #expect(HTTPParseError.headersTooLarge.status == 431)
        #expect(HTTPParseError.transferEncodingNotSupported.status == 411)
        #expect(HTTPParseError.bodyTooLarge(contentLength: 1).status == 413)
    }

    @Test func duplicateEqualContentLengthIsAccepted() {
        let (rs, err) = parseAll(bytes("PUT / HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nok"))
        #expect(err == nil && rs.first?.body == bytes("ok"))
    }

    @Test func limits() {
        let l = HTTPRequestParser.Limits(maxRequestLineBytes: 64, maxHeaderCount: 3, maxHeaderBytes: 256, maxBodyBytes: 10)
        let longLine = "GET /" + String(repeating: "a", count: 80) + " HTTP/1.1\r\n\r\n"
        #expect(parseAll(bytes(longLine), limits: l).error == .requestLineTooLong)
        // Detected before the line ends: 66 bytes without CRLF are enough.
        #expect(parseAll(bytes(String(repeating: "A", count: 66)), limits: l).error == .requestLineTooLong)
        #expect(parseAll(bytes(String(repeating: "A", count: 65)), limits: l).error == nil)
        let four = "GET / HTTP/1.1\r\na: 1\r\nb: 2\r\nc: 3\r\nd: 4\r\n\r\n"
        #expect(parseAll(bytes(four), limits: l).error == .tooManyHeaders)
        let three = "GET / HTTP/1.1\r\na: 1\r\nb: 2\r\nc: 3\r\n\r\n"
        #expect(parseAll(bytes(three), limits: l).requests.count == 1)
        let big = "GET / HTTP/1.1\r\na: " + String(repeating: "x", count: 300) + "\r\n\r\n"
        #expect(parseAll(bytes(big), limits: l).error == .headersTooLarge)
        #expect(parseAll(bytes(big), piece: 1, limits: l).error == .headersTooLarge)
        #expect(parseAll(bytes("PUT / HTTP/1.1\r\nContent-Length: 11\r\n\r\n"), limits: l).error == .bodyTooLarge(contentLength: 11))
        #expect(parseAll(bytes("PUT / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789"), limits: l).requests.count == 1)
    }

    @Test func errorIsSticky() {
        var p = HTTPRequestParser()
        p.append(bytes("BAD\r\n\r\n"))
        #expect(throws: HTTPParseError.malformedRequestLine) { try p.nextRequest() }
        p.append(bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(throws: HTTPParseError.malformedRequestLine) { try p.nextRequest() }
        #expect(p.bufferedByteCount == 0)
    }

    @Test func bodyBytesReceivedAtError() {
        var p = HTTPRequestParser(limits: .init(maxBodyBytes: 4))
        p.append(bytes("PUT / HTTP/1.1\r\nContent-Length: 100\r\n\r\n0123456"))
        #expect(throws: HTTPParseError.bodyTooLarge(contentLength: 100)) { try p.nextRequest() }
        #expect(p.bodyBytesReceivedAtError == 7)
    }

    /// Seeded random bytes, and valid requests with bytes flipped, inserted, deleted or truncated,
    /// fed in random pieces: each run ends with requests or one typed error, and the parser never
    /// holds more than maxHeaderBytes + maxBodyBytes + the last piece.
    @Test func seededFuzz() {
        var rng = SplitMix64(seed: 0x5AFE_5E12)
        let limits = HTTPRequestParser.Limits(maxRequestLineBytes: 256, maxHeaderCount: 8, maxHeaderBytes: 1024, maxBodyBytes: 512)
        let seeds = [
            Self.put,
            "GET /config HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n",
            "DELETE /backups/\(String(repeating: "a", count: 64)) HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
            "PUT /b HTTP/1.1\r\nHost: y\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\nabcdGET / HTTP/1.1\r\n\r\n",
        ].map(bytes)
        let alphabet = bytes("GETPU /\r\n:0123456789Content-Length Transfer-Encoding HTTP/1.1 \t")
        var requests = 0, errors = 0
        for round in 0..<6000 {
            var input: [UInt8]
            switch round % 3 {
            case 0:
                input = rng.bytes(Int(rng.next() % 600))
            case 1:
                input = (0..<Int(rng.next() % 600)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            default:
                input = seeds[Int(rng.next() % UInt64(seeds.count))]
                for _ in 0..<(1 + rng.next() % 4) where !input.isEmpty {
                    let at = Int(rng.next() % UInt64(input.count))
                    switch rng.next() % 4 {
                    case 0: input[at] = UInt8(truncatingIfNeeded: rng.next())
                    case 1: input.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
                    case 2: input.remove(at: at)
                    default: input = Array(input.prefix(at))
                    }
                }
            }
            var p = HTTPRequestParser(limits: limits)
            var i = 0
            var failed = false
            while i < input.count && !failed {
                let piece = 1 + Int(rng.next() % 64)
                let end = min(input.count, i + piece)
                p.append(input[i..<end])
                i = end
                do {
                    while let r = try p.nextRequest() {
                        requests += 1
                        #expect(r.body.count <= limits.maxBodyBytes)
                    }
                    #expect(p.bufferedByteCount <= limits.maxHeaderBytes + limits.maxBodyBytes)
                } catch {
                    errors += 1
                    failed = true
                    #expect([400, 411, 413, 414, 431, 505].contains(error.status))
                }
            }
        }
        // Measured with this seed: 415 requests, 4821 errors.
        #expect(requests > 300 && errors > 4000)
    }
}
