// The server side of the auth-key handshake (Docs/MTProto.md §3.2, §3.3, §3.5, §8) as a sans-I/O state
// machine, for the loopback test server: pq generation, RSA_PAD and legacy RSA decoding, DH
// parameters, every check on the client's values, dh_gen_ok.

/// The server's auth-key exchange for one connection.
///
/// Feed it the client's message bodies in order. A message that fails a check throws
/// ``MTProtoError`` and leaves the machine unchanged; the caller answers with transport error −404
/// (or −444 for ``MTProtoError/wrongDC(requested:served:)``).
public struct ServerHandshake: Sendable {
    /// Fixed inputs.
    public struct Configuration: Sendable {
        /// The server's RSA keys (2048-bit); their fingerprints go into resPQ.
        public var privateKeys: [RSA.PrivateKey]
        /// The DH prime (default: Telegram's).
        public var prime: BigUInt
        /// The generator (default 3, valid for Telegram's prime).
        public var g: Int32
        /// When set, a client asking for another DC is refused (transport error −444).
        public var dc: Int32?
        /// Accept the legacy SHA-1 RSA padding with `p_q_inner_data` (what many Python clients send).
        public var acceptLegacyRSA: Bool
        /// Whether an auth_key_id is already taken (the server then answers `dh_gen_retry`, and
        /// `dh_gen_fail` after ``maxRetries`` retries). Nil: never.
        public var keyIdInUse: (@Sendable (UInt64) -> Bool)?
        /// Retries allowed before `dh_gen_fail`.
        public var maxRetries: Int = 3

        public init(privateKeys: [RSA.PrivateKey], prime: BigUInt = DiffieHellman.telegramPrime, g: Int32 = 3,
                    dc: Int32? = nil, acceptLegacyRSA: Bool = true) {
            self.privateKeys = privateKeys
            self.prime = prime
            self.g = g
            self.dc = dc
            self.acceptLegacyRSA = acceptLegacyRSA
        }
    }

    /// What to do after a client message.
    public enum Step: Sendable {
        /// Send this body (as an unencrypted message).
        case send([UInt8])
        /// Send this body (`dh_gen_ok`); the key is established.
        case completed(HandshakeResult, send: [UInt8])
        /// Send this body (`dh_gen_fail`); the exchange is over without a key.
        case failed(send: [UInt8])
    }

    enum State: Sendable {
        case waitingReqPQ
        case waitingReqDH(nonce: [UInt8], serverNonce: [UInt8], pq: [UInt8], p: [UInt8], q: [UInt8])
        case waitingSetClientDH(Pending)
        case done
    }

    struct Pending: Sendable {
        var nonce: [UInt8], serverNonce: [UInt8], newNonce: SecretBytes
        /// The secret exponent a, big-endian.
        var a: SecretBytes
        var tmpKey: SecretBytes, tmpIV: SecretBytes
        var expiresIn: Int32?, dc: Int32?
        var retryID: UInt64
        var retries = 0
    }

    public let configuration: Configuration
    var state: State = .waitingReqPQ
    let modulus: Modulus
    let fingerprints: [UInt64]

    /// - Throws: ``MTProtoError/dhCheckFailed(_:)`` when the prime is not an odd modulus, or g is
    ///   not allowed for it; ``MTProtoError/handshakeFailed(_:)`` without keys.
    public init(configuration: Configuration) throws(MTProtoError) {
        guard !configuration.privateKeys.isEmpty else { throw .handshakeFailed("no RSA key") }
        do {
            modulus = try Modulus(configuration.prime)
            try DiffieHellman.checkGenerator(Int(configuration.g), prime: configuration.prime)
        } catch {
            throw .dhCheckFailed("\(error)")
        }
        self.configuration = configuration
        fingerprints = configuration.privateKeys.map(\.publicKey.mtprotoFingerprint)
    }

    /// Whether the key has been established.
    public var isCompleted: Bool { if case .done = state { return true }; return false }

    /// Whether the next message expected is `req_DH_params` (the one that costs an RSA private
    /// operation; the test server rate-limits it).
    package var awaitsReqDHParams: Bool { if case .waitingReqDH = state { return true }; return false }

    /// Handles the client's next message body. `now` is the server's unix time in seconds.
    public mutating func receive<R: RandomNumberGenerator>(_ body: [UInt8], now: Int64,
                                                           using rng: inout R) throws(MTProtoError) -> Step {
        // A repeated req_pq restarts the exchange (clients resend it after a lost answer). A body
        // without a constructor is not one; the state's parser below refuses it with its error.
        if let id = try? TLReader(body).peekConstructor(),
           id == HandshakeConstructor.reqPQMulti || id == HandshakeConstructor.reqPQ {
            return try receiveReqPQ(body, using: &rng)
        }
        switch state {
        case let .waitingReqDH(nonce, serverNonce, pq, p, q):
            return try receiveReqDH(body, nonce: nonce, serverNonce: serverNonce, pq: pq, p: p, q: q, now: now, using: &rng)
        case .waitingSetClientDH(let pending):
            return try receiveSetClientDH(body, pending, using: &rng)
        case .waitingReqPQ, .done:
            throw .handshakeFailed("unexpected handshake message")
        }
    }

