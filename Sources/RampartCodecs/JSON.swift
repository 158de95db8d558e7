// JSON (RFC 8259), strictly: one value with optional whitespace around it; no comments, no trailing
// commas, no leading zeros, no NaN or Infinity, no byte order mark; strings must be valid UTF-8 with
// every control character escaped, and \u escapes must pair surrogates; an object may not repeat a key
// (compared byte for byte, after unescaping). Numbers keep their exact text, so nothing is rounded
// on the way through. Threema Safe backups are JSON (gzip'd).
//
// Untrusted input: the parser checks the input size first, then reads each byte once (recursive
// descent, nesting bounded by `maxDepth`), never traps, and never mutates its input.

import RampartEncoding   // CodecsCT: the masks and the declassification hook of the string writer

/// An error from parsing JSON: what went wrong and the byte offset in the input where it was found.
public struct JSONError: Error, Equatable, Sendable {
    /// What went wrong.
    public enum Kind: Equatable, Sendable {
        /// The input ends inside a value (or is empty).
        case unexpectedEnd
        /// A byte that cannot appear here (a comment, a trailing comma, a bare word, a second value, …).
        case unexpectedByte(UInt8)
        /// A number that breaks RFC 8259's grammar (leading zero, missing digits, `+` sign, …).
        case invalidNumber
        /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`, or bad hex digits.
        case invalidEscape
        /// A `\u` escape for a surrogate that is not part of a high–low pair.
        case loneSurrogate
        /// A string contains bytes that are not well-formed UTF-8.
        case invalidUTF8
        /// A string contains an unescaped control character (U+0000 … U+001F).
        case controlCharacter
        /// An object repeats this key.
        case duplicateKey(String)
        /// Arrays and objects nest deeper than `maxDepth`.
        case tooDeep
        /// The input is longer than `maxInputBytes` (offset 0).
        case tooLarge
    }

    /// What went wrong.
    public let kind: Kind
    /// The byte offset in the input where the problem was found.
    public let offset: Int

    /// An error of `kind` at `offset`.
    public init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }
}

/// A JSON number, kept as its exact text (as it appeared in the input, or as written by an
/// initializer), with integer and floating-point readings.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's text, valid per RFC 8259 (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    public let text: String

    /// A number from its text, or `nil` when the text is not an RFC 8259 number.
    public init?(text: String) {
        let bytes = Array(text.utf8)
        let (end, valid) = bytes.withUnsafeBufferPointer { JSONNumber.scan($0, 0) }
        guard valid, end == bytes.count else { return nil }
        self.text = text
    }

    /// The number written in decimal.
    public init(_ value: Int64) { text = String(value) }

    /// The number in Swift's shortest round-trip form, or `nil` for NaN and the infinities (JSON
    /// has none).
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        // Swift prints integral values as "1.0" and large ones as "1e+20": both are valid JSON.
        text = "\(value)"
    }

    init(validated text: String) { self.text = text }

    /// The value as an `Int64` when the text is an integer (no fraction, no exponent) in range.
    public var int64: Int64? {
        guard !text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }) else { return nil }
        return Int64(text)
    }

    /// The nearest `Double`, or `nil` when the magnitude is beyond `Double`'s range.
    public var double: Double? {
        guard let d = Double(text), d.isFinite else { return nil }
        return d
    }

    /// The text.
    public var description: String { text }

    /// Scans the number starting at `start`: its end offset and `true`, or the offset of the byte
    /// that breaks RFC 8259's grammar (possibly the end of the input) and `false`.
    static func scan(_ p: UnsafeBufferPointer<UInt8>, _ start: Int) -> (offset: Int, valid: Bool) {
        var i = start
        func isDigit(_ k: Int) -> Bool { k < p.count && p[k] >= 0x30 && p[k] <= 0x39 }
        func byte(_ k: Int) -> UInt8? { k < p.count ? p[k] : nil }
        if byte(i) == UInt8(ascii: "-") { i += 1 }
        if byte(i) == UInt8(ascii: "0") {
            i += 1
            if isDigit(i) { return (i, false) }                // leading zero
        } else if isDigit(i) {
            while isDigit(i) { i += 1 }
        } else {
            return (i, false)
        }
        if byte(i) == UInt8(ascii: ".") {
            i += 1
            guard isDigit(i) else { return (i, false) }
            while isDigit(i) { i += 1 }
        }
        if let e = byte(i), e | 0x20 == UInt8(ascii: "e") {
            i += 1
            if byte(i) == UInt8(ascii: "+") || byte(i) == UInt8(ascii: "-") { i += 1 }
            guard isDigit(i) else { return (i, false) }
            while isDigit(i) { i += 1 }
        }
        return (i, true)
    }
}

/// One member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    /// The member's name.
    public var key: String
    /// The member's value.
    public var value: JSONValue

    /// A member.
    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// A JSON value. Objects keep their members in order (and never repeat a key when parsed).
///
/// ```swift
/// let v = try JSONValue(parsing: Array(#"{"id":"ECHOECHO","n":[1,2.5]}"#.utf8))
/// v["id"]?.string                     // "ECHOECHO"
/// v["n"]?[1]?.number?.double          // 2.5
/// v.serializedString                  // the same text back, compact
/// ```
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its exact text.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, its members in order.
    case object([JSONMember])

