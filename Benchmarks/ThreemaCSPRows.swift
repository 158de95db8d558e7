// Chat-server protocol rows. `threema-csp-frame`: one 200-byte echo payload sealed into a frame by
// one side and opened by the other (container header, nonce cookie ‖ u64-le sequence number, length
// prefix), against the same composition from libsodium's crypto_box_easy_afternm /
// crypto_box_open_easy_afternm in preallocated buffers. `threema-csp-handshake`: client and server
// in one process through client-hello, server-hello, login with extensions and login-ack, against
// the same primitive calls from libsodium (2 crypto_scalarmult_base, 8 crypto_box_beforenm, 4 seals
// and 4 opens after NM, 4 BLAKE2b) without any parsing or checks.

import Rampart
import RampartReference
import RampartTestSupport
import RampartThreema


func threemaCSPRows() -> [Row] {
    let serverKey = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Array(UnsafeRawBufferPointer(buffer(40)).suffix(32)))
    let alice = try! ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: Array(UnsafeRawBufferPointer(buffer(41)).suffix(32)))
    let alicePK = alice.publicKey
    let serverConfig = CSP.Server.Configuration(permanentKey: serverKey) { $0 == alice.id ? alicePK : nil }
    let clientConfig = CSP.Client.Configuration(identity: alice, permittedServerKeys: [serverKey.publicKey],
                                                extensions: CSP.LoginExtensions(clientInfo: "1.0;A;de/CH;bench;1",
                                                                                deviceCookie: [UInt8](repeating: 7, count: 16)))
    var rng = SplitMix64(seed: 0x7E5A)
    func handshake() -> (CSP.Client, CSP.Server) {
        var (client, hello) = try! CSP.Client.start(configuration: clientConfig, using: &rng)
        var server = CSP.Server(configuration: serverConfig, using: &rng)
        let serverHello = try! server.receive(hello).outgoing
        let login = try! client.receive(serverHello).outgoing
        let ack = try! server.receive(login)
        guard case .loggedIn? = ack.events.first, try! client.receive(ack.outgoing).events == [.loginAcknowledged] else {
            fatalError("CSP handshake did not complete")
        }
        return (client, server)
    }
    var rows: [Row] = []

    // Frame: seal on the client, open on the server (fixed temporary keys, so that the libsodium side
    // can derive the same session key).
    let tck = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Array(UnsafeRawBufferPointer(buffer(42)).suffix(32)))
    let tsk = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Array(UnsafeRawBufferPointer(buffer(43)).suffix(32)))
    var (client, hello) = try! CSP.Client.start(configuration: clientConfig, temporaryKey: tck, cookie: [UInt8](repeating: 0xC1, count: 16))
    var server = try! CSP.Server(configuration: serverConfig, temporaryKey: tsk, cookie: [UInt8](repeating: 0x5C, count: 16))
    let ack = try! server.receive(try! client.receive(try! server.receive(hello).outgoing).outgoing).outgoing
    _ = try! client.receive(ack)
    var sender = client.transport!, receiver = server.transport!
    let sessionKey = try! Box.SharedKey(publicKey: tsk.publicKey, privateKey: tck).symmetricKey.withUnsafeBytes { Array($0) }
    let payload = Array(UnsafeRawBufferPointer(buffer(200)))
    var cs = [Contender(implementation: "rampart") {
        let frame = try! sender.seal(type: 0x00, data: payload)
        let p = try! receiver.receive(frame)
        consume(UInt8(truncatingIfNeeded: p.count))
    }]
    if let s = SodiumBox.shared {
        let key = UnsafeMutableRawPointer.allocate(byteCount: 32, alignment: 64)
        sessionKey.withUnsafeBytes { key.copyMemory(from: $0.baseAddress!, byteCount: 32) }
        let sendNonce = UnsafeMutableRawPointer.allocate(byteCount: 24, alignment: 8)
        let receiveNonce = UnsafeMutableRawPointer.allocate(byteCount: 24, alignment: 8)
        client.clientCookie.withUnsafeBytes { c in
            sendNonce.copyMemory(from: c.baseAddress!, byteCount: 16)
            receiveNonce.copyMemory(from: c.baseAddress!, byteCount: 16)
        }
        let container = UnsafeMutableRawPointer.allocate(byteCount: 4 + 200, alignment: 64)
        container.initializeMemory(as: UInt8.self, repeating: 0, count: 4)
        payload.withUnsafeBytes { (container + 4).copyMemory(from: $0.baseAddress!, byteCount: 200) }
        let frame = UnsafeMutableRawPointer.allocate(byteCount: 2 + 16 + 204, alignment: 64)
        let opened = UnsafeMutableRawPointer.allocate(byteCount: 204, alignment: 64)
        var sendSeq: UInt64 = 1, receiveSeq: UInt64 = 1
        cs.append(Contender(implementation: "libsodium") {
            sendNonce.storeBytes(of: sendSeq.littleEndian, toByteOffset: 16, as: UInt64.self)
            sendSeq += 1
            s.sealAfterNM(UnsafeRawBufferPointer(start: container, count: 204), into: frame + 2, nonce: sendNonce, key: key)
            frame.storeBytes(of: UInt16(220).littleEndian, as: UInt16.self)
            let length = Int(UInt16(littleEndian: frame.loadUnaligned(as: UInt16.self)))
            guard length <= 8192 else { fatalError("frame too large") }
            receiveNonce.storeBytes(of: receiveSeq.littleEndian, toByteOffset: 16, as: UInt64.self)
            receiveSeq += 1
            guard s.openAfterNM(UnsafeRawBufferPointer(start: frame + 2, count: length), into: opened, nonce: receiveNonce, key: key) else {
                fatalError("libsodium frame did not open")
            }
            consume(opened.load(as: UInt8.self))
        })
    }
    rows.append(Row(operation: "threema-csp-frame", size: 200, unit: .opsps, contenders: cs))

    // Handshake.
    var hs = [Contender(implementation: "rampart") {
        let (c, _) = handshake()
        consume(c.clientCookie[0])
    }]
    if let b = SodiumBox.shared, let g = Sodium.shared {
        let sk = serverKey.rawRepresentation, ck = alice.privateKey.rawRepresentation
        let skPub = serverKey.publicKey.rawRepresentation, ckPub = alicePK.rawRepresentation
        let v2 = Array("v2".utf8) + [UInt8](repeating: 0, count: 14), csp = Array("3ma-csp".utf8) + [UInt8](repeating: 0, count: 9)
        var srng = SplitMix64(seed: 0x7E5A)
        func random32() -> [UInt8] { (0..<4).flatMap { _ in withUnsafeBytes(of: srng.next()) { Array($0) } } }
        hs.append(Contender(implementation: "libsodium") {
            let tck = random32(), tsk = random32(), cck = Array(random32().prefix(16)), sck = Array(random32().suffix(16))
            let tckPub = b.publicKey(secretKey: tck), tskPub = b.publicKey(secretKey: tsk)
            func nonce(_ c: [UInt8], _ n: UInt64) -> [UInt8] { c + withUnsafeBytes(of: n.littleEndian) { Array($0) } }
            func box(_ m: [UInt8], _ n: [UInt8], _ k: [UInt8]) -> [UInt8] {
                var out = [UInt8](repeating: 0, count: m.count + 16)
                m.withUnsafeBytes { mb in n.withUnsafeBytes { nb in k.withUnsafeBytes { kb in out.withUnsafeMutableBytes {
                    b.sealAfterNM(mb, into: $0.baseAddress!, nonce: nb.baseAddress!, key: kb.baseAddress!) } } } }
                return out
            }
            func open(_ c: [UInt8], _ n: [UInt8], _ k: [UInt8]) -> [UInt8] {
                var out = [UInt8](repeating: 0, count: c.count - 16)
                let ok = c.withUnsafeBytes { cb in n.withUnsafeBytes { nb in k.withUnsafeBytes { kb in out.withUnsafeMutableBytes {
                    b.openAfterNM(cb, into: $0.baseAddress!, nonce: nb.baseAddress!, key: kb.baseAddress!) } } } }
                guard ok else { fatalError("libsodium handshake box did not open") }
                return out
            }
            func vouch(_ ss1: [UInt8], _ ss2: [UInt8]) -> [UInt8] {
                let k = try! g.blake2b([], outputLength: 32, key: ss1 + ss2, salt: v2, personal: csp)
                return try! g.blake2b(sck + tckPub, outputLength: 32, key: k, salt: nil, personal: nil)
            }
            // Server: hello key, session key, server-hello box.
            let helloS = b.beforeNM(publicKey: tckPub, secretKey: sk)!, sessionS = b.beforeNM(publicKey: tckPub, secretKey: tsk)!
            let hello = box(tskPub + cck, nonce(sck, 1), helloS)
            // Client: open, session key, vouch, login and extensions boxes.
            let helloC = b.beforeNM(publicKey: skPub, secretKey: tck)!
            let challenge = open(hello, nonce(sck, 1), helloC)
            let sessionC = b.beforeNM(publicKey: Array(challenge.prefix(32)), secretKey: tck)!
            let v = vouch(b.beforeNM(publicKey: skPub, secretKey: ck)!, b.beforeNM(publicKey: Array(challenge.prefix(32)), secretKey: ck)!)
            let login = box(Array("000ALICE".utf8) + [UInt8](repeating: 0, count: 32) + sck + [UInt8](repeating: 0, count: 24) + v
                            + [UInt8](repeating: 0, count: 16), nonce(cck, 1), sessionC)
            let ext = box([UInt8](repeating: 0, count: 45), nonce(cck, 2), sessionC)
            // Server: open both, vouch check, login-ack; client opens it.
            let data = open(login, nonce(cck, 1), sessionS)
            _ = open(ext, nonce(cck, 2), sessionS)
            let expected = vouch(b.beforeNM(publicKey: ckPub, secretKey: sk)!, b.beforeNM(publicKey: ckPub, secretKey: tsk)!)
            guard Array(data[80..<112]) == expected else { fatalError("libsodium vouch differs") }
            let ack = box([UInt8](repeating: 0, count: 16), nonce(sck, 2), sessionS)
            consume(open(ack, nonce(sck, 2), sessionC)[0])
        })
    }
    rows.append(Row(operation: "threema-csp-handshake", size: 0, unit: .opsps, contenders: hs))
    return rows
}
