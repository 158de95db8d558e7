// A client that lives with a server (issue 16): the server's bad_msg_notification 16/17 for a clock that
// is off, temporary keys bound automatically, rotated before expiry and made again after −404, and a
// seeded simulation in which the request-layer client survives clock jumps of an hour, salt rotation
// every minute, dropped and duplicated packets, lost sessions and lost keys, with every RPC answered
// exactly once.

import Testing
@testable import RampartMTProto
@testable import RampartMTProtoServer
import RampartTestSupport

/// A client and the in-memory test server over one simulated network.
private struct Net {
    var server: TestServer
    var client: ClientConnection
    var connection = 1
    /// True (server) time; the client's clock is `time + skew`.
    var time = 1_800_000_000.0
    var skew = 0.0
    var crng: SplitMix64
    var srng: SplitMix64
    var net: SplitMix64
    /// Per mille of chunks dropped (the connection breaks, as TCP would) and duplicated.
    var dropRate: UInt64 = 0
    var duplicateRate: UInt64 = 0
    var answers: [RequestLayer.RequestID: Int] = [:]
    var events: [ClientConnection.Event] = []
    var log: [String] = []
    var reconnects = 0, drops = 0, duplicates = 0
    var clientErrors: [String] = []

    var clientNow: Double { time + skew }

    init(server: TestServer, client: ClientConnection, seed: UInt64) {
        self.server = server
        self.client = client
        crng = SplitMix64(seed: seed &+ 1)
        srng = SplitMix64(seed: seed &+ 2)
        net = SplitMix64(seed: seed &+ 3)
        self.server.open(connection)
    }

    /// A new connection: the server forgets the old one, the client starts over on the new one.
    mutating func reconnect() throws -> [UInt8] {
        server.close(connection)
        connection += 1
        server.open(connection)
        reconnects += 1
        return try client.reconnect(now: clientNow, using: &crng)
    }

    /// Carries `bytes` from the client until both sides are quiet (at most 40 round trips).
    mutating func pump(_ bytes: [UInt8]) throws {
        var toServer = bytes
        for _ in 0..<40 where !toServer.isEmpty {
            var chunk = toServer
            if dropRate > 0, net.next() % 1000 < dropRate {
                drops += 1
                toServer = try reconnect()
                continue
            }
            if duplicateRate > 0, net.next() % 1000 < duplicateRate {
                duplicates += 1
                chunk += chunk
            }
            let reply = server.receive(chunk, from: connection, now: time, using: &srng)
            log += reply.log
            var back = reply.send
            if duplicateRate > 0, !back.isEmpty, net.next() % 1000 < duplicateRate {
                duplicates += 1
                back += back
            }
            let out: [UInt8], ev: [ClientConnection.Event]
            do {
                (out, ev) = try client.receive(back, now: clientNow, using: &crng)
            } catch {
                // What a driver does when the connection's bytes cannot be read (here: a duplicated
                // handshake answer): a new connection.
                clientErrors.append("\(error)")
                toServer = try reconnect()
                continue
            }
            record(ev)
            toServer = out
            if reply.close || ev.contains(where: { if case .keyLost = $0 { true } else { false } }) {
                toServer = try reconnect()
            }
        }
    }

    mutating func record(_ ev: [ClientConnection.Event]) {
        events += ev
        for e in ev {
            switch e {
            case .request(.result(let id, _)), .request(.rpcError(let id, _)), .request(.undecodableResult(let id, _)):
                answers[id, default: 0] += 1
            default: break
            }
        }
    }

    /// Queues a request and carries it.
    mutating func request(_ body: [UInt8]) throws -> RequestLayer.RequestID {
        let (bytes, id) = try client.request(body, now: clientNow, using: &crng)
        try pump(bytes)
        return id
    }

    mutating func tick() throws {
        try pump(try client.tick(now: clientNow, using: &crng))
    }
}

private func ping(_ id: Int64) -> [UInt8] { ServiceMessage.ping(pingId: id).encoded() }
private let nearestDc: [UInt8] = [0x26, 0x30, 0xB3, 0x1F]  // help.getNearestDc

private func serverAndKey(saltPeriod: Double? = nil) throws -> (TestServer, RSA.PublicKey) {
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    var conf = TestServer.Configuration(handshake: .init(privateKeys: [priv], dc: 2))
    conf.saltPeriod = saltPeriod
    conf.rsaLimitPerAddress = nil
    conf.rsaLimitGlobal = nil
    return (try TestServer(configuration: conf), priv.publicKey)
}

