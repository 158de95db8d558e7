// AES and GHASH with the ARMv8 cryptography extensions (aese/aesd/aesmc/aesimc, pmull), arm64 only.
//
// STATUS: on the x86_64 machines this project is developed on, Scripts/arm64-kernels.sh (a CI step)
// compiles this file to arm64 machine code, checks its object code (the instructions present, the
// conditional branches on public counts only) and runs every entry point under qemu-aarch64 against
// FIPS 197, SP 800-38A, the GCM specification's test case 3 and an independent AES and GHASH; every
// `swift test` runs it on emulated instructions (RampartKernelSupport/ARMv8Emulated.swift). Not measured: its speed on
// Apple silicon (Docs/ARM64Throughput.md estimates it). The registry's self-test guards it at run time.
//
// Same conventions as the AES-NI kernels: FIPS-197 round keys (rounds + 1 of 16 bytes), decryption
// keys in the "equivalent inverse cipher" form, whole buffers per call, in place allowed.
// aese(s, k) = ShiftRows(SubBytes(s ^ k)) and aesd(s, k) = InvShiftRows(InvSubBytes(s ^ k)): the key
// XOR comes first, so a block is aese+aesmc for rounds 0...r-2, aese for round r-1, then ^ k[r].

import Swift
import RampartKernelSupport

#if arch(arm64) || RAMPART_TYPECHECK_ARM64 || RAMPART_EMULATE_ARM64

typealias AV = SIMD2<UInt64>

@inline(__always) func armLoad(_ p: UnsafeRawPointer, _ offset: Int) -> AV { p.loadUnaligned(fromByteOffset: offset, as: AV.self) }
@inline(__always) func armStore(_ v: AV, _ p: UnsafeMutableRawPointer, _ offset: Int) { p.storeBytes(of: v, toByteOffset: offset, as: AV.self) }
/// The 16 bytes in reverse order, as one vector shuffle (`rev64` and `ext`): written lane by lane on
/// 64-bit halves (`byteSwapped`), the compiler moved every block through general registers.
@inline(__always) func armReverse(_ v: AV) -> AV {
    let b = unsafeBitCast(v, to: SIMD16<UInt8>.self)
    return unsafeBitCast(SIMD16<UInt8>(b[15], b[14], b[13], b[12], b[11], b[10], b[9], b[8],
                                       b[7], b[6], b[5], b[4], b[3], b[2], b[1], b[0]), to: AV.self)
}
/// The two 64-bit halves swapped (`ext #8`).
@inline(__always) func armSwap(_ v: AV) -> AV { AV(v[1], v[0]) }

@inline(__always) func armEncrypt1(_ x: AV, _ rk: UnsafeRawPointer, _ rounds: Int) -> AV {
    var s = x
    var r = 0
    while r < rounds - 1 { s = armAESMC(armAESE(s, armLoad(rk, 16 * r))); r += 1 }
    return armAESE(s, armLoad(rk, 16 * (rounds - 1))) ^ armLoad(rk, 16 * rounds)
}

@inline(__always) func armDecrypt1(_ x: AV, _ dk: UnsafeRawPointer, _ rounds: Int) -> AV {
    var s = x
    var r = 0
    while r < rounds - 1 { s = armAESIMC(armAESD(s, armLoad(dk, 16 * r))); r += 1 }
    return armAESD(s, armLoad(dk, 16 * (rounds - 1))) ^ armLoad(dk, 16 * rounds)
}

/// Four independent blocks (ECB, CTR keystream).
@inline(__always) func armEncrypt4(_ s0: inout AV, _ s1: inout AV, _ s2: inout AV, _ s3: inout AV,
                                   _ rk: UnsafeRawPointer, _ rounds: Int) {
    var r = 0
    while r < rounds - 1 {
        let k = armLoad(rk, 16 * r)
        s0 = armAESMC(armAESE(s0, k)); s1 = armAESMC(armAESE(s1, k))
        s2 = armAESMC(armAESE(s2, k)); s3 = armAESMC(armAESE(s3, k))
        r += 1
    }
    let k = armLoad(rk, 16 * (rounds - 1)), kl = armLoad(rk, 16 * rounds)
    s0 = armAESE(s0, k) ^ kl; s1 = armAESE(s1, k) ^ kl; s2 = armAESE(s2, k) ^ kl; s3 = armAESE(s3, k) ^ kl
}

