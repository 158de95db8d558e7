// msg_key (v2 and v1), the message KDF (v2 and v1) and the quick-ack value (Docs/MTProto.md §1.2–§1.4, §1.7).
// Public because secret chats (§7.3, x by creator role) and bind_auth_key_inner (§5, v1) reuse them.

/// The direction of a message, which selects the offset `x` into the auth key (Docs/MTProto.md §1.2):
/// 0 for client→server, 8 for server→client.
///
/// In secret chats `x` follows the chat *creator* role instead (Docs/MTProto.md §7.3, §9.6): the creator
/// sends with ``clientToServer`` and the other party with ``serverToClient``.
public enum MTProtoDirection: Sendable, Hashable {
    /// Client to server: `x = 0`.
    case clientToServer
    /// Server to client: `x = 8`.
    case serverToClient

    /// The KDF offset `x`.
    @inlinable public var x: Int { self == .clientToServer ? 0 : 8 }
}

/// Which end of an MTProto connection a value works for.
public enum MTProtoRole: Sendable, Hashable {
    /// The client: sends with x = 0, msg_ids ≡ 0 (mod 4).
    case client
    /// The server: sends with x = 8, msg_ids ≡ 1 (responses) or 3 (other messages) (mod 4).
    case server

    /// The direction of messages this role sends.
    @inlinable public var outgoing: MTProtoDirection { self == .client ? .clientToServer : .serverToClient }
    /// The direction of messages this role receives.
    @inlinable public var incoming: MTProtoDirection { self == .client ? .serverToClient : .clientToServer }
    /// The other end.
    @inlinable public var peer: MTProtoRole { self == .client ? .server : .client }
}

/// `msg_key`, the 128-bit value that authenticates an encrypted message and keys its encryption.
public enum MessageKey {
    /// MTProto 2.0 `msg_key` (Docs/MTProto.md §1.2): the middle 128 bits (bytes 8..<24) of
    /// `msg_key_large = SHA256(auth_key[88+x ..< 120+x] ‖ plaintext)`, where `plaintext` is the whole
    /// plaintext **including padding**.
    public static func v2(authKey: AuthKey, plaintext: some Collection<UInt8>, direction: MTProtoDirection) -> [UInt8] {
        var large = SIMD32<UInt8>()
        withContiguousBytes(plaintext) { p in
            withUnsafeMutableBytes(of: &large) { messageKeyLarge(authKey, direction.x, p, into: $0.baseAddress!) }
        }
        return withUnsafeBytes(of: &large) { Array($0[8..<24]) }
    }

    /// MTProto 1.0 `msg_key` (Docs/MTProto.md §1.4): the lower 128 bits (bytes 4..<20) of SHA1 over the
    /// plaintext **without** padding. Used by `bind_auth_key_inner` (§5) and legacy secret chats.
    public static func v1(plaintext: some Collection<UInt8>) -> [UInt8] {
        let d = withContiguousBytes(plaintext) { Insecure.SHA1.hash(bufferPointer: $0) }
        return d.withUnsafeBytes { Array($0[4..<20]) }
    }
}

/// The message KDF: AES-256-IGE key and IV from the auth key and `msg_key`.
///
/// The results are secret: wipe them (`secureWipe()`) when done.
public enum MessageKDF {
    /// MTProto 2.0 KDF (Docs/MTProto.md §1.3):
    /// ```
    /// sha256_a = SHA256(msg_key ‖ auth_key[x ..< x+36])
    /// sha256_b = SHA256(auth_key[40+x ..< 76+x] ‖ msg_key)
    /// aes_key  = sha256_a[0..<8] ‖ sha256_b[8..<24] ‖ sha256_a[24..<32]
    /// aes_iv   = sha256_b[0..<8] ‖ sha256_a[8..<24] ‖ sha256_b[24..<32]
    /// ```
    /// - Throws: ``MTProtoError/invalidMessage(_:)`` unless `messageKey` has 16 bytes.
    public static func v2(authKey: AuthKey, messageKey: some Collection<UInt8>, direction: MTProtoDirection) throws(MTProtoError) -> (key: [UInt8], iv: [UInt8]) {
        guard messageKey.count == 16 else { throw .invalidMessage("msg_key must be 16 bytes") }
        var out = SIMD64<UInt8>()
        withContiguousBytes(messageKey) { m in
            withUnsafeMutableBytes(of: &out) { kdfV2(authKey, direction.x, m.baseAddress!, into: $0.baseAddress!) }
        }
        let r = withUnsafeBytes(of: &out) { (Array($0[0..<32]), Array($0[32..<64])) }
        withUnsafeMutableBytes(of: &out) { secureZero($0) }
        return (r.0, r.1)
    }

