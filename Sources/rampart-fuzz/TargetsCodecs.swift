// Codec targets (RampartCodecs): DEFLATE with its zlib and gzip wrappers under a fuzzer-chosen output
// limit, strict JSON, and Base32. Each decoder must give a value or its typed error for every input,
// stay within its output limit, and what it accepts must round-trip through the matching writer.

import RampartCodecs
import RampartTestSupport

/// Small zlib-written streams (from Vectors/codecs/deflate.json): dynamic, fixed and stored blocks.
private let deflateSeedStreams: [(mode: UInt8, hex: String)] = [
    (1, "789c3d8f4b0ec3200c44f73e85957517a1ca855c30012581088caa2e72f742a095fcd3d87a1abf29430c3350306a7e2ea82ced99515261b4316128fb8e84c1eb2dd051b5fffa42c72d740c425a3093e59640fda8f68373a675d0d614cb397933c1a3535b8916089af822bd9513157841a954051db23cef3b1097980f1a7e82c1ab53c591a017183e1d43536aa9fe86b3f61b7ac341bc7cdafc7be6667e01e6575886"),
    (2, "1f8b0800000000000003dbbe7d840300db20d98301010000"),
    (0, "636018e10000"),
    (1, "7801fbff7f840300080f000f"),
    (0, "b352b052303152482c4a5550ca4c512ac9482c01d10ad50ad1f9690a99c50a19a90ae945f9a5050a2519a9c9f9792589c925d140714303231385b4fc228592a2d2542ea05c5e694e8e427e9e829521978911484021910b6c525e6672765e626e2ac80ea8010ad120d340767125252667971670814dc9cfe3028b597155e6976616e7a6161727a6a7725901dd57928f620e54978e02d4402e90ed5cd10ad560a772252a159426e564267ba7562a2964e6013570c16c861aaa03742a17980d00"),
]

let deflateTarget = FuzzTarget(
    name: "deflate",
    summary: "raw DEFLATE, zlib and gzip decoding (mode byte) under a fuzzer-chosen output limit: value within the limit or DeflateError; contiguous and non-contiguous input agree; accepted output round-trips through the stored writers",
    maxLength: 1 << 16,
    run: { data in
        var input = FuzzInput(data)
        let mode = input.byte() % 3
        let limit = input.int(in: 0...(1 << 20))
        let body = input.rest()
        func decode<C: Collection<UInt8>>(_ c: C) -> Result<[UInt8], DeflateError> {
            Result { () throws(DeflateError) -> [UInt8] in
                switch mode {
                case 0: try Deflate.decompress(c, maxOutputBytes: limit)
                case 1: try Zlib.decompress(c, maxOutputBytes: limit)
                default: try Gzip.decompress(c, maxOutputBytes: limit)
                }
            }
        }
        let result = decode(body)
        FuzzCheck.require(result == decode(AnyCollection(body)), "contiguous and non-contiguous input disagree")
        guard case .success(let out) = result else { return }
        FuzzCheck.require(out.count <= limit, "output \(out.count) over the limit \(limit)")
        let again: Result<[UInt8], DeflateError>
        switch mode {
        case 0: again = Result { () throws(DeflateError) in try Deflate.decompress(Deflate.compressStored(out), maxOutputBytes: out.count) }
        case 1: again = Result { () throws(DeflateError) in try Zlib.decompress(Zlib.compressStored(out), maxOutputBytes: out.count) }
        default: again = Result { () throws(DeflateError) in try Gzip.decompress(Gzip.compressStored(out), maxOutputBytes: out.count) }
        }
        FuzzCheck.require(again == .success(out), "stored writer round trip")
    },
    seeds: {
        var seeds = deflateSeedStreams.map { [$0.mode, 0xFF, 0xFF, 0x0F] + hexBytes($0.hex) }
        let text = Array(#"{"identity":"ECHOECHO","nickname":"Echo","contacts":[]}"#.utf8)
        seeds.append([0, 0xFF, 0xFF, 0x0F] + Deflate.compressStored(text))
        seeds.append([1, 0xFF, 0xFF, 0x0F] + Zlib.compressStored(text))
        seeds.append([2, 0xFF, 0xFF, 0x0F] + Gzip.compressStored(text))
        return seeds
    }
)

let jsonTarget = FuzzTarget(
    name: "json",
    summary: "strict JSON parsing (depth limit from the input): value or JSONError with an offset inside the input; accepted documents reserialize to text that parses back to the same value and reserializes identically",
    maxLength: 1 << 16,
    run: { data in
        var input = FuzzInput(data)
        let depth = input.int(in: 0...80)
        let body = input.rest()
        do throws(JSONError) {
            let v = try JSONValue(parsing: body, maxDepth: depth)
            let text = v.serialized()
            guard let back = try? JSONValue(parsing: text, maxDepth: depth) else { FuzzCheck.fail("serialized value does not parse") }
            FuzzCheck.require(back == v, "reparsed value differs")
            FuzzCheck.require(back.serialized() == text, "reserialized text differs")
        } catch {
            FuzzCheck.require(error.offset >= 0 && error.offset <= body.count, "error offset \(error.offset) outside the input")
        }
    },
    seeds: {
        [Array(#"{"identity":"ECHOECHO","nickname":"\u00c9cho \ud83d\ude00","n":[1,-2.5e-3,true,null],"o":{}}"#.utf8),
         Array("[[[[\"a\\n\\t\\\"\"]]]]".utf8), Array("-0.0E+12".utf8)].map { [64] + $0 }
    }
)

let base32Target = FuzzTarget(
    name: "base32",
    summary: "Base32 decoding, strict and lenient: value or Base32Error; accepted text re-encodes to its symbols (upper case, separators dropped); any bytes round-trip through encode and strict decode",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let lenient = input.bool()
        let body = input.rest()
        let text = String(decoding: body, as: UTF8.self)
        if let bytes = try? Base32.decode(text, mode: lenient ? .lenient : .strict) {
            let symbols = body.filter { !(lenient && [0x20, 0x2D, 0x0A, 0x0D, 0x09].contains($0)) }
                .map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }
            FuzzCheck.require(Array(Base32.encode(bytes).utf8) == symbols, "Base32 re-encoding differs")
        }
        FuzzCheck.require((try? Base32.decode(Base32.encode(body))) == body, "Base32 round trip of \(body.count) bytes")
    },
    seeds: {
        [[0] + Array("MZXW6YTBOI".utf8), [1] + Array("mzxw-6ytb oi\r\n".utf8), [0] + Array("MY".utf8)]
    }
)

let codecTargets = [deflateTarget, jsonTarget, base32Target]
