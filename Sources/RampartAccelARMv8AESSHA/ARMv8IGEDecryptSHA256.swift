// AES-256-IGE decryption and SHA-256 of the plaintext in one loop on the ARMv8 cryptography extensions,
// for MTProto's receiver (Docs/MTProto.md §1.2, §1.6.4): msg_key is SHA-256(auth_key[88 + x ..< 120 + x]
// ‖ plaintext), and the plaintext comes out of an IGE chain sixteen bytes at a time. The structure of
// RampartAccelAESSHA/IGEDecryptSHA256.swift (AES-NI with SHA-NI) carries over unchanged: both are single
// dependency chains (IGE decryption is 13 dependent aesd+aesimc pairs and an aesd per block; SHA-256 is
// 16 dependent sha256h/sha256h2 pairs per 64-byte block), so the loop decrypts the four IGE blocks that
// complete SHA-256 block j + 1 with the sixteen message groups of block j (already in memory) placed
// between their rounds, one group every three rounds, and the core runs the two chains side by side.
//
// Compiled with +aes +sha2 (Package.swift); the registry checks the features. Every `swift test` runs
// it on emulated instructions (RampartKernelSupport/ARMv8Emulated.swift); Scripts/arm64-kernels.sh
// compiles it to arm64 code, checks its object code and runs it under qemu-aarch64. Not measured on
// Apple silicon (Docs/ARM64Throughput.md). No branch depends on data: the loops run on the public
// block count and round count.

import Swift
import RampartKernelSupport

#if arch(arm64) || RAMPART_TYPECHECK_ARM64 || RAMPART_EMULATE_ARM64

typealias AV = SIMD2<UInt64>
typealias SV = SIMD4<UInt32>

@inline(__always) func load(_ p: UnsafeRawPointer, _ offset: Int) -> AV { p.loadUnaligned(fromByteOffset: offset, as: AV.self) }
@inline(__always) func store(_ v: AV, _ p: UnsafeMutableRawPointer, _ offset: Int) { p.storeBytes(of: v, toByteOffset: offset, as: AV.self) }
/// Four big-endian message words.
@inline(__always) func loadBE(_ p: UnsafeRawPointer, _ offset: Int) -> SV {
    let v = p.loadUnaligned(fromByteOffset: offset, as: SV.self)
    return SV(v[0].byteSwapped, v[1].byteSwapped, v[2].byteSwapped, v[3].byteSwapped)
}

/// One SHA-256 compression in flight (the state words a..d and e..h as the ARMv8 instructions hold
/// them), advanced four rounds at a time so that its groups can be placed between AES rounds.
struct SHA256Block {
    var abcd: SV, efgh: SV
    let abcd0: SV, efgh0: SV
    var w0: SV, w1: SV, w2: SV, w3: SV

    /// Starts compressing the 64 bytes a ‖ b ‖ c ‖ d (16 each, message byte order) into (abcd, efgh).
    @inline(__always) init(_ abcd: SV, _ efgh: SV, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer) {
        self.abcd = abcd; self.efgh = efgh; abcd0 = abcd; efgh0 = efgh
        w0 = loadBE(a, 0); w1 = loadBE(a, 16); w2 = loadBE(b, 0); w3 = loadBE(b, 16)
    }
    @inline(__always) func w(_ i: Int) -> SV {
        switch i & 3 {
        case 0: return w0
        case 1: return w1
        case 2: return w2
        default: return w3
        }
    }
    @inline(__always) mutating func setW(_ i: Int, _ v: SV) {
        switch i & 3 {
        case 0: w0 = v
        case 1: w1 = v
        case 2: w2 = v
        default: w3 = v
        }
    }
    /// Rounds 4g ..< 4g + 4 and, for g < 12, the schedule step that makes the words of group g + 4 (g a
    /// literal at every call after inlining, so the switches fold): the sequence of ARMv8SHA256.swift.
    @inline(__always) mutating func group(_ g: Int, _ k: UnsafeRawPointer) {
        let m = w(g)
        let wk = m &+ k.loadUnaligned(fromByteOffset: 16 * g, as: SV.self)
        let a = abcd
        abcd = armSHA256H(abcd, efgh, wk)
        efgh = armSHA256H2(efgh, a, wk)
        if g < 12 { setW(g, armSHA256SU1(armSHA256SU0(m, w(g + 1)), w(g + 2), w(g + 3))) }
    }
    /// All sixteen groups.
    @inline(__always) mutating func compress(_ k: UnsafeRawPointer) {
        group(0, k); group(1, k); group(2, k); group(3, k); group(4, k); group(5, k); group(6, k); group(7, k)
        group(8, k); group(9, k); group(10, k); group(11, k); group(12, k); group(13, k); group(14, k); group(15, k)
    }
    /// The state after the sixteenth group.
    @inline(__always) var finished: (SV, SV) { (abcd &+ abcd0, efgh &+ efgh0) }
}

