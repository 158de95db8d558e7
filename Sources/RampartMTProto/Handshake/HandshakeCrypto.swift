// The cryptographic pieces of the handshake: the temporary AES key/IV (Docs/MTProto.md §3.4), the hashed and
// padded IGE payloads of server_DH_params_ok and set_client_DH_params (§3.2 steps 6–7),
// new_nonce_hashN (§3.2 step 9), RSA_PAD (§3.3) and the legacy SHA-1 RSA padding (§3.5).

/// Random bytes from an injected generator: `count` bytes taken from ⌈count/8⌉ calls to `next()`,
/// each word's bytes in little-endian order (the unused tail of the last word is dropped).
public enum MTProtoRandom {
    /// `count` random bytes from `rng`.
    public static func bytes<R: RandomNumberGenerator>(_ count: Int, using rng: inout R) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: max(count, 0))
        var i = 0
        while i < out.count {
            let w = rng.next()
            var k = 0
            while k < 8 && i < out.count {
                out[i] = UInt8(truncatingIfNeeded: w >> (8 * UInt64(k)))
                i += 1
                k += 1
            }
        }
        return out
    }
}

/// The handshake's hash-and-encrypt helpers.
public enum HandshakeCrypto {
    /// `tmp_aes_key` and `tmp_aes_iv` from new_nonce and server_nonce (Docs/MTProto.md §3.4).
    /// The returned arrays hold the key: wipe them (`secureWipe()`) when done.
    public static func temporaryKeyIV(newNonce: [UInt8], serverNonce: [UInt8]) -> (key: [UInt8], iv: [UInt8]) {
        let (key, iv) = newNonce.withUnsafeBytes { temporaryKeyIV(newNonce: $0, serverNonce: serverNonce) }
        return (key.bytes, iv.bytes)
    }

    /// `tmp_aes_key` and `tmp_aes_iv` in wiped storage, hashed incrementally: no concatenation of
    /// new_nonce is ever made (each would be a stray copy of the secret).
    static func temporaryKeyIV(newNonce: SecretBytes, serverNonce: [UInt8]) -> (key: SecretBytes, iv: SecretBytes) {
        newNonce.withUnsafeBytes { temporaryKeyIV(newNonce: $0, serverNonce: serverNonce) }
    }

