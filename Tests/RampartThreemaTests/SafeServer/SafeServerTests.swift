// The Safe server's logic, driven in memory with an injected clock: every status of the whitepaper's
// API, keep-alive and pipelining byte by byte, 100-continue, 413 before the body, rate limits,
// Basic auth, retention, timeouts, the connection cap, and the directory store's atomic writes
// (a simulated crash between the temporary file and the rename keeps the old backup).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RampartCodecs
import RampartTestSupport
import Testing
@testable import RampartThreemaSafeServer

private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
private let idA = String(repeating: "0123456789abcdef", count: 4)
private let idB = String(repeating: "f", count: 64)
private let t0 = 1_800_000_000.0

/// A parsed response (status, headers, body) from the server's bytes.
private struct Response {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
}

/// Splits serialized responses (Content-Length framed; 204 and 100 without a body).
private func responses(_ data: [UInt8]) -> [Response] {
    var out: [Response] = []
    var rest = data[...]
    while !rest.isEmpty {
        guard let end = rest.indices.first(where: { i in rest[i...].starts(with: [13, 10, 13, 10]) }) else { break }
        let head = String(decoding: rest[rest.startIndex..<end], as: UTF8.self).splitOn("\r\n")
        let status = Int(head[0].split(separator: " ")[1])!
        var headers: [String: String] = [:]
        for h in head.dropFirst() {
            let parts = h.split(separator: ":", maxSplits: 1)
            headers[parts[0].lowercased()] = String(parts[1]).trimmedOf(" ")
        }
        rest = rest[(end + 4)...]
        let n = Int(headers["content-length"] ?? "0")!
        out.append(Response(status: status, headers: headers, body: Array(rest.prefix(n))))
        rest = rest.dropFirst(n)
    }
    return out
}

private extension String {
    func splitOn(_ sep: String) -> [String] {
        var parts: [String] = []
        var cur = Substring(self)
        while let r = cur.firstRange(of: sep) { parts.append(String(cur[..<r.lowerBound])); cur = cur[r.upperBound...] }
        parts.append(String(cur))
        return parts
    }
    func trimmedOf(_ c: Character) -> String {
        var s = Substring(self)
        while s.first == c { s = s.dropFirst() }
        while s.last == c { s = s.dropLast() }
        return String(s)
    }
}

/// A server with an in-memory store and one helper per request shape.
private struct Harness {
    var server: SafeServer
    let store: InMemoryBackupStore
    var now = t0
    var next = 1

    init(_ tweak: (inout SafeServer.Configuration) -> Void = { _ in }) {
        var conf = SafeServer.Configuration(maxBackupBytes: 1000, retentionDays: 10)
        conf.rateLimitPerClient = nil
        tweak(&conf)
        store = InMemoryBackupStore()
        server = SafeServer(configuration: conf, store: store)
    }

    /// Opens a connection, sends `raw`, returns the reply.
    mutating func exchange(_ raw: [UInt8], address: String = "127.0.0.1") -> SafeServerReply {
        let id = next
        next += 1
        _ = server.open(id, address: address, now: now)
        let reply = server.receive(raw, from: id, now: now)
        server.close(id)  // as the socket layer does when the client is done
        return reply
    }

    mutating func send(_ method: String, _ path: String, headers: [String] = [], body: [UInt8] = [],
                       address: String = "127.0.0.1") -> Response {
        var h = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\n"
        for x in headers { h += x + "\r\n" }
        if !body.isEmpty || method == "PUT" { h += "Content-Length: \(body.count)\r\n" }
        let reply = exchange(bytes(h + "\r\n") + body, address: address)
        let rs = responses(reply.send)
        precondition(rs.count == 1, "one response expected")
        return rs[0]
    }

    mutating func put(_ id: String, _ body: [UInt8], type: String? = "application/octet-stream", extra: [String] = []) -> Response {
        send("PUT", "/backups/\(id)", headers: (type.map { ["Content-Type: \($0)"] } ?? []) + extra, body: body)
    }

    mutating func get(_ id: String, accept: String? = "application/octet-stream", extra: [String] = []) -> Response {
        send("GET", "/backups/\(id)", headers: (accept.map { ["Accept: \($0)"] } ?? []) + extra)
    }
}

