// scrypt (RFC 7914): PBKDF2-HMAC-SHA256 around p sequential ROMix lanes over Salsa20/8 BlockMix.
//
// Memory: one allocation holds V (N blocks of 128·r bytes), the PBKDF2 output B (p blocks) and the
// two work blocks X and Y. Lanes run one after another and reuse V. The region is zeroed before it
// is freed: every byte of it is derived from the password.
//
// Layout: inside ROMix every 64-byte Salsa20 sub-block is kept in the diagonal layout of
// `Salsa20State` (Cipher/Salsa20Core.swift). A lane is shuffled once on entry and un-shuffled once on
// exit; V, X and Y hold shuffled blocks only, so BlockMix loads and stores whole vector rows. The
// shuffle is a permutation of words inside each sub-block, so XOR and the BlockMix order are
// unaffected, and word 0 of a sub-block (Integerify) stays at row 0, lane 0.

internal import RampartKernelSupport

/// scrypt, the memory-hard password-based key derivation function of RFC 7914.
///
/// ```swift
/// let key = try Scrypt.deriveKey(password: pw, salt: salt, n: 1 << 15, r: 8, p: 1, outputByteCount: 32)
/// ```
///
/// Cost: about `128·r·N` bytes of memory and `2·N·2r` Salsa20/8 cores per lane, `p` lanes run one
/// after another. `N = 2^15, r = 8, p = 1` (32 MiB) is a common interactive setting;
/// `N = 2^20, r = 8, p = 1` (1 GiB) is the RFC's file-encryption example and exceeds the default
/// memory limit.
///
/// - Important: scrypt's ROMix reads `V[Integerify(X) mod N]`, a memory address that depends on the
///   password. This data-dependent access is inherent to scrypt (it is what makes it memory-hard) and
///   can leak through cache timing to an attacker sharing the machine. Prefer Argon2id-style
///   data-independent schemes where that matters; everything else here has no secret-dependent branch.
public enum Scrypt {
    /// Default cap on the memory ``deriveKey(password:salt:n:r:p:outputByteCount:memoryLimit:)``
    /// may allocate: 1 GiB (2^30 bytes). This admits every setting up to `N = 2^20, r = 8, p = 1`
    /// except that one (it needs 1 GiB plus 3 KiB); pass a larger `memoryLimit` to run it.
    public static let defaultMemoryLimit: Int = 1 << 30

    /// The number of bytes ``derive(password:salt:n:r:p:into:memoryLimit:)`` allocates for
    /// `(n, r, p)`: `128·r·(n + p + 2)`, that is V (`128·r·n`), the PBKDF2 output B (`128·r·p`) and
    /// two work blocks. Returns `nil` when a parameter is below 1 or the size overflows `Int`.
    public static func memoryRequired(n: Int, r: Int, p: Int) -> Int? {
        guard n >= 1, r >= 1, p >= 1 else { return nil }
        let (np, o1) = n.addingReportingOverflow(p)
        let (blocks, o2) = np.addingReportingOverflow(2)
        let (blockBytes, o3) = r.multipliedReportingOverflow(by: 128)
        let (total, o4) = blockBytes.multipliedReportingOverflow(by: blocks)
        guard !(o1 || o2 || o3 || o4) else { return nil }
        return total
    }

    /// Derives `outputByteCount` bytes from `password` and `salt`.
    ///
    /// - Parameters:
    ///   - n: the CPU/memory cost N, a power of two with `2 ≤ N < 2^(16·r)`.
    ///   - r: the block size parameter (blocks are `128·r` bytes), `r ≥ 1`.
    ///   - p: the parallelisation parameter (lanes, run sequentially here), `p ≥ 1`, `r·p < 2^30`.
    ///   - outputByteCount: 1 to ``maximumOutputByteCount`` bytes.
    ///   - memoryLimit: the most memory this call may allocate, compared with
    ///     ``memoryRequired(n:r:p:)`` plus `outputByteCount`.
    /// - Throws: ``RampartError/invalidParameter(_:)`` (`"N"`, `"r"`, `"p"` or `"r*p"`),
    ///   ``RampartError/invalidOutputLength``, ``RampartError/memoryLimitExceeded(required:limit:)``
    ///   (with `required == Int.max` when the size overflows). Nothing is allocated on error.
    public static func deriveKey<P: Collection<UInt8>, S: Collection<UInt8>>(
        password: P, salt: S, n: Int, r: Int, p: Int, outputByteCount: Int,
        memoryLimit: Int = defaultMemoryLimit
    ) throws(RampartError) -> SymmetricKey {
        let bytes = try validate(n: n, r: r, p: p, outputByteCount: outputByteCount, memoryLimit: memoryLimit,
                                 allocatesOutput: true)
        return withContiguousBytes(password) { pw in
            withContiguousBytes(salt) { s in
                SymmetricKey(count: outputByteCount) { out in
                    run(password: pw, salt: s, n: n, r: r, p: p, output: out, regionBytes: bytes,
                        backend: CPU.defaultBackend)
                }
            }
        }
    }

