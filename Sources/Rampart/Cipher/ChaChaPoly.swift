// ChaCha20-Poly1305 (RFC 8439 §2.8) in CryptoKit's shape: ChaChaPoly.seal / ChaChaPoly.open.
//
//   otk  = first 32 bytes of ChaCha20 block 0 under (key, nonce)
//   ct   = message XOR ChaCha20 keystream from block 1
//   tag  = Poly1305_otk(aad ‖ pad16 ‖ ct ‖ pad16 ‖ le64(|aad|) ‖ le64(|ct|))
//
// With an eight-block kernel (the `chacha20` registry's implementation: RampartKernelSupport/
// ChaCha20Lanes8.swift built for AVX2 or AVX-512VL) the bulk of a seal runs in one loop that stitches
// ChaCha20 with Poly1305, as secretbox does; otherwise seal encrypts and
// authenticates in chunks of `chachaPolyChunk` bytes so that each chunk of ciphertext is still in the
// L1 cache when Poly1305 reads it. Open checks the tag over the ciphertext (constant-time comparison)
// before a single byte of plaintext is formed, so a forgery releases nothing: into a separate buffer
// the stitched kernel writes bare keystream while it authenticates, and the plaintext is XORed in
// only after the tag has verified.

internal import RampartKernelSupport

/// Ciphertext bytes per encrypt-then-MAC step of a seal (a multiple of 512, the kernel's group).
let chachaPolyChunk = 4096

/// ChaCha20-Poly1305 (RFC 8439 §2.8): authenticated encryption with associated data under a 32-byte
/// key and a 12-byte nonce, as in TLS 1.3, WireGuard and libsodium's
/// `crypto_aead_chacha20poly1305_ietf_*`.
///
/// ```swift
/// let box = try ChaChaPoly.seal(message, using: key, authenticating: header)
/// let message = try ChaChaPoly.open(box, using: key, authenticating: header)
/// ```
///
/// 16-byte tags, checked in constant time. A failed `open` throws
/// ``RampartError/authenticationFailure`` and releases no plaintext: the tag is verified before
/// anything is decrypted, and separate output buffers are zero-filled. Messages may be up to
/// ``maximumMessageByteCount`` bytes (2^32 − 1 blocks after the Poly1305 key block).
///
/// - Important: never seal two messages with the same key and nonce: it reveals their XOR and lets an
///   attacker forge tags. Random 12-byte nonces are safe for about 2^32 messages per key; a counter
///   is safe for any number.
public enum ChaChaPoly {
    /// Key size in bytes (32).
    public static let keyByteCount = 32
    /// Nonce size in bytes (12).
    public static let nonceByteCount = 12
    /// Tag size in bytes (16).
    public static let tagByteCount = 16
    /// The longest message one nonce can seal: 2^38 − 64 bytes (RFC 8439 §2.8).
    public static let maximumMessageByteCount = (1 << 38) - 64

    /// A 12-byte ChaCha20-Poly1305 nonce.
    public struct Nonce: Sendable, Equatable, Sequence {
        let bytes: [UInt8]

        /// A random nonce from the system generator.
        public init() {
            var rng = SecureRandom()
            var b = [UInt8](repeating: 0, count: 12)
            b.withUnsafeMutableBytes { fillRandom($0, using: &rng) }
            bytes = b
        }

        /// A nonce with the given bytes.
        /// - Throws: ``RampartError/invalidNonceLength`` unless there are exactly 12.
        public init<D: Collection<UInt8>>(data: D) throws(RampartError) {
            let b = Array(data)
            guard b.count == 12 else { throw .invalidNonceLength }
            bytes = b
        }

        /// Iterates the nonce bytes.
        public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }

        /// Calls `body` with the 12 nonce bytes.
        public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
            var r: Result<R, E>? = nil
            bytes.withUnsafeBytes { b in r = Result { () throws(E) in try body(b) } }
            return try r!.get()
        }
    }

    /// The output of `seal`: nonce, ciphertext and tag.
    public struct SealedBox: Sendable, Equatable {
        /// The nonce the message was sealed with.
        public let nonce: Nonce
        /// The ciphertext (as long as the message).
        public let ciphertext: [UInt8]
        /// The 16-byte authentication tag.
        public let tag: [UInt8]

        /// A box from its parts (for example received separately).
        /// - Throws: ``RampartError/authenticationFailure`` when the tag is not 16 bytes (a truncated
        ///   tag can never verify).
        public init<C: Collection<UInt8>, T: Collection<UInt8>>(nonce: Nonce, ciphertext: C, tag: T) throws(RampartError) {
            let t = Array(tag)
            guard t.count == ChaChaPoly.tagByteCount else { throw .authenticationFailure }
            self.nonce = nonce
            self.ciphertext = Array(ciphertext)
            self.tag = t
        }

        /// A box from `nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes)` (CryptoKit's `combined`).
        /// - Throws: ``RampartError/invalidInputLength`` when shorter than 28 bytes.
        public init<D: Collection<UInt8>>(combined: D) throws(RampartError) {
            let all = Array(combined)
            guard all.count >= 12 + ChaChaPoly.tagByteCount else { throw .invalidInputLength }
            nonce = try Nonce(data: all[0..<12])
            ciphertext = Array(all[12..<(all.count - ChaChaPoly.tagByteCount)])
            tag = Array(all[(all.count - ChaChaPoly.tagByteCount)...])
        }

        init(nonce: Nonce, ciphertext: [UInt8], tag: [UInt8]) {
            self.nonce = nonce
            self.ciphertext = ciphertext
            self.tag = tag
        }

        /// Boxes are equal when nonce, ciphertext and tag are; tag and ciphertext are compared in
        /// constant time (lengths are public).
        public static func == (a: SealedBox, b: SealedBox) -> Bool {
            let sameTag = ConstantTime.equals(a.tag, b.tag)
            let sameCiphertext = ConstantTime.equals(a.ciphertext, b.ciphertext)
            return sameTag && sameCiphertext && a.nonce == b.nonce
        }

        /// `nonce ‖ ciphertext ‖ tag`.
        public var combined: [UInt8] { nonce.bytes + ciphertext + tag }
    }

    // MARK: Allocating API

    /// Encrypts and authenticates `message` under `key` with `nonce` (random when `nil`).
    /// - Throws: ``RampartError/invalidKeyLength`` unless the key has 32 bytes,
    ///   ``RampartError/invalidInputLength`` for a message longer than ``maximumMessageByteCount``.
    public static func seal<M: Collection<UInt8>>(_ message: M, using key: SymmetricKey,
                                                  nonce: Nonce? = nil) throws(RampartError) -> SealedBox {
        try seal(message, using: key, nonce: nonce, authenticating: EmptyCollection<UInt8>())
    }

    /// Encrypts `message` and authenticates it together with `authenticatedData`.
    /// - Throws: as ``seal(_:using:nonce:)``.
    public static func seal<M: Collection<UInt8>, A: Collection<UInt8>>(
        _ message: M, using key: SymmetricKey, nonce: Nonce? = nil, authenticating authenticatedData: A
    ) throws(RampartError) -> SealedBox {
        let n = nonce ?? Nonce()
        var out = Array(message)
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        let made = out.withUnsafeMutableBytes { b in
            tag.withUnsafeMutableBytes { t in
                n.bytes.withUnsafeBytes { nb in
                    withContiguousBytes(authenticatedData) { a in
                        Result { () throws(RampartError) in
                            try seal(b, tag: t, using: key, nonce: nb, authenticating: a)
                        }
                    }
                }
            }
        }
        try made.get()
        return SealedBox(nonce: n, ciphertext: out, tag: tag)
    }

    /// Checks and decrypts `sealedBox`.
    /// - Throws: ``RampartError/authenticationFailure`` (nothing is returned), or
    ///   ``RampartError/invalidKeyLength``.
    public static func open(_ sealedBox: SealedBox, using key: SymmetricKey) throws(RampartError) -> [UInt8] {
        try open(sealedBox, using: key, authenticating: EmptyCollection<UInt8>())
    }

    /// Checks `sealedBox` and `authenticatedData`, then decrypts.
    /// - Throws: as ``open(_:using:)``.
    public static func open<A: Collection<UInt8>>(_ sealedBox: SealedBox, using key: SymmetricKey,
                                                  authenticating authenticatedData: A) throws(RampartError) -> [UInt8] {
        var out = sealedBox.ciphertext
        let made = out.withUnsafeMutableBytes { b in
            sealedBox.tag.withUnsafeBytes { t in
                sealedBox.nonce.bytes.withUnsafeBytes { nb in
                    withContiguousBytes(authenticatedData) { a in
                        Result { () throws(RampartError) in
                            try open(b, tag: t, using: key, nonce: nb, authenticating: a)
                        }
                    }
                }
            }
        }
        try made.get()
        return out
    }

    // MARK: Raw API

    /// Encrypts `buffer` in place and writes the 16-byte tag to `tag`.
    /// - Throws: ``RampartError/invalidKeyLength``, ``RampartError/invalidNonceLength`` (nonce not 12
    ///   bytes), ``RampartError/invalidOutputLength`` (tag buffer not 16 bytes),
    ///   ``RampartError/invalidInputLength`` (message too long).
    public static func seal(_ buffer: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer,
                            using key: SymmetricKey, nonce: UnsafeRawBufferPointer,
                            authenticating authenticatedData: UnsafeRawBufferPointer) throws(RampartError) {
        try seal(UnsafeRawBufferPointer(buffer), into: buffer, tag: tag, using: key, nonce: nonce,
                 authenticating: authenticatedData)
    }

    /// Encrypts `message` into `output` (same length; the same memory or not overlapping) and writes
    /// the 16-byte tag to `tag`.
    /// - Throws: as the in-place form, and ``RampartError/invalidOutputLength`` when the lengths differ.
    public static func seal(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                            tag: UnsafeMutableRawBufferPointer, using key: SymmetricKey, nonce: UnsafeRawBufferPointer,
                            authenticating authenticatedData: UnsafeRawBufferPointer) throws(RampartError) {
        guard key.byteCount == 32 else { throw .invalidKeyLength }
        guard nonce.count == 12, let np = nonce.baseAddress else { throw .invalidNonceLength }
        guard tag.count == tagByteCount, let t = tag.baseAddress, output.count == message.count else {
            throw .invalidOutputLength
        }
        guard message.count <= maximumMessageByteCount else { throw .invalidInputLength }
        let backend = key.backend
        key.withUnsafeBytes { k in
            chachaPolySeal(message.baseAddress, output.baseAddress, message.count, aad: authenticatedData, tag: t,
                           key: k.baseAddress!, nonce: np, backend: backend)
        }
    }

    /// Checks the tag and decrypts `buffer` in place.
    ///
    /// The tag is compared in constant time before anything is decrypted. On failure the buffer is
    /// left as it was (ciphertext) and ``RampartError/authenticationFailure`` is thrown.
    /// - Throws: ``RampartError/authenticationFailure`` (also for a tag that is not 16 bytes or a
    ///   message too long to have been sealed), ``RampartError/invalidKeyLength``,
    ///   ``RampartError/invalidNonceLength``.
    public static func open(_ buffer: UnsafeMutableRawBufferPointer, tag: UnsafeRawBufferPointer,
                            using key: SymmetricKey, nonce: UnsafeRawBufferPointer,
                            authenticating authenticatedData: UnsafeRawBufferPointer) throws(RampartError) {
        try open(UnsafeRawBufferPointer(buffer), into: buffer, tag: tag, using: key, nonce: nonce,
                 authenticating: authenticatedData)
    }

    /// Checks the tag and decrypts `ciphertext` into `output` (same length; the same memory or not
    /// overlapping). On failure `output` is zero-filled (unless it is the ciphertext's own memory,
    /// which is left unchanged) and ``RampartError/authenticationFailure`` is thrown.
    /// - Throws: as the in-place form, and ``RampartError/invalidOutputLength`` when the lengths differ.
    public static func open(_ ciphertext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                            tag: UnsafeRawBufferPointer, using key: SymmetricKey, nonce: UnsafeRawBufferPointer,
                            authenticating authenticatedData: UnsafeRawBufferPointer) throws(RampartError) {
        guard output.count == ciphertext.count else { throw .invalidOutputLength }
        let inPlace = output.baseAddress == UnsafeMutableRawPointer(mutating: ciphertext.baseAddress)
        func fail(_ e: RampartError) -> RampartError {
            if !inPlace { secureZero(output) }
            return e
        }
        guard key.byteCount == 32 else { throw fail(.invalidKeyLength) }
        guard nonce.count == 12, let np = nonce.baseAddress else { throw fail(.invalidNonceLength) }
        guard tag.count == tagByteCount, let t = tag.baseAddress, ciphertext.count <= maximumMessageByteCount else {
            throw fail(.authenticationFailure)
        }
        let backend = key.backend
        let ok = key.withUnsafeBytes { k in
            chachaPolyOpen(ciphertext.baseAddress, output.baseAddress, ciphertext.count, aad: authenticatedData, tag: t,
                           key: k.baseAddress!, nonce: np, backend: backend)
        }
        guard ok else { throw fail(.authenticationFailure) }
    }
}

