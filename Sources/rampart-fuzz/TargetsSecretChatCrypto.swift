// Fuzz target for the secret-chat cryptographic core (Docs/MTProto.md §7.2, §7.3, §7.7). The first byte
// picks what the rest feeds:
//   bit 7 clear: SecretChat.Envelope.decrypt on raw bytes (the key's fingerprint put in front when bit 6
//     is set) or on a message sealed here by a reference (v2 or v1, with an arbitrary length field,
//     body and padding) and then possibly mutated: accepted exactly when the reference accepts, with
//     the same TL, key and version, and every refusal is rejectedMessage;
//   bit 7 set: the other inputs: a peer's DH value (checkPublicValue), a key hash (KeyImage), an
//     encrypted file and its size (FileKey.decrypt): typed errors, never a trap, and the documented
//     shapes when accepted.

import Rampart
import RampartMTProto
import RampartTestSupport

private let scKeyA = try! SecretChat.Key((0..<256).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
private let scKeyB = try! SecretChat.Key((0..<256).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) })
private let scConfig = SecretChat.DHConfig.telegram()
private let scFileKey = try! SecretChat.FileKey(key: [UInt8](repeating: 0x11, count: 32), iv: [UInt8](repeating: 0x22, count: 32))

/// The rules of §7.3 written out again, on arrays and the public primitives.
private enum ReferenceSecretChat {
    static func auth(_ k: SecretChat.Key) -> AuthKey { k.withUnsafeBytes { try! AuthKey($0) } }

    static func seal(_ plain: [UInt8], key: SecretChat.Key, x: Int, v1: Bool, coveredLength: Int) -> [UInt8] {
        let a = auth(key), dir: MTProtoDirection = x == 0 ? .clientToServer : .serverToClient
        let msgKey = v1 ? MessageKey.v1(plaintext: plain.prefix(coveredLength)) : MessageKey.v2(authKey: a, plaintext: plain, direction: dir)
        guard let (k, iv) = v1 ? try? MessageKDF.v1(authKey: a, messageKey: msgKey, direction: .clientToServer)
                               : try? MessageKDF.v2(authKey: a, messageKey: msgKey, direction: dir),
              let ct = try? AES.IGE.encrypt(plain, using: SymmetricKey(data: k), iv: iv) else { FuzzCheck.fail("reference seal") }
        return key.fingerprintBytes + msgKey + ct
    }

    /// (tl, key index, v1) when some candidate accepts.
    static func open(_ data: [UInt8], keys: [SecretChat.Key], x: Int, allowV1: Bool) -> ([UInt8], Int, Bool)? {
        guard data.count >= 40, (data.count - 24) % 16 == 0 else { return nil }
        let msgKey = Array(data[8..<24]), ct = Array(data[24...])
        for (i, key) in keys.enumerated() where Array(data[0..<8]) == key.fingerprintBytes {
            let a = auth(key), dir: MTProtoDirection = x == 0 ? .clientToServer : .serverToClient
            if let (k, iv) = try? MessageKDF.v2(authKey: a, messageKey: msgKey, direction: dir),
               let p = try? AES.IGE.decrypt(ct, using: SymmetricKey(data: k), iv: iv),
               MessageKey.v2(authKey: a, plaintext: p, direction: dir) == msgKey,
               let l = length(p), l % 4 == 0, (12...1024).contains(p.count - 4 - l) {
                return (Array(p[4..<(4 + l)]), i, false)
            }
            if allowV1, let (k, iv) = try? MessageKDF.v1(authKey: a, messageKey: msgKey, direction: .clientToServer),
               let p = try? AES.IGE.decrypt(ct, using: SymmetricKey(data: k), iv: iv),
               let l = length(p), l % 4 == 0, p.count - 4 - l <= 15, MessageKey.v1(plaintext: p.prefix(4 + l)) == msgKey {
                return (Array(p[4..<(4 + l)]), i, true)
            }
        }
        return nil
    }

    /// The length field when 0 ≤ L ≤ plaintext − 4.
    static func length(_ p: [UInt8]) -> Int? {
        let l = Int(Int32(bitPattern: (0..<4).reduce(UInt32(0)) { $0 | UInt32(p[$1]) << (8 * UInt32($1)) }))
        return l >= 0 && l <= p.count - 4 ? l : nil
    }
}

