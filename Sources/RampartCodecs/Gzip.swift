// gzip (RFC 1952): one member (header, DEFLATE stream, CRC-32 and ISIZE trailer) read strictly, and a
// writer that stores its data uncompressed in stored blocks, byte for byte as zlib's
// `deflateInit2(level 0, windowBits 31)` does when given the whole input and enough output space.
// Threema Safe backups are gzip'd JSON written at level 0; MTProto's gzip_packed carries gzip too.

/// gzip (RFC 1952) members.
///
/// ```swift
/// let json = try Gzip.decompress(backup, maxOutputBytes: 8 << 20)
/// let packed = Gzip.compressStored(json)
/// ```
///
/// Memory: the output is bounded by `maxOutputBytes` (see ``Deflate``); header fields (extra field,
/// file name, comment) are slices of the input, so they are bounded by its size.
public enum Gzip {
    /// The header fields of a gzip member (RFC 1952 §2.3.1).
    public struct Header: Sendable, Equatable {
        /// FTEXT: the compressor guessed the data is text (advisory only).
        public var isText: Bool
        /// MTIME: modification time in Unix seconds, 0 when unknown.
        public var modificationTime: UInt32
        /// XFL: 2 = best compression, 4 = fastest (zlib also writes 4 at level 0).
        public var extraFlags: UInt8
        /// OS: the file system the member was written on (3 = Unix, 255 = unknown).
        public var operatingSystem: UInt8
        /// FEXTRA: the extra field's bytes, or `nil` when absent.
        public var extra: [UInt8]?
        /// FNAME: the original file name's bytes (ISO 8859-1, without the terminating zero), or `nil`.
        public var fileName: [UInt8]?
        /// FCOMMENT: the comment's bytes (without the terminating zero), or `nil`.
        public var comment: [UInt8]?
        /// Whether the header carried a CRC16 (FHCRC); it was checked when present.
        public var hasHeaderCRC: Bool

        /// A header as ``Gzip/compressStored(_:modificationTime:operatingSystem:)`` writes it: no
        /// optional fields.
        public init(isText: Bool = false, modificationTime: UInt32 = 0, extraFlags: UInt8 = 4, operatingSystem: UInt8 = 3,
                    extra: [UInt8]? = nil, fileName: [UInt8]? = nil, comment: [UInt8]? = nil, hasHeaderCRC: Bool = false) {
            self.isText = isText
            self.modificationTime = modificationTime
            self.extraFlags = extraFlags
            self.operatingSystem = operatingSystem
            self.extra = extra
            self.fileName = fileName
            self.comment = comment
            self.hasHeaderCRC = hasHeaderCRC
        }
    }

    /// One decoded member: its header and its data.
    public struct Member: Sendable, Equatable {
        /// The member's header.
        public var header: Header
        /// The decompressed data (CRC-32 and length already checked against the trailer).
        public var data: [UInt8]
    }

    /// Decodes a gzip file consisting of exactly one member.
    ///
    /// - Parameters:
    ///   - data: the gzip bytes (not mutated).
    ///   - maxOutputBytes: the most decompressed bytes accepted (``DeflateError/outputLimitExceeded(_:)``
    ///     beyond, raised before the excess is produced).
    /// - Returns: the decompressed data.
    /// - Throws: ``DeflateError``: a bad header (magic, method, reserved flags, header CRC), a bad
    ///   DEFLATE stream, a CRC-32 or ISIZE mismatch, or ``DeflateError/trailingData`` when anything
    ///   follows the member (use ``readMember(_:maxOutputBytes:)`` for concatenated members).
    public static func decompress<C: Collection<UInt8>>(_ data: C, maxOutputBytes: Int) throws(DeflateError) -> [UInt8] {
        let (member, consumed, total) = try withBytes(data) { readMember($0, maxOutputBytes: maxOutputBytes) }.get()
        guard consumed == total else { throw .trailingData }
        return member.data
    }

    /// Decodes the gzip member at the start of `data` and says how many bytes it occupied, so that a
    /// caller can read concatenated members (as `gunzip` does) under its own total limit.
    ///
    /// - Returns: the member and the number of bytes it used, trailer included.
    /// - Throws: as ``decompress(_:maxOutputBytes:)``, except that bytes after the member are not an error.
    public static func readMember<C: Collection<UInt8>>(_ data: C, maxOutputBytes: Int) throws(DeflateError) -> (member: Member, consumed: Int) {
        let (member, consumed, _) = try withBytes(data) { readMember($0, maxOutputBytes: maxOutputBytes) }.get()
        return (member, consumed)
    }

