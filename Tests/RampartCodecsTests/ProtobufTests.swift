import RampartCodecs
import RampartTestSupport
import Testing

@Suite("Protobuf wire format")
struct ProtobufTests {
    /// The encoding examples of the protobuf documentation ("Base 128 Varints", "Length-Delimited").
    @Test func documentedEncodings() throws {
        var w = ProtobufWriter()
        w.varint(1, 150)
        #expect(w.bytes == [0x08, 0x96, 0x01])
        var s = ProtobufWriter()
        s.string(2, "testing")
        #expect(s.bytes == [0x12, 0x07] + Array("testing".utf8))
        var r = ProtobufReader([0x08, 0x96, 0x01] + s.bytes)
        let a = try #require(try r.next())
        #expect(a.number == 1)
        #expect(try a.varint() == 150)
        let b = try #require(try r.next())
        #expect(b.number == 2)
        #expect(try b.string() == "testing")
        #expect(try r.next() == nil)
        #expect(r.isAtEnd)
    }

    @Test func roundTripsEveryWireType() throws {
        var rng = SplitMix64(seed: 0x70b)
        for _ in 0..<500 {
            var w = ProtobufWriter()
            var expected: [ProtobufField] = []
            for _ in 0..<Int(rng.next() % 6) {
                let field = UInt32(1 + rng.next() % ((1 << 29) - 1))
                switch rng.next() % 4 {
                case 0:
                    let v = rng.next() >> (rng.next() % 64)
                    w.varint(field, v); expected.append(.init(number: field, value: .varint(v)))
                case 1:
                    let v = rng.next()
                    w.fixed64(field, v); expected.append(.init(number: field, value: .fixed64(v)))
                case 2:
                    let v = UInt32(truncatingIfNeeded: rng.next())
                    w.fixed32(field, v); expected.append(.init(number: field, value: .fixed32(v)))
                default:
                    let v = (0..<Int(rng.next() % 300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                    w.bytes(field, v); expected.append(.init(number: field, value: .lengthDelimited(ArraySlice(v))))
                }
            }
            var r = ProtobufReader(w.bytes)
            var got: [ProtobufField] = []
            while let f = try r.next() { got.append(f) }
            #expect(got.count == expected.count)
            for (g, e) in zip(got, expected) {
                #expect(g.number == e.number)
                switch (g.value, e.value) {
                case (.lengthDelimited(let x), .lengthDelimited(let y)): #expect(Array(x) == Array(y))
                default: #expect(g.value == e.value)
                }
            }
        }
    }

    @Test(arguments: [
        ([0x08], ProtobufError.truncated),                                  // tag without value
        ([0x08, 0x80], .truncated),                                         // varint cut
        ([0x09, 1, 2, 3], .truncated),                                      // fixed64 cut
        ([0x0d, 1, 2], .truncated),                                         // fixed32 cut
        ([0x0a, 0x05, 1, 2], .truncated),                                   // length beyond input
        ([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f], .truncated),                 // huge length, no allocation
        ([0x08] + [UInt8](repeating: 0xff, count: 9) + [0x02], .varintOverflow),
        ([0x08] + [UInt8](repeating: 0x80, count: 10) + [0x00], .varintOverflow),
        ([0x0b], .unsupportedWireType(3)),
        ([0x0c], .unsupportedWireType(4)),
        ([0x0e], .unsupportedWireType(6)),
        ([0x00, 0x00], .invalidFieldNumber(0)),
        ([0xf8, 0xff, 0xff, 0xff, 0x7f, 0x00], .invalidFieldNumber((1 << 32) - 1)),
    ] as [([UInt8], ProtobufError)])
    func malformedInputIsATypedError(input: [UInt8], error: ProtobufError) {
        var r = ProtobufReader(input)
        #expect(throws: error) { while try r.next() != nil {} }
    }

    @Test func wrongWireTypeAndUTF8AreTyped() throws {
        var r = ProtobufReader([0x12, 0x02, 0xc3, 0x28])   // field 2, invalid UTF-8
        let f = try #require(try r.next())
        #expect(throws: ProtobufError.invalidUTF8(field: 2)) { try f.string() }
        #expect(throws: ProtobufError.wrongWireType(field: 2)) { try f.varint() }
    }

    /// String fields are strict UTF-8: every classic malformation is refused, and on random and
    /// mutated byte strings the reader agrees with the standard library's strict
    /// `String(validating:)`.
    @Test func stringFieldsAreStrictUTF8() throws {
        func read(_ payload: [UInt8]) -> String? {
            var r = ProtobufReader([0x12, UInt8(payload.count)] + payload)
            guard let f = try? r.next() else { return nil }
            return try? f.string()
        }
        let invalid: [[UInt8]] = [
            [0x80], [0xbf], [0xc0, 0xaf], [0xc1, 0xbf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf],
            [0xf0, 0x80, 0x80, 0xaf], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xff], [0xc3], [0xe2, 0x82],
            [0x41, 0xef, 0xbf], [0xef, 0xbf, 0xbd, 0x80], [0x61, 0xc3, 0x28, 0x62],
        ]
        for b in invalid { #expect(read(b) == nil, "\(b) accepted") }
        let valid: [[UInt8]] = [[], [0x41], [0xc3, 0xa9], [0xe2, 0x82, 0xac], [0xf0, 0x9f, 0x98, 0x80], [0xef, 0xbf, 0xbd],
                                [0xed, 0x9f, 0xbf], [0xf4, 0x8f, 0xbf, 0xbf]]
        for b in valid { #expect(read(b).map { Array($0.utf8) } == b, "\(b) refused") }
        var rng = SplitMix64(seed: 0x7f8)
        let alphabet: [UInt8] = [0x41, 0x80, 0xbf, 0xc2, 0xc3, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0x9f, 0xa0, 0xbd]
        for _ in 0..<20_000 {
            let b = (0..<Int(rng.next() % 12)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            #expect(read(b) == String(validating: b, as: UTF8.self), "\(b)")
        }
    }

    /// The size helpers that let callers write embedded messages in place agree with what the
    /// writer emits, at every varint length boundary and for every field-number size.
    @Test func sizeHelpersMatchTheWriter() {
        var values: [UInt64] = [0, 1, 127, 128, 16383, 16384, .max, .max >> 1]
        for k in 1..<64 { values += [(1 << UInt64(k)) - 1, 1 << UInt64(k)] }
        for field: UInt32 in [1, 15, 16, 2047, 2048, (1 << 29) - 1] {
            for v in values {
                var w = ProtobufWriter()
                w.varint(field, v)
                #expect(ProtobufWriter.varintFieldByteCount(field, v) == w.bytes.count)
            }
            for n in [0, 1, 127, 128, 300, 16384] {
                var w = ProtobufWriter()
                w.bytes(field, [UInt8](repeating: 7, count: n))
                #expect(ProtobufWriter.lengthDelimitedFieldByteCount(field, byteCount: n) == w.bytes.count)
                var h = ProtobufWriter()
                h.lengthDelimitedHeader(field, byteCount: n)
                #expect(h.bytes == Array(w.bytes.prefix(w.bytes.count - n)))
            }
        }
    }

    /// Random bytes: the reader ends with a field list or a typed error, never a trap.
    @Test func randomInputNeverTraps() {
        var rng = SplitMix64(seed: 0xfa11)
        for _ in 0..<5000 {
            let bytes = (0..<Int(rng.next() % 64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            var r = ProtobufReader(bytes[...].dropFirst(Int(rng.next() % 2)))
            var count = 0
            do { while try r.next() != nil { count += 1 } } catch {}
            #expect(count <= bytes.count)
        }
    }
}
