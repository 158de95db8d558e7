// AES-GCM with VAES and VPCLMULQDQ on 256-bit vectors: sixteen blocks per iteration, two per
// register, CTR and GHASH in one loop (the wide tier of RampartAccelAESNI's stitched kernel).
//
// Compiled with -parse-stdlib and +vaes +vpclmulqdq +avx +avx2 +pclmul +ssse3 (see Package.swift);
// the caller checks those CPU features (the registry). Every entry point is @inline(never) and runs a
// whole buffer. The 128-bit helpers (carry-less products, the reduction, loads and byte reversal) are
// RampartAccelAESNI's (X86AES in X86AES.swift and X86GHASH.swift); this module's 256-bit helpers and
// loops are members of the same namespace, so that they read the shared ones unqualified.
//
// GHASH goes through POLYVAL exactly as in RampartAccelAESNI/X86GHASH.swift (byte-reversed
// blocks, H pre-multiplied by x, a Montgomery reduction). A 256-bit register holds two blocks, and
// vpclmulqdq multiplies within each 128-bit half, so the Karatsuba parts of sixteen blocks times
// H^16 ... H^1 are summed in two halves and folded once, then reduced once per sixteen blocks.
//
// Table layout (512 bytes, 16-byte aligned), a superset of the 128-bit kernel's 256 bytes:
//   [0, 128)    H_1 ... H_8        [128, 256)  their Karatsuba halves (lo ^ hi in lane 0)
//   [256, 384)  H_9 ... H_16       [384, 512)  their Karatsuba halves
// where H_k is the k-th Montgomery power. The first 256 bytes are written by the 128-bit kernel's
// `ghashPrecompute`; `vaesGHASHExtendTable` adds the rest.

import Swift
import RampartAccelAESNI
import RampartAccelAESAVX
import RampartKernelSupport

#if arch(x86_64)

extension X86AES {
    typealias W = SIMD4<UInt64>

    @inline(__always) static func b4(_ w: W) -> Builtin.Vec4xInt64 { unsafeBitCast(w, to: Builtin.Vec4xInt64.self) }

    /// Writes H_9 ... H_16 and their Karatsuba halves into bytes 256 ..< 512 of `table`, whose first
    /// 256 bytes hold H_1 ... H_8 (the 128-bit kernel's table).
    @inline(__always)
    static func vaesGHASHExtendTableBody(_ table: UnsafeMutableRawPointer) {
        let h1 = load(table, 0)
        var p = load(table, 112)   // H_8
        for k in 0..<8 {
            p = dot(p, h1)
            store(p, table, 256 + 16 * k)
            store(p ^ swapHalves(p), table, 384 + 16 * k)
        }
    }

    // MARK: 256-bit helpers

    @inline(__always) static func vaesenc(_ s: W, _ k: W) -> W { unsafeBitCast(Builtin.int_x86_aesni_aesenc_256(b4(s), b4(k)), to: W.self) }
    @inline(__always) static func vaesenclast(_ s: W, _ k: W) -> W { unsafeBitCast(Builtin.int_x86_aesni_aesenclast_256(b4(s), b4(k)), to: W.self) }
    @inline(__always) static func vclmul00(_ a: W, _ b: W) -> W { unsafeBitCast(Builtin.int_x86_pclmulqdq_256(b4(a), b4(b), UInt8(0x00)._value), to: W.self) }
    @inline(__always) static func vclmul11(_ a: W, _ b: W) -> W { unsafeBitCast(Builtin.int_x86_pclmulqdq_256(b4(a), b4(b), UInt8(0x11)._value), to: W.self) }
    @inline(__always) static func vswapHalves(_ w: W) -> W { W(w[1], w[0], w[3], w[2]) }

    /// vpshufb: a byte shuffle within each 128-bit half.
    @inline(__always) static func vpshufb(_ w: W, _ mask: W) -> W {
        unsafeBitCast(Builtin.int_x86_avx2_pshuf_b(unsafeBitCast(w, to: Builtin.Vec32xInt8.self),
                                                   unsafeBitCast(mask, to: Builtin.Vec32xInt8.self)), to: W.self)
    }
    @inline(__always) static var vreverseBytesMask: W { W(0x0809_0a0b_0c0d_0e0f, 0x0001_0203_0405_0607, 0x0809_0a0b_0c0d_0e0f, 0x0001_0203_0405_0607) }

