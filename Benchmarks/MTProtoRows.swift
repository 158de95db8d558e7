// MTProto 2.0 envelope rows: the whole encrypted message (plaintext header, padding, msg_key,
// KDF v2, AES-256-IGE, and on decryption every receiver check), Rampart's `EncryptedMessage`
// against the same envelope composed from OpenSSL calls: EVP SHA-256 (two updates per hash, nothing
// concatenated) and the legacy `AES_set_*_key` + `AES_ige_encrypt`, as MtProtoKit does it.
//
// Both sides pad minimally (12-27 bytes, random bytes) so every call does the same work, each drawing
// the padding from its own library's generator (Rampart's SecureRandom, OpenSSL's RAND_bytes). The
// OpenSSL composition reuses preallocated buffers and one AES_KEY (no allocation at all) and IGE
// runs out of place (its fast path); Rampart allocates its output array per call as a user sees it.

import Rampart
import RampartMTProto
import RampartReference
import RampartTestSupport

/// Fills `n` bytes at `p` from the shared seeded generator, eight bytes a draw (padding that costs
/// next to nothing).
private func fill(_ g: inout SplitMix64, _ p: UnsafeMutableRawPointer, _ n: Int) {
    var i = 0
    while i < n {
        var v = g.next()
        let k = min(8, n - i)
        withUnsafeBytes(of: &v) { (p + i).copyMemory(from: $0.baseAddress!, byteCount: k) }
        i += k
    }
}

/// The envelope composed from OpenSSL calls, as MtProtoKit does it: EVP SHA-256 with two updates per
/// hash (nothing concatenated), the legacy `AES_set_*_key` + `AES_ige_encrypt`, preallocated buffers
/// and one AES_KEY per direction (no allocation per call), IGE out of place (its fast path). Messages
/// of one body size; each call names its auth key (256 bytes).
private final class OpenSSLEnvelope {
    let sha: OpenSSL.DigestContext
    let encKey: OpenSSLAES.LegacyKey, decKey: OpenSSLAES.LegacyKey
    let size: Int, pad: Int, plainLength: Int
    let plain: UnsafeMutableRawPointer, out: UnsafeMutableRawPointer
    let large: UnsafeMutableRawPointer, a: UnsafeMutableRawPointer, b: UnsafeMutableRawPointer, kiv: UnsafeMutableRawPointer

