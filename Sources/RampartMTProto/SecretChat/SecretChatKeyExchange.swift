// Secret-chat key exchange (Docs/MTProto.md §7.2, checks of §4): the DH configuration of
// `messages.getDhConfig` cached by version, the creator's (a, g_a) and the acceptor's (b, g_b), the
// 256-byte chat key and its key_fingerprint. The same two halves serve re-keying (§7.6:
// RequestKey/AcceptKey with the chat's original p and g).

extension SecretChat {
    /// Which side of a secret chat a message or a value belongs to (Docs/MTProto.md §7.3, §9.6).
    ///
    /// The message-key offset `x` follows the *author* of a message: 0 for messages written by the
    /// chat's creator (the side that called `messages.requestEncryption`), 8 for messages written by
    /// the other participant, whichever device reads them. A receiver therefore decrypts with the
    /// sender's side.
    public enum Side: Sendable, Hashable {
        /// The side that created the chat (`requestEncryption`): writes with x = 0.
        case creator
        /// The side that accepted it (`acceptEncryption`): writes with x = 8.
        case acceptor

        /// The offset `x` for messages written by this side.
        @inlinable public var x: Int { self == .creator ? 0 : 8 }
        /// The other side.
        @inlinable public var peer: Side { self == .creator ? .acceptor : .creator }
        /// The same offset as an MTProto direction (the creator writes like a client).
        var direction: MTProtoDirection { self == .creator ? .clientToServer : .serverToClient }
    }

    /// A secret-chat key: exactly 256 bytes (`g_ab mod p` left-padded, Docs/MTProto.md §7.2) with its
    /// `key_fingerprint`.
    ///
    /// The bytes live in one allocation that is wiped when the last copy of the value is released
    /// (the storage of ``AuthKey``, whose `auth_key_id` is the same SHA-1 slice). Equality compares
    /// the 256 bytes in constant time; hashing uses the public fingerprint only.
    public struct Key: Sendable, Equatable, Hashable {
        let auth: AuthKey

        /// The number of bytes in a key.
        public static let byteCount = 256

        /// Takes a copy of `bytes` (exactly 256; the caller wipes its own buffer).
        /// - Throws: ``SecretChatError/invalidKey`` for any other length.
        public init(_ bytes: some Collection<UInt8>) throws(SecretChatError) {
            do { auth = try AuthKey(bytes) } catch { throw .invalidKey }
        }

        init(auth: AuthKey) { self.auth = auth }

        /// `key_fingerprint`: SHA1(key)[12..<20] read as a little-endian int64 (Docs/MTProto.md §7.2). It
        /// travels in clear in front of every message and in `acceptEncryption`, AcceptKey and
        /// CommitKey. A consistency check only, unrelated to the key image (§7.7).
        public var fingerprint: Int64 { Int64(bitPattern: auth.id) }

        /// The fingerprint as it appears on the wire (SHA1(key)[12..<20]).
        public var fingerprintBytes: [UInt8] { auth.idBytes }

        /// Calls `body` with the 256 key bytes. Do not let the pointer escape.
        public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
            try auth.withUnsafeBytes(body)
        }

