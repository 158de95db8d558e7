// NaCl crypto_secretbox: XSalsa20-Poly1305 (Bernstein, "Cryptography in NaCl", §9).
//
// Seal: (x = XSalsa20 input block for key and nonce)
//   block 0 of the keystream: bytes 0..<32 are the Poly1305 key, bytes 32..<64 encrypt the first
//   32 message bytes; the rest of the message is encrypted from block 1 on; tag = Poly1305(ct).
// Open: the tag is checked (constant time) over the ciphertext before a single byte is decrypted.
//
// Seal encrypts and authenticates in chunks of `secretBoxChunk` bytes so that each chunk of
// ciphertext is still in the L1 cache when Poly1305 reads it. With an eight-block kernel (the `salsa20`
// registry's implementation: RampartKernelSupport/Salsa20Lanes8.swift built for AVX2 or AVX-512VL) the
// bulk runs in one stitched loop that overlaps the two.

internal import RampartKernelSupport

/// Ciphertext bytes per encrypt-then-MAC step of a seal (a multiple of 64).
let secretBoxChunk = 4096

/// NaCl's `crypto_secretbox`: authenticated encryption with XSalsa20 and Poly1305 under a 32-byte
/// key and a 24-byte nonce. The same construction as libsodium's `crypto_secretbox_easy` and
/// Threema's message boxes.
///
/// ```swift
/// let box = try SecretBox.seal(message, using: key, nonce: nonce)      // tag || ciphertext
/// let message = try SecretBox.open(box, using: key, nonce: nonce)
/// ```
///
/// The combined form is `tag (16 bytes) || ciphertext` (libsodium's `_easy` layout); the detached
/// form returns the two parts separately. In-place variants work on raw buffers.
///
/// - Important: never seal two messages with the same key and nonce. A random 24-byte nonce (from
///   `SystemRandomNumberGenerator`) is safe for any practical number of messages; so is a counter.
///   Messages are authenticated but not padded: the ciphertext length reveals the message length.
///
/// Open never releases plaintext of a box that fails to verify: it throws
/// ``RampartError/authenticationFailure`` and (for separate output buffers) leaves the output zeroed.
/// Every key-dependent value on the stack is wiped before returning.
public enum SecretBox {
    /// Key size in bytes (32).
    public static let keyByteCount = 32
    /// Nonce size in bytes (24).
    public static let nonceByteCount = 24
    /// Tag size in bytes (16): a combined box is this much longer than its message.
    public static let tagByteCount = 16

    // MARK: Combined form (tag || ciphertext)

    /// Encrypts and authenticates `message`: returns `tag || ciphertext` (`crypto_secretbox_easy`).
    ///
    /// - Throws: ``RampartError/invalidKeyLength`` unless the key has 32 bytes,
    ///   ``RampartError/invalidNonceLength`` unless the nonce has 24 bytes.
    public static func seal<M: Collection<UInt8>, N: Collection<UInt8>>(
        _ message: M, using key: SymmetricKey, nonce: N
    ) throws(RampartError) -> [UInt8] {
        try seal(message, using: key, nonce: nonce, backend: key.backend)
    }

    /// As ``seal(_:using:nonce:)`` on `backend` (the public call passes the key's).
    @_specialize(where M == [UInt8], N == [UInt8])
    static func seal<M: Collection<UInt8>, N: Collection<UInt8>>(
        _ message: M, using key: SymmetricKey, nonce: N, backend: Backend
    ) throws(RampartError) -> [UInt8] {
        var n = try nonceBytes(nonce, count: 24)
        return try withKey32(key) { k in
            withContiguousBytes(message) { m in
                let count = m.count
                return [UInt8](unsafeUninitializedCapacity: count + 16) { out, initialized in
                    let o = UnsafeMutableRawPointer(out.baseAddress!)
                    withUnsafeBytes(of: &n) { nb in
                        secretBoxSeal(UnsafeRawPointer(m.baseAddress ?? UnsafeRawPointer(o)), o + 16, count, tag: o, key: k,
                                      nonce: nb.baseAddress!, backend: backend)
                    }
                    initialized = count + 16
                }
            }
        }
    }

