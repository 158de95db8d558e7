// The kernel seam: what an implementation of a primitive declares, so that Rampart's registry
// (Rampart/Platform/Registry.swift) can list it, check it against a published answer and select it.
//
// Each primitive with hardware kernels has a protocol here with its entry points (the kernel's own
// signature: raw pointers, counts). The portable Swift code in Rampart and every kernel tier conform
// to it; a kernel declares its conformance in its own source file, next to its code. Adding a kernel
// therefore touches its own file, its target in Package.swift and one registration line in
// Rampart/Platform/Registry.swift.

import Swift

/// The instruction-set extensions an implementation needs, as a set. Rampart maps the processor's
/// features (after `RAMPART_DISABLE_FEATURES`, none when `RAMPART_FORCE_PORTABLE` is set) to this.
public struct KernelFeatures: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// x86_64 SHA extensions.
    public static let sha = KernelFeatures(rawValue: 1 << 0)
    /// x86_64 AES-NI.
    public static let aes = KernelFeatures(rawValue: 1 << 1)
    /// x86_64 PCLMULQDQ.
    public static let pclmul = KernelFeatures(rawValue: 1 << 2)
    /// x86_64 SSSE3.
    public static let ssse3 = KernelFeatures(rawValue: 1 << 3)
    /// x86_64 SSE4.1.
    public static let sse41 = KernelFeatures(rawValue: 1 << 4)
    /// x86_64 AVX2 with AVX, BMI1 and BMI2 (the AVX2 tier).
    public static let avx2 = KernelFeatures(rawValue: 1 << 5)
    /// x86_64 BMI2.
    public static let bmi2 = KernelFeatures(rawValue: 1 << 6)
    /// x86_64 ADX.
    public static let adx = KernelFeatures(rawValue: 1 << 7)
    /// x86_64 VAES on 256-bit registers.
    public static let vaes = KernelFeatures(rawValue: 1 << 8)
    /// x86_64 VPCLMULQDQ on 256-bit registers.
    public static let vpclmulqdq = KernelFeatures(rawValue: 1 << 9)
    /// x86_64 AVX-512F with VL (with the AVX2 tier).
    public static let avx512vl = KernelFeatures(rawValue: 1 << 10)
    /// x86_64 AVX-512 IFMA (with AVX-512VL, BMI2 and ADX).
    public static let avx512ifma = KernelFeatures(rawValue: 1 << 11)
    /// arm64 AES instructions.
    public static let armAES = KernelFeatures(rawValue: 1 << 16)
    /// arm64 PMULL.
    public static let armPMULL = KernelFeatures(rawValue: 1 << 17)
    /// arm64 SHA-1 and SHA-256 instructions.
    public static let armSHA2 = KernelFeatures(rawValue: 1 << 18)
    /// arm64 SHA-512 instructions.
    public static let armSHA512 = KernelFeatures(rawValue: 1 << 19)
}

/// What every implementation of a primitive declares: its name and the features it needs.
public protocol KernelImplementation {
    /// The name `rampart info`, the benchmark header and the tests show (`portable`, `sha-ni`, …).
    static var name: String { get }
    /// Every feature the implementation's instructions need (empty for the portable code).
    static var requires: KernelFeatures { get }
}

// MARK: - Hashes

/// SHA-1 compression: `count` 64-byte blocks into the five state words at `state`.
public protocol SHA1Implementation: KernelImplementation {
    static func blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int)
}

/// SHA-256 compression: `count` 64-byte blocks into the eight state words at `state`.
public protocol SHA256Implementation: KernelImplementation {
    static func blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int)
}

/// SHA-512 compression: `count` 128-byte blocks into the eight state words at `state`.
public protocol SHA512Implementation: KernelImplementation {
    static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ count: Int)
}

/// BLAKE2b compression of `count` 128-byte blocks into `state` (h[0..7], t[0], t[1]). Each block
/// adds 128 to the counter, except that when `lastLength >= 0` the final block of the run is the
/// message's last block: it adds `lastLength` (0...128) and sets the finalization flag.
public protocol BLAKE2bImplementation: KernelImplementation {
    static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ count: Int, _ lastLength: Int)
}

/// SHA-256 of several independent messages at once: `n` 64-byte blocks on each of ``lanes`` lanes
/// (lane l: the eight state words at `states[l]`, its blocks from `data[l]`, `strides[l]` bytes
/// apart, 0 for an idle lane repeating one scratch block). `table` is ``tableBytes`` of scratch,
/// 64-byte aligned, which the caller wipes.
public protocol SHA256LanesImplementation: KernelImplementation {
    /// Messages per call.
    static var lanes: Int { get }
    /// Scratch bytes a call needs.
    static var tableBytes: Int { get }
    static func compress(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                         _ strides: UnsafePointer<Int>, _ n: Int, _ table: UnsafeMutableRawPointer)
}

