// Group-call key derivations (Docs/Threema.md §3, §10): every key is BLAKE2b-256 with the
// personalisation "3ma-call"; the call ID is the unkeyed form with salt "i". The per-participant
// media key (PCMK) turns by a hash ratchet when someone joins and is replaced by a fresh random key
// with the next epoch when someone leaves.

import Rampart

/// Namespace of Threema group calls (Docs/Threema.md §10): key derivations, the `GroupCallStart`
/// message and the call ID, participant-to-participant boxes and handshake messages, media-frame
/// encryption.
public enum GroupCall {
    /// The BLAKE2b personalisation of every group-call derivation.
    public static let personal = "3ma-call"
    /// The protocol version the apps announce in `GroupCallStart` (Android `GC_PROTOCOL_VERSION`).
    public static let protocolVersion: UInt32 = 1

    /// The keys every participant derives from the group call key `GCK`: `GCKH`, `GCHK` and `GCSK`.
    /// All are ``SymmetricKey`` values, wiped when the last copy is released.
    public struct Keys: Sendable {
        /// `GCKH = BLAKE2b(key = GCK, salt "#")`: input of every key not derived from `GCK` directly.
        public let keyHash: SymmetricKey
        /// `GCHK = BLAKE2b(key = GCK, salt "h")`: the secretbox key of the `Hello` envelopes.
        public let handshakeKey: SymmetricKey
        /// `GCSK = BLAKE2b(key = GCK, salt "s")`: the secretbox key of the peekable call state.
        public let stateKey: SymmetricKey

        /// Derives the three keys from the 32-byte group call key.
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)`` with ``GroupCallFault/invalidLength(field:length:)``
        ///   (field 2, `GroupCallStart.gck`) unless `gck` has 32 bytes.
        public init(gck: SymmetricKey) throws(ThreemaError) {
            guard gck.byteCount == 32 else { throw .groupCall(.invalidLength(field: 2, length: gck.byteCount)) }
            keyHash = ThreemaKDF.derive(key: gck, salt: "#", personal: GroupCall.personal)
            handshakeKey = ThreemaKDF.derive(key: gck, salt: "h", personal: GroupCall.personal)
            stateKey = ThreemaKDF.derive(key: gck, salt: "s", personal: GroupCall.personal)
        }

