/// Hexadecimal test input to bytes: upper or lower case, ASCII whitespace ignored (so long vectors
/// can be wrapped). Traps on any other character or an odd number of digits: a typo in a test
/// vector must fail loudly, never decode to something else (or to nothing).
public func hexBytes(_ text: some StringProtocol) -> [UInt8] {
    let digits = text.utf8.filter { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
    precondition(digits.count % 2 == 0, "hexBytes: odd number of hex digits in \(text.prefix(80))")
    func value(_ c: UInt8) -> UInt8 {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: preconditionFailure("hexBytes: not a hex digit (\(c)) in \(text.prefix(80))")
        }
    }
    var out: [UInt8] = []
    out.reserveCapacity(digits.count / 2)
    var i = 0
    while i < digits.count {
        out.append(value(digits[i]) << 4 | value(digits[i + 1]))
        i += 2
    }
    return out
}

/// Bytes to lower-case hexadecimal.
public func hexString(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}
