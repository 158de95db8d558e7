// Runner for Vectors/threema/published.json ("kind": "threema"): the Threema apps' and the Gateway
// SDK's published test values, one operation per case ("op").

import Foundation
import Rampart
@_spi(Testing) import RampartThreema
import RampartCodecs
import RampartTestSupport

enum ThreemaVectors {
    static func threemaCase(_ id: String, _ c: [String: Any]) throws -> VectorResult {
        let op: String = try field(c, "op", id)
        switch op {
        case "metadata-box":
            // Keys → S (crypto_box_beforenm) → MMK → the metadata box of the published protobuf, and
            // the protobuf decodes to the published nickname.
            let want = try hexField(c, "shared_key", id) + hexField(c, "mmk", id) + hexField(c, "box", id)
            return checkOnce("threema", id, expected: want + Array((c["nickname"] as? String ?? "").utf8)) {
                let me = try ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: hexField(c, "sender_secret", id))
                let peer = try ThreemaContact(id: ThreemaID("00000BOB"), publicKey: hexField(c, "receiver_public", id))
                let keys = try PairKeys(identity: me, contact: peer)
                let s = keys.sharedKey.symmetricKey.withUnsafeBytes { Array($0) }
                let mmk = keys.metadataKey.withUnsafeBytes { Array($0) }
                let nonce = try hexField(c, "nonce", id)
                let box = try SecretBox.seal(hexField(c, "plaintext", id), using: keys.metadataKey, nonce: nonce)
                let meta = try MessageMetadata(decoding: SecretBox.open(box, using: keys.metadataKey, nonce: nonce))
                return s + mmk + box + Array((meta.nickname ?? "").utf8)
            }
        case "blake2b-kdf":
            let want = try hexField(c, "out", id)
            return checkOnce("threema", id, expected: want) {
                let salt = try hexField(c, "salt", id)
                let personal = try hexField(c, "personal", id)
                let key = SymmetricKey(data: try hexField(c, "key", id))
                return try ThreemaKDF.derive(key: key, salt: salt, personal: personal, input: try hexField(c, "input", id),
                                         outputByteCount: want.count).withUnsafeBytes { Array($0) }
            }
        case "safe-master-key":
            let want = try hexField(c, "backup_id", id) + hexField(c, "encryption_key", id)
            return checkOnce("threema", id, expected: want) {
                let keys = try SafeKeys(password: try field(c, "password", id), identity: ThreemaID(try field(c, "identity", id)))
                return keys.backupID + keys.encryptionKey.withUnsafeBytes { Array($0) }
            }
        case "android-master-key":
            let want = try hexField(c, "master_key", id)
            return checkOnce("threema", id, expected: want + want) {
                let stored = try ProtectedMasterKey(protectedKey: hexField(c, "protected_key", id), salt: hexField(c, "salt", id),
                                                    verification: hexField(c, "verification", id))
                let master = try stored.unlock(passphrase: try field(c, "passphrase", id))
                let again = try ProtectedMasterKey.protect(masterKey: master, passphrase: try field(c, "passphrase", id),
                                                           salt: hexField(c, "salt", id))
                guard again == stored else { throw VectorFileError.malformed(id, "re-protecting differs") }
                return master.withUnsafeBytes { Array($0) } + SymmetricKey(data: want).withUnsafeBytes { Array($0) }
            }
        case "email-hash":
            let want = try hexField(c, "hash", id)
            return checkOnce("threema", id, expected: want) { AddressBookHash.email(try field(c, "input", id))[0] }
        case "phone-hash":
            let want = try hexField(c, "hash", id)
            return checkOnce("threema", id, expected: want) { try AddressBookHash.phone(try field(c, "input", id)) }
        case "revocation-key":
            let want: String = try field(c, "key", id)
            return checkOnce("threema", id, expected: Array(want.utf8)) {
                Array(DirectoryAuthentication.revocationKey(password: try field(c, "password", id)).utf8)
            }
        case "3mid":
            let payload: String = try field(c, "payload", id)
            return checkOnce("threema", id, expected: Array(payload.utf8) + (try hexField(c, "public_key", id))) {
                let qr = try ContactQRCode(parsing: payload)
                guard qr.id.string == (try field(c, "identity", id) as String) else {
                    throw VectorFileError.malformed(id, "identity")
                }
                return Array(qr.payload.utf8) + qr.publicKey
            }
        case "envelope":
            // Seal with the same nonce and padding must give the envelope byte for byte; the
            // receiver must open it to the same fields.
            let want = try hexField(c, "envelope", id)
            let body = try hexField(c, "body", id)
            return checkOnce("threema", id, expected: want + body) {
                let alice = try ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: hexField(c, "sender_secret", id))
                let bob = try ThreemaIdentity(id: ThreemaID("00000BOB"), privateKey: hexField(c, "receiver_secret", id))
                let legacy = (try field(c, "format", id) as String) == "legacy"
                var rng = SplitMix64(seed: 0x3E5A)  // the case fixes the message ID, the nonce and the padding
                let msg = OutgoingMessage(
                    type: MessageType(rawValue: UInt8(try intField(c, "type", id))), body: body,
                    createdAt: UInt64(try intField(c, "created_at_ms", id)),
                    flags: MessageFlags(rawValue: UInt8(try intField(c, "flags", id))),
                    nickname: try field(c, "nickname", id), messageID: (c["message_id"] as? NSNumber)?.uint64Value,
                    using: &rng)
                let sealed = try EndToEnd.seal(msg, from: alice, keys: PairKeys(identity: alice, contact: bob.contact),
                                               format: legacy ? .legacy : .withMetadata, nonce: hexField(c, "nonce", id),
                                               paddingLength: intField(c, "padding", id)).encoded
                var store = InMemoryNonceStore()
                let opened = try MessageEnvelope(parsing: want).open(
                    as: bob, keys: PairKeys(identity: bob, contact: alice.contact), nonceStore: &store)
                guard opened.nickname == (try field(c, "nickname", id) as String), opened.messageID == msg.messageID,
                      opened.createdAt == (legacy ? msg.createdAt / 1000 * 1000 : msg.createdAt),
                      opened.container.type == msg.container.type, opened.metadata == nil ? legacy : !legacy
                else { throw VectorFileError.malformed(id, "opened fields differ") }
                return sealed + opened.container.body
            }
        case "id-backup":
            // Decode the published text (and a lower-case, dash-free retyping of it); re-encoding
            // with the backup's own salt must give the published text back (legacy scheme and
            // version 1).
            let text: String = try field(c, "backup", id)
            let want = Array((try field(c, "identity", id) as String).utf8) + (try hexField(c, "secret_key", id))
            return checkOnce("threema", id, expected: want + want + Array(text.utf8)) {
                let password: String = try field(c, "password", id)
                let a = try IDBackup.decode(text, password: password)
                let b = try IDBackup.decode(text.lowercased().split(separator: "-").joined(), password: password)
                let raw = try Base32.decode(text, mode: .lenient)
                let again = raw.count == IDBackup.legacyByteCount
                    ? try IDBackup.encode(identity: a, password: password, salt: Array(raw.prefix(8)))
                    : try IDBackup.encodeVersion1(identity: a, password: password, salt: Array(raw[1..<9]))
                return a.id.bytes + a.privateKey.rawRepresentation + b.id.bytes + b.privateKey.rawRepresentation + Array(again.utf8)
            }
        case "directory-response":
            let want = try hexField(c, "response", id)
            return checkOnce("threema", id, expected: want) {
                let me = try ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: hexField(c, "secret", id))
                return try DirectoryAuthentication.challengeResponse(
                    token: hexField(c, "token", id),
                    serverPublicKey: .init(rawRepresentation: hexField(c, "server_public", id)), identity: me)
            }
        case "login-vouch":
            let want = try hexField(c, "vouch", id)
            return checkOnce("threema", id, expected: want) {
                let me = try ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: hexField(c, "secret", id))
                return try DirectoryAuthentication.loginVouch(
                    identity: me,
                    serverPermanentKey: .init(rawRepresentation: hexField(c, "server_permanent_public", id)),
                    serverTemporaryKey: .init(rawRepresentation: hexField(c, "server_temporary_public", id)),
                    serverCookie: hexField(c, "server_cookie", id),
                    clientTemporaryKey: .init(rawRepresentation: hexField(c, "client_temporary_public", id)))
            }
        case "ibex-ratchet":
            // The published KDFRatchetTest: the message key after 1 and after 100 turns.
            let turns = (c["turns"] as? [Int]) ?? []
            let keys = try ((c["encryption_keys"] as? [String]) ?? []).map { try hexField(["key": $0], "key", id) }
            guard !turns.isEmpty, turns.count == keys.count else { throw VectorFileError.malformed(id, "turns/keys") }
            return checkOnce("threema", id, expected: keys.flatMap { $0 }) {
                var ratchet = try Ibex.KDFRatchet(counter: 0, chainKey: SymmetricKey(data: try hexField(c, "chain_key", id)))
                var out: [UInt8] = []
                for t in turns {
                    try ratchet.turn(until: UInt64(t))
                    out += ratchet.currentEncryptionKey.withUnsafeBytes { Array($0) }
                }
                return out
            }
        case "ibex-session":
            // From the four secret keys alone: the DH values, the three root keys and message keys
            // (through the public key-derivation API), and a whole session: Alice initiates, Bob
            // receives the Init and accepts, Alice processes the Accept; her first 4DH message must
            // carry the expected encrypted inner and Bob must decrypt it.
            let names = ["ss", "se", "es", "ee", "alice_2dh_root", "alice_4dh_root", "bob_4dh_root",
                         "alice_2dh_message_key_1", "alice_4dh_message_key_1", "alice_4dh_message_key_2",
                         "bob_4dh_message_key_1", "alice_4dh_encrypted_inner_1", "inner"]
            let want = try names.flatMap { try hexField(c, $0, id) }
            return checkOnce("threema", id, expected: want) {
                let alice = try ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: hexField(c, "alice_secret", id))
                let bob = try ThreemaIdentity(id: ThreemaID("00000BOB"), privateKey: hexField(c, "bob_secret", id))
                let aFS = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: hexField(c, "alice_fssk_secret", id))
                let bFS = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: hexField(c, "bob_fssk_secret", id))
                func raw(_ k: SymmetricKey?) -> [UInt8] { k?.withUnsafeBytes { Array($0) } ?? [] }
                let si = try Ibex.SharedSecrets.initiator(identity: alice, peer: bob.contact, ephemeral: aFS, peerEphemeral: bFS.publicKey)
                let sr = try Ibex.SharedSecrets.responder(identity: bob, peer: alice.contact, ephemeral: bFS, peerEphemeral: aFS.publicKey)
                guard raw(si.ss) + raw(si.se) + raw(si.es) + raw(si.ee) == raw(sr.ss) + raw(sr.se) + raw(sr.es) + raw(sr.ee),
                      let rootsA = si.rootKeys4DH(local: alice.id, remote: bob.id),
                      let rootsB = sr.rootKeys4DH(local: bob.id, remote: alice.id),
                      raw(rootsA.local) == raw(rootsB.remote), raw(rootsA.remote) == raw(rootsB.local) else {
                    return []
                }
                let root2 = si.rootKey2DH(initiator: alice.id)
                var r4 = try Ibex.KDFRatchet(chainKey: rootsA.local)
                let mk1 = raw(r4.currentEncryptionKey)
                r4.turn()
                let mk2 = raw(r4.currentEncryptionKey)
                let bobMK1 = raw(try Ibex.KDFRatchet(chainKey: rootsA.remote).currentEncryptionKey)
                let mk2DH = raw(try Ibex.KDFRatchet(chainKey: root2).currentEncryptionKey)

                let sid = [UInt8](repeating: 0x5a, count: 16)
                var (a, initEnvelope) = try Ibex.Session.initiate(identity: alice, peer: bob.contact, sessionID: sid, ephemeral: aFS)
                guard case .initiate(let offer) = try Ibex.Envelope(decoding: initEnvelope.encoded()).content else { return [] }
                var b = try Ibex.Session.receiveInit(offer, sessionID: sid, identity: bob, peer: alice.contact)
                guard case .accept(let acceptOffer) = try Ibex.Envelope(decoding: b.accept(ephemeral: bFS).encoded()).content else { return [] }
                try a.processAccept(acceptOffer)
                let inner = try hexField(c, "inner", id)
                let message = try a.encrypt(type: inner[0], body: Array(inner.dropFirst()))
                guard case .encapsulated(let m) = message.content else { return [] }
                let opened = try b.decrypt(Ibex.Envelope(decoding: message.encoded()))
                return raw(si.ss) + raw(si.se) + raw(si.es) + raw(si.ee) + raw(root2) + raw(rootsA.local) + raw(rootsA.remote)
                    + mk2DH + mk1 + mk2 + bobMK1 + m.encryptedInner + [opened.type] + opened.body
            }
        default:
            throw VectorFileError.malformed(id, "unknown op \(op)")
        }
    }
}
