// Reference big-number arithmetic: OpenSSL's BN_* (arithmetic, division, mod_exp, the constant-time
// mod_exp_mont_consttime, mod_inverse, gcd, primality) and raw RSA (RSA_public_encrypt with
// RSA_NO_PADDING). Values cross the boundary as big-endian byte arrays. Loaded with dlopen like the
// rest of this target.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// OpenSSL's BIGNUM functions and raw RSA, for differential tests and the benchmark.
public final class OpenSSLBN: @unchecked Sendable {
    /// The loaded functions, or `nil` when libcrypto (or one of these symbols) is missing.
    public static let shared: OpenSSLBN? = OpenSSLBN()

    typealias New = @convention(c) () -> OpaquePointer?
    typealias Free = @convention(c) (OpaquePointer?) -> Void
    typealias Bin2BN = @convention(c) (UnsafeRawPointer?, Int32, OpaquePointer?) -> OpaquePointer?
    typealias BN2Bin = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32
    typealias NumBits = @convention(c) (OpaquePointer?) -> Int32
    typealias Op2 = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    typealias Op2Ctx = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    typealias Div = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    typealias ModExp = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    typealias ModExpMont = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?,
                                           OpaquePointer?) -> Int32
    typealias ModInverse = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?) -> OpaquePointer?
    typealias Shift = @convention(c) (OpaquePointer?, OpaquePointer?, Int32) -> Int32
    typealias IsPrimeEx = @convention(c) (OpaquePointer?, Int32, OpaquePointer?, OpaquePointer?) -> Int32
    typealias CheckPrime = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    typealias MontSet = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    typealias SetFlags = @convention(c) (OpaquePointer?, Int32) -> Void
    typealias RSASet0Key = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    typealias RSAPublicEncrypt = @convention(c) (Int32, UnsafeRawPointer?, UnsafeMutableRawPointer?, OpaquePointer?, Int32) -> Int32

    let bnNew: New, bnFree: Free, bin2bn: Bin2BN, bn2bin: BN2Bin, numBits: NumBits
    let ctxNew: New, ctxFree: Free
    let add: Op2, sub: Op2, mul: Op2Ctx, div: Div, gcdFn: Op2Ctx, lshift: Shift, rshift: Shift
    let modExp: ModExp, modExpConsttime: ModExpMont, modExpMont: ModExpMont, modInverse: ModInverse
    let isPrimeEx: IsPrimeEx, checkPrime: CheckPrime?
    let montNew: New, montFree: Free, montSet: MontSet, setFlags: SetFlags
    let rsaNew: New, rsaFree: Free, rsaSet0Key: RSASet0Key, rsaPublicEncrypt: RSAPublicEncrypt
    typealias D2IRSAPrivate = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<UnsafeRawPointer?>?, Int) -> OpaquePointer?
    let d2iRSAPrivateKey: D2IRSAPrivate?
    /// RSA_private_decrypt has RSA_public_encrypt's prototype.
    let rsaPrivateDecrypt: RSAPublicEncrypt?

    private init?() {
        guard OpenSSL.shared != nil,
              let (h, _) = openLibrary(["libcrypto.so.3", "libcrypto.so", "libcrypto.3.dylib", "libcrypto.dylib"]),
              let bnNew = symbol(h, "BN_new", as: New.self),
              let bnFree = symbol(h, "BN_clear_free", as: Free.self),
              let bin2bn = symbol(h, "BN_bin2bn", as: Bin2BN.self),
              let bn2bin = symbol(h, "BN_bn2bin", as: BN2Bin.self),
              let numBits = symbol(h, "BN_num_bits", as: NumBits.self),
              let ctxNew = symbol(h, "BN_CTX_new", as: New.self),
              let ctxFree = symbol(h, "BN_CTX_free", as: Free.self),
              let add = symbol(h, "BN_add", as: Op2.self),
              let sub = symbol(h, "BN_sub", as: Op2.self),
              let mul = symbol(h, "BN_mul", as: Op2Ctx.self),
              let div = symbol(h, "BN_div", as: Div.self),
              let gcdFn = symbol(h, "BN_gcd", as: Op2Ctx.self),
              let lshift = symbol(h, "BN_lshift", as: Shift.self),
              let rshift = symbol(h, "BN_rshift", as: Shift.self),
              let modExp = symbol(h, "BN_mod_exp", as: ModExp.self),
              let modExpConsttime = symbol(h, "BN_mod_exp_mont_consttime", as: ModExpMont.self),
              let modExpMont = symbol(h, "BN_mod_exp_mont", as: ModExpMont.self),
              let modInverse = symbol(h, "BN_mod_inverse", as: ModInverse.self),
              let isPrimeEx = symbol(h, "BN_is_prime_ex", as: IsPrimeEx.self),
              let montNew = symbol(h, "BN_MONT_CTX_new", as: New.self),
              let montFree = symbol(h, "BN_MONT_CTX_free", as: Free.self),
              let montSet = symbol(h, "BN_MONT_CTX_set", as: MontSet.self),
              let setFlags = symbol(h, "BN_set_flags", as: SetFlags.self),
              let rsaNew = symbol(h, "RSA_new", as: New.self),
              let rsaFree = symbol(h, "RSA_free", as: Free.self),
              let rsaSet0Key = symbol(h, "RSA_set0_key", as: RSASet0Key.self),
              let rsaPublicEncrypt = symbol(h, "RSA_public_encrypt", as: RSAPublicEncrypt.self)
        else { return nil }
        self.bnNew = bnNew; self.bnFree = bnFree; self.bin2bn = bin2bn; self.bn2bin = bn2bin; self.numBits = numBits
        self.ctxNew = ctxNew; self.ctxFree = ctxFree
        self.add = add; self.sub = sub; self.mul = mul; self.div = div; self.gcdFn = gcdFn
        self.lshift = lshift; self.rshift = rshift
        self.modExp = modExp; self.modExpConsttime = modExpConsttime; self.modExpMont = modExpMont; self.modInverse = modInverse
        self.isPrimeEx = isPrimeEx; self.checkPrime = symbol(h, "BN_check_prime", as: CheckPrime.self)
        self.montNew = montNew; self.montFree = montFree; self.montSet = montSet; self.setFlags = setFlags
        self.rsaNew = rsaNew; self.rsaFree = rsaFree; self.rsaSet0Key = rsaSet0Key; self.rsaPublicEncrypt = rsaPublicEncrypt
        d2iRSAPrivateKey = symbol(h, "d2i_RSAPrivateKey", as: D2IRSAPrivate.self)
        rsaPrivateDecrypt = symbol(h, "RSA_private_decrypt", as: RSAPublicEncrypt.self)
    }

    /// A BIGNUM owned by Swift (freed with BN_clear_free).
    public final class Number {
        let lib: OpenSSLBN
        let bn: OpaquePointer
        init(_ lib: OpenSSLBN, _ bn: OpaquePointer) { self.lib = lib; self.bn = bn }
        deinit { lib.bnFree(bn) }
        /// The minimal big-endian bytes (empty for zero).
        public var bytes: [UInt8] {
            let n = (Int(lib.numBits(bn)) + 7) / 8
            var out = [UInt8](repeating: 0, count: n)
            if n > 0 { out.withUnsafeMutableBytes { _ = lib.bn2bin(bn, $0.baseAddress) } }
            return out
        }
        /// `BN_num_bits`.
        public var bitCount: Int { Int(lib.numBits(bn)) }
    }

    /// A number from big-endian bytes (`BN_bin2bn`).
    public func number(_ bytes: [UInt8]) -> Number {
        let bn = bytes.withUnsafeBytes { bin2bn($0.baseAddress, Int32($0.count), nil) }!
        return Number(self, bn)
    }

    func fresh() -> Number { Number(self, bnNew()!) }

    func check(_ rc: Int32, _ what: String) throws {
        if rc != 1 { throw ReferenceError("\(what) failed") }
    }

    /// Keeps the numbers alive across a C call (Swift may otherwise free them after their last use,
    /// which is reading `.bn`).
    func keep<R>(_ objects: Number..., body: () throws -> R) rethrows -> R {
        try withExtendedLifetime(objects) { try body() }
    }

    /// `a + b`.
    public func add(_ a: [UInt8], _ b: [UInt8]) throws -> [UInt8] {
        let r = fresh(), x = number(a), y = number(b)
        try keep(r, x, y) { try check(add(r.bn, x.bn, y.bn), "BN_add") }
        return r.bytes
    }

    /// `a − b` with the magnitude and sign (true = negative).
    public func sub(_ a: [UInt8], _ b: [UInt8]) throws -> (magnitude: [UInt8], negative: Bool) {
        let r = fresh(), x = number(a), y = number(b)
        try keep(r, x, y) { try check(sub(r.bn, x.bn, y.bn), "BN_sub") }
        let ge = x.bytes.count > y.bytes.count || (x.bytes.count == y.bytes.count && !x.bytes.lexicographicallyPrecedes(y.bytes))
        return (r.bytes, !ge)
    }

    /// `a · b`.
    public func mul(_ a: [UInt8], _ b: [UInt8]) throws -> [UInt8] {
        let ctx = ctxNew()  // per call: BN_CTX is not thread-safe and tests run in parallel
        defer { ctxFree(ctx) }
        let r = fresh(), x = number(a), y = number(b)
        try keep(r, x, y) { try check(mul(r.bn, x.bn, y.bn, ctx), "BN_mul") }
        return r.bytes
    }

    /// Quotient and remainder (`BN_div`).
    public func divMod(_ a: [UInt8], _ b: [UInt8]) throws -> (quotient: [UInt8], remainder: [UInt8]) {
        let ctx = ctxNew()  // per call: BN_CTX is not thread-safe and tests run in parallel
        defer { ctxFree(ctx) }
        let q = fresh(), r = fresh(), x = number(a), y = number(b)
        try keep(q, r, x, y) { try check(div(q.bn, r.bn, x.bn, y.bn, ctx), "BN_div") }
        return (q.bytes, r.bytes)
    }

    /// `a << n`.
    public func shiftLeft(_ a: [UInt8], _ n: Int) throws -> [UInt8] {
        let r = fresh(), x = number(a)
        try keep(r, x) { try check(lshift(r.bn, x.bn, Int32(n)), "BN_lshift") }
        return r.bytes
    }

    /// `a >> n`.
    public func shiftRight(_ a: [UInt8], _ n: Int) throws -> [UInt8] {
        let r = fresh(), x = number(a)
        try keep(r, x) { try check(rshift(r.bn, x.bn, Int32(n)), "BN_rshift") }
        return r.bytes
    }

    /// `gcd(a, b)`.
    public func gcd(_ a: [UInt8], _ b: [UInt8]) throws -> [UInt8] {
        let ctx = ctxNew()  // per call: BN_CTX is not thread-safe and tests run in parallel
        defer { ctxFree(ctx) }
        let r = fresh(), x = number(a), y = number(b)
        try keep(r, x, y) { try check(gcdFn(r.bn, x.bn, y.bn, ctx), "BN_gcd") }
        return r.bytes
    }

    /// `a⁻¹ mod m`, or nil when there is none.
    public func modInverse(_ a: [UInt8], _ m: [UInt8]) -> [UInt8]? {
        let ctx = ctxNew()  // per call: BN_CTX is not thread-safe and tests run in parallel
        defer { ctxFree(ctx) }
        let r = fresh(), x = number(a), y = number(m)
        guard keep(r, x, y, body: { modInverse(r.bn, x.bn, y.bn, ctx) != nil }) else { return nil }
        return r.bytes
    }

    /// `BN_mod_exp`.
    public func modExp(_ a: [UInt8], _ e: [UInt8], _ m: [UInt8]) throws -> [UInt8] {
        let ctx = ctxNew()  // per call: BN_CTX is not thread-safe and tests run in parallel
        defer { ctxFree(ctx) }
        let r = fresh(), x = number(a), y = number(e), z = number(m)
        try keep(r, x, y, z) { try check(modExp(r.bn, x.bn, y.bn, z.bn, ctx), "BN_mod_exp") }
        return r.bytes
    }

    /// `BN_mod_exp_mont_consttime` (odd modulus; base below the modulus).
    public func modExpConsttime(_ a: [UInt8], _ e: [UInt8], _ m: [UInt8]) throws -> [UInt8] {
        let ctx = ctxNew()  // per call: BN_CTX is not thread-safe and tests run in parallel
        defer { ctxFree(ctx) }
        let r = fresh(), x = number(a), y = number(e), z = number(m)
        try keep(r, x, y, z) { try check(modExpConsttime(r.bn, x.bn, y.bn, z.bn, ctx, nil), "BN_mod_exp_mont_consttime") }
        return r.bytes
    }

    /// `BN_is_prime_ex(p, rounds)`: 1 prime, 0 composite.
    public func isPrime(_ p: [UInt8], rounds: Int) -> Bool {
        let ctx = ctxNew()  // per call: BN_CTX is not thread-safe and tests run in parallel
        defer { ctxFree(ctx) }
        let x = number(p)
        return keep(x) { isPrimeEx(x.bn, Int32(rounds), ctx, nil) == 1 }
    }

    /// `BN_check_prime` (OpenSSL 3's recommended check), when exported.
    public func checkPrime(_ p: [UInt8]) -> Bool? {
        let ctx = ctxNew()  // per call: BN_CTX is not thread-safe and tests run in parallel
        defer { ctxFree(ctx) }
        guard let checkPrime else { return nil }
        let x = number(p)
        return keep(x) { checkPrime(x.bn, ctx, nil) == 1 }
    }

    /// A fixed modular exponentiation problem with a precomputed BN_MONT_CTX, for the benchmark:
    /// `run()` computes `base^exponent mod modulus` with BN_mod_exp_mont_consttime (or, with
    /// `constantTime: false`, BN_mod_exp_mont).
    public final class ModExpProblem {
        let lib: OpenSSLBN
        let base: Number, exponent: Number, modulus: Number, result: Number
        let mont: OpaquePointer
        let ctx: OpaquePointer
        let constantTime: Bool
        public init?(_ lib: OpenSSLBN, base: [UInt8], exponent: [UInt8], modulus: [UInt8], constantTime: Bool = true) {
            self.lib = lib
            self.base = lib.number(base); self.exponent = lib.number(exponent); self.modulus = lib.number(modulus)
            result = lib.fresh()
            guard let m = lib.montNew(), let c = lib.ctxNew() else { return nil }
            mont = m
            ctx = c
            self.constantTime = constantTime
            guard lib.montSet(mont, self.modulus.bn, ctx) == 1 else { return nil }
        }
        deinit { lib.montFree(mont); lib.ctxFree(ctx) }
        /// One exponentiation; returns the result's bytes when `output` is set.
        @discardableResult
        public func run(output: Bool = false) -> [UInt8] {
            if constantTime {
                _ = lib.modExpConsttime(result.bn, base.bn, exponent.bn, modulus.bn, ctx, mont)
            } else {
                _ = lib.modExpMont(result.bn, base.bn, exponent.bn, modulus.bn, ctx, mont)
            }
            return output ? result.bytes : []
        }
    }

    /// An RSA public key for raw (unpadded) public operations.
    public final class RSAPublicKey {
        let lib: OpenSSLBN
        let rsa: OpaquePointer
        /// The modulus size in bytes.
        public let size: Int
        public init?(_ lib: OpenSSLBN, modulus: [UInt8], exponent: [UInt8]) {
            self.lib = lib
            guard let rsa = lib.rsaNew() else { return nil }
            self.rsa = rsa
            let n = modulus.withUnsafeBytes { lib.bin2bn($0.baseAddress, Int32($0.count), nil) }
            let e = exponent.withUnsafeBytes { lib.bin2bn($0.baseAddress, Int32($0.count), nil) }
            size = (modulus.drop { $0 == 0 }.count)
            guard lib.rsaSet0Key(rsa, n, e, nil) == 1 else { return nil }
        }
        deinit { lib.rsaFree(rsa) }
        /// `RSA_public_encrypt(..., RSA_NO_PADDING)` of exactly `size` bytes into `out`; false on error.
        public func encryptRaw(_ input: UnsafeRawPointer, into out: UnsafeMutableRawPointer) -> Bool {
            lib.rsaPublicEncrypt(Int32(size), input, out, rsa, 3) == size
        }
        /// Array form of ``encryptRaw(_:into:)``.
        public func encryptRaw(_ input: [UInt8]) -> [UInt8]? {
            guard input.count == size else { return nil }
            var out = [UInt8](repeating: 0, count: size)
            let ok = input.withUnsafeBytes { i in out.withUnsafeMutableBytes { encryptRaw(i.baseAddress!, into: $0.baseAddress!) } }
            return ok ? out : nil
        }
    }

    /// An RSA private key for raw (unpadded) private operations, loaded from PKCS#1 DER. OpenSSL runs
    /// them with the CRT and, by default, blinding.
    public final class RSAPrivateKey {
        let lib: OpenSSLBN
        let rsa: OpaquePointer
        /// The modulus size in bytes.
        public let size: Int
        public init?(_ lib: OpenSSLBN, pkcs1DER der: [UInt8], modulusBytes: Int) {
            self.lib = lib
            guard let d2i = lib.d2iRSAPrivateKey, lib.rsaPrivateDecrypt != nil else { return nil }
            let key: OpaquePointer? = der.withUnsafeBytes { b in
                var p: UnsafeRawPointer? = b.baseAddress
                return d2i(nil, &p, b.count)
            }
            guard let key else { return nil }
            rsa = key
            size = modulusBytes
        }
        deinit { lib.rsaFree(rsa) }
        /// `RSA_private_decrypt(..., RSA_NO_PADDING)` of exactly `size` bytes into `out`; false on error.
        public func decryptRaw(_ input: UnsafeRawPointer, into out: UnsafeMutableRawPointer) -> Bool {
            lib.rsaPrivateDecrypt!(Int32(size), input, out, rsa, 3) == size
        }
    }
}
