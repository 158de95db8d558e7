// Snapshots of Ibex sessions (Docs/Snapshots.md §4, type TIBS): a conversation through every state
// (L20/R20, R24, RL44) run straight and with both sessions restored before every step gives the same
// bytes; the golden file; malformed snapshots; and the two old-snapshot rules (generation, sending
// ahead).

import Foundation
import Rampart
import RampartTestSupport
import Testing
@_spi(Testing) @testable import RampartThreema

@Suite struct IbexSnapshotTests {
    typealias V = IbexVectors
    static let sid = [UInt8](repeating: 0x5b, count: 16)

    static func start() throws -> (Ibex.Session, Ibex.Session) {
        let (a, initEnvelope) = try Ibex.Session.initiate(identity: V.alice, peer: V.bob.contact, sessionID: sid, ephemeral: V.aliceFSSK)
        guard case .initiate(let offer) = initEnvelope.content else { throw ThreemaError.ibex(.missingContent) }
        let b = try Ibex.Session.receiveInit(offer, sessionID: sid, identity: V.bob, peer: V.alice.contact)
        return (a, b)
    }

    /// Alice's 2DH message, Bob's Accept and 4DH answer, then `steps` messages both ways; with
    /// `restoring`, both sessions are replaced by their restored snapshots before every step.
    static func conversation(steps: Int, restoring: Bool) throws -> [[UInt8]] {
        var (a, b) = try start()
        var out: [[UInt8]] = []
        func roundTrip() throws {
            if restoring {
                let sa = a.snapshot(), sb = b.snapshot()
                a = try Ibex.Session(restoring: sa, identity: V.alice)
                b = try Ibex.Session(restoring: sb, identity: V.bob)
                #expect(a.snapshot() == sa && b.snapshot() == sb)
            }
        }
        try roundTrip()
        let m1 = try a.encrypt(type: 1, body: [1, 2, 3])
        out.append(try m1.encoded())
        try roundTrip()
        out.append(try b.decrypt(m1).body)
        try roundTrip()
        let accept = try b.accept(ephemeral: V.bobFSSK)
        out.append(try accept.encoded())
        try roundTrip()
        guard case .accept(let offer) = accept.content else { throw ThreemaError.ibex(.missingContent) }
        try a.processAccept(offer)
        for i in 0..<steps {
            try roundTrip()
            let x = try a.encrypt(type: 1, body: [UInt8](repeating: UInt8(i), count: i % 9))
            out.append(try x.encoded())
            try roundTrip()
            out.append(try b.decrypt(x).body)
            let y = try b.encrypt(type: 2, body: [UInt8(i)])
            out.append(try y.encoded())
            try roundTrip()
            out.append(try a.decrypt(y).body)
        }
        out.append(a.snapshot().copyBytes())
        out.append(b.snapshot().copyBytes())
        return out
    }

    @Test func restoringBeforeEveryStepChangesNothing() throws {
        let straight = try Self.conversation(steps: 12, restoring: false)
        let restored = try Self.conversation(steps: 12, restoring: true)
        #expect(straight.count == restored.count && straight == restored)
    }

    @Test func goldenFileForEachState() throws {
        var (a, b) = try Self.start()
        _ = try a.encrypt(type: 1, body: [9])
        a.updatedAt = 1_800_000_000
        // L20 (Alice, with her ephemeral secret) and R20 (Bob).
        for (name, s, identity) in [("TIBS-L20-v1", a, V.alice), ("TIBS-R20-v1", b, V.bob)] {
            let g = try goldenSnapshot(name) { s.snapshot() }
            let r = try Ibex.Session(restoring: g, identity: identity)
            #expect(r.state == s.state && r.ratchetCountersForTesting == s.ratchetCountersForTesting && r.updatedAt == s.updatedAt)
            #expect(r.snapshot() == g)
        }
        // RL44 after the Accept.
        let accept = try b.accept(ephemeral: V.bobFSSK)
        guard case .accept(let offer) = accept.content else { throw ThreemaError.ibex(.missingContent) }
        try a.processAccept(offer)
        let g = try goldenSnapshot("TIBS-RL44-v1") { a.snapshot() }
        let r = try Ibex.Session(restoring: g, identity: V.alice)
        #expect(r.state == .rl44 && r.negotiatedVersion == a.negotiatedVersion && r.snapshot() == g)
    }

    @Test func malformedSnapshots() throws {
        var (a, _) = try Self.start()
        _ = try a.encrypt(type: 1, body: [9])
        let bytes = a.snapshot().copyBytes()
        for n in 0..<bytes.count {
            #expect(throws: RampartError.self) { _ = try Ibex.Session(restoring: SnapshotBytes(copying: bytes[0..<n]), identity: V.alice) }
        }
        // Another identity than the snapshot's own.
        #expect(throws: RampartError.invalidSnapshot(.invalidField("identity"))) {
            _ = try Ibex.Session(restoring: a.snapshot(), identity: V.bob)
        }
        // A role byte out of range; an illegal ratchet combination (L20's ratchet marked absent).
        var x = bytes; x[14 + 16 + 8 + 8 + 32] = 7
        #expect(throws: RampartError.invalidSnapshot(.invalidField("role"))) { _ = try Ibex.Session(restoring: SnapshotBytes(copying: x), identity: V.alice) }
    }

    /// Rule 1: the generation grows with every message; a snapshot older than the newest generation the
    /// application recorded is refused.
    @Test func staleSnapshotsAreRefusedByGeneration() throws {
        var (a, b) = try Self.start()
        let old = a.snapshot()
        let g0 = a.generation
        let m = try a.encrypt(type: 1, body: [1])
        _ = try b.decrypt(m)
        #expect(a.generation == g0 + 1)
        #expect(throws: RampartError.invalidSnapshot(.stale(generation: g0, newest: a.generation))) {
            _ = try Ibex.Session(restoring: old, identity: V.alice, newerThan: a.generation)
        }
        #expect(try Ibex.Session(restoring: a.snapshot(), identity: V.alice, newerThan: a.generation).generation == a.generation)
    }

    /// Rule 2: a snapshot written 100 steps ahead, restored after the live session sent messages, never
    /// encrypts under a key the live session used, and the peer still reads what it sends.
    @Test func sendingAheadNeverReusesAMessageKey() throws {
        var (a, b) = try Self.start()
        let ahead = a.snapshot(sendingAhead: 100)
        var counters: Set<UInt64> = []
        for i in 0..<5 {
            let m = try a.encrypt(type: 1, body: [UInt8(i)])
            guard case .encapsulated(let e) = m.content else { throw ThreemaError.ibex(.missingContent) }
            counters.insert(e.counter)
            _ = try b.decrypt(m)
        }
        var restored = try Ibex.Session(restoring: ahead, identity: V.alice)
        let m = try restored.encrypt(type: 1, body: [0xEE])
        guard case .encapsulated(let e) = m.content else { throw ThreemaError.ibex(.missingContent) }
        #expect(!counters.contains(e.counter) && e.counter == 101)
        #expect(try b.decrypt(m).body == [0xEE])
        // A plain snapshot of the same moment would have started at counter 1 again, a key already used:
        // what the generation check refuses.
        let plain = try Ibex.Session(restoring: try Self.start().0.snapshot(), identity: V.alice)
        #expect(plain.ratchetCountersForTesting[0] == 1)
    }
}
