// The server side of a connection: transport detection from the first bytes (Docs/MTProto.md §6.5 "Server-side
// transport detection", §6.6 forbidden prefixes) and one object that then decodes and encodes in the
// detected transport, plain or obfuscated2.

/// A transport recognised from the first bytes of a connection.
public enum DetectedTransport: Sendable, Hashable {
    /// A plain framing; its tag (if any) is the first bytes of the stream.
    case plain(TransportFraming)
    /// obfuscated2 (§6.6): the first 64 bytes are the random header.
    case obfuscated2
    /// Fake-TLS (§6.7): a ClientHello under an `ee` MTProxy secret, then obfuscated2 in TLS records.
    case fakeTLS
    /// HTTP (§6.8): each packet the body of a `POST`, answered by a `200` response.
    case http
}

/// Server-side transport detection (§6.5, §6.6).
public enum TransportDetector {
    /// Decides the transport from the first bytes a client sent.
    ///
    /// * first byte `EF` → abridged;
    /// * first word `EE EE EE EE` → intermediate, `DD DD DD DD` → padded intermediate;
    /// * first word `POST` → HTTP (§6.8);
    /// * first word `HEAD`, `GET `, `OPTI` (other HTTP methods) or `16 03 01 02` (a TLS ClientHello,
    ///   i.e. fake-TLS, which only an `ee` secret serves) → ``MTProtoError/unknownTransport``;
    /// * bytes 4..7 zero (the sequence number 0 of a first full frame) → full;
    /// * anything else → obfuscated2, whose header generation excludes all of the above (§6.6 step 1).
    ///
    /// - Returns: the transport, or `nil` when fewer bytes than needed to decide are present (1 byte
    ///   for abridged, 4 for the tagged framings, 8 otherwise).
    /// - Throws: ``MTProtoError/unknownTransport`` for other HTTP methods and TLS openings.
    public static func detect<C: Collection<UInt8>>(_ prefix: C) throws(MTProtoError) -> DetectedTransport? {
        let p = Array(prefix.prefix(8))
        guard let b0 = p.first else { return nil }
        if b0 == 0xEF { return .plain(.abridged) }
        guard p.count >= 4 else { return nil }
        switch readLE32(p, 0) {
        case 0xEEEE_EEEE: return .plain(.intermediate)
        case 0xDDDD_DDDD: return .plain(.paddedIntermediate)
        case 0x5453_4F50: return .http
        case 0x4441_4548, 0x2054_4547, 0x4954_504F, 0x0201_0316: throw .unknownTransport
        default: break
        }
        guard p.count >= 8 else { return nil }
        return readLE32(p, 4) == 0 ? .plain(.full) : .obfuscated2
    }
}

/// The server end of one client connection: detects the transport, then decodes client frames and
/// encodes replies in it, plain or obfuscated2.
///
/// ```swift
/// let conn = ServerTransport()
/// conn.feed(bytesFromSocket)
/// while let event = try conn.next() { ... try conn.encode(reply, using: &rng) ... }
/// ```
///
/// Errors are sticky: once ``next()`` throws, every later call throws the same error; close the
/// connection. (A detection made before the error is kept.) Before the transport is known,
/// ``encode(_:using:)`` throws. A class: it owns the connection's keystreams.
public final class ServerTransport {
    /// The MTProxy secret's key expected in obfuscated2 headers, if this server acts as a proxy.
    public let secret: SymmetricKey?
    /// Whether the secret is an `ee` one: connections must open with a fake-TLS ClientHello
    /// (anything else is ``MTProtoError/unknownTransport``).
    public let fakeTLS: Bool
    /// Unix time now, for the fake-TLS ClientHello's timestamp check (the caller keeps it current).
    public var unixTime: Int64 = 0
    /// The largest packet accepted or produced.
    public let maxPacketLength: Int
    /// The transport, once detected.
    public private(set) var detected: DetectedTransport?

    enum State {
        case detecting
        case plain(TransportDecoder, TransportEncoder)
        case obfuscated(Obfuscated2Codec)
        case fakeTLS(FakeTLSServer)
        case http(HTTPServerCodec)
    }
    var state: State = .detecting
    var pending = ByteQueue()

