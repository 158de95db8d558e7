// One Ibex session between two identities, sans I/O (Docs/Threema.md §1.4, §1.5): the four ratchets,
// the state inferred from which of them exist, and encryption and decryption of the inner message
// (`type ‖ body`, no padding) with XSalsa20-Poly1305 under a zero nonce.
//
// What is here: the key agreement and state transitions L20 → L44 (RL44) for the initiator and
// R20 → R24 → R44 (RL44) for the responder, version negotiation (the common version of both ranges,
// then the 4DH upgrade steps: a higher offered minor raises the outgoing version, a higher applied
// minor the incoming one), encrypt/decrypt with counters and catch-up. Storage, the race rule, the
// 24-hour refresh and Reject/Terminate live one level up, in `Ibex.Processor` (IbexProcessor.swift).

import Rampart

extension Ibex {
    /// The state names the apps use (Docs/Threema.md §1.4); `L44` and `R44` are both ``rl44``.
    public enum State: Sendable, Hashable {
        /// Initiator, `Init` sent: outgoing 2DH, no incoming.
        case l20
        /// Responder, `Init` received, `Accept` not yet sent: incoming 2DH, no outgoing.
        case r20
        /// Responder, `Accept` sent: incoming 2DH (for messages in flight) and 4DH, outgoing 4DH.
        case r24
        /// Bidirectional 4DH.
        case rl44
    }

    /// A session as a value: copy it before a risky step or keep it as is on a thrown error (every
    /// mutating method changes nothing when it throws). Chain keys and the initiator's ephemeral
    /// secret are released, and so wiped, as soon as the state no longer needs them.
    public struct Session: Sendable {
        /// The 16-byte session ID (chosen by the initiator).
        public let sessionID: [UInt8]
        /// This side's identity ID.
        public let ownID: ThreemaID
        /// The peer.
        public let peer: ThreemaContact
        /// This side's role.
        public let role: Role
        /// The version range this side announced (in `Init` or `Accept`).
        public let localVersions: VersionRange
        /// The range the peer announced, once known.
        public private(set) var remoteVersions: VersionRange?
        /// The range this side supports now. It starts as ``localVersions``; raise its maximum
        /// after an upgrade and the 4DH upgrade steps move both directions up with the peer.
        public var supportedVersions: VersionRange
        /// `local-4dhv`: the version applied to outgoing 4DH messages (from the Accept on).
        public private(set) var local4DHVersion: Version?
        /// `remote-4dhv`: the lowest version an incoming 4DH message may apply (from the Accept on).
        public private(set) var remote4DHVersion: Version?
        /// The session's _updated_ mark (seconds since 1970, the caller's clock): set by
        /// ``Ibex/Processor`` whenever a message was sent or received in the session; the 24-hour
        /// refresh looks at it.
        public var updatedAt: UInt64?

        /// Kept for the initiator's `es` (CK_SI × FSSK_SR) once the Accept arrives.
        private let identity: ThreemaIdentity
        private var ephemeral: Curve25519.KeyAgreement.PrivateKey?
        private var peerEphemeral: Curve25519.KeyAgreement.PublicKey?
        private(set) var my2DH: KDFRatchet?
        private(set) var peer2DH: KDFRatchet?
        private(set) var my4DH: KDFRatchet?
        private(set) var peer4DH: KDFRatchet?

        /// The counters of the four ratchets (nil where a ratchet does not exist), for tests and
        /// fuzzing that check a refusal left the session unchanged.
        @_spi(Testing) public var ratchetCountersForTesting: [UInt64?] {
            [my2DH?.counter, peer2DH?.counter, my4DH?.counter, peer4DH?.counter]
        }

        /// The state, inferred from which ratchets exist (§1.4). Only the four legal combinations
        /// can arise through this type's API.
        public var state: State {
            switch (my2DH != nil, peer2DH != nil, my4DH != nil, peer4DH != nil) {
            case (true, false, false, false): return .l20
            case (false, true, false, false): return .r20
            case (false, true, true, true): return .r24
            default: return .rl44
            }
        }

