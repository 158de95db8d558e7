// libsodium's ChaCha20 (IETF), ChaCha20-Poly1305 (IETF) and Argon2id (crypto_pwhash), for tests and the
// benchmark. Same technique as Sodium+Salsa.swift: `dlsym` with `@convention(c)` types written from
// libsodium's documented prototypes.

/// libsodium's `crypto_stream_chacha20_ietf_xor_ic`, `crypto_aead_chacha20poly1305_ietf_{en,de}crypt`
/// and `crypto_pwhash` (Argon2id 1.3). Use through ``Sodium/chacha``.
public final class SodiumChaCha: @unchecked Sendable {
    /// The loaded functions, or `nil` when libsodium (or one of these symbols) is absent.
    public static let shared: SodiumChaCha? = SodiumChaCha()

    // int crypto_stream_chacha20_ietf_xor_ic(unsigned char *c, const unsigned char *m, unsigned long long mlen,
    //                                        const unsigned char *n, uint32_t ic, const unsigned char *k)
    typealias StreamICFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UInt64, UnsafeRawPointer?, UInt32, UnsafeRawPointer?) -> Int32
    // int crypto_aead_chacha20poly1305_ietf_encrypt(unsigned char *c, unsigned long long *clen_p,
    //     const unsigned char *m, unsigned long long mlen, const unsigned char *ad, unsigned long long adlen,
    //     const unsigned char *nsec, const unsigned char *npub, const unsigned char *k)
    typealias EncryptFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt64>?, UnsafeRawPointer?, UInt64,
                                          UnsafeRawPointer?, UInt64, UnsafeRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
    // int crypto_aead_chacha20poly1305_ietf_decrypt(unsigned char *m, unsigned long long *mlen_p, unsigned char *nsec,
    //     const unsigned char *c, unsigned long long clen, const unsigned char *ad, unsigned long long adlen,
    //     const unsigned char *npub, const unsigned char *k)
    typealias DecryptFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt64>?, UnsafeMutableRawPointer?,
                                          UnsafeRawPointer?, UInt64, UnsafeRawPointer?, UInt64, UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
    // int crypto_pwhash(unsigned char *out, unsigned long long outlen, const char *passwd, unsigned long long passwdlen,
    //     const unsigned char *salt, unsigned long long opslimit, size_t memlimit, int alg)
    typealias PwhashFn = @convention(c) (UnsafeMutableRawPointer?, UInt64, UnsafeRawPointer?, UInt64, UnsafeRawPointer?,
                                         UInt64, Int, Int32) -> Int32
    typealias IntFn = @convention(c) () -> Int32

    let streamIC: StreamICFn, encryptFn: EncryptFn, decryptFn: DecryptFn, pwhashFn: PwhashFn
    /// `crypto_pwhash_ALG_ARGON2ID13` (2).
    let argon2id13: Int32

    private init?() {
        guard let (h, _) = openLibrary(["libsodium.so.23", "libsodium.so.26", "libsodium.so", "libsodium.23.dylib", "libsodium.dylib"]),
              Sodium.shared != nil,  // sodium_init has run
              let streamIC = symbol(h, "crypto_stream_chacha20_ietf_xor_ic", as: StreamICFn.self),
              let encryptFn = symbol(h, "crypto_aead_chacha20poly1305_ietf_encrypt", as: EncryptFn.self),
              let decryptFn = symbol(h, "crypto_aead_chacha20poly1305_ietf_decrypt", as: DecryptFn.self),
              let pwhashFn = symbol(h, "crypto_pwhash", as: PwhashFn.self),
              let alg = symbol(h, "crypto_pwhash_alg_argon2id13", as: IntFn.self)
        else { return nil }
        self.streamIC = streamIC; self.encryptFn = encryptFn; self.decryptFn = decryptFn; self.pwhashFn = pwhashFn
        argon2id13 = alg()
    }

    // MARK: Raw buffers (benchmark)

    /// `crypto_aead_chacha20poly1305_ietf_encrypt`: `out` receives `ciphertext ‖ tag` (`message.count + 16` bytes).
    public func aeadEncrypt(_ message: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer,
                            nonce: UnsafeRawPointer, key: UnsafeRawPointer) {
        var clen: UInt64 = 0
        _ = encryptFn(out, &clen, message.baseAddress, UInt64(message.count), aad.baseAddress, UInt64(aad.count), nil, nonce, key)
    }

    /// `crypto_aead_chacha20poly1305_ietf_decrypt` of `ciphertext ‖ tag`; `false` when it does not verify.
    public func aeadDecrypt(_ box: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer,
                            nonce: UnsafeRawPointer, key: UnsafeRawPointer) -> Bool {
        var mlen: UInt64 = 0
        return decryptFn(out, &mlen, nil, box.baseAddress, UInt64(box.count), aad.baseAddress, UInt64(aad.count), nonce, key) == 0
    }

    /// `crypto_pwhash` with Argon2id 1.3 (`opslimit` = t, `memlimit` = m KiB · 1024; p is always 1).
    /// Returns `false` when libsodium refuses the parameters.
    public func argon2id(password: UnsafeRawBufferPointer, salt16: UnsafeRawPointer, iterations: Int, memoryKiB: Int,
                         into out: UnsafeMutableRawBufferPointer) -> Bool {
        pwhashFn(out.baseAddress, UInt64(out.count), password.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                 UInt64(password.count), salt16, UInt64(iterations), memoryKiB * 1024, argon2id13) == 0
    }

    // MARK: Arrays (tests)

    /// `crypto_stream_chacha20_ietf_xor_ic`.
    public func chacha20Xor(_ input: [UInt8], nonce: [UInt8], key: [UInt8], ic: UInt32) -> [UInt8] {
        precondition(nonce.count == 12 && key.count == 32)
        var out = [UInt8](repeating: 0, count: input.count + 1)
        input.withUnsafeBytes { m in nonce.withUnsafeBytes { n in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { _ = streamIC($0.baseAddress, m.baseAddress, UInt64(m.count), n.baseAddress, ic, k.baseAddress) }
        } } }
        return Array(out.dropLast())
    }

    /// `ciphertext ‖ tag`.
    public func aeadEncrypt(_ message: [UInt8], aad: [UInt8], nonce: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(nonce.count == 12 && key.count == 32)
        var out = [UInt8](repeating: 0, count: message.count + 16)
        message.withUnsafeBytes { m in aad.withUnsafeBytes { a in nonce.withUnsafeBytes { n in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { aeadEncrypt(m, aad: a, into: $0.baseAddress!, nonce: n.baseAddress!, key: k.baseAddress!) }
        } } } }
        return out
    }

    /// The message, or `nil` when `ciphertext ‖ tag` does not verify.
    public func aeadDecrypt(_ box: [UInt8], aad: [UInt8], nonce: [UInt8], key: [UInt8]) -> [UInt8]? {
        precondition(nonce.count == 12 && key.count == 32)
        guard box.count >= 16 else { return nil }
        var out = [UInt8](repeating: 0, count: box.count - 16 + 1)
        let ok = box.withUnsafeBytes { b in aad.withUnsafeBytes { a in nonce.withUnsafeBytes { n in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { aeadDecrypt(b, aad: a, into: $0.baseAddress!, nonce: n.baseAddress!, key: k.baseAddress!) }
        } } } }
        return ok ? Array(out.dropLast()) : nil
    }

    /// Argon2id 1.3 with p = 1 and a 16-byte salt, or `nil` when libsodium refuses the parameters
    /// (its minimum is t = 1, 8 KiB, 16-byte output).
    public func argon2id(password: [UInt8], salt: [UInt8], iterations: Int, memoryKiB: Int, length: Int) -> [UInt8]? {
        precondition(salt.count == 16)
        var out = [UInt8](repeating: 0, count: length)
        let ok = password.withUnsafeBytes { p in salt.withUnsafeBytes { s in
            out.withUnsafeMutableBytes { argon2id(password: p, salt16: s.baseAddress!, iterations: iterations, memoryKiB: memoryKiB, into: $0) }
        } }
        return ok ? out : nil
    }
}

extension Sodium {
    /// libsodium's ChaCha20, ChaCha20-Poly1305 and Argon2id functions, when present.
    public var chacha: SodiumChaCha? { SodiumChaCha.shared }
}
