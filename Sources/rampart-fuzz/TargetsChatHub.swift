// Fuzz target for the loopback chat hub (RampartThreemaChatServer): arbitrary chunks, and genuine
// frames, on four connections of a hub where two identities are logged in (one fresh connection, one
// that registers).

import Rampart
import RampartTestSupport
import RampartThreema
import RampartThreemaChatServer

/// A hub with ALICE on connection 1 and BOB on connection 2 (both established), connections 3 and 4
/// open and silent; each client's next genuine frames.
private struct ChatHubFixture: @unchecked Sendable {
    let hub: ChatHub
    /// Connection → genuine client bytes for it (echo, a message to the other identity, an ack).
    let genuine: [Int: [UInt8]]
    /// A registration preamble and client-hello for connection 4.
    let registration: [UInt8]

    static let shared = ChatHubFixture()

    private init() {
        var rng = SplitMix64(seed: 0xC4A7)
        let sk = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: rng.packedBytes(32))
        let alice = try! ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: rng.packedBytes(32))
        let bob = try! ThreemaIdentity(id: ThreemaID("00000BOB"), privateKey: rng.packedBytes(32))
        let carol = try! ThreemaIdentity(id: ThreemaID("000CAROL"), privateKey: rng.packedBytes(32))
        var conf = ChatHub.Configuration(permanentKey: sk)
        conf.registerOnLogin = true
        conf.queueLimit = 4
        conf.queueByteLimit = 4096
        var hub = ChatHub(configuration: conf, identities: [alice.id: alice.publicKey, bob.id: bob.publicKey],
                          random: SplitMix64(seed: 0x5EED))
        var genuine: [Int: [UInt8]] = [:]
        for (fd, me, other) in [(1, alice, bob), (2, bob, alice)] {
            var (client, hello) = try! CSP.Client.start(configuration: .init(identity: me, permittedServerKeys: [sk.publicKey]),
                                                        using: &rng)
            hub.open(fd, now: 0)
            var toClient = hub.receive(hello, from: fd, now: 0)
            for _ in 0..<3 {
                var back: [UInt8] = []
                for case .send(fd, let bytes) in toClient.actions { back += (try! client.receive(bytes)).outgoing }
                if back.isEmpty { break }
                toClient = hub.receive(back, from: fd, now: 0)
            }
            precondition(client.state == .established && hub.identity(of: fd) == me.id, "fixture login")
            let wire = try! EndToEnd.seal(OutgoingMessage(type: .text, body: Array("fixture".utf8), createdAt: 1, using: &rng),
                                          from: me, keys: try! PairKeys(identity: me, contact: other.contact), using: &rng)
            genuine[fd] = try! client.send(.echoRequest([1, 2, 3])) + client.send(.outgoingMessage(try! CSP.Message(wire)))
                + client.send(.incomingMessageAck(CSP.MessageAck(identity: other.id, messageID: 1)))
        }
        hub.open(3, now: 0)
        hub.open(4, now: 0)
        let (_, hello) = try! CSP.Client.start(configuration: .init(identity: carol, permittedServerKeys: [sk.publicKey]), using: &rng)
        registration = ChatHub.registrationMagic + carol.id.bytes + carol.publicKey.rawRepresentation + hello
        self.hub = hub
        self.genuine = genuine
    }
}

