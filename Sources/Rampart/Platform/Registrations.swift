// Every primitive's implementations, in order of preference: one line per kernel, under the
// architecture that has it, then the portable code. Adding a kernel is its own source file (which
// declares its conformance to the primitive's protocol in RampartKernelSupport/Seam.swift), its
// target in Package.swift and one line here.

internal import RampartKernelSupport
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
internal import RampartAccelSHA
internal import RampartAccelAVX2
internal import RampartAccelBMI2
internal import RampartAccelAVX512
internal import RampartAccelAESNI
internal import RampartAccelAESAVX
internal import RampartAccelVAES
internal import RampartAccelVAES512
internal import RampartAccelAESSHA
internal import RampartAccelIFMA
#if RAMPART_EMULATE_ARM64
// The arm64 kernels' sources on emulated instructions: runnable through pins, never selected.
internal import RampartAccelARMv8
internal import RampartAccelARMv8SHA
internal import RampartAccelARMv8SHA512
internal import RampartAccelARMv8AESSHA
#endif
#elseif arch(arm64) || RAMPART_TYPECHECK_ARM64
internal import RampartAccelARMv8
internal import RampartAccelARMv8SHA
internal import RampartAccelARMv8SHA512
internal import RampartAccelARMv8AESSHA
#endif

/// The registries, each made (and its candidates self-tested) at its first use.
enum Registries {
    static let sha1 = Registry<any SHA1Implementation.Type>(
        "sha1", id: 1, sha1Candidates, name: { $0.name }, requires: { $0.requires },
        selfTest: sha1SelfTest, faulty: { faultySHA1($0) })

    static let sha256 = Registry<any SHA256Implementation.Type>(
        "sha256", id: 2, sha256Candidates, name: { $0.name }, requires: { $0.requires },
        selfTest: sha256SelfTest, faulty: { faultySHA256($0) })

    static let sha512 = Registry<any SHA512Implementation.Type>(
        "sha512", id: 3, sha512Candidates, name: { $0.name }, requires: { $0.requires },
        selfTest: sha512SelfTest, faulty: { faultySHA512($0) })

    static let blake2b = Registry<any BLAKE2bImplementation.Type>(
        "blake2b", id: 4, blake2bCandidates, name: { $0.name }, requires: { $0.requires },
        selfTest: blake2bSelfTest, faulty: { faultyBLAKE2b($0) })

    static let sha256Lanes = Registry<any SHA256LanesImplementation.Type>(
        "sha256-lanes", id: 5, sha256LanesCandidates, name: { $0.name }, requires: { $0.requires },
        selfTest: sha256LanesSelfTest, faulty: { faultySHA256Lanes($0) })

    static let aes = aesRegistry()
    static let ghash = ghashRegistry()
    static let igeSHA256 = igeSHA256Registry()
    static let igeLanes = igeLanesRegistry()

    // The AES family's registries as made for the process, or with other faults or candidates (tests).

    static func aesRegistry(faults: Set<String> = FaultSwitch.names) -> Registry<any AESImplementation.Type> {
        Registry("aes", id: 10, aesCandidates, name: { $0.name }, requires: { $0.requires },
                 selfTest: aesSelfTest, faulty: { faultyAES($0) }, faults: faults)
    }

    /// A GHASH kernel needs a runnable AES implementation of the layout its GCM loop reads (its
    /// self-test runs GCM on it).
    static func ghashRegistry(faults: Set<String> = FaultSwitch.names) -> Registry<any GHASHImplementation.Type> {
        Registry("ghash", id: 11, ghashCandidates, name: { $0.name }, requires: { $0.requires },
                 extra: { aesImplementation(reading: $0.aesLayout) != nil },
                 selfTest: ghashSelfTest, faulty: { faultyGHASH($0) }, faults: faults)
    }

