// AES modes of operation: IGE (MTProto), CBC (raw and PKCS#7) and CTR (a resumable stream).

internal import RampartKernelSupport

extension AES {
    /// Infinite Garble Extension mode, as MTProto 2.0 uses it.
    ///
    /// `c_i = E(p_i ⊕ c_{i-1}) ⊕ p_{i-1}` and `p_i = D(c_i ⊕ p_{i-1}) ⊕ c_{i-1}`. The 32-byte IV is
    /// `c_0 ‖ p_0`: its first half plays the previous ciphertext block, its second half the previous
    /// plaintext block (MTProto's `aes_iv`; OpenSSL's `AES_ige_encrypt` uses the same layout). Input
    /// must be a whole number of blocks; IGE has no padding of its own.
    ///
    /// IGE is sequential in both directions, so it runs at the latency of one AES chain per block.
    /// It provides no integrity: MTProto authenticates with `msg_key`.
    ///
    /// - Warning: Unauthenticated. An attacker can change ciphertext and the change decrypts without
    ///   an error. Use it only inside a protocol that authenticates the plaintext (MTProto's
    ///   `msg_key`, checked in constant time before anything is parsed); otherwise use ``AES/GCM``.
    public enum IGE {
        /// Encrypts `buffer` in place. `iv` (32 bytes) is advanced to the last ciphertext and
        /// plaintext blocks, so a long message can be processed in pieces.
        /// - Throws: ``RampartError/invalidInputLength`` (not a multiple of 16) or
        ///   ``RampartError/invalidNonceLength`` (IV not 32 bytes); nothing is written then.
        public static func encrypt(_ buffer: UnsafeMutableRawBufferPointer, using cipher: Cipher,
                                   iv: UnsafeMutableRawBufferPointer) throws(RampartError) {
            guard iv.count == 32, let v = iv.baseAddress else { throw .invalidNonceLength }
            guard buffer.count % 16 == 0 else { throw .invalidInputLength }
            guard let p = buffer.baseAddress, buffer.count > 0 else { return }
            cipher.igeEncrypt(v, p, p, buffer.count / 16)
        }

        /// Decrypts `buffer` in place; `iv` (32 bytes) is advanced as for encryption.
        /// - Throws: ``RampartError/invalidInputLength`` or ``RampartError/invalidNonceLength``.
        public static func decrypt(_ buffer: UnsafeMutableRawBufferPointer, using cipher: Cipher,
                                   iv: UnsafeMutableRawBufferPointer) throws(RampartError) {
            guard iv.count == 32, let v = iv.baseAddress else { throw .invalidNonceLength }
            guard buffer.count % 16 == 0 else { throw .invalidInputLength }
            guard let p = buffer.baseAddress, buffer.count > 0 else { return }
            cipher.igeDecrypt(v, p, p, buffer.count / 16)
        }

        /// Encrypts `blocks` whole blocks at `buffer` in place with the 32-byte IV at `iv`. For
        /// protocol code in this package whose sizes are fixed by construction: it cannot fail, so
        /// no error can be dropped on the way to a ciphertext.
        package static func encrypt(_ buffer: UnsafeMutableRawPointer, blocks: Int, using cipher: Cipher,
                                    iv: UnsafeMutableRawPointer) {
            if blocks > 0 { cipher.igeEncrypt(iv, buffer, buffer, blocks) }
        }

        /// Decrypts `blocks` whole blocks at `buffer` in place with the 32-byte IV at `iv` (as the
        /// package form of ``encrypt(_:blocks:using:iv:)``).
        package static func decrypt(_ buffer: UnsafeMutableRawPointer, blocks: Int, using cipher: Cipher,
                                    iv: UnsafeMutableRawPointer) {
            if blocks > 0 { cipher.igeDecrypt(iv, buffer, buffer, blocks) }
        }