    /// Verifies and decrypts a combined box `tag || ciphertext` (`crypto_secretbox_open_easy`).
    ///
    /// - Throws: ``RampartError/authenticationFailure`` when the box does not verify under this key
    ///   and nonce (nothing is decrypted), ``RampartError/invalidInputLength`` when it is shorter than
    ///   16 bytes, ``RampartError/invalidKeyLength``, ``RampartError/invalidNonceLength``.
    public static func open<B: Collection<UInt8>, N: Collection<UInt8>>(
        _ box: B, using key: SymmetricKey, nonce: N
    ) throws(RampartError) -> [UInt8] {
        try open(box, using: key, nonce: nonce, backend: key.backend)
    }

    /// As ``open(_:using:nonce:)`` on `backend` (the public call passes the key's).
    @_specialize(where B == [UInt8], N == [UInt8])
    static func open<B: Collection<UInt8>, N: Collection<UInt8>>(
        _ box: B, using key: SymmetricKey, nonce: N, backend: Backend
    ) throws(RampartError) -> [UInt8] {
        var n = try nonceBytes(nonce, count: 24)
        guard box.count >= 16 else { throw .invalidInputLength }
        let result: [UInt8]? = try withKey32(key) { k in
            withContiguousBytes(box) { b in
                let count = b.count - 16
                var ok = true
                // Capacity at least 1: with capacity 0 the standard library hands out its shared
                // empty-array singleton and stores the count (0) into it, a write ThreadSanitizer
                // reports as a data race when two threads open empty boxes at once.
                let out = [UInt8](unsafeUninitializedCapacity: max(count, 1)) { out, initialized in
                    let o = UnsafeMutableRawPointer(out.baseAddress!)
                    ok = withUnsafeBytes(of: &n) { nb in
                        secretBoxOpen(b.baseAddress! + 16, o, count, tag: b.baseAddress!, key: k, nonce: nb.baseAddress!,
                                      backend: backend)
                    }
                    if !ok && count > 0 { secureZero(UnsafeMutableRawBufferPointer(start: o, count: count)) }
                    initialized = count
                }
                return ok ? out : nil
            }
        }
        guard let result else { throw .authenticationFailure }
        return result
    }

    // MARK: Detached form

    /// Encrypts and authenticates `message`, returning the ciphertext (as long as the message) and
    /// the 16-byte tag separately (`crypto_secretbox_detached`).
    ///
    /// - Throws: ``RampartError/invalidKeyLength``, ``RampartError/invalidNonceLength``.
    public static func sealDetached<M: Collection<UInt8>, N: Collection<UInt8>>(
        _ message: M, using key: SymmetricKey, nonce: N
    ) throws(RampartError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        var ct = Array(message)
        var tag = [UInt8](repeating: 0, count: 16)
        let r = ct.withUnsafeMutableBytes { c in
            tag.withUnsafeMutableBytes { t in
                Result { () throws(RampartError) in try seal(inPlace: c, tag: t, using: key, nonce: nonce) }
            }
        }
        try r.get()
        return (ct, tag)
    }

    /// Verifies `tag` over `ciphertext` and decrypts it (`crypto_secretbox_open_detached`).
    ///
    /// - Throws: ``RampartError/authenticationFailure`` (nothing is decrypted; a tag that is not 16
    ///   bytes long also fails), ``RampartError/invalidKeyLength``, ``RampartError/invalidNonceLength``.
    public static func openDetached<C: Collection<UInt8>, T: Collection<UInt8>, N: Collection<UInt8>>(
        ciphertext: C, tag: T, using key: SymmetricKey, nonce: N
    ) throws(RampartError) -> [UInt8] {
        var m = Array(ciphertext)
        let t = Array(tag)
        let r = m.withUnsafeMutableBytes { mb in
            t.withUnsafeBytes { tb in
                Result { () throws(RampartError) in try open(inPlace: mb, tag: tb, using: key, nonce: nonce) }
            }
        }
        try r.get()
        return m
    }

    // MARK: Raw pointers (package)

