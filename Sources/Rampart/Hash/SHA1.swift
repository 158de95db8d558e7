// SHA-1 (FIPS 180-4), under `Insecure`: kept for MTProto (auth_key_id, v1 KDF) and legacy interop.

/// Algorithms that are broken for collision resistance and kept only for protocol compatibility.
public enum Insecure {}

/// A SHA-1 digest (20 bytes), compared in constant time.
public struct SHA1Digest: Digest {
    public static var byteCount: Int { 20 }
    @usableFromInline var raw = DigestBytes()
    @inlinable init() {}
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try raw.withBytes(count: 20, body)
    }
    public static func == (a: Self, b: Self) -> Bool { digestEquals(a, b) }
    public func hash(into h: inout Hasher) { withUnsafeBytes { h.combine(bytes: $0) } }
}

extension Insecure {
    /// SHA-1 (FIPS 180-4). Collisions are practical: use only where a protocol requires it.
    public struct SHA1: HashFunction {
        public typealias Digest = SHA1Digest
        public static var blockByteCount: Int { 64 }
        public static var byteCount: Int { 20 }

        @usableFromInline var engine: MDEngine<SHA1Compressor>

        public init() { engine = MDEngine(backend: CPU.defaultBackend) }
        @_spi(Testing) public init(backend: Backend) { engine = MDEngine(backend: backend) }

        public mutating func update(bufferPointer: UnsafeRawBufferPointer) { engine.update(bufferPointer) }

        public func finalize() -> SHA1Digest {
            var d = SHA1Digest()
            d.raw.withMutableBytes { out in
                withScratch { tmp in
                    engine.finalize(into: tmp)
                    out.baseAddress!.copyMemory(from: tmp, byteCount: 20)
                }
            }
            return d
        }
    }
}

@usableFromInline
enum SHA1Compressor: MDCompressor {
    // Five words used; the eighth lane keeps the value a whole vector.
    @usableFromInline typealias Words = SIMD8<UInt32>
    @usableFromInline typealias Block = SIMD64<UInt8>
    @usableFromInline static var blockSize: Int { 64 }
    @usableFromInline static var digestSize: Int { 20 }
    @usableFromInline static var lengthSize: Int { 8 }
    @usableFromInline static var initialWords: SIMD8<UInt32> {
        [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0, 0, 0, 0]
    }
    @usableFromInline static var zeroBlock: Block { Block(repeating: 0) }

    @usableFromInline
    static func compress(_ words: inout SIMD8<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int, _ backend: Backend) {
        let impl = Registries.sha1.implementation(for: backend)
        withUnsafeMutablePointer(to: &words) { w in
            w.withMemoryRebound(to: UInt32.self, capacity: 8) { impl.blocks($0, blocks, count) }
        }
    }

    @usableFromInline
    static func store(_ w: SIMD8<UInt32>, _ out: UnsafeMutableRawPointer) {
        for i in 0..<5 { out.storeBE32(w[i], 4 * i) }
    }
}

@inline(__always) private func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x << n) | (x >> (32 - n)) }

/// Portable SHA-1 compression of `count` 64-byte blocks.
@usableFromInline
func sha1BlocksPortable(_ state: inout SIMD8<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int) {
    withScratch { raw in
        let w = raw.bindMemory(to: UInt32.self, capacity: 80)
        var h0 = state[0], h1 = state[1], h2 = state[2], h3 = state[3], h4 = state[4]
        var p = blocks
        for _ in 0..<count {
            for i in 0..<16 { w[i] = p.loadBE32(4 * i) }
            for i in 16..<80 { w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
            var a = h0, b = h1, c = h2, d = h3, e = h4
            @inline(__always) func step(_ f: UInt32, _ k: UInt32, _ i: Int) {
                let t = rotl(a, 5) &+ f &+ e &+ k &+ w[i]
                e = d; d = c; c = rotl(b, 30); b = a; a = t
            }
            for i in 0..<20 { step(d ^ (b & (c ^ d)), 0x5A827999, i) }
            for i in 20..<40 { step(b ^ c ^ d, 0x6ED9EBA1, i) }
            for i in 40..<60 { step((b & c) | (d & (b | c)), 0x8F1BBCDC, i) }
            for i in 60..<80 { step(b ^ c ^ d, 0xCA62C1D6, i) }
            h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d; h4 &+= e
            p += 64
        }
        state[0] = h0; state[1] = h1; state[2] = h2; state[3] = h3; state[4] = h4
    }
}
