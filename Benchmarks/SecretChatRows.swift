// Secret-chat rows (Docs/MTProto.md §7.2, §7.3):
//
// * `secret-chat-encrypt` / `secret-chat-decrypt` (1 KiB, 64 KiB): the whole v2 message, Rampart's
//   `SecretChat.Envelope` against the same composition from OpenSSL calls as the cloud rows
//   (`mtproto-encrypt-v2`): EVP SHA-256 with two updates per hash and `AES_ige_encrypt` with a
//   legacy `AES_KEY`, preallocated buffers. Plaintext = int32 length ‖ TL ‖ minimal padding (12–27
//   random bytes), x = 0 (the creator writes), framing key_fingerprint ‖ msg_key ‖ ciphertext; the
//   decryption checks msg_key, the length field and the padding bounds on both sides.
// * `secret-chat-dh`: one key exchange, both sides (g^a, g^b, g_b^a, g_a^b: four constant-time
//   2048-bit exponentiations, plus the range checks and the fingerprint) against four
//   `BN_mod_exp_mont_consttime` calls with precomputed Montgomery contexts.
// * `secret-chat-rekey` (Docs/MTProto.md §7.6): one complete re-key between two `SecretChat.Session`s
//   against the same four exponentiations plus the OpenSSL composition of its four messages.

import Rampart
@_spi(Testing) import RampartMTProto
import RampartMTProtoServer
import RampartReference
import RampartTestSupport


