// Sealed snapshots: an unsealed snapshot (Snapshot.swift) encrypted and authenticated, under a
// caller's 32-byte key (what an app keeps in the Keychain or the Android Keystore) or under a password
// (export and backup). Version 1 (Docs/Snapshots.md §3):
//
//   under a key:      "RSNK" | type (4) | version (uint16) | nonce (24)
//                     | XChaCha20-Poly1305(key, nonce, the unsealed snapshot) with its 16-byte tag
//   under a password: "RSNW" | type (4) | version (uint16) | Argon2id iterations, memory in KiB,
//                     lanes (uint32 each) | salt (16) | nonce (24)
//                     | XChaCha20-Poly1305(Argon2id(password, salt), nonce, the unsealed snapshot)
//
// The associated data is every header byte before the ciphertext, so the type, the version and the
// cost parameters cannot be changed without the tag failing; the type is also checked inside, after
// decryption. XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03, libsodium's
// crypto_aead_xchacha20poly1305_ietf): HChaCha20 of the key and the first 16 nonce bytes is the key of
// ChaCha20-Poly1305 with nonce 0^4 ‖ the last 8 nonce bytes. Its 192-bit nonces are random: an app
// may seal a snapshot after every message for years under one key without a nonce collision.

/// Sealing and opening snapshots (see the file comment for the format).
public enum SealedSnapshot {
    static let keyMagic: [UInt8] = Array("RSNK".utf8)
    static let passwordMagic: [UInt8] = Array("RSNW".utf8)
    static let nonceBytes = 24
    static let tagBytes = 16

    /// Argon2id costs for a password-sealed snapshot.
    public struct PasswordCost: Sendable, Equatable {
        /// Passes over memory (t).
        public var iterations: Int
        /// Memory in KiB (m).
        public var memoryKiB: Int
        /// Lanes (p).
        public var parallelism: Int
        /// RFC 9106's second recommended option (t = 3, 64 MiB, p = 4), the default.
        public static let standard = PasswordCost(iterations: 3, memoryKiB: 64 << 10, parallelism: 4)
        /// Costs.
        public init(iterations: Int, memoryKiB: Int, parallelism: Int) {
            self.iterations = iterations
            self.memoryKiB = memoryKiB
            self.parallelism = parallelism
        }
    }

    /// The most a password-sealed snapshot may ask for when it is opened, unless the caller allows
    /// more: 10 passes, 1 GiB, 16 lanes (a crafted file cannot make opening it take minutes).
    public static let defaultCostLimit = PasswordCost(iterations: 10, memoryKiB: 1 << 20, parallelism: 16)

    /// `snapshot` sealed under `key` (32 bytes) with a random nonce from `rng`.
    /// - Throws: ``RampartError/invalidKeyLength``, ``RampartError/invalidSnapshot(_:)`` when
    ///   `snapshot` has no snapshot header.
    public static func seal<R: RandomNumberGenerator>(_ snapshot: SnapshotBytes, key: SymmetricKey,
                                                      using rng: inout R) throws(RampartError) -> [UInt8] {
        guard key.byteCount == 32 else { throw .invalidKeyLength }
        let header = try plainHeader(snapshot)
        var prefix = keyMagic + header
        prefix += randomBytes(nonceBytes, &rng)
        return try encrypt(snapshot, key: key, prefix: prefix)
    }

    /// The unsealed snapshot of `sealed`, which must be of `type`.
    /// - Throws: ``RampartError/invalidSnapshot(_:)`` (`.notASnapshot`, `.wrongType`,
    ///   `.authenticationFailure`, `.truncated`), ``RampartError/invalidKeyLength``.
    public static func open(_ sealed: some Collection<UInt8>, key: SymmetricKey, type: SnapshotType) throws(RampartError) -> SnapshotBytes {
        guard key.byteCount == 32 else { throw .invalidKeyLength }
        let bytes = Array(sealed)
        let headerCount = 4 + 6 + nonceBytes
        try checkHeader(bytes, magic: keyMagic, type: type, headerCount: headerCount)
        return try decrypt(bytes, headerCount: headerCount, key: key, type: type)
    }