    static func temporaryKeyIV(newNonce nn: UnsafeRawBufferPointer, serverNonce: [UInt8]) -> (key: SecretBytes, iv: SecretBytes) {
        serverNonce.withUnsafeBytes { sn in
            func sha1(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Insecure.SHA1.Digest {
                var h = Insecure.SHA1()
                h.update(bufferPointer: a)
                h.update(bufferPointer: b)
                return h.finalize()
            }
            let hNS = sha1(nn, sn), hSN = sha1(sn, nn), hNN = sha1(nn, nn)   // digests live on the stack
            let key = SecretBytes(count: 32) { out in
                hNS.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: 20) }
                hSN.withUnsafeBytes { (out.baseAddress! + 20).copyMemory(from: $0.baseAddress!, byteCount: 12) }
            }
            let iv = SecretBytes(count: 32) { out in
                hSN.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress! + 12, byteCount: 8) }
                hNN.withUnsafeBytes { (out.baseAddress! + 8).copyMemory(from: $0.baseAddress!, byteCount: 20) }
                (out.baseAddress! + 28).copyMemory(from: nn.baseAddress!, byteCount: min(4, nn.count))
            }
            return (key, iv)
        }
    }

    /// `new_nonce_hashN = SHA1(new_nonce ‖ N ‖ auth_key_aux_hash)[4..<20]` (Docs/MTProto.md §3.2 step 9),
    /// hashed incrementally (no concatenated copy of new_nonce).
    public static func newNonceHash(newNonce: [UInt8], number: UInt8, authKeyAuxHash: [UInt8]) -> [UInt8] {
        newNonce.withUnsafeBytes { newNonceHash(newNonce: $0, number: number, authKeyAuxHash: authKeyAuxHash) }
    }

    static func newNonceHash(newNonce: SecretBytes, number: UInt8, authKeyAuxHash: [UInt8]) -> [UInt8] {
        newNonce.withUnsafeBytes { newNonceHash(newNonce: $0, number: number, authKeyAuxHash: authKeyAuxHash) }
    }

    static func newNonceHash(newNonce: UnsafeRawBufferPointer, number: UInt8, authKeyAuxHash: [UInt8]) -> [UInt8] {
        var h = Insecure.SHA1()
        h.update(bufferPointer: newNonce)
        h.update(data: [number])
        h.update(data: authKeyAuxHash)
        return Array(h.finalize().bytes[4..<20])
    }

    /// The initial server salt (Docs/MTProto.md §2.3; see ``ServerSalts/initialSalt(newNonce:serverNonce:)``).
    /// The handshake's nonces always have the right sizes (int256, int128).
    static func initialSalt(newNonce: SecretBytes, serverNonce: [UInt8]) -> Int64 {
        newNonce.withUnsafeBytes { nn in
            guard nn.count == 32, serverNonce.count == 16 else { return 0 }
            var v: UInt64 = 0
            for i in 0..<8 { v |= UInt64(nn[i] ^ serverNonce[i]) << (8 * UInt64(i)) }
            return Int64(bitPattern: v)   // the same value as ServerSalts.initialSalt, without a copy
        }
    }

    /// `SHA1(new_nonce)[4..<20]`, the hash in `server_DH_params_fail`.
    public static func newNonceHashForFail(newNonce: [UInt8]) -> [UInt8] {
        Array(Insecure.SHA1.hash(data: newNonce).bytes[4..<20])
    }

    static func newNonceHashForFail(newNonce: SecretBytes) -> [UInt8] {
        newNonce.withUnsafeBytes { Array(Insecure.SHA1.hash(bufferPointer: $0).bytes[4..<20]) }
    }

    /// ``hashAndEncrypt(_:key:iv:using:)`` with the key and IV in wiped storage.
    static func hashAndEncrypt<R: RandomNumberGenerator>(_ data: [UInt8], key: SecretBytes, iv: SecretBytes,
                                                         using rng: inout R) throws(MTProtoError) -> [UInt8] {
        try key.withBytes { (k) throws(MTProtoError) in
            try iv.withBytes { (v) throws(MTProtoError) in try hashAndEncrypt(data, key: k, iv: v, using: &rng) }
        }
    }

    /// ``decryptAndVerify(_:key:iv:parse:)`` with the key and IV in wiped storage.
    static func decryptAndVerify<T>(_ encrypted: [UInt8], key: SecretBytes, iv: SecretBytes,
                                    parse: (inout TLReader) throws(MTProtoError) -> T) throws(MTProtoError) -> T {
        try key.withBytes { (k) throws(MTProtoError) in
            try iv.withBytes { (v) throws(MTProtoError) in try decryptAndVerify(encrypted, key: k, iv: v, parse: parse) }
        }
    }

    /// `AES-IGE(SHA1(data) ‖ data ‖ padding)` with the temporary key/IV; padding is the random
    /// 0…15 bytes that make the total a multiple of 16 (Docs/MTProto.md §3.2 steps 6 and 7).
    public static func hashAndEncrypt<R: RandomNumberGenerator>(_ data: [UInt8], key: [UInt8], iv: [UInt8],
                                                                using rng: inout R) throws(MTProtoError) -> [UInt8] {
        let withHash = Insecure.SHA1.hash(data: data).bytes + data
        let pad = (16 - withHash.count % 16) % 16
        let plain = withHash + MTProtoRandom.bytes(pad, using: &rng)
        do {
            return try AES.IGE.encrypt(plain, using: try AES.Cipher(key: key), iv: iv)
        } catch {
            throw .primitive(error)
        }
    }

    /// Decrypts an answer made by ``hashAndEncrypt(_:key:iv:using:)`` and hands the reader positioned
    /// at offset 20 to `parse`; then checks that fewer than 16 bytes are left and that the SHA-1 of
    /// the parsed bytes equals the leading 20 bytes. The decrypted buffer is wiped afterwards.
    public static func decryptAndVerify<T>(_ encrypted: [UInt8], key: [UInt8], iv: [UInt8],
                                           parse: (inout TLReader) throws(MTProtoError) -> T) throws(MTProtoError) -> T {
        guard encrypted.count >= 32, encrypted.count % 16 == 0 else {
            throw .handshakeFailed("encrypted payload length \(encrypted.count) is not a positive multiple of 16")
        }
        var plain: [UInt8]
        do {
            plain = try AES.IGE.decrypt(encrypted, using: try AES.Cipher(key: key), iv: iv)
        } catch {
            throw .primitive(error)
        }
        defer { plain.withUnsafeMutableBytes { secureZero($0) } }
        var r = TLReader(plain)
        try r.skip(20)
        let value: T
        do {
            value = try parse(&r)
        } catch {
            throw .handshakeFailed("encrypted payload does not parse")
        }
        let end = r.position
        guard plain.count - end < 16 else { throw .handshakeFailed("more than 15 padding bytes") }
        let digest = Insecure.SHA1.hash(data: plain[20..<end])
        guard digest.constantTimeEquals(plain[0..<20]) else { throw .handshakeFailed("SHA-1 of the payload does not match") }
        return value
    }
}

