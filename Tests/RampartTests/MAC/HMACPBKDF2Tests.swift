// SHA, HMAC and PBKDF2: API behaviour, both paths, bad input.

import Testing
@_spi(Testing) import Rampart

private let backends: [Backend] = [.hardware, .portable]

extension HashFunction {
    func updated(_ d: [UInt8]) -> Digest { var h = self; h.update(data: d); return h.finalize() }
}

@Test(arguments: backends)
func shaKnownAnswers(_ b: Backend) {
    let abc = Array("abc".utf8)
    #expect(SHA256(backend: b).updated(abc).description == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(Insecure.SHA1(backend: b).updated(abc).description == "a9993e364706816aba3e25717850c26c9cd0d89d")
    #expect(SHA512(backend: b).updated(abc).description.hasPrefix("ddaf35a193617aba"))
}

@Test func finalizeDoesNotConsumeTheHasher() {
    var h = SHA256()
    h.update(data: Array("ab".utf8))
    _ = h.finalize()
    h.update(data: Array("c".utf8))
    #expect(h.finalize() == SHA256.hash(data: Array("abc".utf8)))
}

@Test func digestsCompareByContent() {
    let a = SHA256.hash(data: [1, 2, 3]), b = SHA256.hash(data: [1, 2, 3]), c = SHA256.hash(data: [1, 2, 4])
    #expect(a == b)
    #expect(a != c)
    #expect(a.constantTimeEquals(b.bytes))
    #expect(!a.constantTimeEquals(b.bytes.dropLast()))
}

@Test(arguments: backends)
func hmacMatchesRFC4231Case2(_ b: Backend) {
    var h = HMAC<SHA256>(key: SymmetricKey(data: Array("Jefe".utf8)), makeHash: { SHA256(backend: b) })
    h.update(data: Array("what do ya want for nothing?".utf8))
    #expect(h.finalize().description == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
}

@Test func hmacValidation() {
    let key = SymmetricKey(data: [UInt8](repeating: 7, count: 32))
    let msg = Array("message".utf8)
    let tag = HMAC<SHA256>.authenticationCode(for: msg, using: key)
    #expect(HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: msg, using: key))
    #expect(HMAC<SHA256>.isValidAuthenticationCode(tag.bytes, authenticating: msg, using: key))
    var flipped = tag.bytes
    flipped[31] ^= 1
    #expect(!HMAC<SHA256>.isValidAuthenticationCode(flipped, authenticating: msg, using: key))
    #expect(!HMAC<SHA256>.isValidAuthenticationCode(tag.bytes.prefix(16), authenticating: msg, using: key))
    #expect(!HMAC<SHA256>.isValidAuthenticationCode([UInt8](), authenticating: msg, using: key))
    #expect(!HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: msg + [0], using: key))
}

@Test func pbkdf2RejectsBadParameters() {
    #expect(throws: RampartError.self) {
        _ = try PBKDF2.deriveKey(password: [1], salt: [2], prf: .hmacSHA256, iterations: 0, outputByteCount: 32)
    }
    #expect(throws: RampartError.invalidOutputLength) {
        _ = try PBKDF2.deriveKey(password: [1], salt: [2], prf: .hmacSHA256, iterations: 1, outputByteCount: 0)
    }
    #expect(throws: RampartError.self) {
        _ = try PBKDF2.deriveKey(password: [1], salt: [2], prf: .hmacSHA1, iterations: -5, outputByteCount: 20)
    }
    // 100 GB (what `rampart kdf pbkdf2 --length 100000000000` asked for) is a typed error, not an
    // allocation failure; so is one byte over the bound, on the raw-buffer form too.
    #expect(throws: RampartError.invalidOutputLength) {
        _ = try PBKDF2.deriveKey(password: [1], salt: [2], prf: .hmacSHA256, iterations: 1, outputByteCount: 100_000_000_000)
    }
    #expect(throws: RampartError.invalidOutputLength) {
        _ = try PBKDF2.deriveKey(password: [1], salt: [2], prf: .hmacSHA512, iterations: 1,
                                 outputByteCount: PBKDF2.maximumOutputByteCount + 1)
    }
    #expect(throws: RampartError.invalidOutputLength) {
        let big = UnsafeMutableRawBufferPointer.allocate(byteCount: PBKDF2.maximumOutputByteCount + 1, alignment: 8)
        defer { big.deallocate() }
        try [UInt8]([1]).withUnsafeBytes { p in
            try PBKDF2.derive(password: p, salt: p, prf: .hmacSHA1, iterations: 1, into: big)
        }
    }
}

@Test func symmetricKeySizeRefusesBadBitCounts() throws {
    for bad in [-8, -1, 0, 1, 7, 12, 255, SymmetricKeySize.maximumBitCount + 8, Int.min, Int.max] {
        #expect(throws: RampartError.invalidKeyLength) { _ = try SymmetricKeySize(bitCount: bad) }
    }
    for good in [8, 128, 200, 256, 512, SymmetricKeySize.maximumBitCount] {
        let size = try SymmetricKeySize(bitCount: good)
        #expect(SymmetricKey(size: size).bitCount == good)
    }
    #expect(SymmetricKeySize.bits192.bitCount == 192)
}

@Test(arguments: backends)
func pbkdf2RFC6070(_ b: Backend) throws {
    var out = [UInt8](repeating: 0, count: 20)
    try Array("password".utf8).withUnsafeBytes { p in
        try Array("salt".utf8).withUnsafeBytes { s in
            try out.withUnsafeMutableBytes { o in
                try PBKDF2.derive(password: p, salt: s, prf: .hmacSHA1, iterations: 4096, into: o, backend: b)
            }
        }
    }
    #expect(Hex.encode(out) == "4b007901b765489abead49d926f721d065a429c1")
}

@Test func symmetricKeyEqualityAndSize() {
    let a = SymmetricKey(data: [1, 2, 3]), b = SymmetricKey(data: [1, 2, 3]), c = SymmetricKey(data: [1, 2, 4])
    #expect(a == b)
    #expect(a != c)
    #expect(SymmetricKey(size: .bits256).byteCount == 32)
    #expect(SymmetricKey(size: .bits256) != SymmetricKey(size: .bits256))
}
