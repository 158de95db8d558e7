// Fake-TLS, the client side (Docs/MTProto.md §6.7): a browser-like TLS 1.3 ClientHello whose random field is an
// HMAC-SHA256 of the hello under the MTProxy secret with the time folded in, the server-hello check,
// and TLS application-data records around an obfuscated2 stream.

/// Fake-TLS building blocks (Docs/MTProto.md §6.7).
public enum FakeTLS {
    /// The largest application-data record payload written (tdlib's cap).
    public static let maxRecordPayload = 2878
    /// The largest record payload accepted when reading (TLS 1.3's ciphertext limit, 2^14 + 256).
    public static let maxReceivedRecordPayload = 16384 + 256
    /// The ChangeCipherSpec record that precedes the client's first application data.
    public static let changeCipherSpec: [UInt8] = [0x14, 0x03, 0x03, 0x00, 0x01, 0x01]

    /// Builds a ClientHello record (§6.7) and its `client_random`.
    ///
    /// The layout follows tdlib's non-Apple template: GREASE values, TLS 1.3 cipher suites, a leading
    /// GREASE extension, a randomly permuted extension set (SNI with `domain`, supported groups with
    /// X25519MLKEM768, key shares with a random-looking 1184-byte ML-KEM-768 key and valid X25519
    /// points, ECH GREASE, …), a final GREASE extension, and padding to 517 bytes when shorter. Then the
    /// digest: HMAC-SHA256(secret, record with the random field zeroed), its last 4 bytes XORed with
    /// `unixTime` little-endian, written to record offset 11..<43.
    ///
    /// - Parameters:
    ///   - domain: the cloak domain for SNI (truncated to 182 bytes).
    ///   - secret: the MTProxy secret's 16-byte key.
    ///   - unixTime: the current Unix time, corrected by the known server offset.
    ///   - rng: every random field (GREASE, session id, key shares, permutation, ECH payload).
    /// - Returns: the record bytes and the 32-byte `client_random` to pass to ``verifyServerHello(_:clientRandom:secret:)``.
    public static func makeClientHello<R: RandomNumberGenerator>(domain: [UInt8], secret: SymmetricKey, unixTime: UInt32,
                                                                 using rng: inout R) -> (hello: [UInt8], clientRandom: [UInt8]) {
        let grease = makeGrease(using: &rng)
        let host = Array(domain.prefix(MTProxySecret.maxDomainLength))
        var w = HelloWriter()
        w.put([0x16, 0x03, 0x01]); w.begin()           // record: handshake, TLS 1.0 version, length
        w.put([0x01, 0x00]); w.begin()                 // ClientHello, 24-bit length (high byte 0)
        w.put([0x03, 0x03])                            // legacy version TLS 1.2
        w.put([UInt8](repeating: 0, count: 32))        // random: the digest goes here
        w.put([0x20]); w.put(randomBytes(32, using: &rng))  // session id
        w.put([0x00, 0x20]); w.put(grease[0], grease[0])
        w.put([0x13, 0x01, 0x13, 0x02, 0x13, 0x03, 0xC0, 0x2B, 0xC0, 0x2F, 0xC0, 0x2C, 0xC0, 0x30, 0xCC, 0xA9, 0xCC, 0xA8,
               0xC0, 0x13, 0xC0, 0x14, 0x00, 0x9C, 0x00, 0x9D, 0x00, 0x2F, 0x00, 0x35])
        w.put([0x01, 0x00])                            // compression: null only
        w.begin()                                      // extensions
        w.put(grease[2], grease[2]); w.put([0x00, 0x00])

        var parts: [[UInt8]] = []
        do {  // server_name
            var e = HelloWriter()
            e.put([0x00, 0x00]); e.begin(); e.begin(); e.put([0x00]); e.begin(); e.put(host); e.end(); e.end(); e.end()
            parts.append(e.bytes)
        }
        parts.append([0x00, 0x05, 0x00, 0x05, 0x01, 0x00, 0x00, 0x00, 0x00])  // status_request
        parts.append([0x00, 0x0A, 0x00, 0x0C, 0x00, 0x0A, grease[4], grease[4], 0x11, 0xEC, 0x00, 0x1D, 0x00, 0x17, 0x00, 0x18])
        parts.append([0x00, 0x0B, 0x00, 0x02, 0x01, 0x00])  // ec_point_formats
        parts.append([0x00, 0x0D, 0x00, 0x12, 0x00, 0x10, 0x04, 0x03, 0x08, 0x04, 0x04, 0x01, 0x05, 0x03, 0x08, 0x05,
                      0x05, 0x01, 0x08, 0x06, 0x06, 0x01])  // signature_algorithms
        parts.append([0x00, 0x10, 0x00, 0x0E, 0x00, 0x0C, 0x02, 0x68, 0x32, 0x08, 0x68, 0x74, 0x74, 0x70, 0x2F, 0x31,
                      0x2E, 0x31])  // ALPN h2, http/1.1
        parts.append([0x00, 0x12, 0x00, 0x00])  // signed_certificate_timestamp
        parts.append([0x00, 0x17, 0x00, 0x00])  // extended_master_secret
        parts.append([0x00, 0x1B, 0x00, 0x03, 0x02, 0x00, 0x02])  // compress_certificate
        parts.append([0x00, 0x23, 0x00, 0x00])  // session_ticket
        parts.append([0x00, 0x2B, 0x00, 0x07, 0x06, grease[6], grease[6], 0x03, 0x04, 0x03, 0x03])  // supported_versions
        parts.append([0x00, 0x2D, 0x00, 0x02, 0x01, 0x01])  // psk_key_exchange_modes
        do {  // key_share: GREASE, X25519MLKEM768 (1184 + 32 bytes), x25519
            var e = HelloWriter()
            e.put([0x00, 0x33]); e.begin(); e.begin()
            e.put(grease[4], grease[4]); e.put([0x00, 0x01, 0x00])
            e.put([0x11, 0xEC]); e.begin(); e.put(mlkemLikeKey(using: &rng)); e.put(x25519Point(using: &rng)); e.end()
            e.put([0x00, 0x1D]); e.begin(); e.put(x25519Point(using: &rng)); e.end()
            e.end(); e.end()
            parts.append(e.bytes)
        }
        parts.append([0x44, 0xCD, 0x00, 0x05, 0x00, 0x03, 0x02, 0x68, 0x32])  // application_settings (ALPS)
        do {  // encrypted_client_hello GREASE
            var e = HelloWriter()
            e.put([0xFE, 0x0D]); e.begin()
            e.put([0x00, 0x00, 0x01, 0x00, 0x01]); e.put(randomBytes(1, using: &rng))
            e.put([0x00, 0x20]); e.put(randomBytes(32, using: &rng))
            e.begin(); e.put(randomBytes(144 + 32 * Int(rng.next() % 4), using: &rng)); e.end()
            e.end()
            parts.append(e.bytes)
        }
        parts.append([0xFF, 0x01, 0x00, 0x01, 0x00])  // renegotiation_info
        parts.shuffle(using: &rng)
        for p in parts { w.put(p) }

        w.put(grease[3], grease[3]); w.put([0x00, 0x01, 0x00])
        let short = 513 - w.bytes.count
        if short > 0 {  // padding extension up to a 517-byte record
            w.put([0x00, 0x15]); w.begin(); w.put([UInt8](repeating: 0, count: short)); w.end()
        }
        w.end(); w.end(); w.end()

        var hello = w.bytes
        var digest = HMAC<SHA256>.authenticationCode(for: hello, using: secret).bytes
        let t = readLE32(digest, 28) ^ unixTime
        digest.replaceSubrange(28..<32, with: le32Bytes(t))
        hello.replaceSubrange(11..<43, with: digest)
        return (hello, digest)
    }

