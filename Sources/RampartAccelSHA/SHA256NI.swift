// SHA-256 compression with the x86_64 SHA extensions (sha256rnds2/msg1/msg2).
//
// Compiled with -parse-stdlib and only +sha +ssse3 +sse4.1. The caller must have checked the CPU
// features. The whole multi-block loop lives here: one call per buffer.

import Swift
import RampartKernelSupport

#if arch(x86_64)

typealias V4 = SIMD4<UInt32>

@inline(__always) func bi(_ v: V4) -> Builtin.Vec4xInt32 { unsafeBitCast(v, to: Builtin.Vec4xInt32.self) }
@inline(__always) func bv(_ v: Builtin.Vec4xInt32) -> V4 { unsafeBitCast(v, to: V4.self) }

@inline(__always) func pshufb(_ v: V4, _ mask: V4) -> V4 {
    let r = Builtin.int_x86_ssse3_pshuf_b_128(
        unsafeBitCast(v, to: Builtin.Vec16xInt8.self), unsafeBitCast(mask, to: Builtin.Vec16xInt8.self))
    return unsafeBitCast(r, to: V4.self)
}
@inline(__always) func rnds2(_ cdgh: V4, _ abef: V4, _ wk: V4) -> V4 {
    bv(Builtin.int_x86_sha256rnds2(bi(cdgh), bi(abef), bi(wk)))
}
@inline(__always) func msg1(_ a: V4, _ b: V4) -> V4 { bv(Builtin.int_x86_sha256msg1(bi(a), bi(b))) }
@inline(__always) func msg2(_ a: V4, _ b: V4) -> V4 { bv(Builtin.int_x86_sha256msg2(bi(a), bi(b))) }
/// `_mm_alignr_epi8(hi, lo, 4)` on 32-bit lanes: (lo1, lo2, lo3, hi0).
@inline(__always) func alignr4(_ hi: V4, _ lo: V4) -> V4 { V4(lo[1], lo[2], lo[3], hi[0]) }

/// Byte-swaps each 32-bit lane (big-endian message words).
let bswap32Mask = V4(0x0001_0203, 0x0405_0607, 0x0809_0a0b, 0x0c0d_0e0f)


/// Compresses `count` 64-byte blocks at `blocks` into `state` (eight words, a..h). `constants` points
/// to the 64 round constants K[0..<64] of FIPS 180-4 (the caller's table: Rampart's SHA-256 owns the
/// one copy), read four at a time.
@inline(never)
public func sha256BlocksSHANI(_ state: UnsafeMutablePointer<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int,
                              _ constants: UnsafePointer<UInt32>) {
    guard count > 0 else { return }
    // State in the layout the instructions expect: ABEF and CDGH (highest lane first).
    var (s0, s1) = shaNIState(state)
    let mask = bswap32Mask
    do {
        let kr = UnsafeRawPointer(constants)
        /// Round constants 4i..<4i+4 (no alignment assumed of the caller's table).
        @inline(__always) func kq(_ i: Int) -> V4 { kr.loadUnaligned(fromByteOffset: 16 * i, as: V4.self) }
        var p = blocks
        for _ in 0..<count {
            let save0 = s0, save1 = s1
            var m0 = pshufb(p.loadUnaligned(as: V4.self), mask)
            var m1 = pshufb(p.loadUnaligned(fromByteOffset: 16, as: V4.self), mask)
            var m2 = pshufb(p.loadUnaligned(fromByteOffset: 32, as: V4.self), mask)
            var m3 = pshufb(p.loadUnaligned(fromByteOffset: 48, as: V4.self), mask)

            // Four rounds with message group `m`; `next` is the group finished with msg2, `prev` the
            // group to which msg1 is applied.
            @inline(__always) func quad(_ m: V4, _ kk: V4) {
                let wk = m &+ kk
                s1 = rnds2(s1, s0, wk)
                s0 = rnds2(s0, s1, V4(wk[2], wk[3], wk[0], wk[1]))
            }
            @inline(__always) func quadSchedule(_ m: V4, _ kk: V4, _ prev: inout V4, _ next: inout V4,
                                                _ doMsg2: Bool, _ doMsg1: Bool) {
                let wk = m &+ kk
                s1 = rnds2(s1, s0, wk)
                if doMsg2 {
                    next = msg2(next &+ alignr4(m, prev), m)
                }
                s0 = rnds2(s0, s1, V4(wk[2], wk[3], wk[0], wk[1]))
                if doMsg1 { prev = msg1(prev, m) }
            }
            // Groups 0..3: load, schedule msg1 from group 1.
            quad(m0, kq(0))
            quad(m1, kq(1)); m0 = msg1(m0, m1)
            quad(m2, kq(2)); m1 = msg1(m1, m2)
            // Group g (3...14): next = m[(g+1)%4] gets msg2, prev = m[(g-1)%4] gets msg1 (g <= 12).
            quadSchedule(m3, kq(3), &m2, &m0, true, true)
            quadSchedule(m0, kq(4), &m3, &m1, true, true)
            quadSchedule(m1, kq(5), &m0, &m2, true, true)
            quadSchedule(m2, kq(6), &m1, &m3, true, true)
            quadSchedule(m3, kq(7), &m2, &m0, true, true)
            quadSchedule(m0, kq(8), &m3, &m1, true, true)
            quadSchedule(m1, kq(9), &m0, &m2, true, true)
            quadSchedule(m2, kq(10), &m1, &m3, true, true)
            quadSchedule(m3, kq(11), &m2, &m0, true, true)
            quadSchedule(m0, kq(12), &m3, &m1, true, true)
            quadSchedule(m1, kq(13), &m0, &m2, true, false)
            quadSchedule(m2, kq(14), &m1, &m3, true, false)
            quad(m3, kq(15))

            s0 &+= save0
            s1 &+= save1
            // The state back in a..h order after every block, not once after the loop. The store is
            // off the round chain, and it keeps the chain in registers: a store the round-constant
            // loads may alias stops LLVM from hoisting the sixteen constant vectors out of the loop,
            // which (with every xmm register taken) made it spill ABEF and CDGH to the stack and
            // reload them at the top of each block, a store-forwarding round trip on the critical
            // path (about 7% of a block on Zen 4, measured 2026-11-29). The constants are now memory
            // operands of the additions, as in OpenSSL's SHA extension code.
            storeSHANIState(state, s0, s1)
            p += 64
        }
    }
}

