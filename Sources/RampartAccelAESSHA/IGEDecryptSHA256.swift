// AES-256-IGE decryption and SHA-256 of the plaintext in one loop, for MTProto's receiver (Docs/MTProto.md
// §1.2, §1.6.4): msg_key is SHA-256(auth_key[88 + x ..< 120 + x] ‖ plaintext), and the plaintext comes out
// of an IGE chain sixteen bytes at a time.
//
// Both are single dependency chains: IGE decryption is `rounds` dependent `aesdec` per block, SHA-256
// 32 dependent `sha256rnds2` per 64-byte block, and they run on separate units. Run one after the
// other, each leaves the other's unit idle; here the loop decrypts the four IGE blocks that complete
// SHA-256 block j + 1 while it compresses block j (already in memory), two independent chains that
// the out-of-order core overlaps, so the whole costs about as much as the longer chain alone.
//
// Compiled with -parse-stdlib and only +aes +sha +ssse3 +sse4.1 (see Package.swift); the caller checks
// the CPU features (the registry). The AES helpers are RampartAccelAESNI's (X86AES, whose member
// this file's code is, so that it reads them unqualified). No branch depends on data: the loops run on
// the public block count.

import Swift
import RampartAccelAESNI
import RampartKernelSupport

#if arch(x86_64)

extension X86AES {
    typealias V4 = SIMD4<UInt32>

    @inline(__always) static func b4(_ v: V4) -> Builtin.Vec4xInt32 { unsafeBitCast(v, to: Builtin.Vec4xInt32.self) }
    @inline(__always) static func v4(_ v: Builtin.Vec4xInt32) -> V4 { unsafeBitCast(v, to: V4.self) }
    @inline(__always) static func rnds2(_ cdgh: V4, _ abef: V4, _ wk: V4) -> V4 { v4(Builtin.int_x86_sha256rnds2(b4(cdgh), b4(abef), b4(wk))) }
    @inline(__always) static func msg1(_ a: V4, _ b: V4) -> V4 { v4(Builtin.int_x86_sha256msg1(b4(a), b4(b))) }
    @inline(__always) static func msg2(_ a: V4, _ b: V4) -> V4 { v4(Builtin.int_x86_sha256msg2(b4(a), b4(b))) }
    @inline(__always) static func alignr4(_ hi: V4, _ lo: V4) -> V4 { V4(lo[1], lo[2], lo[3], hi[0]) }
    @inline(__always) static func bswap32(_ v: V4) -> V4 {
        let r = Builtin.int_x86_ssse3_pshuf_b_128(unsafeBitCast(v, to: Builtin.Vec16xInt8.self),
                                                  unsafeBitCast(V4(0x0001_0203, 0x0405_0607, 0x0809_0a0b, 0x0c0d_0e0f),
                                                                to: Builtin.Vec16xInt8.self))
        return unsafeBitCast(r, to: V4.self)
    }

