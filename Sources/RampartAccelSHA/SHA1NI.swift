// SHA-1 compression with the x86_64 SHA extensions (sha1rnds4/nexte/msg1/msg2).
//
// Compiled with -parse-stdlib and only +sha +ssse3 +sse4.1. The caller must have checked the CPU
// features. The whole multi-block loop lives here: one call per buffer.

import Swift
import RampartKernelSupport

#if arch(x86_64)

@inline(__always) func sha1Rounds0(_ abcd: V4, _ e: V4) -> V4 {
    bv(Builtin.int_x86_sha1rnds4(bi(abcd), bi(e), UInt8(0)._value))
}
@inline(__always) func sha1Rounds1(_ abcd: V4, _ e: V4) -> V4 {
    bv(Builtin.int_x86_sha1rnds4(bi(abcd), bi(e), UInt8(1)._value))
}
@inline(__always) func sha1Rounds2(_ abcd: V4, _ e: V4) -> V4 {
    bv(Builtin.int_x86_sha1rnds4(bi(abcd), bi(e), UInt8(2)._value))
}
@inline(__always) func sha1Rounds3(_ abcd: V4, _ e: V4) -> V4 {
    bv(Builtin.int_x86_sha1rnds4(bi(abcd), bi(e), UInt8(3)._value))
}
@inline(__always) func nexte(_ a: V4, _ b: V4) -> V4 { bv(Builtin.int_x86_sha1nexte(bi(a), bi(b))) }
@inline(__always) func sha1msg1(_ a: V4, _ b: V4) -> V4 { bv(Builtin.int_x86_sha1msg1(bi(a), bi(b))) }
@inline(__always) func sha1msg2(_ a: V4, _ b: V4) -> V4 { bv(Builtin.int_x86_sha1msg2(bi(a), bi(b))) }

/// Reverses all 16 bytes: four big-endian words, highest word in lane 0.
let reverse128Mask = V4(0x0c0d_0e0f, 0x0809_0a0b, 0x0405_0607, 0x0001_0203)