@Suite("Threema Safe server: API")
struct SafeServerAPITests {
    @Test func config() {
        var h = Harness()
        let r = h.send("GET", "/config", headers: ["Accept: application/json"])
        #expect(r.status == 200)
        #expect(r.headers["content-type"] == "application/json")
        #expect(String(decoding: r.body, as: UTF8.self) == "{\"maxBackupBytes\":1000,\"retentionDays\":10}")
        #expect(h.send("PUT", "/config").status == 405)
        #expect(h.send("POST", "/config").headers["allow"] == "GET, HEAD")
    }

    @Test func putGetDeleteCycle() {
        var h = Harness()
        let blob = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }
        #expect(h.get(idA).status == 404)
        #expect(h.put(idA, blob).status == 201)
        let g = h.get(idA)
        #expect(g.status == 200 && g.body == blob && g.headers["content-type"] == "application/octet-stream")
        #expect(h.put(idA, [1, 2, 3]).status == 204)
        #expect(h.get(idA).body == [1, 2, 3])
        #expect(h.send("DELETE", "/backups/\(idA)").status == 204)
        #expect(h.send("DELETE", "/backups/\(idA)").status == 404)
        #expect(h.get(idA).status == 404)
    }

    @Test func headReturnsLengthWithoutBody() {
        var h = Harness()
        _ = h.put(idA, [9, 9, 9, 9])
        let reply = h.exchange(bytes("HEAD /backups/\(idA) HTTP/1.1\r\nHost: x\r\nAccept: application/octet-stream\r\n\r\n"))
        let text = String(decoding: reply.send, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n") && text.contains("Content-Length: 4\r\n") && text.hasSuffix("\r\n\r\n"))
    }

    @Test(arguments: [
        String(repeating: "A", count: 64),  // uppercase
        String(repeating: "a", count: 63),
        String(repeating: "a", count: 65),
        String(repeating: "g", count: 64),
        "",
        "%30" + String(repeating: "a", count: 61),
    ])
    func badIdIs400(_ id: String) {
        var h = Harness()
        #expect(h.put(id, [1]).status == 400)
        #expect(h.get(id).status == 400)
        #expect(h.send("DELETE", "/backups/\(id)").status == 400)
    }

    @Test func validation() {
        var h = Harness()
        #expect(h.put(idA, [1], type: nil).status == 400)
        #expect(h.put(idA, [1], type: "application/json").status == 400)
        #expect(h.put(idA, [1], type: "Application/Octet-Stream; charset=x").status == 201)
        #expect(h.put(idA, []).status == 400)  // empty body
        #expect(h.get(idA, accept: nil).status == 400)
        #expect(h.get(idA, accept: "*/*").status == 400)
        #expect(h.get(idA, accept: "text/plain, application/octet-stream;q=0.9").status == 200)
        #expect(h.send("GET", "/config", headers: []).status == 200)  // Accept not required for config
    }

    @Test func notFoundAndMethodNotAllowed() {
        var h = Harness()
        #expect(h.send("GET", "/").status == 404)
        #expect(h.send("GET", "/backups").status == 404)
        #expect(h.send("GET", "/backups/\(idA)/x").status == 404)
        #expect(h.send("GET", "/other/config").status == 404)
        let r = h.send("POST", "/backups/\(idA)")
        #expect(r.status == 405 && r.headers["allow"] == "GET, HEAD, PUT, DELETE")
        #expect(h.send("PATCH", "/backups/zz").status == 405)
    }

    @Test func queryAbsoluteFormAndBasePath() {
        var h = Harness { $0 = .init(maxBackupBytes: 1000, retentionDays: 10, basePath: "safe"); $0.rateLimitPerClient = nil }
        #expect(h.server.configuration.basePath == "/safe/")
        #expect(h.send("GET", "/safe/config?x=1").status == 200)
        #expect(h.send("GET", "http://example.org/safe/config").status == 200)
        #expect(h.send("GET", "/config").status == 404)
    }

    @Test func missingHostIs400() {
        var h = Harness()
        let r = responses(h.exchange(bytes("GET /config HTTP/1.1\r\n\r\n")).send)
        #expect(r.first?.status == 400)
        let r10 = responses(h.exchange(bytes("GET /config HTTP/1.0\r\n\r\n")).send)
        #expect(r10.first?.status == 200)
    }

    @Test func oversizeIs413BeforeTheBody() {
        var h = Harness()
        _ = h.server.open(1, address: "a", now: t0)
        let reply = h.server.receive(bytes("PUT /backups/\(idA) HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                                           + "Content-Length: 1001\r\n\r\n") + [1, 2, 3], from: 1, now: t0)
        let r = responses(reply.send)
        #expect(r.first?.status == 413 && r.first?.headers["connection"] == "close")
        // The rest of the declared body is read and discarded, then the connection closes.
        #expect(!reply.close)
        #expect(!h.server.receive([UInt8](repeating: 0, count: 990), from: 1, now: t0).close)
        let last = h.server.receive([UInt8](repeating: 0, count: 8), from: 1, now: t0)
        #expect(last.close && last.send.isEmpty)
        #expect(h.store.backups.isEmpty)
        // A declared body beyond the discard allowance: closed at once.
        _ = h.server.open(2, address: "a", now: t0)
        let huge = h.server.receive(bytes("PUT /backups/\(idA) HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n"), from: 2, now: t0)
        #expect(responses(huge.send).first?.status == 413 && huge.close)
    }

    @Test func requestLogLinesShortenBackupIDs() {
        var h = Harness()
        let reply = h.exchange(bytes("GET /backups/\(idA)?q HTTP/1.1\r\nHost: x\r\nAccept: application/octet-stream\r\n\r\n"))
        #expect(reply.log == ["connection 1 from 127.0.0.1: GET /backups/<id> 404 15"])
        #expect(h.server.logTarget("/a\u{1}b") == "/a?b")
        #expect(h.server.logTarget("/" + String(repeating: "x", count: 200)).utf8.count == 80)
    }

    /// No part of a backup ID reaches a log line: not with a long base path that pushes the ID past
    /// the 80-character cut, not for an invalid ID, not from a storage error.
    @Test func noPartOfABackupIDIsLogged() {
        let base = "/" + String(repeating: "b", count: 60) + "/"
        var h = Harness { $0 = .init(maxBackupBytes: 1000, retentionDays: 10, basePath: base); $0.rateLimitPerClient = nil }
        var lines: [String] = []
        for target in ["\(base)backups/\(idA)", "\(base)backups/\(idA.prefix(63))", "/backups/\(idA)",
                       "\(base)backups/\(idA)?x=\(idA)"] {
            lines += h.exchange(bytes("GET \(target) HTTP/1.1\r\nHost: x\r\nAccept: application/octet-stream\r\n\r\n")).log
        }
        h.store.failWrites = true
        lines += h.exchange(bytes("PUT \(base)backups/\(idA) HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                                  + "Content-Length: 1\r\n\r\nz")).log
        #expect(lines.count >= 6)
        #expect(lines.contains { $0.contains("storage error") })
        for line in lines {
            // Any 8 consecutive characters of the ID would be a prefix an offline guess could test.
            for k in 0...(64 - 8) { #expect(!line.contains(idA.dropFirst(k).prefix(8)), "\(line)") }
        }
    }

    @Test func http10KeepAliveIsAnswered() {
        var h = Harness()
        let reply = h.exchange(bytes("GET /config HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"))
        #expect(!reply.close)
        #expect(responses(reply.send).first?.headers["connection"] == "keep-alive")
        let closing = h.exchange(bytes("GET /config HTTP/1.0\r\n\r\n"))
        #expect(closing.close && responses(closing.send).first?.headers["connection"] == "close")
    }

    @Test func httpDates() {
        #expect(HTTPResponse.httpDate(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")  // RFC 9110's example
        #expect(HTTPResponse.httpDate(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPResponse.httpDate(951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPResponse.httpDate(1_800_000_000) == "Fri, 15 Jan 2027 08:00:00 GMT")
        #expect(HTTPResponse.httpDate(-5) == HTTPResponse.httpDate(.nan))
        var h = Harness()
        #expect(h.send("GET", "/config").headers["date"] == HTTPResponse.httpDate(t0))
    }

    @Test func storageErrorIs500() {
        var h = Harness()
        h.store.failWrites = true
        let reply = h.exchange(bytes("PUT /backups/\(idA) HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                                     + "Content-Length: 1\r\n\r\nx"))
        #expect(responses(reply.send).first?.status == 500)
        #expect(reply.log.contains { $0.contains("storage error") })
    }

    @Test func malformedIsAnsweredAndClosedWithALogLine() {
        var h = Harness()
        let reply = h.exchange([0x16, 0x03, 0x01, 0x00, 0xFF, 0x10])
        #expect(reply.close)
        #expect(responses(reply.send).first?.status == 400)
        #expect(reply.log.count == 1 && reply.log[0].contains("malformed request line") && reply.log[0].contains("closing"))
        #expect(h.server.connectionCount == 0)
        #expect(responses(h.exchange(bytes("PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")).send).first?.status == 411)
        #expect(responses(h.exchange(bytes("GET / HTTP/3.0\r\n\r\n")).send).first?.status == 505)
    }
}

@Suite("Threema Safe server: connections")
struct SafeServerConnectionTests {
    /// Three pipelined requests fed one byte at a time give three responses in order, on one
    /// kept-alive connection; `Connection: close` ends it.
    @Test func pipelinedByteByByte() {
        var h = Harness()
        let input = bytes("PUT /backups/\(idA) HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 3\r\n\r\nabc"
                          + "GET /backups/\(idA) HTTP/1.1\r\nHost: x\r\nAccept: application/octet-stream\r\n\r\n"
                          + "DELETE /backups/\(idA) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                          + "GET /config HTTP/1.1\r\nHost: x\r\n\r\n")  // after close: never answered
        _ = h.server.open(7, address: "a", now: t0)
        var out: [UInt8] = []
        var closed = false
        for b in input where !closed {
            let r = h.server.receive([b], from: 7, now: t0)
            out += r.send
            closed = r.close
        }
        #expect(closed)
        let rs = responses(out)
        #expect(rs.map(\.status) == [201, 200, 204])
        #expect(rs[1].body == bytes("abc"))
        #expect(h.server.connectionCount == 0)
    }

    @Test func wholePipelineInOneRead() {
        var h = Harness()
        let one = "GET /config HTTP/1.1\r\nHost: x\r\n\r\n"
        let reply = h.exchange(bytes(String(repeating: one, count: 5)))
        #expect(responses(reply.send).map(\.status) == [200, 200, 200, 200, 200])
        #expect(!reply.close)
    }

    @Test func pipelinedOutputOverBudgetCloses() {
        var h = Harness { $0.maxOutputBytesPerReceive = 2500 }
        _ = h.put(idA, [UInt8](repeating: 1, count: 1000))
        let get = "GET /backups/\(idA) HTTP/1.1\r\nHost: x\r\nAccept: application/octet-stream\r\n\r\n"
        let reply = h.exchange(bytes(String(repeating: get, count: 10)))
        #expect(reply.close)
        #expect(responses(reply.send).count == 3)
        #expect(reply.log.contains { $0.contains("pipelined") })
    }

    @Test func expectContinue() {
        var h = Harness()
        _ = h.server.open(1, address: "a", now: t0)
        let head = "PUT /backups/\(idA) HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"
        let r1 = h.server.receive(bytes(head), from: 1, now: t0)
        #expect(String(decoding: r1.send, as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
        let r2 = h.server.receive([7, 8], from: 1, now: t0)
        #expect(responses(r2.send).map(\.status) == [201])
    }

    @Test func slowClientAndIdleTimeouts() {
        var h = Harness { $0.requestTimeout = 10; $0.idleTimeout = 30 }
        _ = h.server.open(1, address: "a", now: t0)
        _ = h.server.open(2, address: "b", now: t0)
        _ = h.server.open(3, address: "c", now: t0)
        // 1 trickles a request, one byte every 2 s: over the request timeout after 10 s.
        for (k, b) in bytes("GET /config HTTP/1.1\r\n").enumerated() {
            _ = h.server.receive([b], from: 1, now: t0 + Double(k) * 2)
            if t0 + Double(k) * 2 > t0 + 10 { break }
        }
        // 2 completes requests now and then: never a slow client.
        _ = h.server.receive(bytes("GET /config HTTP/1.1\r\nHost: x\r\n\r\n"), from: 2, now: t0 + 20)
        var expired = h.server.expiredConnections(now: t0 + 12)
        #expect(expired.map(\.id) == [1] && expired[0].reason.contains("slow client"))
        expired = h.server.expiredConnections(now: t0 + 31)
        #expect(expired.map(\.id) == [3] && expired[0].reason.contains("idle"))
        #expect(h.server.expiredConnections(now: t0 + 49).isEmpty)
        #expect(h.server.expiredConnections(now: t0 + 51).map(\.id) == [2])
        #expect(h.server.connectionCount == 0)
    }

    @Test func connectionCap() {
        var h = Harness { $0.maxConnections = 2 }
        #expect(!h.server.open(1, address: "a", now: t0).close)
        #expect(!h.server.open(2, address: "a", now: t0).close)
        // Both inside a request: the newcomer is refused.
        _ = h.server.receive(bytes("GET"), from: 1, now: t0)
        _ = h.server.receive(bytes("GET"), from: 2, now: t0)
        let refused = h.server.open(3, address: "a", now: t0)
        #expect(refused.close && responses(refused.send).first?.status == 503 && refused.log.count == 1)
        h.server.close(1)
        #expect(!h.server.open(4, address: "a", now: t0).close)
    }

    /// Seeded mutations of valid request streams through the whole server, in random pieces: every
    /// reply is well-formed responses (or nothing), the server never traps, and after a close the
    /// connection is forgotten.
    @Test func seededServerFuzz() {
        var rng = SplitMix64(seed: 0x5AFE_0002)
        var h = Harness { $0.rateLimitPerClient = SafeServerRateLimit(perSecond: 100, burst: 100) }
        let valid = bytes("PUT /backups/\(idA) HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 3\r\n\r\nabc"
                          + "GET /backups/\(idA) HTTP/1.1\r\nHost: x\r\nAccept: application/octet-stream\r\n\r\n"
                          + "GET /config HTTP/1.1\r\nHost: x\r\n\r\nDELETE /backups/\(idA) HTTP/1.1\r\nHost: x\r\n\r\n")
        var statuses: Set<Int> = []
        for round in 0..<3000 {
            var input = valid
            for _ in 0..<(rng.next() % 5) {
                let at = Int(rng.next() % UInt64(input.count))
                switch rng.next() % 3 {
                case 0: input[at] = UInt8(truncatingIfNeeded: rng.next())
                case 1: input.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
                default: input.remove(at: at)
                }
            }
            let id = 1000 + round
            _ = h.server.open(id, address: "a", now: t0 + Double(round))
            var i = 0
            var closed = false
            var out: [UInt8] = []
            while i < input.count && !closed {
                let end = min(input.count, i + 1 + Int(rng.next() % 40))
                let r = h.server.receive(Array(input[i..<end]), from: id, now: t0 + Double(round))
                out += r.send
                closed = r.close
                i = end
            }
            if !closed { h.server.close(id) }
            for r in responses(out) { statuses.insert(r.status) }
        }
        #expect(h.server.connectionCount == 0)
        #expect(statuses.isSuperset(of: [200, 201, 204, 400, 404]))
    }

    @Test func bufferedBytesAreReported() {
        var h = Harness()
        _ = h.server.open(1, address: "a", now: t0)
        _ = h.server.receive(bytes("PUT /backups/\(idA) HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123"), from: 1, now: t0)
        #expect(h.server.bufferedByteCount(of: 1) == 4)
    }
}

@Suite("Threema Safe server: rate limit, auth, retention")
struct SafeServerPolicyTests {
    @Test func perAddressRateLimit() {
        var h = Harness { $0.rateLimitPerClient = SafeServerRateLimit(perSecond: 0.5, burst: 3) }
        for _ in 0..<3 { #expect(h.send("GET", "/config").status == 200) }
        let limited = h.send("GET", "/config")
        #expect(limited.status == 429 && limited.headers["retry-after"] == "2")
        #expect(h.get(idA).status == 429)
        // Another address has its own bucket.
        #expect(h.send("GET", "/config", address: "127.0.0.2").status == 200)
        h.now += 2
        #expect(h.send("GET", "/config").status == 200)
        #expect(h.send("GET", "/config").status == 429)
        #expect(h.server.rateLimited == 3)
    }

    @Test func globalRateLimit() {
        var h = Harness { $0.rateLimitGlobal = SafeServerRateLimit(perSecond: 1, burst: 2) }
        #expect(h.send("GET", "/config", address: "a").status == 200)
        #expect(h.send("GET", "/config", address: "b").status == 200)
        #expect(h.send("GET", "/config", address: "c").status == 429)
        h.now += 1
        #expect(h.send("GET", "/config", address: "d").status == 200)
    }

    @Test func trackedAddressesAreBounded() {
        var h = Harness { $0.rateLimitPerClient = SafeServerRateLimit(perSecond: 1, burst: 2); $0.maxTrackedAddresses = 8 }
        for k in 0..<100 { _ = h.send("GET", "/config", address: "10.0.0.\(k)") }
        #expect(h.send("GET", "/config", address: "10.0.0.99").status == 200)
    }

    @Test func basicAuth() {
        let creds = SafeServerCredentials(user: "alice", password: "s3cret:with colon")
        var h = Harness { $0.credentials = creds }
        let good = "Authorization: Basic " + Base64.encode(Array("alice:s3cret:with colon".utf8))
        let missing = h.send("GET", "/config")
        #expect(missing.status == 401 && missing.headers["www-authenticate"]?.hasPrefix("Basic realm=") == true)
        #expect(h.send("GET", "/config", headers: ["Authorization: Basic " + Base64.encode(Array("alice:wrong".utf8))]).status == 401)
        #expect(h.send("GET", "/config", headers: ["Authorization: Bearer abc"]).status == 401)
        #expect(h.send("GET", "/config", headers: ["Authorization: Basic !!!"]).status == 401)
        #expect(h.send("GET", "/config", headers: [good]).status == 200)
        #expect(h.send("GET", "/config", headers: ["authorization: basic " + Base64.encode(Array("alice:s3cret:with colon".utf8))]).status == 200)
        #expect(h.put(idA, [1], extra: [good]).status == 201)
        #expect(h.put(idA, [1]).status == 401)
        // Auth is checked before routing: an unauthenticated client learns nothing about paths.
        #expect(h.send("GET", "/nowhere").status == 401)
    }

    @Test func retention() {
        var h = Harness()  // retentionDays 10
        _ = h.put(idA, [1])
        h.now += 5 * 86_400
        _ = h.put(idB, [2])
        h.now += 5 * 86_400 + 1  // idA is 10 days + 1 s old, idB 5 days
        #expect(h.get(idA).status == 404)
        #expect(h.store.backups[SafeBackupID(idA)!] == nil)  // deleted when found expired
        #expect(h.get(idB).status == 200)
        // An expired backup counts as absent: a PUT creates (201).
        _ = h.put(idA, [3])
        h.now += 10 * 86_400 + 1
        #expect(h.put(idA, [4]).status == 201)
        // The sweep deletes everything expired.
        h.now += 10 * 86_400 + 1
        let log = h.server.sweep(now: h.now)
        #expect(h.store.backups.isEmpty && log.count == 1)
        // DELETE of an expired backup: 404.
        _ = h.put(idA, [5])
        h.now += 11 * 86_400
        #expect(h.send("DELETE", "/backups/\(idA)").status == 404)
    }

    @Test func credentialsCompareDigests() {
        let c = SafeServerCredentials(user: "u", password: "p")
        #expect(c.accepts(authorization: "Basic dTpw"))
        #expect(c.accepts(authorization: "  Basic   dTpw  "))
        #expect(!c.accepts(authorization: "Basic dTpx"))
        #expect(!c.accepts(authorization: nil))
        #expect(!c.accepts(authorization: "Basic"))
    }
}

@Suite("Threema Safe server: directory store")
struct DirectoryStoreTests {
    private func tempDir() -> String {
        var template = Array("/tmp/rampart-safe-XXXXXX".utf8CString)
        let p = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }!
        return String(cString: p)
    }

    private func remove(_ dir: String) {
        if let d = opendir(dir) {
            while let e = readdir(d) {
                let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." { unlink(dir + "/" + name) }
            }
            closedir(d)
        }
        rmdir(dir)
    }

    @Test func roundTripAndModificationTime() throws {
        let dir = tempDir()
        defer { remove(dir) }
        let store = try DirectoryBackupStore(directory: dir)
        let id = SafeBackupID(idA)!
        #expect(try store.read(id) == nil)
        try store.write(id, [1, 2, 3], now: t0 + 0.5)
        let b = try #require(try store.read(id))
        #expect(b.bytes == [1, 2, 3] && abs(b.modified - (t0 + 0.5)) < 0.001)
        #expect(try store.list().map(\.id) == [id])
        #expect(try store.delete(id))
        #expect(!(try store.delete(id)))
        #expect(throws: SafeStoreError.self) { try DirectoryBackupStore(directory: dir + "/missing") }
    }

    /// A crash after the temporary file is written and before the rename: the old backup is read
    /// back intact, the temporary file is ignored by list() and removed once stale.
    @Test func crashBeforeRenameKeepsTheOldBackup() throws {
        let dir = tempDir()
        defer { remove(dir) }
        let store = try DirectoryBackupStore(directory: dir)
        let id = SafeBackupID(idA)!
        let old = [UInt8](repeating: 0xAA, count: 5000)
        try store.write(id, old, now: t0)
        var tempSeen: String?
        store.beforeRename = { path in
            tempSeen = path
            return false  // crash here
        }
        #expect(throws: SafeStoreError.self) { try store.write(id, [UInt8](repeating: 0xBB, count: 7000), now: t0 + 10) }
        let path = try #require(tempSeen)
        #expect(access(path, F_OK) == 0)  // the complete temporary file, as a crash leaves it
        #expect(try store.read(id)?.bytes == old)
        #expect(try store.list().count == 1)
        // The server on this store still serves the old backup.
        var server = SafeServer(configuration: .init(), store: store)
        var log: [String] = []
        let r = server.handle(HTTPRequest(method: "GET", target: "/backups/\(idA)", headers: [
            HTTPHeader(name: "Host", value: "x"), HTTPHeader(name: "Accept", value: "application/octet-stream")]),
                              address: "a", now: t0 + 20, log: &log)
        #expect(r.status == 200 && r.body == old)
        // Stale temporaries go on the sweep (young ones stay: a write may be in progress).
        // (The temporary file's mtime is the write's `now`, t0 + 10.)
        #expect(try store.removeStaleTemporaries(now: t0 + 20) == 0)
        #expect(access(path, F_OK) == 0)
        #expect(try store.removeStaleTemporaries(now: t0 + 10 + 3601) == 1)
        #expect(access(path, F_OK) != 0)
        // Without the crash the new bytes replace the old ones.
        store.beforeRename = nil
        try store.write(id, [0xCC], now: t0 + 30)
        #expect(try store.read(id)?.bytes == [0xCC])
    }

    @Test func oversizedFileIsNotRead() throws {
        let dir = tempDir()
        defer { remove(dir) }
        let store = try DirectoryBackupStore(directory: dir)
        let id = SafeBackupID(idB)!
        try store.write(id, [UInt8](repeating: 1, count: 100), now: t0)
        store.maxFileBytes = 99
        #expect(throws: SafeStoreError.self) { try store.read(id) }
    }

    @Test func retentionOnTheDirectoryStore() throws {
        let dir = tempDir()
        defer { remove(dir) }
        let store = try DirectoryBackupStore(directory: dir)
        var server = SafeServer(configuration: .init(maxBackupBytes: 100, retentionDays: 1), store: store)
        try store.write(SafeBackupID(idA)!, [1], now: t0)
        try store.write(SafeBackupID(idB)!, [2], now: t0 + 86_000)
        _ = server.sweep(now: t0 + 86_401)
        #expect(try store.list().map(\.id) == [SafeBackupID(idB)!])
    }
}
