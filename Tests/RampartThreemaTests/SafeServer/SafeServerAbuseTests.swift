// The Safe server under the attacks of issue 35, driven in memory with an injected clock: keep-alive
// bytes that make no progress, one address taking every slot, an unauthenticated flood behind one
// address, the storage quota and new-backup rate, stale temporary files; and the response reader
// the Safe client uses against a hostile server.

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
private let t0 = 1_800_000_000.0
private func backupID(_ k: Int) -> String {
    let h = String(k, radix: 16)
    return String(repeating: "0", count: 64 - h.count) + h
}

/// The status codes of the responses in `data`.
private func statuses(_ data: [UInt8]) -> [Int] {
    var out: [Int] = []
    let text = String(decoding: data, as: UTF8.self)
    var rest = Substring(text)
    while let r = rest.firstRange(of: "HTTP/1.1 ") {
        let code = rest[r.upperBound...].prefix(3)
        if let c = Int(code) { out.append(c) }
        rest = rest[r.upperBound...]
    }
    return out
}

private func server(_ tweak: (inout SafeServer.Configuration) -> Void = { _ in }) -> (SafeServer, InMemoryBackupStore) {
    var conf = SafeServer.Configuration(maxBackupBytes: 10_000, retentionDays: 10)
    conf.rateLimitPerClient = nil
    tweak(&conf)
    let store = InMemoryBackupStore()
    return (SafeServer(configuration: conf, store: store), store)
}

private func request(_ method: String, _ path: String, headers: [String] = [], body: [UInt8] = []) -> [UInt8] {
    var h = "\(method) \(path) HTTP/1.1\r\nHost: x\r\n"
    for x in headers { h += x + "\r\n" }
    if method == "PUT" { h += "Content-Type: application/octet-stream\r\nContent-Length: \(body.count)\r\n" }
    return bytes(h + "\r\n") + body
}

@Suite("Threema Safe server: abuse")
struct SafeServerAbuseTests {
    /// `\r\n` every 2 s used to restart both timers, so 128 bytes a second held 256 slots for ever.
    /// Now only a complete request restarts a timer: the connection is closed at the request
    /// timeout, and an idle one after its idle timeout, whatever they send.
    @Test func bytesWithoutProgressResetNoTimer() {
        var (s, _) = server { $0.requestTimeout = 30; $0.idleTimeout = 60 }
        _ = s.open(1, address: "a", now: t0)
        _ = s.open(2, address: "a", now: t0)
        var closedAt: Double?
        var t = t0
        while t < t0 + 600, closedAt == nil {
            t += 2
            let r = s.receive([13, 10], from: 1, now: t)
            #expect(r.send.isEmpty)
            if s.expiredConnections(now: t).contains(where: { $0.id == 1 }) { closedAt = t }
        }
        // The first CRLF (t0 + 2) started the request timer: closed once 30 s have passed.
        #expect(closedAt == t0 + 34)
        // Connection 2 completes a request at t0 + 10, then trickles bytes of the next one: the
        // request timer runs from its first byte, and no byte of it restarts anything.
        #expect(statuses(s.receive(request("GET", "/config"), from: 2, now: t0 + 10).send) == [200])
        var expired: Double?
        for k in 1...100 where expired == nil {
            let at = t0 + 10 + Double(k)
            _ = s.receive(bytes("G"), from: 2, now: at)
            if !s.expiredConnections(now: at).isEmpty { expired = at }
        }
        #expect(expired == t0 + 11 + 31)
        // A keep-alive connection that sends nothing: closed after the idle timeout.
        _ = s.open(3, address: "a", now: t0 + 100)
        #expect(statuses(s.receive(request("GET", "/config"), from: 3, now: t0 + 101).send) == [200])
        #expect(s.expiredConnections(now: t0 + 161).isEmpty)
        #expect(s.expiredConnections(now: t0 + 162).map(\.id) == [3])
    }