    init?(size: Int) {
        guard let sha = OpenSSL.shared?.digestContext("sha256"), let aes = OpenSSLAES.shared,
              let encKey = aes.legacyKey([UInt8](repeating: 0, count: 32), encrypt: true),
              let decKey = aes.legacyKey([UInt8](repeating: 0, count: 32), encrypt: false) else { return nil }
        self.sha = sha
        self.encKey = encKey
        self.decKey = decKey
        self.size = size
        pad = 12 + (16 - (32 + size + 12) % 16) % 16
        plainLength = 32 + size + pad
        plain = UnsafeMutableRawPointer.allocate(byteCount: plainLength, alignment: 64)
        out = UnsafeMutableRawPointer.allocate(byteCount: 24 + plainLength, alignment: 64)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: 192, alignment: 64)  // large | a | b | key ‖ iv
        large = scratch; a = scratch + 32; b = scratch + 64; kiv = scratch + 96
    }

    /// KDF v2 from the msg_key at `mk` into kiv (aes_key ‖ aes_iv).
    func kdf(_ authKey: UnsafeRawPointer, _ mk: UnsafeRawPointer, x: Int) {
        func key(_ o: Int, _ n: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: authKey + o, count: n) }
        let m = UnsafeRawBufferPointer(start: mk, count: 16)
        sha.hash(m, key(x, 36), into: a)
        sha.hash(key(40 + x, 36), m, into: b)
        kiv.copyMemory(from: a, byteCount: 8); (kiv + 8).copyMemory(from: b + 8, byteCount: 16)
        (kiv + 24).copyMemory(from: a + 24, byteCount: 8)
        (kiv + 32).copyMemory(from: b, byteCount: 8); (kiv + 40).copyMemory(from: a + 8, byteCount: 16)
        (kiv + 56).copyMemory(from: b + 24, byteCount: 8)
    }

    /// One client→server message of `size` body bytes into `out`, its padding from `fillPadding`.
    func encrypt(authKey: UnsafeRawPointer, authKeyId: [UInt8], body: UnsafeRawPointer, sessionId: Int64,
                 fillPadding: (UnsafeMutableRawPointer, Int) -> Void) {
        plain.storeBytes(of: UInt64(0x5a5a_5a5a).littleEndian, toByteOffset: 0, as: UInt64.self)
        plain.storeBytes(of: UInt64(bitPattern: sessionId).littleEndian, toByteOffset: 8, as: UInt64.self)
        plain.storeBytes(of: UInt64(0x65ab_c0fe_0000_0004).littleEndian, toByteOffset: 16, as: UInt64.self)
        plain.storeBytes(of: UInt32(1).littleEndian, toByteOffset: 24, as: UInt32.self)
        plain.storeBytes(of: UInt32(size).littleEndian, toByteOffset: 28, as: UInt32.self)
        (plain + 32).copyMemory(from: body, byteCount: size)
        fillPadding(plain + 32 + size, pad)
        sha.hash(UnsafeRawBufferPointer(start: authKey + 88, count: 32), UnsafeRawBufferPointer(start: plain, count: plainLength), into: large)
        authKeyId.withUnsafeBytes { out.copyMemory(from: $0.baseAddress!, byteCount: 8) }
        (out + 8).copyMemory(from: large + 8, byteCount: 16)
        kdf(authKey, large + 8, x: 0)
        encKey.setKey(kiv, count: 32)
        encKey.ige(UnsafeRawBufferPointer(start: plain, count: plainLength), into: out + 24, iv: kiv + 32)
        consume(out + 24 + plainLength - 1)
    }

    /// Decrypts and checks a client→server packet (every receiver check) into `plain`.
    func decrypt(authKey: UnsafeRawPointer, authKeyId: [UInt8], packet p: UnsafeRawPointer, count n: Int, sessionId: Int64) {
        guard n >= 72, (n - 24) % 16 == 0,
              authKeyId.withUnsafeBytes({ $0.loadUnaligned(as: UInt64.self) }) == p.loadUnaligned(as: UInt64.self)
        else { fail("openssl envelope: bad packet") }
        let len = n - 24
        kdf(authKey, p + 8, x: 0)
        decKey.setKey(kiv, count: 32)
        decKey.ige(UnsafeRawBufferPointer(start: p + 24, count: len), into: plain, iv: kiv + 32)
        sha.hash(UnsafeRawBufferPointer(start: authKey + 88, count: 32), UnsafeRawBufferPointer(start: plain, count: len), into: large)
        var diff: UInt64 = 0
        for j in 0..<2 {
            diff |= (large + 8).loadUnaligned(fromByteOffset: 8 * j, as: UInt64.self) ^ (p + 8).loadUnaligned(fromByteOffset: 8 * j, as: UInt64.self)
        }
        let l = Int(Int32(bitPattern: UInt32(littleEndian: plain.loadUnaligned(fromByteOffset: 28, as: UInt32.self))))
        let padding = len - 32 - l
        let sid = Int64(bitPattern: UInt64(littleEndian: plain.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        let mid = UInt64(littleEndian: plain.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        guard diff == 0, l >= 0, l % 4 == 0, padding >= 12, padding <= 1024, sid == sessionId, mid & 3 == 0 else {
            fail("openssl envelope: check failed")
        }
        consume(plain + 32)
    }
}

func mtprotoEnvelopeRows() -> [Row] {
    var rows: [Row] = []
    let keyBuffer = UnsafeRawBufferPointer(buffer(256))
    let authKey = try! AuthKey(keyBuffer)
    let keyPtr = keyBuffer.baseAddress!
    let authKeyIdBytes = authKey.idBytes
    let sessionId: Int64 = 0x0123_4567_89ab_cdef
    let header = MessageHeader(salt: 0x5a5a_5a5a, sessionId: sessionId, msgId: 0x65ab_c0fe_0000_0004, seqNo: 1)

    for size in [1024, 16384] {
        let bodyRaw = UnsafeRawBufferPointer(buffer(size))  // lives for the whole run
        let body = Array(bodyRaw)
        var rng = SplitMix64(seed: 0x2545_F491_4F6C_DD1D)
        // A valid client→server packet for the decryption rows.
        let packet = try! EncryptedMessage.encrypt(body: body, header: header, authKey: authKey, direction: .clientToServer,
                                                   padding: .minimal, using: &rng).packet

        // Each side draws its padding from the generator its users get: Rampart's SecureRandom, and
        // OpenSSL's RAND_bytes.
        var secure = SecureRandom()
        var encrypt = [Contender(implementation: "rampart") {
            let p = try! EncryptedMessage.encrypt(body: body, header: header, authKey: authKey, direction: .clientToServer,
                                                  padding: .minimal, using: &secure).packet
            consume(p[p.count - 1])
        }]
        var decrypt = [Contender(implementation: "rampart") {
            var window = ReplayWindow(capacity: 1)
            let m = try! EncryptedMessage.decrypt(packet, authKey: authKey, direction: .clientToServer, sessionId: sessionId,
                                                  replayWindow: &window)
            consume(m.body[0])
        }]

        if let env = OpenSSLEnvelope(size: size) {
            do {
                // What an OpenSSL user gets: RAND_bytes for the padding. The extra, with the seeded
                // SplitMix64 generator (nearly free), is the composition's bound when randomness costs nothing.
                encrypt.append(Contender(implementation: "openssl") {
                    env.encrypt(authKey: keyPtr, authKeyId: authKeyIdBytes, body: bodyRaw.baseAddress!, sessionId: sessionId) { p, n in
                        _ = OpenSSL.shared?.randBytes(p, n)
                    }
                })
                var fast = SplitMix64(seed: 0x2545_F491_4F6C_DD1D)
                encrypt.append(Contender(implementation: "openssl-splitmix-padding") {
                    env.encrypt(authKey: keyPtr, authKeyId: authKeyIdBytes, body: bodyRaw.baseAddress!, sessionId: sessionId) { p, n in
                        fill(&fast, p, n)
                    }
                })
                // The composition is right: Rampart accepts what it produced.
                encrypt[encrypt.count - 2].op()
                var window = ReplayWindow()
                let check = try? EncryptedMessage.decrypt(UnsafeRawBufferPointer(start: env.out, count: 24 + env.plainLength), authKey: authKey,
                                                          direction: .clientToServer, sessionId: sessionId, replayWindow: &window)
                if check?.body != body { fail("openssl envelope composition does not round-trip through Rampart") }
            }
            do {
                let n = packet.count
                let p = UnsafeMutableRawPointer.allocate(byteCount: n, alignment: 64)  // lives for the whole run
                packet.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: n) }
                decrypt.append(Contender(implementation: "openssl") {
                    env.decrypt(authKey: keyPtr, authKeyId: authKeyIdBytes, packet: p, count: n, sessionId: sessionId)
                })
            }
        }
        rows.append(Row(operation: "mtproto-encrypt-v2", size: size, unit: .mbps, contenders: encrypt))
        rows.append(Row(operation: "mtproto-decrypt-v2", size: size, unit: .mbps, contenders: decrypt))
    }
    return rows
}

