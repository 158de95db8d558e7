// The client side of the auth-key handshake (Docs/MTProto.md §3.2) as a sans-I/O state machine: it takes the
// server's message bodies (the `message_data` of unencrypted messages) with a clock value and an
// injected random number generator, and returns the next body to send or the finished key.

/// Verified (g, dh_prime) pairs, so a client checks a server's prime once (Docs/MTProto.md §4 recommends a
/// cache). Telegram's prime is known without a test.
public struct DHParameterCache: Sendable {
    private var verified: Set<[UInt8]> = []

    public init() {}

    /// Whether (g, p) has been verified before.
    public func contains(g: Int32, prime p: [UInt8]) -> Bool { verified.contains(Self.key(g, p)) }

    /// Records (g, p) as verified.
    public mutating func insert(g: Int32, prime p: [UInt8]) { verified.insert(Self.key(g, p)) }

    private static func key(_ g: Int32, _ p: [UInt8]) -> [UInt8] {
        [UInt8(truncatingIfNeeded: g)] + p
    }
}

/// What a finished handshake produced (either side).
public struct HandshakeResult: Sendable {
    /// The 256-byte auth key (secret).
    public var authKey: AuthKey
    /// The initial server salt: new_nonce[0..<8] ⊕ server_nonce[0..<8] read little-endian (Docs/MTProto.md §2.3).
    public var serverSalt: Int64
    /// `server_time − local time` in seconds, from server_DH_inner_data (client side; 0 on the server).
    public var timeOffset: Int64
    /// `expires_in` for a temporary key, nil for a permanent one.
    public var expiresIn: Int32?
    /// The DC id the client asked for, when the constructor carried one.
    public var dc: Int32?
}

/// The client's auth-key exchange (Docs/MTProto.md §3.2): `req_pq_multi` → `resPQ` → `req_DH_params` →
/// `server_DH_params_ok` → `set_client_DH_params` → `dh_gen_ok` (or `dh_gen_retry` and again).
///
/// Every method that receives a server message either returns the next step or throws
/// ``MTProtoError`` and leaves the machine exactly as it was, except for an authentic failure
/// answer (`server_DH_params_fail`, `dh_gen_fail`), after which the machine is in the failed state
/// and a new handshake must start.
public struct ClientHandshake: Sendable {
    /// Permanent or temporary key (Docs/MTProto.md §5).
    public enum Mode: Sendable, Equatable {
        /// `p_q_inner_data_dc`
        case permanent
        /// `p_q_inner_data_temp_dc` with `expires_in` seconds.
        case temporary(expiresIn: Int32)
    }

    /// Fixed inputs of a handshake.
    public struct Configuration: Sendable {
        /// The server public keys the client trusts; the first one whose fingerprint the server
        /// offers is used.
        public var publicKeys: [RSA.PublicKey]
        /// The DC id sent in `p_q_inner_data_dc` (+10000 for test DCs, negative for media DCs).
        public var dc: Int32
        public var mode: Mode
        /// Miller-Rabin rounds for p and (p − 1)/2 of an unknown prime.
        public var primeRounds: Int
        /// Already verified (g, dh_prime) pairs.
        public var parameterCache: DHParameterCache

        public init(publicKeys: [RSA.PublicKey], dc: Int32, mode: Mode = .permanent, primeRounds: Int = 64,
                    parameterCache: DHParameterCache = DHParameterCache()) {
            self.publicKeys = publicKeys
            self.dc = dc
            self.mode = mode
            self.primeRounds = primeRounds
            self.parameterCache = parameterCache
        }
    }

    /// What to do after a server message.
    public enum Step: Sendable {
        /// Send this body (as an unencrypted message) and wait for the answer.
        case send([UInt8])
        /// The key is established.
        case completed(HandshakeResult)
    }

