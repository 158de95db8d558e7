// Threema rows: whole operations of RampartThreema against the same operation composed from
// libsodium calls (crypto_box_beforenm, crypto_generichash_blake2b_salt_personal,
// crypto_secretbox_easy/open_easy, crypto_pwhash_scryptsalsa208sha256_ll), the way a C client such as
// the Gateway SDK builds it. Both sides draw nonces and padding from the same cheap generator and
// write the same bytes; the libsodium side works in preallocated buffers, Rampart allocates its
// output as a user sees it.

import Rampart
import RampartReference
import RampartTestSupport
import RampartThreema
import RampartCodecs


private func identity(_ id: String, _ seed: Int) -> ThreemaIdentity {
    try! ThreemaIdentity(id: ThreemaID(id), privateKey: Array(UnsafeRawBufferPointer(buffer(32 + seed)).suffix(32)))
}

/// The libsodium composition of one `message-with-metadata-box`: header, metadata protobuf and box,
/// container with padding and message box. `key` and `mmk` are the pair's precomputed keys.
private func sodiumSeal(_ s: SodiumSalsa, body: UnsafeRawBufferPointer, key: UnsafeRawPointer, mmk: UnsafeRawPointer,
                        out: UnsafeMutableRawPointer, scratch: UnsafeMutableRawPointer, rng: inout SplitMix64) -> Int {
    let messageID = rng.next()
    // Header: sender, receiver, id, time, flags, reserved, metadata length, 32 zero bytes.
    "000ALICE00000BOB".utf8.enumerated().forEach { out.storeBytes(of: $0.element, toByteOffset: $0.offset, as: UInt8.self) }
    out.storeBytes(of: messageID.littleEndian, toByteOffset: 16, as: UInt64.self)
    out.storeBytes(of: UInt32(1_700_000_000).littleEndian, toByteOffset: 24, as: UInt32.self)
    out.storeBytes(of: UInt16(0x0001), toByteOffset: 28, as: UInt16.self)
    (out + 32).initializeMemory(as: UInt8.self, repeating: 0, count: 32)
    // MessageMetadata { padding (11 zero bytes), nickname "Alice", message_id, created_at }.
    var m = 0
    func put(_ b: UInt8) { scratch.storeBytes(of: b, toByteOffset: m, as: UInt8.self); m += 1 }
    put(0x0a); put(11); for _ in 0..<11 { put(0) }
    put(0x12); put(5); for c in "Alice".utf8 { put(c) }
    put(0x19); (scratch + m).storeBytes(of: messageID.littleEndian, toByteOffset: 0, as: UInt64.self); m += 8
    put(0x20); var t: UInt64 = 1_700_000_000_123
    while t >= 0x80 { put(UInt8(truncatingIfNeeded: t) | 0x80); t >>= 7 }
    put(UInt8(t))
    out.storeBytes(of: UInt16(m + 16).littleEndian, toByteOffset: 30, as: UInt16.self)
    let nonce = out + 64 + m + 16
    for i in 0..<3 { nonce.storeBytes(of: rng.next(), toByteOffset: 8 * i, as: UInt64.self) }
    s.secretboxEasy(UnsafeRawBufferPointer(start: scratch, count: m), into: out + 64, nonce: nonce, key: mmk)
    // Container: type ‖ body ‖ padding (random 1...255, at least 32 bytes with the body).
    let pad = max(Int(rng.next() % 255) + 1, 32 - body.count)
    let c = scratch + 256
    c.storeBytes(of: UInt8(1), as: UInt8.self)
    (c + 1).copyMemory(from: body.baseAddress!, byteCount: body.count)
    (c + 1 + body.count).initializeMemory(as: UInt8.self, repeating: UInt8(pad), count: pad)
    let cl = 1 + body.count + pad
    s.secretboxEasy(UnsafeRawBufferPointer(start: c, count: cl), into: nonce + 24, nonce: nonce, key: key)
    return 64 + m + 16 + 24 + cl + 16
}

