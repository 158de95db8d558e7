// The test server's secret-chat relay (Docs/MTProto.md §7.9): two clients through the whole TestServer in
// memory (handshake, chat, 300 messages with two re-keys, a dropped message recovered, a file, the
// end), and the relay's RPCs one by one: refusals are typed rpc_errors that change nothing, stores are
// bounded, and garbage never traps.

import Foundation
import Testing
@testable import RampartMTProto
@testable import RampartMTProtoServer
import Rampart
import RampartTestSupport

/// A TestServer in memory that several client threads talk to.
private final class MemoryHub: @unchecked Sendable {
    let lock = NSCondition()
    var server: TestServer
    var inbox: [Int: [UInt8]] = [:]
    var closed: Set<Int> = []
    var rng = SplitMix64(seed: 0x4E1A)  // under `lock`; the order of draws follows the client threads
    var serverLog: [String] = []

    init(_ server: TestServer) { self.server = server }

    func open(_ id: Int) {
        lock.lock(); defer { lock.unlock() }
        server.open(id)
        inbox[id] = []
    }

    func write(_ bytes: [UInt8], from id: Int) {
        lock.lock(); defer { lock.unlock() }
        let reply = server.receive(bytes, from: id, now: Date().timeIntervalSince1970, using: &rng)
        serverLog += reply.log
        inbox[id, default: []] += reply.send
        if reply.close { closed.insert(id) }
        for p in reply.push { inbox[p.connection, default: []] += p.bytes }
        lock.broadcast()
    }

    func read(_ id: Int, timeoutMs: Int) -> [UInt8]? {
        lock.lock(); defer { lock.unlock() }
        let until = Date(timeIntervalSinceNow: Double(timeoutMs) / 1000)
        while inbox[id, default: []].isEmpty {
            if closed.contains(id) { return nil }
            if !lock.wait(until: until) { break }
        }
        let b = inbox[id] ?? []
        inbox[id] = []
        return b
    }
}

private final class MemoryLink: MTProtoLink {
    let hub: MemoryHub
    let id: Int
    init(_ hub: MemoryHub, id: Int) {
        self.hub = hub
        self.id = id
        hub.open(id)
    }

    func write(_ bytes: [UInt8]) throws(SecretChatRelayClient.Failure) { hub.write(bytes, from: id) }

    func read(timeoutMs: Int) throws(SecretChatRelayClient.Failure) -> [UInt8] {
        guard let b = hub.read(id, timeoutMs: timeoutMs) else { throw .init("closed by the server") }
        return b
    }
}

private func relayServer(drop: Set<Int> = [], configure: (inout TestServer.Configuration) -> Void = { _ in }) throws
    -> (TestServer, RSA.PublicKey) {
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    var conf = TestServer.Configuration(handshake: .init(privateKeys: [priv], dc: 2))
    conf.dropSecretMessages = drop
    configure(&conf)
    return (try TestServer(configuration: conf), priv.publicKey)
}

private func client(_ hub: MemoryHub, id: Int, key: RSA.PublicKey) throws -> SecretChatRelayClient {
    try SecretChatRelayClient(link: MemoryLink(hub, id: id), publicKeys: [key], clock: { Date().timeIntervalSince1970 },
                              log: { _ in })
}

/// Runs both sides of a plan on two threads; returns (creator, acceptor) summaries or the failures.
private func runPair(_ hub: MemoryHub, key: RSA.PublicKey, plan: SecretChatRelayClient.Plan) throws
    -> (SecretChatRelayClient.Summary, SecretChatRelayClient.Summary) {
    let acceptor = try client(hub, id: 1, key: key)
    try acceptor.connect()
    let creator = try client(hub, id: 2, key: key)
    try creator.connect()
    #expect(acceptor.user != creator.user)
    /// The acceptor, handed to its thread (it is used there only).
    final class Box: @unchecked Sendable {
        let acceptor: SecretChatRelayClient
        var result: Result<SecretChatRelayClient.Summary, SecretChatRelayClient.Failure>?
        init(_ a: SecretChatRelayClient) { acceptor = a }
    }
    let box = Box(acceptor)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        box.result = Result { () throws(SecretChatRelayClient.Failure) in try box.acceptor.runAcceptor(plan: plan) }
        done.signal()
    }
    thread.start()
    let (peer, peerHash) = (acceptor.user, acceptor.accessHash)
    let c = try creator.runCreator(peer: peer, peerAccessHash: peerHash, plan: plan)
    done.wait()
    let a = try #require(box.result).get()
    return (c, a)
}