@inline(__always) func armDecrypt4(_ s0: inout AV, _ s1: inout AV, _ s2: inout AV, _ s3: inout AV,
                                   _ dk: UnsafeRawPointer, _ rounds: Int) {
    var r = 0
    while r < rounds - 1 {
        let k = armLoad(dk, 16 * r)
        s0 = armAESIMC(armAESD(s0, k)); s1 = armAESIMC(armAESD(s1, k))
        s2 = armAESIMC(armAESD(s2, k)); s3 = armAESIMC(armAESD(s3, k))
        r += 1
    }
    let k = armLoad(dk, 16 * (rounds - 1)), kl = armLoad(dk, 16 * rounds)
    s0 = armAESD(s0, k) ^ kl; s1 = armAESD(s1, k) ^ kl; s2 = armAESD(s2, k) ^ kl; s3 = armAESD(s3, k) ^ kl
}

/// SubWord through aese with a zero key: with the word in all four columns, ShiftRows leaves
/// column 0 equal to SubWord(w).
@inline(__always) func armSubWord(_ w: UInt32) -> UInt32 {
    let v = unsafeBitCast(SIMD4<UInt32>(w, w, w, w), to: AV.self)
    return unsafeBitCast(armAESE(v, AV(0, 0)), to: SIMD4<UInt32>.self)[0]
}

/// Key expansion (as `aesniExpandKey`): returns the rounds, 0 for a bad key length.
@inline(never)
public func armExpandKey(_ key: UnsafeRawPointer, _ keyLength: Int,
                         _ enc: UnsafeMutableRawPointer, _ dec: UnsafeMutableRawPointer) -> Int {
    let nk = keyLength / 4
    let rounds = aesRounds(keyLength: keyLength)
    guard rounds > 0 else { return 0 }
    aesExpandKeyWords(enc.assumingMemoryBound(to: UInt32.self), key: key, nk: nk, rounds: rounds, subWord: armSubWord)
    armStore(armLoad(enc, 16 * rounds), dec, 0)
    for r in 1..<rounds { armStore(armAESIMC(armLoad(enc, 16 * (rounds - r))), dec, 16 * r) }
    armStore(armLoad(enc, 0), dec, 16 * rounds)
    return rounds
}

@inline(never)
public func armEncryptECB(_ rk: UnsafeRawPointer, _ rounds: Int,
                          _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    var i = 0
    while i + 4 <= blocks {
        let o = 16 * i
        var s0 = armLoad(input, o), s1 = armLoad(input, o + 16), s2 = armLoad(input, o + 32), s3 = armLoad(input, o + 48)
        armEncrypt4(&s0, &s1, &s2, &s3, rk, rounds)
        armStore(s0, output, o); armStore(s1, output, o + 16); armStore(s2, output, o + 32); armStore(s3, output, o + 48)
        i += 4
    }
    while i < blocks { armStore(armEncrypt1(armLoad(input, 16 * i), rk, rounds), output, 16 * i); i += 1 }
}

@inline(never)
public func armDecryptECB(_ dk: UnsafeRawPointer, _ rounds: Int,
                          _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    var i = 0
    while i + 4 <= blocks {
        let o = 16 * i
        var s0 = armLoad(input, o), s1 = armLoad(input, o + 16), s2 = armLoad(input, o + 32), s3 = armLoad(input, o + 48)
        armDecrypt4(&s0, &s1, &s2, &s3, dk, rounds)
        armStore(s0, output, o); armStore(s1, output, o + 16); armStore(s2, output, o + 32); armStore(s3, output, o + 48)
        i += 4
    }
    while i < blocks { armStore(armDecrypt1(armLoad(input, 16 * i), dk, rounds), output, 16 * i); i += 1 }
}

