// SHA-512 (FIPS 180-4): portable compression plus an AVX2 + BMI2 kernel (x86 has no SHA-512
// instructions on this generation) behind one seam.

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
        if Kernels.sha512.runs(on: backend) { SHA512Kernel.blocks(&words, blocks, count); return }
        sha512BlocksPortable(&words, blocks, count)
    }

    @usableFromInline
    static func store(_ w: SIMD8<UInt64>, _ out: UnsafeMutableRawPointer) {
        for i in 0..<8 { out.storeBE64(w[i], 8 * i) }
    }
}

@usableFromInline
let sha512K: [UInt64] = [
    0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc, 0x3956c25bf348b538,
    0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118, 0xd807aa98a3030242, 0x12835b0145706fbe,
    0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2, 0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235,
    0xc19bf174cf692694, 0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
    0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5, 0x983e5152ee66dfab,
    0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4, 0xc6e00bf33da88fc2, 0xd5a79147930aa725,
    0x06ca6351e003826f, 0x142929670a0e6e70, 0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed,
    0x53380d139d95b3df, 0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
    0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30, 0xd192e819d6ef5218,
    0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8, 0x19a4c116b8d2d0c8, 0x1e376c085141ab53,
    0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8, 0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373,
    0x682e6ff3d6b2b8a3, 0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
    0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b, 0xca273eceea26619c,
    0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178, 0x06f067aa72176fba, 0x0a637dc5a2c898a6,
    0x113f9804bef90dae, 0x1b710b35131c471b, 0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc,
    0x431d67c49c100d4c, 0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
]

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
