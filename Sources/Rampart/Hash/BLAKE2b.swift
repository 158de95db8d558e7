// BLAKE2b (RFC 7693): keyed, salted and personalized hashing with 1...64-byte digests.
//
// Portable compression over the state rows as `SIMD4<UInt64>` vectors, plus the x86_64 AVX2 kernel
// (RampartAccelAVX2) behind the usual `Backend` seam. Both run the whole multi-block loop in one call.

/// BLAKE2b (RFC 7693), the 64-bit BLAKE2 variant: keyed hashing (a MAC), salt and personalization,
/// digests of 1...64 bytes. Output matches libsodium's `crypto_generichash_blake2b*` and Python's
/// `hashlib.blake2b`.
///
/// ```swift
/// let d = try BLAKE2b.hash(data: bytes, outputByteCount: 32)
/// var h = try BLAKE2b(outputByteCount: 32, key: key)
/// h.update(data: part1); h.update(data: part2)
/// let mac = h.finalize()
/// ```
public struct BLAKE2b: Sendable {
    /// The largest digest size in bytes.
    public static let maximumOutputByteCount = 64
    /// The largest key size in bytes.
    public static let maximumKeyByteCount = 64
    /// The salt size in bytes.
    public static let saltByteCount = 16
    /// The personalization size in bytes.
    public static let personalByteCount = 16
    /// The block size in bytes.
    public static let blockByteCount = 128

    // Storage is plain SIMD values, not `InlineArray`: Swift 6.3.1 release builds corrupted hashers
    // holding an `InlineArray` when copied through generic code (see Block128 in MerkleDamgard.swift).

    /// Words 0...7: the chaining value h; words 8, 9: the 128-bit byte counter t; 10...15 unused.
    var state: SIMD16<UInt64>
    /// The last block seen so far (128 bytes): BLAKE2b compresses the final block differently, so a
    /// block is only compressed once more input follows it. Holds the padded key block of a keyed hash
    /// first.
    var pendingBlock: SIMD16<UInt64>
    /// Bytes in `pendingBlock` (0...128).
    var pendingCount: Int
    /// The backend the compression runs on.
    let backend: Backend
    /// The digest size in bytes (1...64).
    public let outputByteCount: Int

    /// A hasher producing `outputByteCount` bytes, keyed with `key` (empty: unkeyed).
    ///
    /// - Parameters:
    ///   - outputByteCount: 1...64.
    ///   - key: 0...64 bytes. A non-empty key makes the digest a MAC.
    ///   - salt: `nil` (all zero, as libsodium's `NULL`) or exactly 16 bytes.
    ///   - personal: `nil` (all zero) or exactly 16 bytes.
    /// - Throws: ``RampartError/invalidOutputLength``, ``RampartError/invalidKeyLength``,
    ///   ``RampartError/invalidParameter(_:)`` (`"salt"` or `"personal"`).
    public init(outputByteCount: Int = 64, key: [UInt8] = [], salt: [UInt8]? = nil, personal: [UInt8]? = nil)
        throws(RampartError)
    {
        try self.init(outputByteCount: outputByteCount, key: key, salt: salt, personal: personal,
                      backend: CPU.defaultBackend)
    }

    /// A hasher keyed with `key` (0...64 bytes); otherwise as the initializer taking the key as bytes.
    public init(outputByteCount: Int = 64, key: SymmetricKey, salt: [UInt8]? = nil, personal: [UInt8]? = nil)
        throws(RampartError)
    {
        try BLAKE2b.validate(outputByteCount: outputByteCount, keyByteCount: key.byteCount, salt: salt,
                             personal: personal)
        self = key.withUnsafeBytes { k in
            BLAKE2b(validatedOutputByteCount: outputByteCount, key: k, salt: salt, personal: personal,
                    backend: key.backend)
        }
    }

    /// A hasher pinned to one implementation (for tests that run every vector through both paths).
    @_spi(Testing)
    public init(outputByteCount: Int, key: [UInt8], salt: [UInt8]?, personal: [UInt8]?, backend: Backend)
        throws(RampartError)
    {
        try BLAKE2b.validate(outputByteCount: outputByteCount, keyByteCount: key.count, salt: salt,
                             personal: personal)
        self = key.withUnsafeBytes { k in
            BLAKE2b(validatedOutputByteCount: outputByteCount, key: k, salt: salt, personal: personal,
                    backend: backend)
        }
    }