/// RSA_PAD (Docs/MTProto.md §3.3), the padding MTProto uses to RSA-encrypt `p_q_inner_data*`.
public enum RSAPad {
    /// Encrypts `data` (at most 144 bytes) for `key` (a 2048-bit modulus): 192-byte padded data,
    /// reversed, with SHA-256(temp_key ‖ padded), IGE under a random temp_key with a zero IV, the
    /// temp_key masked with SHA-256 of that, then raw RSA. Randomness: the padding first, then a
    /// temp_key per attempt (a new one whenever the block is not below the modulus).
    public static func encrypt<R: RandomNumberGenerator>(_ data: [UInt8], key: RSA.PublicKey,
                                                         using rng: inout R) throws(MTProtoError) -> [UInt8] {
        guard data.count <= 144 else { throw .handshakeFailed("RSA_PAD data longer than 144 bytes") }
        guard key.byteCount == 256 else { throw .handshakeFailed("RSA_PAD needs a 2048-bit key") }
        // Every buffer that holds the data (new_nonce is in it) is built at its final size and wiped.
        var padded = [UInt8](repeating: 0, count: 192)
        padded.withUnsafeMutableBytes { out in
            data.withUnsafeBytes { if let b = $0.baseAddress { out.baseAddress!.copyMemory(from: b, byteCount: $0.count) } }
            fillRandom(UnsafeMutableRawBufferPointer(start: out.baseAddress! + data.count, count: 192 - data.count), using: &rng)
        }
        defer { padded.secureWipe() }
        var dataWithHash = [UInt8](repeating: 0, count: 224)
        defer { dataWithHash.secureWipe() }
        for i in 0..<192 { dataWithHash[i] = padded[191 - i] }
        for _ in 0..<64 {
            var tempKey = MTProtoRandom.bytes(32, using: &rng)
            defer { tempKey.withUnsafeMutableBytes { secureZero($0) } }
            var hasher = SHA256()
            hasher.update(data: tempKey)
            hasher.update(data: padded)
            hasher.finalize().withUnsafeBytes { d in for i in 0..<32 { dataWithHash[192 + i] = d[i] } }
            let aesEncrypted: [UInt8]
            do {
                aesEncrypted = try AES.IGE.encrypt(dataWithHash, using: try AES.Cipher(key: tempKey),
                                                   iv: [UInt8](repeating: 0, count: 32))
            } catch {
                throw .primitive(error)
            }
            let h = SHA256.hash(data: aesEncrypted).bytes
            let block = (0..<32).map { tempKey[$0] ^ h[$0] } + aesEncrypted
            guard BigUInt(bigEndian: block) < key.modulus else { continue }
            do {
                return try key.rawPublic(block)
            } catch {
                throw .primitive(error)
            }
        }
        throw .handshakeFailed("RSA_PAD found no block below the modulus")
    }

    /// The server side (gotd's `DecodeRSAPad`): decrypts with the private key and returns the 192
    /// bytes of `data_with_padding` after checking the SHA-256. Every failure is the same
    /// ``MTProtoError/handshakeFailed(_:)``.
    public static func decrypt(_ encrypted: [UInt8], key: RSA.PrivateKey) throws(MTProtoError) -> [UInt8] {
        var m = try RSAHandshakeBlock.decrypt(encrypted, key: key, failure: failure)
        defer { m.withUnsafeMutableBytes { secureZero($0) } }
        return try unpad(m)
    }

    static let failure = MTProtoError.handshakeFailed("RSA_PAD payload does not decode")

