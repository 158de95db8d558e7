import Testing
import RampartMTProto
import RampartTestSupport

@Suite("ClientTransport ↔ ServerTransport")
struct ClientTransportTests {
    private static let kinds: [(String, ClientTransport.Kind, SymmetricKey?)] = {
        let secret = SymmetricKey(data: (0..<16).map { UInt8($0 * 3) })
        var out: [(String, ClientTransport.Kind, SymmetricKey?)] = TransportFraming.allCases.map { ("plain \($0)", .plain($0), nil) }
        for f in [TransportFraming.abridged, .intermediate, .paddedIntermediate] {
            out.append(("obfuscated2 \(f)", .obfuscated2(f, dcId: 2, secret: nil), nil))
            out.append(("obfuscated2 \(f) + secret", .obfuscated2(f, dcId: -4, secret: secret), secret))
        }
        return out
    }()

    @Test("Every plain and obfuscated kind talks to the detecting server", arguments: 0..<9)
    func loopback(index: Int) throws {
        let (_, kind, secret) = Self.kinds[index]
        var rng = SplitMix64(seed: 50 + UInt64(index))
        let client = try ClientTransport(kind, using: &rng)
        #expect(client.takeOpening() == [])
        #expect(client.isReady)
        let server = ServerTransport(secret: secret)
        for round in 0..<3 {
            let p = transportPacket(40 + 4 * round, seed: UInt64(round))
            server.feed(try client.encode(p, quickAckRequest: round == 1, using: &rng))
            let got = try server.next()
            #expect(transportStripPadding([got].compactMap { $0 }, like: [.packet(p, quickAckRequested: round == 1)])
                == [.packet(p, quickAckRequested: round == 1)])
            let r = transportPacket(64, seed: UInt64(round) + 5)
            client.feed(try server.encode(r, using: &rng) + (try server.encodeQuickAck(9)))
            #expect(transportStripPadding([try client.next()].compactMap { $0 }, like: [.packet(r, quickAckRequested: false)])
                == [.packet(r, quickAckRequested: false)])
            #expect(try client.next() == .quickAck(0x8000_0009))
        }
    }

    @Test("Fake-TLS kind: the ClientHello comes first, once, and readiness waits for the server hello")
    func fakeTLSOpening() throws {
        var rng = SplitMix64(seed: 60)
        let secret = try MTProxySecret(bytes: [0xEE] + rng.bytes(16) + Array("cloak.example".utf8))
        let a = try ClientTransport(.fakeTLS(secret, dcId: 1, unixTime: 1), using: &rng)
        let hello = a.takeOpening()
        #expect(hello.count >= 517 && hello[0] == 0x16)
        #expect(a.takeOpening() == [])
        #expect(!a.isReady)
        #expect(Array(try a.encode([0, 0, 0, 0], using: &rng).prefix(6)) == FakeTLS.changeCipherSpec)
        let b = try ClientTransport(.fakeTLS(secret, dcId: 1, unixTime: 1), using: &rng)
        let first = try b.encode([0, 0, 0, 0], using: &rng)
        let helloLength = 5 + (Int(first[3]) << 8 | Int(first[4]))
        #expect(first[0] == 0x16 && first.count > helloLength + 6)
        #expect(Array(first[helloLength..<(helloLength + 6)]) == FakeTLS.changeCipherSpec)
        #expect(b.takeOpening() == [])
    }
}
