// CRC-32 (IEEE 802.3, the zlib/PNG/gzip one): reflected polynomial 0xEDB88320, initial value and
// final XOR 0xFFFFFFFF. Used by gzip (RFC 1952 trailer), MTProto's full transport (Docs/MTProto.md §6.4)
// and TL constructor ids. A checksum, not cryptography: it lives in RampartCodecs, not Rampart.
// Portable slicing-by-8: eight 1 KiB tables, eight input bytes per step.

/// The IEEE CRC-32 checksum, as computed by zlib's `crc32`, incremental or one-shot.
///
/// ```swift
/// CRC32.checksum(data: Array("123456789".utf8))   // 0xCBF43926
/// var c = CRC32(); c.update(data: part1); c.update(data: part2); c.finalize()
/// ```
///
/// CRC-32 is an error-detecting code, **not** a cryptographic checksum: anyone can forge data with a
/// chosen CRC. It is computed with table lookups indexed by the data (slicing-by-8). That is fine
/// here because a CRC never processes secrets; do not use it on secret data where timing matters.
public struct CRC32: Sendable, Hashable {
    /// The running register (pre-inverted form, as in zlib: `~crc` of the data so far).
    @usableFromInline var state: UInt32 = 0xFFFF_FFFF

    /// A new checksum over no data.
    @inlinable public init() {}

    /// Continues a checksum from a finished CRC value, as zlib's `crc32(crc, ...)` does.
    ///
    /// `CRC32(continuing: CRC32.checksum(data: a))` followed by `update(data: b)` gives the CRC of
    /// `a` followed by `b`.
    @inlinable public init(continuing crc: UInt32) { state = ~crc }

    /// Adds the bytes of a raw buffer.
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        guard let base = bufferPointer.baseAddress, bufferPointer.count > 0 else { return }
        state = crc32Update(state, base, bufferPointer.count)
    }

    /// Adds the bytes of a collection (fast path when it is contiguous).
    @inlinable
    public mutating func update<D: Collection<UInt8>>(data: D) {
        if data.withContiguousStorageIfAvailable({ update(bufferPointer: UnsafeRawBufferPointer($0)) }) != nil {
            return
        }
        let copy = Array(data)
        copy.withUnsafeBytes { update(bufferPointer: $0) }
    }

    /// The CRC-32 of all bytes added so far. The checksum can keep receiving data afterwards.
    @inlinable public func finalize() -> UInt32 { ~state }

    /// The CRC-32 of `data` in one call.
    @inlinable
    public static func checksum<D: Collection<UInt8>>(data: D) -> UInt32 {
        var c = CRC32()
        c.update(data: data)
        return c.finalize()
    }

    /// The CRC-32 of a raw buffer in one call.
    /// The CRC of secret data: bit by bit with masks, no table indexed by the data (a table lookup
    /// per byte would leak the data through the cache). About ten times slower than
    /// ``checksum(bufferPointer:)``; the stored gzip writer uses it, since what it wraps is often
    /// secret (a Threema Safe backup before encryption).
    public static func checksumConstantTime(bufferPointer: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bufferPointer {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }

    public static func checksum(bufferPointer: UnsafeRawBufferPointer) -> UInt32 {
        var c = CRC32()
        c.update(bufferPointer: bufferPointer)
        return c.finalize()
    }
}

/// Slicing-by-8 tables: `crc32Tables[k * 256 + b]` is the CRC register contribution of byte `b`
/// followed by `k` zero bytes. Table 0 is the classic byte-at-a-time table.
let crc32Tables: [UInt32] = {
    var t = [UInt32](repeating: 0, count: 8 * 256)
    for b in 0..<256 {
        var c = UInt32(b)
        for _ in 0..<8 { c = (c >> 1) ^ (0xEDB8_8320 & (0 &- (c & 1))) }
        t[b] = c
    }
    for k in 1..<8 {
        for b in 0..<256 {
            let prev = t[(k - 1) * 256 + b]
            t[k * 256 + b] = (prev >> 8) ^ t[Int(prev & 0xFF)]
        }
    }
    return t
}()

/// Runs the register `crc` over `count` bytes at `p`.
@inline(never)
func crc32Update(_ crc: UInt32, _ p: UnsafeRawPointer, _ count: Int) -> UInt32 {
    crc32Tables.withUnsafeBufferPointer { tb in
        let t = tb.baseAddress!  // the table is a non-empty global
        var c = crc
        var i = 0
        while i + 8 <= count {
            // Eight bytes: the low four are folded into the register, the high four stand alone.
            let lo = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt32.self)) ^ c
            let hi = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: i + 4, as: UInt32.self))
            c = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
            i += 8
        }
        while i < count {
            c = (c >> 8) ^ t[Int((c ^ UInt32(p.load(fromByteOffset: i, as: UInt8.self))) & 0xFF)]
            i += 1
        }
        return c
    }
}
