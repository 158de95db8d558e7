// The test server's limits, driven in memory: the auth-key eviction policy (LRU bound, idle expiry,
// temporary-key expiry), the RSA rate limits per address and global, and the accounting of bytes a
// connection holds in an incomplete frame.

import Testing
@testable import RampartMTProto
@testable import RampartMTProtoServer
import RampartTestSupport

/// A server with tweaked limits and clients that run whole handshakes against it.
private struct LimitHarness {
    var server: TestServer
    let publicKey: RSA.PublicKey
    var srng = SplitMix64(seed: 91)
    var nextId = 1

    /// One client connection and what happened on it.
    struct Client {
        var connection: ClientConnection
        var rng: SplitMix64
        let id: TestServerConnectionID
        var result: HandshakeResult?
        var log: [String] = []
        var closed = false
        var transportErrors: [Int32] = []
        var pongs = 0
    }

    init(_ tweak: (inout TestServer.Configuration) -> Void) throws {
        let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
        var conf = TestServer.Configuration(handshake: .init(privateKeys: [priv], dc: 2))
        tweak(&conf)
        server = try TestServer(configuration: conf)
        publicKey = priv.publicKey
    }

    /// Relays between `c` and the server until both are quiet or the server closes.
    mutating func pump(_ c: inout Client, _ bytes: [UInt8], now: Double) throws {
        var toServer = bytes
        for _ in 0..<10 where !toServer.isEmpty && !c.closed {
            let reply = server.receive(toServer, from: c.id, now: now, using: &srng)
            c.log += reply.log
            c.closed = reply.close
            let (back, events) = try c.connection.receive(reply.send, now: now, using: &c.rng)
            for e in events {
                switch e {
                case .handshakeCompleted(let r): c.result = r
                case .transportError(let code): c.transportErrors.append(code)
                case .message(let m): if case .pong? = try? m.decoded() { c.pongs += 1 }
                case .quickAck, .request, .temporaryKeyBound, .keyLost: break
                }
            }
            toServer = back
        }
    }

    /// A new connection from `address` that runs the handshake at `now`.
    mutating func handshake(from address: String?, now: Double,
                            mode: ClientHandshake.Mode = .permanent) throws -> Client {
        let id = nextId
        nextId += 1
        var rng = SplitMix64(seed: UInt64(id) &* 31 &+ 7)
        let conn = try ClientConnection(transport: .plain(.intermediate),
                                        handshake: .init(publicKeys: [publicKey], dc: 2, mode: mode), using: &rng)
        server.open(id, address: address)
        var c = Client(connection: conn, rng: rng, id: id)
        try pump(&c, try c.connection.start(now: now, using: &c.rng), now: now)
        return c
    }

    /// Sends a ping on `c` at `now`; true when the pong came back.
    mutating func ping(_ c: inout Client, now: Double) throws -> Bool {
        var w = TLWriter()
        w.constructor(ServiceConstructor.ping)
        w.int64(42)
        let before = c.pongs
        let (bytes, _) = try c.connection.send(w.bytes, now: now, using: &c.rng)
        try pump(&c, bytes, now: now)
        return c.pongs > before
    }
}

private let t0 = 1_800_000_000.0

@Test func keyEvictionDropsTheLeastRecentlyUsedKey() throws {
    var h = try LimitHarness { $0.keyEviction = .init(maxKeys: 2, idleLifetime: nil) }
    var a = try h.handshake(from: "127.0.0.1", now: t0)
    var b = try h.handshake(from: "127.0.0.1", now: t0 + 1)
    #expect(a.result != nil && b.result != nil)
    // Using a makes b the least recently used key.
    #expect(try h.ping(&a, now: t0 + 2))
    var c = try h.handshake(from: "127.0.0.1", now: t0 + 3)
    #expect(c.result != nil)
    #expect(h.server.keyCount == 2)
    #expect(h.server.keysCreated == 3 && h.server.keysEvicted == 1)
    let evicted = try #require(b.result?.authKey.id)
    #expect(c.log.contains { $0.contains("auth key \(hex64(evicted)) evicted (least recently used") }, "\(c.log)")
    #expect(h.server.binding(ofKey: evicted) == nil)
    // a and c still work; b's key is gone: −404 and the connection closed.
    #expect(try h.ping(&a, now: t0 + 4))
    #expect(try h.ping(&c, now: t0 + 4))
    #expect(try !h.ping(&b, now: t0 + 4))
    #expect(b.transportErrors == [-404] && b.closed)
}

