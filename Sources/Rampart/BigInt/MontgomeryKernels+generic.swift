// The Montgomery kernels on architectures without one (everything but x86_64 today). `Kernels.montgomery`
// and `Kernels.modexp2048` are inactive here, so no engine reaches these entry points.
#if !arch(x86_64) || RAMPART_TYPECHECK_ARM64

enum MontgomeryKernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static func mul(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                    _ m: UnsafePointer<UInt64>, _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        preconditionFailure("unreachable: Kernels.montgomery is inactive on this architecture")
    }
    static func square(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                       _ n: Int, _ m0inv: UInt64, _ t: UnsafeMutablePointer<UInt64>) {
        preconditionFailure("unreachable: Kernels.montgomery is inactive on this architecture")
    }

    static let wideName: String? = nil
    static func wideSupported(_ f: CPUFeatures) -> Bool { false }
    static func widePreferred() -> Bool { false }
    static let wideLimbs = 0
    static let wideMontgomeryBits = 0
    static let wideWorkspaceLanes = 0
    static func widePowerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>,
                            _ exp: UnsafePointer<UInt64>, _ el: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64,
                            _ rr: UnsafePointer<UInt64>, _ ws: UnsafeMutablePointer<UInt64>) {
        preconditionFailure("unreachable: Kernels.modexp2048 is inactive on this architecture")
    }
    static func wideMul(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                        _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, _ ws: UnsafeMutablePointer<UInt64>) {
        preconditionFailure("unreachable: Kernels.modexp2048 is inactive on this architecture")
    }
}

#endif
