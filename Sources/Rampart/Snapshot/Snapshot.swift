// Snapshots of long-lived protocol state (a secret chat, an MTProto connection, an Ibex session, a
// nonce store), so that an application can stop and resume without losing or repeating anything.
// One small binary format for every type, version 1 (Docs/Snapshots.md):
//
//   "RSNP" | type (4 ASCII bytes) | version (uint16) | body length (uint32) | body
//
// little-endian throughout; the body is the type's fields in a fixed order, built from unsigned
// integers, byte strings (uint32 length, then the bytes) and lists (uint32 count, then the items).
// Decoding is strict: every length and count is checked against what is left and against the type's
// own bounds before anything is allocated, unknown flag bits and trailing bytes are refused, and
// every failure is a `RampartError.invalidSnapshot` naming what was wrong, never a trap.
//
// The unsealed bytes hold keys: they come in `SnapshotBytes`, which wipes itself. Sealing them (under
// a 32-byte key, or under a password for export) is SealedSnapshot.swift.

/// A snapshot type's name: four ASCII letters (`"MSCS"` for an MTProto secret chat session, …).
public struct SnapshotType: Hashable, Sendable, CustomStringConvertible {
    /// The four bytes, as written.
    public let bytes: (UInt8, UInt8, UInt8, UInt8)

    /// The type named `name` (four ASCII letters or digits; anything else is a programming error).
    public init(_ name: StaticString) {
        precondition(name.utf8CodeUnitCount == 4, "a snapshot type is four ASCII letters")
        let p = name.utf8Start
        bytes = (p[0], p[1], p[2], p[3])
        precondition([p[0], p[1], p[2], p[3]].allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) },
                     "a snapshot type is four ASCII letters or digits")
    }

    init(raw b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) { bytes = (b0, b1, b2, b3) }

    var array: [UInt8] { [bytes.0, bytes.1, bytes.2, bytes.3] }

    public static func == (a: SnapshotType, b: SnapshotType) -> Bool { a.array == b.array }
    public func hash(into h: inout Hasher) { h.combine(array) }

    /// The four letters (non-printable bytes as `?`).
    public var description: String {
        String(decoding: array.map { (0x20..<0x7F).contains($0) ? $0 : 0x3F }, as: UTF8.self)
    }
}

/// Why a snapshot was refused (see ``RampartError/invalidSnapshot(_:)``).
public enum SnapshotFault: Error, Equatable, Hashable, Sendable {
    /// The bytes do not start with a snapshot header of the expected kind (plain, sealed under a key,
    /// sealed under a password).
    case notASnapshot
    /// The snapshot is of another type.
    case wrongType(expected: String, found: String)
    /// The snapshot's version of its type is not one this library reads.
    case unsupportedVersion(type: String, version: UInt16)
    /// The bytes end inside a field.
    case truncated
    /// Bytes follow the last field.
    case trailingBytes
    /// A field's value is out of range or inconsistent; the text names the field.
    case invalidField(String)
    /// The sealed snapshot did not authenticate: wrong key or password, or altered bytes.
    case authenticationFailure
    /// A password-sealed snapshot asks for key-derivation costs above the caller's limits.
    case costTooHigh
    /// The snapshot is older than one the caller has already seen (its generation is lower).
    case stale(generation: UInt64, newest: UInt64)
}

/// The bytes of an unsealed snapshot: one allocation owned by this object, zeroed when it is
/// released (they hold keys). Immutable. Get them out only through ``withUnsafeBytes(_:)`` or a copy
/// you wipe (``copyBytes()``); store them sealed (``SealedSnapshot``) or where only the user can read
/// them.
public final class SnapshotBytes: @unchecked Sendable, Equatable {
    // Immutable after init.
    private let storage: SecretBytes

    /// The number of bytes.
    public var count: Int { storage.count }

    /// A copy of `bytes` (the caller still owns, and wipes, its own copy).
    public init(copying bytes: some Collection<UInt8>) {
        var copy = Array(bytes)
        defer { copy.secureWipe() }
        storage = SecretBytes(copy)
    }

    init(_ storage: SecretBytes) { self.storage = storage }

