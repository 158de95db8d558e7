// Protocol Buffers wire format (https://protobuf.dev/programming-guides/encoding/): the varint,
// 64-bit, length-delimited and 32-bit wire types, read field by field and written field by field.
// There is no schema compiler here: each message type decodes itself from the fields a reader yields
// (Threema's MessageMetadata, the Ibex envelope, …). Groups (wire types 3 and 4, deprecated) are
// refused. Every read is bounds-checked before it happens; nothing is allocated from a length field.

/// An error from reading Protocol Buffers bytes. Readers never trap on any input.
public enum ProtobufError: Error, Equatable, Hashable, Sendable {
    /// The input ends inside a tag, a varint, a fixed-width value or a length-delimited value.
    case truncated
    /// A varint is longer than 10 bytes or does not fit 64 bits.
    case varintOverflow
    /// A tag names wire type 3, 4, 6 or 7 (groups and reserved values are not supported).
    case unsupportedWireType(UInt8)
    /// A tag names field number 0 or one above 2^29 − 1.
    case invalidFieldNumber(UInt64)
    /// A field has the wrong wire type for its declared schema type (raised by message decoders).
    case wrongWireType(field: UInt32)
    /// A string field is not valid UTF-8 (raised by message decoders).
    case invalidUTF8(field: UInt32)
    /// A value is outside what the message's schema allows (raised by message decoders).
    case invalidValue(field: UInt32)
}

/// One field as it appears on the wire.
public struct ProtobufField: Sendable, Equatable {
    /// The value of a field, by wire type.
    public enum Value: Sendable, Equatable {
        /// Wire type 0: int32, int64, uint32, uint64, sint32/64 (zig-zag), bool, enum.
        case varint(UInt64)
        /// Wire type 1: fixed64, sfixed64, double.
        case fixed64(UInt64)
        /// Wire type 2: bytes, string, embedded message, packed repeated values.
        case lengthDelimited(ArraySlice<UInt8>)
        /// Wire type 5: fixed32, sfixed32, float.
        case fixed32(UInt32)
    }

    /// The field number, 1 ... 2^29 − 1.
    public let number: UInt32
    /// The field's value.
    public let value: Value

    /// A field (for writers of tests and decoders; readers produce these).
    public init(number: UInt32, value: Value) {
        self.number = number
        self.value = value
    }

    /// The value of a varint field, or ``ProtobufError/wrongWireType(field:)``.
    public func varint() throws(ProtobufError) -> UInt64 {
        guard case .varint(let v) = value else { throw .wrongWireType(field: number) }
        return v
    }

    /// The value of a fixed64 field, or ``ProtobufError/wrongWireType(field:)``.
    public func fixed64() throws(ProtobufError) -> UInt64 {
        guard case .fixed64(let v) = value else { throw .wrongWireType(field: number) }
        return v
    }

    /// The value of a fixed32 field, or ``ProtobufError/wrongWireType(field:)``.
    public func fixed32() throws(ProtobufError) -> UInt32 {
        guard case .fixed32(let v) = value else { throw .wrongWireType(field: number) }
        return v
    }

    /// The bytes of a length-delimited field, or ``ProtobufError/wrongWireType(field:)``.
    public func bytes() throws(ProtobufError) -> ArraySlice<UInt8> {
        guard case .lengthDelimited(let v) = value else { throw .wrongWireType(field: number) }
        return v
    }

    /// A length-delimited field decoded as UTF-8 (strictly: invalid sequences are an error, not
    /// replacement characters).
    public func string() throws(ProtobufError) -> String {
        let raw = try bytes()
        // `String(decoding:)` takes the standard library's fast validating path and repairs invalid
        // input with U+FFFD; a repair always changes the bytes, so equal bytes mean valid UTF-8.
        // (`String(validating:)` is as strict but instantiates generic metadata on every call.)
        let s = String(decoding: raw, as: UTF8.self)
        guard s.utf8.elementsEqual(raw) else { throw .invalidUTF8(field: number) }
        return s
    }

    /// A varint field read as a bool (any non-zero value is true, as protobuf parsers do).
    public func bool() throws(ProtobufError) -> Bool { try varint() != 0 }
}

/// Reads the fields of one message in wire order.
///
/// ```swift
/// var r = ProtobufReader(bytes)
/// while let f = try r.next() {
///     switch f.number { case 2: nickname = try f.string(); default: break }   // unknown: skipped
/// }
/// ```
public struct ProtobufReader: Sendable {
    private let input: ArraySlice<UInt8>
    private var offset: Int

    /// A reader over an array (no copy, no dynamic cast).
    public init(_ bytes: [UInt8]) {
        input = bytes[...]
        offset = input.startIndex
    }

    /// A reader over a slice of an array (no copy, no dynamic cast).
    public init(_ bytes: ArraySlice<UInt8>) {
        input = bytes
        offset = input.startIndex
    }

    /// A reader over `bytes` (an `Array` or a slice of one).
    public init<C: Collection<UInt8>>(_ bytes: C) {
        if let slice = bytes as? ArraySlice<UInt8> { input = slice } else { input = ArraySlice(bytes) }
        offset = input.startIndex
    }

    /// Whether every byte has been consumed.
    public var isAtEnd: Bool { offset == input.endIndex }

