// The registry's safety net for the stream ciphers, Poly1305 and Argon2 (Platform/Registry.swift): the
// first kernel this processor runs, corrupted by the fault switch, fails its known-answer self-test and
// is skipped; the implementation selected instead computes the published answers. With no kernel (the
// portable code forced, or another architecture) the corrupted portable code is reported and still run.

@_spi(Testing) @testable import Rampart
internal import RampartKernelSupport
import RampartTestSupport
import Testing

/// A registry of `primitive` with the first implementation this processor runs (a kernel where it has
/// one) corrupted; the name of that implementation and the registry without faults.
private func faultyFirst<I>(_ clean: Registry<I>, _ make: (Set<String>) -> Registry<I>) -> (name: String, registry: Registry<I>) {
    // Every implementation this processor can run, whether or not the process-wide fault switch
    // (RAMPART_FAULT, CI's safety-net run) has already failed it in `clean`.
    let name = clean.statuses.first { $0.name != "portable" && $0.state != .unsupported }?.name ?? "portable"
    return (name, make(["\(clean.primitive):\(name)"]))
}

/// The implementation `name` of `r` and how it fared.
private func status<I>(_ r: Registry<I>, _ name: String) -> (ImplementationState, I) {
    let k = r.statuses.firstIndex { $0.name == name }!
    return (r.statuses[k].state, r.implementations[k])
}

@Suite("Stream, Poly1305 and Argon2 registries")
struct StreamRegistryTests {
    @Test func aFaultySalsa20KernelIsSkipped() {
        let (name, r) = faultyFirst(Registries.salsa20) { faults in
            Registry("salsa20", id: 6, Registries.salsa20Candidates, name: { $0.name }, requires: { $0.requires },
                     selfTest: salsa20SelfTest, faulty: { faultySalsa20($0) }, faults: faults)
        }
        let (state, corrupted) = status(r, name)
        #expect(state == .failed, "\(name)")
        #expect(!salsa20SelfTest(corrupted), "the fault switch did not corrupt \(name)")
        if name != "portable" { #expect(r.selectedName != name && r.statuses.contains { $0.state == .selected }) }
        // NaCl's XSalsa20 keystream (libsodium stream3.c, stream4.c) through the selected implementation:
        // the input block, one block, and the eight-block loop.
        let key = hexBytes("1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389")
        let nonce = hexBytes("69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37")
        let impl = r.selected
        var x = key.withUnsafeBytes { k in nonce.withUnsafeBytes { impl.xsalsa20Input(k.baseAddress!, $0.baseAddress!, 0) } }
        var block = [UInt8](repeating: 0, count: 64), stream = [UInt8](repeating: 0, count: 512)
        block.withUnsafeMutableBytes { impl.block(x, $0.baseAddress!) }
        stream.withUnsafeMutableBytes { s in withUnsafeMutableBytes(of: &x) { impl.xor($0.baseAddress!, UnsafeRawPointer(s.baseAddress!), s.baseAddress!, 1) } }
        #expect(Array(block[0..<32]) == hexBytes("eea6a7251c1e72916d11c2cb214d3c252539121d8e234e652d651fa4c8cff880"),
                "selected \(r.selectedName) with \(name) faulty")
        #expect(Array(stream[32..<64]) == hexBytes("309e645a74e9e0a60d8243acd9177ab51a1beb8d5a2f5d700c093c5e55855796"))
        #expect(x[8] == 8 && x[9] == 0)
    }