private func fuzzEnvelope(_ flags: UInt8, _ input: inout FuzzInput) {
    let x = flags & 1 == 0 ? 0 : 8
    let allowV1 = flags & 2 != 0
    let keys = flags & 4 == 0 ? [scKeyA] : [scKeyB, scKeyA]
    var data: [UInt8]
    if flags & 8 != 0 {
        // A sealed message: length field (true or arbitrary), body, padding, v1 or v2, then maybe mutated.
        let v1 = input.bool()
        let body = input.fixed(4 * Int(input.u16() % 300))
        var pad = input.fixed(Int(input.u16() % 1100))
        pad += [UInt8](repeating: 0x5C, count: (16 - (4 + body.count + pad.count) % 16) % 16)
        let field: UInt32 = input.bool() ? UInt32(body.count) : input.u32()
        let plain = withUnsafeBytes(of: field.littleEndian) { Array($0) } + body + pad
        data = ReferenceSecretChat.seal(plain, key: input.bool() ? scKeyA : scKeyB, x: input.bool() ? x : 8 - x, v1: v1,
                                        coveredLength: min(plain.count, 4 + Int(Int32(bitPattern: field)).clamped(0, plain.count)))
        if flags & 0x10 != 0, !data.isEmpty {
            let at = Int(input.u16()) % data.count
            data[at] ^= max(1, input.byte())
        }
        FuzzStats.note("secret-chat: sealed")
    } else {
        data = input.rest()
        if flags & 0x40 != 0, data.count >= 8 { data.replaceSubrange(0..<8, with: scKeyA.fingerprintBytes) }
    }
    let side: SecretChat.Side = x == 0 ? .creator : .acceptor
    let reference = ReferenceSecretChat.open(data, keys: keys, x: x, allowV1: allowV1)
    do {
        let o = try SecretChat.Envelope.decrypt(data, keys: keys, sender: side, allowV1: allowV1)
        guard let (tl, index, v1) = reference else { FuzzCheck.fail("decrypt accepted what the reference refuses") }
        FuzzCheck.require(o.tl == tl && o.key == keys[index] && (o.version == .v1) == v1, "decrypt disagrees with the reference")
        FuzzStats.note(v1 ? "secret-chat: v1 accepted" : "secret-chat: v2 accepted")
    } catch {
        FuzzCheck.require(error == .rejectedMessage, "decrypt threw \(error), not rejectedMessage")
        FuzzCheck.require(reference == nil, "decrypt refused what the reference accepts")
    }
}

private func fuzzOthers(_ flags: UInt8, _ input: inout FuzzInput) {
    let bytes = input.rest()
    switch flags & 3 {
    case 0:
        if let v = try? scConfig.checkPublicValue(bytes) {
            FuzzCheck.require(bytes.count <= 256 && v.bitWidth >= 1985, "an out-of-range DH value was accepted")
            FuzzStats.note("secret-chat: DH value in range")
        }
    case 1:
        if let image = try? SecretChat.KeyImage(keyHash: bytes) {
            FuzzCheck.require(image.cells.count == image.side * image.side && image.cells.allSatisfy { $0 < 4 }, "key image shape")
            FuzzCheck.require(bytes.count == (image.side == 12 ? 36 : 16), "key image side")
        }
    default:
        let size = Int(bytes.first ?? 0) + 16 * Int(bytes.dropFirst().first ?? 0)
        let file = Array(bytes.dropFirst(2))
        if let plain = try? scFileKey.decrypt(file, size: size) {
            FuzzCheck.require(plain.count == size && file.count % 16 == 0, "decrypted file size")
            FuzzCheck.require(scFileKey.encrypt(plain).prefix(size / 16 * 16) == file.prefix(size / 16 * 16), "file round trip")
            FuzzStats.note("secret-chat: file")
        }
    }
}

private extension Int {
    func clamped(_ lo: Int, _ hi: Int) -> Int { Swift.min(Swift.max(self, lo), hi) }
}

let secretChatCryptoTarget = FuzzTarget(
    name: "secret-chat-crypto",
    summary: "SecretChat.Envelope.decrypt on raw and reference-sealed (v2/v1, lying length fields, mutated) messages: accepted iff the §7.3 reference accepts, same TL/key/version, every refusal rejectedMessage; DH value checks, key images and encrypted files never trap",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        if flags & 0x80 == 0 { fuzzEnvelope(flags, &input) } else { fuzzOthers(flags, &input) }
    },
    seeds: {
        var out: [[UInt8]] = []
        for flags: UInt8 in [0x08, 0x09, 0x0B, 0x0C, 0x18, 0x1A] {
            var w = SeedWriter()
            w.byte(flags)
            w.byte(flags & 2 == 0 ? 0 : 1)   // v1 when allowed
            // v2: 52 bytes of TL and 24 of padding; v1: 56 and 4 (a whole 64-byte plaintext).
            let (words, pad): (UInt16, Int) = flags & 2 == 0 ? (13, 24) : (14, 4)
            w.u16(words); w.raw([UInt8](repeating: 0x42, count: 4 * Int(words)))
            w.u16(UInt16(pad)); w.raw([UInt8](repeating: 0xA5, count: pad))
            w.byte(1)                          // true length field
            w.byte(flags & 4 == 0 ? 1 : 0)     // key A or B
            w.byte(1)                          // sender's own x
            w.u16(30); w.byte(0x80)
            out.append(w.bytes)
        }
        out.append([0x40] + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0x33, count: 64))
        out.append([0x80] + DiffieHellman.telegramPrime.bigEndianBytes())
        out.append([0x81] + [UInt8](repeating: 0x6B, count: 36))
        out.append([0x82, 100, 0] + scFileKey.encrypt([UInt8](repeating: 7, count: 100)))
        return out
    }
)
