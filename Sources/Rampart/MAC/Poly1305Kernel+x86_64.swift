// x86_64 binding of the Poly1305 kernel (see Platform/Kernels.swift): eight blocks at a time on
// AVX-512 IFMA in radix 2^44 (RampartAccelIFMA/Poly1305IFMA.swift).
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelIFMA

enum Poly1305Kernel {
    static let name: String? = "avx512ifma"
    /// Every feature the IFMA tier is compiled with: `RAMPART_DISABLE_FEATURES` may remove AVX-512VL
    /// (ctgrind does, since valgrind cannot run AVX-512) and leave the detected IFMA bit set.
    static func supported(_ f: CPUFeatures) -> Bool { f.avx512vl && f.avx512ifma && f.bmi2 && f.adx }

    /// Absorbs `groups` × 128 bytes of full blocks into the state words r0, r1, s1, h0, h1, h2
    /// (`Poly1305State.stitched`'s layout); `groups ≥ 1`.
    @inline(__always)
    static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ p: UnsafeRawPointer, _ groups: Int) {
        poly1305BlocksIFMA(state, p, groups)
    }
}

#endif