        /// `GCAMK = BLAKE2b(key = GCAK, salt "am", input = GCKH)`: the administrator message key of
        /// conference calls, from the 32-byte administrator key `GCAK`.
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)`` unless `gcak` has 32 bytes.
        public func adminMessageKey(gcak: SymmetricKey) throws(ThreemaError) -> SymmetricKey {
            guard gcak.byteCount == 32 else { throw .groupCall(.invalidLength(field: 1, length: gcak.byteCount)) }
            return keyHash.withUnsafeBytes { h in
                ThreemaKDF.derive(key: gcak, salt: "am", personal: GroupCall.personal, input: Array(h))
            }
        }

        /// `GCNHAK = BLAKE2b(key = X25519HSalsa20(own CK.secret, peer CK.public), salt "nha",
        /// input = GCKH)`: the key of the inner box of a normal `Auth` between two Threema users.
        /// Both sides compute the same key (the shared secret is symmetric).
        ///
        /// - Throws: ``ThreemaError/invalidPublicKey`` for a small-order peer key.
        public func normalHandshakeAuthKey(identity: ThreemaIdentity, peer: ThreemaContact) throws(ThreemaError) -> SymmetricKey {
            let s = try Ibex.sharedSecret(identity.privateKey, peer.publicKey)
            return normalHandshakeAuthKey(sharedSecret: s)
        }

        /// `GCNHAK` from an already computed X25519HSalsa20 shared secret (32 bytes).
        public func normalHandshakeAuthKey(sharedSecret: SymmetricKey) -> SymmetricKey {
            keyHash.withUnsafeBytes { h in
                var input = Array(h)
                defer { input.secureWipe() }
                return ThreemaKDF.derive(key: sharedSecret, salt: "nha", personal: GroupCall.personal, input: input)
            }
        }
    }

    /// A participant's media key `PCMK` with its context: the epoch (u8, wraps; a new epoch and a
    /// fresh random key when a participant leaves) and the ratchet counter (u8; one step
    /// `PCMK' = BLAKE2b(key = PCMK, salt "m'")` when a participant joins; at 255 the call ends).
    /// The key bytes live in a ``SymmetricKey`` and are wiped when the last copy is released.
    public struct MediaKey: Sendable, Equatable {
        /// The epoch (0 for the first key, + 1 modulo 256 per leave).
        public let epoch: UInt8
        /// The number of ratchet steps since the epoch began.
        public let ratchetCounter: UInt8
        /// The 32-byte `PCMK` in its current ratchet state.
        public let pcmk: SymmetricKey

        /// A media key from its parts.
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)`` with ``GroupCallFault/invalidLength(field:length:)``
        ///   (field 3, `MediaKey.pcmk`) unless the key has 32 bytes.
        public init(epoch: UInt8, ratchetCounter: UInt8, pcmk: SymmetricKey) throws(ThreemaError) {
            guard pcmk.byteCount == 32 else { throw .groupCall(.invalidLength(field: 3, length: pcmk.byteCount)) }
            self.epoch = epoch
            self.ratchetCounter = ratchetCounter
            self.pcmk = pcmk
        }

        private init(checkedEpoch epoch: UInt8, ratchetCounter: UInt8, pcmk: SymmetricKey) {
            self.epoch = epoch
            self.ratchetCounter = ratchetCounter
            self.pcmk = pcmk
        }

        /// A fresh random key at `epoch` with ratchet counter 0.
        public static func random<R: RandomNumberGenerator>(epoch: UInt8 = 0, using rng: inout R) -> MediaKey {
            MediaKey(checkedEpoch: epoch, ratchetCounter: 0, pcmk: SymmetricKey(size: .bits256, using: &rng))
        }

        /// A fresh random key at `epoch` from the system generator.
        public static func random(epoch: UInt8 = 0) -> MediaKey {
            var rng = SecureRandom()
            return random(epoch: epoch, using: &rng)
        }

        /// The key after one ratchet step (a participant joined): `PCMK'`, counter + 1, same epoch.
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)`` with ``GroupCallFault/ratchetExhausted`` at
        ///   counter 255 (the protocol then ends the call).
        public func ratcheted() throws(ThreemaError) -> MediaKey {
            guard ratchetCounter < 255 else { throw .groupCall(.ratchetExhausted) }
            return MediaKey(checkedEpoch: epoch, ratchetCounter: ratchetCounter + 1,
                            pcmk: ThreemaKDF.derive(key: pcmk, salt: "m'", personal: GroupCall.personal))
        }

        /// The key ratcheted forward until its counter is `target` (at most 255 steps).
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)`` with ``GroupCallFault/ratchetCounterInPast(current:frame:)``
        ///   when `target` is below the counter.
        public func ratcheted(to target: UInt8) throws(ThreemaError) -> MediaKey {
            guard target >= ratchetCounter else {
                throw .groupCall(.ratchetCounterInPast(current: ratchetCounter, frame: target))
            }
            var k = pcmk
            for _ in ratchetCounter..<target { k = ThreemaKDF.derive(key: k, salt: "m'", personal: GroupCall.personal) }
            return MediaKey(checkedEpoch: epoch, ratchetCounter: target, pcmk: k)
        }

        /// The successor after a participant left: a fresh random key with epoch + 1 (wrapping to
        /// 0 after 255) and counter 0. The MFSN of the sender continues; it is not part of the key.
        public func nextEpoch<R: RandomNumberGenerator>(using rng: inout R) -> MediaKey {
            MediaKey.random(epoch: epoch &+ 1, using: &rng)
        }

        /// `PCMFK = BLAKE2b(key = PCMK, salt "mf", input = GCKH)`: the AES-256-GCM frame key.
        public func frameKey(keyHash: SymmetricKey) -> SymmetricKey {
            keyHash.withUnsafeBytes { h in
                var input = Array(h)
                defer { input.secureWipe() }
                return ThreemaKDF.derive(key: pcmk, salt: "mf", personal: GroupCall.personal, input: input)
            }
        }

        /// Keys are equal when epoch, counter and key bytes are (the key compared in constant time).
        public static func == (a: MediaKey, b: MediaKey) -> Bool {
            (a.pcmk == b.pcmk) && a.epoch == b.epoch && a.ratchetCounter == b.ratchetCounter
        }
    }
}
