// Message layer (Docs/MTProto.md §1): AuthKey, msg_key v1/v2, KDF v1/v2, quick ack and the encrypted envelope,
// against the G and D vectors of Docs/MTProto.md §10, plus round trips and every receiver check.

import Foundation
import Testing
@testable import RampartMTProto
import RampartTestSupport

@Suite struct MessageLayerTests {
    // MARK: Vectors

    @Test func vectorFileIsPresent() {
        #expect(msgVectorCases.count >= 8, "Vectors/mtproto/message.json should hold the §10 G/D vectors")
    }

    @Test(arguments: msgVectorIds("auth_key_id"))
    func authKeyId(_ id: String) throws {
        let v = msgVector(id)
        let key = try AuthKey(hexBytes(v["auth_key"] as! String))
        #expect(key.idBytes == hexBytes(v["id_wire"] as! String))
        #expect(key.id == UInt64(bitPattern: msgLE64(v["id_wire"] as! String)))
        #expect(key.auxHashBytes == hexBytes(v["aux_hash_wire"] as! String))
        #expect(key.auxHash == UInt64(bitPattern: msgLE64(v["aux_hash_wire"] as! String)))
    }

    @Test(arguments: msgVectorIds("kdf-v2") + msgVectorIds("kdf-v1"))
    func kdf(_ id: String) throws {
        let v = msgVector(id)
        let key = try AuthKey(hexBytes(v["auth_key"] as! String))
        let direction: MTProtoDirection = (v["x"] as! Int) == 0 ? .clientToServer : .serverToClient
        let mk = hexBytes(v["msg_key"] as! String)
        let r = v["type"] as! String == "kdf-v2" ? try MessageKDF.v2(authKey: key, messageKey: mk, direction: direction)
                                                 : try MessageKDF.v1(authKey: key, messageKey: mk, direction: direction)
        #expect(throws: MTProtoError.self) { try MessageKDF.v2(authKey: key, messageKey: mk.dropLast(), direction: direction) }
        #expect(throws: MTProtoError.self) { try MessageKDF.v1(authKey: key, messageKey: mk + [0], direction: direction) }
        #expect(r.key == hexBytes(v["aes_key"] as! String))
        #expect(r.iv == hexBytes(v["aes_iv"] as! String))
    }

    @Test(arguments: msgVectorIds("msg-key-v1"))
    func messageKeyV1(_ id: String) {
        let v = msgVector(id)
        let pt = hexBytes(v["plaintext"] as! String)
        #expect(MessageKey.v1(plaintext: pt) == hexBytes(v["msg_key"] as! String))
        // Quick ack v1: the first 4 bytes of the same SHA1, little-endian, with bit 31 set.
        let sha = Insecure.SHA1.hash(data: pt).bytes
        #expect(QuickAck.v1(plaintext: pt) == (UInt32(sha[0]) | UInt32(sha[1]) << 8 | UInt32(sha[2]) << 16 | UInt32(sha[3]) << 24 | 0x8000_0000))
    }