/// A permanent key made on the server (the first connection of a PFS client).
private func permanentKey(_ server: inout TestServer, _ pub: RSA.PublicKey, seed: UInt64) throws -> AuthKey {
    var rng = SplitMix64(seed: seed)
    let client = try ClientConnection(transport: .plain(.intermediate), handshake: .init(publicKeys: [pub], dc: 2), using: &rng)
    var net = Net(server: server, client: client, seed: seed)
    net.connection = 9_000
    net.server.open(9_000)
    try net.pump(try net.client.start(now: net.clientNow, using: &net.crng))
    server = net.server
    return try #require(net.client.session?.authKey)
}

@Suite("Client lifecycle (issue 16)")
struct ClientLifecycleTests {
    @Test("A clock an hour off: the server answers bad_msg_notification 16/17, the request layer re-sends, the RPC is answered once",
          arguments: [3600.0, -3600.0])
    func clockJumps(offset: Double) throws {
        let (server, pub) = try serverAndKey()
        var rng = SplitMix64(seed: 1)
        let client = try ClientConnection(transport: .plain(.intermediate), handshake: .init(publicKeys: [pub], dc: 2), using: &rng)
        var net = Net(server: server, client: client, seed: 7)
        try net.pump(try net.client.start(now: net.clientNow, using: &net.crng))
        let first = try net.request(ping(1))
        #expect(net.answers[first] == 1)
        net.skew = offset
        net.time += 5
        let second = try net.request(ping(2))
        #expect(net.answers[second] == 1, "\(net.log)")
        let code: Int32 = offset > 0 ? 17 : 16
        #expect(net.log.contains { $0.contains("bad_msg_notification \(code)") }, "\(net.log)")
        #expect(net.reconnects == 0)
        // After the correction the client's server-time estimate is right again.
        let estimate = try #require(net.client.session?.messageIds.serverTime(at: net.clientNow))
        #expect(abs(estimate - net.time) < 2)
    }

