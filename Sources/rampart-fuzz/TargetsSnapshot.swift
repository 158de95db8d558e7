// Fuzz targets for state snapshots (Docs/Snapshots.md): every `init(restoring:)` fed arbitrary bytes
// (a typed error or a value whose snapshot is exactly the input: one encoding per state), and sealed
// snapshots opened under a fixed key and a fixed password (a typed error, never a trap, and never a
// success for bytes the fuzzer did not seal).

import Rampart
import RampartMTProto
import RampartThreema
import RampartTestSupport

/// `restore` on the bytes as they are, and on them behind a valid header of `type` (so the fuzzer
/// reaches the body without having to find the header): a value, or a typed error; a value snapshots
/// to the same bytes. `restoreThenSnapshot` restores with whatever the type needs besides the bytes
/// (an identity, a clock, a transport) and snapshots the result.
private func restoreProperty(_ type: SnapshotType, _ data: [UInt8], version: UInt16 = 1,
                             _ restoreThenSnapshot: (SnapshotBytes) throws(RampartError) -> SnapshotBytes) {
    var input = FuzzInput(data)
    let wrap = input.byte() & 1 == 1
    var bytes = input.rest()
    if wrap {
        let t = Array(type.description.utf8)
        let n = bytes.count
        bytes = Array("RSNP".utf8) + t + [UInt8(version & 0xFF), UInt8(version >> 8)]
            + [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24 & 0xFF)] + bytes
    }
    let snapshot = SnapshotBytes(copying: bytes)
    do {
        let again = try restoreThenSnapshot(snapshot)
        FuzzCheck.require(again == snapshot, "\(type): restore then snapshot changed the bytes")
        FuzzStats.note("\(type): restored")
    } catch {
        // A typed error (RampartError) is the only other outcome: `init(restoring:)` throws nothing else.
    }
}

/// ``restoreProperty(_:_:version:_:)`` for a type restored from its bytes alone.
private func restoreProperty<T: Snapshottable>(_ type: T.Type, _ data: [UInt8]) {
    restoreProperty(T.snapshotType, data) { (s) throws(RampartError) in try T(restoring: s).snapshot() }
}

