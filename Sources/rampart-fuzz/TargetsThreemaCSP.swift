// Fuzz target for the chat-server protocol (RampartThreema CSP): arbitrary bytes to the server
// handshake, the client handshake and the frame decoder, at every stage of a fixed genuine
// connection.

import Rampart
@_spi(Testing) import RampartThreema
import RampartTestSupport

/// A fixed genuine connection and its transcript, built once.
private struct CSPFixture: Sendable {
    let server0: CSP.Server, client0: CSP.Client
    let serverAfterHello: CSP.Server, clientAfterHello: CSP.Client
    let server: CSP.Server, client: CSP.Client
    let clientHello: [UInt8], serverHello: [UInt8], login: [UInt8], loginAck: [UInt8]
    let clientFrames: [UInt8], serverFrames: [UInt8]

    static let shared = CSPFixture()

    private init() {
        func key(_ b: UInt8) -> Curve25519.KeyAgreement.PrivateKey {
            try! .init(rawRepresentation: [UInt8](repeating: b, count: 32))
        }
        let alice = try! ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: [UInt8](repeating: 0x11, count: 32))
        let sk = key(0x51)
        let pk = alice.publicKey
        let config = CSP.Server.Configuration(permanentKey: sk) { $0 == alice.id ? pk : nil }
        let s0 = try! CSP.Server(configuration: config, temporaryKey: key(0x62), cookie: [UInt8](repeating: 0x5C, count: 16))
        let ext = CSP.LoginExtensions(clientInfo: "1;A;de/CH;x;1", cspDeviceID: 7, deviceCookie: [UInt8](repeating: 1, count: 16))
        let (c0, hello) = try! CSP.Client.start(configuration: .init(identity: alice, permittedServerKeys: [sk.publicKey], extensions: ext),
                                                temporaryKey: key(0x61), cookie: [UInt8](repeating: 0xC1, count: 16))
        var s = s0, c = c0
        let sh = try! s.receive(hello).outgoing
        let sAfter = s
        let login = try! c.receive(sh).outgoing
        let cAfter = c
        let ack = try! s.receive(login).outgoing
        _ = try! c.receive(ack)
        var cs = c, ss = s
        let env = [UInt8]("000ALICE00000BOB".utf8) + [UInt8](repeating: 0, count: 16 + 32 + 24 + 20)
        let cf = try! cs.send(.echoRequest([1, 2, 3])) + cs.send(.outgoingMessage(try! CSP.Message(env)))
            + cs.send(.incomingMessageAck(.init(identity: alice.id, messageID: 9)))
        let sf = try! ss.send(.incomingMessage(try! CSP.Message(env))) + ss.send(.queueSendComplete)
            + ss.send(.closeError(canReconnect: true, message: "x")) + ss.send(.alert("y")) + ss.send(.opaque(type: 0xD2, data: []))
        server0 = s0; client0 = c0; serverAfterHello = sAfter; clientAfterHello = cAfter; server = s; client = c
        clientHello = hello; serverHello = sh; self.login = login; loginAck = ack; clientFrames = cf; serverFrames = sf
    }
}

let threemaCSPTarget = FuzzTarget(
    name: "threema-csp",
    summary: "chat-server protocol: the first byte picks a stage (server before client-hello / before login, client before server-hello / before login-ack, established server / client, bare frame decoder), the rest is fed in two chunks at a cut from the second byte: typed error or progress; a refusal leaves the object able to finish the genuine exchange, the decoder never buffers more than one frame",
    maxLength: 9000,
    run: { data in
        var input = FuzzInput(data)
        let stage = input.int(in: 0...6)
        let cutByte = Int(input.byte())
        let rest = input.rest()
        let cut = rest.isEmpty ? 0 : cutByte % (rest.count + 1)
        let a = Array(rest[..<cut]), b = Array(rest[cut...])
        let f = CSPFixture.shared
        switch stage {
        case 0:
            var s = f.server0
            do { _ = try s.receive(a) } catch {
                FuzzCheck.require(s.state == .awaitingClientHello, "a refused client-hello moved the server")
                FuzzCheck.require((try? s.receive(f.clientHello))?.outgoing == f.serverHello, "refusal changed the server")
                return
            }
            _ = try? s.receive(b)
        case 1:
            var c = f.client0
            do { _ = try c.receive(a) } catch {
                FuzzCheck.require(c.state == .awaitingServerHello, "a refused server-hello moved the client")
                FuzzCheck.require((try? c.receive(f.serverHello))?.outgoing == f.login, "refusal changed the client")
                return
            }
            _ = try? c.receive(b)
        case 2:
            var s = f.serverAfterHello
            do { _ = try s.receive(a) } catch {
                FuzzCheck.require(s.state == .awaitingLogin, "a refused login moved the server")
                FuzzCheck.require((try? s.receive(f.login))?.outgoing == f.loginAck, "refusal changed the server")
                return
            }
            _ = try? s.receive(b)
        case 3:
            var c = f.clientAfterHello
            do { _ = try c.receive(a) } catch {
                FuzzCheck.require(c.state == .awaitingLoginAck, "a refused ack moved the client")
                FuzzCheck.require((try? c.receive(f.loginAck))?.events == [.loginAcknowledged], "refusal changed the client")
                return
            }
            _ = try? c.receive(b)
        case 4:
            var s = f.server
            do { _ = try s.receive(a) } catch {
                FuzzCheck.require(s.transport?.nextReceivingSequenceNumber == 3, "a refused chunk advanced the server")
                FuzzCheck.require((try? s.receive(f.clientFrames))?.events.count == 3, "refusal changed the server")
                return
            }
            _ = try? s.receive(b)
            FuzzCheck.require((s.transport?.bufferedByteCount ?? 0) <= 2 + CSP.maximumFrameLength, "server buffer bound")
        case 5:
            var c = f.client
            do { _ = try c.receive(a) } catch {
                FuzzCheck.require(c.transport?.nextReceivingSequenceNumber == 3, "a refused chunk advanced the client")
                FuzzCheck.require((try? c.receive(f.serverFrames))?.events.count == 5, "refusal changed the client")
                return
            }
            _ = try? c.receive(b)
        default:
            var d = CSP.FrameDecoder()
            var boxes: [[UInt8]] = []
            if let x = try? d.decode(a) { boxes += x }
            let before = d
            do { boxes += try d.decode(b) } catch { FuzzCheck.require(d == before, "a refused chunk changed the decoder") }
            FuzzCheck.require(d.bufferedByteCount <= 2 + CSP.maximumFrameLength, "decoder buffer bound")
            for box in boxes { FuzzCheck.require((CSP.minimumFrameLength...CSP.maximumFrameLength).contains(box.count), "frame size") }
        }
    },
    seeds: {
        let f = CSPFixture.shared
        return [[0, 20] + f.clientHello, [1, 40] + f.serverHello, [2, 100] + f.login, [3, 5] + f.loginAck,
                [4, 77] + f.clientFrames, [5, 200] + f.serverFrames, [6, 3] + f.clientFrames + f.serverFrames]
    }
)
