// HMAC (RFC 2104) over any `HashFunction`, in CryptoKit's shape.

/// A message authentication code computed by ``HMAC``; equality is constant time.
public struct HashedAuthenticationCode<H: HashFunction>: Hashable, Sequence, CustomStringConvertible, Sendable {
    @usableFromInline let digest: H.Digest
    @usableFromInline init(digest: H.Digest) { self.digest = digest }

    /// The code's size in bytes.
    public static var byteCount: Int { H.Digest.byteCount }
    /// The code's bytes.
    public var bytes: [UInt8] { digest.bytes }
    /// Lowercase hexadecimal.
    public var description: String { digest.description }
    public func makeIterator() -> Array<UInt8>.Iterator { bytes.makeIterator() }
    /// Calls `body` with the code's bytes.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try digest.withUnsafeBytes(body)
    }
    public static func == (a: Self, b: Self) -> Bool { a.digest == b.digest }
    public func hash(into h: inout Hasher) { digest.hash(into: &h) }
}

/// HMAC (RFC 2104) with the hash function `H`.
///
/// ```swift
/// let tag = HMAC<SHA256>.authenticationCode(for: message, using: key)
/// let ok = HMAC<SHA256>.isValidAuthenticationCode(tagBytes, authenticating: message, using: key)
/// ```
public struct HMAC<H: HashFunction>: Sendable {
    @usableFromInline var inner: H
    @usableFromInline var outer: H

    /// Starts an HMAC computation with `key` (any length; longer than a block is hashed first).
    public init(key: SymmetricKey) {
        (inner, outer) = key.withUnsafeBytes { Self.keyedStates($0, makeHash: { H() }) }
    }

    /// Starts an HMAC computation whose hashers come from `makeHash` (tests pin a backend this way).
    @_spi(Testing) public init(key: SymmetricKey, makeHash: () -> H) {
        (inner, outer) = key.withUnsafeBytes { Self.keyedStates($0, makeHash: makeHash) }
    }

    @usableFromInline
    init(inner: H, outer: H) {
        self.inner = inner
        self.outer = outer
    }

    /// Builds the ipad and opad states for `key`, using `makeHash` for a fresh hasher.
    @usableFromInline
    static func keyedStates(_ key: UnsafeRawBufferPointer, makeHash: () -> H) -> (H, H) {
        let bs = H.blockByteCount
        return withScratch { base in
            let block = UnsafeMutableRawBufferPointer(start: base, count: bs)
            block.initializeMemory(as: UInt8.self, repeating: 0)
            if key.count > bs {
                var h = makeHash()
                h.update(bufferPointer: key)
                h.finalize().withUnsafeBytes { block.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            } else if key.count > 0 {
                block.baseAddress!.copyMemory(from: key.baseAddress!, byteCount: key.count)
            }
            for i in 0..<bs { block[i] ^= 0x36 }
            var i = makeHash()
            i.update(bufferPointer: UnsafeRawBufferPointer(block))
            for j in 0..<bs { block[j] ^= 0x36 ^ 0x5c }
            var o = makeHash()
            o.update(bufferPointer: UnsafeRawBufferPointer(block))
            secureZero(block)
            return (i, o)
        }
    }

    /// Absorbs message bytes.
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) { inner.update(bufferPointer: bufferPointer) }

    /// Absorbs message bytes.
    @inlinable
    public mutating func update<D: Collection<UInt8>>(data: D) { inner.update(data: data) }

    /// The authentication code of everything absorbed so far (the state is left unchanged).
    public func finalize() -> HashedAuthenticationCode<H> {
        let d = inner.finalize()
        var o = outer
        d.withUnsafeBytes { o.update(bufferPointer: $0) }
        return HashedAuthenticationCode(digest: o.finalize())
    }

    /// The authentication code of `data` under `key`.
    @inlinable
    public static func authenticationCode<D: Collection<UInt8>>(for data: D, using key: SymmetricKey) -> HashedAuthenticationCode<H> {
        var h = HMAC(key: key)
        h.update(data: data)
        return h.finalize()
    }

    /// Checks `code` against `data` and `key` in constant time.
    @inlinable
    public static func isValidAuthenticationCode<D: Collection<UInt8>>(
        _ code: HashedAuthenticationCode<H>, authenticating data: D, using key: SymmetricKey
    ) -> Bool {
        authenticationCode(for: data, using: key) == code
    }

    /// Checks raw code bytes (for example received from the network) against `data` and `key` in
    /// constant time. A code of the wrong length is invalid.
    @inlinable
    public static func isValidAuthenticationCode<C: Collection<UInt8>, D: Collection<UInt8>>(
        _ code: C, authenticating data: D, using key: SymmetricKey
    ) -> Bool {
        authenticationCode(for: data, using: key).digest.constantTimeEquals(code)
    }
}
