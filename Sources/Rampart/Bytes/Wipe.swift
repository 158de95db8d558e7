// Zeroing of secret memory that the optimizer may not remove.

/// Overwrites `buffer` with zeros.
///
/// The function is opaque to the optimizer (`@inline(never)`, unoptimized body), so the stores are
/// not removed as dead even when the memory is freed right afterwards.
@inline(never) @_optimize(none)
public func secureZero(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress else { return }
    var i = 0
    let n = buffer.count
    while i < n {
        base.storeBytes(of: 0, toByteOffset: i, as: UInt8.self)
        i += 1
    }
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