let threemaChatHubTarget = FuzzTarget(
    name: "threema-chat-hub",
    summary: "loopback chat hub: a sequence of (connection 1-4, chunk) steps, a chunk being fuzz bytes, the connection's genuine frames (echo, a routed message, an ack) or a registration preamble with a client-hello: no trap; actions only for open connections, nothing after a close; buffered bytes and queues stay within their bounds; the handshake timeout closes only connections that did not log in, the idle timeout only logged-in ones",
    maxLength: 12_000,
    run: { data in
        var input = FuzzInput(data)
        let f = ChatHubFixture.shared
        var hub = f.hub
        var open: Set<Int> = [1, 2, 3, 4]
        var closing: Set<Int> = []
        var steps = 0
        while !input.isAtEnd && steps < 64 {
            steps += 1
            let op = input.byte()
            let fd = Int(op & 3) + 1
            let chunk: [UInt8]
            switch op >> 6 {
            case 0: chunk = f.genuine[fd] ?? []
            case 1 where fd == 4: chunk = f.registration
            default: chunk = input.lengthPrefixed(max: 9000)
            }
            guard open.contains(fd) else { continue }
            let out = hub.receive(chunk, from: fd, now: 1)
            for a in out.actions {
                switch a {
                case .send(let t, let bytes):
                    FuzzCheck.require(open.contains(t) && !closing.contains(t), "bytes for a closed connection")
                    FuzzCheck.require(!bytes.isEmpty, "an empty send")
                case .close(let t, _):
                    FuzzCheck.require(open.contains(t), "close of a closed connection")
                    closing.insert(t)
                }
            }
            // The socket owner closes them once written.
            for t in closing {
                hub.close(t)
                open.remove(t)
            }
            closing = []
            for t in open {
                FuzzCheck.require(hub.bufferedByteCount(of: t) <= 2 * (2 + CSP.maximumFrameLength + ChatHub.registrationLength),
                                  "buffered bytes bound")
            }
            FuzzCheck.require(hub.totalQueuedBytes <= 2 * hub.configuration.queueByteLimit, "queue bytes bound")
            for id in hub.identities.keys { FuzzCheck.require(hub.queuedCount(of: id) <= hub.configuration.queueLimit, "queue bound") }
        }
        // At 1000 s the handshake timeout (10 s) closes connections that did not log in, the idle
        // timeout (300 s without a complete payload) the logged-in ones; nothing else.
        let expired = hub.expire(now: 1_000)
        for case .close(let t, let why) in expired.actions {
            FuzzCheck.require(open.contains(t), "timeout closed a closed connection")
            FuzzCheck.require(hub.identity(of: t) == nil ? why.hasPrefix("handshake not completed") : why.hasPrefix("no complete payload"),
                              "a timeout for the wrong kind of connection")
        }
    },
    seeds: {
        let f = ChatHubFixture.shared
        return [[0x00, 0x01, 0x40 | 3], [0x03, 0x00, 0x01, 0x00], [0x41, 0x80 | 3, 0x30, 0x00] + [UInt8](repeating: 0x41, count: 48),
                [0x81, 0xFF, 0x1F] + [UInt8](repeating: 0, count: 50), [0x82, 0x02, 0x00, 0xFF, 0xFF]] + [[0x80, UInt8(f.genuine[1]!.count & 0xFF),
                UInt8(f.genuine[1]!.count >> 8)] + f.genuine[1]!]
    }
)

/// A genuine journal: the fixture's registration of CAROL and ALICE's message queued for BOB
/// (offline in a copy of the fixture where BOB's connection closed).
private let chatJournalFixture: [UInt8] = {
    let f = ChatHubFixture.shared
    var hub = f.hub
    var journal = ChatJournal.header
    hub.close(2)
    journal += hub.receive(f.genuine[1]!, from: 1, now: 1).journal
    journal += hub.receive(f.registration, from: 4, now: 1).journal
    return journal
}()

let threemaChatJournalTarget = FuzzTarget(
    name: "threema-chat-journal",
    summary: "the chat hub's journal replay (--dir): fuzz bytes alone, after the journal header, or spliced into a genuine journal: no trap; nil exactly when the header is wrong; the valid prefix ends on a record boundary within the input; the restored state's snapshot restores to the same state, and a genuine journal restores its message",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let f = ChatHubFixture.shared
        let mode = input.byte() % 3
        let rest = input.rest()
        var file: [UInt8]
        switch mode {
        case 0: file = rest
        case 1: file = ChatJournal.header + rest
        default:
            file = chatJournalFixture
            let cut = rest.isEmpty ? file.count : ChatJournal.header.count + Int(rest[0]) * 7 % (file.count - ChatJournal.header.count + 1)
            file = Array(file.prefix(cut)) + rest.dropFirst()
        }
        var hub = ChatHub(configuration: f.hub.configuration, identities: f.hub.identities)
        let summary = hub.restore(journal: file, now: 2)
        let isJournal = file.isEmpty || file.starts(with: ChatJournal.header)
        FuzzCheck.require((summary != nil) == isJournal, "nil exactly for a wrong header")
        guard let s = summary else { return }
        FuzzCheck.require(s.validLength <= file.count && s.validLength + s.ignoredTailBytes == file.count, "valid prefix")
        FuzzCheck.require(hub.totalQueuedBytes >= 0 && hub.totalQueuedCount == s.messages, "queue accounting")
        if mode == 2 && file == chatJournalFixture {
            FuzzCheck.require(s.messages == 1 && s.ignoredTailBytes == 0, "the genuine journal's message")
        }
        var again = ChatHub(configuration: f.hub.configuration, identities: f.hub.identities)
        let snapshot = hub.journalSnapshot()
        let s2 = again.restore(journal: snapshot, now: 2)
        FuzzCheck.require(s2?.ignoredTailBytes == 0 && s2?.messages == s.messages && again.identityCount == hub.identityCount
                          && again.totalQueuedBytes == hub.totalQueuedBytes && again.journalSnapshot() == snapshot,
                          "snapshot round trip")
    },
    seeds: { [[0x02], [0x02, 0xFF, 0x00], [0x01] + [UInt8](repeating: 0, count: 16), [0x00] + ChatJournal.header] }
)