#endif

#if arch(x86_64)

/// The state words a..h as the instructions want them: (ABEF, CDGH), highest lane first.
@inline(__always) private func shaNIState(_ state: UnsafeMutablePointer<UInt32>) -> (V4, V4) {
    let raw = UnsafeRawPointer(state)
    let abcd = raw.loadUnaligned(as: V4.self)
    let efgh = raw.loadUnaligned(fromByteOffset: 16, as: V4.self)
    return (V4(efgh[1], efgh[0], abcd[1], abcd[0]), V4(efgh[3], efgh[2], abcd[3], abcd[2]))
}

/// Stores (ABEF, CDGH) back as a..h: s0 = (F, E, B, A) in lanes 0..3, s1 = (H, G, D, C).
@inline(__always) private func storeSHANIState(_ state: UnsafeMutablePointer<UInt32>, _ s0: V4, _ s1: V4) {
    state[0] = s0[3]; state[1] = s0[2]; state[2] = s1[3]; state[3] = s1[2]
    state[4] = s0[1]; state[5] = s0[0]; state[6] = s1[1]; state[7] = s1[0]
}

/// Compresses `n` 64-byte blocks on each of two independent messages (multi-buffer): lane l's state
/// is the eight words at `states[l]`, its blocks start at `data[l]`, `strides[l]` bytes apart (0 for
/// an idle lane that repeats one scratch block). `constants` points to K[0..<64].
///
/// One message's 32 `sha256rnds2` per block form one dependency chain, and the SHA unit can start a
/// round of another message while one is in flight: here the two messages' rounds alternate, so each
/// chain's latency hides behind the other's (about 1.47x the throughput of two single-message calls on
/// Zen 4, measured 2026-11-29; Docs/Architecture.md §6.6). Each message's state goes back to its words
/// after every block (as in `sha256BlocksSHANI`, so that the constant loads stay in the loop). No
/// branch and no memory address depends on the data or the states.
@inline(never)
public func sha256BlocksSHANIx2(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                                _ strides: UnsafePointer<Int>, _ n: Int, _ constants: UnsafePointer<UInt32>) {
    guard n > 0 else { return }
    let stateA = states[0], stateB = states[1]
    var (a0, a1) = shaNIState(stateA)
    var (b0, b1) = shaNIState(stateB)
    let mask = bswap32Mask
    let kr = UnsafeRawPointer(constants)
    @inline(__always) func kq(_ i: Int) -> V4 { kr.loadUnaligned(fromByteOffset: 16 * i, as: V4.self) }
    @inline(__always) func words(_ p: UnsafeRawPointer, _ q: Int) -> V4 {
        pshufb(p.loadUnaligned(fromByteOffset: 16 * q, as: V4.self), mask)
    }
    var pa = UnsafeRawPointer(data[0]), pb = UnsafeRawPointer(data[1])
    let strideA = strides[0], strideB = strides[1]
    var i = 0
    while i < n {
        let saveA0 = a0, saveA1 = a1, saveB0 = b0, saveB1 = b1
        var ma0 = words(pa, 0), ma1 = words(pa, 1), ma2 = words(pa, 2), ma3 = words(pa, 3)
        var mb0 = words(pb, 0), mb1 = words(pb, 1), mb2 = words(pb, 2), mb3 = words(pb, 3)

        /// Four rounds of both messages, their sha256rnds2 alternating.
        @inline(__always) func quad(_ x: V4, _ y: V4, _ kk: V4) {
            let wa = x &+ kk, wb = y &+ kk
            a1 = rnds2(a1, a0, wa)
            b1 = rnds2(b1, b0, wb)
            a0 = rnds2(a0, a1, V4(wa[2], wa[3], wa[0], wa[1]))
            b0 = rnds2(b0, b1, V4(wb[2], wb[3], wb[0], wb[1]))
        }
        /// The schedule step of `sha256BlocksSHANI`'s quadSchedule for one message.
        @inline(__always) func schedule(_ m: V4, _ prev: inout V4, _ next: inout V4, _ doMsg1: Bool) {
            next = msg2(next &+ alignr4(m, prev), m)
            if doMsg1 { prev = msg1(prev, m) }
        }
        quad(ma0, mb0, kq(0))
        quad(ma1, mb1, kq(1)); ma0 = msg1(ma0, ma1); mb0 = msg1(mb0, mb1)
        quad(ma2, mb2, kq(2)); ma1 = msg1(ma1, ma2); mb1 = msg1(mb1, mb2)
        // Group g (3...14) as in sha256BlocksSHANI: next = m[(g+1)%4] gets msg2, prev = m[(g-1)%4]
        // gets msg1 (g <= 12).
        quad(ma3, mb3, kq(3)); schedule(ma3, &ma2, &ma0, true); schedule(mb3, &mb2, &mb0, true)
        quad(ma0, mb0, kq(4)); schedule(ma0, &ma3, &ma1, true); schedule(mb0, &mb3, &mb1, true)
        quad(ma1, mb1, kq(5)); schedule(ma1, &ma0, &ma2, true); schedule(mb1, &mb0, &mb2, true)
        quad(ma2, mb2, kq(6)); schedule(ma2, &ma1, &ma3, true); schedule(mb2, &mb1, &mb3, true)
        quad(ma3, mb3, kq(7)); schedule(ma3, &ma2, &ma0, true); schedule(mb3, &mb2, &mb0, true)
        quad(ma0, mb0, kq(8)); schedule(ma0, &ma3, &ma1, true); schedule(mb0, &mb3, &mb1, true)
        quad(ma1, mb1, kq(9)); schedule(ma1, &ma0, &ma2, true); schedule(mb1, &mb0, &mb2, true)
        quad(ma2, mb2, kq(10)); schedule(ma2, &ma1, &ma3, true); schedule(mb2, &mb1, &mb3, true)
        quad(ma3, mb3, kq(11)); schedule(ma3, &ma2, &ma0, true); schedule(mb3, &mb2, &mb0, true)
        quad(ma0, mb0, kq(12)); schedule(ma0, &ma3, &ma1, true); schedule(mb0, &mb3, &mb1, true)
        quad(ma1, mb1, kq(13)); schedule(ma1, &ma0, &ma2, false); schedule(mb1, &mb0, &mb2, false)
        quad(ma2, mb2, kq(14)); schedule(ma2, &ma1, &ma3, false); schedule(mb2, &mb1, &mb3, false)
        quad(ma3, mb3, kq(15))

        a0 &+= saveA0; a1 &+= saveA1; b0 &+= saveB0; b1 &+= saveB1
        storeSHANIState(stateA, a0, a1)
        storeSHANIState(stateB, b0, b1)
        pa += strideA
        pb += strideB
        i &+= 1
    }
}

#endif

#if arch(x86_64)
/// SHA-256 on the SHA extensions.
public enum SHA256NI: SHA256Implementation {
    public static let name = "sha-ni"
    public static let requires: KernelFeatures = [.sha, .ssse3, .sse41]
    @inline(__always)
    public static func blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int) {
        sha256RoundConstants.withUnsafeBufferPointer { sha256BlocksSHANI(state, data, count, $0.baseAddress!) }
    }
}

/// Two messages at once on the SHA extensions, their round chains alternating.
public enum SHA256LanesNIx2: SHA256LanesImplementation {
    public static let name = "sha-ni-x2"
    public static let requires: KernelFeatures = [.sha, .ssse3, .sse41]
    public static let lanes = 2
    public static let tableBytes = 0
    @inline(__always)
    public static func compress(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                                _ strides: UnsafePointer<Int>, _ n: Int, _ table: UnsafeMutableRawPointer) {
        sha256RoundConstants.withUnsafeBufferPointer { sha256BlocksSHANIx2(states, data, strides, n, $0.baseAddress!) }
    }
}
#endif