    /// The default nesting limit of arrays and objects.
    public static let defaultMaxDepth = 64
    /// The default input size limit (16 MiB).
    public static let defaultMaxInputBytes = 16 << 20

    /// Parses one JSON text (RFC 8259), strictly.
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 JSON text (not mutated).
    ///   - maxDepth: the most arrays and objects that may enclose one another (a top-level array
    ///     is depth 1).
    ///   - maxInputBytes: longer inputs are refused before any parsing (``JSONError/Kind/tooLarge``).
    /// - Throws: ``JSONError`` with the byte offset of the first problem.
    ///
    /// Memory and time are linear in the input, which `maxInputBytes` bounds: every value, member
    /// and string takes at least one input byte, and each costs a few tens of bytes at most. Each
    /// level of nesting takes one stack frame of the recursive parser, so keep `maxDepth` modest
    /// (the default, 64, is plenty for Threema's and MTProto's documents).
    public init<C: Collection<UInt8>>(parsing bytes: C, maxDepth: Int = JSONValue.defaultMaxDepth,
                                      maxInputBytes: Int = JSONValue.defaultMaxInputBytes) throws(JSONError) {
        guard bytes.count <= maxInputBytes else { throw JSONError(.tooLarge, at: 0) }
        let result = withBytes(bytes) { (p) -> Result<JSONValue, JSONError> in
            var parser = JSONParser(input: p, maxDepth: maxDepth)
            do throws(JSONError) {
                return .success(try parser.document())
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    /// Parses a JSON text given as a `String` (its UTF-8), as ``init(parsing:maxDepth:maxInputBytes:)``.
    public init(parsing text: String, maxDepth: Int = JSONValue.defaultMaxDepth,
                maxInputBytes: Int = JSONValue.defaultMaxInputBytes) throws(JSONError) {
        try self.init(parsing: Array(text.utf8), maxDepth: maxDepth, maxInputBytes: maxInputBytes)
    }

    // MARK: Accessors

    /// The member named `key` of an object (the first, though parsed objects have no duplicates),
    /// or `nil` for a missing key or a non-object. Keys are compared byte for byte.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.key.utf8.elementsEqual(key.utf8) })?.value
    }

    /// The element at `index` of an array, or `nil` when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string, or `nil` for other values.
    public var string: String? { if case .string(let s) = self { s } else { nil } }
    /// The bool, or `nil` for other values.
    public var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    /// The number, or `nil` for other values.
    public var number: JSONNumber? { if case .number(let n) = self { n } else { nil } }
    /// The elements, or `nil` for other values.
    public var array: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    /// The members in order, or `nil` for other values.
    public var object: [JSONMember]? { if case .object(let o) = self { o } else { nil } }
    /// Whether the value is `null`.
    public var isNull: Bool { self == .null }

    // MARK: Writing

    /// The compact JSON text of the value, as UTF-8: no whitespace, members in their order, numbers
    /// as their text, strings escaped per RFC 8259 (`\"`, `\\`, `\b \f \n \r \t`, other control
    /// characters as `\u00XX`; everything else, `/` and non-ASCII included, as is). Deterministic:
    /// equal values (with equal member order) give equal bytes.
    ///
    /// Objects built in code may repeat a key; they are written as they are.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    /// ``serialized()`` as a `String`.
    public var serializedString: String { String(decoding: serialized(), as: UTF8.self) }

    private func write(to out: inout [UInt8]) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .number(let n): out += Array(n.text.utf8)
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, e) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                e.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, m) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(m.key, to: &out)
                out.append(UInt8(ascii: ":"))
                m.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ s: String, to out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        // Strings may hold secrets (a Threema Safe backup's Base64 key): find out without branching
        // on the bytes whether any needs escaping, and copy the common case in one piece.
        var needs: UInt32 = 0
        for b in s.utf8 {
            needs |= CodecsCT.lessMask(b, 0x20) | CodecsCT.equalMask(b, 0x22) | CodecsCT.equalMask(b, 0x5C)
        }
        if !CodecsCT.flag(needs) {
            out.append(contentsOf: s.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: out += Array("\\u00".utf8) + [hex[Int(b >> 4)], hex[Int(b & 15)]]
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

// MARK: - The parser

/// Recursive descent over the input bytes; `depth` counts the open arrays and objects.
struct JSONParser {
    let input: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var i = 0
    var depth = 0

    init(input: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.input = input
        self.maxDepth = maxDepth
    }

    func fail(_ kind: JSONError.Kind, _ offset: Int) -> JSONError { JSONError(kind, at: offset) }

    mutating func skipWhitespace() {
        while i < input.count {
            switch input[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    mutating func document() throws(JSONError) -> JSONValue {
        skipWhitespace()
        let v = try value()
        skipWhitespace()
        guard i == input.count else { throw fail(.unexpectedByte(input[i]), i) }
        return v
    }

    /// The byte at `i`, or the end-of-input error.
    func peek() throws(JSONError) -> UInt8 {
        guard i < input.count else { throw fail(.unexpectedEnd, i) }
        return input[i]
    }

    mutating func value() throws(JSONError) -> JSONValue {
        let b = try peek()
        switch b {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw fail(.unexpectedByte(b), i)
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONError) {
        let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for k in 0..<w.count {
            guard i < input.count else { throw fail(.unexpectedEnd, i) }
            guard input[i] == w[k] else { throw fail(.unexpectedByte(input[i]), i) }
            i += 1
        }
    }

    mutating func number() throws(JSONError) -> JSONNumber {
        let start = i
        let (end, valid) = JSONNumber.scan(input, start)
        guard valid else { throw fail(end < input.count ? .invalidNumber : .unexpectedEnd, end) }
        i = end
        return JSONNumber(validated: String(decoding: UnsafeBufferPointer(rebasing: input[start..<end]), as: UTF8.self))
    }

    mutating func enter() throws(JSONError) {
        depth += 1
        guard depth <= maxDepth else { throw fail(.tooDeep, i) }
    }

    mutating func array() throws(JSONError) -> JSONValue {
        try enter()
        i += 1                                                  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            i += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value())
            skipWhitespace()
            let b = try peek()
            i += 1
            if b == UInt8(ascii: "]") { break }
            guard b == UInt8(ascii: ",") else { throw fail(.unexpectedByte(b), i - 1) }
        }
        depth -= 1
        return .array(elements)
    }

    mutating func object() throws(JSONError) -> JSONValue {
        try enter()
        i += 1                                                  // {
        var members: [JSONMember] = []
        var keys = Set<[UInt8]>()
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            i += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            let keyOffset = i
            let b = try peek()
            guard b == UInt8(ascii: "\"") else { throw fail(.unexpectedByte(b), i) }
            let key = try string()
            guard keys.insert(Array(key.utf8)).inserted else { throw fail(.duplicateKey(key), keyOffset) }
            skipWhitespace()
            let colon = try peek()
            guard colon == UInt8(ascii: ":") else { throw fail(.unexpectedByte(colon), i) }
            i += 1
            skipWhitespace()
            members.append(JSONMember(key, try value()))
            skipWhitespace()
            let next = try peek()
            i += 1
            if next == UInt8(ascii: "}") { break }
            guard next == UInt8(ascii: ",") else { throw fail(.unexpectedByte(next), i - 1) }
        }
        depth -= 1
        return .object(members)
    }

    /// Four hex digits at `i`.
    mutating func hex4() throws(JSONError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard i < input.count else { throw fail(.unexpectedEnd, i) }
            let c = input[i]
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default: throw fail(.invalidEscape, i)
            }
            v = v << 4 | UInt32(d)
            i += 1
        }
        return v
    }

    /// A string at `i` (which holds the opening quote), unescaped.
    mutating func string() throws(JSONError) -> String {
        i += 1
        var out: [UInt8] = []
        while true {
            guard i < input.count else { throw fail(.unexpectedEnd, i) }
            let b = input[i]
            switch b {
            case UInt8(ascii: "\""):
                i += 1
                return String(decoding: out, as: UTF8.self)   // validated byte by byte below
            case UInt8(ascii: "\\"):
                let escapeStart = i
                i += 1
                guard i < input.count else { throw fail(.unexpectedEnd, i) }
                let e = input[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        // A high surrogate must be followed by \u and a low surrogate.
                        guard i + 1 < input.count, input[i] == UInt8(ascii: "\\"), input[i + 1] == UInt8(ascii: "u")
                        else { throw fail(.loneSurrogate, escapeStart) }
                        i += 2
                        let low = try hex4()
                        guard low >= 0xDC00 && low < 0xE000 else { throw fail(.loneSurrogate, escapeStart) }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw fail(.loneSurrogate, escapeStart)
                    }
                    // Not a surrogate: always a valid scalar.
                    for u in Unicode.UTF8.encode(Unicode.Scalar(scalar)!)! { out.append(u) }
                default:
                    throw fail(.invalidEscape, escapeStart)
                }
            case 0..<0x20:
                throw fail(.controlCharacter, i)
            case 0..<0x80:
                out.append(b)
                i += 1
            default:
                let n = try utf8Sequence()
                out.append(contentsOf: UnsafeBufferPointer(rebasing: input[i..<(i + n)]))
                i += n
            }
        }
    }

    /// The length of the well-formed UTF-8 sequence of two to four bytes at `i` (Unicode Table 3-7:
    /// no overlong forms, no surrogates, nothing above U+10FFFF).
    func utf8Sequence() throws(JSONError) -> Int {
        let b0 = input[i]
        let n: Int
        var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: n = 2
        case 0xE0: n = 3; lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: n = 3
        case 0xED: n = 3; hi = 0x9F
        case 0xF0: n = 4; lo = 0x90
        case 0xF1...0xF3: n = 4
        case 0xF4: n = 4; hi = 0x8F
        default: throw fail(.invalidUTF8, i)
        }
        for k in 1..<n {
            guard i + k < input.count else { throw fail(.unexpectedEnd, i + k) }
            let c = input[i + k]
            let (l, h) = k == 1 ? (lo, hi) : (UInt8(0x80), UInt8(0xBF))
            guard c >= l && c <= h else { throw fail(.invalidUTF8, i + k) }
        }
        return n
    }
}
