// x86_64 binding of the AVX-512 build of the eight-lane X25519 kernel (RampartAccelAVX512: the same source
// file as RampartAccelAVX2's, compiled with AVX-512F and VL as well). In a file of its own because both
// modules declare the same name: this file imports only the AVX-512 one.
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelAVX512

enum X25519LanesAVX512 {
    @inline(__always)
    static func scalarMultiply(_ result: UnsafeMutablePointer<UInt64>, _ points: UnsafePointer<UInt64>,
                               _ scalars: UnsafePointer<UInt64>) {
        X25519Lanes.scalarMultiply(result, points, scalars)
    }
}

#endif
