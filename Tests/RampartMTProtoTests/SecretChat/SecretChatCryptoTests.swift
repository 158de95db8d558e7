// The secret-chat cryptographic core (Docs/MTProto.md §7.2, §7.3, §7.7): the vectors of
// Vectors/mtproto/secret_chat.json (§10.D4, §10.D5 and our own S*), round trips for both sides, v1,
// tampering, wrong keys, lying length fields, random input, and the DH checks of §4.

import Foundation
import Testing
@testable import RampartMTProto
import Rampart
import RampartTestSupport

/// The cases of Vectors/mtproto/secret_chat.json, always present in a clone.
nonisolated(unsafe) let scVectorCases: [[String: Any]] = {
    let path = projectRoot + "/Vectors/mtproto/secret_chat.json"
    guard let d = FileManager.default.contents(atPath: path),
          let o = try? JSONSerialization.jsonObject(with: d) as? [String: Any],
          let cases = o["cases"] as? [[String: Any]] else { return [] }
    return cases
}()

func scIds(_ type: String) -> [String] {
    scVectorCases.filter { $0["type"] as? String == type }.compactMap { $0["id"] as? String }
}

func scCase(_ id: String) -> [String: Any] { scVectorCases.first { $0["id"] as? String == id } ?? [:] }

func scHex(_ c: [String: Any], _ k: String) -> [UInt8] { hexBytes(((c[k] as? String) ?? "").lowercased()) }

/// A random chat key from `seed`.
func scRandomKey(_ seed: UInt64) -> SecretChat.Key {
    var g = SplitMix64(seed: seed)
    return try! SecretChat.Key(randomBytes(count: 256, using: &g))
}

/// A TL-sized (multiple of 4) random payload.
func scPayload(_ words: Int, seed: UInt64) -> [UInt8] {
    var g = SplitMix64(seed: seed)
    return randomBytes(count: 4 * words, using: &g)
}

@Suite struct SecretChatCryptoTests {
    // MARK: Vectors

    @Test func vectorFileIsComplete() {
        #expect(scIds("message-v2").count >= 2)
        #expect(scIds("message-v1").count >= 1)
        #expect(scIds("key-exchange").count >= 1)
        #expect(scIds("file").count >= 3)
    }