    /// A stitched IGE decryption with SHA-256 is a candidate where the SHA-256 kernel whose instructions
    /// it uses runs (its self-test did not fail) and an AES implementation of the layout it reads runs.
    static func igeSHA256Registry(faults: Set<String> = FaultSwitch.names) -> Registry<any IGESHA256Implementation.Type> {
        Registry("ige-sha256", id: 12, igeSHA256Candidates, name: { $0.name }, requires: { $0.requires },
                 extra: { impl in
                     let partner = stitchedSHA256Partner(impl)
                     return (partner == nil || sha256.runnableImplementation(named: partner!) != nil)
                         && aesImplementation(reading: impl.aesLayout) != nil
                 },
                 selfTest: igeSHA256SelfTest, faulty: { faultyIGESHA256($0) }, faults: faults)
    }

    static func igeLanesRegistry(_ candidates: [any IGELanesImplementation.Type] = igeLanesCandidates,
                                 faults: Set<String> = FaultSwitch.names) -> Registry<any IGELanesImplementation.Type> {
        Registry("ige-lanes", id: 13, candidates, name: { $0.name }, requires: { $0.requires },
                 selfTest: igeLanesSelfTest, faulty: { faultyIGELanes($0) }, faults: faults)
    }

    static let x25519 = Registry<any X25519Implementation.Type>(
        "x25519", id: 20, x25519Candidates, name: { $0.name }, requires: { $0.requires },
        selfTest: x25519SelfTest, faulty: { faultyX25519($0) })

    /// The AVX2 build of the lane kernel is runnable (tests and ctgrind run it) but never selected:
    /// on a Cascade Lake core eight ladders take 375 µs there, no faster than eight `mulx` ones
    /// (384 µs), against 174 µs with AVX-512.
    static let x25519Lanes = Registry<any X25519LanesImplementation.Type>(
        "x25519-lanes", id: 21, x25519LanesCandidates, name: { $0.name }, requires: { $0.requires },
        selectable: { $0.name != "avx2-x8" }, selfTest: x25519LanesSelfTest, faulty: { faultyX25519Lanes($0) })

    static let montgomery = Registry<any MontgomeryImplementation.Type>(
        "montgomery", id: 30, montgomeryCandidates, name: { $0.name }, requires: { $0.requires },
        selfTest: montgomerySelfTest, faulty: { faultyMontgomery($0) })

    /// The wide AVX2 kernel is selected on AMD processors, where it measured faster than the `mulx`
    /// products (Zen 3), and not on Intel's, where it measured slower (Cascade Lake: the RSA-2048
    /// public operation 37.6 µs against 23.0 µs), nor where the IFMA kernel serves these powers;
    /// it stays runnable for the tests everywhere.
    static let modexp2048 = Registry<any MontgomeryWideImplementation.Type>(
        "modexp-2048", id: 31, modexp2048Candidates, name: { $0.name }, requires: { $0.requires },
        selectable: { _ in CPU.isAMD && !modexpCT.kernelSelected },
        selfTest: montgomeryWideSelfTest, faulty: { faultyMontgomeryWide($0) })

    static let modexpCT = Registry<any ModularPowerImplementation.Type>(
        "modexp-ct", id: 32, modexpCTCandidates, name: { $0.name }, requires: { $0.requires },
        selfTest: modularPowerSelfTest, faulty: { faultyModularPower($0) })

    /// The IFMA kernel's carry normalisation (a testing hook), where that kernel runs.
    static var modexpCTNormalise: ((UnsafeMutablePointer<UInt64>, UnsafePointer<UInt64>, Int) -> Void)? {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        guard modexpCT.runnableImplementation(named: MontgomeryIFMA.name) != nil else { return nil }
        return { MontgomeryIFMA.normalise($0, $1, digits: $2) }
        #else
        return nil
        #endif
    }

    static let salsa20 = Registry<any Salsa20Implementation.Type>(
        "salsa20", id: 6, salsa20Candidates, name: { $0.name }, requires: { $0.requires },
        selfTest: salsa20SelfTest, faulty: { faultySalsa20($0) })

    static let chacha20 = Registry<any ChaCha20Implementation.Type>(
        "chacha20", id: 7, chacha20Candidates, name: { $0.name }, requires: { $0.requires },
        selfTest: chacha20SelfTest, faulty: { faultyChaCha20($0) })

