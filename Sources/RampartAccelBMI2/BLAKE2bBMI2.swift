// BLAKE2b compression (RFC 7693 §3.2) in 64-bit general-purpose registers, compiled with BMI2: each
// rotation is one `rorx` (non-destructive, no flags), the sixteen working words are scalars and the
// message words are memory operands of the additions (the sigma schedule is constant offsets: the
// rounds are unrolled with literal indices).
//
// Why a scalar kernel beside the AVX2 one. A single message's G functions form one dependency chain
// per column; the AVX2 kernel runs the four columns in one vector, so each G step costs the vector
// latency of the chain plus the diagonal permutes. A core with four fast scalar ALUs runs the four
// columns' chains side by side instead: a block is 576 additions, 384 XORs and 384 rotations, about
// 336 cycles on four ALUs (2.6 cycles per byte), and this kernel runs at that bound. Same-run on a
// 2-core AMD EPYC (Zen 4) VM, 2026-11-29, 1 MiB: this kernel 1.41-1.42 GB/s, the AVX2 kernel
// 0.80-0.82, OpenSSL's C code 1.43-1.46, libsodium's AVX2 0.74-0.75 (Docs/Architecture.md §6.9). On the
// Intel cores measured earlier the AVX2 kernel led (Sapphire Rapids: 1.01 GB/s against OpenSSL's C at
// 0.85), so the registry selects this kernel on AMD processors only (Platform/Registrations.swift).
//
// Constant time: straight-line additions, XORs and rotations; the only branches are the block loop and
// the final-block flag, which depend on the lengths only.

import Swift
import RampartKernelSupport

#if arch(x86_64)

@_transparent private func ror(_ x: UInt64, _ n: UInt64) -> UInt64 { (x &>> n) | (x &<< (64 &- n)) }

/// Compresses `count` consecutive 128-byte blocks into `state` (h[0..7], then the counter t[0], t[1]).
/// Each block adds 128 to the counter, except that when `lastLength >= 0` the final block of the run is
/// the message's last block: it adds `lastLength` (0...128) and sets the finalization flag. Needs BMI2.
@inline(never)
public func blake2bBlocksBMI2(_ state: UnsafeMutablePointer<UInt64>, _ blocks: UnsafeRawPointer, _ count: Int,
                              _ lastLength: Int) {
    var h0 = state[0], h1 = state[1], h2 = state[2], h3 = state[3]
    var h4 = state[4], h5 = state[5], h6 = state[6], h7 = state[7]
    var t0 = state[8], t1 = state[9]
    var p = blocks
    var i = 0
    while i < count {
        let isLast = lastLength >= 0 && i == count &- 1
        let inc = UInt64(truncatingIfNeeded: isLast ? lastLength : 128)
        t0 &+= inc
        t1 &+= t0 < inc ? 1 : 0
        let f0: UInt64 = isLast ? ~0 : 0

        var v0 = h0, v1 = h1, v2 = h2, v3 = h3, v4 = h4, v5 = h5, v6 = h6, v7 = h7
        var v8: UInt64 = 0x6a09e667f3bcc908, v9: UInt64 = 0xbb67ae8584caa73b
        var v10: UInt64 = 0x3c6ef372fe94f82b, v11: UInt64 = 0xa54ff53a5f1d36f1
        var v12: UInt64 = 0x510e527fade682d1 ^ t0, v13: UInt64 = 0x9b05688c2b3e6c1f ^ t1
        var v14: UInt64 = 0x1f83d9abfb41bd6b ^ f0, v15: UInt64 = 0x5be0cd19137e2179

        let q = p
        @_transparent func m(_ k: Int) -> UInt64 {
            UInt64(littleEndian: q.loadUnaligned(fromByteOffset: 8 &* k, as: UInt64.self))
        }
        @_transparent func g(_ a: inout UInt64, _ b: inout UInt64, _ c: inout UInt64, _ d: inout UInt64,
                             _ x: UInt64, _ y: UInt64) {
            a = a &+ b &+ x
            d = ror(d ^ a, 32)
            c = c &+ d
            b = ror(b ^ c, 24)
            a = a &+ b &+ y
            d = ror(d ^ a, 16)
            c = c &+ d
            b = ror(b ^ c, 63)
        }
        @_transparent func round(_ s0: Int, _ s1: Int, _ s2: Int, _ s3: Int, _ s4: Int, _ s5: Int, _ s6: Int, _ s7: Int,
                                 _ s8: Int, _ s9: Int, _ s10: Int, _ s11: Int, _ s12: Int, _ s13: Int, _ s14: Int, _ s15: Int) {
            g(&v0, &v4, &v8, &v12, m(s0), m(s1))
            g(&v1, &v5, &v9, &v13, m(s2), m(s3))
            g(&v2, &v6, &v10, &v14, m(s4), m(s5))
            g(&v3, &v7, &v11, &v15, m(s6), m(s7))
            g(&v0, &v5, &v10, &v15, m(s8), m(s9))
            g(&v1, &v6, &v11, &v12, m(s10), m(s11))
            g(&v2, &v7, &v8, &v13, m(s12), m(s13))
            g(&v3, &v4, &v9, &v14, m(s14), m(s15))
        }
        // RFC 7693's sigma table; rounds 10 and 11 repeat rows 0 and 1.
        round(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
        round(14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3)
        round(11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4)
        round(7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8)
        round(9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13)
        round(2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9)
        round(12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11)
        round(13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10)
        round(6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5)
        round(10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0)
        round(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
        round(14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3)

        h0 ^= v0 ^ v8; h1 ^= v1 ^ v9; h2 ^= v2 ^ v10; h3 ^= v3 ^ v11
        h4 ^= v4 ^ v12; h5 ^= v5 ^ v13; h6 ^= v6 ^ v14; h7 ^= v7 ^ v15
        p += 128
        i &+= 1
    }
    state[0] = h0; state[1] = h1; state[2] = h2; state[3] = h3
    state[4] = h4; state[5] = h5; state[6] = h6; state[7] = h7
    state[8] = t0; state[9] = t1
}

/// BLAKE2b in four scalar chains with BMI2 `rorx` (faster than the AVX2 kernel on AMD processors).
public enum BLAKE2bBMI2: BLAKE2bImplementation {
    public static let name = "bmi2-scalar"
    public static let requires: KernelFeatures = [.bmi2]
    @inline(__always)
    public static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ count: Int, _ lastLength: Int) {
        blake2bBlocksBMI2(state, data, count, lastLength)
    }
}

#endif