    /// A connection waiting for its first bytes.
    /// - Parameters:
    ///   - secret: the MTProxy secret's key, if the server acts as a proxy.
    ///   - fakeTLS: the secret is an `ee` one (``MTProxySecret/Mode/fakeTLS(domain:)``): only fake-TLS
    ///     connections are served.
    public init(secret: SymmetricKey? = nil, fakeTLS: Bool = false, maxPacketLength: Int = TransportLimits.defaultMaxPacketLength) {
        self.secret = secret
        self.fakeTLS = fakeTLS && secret != nil
        self.maxPacketLength = maxPacketLength
    }

    /// The framing in use (inside obfuscation, read from the header), once known.
    public var framing: TransportFraming? {
        switch state {
        case .detecting: return nil
        case .plain(let d, _): return d.framing
        case .obfuscated(let o): return o.framing
        case .fakeTLS(let t): return t.framing
        case .http: return nil
        }
    }

    /// The DC id from an obfuscated2 header, if any.
    public var dcId: Int16? {
        if case .obfuscated(let o) = state { return o.dcId }
        if case .fakeTLS(let t) = state { return t.dcId }
        return nil
    }

    /// Buffers received bytes. Never fails.
    public func feed<C: Collection<UInt8>>(_ bytes: C) {
        switch state {
        case .detecting: pending.append(contentsOf: bytes)
        case .plain(var d, let e):
            state = .detecting  // drop the reference so `d` is uniquely owned while mutated
            d.feed(bytes)
            state = .plain(d, e)
        case .obfuscated(let o): o.feed(bytes)
        case .fakeTLS(let t): t.feed(bytes)
        case .http(let h): h.feed(bytes)
        }
    }

    /// Bytes the transport itself must send, not an answer to a packet (fake-TLS's server hello; HTTP
    /// responses that a new request let out); empty otherwise. Write them before anything encoded
    /// after them.
    public func takeOutput() -> [UInt8] {
        if case .fakeTLS(let t) = state { return t.takeOutput() }
        if case .http(let h) = state { return h.takeOutput() }
        return []
    }

    /// HTTP (§6.8): seconds a request that finds nothing to answer is held (a long poll) before it
    /// gets an empty response; set it from the client's `http_wait` `max_wait`. nil for the other
    /// transports (setting it then does nothing).
    public var httpMaxWait: Double? {
        get { if case .http(let h) = state { return h.maxWait } else { return nil } }
        set { if case .http(let h) = state, let v = newValue, v.isFinite { h.maxWait = max(0, v) } }
    }

    /// HTTP: requests received and not yet answered (0 for the other transports).
    public var heldRequestCount: Int {
        if case .http(let h) = state { return h.heldCount }
        return 0
    }

    /// HTTP: empty responses for the held requests whose wait (``httpMaxWait``) has run out at
    /// `now` (unix seconds); empty for the other transports.
    public func expireHeldRequests(now: Double) -> [UInt8] {
        if case .http(let h) = state { return h.expire(now: now) }
        return []
    }

    /// The fake-TLS client's `client_random` once its ClientHello is verified (for a replay cache).
    public var fakeTLSClientRandom: [UInt8]? {
        if case .fakeTLS(let t) = state { return t.clientRandom }
        return nil
    }

    /// The next event from the client, `nil` when more bytes are needed.
    /// - Throws: ``MTProtoError/unknownTransport`` for an opening no transport matches, and the errors
    ///   of ``TransportDecoder/next()`` and ``Obfuscated2Codec/init(serverHeader:secret:maxPacketLength:)``.
    public func next() throws(MTProtoError) -> TransportEvent? {
        var g = SecureRandom()
        return try next(using: &g)
    }

