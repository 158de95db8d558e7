// The eight-lane X25519 kernel of this tier as the registry sees it: RampartKernelSupport's body
// (X25519Lanes8.swift) compiled with AVX-512F and VL, under this entry point's own name.

import Swift
import RampartKernelSupport

#if arch(x86_64)
/// Eight X25519 ladders at once in radix 2^25.5 with AVX-512F and VL (one zmm register per field limb).
public enum X25519Lanes8AVX512: X25519LanesImplementation {
    public static let name = "avx512-x8"
    public static let requires: KernelFeatures = [.avx512vl]
    public static let lanes = 8
    @inline(never)
    public static func scalarMultiply(_ result: UnsafeMutablePointer<UInt64>, _ points: UnsafePointer<UInt64>,
                                      _ scalars: UnsafePointer<UInt64>) {
        X25519Lanes.scalarMultiply(result, points, scalars)
    }
}
#endif
