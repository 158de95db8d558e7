// The server side of the chat-server handshake, one object per TCP connection, sans I/O: answers
// the client-hello, verifies the login (repeated cookie, identity lookup, vouch) and its extensions,
// acknowledges it; then frames through `CSP.Transport`. A socket server feeds it received bytes
// and writes `Output.outgoing`.

import Rampart

extension CSP {
    /// One server-side connection. A value: every throwing method leaves it unchanged, and the
    /// caller closes the socket.
    ///
    /// ```swift
    /// var conn = CSP.Server(configuration: config, using: &rng)
    /// let out = try conn.receive(bytes)      // write out.outgoing; .loggedIn(login) once verified
    /// let frame = try conn.send(.incomingMessage(message))
    /// ```
    public struct Server: Sendable {
        /// The server's keys and its directory.
        public struct Configuration: Sendable {
            /// The server permanent secret key SK (clients pin its public key).
            public var permanentKey: Curve25519.KeyAgreement.PrivateKey
            /// The identity public key of a Threema ID, or nil for an unknown identity.
            public var lookUpIdentity: @Sendable (ThreemaID) -> Curve25519.KeyAgreement.PublicKey?

            /// A configuration.
            public init(permanentKey: Curve25519.KeyAgreement.PrivateKey,
                        lookUpIdentity: @escaping @Sendable (ThreemaID) -> Curve25519.KeyAgreement.PublicKey?) {
                self.permanentKey = permanentKey
                self.lookUpIdentity = lookUpIdentity
            }
        }

        /// The handshake progress.
        public enum State: Sendable, Hashable {
            /// Nothing received yet.
            case awaitingClientHello
            /// `server-hello` sent.
            case awaitingLogin
            /// The login box verified; the extensions box (of the given length) is due.
            case awaitingLoginExtensions(length: Int)
            /// `login-ack` sent; payloads may flow.
            case established
        }

        /// The configuration.
        public let configuration: Configuration
        /// The server cookie SCK.
        public let serverCookie: [UInt8]
        /// The state.
        public private(set) var state: State = .awaitingClientHello
        /// The client cookie CCK, once the client-hello arrived.
        public private(set) var clientCookie: [UInt8]?
        /// The verified login (from ``State/established`` on).
        public private(set) var login: Login?

        private var temporaryKey: Curve25519.KeyAgreement.PrivateKey?
        private var clientTemporaryKey: Curve25519.KeyAgreement.PublicKey?
        private var pending: [UInt8] = []
        private var sessionKey: Box.SharedKey?
        private var sending: NonceSequence
        private var receiving: NonceSequence?
        /// Identity, key and legacy client info of a login whose extensions are still due.
        private var verified: (id: ThreemaID, key: Curve25519.KeyAgreement.PublicKey)?
        /// The established transport (``State/established`` only).
        public private(set) var transport: Transport?

        /// A connection with a fresh temporary key TSK and cookie SCK.
        public init<R: RandomNumberGenerator>(configuration: Configuration, using rng: inout R) {
            self.init(configuration: configuration, temporaryKey: .init(using: &rng), checkedCookie: randomBytes(16, using: &rng))
        }

        /// A connection with a given TSK and SCK (tests, vectors).
        ///
        /// - Throws: ``ThreemaError/invalidArgument(_:)`` for a cookie other than 16 bytes.
        public init(configuration: Configuration, temporaryKey: Curve25519.KeyAgreement.PrivateKey,
                    cookie: [UInt8]) throws(ThreemaError) {
            guard cookie.count == CSP.cookieLength else { throw .invalidArgument("a cookie has 16 bytes") }
            self.init(configuration: configuration, temporaryKey: temporaryKey, checkedCookie: cookie)
        }

        private init(configuration: Configuration, temporaryKey: Curve25519.KeyAgreement.PrivateKey, checkedCookie: [UInt8]) {
            self.configuration = configuration
            self.temporaryKey = temporaryKey
            serverCookie = checkedCookie
            sending = NonceSequence(cookie: checkedCookie)
        }

