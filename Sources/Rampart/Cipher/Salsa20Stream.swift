// The public Salsa20 and XSalsa20 stream ciphers: seekable keystream XOR that continues across calls.

internal import RampartKernelSupport

/// The mutable state of a Salsa20 stream: the input block (counter = the next block to generate) and
/// the unused bytes of the current keystream block. Wiped when released.
final class SalsaStreamStorage {
    var x: SIMD16<UInt32>
    var block: SIMD64<UInt8> = .zero
    /// Bytes of `block` already used; 64 when it holds nothing.
    var used: Int = 64
    /// The `salsa20` registry's implementation for the stream's backend.
    let impl: any Salsa20Implementation.Type

    init(x: SIMD16<UInt32>, impl: any Salsa20Implementation.Type) {
        self.x = x
        self.impl = impl
    }

    init(copying o: SalsaStreamStorage) {
        x = o.x; block = o.block; used = o.used; impl = o.impl
    }

    deinit {
        wipe(&x)
        wipe(&block)
    }

    var counter: UInt64 {
        get { UInt64(x[8]) | UInt64(x[9]) << 32 }
        set { x[8] = UInt32(truncatingIfNeeded: newValue); x[9] = UInt32(truncatingIfNeeded: newValue >> 32) }
    }

    /// Refills `block` with the keystream block at the counter and advances the counter.
    func refill() {
        withUnsafeMutableBytes(of: &block) { impl.block(x, $0.baseAddress!) }
        counter &+= 1
        used = 0
    }

    /// XORs `count` bytes of keystream from `src` into `dst` (the same buffer or disjoint ones).
    func xor(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ count: Int) {
        var off = 0
        if used < 64 && count > 0 {
            let n = min(64 - used, count)
            withUnsafeBytes(of: &block) { b in
                for i in 0..<n {
                    dst.storeBytes(of: src.load(fromByteOffset: i, as: UInt8.self) ^ b[used + i], toByteOffset: i, as: UInt8.self)
                }
            }
            used += n
            off = n
        }
        let whole = (count - off) & ~63
        if whole > 0 {
            salsa20XOR(&x, src + off, dst + off, whole, impl)
            off += whole
        }
        if off < count {
            refill()
            let n = count - off
            withUnsafeBytes(of: &block) { b in
                for i in 0..<n {
                    dst.storeBytes(of: src.load(fromByteOffset: off + i, as: UInt8.self) ^ b[i], toByteOffset: off + i, as: UInt8.self)
                }
            }
            used = n
        }
    }

    func seek(block: UInt64, byte: Int) {
        counter = block
        used = 64
        if byte > 0 {
            refill()
            used = byte
        }
    }
}

/// Shared implementation of ``Salsa20`` and ``XSalsa20``.
struct SalsaStream {
    var storage: SalsaStreamStorage

    mutating func unique() -> SalsaStreamStorage {
        if !isKnownUniquelyReferenced(&storage) { storage = SalsaStreamStorage(copying: storage) }
        return storage
    }

    mutating func xor(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(RampartError) {
        guard output.count == input.count else { throw .invalidOutputLength }
        guard let src = input.baseAddress, let dst = output.baseAddress, input.count > 0 else { return }
        unique().xor(src, dst, input.count)
    }

    mutating func xor(inPlace buffer: UnsafeMutableRawBufferPointer) {
        guard let p = buffer.baseAddress, buffer.count > 0 else { return }
        unique().xor(UnsafeRawPointer(p), p, buffer.count)
    }

    mutating func xor<D: Collection<UInt8>>(_ data: D) -> [UInt8] {
        var out = Array(data)
        out.withUnsafeMutableBytes { xor(inPlace: $0) }
        return out
    }

    mutating func keystream(count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: max(0, count))
        out.withUnsafeMutableBytes { xor(inPlace: $0) }
        return out
    }

    mutating func seek(toByteOffset offset: UInt64) {
        unique().seek(block: offset >> 6, byte: Int(offset & 63))
    }