    /// Checks a ServerHello response (§6.7): a handshake record `16 03 03`, exactly one
    /// ChangeCipherSpec record `14 03 03 00 01 01`, and one application-data record `17 03 03` (tdlib's
    /// layout), where HMAC-SHA256(secret, client_random ‖ response with bytes 11..<43 zeroed) equals
    /// response bytes 11..<43 (compared in constant time).
    ///
    /// - Returns: the length of the response (the bytes to consume), or `nil` when more bytes are needed.
    /// - Throws: ``MTProtoError/fakeTLSFailed(_:)`` for a wrong record layout or digest.
    public static func verifyServerHello<C: Collection<UInt8>>(_ received: C, clientRandom: [UInt8],
                                                               secret: SymmetricKey) throws(MTProtoError) -> Int? {
        let r = Array(received)
        var offset = 0
        for prefix in [[0x16, 0x03, 0x03], [0x14, 0x03, 0x03, 0x00, 0x01, 0x01, 0x17, 0x03, 0x03]] as [[UInt8]] {
            let have = min(prefix.count, r.count - offset)
            guard r[offset..<(offset + have)].elementsEqual(prefix[0..<have]) else {
                throw .fakeTLSFailed("unexpected bytes in the server hello")
            }
            guard r.count - offset >= prefix.count + 2 else { return nil }
            let length = Int(r[offset + prefix.count]) << 8 | Int(r[offset + prefix.count + 1])
            offset += prefix.count + 2
            if offset == 5 && length < 38 { throw .fakeTLSFailed("server hello record too short") }
            guard r.count - offset >= length else { return nil }
            offset += length
        }
        var response = Array(r[0..<offset])
        let serverRandom = Array(response[11..<43])
        response.replaceSubrange(11..<43, with: repeatElement(0, count: 32))
        var mac = HMAC<SHA256>(key: secret)
        mac.update(data: clientRandom)
        mac.update(data: response)
        guard mac.finalize().withUnsafeBytes({ ConstantTime.equals($0, serverRandom) }) else {
            throw .fakeTLSFailed("server hello digest mismatch")
        }
        return offset
    }

