// AES (FIPS-197): the expanded key and the one dispatch seam between the portable constant-time core
// (AESPortable.swift) and the hardware kernel `AESKernel` (AESKernels+x86_64.swift: AES-NI;
// AESKernels+arm64.swift: ARMv8; AESKernels+generic.swift: none), chosen by `Kernels.aes`.

/// The Advanced Encryption Standard (FIPS-197) and its modes of operation.
///
/// ```swift
/// let key = SymmetricKey(size: .bits256)
/// let box = try AES.GCM.seal(message, using: key)
/// let back = try AES.GCM.open(box, using: key)
///
/// let cipher = try AES.Cipher(key: key)
/// let ct = try AES.IGE.encrypt(padded, using: cipher, iv: iv32)
/// ```
///
/// Every operation runs on AES-NI (and PCLMULQDQ for GCM) when the processor has it, and otherwise
/// on a bitsliced constant-time implementation with no table lookups. `RAMPART_FORCE_PORTABLE=1`
/// selects the portable path everywhere.
public enum AES {
    /// The block size in bytes.
    public static let blockByteCount = 16
}

extension AES {
    /// An AES key expanded into its round keys (AES-128, AES-192 or AES-256, by key length).
    ///
    /// Expand once and reuse it for many messages. The round keys live in one heap allocation that is
    /// wiped when the last copy of the value is released. The hardware path stores AES-NI round keys
    /// (encryption and decryption); the portable path stores the bitsliced schedule.
    public struct Cipher: Sendable {
        @usableFromInline
        final class Schedule: @unchecked Sendable {
            // Immutable after init.
            let raw: UnsafeMutableRawPointer
            let rounds: Int
            let hardware: Bool
            let keyByteCount: Int

            /// Whether the GHASH power table for AES-GCM is in ``ghashTable`` (hardware kernels only).
            let ghashPrepared: Bool
            /// Whether GCM runs the wide (VAES) kernel with this key: hardware, `Kernels.ghashWide`
            /// active, and not turned off for the key (tests compare both tiers).
            let wideGCM: Bool
            /// Whether CTR and CBC decryption run the wide (VAES) kernel: hardware, `Kernels.aesWide`
            /// active, and not turned off for the key (the same switch as ``wideGCM``).
            let wideAES: Bool

            convenience init(key: UnsafeRawBufferPointer, backend: Backend, prepareGHASH: Bool = false,
                             allowWideGCM: Bool = true) throws(RampartError) {
                let n = key.count
                guard n == 16 || n == 24 || n == 32, let base = key.baseAddress else { throw .invalidKeyLength }
                self.init(checkedKey: base, count: n, backend: backend, prepareGHASH: prepareGHASH, allowWideGCM: allowWideGCM)
            }

            /// `n` is 16, 24 or 32 (the caller checked).
            init(checkedKey base: UnsafeRawPointer, count n: Int, backend: Backend, prepareGHASH: Bool = false,
                 allowWideGCM: Bool = true) {
                raw = UnsafeMutableRawPointer.allocate(byteCount: Schedule.size, alignment: 64)
                raw.initializeMemory(as: UInt8.self, repeating: 0, count: Schedule.size)
                keyByteCount = n
                if Kernels.aes.runs(on: backend) {
                    hardware = true
                    wideGCM = allowWideGCM && Kernels.ghashWide.isActive
                    wideAES = allowWideGCM && Kernels.aesWide.isActive
                    rounds = AESKernel.expandKey(base, n, raw, raw + Schedule.decryptionOffset)
                    // The GHASH key H = E_K(0^128) and its eight-block powers, once per key (what an
                    // OpenSSL EVP context keeps between calls).
                    if prepareGHASH && Kernels.ghash.isActive {
                        let r = raw, nr = rounds
                        var h = SIMD16<UInt8>()
                        withUnsafeMutableBytes(of: &h) { hb in
                            AESKernel.encryptECB(UnsafeRawPointer(r), nr, UnsafeRawPointer(hb.baseAddress!), hb.baseAddress!, 1)
                            GHASHKernel.precompute(UnsafeRawPointer(hb.baseAddress!), r + Schedule.ghashOffset, true)
                        }
                        if wideGCM { GHASHWideKernel.extend(r + Schedule.ghashOffset) }
                        wipe(&h)
                        ghashPrepared = true
                    } else {
                        ghashPrepared = false
                    }
                    return
                }
                hardware = false
                wideAES = false
                ghashPrepared = false
                wideGCM = false
                rounds = AESPortableCore.expandKey(base, n, raw.assumingMemoryBound(to: UInt64.self))
            }