    /// Runs `body` over the bytes in place; the pointer must not escape.
    public func withUnsafeBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        try storage.withUnsafeBytes(body)
    }

    /// A copy of the bytes, which the caller owns and wipes (`secureWipe()`).
    public func copyBytes() -> [UInt8] { storage.bytes }

    /// The snapshot's type, read from its header (nil when the bytes are no snapshot).
    public var type: SnapshotType? {
        withUnsafeBytes { b in
            guard b.count >= 14, Array(b[0..<4]) == SnapshotHeader.plainMagic else { return nil }
            return SnapshotType(raw: b[4], b[5], b[6], b[7])
        }
    }

    /// Equal bytes, compared in constant time (for tests: a snapshot restored and taken again is the
    /// same bytes).
    public static func == (a: SnapshotBytes, b: SnapshotBytes) -> Bool {
        a.count == b.count && a.withUnsafeBytes { x in b.withUnsafeBytes { y in ConstantTime.equals(x, y) } }
    }
}

/// A value that can be written to a snapshot and rebuilt from one.
///
/// Restoring and snapshotting again gives the same bytes. What restoring an *older* snapshot may
/// and may not do (reuse a key, a nonce, a sequence number) is each type's documented rule.
public protocol Snapshottable {
    /// The type's four-letter name in its snapshots.
    static var snapshotType: SnapshotType { get }
    /// The current state, in the snapshot format (Docs/Snapshots.md).
    func snapshot() -> SnapshotBytes
    /// The state of `snapshot`.
    /// - Throws: ``RampartError/invalidSnapshot(_:)`` for bytes of another type, an unknown
    ///   version or any malformed field.
    init(restoring snapshot: SnapshotBytes) throws(RampartError)
}

enum SnapshotHeader {
    static let plainMagic: [UInt8] = Array("RSNP".utf8)
    /// The largest body a snapshot may declare (64 MiB): far above any real state, small enough that
    /// a crafted length cannot make a reader allocate without bound.
    static let maxBodyBytes = 64 << 20
}

/// Writes a snapshot: the header, then the fields in the order the type documents. The bytes it
/// accumulates are wiped when it finishes.
public struct SnapshotWriter: ~Copyable {
    /// The bytes so far, in memory this box owns (never an array: no copy-on-write copy can escape a
    /// wipe). When the writer finishes, the memory goes to the snapshot as it is (no copy); when it is
    /// dropped without finishing, the box wipes and frees it.
    private final class Buffer {
        // Only the writer that owns the box touches it, one access at a time.
        var base: UnsafeMutableRawPointer
        var count = 0
        var capacity: Int

        init(capacity: Int) {
            self.capacity = Swift.max(capacity, 32)
            base = .allocate(byteCount: self.capacity, alignment: 16)
        }

        /// Room for `extra` more bytes: a larger allocation, the bytes copied, the old one wiped and freed.
        @inline(__always) func reserve(_ extra: Int) {
            guard count + extra > capacity else { return }
            grow(extra)
        }

        private func grow(_ extra: Int) {
            let bigger = Swift.max(2 * capacity, count + extra)
            let next = UnsafeMutableRawPointer.allocate(byteCount: bigger, alignment: 16)
            next.copyMemory(from: base, byteCount: count)
            secureZero(UnsafeMutableRawBufferPointer(start: base, count: count))
            base.deallocate()
            base = next
            capacity = bigger
        }

        @inline(__always) func append(_ byte: UInt8) {
            reserve(1)
            base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
            count += 1
        }

        @inline(__always) func append(_ bytes: UnsafeRawBufferPointer) {
            guard let b = bytes.baseAddress, bytes.count > 0 else { return }
            reserve(bytes.count)
            (base + count).copyMemory(from: b, byteCount: bytes.count)
            count += bytes.count
        }