    /// The next field, or `nil` at the end of the input. After an error the reader stays at the
    /// field that failed.
    public mutating func next() throws(ProtobufError) -> ProtobufField? {
        guard offset < input.endIndex else { return nil }
        var o = offset
        let tag = try Self.varint(input, &o)
        let wire = UInt8(truncatingIfNeeded: tag & 7)
        let number = tag >> 3
        guard number >= 1, number <= (1 << 29) - 1 else { throw .invalidFieldNumber(number) }
        let value: ProtobufField.Value
        switch wire {
        case 0:
            value = .varint(try Self.varint(input, &o))
        case 1:
            guard input.endIndex - o >= 8 else { throw .truncated }
            var v: UInt64 = 0
            for i in 0..<8 { v |= UInt64(input[o + i]) << (8 * UInt64(i)) }
            o += 8
            value = .fixed64(v)
        case 2:
            let length = try Self.varint(input, &o)
            guard length <= UInt64(input.endIndex - o) else { throw .truncated }
            let n = Int(length)
            value = .lengthDelimited(input[o..<(o + n)])
            o += n
        case 5:
            guard input.endIndex - o >= 4 else { throw .truncated }
            var v: UInt32 = 0
            for i in 0..<4 { v |= UInt32(input[o + i]) << (8 * UInt32(i)) }
            o += 4
            value = .fixed32(v)
        default:
            throw .unsupportedWireType(wire)
        }
        offset = o
        return ProtobufField(number: UInt32(number), value: value)
    }

    private static func varint(_ input: ArraySlice<UInt8>, _ o: inout Int) throws(ProtobufError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard o < input.endIndex else { throw .truncated }
            let b = input[o]
            o += 1
            if shift == 63 && b > 1 { throw .varintOverflow }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw .varintOverflow }
        }
    }
}

/// Writes fields in the order they are added (canonical protobuf writers emit ascending field
/// numbers; callers keep that order).
public struct ProtobufWriter: Sendable {
    /// The encoded message so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty message.
    public init() {}

    /// An empty message with room for `capacity` bytes (one allocation when the size is known).
    public init(reservingCapacity capacity: Int) { bytes.reserveCapacity(capacity) }

    /// Appends a varint field (uint64, uint32, int64 ≥ 0, bool, enum).
    public mutating func varint(_ field: UInt32, _ value: UInt64) {
        tag(field, 0)
        appendVarint(value)
    }

    /// Appends a bool field as a varint 0 or 1.
    public mutating func bool(_ field: UInt32, _ value: Bool) { varint(field, value ? 1 : 0) }

    /// Appends a fixed64 field (little-endian).
    public mutating func fixed64(_ field: UInt32, _ value: UInt64) {
        tag(field, 1)
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    /// Appends a fixed32 field (little-endian).
    public mutating func fixed32(_ field: UInt32, _ value: UInt32) {
        tag(field, 5)
        for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))) }
    }

    /// Appends a length-delimited field (bytes, or an embedded message's encoding).
    public mutating func bytes<C: Collection<UInt8>>(_ field: UInt32, _ value: C) {
        tag(field, 2)
        appendVarint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// Appends a length-delimited field from an array (the common case, without generic dispatch).
    public mutating func bytes(_ field: UInt32, _ value: [UInt8]) {
        tag(field, 2)
        appendVarint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// Appends the tag and length of a length-delimited field whose `byteCount` bytes the caller
    /// writes next (an embedded message written in place instead of encoded apart and copied).
    public mutating func lengthDelimitedHeader(_ field: UInt32, byteCount: Int) {
        tag(field, 2)
        appendVarint(UInt64(byteCount))
    }

    /// The bytes a varint takes (1 ... 10).
    public static func varintByteCount(_ value: UInt64) -> Int { value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7 }

    /// The bytes a varint field takes (tag and value).
    public static func varintFieldByteCount(_ field: UInt32, _ value: UInt64) -> Int {
        varintByteCount(UInt64(field) << 3) + varintByteCount(value)
    }

    /// The bytes a length-delimited field of `byteCount` bytes takes (tag, length and value).
    public static func lengthDelimitedFieldByteCount(_ field: UInt32, byteCount: Int) -> Int {
        varintByteCount(UInt64(field) << 3 | 2) + varintByteCount(UInt64(byteCount)) + byteCount
    }

    /// Appends a string field as UTF-8.
    public mutating func string(_ field: UInt32, _ value: String) { bytes(field, Array(value.utf8)) }

    private mutating func tag(_ field: UInt32, _ wire: UInt64) {
        precondition(field >= 1 && field <= (1 << 29) - 1, "protobuf field numbers are 1...2^29-1")
        appendVarint(UInt64(field) << 3 | wire)
    }

    private mutating func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }
}

extension ProtobufError: CustomStringConvertible {
    /// The error in a plain sentence.
    public var description: String {
        switch self {
        case .truncated: return "the Protocol Buffers bytes end inside a field"
        case .varintOverflow: return "a varint is longer than 64 bits"
        case .unsupportedWireType(let t): return "wire type \(t) is not supported"
        case .invalidFieldNumber(let n): return "field number \(n) is invalid"
        case .wrongWireType(let f): return "field \(f) has the wrong wire type"
        case .invalidUTF8(let f): return "field \(f) is not UTF-8"
        case .invalidValue(let f): return "field \(f) has an invalid value"
        }
    }
}
