// A minimal, strict TL (Type Language) reader and writer: the primitive types the handshake and the
// service messages need (Docs/MTProto.md §0). Everything is little-endian; int128/int256 are opaque byte strings
// copied verbatim; `bytes`/`string` use the 1-byte or 0xFE + 3-byte length prefix and zero padding to
// a multiple of 4.

/// Serializes TL values into a growing byte array.
///
/// ```swift
/// var w = TLWriter()
/// w.constructor(0x7abe77ec)   // ping
/// w.int64(42)
/// let body = w.bytes
/// ```
public struct TLWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    /// The longest TL `bytes` or `string` value: 2²⁴ − 1 bytes (the length prefix has three bytes).
    public static let maxBytesLength = (1 << 24) - 1

    /// Whether ``tlBytes(_:)`` records a value longer than ``maxBytesLength`` in
    /// `skippedOversizedValue` (and writes nothing for it) instead of trapping.
    let recordsOversizedValues: Bool
    /// Set by a recording writer when it skipped a value longer than ``maxBytesLength``: its bytes
    /// are then not valid TL and must be discarded.
    private(set) var skippedOversizedValue = false

    /// An empty writer; `capacity` reserves space up front.
    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
        recordsOversizedValues = false
    }

    /// An empty writer that records a value too long for TL instead of trapping (for values whose
    /// sizes come from outside: the caller checks `skippedOversizedValue` and throws).
    init(recordingOversizedValues: Void) {
        bytes = []
        recordsOversizedValues = true
    }

    /// Overwrites the bytes written so far with zeros and drops them.
    mutating func wipe() {
        bytes.secureWipe()
        bytes = []
    }

    /// Writes a constructor id as a little-endian `uint32` (`#be7e8ef1` → `F1 8E 7E BE`).
    public mutating func constructor(_ id: UInt32) { uint32(id) }

    /// Writes a TL `int`.
    public mutating func int32(_ v: Int32) { uint32(UInt32(bitPattern: v)) }

    /// Writes 4 bytes little-endian.
    public mutating func uint32(_ v: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v >> 16))
        bytes.append(UInt8(truncatingIfNeeded: v >> 24))
    }

    /// Writes a TL `long`.
    public mutating func int64(_ v: Int64) { uint64(UInt64(bitPattern: v)) }

    /// Writes 8 bytes little-endian.
    public mutating func uint64(_ v: UInt64) {
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    /// Writes a TL `Bool` (`boolTrue#997275b5` / `boolFalse#bc799737`).
    public mutating func bool(_ v: Bool) { uint32(v ? TL.boolTrue : TL.boolFalse) }

    /// Writes bytes verbatim (int128, int256, a pre-serialized object).
    public mutating func raw(_ data: some Sequence<UInt8>) { bytes.append(contentsOf: data) }

    /// Writes a TL `bytes` value: length prefix, data, zero padding to a multiple of 4.
    ///
    /// Lengths up to ``maxBytesLength`` (2²⁴ − 1) are representable; longer data is a programming error
    /// in the callers of this public writer (every caller bounds its own data far below that), so it
    /// traps. Values whose sizes come from outside are serialized with a checking entry point instead
    /// (`SecretChat.TLObject.serialize()` throws ``SecretChatError/invalidPlaintext(_:)``).
    public mutating func tlBytes<C: Collection<UInt8>>(_ data: C) {
        let n = data.count
        guard n <= Self.maxBytesLength else {
            precondition(recordsOversizedValues, "TL bytes longer than 2^24 - 1")
            skippedOversizedValue = true
            return
        }
        var header: Int
        if n <= 253 {
            bytes.append(UInt8(n))
            header = 1
        } else {
            bytes.append(0xFE)
            bytes.append(UInt8(truncatingIfNeeded: n))
            bytes.append(UInt8(truncatingIfNeeded: n >> 8))
            bytes.append(UInt8(truncatingIfNeeded: n >> 16))
            header = 4
        }
        bytes.append(contentsOf: data)
        let pad = (4 - (header + n) % 4) % 4
        for _ in 0..<pad { bytes.append(0) }
    }

    /// Writes a TL `string` (UTF-8 in `bytes` form).
    public mutating func string(_ s: String) { tlBytes(Array(s.utf8)) }

    /// Writes a big number as TL `bytes` holding its minimal big-endian magnitude (Docs/MTProto.md §0).
    public mutating func bigInteger(_ v: BigUInt) { tlBytes(v.bigEndianBytes()) }

    /// Writes the boxed vector header: `vector#1cb5c415` and the count.
    public mutating func vectorHeader(count: Int) {
        constructor(TL.vector)
        int32(Int32(truncatingIfNeeded: count))
    }

    /// Writes a boxed `Vector<long>`.
    public mutating func vectorOfInt64(_ values: [Int64]) {
        vectorHeader(count: values.count)
        for v in values { int64(v) }
    }
}