/// CTR with a 128-bit big-endian counter (as `aesniCTR`).
@inline(never)
public func armCTR(_ rk: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer,
                   _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    var hi = UInt64(bigEndian: counter.loadUnaligned(as: UInt64.self))
    var lo = UInt64(bigEndian: counter.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    @inline(__always) func next() -> AV {
        let b = AV(hi.bigEndian, lo.bigEndian)
        lo &+= 1
        if lo == 0 { hi &+= 1 }  // the counter is public
        return b
    }
    var i = 0
    while i + 4 <= blocks {
        var s0 = next(), s1 = next(), s2 = next(), s3 = next()
        armEncrypt4(&s0, &s1, &s2, &s3, rk, rounds)
        let o = 16 * i
        armStore(s0 ^ armLoad(input, o), output, o); armStore(s1 ^ armLoad(input, o + 16), output, o + 16)
        armStore(s2 ^ armLoad(input, o + 32), output, o + 32); armStore(s3 ^ armLoad(input, o + 48), output, o + 48)
        i += 4
    }
    while i < blocks {
        armStore(armEncrypt1(next(), rk, rounds) ^ armLoad(input, 16 * i), output, 16 * i)
        i += 1
    }
    counter.storeBytes(of: hi.bigEndian, as: UInt64.self)
    counter.storeBytes(of: lo.bigEndian, toByteOffset: 8, as: UInt64.self)
}

@inline(never)
public func armCBCEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                          _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    var c = armLoad(iv, 0)
    for i in 0..<blocks {
        c = armEncrypt1(armLoad(input, 16 * i) ^ c, rk, rounds)
        armStore(c, output, 16 * i)
    }
    armStore(c, iv, 0)
}

@inline(never)
public func armCBCDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                          _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    var prev = armLoad(iv, 0)
    var i = 0
    while i + 4 <= blocks {
        let o = 16 * i
        let c0 = armLoad(input, o), c1 = armLoad(input, o + 16), c2 = armLoad(input, o + 32), c3 = armLoad(input, o + 48)
        var s0 = c0, s1 = c1, s2 = c2, s3 = c3
        armDecrypt4(&s0, &s1, &s2, &s3, dk, rounds)
        armStore(s0 ^ prev, output, o); armStore(s1 ^ c0, output, o + 16)
        armStore(s2 ^ c1, output, o + 32); armStore(s3 ^ c2, output, o + 48)
        prev = c3
        i += 4
    }
    while i < blocks {
        let c = armLoad(input, 16 * i)
        armStore(armDecrypt1(c, dk, rounds) ^ prev, output, 16 * i)
        prev = c
        i += 1
    }
    armStore(prev, iv, 0)
}

@inline(never)
public func armIGEEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                          _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    var cPrev = armLoad(iv, 0), pPrev = armLoad(iv, 16)
    for i in 0..<blocks {
        let p = armLoad(input, 16 * i)
        cPrev = armEncrypt1(p ^ cPrev, rk, rounds) ^ pPrev
        pPrev = p
        armStore(cPrev, output, 16 * i)
    }
    armStore(cPrev, iv, 0); armStore(pPrev, iv, 16)
}

@inline(never)
public func armIGEDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                          _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    var cPrev = armLoad(iv, 0), pPrev = armLoad(iv, 16)
    for i in 0..<blocks {
        let c = armLoad(input, 16 * i)
        pPrev = armDecrypt1(c ^ pPrev, dk, rounds) ^ cPrev
        cPrev = c
        armStore(pPrev, output, 16 * i)
    }
    armStore(cPrev, iv, 0); armStore(pPrev, iv, 16)
}

// MARK: - GHASH (POLYVAL formulation, as in GHASHCLMUL.swift)

/// Montgomery reduction of hi * x^128 + lo modulo the POLYVAL polynomial.
@inline(__always) func armReduce(_ lo: AV, _ hi: AV) -> AV {
    let c: UInt64 = 0xc200_0000_0000_0000
    var x = armSwap(lo) ^ armPMULL(lo[0], c)
    x = armSwap(x) ^ armPMULL(x[0], c)
    return hi ^ x
}

