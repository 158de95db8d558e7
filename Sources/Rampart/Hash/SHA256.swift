// SHA-256 (FIPS 180-4): portable compression plus the x86_64 kernels (SHA-NI, AVX2) behind one seam.

internal import RampartKernelSupport

/// A SHA-256 digest (32 bytes), compared in constant time.
public struct SHA256Digest: Digest {
    public static var byteCount: Int { 32 }
    @usableFromInline var raw = DigestBytes()
    @inlinable init() {}
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try raw.withBytes(count: 32, body)
    }
    public static func == (a: Self, b: Self) -> Bool { digestEquals(a, b) }
    public func hash(into h: inout Hasher) { withUnsafeBytes { h.combine(bytes: $0) } }
}

/// SHA-256 (FIPS 180-4).
///
/// ```swift
/// let d = SHA256.hash(data: bytes)
/// var h = SHA256(); h.update(data: part1); h.update(data: part2); let d2 = h.finalize()
/// ```
public struct SHA256: HashFunction {
    public typealias Digest = SHA256Digest
    public static var blockByteCount: Int { 64 }
    public static var byteCount: Int { 32 }

    @usableFromInline var engine: MDEngine<SHA256Compressor>

    /// A hasher that uses the best implementation for this CPU.
    public init() { engine = MDEngine(backend: CPU.defaultBackend) }

    /// A hasher pinned to one implementation (for tests that run every vector through both paths).
    @_spi(Testing) public init(backend: Backend) { engine = MDEngine(backend: backend) }

    public mutating func update(bufferPointer: UnsafeRawBufferPointer) { engine.update(bufferPointer) }

    public func finalize() -> SHA256Digest {
        var d = SHA256Digest()
        d.raw.withMutableBytes { engine.finalize(into: $0.baseAddress!) }
        return d
    }
}

extension SHA256 {
    /// SHA-256 of a message of at most 55 bytes whose one padded block the caller built (`block`: the
    /// message, 0x80, zeros, the bit length big-endian in bytes 56..<64): one compression from the
    /// initial value, the digest written to `out` (32 bytes). No hasher object, no buffering: for
    /// MTProto's KDF, two such hashes per message (Docs/MTProto.md §1.3).
    package static func digest(ofPaddedBlock block: UnsafeRawPointer, into out: UnsafeMutableRawPointer) {
        var w = SHA256Compressor.initialWords
        SHA256Compressor.compress(&w, block, 1, CPU.defaultBackend)
        SHA256Compressor.store(w, out)
        withUnsafeMutableBytes(of: &w) { secureZero($0) }
    }
}

@usableFromInline
enum SHA256Compressor: MDCompressor {
    @usableFromInline typealias Words = SIMD8<UInt32>
    @usableFromInline typealias Block = SIMD64<UInt8>
    @usableFromInline static var blockSize: Int { 64 }
    @usableFromInline static var digestSize: Int { 32 }
    @usableFromInline static var lengthSize: Int { 8 }
    @usableFromInline static var initialWords: SIMD8<UInt32> {
        [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
    }
    @usableFromInline static var zeroBlock: Block { Block(repeating: 0) }

    @usableFromInline
    static func compress(_ words: inout SIMD8<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int, _ backend: Backend) {
        let impl = Registries.sha256.implementation(for: backend)
        withUnsafeMutablePointer(to: &words) { w in
            w.withMemoryRebound(to: UInt32.self, capacity: 8) { impl.blocks($0, blocks, count) }
        }
    }

    @usableFromInline
    static func store(_ w: SIMD8<UInt32>, _ out: UnsafeMutableRawPointer) {
        for i in 0..<8 { out.storeBE32(w[i], 4 * i) }
    }
}

/// FIPS 180-4's round constants (RampartKernelSupport holds the one copy every implementation reads).
let sha256K: [UInt32] = sha256RoundConstants

@inline(__always) private func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

/// Portable SHA-256 compression of `count` 64-byte blocks.
@usableFromInline
func sha256BlocksPortable(_ state: inout SIMD8<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int) {
    sha256K.withUnsafeBufferPointer { kp in
        let k = kp.baseAddress!
        withScratch { raw in
            let w = raw.bindMemory(to: UInt32.self, capacity: 64)
            var h0 = state[0], h1 = state[1], h2 = state[2], h3 = state[3]
            var h4 = state[4], h5 = state[5], h6 = state[6], h7 = state[7]
            var p = blocks
            for _ in 0..<count {
                for i in 0..<16 { w[i] = p.loadBE32(4 * i) }
                for i in 16..<64 {
                    let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                    let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                    w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
                }
                var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7
                var i = 0
                @inline(__always) func round(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
                                             _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32, _ i: Int) {
                    let t1 = h &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ (g ^ (e & (f ^ g))) &+ k[i] &+ w[i]
                    let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) | (c & (a | b)))
                    d = d &+ t1
                    h = t1 &+ t2
                }
                while i < 64 {
                    round(a, b, c, &d, e, f, g, &h, i)
                    round(h, a, b, &c, d, e, f, &g, i + 1)
                    round(g, h, a, &b, c, d, e, &f, i + 2)
                    round(f, g, h, &a, b, c, d, &e, i + 3)
                    round(e, f, g, &h, a, b, c, &d, i + 4)
                    round(d, e, f, &g, h, a, b, &c, i + 5)
                    round(c, d, e, &f, g, h, a, &b, i + 6)
                    round(b, c, d, &e, f, g, h, &a, i + 7)
                    i += 8
                }
                h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d; h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
                p += 64
            }
            state = [h0, h1, h2, h3, h4, h5, h6, h7]
        }
    }
}
