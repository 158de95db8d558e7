// AES with the x86_64 AES-NI instructions: key expansion, ECB, CTR, CBC and IGE. The one copy of the
// bodies, as `@_alwaysEmitIntoClient` static members of `X86AES`: this module (+aes +pclmul +ssse3
// +sse4.1) compiles them into its entry points (AESNI.swift, GHASHCLMUL.swift), and the higher AES
// tiers that import it (RampartAccelAESAVX with AVX's VEX encoding, RampartAccelVAES, RampartAccelAESSHA)
// compile them, and the helpers, with their own target features into their own uniquely named entry
// points. They live here rather than in RampartKernelSupport because a module also emits its
// always-emit-into-client functions itself in non-WMO (debug) builds, and RampartKernelSupport, with no
// CPU features, cannot select the AES and PCLMULQDQ instructions; every x86 AES tier includes this
// module's feature set.
//
// Round keys are 16-byte values in the byte order of FIPS-197 (what aesenc expects); a schedule holds
// `rounds + 1` of them. Input and output may be the same buffer (in place), but must not otherwise
// overlap.
//
// Sequential modes (CBC encryption, IGE both ways) fold the chaining XORs into the key of the last
// round (aesenclast/aesdeclast end with an XOR of their key operand), so the loop-carried chain is
// exactly `rounds` AES instructions per block, the physical bound.

import Swift
import RampartKernelSupport

#if arch(x86_64)

/// The AES-NI and PCLMULQDQ bodies (this file and X86GHASH.swift), as static members so that their
/// short names stay out of the modules that import this one.
public enum X86AES {
    /// One 128-bit block or round key.
    public typealias V = SIMD2<UInt64>
}

extension X86AES {
    @_alwaysEmitIntoClient @inline(__always)
    public static func bi(_ v: V) -> Builtin.Vec2xInt64 { unsafeBitCast(v, to: Builtin.Vec2xInt64.self) }
    @_alwaysEmitIntoClient @inline(__always)
    public static func bv(_ v: Builtin.Vec2xInt64) -> V { unsafeBitCast(v, to: V.self) }

    @_alwaysEmitIntoClient @inline(__always)
    public static func aesenc(_ s: V, _ k: V) -> V { bv(Builtin.int_x86_aesni_aesenc(bi(s), bi(k))) }
    @_alwaysEmitIntoClient @inline(__always)
    public static func aesenclast(_ s: V, _ k: V) -> V { bv(Builtin.int_x86_aesni_aesenclast(bi(s), bi(k))) }
    @_alwaysEmitIntoClient @inline(__always)
    public static func aesdec(_ s: V, _ k: V) -> V { bv(Builtin.int_x86_aesni_aesdec(bi(s), bi(k))) }
    @_alwaysEmitIntoClient @inline(__always)
    public static func aesdeclast(_ s: V, _ k: V) -> V { bv(Builtin.int_x86_aesni_aesdeclast(bi(s), bi(k))) }
    @_alwaysEmitIntoClient @inline(__always)
    public static func aesimc(_ s: V) -> V { bv(Builtin.int_x86_aesni_aesimc(bi(s))) }

    /// `pshufb`: byte `i` of the result is byte `mask[i]` of `v`.
    @_alwaysEmitIntoClient @inline(__always)
    public static func pshufb(_ v: V, _ mask: V) -> V {
        let r = Builtin.int_x86_ssse3_pshuf_b_128(
            unsafeBitCast(v, to: Builtin.Vec16xInt8.self), unsafeBitCast(mask, to: Builtin.Vec16xInt8.self))
        return unsafeBitCast(r, to: V.self)
    }

    /// Reverses the 16 bytes of a vector. A computed constant, not a stored `let`: a global is
    /// initialised lazily and every use inside a loop would call `swift_once` (seen in the disassembly).
    @_alwaysEmitIntoClient
    public static var reverseBytesMask: V { @inline(__always) get { V(0x0809_0a0b_0c0d_0e0f, 0x0001_0203_0405_0607) } }