    mutating func seek(toBlock block: UInt64) {
        unique().seek(block: block, byte: 0)
    }
}

/// Reads a 32-byte key, or throws ``RampartError/invalidKeyLength``.
@inline(__always)
func withKey32<R>(_ key: SymmetricKey, _ body: (UnsafeRawPointer) -> R) throws(RampartError) -> R {
    guard key.byteCount == 32 else { throw .invalidKeyLength }
    return key.withUnsafeBytes { body($0.baseAddress!) }
}

/// Copies a nonce of exactly `count` bytes (at most 32) into a zero-initialised value, or throws
/// ``RampartError/invalidNonceLength``.
@inline(__always)
func nonceBytes<N: Collection<UInt8>>(_ nonce: N, count: Int) throws(RampartError) -> SIMD32<UInt8> {
    // One dynamic call for the contiguous case (Array, slices, Data), not one per byte when the
    // caller's generic code is not specialised.
    var v = SIMD32<UInt8>()
    let ok = withUnsafeMutableBytes(of: &v) { dst in
        withContiguousBytes(nonce) { src in
            guard src.count == count else { return false }
            if count > 0 { dst.baseAddress!.copyMemory(from: src.baseAddress!, byteCount: count) }
            return true
        }
    }
    guard ok else { throw .invalidNonceLength }
    return v
}

/// Salsa20/20 (Bernstein) with a 32-byte key, an 8-byte nonce and a 64-bit block counter: the
/// `crypto_stream_salsa20` of NaCl.
///
/// A stream cipher: ``xor(_:)`` encrypts and decrypts alike, and consecutive calls continue the same
/// keystream. The position can be moved with ``seek(toByteOffset:)``.
///
/// ```swift
/// var s = try Salsa20(key: key, nonce: nonce)
/// let ciphertext = s.xor(plaintext)
/// ```
///
/// - Important: Salsa20 gives confidentiality only; pair it with a MAC (or use ``SecretBox``). Never
///   encrypt two messages with the same key and nonce. The 8-byte nonce is too short to pick at
///   random for many messages; ``XSalsa20``'s 24-byte nonce is.
///
/// The key and the keystream state are wiped when the last copy of the value is released.
public struct Salsa20 {
    /// Key size in bytes (32).
    public static let keyByteCount = 32
    /// Nonce size in bytes (8).
    public static let nonceByteCount = 8
    /// Keystream block size in bytes (64).
    public static let blockByteCount = 64

    var stream: SalsaStream

    /// Starts a keystream at block `counter` (a byte offset of `64 * counter`).
    ///
    /// - Throws: ``RampartError/invalidKeyLength`` unless the key has 32 bytes,
    ///   ``RampartError/invalidNonceLength`` unless the nonce has 8 bytes.
    public init<N: Collection<UInt8>>(key: SymmetricKey, nonce: N, counter: UInt64 = 0) throws(RampartError) {
        try self.init(key: key, nonce: nonce, counter: counter, backend: key.backend)
    }

    /// As ``init(key:nonce:counter:)`` on `backend` (the public call passes the key's).
    @_specialize(where N == [UInt8])
    init<N: Collection<UInt8>>(key: SymmetricKey, nonce: N, counter: UInt64 = 0,
                                                      backend: Backend) throws(RampartError) {
        let n = try nonceBytes(nonce, count: 8)
        let x = try withKey32(key) { k in
            withUnsafeBytes(of: n) { nb in
                salsa20Input(key: k, nb.baseAddress!.loadLE32(0), nb.baseAddress!.loadLE32(4),
                             UInt32(truncatingIfNeeded: counter), UInt32(truncatingIfNeeded: counter >> 32))
            }
        }
        stream = SalsaStream(storage: SalsaStreamStorage(x: x, impl: Registries.salsa20.implementation(for: backend)))
    }