/// Compresses `count` 64-byte blocks at `blocks` into `state` (five words, a..e).
@inline(never)
public func sha1BlocksSHANI(_ state: UnsafeMutablePointer<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int) {
    guard count > 0 else { return }
    var abcd = V4(state[3], state[2], state[1], state[0])
    var e0 = V4(0, 0, 0, state[4])
    var e1 = V4()
    let mask = reverse128Mask
    var p = blocks
    for _ in 0..<count {
        let abcdSave = abcd, eSave = e0
        var m0 = pshufb(p.loadUnaligned(as: V4.self), mask)
        var m1 = pshufb(p.loadUnaligned(fromByteOffset: 16, as: V4.self), mask)
        var m2 = pshufb(p.loadUnaligned(fromByteOffset: 32, as: V4.self), mask)
        var m3 = pshufb(p.loadUnaligned(fromByteOffset: 48, as: V4.self), mask)

        // Rounds 0-3
        e0 = e0 &+ m0
        e1 = abcd
        abcd = sha1Rounds0(abcd, e0)
        // Rounds 4-7
        e1 = nexte(e1, m1); e0 = abcd
        abcd = sha1Rounds0(abcd, e1)
        m0 = sha1msg1(m0, m1)
        // Rounds 8-11
        e0 = nexte(e0, m2); e1 = abcd
        abcd = sha1Rounds0(abcd, e0)
        m1 = sha1msg1(m1, m2); m0 ^= m2
        // Rounds 12-15
        e1 = nexte(e1, m3); e0 = abcd
        m0 = sha1msg2(m0, m3)
        abcd = sha1Rounds0(abcd, e1)
        m2 = sha1msg1(m2, m3); m1 ^= m3
        // Rounds 16-19
        e0 = nexte(e0, m0); e1 = abcd
        m1 = sha1msg2(m1, m0)
        abcd = sha1Rounds0(abcd, e0)
        m3 = sha1msg1(m3, m0); m2 ^= m0
        // Rounds 20-23
        e1 = nexte(e1, m1); e0 = abcd
        m2 = sha1msg2(m2, m1)
        abcd = sha1Rounds1(abcd, e1)
        m0 = sha1msg1(m0, m1); m3 ^= m1
        // Rounds 24-27
        e0 = nexte(e0, m2); e1 = abcd
        m3 = sha1msg2(m3, m2)
        abcd = sha1Rounds1(abcd, e0)
        m1 = sha1msg1(m1, m2); m0 ^= m2
        // Rounds 28-31
        e1 = nexte(e1, m3); e0 = abcd
        m0 = sha1msg2(m0, m3)
        abcd = sha1Rounds1(abcd, e1)
        m2 = sha1msg1(m2, m3); m1 ^= m3
        // Rounds 32-35
        e0 = nexte(e0, m0); e1 = abcd
        m1 = sha1msg2(m1, m0)
        abcd = sha1Rounds1(abcd, e0)
        m3 = sha1msg1(m3, m0); m2 ^= m0
        // Rounds 36-39
        e1 = nexte(e1, m1); e0 = abcd
        m2 = sha1msg2(m2, m1)
        abcd = sha1Rounds1(abcd, e1)
        m0 = sha1msg1(m0, m1); m3 ^= m1
        // Rounds 40-43
        e0 = nexte(e0, m2); e1 = abcd
        m3 = sha1msg2(m3, m2)
        abcd = sha1Rounds2(abcd, e0)
        m1 = sha1msg1(m1, m2); m0 ^= m2
        // Rounds 44-47
        e1 = nexte(e1, m3); e0 = abcd
        m0 = sha1msg2(m0, m3)
        abcd = sha1Rounds2(abcd, e1)
        m2 = sha1msg1(m2, m3); m1 ^= m3
        // Rounds 48-51
        e0 = nexte(e0, m0); e1 = abcd
        m1 = sha1msg2(m1, m0)
        abcd = sha1Rounds2(abcd, e0)
        m3 = sha1msg1(m3, m0); m2 ^= m0
        // Rounds 52-55
        e1 = nexte(e1, m1); e0 = abcd
        m2 = sha1msg2(m2, m1)
        abcd = sha1Rounds2(abcd, e1)
        m0 = sha1msg1(m0, m1); m3 ^= m1
        // Rounds 56-59
        e0 = nexte(e0, m2); e1 = abcd
        m3 = sha1msg2(m3, m2)
        abcd = sha1Rounds2(abcd, e0)
        m1 = sha1msg1(m1, m2); m0 ^= m2
        // Rounds 60-63
        e1 = nexte(e1, m3); e0 = abcd
        m0 = sha1msg2(m0, m3)
        abcd = sha1Rounds3(abcd, e1)
        m2 = sha1msg1(m2, m3); m1 ^= m3
        // Rounds 64-67
        e0 = nexte(e0, m0); e1 = abcd
        m1 = sha1msg2(m1, m0)
        abcd = sha1Rounds3(abcd, e0)
        m3 = sha1msg1(m3, m0); m2 ^= m0
        // Rounds 68-71
        e1 = nexte(e1, m1); e0 = abcd
        m2 = sha1msg2(m2, m1)
        abcd = sha1Rounds3(abcd, e1)
        m3 ^= m1
        // Rounds 72-75
        e0 = nexte(e0, m2); e1 = abcd
        m3 = sha1msg2(m3, m2)
        abcd = sha1Rounds3(abcd, e0)
        // Rounds 76-79
        e1 = nexte(e1, m3); e0 = abcd
        abcd = sha1Rounds3(abcd, e1)

        e0 = nexte(e0, eSave)
        abcd = abcd &+ abcdSave
        p += 64
    }
    state[0] = abcd[3]; state[1] = abcd[2]; state[2] = abcd[1]; state[3] = abcd[0]
    state[4] = e0[3]
}

#endif

#if arch(x86_64)
/// SHA-1 on the SHA extensions.
public enum SHA1NI: SHA1Implementation {
    public static let name = "sha-ni"
    public static let requires: KernelFeatures = [.sha, .ssse3, .sse41]
    @inline(__always)
    public static func blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int) {
        sha1BlocksSHANI(state, data, count)
    }
}
#endif
