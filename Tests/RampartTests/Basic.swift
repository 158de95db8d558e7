import Testing
@_spi(Testing) import Rampart

@Test func shaQuick() {
    let abc = Array("abc".utf8)
    #expect(SHA256.hash(data: abc).description == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(SHA256(backend: .portable).updated(abc).description == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(Insecure.SHA1.hash(data: abc).description == "a9993e364706816aba3e25717850c26c9cd0d89d")
    #expect(Insecure.SHA1(backend: .portable).updated(abc).description == "a9993e364706816aba3e25717850c26c9cd0d89d")
    #expect(SHA512.hash(data: abc).description.hasPrefix("ddaf35a193617aba"))
    let m = [UInt8](repeating: 0x61, count: 1_000_000)
    #expect(SHA256.hash(data: m).description == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    #expect(Insecure.SHA1.hash(data: m).description == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
}
extension HashFunction {
    func updated(_ d: [UInt8]) -> Digest { var h = self; h.update(data: d); return h.finalize() }
}
