// AES-GCM (NIST SP 800-38D) in CryptoKit's shape: AES.GCM.seal / AES.GCM.open.

internal import RampartKernelSupport

extension AES {
    /// Galois/Counter Mode: authenticated encryption with associated data.
    ///
    /// ```swift
    /// let box = try AES.GCM.seal(message, using: key, authenticating: header)
    /// let message = try AES.GCM.open(box, using: key, authenticating: header)
    /// ```
    ///
    /// Keys of 16, 24 or 32 bytes; nonces of any non-empty length (12 bytes is the standard and the
    /// fastest; other lengths are hashed into the initial counter); 16-byte tags, checked in
    /// constant time. A failed `open` throws ``RampartError/authenticationFailure`` and releases
    /// no plaintext. Never seal two messages with the same key and nonce.
    public enum GCM {
        /// The tag length in bytes.
        public static let tagByteCount = 16

        /// The longest message GCM can encrypt under one nonce: 2^32 - 2 blocks.
        public static let maximumMessageByteCount = (1 << 36) - 32

        /// A GCM nonce (IV).
        public struct Nonce: Sendable, Equatable, Sequence {
            let bytes: [UInt8]

            /// A random 12-byte nonce from the system generator.
            public init() {
                var rng = SecureRandom()
                var b = [UInt8](repeating: 0, count: 12)
                b.withUnsafeMutableBytes { fillRandom($0, using: &rng) }
                bytes = b
            }

            /// A nonce with the given bytes (at least one; 12 is standard).
            /// - Throws: ``RampartError/invalidNonceLength`` for an empty nonce.
            public init<D: Collection<UInt8>>(data: D) throws(RampartError) {
                let b = Array(data)
                guard !b.isEmpty else { throw .invalidNonceLength }
                bytes = b
            }

            /// The nonce length in bytes.
            public var count: Int { bytes.count }

            public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }

            /// Calls `body` with the nonce bytes.
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
            /// - Throws: ``RampartError/authenticationFailure`` when the tag is not 16 bytes (a
            ///   truncated tag can never verify).
            public init<C: Collection<UInt8>, T: Collection<UInt8>>(nonce: Nonce, ciphertext: C, tag: T) throws(RampartError) {
                let t = Array(tag)
                guard t.count == GCM.tagByteCount else { throw .authenticationFailure }
                self.nonce = nonce
                self.ciphertext = Array(ciphertext)
                self.tag = t
            }

            /// A box from `nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes)`.
            /// - Throws: ``RampartError/invalidInputLength`` when shorter than 28 bytes.
            public init<D: Collection<UInt8>>(combined: D) throws(RampartError) {
                let all = Array(combined)
                guard all.count >= 12 + GCM.tagByteCount else { throw .invalidInputLength }
                nonce = try Nonce(data: all[0..<12])
                ciphertext = Array(all[12..<(all.count - GCM.tagByteCount)])
                tag = Array(all[(all.count - GCM.tagByteCount)...])
            }

            init(nonce: Nonce, ciphertext: [UInt8], tag: [UInt8]) {
                self.nonce = nonce
                self.ciphertext = ciphertext
                self.tag = tag
            }

            /// Boxes are equal when nonce, ciphertext and tag are. The tag is compared in constant
            /// time (a synthesized `==` would stop at the first differing byte, timing a forgery
            /// attempt against a stored box); so is the ciphertext. Lengths are public.
            public static func == (a: SealedBox, b: SealedBox) -> Bool {
                let sameTag = ConstantTime.equals(a.tag, b.tag)
                let sameCiphertext = ConstantTime.equals(a.ciphertext, b.ciphertext)
                return sameTag && sameCiphertext && a.nonce == b.nonce   // both comparisons already ran in full
            }

            /// `nonce ‖ ciphertext ‖ tag` when the nonce has the standard 12 bytes, else `nil`.
            public var combined: [UInt8]? {
                guard nonce.count == 12 else { return nil }
                return nonce.bytes + ciphertext + tag
            }
        }