/// Folds the middle product `mid` into the 256-bit product (lo, hi) and reduces: its low half into
/// lo's high half, its high half into hi's low half.
@inline(__always) func armFold(_ lo: AV, _ hi: AV, _ mid: AV) -> AV {
    armReduce(lo ^ AV(0, mid[0]), hi ^ AV(mid[1], 0))
}

// The products are schoolbook (four PMULLs: a0·b0, a1·b1, a0·b1 ^ a1·b0), not Karatsuba (three, the
// third on a0 ^ a1 and b0 ^ b1): every operand then pairs lane 0 with lane 0 (`pmull`) or lane 1 with
// lane 1 (`pmull2`), the cross terms against the H power with its halves swapped, which the table
// keeps. Written as Karatsuba, the optimizer turned the vector XOR of the halves back into a scalar
// one and moved every block through general registers and back (seen in the arm64 object code).

/// a·b unreduced into (lo, hi, mid); `bs` is b with its halves swapped.
@inline(__always) func armMulAccumulate(_ a: AV, _ b: AV, _ bs: AV, _ lo: inout AV, _ hi: inout AV, _ mid: inout AV) {
    lo = lo ^ armPMULL(a[0], b[0])
    hi = hi ^ armPMULL(a[1], b[1])
    mid = mid ^ armPMULL(a[0], bs[0]) ^ armPMULL(a[1], bs[1])
}

/// a·b reduced (POLYVAL form); `bs` is b with its halves swapped.
@inline(__always) func armDot(_ a: AV, _ b: AV, _ bs: AV) -> AV {
    var lo = AV(), hi = AV(), mid = AV()
    armMulAccumulate(a, b, bs, &lo, &hi, &mid)
    return armFold(lo, hi, mid)
}

/// Power H^i of the table (i = 1…8) and its swapped form.
@inline(__always) func armPower(_ table: UnsafeRawPointer, _ i: Int) -> (AV, AV) {
    (armLoad(table, 16 * (i - 1)), armLoad(table, 128 + 16 * (i - 1)))
}

/// One block's product into the accumulators: block `b` (GHASH byte order) times H^i.
@inline(__always) func armAccumulateBlock(_ x: AV, _ table: UnsafeRawPointer, _ i: Int,
                                          _ lo: inout AV, _ hi: inout AV, _ mid: inout AV) {
    let (h, hs) = armPower(table, i)
    armMulAccumulate(x, h, hs, &lo, &hi, &mid)
}

/// Eight blocks into the GHASH state at once: (y + b0)·H⁸ + b1·H⁷ + … + b7·H with one reduction.
@inline(__always) func armGHASH8(_ y: AV, _ b0: AV, _ b1: AV, _ b2: AV, _ b3: AV, _ b4: AV, _ b5: AV, _ b6: AV, _ b7: AV,
                                 _ table: UnsafeRawPointer) -> AV {
    var lo = AV(), hi = AV(), mid = AV()
    armAccumulateBlock(y ^ armReverse(b0), table, 8, &lo, &hi, &mid)
    armAccumulateBlock(armReverse(b1), table, 7, &lo, &hi, &mid)
    armAccumulateBlock(armReverse(b2), table, 6, &lo, &hi, &mid)
    armAccumulateBlock(armReverse(b3), table, 5, &lo, &hi, &mid)
    armAccumulateBlock(armReverse(b4), table, 4, &lo, &hi, &mid)
    armAccumulateBlock(armReverse(b5), table, 3, &lo, &hi, &mid)
    armAccumulateBlock(armReverse(b6), table, 2, &lo, &hi, &mid)
    armAccumulateBlock(armReverse(b7), table, 1, &lo, &hi, &mid)
    return armFold(lo, hi, mid)
}