let snapshotNonceStoreTarget = FuzzTarget(
    name: "snapshot-nonce-store",
    summary: "InMemoryNonceStore(restoring:) on arbitrary bytes, bare or behind a valid TNST header: a typed error, or a store whose snapshot is exactly the input",
    maxLength: 1024,
    run: { data in restoreProperty(InMemoryNonceStore.self, data) },
    seeds: {
        var s = InMemoryNonceStore(capacity: 5)
        let id = try! ThreemaID("ECHOECHO")
        for i: UInt8 in 1...3 { try! s.insert(NonceTag(nonce: [UInt8](repeating: i, count: 24), identity: id)) }
        let b = s.snapshot().copyBytes()
        return [[0] + b, [1] + Array(b[14...]), [0] + Array(b.prefix(20)), [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]
    })

let snapshotMTProtoSessionTarget = FuzzTarget(
    name: "snapshot-mtproto-session",
    summary: "MTProto Session(restoring:) on arbitrary bytes, bare or behind a valid MSES header: a typed error, or a session whose snapshot is exactly the input",
    maxLength: 2048,
    run: { data in restoreProperty(Session.self, data) },
    seeds: {
        var rng = SplitMix64(seed: 3)
        let key = try! AuthKey([UInt8](repeating: 0x42, count: 256))
        var client = Session(client: key, sessionId: 5, salt: 6, timeOffset: 0, replayCapacity: 4)
        var server = Session(server: key, salt: 6, replayCapacity: 4)
        client.salts.add([FutureSalt(validSince: 1_800_000_100, validUntil: 1_800_000_200, salt: 7)])
        let m = try! client.encrypt([0x78, 0x97, 0x46, 0x60, 1, 2, 3, 4], contentRelated: true, now: 1_800_000_000, using: &rng)
        _ = try! server.decrypt(m.packet, now: 1_800_000_000)
        let c = client.snapshot().copyBytes(), s = server.snapshot().copyBytes()
        return [[0] + c, [0] + s, [1] + Array(c[14...]), [1] + Array(s[14...]), [0] + Array(c.prefix(300))]
    })

private let fuzzSnapshotKey = SymmetricKey(data: [UInt8](repeating: 0x5A, count: 32))
private let fuzzPassword = Array("fuzz".utf8)
private let tinyCost = SealedSnapshot.PasswordCost(iterations: 1, memoryKiB: 8, parallelism: 1)

let snapshotSealedTarget = FuzzTarget(
    name: "snapshot-sealed",
    summary: "SealedSnapshot.open on arbitrary bytes under a fixed key and a fixed password (costs limited to 1 pass, 8 KiB): a typed error, never a trap; a seal the target made itself opens to its snapshot",
    maxLength: 512,
    run: { data in
        var input = FuzzInput(data)
        let mode = input.byte()
        let bytes = input.rest()
        let type = SnapshotType("TNST")
        switch mode % 3 {
        case 0:
            if let s = try? SealedSnapshot.open(bytes, key: fuzzSnapshotKey, type: type) {
                FuzzCheck.require(s.type == type, "a key-sealed snapshot opened to another type")
                FuzzStats.note("snapshot-sealed: opened under the key")
            }
        case 1:
            if let s = try? SealedSnapshot.open(bytes, password: fuzzPassword, type: type, limit: tinyCost) {
                FuzzCheck.require(s.type == type, "a password-sealed snapshot opened to another type")
                FuzzStats.note("snapshot-sealed: opened under the password")
            }
        default:
            // Seal the input (as a nonce store's body) and open it again.
            var rng = SplitMix64(seed: UInt64(bytes.count))
            var w = SnapshotWriter(type: type, version: 1)
            w.fixed(bytes)
            let snapshot = w.finish()
            let sealed = try! SealedSnapshot.seal(snapshot, key: fuzzSnapshotKey, using: &rng)
            FuzzCheck.require((try? SealedSnapshot.open(sealed, key: fuzzSnapshotKey, type: type)) == snapshot,
                              "a sealed snapshot did not open to itself")
        }
    },
    seeds: {
        var rng = SplitMix64(seed: 7)
        var s = InMemoryNonceStore(capacity: 4)
        try! s.insert(NonceTag(nonce: [UInt8](repeating: 1, count: 24), identity: try! ThreemaID("ECHOECHO")))
        let key = try! SealedSnapshot.seal(s.snapshot(), key: fuzzSnapshotKey, using: &rng)
        let pw = try! SealedSnapshot.seal(s.snapshot(), password: fuzzPassword, cost: tinyCost, using: &rng)
        return [[0] + key, [1] + pw, [2, 1, 2, 3], [0] + Array(key.prefix(40)), [1] + Array(pw.dropLast())]
    })

/// The identity every Ibex snapshot in the fuzz target belongs to.
private let ibexSnapshotIdentity = try! ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: [UInt8](repeating: 0x11, count: 32))
private let ibexSnapshotPeer = try! ThreemaIdentity(id: ThreemaID("00000BOB"), privateKey: [UInt8](repeating: 0x22, count: 32))

let snapshotIbexSessionTarget = FuzzTarget(
    name: "snapshot-ibex-session",
    summary: "Ibex.Session(restoring:identity:) on arbitrary bytes, bare or behind a valid TIBS header: a typed error, or a session in one of the four legal states whose snapshot is exactly the input",
    maxLength: 1024,
    run: { data in
        restoreProperty(Ibex.Session.snapshotType, data) { (s) throws(RampartError) in
            try Ibex.Session(restoring: s, identity: ibexSnapshotIdentity).snapshot()
        }
    },
    seeds: {
        var rng = SplitMix64(seed: 9)
        let sid = [UInt8](repeating: 0x33, count: 16)
        let ea = Curve25519.KeyAgreement.PrivateKey(using: &rng), eb = Curve25519.KeyAgreement.PrivateKey(using: &rng)
        var (a, initEnvelope) = try! Ibex.Session.initiate(identity: ibexSnapshotIdentity, peer: ibexSnapshotPeer.contact, sessionID: sid, ephemeral: ea)
        _ = try! a.encrypt(type: 1, body: [1])
        guard case .initiate(let offer) = initEnvelope.content else { return [] }
        var b = try! Ibex.Session.receiveInit(offer, sessionID: sid, identity: ibexSnapshotPeer, peer: ibexSnapshotIdentity.contact)
        let l20 = a.snapshot().copyBytes()
        let accept = try! b.accept(ephemeral: eb)
        guard case .accept(let o) = accept.content else { return [] }
        try! a.processAccept(o)
        let rl44 = a.snapshot().copyBytes()
        return [[0] + l20, [0] + rl44, [1] + Array(rl44[14...]), [0] + Array(l20.prefix(60))]
    })