func secretChatMessageRows() -> [Row] {
    var rows: [Row] = []
    let keyBuffer = UnsafeRawBufferPointer(buffer(256))
    let key = try! SecretChat.Key(keyBuffer)
    let keyPtr = keyBuffer.baseAddress!
    let fingerprintBytes = key.fingerprintBytes

    for size in [1024, 65536] {
        let tlRaw = UnsafeRawBufferPointer(buffer(size))  // lives for the whole run
        let tl = Array(tlRaw)
        var rng = SplitMix64(seed: 0x5EC2)
        let data = try! SecretChat.Envelope.encrypt(tl, key: key, sender: .creator, padding: .minimal, using: &rng)

        var encrypt = [Contender(implementation: "rampart") {
            let d = try! SecretChat.Envelope.encrypt(tl, key: key, sender: .creator, padding: .minimal, using: &rng)
            consume(d[d.count - 1])
        }]
        var decrypt = [Contender(implementation: "rampart") {
            let m = try! SecretChat.Envelope.decrypt(data, keys: [key], sender: .creator, allowV1: false)
            consume(m.tl[0])
        }]

        if let sha = OpenSSL.shared?.digestContext("sha256"), let aes = OpenSSLAES.shared,
           let encKey = aes.legacyKey([UInt8](repeating: 0, count: 32), encrypt: true),
           let decKey = aes.legacyKey([UInt8](repeating: 0, count: 32), encrypt: false) {
            let pad = 12 + (16 - (4 + size + 12) % 16) % 16
            let plainLength = 4 + size + pad
            let plain = UnsafeMutableRawPointer.allocate(byteCount: plainLength, alignment: 64)
            let out = UnsafeMutableRawPointer.allocate(byteCount: 24 + plainLength, alignment: 64)
            let scratch = UnsafeMutableRawPointer.allocate(byteCount: 192, alignment: 64)  // large | a | b | key ‖ iv
            let large = scratch, a = scratch + 32, b = scratch + 64, kiv = scratch + 96
            func keyPart(_ o: Int, _ n: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: keyPtr + o, count: n) }
            /// KDF v2 (x = 0) from the msg_key at `mk` into kiv (aes_key ‖ aes_iv).
            func kdf(_ mk: UnsafeRawPointer) {
                let m = UnsafeRawBufferPointer(start: mk, count: 16)
                sha.hash(m, keyPart(0, 36), into: a)
                sha.hash(keyPart(40, 36), m, into: b)
                kiv.copyMemory(from: a, byteCount: 8); (kiv + 8).copyMemory(from: b + 8, byteCount: 16)
                (kiv + 24).copyMemory(from: a + 24, byteCount: 8)
                (kiv + 32).copyMemory(from: b, byteCount: 8); (kiv + 40).copyMemory(from: a + 8, byteCount: 16)
                (kiv + 56).copyMemory(from: b + 24, byteCount: 8)
            }
            let tlPtr = tlRaw.baseAddress!
            encrypt.append(Contender(implementation: "openssl") {
                plain.storeBytes(of: UInt32(size).littleEndian, toByteOffset: 0, as: UInt32.self)
                (plain + 4).copyMemory(from: tlPtr, byteCount: size)
                var i = 0
                while i < pad {
                    var v = rng.next()
                    let k = min(8, pad - i)
                    withUnsafeBytes(of: &v) { (plain + 4 + size + i).copyMemory(from: $0.baseAddress!, byteCount: k) }
                    i += k
                }
                sha.hash(keyPart(88, 32), UnsafeRawBufferPointer(start: plain, count: plainLength), into: large)
                fingerprintBytes.withUnsafeBytes { out.copyMemory(from: $0.baseAddress!, byteCount: 8) }
                (out + 8).copyMemory(from: large + 8, byteCount: 16)
                kdf(large + 8)
                encKey.setKey(kiv, count: 32)
                encKey.ige(UnsafeRawBufferPointer(start: plain, count: plainLength), into: out + 24, iv: kiv + 32)
                consume(out + 24 + plainLength - 1)
            })
            // The composition is right: Rampart opens what it produced.
            encrypt[encrypt.count - 1].op()
            let check = try? SecretChat.Envelope.decrypt(UnsafeRawBufferPointer(start: out, count: 24 + plainLength),
                                                         keys: [key], sender: .creator, allowV1: false)
            if check?.tl != tl { fail("openssl secret-chat composition does not round-trip through Rampart") }

            let n = data.count
            let p = UnsafeMutableRawPointer.allocate(byteCount: n, alignment: 64)  // lives for the whole run
            data.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: n) }
            decrypt.append(Contender(implementation: "openssl") {
                guard n >= 40, (n - 24) % 16 == 0,
                      fingerprintBytes.withUnsafeBytes({ $0.loadUnaligned(as: UInt64.self) }) == p.loadUnaligned(as: UInt64.self)
                else { fail("openssl secret chat: bad data") }
                let len = n - 24
                kdf(p + 8)
                decKey.setKey(kiv, count: 32)
                decKey.ige(UnsafeRawBufferPointer(start: p + 24, count: len), into: plain, iv: kiv + 32)
                sha.hash(keyPart(88, 32), UnsafeRawBufferPointer(start: plain, count: len), into: large)
                var diff: UInt64 = 0
                for j in 0..<2 {
                    diff |= (large + 8).loadUnaligned(fromByteOffset: 8 * j, as: UInt64.self) ^ (p + 8).loadUnaligned(fromByteOffset: 8 * j, as: UInt64.self)
                }
                let l = Int(Int32(bitPattern: UInt32(littleEndian: plain.loadUnaligned(fromByteOffset: 0, as: UInt32.self))))
                let padding = len - 4 - l
                guard diff == 0, l >= 0, l % 4 == 0, padding >= 12, padding <= 1024 else { fail("openssl secret chat: check failed") }
                consume(plain + 4)
            })
        }
        rows.append(Row(operation: "secret-chat-encrypt", size: size, unit: .mbps, contenders: encrypt))
        rows.append(Row(operation: "secret-chat-decrypt", size: size, unit: .mbps, contenders: decrypt))
    }
    return rows
}

