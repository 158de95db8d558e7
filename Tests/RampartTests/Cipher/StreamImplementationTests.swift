// Every implementation of the `salsa20` and `chacha20` registries this processor runs (the AVX2 and
// AVX-512VL builds of the eight-block loops, the AVX-512VL short-message blocks, the scalar BMI2 cores
// paired with either build), not only the selected one, against the portable code: each entry point
// on its own (whole 512-byte groups from states with random keys, nonces and counters, some straddling
// a 32-bit carry, at odd buffer offsets; the stitched Poly1305 in its seal and open forms; the single,
// two- and four-block runs; the XSalsa20 input block and its pair; scrypt's BlockMix), then through the
// public API on a backend pinned to it (XSalsa20, Salsa20 streams cut at odd points, SecretBox on its
// short and stitched paths and in pairs, scrypt's ROMix; ChaCha20 and ChaCha20-Poly1305), and its
// self-test against the published answers.

@_spi(Testing) @testable import Rampart
internal import RampartKernelSupport
import RampartTestSupport
import Testing

@Suite("Salsa20 and ChaCha20 implementations")
struct StreamImplementationTests {
    /// A Salsa20 input block with random key and nonce words and block counter `counter`.
    private static func salsaState(_ rng: inout SplitMix64, counter: UInt64) -> SIMD16<UInt32> {
        var x = SIMD16<UInt32>()
        for i in 0..<16 { x[i] = UInt32(truncatingIfNeeded: rng.next()) }
        x[0] = 0x6170_7865; x[5] = 0x3320_646e; x[10] = 0x7962_2d32; x[15] = 0x6b20_6574
        x[8] = UInt32(truncatingIfNeeded: counter)
        x[9] = UInt32(truncatingIfNeeded: counter >> 32)
        return x
    }

    /// Every runnable implementation of a registry, by name.
    private static func each<I>(_ registry: Registry<I>, _ body: (String, I) -> Void) {
        if registry.runnable.count == 1 { print("note: no \(registry.primitive) kernel on this processor; only the portable code") }
        for name in registry.runnable { body(name, registry.runnableImplementation(named: name)!) }
    }

    /// A random Poly1305 state (clamped key, s1, an accumulator below 2^130).
    private static func polyWords(_ rng: inout SplitMix64) -> SIMD8<UInt64> {
        let r0 = rng.next() & 0x0fff_fffc_0fff_ffff, r1 = rng.next() & 0x0fff_fffc_0fff_fffc
        return SIMD8(r0, r1, r1 &+ (r1 >> 2), rng.next(), rng.next(), rng.next() & 3, 0, 0)
    }

    /// The stream loops of `xor` and `stitched` against the portable ones: 1 to 3 groups from counters
    /// near 0 and around 2^32, at odd offsets; the stitched form sealing (the MAC one group behind,
    /// over the ciphertext it writes) and opening (bare keystream, the MAC over another buffer).
    private static func checkGroups(_ what: String, _ rng: inout SplitMix64, state: (inout SplitMix64, UInt64) -> SIMD16<UInt32>,
                                    counters: [UInt64],
                                    xor: (UnsafeMutableRawPointer, UnsafeRawPointer, UnsafeMutableRawPointer, Int) -> Void,
                                    portableXOR: (UnsafeMutableRawPointer, UnsafeRawPointer, UnsafeMutableRawPointer, Int) -> Void,
                                    stitched: (UnsafeMutableRawPointer, UnsafeRawPointer, Int, UnsafeMutableRawPointer, Int,
                                               UnsafeMutablePointer<UInt64>, UnsafeRawPointer, Int) -> Void,
                                    portableStitched: (UnsafeMutableRawPointer, UnsafeRawPointer, Int, UnsafeMutableRawPointer, Int,
                                                       UnsafeMutablePointer<UInt64>, UnsafeRawPointer, Int) -> Void) {
        for groups in 1...3 {
            for counter in counters {
                let offset = groups % 3
                let data = rng.bytes(offset + 512 * groups), other = rng.bytes(512 * groups)
                let count = 512 * groups
                let x = state(&rng, counter)
                var ks = x, ps = x
                var viaKernel = [UInt8](repeating: 0, count: count), viaPortable = viaKernel
                data.withUnsafeBytes { d in
                    viaKernel.withUnsafeMutableBytes { o in withUnsafeMutableBytes(of: &ks) { xor($0.baseAddress!, d.baseAddress! + offset, o.baseAddress!, groups) } }
                    viaPortable.withUnsafeMutableBytes { o in withUnsafeMutableBytes(of: &ps) { portableXOR($0.baseAddress!, d.baseAddress! + offset, o.baseAddress!, groups) } }
                }
                #expect(viaKernel == viaPortable, "\(what): \(groups) groups from counter \(counter)")
                #expect(ks == ps, "\(what): the counter after \(groups) groups")
                // Stitched: seal (stride 512, MAC lag 1 over dst) and open (zeros, stride 0, lag 0 over `other`).
                let zeros = [UInt8](repeating: 0, count: 512)
                for (lag, source) in [(1, data), (0, zeros)] {
                    ks = x; ps = x
                    var kp = polyWords(&rng)
                    var pp = kp
                    let stride = lag == 1 ? 512 : 0
                    source.withUnsafeBytes { s in
                        other.withUnsafeBytes { m in
                            let src = s.baseAddress! + (lag == 1 ? offset : 0)
                            viaKernel.withUnsafeMutableBytes { o in
                                withUnsafeMutableBytes(of: &ks) { st in withUnsafeMutableBytes(of: &kp) {
                                    stitched(st.baseAddress!, src, stride, o.baseAddress!, groups, $0.baseAddress!.assumingMemoryBound(to: UInt64.self),
                                             lag == 1 ? UnsafeRawPointer(o.baseAddress!) : m.baseAddress!, lag)
                                } }
                            }
                            viaPortable.withUnsafeMutableBytes { o in
                                withUnsafeMutableBytes(of: &ps) { st in withUnsafeMutableBytes(of: &pp) {
                                    portableStitched(st.baseAddress!, src, stride, o.baseAddress!, groups, $0.baseAddress!.assumingMemoryBound(to: UInt64.self),
                                                     lag == 1 ? UnsafeRawPointer(o.baseAddress!) : m.baseAddress!, lag)
                                } }
                            }
                        }
                    }
                    #expect(viaKernel == viaPortable, "\(what) stitched, MAC lag \(lag): \(groups) groups from counter \(counter)")
                    #expect(ks == ps && kp == pp, "\(what) stitched, MAC lag \(lag): state and accumulator after \(groups) groups")
                }
            }
        }
    }