    /// Checks every parameter against its range.
    static func validate(outputByteCount: Int, keyByteCount: Int, salt: [UInt8]?, personal: [UInt8]?)
        throws(RampartError)
    {
        guard outputByteCount >= 1, outputByteCount <= BLAKE2b.maximumOutputByteCount else {
            throw .invalidOutputLength
        }
        guard keyByteCount <= BLAKE2b.maximumKeyByteCount else { throw .invalidKeyLength }
        if let salt, salt.count != BLAKE2b.saltByteCount { throw .invalidParameter("salt") }
        if let personal, personal.count != BLAKE2b.personalByteCount { throw .invalidParameter("personal") }
    }

    /// Builds the state from parameters already known to be in range.
    init(validatedOutputByteCount outLen: Int, key: UnsafeRawBufferPointer, salt: [UInt8]?, personal: [UInt8]?,
         backend: Backend)
    {
        outputByteCount = outLen
        self.backend = backend
        // Parameter block (RFC 7693 section 2.5): digest length, key length, fanout 1, depth 1; leaf
        // length, node offset, node depth, inner length 0; then salt and personalization.
        let p0 = UInt64(outLen) | UInt64(key.count) << 8 | 0x0101_0000
        var s1 = (UInt64(0), UInt64(0)), s2 = (UInt64(0), UInt64(0))
        if let salt { s1 = salt.withUnsafeBytes { ($0.baseAddress!.loadLE64(0), $0.baseAddress!.loadLE64(8)) } }
        if let personal {
            s2 = personal.withUnsafeBytes { ($0.baseAddress!.loadLE64(0), $0.baseAddress!.loadLE64(8)) }
        }
        state = SIMD16(blake2bIV.0 ^ p0, blake2bIV.1, blake2bIV.2, blake2bIV.3,
                       blake2bIV.4 ^ s1.0, blake2bIV.5 ^ s1.1, blake2bIV.6 ^ s2.0, blake2bIV.7 ^ s2.1,
                       0, 0, 0, 0, 0, 0, 0, 0)
        pendingBlock = SIMD16(repeating: 0)
        pendingCount = 0
        if key.count > 0 {
            // The key, zero-padded to a full block, is the first block of the message.
            withUnsafeMutableBytes(of: &pendingBlock) { $0.baseAddress!.copyMemory(from: key.baseAddress!, byteCount: key.count) }
            pendingCount = BLAKE2b.blockByteCount
        }
    }

    /// Absorbs bytes.
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        guard let p = bufferPointer.baseAddress, bufferPointer.count > 0 else { return }
        absorb(p, bufferPointer.count)
    }

    /// Absorbs a collection of bytes (contiguous collections are read in place).
    @inlinable
    public mutating func update<D: Collection<UInt8>>(data: D) {
        withContiguousBytes(data) { self.update(bufferPointer: $0) }
    }

    /// Returns the digest of everything absorbed so far, leaving the hasher unchanged (more data may
    /// follow).
    public func finalize() -> BLAKE2b.Digest {
        // Copies of the state and of the last block (which may be the key block), wiped with one call.
        var t = (state, pendingBlock)
        let used = pendingCount
        let backend = self.backend
        var d = Digest(byteCount: outputByteCount)
        withUnsafeMutableBytes(of: &t.0) { sp in
            withUnsafeMutableBytes(of: &t.1) { bp in
                let base = bp.baseAddress!
                (base + used).initializeMemory(as: UInt8.self, repeating: 0, count: BLAKE2b.blockByteCount - used)
                blake2bCompress(sp.baseAddress!, UnsafeRawPointer(base), 1, used, backend)
            }
            d.raw.withMutableBytes { out in
                for i in 0..<8 { out.baseAddress!.storeLE64(sp.load(fromByteOffset: 8 * i, as: UInt64.self), 8 * i) }
            }
        }
        wipe(&t)
        return d
    }

    /// The digest of `data`.
    ///
    /// - Throws: as the initializer: ``RampartError/invalidOutputLength``,
    ///   ``RampartError/invalidKeyLength``, ``RampartError/invalidParameter(_:)``.
    @inlinable
    public static func hash<D: Collection<UInt8>>(
        data: D, outputByteCount: Int = 64, key: [UInt8] = [], salt: [UInt8]? = nil, personal: [UInt8]? = nil
    ) throws(RampartError) -> BLAKE2b.Digest {
        var h = try BLAKE2b(outputByteCount: outputByteCount, key: key, salt: salt, personal: personal)
        h.update(data: data)
        let d = h.finalize()
        if !key.isEmpty { wipe(&h) }
        return d
    }

    /// A BLAKE2b digest of 1...64 bytes. Equality is constant time (digests of different lengths are
    /// unequal); `description` is lowercase hexadecimal.
    public struct Digest: Hashable, Sequence, CustomStringConvertible, Sendable {
        var raw = DigestBytes()
        /// The digest size in bytes (1...64).
        public let byteCount: Int

        init(byteCount: Int) { self.byteCount = byteCount }

        /// The digest bytes.
        public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
        /// Lowercase hexadecimal.
        public var description: String { withUnsafeBytes { Hex.encode($0) } }
        /// Iterates the digest bytes.
        public func makeIterator() -> Array<UInt8>.Iterator { bytes.makeIterator() }

        /// Calls `body` with the digest bytes.
        public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
            try raw.withBytes(count: byteCount, body)
        }

        /// Compares the digest with the bytes of `other` in constant time (lengths may leak).
        public func constantTimeEquals<C: Collection<UInt8>>(_ other: C) -> Bool {
            withUnsafeBytes { mine in withContiguousBytes(other) { ConstantTime.equals(mine, $0) } }
        }

        public static func == (a: Digest, b: Digest) -> Bool {
            a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in ConstantTime.equals(pa, pb) } }
        }

        public func hash(into h: inout Hasher) { withUnsafeBytes { h.combine(bytes: $0) } }
    }
}

