// Ibex above one session (Docs/Threema.md §1.6): two processors talk through real e2e messages of type
// 0xa0 (EndToEnd.seal/open), through every state, with lost and reordered messages, the race of two
// Inits, Reject and Terminate, the 24-hour refresh and the version upgrade steps.

import Rampart
import RampartTestSupport
import Testing
@_spi(Testing) @testable import RampartThreema

/// One side of a conversation: an Ibex processor plus the e2e layer (keys and nonce store).
private struct Party {
    let identity: ThreemaIdentity
    let peer: ThreemaContact
    var ibex: Ibex.Processor<Ibex.InMemorySessionStore>
    var nonces = InMemoryNonceStore()
    var rng: SplitMix64
    var received: [Ibex.Event] = []

    init(_ identity: ThreemaIdentity, _ peer: ThreemaContact, seed: UInt64,
         versions: Ibex.VersionRange = .init(min: Ibex.Versions.v1_0, max: Ibex.Versions.v1_2)) {
        self.identity = identity
        self.peer = peer
        ibex = Ibex.Processor(identity: identity, store: Ibex.InMemorySessionStore(), versions: versions)
        rng = SplitMix64(seed: seed)
    }

    var sessions: [Ibex.Session] { ibex.store.sessions(peer: peer.id) }

    /// Seals each outgoing Ibex message as an e2e message (0xa0 or plain) on the wire.
    mutating func wire(_ messages: [Ibex.OutgoingMessage]) throws -> [[UInt8]] {
        try messages.map { m in
            let out = OutgoingMessage(type: m.type, body: try m.body(), createdAt: 1_700_000_000_000, using: &rng)
            return try EndToEnd.seal(out, from: identity, keys: PairKeys(identity: identity, contact: peer), using: &rng)
        }
    }

    mutating func send(_ type: MessageType, _ text: String, group: Ibex.GroupIdentity? = nil, now: UInt64 = 1_000) throws -> [[UInt8]] {
        let messages = try ibex.encapsulate(type: type, body: Array(text.utf8), to: peer, groupIdentity: group, now: now, using: &rng)
        return try wire(messages)
    }

    /// Opens one wire message; Ibex envelopes go through the processor, replies are sealed and
    /// returned. Plain messages are recorded as a `.message` event with DH type nil-equivalent.
    @discardableResult
    mutating func receive(_ bytes: [UInt8], now: UInt64 = 1_000) throws -> [[UInt8]] {
        let env = try MessageEnvelope(parsing: bytes)
        let opened = try env.open(as: identity, keys: PairKeys(identity: identity, contact: peer), nonceStore: &nonces)
        guard opened.container.type == .forwardSecurityEnvelope else {
            received.append(.message(type: opened.container.type, body: opened.container.body, groupIdentity: nil, dhType: .twoDH))
            plain.append(opened.container.type)
            return []
        }
        let r = try ibex.receive(body: opened.container.body, from: peer, messageID: opened.messageID, now: now, using: &rng)
        received.append(r.event)
        return try wire(r.replies.map { .envelope($0) })
    }

    var plain: [MessageType] = []

    /// The texts of the delivered encapsulated messages, in order.
    var texts: [String] {
        received.compactMap {
            if case .message(.text, let body, _, _) = $0 { return String(decoding: body, as: UTF8.self) }
            return nil
        }
    }
}

private func deliver(_ messages: [[UInt8]], to party: inout Party, now: UInt64 = 1_000) throws -> [[UInt8]] {
    var replies: [[UInt8]] = []
    for m in messages { replies += try party.receive(m, now: now) }
    return replies
}

private func lastEvent(_ p: Party) -> Ibex.Event? { p.received.last }

@Suite struct IbexProcessorTests {
    typealias V = IbexVectors

