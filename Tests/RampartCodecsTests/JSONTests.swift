import RampartCodecs
import RampartTestSupport
import Testing

private func parse(_ text: String, maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONError) -> JSONValue {
    try JSONValue(parsing: text, maxDepth: maxDepth)
}

/// A seeded random JSON value, `depth` levels at most.
private func randomValue(_ rng: inout SplitMix64, depth: Int) -> JSONValue {
    let pick = rng.next() % (depth > 0 ? 8 : 6)
    switch pick {
    case 0: return .null
    case 1: return .bool(rng.next() & 1 == 1)
    case 2: return .number(JSONNumber(Int64(bitPattern: rng.next()) >> (rng.next() % 64)))
    case 3: return .number(JSONNumber(Double(bitPattern: rng.next() & 0x7FEF_FFFF_FFFF_FFFF | (rng.next() & 1) << 63))!)
    case 4, 5:
        var scalars = String.UnicodeScalarView()
        for _ in 0..<(rng.next() % 12) {
            let choices: [UInt32] = [UInt32(rng.next() % 0x20), 0x22, 0x5C, 0x2F, UInt32(0x20 + rng.next() % 0x5F),
                                     0xE9, 0x7F, 0x2028, UInt32(0x1F600 + rng.next() % 0x50)]
            scalars.append(Unicode.Scalar(choices[Int(rng.next() % UInt64(choices.count))])!)
        }
        return .string(String(scalars))
    case 6: return .array((0..<(rng.next() % 5)).map { _ in randomValue(&rng, depth: depth - 1) })
    default:
        var members: [JSONMember] = []
        for k in 0..<(rng.next() % 5) { members.append(JSONMember("k\(k)\(rng.next() % 3)", randomValue(&rng, depth: depth - 1))) }
        return .object(members)
    }
}

@Suite("JSON")
struct JSONTests {
    @Test("RFC 8259 §13 examples parse, keep member order and serialize compactly")
    func rfcExamples() throws {
        let image = """
        {
          "Image": {
            "Width":  800,
            "Height": 600,
            "Title":  "View from 15th Floor",
            "Thumbnail": {
              "Url":    "http://www.example.com/image/481989943",
              "Height": 125,
              "Width":  100
            },
            "Animated" : false,
            "IDs": [116, 943, 234, 38793]
          }
        }
        """
        let v = try parse(image)
        #expect(v["Image"]?["Width"]?.number?.int64 == 800)
        #expect(v["Image"]?["Thumbnail"]?["Url"]?.string == "http://www.example.com/image/481989943")
        #expect(v["Image"]?["Animated"]?.bool == false)
        #expect(v["Image"]?["IDs"]?[3]?.number?.int64 == 38793)
        #expect(v["Image"]?.object?.map(\.key) == ["Width", "Height", "Title", "Thumbnail", "Animated", "IDs"])
        #expect(v.serializedString == #"{"Image":{"Width":800,"Height":600,"Title":"View from 15th Floor","Thumbnail":{"Url":"http://www.example.com/image/481989943","Height":125,"Width":100},"Animated":false,"IDs":[116,943,234,38793]}}"#)
        let places = """
        [ { "precision": "zip", "Latitude":  37.7668, "Longitude": -122.3959, "Address": "",
            "City": "SAN FRANCISCO", "State": "CA", "Zip": "94107", "Country": "US" },
          { "precision": "zip", "Latitude":  37.371991, "Longitude": -122.026020, "Address": "",
            "City": "SUNNYVALE", "State": "CA", "Zip": "94085", "Country": "US" } ]
        """
        let p = try parse(places)
        #expect(p[1]?["Longitude"]?.number?.text == "-122.026020")      // exact text kept
        #expect(p[1]?["Longitude"]?.number?.double == -122.02602)
        #expect(try parse(p.serializedString) == p)
        // Scalars at the top level (RFC 8259 allows any value), with whitespace around.
        #expect(try parse(" \t\r\n\"Hello world!\"\n") == .string("Hello world!"))
        #expect(try parse("42") == .number(JSONNumber(42)))
        #expect(try parse("true") == .bool(true))
        #expect(try parse("null").isNull)
        #expect(try parse("[]") == .array([]) && (try parse("{}")) == .object([]))
    }

    @Test("Numbers: exact text, Int64 and Double readings, grammar")
    func numbers() throws {
        #expect(try parse("9223372036854775807").number?.int64 == .max)
        #expect(try parse("-9223372036854775808").number?.int64 == .min)
        #expect(try parse("9223372036854775808").number?.int64 == nil)
        #expect(try parse("9223372036854775808").number?.double == 9.223372036854775808e18)
        #expect(try parse("1.0").number?.int64 == nil)
        #expect(try parse("1e2").number?.int64 == nil)
        #expect(try parse("1E2").number?.double == 100)
        #expect(try parse("-0").number?.text == "-0")
        #expect(try parse("-0.0e-0").number?.double == 0)
        #expect(try parse("1e400").number?.double == nil)
        #expect(try parse("1e400").number?.text == "1e400")
        #expect(try parse("0.1").serializedString == "0.1")
        #expect(JSONNumber(text: "01") == nil && JSONNumber(text: "") == nil && JSONNumber(text: "1 ") == nil)
        #expect(JSONNumber(text: "-1.5E+3")?.double == -1500)
        #expect(JSONNumber(Double.nan) == nil && JSONNumber(-Double.infinity) == nil)
        #expect(JSONNumber(2.5)?.text == "2.5")
        #expect(JSONNumber(Int64.min).text == "-9223372036854775808")
    }