        func append(contentsOf bytes: some Collection<UInt8>) {
            if bytes.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0)) }) != nil { return }
            reserve(bytes.count)
            for b in bytes { append(b) }
        }

        /// Gives the memory away (to a ``SecretBytes``, which wipes and frees it).
        func take() -> SecretBytes {
            let out = SecretBytes(adopting: base, count: count)
            base = .allocate(byteCount: 1, alignment: 16)
            count = 0
            capacity = 1
            return out
        }

        deinit {
            secureZero(UnsafeMutableRawBufferPointer(start: base, count: count))
            base.deallocate()
        }
    }
    private let box: Buffer
    private let headerCount: Int

    /// A snapshot of `type`, version `version`; `capacity` is the expected size in bytes (the buffer
    /// grows past it by copying, and wipes the copy it leaves).
    public init(type: SnapshotType, version: UInt16, capacity: Int = 256) {
        box = Buffer(capacity: capacity + 14)
        box.append(contentsOf: SnapshotHeader.plainMagic)
        box.append(contentsOf: type.array)
        box.append(contentsOf: [UInt8(version & 0xFF), UInt8(version >> 8)])
        box.append(contentsOf: [0, 0, 0, 0])  // body length, set by finish()
        headerCount = box.count
    }

    private mutating func appendLE<T: FixedWidthInteger>(_ v: T) {
        withUnsafeBytes(of: v.littleEndian) { box.append($0) }
    }

    /// One byte.
    public mutating func uint8(_ v: UInt8) { box.append(v) }
    /// A little-endian 16-bit integer.
    public mutating func uint16(_ v: UInt16) { appendLE(v) }
    /// A little-endian 32-bit integer.
    public mutating func uint32(_ v: UInt32) { appendLE(v) }
    /// A little-endian 64-bit integer.
    public mutating func uint64(_ v: UInt64) { appendLE(v) }
    /// A signed 32-bit integer (two's complement).
    public mutating func int32(_ v: Int32) { uint32(UInt32(bitPattern: v)) }
    /// A signed 64-bit integer (two's complement).
    public mutating func int64(_ v: Int64) { uint64(UInt64(bitPattern: v)) }
    /// A boolean: one byte, 0 or 1.
    public mutating func bool(_ v: Bool) { uint8(v ? 1 : 0) }
    /// A 64-bit float, as its IEEE 754 bits.
    public mutating func double(_ v: Double) { uint64(v.bitPattern) }
    /// An optional: a presence byte, then the value when present.
    public mutating func optional<T>(_ v: T?, _ write: (inout SnapshotWriter, T) -> Void) {
        bool(v != nil)
        if let v { write(&self, v) }
    }
    /// A byte string: its length (uint32), then the bytes.
    public mutating func bytes(_ v: [UInt8]) {
        uint32(UInt32(v.count))
        v.withUnsafeBytes { box.append($0) }
    }
    /// Bytes of a length the type fixes: the bytes alone.
    public mutating func fixed(_ v: [UInt8]) { v.withUnsafeBytes { box.append($0) } }
    /// Bytes of a length the type fixes, from memory: the bytes alone.
    public mutating func fixed(_ v: UnsafeRawBufferPointer) { box.append(v) }
    /// A byte string: its length (uint32), then the bytes.
    public mutating func bytes(_ v: some Collection<UInt8>) {
        uint32(UInt32(v.count))
        box.append(contentsOf: v)
    }
    /// Bytes of a length the type fixes (a key, a tag): the bytes alone.
    public mutating func fixed(_ v: some Collection<UInt8>) { box.append(contentsOf: v) }
    /// A list: its count (uint32), then each element.
    public mutating func list<C: Collection>(_ items: C, _ write: (inout SnapshotWriter, C.Element) -> Void) {
        uint32(UInt32(items.count))
        for item in items { write(&self, item) }
    }

    /// The finished snapshot: the writer's memory becomes the snapshot's (no copy is left behind).
    public consuming func finish() -> SnapshotBytes {
        let body = box.count - headerCount
        precondition(body <= SnapshotHeader.maxBodyBytes, "snapshot body over 64 MiB")
        for i in 0..<4 { box.base.storeBytes(of: UInt8(truncatingIfNeeded: body >> (8 * i)), toByteOffset: headerCount - 4 + i, as: UInt8.self) }
        return SnapshotBytes(box.take())
    }
}

/// Reads a snapshot written by ``SnapshotWriter``: the header checked against the type and the
/// versions the reader knows, then the fields in order. Every read checks what is left; ``finish()``
/// refuses trailing bytes.
public struct SnapshotReader: ~Copyable {
    private let snapshot: SnapshotBytes
    private var offset: Int
    private let end: Int
    /// The snapshot's version of its type.
    public let version: UInt16

    /// Checks the header: `RSNP`, `type`, a version in `versions`, a body length that is exactly
    /// what follows.
    /// - Throws: ``RampartError/invalidSnapshot(_:)``.
    public init(_ snapshot: SnapshotBytes, type: SnapshotType, versions: ClosedRange<UInt16>) throws(RampartError) {
        self.snapshot = snapshot
        let header = snapshot.withUnsafeBytes { b -> (magic: [UInt8], type: [UInt8], version: UInt16, length: Int)? in
            guard b.count >= 14 else { return nil }
            let length = Int(b[10]) | Int(b[11]) << 8 | Int(b[12]) << 16 | Int(b[13]) << 24
            return (Array(b[0..<4]), Array(b[4..<8]), UInt16(b[8]) | UInt16(b[9]) << 8, length)
        }
        guard let header, header.magic == SnapshotHeader.plainMagic else { throw .invalidSnapshot(.notASnapshot) }
        let found = SnapshotType(raw: header.type[0], header.type[1], header.type[2], header.type[3])
        guard found == type else { throw .invalidSnapshot(.wrongType(expected: type.description, found: found.description)) }
        guard versions.contains(header.version) else {
            throw .invalidSnapshot(.unsupportedVersion(type: type.description, version: header.version))
        }
        guard header.length <= snapshot.count - 14 else { throw .invalidSnapshot(.truncated) }
        guard header.length == snapshot.count - 14 else { throw .invalidSnapshot(.trailingBytes) }
        version = header.version
        offset = 14
        end = snapshot.count
    }

