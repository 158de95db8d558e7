// SecretChat.Session (Docs/MTProto.md §7.2–§7.6): two sessions in memory, creator and acceptor, through
// the handshake, 300 messages with re-keys, gaps, reordering, duplicates, concurrent RequestKeys, a lost
// CommitKey, AbortKey, and bad input that must leave a session unchanged.

import Testing
@testable import RampartMTProto
import Rampart
import RampartTestSupport

/// A settable clock for the week trigger.
final class SCTestClock: @unchecked Sendable {
    var now: Int64 = 1_700_000_000
    var clock: SecretChat.Clock { { [unowned self] in self.now } }
}

/// Two sessions and the messages in flight between them.
struct SCNet {
    var a: SecretChat.Session  // creator
    var b: SecretChat.Session  // acceptor
    var toA: [SecretChat.Session.Outgoing] = []
    var toB: [SecretChat.Session.Outgoing] = []
    var gotA: [String] = []
    var gotB: [String] = []
    var rng: SplitMix64
    let clock: SCTestClock
    var nextID: Int64 = 1

    /// A chat set up through the handshake states; the NotifyLayers are in flight.
    init(seed: UInt64) throws {
        rng = SplitMix64(seed: seed)
        clock = SCTestClock()
        let config = SecretChat.DHConfig.telegram()
        var a = try SecretChat.Session.requesting(config: config, clock: clock.clock, using: &rng)
        let gA = try #require(a.gA)
        var b = SecretChat.Session.requested(gA: gA, clock: clock.clock)
        #expect(b.status.state == "accepting")
        let (gB, fp) = try b.accept(config: config, using: &rng)
        #expect(b.status.state == "accepted")
        toA = try b.handleEncryptedChat(gAOrB: gA, keyFingerprint: fp, using: &rng)
        toB = try a.handleEncryptedChat(gAOrB: gB, keyFingerprint: fp, using: &rng)
        self.a = a
        self.b = b
    }

    static func text(_ s: String, id: Int64) -> SecretChat.DecryptedMessage {
        .message(SecretChat.PlainMessage(randomID: id, message: s))
    }

    static func texts(_ ms: [SecretChat.DecryptedMessageLayer]) -> [String] {
        ms.compactMap { if case .message(let p) = $0.message { p.message } else { nil } }
    }

    mutating func sendA(_ s: String) throws { nextID += 1; toB += try a.send(Self.text(s, id: nextID), using: &rng) }
    mutating func sendB(_ s: String) throws { nextID += 1; toA += try b.send(Self.text(s, id: nextID), using: &rng) }

    @discardableResult
    mutating func deliverToB(_ m: SecretChat.Session.Outgoing) throws -> SecretChat.Session.Received {
        let r = try b.receive(m.data, using: &rng)
        gotB += Self.texts(r.messages)
        toA += r.outgoing
        return r
    }

    @discardableResult
    mutating func deliverToA(_ m: SecretChat.Session.Outgoing) throws -> SecretChat.Session.Received {
        let r = try a.receive(m.data, using: &rng)
        gotA += Self.texts(r.messages)
        toB += r.outgoing
        return r
    }

    /// Delivers everything in flight, in order, until nothing is left.
    mutating func pump() throws {
        var rounds = 0
        while !toA.isEmpty || !toB.isEmpty {
            rounds += 1
            if rounds > 10_000 { Issue.record("pump does not settle"); return }
            if !toB.isEmpty { try deliverToB(toB.removeFirst()) }
            if !toA.isEmpty { try deliverToA(toA.removeFirst()) }
        }
    }

    /// The decoded layer of a message `s` sent, read with the sender's keys (test only).
    func open(_ m: SecretChat.Session.Outgoing, from s: SecretChat.Session) throws -> SecretChat.DecryptedMessageLayer {
        let opened = try SecretChat.Envelope.decrypt(m.data, keys: s.keychain.entries.map(\.key), sender: s.side, allowV1: true)
        guard case .layer(let l) = try SecretChat.DecryptedPayload.decode(opened.tl) else { throw SecretChatError.malformedTL("legacy") }
        return l
    }
}