            deinit {
                secureZero(UnsafeMutableRawBufferPointer(start: raw, count: Schedule.size))
                raw.deallocate()
            }

            static let size = 1024 + 512
            static let decryptionOffset = 256
            /// The GHASH power table of a cipher prepared for GCM (512 bytes: H_1 ... H_16 with the wide
            /// kernel, the first 256 otherwise).
            static let ghashOffset = 1024
            var ghashTable: UnsafeRawPointer { UnsafeRawPointer(raw + Schedule.ghashOffset) }

            var enc: UnsafeRawPointer { UnsafeRawPointer(raw) }
            var dec: UnsafeRawPointer { UnsafeRawPointer(raw + Schedule.decryptionOffset) }
            var skey: UnsafePointer<UInt64> { UnsafePointer(raw.assumingMemoryBound(to: UInt64.self)) }
        }

        @usableFromInline let schedule: Schedule

        /// Expands `key` (16, 24 or 32 bytes).
        /// - Throws: ``RampartError/invalidKeyLength`` for any other length.
        public init(key: SymmetricKey) throws(RampartError) {
            try self.init(key: key, backend: key.backend)
        }

        /// Expands the key bytes `key` (16, 24 or 32 bytes).
        /// - Throws: ``RampartError/invalidKeyLength`` for any other length.
        public init<K: Collection<UInt8>>(key: K) throws(RampartError) {
            try self.init(key: key, backend: CPU.defaultBackend)
        }

        /// A key pinned to one implementation (tests run every vector through both).
        @_spi(Testing)
        public init(key: SymmetricKey, backend: Backend) throws(RampartError) {
            schedule = try key.withUnsafeBytes { (k) throws(RampartError) -> Schedule in try Schedule(key: k, backend: backend) }
        }

        /// A cipher for ``AES/GCM``: with the hardware kernels it also holds the GHASH key H and its
        /// powers, computed once here (and wiped with the key), so that every `AES.GCM` call with it
        /// skips that setup: the analog of an OpenSSL EVP context initialised with the key. Any
        /// other use of the cipher is unchanged.
        ///
        /// - Throws: ``RampartError/invalidKeyLength`` unless the key has 16, 24 or 32 bytes.
        public init(gcmKey key: SymmetricKey) throws(RampartError) {
            try self.init(gcmKey: key, wideGCM: true)
        }

        /// As ``init(gcmKey:)``, with the wide kernels (GCM's, `Kernels.ghashWide`, and CTR's and CBC
        /// decryption's, `Kernels.aesWide`) allowed or not: tests run every message through both tiers.
        @_spi(Testing)
        public init(gcmKey key: SymmetricKey, wideGCM: Bool) throws(RampartError) {
            let backend = key.backend
            schedule = try key.withUnsafeBytes { (k) throws(RampartError) -> Schedule in
                try Schedule(key: k, backend: backend, prepareGHASH: true, allowWideGCM: wideGCM)
            }
        }

        /// A key pinned to one implementation, with the wide kernels (GCM, CTR, CBC decryption)
        /// allowed or not.
        @_spi(Testing)
        public init(key: SymmetricKey, backend: Backend, wideGCM: Bool) throws(RampartError) {
            schedule = try key.withUnsafeBytes { (k) throws(RampartError) -> Schedule in
                try Schedule(key: k, backend: backend, allowWideGCM: wideGCM)
            }
        }

