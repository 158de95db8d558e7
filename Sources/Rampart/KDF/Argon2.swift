// Argon2id (RFC 9106, version 0x13) on Rampart's BLAKE2b.
//
//   H0 = BLAKE2b-512(LE32(p) ‖ LE32(T) ‖ LE32(m) ‖ LE32(t) ‖ LE32(0x13) ‖ LE32(2) ‖ LE32(|P|) ‖ P
//                    ‖ LE32(|S|) ‖ S ‖ LE32(|K|) ‖ K ‖ LE32(|X|) ‖ X)                      (§3.2)
//   B[i][0] = H'(H0 ‖ LE32(0) ‖ LE32(i)), B[i][1] = H'(H0 ‖ LE32(1) ‖ LE32(i))        1024 bytes each
//   then t passes over p lanes of m' / p blocks, four slices each, filled segment by segment with
//   the compression G (RampartKernelSupport/Argon2Fill.swift); tag = H'^T(XOR of the last column).
//
// H' (§3.3) is BLAKE2b with a 32-bit length prefix, chained in 64-byte steps for outputs above 64
// bytes. Lanes are filled one after another (no threads): within a slice they are independent, so
// the order does not change the result.
//
// Memory: one region of m' blocks (Platform/LargeRegion.swift: huge pages from 4 MiB on) plus 4 KiB
// of work blocks, wiped before it is returned. H0 and every intermediate hash are wiped too.

internal import RampartKernelSupport

/// Argon2id (RFC 9106), the memory-hard password hash and key derivation function: version 0x13
/// (1.3), the hybrid variant that RFC 9106 recommends and libsodium's `crypto_pwhash` uses by default.
///
/// ```swift
/// let key = try Argon2id.deriveKey(password: pw, salt: salt, iterations: 3, memoryKiB: 64 * 1024,
///                                  parallelism: 1, outputByteCount: 32)
/// ```
///
/// RFC 9106 §4 suggests `t = 1, m = 2 GiB, p = 4` first and `t = 3, m = 64 MiB, p = 4` for
/// memory-constrained settings; libsodium's `OPSLIMIT_MODERATE` is `t = 3, m = 256 MiB`. Lanes run one
/// after another here: `parallelism` changes the result (it is part of the parameters) but not the
/// speed.
///
/// - Important: Argon2id addresses memory independently of the password only during the first half
///   of the first pass. Every later block reads a reference block whose index depends on the
///   password-derived memory contents, so cache timing can leak information about the password to
///   an attacker sharing the machine, as with scrypt. That trade-off is what makes Argon2id resist
///   GPU and time-memory attacks; it is inherent to the algorithm, not to this implementation. The
///   compression function itself has no secret-dependent branch or index.
public enum Argon2id {
    /// The Argon2 version this implements (0x13).
    public static let version = 0x13
    /// The shortest salt RFC 9106 allows: 8 bytes (16 recommended).
    public static let minimumSaltByteCount = 8
    /// The shortest tag RFC 9106 allows: 4 bytes.
    public static let minimumOutputByteCount = 4
    /// The longest output derived here: 16 MiB (RFC 9106 allows 2^32 − 1 bytes).
    public static let maximumOutputByteCount = 1 << 24
    /// Default cap on the memory one call may allocate: 4 GiB.
    public static let defaultMemoryLimit = 1 << 32

