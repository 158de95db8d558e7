// The loopback chat hub (Docs/Threema.md §9.5) driven by in-process CSP clients: routing with acks,
// offline queues delivered on login and removed on acknowledgement, queue limits, registration on
// login, replacement on a second login, echo, and closing on protocol violations.

import Rampart
import RampartThreemaChatServer
import RampartTestSupport
import Testing
@testable import RampartThreema

/// The shared seeded generator behind a reference, for a helper that draws without being mutating.
private final class SeededGeneratorBox {
    var generator: SplitMix64
    init(seed: UInt64) { generator = SplitMix64(seed: seed) }
}

private func privateKey(_ byte: UInt8) -> Curve25519.KeyAgreement.PrivateKey {
    try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: byte, count: 32))
}

/// One client connected to the hub through connection number `fd`.
private struct Peer {
    let fd: Int
    let identity: ThreemaIdentity
    var client: CSP.Client
    var received: [CSP.Payload] = []
    var closed: String?
}

private struct Harness {
    var hub: ChatHub
    var peers: [Int: Peer] = [:]
    var nextFD = 10
    var log: [String] = []
    var trace: [ChatHub.TraceRecord] = []
    var rng = SplitMix64(seed: 0xC4A7)
    /// The generator of `message(from:to:_:flags:)`, a reference so that the non-mutating helper
    /// still draws fresh nonces and message IDs for every message.
    let messageRNG = SeededGeneratorBox(seed: 0xC4A8)
    let serverKey: Curve25519.KeyAgreement.PrivateKey

    /// Every journal record the hub produced, as a journal file.
    var journal = ChatJournal.header
    /// The clock passed to the hub.
    var now: Double = 0

    init(register: Bool = false, queueLimit: Int = 100, queueByteLimit: Int = 512 * 1024,
         known: [ThreemaIdentity] = [], configure: (inout ChatHub.Configuration) -> Void = { _ in }) {
        serverKey = privateKey(0x51)
        var conf = ChatHub.Configuration(permanentKey: serverKey)
        conf.registerOnLogin = register
        conf.queueLimit = queueLimit
        conf.queueByteLimit = queueByteLimit
        conf.handshakeTimeout = 5
        configure(&conf)
        var ids: [ThreemaID: Curve25519.KeyAgreement.PublicKey] = [:]
        for i in known { ids[i.id] = i.publicKey }
        hub = ChatHub(configuration: conf, identities: ids)
    }

    /// Applies hub output: bytes to the clients, closes.
    mutating func apply(_ out: ChatHub.Output) {
        log += out.log
        trace += out.trace
        journal += out.journal
        for a in out.actions {
            switch a {
            case .send(let fd, let bytes):
                guard var p = peers[fd], p.closed == nil else { continue }
                if let o = try? p.client.receive(bytes) {
                    for e in o.events { if case .payload(let pl) = e { p.received.append(pl) } }
                    peers[fd] = p
                    if !o.outgoing.isEmpty { deliver(o.outgoing, from: fd) }
                } else {
                    p.closed = "client refused server bytes"
                    peers[fd] = p
                }
            case .close(let fd, let reason):
                peers[fd]?.closed = reason
                hub.close(fd)
            }
        }
    }

    mutating func deliver(_ bytes: [UInt8], from fd: Int) {
        apply(hub.receive(bytes, from: fd, now: now))
    }

    /// Connects from `address` and logs in; returns the connection number.
    @discardableResult
    mutating func connect(_ identity: ThreemaIdentity, preamble: Bool = false, address: String = "127.0.0.1") throws -> Int {
        let fd = nextFD
        nextFD += 1
        let (client, hello) = try CSP.Client.start(
            configuration: .init(identity: identity, permittedServerKeys: [serverKey.publicKey]), using: &rng)
        peers[fd] = Peer(fd: fd, identity: identity, client: client)
        hub.open(fd, address: address, now: now)
        var first = hello
        if preamble { first = ChatHub.registrationMagic + identity.id.bytes + identity.publicKey.rawRepresentation + hello }
        deliver(first, from: fd)
        return fd
    }