// MARK: - Curve25519

/// X25519 of one scalar (the clamped words `k0…k3`, least significant first) and the u-coordinate at
/// `point` (32 bytes little-endian; nil: the base point 9), written to `out` (32 bytes).
public protocol X25519Implementation: KernelImplementation {
    static func scalarMultiply(_ out: UnsafeMutableRawPointer, _ k0: UInt64, _ k1: UInt64, _ k2: UInt64, _ k3: UInt64,
                               _ point: UnsafeRawPointer?)
}

/// X25519 of ``lanes`` pairs at once: clamped scalars as four rows of `lanes` words (row w holds word
/// w of every scalar), points and results in radix 2^25.5 as ten rows of `lanes` limbs (limb 2t the
/// low 26 bits of the radix-2^51 limb t, limb 2t + 1 the high 25); results may exceed 2^25.5 per limb
/// by a little (the caller carries and reduces).
public protocol X25519LanesImplementation: KernelImplementation {
    /// Pairs per call.
    static var lanes: Int { get }
    static func scalarMultiply(_ result: UnsafeMutablePointer<UInt64>, _ points: UnsafePointer<UInt64>,
                               _ scalars: UnsafePointer<UInt64>)
}

// MARK: - Modular arithmetic

/// Montgomery multiplication and squaring modulo an odd `n`-limb modulus `m` (R = 2^(64n)):
/// `r = a · b · R⁻¹ mod m` and `r = a² · R⁻¹ mod m` for `a < R`, `b < m`, with `m0inv = −m⁻¹ mod 2^64`;
/// `t` is n + 2 limbs of scratch. Constant time in the values.
public protocol MontgomeryImplementation: KernelImplementation {
    static func mul(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                    _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>)
    static func square(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                       _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>)
}

/// Public-exponent powers modulo moduli of ``limbs`` limbs in the implementation's own Montgomery
/// radix R' = 2^``montgomeryBits`` (the caller precomputes `rr = R'² mod m`). `ws` holds
/// ``workspaceLanes`` words.
public protocol MontgomeryWideImplementation: KernelImplementation {
    /// The modulus size served, in 64-bit limbs.
    static var limbs: Int { get }
    static var montgomeryBits: Int { get }
    static var workspaceLanes: Int { get }
    /// `out = base^exp mod m`, sliding window, variable time; `base < m`, `exp[el − 1] ≠ 0`.
    static func powerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                        _ el: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ rr: UnsafePointer<UInt64>,
                        _ ws: UnsafeMutablePointer<UInt64>)
    /// `out = a · b · R'⁻¹ mod m` for `a, b < m`.
    static func mul(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                    _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ ws: UnsafeMutablePointer<UInt64>)
}

/// Constant-time and public-exponent powers modulo the moduli it serves (``serves(limbs:)``), in its
/// own Montgomery radix R' = 2^``montgomeryBits(limbs:)`` (the caller precomputes `rr = R'² mod m`),
/// and two constant-time powers at once modulo two 16-limb moduli (RSA-CRT). `ws` holds
/// ``workspaceLanes(limbs:pair:)`` words.
public protocol ModularPowerImplementation: KernelImplementation {
    static func serves(limbs: Int) -> Bool
    static func montgomeryBits(limbs: Int) -> Int
    static func workspaceLanes(limbs: Int, pair: Bool) -> Int
    /// `out = base^exp mod m`, constant time in base, exponent and modulus (`window` 1...5 bits).
    static func powerCT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                        _ expLimbs: Int, window: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ rr: UnsafePointer<UInt64>,
                        limbs: Int, _ ws: UnsafeMutablePointer<UInt64>)
    /// `out = base^exp mod m`, sliding window, variable time; `base < m`, `exp[expLimbs − 1] ≠ 0`.
    static func powerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                        _ expLimbs: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ rr: UnsafePointer<UInt64>,
                        limbs: Int, _ ws: UnsafeMutablePointer<UInt64>)
    /// Two constant-time powers modulo two 16-limb moduli, exponents of `expLimbs` limbs each.
    static func powerCTPair(_ out1: UnsafeMutablePointer<UInt64>, _ base1: UnsafePointer<UInt64>, _ exp1: UnsafePointer<UInt64>,
                            _ m1: UnsafePointer<UInt64>, _ m0inv1: UInt64, _ rr1: UnsafePointer<UInt64>,
                            _ out2: UnsafeMutablePointer<UInt64>, _ base2: UnsafePointer<UInt64>, _ exp2: UnsafePointer<UInt64>,
                            _ m2: UnsafePointer<UInt64>, _ m0inv2: UInt64, _ rr2: UnsafePointer<UInt64>,
                            expLimbs: Int, window: Int, _ ws: UnsafeMutablePointer<UInt64>)
    /// `out = a · b · R'⁻¹ mod m` for `a, b < m` (testing); with `pair` through both halves of the
    /// interleaved form, false when they disagree.
    static func mul(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                    _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, limbs: Int, pair: Bool, _ ws: UnsafeMutablePointer<UInt64>) -> Bool
}