/// `mtproto-encrypt-batch-v2`: 64 messages of 1 KiB under 64 different auth keys, what a server pushing
/// one update to 64 clients encrypts. Rampart's batch call (multi-buffer SHA-256 and IGE) against the
/// OpenSSL composition run 64 times; the extra `rampart-one-by-one` is the single-message call 64
/// times (the `mtproto-encrypt-v2` 1 KiB row's operation), so the row shows the batch's gain itself.
/// The size column is the bytes of message_data per operation (64 × 1024).
func mtprotoBatchRows() -> [Row] {
    let messages = 64, size = 1024
    let keyBytes = UnsafeRawBufferPointer(buffer(256 * messages))
    let keys = (0..<messages).map { try! AuthKey(UnsafeRawBufferPointer(rebasing: keyBytes[256 * $0 ..< 256 * ($0 + 1)])) }
    let bodyRaw = UnsafeRawBufferPointer(buffer(size))
    let body = Array(bodyRaw)
    let items = (0..<messages).map { i in
        EncryptedMessage.BatchItem(body: body, header: MessageHeader(salt: 0x5a5a_5a5a, sessionId: Int64(i + 1), msgId: 0x65ab_c0fe_0000_0004,
                                                                     seqNo: 1),
                                   authKey: keys[i], direction: .clientToServer, padding: .minimal)
    }
    var secure = SecureRandom()
    // The batch is right: every packet decrypts under its own key.
    let check = try! EncryptedMessage.encrypt(batch: items, using: &secure)
    for (i, c) in check.enumerated() {
        var window = ReplayWindow()
        let m = try? EncryptedMessage.decrypt(c.packet, authKey: keys[i], direction: .clientToServer, sessionId: Int64(i + 1),
                                              replayWindow: &window)
        if m?.body != body { fail("mtproto batch: packet \(i) does not decrypt") }
    }
    var contenders = [Contender(implementation: "rampart") {
        let out = try! EncryptedMessage.encrypt(batch: items, using: &secure)
        consume(out[messages - 1].packet[0])
    }]
    contenders.append(Contender(implementation: "rampart-one-by-one") {
        for it in items {
            let p = try! EncryptedMessage.encrypt(body: it.body, header: it.header, authKey: it.authKey, direction: .clientToServer,
                                                  padding: .minimal, using: &secure).packet
            consume(p[p.count - 1])
        }
    })
    if let env = OpenSSLEnvelope(size: size) {
        let ids = keys.map(\.idBytes)
        contenders.append(Contender(implementation: "openssl") {
            for i in 0..<messages {
                env.encrypt(authKey: keyBytes.baseAddress! + 256 * i, authKeyId: ids[i], body: bodyRaw.baseAddress!, sessionId: Int64(i + 1)) { p, n in
                    _ = OpenSSL.shared?.randBytes(p, n)
                }
            }
        })
    }
    return [Row(operation: "mtproto-encrypt-batch-v2", size: messages * size, unit: .mbps, contenders: contenders)]
}

/// `aes256-ige-lanes`: the multi-buffer IGE kernel under the batch row, 64 independent 1 KiB messages
/// under 64 keys per operation, against the single-message kernel over the same 64 messages.
func multiBufferRows() -> [Row] {
    let messages = 64, size = 1024
    let data = buffer(messages * size)
    let keys = UnsafeRawBufferPointer(buffer(32 * messages))
    let ivs = UnsafeMutableRawPointer.allocate(byteCount: 32 * messages, alignment: 16)
    let igeJobs = (0..<messages).map { i in
        MultiBuffer.IGEJob(key: keys.baseAddress! + 32 * i, iv: ivs + 32 * i, data: data.baseAddress! + size * i, blocks: size / 16)
    }
    let ige = [Contender(implementation: "rampart") {
        igeJobs.withUnsafeBufferPointer { MultiBuffer.igeEncrypt($0) }
        consume(data[0])
    }, Contender(implementation: "rampart-one-by-one") {
        for j in igeJobs { AES.IGE.encrypt(j.data, blocks: j.blocks, key256: j.key, iv: j.iv) }
        consume(data[0])
    }]
    return [Row(operation: "aes256-ige-lanes", size: messages * size, unit: .mbps, contenders: ige)]
}
