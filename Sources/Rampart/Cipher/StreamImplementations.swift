// The stream ciphers' implementations as the registry sees them (Platform/Registry.swift): the portable
// Salsa20 and ChaCha20 code, the Salsa20 implementations Rampart assembles from the kernel tiers, their
// known-answer self-tests and the fault switch's corrupted forms. The kernels declare their own
// conformances in their modules (RampartAccelAVX2, RampartAccelAVX512, RampartAccelBMI2).

internal import RampartKernelSupport

extension KernelImplementation {
    /// Whether this is a hardware kernel rather than the portable code (the one implementation that
    /// needs no feature).
    @inline(__always)
    static var isKernel: Bool { !requires.isEmpty }
}

// MARK: - Salsa20

/// The portable Salsa20 code: the four-block loop (Cipher/Salsa20.swift), the diagonal single-block
/// cores, the portable scrypt BlockMix, and Poly1305 after each 512-byte group where a kernel stitches
/// the two.
enum Salsa20Portable: Salsa20Implementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static let vectorBlocks = false

    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int) {
        var x = state.loadUnaligned(as: SIMD16<UInt32>.self)
        salsa20XORPortable(&x, src, dst, groups << 9, Salsa20Portable.self)
        state.storeBytes(of: x, as: SIMD16<UInt32>.self)
        wipe(&x)
    }

    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        var g = 0
        while g < groups {
            xor(state, src + g * srcStride, dst + 512 * g, 1)
            if g >= macLag { Poly1305Portable.blocks(poly, mac + 512 * (g - macLag), 32) }
            g += 1
        }
    }

    static func xsalsa20Input(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
        xsalsa20InputCore(key, nonce, counter, .zero)
    }

    static func block(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { salsa20BlockCore(x, out, .zero) }

    static func xsalsa20InputPair(_ keyA: UnsafeRawPointer, _ keyB: UnsafeRawPointer, _ nonce: UnsafeRawPointer)
        -> (SIMD16<UInt32>, SIMD16<UInt32>) {
        xsalsa20InputPairCore(keyA, keyB, nonce, .zero)
    }

    static func blocks2(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { salsa20Block2Core(x, out, .zero) }

    static func blocks4(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) {
        salsa20x4(x, UInt64(x[8]) | UInt64(x[9]) << 32, Salsa20Portable.self) { j, k, v in
            out.storeBytes(of: v, toByteOffset: 64 * j + 16 * k, as: SIMD4<UInt32>.self)
        }
    }

    static func scryptBlockMix(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer,
                               _ r: Int) -> UInt64 {
        scryptBlockMixCore(input, mask, output, r, .zero)
    }
}

/// An eight-block tier without short-message kernels of its own (AVX2: what makes the AVX-512VL build
/// of those faster than the portable code is `vprold`): its stream loops, the portable code for the
/// rest. Named as the tier.
enum Salsa20WithPortableBlocks<Stream: Salsa20StreamImplementation>: Salsa20Implementation {
    static var name: String { Stream.name }
    static var requires: KernelFeatures { Stream.requires }
    static var vectorBlocks: Bool { false }

    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int) {
        Stream.xor(state, src, dst, groups)
    }
    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        Stream.xorPoly1305(state, src, srcStride, dst, groups, poly, mac, macLag)
    }
    static func xsalsa20Input(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
        xsalsa20InputCore(key, nonce, counter, .zero)
    }
    static func block(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { salsa20BlockCore(x, out, .zero) }
    static func xsalsa20InputPair(_ keyA: UnsafeRawPointer, _ keyB: UnsafeRawPointer, _ nonce: UnsafeRawPointer)
        -> (SIMD16<UInt32>, SIMD16<UInt32>) {
        xsalsa20InputPairCore(keyA, keyB, nonce, .zero)
    }
    static func blocks2(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { salsa20Block2Core(x, out, .zero) }
    static func blocks4(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { Salsa20Portable.blocks4(x, out) }
    static func scryptBlockMix(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer,
                               _ r: Int) -> UInt64 {
        scryptBlockMixCore(input, mask, output, r, .zero)
    }
}

/// `Base` with its single blocks (the XSalsa20 input block and one keystream block, the two cores a
/// short XSalsa20 message costs) on another tier's cores: the scalar BMI2 ones, which Registrations
/// prefers on AMD processors. Named `base+block` (`avx512vl+bmi2`).
enum Salsa20WithBlockKernel<Base: Salsa20Implementation, Block: Salsa20BlockImplementation>: Salsa20Implementation {
    static var name: String { Base.name + "+" + Block.name }
    static var requires: KernelFeatures { Base.requires.union(Block.requires) }
    static var vectorBlocks: Bool { Base.vectorBlocks }

    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int) {
        Base.xor(state, src, dst, groups)
    }
    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        Base.xorPoly1305(state, src, srcStride, dst, groups, poly, mac, macLag)
    }
    static func xsalsa20Input(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
        Block.xsalsa20Input(key, nonce, counter)
    }
    static func block(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { Block.block(x, out) }
    static func xsalsa20InputPair(_ keyA: UnsafeRawPointer, _ keyB: UnsafeRawPointer, _ nonce: UnsafeRawPointer)
        -> (SIMD16<UInt32>, SIMD16<UInt32>) {
        Base.xsalsa20InputPair(keyA, keyB, nonce)
    }
    static func blocks2(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { Base.blocks2(x, out) }
    static func blocks4(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { Base.blocks4(x, out) }
    static func scryptBlockMix(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer,
                               _ r: Int) -> UInt64 {
        Base.scryptBlockMix(input, mask, output, r)
    }
}

// MARK: - ChaCha20

/// The portable ChaCha20 code: the four-block loop (Cipher/ChaCha20Core.swift), and Poly1305 after each
/// 512-byte group where a kernel stitches the two.
enum ChaCha20Portable: ChaCha20Implementation {
    static let name = "portable"
    static let requires: KernelFeatures = []

    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int) {
        var x = state.loadUnaligned(as: SIMD16<UInt32>.self)
        chacha20XORPortable(&x, src, dst, groups << 9)
        state.storeBytes(of: x, as: SIMD16<UInt32>.self)
        wipe(&x)
    }

    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        var g = 0
        while g < groups {
            xor(state, src + g * srcStride, dst + 512 * g, 1)
            if g >= macLag { Poly1305Portable.blocks(poly, mac + 512 * (g - macLag), 32) }
            g += 1
        }
    }
}

// MARK: - Known-answer self-tests

/// The published answers the stream self-tests check.
private enum StreamAnswers {
    /// NaCl's secretbox key and nonce (libsodium test/default/secretbox.c, `firstkey`, `nonce`).
    static let naclKey = publishedBytes("1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389")
    static let naclNonce = publishedBytes("69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37")
    /// The XSalsa20 input block of that key and nonce at counter 0: the HSalsa20 subkey
    /// (libsodium core2.c) around the nonce's last 8 bytes.
    static let naclInput: SIMD16<UInt32> = publishedBytes("dc908dda0b9344a953629b733820778880f3ceb421bb61b91cbd4c3e66256ce4")
        .withUnsafeBytes { k in salsa20Input(key: k.baseAddress!, 0x03e0_1982, 0x370b_7a6b, 0, 0) }
    /// The first 163 bytes of its keystream (libsodium stream3.c and stream4.c).
    static let naclKeystream = publishedBytes(
        "eea6a7251c1e72916d11c2cb214d3c252539121d8e234e652d651fa4c8cff880309e645a74e9e0a60d8243acd9177ab5"
            + "1a1beb8d5a2f5d700c093c5e5585579625337bd3ab619d615760d8c5b224a85b1d0efe0eb8a7ee163abb0376529fcc09"
            + "bab506c618e13ce777d82c3ae9d1a6f972d4160287cbfe60bf2130fc0a6ff6049d0a5c8a82f429231f008082e845d7e1"
            + "89d37f9ed2b464e6b919e6523a8c1210bd52a0")
    /// The HSalsa20 key of libsodium core1.c (its subkey under a zero input is `naclKey`).
    static let core1Key = publishedBytes("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
    /// Salsa20 specification §10: the expansion of k = (1..16, 201..216) and n = (101..116).
    static let spec10Input: SIMD16<UInt32> = publishedBytes("0102030405060708090a0b0c0d0e0f10c9cacbcccdcecfd0d1d2d3d4d5d6d7d8")
        .withUnsafeBytes { k in salsa20Input(key: k.baseAddress!, 0x6867_6665, 0x6c6b_6a69, 0x706f_6e6d, 0x7473_7271) }
    static let spec10Output = publishedBytes(
        "45254427290f6bc1ff8b7a06aae9d9625990b66a1533c841ef31de22d772287e68c507e1c5991f02664e4cb054f5f6b8"
            + "b1a0858206489577c0c384ecea67f64a")
    /// RFC 7914 §9: scryptBlockMix with r = 1, input and output in the standard layout.
    static let blockMixInput = publishedBytes(
        "f7ce0b653d2d72a4108cf5abe912ffdd777616dbbb27a70e8204f3ae2d0f6fad89f68f4811d1e87bcc3bd7400a9ffd29"
            + "094f0184639574f39ae5a1315217bcd7894991447213bb226c25b54da86370fbcd984380374666bb8ffcb5bf40c254b0"
            + "67d27c51ce4ad5fed829c90b505a571b7f4d1cad6a523cda770e67bceaaf7e89")
    static let blockMixOutput = publishedBytes(
        "a41f859c6608cc993b81cacb020cef05044b2181a2fd337dfd7b1c6396682f29b4393168e3c9e6bcfe6bc5b7a06d96ba"
            + "e424cc102c91745c24ad673dc7618f8120edc975323881a80540f64c162dcd3c21077cfe5f8d5fe2b1a4168f953678b7"
            + "7d3b3d803b60e4ab920996e59b4d53b65d2a225877d5edf5842cb9f14eefe425")
    /// RFC 8439 §2.4.2: the ChaCha20 key (00 ... 1f), nonce, block counter 1 and the 114-byte
    /// "sunscreen" plaintext and its ciphertext.
    static let chachaKey = (0..<32).map { UInt8($0) }
    static let chachaNonce = publishedBytes("000000000000004a00000000")
    static let chachaPlaintext = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
    static let chachaCiphertext = publishedBytes(
        "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b357"
            + "1639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
            + "5af90bbf74a35be6b40b8eedf2785e42874d")
}

/// The bytes of a hexadecimal literal (the self-tests' published answers).
func publishedBytes(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(s.utf8.count / 2)
    var hi: UInt8 = 0, odd = false
    for c in s.utf8 {
        let v = c <= 0x39 ? c &- 0x30 : (c | 0x20) &- 0x57
        if odd { out.append(hi << 4 | v) } else { hi = v }
        odd.toggle()
    }
    return out
}

/// `count` bytes written by `body`.
private func written(_ count: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: count) { b, n in
        b.initialize(repeating: 0)
        body(UnsafeMutableRawPointer(b.baseAddress!))
        n = count
    }
}

/// A 64-bit fingerprint of `bytes` (a multiple of 8 long): FNV-1a over its little-endian 64-bit words.
/// The self-tests compare long outputs with a fixed answer through it instead of carrying them whole;
/// no cryptographic hash, it only has to tell a corrupted output from the right one.
func selfTestFingerprint(_ bytes: [UInt8]) -> UInt64 {
    bytes.withUnsafeBytes { b in
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        var i = 0
        while i < b.count {
            h = (h ^ b.baseAddress!.loadLE64(i)) &* 0x0000_0100_0000_01b3
            i += 8
        }
        return h
    }
}

/// One 512-byte group of keystream from `state` through an eight-block loop (XORed into zeros) and
/// through its stitched form (the bare keystream again, with Poly1305 under r = `naclKeystream[0..<16]`
/// over the first output): whether the keystream starts with `published` and has `fingerprint`, the
/// stitched keystream is the same, the tag (with s = 0) is `tag`, and both advanced the counter by
/// eight blocks (`counterWords` of the state after: words 8 and 9 for Salsa20, 12 for ChaCha20).
private func checkGroup(_ state: SIMD16<UInt32>, published: ArraySlice<UInt8>, fingerprint: UInt64, tag: String,
                        counterWords: SIMD16<UInt32>,
                        xor: (UnsafeMutableRawPointer, UnsafeRawPointer, UnsafeMutableRawPointer, Int) -> Void,
                        stitched: (UnsafeMutableRawPointer, UnsafeRawPointer, Int, UnsafeMutableRawPointer, Int,
                                   UnsafeMutablePointer<UInt64>, UnsafeRawPointer, Int) -> Void) -> Bool {
    let zeros = [UInt8](repeating: 0, count: 512)
    var s = state, t = state
    let keystream = zeros.withUnsafeBytes { z in written(512) { o in withUnsafeMutableBytes(of: &s) { xor($0.baseAddress!, z.baseAddress!, o, 1) } } }
    let oneTimeKey = StreamAnswers.naclKeystream[0..<16] + [UInt8](repeating: 0, count: 16)
    var mac = oneTimeKey.withUnsafeBytes { Poly1305State(key: $0.baseAddress!, backend: .portable) }
    var words = SIMD8<UInt64>(mac.r0, mac.r1, mac.s1, 0, 0, 0, 0, 0)
    let again = zeros.withUnsafeBytes { z in
        keystream.withUnsafeBytes { k in
            written(512) { o in
                withUnsafeMutableBytes(of: &t) { st in
                    withUnsafeMutableBytes(of: &words) { stitched(st.baseAddress!, z.baseAddress!, 0, o, 1, $0.baseAddress!.assumingMemoryBound(to: UInt64.self), k.baseAddress!, 0) }
                }
            }
        }
    }
    mac.h0 = words[3]; mac.h1 = words[4]; mac.h2 = words[5]
    let macTag = written(16) { mac.finalize(into: $0) }
    let advanced = SIMD16<UInt32>(repeating: 0).replacing(with: s, where: counterWords .!= 0) == counterWords
    return keystream[0..<published.count] == published && selfTestFingerprint(keystream) == fingerprint && again == keystream
        && macTag == publishedBytes(tag) && advanced && s == t
}

/// The published answers Salsa20 implementations are checked against, each entry point on its own:
/// the Salsa20 specification's expansion example; NaCl's XSalsa20 subkey and its first 163 keystream
/// bytes through the single, two- and four-block cores; RFC 7914's scryptBlockMix. The eight-block
/// loops, which run on whole 512-byte groups only, give NaCl's published bytes extended to the group
/// (a fingerprint of the rest, from an independent implementation of the specification), alone and
/// stitched with Poly1305.
func salsa20SelfTest(_ impl: any Salsa20Implementation.Type) -> Bool {
    let a = StreamAnswers.self
    let x = a.naclInput
    // Single blocks.
    guard written(64, { impl.block(a.spec10Input, $0) }) == a.spec10Output,
          written(128, { impl.blocks2(x, $0) })[...] == a.naclKeystream[0..<128],
          written(256, { impl.blocks4(x, $0) })[0..<163] == a.naclKeystream[...] else { return false }
    // The XSalsa20 input block, alone and paired (the second key's pair against its single block).
    let inputs = a.naclKey.withUnsafeBytes { k in
        a.core1Key.withUnsafeBytes { c in
            a.naclNonce.withUnsafeBytes { n in
                (impl.xsalsa20Input(k.baseAddress!, n.baseAddress!, 0), impl.xsalsa20InputPair(k.baseAddress!, c.baseAddress!, n.baseAddress!),
                 impl.xsalsa20Input(c.baseAddress!, n.baseAddress!, 0))
            }
        }
    }
    guard inputs.0 == x, inputs.1.0 == x, inputs.1.1 == inputs.2 else { return false }
    // The eight-block loops.
    var counter = SIMD16<UInt32>(repeating: 0)
    counter[8] = 8
    guard checkGroup(x, published: a.naclKeystream[...], fingerprint: 0xb298_c993_17ef_6688, tag: "b43df0d40b908bcc0ef494c111152d9f",
                     counterWords: counter, xor: impl.xor, stitched: impl.xorPoly1305) else { return false }
    // scryptBlockMix (RFC 7914 §9) on the diagonal layout, without and with the XOR block.
    let mask = Array(a.naclKeystream[0..<128])
    let masked = zip(a.blockMixInput, mask).map { $0 ^ $1 }
    let last = a.blockMixOutput[64..<72].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    for (input, m) in [(a.blockMixInput, nil), (masked, mask)] as [([UInt8], [UInt8]?)] {
        var integerify: UInt64 = 0
        let d = diagonal(input), dm = m.map(diagonal)
        let out = written(128) { o in
            d.withUnsafeBytes { i in
                if let dm {
                    integerify = dm.withUnsafeBytes { impl.scryptBlockMix(i.baseAddress!, $0.baseAddress!, o, 1) }
                } else {
                    integerify = impl.scryptBlockMix(i.baseAddress!, nil, o, 1)
                }
            }
            for k in 0..<2 { Salsa20State(diagonal: UnsafeRawPointer(o) + 64 * k).store(standard: o + 64 * k) }
        }
        guard out == a.blockMixOutput, integerify == last else { return false }
    }
    return true
}

/// Sub-blocks of 64 bytes from the standard layout to the diagonal one (KDF/Scrypt.swift's `shuffleIn`).
private func diagonal(_ standard: [UInt8]) -> [UInt8] {
    written(standard.count) { o in
        standard.withUnsafeBytes { s in
            for k in 0..<(standard.count / 64) { Salsa20State(standard: s.baseAddress! + 64 * k).store(diagonal: o + 64 * k) }
        }
    }
}

/// RFC 8439 §2.4.2 (the "sunscreen" encryption from block counter 1) through the eight-block loops,
/// which run on whole 512-byte groups only: its published keystream bytes (ciphertext XOR plaintext)
/// extended to the group (a fingerprint of the rest, from an independent implementation of the
/// specification), alone and stitched with Poly1305.
func chacha20SelfTest(_ impl: any ChaCha20Implementation.Type) -> Bool {
    let a = StreamAnswers.self
    let x = a.chachaKey.withUnsafeBytes { k in a.chachaNonce.withUnsafeBytes { chacha20Input(key: k.baseAddress!, counter: 1, nonce: $0.baseAddress!) } }
    let published = zip(a.chachaCiphertext, a.chachaPlaintext).map { $0 ^ $1 }
    var counter = SIMD16<UInt32>(repeating: 0)
    counter[12] = 9
    return checkGroup(x, published: published[...], fingerprint: 0x0379_748b_974c_5f84, tag: "7231128d70d9c003d02eb7283eac376b",
                      counterWords: counter, xor: impl.xor, stitched: impl.xorPoly1305)
}

// MARK: - The fault switch's corrupted forms

/// The implementation with one output bit flipped after every call.
enum FaultySalsa20<Base: Salsa20Implementation>: Salsa20Implementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static var vectorBlocks: Bool { Base.vectorBlocks }
    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int) {
        Base.xor(state, src, dst, groups)
        dst.storeBytes(of: dst.load(as: UInt8.self) ^ 1, as: UInt8.self)
    }
    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        Base.xorPoly1305(state, src, srcStride, dst, groups, poly, mac, macLag)
        poly[3] ^= 1
    }
    static func xsalsa20Input(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
        var x = Base.xsalsa20Input(key, nonce, counter)
        x[1] ^= 1
        return x
    }
    static func block(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) {
        Base.block(x, out)
        out.storeBytes(of: out.load(as: UInt8.self) ^ 1, as: UInt8.self)
    }
    static func xsalsa20InputPair(_ keyA: UnsafeRawPointer, _ keyB: UnsafeRawPointer, _ nonce: UnsafeRawPointer)
        -> (SIMD16<UInt32>, SIMD16<UInt32>) {
        var p = Base.xsalsa20InputPair(keyA, keyB, nonce)
        p.0[1] ^= 1
        return p
    }
    static func blocks2(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) {
        Base.blocks2(x, out)
        out.storeBytes(of: out.load(as: UInt8.self) ^ 1, as: UInt8.self)
    }
    static func blocks4(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) {
        Base.blocks4(x, out)
        out.storeBytes(of: out.load(as: UInt8.self) ^ 1, as: UInt8.self)
    }
    static func scryptBlockMix(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer,
                               _ r: Int) -> UInt64 {
        let j = Base.scryptBlockMix(input, mask, output, r)
        output.storeBytes(of: output.load(as: UInt8.self) ^ 1, as: UInt8.self)
        return j
    }
}

enum FaultyChaCha20<Base: ChaCha20Implementation>: ChaCha20Implementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static func xor(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ groups: Int) {
        Base.xor(state, src, dst, groups)
        dst.storeBytes(of: dst.load(as: UInt8.self) ^ 1, as: UInt8.self)
    }
    static func xorPoly1305(_ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ srcStride: Int,
                            _ dst: UnsafeMutableRawPointer, _ groups: Int,
                            _ poly: UnsafeMutablePointer<UInt64>, _ mac: UnsafeRawPointer, _ macLag: Int) {
        Base.xorPoly1305(state, src, srcStride, dst, groups, poly, mac, macLag)
        poly[3] ^= 1
    }
}

func faultySalsa20(_ b: any Salsa20Implementation.Type) -> any Salsa20Implementation.Type {
    func wrap<B: Salsa20Implementation>(_: B.Type) -> any Salsa20Implementation.Type { FaultySalsa20<B>.self }
    return wrap(b)
}
func faultyChaCha20(_ b: any ChaCha20Implementation.Type) -> any ChaCha20Implementation.Type {
    func wrap<B: ChaCha20Implementation>(_: B.Type) -> any ChaCha20Implementation.Type { FaultyChaCha20<B>.self }
    return wrap(b)
}