    /// Seals `count` bytes at `buffer` in place and writes the 16-byte tag to `tag`; `nonce` points at
    /// 24 bytes. For the modules of this package that build whole envelopes in one buffer
    /// (RampartThreema): no generic nonce, no per-call length checks the caller has already made.
    ///
    /// - Throws: ``RampartError/invalidKeyLength``.
    package static func seal(inPlace buffer: UnsafeMutableRawPointer, count: Int, tag: UnsafeMutableRawPointer,
                             using key: SymmetricKey, nonce: UnsafeRawPointer) throws(RampartError) {
        let backend = key.backend
        try withKey32(key) { k in
            secretBoxSeal(UnsafeRawPointer(buffer), buffer, count, tag: tag, key: k, nonce: nonce, backend: backend)
        }
    }

    /// As ``seal(inPlace:count:tag:using:nonce:)`` with the 32 key bytes at `key` (a key derived into
    /// temporary memory by the caller, who wipes it), on the default backend.
    package static func seal(inPlace buffer: UnsafeMutableRawPointer, count: Int, tag: UnsafeMutableRawPointer,
                             key: UnsafeRawPointer, nonce: UnsafeRawPointer) {
        secretBoxSeal(UnsafeRawPointer(buffer), buffer, count, tag: tag, key: key, nonce: nonce,
                      backend: CPU.defaultBackend)
    }

    /// Verifies `tag` over the `count` ciphertext bytes at `source` and, only if it matches, writes the
    /// plaintext to `destination` (the same buffer or a disjoint one). Returns whether the tag matched;
    /// on a mismatch nothing is written. `nonce` points at 24 bytes.
    ///
    /// - Throws: ``RampartError/invalidKeyLength``.
    package static func open(_ source: UnsafeRawPointer, count: Int, tag: UnsafeRawPointer,
                             into destination: UnsafeMutableRawPointer, using key: SymmetricKey,
                             nonce: UnsafeRawPointer) throws(RampartError) -> Bool {
        let backend = key.backend
        return try withKey32(key) { k in
            secretBoxOpen(source, destination, count, tag: tag, key: k, nonce: nonce, backend: backend)
        }
    }

    /// Two boxes under one nonce, `a` with `keyA` and `b` with `keyB`, sealed in place (the
    /// metadata and message boxes of a Threema envelope): when both are short (and the keys on one
    /// backend) their HSalsa20 subkeys are computed together; otherwise as two
    /// ``seal(inPlace:count:tag:using:nonce:)`` calls.
    ///
    /// - Throws: ``RampartError/invalidKeyLength``.
    package static func sealPair(inPlace a: UnsafeMutableRawPointer, count countA: Int, tag tagA: UnsafeMutableRawPointer,
                                 using keyA: SymmetricKey, inPlace b: UnsafeMutableRawPointer, count countB: Int,
                                 tag tagB: UnsafeMutableRawPointer, using keyB: SymmetricKey,
                                 nonce: UnsafeRawPointer) throws(RampartError) {
        let backend = keyA.backend
        let salsa = Registries.salsa20.implementation(for: backend)
        let limit = secretBoxShortLimit(salsa)
        guard keyB.backend == backend, countA <= limit, countB <= limit else {
            try seal(inPlace: a, count: countA, tag: tagA, using: keyA, nonce: nonce)
            try seal(inPlace: b, count: countB, tag: tagB, using: keyB, nonce: nonce)
            return
        }
        guard keyA.byteCount == 32, keyB.byteCount == 32 else { throw .invalidKeyLength }
        keyA.withUnsafeBytes { ka in
            keyB.withUnsafeBytes { kb in
                secretBoxSealShortPair(a, countA, tagA: tagA, keyA: ka.baseAddress!, b, countB, tagB: tagB,
                                       keyB: kb.baseAddress!, nonce: nonce, salsa, backend: backend)
            }
        }
    }