    @_alwaysEmitIntoClient @inline(__always)
    public static func load(_ p: UnsafeRawPointer, _ offset: Int) -> V {
        p.loadUnaligned(fromByteOffset: offset, as: V.self)
    }
    @_alwaysEmitIntoClient @inline(__always)
    public static func store(_ v: V, _ p: UnsafeMutableRawPointer, _ offset: Int) {
        p.storeBytes(of: v, toByteOffset: offset, as: V.self)
    }

    /// SubWord (the S-box on each byte of a 32-bit word) through aeskeygenassist: with rcon 0 its
    /// lowest 32-bit lane is SubWord of lane 1 of the input.
    @_alwaysEmitIntoClient @inline(__always)
    public static func subWord(_ w: UInt32) -> UInt32 {
        let v = SIMD4<UInt32>(0, w, 0, 0)
        let r = Builtin.int_x86_aesni_aeskeygenassist(unsafeBitCast(v, to: Builtin.Vec2xInt64.self), UInt8(0)._value)
        return unsafeBitCast(r, to: SIMD4<UInt32>.self)[0]
    }

    // MARK: - Key expansion

    /// Expands a 16-, 24- or 32-byte key into `rounds + 1` encryption round keys at `enc` and the
    /// matching equivalent-inverse-cipher keys (for aesdec) at `dec`; each area needs 16 * (rounds + 1)
    /// bytes (240 for AES-256). Returns the number of rounds (10, 12, 14), or 0 for another key length.
    @_alwaysEmitIntoClient @inline(__always)
    public static func expandKey(_ key: UnsafeRawPointer, _ keyLength: Int,
                                 _ enc: UnsafeMutableRawPointer, _ dec: UnsafeMutableRawPointer) -> Int {
        let nk = keyLength / 4
        let rounds = aesRounds(keyLength: keyLength)
        guard rounds > 0 else { return 0 }
        if keyLength == 32 {
            expandKey256(key, enc)
        } else {
            aesExpandKeyWords(enc.assumingMemoryBound(to: UInt32.self), key: key, nk: nk, rounds: rounds, subWord: subWord)
        }
        store(load(enc, 16 * rounds), dec, 0)
        for r in 1..<rounds {
            store(aesimc(load(enc, 16 * (rounds - r))), dec, 16 * r)
        }
        store(load(enc, 0), dec, 16 * rounds)
        return rounds
    }

    /// Four AES-256 encryption schedules at once: the key at `keys[i]` expands to 240 bytes at
    /// `enc + i * stride`, the same bytes as ``expandKey256(_:_:)``. The four recurrences run in
    /// lockstep, so their dependent steps overlap: on Zen 5 (2026-11-29) 11 ns a key against 19–22
    /// alone (a stand-alone loop over 64 keys). The keys are secret; the code is straight-line.
    @_alwaysEmitIntoClient @inline(__always)
    public static func expandKeys256Encrypt4(_ keys: UnsafePointer<UnsafeRawPointer>, _ enc: UnsafeMutableRawPointer, _ stride: Int) {
        let e0 = enc, e1 = enc + stride, e2 = enc + 2 &* stride, e3 = enc + 3 &* stride
        var a0 = load(keys[0], 0), a1 = load(keys[0], 16), b0 = load(keys[1], 0), b1 = load(keys[1], 16)
        var c0 = load(keys[2], 0), c1 = load(keys[2], 16), d0 = load(keys[3], 0), d1 = load(keys[3], 16)
        store(a0, e0, 0); store(a1, e0, 16); store(b0, e1, 0); store(b1, e1, 16)
        store(c0, e2, 0); store(c1, e2, 16); store(d0, e3, 0); store(d1, e3, 16)
        key256Steps { assist, offset, last in
            a0 = key256Even(a0, assist(a1)); b0 = key256Even(b0, assist(b1))
            c0 = key256Even(c0, assist(c1)); d0 = key256Even(d0, assist(d1))
            store(a0, e0, offset); store(b0, e1, offset); store(c0, e2, offset); store(d0, e3, offset)
            if last { return }
            a1 = key256Odd(a1, a0); b1 = key256Odd(b1, b0); c1 = key256Odd(c1, c0); d1 = key256Odd(d1, d0)
            store(a1, e0, offset + 16); store(b1, e1, offset + 16); store(c1, e2, offset + 16); store(d1, e3, offset + 16)
        }
    }

