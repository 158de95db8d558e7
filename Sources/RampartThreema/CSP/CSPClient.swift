// The client side of the chat-server handshake, sans I/O: client-hello, server-hello (pinned server
// key, cookie checks), login with vouch and extensions, login-ack; then frames through
// `CSP.Transport`.

import Rampart

extension CSP {
    /// What a connection object produced from received bytes: bytes to send, in order, and events.
    public struct Output: Sendable, Hashable {
        /// Bytes to write to the socket (empty when there is nothing to send).
        public var outgoing: [UInt8] = []
        /// Events in the order they happened.
        public var events: [Event] = []

        /// An empty output.
        public init() {}
    }

    /// An event of a connection.
    public enum Event: Sendable, Hashable {
        /// Server side: the client's login was verified; payloads may flow.
        case loggedIn(Login)
        /// Client side: the server acknowledged the login; payloads may flow.
        case loginAcknowledged
        /// A payload arrived.
        case payload(Payload)
    }

    /// One client connection. A value: every throwing method leaves it unchanged, and the caller
    /// closes the socket.
    ///
    /// Sequence numbers: the login box uses client sequence number 1 and the extensions box 2, so the
    /// first frame uses 3; the server-hello uses server sequence number 1 and the login-ack 2.
    public struct Client: Sendable {
        /// What the client logs in with.
        public struct Configuration: Sendable {
            /// The identity (its secret key makes the vouch).
            public var identity: ThreemaIdentity
            /// The server permanent keys accepted (the apps pin a primary and a fallback key); the
            /// server-hello box must open under one of them.
            public var permittedServerKeys: [Curve25519.KeyAgreement.PublicKey]
            /// The login extensions to send.
            public var extensions: LoginExtensions

            /// A configuration.
            public init(identity: ThreemaIdentity, permittedServerKeys: [Curve25519.KeyAgreement.PublicKey],
                        extensions: LoginExtensions = LoginExtensions()) {
                self.identity = identity
                self.permittedServerKeys = permittedServerKeys
                self.extensions = extensions
            }
        }

        /// The handshake progress.
        public enum State: Sendable, Hashable {
            /// `client-hello` sent.
            case awaitingServerHello
            /// `login` sent.
            case awaitingLoginAck
            /// Payloads may flow.
            case established
        }

        /// The configuration.
        public let configuration: Configuration
        /// The client cookie CCK.
        public let clientCookie: [UInt8]
        /// The state.
        public private(set) var state: State = .awaitingServerHello
        /// The server cookie SCK, once the server-hello arrived.
        public private(set) var serverCookie: [UInt8]?
        /// The permitted server key the server-hello opened under.
        public private(set) var serverPermanentKey: Curve25519.KeyAgreement.PublicKey?

        private var temporaryKey: Curve25519.KeyAgreement.PrivateKey?
        private let encodedExtensions: [UInt8]
        private var pending: [UInt8] = []
        private var sessionKey: Box.SharedKey?
        private var sending: NonceSequence
        private var receiving: NonceSequence?
        /// The established transport (``State/established`` only).
        public private(set) var transport: Transport?

        private init(configuration: Configuration, temporaryKey: Curve25519.KeyAgreement.PrivateKey,
                     cookie: [UInt8], extensions: [UInt8]) {
            self.configuration = configuration
            self.temporaryKey = temporaryKey
            clientCookie = cookie
            encodedExtensions = extensions
            sending = NonceSequence(cookie: cookie)
        }

        /// Starts a connection with a fresh temporary key TCK and cookie CCK; returns the client and
        /// the `client-hello` to send.
        ///
        /// - Throws: ``ThreemaError/invalidArgument(_:)`` for no permitted server key or extensions
        ///   that do not encode or exceed ``CSP/maximumExtensionsLength`` when sealed.
        public static func start<R: RandomNumberGenerator>(configuration: Configuration, using rng: inout R)
            throws(ThreemaError) -> (client: Client, clientHello: [UInt8]) {
            try start(configuration: configuration, temporaryKey: .init(using: &rng), cookie: randomBytes(16, using: &rng))
        }

        /// As ``start(configuration:using:)`` with a given TCK and CCK (tests, vectors).
        public static func start(configuration: Configuration, temporaryKey: Curve25519.KeyAgreement.PrivateKey,
                                 cookie: [UInt8]) throws(ThreemaError) -> (client: Client, clientHello: [UInt8]) {
            guard cookie.count == CSP.cookieLength else { throw .invalidArgument("a cookie has 16 bytes") }
            guard !configuration.permittedServerKeys.isEmpty else { throw .invalidArgument("no permitted server key") }
            let extensions = try configuration.extensions.encoded()
            guard extensions.count + Box.tagByteCount <= CSP.maximumExtensionsLength else {
                throw .invalidArgument("the login extensions exceed \(CSP.maximumExtensionsLength) bytes sealed")
            }
            let client = Client(configuration: configuration, temporaryKey: temporaryKey, cookie: cookie, extensions: extensions)
            return (client, temporaryKey.publicKey.rawRepresentation + cookie)
        }

