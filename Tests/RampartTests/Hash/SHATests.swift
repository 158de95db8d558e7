// SHA-1, SHA-256, SHA-512: known answers on both paths, finalize, digest comparison.

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