    /// Derives `outputByteCount` bytes from `password` and `salt`.
    ///
    /// - Parameters:
    ///   - password: the password P (any length up to 2^32 − 1 bytes, empty allowed).
    ///   - salt: the salt S, at least 8 bytes (16 random bytes recommended).
    ///   - iterations: the number of passes t, at least 1.
    ///   - memoryKiB: the memory m in KiB, at least `8 · parallelism`; rounded down to a multiple of
    ///     `4 · parallelism` blocks as RFC 9106 prescribes.
    ///   - parallelism: the number of lanes p, 1 ... 2^24 − 1.
    ///   - outputByteCount: the tag length T, 4 ... ``maximumOutputByteCount``.
    ///   - secret: the optional secret value K (a pepper), empty by default.
    ///   - associatedData: the optional associated data X, empty by default.
    ///   - memoryLimit: the most memory this call may allocate, in bytes.
    /// - Throws: ``RampartError/invalidParameter(_:)`` (`"salt"`, `"iterations"`, `"memoryKiB"`,
    ///   `"parallelism"`, `"password"`, `"secret"`, `"associatedData"`),
    ///   ``RampartError/invalidOutputLength``, ``RampartError/memoryLimitExceeded(required:limit:)``.
    ///   Nothing is allocated on error.
    public static func deriveKey<P: Collection<UInt8>, S: Collection<UInt8>>(
        password: P, salt: S, iterations: Int, memoryKiB: Int, parallelism: Int, outputByteCount: Int,
        secret: [UInt8] = [], associatedData: [UInt8] = [], memoryLimit: Int = defaultMemoryLimit
    ) throws(RampartError) -> SymmetricKey {
        try deriveKey(password: password, salt: salt, iterations: iterations, memoryKiB: memoryKiB,
                      parallelism: parallelism, outputByteCount: outputByteCount, secret: secret,
                      associatedData: associatedData, memoryLimit: memoryLimit, backend: CPU.defaultBackend)
    }

    /// As ``deriveKey(password:salt:iterations:memoryKiB:parallelism:outputByteCount:secret:associatedData:memoryLimit:)``
    /// on a pinned backend (tests run every vector through both).
    @_spi(Testing)
    public static func deriveKey<P: Collection<UInt8>, S: Collection<UInt8>>(
        password: P, salt: S, iterations: Int, memoryKiB: Int, parallelism: Int, outputByteCount: Int,
        secret: [UInt8] = [], associatedData: [UInt8] = [], memoryLimit: Int = defaultMemoryLimit, backend: Backend
    ) throws(RampartError) -> SymmetricKey {
        let params = try validate(passwordCount: password.count, saltCount: salt.count, iterations: iterations,
                                  memoryKiB: memoryKiB, parallelism: parallelism, outputByteCount: outputByteCount,
                                  secretCount: secret.count, adCount: associatedData.count, memoryLimit: memoryLimit)
        return withContiguousBytes(password) { pw in
            withContiguousBytes(salt) { s in
                secret.withUnsafeBytes { k in
                    associatedData.withUnsafeBytes { x in
                        SymmetricKey(count: outputByteCount) { out in
                            run(params, password: pw, salt: s, secret: k, associatedData: x, output: out,
                                Registries.argon2.implementation(for: backend))
                        }
                    }
                }
            }
        }
    }

    /// Derives `output.count` bytes into `output`; same parameters, limits and errors as
    /// ``deriveKey(password:salt:iterations:memoryKiB:parallelism:outputByteCount:secret:associatedData:memoryLimit:)``.
    /// On error `output` is not written.
    public static func derive(
        password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, iterations: Int, memoryKiB: Int,
        parallelism: Int, secret: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        associatedData: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        into output: UnsafeMutableRawBufferPointer, memoryLimit: Int = defaultMemoryLimit
    ) throws(RampartError) {
        let params = try validate(passwordCount: password.count, saltCount: salt.count, iterations: iterations,
                                  memoryKiB: memoryKiB, parallelism: parallelism, outputByteCount: output.count,
                                  secretCount: secret.count, adCount: associatedData.count, memoryLimit: memoryLimit)
        run(params, password: password, salt: salt, secret: secret, associatedData: associatedData, output: output,
            Registries.argon2.implementation(for: CPU.defaultBackend))
    }

    /// The number of bytes a call allocates: m' blocks of 1 KiB plus four work blocks, where m' is
    /// `memoryKiB` rounded down to a multiple of `4 · parallelism`. `nil` for parameters out of range.
    public static func memoryRequired(memoryKiB: Int, parallelism: Int) -> Int? {
        guard parallelism >= 1, parallelism < 1 << 24, memoryKiB >= 8 * parallelism, memoryKiB <= UInt32.max else {
            return nil
        }
        let blocks = memoryKiB / (4 * parallelism) * (4 * parallelism)
        let (bytes, o1) = blocks.multipliedReportingOverflow(by: 1024)
        let (total, o2) = bytes.addingReportingOverflow(4 * 1024)
        return o1 || o2 ? nil : total
    }