    private mutating func receiveReqPQ<R: RandomNumberGenerator>(_ body: [UInt8], using rng: inout R) throws(MTProtoError) -> Step {
        if case .waitingSetClientDH = state { throw .handshakeFailed("req_pq during the DH exchange") }
        if case .done = state { throw .handshakeFailed("req_pq after the exchange") }
        let req = try ReqPQ(parsing: body)
        let serverNonce = MTProtoRandom.bytes(16, using: &rng)
        let (p, q) = Self.generatePQ(using: &rng)
        let pq = BigUInt(p * q).bigEndianBytes()
        let pBytes = BigUInt(p).bigEndianBytes(), qBytes = BigUInt(q).bigEndianBytes()
        state = .waitingReqDH(nonce: req.nonce, serverNonce: serverNonce, pq: pq, p: pBytes, q: qBytes)
        return .send(ResPQ(nonce: req.nonce, serverNonce: serverNonce, pq: pq, fingerprints: fingerprints).serialized)
    }

    /// Two distinct random 32-bit primes p < q with the top bit set and p·q < 2⁶³ (real clients
    /// assume 4-byte p and q; tdlib factors pq up to 2⁶³).
    static func generatePQ<R: RandomNumberGenerator>(using rng: inout R) -> (UInt64, UInt64) {
        func prime() -> UInt64 {
            while true {
                // [2^31, 3037000499]: 4 bytes with the top bit set, square below 2^63.
                let c = (UInt64(0x8000_0000) + rng.next() % (3_037_000_499 - 0x8000_0000)) | 1
                if Factorization.isPrime(c) { return c }
            }
        }
        while true {
            let a = prime(), b = prime()
            if a != b { return a < b ? (a, b) : (b, a) }
        }
    }

    private mutating func receiveReqDH<R: RandomNumberGenerator>(
        _ body: [UInt8], nonce: [UInt8], serverNonce: [UInt8], pq: [UInt8], p: [UInt8], q: [UInt8],
        now: Int64, using rng: inout R) throws(MTProtoError) -> Step {
        let req = try ReqDHParams(parsing: body)
        guard ConstantTime.equals(req.nonce, nonce), ConstantTime.equals(req.serverNonce, serverNonce) else {
            throw .handshakeFailed("req_DH_params nonce mismatch")
        }
        guard req.p == p, req.q == q else { throw .handshakeFailed("req_DH_params p, q do not match") }
        guard let index = fingerprints.firstIndex(of: req.fingerprint) else { throw .unknownFingerprint }
        let key = configuration.privateKeys[index]
        var inner = try decodeInnerData(req.encryptedData, key: key)
        defer { inner.newNonce.secureWipe() }
        guard inner.pq == pq, inner.p == p, inner.q == q, ConstantTime.equals(inner.nonce, nonce),
              ConstantTime.equals(inner.serverNonce, serverNonce) else {
            throw .handshakeFailed("p_q_inner_data does not match the exchange")
        }
        if let mine = configuration.dc, let theirs = inner.kind.dc {
            // Test DCs add 10000 and media DCs are negative; compare the plain DC number.
            guard abs(Int(theirs)) % 10000 == abs(Int(mine)) % 10000 else { throw .wrongDC(requested: theirs, served: mine) }
        }
        if let e = inner.kind.expiresIn, e <= 0 { throw .handshakeFailed("expires_in must be positive") }

        // a, g_a with g_a inside the range of Docs/MTProto.md §4.
        guard let pairA = DHKeyPair.generate(g: configuration.g, prime: configuration.prime, modulus: modulus, using: &rng)
        else { throw .dhCheckFailed("no g_a in range") }
        let secretA = pairA.secret, gA = pairA.publicValue
        let newNonce = SecretBytes(inner.newNonce)
        inner.newNonce.secureWipe()
        let (tmpKey, tmpIV) = HandshakeCrypto.temporaryKeyIV(newNonce: newNonce, serverNonce: serverNonce)
        let answer = ServerDHInnerData(nonce: nonce, serverNonce: serverNonce, g: configuration.g,
                                       dhPrime: configuration.prime.bigEndianBytes(), gA: gA.bigEndianBytes(),
                                       serverTime: Int32(truncatingIfNeeded: now))
        let encrypted = try HandshakeCrypto.hashAndEncrypt(answer.serialized, key: tmpKey, iv: tmpIV, using: &rng)
        state = .waitingSetClientDH(Pending(nonce: nonce, serverNonce: serverNonce, newNonce: newNonce, a: secretA,
                                            tmpKey: tmpKey, tmpIV: tmpIV, expiresIn: inner.kind.expiresIn,
                                            dc: inner.kind.dc, retryID: 0))
        return .send(ServerDHParams.ok(nonce: nonce, serverNonce: serverNonce, encryptedAnswer: encrypted).serialized)
    }