    @Test func establishThroughEveryState() throws {
        var a = Party(V.alice, V.bob.contact, seed: 1)
        var b = Party(V.bob, V.alice.contact, seed: 2)

        // Alice's first message: Init, then the text in 2DH (L20).
        let first = try a.send(.text, "one")
        #expect(first.count == 2)
        #expect(a.sessions.map(\.state) == [.l20])
        // Bob: Init → session started and accepted at once (R24), the text decrypts (2DH).
        let replies = try deliver(first, to: &b)
        #expect(replies.count == 1)                                  // the Accept
        #expect(b.received.first == .sessionStarted)
        #expect(b.texts == ["one"])
        #expect(b.sessions.map(\.state) == [.r24])
        guard case .message(_, _, _, let dh) = lastEvent(b) else { Issue.record("no message"); return }
        #expect(dh == .twoDH)

        // Alice sends again before the Accept arrives: still 2DH.
        let second = try a.send(.text, "two")
        // Bob answers in 4DH (R24), Alice gets Accept first (→ RL44), then the 4DH text.
        let answer = try b.send(.text, "three")
        #expect(answer.count == 1)
        _ = try deliver(replies + answer, to: &a)
        #expect(a.received.count == 2 && a.received.first == .sessionEstablished)
        #expect(a.texts == ["three"])
        #expect(a.sessions.map(\.state) == [.rl44])
        // The in-flight 2DH message still decrypts in R24.
        _ = try deliver(second, to: &b)
        #expect(b.texts == ["one", "two"])
        #expect(b.sessions.map(\.state) == [.r24])
        // Alice's first 4DH message moves Bob to RL44 (2DH ratchet gone).
        _ = try deliver(try a.send(.text, "four"), to: &b)
        #expect(b.texts == ["one", "two", "four"])
        #expect(b.sessions.map(\.state) == [.rl44])
        #expect(b.sessions.first?.peer2DH == nil)
        #expect(a.sessions.first?.sessionID == b.sessions.first?.sessionID)
        // The server sees 0xa0 messages only: nothing plain went over the wire.
        #expect(a.plain.isEmpty && b.plain.isEmpty)
    }

    @Test func lostAndReorderedMessages() throws {
        var a = Party(V.alice, V.bob.contact, seed: 3)
        var b = Party(V.bob, V.alice.contact, seed: 4)
        _ = try deliver(try deliver(try a.send(.text, "hello"), to: &b), to: &a)   // RL44 for Alice
        var batch: [[[UInt8]]] = []
        for i in 0..<6 { batch.append(try a.send(.text, "m\(i)")) }
        // m1 and m3 are lost; m5 arrives before m4.
        _ = try deliver(batch[0] + batch[2] + batch[5] + batch[4], to: &b)
        #expect(b.texts == ["hello", "m0", "m2", "m5"])
        // m4 came after m5: its key is gone, so it is dropped as a duplicate (no Reject, session intact).
        #expect(lastEvent(b) == .ignored(.duplicate))
        #expect(b.sessions.count == 1)
        _ = try deliver(try a.send(.text, "after"), to: &b)
        #expect(b.texts.last == "after")
        // A gap beyond MAX_COUNTER_INCREMENT: Reject with STATE_MISMATCH, the session removed.
        var s = try #require(a.ibex.store.sessions(peer: V.bob.id).first)
        for _ in 0..<25_001 { _ = try s.encrypt(type: 1, body: []) }
        let far = try s.encrypt(type: 1, body: Array("far".utf8))
        let replies = try deliver(try a.wire([.envelope(far)]), to: &b)
        guard case .refused(.ibex(.counterTooFarAhead)) = lastEvent(b) else { Issue.record("not refused"); return }
        #expect(b.sessions.isEmpty)
        #expect(replies.count == 1)
        _ = try deliver(replies, to: &a)
        guard case .rejected(let r, let existed) = lastEvent(a) else { Issue.record("no reject"); return }
        #expect(r.cause == .stateMismatch && existed)
        #expect(a.sessions.isEmpty)
    }