@Suite struct SecretChatRelayTests {
    /// Two clients through the TestServer: handshake, chat, 300 texts with re-keys after about 100 and
    /// 200 messages, the 55th text dropped by the relay and recovered by a resend, a file in several
    /// parts, and the end of the chat.
    @Test func twoClientsThroughTheServer() throws {
        let (server, key) = try relayServer(drop: [55])
        let hub = MemoryHub(server)
        var plan = SecretChatRelayClient.Plan()
        plan.fileBytes = 300_001
        plan.partBytes = 64 << 10
        let (c, a) = try runPair(hub, key: key, plan: plan)
        #expect(c.fingerprint == a.fingerprint && c.fingerprint != 0)
        #expect(c.keyHash == a.keyHash && c.keyHash.count == 36)
        #expect(c.rekeys == 2 && a.rekeys == 2)
        #expect(c.sent == 150 && a.sent == 151)        // the acceptor's last text confirms the file
        #expect(c.received == 151 && a.received == 151) // the file message counts as one
        #expect(c.gaps + a.gaps == 1 && c.resent + a.resent == 1)
        #expect(c.fileSHA256 != nil && c.fileSHA256 == a.fileSHA256)
        #expect(hub.server.relay.chatCount == 0)
        #expect(hub.serverLog.contains { $0.contains("message #55") && $0.contains("dropped") })
    }

    /// Both sides of a resumable run (`--state`) "killed" at random points — the save that would
    /// have written the state fails, the client and its connection are dropped — and started again
    /// from the last state saved, on a new connection: every text still arrives once and in order
    /// (each side checks), with the re-keys, and both sides end with the same key.
    @Test(arguments: [UInt64(1), 2])
    func resumableRunsSurviveKillsAtAnySave(seed: UInt64) throws {
        let (server, key) = try relayServer()
        let hub = MemoryHub(server)
        var plan = SecretChatRelayClient.Plan()
        plan.messages = 240
        plan.fileBytes = 0
        /// One side, run until it finishes, killed at random saves (at most `maxKills` times).
        final class Side: @unchecked Sendable {
            let hub: MemoryHub, key: RSA.PublicKey, plan: SecretChatRelayClient.Plan, role: SecretChatRelayClient.Role
            var rng: SplitMix64
            var state: SnapshotBytes?
            var kills = 0, connection: Int
            var peer: (id: Int64, accessHash: Int64)?
            let loggedIn = DispatchSemaphore(value: 0)
            var me: (Int64, Int64)?
            init(_ hub: MemoryHub, _ key: RSA.PublicKey, _ plan: SecretChatRelayClient.Plan, _ role: SecretChatRelayClient.Role, seed: UInt64, base: Int) {
                (self.hub, self.key, self.plan, self.role, rng, connection) = (hub, key, plan, role, SplitMix64(seed: seed), base)
            }
            func run(maxKills: Int) -> Result<SecretChatRelayClient.Summary, SecretChatRelayClient.Failure> {
                while true {
                    connection += 1
                    let killAt = kills < maxKills ? Int(rng.next() % 40) + 1 : Int.max
                    var saves = 0
                    let c: SecretChatRelayClient
                    do {
                        c = try SecretChatRelayClient(link: MemoryLink(hub, id: connection), publicKeys: [key],
                                                      clock: { Date().timeIntervalSince1970 }, log: { line in
                            guard self.me == nil, line.hasPrefix("user ") else { return }
                            let f = line.split(separator: " ")
                            self.me = (Int64(f[1])!, Int64(f[3])!)
                            self.loggedIn.signal()
                        })
                    } catch { return .failure(error) }
                    let result = Result { () throws(SecretChatRelayClient.Failure) in
                        try c.runResumable(role: role, peer: peer, plan: plan, saved: state) { (bytes) throws(SecretChatRelayClient.Failure) in
                            saves += 1
                            // A run that has never saved cannot be started again: it is killed later.
                            if saves == killAt, self.state != nil { throw .init("killed") }
                            self.state = bytes
                        }
                    }
                    hub.lock.lock(); hub.server.close(connection); hub.lock.unlock()
                    if case .failure(let e) = result, e.description == "killed" {
                        kills += 1
                        continue
                    }
                    return result
                }
            }
        }
        let acceptor = Side(hub, key, plan, .acceptor, seed: seed, base: 100)
        let creator = Side(hub, key, plan, .creator, seed: seed &+ 1, base: 200)
        nonisolated(unsafe) var acceptorResult: Result<SecretChatRelayClient.Summary, SecretChatRelayClient.Failure>?
        let done = DispatchSemaphore(value: 0)
        Thread { acceptorResult = acceptor.run(maxKills: 12); done.signal() }.start()
        #expect(acceptor.loggedIn.wait(timeout: .now() + 60) == .success)
        creator.peer = try #require(acceptor.me).self
        let c = try creator.run(maxKills: 12).get()
        done.wait()
        let a = try #require(acceptorResult).get()
        #expect(creator.kills == 12 && acceptor.kills == 12)
        #expect(c.sent == 120 && c.received == 120 && a.sent == 120 && a.received == 120)
        #expect(c.fingerprint == a.fingerprint && c.keyHash == a.keyHash && c.rekeys == 2 && a.rekeys == 2)
        #expect(c.restarts >= 1 && a.restarts >= 1)
        #expect(hub.server.relay.chatCount == 0)
    }

