// X25519 (RFC 7748 §5): the Montgomery ladder on Curve25519's u-coordinate, constant time.

/// Curve25519 key agreement (X25519), in CryptoKit's shape.
///
/// ```swift
/// var rng = SecureRandom()
/// let alice = Curve25519.KeyAgreement.PrivateKey(using: &rng)
/// let bob = Curve25519.KeyAgreement.PrivateKey(using: &rng)
/// let s1 = try alice.sharedSecretFromKeyAgreement(with: bob.publicKey)
/// let s2 = try bob.sharedSecretFromKeyAgreement(with: alice.publicKey)   // s1 == s2
/// ```
public enum Curve25519 {
    /// X25519 Diffie-Hellman.
    public enum KeyAgreement {
        /// A 32-byte X25519 private key (the scalar, clamped when used). Its storage is wiped when
        /// the last copy is released.
        public struct PrivateKey: Sendable {
            let secret: SymmetricKey

            /// A new random key from the system generator.
            public init() {
                var rng = SecureRandom()
                self.init(using: &rng)
            }

            /// A new random key from `rng` (tests inject a deterministic generator).
            public init<R: RandomNumberGenerator>(using rng: inout R) {
                secret = SymmetricKey(size: .bits256, using: &rng)
            }

            /// A key from its 32 raw bytes (any 32 bytes are a valid X25519 private key).
            ///
            /// - Throws: ``RampartError/invalidKeyLength`` unless `rawRepresentation` has 32 bytes.
            public init<D: Collection<UInt8>>(rawRepresentation: D) throws(RampartError) {
                guard rawRepresentation.count == 32 else { throw .invalidKeyLength }
                secret = SymmetricKey(data: rawRepresentation)
            }

            /// The 32 raw bytes. The returned array is a copy the caller must wipe
            /// (`secureWipe()`) when done.
            public var rawRepresentation: [UInt8] { secret.withUnsafeBytes { Array($0) } }

            /// The matching public key: X25519(scalar, 9).
            public var publicKey: PublicKey {
                var out = PublicKey.Bytes()
                secret.withUnsafeBytes { s in
                    withUnsafeMutableBytes(of: &out) { o in
                        x25519(scalar: s.baseAddress!, point: nil, out: o.baseAddress!)
                    }
                }
                return PublicKey(bytes: out)
            }

            /// The X25519 shared secret with `publicKey`.
            ///
            /// - Throws: ``RampartError/invalidPublicKey`` when the result is all zeros (the peer sent
            ///   a point of small order: the "contributory behaviour" check of RFC 7748 §6.1).
            public func sharedSecretFromKeyAgreement(with publicKey: PublicKey) throws(RampartError) -> SharedSecret {
                var out = SIMD32<UInt8>()
                var peer = publicKey.bytes
                secret.withUnsafeBytes { s in
                    withUnsafeBytes(of: &peer) { p in
                        withUnsafeMutableBytes(of: &out) { o in
                            x25519(scalar: s.baseAddress!, point: p.baseAddress!, out: o.baseAddress!)
                        }
                    }
                }
                defer { wipe(&out) }
                // OR of all bytes, one comparison at the end. Public by design: the outcome is the
                // error (RFC 7748 §6.1's all-zero refusal).
                var acc: UInt8 = 0
                for i in 0..<32 { acc |= out[i] }
                guard declassified(acc) != 0 else { throw .invalidPublicKey }
                return SharedSecret(key: withUnsafeBytes(of: &out) { SymmetricKey(data: $0) })
            }
        }

        /// A 32-byte X25519 public key (a u-coordinate, little-endian).
        public struct PublicKey: Sendable, Equatable {
            typealias Bytes = SIMD32<UInt8>
            let bytes: Bytes

            init(bytes: Bytes) { self.bytes = bytes }

            /// A public key from its 32 raw bytes. As RFC 7748 requires, every 32-byte string is
            /// accepted (the top bit is ignored, non-canonical values are reduced); small-order
            /// points are caught when the shared secret comes out as zero.
            ///
            /// - Throws: ``RampartError/invalidPublicKey`` unless `rawRepresentation` has 32 bytes.
            public init<D: Collection<UInt8>>(rawRepresentation: D) throws(RampartError) {
                guard rawRepresentation.count == 32 else { throw .invalidPublicKey }
                var b = Bytes()
                for (i, x) in rawRepresentation.enumerated() { b[i] = x }
                bytes = b
            }

            /// The 32 raw bytes.
            public var rawRepresentation: [UInt8] {
                withUnsafeBytes(of: bytes) { Array($0) }
            }
        }
    }

    /// The raw X25519 function of RFC 7748 §5: `scalar` (32 bytes, clamped here) times the point
    /// with u-coordinate `point` (32 bytes), or times the base point 9 when `point` is nil.
    /// Returns the 32-byte u-coordinate, which may be all zeros (no check: this is the primitive the
    /// test vectors exercise; ``KeyAgreement/PrivateKey/sharedSecretFromKeyAgreement(with:)`` checks).
    ///
    /// - Throws: ``RampartError/invalidKeyLength`` / ``RampartError/invalidPublicKey`` for inputs
    ///   that are not 32 bytes.
    public static func scalarMultiply<S: Collection<UInt8>, P: Collection<UInt8>>(
        scalar: S, point: P?
    ) throws(RampartError) -> [UInt8] {
        try scalarMultiply(scalar: scalar, point: point, backend: CPU.defaultBackend)
    }