        /// Decrypts `blocks` whole blocks from `input` into `buffer` (the same memory, or not
        /// overlapping; `input` nil: in place), like ``decrypt(_:blocks:using:iv:)``, and writes
        /// SHA-256(`prefix` ‖ plaintext) to `digest` (32 bytes): MTProto's msg_key over the
        /// decrypted message (Docs/MTProto.md §1.6.4), with `prefix` the 32 auth-key bytes. Where the
        /// `ige-sha256` registry's implementation reads the key's schedule (AES-NI and SHA-NI: one
        /// stitched kernel decrypts and hashes in the same loop) it runs for two blocks and more;
        /// otherwise the two run one after the other. The digest is secret until compared.
        package static func decryptHashing(_ buffer: UnsafeMutableRawPointer, from input: UnsafeRawPointer? = nil, blocks: Int,
                                           using cipher: Cipher, iv: UnsafeMutableRawPointer, prefix: UnsafeRawBufferPointer,
                                           digest: UnsafeMutableRawPointer) {
            let s = cipher.schedule
            decryptHashing(buffer, from: input ?? UnsafeRawPointer(buffer), blocks: blocks, iv: iv, prefix: prefix, digest: digest,
                           stitched: s.igeSHA256.map { ($0, s.enc, s.rounds) }) { src in cipher.igeDecrypt(iv, src, buffer, blocks) }
        }

        /// ``decryptHashing(_:from:blocks:using:iv:prefix:digest:)`` under a 32-byte key given as
        /// bytes: its schedule is expanded on the stack and wiped after (no allocation per message, as
        /// a server answering many small messages needs).
        package static func decryptHashing(_ buffer: UnsafeMutableRawPointer, from input: UnsafeRawPointer? = nil, blocks: Int,
                                           key256: UnsafeRawPointer, iv: UnsafeMutableRawPointer, prefix: UnsafeRawBufferPointer,
                                           digest: UnsafeMutableRawPointer) {
            let src = input ?? UnsafeRawPointer(buffer)
            withStackSchedule256(key256) { aes, schedule, rounds in
                let ige = Registries.igeSHA256.implementation(for: CPU.defaultBackend)
                decryptHashing(buffer, from: src, blocks: blocks, iv: iv, prefix: prefix, digest: digest,
                               stitched: ige.aesLayout == aes.layout ? (ige, schedule, rounds) : nil) { s in
                    if blocks > 0 { aes.igeDecrypt(schedule, rounds, iv, s, buffer, blocks) }
                }
            }
        }

        /// IGE encryption in place under a 32-byte key given as bytes (the stack-schedule form of
        /// ``encrypt(_:blocks:using:iv:)``).
        package static func encrypt(_ buffer: UnsafeMutableRawPointer, blocks: Int, key256: UnsafeRawPointer,
                                    iv: UnsafeMutableRawPointer) {
            guard blocks > 0 else { return }
            withStackSchedule256(key256) { aes, schedule, rounds in aes.igeEncrypt(schedule, rounds, iv, buffer, buffer, blocks) }
        }

        /// IGE decryption in place under a 32-byte key given as bytes (the stack-schedule form of
        /// ``decrypt(_:blocks:using:iv:)``).
        package static func decrypt(_ buffer: UnsafeMutableRawPointer, blocks: Int, key256: UnsafeRawPointer,
                                    iv: UnsafeMutableRawPointer) {
            guard blocks > 0 else { return }
            withStackSchedule256(key256) { aes, schedule, rounds in aes.igeDecrypt(schedule, rounds, iv, buffer, buffer, blocks) }
        }

        /// The shared body: the stitched implementation when `stitched` (one that reads the schedule
        /// given with it) is given and there are two blocks or more, else `decrypt` (from the source)
        /// then SHA-256.
        private static func decryptHashing(_ buffer: UnsafeMutableRawPointer, from src: UnsafeRawPointer, blocks: Int,
                                           iv: UnsafeMutableRawPointer, prefix: UnsafeRawBufferPointer, digest: UnsafeMutableRawPointer,
                                           stitched: (impl: any IGESHA256Implementation.Type, schedule: UnsafeRawPointer, rounds: Int)?,
                                           decrypt: (UnsafeRawPointer) -> Void) {
            precondition(prefix.count == 32, "the stitched hash takes a 32-byte prefix")
            var hashed = 0
            var words = SHA256Compressor.initialWords
            if let k = stitched, blocks >= 2 {
                hashed = withUnsafeMutablePointer(to: &words) { w in
                    w.withMemoryRebound(to: UInt32.self, capacity: 8) {
                        k.impl.decrypt(k.schedule, k.rounds, iv, src, buffer, blocks, $0, prefix.baseAddress!)
                    }
                }
            } else if blocks > 0 {
                decrypt(src)
            }
            var h = SHA256()
            if hashed == 0 {
                h.update(bufferPointer: prefix)
            } else {
                h.engine = MDEngine(words: words, total: UInt64(32 + hashed), backend: CPU.defaultBackend)
            }
            h.update(bufferPointer: UnsafeRawBufferPointer(start: buffer + hashed, count: 16 * max(0, blocks) - hashed))
            let d = h.finalize()
            d.withUnsafeBytes { digest.copyMemory(from: $0.baseAddress!, byteCount: 32) }
            withUnsafeMutableBytes(of: &h) { secureZero($0) }
            withUnsafeMutableBytes(of: &words) { secureZero($0) }
        }