        /// Key bytes pinned to one implementation.
        @_spi(Testing)
        public init<K: Collection<UInt8>>(key: K, backend: Backend) throws(RampartError) {
            var copy = Array(key)
            defer { copy.secureWipe() }
            let made = copy.withUnsafeBytes { k in Result { () throws(RampartError) in try Schedule(key: k, backend: backend) } }
            schedule = try made.get()
        }

        /// Expands the 32-byte key at `key256`. For protocol code in this package whose key size is
        /// fixed by construction: it cannot fail, so an encryption path built on it has no error to
        /// drop.
        package init(key256: UnsafeRawPointer, backend: Backend = CPU.defaultBackend) {
            schedule = Schedule(checkedKey: key256, count: 32, backend: backend)
        }

        /// The key length in bytes (16, 24 or 32).
        public var keyByteCount: Int { schedule.keyByteCount }

        /// The number of rounds (10, 12 or 14).
        public var rounds: Int { schedule.rounds }

        /// The implementation this key runs on: `.hardware` when the AES-NI (x86_64) or ARMv8 AES
        /// (arm64) kernels are in use.
        public var backend: Backend { schedule.hardware ? .hardware : .portable }

        // MARK: ECB (single blocks)

        /// Encrypts whole 16-byte blocks in place, each independently (ECB). ECB leaks equal blocks:
        /// use it only as a building block.
        ///
        /// - Warning: Raw block encryption: no IV, no integrity, equal plaintext blocks give equal
        ///   ciphertext blocks. Not an encryption mode; use ``AES/GCM`` for messages.
        /// - Throws: ``RampartError/invalidInputLength`` when the length is not a multiple of 16.
        public func encrypt(blocks: UnsafeMutableRawBufferPointer) throws(RampartError) {
            guard blocks.count % 16 == 0 else { throw .invalidInputLength }
            guard let p = blocks.baseAddress else { return }
            ecbEncrypt(p, p, blocks.count / 16)
        }

        /// Decrypts whole 16-byte blocks in place (ECB).
        ///
        /// - Warning: Raw block decryption with no integrity check; see ``encrypt(blocks:)``.
        /// - Throws: ``RampartError/invalidInputLength`` when the length is not a multiple of 16.
        public func decrypt(blocks: UnsafeMutableRawBufferPointer) throws(RampartError) {
            guard blocks.count % 16 == 0 else { throw .invalidInputLength }
            guard let p = blocks.baseAddress else { return }
            ecbDecrypt(p, p, blocks.count / 16)
        }

        /// Encrypts one 16-byte block.
        ///
        /// - Warning: Raw block encryption (no IV, no integrity); a building block, not a mode.
        /// - Throws: ``RampartError/invalidInputLength`` unless `block` has 16 bytes.
        public func encrypt<B: Collection<UInt8>>(block: B) throws(RampartError) -> [UInt8] {
            var out = Array(block)
            guard out.count == 16 else { throw .invalidInputLength }
            out.withUnsafeMutableBytes { ecbEncrypt($0.baseAddress!, $0.baseAddress!, 1) }
            return out
        }

        /// Decrypts one 16-byte block.
        ///
        /// - Warning: Raw block decryption (no integrity); a building block, not a mode.
        /// - Throws: ``RampartError/invalidInputLength`` unless `block` has 16 bytes.
        public func decrypt<B: Collection<UInt8>>(block: B) throws(RampartError) -> [UInt8] {
            var out = Array(block)
            guard out.count == 16 else { throw .invalidInputLength }
            out.withUnsafeMutableBytes { ecbDecrypt($0.baseAddress!, $0.baseAddress!, 1) }
            return out
        }
    }
}

// MARK: - Engine: whole-buffer operations behind the dispatch seam

extension AES.Cipher {
    /// ECB encryption of `n` blocks (input may equal output).
    func ecbEncrypt(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        if s.hardware { AESKernel.encryptECB(s.enc, s.rounds, input, output, n); return }
        var i = 0
        while i < n {
            let m = min(4, n - i)
            AESPortableCore.encrypt(s.skey, s.rounds, input + 16 * i, output + 16 * i, m)
            i += m
        }
    }