        /// The version of outgoing 4DH messages (`local-4dhv`), once the Accept was sent or received.
        public var negotiatedVersion: Version? { local4DHVersion }

        /// The highest version both ranges contain, or `nil` when they are disjoint or the common
        /// version is not a 1.x version (csp-e2e-fs.proto: such an Init or Accept is discarded).
        public static func commonVersion(_ a: VersionRange, _ b: VersionRange) -> Version? {
            let common = Swift.min(a.max, b.max)
            guard common >= a.min, common >= b.min, common >> 8 == Versions.v1_0 >> 8 else { return nil }
            return common
        }

        private init(sessionID: [UInt8], identity: ThreemaIdentity, peer: ThreemaContact, role: Role,
                     localVersions: VersionRange) {
            self.sessionID = sessionID
            self.identity = identity
            self.ownID = identity.id
            self.peer = peer
            self.role = role
            self.localVersions = localVersions
            self.supportedVersions = localVersions
        }

        // MARK: Initiator

        /// Starts a session as initiator (state ``State/l20``) and returns it with the `Init`
        /// envelope to send.
        ///
        /// - Throws: ``ThreemaError/invalidArgument(_:)`` for a session ID other than 16 bytes or
        ///   `min > max`, ``ThreemaError/invalidPublicKey`` for a small-order peer key.
        public static func initiate(identity: ThreemaIdentity, peer: ThreemaContact, sessionID: [UInt8],
                                    ephemeral: Curve25519.KeyAgreement.PrivateKey,
                                    versions: VersionRange = VersionRange(min: Versions.v1_0, max: Versions.v1_2))
            throws(ThreemaError) -> (session: Session, initEnvelope: Envelope) {
            guard sessionID.count == Envelope.sessionIDLength, versions.min <= versions.max else {
                throw .invalidArgument("a session ID has 16 bytes and a version range min ≤ max")
            }
            let secrets = try SharedSecrets.initiator(identity: identity, peer: peer, ephemeral: ephemeral, peerEphemeral: nil)
            var s = Session(sessionID: sessionID, identity: identity, peer: peer, role: .initiator, localVersions: versions)
            s.ephemeral = ephemeral
            s.my2DH = try KDFRatchet(chainKey: secrets.rootKey2DH(initiator: identity.id))
            let offer = KeyOffer(ephemeralPublicKey: Array(ephemeral.publicKey.rawRepresentation), supportedVersion: versions)
            return (s, Envelope(sessionID: sessionID, content: .initiate(offer)))
        }

        /// Processes the responder's `Accept` (initiator in ``State/l20`` only): derives the 4DH
        /// ratchets, drops the 2DH ratchet and the ephemeral secret, and moves to ``State/rl44``.
        ///
        /// - Throws: ``IbexFault/unexpectedKeyOffer`` in another state or role,
        ///   ``ThreemaError/invalidPublicKey`` for a bad key; the session is unchanged then.
        public mutating func processAccept(_ accept: KeyOffer) throws(ThreemaError) {
            guard role == .initiator, state == .l20, let ephemeral else { throw .ibex(.unexpectedKeyOffer) }
            guard let common = Self.commonVersion(localVersions, accept.effectiveVersionRange) else {
                throw .ibex(.versionMismatch)
            }
            let peerFSSK: Curve25519.KeyAgreement.PublicKey
            do { peerFSSK = try .init(rawRepresentation: accept.ephemeralPublicKey) } catch { throw .invalidPublicKey }
            let secrets = try SharedSecrets.initiator(identity: identity, peer: peer, ephemeral: ephemeral, peerEphemeral: peerFSSK)
            guard let keys = secrets.rootKeys4DH(local: ownID, remote: peer.id) else { throw .ibex(.unexpectedKeyOffer) }
            let mine = try KDFRatchet(chainKey: keys.local)
            let theirs = try KDFRatchet(chainKey: keys.remote)
            my4DH = mine
            peer4DH = theirs
            my2DH = nil
            self.ephemeral = nil
            remoteVersions = accept.effectiveVersionRange
            local4DHVersion = common
            remote4DHVersion = common
        }