    @inline(__always) static func wload(_ p: UnsafeRawPointer, _ offset: Int) -> W { p.loadUnaligned(fromByteOffset: offset, as: W.self) }
    @inline(__always) static func wstore(_ w: W, _ p: UnsafeMutableRawPointer, _ offset: Int) { p.storeBytes(of: w, toByteOffset: offset, as: W.self) }
    @inline(__always) static func pair(_ a: V, _ b: V) -> W { W(a[0], a[1], b[0], b[1]) }
    @inline(__always) static func broadcast(_ k: V) -> W { W(k[0], k[1], k[0], k[1]) }
    @inline(__always) static func low(_ w: W) -> V { V(w[0], w[1]) }
    @inline(__always) static func high(_ w: W) -> V { V(w[2], w[3]) }

    /// Adds `n` to the 32-bit counter (lowest lane, byte-reversed form) of both blocks of `w`.
    @inline(__always) static func vinc32(_ w: W, _ n: UInt32) -> W {
        unsafeBitCast(unsafeBitCast(w, to: SIMD8<UInt32>.self) &+ SIMD8<UInt32>(n, 0, 0, 0, n, 0, 0, 0), to: W.self)
    }

    /// The offsets of H_k and of its Karatsuba half in the 512-byte table (k = 1 ... 16).
    @inline(__always) static func powerOffset(_ k: Int) -> Int { k <= 8 ? 16 * (k - 1) : 256 + 16 * (k - 9) }

    /// Karatsuba parts of the pair `x` (blocks 2m, 2m+1 of sixteen, POLYVAL order) times (H_{16-2m}, H_{15-2m}).
    @inline(__always) static func mulPair(_ t: UnsafeRawPointer, _ m: Int, _ x: W, _ lo: inout W, _ mid: inout W, _ hi: inout W) {
        let a = powerOffset(16 - 2 * m), b = powerOffset(15 - 2 * m)
        let h = pair(load(t, a), load(t, b)), hk = pair(load(t, a + 128), load(t, b + 128))
        lo ^= vclmul00(x, h)
        hi ^= vclmul11(x, h)
        mid ^= vclmul00(x ^ vswapHalves(x), hk)
    }

    /// y' = (y + X_0) H_16 + X_1 H_15 + ... + X_15 H_1, one reduction; blocks in POLYVAL order, two per
    /// register; `y` in POLYVAL order.
    @inline(__always) static func absorb16(_ t: UnsafeRawPointer, _ y: V, _ x0: W, _ x1: W, _ x2: W, _ x3: W,
                                    _ x4: W, _ x5: W, _ x6: W, _ x7: W) -> V {
        var lo = W(0, 0, 0, 0), mid = W(0, 0, 0, 0), hi = W(0, 0, 0, 0)
        mulPair(t, 0, x0 ^ W(y[0], y[1], 0, 0), &lo, &mid, &hi)
        mulPair(t, 1, x1, &lo, &mid, &hi)
        mulPair(t, 2, x2, &lo, &mid, &hi)
        mulPair(t, 3, x3, &lo, &mid, &hi)
        mulPair(t, 4, x4, &lo, &mid, &hi)
        mulPair(t, 5, x5, &lo, &mid, &hi)
        mulPair(t, 6, x6, &lo, &mid, &hi)
        mulPair(t, 7, x7, &lo, &mid, &hi)
        return finish(low(lo) ^ high(lo), low(mid) ^ high(mid), low(hi) ^ high(hi))
    }

    /// Eight pairs of blocks through the middle rounds (the states already hold the round-0 XOR).
    @inline(__always) static func encRounds16(_ s: inout (W, W, W, W, W, W, W, W), _ rk: UnsafeRawPointer, _ rounds: Int) {
        var r = 1
        while r < rounds {
            let k = broadcast(load(rk, 16 * r))
            s.0 = vaesenc(s.0, k); s.1 = vaesenc(s.1, k); s.2 = vaesenc(s.2, k); s.3 = vaesenc(s.3, k)
            s.4 = vaesenc(s.4, k); s.5 = vaesenc(s.5, k); s.6 = vaesenc(s.6, k); s.7 = vaesenc(s.7, k)
            r += 1
        }
    }