    @Test func authKeyIdFromSample() throws {
        guard let d = mtprotoVectorFile("handshake_sample.json"), let dv = mtprotoVectorFile("derived_vectors.json") else { return }
        let sample = try JSONSerialization.jsonObject(with: d) as! [String: Any]
        let derived = try JSONSerialization.jsonObject(with: dv) as! [String: Any]
        let key = try AuthKey(hexBytes(sample["auth_key"] as! String))
        #expect(key.idBytes == hexBytes(derived["sample_auth_key_id_wire_bytes"] as! String))
        #expect(Int64(bitPattern: key.id) == (derived["sample_auth_key_id_int64"] as! NSNumber).int64Value)
        #expect(key.auxHashBytes == hexBytes(derived["sample_auth_key_aux_hash"] as! String))
        #expect(ServerSalts.initialSalt(newNonce: hexBytes(sample["new_nonce"] as! String),
                                        serverNonce: hexBytes(sample["server_nonce"] as! String))
                == (derived["sample_initial_server_salt_int64"] as! NSNumber).int64Value)
    }

    /// D1/D2 from the project's file: encryption reproduces the packet with the vector's padding,
    /// and the receiver decrypts it back.
    @Test(arguments: msgVectorIds("envelope-v2"))
    func envelope(_ id: String) throws {
        let v = msgVector(id)
        try checkEnvelope(v, body: v["body"] as! String, packet: v["packet"] as! String)
    }

    /// The same vectors read from Vectors/mtproto/derived_vectors.json.
    @Test(arguments: ["c2s", "s2c"])
    func envelopeFromDerivedVectors(_ name: String) throws {
        guard let d = mtprotoVectorFile("derived_vectors.json"), let hs = mtprotoVectorFile("handshake_sample.json") else { return }
        let all = try JSONSerialization.jsonObject(with: d) as! [String: Any]
        let sample = try JSONSerialization.jsonObject(with: hs) as! [String: Any]
        var v = all[name] as! [String: Any]
        v["auth_key"] = sample["auth_key"]
        v["direction"] = name == "c2s" ? "client-to-server" : "server-to-client"
        v["salt_wire"] = all["sample_initial_server_salt_wire_bytes"]
        v["session_id_wire"] = (all["c2s"] as! [String: Any])["session_id_wire"]
        try checkEnvelope(v, body: (v["body_ping"] ?? v["body_pong"]) as! String, packet: v["full_packet"] as! String)
    }

    private func checkEnvelope(_ v: [String: Any], body bodyHex: String, packet packetHex: String) throws {
        let key = try AuthKey(hexBytes(v["auth_key"] as! String))
        let direction: MTProtoDirection = v["direction"] as! String == "client-to-server" ? .clientToServer : .serverToClient
        let header = MessageHeader(salt: msgLE64(v["salt_wire"] as! String), sessionId: msgLE64(v["session_id_wire"] as! String),
                                   msgId: msgHex64(v["msg_id"] as! String), seqNo: Int32(v["seq_no"] as! Int))
        let body = hexBytes(bodyHex)
        let plaintext = hexBytes(v["plaintext"] as! String)
        let msgKey = hexBytes(v["msg_key"] as! String)
        // msg_key, KDF and quick ack on their own.
        #expect(MessageKey.v2(authKey: key, plaintext: plaintext, direction: direction) == msgKey)
        let kdf = try MessageKDF.v2(authKey: key, messageKey: msgKey, direction: direction)
        #expect(kdf.key == hexBytes(v["aes_key"] as! String))
        #expect(kdf.iv == hexBytes(v["aes_iv"] as! String))
        if let qa = v["quick_ack"] as? String ?? v["quick_ack_uint32"] as? String {
            #expect(QuickAck.v2(authKey: key, plaintext: plaintext, direction: direction) == UInt32(qa.dropFirst(2), radix: 16)!)
        }
        // The whole envelope, with the vector's padding bytes injected through the generator.
        var rng = ReplayRNG(hexBytes(v["padding"] as! String))
        let (packet, quickAck) = try EncryptedMessage.encrypt(body: body, header: header, authKey: key, direction: direction,
                                                              padding: .minimal, using: &rng)
        #expect(hexString(packet) == packetHex.lowercased())
        #expect(quickAck == QuickAck.v2(authKey: key, plaintext: plaintext, direction: direction))
        // And back.
        var window = ReplayWindow()
        let m = try EncryptedMessage.decrypt(hexBytes(packetHex), authKey: key, direction: direction,
                                             sessionId: header.sessionId, replayWindow: &window)
        #expect(m.header == header)
        #expect(m.body == body)
        #expect(m.quickAck == quickAck)
        #expect(window.contains(header.msgId))
    }

    // MARK: AuthKey

    @Test(arguments: [0, 1, 255, 257, 512])
    func authKeyLength(_ n: Int) {
        #expect(throws: MTProtoError.invalidAuthKey) { try AuthKey([UInt8](repeating: 1, count: n)) }
    }

    @Test func authKeyEqualityAndBytes() throws {
        var bytes = (0..<256).map { UInt8($0) }
        let a = try AuthKey(bytes)
        #expect(a == msgSequenceKey)
        bytes[255] ^= 1
        #expect(try AuthKey(bytes) != a)
        #expect(a.withUnsafeBytes { Array($0) } == (0..<256).map { UInt8($0) })
    }

    // MARK: Padding

    @Test(arguments: [PaddingPolicy.minimal, .random, .random(maxExtraBlocks: 1000), .buckets])
    func paddingBounds(_ policy: PaddingPolicy) {
        var rng = SplitMix64(seed: 7)
        for l in stride(from: 0, through: 20000, by: 4) {
            let p = policy.paddingLength(bodyLength: l, using: &rng)
            #expect(p >= 12 && p <= 1024 && (32 + l + p) % 16 == 0, "L=\(l) P=\(p)")
            if p < 12 || p > 1024 || (32 + l + p) % 16 != 0 { return }
        }
    }

    @Test func bucketsFollowTdlib() {
        var rng = SplitMix64(seed: 1)
        func total(_ l: Int) -> Int { 32 + l + PaddingPolicy.buckets.paddingLength(bodyLength: l, using: &rng) }
        #expect(total(0) == 64)
        #expect(total(20) == 64)
        #expect(total(24) == 128)      // 32+24+12 = 68 → 80 → 128
        #expect(total(1280 - 44) == 1280)
        #expect(total(1280 - 40) == 1728)  // 1280 + 448
    }

    // MARK: Round trips

    @Test(arguments: [MTProtoDirection.clientToServer, .serverToClient])
    func roundTripManySizes(_ direction: MTProtoDirection) throws {
        let key = msgRandomKey(42)
        var rng = SplitMix64(seed: 3)
        var window = ReplayWindow()
        var id: Int64 = 0x65ab_c0fe_0000_0000 | (direction == .clientToServer ? 0 : 1)
        let sizes = Array(stride(from: 0, through: 300, by: 4)) + [1020, 1024, 4096, 16380, 16384, 65536]
        for (i, size) in sizes.enumerated() {
            id += 4
            let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }
            let h = MessageHeader(salt: 99, sessionId: -5, msgId: id, seqNo: Int32(i))
            let policy: PaddingPolicy = [.minimal, .random, .buckets][i % 3]
            let (packet, qa) = try EncryptedMessage.encrypt(body: body, header: h, authKey: key, direction: direction, padding: policy, using: &rng)
            #expect((packet.count - 24) % 16 == 0)
            let m = try EncryptedMessage.decrypt(packet, authKey: key, direction: direction, sessionId: -5, replayWindow: &window)
            #expect(m.body == body && m.header == h && m.quickAck == qa)
        }
    }

    @Test func authKeyIdOfAPacket() throws {
        let key = msgRandomKey(41)
        var rng = SplitMix64(seed: 41)
        let (packet, _) = try EncryptedMessage.encrypt(body: [1, 2, 3, 4], header: MessageHeader(salt: 1, sessionId: 2, msgId: 4, seqNo: 1),
                                                       authKey: key, direction: .clientToServer, using: &rng)
        #expect(EncryptedMessage.authKeyId(of: packet) == key.id && Array(packet.prefix(8)) == key.idBytes)
        #expect(EncryptedMessage.authKeyId(of: packet[0..<8]) == key.id)
        #expect(EncryptedMessage.authKeyId(of: UnencryptedMessage.encode(msgId: 4, body: [1, 2, 3, 4])) == 0)
        #expect(EncryptedMessage.authKeyId(of: [UInt8](repeating: 0xFF, count: 7)) == nil)
        #expect(EncryptedMessage.authKeyId(of: [1, 0, 0, 0, 0, 0, 0, 0x80] as [UInt8]) == 0x8000_0000_0000_0001)
    }

    @Test func wrongDirectionIsRejected() throws {
        let key = msgRandomKey(1)
        var rng = SplitMix64(seed: 1)
        let h = MessageHeader(salt: 1, sessionId: 2, msgId: 0x65ab_c0fe_0000_0004, seqNo: 1)
        let (packet, _) = try EncryptedMessage.encrypt(body: [1, 2, 3, 4], header: h, authKey: key, direction: .clientToServer, using: &rng)
        var window = ReplayWindow()
        #expect(throws: MTProtoError.rejectedMessage) {
            try EncryptedMessage.decrypt(packet, authKey: key, direction: .serverToClient, sessionId: 2, replayWindow: &window)
        }
        #expect(window.count == 0)
    }

    @Test(arguments: [2, 6, 1023])
    func outgoingBodyMustBeWholeInts(_ n: Int) {
        var rng = SplitMix64(seed: 1)
        let h = MessageHeader(salt: 1, sessionId: 2, msgId: 4, seqNo: 1)
        #expect(throws: MTProtoError.self) {
            try EncryptedMessage.encrypt(body: [UInt8](repeating: 0, count: n), header: h, authKey: msgSequenceKey,
                                         direction: .clientToServer, using: &rng)
        }
    }

    // MARK: Unencrypted messages

    @Test func unencryptedRoundTripAndSample() throws {
        let body = hexBytes("F18E7EBE15A084B3B9CA2A17F03925F44B78FE68")
        let packet = UnencryptedMessage.encode(msgId: 0x65ab_c0fc_000d_f764, body: body)
        // The first 40 bytes of the §10.D3 sample packet (req_pq_multi).
        #expect(hexString(packet) == "000000000000000064f70d00fcc0ab6514000000f18e7ebe15a084b3b9ca2a17f03925f44b78fe68")
        let m = try UnencryptedMessage.decode(packet)
        #expect(m.msgId == 0x65ab_c0fc_000d_f764 && m.body == body)
    }

    @Test func unencryptedBadInput() {
        let good = UnencryptedMessage.encode(msgId: 0x65ab_c0fc_000d_f764, body: [1, 2, 3, 4])
        var bad: [[UInt8]] = [[], Array(good.prefix(19)), Array(good.dropLast()), good + [0, 0, 0, 0]]
        var nonzeroKey = good; nonzeroKey[3] = 1; bad.append(nonzeroKey)
        var badLength = good; badLength[16] = 3; bad.append(badLength)
        var negative = good; negative[19] = 0x80; bad.append(negative)
        for b in bad {
            #expect(throws: MTProtoError.self) { try UnencryptedMessage.decode(b) }
        }
    }
}
