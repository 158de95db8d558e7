// AES-CTR and AES-CBC decryption with VAES on 256-bit vectors: sixteen blocks per iteration, two per
// register (the wide tier of RampartAccelAESNI's eight-block kernels). The parallel modes only: CBC
// encryption and IGE are one chain per message, which wider registers cannot shorten.
//
// A `vaesenc` on a 256-bit register does the work of two `aesenc`, and on the CPUs this tier targets
// (Intel Ice Lake and later, AMD Zen 3 and later) it issues at the same rate, so the parallel modes
// run at up to twice the AES-NI rate: at most sixteen blocks are in flight, enough to cover the
// instruction latency at two issues per cycle.
//
// Compiled with the same flags as GCMVAES.swift; the caller checks the features (the registry). Entry points
// are @inline(never), run whole 16-block groups and return how many blocks they did. Input and output
// may be the same buffer; every block of a group is loaded before any is stored.

import Swift
import RampartAccelAESNI
import RampartKernelSupport

#if arch(x86_64)

extension X86AES {
    @inline(__always) static func vaesdec(_ s: W, _ k: W) -> W { unsafeBitCast(Builtin.int_x86_aesni_aesdec_256(b4(s), b4(k)), to: W.self) }
    @inline(__always) static func vaesdeclast(_ s: W, _ k: W) -> W { unsafeBitCast(Builtin.int_x86_aesni_aesdeclast_256(b4(s), b4(k)), to: W.self) }

    /// Eight pairs of blocks through the middle decryption rounds (the states hold the round-0 XOR).
    @inline(__always) static func decRounds16(_ s: inout (W, W, W, W, W, W, W, W), _ dk: UnsafeRawPointer, _ rounds: Int) {
        var r = 1
        while r < rounds {
            let k = broadcast(load(dk, 16 * r))
            s.0 = vaesdec(s.0, k); s.1 = vaesdec(s.1, k); s.2 = vaesdec(s.2, k); s.3 = vaesdec(s.3, k)
            s.4 = vaesdec(s.4, k); s.5 = vaesdec(s.5, k); s.6 = vaesdec(s.6, k); s.7 = vaesdec(s.7, k)
            r += 1
        }
    }

    /// CTR with a 128-bit big-endian counter (AES.CTR's): XORs keystream over whole 16-block groups of
    /// `blocks` and advances `counter` by the blocks done, which it returns. A group whose counters would
    /// carry out of the low 64 bits is left to the caller's 128-bit kernel (at most one group per 2^64
    /// blocks): the counter's value is public, so the branch leaks nothing.
    @inline(__always)
    static func vaesCTRBody(_ rk: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer,
                            _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) -> Int {
        let rev = reverseBytesMask, vrev = vreverseBytesMask
        let k0 = broadcast(load(rk, 0)), kl = broadcast(load(rk, 16 * rounds))
        // The counter as a native 128-bit value: lane 0 = low 64 bits, lane 1 = high 64 bits.
        var ctr = pshufb(load(counter, 0), rev)
        var i = 0
        while i + 16 <= blocks, ctr[0] <= UInt64.max - 16 {
            let c = pair(ctr, ctr &+ V(1, 0))
            @inline(__always) func at(_ n: UInt64) -> W { vpshufb(c &+ W(n, 0, n, 0), vrev) ^ k0 }
            var s = (vpshufb(c, vrev) ^ k0, at(2), at(4), at(6), at(8), at(10), at(12), at(14))
            ctr = ctr &+ V(16, 0)
            encRounds16(&s, rk, rounds)
            let o = 16 * i
            let x0 = wload(input, o), x1 = wload(input, o + 32), x2 = wload(input, o + 64), x3 = wload(input, o + 96)
            let x4 = wload(input, o + 128), x5 = wload(input, o + 160), x6 = wload(input, o + 192), x7 = wload(input, o + 224)
            wstore(vaesenclast(s.0, kl ^ x0), output, o); wstore(vaesenclast(s.1, kl ^ x1), output, o + 32)
            wstore(vaesenclast(s.2, kl ^ x2), output, o + 64); wstore(vaesenclast(s.3, kl ^ x3), output, o + 96)
            wstore(vaesenclast(s.4, kl ^ x4), output, o + 128); wstore(vaesenclast(s.5, kl ^ x5), output, o + 160)
            wstore(vaesenclast(s.6, kl ^ x6), output, o + 192); wstore(vaesenclast(s.7, kl ^ x7), output, o + 224)
            i += 16
        }
        store(pshufb(ctr, rev), counter, 0)
        return i
    }