/// Stores H·x (POLYVAL form) and its powers H², …, H⁸ (as products of that form) in the first 128
/// bytes of `table`, and the same eight with their halves swapped in the next 128 (AESGCM gives every
/// GHASH implementation 512 bytes).
@inline(never)
public func armGHASHPrecompute(_ hashKey: UnsafeRawPointer, _ table: UnsafeMutableRawPointer) {
    let h = armReverse(armLoad(hashKey, 0))
    let carry = 0 &- (h[1] >> 63)
    let h1 = AV(h[0] << 1, (h[1] << 1) | (h[0] >> 63)) ^ AV(carry & 1, carry & 0xc200_0000_0000_0000)
    var p = h1
    for i in 0..<8 {
        if i > 0 { p = armDot(p, h1, armSwap(h1)) }
        armStore(p, table, 16 * i)
        armStore(armSwap(p), table, 128 + 16 * i)
    }
}

/// Absorbs `blocks` blocks into the GHASH state (GHASH byte order): eight at a time with one
/// reduction, then one multiplication per block.
@inline(never)
public func armGHASHBlocks(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer,
                           _ data: UnsafeRawPointer, _ blocks: Int) {
    var y = armReverse(armLoad(state, 0))
    var i = 0
    while i + 8 <= blocks {
        let o = 16 * i
        y = armGHASH8(y, armLoad(data, o), armLoad(data, o + 16), armLoad(data, o + 32), armLoad(data, o + 48),
                      armLoad(data, o + 64), armLoad(data, o + 80), armLoad(data, o + 96), armLoad(data, o + 112), table)
        i += 8
    }
    let (h, hs) = armPower(table, 1)
    while i < blocks { y = armDot(y ^ armReverse(armLoad(data, 16 * i)), h, hs); i += 1 }
    armStore(armReverse(y), state, 0)
}

// MARK: - GCM (CTR with GCM's 32-bit counter and GHASH, eight blocks at a time, interleaved)

/// Eight AES encryptions (`s0…s7`, in place) with an eight-block aggregated GHASH of `g0…g7` into `y`
/// placed between their rounds: one Karatsuba product after each of rounds 0…7, the reduction after
/// round 8 (every key size has at least nine full rounds). The two are independent chains on different
/// instructions (aese/aesmc, pmull/eor), so the core runs them side by side; written one after the
/// other, the GHASH would wait for the last AES round. Straight-line code, no branch on data.
@inline(__always) func armEncrypt8GHASH8(_ s0: inout AV, _ s1: inout AV, _ s2: inout AV, _ s3: inout AV,
                                         _ s4: inout AV, _ s5: inout AV, _ s6: inout AV, _ s7: inout AV,
                                         _ rk: UnsafeRawPointer, _ rounds: Int, _ y: inout AV,
                                         _ g0: AV, _ g1: AV, _ g2: AV, _ g3: AV, _ g4: AV, _ g5: AV, _ g6: AV, _ g7: AV,
                                         _ table: UnsafeRawPointer) {
    var lo = AV(), hi = AV(), mid = AV()
    @inline(__always) func round(_ r: Int) {
        let k = armLoad(rk, 16 * r)
        s0 = armAESMC(armAESE(s0, k)); s1 = armAESMC(armAESE(s1, k))
        s2 = armAESMC(armAESE(s2, k)); s3 = armAESMC(armAESE(s3, k))
        s4 = armAESMC(armAESE(s4, k)); s5 = armAESMC(armAESE(s5, k))
        s6 = armAESMC(armAESE(s6, k)); s7 = armAESMC(armAESE(s7, k))
    }
    round(0); armAccumulateBlock(y ^ armReverse(g0), table, 8, &lo, &hi, &mid)
    round(1); armAccumulateBlock(armReverse(g1), table, 7, &lo, &hi, &mid)
    round(2); armAccumulateBlock(armReverse(g2), table, 6, &lo, &hi, &mid)
    round(3); armAccumulateBlock(armReverse(g3), table, 5, &lo, &hi, &mid)
    round(4); armAccumulateBlock(armReverse(g4), table, 4, &lo, &hi, &mid)
    round(5); armAccumulateBlock(armReverse(g5), table, 3, &lo, &hi, &mid)
    round(6); armAccumulateBlock(armReverse(g6), table, 2, &lo, &hi, &mid)
    round(7); armAccumulateBlock(armReverse(g7), table, 1, &lo, &hi, &mid)
    round(8)
    y = armFold(lo, hi, mid)
    var r = 9
    while r < rounds - 1 { round(r); r += 1 }
    let k = armLoad(rk, 16 * (rounds - 1)), kl = armLoad(rk, 16 * rounds)
    s0 = armAESE(s0, k) ^ kl; s1 = armAESE(s1, k) ^ kl; s2 = armAESE(s2, k) ^ kl; s3 = armAESE(s3, k) ^ kl
    s4 = armAESE(s4, k) ^ kl; s5 = armAESE(s5, k) ^ kl; s6 = armAESE(s6, k) ^ kl; s7 = armAESE(s7, k) ^ kl
}