    @Test("A temporary key is bound automatically; requests wait for the binding; the server records it")
    func temporaryKeyIsBound() throws {
        var (server, pub) = try serverAndKey()
        let perm = try permanentKey(&server, pub, seed: 3)
        var rng = SplitMix64(seed: 4)
        let client = try ClientConnection(transport: .plain(.abridged), handshake: .init(publicKeys: [pub], dc: 2, mode: .temporary(expiresIn: 900)),
                                          permanentKey: perm, using: &rng)
        var net = Net(server: server, client: client, seed: 5)
        try net.pump(try net.client.start(now: net.clientNow, using: &net.crng))
        let bound = net.events.compactMap { if case .temporaryKeyBound(let at) = $0 { at } else { nil } }
        #expect(bound.count == 1)
        #expect(abs(Double(bound.first ?? 0) - (net.time + 900)) < 2)
        let temp = try #require(net.client.session?.authKey)
        #expect(net.server.binding(ofKey: temp.id) == .some(perm.id))
        #expect(net.client.keysMade == 1 && net.client.keysBound == 1)
        // Held while unbound: a request queued before the binding goes out only after it.
        let id = try net.request(nearestDc)
        #expect(net.answers[id] == 1)
        // A permanent-key handshake cannot bind.
        #expect(throws: MTProtoError.self) {
            _ = try ClientConnection(transport: .plain(.abridged), handshake: .init(publicKeys: [pub], dc: 2), permanentKey: perm, using: &rng)
        }
    }

    @Test("Rotation before expiry: a new key made and bound on the same connection, the binding moves, requests go on")
    func temporaryKeyRotates() throws {
        var (server, pub) = try serverAndKey()
        let perm = try permanentKey(&server, pub, seed: 13)
        var rng = SplitMix64(seed: 14)
        let client = try ClientConnection(transport: .plain(.intermediate), handshake: .init(publicKeys: [pub], dc: 2, mode: .temporary(expiresIn: 600)),
                                          permanentKey: perm, using: &rng)
        var net = Net(server: server, client: client, seed: 15)
        try net.pump(try net.client.start(now: net.clientNow, using: &net.crng))
        let first = try #require(net.client.session?.authKey)
        net.time += 500
        try net.tick()
        #expect(net.client.session?.authKey == first)  // not yet: 60 s margin
        net.time += 50
        try net.tick()
        let second = try #require(net.client.session?.authKey)
        #expect(second != first && net.client.keysBound == 2 && net.reconnects == 0)
        #expect(net.server.binding(ofKey: second.id) == .some(perm.id))
        let id = try net.request(ping(5))
        #expect(net.answers[id] == 1)
    }

    @Test("A lost temporary key (−404 after expiry): keyLost, a new connection, a new key bound, the waiting request answered")
    func lostKeyIsRemade() throws {
        var (server, pub) = try serverAndKey()
        let perm = try permanentKey(&server, pub, seed: 23)
        var rng = SplitMix64(seed: 24)
        let client = try ClientConnection(transport: .plain(.intermediate), handshake: .init(publicKeys: [pub], dc: 2, mode: .temporary(expiresIn: 300)),
                                          permanentKey: perm, using: &rng)
        var net = Net(server: server, client: client, seed: 25)
        try net.pump(try net.client.start(now: net.clientNow, using: &net.crng))
        let first = try #require(net.client.session?.authKey)
        // The client sleeps past the expiry without ticking: the server has forgotten the key.
        net.time += 400
        let id = try net.request(ping(9))
        #expect(net.events.contains { if case .keyLost = $0 { true } else { false } })
        #expect(net.events.contains { if case .transportError(-404) = $0 { true } else { false } })
        #expect(net.client.keysLost == 1 && net.client.keysBound == 2 && net.reconnects == 1)
        #expect(net.client.session?.authKey != first)
        #expect(net.answers[id] == 1, "\(net.log)")
    }

    @Test("Seeded simulation: clock jumps of ±1 h, salts every minute, drops, duplicates, lost sessions and keys; every RPC answered exactly once",
          arguments: [UInt64(1), 2, 3])
    func simulation(seed: UInt64) throws {
        var (server, pub) = try serverAndKey(saltPeriod: 60)
        let perm = try permanentKey(&server, pub, seed: seed &* 100)
        var rng = SplitMix64(seed: seed &* 100 &+ 1)
        let client = try ClientConnection(transport: .plain(.intermediate), handshake: .init(publicKeys: [pub], dc: 2, mode: .temporary(expiresIn: 1200)),
                                          permanentKey: perm, using: &rng)
        var net = Net(server: server, client: client, seed: seed)
        net.dropRate = 30
        net.duplicateRate = 30
        var plan = SplitMix64(seed: seed &+ 77)
        try net.pump(try net.client.start(now: net.clientNow, using: &net.crng))
        var sent: [RequestLayer.RequestID] = []
        var jumps = 0, sessionLosses = 0, keyLosses = 0
        for step in 0..<400 {
            net.time += Double(plan.next() % 30) + 1
            switch plan.next() % 100 {
            case 0..<3:
                net.skew = net.skew == 0 ? (plan.next() & 1 == 0 ? 3600 : -3600) : 0
                jumps += 1
            case 3..<5:
                net.server.forgetSessions()
                sessionLosses += 1
            case 5:
                // The server loses its temporary keys (as after a restart: they live in memory only).
                net.server.forgetTemporaryKeys()
                keyLosses += 1
            default:
                break
            }
            let body = plan.next() & 1 == 0 ? ping(Int64(step)) : nearestDc
            sent.append(try net.request(body))
            try net.tick()
        }
        // Quiet time: everything still owed arrives.
        for _ in 0..<5 {
            net.time += 1
            try net.pump(try net.client.reconnect(now: net.clientNow, using: &net.crng))
        }
        let unanswered = sent.filter { net.answers[$0] == nil }
        let twice = net.answers.filter { $0.value > 1 }
        #expect(unanswered.isEmpty, "seed \(seed): \(unanswered.count) of \(sent.count) unanswered")
        #expect(twice.isEmpty, "seed \(seed): answered more than once: \(twice)")
        #expect(jumps > 0 && sessionLosses > 0 && net.drops > 0 && net.duplicates > 0)
        #expect(net.client.keysMade >= 2, "rotations or losses made new keys")
        print("simulation seed \(seed): \(sent.count) RPCs, \(jumps) clock jumps, \(sessionLosses) session losses, \(keyLosses) key losses, "
              + "\(net.drops) drops, \(net.duplicates) duplicates, \(net.reconnects) reconnects, keys made \(net.client.keysMade), "
              + "bound \(net.client.keysBound), lost \(net.client.keysLost), rejected packets \(net.client.rejectedPackets), "
              + "connections ended by a client error \(net.clientErrors.count) \(Set(net.clientErrors))")
    }
}

