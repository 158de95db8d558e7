// The public ChaCha20 stream (RFC 8439 §2.4). The core, the bulk paths and the kernel seam are in
// Cipher/ChaCha20Core.swift.

/// ChaCha20 (RFC 8439 §2.4): the stream cipher with a 32-byte key, a 12-byte nonce and a 32-bit block
/// counter, as in TLS 1.3 and libsodium's `crypto_stream_chacha20_ietf`.
///
/// ```swift
/// let ciphertext = try ChaCha20.xor(message, key: key, nonce: nonce, counter: 1)
/// ```
///
/// - Important: ChaCha20 alone is **unauthenticated**: an attacker can flip ciphertext bits and the
///   same bits of the plaintext flip. Use ``ChaChaPoly`` unless a protocol prescribes the raw stream.
///   Never reuse a key and nonce pair for two messages.
///
/// One nonce covers at most 2^32 blocks (256 GiB) from counter 0: a message whose blocks would carry
/// the counter past 2^32 − 1 is refused rather than wrapped. The key is read on each call and not
/// kept; every key-dependent value on the stack is wiped before returning.
public enum ChaCha20 {
    /// Key size in bytes (32).
    public static let keyByteCount = 32
    /// Nonce size in bytes (12).
    public static let nonceByteCount = 12
    /// Block size in bytes (64): the counter counts blocks.
    public static let blockByteCount = 64

    /// XORs `input` with the keystream that starts at block `counter` and writes the result to
    /// `output` (the same memory or not overlapping).
    ///
    /// - Throws: ``RampartError/invalidKeyLength`` unless the key has 32 bytes,
    ///   ``RampartError/invalidNonceLength`` unless the nonce has 12 bytes,
    ///   ``RampartError/invalidOutputLength`` when `output` is not as long as `input`,
    ///   ``RampartError/invalidInputLength`` when the message runs past block 2^32 − 1.
    public static func xor<N: Collection<UInt8>>(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
        key: SymmetricKey, nonce: N, counter: UInt32 = 0
    ) throws(RampartError) {
        var n = try nonceBytes(nonce, count: 12)
        guard output.count == input.count else { throw .invalidOutputLength }
        guard fitsCounter(input.count, from: counter) else { throw .invalidInputLength }
        guard let src = input.baseAddress, let dst = output.baseAddress, input.count > 0 else { return }
        let impl = Registries.chacha20.implementation(for: key.backend)
        try withKey32(key) { k in
            withUnsafeBytes(of: &n) { nb in
                var x = chacha20Input(key: k, counter: counter, nonce: nb.baseAddress!)
                chacha20XOR(&x, src, dst, input.count, impl)
                wipe(&x)
            }
        }
    }

    /// `message` XOR the keystream that starts at block `counter`.
    ///
    /// - Throws: as ``xor(_:into:key:nonce:counter:)``.
    public static func xor<M: Collection<UInt8>, N: Collection<UInt8>>(
        _ message: M, key: SymmetricKey, nonce: N, counter: UInt32 = 0
    ) throws(RampartError) -> [UInt8] {
        var out = Array(message)
        let r = out.withUnsafeMutableBytes { b in
            Result { () throws(RampartError) in
                try xor(UnsafeRawBufferPointer(b), into: b, key: key, nonce: nonce, counter: counter)
            }
        }
        try r.get()
        return out
    }

    /// HChaCha20 (draft-irtf-cfrg-xchacha §2.2, libsodium's `crypto_core_hchacha20`): derives a 32-byte
    /// subkey from a 32-byte key and a 16-byte input, as XChaCha20 does from the first 16 nonce bytes.
    ///
    /// - Throws: ``RampartError/invalidKeyLength`` unless the key has 32 bytes,
    ///   ``RampartError/invalidNonceLength`` unless the input has 16 bytes.
    public static func hchacha20<I: Collection<UInt8>>(key: SymmetricKey, input: I) throws(RampartError) -> SymmetricKey {
        var n = try nonceBytes(input, count: 16)
        return try withKey32(key) { k in
            withUnsafeBytes(of: &n) { nb in
                SymmetricKey(count: 32) { out in hchacha20Core(key: k, input: nb.baseAddress!, output: out.baseAddress!) }
            }
        }
    }

    /// Whether `count` bytes starting at block `counter` stay within the 32-bit block counter.
    static func fitsCounter(_ count: Int, from counter: UInt32) -> Bool {
        let blocks = UInt64(count) / 64 + (count % 64 == 0 ? 0 : 1)
        return UInt64(counter) + blocks <= 1 << 32
    }
}
