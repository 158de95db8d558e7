// Threema ID backups (whitepaper "Key Backup"; Docs/Threema.md §4.1): the identity and its secret key
// encrypted under a password, as Base32 text in dash-separated groups of four.

import Rampart
import RampartCodecs

/// A Threema ID backup: the identity and its secret key.
///
/// ```swift
/// let text = try IDBackup.encode(identity: me, password: "correct horse", using: &rng)
/// let restored = try IDBackup.decode(text, password: "correct horse")   // lower case, spaces: fine
/// ```
///
/// The legacy scheme (what the apps write) is
/// `salt (8) ‖ XSalsa20(PBKDF2-HMAC-SHA256(password, salt, 100 000, 32), zero nonce) ⊕ (ID ‖ key ‖ check)`
/// with `check = SHA-256(ID ‖ key)[0..<2]`. It has no MAC: the 2-byte check is the only sign of the
/// right password (a wrong one passes it with probability 1/65 536; the decoded ID must then also be
/// a valid ID, which cuts that further).
public enum IDBackup {
    /// The legacy binary length: salt 8 + ID 8 + key 32 + check 2.
    public static let legacyByteCount = 50
    /// PBKDF2 iterations of the legacy scheme.
    public static let legacyIterations = 100_000
    /// The shortest password for a new backup (bytes of UTF-8; the current apps ask for 8). Reading
    /// accepts any non-empty password, since older apps allowed 6 characters.
    public static let minimumPasswordLength = 8
    /// The longest password accepted here (bytes of UTF-8), a bound on work and memory.
    public static let maximumPasswordLength = 4096

    /// Encodes a legacy backup with a random salt.
    ///
    /// - Throws: ``ThreemaError/invalidPasswordLength(allowed:)``.
    public static func encode<R: RandomNumberGenerator>(identity: ThreemaIdentity, password: String,
                                                        using rng: inout R) throws(ThreemaError) -> String {
        try encode(identity: identity, password: password, salt: randomBytes(8, using: &rng))
    }

    /// Encodes with a given salt (vectors).
    public static func encode(identity: ThreemaIdentity, password: String, salt: [UInt8]) throws(ThreemaError) -> String {
        try encode(identity: identity, password: password, salt: salt, iterations: legacyIterations)
    }

    /// As ``encode(identity:password:salt:)`` with another PBKDF2 cost (tests in debug builds, fuzzing).
    @_spi(Testing) public static func encode(identity: ThreemaIdentity, password: String, salt: [UInt8], iterations: Int) throws(ThreemaError) -> String {
        guard salt.count == 8 else { throw .invalidArgument("an ID backup salt has 8 bytes") }
        var plain = identity.id.bytes + identity.privateKey.rawRepresentation
        defer { plain.secureWipe() }
        plain += SHA256.hash(data: plain).bytes.prefix(2)
        var data = try xorKeystream(plain, password: password, salt: salt, iterations: iterations,
                                    minimum: minimumPasswordLength)
        defer { data.secureWipe() }
        data.withUnsafeBytes { declassify($0.baseAddress!, $0.count) }   // the ciphertext: public by design
        return grouped(Base32.encode(salt + data))
    }

    /// Base32 text in groups of four joined by dashes.
    static func grouped(_ text: String) -> String {
        var out = ""
        for (i, c) in text.enumerated() {
            if i > 0 && i % 4 == 0 { out.append("-") }
            out.append(c)
        }
        return out
    }

    /// Decodes a backup. The text may be lower case and contain spaces, line breaks and dashes
    /// anywhere (users retype it). A 50-byte decode is the legacy scheme; longer ones start with a
    /// version byte (version 1 is decoded by ``decodeVersioned(_:password:)`` once its primitives are
    /// present; other versions are refused).
    ///
    /// - Throws: ``ThreemaError/malformedBackup(_:)`` for bad text, length or version,
    ///   ``ThreemaError/invalidPasswordLength(allowed:)``, ``ThreemaError/wrongPassword`` when the
    ///   check bytes differ (no identity is returned), ``ThreemaError/malformedBackup(_:)``
    ///   (`invalidIdentity`) when the check passed by chance but the ID is not one.
    public static func decode(_ text: String, password: String) throws(ThreemaError) -> ThreemaIdentity {
        try decode(text, password: password, iterations: legacyIterations)
    }

    /// As ``decode(_:password:)`` with another PBKDF2 cost (tests in debug builds, fuzzing).
    @_spi(Testing) public static func decode(_ text: String, password: String, iterations: Int) throws(ThreemaError) -> ThreemaIdentity {
        guard text.utf8.count <= 4096 else { throw .malformedBackup(.invalidLength(text.utf8.count)) }
        let raw: [UInt8]
        do { raw = try Base32.decode(text, mode: .lenient) } catch { throw .malformedBackup(.invalidCharacter) }
        guard raw.count == legacyByteCount else {
            return try decodeVersioned(raw, password: password)
        }
        var plain = try xorKeystream(Array(raw[8...]), password: password, salt: Array(raw[0..<8]), iterations: iterations,
                                     minimum: 1)
        defer { plain.secureWipe() }
        let check = SHA256.hash(data: plain[0..<40]).bytes.prefix(2)
        guard ConstantTime.equals(check, plain[40..<42]) else { throw .wrongPassword }
        // Public by design: the ID (not the key) once the check matched; it is validated below.
        plain.withUnsafeBytes { declassify($0.baseAddress!, 8) }
        guard let id = try? ThreemaID(bytes: plain[0..<8]) else { throw .malformedBackup(.invalidIdentity) }
        return try ThreemaIdentity(id: id, privateKey: plain[8..<40])
    }

    /// The keystream step shared by both directions.
    static func xorKeystream(_ data: [UInt8], password: String, salt: [UInt8], iterations: Int,
                             minimum: Int) throws(ThreemaError) -> [UInt8] {
        var pw = Array(password.utf8)
        defer { pw.secureWipe() }
        let allowed = minimum...maximumPasswordLength
        guard allowed.contains(pw.count) else { throw .invalidPasswordLength(allowed: allowed) }
        do {
            let key = try PBKDF2.deriveKey(password: pw, salt: salt, prf: .hmacSHA256, iterations: iterations,
                                           outputByteCount: 32)
            return try XSalsa20.xor(data, key: key, nonce: [UInt8](repeating: 0, count: 24))
        } catch { throw .invalidArgument("\(error)") }
    }
}
