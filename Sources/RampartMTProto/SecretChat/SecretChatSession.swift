// One secret chat, sans-I/O (Docs/MTProto.md §7.2–§7.6): the handshake states of Telegram-iOS
// (`requested`, `accepting`, `accepted`), the sequence-based layer with its keychain, sequence numbers
// and layer negotiation, and the PFS re-key (RequestKey / AcceptKey / CommitKey / AbortKey / Noop).
// The caller moves bytes to and from the API; the clock and the random generator are injected.

extension SecretChat {
    /// The clock of a session: seconds (any epoch, non-decreasing). Only differences are used (the
    /// one-week re-key trigger, §7.6).
    public typealias Clock = @Sendable () -> Int64

    /// One secret chat from one side (Docs/MTProto.md §7).
    ///
    /// A value type: every mutating call works on a copy and stores it only when it succeeds, so a
    /// call that throws leaves the session exactly as it was (compute, then commit). Keys are
    /// ``SecretChat/Key`` values and exponents live in ``SecretChat/KeyRequest`` /
    /// ``SecretChat/KeyAcceptance``; their bytes are wiped when the last copy is released.
    ///
    /// Life cycle (the states of Telegram-iOS `SecretChatEmbeddedState`):
    ///
    /// * creator: ``requesting(config:serverRandom:layer:clock:using:)`` →
    ///   `.handshake(.requested)` (send ``gA`` with `messages.requestEncryption`) →
    ///   ``handleEncryptedChat(gAOrB:keyFingerprint:using:)`` with the `encryptedChat` update →
    ///   `.sequenceBasedLayer`, with a NotifyLayer to send;
    /// * acceptor: ``requested(gA:layer:clock:)`` from `encryptedChatRequested` →
    ///   `.handshake(.accepting)`; ``accept(config:serverRandom:using:)`` → `.handshake(.accepted)`
    ///   (send `acceptEncryption` with the returned `g_b` and fingerprint); the `encryptedChat` update
    ///   → `.sequenceBasedLayer`, with a NotifyLayer to send;
    /// * ``terminate()`` (discarded chat, a fingerprint mismatch, a protocol violation) → `.terminated`,
    ///   keys dropped.
    ///
    /// Telegram-iOS also has a `basicLayer` state for peers below layer 17 (no sequence numbers). The
    /// peer's layer starts at 46 (§7.2), so this implementation never enters it and refuses messages
    /// that are not a `decryptedMessageLayer`.
    ///
    /// In the established chat, ``send(_:using:)`` returns the `data` of `messages.sendEncrypted*`
    /// (sequence numbers fixed at creation, never changed; a RequestKey first when a re-key is due) and
    /// ``receive(_:using:)`` returns the messages now in order plus what to send back (resends of our
    /// messages, Resend requests, AcceptKey / CommitKey / AbortKey / Noop).
    public struct Session: Sendable {
        /// Where the chat is.
        public enum State: Sendable {
            /// Keys are being agreed (`messages.requestEncryption` / `acceptEncryption`).
            case handshake(Handshake)
            /// The key exists; messages carry sequence numbers (`decryptedMessageLayer`).
            case sequenceBasedLayer
            /// The chat is closed and its keys are dropped.
            case terminated
        }

        /// The handshake states of Telegram-iOS.
        public enum Handshake: Sendable {
            /// Creator: `g_a` sent with `requestEncryption`, waiting for `encryptedChat`.
            case requested(KeyRequest)
            /// Acceptor: `encryptedChatRequested` seen with the creator's `g_a`; not accepted yet.
            case accepting(gA: [UInt8])
            /// Acceptor: `acceptEncryption` sent (`g_b` and the key computed), waiting for `encryptedChat`.
            case accepted(gA: [UInt8], KeyAcceptance)
        }

        /// A message to hand to `messages.sendEncrypted` (or `sendEncryptedService`).
        public struct Outgoing: Sendable, Equatable {
            /// `key_fingerprint ‖ msg_key ‖ ciphertext`.
            public var data: [UInt8]
            /// Its `out_seq_no` (wire form), fixed when it was created.
            public var outSeqNo: Int32
            /// A service message (NotifyLayer, Resend, the re-key actions, Noop).
            public var isService: Bool
            /// The same bytes sent again because the peer asked (Resend).
            public var isResend: Bool
        }

        /// What ``receive(_:using:)`` produced.
        public struct Received: Sendable {
            /// The peer's messages now in order, for the application (the protocol's own service
            /// messages, NotifyLayer, Resend, the re-key actions and Noop, are consumed here).
            public var messages: [DecryptedMessageLayer] = []
            /// What to send, in this order.
            public var outgoing: [Outgoing] = []
            /// The message was a duplicate and was dropped.
            public var isDuplicate = false
            /// The current key changed during this call (a re-key completed).
            public var keyChanged = false
        }