func secretChatDHRows() -> [Row] {
    let config = SecretChat.DHConfig.telegram()
    var seed: UInt64 = 7
    var cs = [Contender(implementation: "rampart") {
        seed &+= 1
        var ra = SplitMix64(seed: seed), rb = SplitMix64(seed: ~seed)
        guard let request = try? SecretChat.KeyRequest(config: config, using: &ra),
              let accept = try? SecretChat.KeyAcceptance(gA: request.gA, config: config, using: &rb),
              let key = try? request.complete(gB: accept.gB, keyFingerprint: accept.keyFingerprint)
        else { fail("secret-chat key exchange failed") }
        consume(key.fingerprintBytes[0])
    }]
    if let bn = OpenSSLBN.shared {
        var rng = SplitMix64(seed: 0xD4)
        let p = DiffieHellman.telegramPrime
        let a = randomBytes(count: 256, using: &rng), b = randomBytes(count: 256, using: &rng)
        let m = try! Modulus(p)
        let ga = m.constantTimePower(BigUInt(3), BigUInt(bigEndian: a)).bigEndianBytes()
        let gb = m.constantTimePower(BigUInt(3), BigUInt(bigEndian: b)).bigEndianBytes()
        let pb = p.bigEndianBytes()
        if let p1 = OpenSSLBN.ModExpProblem(bn, base: [3], exponent: a, modulus: pb),
           let p2 = OpenSSLBN.ModExpProblem(bn, base: [3], exponent: b, modulus: pb),
           let p3 = OpenSSLBN.ModExpProblem(bn, base: gb, exponent: a, modulus: pb),
           let p4 = OpenSSLBN.ModExpProblem(bn, base: ga, exponent: b, modulus: pb) {
            cs.append(Contender(implementation: "openssl") { p1.run(); p2.run(); p3.run(); p4.run() })
        }
    }
    return [Row(operation: "secret-chat-dh", size: 0, unit: .opsps, contenders: cs)]
}

/// The OpenSSL composition of one v2 secret-chat message of `size` TL bytes under the key at `keyPtr`
/// (the steps of the `secret-chat-encrypt` / `-decrypt` contenders: EVP SHA-256, KDF v2 with x = 0,
/// legacy `AES_KEY` IGE), with preallocated buffers: `encrypt` writes `out`, `decrypt` opens it and
/// checks msg_key, the length field and the padding bounds.
private final class OpenSSLSecretChatMessage {
    let sha: OpenSSL.DigestContext
    let encKey: OpenSSLAES.LegacyKey, decKey: OpenSSLAES.LegacyKey
    let keyPtr: UnsafeRawPointer, fingerprint: [UInt8]
    let size: Int, pad: Int, plainLength: Int
    let tl: UnsafeMutableRawPointer, plain: UnsafeMutableRawPointer, out: UnsafeMutableRawPointer
    let scratch: UnsafeMutableRawPointer
    var rng = SplitMix64(seed: 0x5EC2)

    init?(size: Int, keyPtr: UnsafeRawPointer, fingerprint: [UInt8]) {
        guard let sha = OpenSSL.shared?.digestContext("sha256"), let aes = OpenSSLAES.shared,
              let e = aes.legacyKey([UInt8](repeating: 0, count: 32), encrypt: true),
              let d = aes.legacyKey([UInt8](repeating: 0, count: 32), encrypt: false) else { return nil }
        self.sha = sha; encKey = e; decKey = d
        self.keyPtr = keyPtr; self.fingerprint = fingerprint
        self.size = size
        pad = 12 + (16 - (4 + size + 12) % 16) % 16
        plainLength = 4 + size + pad
        tl = .allocate(byteCount: size, alignment: 64)
        tl.initializeMemory(as: UInt8.self, repeating: 0x5A, count: size)
        plain = .allocate(byteCount: plainLength, alignment: 64)
        out = .allocate(byteCount: 24 + plainLength, alignment: 64)
        scratch = .allocate(byteCount: 192, alignment: 64)
    }