    static let poly1305 = Registry<any Poly1305Implementation.Type>(
        "poly1305", id: 8, poly1305Candidates, name: { $0.name }, requires: { $0.requires },
        selfTest: poly1305SelfTest, faulty: { faultyPoly1305($0) })

    static let argon2 = Registry<any Argon2Implementation.Type>(
        "argon2", id: 9, argon2Candidates, name: { $0.name }, requires: { $0.requires },
        selfTest: argon2SelfTest, faulty: { faultyArgon2($0) })

    // MARK: Candidates

    static var sha1Candidates: [any SHA1Implementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [SHA1NI.self, SHA1AVX2.self] + emulatedARM64([ARMv8SHA1.self]) + [SHA1Portable.self]
        #elseif arch(arm64) || RAMPART_TYPECHECK_ARM64
        return [ARMv8SHA1.self, SHA1Portable.self]
        #else
        return [SHA1Portable.self]
        #endif
    }

    static var sha256Candidates: [any SHA256Implementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [SHA256NI.self, SHA256AVX2.self] + emulatedARM64([ARMv8SHA256.self]) + [SHA256Portable.self]
        #elseif arch(arm64) || RAMPART_TYPECHECK_ARM64
        return [ARMv8SHA256.self, SHA256Portable.self]
        #else
        return [SHA256Portable.self]
        #endif
    }

    static var sha512Candidates: [any SHA512Implementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [SHA512AVX2.self] + emulatedARM64([ARMv8SHA512.self]) + [SHA512Portable.self]
        #elseif arch(arm64) || RAMPART_TYPECHECK_ARM64
        return [ARMv8SHA512.self, SHA512Portable.self]
        #else
        return [SHA512Portable.self]
        #endif
    }

    /// The scalar BMI2 kernel first on AMD processors, where it is the faster one (about 1.8x the AVX2
    /// kernel on Zen 4); the AVX2 kernel first elsewhere (faster on the Intel cores measured).
    static var blake2bCandidates: [any BLAKE2bImplementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return CPU.isAMD ? [BLAKE2bBMI2.self, BLAKE2bAVX2.self, BLAKE2bPortable.self]
                         : [BLAKE2bAVX2.self, BLAKE2bBMI2.self, BLAKE2bPortable.self]
        #else
        return [BLAKE2bPortable.self]
        #endif
    }

    /// On processors with full-width 512-bit units, 32 and 16 lanes of 512-bit registers (about 46
    /// and 59 cycles per block and message, against about 85 for two SHA-NI chains). Elsewhere with
    /// the SHA extensions: two alternating SHA-NI chains on AMD processors (1.47x two single calls on
    /// Zen 4) and no lane kernel on Intel's, where interleaving did not pay (Sapphire Rapids: 125
    /// cycles per block and message with four chains against 103 alone): the jobs run one by one.
    /// Without them, eight lanes of 256-bit registers (AVX-512VL rotations where present).
    static var sha256LanesCandidates: [any SHA256LanesImplementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        let sha = CPU.kernelFeatures.isSuperset(of: SHA256LanesNIx2.requires)
        var c: [any SHA256LanesImplementation.Type] = []
        if CPU.fullWidthAVX512 { c += [SHA256Lanes32AVX512.self, SHA256Lanes16AVX512.self] }
        if sha {
            if CPU.isAMD { c.append(SHA256LanesNIx2.self) }
        } else {
            c += [SHA256Lanes8AVX512VL.self, SHA256Lanes8AVX2.self]
        }
        return c + [SHA256LanesPortable.self]
        #else
        return [SHA256LanesPortable.self]
        #endif
    }

    /// AES-NI with VAES for CTR and CBC decryption where the processor has VAES and AVX2, AES-NI alone
    /// elsewhere (both expand into AES-NI's layout).
    static var aesCandidates: [any AESImplementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [AESNIVAES.self, AESNI.self] + emulatedARM64([ARMv8AES.self]) + [AESPortable.self]
        #elseif arch(arm64) || RAMPART_TYPECHECK_ARM64
        return [ARMv8AES.self, AESPortable.self]
        #else
        return [AESPortable.self]
        #endif
    }

