// zlib (RFC 1950): a two-byte header, a DEFLATE stream and the Adler-32 of the data, big-endian.
// Preset dictionaries (FDICT) are refused: neither Threema nor MTProto uses them.

/// zlib (RFC 1950) streams.
///
/// Memory and time bounds are those of ``Deflate``.
public enum Zlib {
    /// Decodes a complete zlib stream.
    ///
    /// - Parameters:
    ///   - data: the zlib bytes (not mutated).
    ///   - maxOutputBytes: the most decompressed bytes accepted (``DeflateError/outputLimitExceeded(_:)``
    ///     beyond, raised before the excess is produced).
    /// - Returns: the decompressed data.
    /// - Throws: ``DeflateError``: ``DeflateError/invalidHeader`` (check bits), ``DeflateError/unsupportedMethod``
    ///   (CM ≠ 8 or a window over 32 KiB), ``DeflateError/unsupportedFlags`` (FDICT), a bad DEFLATE
    ///   stream, ``DeflateError/checksumMismatch`` (Adler-32), ``DeflateError/trailingData``.
    public static func decompress<C: Collection<UInt8>>(_ data: C, maxOutputBytes: Int) throws(DeflateError) -> [UInt8] {
        try withBytes(data) { (p) -> Result<[UInt8], DeflateError> in
            let n = p.count
            guard n >= 2 else { return .failure(.truncated) }
            let cmf = p[0], flg = p[1]
            guard (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0 else { return .failure(.invalidHeader) }
            guard cmf & 0x0F == 8, cmf >> 4 <= 7 else { return .failure(.unsupportedMethod) }
            guard flg & 0x20 == 0 else { return .failure(.unsupportedFlags) }
            let body = Deflate.inflate(p, from: 2, maxOutputBytes: maxOutputBytes)
            guard case .success(let (out, end, _)) = body else {
                if case .failure(let e) = body { return .failure(e) }
                return .failure(.truncated)
            }
            guard n - end >= 4 else { return .failure(.truncated) }
            let expected = UInt32(p[end]) << 24 | UInt32(p[end + 1]) << 16 | UInt32(p[end + 2]) << 8 | UInt32(p[end + 3])
            guard Adler32.checksum(data: out) == expected else { return .failure(.checksumMismatch) }
            guard end + 4 == n else { return .failure(.trailingData) }
            return .success(out)
        }.get()
    }

    /// Writes `data` as a zlib stream of stored blocks, as zlib's `compress2(…, level 0)` does:
    /// header `78 01`, the blocks of ``Deflate/compressStored(_:)``, the Adler-32 big-endian.
    public static func compressStored<C: Collection<UInt8>>(_ data: C) -> [UInt8] {
        let bytes = Array(data)
        var out: [UInt8] = [0x78, 0x01]
        out.reserveCapacity(bytes.count + 6 + 5 * (bytes.count / 65_535 + 1))
        Deflate.appendStored(bytes, to: &out)
        let a = Adler32.checksum(data: bytes)
        for i in (0..<4).reversed() { out.append(UInt8(truncatingIfNeeded: a >> (8 * UInt32(i)))) }
        return out
    }
}

/// The Adler-32 checksum of RFC 1950 §8.2 (zlib's `adler32`), incremental or one-shot. Like CRC-32,
/// an error-detecting code and not a cryptographic one.
public struct Adler32: Sendable, Hashable {
    private var a: UInt32 = 1
    private var b: UInt32 = 0

    /// A new checksum over no data (value 1).
    public init() {}

    /// Adds bytes.
    public mutating func update<D: Collection<UInt8>>(data: D) {
        // 5552 is the most bytes for which b cannot overflow 32 bits before the reduction (zlib's NMAX).
        var pending = 0
        for byte in data {
            a &+= UInt32(byte)
            b &+= a
            pending += 1
            if pending == 5552 {
                a %= 65_521
                b %= 65_521
                pending = 0
            }
        }
        a %= 65_521
        b %= 65_521
    }

    /// The Adler-32 of all bytes added so far.
    public func finalize() -> UInt32 { b << 16 | a }

    /// The Adler-32 of `data` in one call.
    public static func checksum<D: Collection<UInt8>>(data: D) -> UInt32 {
        var c = Adler32()
        c.update(data: data)
        return c.finalize()
    }
}