@Test func keyEvictionForgetsIdleAndExpiredKeys() throws {
    var h = try LimitHarness { $0.keyEviction = .init(maxKeys: 100, idleLifetime: 60) }
    var a = try h.handshake(from: nil, now: t0)
    let b = try h.handshake(from: nil, now: t0)
    let temp = try h.handshake(from: nil, now: t0, mode: .temporary(expiresIn: 30))
    #expect(a.result != nil && b.result != nil && temp.result?.expiresIn == 30)
    #expect(h.server.keyCount == 3)
    #expect(try h.ping(&a, now: t0 + 50))  // a used at t0 + 50
    // At t0 + 40 the temporary key has expired; nothing is idle for 60 s yet.
    var log = h.server.sweep(now: t0 + 40)
    #expect(log.count == 1 && log[0].contains("temporary key expired"), "\(log)")
    #expect(h.server.keyCount == 2)
    // At t0 + 100, b (unused since t0) goes; a (used 50 s ago) stays.
    let bId = try #require(b.result?.authKey.id)
    log = h.server.sweep(now: t0 + 100)
    #expect(log.count == 1 && log[0].contains(hex64(bId)), "\(log)")
    #expect(h.server.keyCount == 1 && h.server.keysEvicted == 2)
    // A key found idle on use is forgotten at once, without a sweep: −404.
    #expect(try !h.ping(&a, now: t0 + 200))
    #expect(a.transportErrors == [-404] && a.closed)
    #expect(a.log.contains { $0.contains("forgotten (unused for 150 s)") }, "\(a.log)")
    #expect(h.server.keyCount == 0)
}

@Test func rsaOperationsAreRateLimitedPerAddress() throws {
    var h = try LimitHarness {
        $0.rsaLimitPerAddress = .init(perSecond: 1, burst: 2)
        $0.rsaLimitGlobal = nil
    }
    // A burst of two, then −429 and a close before any RSA work.
    #expect(try h.handshake(from: "10.0.0.1", now: t0).result != nil)
    #expect(try h.handshake(from: "10.0.0.1", now: t0).result != nil)
    let refused = try h.handshake(from: "10.0.0.1", now: t0 + 0.5)
    #expect(refused.result == nil && refused.closed && refused.transportErrors == [-429])
    #expect(refused.log.contains { $0.contains("RSA rate limit exceeded from 10.0.0.1") }, "\(refused.log)")
    #expect(h.server.rsaOperations == 2 && h.server.rsaRefusals == 1)
    // Another address has its own bucket.
    #expect(try h.handshake(from: "10.0.0.2", now: t0 + 0.5).result != nil)
    // One token a second: one more handshake at t0 + 1.5, not two.
    #expect(try h.handshake(from: "10.0.0.1", now: t0 + 1.5).result != nil)
    #expect(try h.handshake(from: "10.0.0.1", now: t0 + 1.5).result == nil)
    // A clock that goes back earns nothing.
    #expect(try h.handshake(from: "10.0.0.1", now: t0 - 100).result == nil)
    #expect(h.server.rsaOperations == 4 && h.server.rsaRefusals == 3)
    // Buckets that are full again are dropped by the sweep; the limit still applies afterwards.
    _ = h.server.sweep(now: t0 + 100)
    #expect(try h.handshake(from: "10.0.0.1", now: t0 + 100).result != nil)
}

