// Fake-TLS, the server side (Docs/MTProto.md §6.7): the ClientHello's digest and timestamp checked under the
// MTProxy secret, a server hello whose digest the client checks, then TLS application-data records around an
// obfuscated2 stream (§6.6). The counterpart of FakeTLSClient.

extension FakeTLS {
    /// How far a ClientHello's timestamp may lie from the server's clock: 20 minutes behind to 10
    /// minutes ahead (the window of the Python MTProxy, `mtprotoproxy`).
    public static let clientTimeWindow: ClosedRange<Int64> = -1200...600
    /// The largest ClientHello record accepted (TDLib's is 517 bytes; browsers' are under 2 KiB).
    public static let maxClientHelloLength = 4096

    /// Checks a ClientHello record (§6.7): a handshake record `16 03 01` holding a ClientHello,
    /// whose random field (record offset 11..<43) is HMAC-SHA256(secret, record with the field zeroed)
    /// with the last 4 bytes XORed with the client's Unix time, and that time within
    /// ``clientTimeWindow`` of `unixTime`. The 28 digest bytes are compared in constant time.
    ///
    /// - Returns: the record's length and its `client_random` (the 32 bytes of the field), or `nil`
    ///   when more bytes are needed.
    /// - Throws: ``MTProtoError/fakeTLSFailed(_:)``.
    public static func verifyClientHello<C: Collection<UInt8>>(_ received: C, secret: SymmetricKey,
                                                               unixTime: Int64) throws(MTProtoError) -> (length: Int, clientRandom: [UInt8])? {
        let r = Array(received.prefix(5 + maxClientHelloLength))
        let prefix: [UInt8] = [0x16, 0x03, 0x01]
        let have = min(3, r.count)
        guard r[0..<have].elementsEqual(prefix[0..<have]) else { throw .fakeTLSFailed("not a TLS handshake record") }
        guard r.count >= 5 else { return nil }
        let length = Int(r[3]) << 8 | Int(r[4])
        guard length >= 4 + 2 + 32 + 1 + 32, length <= maxClientHelloLength else {
            throw .fakeTLSFailed("ClientHello record of \(length) bytes")
        }
        guard r.count >= 5 + length else { return nil }
        guard r[5] == 0x01, r[6] == 0 else { throw .fakeTLSFailed("not a ClientHello") }
        var hello = Array(r[0..<(5 + length)])
        let random = Array(hello[11..<43])
        hello.replaceSubrange(11..<43, with: repeatElement(0, count: 32))
        let digest = HMAC<SHA256>.authenticationCode(for: hello, using: secret).bytes
        guard ConstantTime.equals(digest[0..<28], random[0..<28]) else { throw .fakeTLSFailed("ClientHello digest mismatch") }
        let clientTime = Int64(readLE32(digest, 28) ^ readLE32(random, 28))
        guard clientTimeWindow.contains(clientTime - unixTime) else {
            throw .fakeTLSFailed("ClientHello time \(clientTime) outside the window around \(unixTime)")
        }
        return (5 + length, random)
    }

    /// The server's answer to a verified ClientHello (§6.7, the layout ``verifyServerHello(_:clientRandom:secret:)``
    /// expects): a ServerHello record (TLS 1.2 legacy version, the client's session id echoed,
    /// TLS_AES_128_GCM_SHA256, key_share with an X25519 point, supported_versions TLS 1.3), a
    /// ChangeCipherSpec record, and an application-data record of 1024…4095 random bytes standing in
    /// for the encrypted certificate; the ServerHello's random field is HMAC-SHA256(secret,
    /// client_random ‖ the whole answer with that field zeroed).
    public static func makeServerHello<R: RandomNumberGenerator>(clientHello: [UInt8], clientRandom: [UInt8],
                                                                 secret: SymmetricKey, using rng: inout R) -> [UInt8] {
        // The client's session id: length byte at 43, then its bytes (at most 32).
        let sidLength = clientHello.count > 43 ? min(Int(clientHello[43]), 32, clientHello.count - 44) : 0
        let sessionId = sidLength > 0 ? Array(clientHello[44..<(44 + sidLength)]) : []
        var w = HelloWriter()
        w.put([0x16, 0x03, 0x03]); w.begin()
        w.put([0x02, 0x00]); w.begin()                 // ServerHello, 24-bit length (high byte 0)
        w.put([0x03, 0x03])
        w.put([UInt8](repeating: 0, count: 32))        // random: the digest goes here
        w.put([UInt8(sessionId.count)]); w.put(sessionId)
        w.put([0x13, 0x01, 0x00])                      // TLS_AES_128_GCM_SHA256, no compression
        w.begin()
        w.put([0x00, 0x33, 0x00, 0x24, 0x00, 0x1D, 0x00, 0x20]); w.put(x25519Point(using: &rng))
        w.put([0x00, 0x2B, 0x00, 0x02, 0x03, 0x04])
        w.end(); w.end(); w.end()
        var answer = w.bytes
        answer += changeCipherSpec
        let fakeLength = 1024 + Int(rng.next() % 3072)
        answer += [0x17, 0x03, 0x03, UInt8(fakeLength >> 8), UInt8(fakeLength & 0xFF)]
        answer += randomBytes(fakeLength, using: &rng)
        var mac = HMAC<SHA256>(key: secret)
        mac.update(data: clientRandom)
        mac.update(data: answer)
        answer.replaceSubrange(11..<43, with: mac.finalize().bytes)
        return answer
    }
}

