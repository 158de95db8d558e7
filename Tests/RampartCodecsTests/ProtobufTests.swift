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