    /// Takes the next record off the front of `queue`: a ChangeCipherSpec (`14`) or application data
    /// (`17`) record of version `03 03`, at most ``maxReceivedRecordPayload`` bytes. Returns its type and
    /// payload, or nil (nothing consumed) while it is incomplete.
    /// - Throws: ``MTProtoError/fakeTLSFailed(_:)`` for another header or an oversized record (nothing consumed).
    static func takeRecord(from queue: inout ByteQueue) throws(MTProtoError) -> (type: UInt8, payload: [UInt8])? {
        guard queue.count >= 5 else { return nil }
        let type = queue[0]
        guard queue[1] == 0x03 && queue[2] == 0x03 && (type == 0x14 || type == 0x17) else {
            throw .fakeTLSFailed("unexpected TLS record header")
        }
        let length = Int(queue[3]) << 8 | Int(queue[4])
        guard length <= maxReceivedRecordPayload else { throw .fakeTLSFailed("TLS record of \(length) bytes") }
        guard queue.count >= 5 + length else { return nil }
        let payload = queue.bytes(5..<(5 + length))
        queue.consume(5 + length)
        return (type, payload)
    }

    /// Seven GREASE values `(random & 0xF0) | 0x0A`, neighbours (0,1), (2,3), (4,5) made to differ.
    static func makeGrease<R: RandomNumberGenerator>(using rng: inout R) -> [UInt8] {
        var g = randomBytes(7, using: &rng).map { ($0 & 0xF0) | 0x0A }
        for i in stride(from: 1, to: g.count, by: 2) where g[i] == g[i - 1] { g[i] ^= 0x10 }
        return g
    }

    /// 1184 bytes shaped like an ML-KEM-768 encapsulation key: 768 coefficients below 3329 packed
    /// 12 bits each, then a 32-byte seed.
    static func mlkemLikeKey<R: RandomNumberGenerator>(using rng: inout R) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1184)
        for _ in 0..<384 {
            let a = UInt16.random(in: 0..<3329, using: &rng)
            let b = UInt16.random(in: 0..<3329, using: &rng)
            out.append(UInt8(truncatingIfNeeded: a))
            out.append(UInt8(truncatingIfNeeded: a >> 8) | UInt8(truncatingIfNeeded: (b & 15) << 4))
            out.append(UInt8(truncatingIfNeeded: b >> 4))
        }
        out.append(contentsOf: randomBytes(32, using: &rng))
        return out
    }

    /// A valid X25519 public key (the public key of a throwaway private key).
    static func x25519Point<R: RandomNumberGenerator>(using rng: inout R) -> [UInt8] {
        Curve25519.KeyAgreement.PrivateKey(using: &rng).publicKey.rawRepresentation
    }
}

/// Appends bytes with nested 16-bit big-endian length scopes.
struct HelloWriter {
    var bytes: [UInt8] = []
    var scopes: [Int] = []
    mutating func put(_ b: [UInt8]) { bytes.append(contentsOf: b) }
    mutating func put(_ a: UInt8, _ b: UInt8) { bytes.append(a); bytes.append(b) }
    mutating func begin() { scopes.append(bytes.count); bytes.append(0); bytes.append(0) }
    mutating func end() {
        guard let start = scopes.popLast() else { return }
        let n = bytes.count - start - 2  // all lengths here are far below 2^16
        bytes[start] = UInt8(truncatingIfNeeded: n >> 8)
        bytes[start + 1] = UInt8(truncatingIfNeeded: n)
    }
}