    /// `snapshot` sealed under `password` with Argon2id (`cost`; a random salt and nonce from `rng`).
    /// - Throws: ``RampartError/invalidParameter(_:)`` or ``RampartError/memoryLimitExceeded(required:limit:)``
    ///   for costs Argon2id refuses, ``RampartError/invalidSnapshot(_:)`` when `snapshot` has no header.
    public static func seal<R: RandomNumberGenerator>(_ snapshot: SnapshotBytes, password: some Collection<UInt8>,
                                                      cost: PasswordCost = .standard,
                                                      using rng: inout R) throws(RampartError) -> [UInt8] {
        guard (1...UInt32.max).contains(UInt32(clamping: cost.iterations)), cost.iterations > 0,
              cost.memoryKiB > 0, cost.memoryKiB <= UInt32.max, cost.parallelism > 0, cost.parallelism <= UInt32.max else {
            throw .invalidParameter("cost")
        }
        let header = try plainHeader(snapshot)
        var prefix = passwordMagic + header
        for v in [cost.iterations, cost.memoryKiB, cost.parallelism] { prefix += le32(UInt32(v)) }
        let salt = randomBytes(16, &rng)
        prefix += salt
        prefix += randomBytes(nonceBytes, &rng)
        let key = try Argon2id.deriveKey(password: password, salt: salt, iterations: cost.iterations, memoryKiB: cost.memoryKiB,
                                         parallelism: cost.parallelism, outputByteCount: 32)
        return try encrypt(snapshot, key: key, prefix: prefix)
    }

    /// The unsealed snapshot of a password-sealed `sealed`, which must be of `type` and ask for no
    /// more than `limit`.
    /// - Throws: ``RampartError/invalidSnapshot(_:)`` (`.notASnapshot`, `.wrongType`,
    ///   `.costTooHigh`, `.authenticationFailure`, `.truncated`, `.invalidField`).
    public static func open(_ sealed: some Collection<UInt8>, password: some Collection<UInt8>, type: SnapshotType,
                            limit: PasswordCost = defaultCostLimit) throws(RampartError) -> SnapshotBytes {
        let bytes = Array(sealed)
        let headerCount = 4 + 6 + 12 + 16 + nonceBytes
        try checkHeader(bytes, magic: passwordMagic, type: type, headerCount: headerCount)
        let t = Int(readLE32(bytes, 10)), m = Int(readLE32(bytes, 14)), p = Int(readLE32(bytes, 18))
        guard t <= limit.iterations, m <= limit.memoryKiB, p <= limit.parallelism else { throw .invalidSnapshot(.costTooHigh) }
        let key: SymmetricKey
        do {
            key = try Argon2id.deriveKey(password: password, salt: bytes[22..<38], iterations: t, memoryKiB: m,
                                         parallelism: p, outputByteCount: 32, memoryLimit: Int.max)
        } catch {
            throw .invalidSnapshot(.invalidField("argon2id cost"))
        }
        return try decrypt(bytes, headerCount: headerCount, key: key, type: type)
    }

    /// The type named in a sealed snapshot's header (either form), or nil.
    public static func type(of sealed: some Collection<UInt8>) -> SnapshotType? {
        let b = Array(sealed.prefix(8))
        guard b.count == 8, Array(b[0..<4]) == keyMagic || Array(b[0..<4]) == passwordMagic else { return nil }
        return SnapshotType(raw: b[4], b[5], b[6], b[7])
    }

    // MARK: - Engine

    /// The type and version bytes of an unsealed snapshot's header.
    static func plainHeader(_ snapshot: SnapshotBytes) throws(RampartError) -> [UInt8] {
        let h = snapshot.withUnsafeBytes { b -> [UInt8]? in
            guard b.count >= 14, Array(b[0..<4]) == SnapshotHeader.plainMagic else { return nil }
            return Array(b[4..<10])
        }
        guard let h else { throw .invalidSnapshot(.notASnapshot) }
        return h
    }

    static func checkHeader(_ bytes: [UInt8], magic: [UInt8], type: SnapshotType, headerCount: Int) throws(RampartError) {
        guard bytes.count >= 8, Array(bytes[0..<4]) == magic else { throw .invalidSnapshot(.notASnapshot) }
        let found = SnapshotType(raw: bytes[4], bytes[5], bytes[6], bytes[7])
        guard found == type else { throw .invalidSnapshot(.wrongType(expected: type.description, found: found.description)) }
        guard bytes.count >= headerCount + 14 + tagBytes else { throw .invalidSnapshot(.truncated) }
    }

    static func encrypt(_ snapshot: SnapshotBytes, key: SymmetricKey, prefix: [UInt8]) throws(RampartError) -> [UInt8] {
        let n = snapshot.count
        let nonce = Array(prefix.suffix(nonceBytes))
        let subkey = try xchachaSubkey(key, nonce)
        let chachaNonce = [0, 0, 0, 0] + nonce[16..<24]
        var failure: RampartError?
        // One allocation, written once: the prefix, then the ciphertext and the tag straight from the
        // snapshot (no zeroed buffer, no concatenation). The seal writes every byte when it succeeds;
        // when it fails nothing counts as written.
        let total = prefix.count + n + tagBytes
        let out = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            let o = UnsafeMutableRawBufferPointer(buffer)
            prefix.withUnsafeBytes { o.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            let body = UnsafeMutableRawBufferPointer(rebasing: o[prefix.count..<prefix.count + n])
            let tag = UnsafeMutableRawBufferPointer(rebasing: o[(prefix.count + n)...])
            snapshot.withUnsafeBytes { s in
                prefix.withUnsafeBytes { ad in
                    chachaNonce.withUnsafeBytes { nb in
                        do throws(RampartError) { try ChaChaPoly.seal(s, into: body, tag: tag, using: subkey, nonce: nb, authenticating: ad) } catch { failure = error }
                    }
                }
            }
            initialized = failure == nil ? total : 0
        }
        if let failure { throw failure }
        return out
    }

