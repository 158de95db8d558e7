// The chat-server protocol (Docs/Threema.md, "Chat-server protocol"): client and server state
// machines driven against each other in process, every check failing with its typed error, chunked
// delivery, the frame limits, and mutation fuzzing of the handshake and frame decoders.

import Foundation
import Rampart
import RampartTestSupport
import Testing
@_spi(Testing) @testable import RampartThreema

private func key(_ byte: UInt8) -> Curve25519.KeyAgreement.PrivateKey {
    try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: byte, count: 32))
}

@Suite struct CSPTests {
    static let serverKey = key(0x51)
    static let otherServerKey = key(0x52)
    static let tck = key(0x61), tsk = key(0x62)
    static let cck = [UInt8](repeating: 0xC1, count: 16), sck = [UInt8](repeating: 0x5C, count: 16)
    static let directory: [ThreemaID: Curve25519.KeyAgreement.PublicKey] = [alice.id: alice.publicKey, bob.id: bob.publicKey]
    static let extensions = CSP.LoginExtensions(clientInfo: "5.0;A;de/CH;Pixel;14", cspDeviceID: 0x0102_0304_0506_0708,
                                                messagePayloadVersion: 1, deviceCookie: [UInt8](repeating: 0xDC, count: 16),
                                                other: [CSP.OpaqueExtension(type: 0x7F, payload: [1, 2, 3])])

    static func serverConfiguration() -> CSP.Server.Configuration {
        CSP.Server.Configuration(permanentKey: serverKey) { directory[$0] }
    }

    static func server(cookie: [UInt8] = sck) throws -> CSP.Server {
        try CSP.Server(configuration: serverConfiguration(), temporaryKey: tsk, cookie: cookie)
    }

    static func client(_ identity: ThreemaIdentity = alice, permitted: [Curve25519.KeyAgreement.PublicKey] = [serverKey.publicKey],
                       extensions: CSP.LoginExtensions = extensions, cookie: [UInt8] = cck) throws -> (CSP.Client, [UInt8]) {
        try CSP.Client.start(configuration: .init(identity: identity, permittedServerKeys: permitted, extensions: extensions),
                             temporaryKey: tck, cookie: cookie)
    }

    /// The whole handshake; returns both sides established and the transcript.
    struct Handshake {
        var client: CSP.Client
        var server: CSP.Server
        var clientHello: [UInt8], serverHello: [UInt8], login: [UInt8], loginAck: [UInt8]
        var verified: CSP.Login
    }

    static func handshake(_ identity: ThreemaIdentity = alice) throws -> Handshake {
        var (client, hello) = try client(identity)
        var server = try server()
        let s1 = try server.receive(hello)
        #expect(s1.events.isEmpty && server.state == .awaitingLogin)
        let c1 = try client.receive(s1.outgoing)
        #expect(c1.events.isEmpty && client.state == .awaitingLoginAck)
        let s2 = try server.receive(c1.outgoing)
        guard case .loggedIn(let login)? = s2.events.first, s2.events.count == 1 else {
            throw ThreemaError.csp(.invalidState)
        }
        let c2 = try client.receive(s2.outgoing)
        #expect(c2.events == [.loginAcknowledged] && c2.outgoing.isEmpty)
        return Handshake(client: client, server: server, clientHello: hello, serverHello: s1.outgoing, login: c1.outgoing,
                         loginAck: s2.outgoing, verified: login)
    }

    /// A server-hello built by hand: `sck ‖ box(tsk ‖ repeated, SK ↔ TCK, sck ‖ 1)`.
    static func serverHello(sck: [UInt8] = sck, repeated: [UInt8] = cck, permanent: Curve25519.KeyAgreement.PrivateKey = serverKey,
                            nonceSequence: UInt64 = 1) throws -> [UInt8] {
        sck + (try Box.seal(tsk.publicKey.rawRepresentation + repeated, nonce: CSP.nonce(sck, nonceSequence),
                            to: tck.publicKey, from: permanent))
    }

