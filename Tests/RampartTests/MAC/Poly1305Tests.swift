import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

private func tag(_ key: String, _ msg: [UInt8]) throws -> String {
    try Poly1305.authenticationCode(for: msg, using: SymmetricKey(data: hexBytes(key))).description
}

@Suite("Poly1305")
struct Poly1305Tests {
    @Test("RFC 8439 §2.5.2")
    func rfc8439() throws {
        #expect(try tag("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b",
                        Array("Cryptographic Forum Research Group".utf8)) == "a8061dc1305136c6c22b8baf0c0127a9")
    }

    @Test("RFC 8439 Appendix A.3: the edge cases of the final reduction (#5 to #11)")
    func edgeCases() throws {
        let r1 = "01" + String(repeating: "00", count: 15), r2 = "02" + String(repeating: "00", count: 15)
        let z16 = String(repeating: "00", count: 16), f16 = String(repeating: "ff", count: 16)
        #expect(try tag(r2 + z16, hexBytes(f16)) == "03" + String(repeating: "00", count: 15))
        #expect(try tag(r2 + f16, hexBytes("02" + String(repeating: "00", count: 15))) == "03" + String(repeating: "00", count: 15))
        #expect(try tag(r1 + z16, hexBytes(f16 + "f0" + String(repeating: "ff", count: 15) + "11" + String(repeating: "00", count: 15)))
                == "05" + String(repeating: "00", count: 15))
        #expect(try tag(r1 + z16, hexBytes(f16 + "fb" + String(repeating: "fe", count: 15) + String(repeating: "01", count: 16))) == z16)
        #expect(try tag(r2 + z16, hexBytes("fd" + String(repeating: "ff", count: 15))) == "fa" + String(repeating: "ff", count: 15))
        let k10 = "0100000000000000040000000000000000000000000000000000000000000000"
        let m10 = hexBytes("e33594d7505e43b9" + String(repeating: "00", count: 8) + "3394d7505e4379cd01" + String(repeating: "00", count: 7)
                      + String(repeating: "00", count: 16) + "01" + String(repeating: "00", count: 15))
        #expect(try tag(k10, m10) == "14000000000000005500000000000000")
        #expect(try tag(k10, Array(m10[..<48])) == "13000000000000000000000000000000")
    }

    @Test("Incremental updates of every split give the one-shot tag")
    func incremental() throws {
        let key = SymmetricKey(data: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        let msg = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 7) }
        let one = try Poly1305.authenticationCode(for: msg, using: key)
        for cut in 0...msg.count {
            var m = try Poly1305(key: key)
            m.update(data: msg[..<cut])
            m.update(data: msg[cut...])
            #expect(m.finalize() == one, "cut \(cut)")
        }
        // Byte by byte, and finalize leaves the state usable.
        var m = try Poly1305(key: key)
        for b in msg { m.update(data: [b]) }
        #expect(m.finalize() == one)
        #expect(m.finalize() == one)
        // A copy is independent.
        var c = m
        c.update(data: [1])
        #expect(m.finalize() == one && c.finalize() != one)
    }

    @Test("The wide kernel matches the portable code at every length to 2200 bytes, split or not, and with the largest limbs")
    func wideKernelMatchesPortable() throws {
        var rng = SplitMix64(seed: 0x1305_1305)
        for n in 0...2200 {
            let key = SymmetricKey(data: rng.bytes(32)), msg = rng.bytes(n)
            let want = try Poly1305.authenticationCode(for: msg, using: key.pinned(to: .portable))
            #expect(try Poly1305.authenticationCode(for: msg, using: key.pinned(to: .hardware)) == want, "length \(n)")
            // An update that starts mid-block, so the kernel sees a run that does not start at byte 0.
            var mac = try Poly1305(key: key.pinned(to: .hardware))
            let cut = n % 23
            mac.update(data: msg[..<cut])
            mac.update(data: msg[cut...])
            #expect(mac.finalize() == want, "length \(n) split at \(cut)")
        }
        // All-ones keys and messages make every limb as large as it gets; all-zero message, and a key
        // whose r is zero (every power is zero: the tag is s).
        for n in [256, 4096, 65_536 + 48] {
            for (k, m) in [(UInt8(0xFF), UInt8(0xFF)), (0xFF, 0), (0, 0xFF)] {
                let key = SymmetricKey(data: [UInt8](repeating: k, count: 16) + [UInt8](repeating: 0xA5, count: 16))
                let msg = [UInt8](repeating: m, count: n)
                #expect(try Poly1305.authenticationCode(for: msg, using: key.pinned(to: .hardware))
                        == Poly1305.authenticationCode(for: msg, using: key.pinned(to: .portable)), "length \(n), key \(k), message \(m)")
            }
        }
    }

    @Test("Every Poly1305 implementation the processor runs matches the portable code, whatever the default")
    func everyImplementationMatchesPortable() throws {
        var rng = SplitMix64(seed: 0x2626)
        if Kernels.implementations(of: "poly1305").count == 1 { print("note: no Poly1305 kernel on this processor") }
        try Kernels.forEachImplementation(of: "poly1305") { (name: String, backend: Backend) throws in
            // Runs of 32 blocks and more reach the kernel: from 512 bytes in one update.
            var lengths = Array(0...700) + (0..<40).map { _ in Int(rng.next() % 9000) }
            lengths += [4096, 65_536 + 48]
            for n in lengths {
                let key = SymmetricKey(data: rng.bytes(32)), msg = rng.bytes(n)
                #expect(try Poly1305.authenticationCode(for: msg, using: key.pinned(to: backend))
                        == Poly1305.authenticationCode(for: msg, using: key.pinned(to: .portable)), "\(name), length \(n)")
            }
            for (k, m) in [(UInt8(0xFF), UInt8(0xFF)), (0xFF, 0), (0, 0xFF)] {
                let key = SymmetricKey(data: [UInt8](repeating: k, count: 16) + [UInt8](repeating: 0x5A, count: 16))
                let msg = [UInt8](repeating: m, count: 70_000)
                #expect(try Poly1305.authenticationCode(for: msg, using: key.pinned(to: backend))
                        == Poly1305.authenticationCode(for: msg, using: key.pinned(to: .portable)), "\(name), key \(k), message \(m)")
            }
        }
    }

    @Test("Verification is by value and length; key length is checked")
    func verification() throws {
        let key = SymmetricKey(data: [UInt8](repeating: 7, count: 32))
        let msg = Array("message".utf8)
        let t = try Poly1305.authenticationCode(for: msg, using: key)
        #expect(try Poly1305.isValidAuthenticationCode(t.bytes, authenticating: msg, using: key))
        var bad = t.bytes
        bad[15] ^= 1
        #expect(try !Poly1305.isValidAuthenticationCode(bad, authenticating: msg, using: key))
        #expect(try !Poly1305.isValidAuthenticationCode(t.bytes.dropLast(), authenticating: msg, using: key))
        #expect(try !Poly1305.isValidAuthenticationCode(t.bytes, authenticating: msg + [0], using: key))
        #expect(throws: RampartError.invalidKeyLength) { _ = try Poly1305(key: SymmetricKey(data: [1, 2, 3])) }
        #expect(throws: RampartError.invalidKeyLength) {
            _ = try Poly1305.authenticationCode(for: msg, using: SymmetricKey(data: [UInt8](repeating: 0, count: 64)))
        }
    }
}