    /// Runs the AES-256 key recurrence's seven steps: step j computes round keys 2j + 2 and 2j + 3 (at
    /// byte `offset` and `offset + 16`; the last step, round key 14, has no odd half). `assist` is
    /// aeskeygenassist with the step's round constant, which the instruction takes as an immediate:
    /// one closure per constant, all inlined.
    @_alwaysEmitIntoClient @inline(__always)
    public static func key256Steps(_ step: (_ assist: (V) -> V, _ offset: Int, _ last: Bool) -> Void) {
        step({ bv(Builtin.int_x86_aesni_aeskeygenassist(bi($0), UInt8(0x01)._value)) }, 32, false)
        step({ bv(Builtin.int_x86_aesni_aeskeygenassist(bi($0), UInt8(0x02)._value)) }, 64, false)
        step({ bv(Builtin.int_x86_aesni_aeskeygenassist(bi($0), UInt8(0x04)._value)) }, 96, false)
        step({ bv(Builtin.int_x86_aesni_aeskeygenassist(bi($0), UInt8(0x08)._value)) }, 128, false)
        step({ bv(Builtin.int_x86_aesni_aeskeygenassist(bi($0), UInt8(0x10)._value)) }, 160, false)
        step({ bv(Builtin.int_x86_aesni_aeskeygenassist(bi($0), UInt8(0x20)._value)) }, 192, false)
        step({ bv(Builtin.int_x86_aesni_aeskeygenassist(bi($0), UInt8(0x40)._value)) }, 224, true)
    }

    /// x ^ (x << 32) ^ (x << 64) ^ (x << 96): the running XOR of the previous round key's words.
    @_alwaysEmitIntoClient @inline(__always)
    public static func key256PrefixXor(_ x: V) -> V {
        typealias W = SIMD4<UInt32>
        let a = unsafeBitCast(x, to: W.self)
        let s1 = W(0, a[0], a[1], a[2]), s2 = W(0, 0, a[0], a[1]), s3 = W(0, 0, 0, a[0])
        return unsafeBitCast(a ^ s1 ^ s2 ^ s3, to: V.self)
    }

    /// Even AES-256 round key: RotWord(SubWord(last word of the odd key)) ^ rcon (lane 3 of `assist`,
    /// aeskeygenassist of that key), broadcast, into the running XOR of the previous even key.
    @_alwaysEmitIntoClient @inline(__always)
    public static func key256Even(_ prev: V, _ assist: V) -> V {
        let t = unsafeBitCast(assist, to: SIMD4<UInt32>.self)[3]
        return key256PrefixXor(prev) ^ unsafeBitCast(SIMD4<UInt32>(repeating: t), to: V.self)
    }

    /// Odd AES-256 round key: SubWord(last word of the new even key), broadcast, into the running XOR
    /// of the previous odd key.
    @_alwaysEmitIntoClient @inline(__always)
    public static func key256Odd(_ prev: V, _ evenKey: V) -> V {
        let a = bv(Builtin.int_x86_aesni_aeskeygenassist(bi(evenKey), UInt8(0)._value))
        let t = unsafeBitCast(a, to: SIMD4<UInt32>.self)[2]
        return key256PrefixXor(prev) ^ unsafeBitCast(SIMD4<UInt32>(repeating: t), to: V.self)
    }

    /// The AES-256 encryption schedule (15 round keys) at `enc`, two round keys per aeskeygenassist
    /// pair (the FIPS-197 recurrence on whole 128-bit vectors, as in Intel's AES-NI white paper)
    /// instead of word by word: about a quarter of the dependent steps. The key is secret; nothing
    /// branches on it.
    @_alwaysEmitIntoClient @inline(__always)
    public static func expandKey256(_ key: UnsafeRawPointer, _ enc: UnsafeMutableRawPointer) {
        var k0 = load(key, 0), k1 = load(key, 16)
        store(k0, enc, 0)
        store(k1, enc, 16)
        key256Steps { assist, offset, last in
            k0 = key256Even(k0, assist(k1))
            store(k0, enc, offset)
            if last { return }
            k1 = key256Odd(k1, k0)
            store(k1, enc, offset + 16)
        }
    }