// MARK: - Engine

/// The Poly1305 key (block 0) and the ChaCha20 state positioned at block 1; `backend` as `Poly1305State`.
@inline(__always)
func chachaPolyStart(key: UnsafeRawPointer, nonce: UnsafeRawPointer, backend: Backend) -> (SIMD16<UInt32>, Poly1305State) {
    var x = chacha20Input(key: key, counter: 0, nonce: nonce)
    var block = (SIMD32<UInt8>(), SIMD32<UInt8>())
    let mac = withUnsafeMutableBytes(of: &block) { b in
        chacha20Block(x, b.baseAddress!)
        return Poly1305State(key: UnsafeRawPointer(b.baseAddress!), backend: backend)
    }
    wipe(&block)
    x[12] = 1
    return (x, mac)
}

/// Absorbs `count` bytes followed by zeros up to a multiple of 16.
@inline(__always)
func poly1305Padded(_ mac: inout Poly1305State, _ p: UnsafeRawPointer?, _ count: Int) {
    guard let p, count > 0 else { return }
    mac.update(p, count)
    let pad = (16 - count & 15) & 15
    if pad > 0 {
        let zeros = SIMD16<UInt8>()
        withUnsafeBytes(of: zeros) { mac.update($0.baseAddress!, pad) }
    }
}