    /// An update for a user whose connection is gone is held (bounded), not lost or written to a
    /// closed connection.
    @Test func updatesForAnAbsentUserAreHeldWithinBounds() throws {
        let (server, key) = try relayServer { $0.maxPendingUpdatesPerUser = 3 }
        let hub = MemoryHub(server)
        let away = try client(hub, id: 1, key: key)
        try away.connect()
        hub.lock.lock(); hub.server.close(1); hub.lock.unlock()
        let requester = try client(hub, id: 2, key: key)
        try requester.connect()
        var rng = SplitMix64(seed: 5)
        for _ in 0..<5 {
            _ = try requester.call(.requestEncryption(userID: .user(userID: away.user, accessHash: away.accessHash),
                                                      randomID: 1, gA: randomBytes(count: 256, using: &rng)))
        }
        #expect(hub.server.pendingUpdateCount == 3)
        #expect(hub.serverLog.filter { $0.contains("dropped (pending-update limit)") }.count == 2)
    }
}

// MARK: The relay alone

private typealias API = SecretChat.API

/// A relay with two known users, 1 and 2.
private func twoUsers(_ limits: SecretChatRelay.Limits = .init()) -> SecretChatRelay {
    var rng = SplitMix64(seed: 77)
    var r = SecretChatRelay(limits: limits, using: &rng)
    _ = r.newUser()
    _ = r.newUser()
    return r
}

private func rpcError(_ result: [UInt8]) -> String? {
    if case .rpcError(let e)? = try? ServiceMessage(decoding: result) { return e.message }
    return nil
}

extension SecretChatRelay {
    fileprivate mutating func call(_ r: API.Request, from user: UserID, rng: inout SplitMix64) -> Outcome {
        handle(r.serialized, from: user, now: 1_800_000_000, using: &rng)
    }