    enum State: Sendable {
        case idle
        case waitingResPQ(nonce: [UInt8])
        case waitingDHParams(nonce: [UInt8], serverNonce: [UInt8], newNonce: SecretBytes, dc: Int32?, expiresIn: Int32?)
        case waitingDHGen(Exchange)
        case done
        case failed
    }

    /// The values kept between set_client_DH_params and dh_gen_*.
    struct Exchange: Sendable {
        var nonce: [UInt8], serverNonce: [UInt8], newNonce: SecretBytes
        var g: Int32, prime: BigUInt, gA: BigUInt
        var tmpKey: SecretBytes, tmpIV: SecretBytes
        /// g_a^b mod p as 256 bytes, pending the server's confirmation.
        var authKey: SecretBytes?
        var timeOffset: Int64
        var dc: Int32?, expiresIn: Int32?
    }

    public let configuration: Configuration
    var state: State = .idle
    /// The parameter cache, including what this handshake verified.
    public private(set) var parameterCache: DHParameterCache
    /// The fingerprints of `configuration.publicKeys`, in order (each is a SHA-1; computed once).
    let fingerprints: [UInt64]

    public init(configuration: Configuration) {
        self.configuration = configuration
        parameterCache = configuration.parameterCache
        fingerprints = configuration.publicKeys.map(\.mtprotoFingerprint)
    }

    /// Whether the handshake finished with a key.
    public var isCompleted: Bool { if case .done = state { return true }; return false }

    /// Whether the server refused the exchange (a new handshake is needed).
    public var isFailed: Bool { if case .failed = state { return true }; return false }

    /// Step 1: a fresh 16-byte nonce and the `req_pq_multi` body. Starting again discards any
    /// exchange in progress.
    public mutating func start<R: RandomNumberGenerator>(using rng: inout R) -> [UInt8] {
        let nonce = MTProtoRandom.bytes(16, using: &rng)
        state = .waitingResPQ(nonce: nonce)
        return ReqPQ(nonce: nonce).serialized
    }

    /// Handles the server's next message body. `now` is the local unix time in seconds (for the clock
    /// offset).
    public mutating func receive<R: RandomNumberGenerator>(_ body: [UInt8], now: Int64,
                                                           using rng: inout R) throws(MTProtoError) -> Step {
        switch state {
        case .waitingResPQ(let nonce):
            return try receiveResPQ(body, nonce: nonce, using: &rng)
        case let .waitingDHParams(nonce, serverNonce, newNonce, dc, expiresIn):
            return try receiveServerDHParams(body, nonce: nonce, serverNonce: serverNonce, newNonce: newNonce,
                                             dc: dc, expiresIn: expiresIn, now: now, using: &rng)
        case .waitingDHGen(let ex):
            return try receiveDHGen(body, ex, using: &rng)
        case .idle, .done, .failed:
            throw .handshakeFailed("no handshake message expected")
        }
    }

