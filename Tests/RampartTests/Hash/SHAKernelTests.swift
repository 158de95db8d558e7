import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

// The hardware SHA kernels (SHA-NI for SHA-1/SHA-256, AVX2 + BMI for SHA-512) against the portable
// code, without any reference library: every length from 0 to 1100 bytes (0 to 8 SHA-512 blocks,
// so odd and even block counts for the two-block SHA-512 kernel), at unaligned offsets, fed whole and
// in uneven pieces. On a CPU without the kernels both sides run the portable code and the test
// says so.

/// `n` bytes from the shared seeded generator.
private func shaPattern(_ n: Int, seed: UInt64) -> [UInt8] {
    var g = SplitMix64(seed: seed)
    return g.bytes(n)
}

private func digestHex<H: HashFunction>(_ make: () -> H, _ data: [UInt8], offset: Int, pieces: Int) -> String {
    var h = make()
    let padded = [UInt8](repeating: 0xA5, count: offset) + data
    padded.withUnsafeBytes { raw in
        let body = UnsafeRawBufferPointer(rebasing: raw[offset...])
        var start = 0
        for i in 0..<pieces {
            // Uneven split points: piece i ends at (i+1)²/pieces² of the input.
            let end = i == pieces - 1 ? body.count : body.count * (i + 1) * (i + 1) / (pieces * pieces)
            h.update(bufferPointer: UnsafeRawBufferPointer(rebasing: body[start..<end]))
            start = end
        }
    }
    return Hex.encode(h.finalize().withUnsafeBytes { Array($0) })
}

@Test("SHA-1, SHA-256, SHA-512: hardware kernels equal the portable code", arguments: ["sha1", "sha256", "sha512"])
func shaKernelsMatchPortable(_ alg: String) {
    if CPU.forcePortable { print("note: RAMPART_FORCE_PORTABLE=1, both sides run the portable code") }
    for n in 0...1100 {
        let data = shaPattern(n, seed: UInt64(n))
        let offset = n % 7
        let pieces = 1 + n % 4
        let (hw, sw): (String, String)
        switch alg {
        case "sha1":
            hw = digestHex({ Insecure.SHA1(backend: .hardware) }, data, offset: offset, pieces: pieces)
            sw = digestHex({ Insecure.SHA1(backend: .portable) }, data, offset: 0, pieces: 1)
        case "sha256":
            hw = digestHex({ SHA256(backend: .hardware) }, data, offset: offset, pieces: pieces)
            sw = digestHex({ SHA256(backend: .portable) }, data, offset: 0, pieces: 1)
        default:
            hw = digestHex({ SHA512(backend: .hardware) }, data, offset: offset, pieces: pieces)
            sw = digestHex({ SHA512(backend: .portable) }, data, offset: 0, pieces: 1)
        }
        if hw != sw {
            Issue.record("\(alg) length \(n) offset \(offset) pieces \(pieces): hardware \(hw) != portable \(sw)")
            return
        }
    }
}

/// Every SHA-1, SHA-256 and SHA-512 implementation the processor runs (SHA-NI and AVX2 on a CPU with
/// both, where only the first is selected), not just the selected one, through the public hashers
/// pinned to it: 0 to 41 blocks and a tail from unaligned addresses against the portable code.
@Test("SHA-1, SHA-256, SHA-512: every implementation this processor has equals the portable code",
      arguments: ["sha1", "sha256", "sha512"])
func shaEveryImplementationMatchesPortable(_ alg: String) {
    func hex(_ b: Backend, _ data: [UInt8], offset: Int) -> String {
        switch alg {
        case "sha1": return digestHex({ Insecure.SHA1(backend: b) }, data, offset: offset, pieces: 2)
        case "sha256": return digestHex({ SHA256(backend: b) }, data, offset: offset, pieces: 2)
        default: return digestHex({ SHA512(backend: b) }, data, offset: offset, pieces: 2)
        }
    }
    let names = Kernels.implementations(of: alg)
    #expect(names.last == "portable")
    if names.count == 1 { print("note: no \(alg) kernel on this processor; nothing to compare") }
    Kernels.forEachImplementation(of: alg) { name, backend in
        for n in 0...41 {
            let offset = n % 5
            let data = shaPattern(64 * n + n % 3, seed: UInt64(1000 + n))
            let got = hex(backend, data, offset: offset), want = hex(.portable, data, offset: 0)
            #expect(got == want, "\(alg) \(name): \(n) blocks at offset \(offset)")
            if got != want { return }
        }
    }
}
