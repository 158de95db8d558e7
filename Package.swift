// swift-tools-version: 6.2
//
// Rampart: pure-Swift cryptography for MTProto 2.0 and Threema.
// Zero package dependencies. See Docs/Architecture.md for the layering.
import PackageDescription

/// Enables one LLVM target feature for a kernel module (and nothing else), so that no instruction of a
/// higher tier can leak into a lower one. See Docs/Architecture.md §2.2.
func feature(_ name: String) -> [String] {
    ["-Xcc", "-Xclang", "-Xcc", "-target-feature", "-Xcc", "-Xclang", "-Xcc", name]
}

/// Kernel modules use the compiler's `Builtin` module for target intrinsics.
func kernelFlags(_ features: [String]) -> [SwiftSetting] {
    [.unsafeFlags(["-parse-stdlib"] + features.flatMap(feature))]
}

/// The arm64 kernels' sources also build on other processors, on their instructions emulated in portable
/// Swift (RampartKernelSupport/ARMv8Emulated.swift), so that every test run reaches them through the
/// registries' pins; on arm64 the real instructions win (`#if arch(arm64)` comes first).
let emulateARM64: [SwiftSetting] = [.define("RAMPART_EMULATE_ARM64")]

/// The AVX2 tier's feature set (Haswell and later: AVX2 with BMI1/2), and the tiers built on it.
let avx2Features = ["+avx", "+avx2", "+ssse3", "+sse4.1", "+bmi", "+bmi2"]
/// AVX-512 Foundation and Vector Length on top of AVX2 (RampartAccelAVX512 and RampartAccelIFMA).
let avx512VLFeatures = avx2Features + ["+avx512f", "+avx512vl"]