    // Step 2–5: resPQ → factor pq → req_DH_params.
    private mutating func receiveResPQ<R: RandomNumberGenerator>(_ body: [UInt8], nonce: [UInt8],
                                                                 using rng: inout R) throws(MTProtoError) -> Step {
        let res = try ResPQ(parsing: body)
        guard ConstantTime.equals(res.nonce, nonce) else { throw .handshakeFailed("resPQ nonce mismatch") }
        guard let index = fingerprints.firstIndex(where: { res.fingerprints.contains($0) }) else {
            throw .unknownFingerprint
        }
        let key = configuration.publicKeys[index]
        // resPQ is not authenticated: bound the work it can make us do. Telegram's pq is below 2^63
        // (Docs/MTProto.md §3.2 step 2); a 240-bit pq found by fuzzing kept Pollard-Brent busy for ~10 s.
        guard res.pq.count <= 8 else { throw .handshakeFailed("pq is longer than 64 bits") }
        let pq = BigUInt(bigEndian: res.pq)
        let factors: (p: BigUInt, q: BigUInt)
        do {
            factors = try Factorization.factorPQ(pq)
        } catch {
            throw .handshakeFailed("pq does not factor into two primes")
        }
        let newNonce = SecretBytes.random(32, using: &rng)
        let kind: PQInnerData.Kind
        switch configuration.mode {
        case .permanent: kind = .dc(configuration.dc)
        case .temporary(let e): kind = .temporaryDC(configuration.dc, expiresIn: e)
        }
        var inner = PQInnerData(pq: res.pq, p: factors.p.bigEndianBytes(), q: factors.q.bigEndianBytes(),
                                nonce: nonce, serverNonce: res.serverNonce, newNonce: newNonce.bytes, kind: kind)
        var data = inner.serialized
        inner.newNonce.secureWipe()
        defer { data.withUnsafeMutableBytes { secureZero($0) } }
        let encrypted = try RSAPad.encrypt(data, key: key, using: &rng)
        let req = ReqDHParams(nonce: nonce, serverNonce: res.serverNonce, p: inner.p, q: inner.q,
                              fingerprint: fingerprints[index], encryptedData: encrypted)
        state = .waitingDHParams(nonce: nonce, serverNonce: res.serverNonce, newNonce: newNonce,
                                 dc: kind.dc, expiresIn: kind.expiresIn)
        return .send(req.serialized)
    }

    // Step 6–7: server_DH_params_ok → checks → set_client_DH_params.
    private mutating func receiveServerDHParams<R: RandomNumberGenerator>(
        _ body: [UInt8], nonce: [UInt8], serverNonce: [UInt8], newNonce: SecretBytes, dc: Int32?, expiresIn: Int32?,
        now: Int64, using rng: inout R) throws(MTProtoError) -> Step {
        let params = try ServerDHParams(parsing: body)
        let answer: [UInt8]
        switch params {
        case let .fail(n, s, hash):
            guard ConstantTime.equals(n, nonce), ConstantTime.equals(s, serverNonce) else {
                throw .handshakeFailed("server_DH_params_fail nonce mismatch")
            }
            guard ConstantTime.equals(hash, HandshakeCrypto.newNonceHashForFail(newNonce: newNonce)) else {
                throw .handshakeFailed("server_DH_params_fail hash mismatch")
            }
            state = .failed
            throw .handshakeFailed("server_DH_params_fail")
        case let .ok(n, s, encrypted):
            guard ConstantTime.equals(n, nonce), ConstantTime.equals(s, serverNonce) else {
                throw .handshakeFailed("server_DH_params_ok nonce mismatch")
            }
            answer = encrypted
        }
        let (tmpKey, tmpIV) = HandshakeCrypto.temporaryKeyIV(newNonce: newNonce, serverNonce: serverNonce)
        let inner = try HandshakeCrypto.decryptAndVerify(answer, key: tmpKey, iv: tmpIV) { (r: inout TLReader) throws(MTProtoError) in
            try ServerDHInnerData(reading: &r)
        }
        guard ConstantTime.equals(inner.nonce, nonce), ConstantTime.equals(inner.serverNonce, serverNonce) else {
            throw .handshakeFailed("server_DH_inner_data nonce mismatch")
        }
        let prime = BigUInt(bigEndian: inner.dhPrime)
        let gA = BigUInt(bigEndian: inner.gA)
        var cache = parameterCache
        do {
            if !cache.contains(g: inner.g, prime: inner.dhPrime) {
                try DiffieHellman.checkParameters(g: Int(inner.g), prime: prime, rounds: configuration.primeRounds, using: &rng)
                cache.insert(g: inner.g, prime: inner.dhPrime)
            }
            try DiffieHellman.checkPublicValue(gA, prime: prime)
        } catch {
            throw .dhCheckFailed("\(error)")
        }
        var ex = Exchange(nonce: nonce, serverNonce: serverNonce, newNonce: newNonce, g: inner.g, prime: prime, gA: gA,
                          tmpKey: tmpKey, tmpIV: tmpIV, authKey: nil, timeOffset: Int64(inner.serverTime) - now,
                          dc: dc, expiresIn: expiresIn)
        let out = try makeSetClientDHParams(&ex, retryID: 0, using: &rng)
        parameterCache = cache
        state = .waitingDHGen(ex)
        return .send(out)
    }