        /// The re-key exchange this side takes part in (Docs/MTProto.md §7.6).
        public enum RekeyPhase: Sendable, Equatable {
            /// No exchange open.
            case idle
            /// We sent RequestKey with this id and wait for AcceptKey.
            case requested(exchangeID: Int64)
            /// We sent AcceptKey for this id and wait for CommitKey (or a message under the new key).
            case accepted(exchangeID: Int64)
        }

        /// A comparable summary of the session (for tests and logs): everything that changes.
        public struct Status: Sendable, Equatable {
            /// "requested", "accepting", "accepted", "sequenceBasedLayer" or "terminated".
            public var state: String
            /// Raw counters of ``SecretChat/SequenceNumbers``.
            public var sentCount: Int32, receivedCount: Int32, peerReceivedCount: Int32, highestSeen: Int32
            /// Messages waiting in gaps.
            public var queuedCount: Int
            /// Sent messages kept for resends.
            public var storedCount: Int
            /// The peer's layer.
            public var remoteLayer: Int32
            /// Fingerprints, validity and use counts of the keychain.
            public var keys: [String]
            /// The previous key kept during a switch.
            public var previousFingerprint: Int64?
            /// The re-key phase.
            public var rekey: RekeyPhase
        }

        // Indirect: a boxed payload, so that copies never read the unused bytes of the smaller case
        // (memcheck reports those as uninitialised in the value witnesses).
        indirect enum Rekey: Sendable {
            case requested(id: Int64, KeyRequest)
            case accepted(id: Int64, KeyAcceptance)
        }

        /// Messages (encrypted plus decrypted) after which a key is replaced: more than 100 (§7.6).
        public static let rekeyUseLimit: Int32 = 100
        /// Seconds after which a key that encrypted at least one message is replaced: one week (§7.6).
        public static let rekeyAge: Int64 = 7 * 24 * 3600
        /// Sent messages kept for a Resend until the peer acknowledges them (its `in_seq_no`): at most
        /// this many. At the bound, producing one more message (``send(_:using:)``, or a service
        /// message a ``receive(_:using:)`` would answer with) throws ``SecretChatError/wrongState(_:)``
        /// and changes nothing: a peer that acknowledges nothing this long is gone or hostile, and
        /// the chat should be ended rather than grow without bound.
        public static let maxUnacknowledged = 10_000

        /// Our side.
        public let side: Side
        /// Where the chat is.
        public private(set) var state: State
        /// The DH configuration of the original exchange (re-keys use the same `p`, `g`, §7.6).
        public private(set) var config: DHConfig?
        /// The keys.
        public private(set) var keychain = Keychain()
        /// Sequence numbers (Docs/MTProto.md §7.4).
        public private(set) var sequence: SequenceNumbers<DecryptedMessageLayer>
        /// Both layers (§7.2).
        public private(set) var layers: LayerNegotiation
        /// The 36-byte key hash of the key image (§7.7), fixed when the chat is established:
        /// SHA1(original key)[0..<16] ‖ SHA256(original key)[0..<20] (the chat starts at layer 46).
        public private(set) var keyHash: [UInt8] = []
        /// The fingerprint of the key in use before the last switch, while it is still needed.
        public private(set) var previousFingerprint: Int64?
        /// The number of re-keys completed.
        public private(set) var rekeyCount = 0
        let clock: Clock
        var rekey: Rekey?
        /// The raw `out_seq_no` of the peer's first message seen under the current key after a switch.
        var peerSwitchIndex: Int32?
        /// The current key's fingerprint.
        var currentFingerprint: Int64?
        /// Our sent messages by raw `out_seq_no`, until the peer acknowledges them (`in_seq_no`).
        var stored: [Int32: Outgoing] = [:]

        init(side: Side, state: State, layer: Int32, clock: @escaping Clock) {
            self.side = side
            self.state = state
            self.clock = clock
            sequence = SequenceNumbers(role: side == .creator ? .creator : .acceptor)
            layers = LayerNegotiation(local: layer)
        }

        // MARK: Handshake

        /// Creator: picks `a` for `config` (with the server's `random` mixed in) and starts in
        /// `.handshake(.requested)`; send ``gA`` with `messages.requestEncryption`.
        /// - Throws: ``SecretChatError/dhCheckFailed(_:)``.
        public static func requesting<R: RandomNumberGenerator>(config: DHConfig, serverRandom: [UInt8] = [],
                                                               layer: Int32 = Layer.current,
                                                               clock: @escaping Clock,
                                                               using rng: inout R) throws(SecretChatError) -> Session {
            let request = try KeyRequest(config: config, serverRandom: serverRandom, using: &rng)
            var s = Session(side: .creator, state: .handshake(.requested(request)), layer: layer, clock: clock)
            s.config = config
            return s
        }

        /// Acceptor: an `encryptedChatRequested` with the creator's `g_a`; starts in
        /// `.handshake(.accepting)` until the user accepts (``accept(config:serverRandom:using:)``).
        public static func requested(gA: [UInt8], layer: Int32 = Layer.current, clock: @escaping Clock) -> Session {
            Session(side: .acceptor, state: .handshake(.accepting(gA: gA)), layer: layer, clock: clock)
        }

