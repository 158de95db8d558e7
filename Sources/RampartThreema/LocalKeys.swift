// Password-derived keys: Threema Safe's master key (Docs/Threema.md §4.2) and the Android app's
// passphrase-protected master key, version 1 (§4.3).

import Rampart

/// The keys of a Threema Safe backup: `MK = scrypt(password, ID, N = 65536, r = 8, p = 1, 64)`,
/// backup ID `MK[0..<32]` (names the backup on the server), encryption key `MK[32..<64]`.
public struct SafeKeys: Sendable {
    /// The 32-byte backup ID (public: it is the backup's name on the server).
    public let backupID: [UInt8]
    /// The secretbox key of the backup.
    public let encryptionKey: SymmetricKey

    /// Allowed password lengths in UTF-8 bytes (the apps: 8 to 4096 characters).
    public static let passwordLengths = 8...4096

    /// Derives the keys. Uses 64 MiB for scrypt.
    ///
    /// - Throws: ``ThreemaError/invalidPasswordLength(allowed:)``.
    public init(password: String, identity: ThreemaID) throws(ThreemaError) {
        var pw = Array(password.utf8)
        defer { pw.secureWipe() }
        guard Self.passwordLengths.contains(pw.count) else { throw .invalidPasswordLength(allowed: Self.passwordLengths) }
        try self.init(passwordBytes: pw, identity: identity)
    }

    /// As ``init(password:identity:)`` from raw password bytes (no length rule: for vectors).
    public init(passwordBytes: [UInt8], identity: ThreemaID) throws(ThreemaError) {
        try self.init(passwordBytes: passwordBytes, identity: identity, n: 65536)
    }

    /// With another scrypt cost N (tests in debug builds).
    init(passwordBytes: [UInt8], identity: ThreemaID, n: Int) throws(ThreemaError) {
        let mk: SymmetricKey
        do {
            mk = try Scrypt.deriveKey(password: passwordBytes, salt: identity.bytes, n: n, r: 8, p: 1,
                                      outputByteCount: 64)
        } catch { throw .invalidArgument("scrypt: \(error)") }
        backupID = mk.withUnsafeBytes { Array($0[0..<32]) }
        encryptionKey = mk.withUnsafeBytes { SymmetricKey(data: $0[32..<64]) }
    }

    /// The backup ID as the server path names it: 64 lowercase hex digits.
    public var backupIDHex: String { Hex.encode(backupID) }
}

/// The Android app's database master key protected by a passphrase (version 1):
/// `protected = masterKey XOR scrypt(passphrase, salt, 65536, 8, 1, 32)`, stored with
/// `verification = SHA-1(masterKey)[0..<4]`.
public struct ProtectedMasterKey: Hashable, Sendable {
    /// The 32 stored bytes.
    public let protectedKey: [UInt8]
    /// The 8-byte salt.
    public let salt: [UInt8]
    /// The 4 verification bytes.
    public let verification: [UInt8]

    /// A stored record.
    ///
    /// - Throws: ``ThreemaError/invalidArgument(_:)`` for wrong field sizes.
    public init(protectedKey: [UInt8], salt: [UInt8], verification: [UInt8]) throws(ThreemaError) {
        guard protectedKey.count == 32, salt.count == 8, verification.count == 4 else {
            throw .invalidArgument("a protected master key has 32 key, 8 salt and 4 verification bytes")
        }
        self.protectedKey = protectedKey
        self.salt = salt
        self.verification = verification
    }

    /// Protects `masterKey` (32 bytes) with `passphrase` and a random salt.
    public static func protect<R: RandomNumberGenerator>(masterKey: SymmetricKey, passphrase: String,
                                                         using rng: inout R) throws(ThreemaError) -> ProtectedMasterKey {
        try protect(masterKey: masterKey, passphrase: passphrase, salt: randomBytes(8, using: &rng))
    }

    /// Protects with a given salt (vectors).
    public static func protect(masterKey: SymmetricKey, passphrase: String, salt: [UInt8]) throws(ThreemaError) -> ProtectedMasterKey {
        try protect(masterKey: masterKey, passphrase: passphrase, salt: salt, n: 65536)
    }

    /// With another scrypt cost N (tests in debug builds).
    static func protect(masterKey: SymmetricKey, passphrase: String, salt: [UInt8], n: Int) throws(ThreemaError) -> ProtectedMasterKey {
        guard masterKey.byteCount == 32 else { throw .invalidArgument("a master key has 32 bytes") }
        let pad = try Self.pad(passphrase, salt, n: n)
        let prot = masterKey.withUnsafeBytes { m in pad.withUnsafeBytes { p in (0..<32).map { m[$0] ^ p[$0] } } }
        let ver = masterKey.withUnsafeBytes { Array(Insecure.SHA1.hash(bufferPointer: $0).bytes.prefix(4)) }
        return try ProtectedMasterKey(protectedKey: prot, salt: salt, verification: ver)
    }

    /// Recovers the master key.
    ///
    /// - Throws: ``ThreemaError/wrongPassword`` when the verification bytes differ (compared in
    ///   constant time); no key is returned then.
    public func unlock(passphrase: String) throws(ThreemaError) -> SymmetricKey {
        try unlock(passphrase: passphrase, n: 65536)
    }

    /// With another scrypt cost N (tests in debug builds).
    func unlock(passphrase: String, n: Int) throws(ThreemaError) -> SymmetricKey {
        let pad = try Self.pad(passphrase, salt, n: n)
        var master = pad.withUnsafeBytes { p in (0..<32).map { protectedKey[$0] ^ p[$0] } }
        defer { master.secureWipe() }
        let ver = Array(Insecure.SHA1.hash(data: master).bytes.prefix(4))
        guard ConstantTime.equals(ver, verification) else { throw .wrongPassword }
        return SymmetricKey(data: master)
    }

    private static func pad(_ passphrase: String, _ salt: [UInt8], n: Int) throws(ThreemaError) -> SymmetricKey {
        var pw = Array(passphrase.utf8)
        defer { pw.secureWipe() }
        do { return try Scrypt.deriveKey(password: pw, salt: salt, n: n, r: 8, p: 1, outputByteCount: 32) } catch {
            throw .invalidArgument("scrypt: \(error)")
        }
    }
}
