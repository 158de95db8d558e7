// The ChaCha20 kernel on architectures without one (everything but x86_64 today: the portable
// four-block path already runs on NEON there). `Kernels.chacha20` is inactive, so nothing calls this.
#if !arch(x86_64) || RAMPART_TYPECHECK_ARM64

enum ChaChaKernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                    _ groups: Int) {
        preconditionFailure("unreachable: Kernels.chacha20 is inactive on this architecture")
    }
    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        preconditionFailure("unreachable: Kernels.chacha20 is inactive on this architecture")
    }
}

#endif
