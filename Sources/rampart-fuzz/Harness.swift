// The fuzz target type, the byte reader targets decode their structured choices from, a seeded
// generator, and the property check that turns a violation into a crash libFuzzer reports.

import RampartTestSupport

/// One fuzz target: a function over arbitrary bytes that traps on a property violation, and the
/// valid inputs the library itself produces for the seed corpus.
struct FuzzTarget: Sendable {
    /// The name used on the command line and as the corpus folder (`Tests/Fuzz/corpus/<name>`).
    let name: String
    /// One line: what the target feeds and what it checks.
    let summary: String
    /// libFuzzer's `-max_len` for this target.
    let maxLength: Int
    /// libFuzzer's `-timeout` (seconds per input) for this target.
    var timeout: Int = 10
    /// Whether one input costs a full handshake (tens of executions per second under the sanitizers):
    /// libFuzzer then uses the whole `-max_len` from the start (`-len_control=0`) instead of growing
    /// it over thousands of executions.
    var slow = false
    /// Runs one input. Returns normally for every input the library handles as documented; traps
    /// (``FuzzCheck/fail(_:file:line:)``) otherwise.
    let run: @Sendable ([UInt8]) -> Void
    /// A few valid inputs, generated with the library under fixed keys and seeded generators.
    let seeds: @Sendable () -> [[UInt8]]
}

/// Property checks. A violation is a crash so that libFuzzer saves the input as a reproducer.
enum FuzzCheck {
    /// Traps with `message` unless `condition` holds.
    @inline(__always)
    static func require(_ condition: Bool, _ message: @autoclosure () -> String,
                        file: StaticString = #fileID, line: UInt = #line) {
        if !condition { fail(message(), file: file, line: line) }
    }

    /// Traps: a property of the library does not hold for this input.
    static func fail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
        fatalError("rampart-fuzz property violated: \(message)", file: file, line: line)
    }
}

/// Reads structured choices from the front of a fuzz input. Past the end every read returns zeros
/// (or empty bytes), so that every byte string is a valid input.
struct FuzzInput {
    let data: [UInt8]
    private(set) var position = 0

    init(_ data: [UInt8]) { self.data = data }

    /// Bytes not yet read.
    var remaining: Int { data.count - position }
    var isAtEnd: Bool { position >= data.count }

    mutating func byte() -> UInt8 {
        guard position < data.count else { return 0 }
        defer { position += 1 }
        return data[position]
    }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    mutating func u16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }

    mutating func u64() -> UInt64 { UInt64(u32()) | UInt64(u32()) << 32 }

    /// A value in `range`, from as many bytes as the range needs (at most eight).
    mutating func int(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(bitPattern: Int64(range.upperBound) &- Int64(range.lowerBound))
        var v: UInt64 = 0
        var need = span
        while need > 0 {
            v = v << 8 | UInt64(byte())
            need >>= 8
        }
        let offset = span == .max ? v : v % (span + 1)
        return Int(Int64(range.lowerBound) &+ Int64(bitPattern: offset))
    }

    /// Up to `count` bytes (fewer at the end of the input).
    mutating func bytes(_ count: Int) -> [UInt8] {
        let n = max(0, min(count, remaining))
        defer { position += n }
        return Array(data[position..<(position + n)])
    }

    /// Exactly `count` bytes, zero-filled past the end of the input.
    mutating func fixed(_ count: Int) -> [UInt8] {
        var b = bytes(count)
        if b.count < count { b += [UInt8](repeating: 0, count: count - b.count) }
        return b
    }

    /// A byte string with a 16-bit length prefix (clamped to `max` and to what is left).
    mutating func lengthPrefixed(max: Int = 1 << 16) -> [UInt8] {
        bytes(min(Int(u16()), max))
    }

    /// Every byte not yet read.
    mutating func rest() -> [UInt8] { bytes(remaining) }
}

/// The targets hand the library `SplitMix64` (RampartTestSupport), so that a reproducer replays exactly.
extension SplitMix64 {
    /// `count` bytes, eight per draw (little-endian). The fixture keys were drawn this way and the
    /// seed corpus was recorded against them, so this stays distinct from `bytes(_:)` (one draw per byte).
    mutating func packedBytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            let w = next()
            for k in 0..<8 where out.count < count { out.append(UInt8(truncatingIfNeeded: w >> (8 * UInt64(k)))) }
        }
        return out
    }
}

/// How a target splits a byte stream before feeding it to a streaming decoder.
enum FuzzSplit {
    /// Chunks of `data`: whole (mode 0), one byte at a time (mode 1), or random sizes from `seed`.
    static func chunks(_ data: [UInt8], mode: UInt8, seed: UInt64) -> [ArraySlice<UInt8>] {
        switch mode % 4 {
        case 0: return [data[...]]
        case 1: return data.indices.map { data[$0...$0] }
        default:
            var rng = SplitMix64(seed: seed)
            var out: [ArraySlice<UInt8>] = []
            var i = 0
            while i < data.count {
                let j = min(data.count, i + Int(rng.next() % 70))
                out.append(data[i..<j])
                i = j
            }
            return out
        }
    }
}

/// A few deterministic mutations of a valid message: bit flips, overwrites, insertions, deletions,
/// truncation and extension, chosen by `input`. Returns the mutated bytes (possibly unchanged).
func mutate(_ message: [UInt8], _ input: inout FuzzInput) -> [UInt8] {
    var m = message
    let steps = Int(input.byte() % 4)
    for _ in 0..<steps {
        let op = input.byte() % 6
        let at = m.isEmpty ? 0 : Int(input.u16()) % m.count
        switch op {
        case 0 where !m.isEmpty: m[at] ^= 1 << (input.byte() % 8)
        case 1 where !m.isEmpty: m[at] = input.byte()
        case 2: m.insert(input.byte(), at: min(at, m.count))
        case 3 where !m.isEmpty: m.remove(at: at)
        case 4: m.removeLast(m.count - at)
        default: m += input.bytes(Int(input.byte() % 16))
        }
    }
    return m
}

/// Assembles seed inputs from structured parts (the inverse of the ``FuzzInput`` reads).
struct SeedWriter {
    var bytes: [UInt8] = []
    mutating func byte(_ b: UInt8) { bytes.append(b) }
    mutating func u16(_ v: UInt16) { bytes.append(UInt8(truncatingIfNeeded: v)); bytes.append(UInt8(v >> 8)) }
    mutating func u32(_ v: UInt32) { u16(UInt16(truncatingIfNeeded: v)); u16(UInt16(truncatingIfNeeded: v >> 16)) }
    mutating func u64(_ v: UInt64) { u32(UInt32(truncatingIfNeeded: v)); u32(UInt32(truncatingIfNeeded: v >> 32)) }
    mutating func raw(_ b: [UInt8]) { bytes += b }
    mutating func lengthPrefixed(_ b: [UInt8]) { u16(UInt16(b.count)); bytes += b }
}

/// Counts of deep paths reached (a seed that never reaches them is a weak seed). Counted only when
/// enabled, i.e. outside libFuzzer (`replay` and `seed` print them).
enum FuzzStats {
    nonisolated(unsafe) static var enabled = false
    nonisolated(unsafe) static var counts: [String: Int] = [:]

    static func note(_ what: String) {
        if enabled { counts[what, default: 0] += 1 }
    }

    /// The counts as one line, and resets them.
    static func take() -> String {
        defer { counts = [:] }
        return counts.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
    }
}
