import Foundation
import Testing
import RampartMTProto
import RampartCodecs
import RampartTestSupport

/// The sample req_pq_multi packet of Docs/MTProto.md §10.A (40 bytes), as framed in vector D3.
private let d3Packet = hexBytes("0000000000000000" + "64F70D00FCC0AB65" + "14000000" + "F18E7EBE"
    + "15A084B3B9CA2A17F03925F44B78FE68")

private func allowedSizes(_ f: TransportFraming) -> [Int] {
    let base = Array(0...70) + [252, 500, 504, 505, 508, 512, 1000, 4096, 4097, 70_000]
    switch f {
    case .abridged, .paddedIntermediate: return base.filter { $0 % 4 == 0 }
    case .intermediate, .full: return base
    }
}

/// Asserts that `next()` throws `expected`, leaves the decoder unchanged, and throws it again.
private func expectStickyError(_ dec: inout TransportDecoder, _ expected: MTProtoError,
                               sourceLocation: SourceLocation = #_sourceLocation) {
    let before = dec
    for _ in 0..<2 {
        do {
            let e = try dec.next()
            Issue.record("expected \(expected), got \(String(describing: e))", sourceLocation: sourceLocation)
        } catch {
            #expect(error == expected, sourceLocation: sourceLocation)
        }
        #expect(dec == before, sourceLocation: sourceLocation)
    }
}

@Suite("Transport framing codecs (Docs/MTProto.md §6.1–6.5)")
struct FrameCodecTests {
    // MARK: Vectors

    @Test("Vector D3: abridged, intermediate and full framings of the sample req_pq_multi")
    func vectorD3() throws {
        #expect(d3Packet.count == 40)
        var rng = SplitMix64(seed: 1)
        let expected: [(TransportFraming, String)] = [
            (.abridged, "EF0A000000000000000064F70D00FCC0AB6514000000F18E7EBE15A084B3B9CA2A17F03925F44B78FE68"),
            (.intermediate, "EEEEEEEE28000000000000000000000064F70D00FCC0AB6514000000F18E7EBE15A084B3B9CA2A17F03925F44B78FE68"),
            (.full, "3400000000000000000000000000000064F70D00FCC0AB6514000000F18E7EBE15A084B3B9CA2A17F03925F44B78FE6834E133F7"),
        ]
        for (framing, hex) in expected {
            var enc = TransportEncoder(framing: framing, role: .client)
            #expect(try enc.encode(d3Packet, using: &rng) == hexBytes(hex))
            var dec = TransportDecoder(framing: framing, role: .server)
            dec.feed(hexBytes(hex))
            #expect(try dec.next() == .packet(d3Packet, quickAckRequested: false))
            #expect(try dec.next() == nil)
        }
        // The D3 CRC trailer on its own.
        #expect(CRC32.checksum(data: hexBytes("3400000000000000") + d3Packet) == 0xF733_E134)
    }