    private func keyPart(_ o: Int, _ n: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: keyPtr + o, count: n) }

    private func kdf(_ mk: UnsafeRawPointer) {
        let a = scratch + 32, b = scratch + 64, kiv = scratch + 96
        let m = UnsafeRawBufferPointer(start: mk, count: 16)
        sha.hash(m, keyPart(0, 36), into: a)
        sha.hash(keyPart(40, 36), m, into: b)
        kiv.copyMemory(from: a, byteCount: 8); (kiv + 8).copyMemory(from: b + 8, byteCount: 16)
        (kiv + 24).copyMemory(from: a + 24, byteCount: 8)
        (kiv + 32).copyMemory(from: b, byteCount: 8); (kiv + 40).copyMemory(from: a + 8, byteCount: 16)
        (kiv + 56).copyMemory(from: b + 24, byteCount: 8)
    }

    func encrypt() {
        let large = scratch, kiv = scratch + 96
        plain.storeBytes(of: UInt32(size).littleEndian, toByteOffset: 0, as: UInt32.self)
        (plain + 4).copyMemory(from: tl, byteCount: size)
        var i = 0
        while i < pad {
            var v = rng.next()
            let k = min(8, pad - i)
            withUnsafeBytes(of: &v) { (plain + 4 + size + i).copyMemory(from: $0.baseAddress!, byteCount: k) }
            i += k
        }
        sha.hash(keyPart(88, 32), UnsafeRawBufferPointer(start: plain, count: plainLength), into: large)
        fingerprint.withUnsafeBytes { out.copyMemory(from: $0.baseAddress!, byteCount: 8) }
        (out + 8).copyMemory(from: large + 8, byteCount: 16)
        kdf(large + 8)
        encKey.setKey(kiv, count: 32)
        encKey.ige(UnsafeRawBufferPointer(start: plain, count: plainLength), into: out + 24, iv: kiv + 32)
    }

    func decrypt() {
        let large = scratch, kiv = scratch + 96
        let len = plainLength
        guard fingerprint.withUnsafeBytes({ $0.loadUnaligned(as: UInt64.self) }) == out.loadUnaligned(as: UInt64.self)
        else { fail("openssl secret chat: bad fingerprint") }
        kdf(out + 8)
        decKey.setKey(kiv, count: 32)
        decKey.ige(UnsafeRawBufferPointer(start: out + 24, count: len), into: plain, iv: kiv + 32)
        sha.hash(keyPart(88, 32), UnsafeRawBufferPointer(start: plain, count: len), into: large)
        var diff: UInt64 = 0
        for j in 0..<2 {
            diff |= (large + 8).loadUnaligned(fromByteOffset: 8 * j, as: UInt64.self) ^ (out + 8).loadUnaligned(fromByteOffset: 8 * j, as: UInt64.self)
        }
        let l = Int(Int32(bitPattern: UInt32(littleEndian: plain.loadUnaligned(fromByteOffset: 0, as: UInt32.self))))
        let padding = len - 4 - l
        guard diff == 0, l >= 0, l % 4 == 0, padding >= 12, padding <= 1024 else { fail("openssl secret chat: check failed") }
        consume(plain + 4)
    }
}

