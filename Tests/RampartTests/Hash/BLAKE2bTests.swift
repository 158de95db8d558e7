import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

/// Deterministic test input: byte i is (7i + 3) mod 256.
private func pattern(_ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) } }

private let blake2bBackends: [Backend] = [.portable, .hardware]

private func digest(_ data: [UInt8], outputByteCount: Int = 64, key: [UInt8] = [], salt: [UInt8]? = nil,
                    personal: [UInt8]? = nil, backend: Backend) throws -> BLAKE2b.Digest {
    var h = try BLAKE2b(outputByteCount: outputByteCount, key: key, salt: salt, personal: personal, backend: backend)
    h.update(data: data)
    return h.finalize()
}

@Suite("BLAKE2b")
struct BLAKE2bTests {
    @Test("RFC 7693 Appendix A: BLAKE2b-512(\"abc\")", arguments: blake2bBackends)
    func rfc7693(backend: Backend) throws {
        let d = try digest(Array("abc".utf8), backend: backend)
        #expect(d.description == "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
            + "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
        #expect(d.byteCount == 64)
        #expect(try BLAKE2b.hash(data: Array("abc".utf8)) == d)
    }

    @Test("Unkeyed empty input and one-byte output", arguments: blake2bBackends)
    func empty(backend: Backend) throws {
        #expect(try digest([], backend: backend).description == "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419"
            + "d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce")
        #expect(try digest([], outputByteCount: 1, backend: backend).description == "2e")
    }

    /// Keyed KATs from the BLAKE2 reference package (blake2b-kat.txt): in = 00 01 .. (n-1), key = 00 .. 3f.
    static let keyedKATs: [(Int, String)] = [
        (0, "10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568"),
        (1, "961f6dd1e4dd30f63901690c512e78e4b45e4742ed197c3c5e45c549fd25f2e4187b0bc9fe30492b16b0d0bc4ef9b0f34c7003fac09a5ef1532e69430234cebd"),
        (2, "da2cfbe2d8409a0f38026113884f84b50156371ae304c4430173d08a99d9fb1b983164a3770706d537f49e0c916d9f32b95cc37a95b99d857436f0232c88a965"),
        (3, "33d0825dddf7ada99b0e7e307104ad07ca9cfd9692214f1561356315e784f3e5a17e364ae9dbb14cb2036df932b77f4b292761365fb328de7afdc6d8998f5fc1"),
        (63, "bd965bf31e87d70327536f2a341cebc4768eca275fa05ef98f7f1b71a0351298de006fba73fe6733ed01d75801b4a928e54231b38e38c562b2e33ea1284992fa"),
        (64, "65676d800617972fbd87e4b9514e1c67402b7a331096d3bfac22f1abb95374abc942f16e9ab0ead33b87c91968a6e509e119ff07787b3ef483e1dcdccf6e3022"),
        (127, "76d2d819c92bce55fa8e092ab1bf9b9eab237a25267986cacf2b8ee14d214d730dc9a5aa2d7b596e86a1fd8fa0804c77402d2fcd45083688b218b1cdfa0dcbcb"),
        (128, "72065ee4dd91c2d8509fa1fc28a37c7fc9fa7d5b3f8ad3d0d7a25626b57b1b44788d4caf806290425f9890a3a2a35a905ab4b37acfd0da6e4517b2525c9651e4"),
        (129, "64475dfe7600d7171bea0b394e27c9b00d8e74dd1e416a79473682ad3dfdbb706631558055cfc8a40e07bd015a4540dcdea15883cbbf31412df1de1cd4152b91"),
        (200, "3095a349d245708c7cf550118703d7302c27b60af5d4e67fc978f8a4e60953c7a04f92fcf41aee64321ccb707a895851552b1e37b00bc5e6b72fa5bcef9e3fff"),
        (255, "142709d62e28fcccd0af97fad0f8465b971e82201dc51070faa0372aa43e92484be1c1e73ba10906d5d1853db6a4106e0a7bf9800d373d6dee2d46d62ef2a461"),
    ]

    @Test("Keyed KATs (blake2b-kat.txt)", arguments: blake2bBackends)
    func keyedKAT(backend: Backend) throws {
        let key = (0..<64).map { UInt8($0) }
        for (n, expected) in Self.keyedKATs {
            let input = (0..<n).map { UInt8($0) }
            #expect(try digest(input, key: key, backend: backend).description == expected, "length \(n)")
            // The SymmetricKey initializer gives the same MAC.
            var h = try BLAKE2b(key: SymmetricKey(data: key))
            h.update(data: input)
            #expect(h.finalize().description == expected, "SymmetricKey, length \(n)")
        }
    }

    /// (input length, output length, key length, salt?, personal?, digest) from Python's hashlib.blake2b with
    /// input = pattern(n), key = 40 41 .., salt = 80 .. 8f, person = a0 .. af.
    static let parameterVectors: [(Int, Int, Int, Bool, Bool, String)] = [
        (0, 1, 0, true, false, "92"),
        (1, 20, 16, true, true, "3a567c069607b0b7828e35933eefdd3b7d5d936f"),
        (127, 32, 32, false, true, "1600e8cc358324b1a7257fa8731e6c15f62de93592485972ad512d11d8910396"),
        (128, 48, 64, true, true, "a7f6c3e01835055b5ce58f7f3fc2e19681657d78f700b836cc09f044d223127c6eb693a854ac35d351c972d107b1d4e8"),
        (129, 64, 1, true, true, "186385f0028d79ce84b37c52d17819264e4a629944a444db717783cad3ba2946ef7bff7c3e5e97719acfdc51058f5049dae07e430dd43d97efaf52036021df40"),
        (1000, 33, 0, true, true, "7ca988a3c340c84c7e606f48e7391c6ce1ff6d804d57ffe6ee6168af9de0e40a4e"),
        (4101, 64, 64, false, false, "8e42d8727b8cfd40f3c7a6c6fed15e2a419b3671eec571d2e19b622a2b52b648ed821c1b04eb56fb81debd333544b78b6bd7a5f3315ddd831b62c6aa311886d3"),
    ]

    @Test("Salt, personalization, key and output length (hashlib cross-check)", arguments: blake2bBackends)
    func saltPersonal(backend: Backend) throws {
        for (n, outLen, keyLen, hasSalt, hasPersonal, expected) in Self.parameterVectors {
            let key = (0..<keyLen).map { UInt8(0x40 + $0) }
            let salt: [UInt8]? = hasSalt ? (0..<16).map { UInt8(0x80 + $0) } : nil
            let personal: [UInt8]? = hasPersonal ? (0..<16).map { UInt8(0xa0 + $0) } : nil
            let d = try digest(pattern(n), outputByteCount: outLen, key: key, salt: salt, personal: personal,
                               backend: backend)
            #expect(d.description == expected, "n=\(n) out=\(outLen) key=\(keyLen)")
            #expect(d.byteCount == outLen)
        }
        // An all-zero salt/personalization is the same as nil.
        let zero = [UInt8](repeating: 0, count: 16)
        #expect(try digest(pattern(50), salt: zero, personal: zero, backend: backend)
            == digest(pattern(50), backend: backend))
    }

    @Test("Every output length 1...64 (hashlib cross-check of all 64 digests)", arguments: blake2bBackends)
    func outputLengths(backend: Backend) throws {
        var all: [UInt8] = []
        for n in 1...64 {
            let d = try digest(pattern(100), outputByteCount: n, backend: backend)
            #expect(d.byteCount == n)
            #expect(d.bytes.count == n)
            #expect(d.description.count == 2 * n)
            all += d.bytes
        }
        // BLAKE2b-512 of the concatenated digests of pattern(100) at output lengths 1...64.
        #expect(try digest(all, backend: backend).description
            == "f5eb21b51869ccf717d5c7a3bc8c6d33bd381742ebccbf0c75c22dbf3b49b1e189455a5508ef3f29cbd4def4d20dc201"
            + "fd4ac9b067675c1ca270bd3dd62da859")
    }

    @Test("Every input length 0...1024 (hashlib cross-check)", arguments: blake2bBackends)
    func inputLengths(backend: Backend) throws {
        let data = pattern(1024)
        var all: [UInt8] = []
        for n in 0...1024 { all += try digest(Array(data[0..<n]), backend: backend).bytes }
        #expect(try digest(all, backend: backend).description
            == "187ccbd3b59bb9884eb489a0ac95ab8fe472a600d690604fcbffef5ecc2b34d759db5237686e8685119aebebd0f0d56f"
            + "716d34b6165d96ef8733c17e10bd946f")
    }

    @Test("One million 'a' (hashlib cross-check)", arguments: blake2bBackends)
    func million(backend: Backend) throws {
        let m = [UInt8](repeating: 0x61, count: 1_000_000)
        #expect(try digest(m, backend: backend).description
            == "98fb3efb7206fd19ebf69b6f312cf7b64e3b94dbe1a17107913975a793f177e1d077609d7fba363cbba00d05f7aa4e4f"
            + "a8715d6428104c0a75643b0ff3fd3eaf")
    }

    @Test("Incremental updates with random splits equal one-shot", arguments: blake2bBackends)
    func incremental(backend: Backend) throws {
        var rng = SplitMix64(seed: 1)
        for trial in 0..<200 {
            let n = Int.random(in: 0...1500, using: &rng)
            let data = rng.bytes(n)
            let keyLen = trial % 3 == 0 ? Int.random(in: 1...64, using: &rng) : 0
            let key = rng.bytes(keyLen)
            let oneShot = try digest(data, outputByteCount: 64, key: key, backend: backend)
            var h = try BLAKE2b(outputByteCount: 64, key: key, salt: nil, personal: nil, backend: backend)
            var i = 0
            while i < n {
                // Mostly small pieces, sometimes whole blocks and more, sometimes empty updates.
                let maxPiece = [0, 1, 7, 127, 128, 129, 300][Int.random(in: 0..<7, using: &rng)]
                let piece = min(n - i, Int.random(in: 0...maxPiece, using: &rng))
                h.update(data: data[i..<(i + piece)])
                i += piece
            }
            #expect(h.finalize() == oneShot, "trial \(trial) n=\(n)")
        }
    }

    @Test("finalize() does not change the hasher", arguments: blake2bBackends)
    func finalizeIsNonMutating(backend: Backend) throws {
        for split in [0, 1, 100, 127, 128, 129, 256, 300] {
            let data = pattern(600)
            var h = try BLAKE2b(outputByteCount: 40, key: [1, 2, 3], salt: nil, personal: nil, backend: backend)
            h.update(data: data[0..<split])
            let first = h.finalize()
            #expect(h.finalize() == first)
            #expect(first == (try digest(Array(data[0..<split]), outputByteCount: 40, key: [1, 2, 3], backend: backend)))
            h.update(data: data[split...])
            #expect(h.finalize() == (try digest(data, outputByteCount: 40, key: [1, 2, 3], backend: backend)))
        }
    }

    @Test("Unaligned and non-contiguous input", arguments: blake2bBackends)
    func unaligned(backend: Backend) throws {
        let data = pattern(2000)
        for n in [0, 1, 127, 128, 129, 1000, 1999] {
            let expected = try digest(Array(data[0..<n]), backend: backend)
            for offset in 1..<9 {
                let storage = [UInt8](repeating: 0xee, count: offset) + Array(data[0..<n])
                try storage.withUnsafeBytes { raw in
                    var h = try BLAKE2b(outputByteCount: 64, key: [], salt: nil, personal: nil, backend: backend)
                    h.update(bufferPointer: UnsafeRawBufferPointer(rebasing: raw[offset...]))
                    #expect(h.finalize() == expected, "n=\(n) offset=\(offset)")
                }
            }
            // A collection without contiguous storage takes the copying path.
            var h = try BLAKE2b(outputByteCount: 64, key: [], salt: nil, personal: nil, backend: backend)
            h.update(data: data[0..<n].lazy.map { $0 })
            #expect(h.finalize() == expected)
        }
    }

    @Test("Differential: portable == hardware on random inputs, keys, salts, personalizations")
    func differential() throws {
        var rng = SplitMix64(seed: 0x5eed)
        for n in 0...1000 {
            let data = rng.bytes(n)
            let key = rng.bytes(Int.random(in: 0...64, using: &rng))
            let salt: [UInt8]? = Bool.random(using: &rng) ? rng.bytes(16) : nil
            let personal: [UInt8]? = Bool.random(using: &rng) ? rng.bytes(16) : nil
            let outLen = Int.random(in: 1...64, using: &rng)
            let a = try digest(data, outputByteCount: outLen, key: key, salt: salt, personal: personal, backend: .portable)
            let b = try digest(data, outputByteCount: outLen, key: key, salt: salt, personal: personal, backend: .hardware)
            #expect(a == b, "n=\(n)")
        }
        // Long inputs through the multi-block loop of each kernel.
        for n in [4096, 16384 + 3, 100_000] {
            let data = rng.bytes(n)
            #expect(try digest(data, backend: .portable) == digest(data, backend: .hardware), "n=\(n)")
        }
    }

    @Test("Parameter errors are thrown, never trapped")
    func errors() {
        #expect(throws: RampartError.invalidOutputLength) { try BLAKE2b(outputByteCount: 0) }
        #expect(throws: RampartError.invalidOutputLength) { try BLAKE2b(outputByteCount: 65) }
        #expect(throws: RampartError.invalidOutputLength) { try BLAKE2b(outputByteCount: -1) }
        #expect(throws: RampartError.invalidOutputLength) { try BLAKE2b(outputByteCount: Int.max) }
        #expect(throws: RampartError.invalidOutputLength) { try BLAKE2b(outputByteCount: Int.min) }
        #expect(throws: RampartError.invalidKeyLength) { try BLAKE2b(key: [UInt8](repeating: 1, count: 65)) }
        #expect(throws: RampartError.invalidKeyLength) { try BLAKE2b(key: SymmetricKey(data: [UInt8](repeating: 1, count: 65))) }
        #expect(throws: RampartError.invalidParameter("salt")) { try BLAKE2b(salt: []) }
        #expect(throws: RampartError.invalidParameter("salt")) { try BLAKE2b(salt: [UInt8](repeating: 0, count: 15)) }
        #expect(throws: RampartError.invalidParameter("salt")) { try BLAKE2b(salt: [UInt8](repeating: 0, count: 17)) }
        #expect(throws: RampartError.invalidParameter("personal")) { try BLAKE2b(personal: []) }
        #expect(throws: RampartError.invalidParameter("personal")) { try BLAKE2b(personal: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: RampartError.invalidOutputLength) { try BLAKE2b.hash(data: [1, 2, 3], outputByteCount: 0) }
        #expect(throws: RampartError.invalidKeyLength) { try BLAKE2b.hash(data: [1], key: [UInt8](repeating: 0, count: 100)) }
        #expect(throws: RampartError.invalidParameter("salt")) { try BLAKE2b.hash(data: [1], salt: [1]) }
        #expect(throws: RampartError.invalidParameter("personal")) { try BLAKE2b.hash(data: [1], personal: [1]) }
        #expect(throws: RampartError.invalidKeyLength) {
            try BLAKE2b(outputByteCount: 64, key: [UInt8](repeating: 0, count: 65), salt: nil, personal: nil, backend: .portable)
        }
        // Limits themselves are accepted.
        #expect(throws: Never.self) {
            _ = try BLAKE2b(outputByteCount: 1, key: [UInt8](repeating: 1, count: 64),
                            salt: [UInt8](repeating: 0, count: 16), personal: [UInt8](repeating: 0, count: 16))
            _ = try BLAKE2b(outputByteCount: 64, key: SymmetricKey(data: [UInt8]()))
        }
    }

    @Test("Digest: equality, hashing, bytes, sequence, description")
    func digestValue() throws {
        let a = try BLAKE2b.hash(data: pattern(10), outputByteCount: 32)
        let b = try BLAKE2b.hash(data: pattern(10), outputByteCount: 32)
        let c = try BLAKE2b.hash(data: pattern(11), outputByteCount: 32)
        let short = try BLAKE2b.hash(data: pattern(10), outputByteCount: 16)
        #expect(a == b)
        #expect(a != c)
        #expect(a != short)
        #expect(Set([a, b, c]).count == 2)
        #expect(Array(a) == a.bytes)
        #expect(a.bytes.count == 32)
        #expect(a.description == Hex.encode(a.bytes))
        #expect(a.constantTimeEquals(a.bytes))
        #expect(!a.constantTimeEquals(c.bytes))
        a.withUnsafeBytes { #expect($0.count == 32) }
        #expect(a.bytes.count == a.byteCount)
    }

    @Test("BLAKE2b512 HashFunction matches BLAKE2b with 64-byte output", arguments: blake2bBackends)
    func fixed512(backend: Backend) throws {
        for n in [0, 3, 128, 129, 1000] {
            var h = BLAKE2b512(backend: backend)
            h.update(data: pattern(n))
            #expect(h.finalize().bytes == (try digest(pattern(n), backend: backend)).bytes)
        }
        #expect(BLAKE2b512.hash(data: Array("abc".utf8)).description.hasPrefix("ba80a53f981c4d0d"))
        #expect(BLAKE2b512.byteCount == 64 && BLAKE2b512.blockByteCount == 128)
    }

    @Test("HMAC<BLAKE2b512> through the generic HashFunction path (Python hmac cross-check)", arguments: blake2bBackends)
    func hmacBLAKE2b512(backend: Backend) {
        let expected: [(Int, String)] = [
            (10, "84cfc8246b172947bf06e0b63e2ec94d5ae47d3f8d00009b766a88bed553f619619f53c16b4a56bc3a2d935d2b1c2ea8dc2a1cab1151fe01241ba129ce91d78d"),
            (200, "93bf68db7202bea48e5933db093c648ef321e8aa05abd1a1e80a9ef57c0fd5f9f0622f020733952ec31d8126e0a9780cff5581ea9a3206bc9357ff51cc5182c2"),
        ]
        for (keyLen, hex) in expected {
            let key = SymmetricKey(data: (0..<keyLen).map { UInt8($0) })
            var mac = HMAC<BLAKE2b512>(key: key, makeHash: { BLAKE2b512(backend: backend) })
            mac.update(data: pattern(300))
            #expect(mac.finalize().description == hex, "key length \(keyLen)")
            #expect(HMAC<BLAKE2b512>.authenticationCode(for: pattern(300), using: key).description == hex)
        }
    }
}
