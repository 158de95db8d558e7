#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import RampartCodecs
import RampartTestSupport
import Testing

/// The system zlib, reached by `dlopen` (no headers, no link-time dependency): `deflateInit2_`,
/// `deflate`, `deflateEnd` and `deflateBound` over a `z_stream` laid out by hand (LP64: 112 bytes).
private struct SystemZlib: @unchecked Sendable {
    typealias Init2 = @convention(c) (UnsafeMutableRawPointer, Int32, Int32, Int32, Int32, Int32, UnsafePointer<CChar>, Int32) -> Int32
    typealias Deflate = @convention(c) (UnsafeMutableRawPointer, Int32) -> Int32
    typealias End = @convention(c) (UnsafeMutableRawPointer) -> Int32
    typealias Bound = @convention(c) (UnsafeMutableRawPointer, UInt) -> UInt
    typealias Version = @convention(c) () -> UnsafePointer<CChar>

    let init2: Init2
    let deflate: Deflate
    let end: End
    let bound: Bound
    let version: UnsafePointer<CChar>

    static let shared: SystemZlib? = {
        guard MemoryLayout<Int>.size == 8 else { return nil }
        guard let h = dlopen("libz.so.1", RTLD_NOW) ?? dlopen("libz.dylib", RTLD_NOW) else { return nil }
        guard let i = dlsym(h, "deflateInit2_"), let d = dlsym(h, "deflate"), let e = dlsym(h, "deflateEnd"),
              let b = dlsym(h, "deflateBound"), let v = dlsym(h, "zlibVersion") else { return nil }
        return SystemZlib(init2: unsafeBitCast(i, to: Init2.self), deflate: unsafeBitCast(d, to: Deflate.self),
                          end: unsafeBitCast(e, to: End.self), bound: unsafeBitCast(b, to: Bound.self),
                          version: unsafeBitCast(v, to: Version.self)())
    }()

    /// Compresses `data` in one `deflate(Z_FINISH)` call. `windowBits`: 9…15 zlib, −15…−9 raw, 25…31 gzip.
    func compress(_ data: [UInt8], level: Int32, windowBits: Int32, memLevel: Int32, strategy: Int32) -> [UInt8]? {
        let stream = UnsafeMutableRawPointer.allocate(byteCount: 112, alignment: 8)
        defer { stream.deallocate() }
        stream.initializeMemory(as: UInt8.self, repeating: 0, count: 112)
        guard init2(stream, level, 8, windowBits, memLevel, strategy, version, 112) == 0 else { return nil }
        defer { _ = end(stream) }
        let capacity = Int(bound(stream, UInt(data.count))) + 64
        var out = [UInt8](repeating: 0, count: capacity)
        let status: Int32 = data.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                stream.storeBytes(of: UnsafeRawPointer(input.baseAddress), toByteOffset: 0, as: UnsafeRawPointer?.self)
                stream.storeBytes(of: UInt32(input.count), toByteOffset: 8, as: UInt32.self)
                stream.storeBytes(of: UnsafeMutableRawPointer(output.baseAddress), toByteOffset: 24, as: UnsafeMutableRawPointer?.self)
                stream.storeBytes(of: UInt32(output.count), toByteOffset: 32, as: UInt32.self)
                return deflate(stream, 4)                          // Z_FINISH
            }
        }
        guard status == 1 else { return nil }                       // Z_STREAM_END
        let total = stream.load(fromByteOffset: 40, as: UInt.self)
        return Array(out[0..<Int(total)])
    }
}

/// Seeded test data: text-like words, random bytes and byte runs, mixed in segments.
private func differentialData(_ rng: inout SplitMix64, count: Int) -> [UInt8] {
    let words = ["threema", "backup", "\"id\":", "{", "}", "[", "],", "null", "42", "the", "of", "message", " ", " ", "\n"]
    var out: [UInt8] = []
    out.reserveCapacity(count)
    while out.count < count {
        let segment = 1 + Int(rng.next() % 3000)
        switch rng.next() % 3 {
        case 0:
            for _ in 0..<(segment / 4) { out += Array(words[Int(rng.next() % UInt64(words.count))].utf8) }
        case 1: out += rng.bytes(min(segment, 500))
        default: out += [UInt8](repeating: UInt8(truncatingIfNeeded: rng.next() % 3 == 0 ? 0 : rng.next()), count: segment)
        }
    }
    return Array(out.prefix(count))
}

@Suite("DEFLATE against the system zlib", .enabled(if: SystemZlib.shared != nil, "libz.so.1 not found"))
struct DeflateZlibDifferentialTests {
    @Test("Random settings (level, strategy, window, memLevel, wrapper) on seeded data: identical output (300 streams)")
    func differential() throws {
        let z = try #require(SystemZlib.shared)
        var rng = SplitMix64(seed: 0x21B)
        for round in 0..<300 {
            let size = round % 10 == 0 ? Int(rng.next() % 300_000) : Int(rng.next() % 5000)
            let data = differentialData(&rng, count: size)
            let level = Int32(rng.next() % 10)
            let strategy = Int32(rng.next() % 5)                    // default, filtered, huffman, rle, fixed
            let window = Int32(9 + rng.next() % 7)
            let memLevel = Int32(1 + rng.next() % 9)
            let wrapper = Int(rng.next() % 3)
            let bits = [-window, window, window + 16][wrapper]
            let compressed = try #require(z.compress(data, level: level, windowBits: bits, memLevel: memLevel, strategy: strategy))
            let settings = "level \(level) strategy \(strategy) windowBits \(bits) memLevel \(memLevel) size \(size)"
            let out: [UInt8]
            switch wrapper {
            case 0: out = try Deflate.decompress(compressed, maxOutputBytes: size)
            case 1: out = try Zlib.decompress(compressed, maxOutputBytes: size)
            default: out = try Gzip.decompress(compressed, maxOutputBytes: size)
            }
            #expect(out == data, "\(settings)")
            if size > 0 {
                #expect(throws: DeflateError.outputLimitExceeded(size - 1), "\(settings)") {
                    try Deflate.decompressPrefix(Array(wrapper == 0 ? compressed[...] : compressed[(wrapper == 1 ? 2 : 10)...]),
                                                 maxOutputBytes: size - 1)
                }
            }
        }
    }

    @Test("zlib's level-0 gzip output equals Gzip.compressStored for seeded sizes around the 65 535-byte block")
    func storedWriterMatches() throws {
        let z = try #require(SystemZlib.shared)
        var rng = SplitMix64(seed: 0x570)
        for size in [0, 1, 2, 100, 65_534, 65_535, 65_536, 65_537, 131_070, 131_071, 196_605, 200_003] {
            let data = rng.bytes(size)
            #expect(z.compress(data, level: 0, windowBits: 31, memLevel: 8, strategy: 0) == Gzip.compressStored(data))
            #expect(z.compress(data, level: 0, windowBits: 15, memLevel: 8, strategy: 0) == Zlib.compressStored(data))
            #expect(z.compress(data, level: 0, windowBits: -15, memLevel: 8, strategy: 0) == Deflate.compressStored(data))
        }
    }
}
