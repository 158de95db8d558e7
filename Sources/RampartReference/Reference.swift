// Run-time bindings to OpenSSL's libcrypto and libsodium, for tests, the CLI and the benchmark only.
//
// No C module and no headers: the libraries are opened with `dlopen`, functions looked up with
// `dlsym` and called through `@convention(c)` function types written from the documented prototypes.
// Nothing in the `Rampart` library products depends on this target.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens the first library of `names` that loads; returns the handle and the name that worked.
func openLibrary(_ names: [String]) -> (UnsafeMutableRawPointer, String)? {
    for n in names {
        if let h = dlopen(n, RTLD_NOW | RTLD_LOCAL) { return (h, n) }
    }
    return nil
}

/// Looks up `name` in `handle` and casts it to the function type `F`.
func symbol<F>(_ handle: UnsafeMutableRawPointer, _ name: String, as: F.Type) -> F? {
    guard let p = dlsym(handle, name) else { return nil }
    return unsafeBitCast(p, to: F.self)
}

/// What the reference loader found, for reports and test messages.
public enum Reference {
    /// One line per library: found (with path and version) or absent.
    public static var summary: String {
        let o = OpenSSL.shared.map { "OpenSSL: \($0.version) (\($0.libraryName))" } ?? "OpenSSL: absent (install libssl3)"
        let s = Sodium.shared.map { "libsodium: \($0.version) (\($0.libraryName))" } ?? "libsodium: absent (install libsodium23)"
        return o + "\n" + s
    }

    /// `true` when `RAMPART_REQUIRE_REFERENCE=1`: a missing reference library is then an error, not a skip.
    public static var required: Bool {
        guard let v = getenv("RAMPART_REQUIRE_REFERENCE") else { return false }
        let s = String(cString: v)
        return s == "1" || s == "true" || s == "yes"
    }
}

/// Errors from a reference call (a failed call is reported, not trapped).
public struct ReferenceError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}

// MARK: - OpenSSL

/// OpenSSL 3 libcrypto: EVP digests, HMAC, PBKDF2 and scrypt.
public final class OpenSSL: @unchecked Sendable {
    /// The loaded library, or `nil` when libcrypto is not installed.
    public static let shared: OpenSSL? = OpenSSL()

    /// The file name that loaded.
    public let libraryName: String
    /// `OpenSSL_version(OPENSSL_VERSION)`.
    public let version: String

