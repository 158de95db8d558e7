// The kernel registry (Platform/Kernels.swift): every choice is named and listed, forcing the portable
// path deactivates all of them, and every implementation this machine runs, selected or not, gives the
// same bytes as the portable code (and a published answer) at sizes that reach the kernel. The vector
// files run every case through both backends as well (Vectors/VectorFileTests.swift).

@_spi(Testing) @testable import Rampart
import RampartTestSupport
import Testing

/// A deterministic, non-trivial byte pattern (no generator needed: the values only have to differ).
private func pattern(_ count: Int, _ salt: UInt8 = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 8 &+ Int(salt)) }
}

private func digest<H: HashFunction>(_ h: H, _ data: [UInt8]) -> [UInt8] {
    var h = h
    h.update(data: data)
    return h.finalize().withUnsafeBytes { Array($0) }
}

/// A primitive's probe: `run` gives the same bytes for every implementation (sizes chosen to reach the
/// kernels: bulk thresholds, stitched loops, lane schedulers), and `published` the indices of its outputs
/// that equal a published answer.
private struct Probe: Sendable {
    let published: [(Int, String)]
    let run: @Sendable (Backend) throws -> [[UInt8]]
}

/// The probe of every registry, by its name in `Kernels.all` (the three Montgomery registries share one).
private let probes: [String: Probe] = {
    var table: [String: Probe] = [
        "sha1": Probe(published: [(0, "a9993e364706816aba3e25717850c26c9cd0d89d")]) { b in
            return [digest(Insecure.SHA1(backend: b), Array("abc".utf8)), digest(Insecure.SHA1(backend: b), pattern(4099))]
        },
        "sha256": Probe(published: [(0, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")]) { b in
            return [digest(SHA256(backend: b), Array("abc".utf8)), digest(SHA256(backend: b), pattern(4099))]
        },
        "sha512": Probe(published: [(0, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")]) { b in
            return [digest(SHA512(backend: b), Array("abc".utf8)), digest(SHA512(backend: b), pattern(4099))]
        },
        "blake2b": Probe(published: [(0, "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")]) { b in
            return [digest(BLAKE2b512(backend: b), Array("abc".utf8)), digest(BLAKE2b512(backend: b), pattern(4099))]
        },
        "poly1305": Probe(published: []) { b in
            // Runs of 16 to 536 full blocks (odd and even group counts for either kernel, with and without a tail), one
            // shot and split at an odd byte; an all-ones key and message (the largest limbs); and the
            // parts of SecretBox and ChaCha20-Poly1305 that reach the MAC without a stitched kernel (an
            // in-place open authenticates the whole ciphertext first).
            var out: [[UInt8]] = []
            for (n, seed) in [(256, 40), (300, 41), (384, 42), (512, 43), (1037, 44), (2048, 45), (4099, 46), (8591, 47)] {
                let key = SymmetricKey(data: pattern(32, UInt8(seed))).pinned(to: b), msg = pattern(n, UInt8(seed + 20))
                out.append(try Poly1305.authenticationCode(for: msg, using: key).bytes)
                var mac = try Poly1305(key: key)
                mac.update(data: msg[..<(n / 3 | 1)])
                mac.update(data: msg[(n / 3 | 1)...])
                out.append(mac.finalize().bytes)
            }
            let ones = [UInt8](repeating: 0xFF, count: 70_000)
            out.append(try Poly1305.authenticationCode(for: ones, using: SymmetricKey(data: ones[..<32]).pinned(to: b)).bytes)
            let key = SymmetricKey(data: pattern(32, 48)).pinned(to: b)
            var box = try SecretBox.seal(pattern(5000, 49), using: key, nonce: pattern(24, 50))
            out.append(box)
            let boxTag = Array(box[..<16])
            try box.withUnsafeMutableBytes { m in
                try boxTag.withUnsafeBytes { t in
                    try SecretBox.open(inPlace: UnsafeMutableRawBufferPointer(rebasing: m[16...]), tag: t, using: key, nonce: pattern(24, 50))
                }
            }
            #expect(Array(box[16...]) == pattern(5000, 49))
            var sealed = pattern(3333, 51)
            var chachaTag = [UInt8](repeating: 0, count: 16)
            let nonce = pattern(12, 52), aad = pattern(700, 53)
            try sealed.withUnsafeMutableBytes { m in try chachaTag.withUnsafeMutableBytes { t in try nonce.withUnsafeBytes { nb in
                try aad.withUnsafeBytes { a in try ChaChaPoly.seal(m, tag: t, using: key, nonce: nb, authenticating: a) }
            } } }
            out += [sealed, chachaTag]
            try sealed.withUnsafeMutableBytes { m in try chachaTag.withUnsafeBytes { t in try nonce.withUnsafeBytes { nb in
                try aad.withUnsafeBytes { a in try ChaChaPoly.open(m, tag: t, using: key, nonce: nb, authenticating: a) }
            } } }
            #expect(sealed == pattern(3333, 51))
            return out
        },
        "salsa20": Probe(published: []) { b in
            let key = SymmetricKey(data: pattern(32, 1)), nonce = pattern(24, 2), msg = pattern(3001, 3)
            var stream = [UInt8](repeating: 0, count: msg.count)
            try msg.withUnsafeBytes { m in try stream.withUnsafeMutableBytes { o in
                try XSalsa20.xor(m, into: o, key: key.pinned(to: b), nonce: nonce)
            } }
            let box = try SecretBox.seal(msg, using: key.pinned(to: b), nonce: nonce)
            let opened = try SecretBox.open(box, using: key.pinned(to: b), nonce: nonce)
            #expect(opened == msg)
            return [stream, box]
        },
        "chacha20": Probe(published: [(0, "6e2e359a2568f98041ba0728dd0d6981")]) { b in
            // 3001 bytes: five 512-byte kernel groups, then the portable four-block path and a tail.
            let key = SymmetricKey(data: pattern(32, 14)).pinned(to: b), nonce = pattern(12, 15), msg = pattern(3001, 16)
            let stream = try ChaCha20.xor(msg, key: key, nonce: nonce, counter: 1)
            let box = try ChaChaPoly.seal(msg, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: pattern(17, 17))
            #expect(try ChaChaPoly.open(box, using: key, authenticating: pattern(17, 17)) == msg)
            // RFC 8439 §2.4.2 (first 16 bytes of the sunscreen ciphertext).
            let rfc = try ChaCha20.xor(Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8),
                                       key: SymmetricKey(data: (0..<32).map { UInt8($0) }).pinned(to: b),
                                       nonce: [0, 0, 0, 0, 0, 0, 0, 0x4a, 0, 0, 0, 0], counter: 1)
            return [Array(rfc[0..<16]), stream, box.ciphertext, box.tag]
        },
        "argon2": Probe(published: [(0, "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659")]) { b in
            // RFC 9106 §5.3, and a two-pass single-lane run that reaches the data-dependent addressing.
            let rfc = try Argon2id.deriveKey(password: [UInt8](repeating: 1, count: 32), salt: [UInt8](repeating: 2, count: 16),
                                             iterations: 3, memoryKiB: 32, parallelism: 4, outputByteCount: 32,
                                             secret: [UInt8](repeating: 3, count: 8), associatedData: [UInt8](repeating: 4, count: 12),
                                             backend: b)
            let other = try Argon2id.deriveKey(password: pattern(20, 18), salt: pattern(16, 19), iterations: 2, memoryKiB: 300,
                                               parallelism: 1, outputByteCount: 80, backend: b)
            return [rfc.withUnsafeBytes { Array($0) }, other.withUnsafeBytes { Array($0) }]
        },
        "aes": Probe(published: [(0, "8ea2b7ca516745bfeafc49904b496089")]) { b in  // FIPS-197 C.3
            // FIPS-197 C.3; IGE, CBC and CTR over 1 KiB; CTR and CBC decryption over sixteen-block groups
            // and a tail (4133 bytes = 258 whole blocks and 5; CBC on the 4128 whole-block bytes), in
            // place at an odd offset, and CTR across the low counter word's carry (where the VAES tier
            // hands over to AES-NI's).
            let cipher = try AES.Cipher(key: pattern(32, 4), backend: b)
            let fips = try AES.Cipher(key: (0..<32).map { UInt8($0) }, backend: b)
            let block = try fips.encrypt(block: (0..<16).map { UInt8($0 * 0x11) })
            let msg = pattern(1024, 5), iv32 = pattern(32, 6)
            let ige = try AES.IGE.encrypt(msg, using: cipher, iv: iv32)
            #expect(try AES.IGE.decrypt(ige, using: cipher, iv: iv32) == msg)
            let cbc = try AES.CBC.encrypt(msg, using: cipher, iv: Array(iv32[0..<16]))
            #expect(try AES.CBC.decrypt(cbc, using: cipher, iv: Array(iv32[0..<16])) == msg)
            var ctr = msg
            let stream = try AES.CTR(cipher: cipher, counter: Array(iv32[16..<32]))
            ctr.withUnsafeMutableBytes { stream.xor($0) }
            let long = pattern(4133, 31), iv = pattern(16, 32)
            let carry: [UInt8] = [7, 7, 7, 7, 7, 7, 7, 7, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0]
            var runs: [[UInt8]] = []
            for counter in [iv, carry] {
                var buffer = [UInt8](repeating: 0, count: long.count + 3)
                buffer.replaceSubrange(3..., with: long)
                buffer.withUnsafeMutableBytes { all in
                    let region = UnsafeMutableRawBufferPointer(rebasing: all[3...])
                    (try? AES.CTR(cipher: cipher, counter: counter))?.xor(region)
                }
                runs.append(Array(buffer[3...]))
            }
            let whole = Array(long[0..<4128])
            let longCBC = try AES.CBC.encrypt(whole, using: cipher, iv: iv)
            #expect(try AES.CBC.decrypt(longCBC, using: cipher, iv: iv) == whole, "CBC round trip")
            return [block, ige, cbc, ctr, longCBC] + runs
        },
        "ige-sha256": Probe(published: []) { b in
            // IGE decryption with SHA-256(prefix ‖ plaintext) (MTProto's receiver) at every block count
            // from 0 to 70 (the SHA-256 block boundary falls 32 bytes into the plaintext), against
            // decryption then SHA-256 separately; the stitched kernel runs on hardware.
            let cipher = try AES.Cipher(key: pattern(32, 33), backend: b)
            let prefix = pattern(32, 34), iv = pattern(32, 35)
            var out: [[UInt8]] = []
            for blocks in 0...70 {
                var buffer = pattern(16 * blocks, UInt8(blocks))
                let expectedPlain = try AES.IGE.decrypt(buffer, using: cipher, iv: iv)
                var expectedHash = SHA256()
                expectedHash.update(data: prefix + expectedPlain)
                var v = iv
                var digest = [UInt8](repeating: 0, count: 32)
                buffer.withUnsafeMutableBytes { bb in
                    v.withUnsafeMutableBytes { vb in
                        prefix.withUnsafeBytes { pb in
                            digest.withUnsafeMutableBytes { db in
                                AES.IGE.decryptHashing(bb.baseAddress ?? UnsafeMutableRawPointer(vb.baseAddress!), blocks: blocks,
                                                       using: cipher, iv: vb.baseAddress!, prefix: pb, digest: db.baseAddress!)
                            }
                        }
                    }
                }
                #expect(buffer == expectedPlain, "plaintext, \(blocks) blocks")
                #expect(digest == expectedHash.finalize().withUnsafeBytes { Array($0) }, "digest, \(blocks) blocks")
                if blocks > 0 { #expect(Array(v[0..<16]) == Array(buffer.isEmpty ? [] : pattern(16 * blocks, UInt8(blocks)).suffix(16))) }
                out.append(buffer + digest)
            }
            return out
        },
        "ige-lanes": Probe(published: []) { b in
            // 21 messages under 21 keys, 0 to 40 blocks each in a scrambled order (lanes take new jobs
            // while others are mid-message, an empty job among them, idle lanes at the end), through
            // the multi-buffer scheduler; each must equal that message alone through AES.IGE.
            var data: [[UInt8]] = [], ivs: [[UInt8]] = [], keys: [[UInt8]] = []
            for j in 0..<21 {
                data.append(pattern(16 * ((j * 13) % 41), UInt8(j)))
                ivs.append(pattern(32, UInt8(100 + j)))
                keys.append(pattern(32, UInt8(200 + j)))
            }
            var expected = data, expectedIVs = ivs
            for j in 0..<21 {
                let cipher = try AES.Cipher(key: keys[j], backend: b)
                expected[j].withUnsafeMutableBytes { d in
                    expectedIVs[j].withUnsafeMutableBytes { v in
                        AES.IGE.encrypt(d.baseAddress ?? v.baseAddress!, blocks: d.count / 16, using: cipher, iv: v.baseAddress!)
                    }
                }
            }
            let area = UnsafeMutableRawPointer.allocate(byteCount: 21 * (32 + 32 + 640), alignment: 16)
            defer { area.deallocate() }
            var jobs: [MultiBuffer.IGEJob] = []
            for j in 0..<21 {
                let base = area + j * (32 + 32 + 640)
                keys[j].withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: 32) }
                ivs[j].withUnsafeBytes { (base + 32).copyMemory(from: $0.baseAddress!, byteCount: 32) }
                data[j].withUnsafeBytes { if $0.count > 0 { (base + 64).copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
                jobs.append(MultiBuffer.IGEJob(key: UnsafeRawPointer(base), iv: base + 32, data: base + 64, blocks: data[j].count / 16))
            }
            jobs.withUnsafeBufferPointer { MultiBuffer.igeEncrypt($0, backend: b) }
            var out: [[UInt8]] = []
            for j in 0..<21 {
                let base = area + j * (32 + 32 + 640)
                let got = Array(UnsafeRawBufferPointer(start: base + 64, count: data[j].count))
                let iv = Array(UnsafeRawBufferPointer(start: base + 32, count: 32))
                #expect(got == expected[j], "message \(j), \(data[j].count / 16) blocks")
                #expect(iv == expectedIVs[j], "IV after message \(j)")
                out += [got, iv]
            }
            return out
        },
        "sha256-lanes": Probe(published: []) { b in
            // 45 jobs of 0 to 3 runs (0 to 40 blocks in all) through the lane scheduler (2 to 32 lanes,
            // jobs ending at different steps, lanes taking new jobs, idle lanes at the end), each equal
            // to its runs hashed alone; on hardware also through every lane kernel the processor can
            // run (SHA-NI pairs, AVX2, AVX-512VL, 512-bit with 16 and 32 lanes), and the selected one
            // with few jobs (the 512-bit kernels give way to narrower ones there).
            let jobCount = 45
            var blocks: [[[UInt8]]] = []
            for j in 0..<jobCount {
                var runs: [[UInt8]] = []
                for r in 0..<(j % 4) { runs.append(pattern(64 * ((j * 7 + r * 5) % 17), UInt8(j * 3 + r))) }
                blocks.append(runs)
            }
            var expected: [[UInt8]] = []
            for runs in blocks {
                var w: [UInt32] = (0..<8).map { 0x0101_0101 &* UInt32($0 + 1) }
                for r in runs {
                    r.withUnsafeBytes { raw in
                        w.withUnsafeMutableBufferPointer { s in
                            Registries.sha256.portable.blocks(s.baseAddress!, raw.baseAddress ?? UnsafeRawPointer(s.baseAddress!), raw.count / 64)
                        }
                    }
                }
                expected.append(w.flatMap { v in (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } })
            }
            func viaJobs(_ backend: Backend, count: Int = jobCount) -> [[UInt8]] {
                let statesArea = UnsafeMutablePointer<UInt32>.allocate(capacity: 8 * jobCount)
                defer { statesArea.deallocate() }
                var storage = blocks.map { $0.map { r -> UnsafeMutableRawPointer in
                    let p = UnsafeMutableRawPointer.allocate(byteCount: max(r.count, 1), alignment: 16)
                    r.withUnsafeBytes { if $0.count > 0 { p.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
                    return p
                } }
                defer { for runs in storage { for p in runs { p.deallocate() } }; storage = [] }
                var jobs: [MultiBuffer.SHA256Job] = []
                for j in 0..<count {
                    let st = statesArea + 8 * j
                    for w in 0..<8 { st[w] = 0x0101_0101 &* UInt32(w + 1) }
                    let runs = (0..<blocks[j].count).map { (UnsafeRawPointer(storage[j][$0]), blocks[j][$0].count / 64) }
                    let first = runs.first ?? (UnsafeRawPointer(statesArea), 0)
                    jobs.append(MultiBuffer.SHA256Job(state: st, first, runs.count > 1 ? runs[1] : nil, runs.count > 2 ? runs[2] : nil))
                }
                jobs.withUnsafeBufferPointer { MultiBuffer.sha256($0, backend: backend) }
                return (0..<count).map { j in (0..<8).flatMap { w in (0..<4).map { UInt8(truncatingIfNeeded: statesArea[8 * j + w] >> (8 * $0)) } } }
            }
            let got = viaJobs(b)
            for j in 0..<jobCount { #expect(got[j] == expected[j], "job \(j)") }
            for few in [2, 5, 10, 11, 16, 17] {
                #expect(viaJobs(b, count: few) == Array(expected[0..<few]), "\(few) jobs")
            }
            return got
        },
        "ghash": Probe(published: []) { b in
            let cipher = try AES.Cipher(key: pattern(32, 7), backend: b)
            let msg = pattern(1037, 8), aad = pattern(300, 9)
            let nonce = try AES.GCM.Nonce(data: pattern(12, 10))
            let box = try AES.GCM.seal(msg, using: cipher, nonce: nonce, authenticating: aad)
            #expect(try AES.GCM.open(box, using: cipher, authenticating: aad) == msg)
            // Sixteen-block groups and a tail: 4133 bytes = 258 whole blocks (16 groups of 16, then 2)
            // and 5 bytes, through a per-call table and a prepared cipher.
            let long = pattern(4133, 26), longAAD = pattern(41, 27)
            let longNonce = try AES.GCM.Nonce(data: pattern(12, 28))
            let key = SymmetricKey(data: pattern(32, 29))
            var out = [box.ciphertext, Array(box.tag)]
            for c in [try AES.Cipher(key: key, backend: b), try AES.Cipher(gcmKey: key.pinned(to: b))] {
                let sealed = try AES.GCM.seal(long, using: c, nonce: longNonce, authenticating: longAAD)
                #expect(try AES.GCM.open(sealed, using: c, authenticating: longAAD) == long)
                out += [sealed.ciphertext, Array(sealed.tag)]
            }
            return out
        },
        "montgomery": Probe(published: []) { b in
            // Fermat on the 2048-bit MTProto prime: 3^(p−1) ≡ 1, through both power routines; a 1088-bit
            // modulus (not the wide or IFMA kernels' size) for the generic kernel; and a 1024-bit one
            // (the IFMA kernel's paired size) with a constant-time power, alone and paired with a second
            // 1024-bit modulus (an RSA-2048 private operation's two CRT halves, interleaved on IFMA).
            let p = DiffieHellman.telegramPrime
            let mod = try Modulus(p, backend: b)
            let pm1 = try p - BigUInt(1)
            #expect(mod.publicPower(BigUInt(3), pm1) == BigUInt(1))
            #expect(mod.constantTimePower(BigUInt(3), pm1) == BigUInt(1))
            let odd = BigUInt(bigEndian: pattern(136, 11) + [1])
            let small = try Modulus(odd, backend: b)
            let base = BigUInt(bigEndian: pattern(100, 12)), exp = BigUInt(bigEndian: pattern(64, 13))
            let half = try Modulus(BigUInt(bigEndian: [0x80] + pattern(126, 14) + [1]), backend: b)
            let other = try Modulus(BigUInt(bigEndian: [0xC1] + pattern(126, 15) + [3]), backend: b)
            let exp2 = BigUInt(bigEndian: pattern(128, 16))
            let pair = Modulus.constantTimePowerPair(half, base: base, exponent: exp2, other, base: BigUInt(bigEndian: pattern(90, 17)), exponent: exp)
            return [small.publicPower(base, exp).bigEndianBytes(), small.constantTimePower(base, exp).bigEndianBytes(),
                    mod.publicPower(base, exp).bigEndianBytes(), half.constantTimePower(base, exp).bigEndianBytes(),
                    pair.0.bigEndianBytes(), pair.1.bigEndianBytes()]
        },
        "x25519": Probe(published: [(0, "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552")]) { b in
            // RFC 7748 §5.2 vector 1, a public key from the base point, and a random pair.
            let rfc = try Curve25519.scalarMultiply(scalar: hexBytes("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4"),
                                                    point: hexBytes("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c"),
                                                    backend: b)
            let pub = try Curve25519.scalarMultiply(scalar: pattern(32, 23), point: [UInt8]?.none, backend: b)
            let shared = try Curve25519.scalarMultiply(scalar: pattern(32, 24), point: pattern(32, 25), backend: b)
            return [rfc, pub, shared]
        },
        "x25519-lanes": Probe(published: [(0, "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552")]) { b in
            // Thirteen pairs (a full batch of eight, then five through the lanes again with three padding
            // lanes), RFC 7748 §5.2 vector 1 among them, through the batch call.
            let k1 = hexBytes("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4")
            let u1 = hexBytes("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c")
            let scalars = [k1] + (1..<13).map { pattern(32, UInt8(30 + $0)) }
            let points = [u1] + (1..<13).map { pattern(32, UInt8(60 + $0)) }
            let got = try Curve25519.scalarMultiply(scalars: scalars, points: points, backend: b)
            return got
        },
    ]
    table["modexp-2048"] = table["montgomery"]
    table["modexp-ct"] = table["montgomery"]
    return table
}()

@Suite struct KernelRegistryTests {
    @Test func everyChoiceIsNamedOnceAndListed() {
        let names = Kernels.all.map(\.primitive)
        #expect(Set(names).count == names.count)
        #expect(names == ["sha1", "sha256", "sha512", "blake2b", "poly1305", "salsa20", "chacha20", "argon2", "aes", "ige-sha256", "ige-lanes", "sha256-lanes", "ghash",
                          "montgomery", "modexp-2048", "modexp-ct", "x25519", "x25519-lanes"])
        for k in Kernels.all {
            #expect(k.description == "\(k.primitive): \(k.selected)")
            if k.isActive { #expect(k.kernel != nil && k.selected == k.kernel) } else { #expect(k.selected == "portable") }
        }
        #expect(Kernels.summary.contains("sha256: \(Kernels.sha256.selected)"))
        // A GHASH kernel runs only where an AES kernel of the layout its GCM loop reads does.
        if Kernels.ghash.isActive { #expect(Kernels.aes.isActive) }
    }

    @Test func forcingThePortablePathDeactivatesEveryKernel() {
        if CPU.forcePortable {
            #expect(Kernels.all.allSatisfy { !$0.isActive })
        } else if FaultSwitch.names.isEmpty {  // under CI's fault switch the next implementations run
            // Each choice follows the features kernels may use.
            #expect(Kernels.sha256.isActive == (Kernels.sha256.kernel != nil && (CPU.features.sha || CPU.features.avx2)))
            #expect(Kernels.sha1.isActive == (Kernels.sha1.kernel != nil && (CPU.features.sha || CPU.features.avx2)))
            #expect(Kernels.aes.isActive == (Kernels.aes.kernel != nil && (CPU.features.aes || CPU.features.armAES)))
            // The IFMA tier needs AVX-512VL too: hiding it (as ctgrind does) must turn these off even
            // though the detected IFMA bit stays set.
            let ifma = CPU.features.avx512vl && CPU.features.avx512ifma && CPU.features.bmi2 && CPU.features.adx
            #expect(Kernels.poly1305.isActive == (Kernels.poly1305.kernel != nil && (ifma || (CPU.features.avx2 && CPU.features.bmi2))))
            if Kernels.poly1305.isActive { #expect(Kernels.poly1305.selected == (ifma ? "avx512ifma" : "avx2")) }
            #expect(Kernels.modexpIFMA.isActive == (Kernels.modexpIFMA.kernel != nil && ifma))
        }
    }

    @Test func aPinnedKeyCarriesItsBackend() throws {
        let key = SymmetricKey(data: pattern(32, 20))
        let portable = key.pinned(to: .portable)
        #expect(portable == key && portable.byteCount == 32)
        #expect(try AES.Cipher(key: portable).backend == .portable)
        #expect(try AES.Cipher(key: key.pinned(to: .hardware)).backend == (Kernels.aes.isActive ? .hardware : .portable))
        #expect(try AES.Cipher(key: key).backend == (Kernels.aes.isActive ? .hardware : .portable))
        // Both pinnings give the same bytes through the one-shot calls.
        let nonce = pattern(24, 21), msg = pattern(2000, 22)
        #expect(try SecretBox.seal(msg, using: portable, nonce: nonce) == SecretBox.seal(msg, using: key, nonce: nonce))
    }

    /// Every implementation of every registry this processor runs (the selected one, the tiers below it,
    /// the portable code) gives the portable code's bytes, and the published answers: the registry's
    /// forEachImplementation in place of reruns with CPU features hidden.
    @Test(arguments: Kernels.all.map(\.primitive))
    func everyImplementationMatchesPortableCode(_ primitive: String) throws {
        let probe = try #require(probes[primitive], "no probe for kernel choice \(primitive): add one to `probes`")
        let reference = try probe.run(.portable)
        #expect(!reference.isEmpty)
        for (index, answer) in probe.published { #expect(hexString(reference[index]) == answer, "\(primitive): published answer \(index)") }
        var names: [String] = []
        try Kernels.forEachImplementation(of: primitive) { name, backend in
            names.append(name)
            let got = try probe.run(backend)
            #expect(got.count == reference.count, "\(primitive) \(name): output count")
            for (k, (g, r)) in zip(got, reference).enumerated() {
                #expect(hexString(g) == hexString(r), "\(primitive): implementation \(name) and the portable code differ at output \(k)")
            }
        }
        // The selected implementation is among those run, and so is the portable code.
        #expect(names.contains("portable"), "\(primitive): \(names)")
        let selected = Kernels.all.first { $0.primitive == primitive }!.selected
        #expect(names.contains(selected), "\(primitive): selected \(selected), ran \(names)")
    }
}
