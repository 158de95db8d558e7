// The server side of fake-TLS (Docs/MTProto.md §6.7): the ClientHello check against the client's own hello, the
// server hello the client verifies, and the test server behind an `ee` secret with the Swift client:
// handshake and ping, a replayed ClientHello, a stale timestamp, a wrong secret.

import Testing
@testable import RampartMTProto
@testable import RampartMTProtoServer
import RampartTestSupport

private let domain = Array("example.com".utf8)
private let key = SymmetricKey(data: (0..<16).map { UInt8($0 * 17) })
private let secret = try! MTProxySecret(bytes: [0xEE] + (0..<16).map { UInt8($0 * 17) } + domain)

@Suite struct FakeTLSServerTests {
    @Test func clientHelloAndServerHelloCheckEachOther() throws {
        var rng = SplitMix64(seed: 1)
        let now: UInt32 = 1_800_000_000
        let (hello, random) = FakeTLS.makeClientHello(domain: domain, secret: key, unixTime: now, using: &rng)
        let checked = try #require(try FakeTLS.verifyClientHello(hello, secret: key, unixTime: Int64(now) + 30))
        #expect(checked.length == hello.count && checked.clientRandom == random)
        // Partial input: nil until the record is complete.
        #expect(try FakeTLS.verifyClientHello(hello.prefix(100), secret: key, unixTime: Int64(now)) == nil)
        // Another secret, a flipped byte, a time outside the window: refused.
        let other = SymmetricKey(data: [UInt8](repeating: 1, count: 16))
        #expect(throws: MTProtoError.self) { _ = try FakeTLS.verifyClientHello(hello, secret: other, unixTime: Int64(now)) }
        var bad = hello
        bad[200] ^= 1
        #expect(throws: MTProtoError.self) { _ = try FakeTLS.verifyClientHello(bad, secret: key, unixTime: Int64(now)) }
        #expect(throws: MTProtoError.self) { _ = try FakeTLS.verifyClientHello(hello, secret: key, unixTime: Int64(now) - 601) }
        #expect(throws: MTProtoError.self) { _ = try FakeTLS.verifyClientHello(hello, secret: key, unixTime: Int64(now) + 1201) }
        #expect(try FakeTLS.verifyClientHello(hello, secret: key, unixTime: Int64(now) + 1200) != nil)
        #expect(throws: MTProtoError.self) { _ = try FakeTLS.verifyClientHello([0x17, 0x03, 0x03], secret: key, unixTime: 0) }
        // The server's answer passes the client's check, and only for this client_random.
        let answer = FakeTLS.makeServerHello(clientHello: hello, clientRandom: random, secret: key, using: &rng)
        #expect(try FakeTLS.verifyServerHello(answer, clientRandom: random, secret: key) == answer.count)
        #expect(throws: MTProtoError.self) { _ = try FakeTLS.verifyServerHello(answer, clientRandom: [UInt8](repeating: 0, count: 32), secret: key) }
        // The session id is echoed.
        #expect(Array(answer[44..<76]) == Array(hello[44..<76]) && answer[43] == 32)
    }

    /// A Swift fake-TLS client through a TestServer with an ee secret: handshake, ping, rpc_error.
    @Test func swiftClientThroughTheServer() throws {
        let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
        var conf = TestServer.Configuration(handshake: .init(privateKeys: [priv], dc: 2), proxySecret: key)
        conf.proxyFakeTLS = true
        var server = try TestServer(configuration: conf)
        let now = 1_800_000_000.0
        var crng = SplitMix64(seed: 2), srng = SplitMix64(seed: 3)
        func run(_ kind: ClientTransport.Kind, id: Int, replay: [UInt8]? = nil) throws -> (events: [ClientConnection.Event], log: [String], first: [UInt8]) {
            var client = try ClientConnection(transport: kind, handshake: .init(publicKeys: [priv.publicKey], dc: 2), using: &crng)
            server.open(id)
            var events: [ClientConnection.Event] = []
            var log: [String] = []
            var toServer = try replay ?? client.start(now: now, using: &crng)
            let first = toServer
            for _ in 0..<10 where !toServer.isEmpty {
                let reply = server.receive(toServer, from: id, now: now, using: &srng)
                log += reply.log
                if reply.close { break }
                let (back, ev) = try client.receive(reply.send, now: now, using: &crng)
                events += ev
                toServer = back
                if ev.contains(where: { if case .handshakeCompleted = $0 { true } else { false } }) {
                    var w = TLWriter()
                    w.constructor(ServiceConstructor.ping)
                    w.int64(77)
                    toServer += try client.send(w.bytes, now: now, using: &crng).bytes
                }
            }
            return (events, log, first)
        }
        let good = try run(.fakeTLS(secret, dcId: 2, unixTime: UInt32(now)), id: 1)
        #expect(good.events.contains { if case .handshakeCompleted = $0 { true } else { false } }, "\(good.log)")
        #expect(good.events.contains { if case .message(let m) = $0, case .pong(_, 77)? = try? m.decoded() { true } else { false } })
        #expect(good.log.contains("connection 1: fake-TLS ClientHello verified") && good.log.contains("connection 1: transport fake-tls dc 2"))
        // The same ClientHello again (a replay): refused.
        let replayed = try run(.fakeTLS(secret, dcId: 2, unixTime: UInt32(now)), id: 2, replay: good.first)
        #expect(replayed.log.contains { $0.contains("seen before (a replay)") }, "\(replayed.log)")
        // A client whose clock is an hour off, and a client with another secret: refused.
        let stale = try run(.fakeTLS(secret, dcId: 2, unixTime: UInt32(now) - 3600), id: 3)
        #expect(stale.log.contains { $0.contains("outside the window") }, "\(stale.log)")
        let wrong = try MTProxySecret(bytes: [0xEE] + [UInt8](repeating: 9, count: 16) + domain)
        let stranger = try run(.fakeTLS(wrong, dcId: 2, unixTime: UInt32(now)), id: 4)
        #expect(stranger.log.contains { $0.contains("digest mismatch") }, "\(stranger.log)")
        // Plain obfuscated2 behind an ee secret: refused.
        let plain = try run(.obfuscated2(.paddedIntermediate, dcId: 2, secret: key), id: 5)
        #expect(plain.log.contains { $0.contains("match no known transport") }, "\(plain.log)")
    }
}
