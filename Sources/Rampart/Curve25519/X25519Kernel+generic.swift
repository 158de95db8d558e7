// The X25519 kernel on architectures without one (everything but x86_64 today). `Kernels.x25519` is
// inactive here, so the portable radix-2^51 ladder runs and no caller reaches this entry point.
#if !arch(x86_64) || RAMPART_TYPECHECK_ARM64

enum X25519Kernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static func scalarMultiply(_ out: UnsafeMutableRawPointer, _ k0: UInt64, _ k1: UInt64, _ k2: UInt64, _ k3: UInt64,
                               _ point: UnsafeRawPointer?) {
        preconditionFailure("unreachable: Kernels.x25519 is inactive on this architecture")
    }
}

#endif

#if !arch(x86_64) || RAMPART_TYPECHECK_ARM64

/// No lane kernel here: `Kernels.x25519Lanes` is inactive and batches run one scalar multiplication at
/// a time.
enum X25519LanesKernel {
    enum Tier: CaseIterable {
        var name: String { "" }
        func capable(_ f: CPUFeatures) -> Bool { false }
    }
    static let lanes = 8
    static let name: String? = nil
    static let selected: Tier? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static func scalarMultiply(_ tier: Tier, _ result: UnsafeMutablePointer<UInt64>, _ points: UnsafePointer<UInt64>,
                               _ scalars: UnsafePointer<UInt64>) {
        preconditionFailure("unreachable: Kernels.x25519Lanes is inactive on this architecture")
    }
}

#endif