/// Absorbs the two little-endian 64-bit lengths and writes the tag.
@inline(__always)
func poly1305Lengths(_ mac: inout Poly1305State, _ aad: Int, _ ct: Int, _ tag: UnsafeMutableRawPointer) {
    let lengths = SIMD2<UInt64>(UInt64(aad).littleEndian, UInt64(ct).littleEndian)
    withUnsafeBytes(of: lengths) { mac.update($0.baseAddress!, 16) }
    mac.finalize(into: tag)
}

/// ChaCha20-Poly1305 seal of `count` bytes from `src` into `dst` (the same memory or disjoint); the
/// tag goes to `tag`. On `backend`'s ChaCha20 and Poly1305 implementations.
func chachaPolySeal(_ src: UnsafeRawPointer?, _ dst: UnsafeMutableRawPointer?, _ count: Int,
                    aad: UnsafeRawBufferPointer, tag: UnsafeMutableRawPointer,
                    key: UnsafeRawPointer, nonce: UnsafeRawPointer, backend: Backend) {
    let chacha = Registries.chacha20.implementation(for: backend)
    var (x, mac) = chachaPolyStart(key: key, nonce: nonce, backend: backend)
    poly1305Padded(&mac, aad.baseAddress, aad.count)
    if count > 0, let src, let dst {
        var off = 0
        // The kernel: ChaCha20 and Poly1305 stitched in one loop, the MAC one 512-byte group behind
        // (the AAD padding leaves no partial MAC block, as the stitched loop needs).
        let groups = count >> 9
        if groups >= 2 && chacha.isKernel {
            mac.stitched(&x) { xs, ps in chacha.xorPoly1305(xs, src, 512, dst, groups, ps, UnsafeRawPointer(dst), 1) }
            off = 512 * groups
            mac.update(UnsafeRawPointer(dst + off - 512), 512)
        }
        while off < count {
            let n = min(chachaPolyChunk, count - off)
            chacha20XOR(&x, src + off, dst + off, n, chacha)
            mac.update(UnsafeRawPointer(dst + off), n)
            off += n
        }
        let pad = (16 - count & 15) & 15
        if pad > 0 { withUnsafeBytes(of: SIMD16<UInt8>()) { mac.update($0.baseAddress!, pad) } }
    }
    poly1305Lengths(&mac, aad.count, count, tag)
    wipe(&x)
    wipe(&mac)
}

