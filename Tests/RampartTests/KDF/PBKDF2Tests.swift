// PBKDF2: RFC 6070 on both paths, bad parameters as typed errors. The vector files (RFC 6070, RFC 7914,
// Wycheproof, generated cases) run with the other vector files.

import Testing
@_spi(Testing) import Rampart

private let backends: [Backend] = [.hardware, .portable]

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
