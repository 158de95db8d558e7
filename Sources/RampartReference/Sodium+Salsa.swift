// libsodium's Salsa20 family, Poly1305 and crypto_secretbox, for tests, the CLI and the benchmark.
//
// Same technique as Reference.swift: `dlopen` (the loader hands back the handle Sodium already holds)
// and `dlsym` with `@convention(c)` types written from libsodium's documented prototypes.

/// libsodium's `crypto_secretbox_*`, `crypto_stream_(x)salsa20*`, `crypto_core_hsalsa20` and
/// `crypto_onetimeauth_poly1305*`. Use through ``Sodium/salsa``.
public final class SodiumSalsa: @unchecked Sendable {
    /// The loaded functions, or `nil` when libsodium (or one of these symbols) is absent.
    public static let shared: SodiumSalsa? = SodiumSalsa()

    // int f(unsigned char *c, const unsigned char *m, unsigned long long mlen, const unsigned char *n, const unsigned char *k)
    typealias BoxFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UInt64, UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
    // int f(unsigned char *c, const unsigned char *m, unsigned long long mlen, const unsigned char *n, uint64_t ic, const unsigned char *k)
    typealias StreamICFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UInt64, UnsafeRawPointer?, UInt64, UnsafeRawPointer?) -> Int32
    // int f(unsigned char *c, unsigned long long clen, const unsigned char *n, const unsigned char *k)
    typealias KeystreamFn = @convention(c) (UnsafeMutableRawPointer?, UInt64, UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
    // int crypto_core_hsalsa20(unsigned char *out, const unsigned char *in, const unsigned char *k, const unsigned char *c)
    typealias CoreFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
    // int crypto_onetimeauth_poly1305(unsigned char *out, const unsigned char *in, unsigned long long inlen, const unsigned char *k)
    typealias AuthFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UInt64, UnsafeRawPointer?) -> Int32
    typealias AuthInitFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?) -> Int32
    typealias AuthUpdateFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UInt64) -> Int32
    typealias AuthFinalFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32
    typealias SizeFn = @convention(c) () -> Int

    let secretboxEasy: BoxFn, secretboxOpenEasy: BoxFn
    let xsalsa20Xor: BoxFn, xsalsa20XorIC: StreamICFn, xsalsa20Keystream: KeystreamFn
    let salsa20Xor: BoxFn, salsa20XorIC: StreamICFn
    let hsalsa20Fn: CoreFn
    let poly1305Fn: AuthFn, poly1305Init: AuthInitFn, poly1305Update: AuthUpdateFn, poly1305Final: AuthFinalFn
    let poly1305StateBytes: Int

    private init?() {
        guard let (h, _) = openLibrary(["libsodium.so.23", "libsodium.so.26", "libsodium.so", "libsodium.23.dylib", "libsodium.dylib"]),
              Sodium.shared != nil,  // sodium_init has run
              let secretboxEasy = symbol(h, "crypto_secretbox_easy", as: BoxFn.self),
              let secretboxOpenEasy = symbol(h, "crypto_secretbox_open_easy", as: BoxFn.self),
              let xsalsa20Xor = symbol(h, "crypto_stream_xsalsa20_xor", as: BoxFn.self),
              let xsalsa20XorIC = symbol(h, "crypto_stream_xsalsa20_xor_ic", as: StreamICFn.self),
              let xsalsa20Keystream = symbol(h, "crypto_stream_xsalsa20", as: KeystreamFn.self),
              let salsa20Xor = symbol(h, "crypto_stream_salsa20_xor", as: BoxFn.self),
              let salsa20XorIC = symbol(h, "crypto_stream_salsa20_xor_ic", as: StreamICFn.self),
              let hsalsa20Fn = symbol(h, "crypto_core_hsalsa20", as: CoreFn.self),
              let poly1305Fn = symbol(h, "crypto_onetimeauth_poly1305", as: AuthFn.self),
              let poly1305Init = symbol(h, "crypto_onetimeauth_poly1305_init", as: AuthInitFn.self),
              let poly1305Update = symbol(h, "crypto_onetimeauth_poly1305_update", as: AuthUpdateFn.self),
              let poly1305Final = symbol(h, "crypto_onetimeauth_poly1305_final", as: AuthFinalFn.self),
              let stateBytes = symbol(h, "crypto_onetimeauth_poly1305_statebytes", as: SizeFn.self)
        else { return nil }
        self.secretboxEasy = secretboxEasy; self.secretboxOpenEasy = secretboxOpenEasy
        self.xsalsa20Xor = xsalsa20Xor; self.xsalsa20XorIC = xsalsa20XorIC; self.xsalsa20Keystream = xsalsa20Keystream
        self.salsa20Xor = salsa20Xor; self.salsa20XorIC = salsa20XorIC
        self.hsalsa20Fn = hsalsa20Fn
        self.poly1305Fn = poly1305Fn; self.poly1305Init = poly1305Init
        self.poly1305Update = poly1305Update; self.poly1305Final = poly1305Final
        poly1305StateBytes = stateBytes()
    }

    // MARK: Raw buffers (benchmark)

    /// `crypto_secretbox_easy`: `out` receives `tag || ciphertext` (`message.count + 16` bytes).
    public func secretboxEasy(_ message: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer,
                              nonce: UnsafeRawPointer, key: UnsafeRawPointer) {
        _ = secretboxEasy(out, message.baseAddress, UInt64(message.count), nonce, key)
    }

    /// `crypto_secretbox_open_easy`: returns `false` when the box does not verify.
    public func secretboxOpenEasy(_ box: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer,
                                  nonce: UnsafeRawPointer, key: UnsafeRawPointer) -> Bool {
        secretboxOpenEasy(out, box.baseAddress, UInt64(box.count), nonce, key) == 0
    }

    /// `crypto_stream_xsalsa20_xor`.
    public func xsalsa20Xor(_ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer,
                            nonce: UnsafeRawPointer, key: UnsafeRawPointer) {
        _ = xsalsa20Xor(out, input.baseAddress, UInt64(input.count), nonce, key)
    }

    /// `crypto_onetimeauth_poly1305` into a 16-byte `out`.
    public func poly1305(_ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer, key: UnsafeRawPointer) {
        _ = poly1305Fn(out, input.baseAddress, UInt64(input.count), key)
    }

    // MARK: Arrays (tests, CLI)

    /// `crypto_secretbox_easy`: `tag || ciphertext`.
    public func secretboxEasy(_ message: [UInt8], nonce: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(nonce.count == 24 && key.count == 32)
        var out = [UInt8](repeating: 0, count: message.count + 16)
        message.withUnsafeBytes { m in nonce.withUnsafeBytes { n in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { _ = secretboxEasy(m, into: $0.baseAddress!, nonce: n.baseAddress!, key: k.baseAddress!) }
        } } }
        return out
    }

    /// `crypto_secretbox_open_easy`: the message, or `nil` when the box does not verify.
    public func secretboxOpenEasy(_ box: [UInt8], nonce: [UInt8], key: [UInt8]) -> [UInt8]? {
        precondition(nonce.count == 24 && key.count == 32)
        guard box.count >= 16 else { return nil }
        var out = [UInt8](repeating: 0, count: box.count - 16 + 1)
        let ok = box.withUnsafeBytes { b in nonce.withUnsafeBytes { n in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { secretboxOpenEasy(b, into: $0.baseAddress!, nonce: n.baseAddress!, key: k.baseAddress!) }
        } } }
        return ok ? Array(out.dropLast()) : nil
    }

    /// `crypto_stream_xsalsa20_xor_ic` (initial block counter `ic`; 0 is `crypto_stream_xsalsa20_xor`).
    public func xsalsa20Xor(_ input: [UInt8], nonce: [UInt8], key: [UInt8], ic: UInt64 = 0) -> [UInt8] {
        precondition(nonce.count == 24 && key.count == 32)
        var out = [UInt8](repeating: 0, count: input.count + 1)
        input.withUnsafeBytes { m in nonce.withUnsafeBytes { n in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { _ = xsalsa20XorIC($0.baseAddress, m.baseAddress, UInt64(m.count), n.baseAddress, ic, k.baseAddress) }
        } } }
        return Array(out.dropLast())
    }

    /// `crypto_stream_xsalsa20`: `count` keystream bytes.
    public func xsalsa20Keystream(count: Int, nonce: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(nonce.count == 24 && key.count == 32)
        var out = [UInt8](repeating: 0, count: count + 1)
        nonce.withUnsafeBytes { n in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { _ = xsalsa20Keystream($0.baseAddress, UInt64(count), n.baseAddress, k.baseAddress) }
        } }
        return Array(out.dropLast())
    }

    /// `crypto_stream_salsa20_xor_ic` (8-byte nonce, initial block counter `ic`).
    public func salsa20Xor(_ input: [UInt8], nonce: [UInt8], key: [UInt8], ic: UInt64 = 0) -> [UInt8] {
        precondition(nonce.count == 8 && key.count == 32)
        var out = [UInt8](repeating: 0, count: input.count + 1)
        input.withUnsafeBytes { m in nonce.withUnsafeBytes { n in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes {
                if ic == 0 {
                    _ = salsa20Xor($0.baseAddress, m.baseAddress, UInt64(m.count), n.baseAddress, k.baseAddress)
                } else {
                    _ = salsa20XorIC($0.baseAddress, m.baseAddress, UInt64(m.count), n.baseAddress, ic, k.baseAddress)
                }
            }
        } } }
        return Array(out.dropLast())
    }

    /// `crypto_core_hsalsa20` with the standard constants ("expand 32-byte k").
    public func hsalsa20(key: [UInt8], input: [UInt8]) -> [UInt8] {
        precondition(input.count == 16 && key.count == 32)
        var out = [UInt8](repeating: 0, count: 32)
        input.withUnsafeBytes { i in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { _ = hsalsa20Fn($0.baseAddress, i.baseAddress, k.baseAddress, nil) }
        } }
        return out
    }

    /// `crypto_onetimeauth_poly1305`.
    public func poly1305(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(key.count == 32)
        var out = [UInt8](repeating: 0, count: 16)
        message.withUnsafeBytes { m in key.withUnsafeBytes { k in
            out.withUnsafeMutableBytes { _ = poly1305Fn($0.baseAddress, m.baseAddress, UInt64(m.count), k.baseAddress) }
        } }
        return out
    }

    /// `crypto_onetimeauth_poly1305_init/update/final`, feeding `parts` one `update` each.
    public func poly1305(parts: [[UInt8]], key: [UInt8]) -> [UInt8] {
        precondition(key.count == 32)
        let state = UnsafeMutableRawPointer.allocate(byteCount: max(poly1305StateBytes, 1), alignment: 64)
        defer { state.deallocate() }
        var out = [UInt8](repeating: 0, count: 16)
        key.withUnsafeBytes { _ = poly1305Init(state, $0.baseAddress) }
        for p in parts { p.withUnsafeBytes { _ = poly1305Update(state, $0.baseAddress, UInt64($0.count)) } }
        out.withUnsafeMutableBytes { _ = poly1305Final(state, $0.baseAddress) }
        return out
    }
}

extension Sodium {
    /// The Salsa20 family, Poly1305 and secretbox functions (`nil` if a symbol is missing).
    public var salsa: SodiumSalsa? { SodiumSalsa.shared }
}