    /// One address cannot take every slot; at the global cap the connection idle the longest makes
    /// room, and only when every connection is inside a request is the newcomer refused.
    @Test func connectionCapsPerAddressAndAtTheCap() {
        var (s, _) = server { $0.maxConnections = 6; $0.maxConnectionsPerAddress = 3 }
        for k in 1...3 { #expect(!s.open(k, address: "attacker", now: t0).close) }
        let fourth = s.open(4, address: "attacker", now: t0)
        #expect(fourth.close && statuses(fourth.send) == [503])
        // The attacker's connections are inside requests (a byte each).
        for k in 1...3 { _ = s.receive(bytes("P"), from: k, now: t0 + 1) }
        // Others still get in.
        #expect(!s.open(5, address: "b", now: t0 + 2).close)
        #expect(!s.open(6, address: "c", now: t0 + 3).close)
        #expect(statuses(s.receive(request("GET", "/config"), from: 5, now: t0 + 4).send) == [200])
        _ = s.receive(bytes("G"), from: 6, now: t0 + 4)
        #expect(!s.open(7, address: "d", now: t0 + 5).close)
        // At the cap (6 open): the connection idle the longest (7 just opened at t0 + 5 is younger
        // than 5, idle since its answer at t0 + 4... 5 is the oldest idle) is let go.
        let eighth = s.open(8, address: "e", now: t0 + 6)
        #expect(!eighth.close && eighth.closeOthers == [5])
        #expect(s.connectionCount == 6)
        // Every connection inside a request: the newcomer gets 503.
        _ = s.receive(bytes("G"), from: 7, now: t0 + 6)
        _ = s.receive(bytes("G"), from: 8, now: t0 + 6)
        let ninth = s.open(9, address: "f", now: t0 + 7)
        #expect(ninth.close && statuses(ninth.send) == [503])
        // Closing frees the address's slot.
        s.close(1)
        #expect(!s.open(10, address: "attacker", now: t0 + 8).close)
    }

    /// Behind a proxy every request comes from one address. With credentials, a client without
    /// valid ones is limited by its failures alone; users have buckets of their own.
    @Test func authenticationBeforeThePerUserRateLimit() {
        let creds = SafeServerCredentials(users: [("alice", "a-pass"), ("bob", "b-pass")])
        var (s, _) = server {
            $0.credentials = creds
            $0.rateLimitPerClient = SafeServerRateLimit(perSecond: 1, burst: 5)
            $0.authFailureRate = SafeServerRateLimit(perSecond: 1, burst: 10)
        }
        let alice = "Authorization: Basic " + Base64.encode(Array("alice:a-pass".utf8))
        let bob = "Authorization: Basic " + Base64.encode(Array("bob:b-pass".utf8))
        let wrong = "Authorization: Basic " + Base64.encode(Array("alice:guess".utf8))
        var next = 1
        func send(_ auth: String?) -> Int {
            next += 1
            _ = s.open(next, address: "127.0.0.1", now: t0)
            let r = s.receive(request("GET", "/config", headers: auth.map { [$0] } ?? []), from: next, now: t0)
            s.close(next)
            return statuses(r.send).first ?? 0
        }
        var codes: [Int] = []
        for k in 0..<200 { codes.append(send(k % 2 == 0 ? nil : wrong)) }
        #expect(codes.prefix(10).allSatisfy { $0 == 401 })
        #expect(codes.dropFirst(10).allSatisfy { $0 == 429 })
        // The flood from the same address does not touch the users.
        for _ in 0..<5 { #expect(send(alice) == 200) }
        #expect(send(alice) == 429)  // alice's own bucket is empty
        for _ in 0..<5 { #expect(send(bob) == 200) }
        #expect(creds.user(authorization: String(alice.dropFirst(15))) == "alice")
        #expect(creds.user(authorization: "Basic " + Base64.encode(Array("carol:a-pass".utf8))) == nil)
        #expect(creds.user(authorization: "Basic " + Base64.encode(Array("alicea-pass".utf8))) == nil)
    }

    /// The storage quota in backups and bytes (507), the new-backup rate (429), and deletes that
    /// give the room back.
    @Test func storageQuotaAndCreationRate() {
        var (s, store) = server {
            $0.maxBackups = 3
            $0.maxStoredBytes = 5 * 4096
            $0.creationRate = SafeServerRateLimit(perSecond: 0, burst: 4)
        }
        var next = 1
        func send(_ raw: [UInt8], address: String = "a") -> Int {
            next += 1
            _ = s.open(next, address: address, now: t0)
            let r = s.receive(raw, from: next, now: t0)
            s.close(next)
            return statuses(r.send).first ?? 0
        }
        #expect(send(request("PUT", "/backups/\(backupID(1))", body: [1])) == 201)
        #expect(send(request("PUT", "/backups/\(backupID(2))", body: [1])) == 201)
        #expect(send(request("PUT", "/backups/\(backupID(3))", body: [UInt8](repeating: 1, count: 5000))) == 201)
        #expect(try! s.storageUse() == (3, 4 * 4096))
        // A fourth backup: over the count (507), whoever asks.
        #expect(send(request("PUT", "/backups/\(backupID(4))", body: [1]), address: "b") == 507)
        // Replacing one is fine while the bytes fit, not when they would not.
        #expect(send(request("PUT", "/backups/\(backupID(1))", body: [UInt8](repeating: 2, count: 4096))) == 204)
        #expect(send(request("PUT", "/backups/\(backupID(1))", body: [UInt8](repeating: 2, count: 8193))) == 507)
        #expect(store.backups[SafeBackupID(backupID(1))!]?.bytes.count == 4096)
        // A delete gives the room back.
        #expect(send(request("DELETE", "/backups/\(backupID(2))")) == 204)
        #expect(try! s.storageUse() == (2, 3 * 4096))
        // Client a has created 3 of its 4; the fourth creation passes, the fifth is refused by rate.
        #expect(send(request("PUT", "/backups/\(backupID(5))", body: [1])) == 201)
        #expect(send(request("DELETE", "/backups/\(backupID(5))")) == 204)
        #expect(send(request("PUT", "/backups/\(backupID(6))", body: [1])) == 429)
        #expect(send(request("PUT", "/backups/\(backupID(6))", body: [1]), address: "b") == 201)
    }

    /// A 4 MiB body arriving in 4 KiB pieces is stored whole (the linear path: the parser's buffer
    /// is not copied per piece; the end-to-end script times 64 MiB).
    @Test func largeUploadInSmallPieces() {
        var (s, store) = server { $0 = .init(maxBackupBytes: 4 << 20, retentionDays: 10); $0.rateLimitPerClient = nil }
        let body = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let all = request("PUT", "/backups/\(backupID(9))", body: body)
        _ = s.open(1, address: "a", now: t0)
        var out: [UInt8] = []
        var i = 0
        while i < all.count {
            let end = min(all.count, i + 4096)
            out += s.receive(Array(all[i..<end]), from: 1, now: t0).send
            i = end
        }
        #expect(statuses(out) == [201])
        #expect(store.backups[SafeBackupID(backupID(9))!]?.bytes == body)
    }

    /// At start the server removes temporary files whose writer is gone, whatever their age.
    @Test func temporariesOfDeadWritersAreRemoved() throws {
        var template = Array("/tmp/rampart-safe-abuse-XXXXXX".utf8CString)
        let dir = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) })
        defer {
            for name in ["\(backupID(1))", ".tmp-\(backupID(1))-999999999-1", ".tmp-\(backupID(1))-\(getpid())-7", ".tmp-junk"] {
                unlink(dir + "/" + name)
            }
            rmdir(dir)
        }
        let store = try DirectoryBackupStore(directory: dir)
        for name in [".tmp-\(backupID(1))-999999999-1", ".tmp-\(backupID(1))-\(getpid())-7", ".tmp-junk"] {
            let fd = open(dir + "/" + name, O_WRONLY | O_CREAT, 0o600)
            #expect(fd >= 0)
            close(fd)
        }
        let now = Double(time(nil))
        // The dead writer's file and the unparsable one go; this process's (a write in progress) stays.
        #expect(try store.removeStaleTemporaries(now: now) == 2)
        #expect(access(dir + "/.tmp-\(backupID(1))-\(getpid())-7", F_OK) == 0)
        #expect(try store.removeStaleTemporaries(now: now + 7200) == 1)
    }
}

