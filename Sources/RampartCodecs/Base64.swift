// Base64 (RFC 4648 §4, the standard alphabet with `=` padding), strict, without table lookups or
// branches on the data: Threema Safe backups carry the identity's secret key in Base64.

/// Base64 with the standard alphabet (RFC 4648 §4). Encoding pads with `=`; decoding is strict:
/// no white space, padding required to a multiple of 4 characters, and non-zero bits in the last
/// character's unused part are refused (so every byte string has exactly one accepted encoding).
///
/// Both directions map characters with arithmetic masks, not tables or branches, so secrets (keys in
/// backups) can pass through them; only the length, the padding and whether the text is valid are
/// visible in the timing (decoding stops at the end, not at the first bad character).
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

    /// All ones when `a >= b` (both small non-negative).
    @inline(__always) static func ge(_ a: Int32, _ b: Int32) -> Int32 { ~((a &- b) >> 31) }

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

    /// The 6-bit value of a character, and all ones in `valid` when it is in the alphabet.
    @inline(__always) static func value(_ c: UInt8) -> (value: Int32, valid: Int32) {
        let x = Int32(c)
        let upper = ge(x, 65) & ge(90, x), lower = ge(x, 97) & ge(122, x), digit = ge(x, 48) & ge(57, x)
        let plus = ge(x, 43) & ge(43, x), slash = ge(x, 47) & ge(47, x)
        let v = (upper & (x &- 65)) | (lower & (x &- 71)) | (digit & (x &+ 4)) | (plus & 62) | (slash & 63)
        return (v, upper | lower | digit | plus | slash)
    }

    /// Encodes `bytes`.
    public static func encode<C: Collection<UInt8>>(_ bytes: C) -> String {
        let b = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity((b.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= b.count {
            let v = UInt32(b[i]) << 16 | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2])
            out.append(symbol(v >> 18 & 63)); out.append(symbol(v >> 12 & 63))
            out.append(symbol(v >> 6 & 63)); out.append(symbol(v & 63))
            i += 3
        }
        let rest = b.count - i
        if rest > 0 {
            let v = UInt32(b[i]) << 16 | (rest == 2 ? UInt32(b[i + 1]) << 8 : 0)
            out.append(symbol(v >> 18 & 63))
            out.append(symbol(v >> 12 & 63))
            out.append(rest == 2 ? symbol(v >> 6 & 63) : 0x3D)
            out.append(0x3D)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes strict padded Base64. Output is at most 3/4 of the input length.
    public static func decode(_ string: some StringProtocol) throws(DecodingError) -> [UInt8] {
        let s = Array(string.utf8)
        guard s.count % 4 == 0 else { throw .invalidLength }
        // Padding is a function of the length of what was encoded: public. Only the last two
        // characters may be '=' ("==" or "x=").
        var pad = 0
        if s.count >= 4 {
            let x1 = Int32(s[s.count - 1]), x2 = Int32(s[s.count - 2])
            if declassifiedFlag(ge(x1, 61) & ge(61, x1)) { pad = declassifiedFlag(ge(x2, 61) & ge(61, x2)) ? 2 : 1 }
        }
        var out = [UInt8]()
        out.reserveCapacity(s.count / 4 * 3)
        var invalid: Int32 = 0
        var firstBad = -1
        var i = 0
        while i < s.count {
            let last = i + 4 == s.count
            let symbols = last ? 4 - pad : 4
            var v: UInt32 = 0
            for j in 0..<4 {
                if j < symbols {
                    let (x, ok) = value(s[i + j])
                    invalid |= ~ok
                    if firstBad < 0, declassifiedFlag(~ok) { firstBad = i + j }
                    v = v << 6 | UInt32(bitPattern: x & 63)
                } else {
                    v <<= 6
                }
            }
            out.append(UInt8(truncatingIfNeeded: v >> 16))
            if symbols >= 3 { out.append(UInt8(truncatingIfNeeded: v >> 8)) }
            if symbols == 4 { out.append(UInt8(truncatingIfNeeded: v)) }
            if last && pad > 0 {
                // The bits below the last byte must be zero (canonical form).
                let spare = pad == 2 ? v & 0xFFFF : v & 0xFF
                if declassifiedFlag(Int32(bitPattern: spare) | -Int32(bitPattern: spare)) {
                    for k in out.indices { out[k] = 0 }
                    throw .nonCanonical
                }
            }
            i += 4
        }
        if declassifiedFlag(invalid) || firstBad >= 0 {
            for k in out.indices { out[k] = 0 }
            throw .invalidCharacter(offset: max(firstBad, 0))
        }
        return out
    }

    /// Whether a mask is non-zero, as a public bit (the outcome of validity checks is public).
    @inline(__always) static func declassifiedFlag(_ mask: Int32) -> Bool { CodecsCT.flag(UInt32(bitPattern: mask)) }
}