    func ecbDecrypt(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        if s.hardware { AESKernel.decryptECB(s.dec, s.rounds, input, output, n); return }
        var i = 0
        while i < n {
            let m = min(4, n - i)
            AESPortableCore.decrypt(s.skey, s.rounds, input + 16 * i, output + 16 * i, m)
            i += m
        }
    }

    /// CTR with a 128-bit big-endian counter at `counter` (16 bytes, advanced by `n`).
    func ctr128(_ counter: UnsafeMutableRawPointer, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        if s.hardware {
            let done = s.wideAES && n >= 16 ? AESWideKernel.ctr(s.enc, s.rounds, counter, input, output, n) : 0
            if done < n { AESKernel.ctr(s.enc, s.rounds, counter, input + 16 * done, output + 16 * done, n - done) }
            return
        }
        var hi = UnsafeRawPointer(counter).loadBE64(0), lo = UnsafeRawPointer(counter).loadBE64(8)
        withScratch { ks in
            var i = 0
            while i < n {
                let m = min(4, n - i)
                for j in 0..<m {
                    ks.storeBE64(hi, 16 * j); ks.storeBE64(lo, 16 * j + 8)
                    lo &+= 1
                    if lo == 0 { hi &+= 1 }  // the counter is public: branching on it leaks nothing
                }
                AESPortableCore.encrypt(s.skey, s.rounds, ks, ks, m)
                xorBytes(output + 16 * i, input + 16 * i, UnsafeRawPointer(ks), 16 * m)
                i += m
            }
        }
        counter.storeBE64(hi, 0); counter.storeBE64(lo, 8)
    }

    /// CBC encryption; `iv` (16 bytes) becomes the last ciphertext block.
    func cbcEncrypt(_ iv: UnsafeMutableRawPointer, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        if s.hardware { AESKernel.cbcEncrypt(s.enc, s.rounds, iv, input, output, n); return }
        var c0 = UnsafeRawPointer(iv).loadLE64(0), c1 = UnsafeRawPointer(iv).loadLE64(8)
        for i in 0..<n {
            (c0, c1) = AESPortableCore.encryptOne(s.skey, s.rounds, input.loadLE64(16 * i) ^ c0, input.loadLE64(16 * i + 8) ^ c1)
            output.storeLE64(c0, 16 * i); output.storeLE64(c1, 16 * i + 8)
        }
        iv.storeLE64(c0, 0); iv.storeLE64(c1, 8)
    }

    /// CBC decryption; `iv` becomes the last ciphertext block.
    func cbcDecrypt(_ iv: UnsafeMutableRawPointer, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        if s.hardware {
            let done = s.wideAES && n >= 16 ? AESWideKernel.cbcDecrypt(s.dec, s.rounds, iv, input, output, n) : 0
            if done < n { AESKernel.cbcDecrypt(s.dec, s.rounds, iv, input + 16 * done, output + 16 * done, n - done) }
            return
        }
        withScratch { buf in
            // buf[0..<16]: previous ciphertext block; buf[16..<80]: decrypted blocks.
            buf.copyMemory(from: iv, byteCount: 16)
            let d = UnsafeRawPointer(buf + 16)
            var i = 0
            while i < n {
                let m = min(4, n - i)
                AESPortableCore.decrypt(s.skey, s.rounds, input + 16 * i, buf + 16, m)
                // Keep the last ciphertext block of the group before an in-place write overwrites it.
                let last0 = input.loadLE64(16 * (i + m - 1)), last1 = input.loadLE64(16 * (i + m - 1) + 8)
                // Highest block first: block j needs ciphertext j - 1, still intact in the input.
                var j = m - 1
                while j > 0 {
                    let o = 16 * (i + j)
                    output.storeLE64(d.loadLE64(16 * j) ^ input.loadLE64(o - 16), o)
                    output.storeLE64(d.loadLE64(16 * j + 8) ^ input.loadLE64(o - 8), o + 8)
                    j -= 1
                }
                output.storeLE64(d.loadLE64(0) ^ UnsafeRawPointer(buf).loadLE64(0), 16 * i)
                output.storeLE64(d.loadLE64(8) ^ UnsafeRawPointer(buf).loadLE64(8), 16 * i + 8)
                buf.storeLE64(last0, 0); buf.storeLE64(last1, 8)
                i += m
            }
            iv.copyMemory(from: buf, byteCount: 16)
        }
    }

