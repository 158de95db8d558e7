// x86_64 binding of the eight-lane X25519 kernel (RampartAccelAVX2/X25519Lanes.swift): eight independent
// scalar multiplications in one ladder, radix 2^25.5 with `vpmuludq`. Two builds of one source: with
// AVX-512F and VL (one zmm register per field limb), and with AVX2 (two ymm registers). The registry
// selects only the AVX-512 build: on a Cascade Lake core eight ladders take 174 µs there against 375 µs
// with AVX2, which is no faster than eight `mulx` multiplications (384 µs). The AVX2 build is what
// ctgrind runs (valgrind has no AVX-512) and what the tests compare with the AVX-512 one.
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelAVX2

enum X25519LanesKernel {
    enum Tier: CaseIterable {
        case avx512, avx2

        var name: String {
            switch self {
            case .avx512: "avx512-x8"
            case .avx2: "avx2-x8"
            }
        }

        func capable(_ f: CPUFeatures) -> Bool {
            switch self {
            case .avx512: f.avx512vl
            case .avx2: f.avx2
            }
        }
    }

    static let lanes = 8
    /// The best tier the processor runs, if any.
    static func tier(_ f: CPUFeatures) -> Tier? { Tier.allCases.first { $0.capable(f) } }
    /// The registry selects the AVX-512 build only (see above).
    static func supported(_ f: CPUFeatures) -> Bool { Tier.avx512.capable(f) }
    static let selected: Tier? = supported(CPU.features) ? .avx512 : nil
    /// The name `Kernels.x25519Lanes` shows.
    static let name: String? = Tier.avx512.name

    /// Eight ladders with the given tier, which the caller has checked the processor runs (buffers as
    /// `X25519Lanes.scalarMultiply` in RampartAccelAVX2 describes them).
    @inline(__always)
    static func scalarMultiply(_ tier: Tier, _ result: UnsafeMutablePointer<UInt64>, _ points: UnsafePointer<UInt64>,
                               _ scalars: UnsafePointer<UInt64>) {
        switch tier {
        case .avx512: X25519LanesAVX512.scalarMultiply(result, points, scalars)
        case .avx2: X25519Lanes.scalarMultiply(result, points, scalars)
        }
    }
}

#endif