        /// Creator: `g_a` for `messages.requestEncryption` (nil in other states).
        public var gA: [UInt8]? {
            if case .handshake(.requested(let r)) = state { return r.gA }
            return nil
        }

        /// Acceptor: accepts with a fresh DH configuration: checks `g_a`, picks `b`, computes the key,
        /// moves to `.handshake(.accepted)` and returns `g_b` and `key_fingerprint` for
        /// `messages.acceptEncryption`.
        /// - Throws: ``SecretChatError/wrongState(_:)`` outside `.accepting`;
        ///   ``SecretChatError/dhCheckFailed(_:)``.
        public mutating func accept<R: RandomNumberGenerator>(config: DHConfig, serverRandom: [UInt8] = [],
                                                             using rng: inout R) throws(SecretChatError) -> (gB: [UInt8], keyFingerprint: Int64) {
            guard case .handshake(.accepting(let gA)) = state else { throw .wrongState("accept outside the accepting state") }
            let acceptance = try KeyAcceptance(gA: gA, config: config, serverRandom: serverRandom, using: &rng)
            state = .handshake(.accepted(gA: gA, acceptance))
            self.config = config
            return (acceptance.gB, acceptance.keyFingerprint)
        }

        /// Both sides: the `encryptedChat` update (`g_a_or_b`, `key_fingerprint`). The creator computes
        /// the key from `g_b` and compares fingerprints; the acceptor checks that the server confirms
        /// its own fingerprint and the creator's `g_a`. The chat is then established; the returned
        /// NotifyLayer (our layer) must be sent.
        /// - Throws: ``SecretChatError/fingerprintMismatch`` (discard the chat: ``terminate()`` and
        ///   `messages.discardEncryption`), ``SecretChatError/dhCheckFailed(_:)``,
        ///   ``SecretChatError/wrongState(_:)``. The session is unchanged.
        public mutating func handleEncryptedChat<R: RandomNumberGenerator>(gAOrB: [UInt8], keyFingerprint: Int64,
                                                                          using rng: inout R) throws(SecretChatError) -> [Outgoing] {
            let key: Key
            switch state {
            case .handshake(.requested(let request)):
                key = try request.complete(gB: gAOrB, keyFingerprint: keyFingerprint)
            case .handshake(.accepted(let gA, let acceptance)):
                guard acceptance.keyFingerprint == keyFingerprint else { throw .fingerprintMismatch }
                // Compared as numbers: either copy may come without leading zero bytes.
                guard BigUInt(bigEndian: gAOrB) == BigUInt(bigEndian: gA) else {
                    throw .dhCheckFailed("encryptedChat carries another g_a")
                }
                key = acceptance.key
            default:
                throw .wrongState("encryptedChat outside the handshake")
            }
            var s = self
            let out = try s.establish(key, using: &rng)
            self = s
            return out
        }

        /// Both sides, when the exchange ran elsewhere: an established chat with `key` (from
        /// ``KeyRequest/complete(gB:keyFingerprint:)`` or ``KeyAcceptance``) and the configuration
        /// of its exchange, plus the NotifyLayer to send.
        /// - Throws: ``SecretChatError/invalidPlaintext(_:)`` only if the NotifyLayer cannot be built.
        public static func established<R: RandomNumberGenerator>(key: Key, side: Side, config: DHConfig,
                                                                layer: Int32 = Layer.current, clock: @escaping Clock,
                                                                using rng: inout R) throws(SecretChatError) -> (Session, [Outgoing]) {
            var s = Session(side: side, state: .terminated, layer: layer, clock: clock)
            s.config = config
            let out = try s.establish(key, using: &rng)
            return (s, out)
        }

        mutating func establish<R: RandomNumberGenerator>(_ key: Key, using rng: inout R) throws(SecretChatError) -> [Outgoing] {
            keychain.add(key, validity: .indefinite, createdAt: clock())
            currentFingerprint = key.fingerprint
            keyHash = SecretChat.keyHash(originalKey: key)
            state = .sequenceBasedLayer
            return [try makeService(.notifyLayer(layers.local), using: &rng)]
        }

        /// Closes the chat (`encryptedChatDiscarded`, `discardEncryption`, or after an error that
        /// requires it): every key, exponent and stored message is dropped.
        public mutating func terminate() {
            state = .terminated
            keychain.removeAll()
            rekey = nil
            stored.removeAll()
            previousFingerprint = nil
            currentFingerprint = nil
            peerSwitchIndex = nil
        }

        // MARK: Established chat

        /// The current key's `key_fingerprint` (nil before the key exists).
        public var fingerprint: Int64? { currentFingerprint }

        /// The key image of the chat (§7.7), the same on both sides while they hold the same key.
        public var keyImage: KeyImage? { try? KeyImage(keyHash: keyHash) }