        /// Consumes bytes from the client (any split of the stream) and returns what to send and
        /// what happened.
        ///
        /// - Throws: ``ThreemaError/csp(_:)`` with ``CSPFault/cookiesEqual``,
        ///   ``CSPFault/authenticationFailed(_:)``, ``CSPFault/invalidLoginIdentity``,
        ///   ``CSPFault/repeatedCookieMismatch``, ``CSPFault/reservedNotZero``,
        ///   ``CSPFault/invalidExtensionsLength(_:)``, ``CSPFault/unknownIdentity(_:)``,
        ///   ``CSPFault/invalidVouch``, ``CSPFault/malformedExtension(_:)``, the frame and payload
        ///   faults, ``CSPFault/unexpectedPayload(type:)`` for a payload only the server sends; ``ThreemaError/invalidPublicKey`` for a small-order client key. The connection
        ///   is unchanged then.
        public mutating func receive<C: Collection<UInt8>>(_ chunk: C) throws(ThreemaError) -> Output {
            if state == .established, transport != nil {
                // In place: the transport undoes its own refusals, and no buffered frame is copied.
                var out = Output()
                out.events = try transport!.receiveAtomically(Array(chunk)[...], accepting: { $0.clientMaySend }).map { .payload($0) }
                return out
            }
            var copy = self
            let out = try copy.receiveInPlace(Array(chunk)[...])
            self = copy
            return out
        }

        /// Seals a payload into a frame (``State/established`` only).
        ///
        /// - Throws: ``CSPFault/invalidState`` before the login completed or for a payload only a
        ///   client sends, the ``Transport/seal(type:data:)`` faults; the connection is unchanged
        ///   then.
        public mutating func send(_ payload: Payload) throws(ThreemaError) -> [UInt8] {
            guard state == .established, var t = transport, payload.serverMaySend else { throw .csp(.invalidState) }
            let frame = try t.seal(payload)
            transport = t
            return frame
        }

        /// Seals several payloads into consecutive frames, all or none (the connection is unchanged when
        /// one of them is refused).
        public mutating func send(contentsOf payloads: [Payload]) throws(ThreemaError) -> [UInt8] {
            var copy = self
            var out: [UInt8] = []
            for p in payloads { out += try copy.send(p) }
            self = copy
            return out
        }

        private mutating func receiveInPlace(_ input: ArraySlice<UInt8>) throws(ThreemaError) -> Output {
            var rest = input
            var out = Output()
            while true {
                switch state {
                case .awaitingClientHello:
                    guard let hello = accumulate(CSP.clientHelloLength, &rest) else { return out }
                    out.outgoing += try processClientHello(hello)
                case .awaitingLogin:
                    guard let box = accumulate(CSP.loginBoxLength, &rest) else { return out }
                    if let login = try processLogin(box) {
                        out.outgoing += try complete(login)
                        out.events.append(.loggedIn(login))
                    }
                case .awaitingLoginExtensions(let length):
                    guard let box = accumulate(length, &rest) else { return out }
                    let login = try processExtensions(box)
                    out.outgoing += try complete(login)
                    out.events.append(.loggedIn(login))
                case .established:
                    guard transport != nil else { throw .csp(.invalidState) }
                    out.events += try transport!.receiveAtomically(rest, accepting: { $0.clientMaySend }).map { .payload($0) }
                    return out
                }
            }
        }

        private mutating func accumulate(_ n: Int, _ rest: inout ArraySlice<UInt8>) -> [UInt8]? {
            let take = min(n - pending.count, rest.count)
            pending += rest.prefix(take)
            rest = rest.dropFirst(take)
            guard pending.count == n else { return nil }
            defer { pending = [] }
            return pending
        }

        private mutating func processClientHello(_ hello: [UInt8]) throws(ThreemaError) -> [UInt8] {
            guard let tsk = temporaryKey else { throw .csp(.invalidState) }
            let tck: Curve25519.KeyAgreement.PublicKey
            do { tck = try .init(rawRepresentation: hello[0..<32]) } catch { throw .invalidPublicKey }
            let cck = Array(hello[32..<48])
            guard !ConstantTime.equals(cck, serverCookie) else { throw .csp(.cookiesEqual) }
            let helloKey = try PairKeys.sharedKey(configuration.permanentKey, tck)
            let key = try PairKeys.sharedKey(tsk, tck)
            var ssn = sending
            let box: [UInt8]
            do { box = try helloKey.seal(tsk.publicKey.rawRepresentation + cck, nonce: try ssn.current()) } catch {
                throw .invalidArgument("box")
            }
            ssn.advance()
            sending = ssn
            receiving = NonceSequence(cookie: cck)
            clientCookie = cck
            clientTemporaryKey = tck
            sessionKey = key
            state = .awaitingLogin
            return serverCookie + box
        }