        // MARK: Responder

        /// Creates the responder's session from a received `Init` (state ``State/r20``): the peer's
        /// 2DH ratchet only. Call ``accept(ephemeral:versions:)`` before sending.
        ///
        /// - Throws: ``ThreemaError/invalidPublicKey`` for a bad key,
        ///   ``ThreemaError/invalidArgument(_:)`` for a session ID other than 16 bytes,
        ///   ``IbexFault/versionMismatch`` when the offered range shares no version with `versions`.
        public static func receiveInit(_ offer: KeyOffer, sessionID: [UInt8], identity: ThreemaIdentity,
                                       peer: ThreemaContact,
                                       versions: VersionRange = VersionRange(min: Versions.v1_0, max: Versions.v1_2))
            throws(ThreemaError) -> Session {
            guard sessionID.count == Envelope.sessionIDLength, versions.min <= versions.max else {
                throw .invalidArgument("a session ID has 16 bytes and a version range min ≤ max")
            }
            guard commonVersion(versions, offer.effectiveVersionRange) != nil else { throw .ibex(.versionMismatch) }
            let peerFSSK: Curve25519.KeyAgreement.PublicKey
            do { peerFSSK = try .init(rawRepresentation: offer.ephemeralPublicKey) } catch { throw .invalidPublicKey }
            let ss = try Ibex.sharedSecret(identity.privateKey, peer.publicKey)
            let se = try Ibex.sharedSecret(identity.privateKey, peerFSSK)
            let root = SharedSecrets(ss: ss, se: se, es: nil, ee: nil).rootKey2DH(initiator: peer.id)
            var s = Session(sessionID: sessionID, identity: identity, peer: peer, role: .responder, localVersions: versions)
            s.peerEphemeral = peerFSSK
            s.peer2DH = try KDFRatchet(chainKey: root)
            s.remoteVersions = offer.effectiveVersionRange
            return s
        }

        /// Chooses this side's ephemeral key (responder in ``State/r20`` only), derives the 4DH
        /// ratchets and returns the `Accept` envelope; the state becomes ``State/r24``.
        ///
        /// - Throws: ``IbexFault/unexpectedKeyOffer`` in another state or role,
        ///   ``ThreemaError/invalidPublicKey``; the session is unchanged then.
        public mutating func accept(ephemeral: Curve25519.KeyAgreement.PrivateKey) throws(ThreemaError) -> Envelope {
            guard role == .responder, state == .r20, let peerEphemeral, let remoteVersions,
                  let common = Self.commonVersion(localVersions, remoteVersions) else { throw .ibex(.unexpectedKeyOffer) }
            let secrets = try SharedSecrets.responder(identity: identity, peer: peer, ephemeral: ephemeral, peerEphemeral: peerEphemeral)
            guard let keys = secrets.rootKeys4DH(local: ownID, remote: peer.id) else { throw .ibex(.unexpectedKeyOffer) }
            let mine = try KDFRatchet(chainKey: keys.local)
            let theirs = try KDFRatchet(chainKey: keys.remote)
            my4DH = mine
            peer4DH = theirs
            self.peerEphemeral = nil
            local4DHVersion = common
            remote4DHVersion = common
            let offer = KeyOffer(ephemeralPublicKey: Array(ephemeral.publicKey.rawRepresentation), supportedVersion: localVersions)
            return Envelope(sessionID: sessionID, content: .accept(offer))
        }

        // MARK: Messages

