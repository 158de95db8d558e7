// NaCl crypto_box: X25519 key agreement, HSalsa20 to derive a key, then crypto_secretbox
// (XSalsa20-Poly1305). Bernstein, "Cryptography in NaCl", §10.

/// NaCl's `crypto_box`: public-key authenticated encryption between two X25519 key pairs, the same
/// construction as libsodium's `crypto_box_easy` and Threema's end-to-end message boxes.
///
/// ```swift
/// let box = try Box.seal(message, nonce: nonce, to: bob.publicKey, from: alice)
/// let message = try Box.open(box, nonce: nonce, from: alice.publicKey, to: bob)
///
/// // Many messages between the same pair: precompute once (crypto_box_beforenm).
/// let shared = try Box.SharedKey(publicKey: bob.publicKey, privateKey: alice)
/// let box2 = try shared.seal(message, nonce: nonce2)
/// ```
///
/// The combined form is `tag (16 bytes) || ciphertext` (libsodium's `_easy` layout). Opening a box
/// that does not verify throws ``RampartError/authenticationFailure`` and releases no plaintext.
/// A peer public key of small order (all-zero shared secret) is refused with
/// ``RampartError/invalidPublicKey``, as libsodium refuses it.
///
/// - Important: never use a nonce twice for the same pair of keys (in either direction).
public enum Box {
    /// Public and private key size in bytes (32).
    public static let keyByteCount = 32
    /// Nonce size in bytes (24).
    public static let nonceByteCount = 24
    /// Tag size in bytes (16).
    public static let tagByteCount = 16

    /// The precomputed key of a pair (`crypto_box_beforenm`): HSalsa20(X25519(sk, pk), 0). Boxes
    /// sealed or opened with it equal those of the one-shot functions. Wiped when released.
    public struct SharedKey: Sendable {
        /// The 32-byte secretbox key.
        public let symmetricKey: SymmetricKey

        /// Precomputes the key between `privateKey` and the peer's `publicKey`.
        ///
        /// - Throws: ``RampartError/invalidPublicKey`` when the X25519 result is all zeros.
        public init(publicKey: Curve25519.KeyAgreement.PublicKey,
                    privateKey: Curve25519.KeyAgreement.PrivateKey) throws(RampartError) {
            let shared = try privateKey.sharedSecretFromKeyAgreement(with: publicKey)
            symmetricKey = shared.withUnsafeBytes { s in
                SymmetricKey(count: 32) { out in
                    let zero = SIMD16<UInt8>()
                    withUnsafeBytes(of: zero) { z in
                        hsalsa20(key: s.baseAddress!, input: z.baseAddress!, output: out.baseAddress!)
                    }
                }
            }
        }

        /// Encrypts and authenticates `message`: `tag || ciphertext` (`crypto_box_easy_afternm`).
        ///
        /// - Throws: ``RampartError/invalidNonceLength`` unless the nonce has 24 bytes.
        public func seal<M: Collection<UInt8>, N: Collection<UInt8>>(_ message: M, nonce: N) throws(RampartError) -> [UInt8] {
            try SecretBox.seal(message, using: symmetricKey, nonce: nonce)
        }

        /// Verifies and decrypts `tag || ciphertext` (`crypto_box_open_easy_afternm`).
        ///
        /// - Throws: ``RampartError/authenticationFailure`` (nothing is decrypted),
        ///   ``RampartError/invalidInputLength`` for boxes shorter than 16 bytes,
        ///   ``RampartError/invalidNonceLength``.
        public func open<B: Collection<UInt8>, N: Collection<UInt8>>(_ box: B, nonce: N) throws(RampartError) -> [UInt8] {
            try SecretBox.open(box, using: symmetricKey, nonce: nonce)
        }

        /// Detached seal: the ciphertext (as long as the message) and the 16-byte tag.
        public func sealDetached<M: Collection<UInt8>, N: Collection<UInt8>>(
            _ message: M, nonce: N
        ) throws(RampartError) -> (ciphertext: [UInt8], tag: [UInt8]) {
            try SecretBox.sealDetached(message, using: symmetricKey, nonce: nonce)
        }