/// `secret-chat-rekey`: one complete PFS re-key (Docs/MTProto.md §7.6) between two established
/// `SecretChat.Session`s in memory: RequestKey → AcceptKey → CommitKey → Noop, each message encrypted by
/// one side and decrypted by the other (four 2048-bit constant-time exponentiations, the range checks,
/// the fingerprint, four v2 messages of 336, 344, 80 and 64 TL bytes, the TL, sequence numbers and the
/// key switch on both sides). OpenSSL: the same four `BN_mod_exp_mont_consttime` calls and the same
/// four message encryptions and decryptions (the composition of `secret-chat-encrypt`), without TL or
/// state.
func secretChatRekeyRows() -> [Row] {
    let config = SecretChat.DHConfig.telegram()
    var rng = SplitMix64(seed: 0x5EC7)
    let clock: SecretChat.Clock = { 0 }
    var request = try! SecretChat.Session.requesting(config: config, clock: clock, using: &rng)
    let gA = request.gA!
    var accept = SecretChat.Session.requested(gA: gA, clock: clock)
    let (gB, fp) = try! accept.accept(config: config, using: &rng)
    var toA = try! accept.handleEncryptedChat(gAOrB: gA, keyFingerprint: fp, using: &rng)
    var toB = try! request.handleEncryptedChat(gAOrB: gB, keyFingerprint: fp, using: &rng)
    // Settle the NotifyLayers: both sides at layer 144, v2 from here on.
    while !toA.isEmpty || !toB.isEmpty {
        for m in toB { toA += try! accept.receive(m.data, using: &rng).outgoing }
        toB = []
        for m in toA { toB += try! request.receive(m.data, using: &rng).outgoing }
        toA = []
    }
    var a = request, b = accept
    var cs = [Contender(implementation: "rampart") {
        guard let req = try? a.requestRekey(using: &rng),
              let acc = try? b.receive(req.data, using: &rng).outgoing, acc.count == 1,
              let commit = try? a.receive(acc[0].data, using: &rng).outgoing, commit.count == 1,
              let noop = try? b.receive(commit[0].data, using: &rng).outgoing, noop.count == 1,
              let done = try? a.receive(noop[0].data, using: &rng), done.outgoing.isEmpty,
              a.fingerprint == b.fingerprint, !a.isRekeyBusy, !b.isRekeyBusy
        else { fail("secret-chat re-key did not complete") }
        consume(UInt8(truncatingIfNeeded: a.rekeyCount))
    }]
    if let bn = OpenSSLBN.shared {
        var r = SplitMix64(seed: 0xD5)
        let p = DiffieHellman.telegramPrime
        let x = randomBytes(count: 256, using: &r), y = randomBytes(count: 256, using: &r)
        let m = try! Modulus(p)
        let gx = m.constantTimePower(BigUInt(3), BigUInt(bigEndian: x)).bigEndianBytes()
        let gy = m.constantTimePower(BigUInt(3), BigUInt(bigEndian: y)).bigEndianBytes()
        let pb = p.bigEndianBytes()
        let keyBuffer = UnsafeRawBufferPointer(buffer(256))  // lives for the whole run
        let key = try! SecretChat.Key(keyBuffer)
        let messages = [336, 344, 80, 64].compactMap {
            OpenSSLSecretChatMessage(size: $0, keyPtr: keyBuffer.baseAddress!, fingerprint: key.fingerprintBytes)
        }
        if messages.count == 4,
           let p1 = OpenSSLBN.ModExpProblem(bn, base: [3], exponent: x, modulus: pb),
           let p2 = OpenSSLBN.ModExpProblem(bn, base: [3], exponent: y, modulus: pb),
           let p3 = OpenSSLBN.ModExpProblem(bn, base: gy, exponent: x, modulus: pb),
           let p4 = OpenSSLBN.ModExpProblem(bn, base: gx, exponent: y, modulus: pb) {
            // The composition is right: Rampart opens what it produced.
            messages[0].encrypt()
            let sealed = UnsafeRawBufferPointer(start: messages[0].out, count: 24 + messages[0].plainLength)
            if (try? SecretChat.Envelope.decrypt(sealed, keys: [key], sender: .creator, allowV1: false))?.tl.count != 336 {
                fail("openssl secret-chat re-key composition does not round-trip through Rampart")
            }
            cs.append(Contender(implementation: "openssl") {
                p1.run()                                          // RequestKey: g^a
                messages[0].encrypt(); messages[0].decrypt()
                p2.run(); p4.run()                                // AcceptKey: g^b, g_a^b
                messages[1].encrypt(); messages[1].decrypt()
                p3.run()                                          // CommitKey: g_b^a
                messages[2].encrypt(); messages[2].decrypt()
                messages[3].encrypt(); messages[3].decrypt()      // Noop
            })
        }
    }
    return [Row(operation: "secret-chat-rekey", size: 0, unit: .opsps, contenders: cs)]
}

/// `snapshot-secret-chat-seal` and `snapshot-secret-chat-restore` (Docs/Snapshots.md): a chat with
/// 100 keys in its keychain and 1,000 messages the peer has not acknowledged (kept for resends),
/// snapshotted and sealed under a 32-byte key (XChaCha20-Poly1305), and opened and restored; the
/// size column is the unsealed snapshot's length. No reference library has this operation.
func snapshotRows() -> [Row] {
    var rng = SplitMix64(seed: 0x5A95)
    let config = SecretChat.DHConfig.telegram()
    let clock: SecretChat.Clock = { 0 }
    var a = try! SecretChat.Session.requesting(config: config, clock: clock, using: &rng)
    let gA = a.gA!
    var b = SecretChat.Session.requested(gA: gA, clock: clock)
    let (gB, fp) = try! b.accept(config: config, using: &rng)
    let toA = try! b.handleEncryptedChat(gAOrB: gA, keyFingerprint: fp, using: &rng)
    _ = try! a.handleEncryptedChat(gAOrB: gB, keyFingerprint: fp, using: &rng)
    for m in toA { _ = try! a.receive(m.data, using: &rng) }
    for i in 0..<1000 {
        _ = try! a.send(.message(SecretChat.PlainMessage(randomID: Int64(i + 1), message: "message \(i)")), using: &rng)
    }
    a.addKeysForTesting((0..<99).map { _ in try! SecretChat.Key(randomBytes(count: 256, using: &rng)) }, createdAt: 0)
    guard a.keychain.entries.count == 100, a.status.storedCount >= 1000 else {
        fail("snapshot rows: the chat has \(a.keychain.entries.count) keys and \(a.status.storedCount) messages kept")
    }
    let key = SymmetricKey(data: randomBytes(count: 32, using: &rng))
    let size = a.snapshot().count
    let sealed = try! SealedSnapshot.seal(a.snapshot(), key: key, using: &rng)
    let chat = a
    let seal = Contender(implementation: "rampart") {
        let s = try! SealedSnapshot.seal(chat.snapshot(), key: key, using: &rng)
        consume(UInt8(truncatingIfNeeded: s.count))
    }
    let restore = Contender(implementation: "rampart") {
        let opened = try! SealedSnapshot.open(sealed, key: key, type: SecretChat.Session.snapshotType)
        let r = try! SecretChat.Session(restoring: opened, clock: clock)
        consume(UInt8(truncatingIfNeeded: r.generation))
    }
    return [Row(operation: "snapshot-secret-chat-seal", size: size, unit: .opsps, contenders: [seal]),
            Row(operation: "snapshot-secret-chat-restore", size: size, unit: .opsps, contenders: [restore])]
}