    /// A login built by hand against `server()` after the genuine client-hello.
    static func login(identity: ThreemaID = alice.id, rawIdentity: [UInt8]? = nil, signer: ThreemaIdentity = alice, info: [UInt8]? = nil,
                      repeatedSCK: [UInt8] = sck, reserved1: [UInt8] = [UInt8](repeating: 0, count: 24),
                      vouchFlip: Bool = false, extensions: [UInt8]? = [], extensionsLengthOverride: Int? = nil) throws -> [UInt8] {
        var vouch = try DirectoryAuthentication.loginVouch(identity: signer, serverPermanentKey: serverKey.publicKey,
                                                           serverTemporaryKey: tsk.publicKey, serverCookie: sck,
                                                           clientTemporaryKey: tck.publicKey)
        if vouchFlip { vouch[7] ^= 0x40 }
        let field: [UInt8]
        if let info {
            field = info + [UInt8](repeating: 0, count: 32 - info.count)
        } else {
            let n = extensionsLengthOverride ?? (extensions.map { $0.count + 16 } ?? 0)
            field = CSP.extensionMagic + [UInt8(n & 0xFF), UInt8(n >> 8)]
        }
        let data = (rawIdentity ?? identity.bytes) + field + repeatedSCK + reserved1 + vouch + [UInt8](repeating: 0, count: 16)
        let k = try Box.SharedKey(publicKey: tsk.publicKey, privateKey: tck)
        var out = try k.seal(data, nonce: CSP.nonce(cck, 1))
        if let extensions, info == nil { out += try k.seal(extensions, nonce: CSP.nonce(cck, 2)) }
        return out
    }

    /// A server that has answered the genuine client-hello.
    static func serverAfterHello() throws -> CSP.Server {
        var s = try server()
        _ = try s.receive(try client().1)
        return s
    }