    /// Derives `output.count` bytes into `output`. On error `output` is not written.
    ///
    /// Same parameters, limits and errors as
    /// ``deriveKey(password:salt:n:r:p:outputByteCount:memoryLimit:)``.
    public static func derive(
        password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, n: Int, r: Int, p: Int,
        into output: UnsafeMutableRawBufferPointer, memoryLimit: Int = defaultMemoryLimit
    ) throws(RampartError) {
        let bytes = try validate(n: n, r: r, p: p, outputByteCount: output.count, memoryLimit: memoryLimit)
        run(password: password, salt: salt, n: n, r: r, p: p, output: output, regionBytes: bytes,
            backend: CPU.defaultBackend)
    }

    /// As ``derive(password:salt:n:r:p:into:memoryLimit:)`` with a pinned backend (tests).
    @_spi(Testing) public static func derive(
        password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, n: Int, r: Int, p: Int,
        into output: UnsafeMutableRawBufferPointer, memoryLimit: Int, backend: Backend
    ) throws(RampartError) {
        let bytes = try validate(n: n, r: r, p: p, outputByteCount: output.count, memoryLimit: memoryLimit)
        run(password: password, salt: salt, n: n, r: r, p: p, output: output, regionBytes: bytes,
            backend: backend)
    }

    /// Checks every parameter and returns the region size (``memoryRequired(n:r:p:)``).
    /// The longest output scrypt derives here: 16 MiB. RFC 7914 allows up to (2^32 − 1)·32 bytes,
    /// which would exhaust memory before it failed.
    public static let maximumOutputByteCount = 1 << 24

    static func validate(n: Int, r: Int, p: Int, outputByteCount: Int, memoryLimit: Int,
                         allocatesOutput: Bool = false) throws(RampartError) -> Int {
        guard n >= 2, n & (n &- 1) == 0 else { throw .invalidParameter("N") }
        guard r >= 1 else { throw .invalidParameter("r") }
        guard p >= 1 else { throw .invalidParameter("p") }
        // RFC 7914: N < 2^(128·r/8) = 2^(16·r). For r ≥ 4 every Int satisfies it; clamping the shift
        // keeps 16·r from overflowing (Swift's >> by ≥ the bit width gives 0 for n ≥ 0).
        guard n >> (16 * min(r, 4)) == 0 else { throw .invalidParameter("N") }
        let (rp, rpOverflow) = r.multipliedReportingOverflow(by: p)
        guard !rpOverflow, rp < 1 << 30 else { throw .invalidParameter("r*p") }
        guard outputByteCount >= 1, outputByteCount <= maximumOutputByteCount else {
            throw .invalidOutputLength
        }
        guard let bytes = memoryRequired(n: n, r: r, p: p) else {
            throw .memoryLimitExceeded(required: Int.max, limit: memoryLimit)
        }
        // The allocating form also holds the output: it counts against the limit.
        let (total, overflow) = bytes.addingReportingOverflow(allocatesOutput ? outputByteCount : 0)
        guard !overflow, total <= memoryLimit else {
            throw .memoryLimitExceeded(required: overflow ? Int.max : total, limit: memoryLimit)
        }
        return bytes
    }

