// Snapshots of MTProto sessions (Docs/Snapshots.md §4, type MSES): a seeded conversation run twice,
// once straight and once with both ends snapshotted and restored after every step, gives the same
// bytes; the golden file restores; malformed snapshots are typed errors; and the old-snapshot rule.

import Foundation
@testable import RampartMTProto
@testable import Rampart
import RampartTestSupport
import Testing


@Suite("MTProto session snapshots")
struct SessionSnapshotTests {
    static let key = try! AuthKey((0..<256).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })

    /// A client and a server exchanging `steps` messages both ways from seeded generators, with a
    /// clock step on the way; with `restoreEveryStep`, both sessions are replaced by
    /// their restored snapshot before every step. Returns every packet and every received body.
    static func conversation(steps: Int, restoreEveryStep: Bool) throws -> [[UInt8]] {
        var crng = SplitMix64(seed: 0xC11E), srng = SplitMix64(seed: 0x5E7E)
        var client = Session(client: key, sessionId: 0x1234_5678, salt: 77, timeOffset: 0.5, replayCapacity: 16)
        var server = Session(server: key, salt: 77, replayCapacity: 16)
        var transcript: [[UInt8]] = []
        var now = 1_800_000_000.0
        for step in 0..<steps {
            if restoreEveryStep {
                let c = client.snapshot(), s = server.snapshot()
                client = try Session(restoring: c)
                server = try Session(restoring: s)
                #expect(client.snapshot() == c && server.snapshot() == s, "step \(step): restore then snapshot changed the bytes")
            }
            now += step % 7 == 3 ? 40 : 0.25
            let body: [UInt8] = [0x78, 0x97, 0x46, 0x60] + (0..<(8 + 4 * (step % 5))).map { UInt8(truncatingIfNeeded: $0 &+ step) }
            let out = try client.encrypt(body, contentRelated: step % 3 != 0, now: now, using: &crng)
            transcript.append(out.packet)
            for m in try server.decrypt(out.packet, now: now) { transcript.append(m.body) }
            let reply = try server.encrypt(body.reversed(), contentRelated: true, now: now, isResponse: true, using: &srng)
            transcript.append(reply.packet)
            for m in try client.decrypt(reply.packet, now: now) { transcript.append(m.body) }
        }
        transcript.append(client.snapshot().copyBytes())
        transcript.append(server.snapshot().copyBytes())
        return transcript
    }

    @Test func restoringAfterEveryStepChangesNothing() throws {
        let straight = try Self.conversation(steps: 40, restoreEveryStep: false)
        let restored = try Self.conversation(steps: 40, restoreEveryStep: true)
        #expect(straight.count == restored.count)
        #expect(straight == restored)
    }

    static func goldenSession() -> Session {
        var rng = SplitMix64(seed: 0x60D)
        var s = Session(client: key, sessionId: 0x0102_0304_0506_0708, salt: -5, timeOffset: 1.25, padding: .random(maxExtraBlocks: 3),
                        replayCapacity: 4)
        s.salts.add([FutureSalt(validSince: 1_800_000_100, validUntil: 1_800_003_600, salt: 9),
                     FutureSalt(validSince: 1_800_003_000, validUntil: 1_800_007_200, salt: 10)])
        _ = try! s.encrypt([0x78, 0x97, 0x46, 0x60, 1, 2, 3, 4], contentRelated: true, now: 1_800_000_000, using: &rng)
        s.scheduleAck(0x6000_0000_0000_0001)
        return s
    }

    @Test func goldenFile() throws {
        let g = try goldenSnapshot("MSES-v1") { Self.goldenSession().snapshot() }
        let s = try Session(restoring: g)
        #expect(s.role == .client && s.sessionId == 0x0102_0304_0506_0708)
        #expect(s.salts.current == -5 && s.salts.future.count == 2)
        #expect(s.messageIds.timeOffset == 1.25 && s.messageIds.lastId > 0)
        #expect(s.pendingAcks == [0x6000_0000_0000_0001])
        #expect(s.padding == .random(maxExtraBlocks: 3) && s.replayWindow.capacity == 4)
        #expect(s.authKey == Self.key)
        #expect(s.snapshot() == g)
    }

    @Test func malformedSnapshotsAreTypedErrors() throws {
        let b = Self.goldenSession().snapshot().copyBytes()
        for n in 0..<b.count {
            #expect(throws: RampartError.self) { _ = try Session(restoring: SnapshotBytes(copying: b[0..<n])) }
        }
        var x = b; x[14] = 2
        #expect(throws: RampartError.invalidSnapshot(.invalidField("role"))) { _ = try Session(restoring: SnapshotBytes(copying: x)) }
        x = b; x[14 + 1 + 256] = 0  // a client without session_id (and the bytes now misaligned: refused either way)
        #expect(throws: RampartError.self) { _ = try Session(restoring: SnapshotBytes(copying: x)) }
        x = b; x[8] = 9
        #expect(throws: RampartError.invalidSnapshot(.unsupportedVersion(type: "MSES", version: 9))) { _ = try Session(restoring: SnapshotBytes(copying: x)) }
    }

    /// The documented rule: an older snapshot restored as it is accepts again a server message received
    /// after it was taken (same session_id, inside the time window); resumed, the session has a new
    /// session_id and refuses it.
    @Test func anOlderSnapshotAndTheResumedRule() throws {
        var crng = SplitMix64(seed: 1), srng = SplitMix64(seed: 2)
        var client = Session(client: Self.key, sessionId: 42, salt: 1, timeOffset: 0)
        var server = Session(server: Self.key, salt: 1)
        let now = 1_800_000_000.0
        let first = try client.encrypt([0x78, 0x97, 0x46, 0x60, 0, 0, 0, 0], contentRelated: true, now: now, using: &crng)
        _ = try server.decrypt(first.packet, now: now)
        let old = client.snapshot()
        let reply = try server.encrypt([0x78, 0x97, 0x46, 0x60, 9, 9, 9, 9], contentRelated: true, now: now, isResponse: true, using: &srng)
        _ = try client.decrypt(reply.packet, now: now)
        #expect(throws: MTProtoError.self) { _ = try client.decrypt(reply.packet, now: now) }  // a replay, refused
        var stale = try Session(restoring: old)
        #expect(try stale.decrypt(reply.packet, now: now).count == 1)  // the older window forgot it
        var resumed = try Session.resumed(from: old, using: &crng)
        #expect(resumed.sessionId != 42 && resumed.restartCount == 1)
        #expect(throws: MTProtoError.self) { _ = try resumed.decrypt(reply.packet, now: now) }
    }
}