    /// One SHA-256 compression of the 64 bytes (a ‖ b ‖ c ‖ d, 16 bytes each, message byte order) into
    /// the state (ABEF, CDGH layout) with the round constants `k`.
    @inline(__always)
    static func compress(_ s0: inout V4, _ s1: inout V4, _ a: V4, _ b: V4, _ c: V4, _ d: V4, _ k: UnsafeRawPointer) {
        let save0 = s0, save1 = s1
        var m0 = bswap32(a), m1 = bswap32(b), m2 = bswap32(c), m3 = bswap32(d)
        @inline(__always) func kq(_ i: Int) -> V4 { k.loadUnaligned(fromByteOffset: 16 * i, as: V4.self) }
        @inline(__always) func quad(_ m: V4, _ kk: V4) {
            let wk = m &+ kk
            s1 = rnds2(s1, s0, wk)
            s0 = rnds2(s0, s1, V4(wk[2], wk[3], wk[0], wk[1]))
        }
        @inline(__always) func quadSchedule(_ m: V4, _ kk: V4, _ prev: inout V4, _ next: inout V4, _ doMsg1: Bool) {
            let wk = m &+ kk
            s1 = rnds2(s1, s0, wk)
            next = msg2(next &+ alignr4(m, prev), m)
            s0 = rnds2(s0, s1, V4(wk[2], wk[3], wk[0], wk[1]))
            if doMsg1 { prev = msg1(prev, m) }
        }
        quad(m0, kq(0))
        quad(m1, kq(1)); m0 = msg1(m0, m1)
        quad(m2, kq(2)); m1 = msg1(m1, m2)
        quadSchedule(m3, kq(3), &m2, &m0, true)
        quadSchedule(m0, kq(4), &m3, &m1, true)
        quadSchedule(m1, kq(5), &m0, &m2, true)
        quadSchedule(m2, kq(6), &m1, &m3, true)
        quadSchedule(m3, kq(7), &m2, &m0, true)
        quadSchedule(m0, kq(8), &m3, &m1, true)
        quadSchedule(m1, kq(9), &m0, &m2, true)
        quadSchedule(m2, kq(10), &m1, &m3, true)
        quadSchedule(m3, kq(11), &m2, &m0, true)
        quadSchedule(m0, kq(12), &m3, &m1, true)
        quadSchedule(m1, kq(13), &m0, &m2, false)
        quadSchedule(m2, kq(14), &m1, &m3, false)
        quad(m3, kq(15))
        s0 &+= save0
        s1 &+= save1
    }

    /// One SHA-256 compression in flight, advanced four rounds (one message group) at a time, so that its
    /// groups can be placed between AES rounds (`stitchedIteration`).
    struct ShaBlock {
        var s0: V4, s1: V4
        var save0: V4, save1: V4
        var m0: V4, m1: V4, m2: V4, m3: V4

        /// Starts compressing the 64 bytes (a ‖ b ‖ c ‖ d, message byte order) into (s0, s1).
        @inline(__always) init(_ s0: V4, _ s1: V4, _ a: V4, _ b: V4, _ c: V4, _ d: V4) {
            self.s0 = s0; self.s1 = s1; save0 = s0; save1 = s1
            m0 = bswap32(a); m1 = bswap32(b); m2 = bswap32(c); m3 = bswap32(d)
        }
        @inline(__always) func m(_ i: Int) -> V4 {
            switch i & 3 {
            case 0: return m0
            case 1: return m1
            case 2: return m2
            default: return m3
            }
        }
        @inline(__always) mutating func setM(_ i: Int, _ v: V4) {
            switch i & 3 {
            case 0: m0 = v
            case 1: m1 = v
            case 2: m2 = v
            default: m3 = v
            }
        }
        /// Rounds 4g ..< 4g + 4 with the message schedule step that goes with them (g a literal at every
        /// call after inlining, so the switches fold): the same sequence as `compress`.
        @inline(__always) mutating func group(_ g: Int, _ kk: V4) {
            let m = m(g)
            let wk = m &+ kk
            s1 = rnds2(s1, s0, wk)
            if g >= 3 && g <= 14 { setM(g + 1, msg2(self.m(g + 1) &+ alignr4(m, self.m(g - 1)), m)) }
            s0 = rnds2(s0, s1, V4(wk[2], wk[3], wk[0], wk[1]))
            if g >= 1 && g <= 12 { setM(g - 1, msg1(self.m(g - 1), m)) }
        }
        /// The state after the sixteenth group.
        @inline(__always) var finished: (V4, V4) { (s0 &+ save0, s1 &+ save1) }
    }

