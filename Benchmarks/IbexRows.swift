// Ibex rows: one encapsulated message of a 4DH session (Docs/Threema.md §1.3, §1.5): the message key
// and the next chain key (two keyed BLAKE2b calls with salt and personal), the zero-nonce secretbox of
// `type ‖ body`, and the protobuf `Envelope { session_id, Encapsulated { dh_type, counter,
// encrypted_inner, offered_version, applied_version } }`. The libsodium side composes the same
// bytes from crypto_generichash_blake2b_salt_personal and crypto_secretbox_easy in preallocated
// buffers; Rampart goes through `Ibex.Session.encrypt` and `Envelope.encoded()` as a user does.

import Rampart
import RampartReference
import RampartThreema

func ibexRows() -> [Row] {
    let alice = try! ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: Array(UnsafeRawBufferPointer(buffer(33)).suffix(32)))
    let bob = try! ThreemaIdentity(id: ThreemaID("00000BOB"), privateKey: Array(UnsafeRawBufferPointer(buffer(34)).suffix(32)))
    let sid = [UInt8](repeating: 0x5a, count: 16)
    var (a, initEnvelope) = try! Ibex.Session.initiate(identity: alice, peer: bob.contact, sessionID: sid,
                                                       ephemeral: try! .init(rawRepresentation: [UInt8](repeating: 0xa1, count: 32)))
    guard case .initiate(let offer) = initEnvelope.content else { fatalError("no Init") }
    var b = try! Ibex.Session.receiveInit(offer, sessionID: sid, identity: bob, peer: alice.contact)
    guard case .accept(let acceptOffer) = try! b.accept(ephemeral: try! .init(rawRepresentation: [UInt8](repeating: 0xb2, count: 32))).content
    else { fatalError("no Accept") }
    try! a.processAccept(acceptOffer)
    let body = Array(UnsafeRawBufferPointer(buffer(200)))
    var session = a
    var cs = [Contender(implementation: "rampart") {
        let e = try! session.encrypt(type: 0x01, body: body).encoded()
        consume(e[e.count - 1])
    }]
    if let sodium = Sodium.shared, let salsa = SodiumSalsa.shared {
        // The chain key the Rampart session starts from (its first 4DH key), then the same chain.
        let secrets = try! Ibex.SharedSecrets.initiator(identity: alice, peer: bob.contact,
                                                        ephemeral: try! .init(rawRepresentation: [UInt8](repeating: 0xa1, count: 32)),
                                                        peerEphemeral: try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0xb2, count: 32)).publicKey)
        let root = secrets.rootKeys4DH(local: alice.id, remote: bob.id)!.local
        let mem = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 64)
        mem.initializeMemory(as: UInt8.self, repeating: 0, count: 4096)
        let ck = mem, mk = mem + 32, next = mem + 64, aek = mem + 96, kdfck = mem + 112, personal = mem + 128
        let nonce = mem + 144, plain = mem + 256, out = mem + 1024
        root.withUnsafeBytes { ck.copyMemory(from: $0.baseAddress!, byteCount: 32) }
        for (i, c) in "kdf-aek".utf8.enumerated() { aek.storeBytes(of: c, toByteOffset: i, as: UInt8.self) }
        for (i, c) in "kdf-ck".utf8.enumerated() { kdfck.storeBytes(of: c, toByteOffset: i, as: UInt8.self) }
        for (i, c) in "3ma-e2e".utf8.enumerated() { personal.storeBytes(of: c, toByteOffset: i, as: UInt8.self) }
        plain.storeBytes(of: UInt8(1), as: UInt8.self)
        body.withUnsafeBytes { (plain + 1).copyMemory(from: $0.baseAddress!, byteCount: 200) }
        var counter: UInt64 = 1
        func encapsulate() -> Int {
            sodium.blake2bKDF(into: mk, outputLength: 32, key: ck, keyLength: 32, salt: aek, personal: personal)
            // Envelope header: session_id (field 1), then field 6 (Encapsulated) with its length.
            var o = 0
            func put(_ byte: UInt8) { out.storeBytes(of: byte, toByteOffset: o, as: UInt8.self); o += 1 }
            func varint(_ v: UInt64) { var v = v; while v >= 0x80 { put(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }; put(UInt8(v)) }
            put(0x0a); put(16); for _ in 0..<16 { put(0x5a) }
            let inner = 1 + 200 + 16
            var counterBytes = 1, c = counter
            while c >= 0x80 { counterBytes += 1; c >>= 7 }
            let encapsulatedLength = 2 + 1 + counterBytes + 1 + 2 + inner + 3 + 3
            put(0x32); varint(UInt64(encapsulatedLength))
            put(0x08); put(0x01)
            put(0x10); varint(counter)
            put(0x1a); varint(UInt64(inner))
            salsa.secretboxEasy(UnsafeRawBufferPointer(start: plain, count: 201), into: out + o, nonce: nonce, key: mk)
            o += inner
            put(0x20); varint(0x0102)
            put(0x28); varint(0x0102)
            sodium.blake2bKDF(into: next, outputLength: 32, key: ck, keyLength: 32, salt: kdfck, personal: personal)
            ck.copyMemory(from: next, byteCount: 32)
            counter += 1
            return o
        }
        // The composition writes exactly Rampart's bytes for the session's first message.
        var first = a
        let want = try! first.encrypt(type: 0x01, body: body).encoded()
        let n = encapsulate()
        guard Array(UnsafeRawBufferPointer(start: out, count: n)) == want else {
            fail("threema-ibex-encapsulate: the libsodium composition differs from Rampart's envelope")
        }
        cs.append(Contender(implementation: "libsodium") {
            let n = encapsulate()
            consume(out + n - 1)
        })
    }
    return [Row(operation: "threema-ibex-encapsulate", size: 200, unit: .opsps, contenders: cs)]
}