    /// MTProto 1.0 KDF (Docs/MTProto.md §1.4), four SHA1s over the msg_key and auth key bytes 0..<128+x:
    /// ```
    /// sha1_a = SHA1(msg_key ‖ auth_key[x ..< x+32])
    /// sha1_b = SHA1(auth_key[32+x ..< 48+x] ‖ msg_key ‖ auth_key[48+x ..< 64+x])
    /// sha1_c = SHA1(auth_key[64+x ..< 96+x] ‖ msg_key)
    /// sha1_d = SHA1(msg_key ‖ auth_key[96+x ..< 128+x])
    /// aes_key = sha1_a[0..<8] ‖ sha1_b[8..<20] ‖ sha1_c[4..<16]
    /// aes_iv  = sha1_a[8..<20] ‖ sha1_b[0..<8] ‖ sha1_c[16..<20] ‖ sha1_d[0..<8]
    /// ```
    /// - Throws: ``MTProtoError/invalidMessage(_:)`` unless `messageKey` has 16 bytes.
    public static func v1(authKey: AuthKey, messageKey: some Collection<UInt8>, direction: MTProtoDirection) throws(MTProtoError) -> (key: [UInt8], iv: [UInt8]) {
        guard messageKey.count == 16 else { throw .invalidMessage("msg_key must be 16 bytes") }
        let x = direction.x
        return withContiguousBytes(messageKey) { m in
            func k(_ o: Int, _ n: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: authKey.pointer(o + x), count: n) }
            var a = sha1([m, k(0, 32)]), b = sha1([k(32, 16), m, k(48, 16)])
            var c = sha1([k(64, 32), m]), d = sha1([m, k(96, 32)])
            let key = Array(a[0..<8]) + Array(b[8..<20]) + Array(c[4..<16])
            let iv = Array(a[8..<20]) + Array(b[0..<8]) + Array(c[16..<20]) + Array(d[0..<8])
            a.secureWipe(); b.secureWipe(); c.secureWipe(); d.secureWipe()
            return (key, iv)
        }
    }

    private static func sha1(_ parts: [UnsafeRawBufferPointer]) -> [UInt8] {
        var h = Insecure.SHA1()
        for p in parts { h.update(bufferPointer: p) }
        var d = h.finalize()
        let out = d.bytes
        withUnsafeMutableBytes(of: &d) { secureZero($0) }
        withUnsafeMutableBytes(of: &h) { secureZero($0) }
        return out
    }
}

/// The quick-ack value a server sends back for a packet whose sender asked for one (Docs/MTProto.md §1.7).
public enum QuickAck {
    /// v2: `UInt32LE(msg_key_large[0..<4]) | 0x80000000`, with `msg_key_large` as in
    /// ``MessageKey/v2(authKey:plaintext:direction:)`` (the sender's direction, padding included).
    public static func v2(authKey: AuthKey, plaintext: some Collection<UInt8>, direction: MTProtoDirection) -> UInt32 {
        var large = SIMD32<UInt8>()
        withContiguousBytes(plaintext) { p in
            withUnsafeMutableBytes(of: &large) { messageKeyLarge(authKey, direction.x, p, into: $0.baseAddress!) }
        }
        return withUnsafeBytes(of: &large) { ($0.baseAddress!).loadLE32(0) } | 0x8000_0000
    }

