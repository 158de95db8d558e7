// Strict DER (the subset RSA keys need: SEQUENCE, INTEGER, NULL, OBJECT IDENTIFIER, BIT STRING)
// and PEM armour with strict Base64. Everything is rejected that a canonical encoder would not
// produce: long-form lengths below 128 or with leading zero bytes, indefinite lengths, integers with
// redundant leading bytes, trailing bytes.

/// A reader over DER bytes.
struct DERReader {
    let bytes: [UInt8]
    var offset: Int
    let end: Int

    init(_ bytes: [UInt8]) { self.bytes = bytes; offset = 0; end = bytes.count }
    private init(_ bytes: [UInt8], _ start: Int, _ end: Int) { self.bytes = bytes; offset = start; self.end = end }

    var isAtEnd: Bool { offset == end }

    /// Reads one element with tag `tag`; returns a reader over its contents.
    mutating func element(_ tag: UInt8) throws(RampartError) -> DERReader {
        guard offset < end else { throw .invalidDER(.truncated) }
        guard bytes[offset] == tag else { throw .invalidDER(.unexpectedTag) }
        offset += 1
        guard offset < end else { throw .invalidDER(.truncated) }
        let first = bytes[offset]
        offset += 1
        var length: Int
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count != 0 else { throw .invalidDER(.nonMinimalLength) }  // indefinite form
            guard count <= 4 else { throw .invalidDER(.lengthTooLarge) }
            guard end - offset >= count else { throw .invalidDER(.truncated) }
            guard bytes[offset] != 0 else { throw .invalidDER(.nonMinimalLength) }
            length = 0
            for k in 0..<count { length = length << 8 | Int(bytes[offset + k]) }
            offset += count
            guard length >= 0x80 else { throw .invalidDER(.nonMinimalLength) }
        }
        guard end - offset >= length else { throw .invalidDER(.truncated) }
        let inner = DERReader(bytes, offset, offset + length)
        offset += length
        return inner
    }

    /// The remaining bytes.
    var rest: ArraySlice<UInt8> { bytes[offset..<end] }

    /// A positive INTEGER.
    mutating func positiveInteger() throws(RampartError) -> BigUInt {
        let v = try integerBytes()
        guard v.first.map({ $0 & 0x80 == 0 }) ?? false else { throw .invalidDER(.negativeInteger) }
        let value = BigUInt(bigEndian: v)
        guard !value.isZero else { throw .invalidDER(.zeroInteger) }
        return value
    }

    /// A non-negative INTEGER that fits in an Int (versions).
    mutating func smallInteger() throws(RampartError) -> Int {
        let v = try integerBytes()
        guard v.count <= 4, v[v.startIndex] & 0x80 == 0 else { throw .invalidDER(.unsupported) }
        return v.reduce(0) { $0 << 8 | Int($1) }
    }

    /// The content octets of an INTEGER, checked to be minimal.
    private mutating func integerBytes() throws(RampartError) -> ArraySlice<UInt8> {
        let r = try element(0x02)
        let v = r.rest
        guard !v.isEmpty else { throw .invalidDER(.truncated) }
        if v.count > 1 {
            let b0 = v[v.startIndex], b1 = v[v.startIndex + 1]
            if (b0 == 0 && b1 & 0x80 == 0) || (b0 == 0xFF && b1 & 0x80 != 0) { throw .invalidDER(.nonMinimalInteger) }
        }
        return v
    }

    /// Throws unless every byte was consumed.
    func finish() throws(RampartError) {
        guard isAtEnd else { throw .invalidDER(.trailingData) }
    }
}

/// A DER writer (definite minimal lengths).
@_spi(Testing) public enum DERWriter {
    static func length(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        var b: [UInt8] = []
        var v = n
        while v > 0 { b.insert(UInt8(v & 0xFF), at: 0); v >>= 8 }
        return [0x80 | UInt8(b.count)] + b
    }

    /// One element: tag, minimal length, content.
    public static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag] + length(content.count) + content }

    /// A SEQUENCE of the encoded parts.
    public static func sequence(_ parts: [[UInt8]]) -> [UInt8] { element(0x30, parts.flatMap { $0 }) }

    /// A non-negative INTEGER holding a secret: the intermediate bytes are wiped (the returned
    /// encoding is the caller's to wipe).
    static func secretInteger(_ v: BigUInt) -> [UInt8] {
        var raw = v.bigEndianBytes()
        var b = [UInt8]()
        b.reserveCapacity(raw.count + 1)   // no reallocation: no stray copy of the secret
        if raw.isEmpty || raw[0] & 0x80 != 0 { b.append(0) }
        b.append(contentsOf: raw)
        defer { raw.secureWipe(); b.secureWipe() }
        return element(0x02, b)
    }

    /// A SEQUENCE of parts that hold secrets, assembled in one allocation (no stray copies).
    static func secretSequence(_ parts: [[UInt8]]) -> [UInt8] {
        var content = [UInt8]()
        content.reserveCapacity(parts.reduce(0) { $0 + $1.count })
        for p in parts { content.append(contentsOf: p) }
        defer { content.secureWipe() }
        return element(0x30, content)
    }

    /// A non-negative INTEGER.
    public static func integer(_ v: BigUInt) -> [UInt8] {
        var b = v.bigEndianBytes()
        if b.isEmpty || b[0] & 0x80 != 0 { b.insert(0, at: 0) }
        return element(0x02, b)
    }
}

