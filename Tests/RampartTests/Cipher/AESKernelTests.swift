// The AES family's registries (Platform/Registrations.swift): every implementation of `aes`, `ghash`,
// `ige-sha256` and `ige-lanes` this processor runs, pinned in turn, against the portable code at sizes
// that reach each kernel (single blocks, the eight-block groups of AES-NI, the sixteen-block groups of
// VAES and their tails) from unaligned buffers; GCM through every pair of AES and GHASH
// implementations (a GHASH kernel's GCM loop only on keys whose schedule it reads, CTR and GHASH one
// after the other otherwise); and the fault switch for each registry.

@_spi(Testing) @testable import Rampart
internal import RampartKernelSupport
import RampartTestSupport
import Testing

/// Byte lengths for the stream modes (CTR, GCM): a block and around it, around the sixteen-block
/// group, and a long odd length.
private let streamLengths = [1, 15, 16, 17, 127, 128, 129, 255, 256, 257, 4096 + 13]
/// Block counts for ECB, CBC and IGE: around the eight-block group of AES-NI and the sixteen-block
/// group of VAES, and long.
private let blockCounts = [1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 257]

/// `body` on a copy of `bytes` at an odd offset of a larger buffer (unaligned, in place); the bytes it
/// left there.
private func unaligned(_ bytes: [UInt8], _ body: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows -> [UInt8] {
    var storage = [UInt8](repeating: 0xEE, count: bytes.count + 3 + 8)
    storage.replaceSubrange(3..<(3 + bytes.count), with: bytes)
    try storage.withUnsafeMutableBytes { try body(UnsafeMutableRawBufferPointer(rebasing: $0[3..<(3 + bytes.count)])) }
    #expect(storage[..<3].allSatisfy { $0 == 0xEE } && storage[(3 + bytes.count)...].allSatisfy { $0 == 0xEE })
    return Array(storage[3..<(3 + bytes.count)])
}

/// Every AES operation with `cipher` on the test sizes: ECB, CBC and IGE both ways, CTR from an
/// ordinary counter and across the low counter word's carry.
private func aesOutputs(_ cipher: AES.Cipher, _ g: inout SplitMix64) throws -> [[UInt8]] {
    var out: [[UInt8]] = []
    for n in blockCounts {
        let msg = g.bytes(16 * n), iv32 = g.bytes(32)
        let ecb = try unaligned(msg) { try cipher.encrypt(blocks: $0) }
        #expect(try unaligned(ecb) { try cipher.decrypt(blocks: $0) } == msg)
        var iv = Array(iv32[0..<16])
        let cbc = try unaligned(msg) { b in try iv.withUnsafeMutableBytes { try AES.CBC.encrypt(b, using: cipher, iv: $0) } }
        out += [ecb, cbc, iv]
        iv = Array(iv32[0..<16])
        #expect(try unaligned(cbc) { b in try iv.withUnsafeMutableBytes { try AES.CBC.decrypt(b, using: cipher, iv: $0) } } == msg)
        var v = iv32
        let ige = try unaligned(msg) { b in try v.withUnsafeMutableBytes { try AES.IGE.encrypt(b, using: cipher, iv: $0) } }
        out += [ige, v]
        v = iv32
        #expect(try unaligned(ige) { b in try v.withUnsafeMutableBytes { try AES.IGE.decrypt(b, using: cipher, iv: $0) } } == msg)
    }
    let carry: [UInt8] = [7, 7, 7, 7, 7, 7, 7, 7, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF5]
    for n in streamLengths {
        let msg = g.bytes(n)
        for counter in [g.bytes(16), carry] {
            let stream = try AES.CTR(cipher: cipher, counter: counter)
            out.append(unaligned(msg) { stream.xor($0) })
            out.append(stream.counter)
        }
    }
    return out
}

/// GCM with `cipher` on the test sizes: 12-byte and 60-byte nonces, no, short and long associated
/// data; sealed, then opened (and a flipped tag bit refused).
private func gcmOutputs(_ cipher: AES.Cipher, _ g: inout SplitMix64) throws -> [[UInt8]] {
    var out: [[UInt8]] = []
    for n in streamLengths {
        for (nonceLength, aadLength) in [(12, 0), (12, 20), (60, 300)] {
            let msg = g.bytes(n), nonce = g.bytes(nonceLength), aad = g.bytes(aadLength)
            var tag = [UInt8](repeating: 0, count: 16)
            let sealed = try unaligned(msg) { b in
                try nonce.withUnsafeBytes { nb in try aad.withUnsafeBytes { a in try tag.withUnsafeMutableBytes { t in
                    try AES.GCM.seal(b, tag: t, using: cipher, nonce: nb, authenticating: a)
                } } }
            }
            out += [sealed, tag]
            let opened = try unaligned(sealed) { b in
                try nonce.withUnsafeBytes { nb in try aad.withUnsafeBytes { a in try tag.withUnsafeBytes { t in
                    try AES.GCM.open(b, tag: t, using: cipher, nonce: nb, authenticating: a)
                } } }
            }
            #expect(opened == msg)
            tag[n % 16] ^= 4
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: sealed, tag: tag)
            #expect(throws: RampartError.authenticationFailure) { try AES.GCM.open(box, using: cipher, authenticating: aad) }
        }
    }
    return out
}

