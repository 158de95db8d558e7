// Two-party Ibex sessions (Docs/Threema.md §1.4, §1.5) with the identities and ephemeral keys of the
// self-computed vector set (values in IbexKeyTests.swift).

import Rampart
import RampartTestSupport
import Testing
@_spi(Testing) @testable import RampartThreema

@Suite struct IbexSessionTests {
    typealias V = IbexVectors
    static let sid = [UInt8](repeating: 0x5a, count: 16)

    /// Alice initiates, Bob receives the Init through the wire format.
    func start() throws -> (Ibex.Session, Ibex.Session) {
        let (a, initEnvelope) = try Ibex.Session.initiate(identity: V.alice, peer: V.bob.contact, sessionID: Self.sid,
                                                          ephemeral: V.aliceFSSK)
        let wire = try Ibex.Envelope(decoding: try initEnvelope.encoded())
        guard case .initiate(let offer) = wire.content else { throw ThreemaError.ibex(.missingContent) }
        let b = try Ibex.Session.receiveInit(offer, sessionID: wire.sessionID, identity: V.bob, peer: V.alice.contact)
        return (a, b)
    }

    func encapsulated(_ e: Ibex.Envelope) -> Ibex.Encapsulated {
        guard case .encapsulated(let m) = e.content else { preconditionFailure("not encapsulated") }
        return m
    }

    @Test func fullHandshakeMatchesVectors() throws {
        var (a, b) = try start()
        #expect(a.state == .l20 && b.state == .r20)

        // 2DH, counter 1: the self-computed 2DH message key.
        let m1 = try a.encrypt(type: 0x01, body: Array("Hi".utf8))
        let e1 = encapsulated(m1)
        #expect(e1.dhType == .twoDH && e1.counter == 1 && e1.offeredVersion == Ibex.Versions.v1_0)
        let key2DH = SymmetricKey(data: hexBytes(V.alice2DHMessageKey1))
        #expect(try SecretBox.open(e1.encryptedInner, using: key2DH, nonce: Ibex.zeroNonce) == [0x01] + Array("Hi".utf8))
        let d1 = try b.decrypt(Ibex.Envelope(decoding: try m1.encoded()))
        #expect(d1.type == 0x01 && d1.body == Array("Hi".utf8))
        #expect(throws: ThreemaError.ibex(.stateMismatch)) { try b.encrypt(type: 1, body: []) }   // R20 cannot send

        // Bob accepts (R24) and answers with 4DH; Alice processes the Accept (RL44).
        let accept = try b.accept(ephemeral: V.bobFSSK)
        #expect(b.state == .r24)
        let m2 = try b.encrypt(type: 0x01, body: [0x42])
        #expect(encapsulated(m2).dhType == .fourDH && encapsulated(m2).counter == 1)
        guard case .accept(let offer) = try Ibex.Envelope(decoding: try accept.encoded()).content else {
            Issue.record("not an Accept"); return
        }
        #expect(throws: ThreemaError.ibex(.stateMismatch)) { _ = try a.decrypt(m2) }   // L20 has no incoming
        try a.processAccept(offer)
        #expect(a.state == .rl44 && a.negotiatedVersion == Ibex.Versions.v1_2)
        #expect(a.my2DH == nil)
        #expect(throws: ThreemaError.ibex(.unexpectedKeyOffer)) { try a.processAccept(offer) }
        let d2 = try a.decrypt(m2)
        #expect(d2.type == 0x01 && d2.body == [0x42])

        // Alice's first 4DH message is the encapsulated example of the vector set.
        let m3 = try a.encrypt(type: 0x01, body: [0x48, 0x69])
        #expect(hexString(encapsulated(m3).encryptedInner) == V.exampleEncryptedInner)
        let m4 = try a.encrypt(type: 0x01, body: [])
        let key2 = SymmetricKey(data: hexBytes(V.alice4DHMessageKey2))
        #expect(try SecretBox.open(encapsulated(m4).encryptedInner, using: key2, nonce: Ibex.zeroNonce) == [0x01])

        // The first 4DH message moves Bob from R24 to RL44 (inFlight2DHInR24 covers late 2DH messages).
        #expect(b.peer2DH != nil)
        let d3 = try b.decrypt(m3)
        #expect(d3.type == 0x01 && d3.body == [0x48, 0x69])
        #expect(b.state == .rl44 && b.peer2DH == nil)
        #expect(try b.decrypt(m4).type == 0x01)
    }

    @Test func inFlight2DHInR24() throws {
        var (a, b) = try start()
        let m1 = try a.encrypt(type: 0x01, body: [1])
        let m2 = try a.encrypt(type: 0x01, body: [2])
        _ = try b.decrypt(m1)
        _ = try b.accept(ephemeral: V.bobFSSK)
        #expect(try b.decrypt(m2).body == [2])
        #expect(b.state == .r24)
    }