    /// XORs `input` with the next `input.count` keystream bytes into `output` (it may be `input`).
    ///
    /// - Throws: ``RampartError/invalidOutputLength`` unless `output.count == input.count`.
    public mutating func xor(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(RampartError) {
        try stream.xor(input, into: output)
    }

    /// XORs the next `buffer.count` keystream bytes into `buffer`.
    public mutating func xor(inPlace buffer: UnsafeMutableRawBufferPointer) { stream.xor(inPlace: buffer) }

    /// Returns `data` XORed with the next `data.count` keystream bytes (encrypts or decrypts).
    public mutating func xor<D: Collection<UInt8>>(_ data: D) -> [UInt8] { stream.xor(data) }

    /// The next `count` keystream bytes (`crypto_stream_salsa20`).
    public mutating func keystream(count: Int) -> [UInt8] { stream.keystream(count: count) }

    /// Moves to keystream byte `offset` (block `offset / 64`).
    public mutating func seek(toByteOffset offset: UInt64) { stream.seek(toByteOffset: offset) }

    /// Moves to the start of keystream block `block` (byte offset `64 * block`, which may exceed 2^64).
    public mutating func seek(toBlock block: UInt64) { stream.seek(toBlock: block) }
}

/// XSalsa20 (Bernstein, "Extending the Salsa20 nonce"): Salsa20/20 under the HSalsa20 subkey of the
/// key and the first 16 nonce bytes, with the last 8 nonce bytes as the Salsa20 nonce. The
/// `crypto_stream_xsalsa20` of NaCl, and the cipher of ``SecretBox``.
///
/// The 24-byte nonce is long enough to be chosen at random for every message.
///
/// ```swift
/// // Threema's ID backup: XSalsa20 keystream XOR with an all-zero nonce.
/// let ciphertext = try XSalsa20.xor(plaintext, key: key, nonce: [UInt8](repeating: 0, count: 24))
/// ```
///
/// - Important: confidentiality only, no integrity: use ``SecretBox`` unless a protocol prescribes
///   the bare stream. Never reuse a (key, nonce) pair for two messages.
///
/// The key, subkey and keystream state are wiped when the last copy of the value is released.
public struct XSalsa20 {
    /// Key size in bytes (32).
    public static let keyByteCount = 32
    /// Nonce size in bytes (24).
    public static let nonceByteCount = 24

    var stream: SalsaStream

    /// Starts a keystream at block `counter`.
    ///
    /// - Throws: ``RampartError/invalidKeyLength`` unless the key has 32 bytes,
    ///   ``RampartError/invalidNonceLength`` unless the nonce has 24 bytes.
    public init<N: Collection<UInt8>>(key: SymmetricKey, nonce: N, counter: UInt64 = 0) throws(RampartError) {
        try self.init(key: key, nonce: nonce, counter: counter, backend: key.backend)
    }

    /// As ``init(key:nonce:counter:)`` on `backend` (the public call passes the key's).
    @_specialize(where N == [UInt8])
    init<N: Collection<UInt8>>(key: SymmetricKey, nonce: N, counter: UInt64 = 0,
                                                      backend: Backend) throws(RampartError) {
        var n = try nonceBytes(nonce, count: 24)
        let impl = Registries.salsa20.implementation(for: backend)
        let x = try withKey32(key) { k in
            withUnsafeBytes(of: &n) { nb in impl.xsalsa20Input(k, nb.baseAddress!, counter) }
        }
        stream = SalsaStream(storage: SalsaStreamStorage(x: x, impl: impl))
    }

