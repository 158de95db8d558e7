// Handshake and server targets: the server handshake fed client messages and the client handshake fed
// server messages (genuine exchanges with fuzzed messages injected), the in-memory test server fed a
// connection's bytes and the client connection fed the server's bytes. Every generator is seeded.
//
// Properties: a handshake message that throws leaves the machine unchanged (the genuine exchange still
// completes, with equal keys on both sides); a corrupted message is never accepted (except the
// unauthenticated resPQ and a restarting req_pq); the server's replies are well-formed frames; an
// untouched client/server exchange completes and answers a ping.

import Rampart
import RampartMTProto
import RampartMTProtoServer
import RampartTestSupport

let handshakeNow: Int64 = 1_700_000_000

/// A genuine exchange between a client and a server handshake, with fuzzed messages injected
/// towards `victim` before each genuine message.
private func fuzzHandshake(_ data: [UInt8], victimIsServer: Bool) {
    var input = FuzzInput(data)
    let flags = input.byte()
    let seed = input.u64()
    var rngC = SplitMix64(seed: seed), rngS = SplitMix64(seed: seed ^ 0x5EED)
    let mode: ClientHandshake.Mode = flags & 1 == 0 ? .permanent : .temporary(expiresIn: Int32(input.u16()) - 100)
    let dc: Int32 = flags & 0x40 != 0 ? 3 : flags & 2 == 0 ? 2 : 10002
    var client = ClientHandshake(configuration: .init(publicKeys: [Fixtures.rsa2048.publicKey], dc: dc, mode: mode, primeRounds: 2))
    guard var server = try? ServerHandshake(configuration: .init(privateKeys: [Fixtures.rsa2048], dc: flags & 4 == 0 ? nil : 2,
                                                                 acceptLegacyRSA: flags & 8 == 0)) else {
        FuzzCheck.fail("server handshake setup")
    }
    // How deep the genuine exchange goes: full handshakes cost several 2048-bit exponentiations.
    let depth = Int(flags >> 4) % 4
    // The server must refuse req_DH_params for a non-positive expires_in or another DC.
    let refusedAtStep1 = (mode.expiresIn.map { $0 <= 0 } ?? false) || (flags & 4 != 0 && dc == 3)
    var toServer = client.start(using: &rngC)
    var tainted = false  // an injected message was accepted: the genuine exchange may now fail
    for step in 0..<3 {
        // Injections.
        for _ in 0..<Int(input.byte() % 3) {
            let genuine = victimIsServer ? toServer : []
            var m: [UInt8]
            switch input.byte() % 3 {
            case 0: m = input.lengthPrefixed(max: 1024)
            case 1 where !genuine.isEmpty: m = mutate(genuine, &input)
            default: m = Array(genuine.prefix(4)) + input.lengthPrefixed(max: 600)
            }
            if m == genuine { continue }
            let constructor = readLE32(m)
            if victimIsServer {
                guard (try? server.receive(m, now: handshakeNow, using: &rngS)) != nil else { continue }
                // Only a (re)started req_pq is accepted without a secret.
                FuzzCheck.require(constructor == HandshakeConstructor.reqPQMulti || constructor == HandshakeConstructor.reqPQ,
                                  "the server accepted a corrupted message at step \(step)")
                tainted = true
                FuzzStats.note("handshake: injected req_pq restarted the server")
            } else {
                guard (try? client.receive(m, now: handshakeNow, using: &rngC)) != nil else { continue }
                // Only resPQ carries nothing the client can check beyond its own nonce.
                FuzzCheck.require(step == 0, "the client accepted a corrupted message at step \(step)")
                tainted = true
                FuzzStats.note("handshake: injected resPQ accepted by the client")
            }
        }
        if step >= depth && !tainted { return }
        // The genuine message to the server and its answer, which the client may see corrupted first.
        let serverStep: ServerHandshake.Step
        do throws(MTProtoError) {
            serverStep = try server.receive(toServer, now: handshakeNow, using: &rngS)
        } catch {
            FuzzCheck.require(tainted || (refusedAtStep1 && step == 1),
                              "the server refused the genuine message at step \(step): \(error)")
            if flags & 4 != 0 && dc == 3 && !tainted { FuzzCheck.require(error == .wrongDC(requested: 3, served: 2), "DC mismatch error") }
            return
        }
        FuzzCheck.require(tainted || !(refusedAtStep1 && step == 1), "the server accepted a bad expires_in or DC")
        let toClient: [UInt8]
        var serverResult: HandshakeResult?
        switch serverStep {
        case .send(let b):
            FuzzCheck.require(step < 2 || tainted, "the server did not complete at step 2")
            toClient = b
        case .completed(let r, let b):
            FuzzCheck.require(step == 2, "the server completed at step \(step)")
            serverResult = r
            toClient = b
        case .failed:
            FuzzCheck.fail("the server answered dh_gen_fail without a key collision")
        }
        if !victimIsServer {
            for _ in 0..<Int(input.byte() % 3) {
                var m: [UInt8]
                switch input.byte() % 3 {
                case 0: m = input.lengthPrefixed(max: 1024)
                case 1: m = mutate(toClient, &input)
                default: m = Array(toClient.prefix(4)) + input.lengthPrefixed(max: 700)
                }
                if m == toClient { continue }
                guard (try? client.receive(m, now: handshakeNow, using: &rngC)) != nil else { continue }
                FuzzCheck.require(step == 0, "the client accepted a corrupted answer at step \(step)")
                tainted = true
            }
        }
        let clientStep: ClientHandshake.Step
        do throws(MTProtoError) {
            clientStep = try client.receive(toClient, now: handshakeNow, using: &rngC)
        } catch {
            FuzzCheck.require(tainted, "the client refused the genuine answer at step \(step): \(error)")
            return
        }
        switch clientStep {
        case .send(let b):
            FuzzCheck.require(step < 2 || tainted, "the client did not complete at step 2")
            toServer = b
        case .completed(let r):
            guard let s = serverResult else { FuzzCheck.require(tainted, "client completed before the server"); return }
            FuzzCheck.require(r.authKey == s.authKey && r.serverSalt == s.serverSalt && r.expiresIn == s.expiresIn,
                              "client and server disagree on the handshake result")
            FuzzCheck.require(r.expiresIn == mode.expiresIn && client.isCompleted && server.isCompleted, "handshake state")
            FuzzStats.note("handshake: completed")
            return
        }
    }
}

