// The Argon2 kernel on architectures without one (the portable fill already uses NEON's 128-bit
// vectors on arm64). `Kernels.argon2` is inactive, so nothing calls this.
#if !arch(x86_64) || RAMPART_TYPECHECK_ARM64

internal import RampartKernelSupport

enum Argon2Kernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static func fillSegment(_ memory: UnsafeMutableRawPointer, _ pos: Argon2Segment, _ work: UnsafeMutableRawPointer) {
        preconditionFailure("unreachable: Kernels.argon2 is inactive on this architecture")
    }
}

#endif
