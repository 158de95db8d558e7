// Reference AES: OpenSSL's EVP AES-256 ECB/CBC/CTR/GCM, the legacy AES_set_*_key + AES_ige_encrypt,
// and libsodium's crypto_aead_aes256gcm_*. Loaded with dlopen like the rest of this target.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// OpenSSL AES through EVP (ECB, CBC, CTR, GCM for 128/192/256-bit keys) and the legacy low-level API
/// (`AES_set_encrypt_key`, `AES_set_decrypt_key`, `AES_ige_encrypt`).
public final class OpenSSLAES: @unchecked Sendable {
    /// The loaded functions, or `nil` when libcrypto (or one of these symbols) is missing.
    public static let shared: OpenSSLAES? = OpenSSLAES()

    typealias CipherGetter = @convention(c) () -> OpaquePointer?
    typealias CtxNew = @convention(c) () -> OpaquePointer?
    typealias CtxFree = @convention(c) (OpaquePointer?) -> Void
    typealias CipherInit = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, UnsafeRawPointer?,
                                           UnsafeRawPointer?, Int32) -> Int32
    typealias CipherUpdate = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?,
                                             UnsafeRawPointer?, Int32) -> Int32
    typealias CipherFinal = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> Int32
    typealias SetPadding = @convention(c) (OpaquePointer?, Int32) -> Int32
    typealias Ctrl = @convention(c) (OpaquePointer?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    typealias SetKey = @convention(c) (UnsafeRawPointer?, Int32, UnsafeMutableRawPointer?) -> Int32
    typealias IGE = @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?, Int, UnsafeRawPointer?,
                                    UnsafeMutableRawPointer?, Int32) -> Void

    let ctxNew: CtxNew, ctxFree: CtxFree, cipherInit: CipherInit, cipherUpdate: CipherUpdate
    let cipherFinal: CipherFinal, setPadding: SetPadding, ctrl: Ctrl
    let setEncryptKey: SetKey, setDecryptKey: SetKey, ige: IGE
    /// EVP_CIPHER objects by mode and key length in bytes, e.g. "gcm-32".
    let ciphers: [String: OpaquePointer]

    private init?() {
        guard OpenSSL.shared != nil,
              let (h, _) = openLibrary(["libcrypto.so.3", "libcrypto.so", "libcrypto.3.dylib", "libcrypto.dylib"]),
              let ctxNew = symbol(h, "EVP_CIPHER_CTX_new", as: CtxNew.self),
              let ctxFree = symbol(h, "EVP_CIPHER_CTX_free", as: CtxFree.self),
              let cipherInit = symbol(h, "EVP_CipherInit_ex", as: CipherInit.self),
              let cipherUpdate = symbol(h, "EVP_CipherUpdate", as: CipherUpdate.self),
              let cipherFinal = symbol(h, "EVP_CipherFinal_ex", as: CipherFinal.self),
              let setPadding = symbol(h, "EVP_CIPHER_CTX_set_padding", as: SetPadding.self),
              let ctrl = symbol(h, "EVP_CIPHER_CTX_ctrl", as: Ctrl.self),
              let setEncryptKey = symbol(h, "AES_set_encrypt_key", as: SetKey.self),
              let setDecryptKey = symbol(h, "AES_set_decrypt_key", as: SetKey.self),
              let ige = symbol(h, "AES_ige_encrypt", as: IGE.self)
        else { return nil }
        self.ctxNew = ctxNew; self.ctxFree = ctxFree; self.cipherInit = cipherInit; self.cipherUpdate = cipherUpdate
        self.cipherFinal = cipherFinal; self.setPadding = setPadding; self.ctrl = ctrl
        self.setEncryptKey = setEncryptKey; self.setDecryptKey = setDecryptKey; self.ige = ige
        var c: [String: OpaquePointer] = [:]
        for mode in ["ecb", "cbc", "ctr", "gcm"] {
            for bits in [128, 192, 256] {
                if let g = symbol(h, "EVP_aes_\(bits)_\(mode)", as: CipherGetter.self), let e = g() { c["\(mode)-\(bits / 8)"] = e }
            }
        }
        ciphers = c
    }

    static let gcmSetIVLength: Int32 = 0x9, gcmGetTag: Int32 = 0x10, gcmSetTag: Int32 = 0x11

    /// One EVP_CIPHER_CTX set up for a mode, key and direction, reusable across messages (what a
    /// careful OpenSSL user holds on to in a loop). Padding is off for ECB/CBC.
    public final class Context {
        let lib: OpenSSLAES
        let ctx: OpaquePointer
        let mode: String
        let encrypting: Bool

        /// `mode` is "ecb", "cbc", "ctr" or "gcm"; `key` 16, 24 or 32 bytes.
        public init?(_ lib: OpenSSLAES, mode: String, key: [UInt8], encrypt: Bool) {
            guard let cipher = lib.ciphers["\(mode)-\(key.count)"], let ctx = lib.ctxNew() else { return nil }
            self.lib = lib; self.ctx = ctx; self.mode = mode; self.encrypting = encrypt
            let ok = key.withUnsafeBytes { lib.cipherInit(ctx, cipher, nil, $0.baseAddress, nil, encrypt ? 1 : 0) }
            guard ok == 1 else { lib.ctxFree(ctx); return nil }
            if mode == "ecb" || mode == "cbc" { _ = lib.setPadding(ctx, 0) }
        }
        deinit { lib.ctxFree(ctx) }

        /// ECB/CBC/CTR over `input` into `output` (same length) from the 16-byte `iv` (ignored for ECB).
        /// For ECB/CBC the length must be a multiple of 16.
        @discardableResult
        public func run(iv: UnsafeRawPointer?, _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) -> Bool {
            var n: Int32 = 0
            guard lib.cipherInit(ctx, nil, nil, nil, iv, encrypting ? 1 : 0) == 1 else { return false }
            if input.count > 0 {
                guard lib.cipherUpdate(ctx, output, &n, input.baseAddress, Int32(input.count)) == 1 else { return false }
            }
            var m: Int32 = 0
            return lib.cipherFinal(ctx, output + Int(n), &m) == 1
        }

        /// GCM: sets the nonce, absorbs `aad`, runs over `input` into `output`; when encrypting
        /// writes the 16-byte tag to `tag`, when decrypting checks it. Returns false on a bad tag.
        public func gcm(nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, _ input: UnsafeRawBufferPointer,
                        into output: UnsafeMutableRawPointer, tag: UnsafeMutableRawPointer) -> Bool {
            guard lib.ctrl(ctx, OpenSSLAES.gcmSetIVLength, Int32(nonce.count), nil) == 1,
                  lib.cipherInit(ctx, nil, nil, nil, nonce.baseAddress, encrypting ? 1 : 0) == 1 else { return false }
            var n: Int32 = 0
            if aad.count > 0 { guard lib.cipherUpdate(ctx, nil, &n, aad.baseAddress, Int32(aad.count)) == 1 else { return false } }
            n = 0
            if input.count > 0 { guard lib.cipherUpdate(ctx, output, &n, input.baseAddress, Int32(input.count)) == 1 else { return false } }
            if !encrypting { guard lib.ctrl(ctx, OpenSSLAES.gcmSetTag, 16, tag) == 1 else { return false } }
            var m: Int32 = 0
            guard lib.cipherFinal(ctx, output + Int(n), &m) == 1 else { return false }
            if encrypting { return lib.ctrl(ctx, OpenSSLAES.gcmGetTag, 16, tag) == 1 }
            return true
        }
    }

    /// A reusable context, or nil for an unsupported mode or key length.
    public func context(mode: String, key: [UInt8], encrypt: Bool) -> Context? {
        Context(self, mode: mode, key: key, encrypt: encrypt)
    }

    /// ECB, CBC or CTR as arrays (no padding).
    public func crypt(mode: String, key: [UInt8], iv: [UInt8], _ input: [UInt8], encrypt: Bool) throws -> [UInt8] {
        guard let c = context(mode: mode, key: key, encrypt: encrypt) else { throw ReferenceError("OpenSSL has no AES-\(mode) for a \(key.count)-byte key") }
        var out = [UInt8](repeating: 0, count: input.count + 16)
        let ok = input.withUnsafeBytes { i in
            iv.withUnsafeBytes { v in out.withUnsafeMutableBytes { c.run(iv: v.baseAddress, i, into: $0.baseAddress!) } }
        }
        guard ok else { throw ReferenceError("EVP AES-\(mode) failed") }
        return Array(out.prefix(input.count))
    }

    /// GCM seal as arrays: ciphertext and 16-byte tag.
    public func gcmSeal(key: [UInt8], nonce: [UInt8], aad: [UInt8], _ message: [UInt8]) throws -> (ciphertext: [UInt8], tag: [UInt8]) {
        guard let c = context(mode: "gcm", key: key, encrypt: true) else { throw ReferenceError("OpenSSL has no AES-GCM for a \(key.count)-byte key") }
        var out = [UInt8](repeating: 0, count: message.count + 16)
        var tag = [UInt8](repeating: 0, count: 16)
        let ok = message.withUnsafeBytes { m in nonce.withUnsafeBytes { n in aad.withUnsafeBytes { a in
            out.withUnsafeMutableBytes { o in tag.withUnsafeMutableBytes { c.gcm(nonce: n, aad: a, m, into: o.baseAddress!, tag: $0.baseAddress!) } }
        } } }
        guard ok else { throw ReferenceError("EVP AES-GCM seal failed") }
        return (Array(out.prefix(message.count)), tag)
    }

    /// GCM open as arrays; `nil` when the tag does not verify.
    public func gcmOpen(key: [UInt8], nonce: [UInt8], aad: [UInt8], _ ciphertext: [UInt8], tag: [UInt8]) throws -> [UInt8]? {
        guard let c = context(mode: "gcm", key: key, encrypt: false) else { throw ReferenceError("OpenSSL has no AES-GCM for a \(key.count)-byte key") }
        var out = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var t = tag
        let ok = ciphertext.withUnsafeBytes { m in nonce.withUnsafeBytes { n in aad.withUnsafeBytes { a in
            out.withUnsafeMutableBytes { o in t.withUnsafeMutableBytes { c.gcm(nonce: n, aad: a, m, into: o.baseAddress!, tag: $0.baseAddress!) } }
        } } }
        return ok ? Array(out.prefix(ciphertext.count)) : nil
    }

    /// An expanded legacy `AES_KEY` (encryption or decryption) for `AES_ige_encrypt`.
    public final class LegacyKey {
        let lib: OpenSSLAES
        let key: UnsafeMutableRawPointer  // struct aes_key_st: 60 round-key words + rounds
        let encrypting: Bool
        public init?(_ lib: OpenSSLAES, key bytes: [UInt8], encrypt: Bool) {
            self.lib = lib; self.encrypting = encrypt
            key = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 16)
            let rc = bytes.withUnsafeBytes {
                encrypt ? lib.setEncryptKey($0.baseAddress, Int32(bytes.count * 8), key) : lib.setDecryptKey($0.baseAddress, Int32(bytes.count * 8), key)
            }
            guard rc == 0 else { key.deallocate(); return nil }
        }
        deinit { key.deallocate() }

        /// Re-expands this key in place from `bytes` (`count` bytes: 16, 24 or 32), in the same
        /// direction, with no allocation: what a caller with a stack `AES_KEY` does per message.
        public func setKey(_ bytes: UnsafeRawPointer, count: Int) {
            _ = encrypting ? lib.setEncryptKey(bytes, Int32(count * 8), key) : lib.setDecryptKey(bytes, Int32(count * 8), key)
        }

        /// `AES_ige_encrypt` over `input` (a multiple of 16) into `output` with the 32-byte `iv`
        /// (updated by OpenSSL).
        public func ige(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer, iv: UnsafeMutableRawPointer) {
            lib.ige(input.baseAddress, output, input.count, key, iv, encrypting ? 1 : 0)
        }
    }

    /// A legacy key, or nil for a bad key length.
    public func legacyKey(_ key: [UInt8], encrypt: Bool) -> LegacyKey? { LegacyKey(self, key: key, encrypt: encrypt) }

    /// `AES_ige_encrypt` as arrays.
    public func ige(key: [UInt8], iv: [UInt8], _ input: [UInt8], encrypt: Bool) throws -> [UInt8] {
        guard iv.count == 32, input.count % 16 == 0, let k = legacyKey(key, encrypt: encrypt) else {
            throw ReferenceError("AES_ige_encrypt: bad key, IV or length")
        }
        var out = [UInt8](repeating: 0, count: input.count)
        var v = iv
        input.withUnsafeBytes { i in out.withUnsafeMutableBytes { o in v.withUnsafeMutableBytes { k.ige(i, into: o.baseAddress ?? UnsafeMutableRawPointer(bitPattern: 16)!, iv: $0.baseAddress!) } } }
        return out
    }
}

