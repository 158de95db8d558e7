// Fuzz target for the Ibex forward-secrecy layer (Docs/Threema.md §1): arbitrary bytes as the body of
// an e2e message of type 0xa0 from 000ALICE, processed by 00000BOB's Ibex processor that holds one
// established (RL44) session with her. Every refusal must leave the session store as it was.

import Rampart
@_spi(Testing) import RampartThreema
import RampartTestSupport

private let ibexAlice = try! ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: [UInt8](repeating: 0x11, count: 32))
private let ibexBob = try! ThreemaIdentity(id: ThreemaID("00000BOB"), privateKey: [UInt8](repeating: 0x22, count: 32))

/// Bob's processor with one bidirectional session, and Alice's side of it (for seeds).
private let ibexFixture: (bob: Ibex.Processor<Ibex.InMemorySessionStore>, alice: Ibex.Processor<Ibex.InMemorySessionStore>) = {
    var rng = SplitMix64(seed: 0x1bec)
    var alice = Ibex.Processor(identity: ibexAlice, store: Ibex.InMemorySessionStore())
    var bob = Ibex.Processor(identity: ibexBob, store: Ibex.InMemorySessionStore())
    let first = try! alice.encapsulate(type: .text, body: [0x41], to: ibexBob.contact, now: 1, using: &rng)
    for m in first {
        guard case .envelope(let e) = m else { continue }
        for reply in bob.receive(e, from: ibexAlice.contact, messageID: 1, now: 1, using: &rng).replies {
            _ = alice.receive(reply, from: ibexBob.contact, messageID: 2, now: 1, using: &rng)
        }
    }
    return (bob, alice)
}()

/// What a refusal must not change: every session's ID, state, counters and versions.
private func fingerprint(_ p: Ibex.Processor<Ibex.InMemorySessionStore>) -> [String] {
    p.store.sessions(peer: ibexAlice.id).map {
        "\($0.sessionID) \($0.state) \($0.ratchetCountersForTesting) "
            + "\($0.local4DHVersion ?? 0) \($0.remote4DHVersion ?? 0) \($0.updatedAt ?? 0)"
    }.sorted()
}

let threemaIbexTarget = FuzzTarget(
    name: "threema-ibex",
    summary: "Ibex 0xa0 bodies from 000ALICE into 00000BOB's processor (one RL44 session): an undecodable body is a typed error and leaves the store unchanged; ignored envelopes and refused inner types change nothing; a delivered message turned the ratchet; a Reject or Terminate removes at most the named session",
    maxLength: 2048,
    run: { data in
        var bob = ibexFixture.bob
        var rng = SplitMix64(seed: 7)
        let before = fingerprint(bob)
        let r: Ibex.Received
        do {
            r = try bob.receive(body: Array(data), from: ibexAlice.contact, messageID: 9, now: 2, using: &rng)
        } catch {
            FuzzCheck.require(fingerprint(bob) == before, "an undecodable envelope changed the store")
            return
        }
        let after = fingerprint(bob)
        switch r.event {
        case .ignored:
            FuzzCheck.require(after == before, "an ignored envelope changed the store")
        case .refused(.ibex(.innerTypeNotAllowed)), .refused(.ibex(.groupIdentityMismatch)):
            FuzzCheck.require(after == before, "a refused inner type changed the store")
        case .refused(.ibex(.unknownSession)):
            FuzzCheck.require(after == before && r.replies.count == 1, "unknown session: Reject without a change")
        case .refused:
            FuzzCheck.require(after.count == before.count - 1 && r.replies.count == 1, "state mismatch: Reject and removal")
        case .message, .empty:
            FuzzCheck.require(after != before, "a delivered message did not move the session")
        case .rejected, .terminated:
            FuzzCheck.require(after.count <= before.count, "Reject/Terminate added a session")
        case .sessionStarted:
            FuzzCheck.require(after.count == before.count + 1 && r.replies.count == 1, "Init: one new session, one Accept")
        case .sessionEstablished:
            FuzzCheck.require(after.count == before.count, "Accept added a session")
        }
    },
    seeds: {
        var rng = SplitMix64(seed: 0x5eed)
        var alice = ibexFixture.alice
        var seeds: [[UInt8]] = []
        for (type, body) in [(MessageType.text, [UInt8](repeating: 0x42, count: 20)), (.empty, []), (.typingIndicator, [1])] {
            for m in try! alice.encapsulate(type: type, body: body, to: ibexBob.contact, now: 3, using: &rng) {
                if case .envelope = m { seeds.append(try! m.body()) }
            }
        }
        var fresh = Ibex.Processor(identity: ibexAlice, store: Ibex.InMemorySessionStore())
        for m in try! fresh.encapsulate(type: .text, body: [0x43], to: ibexBob.contact, now: 3, using: &rng) {
            seeds.append(try! m.body())
        }
        let sid = [UInt8](repeating: 3, count: 16)
        seeds.append(try! Ibex.Envelope(sessionID: sid, content: .reject(Ibex.Reject(messageID: 5, cause: .stateMismatch))).encoded())
        seeds.append(try! Ibex.Envelope(sessionID: sid, content: .terminate(Ibex.Terminate(cause: .reset))).encoded())
        return seeds
    }
)
