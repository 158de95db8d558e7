// Snapshots of Threema state (Docs/Snapshots.md §4): the nonce store, restored from its golden file,
// round trips, malformed snapshots, and the old-snapshot rule.

import Foundation
@testable import Rampart
@testable import RampartThreema
import RampartTestSupport
import Testing

/// The golden snapshot at `Vectors/snapshots/<name>.hex` (``goldenSnapshotBytes(_:_:)``).
func goldenSnapshot(_ name: String, _ make: () -> SnapshotBytes) throws -> SnapshotBytes {
    SnapshotBytes(copying: try goldenSnapshotBytes(name) { make().copyBytes() })
}

@Suite("Threema snapshots")
struct ThreemaSnapshotTests {
    static let identity = try! ThreemaID("ECHOECHO")
    static func tag(_ i: UInt8) -> NonceTag { NonceTag(nonce: [UInt8](repeating: i, count: 24), identity: identity) }

    /// The golden store: capacity 1000, the tags of nonces 01…01, 02…02, 03…03 for ECHOECHO.
    static func goldenStore() -> InMemoryNonceStore {
        var s = InMemoryNonceStore(capacity: 1000)
        for i: UInt8 in 1...3 { try! s.insert(tag(i)) }
        return s
    }

    @Test func nonceStoreGoldenFile() throws {
        let golden = try goldenSnapshot("TNST-v1") { Self.goldenStore().snapshot() }
        let store = try InMemoryNonceStore(restoring: golden)
        #expect(store.capacity == 1000 && store.count == 3)
        for i: UInt8 in 1...3 { #expect(store.contains(Self.tag(i))) }
        #expect(!store.contains(Self.tag(4)))
        #expect(store.snapshot() == golden)
        #expect(Self.goldenStore().snapshot() == golden)
    }

    @Test func nonceStoreRoundTripsAndIsCanonical() throws {
        var s = InMemoryNonceStore(capacity: 50)
        #expect(try InMemoryNonceStore(restoring: s.snapshot()).count == 0)
        for i: UInt8 in (0..<40).reversed() { try s.insert(Self.tag(i)) }
        let snap = s.snapshot()
        let r = try InMemoryNonceStore(restoring: snap)
        #expect(r.count == 40 && r.capacity == 50)
        #expect(r.snapshot() == snap)
        // Two tags swapped: not ascending, refused.
        var b = snap.copyBytes()
        let first = 14 + 8 + 4
        let a = Array(b[first..<first + 32]), c = Array(b[first + 32..<first + 64])
        b.replaceSubrange(first..<first + 32, with: c)
        b.replaceSubrange(first + 32..<first + 64, with: a)
        #expect(throws: RampartError.invalidSnapshot(.invalidField("tags order"))) { _ = try InMemoryNonceStore(restoring: SnapshotBytes(copying: b)) }
        // More tags than the capacity allows.
        b = snap.copyBytes(); b[14] = 10
        #expect(throws: RampartError.invalidSnapshot(.invalidField("tags"))) { _ = try InMemoryNonceStore(restoring: SnapshotBytes(copying: b)) }
        b = snap.copyBytes(); for i in 14..<22 { b[i] = 0 }
        #expect(throws: RampartError.invalidSnapshot(.invalidField("capacity"))) { _ = try InMemoryNonceStore(restoring: SnapshotBytes(copying: b)) }
        // Another type's snapshot.
        #expect(throws: RampartError.invalidSnapshot(.wrongType(expected: "TNST", found: "TEST"))) {
            var w = SnapshotWriter(type: SnapshotType("TEST"), version: 1)
            w.uint8(0)
            _ = try InMemoryNonceStore(restoring: w.finish())
        }
    }

    /// The documented rule: a store restored from a snapshot taken before an insert accepts that nonce
    /// again, so the snapshot must be written after the insert and before the acknowledgement.
    @Test func anOlderNonceStoreSnapshotForgetsLaterNonces() throws {
        var s = InMemoryNonceStore(capacity: 10)
        try s.insert(Self.tag(1))
        let before = s.snapshot()
        try s.insert(Self.tag(2))
        let after = s.snapshot()
        #expect(!(try InMemoryNonceStore(restoring: before)).contains(Self.tag(2)))
        #expect(try InMemoryNonceStore(restoring: after).contains(Self.tag(2)))
    }
}

@Suite("Threema pair-key cache snapshots")
struct PairKeyCacheSnapshotTests {
    typealias V = IbexVectors

    static func goldenCache() throws -> PairKeyCache {
        var c = PairKeyCache(identity: V.alice, capacity: 16)
        _ = try c.keys(for: V.bob.contact)
        _ = try c.keys(for: V.alice.contact)   // its own key too: a note-to-self contact
        return c
    }

    @Test func goldenFileAndRoundTrip() throws {
        let g = try goldenSnapshot("TPKC-v1") { try! Self.goldenCache().snapshot() }
        var restored = try PairKeyCache(restoring: g, identity: V.alice)
        #expect(restored.count == 2 && restored.capacity == 16)
        #expect(restored.snapshot() == g)
        // The restored keys are the keys: the same as derived afresh.
        let fresh = try PairKeys(identity: V.alice, contact: V.bob.contact)
        let cached = try restored.keys(for: V.bob.contact)
        #expect(cached.metadataKey == fresh.metadataKey)
        // Another identity is refused; contacts out of order are refused.
        #expect(throws: RampartError.invalidSnapshot(.invalidField("identity"))) { _ = try PairKeyCache(restoring: g, identity: V.bob) }
        var b = g.copyBytes()
        let first = 14 + 8 + 4 + 4
        let x = Array(b[first..<first + 40]), y = Array(b[first + 40..<first + 80])
        b.replaceSubrange(first..<first + 40, with: y)
        b.replaceSubrange(first + 40..<first + 80, with: x)
        #expect(throws: RampartError.invalidSnapshot(.invalidField("contacts order"))) {
            _ = try PairKeyCache(restoring: SnapshotBytes(copying: b), identity: V.alice)
        }
    }
}