// MARK: - BLAKE2b-512 as a fixed-size HashFunction

/// A BLAKE2b-512 digest (64 bytes), compared in constant time.
public struct BLAKE2b512Digest: Digest {
    public static var byteCount: Int { 64 }
    var raw = DigestBytes()
    init() {}
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try raw.withBytes(count: 64, body)
    }
    public static func == (a: Self, b: Self) -> Bool { digestEquals(a, b) }
    public func hash(into h: inout Hasher) { withUnsafeBytes { h.combine(bytes: $0) } }
}

/// Unkeyed BLAKE2b with a 64-byte digest, in the ``HashFunction`` shape (so `HMAC<BLAKE2b512>` works;
/// for a BLAKE2 MAC prefer the keyed ``BLAKE2b``).
public struct BLAKE2b512: HashFunction {
    public typealias Digest = BLAKE2b512Digest
    public static var blockByteCount: Int { 128 }
    public static var byteCount: Int { 64 }

    var hasher: BLAKE2b

    /// A hasher that uses the best implementation for this CPU.
    public init() { self.init(backend: CPU.defaultBackend) }

    /// A hasher pinned to one implementation.
    @_spi(Testing) public init(backend: Backend) {
        hasher = BLAKE2b(validatedOutputByteCount: 64, key: UnsafeRawBufferPointer(start: nil, count: 0),
                         salt: nil, personal: nil, backend: backend)
    }

    public mutating func update(bufferPointer: UnsafeRawBufferPointer) { hasher.update(bufferPointer: bufferPointer) }

    public func finalize() -> BLAKE2b512Digest {
        var d = BLAKE2b512Digest()
        hasher.finalize().withUnsafeBytes { src in
            d.raw.withMutableBytes { $0.baseAddress!.copyMemory(from: src.baseAddress!, byteCount: 64) }
        }
        return d
    }
}

// MARK: - Compression

/// The BLAKE2b initialization vector (the SHA-512 one).
let blake2bIV: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (
    0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
    0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179
)

/// Compresses `count` consecutive 128-byte blocks into `state` (h[0..7], t[0], t[1]).
///
/// Each block adds 128 to the counter, except that when `lastLength >= 0` the final block of the run is
/// the message's last block: it adds `lastLength` (0...128) and sets the finalization flag.
@inline(__always)
func blake2bCompress(_ state: UnsafeMutableRawPointer, _ blocks: UnsafeRawPointer, _ count: Int,
                     _ lastLength: Int, _ backend: Backend) {
    Registries.blake2b.implementation(for: backend).blocks(state.assumingMemoryBound(to: UInt64.self), blocks, count, lastLength)
}

typealias B2Row = SIMD4<UInt64>

@inline(__always) private func rotr32(_ x: B2Row) -> B2Row {
    let w = unsafeBitCast(x, to: SIMD8<UInt32>.self)
    return unsafeBitCast(SIMD8(w[1], w[0], w[3], w[2], w[5], w[4], w[7], w[6]), to: B2Row.self)
}
// `&+` rather than `|`: the halves never overlap, and `|` is matched as a funnel shift and scalarised.
@inline(__always) private func rotr24(_ x: B2Row) -> B2Row { (x &>> 24) &+ (x &<< 40) }
@inline(__always) private func rotr16(_ x: B2Row) -> B2Row { (x &>> 16) &+ (x &<< 48) }
@inline(__always) private func rotr63(_ x: B2Row) -> B2Row { (x &>> 63) &+ (x &+ x) }