    mutating func send(_ payload: CSP.Payload, from fd: Int) throws {
        let frame = try peers[fd]!.client.send(payload)
        deliver(frame, from: fd)
    }

    func message(from a: ThreemaIdentity, to b: ThreemaIdentity, _ text: String, flags: MessageFlags = []) throws -> CSP.Message {
        var r = messageRNG.generator
        defer { messageRNG.generator = r }
        let wire = try EndToEnd.seal(OutgoingMessage(type: .text, body: Array(text.utf8), createdAt: 1, flags: flags, using: &r),
                                     from: a, keys: try PairKeys(identity: a, contact: b.contact), using: &r)
        return try CSP.Message(wire)
    }

    mutating func take(_ fd: Int) -> [CSP.Payload] {
        defer { peers[fd]?.received = [] }
        return peers[fd]?.received ?? []
    }
}

private func texts(_ payloads: [CSP.Payload], as me: ThreemaIdentity, from other: ThreemaIdentity) throws -> [String] {
    try payloads.compactMap { p -> String? in
        guard case .incomingMessage(let m) = p else { return nil }
        let opened = try m.envelope.open(keys: PairKeys(identity: me, contact: other.contact))
        return String(decoding: opened.container.body, as: UTF8.self)
    }
}

private func contains(_ data: [UInt8], _ needle: [UInt8]) -> Bool {
    guard data.count >= needle.count else { return false }
    for i in 0...(data.count - needle.count) where Array(data[i..<(i + needle.count)]) == needle { return true }
    return false
}

@Suite struct ChatHubTests {
    let alice = ThreemaIdentity(id: try! ThreemaID("ALICE001"), privateKey: privateKey(0x0A))
    let bob = ThreemaIdentity(id: try! ThreemaID("BOB00001"), privateKey: privateKey(0x0B))

    @Test func routesOnlineWithAcksAndEcho() throws {
        var h = Harness(known: [alice, bob])
        let a = try h.connect(alice), b = try h.connect(bob)
        #expect(h.take(a) == [.queueSendComplete])
        #expect(h.take(b) == [.queueSendComplete])
        let m = try h.message(from: alice, to: bob, "hi bob")
        try h.send(.outgoingMessage(m), from: a)
        #expect(h.take(a) == [.outgoingMessageAck(CSP.MessageAck(identity: bob.id, messageID: m.messageID))])
        let got = h.take(b)
        #expect(try texts(got, as: bob, from: alice) == ["hi bob"])
        #expect(h.hub.queuedCount(of: bob.id) == 1)   // until acknowledged
        try h.send(.incomingMessageAck(CSP.MessageAck(identity: alice.id, messageID: m.messageID)), from: b)
        #expect(h.hub.queuedCount(of: bob.id) == 0)
        #expect(h.hub.totalQueuedBytes == 0)
        try h.send(.echoRequest([1, 2, 3]), from: a)
        #expect(h.take(a) == [.echoResponse([1, 2, 3])])
        // The trace holds payloads as the server sees them: the envelope, never the text.
        #expect(h.trace.contains { $0.type == 0x01 && $0.data == m.bytes })
        #expect(!h.trace.contains { contains($0.data, Array("hi bob".utf8)) })
        #expect(h.trace.contains { contains($0.data, [1, 2, 3]) })   // the check can see plaintext
    }