    // MARK: - One block and eight blocks

    @_alwaysEmitIntoClient @inline(__always)
    public static func encrypt1(_ x: V, _ rk: UnsafeRawPointer, _ rounds: Int) -> V {
        var s = x ^ load(rk, 0)
        var r = 1
        while r < rounds { s = aesenc(s, load(rk, 16 * r)); r += 1 }
        return aesenclast(s, load(rk, 16 * rounds))
    }

    @_alwaysEmitIntoClient @inline(__always)
    public static func decrypt1(_ x: V, _ dk: UnsafeRawPointer, _ rounds: Int) -> V {
        var s = x ^ load(dk, 0)
        var r = 1
        while r < rounds { s = aesdec(s, load(dk, 16 * r)); r += 1 }
        return aesdeclast(s, load(dk, 16 * rounds))
    }

    /// Eight independent blocks through the middle rounds (the states already hold the round-0 XOR).
    @_alwaysEmitIntoClient @inline(__always)
    public static func encRounds8(_ s0: inout V, _ s1: inout V, _ s2: inout V, _ s3: inout V,
                                  _ s4: inout V, _ s5: inout V, _ s6: inout V, _ s7: inout V,
                                  _ rk: UnsafeRawPointer, _ rounds: Int) {
        var r = 1
        while r < rounds {
            let k = load(rk, 16 * r)
            s0 = aesenc(s0, k); s1 = aesenc(s1, k); s2 = aesenc(s2, k); s3 = aesenc(s3, k)
            s4 = aesenc(s4, k); s5 = aesenc(s5, k); s6 = aesenc(s6, k); s7 = aesenc(s7, k)
            r += 1
        }
    }

    @_alwaysEmitIntoClient @inline(__always)
    public static func decRounds8(_ s0: inout V, _ s1: inout V, _ s2: inout V, _ s3: inout V,
                                  _ s4: inout V, _ s5: inout V, _ s6: inout V, _ s7: inout V,
                                  _ dk: UnsafeRawPointer, _ rounds: Int) {
        var r = 1
        while r < rounds {
            let k = load(dk, 16 * r)
            s0 = aesdec(s0, k); s1 = aesdec(s1, k); s2 = aesdec(s2, k); s3 = aesdec(s3, k)
            s4 = aesdec(s4, k); s5 = aesdec(s5, k); s6 = aesdec(s6, k); s7 = aesdec(s7, k)
            r += 1
        }
    }

    // MARK: - ECB

    /// Encrypts `blocks` 16-byte blocks (ECB) with the encryption schedule `rk`.
    @_alwaysEmitIntoClient @inline(__always)
    public static func encryptECB(_ rk: UnsafeRawPointer, _ rounds: Int,
                                  _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
        var i = 0
        let k0 = load(rk, 0), kl = load(rk, 16 * rounds)
        while i + 8 <= blocks {
            let o = 16 * i
            var s0 = load(input, o) ^ k0, s1 = load(input, o + 16) ^ k0
            var s2 = load(input, o + 32) ^ k0, s3 = load(input, o + 48) ^ k0
            var s4 = load(input, o + 64) ^ k0, s5 = load(input, o + 80) ^ k0
            var s6 = load(input, o + 96) ^ k0, s7 = load(input, o + 112) ^ k0
            encRounds8(&s0, &s1, &s2, &s3, &s4, &s5, &s6, &s7, rk, rounds)
            store(aesenclast(s0, kl), output, o); store(aesenclast(s1, kl), output, o + 16)
            store(aesenclast(s2, kl), output, o + 32); store(aesenclast(s3, kl), output, o + 48)
            store(aesenclast(s4, kl), output, o + 64); store(aesenclast(s5, kl), output, o + 80)
            store(aesenclast(s6, kl), output, o + 96); store(aesenclast(s7, kl), output, o + 112)
            i += 8
        }
        while i < blocks {
            store(encrypt1(load(input, 16 * i), rk, rounds), output, 16 * i)
            i += 1
        }
    }