        // MARK: Allocating API

        /// Encrypts and authenticates `message` under `key` with `nonce` (random when `nil`).
        /// - Throws: ``RampartError/invalidKeyLength``, ``RampartError/invalidInputLength`` (message
        ///   longer than ``maximumMessageByteCount``).
        public static func seal<M: Collection<UInt8>>(_ message: M, using key: SymmetricKey,
                                                      nonce: Nonce? = nil) throws(RampartError) -> SealedBox {
            try seal(message, using: key, nonce: nonce, authenticating: EmptyCollection<UInt8>())
        }

        /// Encrypts `message` and authenticates it together with `authenticatedData`.
        public static func seal<M: Collection<UInt8>, A: Collection<UInt8>>(
            _ message: M, using key: SymmetricKey, nonce: Nonce? = nil, authenticating authenticatedData: A
        ) throws(RampartError) -> SealedBox {
            try seal(message, using: try Cipher(key: key), nonce: nonce, authenticating: authenticatedData)
        }

        /// Encrypts with an already expanded key.
        public static func seal<M: Collection<UInt8>, A: Collection<UInt8>>(
            _ message: M, using cipher: Cipher, nonce: Nonce? = nil, authenticating authenticatedData: A
        ) throws(RampartError) -> SealedBox {
            let n = nonce ?? Nonce()
            var out = Array(message)
            var tag = [UInt8](repeating: 0, count: tagByteCount)
            let aad = Array(authenticatedData)
            let made = out.withUnsafeMutableBytes { b in
                tag.withUnsafeMutableBytes { t in
                    n.bytes.withUnsafeBytes { nb in
                        aad.withUnsafeBytes { a in
                            Result { () throws(RampartError) in
                                try seal(b, tag: t, using: cipher, nonce: nb, authenticating: a)
                            }
                        }
                    }
                }
            }
            try made.get()
            return SealedBox(nonce: n, ciphertext: out, tag: tag)
        }

        /// Checks and decrypts `sealedBox`.
        /// - Throws: ``RampartError/authenticationFailure`` (nothing is returned), or a key error.
        public static func open(_ sealedBox: SealedBox, using key: SymmetricKey) throws(RampartError) -> [UInt8] {
            try open(sealedBox, using: key, authenticating: EmptyCollection<UInt8>())
        }

        /// Checks `sealedBox` and `authenticatedData` and decrypts.
        public static func open<A: Collection<UInt8>>(_ sealedBox: SealedBox, using key: SymmetricKey,
                                                      authenticating authenticatedData: A) throws(RampartError) -> [UInt8] {
            try open(sealedBox, using: try Cipher(key: key), authenticating: authenticatedData)
        }

        /// Opens with an already expanded key.
        public static func open<A: Collection<UInt8>>(_ sealedBox: SealedBox, using cipher: Cipher,
                                                      authenticating authenticatedData: A) throws(RampartError) -> [UInt8] {
            var out = sealedBox.ciphertext
            let aad = Array(authenticatedData)
            let made = out.withUnsafeMutableBytes { b in
                sealedBox.tag.withUnsafeBytes { t in
                    sealedBox.nonce.bytes.withUnsafeBytes { nb in
                        aad.withUnsafeBytes { a in
                            Result { () throws(RampartError) in
                                try open(b, tag: t, using: cipher, nonce: nb, authenticating: a)
                            }
                        }
                    }
                }
            }
            try made.get()  // on failure `open` has already wiped `out`
            return out
        }

        // MARK: Raw in-place API

        /// Encrypts `buffer` in place and writes the 16-byte tag to `tag`.
        /// - Throws: ``RampartError/invalidNonceLength`` (empty nonce), ``RampartError/invalidOutputLength``
        ///   (tag buffer not 16 bytes), ``RampartError/invalidInputLength`` (message too long).
        public static func seal(_ buffer: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer,
                                using cipher: Cipher, nonce: UnsafeRawBufferPointer,
                                authenticating authenticatedData: UnsafeRawBufferPointer) throws(RampartError) {
            try seal(UnsafeRawBufferPointer(buffer), into: buffer, tag: tag, using: cipher, nonce: nonce,
                     authenticating: authenticatedData)
        }

