import Testing
import RampartMTProto
import RampartTestSupport

private let g8Init = hexBytes("F5768F50B731260A46BE1027C2EEAA39350624F0B6DA59EBA56C81FE4510C2E0"
    + "B61D3DD323EE02388633E3837A0C1C24FA6F29CCD724BE6F416FF7B026F6CCE6")
private let g8Secret = SymmetricKey(data: hexBytes("8A96EF6E42A18C21837580CD1C91C5A8"))

private func obfuscatedFramings() -> [TransportFraming] { [.abridged, .intermediate, .paddedIntermediate] }

@Suite("obfuscated2 and transport detection (Docs/MTProto.md §6.5, §6.6)")
struct Obfuscated2Tests {
    // MARK: Vectors

    @Test("Vector G8: header, continued encryption stream and fresh decryption stream, with a proxy secret")
    func vectorG8() throws {
        var rng = ReplayRNG(g8Init, then: SplitMix64(seed: 99))
        let client = try Obfuscated2Codec(framing: .paddedIntermediate, dcId: 2, secret: g8Secret, using: &rng)
        #expect(client.header == Array(g8Init[0..<56]) + hexBytes("BEA2DDE16DC59DD2"))

        // The streams themselves: init with tag DDDDDDDD, dc 0200 and the two leftover random bytes.
        var initBytes = g8Init
        initBytes.replaceSubrange(56..<62, with: [0xDD, 0xDD, 0xDD, 0xDD, 0x02, 0x00])
        let keys = try Obfuscated2.deriveKeys(header: initBytes, secret: g8Secret)
        let enc = try AES.CTR(key: keys.encryptKey, counter: keys.encryptIV)
        #expect(Array(enc.process(initBytes)[56..<64]) == hexBytes("BEA2DDE16DC59DD2"))
        #expect(enc.process(Array("abcd".utf8)) == hexBytes("CA7A8226"))
        let dec = try AES.CTR(key: keys.decryptKey, counter: keys.decryptIV)
        #expect(dec.process(Array("abcd".utf8)) == hexBytes("8F711982"))

        // The server recovers the tag and the DC id from the header alone.
        let server = try Obfuscated2Codec(serverHeader: client.header, secret: g8Secret)
        #expect(server.framing == .paddedIntermediate)
        #expect(server.dcId == 2)
    }

    @Test("Vector G9: init = 64 x 0x61, secret = 16 x 0xAA, tag DDDDDDDD, dc 2")
    func vectorG9() throws {
        var rng = ReplayRNG([UInt8](repeating: 0x61, count: 64), then: SplitMix64(seed: 99))
        let secret = SymmetricKey(data: [UInt8](repeating: 0xAA, count: 16))
        let client = try Obfuscated2Codec(framing: .paddedIntermediate, dcId: 2, secret: secret, using: &rng)
        #expect(Array(client.header[56..<64]) == hexBytes("AB4162424F66FDDC"))
        #expect(Array(client.header[0..<56]) == [UInt8](repeating: 0x61, count: 56))
    }

