// The Salsa20 kernels on architectures without one (everything but x86_64 today: the portable
// four-block path already runs on NEON there). `Kernels.salsa20` is inactive, so nothing calls these.
#if !arch(x86_64) || RAMPART_TYPECHECK_ARM64

enum SalsaKernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static let short = false
    static let shortScalar = false
    static func xsalsa20InputScalar(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
        preconditionFailure("unreachable: Kernels.salsa20 is inactive on this architecture")
    }
    static func blockScalar(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) {
        preconditionFailure("unreachable: Kernels.salsa20 is inactive on this architecture")
    }
    static func xsalsa20Input(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
        preconditionFailure("unreachable: Kernels.salsa20 is inactive on this architecture")
    }
    static func xsalsa20InputPair(_ keyA: UnsafeRawPointer, _ keyB: UnsafeRawPointer, _ nonce: UnsafeRawPointer)
        -> (SIMD16<UInt32>, SIMD16<UInt32>) {
        preconditionFailure("unreachable: Kernels.salsa20 is inactive on this architecture")
    }
    static func blocks(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer, two: Bool) {
        preconditionFailure("unreachable: Kernels.salsa20 is inactive on this architecture")
    }
    static func blocks4(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) {
        preconditionFailure("unreachable: Kernels.salsa20 is inactive on this architecture")
    }
    static func scryptBlockMix(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer,
                               _ r: Int) -> UInt64 {
        preconditionFailure("unreachable: Kernels.salsa20 is inactive on this architecture")
    }
    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                    _ groups: Int) {
        preconditionFailure("unreachable: Kernels.salsa20 is inactive on this architecture")
    }
    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        preconditionFailure("unreachable: Kernels.salsa20 is inactive on this architecture")
    }
}

#endif