    static func decrypt(_ bytes: [UInt8], headerCount: Int, key: SymmetricKey, type: SnapshotType) throws(RampartError) -> SnapshotBytes {
        let n = bytes.count - headerCount - tagBytes
        guard n <= SnapshotHeader.maxBodyBytes + 14 else { throw .invalidSnapshot(.invalidField("length")) }
        let nonce = Array(bytes[(headerCount - nonceBytes)..<headerCount])
        let subkey = try xchachaSubkey(key, nonce)
        let chachaNonce = [0, 0, 0, 0] + nonce[16..<24]
        var failure: RampartError?
        let plain = bytes.withUnsafeBytes { b in
            SecretBytes(count: n) { o in
                chachaNonce.withUnsafeBytes { nb in
                    do throws(RampartError) {
                        try ChaChaPoly.open(UnsafeRawBufferPointer(rebasing: b[headerCount..<headerCount + n]), into: o,
                                            tag: UnsafeRawBufferPointer(rebasing: b[(headerCount + n)...]), using: subkey,
                                            nonce: nb, authenticating: UnsafeRawBufferPointer(rebasing: b[0..<headerCount]))
                    } catch {
                        failure = error
                    }
                }
            }
        }
        if let failure { throw failure == .authenticationFailure ? .invalidSnapshot(.authenticationFailure) : failure }
        let snapshot = SnapshotBytes(plain)
        // The inner header must agree with the outer one (same type and version).
        let inner = try plainHeader(snapshot)
        guard inner == Array(bytes[4..<10]) else { throw .invalidSnapshot(.invalidField("inner header")) }
        return snapshot
    }

    /// XChaCha20-Poly1305 of `message` under `key` and a 24-byte `nonce`: ciphertext ‖ tag (the
    /// construction `encrypt` uses, for the published vector and the cross-check against libsodium).
    static func xchachaSeal(key: SymmetricKey, nonce: [UInt8], aad: [UInt8], _ message: [UInt8]) throws(RampartError) -> [UInt8] {
        guard nonce.count == nonceBytes else { throw .invalidNonceLength }
        let subkey = try xchachaSubkey(key, nonce)
        let box = try ChaChaPoly.seal(message, using: subkey, nonce: ChaChaPoly.Nonce(data: [0, 0, 0, 0] + nonce[16..<24]),
                                      authenticating: aad)
        return box.ciphertext + box.tag
    }

    /// The message of an XChaCha20-Poly1305 `sealed` (ciphertext ‖ tag), or nil when it does not
    /// authenticate (the inverse of ``xchachaSeal(key:nonce:aad:_:)``, for the Wycheproof file).
    static func xchachaOpen(key: SymmetricKey, nonce: [UInt8], aad: [UInt8], _ sealed: [UInt8]) throws(RampartError) -> [UInt8]? {
        guard nonce.count == nonceBytes else { throw .invalidNonceLength }
        guard sealed.count >= tagBytes else { return nil }
        let subkey = try xchachaSubkey(key, nonce)
        let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: [0, 0, 0, 0] + nonce[16..<24]),
                                           ciphertext: sealed.dropLast(tagBytes), tag: sealed.suffix(tagBytes))
        do throws(RampartError) { return try ChaChaPoly.open(box, using: subkey, authenticating: aad) } catch { return nil }
    }

    /// XChaCha20's subkey: HChaCha20(key, nonce[0..<16]).
    static func xchachaSubkey(_ key: SymmetricKey, _ nonce: [UInt8]) throws(RampartError) -> SymmetricKey {
        guard key.byteCount == 32 else { throw .invalidKeyLength }
        return key.withUnsafeBytes { k in
            nonce.withUnsafeBytes { nb in
                SymmetricKey(count: 32) { out in hchacha20Core(key: k.baseAddress!, input: nb.baseAddress!, output: out.baseAddress!) }
            }
        }
    }

    static func randomBytes<R: RandomNumberGenerator>(_ n: Int, _ rng: inout R) -> [UInt8] {
        var b = [UInt8](repeating: 0, count: n)
        b.withUnsafeMutableBytes { fillRandom($0, using: &rng) }
        return b
    }

    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    static func readLE32(_ b: [UInt8], _ o: Int) -> UInt32 { (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[o + $1]) << (8 * $1) } }
}