        /// Consumes bytes from the server (any split of the stream) and returns what to send and
        /// what happened.
        ///
        /// - Throws: ``ThreemaError/csp(_:)`` with ``CSPFault/cookiesEqual``,
        ///   ``CSPFault/serverKeyNotPermitted``, ``CSPFault/repeatedCookieMismatch``,
        ///   ``CSPFault/authenticationFailed(_:)``, the frame and payload faults,
        ///   ``CSPFault/unexpectedPayload(type:)`` for a payload only a client sends;
        ///   ``ThreemaError/invalidPublicKey`` for a small-order server temporary key. The client is
        ///   unchanged then.
        public mutating func receive<C: Collection<UInt8>>(_ chunk: C) throws(ThreemaError) -> Output {
            if state == .established, transport != nil {
                // In place: the transport undoes its own refusals, and no buffered frame is copied.
                var out = Output()
                out.events = try transport!.receiveAtomically(Array(chunk)[...], accepting: { $0.serverMaySend }).map { .payload($0) }
                return out
            }
            var copy = self
            let out = try copy.receiveInPlace(Array(chunk)[...])
            self = copy
            return out
        }

        /// Seals a payload into a frame (``State/established`` only).
        ///
        /// - Throws: ``CSPFault/invalidState`` before the login-ack or for a payload only the server
        ///   sends, the ``Transport/seal(type:data:)`` faults; the client is unchanged then.
        public mutating func send(_ payload: Payload) throws(ThreemaError) -> [UInt8] {
            guard state == .established, var t = transport, payload.clientMaySend else { throw .csp(.invalidState) }
            let frame = try t.seal(payload)
            transport = t
            return frame
        }

        /// Seals several payloads into consecutive frames, all or none (the client is unchanged when
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
                case .awaitingServerHello:
                    guard let hello = accumulate(CSP.serverHelloLength, &rest) else { return out }
                    out.outgoing += try processServerHello(hello)
                case .awaitingLoginAck:
                    guard let ack = accumulate(CSP.loginAckLength, &rest) else { return out }
                    try processLoginAck(ack)
                    out.events.append(.loginAcknowledged)
                case .established:
                    guard transport != nil else { throw .csp(.invalidState) }
                    out.events += try transport!.receiveAtomically(rest, accepting: { $0.serverMaySend }).map { .payload($0) }
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

        private mutating func processServerHello(_ hello: [UInt8]) throws(ThreemaError) -> [UInt8] {
            guard let tck = temporaryKey else { throw .csp(.invalidState) }
            let sck = Array(hello[0..<CSP.cookieLength])
            guard !ConstantTime.equals(sck, clientCookie) else { throw .csp(.cookiesEqual) }
            let box = hello[CSP.cookieLength...]
            let nonce = CSP.nonce(sck, 1)
            var opened: (plaintext: [UInt8], key: Curve25519.KeyAgreement.PublicKey)?
            for key in configuration.permittedServerKeys {
                // Which pinned key the server holds is public; the trial only depends on it.
                guard let shared = try? PairKeys.sharedKey(tck, key), let p = try? shared.open(box, nonce: nonce) else { continue }
                opened = (p, key)
                break
            }
            guard let (challenge, serverKey) = opened else { throw .csp(.serverKeyNotPermitted) }
            challenge.withUnsafeBytes { declassify($0.baseAddress!, $0.count) }   // authenticated: TSK.public ‖ CCK
            guard ConstantTime.equals(challenge[32..<48], clientCookie) else { throw .csp(.repeatedCookieMismatch) }
            let tsk: Curve25519.KeyAgreement.PublicKey
            do { tsk = try .init(rawRepresentation: challenge[0..<32]) } catch { throw .invalidPublicKey }
            let key = try PairKeys.sharedKey(tck, tsk)
            var vouch = try DirectoryAuthentication.loginVouch(
                identity: configuration.identity, serverPermanentKey: serverKey, serverTemporaryKey: tsk,
                serverCookie: sck, clientTemporaryKey: tck.publicKey)
            defer { vouch.secureWipe() }
            var loginData = LoginData(identity: configuration.identity.id,
                                      extensionsLength: encodedExtensions.count + Box.tagByteCount,
                                      serverCookie: sck, vouch: vouch).encoded
            defer { loginData.secureWipe() }
            var csn = sending
            let loginBox: [UInt8], extensionsBox: [UInt8]
            do {
                loginBox = try key.seal(loginData, nonce: try csn.current())
                csn.advance()
                extensionsBox = try key.seal(encodedExtensions, nonce: try csn.current())
                csn.advance()
            } catch let e as ThreemaError {
                throw e
            } catch {
                throw .invalidArgument("box")
            }
            var ssn = NonceSequence(cookie: sck)
            ssn.advance()
            sending = csn
            receiving = ssn
            sessionKey = key
            serverCookie = sck
            serverPermanentKey = serverKey
            temporaryKey = nil
            state = .awaitingLoginAck
            return loginBox + extensionsBox
        }

        private mutating func processLoginAck(_ ack: [UInt8]) throws(ThreemaError) {
            guard let key = sessionKey, var ssn = receiving else { throw .csp(.invalidState) }
            do { _ = try key.open(ack, nonce: try ssn.current()) } catch { throw .csp(.authenticationFailed(.loginAck)) }
            ssn.advance()
            transport = Transport(key: key, sending: sending, receiving: ssn)
            sessionKey = nil
            receiving = nil
            state = .established
        }
    }
}