/// AES-GCM encryption of `blocks` whole blocks: CTR with the 32-bit counter of `counter` (16 bytes,
/// advanced by `blocks` modulo 2^32), and GHASH of the ciphertext into `state` (GCM byte order). Eight
/// blocks at a time, the GHASH of each group's ciphertext interleaved with the next group's AES rounds
/// (``armEncrypt8GHASH8``); H..H⁸ from the table.
@inline(never)
public func armGCMEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                          _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                          _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    armGCM(rk, rounds, table, counter, state, input, output, blocks, sealing: true)
}

/// AES-GCM decryption of `blocks` whole blocks: GHASH of the ciphertext `input` into `state` and CTR
/// decryption into `output` (the same buffer or a disjoint one), eight blocks at a time, each group's
/// GHASH interleaved with its own AES rounds.
@inline(never)
public func armGCMDecrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                          _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                          _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    armGCM(rk, rounds, table, counter, state, input, output, blocks, sealing: false)
}

@inline(__always) func armGCM(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                              _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                              _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int, sealing: Bool) {
    var y = armReverse(armLoad(state, 0))
    let prefix = unsafeBitCast(armLoad(counter, 0), to: SIMD4<UInt32>.self)
    var ctr = UInt32(bigEndian: counter.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
    /// The next counter block: the first 12 bytes of `counter`, then the big-endian 32-bit count.
    @inline(__always) func next() -> AV {
        var b = prefix
        b[3] = ctr.bigEndian
        ctr &+= 1
        return unsafeBitCast(b, to: AV.self)
    }
    var i = 0
    // Sealing hashes a group's ciphertext during the next group's rounds: `g0…g7` hold the group not yet
    // hashed, `pending` says whether there is one (public: false only before the first group).
    var g0 = AV(), g1 = AV(), g2 = AV(), g3 = AV(), g4 = AV(), g5 = AV(), g6 = AV(), g7 = AV()
    var pending = false
    while i + 8 <= blocks {
        let o = 16 * i
        let x0 = armLoad(input, o), x1 = armLoad(input, o + 16), x2 = armLoad(input, o + 32), x3 = armLoad(input, o + 48)
        let x4 = armLoad(input, o + 64), x5 = armLoad(input, o + 80), x6 = armLoad(input, o + 96), x7 = armLoad(input, o + 112)
        if !sealing { (g0, g1, g2, g3, g4, g5, g6, g7) = (x0, x1, x2, x3, x4, x5, x6, x7); pending = true }
        var s0 = next(), s1 = next(), s2 = next(), s3 = next(), s4 = next(), s5 = next(), s6 = next(), s7 = next()
        if pending {
            armEncrypt8GHASH8(&s0, &s1, &s2, &s3, &s4, &s5, &s6, &s7, rk, rounds, &y, g0, g1, g2, g3, g4, g5, g6, g7, table)
        } else {
            armEncrypt4(&s0, &s1, &s2, &s3, rk, rounds)
            armEncrypt4(&s4, &s5, &s6, &s7, rk, rounds)
        }
        let c0 = s0 ^ x0, c1 = s1 ^ x1, c2 = s2 ^ x2, c3 = s3 ^ x3, c4 = s4 ^ x4, c5 = s5 ^ x5, c6 = s6 ^ x6, c7 = s7 ^ x7
        armStore(c0, output, o); armStore(c1, output, o + 16); armStore(c2, output, o + 32); armStore(c3, output, o + 48)
        armStore(c4, output, o + 64); armStore(c5, output, o + 80); armStore(c6, output, o + 96); armStore(c7, output, o + 112)
        if sealing { (g0, g1, g2, g3, g4, g5, g6, g7) = (c0, c1, c2, c3, c4, c5, c6, c7); pending = true }
        i += 8
    }
    if sealing && pending { y = armGHASH8(y, g0, g1, g2, g3, g4, g5, g6, g7, table) }
    let (h, hs) = armPower(table, 1)
    while i < blocks {
        let x = armLoad(input, 16 * i)
        let c = armEncrypt1(next(), rk, rounds) ^ x
        armStore(c, output, 16 * i)
        y = armDot(y ^ armReverse(sealing ? c : x), h, hs)
        i += 1
    }
    counter.storeBytes(of: ctr.bigEndian, toByteOffset: 12, as: UInt32.self)
    armStore(armReverse(y), state, 0)
}

// MARK: - Conformances (Rampart/Platform/Registrations.swift lists them)

/// AES on the ARMv8 cryptography extensions, in the `.armv8` schedule layout: encryption round keys at
/// offset 0, decryption keys at 256.
public enum ARMv8AES: AESImplementation {
    public static var name: String { armImplementationName("armv8-aes") }
    public static var requires: KernelFeatures { armImplementationRequires([.armAES]) }
    public static var layout: AESScheduleLayout { .armv8 }
    public static var scheduleBytes: Int { 512 }
    /// Offset of the decryption round keys.
    public static var decryptionOffset: Int { 256 }

    public static func expandKey(_ key: UnsafeRawPointer, _ keyLength: Int, _ schedule: UnsafeMutableRawPointer) -> Int {
        armExpandKey(key, keyLength, schedule, schedule + decryptionOffset)
    }
    public static func encryptECB(_ schedule: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                                  _ dst: UnsafeMutableRawPointer, _ n: Int) {
        armEncryptECB(schedule, rounds, src, dst, n)
    }
    public static func decryptECB(_ schedule: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                                  _ dst: UnsafeMutableRawPointer, _ n: Int) {
        armDecryptECB(schedule + decryptionOffset, rounds, src, dst, n)
    }
    public static func ctr(_ schedule: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        armCTR(schedule, rounds, counter, src, dst, n)
    }
    public static func cbcEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        armCBCEncrypt(schedule, rounds, iv, src, dst, n)
    }
    public static func cbcDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        armCBCDecrypt(schedule + decryptionOffset, rounds, iv, src, dst, n)
    }
    public static func igeEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        armIGEEncrypt(schedule, rounds, iv, src, dst, n)
    }
    public static func igeDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        armIGEDecrypt(schedule + decryptionOffset, rounds, iv, src, dst, n)
    }
}

/// GHASH on PMULL, one multiplication per block, with GCM's CTR on the ARMv8 AES instructions
/// (``armGCMEncrypt(_:_:_:_:_:_:_:_:)``), reading the `.armv8` schedule layout. The table holds H·x
/// and the powers H², …, H⁸ of the aggregated eight-block GHASH, then the eight with their halves
/// swapped (256 bytes).
public enum GHASHPMULL: GHASHImplementation {
    public static var name: String { armImplementationName("pmull") }
    public static var requires: KernelFeatures { armImplementationRequires([.armAES, .armPMULL]) }
    public static var aesLayout: AESScheduleLayout { .armv8 }
    public static func precompute(_ h: UnsafeRawPointer, _ table: UnsafeMutableRawPointer, absorbBlocks: Int, gcmBlocks: Int) {
        armGHASHPrecompute(h, table)
    }
    public static func absorb(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer, _ data: UnsafeRawPointer, _ n: Int) {
        armGHASHBlocks(table, state, data, n)
    }
    public static func gcmEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                                  _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        armGCMEncrypt(schedule, rounds, table, counter, state, src, dst, n)
    }
    public static func gcmDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                                  _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        armGCMDecrypt(schedule, rounds, table, counter, state, src, dst, n)
    }
}

#endif