        /// Detached open.
        public func openDetached<C: Collection<UInt8>, T: Collection<UInt8>, N: Collection<UInt8>>(
            ciphertext: C, tag: T, nonce: N
        ) throws(RampartError) -> [UInt8] {
            try SecretBox.openDetached(ciphertext: ciphertext, tag: tag, using: symmetricKey, nonce: nonce)
        }

        /// In place on raw buffers: `buffer` (the message) becomes the ciphertext, `tag` receives
        /// 16 bytes.
        public func seal<N: Collection<UInt8>>(inPlace buffer: UnsafeMutableRawBufferPointer,
                                               tag: UnsafeMutableRawBufferPointer, nonce: N) throws(RampartError) {
            try SecretBox.seal(inPlace: buffer, tag: tag, using: symmetricKey, nonce: nonce)
        }

        /// In place on raw buffers: verifies `tag`, then decrypts `buffer`. On failure the buffer is
        /// left as it was (still ciphertext).
        public func open<N: Collection<UInt8>>(inPlace buffer: UnsafeMutableRawBufferPointer,
                                               tag: UnsafeRawBufferPointer, nonce: N) throws(RampartError) {
            try SecretBox.open(inPlace: buffer, tag: tag, using: symmetricKey, nonce: nonce)
        }

        /// Seal from a raw message into `output` (message.count + 16 bytes, `tag || ciphertext`).
        public func seal<N: Collection<UInt8>>(_ message: UnsafeRawBufferPointer,
                                               into output: UnsafeMutableRawBufferPointer, nonce: N) throws(RampartError) {
            try SecretBox.seal(message, into: output, using: symmetricKey, nonce: nonce)
        }

        /// Open a raw `tag || ciphertext` box into `output` (box.count − 16 bytes).
        public func open<N: Collection<UInt8>>(_ box: UnsafeRawBufferPointer,
                                               into output: UnsafeMutableRawBufferPointer, nonce: N) throws(RampartError) {
            try SecretBox.open(box, into: output, using: symmetricKey, nonce: nonce)
        }
    }

    /// Seals `message` from `privateKey` to the recipient `publicKey` (`crypto_box_easy`).
    ///
    /// - Throws: ``RampartError/invalidPublicKey``, ``RampartError/invalidNonceLength``.
    public static func seal<M: Collection<UInt8>, N: Collection<UInt8>>(
        _ message: M, nonce: N, to publicKey: Curve25519.KeyAgreement.PublicKey,
        from privateKey: Curve25519.KeyAgreement.PrivateKey
    ) throws(RampartError) -> [UInt8] {
        try SharedKey(publicKey: publicKey, privateKey: privateKey).seal(message, nonce: nonce)
    }

    /// Opens a box sealed by the sender `publicKey` to `privateKey` (`crypto_box_open_easy`).
    ///
    /// - Throws: ``RampartError/authenticationFailure``, ``RampartError/invalidPublicKey``,
    ///   ``RampartError/invalidInputLength``, ``RampartError/invalidNonceLength``.
    public static func open<B: Collection<UInt8>, N: Collection<UInt8>>(
        _ box: B, nonce: N, from publicKey: Curve25519.KeyAgreement.PublicKey,
        to privateKey: Curve25519.KeyAgreement.PrivateKey
    ) throws(RampartError) -> [UInt8] {
        try SharedKey(publicKey: publicKey, privateKey: privateKey).open(box, nonce: nonce)
    }

    /// Detached one-shot seal (`crypto_box_detached`).
    public static func sealDetached<M: Collection<UInt8>, N: Collection<UInt8>>(
        _ message: M, nonce: N, to publicKey: Curve25519.KeyAgreement.PublicKey,
        from privateKey: Curve25519.KeyAgreement.PrivateKey
    ) throws(RampartError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        try SharedKey(publicKey: publicKey, privateKey: privateKey).sealDetached(message, nonce: nonce)
    }

    /// Detached one-shot open (`crypto_box_open_detached`).
    public static func openDetached<C: Collection<UInt8>, T: Collection<UInt8>, N: Collection<UInt8>>(
        ciphertext: C, tag: T, nonce: N, from publicKey: Curve25519.KeyAgreement.PublicKey,
        to privateKey: Curve25519.KeyAgreement.PrivateKey
    ) throws(RampartError) -> [UInt8] {
        try SharedKey(publicKey: publicKey, privateKey: privateKey).openDetached(ciphertext: ciphertext, tag: tag, nonce: nonce)
    }
}
