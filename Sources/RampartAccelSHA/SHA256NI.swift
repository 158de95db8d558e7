// SHA-256 compression with the x86_64 SHA extensions (sha256rnds2/msg1/msg2).
//
// Compiled with -parse-stdlib and only +sha +ssse3 +sse4.1. The caller must have checked the CPU
// features. The whole multi-block loop lives here: one call per buffer.

import Swift

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

let k256: [V4] = {
    let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
    return (0..<16).map { V4(k[4 * $0], k[4 * $0 + 1], k[4 * $0 + 2], k[4 * $0 + 3]) }
}()

/// Compresses `count` 64-byte blocks at `blocks` into `state` (eight words, a..h).
@inline(never)
public func sha256BlocksSHANI(_ state: UnsafeMutablePointer<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int) {
    guard count > 0 else { return }
    let raw = UnsafeRawPointer(state)
    let abcd = raw.loadUnaligned(as: V4.self)
    let efgh = raw.loadUnaligned(fromByteOffset: 16, as: V4.self)
    // State in the layout the instructions expect: ABEF and CDGH (highest lane first).
    var s0 = V4(efgh[1], efgh[0], abcd[1], abcd[0])  // ABEF
    var s1 = V4(efgh[3], efgh[2], abcd[3], abcd[2])  // CDGH
    let mask = bswap32Mask
    k256.withUnsafeBufferPointer { kb in
        let k = kb.baseAddress!
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
            quad(m0, k[0])
            quad(m1, k[1]); m0 = msg1(m0, m1)
            quad(m2, k[2]); m1 = msg1(m1, m2)
            // Group g (3...14): next = m[(g+1)%4] gets msg2, prev = m[(g-1)%4] gets msg1 (g <= 12).
            quadSchedule(m3, k[3], &m2, &m0, true, true)
            quadSchedule(m0, k[4], &m3, &m1, true, true)
            quadSchedule(m1, k[5], &m0, &m2, true, true)
            quadSchedule(m2, k[6], &m1, &m3, true, true)
            quadSchedule(m3, k[7], &m2, &m0, true, true)
            quadSchedule(m0, k[8], &m3, &m1, true, true)
            quadSchedule(m1, k[9], &m0, &m2, true, true)
            quadSchedule(m2, k[10], &m1, &m3, true, true)
            quadSchedule(m3, k[11], &m2, &m0, true, true)
            quadSchedule(m0, k[12], &m3, &m1, true, true)
            quadSchedule(m1, k[13], &m0, &m2, true, false)
            quadSchedule(m2, k[14], &m1, &m3, true, false)
            quad(m3, k[15])

            s0 &+= save0
            s1 &+= save1
            p += 64
        }
    }
    // Back to a..h order.
    // s0 = (F, E, B, A) in lanes 0..3; s1 = (H, G, D, C).
    state[0] = s0[3]; state[1] = s0[2]; state[2] = s1[3]; state[3] = s1[2]
    state[4] = s0[1]; state[5] = s0[0]; state[6] = s1[1]; state[7] = s1[0]
}

#endif