        /// Constant-time comparison of the 256 key bytes.
        public static func == (a: Key, b: Key) -> Bool { a.auth == b.auth }
        /// Hashes the public fingerprint only.
        public func hash(into h: inout Hasher) { h.combine(auth.id) }
    }

    /// A Diffie-Hellman configuration from `messages.dhConfig` (Docs/MTProto.md §7.2) that passed the
    /// checks of §4: `p` a 2048-bit safe prime (Telegram's known prime without a test), `g` in
    /// 2…7 and a quadratic residue mod `p`.
    public struct DHConfig: Sendable {
        /// The generator.
        public let g: Int32
        /// `p` as 256 big-endian bytes.
        public let prime: [UInt8]
        /// The configuration's version (what `messages.getDhConfig` sends back to get
        /// `dhConfigNotModified`).
        public let version: Int32
        let primeValue: BigUInt
        let modulus: Modulus

        /// Checks `(g, p)` (Docs/MTProto.md §4) and keeps them with `version`.
        ///
        /// - Parameter rounds: Miller-Rabin rounds for a prime that is not Telegram's (64 by default;
        ///   §4 allows 15 when time is short).
        /// - Throws: ``SecretChatError/dhCheckFailed(_:)`` naming the failed check.
        public init<R: RandomNumberGenerator>(g: Int32, prime: [UInt8], version: Int32, rounds: Int = 64,
                                              using rng: inout R) throws(SecretChatError) {
            guard prime.count == 256 else { throw .dhCheckFailed("dh_prime must be 256 bytes") }
            let p = BigUInt(bigEndian: prime)
            do {
                try DiffieHellman.checkParameters(g: Int(g), prime: p, rounds: rounds, using: &rng)
                modulus = try Modulus(p)
            } catch {
                throw .dhCheckFailed("\(error)")
            }
            self.g = g
            self.prime = prime
            self.version = version
            primeValue = p
        }

        /// A configuration whose checks passed before (a snapshot of one), with its modulus.
        init(checked g: Int32, prime: [UInt8], version: Int32, primeValue: BigUInt, modulus: Modulus) {
            self.g = g
            self.prime = prime
            self.version = version
            self.primeValue = primeValue
            self.modulus = modulus
        }

        /// Telegram's prime with g = 3, checked once per process (restoring a snapshot reuses it).
        static let telegramChecked: DHConfig = telegram()

        /// Telegram's well-known prime with `g = 3` (what the servers send), for tests and tools.
        public static func telegram(version: Int32 = 1) -> DHConfig {
            var rng = SecureRandom()
            // Known prime: no primality test runs, the generator rule holds for g = 3 (§4).
            return try! DHConfig(g: 3, prime: DiffieHellman.telegramPrime.bigEndianBytes(), version: version, using: &rng)
        }

        /// Checks a peer's public value (`g_a` or `g_b`): 256 bytes or fewer, and
        /// 2^1984 ≤ v ≤ p − 2^1984 (which implies 1 < v < p − 1), Docs/MTProto.md §4.
        /// - Throws: ``SecretChatError/dhCheckFailed(_:)``.
        public func checkPublicValue(_ value: [UInt8]) throws(SecretChatError) -> BigUInt {
            guard value.count <= 256 else { throw .dhCheckFailed("public value longer than 256 bytes") }
            let v = BigUInt(bigEndian: value)
            do { try DiffieHellman.checkPublicValue(v, prime: primeValue) } catch { throw .dhCheckFailed("\(error)") }
            return v
        }
    }

    /// Verified DH configurations by version (Docs/MTProto.md §7.2: the client caches
    /// `messages.dhConfig` and sends its version so that the server can answer `dhConfigNotModified`).
    public struct DHConfigCache: Sendable {
        /// The configuration in use, if any.
        public private(set) var current: DHConfig?

        public init() {}

        /// The `version` argument of the next `messages.getDhConfig` (0 before any configuration).
        public var version: Int32 { current?.version ?? 0 }

        /// Takes a `messages.dhConfig`: the cached configuration when `version`, `g` and `p` are the
        /// same (no second prime test), otherwise checks the new values (§4) and caches them. The
        /// cache is unchanged when the check fails.
        /// - Throws: ``SecretChatError/dhCheckFailed(_:)``.
        public mutating func update<R: RandomNumberGenerator>(g: Int32, prime: [UInt8], version: Int32,
                                                              rounds: Int = 64, using rng: inout R) throws(SecretChatError) -> DHConfig {
            if let c = current, c.version == version, c.g == g, c.prime == prime { return c }
            let c = try DHConfig(g: g, prime: prime, version: version, rounds: rounds, using: &rng)
            current = c
            return c
        }

        /// Takes a `messages.dhConfigNotModified`: the cached configuration.
        /// - Throws: ``SecretChatError/dhCheckFailed(_:)`` when nothing is cached.
        public func notModified() throws(SecretChatError) -> DHConfig {
            guard let c = current else { throw .dhCheckFailed("dhConfigNotModified without a cached configuration") }
            return c
        }
    }

    /// The creator's half of the exchange (Docs/MTProto.md §7.2 steps 1 and 3), or the half of whoever
    /// sends `decryptedMessageActionRequestKey` during a re-key (§7.6): the secret `a` and `g_a`.
    ///
    /// The exponent lives in a wiped allocation owned by this value (released with the last copy).
    public struct KeyRequest: Sendable {
        /// The configuration the exchange uses.
        public let config: DHConfig
        let pair: DHKeyPair

        /// `g_a` as 256 big-endian bytes, for `messages.requestEncryption` or RequestKey.
        public var gA: [UInt8] { leftPadded(pair.publicValue.bigEndianBytes()) }

        /// Picks `a` (256 bytes from `rng`, with `serverRandom` XORed in, §4) so that `g_a` lies in the
        /// range of §4.
        /// - Throws: ``SecretChatError/dhCheckFailed(_:)`` if no draw lands in range (16 tries).
        public init<R: RandomNumberGenerator>(config: DHConfig, serverRandom: [UInt8] = [],
                                              using rng: inout R) throws(SecretChatError) {
            guard let p = DHKeyPair.generate(g: config.g, prime: config.primeValue, modulus: config.modulus,
                                             mixing: serverRandom.isEmpty ? nil : serverRandom, using: &rng)
            else { throw .dhCheckFailed("no g_a in range") }
            self.config = config
            pair = p
        }

        /// A request restored from a snapshot.
        init(config: DHConfig, pair: DHKeyPair) {
            self.config = config
            self.pair = pair
        }

        /// Step 3: takes the peer's `g_b` and `key_fingerprint`, checks `g_b` (§4), computes
        /// `key = g_b^a mod p` (256 bytes, constant-time) and compares the fingerprints.
        /// - Throws: ``SecretChatError/dhCheckFailed(_:)`` for `g_b`;
        ///   ``SecretChatError/fingerprintMismatch`` when the fingerprints differ (discard the chat).
        public func complete(gB: [UInt8], keyFingerprint: Int64) throws(SecretChatError) -> Key {
            let b = try config.checkPublicValue(gB)
            let key = try sharedKey(pair, b, config)
            guard key.fingerprint == keyFingerprint else { throw .fingerprintMismatch }
            return key
        }
    }

    /// The acceptor's half (Docs/MTProto.md §7.2 step 2), or the answer to a RequestKey (§7.6): `b`,
    /// `g_b`, the key `g_a^b mod p` and its fingerprint. `b` is wiped as soon as the key exists.
    public struct KeyAcceptance: Sendable {
        /// `g_b` as 256 big-endian bytes, for `messages.acceptEncryption` or AcceptKey.
        public let gB: [UInt8]
        /// The chat key.
        public let key: Key
        /// `key_fingerprint` for `acceptEncryption` / AcceptKey.
        public var keyFingerprint: Int64 { key.fingerprint }

        /// An acceptance restored from a snapshot.
        init(gB: [UInt8], key: Key) {
            self.gB = gB
            self.key = key
        }

        /// Checks `gA` (§4), picks `b` (with `serverRandom` mixed in) and computes the key.
        /// - Throws: ``SecretChatError/dhCheckFailed(_:)``.
        public init<R: RandomNumberGenerator>(gA: [UInt8], config: DHConfig, serverRandom: [UInt8] = [],
                                              using rng: inout R) throws(SecretChatError) {
            let a = try config.checkPublicValue(gA)
            guard let pair = DHKeyPair.generate(g: config.g, prime: config.primeValue, modulus: config.modulus,
                                                mixing: serverRandom.isEmpty ? nil : serverRandom, using: &rng)
            else { throw .dhCheckFailed("no g_b in range") }
            key = try sharedKey(pair, a, config)
            gB = leftPadded(pair.publicValue.bigEndianBytes())
        }
    }
}

