// The Montgomery kernels on architectures without one (everything but x86_64 today). `Kernels.montgomery`,
// `Kernels.modexp2048` and `Kernels.modexpIFMA` are inactive here, so no engine reaches these entry points.
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

    static let ifmaName: String? = nil
    static func ifmaSupported(_ f: CPUFeatures) -> Bool { false }
    static func ifmaServes(limbs: Int) -> Bool { false }
    static func ifmaMontgomeryBits(limbs: Int) -> Int { 0 }
    static func ifmaWorkspaceLanes(limbs: Int, pair: Bool) -> Int { 0 }
    static func ifmaPowerCT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                            _ expLimbs: Int, window: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64,
                            _ rr: UnsafePointer<UInt64>, limbs: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        preconditionFailure("unreachable: Kernels.modexpIFMA is inactive on this architecture")
    }
    static func ifmaPowerVT(_ out: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ exp: UnsafePointer<UInt64>,
                            _ expLimbs: Int, _ m: UnsafePointer<UInt64>, _ m0inv: UInt64,
                            _ rr: UnsafePointer<UInt64>, limbs: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        preconditionFailure("unreachable: Kernels.modexpIFMA is inactive on this architecture")
    }
    static func ifmaPowerCTPair(_ out1: UnsafeMutablePointer<UInt64>, _ base1: UnsafePointer<UInt64>, _ exp1: UnsafePointer<UInt64>,
                                _ m1: UnsafePointer<UInt64>, _ m0inv1: UInt64, _ rr1: UnsafePointer<UInt64>,
                                _ out2: UnsafeMutablePointer<UInt64>, _ base2: UnsafePointer<UInt64>, _ exp2: UnsafePointer<UInt64>,
                                _ m2: UnsafePointer<UInt64>, _ m0inv2: UInt64, _ rr2: UnsafePointer<UInt64>,
                                expLimbs: Int, window: Int, _ ws: UnsafeMutablePointer<UInt64>) {
        preconditionFailure("unreachable: Kernels.modexpIFMA is inactive on this architecture")
    }
    static func ifmaNormalise(_ out: UnsafeMutablePointer<UInt64>, _ lanes: UnsafePointer<UInt64>, digits: Int) {
        preconditionFailure("unreachable: Kernels.modexpIFMA is inactive on this architecture")
    }
    static func ifmaMul(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                        _ m: UnsafePointer<UInt64>, _ m0inv: UInt64, limbs: Int, pair: Bool,
                        _ ws: UnsafeMutablePointer<UInt64>) -> Bool {
        preconditionFailure("unreachable: Kernels.modexpIFMA is inactive on this architecture")
    }
}

#endif