extension ClientHandshake.Mode {
    var expiresIn: Int32? {
        if case .temporary(let e) = self { return e }
        return nil
    }
}

private func handshakeSeeds() -> [[UInt8]] {
    var out: [[UInt8]] = []
    for (flags, inject): (UInt8, [UInt8]) in [(0x30, []), (0x31 | 2, [1, 1, 1, 0, 2]), (0x10 | 4 | 8, [2, 0, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8])] {
        var w = SeedWriter()
        w.byte(flags)
        w.u64(UInt64(flags))
        if flags & 1 == 1 { w.u16(3700) }
        w.raw(inject)
        out.append(w.bytes)
    }
    return out
}

let handshakeServerTarget = FuzzTarget(
    name: "handshake-server",
    summary: "ServerHandshake fed corrupted and arbitrary client messages around a genuine exchange: refusals change nothing, only req_pq restarts, keys agree",
    maxLength: 2048,
    timeout: 30,
    slow: true,
    run: { fuzzHandshake($0, victimIsServer: true) },
    seeds: handshakeSeeds)

let handshakeClientTarget = FuzzTarget(
    name: "handshake-client",
    summary: "ClientHandshake fed corrupted and arbitrary server messages around a genuine exchange: refusals change nothing, only resPQ is unauthenticated, keys agree",
    maxLength: 2048,
    timeout: 30,
    slow: true,
    run: { fuzzHandshake($0, victimIsServer: false) },
    seeds: handshakeSeeds)

// MARK: - test server and client connection

