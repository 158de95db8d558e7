// Participant-to-participant encryption of group calls (Docs/Threema.md §10):
//
// * boxes after the hellos: XSalsa20-Poly1305 under X25519HSalsa20(own PCK, peer PCK) with the
//   nonce cookie (16) ‖ u64-LE sequence number, the numbers starting at 1, one counter per
//   direction (each side's own cookie for what it sends);
// * the `Hello` envelope and the call state: secretbox under GCHK / GCSK with a random 24-byte nonce
//   placed in front of the box;
// * the normal `Auth`: an inner secretbox under GCNHAK (random nonce in front) carried inside the
//   channel box.
//
// Sequence numbers are not on the wire: a message sealed with a number the receiver does not
// expect (a replay, a skipped or reordered message) fails authentication. A refused message never
// moves the receiving counter.

import Rampart

extension GroupCall {
    /// Seals `plaintext` with a fresh random nonce: `nonce (24) ‖ tag (16) ‖ ciphertext` (the form
    /// of the `Hello` envelope under GCHK, the call state under GCSK and the inner `Auth` box under
    /// GCNHAK).
    ///
    /// - Throws: ``ThreemaError/invalidArgument(_:)`` unless the key has 32 bytes.
    public static func sealWithRandomNonce<R: RandomNumberGenerator>(_ plaintext: [UInt8], key: SymmetricKey,
                                                                     using rng: inout R) throws(ThreemaError) -> [UInt8] {
        guard key.byteCount == 32 else { throw .invalidArgument("a secretbox key has 32 bytes") }
        let nonce = randomBytes(SecretBox.nonceByteCount, using: &rng)
        do { return nonce + (try SecretBox.seal(plaintext, using: key, nonce: nonce)) } catch {
            throw .invalidArgument("secretbox: \(error)")
        }
    }

    /// Opens `nonce (24) ‖ tag (16) ‖ ciphertext`.
    ///
    /// - Throws: ``ThreemaError/groupCall(_:)`` with ``GroupCallFault/boxTooShort(_:)`` below 40
    ///   bytes, ``ThreemaError/authenticationFailed`` when the box does not verify (nothing is
    ///   released), ``ThreemaError/invalidArgument(_:)`` for a key that is not 32 bytes.
    public static func openWithPrependedNonce<C: Collection<UInt8>>(_ sealed: C, key: SymmetricKey) throws(ThreemaError) -> [UInt8] {
        guard key.byteCount == 32 else { throw .invalidArgument("a secretbox key has 32 bytes") }
        let bytes = Array(sealed)
        guard bytes.count >= SecretBox.nonceByteCount + SecretBox.tagByteCount else { throw .groupCall(.boxTooShort(bytes.count)) }
        do {
            return try SecretBox.open(bytes[SecretBox.nonceByteCount...], using: key, nonce: bytes[..<SecretBox.nonceByteCount])
        } catch { throw .authenticationFailed }
    }
}

extension GroupCall.Keys {
    /// Seals a `HelloEnvelope` under `GCHK` (random nonce ‖ box): the first message each side sends.
    ///
    /// - Throws: as ``GroupCall/HelloEnvelope/encoded()``.
    public func sealHello<R: RandomNumberGenerator>(_ envelope: GroupCall.HelloEnvelope, using rng: inout R) throws(ThreemaError) -> [UInt8] {
        try GroupCall.sealWithRandomNonce(try envelope.encoded(), key: handshakeKey, using: &rng)
    }

    /// Opens and decodes a `HelloEnvelope` sealed under `GCHK`.
    ///
    /// - Throws: ``ThreemaError/authenticationFailed``, or ``ThreemaError/groupCall(_:)`` for a
    ///   short box or a malformed envelope; never traps.
    public func openHello<C: Collection<UInt8>>(_ sealed: C) throws(ThreemaError) -> GroupCall.HelloEnvelope {
        var plain = try GroupCall.openWithPrependedNonce(sealed, key: handshakeKey)
        defer { plain.secureWipe() }
        return try GroupCall.HelloEnvelope(decoding: plain)
    }

    /// Seals the protobuf bytes of a `CallState` under `GCSK` (random nonce ‖ box), as sent to the
    /// SFU in `UpdateCallState`.
    public func sealCallState<R: RandomNumberGenerator>(_ state: [UInt8], using rng: inout R) throws(ThreemaError) -> [UInt8] {
        try GroupCall.sealWithRandomNonce(state, key: stateKey, using: &rng)
    }

