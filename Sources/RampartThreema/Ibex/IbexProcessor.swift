// Ibex one level above a single session (Docs/Threema.md §1.6): a session store keyed by (peer,
// session ID), the receive steps of each `csp_e2e_fs.Envelope` variant, the encapsulation steps of
// an outgoing message (which types a session may carry at which version), the race rule (the
// bidirectional 4DH session with the lowest ID wins), the 24-hour refresh with an `empty` (0xfc)
// message, Reject and Terminate. Sans I/O: the caller supplies the clock (`now`, seconds), the RNG,
// and carries the produced envelopes as e2e messages of type 0xa0.

import Rampart

// MARK: - Storage

/// Where an ``Ibex/Processor`` keeps its sessions. Sessions are unique per (peer, session ID); a
/// peer may have several at once (the race of two `Init`s).
///
/// Implementations persist whole ``Ibex/Session`` values. ``store(_:)`` replaces the session with
/// the same peer and ID; the processor calls it only after an operation succeeded, so a refused
/// message never reaches the store.
public protocol IbexSessionStore {
    /// The session with `peer` and `sessionID`, if any.
    func session(peer: ThreemaID, sessionID: [UInt8]) -> Ibex.Session?
    /// Every session with `peer`, in any order.
    func sessions(peer: ThreemaID) -> [Ibex.Session]
    /// Inserts or replaces `session` (keyed by `session.peer.id` and `session.sessionID`).
    mutating func store(_ session: Ibex.Session)
    /// Removes (and so wipes) the session with `peer` and `sessionID`; nothing if there is none.
    mutating func removeSession(peer: ThreemaID, sessionID: [UInt8])
}

extension Ibex {
    /// An ``IbexSessionStore`` in memory (tests, short-lived processes, or a cache in front of a
    /// database). Removed sessions are released and their keys wiped by their owners.
    public struct InMemorySessionStore: IbexSessionStore, Sendable {
        private var byPeer: [ThreemaID: [Session]] = [:]

        /// An empty store.
        public init() {}

        public func session(peer: ThreemaID, sessionID: [UInt8]) -> Session? {
            byPeer[peer]?.first { $0.sessionID == sessionID }
        }

        public func sessions(peer: ThreemaID) -> [Session] { byPeer[peer] ?? [] }

        public mutating func store(_ session: Session) {
            var list = byPeer[session.peer.id] ?? []
            if let i = list.firstIndex(where: { $0.sessionID == session.sessionID }) {
                list[i] = session
            } else {
                list.append(session)
            }
            byPeer[session.peer.id] = list
        }

        public mutating func removeSession(peer: ThreemaID, sessionID: [UInt8]) {
            guard var list = byPeer[peer] else { return }
            list.removeAll { $0.sessionID == sessionID }
            byPeer[peer] = list.isEmpty ? nil : list
        }

        /// The number of sessions over all peers.
        public var count: Int { byPeer.values.reduce(0) { $0 + $1.count } }
    }
}

// MARK: - Message-type eligibility

extension Ibex {
    /// The lowest version under which a message of `type` may be encapsulated, or `nil` when it
    /// is never encapsulated (csp-e2e-fs.proto `Version` and the types' FS properties,
    /// Docs/Threema.md §1.6): text, location, file and polls from 1.0; every other 1:1 type from
    /// 1.1; group types (those with a group container) from 1.2; `empty` (0xfc) from 1.0 as the
    /// session's own control message. Never: the envelope itself (0xa0), the web-session and
    /// work-sync types (0xfd–0xff) and types this library does not know.
    public static func minimumVersion(for type: MessageType) -> Version? {
        switch type {
        case .text, .location, .file, .pollSetup, .pollVote, .empty: return Versions.v1_0
        case .forwardSecurityEnvelope, .workSyncDelta, .webSessionResume, .authToken: return nil
        default:
            guard type.isKnown else { return nil }
            return type.groupPrefixKind != nil ? Versions.v1_2 : Versions.v1_1
        }
    }
}

// MARK: - Processor