    @Test("Vectors/mtproto/derived_vectors.json: the transport framings of req_pq_multi")
    func derivedVectorsFramings() throws {
        guard let data = mtprotoVectorFile("derived_vectors.json") else { return }
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let payload = hexBytes(try #require(json["req_pq_multi_payload"] as? String))
        #expect(payload == d3Packet)
        var rng = SplitMix64(seed: 12)
        for (key, framing) in [("abridged", TransportFraming.abridged), ("intermediate", .intermediate), ("full_seq0", .full)] {
            var enc = TransportEncoder(framing: framing, role: .client)
            #expect(try enc.encode(payload, using: &rng) == hexBytes(try #require(json[key] as? String)), "\(key)")
        }
        let ack = try #require(json["c2s"] as? [String: Any])["quick_ack_uint32"] as? String
        #expect(ack == "0x9e8d9284")
    }

    @Test("Tags: sent once by a client, expected once by a server, never by the other direction")
    func tags() throws {
        var rng = SplitMix64(seed: 2)
        for f in TransportFraming.allCases {
            var enc = TransportEncoder(framing: f, role: .client)
            let first = try enc.encode([1, 2, 3, 4], using: &rng)
            let second = try enc.encode([1, 2, 3, 4], using: &rng)
            #expect(Array(first.prefix(f.tag.count)) == f.tag)
            if f != .full { #expect(first.count - f.tag.count == second.count || f == .paddedIntermediate) }
            var srv = TransportEncoder(framing: f, role: .server)
            #expect(try srv.encode([0, 0, 0, 0], using: &rng).count < first.count || f == .full || f == .paddedIntermediate)
        }
        #expect(TransportFraming.abridged.obfuscationTag == [0xEF, 0xEF, 0xEF, 0xEF])
        #expect(TransportFraming.full.obfuscationTag == nil)
        #expect(TransportFraming(obfuscationTag: [0xDD, 0xDD, 0xDD, 0xDD]) == .paddedIntermediate)
        #expect(TransportFraming(obfuscationTag: [0xDD, 0xDD, 0xDD, 0xDE]) == nil)
    }

    // MARK: Round trips

    @Test("Client → server round trips at sizes 0...N, with and without quick-ack request",
          arguments: TransportFraming.allCases, TransportSplit.allCases)
    func clientToServer(framing: TransportFraming, split: TransportSplit) throws {
        var rng = SplitMix64(seed: 3)
        var enc = TransportEncoder(framing: framing, role: .client)
        var stream: [UInt8] = []
        var sent: [TransportEvent] = []
        for (i, n) in allowedSizes(framing).enumerated() {
            let p = transportPacket(n, seed: UInt64(n))
            let ack = i % 3 == 1
            stream += try enc.encode(p, quickAckRequest: ack, using: &rng)
            sent.append(.packet(p, quickAckRequested: ack))
        }
        var dec = TransportDecoder(framing: framing, role: .server)
        let got = try transportDecodeAll(&dec, stream, split: split, rng: &rng)
        #expect(transportStripPadding(got, like: sent) == sent)
        #expect(dec.bufferedByteCount == 0)
    }

    @Test("Server → client round trips (packets of 16+ bytes, quick acks, transport errors)",
          arguments: TransportFraming.allCases, TransportSplit.allCases)
    func serverToClient(framing: TransportFraming, split: TransportSplit) throws {
        var rng = SplitMix64(seed: 4)
        var enc = TransportEncoder(framing: framing, role: .server)
        var stream: [UInt8] = []
        var sent: [TransportEvent] = []
        for (i, n) in allowedSizes(framing).filter({ $0 >= 16 }).enumerated() {
            let p = transportPacket(n, seed: UInt64(n) + 1000)
            stream += try enc.encode(p, using: &rng)
            sent.append(.packet(p, quickAckRequested: false))
            if i % 4 == 0 {
                stream += enc.encodeQuickAck(0x1E8D_9284 &+ UInt32(i))
                sent.append(.quickAck(0x9E8D_9284 &+ UInt32(i)))
            }
            if i % 5 == 0 {
                stream += try enc.encodeTransportError(-404, using: &rng)
                sent.append(.transportError(-404))
            }
        }
        var dec = TransportDecoder(framing: framing, role: .client)
        #expect(transportStripPadding(try transportDecodeAll(&dec, stream, split: split, rng: &rng), like: sent) == sent)
    }

    @Test("Abridged length forms: 0x7E units short, 0x7F units long, maximum 0xFFFFFF units")
    func abridgedLengthForms() throws {
        var rng = SplitMix64(seed: 5)
        var enc = TransportEncoder(framing: .abridged, role: .server)
        #expect(try enc.encode([UInt8](repeating: 7, count: 504), using: &rng).prefix(1) == [0x7E])
        #expect(try enc.encode([UInt8](repeating: 7, count: 508), using: &rng).prefix(4) == [0x7F, 0x7F, 0x00, 0x00])
        #expect(try enc.encode([UInt8](repeating: 7, count: 4 * 0x1234), using: &rng).prefix(4) == [0x7F, 0x34, 0x12, 0x00])
        var cli = TransportEncoder(framing: .abridged, role: .client, sendsTag: false)
        #expect(try cli.encode([UInt8](repeating: 7, count: 8), quickAckRequest: true, using: &rng).prefix(1) == [0x82])
        #expect(try cli.encode([UInt8](repeating: 7, count: 508), quickAckRequest: true, using: &rng).prefix(4) == [0xFF, 0x7F, 0, 0])
        // The largest length the long form can state is reported, not allocated.
        var dec = TransportDecoder(framing: .abridged, role: .server, expectsTag: false)
        dec.feed([0x7F, 0xFF, 0xFF, 0xFF])
        expectStickyError(&dec, .frameTooLarge(4 * 0xFF_FFFF))
    }

    @Test("Quick-ack replies: little-endian in intermediate and full, byte-swapped in abridged (§1.7)")
    func quickAckBytes() throws {
        let v: UInt32 = 0x9E8D_9284  // vector D1's quick_ack value
        #expect(TransportEncoder(framing: .intermediate, role: .server).encodeQuickAck(v) == [0x84, 0x92, 0x8D, 0x9E])
        #expect(TransportEncoder(framing: .paddedIntermediate, role: .server).encodeQuickAck(v) == [0x84, 0x92, 0x8D, 0x9E])
        #expect(TransportEncoder(framing: .full, role: .server).encodeQuickAck(v) == [0x84, 0x92, 0x8D, 0x9E])
        #expect(TransportEncoder(framing: .abridged, role: .server).encodeQuickAck(v) == [0x9E, 0x8D, 0x92, 0x84])
        // The flag bit is forced.
        #expect(TransportEncoder(framing: .intermediate, role: .server).encodeQuickAck(0x1E8D_9284) == [0x84, 0x92, 0x8D, 0x9E])
        for f in TransportFraming.allCases {
            var dec = TransportDecoder(framing: f, role: .client)
            dec.feed(TransportEncoder(framing: f, role: .server).encodeQuickAck(v))
            #expect(try dec.next() == .quickAck(v))
        }
        // A quick ack does not consume a full-transport sequence number.
        var rng = SplitMix64(seed: 6)
        var enc = TransportEncoder(framing: .full, role: .server)
        var dec = TransportDecoder(framing: .full, role: .client)
        dec.feed(enc.encodeQuickAck(v) + (try enc.encode(d3Packet, using: &rng)))
        #expect(try dec.next() == .quickAck(v))
        #expect(try dec.next() == .packet(d3Packet, quickAckRequested: false))
        #expect(dec.expectedSequenceNumber == 1)
    }

    @Test("Special packets (§6.5): -404, -429, -444 as events; 0 is a no-op; -1 + value is a quick ack")
    func specialPackets() throws {
        var dec = TransportDecoder(framing: .intermediate, role: .client)
        dec.feed(hexBytes("04000000" + "6CFEFFFF"))  // -404
        dec.feed(hexBytes("04000000" + "53FEFFFF"))  // -429
        dec.feed(hexBytes("04000000" + "44FEFFFF"))  // -444
        dec.feed(hexBytes("04000000" + "00000000"))  // no-op
        dec.feed(hexBytes("08000000" + "FFFFFFFF" + "84928D9E"))
        #expect(try dec.next() == .transportError(-404))
        #expect(try dec.next() == .transportError(-429))
        #expect(try dec.next() == .transportError(-444))
        #expect(try dec.next() == .quickAck(0x9E8D_9284))
        #expect(try dec.next() == nil)
        // Abridged: one length unit, then the code.
        var ab = TransportDecoder(framing: .abridged, role: .client)
        ab.feed([0x01, 0x6C, 0xFE, 0xFF, 0xFF])
        #expect(try ab.next() == .transportError(-404))
        // A server sees the same bytes as an ordinary packet.
        var srv = TransportDecoder(framing: .intermediate, role: .server, expectsTag: false)
        srv.feed(hexBytes("04000000" + "6CFEFFFF"))
        #expect(try srv.next() == .packet([0x6C, 0xFE, 0xFF, 0xFF], quickAckRequested: false))
        // A 0..3-byte server packet is malformed.
        var short = TransportDecoder(framing: .intermediate, role: .client)
        short.feed(hexBytes("02000000" + "AAAA"))
        expectStickyError(&short, .invalidFrame("server packet of 2 bytes"))
    }

    @Test("Padded intermediate: 0...15 padding bytes from a client, 0...3 from a server, stripped by length % 4")
    func paddedIntermediate() throws {
        var rng = SplitMix64(seed: 7)
        var enc = TransportEncoder(framing: .paddedIntermediate, role: .client, sendsTag: false)
        var paddings = Set<Int>()
        for _ in 0..<400 {
            let frame = try enc.encode(d3Packet, using: &rng)
            let len = Int(frame[0]) | Int(frame[1]) << 8
            #expect(len == frame.count - 4)
            paddings.insert(len - 40)
        }
        #expect(paddings == Set(0...15))
        // Toward a client only 0...3, as the official MTProxy (Telethon strips only length % 4).
        var srv = TransportEncoder(framing: .paddedIntermediate, role: .server)
        var serverPaddings = Set<Int>()
        for _ in 0..<200 {
            let frame = try srv.encode(d3Packet, using: &rng)
            serverPaddings.insert(Int(frame[0]) | Int(frame[1]) << 8 - 40)
        }
        #expect(serverPaddings == Set(0...3))
        // A padded length of 4k + r leaves 4k bytes of payload.
        var dec = TransportDecoder(framing: .paddedIntermediate, role: .server, expectsTag: false)
        dec.feed([7, 0, 0, 0, 1, 2, 3, 4, 9, 9, 9])
        #expect(try dec.next() == .packet([1, 2, 3, 4], quickAckRequested: false))
    }

    // MARK: Bad input

    @Test("Oversized lengths are rejected from the header alone, before the body arrives", arguments: TransportFraming.allCases)
    func oversized(framing: TransportFraming) throws {
        var rng = SplitMix64(seed: 8)
        var enc = TransportEncoder(framing: framing, role: .client, sendsTag: false)
        let frame = try enc.encode([UInt8](repeating: 1, count: 1024), using: &rng)
        var dec = TransportDecoder(framing: framing, role: .server, expectsTag: false, maxPacketLength: 1000)
        dec.feed(frame.prefix(4))  // the length field only
        let announced = framing == .paddedIntermediate ? frame.count - 4 : 1024
        expectStickyError(&dec, .frameTooLarge(announced))
        // The default limit: 16 MiB + 4 announced in intermediate.
        var big = TransportDecoder(framing: .intermediate, role: .server, expectsTag: false)
        big.feed([0x04, 0x00, 0x00, 0x01])
        expectStickyError(&big, .frameTooLarge(16 * 1024 * 1024 + 4))
        var exact = TransportDecoder(framing: .intermediate, role: .server, expectsTag: false)
        exact.feed([0x00, 0x00, 0x00, 0x01])
        #expect(try exact.next() == nil)  // exactly 16 MiB is allowed: waiting for the body
        // Encoders refuse too.
        var small = TransportEncoder(framing: framing, role: .client, maxPacketLength: 8)
        #expect(throws: MTProtoError.frameTooLarge(12)) { try small.encode([UInt8](repeating: 0, count: 12), using: &rng) }
        #expect(small.tagPending == !framing.tag.isEmpty)  // unchanged
    }

    @Test("Truncated frames yield nothing and wait", arguments: TransportFraming.allCases)
    func truncated(framing: TransportFraming) throws {
        var rng = SplitMix64(seed: 9)
        var enc = TransportEncoder(framing: framing, role: .client)
        let frame = try enc.encode(d3Packet, using: &rng)
        for cut in 0..<frame.count {
            var dec = TransportDecoder(framing: framing, role: .server)
            dec.feed(frame[..<cut])
            #expect(try dec.next() == nil)
            dec.feed(frame[cut...])
            let sent = [TransportEvent.packet(d3Packet, quickAckRequested: false)]
            #expect(transportStripPadding([try dec.next()].compactMap { $0 }, like: sent) == sent)
        }
    }

    @Test("Full transport: bad CRC, replayed or skipped sequence numbers, length below 12")
    func fullChecks() throws {
        var rng = SplitMix64(seed: 10)
        var enc = TransportEncoder(framing: .full, role: .client)
        let f0 = try enc.encode(d3Packet, using: &rng)
        let f1 = try enc.encode(d3Packet, using: &rng)
        let f2 = try enc.encode(d3Packet, using: &rng)
        for i in 0..<f0.count {  // no flipped bit yields a packet: a typed error, or a longer length that waits
            var bad = f0
            bad[i] ^= 0x10
            var dec = TransportDecoder(framing: .full, role: .server)
            dec.feed(bad)
            #expect((try? dec.next()) ?? nil == nil, "byte \(i)")
        }
        var crc = TransportDecoder(framing: .full, role: .server)
        var badCRC = f0
        badCRC[badCRC.count - 1] ^= 1
        crc.feed(badCRC)
        expectStickyError(&crc, .frameCheckFailed("CRC32 mismatch"))

        var replay = TransportDecoder(framing: .full, role: .server)
        replay.feed(f0 + f0)
        #expect(try replay.next() == .packet(d3Packet, quickAckRequested: false))
        expectStickyError(&replay, .frameCheckFailed("sequence number 0, expected 1"))

        var skip = TransportDecoder(framing: .full, role: .server)
        skip.feed(f0 + f2 + f1)
        #expect(try skip.next() != nil)
        expectStickyError(&skip, .frameCheckFailed("sequence number 2, expected 1"))

        var short = TransportDecoder(framing: .full, role: .server)
        short.feed([8, 0, 0, 0, 0, 0, 0, 0])
        expectStickyError(&short, .invalidFrame("full transport length 8 is below 12"))
    }

    @Test("Wrong tags are rejected, early and sticky")
    func wrongTag() throws {
        for f in [TransportFraming.abridged, .intermediate, .paddedIntermediate] {
            var dec = TransportDecoder(framing: f, role: .server)
            dec.feed([0x00])
            expectStickyError(&dec, .invalidFrame("wrong transport tag"))
        }
        var dec = TransportDecoder(framing: .intermediate, role: .server)
        dec.feed([0xEE, 0xEE, 0xEE])
        #expect(try dec.next() == nil)
        dec.feed([0xDD])
        expectStickyError(&dec, .invalidFrame("wrong transport tag"))
    }

    @Test("Encoders reject lengths the framing cannot carry and server quick-ack requests")
    func encoderBadInput() throws {
        var rng = SplitMix64(seed: 11)
        for n in [1, 2, 3, 5, 41] {
            var a = TransportEncoder(framing: .abridged, role: .client)
            #expect(throws: MTProtoError.invalidFrame("abridged payload length \(n) is not a multiple of 4")) {
                try a.encode([UInt8](repeating: 0, count: n), using: &rng)
            }
            #expect(a.tagPending)
            var p = TransportEncoder(framing: .paddedIntermediate, role: .client)
            #expect(throws: MTProtoError.invalidFrame("padded intermediate payload length \(n) is not a multiple of 4")) {
                try p.encode([UInt8](repeating: 0, count: n), using: &rng)
            }
        }
        var s = TransportEncoder(framing: .intermediate, role: .server)
        #expect(throws: MTProtoError.invalidFrame("only a client requests quick acks")) {
            try s.encode([0, 0, 0, 0], quickAckRequest: true, using: &rng)
        }
        var full = TransportEncoder(framing: .full, role: .client)
        _ = try? full.encode([UInt8](repeating: 0, count: 100), using: &rng)
        #expect(full.sequenceNumber == 1)
        var fullSmall = TransportEncoder(framing: .full, role: .client, maxPacketLength: 4)
        #expect(throws: MTProtoError.frameTooLarge(8)) { try fullSmall.encode([UInt8](repeating: 0, count: 8), using: &rng) }
        #expect(fullSmall.sequenceNumber == 0)
    }
}