    /// Decrypts `blocks` 16-byte blocks (ECB) with the decryption schedule `dk`.
    @_alwaysEmitIntoClient @inline(__always)
    public static func decryptECB(_ dk: UnsafeRawPointer, _ rounds: Int,
                                  _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
        var i = 0
        let k0 = load(dk, 0), kl = load(dk, 16 * rounds)
        while i + 8 <= blocks {
            let o = 16 * i
            var s0 = load(input, o) ^ k0, s1 = load(input, o + 16) ^ k0
            var s2 = load(input, o + 32) ^ k0, s3 = load(input, o + 48) ^ k0
            var s4 = load(input, o + 64) ^ k0, s5 = load(input, o + 80) ^ k0
            var s6 = load(input, o + 96) ^ k0, s7 = load(input, o + 112) ^ k0
            decRounds8(&s0, &s1, &s2, &s3, &s4, &s5, &s6, &s7, dk, rounds)
            store(aesdeclast(s0, kl), output, o); store(aesdeclast(s1, kl), output, o + 16)
            store(aesdeclast(s2, kl), output, o + 32); store(aesdeclast(s3, kl), output, o + 48)
            store(aesdeclast(s4, kl), output, o + 64); store(aesdeclast(s5, kl), output, o + 80)
            store(aesdeclast(s6, kl), output, o + 96); store(aesdeclast(s7, kl), output, o + 112)
            i += 8
        }
        while i < blocks {
            store(decrypt1(load(input, 16 * i), dk, rounds), output, 16 * i)
            i += 1
        }
    }

    // MARK: - CTR (128-bit big-endian counter)

    /// XORs `blocks` blocks of CTR keystream into `input`, writing `output`. `counter` points at the
    /// 16-byte big-endian counter block; it is advanced by `blocks` (wrapping modulo 2^128).
    @_alwaysEmitIntoClient @inline(__always)
    public static func ctr(_ rk: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer,
                           _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
        // The counter as a native 128-bit value: lane 0 = low 64 bits, lane 1 = high 64 bits, which is
        // exactly the byte reversal of the big-endian block.
        var ctr = pshufb(load(counter, 0), reverseBytesMask)
        let k0 = load(rk, 0), kl = load(rk, 16 * rounds)
        let rev = reverseBytesMask
        var i = 0
        while i + 8 <= blocks {
            var s0, s1, s2, s3, s4, s5, s6, s7: V
            if ctr[0] <= UInt64.max - 8 {
                // No carry out of the low half inside this batch: plain lane additions.
                s0 = pshufb(ctr, rev) ^ k0
                s1 = pshufb(ctr &+ V(1, 0), rev) ^ k0
                s2 = pshufb(ctr &+ V(2, 0), rev) ^ k0
                s3 = pshufb(ctr &+ V(3, 0), rev) ^ k0
                s4 = pshufb(ctr &+ V(4, 0), rev) ^ k0
                s5 = pshufb(ctr &+ V(5, 0), rev) ^ k0
                s6 = pshufb(ctr &+ V(6, 0), rev) ^ k0
                s7 = pshufb(ctr &+ V(7, 0), rev) ^ k0
                ctr = ctr &+ V(8, 0)
            } else {
                @inline(__always) func next() -> V {
                    let b = pshufb(ctr, rev) ^ k0
                    let lo = ctr[0] &+ 1
                    ctr = V(lo, lo == 0 ? ctr[1] &+ 1 : ctr[1])
                    return b
                }
                s0 = next(); s1 = next(); s2 = next(); s3 = next()
                s4 = next(); s5 = next(); s6 = next(); s7 = next()
            }
            encRounds8(&s0, &s1, &s2, &s3, &s4, &s5, &s6, &s7, rk, rounds)
            let o = 16 * i
            store(aesenclast(s0, kl ^ load(input, o)), output, o)
            store(aesenclast(s1, kl ^ load(input, o + 16)), output, o + 16)
            store(aesenclast(s2, kl ^ load(input, o + 32)), output, o + 32)
            store(aesenclast(s3, kl ^ load(input, o + 48)), output, o + 48)
            store(aesenclast(s4, kl ^ load(input, o + 64)), output, o + 64)
            store(aesenclast(s5, kl ^ load(input, o + 80)), output, o + 80)
            store(aesenclast(s6, kl ^ load(input, o + 96)), output, o + 96)
            store(aesenclast(s7, kl ^ load(input, o + 112)), output, o + 112)
            i += 8
        }
        while i < blocks {
            let ks = encrypt1(pshufb(ctr, rev), rk, rounds)
            store(ks ^ load(input, 16 * i), output, 16 * i)
            let lo = ctr[0] &+ 1
            ctr = V(lo, lo == 0 ? ctr[1] &+ 1 : ctr[1])
            i += 1
        }
        store(pshufb(ctr, rev), counter, 0)
    }