    /// RSA_PAD first; the legacy SHA-1 padding when that fails and it is allowed.
    private func decodeInnerData(_ encrypted: [UInt8], key: RSA.PrivateKey) throws(MTProtoError) -> PQInnerData {
        // One RSA private operation, then each padding's checks on the same block.
        var m = try RSAHandshakeBlock.decrypt(encrypted, key: key, failure: .handshakeFailed("encrypted_data does not decode"))
        defer { m.withUnsafeMutableBytes { secureZero($0) } }
        // Each padding's own error is dropped on purpose: the client learns one failure for all of
        // them (no padding oracle), thrown below.
        if var padded = try? RSAPad.unpad(m) {
            defer { padded.secureWipe() }
            var r = TLReader(padded)
            if let inner = try? PQInnerData(reading: &r) { return inner }
        }
        if configuration.acceptLegacyRSA {
            if let inner = try? RSALegacyPad.unpad(m, parse: { (r: inout TLReader) throws(MTProtoError) in
                try PQInnerData(reading: &r)
            }) {
                return inner
            }
        }
        throw .handshakeFailed("encrypted_data does not decode")
    }

    private mutating func receiveSetClientDH<R: RandomNumberGenerator>(_ body: [UInt8], _ pending: Pending,
                                                                       using rng: inout R) throws(MTProtoError) -> Step {
        let req = try SetClientDHParams(parsing: body)
        guard ConstantTime.equals(req.nonce, pending.nonce), ConstantTime.equals(req.serverNonce, pending.serverNonce) else {
            throw .handshakeFailed("set_client_DH_params nonce mismatch")
        }
        let inner = try HandshakeCrypto.decryptAndVerify(req.encryptedData, key: pending.tmpKey, iv: pending.tmpIV) {
            (r: inout TLReader) throws(MTProtoError) in try ClientDHInnerData(reading: &r)
        }
        guard ConstantTime.equals(inner.nonce, pending.nonce), ConstantTime.equals(inner.serverNonce, pending.serverNonce) else {
            throw .handshakeFailed("client_DH_inner_data nonce mismatch")
        }
        guard inner.retryID == pending.retryID else { throw .handshakeFailed("retry_id mismatch") }
        let gB = BigUInt(bigEndian: inner.gB)
        do {
            try DiffieHellman.checkPublicValue(gB, prime: configuration.prime)
        } catch {
            throw .dhCheckFailed("g_b out of range")
        }
        // g_b^a mod p as exactly 256 bytes, computed at fixed width; the bytes are wiped once the
        // AuthKey holds its own copy.
        var keyBytes: [UInt8]
        do { keyBytes = try DHKeyPair(secret: pending.a, publicValue: BigUInt()).sharedKey(with: gB, modulus: modulus) } catch { throw .primitive(error) }
        defer { keyBytes.secureWipe() }
        let key = try AuthKey(keyBytes)
        if let inUse = configuration.keyIdInUse, inUse(key.id) {
            // Docs/MTProto.md §3.2 step 9: dh_gen_retry (the client retries with retry_id = auth_key_aux_hash),
            // or dh_gen_fail once the retries are used up.
            let kind: DHGenAnswer.Kind = pending.retries < configuration.maxRetries ? .retry : .fail
            let hash = HandshakeCrypto.newNonceHash(newNonce: pending.newNonce, number: kind.rawValue,
                                                    authKeyAuxHash: key.auxHashBytes)
            let answer = DHGenAnswer(kind: kind, nonce: pending.nonce, serverNonce: pending.serverNonce, newNonceHash: hash)
            if kind == .fail {
                state = .done
                return .failed(send: answer.serialized)
            }
            var next = pending
            next.retryID = key.auxHash
            next.retries += 1
            state = .waitingSetClientDH(next)
            return .send(answer.serialized)
        }
        let hash = HandshakeCrypto.newNonceHash(newNonce: pending.newNonce, number: DHGenAnswer.Kind.ok.rawValue,
                                                authKeyAuxHash: key.auxHashBytes)
        let salt = HandshakeCrypto.initialSalt(newNonce: pending.newNonce, serverNonce: pending.serverNonce)
        state = .done
        let answer = DHGenAnswer(kind: .ok, nonce: pending.nonce, serverNonce: pending.serverNonce, newNonceHash: hash)
        return .completed(HandshakeResult(authKey: key, serverSalt: salt, timeOffset: 0,
                                          expiresIn: pending.expiresIn, dc: pending.dc),
                          send: answer.serialized)
    }
}
