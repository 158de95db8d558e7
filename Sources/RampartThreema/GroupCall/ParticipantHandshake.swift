// The participant-to-participant handshake of a group call scoped to a Threema group
// (Docs/Threema.md §10.1, `group-call.proto` "Handshake"), sans I/O, per remote participant:
//
//     NP ----- Hello ---> EP        (under GCHK, random nonce in front)
//     NP <---- Hello ---- EP
//     NP <---- Auth ----- EP        (in the participant channel, the envelope itself under GCNHAK)
//     NP ----- Auth ----> EP
//
// States as the protocol names them: an existing participant (EP) waits for the new participant's
// hello (`await-np-hello`) and answers with Hello and Auth at once; a new participant (NP) sends its
// hello and waits for the EP's (`await-ep-hello`), then answers with Auth; both then wait for the
// other's Auth (`await-auth`) and are `done`. Calls scoped to a group admit no guests, so
// `GuestHello` is refused, and only group members (the caller's lookup) may say hello.

import Rampart

extension GroupCall {
    /// The handshake with one remote participant. A value type: every refused message leaves it
    /// unchanged. When ``state`` is ``State/done``, ``channel`` is the encrypted channel for the
    /// post-handshake envelopes (take it out and use it from then on) and ``peerMediaKeys`` the
    /// media keys to decrypt the peer's frames with.
    public struct ParticipantHandshake: Sendable {
        /// The handshake states of `group-call.proto`.
        public enum State: Sendable, Hashable {
            /// Existing participant, waiting for the new participant's `Hello` (`await-np-hello`).
            case awaitNPHello
            /// New participant, own `Hello` sent, waiting for the existing one's (`await-ep-hello`).
            case awaitEPHello
            /// Hellos exchanged, waiting for the peer's `Auth` (`await-auth`).
            case awaitAuth
            /// Authenticated both ways.
            case done
        }

        /// The current state.
        public private(set) var state: State
        /// The channel once both hellos are known (``State/awaitAuth`` and ``State/done``).
        public private(set) var channel: ParticipantChannel?
        /// The peer's identity (from its `Hello`, checked against the group), once known.
        public private(set) var peer: ThreemaContact?
        /// The peer's nickname from its `Hello`.
        public private(set) var peerNickname: String?
        /// The peer's applied and pending media keys from its `Auth` (``State/done``).
        public private(set) var peerMediaKeys: [MediaKey] = []

        private let keys: Keys
        private let identity: ThreemaIdentity
        private let nickname: String
        private let localKey: Curve25519.KeyAgreement.PrivateKey
        private let localCookie: [UInt8]
        private var authKey: SymmetricKey?

        private init(state: State, keys: Keys, identity: ThreemaIdentity, nickname: String,
                     localKey: Curve25519.KeyAgreement.PrivateKey, localCookie: [UInt8]) throws(ThreemaError) {
            guard localCookie.count == GroupCall.cookieByteCount else {
                throw .groupCall(.invalidLength(field: 4, length: localCookie.count))
            }
            self.state = state
            self.keys = keys
            self.identity = identity
            self.nickname = nickname
            self.localKey = localKey
            self.localCookie = localCookie
        }

        /// Starts the handshake as the new participant towards an existing one: the state is
        /// ``State/awaitEPHello`` and the returned bytes are the sealed `Hello` to send (as the
        /// `encrypted_data` of an `OuterEnvelope`).
        ///
        /// - Parameters:
        ///   - localKey: this side's ephemeral `PCK` (may be the same towards every participant).
        ///   - localCookie: this side's 16-byte `PCCK` towards this participant.
        /// - Throws: ``GroupCallFault/invalidLength(field:length:)`` for a cookie that is not 16 bytes.
        public static func startAsNewParticipant<R: RandomNumberGenerator>(
            keys: Keys, identity: ThreemaIdentity, nickname: String,
            localKey: Curve25519.KeyAgreement.PrivateKey, localCookie: [UInt8], using rng: inout R
        ) throws(ThreemaError) -> (handshake: ParticipantHandshake, hello: [UInt8]) {
            let h = try ParticipantHandshake(state: .awaitEPHello, keys: keys, identity: identity, nickname: nickname,
                                             localKey: localKey, localCookie: localCookie)
            return (h, try h.sealedHello(using: &rng))
        }

