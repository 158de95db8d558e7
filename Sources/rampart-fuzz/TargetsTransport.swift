// Transport targets: the four framing decoders (both roles), obfuscated2 (both ends, with and without
// an MTProxy secret), the fake-TLS client and the server's transport detection.
//
// Properties: a throwing next() is sticky and (for the framing decoder) changes nothing; the events
// do not depend on how the stream was split; every decoded event re-encodes to bytes that decode to
// the same event; obfuscated2 and fake-TLS deliver exactly what the plain decoder delivers for the
// decrypted stream; server-side detection agrees with TransportDetector and the plain decoders.

import Rampart
import RampartMTProto
import RampartTestSupport

/// What a decoder produced from a stream: its events, then the error that stopped it (if any).
struct DrainResult: Equatable {
    var events: [TransportEvent] = []
    var error: MTProtoError?
}

/// Feeds `chunks` and drains after each; after an error, checks that it is sticky (also across more
/// fed bytes). For the plain framing decoder the state is checked to be unchanged by a throw.
func drainDecoder(_ dec: inout TransportDecoder, _ chunks: [ArraySlice<UInt8>]) -> DrainResult {
    var r = DrainResult()
    for c in chunks {
        dec.feed(c)
        if r.error != nil {
            let before = dec
            do throws(MTProtoError) {
                _ = try dec.next()
                FuzzCheck.fail("decoder error not sticky after more bytes: \(r.error!)")
            } catch {
                FuzzCheck.require(error == r.error, "sticky error changed: \(r.error!) then \(error)")
                FuzzCheck.require(dec == before, "a throwing next() changed the decoder")
            }
            continue
        }
        while true {
            let before = dec
            do throws(MTProtoError) {
                guard let e = try dec.next() else { break }
                r.events.append(e)
            } catch {
                FuzzCheck.require(dec == before, "a throwing next() changed the decoder (\(error))")
                do throws(MTProtoError) {
                    _ = try dec.next()
                    FuzzCheck.fail("decoder error not sticky: \(error)")
                } catch let again {
                    FuzzCheck.require(again == error, "sticky error changed: \(error) then \(again)")
                }
                FuzzCheck.require(dec == before, "a second throwing next() changed the decoder")
                r.error = error
                break
            }
        }
    }
    return r
}

/// As ``drainDecoder(_:_:)`` for the class-based codecs (no state snapshot: stickiness only).
func drainCodec(_ chunks: [ArraySlice<UInt8>], feed: (ArraySlice<UInt8>) -> Void,
                next: () throws(MTProtoError) -> TransportEvent?) -> DrainResult {
    var r = DrainResult()
    for c in chunks {
        feed(c)
        if let e = r.error {
            do throws(MTProtoError) {
                _ = try next()
                FuzzCheck.fail("codec error not sticky after more bytes: \(e)")
            } catch {
                FuzzCheck.require(error == e, "sticky codec error changed: \(e) then \(error)")
            }
            continue
        }
        while true {
            do throws(MTProtoError) {
                guard let e = try next() else { break }
                r.events.append(e)
            } catch {
                do throws(MTProtoError) {
                    _ = try next()
                    FuzzCheck.fail("codec error not sticky: \(error)")
                } catch let again {
                    FuzzCheck.require(again == error, "sticky codec error changed: \(error) then \(again)")
                }
                r.error = error
                break
            }
        }
    }
    return r
}

/// Plain framing decoder over a whole plaintext stream (the reference the layered codecs must match).
func plainDecode(_ stream: [UInt8], framing: TransportFraming, role: TransportRole, expectsTag: Bool,
                 maxPacketLength: Int = TransportLimits.defaultMaxPacketLength) -> DrainResult {
    var dec = TransportDecoder(framing: framing, role: role, expectsTag: expectsTag, maxPacketLength: maxPacketLength)
    return drainDecoder(&dec, [stream[...]])
}

