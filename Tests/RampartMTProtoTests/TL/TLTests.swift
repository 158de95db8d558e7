// TL reader/writer: encodings of Docs/MTProto.md §0, strictness, and no trap on random input.

import Testing
import RampartMTProto
import RampartTestSupport

@Test func tlConstructorIsLittleEndian() {
    var w = TLWriter()
    w.constructor(0xbe7e_8ef1)
    #expect(w.bytes == [0xF1, 0x8E, 0x7E, 0xBE])
}

@Test func tlBytesPrefixesAndPadding() throws {
    // Docs/MTProto.md §0 examples: p = 3C2357CF → 04 3C 23 57 CF 00 00 00; 256 bytes → FE 00 01 00, no padding;
    // 592 bytes → FE 50 02 00.
    var w = TLWriter()
    w.tlBytes([0x3C, 0x23, 0x57, 0xCF])
    #expect(w.bytes == [0x04, 0x3C, 0x23, 0x57, 0xCF, 0, 0, 0])
    for (n, prefix) in [(256, [0xFE, 0x00, 0x01, 0x00] as [UInt8]), (592, [0xFE, 0x50, 0x02, 0x00])] {
        var w2 = TLWriter()
        w2.tlBytes([UInt8](repeating: 7, count: n))
        #expect(Array(w2.bytes.prefix(4)) == prefix)
        #expect(w2.bytes.count == 4 + n)
    }
    // Every length 0..600 round-trips and pads to a multiple of 4.
    for n in 0...600 {
        let data = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
        var w3 = TLWriter()
        w3.tlBytes(data)
        w3.int32(-5)
        #expect(w3.bytes.count % 4 == 0)
        var r = TLReader(w3.bytes)
        #expect(try r.tlBytes() == data)
        #expect(try r.int32() == -5)
        try r.finish()
    }
}

@Test func tlScalarsRoundTrip() throws {
    var w = TLWriter()
    w.int32(Int32.min)
    w.int64(-3_414_540_481_677_951_611)
    w.uint64(0x0123_4567_89AB_CDEF)
    w.bool(true)
    w.bool(false)
    w.raw([UInt8](repeating: 0, count: 15) + [1])  // int128 with leading zeros stays 16 bytes
    w.string("pong ✓")
    w.vectorOfInt64([1, -2, 3])
    w.bigInteger(BigUInt(0x3C23_57CF))
    var r = TLReader(w.bytes)
    #expect(try r.int32() == Int32.min)
    #expect(try r.int64() == -3_414_540_481_677_951_611)
    #expect(try r.uint64() == 0x0123_4567_89AB_CDEF)
    #expect(try r.bool() == true)
    #expect(try r.bool() == false)
    #expect(try r.int128() == [UInt8](repeating: 0, count: 15) + [1])
    #expect(try r.string() == "pong ✓")
    #expect(try r.vectorOfInt64(max: 10) == [1, -2, 3])
    #expect(try r.bigInteger() == BigUInt(0x3C23_57CF))
    try r.finish()
}

@Test func tlRejectsMalformedInputWithoutMoving() throws {
    // Truncated bytes value.
    var r = TLReader([0x05, 1, 2, 3])
    #expect(throws: MTProtoError.truncated) { try r.tlBytes() }
    #expect(r.position == 0)
    // Nonzero padding.
    r = TLReader([0x01, 0xAA, 0x00, 0x01])
    #expect(throws: MTProtoError.self) { try r.tlBytes() }
    #expect(r.position == 0)
    // Long prefix for a short value (non-minimal).
    r = TLReader([0xFE, 0x04, 0x00, 0x00, 1, 2, 3, 4])
    #expect(throws: MTProtoError.self) { try r.tlBytes() }
    // 0xFF prefix.
    r = TLReader([0xFF, 0, 0, 0])
    #expect(throws: MTProtoError.self) { try r.tlBytes() }
    // Oversized declared length (16 MiB - 1) in a short buffer: truncated, nothing allocated.
    r = TLReader([0xFE, 0xFF, 0xFF, 0xFF, 0])
    #expect(throws: MTProtoError.truncated) { try r.tlBytes() }
    // Bool with another constructor.
    r = TLReader([0x01, 0x02, 0x03, 0x04])
    #expect(throws: MTProtoError.unexpectedConstructor(0x0403_0201)) { try r.bool() }
    #expect(r.position == 0)
    // Vector count negative, too large, or larger than the data.
    var w = TLWriter()
    w.vectorHeader(count: -1)
    r = TLReader(w.bytes)
    #expect(throws: MTProtoError.self) { try r.vectorOfInt64(max: 100) }
    w = TLWriter()
    w.vectorHeader(count: 1000)
    r = TLReader(w.bytes)
    #expect(throws: MTProtoError.self) { try r.vectorOfInt64(max: 100) }
    #expect(throws: MTProtoError.truncated) { var r2 = TLReader(w.bytes); _ = try r2.vectorOfInt64(max: 5000) }
    // Wrong constructor.
    r = TLReader([0x15, 0xC4, 0xB5, 0x1C])
    #expect(throws: MTProtoError.unexpectedConstructor(0x1cb5_c415)) { try r.expect(0x7abe_77ec) }
    // Invalid UTF-8 string.
    r = TLReader([0x02, 0xC3, 0x28, 0x00])
    #expect(throws: MTProtoError.self) { try r.string() }
    // Trailing bytes.
    r = TLReader([0, 0, 0, 0, 1])
    _ = try r.int32()
    #expect(throws: MTProtoError.trailingBytes) { try r.finish() }
}

@Test func tlRandomInputNeverTraps() {
    var rng = SplitMix64(seed: 5)
    for _ in 0..<3000 {
        let n = Int(rng.next() % 40)
        var b = randomBytes(count: n, using: &rng)
        if n > 0, rng.next() % 3 == 0 { b[0] = 0xFE }
        var r = TLReader(b)
        _ = try? r.tlBytes()
        _ = try? r.string()
        _ = try? r.vectorOfInt64(max: 8192)
        _ = try? r.bool()
        _ = try? r.int64()
        _ = try? r.bigInteger()
    }
}