        /// The re-key phase.
        public var rekeyPhase: RekeyPhase {
            switch rekey {
            case nil: .idle
            case .requested(let id, _)?: .requested(exchangeID: id)
            case .accepted(let id, _)?: .accepted(exchangeID: id)
            }
        }

        /// Whether a re-key is due (§7.6): the current key was used for more than 100 messages, or is
        /// older than a week and encrypted at least one.
        public var isRekeyDue: Bool {
            guard let fp = currentFingerprint, let e = keychain.key(fingerprint: fp) else { return false }
            if e.useCount > Self.rekeyUseLimit { return true }
            // Overflow-checked: the clock is the caller's (a wild value means "not due", never a trap).
            let (age, overflow) = clock().subtractingReportingOverflow(e.createdAt)
            return !overflow && age > Self.rekeyAge && e.encryptedCount >= 1
        }

        /// Whether an exchange is open or the last switch is not finished (the previous key is still
        /// held): no new exchange may start.
        public var isRekeyBusy: Bool { rekey != nil || previousFingerprint != nil }

        /// A summary to compare (tests) or log.
        public var status: Status {
            let name: String = switch state {
            case .handshake(.requested): "requested"
            case .handshake(.accepting): "accepting"
            case .handshake(.accepted): "accepted"
            case .sequenceBasedLayer: "sequenceBasedLayer"
            case .terminated: "terminated"
            }
            let keys = keychain.entries.map { e in "\(e.fingerprint):\(e.validity):\(e.useCount):\(e.encryptedCount):\(e.createdAt)" }
            return Status(state: name, sentCount: sequence.sentCount, receivedCount: sequence.receivedCount,
                          peerReceivedCount: sequence.peerReceivedCount, highestSeen: sequence.highestSeen,
                          queuedCount: sequence.queuedCount, storedCount: stored.count, remoteLayer: layers.remote,
                          keys: keys, previousFingerprint: previousFingerprint, rekey: rekeyPhase)
        }

        /// Encrypts `message` as the next message of the chat. When a re-key is due and none is open,
        /// a RequestKey goes first (§7.6). Returns the messages to send, in order.
        /// - Throws: ``SecretChatError/wrongState(_:)`` before the key exists or after the end;
        ///   ``SecretChatError/invalidPlaintext(_:)`` (a message too large: a text or other field of 2²⁴
        ///   bytes or more, or a serialized layer over ``Envelope/maxTLLength``),
        ///   ``SecretChatError/protocolViolation(_:)`` (sequence numbers exhausted). The session is unchanged.
        public mutating func send<R: RandomNumberGenerator>(_ message: DecryptedMessage,
                                                           using rng: inout R) throws(SecretChatError) -> [Outgoing] {
            guard case .sequenceBasedLayer = state else { throw .wrongState("the chat is not established") }
            var s = self
            var out: [Outgoing] = []
            if !s.isRekeyBusy, s.isRekeyDue { out.append(try s.startRekey(using: &rng)) }
            out.append(try s.makeMessage(message, isService: false, using: &rng))
            self = s
            return out
        }

        /// Starts a re-key now (RequestKey with a fresh `a` and a random exchange id) and returns the
        /// message to send.
        /// - Throws: ``SecretChatError/wrongState(_:)`` when the chat is not established or an exchange is
        ///   open (§7.6: never two at once); ``SecretChatError/dhCheckFailed(_:)``.
        public mutating func requestRekey<R: RandomNumberGenerator>(using rng: inout R) throws(SecretChatError) -> Outgoing {
            guard case .sequenceBasedLayer = state else { throw .wrongState("the chat is not established") }
            guard !isRekeyBusy else { throw .wrongState("a re-key is already open") }
            var s = self
            let out = try s.startRekey(using: &rng)
            self = s
            return out
        }

        /// Aborts the exchange this side started (AbortKey), allowed until CommitKey is sent (§7.6).
        /// - Throws: ``SecretChatError/wrongState(_:)`` when we did not request one (an acceptor that sent
        ///   AcceptKey may not abort).
        public mutating func abortRekey<R: RandomNumberGenerator>(using rng: inout R) throws(SecretChatError) -> Outgoing {
            guard case .requested(let id, _)? = rekey else { throw .wrongState("no re-key of ours to abort") }
            var s = self
            s.rekey = nil
            let out = try s.makeService(.abortKey(exchangeID: id), using: &rng)
            self = s
            return out
        }