    /// v1: `UInt32LE(SHA1(plaintext)[0..<4]) | 0x80000000` over the plaintext without padding.
    public static func v1(plaintext: some Collection<UInt8>) -> UInt32 {
        let d = withContiguousBytes(plaintext) { Insecure.SHA1.hash(bufferPointer: $0) }
        return d.withUnsafeBytes { ($0.baseAddress!).loadLE32(0) } | 0x8000_0000
    }
}

// MARK: - Raw-buffer cores (the envelope's hot path)

/// `msg_key_large = SHA256(auth_key[88+x ..< 120+x] ‖ plaintext)` into `out` (32 bytes): two
/// pieces hashed in sequence, nothing concatenated.
@inline(__always)
func messageKeyLarge(_ key: AuthKey, _ x: Int, _ plaintext: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
    var h = SHA256()
    h.update(bufferPointer: UnsafeRawBufferPointer(start: key.pointer(88 + x), count: 32))
    h.update(bufferPointer: plaintext)
    storeDigest(h.finalize(), out)
    withUnsafeMutableBytes(of: &h) { secureZero($0) }
}

/// KDF v2 into `out`: aes_key (32 bytes) then aes_iv (32 bytes). `msgKey` points at 16 bytes.
@inline(__always)
func kdfV2(_ key: AuthKey, _ x: Int, _ msgKey: UnsafeRawPointer, into out: UnsafeMutableRawPointer) {
    // sha256_a = SHA256(msg_key ‖ auth_key[x ..< x+36]), sha256_b = SHA256(auth_key[40+x ..< 76+x] ‖ msg_key):
    // 52 bytes each, so each is one padded block, built here and compressed once.
    var blocks = (SIMD64<UInt8>(), SIMD64<UInt8>(), SIMD64<UInt8>())
    withUnsafeMutableBytes(of: &blocks) { s in
        let ba = s.baseAddress!, bb = ba + 64, a = ba + 128, b = ba + 160
        ba.copyMemory(from: msgKey, byteCount: 16)
        (ba + 16).copyMemory(from: key.pointer(x), byteCount: 36)
        bb.copyMemory(from: key.pointer(40 + x), byteCount: 36)
        (bb + 36).copyMemory(from: msgKey, byteCount: 16)
        ba.storeBytes(of: 0x80, toByteOffset: 52, as: UInt8.self)
        bb.storeBytes(of: 0x80, toByteOffset: 52, as: UInt8.self)
        ba.storeBE64(52 * 8, 56)
        bb.storeBE64(52 * 8, 56)
        SHA256.digest(ofPaddedBlock: ba, into: a)
        SHA256.digest(ofPaddedBlock: bb, into: b)
        // aes_key = a[0..<8] ‖ b[8..<24] ‖ a[24..<32]; aes_iv = b[0..<8] ‖ a[8..<24] ‖ b[24..<32]
        out.copyMemory(from: a, byteCount: 8)
        (out + 8).copyMemory(from: b + 8, byteCount: 16)
        (out + 24).copyMemory(from: a + 24, byteCount: 8)
        (out + 32).copyMemory(from: b, byteCount: 8)
        (out + 40).copyMemory(from: a + 8, byteCount: 16)
        (out + 56).copyMemory(from: b + 24, byteCount: 8)
        secureZero(s)
    }
}

/// Copies a SHA-256 digest into `out` and wipes the digest value.
@inline(__always)
func storeDigest(_ digest: SHA256Digest, _ out: UnsafeMutableRawPointer) {
    var d = digest
    d.withUnsafeBytes { out.copyMemory(from: $0.baseAddress!, byteCount: 32) }
    withUnsafeMutableBytes(of: &d) { secureZero($0) }
}