/// libsodium's AES-256-GCM (`crypto_aead_aes256gcm_*`), which needs AES-NI and PCLMULQDQ.
public final class SodiumAES256GCM: @unchecked Sendable {
    /// The loaded functions, or `nil` when libsodium is missing or reports the CPU unsupported.
    public static let shared: SodiumAES256GCM? = SodiumAES256GCM()

    typealias Available = @convention(c) () -> Int32
    typealias SizeFn = @convention(c) () -> Int
    typealias Encrypt = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt64>?, UnsafeRawPointer?, UInt64,
                                        UnsafeRawPointer?, UInt64, UnsafeRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
    typealias Decrypt = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt64>?, UnsafeMutableRawPointer?,
                                        UnsafeRawPointer?, UInt64, UnsafeRawPointer?, UInt64, UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
    typealias BeforeNM = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?) -> Int32

    let encryptFn: Encrypt, decryptFn: Decrypt
    let encryptAfter: Encrypt, decryptAfter: Decrypt, beforeNM: BeforeNM, stateBytes: Int

    private init?() {
        guard Sodium.shared != nil,
              let (h, _) = openLibrary(["libsodium.so.23", "libsodium.so.26", "libsodium.so", "libsodium.23.dylib", "libsodium.dylib"]),
              let available = symbol(h, "crypto_aead_aes256gcm_is_available", as: Available.self), available() == 1,
              let encryptFn = symbol(h, "crypto_aead_aes256gcm_encrypt", as: Encrypt.self),
              let decryptFn = symbol(h, "crypto_aead_aes256gcm_decrypt", as: Decrypt.self),
              let encryptAfter = symbol(h, "crypto_aead_aes256gcm_encrypt_afternm", as: Encrypt.self),
              let decryptAfter = symbol(h, "crypto_aead_aes256gcm_decrypt_afternm", as: Decrypt.self),
              let beforeNM = symbol(h, "crypto_aead_aes256gcm_beforenm", as: BeforeNM.self),
              let stateBytes = symbol(h, "crypto_aead_aes256gcm_statebytes", as: SizeFn.self)
        else { return nil }
        self.encryptFn = encryptFn; self.decryptFn = decryptFn
        self.encryptAfter = encryptAfter; self.decryptAfter = decryptAfter; self.beforeNM = beforeNM
        self.stateBytes = stateBytes()
    }

    /// `crypto_aead_aes256gcm_encrypt`: 32-byte key, 12-byte nonce; returns ciphertext ‖ tag.
    public func seal(key: [UInt8], nonce: [UInt8], aad: [UInt8], _ message: [UInt8]) throws -> [UInt8] {
        guard key.count == 32, nonce.count == 12 else { throw ReferenceError("libsodium AES-256-GCM: bad key or nonce length") }
        var out = [UInt8](repeating: 0, count: message.count + 16)
        var n: UInt64 = 0
        let rc = message.withUnsafeBytes { m in aad.withUnsafeBytes { a in nonce.withUnsafeBytes { nb in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { encryptFn($0.baseAddress, &n, m.baseAddress, UInt64(m.count), a.baseAddress, UInt64(a.count), nil, nb.baseAddress, k.baseAddress) }
        } } } }
        guard rc == 0 else { throw ReferenceError("crypto_aead_aes256gcm_encrypt failed") }
        return out
    }

    /// `crypto_aead_aes256gcm_decrypt` of ciphertext ‖ tag; `nil` when it does not verify.
    public func open(key: [UInt8], nonce: [UInt8], aad: [UInt8], _ sealed: [UInt8]) throws -> [UInt8]? {
        guard key.count == 32, nonce.count == 12 else { throw ReferenceError("libsodium AES-256-GCM: bad key or nonce length") }
        guard sealed.count >= 16 else { return nil }
        var out = [UInt8](repeating: 0, count: sealed.count)
        var n: UInt64 = 0
        let rc = sealed.withUnsafeBytes { c in aad.withUnsafeBytes { a in nonce.withUnsafeBytes { nb in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { decryptFn($0.baseAddress, &n, nil, c.baseAddress, UInt64(c.count), a.baseAddress, UInt64(a.count), nb.baseAddress, k.baseAddress) }
        } } } }
        return rc == 0 ? Array(out.prefix(Int(n))) : nil
    }

    /// A precomputed key state (`crypto_aead_aes256gcm_beforenm`), for loops over many messages.
    public final class State {
        let lib: SodiumAES256GCM
        let state: UnsafeMutableRawPointer
        init?(_ lib: SodiumAES256GCM, key: [UInt8]) {
            guard key.count == 32 else { return nil }
            self.lib = lib
            state = UnsafeMutableRawPointer.allocate(byteCount: max(lib.stateBytes, 16), alignment: 16)
            _ = key.withUnsafeBytes { lib.beforeNM(state, $0.baseAddress) }
        }
        deinit { state.deallocate() }

        /// Seals `message` into `output` (message length + 16 bytes).
        public func seal(nonce: UnsafeRawPointer, aad: UnsafeRawBufferPointer, _ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) {
            var n: UInt64 = 0
            _ = lib.encryptAfter(output, &n, message.baseAddress, UInt64(message.count), aad.baseAddress, UInt64(aad.count), nil, nonce, state)
        }

        /// Opens `sealed` (ciphertext ‖ tag) into `output`; false on a bad tag.
        public func open(nonce: UnsafeRawPointer, aad: UnsafeRawBufferPointer, _ sealed: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) -> Bool {
            var n: UInt64 = 0
            return lib.decryptAfter(output, &n, nil, sealed.baseAddress, UInt64(sealed.count), aad.baseAddress, UInt64(aad.count), nonce, state) == 0
        }
    }

    /// A precomputed state for `key` (32 bytes).
    public func state(key: [UInt8]) -> State? { State(self, key: key) }
}