    @Test("Strings: escapes, surrogate pairs, UTF-8, and the writer's escaping")
    func strings() throws {
        #expect(try parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(try parse(#""\u00e9\u00E9\u0000""#) == .string("éé\u{0}"))
        #expect(try parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try parse("\"é😀\u{7F}\"") == .string("é😀\u{7F}"))
        // Writer: controls escaped (short forms where they exist), `/` and non-ASCII as they are.
        let all = String(String.UnicodeScalarView((0..<32).map { Unicode.Scalar(UInt8($0)) })) + "\"\\/é😀\u{7F}"
        let expected = #""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f"#
            + #"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f"#
            + "\\\"\\\\/é😀\u{7F}\""
        #expect(JSONValue.string(all).serializedString == expected)
        #expect(try parse(expected) == .string(all))
        // Keys are compared byte for byte: precomposed and decomposed é are different keys.
        let v = try parse("{\"\u{E9}\":1,\"e\u{301}\":2}")
        #expect(v.object?.count == 2)
        #expect(v["e\u{301}"]?.number?.int64 == 2 && v["\u{E9}"]?.number?.int64 == 1)
    }

    /// Each refusal, with its kind and byte offset.
    @Test("Malformed input: kind and byte offset of every error", arguments: [
        ("", JSONError.Kind.unexpectedEnd, 0), (" ", .unexpectedEnd, 1),
        ("[1,]", .unexpectedByte(0x5D), 3), (#"{"a":1,}"#, .unexpectedByte(0x7D), 7),
        ("[1 2]", .unexpectedByte(0x32), 3), ("// c\n1", .unexpectedByte(0x2F), 0), ("/* */1", .unexpectedByte(0x2F), 0),
        ("1 // c", .unexpectedByte(0x2F), 2), ("1 2", .unexpectedByte(0x32), 2), ("[1]]", .unexpectedByte(0x5D), 3),
        ("01", .invalidNumber, 1), ("-01", .invalidNumber, 2), ("+1", .unexpectedByte(0x2B), 0),
        ("1.", .unexpectedEnd, 2), ("1.e5", .invalidNumber, 2), (".5", .unexpectedByte(0x2E), 0),
        ("1e", .unexpectedEnd, 2), ("1e+", .unexpectedEnd, 3), ("1ex", .invalidNumber, 2), ("-", .unexpectedEnd, 1),
        ("-a", .invalidNumber, 1), ("0x10", .unexpectedByte(0x78), 1), ("1_000", .unexpectedByte(0x5F), 1),
        ("NaN", .unexpectedByte(0x4E), 0), ("-Infinity", .invalidNumber, 1), ("[Infinity]", .unexpectedByte(0x49), 1),
        ("tru", .unexpectedEnd, 3), ("trUe", .unexpectedByte(0x55), 2), ("nulll", .unexpectedByte(0x6C), 4),
        ("True", .unexpectedByte(0x54), 0), ("'a'", .unexpectedByte(0x27), 0),
        ("\"abc", .unexpectedEnd, 4), (#""\x""#, .invalidEscape, 1), (#""\u12""#, .invalidEscape, 5),
        (#""\u12g4""#, .invalidEscape, 5), ("\"\\", .unexpectedEnd, 2), (#""\U0041""#, .invalidEscape, 1),
        (#""\ud800""#, .loneSurrogate, 1), (#""\udc00""#, .loneSurrogate, 1), (#""a\ud800\u0041""#, .loneSurrogate, 2),
        (#""\ud800\ud800""#, .loneSurrogate, 1), (#""\ud800\n""#, .loneSurrogate, 1),
        ("\"a\tb\"", .controlCharacter, 2), ("\"\n\"", .controlCharacter, 1), ("\"\u{0}\"", .controlCharacter, 1),
        (#"{"a":1,"a":2}"#, .duplicateKey("a"), 7), (#"{"a":1,"\u0061":2}"#, .duplicateKey("a"), 7),
        (#"{"a":{"b":1,"b":1}}"#, .duplicateKey("b"), 12),
        ("{1:2}", .unexpectedByte(0x31), 1), (#"{"a" 1}"#, .unexpectedByte(0x31), 5), (#"{"a":}"#, .unexpectedByte(0x7D), 5),
        (#"{"a":1 "b":2}"#, .unexpectedByte(0x22), 7), ("{,}", .unexpectedByte(0x2C), 1), ("[,1]", .unexpectedByte(0x2C), 1),
        ("[", .unexpectedEnd, 1), ("[1", .unexpectedEnd, 2), ("{\"a\"", .unexpectedEnd, 4), ("{", .unexpectedEnd, 1),
        ("\u{A0}1", .unexpectedByte(0xC2), 0), ("\u{C}1", .unexpectedByte(0x0C), 0), ("\u{FEFF}1", .unexpectedByte(0xEF), 0),
    ] as [(String, JSONError.Kind, Int)])
    func malformed(text: String, kind: JSONError.Kind, offset: Int) {
        #expect(throws: JSONError(kind, at: offset)) { try parse(text) }
    }

    @Test("Invalid UTF-8 in strings: byte offset of the bad byte", arguments: [
        ([0x22, 0xC3, 0x28, 0x22], 2), ([0x22, 0xC0, 0x80, 0x22], 1), ([0x22, 0xC1, 0xBF, 0x22], 1),
        ([0x22, 0xE0, 0x80, 0x80, 0x22], 2), ([0x22, 0xED, 0xA0, 0x80, 0x22], 2), ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 2),
        ([0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], 1), ([0x22, 0xFF, 0x22], 1), ([0x22, 0x80, 0x22], 1),
        ([0x22, 0xE2, 0x82, 0x41, 0x22], 3), ([0x22, 0xF0, 0x9F, 0x98, 0x22], 4),
    ] as [([UInt8], Int)])
    func invalidUTF8(bytes: [UInt8], offset: Int) {
        #expect(throws: JSONError(.invalidUTF8, at: offset)) { try JSONValue(parsing: bytes) }
    }

    @Test("Limits: nesting depth and input size")
    func limits() throws {
        let deep64 = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(try parse(deep64).array?.count == 1)
        let deep65 = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONError(.tooDeep, at: 64)) { try parse(deep65) }
        #expect(throws: JSONError(.tooDeep, at: 64)) { try parse(String(repeating: "[", count: 1_000_000)) }
        #expect(throws: JSONError(.tooDeep, at: 22)) { try parse(String(repeating: "{\"a\":", count: 3) + "[[[[[[[[", maxDepth: 10) }
        #expect(throws: JSONError(.tooDeep, at: 0)) { try parse("[]", maxDepth: 0) }
        #expect(try parse("1", maxDepth: 0) == .number(JSONNumber(1)))
        #expect(throws: JSONError(.tooLarge, at: 0)) { try JSONValue(parsing: Array("[1,2,3]".utf8), maxInputBytes: 6) }
        #expect(try JSONValue(parsing: Array("[1,2,3]".utf8), maxInputBytes: 7).array?.count == 3)
        #expect(throws: JSONError(.unexpectedEnd, at: 1_000_000)) { try parse("\"" + String(repeating: "a", count: 999_999)) }
    }

    @Test("Round trips: 3000 seeded random values serialize, parse back equal, and reserialize identically")
    func roundTrips() throws {
        var rng = SplitMix64(seed: 0x15_0A)
        for _ in 0..<3000 {
            var v = randomValue(&rng, depth: 4)
            // Random objects may repeat a key; the parser refuses those, so drop repeats first.
            v = dedup(v)
            let bytes = v.serialized()
            let back = try JSONValue(parsing: bytes)
            #expect(back == v)
            #expect(back.serialized() == bytes)
        }
    }

    private func dedup(_ v: JSONValue) -> JSONValue {
        switch v {
        case .array(let a): return .array(a.map(dedup))
        case .object(let members):
            var seen = Set<String>()
            return .object(members.filter { seen.insert($0.key).inserted }.map { JSONMember($0.key, dedup($0.value)) })
        default: return v
        }
    }

    @Test("Fuzz: random and mutated documents give a value or a JSONError (20 000 inputs); values reserialize stably")
    func fuzz() {
        var rng = SplitMix64(seed: 0xF022)
        var seeds: [[UInt8]] = (0..<50).map { _ in dedup(randomValue(&rng, depth: 3)).serialized() }
        seeds.append(Array(#"{"identity":"ECHOECHO","nickname":"Ëcho","contacts":[{"id":"ABCDEFGH","v":2}],"n":-1.5e-3}"#.utf8))
        let alphabet = Array("{}[],:\"\\ -+.eE0123456789tfnrulsau".utf8) + [0x00, 0x0A, 0xC3, 0xA9, 0xED, 0xFF]
        var values = 0
        for i in 0..<20_000 {
            var b: [UInt8]
            if i % 2 == 0 {
                b = (0..<(rng.next() % 40)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            } else {
                b = seeds[Int(rng.next() % UInt64(seeds.count))]
                for _ in 0..<(1 + rng.next() % 3) {
                    guard !b.isEmpty else { break }
                    let at = Int(rng.next() % UInt64(b.count))
                    switch rng.next() % 4 {
                    case 0: b[at] ^= UInt8(1 << (rng.next() % 8))
                    case 1: b.remove(at: at)
                    case 2: b.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                    default: b = Array(b[0..<at])
                    }
                }
            }
            let copy = b
            do {
                let v = try JSONValue(parsing: b, maxDepth: 8)
                values += 1
                let again = v.serialized()
                #expect((try? JSONValue(parsing: again)) == v)
            } catch {
                #expect(error.offset >= 0 && error.offset <= b.count)
            }
            #expect(b == copy)
        }
        #expect(values > 100)
    }
}
