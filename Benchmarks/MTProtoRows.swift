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

/// A tiny generator for padding bytes (xorshift64*).
private struct EnvelopeRNG: RandomNumberGenerator {
    var s: UInt64 = 0x2545_F491_4F6C_DD1D
    mutating func next() -> UInt64 {
        s ^= s >> 12; s ^= s << 25; s ^= s >> 27
        return s &* 0x2545_F491_4F6C_DD1D
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
        var rng = EnvelopeRNG()
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

        if let sha = OpenSSL.shared?.digestContext("sha256"), let aes = OpenSSLAES.shared,
           let encKey = aes.legacyKey([UInt8](repeating: 0, count: 32), encrypt: true),
           let decKey = aes.legacyKey([UInt8](repeating: 0, count: 32), encrypt: false) {
            let pad = 12 + (16 - (32 + size + 12) % 16) % 16
            let plainLength = 32 + size + pad
            let plain = UnsafeMutableRawPointer.allocate(byteCount: plainLength, alignment: 64)
            let out = UnsafeMutableRawPointer.allocate(byteCount: 24 + plainLength, alignment: 64)
            let scratch = UnsafeMutableRawPointer.allocate(byteCount: 192, alignment: 64)  // large | a | b | key ‖ iv
            let large = scratch, a = scratch + 32, b = scratch + 64, kiv = scratch + 96
            func key(_ o: Int, _ n: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: keyPtr + o, count: n) }
            /// KDF v2 from the msg_key at `mk` into kiv (aes_key ‖ aes_iv).
            func kdf(_ mk: UnsafeRawPointer, x: Int) {
                let m = UnsafeRawBufferPointer(start: mk, count: 16)
                sha.hash(m, key(x, 36), into: a)
                sha.hash(key(40 + x, 36), m, into: b)
                kiv.copyMemory(from: a, byteCount: 8); (kiv + 8).copyMemory(from: b + 8, byteCount: 16)
                (kiv + 24).copyMemory(from: a + 24, byteCount: 8)
                (kiv + 32).copyMemory(from: b, byteCount: 8); (kiv + 40).copyMemory(from: a + 8, byteCount: 16)
                (kiv + 56).copyMemory(from: b + 24, byteCount: 8)
            }
            do {
                let bodyPtr = bodyRaw.baseAddress!
                /// The OpenSSL composition, its padding from `fillPadding`.
                func opensslEncrypt(_ name: String, _ fillPadding: @escaping (UnsafeMutableRawPointer, Int) -> Void) -> Contender {
                    Contender(implementation: name) {
                        plain.storeBytes(of: UInt64(0x5a5a_5a5a).littleEndian, toByteOffset: 0, as: UInt64.self)
                        plain.storeBytes(of: UInt64(bitPattern: sessionId).littleEndian, toByteOffset: 8, as: UInt64.self)
                        plain.storeBytes(of: UInt64(0x65ab_c0fe_0000_0004).littleEndian, toByteOffset: 16, as: UInt64.self)
                        plain.storeBytes(of: UInt32(1).littleEndian, toByteOffset: 24, as: UInt32.self)
                        plain.storeBytes(of: UInt32(size).littleEndian, toByteOffset: 28, as: UInt32.self)
                        (plain + 32).copyMemory(from: bodyPtr, byteCount: size)
                        fillPadding(plain + 32 + size, pad)
                        sha.hash(key(88, 32), UnsafeRawBufferPointer(start: plain, count: plainLength), into: large)
                        authKeyIdBytes.withUnsafeBytes { out.copyMemory(from: $0.baseAddress!, byteCount: 8) }
                        (out + 8).copyMemory(from: large + 8, byteCount: 16)
                        kdf(large + 8, x: 0)
                        encKey.setKey(kiv, count: 32)
                        encKey.ige(UnsafeRawBufferPointer(start: plain, count: plainLength), into: out + 24, iv: kiv + 32)
                        consume(out + 24 + plainLength - 1)
                    }
                }
                // What an OpenSSL user gets: RAND_bytes for the padding. The extra, with a free
                // xorshift generator, is the composition's bound when randomness costs nothing.
                encrypt.append(opensslEncrypt("openssl") { p, n in _ = OpenSSL.shared?.randBytes(p, n) })
                var fast = EnvelopeRNG()
                encrypt.append(opensslEncrypt("openssl-xorshift-padding") { p, n in
                    var i = 0
                    while i < n {
                        var v = fast.next()
                        let k = min(8, n - i)
                        withUnsafeBytes(of: &v) { (p + i).copyMemory(from: $0.baseAddress!, byteCount: k) }
                        i += k
                    }
                })
                // The composition is right: Rampart accepts what it produced.
                encrypt[encrypt.count - 2].op()
                var window = ReplayWindow()
                let check = try? EncryptedMessage.decrypt(UnsafeRawBufferPointer(start: out, count: 24 + plainLength), authKey: authKey,
                                                          direction: .clientToServer, sessionId: sessionId, replayWindow: &window)
                if check?.body != body { fail("openssl envelope composition does not round-trip through Rampart") }
            }
            do {
                let n = packet.count
                let p = UnsafeMutableRawPointer.allocate(byteCount: n, alignment: 64)  // lives for the whole run
                packet.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: n) }
                decrypt.append(Contender(implementation: "openssl") {
                    guard n >= 72, (n - 24) % 16 == 0,
                          authKeyIdBytes.withUnsafeBytes({ $0.loadUnaligned(as: UInt64.self) }) == p.loadUnaligned(as: UInt64.self)
                    else { fail("openssl envelope: bad packet") }
                    let len = n - 24
                    kdf(p + 8, x: 0)
                    decKey.setKey(kiv, count: 32)
                    decKey.ige(UnsafeRawBufferPointer(start: p + 24, count: len), into: plain, iv: kiv + 32)
                    sha.hash(key(88, 32), UnsafeRawBufferPointer(start: plain, count: len), into: large)
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
                })
            }
        }
        rows.append(Row(operation: "mtproto-encrypt-v2", size: size, unit: .mbps, contenders: encrypt))
        rows.append(Row(operation: "mtproto-decrypt-v2", size: size, unit: .mbps, contenders: decrypt))
    }
    return rows
}
