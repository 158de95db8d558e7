// SHA-512 (FIPS 180-4): portable compression plus an AVX2 + BMI2 kernel (x86 has no SHA-512
// instructions on this generation) behind one seam.

internal import RampartKernelSupport

/// A SHA-512 digest (64 bytes), compared in constant time.
public struct SHA512Digest: Digest {
    public static var byteCount: Int { 64 }
    @usableFromInline var raw = DigestBytes()
    @inlinable init() {}
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try raw.withBytes(count: 64, body)
    }
    public static func == (a: Self, b: Self) -> Bool { digestEquals(a, b) }
    public func hash(into h: inout Hasher) { withUnsafeBytes { h.combine(bytes: $0) } }
}

/// SHA-512 (FIPS 180-4).
public struct SHA512: HashFunction {
    public typealias Digest = SHA512Digest
    public static var blockByteCount: Int { 128 }
    public static var byteCount: Int { 64 }

    @usableFromInline var engine: MDEngine<SHA512Compressor>

    public init() { engine = MDEngine(backend: CPU.defaultBackend) }
    @_spi(Testing) public init(backend: Backend) { engine = MDEngine(backend: backend) }

    public mutating func update(bufferPointer: UnsafeRawBufferPointer) { engine.update(bufferPointer) }

    public func finalize() -> SHA512Digest {
        var d = SHA512Digest()
        d.raw.withMutableBytes { engine.finalize(into: $0.baseAddress!) }
        return d
    }
}

@usableFromInline
enum SHA512Compressor: MDCompressor {
    @usableFromInline typealias Words = SIMD8<UInt64>
    @usableFromInline typealias Block = Block128
    @usableFromInline static var blockSize: Int { 128 }
    @usableFromInline static var digestSize: Int { 64 }
    @usableFromInline static var lengthSize: Int { 16 }
    @usableFromInline static var initialWords: SIMD8<UInt64> {
        [0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
         0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179]
    }
    @usableFromInline static var zeroBlock: Block { Block128() }

    @usableFromInline
    static func compress(_ words: inout SIMD8<UInt64>, _ blocks: UnsafeRawPointer, _ count: Int, _ backend: Backend) {
        let impl = Registries.sha512.implementation(for: backend)
        withUnsafeMutablePointer(to: &words) { w in
            w.withMemoryRebound(to: UInt64.self, capacity: 8) { impl.blocks($0, blocks, count) }
        }
    }

    @usableFromInline
    static func store(_ w: SIMD8<UInt64>, _ out: UnsafeMutableRawPointer) {
        for i in 0..<8 { out.storeBE64(w[i], 8 * i) }
    }
}

/// FIPS 180-4's round constants (RampartKernelSupport holds the one copy every implementation reads).
let sha512K: [UInt64] = sha512RoundConstants

@inline(__always) private func rotr(_ x: UInt64, _ n: UInt64) -> UInt64 { (x >> n) | (x << (64 - n)) }

/// Portable SHA-512 compression of `count` 128-byte blocks.
@usableFromInline
func sha512BlocksPortable(_ state: inout SIMD8<UInt64>, _ blocks: UnsafeRawPointer, _ count: Int) {
    sha512K.withUnsafeBufferPointer { kp in
        let k = kp.baseAddress!
        withScratch { raw in
            let w = raw.bindMemory(to: UInt64.self, capacity: 80)
            var h0 = state[0], h1 = state[1], h2 = state[2], h3 = state[3]
            var h4 = state[4], h5 = state[5], h6 = state[6], h7 = state[7]
            var p = blocks
            for _ in 0..<count {
                for i in 0..<16 { w[i] = p.loadBE64(8 * i) }
                for i in 16..<80 {
                    let s0 = rotr(w[i - 15], 1) ^ rotr(w[i - 15], 8) ^ (w[i - 15] >> 7)
                    let s1 = rotr(w[i - 2], 19) ^ rotr(w[i - 2], 61) ^ (w[i - 2] >> 6)
                    w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
                }
                var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7
                @inline(__always) func round(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: inout UInt64,
                                             _ e: UInt64, _ f: UInt64, _ g: UInt64, _ h: inout UInt64, _ i: Int) {
                    let t1 = h &+ (rotr(e, 14) ^ rotr(e, 18) ^ rotr(e, 41)) &+ (g ^ (e & (f ^ g))) &+ k[i] &+ w[i]
                    let t2 = (rotr(a, 28) ^ rotr(a, 34) ^ rotr(a, 39)) &+ ((a & b) | (c & (a | b)))
                    d = d &+ t1
                    h = t1 &+ t2
                }
                var i = 0
                while i < 80 {
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
                p += 128
            }
            state = [h0, h1, h2, h3, h4, h5, h6, h7]
        }
    }
}