/// IGE decryption of `blocks` blocks with the decryption schedule `dk` (equivalent inverse cipher keys;
/// p_i = D(c_i ^ p_{i-1}) ^ c_{i-1}; `iv` is c_0 then p_0 and becomes the last ciphertext and plaintext
/// blocks), and SHA-256 over `prefix` (32 bytes) ‖ the plaintext, as far as whole 64-byte SHA-256 blocks
/// go: `state` (eight words a..h) absorbs them. Returns the plaintext bytes absorbed (0 when `blocks` < 2,
/// else 64·n − 32); the caller hashes the rest and pads. Input and output may be the same buffer.
@inline(never)
public func armIGEDecryptSHA256(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int,
                                _ state: UnsafeMutablePointer<UInt32>, _ prefix: UnsafeRawPointer,
                                _ k: UnsafePointer<UInt32>) -> Int {
    guard blocks >= 2 else { return 0 }
    let kp = UnsafeRawPointer(k)
    let kl = load(dk, 16 * rounds)
    var cPrev = load(iv, 0), pPrev = load(iv, 16)
    var done = 0
    /// IGE-decrypts blocks `done ..< target`, each alone.
    @inline(__always) func decrypt(upTo target: Int) {
        while done < target {
            let c = load(input, 16 * done)
            var s = c ^ pPrev
            var r = 0
            while r < rounds - 1 { s = armAESIMC(armAESD(s, load(dk, 16 * r))); r += 1 }
            let p = armAESD(s, load(dk, 16 * (rounds - 1))) ^ kl ^ cPrev
            store(p, output, 16 * done)
            cPrev = c
            pPrev = p
            done += 1
        }
    }
    let st = UnsafeMutableRawPointer(state)
    var abcd = st.loadUnaligned(as: SV.self), efgh = st.loadUnaligned(fromByteOffset: 16, as: SV.self)
    // SHA-256 block 0 is prefix ‖ plaintext[0 ..< 32]; block j ≥ 1 is plaintext[64j − 32 ..< 64j + 32],
    // complete once IGE block 4j + 1 is decrypted.
    @inline(__always) func shaBlock(_ j: Int) -> SHA256Block {
        j == 0 ? SHA256Block(abcd, efgh, prefix, UnsafeRawPointer(output))
               : SHA256Block(abcd, efgh, UnsafeRawPointer(output) + (64 * j - 32), UnsafeRawPointer(output) + 64 * j)
    }
    decrypt(upTo: 2)
    var j = 0  // the next SHA-256 block to compress
    // AES-256 (14 rounds, every MTProto message): each iteration decrypts the four IGE blocks that
    // complete SHA block j + 1 with the sixteen groups of block j between their rounds.
    if rounds == 14 {
        while 4 * (j + 1) + 2 <= blocks {
            var sha = shaBlock(j)
            /// IGE block `done` with message groups g ..< g + 4 between its rounds.
            @inline(__always) func block(_ g: Int) {
                let c = load(input, 16 * done)
                var s = c ^ pPrev
                @inline(__always) func rounds3(_ r: Int) {
                    s = armAESIMC(armAESD(s, load(dk, 16 * r)))
                    s = armAESIMC(armAESD(s, load(dk, 16 * r + 16)))
                    s = armAESIMC(armAESD(s, load(dk, 16 * r + 32)))
                }
                rounds3(0); sha.group(g, kp)
                rounds3(3); sha.group(g + 1, kp)
                rounds3(6); sha.group(g + 2, kp)
                rounds3(9); sha.group(g + 3, kp)
                s = armAESIMC(armAESD(s, load(dk, 192)))
                let p = armAESD(s, load(dk, 208)) ^ kl ^ cPrev
                store(p, output, 16 * done)
                cPrev = c
                pPrev = p
                done += 1
            }
            block(0); block(4); block(8); block(12)
            (abcd, efgh) = sha.finished
            j += 1
        }
    }
    // Other key sizes (and the blocks the loop above leaves): the two chains one after the other.
    while 4 * (j + 1) + 2 <= blocks {
        decrypt(upTo: 4 * (j + 1) + 2)
        var sha = shaBlock(j)
        sha.compress(kp)
        (abcd, efgh) = sha.finished
        j += 1
    }
    // The last complete SHA block, then the IGE blocks that complete no further one.
    var sha = shaBlock(j)
    sha.compress(kp)
    (abcd, efgh) = sha.finished
    j += 1
    decrypt(upTo: blocks)
    store(cPrev, iv, 0)
    store(pPrev, iv, 16)
    st.storeBytes(of: abcd, as: SV.self)
    st.storeBytes(of: efgh, toByteOffset: 16, as: SV.self)
    return 64 * j - 32
}

/// IGE decryption on the ARMv8 AES instructions stitched with SHA-256 on the ARMv8 SHA-256 instructions,
/// reading the `.armv8` schedule's decryption keys (the registry offers it where the ARMv8 AES and
/// SHA-256 kernels run).
public enum ARMv8IGESHA256: IGESHA256Implementation {
    public static var name: String { armImplementationName("armv8-aes+armv8-sha2") }
    public static var requires: KernelFeatures { armImplementationRequires([.armAES, .armSHA2]) }
    public static var aesLayout: AESScheduleLayout { .armv8 }
    /// Offset of the decryption round keys in the `.armv8` schedule (ARMv8AES.decryptionOffset).
    static var decryptionOffset: Int { 256 }
    public static func decrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                               _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int,
                               _ state: UnsafeMutablePointer<UInt32>, _ prefix: UnsafeRawPointer) -> Int {
        sha256RoundConstants.withUnsafeBufferPointer {
            armIGEDecryptSHA256(schedule + decryptionOffset, rounds, iv, src, dst, n, state, prefix, $0.baseAddress!)
        }
    }
}

#endif
