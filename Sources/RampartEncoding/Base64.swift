// Base64 (RFC 4648 §4, the standard alphabet with `=` padding), strict, without table lookups or
// branches on the data: Threema Safe backups carry the identity's secret key in Base64, and PEM
// armour (Rampart's `PEM`) carries RSA private keys in it. The package's one Base64.

/// Base64 with the standard alphabet (RFC 4648 §4). Encoding pads with `=`; decoding is strict:
/// no white space, padding required to a multiple of 4 characters, and non-zero bits in the last
/// character's unused part are refused (so every byte string has exactly one accepted encoding).
///
/// Both directions map characters with arithmetic masks, not tables or branches, so secrets (keys in
/// backups and in PEM) can pass through them. Only the length, the padding (a function of the
/// decoded length) and whether the text is valid show in the timing: decoding gathers the validity
/// of every character and the pad bits in masks and looks at them once, at the end (and an error
/// then names the first bad character, found without a branch as well).
public enum Base64 {
    /// An error from decoding Base64.
    public enum DecodingError: Error, Equatable, Sendable {
        /// The length is not a multiple of 4.
        case invalidLength
        /// A character outside the alphabet, or `=` anywhere but at the end. The offset is that of
        /// the first such character.
        case invalidCharacter(offset: Int)
        /// The bits after the last byte are not zero.
        case nonCanonical
    }

    /// All ones when `a >= b` (both small non-negative), without a branch.
    @inline(__always) static func ge(_ a: Int32, _ b: Int32) -> Int32 { ~((a &- b) >> 31) }

    /// All ones when `a == b` (both small non-negative), without a branch.
    @inline(__always) static func eq(_ a: Int32, _ b: Int32) -> Int32 { ge(a, b) & ge(b, a) }

    /// The character for a 6-bit value.
    @inline(__always) static func symbol(_ v: UInt32) -> UInt8 {
        let x = Int32(v)
        var d: Int32 = 65                 // 'A' + v for 0...25
        d &+= ge(x, 26) & 6               // 'a' + (v - 26)
        d &-= ge(x, 52) & 75              // '0' + (v - 52)
        d &-= ge(x, 62) & 15              // '+'
        d &+= ge(x, 63) & 3               // '/'
        // The mask keeps bit 7 a known zero, so that String's ASCII check does not depend on the data.
        return UInt8(truncatingIfNeeded: x &+ d) & 0x7F
    }

    /// The 6-bit value of a character, and all ones in `valid` when it is in the alphabet (`=` is
    /// not: padding is recognised by position). Five range tests combined with masks.
    @inline(__always) static func value(_ c: UInt8) -> (value: Int32, valid: Int32) {
        let x = Int32(c)
        let upper = ge(x, 65) & ge(90, x), lower = ge(x, 97) & ge(122, x), digit = ge(x, 48) & ge(57, x)
        let plus = eq(x, 43), slash = eq(x, 47)
        let v = (upper & (x &- 65)) | (lower & (x &- 71)) | (digit & (x &+ 4)) | (plus & 62) | (slash & 63)
        return (v, upper | lower | digit | plus | slash)
    }

    // MARK: Encoding

    /// Encodes `bytes`.
    public static func encode<C: Collection<UInt8>>(_ bytes: C) -> String {
        String(decoding: encodedBytes(bytes), as: UTF8.self)
    }

    /// Encodes `bytes` as the ASCII bytes of the Base64 text (for callers that frame it further,
    /// such as PEM's 64-character lines). The input is read in place when it is contiguous (no copy
    /// of a secret is left behind).
    public static func encodedBytes<C: Collection<UInt8>>(_ bytes: C) -> [UInt8] {
        if let out = bytes.withContiguousStorageIfAvailable({ encodedBytes(UnsafeRawBufferPointer($0)) }) { return out }
        var copy = Array(bytes)
        defer { zero(&copy) }
        return copy.withUnsafeBytes { encodedBytes($0) }
    }

