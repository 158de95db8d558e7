// Zeroing of secret memory that the optimizer may not remove.

/// Overwrites `buffer` with zeros.
///
/// The zeroing goes through ``secureZeroImplementation``, a public mutable function pointer the
/// optimizer cannot see through, so the stores are not removed as dead even when the memory is freed
/// right afterwards (the "volatile memset pointer" technique). An earlier version used
/// `@_optimize(none)`, which corrupted the caller's stack in Swift 6.3.1 release builds.
@inline(never)
public func secureZero(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    secureZeroImplementation(base, buffer.count)
}

/// The routine ``secureZero(_:)`` calls. Exposed (and mutable) only so the optimizer must assume it
/// can change; do not reassign it.
nonisolated(unsafe) public var secureZeroImplementation: (UnsafeMutableRawPointer, Int) -> Void = { p, n in
    p.initializeMemory(as: UInt8.self, repeating: 0, count: n)
}

/// Overwrites the storage of a value with zeros and resets it to `zero`.
@inlinable
internal func wipe<T>(_ value: inout T) {
    withUnsafeMutableBytes(of: &value) { secureZero($0) }
}

extension Array where Element == UInt8 {
    /// Overwrites the array's bytes with zeros in place (its count stays the same).
    public mutating func secureWipe() {
        self.withUnsafeMutableBytes { secureZero($0) }
    }
}
