// Helpers of the transport tests (names prefixed so they cannot clash with other test files).

import Testing
import RampartMTProto

/// SplitMix64: a small deterministic generator so that failures reproduce.
struct TransportTestRNG: RandomNumberGenerator {
    var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
    mutating func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &self) } }
}

/// Replays a fixed byte string, eight bytes per `next()` in little-endian order (the order in which
/// the codecs turn `next()` into bytes), then continues with SplitMix64.
struct TransportReplayRNG: RandomNumberGenerator {
    var bytes: [UInt8]
    var fallback = TransportTestRNG(99)
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    mutating func next() -> UInt64 {
        guard !bytes.isEmpty else { return fallback.next() }
        var v: UInt64 = 0
        for k in 0..<8 where k < bytes.count { v |= UInt64(bytes[k]) << (8 * UInt64(k)) }
        bytes.removeFirst(min(8, bytes.count))
        return v
    }
}

/// Uppercase or lowercase hex to bytes.
func transportHex(_ s: String) -> [UInt8] { hexBytes(s.lowercased()) }

/// Splits `data` into chunks: whole, one byte at a time, or random sizes 0...max.
enum TransportSplit: CaseIterable, CustomStringConvertible {
    case whole, byteAtATime, random
    var description: String { "\(self == .whole ? "whole" : self == .byteAtATime ? "byte-at-a-time" : "random splits")" }
    func chunks(_ data: [UInt8], rng: inout TransportTestRNG) -> [ArraySlice<UInt8>] {
        switch self {
        case .whole: return [data[...]]
        case .byteAtATime: return data.indices.map { data[$0...$0] }
        case .random:
            var out: [ArraySlice<UInt8>] = []
            var i = 0
            while i < data.count {
                let j = min(data.count, i + Int.random(in: 0...37, using: &rng))
                out.append(data[i..<j])
                i = j
            }
            return out
        }
    }
}

/// Feeds `data` in chunks, draining events after every chunk.
func transportDecodeAll(_ dec: inout TransportDecoder, _ data: [UInt8], split: TransportSplit,
                        rng: inout TransportTestRNG) throws -> [TransportEvent] {
    var events: [TransportEvent] = []
    for c in split.chunks(data, rng: &rng) {
        dec.feed(c)
        while let e = try dec.next() { events.append(e) }
    }
    return events
}

/// A sample packet of `n` bytes.
func transportPacket(_ n: Int, seed: UInt64) -> [UInt8] {
    var r = TransportTestRNG(seed)
    return r.bytes(n)
}

/// Padded intermediate hands over the payload plus `padding - padding % 4` junk bytes (Docs/MTProto.md §6.3, §9.5):
/// checks that each received packet is the sent one plus 0, 4, 8 or 12 bytes, and strips the junk.
func transportStripPadding(_ got: [TransportEvent], like sent: [TransportEvent]) -> [TransportEvent] {
    guard got.count == sent.count else { return got }
    return zip(got, sent).map { g, s in
        guard case .packet(let gp, let ga) = g, case .packet(let sp, _) = s,
              gp.count >= sp.count, gp.count - sp.count < 16, (gp.count - sp.count) % 4 == 0,
              Array(gp.prefix(sp.count)) == sp else { return g }
        return .packet(sp, quickAckRequested: ga)
    }
}
