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
    /// Every chunk the client sent, in order.
    var sent: [[UInt8]] = []

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
            sent.append(chunk)
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

    /// What an application does after a restart (Docs/Snapshots.md): the connection is replaced by
    /// its restored snapshot (`exact`: the same session; otherwise a new one, the default), then
    /// started on a new connection. The snapshot must survive restore and snapshot unchanged.
    mutating func restart(exact: Bool) throws {
        let snapshot = client.snapshot()
        var other = SplitMix64(seed: 0xDEAD)  // the restore's own transport is discarded by reconnect
        client = try ClientConnection(restoring: snapshot, transport: client.transportKind, handshake: client.handshakeConfiguration,
                                      newSession: !exact, using: &other)
        if exact {
            let again = try ClientConnection(restoring: snapshot, transport: client.transportKind, handshake: client.handshakeConfiguration,
                                             newSession: false, using: &other).snapshot()
            #expect(again == snapshot, "restore then snapshot changed the bytes")
        }
        try pump(try reconnect())
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

    /// The seeded simulation: 400 steps of clock jumps, salt rotation, lost sessions and keys over a
    /// network that drops and duplicates. `restarts`: the steps after which the client restarts — with
    /// `restore` the connection is replaced by its restored snapshot first (`exact`: the same session),
    /// without it only the socket is replaced (the run to compare with). The restart steps come from a
    /// generator of their own, so the plan is the same in every run.
    private static func simulate(seed: UInt64, restarts: Set<Int> = [], restore: (exact: Bool, enabled: Bool) = (true, false)) throws
        -> (net: Net, sent: [RequestLayer.RequestID], jumps: Int, sessionLosses: Int, keyLosses: Int) {
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
            if restarts.contains(step) {
                if restore.enabled { try net.restart(exact: restore.exact) } else { try net.pump(try net.reconnect()) }
            }
        }
        // Quiet time: everything still owed arrives.
        for _ in 0..<5 {
            net.time += 1
            try net.pump(try net.client.reconnect(now: net.clientNow, using: &net.crng))
        }
        return (net, sent, jumps, sessionLosses, keyLosses)
    }

    @Test("Seeded simulation: clock jumps of ±1 h, salts every minute, drops, duplicates, lost sessions and keys; every RPC answered exactly once",
          arguments: [UInt64(1), 2, 3])
    func simulation(seed: UInt64) throws {
        let (net, sent, jumps, sessionLosses, keyLosses) = try Self.simulate(seed: seed)
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

    /// Random restart steps (about one in eight), from a generator of their own.
    static func restartSteps(seed: UInt64) -> Set<Int> {
        var g = SplitMix64(seed: seed &+ 0x5EED)
        return Set((0..<400).filter { _ in g.next() % 8 == 0 })
    }

    @Test("Snapshot and exact restore at random steps of the simulation: the same bytes, events and answers as reconnecting alone (Docs/Snapshots.md §6)",
          arguments: [UInt64(1), 2])
    func restoreInsideSimulationChangesNothing(seed: UInt64) throws {
        let steps = Self.restartSteps(seed: seed)
        let plain = try Self.simulate(seed: seed, restarts: steps)
        let restored = try Self.simulate(seed: seed, restarts: steps, restore: (exact: true, enabled: true))
        #expect(steps.count > 20)
        #expect(plain.net.sent.count == restored.net.sent.count)
        #expect(plain.net.sent == restored.net.sent, "seed \(seed): the client's bytes differ")
        #expect(plain.net.events.map { "\($0)" } == restored.net.events.map { "\($0)" }, "seed \(seed): the events differ")
        #expect(plain.net.answers == restored.net.answers)
        #expect(restored.sent.allSatisfy { restored.net.answers[$0] == 1 }, "every RPC answered exactly once")
    }

    @Test("Restores with a new session at random steps (what an application does): every RPC still answered", arguments: [UInt64(3)])
    func restoreWithNewSessionsKeepsEveryRequest(seed: UInt64) throws {
        let run = try Self.simulate(seed: seed, restarts: Self.restartSteps(seed: seed), restore: (exact: false, enabled: true))
        let unanswered = run.sent.filter { run.net.answers[$0] == nil }
        #expect(unanswered.isEmpty, "seed \(seed): \(unanswered.count) of \(run.sent.count) unanswered")
        // At least once across restarts: a request answered just before a restart may go again.
        #expect(run.net.answers.values.allSatisfy { $0 >= 1 })
    }

    /// A PFS connection after its handshake and binding, with three requests in flight (sent, not
    /// answered) and one queued: the golden connection.
    private static func connectionWithRequestsInFlight(_ count: Int = 3) throws -> Net {
        var (server, pub) = try serverAndKey()
        let perm = try permanentKey(&server, pub, seed: 31)
        var rng = SplitMix64(seed: 32)
        let client = try ClientConnection(transport: .plain(.intermediate), handshake: .init(publicKeys: [pub], dc: 2, mode: .temporary(expiresIn: 900)),
                                          permanentKey: perm, using: &rng)
        var net = Net(server: server, client: client, seed: 33)
        try net.pump(try net.client.start(now: net.clientNow, using: &net.crng))
        // Sent, but the server never sees them (the connection is about to die).
        for i in 0..<count { _ = try net.client.request(ping(Int64(i)), now: net.clientNow, using: &net.crng) }
        return net
    }

    @Test("MCON golden file: restores, snapshots to the same bytes, keeps its keys and its requests")
    func connectionGoldenFile() throws {
        let golden = try goldenSnapshot("MCON-v1") { try! Self.connectionWithRequestsInFlight().client.snapshot() }
        var rng = SplitMix64(seed: 1)
        let pub = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM).publicKey
        let config = ClientHandshake.Configuration(publicKeys: [pub], dc: 2, mode: .temporary(expiresIn: 900))
        let c = try ClientConnection(restoring: golden, transport: .plain(.intermediate), handshake: config, newSession: false, using: &rng)
        #expect(c.snapshot() == golden)
        #expect(c.permanentKey != nil && c.session != nil && c.keyExpiresAt != nil)
        #expect(c.keysMade == 1 && c.keysBound == 1 && c.requests.pendingCount == 3 && c.requests.queuedCount == 3)
        // A permanent key restored under a permanent-key handshake is refused, in plain words.
        #expect(throws: RampartError.invalidSnapshot(.invalidField("permanent key (the handshake given makes permanent keys)"))) {
            _ = try ClientConnection(restoring: golden, transport: .plain(.intermediate), handshake: .init(publicKeys: [pub], dc: 2), using: &rng)
        }
        // Every truncation and a later version are typed errors.
        let bytes = golden.copyBytes()
        for n in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: RampartError.self) {
                _ = try ClientConnection(restoring: SnapshotBytes(copying: bytes.prefix(n)), transport: .plain(.intermediate), handshake: config, using: &rng)
            }
        }
        var v2 = bytes
        v2[8] = 2
        #expect(throws: RampartError.self) {
            _ = try ClientConnection(restoring: SnapshotBytes(copying: v2), transport: .plain(.intermediate), handshake: config, using: &rng)
        }
    }

    @Test("Requests in flight survive a restart: restored with a new session, reconnected, each answered once", arguments: [3, 1000])
    func requestsInFlightSurviveARestart(count: Int) throws {
        var net = try Self.connectionWithRequestsInFlight(count)
        let before = net.client.session?.sessionId
        #expect(net.client.requests.pendingCount == count && net.answers.isEmpty)
        try net.restart(exact: false)
        #expect(net.client.session?.sessionId != before, "a new session after the restore")
        #expect(net.client.requests.pendingCount == 0, "\(net.log.suffix(5))")
        #expect(net.answers.count == count && net.answers.values.allSatisfy { $0 == 1 })
    }
}
