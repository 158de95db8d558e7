// The obfuscated transport "obfuscated2" (Docs/MTProto.md §6.6): a 64-byte random header that carries the
// AES-256-CTR keys of both directions, the protocol tag and the DC id, then every byte in both
// directions through one continuous CTR stream per direction. Optional MTProxy secret.

/// An MTProxy secret (Docs/MTProto.md §6.6, "MTProxy secrets"): 16 bytes, optionally with a mode prefix.
///
/// * 16 bytes: a plain secret (obfuscated2 over intermediate).
/// * `dd` + 16 bytes: "secure" mode: padded intermediate is forced.
/// * `ee` + 16 bytes + domain: fake-TLS (§6.7) to the cloak domain (SNI), over padded intermediate.
public struct MTProxySecret: Sendable, Equatable {
    /// The secret's mode.
    public enum Mode: Sendable, Equatable {
        /// 16 bytes, no prefix.
        case plain
        /// `dd` prefix: padded intermediate forced.
        case secure
        /// `ee` prefix: fake-TLS with this cloak domain (at most 182 bytes kept, as tdlib does).
        case fakeTLS(domain: [UInt8])
    }

    /// The 16-byte secret that keys the obfuscation (and fake-TLS's HMAC).
    public let key: SymmetricKey
    /// The mode given by the prefix byte.
    public let mode: Mode

    /// The longest cloak domain kept (tdlib's `ProxySecret::MAX_DOMAIN_LENGTH`).
    public static let maxDomainLength = 182

    /// Parses the raw bytes of a secret.
    /// - Throws: ``MTProtoError/invalidProxySecret(_:)`` for any other length or prefix.
    public init<C: Collection<UInt8>>(bytes: C) throws(MTProtoError) {
        var b = Array(bytes)
        defer { b.secureWipe() }
        if b.count == 16 {
            key = SymmetricKey(data: b)
            mode = .plain
        } else if b.count == 17 && b[0] == 0xDD {
            key = SymmetricKey(data: b[1..<17])
            mode = .secure
        } else if b.count >= 18 && b[0] == 0xEE {
            key = SymmetricKey(data: b[1..<17])
            mode = .fakeTLS(domain: Array(b[17..<min(b.count, 17 + MTProxySecret.maxDomainLength)]))
        } else {
            throw .invalidProxySecret("\(b.count) bytes, first byte \(b.first.map { String($0, radix: 16) } ?? "none")")
        }
    }

    /// Parses a secret written in hexadecimal (as in `tg://proxy?secret=...` links).
    public init(hex: String) throws(MTProtoError) {
        let b: [UInt8]
        do { b = try Hex.decode(hex) } catch { throw .invalidProxySecret("not hexadecimal") }
        try self.init(bytes: b)
    }

    /// The framing a client uses inside the obfuscation (§6.6): padded intermediate whenever the
    /// secret has a prefix byte, intermediate for a plain secret.
    public var framing: TransportFraming { mode == .plain ? .intermediate : .paddedIntermediate }
}

/// Constants and key derivation of the obfuscated2 transport (Docs/MTProto.md §6.6).
public enum Obfuscated2 {
    /// The length of the connection header.
    public static let headerLength = 64

    /// The AES-256-CTR keys and initial counters of both directions, from the client's point of view.
    ///
    /// The client encrypts with `encrypt*` and decrypts with `decrypt*`; a server does the opposite.
    public struct Keys: Sendable {
        /// `init[8..<40]` (or SHA-256 of it and the proxy secret).
        public let encryptKey: SymmetricKey
        /// `init[40..<56]`, the big-endian initial counter block.
        public let encryptIV: [UInt8]
        /// The first 32 bytes of `reverse(init[8..<56])` (or SHA-256 of them and the proxy secret).
        public let decryptKey: SymmetricKey
        /// The last 16 bytes of `reverse(init[8..<56])`.
        public let decryptIV: [UInt8]
    }

    /// Derives the keys of §6.6 step 4 from a 64-byte header.
    ///
    /// - Parameters:
    ///   - header: the 64 header bytes *before* encryption (the client's `init`; a server passes the
    ///     received bytes, whose first 56 are sent in clear).
    ///   - secret: the MTProxy secret's 16-byte key, if any: then key = SHA-256(key32 ‖ secret).
    /// - Throws: ``MTProtoError/invalidFrame(_:)`` unless the header has 64 bytes (at least 56 are
    ///   used), ``MTProtoError/invalidProxySecret(_:)`` unless the secret has 16 bytes.
    public static func deriveKeys<C: Collection<UInt8>>(header: C, secret: SymmetricKey?) throws(MTProtoError) -> Keys {
        var h = Array(header)
        defer { h.secureWipe() }
        guard h.count == headerLength else { throw .invalidFrame("obfuscated2 header of \(h.count) bytes") }
        if let s = secret, s.byteCount != 16 { throw .invalidProxySecret("key of \(s.byteCount) bytes") }
        var forward = Array(h[8..<56])
        var backward = Array(forward.reversed())
        defer { forward.secureWipe(); backward.secureWipe() }
        func key(_ raw: ArraySlice<UInt8>) -> SymmetricKey {
            guard let s = secret else { return SymmetricKey(data: raw) }
            var sha = SHA256()
            sha.update(data: raw)
            s.withUnsafeBytes { sha.update(bufferPointer: $0) }
            return sha.finalize().withUnsafeBytes { SymmetricKey(data: $0) }
        }
        return Keys(encryptKey: key(forward[0..<32]), encryptIV: Array(forward[32..<48]),
                    decryptKey: key(backward[0..<32]), decryptIV: Array(backward[32..<48]))
    }