// MARK: - Stream ciphers, Poly1305, Argon2

/// The Salsa20 stream loops of an eight-block kernel. `state` is the 16-word Salsa20 input block
/// (native-endian words, the 64-bit block counter in words 8 and 9); a call advances the counter by
/// `8 · groups`.
public protocol Salsa20StreamImplementation: KernelImplementation {
    /// XORs `groups` · 512 bytes of keystream from `src` into `dst` (the same buffer or disjoint ones).
    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int)
    /// ``xor(_:_:_:_:)`` with `src` advancing `srcStride` bytes a group (0 with 512 zero bytes writes
    /// the bare keystream), stitched with Poly1305: during group g ≥ `macLag` the 32 blocks at
    /// `mac + 512 · (g − macLag)` are absorbed into `poly` (r0, r1, s1, h0, h1, h2 in radix 2^64; the
    /// accumulator is updated), each with the 2^128 bit. `macLag` 1 authenticates the ciphertext the
    /// call writes, one group behind (seal); 0 an independent buffer (open).
    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int)
}

/// The single Salsa20/20 cores a short XSalsa20 message costs.
public protocol Salsa20BlockImplementation: KernelImplementation {
    /// The XSalsa20 input block (sixteen words, standard layout) of a 32-byte `key`, a 24-byte `nonce`
    /// and block `counter`: the HSalsa20 subkey of the key and nonce[0..<16] around nonce[16..<24].
    static func xsalsa20Input(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32>
    /// The keystream block of input block `x` into `out` (64 bytes).
    static func block(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer)
}

/// Salsa20, XSalsa20 and XSalsa20-Poly1305 (`SecretBox`), and scrypt's BlockMix: every entry point,
/// as the `salsa20` registry selects them.
public protocol Salsa20Implementation: Salsa20StreamImplementation, Salsa20BlockImplementation {
    /// Whether ``xsalsa20InputPair(_:_:_:)``, ``blocks2(_:_:)``, ``blocks4(_:_:)`` and
    /// ``scryptBlockMix(_:_:_:_:)`` are vector kernels of this implementation. When false they are the
    /// portable code, whose four-block loop the engines then run inline (handing each 16 bytes of
    /// keystream straight to the XOR) instead of calling ``blocks4(_:_:)`` through a buffer.
    static var vectorBlocks: Bool { get }
    /// The XSalsa20 input blocks (counter 0) of two keys under one nonce.
    static func xsalsa20InputPair(_ keyA: UnsafeRawPointer, _ keyB: UnsafeRawPointer, _ nonce: UnsafeRawPointer)
        -> (SIMD16<UInt32>, SIMD16<UInt32>)
    /// Keystream blocks n and n + 1 (n: the counter in words 8 and 9 of `x`) into `out` (128 bytes).
    static func blocks2(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer)
    /// Keystream blocks n ..< n + 4 into `out` (256 bytes).
    static func blocks4(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer)
    /// scryptBlockMix (RFC 7914 §4) on blocks of 128·`r` bytes in the diagonal layout of Rampart's
    /// `Salsa20State`: `output = BlockMix(input ^ mask)` (no XOR when `mask` is nil); returns Integerify
    /// of the output. `output` must not overlap the inputs.
    static func scryptBlockMix(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer,
                               _ r: Int) -> UInt64
}

/// ChaCha20 (RFC 8439) and ChaCha20-Poly1305: the stream loops of an eight-block kernel. `state` is the
/// 16-word ChaCha20 input block (native-endian words, the 32-bit block counter in word 12); a call
/// advances the counter by `8 · groups`, modulo 2^32.
public protocol ChaCha20Implementation: KernelImplementation {
    /// XORs `groups` · 512 bytes of keystream from `src` into `dst` (the same buffer or disjoint ones).
    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int)
    /// ``xor(_:_:_:_:)`` stitched with Poly1305, with the arguments of
    /// ``Salsa20StreamImplementation/xorPoly1305(_:_:_:_:_:_:_:_:)``.
    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int)
}