        /// Encrypts `message` (a multiple of 16 bytes) with the 32-byte `iv`.
        public static func encrypt<M: Collection<UInt8>, I: Collection<UInt8>>(
            _ message: M, using cipher: Cipher, iv: I) throws(RampartError) -> [UInt8] {
            try run(message, iv) { (b, v) throws(RampartError) in try encrypt(b, using: cipher, iv: v) }
        }

        /// Decrypts `ciphertext` (a multiple of 16 bytes) with the 32-byte `iv`.
        public static func decrypt<M: Collection<UInt8>, I: Collection<UInt8>>(
            _ ciphertext: M, using cipher: Cipher, iv: I) throws(RampartError) -> [UInt8] {
            try run(ciphertext, iv) { (b, v) throws(RampartError) in try decrypt(b, using: cipher, iv: v) }
        }

        /// Encrypts `message` under `key` (16, 24 or 32 bytes; MTProto uses 32).
        public static func encrypt<M: Collection<UInt8>, I: Collection<UInt8>>(
            _ message: M, using key: SymmetricKey, iv: I) throws(RampartError) -> [UInt8] {
            try encrypt(message, using: try Cipher(key: key), iv: iv)
        }

        /// Decrypts `ciphertext` under `key`.
        public static func decrypt<M: Collection<UInt8>, I: Collection<UInt8>>(
            _ ciphertext: M, using key: SymmetricKey, iv: I) throws(RampartError) -> [UInt8] {
            try decrypt(ciphertext, using: try Cipher(key: key), iv: iv)
        }
    }

    /// Cipher Block Chaining mode, raw (whole blocks) or with PKCS#7 padding.
    ///
    /// CBC provides confidentiality only; authenticate the ciphertext separately (encrypt-then-MAC)
    /// before decrypting, or padding errors can become an oracle.
    ///
    /// - Warning: Unauthenticated. Verify a MAC over the ciphertext before calling `decrypt`;
    ///   otherwise use ``AES/GCM``.
    public enum CBC {
        /// The padding applied by the allocating `encrypt` and removed by `decrypt`.
        public enum Padding: Sendable, Equatable {
            /// No padding: the input must be a whole number of blocks.
            case none
            /// PKCS#7 (RFC 5652 §6.3): 1 to 16 bytes, each equal to the pad length.
            case pkcs7
        }

        /// Encrypts whole blocks in place. `iv` (16 bytes) becomes the last ciphertext block, so a
        /// long message can be processed in pieces.
        /// - Throws: ``RampartError/invalidInputLength`` or ``RampartError/invalidNonceLength``.
        public static func encrypt(_ buffer: UnsafeMutableRawBufferPointer, using cipher: Cipher,
                                   iv: UnsafeMutableRawBufferPointer) throws(RampartError) {
            guard iv.count == 16, let v = iv.baseAddress else { throw .invalidNonceLength }
            guard buffer.count % 16 == 0 else { throw .invalidInputLength }
            guard let p = buffer.baseAddress, buffer.count > 0 else { return }
            cipher.cbcEncrypt(v, p, p, buffer.count / 16)
        }