/// The client end of a fake-TLS connection (Docs/MTProto.md §6.7): a ClientHello, the server-hello check, then an
/// obfuscated2 stream (§6.6) inside TLS application-data records.
///
/// ```swift
/// let tls = try FakeTLSClient(secret: secret, unixTime: now, using: &rng)
/// send(tls.clientHello)
/// tls.feed(received); while let e = try tls.next() { ... }   // verifies the server hello first
/// send(try tls.encode(message, using: &rng))
/// ```
///
/// The first encoded output starts with a ChangeCipherSpec record and carries the obfuscated2 header as
/// its first application data; writes are split into records of at most 2878 bytes. Incoming
/// ChangeCipherSpec records are skipped, application-data payloads are decrypted and decoded.
/// tdlib waits for the server hello before its first write; this codec does not enforce it.
/// Errors are sticky: once ``next()`` throws, every later call throws the same error (a verified server
/// hello and records unwrapped before the bad bytes are kept); close the connection.
public final class FakeTLSClient {
    /// The ClientHello record to send first.
    public let clientHello: [UInt8]
    /// The 32 bytes at offset 11..<43 of the hello, which the server's digest covers.
    public let clientRandom: [UInt8]
    /// Whether the server hello has been received and verified.
    public private(set) var isHandshakeComplete = false

    let secret: SymmetricKey
    let inner: Obfuscated2Codec
    var received = ByteQueue()
    var changeCipherSpecSent = false

    /// A client for an `ee` secret.
    ///
    /// - Parameters:
    ///   - secret: an MTProxy secret in ``MTProxySecret/Mode/fakeTLS(domain:)`` mode.
    ///   - framing: the framing inside the obfuscation (default padded intermediate, as tdlib uses).
    ///   - dcId: the DC id for the obfuscated2 header.
    ///   - unixTime: the current Unix time, server-corrected.
    /// - Throws: ``MTProtoError/invalidProxySecret(_:)`` for a secret without a domain.
    public init<R: RandomNumberGenerator>(secret: MTProxySecret, framing: TransportFraming = .paddedIntermediate,
                                          dcId: Int16? = nil, unixTime: UInt32,
                                          maxPacketLength: Int = TransportLimits.defaultMaxPacketLength,
                                          using rng: inout R) throws(MTProtoError) {
        guard case .fakeTLS(let domain) = secret.mode, !domain.isEmpty else {
            throw .invalidProxySecret("fake-TLS needs an ee secret with a domain")
        }
        self.secret = secret.key
        (clientHello, clientRandom) = FakeTLS.makeClientHello(domain: domain, secret: secret.key, unixTime: unixTime, using: &rng)
        inner = try Obfuscated2Codec(framing: framing, dcId: dcId, secret: secret.key, checkForbidden: false,
                                     maxPacketLength: maxPacketLength, using: &rng)
    }

    /// Frames, encrypts and wraps one packet into TLS records.
    public func encode<P: Collection<UInt8>, R: RandomNumberGenerator>(
        _ packet: P, quickAckRequest: Bool = false, using rng: inout R
    ) throws(MTProtoError) -> [UInt8] {
        let data = try inner.encode(packet, quickAckRequest: quickAckRequest, using: &rng)
        var out: [UInt8] = []
        out.reserveCapacity(data.count + 6 + 5 * (data.count / FakeTLS.maxRecordPayload + 1))
        if !changeCipherSpecSent {
            out.append(contentsOf: FakeTLS.changeCipherSpec)
            changeCipherSpecSent = true
        }
        var i = 0
        while i < data.count {
            let n = min(FakeTLS.maxRecordPayload, data.count - i)
            out.append(contentsOf: [0x17, 0x03, 0x03, UInt8(n >> 8), UInt8(n & 0xFF)])
            out.append(contentsOf: data[i..<(i + n)])
            i += n
        }
        return out
    }

    /// Buffers received bytes. Never fails.
    public func feed<C: Collection<UInt8>>(_ bytes: C) {
        received.append(contentsOf: bytes)
    }

    /// The next event, `nil` when more bytes are needed. Verifies the server hello first.
    /// - Throws: ``MTProtoError/fakeTLSFailed(_:)`` (bad server hello, unexpected record type, oversized
    ///   record) and the errors of ``TransportDecoder/next()``.
    public func next() throws(MTProtoError) -> TransportEvent? {
        if !isHandshakeComplete {
            let head = received.bytes(0..<received.count)
            guard let n = try FakeTLS.verifyServerHello(head, clientRandom: clientRandom, secret: secret) else { return nil }
            received.consume(n)
            isHandshakeComplete = true
        }
        while true {
            if let e = try inner.next() { return e }
            guard let (type, payload) = try FakeTLS.takeRecord(from: &received) else { return nil }
            if type == 0x17 { inner.feed(payload) }  // the server's ChangeCipherSpec is skipped
        }
    }
}
