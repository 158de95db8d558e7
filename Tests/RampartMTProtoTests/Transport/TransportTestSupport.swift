// Helpers of the transport tests (names prefixed so they cannot clash with other test files).

import Testing
import RampartMTProto
import RampartTestSupport

/// Splits `data` into chunks: whole, one byte at a time, or random sizes 0...max.
enum TransportSplit: CaseIterable, CustomStringConvertible {
    case whole, byteAtATime, random
    var description: String { "\(self == .whole ? "whole" : self == .byteAtATime ? "byte-at-a-time" : "random splits")" }
    func chunks(_ data: [UInt8], rng: inout SplitMix64) -> [ArraySlice<UInt8>] {
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
                        rng: inout SplitMix64) throws -> [TransportEvent] {
    var events: [TransportEvent] = []
    for c in split.chunks(data, rng: &rng) {
        dec.feed(c)
        while let e = try dec.next() { events.append(e) }
    }
    return events
}

/// A sample packet of `n` bytes.
func transportPacket(_ n: Int, seed: UInt64) -> [UInt8] {
    var r = SplitMix64(seed: seed)
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