    static func readMember(_ p: UnsafeBufferPointer<UInt8>, maxOutputBytes: Int) -> Result<(Member, Int, Int), DeflateError> {
        let n = p.count
        // Judge the fixed header bytes that are present before asking for the rest.
        if n >= 1 && p[0] != 0x1F || n >= 2 && p[1] != 0x8B { return .failure(.invalidHeader) }
        if n >= 3 && p[2] != 8 { return .failure(.unsupportedMethod) }
        if n >= 4 && p[3] & 0xE0 != 0 { return .failure(.unsupportedFlags) }
        guard n >= 10 else { return .failure(.truncated) }
        let flags = p[3]
        var header = Header(isText: flags & 1 != 0,
                            modificationTime: UInt32(p[4]) | UInt32(p[5]) << 8 | UInt32(p[6]) << 16 | UInt32(p[7]) << 24,
                            extraFlags: p[8], operatingSystem: p[9], hasHeaderCRC: flags & 2 != 0)
        var o = 10
        if flags & 4 != 0 {
            guard n - o >= 2 else { return .failure(.truncated) }
            let xlen = Int(p[o]) | Int(p[o + 1]) << 8
            o += 2
            guard n - o >= xlen else { return .failure(.truncated) }
            header.extra = Array(p[o..<(o + xlen)])
            o += xlen
        }
        /// A zero-terminated field starting at `o`.
        func zeroTerminated(_ o: inout Int) -> [UInt8]? {
            var end = o
            while end < n && p[end] != 0 { end += 1 }
            guard end < n else { return nil }
            defer { o = end + 1 }
            return Array(p[o..<end])
        }
        if flags & 8 != 0 {
            guard let name = zeroTerminated(&o) else { return .failure(.truncated) }
            header.fileName = name
        }
        if flags & 16 != 0 {
            guard let comment = zeroTerminated(&o) else { return .failure(.truncated) }
            header.comment = comment
        }
        if flags & 2 != 0 {
            guard n - o >= 2 else { return .failure(.truncated) }
            let crc16 = UInt16(p[o]) | UInt16(p[o + 1]) << 8
            let actual = UInt16(truncatingIfNeeded: CRC32.checksum(bufferPointer: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: p[0..<o]))))
            guard crc16 == actual else { return .failure(.headerChecksumMismatch) }
            o += 2
        }
        let body = Deflate.inflate(p, from: o, maxOutputBytes: maxOutputBytes)
        guard case .success(let (out, end, _)) = body else {
            if case .failure(let e) = body { return .failure(e) }
            return .failure(.truncated)
        }
        guard n - end >= 8 else { return .failure(.truncated) }
        let crc = UInt32(p[end]) | UInt32(p[end + 1]) << 8 | UInt32(p[end + 2]) << 16 | UInt32(p[end + 3]) << 24
        let isize = UInt32(p[end + 4]) | UInt32(p[end + 5]) << 8 | UInt32(p[end + 6]) << 16 | UInt32(p[end + 7]) << 24
        guard CRC32.checksum(data: out) == crc else { return .failure(.checksumMismatch) }
        guard UInt32(truncatingIfNeeded: out.count) == isize else { return .failure(.sizeMismatch) }
        return .success((Member(header: header, data: out), end + 8, n))
    }

    /// Writes `data` as one gzip member whose DEFLATE stream is stored blocks (no compression):
    /// identical to zlib's output at level 0 (`deflateInit2(strm, 0, Z_DEFLATED, 31, 8,
    /// Z_DEFAULT_STRATEGY)` and one `deflate(Z_FINISH)` with `deflateBound` bytes of output space),
    /// which is what the Threema apps write: header `1F 8B 08 00`, MTIME, XFL 4, OS; blocks of 65 535
    /// bytes, the last one final (one empty final block for empty data); CRC-32 and ISIZE.
    ///
    /// - Parameters:
    ///   - data: the bytes to wrap.
    ///   - modificationTime: MTIME (zlib writes 0).
    ///   - operatingSystem: OS (zlib writes 3, Unix, on Unix systems).
    /// - Returns: `data.count + 18 + 5 × max(1, ⌈data.count / 65 535⌉)` bytes.
    ///
    /// Constant time in the data (stored blocks are copies; the CRC uses
    /// ``CRC32/checksumConstantTime(bufferPointer:)``), so secrets may be wrapped.
    public static func compressStored<C: Collection<UInt8>>(_ data: C, modificationTime: UInt32 = 0, operatingSystem: UInt8 = 3) -> [UInt8] {
        let bytes = Array(data)
        var out: [UInt8] = [0x1F, 0x8B, 8, 0]
        out.reserveCapacity(bytes.count + 18 + 5 * (bytes.count / 65_535 + 1))
        for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: modificationTime >> (8 * UInt32(i)))) }
        out.append(4)
        out.append(operatingSystem)
        Deflate.appendStored(bytes, to: &out)
        // What is wrapped without compression is often secret (a Safe backup before encryption):
        // the CRC runs without tables indexed by the data.
        let crc = bytes.withUnsafeBytes { CRC32.checksumConstantTime(bufferPointer: $0) }
        let size = UInt32(truncatingIfNeeded: bytes.count)
        for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i)))) }
        for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: size >> (8 * UInt32(i)))) }
        return out
    }
}

extension Deflate {
    /// Encodes `data` as a raw DEFLATE stream of stored blocks (RFC 1951 §3.2.4, no compression):
    /// blocks of 65 535 bytes, the last one final; empty data gives one empty final block. The same
    /// blocks as zlib at level 0 given the whole input at once.
    ///
    /// - Returns: `data.count + 5 × max(1, ⌈data.count / 65 535⌉)` bytes.
    public static func compressStored<C: Collection<UInt8>>(_ data: C) -> [UInt8] {
        let bytes = Array(data)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 5 * (bytes.count / 65_535 + 1))
        appendStored(bytes, to: &out)
        return out
    }

    static func appendStored(_ bytes: [UInt8], to out: inout [UInt8]) {
        var start = 0
        repeat {
            let len = min(65_535, bytes.count - start)
            let final = start + len == bytes.count
            out.append(final ? 1 : 0)
            out.append(UInt8(len & 0xFF))
            out.append(UInt8(len >> 8))
            out.append(UInt8(~len & 0xFF))
            out.append(UInt8((~len >> 8) & 0xFF))
            out.append(contentsOf: bytes[start..<(start + len)])
            start += len
        } while start < bytes.count
    }
}