    /// The counter blocks ctr + 0 ... ctr + 15 (byte-reversed `ctr` in, FIPS byte order out), XORed
    /// with the round-0 key.
    @inline(__always) static func counterPairs(_ cw: W, _ k0: W) -> (W, W, W, W, W, W, W, W) {
        let rev = vreverseBytesMask
        return (vpshufb(cw, rev) ^ k0, vpshufb(vinc32(cw, 2), rev) ^ k0, vpshufb(vinc32(cw, 4), rev) ^ k0,
                vpshufb(vinc32(cw, 6), rev) ^ k0, vpshufb(vinc32(cw, 8), rev) ^ k0, vpshufb(vinc32(cw, 10), rev) ^ k0,
                vpshufb(vinc32(cw, 12), rev) ^ k0, vpshufb(vinc32(cw, 14), rev) ^ k0)
    }

    // MARK: GCM

    /// AES-GCM encryption of `blocks` whole blocks, a multiple of 16: CTR with the 32-bit counter of
    /// `counter` (16 bytes, advanced by `blocks`) and GHASH of the ciphertext into `state` (16 bytes,
    /// GHASH byte order), with the 512-byte `table`.
    ///
    /// Stitched: the GHASH of group n−1 (its byte-reversed ciphertext kept in a 256-byte stack buffer)
    /// runs inside the AES rounds of group n, one pair of blocks (three carry-less multiplications) per
    /// round in rounds 1–8, so the multiplier and the AES unit work side by side instead of in turn.
    @inline(__always)
    static func vaesGCMEncryptBody(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                               _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                               _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
        let rev = reverseBytesMask, vrev = vreverseBytesMask
        let k0 = broadcast(load(rk, 0)), kl = broadcast(load(rk, 16 * rounds))
        let ctr = pshufb(load(counter, 0), rev)
        var cw = pair(ctr, inc32(ctr, 1))
        var y = pshufb(load(state, 0), rev)
        var i = 0
        var pending = false
        var xs = (W(0, 0, 0, 0), W(0, 0, 0, 0), W(0, 0, 0, 0), W(0, 0, 0, 0), W(0, 0, 0, 0), W(0, 0, 0, 0), W(0, 0, 0, 0), W(0, 0, 0, 0))
        withUnsafeMutableBytes(of: &xs) { xb in
            let xp = xb.baseAddress!
            while i + 16 <= blocks {
                var s = counterPairs(cw, k0)
                cw = vinc32(cw, 16)
                var lo = W(0, 0, 0, 0), mid = W(0, 0, 0, 0), hi = W(0, 0, 0, 0)
                var r = 1
                while r < rounds {
                    let k = broadcast(load(rk, 16 * r))
                    s.0 = vaesenc(s.0, k); s.1 = vaesenc(s.1, k); s.2 = vaesenc(s.2, k); s.3 = vaesenc(s.3, k)
                    s.4 = vaesenc(s.4, k); s.5 = vaesenc(s.5, k); s.6 = vaesenc(s.6, k); s.7 = vaesenc(s.7, k)
                    if pending && r <= 8 {
                        var x = wload(xp, 32 * (r - 1))
                        if r == 1 { x ^= W(y[0], y[1], 0, 0) }
                        mulPair(table, r - 1, x, &lo, &mid, &hi)
                    }
                    r += 1
                }
                if pending { y = finish(low(lo) ^ high(lo), low(mid) ^ high(mid), low(hi) ^ high(hi)) }
                let o = 16 * i
                let c0 = vaesenclast(s.0, kl ^ wload(input, o)), c1 = vaesenclast(s.1, kl ^ wload(input, o + 32))
                let c2 = vaesenclast(s.2, kl ^ wload(input, o + 64)), c3 = vaesenclast(s.3, kl ^ wload(input, o + 96))
                let c4 = vaesenclast(s.4, kl ^ wload(input, o + 128)), c5 = vaesenclast(s.5, kl ^ wload(input, o + 160))
                let c6 = vaesenclast(s.6, kl ^ wload(input, o + 192)), c7 = vaesenclast(s.7, kl ^ wload(input, o + 224))
                wstore(c0, output, o); wstore(c1, output, o + 32); wstore(c2, output, o + 64); wstore(c3, output, o + 96)
                wstore(c4, output, o + 128); wstore(c5, output, o + 160); wstore(c6, output, o + 192); wstore(c7, output, o + 224)
                wstore(vpshufb(c0, vrev), xp, 0); wstore(vpshufb(c1, vrev), xp, 32)
                wstore(vpshufb(c2, vrev), xp, 64); wstore(vpshufb(c3, vrev), xp, 96)
                wstore(vpshufb(c4, vrev), xp, 128); wstore(vpshufb(c5, vrev), xp, 160)
                wstore(vpshufb(c6, vrev), xp, 192); wstore(vpshufb(c7, vrev), xp, 224)
                pending = true
                i += 16
            }
            if pending {
                y = absorb16(table, y, wload(xp, 0), wload(xp, 32), wload(xp, 64), wload(xp, 96),
                             wload(xp, 128), wload(xp, 160), wload(xp, 192), wload(xp, 224))
            }
            // The stack buffer held ciphertext only (public), but leave nothing behind anyway.
            xb.initializeMemory(as: UInt8.self, repeating: 0)
        }
        store(pshufb(inc32(ctr, UInt32(truncatingIfNeeded: i)), rev), counter, 0)
        store(pshufb(y, rev), state, 0)
    }

