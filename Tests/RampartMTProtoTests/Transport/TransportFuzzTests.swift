import Testing
import RampartMTProto
import RampartTestSupport

/// Drains a decoder; on an error checks that it is sticky and that the decoder did not change.
/// Returns the number of events before the end or the error.
@discardableResult
private func fuzzDrain(_ dec: inout TransportDecoder) -> Int {
    var n = 0
    while true {
        let before = dec
        do {
            guard try dec.next() != nil else { return n }
            n += 1
        } catch {
            #expect(dec == before)
            #expect(throws: error) { try dec.next() }
            #expect(dec == before)
            return n
        }
    }
}

/// Random bytes of a random length, biased towards small lengths and tag-like openings.
private func fuzzInput(_ rng: inout SplitMix64) -> [UInt8] {
    var b = rng.bytes(Int.random(in: 0...300, using: &rng))
    if !b.isEmpty && rng.next() % 4 == 0 { b[0] = [0xEF, 0xEE, 0xDD, 0x7F, 0xFF, 0x00][Int(rng.next() % 6)] }
    return b
}

/// A few random changes: flip, overwrite, insert, delete, truncate.
private func mutate(_ data: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
    var d = data
    for _ in 0..<Int.random(in: 1...3, using: &rng) {
        guard !d.isEmpty else { break }
        let i = Int.random(in: 0..<d.count, using: &rng)
        switch rng.next() % 5 {
        case 0: d[i] ^= UInt8(1 << (rng.next() % 8))
        case 1: d[i] = UInt8(truncatingIfNeeded: rng.next())
        case 2: d.insert(UInt8(truncatingIfNeeded: rng.next()), at: i)
        case 3: d.remove(at: i)
        default: d.removeLast(d.count - i)
        }
    }
    return d
}

@Suite("Transport fuzzing: random and mutated input never traps")
struct TransportFuzzTests {
    @Test("Random bytes into every framing decoder, both roles, random splits",
          arguments: TransportFraming.allCases, [TransportRole.client, .server])
    func randomFrames(framing: TransportFraming, role: TransportRole) {
        var rng = SplitMix64(seed: 40)
        for _ in 0..<400 {
            var dec = TransportDecoder(framing: framing, role: role, maxPacketLength: Int.random(in: 0...4096, using: &rng))
            let input = fuzzInput(&rng)
            for c in TransportSplit.random.chunks(input, rng: &rng) {
                dec.feed(c)
                fuzzDrain(&dec)
            }
        }
    }

    @Test("Mutated valid streams into every framing decoder", arguments: TransportFraming.allCases)
    func mutatedFrames(framing: TransportFraming) throws {
        var rng = SplitMix64(seed: 41)
        var enc = TransportEncoder(framing: framing, role: .client)
        var stream: [UInt8] = []
        for n in [0, 4, 40, 200, 600] { stream += try enc.encode(transportPacket(n, seed: UInt64(n)), using: &rng) }
        for _ in 0..<1500 {
            var dec = TransportDecoder(framing: framing, role: .server)
            dec.feed(mutate(stream, &rng))
            fuzzDrain(&dec)
        }
    }

    @Test("Random and mutated openings into ServerTransport (detection, plain and obfuscated2)")
    func serverTransport() throws {
        var rng = SplitMix64(seed: 42)
        var valid: [[UInt8]] = []
        for f in TransportFraming.allCases {
            var enc = TransportEncoder(framing: f, role: .client)
            valid.append(try enc.encode(transportPacket(40, seed: 1), using: &rng))
        }
        for f in [TransportFraming.abridged, .intermediate, .paddedIntermediate] {
            let c = try Obfuscated2Codec(framing: f, using: &rng)
            valid.append(try c.encode(transportPacket(40, seed: 1), using: &rng))
        }
        for i in 0..<2000 {
            let input = i % 2 == 0 ? fuzzInput(&rng) + rng.bytes(64) : mutate(valid[i % valid.count], &rng)
            let server = ServerTransport(maxPacketLength: 1024)
            for c in TransportSplit.random.chunks(input, rng: &rng) {
                server.feed(c)
                do {
                    while try server.next() != nil {}
                } catch {
                    #expect(throws: error) { try server.next() }  // sticky
                    break
                }
            }
        }
    }

    @Test("Random headers into the obfuscated2 server; random bytes into an obfuscated2 client")
    func obfuscated2() throws {
        var rng = SplitMix64(seed: 43)
        var accepted = 0
        for _ in 0..<3000 {
            let h = rng.bytes(Int.random(in: 60...68, using: &rng))
            if let s = try? Obfuscated2Codec(serverHeader: h) {
                accepted += 1
                s.feed(rng.bytes(100))
                _ = try? s.next()
            }
        }
        #expect(accepted < 5)  // a random header carries a valid tag with probability 3 / 2^32
        for f in [TransportFraming.abridged, .intermediate, .paddedIntermediate] {
            let c = try Obfuscated2Codec(framing: f, maxPacketLength: 2048, using: &rng)
            for _ in 0..<200 {
                c.feed(rng.bytes(Int.random(in: 0...100, using: &rng)))
                do { while try c.next() != nil {} } catch { break }
            }
        }
    }

    @Test("Random and mutated server hellos and records into the fake-TLS client")
    func fakeTLS() throws {
        var rng = SplitMix64(seed: 44)
        let secret = try MTProxySecret(bytes: [0xEE] + rng.bytes(16) + Array("x.example".utf8))
        for i in 0..<600 {
            let client = try FakeTLSClient(secret: secret, unixTime: 0, using: &rng)
            var input: [UInt8]
            if i % 2 == 0 {
                input = [0x16, 0x03, 0x03] + fuzzInput(&rng)
            } else {
                // A valid hello, mutated, followed by random records.
                var body = rng.bytes(122)
                body.replaceSubrange(6..<38, with: repeatElement(0, count: 32))
                var hello: [UInt8] = [0x16, 0x03, 0x03, 0x00, 122] + body + FakeTLS.changeCipherSpec + [0x17, 0x03, 0x03, 0x00, 0x04]
                    + rng.bytes(4)
                let mac = HMAC<SHA256>.authenticationCode(for: client.clientRandom + hello, using: secret.key).bytes
                hello.replaceSubrange(11..<43, with: mac)
                input = (i % 4 == 1 ? mutate(hello, &rng) : hello) + [0x17, 0x03, 0x03, 0x00, 0x10] + rng.bytes(Int.random(in: 0...40, using: &rng))
            }
            for c in TransportSplit.random.chunks(input, rng: &rng) {
                client.feed(c)
                do {
                    while try client.next() != nil {}
                } catch {
                    #expect(throws: error) { try client.next() }
                    break
                }
            }
            _ = try? FakeTLS.verifyServerHello(rng.bytes(Int.random(in: 0...200, using: &rng)), clientRandom: rng.bytes(32), secret: secret.key)
        }
    }
}
