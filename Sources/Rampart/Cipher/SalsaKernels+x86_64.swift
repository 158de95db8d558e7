// x86_64 bindings of the Salsa20 kernels (see Platform/Kernels.swift): eight blocks at a time on AVX2,
// alone or stitched with Poly1305 for `SecretBox`. Two builds of one source: RampartAccelAVX2Salsa
// (AVX2) and RampartAccelAVX512Salsa (the same file, compiled with AVX-512F and VL as well, where each
// rotation is one `vprold` instead of two shifts and an OR). The registry selects the AVX-512 build
// where the processor has AVX-512VL; the AVX2 build is what ctgrind runs (valgrind has no AVX-512) and
// what the tests compare with it (``SalsaKernel/Tier``).
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelAVX2Salsa
internal import RampartAccelBMI2

/// The builds of the eight-block Salsa20 and ChaCha20 kernels (one source, two feature sets).
enum SalsaKernelTier: CaseIterable {
    case avx512, avx2

    var name: String {
        switch self {
        case .avx512: "avx512vl"
        case .avx2: "avx2"
        }
    }

    func capable(_ f: CPUFeatures) -> Bool {
        switch self {
        case .avx512: f.avx2 && f.avx512vl
        case .avx2: f.avx2
        }
    }

    /// The best build the processor runs, if any.
    static let selected: SalsaKernelTier? = allCases.first { $0.capable(CPU.features) }
    /// The builds the processor runs, best first (the tests run each).
    static var available: [SalsaKernelTier] { CPU.forcePortable ? [] : allCases.filter { $0.capable(CPU.features) } }
}

enum SalsaKernel {
    static let name: String? = SalsaKernelTier.selected?.name ?? SalsaKernelTier.avx2.name
    static func supported(_ f: CPUFeatures) -> Bool { SalsaKernelTier.avx2.capable(f) }

    /// The short-message blocks of the AVX-512VL build run (RampartAccelAVX512Salsa/SalsaShortAVX512.swift:
    /// the XSalsa20 input block, one, two or four keystream blocks) where the registry selected that
    /// build; callers also require `Kernels.salsa20.runs(on:)` for their backend.
    static let short = SalsaKernelTier.selected == .avx512

    /// The XSalsa20 input block and single keystream blocks run in scalar registers instead
    /// (RampartAccelBMI2/SalsaScalarBMI2.swift) on AMD processors with a Salsa20 kernel and BMI2: there the
    /// 128-bit vector core measured about 1.8 times slower than scalar code (Zen 5), while on the Intel
    /// processors measured the vector core was the faster one. Pairs, two- and four-block runs stay on
    /// vectors (their chains run side by side there).
    static let shortScalar = SalsaKernelTier.selected != nil && CPU.isAMD && CPU.features.bmi2

    /// The XSalsa20 input block in scalar registers (see ``shortScalar``).
    @inline(__always)
    static func xsalsa20InputScalar(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
        RampartAccelBMI2.xsalsa20InputScalar(key, nonce, counter)
    }

    /// One keystream block in scalar registers (see ``shortScalar``).
    @inline(__always)
    static func blockScalar(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) {
        salsa20BlockScalar(x, out)
    }

    /// The XSalsa20 input block (HSalsa20 subkey around the rest of the nonce and `counter`).
    @inline(__always)
    static func xsalsa20Input(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
        SalsaAVX512.xsalsa20Input(key, nonce, counter)
    }

    /// The XSalsa20 input blocks (counter 0) of two keys under one nonce.
    @inline(__always)
    static func xsalsa20InputPair(_ keyA: UnsafeRawPointer, _ keyB: UnsafeRawPointer, _ nonce: UnsafeRawPointer)
        -> (SIMD16<UInt32>, SIMD16<UInt32>) {
        SalsaAVX512.xsalsa20InputPair(keyA, keyB, nonce)
    }

    /// Keystream block n (and n + 1 when `two`) of input block `x` into `out`.
    @inline(__always)
    static func blocks(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer, two: Bool) {
        SalsaAVX512.blocks(x, out, two: two)
    }

    /// Keystream blocks n ..< n + 4 of input block `x` into `out` (256 bytes).
    @inline(__always)
    static func blocks4(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { SalsaAVX512.blocks4(x, out) }

    /// scryptBlockMix on diagonal-layout blocks (RampartAccelAVX512Salsa/ScryptAVX512.swift; the same
    /// contract as KDF/Scrypt.swift's `scryptBlockMix`).
    @inline(__always)
    static func scryptBlockMix(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer,
                               _ r: Int) -> UInt64 {
        SalsaAVX512.scryptBlockMix(input, mask, output, r)
    }

    /// XORs `groups` · 512 bytes of keystream from `src` into `dst`; advances the counter in `state`.
    @inline(__always)
    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                    _ groups: Int, tier: SalsaKernelTier? = SalsaKernelTier.selected) {
        if tier == .avx512 {
            SalsaAVX512.salsa20XOR(state, src, dst, groups)
        } else {
            salsa20XORAVX2(state, src, dst, groups)
        }
    }

    /// Keystream XOR and Poly1305 in one pass (see `salsa20XORPoly1305AVX2`).
    @inline(__always)
    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int,
                            tier: SalsaKernelTier? = SalsaKernelTier.selected) {
        if tier == .avx512 {
            SalsaAVX512.salsa20XORPoly1305(state, src, srcStride, dst, groups, poly, mac, macLag)
        } else {
            salsa20XORPoly1305AVX2(state, src, srcStride, dst, groups, poly, mac, macLag)
        }
    }
}

#endif
