// Hexadecimal encoding and decoding.

/// Lowercase hexadecimal encoding and strict decoding.
///
/// Decoding is variable-time in the input's *validity* (it stops at the first bad character) but
/// uses no table indexed by the data, so decoding a secret leaks nothing beyond its length.
public enum Hex {
    /// Encodes bytes as lowercase hexadecimal.
    public static func encode<C: Collection<UInt8>>(_ bytes: C) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digit(b >> 4))
            out.append(digit(b & 0x0f))
        }
        return String(decoding: out, as: UTF8.self)
    }

    @inline(__always)
    static func digit(_ v: UInt8) -> UInt8 {
        // '0' + v, plus 39 more ('a' - '0' - 10) when v > 9, computed with a mask.
        let gt9 = UInt8(truncatingIfNeeded: (Int16(9) - Int16(v)) >> 8)  // 0xff when v > 9
        return 0x30 &+ v &+ (gt9 & 39)
    }

    /// Decodes hexadecimal (upper or lower case). Whitespace is not accepted.
    ///
    /// - Throws: ``RampartError/invalidEncoding`` for an odd length or a non-hex character.
    public static func decode(_ string: some StringProtocol) throws(RampartError) -> [UInt8] {
        var utf8 = Array(string.utf8)
        defer { utf8.secureWipe() }
        guard utf8.count % 2 == 0 else { throw .invalidEncoding }
        var out = [UInt8](repeating: 0, count: utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let hi = value(utf8[i]), let lo = value(utf8[i + 1]) else {
                out.secureWipe()
                throw .invalidEncoding
            }
            out[i / 2] = hi << 4 | lo
            i += 2
        }
        return out
    }

    @inline(__always)
    static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c &- 0x30
        case 0x61...0x66: return c &- 0x61 &+ 10
        case 0x41...0x46: return c &- 0x41 &+ 10
        default: return nil
        }
    }
}