    typealias MDFetch = @convention(c) (OpaquePointer?, UnsafePointer<CChar>, UnsafePointer<CChar>?) -> OpaquePointer?
    typealias CtxNew = @convention(c) () -> OpaquePointer?
    typealias CtxFree = @convention(c) (OpaquePointer?) -> Void
    typealias DigestInit = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    typealias DigestUpdate = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> Int32
    typealias DigestFinal = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt32>?) -> Int32
    typealias HMACFn = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32, UnsafeRawPointer?, Int,
                                       UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt32>?) -> UnsafeMutableRawPointer?
    typealias PBKDF2Fn = @convention(c) (UnsafeRawPointer?, Int32, UnsafeRawPointer?, Int32, Int32, OpaquePointer?,
                                         Int32, UnsafeMutableRawPointer?) -> Int32
    typealias ScryptFn = @convention(c) (UnsafeRawPointer?, Int, UnsafeRawPointer?, Int, UInt64, UInt64, UInt64, UInt64,
                                         UnsafeMutableRawPointer?, Int) -> Int32
    typealias VersionFn = @convention(c) (Int32) -> UnsafePointer<CChar>?

    let mdFetch: MDFetch, ctxNew: CtxNew, ctxFree: CtxFree
    let digestInit: DigestInit, digestUpdate: DigestUpdate, digestFinal: DigestFinal
    let hmacFn: HMACFn, pbkdf2Fn: PBKDF2Fn, scryptFn: ScryptFn
    typealias RandBytes = @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32
    let randBytesFn: RandBytes?

    /// Fetched message digests by Rampart name (`md5`, `sha1`, `sha256`, `sha512`, `blake2b-512`).
    let mds: [String: OpaquePointer]

    private init?() {
        guard let (h, name) = openLibrary(["libcrypto.so.3", "libcrypto.so", "libcrypto.3.dylib", "libcrypto.dylib"]),
              let mdFetch = symbol(h, "EVP_MD_fetch", as: MDFetch.self),
              let ctxNew = symbol(h, "EVP_MD_CTX_new", as: CtxNew.self),
              let ctxFree = symbol(h, "EVP_MD_CTX_free", as: CtxFree.self),
              let digestInit = symbol(h, "EVP_DigestInit_ex", as: DigestInit.self),
              let digestUpdate = symbol(h, "EVP_DigestUpdate", as: DigestUpdate.self),
              let digestFinal = symbol(h, "EVP_DigestFinal_ex", as: DigestFinal.self),
              let hmacFn = symbol(h, "HMAC", as: HMACFn.self),
              let pbkdf2Fn = symbol(h, "PKCS5_PBKDF2_HMAC", as: PBKDF2Fn.self),
              let scryptFn = symbol(h, "EVP_PBE_scrypt", as: ScryptFn.self)
        else { return nil }
        libraryName = name
        let v = symbol(h, "OpenSSL_version", as: VersionFn.self)?(0)
        version = v.map { String(cString: $0) } ?? "unknown version"
        self.mdFetch = mdFetch; self.ctxNew = ctxNew; self.ctxFree = ctxFree
        self.digestInit = digestInit; self.digestUpdate = digestUpdate; self.digestFinal = digestFinal
        self.hmacFn = hmacFn; self.pbkdf2Fn = pbkdf2Fn; self.scryptFn = scryptFn
        randBytesFn = symbol(h, "RAND_bytes", as: RandBytes.self)
        var m: [String: OpaquePointer] = [:]
        for (ours, theirs) in [("md5", "MD5"), ("sha1", "SHA1"), ("sha256", "SHA256"), ("sha512", "SHA512"), ("blake2b-512", "BLAKE2B-512")] {
            if let md = mdFetch(nil, theirs, nil) { m[ours] = md }
        }
        mds = m
    }

    /// `RAND_bytes` (OpenSSL's default DRBG, CTR-DRBG with AES-256, per thread): fills `count` bytes at
    /// `p`; false when the symbol is missing or the call failed.
    public func randBytes(_ p: UnsafeMutableRawPointer, _ count: Int) -> Bool {
        guard let f = randBytesFn else { return false }
        return f(p, Int32(clamping: count)) == 1
    }

    /// Digest sizes by name.
    static let sizes = ["md5": 16, "sha1": 20, "sha256": 32, "sha512": 64, "blake2b-512": 64]

    /// Whether `algorithm` (`sha1`, `sha256`, `sha512`, `blake2b-512`) is available.
    public func supports(_ algorithm: String) -> Bool { mds[algorithm] != nil }

    /// A reusable digest context (what a careful OpenSSL user would hold on to in a loop).
    public final class DigestContext {
        let lib: OpenSSL
        let ctx: OpaquePointer
        let md: OpaquePointer
        /// Digest size in bytes.
        public let size: Int
        init?(_ lib: OpenSSL, _ alg: String) {
            guard let md = lib.mds[alg], let size = OpenSSL.sizes[alg], let ctx = lib.ctxNew() else { return nil }
            self.lib = lib; self.md = md; self.ctx = ctx; self.size = size
        }
        deinit { lib.ctxFree(ctx) }
        /// Hashes `data` into `out` (at least `size` bytes).
        public func hash(_ data: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
            _ = lib.digestInit(ctx, md, nil)
            _ = lib.digestUpdate(ctx, data.baseAddress, data.count)
            _ = lib.digestFinal(ctx, out, nil)
        }
        /// Hashes `first ‖ second` (two `EVP_DigestUpdate` calls, nothing concatenated) into `out`.
        public func hash(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
            _ = lib.digestInit(ctx, md, nil)
            _ = lib.digestUpdate(ctx, first.baseAddress, first.count)
            _ = lib.digestUpdate(ctx, second.baseAddress, second.count)
            _ = lib.digestFinal(ctx, out, nil)
        }
        /// Hashes the concatenation of `parts`.
        public func hash(parts: [[UInt8]]) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: size)
            _ = lib.digestInit(ctx, md, nil)
            for p in parts { p.withUnsafeBytes { _ = lib.digestUpdate(ctx, $0.baseAddress, $0.count) } }
            out.withUnsafeMutableBytes { _ = lib.digestFinal(ctx, $0.baseAddress, nil) }
            return out
        }
    }

    /// A digest context for `algorithm`, or `nil` if unsupported.
    public func digestContext(_ algorithm: String) -> DigestContext? { DigestContext(self, algorithm) }

    /// One-shot digest.
    public func digest(_ algorithm: String, _ data: [UInt8]) throws -> [UInt8] {
        guard let c = digestContext(algorithm) else { throw ReferenceError("OpenSSL has no \(algorithm)") }
        return c.hash(parts: [data])
    }

    /// `HMAC()` one-shot with the named hash, writing into `out` (at least the digest size).
    public func hmac(_ algorithm: String, key: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
        var len: UInt32 = 0
        // OpenSSL wants non-null pointers even for empty inputs: pass a dummy address.
        var dummy: UInt64 = 0
        withUnsafeBytes(of: &dummy) { d in
            _ = hmacFn(mds[algorithm], key.baseAddress ?? d.baseAddress!, Int32(key.count),
                       data.baseAddress ?? d.baseAddress!, data.count, out, &len)
        }
    }

    /// HMAC as an array.
    public func hmac(_ algorithm: String, key: [UInt8], data: [UInt8]) throws -> [UInt8] {
        guard mds[algorithm] != nil, let size = OpenSSL.sizes[algorithm] else { throw ReferenceError("OpenSSL has no \(algorithm)") }
        var out = [UInt8](repeating: 0, count: size)
        key.withUnsafeBytes { k in data.withUnsafeBytes { d in out.withUnsafeMutableBytes { hmac(algorithm, key: k, data: d, into: $0.baseAddress!) } } }
        return out
    }

    /// `PKCS5_PBKDF2_HMAC`.
    public func pbkdf2(_ algorithm: String, password: [UInt8], salt: [UInt8], iterations: Int, length: Int) throws -> [UInt8] {
        guard let md = mds[algorithm] else { throw ReferenceError("OpenSSL has no \(algorithm)") }
        var out = [UInt8](repeating: 0, count: length)
        let ok = password.withUnsafeBytes { p in
            salt.withUnsafeBytes { s in
                out.withUnsafeMutableBytes { o in
                    pbkdf2Fn(p.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(p.count),
                             s.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(s.count),
                             Int32(iterations), md, Int32(length), o.baseAddress)
                }
            }
        }
        guard ok == 1 else { throw ReferenceError("PKCS5_PBKDF2_HMAC failed") }
        return out
    }

    /// `EVP_PBE_scrypt` with a memory cap of `maxMemory` bytes.
    public func scrypt(password: [UInt8], salt: [UInt8], n: UInt64, r: UInt64, p: UInt64, length: Int,
                       maxMemory: UInt64 = 1 << 31) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        let ok = password.withUnsafeBytes { pw in
            salt.withUnsafeBytes { s in
                out.withUnsafeMutableBytes { o in
                    scryptFn(pw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), pw.count,
                             s.baseAddress ?? UnsafeRawPointer(bitPattern: 1), s.count, n, r, p, maxMemory, o.baseAddress, length)
                }
            }
        }
        guard ok == 1 else { throw ReferenceError("EVP_PBE_scrypt failed") }
        return out
    }
}