    /// Verifies two boxes under one nonce and, only if both tags match, writes both plaintexts
    /// (``open(_:count:tag:into:using:nonce:)`` for each, the subkeys computed together when both
    /// are short and the keys on one backend). Returns whether both matched; otherwise neither
    /// plaintext is written.
    ///
    /// - Throws: ``RampartError/invalidKeyLength``.
    package static func openPair(_ srcA: UnsafeRawPointer, count countA: Int, tag tagA: UnsafeRawPointer,
                                 into dstA: UnsafeMutableRawPointer, using keyA: SymmetricKey,
                                 _ srcB: UnsafeRawPointer, count countB: Int, tag tagB: UnsafeRawPointer,
                                 into dstB: UnsafeMutableRawPointer, using keyB: SymmetricKey,
                                 nonce: UnsafeRawPointer) throws(RampartError) -> Bool {
        let backend = keyA.backend
        let salsa = Registries.salsa20.implementation(for: backend)
        let limit = secretBoxShortLimit(salsa)
        guard keyB.backend == backend, countA <= limit, countB <= limit else {
            // Long boxes: B is verified into its destination only after A has verified; if B then
            // fails, A's plaintext is wiped again.
            guard try open(srcA, count: countA, tag: tagA, into: dstA, using: keyA, nonce: nonce) else { return false }
            guard try open(srcB, count: countB, tag: tagB, into: dstB, using: keyB, nonce: nonce) else {
                secureZero(UnsafeMutableRawBufferPointer(start: dstA, count: countA))
                return false
            }
            return true
        }
        guard keyA.byteCount == 32, keyB.byteCount == 32 else { throw .invalidKeyLength }
        return keyA.withUnsafeBytes { ka in
            keyB.withUnsafeBytes { kb in
                secretBoxOpenShortPair(srcA, dstA, countA, tagA: tagA, keyA: ka.baseAddress!, srcB, dstB, countB, tagB: tagB,
                                       keyB: kb.baseAddress!, nonce: nonce, salsa, backend: backend)
            }
        }
    }

    // MARK: Raw buffers

    /// Encrypts `buffer` in place and writes the 16-byte tag to `tag`.
    ///
    /// - Throws: ``RampartError/invalidOutputLength`` unless `tag.count == 16`,
    ///   ``RampartError/invalidKeyLength``, ``RampartError/invalidNonceLength``.
    public static func seal<N: Collection<UInt8>>(
        inPlace buffer: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer,
        using key: SymmetricKey, nonce: N
    ) throws(RampartError) {
        try seal(inPlace: buffer, tag: tag, using: key, nonce: nonce, backend: key.backend)
    }

    /// As ``seal(inPlace:tag:using:nonce:)`` on `backend` (the public call passes the key's).
    @_specialize(where N == [UInt8])
    static func seal<N: Collection<UInt8>>(
        inPlace buffer: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer,
        using key: SymmetricKey, nonce: N, backend: Backend
    ) throws(RampartError) {
        var n = try nonceBytes(nonce, count: 24)
        guard tag.count == 16, let t = tag.baseAddress else { throw .invalidOutputLength }
        try withKey32(key) { k in
            withUnsafeBytes(of: &n) { nb in
                let p = buffer.baseAddress ?? t
                secretBoxSeal(UnsafeRawPointer(p), p, buffer.count, tag: t, key: k, nonce: nb.baseAddress!,
                              backend: backend)
            }
        }
    }

    /// Verifies `tag` over the ciphertext in `buffer`, then decrypts it in place.
    ///
    /// On failure the buffer is left exactly as it was (still ciphertext): the tag is checked first.
    ///
    /// - Throws: ``RampartError/authenticationFailure`` (also for a tag that is not 16 bytes long),
    ///   ``RampartError/invalidKeyLength``, ``RampartError/invalidNonceLength``.
    public static func open<N: Collection<UInt8>>(
        inPlace buffer: UnsafeMutableRawBufferPointer, tag: UnsafeRawBufferPointer,
        using key: SymmetricKey, nonce: N
    ) throws(RampartError) {
        try open(inPlace: buffer, tag: tag, using: key, nonce: nonce, backend: key.backend)
    }

    /// As ``open(inPlace:tag:using:nonce:)`` on `backend` (the public call passes the key's).
    @_specialize(where N == [UInt8])
    static func open<N: Collection<UInt8>>(
        inPlace buffer: UnsafeMutableRawBufferPointer, tag: UnsafeRawBufferPointer,
        using key: SymmetricKey, nonce: N, backend: Backend
    ) throws(RampartError) {
        var n = try nonceBytes(nonce, count: 24)
        guard tag.count == 16, let t = tag.baseAddress else { throw .authenticationFailure }
        let ok = try withKey32(key) { k in
            withUnsafeBytes(of: &n) { nb in
                let p = buffer.baseAddress ?? UnsafeMutableRawPointer(mutating: t)
                return secretBoxOpen(UnsafeRawPointer(p), p, buffer.count, tag: t, key: k,
                                     nonce: nb.baseAddress!, backend: backend)
            }
        }
        guard ok else { throw .authenticationFailure }
    }

