import Foundation
import RampartCodecs
import RampartTestSupport
import Testing

// MARK: - Helpers

/// The vector file `Vectors/codecs/deflate.json` (written by `Vectors/generate_deflate.py`).
private func deflateVectors() -> [String: Any] {
    let path = projectRoot + "/Vectors/codecs/deflate.json"
    guard let data = FileManager.default.contents(atPath: path),
          let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
    return object
}

private func vectorCases(_ key: String) -> [[String: Any]] { deflateVectors()[key] as? [[String: Any]] ?? [] }

/// Byte i is (7i + 3) mod 256 (the stored-writer vectors' data).
private func pattern(_ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) } }

/// Decodes with the decoder for `format` ("raw", "zlib" or "gzip").
private func decode(_ format: String, _ bytes: [UInt8], limit: Int) throws(DeflateError) -> [UInt8] {
    switch format {
    case "raw": return try Deflate.decompress(bytes, maxOutputBytes: limit)
    case "zlib": return try Zlib.decompress(bytes, maxOutputBytes: limit)
    default: return try Gzip.decompress(bytes, maxOutputBytes: limit)
    }
}

/// Writes DEFLATE bit streams by hand: values least significant bit first, Huffman codes most
/// significant bit first (RFC 1951 §3.1.1).
struct BitWriter {
    var bytes: [UInt8] = []
    var bitCount = 0

    mutating func put(_ value: Int, _ n: Int) {
        for i in 0..<n {
            if bitCount % 8 == 0 { bytes.append(0) }
            if (value >> i) & 1 != 0 { bytes[bytes.count - 1] |= UInt8(1 << (bitCount % 8)) }
            bitCount += 1
        }
    }

    mutating func code(_ code: Int, _ length: Int) {
        for i in (0..<length).reversed() { put((code >> i) & 1, 1) }
    }

    /// The fixed literal/length code of `symbol` (RFC 1951 §3.2.6).
    mutating func fixed(_ symbol: Int) {
        switch symbol {
        case 0..<144: code(0x30 + symbol, 8)
        case 144..<256: code(0x190 + symbol - 144, 9)
        case 256..<280: code(symbol - 256, 7)
        default: code(0xC0 + symbol - 280, 8)
        }
    }
}

/// Canonical codes (RFC 1951 §3.2.2) for `lengths`: code of symbol i, or -1 when unused.
func canonicalCodes(_ lengths: [Int]) -> [Int] {
    var count = [Int](repeating: 0, count: 16)
    for l in lengths where l > 0 { count[l] += 1 }
    var next = [Int](repeating: 0, count: 16)
    var code = 0
    for len in 1..<16 {
        code = (code + count[len - 1]) << 1
        next[len] = code
    }
    return lengths.map { l in
        guard l > 0 else { return -1 }
        defer { next[l] += 1 }
        return next[l]
    }
}

/// Starts a dynamic block: header, code-length code lengths `cl` (indexed by symbol 0…18) and the
/// code-length symbols `sequence` (symbol, extra bits value); the caller appends the data.
func dynamicBlock(final: Bool = true, hlit: Int, hdist: Int, cl: [Int], sequence: [(Int, Int)]) -> BitWriter {
    let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
    var w = BitWriter()
    w.put(final ? 1 : 0, 1)
    w.put(2, 2)
    w.put(hlit - 257, 5)
    w.put(hdist - 1, 5)
    w.put(19 - 4, 4)
    for s in order { w.put(cl[s], 3) }
    let codes = canonicalCodes(cl)
    for (sym, extra) in sequence {
        w.code(codes[sym], cl[sym])
        switch sym {
        case 16: w.put(extra, 2)
        case 17: w.put(extra, 3)
        case 18: w.put(extra, 7)
        default: break
        }
    }
    return w
}

/// A complete code-length code: symbols 0…15 with four bits each (16 × 2^-4 = 1), no repeat codes.
let fourBitCL: [Int] = Array(repeating: 4, count: 16) + [0, 0, 0]

/// Literal/length and distance lengths as a sequence of plain code-length symbols.
func plainLengths(_ lengths: [Int]) -> [(Int, Int)] { lengths.map { ($0, 0) } }