    /// Sixteen-block GCM on VAES and VPCLMULQDQ, then the 128-bit stitched loops in their AVX build
    /// (where AVX2 is present: measured on Cascade Lake, AES-256-GCM at 16 KiB and 1 MiB, seal 0.65x
    /// -> 0.85x, open 0.75x -> 0.80x OpenSSL's AVX code) and their SSE build.
    static var ghashCandidates: [any GHASHImplementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [GHASHVAES.self, GHASHCLMULAVX.self, GHASHCLMUL.self] + emulatedARM64([GHASHPMULL.self]) + [GHASHPortable.self]
        #elseif arch(arm64) || RAMPART_TYPECHECK_ARM64
        return [GHASHPMULL.self, GHASHPortable.self]
        #else
        return [GHASHPortable.self]
        #endif
    }

    static var igeSHA256Candidates: [any IGESHA256Implementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [IGESHA256NI.self] + emulatedARM64([ARMv8IGESHA256.self]) + [IGESHA256Portable.self]
        #else
        return [ARMv8IGESHA256.self, IGESHA256Portable.self]
        #endif
    }

    /// The name of the SHA-256 implementation whose instructions stitched kernel `impl` uses (nil for
    /// the portable code).
    static func stitchedSHA256Partner(_ impl: any IGESHA256Implementation.Type) -> String? {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        if impl == IGESHA256NI.self { return SHA256NI.name }
        #endif
        #if arch(arm64) || RAMPART_TYPECHECK_ARM64 || RAMPART_EMULATE_ARM64
        if impl == ARMv8IGESHA256.self { return ARMv8SHA256.name }
        #endif
        return nil
    }

    /// Sixteen lanes in 512-bit VAES registers only where the 512-bit units are full width (Zen 5:
    /// 10.4 GB/s against 5.0 for eight AES-NI lanes; half-width units run each 512-bit `vaesenc` in two
    /// halves), eight AES-NI lanes elsewhere.
    static var igeLanesCandidates: [any IGELanesImplementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return igeLanesCandidates(fullWidthAVX512: CPU.fullWidthAVX512)
        #else
        return [IGELanesPortable.self]
        #endif
    }

    #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
    /// The lane kernels as on a processor with (or without) full-width 512-bit units: tests run the
    /// sixteen-lane kernel on any processor with its features.
    static func igeLanesCandidates(fullWidthAVX512: Bool) -> [any IGELanesImplementation.Type] {
        (fullWidthAVX512 ? [IGELanesVAES512x16.self] : []) + [IGELanesAESNIx8.self, IGELanesPortable.self]
    }
    #endif

    /// The first runnable AES implementation that expands keys into `layout` (the one GHASH's and
    /// IGE-SHA-256's self-tests run with), or nil.
    /// `kernels` where the build runs the arm64 kernels' sources on emulated instructions
    /// (RAMPART_EMULATE_ARM64, set by Package.swift on every processor but arm64), else none.
    static func emulatedARM64<T>(_ kernels: [T]) -> [T] {
        #if RAMPART_EMULATE_ARM64
        return kernels
        #else
        return []
        #endif
    }

    static func aesImplementation(reading layout: AESScheduleLayout) -> (any AESImplementation.Type)? {
        let r = aes
        for (k, impl) in r.implementations.enumerated() where impl.layout == layout && r.statuses[k].state.isRunnable {
            return impl
        }
        return nil
    }

    static var x25519Candidates: [any X25519Implementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [X25519MULX.self, X25519Portable.self]
        #else
        return [X25519Portable.self]
        #endif
    }

    static var x25519LanesCandidates: [any X25519LanesImplementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [X25519Lanes8AVX512.self, X25519Lanes8AVX2.self, X25519LanesPortable.self]
        #else
        return [X25519LanesPortable.self]
        #endif
    }

    static var montgomeryCandidates: [any MontgomeryImplementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [MontgomeryMULX.self, MontgomeryPortable.self]
        #else
        return [MontgomeryPortable.self]
        #endif
    }

    static var modexp2048Candidates: [any MontgomeryWideImplementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [MontgomeryAVX2.self, MontgomeryWidePortable.self]
        #else
        return [MontgomeryWidePortable.self]
        #endif
    }

