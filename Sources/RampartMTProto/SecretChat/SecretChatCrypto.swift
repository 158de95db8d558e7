// Secret-chat message encryption (Docs/MTProto.md §7.3): v2 (MTProto 2.0 msg_key and KDF with x by the
// author's side) and v1 for layers below 73, framed as key_fingerprint ‖ msg_key ‖ AES-256-IGE.
// The v2 path is the cloud envelope's (EncryptedMessage.seal / unseal): plaintext written straight
// into the output, SHA-256 over two pieces, IGE in place.

extension SecretChat {
    /// Encryption and decryption of the `data` of `messages.sendEncrypted*` and `encryptedMessage*`
    /// (Docs/MTProto.md §7.3).
    ///
    /// ```swift
    /// let data = try SecretChat.Envelope.encrypt(layerTL, key: key, sender: .creator, using: &rng)
    /// let opened = try SecretChat.Envelope.decrypt(data, keys: [current, previous].compactMap { $0 },
    ///                                             sender: .creator, allowV1: false)
    /// opened.tl   // the serialized decryptedMessageLayer
    /// ```
    public enum Envelope {
        /// The encryption scheme of a message.
        public enum Version: Sendable, Hashable {
            /// MTProto 2.0: SHA-256 msg_key over the padded plaintext, KDF v2, 12…1024 padding bytes.
            case v2
            /// MTProto 1.0 (layers below 73): SHA-1 msg_key over the unpadded data, KDF v1 with x = 0,
            /// 0…15 padding bytes.
            case v1
        }

        /// A message that passed every check.
        public struct Opened: Sendable {
            /// The serialized end-to-end TL (`decryptedMessageLayer`), without length field and padding.
            public var tl: [UInt8]
            /// The key that decrypted it (one of the candidates).
            public var key: Key
            /// The scheme it was encrypted with.
            public var version: Version
        }

        /// The largest serialized TL accepted or produced: 16 MiB.
        public static let maxTLLength = 1 << 24

        /// Bytes in front of the ciphertext: key_fingerprint (8) and msg_key (16).
        public static let headerLength = 24

        /// Encrypts one message with MTProto 2.0 (Docs/MTProto.md §7.3).
        ///
        /// plaintext = int32 LE length ‖ `tl` ‖ 12…1024 random bytes (a multiple of 16 in all);
        /// msg_key = SHA256(key[88+x ..< 120+x] ‖ plaintext)[8..<24]; KDF v2 (§1.3) with the same x;
        /// AES-256-IGE. x is the *sender's*: 0 when the creator writes, 8 for the acceptor.
        ///
        /// - Parameters:
        ///   - tl: the serialized `decryptedMessageLayer` (a multiple of 4 bytes, at most ``maxTLLength``).
        ///   - sender: who writes the message (normally the local side).
        ///   - padding: the padding-length policy of the cloud envelope, applied to the 4-byte length
        ///     field plus `tl` (every policy gives 12…1024 bytes); the padding bytes come from `rng`.
        /// - Returns: `key_fingerprint ‖ msg_key ‖ ciphertext`.
        /// - Throws: ``SecretChatError/invalidPlaintext(_:)``.
        public static func encrypt<B: Collection<UInt8>, R: RandomNumberGenerator>(
            _ tl: B, key: Key, sender: Side, padding: PaddingPolicy = .random, using rng: inout R
        ) throws(SecretChatError) -> [UInt8] {
            let n = tl.count
            try checkOutgoing(n)
            let pad = padding.paddingLength(bodyLength: 4 + n, using: &rng)
            let plainLength = 4 + n + pad
            return withContiguousBytes(tl) { b in
                [UInt8](unsafeUninitializedCapacity: headerLength + plainLength) { out, count in
                    let o = UnsafeMutableRawPointer(out.baseAddress!)
                    let pt = o + headerLength
                    pt.storeLE32(UInt32(truncatingIfNeeded: n), 0)
                    if n > 0 { (pt + 4).copyMemory(from: b.baseAddress!, byteCount: n) }
                    fillRandom(UnsafeMutableRawBufferPointer(start: pt + 4 + n, count: pad), using: &rng)
                    // Writes SHA1(key)[12..<20] (= key_fingerprint) and msg_key in front, encrypts in place.
                    _ = EncryptedMessage.seal(o, plainLength: plainLength, authKey: key.auth, x: sender.x)
                    count = headerLength + plainLength
                }
            }
        }