        /// Encrypts `message` into `output` (same length; the same memory or not overlapping) and
        /// writes the 16-byte tag to `tag`.
        /// - Throws: as the in-place form, and ``RampartError/invalidOutputLength`` when the lengths differ.
        public static func seal(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                                tag: UnsafeMutableRawBufferPointer, using cipher: Cipher, nonce: UnsafeRawBufferPointer,
                                authenticating authenticatedData: UnsafeRawBufferPointer) throws(RampartError) {
            guard nonce.count > 0 else { throw .invalidNonceLength }
            guard tag.count == tagByteCount, let t = tag.baseAddress, output.count == message.count else {
                throw .invalidOutputLength
            }
            guard message.count <= maximumMessageByteCount else { throw .invalidInputLength }
            GCMEngine.run(cipher, nonce, authenticatedData, message, output, sealing: true, tagOut: t, tagIn: nil)
        }

        /// Checks the tag and decrypts `buffer` in place.
        ///
        /// The tag is compared in constant time. On failure the buffer is wiped (it would hold
        /// unauthenticated plaintext) and ``RampartError/authenticationFailure`` is thrown.
        public static func open(_ buffer: UnsafeMutableRawBufferPointer, tag: UnsafeRawBufferPointer,
                                using cipher: Cipher, nonce: UnsafeRawBufferPointer,
                                authenticating authenticatedData: UnsafeRawBufferPointer) throws(RampartError) {
            try open(UnsafeRawBufferPointer(buffer), into: buffer, tag: tag, using: cipher, nonce: nonce,
                     authenticating: authenticatedData)
        }

        /// Checks the tag and decrypts `ciphertext` into `output` (same length; the same memory or
        /// not overlapping). On failure `output` is wiped and ``RampartError/authenticationFailure``
        /// is thrown.
        public static func open(_ ciphertext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                                tag: UnsafeRawBufferPointer, using cipher: Cipher, nonce: UnsafeRawBufferPointer,
                                authenticating authenticatedData: UnsafeRawBufferPointer) throws(RampartError) {
            guard output.count == ciphertext.count else { throw .invalidOutputLength }
            guard nonce.count > 0 else {
                secureZero(output)
                throw .invalidNonceLength
            }
            guard tag.count == tagByteCount, let t = tag.baseAddress, ciphertext.count <= maximumMessageByteCount else {
                secureZero(output)
                throw .authenticationFailure
            }
            let ok = GCMEngine.run(cipher, nonce, authenticatedData, ciphertext, output, sealing: false, tagOut: nil, tagIn: t)
            guard ok else {
                secureZero(output)
                throw .authenticationFailure
            }
        }
    }
}

/// The GCM computation shared by seal and open, over any AES and GHASH implementations.
enum GCMEngine {
    // Scratch layout (offsets in the 640-byte stack scratch).
    static let tableOffset = 0      // 512 bytes: the GHASH implementation's table
    static let stateOffset = 512    // GHASH state Y
    static let counterOffset = 528  // the running counter block
    static let j0Offset = 544       // J0 (pre-counter block)
    static let blockOffset = 560    // one-block temporary
    static let keyOffset = 576      // H, then E_K(J0)

    /// Runs GCM over `input` into `output` with `cipher`'s implementations. Sealing writes the tag to
    /// `tagOut`; opening compares with `tagIn` and returns whether it matched (the caller wipes the
    /// output when it did not).
    @discardableResult
    static func run(_ cipher: AES.Cipher, _ nonce: UnsafeRawBufferPointer, _ aad: UnsafeRawBufferPointer,
                    _ input: UnsafeRawBufferPointer, _ output: UnsafeMutableRawBufferPointer, sealing: Bool,
                    tagOut: UnsafeMutableRawPointer?, tagIn: UnsafeRawPointer?) -> Bool {
        let s = cipher.schedule
        return run(aes: s.aes, schedule: s.enc, rounds: s.rounds, ghash: s.ghash, stitched: s.gcmStitched,
                   table: s.ghashPrepared ? s.ghashTable : nil, nonce, aad, input, output, sealing: sealing,
                   tagOut: tagOut, tagIn: tagIn)
    }

