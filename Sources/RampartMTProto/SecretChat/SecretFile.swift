// Encrypted files of secret chats (Docs/MTProto.md §7.7): a random AES-256 key and 32-byte IV per file,
// AES-256-IGE over the whole file (in place, in parts with the IV carried across), and the int32
// key_fingerprint of `inputEncryptedFileUploaded` / `encryptedFile` from MD5(key ‖ iv).

extension SecretChat {
    /// The key of one encrypted file: 32 bytes of AES-256 key and a 32-byte IGE IV (Docs/MTProto.md
    /// §7.7), carried to the peer inside `decryptedMessageMedia*` (`key`, `iv`) while the server
    /// stores only ciphertext and ``fingerprint``.
    ///
    /// The 64 bytes live in an allocation that is wiped when the last copy is released.
    ///
    /// Files are encrypted as whole 16-byte blocks: ``encrypt(_:)`` pads the last block with zero
    /// bytes (the file's real size travels in the media's `size` and the receiver cuts the decrypted
    /// file to it). IGE is not authenticated; the file's integrity rests on the key and size inside the
    /// authenticated message.
    public struct FileKey: Sendable {
        let storage: SecretBytes

        /// A fresh key and IV: 64 bytes from `rng` (key first).
        public init<R: RandomNumberGenerator>(using rng: inout R) {
            storage = SecretBytes.random(64, using: &rng)
        }

        /// A key and IV received in a `decryptedMessageMedia*` (each exactly 32 bytes; copied).
        /// - Throws: ``SecretChatError/invalidKey``.
        public init(key: [UInt8], iv: [UInt8]) throws(SecretChatError) {
            guard key.count == 32, iv.count == 32 else { throw .invalidKey }
            storage = SecretBytes(count: 64) { out in
                key.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: 32) }
                iv.withUnsafeBytes { (out.baseAddress! + 32).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            }
        }

        /// The 32-byte AES key (a copy the caller wipes).
        public var key: [UInt8] { storage.withUnsafeBytes { Array($0[0..<32]) } }
        /// The 32-byte IV (a copy the caller wipes).
        public var iv: [UInt8] { storage.withUnsafeBytes { Array($0[32..<64]) } }

        /// `key_fingerprint` (Docs/MTProto.md §7.7): with `d = MD5(key ‖ iv)`,
        /// `Int32LE(d[0..<4]) ^ Int32LE(d[4..<8])` (tdlib `FileEncryptionKey::calc_fingerprint`).
        public var fingerprint: Int32 {
            var d = storage.withUnsafeBytes { Insecure.MD5.hash(bufferPointer: $0) }
            let fp = d.withUnsafeBytes { $0.baseAddress!.loadLE32(0) ^ $0.baseAddress!.loadLE32(4) }
            withUnsafeMutableBytes(of: &d) { secureZero($0) }
            return Int32(bitPattern: fp)
        }

        /// The size of the encrypted form of a `size`-byte file: `size` rounded up to 16 (0 for a
        /// negative size). A size within 15 of `Int.max` has no padded size in `Int`: the result is then
        /// `Int.max`, which is not a multiple of 16 and so never the length of an encrypted file.
        public static func paddedSize(_ size: Int) -> Int {
            guard size <= Int.max - 15 else { return Int.max }
            return (max(size, 0) + 15) / 16 * 16
        }

        /// A cipher that encrypts or decrypts the file part by part from its start.
        public func cipher() -> FileCipher { FileCipher(self) }

        /// Encrypts a whole file: zero-padded to ``paddedSize(_:)``, then AES-256-IGE.
        public func encrypt(_ file: some Collection<UInt8>) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: FileKey.paddedSize(file.count))
            withContiguousBytes(file) { f in
                out.withUnsafeMutableBytes { o in
                    if f.count > 0 { o.baseAddress!.copyMemory(from: f.baseAddress!, byteCount: f.count) }
                    // Whole blocks by construction: cannot throw.
                    try? cipher().encrypt(o)
                }
            }
            return out
        }

        /// Decrypts a whole encrypted file and cuts it to its real `size`.
        /// - Throws: ``SecretChatError/invalidPlaintext(_:)`` when the data is not whole blocks or
        ///   `size` does not fit in its last block (any `size`, negative or near `Int.max`, gives this
        ///   error or the file, never a trap).
        public func decrypt(_ encrypted: [UInt8], size: Int) throws(SecretChatError) -> [UInt8] {
            guard size >= 0, size <= encrypted.count, FileKey.paddedSize(size) == encrypted.count else {
                throw .invalidPlaintext("encrypted file of \(encrypted.count) bytes cannot hold \(size) bytes")
            }
            var out = encrypted
            let c = cipher()
            // Whole blocks: checked above.
            out.withUnsafeMutableBytes { o in try? c.decrypt(o) }
            out.withUnsafeMutableBytes { secureZero(UnsafeMutableRawBufferPointer(rebasing: $0[size...])) }
            out.removeLast(encrypted.count - size)
            return out
        }
    }

    /// AES-256-IGE over a file in place, part by part (Docs/MTProto.md §7.7; upload and download parts
    /// are whole blocks, so the IV runs on from one part to the next). The expanded key and the
    /// running IV are owned here and wiped on release.
    public struct FileCipher: ~Copyable {
        let cipher: AES.Cipher
        let iv: UnsafeMutableRawBufferPointer

        init(_ key: FileKey) {
            let v = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 16)
            cipher = key.storage.withUnsafeBytes { k in
                v.baseAddress!.copyMemory(from: k.baseAddress! + 32, byteCount: 32)
                return AES.Cipher(key256: k.baseAddress!)
            }
            iv = v
        }

        deinit {
            secureZero(iv)
            iv.deallocate()
        }

        /// Encrypts the next part in place (a multiple of 16 bytes; any size, megabytes included).
        /// - Throws: ``SecretChatError/invalidPlaintext(_:)`` when it is not whole blocks; nothing is
        ///   written then.
        public func encrypt(_ part: UnsafeMutableRawBufferPointer) throws(SecretChatError) {
            do { try AES.IGE.encrypt(part, using: cipher, iv: iv) } catch { throw .invalidPlaintext("file part is not whole AES blocks") }
        }

        /// Decrypts the next part in place (a multiple of 16 bytes).
        /// - Throws: ``SecretChatError/invalidPlaintext(_:)`` when it is not whole blocks.
        public func decrypt(_ part: UnsafeMutableRawBufferPointer) throws(SecretChatError) {
            do { try AES.IGE.decrypt(part, using: cipher, iv: iv) } catch { throw .invalidPlaintext("file part is not whole AES blocks") }
        }
    }
}