    /// Opens an accepted chat between users 1 (admin) and 2.
    fileprivate mutating func openChat(rng: inout SplitMix64) throws -> API.InputEncryptedChat {
        let req = call(.requestEncryption(userID: .user(userID: 2, accessHash: accessHash(of: 2)), randomID: 1,
                                          gA: [UInt8](repeating: 7, count: 256)), from: 1, rng: &rng)
        guard case .waiting(let w) = try API.EncryptedChat.decode(req.result) else { throw SecretChatError.wrongState("no chat") }
        let peer = API.InputEncryptedChat(chatID: w.id, accessHash: w.accessHash)
        let acc = call(.acceptEncryption(peer: peer, gB: [UInt8](repeating: 9, count: 256), keyFingerprint: 42), from: 2, rng: &rng)
        #expect(rpcError(acc.result) == nil)
        return peer
    }
}

@Suite struct SecretChatRelayRPCTests {
    @Test func usersAndDHConfig() throws {
        var relay = twoUsers()
        var rng = SplitMix64(seed: 1)
        let me = try API.decodeUsers(relay.call(.getUsers(ids: [.inputSelf]), from: 2, rng: &rng).result)
        #expect(me == [API.User(id: 2, accessHash: relay.accessHash(of: 2), firstName: "Test user 2", isSelf: true)])
        let other = try API.decodeUsers(relay.call(.getUsers(ids: [.user(userID: 1, accessHash: relay.accessHash(of: 1)),
                                                                     .user(userID: 1, accessHash: 0), .user(userID: 9, accessHash: 0),
                                                                     .empty]), from: 2, rng: &rng).result)
        #expect(other.map(\.id) == [1] && other[0].isSelf == false)
        let cfg = try API.DhConfig.decode(relay.call(.getDhConfig(version: 0, randomLength: 256), from: 1, rng: &rng).result)
        guard case .config(let g, let p, let version, let random) = cfg else { Issue.record("not a config"); return }
        #expect(g == 3 && p == SecretChat.DHConfig.telegram().prime && version == 1 && random.count == 256)
        let same = try API.DhConfig.decode(relay.call(.getDhConfig(version: 1, randomLength: 16), from: 1, rng: &rng).result)
        #expect(same.random.count == 16)
        if case .config = same { Issue.record("the current version must be answered with dhConfigNotModified") }
        #expect(rpcError(relay.call(.getDhConfig(version: 0, randomLength: 5000), from: 1, rng: &rng).result) == "RANDOM_LENGTH_INVALID")
    }