    /// GCM with the AES implementation `aes` (its schedule and rounds) and the GHASH implementation
    /// `ghash`: whole blocks through `ghash`'s GCM loop when `stitched` (it reads `aes`'s layout),
    /// otherwise CTR on `aes` then GHASH, four blocks at a time. `table` is a table made by
    /// `ghash.precompute` for any length (a `gcmKey` cipher's), or nil: H and the table are computed
    /// here, as far as this call's lengths need.
    static func run(aes: any AESImplementation.Type, schedule: UnsafeRawPointer, rounds: Int,
                    ghash: any GHASHImplementation.Type, stitched: Bool, table preparedTable: UnsafeRawPointer?,
                    _ nonce: UnsafeRawBufferPointer, _ aad: UnsafeRawBufferPointer,
                    _ input: UnsafeRawBufferPointer, _ output: UnsafeMutableRawBufferPointer, sealing: Bool,
                    tagOut: UnsafeMutableRawPointer?, tagIn: UnsafeRawPointer?) -> Bool {
        withScratch { s in
            let state = s + stateOffset, counter = s + counterOffset, j0 = s + j0Offset
            let block = s + blockOffset, hkey = s + keyOffset
            let whole = input.count / 16
            // A cipher made with `init(gcmKey:)` holds the table already; otherwise H = E_K(0^128) and
            // the table are computed here, the powers as far as this call's longest runs use them
            // (eight-block powers when some absorb or GCM call takes eight blocks, sixteen when the
            // GCM loop takes sixteen).
            let table = preparedTable ?? UnsafeRawPointer(s + tableOffset)
            if preparedTable == nil {
                aes.encryptECB(schedule, rounds, UnsafeRawPointer(hkey), hkey, 1)
                let absorbBlocks = max(aad.count / 16, nonce.count == 12 ? 0 : nonce.count / 16, stitched ? 1 : min(whole, 4))
                ghash.precompute(UnsafeRawPointer(hkey), s + tableOffset, absorbBlocks: absorbBlocks, gcmBlocks: stitched ? whole : 0)
            }

            /// Absorbs `count` bytes, zero-padding the last partial block.
            func absorb(_ p: UnsafeRawPointer?, _ count: Int) {
                guard let p, count > 0 else { return }
                let whole = count / 16
                absorbBlocks(p, whole)
                let rest = count - 16 * whole
                if rest > 0 {
                    block.initializeMemory(as: UInt8.self, repeating: 0, count: 16)
                    block.copyMemory(from: p + 16 * whole, byteCount: rest)
                    absorbBlocks(UnsafeRawPointer(block), 1)
                }
            }
            func absorbBlocks(_ p: UnsafeRawPointer, _ n: Int) {
                if n > 0 { ghash.absorb(table, state, p, n) }
            }
            func absorbLengths(_ a: Int, _ b: Int) {
                block.storeBE64(UInt64(a) &* 8, 0)
                block.storeBE64(UInt64(b) &* 8, 8)
                absorbBlocks(UnsafeRawPointer(block), 1)
            }

            // J0: nonce ‖ 0^31 ‖ 1 for 96-bit nonces, else GHASH(nonce ‖ pad ‖ 0^64 ‖ [len]_64).
            if nonce.count == 12 {
                j0.copyMemory(from: nonce.baseAddress!, byteCount: 12)
                j0.storeBE32(1, 12)
            } else {
                absorb(nonce.baseAddress, nonce.count)
                absorbLengths(0, nonce.count)
                j0.copyMemory(from: UnsafeRawPointer(state), byteCount: 16)
                state.initializeMemory(as: UInt8.self, repeating: 0, count: 16)
            }
            // E_K(J0) for the tag, stored where H was (the table is already made).
            aes.encryptECB(schedule, rounds, UnsafeRawPointer(j0), hkey, 1)
            counter.copyMemory(from: UnsafeRawPointer(j0), byteCount: 16)
            counter.storeBE32(UnsafeRawPointer(counter).loadBE32(12) &+ 1, 12)

            absorb(aad.baseAddress, aad.count)

            let n = input.count
            if let src = input.baseAddress, let dst = output.baseAddress, n > 0 {
                if whole > 0 {
                    if stitched {
                        if sealing {
                            ghash.gcmEncrypt(schedule, rounds, table, counter, state, src, dst, whole)
                        } else {
                            ghash.gcmDecrypt(schedule, rounds, table, counter, state, src, dst, whole)
                        }
                    } else {
                        ctrAndHash(aes, schedule, rounds, counter, src, dst, whole, sealing, absorbBlocks)
                    }
                }
                let rest = n - 16 * whole
                if rest > 0 {
                    let tailIn = src + 16 * whole, tailOut = dst + 16 * whole
                    if !sealing { absorb(tailIn, rest) }
                    aes.encryptECB(schedule, rounds, UnsafeRawPointer(counter), block, 1)
                    xorBytes(tailOut, tailIn, UnsafeRawPointer(block), rest)
                    if sealing { absorb(UnsafeRawPointer(tailOut), rest) }
                }
            }
            absorbLengths(aad.count, n)
            // Tag = E_K(J0) ⊕ GHASH.
            xorBytes(state, UnsafeRawPointer(state), UnsafeRawPointer(hkey), 16)
            if let tagOut {
                tagOut.copyMemory(from: UnsafeRawPointer(state), byteCount: 16)
                return true
            }
            guard let tagIn else { return false }
            return ConstantTime.equals(UnsafeRawBufferPointer(start: tagIn, count: 16),
                                       UnsafeRawBufferPointer(start: UnsafeRawPointer(state), count: 16))
        }
    }

