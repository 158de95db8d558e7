// x86_64 binding of the AVX-512VL build of the eight-lane SHA-256 kernel (RampartAccelAVX512: the same
// source file as RampartAccelAVX2's, compiled with AVX-512F and VL as well) and of the 16- and 32-lane
// 512-bit kernels. In a file of its own because both modules declare the eight-lane kernel's name:
// this file imports only the AVX-512 one.
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelAVX512

enum SHA256LanesAVX512 {
    @inline(__always)
    static func compress(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                         _ strides: UnsafePointer<Int>, _ n: Int, _ k: UnsafePointer<UInt32>, _ table: UnsafeMutableRawPointer) {
        sha256Lanes8AVX2(states, data, strides, n, k, table)
    }

    @inline(__always)
    static func compress16(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                           _ strides: UnsafePointer<Int>, _ n: Int, _ k: UnsafePointer<UInt32>, _ table: UnsafeMutableRawPointer) {
        sha256Lanes16AVX512(states, data, strides, n, k, table)
    }

    @inline(__always)
    static func compress32(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                           _ strides: UnsafePointer<Int>, _ n: Int, _ k: UnsafePointer<UInt32>, _ table: UnsafeMutableRawPointer) {
        sha256Lanes32AVX512(states, data, strides, n, k, table)
    }
}

#endif
