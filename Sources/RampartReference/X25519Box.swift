// Reference X25519 and NaCl box: OpenSSL's EVP X25519 and libsodium's crypto_scalarmult and
// crypto_box_*. Loaded with dlopen like the rest of this target.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// OpenSSL X25519 through `EVP_PKEY` (raw keys, `EVP_PKEY_derive`).
public final class OpenSSLX25519: @unchecked Sendable {
    /// The loaded functions, or `nil` when libcrypto (or one of these symbols) is missing.
    public static let shared: OpenSSLX25519? = OpenSSLX25519()

    static let nidX25519: Int32 = 1034

    typealias NewRaw = @convention(c) (Int32, OpaquePointer?, UnsafeRawPointer?, Int) -> OpaquePointer?
    typealias KeyFree = @convention(c) (OpaquePointer?) -> Void
    typealias CtxNew = @convention(c) (OpaquePointer?, OpaquePointer?) -> OpaquePointer?
    typealias CtxFree = @convention(c) (OpaquePointer?) -> Void
    typealias DeriveInit = @convention(c) (OpaquePointer?) -> Int32
    typealias SetPeer = @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32
    typealias Derive = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?) -> Int32
    typealias GetRawPublic = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?) -> Int32

    let newRawPrivate: NewRaw, newRawPublic: NewRaw, keyFree: KeyFree
    let ctxNew: CtxNew, ctxFree: CtxFree, deriveInit: DeriveInit, setPeer: SetPeer, derive: Derive
    let getRawPublic: GetRawPublic

    private init?() {
        guard OpenSSL.shared != nil,
              let (h, _) = openLibrary(["libcrypto.so.3", "libcrypto.so", "libcrypto.3.dylib", "libcrypto.dylib"]),
              let newRawPrivate = symbol(h, "EVP_PKEY_new_raw_private_key", as: NewRaw.self),
              let newRawPublic = symbol(h, "EVP_PKEY_new_raw_public_key", as: NewRaw.self),
              let keyFree = symbol(h, "EVP_PKEY_free", as: KeyFree.self),
              let ctxNew = symbol(h, "EVP_PKEY_CTX_new", as: CtxNew.self),
              let ctxFree = symbol(h, "EVP_PKEY_CTX_free", as: CtxFree.self),
              let deriveInit = symbol(h, "EVP_PKEY_derive_init", as: DeriveInit.self),
              let setPeer = symbol(h, "EVP_PKEY_derive_set_peer", as: SetPeer.self),
              let derive = symbol(h, "EVP_PKEY_derive", as: Derive.self),
              let getRawPublic = symbol(h, "EVP_PKEY_get_raw_public_key", as: GetRawPublic.self)
        else { return nil }
        self.newRawPrivate = newRawPrivate; self.newRawPublic = newRawPublic; self.keyFree = keyFree
        self.ctxNew = ctxNew; self.ctxFree = ctxFree; self.deriveInit = deriveInit; self.setPeer = setPeer
        self.derive = derive; self.getRawPublic = getRawPublic
    }

    /// A prepared derivation (private key and peer fixed), so repeated calls time only the scalar
    /// multiplication. OpenSSL refuses an all-zero result; `derive` then returns false.
    public final class Exchange {
        let o: OpenSSLX25519
        let priv: OpaquePointer, peer: OpaquePointer, ctx: OpaquePointer

        init?(_ o: OpenSSLX25519, privateKey: UnsafeRawPointer, peerPublicKey: UnsafeRawPointer) {
            guard let priv = o.newRawPrivate(OpenSSLX25519.nidX25519, nil, privateKey, 32) else { return nil }
            guard let peer = o.newRawPublic(OpenSSLX25519.nidX25519, nil, peerPublicKey, 32) else {
                o.keyFree(priv); return nil
            }
            guard let ctx = o.ctxNew(priv, nil), o.deriveInit(ctx) == 1, o.setPeer(ctx, peer) == 1 else {
                o.keyFree(priv); o.keyFree(peer); return nil
            }
            self.o = o; self.priv = priv; self.peer = peer; self.ctx = ctx
        }

        /// Writes the 32-byte shared secret; false when OpenSSL rejects it.
        public func derive(into out: UnsafeMutableRawPointer) -> Bool {
            var len = 32
            return o.derive(ctx, out, &len) == 1 && len == 32
        }

        deinit { o.ctxFree(ctx); o.keyFree(priv); o.keyFree(peer) }
    }

    /// A prepared exchange, or nil when OpenSSL rejects a key.
    public func exchange(privateKey: [UInt8], peerPublicKey: [UInt8]) -> Exchange? {
        guard privateKey.count == 32, peerPublicKey.count == 32 else { return nil }
        return privateKey.withUnsafeBytes { s in
            peerPublicKey.withUnsafeBytes { p in Exchange(self, privateKey: s.baseAddress!, peerPublicKey: p.baseAddress!) }
        }
    }

    /// The shared secret, or nil when OpenSSL refuses (for instance an all-zero result).
    public func sharedSecret(privateKey: [UInt8], peerPublicKey: [UInt8]) -> [UInt8]? {
        guard let x = exchange(privateKey: privateKey, peerPublicKey: peerPublicKey) else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        let ok = out.withUnsafeMutableBytes { x.derive(into: $0.baseAddress!) }
        return ok ? out : nil
    }

    /// The public key for a private key.
    public func publicKey(privateKey: [UInt8]) -> [UInt8]? {
        guard privateKey.count == 32 else { return nil }
        guard let k = privateKey.withUnsafeBytes({ newRawPrivate(OpenSSLX25519.nidX25519, nil, $0.baseAddress!, 32) }) else {
            return nil
        }
        defer { keyFree(k) }
        var out = [UInt8](repeating: 0, count: 32)
        var len = 32
        let ok = out.withUnsafeMutableBytes { getRawPublic(k, $0.baseAddress!, &len) } == 1
        return ok && len == 32 ? out : nil
    }
}