extension Ibex {
    /// One message to send to the peer, in the order given.
    public enum OutgoingMessage: Sendable, Hashable {
        /// An Ibex envelope: send it as an e2e message of type
        /// ``MessageType/forwardSecurityEnvelope`` (0xa0) whose body is ``body``.
        case envelope(Envelope)
        /// The inner message itself, not encapsulated (the session cannot carry its type yet).
        case plain(type: MessageType, body: [UInt8])

        /// The e2e container type to send.
        public var type: MessageType {
            switch self {
            case .envelope: .forwardSecurityEnvelope
            case .plain(let t, _): t
            }
        }

        /// The e2e container body to send (the encoded envelope for ``envelope(_:)``).
        public func body() throws(ThreemaError) -> [UInt8] {
            switch self {
            case .envelope(let e): try e.encoded()
            case .plain(_, let b): b
            }
        }
    }

    /// Why a received envelope had no effect.
    public enum IgnoreReason: Sendable, Hashable {
        /// An `Init` for a session that exists already (a repeated Init).
        case repeatedInit
        /// An `Init` or `Accept` whose version range shares no version with ours.
        case noCommonVersion
        /// An `Init` or `Accept` whose ephemeral key is not a valid X25519 public key.
        case invalidEphemeralKey
        /// An `Accept` for a session that is not waiting for one (not ``State/l20``).
        case unexpectedAccept
        /// An `Accept` for a session this side does not have; a `Terminate` was sent back.
        case unknownSession
        /// An encapsulated message whose counter lies behind the ratchet: a duplicate delivery.
        /// Dropped without a `Reject` (the session is intact and the message was processed).
        case duplicate
    }

    /// What a received envelope meant.
    public enum Event: Sendable, Hashable {
        /// An inner message to deliver: its type, body and the group it was sent in.
        case message(type: MessageType, body: [UInt8], groupIdentity: GroupIdentity?, dhType: DHType)
        /// An `empty` (0xfc) message: the session was refreshed, nothing to deliver.
        case empty
        /// A new session was started by the peer (answered with an `Accept`). Tell the user: a new
        /// session is also what an attacker with the peer's permanent key would start.
        case sessionStarted
        /// The peer accepted our session: it is now bidirectional 4DH.
        case sessionEstablished
        /// The peer could not decrypt our message `Reject.messageID`; the session (if this side
        /// still had it) was removed. Offer to re-send that message.
        case rejected(Reject, sessionExisted: Bool)
        /// The peer ended the session; it was removed here (if this side still had it).
        case terminated(Terminate.Cause, sessionExisted: Bool)
        /// The envelope changed nothing.
        case ignored(IgnoreReason)
        /// An encapsulated message was refused: nothing is delivered. A `Reject` with
        /// `STATE_MISMATCH` or `UNKNOWN_SESSION` went back (in ``Received/replies``) and the
        /// session, if any, was removed, as csp-e2e-fs.proto prescribes; or, for an inner type the
        /// applied version does not allow, the message was only dropped and the session kept.
        case refused(ThreemaError)
    }

    /// The result of receiving one envelope.
    public struct Received: Sendable, Hashable {
        /// What happened.
        public var event: Event
        /// Envelopes to send back to the peer now, in order (each as an e2e message of type 0xa0).
        public var replies: [Envelope]
        /// The session the envelope named.
        public var sessionID: [UInt8]
    }

    /// Ibex for one identity: sessions with every peer in `store`, the envelope receive steps and
    /// the encapsulation steps. A value type: every method either completes and updates
    /// ``store`` or throws and leaves it as it was.
    public struct Processor<Store: IbexSessionStore> {
        /// The owner of the sessions.
        public let identity: ThreemaIdentity
        /// The sessions.
        public var store: Store
        /// The versions this side supports (announced in `Init` and `Accept`). Raising the maximum
        /// (an upgrade) also raises existing 4DH sessions through the upgrade steps: every session
        /// the processor uses gets it as its ``Session/supportedVersions``.
        public var versions: VersionRange
        /// The refresh interval of csp-e2e-fs.proto: a session whose _updated_ mark is older gets an
        /// `empty` message (24 hours).
        public static var refreshInterval: UInt64 { 86_400 }