// MARK: - Tests

@Suite("DEFLATE, zlib and gzip")
struct DeflateTests {
    @Test("Vector file: every zlib-produced stream (levels 0/1/6/9, five strategies, three wrappers) decodes")
    func zlibStreams() throws {
        let cases = vectorCases("cases")
        #expect(cases.count > 200)
        for c in cases {
            let id = c["id"] as! String
            let format = c["format"] as! String
            let compressed = hexBytes(c["compressed"] as! String)
            let length = c["plainLength"] as! Int
            let out = try decode(format, compressed, limit: length)
            #expect(out.count == length, "\(id)")
            #expect(CRC32.checksum(data: out) == UInt32(c["plainCRC32"] as! Int), "\(id)")
            if let plain = c["plain"] as? String { #expect(out == hexBytes(plain), "\(id)") }
            // One byte less room is refused, whatever the format.
            if length > 0 {
                #expect(throws: DeflateError.outputLimitExceeded(length - 1), "\(id)") {
                    try decode(format, compressed, limit: length - 1)
                }
            }
            if format == "raw" {
                let prefix = try Deflate.decompressPrefix(compressed + [1, 2, 3], maxOutputBytes: length)
                #expect(prefix.consumed == compressed.count && prefix.output == out, "\(id)")
            }
        }
    }

    @Test("Vector file: gzip headers with FTEXT, FEXTRA, FNAME, FCOMMENT and FHCRC")
    func gzipHeaders() throws {
        let cases = vectorCases("gzipHeaders")
        #expect(cases.count == 7)
        for c in cases {
            let member = hexBytes(c["member"] as! String)
            let flags = c["flags"] as! Int
            let (m, consumed) = try Gzip.readMember(member + [0x1F], maxOutputBytes: 1 << 20)
            #expect(consumed == member.count)
            #expect(m.data.count == c["plainLength"] as! Int)
            #expect(CRC32.checksum(data: m.data) == UInt32(c["plainCRC32"] as! Int))
            #expect(m.header.isText == (flags & 1 != 0))
            #expect(m.header.hasHeaderCRC == (flags & 2 != 0))
            #expect(m.header.modificationTime == UInt32(c["mtime"] as! Int))
            #expect(m.header.extraFlags == UInt8(c["xfl"] as! Int))
            #expect(m.header.operatingSystem == UInt8(c["os"] as! Int))
            #expect(m.header.extra == (c["extra"] as? String).map { hexBytes($0) })
            #expect(m.header.fileName == (c["name"] as? String).map { hexBytes($0) })
            #expect(m.header.comment == (c["comment"] as? String).map { hexBytes($0) })
            #expect(try Gzip.decompress(member, maxOutputBytes: 1 << 20) == m.data)
            if flags & 2 != 0 {
                // Corrupt the header CRC16: the byte before the DEFLATE data is its high byte.
                var bad = member
                let extraLength = (c["extra"] as? String).map { hexBytes($0).count + 2 } ?? 0
                let nameLength = (c["name"] as? String).map { hexBytes($0).count + 1 } ?? 0
                let commentLength = (c["comment"] as? String).map { hexBytes($0).count + 1 } ?? 0
                bad[10 + extraLength + nameLength + commentLength] ^= 1
                #expect(throws: DeflateError.headerChecksumMismatch) { try Gzip.decompress(bad, maxOutputBytes: 1 << 20) }
            }
        }
    }

