// AES (FIPS-197): the expanded key and the engine of the whole-buffer operations. A key is expanded by
// an implementation of the `aes` registry (Platform/Registrations.swift: AES-NI with or without VAES,
// ARMv8, the portable bitsliced code of AESPortable.swift), which runs every later call on it: the
// schedule's layout is that implementation's. The schedule also records the `ghash` and `ige-sha256`
// implementations for the key and whether their stitched loops read this layout, resolved once here.

internal import RampartKernelSupport

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
    /// wiped when the last copy of the value is released. The implementation that expanded the key
    /// (AES-NI, ARMv8 or the portable bitsliced code) runs every operation on it.
    public struct Cipher: Sendable {
        @usableFromInline
        final class Schedule: @unchecked Sendable {
            // Immutable after init.
            let raw: UnsafeMutableRawPointer
            let rounds: Int
            let keyByteCount: Int
            /// The implementation that expanded the key, in its own layout: every call runs it.
            let aes: any AESImplementation.Type
            /// GHASH for GCM under this key.
            let ghash: any GHASHImplementation.Type
            /// Whether ``ghash``'s GCM loop reads ``aes``'s schedule layout (else GCM runs CTR on ``aes``
            /// and GHASH one after the other).
            let gcmStitched: Bool
            /// The stitched IGE decryption with SHA-256 (MTProto's receiver) when it reads ``aes``'s
            /// layout, else nil (decryption, then SHA-256).
            let igeSHA256: (any IGESHA256Implementation.Type)?
            /// Whether the GHASH table for AES-GCM is in ``ghashTable`` (`init(gcmKey:)`).
            let ghashPrepared: Bool

            convenience init(key: UnsafeRawBufferPointer, backend: Backend, ghashBackend: Backend? = nil,
                             igeSHA256Backend: Backend? = nil, prepareGHASH: Bool = false) throws(RampartError) {
                let n = key.count
                guard n == 16 || n == 24 || n == 32, let base = key.baseAddress else { throw .invalidKeyLength }
                self.init(checkedKey: base, count: n, backend: backend, ghashBackend: ghashBackend,
                          igeSHA256Backend: igeSHA256Backend, prepareGHASH: prepareGHASH)
            }

            /// `n` is 16, 24 or 32 (the caller checked). `backend` picks the implementations of every
            /// primitive, `ghashBackend` (when given) GHASH's and `igeSHA256Backend` the stitched IGE
            /// decryption's.
            init(checkedKey base: UnsafeRawPointer, count n: Int, backend: Backend, ghashBackend: Backend? = nil,
                 igeSHA256Backend: Backend? = nil, prepareGHASH: Bool = false) {
                raw = UnsafeMutableRawPointer.allocate(byteCount: Schedule.size, alignment: 64)
                raw.initializeMemory(as: UInt8.self, repeating: 0, count: Schedule.size)
                keyByteCount = n
                let aes = Registries.aes.implementation(for: backend)
                self.aes = aes
                rounds = aes.expandKey(base, n, raw)
                let ghash = Registries.ghash.implementation(for: ghashBackend ?? backend)
                self.ghash = ghash
                gcmStitched = ghash.aesLayout == aes.layout
                let ige = Registries.igeSHA256.implementation(for: igeSHA256Backend ?? backend)
                igeSHA256 = ige.aesLayout == aes.layout ? ige : nil
                ghashPrepared = prepareGHASH
                // The GHASH key H = E_K(0^128) and the table for any length, once per key (what an
                // OpenSSL EVP context keeps between calls).
                if prepareGHASH {
                    let r = raw, nr = rounds
                    var h = SIMD16<UInt8>()
                    withUnsafeMutableBytes(of: &h) { hb in
                        aes.encryptECB(UnsafeRawPointer(r), nr, UnsafeRawPointer(hb.baseAddress!), hb.baseAddress!, 1)
                        ghash.precompute(UnsafeRawPointer(hb.baseAddress!), r + Schedule.ghashOffset, absorbBlocks: .max, gcmBlocks: .max)
                    }
                    wipe(&h)
                }
            }

            deinit {
                secureZero(UnsafeMutableRawBufferPointer(start: raw, count: Schedule.size))
                raw.deallocate()
            }

            /// 1024 bytes for the schedule of any layout, then 512 for the GHASH table.
            static let size = 1024 + 512
            /// The GHASH table of a cipher prepared for GCM (512 bytes).
            static let ghashOffset = 1024
            var ghashTable: UnsafeRawPointer { UnsafeRawPointer(raw + Schedule.ghashOffset) }

            var enc: UnsafeRawPointer { UnsafeRawPointer(raw) }
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
            let backend = key.backend
            schedule = try key.withUnsafeBytes { (k) throws(RampartError) -> Schedule in
                try Schedule(key: k, backend: backend, prepareGHASH: true)
            }
        }

        /// A key whose AES implementation is `aes`'s, whose GHASH implementation is `ghash`'s and whose
        /// stitched IGE decryption is `igeSHA256`'s (each a backend, pinned or not; the last defaults to
        /// `aes`), prepared for GCM (as ``init(gcmKey:)``) or not: tests run GCM through every pair and
        /// each stitched kernel with the AES implementation of its layout.
        @_spi(Testing)
        public init(key: SymmetricKey, aes: Backend, ghash: Backend, igeSHA256: Backend? = nil, gcm prepared: Bool) throws(RampartError) {
            schedule = try key.withUnsafeBytes { (k) throws(RampartError) -> Schedule in
                try Schedule(key: k, backend: aes, ghashBackend: ghash, igeSHA256Backend: igeSHA256, prepareGHASH: prepared)
            }
        }

        /// The names of the implementations this key runs: AES, GHASH (for GCM) and, when it reads the
        /// key's schedule, the stitched IGE decryption with SHA-256 (else nil).
        @_spi(Testing)
        public var implementationNames: (aes: String, ghash: String, igeSHA256: String?) {
            (schedule.aes.name, schedule.ghash.name, schedule.igeSHA256?.name)
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

        /// The implementation this key runs on: `.hardware` when an AES kernel (AES-NI on x86_64, the
        /// ARMv8 instructions on arm64) expanded it, `.portable` for the portable code.
        public var backend: Backend { schedule.aes.layout == .bitsliced ? .portable : .hardware }

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

// MARK: - Engine: whole-buffer operations on the key's implementation

extension AES.Cipher {
    /// ECB encryption of `n` blocks (input may equal output).
    @inline(__always)
    func ecbEncrypt(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        s.aes.encryptECB(s.enc, s.rounds, input, output, n)
    }

    @inline(__always)
    func ecbDecrypt(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        s.aes.decryptECB(s.enc, s.rounds, input, output, n)
    }

    /// CTR with a 128-bit big-endian counter at `counter` (16 bytes, advanced by `n`).
    @inline(__always)
    func ctr128(_ counter: UnsafeMutableRawPointer, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        s.aes.ctr(s.enc, s.rounds, counter, input, output, n)
    }

    /// CBC encryption; `iv` (16 bytes) becomes the last ciphertext block.
    @inline(__always)
    func cbcEncrypt(_ iv: UnsafeMutableRawPointer, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        s.aes.cbcEncrypt(s.enc, s.rounds, iv, input, output, n)
    }

    /// CBC decryption; `iv` becomes the last ciphertext block.
    @inline(__always)
    func cbcDecrypt(_ iv: UnsafeMutableRawPointer, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        s.aes.cbcDecrypt(s.enc, s.rounds, iv, input, output, n)
    }

    /// IGE encryption; `iv` is 32 bytes (previous ciphertext block, previous plaintext block) and is
    /// advanced to the last pair.
    @inline(__always)
    func igeEncrypt(_ iv: UnsafeMutableRawPointer, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        s.aes.igeEncrypt(s.enc, s.rounds, iv, input, output, n)
    }

    /// IGE decryption; `iv` as for encryption.
    @inline(__always)
    func igeDecrypt(_ iv: UnsafeMutableRawPointer, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ n: Int) {
        let s = schedule
        s.aes.igeDecrypt(s.enc, s.rounds, iv, input, output, n)
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
    /// Expands a 32-byte key with the AES implementation `CPU.defaultBackend` selects into a stack
    /// buffer, runs `body` with the implementation, the schedule and the round count, and wipes the
    /// buffer: no allocation per message.
    static func withStackSchedule256<R>(_ key: UnsafeRawPointer,
                                        _ body: (any AESImplementation.Type, UnsafeRawPointer, Int) -> R) -> R {
        let aes = Registries.aes.implementation(for: CPU.defaultBackend)
        return withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 64) { buf in
            let base = buf.baseAddress!
            let rounds = aes.expandKey(key, 32, base)
            defer { secureZero(UnsafeMutableRawBufferPointer(start: base, count: aes.scheduleBytes)) }
            return body(aes, UnsafeRawPointer(base), rounds)
        }
    }
}