        /// Decrypts whole blocks in place; `iv` becomes the last ciphertext block.
        /// - Throws: ``RampartError/invalidInputLength`` or ``RampartError/invalidNonceLength``.
        public static func decrypt(_ buffer: UnsafeMutableRawBufferPointer, using cipher: Cipher,
                                   iv: UnsafeMutableRawBufferPointer) throws(RampartError) {
            guard iv.count == 16, let v = iv.baseAddress else { throw .invalidNonceLength }
            guard buffer.count % 16 == 0 else { throw .invalidInputLength }
            guard let p = buffer.baseAddress, buffer.count > 0 else { return }
            cipher.cbcDecrypt(v, p, p, buffer.count / 16)
        }

        /// Pads the first `messageCount` bytes of `buffer` with PKCS#7 and encrypts them in place.
        /// `buffer` must have room for the padded length, `(messageCount / 16 + 1) * 16` bytes.
        /// - Returns: the ciphertext length.
        /// - Throws: ``RampartError/invalidOutputLength`` when the buffer is too small,
        ///   ``RampartError/invalidNonceLength`` for an IV other than 16 bytes.
        public static func encryptPKCS7(_ buffer: UnsafeMutableRawBufferPointer, messageCount: Int,
                                        using cipher: Cipher, iv: UnsafeRawBufferPointer) throws(RampartError) -> Int {
            guard iv.count == 16, let v = iv.baseAddress else { throw .invalidNonceLength }
            guard messageCount >= 0, messageCount <= buffer.count, let p = buffer.baseAddress else {
                throw .invalidOutputLength
            }
            let pad = 16 - messageCount % 16
            let total = messageCount + pad
            guard total <= buffer.count else { throw .invalidOutputLength }
            (p + messageCount).initializeMemory(as: UInt8.self, repeating: UInt8(pad), count: pad)
            var chain = (UInt64(0), UInt64(0))
            withUnsafeMutableBytes(of: &chain) { c in
                c.baseAddress!.copyMemory(from: v, byteCount: 16)
                cipher.cbcEncrypt(c.baseAddress!, p, p, total / 16)
            }
            return total
        }

        /// Decrypts `buffer` in place and checks and strips PKCS#7 padding.
        ///
        /// The padding check runs in constant time (the padding bytes are examined without a
        /// data-dependent branch or index); only the final valid/invalid outcome is visible. On bad
        /// padding the buffer is wiped.
        /// - Returns: the plaintext length (the plaintext is `buffer[0..<length]`).
        /// - Throws: ``RampartError/invalidPadding`` for every kind of bad padding (including an
        ///   empty buffer), ``RampartError/invalidInputLength``, ``RampartError/invalidNonceLength``.
        public static func decryptPKCS7(_ buffer: UnsafeMutableRawBufferPointer, using cipher: Cipher,
                                        iv: UnsafeRawBufferPointer) throws(RampartError) -> Int {
            guard iv.count == 16, let v = iv.baseAddress else { throw .invalidNonceLength }
            guard buffer.count % 16 == 0 else { throw .invalidInputLength }
            guard let p = buffer.baseAddress, buffer.count > 0 else { throw .invalidPadding }
            var chain = (UInt64(0), UInt64(0))
            withUnsafeMutableBytes(of: &chain) { c in
                c.baseAddress!.copyMemory(from: v, byteCount: 16)
                cipher.cbcDecrypt(c.baseAddress!, p, p, buffer.count / 16)
            }
            let (checkedValid, checkedPad) = pkcs7Check(UnsafeRawPointer(p + buffer.count - 16))
            // Public by design: the accept/reject outcome and the plaintext length (the caller sees
            // both); which padding bytes were wrong is not released.
            let valid = declassified(checkedValid), pad = declassified(checkedPad)
            guard valid else {
                secureZero(buffer)
                throw .invalidPadding
            }
            return buffer.count - pad
        }

        /// Encrypts `message`; with `.pkcs7` (the default) any length, with `.none` whole blocks.
        public static func encrypt<M: Collection<UInt8>, I: Collection<UInt8>>(
            _ message: M, using cipher: Cipher, iv: I, padding: Padding = .pkcs7) throws(RampartError) -> [UInt8] {
            var ivCopy = Array(iv)
            guard ivCopy.count == 16 else { throw .invalidNonceLength }
            switch padding {
            case .none:
                return try IGE.run(message, ivCopy) { (b, v) throws(RampartError) in try encrypt(b, using: cipher, iv: v) }
            case .pkcs7:
                var out = Array(message)
                let n = out.count
                out.append(contentsOf: repeatElement(0, count: 16 - n % 16))
                let made = out.withUnsafeMutableBytes { b in
                    ivCopy.withUnsafeBytes { v in Result { () throws(RampartError) in try encryptPKCS7(b, messageCount: n, using: cipher, iv: v) } }
                }
                ivCopy.secureWipe()
                _ = try made.get()
                return out
            }
        }