        /// Prepares the handshake as an existing participant after the SFU announced a new one
        /// (state ``State/awaitNPHello``; the new participant speaks first).
        ///
        /// - Throws: ``GroupCallFault/invalidLength(field:length:)`` for a cookie that is not 16 bytes.
        public init(awaitingNewParticipant keys: Keys, identity: ThreemaIdentity, nickname: String,
                    localKey: Curve25519.KeyAgreement.PrivateKey, localCookie: [UInt8]) throws(ThreemaError) {
            try self.init(state: .awaitNPHello, keys: keys, identity: identity, nickname: nickname,
                          localKey: localKey, localCookie: localCookie)
        }

        private func sealedHello<R: RandomNumberGenerator>(using rng: inout R) throws(ThreemaError) -> [UInt8] {
            let hello = Hello(identity: identity.id, nickname: nickname,
                              pck: localKey.publicKey.rawRepresentation, pcck: localCookie)
            return try keys.sealHello(HelloEnvelope(content: .hello(hello)), using: &rng)
        }

        /// Processes one handshake message (`encrypted_data`) from the peer and returns the
        /// messages to send back, in order.
        ///
        /// - Parameters:
        ///   - member: the group's member with this Threema ID (including this side's own ID, for
        ///     a second device), or `nil` when the ID is not a member.
        ///   - mediaKeys: this side's applied media key followed by any pending ones, for the
        ///     `Auth` this side may send.
        /// - Throws: ``ThreemaError/authenticationFailed`` (a box that does not verify, a replay),
        ///   ``ThreemaError/groupCall(_:)`` (``GroupCallFault/wrongHandshakeVariant`` for a guest
        ///   hello, ``GroupCallFault/notAGroupMember``, ``GroupCallFault/reflectedCookie``,
        ///   ``GroupCallFault/reflectedPublicKey``, ``GroupCallFault/authMismatch``,
        ///   ``GroupCallFault/missingMediaKeys``, ``GroupCallFault/unexpectedHandshakeMessage``,
        ///   decoding faults), ``ThreemaError/invalidPublicKey``. The handshake is unchanged.
        public mutating func receive<R: RandomNumberGenerator>(
            _ data: [UInt8], member: (ThreemaID) -> ThreemaContact?, mediaKeys: [MediaKey], using rng: inout R
        ) throws(ThreemaError) -> [[UInt8]] {
            switch state {
            case .awaitNPHello, .awaitEPHello:
                guard !mediaKeys.isEmpty else { throw .groupCall(.missingMediaKeys) }
                let envelope = try keys.openHello(data)
                guard case .hello(let hello) = envelope.content else { throw .groupCall(.wrongHandshakeVariant) }
                guard let contact = member(hello.identity), contact.id == hello.identity else {
                    throw .groupCall(.notAGroupMember)
                }
                var ch = try ParticipantChannel(localKey: localKey, localCookie: localCookie,
                                                remotePublicKey: hello.pck, remoteCookie: hello.pcck)
                let gcnhak = try keys.normalHandshakeAuthKey(identity: identity, peer: contact)
                var out: [[UInt8]] = []
                if state == .awaitNPHello { out.append(try sealedHello(using: &rng)) }
                let auth = Auth(pck: hello.pck, pcck: hello.pcck, mediaKeys: mediaKeys)
                out.append(try ch.sealAuth(AuthEnvelope(content: .auth(auth)), gcnhak: gcnhak, using: &rng))
                channel = ch
                authKey = gcnhak
                peer = contact
                peerNickname = hello.nickname
                state = .awaitAuth
                return out
            case .awaitAuth:
                guard var ch = channel, let authKey else { throw .groupCall(.unexpectedHandshakeMessage) }
                let envelope = try ch.openAuth(data, gcnhak: authKey)
                guard case .auth(let auth) = envelope.content else { throw .groupCall(.wrongHandshakeVariant) }
                guard !auth.mediaKeys.isEmpty else { throw .groupCall(.missingMediaKeys) }
                channel = ch
                peerMediaKeys = auth.mediaKeys
                self.authKey = nil
                state = .done
                return []
            case .done:
                throw .groupCall(.unexpectedHandshakeMessage)
            }
        }
    }
}
