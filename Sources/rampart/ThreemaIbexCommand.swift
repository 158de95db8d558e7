// `rampart threema ibex demo [--seed N] [--text S]...`: two parties in one process run an Ibex
// forward-secrecy session through real end-to-end messages of type 0xa0 and print every step with
// both sides' session states (a contract: keep the name and flags).

import Rampart
import RampartThreema

let threemaIbexUsage = """
usage: rampart threema ibex demo [--seed N] [--text S]...
  Two identities (000ALICE, 00000BOB; fresh random keys, or derived from --seed N for a repeatable
  run) start an Ibex session: Alice's Init and a 2DH message, Bob's Accept and a 4DH answer, Alice's
  first 4DH message, then a Terminate. Each line shows who sent what over the e2e layer (type, size)
  and both sides' session states (L20, R20, R24, RL44, or - for none). The texts sent alternate
  between the parties (default: three). Exit status 0 when every text arrived, 1 otherwise.
"""

/// A generator for the demo: the system's, or SplitMix64-style from a seed (repeatable output).
private struct DemoRNG: RandomNumberGenerator {
    var state: UInt64?
    mutating func next() -> UInt64 {
        guard var s = state else {
            var sys = SecureRandom()
            return sys.next()
        }
        s &+= 0x9e37_79b9_7f4a_7c15
        state = s
        var z = s
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

func threemaIbexCommand(_ args: [String]) {
    guard args.first == "demo" else {
        if args.first == "--help" || args.first == "-h" { print(threemaIbexUsage); return }
        usageError("rampart threema ibex: expected demo (see --help)")
    }
    var texts: [String] = []
    var seed: UInt64?
    var i = 1
    while i < args.count {
        switch args[i] {
        case "--help", "-h": print(threemaIbexUsage); return
        case "--seed":
            guard i + 1 < args.count, let n = UInt64(args[i + 1]) else { usageError("ibex demo: --seed takes a number") }
            seed = n
            i += 2
        case "--text":
            guard i + 1 < args.count else { usageError("ibex demo: --text takes a value") }
            texts.append(args[i + 1])
            i += 2
        default: usageError("ibex demo: unknown option \(args[i])")
        }
    }
    if texts.isEmpty { texts = ["Hello Bob (2DH, before Bob answered)", "Hi Alice (4DH)", "Now both ways (4DH)"] }
    var rng = DemoRNG(state: seed)
    do {
        let alice = try ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: randomKey(&rng))
        let bob = try ThreemaIdentity(id: ThreemaID("00000BOB"), privateKey: randomKey(&rng))
        var parties = [IbexDemoParty(alice, bob.contact), IbexDemoParty(bob, alice.contact)]
        func states() -> String {
            parties.map { p in
                let s = p.ibex.store.sessions(peer: p.peer.id).map { "\($0.state)".uppercased() }
                return "\(p.identity.id): " + (s.isEmpty ? "-" : s.joined(separator: ","))
            }.joined(separator: "  ")
        }
        func transfer(_ messages: [Ibex.OutgoingMessage], from: Int) throws {
            let to = 1 - from
            var replies: [Ibex.Envelope] = []
            for m in messages {
                let body = try m.body()
                let wire = try EndToEnd.seal(
                    OutgoingMessage(type: m.type, body: body, createdAt: 1_700_000_000_000, using: &rng),
                    from: parties[from].identity, keys: PairKeys(identity: parties[from].identity, contact: parties[from].peer),
                    using: &rng)
                let what: String
                if case .envelope(let e) = m { what = describe(e) } else { what = "plain \(m.type)" }
                let opened = try MessageEnvelope(parsing: wire).open(
                    as: parties[to].identity, keys: PairKeys(identity: parties[to].identity, contact: parties[to].peer),
                    nonceStore: &parties[to].nonces)
                var line = "\(parties[from].identity.id) -> \(parties[to].identity.id): e2e type 0x\(hex(opened.container.type.rawValue)) "
                    + "(\(wire.count) bytes), \(what)"
                if opened.container.type == .forwardSecurityEnvelope {
                    let r = try parties[to].ibex.receive(body: opened.container.body, from: parties[to].peer,
                                                         messageID: opened.messageID, now: 1_700_000_000, using: &rng)
                    line += " -> \(eventText(r.event))"
                    if case .message(_, let inner, _, _) = r.event { parties[to].delivered.append(String(decoding: inner, as: UTF8.self)) }
                    replies += r.replies
                }
                print(line)
                print("    states: \(states())")
            }
            if !replies.isEmpty { try transfer(replies.map { .envelope($0) }, from: to) }
        }
        print("identities: 000ALICE \(Hex.encode(alice.contact.publicKey.rawRepresentation).prefix(16))…, "
              + "00000BOB \(Hex.encode(bob.contact.publicKey.rawRepresentation).prefix(16))…")
        print("    states: \(states())")
        var sent: [[String]] = [[], []]
        for (k, text) in texts.enumerated() {
            let from = k % 2
            sent[from].append(text)
            let out = try parties[from].ibex.encapsulate(type: .text, body: Array(text.utf8), to: parties[from].peer,
                                                         now: 1_700_000_000, using: &rng)
            print("\(parties[from].identity.id) sends \"\(text)\": \(out.count) e2e message(s)")
            try transfer(out, from: from)
        }
        let terms = parties[0].ibex.terminate(peer: bob.id, cause: .reset)
        print("000ALICE terminates the session (RESET)")
        try transfer(terms.map { .envelope($0) }, from: 0)
        let ok = parties[1].delivered == sent[0] && parties[0].delivered == sent[1]
        print(ok ? "every text arrived; the chat server saw only type 0xa0 messages" : "MISMATCH: not every text arrived")
        if !ok { checkFailure("ibex demo: not every text arrived") }
    } catch {
        checkFailure("ibex demo: \(error)")
    }
}

private struct IbexDemoParty {
    let identity: ThreemaIdentity
    let peer: ThreemaContact
    var ibex: Ibex.Processor<Ibex.InMemorySessionStore>
    var nonces = InMemoryNonceStore()
    var delivered: [String] = []