    @Test func raceConvergesOnLowestSessionID() throws {
        for seeds in [(UInt64(5), UInt64(6)), (7, 8), (9, 10), (11, 12)] {
            var a = Party(V.alice, V.bob.contact, seed: seeds.0)
            var b = Party(V.bob, V.alice.contact, seed: seeds.1)
            // Both start a session before seeing the other's Init.
            let fromA = try a.send(.text, "a1")
            let fromB = try b.send(.text, "b1")
            let aID = a.sessions[0].sessionID, bID = b.sessions[0].sessionID
            let low = aID.lexicographicallyPrecedes(bID) ? aID : bID
            let repliesB = try deliver(fromA, to: &b)
            let repliesA = try deliver(fromB, to: &a)
            #expect(a.sessions.count == 2 && b.sessions.count == 2)
            _ = try deliver(repliesB, to: &a)
            _ = try deliver(repliesA, to: &b)
            // A few rounds of conversation; nothing may be lost.
            var expectedA = ["b1"], expectedB = ["a1"]
            for round in 0..<4 {
                let ma = try a.send(.text, "a\(round + 2)")
                expectedB.append("a\(round + 2)")
                _ = try deliver(try deliver(ma, to: &b), to: &a)
                let mb = try b.send(.text, "b\(round + 2)")
                expectedA.append("b\(round + 2)")
                _ = try deliver(try deliver(mb, to: &a), to: &b)
            }
            #expect(a.texts == expectedA)
            #expect(b.texts == expectedB)
            // Both send in the one bidirectional session with the lower ID; every other
            // bidirectional one was removed (a unidirectional leftover may stay until it is used).
            #expect(a.ibex.bestSession(for: V.bob.id)?.sessionID == low)
            #expect(b.ibex.bestSession(for: V.alice.id)?.sessionID == low)
            #expect(a.sessions.filter { $0.state == .rl44 }.map(\.sessionID) == [low])
            #expect(b.sessions.filter { $0.state == .rl44 }.map(\.sessionID) == [low])
        }
    }

    @Test func lostSessionIsRejectedAndRestarted() throws {
        var a = Party(V.alice, V.bob.contact, seed: 13)
        var b = Party(V.bob, V.alice.contact, seed: 14)
        _ = try deliver(try deliver(try a.send(.text, "x"), to: &b), to: &a)
        let oldID = a.sessions[0].sessionID
        // Bob loses his sessions (reinstall): the next message gets UNKNOWN_SESSION.
        b.ibex.store = Ibex.InMemorySessionStore()
        let m = try a.send(.text, "lost")
        let sentID = try MessageEnvelope(parsing: m[0]).messageID
        let reject = try deliver(m, to: &b)
        #expect(lastEvent(b) == .refused(.ibex(.unknownSession)))
        #expect(b.sessions.isEmpty)
        _ = try deliver(reject, to: &a)
        #expect(lastEvent(a) == .rejected(Ibex.Reject(messageID: sentID, cause: .unknownSession), sessionExisted: true))
        #expect(a.sessions.isEmpty)
        // The re-send starts a fresh session.
        _ = try deliver(try a.send(.text, "again"), to: &b)
        #expect(b.texts.last == "again")
        #expect(a.sessions[0].sessionID != oldID)
    }

    @Test func terminateAndUnknownAccept() throws {
        var a = Party(V.alice, V.bob.contact, seed: 15)
        var b = Party(V.bob, V.alice.contact, seed: 16)
        let accept = try deliver(try a.send(.text, "x"), to: &b)
        let terms = a.ibex.terminate(peer: V.bob.id, cause: .reset)
        #expect(terms.count == 1 && a.sessions.isEmpty)
        // The Accept for the terminated session: Terminate(UNKNOWN_SESSION) back.
        let back = try deliver(accept, to: &a)
        #expect(lastEvent(a) == .ignored(.unknownSession))
        #expect(back.count == 1)
        _ = try deliver(try a.wire(terms.map { .envelope($0) }), to: &b)
        #expect(lastEvent(b) == .terminated(.reset, sessionExisted: true))
        #expect(b.sessions.isEmpty)
        _ = try deliver(back, to: &b)
        #expect(lastEvent(b) == .terminated(.unknownSession, sessionExisted: false))
    }