    /// AES-GCM decryption of `blocks` whole blocks, a multiple of 16: GHASH of the ciphertext `input`
    /// into `state` and CTR decryption into `output`, in one pass. The caller checks the tag and wipes
    /// `output` on failure.
    ///
    /// Stitched like ``vaesGCMEncrypt``: the group's own ciphertext is known up front, so its GHASH runs
    /// in the AES rounds of the same group (one pair per round in rounds 1–8).
    @inline(__always)
    static func vaesGCMDecryptBody(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                               _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                               _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
        let rev = reverseBytesMask, vrev = vreverseBytesMask
        let k0 = broadcast(load(rk, 0)), kl = broadcast(load(rk, 16 * rounds))
        let ctr = pshufb(load(counter, 0), rev)
        var cw = pair(ctr, inc32(ctr, 1))
        var y = pshufb(load(state, 0), rev)
        var i = 0
        while i + 16 <= blocks {
            let o = 16 * i
            var s = counterPairs(cw, k0)
            cw = vinc32(cw, 16)
            var lo = W(0, 0, 0, 0), mid = W(0, 0, 0, 0), hi = W(0, 0, 0, 0)
            var r = 1
            while r < rounds {
                let k = broadcast(load(rk, 16 * r))
                s.0 = vaesenc(s.0, k); s.1 = vaesenc(s.1, k); s.2 = vaesenc(s.2, k); s.3 = vaesenc(s.3, k)
                s.4 = vaesenc(s.4, k); s.5 = vaesenc(s.5, k); s.6 = vaesenc(s.6, k); s.7 = vaesenc(s.7, k)
                if r <= 8 {
                    var x = vpshufb(wload(input, o + 32 * (r - 1)), vrev)
                    if r == 1 { x ^= W(y[0], y[1], 0, 0) }
                    mulPair(table, r - 1, x, &lo, &mid, &hi)
                }
                r += 1
            }
            y = finish(low(lo) ^ high(lo), low(mid) ^ high(mid), low(hi) ^ high(hi))
            let c0 = wload(input, o), c1 = wload(input, o + 32), c2 = wload(input, o + 64), c3 = wload(input, o + 96)
            let c4 = wload(input, o + 128), c5 = wload(input, o + 160), c6 = wload(input, o + 192), c7 = wload(input, o + 224)
            wstore(vaesenclast(s.0, kl ^ c0), output, o); wstore(vaesenclast(s.1, kl ^ c1), output, o + 32)
            wstore(vaesenclast(s.2, kl ^ c2), output, o + 64); wstore(vaesenclast(s.3, kl ^ c3), output, o + 96)
            wstore(vaesenclast(s.4, kl ^ c4), output, o + 128); wstore(vaesenclast(s.5, kl ^ c5), output, o + 160)
            wstore(vaesenclast(s.6, kl ^ c6), output, o + 192); wstore(vaesenclast(s.7, kl ^ c7), output, o + 224)
            i += 16
        }
        store(pshufb(inc32(ctr, UInt32(truncatingIfNeeded: i)), rev), counter, 0)
        store(pshufb(y, rev), state, 0)
    }
}

