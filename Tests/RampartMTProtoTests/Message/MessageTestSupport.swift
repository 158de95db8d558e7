// Helpers of the message- and session-layer tests (names prefixed `msg` to stay out of the way of
// the other MTProto test files).

import Foundation
import Testing
import RampartMTProto
import RampartTestSupport

/// The project's message-layer vectors (Vectors/mtproto/message.json), always present in a clone.
nonisolated(unsafe) let msgVectorCases: [[String: Any]] = {
    let path = projectRoot + "/Vectors/mtproto/message.json"
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
    var g = SplitMix64(seed: seed)
    return try! AuthKey(randomBytes(count: 256, using: &g))
}