    @Test func repeatedInitAndBadOffersChangeNothing() throws {
        var a = Party(V.alice, V.bob.contact, seed: 17)
        var b = Party(V.bob, V.alice.contact, seed: 18)
        let first = try a.send(.text, "x")
        _ = try deliver([first[0]], to: &b)
        let before = b.sessions.map(\.sessionID)
        // The same Init again, in a new e2e message.
        let initEnvelope = try Ibex.Envelope(decoding: try MessageEnvelope(parsing: first[0])
            .open(keys: PairKeys(identity: V.bob, contact: V.alice.contact)).container.body)
        var rng = SplitMix64(seed: 99)
        let r = b.ibex.receive(initEnvelope, from: V.alice.contact, messageID: 1, now: 1, using: &rng)
        #expect(r.event == .ignored(.repeatedInit) && r.replies.isEmpty)
        #expect(b.sessions.map(\.sessionID) == before)
        // An Init with a version range we share nothing with, or a small-order key.
        var sid = [UInt8](repeating: 7, count: 16)
        let future = Ibex.KeyOffer(ephemeralPublicKey: Array(V.aliceFSSK.publicKey.rawRepresentation),
                                   supportedVersion: .init(min: 0x0200, max: 0x0201))
        #expect(b.ibex.receive(.init(sessionID: sid, content: .initiate(future)), from: V.alice.contact,
                               messageID: 2, now: 1, using: &rng).event == .ignored(.noCommonVersion))
        sid[0] = 8
        let zero = Ibex.KeyOffer(ephemeralPublicKey: [UInt8](repeating: 0, count: 32), supportedVersion: nil)
        #expect(b.ibex.receive(.init(sessionID: sid, content: .initiate(zero)), from: V.alice.contact,
                               messageID: 3, now: 1, using: &rng).event == .ignored(.invalidEphemeralKey))
        #expect(b.sessions.map(\.sessionID) == before)
        // Undecodable 0xa0 bodies: a typed error, the store unchanged.
        #expect(throws: ThreemaError.self) {
            _ = try b.ibex.receive(body: [0xff, 0x01], from: V.alice.contact, messageID: 4, now: 1, using: &rng)
        }
        #expect(b.sessions.map(\.sessionID) == before)
    }

    @Test func refreshAfter24Hours() throws {
        var a = Party(V.alice, V.bob.contact, seed: 19)
        var b = Party(V.bob, V.alice.contact, seed: 20)
        let day = Ibex.Processor<Ibex.InMemorySessionStore>.refreshInterval
        // No session: refresh starts one (Init only).
        let start = try a.wire(try a.ibex.refresh(peer: V.bob.contact, now: 1_000, using: &a.rng))
        #expect(start.count == 1)
        _ = try deliver(try deliver(start, to: &b, now: 1_000), to: &a, now: 1_000)
        // Fresh: nothing to send.
        #expect(try a.ibex.refresh(peer: V.bob.contact, now: 1_000 + day - 1, using: &a.rng).isEmpty)
        // Stale: one empty (0xfc) message, which the peer takes without delivering anything.
        let refreshed = try a.ibex.refresh(peer: V.bob.contact, now: 1_000 + day, using: &a.rng)
        #expect(refreshed.count == 1)
        _ = try deliver(try a.wire(refreshed), to: &b, now: 1_000 + day)
        #expect(lastEvent(b) == .empty)
        #expect(b.sessions[0].updatedAt == 1_000 + day)
        #expect(a.sessions[0].updatedAt == 1_000 + day)
        // A type the session never carries (web-session-resume) goes plain; on a stale session an
        // empty message goes first.
        let plainLater = try a.ibex.encapsulate(type: .webSessionResume, body: [1], to: V.bob.contact,
                                                now: 1_000 + 3 * day, using: &a.rng)
        #expect(plainLater.map(\.type) == [.forwardSecurityEnvelope, .webSessionResume])
        let plainSoon = try a.ibex.encapsulate(type: .webSessionResume, body: [1], to: V.bob.contact,
                                               now: 1_000 + 3 * day + 5, using: &a.rng)
        #expect(plainSoon.map(\.type) == [.webSessionResume])
        _ = try deliver(try a.wire(plainLater + plainSoon), to: &b)
        #expect(b.plain == [.webSessionResume, .webSessionResume])
    }

    @Test func versionNegotiationAndUpgrade() throws {
        let v11 = Ibex.VersionRange(min: Ibex.Versions.v1_0, max: Ibex.Versions.v1_1)
        var a = Party(V.alice, V.bob.contact, seed: 21, versions: v11)
        var b = Party(V.bob, V.alice.contact, seed: 22)
        _ = try deliver(try deliver(try a.send(.text, "x"), to: &b), to: &a)
        _ = try deliver(try a.send(.text, "y"), to: &b)
        #expect(a.sessions[0].local4DHVersion == Ibex.Versions.v1_1)
        #expect(b.sessions[0].local4DHVersion == Ibex.Versions.v1_1)
        // A group message needs 1.2: it goes plain.
        let group = Ibex.GroupIdentity(groupID: 42, creator: V.alice.id)
        let prefix = GroupPrefix(creator: V.alice.id, groupID: 42).encoded
        let g1 = try a.ibex.encapsulate(type: .groupText, body: prefix + [0x41], to: V.bob.contact, groupIdentity: group,
                                        now: 1_000, using: &a.rng)
        #expect(g1.map(\.type) == [.groupText])
        // Alice upgrades to 1.2: her next 4DH message offers 1.2, Bob raises his outgoing version and
        // announces it with an empty message; Alice raises both of hers and answers with one more.
        a.ibex.versions = Ibex.VersionRange(min: Ibex.Versions.v1_0, max: Ibex.Versions.v1_2)
        let up = try deliver(try a.send(.text, "upgraded"), to: &b)
        #expect(up.count == 1)
        #expect(b.sessions[0].local4DHVersion == Ibex.Versions.v1_2)
        #expect(b.sessions[0].remote4DHVersion == Ibex.Versions.v1_1)
        let back = try deliver(up, to: &a)
        #expect(lastEvent(a) == .empty)
        #expect(a.sessions[0].remote4DHVersion == Ibex.Versions.v1_2)
        #expect(a.sessions[0].local4DHVersion == Ibex.Versions.v1_2)
        _ = try deliver(back, to: &b)
        #expect(b.sessions[0].remote4DHVersion == Ibex.Versions.v1_2)
        // Now group messages are encapsulated, with their group identity.
        let g2 = try a.ibex.encapsulate(type: .groupText, body: prefix + [0x42], to: V.bob.contact, groupIdentity: group,
                                        now: 1_000, using: &a.rng)
        #expect(g2.map(\.type) == [.forwardSecurityEnvelope])
        _ = try deliver(try a.wire(g2), to: &b)
        #expect(lastEvent(b) == .message(type: .groupText, body: prefix + [0x42], groupIdentity: group, dhType: .fourDH))
        // Group identity must fit the type.
        #expect(throws: ThreemaError.self) {
            _ = try a.ibex.encapsulate(type: .text, body: [], to: V.bob.contact, groupIdentity: group, now: 1, using: &a.rng)
        }
        #expect(throws: ThreemaError.self) {
            _ = try a.ibex.encapsulate(type: .groupText, body: [], to: V.bob.contact, now: 1, using: &a.rng)
        }
    }

    @Test func innerTypeAboveAppliedVersionIsDroppedWithoutStateChange() throws {
        let v10 = Ibex.VersionRange(min: Ibex.Versions.v1_0, max: Ibex.Versions.v1_0)
        var a = Party(V.alice, V.bob.contact, seed: 23, versions: v10)
        var b = Party(V.bob, V.alice.contact, seed: 24)
        _ = try deliver(try deliver(try a.send(.text, "x"), to: &b), to: &a)
        // The processor sends a typing indicator plain at 1.0 …
        let typing = try a.ibex.encapsulate(type: .typingIndicator, body: [1], to: V.bob.contact, now: 1_000, using: &a.rng)
        #expect(typing.map(\.type) == [.typingIndicator])
        // … and a hand-made encapsulation of one is refused by the receiver, its session unchanged.
        var s = a.sessions[0]
        let forged = try s.encrypt(type: MessageType.typingIndicator.rawValue, body: [1])
        let before = b.sessions[0].peer4DH?.counter
        _ = try deliver(try a.wire([.envelope(forged)]), to: &b)
        #expect(lastEvent(b) == .refused(.ibex(.innerTypeNotAllowed(0x90))))
        #expect(b.sessions[0].peer4DH?.counter == before)
        // An envelope inside an envelope is never allowed.
        let nested = try s.encrypt(type: 0xa0, body: [])
        _ = try deliver(try a.wire([.envelope(nested)]), to: &b)
        #expect(lastEvent(b) == .refused(.ibex(.innerTypeNotAllowed(0xa0))))
    }

    @Test func eligibilityTable() {
        #expect(Ibex.minimumVersion(for: .text) == Ibex.Versions.v1_0)
        #expect(Ibex.minimumVersion(for: .file) == Ibex.Versions.v1_0)
        #expect(Ibex.minimumVersion(for: .deliveryReceipt) == Ibex.Versions.v1_1)
        #expect(Ibex.minimumVersion(for: .callOffer) == Ibex.Versions.v1_1)
        #expect(Ibex.minimumVersion(for: .groupText) == Ibex.Versions.v1_2)
        #expect(Ibex.minimumVersion(for: .groupSetup) == Ibex.Versions.v1_2)
        #expect(Ibex.minimumVersion(for: .forwardSecurityEnvelope) == nil)
        #expect(Ibex.minimumVersion(for: .authToken) == nil)
        #expect(Ibex.minimumVersion(for: MessageType(rawValue: 0x77)) == nil)
    }

    /// Random conversations: texts (which the chat server delivers reliably and in order) mixed with
    /// typing indicators (short-lived: the server may drop them, 1 in 3 here), sent by both sides
    /// at random moments, so that sessions start from either side, race, and ratchets skip
    /// dropped counters. Every text must arrive exactly once and in order.
    @Test func randomizedConversationsWithDroppedShortLivedMessages() throws {
        for seed in UInt64(100)..<UInt64(108) {
            var rng = SplitMix64(seed: seed)
            var a = Party(V.alice, V.bob.contact, seed: seed &* 3)
            var b = Party(V.bob, V.alice.contact, seed: seed &* 5)
            var toB: [(bytes: [UInt8], lossy: Bool)] = [], toA: [(bytes: [UInt8], lossy: Bool)] = []
            var sentA: [String] = [], sentB: [String] = []
            func queue(_ wire: [[UInt8]], lossy: Bool) -> [(bytes: [UInt8], lossy: Bool)] {
                wire.enumerated().map { ($0.element, lossy && $0.offset == wire.count - 1) }
            }
            for step in 0..<80 {
                switch rng.next() % 6 {
                case 0: let t = "a\(step)"; sentA.append(t); toB += queue(try a.send(.text, t), lossy: false)
                case 1: let t = "b\(step)"; sentB.append(t); toA += queue(try b.send(.text, t), lossy: false)
                case 2: toB += queue(try a.send(.typingIndicator, "\u{1}"), lossy: true)
                case 3: toA += queue(try b.send(.typingIndicator, "\u{1}"), lossy: true)
                case 4 where !toB.isEmpty:
                    let m = toB.removeFirst()
                    if !(m.lossy && rng.next() % 3 == 0) { toA += queue(try b.receive(m.bytes), lossy: false) }
                case 5 where !toA.isEmpty:
                    let m = toA.removeFirst()
                    if !(m.lossy && rng.next() % 3 == 0) { toB += queue(try a.receive(m.bytes), lossy: false) }
                default: break
                }
            }
            while !toA.isEmpty || !toB.isEmpty {
                if !toB.isEmpty { toA += queue(try b.receive(toB.removeFirst().bytes), lossy: false) }
                if !toA.isEmpty { toB += queue(try a.receive(toA.removeFirst().bytes), lossy: false) }
            }
            #expect(b.texts == sentA, "seed \(seed)")
            #expect(a.texts == sentB, "seed \(seed)")
            #expect(!a.received.contains { if case .refused = $0 { true } else { false } }, "seed \(seed)")
            #expect(!b.received.contains { if case .refused = $0 { true } else { false } }, "seed \(seed)")
        }
    }
}