    /// The RSA_PAD checks on an already decrypted 256-byte block `m`.
    static func unpad(_ m: [UInt8]) throws(MTProtoError) -> [UInt8] {
        guard m.count == 256 else { throw failure }
        let h = SHA256.hash(data: m[32..<256]).bytes
        var tempKey = (0..<32).map { m[$0] ^ h[$0] }
        defer { tempKey.withUnsafeMutableBytes { secureZero($0) } }
        var dataWithHash: [UInt8]
        do {
            dataWithHash = try AES.IGE.decrypt(m[32..<256], using: try AES.Cipher(key: tempKey),
                                               iv: [UInt8](repeating: 0, count: 32))
        } catch {
            throw failure
        }
        defer { dataWithHash.withUnsafeMutableBytes { secureZero($0) } }
        // The result (new_nonce is in it) is the caller's to wipe.
        var padded = [UInt8](repeating: 0, count: 192)
        for i in 0..<192 { padded[i] = dataWithHash[191 - i] }
        var hasher = SHA256()
        hasher.update(data: tempKey)
        hasher.update(data: padded)
        guard hasher.finalize().constantTimeEquals(dataWithHash[192..<224]) else {
            padded.secureWipe()
            throw failure
        }
        return padded
    }
}

/// The pre-RSA_PAD encryption (Docs/MTProto.md §3.5): `SHA1(data) ‖ data ‖ random` to 255 bytes, then raw RSA.
/// Still sent by widely used clients with `p_q_inner_data`; the test server accepts it.
public enum RSALegacyPad {
    /// Encrypts `data` (at most 235 bytes) for `key`.
    public static func encrypt<R: RandomNumberGenerator>(_ data: [UInt8], key: RSA.PublicKey,
                                                         using rng: inout R) throws(MTProtoError) -> [UInt8] {
        guard data.count <= 235 else { throw .handshakeFailed("legacy RSA data longer than 235 bytes") }
        guard key.byteCount == 256 else { throw .handshakeFailed("legacy RSA needs a 2048-bit key") }
        var block = [UInt8](repeating: 0, count: 255)
        defer { block.secureWipe() }
        block.withUnsafeMutableBytes { out in
            Insecure.SHA1.hash(data: data).withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: 20) }
            data.withUnsafeBytes { if let b = $0.baseAddress { (out.baseAddress! + 20).copyMemory(from: b, byteCount: $0.count) } }
            fillRandom(UnsafeMutableRawBufferPointer(start: out.baseAddress! + 20 + data.count, count: 235 - data.count), using: &rng)
        }
        do {
            // A 255-byte value is below any 2048-bit modulus with the top bit set.
            return try key.rawPublic(block)
        } catch {
            throw .primitive(error)
        }
    }

    /// Decrypts and returns the reader over `data ‖ padding` with the inner value parsed by `parse`;
    /// the SHA-1 must match the bytes `parse` consumed (the padding is whatever follows).
    public static func decrypt<T>(_ encrypted: [UInt8], key: RSA.PrivateKey,
                                  parse: (inout TLReader) throws(MTProtoError) -> T) throws(MTProtoError) -> T {
        var m = try RSAHandshakeBlock.decrypt(encrypted, key: key, failure: failure)
        defer { m.withUnsafeMutableBytes { secureZero($0) } }
        return try unpad(m, parse: parse)
    }

    static let failure = MTProtoError.handshakeFailed("legacy RSA payload does not decode")

    /// The legacy checks on an already decrypted 256-byte block `m`.
    static func unpad<T>(_ m: [UInt8], parse: (inout TLReader) throws(MTProtoError) -> T) throws(MTProtoError) -> T {
        // The 255-byte block sits right-aligned in 256 bytes: the first byte must be zero.
        guard m.count == 256, m[0] == 0 else { throw failure }
        var r = TLReader(m[21...])
        let value: T
        do {
            value = try parse(&r)
        } catch {
            throw failure
        }
        let end = 21 + r.position
        guard Insecure.SHA1.hash(data: m[21..<end]).constantTimeEquals(m[1..<21]) else { throw failure }
        return value
    }
}

/// The raw RSA private operation on a 256-byte handshake block, shared by both paddings so that a
/// server trying RSA_PAD and then the legacy padding decrypts only once.
enum RSAHandshakeBlock {
    /// `encrypted^d mod n` as 256 bytes (the caller wipes it); every failure is `failure`.
    static func decrypt(_ encrypted: [UInt8], key: RSA.PrivateKey, failure: MTProtoError) throws(MTProtoError) -> [UInt8] {
        guard encrypted.count == 256, key.publicKey.byteCount == 256 else { throw failure }
        do {
            return try key.rawPrivate(encrypted)
        } catch {
            throw failure
        }
    }
}

// Secret bytes kept across handshake steps (new_nonce, the DH exponent, the temporary AES key and
// IV, the pending auth key) are `SecretBytes` (Rampart): owned storage, wiped on release.