    @Test("Key derivation without a secret: encrypt = init[8..<56], decrypt = reverse(init[8..<56])")
    func keyLayout() throws {
        let h = (0..<64).map { UInt8($0) }
        let k = try Obfuscated2.deriveKeys(header: h, secret: nil)
        k.encryptKey.withUnsafeBytes { #expect(Array($0) == Array(8..<40).map { UInt8($0) }) }
        #expect(k.encryptIV == Array(40..<56).map { UInt8($0) })
        k.decryptKey.withUnsafeBytes { #expect(Array($0) == (24..<56).reversed().map { UInt8($0) }) }
        #expect(k.decryptIV == (8..<24).reversed().map { UInt8($0) })
        let s = try Obfuscated2.deriveKeys(header: h, secret: SymmetricKey(data: [UInt8](repeating: 1, count: 16)))
        s.encryptKey.withUnsafeBytes {
            #expect(Array($0) == SHA256.hash(data: Array(8..<40).map { UInt8($0) } + [UInt8](repeating: 1, count: 16)).bytes)
        }
        #expect(throws: MTProtoError.invalidFrame("obfuscated2 header of 63 bytes")) { try Obfuscated2.deriveKeys(header: h.dropLast(), secret: nil) }
        #expect(throws: MTProtoError.invalidProxySecret("key of 15 bytes")) {
            try Obfuscated2.deriveKeys(header: h, secret: SymmetricKey(data: [UInt8](repeating: 1, count: 15)))
        }
    }

    // MARK: Header generation

    @Test("Forbidden headers (§6.6 step 1) are redrawn")
    func forbiddenRedrawn() throws {
        func candidate(_ first8: [UInt8]) -> [UInt8] { first8 + [UInt8](repeating: 0x42, count: 56) }
        let forbidden: [[UInt8]] = [
            [0xEF, 1, 2, 3, 4, 5, 6, 7],
            Array("HEAD".utf8) + [1, 1, 1, 1], Array("POST".utf8) + [1, 1, 1, 1],
            Array("GET ".utf8) + [1, 1, 1, 1], Array("OPTI".utf8) + [1, 1, 1, 1],
            [0x16, 0x03, 0x01, 0x02, 1, 1, 1, 1], [0xDD, 0xDD, 0xDD, 0xDD, 1, 1, 1, 1],
            [0xEE, 0xEE, 0xEE, 0xEE, 1, 1, 1, 1], [1, 2, 3, 4, 0, 0, 0, 0],
        ]
        for f in forbidden { #expect(Obfuscated2.isForbidden(header: candidate(f))) }
        let good = candidate([0x16, 0x03, 0x01, 0x03, 0, 0, 0, 1])
        #expect(!Obfuscated2.isForbidden(header: good))
        var rng = ReplayRNG(forbidden.flatMap(candidate) + good, then: SplitMix64(seed: 99))
        let c = try Obfuscated2Codec(framing: .intermediate, using: &rng)
        #expect(Array(c.header[0..<56]) == Array(good[0..<56]))
        // Without the check (fake-TLS mode) the first draw is used as is.
        var rng2 = ReplayRNG(candidate(forbidden[0]), then: SplitMix64(seed: 99))
        let c2 = try Obfuscated2Codec(framing: .intermediate, checkForbidden: false, using: &rng2)
        #expect(c2.header[0] == 0xEF)
    }

    @Test("Generated headers are never forbidden and never detected as another transport")
    func generatedHeaders() throws {
        var rng = SplitMix64(seed: 20)
        for i in 0..<2000 {
            let c = try Obfuscated2Codec(framing: obfuscatedFramings()[i % 3], dcId: Int16(truncatingIfNeeded: i), using: &rng)
            #expect(!Obfuscated2.isForbidden(header: c.header))
            #expect(try TransportDetector.detect(c.header) == .obfuscated2)
        }
    }

    @Test("DC ids round-trip as int16 LE (media DC 4 = FC FF, test DCs +10000); full cannot be obfuscated")
    func dcIds() throws {
        var rng = SplitMix64(seed: 21)
        for dc: Int16 in [1, 2, -4, 10_002, -10_005, .min, .max] {
            let c = try Obfuscated2Codec(framing: .intermediate, dcId: dc, using: &rng)
            let s = try Obfuscated2Codec(serverHeader: c.header)
            #expect(s.dcId == dc)
            #expect(s.framing == .intermediate)
        }
        #expect(throws: MTProtoError.invalidFrame("the full transport cannot be obfuscated")) {
            try Obfuscated2Codec(framing: .full, using: &rng)
        }
    }

    // MARK: Round trips

    @Test("Client ↔ server round trip through ServerTransport, with and without a proxy secret",
          arguments: [false, true], TransportSplit.allCases)
    func roundTrip(withSecret: Bool, split: TransportSplit) throws {
        var rng = SplitMix64(seed: withSecret ? 22 : 23)
        let secret = withSecret ? SymmetricKey(data: rng.bytes(16)) : nil
        for framing in obfuscatedFramings() {
            let client = try Obfuscated2Codec(framing: framing, dcId: -2, secret: secret, using: &rng)
            let server = ServerTransport(secret: secret)
            var up: [UInt8] = []
            var sent: [TransportEvent] = []
            for (i, n) in [0, 4, 16, 40, 128, 504, 508, 1024, 5000].enumerated() {
                let p = transportPacket(n, seed: UInt64(n))
                up += try client.encode(p, quickAckRequest: i % 2 == 0, using: &rng)
                sent.append(.packet(p, quickAckRequested: i % 2 == 0))
            }
            var got: [TransportEvent] = []
            for c in split.chunks(up, rng: &rng) {
                server.feed(c)
                while let e = try server.next() { got.append(e) }
            }
            #expect(transportStripPadding(got, like: sent) == sent)
            #expect(server.detected == .obfuscated2)
            #expect(server.framing == framing)
            #expect(server.dcId == -2)

            var down: [UInt8] = []
            var replies: [TransportEvent] = []
            for n in [16, 40, 1000] {
                let p = transportPacket(n, seed: UInt64(n) + 7)
                down += try server.encode(p, using: &rng)
                replies.append(.packet(p, quickAckRequested: false))
            }
            down += try server.encodeQuickAck(0x0102_0304)
            replies.append(.quickAck(0x8102_0304))
            down += try server.encodeTransportError(-444, using: &rng)
            replies.append(.transportError(-444))
            var back: [TransportEvent] = []
            for c in split.chunks(down, rng: &rng) {
                client.feed(c)
                while let e = try client.next() { back.append(e) }
            }
            #expect(transportStripPadding(back, like: replies) == replies)
        }
    }

    @Test("takeHeader() hands out the header once; encode() then no longer prepends it")
    func takeHeader() throws {
        var rng = SplitMix64(seed: 24)
        let c = try Obfuscated2Codec(framing: .intermediate, using: &rng)
        #expect(c.takeHeader() == c.header)
        #expect(c.takeHeader() == [])
        #expect(try c.encode([1, 2, 3, 4], using: &rng).count == 8)
    }

    @Test("A wrong proxy secret or a random header is rejected by the server, sticky")
    func wrongSecret() throws {
        var rng = SplitMix64(seed: 25)
        let c = try Obfuscated2Codec(framing: .intermediate, secret: SymmetricKey(data: [UInt8](repeating: 1, count: 16)), using: &rng)
        #expect(throws: MTProtoError.invalidFrame("obfuscated2 header carries no known protocol tag")) {
            try Obfuscated2Codec(serverHeader: c.header, secret: SymmetricKey(data: [UInt8](repeating: 2, count: 16)))
        }
        #expect(throws: MTProtoError.invalidFrame("obfuscated2 header carries no known protocol tag")) {
            try Obfuscated2Codec(serverHeader: c.header)
        }
        let server = ServerTransport(secret: SymmetricKey(data: [UInt8](repeating: 2, count: 16)))
        server.feed(try c.encode(d3Like(), using: &rng))
        for _ in 0..<2 {
            #expect(throws: MTProtoError.invalidFrame("obfuscated2 header carries no known protocol tag")) { try server.next() }
        }
        #expect(server.detected == nil)
    }

    // MARK: Detection

    @Test("Detection from the first bytes (§6.5): tags, full, obfuscated2, POST as HTTP, other methods and TLS refused")
    func detection() throws {
        #expect(try TransportDetector.detect([UInt8]()) == nil)
        #expect(try TransportDetector.detect([0xEF]) == .plain(.abridged))
        #expect(try TransportDetector.detect([0xEE, 0xEE, 0xEE]) == nil)
        #expect(try TransportDetector.detect([0xEE, 0xEE, 0xEE, 0xEE]) == .plain(.intermediate))
        #expect(try TransportDetector.detect([0xDD, 0xDD, 0xDD, 0xDD]) == .plain(.paddedIntermediate))
        #expect(try TransportDetector.detect([0x34, 0, 0, 0, 0, 0, 0]) == nil)
        #expect(try TransportDetector.detect([0x34, 0, 0, 0, 0, 0, 0, 0]) == .plain(.full))
        #expect(try TransportDetector.detect([0x34, 0, 0, 0, 0, 0, 0, 1]) == .obfuscated2)
        #expect(try TransportDetector.detect(Array("POST /api".utf8)) == .http)
        for opening in ["HEAD /", "GET / HTTP/1.1", "OPTIONS"] {
            #expect(throws: MTProtoError.unknownTransport) { try TransportDetector.detect(Array(opening.utf8)) }
        }
        #expect(throws: MTProtoError.unknownTransport) { try TransportDetector.detect([0x16, 0x03, 0x01, 0x02, 0x00]) }
    }

    @Test("ServerTransport serves every plain framing, tag included, and answers in it",
          arguments: TransportFraming.allCases, TransportSplit.allCases)
    func serverPlain(framing: TransportFraming, split: TransportSplit) throws {
        var rng = SplitMix64(seed: 26)
        var enc = TransportEncoder(framing: framing, role: .client)
        var up: [UInt8] = []
        var sent: [TransportEvent] = []
        for n in [40, 0, 8, 600] {
            let p = transportPacket(n, seed: UInt64(n))
            up += try enc.encode(p, using: &rng)
            sent.append(.packet(p, quickAckRequested: false))
        }
        let server = ServerTransport()
        #expect(throws: MTProtoError.unknownTransport) { try server.encode([0, 0, 0, 0], using: &rng) }
        var got: [TransportEvent] = []
        for c in split.chunks(up, rng: &rng) {
            server.feed(c)
            while let e = try server.next() { got.append(e) }
        }
        #expect(transportStripPadding(got, like: sent) == sent)
        #expect(server.detected == .plain(framing))
        var dec = TransportDecoder(framing: framing, role: .client)
        dec.feed(try server.encode(transportPacket(64, seed: 1), using: &rng))
        dec.feed(try server.encodeQuickAck(5))
        dec.feed(try server.encodeTransportError(-404, using: &rng))
        let replies = [TransportEvent.packet(transportPacket(64, seed: 1), quickAckRequested: false), .quickAck(0x8000_0005),
                       .transportError(-404)]
        var back: [TransportEvent] = []
        while let e = try dec.next() { back.append(e) }
        #expect(transportStripPadding(back, like: replies) == replies)
    }

    @Test("ServerTransport refuses HTTP openings, sticky, and keeps its bytes")
    func serverGarbage() throws {
        let server = ServerTransport()
        server.feed(Array("GET / HTTP/1.1\r\n".utf8))
        for _ in 0..<2 { #expect(throws: MTProtoError.unknownTransport) { try server.next() } }
        #expect(server.detected == nil)
    }
}

/// A 40-byte packet.
private func d3Like() -> [UInt8] { transportPacket(40, seed: 40) }
