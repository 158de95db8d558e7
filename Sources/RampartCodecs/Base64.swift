// Base64 (RFC 4648 §4, the standard alphabet with `=` padding), strict.

/// Base64 with the standard alphabet (RFC 4648 §4). Encoding pads with `=`; decoding is strict:
/// no white space, padding required to a multiple of 4 characters, and non-zero bits in the last
/// character's unused part are refused (so every byte string has exactly one accepted encoding).
public enum Base64 {
    /// An error from decoding Base64.
    public enum DecodingError: Error, Equatable, Sendable {
        /// The length is not a multiple of 4.
        case invalidLength
        /// A character outside the alphabet, or `=` anywhere but at the end.
        case invalidCharacter(offset: Int)
        /// The bits after the last byte are not zero.
        case nonCanonical
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Encodes `bytes`.
    public static func encode<C: Collection<UInt8>>(_ bytes: C) -> String {
        let b = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity((b.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= b.count {
            let v = UInt32(b[i]) << 16 | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2])
            for s in [18, 12, 6, 0] { out.append(alphabet[Int(v >> UInt32(s)) & 63]) }
            i += 3
        }
        let rest = b.count - i
        if rest > 0 {
            let v = UInt32(b[i]) << 16 | (rest == 2 ? UInt32(b[i + 1]) << 8 : 0)
            out.append(alphabet[Int(v >> 18) & 63])
            out.append(alphabet[Int(v >> 12) & 63])
            out.append(rest == 2 ? alphabet[Int(v >> 6) & 63] : 0x3D)
            out.append(0x3D)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes strict padded Base64. Output is at most 3/4 of the input length.
    public static func decode(_ string: some StringProtocol) throws(DecodingError) -> [UInt8] {
        let s = Array(string.utf8)
        guard s.count % 4 == 0 else { throw .invalidLength }
        var out = [UInt8]()
        out.reserveCapacity(s.count / 4 * 3)
        var i = 0
        while i < s.count {
            let last = i + 4 == s.count
            var v: UInt32 = 0
            var pad = 0
            for j in 0..<4 {
                let c = s[i + j]
                if c == 0x3D, last, j >= 2, (j == 3 || s[i + 3] == 0x3D) {
                    pad += 1
                    v <<= 6
                    continue
                }
                guard pad == 0, let d = value(c) else { throw .invalidCharacter(offset: i + j) }
                v = v << 6 | UInt32(d)
            }
            out.append(UInt8(truncatingIfNeeded: v >> 16))
            if pad < 2 { out.append(UInt8(truncatingIfNeeded: v >> 8)) }
            if pad < 1 { out.append(UInt8(truncatingIfNeeded: v)) }
            if pad == 2, v & 0xFFFF != 0 { throw .nonCanonical }
            if pad == 1, v & 0xFF != 0 { throw .nonCanonical }
            i += 4
        }
        return out
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x41...0x5A: c - 0x41
        case 0x61...0x7A: c - 0x61 + 26
        case 0x30...0x39: c - 0x30 + 52
        case 0x2B: 62
        case 0x2F: 63
        default: nil
        }
    }
}