/// The transports a genuine client connects with.
private func clientKind(_ b: UInt8) -> ClientTransport.Kind {
    switch b % 7 {
    case 0: return .plain(.abridged)
    case 1: return .plain(.intermediate)
    case 2: return .plain(.paddedIntermediate)
    case 3: return .plain(.full)
    case 4: return .obfuscated2(.intermediate, dcId: 2, secret: nil)
    case 5: return .obfuscated2(.paddedIntermediate, dcId: -2, secret: Fixtures.proxySecret)
    default: return .obfuscated2(.abridged, dcId: nil, secret: nil)
    }
}

private func makeTestServer(_ flags: UInt8) -> TestServer {
    var config = TestServer.Configuration(handshake: .init(privateKeys: [Fixtures.rsa2048], dc: flags & 4 == 0 ? nil : 2),
                                          proxySecret: flags & 8 == 0 ? nil : Fixtures.proxySecret,
                                          maxPacketLength: flags & 16 == 0 ? 1 << 20 : 256)
    if flags & 32 != 0 { config.allowedTransports = ["intermediate", "obfuscated2"] }
    guard let s = try? TestServer(configuration: config) else { FuzzCheck.fail("test server setup") }
    return s
}

/// The server's replies on a plain transport decode as server frames (the transport detected from
/// what the client sent).
private func checkServerReplies(_ reply: [UInt8], sentSoFar: [UInt8], decoder: inout TransportDecoder?) {
    if decoder == nil, let d = try? TransportDetector.detect(sentSoFar), case .plain(let f) = d {
        decoder = TransportDecoder(framing: f, role: .client, expectsTag: false)
    }
    guard var d = decoder else { return }
    d.feed(reply)
    do throws(MTProtoError) {
        while try d.next() != nil {}
    } catch {
        FuzzCheck.fail("the test server wrote a malformed frame: \(error)")
    }
    decoder = d
}

/// A genuine ClientConnection talking to a TestServer, the bytes in one direction mutated by the input.
private func fuzzConnection(_ data: [UInt8], mutateToServer: Bool) {
    var input = FuzzInput(data)
    let flags = input.byte()
    let seed = input.u64()
    var rngC = SplitMix64(seed: seed), rngS = SplitMix64(seed: seed ^ 0xC0FFEE)
    let now = Double(handshakeNow)
    if flags & 0x80 == 0 {
        // Raw bytes from the input, chunk by chunk, into one side.
        var sent: [UInt8] = []
        var decoder: TransportDecoder?
        if mutateToServer {
            var s = makeTestServer(flags & 0x3F)
            s.open(1)
            while !input.isAtEnd {
                let chunk = input.lengthPrefixed(max: 2048)
                sent += chunk
                let reply = s.receive(chunk, from: 1, now: now, using: &rngS)
                checkServerReplies(reply.send, sentSoFar: sent, decoder: &decoder)
                // What a connection may hold between reads: one incomplete frame.
                FuzzCheck.require(s.bufferedByteCount(of: 1) <= s.configuration.maxPacketLength + 128,
                                  "a connection holds \(s.bufferedByteCount(of: 1)) bytes, above one frame")
                if reply.close {
                    FuzzCheck.require(s.receive([0], from: 1, now: now, using: &rngS).close, "a closed connection still answers")
                    break
                }
            }
        } else {
            guard var conn = try? ClientConnection(transport: clientKind(input.byte()),
                                                   handshake: .init(publicKeys: [Fixtures.rsa2048.publicKey], dc: 2, primeRounds: 2),
                                                   using: &rngC),
                  (try? conn.start(now: now, using: &rngC)) != nil else { FuzzCheck.fail("client connection setup") }
            while !input.isAtEnd {
                guard (try? conn.receive(input.lengthPrefixed(max: 2048), now: now, using: &rngC)) != nil else { break }
            }
        }
        return
    }
    let kindByte = input.byte()
    let kind = clientKind(kindByte)
    // A server the genuine client can use: its DC, its proxy secret, no transport restriction.
    var server = makeTestServer((flags & 4) | (kindByte % 7 == 5 ? 8 : 0))
    server.open(1)
    guard var conn = try? ClientConnection(transport: kind,
                                           handshake: .init(publicKeys: [Fixtures.rsa2048.publicKey], dc: 2, primeRounds: 2),
                                           using: &rngC),
          var toServer = try? conn.start(now: now, using: &rngC) else {
        FuzzCheck.fail("client connection setup")
    }
    var touched = false
    var completed = false, pinged = false
    var pingId: Int64 = 0
    for round in 0..<6 {
        if mutateToServer && input.byte() & 1 == 1 {
            let m = mutate(toServer, &input)
            touched = touched || m != toServer
            toServer = m
        }
        let reply = server.receive(toServer, from: 1, now: now, using: &rngS)
        var toClient = reply.send
        if !mutateToServer && input.byte() & 1 == 1 {
            let m = mutate(toClient, &input)
            touched = touched || m != toClient
            toClient = m
        }
        if reply.close && !touched { FuzzCheck.fail("the server closed a genuine connection: \(reply.log)") }
        let events: [ClientConnection.Event]
        do throws(MTProtoError) {
            let r = try conn.receive(toClient, now: now, using: &rngC)
            toServer = r.send
            events = r.events
        } catch {
            FuzzCheck.require(touched, "the client refused the genuine server bytes at round \(round): \(error)")
            return
        }
        for e in events {
            switch e {
            case .handshakeCompleted:
                completed = true
            case .message(let m):
                if case .pong(_, let id)? = try? m.decoded(), id == pingId { pinged = true }
            case .transportError(let code):
                FuzzCheck.require(touched, "transport error \(code) on a genuine connection")
            case .quickAck, .request, .temporaryKeyBound:
                break
            case .keyLost:
                FuzzCheck.require(touched, "key lost on a genuine connection")
            }
        }
        if pinged { break }
        if completed && toServer.isEmpty {
            pingId = Int64(round + 1)
            guard let (bytes, _) = try? conn.send(ServiceMessage.ping(pingId: pingId).encoded(), now: now, using: &rngC) else {
                FuzzCheck.fail("the client cannot send after the handshake")
            }
            toServer = bytes
        }
        if toServer.isEmpty && !completed && !touched { FuzzCheck.fail("the genuine exchange stalled at round \(round)") }
        if toServer.isEmpty && touched { return }
    }
    if !touched {
        FuzzCheck.require(completed && pinged, "a genuine connection did not complete its handshake and ping")
        FuzzStats.note("connection: genuine handshake and ping")
    }
}

