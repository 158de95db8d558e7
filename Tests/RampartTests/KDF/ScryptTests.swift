import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

private func utf8(_ s: String) -> [UInt8] { Array(s.utf8) }

private let backends: [Backend] = [.hardware, .portable]

/// Runs the raw-buffer API with a pinned backend.
private func scrypt(_ password: [UInt8], _ salt: [UInt8], n: Int, r: Int, p: Int, length: Int,
                    memoryLimit: Int = Scrypt.defaultMemoryLimit, backend: Backend) throws -> [UInt8] {
    var out = [UInt8](repeating: 0, count: length)
    try password.withUnsafeBytes { pw in
        try salt.withUnsafeBytes { s in
            try out.withUnsafeMutableBytes { o in
                try Scrypt.derive(password: pw, salt: s, n: n, r: r, p: p, into: o,
                                  memoryLimit: memoryLimit, backend: backend)
            }
        }
    }
    return out
}

/// Expects `body` to throw exactly `expected`.
private func expectError(_ expected: RampartError, sourceLocation: SourceLocation = #_sourceLocation,
                         _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected \(expected), nothing was thrown", sourceLocation: sourceLocation)
    } catch {
        #expect(error as? RampartError == expected, sourceLocation: sourceLocation)
    }
}

@Suite("scrypt")
struct ScryptTests {
    // MARK: RFC 7914 vectors

    @Test("RFC 7914 §8: Salsa20/8 core")
    func salsa20_8Core() {
        let input = hexBytes("7e879a214f3ec9867ca940e641718f26baee555b8c61c1b50df846116dcd3b1d"
            + "ee24f319df9b3d8514121e4b5ac5aa3276021d2909c74829edebc68db8b8c25e")
        let expected = hexBytes("a41f859c6608cc993b81cacb020cef05044b2181a2fd337dfd7b1c6396682f29"
            + "b4393168e3c9e6bcfe6bc5b7a06d96bae424cc102c91745c24ad673dc7618f81")
        #expect(Scrypt.salsa20Core(input, doubleRounds: 4) == expected)
    }

    @Test("Salsa20/20 core: 10 double rounds (Bernstein's spec, 'Salsa20 hash' example)")
    func salsa20_20Core() {
        // Example from the Salsa20 specification, section 8: bytes 211,159,13,115,...
        let input: [UInt8] = [211, 159, 13, 115, 76, 55, 82, 183, 3, 117, 222, 37, 191, 187, 234, 136,
                              49, 237, 179, 48, 1, 106, 178, 219, 175, 199, 166, 48, 86, 16, 179, 207,
                              31, 240, 32, 63, 15, 83, 93, 161, 116, 147, 48, 113, 238, 55, 204, 36,
                              79, 201, 235, 79, 3, 81, 156, 47, 203, 26, 244, 243, 88, 118, 104, 54]
        let expected: [UInt8] = [109, 42, 178, 168, 156, 240, 248, 238, 168, 196, 190, 203, 26, 110, 170, 154,
                                 29, 29, 150, 26, 150, 30, 235, 249, 190, 163, 251, 48, 69, 144, 51, 57,
                                 118, 40, 152, 157, 180, 57, 27, 94, 107, 42, 236, 35, 27, 111, 114, 114,
                                 219, 236, 232, 135, 111, 155, 110, 18, 24, 232, 95, 158, 179, 19, 48, 202]
        #expect(Scrypt.salsa20Core(input, doubleRounds: 10) == expected)
    }

    /// RFC 7914 §9 input (the §10 ROMix input is the same block).
    private static let blockMixInput = hexBytes(
        "f7ce0b653d2d72a4108cf5abe912ffdd777616dbbb27a70e8204f3ae2d0f6fad"
            + "89f68f4811d1e87bcc3bd7400a9ffd29094f0184639574f39ae5a1315217bcd7"
            + "894991447213bb226c25b54da86370fbcd984380374666bb8ffcb5bf40c254b0"
            + "67d27c51ce4ad5fed829c90b505a571b7f4d1cad6a523cda770e67bceaaf7e89")

