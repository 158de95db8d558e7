// Blobs (files, media, thumbnails): XSalsa20-Poly1305 under a random one-time 32-byte key with a
// fixed nonce (Docs/Threema.md §2.3; whitepaper "Media Access Protocol").

import Rampart

/// Encryption of media blobs. Each blob has its own random key, so the fixed nonces never repeat
/// under one key; the key and blob ID travel inside the end-to-end message. The layout is
/// `tag (16) ‖ ciphertext`, as the apps upload it.
public enum ThreemaBlob {
    /// Which fixed nonce a blob uses.
    public enum Kind: Sendable, Hashable {
        /// A file, image, audio, video or profile picture: nonce `00…00 01`.
        case file
        /// A file message's thumbnail: nonce `00…00 02`.
        case thumbnail

        /// The 24-byte nonce.
        public var nonce: [UInt8] {
            var n = [UInt8](repeating: 0, count: 24)
            n[23] = self == .file ? 1 : 2
            return n
        }
    }

    /// A fresh random blob key.
    public static func generateKey<R: RandomNumberGenerator>(using rng: inout R) -> SymmetricKey {
        SymmetricKey(size: .bits256, using: &rng)
    }

    /// `tag ‖ ciphertext` of `data`.
    public static func encrypt<C: Collection<UInt8>>(_ data: C, key: SymmetricKey, kind: Kind) throws(ThreemaError) -> [UInt8] {
        guard key.byteCount == 32 else { throw .invalidArgument("a blob key has 32 bytes") }
        do { return try SecretBox.seal(data, using: key, nonce: kind.nonce) } catch { throw .invalidArgument("blob") }
    }

    /// The plaintext of `tag ‖ ciphertext`.
    ///
    /// - Throws: ``ThreemaError/authenticationFailed`` (nothing is decrypted).
    public static func decrypt<C: Collection<UInt8>>(_ blob: C, key: SymmetricKey, kind: Kind) throws(ThreemaError) -> [UInt8] {
        guard key.byteCount == 32 else { throw .invalidArgument("a blob key has 32 bytes") }
        do { return try SecretBox.open(blob, using: key, nonce: kind.nonce) } catch { throw .authenticationFailed }
    }

    /// Encrypts in place, for large files: `buffer` holds 16 bytes of room for the tag followed by
    /// the plaintext, and ends up holding `tag ‖ ciphertext` (the upload layout). No copy is made.
    ///
    /// - Throws: ``ThreemaError/invalidArgument(_:)`` for a buffer under 16 bytes or a bad key.
    public static func encrypt(inPlace buffer: UnsafeMutableRawBufferPointer, key: SymmetricKey, kind: Kind) throws(ThreemaError) {
        guard buffer.count >= 16, key.byteCount == 32 else { throw .invalidArgument("buffer or key size") }
        let tag = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<16])
        let body = UnsafeMutableRawBufferPointer(rebasing: buffer[16...])
        do { try SecretBox.seal(inPlace: body, tag: tag, using: key, nonce: kind.nonce) } catch {
            throw .invalidArgument("blob")
        }
    }

    /// Decrypts `tag ‖ ciphertext` in place; on success the plaintext is `buffer[16...]`. On failure
    /// the buffer is unchanged.
    ///
    /// - Throws: ``ThreemaError/authenticationFailed``, ``ThreemaError/invalidArgument(_:)``.
    public static func decrypt(inPlace buffer: UnsafeMutableRawBufferPointer, key: SymmetricKey, kind: Kind) throws(ThreemaError) {
        guard key.byteCount == 32 else { throw .invalidArgument("a blob key has 32 bytes") }
        guard buffer.count >= 16 else { throw .authenticationFailed }
        let tag = UnsafeRawBufferPointer(rebasing: buffer[0..<16])
        let body = UnsafeMutableRawBufferPointer(rebasing: buffer[16...])
        do { try SecretBox.open(inPlace: body, tag: tag, using: key, nonce: kind.nonce) } catch {
            throw .authenticationFailed
        }
    }
}
