// MD5 (RFC 1321), under `Insecure`: kept only for the key fingerprint of Telegram secret-chat files
// (Docs/MTProto.md §7.7), where the protocol fixes it. Never use it for anything else.

/// An MD5 digest (16 bytes), compared in constant time.
public struct MD5Digest: Digest {
    public static var byteCount: Int { 16 }
    @usableFromInline var raw = DigestBytes()
    @inlinable init() {}
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try raw.withBytes(count: 16, body)
    }
    public static func == (a: Self, b: Self) -> Bool { digestEquals(a, b) }
    public func hash(into h: inout Hasher) { withUnsafeBytes { h.combine(bytes: $0) } }
}

extension Insecure {
    /// MD5 (RFC 1321), in the shape of ``Insecure/SHA1``: `Insecure.MD5.hash(data:)`, or
    /// `update(data:)` and `finalize()` for streaming.
    ///
    /// MD5 is broken: collisions take seconds and it must not protect anything. Rampart carries it
    /// only because Telegram secret chats fix it for the 32-bit fingerprint of an encrypted file's key
    /// and IV (``SecretChat/FileKey``, Docs/MTProto.md §7.7). Portable Swift only, no kernel.
    public struct MD5: HashFunction {
        public typealias Digest = MD5Digest
        public static var blockByteCount: Int { 64 }
        public static var byteCount: Int { 16 }

        @usableFromInline var engine: MDEngine<MD5Compressor>

        public init() { engine = MDEngine(backend: .portable) }
        /// The same hasher (MD5 has only the portable code; `backend` is accepted for symmetry with
        /// the other hashes).
        @_spi(Testing) public init(backend: Backend) { engine = MDEngine(backend: .portable) }

        public mutating func update(bufferPointer: UnsafeRawBufferPointer) { engine.update(bufferPointer) }

        public func finalize() -> MD5Digest {
            var d = MD5Digest()
            d.raw.withMutableBytes { out in
                withScratch { tmp in
                    engine.finalize(into: tmp)
                    out.baseAddress!.copyMemory(from: tmp, byteCount: 16)
                }
            }
            return d
        }
    }
}

@usableFromInline
enum MD5Compressor: MDCompressor {
    @usableFromInline typealias Words = SIMD4<UInt32>
    @usableFromInline typealias Block = SIMD64<UInt8>
    @usableFromInline static var blockSize: Int { 64 }
    @usableFromInline static var digestSize: Int { 16 }
    @usableFromInline static var lengthSize: Int { 8 }
    @usableFromInline static var lengthIsLittleEndian: Bool { true }
    @usableFromInline static var initialWords: SIMD4<UInt32> { [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476] }
    @usableFromInline static var zeroBlock: Block { Block(repeating: 0) }

    @usableFromInline
    static func compress(_ words: inout SIMD4<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int, _ backend: Backend) {
        md5Blocks(&words, blocks, count)
    }

    @usableFromInline
    static func store(_ w: SIMD4<UInt32>, _ out: UnsafeMutableRawPointer) {
        for i in 0..<4 { out.storeLE32(w[i], 4 * i) }
    }
}

/// The per-step shift amounts of RFC 1321 §3.4 (four per round).
private let md5Shifts: [UInt32] = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]

/// T[i] = floor(2^32 · |sin(i + 1)|), RFC 1321 §3.4.
private let md5T: [UInt32] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
]

@inline(__always) private func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x << n) | (x >> (32 - n)) }

/// MD5 compression of `count` 64-byte blocks (little-endian words), RFC 1321 §3.4.
func md5Blocks(_ state: inout SIMD4<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int) {
    var x = SIMD16<UInt32>()
    var h0 = state[0], h1 = state[1], h2 = state[2], h3 = state[3]
    var p = blocks
    md5T.withUnsafeBufferPointer { t in
        md5Shifts.withUnsafeBufferPointer { s in
            for _ in 0..<count {
                for i in 0..<16 { x[i] = p.loadLE32(4 * i) }
                var a = h0, b = h1, c = h2, d = h3
                for i in 0..<64 {
                    let f: UInt32, g: Int
                    switch i >> 4 {
                    case 0: f = d ^ (b & (c ^ d)); g = i
                    case 1: f = c ^ (d & (b ^ c)); g = (5 &* i &+ 1) & 15
                    case 2: f = b ^ c ^ d; g = (3 &* i &+ 5) & 15
                    default: f = c ^ (b | ~d); g = (7 &* i) & 15
                    }
                    let sum = a &+ f &+ t[i] &+ x[g]
                    a = d; d = c; c = b
                    b = b &+ rotl(sum, s[(i >> 4) << 2 | (i & 3)])
                }
                h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
                p += 64
            }
        }
    }
    state = SIMD4(h0, h1, h2, h3)
    x = SIMD16()
    withUnsafeMutableBytes(of: &x) { secureZero($0) }
}