        /// Verifies the login box; returns the login when no extensions follow.
        private mutating func processLogin(_ box: [UInt8]) throws(ThreemaError) -> Login? {
            guard let key = sessionKey, var csn = receiving, let tsk = temporaryKey, let tck = clientTemporaryKey else {
                throw .csp(.invalidState)
            }
            var plaintext: [UInt8]
            do { plaintext = try key.open(box, nonce: try csn.current()) } catch { throw .csp(.authenticationFailed(.login)) }
            defer { plaintext.secureWipe() }
            // Authenticated and parsed: public by design, except the vouch (bytes 80..<112), which is
            // only compared in constant time.
            plaintext.withUnsafeBytes { p in
                declassify(p.baseAddress!, 80)
                declassify(p.baseAddress! + 112, 16)
            }
            csn.advance()
            var data = LoginData(decoding: plaintext)
            defer { data.vouch.secureWipe() }
            guard let id = try? ThreemaID(bytes: data.identityBytes) else { throw .csp(.invalidLoginIdentity) }
            guard ConstantTime.equals(data.repeatedServerCookie, serverCookie) else { throw .csp(.repeatedCookieMismatch) }
            guard data.reserved1.allSatisfy({ $0 == 0 }), data.reserved2.allSatisfy({ $0 == 0 }) else {
                throw .csp(.reservedNotZero)
            }
            let extensionsLength = data.extensionsLength
            if let n = extensionsLength, n != 0, !(Box.tagByteCount...CSP.maximumExtensionsLength).contains(n) {
                throw .csp(.invalidExtensionsLength(n))
            }
            guard let publicKey = configuration.lookUpIdentity(id) else { throw .csp(.unknownIdentity(id)) }
            let ss1 = try PairKeys.sharedKey(configuration.permanentKey, publicKey)
            let ss2 = try PairKeys.sharedKey(tsk, publicKey)
            var expected = DirectoryAuthentication.loginVouch(ss1: ss1, ss2: ss2, serverCookie: serverCookie,
                                                              clientTemporaryKey: tck)
            defer { expected.secureWipe() }
            guard ConstantTime.equals(expected, data.vouch) else { throw .csp(.invalidVouch) }
            receiving = csn
            switch extensionsLength {
            case nil:
                // The old client-info field: zero-padded UTF-8.
                var info = data.clientInfoOrIndicator
                while info.last == 0 { info.removeLast() }
                guard let text = String(validating: info, as: UTF8.self) else { throw .csp(.malformedExtension(0x00)) }
                var extensions = LoginExtensions(messagePayloadVersion: nil)
                extensions.clientInfo = info.isEmpty ? nil : text
                return Login(identity: id, publicKey: publicKey, extensions: extensions, usedExtensionIndicator: false)
            case 0?:
                return Login(identity: id, publicKey: publicKey, extensions: LoginExtensions(messagePayloadVersion: nil),
                             usedExtensionIndicator: true)
            case let n?:
                verified = (id, publicKey)
                state = .awaitingLoginExtensions(length: n)
                return nil
            }
        }

        private mutating func processExtensions(_ box: [UInt8]) throws(ThreemaError) -> Login {
            guard let key = sessionKey, var csn = receiving, let (id, publicKey) = verified else { throw .csp(.invalidState) }
            var plaintext: [UInt8]
            do { plaintext = try key.open(box, nonce: try csn.current()) } catch {
                throw .csp(.authenticationFailed(.loginExtensions))
            }
            defer { plaintext.secureWipe() }
            plaintext.withUnsafeBytes { if let p = $0.baseAddress { declassify(p, $0.count) } }   // authenticated: parsed
            let extensions = try LoginExtensions(decoding: plaintext)
            csn.advance()
            receiving = csn
            return Login(identity: id, publicKey: publicKey, extensions: extensions, usedExtensionIndicator: true)
        }

        /// Sends the login-ack and moves to ``State/established``.
        private mutating func complete(_ login: Login) throws(ThreemaError) -> [UInt8] {
            guard let key = sessionKey, let csn = receiving else { throw .csp(.invalidState) }
            var ssn = sending
            let ack: [UInt8]
            do { ack = try key.seal([UInt8](repeating: 0, count: 16), nonce: try ssn.current()) } catch {
                throw .invalidArgument("box")
            }
            ssn.advance()
            transport = Transport(key: key, sending: ssn, receiving: csn)
            self.login = login
            sessionKey = nil
            receiving = nil
            verified = nil
            temporaryKey = nil
            clientTemporaryKey = nil
            state = .established
            return ack
        }
    }
}