    /// scrypt on validated parameters. `regionBytes` is `memoryRequired(n:r:p:)`.
    static func run(password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, n: Int, r: Int, p: Int,
                    output: UnsafeMutableRawBufferPointer, regionBytes: Int, backend: Backend) {
        let blockBytes = 128 * r
        let mapped = LargeRegion(byteCount: regionBytes)
        let region = mapped.base
        let v = region
        let b = region + blockBytes * n
        let x = b + blockBytes * p
        let y = x + blockBytes
        let bBuffer = UnsafeMutableRawBufferPointer(start: b, count: blockBytes * p)
        // B = PBKDF2-HMAC-SHA256(P, S, 1, p·128·r). Validation guarantees the length is in range.
        PBKDF2.run(prf: .hmacSHA256, password: password, salt: salt, iterations: 1, output: bBuffer, backend: backend)
        for lane in 0..<p {
            roMix(b + lane * blockBytes, v: v, x: x, y: y, n: n, r: r, backend: backend)
        }
        PBKDF2.run(prf: .hmacSHA256, password: password, salt: UnsafeRawBufferPointer(bBuffer), iterations: 1,
                   output: output, backend: backend)
        mapped.release()
    }

    /// ROMix of one lane in place: `block` (128·r bytes, standard layout) becomes ROMix(block).
    static func roMix(_ block: UnsafeMutableRawPointer, v: UnsafeMutableRawPointer, x: UnsafeMutableRawPointer,
                      y: UnsafeMutableRawPointer, n: Int, r: Int, backend: Backend) {
        shuffleIn(block, into: v, r: r)
        scryptROMixCore(v, x, y, n, r, .zero, backend: backend)
        shuffleOut(x, into: block, r: r)
    }

    /// Copies `2r` sub-blocks from the standard layout (little-endian) to the diagonal layout.
    static func shuffleIn(_ src: UnsafeRawPointer, into dst: UnsafeMutableRawPointer, r: Int) {
        for k in 0..<(2 * r) {
            Salsa20State(standard: src + 64 * k).store(diagonal: dst + 64 * k)
        }
    }

    /// Copies `2r` sub-blocks from the diagonal layout to the standard layout (little-endian).
    static func shuffleOut(_ src: UnsafeRawPointer, into dst: UnsafeMutableRawPointer, r: Int) {
        for k in 0..<(2 * r) {
            Salsa20State(diagonal: src + 64 * k).store(standard: dst + 64 * k)
        }
    }

    // MARK: Test hooks

    /// The Salsa20 core with `doubleRounds` double rounds on a 64-byte block (RFC 7914 §8 for 4).
    @_spi(Testing) public static func salsa20Core(_ input: [UInt8], doubleRounds: Int = 4) -> [UInt8] {
        precondition(input.count == 64)
        var out = [UInt8](repeating: 0, count: 64)
        input.withUnsafeBytes { i in
            out.withUnsafeMutableBytes { o in
                Rampart.salsa20Core(i.baseAddress!, o.baseAddress!, doubleRounds: doubleRounds)
            }
        }
        return out
    }

    /// scryptBlockMix (RFC 7914 §4, vectors in §9) on `128·r` bytes.
    @_spi(Testing) public static func blockMix(_ input: [UInt8], r: Int) -> [UInt8] {
        precondition(r >= 1 && input.count == 128 * r)
        let bb = 128 * r
        let region = UnsafeMutableRawPointer.allocate(byteCount: 2 * bb, alignment: 64)
        defer { region.deallocate() }
        var out = [UInt8](repeating: 0, count: bb)
        input.withUnsafeBytes { shuffleIn($0.baseAddress!, into: region, r: r) }
        _ = scryptBlockMix(UnsafeRawPointer(region), nil, region + bb, r)
        out.withUnsafeMutableBytes { shuffleOut(region + bb, into: $0.baseAddress!, r: r) }
        return out
    }

    /// scryptROMix (RFC 7914 §5, vectors in §10) on `128·r` bytes with cost `n` (a power of two).
    @_spi(Testing) public static func roMix(_ input: [UInt8], n: Int, r: Int, backend: Backend) -> [UInt8] {
        precondition(r >= 1 && n >= 2 && n & (n - 1) == 0 && input.count == 128 * r)
        let bb = 128 * r
        let region = UnsafeMutableRawPointer.allocate(byteCount: (n + 3) * bb, alignment: 64)
        defer { region.deallocate() }
        let block = region + (n + 2) * bb
        input.withUnsafeBytes { block.copyMemory(from: $0.baseAddress!, byteCount: bb) }
        roMix(block, v: region, x: region + n * bb, y: region + (n + 1) * bb, n: n, r: r, backend: backend)
        return Array(UnsafeRawBufferPointer(start: block, count: bb))
    }
}


// MARK: Portable ROMix

