// x86_64 binding of the Poly1305 kernels (see Platform/Kernels.swift): eight blocks at a time on
// AVX-512 IFMA in radix 2^44 (RampartAccelIFMA/Poly1305IFMA.swift), or four at a time on AVX2 in
// radix 2^26 (RampartAccelAVX2Salsa/Poly1305AVX2.swift) where IFMA is absent.
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelIFMA
internal import RampartAccelAVX2Salsa

enum Poly1305Kernel {
    enum Tier: CaseIterable {
        case ifma, avx2

        var name: String {
            switch self {
            case .ifma: "avx512ifma"
            case .avx2: "avx2"
            }
        }

        /// Every feature the tier is compiled with: `RAMPART_DISABLE_FEATURES` may remove AVX-512VL
        /// (ctgrind does, since valgrind cannot run AVX-512) and leave the detected IFMA bit set.
        func supported(_ f: CPUFeatures) -> Bool {
            switch self {
            case .ifma: f.avx512vl && f.avx512ifma && f.bmi2 && f.adx
            case .avx2: f.avx2 && f.bmi2
            }
        }

        /// Blocks per group (the kernel's lane count).
        var groupBlocks: Int { self == .ifma ? 8 : 4 }
    }

    /// The best kernel this architecture has.
    static let name: String? = Tier.ifma.name
    /// The kernel `Kernels.poly1305` runs: the best one the processor has (`nil`: that choice is inactive).
    static let selected: Tier? = Tier.allCases.first { $0.supported(CPU.features) }
    /// The tier with this name, if the processor runs it (for tests that pin one).
    static func tier(named name: String) -> Tier? { Tier.allCases.first { $0.name == name && $0.supported(CPU.features) } }

    /// Absorbs the whole groups among `count` full blocks into the state words r0, r1, s1, h0, h1, h2
    /// (`Poly1305State.stitched`'s layout) with the given kernel, which the caller has checked the
    /// processor supports; returns how many blocks it took.
    static func blocks(_ tier: Tier, _ state: UnsafeMutablePointer<UInt64>, _ p: UnsafeRawPointer, _ count: Int) -> Int {
        let groups = count / tier.groupBlocks
        guard groups > 0 else { return 0 }
        switch tier {
        case .ifma: poly1305BlocksIFMA(state, p, groups)
        case .avx2: poly1305BlocksAVX2(state, p, groups)
        }
        return groups * tier.groupBlocks
    }
}

#endif