@Suite("AES family registries")
struct AESKernelTests {
    @Test("aes: every implementation equals the portable code", arguments: [16, 24, 32])
    func aesEveryImplementation(keyLength: Int) throws {
        #expect(Kernels.implementations(of: "aes").last == "portable")
        var g = SplitMix64(seed: UInt64(keyLength))
        let key = SymmetricKey(data: g.bytes(keyLength))
        var r = SplitMix64(seed: 7)
        let want = try aesOutputs(AES.Cipher(key: key, backend: .portable), &r)
        try Kernels.forEachImplementation(of: "aes") { name, backend in
            let cipher = try AES.Cipher(key: key, backend: backend)
            #expect(cipher.implementationNames.aes == name)
            var r = SplitMix64(seed: 7)
            let got = try aesOutputs(cipher, &r)
            #expect(got.count == want.count)
            for (k, (a, b)) in zip(got, want).enumerated() where a != b {
                Issue.record("aes \(name), AES-\(8 * keyLength): output \(k) differs from the portable code")
                return
            }
        }
    }

    /// Every pair of AES and GHASH implementations, with a table made per call and with a `gcmKey`
    /// cipher's: the same bytes as the portable pair. A pair runs the GHASH implementation's GCM loop
    /// exactly when it reads the AES implementation's schedule layout.
    @Test("GCM: every pair of AES and GHASH implementations equals the portable pair", arguments: [false, true])
    func gcmEveryPair(prepared: Bool) throws {
        var g = SplitMix64(seed: 0x6C3)
        let key = SymmetricKey(data: g.bytes(32))
        var r = SplitMix64(seed: 8)
        let want = try gcmOutputs(AES.Cipher(key: key, aes: .portable, ghash: .portable, gcm: prepared), &r)
        let ghashNames = Kernels.implementations(of: "ghash")
        #expect(ghashNames.last == "portable")
        for aesName in Kernels.implementations(of: "aes") {
            for ghashName in ghashNames {
                let cipher = try AES.Cipher(key: key, aes: Kernels.pinned("aes", to: aesName)!,
                                            ghash: Kernels.pinned("ghash", to: ghashName)!, gcm: prepared)
                #expect(cipher.implementationNames.aes == aesName && cipher.implementationNames.ghash == ghashName)
                let stitched = Registries.aes.runnableImplementation(named: aesName)!.layout
                    == Registries.ghash.runnableImplementation(named: ghashName)!.aesLayout
                #expect(cipher.schedule.gcmStitched == stitched)
                var r = SplitMix64(seed: 8)
                let got = try gcmOutputs(cipher, &r)
                #expect(got.count == want.count)
                for (k, (a, b)) in zip(got, want).enumerated() where a != b {
                    Issue.record("GCM with aes \(aesName), ghash \(ghashName), prepared \(prepared): output \(k) differs")
                    break
                }
            }
        }
    }