    init(_ identity: ThreemaIdentity, _ peer: ThreemaContact) {
        self.identity = identity
        self.peer = peer
        ibex = Ibex.Processor(identity: identity, store: Ibex.InMemorySessionStore())
    }
}

private func randomKey(_ rng: inout DemoRNG) -> [UInt8] {
    (0..<4).flatMap { _ in withUnsafeBytes(of: rng.next().littleEndian) { Array($0) } }
}

private func hex(_ b: UInt8) -> String { b < 16 ? "0" + String(b, radix: 16) : String(b, radix: 16) }

private func describe(_ e: Ibex.Envelope) -> String {
    let sid = Hex.encode(e.sessionID).prefix(8)
    switch e.content {
    case .initiate(let o): return "Init (session \(sid)…, versions \(version(o.effectiveVersionRange.min))–\(version(o.effectiveVersionRange.max)))"
    case .accept(let o): return "Accept (session \(sid)…, versions \(version(o.effectiveVersionRange.min))–\(version(o.effectiveVersionRange.max)))"
    case .reject(let r): return "Reject (session \(sid)…, \(r.cause))"
    case .terminate(let t): return "Terminate (session \(sid)…, \(t.cause))"
    case .encapsulated(let m):
        return "Encapsulated \(m.dhType == .twoDH ? "2DH" : "4DH") #\(m.counter) (session \(sid)…, version \(version(m.effectiveAppliedVersion)))"
    }
}

private func version(_ v: Ibex.Version) -> String { "\(v >> 8).\(v & 0xff)" }

private func eventText(_ e: Ibex.Event) -> String {
    switch e {
    case .message(let t, let body, _, let dh): return "\(t) delivered (\(dh == .twoDH ? "2DH" : "4DH")): \"\(String(decoding: body, as: UTF8.self))\""
    case .empty: return "empty (refresh)"
    case .sessionStarted: return "new session, Accept sent"
    case .sessionEstablished: return "session bidirectional (4DH)"
    case .rejected(let r, _): return "rejected (\(r.cause))"
    case .terminated(let c, _): return "terminated (\(c))"
    case .ignored(let why): return "ignored (\(why))"
    case .refused(let err): return "refused (\(err))"
    }
}