/// scryptBlockMix on diagonal-layout blocks: `output = BlockMix(input ^ mask)` where `mask` is a
/// second 128·r-byte block or `nil` (no XOR). Returns Integerify of the output: the low 64 bits
/// of its last sub-block (words 0 and 1 of the standard layout). `output` must not overlap the inputs.
@inline(__always)
func scryptBlockMix(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer,
                    _ r: Int, _ z: SIMD4<UInt32> = .zero) -> UInt64 {
    let last = 64 * (2 * r - 1)
    var x = Salsa20State(diagonal: input + last)
    if let m = mask { x ^= Salsa20State(diagonal: m + last) }
    var i = 0
    var inp = input
    var msk = mask
    var even = output
    var odd = output + 64 * r
    while i < r {
        // Y[2i] goes to the first half of the output, Y[2i+1] to the second half.
        var t = Salsa20State(diagonal: inp)
        if let m = msk { t ^= Salsa20State(diagonal: m) }
        x = (x ^ t).core(doubleRounds: 4, z: z)
        x.store(diagonal: even)
        var u = Salsa20State(diagonal: inp + 64)
        if let m = msk { u ^= Salsa20State(diagonal: m + 64) }
        x = (x ^ u).core(doubleRounds: 4, z: z)
        x.store(diagonal: odd)
        inp += 128
        msk = msk.map { $0 + 128 }
        even += 64
        odd += 64
        i &+= 1
    }
    // Word 0 is row a lane 0; word 1 is diagonal word 13 (row d, lane 1).
    return UInt64(x.a[0]) | UInt64(x.d[1]) << 32
}

/// ``scryptBlockMix(_:_:_:_:_:)`` out of line, with an opaque zero (see ``scryptROMixCore``): the
/// portable `scryptBlockMix` of the `salsa20` registry. ROMix runs the portable BlockMix inline instead.
@usableFromInline @inline(never)
func scryptBlockMixCore(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer,
                        _ r: Int, _ z: SIMD4<UInt32>) -> UInt64 {
    scryptBlockMix(input, mask, output, r, z)
}

/// ROMix on the diagonal-layout lane already in `v[0]`; the result is left in `x`.
/// `v` holds `n` blocks of 128·r bytes; `x` and `y` one block each.
///
/// `z` must be zero. It is a parameter of a function with public linkage (`@usableFromInline`) so
/// that the optimizer cannot propagate its value; see ``Salsa20State/doubleRounds(_:z:)``. Where
/// `backend`'s `salsa20` implementation has vector blocks of its own (the AVX-512VL build: one
/// `vprold` per rotation on the chain of Salsa20/8 cores) each BlockMix runs there, otherwise in the
/// portable code above, inline.
@usableFromInline @inline(never)
func scryptROMixCore(_ v: UnsafeMutableRawPointer, _ x: UnsafeMutableRawPointer,
                     _ y: UnsafeMutableRawPointer, _ n: Int, _ r: Int, _ z: SIMD4<UInt32>, backend: Backend) {
    let salsa = Registries.salsa20.implementation(for: backend)
    let vector = salsa.vectorBlocks
    @inline(__always) func blockMix(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?,
                                    _ output: UnsafeMutableRawPointer) -> UInt64 {
        vector ? salsa.scryptBlockMix(input, mask, output, r) : scryptBlockMix(input, mask, output, r, z)
    }
    let bb = 128 * r
    // V[i+1] = BlockMix(V[i]); X = BlockMix(V[N-1]).
    var cur = v
    var i = 1
    while i < n {
        _ = blockMix(UnsafeRawPointer(cur), nil, cur + bb)
        cur += bb
        i &+= 1
    }
    var j = blockMix(UnsafeRawPointer(cur), nil, x)
    // X = BlockMix(X ^ V[Integerify(X) mod N]), ping-ponging between x and y (n is even).
    let mask = UInt64(n - 1)
    var src = x
    var dst = y
    i = 0
    while i < n {
        // Declassified, not public: the index depends on the password by scrypt's design (RFC 7914
        // §5; see the type's doc comment). The constant-time check records the exception here and
        // keeps checking everything else.
        let vj = UnsafeRawPointer(v + Int(truncatingIfNeeded: declassified(j & mask)) &* bb)
        j = blockMix(UnsafeRawPointer(src), vj, dst)
        swap(&src, &dst)
        i &+= 1
    }
    // n is even, so the last output landed in x.
}