    // MARK: - CBC

    /// CBC encryption of `blocks` blocks; `iv` (16 bytes) is replaced by the last ciphertext block.
    @_alwaysEmitIntoClient @inline(__always)
    public static func cbcEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
        guard blocks > 0 else { return }
        let k0 = load(rk, 0), kl = load(rk, 16 * rounds)
        // x: the state entering round 1, p_i ^ c_{i-1} ^ k0.
        var x = load(input, 0) ^ load(iv, 0) ^ k0
        var i = 0
        while i + 1 < blocks {
            var s = x
            var r = 1
            while r < rounds { s = aesenc(s, load(rk, 16 * r)); r += 1 }
            // aesenclast(s, kl ^ w) = c_i ^ w with w = p_{i+1} ^ k0: the next state directly.
            let w = load(input, 16 * (i + 1)) ^ k0
            x = aesenclast(s, kl ^ w)
            store(x ^ w, output, 16 * i)
            i += 1
        }
        var s = x
        var r = 1
        while r < rounds { s = aesenc(s, load(rk, 16 * r)); r += 1 }
        let c = aesenclast(s, kl)
        store(c, output, 16 * i)
        store(c, iv, 0)
    }

    /// CBC decryption of `blocks` blocks with the decryption schedule; `iv` becomes the last
    /// ciphertext block.
    @_alwaysEmitIntoClient @inline(__always)
    public static func cbcDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
        let k0 = load(dk, 0), kl = load(dk, 16 * rounds)
        var prev = load(iv, 0)
        var i = 0
        while i + 8 <= blocks {
            let o = 16 * i
            let c0 = load(input, o), c1 = load(input, o + 16), c2 = load(input, o + 32), c3 = load(input, o + 48)
            let c4 = load(input, o + 64), c5 = load(input, o + 80), c6 = load(input, o + 96), c7 = load(input, o + 112)
            var s0 = c0 ^ k0, s1 = c1 ^ k0, s2 = c2 ^ k0, s3 = c3 ^ k0
            var s4 = c4 ^ k0, s5 = c5 ^ k0, s6 = c6 ^ k0, s7 = c7 ^ k0
            decRounds8(&s0, &s1, &s2, &s3, &s4, &s5, &s6, &s7, dk, rounds)
            store(aesdeclast(s0, kl ^ prev), output, o)
            store(aesdeclast(s1, kl ^ c0), output, o + 16)
            store(aesdeclast(s2, kl ^ c1), output, o + 32)
            store(aesdeclast(s3, kl ^ c2), output, o + 48)
            store(aesdeclast(s4, kl ^ c3), output, o + 64)
            store(aesdeclast(s5, kl ^ c4), output, o + 80)
            store(aesdeclast(s6, kl ^ c5), output, o + 96)
            store(aesdeclast(s7, kl ^ c6), output, o + 112)
            prev = c7
            i += 8
        }
        while i < blocks {
            let c = load(input, 16 * i)
            var s = c ^ k0
            var r = 1
            while r < rounds { s = aesdec(s, load(dk, 16 * r)); r += 1 }
            store(aesdeclast(s, kl ^ prev), output, 16 * i)
            prev = c
            i += 1
        }
        store(prev, iv, 0)
    }

    // MARK: - IGE

    /// IGE encryption, c_i = E(p_i ^ c_{i-1}) ^ p_{i-1}. `iv` is 32 bytes: c_0 then p_0 (MTProto's
    /// layout); it is replaced by (last ciphertext block, last plaintext block).
    @_alwaysEmitIntoClient @inline(__always)
    public static func igeEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
        guard blocks > 0 else { return }
        let k0 = load(rk, 0), kl = load(rk, 16 * rounds)
        var pPrev = load(iv, 16)
        var p = load(input, 0)
        var x = p ^ load(iv, 0) ^ k0
        var i = 0
        while i + 1 < blocks {
            var s = x
            var r = 1
            while r < rounds { s = aesenc(s, load(rk, 16 * r)); r += 1 }
            // c_i = aesenclast(s, kl ^ pPrev); the next state is c_i ^ p_{i+1} ^ k0.
            let pNext = load(input, 16 * (i + 1))
            let w = pNext ^ k0
            x = aesenclast(s, kl ^ pPrev ^ w)
            store(x ^ w, output, 16 * i)
            pPrev = p
            p = pNext
            i += 1
        }
        var s = x
        var r = 1
        while r < rounds { s = aesenc(s, load(rk, 16 * r)); r += 1 }
        let c = aesenclast(s, kl ^ pPrev)
        store(c, output, 16 * i)
        store(c, iv, 0)
        store(p, iv, 16)
    }

    /// IGE decryption, p_i = D(c_i ^ p_{i-1}) ^ c_{i-1}, with the decryption schedule. `iv` as for
    /// encryption (c_0 then p_0); it is replaced by (last ciphertext block, last plaintext block).
    @_alwaysEmitIntoClient @inline(__always)
    public static func igeDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
        guard blocks > 0 else { return }
        let k0 = load(dk, 0), kl = load(dk, 16 * rounds)
        var cPrev = load(iv, 0)
        var c = load(input, 0)
        var x = c ^ load(iv, 16) ^ k0
        var i = 0
        while i + 1 < blocks {
            var s = x
            var r = 1
            while r < rounds { s = aesdec(s, load(dk, 16 * r)); r += 1 }
            let cNext = load(input, 16 * (i + 1))
            let w = cNext ^ k0
            x = aesdeclast(s, kl ^ cPrev ^ w)
            store(x ^ w, output, 16 * i)
            cPrev = c
            c = cNext
            i += 1
        }
        var s = x
        var r = 1
        while r < rounds { s = aesdec(s, load(dk, 16 * r)); r += 1 }
        let p = aesdeclast(s, kl ^ cPrev)
        store(p, output, 16 * i)
        store(c, iv, 0)
        store(p, iv, 16)
    }

    // MARK: - IGE encryption of eight independent messages (multi-buffer)

    /// IGE encryption of eight independent messages at once, `blocks` blocks each, in place. One IGE
    /// chain is `rounds` dependent AES instructions per block and leaves the AES units idle most of
    /// the time; eight chains interleaved round by round keep both units busy (the approach of Intel's
    /// multi-buffer CBC in its IPsec library). Lane `i`: encryption schedule `schedules[i]`, 32-byte
    /// IV `ivs[i]` (c_0 then p_0, replaced by the last ciphertext and plaintext blocks), data at
    /// `data[i]` advancing `strides[i]` bytes per block (16; 0 for an idle lane, which re-encrypts one
    /// scratch block). No branch depends on data.
    @_alwaysEmitIntoClient @inline(__always)
    public static func igeEncrypt8(_ schedules: UnsafePointer<UnsafeRawPointer>, _ rounds: Int,
                                   _ ivs: UnsafePointer<UnsafeMutableRawPointer>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                                   _ strides: UnsafePointer<Int>, _ blocks: Int) {
        guard blocks > 0 else { return }
        let k0 = schedules[0], k1 = schedules[1], k2 = schedules[2], k3 = schedules[3]
        let k4 = schedules[4], k5 = schedules[5], k6 = schedules[6], k7 = schedules[7]
        var d0 = data[0], d1 = data[1], d2 = data[2], d3 = data[3], d4 = data[4], d5 = data[5], d6 = data[6], d7 = data[7]
        let t0 = strides[0], t1 = strides[1], t2 = strides[2], t3 = strides[3]
        let t4 = strides[4], t5 = strides[5], t6 = strides[6], t7 = strides[7]
        var c0 = load(ivs[0], 0), c1 = load(ivs[1], 0), c2 = load(ivs[2], 0), c3 = load(ivs[3], 0)
        var c4 = load(ivs[4], 0), c5 = load(ivs[5], 0), c6 = load(ivs[6], 0), c7 = load(ivs[7], 0)
        var q0 = load(ivs[0], 16), q1 = load(ivs[1], 16), q2 = load(ivs[2], 16), q3 = load(ivs[3], 16)
        var q4 = load(ivs[4], 16), q5 = load(ivs[5], 16), q6 = load(ivs[6], 16), q7 = load(ivs[7], 16)
        let last = 16 * rounds
        for _ in 0..<blocks {
            let p0 = load(d0, 0), p1 = load(d1, 0), p2 = load(d2, 0), p3 = load(d3, 0)
            let p4 = load(d4, 0), p5 = load(d5, 0), p6 = load(d6, 0), p7 = load(d7, 0)
            var s0 = p0 ^ c0 ^ load(k0, 0), s1 = p1 ^ c1 ^ load(k1, 0), s2 = p2 ^ c2 ^ load(k2, 0), s3 = p3 ^ c3 ^ load(k3, 0)
            var s4 = p4 ^ c4 ^ load(k4, 0), s5 = p5 ^ c5 ^ load(k5, 0), s6 = p6 ^ c6 ^ load(k6, 0), s7 = p7 ^ c7 ^ load(k7, 0)
            var o = 16
            while o < last {
                s0 = aesenc(s0, load(k0, o)); s1 = aesenc(s1, load(k1, o)); s2 = aesenc(s2, load(k2, o)); s3 = aesenc(s3, load(k3, o))
                s4 = aesenc(s4, load(k4, o)); s5 = aesenc(s5, load(k5, o)); s6 = aesenc(s6, load(k6, o)); s7 = aesenc(s7, load(k7, o))
                o += 16
            }
            // c_i = E(p_i ^ c_{i-1}) ^ p_{i-1}: the XOR folded into the last round's key.
            c0 = aesenclast(s0, load(k0, last) ^ q0); c1 = aesenclast(s1, load(k1, last) ^ q1)
            c2 = aesenclast(s2, load(k2, last) ^ q2); c3 = aesenclast(s3, load(k3, last) ^ q3)
            c4 = aesenclast(s4, load(k4, last) ^ q4); c5 = aesenclast(s5, load(k5, last) ^ q5)
            c6 = aesenclast(s6, load(k6, last) ^ q6); c7 = aesenclast(s7, load(k7, last) ^ q7)
            store(c0, d0, 0); store(c1, d1, 0); store(c2, d2, 0); store(c3, d3, 0)
            store(c4, d4, 0); store(c5, d5, 0); store(c6, d6, 0); store(c7, d7, 0)
            q0 = p0; q1 = p1; q2 = p2; q3 = p3; q4 = p4; q5 = p5; q6 = p6; q7 = p7
            d0 += t0; d1 += t1; d2 += t2; d3 += t3; d4 += t4; d5 += t5; d6 += t6; d7 += t7
        }
        store(c0, ivs[0], 0); store(c1, ivs[1], 0); store(c2, ivs[2], 0); store(c3, ivs[3], 0)
        store(c4, ivs[4], 0); store(c5, ivs[5], 0); store(c6, ivs[6], 0); store(c7, ivs[7], 0)
        store(q0, ivs[0], 16); store(q1, ivs[1], 16); store(q2, ivs[2], 16); store(q3, ivs[3], 16)
        store(q4, ivs[4], 16); store(q5, ivs[5], 16); store(q6, ivs[6], 16); store(q7, ivs[7], 16)
    }
}

#endif