        /// Encrypts `type ‖ body` with the sending ratchet of the current state (2DH in
        /// ``State/l20``, 4DH in ``State/r24`` and ``State/rl44``) and turns that ratchet.
        ///
        /// - Throws: ``IbexFault/stateMismatch`` in ``State/r20`` (nothing to send with).
        public mutating func encrypt(type: UInt8, body: [UInt8], groupIdentity: GroupIdentity? = nil)
            throws(ThreemaError) -> Envelope {
            let dhType: DHType
            var ratchet: KDFRatchet
            let offered: Version, applied: Version
            if let r = my4DH, let v = local4DHVersion {
                // Offer the highest version supported now, apply the negotiated one (the peer raises
                // its outgoing version when it sees a higher offered minor).
                (dhType, ratchet, offered, applied) = (.fourDH, r, Swift.max(supportedVersions.max, v), v)
            } else if let r = my2DH {
                // 2DH messages stay at the Init's minimum: the responder's range is not known yet.
                (dhType, ratchet, offered, applied) = (.twoDH, r, localVersions.min, localVersions.min)
            } else {
                throw .ibex(.stateMismatch)
            }
            // `tag ‖ ciphertext` in one buffer: type and body are copied behind the tag's 16 bytes and
            // sealed in place (the layout of crypto_secretbox_easy).
            let sealed = [UInt8](unsafeUninitializedCapacity: 17 + body.count) { buffer, count in
                let b = UnsafeMutableRawPointer(buffer.baseAddress!)
                b.storeBytes(of: type, toByteOffset: 16, as: UInt8.self)
                body.withUnsafeBytes { if let p = $0.baseAddress { (b + 17).copyMemory(from: p, byteCount: $0.count) } }
                // The message key is derived into temporary memory and wiped after the seal.
                ratchet.withCurrentEncryptionKey { key in
                    Ibex.zeroNonce.withUnsafeBytes { n in
                        SecretBox.seal(inPlace: b + 16, count: 1 + body.count, tag: b, key: key, nonce: n.baseAddress!)
                    }
                }
                count = 17 + body.count
            }
            let message = Encapsulated(dhType: dhType, counter: ratchet.counter, encryptedInner: sealed,
                                       offeredVersion: offered, appliedVersion: applied, groupIdentity: groupIdentity)
            // Nothing can fail from here: the session's copy is dropped first, so that the ratchet
            // owns its chain key alone and turns it in place.
            if dhType == .fourDH { my4DH = nil } else { my2DH = nil }
            ratchet.turn()
            if dhType == .fourDH { my4DH = ratchet } else { my2DH = ratchet }
            return Envelope(sessionID: sessionID, content: .encapsulated(message))
        }

