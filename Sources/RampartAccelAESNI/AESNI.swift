// AES with the x86_64 AES-NI instructions: key expansion, ECB, CTR, CBC and IGE.
//
// Compiled with -parse-stdlib and only +aes +pclmul +ssse3 +sse4.1 (see Package.swift). The caller
// (Rampart's AES dispatch) must have checked the CPU features. Every entry point is @inline(never)
// and takes raw pointers and a block count: the whole loop of a buffer runs here, one call per
// buffer. Round keys are 16-byte values in the byte order of FIPS-197 (what aesenc expects); a
// schedule holds `rounds + 1` of them. Input and output may be the same buffer (in place), but must
// not otherwise overlap.
//
// Sequential modes (CBC encryption, IGE both ways) fold the chaining XORs into the key of the last
// round (aesenclast/aesdeclast end with an XOR of their key operand), so the loop-carried chain is
// exactly `rounds` AES instructions per block, the physical bound.

import Swift
import RampartKernelSupport

#if arch(x86_64)

typealias V = SIMD2<UInt64>

@inline(__always) func bi(_ v: V) -> Builtin.Vec2xInt64 { unsafeBitCast(v, to: Builtin.Vec2xInt64.self) }
@inline(__always) func bv(_ v: Builtin.Vec2xInt64) -> V { unsafeBitCast(v, to: V.self) }

@inline(__always) func aesenc(_ s: V, _ k: V) -> V { bv(Builtin.int_x86_aesni_aesenc(bi(s), bi(k))) }
@inline(__always) func aesenclast(_ s: V, _ k: V) -> V { bv(Builtin.int_x86_aesni_aesenclast(bi(s), bi(k))) }
@inline(__always) func aesdec(_ s: V, _ k: V) -> V { bv(Builtin.int_x86_aesni_aesdec(bi(s), bi(k))) }
@inline(__always) func aesdeclast(_ s: V, _ k: V) -> V { bv(Builtin.int_x86_aesni_aesdeclast(bi(s), bi(k))) }
@inline(__always) func aesimc(_ s: V) -> V { bv(Builtin.int_x86_aesni_aesimc(bi(s))) }

/// `pshufb`: byte `i` of the result is byte `mask[i]` of `v`.
@inline(__always) func pshufb(_ v: V, _ mask: V) -> V {
    let r = Builtin.int_x86_ssse3_pshuf_b_128(
        unsafeBitCast(v, to: Builtin.Vec16xInt8.self), unsafeBitCast(mask, to: Builtin.Vec16xInt8.self))
    return unsafeBitCast(r, to: V.self)
}

/// Reverses the 16 bytes of a vector. A computed constant, not a global `let`: a global is initialised
/// lazily and every use inside a loop would call `swift_once` (seen in the disassembly).
@inline(__always) var reverseBytesMask: V { V(0x0809_0a0b_0c0d_0e0f, 0x0001_0203_0405_0607) }

@inline(__always) func load(_ p: UnsafeRawPointer, _ offset: Int) -> V {
    p.loadUnaligned(fromByteOffset: offset, as: V.self)
}
@inline(__always) func store(_ v: V, _ p: UnsafeMutableRawPointer, _ offset: Int) {
    p.storeBytes(of: v, toByteOffset: offset, as: V.self)
}

/// SubWord (the S-box on each byte of a 32-bit word) through aeskeygenassist: with rcon 0 its lowest
/// 32-bit lane is SubWord of lane 1 of the input.
@inline(__always) func subWord(_ w: UInt32) -> UInt32 {
    let v = SIMD4<UInt32>(0, w, 0, 0)
    let r = Builtin.int_x86_aesni_aeskeygenassist(unsafeBitCast(v, to: Builtin.Vec2xInt64.self), UInt8(0)._value)
    return unsafeBitCast(r, to: SIMD4<UInt32>.self)[0]
}

/// Expands a 16-, 24- or 32-byte key into `rounds + 1` encryption round keys at `enc` and the
/// matching equivalent-inverse-cipher keys (for aesdec) at `dec`; each area needs 16 * (rounds + 1)
/// bytes (240 for AES-256). Returns the number of rounds (10, 12, 14), or 0 for another key length.
@inline(never)
public func aesniExpandKey(_ key: UnsafeRawPointer, _ keyLength: Int,
                           _ enc: UnsafeMutableRawPointer, _ dec: UnsafeMutableRawPointer) -> Int {
    let nk = keyLength / 4
    let rounds = aesRounds(keyLength: keyLength)
    guard rounds > 0 else { return 0 }
    aesExpandKeyWords(enc.assumingMemoryBound(to: UInt32.self), key: key, nk: nk, rounds: rounds, subWord: subWord)
    store(load(enc, 16 * rounds), dec, 0)
    for r in 1..<rounds {
        store(aesimc(load(enc, 16 * (rounds - r))), dec, 16 * r)
    }
    store(load(enc, 0), dec, 16 * rounds)
    return rounds
}

// MARK: - One block and eight blocks

@inline(__always) func encrypt1(_ x: V, _ rk: UnsafeRawPointer, _ rounds: Int) -> V {
    var s = x ^ load(rk, 0)
    var r = 1
    while r < rounds { s = aesenc(s, load(rk, 16 * r)); r += 1 }
    return aesenclast(s, load(rk, 16 * rounds))
}

@inline(__always) func decrypt1(_ x: V, _ dk: UnsafeRawPointer, _ rounds: Int) -> V {
    var s = x ^ load(dk, 0)
    var r = 1
    while r < rounds { s = aesdec(s, load(dk, 16 * r)); r += 1 }
    return aesdeclast(s, load(dk, 16 * rounds))
}

/// Eight independent blocks through the middle rounds (the states already hold the round-0 XOR).
@inline(__always) func encRounds8(_ s0: inout V, _ s1: inout V, _ s2: inout V, _ s3: inout V,
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

@inline(__always) func decRounds8(_ s0: inout V, _ s1: inout V, _ s2: inout V, _ s3: inout V,
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
@inline(never)
public func aesniEncryptECB(_ rk: UnsafeRawPointer, _ rounds: Int,
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
@inline(never)
public func aesniDecryptECB(_ dk: UnsafeRawPointer, _ rounds: Int,
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
@inline(never)
public func aesniCTR(_ rk: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer,
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
@inline(never)
public func aesniCBCEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
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
@inline(never)
public func aesniCBCDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
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
@inline(never)
public func aesniIGEEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
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
@inline(never)
public func aesniIGEDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
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

#endif