/// `peer^secret mod p` as a ``SecretChat/Key``; the temporary bytes are wiped.
private func sharedKey(_ pair: DHKeyPair, _ peer: BigUInt, _ config: SecretChat.DHConfig) throws(SecretChatError) -> SecretChat.Key {
    var bytes: [UInt8]
    do { bytes = try pair.sharedKey(with: peer, modulus: config.modulus) } catch { throw .dhCheckFailed("\(error)") }
    defer { bytes.secureWipe() }
    return try SecretChat.Key(bytes)
}

/// A public value as exactly 256 bytes (left-padded with zeros).
private func leftPadded(_ b: [UInt8]) -> [UInt8] {
    b.count >= 256 ? Array(b.suffix(256)) : [UInt8](repeating: 0, count: 256 - b.count) + b
}

// MARK: - Snapshot fields (the secret chat session's snapshot, Docs/Snapshots.md §4)

extension SecretChat.Key {
    /// The 256 key bytes.
    func write(to w: inout SnapshotWriter) { auth.withUnsafeBytes { w.fixed($0) } }

    init(reading r: inout SnapshotReader) throws(RampartError) {
        var bytes = try r.fixed(AuthKey.byteCount)
        defer { bytes.secureWipe() }
        do { self = try SecretChat.Key(bytes) } catch { throw .invalidSnapshot(.invalidField("chat key")) }
    }
}