        /// Decrypts an encapsulated message with the receiving ratchet its DH type names, turning
        /// the ratchet up to the message's counter (at most ``KDFRatchet/maxCounterIncrement``
        /// steps) and, after authentication, once more: the key of a decrypted message is gone, so
        /// a replay fails with ``IbexFault/counterInPast(ratchet:message:)``. The first 4DH message
        /// in ``State/r24`` drops the 2DH ratchet (→ ``State/rl44``).
        ///
        /// Versions (csp-e2e-fs.proto, `Encapsulated` receive steps 4–8): a 2DH message carries the
        /// Init's minimum as offered and applied version. A 4DH message must offer a version of the
        /// same major no lower than ``local4DHVersion`` and apply one no lower than
        /// ``remote4DHVersion`` and no higher than ``supportedVersions``; a higher applied minor
        /// raises ``remote4DHVersion``, a higher offered minor raises ``local4DHVersion`` to the
        /// highest version both support, and then ``DecryptedMessage/outgoingVersionRaised`` asks
        /// the caller to send an `empty` (0xfc) message at once so that the peer learns it. Both
        /// changes happen only after authentication.
        ///
        /// - Throws: ``ThreemaError/authenticationFailed``, ``ThreemaError/ibex(_:)``
        ///   (``IbexFault/stateMismatch``, ``IbexFault/versionMismatch``, ``IbexFault/emptyInner``,
        ///   counter faults). The session is unchanged whenever it throws.
        public mutating func decrypt(_ message: Encapsulated) throws(ThreemaError) -> DecryptedMessage {
            let offered = message.effectiveOfferedVersion, applied = message.effectiveAppliedVersion
            guard applied <= offered else { throw .ibex(.versionMismatch) }
            var ratchet: KDFRatchet
            var newLocal: Version? = nil, newRemote: Version? = nil
            switch message.dhType {
            case .twoDH:
                guard let r = peer2DH, let range = remoteVersions else { throw .ibex(.stateMismatch) }
                guard offered == range.min, applied == range.min else { throw .ibex(.versionMismatch) }
                ratchet = r
            case .fourDH:
                guard let r = peer4DH, let l4 = local4DHVersion, let r4 = remote4DHVersion else {
                    throw .ibex(.stateMismatch)
                }
                guard offered >> 8 == l4 >> 8, offered >= l4 else { throw .ibex(.versionMismatch) }
                if offered & 0xff > l4 & 0xff {
                    let common = Swift.min(offered, supportedVersions.max)
                    if common > l4 { newLocal = common }
                }
                guard applied >> 8 == r4 >> 8, applied >= r4, applied <= supportedVersions.max else {
                    throw .ibex(.versionMismatch)
                }
                if applied > r4 { newRemote = applied }
                ratchet = r
            }
            try ratchet.turn(until: message.counter)
            let plaintext: [UInt8]
            do {
                plaintext = try SecretBox.open(message.encryptedInner, using: ratchet.currentEncryptionKey, nonce: Ibex.zeroNonce)
            } catch {
                throw .authenticationFailed
            }
            // Public by design from here: the authenticated inner message, which the receiver
            // parses (type, body). Tells the constant-time checker; no effect otherwise.
            plaintext.withUnsafeBytes { if let p = $0.baseAddress { declassify(p, $0.count) } }
            guard let type = plaintext.first else { throw .ibex(.emptyInner) }
            ratchet.turn()
            switch message.dhType {
            case .twoDH: peer2DH = ratchet
            case .fourDH:
                peer4DH = ratchet
                peer2DH = nil
                if let newLocal { local4DHVersion = newLocal }
                if let newRemote { remote4DHVersion = newRemote }
            }
            return DecryptedMessage(type: type, body: Array(plaintext.dropFirst()), dhType: message.dhType,
                                    outgoingVersionRaised: newLocal != nil)
        }

        /// Decrypts the content of an envelope addressed to this session.
        ///
        /// - Throws: ``IbexFault/stateMismatch`` for another session ID or a non-encapsulated
        ///   content, and everything ``decrypt(_:)`` throws.
        public mutating func decrypt(_ envelope: Envelope) throws(ThreemaError) -> DecryptedMessage {
            guard envelope.sessionID == sessionID, case .encapsulated(let m) = envelope.content else {
                throw .ibex(.stateMismatch)
            }
            return try decrypt(m)
        }
    }

    /// The inner message of an encapsulated message, after authentication.
    public struct DecryptedMessage: Sendable, Hashable {
        /// The inner message type (never 0xa0 from a well-behaved peer).
        public var type: UInt8
        /// The inner message body (the e2e container without padding, after the type byte).
        public var body: [UInt8]
        /// The DH mode the message was encrypted in.
        public var dhType: DHType
        /// The outgoing 4DH version was raised by this message: send an `empty` (0xfc) message in
        /// the session now so that the peer applies the new version too.
        public var outgoingVersionRaised: Bool
    }

    /// The fixed 24-byte zero nonce of `encrypted_inner` (each message key is used once).
    static let zeroNonce = [UInt8](repeating: 0, count: 24)
}

// MARK: - Snapshot

extension Ibex.Session {
    /// `TIBS`.
    public static let snapshotType = SnapshotType("TIBS")

