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
///
/// No dynamic exclusivity check: every wipe reads this variable, and the check (a `swift_beginAccess`
/// call per read) cost more than zeroing a short buffer, several times per small secretbox. The
/// variable is never written, so there is no access to conflict with; the optimizer still has to load
/// it on every call.
@exclusivity(unchecked) nonisolated(unsafe) public var secureZeroImplementation: (UnsafeMutableRawPointer, Int) -> Void = { p, n in
    p.initializeMemory(as: UInt8.self, repeating: 0, count: n)
}

/// Secret bytes (a nonce, a temporary key, a DH exponent) in one allocation owned by this object,
/// zeroed and freed when it is released. Immutable after creation. Every way in copies, so no array
/// that shares its buffer survives the wipe; every way out is a scoped view or a copy the caller
/// wipes.
package final class SecretBytes: @unchecked Sendable {
    // Immutable after init.
    private let base: UnsafeMutableRawPointer
    /// The number of bytes (public).
    package let count: Int

    /// Lets `body` write all `count` bytes of fresh zeroed storage.
    package init(count: Int, initializingWith body: (UnsafeMutableRawBufferPointer) -> Void) {
        self.count = count
        base = .allocate(byteCount: max(count, 1), alignment: 16)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: max(count, 1))
        body(UnsafeMutableRawBufferPointer(start: base, count: count))
    }

    /// Takes `base` (allocated with `UnsafeMutableRawPointer.allocate`, at least one byte and
    /// `count` initialized): this object now wipes and frees it.
    package init(adopting base: UnsafeMutableRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    /// A copy of `bytes` (the caller still owns and wipes its own buffer).
    package convenience init(_ bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count) { if let b = bytes.baseAddress { $0.baseAddress!.copyMemory(from: b, byteCount: bytes.count) } }
    }

    /// A copy of `bytes` (the caller still owns and wipes its own array).
    package convenience init(_ bytes: [UInt8]) {
        self.init(count: bytes.count) { out in bytes.withUnsafeBytes { if let b = $0.baseAddress { out.baseAddress!.copyMemory(from: b, byteCount: $0.count) } } }
    }

    /// `count` bytes from `rng`, written straight into the owned storage (8 bytes per draw,
    /// little-endian, the last draw truncated: the order of `fillRandom`).
    package static func random<R: RandomNumberGenerator>(_ count: Int, using rng: inout R) -> SecretBytes {
        SecretBytes(count: count) { fillRandom($0, using: &rng) }
    }

    /// Runs `body` over the bytes in place. Do not let the pointer escape.
    package func withUnsafeBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        try withExtendedLifetime(self) { () throws(E) -> T in try body(UnsafeRawBufferPointer(start: base, count: count)) }
    }

    /// Runs `body` over a temporary array copy of the bytes, wiped afterwards (`body` must not keep it).
    package func withBytes<T, E: Error>(_ body: ([UInt8]) throws(E) -> T) throws(E) -> T {
        var copy = bytes
        defer { copy.secureWipe() }
        return try body(copy)
    }

    /// A copy of the bytes: the caller owns it and wipes it (`secureWipe()`).
    package var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    deinit {
        secureZero(UnsafeMutableRawBufferPointer(start: base, count: max(count, 1)))
        base.deallocate()
    }
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

    /// A copy of the `count` limbs at `limbs`.
    init(copying limbs: UnsafePointer<UInt64>, count: Int) {
        precondition(count > 0)
        self.count = count
        base = .allocate(capacity: count)
        base.initialize(from: limbs, count: count)
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

extension Array where Element == UInt64 {
    /// Overwrites the limbs with zeros in place (its count stays the same): secret limb arrays.
    mutating func secureWipe() {
        self.withUnsafeMutableBytes { secureZero($0) }
    }
}

/// `count` bytes from `rng`, eight at a time from `next()` in little-endian order (so a test generator
/// that replays a byte string reproduces it exactly). Shared by the protocol modules (nonces, salts,
/// padding).
package func randomBytes<R: RandomNumberGenerator>(_ count: Int, using rng: inout R) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(count + 8)
    while out.count < count {
        let w = rng.next()
        for k in 0..<8 where out.count < count { out.append(UInt8(truncatingIfNeeded: w >> (8 * UInt64(k)))) }
    }
    return out
}