    static func envelope(from: ThreemaIdentity, to: ThreemaIdentity, text: String, seed: UInt64) throws -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        let keys = try PairKeys(identity: from, contact: to.contact)
        let msg = OutgoingMessage(type: .text, body: Array(text.utf8), createdAt: 1_700_000_000_000, nickname: "n", using: &rng)
        return try EndToEnd.seal(msg, from: from, keys: keys, using: &rng)
    }

    // MARK: Full exchange

    @Test func handshakeAndMessageExchange() throws {
        var a = try Self.handshake(alice)
        #expect(a.clientHello.count == 48 && a.serverHello.count == 80 && a.loginAck.count == 32)
        let extBytes = try Self.extensions.encoded()
        #expect(a.login.count == 144 + extBytes.count + 16)
        #expect(a.verified.identity == alice.id && a.verified.publicKey == alice.publicKey && a.verified.usedExtensionIndicator)
        #expect(a.verified.extensions == Self.extensions)
        #expect(a.server.login == a.verified && a.client.serverPermanentKey == Self.serverKey.publicKey)
        #expect(a.client.transport?.nextSendingSequenceNumber == 3 && a.client.transport?.nextReceivingSequenceNumber == 3)
        #expect(a.server.transport?.nextSendingSequenceNumber == 3 && a.server.transport?.nextReceivingSequenceNumber == 3)

        // Alice sends a message to Bob; the server routes it by receiver and acknowledges it.
        let env = try Self.envelope(from: alice, to: bob, text: "Hi Bob", seed: 9)
        let frame = try a.client.send(.outgoingMessage(try CSP.Message(env)))
        #expect(Int(frame[0]) | Int(frame[1]) << 8 == frame.count - 2)
        let got = try a.server.receive(frame)
        guard case .payload(.outgoingMessage(let m))? = got.events.first else { Issue.record("no message"); return }
        #expect(m.receiver == bob.id && m.sender == alice.id && m.bytes == env)
        let ack = try a.server.send(.outgoingMessageAck(CSP.MessageAck(identity: m.receiver, messageID: m.messageID)))
        #expect(try a.client.receive(ack).events == [.payload(.outgoingMessageAck(.init(identity: bob.id, messageID: m.messageID)))])

        // Bob's connection delivers it; Bob opens the envelope and acknowledges.
        var b = try Self.handshake(bob)
        let incoming = try b.server.send(.incomingMessage(m))
        guard case .payload(.incomingMessage(let r))? = try b.client.receive(incoming).events.first else {
            Issue.record("no incoming message"); return
        }
        let opened = try r.envelope.open(keys: try PairKeys(identity: bob, contact: alice.contact))
        #expect(opened.container.body == Array("Hi Bob".utf8))
        let back = try b.client.send(.incomingMessageAck(.init(identity: r.sender, messageID: r.messageID)))
        #expect(try b.server.receive(back).events == [.payload(.incomingMessageAck(.init(identity: alice.id, messageID: m.messageID)))])

        // Echo both ways, the server-only payloads, an opaque type; several frames in one chunk.
        let echo = try a.client.send(.echoRequest([1, 2, 3]))
        #expect(try a.server.receive(echo).events == [.payload(.echoRequest([1, 2, 3]))])
        let server: [CSP.Payload] = [.echoResponse([1, 2, 3]), .echoRequest([]), .queueSendComplete,
                                     .alert("Maintenance"), .closeError(canReconnect: false, message: "bye"),
                                     .opaque(type: 0xD2, data: [])]
        #expect(throws: ThreemaError.csp(.invalidState)) { _ = try a.server.send(contentsOf: server + [.outgoingMessage(m)]) }
        let stream = try a.server.send(contentsOf: server)   // the refused batch above used no sequence number
        #expect(try a.client.receive(stream).events == server.map { .payload($0) })
        let opaque = try a.client.send(.opaque(type: 0x30, data: [0x3C, 0x00]))
        #expect(try a.server.receive(opaque).events == [.payload(.opaque(type: 0x30, data: [0x3C, 0x00]))])

        // Each side refuses to send the other side's payloads.
        #expect(throws: ThreemaError.csp(.invalidState)) { _ = try a.client.send(.queueSendComplete) }
        #expect(throws: ThreemaError.csp(.invalidState)) { _ = try a.client.send(.opaque(type: 0x02, data: env)) }
        #expect(throws: ThreemaError.csp(.invalidState)) { _ = try a.server.send(.outgoingMessage(m)) }
        // … and to receive them: a frame sealed by hand with the other side's payload type.
        var forged = try #require(a.client.transport)
        let alertFrame = try forged.seal(.alert("from a client"))
        let before = a.server.transport?.nextReceivingSequenceNumber
        #expect(throws: ThreemaError.csp(.unexpectedPayload(type: 0xE1))) { _ = try a.server.receive(alertFrame) }
        #expect(a.server.transport?.nextReceivingSequenceNumber == before)
        var forged2 = try #require(a.server.transport)
        let messageFrame = try forged2.seal(.outgoingMessage(m))
        #expect(throws: ThreemaError.csp(.unexpectedPayload(type: 0x01))) { _ = try a.client.receive(messageFrame) }
    }

    @Test func payloadsRoundTrip() throws {
        let env = try Self.envelope(from: alice, to: bob, text: "x", seed: 3)
        let payloads: [CSP.Payload] = [
            .echoRequest([]), .echoResponse([0, 255]), .outgoingMessage(try CSP.Message(env)), .incomingMessage(try CSP.Message(env)),
            .outgoingMessageAck(.init(identity: bob.id, messageID: .max)), .incomingMessageAck(.init(identity: alice.id, messageID: 0)),
            .queueSendComplete, .closeError(canReconnect: true, message: "über"), .alert(""), .opaque(type: 0x20, data: [1]),
        ]
        for p in payloads {
            #expect(try CSP.Payload(type: p.type, data: p.data) == p)
        }
        // Every type byte decodes to a payload or a typed error; unknown ones are opaque.
        for t in 0...255 {
            do {
                let p = try CSP.Payload(type: UInt8(t), data: [])
                #expect(p.type == UInt8(t))
                if case .opaque = p { #expect(!CSP.Payload.knownTypes.contains(UInt8(t))) }
            } catch {
                #expect(error == .csp(.malformedPayload(type: UInt8(t))))
            }
        }
        #expect(try CSP.Payload(type: 0xE0, data: [7]) == .closeError(canReconnect: true, message: ""))
    }

    @Test func sendingBeforeEstablishedIsRefused() throws {
        var (c, _) = try Self.client()
        #expect(throws: ThreemaError.csp(.invalidState)) { _ = try c.send(.echoRequest([])) }
        var s = try Self.server()
        #expect(throws: ThreemaError.csp(.invalidState)) { _ = try s.send(.queueSendComplete) }
    }

    @Test func legacyClientInfoAndEmptyExtensions() throws {
        var s = try Self.serverAfterHello()
        let out = try s.receive(try Self.login(info: Array("4.0;A;de/CH;x;9".utf8)))
        guard case .loggedIn(let l)? = out.events.first else { Issue.record("no login"); return }
        #expect(!l.usedExtensionIndicator && l.extensions.clientInfo == "4.0;A;de/CH;x;9" && out.outgoing.count == 32)
        var s2 = try Self.serverAfterHello()
        let out2 = try s2.receive(try Self.login(extensions: nil))
        guard case .loggedIn(let l2)? = out2.events.first else { Issue.record("no login"); return }
        #expect(l2.usedExtensionIndicator && l2.extensions == CSP.LoginExtensions(messagePayloadVersion: nil))
        // Without an extensions box, client sequence number 2 is the first frame's.
        let k = try Box.SharedKey(publicKey: Self.tsk.publicKey, privateKey: Self.tck)
        let frame: (UInt64) throws -> [UInt8] = { seq in
            let box = try k.seal([0x00, 0, 0, 0, 0x2A], nonce: CSP.nonce(Self.cck, seq))
            return [UInt8(box.count), 0] + box
        }
        #expect(throws: ThreemaError.csp(.authenticationFailed(.frame(sequenceNumber: 2)))) { _ = try s2.receive(try frame(3)) }
        #expect(try s2.receive(try frame(2)).events == [.payload(.echoRequest([0x2A]))])
        // An empty extensions box (16 bytes) is also fine.
        var s3 = try Self.serverAfterHello()
        #expect(try s3.receive(try Self.login(extensions: [])).events.count == 1)
    }

    @Test func chunkedDeliveryOneByteAtATime() throws {
        var (c, hello) = try Self.client()
        var s = try Self.server()
        func feed<T>(_ bytes: [UInt8], _ step: ([UInt8]) throws -> T) rethrows -> [T] { try bytes.map { try step([$0]) } }
        let sOut = try feed(hello) { b in try s.receive(b) }
        let serverHello = sOut.flatMap(\.outgoing)
        #expect(serverHello.count == 80 && s.state == .awaitingLogin)
        let login = try feed(serverHello) { b in try c.receive(b) }.flatMap(\.outgoing)
        let s2 = try feed(login) { b in try s.receive(b) }
        #expect(s2.flatMap(\.events).count == 1 && s.state == .established)
        // The login-ack and two frames in one stream, byte by byte.
        var stream = s2.flatMap(\.outgoing)
        stream += try s.send(.echoRequest(Array(repeating: 7, count: 300)))
        stream += try s.send(.alert("x"))
        let events = try feed(stream) { b in try c.receive(b) }.flatMap(\.events)
        #expect(events == [.loginAcknowledged, .payload(.echoRequest(Array(repeating: 7, count: 300))), .payload(.alert("x"))])
        // A large frame split at every possible pair of cut points gives the same payload.
        let big = try c.send(.echoResponse(Array(repeating: 9, count: 8000)))
        var probe = s
        for cut in stride(from: 1, to: big.count, by: 997) {
            var t = s
            let e1 = try t.receive(big[..<cut]), e2 = try t.receive(big[cut...])
            #expect(e1.events.isEmpty && e2.events == [.payload(.echoResponse(Array(repeating: 9, count: 8000)))])
            #expect(t.transport?.bufferedByteCount == 0)
        }
        #expect(try probe.receive(big).events.count == 1)
    }

    // MARK: Every check

    @Test func serverKeyIsPinned() throws {
        // The server holds a key the client does not permit.
        var (c, hello) = try Self.client(permitted: [Self.otherServerKey.publicKey])
        var s = try Self.server()
        let sh = try s.receive(hello).outgoing
        #expect(throws: ThreemaError.csp(.serverKeyNotPermitted)) { _ = try c.receive(sh) }
        #expect(c.state == .awaitingServerHello && c.serverCookie == nil)
        // A list of permitted keys: the second one matches.
        var (c2, _) = try Self.client(permitted: [Self.otherServerKey.publicKey, Self.serverKey.publicKey])
        #expect(try c2.receive(sh).outgoing.count > 144 && c2.serverPermanentKey == Self.serverKey.publicKey)
        #expect(throws: ThreemaError.invalidArgument("no permitted server key")) { _ = try Self.client(permitted: []) }
    }

    @Test func cookiesMustDifferAndBeRepeated() throws {
        // Server side: a client cookie equal to the server's.
        var s = try Self.server(cookie: Self.cck)
        #expect(throws: ThreemaError.csp(.cookiesEqual)) { _ = try s.receive(try Self.client().1) }
        #expect(s.state == .awaitingClientHello)
        // Client side: SCK == CCK, then a wrong repeated CCK, then the genuine hello still works.
        var (c, _) = try Self.client()
        #expect(throws: ThreemaError.csp(.cookiesEqual)) { _ = try c.receive(try Self.serverHello(sck: Self.cck)) }
        var wrong = Self.cck
        wrong[15] ^= 1
        #expect(throws: ThreemaError.csp(.repeatedCookieMismatch)) { _ = try c.receive(try Self.serverHello(repeated: wrong)) }
        #expect(c.state == .awaitingServerHello)
        // A server-hello sealed with sequence number 2 instead of 1 does not open.
        #expect(throws: ThreemaError.csp(.serverKeyNotPermitted)) { _ = try c.receive(try Self.serverHello(nonceSequence: 2)) }
        #expect(try c.receive(try Self.serverHello()).outgoing.count > 144)
        // Server side: the login repeats another server cookie.
        var s2 = try Self.serverAfterHello()
        #expect(throws: ThreemaError.csp(.repeatedCookieMismatch)) {
            _ = try s2.receive(try Self.login(repeatedSCK: [UInt8](repeating: 0x5D, count: 16)))
        }
        #expect(s2.state == .awaitingLogin)
        #expect(try s2.receive(try Self.login()).events.count == 1)
    }

    @Test func loginVerification() throws {
        var s = try Self.serverAfterHello()
        #expect(throws: ThreemaError.csp(.invalidVouch)) { _ = try s.receive(try Self.login(vouchFlip: true)) }
        // Eve claims Alice's ID: her vouch is made with her own key.
        #expect(throws: ThreemaError.csp(.invalidVouch)) { _ = try s.receive(try Self.login(signer: eve)) }
        let unknown = try ThreemaID("ZZZZZZZZ")
        #expect(throws: ThreemaError.csp(.unknownIdentity(unknown))) { _ = try s.receive(try Self.login(identity: unknown)) }
        #expect(throws: ThreemaError.csp(.invalidLoginIdentity)) {
            _ = try s.receive(try Self.login(rawIdentity: Array("alice123".utf8)))
        }
        var s1 = try Self.serverAfterHello()
        #expect(throws: ThreemaError.csp(.reservedNotZero)) {
            _ = try s1.receive(try Self.login(reserved1: [1] + [UInt8](repeating: 0, count: 23)))
        }
        for n in [1, 15, CSP.maximumExtensionsLength + 1] {
            var t = try Self.serverAfterHello()
            #expect(throws: ThreemaError.csp(.invalidExtensionsLength(n))) {
                _ = try t.receive(try Self.login(extensions: nil, extensionsLengthOverride: n))
            }
        }
        // Malformed extensions: truncated entry, duplicate type, wrong length of a known type, bad UTF-8.
        let bad: [([UInt8], UInt8)] = [([0x00, 5, 0, 0x41], 0x00), ([0x02, 1, 0, 1, 0x02, 1, 0, 1], 0x02),
                                       ([0x01, 4, 0, 1, 2, 3, 4], 0x01), ([0x00, 1, 0, 0xFF], 0x00), ([0x03], 0x03)]
        for (ext, type) in bad {
            var t = try Self.serverAfterHello()
            #expect(throws: ThreemaError.csp(.malformedExtension(type))) { _ = try t.receive(try Self.login(extensions: ext)) }
            #expect(t.state == .awaitingLoginExtensions(length: ext.count + 16) || t.state == .awaitingLogin)
        }
        // After all refusals the same server still accepts the genuine login.
        #expect(s.state == .awaitingLogin)
        #expect(try s.receive(try Self.login()).events.count == 1)
        // A tampered login box.
        var t = try Self.serverAfterHello()
        var l = try Self.login()
        l[20] ^= 1
        #expect(throws: ThreemaError.csp(.authenticationFailed(.login))) { _ = try t.receive(l) }
        var l2 = try Self.login()
        l2[l2.count - 1] ^= 1
        #expect(throws: ThreemaError.csp(.authenticationFailed(.loginExtensions))) { _ = try t.receive(l2) }
        #expect(t.state == .awaitingLogin)
    }

    @Test func smallOrderClientKeyIsRefused() throws {
        var s = try Self.server()
        #expect(throws: ThreemaError.invalidPublicKey) { _ = try s.receive([UInt8](repeating: 0, count: 32) + Self.cck) }
        #expect(s.state == .awaitingClientHello)
    }

    @Test func loginAckMustAuthenticate() throws {
        var (c, hello) = try Self.client()
        var s = try Self.server()
        _ = try c.receive(try s.receive(hello).outgoing)
        // An ack sealed with SSN 1 (a replayed sequence number) or 3 (skipped) does not open.
        let k = try Box.SharedKey(publicKey: Self.tsk.publicKey, privateKey: Self.tck)
        for seq: UInt64 in [1, 3] {
            let ack = try k.seal([UInt8](repeating: 0, count: 16), nonce: CSP.nonce(Self.sck, seq))
            #expect(throws: ThreemaError.csp(.authenticationFailed(.loginAck))) { _ = try c.receive(ack) }
            #expect(c.state == .awaitingLoginAck)
        }
        let good = try k.seal([UInt8](repeating: 0, count: 16), nonce: CSP.nonce(Self.sck, 2))
        #expect(try c.receive(good).events == [.loginAcknowledged])
    }

    @Test func sequenceNumbersAreNeverReusedOrSkipped() throws {
        var h = try Self.handshake()
        let f1 = try h.client.send(.echoRequest([1])), f2 = try h.client.send(.echoRequest([2])), f3 = try h.client.send(.echoRequest([3]))
        #expect(try h.server.receive(f1).events == [.payload(.echoRequest([1]))])
        #expect(throws: ThreemaError.csp(.authenticationFailed(.frame(sequenceNumber: 4)))) { _ = try h.server.receive(f1) }
        #expect(throws: ThreemaError.csp(.authenticationFailed(.frame(sequenceNumber: 4)))) { _ = try h.server.receive(f3) }
        // A good frame followed by a replay in one chunk: nothing is released, nothing advances.
        #expect(throws: ThreemaError.csp(.authenticationFailed(.frame(sequenceNumber: 5)))) { _ = try h.server.receive(f2 + f2) }
        #expect(h.server.transport?.nextReceivingSequenceNumber == 4)
        #expect(try h.server.receive(f2 + f3).events == [.payload(.echoRequest([2])), .payload(.echoRequest([3]))])
        // The client-to-server direction's frame does not open in the other direction (other cookie).
        let g = try h.client.send(.echoRequest([4]))
        #expect(throws: ThreemaError.csp(.authenticationFailed(.frame(sequenceNumber: 3)))) { _ = try h.client.receive(g) }
        // Replaying the login-ack after the handshake is not a frame that opens.
        #expect(throws: ThreemaError.self) { _ = try h.client.receive(h.loginAck) }
        // Exhaustion: the last sequence number is never used.
        var t = CSP.Transport(key: try Box.SharedKey(publicKey: Self.tsk.publicKey, privateKey: Self.tck),
                              sending: CSP.NonceSequence(cookie: Self.cck, next: .max - 1),
                              receiving: CSP.NonceSequence(cookie: Self.sck))
        _ = try t.seal(.echoRequest([]))
        #expect(throws: ThreemaError.csp(.sequenceNumberExhausted)) { _ = try t.seal(.echoRequest([])) }
    }

    @Test func frameLimitsAreCheckedOnThePrefix() throws {
        var h = try Self.handshake()
        // 8192 is the largest box: 8172 bytes of echo data.
        let max = try h.client.send(.echoRequest([UInt8](repeating: 1, count: CSP.maximumFrameLength - 20)))
        #expect(max.count == 2 + 8192)
        #expect(try h.server.receive(max).events.count == 1)
        #expect(throws: ThreemaError.csp(.frameTooLarge(8193))) {
            _ = try h.client.send(.echoRequest([UInt8](repeating: 1, count: CSP.maximumFrameLength - 19)))
        }
        // The length prefix alone is refused, with nothing buffered.
        #expect(throws: ThreemaError.csp(.frameTooLarge(8193))) { _ = try h.server.receive([0x01, 0x20]) }
        #expect(throws: ThreemaError.csp(.frameTooLarge(0xFFFF))) { _ = try h.server.receive([0xFF, 0xFF]) }
        #expect(throws: ThreemaError.csp(.frameTooShort(19))) { _ = try h.server.receive([19, 0]) }
        #expect(throws: ThreemaError.csp(.frameTooShort(0))) { _ = try h.server.receive([0, 0]) }
        #expect(h.server.transport?.bufferedByteCount == 0)
        // Split prefix: the first byte waits, the second one is refused.
        #expect(try h.server.receive([0x01]).events.isEmpty)
        #expect(throws: ThreemaError.csp(.frameTooLarge(8193))) { _ = try h.server.receive([0x20]) }
        #expect(h.server.transport?.bufferedByteCount == 1)
        // A chunk that completes a frame and then carries a bad prefix releases nothing and keeps
        // the partial frame.
        var t = try Self.handshake()
        let f = try t.client.send(.echoRequest([5, 6]))
        #expect(try t.server.receive(f.prefix(10)).events.isEmpty)
        #expect(throws: ThreemaError.csp(.frameTooLarge(0xFFFF))) { _ = try t.server.receive(Array(f.dropFirst(10)) + [0xFF, 0xFF]) }
        #expect(t.server.transport?.bufferedByteCount == 10 && t.server.transport?.nextReceivingSequenceNumber == 3)
        #expect(try t.server.receive(f.dropFirst(10)).events == [.payload(.echoRequest([5, 6]))])
        // The same with a tampered second frame (an authentication failure after the decoder
        // completed both): the partial first frame is put back too.
        var u = try Self.handshake()
        let f2 = try u.client.send(.echoRequest([5, 6])), g2 = try u.client.send(.echoRequest([7]))
        var bad2 = g2
        bad2[bad2.count - 1] ^= 1
        #expect(try u.server.receive(f2.prefix(10)).events.isEmpty)
        #expect(throws: ThreemaError.csp(.authenticationFailed(.frame(sequenceNumber: 4)))) {
            _ = try u.server.receive(Array(f2.dropFirst(10)) + bad2 + [0x01])
        }
        #expect(u.server.transport?.bufferedByteCount == 10 && u.server.transport?.nextReceivingSequenceNumber == 3)
        #expect(try u.server.receive(Array(f2.dropFirst(10)) + g2).events == [.payload(.echoRequest([5, 6])), .payload(.echoRequest([7]))])
        var d = CSP.FrameDecoder()
        #expect(try d.decode([0x14, 0x00] + [UInt8](repeating: 0, count: 19)).isEmpty && d.bufferedByteCount == 21)
        #expect(try d.decode([0]).count == 1 && d.bufferedByteCount == 0)
    }

    @Test func truncatedAndMalformedPayloads() throws {
        var h = try Self.handshake()
        let cases: [(UInt8, [UInt8])] = [
            (0x81, alice.id.bytes + [1, 2, 3, 4, 5, 6, 7]),   // ack of 15 bytes
            (0x82, alice.id.bytes + [UInt8](repeating: 0, count: 9)),   // 17 bytes
            (0x81, Array("aaaaaaaa".utf8) + [UInt8](repeating: 0, count: 8)),   // not a Threema ID
            (0x02, [UInt8](repeating: 0x41, count: 103)),   // shorter than an envelope
            (0xD0, [0]), (0xE0, []), (0xE0, [1, 0xC3]), (0xE1, [0xFF]),
        ]
        for (type, data) in cases {
            var sealer = try #require(h.server.transport)   // a copy: every frame uses sequence number 3
            let frame = try sealer.seal(type: type, data: data)
            let before = h.client.transport?.nextReceivingSequenceNumber
            #expect(throws: ThreemaError.csp(.malformedPayload(type: type))) { _ = try h.client.receive(frame) }
            #expect(h.client.transport?.nextReceivingSequenceNumber == before)
        }
        // Handshake structs arriving in pieces wait for the rest and change nothing else.
        var (c, hello) = try Self.client()
        var s = try Self.server()
        #expect(try s.receive(hello.prefix(47)).outgoing.isEmpty && s.state == .awaitingClientHello)
        let sh = try s.receive(hello.suffix(1)).outgoing
        #expect(try c.receive(sh.prefix(79)).outgoing.isEmpty && c.state == .awaitingServerHello)
        #expect(try c.receive(sh.suffix(1)).outgoing.count > 144)
    }

    // MARK: Mutation fuzz

    @Test func mutatedHandshakeAndFramesNeverTrapAndChangeNothing() throws {
        let h = try Self.handshake()
        var rng = SplitMix64(seed: 0xC5B)
        var server0 = try Self.server()
        let (client0, _) = try Self.client()
        var serverAfterHello = server0
        _ = try serverAfterHello.receive(h.clientHello)
        var clientAfterHello = client0
        _ = try clientAfterHello.receive(h.serverHello)
        var hc = h.client, hs = h.server
        let frames = try (0..<3).map { i in try hc.send(.echoRequest([UInt8](repeating: UInt8(i), count: 40 * i))) }
        let serverFrames = try [hs.send(.queueSendComplete), hs.send(.alert("a"))]
        let iterations = isDebugBuild ? 120 : 600
        var refused = 0
        for i in 0..<iterations {
            switch i % 5 {
            case 0:
                var s = server0
                let m = mutated(h.clientHello, &rng)
                do { _ = try s.receive(m) } catch {
                    refused += 1
                    #expect(s.state == .awaitingClientHello)
                    #expect(try s.receive(h.clientHello).outgoing == h.serverHello)
                }
            case 1:
                var c = client0
                let m = mutated(h.serverHello, &rng)
                do { _ = try c.receive(m) } catch {
                    refused += 1
                    #expect(c.state == .awaitingServerHello)
                    #expect(try c.receive(h.serverHello).outgoing == h.login)
                }
            case 2:
                var s = serverAfterHello
                let m = mutated(h.login, &rng)
                do { _ = try s.receive(m) } catch {
                    refused += 1
                    #expect(s.state == .awaitingLogin)
                    #expect(try s.receive(h.login).outgoing == h.loginAck)
                }
            case 3:
                var c = clientAfterHello
                let m = mutated(h.loginAck, &rng)
                do { _ = try c.receive(m) } catch {
                    refused += 1
                    #expect(c.state == .awaitingLoginAck)
                    #expect(try c.receive(h.loginAck).events == [.loginAcknowledged])
                }
            default:
                var s = h.server
                let stream = frames.flatMap { $0 }
                let m = mutated(stream, &rng)
                do { _ = try s.receive(m) } catch {
                    refused += 1
                    #expect(s.transport?.nextReceivingSequenceNumber == 3 && s.transport?.bufferedByteCount == 0)
                    #expect(try s.receive(stream).events.count == 3)
                }
                var c = h.client
                let ms = mutated(serverFrames.flatMap { $0 }, &rng)
                do { _ = try c.receive(ms) } catch {
                    #expect(try c.receive(serverFrames.flatMap { $0 }).events == [.payload(.queueSendComplete), .payload(.alert("a"))])
                }
            }
        }
        #expect(refused > iterations / 3)
        // Random bytes against every stage.
        for _ in 0..<(isDebugBuild ? 100 : 500) {
            let junk = randomBytes(count: Int(rng.next() % 300), using: &rng)
            var s = server0, c = client0, s2 = serverAfterHello, c2 = clientAfterHello, s3 = h.server, c3 = h.client
            _ = try? s.receive(junk); _ = try? c.receive(junk); _ = try? s2.receive(junk)
            _ = try? c2.receive(junk); _ = try? s3.receive(junk); _ = try? c3.receive(junk)
            var d = CSP.FrameDecoder()
            _ = try? d.decode(junk)
            #expect(d.bufferedByteCount <= 2 + CSP.maximumFrameLength)
        }
        _ = try server0.receive([])
    }
}

