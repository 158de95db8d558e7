// The participant-to-participant handshake of a group call (Docs/Threema.md §10.1): a new and an
// existing participant through every state, the channel and media keys they end with, and every
// refusal leaving the handshake unchanged.

import Rampart
import RampartTestSupport
import Testing
@_spi(Testing) @testable import RampartThreema

@Suite struct GroupCallHandshakeTests {
    let keys = try! GroupCall.Keys(gck: SymmetricKey(data: [UInt8](repeating: 0x42, count: 32)))
    let alice = try! ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: [UInt8](repeating: 0x11, count: 32))
    let bob = try! ThreemaIdentity(id: ThreemaID("00000BOB"), privateKey: [UInt8](repeating: 0x22, count: 32))
    let eve = try! ThreemaIdentity(id: ThreemaID("0000EVE0"), privateKey: [UInt8](repeating: 0x33, count: 32))

    /// Group members as the caller's lookup.
    func members(_ list: [ThreemaIdentity]) -> (ThreemaID) -> ThreemaContact? {
        { id in list.first { $0.id == id }?.contact }
    }

    func mediaKey(_ byte: UInt8, epoch: UInt8 = 0) -> GroupCall.MediaKey {
        try! GroupCall.MediaKey(epoch: epoch, ratchetCounter: 0, pcmk: SymmetricKey(data: [UInt8](repeating: byte, count: 32)))
    }

    func start(_ rng: inout SplitMix64) throws -> (np: GroupCall.ParticipantHandshake, ep: GroupCall.ParticipantHandshake, hello: [UInt8]) {
        let (np, hello) = try GroupCall.ParticipantHandshake.startAsNewParticipant(
            keys: keys, identity: alice, nickname: "Alice", localKey: .init(using: &rng),
            localCookie: randomBytes(16, using: &rng), using: &rng)
        let ep = try GroupCall.ParticipantHandshake(awaitingNewParticipant: keys, identity: bob, nickname: "Bob",
                                                    localKey: .init(using: &rng), localCookie: randomBytes(16, using: &rng))
        return (np, ep, hello)
    }

    @Test func fullHandshakeAndChannel() throws {
        var rng = SplitMix64(seed: 1)
        var (np, ep, hello) = try start(&rng)
        #expect(np.state == .awaitEPHello && ep.state == .awaitNPHello)
        let group = members([alice, bob])
        let aliceKeys = [mediaKey(0xa1), mediaKey(0xa2, epoch: 1)], bobKeys = [mediaKey(0xb1)]
        // EP answers the new participant's hello with its own Hello and an Auth.
        let fromEP = try ep.receive(hello, member: group, mediaKeys: bobKeys, using: &rng)
        #expect(fromEP.count == 2 && ep.state == .awaitAuth)
        #expect(ep.peer?.id == alice.id && ep.peerNickname == "Alice")
        // NP: the hello gives an Auth back, the EP's Auth finishes NP.
        let fromNP = try np.receive(fromEP[0], member: group, mediaKeys: aliceKeys, using: &rng)
        #expect(fromNP.count == 1 && np.state == .awaitAuth)
        #expect(try np.receive(fromEP[1], member: group, mediaKeys: aliceKeys, using: &rng).isEmpty)
        #expect(np.state == .done && np.peerMediaKeys == bobKeys && np.peer?.id == bob.id)
        #expect(try ep.receive(fromNP[0], member: group, mediaKeys: bobKeys, using: &rng).isEmpty)
        #expect(ep.state == .done && ep.peerMediaKeys == aliceKeys)
        // The channels carry post-handshake envelopes both ways, in order only.
        var a = try #require(np.channel), b = try #require(ep.channel)
        let rekey = GroupCall.Envelope(content: .rekey(mediaKey(0xa3, epoch: 2)))
        let box = try a.seal(rekey)
        #expect(try b.openEnvelope(box) == rekey)
        #expect(throws: ThreemaError.authenticationFailed) { _ = try b.openEnvelope(box) }   // replay
        let back = GroupCall.Envelope(content: .holdState)
        #expect(try a.openEnvelope(try b.seal(back)) == back)
        // Anything after done is refused.
        #expect(throws: ThreemaError.groupCall(.unexpectedHandshakeMessage)) {
            _ = try np.receive(fromEP[1], member: group, mediaKeys: aliceKeys, using: &rng)
        }
    }

    @Test func refusalsLeaveTheHandshakeUnchanged() throws {
        var rng = SplitMix64(seed: 2)
        var (np, ep, hello) = try start(&rng)
        let bobKeys = [mediaKey(0xb1)], aliceKeys = [mediaKey(0xa1)]
        // A hello from someone outside the group.
        #expect(throws: ThreemaError.groupCall(.notAGroupMember)) {
            _ = try ep.receive(hello, member: members([bob]), mediaKeys: bobKeys, using: &rng)
        }
        #expect(ep.state == .awaitNPHello && ep.channel == nil)
        // A lookup that answers with another member's contact for the ID.
        #expect(throws: ThreemaError.groupCall(.notAGroupMember)) {
            _ = try ep.receive(hello, member: { _ in eve.contact }, mediaKeys: bobKeys, using: &rng)
        }
        // A guest hello (group calls admit no guests), and a hello under another call's GCHK.
        let guest = try keys.sealHello(GroupCall.HelloEnvelope(content: .guestHello(GroupCall.GuestHello(
            name: "guest", pck: Curve25519.KeyAgreement.PrivateKey(using: &rng).publicKey.rawRepresentation,
            pcck: randomBytes(16, using: &rng)))), using: &rng)
        #expect(throws: ThreemaError.groupCall(.wrongHandshakeVariant)) {
            _ = try ep.receive(guest, member: members([alice, bob]), mediaKeys: bobKeys, using: &rng)
        }
        let otherCall = try GroupCall.Keys(gck: SymmetricKey(data: [UInt8](repeating: 0x43, count: 32)))
        var (_, otherHello) = try GroupCall.ParticipantHandshake.startAsNewParticipant(
            keys: otherCall, identity: alice, nickname: "A", localKey: .init(using: &rng),
            localCookie: randomBytes(16, using: &rng), using: &rng)
        #expect(throws: ThreemaError.authenticationFailed) {
            _ = try ep.receive(otherHello, member: members([alice, bob]), mediaKeys: bobKeys, using: &rng)
        }
        otherHello = []
        #expect(ep.state == .awaitNPHello)
        // The new participant's own hello reflected back to it.
        #expect(throws: ThreemaError.self) {
            _ = try np.receive(hello, member: members([alice, bob]), mediaKeys: aliceKeys, using: &rng)
        }
        #expect(np.state == .awaitEPHello && np.channel == nil)
        // Now the genuine exchange still completes.
        let fromEP = try ep.receive(hello, member: members([alice, bob]), mediaKeys: bobKeys, using: &rng)
        // A replayed hello in await-auth is refused (it is not a channel box).
        #expect(throws: ThreemaError.authenticationFailed) {
            _ = try ep.receive(hello, member: members([alice, bob]), mediaKeys: bobKeys, using: &rng)
        }
        let fromNP = try np.receive(fromEP[0], member: members([alice, bob]), mediaKeys: aliceKeys, using: &rng)
        // An Auth meant for a different participant (another NP's handshake with the same EP keys)
        // fails: the channel box does not verify, and the state stays await-auth.
        var (np2, ep2, hello2) = try start(&rng)
        let fromEP2 = try ep2.receive(hello2, member: members([alice, bob]), mediaKeys: bobKeys, using: &rng)
        _ = try np2.receive(fromEP2[0], member: members([alice, bob]), mediaKeys: aliceKeys, using: &rng)
        #expect(throws: ThreemaError.authenticationFailed) {
            _ = try np.receive(fromEP2[1], member: members([alice, bob]), mediaKeys: aliceKeys, using: &rng)
        }
        #expect(np.state == .awaitAuth)
        // Mutated Auth bytes: refused, then the genuine one completes.
        for i in stride(from: 0, to: fromEP[1].count, by: 7) {
            var bad = fromEP[1]
            bad[i] ^= 0x20
            #expect(throws: ThreemaError.self) { _ = try np.receive(bad, member: members([alice, bob]), mediaKeys: aliceKeys, using: &rng) }
            #expect(np.state == .awaitAuth)
        }
        _ = try np.receive(fromEP[1], member: members([alice, bob]), mediaKeys: aliceKeys, using: &rng)
        _ = try ep.receive(fromNP[0], member: members([alice, bob]), mediaKeys: bobKeys, using: &rng)
        #expect(np.state == .done && ep.state == .done)
        // No media keys to offer is a caller error, refused before anything else.
        var (_, ep3, hello3) = try start(&rng)
        #expect(throws: ThreemaError.groupCall(.missingMediaKeys)) {
            _ = try ep3.receive(hello3, member: members([alice, bob]), mediaKeys: [], using: &rng)
        }
    }

    /// The same Threema ID on two devices in one call is allowed (group-call.proto), and a wrong
    /// cookie length is a typed error.
    @Test func sameIdentityTwiceAndArguments() throws {
        var rng = SplitMix64(seed: 3)
        var (np, hello) = try GroupCall.ParticipantHandshake.startAsNewParticipant(
            keys: keys, identity: alice, nickname: "Alice (phone)", localKey: .init(using: &rng),
            localCookie: randomBytes(16, using: &rng), using: &rng)
        var ep = try GroupCall.ParticipantHandshake(awaitingNewParticipant: keys, identity: alice, nickname: "Alice (desktop)",
                                                    localKey: .init(using: &rng), localCookie: randomBytes(16, using: &rng))
        let group = members([alice, bob])
        let out = try ep.receive(hello, member: group, mediaKeys: [mediaKey(1)], using: &rng)
        let back = try np.receive(out[0], member: group, mediaKeys: [mediaKey(2)], using: &rng)
        _ = try np.receive(out[1], member: group, mediaKeys: [mediaKey(2)], using: &rng)
        _ = try ep.receive(back[0], member: group, mediaKeys: [mediaKey(1)], using: &rng)
        #expect(np.state == .done && ep.state == .done)
        #expect(throws: ThreemaError.groupCall(.invalidLength(field: 4, length: 15))) {
            _ = try GroupCall.ParticipantHandshake(awaitingNewParticipant: keys, identity: bob, nickname: "",
                                                   localKey: .init(using: &rng), localCookie: [UInt8](repeating: 1, count: 15))
        }
    }
}
