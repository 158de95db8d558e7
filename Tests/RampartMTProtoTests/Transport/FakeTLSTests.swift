import Foundation
import Testing
import RampartMTProto
import RampartTestSupport

/// Vector G10's secret: 00 … 00 01 (16 bytes).
private let g10Secret = SymmetricKey(data: [UInt8](repeating: 0, count: 15) + [1])

/// A capture as bytes, from `Vectors/mtproto_<name>` (nil, with a recorded failure, when it is missing).
private func fakeTLSCapture(_ name: String) -> [UInt8]? {
    guard let d = FileManager.default.contents(atPath: projectRoot + "/Vectors/mtproto_" + name) else {
        Issue.record("Vectors/mtproto_\(name) is missing")
        return nil
    }
    let text = String(decoding: d, as: UTF8.self).filter { $0.isHexDigit }
    return hexBytes(text)
}

private let g10Captures: [(file: String, clientRandom: String, appData: Int)] = [
    ("faketls_server_hello_alexbers.hex", "A132E3916083B314C1B974D05785E8EE70456E5F866D9657D50A5C08EA38318E", 4148),
    ("faketls_server_hello_mtgv2.hex", "CA36BBA833809A33AA627EBB5A32A10102D1A61E1E6C58A461D934574D2E2EA3", 1472),
]

/// A server hello as a fake-TLS proxy would send it, for `clientRandom` under `secret`.
private func makeServerHello(clientRandom: [UInt8], secret: SymmetricKey, rng: inout SplitMix64) -> [UInt8] {
    var body = rng.bytes(122)
    body.replaceSubrange(6..<38, with: repeatElement(0, count: 32))  // record offset 11..<43
    let appData = rng.bytes(300)
    var r: [UInt8] = [0x16, 0x03, 0x03, 0x00, 122] + body + FakeTLS.changeCipherSpec
        + [0x17, 0x03, 0x03, UInt8(appData.count >> 8), UInt8(appData.count & 0xFF)] + appData
    let mac = HMAC<SHA256>.authenticationCode(for: clientRandom + r, using: secret).bytes
    r.replaceSubrange(11..<43, with: mac)
    return r
}

/// Splits a client's fake-TLS output into record payloads, skipping ChangeCipherSpec.
private func appDataPayloads(_ bytes: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    var i = 0
    while i + 5 <= bytes.count {
        let n = Int(bytes[i + 3]) << 8 | Int(bytes[i + 4])
        #expect(bytes[i + 1] == 0x03 && bytes[i + 2] == 0x03)
        if bytes[i] == 0x17 {
            #expect(n <= FakeTLS.maxRecordPayload)
            out += bytes[(i + 5)..<(i + 5 + n)]
        } else {
            #expect(bytes[i] == 0x14 && n == 1)
        }
        i += 5 + n
    }
    #expect(i == bytes.count)
    return out
}

