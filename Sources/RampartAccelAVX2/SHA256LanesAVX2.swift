// The eight-lane SHA-256 kernel of this tier: RampartKernelSupport's body (SHA256Lanes8.swift)
// compiled with AVX2, two shifts and an OR per rotation. For processors without the SHA extensions;
// the caller must have checked for AVX2.

import Swift
import RampartKernelSupport

#if arch(x86_64)

/// Compresses `n` 64-byte blocks on each of eight lanes (see `sha256Lanes8` for the arguments).
@inline(never)
public func sha256Lanes8AVX2(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                             _ strides: UnsafePointer<Int>, _ n: Int, _ k: UnsafePointer<UInt32>, _ table: UnsafeMutableRawPointer) {
    sha256Lanes8(states, data, strides, n, k, table)
}

#endif