    @Test func queuesForOfflineAndDeliversOnLoginInOrder() throws {
        var h = Harness(known: [alice, bob])
        let a = try h.connect(alice)
        _ = h.take(a)
        var sent: [String] = []
        for i in 0..<5 {
            let text = "offline \(i)"
            sent.append(text)
            try h.send(.outgoingMessage(try h.message(from: alice, to: bob, text)), from: a)
        }
        #expect(h.take(a).count == 5)   // five acks: the server took responsibility
        #expect(h.hub.queuedCount(of: bob.id) == 5)
        let b = try h.connect(bob)
        let got = h.take(b)
        #expect(got.last == .queueSendComplete)
        #expect(try texts(got, as: bob, from: alice) == sent)
        // Not acknowledged: delivered again on the next login.
        h.apply(ChatHub.Output())
        h.hub.close(b)
        let b2 = try h.connect(bob)
        let again = h.take(b2)
        #expect(try texts(again, as: bob, from: alice) == sent)
        for p in again { if case .incomingMessage(let m) = p {
            try h.send(.incomingMessageAck(CSP.MessageAck(identity: m.sender, messageID: m.messageID)), from: b2)
        } }
        #expect(h.hub.queuedCount(of: bob.id) == 0)
        h.hub.close(b2)
        let b3 = try h.connect(bob)
        #expect(h.take(b3) == [.queueSendComplete])
    }

    @Test func queueLimitRefusesWithAlertAndNoAck() throws {
        var h = Harness(queueLimit: 2, known: [alice, bob])
        let a = try h.connect(alice)
        _ = h.take(a)
        for i in 0..<3 { try h.send(.outgoingMessage(try h.message(from: alice, to: bob, "m\(i)")), from: a) }
        let got = h.take(a)
        #expect(got.filter { if case .outgoingMessageAck = $0 { true } else { false } }.count == 2)
        #expect(got.contains { if case .alert(let s) = $0 { s.contains("queue of BOB00001 is full") } else { false } })
        #expect(h.hub.queuedCount(of: bob.id) == 2)
        #expect(h.hub.messagesRefused == 1)
        #expect(h.peers[a]?.closed == nil)   // a refusal, not a violation
    }

    @Test func queueByteLimitAndUnknownReceiver() throws {
        var h = Harness(queueByteLimit: 300, known: [alice, bob])
        let a = try h.connect(alice)
        _ = h.take(a)
        try h.send(.outgoingMessage(try h.message(from: alice, to: bob, String(repeating: "x", count: 400))), from: a)
        #expect(h.take(a).contains { if case .alert = $0 { true } else { false } })
        let carol = ThreemaIdentity(id: try ThreemaID("CAROL001"), privateKey: privateKey(0x0C))
        try h.send(.outgoingMessage(try h.message(from: alice, to: carol, "who?")), from: a)
        #expect(h.take(a).contains { if case .alert(let s) = $0 { s.contains("unknown receiver CAROL001") } else { false } })
        #expect(h.hub.messagesRefused == 2)
    }

    @Test func noServerQueuingAndNoServerAckFlags() throws {
        var h = Harness(known: [alice, bob])
        let a = try h.connect(alice)
        _ = h.take(a)
        try h.send(.outgoingMessage(try h.message(from: alice, to: bob, "gone", flags: .noServerQueuing)), from: a)
        #expect(h.take(a).count == 1)   // acknowledged, dropped
        #expect(h.hub.queuedCount(of: bob.id) == 0)
        try h.send(.outgoingMessage(try h.message(from: alice, to: bob, "quiet", flags: .noServerAck)), from: a)
        #expect(h.take(a).isEmpty)
        #expect(h.hub.queuedCount(of: bob.id) == 1)
    }

    @Test func unknownIdentityIsRefusedWithoutRegistration() throws {
        var h = Harness(known: [bob])
        let a = try h.connect(alice)
        #expect(h.peers[a]?.closed?.contains("is unknown to the server") == true)
        // The preamble is not understood without --register-on-login: garbage for the handshake.
        var h2 = Harness(known: [bob])
        let a2 = try h2.connect(alice, preamble: true)
        #expect(h2.peers[a2]?.closed != nil)
        #expect(h2.hub.identities[alice.id] == nil)
    }