/// Reads TL values from a byte buffer, strictly: every read checks the remaining length first and
/// throws ``MTProtoError`` instead of trapping.
public struct TLReader: Sendable {
    /// The bytes being read.
    public let buffer: [UInt8]
    /// The index of the next unread byte.
    public private(set) var position: Int

    /// A reader over `bytes`, starting at offset 0.
    public init(_ bytes: [UInt8]) {
        buffer = bytes
        position = 0
    }

    /// A reader over a copy of `bytes`.
    public init<C: Collection<UInt8>>(_ bytes: C) {
        self.init(Array(bytes))
    }

    /// Bytes not yet read.
    public var remaining: Int { buffer.count - position }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { position == buffer.count }

    @inline(__always) private func need(_ n: Int) throws(MTProtoError) {
        guard n >= 0, n <= buffer.count - position else { throw .truncated }
    }

    /// Reads a little-endian `uint32`.
    public mutating func uint32() throws(MTProtoError) -> UInt32 {
        try need(4)
        let p = position
        position += 4
        return UInt32(buffer[p]) | UInt32(buffer[p + 1]) << 8 | UInt32(buffer[p + 2]) << 16 | UInt32(buffer[p + 3]) << 24
    }

    /// Reads a TL `int`.
    public mutating func int32() throws(MTProtoError) -> Int32 { Int32(bitPattern: try uint32()) }