    /// The bytes not yet read.
    public var remaining: Int { end - offset }

    private mutating func take<T>(_ n: Int, _ read: (UnsafeRawBufferPointer) -> T) throws(RampartError) -> T {
        guard n >= 0, n <= end - offset else { throw .invalidSnapshot(.truncated) }
        let start = offset
        offset += n
        return snapshot.withUnsafeBytes { read(UnsafeRawBufferPointer(rebasing: $0[start..<start + n])) }
    }

    /// One byte.
    public mutating func uint8() throws(RampartError) -> UInt8 { try take(1) { $0[0] } }
    /// A little-endian 16-bit integer.
    public mutating func uint16() throws(RampartError) -> UInt16 { try take(2) { UInt16($0[0]) | UInt16($0[1]) << 8 } }
    /// A little-endian 32-bit integer.
    public mutating func uint32() throws(RampartError) -> UInt32 {
        try take(4) { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
    }
    /// A little-endian 64-bit integer.
    public mutating func uint64() throws(RampartError) -> UInt64 {
        try take(8) { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }
    /// A signed 32-bit integer.
    public mutating func int32() throws(RampartError) -> Int32 { Int32(bitPattern: try uint32()) }
    /// A signed 64-bit integer.
    public mutating func int64() throws(RampartError) -> Int64 { Int64(bitPattern: try uint64()) }
    /// A boolean; a byte other than 0 or 1 is refused.
    public mutating func bool(_ field: String) throws(RampartError) -> Bool {
        switch try uint8() {
        case 0: return false
        case 1: return true
        default: throw .invalidSnapshot(.invalidField(field))
        }
    }
    /// A 64-bit float; NaN is refused.
    public mutating func double(_ field: String) throws(RampartError) -> Double {
        let v = Double(bitPattern: try uint64())
        guard !v.isNaN else { throw .invalidSnapshot(.invalidField(field)) }
        return v
    }
    /// An optional written by ``SnapshotWriter/optional(_:_:)``.
    public mutating func optional<T>(_ field: String, _ read: (inout SnapshotReader) throws(RampartError) -> T) throws(RampartError) -> T? {
        try bool(field) ? try read(&self) : nil
    }
    /// A byte string of at most `max` bytes (the caller wipes it if it is secret).
    public mutating func bytes(_ field: String, max: Int) throws(RampartError) -> [UInt8] {
        let n = Int(try uint32())
        guard n <= max else { throw .invalidSnapshot(.invalidField(field)) }
        return try take(n) { Array($0) }
    }
    /// Exactly `count` bytes (a key, a tag).
    public mutating func fixed(_ count: Int) throws(RampartError) -> [UInt8] { try take(count) { Array($0) } }
    /// Exactly `count` bytes into secret storage.
    public mutating func secret(_ count: Int) throws(RampartError) -> SnapshotBytes {
        try take(count) { b in SnapshotBytes(SecretBytes(b)) }
    }
    /// A list of at most `max` elements, each at least `minElementBytes` long (so that a crafted
    /// count is refused before the loop, not after `count` allocations).
    public mutating func list<T>(_ field: String, max: Int, minElementBytes: Int = 1,
                                 _ read: (inout SnapshotReader) throws(RampartError) -> T) throws(RampartError) -> [T] {
        let n = Int(try uint32())
        guard n <= max, n <= remaining / Swift.max(minElementBytes, 1) else { throw .invalidSnapshot(.invalidField(field)) }
        var items: [T] = []
        items.reserveCapacity(n)
        for _ in 0..<n { items.append(try read(&self)) }
        return items
    }
    /// Checks that every byte was read.
    public consuming func finish() throws(RampartError) {
        guard offset == end else { throw .invalidSnapshot(.trailingBytes) }
    }
}
