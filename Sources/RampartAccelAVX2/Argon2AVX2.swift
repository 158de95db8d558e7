// The Argon2 segment fill (RampartKernelSupport/Argon2Fill.swift) compiled with the AVX2 tier's
// features: the same source as Rampart's portable path, with the compression G's 4×64-bit lane
// vectors in single 256-bit registers (`vpaddq`, `vpmuludq`, `vpxor`, shifts, `vpermq`) instead of
// pairs of SSE2 registers. The caller must have checked for AVX2. One call fills a whole segment.

import Swift
import RampartKernelSupport

#if arch(x86_64)

/// Fills one Argon2 segment (see `argon2FillSegment`). `work` is four 1 KiB blocks.
@inline(never)
public func argon2FillSegmentAVX2(_ memory: UnsafeMutableRawPointer, _ pos: Argon2Segment, _ work: UnsafeMutableRawPointer) {
    argon2FillSegment(memory, pos, work)
}

/// The Argon2 segment fill on AVX2 (`avx2`).
public enum Argon2AVX2: Argon2Implementation {
    public static let name = "avx2"
    public static let requires: KernelFeatures = [.avx2]
    @inline(__always)
    public static func fillSegment(_ memory: UnsafeMutableRawPointer, _ position: Argon2Segment, _ work: UnsafeMutableRawPointer) {
        argon2FillSegmentAVX2(memory, position, work)
    }
}

#endif