    /// Opens a call state sealed under `GCSK` (the `encrypted_call_state` of a peek); the result is
    /// the `CallState` protobuf, not decoded here.
    ///
    /// - Throws: ``ThreemaError/authenticationFailed`` or ``GroupCallFault/boxTooShort(_:)``.
    public func openCallState<C: Collection<UInt8>>(_ sealed: C) throws(ThreemaError) -> [UInt8] {
        try GroupCall.openWithPrependedNonce(sealed, key: stateKey)
    }
}

extension GroupCall {
    /// The encrypted channel between this participant and one other after the hellos: the box key
    /// `X25519HSalsa20(own PCK.secret, peer PCK.public)`, the two cookies and the two sequence
    /// numbers. A value type: every refused message leaves it unchanged. The key is a
    /// ``SymmetricKey`` and is wiped when the last copy is released.
    public struct ParticipantChannel: Sendable {
        let key: SymmetricKey
        /// This side's 32-byte ephemeral public key `PCK.public` (repeated by the peer's `Auth`).
        public let localPublicKey: [UInt8]
        /// This side's 16-byte cookie: the nonce prefix of what this side sends.
        public let localCookie: [UInt8]
        /// The peer's 16-byte cookie: the nonce prefix of what this side receives.
        public let remoteCookie: [UInt8]
        /// The sequence number the next sealed message uses (starts at 1).
        public private(set) var sendSequenceNumber: UInt64 = 1
        /// The sequence number the next opened message must carry (starts at 1).
        public private(set) var receiveSequenceNumber: UInt64 = 1

        /// A channel from this side's ephemeral key pair and cookie and the peer's hello values.
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)`` with ``GroupCallFault/reflectedCookie`` or
        ///   ``GroupCallFault/reflectedPublicKey`` when the peer's cookie or key equals this side's,
        ///   ``GroupCallFault/invalidLength(field:length:)`` for a cookie that is not 16 bytes or a
        ///   public key that is not 32, ``ThreemaError/invalidPublicKey`` for a small-order peer key.
        public init(localKey: Curve25519.KeyAgreement.PrivateKey, localCookie: [UInt8],
                    remotePublicKey: [UInt8], remoteCookie: [UInt8]) throws(ThreemaError) {
            let localPublic = localKey.publicKey.rawRepresentation
            guard remotePublicKey.count == GroupCall.publicKeyByteCount else {
                throw .groupCall(.invalidLength(field: 3, length: remotePublicKey.count))
            }
            guard !ConstantTime.equals(localPublic, remotePublicKey) else { throw .groupCall(.reflectedPublicKey) }
            let peer: Curve25519.KeyAgreement.PublicKey
            do { peer = try .init(rawRepresentation: remotePublicKey) } catch { throw .invalidPublicKey }
            try self.init(sharedKey: try Ibex.sharedSecret(localKey, peer), localPublicKey: localPublic,
                          localCookie: localCookie, remoteCookie: remoteCookie)
        }

        /// A channel from an already computed box key (tests, or a caller with its own X25519).
        ///
        /// - Throws: as the key-pair form (without the key checks); ``ThreemaError/invalidArgument(_:)``
        ///   for a key that is not 32 bytes.
        public init(sharedKey: SymmetricKey, localPublicKey: [UInt8], localCookie: [UInt8], remoteCookie: [UInt8]) throws(ThreemaError) {
            guard sharedKey.byteCount == 32 else { throw .invalidArgument("a channel key has 32 bytes") }
            guard localCookie.count == GroupCall.cookieByteCount else {
                throw .groupCall(.invalidLength(field: 4, length: localCookie.count))
            }
            guard remoteCookie.count == GroupCall.cookieByteCount else {
                throw .groupCall(.invalidLength(field: 4, length: remoteCookie.count))
            }
            guard !ConstantTime.equals(localCookie, remoteCookie) else { throw .groupCall(.reflectedCookie) }
            key = sharedKey
            self.localPublicKey = localPublicKey
            self.localCookie = localCookie
            self.remoteCookie = remoteCookie
        }

        static func nonce(_ cookie: [UInt8], _ n: UInt64) -> [UInt8] {
            var out = cookie
            withUnsafeBytes(of: n.littleEndian) { out.append(contentsOf: $0) }
            return out
        }

