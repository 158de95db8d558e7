// Helpers of the message- and session-layer tests (names prefixed `msg` to stay out of the way of
// the other MTProto test files).

import Foundation
import Testing
import RampartMTProto

/// A deterministic generator (SplitMix64).
struct MsgSplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A generator that returns the given bytes, 8 per draw, little-endian (then zeros): padding bytes
/// of a vector come out exactly.
struct MsgByteRNG: RandomNumberGenerator {
    var bytes: [UInt8]
    var position = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    mutating func next() -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<8 where position + i < bytes.count { v |= UInt64(bytes[position + i]) << (8 * UInt64(i)) }
        position += 8
        return v
    }
}

/// The project's message-layer vectors (Vectors/mtproto/message.json), always present in a clone.
nonisolated(unsafe) let msgVectorCases: [[String: Any]] = {
    let path = mtprotoProjectRoot + "/Vectors/mtproto/message.json"
    guard let d = FileManager.default.contents(atPath: path),
          let o = try? JSONSerialization.jsonObject(with: d) as? [String: Any],
          let cases = o["cases"] as? [[String: Any]] else { return [] }
    return cases
}()

/// Case ids of one `type` in message.json.
func msgVectorIds(_ type: String) -> [String] {
    msgVectorCases.filter { $0["type"] as? String == type }.compactMap { $0["id"] as? String }
}

/// The case with `id`.
func msgVector(_ id: String) -> [String: Any] {
    msgVectorCases.first { $0["id"] as? String == id } ?? [:]
}

/// Little-endian int64 from 8 wire bytes given in hex.
func msgLE64(_ hex: String) -> Int64 {
    let b = hexBytes(hex)
    var v: UInt64 = 0
    for i in 0..<8 { v |= UInt64(b[i]) << (8 * UInt64(i)) }
    return Int64(bitPattern: v)
}

/// Parses "0x..." as an Int64 bit pattern.
func msgHex64(_ s: String) -> Int64 { Int64(bitPattern: UInt64(s.dropFirst(2), radix: 16)!) }

/// The auth key 00 01 02 … FF of the gotd vectors.
let msgSequenceKey = try! AuthKey((0..<256).map { UInt8($0) })

/// A random auth key from `seed`.
func msgRandomKey(_ seed: UInt64) -> AuthKey {
    var g = MsgSplitMix(seed: seed)
    return try! AuthKey((0..<256).map { _ in UInt8(truncatingIfNeeded: g.next()) })
}
