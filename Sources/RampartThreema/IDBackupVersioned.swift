// Versioned Threema ID backups (libthreema `id_backup`; Docs/Threema.md §4.1): a version byte, then
// the version's layout. Version 1 is Argon2id and ChaCha20-Poly1305:
//
//   0x01 ‖ salt (8) ‖ ChaCha20-Poly1305(key, nonce = 12 zero bytes, AAD = 0x01 ‖ salt,
//                                       plaintext = identity (8) ‖ secret key (32)) ‖ tag (16)
//   key = Argon2id v0x13 (UTF-8 password, salt, m = 128 MiB, t = 8, p = 1, 32 bytes)

import Rampart
import RampartCodecs

extension IDBackup {
    /// The version byte of the Argon2id / ChaCha20-Poly1305 scheme.
    public static let argon2Version: UInt8 = 1
    /// Its binary length: version 1 + salt 8 + identity 8 + key 32 + tag 16.
    public static let argon2ByteCount = 65
    /// Its Argon2id memory in KiB (128 MiB).
    public static let argon2MemoryKiB = 128 * 1024
    /// Its Argon2id passes.
    public static let argon2Iterations = 8

    /// Decodes a versioned backup (anything that is not the 50-byte legacy layout).
    ///
    /// - Throws: ``ThreemaError/malformedBackup(_:)`` (`unsupportedVersion` for 0x00, the explicit
    ///   legacy marker, and for versions above 1; `invalidLength`), ``ThreemaError/wrongPassword``
    ///   when the tag does not verify (nothing decrypted is returned).
    static func decodeVersioned(_ raw: [UInt8], password: String) throws(ThreemaError) -> ThreemaIdentity {
        try decodeVersioned(raw, password: password, memoryKiB: argon2MemoryKiB, iterations: argon2Iterations)
    }

    static func decodeVersioned(_ raw: [UInt8], password: String, memoryKiB: Int,
                                iterations: Int) throws(ThreemaError) -> ThreemaIdentity {
        guard let version = raw.first else { throw .malformedBackup(.invalidLength(0)) }
        guard version == argon2Version else { throw .malformedBackup(.unsupportedVersion(version)) }
        guard raw.count == argon2ByteCount else { throw .malformedBackup(.invalidLength(raw.count)) }
        let key = try argon2Key(password: password, salt: raw[1..<9], memoryKiB: memoryKiB, iterations: iterations,
                                minimum: 1)
        var plain: [UInt8]
        do {
            let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 12)),
                                               ciphertext: raw[9..<49], tag: raw[49..<65])
            plain = try ChaChaPoly.open(box, using: key, authenticating: raw[0..<9])
        } catch { throw .wrongPassword }
        defer { plain.secureWipe() }
        // Public by design: the ID, once the tag verified.
        plain.withUnsafeBytes { declassify($0.baseAddress!, 8) }
        guard let id = try? ThreemaID(bytes: plain[0..<8]) else { throw .malformedBackup(.invalidIdentity) }
        return try ThreemaIdentity(id: id, privateKey: plain[8..<40])
    }

    /// Encodes a version-1 backup. The apps (and ``encode(identity:password:using:)``) still write the
    /// legacy scheme; this is for tests and for readers that want the stronger format.
    @_spi(Testing) public static func encodeVersion1(identity: ThreemaIdentity, password: String, salt: [UInt8],
                                                     memoryKiB: Int = argon2MemoryKiB,
                                                     iterations: Int = argon2Iterations) throws(ThreemaError) -> String {
        guard salt.count == 8 else { throw .invalidArgument("an ID backup salt has 8 bytes") }
        let key = try argon2Key(password: password, salt: salt[...], memoryKiB: memoryKiB, iterations: iterations,
                                minimum: minimumPasswordLength)
        var plain = identity.id.bytes + identity.privateKey.rawRepresentation
        defer { plain.secureWipe() }
        let header = [argon2Version] + salt
        do {
            let box = try ChaChaPoly.seal(plain, using: key, nonce: ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 12)),
                                          authenticating: header)
            let raw = header + box.ciphertext + box.tag
            raw.withUnsafeBytes { declassify($0.baseAddress!, $0.count) }   // the ciphertext: public by design
            return grouped(Base32.encode(raw))
        } catch { throw .invalidArgument("\(error)") }
    }

    /// The version-1 key (passwords of `minimum`...4096 bytes).
    static func argon2Key(password: String, salt: ArraySlice<UInt8>, memoryKiB: Int, iterations: Int,
                          minimum: Int) throws(ThreemaError) -> SymmetricKey {
        var pw = Array(password.utf8)
        defer { pw.secureWipe() }
        let allowed = minimum...maximumPasswordLength
        guard allowed.contains(pw.count) else { throw .invalidPasswordLength(allowed: allowed) }
        do {
            return try Argon2id.deriveKey(password: pw, salt: salt, iterations: iterations, memoryKiB: memoryKiB,
                                          parallelism: 1, outputByteCount: 32, memoryLimit: 256 << 20)
        } catch { throw .invalidArgument("argon2id: \(error)") }
    }
}
