// The loopback chat hub (Docs/Threema.md §9.5) driven by in-process CSP clients: routing with acks,
// offline queues delivered on login and removed on acknowledgement, queue limits, registration on
// login, replacement on a second login, echo, and closing on protocol violations.

import Rampart
import RampartThreemaChatServer
import Testing
@testable import RampartThreema

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
    var rng = SystemRandomNumberGenerator()
    let serverKey: Curve25519.KeyAgreement.PrivateKey

    init(register: Bool = false, queueLimit: Int = 100, queueByteLimit: Int = 512 * 1024,
         known: [ThreemaIdentity] = []) {
        serverKey = privateKey(0x51)
        var conf = ChatHub.Configuration(permanentKey: serverKey)
        conf.registerOnLogin = register
        conf.queueLimit = queueLimit
        conf.queueByteLimit = queueByteLimit
        conf.handshakeTimeout = 5
        var ids: [ThreemaID: Curve25519.KeyAgreement.PublicKey] = [:]
        for i in known { ids[i.id] = i.publicKey }
        hub = ChatHub(configuration: conf, identities: ids)
    }

    /// Applies hub output: bytes to the clients, closes.
    mutating func apply(_ out: ChatHub.Output) {
        log += out.log
        trace += out.trace
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

    mutating func deliver(_ bytes: [UInt8], from fd: Int, now: Double = 0) {
        apply(hub.receive(bytes, from: fd, now: now))
    }

    /// Connects and logs in; returns the connection number.
    @discardableResult
    mutating func connect(_ identity: ThreemaIdentity, preamble: Bool = false) throws -> Int {
        let fd = nextFD
        nextFD += 1
        let (client, hello) = try CSP.Client.start(
            configuration: .init(identity: identity, permittedServerKeys: [serverKey.publicKey]), using: &rng)
        peers[fd] = Peer(fd: fd, identity: identity, client: client)
        hub.open(fd, now: 0)
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
        var r = SystemRandomNumberGenerator()
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
        #expect(h.peers[a]?.closed?.contains("unknownIdentity") == true)
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
        #expect(h.peers[i]?.closed?.contains("invalidVouch") == true)
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
        #expect(h.peers[b2]?.closed?.contains("frameTooLarge") == true)
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
