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

/// The limbs of a secret number, in one allocation owned by this object (never shared with an
/// array, so no copy-on-write copy can escape the wipe), zeroed and freed when it is released.
final class SecretLimbs: @unchecked Sendable {
    // Immutable after init (the limbs are written only there).
    let base: UnsafeMutablePointer<UInt64>
    /// The number of limbs (public).
    let count: Int

    /// `x`, zero-extended to `count` limbs (`x` must fit).
    init(_ x: BigUInt, count: Int) {
        precondition(x.limbs.count <= count && count > 0)
        self.count = count
        base = .allocate(capacity: count)
        base.initialize(repeating: 0, count: count)
        x.limbs.withUnsafeBufferPointer { if let b = $0.baseAddress { base.update(from: b, count: $0.count) } }
    }

    /// The limbs, read-only.
    var pointer: UnsafePointer<UInt64> { UnsafePointer(base) }

    /// A copy as a `BigUInt` (the caller owns it and should `wipe()` it).
    var value: BigUInt { BigUInt(limbs: Array(UnsafeBufferPointer(start: base, count: count))) }

    deinit {
        secureZero(UnsafeMutableRawBufferPointer(start: base, count: count * 8))
        base.deallocate()
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