private func connectionSeeds() -> [[UInt8]] {
    var out: [[UInt8]] = []
    for k: UInt8 in [0, 3, 4, 5] {
        var w = SeedWriter()
        w.byte(0x80 | (k == 5 ? 8 : 0))
        w.u64(UInt64(k))
        w.byte(k)
        out.append(w.bytes + [UInt8](repeating: 0, count: 12))
    }
    // Raw: a req_pq in the intermediate transport.
    var w = SeedWriter()
    w.byte(0)
    w.u64(1)
    let req = UnencryptedMessage.encode(msgId: 0x51E5_7AC4_0000_0004, body: ReqPQ(nonce: [UInt8](repeating: 1, count: 16)).serialized)
    var enc = TransportEncoder(framing: .intermediate, role: .client)
    var rng = SplitMix64(seed: 1)
    if let f = try? enc.encode(req, using: &rng) { w.lengthPrefixed(f) }
    out.append(w.bytes)
    return out
}

let testServerTarget = FuzzTarget(
    name: "test-server",
    summary: "TestServer (what `rampart mtproto serve` runs) fed a connection's bytes, raw or a genuine client's mutated: never traps, plain-transport replies are well-formed frames, genuine exchanges complete",
    maxLength: 4096,
    timeout: 30,
    slow: true,
    run: { fuzzConnection($0, mutateToServer: true) },
    seeds: connectionSeeds)

let clientConnectionTarget = FuzzTarget(
    name: "client-connection",
    summary: "ClientConnection (what `rampart mtproto ping` runs) fed server bytes, raw or a genuine server's mutated: typed errors only, genuine exchanges complete",
    maxLength: 4096,
    timeout: 30,
    slow: true,
    run: { fuzzConnection($0, mutateToServer: false) },
    seeds: connectionSeeds)

let handshakeTargets: [FuzzTarget] = [handshakeServerTarget, handshakeClientTarget, testServerTarget, clientConnectionTarget]
