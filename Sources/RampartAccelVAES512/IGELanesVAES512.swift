// AES-256-IGE encryption of sixteen independent messages at once (multi-buffer) with VAES on 512-bit
// registers: four messages per register, one 128-bit lane each, every lane under its own key. For
// processors with full-width 512-bit units (AMD Zen 5), where one 512-bit `vaesenc` costs what one
// 128-bit `aesenc` does. MTProto's batch encryption feeds it (Rampart's MultiBuffer).
//
// Compiled with -parse-stdlib and +avx +avx2 +aes +vaes +avx512f +avx512vl (RampartAccelVAES512); the
// caller must have checked for VAES and AVX-512VL (the registry). The keys are expanded by
// RampartAccelAESNI (four at a time). Each call first interleaves the sixteen key
// schedules into `packed` (round r of group g = the round-r keys of messages 4g ..< 4g + 4, one
// 64-byte vector), which the caller wipes. Then every block step loads one block of each message
// (four 128-bit loads per register), runs the four registers' rounds interleaved, and stores the
// sixteen ciphertext blocks in place. IGE: c_i = E(p_i ^ c_{i-1}) ^ p_{i-1}, the final XOR folded into
// the last round's key. No branch and no memory address depends on keys or data.

import Swift
import RampartAccelAESNI
import RampartKernelSupport

#if arch(x86_64)

private typealias Z = SIMD8<UInt64>
private typealias Q = SIMD2<UInt64>

@_transparent private func b8(_ v: Z) -> Builtin.Vec8xInt64 { unsafeBitCast(v, to: Builtin.Vec8xInt64.self) }
@_transparent private func aesenc(_ s: Z, _ k: Z) -> Z { unsafeBitCast(Builtin.int_x86_aesni_aesenc_512(b8(s), b8(k)), to: Z.self) }
@_transparent private func aesenclast(_ s: Z, _ k: Z) -> Z {
    unsafeBitCast(Builtin.int_x86_aesni_aesenclast_512(b8(s), b8(k)), to: Z.self)
}
@_transparent private func load(_ p: UnsafeRawPointer, _ offset: Int) -> Z { p.loadUnaligned(fromByteOffset: offset, as: Z.self) }
@_transparent private func load16(_ p: UnsafeRawPointer) -> Q { p.loadUnaligned(as: Q.self) }
/// Four 16-byte blocks, one from each pointer, as one register (lane j from `p[j]`).
@_transparent private func gather(_ p0: UnsafeRawPointer, _ p1: UnsafeRawPointer, _ p2: UnsafeRawPointer, _ p3: UnsafeRawPointer) -> Z {
    Z(lowHalf: SIMD4(lowHalf: load16(p0), highHalf: load16(p1)), highHalf: SIMD4(lowHalf: load16(p2), highHalf: load16(p3)))
}
/// The four 16-byte lanes of `v` to four pointers.
@_transparent private func scatter(_ v: Z, _ p0: UnsafeMutableRawPointer, _ p1: UnsafeMutableRawPointer,
                                   _ p2: UnsafeMutableRawPointer, _ p3: UnsafeMutableRawPointer) {
    p0.storeBytes(of: v.lowHalf.lowHalf, as: Q.self); p1.storeBytes(of: v.lowHalf.highHalf, as: Q.self)
    p2.storeBytes(of: v.highHalf.lowHalf, as: Q.self); p3.storeBytes(of: v.highHalf.highHalf, as: Q.self)
}