/// Forces `s` to have sent RequestKey with `id` (internals: to choose the exchange ids).
func scForceRequest(_ s: inout SecretChat.Session, id: Int64, rng: inout SplitMix64) throws -> SecretChat.Session.Outgoing {
    let request = try SecretChat.KeyRequest(config: try #require(s.config), using: &rng)
    s.rekey = .requested(id: id, request)
    return try s.makeService(.requestKey(exchangeID: id, gA: request.gA), using: &rng)
}

/// A message from the creator with the given layer fields, encrypted with `key` (for crafted input).
func scCrafted(_ key: SecretChat.Key, inSeq: Int32, outSeq: Int32, layer: Int32 = 144, v1: Bool = false,
               rng: inout SplitMix64) throws -> [UInt8] {
    let l = try SecretChat.DecryptedMessageLayer(layer: layer, inSeqNo: inSeq, outSeqNo: outSeq,
                                                 message: SCNet.text("crafted", id: 99), using: &rng)
    return v1 ? try SecretChat.Envelope.encryptV1(l.serialized, key: key, using: &rng)
              : try SecretChat.Envelope.encrypt(l.serialized, key: key, sender: .creator, using: &rng)
}

@Suite struct SecretChatSessionTests {
    @Test func handshakeEstablishesBothSides() throws {
        var net = try SCNet(seed: 1)
        #expect(net.a.status.state == "sequenceBasedLayer")
        #expect(net.b.status.state == "sequenceBasedLayer")
        #expect(net.a.fingerprint != nil && net.a.fingerprint == net.b.fingerprint)
        #expect(net.a.keyHash.count == 36 && net.a.keyHash == net.b.keyHash)
        #expect(net.a.keyImage == net.b.keyImage)
        // Both announced their layer; the peer's layer rises from 46 to 144.
        #expect(net.a.layers.remote == 46)
        try net.pump()
        #expect(net.a.layers.remote == 144 && net.b.layers.remote == 144)
        #expect(!net.a.layers.allowsV1)
        #expect(net.gotA.isEmpty && net.gotB.isEmpty)
    }

    /// Both sides start at once: A writes texts before B's NotifyLayer reaches it, so they travel in
    /// v1 (A still takes B's layer to be 46) and arrive after B has seen A's layer 144. B takes them;
    /// once A has received B's NotifyLayer, A writes v2, and a v1 message claiming that knowledge
    /// (in_seq_no counting B's NotifyLayer) is refused.
    @Test func v1BeforeThePeerKnowsOurLayerIsAccepted() throws {
        var net = try SCNet(seed: 31)
        let notifyToB = net.toB
        net.toB = []
        try net.sendA("early 1")
        try net.sendA("early 2")
        let early = net.toB
        net.toB = []
        for m in notifyToB { try net.deliverToB(m) }
        #expect(!net.b.layers.allowsV1)
        for m in early { try net.deliverToB(m) }
        #expect(net.gotB == ["early 1", "early 2"])
        // A now hears B's NotifyLayer: from here on v2, and v1 is refused.
        try net.pump()
        try net.sendA("late")
        let late = net.toB
        net.toB = []
        let key = try #require(net.b.keychain.entries.first?.key)
        let before = net.b.status
        let downgrade = try scCrafted(key, inSeq: 2, outSeq: 7, v1: true, rng: &net.rng)
        #expect(throws: SecretChatError.rejectedMessage) { _ = try net.b.receive(downgrade, using: &net.rng) }
        #expect(net.b.status == before)
        for m in late { try net.deliverToB(m) }
        #expect(net.gotB == ["early 1", "early 2", "late"])
    }

    /// Unacknowledged sent messages are bounded: at the bound sending is a typed error that changes
    /// nothing, and once the peer acknowledges, it works again.
    @Test func unacknowledgedMessagesAreBounded() throws {
        var net = try SCNet(seed: 32)
        try net.pump()
        let filler = SecretChat.Session.Outgoing(data: [], outSeqNo: 0, isService: false, isResend: false)
        for i in 0..<Int32(SecretChat.Session.maxUnacknowledged - net.a.stored.count) { net.a.stored[1_000_000 + i] = filler }
        #expect(net.a.stored.count == SecretChat.Session.maxUnacknowledged)
        let before = net.a.status
        #expect(throws: SecretChatError.self) { try net.sendA("one too many") }
        #expect(net.a.status == before)
        net.a.stored[1_000_000] = nil
        try net.sendA("fits")
        try net.pump()
        #expect(net.gotB == ["fits"])
    }

    /// A text too large for TL (a 16 MiB string needs a length of 2^24, one more than TL holds) is a
    /// typed error that changes nothing, not a trap in the TL writer; a text that fits in the string
    /// but makes the layer longer than 16 MiB is refused by the envelope the same way.
    @Test func oversizedTextIsATypedErrorThatChangesNothing() throws {
        var net = try SCNet(seed: 33)
        try net.pump()
        let before = net.a.status
        for n in [1 << 24, (1 << 24) - 1] {
            let huge = SCNet.text(String(repeating: "a", count: n), id: 77)
            #expect(throws: SecretChatError.self) { _ = try net.a.send(huge, using: &net.rng) }
            do {
                _ = try net.a.send(huge, using: &net.rng)
            } catch .invalidPlaintext {
            } catch {
                Issue.record("\(n): \(error)")
            }
            #expect(net.a.status == before)
        }
        try net.sendA("still works")
        try net.pump()
        #expect(net.gotB == ["still works"])
    }

    @Test func handshakeFingerprintMismatchChangesNothing() throws {
        var rng = SplitMix64(seed: 2)
        let clock = SCTestClock()
        let config = SecretChat.DHConfig.telegram()
        var a = try SecretChat.Session.requesting(config: config, clock: clock.clock, using: &rng)
        var b = SecretChat.Session.requested(gA: try #require(a.gA), clock: clock.clock)
        let (gB, fp) = try b.accept(config: config, using: &rng)
        let before = a.status
        #expect(throws: SecretChatError.fingerprintMismatch) { _ = try a.handleEncryptedChat(gAOrB: gB, keyFingerprint: fp ^ 1, using: &rng) }
        #expect(a.status == before && a.gA != nil)
        #expect(throws: SecretChatError.fingerprintMismatch) { _ = try b.handleEncryptedChat(gAOrB: a.gA!, keyFingerprint: fp ^ 1, using: &rng) }
        #expect(throws: SecretChatError.self) { _ = try b.accept(config: config, using: &rng) }
        #expect(throws: SecretChatError.self) { _ = try b.send(SCNet.text("x", id: 1), using: &rng) }
        _ = try a.handleEncryptedChat(gAOrB: gB, keyFingerprint: fp, using: &rng)
        a.terminate()
        #expect(a.status.state == "terminated" && a.keychain.entries.isEmpty)
        #expect(throws: SecretChatError.self) { _ = try a.send(SCNet.text("x", id: 1), using: &rng) }
    }

    @Test func threeHundredMessagesWithTwoRekeys() throws {
        var net = try SCNet(seed: 3)
        try net.pump()
        let original = try #require(net.a.fingerprint)
        let hash = net.a.keyHash
        var fingerprints = [original]
        var firstRekeyAt: Int?
        var sent: [String] = [], sentB: [String] = []
        var firstUnderOriginal: [UInt8] = []
        for i in 0..<300 {
            let s = "m\(i)"
            if i % 2 == 0 { try net.sendA(s); sent.append(s) } else { try net.sendB(s); sentB.append(s) }
            if i == 0 { firstUnderOriginal = try #require(net.toB.last?.data) }
            try net.pump()
            let fp = try #require(net.a.fingerprint)
            #expect(net.b.fingerprint == fp, "both sides hold the same key after message \(i)")
            if fp != fingerprints.last! {
                fingerprints.append(fp)
                if firstRekeyAt == nil { firstRekeyAt = i }
            }
        }
        #expect(net.gotB == sent)
        #expect(net.gotA == sentB)
        #expect(net.a.rekeyCount >= 2 && net.a.rekeyCount == net.b.rekeyCount)
        #expect(Set(fingerprints).count == fingerprints.count && fingerprints.count >= 3)
        // More than 100 uses: the first re-key starts at about message 100.
        let first = try #require(firstRekeyAt)
        #expect(first >= 99 && first <= 110, "first re-key at \(first)")
        // The key image stays the original key's, on both sides.
        #expect(net.a.keyHash == hash && net.b.keyHash == hash)
        #expect(net.a.keyImage == net.b.keyImage)
        // Old keys are gone once nothing needs them.
        #expect(net.a.previousFingerprint == nil && net.b.previousFingerprint == nil)
        #expect(net.a.keychain.entries.count == 1 && net.b.keychain.entries.count == 1)
        #expect(net.a.rekeyPhase == .idle && net.b.rekeyPhase == .idle)
        // Only the current and the previous key are tried: a replay under the original key is refused
        // before sequence numbers are even looked at.
        let before = net.b.status
        #expect(throws: SecretChatError.rejectedMessage) { _ = try net.b.receive(firstUnderOriginal, using: &net.rng) }
        #expect(net.b.status == before)
    }

    @Test func gapAsksForTheExactRangeAndRecovers() throws {
        var net = try SCNet(seed: 4)
        try net.pump()
        try net.sendA("one"); try net.sendA("two"); try net.sendA("three"); try net.sendA("four")
        let msgs = net.toB
        net.toB = []
        #expect(msgs.count == 4)
        try net.deliverToB(msgs[0])
        // Drop "two" and "three".
        let r = try net.deliverToB(msgs[3])
        #expect(r.messages.isEmpty && net.b.status.queuedCount == 1)
        let request = try #require(r.outgoing.first)
        let layer = try net.open(request, from: net.b)
        #expect(layer.message.action == .resend(startSeqNo: msgs[1].outSeqNo, endSeqNo: msgs[2].outSeqNo))
        // The sender resends the same bytes.
        net.toA = []
        let back = try net.a.receive(request.data, using: &net.rng)
        #expect(back.outgoing.count == 2 && back.outgoing.allSatisfy(\.isResend))
        #expect(back.outgoing.map(\.data) == [msgs[1].data, msgs[2].data])
        for m in back.outgoing { try net.deliverToB(m) }
        #expect(net.gotB == ["one", "two", "three", "four"])
        #expect(net.b.status.queuedCount == 0)
    }

    @Test func reorderedMessagesAreDeliveredInOrder() throws {
        var net = try SCNet(seed: 5)
        try net.pump()
        for i in 0..<6 { try net.sendB("r\(i)") }
        let msgs = net.toA
        net.toA = []
        for m in msgs.reversed() { try net.deliverToA(m) }
        #expect(net.gotA == (0..<6).map { "r\($0)" })
        // One Resend was asked for (the first hole); late arrivals fill it without another.
        #expect(net.toB.count == 1)
    }

    @Test func duplicatesAreDroppedWithoutChange() throws {
        var net = try SCNet(seed: 6)
        try net.pump()
        try net.sendA("once")
        let m = net.toB.removeFirst()
        try net.deliverToB(m)
        let before = net.b.status
        let r = try net.deliverToB(m)
        #expect(r.isDuplicate && r.messages.isEmpty && r.outgoing.isEmpty)
        #expect(net.b.status == before)
        #expect(net.gotB == ["once"])
    }

    @Test func wrongParityAbortsAndChangesNothing() throws {
        var net = try SCNet(seed: 7)
        try net.pump()
        let key = try #require(net.b.keychain.entries.first?.key)
        let before = net.b.status
        // The creator sends odd out_seq_no and even in_seq_no: 2 and 1 are both wrong.
        let bad = try scCrafted(key, inSeq: 1, outSeq: 2, rng: &net.rng)
        #expect(throws: SecretChatError.protocolViolation("sequence number parity")) { _ = try net.b.receive(bad, using: &net.rng) }
        #expect(net.b.status == before)
        // The right parity at the right place is accepted.
        let good = try scCrafted(key, inSeq: 2, outSeq: 3, rng: &net.rng)
        let r = try net.b.receive(good, using: &net.rng)
        #expect(SCNet.texts(r.messages) == ["crafted"])
    }

    @Test func badBytesAreTypedErrorsAndChangeNothing() throws {
        var net = try SCNet(seed: 8)
        try net.pump()
        try net.sendA("payload")
        let m = net.toB.removeFirst()
        let before = net.b.status
        var inputs: [[UInt8]] = [[], [1, 2, 3], Array(m.data.prefix(40)), Array(m.data.dropLast(16))]
        for i in [0, 8, 23, 24, m.data.count - 1] {
            var t = m.data
            t[i] ^= 0x01
            inputs.append(t)
        }
        var g = SplitMix64(seed: 80)
        for _ in 0..<20 { inputs.append(randomBytes(count: 24 + 16 * Int(g.next() % 8 + 1), using: &g)) }
        for input in inputs {
            #expect(throws: SecretChatError.rejectedMessage) { _ = try net.b.receive(input, using: &net.rng) }
            #expect(net.b.status == before)
        }
        // Under a key nobody holds.
        var kr = SplitMix64(seed: 81)
        let stranger = try SecretChat.Key(randomBytes(count: 256, using: &kr))
        let foreign = try scCrafted(stranger, inSeq: 2, outSeq: 3, rng: &net.rng)
        #expect(throws: SecretChatError.rejectedMessage) { _ = try net.b.receive(foreign, using: &net.rng) }
        #expect(net.b.status == before)
        // v1 is refused once both sides are at layer 73 or more.
        let key = try #require(net.b.keychain.entries.first?.key)
        let v1 = try scCrafted(key, inSeq: 2, outSeq: 3, v1: true, rng: &net.rng)
        #expect(throws: SecretChatError.rejectedMessage) { _ = try net.b.receive(v1, using: &net.rng) }
        #expect(net.b.status == before)
        // The genuine message still goes through.
        try net.deliverToB(m)
        #expect(net.gotB == ["payload"])
    }

    /// A RequestKey from each side before either AcceptKey: signed comparison of exchange ids.
    @Test(arguments: [(Int64(5), Int64(-3)), (Int64(-1), Int64(1)), (Int64(42), Int64(42))])
    func concurrentRequestKeys(ids: (Int64, Int64)) throws {
        var net = try SCNet(seed: 9)
        try net.pump()
        let original = try #require(net.a.fingerprint)
        net.toB.append(try scForceRequest(&net.a, id: ids.0, rng: &net.rng))
        net.toA.append(try scForceRequest(&net.b, id: ids.1, rng: &net.rng))
        let ra = try net.deliverToA(net.toA.removeFirst())
        let rb = try net.deliverToB(net.toB.removeFirst())
        if ids.0 == ids.1 {
            // Both drop both, silently.
            #expect(ra.outgoing.isEmpty && rb.outgoing.isEmpty)
            #expect(net.a.rekeyPhase == .idle && net.b.rekeyPhase == .idle)
            try net.pump()
            #expect(net.a.fingerprint == original && net.b.fingerprint == original)
            return
        }
        let aWins = ids.0 > ids.1
        // The larger side drops the other's request without answering; the smaller accepts.
        #expect((aWins ? ra : rb).outgoing.isEmpty)
        #expect((aWins ? rb : ra).outgoing.count == 1)
        #expect(net.a.rekeyPhase == (aWins ? .requested(exchangeID: ids.0) : .accepted(exchangeID: ids.1)))
        #expect(net.b.rekeyPhase == (aWins ? .accepted(exchangeID: ids.0) : .requested(exchangeID: ids.1)))
        try net.pump()
        #expect(net.a.fingerprint != original && net.a.fingerprint == net.b.fingerprint)
        #expect(net.a.rekeyPhase == .idle && net.b.rekeyPhase == .idle)
        try net.sendA("after"); try net.sendB("after too"); try net.pump()
        #expect(net.gotB == ["after"] && net.gotA == ["after too"])
        #expect(net.a.previousFingerprint == nil && net.b.previousFingerprint == nil)
    }

    @Test func lostCommitKeySwitchesOnTheFirstMessageUnderTheNewKey() throws {
        var net = try SCNet(seed: 10)
        try net.pump()
        let original = try #require(net.a.fingerprint)
        net.toB.append(try net.a.requestRekey(using: &net.rng))
        try net.deliverToB(net.toB.removeFirst())           // RequestKey → AcceptKey
        #expect(net.b.rekeyPhase != .idle)
        let commitRound = try net.deliverToA(net.toA.removeFirst())  // AcceptKey → CommitKey, A switches
        #expect(commitRound.keyChanged)
        let newKey = try #require(net.a.fingerprint)
        #expect(newKey != original && net.a.previousFingerprint == original)
        let commit = net.toB.removeFirst()                   // lost
        #expect(try net.open(commit, from: net.a).message.action == .commitKey(exchangeID: { if case .accepted(let id) = net.b.rekeyPhase { id } else { 0 } }(), keyFingerprint: newKey))
        try net.sendA("under the new key")
        let r = try net.deliverToB(net.toB.removeFirst())
        #expect(r.keyChanged && net.b.fingerprint == newKey)
        #expect(r.messages.isEmpty)                           // queued behind the lost CommitKey
        #expect(net.b.previousFingerprint == original)       // still needed for the gap
        try net.pump()                                        // Resend → CommitKey again (old key) → delivered
        #expect(net.gotB == ["under the new key"])
        #expect(net.a.fingerprint == newKey && net.b.fingerprint == newKey)
        #expect(net.a.previousFingerprint == nil && net.b.previousFingerprint == nil)
        #expect(net.a.keychain.entries.map(\.fingerprint) == [newKey])
        #expect(net.b.keychain.entries.map(\.fingerprint) == [newKey])
    }

    @Test func initiatorKeepsTheOldKeyUntilTheAcceptorsGapIsFilled() throws {
        var net = try SCNet(seed: 15)
        try net.pump()
        let original = try #require(net.a.fingerprint)
        try net.deliverToB(try net.a.requestRekey(using: &net.rng))   // → AcceptKey
        try net.sendB("b-old")                                         // still under the old key
        #expect(net.toA.count == 2)
        let lost = net.toA.removeLast()
        try net.deliverToA(net.toA.removeFirst())                     // AcceptKey → CommitKey, A switches
        let newKey = try #require(net.a.fingerprint)
        #expect(newKey != original)
        let commit = try net.deliverToB(net.toB.removeFirst())        // B switches, nothing to send: Noop
        #expect(commit.keyChanged && commit.outgoing.count == 1)
        #expect(try net.open(commit.outgoing[0], from: net.b).message.action == .noop)
        let noop = try net.deliverToA(net.toA.removeFirst())          // under the new key, behind a gap
        #expect(noop.outgoing.count == 1 && net.a.previousFingerprint == original)
        let resend = try net.deliverToB(net.toB.removeFirst())        // Resend → "b-old" again, old key
        #expect(resend.outgoing.map(\.data) == [lost.data] && resend.outgoing[0].isResend)
        try net.pump()
        #expect(net.gotA == ["b-old"])
        #expect(net.a.previousFingerprint == nil && net.a.keychain.entries.map(\.fingerprint) == [newKey])
    }

    @Test func abortKeyCancelsTheExchange() throws {
        var net = try SCNet(seed: 11)
        try net.pump()
        let original = try #require(net.a.fingerprint)
        net.toB.append(try net.a.requestRekey(using: &net.rng))
        #expect(throws: SecretChatError.self) { _ = try net.a.requestRekey(using: &net.rng) }  // never two at once
        #expect(throws: SecretChatError.self) { _ = try net.b.abortRekey(using: &net.rng) }
        net.toB.append(try net.a.abortRekey(using: &net.rng))
        #expect(net.a.rekeyPhase == .idle)
        try net.deliverToB(net.toB.removeFirst())   // RequestKey: B accepts
        if case .accepted = net.b.rekeyPhase {} else { Issue.record("B did not accept") }
        try net.deliverToB(net.toB.removeFirst())   // AbortKey
        #expect(net.b.rekeyPhase == .idle)
        try net.pump()                                // A ignores the AcceptKey of an aborted exchange
        #expect(net.a.fingerprint == original && net.b.fingerprint == original)
        #expect(net.a.keychain.entries.count == 1 && net.b.keychain.entries.count == 1)
        try net.sendB("still fine"); try net.pump()
        #expect(net.gotA == ["still fine"])
    }

    @Test func requestKeyWhileAnotherIsAcceptedIsAborted() throws {
        var net = try SCNet(seed: 13)
        try net.pump()
        let first = try net.a.requestRekey(using: &net.rng)
        let accepted = try net.deliverToB(first)
        #expect(accepted.outgoing.count == 1)
        guard case .accepted(let id) = net.b.rekeyPhase else { Issue.record("B did not accept"); return }
        // A second RequestKey (forged through A's internals) while B's AcceptKey is outstanding.
        let second = try scForceRequest(&net.a, id: id &+ 1, rng: &net.rng)
        let r = try net.deliverToB(second)
        let reply = try #require(r.outgoing.first)
        #expect(try net.open(reply, from: net.b).message.action == .abortKey(exchangeID: id &+ 1))
        #expect(net.b.rekeyPhase == .accepted(exchangeID: id))
    }

    @Test func establishedFromAnExchangeDoneElsewhere() throws {
        var rng = SplitMix64(seed: 14)
        let config = SecretChat.DHConfig.telegram()
        let request = try SecretChat.KeyRequest(config: config, using: &rng)
        let acceptance = try SecretChat.KeyAcceptance(gA: request.gA, config: config, using: &rng)
        let key = try request.complete(gB: acceptance.gB, keyFingerprint: acceptance.keyFingerprint)
        let clock = SCTestClock()
        var (a, toB) = try SecretChat.Session.established(key: key, side: .creator, config: config, clock: clock.clock, using: &rng)
        var (b, toA) = try SecretChat.Session.established(key: acceptance.key, side: .acceptor, config: config, clock: clock.clock, using: &rng)
        #expect(a.keyHash == b.keyHash && a.fingerprint == b.fingerprint)
        for m in toB { toA += try b.receive(m.data, using: &rng).outgoing }
        for m in toA { _ = try a.receive(m.data, using: &rng) }
        toB = try a.send(SCNet.text("hello", id: 7), using: &rng)
        let r = try b.receive(toB[0].data, using: &rng)
        #expect(SCNet.texts(r.messages) == ["hello"])
        // x follows the author: B's own message (x = 8) does not open as one from the creator (x = 0).
        let own = try b.send(SCNet.text("mine", id: 8), using: &rng)
        let before = b.status
        #expect(throws: SecretChatError.rejectedMessage) { _ = try b.receive(own[0].data, using: &rng) }
        #expect(b.status == before)
    }

    @Test func weekOldKeyIsReplaced() throws {
        var net = try SCNet(seed: 12)
        try net.pump()
        let original = try #require(net.a.fingerprint)
        try net.sendA("x"); try net.pump()
        #expect(!net.a.isRekeyDue)
        net.clock.now += SecretChat.Session.rekeyAge + 1
        #expect(net.a.isRekeyDue)
        try net.sendA("y")
        #expect(net.toB.count == 2)   // RequestKey first
        try net.pump()
        #expect(net.a.fingerprint != original && net.a.fingerprint == net.b.fingerprint)
        #expect(net.gotB == ["x", "y"])
        // A clock that jumps to the far end of its range is no trap and no trigger.
        net.clock.now = .min
        #expect(!net.a.isRekeyDue)
        try net.sendA("z"); try net.pump()
        #expect(net.gotB == ["x", "y", "z"])
    }

    @Test func keychainPicksTheLatestValidKey() throws {
        var chain = SecretChat.Keychain()
        #expect(chain.latestKey(validFor: 0) == nil)
        let k0 = scRandomKey(1), k1 = scRandomKey(2), k2 = scRandomKey(3)
        chain.add(k0, validity: .indefinite, createdAt: 0)
        chain.add(k1, validity: .sequenceBasedIndexRange(fromCanonicalIndex: 10), createdAt: 1)
        chain.add(k2, validity: .sequenceBasedIndexRange(fromCanonicalIndex: 20), createdAt: 2)
        chain.add(k2, validity: .indefinite, createdAt: 3)
        #expect(chain.entries.count == 3)
        #expect(chain.latestKey(validFor: 5)?.key == k0)
        #expect(chain.latestKey(validFor: 10)?.key == k1)
        #expect(chain.latestKey(validFor: 19)?.key == k1)
        #expect(chain.latestKey(validFor: 25)?.key == k2)
        #expect(chain.key(fingerprint: k1.fingerprint)?.key == k1)
        chain.recordUse(fingerprint: k1.fingerprint, encrypted: true)
        chain.recordUse(fingerprint: k1.fingerprint, encrypted: false)
        #expect(chain.key(fingerprint: k1.fingerprint)?.useCount == 2)
        #expect(chain.key(fingerprint: k1.fingerprint)?.encryptedCount == 1)
        let removed = chain.retire(fingerprint: k1.fingerprint)
        let again = chain.retire(fingerprint: k1.fingerprint)
        #expect(removed && !again)
        #expect(chain.latestKey(validFor: 15)?.key == k0)
    }
}
