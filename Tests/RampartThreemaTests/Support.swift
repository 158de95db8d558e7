import Rampart
import RampartTestSupport
@_spi(Testing) @testable import RampartThreema

/// A deterministic identity for tests: ID and secret key from a seed.
func testIdentity(_ id: String, seed: UInt64) -> ThreemaIdentity {
    var rng = SplitMix64(seed: seed)
    return ThreemaIdentity.generate(id: try! ThreemaID(id), using: &rng)
}

let alice = testIdentity("000ALICE", seed: 1)
let bob = testIdentity("00000BOB", seed: 2)
let eve = testIdentity("EVE00000", seed: 3)

func mutated(_ bytes: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
    var b = bytes
    switch rng.next() % 4 {
    case 0 where !b.isEmpty: b[Int(rng.next() % UInt64(b.count))] ^= UInt8(1 << (rng.next() % 8))
    case 1 where !b.isEmpty: b.removeLast(Int(rng.next() % UInt64(b.count)) + 1)
    case 2: b += randomBytes(count: Int(rng.next() % 16) + 1, using: &rng)
    default:
        if !b.isEmpty { b[Int(rng.next() % UInt64(b.count))] = UInt8(truncatingIfNeeded: rng.next()) }
    }
    return b
}

#if DEBUG
let isDebugBuild = true
#else
let isDebugBuild = false
#endif