        /// Decrypts and processes the `data` of an `encryptedMessage` / `encryptedMessageService`.
        ///
        /// The candidate keys are the current one, the previous one while it is kept, and (after we
        /// sent AcceptKey) the proposed one: a message under the proposed key's fingerprint switches
        /// to it, as CommitKey would (CommitKey may be lost, §7.6). The payload must be a
        /// `decryptedMessageLayer`; v1 is sent only while the layer both sides speak is below 73, and
        /// accepted then or when the sender had not yet received our first message (our NotifyLayer:
        /// its `in_seq_no` counts none of ours), since until then it takes our layer to be 46.
        /// Sequence numbers then decide (§7.4): a duplicate is dropped, a gap queues the message and
        /// asks for a Resend, messages in order are delivered; the protocol's own service messages are
        /// acted on here.
        ///
        /// - Throws: ``SecretChatError/rejectedMessage`` (unknown fingerprint, any crypto check),
        ///   ``SecretChatError/malformedTL(_:)``, ``SecretChatError/unknownConstructor(_:)``,
        ///   ``SecretChatError/tooFewRandomBytes(_:)`` (ignore the message);
        ///   ``SecretChatError/protocolViolation(_:)``, ``SecretChatError/fingerprintMismatch``,
        ///   ``SecretChatError/dhCheckFailed(_:)`` (the peer broke the protocol: abort the chat);
        ///   ``SecretChatError/wrongState(_:)``. In every case the session is unchanged.
        public mutating func receive<R: RandomNumberGenerator>(_ data: some Collection<UInt8>,
                                                              using rng: inout R) throws(SecretChatError) -> Received {
            guard case .sequenceBasedLayer = state, let current = currentFingerprint,
                  let currentKey = keychain.key(fingerprint: current)?.key
            else { throw .wrongState("the chat is not established") }
            var candidates = [currentKey]
            if let p = previousFingerprint, let k = keychain.key(fingerprint: p)?.key { candidates.append(k) }
            var pending: KeyAcceptance?
            if case .accepted(_, let a)? = rekey { pending = a; candidates.append(a.key) }

            // v1 is tried even once both sides speak layer 73 or more, and then refused unless the
            // sender could not know our layer yet (below).
            var opened = try Envelope.decrypt(data, keys: candidates, sender: side.peer, allowV1: true)
            let payload: DecryptedPayload
            do throws(SecretChatError) {
                payload = try DecryptedPayload.decode(opened.tl)
                opened.tl.secureWipe()
            } catch {
                opened.tl.secureWipe()
                throw error
            }
            guard case .layer(let layer) = payload else {
                throw .protocolViolation("message without decryptedMessageLayer")
            }
            // Our NotifyLayer is our first message. A peer that had not received it when it wrote
            // this message (in_seq_no counts none of ours) still believed our layer to be 46 and
            // rightly used v1 (the iOS model); once it has received it, v1 is a downgrade. Without
            // this, a peer's messages written before our NotifyLayer reached it would be refused:
            // both sides start a chat at the same moment, so that race is the normal case.
            if opened.version == .v1, !layers.allowsV1, layer.inSeqNo >> 1 > 0 { throw .rejectedMessage }

            var s = self
            var result = Received()
            let reception = try s.sequence.receive(layer)
            if reception.isDuplicate {
                result.isDuplicate = true
                return result
            }
            let fp = opened.key.fingerprint
            let raw = layer.outSeqNo >> 1
            // Our sent count when this side switched as acceptor (to know whether anything followed).
            var acceptorSwitch: Int32?
            if let pending, fp == pending.keyFingerprint, fp != current {
                s.switchKey(to: pending.key)
                s.rekey = nil
                acceptorSwitch = s.sequence.sentCount
                result.keyChanged = true
            }
            s.keychain.recordUse(fingerprint: fp, encrypted: false)
            if s.previousFingerprint != nil, fp == s.currentFingerprint {
                s.peerSwitchIndex = min(s.peerSwitchIndex ?? raw, raw)
            }

            // The peer's Resend, honoured on arrival: the same bytes again.
            for wire in reception.toResend {
                guard let m = s.stored[wire >> 1] else { throw .protocolViolation("resend of a message no longer kept") }
                var again = m
                again.isResend = true
                result.outgoing.append(again)
            }
            if let request = reception.resendRequest {
                result.outgoing.append(try s.makeService(request, using: &rng))
            }
            for m in reception.delivered {
                s.layers.observe(m)
                switch m.message.action {
                case .notifyLayer?, .resend?, .noop?:
                    break
                case .requestKey(let id, let gA)?:
                    if let o = try s.handleRequestKey(id: id, gA: gA, using: &rng) { result.outgoing.append(o) }
                case .acceptKey(let id, let gB, let keyFingerprint)?:
                    if let o = try s.handleAcceptKey(id: id, gB: gB, keyFingerprint: keyFingerprint, using: &rng) {
                        result.outgoing.append(o)
                        result.keyChanged = true
                    }
                case .commitKey(let id, let keyFingerprint)?:
                    if case .accepted(let ours, let a)? = s.rekey, ours == id {
                        guard a.keyFingerprint == keyFingerprint else { throw .fingerprintMismatch }
                        s.switchKey(to: a.key)
                        s.rekey = nil
                        acceptorSwitch = s.sequence.sentCount
                        result.keyChanged = true
                        // Everything after CommitKey comes under the new key.
                        let next = (m.outSeqNo >> 1) + 1
                        s.peerSwitchIndex = min(s.peerSwitchIndex ?? next, next)
                    }
                    // A CommitKey for an exchange already switched (by a message under the new key)
                    // or unknown is ignored.
                case .abortKey(let id)?:
                    switch s.rekey {
                    case .requested(let ours, _)? where ours == id: s.rekey = nil
                    case .accepted(let ours, _)? where ours == id: s.rekey = nil
                    default: break
                    }
                default:
                    result.messages.append(m)
                }
            }
            // The initiator drops the old key only after something arrives under the new one: an
            // acceptor with nothing to say sends Noop (§7.6).
            if let count = acceptorSwitch, s.sequence.sentCount == count {
                result.outgoing.append(try s.makeService(.noop, using: &rng))
            }
            s.retirePreviousKeyIfDone()
            s.pruneStored()
            self = s
            return result
        }

