// PBKDF2 (RFC 8018) with HMAC-SHA1, HMAC-SHA256 or HMAC-SHA512.
//
// The ipad and opad chaining values are computed once; every further iteration costs exactly two
// compression calls on pre-padded blocks, with no allocation inside the loop.

/// PBKDF2 (RFC 8018 section 5.2) with an HMAC pseudo-random function.
public enum PBKDF2 {
    /// The pseudo-random function.
    public enum PseudoRandomFunction: Sendable, Equatable, CaseIterable {
        case hmacSHA1, hmacSHA256, hmacSHA512
    }

    /// Derives `outputByteCount` bytes from `password` and `salt`.
    ///
    /// - Throws: ``RampartError/invalidParameter(_:)`` for zero iterations,
    ///   ``RampartError/invalidOutputLength`` for a zero length or one above (2^32 - 1) blocks.
    public static func deriveKey<P: Collection<UInt8>, S: Collection<UInt8>>(
        password: P, salt: S, prf: PseudoRandomFunction, iterations: Int, outputByteCount: Int
    ) throws(RampartError) -> SymmetricKey {
        try validate(prf: prf, iterations: iterations, outputByteCount: outputByteCount)
        return withContiguousBytes(password) { pw in
            withContiguousBytes(salt) { s in
                SymmetricKey(count: outputByteCount) { out in
                    run(prf: prf, password: pw, salt: s, iterations: iterations, output: out, backend: CPU.defaultBackend)
                }
            }
        }
    }

    /// Derives `output.count` bytes into `output`.
    public static func derive(
        password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, prf: PseudoRandomFunction,
        iterations: Int, into output: UnsafeMutableRawBufferPointer
    ) throws(RampartError) {
        try validate(prf: prf, iterations: iterations, outputByteCount: output.count)
        run(prf: prf, password: password, salt: salt, iterations: iterations, output: output, backend: CPU.defaultBackend)
    }

    /// As ``derive(password:salt:prf:iterations:into:)`` with a pinned backend (tests).
    @_spi(Testing) public static func derive(
        password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, prf: PseudoRandomFunction,
        iterations: Int, into output: UnsafeMutableRawBufferPointer, backend: Backend
    ) throws(RampartError) {
        try validate(prf: prf, iterations: iterations, outputByteCount: output.count)
        run(prf: prf, password: password, salt: salt, iterations: iterations, output: output, backend: backend)
    }

    /// The longest output any PBKDF2 function here derives: 16 MiB. RFC 8018 allows up to
    /// (2^32 − 1)·hLen bytes, which no caller needs and which would exhaust memory before it failed.
    public static let maximumOutputByteCount = 1 << 24

    static func validate(prf: PseudoRandomFunction, iterations: Int, outputByteCount: Int) throws(RampartError) {
        guard iterations >= 1 else { throw .invalidParameter("PBKDF2 iterations must be at least 1") }
        guard outputByteCount >= 1, outputByteCount <= maximumOutputByteCount else { throw .invalidOutputLength }
        let hLen: Int
        switch prf {
        case .hmacSHA1: hLen = 20
        case .hmacSHA256: hLen = 32
        case .hmacSHA512: hLen = 64
        }
        guard outputByteCount / hLen < Int(UInt32.max) else { throw .invalidOutputLength }
    }

    static func run(prf: PseudoRandomFunction, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
                    iterations: Int, output: UnsafeMutableRawBufferPointer, backend: Backend) {
        switch prf {
        case .hmacSHA1: pbkdf2(Insecure.SHA1.self, password, salt, iterations, output, backend)
        case .hmacSHA256: pbkdf2(SHA256.self, password, salt, iterations, output, backend)
        case .hmacSHA512: pbkdf2(SHA512.self, password, salt, iterations, output, backend)
        }
    }
}

/// The PBKDF2 core over a SHA-family hasher `H`.
@usableFromInline
func pbkdf2<H: MDHash>(_: H.Type, _ password: UnsafeRawBufferPointer, _ salt: UnsafeRawBufferPointer,
                       _ iterations: Int, _ output: UnsafeMutableRawBufferPointer, _ backend: Backend) {
    typealias C = H.Compressor
    let bs = C.blockSize
    let hLen = C.digestSize
    let (innerH, outerH) = HMAC<H>.keyedStates(password, makeHash: { H(backend: backend) })
    let ipad = innerH.engine.words
    let opad = outerH.engine.words
    // Scratch: inner block, outer block, running XOR T (each one hash block, 16-byte aligned).
    withScratch { base in
        let scratch = UnsafeMutableRawBufferPointer(start: base, count: 3 * bs)
        let inner = base
        let outer = inner + bs
        let t = outer + bs
        scratch.initializeMemory(as: UInt8.self, repeating: 0)
        // Pre-padded blocks: message = one digest after a one-block key prefix.
        let bitLength = UInt64(bs + hLen) * 8
        for blk in [inner, outer] {
            blk.storeBytes(of: 0x80, toByteOffset: hLen, as: UInt8.self)
            blk.storeBE64(bitLength, bs - 8)
        }
        var blockIndex: UInt32 = 1
        var offset = 0
        while offset < output.count {
            // U1 = PRF(P, S || INT(i)).
            var e = MDEngine<C>(words: ipad, total: UInt64(bs), backend: backend)
            e.update(salt)
            var be = blockIndex.bigEndian
            withUnsafeBytes(of: &be) { e.update($0) }
            e.finalize(into: outer)
            var o = MDEngine<C>(words: opad, total: UInt64(bs), backend: backend)
            o.update(UnsafeRawBufferPointer(start: outer, count: hLen))
            o.finalize(into: inner)
            // The finalize calls above overwrite only the first hLen bytes, so the padding stays.
            t.copyMemory(from: inner, byteCount: hLen)
            var j = 1
            while j < iterations {
                var w = ipad
                C.compress(&w, UnsafeRawPointer(inner), 1, backend)
                C.store(w, outer)
                var w2 = opad
                C.compress(&w2, UnsafeRawPointer(outer), 1, backend)
                C.store(w2, inner)
                xorInPlace(t, UnsafeRawPointer(inner), hLen)
                j += 1
            }
            let take = min(hLen, output.count - offset)
            output.baseAddress!.advanced(by: offset).copyMemory(from: t, byteCount: take)
            offset += take
            blockIndex &+= 1
        }
        secureZero(scratch)
    }
}

/// `dst[i] ^= src[i]` for `count` bytes.
@usableFromInline @inline(__always)
func xorInPlace(_ dst: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ count: Int) {
    var i = 0
    while i + 8 <= count {
        let v = dst.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ src.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        dst.storeBytes(of: v, toByteOffset: i, as: UInt64.self)
        i += 8
    }
    while i < count {
        let v = dst.load(fromByteOffset: i, as: UInt8.self) ^ src.load(fromByteOffset: i, as: UInt8.self)
        dst.storeBytes(of: v, toByteOffset: i, as: UInt8.self)
        i += 1
    }
}