    /// Encodes the bytes in `b`.
    static func encodedBytes(_ b: UnsafeRawBufferPointer) -> [UInt8] {
        let n = b.count, full = n / 3, rest = n - 3 * full
        // Not through unsafeUninitializedCapacity when empty: that would store a count into the
        // standard library's shared empty-array storage, a data race ThreadSanitizer reports when
        // two threads encode nothing at once.
        guard n > 0 else { return [] }
        let length = (n + 2) / 3 * 4
        return [UInt8](unsafeUninitializedCapacity: length) { out, initialized in
            var o = 0
            for k in 0..<full {
                let i = 3 * k
                let v = UInt32(b[i]) << 16 | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2])
                out[o] = symbol(v >> 18 & 63); out[o + 1] = symbol(v >> 12 & 63)
                out[o + 2] = symbol(v >> 6 & 63); out[o + 3] = symbol(v & 63)
                o += 4
            }
            // The length (public) decides the padding.
            if rest > 0 {
                let i = 3 * full
                let v = UInt32(b[i]) << 16 | (rest == 2 ? UInt32(b[i + 1]) << 8 : 0)
                out[o] = symbol(v >> 18 & 63)
                out[o + 1] = symbol(v >> 12 & 63)
                out[o + 2] = rest == 2 ? symbol(v >> 6 & 63) : 0x3D
                out[o + 3] = 0x3D
            }
            initialized = length
        }
    }

    // MARK: Decoding

    /// Decodes strict padded Base64. Output is at most 3/4 of the input length.
    public static func decode(_ string: some StringProtocol) throws(DecodingError) -> [UInt8] {
        try decode(bytes: string.utf8)
    }

    /// Decodes strict padded Base64 given as the bytes of its (ASCII) text. The text is read in
    /// place when it is contiguous.
    public static func decode<C: Collection<UInt8>>(bytes text: C) throws(DecodingError) -> [UInt8] {
        let result: Result<[UInt8], DecodingError>
        if let r = text.withContiguousStorageIfAvailable({ decodeResult(UnsafeRawBufferPointer($0)) }) {
            result = r
        } else {
            var copy = Array(text)
            defer { zero(&copy) }
            result = copy.withUnsafeBytes { decodeResult($0) }
        }
        return try result.get()
    }

    static func decodeResult(_ s: UnsafeRawBufferPointer) -> Result<[UInt8], DecodingError> {
        let n = s.count
        guard n % 4 == 0 else { return .failure(.invalidLength) }
        guard n > 0 else { return .success([]) }
        // Public by design: the number of `=` at the end (0, 1 or 2) is a function of the decoded
        // length. Only the last two characters may be '=' ("==" or "x="): two masks, one declassified
        // count.
        let pad1 = eq(Int32(s[n - 1]), 61), pad2 = pad1 & eq(Int32(s[n - 2]), 61)
        let pad = Int(CodecsCT.declassified((pad1 & 1) &+ (pad2 & 1)))
        let quanta = n / 4
        let length = 3 * quanta - pad
        // Every character's validity goes into `invalid` and the offset of the first bad one into
        // `firstBad` (a masked select: no branch on which characters are bad).
        var invalid: Int32 = 0
        var firstBad: Int64 = 0
        var seenBad: Int64 = 0
        @inline(__always) func symbolValue(_ at: Int) -> UInt32 {
            let (x, ok) = value(s[at])
            let bad = Int64(~ok)                 // all ones for a bad character (sign-extended)
            invalid |= ~ok
            firstBad = firstBad ^ (bad & ~seenBad & (Int64(at) ^ firstBad))
            seenBad |= bad
            return UInt32(bitPattern: x & 63)
        }
        var spare: UInt32 = 0
        var out = [UInt8](unsafeUninitializedCapacity: length) { out, initialized in
            var o = 0
            for k in 0..<(quanta - 1) {
                let i = 4 * k
                let v = symbolValue(i) << 18 | symbolValue(i + 1) << 12 | symbolValue(i + 2) << 6 | symbolValue(i + 3)
                out[o] = UInt8(truncatingIfNeeded: v >> 16)
                out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                out[o + 2] = UInt8(truncatingIfNeeded: v)
                o += 3
            }
            // The last quantum: 4 − pad symbols (pad is public), the rest '=' (checked above).
            let i = 4 * (quanta - 1)
            var v = symbolValue(i) << 18 | symbolValue(i + 1) << 12
            if pad < 2 { v |= symbolValue(i + 2) << 6 }
            if pad < 1 { v |= symbolValue(i + 3) }
            out[o] = UInt8(truncatingIfNeeded: v >> 16)
            if pad < 2 { out[o + 1] = UInt8(truncatingIfNeeded: v >> 8) }
            if pad < 1 { out[o + 2] = UInt8(truncatingIfNeeded: v) }
            // Canonical form: the bits below the last byte must be zero (gathered, not tested here).
            spare = pad == 2 ? v & 0xFFFF : pad == 1 ? v & 0xFF : 0
            initialized = length
        }
        // Public by design: whether the text is valid, and if not, the error (non-canonical pad bits
        // first, as before; otherwise the first bad character's offset). One declassified status for
        // the whole text.
        let nonCanonical = Int32(bitPattern: spare) | -Int32(bitPattern: spare)   // sign bit: spare ≠ 0
        let status = CodecsCT.declassified(UInt32(bitPattern: (nonCanonical >> 31) & 2 | (invalid & 1)))
        if status == 0 { return .success(out) }
        zero(&out)
        if status & 2 != 0 { return .failure(.nonCanonical) }
        return .failure(.invalidCharacter(offset: Int(CodecsCT.declassified(firstBad))))
    }

    /// Overwrites `a` with zeros (a decoded secret that is not returned, a copy of the input).
    static func zero(_ a: inout [UInt8]) {
        a.withUnsafeMutableBytes { CodecsCT.wipe($0) }
    }
}