    /// MTProto's receiver: IGE decryption with SHA-256(prefix ‖ plaintext), at every block count from 0
    /// to 40 and at 64 and 65, through every ige-sha256 and every AES implementation (pinned in turn),
    /// against decryption and SHA-256 one after the other on the portable code; and the stack-schedule
    /// form under a key given as bytes.
    @Test("ige-sha256: every implementation and every AES implementation equal decryption then SHA-256")
    func igeSHA256EveryImplementation() throws {
        var g = SplitMix64(seed: 0x16E)
        let keyBytes = g.bytes(32), prefix = g.bytes(32), iv = g.bytes(32)
        let key = SymmetricKey(data: keyBytes)
        var backends: [(String, Backend)] = [("hardware", .hardware), ("portable", .portable)]
        for p in ["ige-sha256", "aes"] { for n in Kernels.implementations(of: p) { backends.append(("\(p)=\(n)", Kernels.pinned(p, to: n)!)) } }
        // Each stitched kernel with the AES implementation of the layout it reads (a pin names one
        // primitive, so the pins above reach a stitched kernel only with the selected AES).
        var pairs: [(String, Backend, Backend)] = []
        for n in Kernels.implementations(of: "ige-sha256") where n != "portable" {
            let layout = Registries.igeSHA256.runnableImplementation(named: n)!.aesLayout
            let aesName = try #require(Registries.aesImplementation(reading: layout)?.name, "no AES implementation for \(n)")
            pairs.append((n, Kernels.pinned("aes", to: aesName)!, Kernels.pinned("ige-sha256", to: n)!))
        }
        let reference = try AES.Cipher(key: key, backend: .portable)
        for blocks in Array(0...40) + [64, 65] {
            let ct = g.bytes(16 * blocks)
            let plain = try AES.IGE.decrypt(ct, using: reference, iv: iv)
            var h = SHA256(backend: .portable)
            h.update(data: prefix + plain)
            let digest = h.finalize().withUnsafeBytes { Array($0) }
            let ciphers = try backends.map { ($0.0, $0.1, try AES.Cipher(key: key, backend: $0.1)) }
                + pairs.map { ("\($0.0) with its AES", $0.1, try AES.Cipher(key: key, aes: $0.1, ghash: .hardware, igeSHA256: $0.2, gcm: false)) }
            for (n, _, _) in pairs where blocks == 0 {
                #expect(ciphers.contains { $0.0 == "\(n) with its AES" && $0.2.implementationNames.igeSHA256 == n })
            }
            for (name, backend, cipher) in ciphers {
                if let stitched = cipher.implementationNames.igeSHA256 {
                    #expect(Registries.igeSHA256.runnableImplementation(named: stitched)!.aesLayout == cipher.schedule.aes.layout)
                }
                for viaBytes in [false, true] where !viaBytes || backend == .hardware {
                    var buffer = ct, v = iv, d = [UInt8](repeating: 0, count: 32)
                    buffer.withUnsafeMutableBytes { b in v.withUnsafeMutableBytes { vb in prefix.withUnsafeBytes { pb in
                        d.withUnsafeMutableBytes { db in keyBytes.withUnsafeBytes { kb in
                            let p = b.baseAddress ?? vb.baseAddress!
                            if viaBytes {
                                AES.IGE.decryptHashing(p, blocks: blocks, key256: kb.baseAddress!, iv: vb.baseAddress!, prefix: pb, digest: db.baseAddress!)
                            } else {
                                AES.IGE.decryptHashing(p, blocks: blocks, using: cipher, iv: vb.baseAddress!, prefix: pb, digest: db.baseAddress!)
                            }
                        } }
                    } } }
                    #expect(buffer == plain && d == digest, "\(name)\(viaBytes ? " (key bytes)" : ""): \(blocks) blocks")
                    if blocks > 0 { #expect(Array(v[0..<16]) == Array(ct.suffix(16)) && Array(v[16...]) == Array(plain.suffix(16))) }
                }
            }
        }
    }

    /// The multi-buffer IGE encryption through every ige-lanes implementation (pinned): 37 jobs of 0 to
    /// 40 blocks under their own keys, each equal to its message alone on the portable code; and the
    /// sixteen-lane 512-bit VAES kernel, which the registry lists only where the 512-bit units are full
    /// width, directly wherever the processor has its features.
    @Test("ige-lanes: every implementation equals one message at a time")
    func igeLanesEveryImplementation() throws {
        var g = SplitMix64(seed: 0x1A5E)
        let jobCount = 37
        let keys = (0..<jobCount).map { _ in g.bytes(32) }, ivs = (0..<jobCount).map { _ in g.bytes(32) }
        let data = (0..<jobCount).map { j in g.bytes(16 * ((j * 13) % 41)) }
        var expected = data, expectedIVs = ivs
        for j in 0..<jobCount {
            let cipher = try AES.Cipher(key: keys[j], backend: .portable)
            expected[j] = try AES.IGE.encrypt(data[j], using: cipher, iv: ivs[j])
            if !data[j].isEmpty { expectedIVs[j] = Array(expected[j].suffix(16)) + Array(data[j].suffix(16)) }
        }
        Kernels.forEachImplementation(of: "ige-lanes") { name, backend in
            for count in [jobCount, 2, 17] {
                let stride = 64 + 16 * 40
                let area = UnsafeMutableRawPointer.allocate(byteCount: count * stride, alignment: 16)
                defer { area.deallocate() }
                var jobs: [MultiBuffer.IGEJob] = []
                for j in 0..<count {
                    let base = area + j * stride
                    keys[j].withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: 32) }
                    ivs[j].withUnsafeBytes { (base + 32).copyMemory(from: $0.baseAddress!, byteCount: 32) }
                    data[j].withUnsafeBytes { if $0.count > 0 { (base + 64).copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
                    jobs.append(MultiBuffer.IGEJob(key: UnsafeRawPointer(base), iv: base + 32, data: base + 64, blocks: data[j].count / 16))
                }
                jobs.withUnsafeBufferPointer { MultiBuffer.igeEncrypt($0, backend: backend) }
                for j in 0..<count {
                    let base = area + j * stride
                    #expect(Array(UnsafeRawBufferPointer(start: base + 64, count: data[j].count)) == expected[j], "\(name): job \(j) of \(count)")
                    #expect(Array(UnsafeRawBufferPointer(start: base + 32, count: 32)) == expectedIVs[j], "\(name): IV of job \(j) of \(count)")
                }
            }
        }
        #if arch(x86_64)
        let all = Registries.igeLanesRegistry(Registries.igeLanesCandidates(fullWidthAVX512: true), faults: [])
        #expect(all.statuses.first?.name == "vaes512-x16")
        guard let x16 = all.runnableImplementation(named: "vaes512-x16") else {
            print("note: no VAES with AVX-512VL here: the sixteen-lane kernel is not run")
            return
        }
        try laneKernelAlone(x16, &g)
        #endif
    }

    /// `impl` called directly on all its lanes, each with its own key, IV and data and the last lane
    /// idle (stride 0 on a zero schedule), against each message alone on the portable code.
    private func laneKernelAlone(_ impl: any IGELanesImplementation.Type, _ g: inout SplitMix64) throws {
        let lanes = impl.lanes, sb = impl.scheduleBytes, n = 9
        let keys = (0..<lanes).map { _ in g.bytes(32) }, ivs = (0..<lanes).map { _ in g.bytes(32) }
        let data = (0..<lanes).map { _ in g.bytes(16 * n) }
        // Schedules, the kernel's scratch, then each lane's key (32 bytes), IV (32) and data (16·n).
        let laneBytes = 64 + 16 * n, head = sb * lanes + impl.scratchBytes
        let area = UnsafeMutableRawPointer.allocate(byteCount: head + lanes * laneBytes, alignment: 64)
        defer { area.deallocate() }
        area.initializeMemory(as: UInt8.self, repeating: 0, count: head)
        func lane(_ l: Int) -> UnsafeMutableRawPointer { area + head + l * laneBytes }
        for l in 0..<lanes {
            keys[l].withUnsafeBytes { lane(l).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            ivs[l].withUnsafeBytes { (lane(l) + 32).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            data[l].withUnsafeBytes { (lane(l) + 64).copyMemory(from: $0.baseAddress!, byteCount: 16 * n) }
        }
        // The last lane idles on a zero schedule.
        let keyPointers = (0..<lanes - 1).map { UnsafeRawPointer(lane($0)) }
        let rounds = impl.expandKeys256(keyPointers, lanes - 1, area)
        #expect(rounds == 14)
        let schedules = (0..<lanes).map { UnsafeRawPointer(area + sb * $0) }
        let strides = (0..<lanes).map { $0 == lanes - 1 ? 0 : 16 }
        impl.encrypt(schedules, rounds, (0..<lanes).map { lane($0) + 32 }, (0..<lanes).map { lane($0) + 64 }, strides, n, area + sb * lanes)
        for l in 0..<lanes - 1 {
            let want = try AES.IGE.encrypt(data[l], using: AES.Cipher(key: keys[l], backend: .portable), iv: ivs[l])
            #expect(Array(UnsafeRawBufferPointer(start: lane(l) + 64, count: 16 * n)) == want, "\(impl.name): lane \(l)")
            #expect(Array(UnsafeRawBufferPointer(start: lane(l) + 32, count: 32)) == Array(want.suffix(16)) + Array(data[l].suffix(16)),
                    "\(impl.name): IV of lane \(l)")
        }
    }

    /// The fault switch on each registry: its first kernel this processor runs, corrupted, fails its
    /// self-test and is skipped; the one selected instead still gives the published answers (its
    /// self-test, run again); the corrupted one really gives a wrong answer.
    @Test("Fault switch: a corrupted first kernel is skipped", arguments: ["aes", "ghash", "ige-sha256", "ige-lanes"])
    func faultSwitch(_ primitive: String) {
        func check<I>(_ clean: Registry<I>, _ faulted: (Set<String>) -> Registry<I>, _ selfTest: (I) -> Bool) {
            // The emulated arm64 kernels are never selected, so never self-tested: not what this test corrupts.
            guard let first = clean.runnable.first(where: { !$0.hasSuffix("-emulated") }), first != "portable" else {
                print("note: no \(primitive) kernel runs here; nothing to corrupt")
                return
            }
            let r = faulted(["\(primitive):\(first)"])
            let k = r.statuses.firstIndex { $0.name == first }!
            #expect(r.statuses[k].state == .failed, "\(primitive): \(first)")
            #expect(r.selectedName != first)
            #expect(selfTest(r.selected), "\(primitive): \(r.selectedName) selected with \(first) faulty")
            #expect(!selfTest(r.implementations[k]), "the fault switch did not corrupt \(first)")
        }
        switch primitive {
        case "aes": check(Registries.aesRegistry(faults: []), { Registries.aesRegistry(faults: $0) }, aesSelfTest)
        case "ghash": check(Registries.ghashRegistry(faults: []), { Registries.ghashRegistry(faults: $0) }, ghashSelfTest)
        case "ige-sha256": check(Registries.igeSHA256Registry(faults: []), { Registries.igeSHA256Registry(faults: $0) }, igeSHA256SelfTest)
        default: check(Registries.igeLanesRegistry(faults: []), { Registries.igeLanesRegistry(faults: $0) }, igeLanesSelfTest)
        }
    }

    /// Every kernel of every AES-family registry corrupted: the portable code is selected and gives the
    /// published answers.
    @Test("Fault switch: every kernel corrupted selects the portable code")
    func allKernelsFaulty() {
        func kernels<I>(_ r: Registry<I>) -> Set<String> { Set(r.statuses.map(\.name).filter { $0 != "portable" }.map { "\(r.primitive):\($0)" }) }
        let aes = Registries.aesRegistry(faults: kernels(Registries.aes))
        #expect(aes.selectedName == "portable" && aesSelfTest(aes.selected))
        let ghash = Registries.ghashRegistry(faults: kernels(Registries.ghash))
        #expect(ghash.selectedName == "portable" && ghashSelfTest(ghash.selected))
        let ige = Registries.igeSHA256Registry(faults: kernels(Registries.igeSHA256))
        #expect(ige.selectedName == "portable" && igeSHA256SelfTest(ige.selected))
        let lanes = Registries.igeLanesRegistry(faults: kernels(Registries.igeLanes))
        #expect(lanes.selectedName == "portable" && igeLanesSelfTest(lanes.selected))
    }

    /// A key keeps the AES implementation that expanded it, and reports the GHASH and IGE-SHA-256
    /// implementations that run with it.
    @Test("A key runs on the implementation that expanded it")
    func keysKeepTheirImplementation() throws {
        let key = SymmetricKey(data: [UInt8](repeating: 9, count: 32))
        #expect(try AES.Cipher(key: key, backend: .portable).implementationNames == ("portable", "portable", "portable"))
        let hw = try AES.Cipher(key: key, backend: .hardware)
        #expect(hw.implementationNames.aes == Kernels.aes.selected && hw.implementationNames.ghash == Kernels.ghash.selected)
        #expect(hw.backend == (Kernels.aes.isActive ? .hardware : .portable))
        // The portable AES with the selected GHASH: GCM runs CTR and GHASH one after the other.
        let mixed = try AES.Cipher(key: key, aes: .portable, ghash: .hardware, gcm: true)
        #expect(mixed.implementationNames.aes == "portable" && mixed.schedule.gcmStitched == (Kernels.ghash.selected == "portable"))
        #expect(mixed.implementationNames.igeSHA256 == "portable")
    }
}