        /// Seals `plaintext` (`tag ‖ ciphertext`) with the nonce `localCookie ‖ sendSequenceNumber`
        /// and advances the sending counter.
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)`` with ``GroupCallFault/sequenceNumberExhausted``
        ///   after 2^64 − 1 messages (nothing sealed).
        public mutating func seal(_ plaintext: [UInt8]) throws(ThreemaError) -> [UInt8] {
            guard sendSequenceNumber < .max else { throw .groupCall(.sequenceNumberExhausted) }
            let box: [UInt8]
            do { box = try SecretBox.seal(plaintext, using: key, nonce: Self.nonce(localCookie, sendSequenceNumber)) } catch {
                throw .invalidArgument("secretbox: \(error)")   // unreachable: key and nonce lengths are fixed
            }
            sendSequenceNumber += 1
            return box
        }

        /// Opens `tag ‖ ciphertext` with the nonce `remoteCookie ‖ receiveSequenceNumber` and, only
        /// when it verifies, advances the receiving counter.
        ///
        /// - Throws: ``ThreemaError/authenticationFailed`` for a tampered box, a box for another
        ///   sequence number (a replayed, skipped or reordered message) or another channel; the
        ///   channel is unchanged. ``GroupCallFault/sequenceNumberExhausted`` at 2^64 − 1.
        public mutating func open<C: Collection<UInt8>>(_ box: C) throws(ThreemaError) -> [UInt8] {
            guard receiveSequenceNumber < .max else { throw .groupCall(.sequenceNumberExhausted) }
            let plain: [UInt8]
            do { plain = try SecretBox.open(box, using: key, nonce: Self.nonce(remoteCookie, receiveSequenceNumber)) } catch {
                throw .authenticationFailed
            }
            receiveSequenceNumber += 1
            return plain
        }

        /// Seals the `AuthEnvelope` for the peer: for a normal `Auth` (`gcnhak` given) the envelope
        /// is first sealed under GCNHAK with a random inner nonce and `innerNonce ‖ innerBox` goes
        /// into the channel box; for a `GuestAuth` (`gcnhak` nil) the envelope goes in directly.
        ///
        /// - Throws: ``GroupCallFault/wrongHandshakeVariant`` when the content does not match
        ///   (`auth` needs a GCNHAK, `guestAuth` must have none), the encoding errors of
        ///   ``GroupCall/AuthEnvelope/encoded()``.
        public mutating func sealAuth<R: RandomNumberGenerator>(_ envelope: AuthEnvelope, gcnhak: SymmetricKey?,
                                                                using rng: inout R) throws(ThreemaError) -> [UInt8] {
            var plain = try envelope.encoded()
            defer { plain.secureWipe() }
            switch (envelope.content, gcnhak) {
            case (.auth, .some(let k)):
                var inner = try GroupCall.sealWithRandomNonce(plain, key: k, using: &rng)
                defer { inner.secureWipe() }
                return try seal(inner)
            case (.guestAuth, .none):
                return try seal(plain)
            default:
                throw .groupCall(.wrongHandshakeVariant)
            }
        }

        /// Opens the peer's `AuthEnvelope` (the inverse of ``sealAuth(_:gcnhak:using:)``) and checks
        /// that it repeats this side's PCK and PCCK. Only a fully valid auth advances the
        /// receiving counter.
        ///
        /// - Throws: ``ThreemaError/authenticationFailed`` (outer or inner box),
        ///   ``GroupCallFault/wrongHandshakeVariant``, ``GroupCallFault/authMismatch``, or a decoding
        ///   fault; the channel is unchanged.
        public mutating func openAuth<C: Collection<UInt8>>(_ box: C, gcnhak: SymmetricKey?) throws(ThreemaError) -> AuthEnvelope {
            var probe = self
            var outer = try probe.open(box)
            defer { outer.secureWipe() }
            let envelope: AuthEnvelope
            if let gcnhak {
                var inner = try GroupCall.openWithPrependedNonce(outer, key: gcnhak)
                defer { inner.secureWipe() }
                envelope = try AuthEnvelope(decoding: inner)
                guard case .auth(let a) = envelope.content else { throw .groupCall(.wrongHandshakeVariant) }
                try check(a)
            } else {
                envelope = try AuthEnvelope(decoding: outer)
                guard case .guestAuth(let a) = envelope.content else { throw .groupCall(.wrongHandshakeVariant) }
                try check(a)
            }
            self = probe
            return envelope
        }

        private func check(_ a: Auth) throws(ThreemaError) {
            let same = ConstantTime.equals(a.pck, localPublicKey) && ConstantTime.equals(a.pcck, localCookie)
            guard same else { throw .groupCall(.authMismatch) }
        }

        /// Seals a post-handshake `Envelope` in the channel.
        public mutating func seal(_ envelope: Envelope) throws(ThreemaError) -> [UInt8] {
            var plain = envelope.encoded
            defer { plain.secureWipe() }
            return try seal(plain)
        }

        /// Opens and decodes a post-handshake `Envelope`; a box that verifies but does not decode
        /// is refused and the channel is unchanged.
        public mutating func openEnvelope<C: Collection<UInt8>>(_ box: C) throws(ThreemaError) -> Envelope {
            var probe = self
            var plain = try probe.open(box)
            defer { plain.secureWipe() }
            let e = try Envelope(decoding: plain)
            self = probe
            return e
        }
    }
}