    @Test("RFC 7914 §9: scryptBlockMix, r = 1")
    func blockMixVector() {
        let expected = hexBytes(
            "a41f859c6608cc993b81cacb020cef05044b2181a2fd337dfd7b1c6396682f29"
                + "b4393168e3c9e6bcfe6bc5b7a06d96bae424cc102c91745c24ad673dc7618f81"
                + "20edc975323881a80540f64c162dcd3c21077cfe5f8d5fe2b1a4168f953678b7"
                + "7d3b3d803b60e4ab920996e59b4d53b65d2a225877d5edf5842cb9f14eefe425")
        #expect(Scrypt.blockMix(Self.blockMixInput, r: 1) == expected)
    }

    @Test("RFC 7914 §10: scryptROMix, N = 16, r = 1", arguments: backends)
    func roMixVector(backend: Backend) {
        let expected = hexBytes(
            "79ccc193629debca047f0b70604bf6b62ce3dd4a9626e355fafc6198e6ea2b46"
                + "d58413673b99b029d665c357601fb426a0b2f4bba200ee9f0a43d19b571a9c71"
                + "ef1142e65d5a266fddca832ce59faa7cac0b9cf1be2bffca300d01ee387619c4"
                + "ae12fd4438f203a0e4e1c47ec314861f4e9087cb33396a6873e8f9d2539a4b8e")
        #expect(Scrypt.roMix(Self.blockMixInput, n: 16, r: 1, backend: backend) == expected)
    }