    /// ``next()`` with the generator fake-TLS's server hello draws from.
    public func next<R: RandomNumberGenerator>(using rng: inout R) throws(MTProtoError) -> TransportEvent? {
        if case .detecting = state, fakeTLS, let key = secret {
            // An ee proxy serves fake-TLS only: the first bytes must open a TLS handshake record.
            let have = pending.bytes(0..<min(3, pending.count))
            guard have.elementsEqual([0x16, 0x03, 0x01].prefix(have.count)) else { throw .unknownTransport }
            guard pending.count >= 3 else { return nil }
            let t = FakeTLSServer(secret: key, unixTime: unixTime, maxPacketLength: maxPacketLength)
            t.feed(pending.takeAll())
            state = .fakeTLS(t)
            detected = .fakeTLS
        }
        if case .detecting = state {
            guard let kind = try TransportDetector.detect(pending.bytes(0..<min(8, pending.count))) else { return nil }
            switch kind {
            case .plain(let f):
                var d = TransportDecoder(framing: f, role: .server, expectsTag: true, maxPacketLength: maxPacketLength)
                d.feed(pending.takeAll())
                state = .plain(d, TransportEncoder(framing: f, role: .server, maxPacketLength: maxPacketLength))
            case .fakeTLS:
                throw .unknownTransport  // not reported by the detector
            case .http:
                guard secret == nil else { throw .unknownTransport }  // a proxy serves obfuscated2 only
                let h = HTTPServerCodec(maxPacketLength: maxPacketLength)
                h.feed(pending.takeAll())
                state = .http(h)
            case .obfuscated2:
                guard pending.count >= Obfuscated2.headerLength else { return nil }
                let o = try Obfuscated2Codec(serverHeader: pending.bytes(0..<Obfuscated2.headerLength), secret: secret,
                                             maxPacketLength: maxPacketLength)
                pending.consume(Obfuscated2.headerLength)
                o.feed(pending.takeAll())
                state = .obfuscated(o)
            }
            detected = kind
        }
        switch state {
        case .detecting: return nil
        case .plain(var d, let e):
            state = .detecting
            defer { state = .plain(d, e) }
            return try d.next()
        case .obfuscated(let o): return try o.next()
        case .fakeTLS(let t):
            t.unixTime = unixTime
            return try t.next(using: &rng)
        case .http(let h):
            h.unixTime = Double(unixTime)
            return try h.next()
        }
    }

    /// Frames (and, under obfuscation, encrypts) one packet for the client.
    /// - Throws: ``MTProtoError/unknownTransport`` before detection; the encoder's errors otherwise.
    public func encode<P: Collection<UInt8>, R: RandomNumberGenerator>(_ packet: P, using rng: inout R) throws(MTProtoError) -> [UInt8] {
        switch state {
        case .detecting: throw .unknownTransport
        case .plain(let d, var e):
            let out = try e.encode(packet, using: &rng)
            state = .plain(d, e)
            return out
        case .obfuscated(let o): return try o.encode(packet, using: &rng)
        case .fakeTLS(let t): return try t.encode(packet, using: &rng)
        case .http(let h): return try h.encode(packet)
        }
    }

    /// A quick-ack reply for the client (Docs/MTProto.md §1.7).
    /// - Throws: ``MTProtoError/unknownTransport`` before detection.
    public func encodeQuickAck(_ value: UInt32) throws(MTProtoError) -> [UInt8] {
        switch state {
        case .detecting: throw .unknownTransport
        case .plain(_, let e): return e.encodeQuickAck(value)
        case .obfuscated(let o): return o.encodeQuickAck(value)
        case .fakeTLS(let t): return try t.encodeQuickAck(value)
        case .http: return []  // HTTP has no quick acks
        }
    }

    /// A transport error packet for the client (§6.5), e.g. −404.
    /// - Throws: ``MTProtoError/unknownTransport`` before detection.
    public func encodeTransportError<R: RandomNumberGenerator>(_ code: Int32, using rng: inout R) throws(MTProtoError) -> [UInt8] {
        switch state {
        case .detecting: throw .unknownTransport
        case .plain(let d, var e):
            let out = try e.encodeTransportError(code, using: &rng)
            state = .plain(d, e)
            return out
        case .obfuscated(let o): return try o.encodeTransportError(code, using: &rng)
        case .fakeTLS(let t): return try t.encodeTransportError(code, using: &rng)
        case .http(let h): return try h.encode(le32Bytes(UInt32(bitPattern: code)))
        }
    }
}