    /// Snapshot (type `TIBS`, version 1, Docs/Snapshots.md §4): the session ID (16 bytes), this side's
    /// ID and the peer's ID and public key (8 + 8 + 32 bytes), the role (uint8: 0 initiator, 1
    /// responder), the local, remote (optional) and supported version ranges (uint32 pairs), the local
    /// and remote 4DH versions (optional uint32), the updated mark (optional uint64), the initiator's
    /// ephemeral secret key and the peer's ephemeral public key (optional, 32 bytes each), and the four
    /// ratchets my-2DH, peer-2DH, my-4DH, peer-4DH (each optional: counter uint64, chain key 32 bytes).
    /// The identity's private key is not in it: ``init(restoring:identity:)`` takes the identity.
    ///
    /// Old snapshots: a session restored from an older snapshot would encrypt again under message
    /// keys it has used (its sending ratchets are behind) and accept again messages it has received
    /// (its receiving ratchets are behind). Two rules prevent both: ``generation`` grows with every
    /// message sent or received, and ``init(restoring:identity:newerThan:)`` refuses a snapshot whose
    /// generation is below the newest the application has seen (it keeps that number where it keeps the
    /// identity); and ``snapshot(sendingAhead:)`` writes the sending ratchets turned ahead, so that a
    /// restore from it skips the keys the live session may still use (the peer catches up, up to
    /// 25 000 steps).
    public func snapshot() -> SnapshotBytes { snapshot(sendingAhead: 0) }

    /// A snapshot whose sending ratchets are turned `steps` further than this session's (at most
    /// ``Ibex/KDFRatchet/maxCounterIncrement``): restored, it never reuses a message key that this
    /// session uses for its next `steps` messages. `snapshot(sendingAhead: 0)` is ``snapshot()``.
    public func snapshot(sendingAhead steps: UInt64) -> SnapshotBytes {
        let ahead = Swift.min(steps, Ibex.KDFRatchet.maxCounterIncrement)
        var w = SnapshotWriter(type: Self.snapshotType, version: 1)
        w.fixed(sessionID)
        w.fixed(ownID.bytes)
        w.fixed(peer.id.bytes)
        w.fixed(peer.publicKey.rawRepresentation)
        w.uint8(role == .initiator ? 0 : 1)
        func range(_ w: inout SnapshotWriter, _ r: Ibex.VersionRange) { w.uint32(r.min); w.uint32(r.max) }
        range(&w, localVersions)
        w.optional(remoteVersions) { range(&$0, $1) }
        range(&w, supportedVersions)
        w.optional(local4DHVersion) { $0.uint32($1) }
        w.optional(remote4DHVersion) { $0.uint32($1) }
        w.optional(updatedAt) { $0.uint64($1) }
        w.bool(ephemeral != nil)
        if let ephemeral {
            var raw = ephemeral.rawRepresentation
            defer { raw.secureWipe() }
            w.fixed(raw)
        }
        w.optional(peerEphemeral) { $0.fixed($1.rawRepresentation) }
        for (ratchet, sending) in [(my2DH, true), (peer2DH, false), (my4DH, true), (peer4DH, false)] {
            w.bool(ratchet != nil)
            guard var r = ratchet else { continue }
            if sending, ahead > 0 { try! r.turn(until: r.counter + ahead) }
            r.write(to: &w)
        }
        return w.finish()
    }

    /// Messages sent and received in this session so far, as the ratchets count them: the sum of the
    /// four counters (an absent ratchet counts what its predecessor reached). It grows with every
    /// message and never decreases.
    public var generation: UInt64 {
        [my2DH, peer2DH, my4DH, peer4DH].reduce(UInt64(0)) { $0 &+ ($1?.counter ?? 0) }
    }

