// Constant-time comparison and selection helpers, and the declassification points.
//
// Every function here runs in time that depends only on the *lengths* of its inputs, never on their
// contents: no early exit, no secret-dependent branch, no secret-indexed memory access.
//
// Constant time is checked mechanically (Scripts/ctgrind.sh): `rampart-ctgrind` marks secrets as
// undefined for valgrind's memcheck and runs every secret-handling operation; any branch or address
// that depends on them is an error. The few values that are public by design (a comparison's
// outcome, an authenticated plaintext, the length of a returned number) pass through
// `declassify`/`declassified`, which tell the checker and cost one load of a nil hook otherwise.
// `grep -rn "declassif" Sources` lists every such point, each with its reason.

package import RampartBarrier

/// Constant-time helpers for comparing and selecting secret bytes.
public enum ConstantTime {
    /// Compares two byte buffers without an early exit.
    ///
    /// The running time depends on the lengths only. Buffers of different lengths compare unequal
    /// (the lengths themselves are not treated as secret).
    ///
    /// - Returns: `true` when both buffers hold the same bytes.
    @inlinable
    public static func equals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        // Public by design: whether two secrets are equal (a tag check's accept/reject) is the
        // caller's answer; how they differ is not released.
        return declassified(difference(a, b)) == 0
    }

    /// Compares two byte collections without an early exit on content.
    @inlinable
    public static func equals<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
        withContiguousBytes(a) { pa in withContiguousBytes(b) { pb in equals(pa, pb) } }
    }

    /// ORs together the byte-wise XOR of two equal-length buffers: zero exactly when they are equal.
    @usableFromInline @inline(never)
    internal static func difference(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> UInt8 {
        var acc: UInt64 = 0
        let n = a.count
        var i = 0
        guard n > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return 0 }
        while i + 8 <= n {
            acc |= pa.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                ^ pb.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < n {
            acc |= UInt64(pa.load(fromByteOffset: i, as: UInt8.self) ^ pb.load(fromByteOffset: i, as: UInt8.self))
            i += 1
        }
        // Fold to one byte without branches.
        acc |= acc >> 32
        acc |= acc >> 16
        acc |= acc >> 8
        return UInt8(truncatingIfNeeded: acc)
    }

    /// Returns all-ones when `x == 0`, all-zeros otherwise, without a branch.
    @inlinable @inline(__always)
    public static func isZeroMask(_ x: UInt64) -> UInt64 {
        // (x | -x) has its top bit set iff x != 0.
        let nonzero = (x | (0 &- x)) >> 63
        return nonzero &- 1
    }

    /// Returns all-ones when `x == 0`, all-zeros otherwise, through a value barrier: the optimizer
    /// cannot tell that the result is a mask, so it cannot turn its uses into branches or
    /// conditional loads. Use this for masks that select between secret-indexed entries.
    @inline(__always)
    package static func isZeroMaskBarrier(_ x: UInt64) -> UInt64 {
        valueBarrier(isZeroMask(x))
    }

    /// Selects `a` when `mask` is all-ones and `b` when it is all-zeros.
    @inlinable @inline(__always)
    public static func select(_ mask: UInt64, _ a: UInt64, _ b: UInt64) -> UInt64 {
        b ^ (mask & (a ^ b))
    }
}

/// Runs `body` over the contiguous bytes of a collection, copying only when it is not contiguous.
/// The buffer's base address is never nil, not even for an empty collection (a zero-length buffer
/// over a stack word), so raw-pointer code needs no special case. Shared by the package's modules.
@inlinable
package func withContiguousBytes<C: Collection<UInt8>, R>(
    _ c: C, _ body: (UnsafeRawBufferPointer) throws -> R
) rethrows -> R {
    @inline(__always) func nonNil(_ b: UnsafeRawBufferPointer) throws -> R {
        if b.baseAddress == nil {
            return try withUnsafeBytes(of: UInt64(0)) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<0])) }
        }
        return try body(b)
    }
    if let r = try c.withContiguousStorageIfAvailable({ try nonNil(UnsafeRawBufferPointer($0)) }) {
        return r
    }
    let copy = Array(c)
    return try copy.withUnsafeBytes { try nonNil($0) }
}

/// A carry or comparison bit as a word (0 or 1) without a select. Multi-word arithmetic on secrets
/// uses this instead of `c ? 1 : 0`, which LLVM sometimes compiles to a conditional jump.
@usableFromInline @inline(__always) func ctBit(_ c: Bool) -> UInt64 { UInt64(unsafeBitCast(c, to: UInt8.self)) }

/// The constant-time checker's hook (set only by `rampart-ctgrind`): marks memory as defined again.
@usableFromInline package enum CTGrind {
    /// Called with every declassified region; `nil` outside the checker.
    @usableFromInline nonisolated(unsafe) package static var declassifyHook: (@convention(c) (UnsafeRawPointer?, Int) -> Void)? = nil
}

/// Declares `count` bytes at `p` public from here on (see the file comment). No effect outside the
/// constant-time checker.
@usableFromInline @inline(__always)
package func declassify(_ p: UnsafeRawPointer, _ count: Int) {
    if let hook = CTGrind.declassifyHook { hook(p, count) }
}

/// `value`, declared public from here on (see the file comment). Inlinable: the other modules call it
/// per message, and unspecialized it cost a generic call each time.
@inlinable @inline(__always)
package func declassified<T: BitwiseCopyable>(_ value: T) -> T {
    guard let hook = CTGrind.declassifyHook else { return value }
    var v = value
    withUnsafeMutableBytes(of: &v) { hook(UnsafeRawPointer($0.baseAddress), $0.count) }
    return v
}