    /// Whether a candidate `init` must be redrawn (§6.6 step 1): first byte `EF`, a first word of
    /// `HEAD`, `POST`, `GET `, `OPTI`, `16 03 01 02`, `DD DD DD DD` or `EE EE EE EE`, or bytes 4..7 zero.
    /// Such a header would be mistaken for another transport by a server's detection.
    public static func isForbidden<C: Collection<UInt8>>(header: C) -> Bool {
        let h = Array(header.prefix(8))
        guard h.count == 8 else { return true }
        if h[0] == 0xEF { return true }
        let first = readLE32(h, 0)
        let forbidden: [UInt32] = [0x4441_4548, 0x5453_4F50, 0x2054_4547, 0x4954_504F, 0x0201_0316, 0xDDDD_DDDD, 0xEEEE_EEEE]
        if forbidden.contains(first) { return true }
        return readLE32(h, 4) == 0
    }

    /// Builds the `init` buffer of §6.6 steps 1–3 from `rng`: 64 random bytes, redrawn while
    /// forbidden (unless `checkForbidden` is false, as tdlib does under fake-TLS), with the protocol tag
    /// at 56..<60 and, when given, the DC id as int16 LE at 60..<62.
    static func makeInit<R: RandomNumberGenerator>(framing: TransportFraming, dcId: Int16?, checkForbidden: Bool,
                                                   using rng: inout R) throws(MTProtoError) -> [UInt8] {
        guard let tag = framing.obfuscationTag else { throw .invalidFrame("the full transport cannot be obfuscated") }
        var h = randomBytes(headerLength, using: &rng)
        while checkForbidden && isForbidden(header: h) {
            h.secureWipe()
            h = randomBytes(headerLength, using: &rng)
        }
        h.replaceSubrange(56..<60, with: tag)
        if let dc = dcId {
            let v = UInt16(bitPattern: dc)
            h[60] = UInt8(truncatingIfNeeded: v)
            h[61] = UInt8(truncatingIfNeeded: v >> 8)
        }
        return h
    }
}

/// One end of an obfuscated2 connection (Docs/MTProto.md §6.6): a framing codec inside two AES-256-CTR streams.
///
/// Client: ``init(framing:dcId:secret:maxPacketLength:using:)`` draws the header; the first
/// ``encode(_:quickAckRequest:using:)`` output starts with it (or take it early with
/// ``takeHeader()``). Server: ``init(serverHeader:secret:maxPacketLength:)`` parses the first 64
/// received bytes and recovers the protocol tag and DC id.
///
/// Receiving follows the contract of ``TransportDecoder``: ``feed(_:)`` decrypts and buffers (never
/// fails), ``next()`` yields events or throws without consuming anything. This is a class because its
/// two keystreams are connection state that must not be copied.
public final class Obfuscated2Codec {
    /// The end of the connection.
    public let role: TransportRole
    /// The framing inside the obfuscation (from the header's protocol tag on the server side).
    public let framing: TransportFraming
    /// The DC id: as given (client) or as read from the header (server; random bytes when the client
    /// did not write one).
    public let dcId: Int16?
    /// The 64 header bytes as sent on the wire.
    public let header: [UInt8]

    let encryptor: AES.CTR
    let decryptor: AES.CTR
    var encoder: TransportEncoder
    var decoder: TransportDecoder
    var headerPending: Bool