    /// IGE encryption; `iv` is 32 bytes (previous ciphertext block, previous plaintext block) and is
    /// advanced to the last pair.
    func igeEncrypt(_ iv: UnsafeMutableRawPointer, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        if s.hardware { AESKernel.igeEncrypt(s.enc, s.rounds, iv, input, output, n); return }
        let v = UnsafeRawPointer(iv)
        var c0 = v.loadLE64(0), c1 = v.loadLE64(8), p0 = v.loadLE64(16), p1 = v.loadLE64(24)
        for i in 0..<n {
            let x0 = input.loadLE64(16 * i), x1 = input.loadLE64(16 * i + 8)
            let (e0, e1) = AESPortableCore.encryptOne(s.skey, s.rounds, x0 ^ c0, x1 ^ c1)
            c0 = e0 ^ p0; c1 = e1 ^ p1
            p0 = x0; p1 = x1
            output.storeLE64(c0, 16 * i); output.storeLE64(c1, 16 * i + 8)
        }
        iv.storeLE64(c0, 0); iv.storeLE64(c1, 8); iv.storeLE64(p0, 16); iv.storeLE64(p1, 24)
    }

    /// IGE decryption; `iv` as for encryption.
    func igeDecrypt(_ iv: UnsafeMutableRawPointer, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        if s.hardware { AESKernel.igeDecrypt(s.dec, s.rounds, iv, input, output, n); return }
        let v = UnsafeRawPointer(iv)
        var c0 = v.loadLE64(0), c1 = v.loadLE64(8), p0 = v.loadLE64(16), p1 = v.loadLE64(24)
        for i in 0..<n {
            let x0 = input.loadLE64(16 * i), x1 = input.loadLE64(16 * i + 8)
            let (d0, d1) = AESPortableCore.decryptOne(s.skey, s.rounds, x0 ^ p0, x1 ^ p1)
            p0 = d0 ^ c0; p1 = d1 ^ c1
            c0 = x0; c1 = x1
            output.storeLE64(p0, 16 * i); output.storeLE64(p1, 16 * i + 8)
        }
        iv.storeLE64(c0, 0); iv.storeLE64(c1, 8); iv.storeLE64(p0, 16); iv.storeLE64(p1, 24)
    }
}

/// out[i] = a[i] ^ b[i] for `count` bytes (out may equal a).
@inline(__always)
func xorBytes(_ out: UnsafeMutableRawPointer, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) {
    var i = 0
    while i + 8 <= count {
        out.storeBytes(of: a.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ b.loadUnaligned(fromByteOffset: i, as: UInt64.self),
                       toByteOffset: i, as: UInt64.self)
        i += 8
    }
    while i < count {
        out.storeBytes(of: a.load(fromByteOffset: i, as: UInt8.self) ^ b.load(fromByteOffset: i, as: UInt8.self),
                       toByteOffset: i, as: UInt8.self)
        i += 1
    }
}

extension AES {
    /// Expands a 32-byte key for the AES kernel into a stack buffer (encryption and decryption round
    /// keys), runs `body` with them and the round count, and wipes the buffer. Only with
    /// `Kernels.aes` active (the caller checks).
    static func withStackSchedule256<R>(_ key: UnsafeRawPointer,
                                        _ body: (UnsafeRawPointer, UnsafeRawPointer, Int) -> R) -> R {
        withUnsafeTemporaryAllocation(byteCount: 512, alignment: 16) { buf in
            let base = buf.baseAddress!
            let rounds = AESKernel.expandKey(key, 32, base, base + 256)
            defer { secureZero(buf) }
            return body(UnsafeRawPointer(base), UnsafeRawPointer(base + 256), rounds)
        }
    }
}