    /// Seals `message` into `output` (`tag || ciphertext`, exactly `message.count + 16` bytes). The
    /// buffers must not overlap.
    ///
    /// - Throws: ``RampartError/invalidOutputLength`` for a wrong output size,
    ///   ``RampartError/invalidKeyLength``, ``RampartError/invalidNonceLength``.
    public static func seal<N: Collection<UInt8>>(
        _ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
        using key: SymmetricKey, nonce: N
    ) throws(RampartError) {
        try seal(message, into: output, using: key, nonce: nonce, backend: key.backend)
    }

    /// As ``seal(_:into:using:nonce:)`` on `backend` (the public call passes the key's).
    @_specialize(where N == [UInt8])
    static func seal<N: Collection<UInt8>>(
        _ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
        using key: SymmetricKey, nonce: N, backend: Backend
    ) throws(RampartError) {
        var n = try nonceBytes(nonce, count: 24)
        guard output.count == message.count + 16, let o = output.baseAddress else { throw .invalidOutputLength }
        try withKey32(key) { k in
            withUnsafeBytes(of: &n) { nb in
                secretBoxSeal(message.baseAddress ?? UnsafeRawPointer(o), o + 16, message.count, tag: o, key: k,
                              nonce: nb.baseAddress!, backend: backend)
            }
        }
    }

    /// Opens the combined box `box` (`tag || ciphertext`) into `output` (exactly `box.count - 16`
    /// bytes). The buffers must not overlap. On failure `output` is zero-filled.
    ///
    /// - Throws: ``RampartError/authenticationFailure``, ``RampartError/invalidInputLength`` for a
    ///   box shorter than 16 bytes, ``RampartError/invalidOutputLength`` for a wrong output size,
    ///   ``RampartError/invalidKeyLength``, ``RampartError/invalidNonceLength``.
    public static func open<N: Collection<UInt8>>(
        _ box: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
        using key: SymmetricKey, nonce: N
    ) throws(RampartError) {
        try open(box, into: output, using: key, nonce: nonce, backend: key.backend)
    }

    /// As ``open(_:into:using:nonce:)`` on `backend` (the public call passes the key's).
    @_specialize(where N == [UInt8])
    static func open<N: Collection<UInt8>>(
        _ box: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
        using key: SymmetricKey, nonce: N, backend: Backend
    ) throws(RampartError) {
        var n = try nonceBytes(nonce, count: 24)
        guard box.count >= 16, let b = box.baseAddress else { throw .invalidInputLength }
        guard output.count == box.count - 16 else { throw .invalidOutputLength }
        let ok = try withKey32(key) { k in
            withUnsafeBytes(of: &n) { nb in
                secretBoxOpen(b + 16, output.baseAddress ?? UnsafeMutableRawPointer(mutating: b), output.count, tag: b,
                              key: k, nonce: nb.baseAddress!, backend: backend)
            }
        }
        guard ok else {
            secureZero(output)
            throw .authenticationFailure
        }
    }
}

// MARK: - Core

/// The XSalsa20 input block for `key` and `nonce`, and keystream block 0 in `block0` (64 bytes).
@inline(__always)
func secretBoxSetup(key: UnsafeRawPointer, nonce: UnsafeRawPointer, block0: UnsafeMutableRawPointer,
                    _ salsa: any Salsa20Implementation.Type) -> SIMD16<UInt32> {
    var x = salsa.xsalsa20Input(key, nonce, 0)
    salsa.block(x, block0)
    x[8] = 1
    return x
}

// MARK: Short messages
//
// Every keystream block of XSalsa20 depends only on the HSalsa20 subkey, so once it is known, block 0
// (the Poly1305 key and the first 32 message bytes) and the blocks after it can be computed together
// instead of block 0 first and the rest after: two blocks in one interleaved loop (about the time of
// one), four with the four-block code, eight with one call of an eight-block kernel. A message
// whose keystream fits in those blocks takes the short path below: all of its keystream into the
// scratch space at once, then the XOR and Poly1305 from there.

