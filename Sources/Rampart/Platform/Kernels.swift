// The kernel registry: every choice between Rampart's portable Swift code and a hardware kernel, each
// with a name, decided once per process from the CPU features (`CPU.features`, which already honours
// `RAMPART_FORCE_PORTABLE` and `RAMPART_DISABLE_FEATURES`).
//
// Every primitive with a kernel is on the registry (Platform/Registry.swift, Registrations.swift): the
// hashes, the stream ciphers, Poly1305 and Argon2, the AES family (`aes`, `ghash`, `ige-sha256`,
// `ige-lanes`), X25519 and the Montgomery family; the choices below are the registries'. An engine
// calls its registry's selected implementation and contains no `#if arch`: the architecture condition
// appears once, in each registry's candidate list.
//
// Objects built with `Backend.hardware` (the default unless the portable path is forced) run a kernel
// exactly when its choice ``KernelChoice/isActive``; objects built with `Backend.portable` never do.

/// One primitive's choice between the portable Swift code and a hardware kernel, made once per process.
public struct KernelChoice: Sendable, Hashable, CustomStringConvertible {
    /// The primitive, e.g. `"sha256"`, `"aes"`, `"ghash"`, `"montgomery"`.
    public let primitive: String
    /// The hardware kernel this architecture has for the primitive (`"sha-ni"`, `"aes-ni"`,
    /// `"armv8-aes"`, ...), or `nil` when it has none.
    public let kernel: String?
    /// `true` when the kernel runs for objects on `Backend.hardware`: it exists on this architecture,
    /// the processor has every feature it needs (after `RAMPART_DISABLE_FEATURES`), and
    /// `RAMPART_FORCE_PORTABLE` is not set.
    public let isActive: Bool
    /// Every implementation of this architecture, best first with the portable code last, and how each
    /// fared at selection (its features, its known-answer self-test). Empty for a choice not yet
    /// made by a registry (Platform/Registry.swift).
    public let implementations: [ImplementationStatus]
    /// Nanoseconds the self-tests of this primitive's implementations took (0 for a choice not yet
    /// made by a registry).
    public let selfTestNanoseconds: UInt64

    init(_ primitive: String, kernel: String?, supported: Bool, implementations: [ImplementationStatus] = [],
         selfTestNanoseconds: UInt64 = 0) {
        self.primitive = primitive
        self.kernel = kernel
        isActive = kernel != nil && supported
        self.implementations = implementations
        self.selfTestNanoseconds = selfTestNanoseconds
    }

    /// The implementations whose self-test failed (never run).
    public var failedSelfTests: [String] { implementations.filter { $0.state == .failed }.map(\.name) }

    /// The implementation objects on `Backend.hardware` run: the kernel's name, or `"portable"`.
    public var selected: String { isActive ? kernel ?? "portable" : "portable" }

    /// `"sha256: sha-ni"`, `"aes: portable"`, ...
    public var description: String { "\(primitive): \(selected)" }

    /// Whether an object pinned to `backend` runs the kernel.
    @inline(__always)
    func runs(on backend: Backend) -> Bool { isActive && backend == .hardware }
}

