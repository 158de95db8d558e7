import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

private let modeBackends: [Backend] = [.portable, .hardware]
private func pattern(_ n: Int, _ seed: Int = 0) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7 &+ 5) } }

private let sp800Key = hexBytes("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
private let sp800Plain = hexBytes("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
    + "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")

@Suite("AES modes")
struct AESModeTests {
    @Test("IGE: OpenSSL igetest.c vectors (AES-128)", arguments: modeBackends)
    func igeOpenSSL(backend: Backend) throws {
        let c1 = try AES.Cipher(key: hexBytes("000102030405060708090a0b0c0d0e0f"), backend: backend)
        let iv1 = hexBytes("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        let out1 = hexBytes("1a8519a6557be652e9da8e43da4ef4453cf456b4ca488aa383c79c98b34797cb")
        #expect(try AES.IGE.encrypt([UInt8](repeating: 0, count: 32), using: c1, iv: iv1) == out1)
        #expect(try AES.IGE.decrypt(out1, using: c1, iv: iv1) == [UInt8](repeating: 0, count: 32))
        let c2 = try AES.Cipher(key: hexBytes("5468697320697320616e20696d706c65"), backend: backend)
        let iv2 = hexBytes("6d656e746174696f6e206f6620494745206d6f646520666f72204f70656e5353")
        let ct2 = hexBytes("4c2e204c6574277320686f70652042656e20676f74206974207269676874210a")
        let pt2 = hexBytes("99706487a1cde613bc6de0b6f24b1c7aa448c8b9c3403e3467a8cad89340f53b")
        #expect(try AES.IGE.decrypt(ct2, using: c2, iv: iv2) == pt2)
        #expect(try AES.IGE.encrypt(pt2, using: c2, iv: iv2) == ct2)
    }

    @Test("IGE: chunked calls continue the chain; bad lengths are typed errors", arguments: modeBackends)
    func igeChunks(backend: Backend) throws {
        let cipher = try AES.Cipher(key: pattern(32, 1), backend: backend)
        let iv = pattern(32, 2)
        for blocks in [1, 2, 7, 8, 9, 17, 40] {
            let msg = pattern(16 * blocks, blocks)
            let whole = try AES.IGE.encrypt(msg, using: cipher, iv: iv)
            var pieces = msg
            var v = iv
            try pieces.withUnsafeMutableBytes { b in
                try v.withUnsafeMutableBytes { vb in
                    let cut = 16 * (blocks / 2)
                    try AES.IGE.encrypt(UnsafeMutableRawBufferPointer(rebasing: b[..<cut]), using: cipher, iv: vb)
                    try AES.IGE.encrypt(UnsafeMutableRawBufferPointer(rebasing: b[cut...]), using: cipher, iv: vb)
                }
            }
            #expect(pieces == whole, "\(blocks) blocks")
            #expect(Array(v[0..<16]) == Array(whole.suffix(16)) && Array(v[16..<32]) == Array(msg.suffix(16)))
            #expect(try AES.IGE.decrypt(whole, using: cipher, iv: iv) == msg)
        }
        #expect(throws: RampartError.invalidInputLength) { try AES.IGE.encrypt(pattern(17), using: cipher, iv: iv) }
        #expect(throws: RampartError.invalidNonceLength) { try AES.IGE.encrypt(pattern(16), using: cipher, iv: pattern(16)) }
        #expect(try AES.IGE.encrypt([UInt8](), using: cipher, iv: iv) == [])
    }

    @Test("CBC: SP 800-38A F.2.5/F.2.6 (AES-256)", arguments: modeBackends)
    func cbcSP800(backend: Backend) throws {
        let cipher = try AES.Cipher(key: sp800Key, backend: backend)
        let iv = hexBytes("000102030405060708090a0b0c0d0e0f")
        let ct = hexBytes("f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
            + "39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b")
        #expect(try AES.CBC.encrypt(sp800Plain, using: cipher, iv: iv, padding: .none) == ct)
        #expect(try AES.CBC.decrypt(ct, using: cipher, iv: iv, padding: .none) == sp800Plain)
    }

    @Test("CBC + PKCS#7: every length 0...64 round-trips, bad padding is one typed error", arguments: modeBackends)
    func cbcPKCS7(backend: Backend) throws {
        let cipher = try AES.Cipher(key: pattern(32, 3), backend: backend)
        let iv = pattern(16, 4)
        for n in 0...64 {
            let msg = pattern(n, n)
            let ct = try AES.CBC.encrypt(msg, using: cipher, iv: iv)
            #expect(ct.count == (n / 16 + 1) * 16)
            #expect(try AES.CBC.decrypt(ct, using: cipher, iv: iv) == msg, "length \(n)")
        }
        // Forge last blocks with every bad padding shape: pad byte 0, 17, 255, and inconsistent bytes.
        for last in [hexBytes("000102030405060708090a0b0c0d0e00"), hexBytes("00000000000000000000000000000011"),
                     hexBytes("000000000000000000000000000000ff"), hexBytes("00000000000000000000000000030203"),
                     hexBytes("0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f10")] {
            var raw = pattern(16) + last
            raw = try AES.CBC.encrypt(raw, using: cipher, iv: iv, padding: .none)
            #expect(throws: RampartError.invalidPadding) { try AES.CBC.decrypt(raw, using: cipher, iv: iv) }
        }
        // A full block of padding (16 x 0x10) is valid.
        let full = try AES.CBC.encrypt(pattern(16) + [UInt8](repeating: 16, count: 16), using: cipher, iv: iv, padding: .none)
        #expect(try AES.CBC.decrypt(full, using: cipher, iv: iv) == pattern(16))
        #expect(throws: RampartError.invalidPadding) { try AES.CBC.decrypt([UInt8](), using: cipher, iv: iv) }
        #expect(throws: RampartError.invalidInputLength) { try AES.CBC.decrypt(pattern(20), using: cipher, iv: iv) }
        #expect(throws: RampartError.invalidNonceLength) { try AES.CBC.encrypt(pattern(20), using: cipher, iv: pattern(15)) }
    }

    @Test("CTR: SP 800-38A F.5.5 (AES-256), and streams split anywhere", arguments: modeBackends)
    func ctr(backend: Backend) throws {
        let cipher = try AES.Cipher(key: sp800Key, backend: backend)
        let ctr0 = hexBytes("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
        let want = hexBytes("601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
            + "2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6")
        #expect(try AES.CTR(cipher: cipher, counter: ctr0).process(sp800Plain) == want)
        let msg = pattern(1000, 9)
        let one = try AES.CTR(cipher: cipher, counter: ctr0).process(msg)
        for cuts in [[1], [15, 16, 17], [3, 5, 7, 200, 201], [128, 256, 999], [0, 0, 500]] {
            let s = try AES.CTR(cipher: cipher, counter: ctr0)
            var got: [UInt8] = []
            var start = 0
            for c in cuts + [msg.count] {
                got += s.process(msg[start..<c])
                start = c
            }
            #expect(got == one, "cuts \(cuts)")
        }
    }

    @Test("CTR: the 128-bit counter carries across all bytes and wraps", arguments: modeBackends)
    func ctrCarry(backend: Backend) throws {
        let cipher = try AES.Cipher(key: pattern(16, 5), backend: backend)
        for start in [hexBytes("00000000000000000000fffffffffffa"), hexBytes("ffffffffffffffffffffffffffffff"
            + "fc"), hexBytes("0000000000000000fffffffffffffffe")] {
            let s = try AES.CTR(cipher: cipher, counter: start)
            let ks = s.process([UInt8](repeating: 0, count: 16 * 20))
            // Block i must be E(start + i).
            var c = start
            for i in 0..<20 {
                #expect(Array(ks[(16 * i)..<(16 * i + 16)]) == (try cipher.encrypt(block: c)), "block \(i)")
                var j = 15
                while j >= 0 { c[j] &+= 1; if c[j] != 0 { break }; j -= 1 }
            }
            #expect(s.counter == c)
        }
    }

    @Test("GCM: McGrew-Viega test cases 13, 14, 16, 18 (AES-256) and a 64-bit nonce", arguments: modeBackends)
    func gcmKnown(backend: Backend) throws {
        let zero = try AES.Cipher(key: [UInt8](repeating: 0, count: 32), backend: backend)
        let n0 = try AES.GCM.Nonce(data: [UInt8](repeating: 0, count: 12))
        let b13 = try AES.GCM.seal([UInt8](), using: zero, nonce: n0, authenticating: [UInt8]())
        #expect(b13.tag == hexBytes("530f8afbc74536b9a963b4f1c4cb738b"))
        let b14 = try AES.GCM.seal([UInt8](repeating: 0, count: 16), using: zero, nonce: n0, authenticating: [UInt8]())
        #expect(b14.ciphertext + b14.tag == hexBytes("cea7403d4d606b6e074ec5d3baf39d18d0d1c8a799996bf0265b98b5d48ab919"))
        let k = try AES.Cipher(key: hexBytes("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"), backend: backend)
        let p = hexBytes("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
        let a = hexBytes("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let cases: [(String, String, String)] = [
            ("cafebabefacedbaddecaf888",
             "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
             "76fc6ece0f4e1768cddf8853bb2d551b"),
            ("9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b",
             "5a8def2f0c9e53f1f75d7853659e2a20eeb2b22aafde6419a058ab4f6f746bf40fc0c3b780f244452da3ebf1c5d82cdea2418997200ef82e44ae7e3f",
             "a44a8266ee1c8eb0c8b5d4cf5ae9f19a"),
            ("cafebabefacedbad",
             "c3762df1ca787d32ae47c13bf19844cbaf1ae14d0b976afac52ff7d79bba9de0feb582d33934a4f0954cc2363bc73f7862ac430e64abe499f47c9b1f",
             "3a337dbf46a792c45e454913fe2ea8f2"),
        ]
        for (iv, c, t) in cases {
            let box = try AES.GCM.seal(p, using: k, nonce: try AES.GCM.Nonce(data: hexBytes(iv)), authenticating: a)
            #expect(box.ciphertext == hexBytes(c), "nonce \(iv)")
            #expect(box.tag == hexBytes(t), "nonce \(iv)")
            #expect(try AES.GCM.open(box, using: k, authenticating: a) == p)
        }
    }

    @Test("GCM: round trips at every length, tampering is rejected and releases nothing", arguments: modeBackends)
    func gcmTamper(backend: Backend) throws {
        let cipher = try AES.Cipher(key: pattern(32, 11), backend: backend)
        for n in [0, 1, 15, 16, 17, 127, 128, 129, 200, 1000] {
            let msg = pattern(n, n)
            let aad = pattern(n % 37, 3)
            let nonce = try AES.GCM.Nonce(data: pattern(12, n))
            let box = try AES.GCM.seal(msg, using: cipher, nonce: nonce, authenticating: aad)
            #expect(try AES.GCM.open(box, using: cipher, authenticating: aad) == msg)
            var badTag = box.tag
            badTag[n % 16] ^= 1
            #expect(throws: RampartError.authenticationFailure) {
                try AES.GCM.open(try AES.GCM.SealedBox(nonce: nonce, ciphertext: box.ciphertext, tag: badTag), using: cipher, authenticating: aad)
            }
            #expect(throws: RampartError.authenticationFailure) {
                try AES.GCM.open(box, using: cipher, authenticating: aad + [0])
            }
            if n > 0 {
                var badCt = box.ciphertext
                badCt[n / 2] ^= 0x80
                // In place: the buffer must be wiped on failure.
                var buf = badCt
                let ok: Bool = buf.withUnsafeMutableBytes { b in
                    box.tag.withUnsafeBytes { t in
                        pattern(12, n).withUnsafeBytes { nb in
                            aad.withUnsafeBytes { a in
                                (try? AES.GCM.open(b, tag: t, using: cipher, nonce: nb, authenticating: a)) != nil
                            }
                        }
                    }
                }
                #expect(!ok)
                #expect(buf.allSatisfy { $0 == 0 }, "buffer wiped after a failed open")
            }
            let combined = try #require(box.combined)
            #expect(try AES.GCM.open(try AES.GCM.SealedBox(combined: combined), using: cipher, authenticating: aad) == msg)
        }
        #expect(throws: RampartError.invalidNonceLength) { try AES.GCM.Nonce(data: [UInt8]()) }
        #expect(throws: RampartError.authenticationFailure) {
            try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(), ciphertext: [UInt8](), tag: [UInt8](repeating: 0, count: 15))
        }
        #expect(throws: RampartError.invalidInputLength) { try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: 27)) }
    }

    @Test("All modes: portable and hardware paths agree on random inputs")
    func pathsAgree() throws {
        var g = SplitMix64(seed: 0xAE5)
        for keyLength in [16, 24, 32] {
            let key = randomBytes(count: keyLength, using: &g)
            let hw = try AES.Cipher(key: key, backend: .hardware), sw = try AES.Cipher(key: key, backend: .portable)
            for n in [0, 16, 48, 64, 112, 128, 144, 256, 400, 1024] {
                let msg = randomBytes(count: n, using: &g)
                let iv32 = randomBytes(count: 32, using: &g)
                let iv16 = Array(iv32[0..<16])
                #expect(try AES.IGE.encrypt(msg, using: hw, iv: iv32) == AES.IGE.encrypt(msg, using: sw, iv: iv32))
                #expect(try AES.IGE.decrypt(msg, using: hw, iv: iv32) == AES.IGE.decrypt(msg, using: sw, iv: iv32))
                #expect(try AES.CBC.encrypt(msg, using: hw, iv: iv16, padding: .none) == AES.CBC.encrypt(msg, using: sw, iv: iv16, padding: .none))
                #expect(try AES.CBC.decrypt(msg, using: hw, iv: iv16, padding: .none) == AES.CBC.decrypt(msg, using: sw, iv: iv16, padding: .none))
                #expect(try AES.CTR(cipher: hw, counter: iv16).process(msg + [1, 2, 3]) == AES.CTR(cipher: sw, counter: iv16).process(msg + [1, 2, 3]))
                let nonce = try AES.GCM.Nonce(data: iv16[0..<(1 + n % 16)])
                let a = try AES.GCM.seal(msg + [9], using: hw, nonce: nonce, authenticating: iv32)
                let b = try AES.GCM.seal(msg + [9], using: sw, nonce: nonce, authenticating: iv32)
                #expect(a == b, "GCM key \(keyLength) length \(n)")
            }
        }
    }
}