let snapshotSecretChatTarget = FuzzTarget(
    name: "snapshot-secret-chat",
    summary: "SecretChat.Session(restoring:clock:) on arbitrary bytes, bare or behind a valid MSCS header: a typed error, or a chat whose snapshot is exactly the input",
    maxLength: 8192,
    run: { data in
        restoreProperty(SecretChat.Session.snapshotType, data) { (s) throws(RampartError) in
            try SecretChat.Session(restoring: s, clock: { 0 }).snapshot()
        }
    },
    seeds: {
        var rng = SplitMix64(seed: 0x5C)
        let config = SecretChat.DHConfig.telegram()
        var a = try! SecretChat.Session.requesting(config: config, clock: { 0 }, using: &rng)
        let requested = a.snapshot().copyBytes()
        let gA = a.gA!
        var b = SecretChat.Session.requested(gA: gA, clock: { 0 })
        let (gB, fp) = try! b.accept(config: config, using: &rng)
        let accepted = b.snapshot().copyBytes()
        var toA = try! b.handleEncryptedChat(gAOrB: gA, keyFingerprint: fp, using: &rng)
        _ = try! a.handleEncryptedChat(gAOrB: gB, keyFingerprint: fp, using: &rng)
        for m in toA { _ = try? a.receive(m.data, using: &rng) }
        toA = try! b.send(.message(SecretChat.PlainMessage(randomID: 1, message: "hi")), using: &rng)
        let established = a.snapshot().copyBytes(), acceptor = b.snapshot().copyBytes()
        return [[0] + requested, [0] + accepted, [0] + established, [0] + acceptor, [1] + Array(established[14...]),
                [0] + Array(established.prefix(200))]
    })

let snapshotPairKeyCacheTarget = FuzzTarget(
    name: "snapshot-pair-key-cache",
    summary: "PairKeyCache(restoring:identity:) on arbitrary bytes, bare or behind a valid TPKC header: a typed error, or a cache whose snapshot is exactly the input",
    maxLength: 1024,
    run: { data in
        restoreProperty(PairKeyCache.snapshotType, data) { (s) throws(RampartError) in
            try PairKeyCache(restoring: s, identity: ibexSnapshotIdentity).snapshot()
        }
    },
    seeds: {
        var c = PairKeyCache(identity: ibexSnapshotIdentity, capacity: 8)
        _ = try! c.keys(for: ibexSnapshotPeer.contact)
        _ = try! c.keys(for: ibexSnapshotIdentity.contact)
        let b = c.snapshot().copyBytes()
        return [[0] + b, [1] + Array(b[14...]), [0] + Array(b.prefix(40))]
    })

/// An MTProto connection is restored with a transport and a handshake configuration (not in it).
private func restoreConnection(_ s: SnapshotBytes) throws(RampartError) -> ClientConnection {
    var rng = SplitMix64(seed: 1)
    return try ClientConnection(restoring: s, transport: .plain(.intermediate),
                                handshake: .init(publicKeys: [], dc: 2, mode: .temporary(expiresIn: 3600)), newSession: false, using: &rng)
}

let snapshotMTProtoConnectionTarget = FuzzTarget(
    name: "snapshot-mtproto-connection",
    summary: "ClientConnection(restoring:transport:handshake:) on arbitrary bytes, bare or behind a valid MCON header: a typed error, or a connection whose snapshot is exactly the input",
    maxLength: 4096,
    run: { data in
        restoreProperty(ClientConnection.snapshotType, data) { (s) throws(RampartError) in try restoreConnection(s).snapshot() }
    },
    seeds: {
        var rng = SplitMix64(seed: 0xC0)
        let perm = try! AuthKey([UInt8](repeating: 0x42, count: 256))
        var plain = try! ClientConnection(transport: .plain(.intermediate), handshake: .init(publicKeys: [], dc: 2), using: &rng)
        _ = try! plain.request([0x78, 0x97, 0x46, 0x60, 1, 2, 3, 4], now: 1_800_000_000, using: &rng)
        var pfs = try! ClientConnection(transport: .plain(.intermediate), handshake: .init(publicKeys: [], dc: 2, mode: .temporary(expiresIn: 60)),
                                        permanentKey: perm, using: &rng)
        _ = try! pfs.request([0x26, 0x30, 0xB3, 0x1F], now: 1_800_000_000, using: &rng)
        let a = plain.snapshot().copyBytes(), b = pfs.snapshot().copyBytes()
        // The first with a session (a handshake needs a server: the session goes in by hand).
        let session = Session(client: perm, sessionId: 9, salt: 10, timeOffset: 0, replayCapacity: 4)
        var w = SnapshotWriter(type: ClientConnection.snapshotType, version: 1)
        w.uint8(0)
        w.optional(session) { w, s in s.snapshot().withUnsafeBytes { w.bytes($0) } }
        w.fixed(a[16...])
        let c = w.finish().copyBytes()
        return [[0] + a, [0] + b, [0] + c, [1] + Array(a[14...]), [1] + Array(c[14...]), [0] + Array(b.prefix(100))]
    })