extension SecretChat.DHConfig {
    /// g (int32), version (int32), p (256 bytes).
    func write(to w: inout SnapshotWriter) {
        w.int32(g)
        w.int32(version)
        w.fixed(prime)
    }

    /// Reads ``write(to:)`` and checks (g, p) again (Telegram's prime at no cost; another prime with
    /// 64 Miller-Rabin rounds).
    init(reading r: inout SnapshotReader) throws(RampartError) {
        let g = try r.int32(), version = try r.int32()
        let prime = try r.fixed(256)
        // What every server sends: Telegram's prime with g = 3, checked once per process.
        let known = SecretChat.DHConfig.telegramChecked
        if g == known.g, prime == known.prime {
            self.init(checked: g, prime: prime, version: version, primeValue: known.primeValue, modulus: known.modulus)
            return
        }
        var rng = SecureRandom()
        do { self = try SecretChat.DHConfig(g: g, prime: prime, version: version, using: &rng) } catch {
            throw .invalidSnapshot(.invalidField("dh config"))
        }
    }
}

extension SecretChat.KeyRequest {
    /// The configuration, the secret exponent a (256 bytes) and g_a (256 bytes).
    func write(to w: inout SnapshotWriter) {
        config.write(to: &w)
        pair.secret.withUnsafeBytes { w.fixed($0) }
        w.fixed(gA)
    }

    init(reading r: inout SnapshotReader) throws(RampartError) {
        let config = try SecretChat.DHConfig(reading: &r)
        let secret = try r.secret(256)
        let gA = try r.fixed(256)
        let publicValue: BigUInt
        do { publicValue = try config.checkPublicValue(gA) } catch { throw .invalidSnapshot(.invalidField("g_a")) }
        let exponent = secret.withUnsafeBytes { SecretBytes($0) }
        self.init(config: config, pair: DHKeyPair(secret: exponent, publicValue: publicValue))
    }
}

extension SecretChat.KeyAcceptance {
    /// g_b (256 bytes) and the key.
    func write(to w: inout SnapshotWriter) {
        w.fixed(leftPadded(gB))
        key.write(to: &w)
    }

    init(reading r: inout SnapshotReader) throws(RampartError) {
        let gB = try r.fixed(256)
        self.init(gB: gB, key: try SecretChat.Key(reading: &r))
    }
}
