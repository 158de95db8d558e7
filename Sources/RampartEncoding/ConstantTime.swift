// The encodings and codecs that secrets pass through (Base64 of keys in Safe backups and in PEM, the
// JSON writer, the stored gzip writer's CRC) avoid branches and table lookups on the data. Where
// only a public fact is branched on (is this text valid, how much padding does it have, does this
// string need escaping), that fact is declared public through `CodecsCT.declassifyHook`, which the
// constant-time checker (`rampart-ctgrind`) sets. `grep -rn declassif Sources/RampartEncoding
// Sources/RampartCodecs` lists every such point.

/// Declassification for the constant-time checker (no effect outside it), masks, and wiping.
package enum CodecsCT {
    /// Marks `count` bytes at the pointer as public; set only by `rampart-ctgrind`.
    nonisolated(unsafe) package static var declassifyHook: (@convention(c) (UnsafeRawPointer?, Int) -> Void)? = nil

    /// Whether `mask` is non-zero, as a public bit.
    @inline(__always) package static func flag(_ mask: UInt32) -> Bool {
        declassified(mask) != 0
    }

    /// `value`, declared public from here on.
    @inline(__always) package static func declassified<T: BitwiseCopyable>(_ value: T) -> T {
        guard let hook = declassifyHook else { return value }
        var v = value
        withUnsafeMutableBytes(of: &v) { hook(UnsafeRawPointer($0.baseAddress), $0.count) }
        return v
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

    /// Overwrites `buffer` with zeros through ``wipeImplementation``, a function pointer the
    /// optimizer cannot see through, so the stores stay even when the memory is freed right after
    /// (Rampart's `secureZero` technique, repeated here because this target depends on nothing).
    @inline(never) package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        wipeImplementation(base, buffer.count)
    }

    /// The routine ``wipe(_:)`` calls; never reassigned.
    @exclusivity(unchecked) nonisolated(unsafe) package static var wipeImplementation: (UnsafeMutableRawPointer, Int) -> Void = { p, n in
        p.initializeMemory(as: UInt8.self, repeating: 0, count: n)
    }
}