    /// Reads a little-endian `uint64`.
    public mutating func uint64() throws(MTProtoError) -> UInt64 {
        try need(8)
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(buffer[position + i]) << (8 * UInt64(i)) }
        position += 8
        return v
    }

    /// Reads a TL `long`.
    public mutating func int64() throws(MTProtoError) -> Int64 { Int64(bitPattern: try uint64()) }

    /// Reads a constructor id.
    public mutating func constructor() throws(MTProtoError) -> UInt32 { try uint32() }

    /// Reads a constructor id and checks it is `expected`; on a mismatch throws
    /// ``MTProtoError/unexpectedConstructor(_:)`` and leaves the position unchanged.
    public mutating func expect(_ expected: UInt32) throws(MTProtoError) {
        let saved = position
        let id = try uint32()
        guard id == expected else {
            position = saved
            throw .unexpectedConstructor(id)
        }
    }

    /// Reads the next constructor id without consuming it.
    public func peekConstructor() throws(MTProtoError) -> UInt32 {
        var copy = self
        return try copy.uint32()
    }

    /// Reads `count` bytes verbatim (int128 is 16, int256 is 32).
    public mutating func raw(_ count: Int) throws(MTProtoError) -> [UInt8] {
        try need(count)
        defer { position += count }
        return Array(buffer[position..<position + count])
    }

    /// Reads a TL `int128` (16 opaque bytes).
    public mutating func int128() throws(MTProtoError) -> [UInt8] { try raw(16) }

    /// Reads a TL `int256` (32 opaque bytes).
    public mutating func int256() throws(MTProtoError) -> [UInt8] { try raw(32) }

    /// Reads a TL `Bool`; any other constructor is an error.
    public mutating func bool() throws(MTProtoError) -> Bool {
        let saved = position
        switch try uint32() {
        case TL.boolTrue: return true
        case TL.boolFalse: return false
        case let id:
            position = saved
            throw .unexpectedConstructor(id)
        }
    }

    /// Reads a TL `bytes` value. Padding bytes must be zero; a value whose length prefix runs past
    /// the buffer is ``MTProtoError/truncated``. `maxLength` bounds the accepted length.
    public mutating func tlBytes(maxLength: Int = 1 << 24) throws(MTProtoError) -> [UInt8] {
        let saved = position
        do throws(MTProtoError) {
            try need(1)
            var n = Int(buffer[position])
            var header = 1
            if n == 0xFF { throw MTProtoError.malformedTL("bytes length prefix 0xFF") }
            if n == 0xFE {
                try need(4)
                n = Int(buffer[position + 1]) | Int(buffer[position + 2]) << 8 | Int(buffer[position + 3]) << 16
                header = 4
                // The long form is only for lengths ≥ 254 (strict: one encoding per value).
                guard n >= 254 else { throw MTProtoError.malformedTL("long bytes prefix for a short value") }
            }
            guard n <= maxLength else { throw MTProtoError.malformedTL("bytes longer than \(maxLength)") }
            let pad = (4 - (header + n) % 4) % 4
            try need(header + n + pad)
            let start = position + header
            for i in 0..<pad where buffer[start + n + i] != 0 {
                throw MTProtoError.malformedTL("nonzero bytes padding")
            }
            position = start + n + pad
            return Array(buffer[start..<start + n])
        } catch {
            position = saved
            throw error
        }
    }

    /// Reads a TL `string`; it must be valid UTF-8.
    public mutating func string(maxLength: Int = 1 << 24) throws(MTProtoError) -> String {
        let saved = position
        let b = try tlBytes(maxLength: maxLength)
        guard let s = String(validating: b, as: UTF8.self) else {
            position = saved
            throw .malformedTL("string is not UTF-8")
        }
        return s
    }

    /// Reads a big number from TL `bytes` (big-endian magnitude). `maxBytes` bounds its size.
    public mutating func bigInteger(maxBytes: Int = 512) throws(MTProtoError) -> BigUInt {
        BigUInt(bigEndian: try tlBytes(maxLength: maxBytes))
    }

    /// Reads a vector count (after the `vector` constructor when `boxed`); a negative count or one
    /// above `max`, or one that could not fit in the remaining bytes at `minElementSize` each, throws.
    public mutating func vectorCount(boxed: Bool = true, max: Int, minElementSize: Int = 4) throws(MTProtoError) -> Int {
        let saved = position
        do throws(MTProtoError) {
            if boxed { try expect(TL.vector) }
            let n = Int(try int32())
            guard n >= 0, n <= max else { throw MTProtoError.malformedTL("vector count \(n) outside 0...\(max)") }
            guard n <= remaining / Swift.max(minElementSize, 1) else { throw MTProtoError.truncated }
            return n
        } catch {
            position = saved
            throw error
        }
    }

    /// Reads a boxed `Vector<long>` of at most `max` elements.
    public mutating func vectorOfInt64(max: Int) throws(MTProtoError) -> [Int64] {
        let saved = position
        do throws(MTProtoError) {
            let n = try vectorCount(max: max, minElementSize: 8)
            var out: [Int64] = []
            out.reserveCapacity(n)
            for _ in 0..<n { out.append(try int64()) }
            return out
        } catch {
            position = saved
            throw error
        }
    }

    /// Throws ``MTProtoError/trailingBytes`` unless every byte has been read.
    public func finish() throws(MTProtoError) {
        guard isAtEnd else { throw .trailingBytes }
    }

    /// ``finish()``, except that a client's unencrypted handshake padding may follow: fewer than 256
    /// bytes that bring the whole body to a multiple of 16 (TDLib's `NoCryptoImpl` appends
    /// `(−size & 15) + 16·k` random bytes, k < 16, and counts them in message_data_length).
    public func finishAllowingHandshakePadding() throws(MTProtoError) {
        guard isAtEnd || (remaining < 256 && buffer.count % 16 == 0) else { throw .trailingBytes }
    }

    /// The unread bytes (without consuming them).
    public var rest: ArraySlice<UInt8> { buffer[position...] }

    /// Skips `count` bytes.
    public mutating func skip(_ count: Int) throws(MTProtoError) {
        try need(count)
        position += count
    }
}

/// TL constants shared by the module.
public enum TL {
    /// `vector#1cb5c415`
    public static let vector: UInt32 = 0x1cb5_c415
    /// `boolTrue#997275b5`
    public static let boolTrue: UInt32 = 0x9972_75b5
    /// `boolFalse#bc799737`
    public static let boolFalse: UInt32 = 0xbc79_9737
}