@Test func rsaOperationsHaveAGlobalBudget() throws {
    var h = try LimitHarness {
        $0.rsaLimitPerAddress = nil
        $0.rsaLimitGlobal = .init(perSecond: 1, burst: 1)
    }
    #expect(try h.handshake(from: "10.0.0.1", now: t0).result != nil)
    let other = try h.handshake(from: "10.0.0.2", now: t0)
    #expect(other.result == nil && other.transportErrors == [-429])
    #expect(try h.handshake(from: "10.0.0.2", now: t0 + 1).result != nil)
}

@Test func rateLimitDefaultsLeaveRoomForTestClients() throws {
    let conf = TestServer.Configuration(handshake: .init(privateKeys: [try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)]))
    #expect(conf.keyEviction == .init(maxKeys: 1024, idleLifetime: 3600))
    #expect(conf.rsaLimitPerAddress == .init(perSecond: 20, burst: 40))
    #expect(conf.rsaLimitGlobal == .init(perSecond: 50, burst: 50))
    // Out-of-range values are clamped, not trapped on.
    #expect(TestServer.RateLimit(perSecond: -1, burst: 0) == .init(perSecond: 0, burst: 1))
    #expect(TestServer.RateLimit(perSecond: .nan, burst: .infinity) == .init(perSecond: 0, burst: 1))
    #expect(TestServer.KeyEviction(maxKeys: 0).maxKeys == 1)
}

@Test func bufferedBytesOfAnIncompleteFrameAreCountedAndReleased() throws {
    var h = try LimitHarness { $0.maxPacketLength = 200_000 }
    var rng = SplitMix64(seed: 3)
    var hs = ClientHandshake(configuration: .init(publicKeys: [h.publicKey], dc: 2))
    var ids = MessageIDGenerator(role: .client)
    // One intermediate frame of 100 000 bytes: req_pq_multi followed by junk (allowed trailing bytes).
    var packet = UnencryptedMessage.encode(msgId: ids.next(now: t0), body: hs.start(using: &rng))
    packet += [UInt8](repeating: 0x5A, count: 100_000 - packet.count)
    var frame: [UInt8] = [0xEE, 0xEE, 0xEE, 0xEE]
    for k in 0..<4 { frame.append(UInt8(truncatingIfNeeded: 100_000 >> (8 * k))) }
    frame += packet
    h.server.open(1, address: "127.0.0.1")
    #expect(h.server.bufferedByteCount(of: 1) == 0)
    #expect(h.server.bufferedByteCount(of: 99) == 0)
    var r = h.server.receive(Array(frame[0..<60_008]), from: 1, now: t0, using: &h.srng)
    #expect(!r.close && r.send.isEmpty)
    // The frame so far (the 4-byte tag is consumed once the decoder has checked it).
    #expect((60_004...60_008).contains(h.server.bufferedByteCount(of: 1)))
    // The rest completes the frame: answered (resPQ), nothing held any more.
    r = h.server.receive(Array(frame[60_008...]), from: 1, now: t0, using: &h.srng)
    #expect(!r.close && !r.send.isEmpty, "\(r.log)")
    #expect(h.server.bufferedByteCount(of: 1) == 0)
    // A header announcing more than maxPacketLength closes the connection before the body arrives.
    h.server.open(2)
    var big: [UInt8] = [0xEE, 0xEE, 0xEE, 0xEE]
    for k in 0..<4 { big.append(UInt8(truncatingIfNeeded: 300_000 >> (8 * k))) }
    r = h.server.receive(big + [UInt8](repeating: 0, count: 1000), from: 2, now: t0, using: &h.srng)
    #expect(r.close && r.log.contains { $0.contains("transport error") }, "\(r.log)")
    #expect(h.server.bufferedByteCount(of: 2) == 0)
}