/// Checks that `event`, decoded by a `role` decoder of `framing`, survives encode → decode.
func checkEventRoundTrip(_ event: TransportEvent, framing: TransportFraming, role: TransportRole, seed: UInt64) {
    // The peer's encoder writes what this decoder reads.
    var enc = TransportEncoder(framing: framing, role: role == .server ? .client : .server, sendsTag: false)
    var dec = TransportDecoder(framing: framing, role: role, expectsTag: false)
    var rng = SplitMix64(seed: seed)
    switch event {
    case let .packet(p, ack):
        FuzzCheck.require(role == .server || !ack, "a client decoder reported a quick-ack request")
        if role == .client {
            FuzzCheck.require(p.count >= 16, "a client decoder delivered a \(p.count)-byte packet (special packets are < 16)")
        }
        if framing == .abridged || framing == .paddedIntermediate {
            FuzzCheck.require(p.count % 4 == 0, "\(framing) packet of \(p.count) bytes")
        }
        // Without padding the bytes come back exactly.
        var zero = ReplayRNG([])  // every draw zero: padded intermediate then adds no padding
        guard let wire = try? enc.encode(p, quickAckRequest: ack, using: &zero) else {
            FuzzCheck.fail("a decoded \(framing) packet of \(p.count) bytes does not re-encode")
        }
        dec.feed(wire)
        let back = try? dec.next()
        FuzzCheck.require(back == event, "\(framing) \(role) packet does not round-trip: \(String(describing: back))")
        if framing == .paddedIntermediate {
            // With random padding the reader keeps padding beyond length % 4: a prefix-extension.
            var enc2 = TransportEncoder(framing: framing, role: role == .server ? .client : .server, sendsTag: false)
            var dec2 = TransportDecoder(framing: framing, role: role, expectsTag: false)
            guard let wire2 = try? enc2.encode(p, quickAckRequest: ack, using: &rng) else { FuzzCheck.fail("padded re-encode") }
            dec2.feed(wire2)
            guard case let .packet(q, ack2)? = try? dec2.next() else { FuzzCheck.fail("padded packet with padding does not decode") }
            FuzzCheck.require(ack2 == ack && q.starts(with: p) && q.count - p.count <= 12 && (q.count - p.count) % 4 == 0,
                              "padded intermediate payload \(q.count) bytes for \(p.count)")
        }
    case .quickAck(let v):
        FuzzCheck.require(role == .client, "a server decoder reported a quick ack")
        guard v & 0x8000_0000 != 0 else { return }  // a special packet −1 carries any value
        dec.feed(enc.encodeQuickAck(v))
        let back = try? dec.next()
        FuzzCheck.require(back == event, "quick ack \(v) does not round-trip: \(String(describing: back))")
    case .transportError(let code):
        FuzzCheck.require(role == .client, "a server decoder reported a transport error")
        FuzzCheck.require(code != 0, "transport error 0 (a no-op) was reported")
        guard let wire = try? enc.encodeTransportError(code, using: &rng) else { FuzzCheck.fail("transport error does not encode") }
        dec.feed(wire)
        let back = try? dec.next()
        FuzzCheck.require(back == event, "transport error \(code) does not round-trip: \(String(describing: back))")
    }
}