/// The longest message the short path takes: keystream bytes 32 ..< count + 32 must lie in the blocks
/// generated at once (eight with an eight-block kernel, four with the portable code).
@inline(__always)
func secretBoxShortLimit(_ salsa: any Salsa20Implementation.Type) -> Int { salsa.isKernel ? 512 - 32 : 256 - 32 }

/// Keystream blocks 0 ..< ⌈bytes / 64⌉ for the XSalsa20 input block `x` (counter 0) into `ks`, which
/// must hold 512 zero bytes when `salsa` is a kernel and `bytes > 256`. `bytes` ≤ 512 (kernel) or ≤ 256.
@inline(__always)
func secretBoxKeystream(_ x: SIMD16<UInt32>, _ bytes: Int, _ ks: UnsafeMutableRawPointer, _ salsa: any Salsa20Implementation.Type) {
    if bytes <= 64 {
        salsa.block(x, ks)
    } else if bytes <= 128 {
        salsa.blocks2(x, ks)
    } else if bytes > 256 && salsa.isKernel {
        // One 512-byte group of the eight-block kernel over zeros: blocks 0 ..< 8 in place (for up to
        // four blocks the four-block code is faster than a whole group).
        var y = x
        withUnsafeMutableBytes(of: &y) { salsa.xor($0.baseAddress!, UnsafeRawPointer(ks), ks, 1) }
        wipe(&y)
    } else {
        salsa20x4(x, 0, salsa) { j, k, v in ks.storeBytes(of: v, toByteOffset: 64 * j + 16 * k, as: SIMD4<UInt32>.self) }
    }
}

/// ``secretBoxSeal`` for `count ≤ secretBoxShortLimit(salsa)`.
@inline(never)
func secretBoxSealShort(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ count: Int, tag: UnsafeMutableRawPointer,
                        key: UnsafeRawPointer, nonce: UnsafeRawPointer, _ salsa: any Salsa20Implementation.Type,
                        backend: Backend) {
    withScratch { ks in
        var x = salsa.xsalsa20Input(key, nonce, 0)
        secretBoxKeystream(x, count + 32, ks, salsa)
        wipe(&x)
        var mac = Poly1305State(key: ks, backend: backend)
        xorKeystream(dst, src, ks + 32, count)
        mac.update(dst, count)
        mac.finalize(into: tag)
        wipe(&mac)
    }
}

/// ``secretBoxOpen`` for `count ≤ secretBoxShortLimit(salsa)`.
@inline(never)
func secretBoxOpenShort(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ count: Int, tag: UnsafeRawPointer,
                        key: UnsafeRawPointer, nonce: UnsafeRawPointer, _ salsa: any Salsa20Implementation.Type,
                        backend: Backend) -> Bool {
    withScratch { ks in
        var x = salsa.xsalsa20Input(key, nonce, 0)
        secretBoxKeystream(x, count + 32, ks, salsa)
        wipe(&x)
        var mac = Poly1305State(key: ks, backend: backend)
        mac.update(src, count)
        mac.finalize(into: ks + 512)
        wipe(&mac)
        let ok = ConstantTime.equals(UnsafeRawBufferPointer(start: ks + 512, count: 16),
                                     UnsafeRawBufferPointer(start: tag, count: 16))
        if ok { xorKeystream(dst, src, ks + 32, count) }
        return ok
    }
}

// MARK: Two short boxes under one nonce

/// Seals two short messages in place under two keys and one nonce (each `count ≤
/// secretBoxShortLimit(salsa)`): the two HSalsa20 subkeys in one interleaved computation, then
/// each box as ``secretBoxSealShort``.
@inline(never)
func secretBoxSealShortPair(_ a: UnsafeMutableRawPointer, _ countA: Int, tagA: UnsafeMutableRawPointer, keyA: UnsafeRawPointer,
                            _ b: UnsafeMutableRawPointer, _ countB: Int, tagB: UnsafeMutableRawPointer, keyB: UnsafeRawPointer,
                            nonce: UnsafeRawPointer, _ salsa: any Salsa20Implementation.Type, backend: Backend) {
    var (xa, xb) = salsa.xsalsa20InputPair(keyA, keyB, nonce)
    @inline(__always) func seal(_ x: SIMD16<UInt32>, _ p: UnsafeMutableRawPointer, _ count: Int, _ tag: UnsafeMutableRawPointer) {
        withScratch { ks in
            secretBoxKeystream(x, count + 32, ks, salsa)
            var mac = Poly1305State(key: ks, backend: backend)
            xorKeystream(p, UnsafeRawPointer(p), ks + 32, count)
            mac.update(p, count)
            mac.finalize(into: tag)
            wipe(&mac)
        }
    }
    seal(xa, a, countA, tagA)
    seal(xb, b, countB, tagB)
    wipe(&xa)
    wipe(&xb)
}