    @Test func aFaultyChaCha20KernelIsSkipped() {
        let (name, r) = faultyFirst(Registries.chacha20) { faults in
            Registry("chacha20", id: 7, Registries.chacha20Candidates, name: { $0.name }, requires: { $0.requires },
                     selfTest: chacha20SelfTest, faulty: { faultyChaCha20($0) }, faults: faults)
        }
        let (state, corrupted) = status(r, name)
        #expect(state == .failed, "\(name)")
        #expect(!chacha20SelfTest(corrupted), "the fault switch did not corrupt \(name)")
        if name != "portable" { #expect(r.selectedName != name) }
        // RFC 8439 §2.4.2 through the selected implementation's eight-block loop.
        let key = (0..<32).map { UInt8($0) }, nonce = hexBytes("000000000000004a00000000")
        let plaintext = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
        var x = key.withUnsafeBytes { k in nonce.withUnsafeBytes { chacha20Input(key: k.baseAddress!, counter: 1, nonce: $0.baseAddress!) } }
        var buffer = plaintext + [UInt8](repeating: 0, count: 512 - plaintext.count)
        buffer.withUnsafeMutableBytes { b in withUnsafeMutableBytes(of: &x) { r.selected.xor($0.baseAddress!, UnsafeRawPointer(b.baseAddress!), b.baseAddress!, 1) } }
        #expect(Array(buffer[0..<plaintext.count]) == hexBytes(
            "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b3571639d624e6"
                + "5152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b"
                + "8eedf2785e42874d"), "selected \(r.selectedName) with \(name) faulty")
        #expect(x[12] == 9)
    }

    @Test func aFaultyPoly1305KernelIsSkipped() {
        let (name, r) = faultyFirst(Registries.poly1305) { faults in
            Registry("poly1305", id: 8, Registries.poly1305Candidates, name: { $0.name }, requires: { $0.requires },
                     selfTest: poly1305SelfTest, faulty: { faultyPoly1305($0) }, faults: faults)
        }
        let (state, corrupted) = status(r, name)
        #expect(state == .failed, "\(name)")
        #expect(!poly1305SelfTest(corrupted), "the fault switch did not corrupt \(name)")
        if name != "portable" { #expect(r.selectedName != name) }
        // RFC 8439 A.3 #4 (127 bytes) with its seven full blocks, padded to whole groups of the selected
        // implementation by the portable code: the groups through it, the rest after.
        let key = hexBytes("1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0")
        let msg = Array("'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\nAll mimsy were the borogoves,\nAnd the mome raths outgrabe.".utf8)
        var st = key.withUnsafeBytes { Poly1305State(key: $0.baseAddress!, backend: .portable) }
        let impl = r.selected
        let groups = msg.count / 16 / impl.groupBlocks
        if groups > 0 {
            var words = SIMD8<UInt64>(st.r0, st.r1, st.s1, 0, 0, 0, 0, 0)
            msg.withUnsafeBytes { m in withUnsafeMutableBytes(of: &words) { impl.blocks($0.baseAddress!.assumingMemoryBound(to: UInt64.self), m.baseAddress!, groups) } }
            st.h0 = words[3]; st.h1 = words[4]; st.h2 = words[5]
        }
        let done = 16 * groups * impl.groupBlocks
        msg.withUnsafeBytes { st.update($0.baseAddress! + done, msg.count - done) }
        var tag = [UInt8](repeating: 0, count: 16)
        tag.withUnsafeMutableBytes { st.finalize(into: $0.baseAddress!) }
        #expect(tag == hexBytes("4541669a7eaaee61e708dc7cbcc5eb62"), "selected \(r.selectedName) with \(name) faulty")
    }

    @Test func aFaultyArgon2KernelIsSkipped() throws {
        let (name, r) = faultyFirst(Registries.argon2) { faults in
            Registry("argon2", id: 9, Registries.argon2Candidates, name: { $0.name }, requires: { $0.requires },
                     selfTest: argon2SelfTest, faulty: { faultyArgon2($0) }, faults: faults)
        }
        let (state, corrupted) = status(r, name)
        #expect(state == .failed, "\(name)")
        #expect(!argon2SelfTest(corrupted), "the fault switch did not corrupt \(name)")
        if name != "portable" { #expect(r.selectedName != name) }
        // RFC 9106 §5.3 with the selected implementation filling every segment.
        let q = try Argon2id.validate(passwordCount: 32, saltCount: 16, iterations: 3, memoryKiB: 32, parallelism: 4, outputByteCount: 32,
                                      secretCount: 8, adCount: 12, memoryLimit: Argon2id.defaultMemoryLimit)
        var tag = [UInt8](repeating: 0, count: 32)
        [UInt8](repeating: 1, count: 32).withUnsafeBytes { p in [UInt8](repeating: 2, count: 16).withUnsafeBytes { s in
            [UInt8](repeating: 3, count: 8).withUnsafeBytes { k in [UInt8](repeating: 4, count: 12).withUnsafeBytes { x in
                tag.withUnsafeMutableBytes { Argon2id.run(q, password: p, salt: s, secret: k, associatedData: x, output: $0, r.selected) }
            } }
        } }
        #expect(tag == hexBytes("0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"), "selected \(r.selectedName) with \(name) faulty")
    }

    /// Which implementation each registry lists and selects follows the old rules: the AVX-512VL build
    /// of the Salsa20 and ChaCha20 loops where AVX-512VL is present, else AVX2; the scalar BMI2 cores for
    /// the short Salsa20 blocks on AMD processors only; IFMA before AVX2 for Poly1305; AVX2 for Argon2.
    @Test func selectionRules() {
        let f = CPU.features
        // Under CI's fault switch the selected kernels fail their self-tests on purpose; the
        // aFaulty… tests above cover that case.
        guard FaultSwitch.names.isEmpty else { return }
        guard !CPU.forcePortable, f.avx2 else {
            for r in [Kernels.salsa20, Kernels.chacha20, Kernels.argon2] { #expect(r.selected == "portable") }
            return
        }
        let vector = f.avx512vl ? "avx512vl" : "avx2"
        #expect(Kernels.chacha20.selected == vector)
        #expect(Kernels.salsa20.selected == (CPU.isAMD && f.bmi2 ? vector + "+bmi2" : vector))
        #expect(Registries.salsa20.implementation(for: .hardware).vectorBlocks == f.avx512vl)
        #expect(Kernels.argon2.selected == "avx2")
        let ifma = f.avx512vl && f.avx512ifma && f.bmi2 && f.adx
        #expect(Kernels.poly1305.selected == (ifma ? "avx512ifma" : f.bmi2 ? "avx2" : "portable"))
        for r in [Kernels.salsa20, Kernels.chacha20, Kernels.poly1305, Kernels.argon2] {
            #expect(r.failedSelfTests.isEmpty, "\(r.primitive)")
        }
        print("self-tests: salsa20 \(Registries.salsa20.selfTestNanoseconds) ns, chacha20 \(Registries.chacha20.selfTestNanoseconds) ns, "
              + "poly1305 \(Registries.poly1305.selfTestNanoseconds) ns, argon2 \(Registries.argon2.selfTestNanoseconds) ns")
    }
}