/// Every hardware-kernel choice Rampart makes, decided once from the CPU features.
///
/// `rampart info` and the benchmark header print ``all``; the tests enumerate it to run each kernel
/// that is active on the machine against the portable code and published vectors.
public enum Kernels {
    /// SHA-1 compression (x86_64: the SHA extensions, or without them an AVX2 message schedule with BMI2
    /// rounds; the name is the one this processor runs).
    public static let sha1 = Registries.sha1.choice
    /// SHA-256 compression (x86_64: the SHA extensions, or without them an AVX2 message schedule with
    /// BMI2 rounds; the name is the one this processor runs).
    public static let sha256 = Registries.sha256.choice
    /// SHA-512 compression (x86_64: AVX2 message schedule with BMI2 rounds).
    public static let sha512 = Registries.sha512.choice
    /// BLAKE2b compression (x86_64: AVX2, or scalar with BMI2 on AMD processors).
    public static let blake2b = Registries.blake2b.choice
    /// The Salsa20 stream, the stitched XSalsa20-Poly1305 of `SecretBox`, the short-message blocks and
    /// scrypt's BlockMix (x86_64: eight blocks at a time on AVX2 or AVX-512VL, the short-message blocks
    /// on AVX-512VL, on AMD processors the XSalsa20 input block and single blocks in scalar registers;
    /// the name is the one this processor runs).
    public static let salsa20 = Registries.salsa20.choice
    /// Poly1305 over long messages (x86_64: eight blocks at a time on AVX-512 IFMA in radix 2^44, or
    /// four on AVX2 in radix 2^26 without IFMA; the name is the one this processor runs), for
    /// ``Poly1305`` and the parts of SecretBox and ChaCha20-Poly1305 that no stitched kernel covers.
    public static let poly1305 = Registries.poly1305.choice
    /// The ChaCha20 stream and ChaCha20-Poly1305 (x86_64: eight blocks at a time on AVX2 or AVX-512VL).
    public static let chacha20 = Registries.chacha20.choice
    /// The Argon2 compression and segment fill of `Argon2id` (x86_64: AVX2).
    public static let argon2 = Registries.argon2.choice
    /// The AES block function and its modes (x86_64: AES-NI, with CTR and CBC decryption of 256 bytes
    /// and more sixteen blocks at a time on 256-bit VAES vectors where present, `aes-ni+vaes`; arm64:
    /// the ARMv8 AES instructions). A key runs on the implementation that expanded it.
    public static let aes = Registries.aes.choice
    /// GHASH and AES-GCM's bulk loop (x86_64: PCLMULQDQ stitched with AES-NI, in a VEX build where AVX2
    /// is present, `pclmulqdq+avx`, and messages of 256 bytes and more sixteen blocks at a time on VAES
    /// and VPCLMULQDQ where present, `vaes+vpclmulqdq`; arm64: PMULL). Its GCM loop runs on keys whose
    /// schedule it reads (AES-NI's); other keys run CTR and GHASH one after the other.
    public static let ghash = Registries.ghash.choice
    /// AES-IGE decryption stitched with SHA-256 of the plaintext, MTProto's receiver (x86_64: AES-NI
    /// and SHA-NI in one loop, where the SHA-256 kernel is SHA-NI), for messages of two blocks and more
    /// on AES-NI keys.
    public static let igeSHA256 = Registries.igeSHA256.choice
    /// AES-IGE encryption of several independent messages at once, for MTProto's batch encryption
    /// (x86_64: eight lanes on AES-NI, or sixteen on 512-bit VAES where the 512-bit units are full
    /// width).
    public static let igeLanes = Registries.igeLanes.choice
    /// SHA-256 of several independent messages at once, for MTProto's batch encryption (x86_64: eight
    /// lanes on AVX2 or AVX-512VL where the SHA extensions are absent; two alternating SHA-NI chains on
    /// AMD processors with them; inactive on Intel processors with them).
    public static let sha256Lanes = Registries.sha256Lanes.choice
    /// Montgomery multiplication and squaring at every size (x86_64: `mulx`/`adcx`/`adox`).
    public static let montgomery = Registries.montgomery.choice
    /// X25519 scalar multiplication (x86_64: GF(2^255 − 19) in radix 2^64 with `mulx`).
    public static let x25519 = Registries.x25519.choice
    /// Eight X25519 scalar multiplications at once, one per vector lane (x86_64: radix 2^25.5 with
    /// `vpmuludq` on AVX-512), for ``Curve25519/scalarMultiply(scalars:points:)`` and fan-out key
    /// agreement.
    public static let x25519Lanes = Registries.x25519Lanes.choice
    /// Public-exponent powers modulo 2048-bit moduli (x86_64: AVX2 in radix 2^28; RSA encryption and
    /// the handshake's public checks). Selected on AMD processors only, where it is the faster one
    /// (Platform/Registrations.swift gives the figures).
    /// Where ``modexpIFMA`` is active it serves these powers instead, and this choice is inactive.
    public static let modexp2048 = Registries.modexp2048.choice
    /// Powers modulo 1024-bit and 2048-bit moduli (x86_64: AVX-512 IFMA in radix 2^52): constant-time
    /// ones for secret exponents (RSA private keys, Diffie-Hellman; the two CRT halves of an RSA-2048
    /// private operation run interleaved) and sliding-window ones for public exponents. Other sizes, and
    /// processors without IFMA, use ``montgomery`` (and ``modexp2048``).
    public static let modexpIFMA = Registries.modexpCT.choice

    /// Every choice, in a fixed order.
    public static let all: [KernelChoice] = [sha1, sha256, sha512, blake2b, poly1305, salsa20, chacha20, argon2, aes, igeSHA256, igeLanes, sha256Lanes, ghash, montgomery,
                                             modexp2048, modexpIFMA, x25519, x25519Lanes]

    /// The implementations of `primitive` (a name in ``all``) this processor runs and whose
    /// self-tests passed, best first (the selected one first), the portable code among them: the tests
    /// run each through ``pinned(_:to:)``.
    @_spi(Testing) public static func implementations(of primitive: String) -> [String] {
        Registries.runnable(primitive)
    }

    /// A backend whose objects run implementation `name` of `primitive` (one of
    /// ``implementations(of:)``) and the selected implementation of every other primitive; nil when
    /// this processor cannot run it.
    @_spi(Testing) public static func pinned(_ primitive: String, to name: String) -> Backend? {
        Registries.backend(primitive, pinnedTo: name)
    }

    /// Runs `body` once for every implementation of `primitive` this processor executes (the
    /// portable code included), with a backend pinned to it.
    @_spi(Testing) public static func forEachImplementation(
        of primitive: String, _ body: (_ name: String, _ backend: Backend) throws -> Void
    ) rethrows {
        let names = implementations(of: primitive)
        precondition(!names.isEmpty, "no registry for \(primitive)")
        for name in names { try body(name, pinned(primitive, to: name)!) }
    }

    /// Nanoseconds the self-tests of every registry took (each registry runs its own once, at its
    /// first use).
    public static var selfTestNanoseconds: UInt64 { Registries.selfTestNanoseconds }

    /// One line: `"sha1: sha-ni, sha256: sha-ni, ..."`.
    public static var summary: String { all.map(\.description).joined(separator: ", ") }
}