    /// Step 7: b, g_b (range-checked), client_DH_inner_data, hashed and IGE-encrypted; fills
    /// `ex.authKey` with g_a^b mod p as 256 bytes.
    private func makeSetClientDHParams<R: RandomNumberGenerator>(_ ex: inout Exchange, retryID: UInt64,
                                                                using rng: inout R) throws(MTProtoError) -> [UInt8] {
        let mod: Modulus
        do { mod = try Modulus(ex.prime) } catch { throw .dhCheckFailed("dh_prime is not a usable modulus") }
        // b with g_b inside the range of Docs/MTProto.md §4 (at most 16 draws).
        if let pair = DHKeyPair.generate(g: ex.g, prime: ex.prime, modulus: mod, using: &rng) {
            let gB = pair.publicValue
            // g_a^b mod p as exactly 256 bytes, computed at fixed width (no length of it shows).
            var key: [UInt8]
            do { key = try pair.sharedKey(with: ex.gA, modulus: mod) } catch { throw .primitive(error) }
            defer { key.withUnsafeMutableBytes { secureZero($0) } }
            let inner = ClientDHInnerData(nonce: ex.nonce, serverNonce: ex.serverNonce, retryID: retryID,
                                          gB: gB.bigEndianBytes())
            let encrypted = try HandshakeCrypto.hashAndEncrypt(inner.serialized, key: ex.tmpKey, iv: ex.tmpIV, using: &rng)
            ex.authKey = SecretBytes(key)
            return SetClientDHParams(nonce: ex.nonce, serverNonce: ex.serverNonce, encryptedData: encrypted).serialized
        }
        throw .dhCheckFailed("no g_b in range after 16 tries")
    }

    // Step 9: dh_gen_ok / retry / fail.
    private mutating func receiveDHGen<R: RandomNumberGenerator>(_ body: [UInt8], _ ex: Exchange,
                                                                 using rng: inout R) throws(MTProtoError) -> Step {
        let answer = try DHGenAnswer(parsing: body)
        guard ConstantTime.equals(answer.nonce, ex.nonce), ConstantTime.equals(answer.serverNonce, ex.serverNonce) else {
            throw .handshakeFailed("dh_gen nonce mismatch")
        }
        guard let pendingKey = ex.authKey else { throw .invalidAuthKey }
        let key = try pendingKey.withUnsafeBytes { (b) throws(MTProtoError) in try AuthKey(b) }
        let expected = HandshakeCrypto.newNonceHash(newNonce: ex.newNonce, number: answer.kind.rawValue,
                                                    authKeyAuxHash: key.auxHashBytes)
        guard ConstantTime.equals(expected, answer.newNonceHash) else {
            throw .handshakeFailed("new_nonce_hash\(answer.kind.rawValue) mismatch")
        }
        switch answer.kind {
        case .ok:
            let salt = HandshakeCrypto.initialSalt(newNonce: ex.newNonce, serverNonce: ex.serverNonce)
            state = .done
            return .completed(HandshakeResult(authKey: key, serverSalt: salt, timeOffset: ex.timeOffset,
                                              expiresIn: ex.expiresIn, dc: ex.dc))
        case .retry:
            var next = ex
            let out = try makeSetClientDHParams(&next, retryID: key.auxHash, using: &rng)
            state = .waitingDHGen(next)
            return .send(out)
        case .fail:
            state = .failed
            throw .handshakeFailed("dh_gen_fail")
        }
    }
}