    /// IGE decryption of `blocks` blocks with the decryption schedule `dk` (p_i = D(c_i ^ p_{i-1}) ^
    /// c_{i-1}; `iv` is c_0 then p_0 and becomes the last ciphertext and plaintext blocks), and SHA-256
    /// over `prefix` (32 bytes) ‖ the plaintext, as far as whole 64-byte SHA-256 blocks go: `state` (eight
    /// words a..h, from the initial value or a mid-state) absorbs them. Returns the plaintext bytes
    /// absorbed (0, or 64·n − 32); the caller hashes the rest and pads. Input and output may be the same
    /// buffer.
    @inline(__always)
    static func igeDecryptSHA256Body(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                     _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int,
                                     _ state: UnsafeMutablePointer<UInt32>, _ prefix: UnsafeRawPointer,
                                     _ constants: UnsafePointer<UInt32>) -> Int {
        guard blocks >= 2 else { return 0 }
        let k0 = load(dk, 0), kl = load(dk, 16 * rounds)
        var cPrev = load(iv, 0), pPrev = load(iv, 16)
        var done = 0
        /// IGE-decrypts blocks `done ..< target`.
        @inline(__always) func decrypt(upTo target: Int) {
            while done < target {
                let c = load(input, 16 * done)
                var s = c ^ pPrev ^ k0
                var r = 1
                while r < rounds { s = aesdec(s, load(dk, 16 * r)); r += 1 }
                let p = aesdeclast(s, kl ^ cPrev)
                store(p, output, 16 * done)
                cPrev = c
                pPrev = p
                done += 1
            }
        }
        let st = UnsafeRawPointer(state)
        let abcd = st.loadUnaligned(as: V4.self), efgh = st.loadUnaligned(fromByteOffset: 16, as: V4.self)
        var s0 = V4(efgh[1], efgh[0], abcd[1], abcd[0])  // ABEF
        var s1 = V4(efgh[3], efgh[2], abcd[3], abcd[2])  // CDGH
        let k = UnsafeRawPointer(constants)
        @inline(__always) func w(_ p: UnsafeRawPointer, _ o: Int) -> V4 { p.loadUnaligned(fromByteOffset: o, as: V4.self) }

        // SHA-256 block 0 is prefix ‖ plaintext[0 ..< 32]; block j ≥ 1 is plaintext[64j − 32 ..< 64j + 32],
        // complete once IGE block 4j + 1 is decrypted. Block j is compressed while the IGE blocks that
        // complete block j + 1 are decrypted.
        decrypt(upTo: 2)
        var j = 0  // the next SHA-256 block to compress (blocks < j are absorbed)
        // AES-256 (14 rounds, every MTProto message): after the first SHA block, each iteration runs
        // the four IGE blocks with the sixteen message groups of SHA block j placed between their AES
        // rounds, four per IGE block, one every three rounds. Left to itself the compiler emits "four
        // IGE blocks, then one compression", and the two chains overlap only as far as the reorder
        // window reaches.
        if rounds == 14 && 4 * (j + 1) + 2 <= blocks {
            decrypt(upTo: 6)
            compress(&s0, &s1, w(prefix, 0), w(prefix, 16), w(output, 0), w(output, 16), k)
            j = 1
            @inline(__always) func kq(_ i: Int) -> V4 { k.loadUnaligned(fromByteOffset: 16 * i, as: V4.self) }
            while 4 * (j + 1) + 2 <= blocks {
                let o = 64 * j - 32
                var sha = ShaBlock(s0, s1, w(output, o), w(output, o + 16), w(output, o + 32), w(output, o + 48))
                /// IGE block `done` with message groups g ..< g + 4 between its rounds.
                @inline(__always) func block(_ g: Int) {
                    let c = load(input, 16 * done)
                    var x = c ^ pPrev ^ k0
                    x = aesdec(x, load(dk, 16)); x = aesdec(x, load(dk, 32)); x = aesdec(x, load(dk, 48))
                    sha.group(g, kq(g))
                    x = aesdec(x, load(dk, 64)); x = aesdec(x, load(dk, 80)); x = aesdec(x, load(dk, 96))
                    sha.group(g + 1, kq(g + 1))
                    x = aesdec(x, load(dk, 112)); x = aesdec(x, load(dk, 128)); x = aesdec(x, load(dk, 144))
                    sha.group(g + 2, kq(g + 2))
                    x = aesdec(x, load(dk, 160)); x = aesdec(x, load(dk, 176)); x = aesdec(x, load(dk, 192))
                    sha.group(g + 3, kq(g + 3))
                    x = aesdec(x, load(dk, 208))
                    let p = aesdeclast(x, kl ^ cPrev)
                    store(p, output, 16 * done)
                    cPrev = c
                    pPrev = p
                    done += 1
                }
                block(0); block(4); block(8); block(12)
                (s0, s1) = sha.finished
                j += 1
            }
        }
        while 4 * (j + 1) + 2 <= blocks {
            decrypt(upTo: 4 * (j + 1) + 2)
            if j == 0 {
                compress(&s0, &s1, w(prefix, 0), w(prefix, 16), w(output, 0), w(output, 16), k)
            } else {
                let o = 64 * j - 32
                compress(&s0, &s1, w(output, o), w(output, o + 16), w(output, o + 32), w(output, o + 48), k)
            }
            j += 1
        }
        // The last complete block, then the IGE blocks that complete no further one.
        if j == 0 {
            compress(&s0, &s1, w(prefix, 0), w(prefix, 16), w(output, 0), w(output, 16), k)
        } else {
            let o = 64 * j - 32
            compress(&s0, &s1, w(output, o), w(output, o + 16), w(output, o + 32), w(output, o + 48), k)
        }
        j += 1
        decrypt(upTo: blocks)
        store(cPrev, iv, 0)
        store(pPrev, iv, 16)
        // Back to a..h order: s0 = (F, E, B, A), s1 = (H, G, D, C).
        state[0] = s0[3]; state[1] = s0[2]; state[2] = s1[3]; state[3] = s1[2]
        state[4] = s0[1]; state[5] = s0[0]; state[6] = s1[1]; state[7] = s1[0]
        return 64 * j - 32
    }
}