@Suite("HTTP response reader (the Safe client)")
struct HTTPResponseReaderTests {
    private func read(_ data: [UInt8], pieces: Int = .max, limits: HTTPResponseReader.Limits = .init(),
                      close: Bool = true) throws(HTTPResponseError) -> HTTPResponseReader.Response? {
        var r = HTTPResponseReader(limits: limits)
        var i = 0
        while i < data.count {
            let end = min(data.count, i + min(pieces, data.count - i))
            r.append(data[i..<end])
            if let done = try r.response() { return done }
            i = end
        }
        return close ? try r.finish() : try r.response()
    }

    @Test func contentLengthChunkedAndToClose() throws {
        let plain = bytes("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        for p in [1, 2, 3, 7, 1000] {
            #expect(try read(plain, pieces: p, close: false)?.body == bytes("hello"))
        }
        let chunked = bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1A\r\n"
                            + String(repeating: "z", count: 26) + "\r\n0\r\nX-Trailer: 1\r\n\r\n")
        for p in [1, 4, 1000] {
            let r = try read(chunked, pieces: p, close: false)
            #expect(r?.body == bytes("hello" + String(repeating: "z", count: 26)))
        }
        let toClose = try read(bytes("HTTP/1.0 200 OK\r\n\r\nuntil the end"))
        #expect(toClose?.body == bytes("until the end"))
        let interim = try read(bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"), close: false)
        #expect(interim?.status == 204 && interim?.body == [])
    }

    private static let longChunkLine: String = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;"
        + String(repeating: "x", count: 300) + "\r\na\r\n0\r\n\r\n"
    private static let longTrailers: String = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
        + String(repeating: "T: " + String(repeating: "t", count: 1000) + "\r\n", count: 17) + "\r\n"