/// Writes H_9 ... H_16 and their Karatsuba halves into bytes 256 ..< 512 of `table`, whose first
/// 256 bytes hold H_1 ... H_8 (the 128-bit kernel's table).
@inline(never)
public func vaesGHASHExtendTable(_ table: UnsafeMutableRawPointer) {
    X86AES.vaesGHASHExtendTableBody(table)
}

/// AES-GCM encryption of `blocks` whole blocks, a multiple of 16: CTR with the 32-bit counter of
/// `counter` (16 bytes, advanced by `blocks`) and GHASH of the ciphertext into `state` (16 bytes,
/// GHASH byte order), with the 512-byte `table`, stitched as described at
/// ``X86AES/vaesGCMEncryptBody(_:_:_:_:_:_:_:_:)``.
@inline(never)
public func vaesGCMEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                           _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                           _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.vaesGCMEncryptBody(rk, rounds, table, counter, state, input, output, blocks)
}

/// AES-GCM decryption of `blocks` whole blocks, a multiple of 16: GHASH of the ciphertext `input`
/// into `state` and CTR decryption into `output`, in one pass. The caller checks the tag and wipes
/// `output` on failure.
@inline(never)
public func vaesGCMDecrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                           _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                           _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.vaesGCMDecryptBody(rk, rounds, table, counter, state, input, output, blocks)
}

/// GCM with VAES and VPCLMULQDQ: a call's whole 16-block groups run sixteen blocks per iteration on
/// 256-bit vectors (messages of 256 bytes and more), the rest (up to 15 blocks) and every absorb on
/// ``GHASHCLMULAVX``'s 128-bit loops, which continue with the same counter and GHASH state. The table
/// is ``GHASHCLMUL``'s with H_9 ... H_16 appended (512 bytes) when GCM calls take sixteen blocks.
public enum GHASHVAES: GHASHImplementation {
    public static var name: String { "vaes+vpclmulqdq" }
    public static var requires: KernelFeatures { [.aes, .pclmul, .ssse3, .sse41, .avx2, .vaes, .vpclmulqdq] }
    public static var aesLayout: AESScheduleLayout { .aesni }
    public static func precompute(_ h: UnsafeRawPointer, _ table: UnsafeMutableRawPointer, absorbBlocks: Int, gcmBlocks: Int) {
        GHASHCLMULAVX.precompute(h, table, absorbBlocks: absorbBlocks, gcmBlocks: gcmBlocks)
        if gcmBlocks >= 16 { vaesGHASHExtendTable(table) }
    }
    public static func absorb(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer, _ data: UnsafeRawPointer, _ n: Int) {
        GHASHCLMULAVX.absorb(table, state, data, n)
    }
    public static func gcmEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                                  _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        let w = n & ~15
        if w > 0 { vaesGCMEncrypt(schedule, rounds, table, counter, state, src, dst, w) }
        if w < n { GHASHCLMULAVX.gcmEncrypt(schedule, rounds, table, counter, state, src + 16 * w, dst + 16 * w, n - w) }
    }
    public static func gcmDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                                  _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        let w = n & ~15
        if w > 0 { vaesGCMDecrypt(schedule, rounds, table, counter, state, src, dst, w) }
        if w < n { GHASHCLMULAVX.gcmDecrypt(schedule, rounds, table, counter, state, src + 16 * w, dst + 16 * w, n - w) }
    }
}

#endif
