// Versioned Threema ID backups (newer app versions): a version byte, then the version's layout.

extension IDBackup {
    /// Decodes a versioned backup (anything that is not the 50-byte legacy layout).
    ///
    /// - Throws: ``ThreemaError/malformedBackup(_:)`` (`invalidLength` when empty,
    ///   `unsupportedVersion` for a version this library does not read).
    static func decodeVersioned(_ raw: [UInt8], password: String) throws(ThreemaError) -> ThreemaIdentity {
        guard let version = raw.first else { throw .malformedBackup(.invalidLength(0)) }
        throw .malformedBackup(.unsupportedVersion(version))
    }
}