/// The server end of a fake-TLS connection (Docs/MTProto.md §6.7): the ClientHello check, the server hello,
/// then an obfuscated2 stream (§6.6) inside TLS application-data records.
///
/// ```swift
/// let tls = FakeTLSServer(secret: key, unixTime: now)
/// tls.feed(received)
/// while let e = try tls.next(using: &rng) { ... }   // checks the ClientHello first
/// send(tls.takeOutput())                             // the server hello, once
/// send(try tls.encode(reply, using: &rng))
/// ```
///
/// Errors are sticky: once ``next(using:)`` throws, close the connection.
public final class FakeTLSServer {
    /// The client's `client_random` once its hello is verified (for a replay cache).
    public private(set) var clientRandom: [UInt8]?
    /// The framing inside the obfuscation, once the obfuscated2 header has arrived.
    public var framing: TransportFraming? { inner?.framing }
    /// The DC id of the obfuscated2 header, once it has arrived.
    public var dcId: Int16? { inner?.dcId }

    let secret: SymmetricKey
    let maxPacketLength: Int
    /// Unix time, for the ClientHello's timestamp check.
    public var unixTime: Int64
    var received = ByteQueue()
    var stream = ByteQueue()
    var inner: Obfuscated2Codec?
    var output: [UInt8] = []
    var failure: MTProtoError?

    /// A connection waiting for its ClientHello, for the secret's 16-byte `key`.
    public init(secret key: SymmetricKey, unixTime: Int64, maxPacketLength: Int = TransportLimits.defaultMaxPacketLength) {
        secret = key
        self.unixTime = unixTime
        self.maxPacketLength = maxPacketLength
    }

    /// Buffers received bytes. Never fails.
    public func feed<C: Collection<UInt8>>(_ bytes: C) { received.append(contentsOf: bytes) }

    /// Bytes the server must send that are no answer to a packet (the server hello); empty after.
    public func takeOutput() -> [UInt8] {
        defer { output = [] }
        return output
    }

    /// The next event, `nil` when more bytes are needed. Checks the ClientHello first and queues the
    /// server hello (``takeOutput()``); then unwraps records and decodes the obfuscated2 stream.
    /// - Throws: ``MTProtoError/fakeTLSFailed(_:)`` and the errors of the obfuscated2 codec.
    public func next<R: RandomNumberGenerator>(using rng: inout R) throws(MTProtoError) -> TransportEvent? {
        if let failure { throw failure }
        do throws(MTProtoError) {
            return try step(using: &rng)
        } catch {
            failure = error
            throw error
        }
    }

    private func step<R: RandomNumberGenerator>(using rng: inout R) throws(MTProtoError) -> TransportEvent? {
        if clientRandom == nil {
            let head = received.bytes(0..<min(received.count, 5 + FakeTLS.maxClientHelloLength))
            guard let (n, random) = try FakeTLS.verifyClientHello(head, secret: secret, unixTime: unixTime) else { return nil }
            output += FakeTLS.makeServerHello(clientHello: Array(head[0..<n]), clientRandom: random, secret: secret, using: &rng)
            received.consume(n)
            clientRandom = random
        }
        while true {
            if let o = inner, let e = try o.next() { return e }
            guard let (type, payload) = try FakeTLS.takeRecord(from: &received) else { return nil }
            guard type == 0x17 else { continue }  // the client's ChangeCipherSpec
            if let o = inner {
                o.feed(payload)
            } else {
                stream.append(contentsOf: payload)
                guard stream.count >= Obfuscated2.headerLength else { continue }
                let o = try Obfuscated2Codec(serverHeader: stream.bytes(0..<Obfuscated2.headerLength), secret: secret,
                                             maxPacketLength: maxPacketLength)
                stream.consume(Obfuscated2.headerLength)
                o.feed(stream.takeAll())
                inner = o
            }
        }
    }

    /// Wraps obfuscated2 output into application-data records of at most 16 KiB.
    private func records(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count + 5 * (data.count / 16384 + 1))
        var i = 0
        while i < data.count {
            let n = min(16384, data.count - i)
            out += [0x17, 0x03, 0x03, UInt8(n >> 8), UInt8(n & 0xFF)]
            out += data[i..<(i + n)]
            i += n
        }
        return out
    }

    /// Frames, encrypts and wraps one packet for the client.
    /// - Throws: ``MTProtoError/unknownTransport`` before the obfuscated2 header has arrived.
    public func encode<P: Collection<UInt8>, R: RandomNumberGenerator>(_ packet: P, using rng: inout R) throws(MTProtoError) -> [UInt8] {
        guard let o = inner else { throw .unknownTransport }
        return records(try o.encode(packet, using: &rng))
    }

    /// A quick-ack reply, wrapped.
    public func encodeQuickAck(_ value: UInt32) throws(MTProtoError) -> [UInt8] {
        guard let o = inner else { throw .unknownTransport }
        return records(o.encodeQuickAck(value))
    }

    /// A transport error packet, wrapped.
    public func encodeTransportError<R: RandomNumberGenerator>(_ code: Int32, using rng: inout R) throws(MTProtoError) -> [UInt8] {
        guard let o = inner else { throw .unknownTransport }
        return records(try o.encodeTransportError(code, using: &rng))
    }
}