    /// The session of `snapshot`, for `identity` (whose ID must be the snapshot's own ID), refusing a
    /// snapshot older than `newest` (its ``generation`` below it) with
    /// ``SnapshotFault/stale(generation:newest:)``.
    /// - Throws: ``RampartError/invalidSnapshot(_:)``.
    public init(restoring snapshot: SnapshotBytes, identity: ThreemaIdentity, newerThan newest: UInt64 = 0) throws(RampartError) {
        var r = try SnapshotReader(snapshot, type: Self.snapshotType, versions: 1...1)
        let sessionID = try r.fixed(Ibex.Envelope.sessionIDLength)
        func id(_ bytes: [UInt8], _ field: String) throws(RampartError) -> ThreemaID {
            do { return try ThreemaID(bytes: bytes) } catch { throw .invalidSnapshot(.invalidField(field)) }
        }
        let ownID = try id(try r.fixed(8), "own ID")
        guard ownID == identity.id else { throw .invalidSnapshot(.invalidField("identity")) }
        let peerID = try id(try r.fixed(8), "peer ID")
        let peerKey: Curve25519.KeyAgreement.PublicKey
        do { peerKey = try .init(rawRepresentation: try r.fixed(32)) } catch { throw .invalidSnapshot(.invalidField("peer key")) }
        let role: Ibex.Role
        switch try r.uint8() {
        case 0: role = .initiator
        case 1: role = .responder
        default: throw .invalidSnapshot(.invalidField("role"))
        }
        func range(_ r: inout SnapshotReader) throws(RampartError) -> Ibex.VersionRange {
            let v = Ibex.VersionRange(min: try r.uint32(), max: try r.uint32())
            guard v.min <= v.max else { throw .invalidSnapshot(.invalidField("version range")) }
            return v
        }
        let local = try range(&r)
        let remote = try r.optional("remote versions") { (r) throws(RampartError) in try range(&r) }
        let supported = try range(&r)
        let local4DH = try r.optional("local 4DH version") { (r) throws(RampartError) in try r.uint32() }
        let remote4DH = try r.optional("remote 4DH version") { (r) throws(RampartError) in try r.uint32() }
        let updated = try r.optional("updated") { (r) throws(RampartError) in try r.uint64() }
        let ephemeral = try r.optional("ephemeral") { (r) throws(RampartError) -> Curve25519.KeyAgreement.PrivateKey in
            let raw = try r.secret(32)
            return raw.withUnsafeBytes { try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
        }
        let peerEphemeral = try r.optional("peer ephemeral") { (r) throws(RampartError) -> Curve25519.KeyAgreement.PublicKey in
            do { return try .init(rawRepresentation: try r.fixed(32)) } catch { throw .invalidSnapshot(.invalidField("peer ephemeral")) }
        }
        var ratchets: [Ibex.KDFRatchet?] = []
        for name in ["my 2DH", "peer 2DH", "my 4DH", "peer 4DH"] {
            ratchets.append(try r.optional(name) { (r) throws(RampartError) in try Ibex.KDFRatchet(reading: &r) })
        }
        try r.finish()
        // Only the four states the protocol reaches, and the ephemeral secret only where it is kept.
        let present = ratchets.map { $0 != nil }
        let legal: Bool
        switch (present[0], present[1], present[2], present[3]) {
        case (true, false, false, false): legal = role == .initiator                     // L20
        case (false, true, false, false): legal = role == .responder && ephemeral == nil // R20
        case (false, true, true, true): legal = role == .responder && ephemeral == nil   // R24
        case (false, false, true, true): legal = ephemeral == nil                        // RL44
        default: legal = false
        }
        guard legal, sessionID.count == Ibex.Envelope.sessionIDLength else { throw .invalidSnapshot(.invalidField("ratchets")) }
        self.init(sessionID: sessionID, identity: identity, peer: ThreemaContact(id: peerID, publicKey: peerKey), role: role,
                  localVersions: local)
        remoteVersions = remote
        supportedVersions = supported
        local4DHVersion = local4DH
        remote4DHVersion = remote4DH
        updatedAt = updated
        self.ephemeral = ephemeral
        self.peerEphemeral = peerEphemeral
        (my2DH, peer2DH, my4DH, peer4DH) = (ratchets[0], ratchets[1], ratchets[2], ratchets[3])
        guard generation >= newest else { throw .invalidSnapshot(.stale(generation: generation, newest: newest)) }
    }
}