    /// CBC decryption of whole 16-block groups of `blocks` with the decryption schedule `dk`; `iv` (16
    /// bytes) becomes the last ciphertext block done. Returns the blocks done.
    @inline(__always)
    static func vaesCBCDecryptBody(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                   _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) -> Int {
        let k0 = broadcast(load(dk, 0)), kl = broadcast(load(dk, 16 * rounds))
        var prev = load(iv, 0)
        var i = 0
        while i + 16 <= blocks {
            let o = 16 * i
            let c0 = wload(input, o), c1 = wload(input, o + 32), c2 = wload(input, o + 64), c3 = wload(input, o + 96)
            let c4 = wload(input, o + 128), c5 = wload(input, o + 160), c6 = wload(input, o + 192), c7 = wload(input, o + 224)
            // The blocks each pair is chained to: (c_{2j-1}, c_{2j}), the first pair's from `prev`.
            let p0 = pair(prev, low(c0))
            let p1 = wload(input, o + 16), p2 = wload(input, o + 48), p3 = wload(input, o + 80), p4 = wload(input, o + 112)
            let p5 = wload(input, o + 144), p6 = wload(input, o + 176), p7 = wload(input, o + 208)
            let next = high(c7)
            var s = (c0 ^ k0, c1 ^ k0, c2 ^ k0, c3 ^ k0, c4 ^ k0, c5 ^ k0, c6 ^ k0, c7 ^ k0)
            decRounds16(&s, dk, rounds)
            wstore(vaesdeclast(s.0, kl ^ p0), output, o); wstore(vaesdeclast(s.1, kl ^ p1), output, o + 32)
            wstore(vaesdeclast(s.2, kl ^ p2), output, o + 64); wstore(vaesdeclast(s.3, kl ^ p3), output, o + 96)
            wstore(vaesdeclast(s.4, kl ^ p4), output, o + 128); wstore(vaesdeclast(s.5, kl ^ p5), output, o + 160)
            wstore(vaesdeclast(s.6, kl ^ p6), output, o + 192); wstore(vaesdeclast(s.7, kl ^ p7), output, o + 224)
            prev = next
            i += 16
        }
        store(prev, iv, 0)
        return i
    }
}

/// CTR with a 128-bit big-endian counter (AES.CTR's): XORs keystream over whole 16-block groups of
/// `blocks` and advances `counter` by the blocks done, which it returns (a group whose counters would
/// carry out of the low 64 bits is left to the caller's 128-bit kernel).
@inline(never)
public func vaesCTR(_ rk: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer,
                    _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) -> Int {
    X86AES.vaesCTRBody(rk, rounds, counter, input, output, blocks)
}

/// CBC decryption of whole 16-block groups of `blocks` with the decryption schedule `dk`; `iv` (16
/// bytes) becomes the last ciphertext block done. Returns the blocks done.
@inline(never)
public func vaesCBCDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                           _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) -> Int {
    X86AES.vaesCBCDecryptBody(dk, rounds, iv, input, output, blocks)
}

/// AES-NI with VAES for the parallel modes: CTR and CBC decryption run whole 16-block groups on 256-bit
/// vectors (messages of 256 bytes and more) and the rest on AES-NI's eight-block kernels; everything
/// else is ``AESNI``. The same `.aesni` schedule (AES-NI's key expansion).
public enum AESNIVAES: AESImplementation {
    public static var name: String { "aes-ni+vaes" }
    public static var requires: KernelFeatures { [.aes, .ssse3, .sse41, .avx2, .vaes] }
    public static var layout: AESScheduleLayout { .aesni }
    public static var scheduleBytes: Int { AESNI.scheduleBytes }

    public static func expandKey(_ key: UnsafeRawPointer, _ keyLength: Int, _ schedule: UnsafeMutableRawPointer) -> Int {
        AESNI.expandKey(key, keyLength, schedule)
    }
    public static func encryptECB(_ schedule: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                                  _ dst: UnsafeMutableRawPointer, _ n: Int) {
        AESNI.encryptECB(schedule, rounds, src, dst, n)
    }
    public static func decryptECB(_ schedule: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                                  _ dst: UnsafeMutableRawPointer, _ n: Int) {
        AESNI.decryptECB(schedule, rounds, src, dst, n)
    }
    public static func ctr(_ schedule: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        let done = n >= 16 ? vaesCTR(schedule, rounds, counter, src, dst, n) : 0
        if done < n { aesniCTR(schedule, rounds, counter, src + 16 * done, dst + 16 * done, n - done) }
    }
    public static func cbcEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        AESNI.cbcEncrypt(schedule, rounds, iv, src, dst, n)
    }
    public static func cbcDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        let dk = schedule + AESNI.decryptionOffset
        let done = n >= 16 ? vaesCBCDecrypt(dk, rounds, iv, src, dst, n) : 0
        if done < n { aesniCBCDecrypt(dk, rounds, iv, src + 16 * done, dst + 16 * done, n - done) }
    }
    public static func igeEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        AESNI.igeEncrypt(schedule, rounds, iv, src, dst, n)
    }
    public static func igeDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        AESNI.igeDecrypt(schedule, rounds, iv, src, dst, n)
    }
}

#endif