    @Test("Every Salsa20 implementation's entry points equal the portable code")
    func salsa20EntryPoints() {
        var rng = SplitMix64(seed: 0x5a15a)
        Self.each(Registries.salsa20) { name, impl in
            #expect(salsa20SelfTest(impl), "\(name): self-test")
            Self.checkGroups("salsa20 \(name)", &rng, state: Self.salsaState, counters: [0, 7, 0xffff_fffa, 0x1_ffff_fff9],
                             xor: impl.xor, portableXOR: Salsa20Portable.xor,
                             stitched: impl.xorPoly1305, portableStitched: Salsa20Portable.xorPoly1305)
            for counter: UInt64 in [0, 1, 0xffff_ffff, 0xffff_fffd, 0x1234_5678_9abc_def0] {
                let key = rng.bytes(32), keyB = rng.bytes(32), nonce = rng.bytes(24)
                key.withUnsafeBytes { k in keyB.withUnsafeBytes { kb in nonce.withUnsafeBytes { n in
                    let portable = xsalsa20InputCore(k.baseAddress!, n.baseAddress!, counter, .zero)
                    #expect(impl.xsalsa20Input(k.baseAddress!, n.baseAddress!, counter) == portable, "\(name): input block, counter \(counter)")
                    let pair = impl.xsalsa20InputPair(k.baseAddress!, kb.baseAddress!, n.baseAddress!)
                    let portablePair = xsalsa20InputPairCore(k.baseAddress!, kb.baseAddress!, n.baseAddress!, .zero)
                    #expect(pair.0 == portablePair.0 && pair.1 == portablePair.1, "\(name): input block pair")
                    let x = portable
                    var got = [UInt8](repeating: 0, count: 256), want = got
                    got.withUnsafeMutableBytes { g in want.withUnsafeMutableBytes { w in
                        impl.block(x, g.baseAddress!)
                        salsa20BlockCore(x, w.baseAddress!, .zero)
                    } }
                    #expect(got == want, "\(name): one block, counter \(counter)")
                    got.withUnsafeMutableBytes { g in want.withUnsafeMutableBytes { w in
                        impl.blocks2(x, g.baseAddress!)
                        salsa20Block2Core(x, w.baseAddress!, .zero)
                    } }
                    #expect(got == want, "\(name): two blocks, counter \(counter)")
                    got.withUnsafeMutableBytes { g in want.withUnsafeMutableBytes { w in
                        impl.blocks4(x, g.baseAddress!)
                        let base = w.baseAddress!
                        salsa20x4(x, counter, Salsa20Portable.self) { j, q, v in
                            base.storeBytes(of: v, toByteOffset: 64 * j + 16 * q, as: SIMD4<UInt32>.self)
                        }
                    } }
                    #expect(got == want, "\(name): four blocks, counter \(counter)")
                } } }
            }
            for r in [1, 2, 3, 8] {
                let bb = 128 * r
                for masked in [false, true] {
                    let input = rng.bytes(bb), mask = rng.bytes(bb)
                    var viaKernel = [UInt8](repeating: 0, count: bb), viaPortable = viaKernel
                    var jKernel: UInt64 = 0, jPortable: UInt64 = 1
                    input.withUnsafeBytes { i in mask.withUnsafeBytes { m in
                        // Whole 16-byte words (the portable code loads the diagonal layout aligned).
                        let src = i.baseAddress!, msk: UnsafeRawPointer? = masked ? m.baseAddress! : nil
                        viaKernel.withUnsafeMutableBytes { jKernel = impl.scryptBlockMix(src, msk, $0.baseAddress!, r) }
                        viaPortable.withUnsafeMutableBytes { jPortable = scryptBlockMix(src, msk, $0.baseAddress!, r) }
                    } }
                    #expect(viaKernel == viaPortable && jKernel == jPortable, "\(name): scryptBlockMix, r = \(r), mask \(masked)")
                }
            }
        }
    }