    @Test func registersOnLoginWithPreamble() throws {
        var h = Harness(register: true)
        let a = try h.connect(alice, preamble: true)
        #expect(h.peers[a]?.closed == nil)
        #expect(h.take(a) == [.queueSendComplete])
        #expect(h.hub.identities[alice.id] == alice.publicKey)
        // A known identity logs in without the preamble; a preamble with another key cannot take it over.
        h.hub.close(a)
        let a2 = try h.connect(alice)
        #expect(h.take(a2) == [.queueSendComplete])
        let impostor = ThreemaIdentity(id: alice.id, privateKey: privateKey(0x66))
        let i = try h.connect(impostor, preamble: true)
        #expect(h.peers[i]?.closed?.contains("the login vouch does not match") == true)
        #expect(h.hub.identities[alice.id] == alice.publicKey)
        // A preamble with a key the client does not own cannot register: the vouch fails.
        let carol = ThreemaIdentity(id: try ThreemaID("CAROL001"), privateKey: privateKey(0x0C))
        let fd = 99
        let (client, hello) = try CSP.Client.start(configuration: .init(identity: carol, permittedServerKeys: [h.serverKey.publicKey]),
                                                   using: &h.rng)
        h.peers[fd] = Peer(fd: fd, identity: carol, client: client)
        h.hub.open(fd, now: 0)
        h.deliver(ChatHub.registrationMagic + carol.id.bytes + bob.publicKey.rawRepresentation + hello, from: fd)
        #expect(h.peers[fd]?.closed != nil)
        #expect(h.hub.identities[carol.id] == nil)
    }

    @Test func oneByteChunksWithPreamble() throws {
        var h = Harness(register: true)
        let fd = 50
        let (client, hello) = try CSP.Client.start(configuration: .init(identity: alice, permittedServerKeys: [h.serverKey.publicKey]),
                                                   using: &h.rng)
        h.peers[fd] = Peer(fd: fd, identity: alice, client: client)
        h.hub.open(fd, now: 0)
        for byte in ChatHub.registrationMagic + alice.id.bytes + alice.publicKey.rawRepresentation + hello {
            h.deliver([byte], from: fd)
            #expect(h.hub.bufferedByteCount(of: fd) <= ChatHub.registrationLength + CSP.clientHelloLength)
        }
        #expect(h.peers[fd]?.closed == nil)
        #expect(h.peers[fd]?.received == [.queueSendComplete])
        #expect(h.hub.identity(of: fd) == alice.id)
        // A preamble that goes wrong after a matching prefix closes the connection.
        h.hub.open(51, now: 0)
        h.peers[51] = Peer(fd: 51, identity: bob, client: client)
        h.deliver(Array(ChatHub.registrationMagic.prefix(5)), from: 51)
        #expect(h.peers[51]?.closed == nil)
        h.deliver(Array("X".utf8), from: 51)
        #expect(h.peers[51]?.closed == "malformed registration preamble")
    }

    @Test func secondLoginReplacesTheFirst() throws {
        var h = Harness(known: [alice, bob])
        let a1 = try h.connect(alice)
        _ = h.take(a1)
        let a2 = try h.connect(alice)
        #expect(h.take(a1).contains { if case .closeError(false, _) = $0 { true } else { false } })
        #expect(h.peers[a1]?.closed?.contains("replaced") == true)
        #expect(h.take(a2) == [.queueSendComplete])
        let b = try h.connect(bob)
        _ = h.take(b)
        try h.send(.outgoingMessage(try h.message(from: bob, to: alice, "to the new one")), from: b)
        #expect(try texts(h.take(a2), as: alice, from: bob) == ["to the new one"])
    }

