// The codecs that secrets pass through (Base64 of keys in Safe backups, the JSON writer, the stored
// gzip writer's CRC) avoid branches and table lookups on the data. Where only a public fact is
// branched on (is this text valid, does this string need escaping), that one bit is declared public
// through `CodecsCT.declassifyHook`, which the constant-time checker (`rampart-ctgrind`) sets.

/// Declassification for the constant-time checker; no effect outside it.
package enum CodecsCT {
    /// Marks `count` bytes at the pointer as public; set only by `rampart-ctgrind`.
    nonisolated(unsafe) package static var declassifyHook: (@convention(c) (UnsafeRawPointer?, Int) -> Void)? = nil

    /// Whether `mask` is non-zero, as a public bit.
    @inline(__always) package static func flag(_ mask: UInt32) -> Bool {
        guard let hook = declassifyHook else { return mask != 0 }
        var m = mask
        withUnsafeMutableBytes(of: &m) { hook(UnsafeRawPointer($0.baseAddress), 4) }
        return m != 0
    }

    /// All ones when `a == b`, else zero, without a branch.
    @inline(__always) package static func equalMask(_ a: UInt8, _ b: UInt8) -> UInt32 {
        let d = UInt32(a ^ b)
        return 0 &- ((d &- 1) >> 31)
    }

    /// All ones when `a < b`, else zero, without a branch.
    @inline(__always) package static func lessMask(_ a: UInt8, _ b: UInt8) -> UInt32 {
        0 &- ((UInt32(a) &- UInt32(b)) >> 31)
    }
}