        /// Decrypts `ciphertext`; with `.pkcs7` (the default) checks and removes the padding.
        /// - Throws: ``RampartError/invalidPadding`` (one error for every padding failure),
        ///   ``RampartError/invalidInputLength``, ``RampartError/invalidNonceLength``.
        public static func decrypt<M: Collection<UInt8>, I: Collection<UInt8>>(
            _ ciphertext: M, using cipher: Cipher, iv: I, padding: Padding = .pkcs7) throws(RampartError) -> [UInt8] {
            let ivCopy = Array(iv)
            guard ivCopy.count == 16 else { throw .invalidNonceLength }
            switch padding {
            case .none:
                return try IGE.run(ciphertext, ivCopy) { (b, v) throws(RampartError) in try decrypt(b, using: cipher, iv: v) }
            case .pkcs7:
                var out = Array(ciphertext)
                let made = out.withUnsafeMutableBytes { b in
                    ivCopy.withUnsafeBytes { v in Result { () throws(RampartError) in try decryptPKCS7(b, using: cipher, iv: v) } }
                }
                let n = try made.get()
                out.removeLast(out.count - n)
                return out
            }
        }

        /// Encrypts `message` under `key`.
        public static func encrypt<M: Collection<UInt8>, I: Collection<UInt8>>(
            _ message: M, using key: SymmetricKey, iv: I, padding: Padding = .pkcs7) throws(RampartError) -> [UInt8] {
            try encrypt(message, using: try Cipher(key: key), iv: iv, padding: padding)
        }

        /// Decrypts `ciphertext` under `key`.
        public static func decrypt<M: Collection<UInt8>, I: Collection<UInt8>>(
            _ ciphertext: M, using key: SymmetricKey, iv: I, padding: Padding = .pkcs7) throws(RampartError) -> [UInt8] {
            try decrypt(ciphertext, using: try Cipher(key: key), iv: iv, padding: padding)
        }
    }
}

/// Checks PKCS#7 padding in the last block without a branch or index that depends on its bytes.
/// Returns (valid, pad length).
@inline(never)
func pkcs7Check(_ last: UnsafeRawPointer) -> (Bool, Int) {
    let n = UInt64(last.load(fromByteOffset: 15, as: UInt8.self))
    // bad collects set bits on any failure: n == 0, n > 16, or a padding byte that differs from n.
    var bad = ConstantTime.isZeroMask(n)
    bad |= 0 &- ((16 &- n) >> 63)  // all-ones when n > 16
    for i in 0..<16 {
        let b = UInt64(last.load(fromByteOffset: 15 - i, as: UInt8.self))
        let inPad = 0 &- ((UInt64(i) &- n) >> 63)  // all-ones when i < n
        bad |= inPad & (b ^ n)
    }
    let ok = ConstantTime.isZeroMask(bad)
    return (ok != 0, Int(n & ok))
}

extension AES.IGE {
    /// Copies `input`, runs `body` on the copy in place with a 16- or 32-byte IV copy, and returns the
    /// copy; IV copies are wiped.
    static func run<M: Collection<UInt8>, I: Collection<UInt8>>(
        _ input: M, _ iv: I,
        _ body: (UnsafeMutableRawBufferPointer, UnsafeMutableRawBufferPointer) throws(RampartError) -> Void
    ) throws(RampartError) -> [UInt8] {
        var out = Array(input)
        var ivCopy = Array(iv)
        defer { ivCopy.secureWipe() }
        let made = out.withUnsafeMutableBytes { b in
            ivCopy.withUnsafeMutableBytes { v in Result { () throws(RampartError) in try body(b, v) } }
        }
        try made.get()
        return out
    }
}

