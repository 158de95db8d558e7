// Runners for the MTProto vector files of `Vectors/mtproto/`: the message layer (`message.json`,
// kind `mtproto-message`: auth_key_id, msg_key v1, KDF v1/v2, the whole v2 envelope both ways) and
// the official auth-key sample (`handshake_sample.json`) replayed through the client state machine.

import RampartMTProto
import RampartTestSupport

enum MTProtoVectors {
    static func le64(_ b: [UInt8]) -> UInt64 { b.reversed().reduce(0) { $0 << 8 | UInt64($1) } }
    static func hex64(_ s: String) -> Int64 { Int64(bitPattern: UInt64(s.dropFirst(2), radix: 16) ?? 0) }

    static func fail(_ id: String, _ why: String) -> VectorResult { VectorResult(family: "mtproto", id: id, passed: false, detail: why) }

    /// One case of `message.json`.
    static func messageCase(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let type: String = try field(c, "type", id)
        func h(_ k: String) throws -> [UInt8] { try hexField(c, k, id) }
        switch type {
        case "auth_key_id":
            let key = try AuthKey(try h("auth_key"))
            guard key.idBytes == (try h("id_wire")), key.auxHashBytes == (try h("aux_hash_wire")) else { return fail(id, "auth_key_id/aux_hash") }
        case "msg-key-v1":
            guard MessageKey.v1(plaintext: try h("plaintext")) == (try h("msg_key")) else { return fail(id, "msg_key v1") }
        case "kdf-v1", "kdf-v2":
            let key = try AuthKey(try h("auth_key"))
            let x: Int = try field(c, "x", id)
            let dir: MTProtoDirection = x == 0 ? .clientToServer : .serverToClient
            let r = type == "kdf-v1" ? try MessageKDF.v1(authKey: key, messageKey: try h("msg_key"), direction: dir)
                                     : try MessageKDF.v2(authKey: key, messageKey: try h("msg_key"), direction: dir)
            guard r.key == (try h("aes_key")), r.iv == (try h("aes_iv")) else { return fail(id, "\(type) key/iv") }
        case "envelope-v2":
            let key = try AuthKey(try h("auth_key"))
            let dirName: String = try field(c, "direction", id)
            let dir: MTProtoDirection = dirName == "client-to-server" ? .clientToServer : .serverToClient
            let header = MessageHeader(salt: Int64(bitPattern: le64(try h("salt_wire"))),
                                       sessionId: Int64(bitPattern: le64(try h("session_id_wire"))),
                                       msgId: hex64(try field(c, "msg_id", id)), seqNo: Int32(try field(c, "seq_no", id) as Int))
            var rng = ReplayRNG(chunks: [try h("padding")])
            let (packet, _) = try EncryptedMessage.encrypt(body: try h("body"), header: header, authKey: key, direction: dir,
                                                           padding: .minimal, using: &rng)
            guard packet == (try h("packet")) else { return fail(id, "packet differs") }
            var window = ReplayWindow()
            let m = try EncryptedMessage.decrypt(packet, authKey: key, direction: dir, sessionId: header.sessionId, replayWindow: &window)
            guard m.header == header, m.body == (try h("body")) else { return fail(id, "decrypt") }
            var bad = packet
            bad[bad.count - 1] ^= 1
            guard (try? EncryptedMessage.decrypt(bad, authKey: key, direction: dir, sessionId: header.sessionId,
                                                 replayWindow: &window)) == nil else { return fail(id, "corrupted packet accepted") }
        default:
            throw VectorFileError.malformed(id, "unknown type \(type)")
        }
        return VectorResult(family: "mtproto-\(type)", id: id, passed: true)
    }

    /// The official handshake sample through ClientHandshake (randomness injected): the client's
    /// encrypted set_client_DH_params, the auth key, its id and the initial salt, byte for byte.
    static func handshakeSample(_ name: String, _ json: Any, _ options: VectorOptions) throws -> [VectorResult] {
        let id = name + "#sample"
        guard let s = json as? [String: Any] else { throw VectorFileError.malformed(name, "not an object") }
        func h(_ k: String) throws -> [UInt8] { try hexField(s, k, id) }
        let key = try RSA.PublicKey(pemRepresentation: TelegramPublicKeys.productionPEM)
        var client = ClientHandshake(configuration: .init(publicKeys: [key], dc: 2))
        var rng = ReplayRNG(chunks: [try h("nonce"), try h("new_nonce"), try h("random_padding_bytes"),
                                    [UInt8](repeating: 0x42, count: 32), try h("b"), try h("client_padding")])
        guard client.start(using: &rng) == [0xF1, 0x8E, 0x7E, 0xBE] + (try h("nonce")) else { return [fail(id, "req_pq_multi")] }
        let fps = try (field(s, "fingerprints", id) as [String]).map { le64(try Hex.decode($0)) }
        let res = ResPQ(nonce: try h("nonce"), serverNonce: try h("server_nonce"), pq: try h("pq_bytes"), fingerprints: fps)
        guard case .send = try client.receive(res.serialized, now: 1_705_754_876, using: &rng) else { return [fail(id, "resPQ")] }
        let ok = ServerDHParams.ok(nonce: try h("nonce"), serverNonce: try h("server_nonce"), encryptedAnswer: try h("encrypted_answer"))
        guard case .send(let set) = try client.receive(ok.serialized, now: 1_705_754_876, using: &rng),
              try SetClientDHParams(parsing: set).encryptedData == (try h("client_encrypted_data")) else {
            return [fail(id, "client encrypted_data")]
        }
        let gen = DHGenAnswer(kind: .ok, nonce: try h("nonce"), serverNonce: try h("server_nonce"), newNonceHash: try h("new_nonce_hash1"))
        guard case .completed(let r) = try client.receive(gen.serialized, now: 1_705_754_876, using: &rng),
              r.authKey.withUnsafeBytes({ Array($0) }) == (try h("auth_key")) else { return [fail(id, "auth_key")] }
        return [VectorResult(family: "mtproto-handshake", id: id, passed: true)]
    }
}