        // MARK: Internals

        mutating func startRekey<R: RandomNumberGenerator>(using rng: inout R) throws(SecretChatError) -> Outgoing {
            guard let config else { throw .wrongState("no DH configuration") }
            let request = try KeyRequest(config: config, using: &rng)
            let id = Int64(bitPattern: rng.next())
            rekey = .requested(id: id, request)
            return try makeService(.requestKey(exchangeID: id, gA: request.gA), using: &rng)
        }

        /// A peer's RequestKey (§7.6): accept it when idle; concurrent requests by signed exchange id
        /// (ours larger: drop theirs silently; smaller: abandon ours and accept theirs; equal: drop
        /// both); busy with an accepted exchange or an unfinished switch: AbortKey.
        mutating func handleRequestKey<R: RandomNumberGenerator>(id: Int64, gA: [UInt8], using rng: inout R) throws(SecretChatError) -> Outgoing? {
            switch rekey {
            case .requested(let ours, _)?:
                if ours > id { return nil }
                rekey = nil
                if ours == id { return nil }
            case .accepted?:
                return try makeService(.abortKey(exchangeID: id), using: &rng)
            case nil:
                break
            }
            if previousFingerprint != nil { return try makeService(.abortKey(exchangeID: id), using: &rng) }
            guard let config else { throw .wrongState("no DH configuration") }
            let acceptance: KeyAcceptance
            do throws(SecretChatError) {
                acceptance = try KeyAcceptance(gA: gA, config: config, using: &rng)
            } catch {
                // A failed check: refuse this exchange (the caller may also end the chat).
                return try makeService(.abortKey(exchangeID: id), using: &rng)
            }
            let out = try makeService(.acceptKey(exchangeID: id, gB: acceptance.gB, keyFingerprint: acceptance.keyFingerprint),
                                      using: &rng)
            rekey = .accepted(id: id, acceptance)
            return out
        }

        /// A peer's AcceptKey for our RequestKey: compute the key, check its fingerprint, send CommitKey
        /// under the old key and switch. AcceptKey for another id is ignored.
        mutating func handleAcceptKey<R: RandomNumberGenerator>(id: Int64, gB: [UInt8], keyFingerprint: Int64,
                                                               using rng: inout R) throws(SecretChatError) -> Outgoing? {
            guard case .requested(let ours, let request)? = rekey, ours == id else { return nil }
            let key = try request.complete(gB: gB, keyFingerprint: keyFingerprint)
            let out = try makeService(.commitKey(exchangeID: id, keyFingerprint: keyFingerprint), using: &rng)
            switchKey(to: key)
            rekey = nil
            return out
        }

        /// Makes `key` current from our next message on and keeps the old one as previous.
        mutating func switchKey(to key: Key) {
            previousFingerprint = currentFingerprint
            peerSwitchIndex = nil
            keychain.add(key, validity: .sequenceBasedIndexRange(fromCanonicalIndex: sequence.sentCount), createdAt: clock())
            currentFingerprint = key.fingerprint
            rekeyCount += 1
        }

        /// Drops the previous key once every peer message before the peer's switch point has arrived.
        mutating func retirePreviousKeyIfDone() {
            guard let prev = previousFingerprint, let point = peerSwitchIndex, sequence.receivedCount >= point else { return }
            keychain.retire(fingerprint: prev)
            previousFingerprint = nil
            peerSwitchIndex = nil
        }

        /// Forgets sent messages the peer has acknowledged with its `in_seq_no`.
        mutating func pruneStored() {
            let acknowledged = sequence.peerReceivedCount
            stored = stored.filter { $0.key >= acknowledged }
        }

        mutating func makeService<R: RandomNumberGenerator>(_ action: DecryptedMessageAction, using rng: inout R) throws(SecretChatError) -> Outgoing {
            try makeMessage(.service(randomID: Int64(bitPattern: rng.next()), action: action), isService: true, using: &rng)
        }