        /// A processor for `identity` on `store`.
        public init(identity: ThreemaIdentity, store: Store,
                    versions: VersionRange = VersionRange(min: Versions.v1_0, max: Versions.v1_2)) {
            self.identity = identity
            self.store = store
            self.versions = versions
        }

        // MARK: Sending

        /// The session new messages to `peer` go out in, applying the race rule: when several
        /// bidirectional 4DH sessions exist, the one with the lowest session ID (bytewise,
        /// unsigned) is chosen and the others are removed. Without a bidirectional one, a session
        /// that sends 4DH (``State/r24``) is preferred, then one that still has to accept
        /// (``State/r20``), then an initiated one (``State/l20``), lowest ID first in each group.
        public mutating func bestSession(for peer: ThreemaID) -> Session? {
            let all = store.sessions(peer: peer).sorted { $0.sessionID.lexicographicallyPrecedes($1.sessionID) }
            let bidirectional = all.filter { $0.state == .rl44 }
            if let winner = bidirectional.first {
                for loser in bidirectional.dropFirst() { store.removeSession(peer: peer, sessionID: loser.sessionID) }
                return winner
            }
            for state in [State.r24, .r20, .l20] {
                if let s = all.first(where: { $0.state == state }) { return s }
            }
            return nil
        }

        /// The FS encapsulation steps for one outgoing message of `type` with `body` (the e2e
        /// container body, without padding) to `peer`: starts an `L20` session when there is
        /// none (its `Init` goes first), accepts a session in ``State/r20``, and encapsulates the
        /// message if the session's outgoing version allows its type (``minimumVersion(for:)``).
        /// Otherwise the message goes out plain, preceded by an `empty` message when the session's
        /// _updated_ mark is older than ``refreshInterval``.
        ///
        /// The store is updated before this returns (the ratchet has turned): send the returned
        /// messages as they are, and re-send the same bytes if delivery fails, never a new
        /// encryption of another message under the returned counters.
        ///
        /// - Parameters:
        ///   - groupIdentity: required for group types (``MessageType/groupPrefixKind`` not nil)
        ///     and refused for 1:1 types.
        ///   - now: the current time, seconds since 1970.
        /// - Throws: ``ThreemaError/invalidArgument(_:)`` for a group identity that does not fit the
        ///   type, ``ThreemaError/invalidPublicKey`` for a small-order peer key. The store is
        ///   unchanged then.
        public mutating func encapsulate<R: RandomNumberGenerator>(
            type: MessageType, body: [UInt8], to peer: ThreemaContact, groupIdentity: GroupIdentity? = nil,
            now: UInt64, using rng: inout R
        ) throws(ThreemaError) -> [OutgoingMessage] {
            guard (type.groupPrefixKind != nil) == (groupIdentity != nil) else {
                throw .invalidArgument("a group identity is required for group message types and refused for 1:1 types")
            }
            var out: [OutgoingMessage] = []
            let (opened, created) = try openSession(for: peer, out: &out, using: &rng)
            var session = opened
            let applied = session.local4DHVersion ?? session.localVersions.min
            if let needed = Ibex.minimumVersion(for: type), applied >= needed {
                out.append(.envelope(try session.encrypt(type: type.rawValue, body: body, groupIdentity: groupIdentity)))
            } else {
                if !created, isStale(session, now: now) {
                    out.append(.envelope(try session.encrypt(type: MessageType.empty.rawValue, body: [])))
                }
                out.append(.plain(type: type, body: body))
            }
            session.updatedAt = now
            store.store(session)
            return out
        }