    @Test func violationsCloseTheConnection() throws {
        var h = Harness(known: [alice, bob])
        let a = try h.connect(alice)
        _ = h.take(a)
        // An envelope whose sender is not the logged-in identity.
        try h.send(.outgoingMessage(try h.message(from: bob, to: alice, "forged")), from: a)
        #expect(h.peers[a]?.closed?.contains("sender BOB00001") == true)
        #expect(h.hub.violations == 1)
        // Garbage after login: a frame that does not authenticate.
        let b = try h.connect(bob)
        _ = h.take(b)
        h.deliver([0, 40] + [UInt8](repeating: 0xEE, count: 40), from: b)
        #expect(h.peers[b]?.closed?.contains("protocol violation") == true)
        // An oversize length prefix: refused before allocating.
        let b2 = try h.connect(bob)
        _ = h.take(b2)
        h.deliver([0xFF, 0xFF], from: b2)
        #expect(h.peers[b2]?.closed?.contains("is over the limit") == true)
        // Garbage instead of a client-hello and login.
        let g = 200
        h.hub.open(g, now: 0)
        h.peers[g] = Peer(fd: g, identity: alice, client: try CSP.Client.start(
            configuration: .init(identity: alice, permittedServerKeys: [h.serverKey.publicKey]), using: &h.rng).client)
        h.deliver([UInt8](repeating: 0x41, count: 300), from: g)
        #expect(h.peers[g]?.closed != nil)
        #expect(h.log.contains { $0.contains("connection 200: closing") })
    }

    @Test func handshakeTimeout() throws {
        var h = Harness(known: [alice])
        h.hub.open(7, now: 0)
        _ = h.hub.receive([UInt8](repeating: 1, count: 20), from: 7, now: 0)   // half a client-hello
        #expect(h.hub.expire(now: 4).actions.isEmpty)
        let out = h.hub.expire(now: 6)
        #expect(out.actions == [.close(7, reason: "handshake not completed within 5 s")])
        let a = try h.connect(alice)
        #expect(h.hub.expire(now: 100).actions.isEmpty == true || h.peers[a]?.closed == nil)
        #expect(!h.hub.expire(now: 100).actions.contains { if case .close(a, _) = $0 { true } else { false } })
    }
}

/// A deterministic identity `PREFIXnnn` (8 characters) with a key derived from its name.
private func numbered(_ prefix: String, _ n: Int) -> ThreemaIdentity {
    let digits = String(n)
    let name = prefix + String(repeating: "0", count: 8 - prefix.count - digits.count) + digits
    let key = Array(SHA256.hash(data: Array(name.utf8)))
    return ThreemaIdentity(id: try! ThreemaID(name), privateKey: try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: key))
}

private func acks(_ payloads: [CSP.Payload]) -> Int {
    payloads.filter { if case .outgoingMessageAck = $0 { true } else { false } }.count
}

private func alerts(_ payloads: [CSP.Payload]) -> [String] {
    payloads.compactMap { if case .alert(let s) = $0 { s } else { nil } }
}

/// The hub under a hostile client (issue 35): shares of the queue budget, expiry, rate limits,
/// timers, and the journal that survives a restart.
@Suite struct ChatHubAbuseTests {
    let alice = ThreemaIdentity(id: try! ThreemaID("ALICE001"), privateKey: privateKey(0x0A))
    let bob = ThreemaIdentity(id: try! ThreemaID("BOB00001"), privateKey: privateKey(0x0B))