let package = Package(
    name: "Rampart",
    products: [
        .library(name: "Rampart", targets: ["Rampart"]),
        .library(name: "RampartMTProto", targets: ["RampartMTProto"]),
        .library(name: "RampartThreema", targets: ["RampartThreema"]),
        .executable(name: "rampart", targets: ["rampart"]),
        .executable(name: "rampart-bench", targets: ["rampart-bench"]),
    ],
    targets: [
        // Hardware kernels (internal). One target per feature tier.
        .target(
            name: "RampartAccelSHA",
            dependencies: ["RampartKernelSupport"],
            path: "Sources/RampartAccelSHA",
            swiftSettings: kernelFlags(["+sha", "+ssse3", "+sse4.1"])
        ),
        .target(
            name: "RampartAccelAVX2",
            dependencies: ["RampartKernelSupport"],
            path: "Sources/RampartAccelAVX2",
            swiftSettings: kernelFlags(avx2Features)
        ),
        // Algorithm code shared by the portable primitives and the kernel tiers as @inlinable
        // functions (each caller compiles it with its own features): one copy of the logic.
        .target(
            name: "RampartKernelSupport",
            dependencies: ["RampartBarrier"],
            path: "Sources/RampartKernelSupport",
            swiftSettings: kernelFlags([])
        ),
        .target(
            name: "RampartAccelAESNI",
            dependencies: ["RampartKernelSupport"],
            path: "Sources/RampartAccelAESNI",
            swiftSettings: kernelFlags(["+aes", "+pclmul", "+ssse3", "+sse4.1"])
        ),
        // The GHASH and stitched GCM loops of RampartAccelAESNI (its shared always-emit-into-client
        // bodies) compiled with AVX as well: VEX encoding, three-operand forms, no register copies,
        // under their own entry-point names (`ghash: pclmulqdq+avx`, on processors with AVX2);
        // processors with AES-NI but no AVX keep RampartAccelAESNI's.
        .target(
            name: "RampartAccelAESAVX",
            dependencies: ["RampartAccelAESNI", "RampartKernelSupport"],
            path: "Sources/RampartAccelAESAVX",
            swiftSettings: kernelFlags(["+aes", "+pclmul", "+ssse3", "+sse4.1", "+avx"])
        ),
        // MTProto's decryption stitched: AES-NI IGE decryption and SHA-NI SHA-256 of the plaintext in
        // one loop (the two units are separate; each chain alone leaves the other idle).
        .target(
            name: "RampartAccelAESSHA",
            dependencies: ["RampartAccelAESNI", "RampartKernelSupport"],
            path: "Sources/RampartAccelAESSHA",
            swiftSettings: kernelFlags(["+aes", "+sha", "+ssse3", "+sse4.1"])
        ),
        // The arm64 tier: AES and PMULL with the ARMv8 cryptography extensions (empty on x86_64).
        .target(
            name: "RampartAccelARMv8",
            dependencies: ["RampartKernelSupport"],
            path: "Sources/RampartAccelARMv8",
            swiftSettings: kernelFlags(["+aes"]) + emulateARM64
        ),
        // SHA-1 and SHA-256 with the ARMv8 SHA instructions (empty on x86_64).
        .target(
            name: "RampartAccelARMv8SHA",
            dependencies: ["RampartKernelSupport"],
            path: "Sources/RampartAccelARMv8SHA",
            swiftSettings: kernelFlags(["+sha2"]) + emulateARM64
        ),
        // SHA-512 with the ARMv8.2 SHA-512 instructions, LLVM's "sha3" feature (empty on x86_64).
        .target(
            name: "RampartAccelARMv8SHA512",
            dependencies: ["RampartKernelSupport"],
            path: "Sources/RampartAccelARMv8SHA512",
            swiftSettings: kernelFlags(["+sha2", "+sha3"]) + emulateARM64
        ),
        // AES-256-IGE decryption stitched with SHA-256 on the ARMv8 AES and SHA-256 instructions, MTProto's
        // receiver (empty on x86_64, but for its emulated build).
        .target(
            name: "RampartAccelARMv8AESSHA",
            dependencies: ["RampartKernelSupport"],
            path: "Sources/RampartAccelARMv8AESSHA",
            swiftSettings: kernelFlags(["+aes", "+sha2"]) + emulateARM64
        ),
        .target(
            name: "RampartAccelBMI2",
            dependencies: ["RampartBarrier", "RampartKernelSupport"],
            path: "Sources/RampartAccelBMI2",
            swiftSettings: kernelFlags(["+bmi2", "+adx"])
        ),
        // RampartKernelSupport's eight-lane bodies compiled with AVX-512F and VL as well: SHA-256 on
        // 256-bit registers with one vprord per rotation and one vpternlogd per three-way XOR, Ch and
        // Maj; the eight-block Salsa20 and ChaCha20 loops, each rotation one vprold; X25519 with one
        // zmm register per vector. Also SHA-256 on sixteen and thirty-two lanes, the short-message
        // Salsa20 blocks and scrypt's BlockMix on 128-bit vectors.
        .target(
            name: "RampartAccelAVX512",
            dependencies: ["RampartAccelAVX2", "RampartKernelSupport"],
            path: "Sources/RampartAccelAVX512",
            swiftSettings: kernelFlags(avx512VLFeatures)
        ),
        // AES-GCM, CTR and CBC decryption on 256-bit vectors (VAES + VPCLMULQDQ, sixteen blocks per
        // iteration): its own tier, the registry's `ghash: vaes+vpclmulqdq` and `aes: aes-ni+vaes`, which
        // run the rest of a message on RampartAccelAESAVX's and RampartAccelAESNI's kernels. No AVX-512
        // instructions.
        .target(
            name: "RampartAccelVAES",
            dependencies: ["RampartAccelAESNI", "RampartAccelAESAVX", "RampartKernelSupport"],
            path: "Sources/RampartAccelVAES",
            swiftSettings: kernelFlags(["+avx", "+avx2", "+vaes", "+vpclmulqdq", "+pclmul", "+aes", "+ssse3", "+sse4.1"])
        ),
        // AES-IGE of sixteen messages at once with VAES on 512-bit registers (MTProto's batch encryption
        // on processors with full-width 512-bit units): its own tier (`ige-lanes: vaes512-x16`, keys
        // expanded by RampartAccelAESNI), so that the 256-bit VAES tier stays free of AVX-512 instructions.
        .target(
            name: "RampartAccelVAES512",
            dependencies: ["RampartAccelAESNI", "RampartKernelSupport"],
            path: "Sources/RampartAccelVAES512",
            swiftSettings: kernelFlags(["+avx", "+avx2", "+aes", "+vaes", "+ssse3", "+sse4.1", "+avx512f", "+avx512vl"])
        ),
        // Constant-time modular exponentiation with AVX-512 IFMA in radix 2^52 (1024- and 2048-bit
        // moduli; RSA-CRT halves in pairs): its own tier, opt-in by detection (`Kernels.modexpIFMA`).
        // 256-bit registers only.
        .target(
            name: "RampartAccelIFMA",
            dependencies: ["RampartBarrier", "RampartKernelSupport"],
            path: "Sources/RampartAccelIFMA",
            swiftSettings: kernelFlags(avx512VLFeatures + ["+adx", "+avx512ifma"])
        ),
        // Value barriers (volatile round trips through memory) that the optimizer cannot see through:
        // the masks of constant-time selections pass through them. Builtin module, no CPU features.
        .target(
            name: "RampartBarrier",
            path: "Sources/RampartBarrier",
            swiftSettings: kernelFlags([])
        ),
        // Base64, constant time in the data: the one copy, shared by PEM (Rampart) and RampartCodecs. Stdlib only.
        .target(name: "RampartEncoding", path: "Sources/RampartEncoding"),
        // Primitives: stdlib only.
        .target(
            name: "Rampart",
            dependencies: ["RampartAccelSHA", "RampartAccelAVX2", "RampartAccelAVX512", "RampartAccelAESNI", "RampartAccelAESAVX", "RampartAccelAESSHA", "RampartAccelARMv8", "RampartAccelARMv8SHA", "RampartAccelARMv8SHA512", "RampartAccelARMv8AESSHA",
                           "RampartAccelBMI2", "RampartAccelVAES", "RampartAccelVAES512", "RampartAccelIFMA",
                           "RampartBarrier", "RampartKernelSupport", "RampartEncoding"],
            path: "Sources/Rampart",
            swiftSettings: emulateARM64
        ),
        // Data codecs the protocols need (protobuf wire format, …): stdlib only, no cryptography.
        .target(name: "RampartCodecs", dependencies: ["RampartEncoding"], path: "Sources/RampartCodecs"),
        // MTProto 2.0: sans-I/O protocol module (formats, state machines, transports as codecs).
        .target(name: "RampartMTProto", dependencies: ["Rampart", "RampartCodecs"], path: "Sources/RampartMTProto"),
        // The loopback MTProto test server's logic (sans-I/O; `rampart mtproto serve` owns its sockets):
        // not part of any library product.
        .target(name: "RampartMTProtoServer", dependencies: ["RampartMTProto"], path: "Sources/RampartMTProtoServer"),
        // Threema: sans-I/O protocol module (identities, end-to-end messages, blobs, backups).
        .target(name: "RampartThreema", dependencies: ["Rampart", "RampartCodecs"], path: "Sources/RampartThreema"),
        // The Threema Safe server's logic (HTTP/1.1 parser, Safe API, backup stores; sans-I/O except
        // the directory store; `rampart threema safe-server` owns its sockets): not part of any library product.
        .target(name: "RampartThreemaSafeServer", dependencies: ["Rampart", "RampartCodecs"], path: "Sources/RampartThreemaSafeServer"),
        // The loopback chat server's logic (identities, CSP connections, routing, offline queues; sans-I/O;
        // `rampart threema serve` owns its sockets): not part of any library product.
        .target(name: "RampartThreemaChatServer", dependencies: ["Rampart", "RampartThreema", "RampartCodecs"], path: "Sources/RampartThreemaChatServer"),
        // dlopen bindings to OpenSSL and libsodium: tests, CLI and benchmark only.
        .target(name: "RampartReference", path: "Sources/RampartReference"),
        // Vector-file loaders and runners shared by `rampart vectors` and the tests.
        .target(name: "RampartVectors", dependencies: ["Rampart", "RampartMTProto", "RampartThreema", "RampartCodecs", "RampartTestSupport"], path: "Sources/RampartVectors"),
        .executableTarget(
            name: "rampart",
            dependencies: ["Rampart", "RampartMTProto", "RampartMTProtoServer", "RampartThreema", "RampartThreemaSafeServer",
                           "RampartThreemaChatServer", "RampartReference", "RampartVectors"],
            path: "Sources/rampart"
        ),
        // Test-only C: valgrind client requests (ctgrind) and the weak libFuzzer driver declaration.
        // Never a dependency of a library product.
        .target(name: "RampartTestSupportC", path: "Sources/RampartTestSupportC"),
        // Test-only Swift: the one seeded generator (SplitMix64), byte replay, hex and project-file
        // helpers of the tests, fuzz targets, ctgrind and benchmarks. Stdlib only; never a dependency
        // of a library product.
        .target(name: "RampartTestSupport", path: "Sources/RampartTestSupport"),
        // Constant-time proof: runs every secret-handling operation with its secrets marked undefined
        // for valgrind's memcheck (Scripts/ctgrind.sh).
        .executableTarget(
            name: "rampart-ctgrind",
            dependencies: ["Rampart", "RampartMTProto", "RampartTestSupportC", "RampartTestSupport", "RampartThreema", "RampartCodecs"],
            path: "Sources/rampart-ctgrind"
        ),
        // libFuzzer targets for every decoder (Scripts/fuzz.sh); without -sanitize=fuzzer it replays
        // the seed corpus.
        .executableTarget(
            name: "rampart-fuzz",
            dependencies: ["Rampart", "RampartMTProto", "RampartMTProtoServer", "RampartThreemaSafeServer", "RampartThreemaChatServer",
                           "RampartCodecs", "RampartTestSupportC", "RampartTestSupport", "RampartThreema"],
            path: "Sources/rampart-fuzz"
        ),
        .executableTarget(
            name: "rampart-bench",
            dependencies: ["Rampart", "RampartMTProto", "RampartMTProtoServer", "RampartThreema", "RampartCodecs", "RampartReference",
                           "RampartTestSupport"],
            path: "Benchmarks"
        ),
        .testTarget(
            name: "RampartTests",
            dependencies: ["Rampart", "RampartVectors", "RampartTestSupport"],
            path: "Tests/RampartTests"
        ),
        .testTarget(
            name: "RampartMTProtoTests",
            dependencies: ["RampartMTProto", "RampartMTProtoServer", "Rampart", "RampartCodecs", "RampartVectors", "RampartTestSupport"],
            path: "Tests/RampartMTProtoTests"
        ),
        .testTarget(
            name: "RampartCodecsTests",
            dependencies: ["RampartCodecs", "RampartTestSupport"],
            path: "Tests/RampartCodecsTests"
        ),
        .testTarget(
            name: "RampartThreemaTests",
            dependencies: ["RampartThreema", "RampartThreemaSafeServer", "RampartThreemaChatServer", "RampartCodecs", "Rampart", "RampartVectors",
                           "RampartTestSupport", "RampartReference"],
            path: "Tests/RampartThreemaTests"
        ),
        .testTarget(
            name: "CrossCheckTests",
            dependencies: ["Rampart", "RampartReference", "RampartTestSupport"],
            path: "Tests/CrossCheckTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