/// PEM armour with strict Base64 bodies.
public enum PEM {
    /// Decodes every PEM block in `text`: its label (`RSA PUBLIC KEY`, `PUBLIC KEY`, ...) and DER.
    ///
    /// Lines may end in LF or CRLF; blank lines and text outside blocks are ignored. The body must be
    /// canonical Base64 (standard alphabet, `=` padding, zero pad bits).
    /// - Throws: ``RampartError/invalidDER(_:)`` with `.invalidPEM` for unmatched armour or bad
    ///   Base64, and when there is no block at all.
    public static func decodeAll(_ text: String) throws(RampartError) -> [(label: String, der: [UInt8])] {
        var out: [(String, [UInt8])] = []
        var label: [UInt8]? = nil
        var body: [UInt8] = []
        let begin = Array("-----BEGIN ".utf8), end = Array("-----END ".utf8), dashes = Array("-----".utf8)
        func hasPrefix(_ l: ArraySlice<UInt8>, _ p: [UInt8]) -> Bool { l.count >= p.count && l.prefix(p.count).elementsEqual(p) }
        for raw in Array(text.utf8).split(separator: 0x0A, omittingEmptySubsequences: false) {
            var line = raw
            if line.last == 0x0D { line = line.dropLast() }
            if let l = label {
                if hasPrefix(line, end) {
                    guard line.elementsEqual(end + l + dashes) else { throw .invalidDER(.invalidPEM) }
                    out.append((String(decoding: l, as: UTF8.self), try base64Decode(body)))
                    label = nil
                    body = []
                } else if hasPrefix(line, dashes) {
                    throw .invalidDER(.invalidPEM)
                } else {
                    body += line
                }
            } else if hasPrefix(line, begin) {
                guard line.count > begin.count + dashes.count, line.suffix(dashes.count).elementsEqual(dashes) else {
                    throw .invalidDER(.invalidPEM)
                }
                label = Array(line.dropFirst(begin.count).dropLast(dashes.count))
            } else if hasPrefix(line, end) {
                throw .invalidDER(.invalidPEM)
            }
        }
        guard label == nil, !out.isEmpty else { throw .invalidDER(.invalidPEM) }
        return out
    }

    /// Wraps DER in PEM armour with 64-character Base64 lines and a final newline.
    public static func encode(label: String, der: [UInt8]) -> String {
        let b64 = base64Encode(der)
        var s = "-----BEGIN \(label)-----\n"
        var i = b64.startIndex
        while i < b64.endIndex {
            let j = b64.index(i, offsetBy: 64, limitedBy: b64.endIndex) ?? b64.endIndex
            s += String(decoding: b64[i..<j], as: UTF8.self) + "\n"
            i = j
        }
        return s + "-----END \(label)-----\n"
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Base64 with padding.
    @_spi(Testing) public static func base64Encode(_ d: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i + 3 <= d.count {
            let v = UInt32(d[i]) << 16 | UInt32(d[i + 1]) << 8 | UInt32(d[i + 2])
            for s in [18, 12, 6, 0] { out.append(alphabet[Int((v >> UInt32(s)) & 63)]) }
            i += 3
        }
        let rem = d.count - i
        if rem > 0 {
            let v = UInt32(d[i]) << 16 | (rem == 2 ? UInt32(d[i + 1]) << 8 : 0)
            out.append(alphabet[Int((v >> 18) & 63)])
            out.append(alphabet[Int((v >> 12) & 63)])
            out.append(rem == 2 ? alphabet[Int((v >> 6) & 63)] : 0x3D)
            out.append(0x3D)
        }
        return out
    }

    static func value(_ c: UInt8) -> UInt32? {
        switch c {
        case 0x41...0x5A: return UInt32(c - 0x41)
        case 0x61...0x7A: return UInt32(c - 0x61 + 26)
        case 0x30...0x39: return UInt32(c - 0x30 + 52)
        case 0x2B: return 62
        case 0x2F: return 63
        default: return nil
        }
    }

    /// Strict Base64: length a multiple of 4, padding only at the end, zero pad bits.
    @_spi(Testing) public static func base64Decode(_ s: [UInt8]) throws(RampartError) -> [UInt8] {
        guard s.count % 4 == 0, !s.isEmpty else { throw .invalidDER(.invalidPEM) }
        var out: [UInt8] = []
        out.reserveCapacity(s.count / 4 * 3)
        var i = 0
        while i < s.count {
            let last = i + 4 == s.count
            let pad = last ? (s[i + 3] == 0x3D ? (s[i + 2] == 0x3D ? 2 : 1) : 0) : 0
            var v: UInt32 = 0
            for k in 0..<4 {
                if k >= 4 - pad { v <<= 6; continue }
                guard let d = value(s[i + k]) else { throw .invalidDER(.invalidPEM) }
                v = v << 6 | d
            }
            out.append(UInt8(v >> 16))
            if pad < 2 { out.append(UInt8((v >> 8) & 0xFF)) }
            if pad < 1 { out.append(UInt8(v & 0xFF)) }
            // Non-canonical: the bits dropped by the padding must be zero.
            if (pad == 1 && v & 0xFF != 0) || (pad == 2 && v & 0xFFFF != 0) { throw .invalidDER(.invalidPEM) }
            i += 4
        }
        return out
    }
}
