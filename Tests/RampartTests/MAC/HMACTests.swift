// HMAC: RFC 4231 case 2 on both paths, tag validation (flipped, truncated, empty tags refused). The
// vector files (RFC 4231, Wycheproof, generated cases) run with the other vector files.

import Testing
@_spi(Testing) import Rampart

private let backends: [Backend] = [.hardware, .portable]

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
