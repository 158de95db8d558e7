// Base32 (RFC 4648 §6): the alphabet A–Z 2–7, five bytes to eight symbols, written without padding.
// Threema identity backups are Base32 in groups of four separated by dashes; the lenient decoder
// accepts what users type back (lower case, spaces, dashes, line breaks).

/// An error from decoding Base32. The decoder never traps on any input.
public enum Base32Error: Error, Equatable, Sendable {
    /// A byte at this UTF-8 offset of the text is not in the alphabet (nor, in lenient mode, a
    /// separator). `=` padding is refused in both modes.
    case invalidCharacter(offset: Int)
    /// The number of symbols leaves 1, 3 or 6 symbols in the last group: no byte string encodes so.
    case invalidLength(symbols: Int)
    /// The last symbol carries bits past the final byte that are not zero (a non-canonical encoding).
    case nonZeroTrailingBits
}

/// Base32 (RFC 4648 §6) without padding.
///
/// ```swift
/// Base32.encode(Array("foobar".utf8))                 // "MZXW6YTBOI"
/// try Base32.decode("mzxw-6ytb oi", mode: .lenient)    // "foobar"
/// ```
///
/// Memory: the output is 5/8 of the symbols (decoding) or 8/5 of the bytes (encoding), nothing more.
public enum Base32 {
    /// How strictly ``decode(_:mode:)`` reads its text.
    public enum Mode: Sendable {
        /// Upper-case alphabet symbols only: no padding, no separators, no lower case.
        case strict
        /// Case-insensitive, and spaces, tabs, dashes, CR and LF anywhere are skipped (Threema ID
        /// backups as users copy them). Padding is still refused.
        case lenient
    }

    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// The Base32 text of `data`, upper case, without padding: ⌈8n / 5⌉ symbols.
    public static func encode<C: Collection<UInt8>>(_ data: C) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((data.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in data {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes Base32 text.
    ///
    /// - Parameters:
    ///   - text: the symbols (not mutated).
    ///   - mode: ``Mode/strict`` (the default) or ``Mode/lenient``.
    /// - Returns: the bytes, 5/8 of the number of symbols (rounded down).
    /// - Throws: ``Base32Error``: a character outside the alphabet (with its UTF-8 offset), an
    ///   impossible number of symbols, or non-zero bits after the last byte.
    public static func decode<S: StringProtocol>(_ text: S, mode: Mode = .strict) throws(Base32Error) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 5 / 8)
        var buffer: UInt32 = 0
        var bits = 0
        var symbols = 0
        for (offset, c) in text.utf8.enumerated() {
            let value: UInt8
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = c - UInt8(ascii: "A")
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = c - UInt8(ascii: "2") + 26
            case UInt8(ascii: "a")...UInt8(ascii: "z") where mode == .lenient: value = c - UInt8(ascii: "a")
            case UInt8(ascii: " "), UInt8(ascii: "-"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                // (A `where` clause would bind to the last pattern only: test the mode here.)
                guard mode == .lenient else { throw .invalidCharacter(offset: offset) }
                continue
            default:
                throw .invalidCharacter(offset: offset)
            }
            symbols += 1
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        // Unpadded lengths mod 8: 0, 2 (1 byte), 4 (2), 5 (3), 7 (4). 1, 3 and 6 are impossible.
        switch symbols % 8 {
        case 1, 3, 6: throw .invalidLength(symbols: symbols)
        default: break
        }
        guard buffer == 0 else { throw .nonZeroTrailingBits }
        return out
    }
}