/// Poly1305 over whole groups of message blocks.
public protocol Poly1305Implementation: KernelImplementation {
    /// Blocks per group (the kernel's lane count; 1 for the portable code).
    static var groupBlocks: Int { get }
    /// Absorbs `groups` (at least 1) · ``groupBlocks`` 16-byte blocks at `data`, each with the 2^128
    /// bit, into `state` (r0, r1, s1, h0, h1, h2: the clamped key with s1 = r1 + r1/4 and the
    /// accumulator in radix 2^64, h2 small; the accumulator is updated, partially reduced: h2 ≤ 4).
    static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ groups: Int)
}

/// The Argon2 segment fill (`argon2FillSegment`).
public protocol Argon2Implementation: KernelImplementation {
    /// Fills one segment of `memory`; `work` is four 1 KiB blocks.
    static func fillSegment(_ memory: UnsafeMutableRawPointer, _ position: Argon2Segment, _ work: UnsafeMutableRawPointer)
}

/// FIPS 180-4's SHA-256 round constants K[0..<64]: the one copy every implementation reads.
public let sha256RoundConstants: [UInt32] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]

/// FIPS 180-4's SHA-512 round constants K[0..<80]: the one copy every implementation reads.
public let sha512RoundConstants: [UInt64] = [
    0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc, 0x3956c25bf348b538,
    0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118, 0xd807aa98a3030242, 0x12835b0145706fbe,
    0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2, 0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235,
    0xc19bf174cf692694, 0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
    0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5, 0x983e5152ee66dfab,
    0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4, 0xc6e00bf33da88fc2, 0xd5a79147930aa725,
    0x06ca6351e003826f, 0x142929670a0e6e70, 0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed,
    0x53380d139d95b3df, 0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
    0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30, 0xd192e819d6ef5218,
    0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8, 0x19a4c116b8d2d0c8, 0x1e376c085141ab53,
    0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8, 0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373,
    0x682e6ff3d6b2b8a3, 0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
    0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b, 0xca273eceea26619c,
    0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178, 0x06f067aa72176fba, 0x0a637dc5a2c898a6,
    0x113f9804bef90dae, 0x1b710b35131c471b, 0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc,
    0x431d67c49c100d4c, 0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
]

// MARK: - The AES family

/// The layout of an expanded AES key, named after the AES implementation that defines it. An AES
/// implementation expands keys into its own layout and reads only that, so an expanded key is run by the
/// implementation that expanded it. The kernels of the other AES-family primitives that read round keys
/// (GCM's stitched loops, the stitched IGE decryption with SHA-256) declare the layout they read; the
/// engines run them only on a schedule of that layout, and otherwise the two passes one after the other.
public enum AESScheduleLayout: Sendable, Hashable {
    /// AES-NI's (RampartAccelAESNI): the `rounds + 1` encryption round keys (16 bytes each, FIPS-197
    /// byte order) at offset 0, the equivalent inverse cipher's decryption round keys (`aesimc` of the
    /// middle ones, in reverse order) at offset 256. 512 bytes.
    case aesni
    /// ARMv8's (RampartAccelARMv8): the same two arrays at the same offsets, for `aese` and `aesd`.
    case armv8
    /// The portable code's bitsliced schedule: eight 64-bit words per round key, each the round key's
    /// bit plane for four blocks at once. 960 bytes for AES-256.
    case bitsliced
}

/// The AES block cipher (FIPS-197) and its modes over whole 16-byte blocks, on a schedule this
/// implementation expanded (``layout``). Source and destination are the same buffer or disjoint ones.
public protocol AESImplementation: KernelImplementation {
    /// The layout ``expandKey(_:_:_:)`` writes and every other entry point reads.
    static var layout: AESScheduleLayout { get }
    /// Bytes of a schedule (at most 1024; 16-byte aligned).
    static var scheduleBytes: Int { get }
    /// Expands a 16-, 24- or 32-byte key into `schedule`; returns the number of rounds (10, 12, 14).
    static func expandKey(_ key: UnsafeRawPointer, _ keyLength: Int, _ schedule: UnsafeMutableRawPointer) -> Int
    /// Encrypts `n` blocks independently (ECB).
    static func encryptECB(_ schedule: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int)
    /// Decrypts `n` blocks independently (ECB).
    static func decryptECB(_ schedule: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int)
    /// CTR: XORs `n` keystream blocks into `src`; `counter` is a 16-byte big-endian counter block,
    /// advanced by `n` modulo 2^128.
    static func ctr(_ schedule: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer,
                    _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int)
    /// CBC encryption; `iv` (16 bytes) becomes the last ciphertext block.
    static func cbcEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int)
    /// CBC decryption; `iv` (16 bytes) becomes the last ciphertext block.
    static func cbcDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int)
    /// IGE encryption; `iv` (32 bytes: the previous ciphertext block, then the previous plaintext
    /// block) becomes the last pair.
    static func igeEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int)
    /// IGE decryption; `iv` as for encryption.
    static func igeDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int)
}