@Test("GCM raw API out of place: seal into another buffer, open into another buffer", arguments: modeBackends)
func gcmOutOfPlace(backend: Backend) throws {
    let cipher = try AES.Cipher(key: pattern(32, 21), backend: backend)
    for n in [0, 5, 16, 64, 100, 1024] {
        let msg = pattern(n, 1), nonce = pattern(12, 2), aad = pattern(n % 5, 3)
        var ct = [UInt8](repeating: 0, count: n), tag = [UInt8](repeating: 0, count: 16)
        try msg.withUnsafeBytes { m in try ct.withUnsafeMutableBytes { c in try tag.withUnsafeMutableBytes { t in
            try nonce.withUnsafeBytes { nb in try aad.withUnsafeBytes { a in
                try AES.GCM.seal(m, into: c, tag: t, using: cipher, nonce: nb, authenticating: a)
            } }
        } } }
        let box = try AES.GCM.seal(msg, using: cipher, nonce: try AES.GCM.Nonce(data: nonce), authenticating: aad)
        #expect(box.ciphertext == ct && box.tag == tag, "length \(n)")
        var back = [UInt8](repeating: 0xAA, count: n)
        try ct.withUnsafeBytes { c in try back.withUnsafeMutableBytes { b in try tag.withUnsafeBytes { t in
            try nonce.withUnsafeBytes { nb in try aad.withUnsafeBytes { a in
                try AES.GCM.open(c, into: b, tag: t, using: cipher, nonce: nb, authenticating: a)
            } }
        } } }
        #expect(back == msg, "length \(n)")
    }
}

@Test("GCM sealed boxes compare by nonce, ciphertext and tag")
func gcmSealedBoxEquality() throws {
    let nonce = try AES.GCM.Nonce(data: pattern(12, 1))
    let box = try AES.GCM.SealedBox(nonce: nonce, ciphertext: pattern(40, 2), tag: pattern(16, 3))
    #expect(box == (try AES.GCM.SealedBox(combined: try #require(box.combined))))
    var tag = pattern(16, 3); tag[15] ^= 1
    #expect(box != (try AES.GCM.SealedBox(nonce: nonce, ciphertext: pattern(40, 2), tag: tag)))
    var ct = pattern(40, 2); ct[0] ^= 0x80
    #expect(box != (try AES.GCM.SealedBox(nonce: nonce, ciphertext: ct, tag: pattern(16, 3))))
    #expect(box != (try AES.GCM.SealedBox(nonce: nonce, ciphertext: pattern(39, 2), tag: pattern(16, 3))))
    #expect(box != (try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: pattern(12, 4)), ciphertext: pattern(40, 2),
                                          tag: pattern(16, 3))))
}
