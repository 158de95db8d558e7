// Ibex shared secrets and root keys as Android and iOS derive them (Docs/Threema.md §1.1, §1.2,
// §7.1): 2DH keys BLAKE2b with the 64 bytes ss ‖ se as the key; 4DH keys BLAKE2b keyed with the
// unkeyed BLAKE2b-512 of ss ‖ se ‖ es ‖ ee.

import Rampart

extension Ibex {
    /// Which side of a session this party is.
    public enum Role: Sendable, Hashable {
        /// SI: sent the `Init`.
        case initiator
        /// SR: received the `Init` and answers with `Accept`.
        case responder
    }

    /// The four X25519HSalsa20 shared secrets of a session, named from the initiator's view
    /// (Docs/Threema.md §1.1), so both sides hold the same four values:
    /// `ss` = CK×CK, `se` = FSSK_SI×CK_SR, `es` = CK_SI×FSSK_SR, `ee` = FSSK×FSSK.
    /// `es` and `ee` are absent on the initiator until the `Accept` arrives.
    public struct SharedSecrets: Sendable {
        /// CK_SI × CK_SR.
        public let ss: SymmetricKey
        /// FSSK_SI × CK_SR.
        public let se: SymmetricKey
        /// CK_SI × FSSK_SR (absent before `Accept` on the initiator).
        public let es: SymmetricKey?
        /// FSSK_SI × FSSK_SR (absent before `Accept` on the initiator).
        public let ee: SymmetricKey?

        /// The secrets from four given values (tests, or a caller with its own X25519).
        public init(ss: SymmetricKey, se: SymmetricKey, es: SymmetricKey?, ee: SymmetricKey?) {
            self.ss = ss
            self.se = se
            self.es = es
            self.ee = ee
        }

        /// The secrets of the initiator: `ss` and `se` at once, `es` and `ee` when the responder's
        /// ephemeral key (`peerEphemeral`, from `Accept`) is known.
        ///
        /// - Throws: ``ThreemaError/invalidPublicKey`` for a small-order peer key.
        public static func initiator(identity: ThreemaIdentity, peer: ThreemaContact,
                                     ephemeral: Curve25519.KeyAgreement.PrivateKey,
                                     peerEphemeral: Curve25519.KeyAgreement.PublicKey?) throws(ThreemaError) -> SharedSecrets {
            let ss = try Ibex.sharedSecret(identity.privateKey, peer.publicKey)
            let se = try Ibex.sharedSecret(ephemeral, peer.publicKey)
            guard let peerEphemeral else { return SharedSecrets(ss: ss, se: se, es: nil, ee: nil) }
            return SharedSecrets(ss: ss, se: se,
                                 es: try Ibex.sharedSecret(identity.privateKey, peerEphemeral),
                                 ee: try Ibex.sharedSecret(ephemeral, peerEphemeral))
        }

        /// The secrets of the responder, all four at once (the initiator's ephemeral key comes in
        /// `Init`).
        ///
        /// - Throws: ``ThreemaError/invalidPublicKey`` for a small-order peer key.
        public static func responder(identity: ThreemaIdentity, peer: ThreemaContact,
                                     ephemeral: Curve25519.KeyAgreement.PrivateKey,
                                     peerEphemeral: Curve25519.KeyAgreement.PublicKey) throws(ThreemaError) -> SharedSecrets {
            SharedSecrets(ss: try Ibex.sharedSecret(identity.privateKey, peer.publicKey),
                          se: try Ibex.sharedSecret(identity.privateKey, peerEphemeral),
                          es: try Ibex.sharedSecret(ephemeral, peer.publicKey),
                          ee: try Ibex.sharedSecret(ephemeral, peerEphemeral))
        }

        /// The 2DH root key (initiator → responder): `BLAKE2b(key = ss ‖ se, salt "ke-2dh-" ‖
        /// initiator, personal "3ma-e2e")`, the 64 concatenated bytes as the **key** as the apps
        /// do (Docs/Threema.md §1.2, §7.1). `initiator` is the initiator's ID on both sides.
        public func rootKey2DH(initiator: ThreemaID) -> SymmetricKey {
            var material = [UInt8](repeating: 0, count: 64)
            material.withUnsafeMutableBytes { m in
                ss.withUnsafeBytes { m[0..<32].copyBytes(from: $0) }
                se.withUnsafeBytes { m[32..<64].copyBytes(from: $0) }
            }
            let key = SymmetricKey(data: material)
            material.secureWipe()
            return ThreemaKDF.derive(key: key, salt: "ke-2dh-" + initiator.string, personal: Ibex.personal)
        }

        /// The 64-byte intermediate of the 4DH keys: unkeyed BLAKE2b-512 of `ss ‖ se ‖ es ‖ ee`,
        /// or `nil` before `es` and `ee` are known.
        public var intermediate4DH: SymmetricKey? {
            guard let es, let ee else { return nil }
            var h = try! BLAKE2b(outputByteCount: 64)   // 64 is a valid output length
            for k in [ss, se, es, ee] { k.withUnsafeBytes { h.update(bufferPointer: $0) } }
            return h.finalize().withUnsafeBytes { SymmetricKey(data: $0) }
        }

        /// The 4DH root keys: `BLAKE2b(key = intermediate, salt "ke-4dh-" ‖ ID, personal "3ma-e2e")`
        /// with this side's ID for `local` (what this side sends) and the peer's for `remote`, or
        /// `nil` before `es` and `ee` are known.
        public func rootKeys4DH(local: ThreemaID, remote: ThreemaID) -> (local: SymmetricKey, remote: SymmetricKey)? {
            guard let i = intermediate4DH else { return nil }
            return (ThreemaKDF.derive(key: i, salt: "ke-4dh-" + local.string, personal: Ibex.personal),
                    ThreemaKDF.derive(key: i, salt: "ke-4dh-" + remote.string, personal: Ibex.personal))
        }
    }

    /// `X25519HSalsa20(secret, peer)` (`crypto_box_beforenm`, Docs/Threema.md §0.2).
    ///
    /// - Throws: ``ThreemaError/invalidPublicKey`` for a small-order peer key.
    public static func sharedSecret(_ secret: Curve25519.KeyAgreement.PrivateKey,
                                    _ peer: Curve25519.KeyAgreement.PublicKey) throws(ThreemaError) -> SymmetricKey {
        try PairKeys.sharedKey(secret, peer).symmetricKey
    }
}