        /// The FS refresh steps for `peer`: starts a session (its `Init`) when there is none, and
        /// otherwise sends an `empty` (0xfc) message in the best session when its _updated_ mark is
        /// missing or older than `olderThan` seconds (``refreshInterval`` by default). Returns
        /// nothing when the session is fresh.
        ///
        /// - Throws: ``ThreemaError/invalidPublicKey`` for a small-order peer key; the store is
        ///   unchanged then.
        public mutating func refresh<R: RandomNumberGenerator>(
            peer: ThreemaContact, now: UInt64, olderThan: UInt64 = Processor.refreshInterval, using rng: inout R
        ) throws(ThreemaError) -> [OutgoingMessage] {
            var out: [OutgoingMessage] = []
            var (session, created) = try openSession(for: peer, out: &out, using: &rng)
            if !created, isStale(session, now: now, olderThan: olderThan) {
                out.append(.envelope(try session.encrypt(type: MessageType.empty.rawValue, body: [])))
            }
            guard !out.isEmpty else { return [] }
            session.updatedAt = now
            store.store(session)
            return out
        }

        /// Ends every session with `peer` and returns one `Terminate` per session to send
        /// (csp-e2e-fs.proto: with `UNKNOWN_SESSION` or `RESET`, start a new session afterwards).
        public mutating func terminate(peer: ThreemaID, cause: Terminate.Cause) -> [Envelope] {
            store.sessions(peer: peer).map { s in
                store.removeSession(peer: peer, sessionID: s.sessionID)
                return Envelope(sessionID: s.sessionID, content: .terminate(Terminate(cause: cause)))
            }
        }

        /// Whether the session's _updated_ mark is missing, in the future (a clock step) or at
        /// least `olderThan` seconds old.
        private func isStale(_ s: Session, now: UInt64, olderThan: UInt64 = Processor.refreshInterval) -> Bool {
            guard let u = s.updatedAt else { return true }
            return u > now || now - u >= olderThan
        }

        /// The best session for `peer`, or a new `L20` one (its `Init` appended to `out`); a
        /// session in ``State/r20`` is accepted (the `Accept` appended). Nothing is stored here.
        private mutating func openSession<R: RandomNumberGenerator>(
            for peer: ThreemaContact, out: inout [OutgoingMessage], using rng: inout R
        ) throws(ThreemaError) -> (Session, created: Bool) {
            if var s = bestSession(for: peer.id) {
                s.supportedVersions = versions
                if s.state == .r20 {
                    out.append(.envelope(try s.accept(ephemeral: Curve25519.KeyAgreement.PrivateKey(using: &rng))))
                }
                return (s, false)
            }
            let (s, initEnvelope) = try Session.initiate(
                identity: identity, peer: peer, sessionID: randomBytes(Envelope.sessionIDLength, using: &rng),
                ephemeral: Curve25519.KeyAgreement.PrivateKey(using: &rng), versions: versions)
            out.append(.envelope(initEnvelope))
            return (s, true)
        }

        // MARK: Receiving

        /// Receives the body of an e2e message of type 0xa0 from `peer` (already opened and
        /// authenticated by ``EndToEnd``): decodes the envelope and runs ``receive(_:from:messageID:now:using:)``.
        ///
        /// - Throws: ``ThreemaError/ibex(_:)`` when the bytes are not an envelope; the store is
        ///   unchanged then.
        public mutating func receive<R: RandomNumberGenerator>(
            body: [UInt8], from peer: ThreemaContact, messageID: UInt64, now: UInt64, using rng: inout R
        ) throws(ThreemaError) -> Received {
            receive(try Envelope(decoding: body), from: peer, messageID: messageID, now: now, using: &rng)
        }

