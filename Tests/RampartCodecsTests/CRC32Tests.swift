import Testing
import RampartCodecs
import RampartTestSupport

/// Deterministic test input: byte i is (7i + 3) mod 256.
private func crcPattern(_ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) } }

/// Bit-at-a-time CRC-32 straight from the definition (reflected 0xEDB88320, init and final XOR ~0).
private func crcBitwise(_ data: [UInt8]) -> UInt32 {
    var c: UInt32 = 0xFFFF_FFFF
    for b in data {
        c ^= UInt32(b)
        for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0xEDB8_8320 : c >> 1 }
    }
    return ~c
}

@Suite("CRC32")
struct CRC32Tests {
    @Test("Check value \"123456789\" -> cbf43926, empty -> 0, the fox")
    func knownAnswers() {
        #expect(CRC32.checksum(data: Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum(data: [UInt8]()) == 0)
        #expect(CRC32().finalize() == 0)
        #expect(CRC32.checksum(data: Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
        // Non-contiguous collection path.
        #expect(CRC32.checksum(data: "123456789".utf8) == 0xCBF4_3926)
    }

    /// Values computed with Python `zlib.crc32` over the pattern (7i + 3) mod 256.
    @Test("Differential against Python zlib.crc32", arguments: [
        (1, 0x4b0bbe37), (3, 0x6d58af33), (7, 0x54491cdb), (8, 0xe2e35978), (9, 0x3d351cfe),
        (15, 0x7c619edc), (16, 0x191f3d9f), (17, 0x7ba75ee3), (63, 0xb7350c2a), (64, 0xcbd9ecf0),
        (65, 0x6d195777), (1000, 0x17bc2a46), (4097, 0xcb3097e5),
    ] as [(Int, UInt32)])
    func zlibValues(length: Int, expected: UInt32) {
        let d = crcPattern(length)
        #expect(CRC32.checksum(data: d) == expected)
        d.withUnsafeBytes { #expect(CRC32.checksum(bufferPointer: $0) == expected) }
    }

    @Test("Slicing-by-8 equals the bitwise definition for lengths 0...300 and unaligned starts")
    func bitwiseReference() {
        var rng = SplitMix64(seed: 42)
        let big = randomBytes(count: 320, using: &rng)
        for n in 0...300 {
            for offset in [0, 1, 3, 7] {
                let slice = Array(big[offset..<(offset + n)])
                #expect(CRC32.checksum(data: big[offset..<(offset + n)]) == crcBitwise(slice))
            }
        }
    }

    @Test("Incremental updates split anywhere equal one shot; continuing from a value")
    func incremental() {
        var rng = SplitMix64(seed: 7)
        let data = randomBytes(count: 2000, using: &rng)
        let whole = CRC32.checksum(data: data)
        for _ in 0..<200 {
            var c = CRC32()
            var i = 0
            while i < data.count {
                let n = Int.random(in: 0...40, using: &rng)
                let j = min(data.count, i + n)
                c.update(data: data[i..<j])
                i = j
            }
            #expect(c.finalize() == whole)
        }
        let cut = 777
        var cont = CRC32(continuing: CRC32.checksum(data: data[..<cut]))
        cont.update(data: data[cut...])
        #expect(cont.finalize() == whole)
    }
}

@Suite("CRC32 constant time")
struct CRC32ConstantTimeTests {
    @Test func agreesWithTheTableVersion() {
        var rng = SplitMix64(seed: 0xc7c)
        for n in [0, 1, 7, 8, 9, 63, 64, 1000, 4099] {
            let data = randomBytes(count: n, using: &rng)
            let ct = data.withUnsafeBytes { CRC32.checksumConstantTime(bufferPointer: $0) }
            #expect(ct == CRC32.checksum(data: data), "length \(n)")
        }
        #expect(Array("123456789".utf8).withUnsafeBytes { CRC32.checksumConstantTime(bufferPointer: $0) } == 0xCBF4_3926)
    }
}