    /// As ``scalarMultiply(scalar:point:)``, pinned to one implementation: `.portable` never runs the
    /// hardware kernel (tests run every vector through both).
    @_spi(Testing)
    public static func scalarMultiply<S: Collection<UInt8>, P: Collection<UInt8>>(
        scalar: S, point: P?, backend: Backend
    ) throws(RampartError) -> [UInt8] {
        guard scalar.count == 32 else { throw .invalidKeyLength }
        var s = SIMD32<UInt8>(), u = SIMD32<UInt8>()
        defer { wipe(&s) }
        for (i, x) in scalar.enumerated() { s[i] = x }
        if let point {
            guard point.count == 32 else { throw .invalidPublicKey }
            for (i, x) in point.enumerated() { u[i] = x }
        }
        var out = [UInt8](repeating: 0, count: 32)
        withUnsafeBytes(of: &s) { sb in
            withUnsafeBytes(of: &u) { ub in
                out.withUnsafeMutableBytes { o in
                    x25519(scalar: sb.baseAddress!, point: point == nil ? nil : ub.baseAddress!, out: o.baseAddress!,
                           backend: backend)
                }
            }
        }
        return out
    }
}

/// An X25519 shared secret (32 bytes). Compare in constant time with `==`; derive keys from it
/// (NaCl's `Box` runs it through HSalsa20). Wiped when released.
public struct SharedSecret: Sendable, Equatable {
    let key: SymmetricKey

    /// Calls `body` with the 32 secret bytes.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try key.withUnsafeBytes(body)
    }

    /// Constant-time comparison.
    public static func == (a: SharedSecret, b: SharedSecret) -> Bool { a.key == b.key }
}

/// X25519(scalar, u) into `out` (32 bytes each). `point == nil` means the base point u = 9.
/// Constant time in the scalar and the point. The implementation is the registry's for `backend`
/// (`Kernels.x25519`: radix 2^64 with mulx where the processor has it, else the portable ladder below).
func x25519(scalar: UnsafeRawPointer, point: UnsafeRawPointer?, out: UnsafeMutableRawPointer,
            backend: Backend = CPU.defaultBackend) {
    // Clamp a copy of the scalar (RFC 7748 §5, decodeScalar25519).
    var k0 = UInt64(littleEndian: scalar.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
    var k1 = UInt64(littleEndian: scalar.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    var k2 = UInt64(littleEndian: scalar.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
    var k3 = UInt64(littleEndian: scalar.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
    k0 &= ~7
    k3 &= (1 << 63) - 1
    k3 |= 1 << 62
    defer {
        // Wipe the scalar copies.
        k0 = 0; k1 = 0; k2 = 0; k3 = 0
        withUnsafeMutableBytes(of: &k0) { secureZero($0) }
        withUnsafeMutableBytes(of: &k1) { secureZero($0) }
        withUnsafeMutableBytes(of: &k2) { secureZero($0) }
        withUnsafeMutableBytes(of: &k3) { secureZero($0) }
    }
    Registries.x25519.implementation(for: backend).scalarMultiply(out, k0, k1, k2, k3, point)
}

/// The portable ladder: X25519 with the clamped scalar words `k0…k3` and the u-coordinate at `point`
/// (nil: 9), in radix 2^51. Constant time in the scalar and the point.
func x25519Ladder(_ out: UnsafeMutableRawPointer, _ k0: UInt64, _ k1: UInt64, _ k2: UInt64, _ k3: UInt64,
                  _ point: UnsafeRawPointer?) {
    let x1: Field25519
    if let point { x1 = Field25519(bytes: point) } else { x1 = Field25519(9, 0, 0, 0, 0) }
    let x1Times19 = Field25519.Times19(x1)
    var x2 = Field25519.one, z2 = Field25519.zero
    var x3 = x1, z3 = Field25519.one
    var swap: UInt64 = 0

    // Bits 254 down to 0 (bit 255 is clear after clamping, bits 0..2 are zero but still run).
    var t = 254
    while t >= 0 {
        let word = t < 64 ? k0 : t < 128 ? k1 : t < 192 ? k2 : k3   // t is public
        let bit = (word >> UInt64(t & 63)) & 1
        swap ^= bit
        Field25519.conditionalSwap(&x2, &x3, swap)
        Field25519.conditionalSwap(&z2, &z3, swap)
        swap = bit

        let a = x2 + z2
        let aa = a.squared()
        let b = x2 - z2
        let bb = b.squared()
        let e = aa - bb
        let c = x3 + z3
        let d = x3 - z3
        let da = d * a
        let cb = c * b
        x3 = (da + cb).squared()
        z3 = Field25519.mul((da - cb).squared(), x1, x1Times19)
        x2 = aa * bb
        z2 = e * (aa + e.timesA24())
        t &-= 1
    }
    Field25519.conditionalSwap(&x2, &x3, swap)
    Field25519.conditionalSwap(&z2, &z3, swap)

    (x2 * z2.inverted()).store(out)

    // Wipe the ladder state (the scalar copies are wiped on return).
    withUnsafeMutableBytes(of: &x2) { secureZero($0) }
    withUnsafeMutableBytes(of: &z2) { secureZero($0) }
    withUnsafeMutableBytes(of: &x3) { secureZero($0) }
    withUnsafeMutableBytes(of: &z3) { secureZero($0) }
}