extension AES {
    /// Counter mode with a 128-bit big-endian counter, as a stream that continues across calls.
    ///
    /// Each call XORs the next bytes of the keystream into the data, whatever the lengths of the
    /// calls: splitting a message into pieces gives the same result as one call (unused keystream of
    /// a partial block is kept for the next call). MTProto's obfuscated transport keeps one such
    /// stream per direction for the whole connection. The counter wraps modulo 2^128.
    ///
    /// Encryption and decryption are the same operation. CTR provides no integrity. Never reuse a
    /// key and initial counter for two messages. The keystream state is wiped when the stream is
    /// released.
    ///
    /// - Warning: Unauthenticated, and malleable bit for bit: flipping a ciphertext bit flips the same
    ///   plaintext bit. Authenticate the ciphertext separately, or use ``AES/GCM``.
    public final class CTR {
        let cipher: Cipher
        /// counter (16 bytes, the next block to encrypt) then unused keystream (16 bytes).
        let state: UnsafeMutableRawPointer
        /// Bytes of the keystream block already used (16: none left).
        var used = 16

        /// A stream starting at the 16-byte initial counter block `counter`.
        /// - Throws: ``RampartError/invalidNonceLength`` unless `counter` has 16 bytes.
        public init<C: Collection<UInt8>>(cipher: Cipher, counter: C) throws(RampartError) {
            var c = Array(counter)
            defer { c.secureWipe() }
            guard c.count == 16 else { throw .invalidNonceLength }
            self.cipher = cipher
            state = UnsafeMutableRawPointer.allocate(byteCount: 32, alignment: 16)
            state.initializeMemory(as: UInt8.self, repeating: 0, count: 32)
            c.withUnsafeBytes { state.copyMemory(from: $0.baseAddress!, byteCount: 16) }
        }

        /// A stream under `key` (16, 24 or 32 bytes) starting at the 16-byte `counter`.
        public convenience init<C: Collection<UInt8>>(key: SymmetricKey, counter: C) throws(RampartError) {
            try self.init(cipher: try Cipher(key: key), counter: counter)
        }

        deinit {
            secureZero(UnsafeMutableRawBufferPointer(start: state, count: 32))
            state.deallocate()
        }

        /// The counter block the next keystream block will be made from.
        public var counter: [UInt8] { Array(UnsafeRawBufferPointer(start: state, count: 16)) }

        /// XORs the next `buffer.count` keystream bytes into `buffer` in place.
        public func xor(_ buffer: UnsafeMutableRawBufferPointer) {
            guard let p = buffer.baseAddress, buffer.count > 0 else { return }
            apply(UnsafeRawPointer(p), p, buffer.count)
        }

        /// XORs the next keystream bytes into `input`, writing `output` (same length; may be the same
        /// memory, must not otherwise overlap).
        /// - Throws: ``RampartError/invalidOutputLength`` when the lengths differ.
        public func xor(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(RampartError) {
            guard input.count == output.count else { throw .invalidOutputLength }
            guard let i = input.baseAddress, let o = output.baseAddress, input.count > 0 else { return }
            apply(i, o, input.count)
        }

        /// Returns `data` XORed with the next keystream bytes.
        public func process<D: Collection<UInt8>>(_ data: D) -> [UInt8] {
            var out = Array(data)
            out.withUnsafeMutableBytes { xor($0) }
            return out
        }

        func apply(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ count: Int) {
            var i = 0
            let ks = state + 16
            // Leftover keystream from the previous call.
            while used < 16 && i < count {
                output.storeBytes(of: input.load(fromByteOffset: i, as: UInt8.self) ^ ks.load(fromByteOffset: used, as: UInt8.self),
                                  toByteOffset: i, as: UInt8.self)
                used += 1
                i += 1
            }
            let blocks = (count - i) / 16
            if blocks > 0 {
                cipher.ctr128(state, input + i, output + i, blocks)
                i += 16 * blocks
            }
            if i < count {
                // One more keystream block for the tail; keep the rest for the next call.
                ks.initializeMemory(as: UInt8.self, repeating: 0, count: 16)
                cipher.ctr128(state, UnsafeRawPointer(ks), ks, 1)
                used = count - i
                xorBytes(output + i, input + i, UnsafeRawPointer(ks), used)
            }
        }
    }
}