    @Test(arguments: scIds("message-v2"))
    func v2Vector(_ id: String) throws {
        let c = scCase(id)
        let key = try SecretChat.Key(scHex(c, "key"))
        let sender: SecretChat.Side = c["sender"] as? String == "creator" ? .creator : .acceptor
        let tl = scHex(c, "tl"), data = scHex(c, "data")
        #expect(key.fingerprintBytes == scHex(c, "key_fingerprint_wire"))
        #expect(MessageKey.v2(authKey: key.auth, plaintext: scHex(c, "plaintext"), direction: sender.direction) == scHex(c, "msg_key"))
        let kdf = try MessageKDF.v2(authKey: key.auth, messageKey: scHex(c, "msg_key"), direction: sender.direction)
        #expect(kdf.key == scHex(c, "aes_key") && kdf.iv == scHex(c, "aes_iv"))
        // Decrypt, with the sender's x.
        let opened = try SecretChat.Envelope.decrypt(data, keys: [key], sender: sender, allowV1: false)
        #expect(opened.tl == tl && opened.version == .v2 && opened.key == key)
        // The reader's own x (the wrong one) fails.
        #expect(throws: SecretChatError.rejectedMessage) {
            try SecretChat.Envelope.decrypt(data, keys: [key], sender: sender.peer, allowV1: true)
        }
        // Encrypt byte for byte when the padding is the minimal length (the padding bytes replayed).
        let pad = scHex(c, "padding")
        var probe = SplitMix64(seed: 0)
        if PaddingPolicy.minimal.paddingLength(bodyLength: 4 + tl.count, using: &probe) == pad.count {
            var rng = ReplayRNG(pad)
            #expect(try SecretChat.Envelope.encrypt(tl, key: key, sender: sender, padding: .minimal, using: &rng) == data)
        }
    }

    @Test(arguments: scIds("message-v1"))
    func v1Vector(_ id: String) throws {
        let c = scCase(id)
        let key = try SecretChat.Key(scHex(c, "key"))
        let tl = scHex(c, "tl"), data = scHex(c, "data")
        #expect(MessageKey.v1(plaintext: scHex(c, "plaintext").prefix(4 + tl.count)) == scHex(c, "msg_key"))
        var rng = ReplayRNG(scHex(c, "padding"))
        #expect(try SecretChat.Envelope.encryptV1(tl, key: key, using: &rng) == data)
        // v1 ignores the side (x = 0 both ways) and needs allowV1.
        for side in [SecretChat.Side.creator, .acceptor] {
            let opened = try SecretChat.Envelope.decrypt(data, keys: [key], sender: side, allowV1: true)
            #expect(opened.tl == tl && opened.version == .v1)
            #expect(throws: SecretChatError.rejectedMessage) {
                try SecretChat.Envelope.decrypt(data, keys: [key], sender: side, allowV1: false)
            }
        }
    }

    @Test(arguments: scIds("key-exchange"))
    func keyExchangeVector(_ id: String) throws {
        let c = scCase(id)
        let config = SecretChat.DHConfig.telegram()
        #expect(Int(config.g) == c["g"] as? Int)
        var rngA = ReplayRNG(scHex(c, "a_local"))
        let request = try SecretChat.KeyRequest(config: config, serverRandom: scHex(c, "a_server_random"), using: &rngA)
        #expect(request.gA == scHex(c, "g_a"))
        var rngB = ReplayRNG(scHex(c, "b_local"))
        let acceptance = try SecretChat.KeyAcceptance(gA: request.gA, config: config,
                                                      serverRandom: scHex(c, "b_server_random"), using: &rngB)
        #expect(acceptance.gB == scHex(c, "g_b"))
        let fp = Int64((c["key_fingerprint"] as! NSNumber).int64Value)
        #expect(acceptance.keyFingerprint == fp)
        #expect(acceptance.key == (try SecretChat.Key(scHex(c, "key"))))
        let key = try request.complete(gB: acceptance.gB, keyFingerprint: acceptance.keyFingerprint)
        #expect(key == acceptance.key && key.fingerprint == fp)
        #expect(throws: SecretChatError.fingerprintMismatch) {
            try request.complete(gB: acceptance.gB, keyFingerprint: fp ^ 1)
        }
    }

    @Test(arguments: scIds("file"))
    func fileVector(_ id: String) throws {
        let c = scCase(id)
        let fk = try SecretChat.FileKey(key: scHex(c, "key"), iv: scHex(c, "iv"))
        #expect(Int(fk.fingerprint) == (c["key_fingerprint"] as! NSNumber).intValue)
        #expect(Insecure.MD5.hash(data: scHex(c, "key") + scHex(c, "iv")).bytes == scHex(c, "md5"))
        let plain = scHex(c, "plaintext"), ct = scHex(c, "ciphertext")
        #expect(fk.encrypt(plain) == ct)
        #expect(try fk.decrypt(ct, size: plain.count) == plain)
    }

    // MARK: Round trips

    @Test(arguments: [SecretChat.Side.creator, .acceptor])
    func roundTripsBothSides(_ sender: SecretChat.Side) throws {
        var rng = SplitMix64(seed: 73)
        let key = scRandomKey(1)
        for words in [0, 1, 3, 4, 13, 64, 255, 1024, 16384] {
            let tl = scPayload(words, seed: UInt64(words))
            for policy in [PaddingPolicy.minimal, .random, .buckets] {
                let data = try SecretChat.Envelope.encrypt(tl, key: key, sender: sender, padding: policy, using: &rng)
                #expect(Array(data[0..<8]) == key.fingerprintBytes)
                let pad = data.count - 24 - 4 - tl.count
                #expect(pad >= 12 && pad <= 1024 && (data.count - 24) % 16 == 0)
                let opened = try SecretChat.Envelope.decrypt(data, keys: [key], sender: sender, allowV1: true)
                #expect(opened.tl == tl && opened.version == .v2)
                // x follows the author: the other side's x never opens it.
                #expect(throws: SecretChatError.rejectedMessage) {
                    try SecretChat.Envelope.decrypt(data, keys: [key], sender: sender.peer, allowV1: true)
                }
            }
            let d1 = try SecretChat.Envelope.encryptV1(tl, key: key, using: &rng)
            #expect((d1.count - 24) - (4 + tl.count) <= 15)
            #expect(try SecretChat.Envelope.decrypt(d1, keys: [key], sender: sender, allowV1: true).tl == tl)
        }
    }

    @Test func fullExchangeThenMessagesBothWays() throws {
        var rng = SplitMix64(seed: 46)
        let config = SecretChat.DHConfig.telegram()
        let request = try SecretChat.KeyRequest(config: config, serverRandom: randomBytes(count: 256, using: &rng), using: &rng)
        let accept = try SecretChat.KeyAcceptance(gA: request.gA, config: config, using: &rng)
        let creatorKey = try request.complete(gB: accept.gB, keyFingerprint: accept.keyFingerprint)
        let participantKey = accept.key
        let hello = scPayload(20, seed: 5)
        let c2p = try SecretChat.Envelope.encrypt(hello, key: creatorKey, sender: .creator, using: &rng)
        #expect(try SecretChat.Envelope.decrypt(c2p, keys: [participantKey], sender: .creator, allowV1: false).tl == hello)
        let p2c = try SecretChat.Envelope.encrypt(hello, key: participantKey, sender: .acceptor, using: &rng)
        #expect(try SecretChat.Envelope.decrypt(p2c, keys: [creatorKey], sender: .acceptor, allowV1: false).tl == hello)
    }

    @Test func candidateKeysAreChosenByFingerprint() throws {
        var rng = SplitMix64(seed: 6)
        let old = scRandomKey(10), new = scRandomKey(11), other = scRandomKey(12)
        let tl = scPayload(9, seed: 9)
        let underOld = try SecretChat.Envelope.encrypt(tl, key: old, sender: .creator, using: &rng)
        let underNew = try SecretChat.Envelope.encrypt(tl, key: new, sender: .creator, using: &rng)
        #expect(try SecretChat.Envelope.decrypt(underOld, keys: [new, old], sender: .creator, allowV1: false).key == old)
        #expect(try SecretChat.Envelope.decrypt(underNew, keys: [new, old], sender: .creator, allowV1: false).key == new)
        for keys in [[other], [], [new]] {
            #expect(throws: SecretChatError.rejectedMessage) {
                try SecretChat.Envelope.decrypt(underOld, keys: keys, sender: .creator, allowV1: true)
            }
        }
        // The right fingerprint in front of a message under another key: the msg_key check refuses it.
        var forged = underNew
        forged.replaceSubrange(0..<8, with: old.fingerprintBytes)
        #expect(throws: SecretChatError.rejectedMessage) {
            try SecretChat.Envelope.decrypt(forged, keys: [old], sender: .creator, allowV1: true)
        }
    }

    // MARK: Bad input

    @Test(arguments: [SecretChat.Envelope.Version.v2, .v1])
    func everyFlippedByteIsRejected(_ version: SecretChat.Envelope.Version) throws {
        var rng = SplitMix64(seed: 99)
        let key = scRandomKey(2)
        let tl = scPayload(11, seed: 3)
        let data = version == .v2
            ? try SecretChat.Envelope.encrypt(tl, key: key, sender: .acceptor, using: &rng)
            : try SecretChat.Envelope.encryptV1(tl, key: key, using: &rng)
        for i in 0..<data.count {
            for bit in [0, 7] {
                var t = data
                t[i] ^= UInt8(1 << bit)
                #expect(throws: SecretChatError.rejectedMessage, "byte \(i) bit \(bit)") {
                    try SecretChat.Envelope.decrypt(t, keys: [key], sender: .acceptor, allowV1: true)
                }
            }
        }
        // Truncations and extensions.
        for n in [0, 8, 23, 24, 39, data.count - 16, data.count - 1] where n < data.count {
            #expect(throws: SecretChatError.rejectedMessage) {
                try SecretChat.Envelope.decrypt(Array(data.prefix(n)), keys: [key], sender: .acceptor, allowV1: true)
            }
        }
        #expect(throws: SecretChatError.rejectedMessage) {
            try SecretChat.Envelope.decrypt(data + [UInt8](repeating: 0, count: 16), keys: [key], sender: .acceptor, allowV1: true)
        }
    }

    /// Messages correctly authenticated (right msg_key) whose length field lies are refused.
    @Test func lyingLengthFieldsAreRejected() throws {
        let key = scRandomKey(4)
        // v2: (plaintext length, length field) pairs that break one rule each.
        let v2Cases: [(Int, Int32)] = [
            (64, 46),        // not a multiple of 4
            (64, 49),        // not a multiple of 4
            (64, 52),        // padding 8 < 12
            (64, 64),        // longer than the plaintext
            (64, 1000),      // far beyond
            (64, -4),        // negative
            (64, Int32.min), // negative
            (1088, 0),       // padding 1084 > 1024
        ]
        for (plainLength, field) in v2Cases {
            var g = SplitMix64(seed: UInt64(plainLength) &+ UInt64(UInt32(bitPattern: field)))
            var data = [UInt8](repeating: 0, count: 24 + plainLength)
            data.withUnsafeMutableBytes { b in
                let o = b.baseAddress!
                fillRandom(UnsafeMutableRawBufferPointer(start: o + 24, count: plainLength), using: &g)
                (o + 24).storeBytes(of: UInt32(bitPattern: field).littleEndian, as: UInt32.self)
                _ = EncryptedMessage.seal(o, plainLength: plainLength, authKey: key.auth, x: 0)
            }
            #expect(throws: SecretChatError.rejectedMessage, "v2 length \(field) in \(plainLength)") {
                try SecretChat.Envelope.decrypt(data, keys: [key], sender: .creator, allowV1: true)
            }
        }
        // The same construction with a true length opens (the harness is right).
        var data = [UInt8](repeating: 0, count: 24 + 64)
        data.withUnsafeMutableBytes { b in
            (b.baseAddress! + 24).storeBytes(of: UInt32(48).littleEndian, as: UInt32.self)
            _ = EncryptedMessage.seal(b.baseAddress!, plainLength: 64, authKey: key.auth, x: 0)
        }
        #expect(try SecretChat.Envelope.decrypt(data, keys: [key], sender: .creator, allowV1: false).tl.count == 48)
        // v1: msg_key over length ‖ data, but the padding would be 16 or more (or the field lies).
        for (plainLength, field) in [(64, 44), (64, 0), (64, 62), (64, 64), (64, -8)] as [(Int, Int32)] {
            var d = [UInt8](repeating: 0, count: 24 + plainLength)
            d.withUnsafeMutableBytes { b in
                let o = b.baseAddress!, pt = o + 24
                pt.storeBytes(of: UInt32(bitPattern: field).littleEndian, as: UInt32.self)
                let covered = max(0, min(plainLength, 4 + Int(field)))
                let h = Insecure.SHA1.hash(bufferPointer: UnsafeRawBufferPointer(start: pt, count: covered))
                h.withUnsafeBytes { (o + 8).copyMemory(from: $0.baseAddress! + 4, byteCount: 16) }
                o.storeBytes(of: key.auth.id.littleEndian, as: UInt64.self)
                SecretChat.Envelope.v1Cipher(key, msgKey: o + 8, pt, blocks: plainLength / 16, encrypt: true)
            }
            #expect(throws: SecretChatError.rejectedMessage, "v1 length \(field)") {
                try SecretChat.Envelope.decrypt(d, keys: [key], sender: .creator, allowV1: true)
            }
        }
    }

    @Test func randomBytesNeverTrap() {
        var g = SplitMix64(seed: 0x5EC2E7)
        let key = scRandomKey(5)
        for i in 0..<3000 {
            var data = randomBytes(count: Int.random(in: 0...200, using: &g), using: &g)
            // Half of them carry the key's fingerprint, so they reach the decryption.
            if i % 2 == 0, data.count >= 8 { data.replaceSubrange(0..<8, with: key.fingerprintBytes) }
            #expect(throws: SecretChatError.rejectedMessage) {
                try SecretChat.Envelope.decrypt(data, keys: [key, key], sender: i % 3 == 0 ? .creator : .acceptor, allowV1: true)
            }
        }
    }

    @Test func outgoingLimits() throws {
        var rng = SplitMix64(seed: 1)
        let key = scRandomKey(6)
        #expect(throws: SecretChatError.invalidPlaintext("serialized TL length 5 is not a multiple of 4")) {
            try SecretChat.Envelope.encrypt([1, 2, 3, 4, 5], key: key, sender: .creator, using: &rng)
        }
        #expect(throws: SecretChatError.self) { try SecretChat.Envelope.encryptV1([1, 2], key: key, using: &rng) }
        #expect(throws: SecretChatError.invalidKey) { try SecretChat.Key([UInt8](repeating: 1, count: 255)) }
        #expect(throws: SecretChatError.invalidKey) { try SecretChat.FileKey(key: [UInt8](repeating: 1, count: 31), iv: [UInt8](repeating: 1, count: 32)) }
    }

    // MARK: Key exchange checks (Docs/MTProto.md §4)

    @Test func dhConfigChecks() throws {
        var rng = SplitMix64(seed: 2)
        let p = DiffieHellman.telegramPrime.bigEndianBytes()
        // Telegram's prime: g = 3, 4, 7 pass; 2, 5, 6 fail the residue rule; 1, 8 are not allowed.
        for g: Int32 in [3, 4, 7] { _ = try SecretChat.DHConfig(g: g, prime: p, version: 1, using: &rng) }
        for g: Int32 in [2, 5, 6, 1, 8, 0, -3] {
            #expect(throws: SecretChatError.self, "g = \(g)") { try SecretChat.DHConfig(g: g, prime: p, version: 1, using: &rng) }
        }
        // Not 2048 bits, not 256 bytes, not a safe prime.
        #expect(throws: SecretChatError.self) { try SecretChat.DHConfig(g: 3, prime: Array(p.dropFirst()), version: 1, using: &rng) }
        #expect(throws: SecretChatError.self) { try SecretChat.DHConfig(g: 3, prime: [0] + p.dropFirst(), version: 1, using: &rng) }
        var notSafe = p
        notSafe[255] ^= 0x10  // still odd, still 2048 bits, p mod 3 unchanged? the test decides
        #expect(throws: SecretChatError.self) { try SecretChat.DHConfig(g: 4, prime: notSafe, version: 1, rounds: 8, using: &rng) }
        // The cache: same version → the cached value; a new version is checked; notModified needs one.
        var cache = SecretChat.DHConfigCache()
        #expect(cache.version == 0)
        #expect(throws: SecretChatError.self) { try cache.notModified() }
        _ = try cache.update(g: 3, prime: p, version: 7, using: &rng)
        let cached = try cache.notModified()
        #expect(cache.version == 7 && cached.version == 7)
        #expect(throws: SecretChatError.self) { try cache.update(g: 2, prime: p, version: 8, using: &rng) }
        #expect(cache.version == 7)
    }

    @Test func publicValueRanges() throws {
        var rng = SplitMix64(seed: 3)
        let config = SecretChat.DHConfig.telegram()
        let p = DiffieHellman.telegramPrime
        let bound = BigUInt(1) << 1984
        func bytes(_ v: BigUInt) -> [UInt8] { v.bigEndianBytes() }
        let bad: [[UInt8]] = [
            [], [1], [2], bytes(bound.subtracting(BigUInt(1))!), bytes(p.subtracting(BigUInt(1))!), bytes(p),
            bytes(p.subtracting(bound)! + BigUInt(1)), [UInt8](repeating: 0xFF, count: 256), [0] + bytes(p),
            [UInt8](repeating: 0x01, count: 257),
        ]
        for v in bad {
            #expect(throws: SecretChatError.self) { _ = try config.checkPublicValue(v) }
            #expect(throws: SecretChatError.self) { try SecretChat.KeyAcceptance(gA: v, config: config, using: &rng) }
        }
        _ = try config.checkPublicValue(bytes(bound))
        _ = try config.checkPublicValue(bytes(p.subtracting(bound)!))
        let request = try SecretChat.KeyRequest(config: config, using: &rng)
        for v in bad {
            #expect(throws: SecretChatError.self) { try request.complete(gB: v, keyFingerprint: 0) }
        }
        // Our own values are always in range and 256 bytes.
        for _ in 0..<4 {
            let r = try SecretChat.KeyRequest(config: config, using: &rng)
            #expect(r.gA.count == 256)
            _ = try config.checkPublicValue(r.gA)
        }
    }

    @Test func serverRandomIsOnlyMixedIn() throws {
        let config = SecretChat.DHConfig.telegram()
        let server = [UInt8](repeating: 0x5A, count: 256)
        var r1 = SplitMix64(seed: 8), r2 = SplitMix64(seed: 8), r3 = SplitMix64(seed: 9)
        let a = try SecretChat.KeyRequest(config: config, serverRandom: server, using: &r1)
        let b = try SecretChat.KeyRequest(config: config, using: &r2)
        let c = try SecretChat.KeyRequest(config: config, serverRandom: server, using: &r3)
        // The server's bytes change the exponent, but the same server bytes with other local bytes
        // give another one.
        #expect(a.gA != b.gA && a.gA != c.gA)
    }

    // MARK: Files

    @Test func fileCipherInPartsEqualsWholeAndLargeBuffers() throws {
        var rng = SplitMix64(seed: 12)
        let fk = SecretChat.FileKey(using: &rng)
        #expect(fk.key.count == 32 && fk.iv.count == 32)
        let size = 1 << 20 | 5
        let file = randomBytes(count: size, using: &rng)
        let whole = fk.encrypt(file)
        #expect(whole.count == SecretChat.FileKey.paddedSize(size) && whole.count % 16 == 0)
        // Part by part (512 KiB upload parts, then the padded tail), in place.
        var parts = file + [UInt8](repeating: 0, count: whole.count - size)
        let cipher = fk.cipher()
        try parts.withUnsafeMutableBytes { b in
            try cipher.encrypt(UnsafeMutableRawBufferPointer(rebasing: b[0..<(512 << 10)]))
            try cipher.encrypt(UnsafeMutableRawBufferPointer(rebasing: b[(512 << 10)...]))
        }
        #expect(parts == whole)
        #expect(try fk.decrypt(whole, size: size) == file)
        #expect(throws: SecretChatError.self) { try fk.decrypt(whole, size: size + 16) }
        #expect(throws: SecretChatError.self) { try fk.decrypt(Array(whole.dropLast()), size: size) }
        var odd = [UInt8](repeating: 0, count: 17)
        #expect(throws: SecretChatError.self) {
            try odd.withUnsafeMutableBytes { try fk.cipher().encrypt($0) }
        }
    }

    /// Any `size`, near `Int.max` or negative, gives a typed error (or the file), never an overflow
    /// trap in the padding arithmetic.
    @Test func fileDecryptAndPaddedSizeTakeAnySize() throws {
        var rng = SplitMix64(seed: 13)
        let fk = SecretChat.FileKey(using: &rng)
        let enc = fk.encrypt([1, 2, 3])
        #expect(SecretChat.FileKey.paddedSize(Int.max) == Int.max)
        #expect(SecretChat.FileKey.paddedSize(Int.max - 15) == Int.max - 15)
        #expect(SecretChat.FileKey.paddedSize(Int.max - 16) == Int.max - 15)   // rounded up to a multiple of 16
        #expect(SecretChat.FileKey.paddedSize(-5) == 0 && SecretChat.FileKey.paddedSize(17) == 32)
        for size in [Int.max, Int.max - 14, Int.max - 15, Int.max - 16, Int.min, -1, 17, 1 << 62] {
            do {
                _ = try fk.decrypt(enc, size: size)
                Issue.record("size \(size) opened")
            } catch .invalidPlaintext {
            } catch {
                Issue.record("size \(size): \(error)")
            }
        }
        #expect(try fk.decrypt(enc, size: 3) == [1, 2, 3])
        #expect(try fk.decrypt(enc, size: 16).count == 16)
    }

    // MARK: Fingerprints and the key image (§7.7)

    @Test(arguments: scIds("key-hash"))
    func keyHashVector(_ id: String) throws {
        let c = scCase(id)
        let original = try SecretChat.Key(scHex(c, "original_key")), at46 = try SecretChat.Key(scHex(c, "layer46_key"))
        #expect(SecretChat.keyHash(originalKey: original, layer46Key: at46) == scHex(c, "key_hash"))
        #expect(SecretChat.keyHash(originalKey: original) == scHex(c, "key_hash"))
        #expect(SecretChat.sha1Fingerprint(of: original) == scHex(c, "sha1_fingerprint"))
        #expect(SecretChat.sha256Fingerprint(of: original) == scHex(c, "sha256_fingerprint"))
        let image = SecretChat.KeyImage(originalKey: original)
        #expect(image == (try SecretChat.KeyImage(keyHash: scHex(c, "key_hash"))))
        #expect(image.side == 12 && image.cells.count == 144)
    }

    @Test func keyImageLayout() throws {
        // Byte 0 = 0b11_10_01_00: cells 0…3 take its bit pairs from the least significant up.
        var hash = [UInt8](repeating: 0, count: 36)
        hash[0] = 0b11_10_01_00
        hash[35] = 0b01_00_00_00  // the last cell (143) = 1
        let image = try SecretChat.KeyImage(keyHash: hash)
        #expect(Array(image.cells[0..<5]) == [0, 1, 2, 3, 0])
        #expect(image.cells[143] == 1)
        #expect(image.color(row: 0, column: 2) == 0x2D5775 && image.color(row: 11, column: 11) == 0xD5E6F3)
        #expect(image.color(row: 0, column: 0) == 0xFFFFFF && image.color(row: 0, column: 3) == 0x2F99C9)
        let legacy = try SecretChat.KeyImage(keyHash: Array(hash.prefix(16)))
        #expect(legacy.side == 8 && legacy.cells.count == 64 && Array(legacy.cells[0..<4]) == [0, 1, 2, 3])
        for n in [0, 15, 17, 20, 35, 37] {
            #expect(throws: SecretChatError.invalidKey) { try SecretChat.KeyImage(keyHash: [UInt8](repeating: 1, count: n)) }
        }
        let svg = image.svg(cellSize: 10)
        #expect(svg.hasPrefix("<svg") && svg.hasSuffix("</svg>\n"))
        #expect(svg.components(separatedBy: "<rect ").count - 1 == 144)
        #expect(svg.contains("width=\"120\"") && svg.contains("fill=\"#2D5775\""))
        // A different key at layer 46 changes only the SHA-256 half of the hash.
        let k1 = scRandomKey(20), k2 = scRandomKey(21)
        let h1 = SecretChat.keyHash(originalKey: k1), h2 = SecretChat.keyHash(originalKey: k1, layer46Key: k2)
        #expect(h1.prefix(16) == h2.prefix(16) && h1.suffix(20) != h2.suffix(20))
    }
}