    /// What a hostile server sends: typed errors, never a trap.
    @Test(arguments: [
        (longChunkLine, HTTPResponseError.malformedChunk),
        (longTrailers, HTTPResponseError.malformedChunk),
        ("HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nabc", .invalidContentLength),
        ("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n", .bodyTooLarge),
        ("HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n", .bodyTooLarge),
        ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", .invalidContentLength),
        ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", .truncated),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", .unsupportedTransferEncoding),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", .malformedChunk),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\n", .malformedChunk),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n200000\r\n", .bodyTooLarge),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY", .malformedChunk),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n", .truncated),
        ("HTTP/2 200 OK\r\n\r\n", .malformedStatusLine),
        ("HTTP/1.1 2000 OK\r\n\r\n", .malformedStatusLine),
        ("HTTP/1.1 099 OK\r\n\r\n", .malformedStatusLine),
        ("HTTP/1.1 200 OK\r\nBad Header\r\n\r\n", .malformedHeader),
        ("HTTP/1.1 200", .truncated),
        ("", .truncated),
    ])
    func hostileResponses(_ text: String, _ expected: HTTPResponseError) {
        for p in [1, 5, Int.max] {
            #expect(throws: expected) { try read(bytes(text), pieces: p) }
        }
    }

    /// Trailer fields fill maxHeaderBytes exactly, with their CRLFs: accepted; one byte more: refused.
    /// Either way the answer does not depend on how the bytes arrive (the fuzz target
    /// safe-client-response found a response accepted whole and refused when its last CRLF came alone).
    @Test func trailersAtTheLimitHoweverTheyArrive() throws {
        let limits = HTTPResponseReader.Limits(maxHeaderBytes: 64)
        let start = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
        // Two fields of 30 bytes and one of 0 + CRLFs: 32 + 32 = 64 bytes of trailers.
        let field = "T: " + String(repeating: "t", count: 27)
        let fits = bytes(start + field + "\r\n" + field + "\r\n\r\n")
        let over = bytes(start + field + "\r\n" + field + "t\r\n\r\n")
        for p in 1...fits.count {
            #expect(try read(fits, pieces: p, limits: limits, close: false)?.status == 200, "pieces of \(p)")
            #expect(throws: HTTPResponseError.malformedChunk) { try read(over, pieces: p, limits: limits) }
        }
    }

    /// Headers that never end: refused at the header limit, after reading each byte about once
    /// (8 MiB used to take 21 s in the old client, searching from the start after every read).
    @Test func endlessHeadersAreRefusedAtTheLimit() {
        var r = HTTPResponseReader()
        r.append(bytes("HTTP/1.1 200 OK\r\n"))
        var thrown: HTTPResponseError?
        var fed = 0
        while thrown == nil && fed < 8 << 20 {
            r.append([UInt8](repeating: 0x41, count: 1024))
            fed += 1024
            do { _ = try r.response() } catch { thrown = error }
        }
        #expect(thrown == .headersTooLarge && fed <= 17 << 10)
        #expect(r.heldByteCount == 0)
        var flood = HTTPResponseReader(limits: .init(maxBodyBytes: 100))
        flood.append(bytes("HTTP/1.1 200 OK\r\n\r\n") + [UInt8](repeating: 1, count: 101))
        #expect(throws: HTTPResponseError.bodyTooLarge) { try flood.response() }
        var many = HTTPResponseReader()
        many.append(Array(repeating: bytes("HTTP/1.1 100 Continue\r\n\r\n"), count: 9).joined())
        #expect(throws: HTTPResponseError.tooManyInterimResponses) { try many.response() }
    }

    /// Seeded random bytes and mutations of valid responses in random pieces: never a trap, and
    /// the bytes held stay within the bound.
    @Test func seededMutations() {
        var rng = SplitMix64(seed: 0x5afe)
        func next() -> UInt64 { rng.next() }
        let seeds = [bytes("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"),
                     bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
                     bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\n\r\n")]
        let limits = HTTPResponseReader.Limits(maxHeaderBytes: 256, maxBodyBytes: 64)
        for _ in 0..<3000 {
            var m = seeds[Int(next() % 3)]
            for _ in 0..<(1 + next() % 4) {
                switch next() % 3 {
                case 0: if !m.isEmpty { m[Int(next() % UInt64(m.count))] = UInt8(next() & 0xFF) }
                case 1: m.insert(UInt8(next() & 0xFF), at: Int(next() % UInt64(m.count + 1)))
                default: if !m.isEmpty { m.remove(at: Int(next() % UInt64(m.count))) }
                }
            }
            var r = HTTPResponseReader(limits: limits)
            var i = 0
            while i < m.count {
                let end = min(m.count, i + 1 + Int(next() % 7))
                r.append(m[i..<end])
                i = end
                guard (try? r.response()) == nil else { break }
                #expect(r.heldByteCount <= 256 + 64 + 8)
            }
            _ = try? r.finish()
        }
    }
}