/// libsodium's XChaCha20-Poly1305 (`crypto_aead_xchacha20poly1305_ietf_*`): the reference for sealed
/// snapshots (Rampart/Snapshot/SealedSnapshot.swift).
public final class SodiumXChaCha20Poly1305: @unchecked Sendable {
    /// The loaded functions, or `nil` when libsodium is missing.
    public static let shared: SodiumXChaCha20Poly1305? = SodiumXChaCha20Poly1305()

    typealias Encrypt = SodiumAES256GCM.Encrypt
    typealias Decrypt = SodiumAES256GCM.Decrypt
    let encryptFn: Encrypt, decryptFn: Decrypt

    private init?() {
        guard Sodium.shared != nil,
              let (h, _) = openLibrary(["libsodium.so.23", "libsodium.so.26", "libsodium.so", "libsodium.23.dylib", "libsodium.dylib"]),
              let encryptFn = symbol(h, "crypto_aead_xchacha20poly1305_ietf_encrypt", as: Encrypt.self),
              let decryptFn = symbol(h, "crypto_aead_xchacha20poly1305_ietf_decrypt", as: Decrypt.self)
        else { return nil }
        self.encryptFn = encryptFn
        self.decryptFn = decryptFn
    }

    /// `crypto_aead_xchacha20poly1305_ietf_encrypt`: 32-byte key, 24-byte nonce; ciphertext ‖ tag.
    public func seal(key: [UInt8], nonce: [UInt8], aad: [UInt8], _ message: [UInt8]) throws -> [UInt8] {
        guard key.count == 32, nonce.count == 24 else { throw ReferenceError("libsodium XChaCha20-Poly1305: bad key or nonce length") }
        var out = [UInt8](repeating: 0, count: message.count + 16)
        var n: UInt64 = 0
        let rc = message.withUnsafeBytes { m in aad.withUnsafeBytes { a in nonce.withUnsafeBytes { nb in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { encryptFn($0.baseAddress, &n, m.baseAddress, UInt64(m.count), a.baseAddress, UInt64(a.count), nil, nb.baseAddress, k.baseAddress) }
        } } } }
        guard rc == 0 else { throw ReferenceError("crypto_aead_xchacha20poly1305_ietf_encrypt failed") }
        return out
    }

    /// `crypto_aead_xchacha20poly1305_ietf_decrypt` of ciphertext ‖ tag; `nil` when it does not verify.
    public func open(key: [UInt8], nonce: [UInt8], aad: [UInt8], _ sealed: [UInt8]) throws -> [UInt8]? {
        guard key.count == 32, nonce.count == 24 else { throw ReferenceError("libsodium XChaCha20-Poly1305: bad key or nonce length") }
        guard sealed.count >= 16 else { return nil }
        var out = [UInt8](repeating: 0, count: sealed.count)
        var n: UInt64 = 0
        let rc = sealed.withUnsafeBytes { c in aad.withUnsafeBytes { a in nonce.withUnsafeBytes { nb in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { decryptFn($0.baseAddress, &n, nil, c.baseAddress, UInt64(c.count), a.baseAddress, UInt64(a.count), nb.baseAddress, k.baseAddress) }
        } } } }
        return rc == 0 ? Array(out.prefix(Int(n))) : nil
    }
}
