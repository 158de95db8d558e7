// The client end of a connection in any transport (Docs/MTProto.md §6): plain framing, obfuscated2 or fake-TLS
// behind one interface, for callers that pick the transport at run time.

/// The client end of one connection, in the transport chosen at creation.
///
/// ```swift
/// let conn = try ClientTransport(.obfuscated2(.intermediate, dcId: 2, secret: nil), using: &rng)
/// send(conn.takeOpening())                      // fake-TLS: the ClientHello; otherwise nothing
/// send(try conn.encode(message, using: &rng))  // tag or obfuscation header in front the first time
/// conn.feed(received); while let e = try conn.next() { ... }
/// ```
///
/// Errors are sticky, as for the wrapped codec. A class: it owns the connection's state.
public final class ClientTransport {
    /// The transports a client can open.
    public enum Kind: Sendable {
        /// A plain framing (§6.1–6.4), its tag sent before the first packet.
        case plain(TransportFraming)
        /// obfuscated2 (§6.6) around `framing` (not full), with an optional MTProxy secret key.
        case obfuscated2(TransportFraming, dcId: Int16?, secret: SymmetricKey?)
        /// Fake-TLS (§6.7) with an `ee` secret, around obfuscated2 and padded intermediate.
        case fakeTLS(MTProxySecret, dcId: Int16?, unixTime: UInt32)
        /// HTTP (§6.8): each packet a `POST /api` to `host` (the Host header, e.g. `127.0.0.1:443`),
        /// each answer a `200` response. The server holds a request that finds nothing to answer;
        /// send `http_wait` (``ServiceMessage/httpWait(maxDelay:waitAfter:maxWait:)``) to bound it.
        case http(host: String)
    }

    enum State {
        case plain(TransportDecoder, TransportEncoder)
        case obfuscated(Obfuscated2Codec)
        case tls(FakeTLSClient)
        case http(HTTPClientCodec)
        /// Held for an instant while a plain decoder is mutated in place (so it is uniquely referenced).
        case transient
    }
    var state: State
    var openingPending: Bool

    /// Opens a client connection state.
    /// - Throws: ``MTProtoError/invalidFrame(_:)`` for obfuscated full, ``MTProtoError/invalidProxySecret(_:)``.
    public init<R: RandomNumberGenerator>(_ kind: Kind, maxPacketLength: Int = TransportLimits.defaultMaxPacketLength,
                                          using rng: inout R) throws(MTProtoError) {
        switch kind {
        case .plain(let f):
            state = .plain(TransportDecoder(framing: f, role: .client, maxPacketLength: maxPacketLength),
                           TransportEncoder(framing: f, role: .client, maxPacketLength: maxPacketLength))
            openingPending = false
        case .obfuscated2(let f, let dc, let secret):
            state = .obfuscated(try Obfuscated2Codec(framing: f, dcId: dc, secret: secret, maxPacketLength: maxPacketLength,
                                                     using: &rng))
            openingPending = false
        case .fakeTLS(let secret, let dc, let time):
            state = .tls(try FakeTLSClient(secret: secret, dcId: dc, unixTime: time, maxPacketLength: maxPacketLength,
                                           using: &rng))
            openingPending = true
        case .http(let host):
            state = .http(HTTPClientCodec(host: host, maxPacketLength: maxPacketLength))
            openingPending = false
        }
    }

    /// Bytes to send as soon as the connection is up, before any packet: fake-TLS's ClientHello (once);
    /// empty for the other transports, whose tag or header rides in front of the first packet.
    public func takeOpening() -> [UInt8] {
        guard openingPending, case .tls(let t) = state else { return [] }
        openingPending = false
        return t.clientHello
    }

    /// Whether the transport is ready for traffic in both directions (fake-TLS: the server hello has been
    /// verified; always true for the others).
    public var isReady: Bool {
        if case .tls(let t) = state { return t.isHandshakeComplete }
        return true
    }

    /// Frames (and obfuscates) one packet; the first output carries the tag, header or CCS in front.
    /// Fake-TLS: the ClientHello is prepended if ``takeOpening()`` was not called.
    public func encode<P: Collection<UInt8>, R: RandomNumberGenerator>(
        _ packet: P, quickAckRequest: Bool = false, using rng: inout R
    ) throws(MTProtoError) -> [UInt8] {
        switch state {
        case .plain(let d, var e):
            let out = try e.encode(packet, quickAckRequest: quickAckRequest, using: &rng)
            state = .plain(d, e)
            return out
        case .obfuscated(let o):
            return try o.encode(packet, quickAckRequest: quickAckRequest, using: &rng)
        case .tls(let t):
            let records = try t.encode(packet, quickAckRequest: quickAckRequest, using: &rng)
            return takeOpening() + records
        case .http(let h): return h.encode(packet)
        case .transient: return []
        }
    }

    /// Buffers received bytes. Never fails.
    public func feed<C: Collection<UInt8>>(_ bytes: C) {
        switch state {
        case .plain(var d, let e):
            state = .transient
            d.feed(bytes)
            state = .plain(d, e)
        case .obfuscated(let o): o.feed(bytes)
        case .tls(let t): t.feed(bytes)
        case .http(let h): h.feed(bytes)
        case .transient: break
        }
    }

    /// The next event from the server, `nil` when more bytes are needed.
    public func next() throws(MTProtoError) -> TransportEvent? {
        switch state {
        case .plain(var d, let e):
            state = .transient
            defer { state = .plain(d, e) }
            return try d.next()
        case .obfuscated(let o): return try o.next()
        case .tls(let t): return try t.next()
        case .http(let h): return try h.next()
        case .transient: return nil
        }
    }
}