    @Test("Stored writers equal libz's level-0 output byte for byte (gzip, zlib, raw)")
    func storedWriters() throws {
        let cases = vectorCases("storedWriter")
        #expect(cases.count == 30)
        for c in cases {
            let format = c["format"] as! String
            let plain = pattern(c["plainLength"] as! Int)
            #expect(CRC32.checksum(data: plain) == UInt32(c["plainCRC32"] as! Int))
            let written: [UInt8]
            switch format {
            case "gzip": written = Gzip.compressStored(plain)
            case "zlib": written = Zlib.compressStored(plain)
            default: written = Deflate.compressStored(plain)
            }
            #expect(written.count == c["outputLength"] as! Int, "\(c["id"]!)")
            #expect(CRC32.checksum(data: written) == UInt32(c["outputCRC32"] as! Int), "\(c["id"]!)")
            if let output = c["output"] as? String { #expect(written == hexBytes(output)) }
            #expect(try decode(format, written, limit: plain.count) == plain)
        }
        // Header fields of the gzip writer.
        let g = Gzip.compressStored([1, 2, 3], modificationTime: 0x0102_0304, operatingSystem: 255)
        let m = try Gzip.readMember(g, maxOutputBytes: 3)
        #expect(m.member.header == Gzip.Header(modificationTime: 0x0102_0304, extraFlags: 4, operatingSystem: 255))
        #expect(m.member.data == [1, 2, 3])
    }

    @Test("Adler-32: RFC 1950 check values and chunking past 5552 bytes")
    func adler32() {
        #expect(Adler32.checksum(data: [UInt8]()) == 1)
        #expect(Adler32.checksum(data: Array("Wikipedia".utf8)) == 0x11E6_0398)
        #expect(Adler32.checksum(data: Array("123456789".utf8)) == 0x091E_01DE)
        // 0xFF bytes stress the deferred reduction; the value is from Python's zlib.adler32.
        #expect(Adler32.checksum(data: [UInt8](repeating: 0xFF, count: 100_000)) == 0x149A_302C)
        var a = Adler32()
        let data = pattern(20_000)
        a.update(data: data[0..<7000])
        a.update(data: data[7000...])
        #expect(a.finalize() == Adler32.checksum(data: data))
    }

    // MARK: Malformed input, one case per error

    @Test("Raw DEFLATE: each validity check has its error")
    func malformedRaw() {
        func expectError(_ e: DeflateError, _ bytes: [UInt8], limit: Int = 1 << 16, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(throws: e, sourceLocation: sourceLocation) { try Deflate.decompress(bytes, maxOutputBytes: limit) }
        }
        expectError(.truncated, [])
        expectError(.invalidBlockType, [0x07])                              // BFINAL 1, BTYPE 11
        expectError(.invalidBlockType, [0x06])                              // BFINAL 0, BTYPE 11
        expectError(.storedLengthMismatch, [0x01, 0x05, 0x00, 0x00, 0x00])
        expectError(.storedLengthMismatch, [0x01, 0x05, 0x00, 0xFA, 0xFE])
        expectError(.truncated, [0x01, 0x05, 0x00, 0xFA, 0xFF, 0x61])       // LEN 5, one byte present
        expectError(.truncated, [0x01, 0x05, 0x00])
        expectError(.truncated, [0x00, 0x00, 0x00, 0xFF, 0xFF])             // non-final empty block, then nothing
        expectError(.outputLimitExceeded(4), [0x01, 0x05, 0x00, 0xFA, 0xFF, 1, 2, 3, 4, 5], limit: 4)
        expectError(.trailingData, [0x01, 0x00, 0x00, 0xFF, 0xFF, 0x00])
        expectError(.outputLimitExceeded(0), [0x01, 0x01, 0x00, 0xFE, 0xFF, 0x61], limit: 0)
        #expect((try? Deflate.decompress([0x01, 0x00, 0x00, 0xFF, 0xFF], maxOutputBytes: 0)) == [])
        #expect((try? Deflate.decompress([0x03, 0x00], maxOutputBytes: 0)) == [])   // fixed block: end-of-block only

        // Fixed block: literal/length symbols 286 and 287, distance symbols 30 and 31.
        for sym in [286, 287] {
            var w = BitWriter(); w.put(1, 1); w.put(1, 2); w.fixed(sym)
            expectError(.invalidSymbol, w.bytes)
        }
        for d in [30, 31] {
            var w = BitWriter(); w.put(1, 1); w.put(1, 2); w.fixed(0x61); w.fixed(257); w.code(d, 5)
            expectError(.invalidSymbol, w.bytes)
        }
        // Distance 2 with one byte of output; distance 1 with none.
        do {
            var w = BitWriter(); w.put(1, 1); w.put(1, 2); w.fixed(0x61); w.fixed(257); w.code(1, 5); w.fixed(256)
            expectError(.distanceTooFarBack, w.bytes)
            var v = BitWriter(); v.put(1, 1); v.put(1, 2); v.fixed(257); v.code(0, 5); v.fixed(256)
            expectError(.distanceTooFarBack, v.bytes)
            var ok = BitWriter(); ok.put(1, 1); ok.put(1, 2); ok.fixed(0x61); ok.fixed(257); ok.code(0, 5); ok.fixed(256)
            #expect((try? Deflate.decompress(ok.bytes, maxOutputBytes: 4)) == Array("aaaa".utf8))
            // Distance too far back in a later block still counts the earlier blocks' output.
            var two = BitWriter(); two.put(0, 1); two.put(1, 2); two.fixed(0x61); two.fixed(0x62); two.fixed(256)
            two.put(1, 1); two.put(1, 2); two.fixed(258); two.code(1, 5); two.fixed(256)
            #expect((try? Deflate.decompress(two.bytes, maxOutputBytes: 10)) == Array("ababab".utf8))
        }

        // Dynamic headers. The baseline: a complete literal/length code of two one-bit codes ('a' and
        // end-of-block) and one one-bit distance code.
        var litLens = [Int](repeating: 0, count: 257)
        litLens[0x61] = 1
        litLens[256] = 1
        let valid = dynamicBlock(hlit: 257, hdist: 1, cl: fourBitCL, sequence: plainLengths(litLens + [1]))
        do {
            var w = valid
            w.code(0, 1); w.code(0, 1); w.code(1, 1)                        // 'a' 'a' end
            #expect((try? Deflate.decompress(w.bytes, maxOutputBytes: 2)) == Array("aa".utf8))
        }
        // HLIT 287 > 286, HDIST 31 > 30.
        expectError(.invalidCodeLengths, dynamicBlock(hlit: 287, hdist: 1, cl: fourBitCL, sequence: []).bytes)
        expectError(.invalidCodeLengths, dynamicBlock(hlit: 257, hdist: 31, cl: fourBitCL, sequence: []).bytes)
        // A code-length code with symbols 16, 17, 18 (two bits each) plus 0 and 1 (two bits): 5 × 2^-2 > 1.
        var over = [Int](repeating: 0, count: 19)
        for s in [0, 1, 16, 17, 18] { over[s] = 2 }
        expectError(.overSubscribedCode, dynamicBlock(hlit: 257, hdist: 1, cl: over, sequence: []).bytes)
        // Incomplete code-length code: one symbol of 2 bits.
        var incomplete = [Int](repeating: 0, count: 19)
        incomplete[1] = 2
        expectError(.incompleteCode, dynamicBlock(hlit: 257, hdist: 1, cl: incomplete, sequence: []).bytes)
        // Repeat (16) with no previous length; repeat (18) past the 258 lengths.
        var cl = [Int](repeating: 0, count: 19)
        for s in [0, 1, 16, 17, 18] { cl[s] = 3 }
        cl[2] = 3; cl[3] = 3; cl[4] = 3                                     // 8 × 2^-3 = 1: complete
        expectError(.invalidCodeLengths, dynamicBlock(hlit: 257, hdist: 1, cl: cl, sequence: [(16, 0)]).bytes)
        expectError(.invalidCodeLengths, dynamicBlock(hlit: 257, hdist: 1, cl: cl,
                                                      sequence: [(18, 127), (18, 127), (18, 0)]).bytes)
        // 138 + 118 = 256 zeros, then 17 with 3 + 0 = 3 zeros: one past 258.
        expectError(.invalidCodeLengths, dynamicBlock(hlit: 257, hdist: 1, cl: cl,
                                                      sequence: [(18, 127), (18, 107), (17, 0), (1, 0)]).bytes)
        // End-of-block without a code.
        var noEOB = litLens
        noEOB[256] = 0
        noEOB[0x62] = 1
        expectError(.missingEndOfBlock, dynamicBlock(hlit: 257, hdist: 1, cl: fourBitCL, sequence: plainLengths(noEOB + [1])).bytes)
        // Over-subscribed literal/length code: three one-bit codes.
        var overLit = litLens
        overLit[0x62] = 1
        expectError(.overSubscribedCode, dynamicBlock(hlit: 257, hdist: 1, cl: fourBitCL, sequence: plainLengths(overLit + [1])).bytes)
        // Incomplete literal/length code with codes longer than one bit: 'a' and 256 with two bits.
        var incLit = [Int](repeating: 0, count: 257)
        incLit[0x61] = 2
        incLit[256] = 2
        expectError(.incompleteCode, dynamicBlock(hlit: 257, hdist: 1, cl: fourBitCL, sequence: plainLengths(incLit + [1])).bytes)
        // Incomplete distance code (two codes of 2 bits) is refused; a single one-bit code is allowed.
        expectError(.incompleteCode, dynamicBlock(hlit: 257, hdist: 2, cl: fourBitCL, sequence: plainLengths(litLens + [2, 2])).bytes)
        // A single one-bit literal/length code (256 only) is allowed; bit pattern 1 is then no code.
        var single = [Int](repeating: 0, count: 257)
        single[256] = 1
        do {
            var w = dynamicBlock(hlit: 257, hdist: 1, cl: fourBitCL, sequence: plainLengths(single + [0]))
            w.code(0, 1)
            #expect((try? Deflate.decompress(w.bytes, maxOutputBytes: 0)) == [])
            var bad = dynamicBlock(hlit: 257, hdist: 1, cl: fourBitCL, sequence: plainLengths(single + [0]))
            bad.code(1, 1)
            expectError(.invalidSymbol, bad.bytes)
        }
        // No distance codes at all, then a match: the distance decodes to nothing.
        do {
            var lens = litLens + [0]
            lens[257] = 1
            lens[0x61] = 2
            lens[256] = 2                                                   // 1 + 2 × 2^-2 = complete
            var w = dynamicBlock(hlit: 258, hdist: 1, cl: fourBitCL, sequence: plainLengths(lens + [0]))
            w.code(2, 2); w.code(0, 1); w.put(0, 8)                          // 'a', length 3, no distance code
            expectError(.invalidSymbol, w.bytes)
        }
    }

    @Test("gzip and zlib headers and trailers: each check has its error; every prefix is truncated")
    func malformedWrappers() throws {
        let plain = Array("hello, hello, hello, gzip".utf8)
        let gz = Gzip.compressStored(plain)
        func gzError(_ e: DeflateError, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(throws: e, sourceLocation: sourceLocation) { try Gzip.decompress(bytes, maxOutputBytes: 1 << 16) }
        }
        var b = gz; b[0] = 0x1E; gzError(.invalidHeader, b)
        b = gz; b[1] = 0x8C; gzError(.invalidHeader, b)
        gzError(.invalidHeader, [0x50, 0x4B, 3, 4])
        gzError(.invalidHeader, [0x1E])
        gzError(.unsupportedMethod, [0x1F, 0x8B, 0x09])
        gzError(.unsupportedFlags, [0x1F, 0x8B, 0x08, 0x80])
        b = gz; b[2] = 7; gzError(.unsupportedMethod, b)
        for bit in [0x20, 0x40, 0x80] { b = gz; b[3] |= UInt8(bit); gzError(.unsupportedFlags, b) }
        b = gz; b[b.count - 8] ^= 1; gzError(.checksumMismatch, b)
        b = gz; b[b.count - 4] ^= 1; gzError(.sizeMismatch, b)
        b = gz; b[b.count - 1] ^= 0x80; gzError(.sizeMismatch, b)
        gzError(.trailingData, gz + [0])
        gzError(.trailingData, gz + gz)                                      // concatenated: use readMember
        let two = try Gzip.readMember(gz + gz, maxOutputBytes: 100)
        #expect(two.consumed == gz.count && two.member.data == plain)
        b = gz; b[3] = 4; gzError(.truncated, b)                             // FEXTRA whose XLEN runs past the end
        b = Array(gz[0..<10]); b[3] = 8; gzError(.truncated, b + [0x61, 0x62])  // FNAME without its zero
        b = Array(gz[0..<10]); b[3] = 16; gzError(.truncated, b + [0x61])       // FCOMMENT without its zero
        b = Array(gz[0..<10]); b[3] = 2; gzError(.truncated, b + [0x00])        // half a CRC16
        for n in 0..<gz.count { gzError(.truncated, Array(gz[0..<n])) }

        let z = Zlib.compressStored(plain)
        #expect(z.prefix(2) == [0x78, 0x01])
        func zError(_ e: DeflateError, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(throws: e, sourceLocation: sourceLocation) { try Zlib.decompress(bytes, maxOutputBytes: 1 << 16) }
        }
        b = z; b[1] = 0x02; zError(.invalidHeader, b)                        // FCHECK wrong
        b = z; b[0] = 0x77; b[1] = fcheck(0x77, 0x00); zError(.unsupportedMethod, b)   // CM 7
        b = z; b[0] = 0x88; b[1] = fcheck(0x88, 0x00); zError(.unsupportedMethod, b)   // CINFO 8: 64 KiB window
        b = z; b[1] = fcheck(0x78, 0x20); zError(.unsupportedFlags, b)       // FDICT
        b = z; b[b.count - 1] ^= 1; zError(.checksumMismatch, b)
        zError(.trailingData, z + [0])
        for n in 0..<z.count { zError(.truncated, Array(z[0..<n])) }
        let raw = Deflate.compressStored(plain)
        for n in 0..<raw.count {
            #expect(throws: DeflateError.truncated) { try Deflate.decompress(Array(raw[0..<n]), maxOutputBytes: 100) }
        }
        // Non-contiguous collections decode the same.
        #expect(try Gzip.decompress(AnyCollection(gz), maxOutputBytes: 100) == plain)
        #expect(try Zlib.decompress(z.lazy.map { $0 }, maxOutputBytes: 100) == plain)
    }

    /// The FLG byte that makes `cmf, flg` a valid zlib header, keeping `flg`'s top three bits.
    private func fcheck(_ cmf: UInt8, _ flg: UInt8) -> UInt8 {
        let base = UInt16(cmf) << 8 | UInt16(flg & 0xE0)
        return (flg & 0xE0) | UInt8((31 - base % 31) % 31)
    }

    // MARK: Bombs, fuzzing, speed

    /// A dynamic block in which literal 0 and the match (length 258, distance 1) have codes of 1–2
    /// bits: 3 bits per 258 output bytes, `matches` of them.
    private func bomb(matches: Int) -> [UInt8] {
        var lens = [Int](repeating: 0, count: 286)
        lens[0] = 1
        lens[256] = 2
        lens[285] = 2
        // Code-length code: symbol 0, 1, 2 and 18 (for the runs of zeros) with two bits each.
        var cl = [Int](repeating: 0, count: 19)
        for s in [0, 1, 2, 18] { cl[s] = 2 }
        var seq: [(Int, Int)] = [(1, 0), (18, 127), (18, 117 - 11)]   // 0: 1; 1…255: zeros (138 + 117)
        seq += [(2, 0), (18, 28 - 11), (2, 0)]                          // 256: 2; 257…284: zeros; 285: 2
        seq += [(1, 0)]                                                 // distance 0: 1 bit
        var w = dynamicBlock(hlit: 286, hdist: 1, cl: cl, sequence: seq)
        let codes = canonicalCodes(lens)
        w.code(codes[0], 1)
        for _ in 0..<matches { w.code(codes[285], 2); w.code(0, 1) }
        w.code(codes[256], 2)
        return w.bytes
    }

    @Test("Decompression bomb: 6 KB that inflate to 4 MiB stop at the limit")
    func decompressionBomb() throws {
        let stream = bomb(matches: 16_300)
        #expect(stream.count < 6200)
        let full = 1 + 16_300 * 258
        let out = try Deflate.decompress(stream, maxOutputBytes: full)
        #expect(out.count == full && out.allSatisfy { $0 == 0 })
        #expect(throws: DeflateError.outputLimitExceeded(1 << 20)) { try Deflate.decompress(stream, maxOutputBytes: 1 << 20) }
        #expect(throws: DeflateError.outputLimitExceeded(full - 1)) { try Deflate.decompress(stream, maxOutputBytes: full - 1) }
        // Wrapped in gzip (CRC and size are never reached).
        var gz: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3] + stream
        gz += [0, 0, 0, 0, 0, 0, 0, 0]
        #expect(throws: DeflateError.outputLimitExceeded(1000)) { try Gzip.decompress(gz, maxOutputBytes: 1000) }
    }