    @Test func chatHandshakeAndItsRefusals() throws {
        var relay = twoUsers()
        var rng = SplitMix64(seed: 2)
        let gA = [UInt8](repeating: 7, count: 256)
        // Wrong access hash, unknown user, oneself: refused, nothing created.
        for (target, from) in [(API.InputUser.user(userID: 2, accessHash: 1), Int64(1)), (.user(userID: 3, accessHash: relay.accessHash(of: 3)), 1),
                               (.user(userID: 1, accessHash: relay.accessHash(of: 1)), 1), (.inputSelf, 1)] {
            let o = relay.call(.requestEncryption(userID: target, randomID: 1, gA: gA), from: from, rng: &rng)
            #expect(rpcError(o.result) == "USER_ID_INVALID" && o.pushes.isEmpty)
        }
        #expect(rpcError(relay.call(.requestEncryption(userID: .user(userID: 2, accessHash: relay.accessHash(of: 2)), randomID: 1,
                                                       gA: []), from: 1, rng: &rng).result) == "DH_G_A_INVALID")
        #expect(relay.chatCount == 0)
        let req = relay.call(.requestEncryption(userID: .user(userID: 2, accessHash: relay.accessHash(of: 2)), randomID: 1, gA: gA),
                             from: 1, rng: &rng)
        guard case .waiting(let w) = try API.EncryptedChat.decode(req.result) else { Issue.record("not waiting"); return }
        #expect(w.adminID == 1 && w.participantID == 2)
        #expect(req.pushes.count == 1 && req.pushes[0].user == 2)
        guard case .encryption(.requested(let r), _) = try API.Updates.decode(req.pushes[0].updates).updates.first else {
            Issue.record("no encryptedChatRequested"); return
        }
        #expect(r.gA == gA && r.id == w.id)
        // The same request again (same random_id and g_a: a restarted client) gets the same chat, no
        // second one and no second update; another random_id opens another chat.
        let repeated = relay.call(.requestEncryption(userID: .user(userID: 2, accessHash: relay.accessHash(of: 2)), randomID: 1, gA: gA),
                                  from: 1, rng: &rng)
        #expect(repeated.result == req.result && repeated.pushes.isEmpty && relay.chatCount == 1)
        var other = relay
        _ = other.call(.requestEncryption(userID: .user(userID: 2, accessHash: relay.accessHash(of: 2)), randomID: 2, gA: gA),
                       from: 1, rng: &rng)
        #expect(other.chatCount == 2)
        let peer = API.InputEncryptedChat(chatID: w.id, accessHash: w.accessHash)
        // Sending before the chat is accepted; accepting as the admin or with a wrong hash.
        #expect(rpcError(relay.call(.sendEncrypted(silent: false, peer: peer, randomID: 1, data: [1]), from: 1, rng: &rng).result)
                == "ENCRYPTION_ID_INVALID")
        #expect(rpcError(relay.call(.acceptEncryption(peer: peer, gB: gA, keyFingerprint: 5), from: 1, rng: &rng).result) == "CHAT_ID_INVALID")
        #expect(rpcError(relay.call(.acceptEncryption(peer: .init(chatID: w.id, accessHash: w.accessHash ^ 1), gB: gA, keyFingerprint: 5),
                                    from: 2, rng: &rng).result) == "CHAT_ID_INVALID")
        let gB = [UInt8](repeating: 9, count: 256)
        let acc = relay.call(.acceptEncryption(peer: peer, gB: gB, keyFingerprint: 5), from: 2, rng: &rng)
        guard case .chat(let mine) = try API.EncryptedChat.decode(acc.result),
              case .encryption(.chat(let theirs), _) = try API.Updates.decode(acc.pushes[0].updates).updates.first
        else { Issue.record("not encryptedChat"); return }
        // The acceptor sees g_a, the creator g_b; both the acceptor's fingerprint.
        #expect(mine.gAOrB == gA && theirs.gAOrB == gB && mine.keyFingerprint == 5 && theirs.keyFingerprint == 5)
        #expect(acc.pushes[0].user == 1)
        // The same acceptance again (a restarted client) gets the same answer and tells the creator
        // nothing new; another one is refused.
        let again = relay.call(.acceptEncryption(peer: peer, gB: gB, keyFingerprint: 5), from: 2, rng: &rng)
        #expect(again.result == acc.result && again.pushes.isEmpty)
        #expect(rpcError(relay.call(.acceptEncryption(peer: peer, gB: gA, keyFingerprint: 5), from: 2, rng: &rng).result)
                == "ENCRYPTION_ALREADY_ACCEPTED")
        #expect(rpcError(relay.call(.acceptEncryption(peer: peer, gB: gB, keyFingerprint: 6), from: 2, rng: &rng).result)
                == "ENCRYPTION_ALREADY_ACCEPTED")
        // Discard: the other member hears of it; the chat is gone.
        let end = relay.call(.discardEncryption(deleteHistory: true, chatID: w.id), from: 2, rng: &rng)
        #expect(end.pushes.map(\.user) == [1])
        guard case .encryption(.discarded(true, w.id), _) = try API.Updates.decode(end.pushes[0].updates).updates.first else {
            Issue.record("no encryptedChatDiscarded"); return
        }
        #expect(rpcError(relay.call(.sendEncrypted(silent: false, peer: peer, randomID: 1, data: [1]), from: 1, rng: &rng).result)
                == "CHAT_ID_INVALID")
        #expect(rpcError(relay.call(.discardEncryption(deleteHistory: false, chatID: w.id), from: 1, rng: &rng).result)
                == "ENCRYPTION_ALREADY_DECLINED")
        #expect(relay.chatCount == 0)
    }

    @Test func messagesReachTheOtherMemberInOrderAndTheDropHookDropsOne() throws {
        var relay = twoUsers()
        relay.dropMessages = [2]
        var rng = SplitMix64(seed: 3)
        let peer = try relay.openChat(rng: &rng)
        var delivered: [(UInt8, Int32)] = []
        for i in 1...4 as ClosedRange<UInt8> {
            let o = relay.call(.sendEncrypted(silent: false, peer: peer, randomID: Int64(i), data: [i]), from: 1, rng: &rng)
            guard case .message = try API.SentEncryptedMessage.decode(o.result) else { Issue.record("not sent"); return }
            for p in o.pushes {
                #expect(p.user == 2)
                guard case .newEncryptedMessage(.message(_, _, _, let bytes, .empty), let qts) = try API.Updates.decode(p.updates).updates[0]
                else { Issue.record("not a message"); return }
                delivered.append((bytes[0], qts))
            }
        }
        #expect(delivered.map(\.0) == [1, 3, 4] && delivered.map(\.1) == [1, 2, 3])
        #expect(relay.sendCount == 4)
        // A message sent again under its random_id (a restarted client) is acknowledged, not delivered twice.
        let again = relay.call(.sendEncrypted(silent: false, peer: peer, randomID: 3, data: [3]), from: 1, rng: &rng)
        guard case .message = try API.SentEncryptedMessage.decode(again.result) else { Issue.record("not sent"); return }
        #expect(again.pushes.isEmpty)
        #expect(relay.relayedCount == 3)
        // messages.receivedQueue: an empty Vector<long>, and the acknowledgement, capped at the user's qts.
        let ack = relay.call(.receivedQueue(maxQts: 99), from: 2, rng: &rng)
        #expect(ack.result == [0x15, 0xC4, 0xB5, 0x1C, 0, 0, 0, 0] && ack.acknowledgedQts == 3)
        // A non-member cannot send into the chat.
        var third = relay
        let stranger = third.newUser()
        #expect(rpcError(third.call(.sendEncryptedService(peer: peer, randomID: 9, data: [1]), from: stranger, rng: &rng).result)
                == "CHAT_ID_INVALID")
    }

    @Test func filesUploadedInPartsAndDownloaded() throws {
        var limits = SecretChatRelay.Limits()
        limits.maxUploadBytes = 900_000
        var relay = twoUsers(limits)
        var rng = SplitMix64(seed: 4)
        let peer = try relay.openChat(rng: &rng)
        let file = randomBytes(count: 700_000, using: &rng)
        // Bad parts are refused.
        #expect(rpcError(relay.call(.saveFilePart(fileID: 1, part: -1, bytes: [1]), from: 1, rng: &rng).result) == "FILE_PART_INVALID")
        #expect(rpcError(relay.call(.saveFilePart(fileID: 1, part: 4000, bytes: [1]), from: 1, rng: &rng).result) == "FILE_PART_INVALID")
        #expect(rpcError(relay.call(.saveFilePart(fileID: 1, part: 0, bytes: []), from: 1, rng: &rng).result) == "FILE_PART_EMPTY")
        #expect(rpcError(relay.call(.saveFilePart(fileID: 1, part: 0, bytes: [UInt8](repeating: 0, count: (512 << 10) + 1)),
                                    from: 1, rng: &rng).result) == "FILE_PART_TOO_BIG")
        #expect(relay.heldFileBytes == 0)
        let parts = stride(from: 0, to: file.count, by: 256 << 10).map { Array(file[$0..<min($0 + (256 << 10), file.count)]) }
        for (i, p) in parts.enumerated() where i != 1 {
            #expect(rpcError(relay.call(.saveFilePart(fileID: 1, part: Int32(i), bytes: p), from: 1, rng: &rng).result) == nil)
        }
        // A missing part: the send is refused.
        let send = API.Request.sendEncryptedFile(silent: false, peer: peer, randomID: 5, data: [1, 2],
                                                 file: .uploaded(id: 1, parts: Int32(parts.count), md5Checksum: "", keyFingerprint: 77))
        #expect(rpcError(relay.call(send, from: 1, rng: &rng).result) == "FILE_PARTS_INVALID")
        // Over the upload budget (900 000 bytes, 444 288 held): refused, nothing held beyond it.
        #expect(rpcError(relay.call(.saveFilePart(fileID: 2, part: 0, bytes: [UInt8](repeating: 0, count: 512 << 10)),
                                    from: 1, rng: &rng).result) == "FILE_PARTS_TOO_MANY")
        _ = relay.call(.saveFilePart(fileID: 1, part: 1, bytes: parts[1]), from: 1, rng: &rng)
        let sent = relay.call(send, from: 1, rng: &rng)
        guard case .file(_, .file(let id, let hash, let size, _, 77)) = try API.SentEncryptedMessage.decode(sent.result),
              case .newEncryptedMessage(.message(_, _, _, [1, 2], .file(id, hash, size, _, 77)), _) =
                try API.Updates.decode(sent.pushes[0].updates).updates[0]
        else { Issue.record("no file in the answer or the update"); return }
        #expect(size == Int64(file.count) && sent.pushes[0].user == 2)
        // Download in 128 KiB steps; bad offsets and limits, a wrong hash.
        var got: [UInt8] = []
        while got.count < file.count {
            let part = try API.UploadFile.decode(relay.call(.getFile(precise: false, fileID: id, accessHash: hash,
                                                                     offset: Int64(got.count), limit: 128 << 10), from: 2, rng: &rng).result)
            got += part.bytes
        }
        #expect(got == file)
        for (offset, limit, error) in [(Int64(1), Int32(1024), "OFFSET_INVALID"), (-1024, 1024, "OFFSET_INVALID"),
                                       (0, 1000, "LIMIT_INVALID"), (0, 0, "LIMIT_INVALID"), (0, (1 << 20) + 1024, "LIMIT_INVALID")] {
            #expect(rpcError(relay.call(.getFile(precise: false, fileID: id, accessHash: hash, offset: offset, limit: limit),
                                        from: 2, rng: &rng).result) == error)
        }
        #expect(rpcError(relay.call(.getFile(precise: false, fileID: id, accessHash: hash ^ 1, offset: 0, limit: 1024),
                                    from: 2, rng: &rng).result) == "FILE_ID_INVALID")
        // Past the end: an empty part.
        #expect(try API.UploadFile.decode(relay.call(.getFile(precise: false, fileID: id, accessHash: hash, offset: 1 << 20,
                                                              limit: 1024), from: 2, rng: &rng).result).bytes.isEmpty)
    }

    /// Random bodies under every relay constructor, and mutations of valid requests: always an
    /// answer, and a refused request changes no count.
    @Test(arguments: [API.Constructor.getDhConfig, API.Constructor.requestEncryption, API.Constructor.acceptEncryption,
                      API.Constructor.discardEncryption, API.Constructor.sendEncrypted, API.Constructor.sendEncryptedFile,
                      API.Constructor.sendEncryptedService, API.Constructor.getUsers, API.Constructor.saveFilePart,
                      API.Constructor.getFile])
    func garbageIsRefused(constructor: UInt32) throws {
        var relay = twoUsers()
        var rng = SplitMix64(seed: UInt64(constructor))
        _ = try relay.openChat(rng: &rng)
        for n in 0..<300 {
            var w = TLWriter()
            w.constructor(constructor)
            var body = w.bytes + randomBytes(count: n % 80, using: &rng)
            if n % 3 == 0, body.count > 4 { body[4 + Int(rng.next() % UInt64(body.count - 4))] ^= 0xFF }
            let (chats, held, sends) = (relay.chatCount, relay.heldFileBytes, relay.relayedCount)
            let o = relay.handle(body, from: 1 + Int64(n % 3), now: 1_800_000_000, using: &rng)
            #expect(!o.result.isEmpty)
            if rpcError(o.result) != nil {
                #expect(relay.chatCount == chats && relay.heldFileBytes == held && relay.relayedCount == sends && o.pushes.isEmpty)
            }
        }
    }
}