/// Portable compression: the four state rows as vectors, G applied to all four columns (then all
/// four diagonals) at once. Constant time. Rows a, c and d move for the diagonal step and b stays,
/// so no shuffle sits between the end of one G and the start of the next (about 860 MB/s on x86_64
/// with SSE2 only, against about 700 with the textbook rotation of b, c, d).
@inline(never)
func blake2bBlocksPortable(_ state: UnsafeMutableRawPointer, _ blocks: UnsafeRawPointer, _ count: Int,
                           _ lastLength: Int) {
    var h0 = B2Row(state.load(as: UInt64.self), state.load(fromByteOffset: 8, as: UInt64.self),
                   state.load(fromByteOffset: 16, as: UInt64.self), state.load(fromByteOffset: 24, as: UInt64.self))
    var h1 = B2Row(state.load(fromByteOffset: 32, as: UInt64.self), state.load(fromByteOffset: 40, as: UInt64.self),
                   state.load(fromByteOffset: 48, as: UInt64.self), state.load(fromByteOffset: 56, as: UInt64.self))
    var t0 = state.load(fromByteOffset: 64, as: UInt64.self)
    var t1 = state.load(fromByteOffset: 72, as: UInt64.self)
    let iv0 = B2Row(blake2bIV.0, blake2bIV.1, blake2bIV.2, blake2bIV.3)
    let iv1 = B2Row(blake2bIV.4, blake2bIV.5, blake2bIV.6, blake2bIV.7)
    var p = blocks
    for i in 0..<count {
        let isLast = lastLength >= 0 && i == count - 1
        let inc = UInt64(truncatingIfNeeded: isLast ? lastLength : 128)
        t0 &+= inc
        if t0 < inc { t1 &+= 1 }
        let f0: UInt64 = isLast ? ~0 : 0

        var a = h0, b = h1, c = iv0
        var d = iv1 ^ B2Row(t0, t1, f0, 0)

        @inline(__always) func g(_ x: B2Row, _ y: B2Row) {
            a = a &+ x &+ b       // a + x first: only the last add waits for b
            d = rotr32(d ^ a)
            c = c &+ d
            b = rotr24(b ^ c)
            a = a &+ y &+ b
            d = rotr16(d ^ a)
            c = c &+ d
            b = rotr63(b ^ c)
        }
        @inline(__always) func m(_ i: Int) -> UInt64 { p.loadLE64(8 * i) }
        @inline(__always) func round(_ s0: Int, _ s1: Int, _ s2: Int, _ s3: Int, _ s4: Int, _ s5: Int,
                                     _ s6: Int, _ s7: Int, _ s8: Int, _ s9: Int, _ s10: Int, _ s11: Int,
                                     _ s12: Int, _ s13: Int, _ s14: Int, _ s15: Int) {
            g(B2Row(m(s0), m(s2), m(s4), m(s6)), B2Row(m(s1), m(s3), m(s5), m(s7)))
            // Diagonalize around b, which the next G needs first: lane i keeps b[i] and gets a[i-1],
            // c[i+1], d[i+2], so it runs the diagonal G number 4 + (i+3)%4 (messages in that order).
            a = B2Row(a[3], a[0], a[1], a[2])
            c = B2Row(c[1], c[2], c[3], c[0])
            d = B2Row(d[2], d[3], d[0], d[1])
            g(B2Row(m(s14), m(s8), m(s10), m(s12)), B2Row(m(s15), m(s9), m(s11), m(s13)))
            a = B2Row(a[1], a[2], a[3], a[0])
            c = B2Row(c[3], c[0], c[1], c[2])
            d = B2Row(d[2], d[3], d[0], d[1])
        }
        round(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
        round(14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3)
        round(11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4)
        round(7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8)
        round(9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13)
        round(2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9)
        round(12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11)
        round(13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10)
        round(6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5)
        round(10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0)
        round(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
        round(14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3)

        h0 ^= a ^ c
        h1 ^= b ^ d
        p += 128
    }
    for i in 0..<4 {
        state.storeBytes(of: h0[i], toByteOffset: 8 * i, as: UInt64.self)
        state.storeBytes(of: h1[i], toByteOffset: 32 + 8 * i, as: UInt64.self)
    }
    state.storeBytes(of: t0, toByteOffset: 64, as: UInt64.self)
    state.storeBytes(of: t1, toByteOffset: 72, as: UInt64.self)
}

extension BLAKE2b: BlockAbsorbing {
    static var absorbBlockSize: Int { BLAKE2b.blockByteCount }
    /// The final block is compressed with the finalization flag: a full block waits for more input.
    static var holdsBackFullBlock: Bool { true }
    mutating func compressBlocks(_ blocks: UnsafeRawPointer, _ count: Int) {
        let backend = self.backend
        withUnsafeMutableBytes(of: &state) { s in blake2bCompress(s.baseAddress!, blocks, count, -1, backend) }
    }
}