    struct Parameters {
        let t: Int, m: Int, p: Int, tagLength: Int, blocks: Int, laneLength: Int, regionBytes: Int
    }

    static func validate(passwordCount: Int, saltCount: Int, iterations: Int, memoryKiB: Int, parallelism: Int,
                         outputByteCount: Int, secretCount: Int, adCount: Int,
                         memoryLimit: Int) throws(RampartError) -> Parameters {
        let max32 = Int(UInt32.max)
        guard passwordCount <= max32 else { throw .invalidParameter("password") }
        guard saltCount >= minimumSaltByteCount, saltCount <= max32 else { throw .invalidParameter("salt") }
        guard secretCount <= max32 else { throw .invalidParameter("secret") }
        guard adCount <= max32 else { throw .invalidParameter("associatedData") }
        guard iterations >= 1, iterations <= max32 else { throw .invalidParameter("iterations") }
        guard parallelism >= 1, parallelism < 1 << 24 else { throw .invalidParameter("parallelism") }
        guard memoryKiB >= 8 * parallelism, memoryKiB <= max32 else { throw .invalidParameter("memoryKiB") }
        guard outputByteCount >= minimumOutputByteCount, outputByteCount <= maximumOutputByteCount else {
            throw .invalidOutputLength
        }
        guard let bytes = memoryRequired(memoryKiB: memoryKiB, parallelism: parallelism) else {
            throw .memoryLimitExceeded(required: Int.max, limit: memoryLimit)
        }
        guard bytes <= memoryLimit else { throw .memoryLimitExceeded(required: bytes, limit: memoryLimit) }
        let blocks = memoryKiB / (4 * parallelism) * (4 * parallelism)
        return Parameters(t: iterations, m: memoryKiB, p: parallelism, tagLength: outputByteCount, blocks: blocks,
                          laneLength: blocks / parallelism, regionBytes: bytes)
    }

    /// Argon2id on validated parameters, the segments filled by `impl` (the `argon2` registry's).
    static func run(_ q: Parameters, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
                    secret: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
                    output: UnsafeMutableRawBufferPointer, _ impl: any Argon2Implementation.Type) {
        // H0 (§3.2), with room for the two LE32 words that follow it in the first blocks' input.
        var h0 = (SIMD64<UInt8>(), SIMD8<UInt8>())
        withUnsafeMutableBytes(of: &h0) { hb in
            let h = hb.baseAddress!
            var b = BLAKE2b(validatedOutputByteCount: 64, key: UnsafeRawBufferPointer(start: nil, count: 0),
                            salt: nil, personal: nil, backend: CPU.defaultBackend)
            func le32(_ v: Int) {
                var w = UInt32(truncatingIfNeeded: v).littleEndian
                withUnsafeBytes(of: &w) { b.update(bufferPointer: $0) }
            }
            le32(q.p); le32(q.tagLength); le32(q.m); le32(q.t); le32(Argon2id.version); le32(2)
            le32(password.count); b.update(bufferPointer: password)
            le32(salt.count); b.update(bufferPointer: salt)
            le32(secret.count); b.update(bufferPointer: secret)
            le32(associatedData.count); b.update(bufferPointer: associatedData)
            argon2Finish(&b, into: h, 64)

            let region = LargeRegion(byteCount: q.regionBytes)
            defer { region.release() }
            let memory = region.base, work = region.base + q.blocks * 1024
            // The first two blocks of every lane.
            for lane in 0..<q.p {
                for j in 0..<2 {
                    h.storeLE32(UInt32(j), 64)
                    h.storeLE32(UInt32(lane), 68)
                    argon2Hprime(UnsafeRawBufferPointer(start: h, count: 72),
                                 into: UnsafeMutableRawBufferPointer(start: memory + 1024 * (lane * q.laneLength + j), count: 1024))
                }
            }
            // Passes, slices, lanes.
            for pass in 0..<q.t {
                for slice in 0..<4 {
                    for lane in 0..<q.p {
                        var pos = Argon2Segment(pass: pass, lane: lane, slice: slice, lanes: q.p, laneLength: q.laneLength,
                                                memoryBlocks: q.blocks, passes: q.t, type: 2)
                        // Under the constant-time checker the data-dependent reference words are declared
                        // public: that access pattern is Argon2id's documented leak (see the type's doc).
                        pos.declassify = CTGrind.declassifyHook
                        impl.fillSegment(memory, pos, work)
                    }
                }
            }
            // C = XOR of each lane's last block (into the work area), tag = H'(C).
            let c = work
            c.copyMemory(from: memory + 1024 * (q.laneLength - 1), byteCount: 1024)
            for lane in 1..<max(q.p, 1) {
                let last = UnsafeRawPointer(memory + 1024 * (lane * q.laneLength + q.laneLength - 1))
                xorBytes(c, UnsafeRawPointer(c), last, 1024)
            }
            argon2Hprime(UnsafeRawBufferPointer(start: c, count: 1024), into: output)
        }
        wipe(&h0)
    }
}