/// IGE decryption of `blocks` blocks with the decryption schedule `dk` (p_i = D(c_i ^ p_{i-1}) ^
/// c_{i-1}; `iv` is c_0 then p_0 and becomes the last ciphertext and plaintext blocks), and SHA-256
/// over `prefix` (32 bytes) ‖ the plaintext, as far as whole 64-byte SHA-256 blocks go: `state` (eight
/// words a..h, from the initial value or a mid-state) absorbs them. Returns the plaintext bytes
/// absorbed (0 when `blocks` < 2, else 64·n − 32); the caller hashes the rest and pads. Input and
/// output may be the same buffer.
@inline(never)
public func aesniIGEDecryptSHA256(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int,
                                  _ state: UnsafeMutablePointer<UInt32>, _ prefix: UnsafeRawPointer,
                                  _ constants: UnsafePointer<UInt32>) -> Int {
    X86AES.igeDecryptSHA256Body(dk, rounds, iv, input, output, blocks, state, prefix, constants)
}

/// IGE decryption on AES-NI stitched with SHA-256 on the SHA extensions, reading the `.aesni` schedule's
/// decryption keys (the registry selects it where the SHA-256 kernel is SHA-NI).
public enum IGESHA256NI: IGESHA256Implementation {
    public static var name: String { "aes-ni+sha-ni" }
    public static var requires: KernelFeatures { [.aes, .sha, .ssse3, .sse41] }
    public static var aesLayout: AESScheduleLayout { .aesni }
    public static func decrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                               _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int,
                               _ state: UnsafeMutablePointer<UInt32>, _ prefix: UnsafeRawPointer) -> Int {
        sha256RoundConstants.withUnsafeBufferPointer {
            aesniIGEDecryptSHA256(schedule + AESNI.decryptionOffset, rounds, iv, src, dst, n, state, prefix, $0.baseAddress!)
        }
    }
}

#endif
