// x86_64 binding of the Argon2 kernel (see Platform/Kernels.swift): the shared segment fill compiled
// for AVX2 (RampartAccelAVX2Argon2).
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelAVX2Argon2
internal import RampartKernelSupport

enum Argon2Kernel {
    static let name: String? = "avx2"
    static func supported(_ f: CPUFeatures) -> Bool { f.avx2 }

    /// Fills one segment of the Argon2 memory.
    @inline(__always)
    static func fillSegment(_ memory: UnsafeMutableRawPointer, _ pos: Argon2Segment, _ work: UnsafeMutableRawPointer) {
        argon2FillSegmentAVX2(memory, pos, work)
    }
}

#endif