    @Test("Every ChaCha20 implementation's entry points equal the portable code")
    func chacha20EntryPoints() {
        var rng = SplitMix64(seed: 0xc4ac4a)
        Self.each(Registries.chacha20) { name, impl in
            #expect(chacha20SelfTest(impl), "\(name): self-test")
            // 32-bit counter in word 12, kept below 2^32 - 24 so that three groups cannot wrap it.
            Self.checkGroups("chacha20 \(name)", &rng, state: { rng, counter in
                var x = Self.salsaState(&rng, counter: 0)
                x[12] = UInt32(truncatingIfNeeded: counter)
                return x
            }, counters: [0, 7, 0x7fff_fff9, 0xffff_ffe0], xor: impl.xor, portableXOR: ChaCha20Portable.xor,
               stitched: impl.xorPoly1305, portableStitched: ChaCha20Portable.xorPoly1305)
        }
    }

    @Test("Every Salsa20 implementation through XSalsa20, Salsa20, SecretBox and scrypt pinned to it")
    func salsa20PublicAPI() throws {
        var rng = SplitMix64(seed: 0x5a1a)
        // Lengths for every path: single blocks and pairs of them, four-block runs, the secretbox short
        // path up to 480 bytes, whole groups with 1 to 511 bytes after them, the stitched path (two
        // groups and more after the first 32 bytes).
        let lengths = [0, 1, 31, 32, 63, 64, 65, 100, 128, 129, 200, 224, 225, 256, 257, 300, 479, 480, 481, 511, 512, 513,
                       767, 1023, 1024, 1056, 1057, 1100, 1567, 1568, 2000, 4096 + 33, 9000]
        try Kernels.forEachImplementation(of: "salsa20") { (name: String, backend: Backend) throws in
            for n in lengths {
                let key = SymmetricKey(data: rng.bytes(32)), nonce = rng.bytes(24), msg = rng.bytes(n)
                let pinned = key.pinned(to: backend), portable = key.pinned(to: .portable)
                #expect(try XSalsa20.xor(msg, key: pinned, nonce: nonce) == XSalsa20.xor(msg, key: portable, nonce: nonce),
                        "\(name): xsalsa20 \(n)")
                let box = try SecretBox.seal(msg, using: pinned, nonce: nonce)
                #expect(try box == SecretBox.seal(msg, using: portable, nonce: nonce), "\(name): secretbox seal \(n)")
                #expect(try SecretBox.open(box, using: pinned, nonce: nonce) == msg, "\(name): secretbox open \(n)")
                // Open into a separate buffer (the stitched open writes bare keystream there first).
                var out = [UInt8](repeating: 0xEE, count: n)
                try box.withUnsafeBytes { b in try out.withUnsafeMutableBytes { try SecretBox.open(b, into: $0, using: pinned, nonce: nonce) } }
                #expect(out == msg, "\(name): secretbox open into \(n)")
                var bad = box
                if !bad.isEmpty { bad[bad.count - 1] ^= 1 }
                #expect(throws: RampartError.authenticationFailure) { _ = try SecretBox.open(bad, using: pinned, nonce: nonce) }
                // A Salsa20 stream, cut at an odd point.
                let n8 = rng.bytes(8), counter = rng.next() >> 1
                var a = try Salsa20(key: pinned, nonce: n8, counter: counter), b = try Salsa20(key: portable, nonce: n8, counter: counter)
                let cut = n / 3
                #expect(a.xor(msg[..<cut]) + a.xor(msg[cut...]) == b.xor(msg), "\(name): salsa20 stream \(n) cut at \(cut)")
            }
            // Two short boxes under one nonce (the paired subkeys), against two single seals.
            for (na, nb) in [(0, 0), (40, 300), (480, 17), (100, 481)] {
                let ka = SymmetricKey(data: rng.bytes(32)).pinned(to: backend), kb = SymmetricKey(data: rng.bytes(32)).pinned(to: backend)
                let nonce = rng.bytes(24)
                var a = rng.bytes(na), b = rng.bytes(nb)
                let wantA = try SecretBox.sealDetached(a, using: ka.pinned(to: .portable), nonce: nonce)
                let wantB = try SecretBox.sealDetached(b, using: kb.pinned(to: .portable), nonce: nonce)
                var tagA = [UInt8](repeating: 0, count: 16), tagB = tagA
                try nonce.withUnsafeBytes { n in
                    try a.withUnsafeMutableBytes { pa in try b.withUnsafeMutableBytes { pb in
                        try tagA.withUnsafeMutableBytes { ta in try tagB.withUnsafeMutableBytes { tb in
                            try SecretBox.sealPair(inPlace: pa.baseAddress ?? ta.baseAddress!, count: na, tag: ta.baseAddress!, using: ka,
                                                   inPlace: pb.baseAddress ?? tb.baseAddress!, count: nb, tag: tb.baseAddress!, using: kb,
                                                   nonce: n.baseAddress!)
                        } }
                    } }
                }
                #expect(a == wantA.ciphertext && tagA == wantA.tag && b == wantB.ciphertext && tagB == wantB.tag,
                        "\(name): sealPair \(na), \(nb)")
            }
            // scrypt's ROMix (the BlockMix of the AVX-512VL build where it has one).
            for r in [1, 8] {
                let input = rng.bytes(128 * r)
                #expect(Scrypt.roMix(input, n: 16, r: r, backend: backend) == Scrypt.roMix(input, n: 16, r: r, backend: .portable),
                        "\(name): ROMix r = \(r)")
            }
        }
    }

    @Test("Every ChaCha20 implementation through ChaCha20 and ChaCha20-Poly1305 pinned to it")
    func chacha20PublicAPI() throws {
        var rng = SplitMix64(seed: 0xc4a)
        let lengths = [0, 1, 64, 255, 511, 512, 513, 1023, 1024, 1025, 1536 + 15, 4096 + 100, 9000]
        try Kernels.forEachImplementation(of: "chacha20") { (name: String, backend: Backend) throws in
            for n in lengths {
                let key = SymmetricKey(data: rng.bytes(32)), nonce = rng.bytes(12), msg = rng.bytes(n), aad = rng.bytes(n % 37)
                let pinned = key.pinned(to: backend), portable = key.pinned(to: .portable)
                #expect(try ChaCha20.xor(msg, key: pinned, nonce: nonce, counter: 1) == ChaCha20.xor(msg, key: portable, nonce: nonce, counter: 1),
                        "\(name): chacha20 \(n)")
                var ct = msg, tag = [UInt8](repeating: 0, count: 16)
                try ct.withUnsafeMutableBytes { c in try tag.withUnsafeMutableBytes { t in try nonce.withUnsafeBytes { nb in try aad.withUnsafeBytes { a in
                    try ChaChaPoly.seal(c, tag: t, using: pinned, nonce: nb, authenticating: a)
                } } } }
                var want = msg, wantTag = tag
                try want.withUnsafeMutableBytes { c in try wantTag.withUnsafeMutableBytes { t in try nonce.withUnsafeBytes { nb in try aad.withUnsafeBytes { a in
                    try ChaChaPoly.seal(c, tag: t, using: portable, nonce: nb, authenticating: a)
                } } } }
                #expect(ct == want && tag == wantTag, "\(name): ChaCha20-Poly1305 seal \(n)")
                // Open into a separate buffer (the stitched open) and in place.
                var out = [UInt8](repeating: 0, count: n)
                try ct.withUnsafeBytes { c in try out.withUnsafeMutableBytes { o in try tag.withUnsafeBytes { t in try nonce.withUnsafeBytes { nb in
                    try aad.withUnsafeBytes { a in try ChaChaPoly.open(c, into: o, tag: t, using: pinned, nonce: nb, authenticating: a) }
                } } } }
                #expect(out == msg, "\(name): ChaCha20-Poly1305 open into \(n)")
                var inPlace = ct
                try inPlace.withUnsafeMutableBytes { c in try tag.withUnsafeBytes { t in try nonce.withUnsafeBytes { nb in try aad.withUnsafeBytes { a in
                    try ChaChaPoly.open(c, tag: t, using: pinned, nonce: nb, authenticating: a)
                } } } }
                #expect(inPlace == msg, "\(name): ChaCha20-Poly1305 open in place \(n)")
            }
        }
    }
}