/// GHASH (NIST SP 800-38D) and GCM's bulk loop over whole blocks. The table is 512 bytes, 16-byte
/// aligned; the state is the 16-byte GHASH value Y in GCM's byte order.
public protocol GHASHImplementation: KernelImplementation {
    /// The AES schedule layout ``gcmEncrypt(_:_:_:_:_:_:_:_:)`` and ``gcmDecrypt(_:_:_:_:_:_:_:_:)`` read.
    static var aesLayout: AESScheduleLayout { get }
    /// Writes the table for the hash key `h` (16 bytes, E_K(0^128)): what ``absorb(_:_:_:_:)`` calls of
    /// up to `absorbBlocks` blocks and GCM calls of up to `gcmBlocks` blocks read (`Int.max`: any).
    static func precompute(_ h: UnsafeRawPointer, _ table: UnsafeMutableRawPointer, absorbBlocks: Int, gcmBlocks: Int)
    /// Absorbs `n` 16-byte blocks into `state`.
    static func absorb(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer, _ data: UnsafeRawPointer, _ n: Int)
    /// GCM encryption of `n` whole blocks: CTR with the 32-bit counter of `counter` (16 bytes, advanced
    /// by `n` modulo 2^32) on `schedule` (layout ``aesLayout``, `rounds` rounds), then GHASH of the
    /// ciphertext into `state`.
    static func gcmEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                           _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int)
    /// GCM decryption of `n` whole blocks: GHASH of the ciphertext `src` into `state`, CTR into `dst`.
    static func gcmDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                           _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int)
}

/// IGE decryption together with the SHA-256 of its plaintext, MTProto's receiver: msg_key is
/// SHA-256(32 bytes of the auth key ‖ plaintext).
public protocol IGESHA256Implementation: KernelImplementation {
    /// The AES schedule layout ``decrypt(_:_:_:_:_:_:_:_:)`` reads.
    static var aesLayout: AESScheduleLayout { get }
    /// Decrypts `n` ≥ 2 blocks from `src` into `dst` (the same buffer or disjoint ones) with `schedule`'s
    /// decryption keys, as ``AESImplementation/igeDecrypt(_:_:_:_:_:_:)``, and absorbs `prefix` (32 bytes)
    /// ‖ plaintext into the SHA-256 state `state` (eight words a..h) as far as whole 64-byte blocks go.
    /// Returns the plaintext bytes absorbed: 64·⌊(32 + 16n) / 64⌋ − 32.
    static func decrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                        _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int,
                        _ state: UnsafeMutablePointer<UInt32>, _ prefix: UnsafeRawPointer) -> Int
}

/// AES-256-IGE encryption of several independent messages at once, each under its own key, on
/// schedules this implementation expands itself.
public protocol IGELanesImplementation: KernelImplementation {
    /// Messages per call.
    static var lanes: Int { get }
    /// Bytes of one key's schedule: ``expandKeys256(_:_:_:)`` writes them this far apart.
    static var scheduleBytes: Int { get }
    /// Scratch bytes ``encrypt(_:_:_:_:_:_:_:)`` needs (64-byte aligned; key material the caller wipes).
    static var scratchBytes: Int { get }
    /// Expands the 32-byte keys `keys[0..<count]` into schedules ``scheduleBytes`` apart from
    /// `schedules`; returns the number of rounds, 14.
    static func expandKeys256(_ keys: UnsafePointer<UnsafeRawPointer>, _ count: Int, _ schedules: UnsafeMutableRawPointer) -> Int
    /// Encrypts `n` blocks of each lane in place: lane l's schedule at `schedules[l]`, its 32-byte IV
    /// (c_0 ‖ p_0, replaced by the last pair) at `ivs[l]`, its blocks at `data[l]`, `strides[l]` bytes
    /// apart (0 for an idle lane repeating one scratch block on a zero schedule).
    static func encrypt(_ schedules: UnsafePointer<UnsafeRawPointer>, _ rounds: Int, _ ivs: UnsafePointer<UnsafeMutableRawPointer>,
                        _ data: UnsafePointer<UnsafeMutableRawPointer>, _ strides: UnsafePointer<Int>, _ n: Int,
                        _ scratch: UnsafeMutableRawPointer)
}
