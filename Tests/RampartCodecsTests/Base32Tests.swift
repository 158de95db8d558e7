import RampartCodecs
import RampartTestSupport
import Testing

@Suite("Base32")
struct Base32Tests {
    /// RFC 4648 §10, padding stripped.
    @Test("RFC 4648 §10 vectors", arguments: [
        ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"),
        ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI"),
    ])
    func rfcVectors(plain: String, encoded: String) throws {
        #expect(Base32.encode(Array(plain.utf8)) == encoded)
        #expect(try Base32.decode(encoded) == Array(plain.utf8))
        #expect(try Base32.decode(encoded.lowercased(), mode: .lenient) == Array(plain.utf8))
    }

    @Test("Strict mode refuses lower case, padding, separators, foreign bytes; offsets are UTF-8 offsets")
    func strict() {
        #expect(throws: Base32Error.invalidCharacter(offset: 0)) { try Base32.decode("my") }
        #expect(throws: Base32Error.invalidCharacter(offset: 2)) { try Base32.decode("MY======") }
        #expect(throws: Base32Error.invalidCharacter(offset: 4)) { try Base32.decode("MZXW-6YTB") }
        #expect(throws: Base32Error.invalidCharacter(offset: 1)) { try Base32.decode("M1") }
        #expect(throws: Base32Error.invalidCharacter(offset: 1)) { try Base32.decode("M8") }
        #expect(throws: Base32Error.invalidCharacter(offset: 2)) { try Base32.decode("MYé") }
        #expect(throws: Base32Error.invalidCharacter(offset: 0)) { try Base32.decode(" MY") }
        #expect(throws: Base32Error.invalidCharacter(offset: 2)) { try Base32.decode("MY=", mode: .lenient) }
        #expect(throws: Base32Error.invalidCharacter(offset: 1)) { try Base32.decode("M_Y", mode: .lenient) }
    }

    @Test("Impossible lengths and non-zero trailing bits")
    func lengthsAndTrailingBits() {
        for bad in ["M", "MZX", "MZXW6Y", "MZXW6YTBO"] {
            #expect(throws: Base32Error.invalidLength(symbols: bad.count)) { try Base32.decode(bad) }
        }
        // "MZ" carries 10 bits for 8: the last two must be zero ("MY" is canonical for "f").
        #expect(throws: Base32Error.nonZeroTrailingBits) { try Base32.decode("MZ") }
        #expect(throws: Base32Error.nonZeroTrailingBits) { try Base32.decode("MZXR") }
        #expect(throws: Base32Error.nonZeroTrailingBits) { try Base32.decode("MZXW7") }
        #expect(throws: Base32Error.nonZeroTrailingBits) { try Base32.decode("MZXW6YR") }
    }

    @Test("Lenient mode: Threema ID backup layout (groups of four, dashes, spaces, line breaks, any case)")
    func lenient() throws {
        var rng = SplitMix64(seed: 32)
        let data = rng.bytes(50)                        // an ID backup's 50 bytes: 80 symbols
        let text = Base32.encode(data)
        #expect(text.count == 80)
        var grouped = ""
        for (i, c) in text.enumerated() {
            if i > 0 && i % 4 == 0 { grouped += i % 40 == 0 ? "\r\n" : (i % 8 == 0 ? " - " : "-") }
            grouped.append(i % 3 == 0 ? Character(c.lowercased()) : c)
        }
        #expect(try Base32.decode(grouped, mode: .lenient) == data)
        #expect(throws: Base32Error.invalidCharacter(offset: 0)) { try Base32.decode(grouped) }
        #expect(try Base32.decode(" - \n", mode: .lenient) == [])
        #expect(try Base32.decode("xxmy".dropFirst(2), mode: .lenient) == [0x66])
        #expect(throws: Base32Error.invalidCharacter(offset: 0)) { try Base32.decode("\tMY") }
    }

    @Test("Round trips of seeded random data, lengths 0…300; random text never traps")
    func roundTripsAndFuzz() throws {
        var rng = SplitMix64(seed: 0xB32)
        for n in 0...300 {
            let data = rng.bytes(n)
            let text = Base32.encode(data)
            #expect(text.utf8.count == (8 * n + 4) / 5)
            #expect(try Base32.decode(text) == data)
        }
        let symbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567abcxyz =-\n01".utf8)
        for _ in 0..<5000 {
            let n = Int(rng.next() % 40)
            let text = String(decoding: (0..<n).map { _ in symbols[Int(rng.next() % UInt64(symbols.count))] }, as: UTF8.self)
            for mode in [Base32.Mode.strict, .lenient] {
                do {
                    let bytes = try Base32.decode(text, mode: mode)
                    // Whatever decodes re-encodes to the same symbols (canonical), up to case and separators.
                    let kept = text.uppercased().filter { $0 != " " && $0 != "-" && $0 != "\n" }
                    #expect(Base32.encode(bytes) == kept)
                } catch {
                    _ = error as Base32Error
                }
            }
        }
    }
}
