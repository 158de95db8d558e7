// Snapshots of secret chats (Docs/Snapshots.md §4, type MSCS): the handshake states restored midway;
// a seeded plan of messages with gaps, reordering, duplicates and re-keys run straight and with both
// sessions restored before every step gives the same bytes; the golden file; malformed snapshots; and
// the old-snapshot rule (generation).

import Foundation
@testable import RampartMTProto
@testable import Rampart
import RampartTestSupport
import Testing

@Suite struct SecretChatSnapshotTests {
    /// Replaces both sessions by their restored snapshots (the same clock), checking that restore then
    /// snapshot gives the same bytes.
    static func restore(_ net: inout SCNet) throws {
        let sa = net.a.snapshot(), sb = net.b.snapshot()
        net.a = try SecretChat.Session(restoring: sa, clock: net.clock.clock)
        net.b = try SecretChat.Session(restoring: sb, clock: net.clock.clock)
        #expect(net.a.snapshot() == sa && net.b.snapshot() == sb)
    }

    /// 120 steps from a seed: sends both ways, deliveries in order and out of order (gaps, queued
    /// messages, Resends), duplicates, re-keys started by either side, a week passing; with
    /// `restoring`, before every step.
    static func plan(restoring: Bool) throws -> [[UInt8]] {
        var net = try SCNet(seed: 0x5C5C)
        var choose = SplitMix64(seed: 0xC40C)
        var out: [[UInt8]] = []
        for step in 0..<120 {
            if restoring { try restore(&net) }
            switch choose.next() % 10 {
            case 0, 1: try net.sendA("a\(step)")
            case 2, 3: try net.sendB("b\(step)")
            case 4: if !net.toB.isEmpty { try net.deliverToB(net.toB.removeFirst()) }
            case 5: if !net.toA.isEmpty { try net.deliverToA(net.toA.removeFirst()) }
            case 6: if net.toB.count > 1 { try net.deliverToB(net.toB.remove(at: 1)) }  // out of order: a gap
            case 7: if let m = net.toA.first { try net.deliverToA(m) }                  // a duplicate later
            case 8: if !net.a.isRekeyBusy, !net.b.isRekeyBusy, step % 3 == 0 { net.toB.append(try net.a.requestRekey(using: &net.rng)) }
            default: if step % 40 == 0 { net.clock.now += 8 * 24 * 3600 }; try net.pump()
            }
            out += net.toA.map(\.data) + net.toB.map(\.data)
        }
        try net.pump()
        out.append(Array(net.gotA.joined(separator: ",").utf8))
        out.append(Array(net.gotB.joined(separator: ",").utf8))
        out.append(net.a.snapshot().copyBytes())
        out.append(net.b.snapshot().copyBytes())
        return out
    }

    @Test func restoringBeforeEveryStepChangesNothing() throws {
        let straight = try Self.plan(restoring: false)
        let restored = try Self.plan(restoring: true)
        #expect(straight.count == restored.count)
        #expect(straight == restored)
        // The plan did what it is meant to: messages delivered both ways and at least one re-key.
        let final = try SecretChat.Session(restoring: SnapshotBytes(copying: straight[straight.count - 2]), clock: { 0 })
        #expect(final.rekeyCount >= 1 && final.keychain.entries.count >= 1)
    }

    @Test func handshakeStatesRestore() throws {
        var rng = SplitMix64(seed: 0xAB)
        let clock = SCTestClock()
        let config = SecretChat.DHConfig.telegram()
        var a = try SecretChat.Session.requesting(config: config, clock: clock.clock, using: &rng)
        a = try SecretChat.Session(restoring: a.snapshot(), clock: clock.clock)          // requested
        let gA = try #require(a.gA)
        var b = SecretChat.Session.requested(gA: gA, clock: clock.clock)
        b = try SecretChat.Session(restoring: b.snapshot(), clock: clock.clock)          // accepting
        let (gB, fp) = try b.accept(config: config, using: &rng)
        b = try SecretChat.Session(restoring: b.snapshot(), clock: clock.clock)          // accepted
        _ = try b.handleEncryptedChat(gAOrB: gA, keyFingerprint: fp, using: &rng)
        _ = try a.handleEncryptedChat(gAOrB: gB, keyFingerprint: fp, using: &rng)
        #expect(a.fingerprint == b.fingerprint && a.fingerprint != nil)
        let t = try SecretChat.Session(restoring: { var x = a; x.terminate(); return x }().snapshot(), clock: clock.clock)
        #expect(t.status.state == "terminated")
    }

    static func goldenChat() throws -> SecretChat.Session {
        var net = try SCNet(seed: 0x601D)
        try net.pump()
        try net.sendA("one"); try net.sendA("two"); try net.sendB("three")
        if net.toB.count > 1 { try net.deliverToB(net.toB.remove(at: 1)) }   // "two" first: queued
        return net.b
    }

    @Test func goldenFile() throws {
        let chat = try Self.goldenChat()
        let g = try goldenSnapshot("MSCS-v1") { chat.snapshot() }
        let r = try SecretChat.Session(restoring: g, clock: { 1_700_000_000 })
        #expect(r.status.state == "sequenceBasedLayer" && r.side == .acceptor)
        #expect(r.sequence.queuedCount == 1 && r.keychain.entries.count == 1 && r.keyHash.count == 36)
        #expect(r.snapshot() == g)
        #expect(chat.snapshot() == g)
    }

    @Test func malformedSnapshots() throws {
        let bytes = try Self.goldenChat().snapshot().copyBytes()
        for n in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: RampartError.self) { _ = try SecretChat.Session(restoring: SnapshotBytes(copying: bytes[0..<n]), clock: { 0 }) }
        }
        var x = bytes; x[15] = 9
        #expect(throws: RampartError.invalidSnapshot(.invalidField("state"))) { _ = try SecretChat.Session(restoring: SnapshotBytes(copying: x), clock: { 0 }) }
        x = bytes; x[14] = 5
        #expect(throws: RampartError.invalidSnapshot(.invalidField("side"))) { _ = try SecretChat.Session(restoring: SnapshotBytes(copying: x), clock: { 0 }) }
    }

    /// The rule: a snapshot older than the newest generation recorded is refused; the newest restores.
    @Test func staleSnapshotsAreRefused() throws {
        var net = try SCNet(seed: 0x57A1)
        try net.pump()
        let old = net.a.snapshot()
        let g0 = net.a.generation
        try net.sendA("x")
        try net.pump()
        let newest = net.a.generation
        #expect(newest > g0)
        #expect(throws: RampartError.invalidSnapshot(.stale(generation: g0, newest: newest))) {
            _ = try SecretChat.Session(restoring: old, clock: net.clock.clock, newerThan: newest)
        }
        #expect(try SecretChat.Session(restoring: net.a.snapshot(), clock: net.clock.clock, newerThan: newest).generation == newest)
        // Why: the old snapshot numbers its next message with an out_seq_no already used, which the peer
        // drops as a duplicate.
        var stale = try SecretChat.Session(restoring: old, clock: net.clock.clock)
        let again = try stale.send(SCNet.text("lost", id: 777), using: &net.rng)
        let r = try net.b.receive(again[0].data, using: &net.rng)
        #expect(r.isDuplicate && r.messages.isEmpty)
    }
}