/// ChaCha20-Poly1305 open: verifies `tag` over the ciphertext in constant time and, only when it
/// matches, decrypts `count` bytes from `src` into `dst` (the same memory or disjoint). Returns whether
/// the tag matched; on `false` no plaintext was written (in place the buffer is unchanged; a separate
/// buffer may have been zeroed). On `backend`'s ChaCha20 and Poly1305 implementations.
func chachaPolyOpen(_ src: UnsafeRawPointer?, _ dst: UnsafeMutableRawPointer?, _ count: Int,
                    aad: UnsafeRawBufferPointer, tag: UnsafeRawPointer,
                    key: UnsafeRawPointer, nonce: UnsafeRawPointer, backend: Backend) -> Bool {
    let chacha = Registries.chacha20.implementation(for: backend)
    var (x, mac) = chachaPolyStart(key: key, nonce: nonce, backend: backend)
    poly1305Padded(&mac, aad.baseAddress, aad.count)
    // With a separate output buffer the kernel authenticates the ciphertext while it writes the bare
    // keystream (not plaintext) to `dst`; the plaintext is formed only after the tag has verified, and
    // on a mismatch the keystream is wiped. In place the keystream has nowhere to go: two passes.
    let groups = count >> 9
    if groups >= 2, let src, let dst, UnsafeRawPointer(dst) != src, chacha.isKernel {
        withScratch { zeros in  // 640 zero bytes: the kernel reads 512 of them per group (stride 0)
            mac.stitched(&x) { xs, ps in chacha.xorPoly1305(xs, UnsafeRawPointer(zeros), 0, dst, groups, ps, src, 0) }
        }
        let streamed = 512 * groups
        poly1305Padded(&mac, src + streamed, count - streamed)
        let ok = chachaPolyCheck(&mac, aad.count, count, tag)
        if ok {
            xorBytes(dst, UnsafeRawPointer(dst), src, streamed)
            if count > streamed { chacha20XOR(&x, src + streamed, dst + streamed, count - streamed, chacha) }
        } else {
            secureZero(UnsafeMutableRawBufferPointer(start: dst, count: streamed))
        }
        wipe(&x)
        return ok
    }
    poly1305Padded(&mac, src, count)
    let ok = chachaPolyCheck(&mac, aad.count, count, tag)
    if ok, count > 0, let src, let dst {
        chacha20XOR(&x, src, dst, count, chacha)
    }
    wipe(&x)
    return ok
}

/// Absorbs the lengths, compares the tag with `tag` in constant time and wipes the MAC state.
@inline(__always)
func chachaPolyCheck(_ mac: inout Poly1305State, _ aadCount: Int, _ count: Int, _ tag: UnsafeRawPointer) -> Bool {
    var expected = SIMD16<UInt8>()
    let ok = withUnsafeMutableBytes(of: &expected) { e in
        poly1305Lengths(&mac, aadCount, count, e.baseAddress!)
        return ConstantTime.equals(UnsafeRawBufferPointer(e), UnsafeRawBufferPointer(start: tag, count: 16))
    }
    wipe(&expected)
    wipe(&mac)
    return ok
}