/// Encrypts `blocks` blocks of each of sixteen lanes in place: lane l's expanded encryption key is at
/// `schedules[l]` (`rounds` + 1 round keys), its 32-byte IV (c_0 then p_0) at `ivs[l]`, replaced by
/// the last ciphertext and plaintext blocks, its blocks at `data[l]`, `strides[l]` bytes apart (0 for
/// an idle lane on a scratch block). `packed` is 64 × (`rounds` + 1) × 4 bytes of scratch (64-byte
/// aligned) for the interleaved schedules.
@inline(never)
public func vaesIGEEncrypt16(_ schedules: UnsafePointer<UnsafeRawPointer>, _ rounds: Int, _ ivs: UnsafePointer<UnsafeMutableRawPointer>,
                             _ data: UnsafePointer<UnsafeMutableRawPointer>, _ strides: UnsafePointer<Int>, _ blocks: Int,
                             _ packed: UnsafeMutableRawPointer) {
    guard blocks > 0 else { return }
    // Group g's round r at packed + 64 (4r + g).
    var r = 0
    while r <= rounds {
        var l = 0
        while l < 16 {
            packed.storeBytes(of: load16(schedules[l] + 16 &* r), toByteOffset: 64 &* (4 &* r &+ (l &>> 2)) &+ 16 &* (l & 3), as: Q.self)
            l &+= 1
        }
        r &+= 1
    }
    @_transparent func key(_ r: Int, _ g: Int) -> Z { load(packed, 64 &* (4 &* r &+ g)) }
    var c0 = gather(ivs[0], ivs[1], ivs[2], ivs[3]), c1 = gather(ivs[4], ivs[5], ivs[6], ivs[7])
    var c2 = gather(ivs[8], ivs[9], ivs[10], ivs[11]), c3 = gather(ivs[12], ivs[13], ivs[14], ivs[15])
    var q0 = gather(ivs[0] + 16, ivs[1] + 16, ivs[2] + 16, ivs[3] + 16), q1 = gather(ivs[4] + 16, ivs[5] + 16, ivs[6] + 16, ivs[7] + 16)
    var q2 = gather(ivs[8] + 16, ivs[9] + 16, ivs[10] + 16, ivs[11] + 16), q3 = gather(ivs[12] + 16, ivs[13] + 16, ivs[14] + 16, ivs[15] + 16)
    var b = 0
    while b < blocks {
        @_transparent func at(_ l: Int) -> UnsafeMutableRawPointer { data[l] + b &* strides[l] }
        let p0 = gather(at(0), at(1), at(2), at(3)), p1 = gather(at(4), at(5), at(6), at(7))
        let p2 = gather(at(8), at(9), at(10), at(11)), p3 = gather(at(12), at(13), at(14), at(15))
        var s0 = p0 ^ c0 ^ key(0, 0), s1 = p1 ^ c1 ^ key(0, 1), s2 = p2 ^ c2 ^ key(0, 2), s3 = p3 ^ c3 ^ key(0, 3)
        var k = 1
        while k < rounds {
            s0 = aesenc(s0, key(k, 0)); s1 = aesenc(s1, key(k, 1)); s2 = aesenc(s2, key(k, 2)); s3 = aesenc(s3, key(k, 3))
            k &+= 1
        }
        c0 = aesenclast(s0, key(rounds, 0) ^ q0); c1 = aesenclast(s1, key(rounds, 1) ^ q1)
        c2 = aesenclast(s2, key(rounds, 2) ^ q2); c3 = aesenclast(s3, key(rounds, 3) ^ q3)
        scatter(c0, at(0), at(1), at(2), at(3)); scatter(c1, at(4), at(5), at(6), at(7))
        scatter(c2, at(8), at(9), at(10), at(11)); scatter(c3, at(12), at(13), at(14), at(15))
        q0 = p0; q1 = p1; q2 = p2; q3 = p3
        b &+= 1
    }
    scatter(c0, ivs[0], ivs[1], ivs[2], ivs[3]); scatter(c1, ivs[4], ivs[5], ivs[6], ivs[7])
    scatter(c2, ivs[8], ivs[9], ivs[10], ivs[11]); scatter(c3, ivs[12], ivs[13], ivs[14], ivs[15])
    scatter(q0, ivs[0] + 16, ivs[1] + 16, ivs[2] + 16, ivs[3] + 16); scatter(q1, ivs[4] + 16, ivs[5] + 16, ivs[6] + 16, ivs[7] + 16)
    scatter(q2, ivs[8] + 16, ivs[9] + 16, ivs[10] + 16, ivs[11] + 16); scatter(q3, ivs[12] + 16, ivs[13] + 16, ivs[14] + 16, ivs[15] + 16)
}

/// Sixteen IGE messages at once in 512-bit VAES registers, on AES-NI's AES-256 encryption schedules
/// (256 bytes apart). Listed only on processors with full-width 512-bit units (`CPU.fullWidthAVX512`):
/// 32 messages in eight registers measured slower (9.5 against 10.5 GB/s).
public enum IGELanesVAES512x16: IGELanesImplementation {
    public static var name: String { "vaes512-x16" }
    public static var requires: KernelFeatures { [.aes, .ssse3, .sse41, .avx2, .vaes, .avx512vl] }
    public static var lanes: Int { 16 }
    public static var scheduleBytes: Int { 256 }
    /// The interleaved schedules: 64 bytes × 15 round keys × 4 groups.
    public static var scratchBytes: Int { 64 * 15 * 4 }
    public static func expandKeys256(_ keys: UnsafePointer<UnsafeRawPointer>, _ count: Int, _ schedules: UnsafeMutableRawPointer) -> Int {
        aesniExpandKeys256Encrypt(keys, count, schedules, scheduleBytes)
    }
    public static func encrypt(_ schedules: UnsafePointer<UnsafeRawPointer>, _ rounds: Int, _ ivs: UnsafePointer<UnsafeMutableRawPointer>,
                               _ data: UnsafePointer<UnsafeMutableRawPointer>, _ strides: UnsafePointer<Int>, _ n: Int,
                               _ scratch: UnsafeMutableRawPointer) {
        vaesIGEEncrypt16(schedules, rounds, ivs, data, strides, n, scratch)
    }
}

#endif