    @Test("Random bytes: value or typed error, output within the limit (6000 inputs × 3 decoders)")
    func fuzzRandom() {
        var rng = SplitMix64(seed: 0xDEF1A7E)
        var decoded = 0
        for i in 0..<6000 {
            let n = Int(rng.next() % 200)
            var input = rng.bytes(n)
            // Steer a third of the inputs past the wrappers' headers.
            if i % 3 == 1, n >= 10 { input[0] = 0x1F; input[1] = 0x8B; input[2] = 8; input[3] &= 0x1F }
            if i % 3 == 2, n >= 2 { input[0] = 0x78; input[1] = 0x9C }
            let limit = Int(rng.next() % 5000)
            for format in ["rawPrefix", "zlib", "gzip"] {
                do {
                    let out = format == "rawPrefix"
                        ? try Deflate.decompressPrefix(input, maxOutputBytes: limit).output
                        : try decode(format, input, limit: limit)
                    #expect(out.count <= limit)
                    decoded += 1
                } catch {
                    _ = error as DeflateError
                }
            }
        }
        #expect(decoded > 0)   // random bytes sometimes begin a valid fixed block
    }

    @Test("Mutated vector streams: bit flips, truncations, insertions (8000 cases)")
    func fuzzMutations() {
        let seeds = vectorCases("cases").filter { ($0["plainLength"] as! Int) <= 1001 }
            .map { ($0["format"] as! String, hexBytes($0["compressed"] as! String)) }
        #expect(seeds.count > 100)
        var rng = SplitMix64(seed: 0x5EED)
        var errors = 0
        for _ in 0..<8000 {
            let (format, original) = seeds[Int(rng.next() % UInt64(seeds.count))]
            var b = original
            switch rng.next() % 4 {
            case 0 where !b.isEmpty:
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    let bit = Int(rng.next() % UInt64(b.count * 8))
                    b[bit / 8] ^= UInt8(1 << (bit % 8))
                }
            case 1:
                b = Array(b.prefix(Int(rng.next() % UInt64(b.count + 1))))
            case 2:
                let at = Int(rng.next() % UInt64(b.count + 1))
                b.insert(contentsOf: rng.bytes(1 + Int(rng.next() % 8)), at: at)
            default:
                if !b.isEmpty { b[Int(rng.next() % UInt64(b.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            }
            let limit = Int(rng.next() % 2000)
            let copy = b
            do {
                let out = try decode(format, b, limit: limit)
                #expect(out.count <= limit)
            } catch {
                errors += 1
            }
            #expect(b == copy)   // inputs are not mutated
        }
        #expect(errors > 1000)
    }

    @Test("Speed: inflating 1 MiB (zlib level 6 text, and stored) takes well under a second even in debug")
    func speed() throws {
        // The 300 KiB text vector, inflated four times in a row, is about 1.2 MiB of output.
        guard let c = vectorCases("cases").first(where: { ($0["plainLength"] as! Int) == 307_200 && $0["format"] as! String == "raw" })
        else { Issue.record("vector missing"); return }
        let compressed = hexBytes(c["compressed"] as! String)
        let clock = ContinuousClock()
        var total = 0
        let elapsed = try clock.measure {
            for _ in 0..<4 { total += try Deflate.decompress(compressed, maxOutputBytes: 1 << 20).count }
        }
        #expect(total == 4 * 307_200)
        #expect(elapsed < .seconds(2), "inflating 1.2 MiB took \(elapsed)")
        print("DEFLATE: 1.2 MiB of level-6 text inflated in \(elapsed)")
    }
}