func threemaRows() -> [Row] {
    var rows: [Row] = []
    let alice = identity("000ALICE", 1), bob = identity("00000BOB", 2)
    let keys = try! PairKeys(identity: alice, contact: bob.contact)
    let bobKeys = try! PairKeys(identity: bob, contact: alice.contact)
    let body = Array(UnsafeRawBufferPointer(buffer(200)))
    let key = keys.sharedKey.symmetricKey.withUnsafeBytes { Array($0) }
    let mmk = keys.metadataKey.withUnsafeBytes { Array($0) }
    let out = UnsafeMutableRawPointer.allocate(byteCount: 1 << 21, alignment: 64)
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: 1 << 12, alignment: 64)
    let sodiumSalsa = SodiumSalsa.shared, sodiumBox = SodiumBox.shared, sodium = Sodium.shared
    let alicePK = alice.publicKey.rawRepresentation, bobPK = bob.publicKey.rawRepresentation
    let aliceSK = alice.privateKey.rawRepresentation, bobSK = bob.privateKey.rawRepresentation
    let mm = Array("mm".utf8) + [UInt8](repeating: 0, count: 14)
    let csp = Array("3ma-csp".utf8) + [UInt8](repeating: 0, count: 9)

    // Seal a 200-byte text with metadata box, keys cached / derived per message.
    for cached in [true, false] {
        var rng = SplitMix64(seed: 0x7E5A)
        var cs = [Contender(implementation: "rampart") {
            let k = cached ? keys : try! PairKeys(identity: alice, contact: bob.contact)
            let msg = OutgoingMessage(type: .text, body: body, createdAt: 1_700_000_000_123, flags: [.sendPush],
                                      nickname: "Alice", using: &rng)
            let e = try! EndToEnd.seal(msg, from: alice, keys: k, using: &rng)
            consume(e[e.count - 1])
        }]
        if let s = sodiumSalsa, let b = sodiumBox, let g = sodium {
            var srng = SplitMix64(seed: 0x7E5A)
            let k = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
            key.withUnsafeBytes { k.copyMemory(from: $0.baseAddress!, byteCount: 32) }
            mmk.withUnsafeBytes { (k + 32).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            cs.append(Contender(implementation: "libsodium") {
                if !cached {
                    bobPK.withUnsafeBytes { p in aliceSK.withUnsafeBytes { sk in
                        _ = b.beforeNM(publicKey: p.baseAddress!, secretKey: sk.baseAddress!, into: k)
                    } }
                    let derived = try! g.blake2b([], outputLength: 32, key: Array(UnsafeRawBufferPointer(start: k, count: 32)),
                                                 salt: mm, personal: csp)
                    derived.withUnsafeBytes { (k + 32).copyMemory(from: $0.baseAddress!, byteCount: 32) }
                }
                let n = body.withUnsafeBytes { sodiumSeal(s, body: $0, key: k, mmk: k + 32, out: out, scratch: scratch, rng: &srng) }
                consume(out + n - 1)
            })
        }
        rows.append(Row(operation: cached ? "threema-message-seal" : "threema-message-seal-uncached", size: 200,
                        unit: .opsps, contenders: cs))
    }

    // Open the same message in one pass over the wire bytes (EndToEnd.open): header, both boxes,
    // metadata protobuf, padding.
    var rng = SplitMix64(seed: 0x7E5A)
    let envelope = try! EndToEnd.seal(OutgoingMessage(type: .text, body: body, createdAt: 1_700_000_000_123,
                                                      nickname: "Alice", using: &rng),
                                      from: alice, keys: keys, using: &rng)
    for cached in [true, false] {
        var cs = [Contender(implementation: "rampart") {
            let k = cached ? bobKeys : try! PairKeys(identity: bob, contact: alice.contact)
            let m = try! EndToEnd.open(envelope, keys: k)
            consume(m.container.body[0])
        }]
        if let s = sodiumSalsa, let b = sodiumBox, let g = sodium {
            let k = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
            key.withUnsafeBytes { k.copyMemory(from: $0.baseAddress!, byteCount: 32) }
            mmk.withUnsafeBytes { (k + 32).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            cs.append(Contender(implementation: "libsodium") {
                if !cached {
                    alicePK.withUnsafeBytes { p in bobSK.withUnsafeBytes { sk in
                        _ = b.beforeNM(publicKey: p.baseAddress!, secretKey: sk.baseAddress!, into: k)
                    } }
                    let derived = try! g.blake2b([], outputLength: 32, key: Array(UnsafeRawBufferPointer(start: k, count: 32)),
                                                 salt: mm, personal: csp)
                    derived.withUnsafeBytes { (k + 32).copyMemory(from: $0.baseAddress!, byteCount: 32) }
                }
                envelope.withUnsafeBytes { e in
                    let m = Int(e[30]) | Int(e[31]) << 8
                    let nonce = e.baseAddress! + 64 + m
                    guard s.secretboxOpenEasy(UnsafeRawBufferPointer(start: e.baseAddress! + 64, count: m), into: scratch,
                                              nonce: nonce, key: k + 32) else { fatalError("metadata") }
                    let boxed = UnsafeRawBufferPointer(start: nonce + 24, count: e.count - 88 - m)
                    guard s.secretboxOpenEasy(boxed, into: out, nonce: nonce, key: k) else { fatalError("box") }
                    // Check the metadata's message ID (fixed64 after the padding and nickname) and padding.
                    let pad = Int(out.load(fromByteOffset: boxed.count - 17, as: UInt8.self))
                    consume(out + (boxed.count - 16 - pad))
                    consume(scratch + 13 + 7)
                }
            })
        }
        rows.append(Row(operation: cached ? "threema-message-open" : "threema-message-open-uncached", size: 200,
                        unit: .opsps, contenders: cs))
    }

    // One message to a group of 100 members (keys cached).
    let members = (0..<100).map { identity("M" + String(repeating: "0", count: 7 - String($0).count) + String($0), 40 + $0).contact }
    var cache = PairKeyCache(identity: alice)
    var grng = SplitMix64(seed: 0x7E5A)
    let groupMessage = OutgoingMessage(type: .groupText, body: body, createdAt: 1_700_000_000_123, nickname: "Alice", using: &grng)
    _ = EndToEnd.sealForGroup(groupMessage, to: members, cache: &cache, using: &grng)
    var gcs = [Contender(implementation: "rampart") {
        let r = EndToEnd.sealForGroup(groupMessage, to: members, cache: &cache, using: &grng)
        consume(r.sealed[99].1[0])
    }]
    if let s = sodiumSalsa, let b = sodiumBox, let g = sodium {
        var srng = SplitMix64(seed: 0x7E5A)
        let memberKeys = UnsafeMutableRawPointer.allocate(byteCount: 64 * 100, alignment: 64)
        for (i, m) in members.enumerated() {
            m.publicKey.rawRepresentation.withUnsafeBytes { p in aliceSK.withUnsafeBytes { sk in
                _ = b.beforeNM(publicKey: p.baseAddress!, secretKey: sk.baseAddress!, into: memberKeys + 64 * i)
            } }
            let derived = try! g.blake2b([], outputLength: 32, key: Array(UnsafeRawBufferPointer(start: memberKeys + 64 * i, count: 32)),
                                         salt: mm, personal: csp)
            derived.withUnsafeBytes { (memberKeys + 64 * i + 32).copyMemory(from: $0.baseAddress!, byteCount: 32) }
        }
        gcs.append(Contender(implementation: "libsodium") {
            var n = 0
            body.withUnsafeBytes { bb in
                for i in 0..<100 {
                    n = sodiumSeal(s, body: bb, key: memberKeys + 64 * i, mmk: memberKeys + 64 * i + 32, out: out + 1024 * i,
                                   scratch: scratch, rng: &srng)
                }
            }
            consume(out + 99 * 1024 + n - 1)
        })
    }
    rows.append(Row(operation: "threema-group-seal-100", size: 200, unit: .opsps, contenders: gcs))

    // A 1 MiB blob, in place.
    let blobKey = SymmetricKey(data: Array(UnsafeRawBufferPointer(buffer(32))))
    let blobKeyBytes = blobKey.withUnsafeBytes { Array($0) }
    let blob = UnsafeMutableRawBufferPointer.allocate(byteCount: (1 << 20) + 16, alignment: 64)
    blob.copyMemory(from: UnsafeRawBufferPointer(buffer((1 << 20) + 16)))
    var bcs = [Contender(implementation: "rampart") {
        try! ThreemaBlob.encrypt(inPlace: blob, key: blobKey, kind: .file)
        consume(blob.baseAddress!)
    }]
    if let s = sodiumSalsa {
        let nonce = ThreemaBlob.Kind.file.nonce
        bcs.append(Contender(implementation: "libsodium") {
            nonce.withUnsafeBytes { n in blobKeyBytes.withUnsafeBytes { k in
                s.secretboxEasy(UnsafeRawBufferPointer(rebasing: blob[16...]), into: out, nonce: n.baseAddress!, key: k.baseAddress!)
            } }
            consume(out)
        })
    }
    rows.append(Row(operation: "threema-blob-encrypt", size: 1 << 20, unit: .mbps, contenders: bcs))

    // Decode a legacy ID backup: Base32, PBKDF2-HMAC-SHA256 (100 000), XSalsa20, the check. The
    // reference composes OpenSSL's PKCS5_PBKDF2_HMAC (libsodium has no PBKDF2) with libsodium's
    // crypto_stream_xsalsa20_xor and a SHA-256 check.
    var brng = SplitMix64(seed: 0x7E5A)
    let backupText = try! IDBackup.encode(identity: alice, password: "correct horse battery", using: &brng)
    var ics = [Contender(implementation: "rampart") {
        let i = try! IDBackup.decode(backupText, password: "correct horse battery")
        consume(UInt8(truncatingIfNeeded: i.id.packed))
    }]
    if let o = OpenSSL.shared, let s = sodiumSalsa, let g = sodium {
        let raw = try! Base32.decode(backupText, mode: .lenient)
        ics.append(Contender(implementation: "openssl+libsodium") {
            let decoded = try! Base32.decode(backupText, mode: .lenient)
            let key = try! o.pbkdf2("sha256", password: Array("correct horse battery".utf8), salt: Array(decoded[0..<8]),
                                    iterations: 100_000, length: 32)
            let plain = s.xsalsa20Xor(Array(decoded[8...]), nonce: [UInt8](repeating: 0, count: 24), key: key)
            let check = try! g.digest("sha256", Array(plain[0..<40]))
            precondition(check[0] == plain[40] && check[1] == plain[41] && raw.count == 50)
            consume(plain[0])
        })
    }
    rows.append(Row(operation: "threema-id-backup-decode", size: 0, unit: .opsps, contenders: ics))

    // Threema Safe key derivation: scrypt(password, ID, 65536, 8, 1, 64) split in two.
    let id = try! ThreemaID("ECHOECHO")
    var scs = [Contender(implementation: "rampart") {
        let k = try! SafeKeys(password: "shootdeathstar", identity: id)
        consume(k.backupID[0])
    }]
    if let g = sodium {
        let pw = Array("shootdeathstar".utf8), salt = id.bytes
        scs.append(Contender(implementation: "libsodium") {
            consume(try! g.scrypt(password: pw, salt: salt, n: 65536, r: 8, p: 1, length: 64)[0])
        })
    }
    let sops = Dictionary(uniqueKeysWithValues: scs.map { ($0.implementation, $0.op) })
    rows.append(Row(operation: "threema-safe-derive", size: 0, unit: .opsps, contenders: scs,
                    memoryProbe: { name in sops[name].flatMap { op in peakMemory(op) } }))
    return rows
}