        /// The receive steps of csp-e2e-fs.proto for one envelope from `peer` (the sender of the
        /// authenticated outer message with ID `messageID`).
        ///
        /// - `Init`: a repeated one is ignored; otherwise a responder session is created and
        ///   accepted at once (state ``State/r24``), the `Accept` in ``Received/replies``.
        /// - `Accept`: moves our ``State/l20`` session to ``State/rl44``; for an unknown session a
        ///   `Terminate` (`UNKNOWN_SESSION`) goes back.
        /// - `Reject`, `Terminate`: the session is removed.
        /// - `Encapsulated`: decrypted with the session (which is stored only afterwards). Without
        ///   a session a `Reject` (`UNKNOWN_SESSION`) goes back; a message the session refuses
        ///   (authentication, DH type, version, counter too far ahead) gets a `Reject`
        ///   (`STATE_MISMATCH`) and the session is removed; a counter in the past is a duplicate
        ///   and only dropped. A raised outgoing version is announced with an `empty` reply.
        public mutating func receive<R: RandomNumberGenerator>(
            _ envelope: Envelope, from peer: ThreemaContact, messageID: UInt64, now: UInt64, using rng: inout R
        ) -> Received {
            let id = envelope.sessionID
            func result(_ e: Event, _ replies: [Envelope] = []) -> Received {
                Received(event: e, replies: replies, sessionID: id)
            }
            let existing = store.session(peer: peer.id, sessionID: id)
            switch envelope.content {
            case .initiate(let offer):
                guard existing == nil else { return result(.ignored(.repeatedInit)) }
                var s: Session
                do {
                    s = try Session.receiveInit(offer, sessionID: id, identity: identity, peer: peer, versions: versions)
                } catch .ibex(.versionMismatch) {
                    return result(.ignored(.noCommonVersion))
                } catch {
                    return result(.ignored(.invalidEphemeralKey))
                }
                let accept: Envelope
                do { accept = try s.accept(ephemeral: Curve25519.KeyAgreement.PrivateKey(using: &rng)) } catch {
                    return result(.ignored(.invalidEphemeralKey))
                }
                s.updatedAt = now
                store.store(s)
                return result(.sessionStarted, [accept])

            case .accept(let offer):
                guard var s = existing else {
                    return result(.ignored(.unknownSession),
                                  [Envelope(sessionID: id, content: .terminate(Terminate(cause: .unknownSession)))])
                }
                guard s.role == .initiator, s.state == .l20 else { return result(.ignored(.unexpectedAccept)) }
                do { try s.processAccept(offer) } catch .ibex(.versionMismatch) {
                    return result(.ignored(.noCommonVersion))
                } catch {
                    return result(.ignored(.invalidEphemeralKey))
                }
                s.updatedAt = now
                store.store(s)
                return result(.sessionEstablished)

            case .reject(let r):
                if existing != nil { store.removeSession(peer: peer.id, sessionID: id) }
                return result(.rejected(r, sessionExisted: existing != nil))

            case .terminate(let t):
                if existing != nil { store.removeSession(peer: peer.id, sessionID: id) }
                return result(.terminated(t.cause, sessionExisted: existing != nil))

            case .encapsulated(let m):
                guard var s = existing else {
                    let reject = Reject(messageID: messageID, cause: .unknownSession, groupIdentity: m.groupIdentity)
                    return result(.refused(.ibex(.unknownSession)), [Envelope(sessionID: id, content: .reject(reject))])
                }
                s.supportedVersions = versions
                let inner: DecryptedMessage
                do { inner = try s.decrypt(m) } catch {
                    if case .ibex(.counterInPast) = error { return result(.ignored(.duplicate)) }
                    store.removeSession(peer: peer.id, sessionID: id)
                    let reject = Reject(messageID: messageID, cause: .stateMismatch, groupIdentity: m.groupIdentity)
                    return result(.refused(error), [Envelope(sessionID: id, content: .reject(reject))])
                }
                let type = MessageType(rawValue: inner.type)
                // The applied version must allow the inner type, and a group type must name its
                // group (a 1:1 type must not). Refused without touching the stored session.
                guard let needed = Ibex.minimumVersion(for: type), m.effectiveAppliedVersion >= needed else {
                    return result(.refused(.ibex(.innerTypeNotAllowed(inner.type))))
                }
                guard (type.groupPrefixKind != nil) == (m.groupIdentity != nil) else {
                    return result(.refused(.ibex(.groupIdentityMismatch)))
                }
                var replies: [Envelope] = []
                if inner.outgoingVersionRaised,
                   let announce = try? s.encrypt(type: MessageType.empty.rawValue, body: []) {
                    replies.append(announce)
                }
                s.updatedAt = now
                store.store(s)
                if type == .empty { return result(.empty, replies) }
                return result(.message(type: type, body: inner.body, groupIdentity: m.groupIdentity, dhType: inner.dhType),
                              replies)
            }
        }
    }
}

extension Ibex.Processor: Sendable where Store: Sendable {}