// MARK: - libsodium

/// libsodium: SHA-2, BLAKE2b with salt and personal, HMAC-SHA-256 and scrypt.
public final class Sodium: @unchecked Sendable {
    /// The loaded and initialised library, or `nil` when libsodium is not installed.
    public static let shared: Sodium? = Sodium()

    /// The file name that loaded.
    public let libraryName: String
    /// `sodium_version_string()`.
    public let version: String

    typealias Hash = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UInt64) -> Int32
    typealias Generic = @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeRawPointer?, UInt64, UnsafeRawPointer?, Int,
                                        UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
    typealias AuthInit = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, Int) -> Int32
    typealias AuthUpdate = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UInt64) -> Int32
    typealias AuthFinal = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32
    typealias SizeFn = @convention(c) () -> Int
    typealias ScryptLL = @convention(c) (UnsafeRawPointer?, Int, UnsafeRawPointer?, Int, UInt64, UInt32, UInt32,
                                         UnsafeMutableRawPointer?, Int) -> Int32
    typealias InitFn = @convention(c) () -> Int32
    typealias VersionFn = @convention(c) () -> UnsafePointer<CChar>?

    let sha256Fn: Hash, sha512Fn: Hash, generic: Generic
    let authInit: AuthInit, authUpdate: AuthUpdate, authFinal: AuthFinal, authStateBytes: Int
    /// One reusable HMAC state (the benchmark and tests call from one thread at a time).
    let authState: UnsafeMutableRawPointer
    let scryptFn: ScryptLL
    typealias RandomBuf = @convention(c) (UnsafeMutableRawPointer?, Int) -> Void
    let randomBufFn: RandomBuf?

    private init?() {
        guard let (h, name) = openLibrary(["libsodium.so.23", "libsodium.so.26", "libsodium.so", "libsodium.23.dylib", "libsodium.dylib"]),
              let initFn = symbol(h, "sodium_init", as: InitFn.self),
              let sha256Fn = symbol(h, "crypto_hash_sha256", as: Hash.self),
              let sha512Fn = symbol(h, "crypto_hash_sha512", as: Hash.self),
              let generic = symbol(h, "crypto_generichash_blake2b_salt_personal", as: Generic.self),
              let authInit = symbol(h, "crypto_auth_hmacsha256_init", as: AuthInit.self),
              let authUpdate = symbol(h, "crypto_auth_hmacsha256_update", as: AuthUpdate.self),
              let authFinal = symbol(h, "crypto_auth_hmacsha256_final", as: AuthFinal.self),
              let stateBytes = symbol(h, "crypto_auth_hmacsha256_statebytes", as: SizeFn.self),
              let scryptFn = symbol(h, "crypto_pwhash_scryptsalsa208sha256_ll", as: ScryptLL.self),
              initFn() >= 0
        else { return nil }
        libraryName = name
        version = symbol(h, "sodium_version_string", as: VersionFn.self).flatMap { $0() }.map { String(cString: $0) } ?? "unknown version"
        self.sha256Fn = sha256Fn; self.sha512Fn = sha512Fn; self.generic = generic
        self.authInit = authInit; self.authUpdate = authUpdate; self.authFinal = authFinal
        authStateBytes = stateBytes()
        authState = UnsafeMutableRawPointer.allocate(byteCount: max(authStateBytes, 1), alignment: 64)
        self.scryptFn = scryptFn
        randomBufFn = symbol(h, "randombytes_buf", as: RandomBuf.self)
    }

    /// `randombytes_buf` (libsodium's default: the OS generator, getrandom(2) per call on Linux);
    /// false when the symbol is missing.
    public func randomBytes(_ p: UnsafeMutableRawPointer, _ count: Int) -> Bool {
        guard let f = randomBufFn else { return false }
        f(p, count)
        return true
    }

    /// Whether `algorithm` (`sha256`, `sha512`, `blake2b-512`) is available.
    public func supports(_ algorithm: String) -> Bool { ["sha256", "sha512", "blake2b-512"].contains(algorithm) }

    /// `crypto_hash_sha256` / `crypto_hash_sha512` / 64-byte unkeyed `crypto_generichash_blake2b` into `out`.
    public func hash(_ algorithm: String, _ data: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
        switch algorithm {
        case "sha256": _ = sha256Fn(out, data.baseAddress, UInt64(data.count))
        case "sha512": _ = sha512Fn(out, data.baseAddress, UInt64(data.count))
        default: _ = generic(out, 64, data.baseAddress, UInt64(data.count), nil, 0, nil, nil)
        }
    }

    /// One-shot hash as an array.
    public func digest(_ algorithm: String, _ data: [UInt8]) throws -> [UInt8] {
        guard supports(algorithm) else { throw ReferenceError("libsodium has no \(algorithm)") }
        var out = [UInt8](repeating: 0, count: algorithm == "sha256" ? 32 : 64)
        data.withUnsafeBytes { d in out.withUnsafeMutableBytes { hash(algorithm, d, into: $0.baseAddress!) } }
        return out
    }

    /// `crypto_generichash_blake2b_salt_personal`: outlen 1...64, key 0...64, salt/personal 16 bytes or nil.
    public func blake2b(_ data: [UInt8], outputLength: Int, key: [UInt8], salt: [UInt8]?, personal: [UInt8]?) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: outputLength)
        let rc = data.withUnsafeBytes { d in
            key.withUnsafeBytes { k in
                withOptionalBytes(salt) { s in
                    withOptionalBytes(personal) { p in
                        out.withUnsafeMutableBytes { o in
                            generic(o.baseAddress, outputLength, d.baseAddress, UInt64(d.count), k.count == 0 ? nil : k.baseAddress, k.count, s, p)
                        }
                    }
                }
            }
        }
        guard rc == 0 else { throw ReferenceError("crypto_generichash_blake2b_salt_personal failed") }
        return out
    }

    /// `crypto_generichash_blake2b_salt_personal` on raw buffers, no allocation: `outputLength` bytes
    /// of BLAKE2b keyed with `keyLength` bytes at `key` over no input, salt and personal 16 bytes each.
    public func blake2bKDF(into out: UnsafeMutableRawPointer, outputLength: Int, key: UnsafeRawPointer, keyLength: Int,
                           salt: UnsafeRawPointer, personal: UnsafeRawPointer) {
        _ = generic(out, outputLength, nil, 0, key, keyLength, salt, personal)
    }

    /// HMAC-SHA-256 with a key of any length (init/update/final), into a 32-byte `out`.
    public func hmacSHA256(key: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
        _ = authInit(authState, key.baseAddress, key.count)
        _ = authUpdate(authState, data.baseAddress, UInt64(data.count))
        _ = authFinal(authState, out)
    }

    /// HMAC-SHA-256 as an array.
    public func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBytes { k in data.withUnsafeBytes { d in out.withUnsafeMutableBytes { hmacSHA256(key: k, data: d, into: $0.baseAddress!) } } }
        return out
    }

    /// `crypto_pwhash_scryptsalsa208sha256_ll`.
    public func scrypt(password: [UInt8], salt: [UInt8], n: UInt64, r: UInt32, p: UInt32, length: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        let rc = password.withUnsafeBytes { pw in
            salt.withUnsafeBytes { s in
                out.withUnsafeMutableBytes { o in
                    scryptFn(pw.baseAddress, pw.count, s.baseAddress, s.count, n, r, p, o.baseAddress, length)
                }
            }
        }
        guard rc == 0 else { throw ReferenceError("crypto_pwhash_scryptsalsa208sha256_ll failed") }
        return out
    }
}

func withOptionalBytes<R>(_ a: [UInt8]?, _ body: (UnsafeRawPointer?) -> R) -> R {
    guard let a else { return body(nil) }
    return a.withUnsafeBytes { body($0.baseAddress) }
}
