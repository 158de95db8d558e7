// The HTTP transport (Docs/MTProto.md §6.8): request parsing on the server side at any split, one
// response per request in order, long polls held and expired, http_wait, the refusals, and the
// client side's reading of responses.

import Testing
@testable import RampartMTProto
@testable import RampartMTProtoServer
import RampartTestSupport

@Suite("HTTP transport")
struct HTTPTransportTests {
    private func request(_ body: [UInt8], extraHeaders: String = "") -> [UInt8] {
        Array("POST /api HTTP/1.1\r\nHost: x\r\n\(extraHeaders)Content-Length: \(body.count)\r\n\r\n".utf8) + body
    }

    /// Splits `bytes` into chunks of pseudo-random sizes (1…17).
    private func chunks(_ bytes: [UInt8], seed: UInt64) -> [[UInt8]] {
        var rng = SplitMix64(seed: seed)
        var out: [[UInt8]] = []
        var i = 0
        while i < bytes.count {
            let n = min(bytes.count - i, Int(rng.next() % 17) + 1)
            out.append(Array(bytes[i..<(i + n)]))
            i += n
        }
        return out
    }

    /// The bodies of the responses in `bytes` (parsed by the client side).
    private func responses(_ bytes: [UInt8]) throws -> [[UInt8]] {
        var r = HTTPMessageReader(role: .client, maxBodyLength: 1 << 20)
        r.feed(bytes)
        var out: [[UInt8]] = []
        while let b = try r.next() { out.append(b) }
        #expect(r.buffer.count == 0)
        return out
    }

    @Test("Pipelined requests split anywhere give the same packets", arguments: 0..<8)
    func pipelinedRequestsAtAnySplit(seed: Int) throws {
        let bodies = (0..<4).map { k in transportPacket(24 + 8 * k + seed * 4, seed: UInt64(k + 10 * seed)) }
        let wire = bodies.enumerated().flatMap { request($1, extraHeaders: $0 == 2 ? "content-length: \($1.count)\r\nX-A:  b \r\n" : "") }
        let server = ServerTransport()
        var got: [[UInt8]] = []
        for c in chunks(wire, seed: UInt64(seed)) {
            server.feed(c)
            while let e = try server.next() {
                guard case .packet(let p, let qa) = e, !qa else { Issue.record("unexpected \(e)"); return }
                got.append(p)
            }
        }
        #expect(server.detected == .http)
        #expect(got == bodies)
        #expect(server.heldRequestCount == 4)
    }

    @Test("One response per request, in order; a request with nothing to answer is held; packets wait for requests")
    func responsesFollowRequests() throws {
        var rng = SplitMix64(seed: 3)
        let server = ServerTransport()
        server.unixTime = 1000
        server.feed(request([1, 2, 3, 4]))
        _ = try server.next()
        #expect(server.takeOutput().isEmpty && server.heldRequestCount == 1)
        // Two packets for one request: the first answers it, the second waits.
        let a = transportPacket(40, seed: 1), b = transportPacket(44, seed: 2)
        let first = try server.encode(a, using: &rng)
        let second = try server.encode(b, using: &rng)
        #expect(try responses(first) == [a])
        #expect(second.isEmpty && server.heldRequestCount == 0)
        // The next request lets the waiting packet out at once (takeOutput), before its own answer.
        server.feed(request([5, 6, 7, 8]))
        _ = try server.next()
        #expect(try responses(server.takeOutput()) == [b])
        #expect(server.heldRequestCount == 0)
        // A transport error is a 4-byte body (Telethon and this client read it so).
        server.feed(request([9, 9, 9, 9]))
        _ = try server.next()
        let err = try server.encodeTransportError(-404, using: &rng)
        let client = try ClientTransport(.http(host: "h"), using: &rng)
        client.feed(first + err)
        #expect(try client.next() == .packet(a, quickAckRequested: false))
        #expect(try client.next() == .transportError(-404))
        #expect(try client.next() == nil)
        // Quick acks do not exist here.
        #expect(try server.encodeQuickAck(0x8000_0001).isEmpty)
    }

    @Test("Telethon's reader: Content-Length is the last header, followed by the blank line")
    func contentLengthIsTheLastHeader() {
        let r = String(decoding: HTTPTransport.response([1, 2, 3]), as: UTF8.self)
        #expect(r.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(r.hasSuffix("\r\nContent-Length: 3\r\n\r\n\u{1}\u{2}\u{3}"))
    }

    @Test("Held requests run out after max_wait (25 s by default) with an empty response, which the client skips")
    func longPollsExpire() throws {
        let server = ServerTransport()
        server.unixTime = 1000
        server.feed(request([1, 2, 3, 4]) + request([5, 6, 7, 8]))
        _ = try server.next()
        server.unixTime = 1010
        _ = try server.next()
        #expect(server.httpMaxWait == HTTPTransport.defaultMaxWait)
        #expect(server.expireHeldRequests(now: 1024).isEmpty)
        let one = server.expireHeldRequests(now: 1025)
        #expect(try responses(one) == [[]] && server.heldRequestCount == 1)
        server.httpMaxWait = 2
        #expect(try responses(server.expireHeldRequests(now: 1012)) == [[]] && server.heldRequestCount == 0)
        var rng = SplitMix64(seed: 1)
        let client = try ClientTransport(.http(host: "h"), using: &rng)
        client.feed(one + HTTPTransport.response([7, 7, 7, 7, 7, 7, 7, 7]))
        #expect(try client.next() == .packet([7, 7, 7, 7, 7, 7, 7, 7], quickAckRequested: false))
        // Other transports have no long polls.
        let plain = ServerTransport()
        plain.feed([0xEE, 0xEE, 0xEE, 0xEE])
        _ = try plain.next()
        plain.httpMaxWait = 5
        #expect(plain.httpMaxWait == nil && plain.expireHeldRequests(now: 1e9).isEmpty)
    }