/// The portable segment fill: the shared loop compiled with Rampart's (baseline) features.
@inline(never)
func argon2FillSegmentPortable(_ memory: UnsafeMutableRawPointer, _ pos: Argon2Segment, _ work: UnsafeMutableRawPointer) {
    argon2FillSegment(memory, pos, work)
}

/// H' (RFC 9106 §3.3): the variable-length hash, `output.count` bytes of `input`.
func argon2Hprime(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
    let t = output.count
    guard let out = output.baseAddress, t > 0 else { return }
    var prefix = UInt32(truncatingIfNeeded: t).littleEndian
    if t <= 64 {
        var b = BLAKE2b(validatedOutputByteCount: t, key: UnsafeRawBufferPointer(start: nil, count: 0), salt: nil,
                        personal: nil, backend: CPU.defaultBackend)
        withUnsafeBytes(of: &prefix) { b.update(bufferPointer: $0) }
        b.update(bufferPointer: input)
        argon2Finish(&b, into: out, t)
        return
    }
    // V1 = H^64(LE32(T) ‖ X); V_i = H^64(V_{i-1}); the first 32 bytes of V1 ... V_r, then
    // V_{r+1} = H^(T − 32r)(V_r) whole, with r = ⌈T / 32⌉ − 2.
    let r = (t + 31) / 32 - 2
    var v = SIMD64<UInt8>()
    withUnsafeMutableBytes(of: &v) { vb in
        let vp = vb.baseAddress!
        var b = BLAKE2b(validatedOutputByteCount: 64, key: UnsafeRawBufferPointer(start: nil, count: 0), salt: nil,
                        personal: nil, backend: CPU.defaultBackend)
        withUnsafeBytes(of: &prefix) { b.update(bufferPointer: $0) }
        b.update(bufferPointer: input)
        argon2Finish(&b, into: vp, 64)
        out.copyMemory(from: vp, byteCount: 32)
        for i in 1..<r {
            var h = BLAKE2b(validatedOutputByteCount: 64, key: UnsafeRawBufferPointer(start: nil, count: 0), salt: nil,
                            personal: nil, backend: CPU.defaultBackend)
            h.update(bufferPointer: UnsafeRawBufferPointer(vb))
            argon2Finish(&h, into: vp, 64)
            out.advanced(by: 32 * i).copyMemory(from: vp, byteCount: 32)
        }
        let last = t - 32 * r
        var h = BLAKE2b(validatedOutputByteCount: last, key: UnsafeRawBufferPointer(start: nil, count: 0), salt: nil,
                        personal: nil, backend: CPU.defaultBackend)
        h.update(bufferPointer: UnsafeRawBufferPointer(vb))
        argon2Finish(&h, into: out.advanced(by: 32 * r), last)
    }
    wipe(&v)
}

/// Writes the first `count` bytes of `h`'s digest to `out`, then wipes the hasher and the digest copy.
@inline(__always)
func argon2Finish(_ h: inout BLAKE2b, into out: UnsafeMutableRawPointer, _ count: Int) {
    var d = h.finalize()
    d.withUnsafeBytes { out.copyMemory(from: $0.baseAddress!, byteCount: count) }
    wipe(&d)
    wipe(&h)
}