        /// Encrypts one message with MTProto 1.0, for peers below layer 73 (Docs/MTProto.md §7.3, §1.4):
        /// msg_key = SHA1(int32 length ‖ `tl`)[4..<20] (no padding), 0…15 random padding bytes, KDF v1
        /// with x = 0 whoever sends.
        /// - Throws: ``SecretChatError/invalidPlaintext(_:)``.
        public static func encryptV1<B: Collection<UInt8>, R: RandomNumberGenerator>(
            _ tl: B, key: Key, using rng: inout R
        ) throws(SecretChatError) -> [UInt8] {
            let n = tl.count
            try checkOutgoing(n)
            let pad = (16 - (4 + n) % 16) % 16
            let plainLength = 4 + n + pad
            return withContiguousBytes(tl) { b in
                [UInt8](unsafeUninitializedCapacity: headerLength + plainLength) { out, count in
                    let o = UnsafeMutableRawPointer(out.baseAddress!)
                    let pt = o + headerLength
                    pt.storeLE32(UInt32(truncatingIfNeeded: n), 0)
                    if n > 0 { (pt + 4).copyMemory(from: b.baseAddress!, byteCount: n) }
                    fillRandom(UnsafeMutableRawBufferPointer(start: pt + 4 + n, count: pad), using: &rng)
                    o.storeLE64(key.auth.id, 0)
                    let d = Insecure.SHA1.hash(bufferPointer: UnsafeRawBufferPointer(start: pt, count: 4 + n))
                    d.withUnsafeBytes { (o + 8).copyMemory(from: $0.baseAddress! + 4, byteCount: 16) }
                    v1Cipher(key, msgKey: o + 8, pt, blocks: plainLength / 16, encrypt: true)
                    count = headerLength + plainLength
                }
            }
        }

        /// Decrypts the `data` of an encrypted message (Docs/MTProto.md §7.3).
        ///
        /// Steps: the fingerprint in front selects the candidate keys (`keys`: the current key and,
        /// during a re-key, the previous or the next one); for each, v2 is tried (msg_key recomputed
        /// with the sender's x and compared in constant time, then the length field: ≥ 0, a multiple
        /// of 4, inside the plaintext, leaving 12…1024 padding bytes) and then, when `allowV1`, v1
        /// (length field first, padding 0…15, SHA-1 msg_key in constant time).
        ///
        /// Every failure throws the single ``SecretChatError/rejectedMessage``; nothing is returned
        /// and the temporary plaintext is wiped. The function has no state to change.
        ///
        /// - Parameters:
        ///   - sender: who wrote the message: the *peer's* side (a creator reads with x = 8).
        ///   - allowV1: accept MTProto 1.0 messages; false from layer 73 on.
        public static func decrypt<P: Collection<UInt8>>(
            _ data: P, keys: [Key], sender: Side, allowV1: Bool
        ) throws(SecretChatError) -> Opened {
            let result = withContiguousBytes(data) { p -> Opened? in
                let n = p.count
                guard n >= headerLength + 16, (n - headerLength) % 16 == 0, let base = p.baseAddress else { return nil }
                let fingerprint = base.loadLE64(0)
                let plainLength = n - headerLength
                let ciphertext = base + headerLength
                var plain = [UInt8](repeating: 0, count: plainLength)
                // The fingerprint is public (sent in clear), so choosing keys by it leaks nothing.
                for key in keys where key.auth.id == fingerprint {
                    var found: (Int, Version)?
                    plain.withUnsafeMutableBytes { buf in
                        let pt = buf.baseAddress!
                        pt.copyMemory(from: ciphertext, byteCount: plainLength)
                        if let l = openV2(pt, plainLength: plainLength, msgKey: base + 8, key: key, x: sender.x) {
                            found = (l, .v2); return
                        }
                        guard allowV1 else { return }
                        pt.copyMemory(from: ciphertext, byteCount: plainLength)
                        if let l = openV1(pt, plainLength: plainLength, msgKey: base + 8, key: key) { found = (l, .v1) }
                    }
                    if let (length, version) = found {
                        // The TL to the front, the rest wiped and dropped in place.
                        plain.withUnsafeMutableBytes { b in
                            let q = b.baseAddress!
                            if length > 0 { q.copyMemory(from: q + 4, byteCount: length) }
                            secureZero(UnsafeMutableRawBufferPointer(rebasing: b[length...]))
                        }
                        plain.removeLast(plainLength - length)
                        return Opened(tl: plain, key: key, version: version)
                    }
                }
                plain.secureWipe()
                return nil
            }
            guard let result else { throw .rejectedMessage }
            return result
        }