    @Test("RFC 7914 §12 vector 1: empty password and salt, N = 16, r = 1, p = 1", arguments: backends)
    func rfcVector1(backend: Backend) throws {
        let dk = try scrypt([], [], n: 16, r: 1, p: 1, length: 64, backend: backend)
        #expect(dk == hexBytes("77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
            + "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"))
    }

    @Test("RFC 7914 §12 vector 2: \"password\"/\"NaCl\", N = 1024, r = 8, p = 16", arguments: backends)
    func rfcVector2(backend: Backend) throws {
        let dk = try scrypt(utf8("password"), utf8("NaCl"), n: 1024, r: 8, p: 16, length: 64, backend: backend)
        #expect(dk == hexBytes("fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
            + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"))
    }

    @Test("RFC 7914 §12 vector 3: \"pleaseletmein\"/\"SodiumChloride\", N = 16384, r = 8, p = 1",
          arguments: backends)
    func rfcVector3(backend: Backend) throws {
        let dk = try scrypt(utf8("pleaseletmein"), utf8("SodiumChloride"), n: 16384, r: 8, p: 1, length: 64,
                            backend: backend)
        #expect(dk == hexBytes("7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2"
            + "d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"))
    }

    #if !DEBUG
    /// 1 GiB and about 2^26 Salsa20/8 cores per backend: release builds only (`#if !DEBUG`).
    @Test("RFC 7914 §12 vector 4: N = 2^20, r = 8, p = 1 (release builds only)", arguments: backends)
    func rfcVector4(backend: Backend) throws {
        // Needs 1 GiB + 3 KiB, just over the default limit.
        expectError(.memoryLimitExceeded(required: 128 * 8 * (1_048_576 + 3), limit: Scrypt.defaultMemoryLimit)) {
            _ = try scrypt(utf8("pleaseletmein"), utf8("SodiumChloride"), n: 1 << 20, r: 8, p: 1, length: 64,
                           backend: backend)
        }
        let dk = try scrypt(utf8("pleaseletmein"), utf8("SodiumChloride"), n: 1 << 20, r: 8, p: 1, length: 64,
                            memoryLimit: 1 << 31, backend: backend)
        #expect(dk == hexBytes("2101cb9b6a511aaeaddbbe09cf70f881ec568d574a2ffd4dabe5ee9820adaa47"
            + "8e56fd8f4ba5d09ffa1c6d927c40f4c337304049e8a952fbcbf45c6fa77a41a4"))
    }
    #endif

    // MARK: API shapes and lengths

    @Test("deriveKey matches derive; Collection inputs need not be contiguous")
    func deriveKeyAPI() throws {
        let key = try Scrypt.deriveKey(password: "password".utf8, salt: "NaCl".utf8, n: 16, r: 1, p: 1,
                                       outputByteCount: 33)
        #expect(key.byteCount == 33)
        let raw = try scrypt(utf8("password"), utf8("NaCl"), n: 16, r: 1, p: 1, length: 33, backend: .portable)
        #expect(key.withUnsafeBytes { Array($0) } == raw)
        #expect(key == SymmetricKey(data: raw))
    }

    /// Expected values from Python: hashlib.scrypt(b"password", salt=b"NaCl", n=16, r=1, p=1, dklen=L).
    @Test("Odd output lengths", arguments: [1, 31, 33, 65])
    func oddLengths(length: Int) throws {
        let full = hexBytes("aec6b7483ed26e08802b41f4032086a0e886be7ac48fcfd92ff0cef8109752f4"
            + "ac74b077263256a65a99701b7a304d46611c8aa391e799ce10a27753e7e9c09a06")
        for backend in backends {
            let dk = try scrypt(utf8("password"), utf8("NaCl"), n: 16, r: 1, p: 1, length: length, backend: backend)
            #expect(dk == Array(full.prefix(length)))
        }
        let key = try Scrypt.deriveKey(password: utf8("password"), salt: utf8("NaCl"), n: 16, r: 1, p: 1,
                                       outputByteCount: length)
        #expect(key.withUnsafeBytes { Array($0) } == Array(full.prefix(length)))
    }

    // MARK: Differential against Python's hashlib.scrypt (OpenSSL)

    struct Case: Sendable, CustomTestStringConvertible {
        let password: String, salt: String, n: Int, r: Int, p: Int, expected: String
        var testDescription: String { "N=\(n) r=\(r) p=\(p) dkLen=\(expected.count / 2)" }
    }

    /// Produced with Python 3 (random.seed(7914), random password 0..<70 bytes and salt 0..<40 bytes):
    /// `hashlib.scrypt(password, salt=salt, n=N, r=r, p=p, maxmem=2**30, dklen=L).hex()`.
    static let pythonCases: [Case] = [
        Case(password: "67503b716572c59e9ebd965f5f827f7df490e659c54030296d412284bba5dd27bfb3cbc5fe9aab793904bb949406e56b9a18e1e043008c6628",
             salt: "45f10a7c5f794e68eb25e051c1", n: 2, r: 1, p: 1,
             expected: "50"),
        Case(password: "a6a723748e9b8a937eabeadcc967d0f88f5c070c55ae72", salt: "a98687dbf5a1024dd8ffa282398838",
             n: 4, r: 1, p: 3,
             expected: "196b54c7ed339e41479121f0db811ac9352b31ce76d12344d5c0d64e802160"),
        Case(password: "6b1073c83ff600dadd06840bb20f797fcc2420faf153518f912daf4bde91d7a97a622d86cf63f1f0cae75ce4f8d315a4711a56190dc8e6c98c",
             salt: "04f82284602167d5ab52d79d08e3df587b463831", n: 8, r: 2, p: 1,
             expected: "f0ccd8d5b8630906107ea3a541d1d5338b64a8f2b9cad378dbc90b050ce94f749c"),
        Case(password: "59d3026f082b9d898e45",
             salt: "01561a132c9a1d9adb91a30d2703b6588bfd99a576098a3c1a7e9225eee0b71a3f2b88", n: 32, r: 3, p: 2,
             expected: "07199f706ecbbf97eee192dfb81a95af518fa4b286f8f7539989cb65b9cdf271e353fef2a4339cd25ac570f885d675286a7b2584ce0af57f38df85e4feee883275"),
        Case(password: "3770140971a0b064bd757cf2f2c8b648bbdb4ac4d64d32b610e19316cd95aca1fe0f50f80f1efbfa19761cfdee2e9bc10c2b04927af9926996c5c5",
             salt: "9da5d4920f0a96b758c033c88e6568c365606db341", n: 64, r: 5, p: 1,
             expected: "1fadc4d455e189209dbe709611a11bb8fcd471572fe59b50d486fd2c66d9e2b33f397db3f842346d3febcdc52d206c696c6214e0469968322e42beaf1d9b06cf101177ba699ba2b76ef176625272dea06dada9e988e740ca89d236c0aed9fdd12a6e3140"),
        Case(password: "0edc34392dd417103f8056bb1629301798efef8cd45dc4c5ec5ea4bc552290f20dbf3ce8956a266626d01b",
             salt: "6cc8e817fc2c91", n: 16, r: 8, p: 4,
             expected: "f7b855f461f100f233695cbb4d37b7232542ee6861cb784628e033eae7eed5d511708f783e8de076de0855634f9257"),
        Case(password: "71e026dc58ef3f5bd3eae5b9eecc6bfd47a881e37ececa48e996fff319858154151e6e148e80cbbcfd0196d797955d15460069ce24a97cf3160892d788f2982ee8a51b",
             salt: "27aef9c4", n: 128, r: 1, p: 1,
             expected: "4c1f341812189173376c38584451e9a47ff90441b78366bf95001e8fc9cc6e0e"),
        Case(password: "6dfac662bbf7f64eb1f7", salt: "71187d0dff0ecc29bd0e00124454cab3b87e3d0773aa67b5",
             n: 256, r: 2, p: 3,
             expected: "c28b5f2632c0a01e490b461b26e90a33c1944d78218a7a7a537f7d870fc3efce0a93ecf91f3360d9ec0b91b033fb8abfb7ce2fe5cd475db0da335ce6f3eb1ddcbc146e07e996a91f9e837b6cb23db3499329ed465f59eac9e3bd4cc64e119ec32a20fa5f36ee29ea4d00ee8a1bc215cd27332024757db4ec1ca17a64a6cad7473a"),
        Case(password: "0ef0bc3b32007a",
             salt: "8e323011639cabd6cfdfebd345ac1187f89510770a5a95cd25c3cf8f232c1d5771650d0ea4", n: 1024, r: 1, p: 2,
             expected: "b144505a0f73882c913bcbc0d12ef2de"),
    ]

    @Test("Differential against Python hashlib.scrypt", arguments: pythonCases, backends)
    func pythonDifferential(c: Case, backend: Backend) throws {
        let expected = hexBytes(c.expected)
        let dk = try scrypt(hexBytes(c.password), hexBytes(c.salt), n: c.n, r: c.r, p: c.p, length: expected.count,
                            backend: backend)
        #expect(dk == expected)
    }

    @Test("Backends agree on a larger block (N = 512, r = 16, p = 2)")
    func backendsAgree() throws {
        let a = try scrypt(utf8("correct horse"), utf8("battery staple"), n: 512, r: 16, p: 2, length: 48,
                           backend: .portable)
        let b = try scrypt(utf8("correct horse"), utf8("battery staple"), n: 512, r: 16, p: 2, length: 48,
                           backend: .hardware)
        #expect(a == b)
    }

    // MARK: Validation

    @Test("N must be a power of two, at least 2")
    func invalidN() {
        for n in [Int.min, -4, -1, 0, 1, 3, 6, 1000, (1 << 20) + 1, Int.max] {
            expectError(.invalidParameter("N")) { _ = try scrypt([], [], n: n, r: 1, p: 1, length: 32, backend: .portable) }
        }
    }

    @Test("N must be below 2^(16·r)")
    func nTooLargeForR() {
        // r = 1: N < 2^16. 2^15 passes the parameter checks (then the memory limit of 0 stops it).
        expectError(.invalidParameter("N")) { _ = try scrypt([], [], n: 1 << 16, r: 1, p: 1, length: 32, backend: .portable) }
        expectError(.invalidParameter("N")) { _ = try scrypt([], [], n: 1 << 40, r: 2, p: 1, length: 32, backend: .portable) }
        expectError(.invalidParameter("N")) { _ = try scrypt([], [], n: 1 << 48, r: 3, p: 1, length: 32, backend: .portable) }
        expectError(.memoryLimitExceeded(required: 128 * ((1 << 15) + 3), limit: 0)) {
            _ = try scrypt([], [], n: 1 << 15, r: 1, p: 1, length: 32, memoryLimit: 0, backend: .portable)
        }
        // r ≥ 4: every power of two up to 2^62 is allowed by the RFC; the size then overflows.
        expectError(.memoryLimitExceeded(required: Int.max, limit: 0)) {
            _ = try scrypt([], [], n: 1 << 62, r: 4, p: 1, length: 32, memoryLimit: 0, backend: .portable)
        }
        expectError(.memoryLimitExceeded(required: Int.max, limit: Int.max)) {
            _ = try scrypt([], [], n: 1 << 62, r: 1 << 20, p: 1, length: 32, memoryLimit: Int.max, backend: .portable)
        }
    }

    @Test("r and p must be at least 1")
    func invalidRP() {
        for r in [Int.min, -1, 0] {
            expectError(.invalidParameter("r")) { _ = try scrypt([], [], n: 16, r: r, p: 1, length: 32, backend: .portable) }
        }
        for p in [Int.min, -1, 0] {
            expectError(.invalidParameter("p")) { _ = try scrypt([], [], n: 16, r: 1, p: p, length: 32, backend: .portable) }
        }
    }

    @Test("r·p must be below 2^30")
    func invalidRTimesP() {
        expectError(.invalidParameter("r*p")) { _ = try scrypt([], [], n: 16, r: 1 << 15, p: 1 << 15, length: 32, backend: .portable) }
        expectError(.invalidParameter("r*p")) { _ = try scrypt([], [], n: 16, r: 1, p: 1 << 30, length: 32, backend: .portable) }
        expectError(.invalidParameter("r*p")) { _ = try scrypt([], [], n: 16, r: Int.max / 2, p: 3, length: 32, backend: .portable) }
        expectError(.invalidParameter("r*p")) { _ = try scrypt([], [], n: 16, r: Int.max, p: Int.max, length: 32, backend: .portable) }
        // 2^30 − 1 is allowed (then stopped by the memory limit).
        let required = Scrypt.memoryRequired(n: 16, r: 1, p: (1 << 30) - 1)!
        expectError(.memoryLimitExceeded(required: required, limit: 1 << 20)) {
            _ = try scrypt([], [], n: 16, r: 1, p: (1 << 30) - 1, length: 32, memoryLimit: 1 << 20, backend: .portable)
        }
    }

    @Test("Output length must be 1...16 MiB, and the allocating form counts it against the memory limit")
    func invalidOutputLength() throws {
        expectError(.invalidOutputLength) { _ = try scrypt([], [], n: 16, r: 1, p: 1, length: 0, backend: .portable) }
        expectError(.invalidOutputLength) {
            _ = try Scrypt.deriveKey(password: [UInt8](), salt: [UInt8](), n: 16, r: 1, p: 1, outputByteCount: 0)
        }
        expectError(.invalidOutputLength) {
            _ = try Scrypt.deriveKey(password: [UInt8](), salt: [UInt8](), n: 16, r: 1, p: 1, outputByteCount: -1)
        }
        expectError(.invalidOutputLength) {
            _ = try Scrypt.deriveKey(password: [UInt8](), salt: [UInt8](), n: 16, r: 1, p: 1,
                                     outputByteCount: Int(UInt32.max) * 32 + 1)
        }
        expectError(.invalidOutputLength) {
            _ = try Scrypt.deriveKey(password: [UInt8](), salt: [UInt8](), n: 16, r: 1, p: 1, outputByteCount: Int.max)
        }
        // 100 GB (what `rampart kdf scrypt --length 100000000000` asked for) is a typed error, not an
        // allocation failure.
        expectError(.invalidOutputLength) {
            _ = try Scrypt.deriveKey(password: [UInt8](), salt: [UInt8](), n: 16, r: 1, p: 1, outputByteCount: 100_000_000_000)
        }
        expectError(.invalidOutputLength) {
            _ = try scrypt([], [], n: 16, r: 1, p: 1, length: Scrypt.maximumOutputByteCount + 1, backend: .portable)
        }
        // The largest length passes the check, and the output counts against the memory limit.
        let max = Scrypt.maximumOutputByteCount
        expectError(.memoryLimitExceeded(required: 128 * 19 + max, limit: max)) {
            _ = try Scrypt.deriveKey(password: [UInt8](), salt: [UInt8](), n: 16, r: 1, p: 1,
                                     outputByteCount: max, memoryLimit: max)
        }
        let long = try Scrypt.deriveKey(password: [UInt8](), salt: [UInt8](), n: 16, r: 1, p: 1,
                                        outputByteCount: 1 << 16, memoryLimit: 128 * 19 + (1 << 16))
        #expect(long.bitCount == 8 << 16)
    }

    @Test("memoryRequired: 128·r·(N + p + 2), nil on overflow or bad input")
    func memoryRequired() {
        #expect(Scrypt.memoryRequired(n: 65536, r: 8, p: 1) == 128 * 8 * (65536 + 3))
        #expect(Scrypt.memoryRequired(n: 1024, r: 8, p: 16) == 128 * 8 * (1024 + 18))
        #expect(Scrypt.memoryRequired(n: 1 << 62, r: 1, p: 1) == nil)
        #expect(Scrypt.memoryRequired(n: 16, r: Int.max / 64, p: 1) == nil)
        #expect(Scrypt.memoryRequired(n: Int.max, r: 1, p: Int.max) == nil)
        #expect(Scrypt.memoryRequired(n: 0, r: 1, p: 1) == nil)
        #expect(Scrypt.memoryRequired(n: 16, r: 0, p: 1) == nil)
        #expect(Scrypt.memoryRequired(n: 16, r: 1, p: -1) == nil)
        #expect(Scrypt.defaultMemoryLimit == 1 << 30)
    }

    @Test("Memory above the limit is rejected; exactly the limit is accepted")
    func memoryLimit() throws {
        let required = Scrypt.memoryRequired(n: 1024, r: 8, p: 1)!
        #expect(required == 1_051_648)
        expectError(.memoryLimitExceeded(required: required, limit: required - 1)) {
            _ = try scrypt([], [], n: 1024, r: 8, p: 1, length: 32, memoryLimit: required - 1, backend: .portable)
        }
        // The allocating form counts its 32-byte output too.
        expectError(.memoryLimitExceeded(required: required + 32, limit: -1)) {
            _ = try Scrypt.deriveKey(password: [UInt8](), salt: [UInt8](), n: 1024, r: 8, p: 1, outputByteCount: 32,
                                     memoryLimit: -1)
        }
        let small = Scrypt.memoryRequired(n: 16, r: 1, p: 1)!
        #expect(try scrypt([], [], n: 16, r: 1, p: 1, length: 64, memoryLimit: small, backend: .portable)
            == hexBytes("77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
                + "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"))
        // The default limit rejects N = 2^20, r = 8 (1 GiB + 3 KiB, plus the output) before allocating anything.
        expectError(.memoryLimitExceeded(required: 128 * 8 * ((1 << 20) + 3) + 32, limit: 1 << 30)) {
            _ = try Scrypt.deriveKey(password: [UInt8](), salt: [UInt8](), n: 1 << 20, r: 8, p: 1, outputByteCount: 32)
        }
    }

    @Test("The output buffer is untouched on error")
    func outputUntouchedOnError() {
        var out = [UInt8](repeating: 0xa5, count: 40)
        let calls: [(Int, Int, Int, Int)] = [(3, 1, 1, 1 << 30), (16, 0, 1, 1 << 30), (16, 1, 0, 1 << 30),
                                             (1 << 16, 1, 1, 1 << 30), (1 << 10, 8, 1, 1000)]
        for (n, r, p, limit) in calls {
            _ = out.withUnsafeMutableBytes { o in
                #expect(throws: RampartError.self) {
                    try Scrypt.derive(password: UnsafeRawBufferPointer(start: nil, count: 0),
                                      salt: UnsafeRawBufferPointer(start: nil, count: 0), n: n, r: r, p: p,
                                      into: o, memoryLimit: limit)
                }
            }
            #expect(out == [UInt8](repeating: 0xa5, count: 40))
        }
    }
}