        /// Numbers, encrypts (v1 while the peer is below layer 73) and stores the next message.
        mutating func makeMessage<R: RandomNumberGenerator>(_ message: DecryptedMessage, isService: Bool,
                                                           using rng: inout R) throws(SecretChatError) -> Outgoing {
            guard stored.count < Self.maxUnacknowledged else {
                throw .wrongState("\(Self.maxUnacknowledged) sent messages unacknowledged by the peer")
            }
            var s = sequence
            let n = try s.nextOutgoing()
            let raw = n.outSeqNo >> 1
            guard let entry = keychain.latestKey(validFor: raw) else { throw .wrongState("no key") }
            let layer = try DecryptedMessageLayer(layer: layers.local, inSeqNo: n.inSeqNo, outSeqNo: n.outSeqNo,
                                                  message: message, using: &rng)
            var tl = try layer.serialize()
            defer { tl.secureWipe() }
            let data = layers.allowsV1
                ? try Envelope.encryptV1(tl, key: entry.key, using: &rng)
                : try Envelope.encrypt(tl, key: entry.key, sender: side, using: &rng)
            sequence = s
            keychain.recordUse(fingerprint: entry.fingerprint, encrypted: true)
            let out = Outgoing(data: data, outSeqNo: n.outSeqNo, isService: isService, isResend: false)
            stored[raw] = out
            return out
        }
    }
}

// MARK: - Snapshot

extension SecretChat.Session {
    /// `MSCS`.
    public static let snapshotType = SnapshotType("MSCS")
    /// The most sent messages a snapshot may keep for resends.
    static let maxSnapshotStored = 1 << 16

    /// Snapshot (type `MSCS`, version 1, Docs/Snapshots.md §4): side (uint8: 0 creator, 1 acceptor);
    /// the state (uint8: 0 requested with its key request, 1 accepting with g_a, 2 accepted with g_a
    /// and the acceptance, 3 sequence-based layer, 4 terminated); the DH configuration (optional); the
    /// keychain; the sequence numbers with the queued messages (TL bytes); the layers; the key hash;
    /// the previous fingerprint (optional); the re-key count (uint32); the re-key in progress (uint8:
    /// 0 none, 1 requested with its id and key request, 2 accepted with its id and acceptance); the
    /// peer's switch index and the current fingerprint (optional each); the messages kept for resends,
    /// ascending by raw out_seq_no (data, out_seq_no, service and resend flags). The clock is not in it:
    /// ``init(restoring:clock:newerThan:)`` takes one.
    ///
    /// Old snapshots: a chat restored from an older snapshot would number new messages with
    /// `out_seq_no`s it has already used (the peer drops them as duplicates: lost messages) and accept
    /// again messages it has received. ``generation`` grows with every message sent or received, and a
    /// restore refuses a snapshot whose generation is below `newerThan`, the newest the application
    /// recorded: the application writes the snapshot (atomically) before it hands a message to the
    /// network and after it accepted one, and records the generation with it. Message keys are never
    /// reused even then: each message key comes from its own random padding and contents (msg_key).
    public func snapshot() -> SnapshotBytes {
        // The size, nearly: keys, messages kept for resends, the rest under 4 KiB.
        let expected = 4096 + keychain.entries.count * 300 + stored.values.reduce(0) { $0 + $1.data.count + 14 }
        var w = SnapshotWriter(type: Self.snapshotType, version: 1, capacity: expected)
        w.uint8(side == .creator ? 0 : 1)
        switch state {
        case .handshake(.requested(let request)): w.uint8(0); request.write(to: &w)
        case .handshake(.accepting(let gA)): w.uint8(1); w.bytes(gA)
        case .handshake(.accepted(let gA, let acceptance)): w.uint8(2); w.bytes(gA); acceptance.write(to: &w)
        case .sequenceBasedLayer: w.uint8(3)
        case .terminated: w.uint8(4)
        }
        w.optional(config) { c, v in v.write(to: &c) }
        keychain.write(to: &w)
        sequence.write(to: &w) { w, layer in w.bytes(layer.serialized) }
        layers.write(to: &w)
        w.bytes(keyHash)
        w.optional(previousFingerprint) { $0.int64($1) }
        w.uint32(UInt32(clamping: rekeyCount))
        switch rekey {
        case nil: w.uint8(0)
        case .requested(let id, let request)?: w.uint8(1); w.int64(id); request.write(to: &w)
        case .accepted(let id, let acceptance)?: w.uint8(2); w.int64(id); acceptance.write(to: &w)
        }
        w.optional(peerSwitchIndex) { $0.int32($1) }
        w.optional(currentFingerprint) { $0.int64($1) }
        w.list(stored.keys.sorted()) { w, k in
            let o = stored[k]!
            w.int32(k)
            w.bytes(o.data)
            w.int32(o.outSeqNo)
            w.bool(o.isService)
            w.bool(o.isResend)
        }
        return w.finish()
    }