    /// CTR with GCM's 32-bit counter on `aes` plus GHASH of the ciphertext through `absorbBlocks`, four
    /// blocks at a time: the two passes one after the other (the portable GCM, and any AES and GHASH
    /// pair whose GCM loop does not read the AES implementation's schedule).
    static func ctrAndHash(_ aes: any AESImplementation.Type, _ schedule: UnsafeRawPointer, _ rounds: Int,
                           _ counter: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                           _ whole: Int, _ sealing: Bool, _ absorbBlocks: (UnsafeRawPointer, Int) -> Void) {
        var ks = (SIMD32<UInt8>(), SIMD32<UInt8>())
        withUnsafeMutableBytes(of: &ks) { k in
            let kp = k.baseAddress!
            let prefix0 = UnsafeRawPointer(counter).loadLE64(0), prefix1 = UnsafeRawPointer(counter).loadLE32(8)
            var ctr = UnsafeRawPointer(counter).loadBE32(12)
            var i = 0
            while i < whole {
                let m = min(4, whole - i)
                for j in 0..<m {
                    kp.storeLE64(prefix0, 16 * j); kp.storeLE32(prefix1, 16 * j + 8); kp.storeBE32(ctr, 16 * j + 12)
                    ctr &+= 1
                }
                aes.encryptECB(schedule, rounds, UnsafeRawPointer(kp), kp, m)
                if !sealing { absorbBlocks(src + 16 * i, m) }
                xorBytes(dst + 16 * i, src + 16 * i, UnsafeRawPointer(kp), 16 * m)
                if sealing { absorbBlocks(UnsafeRawPointer(dst + 16 * i), m) }
                i += m
            }
            counter.storeBE32(ctr, 12)
            secureZero(k)
        }
    }
}
