// Stack scratch space without `withUnsafeTemporaryAllocation`.
//
// Swift 6.3.1 miscompiles `withUnsafeTemporaryAllocation` in release builds when the closure is
// emitted out of line: the caller zeroes the typed-throws error register (r12), calls the closure,
// and then finds r12 changed, so it takes the "thrown" path for an error of type `Never` and crashes
// (seen in SHA-1 finalisation reached from generic code). Rampart therefore never uses it; this
// helper gives 640 bytes (enough for a SHA-512 message schedule) from a local value instead.

/// 640 bytes of inline storage.
@usableFromInline
struct Scratch640 {
    @usableFromInline var storage: (SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>,
                                    SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>)
    @inlinable init() {
        let z = SIMD64<UInt8>(repeating: 0)
        storage = (z, z, z, z, z, z, z, z, z, z)
    }
}

/// Calls `body` with 640 zeroed bytes of stack memory (16-byte aligned), wiped afterwards.
@inlinable @inline(__always)
func withScratch<R>(_ body: (UnsafeMutableRawPointer) -> R) -> R {
    var s = Scratch640()
    let r = withUnsafeMutableBytes(of: &s) { body($0.baseAddress!) }
    withUnsafeMutableBytes(of: &s) { secureZero($0) }
    return r
}

/// 1280 bytes of inline storage (two 128-byte-block SHA-512 schedules).
@usableFromInline
struct Scratch1280 {
    @usableFromInline var storage: (Scratch640, Scratch640)
    @inlinable init() { storage = (Scratch640(), Scratch640()) }
}

/// Calls `body` with 1280 zeroed bytes of stack memory (16-byte aligned), wiped afterwards.
@inlinable @inline(__always)
func withScratch1280<R>(_ body: (UnsafeMutableRawPointer) -> R) -> R {
    var s = Scratch1280()
    let r = withUnsafeMutableBytes(of: &s) { body($0.baseAddress!) }
    withUnsafeMutableBytes(of: &s) { secureZero($0) }
    return r
}