    /// The attack that stopped all delivery: one sender fills offline queues of many throwaway
    /// receivers. Its share runs out and the legitimate pair is still served; more senders on the
    /// same address run into that address's share, and other addresses are still served.
    @Test func queueBudgetAttackLeavesOthersServed() throws {
        let throwaway = (0..<24).map { numbered("T", $0) }
        let sybils = (0..<6).map { numbered("M", $0) }
        var h = Harness(known: [alice, bob] + sybils + throwaway) { c in
            c.queueByteLimit = 20_000
            c.senderQueueByteLimit = 40_000
            c.addressQueueByteLimit = 120_000
            c.totalQueueByteLimit = 200_000
        }
        let big = String(repeating: "x", count: 7000)
        let charge = ChatHub.chargedBytes(ofEnvelope: try h.message(from: sybils[0], to: alice, big).bytes.count)
        #expect(charge > 7000)
        let m = try h.connect(sybils[0], address: "127.0.0.9")
        _ = h.take(m)
        for r in throwaway { try h.send(.outgoingMessage(try h.message(from: sybils[0], to: r, big)), from: m) }
        let answers = h.take(m)
        #expect(acks(answers) == 40_000 / charge)
        #expect(alerts(answers).count == throwaway.count - 40_000 / charge)
        #expect(alerts(answers).allSatisfy { $0.contains("M0000000 has its share") })
        #expect(h.hub.queuedBytes(from: sybils[0].id) <= 40_000)
        #expect(h.peers[m]?.closed == nil)
        // The legitimate pair: offline queueing and online delivery both work.
        let a = try h.connect(alice)
        _ = h.take(a)
        try h.send(.outgoingMessage(try h.message(from: alice, to: bob, "still served")), from: a)
        #expect(acks(h.take(a)) == 1)
        let b = try h.connect(bob)
        #expect(try texts(h.take(b), as: bob, from: alice) == ["still served"])
        // Sybils: more senders on the same address stop at the address's share.
        var byAddress = 0
        for s in sybils.dropFirst() {
            let fd = try h.connect(s, address: "127.0.0.9")
            _ = h.take(fd)
            for r in throwaway.dropFirst(8) { try h.send(.outgoingMessage(try h.message(from: s, to: r, big)), from: fd) }
            byAddress += alerts(h.take(fd)).filter { $0.contains("the senders on 127.0.0.9") }.count
        }
        #expect(byAddress > 0)
        #expect(h.hub.totalQueuedBytes <= 120_000 + 2 * ChatHub.chargedBytes(ofEnvelope: 200))
        try h.send(.outgoingMessage(try h.message(from: alice, to: throwaway[0], "other address")), from: a)
        #expect(acks(h.take(a)) == 1)
    }

    /// Undelivered messages expire; delivered ones are released on ack or after the window; a
    /// connection that drops inside the window gets them again on the next login.
    @Test func expiryAndAcknowledgementWindow() throws {
        var h = Harness(known: [alice, bob]) { c in
            c.messageLifetime = 100
            c.acknowledgementWindow = 10
        }
        let a = try h.connect(alice)
        _ = h.take(a)
        try h.send(.outgoingMessage(try h.message(from: alice, to: bob, "old")), from: a)
        #expect(h.hub.queuedCount(of: bob.id) == 1)
        h.now = 99
        h.apply(h.hub.expire(now: h.now))
        #expect(h.hub.queuedCount(of: bob.id) == 1)
        h.now = 106
        h.apply(h.hub.expire(now: h.now))
        #expect(h.hub.queuedCount(of: bob.id) == 0)
        #expect(h.hub.messagesExpired == 1)
        #expect(h.hub.totalQueuedBytes == 0)
        // Delivered, never acknowledged: released after the window.
        try h.send(.echoRequest([1]), from: a)   // keeps alice's connection inside the idle timeout
        let b = try h.connect(bob)
        _ = h.take(b)
        try h.send(.outgoingMessage(try h.message(from: alice, to: bob, "unacked")), from: a)
        #expect(try texts(h.take(b), as: bob, from: alice) == ["unacked"])
        #expect(h.hub.queuedCount(of: bob.id) == 1)
        h.now = 115
        h.apply(h.hub.expire(now: h.now))
        #expect(h.hub.queuedCount(of: bob.id) == 1)
        h.now = 121
        h.apply(h.hub.expire(now: h.now))
        #expect(h.hub.queuedCount(of: bob.id) == 0)
        #expect(h.hub.messagesReleasedUnacknowledged == 1)
        // Dropped inside the window: delivered again.
        try h.send(.outgoingMessage(try h.message(from: alice, to: bob, "again")), from: a)
        #expect(try texts(h.take(b), as: bob, from: alice) == ["again"])
        h.hub.close(b)
        h.now = 140
        h.apply(h.hub.expire(now: h.now))
        #expect(h.hub.queuedCount(of: bob.id) == 1)
        let b2 = try h.connect(bob)
        #expect(try texts(h.take(b2), as: bob, from: alice) == ["again"])
    }