@Suite("Fake-TLS client (Docs/MTProto.md §6.7) and MTProxy secrets")
struct FakeTLSTests {
    @Test("Vector G10: both real proxy server hellos verify with their client_random", arguments: [0, 1])
    func vectorG10(index: Int) throws {
        let c = g10Captures[index]
        guard let capture = fakeTLSCapture(c.file) else { return }
        let clientRandom = hexBytes(c.clientRandom)
        #expect(capture.count == 5 + 122 + 6 + 5 + c.appData)
        #expect(try FakeTLS.verifyServerHello(capture, clientRandom: clientRandom, secret: g10Secret) == capture.count)
        // Extra bytes after the response are left for the record layer.
        #expect(try FakeTLS.verifyServerHello(capture + [0x17, 0x03], clientRandom: clientRandom, secret: g10Secret) == capture.count)
        // Any prefix waits for more.
        for cut in stride(from: 0, to: capture.count, by: 97) {
            #expect(try FakeTLS.verifyServerHello(capture[..<cut], clientRandom: clientRandom, secret: g10Secret) == nil)
        }
        // Another client random, another secret, or any changed byte of the digest or the body fails.
        var other = clientRandom
        other[0] ^= 1
        #expect(throws: MTProtoError.fakeTLSFailed("server hello digest mismatch")) {
            try FakeTLS.verifyServerHello(capture, clientRandom: other, secret: g10Secret)
        }
        #expect(throws: MTProtoError.fakeTLSFailed("server hello digest mismatch")) {
            try FakeTLS.verifyServerHello(capture, clientRandom: clientRandom, secret: SymmetricKey(data: [UInt8](repeating: 0, count: 16)))
        }
        for i in [11, 42, 50, 126, capture.count - 1] {
            var bad = capture
            bad[i] ^= 0x01
            #expect(throws: MTProtoError.fakeTLSFailed("server hello digest mismatch")) {
                try FakeTLS.verifyServerHello(bad, clientRandom: clientRandom, secret: g10Secret)
            }
        }
        for i in [0, 1, 2, 127, 128, 132, 133, 135] {  // record headers
            var bad = capture
            bad[i] ^= 0x01
            #expect(throws: MTProtoError.fakeTLSFailed("unexpected bytes in the server hello")) {
                try FakeTLS.verifyServerHello(bad, clientRandom: clientRandom, secret: g10Secret)
            }
        }
    }

    @Test("ClientHello passes the proxy-side checks: layout, SNI, session id, cipher suite, HMAC and timestamp")
    func clientHello() throws {
        var rng = SplitMix64(seed: 30)
        let secret = SymmetricKey(data: rng.bytes(16))
        let domain = Array("www.example.com".utf8)
        for time: UInt32 in [0, 1_700_000_000, 0xFFFF_FFFF] {
            let (hello, clientRandom) = FakeTLS.makeClientHello(domain: domain, secret: secret, unixTime: time, using: &rng)
            #expect(hello.count >= 517)
            #expect(Array(hello[0..<3]) == [0x16, 0x03, 0x01])
            #expect(Int(hello[3]) << 8 | Int(hello[4]) == hello.count - 5)
            #expect(hello[5] == 0x01)
            #expect(Int(hello[6]) << 16 | Int(hello[7]) << 8 | Int(hello[8]) == hello.count - 9)
            #expect(Array(hello[9..<11]) == [0x03, 0x03])
            #expect(Array(hello[11..<43]) == clientRandom)
            #expect(hello[43] == 0x20)
            #expect(Array(hello[76..<78]) == [0x00, 0x20])
            #expect(hello[78] & 0x0F == 0x0A && hello[78] == hello[79])  // GREASE
            #expect(Array(hello[80..<82]) == [0x13, 0x01])
            #expect(hello.indices.contains { Array(hello[$0..<min(hello.count, $0 + domain.count)]) == domain })

            // Extensions: a well-formed list that fills the record exactly.
            var i = 80 + 30 + 2  // after the suites and the compression methods
            let extEnd = i + 2 + (Int(hello[i]) << 8 | Int(hello[i + 1]))
            #expect(extEnd == hello.count)
            i += 2
            var types: [UInt16] = []
            while i + 4 <= extEnd {
                types.append(UInt16(hello[i]) << 8 | UInt16(hello[i + 1]))
                i += 4 + (Int(hello[i + 2]) << 8 | Int(hello[i + 3]))
            }
            #expect(i == extEnd)
            #expect(types.count == 18)
            for t in [0x0000, 0x0005, 0x000A, 0x000B, 0x000D, 0x0010, 0x0012, 0x0017, 0x001B, 0x0023, 0x002B, 0x002D,
                      0x0033, 0x44CD, 0xFE0D, 0xFF01] as [UInt16] {
                #expect(types.contains(t))
            }
            #expect(types.first! & 0x0F0F == 0x0A0A && types.last! & 0x0F0F == 0x0A0A)

            // The proxy's digest check (Docs/MTProto.md §6.7).
            var zeroed = hello
            zeroed.replaceSubrange(11..<43, with: repeatElement(0, count: 32))
            let mac = HMAC<SHA256>.authenticationCode(for: zeroed, using: secret).bytes
            #expect(Array(mac[0..<28]) == Array(clientRandom[0..<28]))
            var ts: UInt32 = 0
            for k in 0..<4 {
                let byte: UInt8 = mac[28 + k] ^ clientRandom[28 + k]
                ts |= UInt32(byte) << UInt32(8 * k)
            }
            #expect(ts == time)
        }
    }

    @Test("Client ↔ proxy round trip: server hello check, CCS, records of at most 2878 bytes, obfuscated2 inside",
          arguments: TransportSplit.allCases)
    func roundTrip(split: TransportSplit) throws {
        var rng = SplitMix64(seed: 31)
        let secret = try MTProxySecret(bytes: [0xEE] + rng.bytes(16) + Array("cloak.example".utf8))
        let client = try FakeTLSClient(secret: secret, dcId: 3, unixTime: 1_700_000_000, using: &rng)
        #expect(client.clientHello.count >= 517)

        // Client → proxy, before and after the server hello.
        var sent: [TransportEvent] = []
        var up: [UInt8] = []
        for n in [40, 5000, 8] {
            let p = transportPacket(n, seed: UInt64(n))
            up += try client.encode(p, using: &rng)
            sent.append(.packet(p, quickAckRequested: false))
        }
        #expect(Array(up.prefix(6)) == FakeTLS.changeCipherSpec)
        let stream = appDataPayloads(up)
        let server = try Obfuscated2Codec(serverHeader: stream.prefix(64), secret: secret.key)
        #expect(server.framing == .paddedIntermediate)
        #expect(server.dcId == 3)
        server.feed(stream.dropFirst(64))
        var got: [TransportEvent] = []
        while let e = try server.next() { got.append(e) }
        #expect(transportStripPadding(got, like: sent) == sent)

        // Proxy → client: the server hello, then records (and a stray CCS).
        var down = makeServerHello(clientRandom: client.clientRandom, secret: secret.key, rng: &rng)
        var replies: [TransportEvent] = []
        down += FakeTLS.changeCipherSpec
        for n in [16, 3000] {
            let p = transportPacket(n, seed: UInt64(n) + 9)
            let data = try server.encode(p, using: &rng)
            down += [0x17, 0x03, 0x03, UInt8(data.count >> 8), UInt8(data.count & 0xFF)] + data
            replies.append(.packet(p, quickAckRequested: false))
        }
        let ack = server.encodeQuickAck(77)
        down += [0x17, 0x03, 0x03, 0x00, 0x02] + ack[0..<2] + [0x17, 0x03, 0x03, 0x00, 0x02] + ack[2..<4]
        replies.append(.quickAck(0x8000_004D))
        var back: [TransportEvent] = []
        for c in split.chunks(down, rng: &rng) {
            client.feed(c)
            while let e = try client.next() { back.append(e) }
        }
        #expect(client.isHandshakeComplete)
        #expect(transportStripPadding(back, like: replies) == replies)
    }

    @Test("Bad server hello and bad records are typed errors, sticky")
    func badRecords() throws {
        var rng = SplitMix64(seed: 32)
        let secret = try MTProxySecret(bytes: [0xEE] + rng.bytes(16) + Array("a.example".utf8))
        let forged = try FakeTLSClient(secret: secret, unixTime: 0, using: &rng)
        forged.feed(makeServerHello(clientRandom: [UInt8](repeating: 0, count: 32), secret: secret.key, rng: &rng))
        for _ in 0..<2 {
            #expect(throws: MTProtoError.fakeTLSFailed("server hello digest mismatch")) { try forged.next() }
        }
        #expect(!forged.isHandshakeComplete)

        let client = try FakeTLSClient(secret: secret, unixTime: 0, using: &rng)
        client.feed(makeServerHello(clientRandom: client.clientRandom, secret: secret.key, rng: &rng))
        #expect(try client.next() == nil)
        #expect(client.isHandshakeComplete)
        client.feed([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28])  // an alert
        for _ in 0..<2 { #expect(throws: MTProtoError.fakeTLSFailed("unexpected TLS record header")) { try client.next() } }

        let big = try FakeTLSClient(secret: secret, unixTime: 0, using: &rng)
        big.feed(makeServerHello(clientRandom: big.clientRandom, secret: secret.key, rng: &rng))
        big.feed([0x17, 0x03, 0x03, 0xFF, 0xFF])
        #expect(throws: MTProtoError.fakeTLSFailed("TLS record of 65535 bytes")) { try big.next() }

        #expect(throws: MTProtoError.invalidProxySecret("fake-TLS needs an ee secret with a domain")) {
            try FakeTLSClient(secret: MTProxySecret(bytes: rng.bytes(16)), unixTime: 0, using: &rng)
        }
    }

    @Test("MTProxy secrets: plain, dd (secure), ee (fake-TLS with domain), and malformed ones")
    func proxySecrets() throws {
        let key = (1...16).map { UInt8($0) }
        let plain = try MTProxySecret(bytes: key)
        #expect(plain.mode == .plain && plain.framing == .intermediate)
        plain.key.withUnsafeBytes { #expect(Array($0) == key) }
        let secure = try MTProxySecret(hex: "dd" + hexString(key))
        #expect(secure.mode == .secure && secure.framing == .paddedIntermediate)
        secure.key.withUnsafeBytes { #expect(Array($0) == key) }
        let tls = try MTProxySecret(bytes: [0xEE] + key + Array("google.com".utf8))
        #expect(tls.mode == .fakeTLS(domain: Array("google.com".utf8)) && tls.framing == .paddedIntermediate)
        let long = try MTProxySecret(bytes: [0xEE] + key + [UInt8](repeating: 0x61, count: 300))
        #expect(long.mode == .fakeTLS(domain: [UInt8](repeating: 0x61, count: 182)))
        for bad in [[UInt8](), Array(key.prefix(15)), [0xAB] + key, [0xEE] + key, [0xDD] + key + [0]] {
            #expect(throws: MTProtoError.self) { try MTProxySecret(bytes: bad) }
        }
        #expect(throws: MTProtoError.invalidProxySecret("not hexadecimal")) { try MTProxySecret(hex: "zz") }
    }
}