    /// Adds `keys` to the keychain as keys of past re-keys (valid from raw indices 0, 1, …), for
    /// benchmarks and tests that need a large keychain (a chat re-keyed many times while messages were
    /// still in flight under older keys).
    @_spi(Testing) public mutating func addKeysForTesting(_ keys: [SecretChat.Key], createdAt: Int64) {
        for (i, k) in keys.enumerated() {
            keychain.add(k, validity: .sequenceBasedIndexRange(fromCanonicalIndex: Int32(i)), createdAt: createdAt)
        }
    }

    /// Messages sent and received in this chat (the sequence counters, queued ones included) and
    /// completed re-keys: it grows with every message and never decreases.
    public var generation: UInt64 {
        UInt64(sequence.sentCount) + UInt64(sequence.receivedCount) + UInt64(sequence.queuedCount) + UInt64(rekeyCount)
    }

    /// The chat of `snapshot`, with `clock`, refusing a snapshot whose ``generation`` is below
    /// `newest` (``SnapshotFault/stale(generation:newest:)``).
    /// - Throws: ``RampartError/invalidSnapshot(_:)``.
    public init(restoring snapshot: SnapshotBytes, clock: @escaping SecretChat.Clock, newerThan newest: UInt64 = 0) throws(RampartError) {
        var r = try SnapshotReader(snapshot, type: Self.snapshotType, versions: 1...1)
        let side: SecretChat.Side
        switch try r.uint8() {
        case 0: side = .creator
        case 1: side = .acceptor
        default: throw .invalidSnapshot(.invalidField("side"))
        }
        let state: State
        switch try r.uint8() {
        case 0: state = .handshake(.requested(try SecretChat.KeyRequest(reading: &r)))
        case 1: state = .handshake(.accepting(gA: try r.bytes("g_a", max: 256)))
        case 2:
            let gA = try r.bytes("g_a", max: 256)
            state = .handshake(.accepted(gA: gA, try SecretChat.KeyAcceptance(reading: &r)))
        case 3: state = .sequenceBasedLayer
        case 4: state = .terminated
        default: throw .invalidSnapshot(.invalidField("state"))
        }
        let config = try r.optional("dh config") { (r) throws(RampartError) in try SecretChat.DHConfig(reading: &r) }
        let keychain = try SecretChat.Keychain(reading: &r)
        let sequence = try SecretChat.SequenceNumbers<SecretChat.DecryptedMessageLayer>(
            role: side == .creator ? .creator : .acceptor, reading: &r) { (r) throws(RampartError) in
            let bytes = try r.bytes("queued message", max: 1 << 20)
            do { return try SecretChat.DecryptedMessageLayer.decode(bytes) } catch { throw .invalidSnapshot(.invalidField("queued message")) }
        }
        let layers = try SecretChat.LayerNegotiation(reading: &r)
        let keyHash = try r.bytes("key hash", max: 36)
        guard keyHash.isEmpty || keyHash.count == 36 else { throw .invalidSnapshot(.invalidField("key hash")) }
        let previous = try r.optional("previous fingerprint") { (r) throws(RampartError) in try r.int64() }
        let rekeys = Int(try r.uint32())
        let rekey: Rekey?
        switch try r.uint8() {
        case 0: rekey = nil
        case 1: rekey = .requested(id: try r.int64(), try SecretChat.KeyRequest(reading: &r))
        case 2: rekey = .accepted(id: try r.int64(), try SecretChat.KeyAcceptance(reading: &r))
        default: throw .invalidSnapshot(.invalidField("re-key"))
        }
        let switchIndex = try r.optional("switch index") { (r) throws(RampartError) in try r.int32() }
        let current = try r.optional("current fingerprint") { (r) throws(RampartError) in try r.int64() }
        let stored = try r.list("stored messages", max: Self.maxSnapshotStored, minElementBytes: 14) { (r) throws(RampartError) -> (Int32, Outgoing) in
            let k = try r.int32()
            let data = try r.bytes("stored message", max: 1 << 20)
            let out = try r.int32()
            return (k, Outgoing(data: data, outSeqNo: out, isService: try r.bool("service"), isResend: try r.bool("resend")))
        }
        try r.finish()
        // Consistency: keys only once established, the current fingerprint held, stored messages ascending
        // and below the sent count.
        if let current, keychain.key(fingerprint: current) == nil { throw .invalidSnapshot(.invalidField("current fingerprint")) }
        var last = Int32(-1)
        for (k, o) in stored {
            guard k > last, k < sequence.sentCount, o.outSeqNo >> 1 == k else { throw .invalidSnapshot(.invalidField("stored messages")) }
            last = k
        }
        self.init(side: side, state: state, layer: layers.local, clock: clock)
        self.config = config
        self.keychain = keychain
        self.sequence = sequence
        self.layers = layers
        self.keyHash = keyHash
        previousFingerprint = previous
        rekeyCount = rekeys
        self.rekey = rekey
        peerSwitchIndex = switchIndex
        currentFingerprint = current
        self.stored.reserveCapacity(stored.count)
        for (k, o) in stored { self.stored[k] = o }
        guard generation >= newest else { throw .invalidSnapshot(.stale(generation: generation, newest: newest)) }
    }
}
