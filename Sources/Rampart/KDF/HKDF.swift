// HKDF (RFC 5869) in CryptoKit's shape: extract, expand, deriveKey, and SharedSecret's
// hkdfDerivedSymmetricKey, so that code written against CryptoKit compiles against Rampart.

/// The HMAC-based extract-and-expand key derivation function of RFC 5869, in CryptoKit's shape.
///
/// ```swift
/// let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: secret, salt: salt, info: info, outputByteCount: 32)
/// let prk = HKDF<SHA256>.extract(inputKeyMaterial: secret, salt: salt)
/// let okm = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: info, outputByteCount: 64)
/// ```
///
/// The output is at most ``maximumOutputByteCount`` bytes (255 hash lengths: 8160 for SHA-256).
/// A longer or negative `outputByteCount` is a programming error and traps, as in CryptoKit; the
/// length is a constant of the calling protocol, never a value from the network. Intermediate
/// blocks are wiped; the result is a ``SymmetricKey``, wiped when released.
public enum HKDF<H: HashFunction> {
    /// The longest output RFC 5869 allows: 255 blocks of the hash's output.
    public static var maximumOutputByteCount: Int { 255 * H.byteCount }

    /// HKDF-Extract: `PRK = HMAC(salt, IKM)`. An empty salt acts as `HashLen` zero bytes (RFC 5869
    /// §2.2), as HMAC pads its key with zeros.
    public static func extract<Salt: Collection<UInt8>>(inputKeyMaterial: SymmetricKey, salt: Salt) -> HashedAuthenticationCode<H> {
        extract(inputKeyMaterial: inputKeyMaterial, salt: salt, makeHash: { H() })
    }

    static func extract<Salt: Collection<UInt8>>(inputKeyMaterial: SymmetricKey, salt: Salt,
                                                 makeHash: () -> H) -> HashedAuthenticationCode<H> {
        withContiguousBytes(salt) { s in
            let (inner, outer) = HMAC<H>.keyedStates(s, makeHash: makeHash)
            var mac = HMAC<H>(inner: inner, outer: outer)
            inputKeyMaterial.withUnsafeBytes { mac.update(bufferPointer: $0) }
            return mac.finalize()
        }
    }

    /// HKDF-Expand with a pseudorandom key from ``extract(inputKeyMaterial:salt:)``.
    public static func expand<Info: Collection<UInt8>>(
        pseudoRandomKey prk: HashedAuthenticationCode<H>, info: Info, outputByteCount: Int
    ) -> SymmetricKey {
        prk.withUnsafeBytes { p in withContiguousBytes(info) { i in expand(p, i, outputByteCount, makeHash: { H() }) } }
    }

    /// HKDF-Expand with pseudorandom key bytes (at least `HashLen` of them, RFC 5869 §2.3).
    public static func expand<PRK: Collection<UInt8>, Info: Collection<UInt8>>(
        pseudoRandomKey prk: PRK, info: Info, outputByteCount: Int
    ) -> SymmetricKey {
        withContiguousBytes(prk) { p in withContiguousBytes(info) { i in expand(p, i, outputByteCount, makeHash: { H() }) } }
    }

    /// HKDF-Expand with a pseudorandom key held as a ``SymmetricKey``.
    public static func expand<Info: Collection<UInt8>>(
        pseudoRandomKey prk: SymmetricKey, info: Info, outputByteCount: Int
    ) -> SymmetricKey {
        prk.withUnsafeBytes { p in withContiguousBytes(info) { i in expand(p, i, outputByteCount, makeHash: { H() }) } }
    }

    /// Extract then expand.
    public static func deriveKey<Salt: Collection<UInt8>, Info: Collection<UInt8>>(
        inputKeyMaterial: SymmetricKey, salt: Salt, info: Info, outputByteCount: Int
    ) -> SymmetricKey {
        deriveKey(inputKeyMaterial: inputKeyMaterial, salt: salt, info: info, outputByteCount: outputByteCount,
                  makeHash: { H() })
    }

    /// Extract then expand with hashers from `makeHash` (tests pin a backend this way).
    @_spi(Testing)
    public static func deriveKey<Salt: Collection<UInt8>, Info: Collection<UInt8>>(
        inputKeyMaterial: SymmetricKey, salt: Salt, info: Info, outputByteCount: Int, makeHash: () -> H
    ) -> SymmetricKey {
        let prk = extract(inputKeyMaterial: inputKeyMaterial, salt: salt, makeHash: makeHash)
        return prk.withUnsafeBytes { p in
            withContiguousBytes(info) { i in expand(p, i, outputByteCount, makeHash: makeHash) }
        }
    }

    /// Extract (with no salt) then expand.
    public static func deriveKey<Info: Collection<UInt8>>(
        inputKeyMaterial: SymmetricKey, info: Info, outputByteCount: Int
    ) -> SymmetricKey {
        deriveKey(inputKeyMaterial: inputKeyMaterial, salt: [UInt8](), info: info, outputByteCount: outputByteCount)
    }

    /// `T(i) = HMAC(PRK, T(i-1) ‖ info ‖ i)`, concatenated and cut to `count` bytes.
    static func expand(_ prk: UnsafeRawBufferPointer, _ info: UnsafeRawBufferPointer, _ count: Int,
                       makeHash: () -> H) -> SymmetricKey {
        precondition(count >= 0 && count <= maximumOutputByteCount,
                     "HKDF output of \(count) bytes: RFC 5869 allows 0...\(maximumOutputByteCount) for this hash")
        let (inner, outer) = HMAC<H>.keyedStates(prk, makeHash: makeHash)
        let keyed = HMAC<H>(inner: inner, outer: outer)
        var out = [UInt8](repeating: 0, count: count)
        var previous = [UInt8]()
        defer { out.secureWipe(); previous.secureWipe() }
        var produced = 0, counter: UInt8 = 1
        while produced < count {
            var mac = keyed
            previous.withUnsafeBytes { mac.update(bufferPointer: $0) }
            mac.update(bufferPointer: info)
            withUnsafeBytes(of: counter) { mac.update(bufferPointer: $0) }
            previous.secureWipe()
            previous = mac.finalize().bytes
            let take = min(previous.count, count - produced)
            out.withUnsafeMutableBytes { o in
                previous.withUnsafeBytes { (o.baseAddress! + produced).copyMemory(from: $0.baseAddress!, byteCount: take) }
            }
            produced += take
            counter &+= 1
        }
        return SymmetricKey(data: out)
    }
}

extension SharedSecret {
    /// A symmetric key derived from this secret with HKDF (RFC 5869), as CryptoKit's
    /// `SharedSecret.hkdfDerivedSymmetricKey(using:salt:sharedInfo:outputByteCount:)`.
    public func hkdfDerivedSymmetricKey<H: HashFunction, Salt: Collection<UInt8>, Info: Collection<UInt8>>(
        using hashFunction: H.Type, salt: Salt, sharedInfo: Info, outputByteCount: Int
    ) -> SymmetricKey {
        HKDF<H>.deriveKey(inputKeyMaterial: key, salt: salt, info: sharedInfo, outputByteCount: outputByteCount)
    }
}