    static var modexpCTCandidates: [any ModularPowerImplementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [MontgomeryIFMA.self, ModularPowerPortable.self]
        #else
        return [ModularPowerPortable.self]
        #endif
    }

    /// The AVX-512VL build where the processor has AVX-512VL (each rotation one `vprold`, and the
    /// short-message blocks and scrypt's BlockMix on 128-bit vectors), else the AVX2 stream loops with
    /// the portable short-message blocks. On AMD processors the XSalsa20 input block and the single
    /// keystream blocks run in scalar registers instead (`+bmi2`: the 128-bit vector core measured
    /// about 1.8 times slower than scalar code on Zen 5; on the Intel processors measured the vector
    /// core was the faster one), elsewhere the `+bmi2` forms come last (run by the tests only).
    static var salsa20Candidates: [any Salsa20Implementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        typealias AVX2 = Salsa20WithPortableBlocks<Salsa20AVX2>
        let vector: [any Salsa20Implementation.Type] = [Salsa20AVX512VL.self, AVX2.self]
        let scalar: [any Salsa20Implementation.Type] = [Salsa20WithBlockKernel<Salsa20AVX512VL, Salsa20BMI2>.self,
                                                        Salsa20WithBlockKernel<AVX2, Salsa20BMI2>.self]
        return (CPU.isAMD ? [scalar[0], vector[0], scalar[1], vector[1]] : vector + scalar) + [Salsa20Portable.self]
        #else
        return [Salsa20Portable.self]
        #endif
    }

    /// The AVX-512VL build where present (each rotation by 12 or 7 one `vprold`), else AVX2.
    static var chacha20Candidates: [any ChaCha20Implementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [ChaCha20AVX512VL.self, ChaCha20AVX2.self, ChaCha20Portable.self]
        #else
        return [ChaCha20Portable.self]
        #endif
    }

    /// Eight blocks a group on AVX-512 IFMA in radix 2^44, else four on AVX2 in radix 2^26.
    static var poly1305Candidates: [any Poly1305Implementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [Poly1305IFMA.self, Poly1305AVX2.self, Poly1305Portable.self]
        #else
        return [Poly1305Portable.self]
        #endif
    }

    /// The shared segment fill compiled for AVX2 (the portable one uses NEON's 128-bit vectors on arm64).
    static var argon2Candidates: [any Argon2Implementation.Type] {
        #if arch(x86_64) && !RAMPART_TYPECHECK_ARM64
        return [Argon2AVX2.self, Argon2Portable.self]
        #else
        return [Argon2Portable.self]
        #endif
    }

    // MARK: Type-erased views

    /// Every registry, for lookups by name.
    static var all: [any AnyRegistry] { [sha1, sha256, sha512, blake2b, sha256Lanes, salsa20, chacha20, poly1305, argon2,
                                         aes, ghash, igeSHA256, igeLanes, x25519, x25519Lanes, montgomery, modexp2048, modexpCT] }

    static func runnable(_ primitive: String) -> [String] {
        all.first { $0.primitive == primitive }?.runnable ?? []
    }

    static func backend(_ primitive: String, pinnedTo name: String) -> Backend? {
        all.first { $0.primitive == primitive }?.backend(pinnedTo: name)
    }

    /// The primitive and implementation names of a pin.
    static func describe(_ backend: Backend) -> String {
        guard let r = all.first(where: { $0.id == backend.primitiveID }),
              Int(backend.implementationIndex) < r.statuses.count else { return "pinned(\(backend.code))" }
        return "\(r.primitive)=\(r.statuses[Int(backend.implementationIndex)].name)"
    }

    static var selfTestNanoseconds: UInt64 { all.reduce(0) { $0 &+ $1.selfTestNanoseconds } }
}

/// What the type-erased views read of a registry.
protocol AnyRegistry {
    var primitive: String { get }
    var id: UInt8 { get }
    var statuses: [ImplementationStatus] { get }
    var selfTestNanoseconds: UInt64 { get }
    var runnable: [String] { get }
    func backend(pinnedTo name: String) -> Backend?
}

extension Registry: AnyRegistry {}