    @Test func registrationsRateLimitedPerAddressAndExpire() throws {
        var h = Harness(register: true, known: [bob]) { c in
            c.registrationRate = ChatRate(perSecond: 0, burst: 3)
            c.identityLifetime = 1000
            c.idleTimeout = nil
        }
        var fds: [Int] = []
        for k in 0..<4 { fds.append(try h.connect(numbered("R", k), preamble: true, address: "127.0.0.5")) }
        #expect(fds.prefix(3).allSatisfy { h.peers[$0]?.closed == nil })
        #expect(h.peers[fds[3]]?.closed?.contains("registration rate limit for 127.0.0.5") == true)
        #expect(h.take(fds[3]).contains { if case .closeError(false, let s) = $0 { s.contains("rate limit") } else { false } })
        #expect(h.hub.identityCount == 4)   // bob and three registrations
        #expect(h.hub.registrationsRefused == 1)
        let other = try h.connect(numbered("R", 9), preamble: true, address: "127.0.0.6")
        #expect(h.peers[other]?.closed == nil)
        #expect(h.hub.identityCount == 5)
        // A registered identity that stops logging in expires; one given at start does not; one
        // online does not.
        h.hub.close(fds[0])
        h.hub.close(fds[1])
        h.now = 1500
        let out = h.hub.expire(now: h.now)
        h.apply(out)
        #expect(h.hub.identities[numbered("R", 0).id] == nil)
        #expect(h.hub.identities[numbered("R", 1).id] == nil)
        #expect(h.hub.identities[bob.id] != nil)
        #expect(h.hub.identities[numbered("R", 9).id] != nil)   // still online
        #expect(h.hub.identitiesExpired >= 2)
    }

    @Test func identityCapRefusesRegistration() throws {
        var h = Harness(register: true, known: [bob]) { c in c.maxIdentities = 2 }
        let a = try h.connect(alice, preamble: true)
        #expect(h.peers[a]?.closed == nil)
        let c = try h.connect(numbered("C", 1), preamble: true)
        #expect(h.peers[c]?.closed?.contains("identities known") == true)
        #expect(h.hub.identityCount == 2)
    }

    @Test func handshakesRateLimitedPerAddressAndInTotal() throws {
        var h = Harness(known: [alice, bob]) { c in
            c.handshakeRate = ChatRate(perSecond: 0, burst: 2)
            c.globalHandshakeRate = nil
        }
        let first = try h.connect(alice, address: "127.0.0.7")
        let second = try h.connect(bob, address: "127.0.0.7")
        let third = try h.connect(alice, address: "127.0.0.7")
        #expect(h.peers[first]?.closed == nil)   // the third is refused before its login could replace it
        #expect(h.peers[second]?.closed == nil)
        #expect(h.peers[third]?.closed?.contains("handshake refused") == true)
        #expect(h.hub.identity(of: first) == alice.id)
        #expect(h.hub.handshakesRefused == 1)
        let elsewhere = try h.connect(alice, address: "127.0.0.8")
        #expect(h.hub.identity(of: elsewhere) == alice.id)
        // The global bucket: every address together.
        var g = Harness(known: [alice, bob]) { c in
            c.handshakeRate = nil
            c.globalHandshakeRate = ChatRate(perSecond: 1, burst: 2)
        }
        _ = try g.connect(alice, address: "127.0.0.1")
        _ = try g.connect(bob, address: "127.0.0.2")
        let refused = try g.connect(alice, address: "127.0.0.3")
        #expect(g.peers[refused]?.closed?.contains("handshake refused") == true)
        g.now = 1.5   // one token earned
        let later = try g.connect(alice, address: "127.0.0.3")
        #expect(g.hub.identity(of: later) == alice.id)
    }