    @Test("More than 64 open requests: the oldest is answered empty at once")
    func heldRequestsAreBounded() throws {
        let server = ServerTransport()
        var wire: [UInt8] = []
        for k in 0...HTTPTransport.maxHeldRequests { wire += request([UInt8(k), 0, 0, 0]) }
        server.feed(wire)
        var out: [UInt8] = []
        while try server.next() != nil { out += server.takeOutput() }
        #expect(try responses(out) == [[]])
        #expect(server.heldRequestCount == HTTPTransport.maxHeldRequests)
    }

    private static let refusals: [(String, [UInt8])] = [
        ("GET", Array("GET /api HTTP/1.1\r\n\r\n".utf8)),
        ("no Content-Length", Array("POST /api HTTP/1.1\r\nHost: x\r\n\r\n".utf8)),
        ("chunked", Array("POST /api HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n".utf8)),
        ("not a number", Array("POST /api HTTP/1.1\r\nContent-Length: 4x\r\n\r\n".utf8)),
        ("two lengths", Array("POST /api HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\n".utf8)),
        ("too large", Array("POST /api HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n".utf8)),
        ("not HTTP/1.x", Array("POST /api HTTP/2\r\nContent-Length: 0\r\n\r\n".utf8)),
        ("no path", Array("POST api HTTP/1.1\r\nContent-Length: 0\r\n\r\n".utf8)),
        ("header line without colon", Array("POST /api HTTP/1.1\r\nContent-Length 4\r\n\r\n".utf8)),
        ("POSTX", Array("POSTX /api HTTP/1.1\r\n".utf8)),
        ("endless header", Array("POST /api HTTP/1.1\r\n".utf8) + [UInt8](repeating: 0x41, count: 9000)),
    ]

    @Test("Malformed requests are refused with a sticky typed error", arguments: refusals.indices)
    func malformedRequestsAreRefused(index: Int) {
        let (name, wire) = Self.refusals[index]
        let server = ServerTransport(maxPacketLength: 1 << 20)
        server.feed(wire)
        var first: MTProtoError?
        do { _ = try server.next() } catch { first = error }
        #expect(first != nil, "\(name) accepted")
        do { _ = try server.next(); Issue.record("\(name): not sticky") } catch { #expect(error == first) }
    }

    @Test("An MTProxy serves no HTTP")
    func proxyRefusesHTTP() {
        let server = ServerTransport(secret: SymmetricKey(data: [UInt8](repeating: 1, count: 16)))
        server.feed(request([1, 2, 3, 4]))
        #expect(throws: MTProtoError.unknownTransport) { _ = try server.next() }
    }

    @Test("The client refuses other statuses and malformed responses")
    func clientRefusals() throws {
        var rng = SplitMix64(seed: 2)
        for wire in ["HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\n", "SSH-2.0\r\n\r\n"] {
            let client = try ClientTransport(.http(host: "h"), using: &rng)
            client.feed(Array(wire.utf8))
            #expect(throws: MTProtoError.self, "\(wire)") { _ = try client.next() }
        }
        let client = try ClientTransport(.http(host: "h:1"), using: &rng)
        let req = String(decoding: try client.encode([1, 2, 3, 4], using: &rng), as: UTF8.self)
        #expect(req.hasPrefix("POST /api HTTP/1.1\r\nHost: h:1\r\n") && req.hasSuffix("Content-Length: 4\r\n\r\n\u{1}\u{2}\u{3}\u{4}"))
    }

    /// http_wait through the test server: the connection's requests are then held for max_wait, and
    /// ``TestServer/expireLongPolls(now:)`` answers them when it runs out.
    @Test func testServerHonoursHTTPWait() throws {
        let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
        var server = try TestServer(configuration: .init(handshake: .init(privateKeys: [priv], dc: 2)))
        var crng = SplitMix64(seed: 5), srng = SplitMix64(seed: 6)
        var client = try ClientConnection(transport: .http(host: "h"), handshake: .init(publicKeys: [priv.publicKey], dc: 2), using: &crng)
        server.open(1)
        var now = 1_800_000_000.0
        var toServer = try client.start(now: now, using: &crng)
        for _ in 0..<5 where !toServer.isEmpty {
            let reply = server.receive(toServer, from: 1, now: now, using: &srng)
            toServer = try client.receive(reply.send, now: now, using: &crng).send
        }
        #expect(client.session != nil)
        // A message holding only http_wait (max_wait 3000 ms): nothing to answer but new_session_created.
        let wait = OutgoingBody(ServiceMessage.httpWait(maxDelay: 0, waitAfter: 0, maxWait: 3000).encoded(), contentRelated: false)
        guard var session = client.session else { return }
        let first = try session.encrypt([wait], now: now, using: &crng).packet
        let r1 = server.receive(try client.transport.encode(first, using: &crng), from: 1, now: now, using: &srng)
        #expect(!r1.send.isEmpty)  // new_session_created answers it
        let second = try session.encrypt([wait], now: now, using: &crng).packet
        let r2 = server.receive(try client.transport.encode(second, using: &crng), from: 1, now: now, using: &srng)
        #expect(r2.send.isEmpty)  // held
        #expect(server.expireLongPolls(now: now + 2.9).isEmpty)
        now += 3
        let expired = server.expireLongPolls(now: now)
        #expect(expired.count == 1 && expired.first?.connection == 1)
        #expect(try responses(expired.first?.bytes ?? []) == [[]])
    }
}