/// Verifies two short boxes under two keys and one nonce and, only if both tags match, decrypts
/// both (`srcA → dstA`, `srcB → dstB`; each pair the same buffer or disjoint). Returns whether both
/// matched; otherwise nothing is written.
@inline(never)
func secretBoxOpenShortPair(_ srcA: UnsafeRawPointer, _ dstA: UnsafeMutableRawPointer, _ countA: Int, tagA: UnsafeRawPointer,
                            keyA: UnsafeRawPointer, _ srcB: UnsafeRawPointer, _ dstB: UnsafeMutableRawPointer, _ countB: Int,
                            tagB: UnsafeRawPointer, keyB: UnsafeRawPointer, nonce: UnsafeRawPointer,
                            _ salsa: any Salsa20Implementation.Type, backend: Backend) -> Bool {
    var (xa, xb) = salsa.xsalsa20InputPair(keyA, keyB, nonce)
    defer {
        wipe(&xa)
        wipe(&xb)
    }
    return withScratch { ka in
        withScratch { kb in
            secretBoxKeystream(xa, countA + 32, ka, salsa)
            secretBoxKeystream(xb, countB + 32, kb, salsa)
            var mac = Poly1305State(key: ka, backend: backend)
            mac.update(srcA, countA)
            mac.finalize(into: ka + 512)
            mac = Poly1305State(key: kb, backend: backend)
            mac.update(srcB, countB)
            mac.finalize(into: kb + 512)
            wipe(&mac)
            let okA = ConstantTime.equals(UnsafeRawBufferPointer(start: ka + 512, count: 16), UnsafeRawBufferPointer(start: tagA, count: 16))
            let okB = ConstantTime.equals(UnsafeRawBufferPointer(start: kb + 512, count: 16), UnsafeRawBufferPointer(start: tagB, count: 16))
            let ok = okA && okB
            if ok {
                xorKeystream(dstA, srcA, ka + 32, countA)
                xorKeystream(dstB, srcB, kb + 32, countB)
            }
            return ok
        }
    }
}

// MARK: Any length

/// Seals `count` bytes from `src` into `dst` (the same buffer or disjoint ones) and writes the tag, on
/// `backend`'s Salsa20 and Poly1305 implementations.
@inline(never)
func secretBoxSeal(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ count: Int, tag: UnsafeMutableRawPointer,
                   key: UnsafeRawPointer, nonce: UnsafeRawPointer, backend: Backend) {
    let salsa = Registries.salsa20.implementation(for: backend)
    if count <= secretBoxShortLimit(salsa) {
        secretBoxSealShort(src, dst, count, tag: tag, key: key, nonce: nonce, salsa, backend: backend)
        return
    }
    withScratch { scratch in
        var x = secretBoxSetup(key: key, nonce: nonce, block0: scratch, salsa)
        var mac = Poly1305State(key: scratch, backend: backend)
        // The first 32 message bytes use keystream bytes 32..<64 of block 0.
        let head = min(32, count)
        for i in 0..<head {
            dst.storeBytes(of: src.load(fromByteOffset: i, as: UInt8.self) ^ scratch.load(fromByteOffset: 32 + i, as: UInt8.self),
                           toByteOffset: i, as: UInt8.self)
        }
        mac.update(dst, head)
        var off = head
        // The kernel: Salsa20 and Poly1305 stitched in one loop, the MAC one 512-byte group behind.
        let groups = (count - head) >> 9
        if groups >= 2 && salsa.isKernel {
            mac.stitched(&x) { xs, ps in
                salsa.xorPoly1305(xs, src + head, 512, dst + head, groups, ps, UnsafeRawPointer(dst + head), 1)
            }
            off = head + 512 * groups
            mac.update(dst + off - 512, 512)
        }
        while off < count {
            let n = min(secretBoxChunk, count - off)
            salsa20XOR(&x, src + off, dst + off, n, salsa)
            mac.update(dst + off, n)
            off += n
        }
        mac.finalize(into: tag)
        wipe(&mac)
        wipe(&x)
    }
}