    /// Bytes of an unfinished frame are not progress: they do not keep a logged-in connection open.
    @Test func idleTimeoutCountsOnlyCompletePayloads() throws {
        var h = Harness(known: [alice, bob]) { c in c.idleTimeout = 30 }
        let a = try h.connect(alice), b = try h.connect(bob)
        h.now = 20
        h.deliver([0x00], from: a)   // the first byte of a frame length
        try h.send(.echoRequest([7]), from: b)
        h.now = 31
        h.apply(h.hub.expire(now: h.now))
        #expect(h.peers[a]?.closed?.contains("no complete payload for 30 s") == true)
        #expect(h.peers[b]?.closed == nil)
        h.now = 51
        h.apply(h.hub.expire(now: h.now))
        #expect(h.peers[b]?.closed != nil)
    }

    /// A restart from the journal: registrations and queued messages come back, acknowledged
    /// messages do not, a torn last record is ignored, lifetimes that ended meanwhile are applied.
    @Test func journalRestoresStateWithoutRepeats() throws {
        var h = Harness(register: true)
        let a = try h.connect(alice, preamble: true)
        let b = try h.connect(bob, preamble: true)
        h.hub.close(b)
        _ = h.take(a)
        var sent: [String] = []
        for i in 0..<5 {
            sent.append("queued \(i)")
            try h.send(.outgoingMessage(try h.message(from: alice, to: bob, sent[i])), from: a)
        }
        #expect(acks(h.take(a)) == 5)

        // Restart 1: the journal as appended; bob logs in without a preamble and acks three.
        var h2 = Harness(register: true)
        let s1r = h2.hub.restore(journal: h.journal, now: 10)
        let s1 = try #require(s1r)
        #expect(s1.identities == 2 && s1.messages == 5 && s1.ignoredTailBytes == 0)
        h2.journal = h2.hub.journalSnapshot()   // what the server writes at start
        let b2 = try h2.connect(bob)
        let got = h2.take(b2)
        #expect(try texts(got, as: bob, from: alice) == sent)
        for p in got.prefix(3) { if case .incomingMessage(let m) = p {
            try h2.send(.incomingMessageAck(CSP.MessageAck(identity: m.sender, messageID: m.messageID)), from: b2)
        } }
        #expect(h2.hub.queuedCount(of: bob.id) == 2)

        // Restart 2, with a torn last record: the two unacknowledged messages, nothing else.
        var torn = h2.journal
        torn += ChatJournal.header.prefix(5)
        var h3 = Harness(register: true)
        let s2r = h3.hub.restore(journal: torn, now: 20)
        let s2 = try #require(s2r)
        #expect(s2.ignoredTailBytes == 5 && s2.validLength == h2.journal.count)
        #expect(s2.messages == 2)
        let b3 = try h3.connect(bob)
        #expect(try texts(h3.take(b3), as: bob, from: alice) == Array(sent.suffix(2)))

        // A restart after the lifetime: the messages are dropped, the identities stay.
        var h4 = Harness(register: true)
        let s3r = h4.hub.restore(journal: h2.journal, now: 10 + 15 * 86_400)
        let s3 = try #require(s3r)
        #expect(s3.messages == 0 && s3.expired == 2 && s3.identities == 2)
        #expect(h4.hub.totalQueuedBytes == 0)
        // Not a journal at all.
        #expect(h4.hub.restore(journal: Array("garbage".utf8), now: 0) == nil)
    }
}