/// Packets described by the input (lengths and filler), for the encode → decode direction.
func packets(_ input: inout FuzzInput, multipleOf4: Bool, count: Int) -> [[UInt8]] {
    var out: [[UInt8]] = []
    for _ in 0..<count {
        var n = Int(input.u16() % 2100)
        if multipleOf4 { n -= n % 4 }
        let seed = input.byte()
        out.append((0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }
    return out
}

let maxLengthChoices = [TransportLimits.defaultMaxPacketLength, 0, 64, 1024]

// MARK: - frame-<framing>

func frameTarget(_ framing: TransportFraming, name: String) -> FuzzTarget {
    FuzzTarget(
        name: "frame-\(name)",
        summary: "\(name) framing: decoder (both roles, any split) sticky/unchanged on error, split-invariant, events round-trip; encoder→decoder round trip",
        maxLength: 4096,
        run: { data in
            var input = FuzzInput(data)
            let flags = input.byte()
            let role: TransportRole = flags & 1 == 0 ? .server : .client
            let expectsTag = (flags & 2 == 0) == (role == .server)
            let maxLen = maxLengthChoices[Int(flags >> 2) & 3]
            let split = input.byte()
            let seed = UInt64(input.byte())
            if flags & 0x80 != 0 {
                // Encoder → decoder: the packets come back in order, whatever the split.
                let ps = packets(&input, multipleOf4: framing == .abridged || framing == .paddedIntermediate,
                                 count: Int(input.byte() % 5))
                var enc = TransportEncoder(framing: framing, role: .client)
                var rng = SplitMix64(seed: seed)
                var wire: [UInt8] = []
                for (i, p) in ps.enumerated() {
                    guard let w = try? enc.encode(p, quickAckRequest: i % 2 == 1, using: &rng) else {
                        FuzzCheck.fail("encoder refused a \(p.count)-byte packet")
                    }
                    wire += w
                }
                var dec = TransportDecoder(framing: framing, role: .server)
                let r = drainDecoder(&dec, FuzzSplit.chunks(wire, mode: split, seed: seed))
                FuzzCheck.require(r.error == nil, "decoding what the encoder wrote failed: \(r.error!)")
                FuzzCheck.require(r.events.count == ps.count, "\(ps.count) packets encoded, \(r.events.count) decoded")
                for (i, (e, p)) in zip(r.events, ps).enumerated() {
                    guard case let .packet(q, ack) = e, ack == (i % 2 == 1) else { FuzzCheck.fail("packet \(i) changed kind") }
                    if framing == .paddedIntermediate {
                        FuzzCheck.require(q.starts(with: p) && q.count - p.count <= 12, "padded packet \(i) changed")
                    } else {
                        FuzzCheck.require(q == p, "packet \(i) changed")
                    }
                }
                FuzzCheck.require(dec.bufferedByteCount == 0, "bytes left after whole frames")
                return
            }
            let stream = input.rest()
            var whole = TransportDecoder(framing: framing, role: role, expectsTag: expectsTag, maxPacketLength: maxLen)
            let reference = drainDecoder(&whole, [stream[...]])
            var split1 = TransportDecoder(framing: framing, role: role, expectsTag: expectsTag, maxPacketLength: maxLen)
            let r = drainDecoder(&split1, FuzzSplit.chunks(stream, mode: split, seed: seed))
            FuzzCheck.require(r == reference, "split changed the result: \(r) vs \(reference)")
            if !r.events.isEmpty { FuzzStats.note("frame: events") }
            for (i, e) in r.events.enumerated() {
                checkEventRoundTrip(e, framing: framing, role: role, seed: seed &+ UInt64(i))
                if case let .packet(p, _) = e, framing != .paddedIntermediate {
                    FuzzCheck.require(p.count <= maxLen, "packet of \(p.count) bytes above the limit \(maxLen)")
                }
            }
            FuzzCheck.require(split1.bufferedByteCount <= stream.count, "more bytes buffered than fed")
        },
        seeds: {
            var out: [[UInt8]] = []
            var rng = SplitMix64(seed: 1)
            for role in [TransportRole.server, .client] {
                var enc = TransportEncoder(framing: framing, role: role == .server ? .client : .server)
                var w = SeedWriter()
                w.byte(role == .server ? 0 : 1)
                w.byte(2)
                w.byte(7)
                for n in [0, 16, 40, 600] where !(role == .client && n < 16) {
                    if let f = try? enc.encode([UInt8](repeating: UInt8(n & 0xFF), count: n), quickAckRequest: role == .server && n == 40,
                                               using: &rng) { w.raw(f) }
                }
                if role == .client {
                    w.raw(enc.encodeQuickAck(0x1234_5678))
                    if let e = try? enc.encodeTransportError(-404, using: &rng) { w.raw(e) }
                }
                out.append(w.bytes)
            }
            var w = SeedWriter()
            w.byte(0x80)
            w.byte(3)
            w.byte(9)
            w.byte(3)
            for n: UInt16 in [8, 520, 44] { w.u16(n); w.byte(UInt8(n & 0xFF)) }
            out.append(w.bytes)
            return out
        })
}

// MARK: - obfuscated2

/// The two AES-256-CTR streams of an obfuscated2 connection, rebuilt from a header with public API
/// (the reference the codec is compared with).
struct Obfuscated2Streams {
    /// Client → server (positioned after the 64 header bytes).
    let up: AES.CTR
    /// Server → client.
    let down: AES.CTR

    init?(header: [UInt8], secret: SymmetricKey?) {
        guard let keys = try? Obfuscated2.deriveKeys(header: header, secret: secret),
              let up = try? AES.CTR(key: keys.encryptKey, counter: keys.encryptIV),
              let down = try? AES.CTR(key: keys.decryptKey, counter: keys.decryptIV) else { return nil }
        _ = up.process([UInt8](repeating: 0, count: Obfuscated2.headerLength))
        self.up = up
        self.down = down
    }
}

let obfuscatedFramings: [TransportFraming] = [.abridged, .intermediate, .paddedIntermediate, .intermediate]

let obfuscated2ServerTarget = FuzzTarget(
    name: "obfuscated2-server",
    summary: "obfuscated2 server end (with/without MTProxy secret): header parsing, then events equal the plain decoder's on the decrypted stream; replies decrypt",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let secret: SymmetricKey? = flags & 1 == 0 ? nil : Fixtures.proxySecret
        let split = input.byte()
        let seed = input.u64()
        var wire: [UInt8]
        if flags & 2 == 0 {
            wire = input.rest()  // raw bytes from the wire
        } else {
            // A genuine client header, then the input as the plaintext stream it encrypts.
            var rng = SplitMix64(seed: seed)
            let framing = obfuscatedFramings[Int(flags >> 2) & 3]
            guard let client = try? Obfuscated2Codec(framing: framing, dcId: Int16(bitPattern: input.u16()), secret: secret,
                                                     using: &rng),
                  let s = Obfuscated2Streams(header: client.header, secret: secret) else {
                FuzzCheck.fail("obfuscated2 client setup failed")
            }
            wire = client.header + s.up.process(input.rest())
        }
        guard wire.count >= Obfuscated2.headerLength else {
            do throws(MTProtoError) {
                _ = try Obfuscated2Codec(serverHeader: wire, secret: secret)
                FuzzCheck.fail("a short obfuscated2 header was accepted")
            } catch {
                guard case .invalidFrame = error else { FuzzCheck.fail("short header: \(error)") }
            }
            return
        }
        let header = Array(wire[0..<64])
        guard let streams = Obfuscated2Streams(header: header, secret: secret) else { FuzzCheck.fail("deriveKeys refused 64 bytes") }
        // Decrypt the header ourselves: the tag decides acceptance.
        guard let keys = try? Obfuscated2.deriveKeys(header: header, secret: secret),
              let ctr = try? AES.CTR(key: keys.encryptKey, counter: keys.encryptIV) else { FuzzCheck.fail("keys") }
        let clear = ctr.process(header)
        let framing = TransportFraming(obfuscationTag: clear[56..<60])
        let server: Obfuscated2Codec
        do throws(MTProtoError) {
            server = try Obfuscated2Codec(serverHeader: header, secret: secret)
        } catch {
            FuzzCheck.require(framing == nil, "a header with a valid tag was refused: \(error)")
            return
        }
        guard let framing else { FuzzCheck.fail("a header without a valid tag was accepted") }
        FuzzStats.note("obfuscated2: header accepted")
        FuzzCheck.require(server.framing == framing && server.role == .server, "wrong framing from the header")
        FuzzCheck.require(server.dcId == Int16(bitPattern: UInt16(clear[60]) | UInt16(clear[61]) << 8), "wrong DC id")
        let body = Array(wire[64...])
        let r = drainCodec(FuzzSplit.chunks(body, mode: split, seed: seed), feed: { server.feed($0) }, next: { () throws(MTProtoError) in try server.next() })
        let reference = plainDecode(streams.up.process(body), framing: framing, role: .server, expectsTag: false)
        FuzzCheck.require(r == reference, "obfuscated2 server events differ from the plain decoder's")
        // A reply decrypts (server → client stream) to a frame the client decoder reads back.
        var rng = SplitMix64(seed: seed)
        let reply = [UInt8](repeating: 0x5A, count: 32)
        guard let out = try? server.encode(reply, using: &rng) else { FuzzCheck.fail("server encode failed") }
        let back = plainDecode(streams.down.process(out), framing: framing, role: .client, expectsTag: false)
        guard back.error == nil, case let .packet(p, _)? = back.events.first, p.starts(with: reply) else {
            FuzzCheck.fail("server reply does not decrypt and decode")
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        for (i, f) in [TransportFraming.abridged, .intermediate, .paddedIntermediate].enumerated() {
            for withSecret in [false, true] {
                var w = SeedWriter()
                w.byte(UInt8(withSecret ? 1 : 0) | 2 | UInt8(i) << 2)
                w.byte(2)
                w.u64(UInt64(i * 2 + (withSecret ? 1 : 0)))
                w.u16(2)
                var enc = TransportEncoder(framing: f, role: .client, sendsTag: false)
                var rng = SplitMix64(seed: 3)
                for n in [16, 40] { if let b = try? enc.encode([UInt8](repeating: 7, count: n), using: &rng) { w.raw(b) } }
                out.append(w.bytes)
            }
        }
        // Raw: what a client codec really sends.
        var rng = SplitMix64(seed: 4)
        if let c = try? Obfuscated2Codec(framing: .intermediate, dcId: 2, using: &rng),
           let b = try? c.encode([UInt8](repeating: 1, count: 24), using: &rng) {
            out.append([0, 2, 0, 0, 0, 0, 0, 0, 0, 0] + b)
        }
        return out
    })

let obfuscated2ClientTarget = FuzzTarget(
    name: "obfuscated2-client",
    summary: "obfuscated2 client end (with/without secret) fed server bytes: events equal the plain client decoder's on the decrypted stream",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let secret: SymmetricKey? = flags & 1 == 0 ? nil : Fixtures.proxySecret
        let framing = obfuscatedFramings[Int(flags >> 2) & 3]
        let split = input.byte()
        let seed = input.u64()
        var rng = SplitMix64(seed: seed)
        guard let client = try? Obfuscated2Codec(framing: framing, dcId: nil, secret: secret, using: &rng),
              let streams = Obfuscated2Streams(header: client.header, secret: secret) else {
            FuzzCheck.fail("obfuscated2 client setup failed")
        }
        FuzzCheck.require(!Obfuscated2.isForbidden(header: client.header), "the client drew a forbidden header")
        let plain: [UInt8], wire: [UInt8]
        if flags & 2 == 0 {
            wire = input.rest()
            plain = streams.down.process(wire)
        } else {
            plain = input.rest()
            wire = streams.down.process(plain)
        }
        let r = drainCodec(FuzzSplit.chunks(wire, mode: split, seed: seed), feed: { client.feed($0) }, next: { () throws(MTProtoError) in try client.next() })
        let reference = plainDecode(plain, framing: framing, role: .client, expectsTag: false)
        FuzzCheck.require(r == reference, "obfuscated2 client events differ from the plain decoder's")
        // The first encode carries the header, then frames the server can read.
        guard let out = try? client.encode([UInt8](repeating: 3, count: 20), using: &rng) else { FuzzCheck.fail("client encode failed") }
        FuzzCheck.require(Array(out.prefix(64)) == client.header, "first output does not start with the header")
        let up = plainDecode(streams.up.process(Array(out.dropFirst(64))), framing: framing, role: .server, expectsTag: false)
        guard up.error == nil, case let .packet(p, _)? = up.events.first, p.starts(with: [UInt8](repeating: 3, count: 20)) else {
            FuzzCheck.fail("client frame does not decrypt and decode")
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        for (i, f) in [TransportFraming.abridged, .intermediate, .paddedIntermediate].enumerated() {
            var w = SeedWriter()
            w.byte(2 | UInt8(i) << 2 | UInt8(i & 1))
            w.byte(2)
            w.u64(UInt64(10 + i))
            var enc = TransportEncoder(framing: f, role: .server)
            var rng = SplitMix64(seed: 5)
            if let b = try? enc.encode([UInt8](repeating: 9, count: 32), using: &rng) { w.raw(b) }
            w.raw(enc.encodeQuickAck(0x8000_1234))
            if let b = try? enc.encodeTransportError(-404, using: &rng) { w.raw(b) }
            out.append(w.bytes)
        }
        return out
    })

// MARK: - fake-TLS

/// The fake-TLS secret of the target: `ee` + the fixture key + a domain.
let fakeTLSSecret: MTProxySecret = {
    let raw = [0xEE] + Fixtures.proxySecret.withUnsafeBytes { Array($0) } + Array("example.com".utf8)
    guard let s = try? MTProxySecret(bytes: raw) else { FuzzCheck.fail("fixture ee secret") }
    return s
}()

/// A server hello the client accepts: handshake record `body`, ChangeCipherSpec, application data
/// `extra`, with the digest at 11..<43. `body` must be at least 38 bytes.
func fakeTLSServerHello(body: [UInt8], extra: [UInt8], clientRandom: [UInt8]) -> [UInt8] {
    var r: [UInt8] = [0x16, 0x03, 0x03, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    r += [0x14, 0x03, 0x03, 0x00, 0x01, 0x01]
    r += [0x17, 0x03, 0x03, UInt8(extra.count >> 8), UInt8(extra.count & 0xFF)] + extra
    r.replaceSubrange(11..<43, with: [UInt8](repeating: 0, count: 32))
    var mac = HMAC<SHA256>(key: fakeTLSSecret.key)
    mac.update(data: clientRandom)
    mac.update(data: r)
    r.replaceSubrange(11..<43, with: mac.finalize().bytes)
    return r
}

let fakeTLSClientTarget = FuzzTarget(
    name: "faketls-client",
    summary: "fake-TLS client fed server bytes: server-hello check (digest, layout), records unwrapped, events equal the plain decoder's on the decrypted stream; and the server side (FakeTLSServer) fed a client's hello and first write: a genuine one is served and its server hello verifies, one outside the time window is refused, mutations are typed errors",
    maxLength: 8192,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let split = input.byte()
        let seed = input.u64()
        var rng = SplitMix64(seed: seed)
        let framing = obfuscatedFramings[Int(flags >> 2) & 3]
        guard let tls = try? FakeTLSClient(secret: fakeTLSSecret, framing: framing, dcId: 2, unixTime: 1_700_000_000, using: &rng) else {
            FuzzCheck.fail("fake-TLS client setup failed")
        }
        FuzzCheck.require(tls.clientHello.count >= 517 && Array(tls.clientHello[11..<43]) == tls.clientRandom,
                          "ClientHello shape")
        if flags & 1 != 0 {
            // The server side: this client's hello and first write, maybe mutated, into FakeTLSServer.
            let skew = Int64(Int8(bitPattern: input.byte())) * 10
            let server = FakeTLSServer(secret: fakeTLSSecret.key, unixTime: 1_700_000_000 + skew)
            let packet = input.fixed(4 + (Int(input.u16() % 1200) & ~3))
            guard let first = try? tls.encode(packet, using: &rng) else { FuzzCheck.fail("fake-TLS client write failed") }
            var wire = tls.clientHello + first
            let mutated = input.bool()
            if mutated { wire = mutate(wire, &input) }
            var r = DrainResult()
            var out: [UInt8] = []
            for c in FuzzSplit.chunks(wire, mode: split, seed: seed) {
                server.feed(c)
                do throws(MTProtoError) {
                    while let e = try server.next(using: &rng) { r.events.append(e) }
                } catch {
                    r.error = error
                    break
                }
                out += server.takeOutput()
            }
            let inWindow = FakeTLS.clientTimeWindow.contains(-skew)
            if !mutated && inWindow {
                // Padded intermediate's padding comes along when it is whole words (the MTProto layer drops it).
                var served = false
                if r.error == nil, r.events.count == 1, case .packet(let got, false) = r.events[0] {
                    served = framing == .paddedIntermediate ? got.starts(with: packet) && got.count - packet.count < 16 : got == packet
                }
                FuzzCheck.require(served, "a genuine fake-TLS client was not served: \(String(describing: r.error)), \(r.events.count) events")
                FuzzCheck.require((try? FakeTLS.verifyServerHello(out, clientRandom: tls.clientRandom, secret: fakeTLSSecret.key)) == out.count,
                                  "the client does not accept the server hello")
                FuzzStats.note("fake-TLS server: genuine")
            } else if !inWindow && !mutated {
                FuzzCheck.require(r.error != nil && r.events.isEmpty, "a ClientHello outside the time window was served")
                FuzzStats.note("fake-TLS server: time refused")
            } else {
                FuzzStats.note(r.error == nil ? "fake-TLS server: mutated, served" : "fake-TLS server: mutated, refused")
            }
            return
        }
        guard flags & 2 != 0 else {
            // Raw server bytes: typed errors only, sticky.
            let wire = input.rest()
            _ = drainCodec(FuzzSplit.chunks(wire, mode: split, seed: seed), feed: { tls.feed($0) }, next: { () throws(MTProtoError) in try tls.next() })
            return
        }
        // The inner obfuscated2 header is the first application data the client writes.
        guard let first = try? tls.encode([UInt8](repeating: 1, count: 16), using: &rng), first.count > 75,
              Array(first[0..<6]) == FakeTLS.changeCipherSpec, first[6] == 0x17,
              let streams = Obfuscated2Streams(header: Array(first[11..<75]), secret: fakeTLSSecret.key) else {
            FuzzCheck.fail("fake-TLS first write does not carry the obfuscated2 header")
        }
        let helloBody = input.fixed(38 + Int(input.byte()))
        let extra = input.bytes(Int(input.u16() % 300))
        let corrupt = input.byte()
        var wire = fakeTLSServerHello(body: helloBody, extra: extra, clientRandom: tls.clientRandom)
        if corrupt & 1 == 1 { wire[11 + Int(corrupt >> 3) % 32] ^= 0x40 }
        // The plaintext stream, encrypted, in application-data records of input-chosen sizes, with
        // ChangeCipherSpec records in between.
        let plain = input.rest()
        let cipher = streams.down.process(plain)
        var i = 0
        var sizes = SplitMix64(seed: seed ^ 0x7)
        while i < cipher.count {
            let n = min(cipher.count - i, 1 + Int(sizes.next() % 3000))
            if sizes.next() % 5 == 0 { wire += FakeTLS.changeCipherSpec }
            wire += [0x17, 0x03, 0x03, UInt8(n >> 8), UInt8(n & 0xFF)] + cipher[i..<(i + n)]
            i += n
        }
        let r = drainCodec(FuzzSplit.chunks(wire, mode: split, seed: seed), feed: { tls.feed($0) }, next: { () throws(MTProtoError) in try tls.next() })
        if corrupt & 1 == 1 {
            guard case .fakeTLSFailed? = r.error, r.events.isEmpty else { FuzzCheck.fail("a corrupted server hello was accepted") }
            FuzzCheck.require(!tls.isHandshakeComplete, "handshake complete after a bad digest")
            return
        }
        FuzzCheck.require(tls.isHandshakeComplete, "a valid server hello was not accepted (\(String(describing: r.error)))")
        FuzzStats.note("faketls: hello verified")
        let reference = plainDecode(plain, framing: framing, role: .client, expectsTag: false)
        FuzzCheck.require(r == reference, "fake-TLS events differ from the plain decoder's")
    },
    seeds: {
        var out: [[UInt8]] = []
        for (i, f) in [TransportFraming.paddedIntermediate, .intermediate].enumerated() {
            var w = SeedWriter()
            w.byte(2 | UInt8(i == 0 ? 2 : 1) << 2)
            w.byte(2)
            w.u64(UInt64(20 + i))
            w.byte(40)
            w.raw([UInt8](repeating: 0x42, count: 78))
            w.u16(12)
            w.raw([UInt8](repeating: 0x43, count: 12))
            w.byte(0)
            var enc = TransportEncoder(framing: f, role: .server)
            var rng = SplitMix64(seed: 6)
            if let b = try? enc.encode([UInt8](repeating: 9, count: 48), using: &rng) { w.raw(b) }
            if let b = try? enc.encode([UInt8](repeating: 8, count: 3200), using: &rng) { w.raw(b) }
            out.append(w.bytes)
        }
        // The server side: genuine (skew 0), a stale clock, a mutation.
        for (i, skew) in [UInt8(0), 0x90, 0].enumerated() {
            var w = SeedWriter()
            w.byte(1 | UInt8(i) << 2)
            w.byte(UInt8(i))
            w.u64(UInt64(30 + i))
            w.byte(skew)
            w.u16(100)
            w.raw([UInt8](repeating: 0x44, count: 104))
            w.byte(i == 2 ? 1 : 0)
            w.raw([3, 0, 0, 7])
            out.append(w.bytes)
        }
        return out
    })

// MARK: - server-transport

let serverTransportTarget = FuzzTarget(
    name: "server-transport",
    summary: "ServerTransport + TransportDetector on a connection's bytes: detection monotone and equal to the plain/obfuscated2 decoders' results; replies decode",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let secret: SymmetricKey? = flags & 1 == 0 ? nil : Fixtures.proxySecret
        let maxLen = maxLengthChoices[Int(flags >> 4) & 3]
        let split = input.byte()
        let seed = input.u64()
        var wire: [UInt8]
        if flags & 2 == 0 {
            wire = input.rest()
        } else {
            var rng = SplitMix64(seed: seed)
            guard let client = try? Obfuscated2Codec(framing: obfuscatedFramings[Int(flags >> 2) & 3], dcId: 4, secret: secret,
                                                     using: &rng),
                  let s = Obfuscated2Streams(header: client.header, secret: secret) else { FuzzCheck.fail("client setup") }
            wire = client.header + s.up.process(input.rest())
        }
        // Detection is monotone in the prefix.
        var decided: Result<DetectedTransport, MTProtoError>?
        for k in 0...min(8, wire.count) {
            let d: Result<DetectedTransport?, MTProtoError> = Result { () throws(MTProtoError) in try TransportDetector.detect(wire.prefix(k)) }
            switch (decided, d) {
            case (nil, .success(nil)): break
            case (nil, .success(let v?)): decided = .success(v)
            case (nil, .failure(let e)): decided = .failure(e)
            case (let prior?, let now):
                switch (prior, now) {
                case (.success(let a), .success(let b?)): FuzzCheck.require(a == b, "detection changed with more bytes")
                case (.failure(let a), .failure(let b)): FuzzCheck.require(a == b, "detection error changed")
                default: FuzzCheck.fail("detection changed with more bytes: \(prior) then \(now)")
                }
            }
        }
        let conn = ServerTransport(secret: secret, maxPacketLength: maxLen)
        var rng = SplitMix64(seed: seed)
        do throws(MTProtoError) {
            _ = try conn.encode([1, 2, 3, 4], using: &rng)
            FuzzCheck.fail("encode before detection succeeded")
        } catch {
            FuzzCheck.require(error == .unknownTransport, "encode before detection: \(error)")
        }
        let r = drainCodec(FuzzSplit.chunks(wire, mode: split, seed: seed), feed: { conn.feed($0) }, next: { () throws(MTProtoError) in try conn.next() })
        // The reference: detection, then the plain decoder or the obfuscated2 codec.
        var reference = DrainResult()
        var framing: TransportFraming?
        var streams: Obfuscated2Streams?
        switch decided {
        case nil:
            break
        case .failure(let e)?:
            reference.error = e
        case .success(.plain(let f))?:
            framing = f
            reference = plainDecode(wire, framing: f, role: .server, expectsTag: true, maxPacketLength: maxLen)
        case .success(.obfuscated2)?:
            guard wire.count >= 64 else { break }
            do throws(MTProtoError) {
                let o = try Obfuscated2Codec(serverHeader: wire[0..<64], secret: secret, maxPacketLength: maxLen)
                framing = o.framing
                streams = Obfuscated2Streams(header: Array(wire[0..<64]), secret: secret)
                reference = plainDecode(streams!.up.process(Array(wire[64...])), framing: o.framing, role: .server,
                                        expectsTag: false, maxPacketLength: maxLen)
            } catch {
                reference.error = error
            }
        case .success(.fakeTLS)?:
            FuzzCheck.fail("the detector reported fake-TLS (only a transport with an ee secret detects it)")
        case .success(.http)?:
            // HTTP has its own target (http-transport); here only: a proxy refuses it.
            if secret != nil { FuzzCheck.require(r.error == .unknownTransport, "a proxy served HTTP") }
            FuzzStats.note("server-transport: http")
            return
        }
        FuzzCheck.require(r == reference, "ServerTransport differs from detection + decoder: \(r.error.map { "\($0)" } ?? "-") vs \(reference.error.map { "\($0)" } ?? "-")")
        FuzzCheck.require(conn.framing == framing, "ServerTransport framing \(String(describing: conn.framing)) vs \(String(describing: framing))")
        // Once the transport is known, replies decode on the client side.
        guard let f = conn.framing, maxLen >= 64 else { return }
        FuzzStats.note("server-transport: \(f)\(streams == nil ? "" : " obfuscated")")
        let reply = [UInt8](repeating: 0xA5, count: 36)
        guard let out = try? conn.encode(reply, using: &rng), let qa = try? conn.encodeQuickAck(0x8000_0042) else {
            FuzzCheck.fail("encode after detection failed")
        }
        let clientBytes = streams.map { $0.down.process(out + qa) } ?? (out + qa)
        let back = plainDecode(clientBytes, framing: f, role: .client, expectsTag: false)
        guard back.error == nil, back.events.count == 2, case let .packet(p, _) = back.events[0], p.starts(with: reply),
              back.events[1] == .quickAck(0x8000_0042) else {
            FuzzCheck.fail("ServerTransport replies do not decode on the client side: \(back)")
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        var rng = SplitMix64(seed: 7)
        for f in TransportFraming.allCases {
            var enc = TransportEncoder(framing: f, role: .client)
            var w = SeedWriter()
            w.byte(0)
            w.byte(2)
            w.u64(8)
            for n in [40, 8] { if let b = try? enc.encode([UInt8](repeating: 2, count: n), using: &rng) { w.raw(b) } }
            out.append(w.bytes)
        }
        var w = SeedWriter()
        w.byte(2 | 1 << 2)
        w.byte(2)
        w.u64(9)
        var enc = TransportEncoder(framing: .intermediate, role: .client, sendsTag: false)
        if let b = try? enc.encode([UInt8](repeating: 2, count: 40), using: &rng) { w.raw(b) }
        out.append(w.bytes)
        out.append([0, 0, 0, 0, 0, 0, 0, 0, 0, 0] + Array("POST / HTTP/1.1\r\n".utf8))
        return out
    })

// MARK: - http-transport

let httpTransportTarget = FuzzTarget(
    name: "http-transport",
    summary: "HTTP transport (§6.8): requests built from random bodies and headers parse back to those bodies at any split; raw bytes never trap, errors are sticky; every response answers a request, in order, and the client reads them back",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let split = input.byte()
        let seed = input.u64()
        var rng = SplitMix64(seed: seed)
        let maxLen = maxLengthChoices[Int(flags >> 4) & 3]
        var wire: [UInt8] = []
        var expected: [[UInt8]]?
        if flags & 1 == 0 {
            wire = input.rest()
        } else {
            // Well-formed requests: bodies from the input, headers in random order and case.
            var bodies: [[UInt8]] = []
            let rest = input.rest()
            var i = 0
            while i < rest.count {
                let n = min(rest.count - i, Int(rest[i]) % 64)
                bodies.append(Array(rest[(i + 1 < rest.count ? i + 1 : rest.count)..<min(rest.count, i + 1 + n)]))
                i += 1 + n
            }
            for b in bodies {
                var headers = ["Host: 127.0.0.1:443", (rng.next() & 1 == 0 ? "Content-Length: " : "content-LENGTH:  ") + "\(b.count)",
                               "Connection: keep-alive", "Content-Type: application/x-www-form-urlencoded"]
                if rng.next() & 1 == 0 { headers.swapAt(0, 1) }
                if rng.next() & 1 == 0 { headers.swapAt(1, 3) }
                wire += Array("POST /api HTTP/1.\(rng.next() & 1)\r\n\(headers.joined(separator: "\r\n"))\r\n\r\n".utf8) + b
            }
            expected = bodies.filter { $0.count <= maxLen }.count == bodies.count ? bodies : nil
        }
        let server = ServerTransport(maxPacketLength: maxLen)
        let r = drainCodec(FuzzSplit.chunks(wire, mode: split, seed: seed), feed: { server.feed($0) },
                           next: { () throws(MTProtoError) in try server.next() })
        if let expected, wire.count > 0 {
            FuzzCheck.require(r.error == nil, "well-formed requests refused: \(r.error.map { "\($0)" } ?? "")")
            FuzzCheck.require(r.events == expected.map { .packet($0, quickAckRequested: false) }, "bodies differ")
            FuzzStats.note("http-transport: \(expected.count) well-formed requests")
        }
        if let e = r.error {
            // Sticky.
            do throws(MTProtoError) {
                _ = try server.next()
                FuzzCheck.fail("error not sticky")
            } catch {
                FuzzCheck.require(error == e, "error changed")
            }
            return
        }
        guard server.detected == .http else { return }
        // Answer some of the requests: at most one response each, in order, read back by the client.
        let requests = r.events.count
        let packets = Int(flags >> 1) & 7
        var out = server.takeOutput()
        var sent: [[UInt8]] = []
        for k in 0..<packets {
            let p = [UInt8](repeating: UInt8(k), count: 8 + k)
            sent.append(p)
            guard let bytes = try? server.encode(p, using: &rng) else { FuzzCheck.fail("encode failed") }
            out += bytes
        }
        out += server.expireHeldRequests(now: 1e12)
        var reader = HTTPMessageReader(role: .client, maxBodyLength: 1 << 20)
        reader.feed(out)
        var got: [[UInt8]] = []
        do throws(MTProtoError) {
            while let b = try reader.next() { got.append(b) }
        } catch {
            FuzzCheck.fail("the server's responses do not parse: \(error)")
        }
        let answered = min(requests, packets)
        let emptied = requests > HTTPTransport.maxHeldRequests ? requests - HTTPTransport.maxHeldRequests : 0
        FuzzCheck.require(got.count == requests, "\(got.count) responses for \(requests) requests")
        FuzzCheck.require(got.filter { !$0.isEmpty } == Array(sent.prefix(max(0, answered))) || emptied > 0, "responses out of order")
        FuzzCheck.require(server.heldRequestCount == 0, "requests still held after expiry")
    },
    seeds: {
        var out: [[UInt8]] = []
        out.append([0, 0] + [UInt8](repeating: 0, count: 8) + Array("POST /api HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd".utf8))
        out.append([3, 5] + [UInt8](repeating: 1, count: 8) + [8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 12] + [UInt8](repeating: 9, count: 12))
        out.append([0x17, 0] + [UInt8](repeating: 2, count: 8) + Array("POST /api HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
        return out
    })

let transportTargets: [FuzzTarget] = [
    frameTarget(.abridged, name: "abridged"),
    frameTarget(.intermediate, name: "intermediate"),
    frameTarget(.paddedIntermediate, name: "padded-intermediate"),
    frameTarget(.full, name: "full"),
    obfuscated2ServerTarget,
    obfuscated2ClientTarget,
    fakeTLSClientTarget,
    serverTransportTarget,
    httpTransportTarget,
]
