import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

/// Both paths; the hardware one is the portable one on machines without AES-NI.
private let aesBackends: [Backend] = [.portable, .hardware]

/// FIPS-197 Appendix C: the example vectors for the three key sizes.
private let fips197: [(key: String, ct: String)] = [
    ("000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"),
    ("000102030405060708090a0b0c0d0e0f1011121314151617", "dda97ca4864cdfe06eaf70a0ec0d7191"),
    ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "8ea2b7ca516745bfeafc49904b496089"),
]

@Suite("AES core")
struct AESCoreTests {
    @Test("FIPS-197 Appendix C, encrypt and decrypt", arguments: aesBackends)
    func fips197Blocks(backend: Backend) throws {
        let pt = hexBytes("00112233445566778899aabbccddeeff")
        for (k, c) in fips197 {
            let cipher = try AES.Cipher(key: hexBytes(k), backend: backend)
            #expect(try cipher.encrypt(block: pt) == hexBytes(c), "key \(k)")
            #expect(try cipher.decrypt(block: hexBytes(c)) == pt, "key \(k)")
        }
    }

    @Test("Hardware path is used when the CPU has AES-NI")
    func hardwareSelected() throws {
        let c = try AES.Cipher(key: [UInt8](repeating: 1, count: 32), backend: .hardware)
        let p = try AES.Cipher(key: [UInt8](repeating: 1, count: 32), backend: .portable)
        #expect(p.backend == .portable)
        if CPU.features.aes { #expect(c.backend == .hardware) }
        #expect(c.rounds == 14)
    }

    @Test("Wrong key lengths are typed errors", arguments: [0, 1, 15, 17, 20, 31, 33, 64])
    func badKeyLength(n: Int) {
        #expect(throws: RampartError.invalidKeyLength) { try AES.Cipher(key: [UInt8](repeating: 0, count: n)) }
    }

    @Test("ECB over many blocks: both paths agree, decrypt inverts", arguments: [16, 24, 32])
    func ecbAgree(keyLength: Int) throws {
        let key = (0..<keyLength).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 7) }
        let hw = try AES.Cipher(key: key, backend: .hardware), sw = try AES.Cipher(key: key, backend: .portable)
        for blocks in [0, 1, 3, 4, 5, 7, 8, 9, 16, 17, 33] {
            let msg = (0..<(16 * blocks)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ blocks) }
            var a = msg, b = msg
            try a.withUnsafeMutableBytes { try hw.encrypt(blocks: $0) }
            try b.withUnsafeMutableBytes { try sw.encrypt(blocks: $0) }
            #expect(a == b, "\(blocks) blocks")
            try a.withUnsafeMutableBytes { try sw.decrypt(blocks: $0) }
            try b.withUnsafeMutableBytes { try hw.decrypt(blocks: $0) }
            #expect(a == msg && b == msg, "\(blocks) blocks round trip")
        }
        var odd = [UInt8](repeating: 0, count: 15)
        #expect(throws: RampartError.invalidInputLength) { try odd.withUnsafeMutableBytes { try hw.encrypt(blocks: $0) } }
    }
}

@Test("The default backend follows RAMPART_FORCE_PORTABLE and the CPU")
func aesDefaultBackend() throws {
    let c = try AES.Cipher(key: SymmetricKey(data: [UInt8](repeating: 9, count: 32)))
    if CPU.forcePortable || !(CPU.detected.aes && CPU.detected.ssse3 && CPU.detected.sse41) {
        #expect(c.backend == .portable)
    } else {
        #expect(c.backend == .hardware)
    }
    #expect(c.keyByteCount == 32)
}

@Test("CTR and GCM reject bad lengths with typed errors")
func aesStreamErrors() throws {
    let c = try AES.Cipher(key: [UInt8](repeating: 1, count: 16))
    #expect(throws: RampartError.invalidNonceLength) { try AES.CTR(cipher: c, counter: [UInt8](repeating: 0, count: 15)) }
    let s = try AES.CTR(cipher: c, counter: [UInt8](repeating: 0, count: 16))
    var out = [UInt8](repeating: 0, count: 3)
    #expect(throws: RampartError.invalidOutputLength) {
        try [UInt8](repeating: 0, count: 4).withUnsafeBytes { i in try out.withUnsafeMutableBytes { try s.xor(i, into: $0) } }
    }
    var tag = [UInt8](repeating: 0, count: 15)
    var msg = [UInt8](repeating: 0, count: 4)
    #expect(throws: RampartError.invalidOutputLength) {
        try msg.withUnsafeMutableBytes { m in try tag.withUnsafeMutableBytes { t in
            try [UInt8](repeating: 0, count: 12).withUnsafeBytes { n in
                try AES.GCM.seal(m, tag: t, using: c, nonce: n, authenticating: UnsafeRawBufferPointer(start: nil, count: 0))
            }
        } }
    }
    #expect(throws: RampartError.invalidNonceLength) {
        try msg.withUnsafeMutableBytes { m in try tag.withUnsafeMutableBytes { t in
            try AES.GCM.seal(m, tag: t, using: c, nonce: UnsafeRawBufferPointer(start: nil, count: 0), authenticating: UnsafeRawBufferPointer(start: nil, count: 0))
        } }
    }
}
