// The Poly1305 kernel on architectures without one (everything but x86_64 today). `Kernels.poly1305`
// is inactive there, so nothing calls this.
#if !arch(x86_64) || RAMPART_TYPECHECK_ARM64

enum Poly1305Kernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ p: UnsafeRawPointer, _ groups: Int) {
        preconditionFailure("unreachable: Kernels.poly1305 is inactive on this architecture")
    }
}

#endif