    @Test func failuresLeaveStateUnchanged() throws {
        var (a, b) = try start()
        let m1 = try a.encrypt(type: 0x01, body: [1])
        let m2 = try a.encrypt(type: 0x01, body: [2])
        let m3 = try a.encrypt(type: 0x01, body: [3])

        var tampered = encapsulated(m1)
        tampered.encryptedInner[0] ^= 1
        #expect(throws: ThreemaError.authenticationFailed) { _ = try b.decrypt(tampered) }
        #expect(b.peer2DH?.counter == 1)

        var wrongVersion = encapsulated(m1)
        wrongVersion.offeredVersion = Ibex.Versions.v1_1
        #expect(throws: ThreemaError.ibex(.versionMismatch)) { _ = try b.decrypt(wrongVersion) }
        var appliedAbove = encapsulated(m1)
        appliedAbove.appliedVersion = Ibex.Versions.v1_2
        #expect(throws: ThreemaError.ibex(.versionMismatch)) { _ = try b.decrypt(appliedAbove) }

        var fourDH = encapsulated(m1)
        fourDH.dhType = .fourDH
        #expect(throws: ThreemaError.ibex(.stateMismatch)) { _ = try b.decrypt(fourDH) }

        var farAhead = encapsulated(m1)
        farAhead.counter = 1 + Ibex.KDFRatchet.maxCounterIncrement + 1
        #expect(throws: ThreemaError.ibex(.counterTooFarAhead(ratchet: 1, message: 25002))) { _ = try b.decrypt(farAhead) }
        var otherSession = m1
        otherSession.sessionID = [UInt8](repeating: 0, count: 16)
        #expect(throws: ThreemaError.ibex(.stateMismatch)) { _ = try b.decrypt(otherSession) }
        #expect(b.peer2DH?.counter == 1)

        // Skipping ahead works; the skipped and the replayed message are gone.
        #expect(try b.decrypt(m3).body == [3])
        #expect(b.peer2DH?.counter == 4)
        #expect(throws: ThreemaError.ibex(.counterInPast(ratchet: 4, message: 2))) { _ = try b.decrypt(m2) }
        #expect(throws: ThreemaError.ibex(.counterInPast(ratchet: 4, message: 3))) { _ = try b.decrypt(m3) }
        #expect(b.peer2DH?.counter == 4)
    }

    @Test func argumentChecks() throws {
        #expect(throws: ThreemaError.self) {
            _ = try Ibex.Session.initiate(identity: V.alice, peer: V.bob.contact, sessionID: [1], ephemeral: V.aliceFSSK)
        }
        var (_, b) = try start()
        #expect(throws: ThreemaError.ibex(.unexpectedKeyOffer)) {
            try b.processAccept(.init(ephemeralPublicKey: Array(V.bobFSSK.publicKey.rawRepresentation), supportedVersion: nil))
        }
        _ = try b.accept(ephemeral: V.bobFSSK)
        #expect(throws: ThreemaError.ibex(.unexpectedKeyOffer)) { _ = try b.accept(ephemeral: V.bobFSSK) }
        // A small-order ephemeral key (all-zero shared secret, §7.5) is refused.
        let zeroKey = Ibex.KeyOffer(ephemeralPublicKey: [UInt8](repeating: 0, count: 32), supportedVersion: nil)
        #expect(throws: ThreemaError.invalidPublicKey) {
            _ = try Ibex.Session.receiveInit(zeroKey, sessionID: Self.sid, identity: V.bob, peer: V.alice.contact)
        }
        var (a, _) = try start()
        #expect(throws: ThreemaError.invalidPublicKey) { try a.processAccept(zeroKey) }
        #expect(a.state == .l20)
    }

    /// Random sessions: many messages in both directions with random drops and reordering within
    /// the catch-up rule; every delivered message in counter order decrypts.
    @Test func randomConversation() throws {
        var rng = SplitMix64(seed: 14)
        for round in 0..<4 {
            let sid = rng.bytes(16)
            let aliceEph = Curve25519.KeyAgreement.PrivateKey(using: &rng)
            let bobEph = Curve25519.KeyAgreement.PrivateKey(using: &rng)
            var (a, initEnvelope) = try Ibex.Session.initiate(identity: alice, peer: bob.contact, sessionID: sid, ephemeral: aliceEph)
            guard case .initiate(let offer) = initEnvelope.content else { return }
            var b = try Ibex.Session.receiveInit(offer, sessionID: sid, identity: bob, peer: alice.contact)
            let acc = try b.accept(ephemeral: bobEph)
            guard case .accept(let accOffer) = acc.content else { return }
            try a.processAccept(accOffer)
            for _ in 0..<40 {
                let body = rng.bytes(Int(rng.next() % 40))
                let fromAlice = rng.next() % 2 == 0
                let m = fromAlice ? try a.encrypt(type: 0x01, body: body) : try b.encrypt(type: 0x01, body: body)
                if rng.next() % 5 == 0 { continue }   // dropped
                let d = fromAlice ? try b.decrypt(m) : try a.decrypt(m)
                #expect(d.type == 0x01 && d.body == body, "round \(round)")
            }
            #expect(a.state == .rl44 && b.state == .rl44)
        }
    }

    /// Mutated wire bytes of real messages: decoding or decryption either succeeds (only for the
    /// untouched message) or throws, and a refusal never moves the receiving ratchet.
    @Test func mutationFuzz() throws {
        var rng = SplitMix64(seed: 0x1b3e)
        var (a, b) = try start()
        var messages: [[UInt8]] = []
        for i in 0..<8 { messages.append(try a.encrypt(type: 0x01, body: [UInt8](repeating: UInt8(i), count: i)).encoded()) }
        for _ in 0..<(isDebugBuild ? 3000 : 15000) {
            let original = messages[Int(rng.next() % UInt64(messages.count))]
            let input = mutated(original, &rng)
            var copy = b
            let before = copy.peer2DH?.counter
            guard let envelope = try? Ibex.Envelope(decoding: input) else { continue }
            if (try? copy.decrypt(envelope)) == nil {
                #expect(copy.peer2DH?.counter == before)
            }
        }
        // The untouched messages still decrypt in order.
        for (i, m) in messages.enumerated() { #expect(try b.decrypt(Ibex.Envelope(decoding: m)).body.count == i) }
    }
}