        // MARK: Internals

        static func checkOutgoing(_ n: Int) throws(SecretChatError) {
            guard n % 4 == 0 else { throw .invalidPlaintext("serialized TL length \(n) is not a multiple of 4") }
            guard n <= maxTLLength else { throw .invalidPlaintext("serialized TL longer than \(maxTLLength) bytes") }
        }

        /// v2 in place: decrypts, checks msg_key (constant time) and the length field and padding.
        /// Returns the TL length, or nil.
        static func openV2(_ pt: UnsafeMutableRawPointer, plainLength: Int, msgKey: UnsafeRawPointer, key: Key, x: Int) -> Int? {
            guard EncryptedMessage.unseal(pt, plainLength: plainLength, msgKey: msgKey, authKey: key.auth, x: x) != nil
            else { return nil }
            let length = Int(Int32(bitPattern: UnsafeRawPointer(pt).loadLE32(0)))
            guard length >= 0, length % 4 == 0, length <= plainLength - 4 else { return nil }
            let pad = plainLength - 4 - length
            guard pad >= 12, pad <= 1024 else { return nil }
            return length
        }

        /// v1 in place: decrypts with KDF v1 (x = 0) and checks msg_key = SHA1(length ‖ tl)[4..<20]
        /// without reading the unauthenticated length field first. A valid length is a multiple of 4
        /// leaving 0…15 padding bytes in a whole number of blocks, so there are exactly four candidates
        /// (padding 0, 4, 8, 12): all four digests are computed and compared in constant time, and the
        /// length field is read only once one matched (the plaintext is then authenticated). Returns
        /// the TL length, or nil.
        static func openV1(_ pt: UnsafeMutableRawPointer, plainLength: Int, msgKey: UnsafeRawPointer, key: Key) -> Int? {
            v1Cipher(key, msgKey: msgKey, pt, blocks: plainLength / 16, encrypt: false)
            guard plainLength >= 16, plainLength % 16 == 0 else { return nil }
            var matched: Int?
            for pad in stride(from: 0, through: 12, by: 4) {
                let length = plainLength - 4 - pad
                var d = Insecure.SHA1.hash(bufferPointer: UnsafeRawBufferPointer(start: pt, count: 4 + length))
                // Public by design: whether msg_key matched (accept or reject).
                let same = d.withUnsafeBytes {
                    ConstantTime.equals(UnsafeRawBufferPointer(rebasing: $0[4..<20]), UnsafeRawBufferPointer(start: msgKey, count: 16))
                }
                withUnsafeMutableBytes(of: &d) { secureZero($0) }
                if same, matched == nil { matched = length }
            }
            guard let length = matched else { return nil }
            // msg_key matched: the plaintext is authenticated and the receiver parses it.
            declassify(UnsafeRawPointer(pt), plainLength)
            guard Int(Int32(bitPattern: UnsafeRawPointer(pt).loadLE32(0))) == length else { return nil }
            return length
        }

        /// AES-256-IGE in place under the v1 KDF (x = 0) of `msgKey`; the key and IV are wiped.
        static func v1Cipher(_ key: Key, msgKey: UnsafeRawPointer, _ pt: UnsafeMutableRawPointer, blocks: Int, encrypt: Bool) {
            // 16 bytes by construction: the KDF cannot throw here.
            guard var kv = try? MessageKDF.v1(authKey: key.auth, messageKey: UnsafeRawBufferPointer(start: msgKey, count: 16),
                                              direction: .clientToServer) else {
                secureZero(UnsafeMutableRawBufferPointer(start: pt, count: blocks * 16))
                return
            }
            kv.key.withUnsafeBytes { k in
                kv.iv.withUnsafeMutableBytes { iv in
                    let cipher = AES.Cipher(key256: k.baseAddress!)
                    if encrypt {
                        AES.IGE.encrypt(pt, blocks: blocks, using: cipher, iv: iv.baseAddress!)
                    } else {
                        AES.IGE.decrypt(pt, blocks: blocks, using: cipher, iv: iv.baseAddress!)
                    }
                }
            }
            kv.key.secureWipe(); kv.iv.secureWipe()
        }
    }
}
