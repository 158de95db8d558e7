// x86_64 binding of the X25519 kernel (see Platform/Kernels.swift): the whole scalar multiplication in
// radix 2^64 with mulx (RampartAccelBMI2/X25519BMI2.swift).
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelBMI2

enum X25519Kernel {
    static let name: String? = "bmi2+adx"
    static func supported(_ f: CPUFeatures) -> Bool { f.bmi2 && f.adx }

    /// X25519 with the clamped scalar words `k0…k3` and the u-coordinate at `point` (nil: 9).
    @inline(__always)
    static func scalarMultiply(_ out: UnsafeMutableRawPointer, _ k0: UInt64, _ k1: UInt64, _ k2: UInt64, _ k3: UInt64,
                               _ point: UnsafeRawPointer?) {
        X25519BMI2.scalarMultiply(out, k0, k1, k2, k3, point)
    }
}

#endif
