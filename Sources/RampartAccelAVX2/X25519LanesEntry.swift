// The eight-lane X25519 kernel of this tier as the registry sees it: RampartKernelSupport's body
// (X25519Lanes8.swift) compiled with AVX2, under this entry point's own name.

import Swift
import RampartKernelSupport

#if arch(x86_64)
/// Eight X25519 ladders at once in radix 2^25.5 on AVX2 (two ymm registers per field limb). Runnable
/// for tests and ctgrind, never selected: eight ladders here take as long as eight `mulx` ones.
public enum X25519Lanes8AVX2: X25519LanesImplementation {
    public static let name = "avx2-x8"
    public static let requires: KernelFeatures = [.avx2]
    public static let lanes = 8
    @inline(never)
    public static func scalarMultiply(_ result: UnsafeMutablePointer<UInt64>, _ points: UnsafePointer<UInt64>,
                                      _ scalars: UnsafePointer<UInt64>) {
        X25519Lanes.scalarMultiply(result, points, scalars)
    }
}
#endif