    /// A client: draws the 64-byte header from `rng` (redrawing forbidden ones) and sets up the streams.
    ///
    /// - Parameters:
    ///   - framing: the inner framing (abridged, intermediate or padded intermediate; tdlib uses
    ///     intermediate, or padded intermediate with a prefixed secret).
    ///   - dcId: written as int16 LE at header bytes 60..<62 when not nil (MTProxy routing: +10000 for
    ///     test DCs, negative for media DCs).
    ///   - secret: the MTProxy secret's 16-byte key, if connecting through a proxy.
    ///   - checkForbidden: redraw headers that look like another transport (default true; tdlib skips
    ///     this under fake-TLS).
    /// - Throws: ``MTProtoError/invalidFrame(_:)`` for `.full`, ``MTProtoError/invalidProxySecret(_:)``.
    public init<R: RandomNumberGenerator>(framing: TransportFraming, dcId: Int16? = nil, secret: SymmetricKey? = nil,
                                          checkForbidden: Bool = true,
                                          maxPacketLength: Int = TransportLimits.defaultMaxPacketLength,
                                          using rng: inout R) throws(MTProtoError) {
        var initBytes = try Obfuscated2.makeInit(framing: framing, dcId: dcId, checkForbidden: checkForbidden, using: &rng)
        defer { initBytes.secureWipe() }
        let keys = try Obfuscated2.deriveKeys(header: initBytes, secret: secret)
        let enc: AES.CTR, dec: AES.CTR
        do {
            enc = try AES.CTR(key: keys.encryptKey, counter: keys.encryptIV)
            dec = try AES.CTR(key: keys.decryptKey, counter: keys.decryptIV)
        } catch { throw .primitive(error) }
        let encrypted = enc.process(initBytes)  // advances the stream by 64 bytes (step 5)
        encryptor = enc
        decryptor = dec
        header = Array(initBytes[0..<56]) + encrypted[56..<64]
        role = .client
        self.framing = framing
        self.dcId = dcId
        encoder = TransportEncoder(framing: framing, role: .client, sendsTag: false, maxPacketLength: maxPacketLength)
        decoder = TransportDecoder(framing: framing, role: .client, expectsTag: false, maxPacketLength: maxPacketLength)
        headerPending = true
    }

    /// A server, from the first 64 bytes the client sent.
    ///
    /// The server's decryption stream is the client's encryption stream and vice versa; the header is
    /// decrypted (advancing that stream by 64 bytes) to read the protocol tag at 56..<60 and the DC id
    /// at 60..<62.
    /// - Throws: ``MTProtoError/invalidFrame(_:)`` when the header is not 64 bytes or its decrypted tag
    ///   is none of `EFEFEFEF`, `EEEEEEEE`, `DDDDDDDD` (random bytes, or a wrong proxy secret).
    public init<C: Collection<UInt8>>(serverHeader: C, secret: SymmetricKey? = nil,
                                      maxPacketLength: Int = TransportLimits.defaultMaxPacketLength) throws(MTProtoError) {
        let received = Array(serverHeader)
        let keys = try Obfuscated2.deriveKeys(header: received, secret: secret)
        let enc: AES.CTR, dec: AES.CTR
        do {
            enc = try AES.CTR(key: keys.decryptKey, counter: keys.decryptIV)
            dec = try AES.CTR(key: keys.encryptKey, counter: keys.encryptIV)
        } catch { throw .primitive(error) }
        var plain = dec.process(received)
        defer { plain.secureWipe() }
        guard let f = TransportFraming(obfuscationTag: plain[56..<60]) else {
            throw .invalidFrame("obfuscated2 header carries no known protocol tag")
        }
        encryptor = enc
        decryptor = dec
        role = .server
        framing = f
        dcId = Int16(bitPattern: UInt16(plain[60]) | UInt16(plain[61]) << 8)
        header = received
        encoder = TransportEncoder(framing: f, role: .server, sendsTag: false, maxPacketLength: maxPacketLength)
        decoder = TransportDecoder(framing: f, role: .server, expectsTag: false, maxPacketLength: maxPacketLength)
        headerPending = false
    }

    /// The header bytes if they have not been output yet (client), else empty. Afterwards
    /// ``encode(_:quickAckRequest:using:)`` no longer prepends them.
    public func takeHeader() -> [UInt8] {
        guard headerPending else { return [] }
        headerPending = false
        return header
    }

    /// Frames and encrypts one packet (header in front on a client's first call).
    ///
    /// - Throws: the errors of ``TransportEncoder/encode(_:quickAckRequest:using:)``; nothing changes
    ///   (the keystream does not advance) when it throws.
    public func encode<P: Collection<UInt8>, R: RandomNumberGenerator>(
        _ packet: P, quickAckRequest: Bool = false, using rng: inout R
    ) throws(MTProtoError) -> [UInt8] {
        let frame = try encoder.encode(packet, quickAckRequest: quickAckRequest, using: &rng)
        return takeHeader() + encryptor.process(frame)
    }

    /// An encrypted quick-ack reply (server; Docs/MTProto.md §1.7).
    public func encodeQuickAck(_ value: UInt32) -> [UInt8] {
        encryptor.process(encoder.encodeQuickAck(value))
    }

    /// An encrypted transport error packet (server; §6.5).
    public func encodeTransportError<R: RandomNumberGenerator>(_ code: Int32, using rng: inout R) throws(MTProtoError) -> [UInt8] {
        encryptor.process(try encoder.encodeTransportError(code, using: &rng))
    }

    /// Decrypts received bytes (after the header) and buffers them. Never fails.
    public func feed<C: Collection<UInt8>>(_ bytes: C) {
        decoder.feed(decryptor.process(bytes))
    }

    /// The next decoded event, `nil` when more bytes are needed; see ``TransportDecoder/next()``.
    public func next() throws(MTProtoError) -> TransportEvent? {
        try decoder.next()
    }
}