/// The handshake and two frames of `Vectors/threema/csp_handshake.json`, computed independently with
/// PyNaCl (libsodium) and hashlib by `Vectors/generate_threema_csp.py`: Rampart's client and server,
/// given the same keys and cookies, must write exactly these bytes.
@Suite struct CSPVectorTests {
    @Test func handshakeMatchesLibsodiumVector() throws {
        let path = projectRoot + "/Vectors/threema/csp_handshake.json"
        let data = try #require(FileManager.default.contents(atPath: path), "missing \(path)")
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let v = try #require((root["cases"] as? [[String: Any]])?.first)
        func hex(_ k: String) -> [UInt8] { hexBytes(v[k] as? String ?? "") }
        func secret(_ k: String) throws -> Curve25519.KeyAgreement.PrivateKey { try .init(rawRepresentation: hex(k)) }
        let identity = try ThreemaIdentity(id: ThreemaID(v["client_identity"] as? String ?? ""), privateKey: hex("client_secret"))
        let sk = try secret("server_secret")
        let ext = CSP.LoginExtensions(clientInfo: v["client_info"] as? String,
                                      cspDeviceID: UInt64(v["csp_device_id"] as? String ?? "", radix: 16),
                                      messagePayloadVersion: UInt8(v["message_payload_version"] as? Int ?? -1),
                                      deviceCookie: hex("device_cookie"))
        #expect(try ext.encoded() == hex("extensions"))
        var (client, hello) = try CSP.Client.start(
            configuration: .init(identity: identity, permittedServerKeys: [sk.publicKey], extensions: ext),
            temporaryKey: try secret("client_temporary_secret"), cookie: hex("client_cookie"))
        #expect(hello == hex("client_hello"))
        let pk = identity.publicKey
        var server = try CSP.Server(configuration: .init(permanentKey: sk) { $0 == identity.id ? pk : nil },
                                    temporaryKey: try secret("server_temporary_secret"), cookie: hex("server_cookie"))
        #expect(try server.receive(hello).outgoing == hex("server_hello"))
        #expect(try client.receive(hex("server_hello")).outgoing == hex("login"))
        let s = try server.receive(hex("login"))
        #expect(s.outgoing == hex("login_ack"))
        #expect(s.events == [.loggedIn(CSP.Login(identity: identity.id, publicKey: pk, extensions: ext, usedExtensionIndicator: true))])
        #expect(try client.receive(hex("login_ack")).events == [.loginAcknowledged])
        #expect(try client.send(.echoRequest([1, 2, 3])) == hex("client_frame_echo_request"))
        let ack = CSP.MessageAck(identity: try ThreemaID("00000BOB"), messageID: 0x1122_3344_5566_7788)
        #expect(try server.send(.outgoingMessageAck(ack)) == hex("server_frame_outgoing_message_ack"))
        #expect(try server.receive(hex("client_frame_echo_request")).events == [.payload(.echoRequest([1, 2, 3]))])
        #expect(try client.receive(hex("server_frame_outgoing_message_ack")).events == [.payload(.outgoingMessageAck(ack))])
        // The vouch itself, through the existing directory function.
        #expect(try DirectoryAuthentication.loginVouch(identity: identity, serverPermanentKey: sk.publicKey,
                                                       serverTemporaryKey: try secret("server_temporary_secret").publicKey,
                                                       serverCookie: hex("server_cookie"),
                                                       clientTemporaryKey: try secret("client_temporary_secret").publicKey)
                == hex("vouch"))
    }
}