    /// XORs `input` with the next `input.count` keystream bytes into `output` (it may be `input`).
    ///
    /// - Throws: ``RampartError/invalidOutputLength`` unless `output.count == input.count`.
    public mutating func xor(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(RampartError) {
        try stream.xor(input, into: output)
    }

    /// XORs the next `buffer.count` keystream bytes into `buffer`.
    public mutating func xor(inPlace buffer: UnsafeMutableRawBufferPointer) { stream.xor(inPlace: buffer) }

    /// Returns `data` XORed with the next `data.count` keystream bytes (encrypts or decrypts).
    public mutating func xor<D: Collection<UInt8>>(_ data: D) -> [UInt8] { stream.xor(data) }

    /// The next `count` keystream bytes (`crypto_stream_xsalsa20`).
    public mutating func keystream(count: Int) -> [UInt8] { stream.keystream(count: count) }

    /// Moves to keystream byte `offset`.
    public mutating func seek(toByteOffset offset: UInt64) { stream.seek(toByteOffset: offset) }

    /// Moves to the start of keystream block `block`.
    public mutating func seek(toBlock block: UInt64) { stream.seek(toBlock: block) }

    /// `data` XORed with the XSalsa20 keystream of `key` and `nonce` from its start
    /// (`crypto_stream_xsalsa20_xor`). Encrypts and decrypts.
    ///
    /// - Throws: ``RampartError/invalidKeyLength``, ``RampartError/invalidNonceLength``.
    public static func xor<D: Collection<UInt8>, N: Collection<UInt8>>(_ data: D, key: SymmetricKey, nonce: N) throws(RampartError) -> [UInt8] {
        var out = Array(data)
        let r = out.withUnsafeMutableBytes { b in
            Result { () throws(RampartError) in try xor(UnsafeRawBufferPointer(b), into: b, key: key, nonce: nonce) }
        }
        try r.get()
        return out
    }

    /// XORs `input` with the XSalsa20 keystream of `key` and `nonce`, starting at block `counter`, into
    /// `output` (it may be `input`): `crypto_stream_xsalsa20_xor_ic` on raw buffers. The state lives
    /// on the stack (no allocation) and is wiped before returning.
    ///
    /// - Throws: ``RampartError/invalidOutputLength`` unless `output.count == input.count`,
    ///   ``RampartError/invalidKeyLength``, ``RampartError/invalidNonceLength``.
    public static func xor<N: Collection<UInt8>>(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                                                 key: SymmetricKey, nonce: N, counter: UInt64 = 0) throws(RampartError) {
        try xor(input, into: output, key: key, nonce: nonce, counter: counter, backend: key.backend)
    }

    /// As ``xor(_:into:key:nonce:counter:)`` on `backend` (the public call passes the key's).
    @_specialize(where N == [UInt8])
    static func xor<N: Collection<UInt8>>(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, key: SymmetricKey, nonce: N,
        counter: UInt64 = 0, backend: Backend
    ) throws(RampartError) {
        var n = try nonceBytes(nonce, count: 24)  // public: not wiped
        guard output.count == input.count else { throw .invalidOutputLength }
        let impl = Registries.salsa20.implementation(for: backend)
        var x = try withKey32(key) { k in
            withUnsafeBytes(of: &n) { nb in impl.xsalsa20Input(k, nb.baseAddress!, counter) }
        }
        if let src = input.baseAddress, let dst = output.baseAddress, input.count > 0 {
            salsa20XOR(&x, src, dst, input.count, impl)
        }
        wipe(&x)
    }

    /// The first `count` keystream bytes of `key` and `nonce` (`crypto_stream_xsalsa20`).
    ///
    /// - Throws: ``RampartError/invalidKeyLength``, ``RampartError/invalidNonceLength``.
    public static func keystream<N: Collection<UInt8>>(count: Int, key: SymmetricKey, nonce: N) throws(RampartError) -> [UInt8] {
        var s = try XSalsa20(key: key, nonce: nonce)
        return s.keystream(count: count)
    }
}

/// The Salsa20 input block of XSalsa20: HSalsa20 subkey of `key` and `nonce[0..<16]`, Salsa20 nonce
/// `nonce[16..<24]`, block counter `counter` (the portable `xsalsa20Input` of the `salsa20` registry;
/// the kernels' keep their state in registers). The subkey goes from the HSalsa20 state straight into
/// the returned block; the one stack copy of the rounds is wiped. `z` is an opaque zero (see
/// ``hsalsa20Core(_:_:_:)``).
@usableFromInline @inline(never)
func xsalsa20InputCore(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64,
                       _ z: SIMD4<UInt32>) -> SIMD16<UInt32> {
    var s = salsa20Diagonal(salsa20Input(key: key, nonce.loadLE32(0), nonce.loadLE32(4), nonce.loadLE32(8),
                                         nonce.loadLE32(12)))
    s.doubleRounds(10, z: z)
    // Subkey words z0, z5, z10, z15, z6, z7, z8, z9 are a[0...3], d[2], c[3], c[0], b[1] (see hsalsa20Core).
    let x = SIMD16(salsaSigma.0, s.a[0], s.a[1], s.a[2], s.a[3],
                   salsaSigma.1, nonce.loadLE32(16), nonce.loadLE32(20),
                   UInt32(truncatingIfNeeded: counter), UInt32(truncatingIfNeeded: counter >> 32),
                   salsaSigma.2, s.d[2], s.c[3], s.c[0], s.b[1], salsaSigma.3)
    wipe(&s)
    return x
}

/// The XSalsa20 input blocks (counter 0) of two keys under one nonce, their two HSalsa20 chains
/// interleaved: about the time of one (the chain is latency-bound). For the two boxes of a Threema
/// envelope, which share the nonce. The portable `xsalsa20InputPair`, on the diagonal rows.
@usableFromInline @inline(never)
func xsalsa20InputPairCore(_ keyA: UnsafeRawPointer, _ keyB: UnsafeRawPointer, _ nonce: UnsafeRawPointer,
                           _ z: SIMD4<UInt32>) -> (SIMD16<UInt32>, SIMD16<UInt32>) {
    let n0 = nonce.loadLE32(0), n1 = nonce.loadLE32(4), n2 = nonce.loadLE32(8), n3 = nonce.loadLE32(12)
    var a = salsa20Diagonal(salsa20Input(key: keyA, n0, n1, n2, n3))
    var b = salsa20Diagonal(salsa20Input(key: keyB, n0, n1, n2, n3))
    var i = 0
    while i < 10 {
        a.doubleRounds(1, z: z)
        b.doubleRounds(1, z: z)
        i &+= 1
    }
    let n4 = nonce.loadLE32(16), n5 = nonce.loadLE32(20)
    // Subkey words as in xsalsa20InputCore.
    let xa = SIMD16(salsaSigma.0, a.a[0], a.a[1], a.a[2], a.a[3], salsaSigma.1, n4, n5, 0, 0,
                    salsaSigma.2, a.d[2], a.c[3], a.c[0], a.b[1], salsaSigma.3)
    let xb = SIMD16(salsaSigma.0, b.a[0], b.a[1], b.a[2], b.a[3], salsaSigma.1, n4, n5, 0, 0,
                    salsaSigma.2, b.d[2], b.c[3], b.c[0], b.b[1], salsaSigma.3)
    wipe(&a)
    wipe(&b)
    return (xa, xb)
}

/// HSalsa20 (the `crypto_core_hsalsa20` of NaCl): a 32-byte key and a 16-byte input to a 32-byte
/// pseudorandom output. The key-derivation step of XSalsa20 and of NaCl's `crypto_box_beforenm`.
public enum HSalsa20 {
    /// HSalsa20 of `key` (32 bytes) and `input` (16 bytes).
    ///
    /// - Throws: ``RampartError/invalidKeyLength`` unless the key has 32 bytes,
    ///   ``RampartError/invalidNonceLength`` unless the input has 16 bytes.
    public static func hash<I: Collection<UInt8>>(key: SymmetricKey, input: I) throws(RampartError) -> SymmetricKey {
        let n = try nonceBytes(input, count: 16)
        return try withKey32(key) { k in
            SymmetricKey(count: 32) { out in
                withUnsafeBytes(of: n) { hsalsa20(key: k, input: $0.baseAddress!, output: out.baseAddress!) }
            }
        }
    }
}
