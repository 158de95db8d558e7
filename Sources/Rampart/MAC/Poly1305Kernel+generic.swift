// The Poly1305 kernels on architectures without one (everything but x86_64 today). `Kernels.poly1305`
// is inactive there, so nothing calls this.
#if !arch(x86_64) || RAMPART_TYPECHECK_ARM64

enum Poly1305Kernel {
    enum Tier {
        var name: String { "" }
    }
    static let name: String? = nil
    static let selected: Tier? = nil
    static func tier(named name: String) -> Tier? { nil }
    static func blocks(_ tier: Tier, _ state: UnsafeMutablePointer<UInt64>, _ p: UnsafeRawPointer, _ count: Int) -> Int {
        preconditionFailure("unreachable: no Poly1305 kernel on this architecture")
    }
}

#endif