/// Verifies `tag` over the `count` ciphertext bytes at `src` and, only if it matches, decrypts them
/// into `dst` (the same buffer or a disjoint one). Returns whether the tag matched; on a mismatch
/// nothing is written. On `backend`'s Salsa20 and Poly1305 implementations.
@inline(never)
func secretBoxOpen(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ count: Int, tag: UnsafeRawPointer,
                   key: UnsafeRawPointer, nonce: UnsafeRawPointer, backend: Backend) -> Bool {
    let salsa = Registries.salsa20.implementation(for: backend)
    if count <= secretBoxShortLimit(salsa) {
        return secretBoxOpenShort(src, dst, count, tag: tag, key: key, nonce: nonce, salsa, backend: backend)
    }
    return withScratch { scratch in
        var x = secretBoxSetup(key: key, nonce: nonce, block0: scratch, salsa)
        var mac = Poly1305State(key: scratch, backend: backend)
        // The kernel with a separate output buffer: one stitched pass authenticates the ciphertext and
        // writes the bare keystream (not plaintext) to `dst`; the plaintext is formed only after the
        // tag has verified. (In place, the keystream has nowhere to go: two passes.)
        let groups = count > 32 ? (count - 32) >> 9 : 0
        if groups >= 2 && UnsafeRawPointer(dst) != src && salsa.isKernel {
            let zeros = UnsafeRawPointer(scratch + 128)  // 512 zero bytes of the scratch space
            mac.stitched(&x) { xs, ps in
                salsa.xorPoly1305(xs, zeros, 0, dst + 32, groups, ps, src, 0)
            }
            let streamed = 512 * groups
            mac.update(src + streamed, count - streamed)
            mac.finalize(into: scratch + 64)
            wipe(&mac)
            let ok = ConstantTime.equals(UnsafeRawBufferPointer(start: scratch + 64, count: 16),
                                         UnsafeRawBufferPointer(start: tag, count: 16))
            if ok {
                for i in 0..<32 {
                    dst.storeBytes(of: src.load(fromByteOffset: i, as: UInt8.self) ^ scratch.load(fromByteOffset: 32 + i, as: UInt8.self),
                                   toByteOffset: i, as: UInt8.self)
                }
                xorInto(dst + 32, src + 32, streamed)
                let off = 32 + streamed
                if count > off { salsa20XOR(&x, src + off, dst + off, count - off, salsa) }
            } else {
                secureZero(UnsafeMutableRawBufferPointer(start: dst + 32, count: streamed))
            }
            wipe(&x)
            return ok
        }
        mac.update(src, count)
        mac.finalize(into: scratch + 64)
        wipe(&mac)
        let ok = ConstantTime.equals(UnsafeRawBufferPointer(start: scratch + 64, count: 16),
                                     UnsafeRawBufferPointer(start: tag, count: 16))
        if ok {
            let head = min(32, count)
            for i in 0..<head {
                dst.storeBytes(of: src.load(fromByteOffset: i, as: UInt8.self) ^ scratch.load(fromByteOffset: 32 + i, as: UInt8.self),
                               toByteOffset: i, as: UInt8.self)
            }
            if count > head { salsa20XOR(&x, src + head, dst + head, count - head, salsa) }
        }
        wipe(&x)
        return ok
    }
}

/// `dst[i] ^= src[i]` for `count` bytes (16 at a time).
@inline(never)
func xorInto(_ dst: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ count: Int) {
    var i = 0
    while i + 16 <= count {
        let v = dst.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self) ^ src.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
        dst.storeBytes(of: v, toByteOffset: i, as: SIMD16<UInt8>.self)
        i += 16
    }
    while i < count {
        dst.storeBytes(of: dst.load(fromByteOffset: i, as: UInt8.self) ^ src.load(fromByteOffset: i, as: UInt8.self),
                       toByteOffset: i, as: UInt8.self)
        i += 1
    }
}