/// `snapshot-mtproto-connection-seal` and `-restore` (Docs/Snapshots.md): an MTProto client
/// connection after its handshake with the in-process test server, with 1,000 requests in flight
/// (64-byte queries sent and not answered), snapshotted and sealed under a 32-byte key, and opened
/// and restored (with a new session, as an application restores). The size column is the unsealed
/// snapshot's length.
func connectionSnapshotRows() -> [Row] {
    var keyRNG = SplitMix64(seed: 0x4D43_4F4E)
    guard let rsa = try? RSA.PrivateKey.generate(bits: 2048, using: &keyRNG) else { return [] }
    var conf = TestServer.Configuration(handshake: .init(privateKeys: [rsa], dc: 2))
    conf.rsaLimitPerAddress = nil
    conf.rsaLimitGlobal = nil
    guard var server = try? TestServer(configuration: conf) else { return [] }
    var crng = SplitMix64(seed: 3), srng = SplitMix64(seed: 4)
    let config = ClientHandshake.Configuration(publicKeys: [rsa.publicKey], dc: 2)
    guard var c = try? ClientConnection(transport: .plain(.intermediate), handshake: config, using: &crng),
          var toServer = try? c.start(now: unixNow(), using: &crng) else { fail("snapshot rows: client setup") }
    server.open(1)
    for _ in 0..<4 where !toServer.isEmpty {
        let reply = server.receive(toServer, from: 1, now: unixNow(), using: &srng)
        guard let r = try? c.receive(reply.send, now: unixNow(), using: &crng) else { fail("snapshot rows: handshake") }
        toServer = r.send
    }
    for i in 0..<1000 {
        // A 64-byte query (a constructor and 60 bytes of arguments); sent, never answered.
        let body: [UInt8] = [0x78, 0x97, 0x46, 0x60] + (0..<60).map { UInt8(truncatingIfNeeded: $0 &+ i) }
        guard (try? c.request(body, now: unixNow(), using: &crng)) != nil else { fail("snapshot rows: request \(i)") }
    }
    guard c.session != nil, c.requests.pendingCount == 1000 else { fail("snapshot rows: \(c.requests.pendingCount) requests in flight") }
    var rng = SplitMix64(seed: 5)
    let key = SymmetricKey(data: randomBytes(count: 32, using: &rng))
    let size = c.snapshot().count
    let sealed = try! SealedSnapshot.seal(c.snapshot(), key: key, using: &rng)
    let connection = c
    let seal = Contender(implementation: "rampart") {
        let s = try! SealedSnapshot.seal(connection.snapshot(), key: key, using: &rng)
        consume(UInt8(truncatingIfNeeded: s.count))
    }
    let restore = Contender(implementation: "rampart") {
        let opened = try! SealedSnapshot.open(sealed, key: key, type: ClientConnection.snapshotType)
        let r = try! ClientConnection(restoring: opened, transport: .plain(.intermediate), handshake: config, using: &rng)
        consume(UInt8(truncatingIfNeeded: r.requests.pendingCount))
    }
    return [Row(operation: "snapshot-mtproto-connection-seal", size: size, unit: .opsps, contenders: [seal]),
            Row(operation: "snapshot-mtproto-connection-restore", size: size, unit: .opsps, contenders: [restore])]
}