/// libsodium's `crypto_scalarmult(_base)` and `crypto_box_*` (XSalsa20-Poly1305 boxes).
public final class SodiumBox: @unchecked Sendable {
    /// The loaded functions, or `nil` when libsodium (or one of these symbols) is absent.
    public static let shared: SodiumBox? = SodiumBox()

    // int crypto_scalarmult(unsigned char *q, const unsigned char *n, const unsigned char *p)
    typealias ScalarMult = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
    // int crypto_scalarmult_base(unsigned char *q, const unsigned char *n)
    typealias ScalarMultBase = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?) -> Int32
    // int crypto_box_beforenm(unsigned char *k, const unsigned char *pk, const unsigned char *sk)
    typealias BeforeNM = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
    // int crypto_box_easy(unsigned char *c, const unsigned char *m, unsigned long long mlen,
    //                     const unsigned char *n, const unsigned char *pk, const unsigned char *sk)
    typealias BoxEasy = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UInt64, UnsafeRawPointer?,
                                        UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
    // int crypto_box_easy_afternm(unsigned char *c, const unsigned char *m, unsigned long long mlen,
    //                             const unsigned char *n, const unsigned char *k)
    typealias AfterNM = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UInt64, UnsafeRawPointer?,
                                        UnsafeRawPointer?) -> Int32

    let scalarmult: ScalarMult, scalarmultBase: ScalarMultBase, beforenm: BeforeNM
    let boxEasy: BoxEasy, boxOpenEasy: BoxEasy, easyAfterNM: AfterNM, openEasyAfterNM: AfterNM

    private init?() {
        guard let (h, _) = openLibrary(["libsodium.so.23", "libsodium.so.26", "libsodium.so", "libsodium.23.dylib", "libsodium.dylib"]),
              Sodium.shared != nil,  // sodium_init has run
              let scalarmult = symbol(h, "crypto_scalarmult", as: ScalarMult.self),
              let scalarmultBase = symbol(h, "crypto_scalarmult_base", as: ScalarMultBase.self),
              let beforenm = symbol(h, "crypto_box_beforenm", as: BeforeNM.self),
              let boxEasy = symbol(h, "crypto_box_easy", as: BoxEasy.self),
              let boxOpenEasy = symbol(h, "crypto_box_open_easy", as: BoxEasy.self),
              let easyAfterNM = symbol(h, "crypto_box_easy_afternm", as: AfterNM.self),
              let openEasyAfterNM = symbol(h, "crypto_box_open_easy_afternm", as: AfterNM.self)
        else { return nil }
        self.scalarmult = scalarmult; self.scalarmultBase = scalarmultBase; self.beforenm = beforenm
        self.boxEasy = boxEasy; self.boxOpenEasy = boxOpenEasy
        self.easyAfterNM = easyAfterNM; self.openEasyAfterNM = openEasyAfterNM
    }

    /// `crypto_scalarmult`: false when libsodium refuses (an all-zero result).
    public func scalarMult(scalar: UnsafeRawPointer, point: UnsafeRawPointer, into out: UnsafeMutableRawPointer) -> Bool {
        scalarmult(out, scalar, point) == 0
    }

    /// `crypto_scalarmult` on arrays; nil when refused.
    public func scalarMult(scalar: [UInt8], point: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 32)
        let ok = scalar.withUnsafeBytes { s in point.withUnsafeBytes { p in
            out.withUnsafeMutableBytes { scalarMult(scalar: s.baseAddress!, point: p.baseAddress!, into: $0.baseAddress!) } } }
        return ok ? out : nil
    }

    /// `crypto_scalarmult_base`.
    public func publicKey(secretKey: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        _ = secretKey.withUnsafeBytes { s in out.withUnsafeMutableBytes { scalarmultBase($0.baseAddress!, s.baseAddress!) } }
        return out
    }

    /// `crypto_box_beforenm` into a 32-byte `out`; false when refused.
    public func beforeNM(publicKey: UnsafeRawPointer, secretKey: UnsafeRawPointer, into out: UnsafeMutableRawPointer) -> Bool {
        beforenm(out, publicKey, secretKey) == 0
    }

    /// `crypto_box_beforenm` on arrays.
    public func beforeNM(publicKey: [UInt8], secretKey: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 32)
        let ok = publicKey.withUnsafeBytes { p in secretKey.withUnsafeBytes { s in
            out.withUnsafeMutableBytes { beforeNM(publicKey: p.baseAddress!, secretKey: s.baseAddress!, into: $0.baseAddress!) } } }
        return ok ? out : nil
    }

    /// `crypto_box_easy`: `tag || ciphertext`.
    public func seal(_ m: [UInt8], nonce: [UInt8], publicKey: [UInt8], secretKey: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: m.count + 16)
        let rc = m.withUnsafeBytes { mb in nonce.withUnsafeBytes { n in publicKey.withUnsafeBytes { p in secretKey.withUnsafeBytes { s in
            out.withUnsafeMutableBytes { boxEasy($0.baseAddress!, mb.baseAddress, UInt64(m.count), n.baseAddress!, p.baseAddress!, s.baseAddress!) } } } } }
        return rc == 0 ? out : nil
    }

    /// `crypto_box_open_easy`: nil when the box does not verify.
    public func open(_ c: [UInt8], nonce: [UInt8], publicKey: [UInt8], secretKey: [UInt8]) -> [UInt8]? {
        guard c.count >= 16 else { return nil }
        var out = [UInt8](repeating: 0, count: c.count - 16)
        var dummy: UInt8 = 0
        let rc = c.withUnsafeBytes { cb in nonce.withUnsafeBytes { n in publicKey.withUnsafeBytes { p in secretKey.withUnsafeBytes { s in
            out.withUnsafeMutableBytes { o in
                boxOpenEasy(o.baseAddress ?? UnsafeMutableRawPointer(&dummy), cb.baseAddress!, UInt64(c.count), n.baseAddress!, p.baseAddress!, s.baseAddress!) } } } } }
        return rc == 0 ? out : nil
    }

    /// `crypto_box_easy_afternm` on raw buffers (`out`: message.count + 16 bytes).
    public func sealAfterNM(_ m: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer, nonce: UnsafeRawPointer,
                            key: UnsafeRawPointer) {
        _ = easyAfterNM(out, m.baseAddress, UInt64(m.count), nonce, key)
    }

    /// `crypto_box_open_easy_afternm` on raw buffers; false when the box does not verify.
    public func openAfterNM(_ c: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer, nonce: UnsafeRawPointer,
                            key: UnsafeRawPointer) -> Bool {
        openEasyAfterNM(out, c.baseAddress, UInt64(c.count), nonce, key) == 0
    }
}
