// Portable constant-time AES: a bitsliced core on 64-bit words, four blocks at a time.
//
// The design is the "ct64" one of BearSSL (Thomas Pornin): the 4 x 128 state bits of four blocks
// are spread over eight UInt64 words so that word i holds bit i of every byte; SubBytes is then a
// fixed boolean circuit (Boyar and Peralta's 113-gate S-box, "A new combinational logic minimization
// technique with applications to cryptology", 2009), ShiftRows a bit permutation inside each word
// and MixColumns rotations and XORs. There is no table, no secret-dependent branch and no
// secret-dependent memory index anywhere: the running time depends only on the number of blocks.
//
// Sequential modes (CBC encryption, IGE) use one lane of four; the parallel modes (ECB, CTR, CBC
// decryption, GCM) fill all four.

internal import RampartKernelSupport

/// Eight 64-bit words holding four AES states in bitsliced form.
@usableFromInline
struct AESSlices {
    @usableFromInline var q0: UInt64 = 0, q1: UInt64 = 0, q2: UInt64 = 0, q3: UInt64 = 0
    @usableFromInline var q4: UInt64 = 0, q5: UInt64 = 0, q6: UInt64 = 0, q7: UInt64 = 0
    @inlinable init() {}
}

// MARK: - S-box circuit

extension AESSlices {
    /// SubBytes on all 128 bytes: Boyar-Peralta's circuit. Inputs x0...x7 are the bits from the most
    /// to the least significant (x0 = q7), outputs s0...s7 likewise.
    @inline(__always)
    mutating func subBytes() {
        let x0 = q7, x1 = q6, x2 = q5, x3 = q4, x4 = q3, x5 = q2, x6 = q1, x7 = q0

        // Top linear layer.
        let y14 = x3 ^ x5, y13 = x0 ^ x6, y9 = x0 ^ x3, y8 = x0 ^ x5
        let t0 = x1 ^ x2
        let y1 = t0 ^ x7, y4 = y1 ^ x3, y12 = y13 ^ y14, y2 = y1 ^ x0, y5 = y1 ^ x6
        let y3 = y5 ^ y8
        let t1 = x4 ^ y12
        let y15 = t1 ^ x5, y20 = t1 ^ x1
        let y6 = y15 ^ x7, y10 = y15 ^ t0, y11 = y20 ^ y9
        let y7 = x7 ^ y11, y17 = y10 ^ y11, y19 = y10 ^ y8, y16 = t0 ^ y11
        let y21 = y13 ^ y16, y18 = x0 ^ y16

        // Non-linear middle: inversion in GF(2^4)^2.
        let t2 = y12 & y15, t3 = y3 & y6, t4 = t3 ^ t2
        let t5 = y4 & x7, t6 = t5 ^ t2
        let t7 = y13 & y16, t8 = y5 & y1, t9 = t8 ^ t7
        let t10 = y2 & y7, t11 = t10 ^ t7
        let t12 = y9 & y11, t13 = y14 & y17, t14 = t13 ^ t12
        let t15 = y8 & y10, t16 = t15 ^ t12
        let t17 = t4 ^ t14, t18 = t6 ^ t16, t19 = t9 ^ t14, t20 = t11 ^ t16
        let t21 = t17 ^ y20, t22 = t18 ^ y19, t23 = t19 ^ y21, t24 = t20 ^ y18

        let t25 = t21 ^ t22, t26 = t21 & t23, t27 = t24 ^ t26
        let t28 = t25 & t27, t29 = t28 ^ t22
        let t30 = t23 ^ t24, t31 = t22 ^ t26, t32 = t31 & t30, t33 = t32 ^ t24
        let t34 = t23 ^ t33, t35 = t27 ^ t33, t36 = t24 & t35, t37 = t36 ^ t34
        let t38 = t27 ^ t36, t39 = t29 & t38, t40 = t25 ^ t39

        let t41 = t40 ^ t37, t42 = t29 ^ t33, t43 = t29 ^ t40, t44 = t33 ^ t37, t45 = t42 ^ t41
        let z0 = t44 & y15, z1 = t37 & y6, z2 = t33 & x7, z3 = t43 & y16
        let z4 = t40 & y1, z5 = t29 & y7, z6 = t42 & y11, z7 = t45 & y17
        let z8 = t41 & y10, z9 = t44 & y12, z10 = t37 & y3, z11 = t33 & y4
        let z12 = t43 & y13, z13 = t40 & y5, z14 = t29 & y2, z15 = t42 & y9
        let z16 = t45 & y14, z17 = t41 & y8

        // Bottom linear layer.
        let t46 = z15 ^ z16, t47 = z10 ^ z11, t48 = z5 ^ z13, t49 = z9 ^ z10
        let t50 = z2 ^ z12, t51 = z2 ^ z5, t52 = z7 ^ z8, t53 = z0 ^ z3
        let t54 = z6 ^ z7, t55 = z16 ^ z17, t56 = z12 ^ t48, t57 = t50 ^ t53
        let t58 = z4 ^ t46, t59 = z3 ^ t54, t60 = t46 ^ t57, t61 = z14 ^ t57
        let t62 = t52 ^ t58, t63 = t49 ^ t58, t64 = z4 ^ t59, t65 = t61 ^ t62
        let t66 = z1 ^ t63
        let s0 = t59 ^ t63, s6 = t56 ^ ~t62, s7 = t48 ^ ~t60
        let t67 = t64 ^ t65
        let s3 = t53 ^ t66, s4 = t51 ^ t66, s5 = t47 ^ t65
        let s1 = t64 ^ ~s3, s2 = t55 ^ ~t67

        q7 = s0; q6 = s1; q5 = s2; q4 = s3; q3 = s4; q2 = s5; q1 = s6; q0 = s7
    }

    /// The affine map that turns the forward S-box circuit into the inverse one (applied before and
    /// after it): InvSubBytes(x) = A(SubBytes(A(x))), A being the inverse affine transform.
    @inline(__always)
    mutating func inverseAffine() {
        let a0 = ~q0, a1 = ~q1, a2 = q2, a3 = q3, a4 = q4, a5 = ~q5, a6 = ~q6, a7 = q7
        q7 = a1 ^ a4 ^ a6
        q6 = a0 ^ a3 ^ a5
        q5 = a7 ^ a2 ^ a4
        q4 = a6 ^ a1 ^ a3
        q3 = a5 ^ a0 ^ a2
        q2 = a4 ^ a7 ^ a1
        q1 = a3 ^ a6 ^ a0
        q0 = a2 ^ a5 ^ a7
    }

    @inline(__always)
    mutating func invSubBytes() {
        inverseAffine()
        subBytes()
        inverseAffine()
    }
}

// MARK: - Linear layers

@inline(__always) private func shiftRowsWord(_ x: UInt64) -> UInt64 {
    (x & 0x0000_0000_0000_ffff)
        | ((x & 0x0000_0000_fff0_0000) >> 4) | ((x & 0x0000_0000_000f_0000) << 12)
        | ((x & 0x0000_ff00_0000_0000) >> 8) | ((x & 0x0000_00ff_0000_0000) << 8)
        | ((x & 0xf000_0000_0000_0000) >> 12) | ((x & 0x0fff_0000_0000_0000) << 4)
}

@inline(__always) private func invShiftRowsWord(_ x: UInt64) -> UInt64 {
    (x & 0x0000_0000_0000_ffff)
        | ((x & 0x0000_0000_0fff_0000) << 4) | ((x & 0x0000_0000_f000_0000) >> 12)
        | ((x & 0x0000_00ff_0000_0000) << 8) | ((x & 0x0000_ff00_0000_0000) >> 8)
        | ((x & 0x000f_0000_0000_0000) << 12) | ((x & 0xfff0_0000_0000_0000) >> 4)
}

@inline(__always) private func rot16(_ x: UInt64) -> UInt64 { (x >> 16) | (x << 48) }
@inline(__always) private func rot32(_ x: UInt64) -> UInt64 { (x >> 32) | (x << 32) }

extension AESSlices {
    @inline(__always)
    mutating func shiftRows() {
        q0 = shiftRowsWord(q0); q1 = shiftRowsWord(q1); q2 = shiftRowsWord(q2); q3 = shiftRowsWord(q3)
        q4 = shiftRowsWord(q4); q5 = shiftRowsWord(q5); q6 = shiftRowsWord(q6); q7 = shiftRowsWord(q7)
    }

    @inline(__always)
    mutating func invShiftRows() {
        q0 = invShiftRowsWord(q0); q1 = invShiftRowsWord(q1); q2 = invShiftRowsWord(q2); q3 = invShiftRowsWord(q3)
        q4 = invShiftRowsWord(q4); q5 = invShiftRowsWord(q5); q6 = invShiftRowsWord(q6); q7 = invShiftRowsWord(q7)
    }

    /// MixColumns: each 16-bit group of a word is one row of the four blocks' columns; rotating by 16
    /// moves to the next row, multiplication by x is the shift from word i to word i+1 with the
    /// reduction (x^8 = x^4 + x^3 + x + 1) feeding words 0, 1, 3 and 4.
    @inline(__always)
    mutating func mixColumns() {
        let r0 = rot16(q0), r1 = rot16(q1), r2 = rot16(q2), r3 = rot16(q3)
        let r4 = rot16(q4), r5 = rot16(q5), r6 = rot16(q6), r7 = rot16(q7)
        let n0 = q7 ^ r7 ^ r0 ^ rot32(q0 ^ r0)
        let n1 = q0 ^ r0 ^ q7 ^ r7 ^ r1 ^ rot32(q1 ^ r1)
        let n2 = q1 ^ r1 ^ r2 ^ rot32(q2 ^ r2)
        let n3 = q2 ^ r2 ^ q7 ^ r7 ^ r3 ^ rot32(q3 ^ r3)
        let n4 = q3 ^ r3 ^ q7 ^ r7 ^ r4 ^ rot32(q4 ^ r4)
        let n5 = q4 ^ r4 ^ r5 ^ rot32(q5 ^ r5)
        let n6 = q5 ^ r5 ^ r6 ^ rot32(q6 ^ r6)
        let n7 = q6 ^ r6 ^ r7 ^ rot32(q7 ^ r7)
        q0 = n0; q1 = n1; q2 = n2; q3 = n3; q4 = n4; q5 = n5; q6 = n6; q7 = n7
    }

    @inline(__always)
    mutating func invMixColumns() {
        let r0 = rot16(q0), r1 = rot16(q1), r2 = rot16(q2), r3 = rot16(q3)
        let r4 = rot16(q4), r5 = rot16(q5), r6 = rot16(q6), r7 = rot16(q7)
        let n0 = q5 ^ q6 ^ q7 ^ r0 ^ r5 ^ r7 ^ rot32(q0 ^ q5 ^ q6 ^ r0 ^ r5)
        let n1 = q0 ^ q5 ^ r0 ^ r1 ^ r5 ^ r6 ^ r7 ^ rot32(q1 ^ q5 ^ q7 ^ r1 ^ r5 ^ r6)
        let n2 = q0 ^ q1 ^ q6 ^ r1 ^ r2 ^ r6 ^ r7 ^ rot32(q0 ^ q2 ^ q6 ^ r2 ^ r6 ^ r7)
        let n3 = q0 ^ q1 ^ q2 ^ q5 ^ q6 ^ r0 ^ r2 ^ r3 ^ r5
            ^ rot32(q0 ^ q1 ^ q3 ^ q5 ^ q6 ^ q7 ^ r0 ^ r3 ^ r5 ^ r7)
        let n4 = q1 ^ q2 ^ q3 ^ q5 ^ r1 ^ r3 ^ r4 ^ r5 ^ r6 ^ r7 ^ rot32(q1 ^ q2 ^ q4 ^ q5 ^ q7 ^ r1 ^ r4 ^ r5 ^ r6)
        let n5 = q2 ^ q3 ^ q4 ^ q6 ^ r2 ^ r4 ^ r5 ^ r6 ^ r7 ^ rot32(q2 ^ q3 ^ q5 ^ q6 ^ r2 ^ r5 ^ r6 ^ r7)
        let n6 = q3 ^ q4 ^ q5 ^ q7 ^ r3 ^ r5 ^ r6 ^ r7 ^ rot32(q3 ^ q4 ^ q6 ^ q7 ^ r3 ^ r6 ^ r7)
        let n7 = q4 ^ q5 ^ q6 ^ r4 ^ r6 ^ r7 ^ rot32(q4 ^ q5 ^ q7 ^ r4 ^ r7)
        q0 = n0; q1 = n1; q2 = n2; q3 = n3; q4 = n4; q5 = n5; q6 = n6; q7 = n7
    }

    @inline(__always)
    mutating func addRoundKey(_ k: UnsafePointer<UInt64>) {
        q0 ^= k[0]; q1 ^= k[1]; q2 ^= k[2]; q3 ^= k[3]
        q4 ^= k[4]; q5 ^= k[5]; q6 ^= k[6]; q7 ^= k[7]
    }
}

// MARK: - Bit transposition

/// Swaps the bits selected by `lowMask` of `y` (shifted by `s`) with the bits of `x` above them.
@inline(__always) private func swapBits(_ x: inout UInt64, _ y: inout UInt64, _ lowMask: UInt64, _ s: UInt64) {
    let a = x, b = y
    let highMask = lowMask << s
    x = (a & lowMask) | ((b & lowMask) << s)
    y = ((a & highMask) >> s) | (b & highMask)
}

extension AESSlices {
    /// Transposes between "eight 64-bit words of interleaved bytes" and the bitsliced layout (it is
    /// its own inverse).
    @inline(__always)
    mutating func ortho() {
        swapBits(&q0, &q1, 0x5555_5555_5555_5555, 1)
        swapBits(&q2, &q3, 0x5555_5555_5555_5555, 1)
        swapBits(&q4, &q5, 0x5555_5555_5555_5555, 1)
        swapBits(&q6, &q7, 0x5555_5555_5555_5555, 1)
        swapBits(&q0, &q2, 0x3333_3333_3333_3333, 2)
        swapBits(&q1, &q3, 0x3333_3333_3333_3333, 2)
        swapBits(&q4, &q6, 0x3333_3333_3333_3333, 2)
        swapBits(&q5, &q7, 0x3333_3333_3333_3333, 2)
        swapBits(&q0, &q4, 0x0f0f_0f0f_0f0f_0f0f, 4)
        swapBits(&q1, &q5, 0x0f0f_0f0f_0f0f_0f0f, 4)
        swapBits(&q2, &q6, 0x0f0f_0f0f_0f0f_0f0f, 4)
        swapBits(&q3, &q7, 0x0f0f_0f0f_0f0f_0f0f, 4)
    }
}

/// Spreads one 16-byte block (four little-endian words) over two words: bytes 0, 4, 8, 12 and
/// 2, 6, 10, 14 ... interleaved, the layout `ortho` expects.
@inline(__always) func aesInterleaveIn(_ w0: UInt32, _ w1: UInt32, _ w2: UInt32, _ w3: UInt32) -> (UInt64, UInt64) {
    @inline(__always) func spread(_ w: UInt32) -> UInt64 {
        var x = UInt64(w)
        x = (x | (x << 16)) & 0x0000_ffff_0000_ffff
        x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff
        return x
    }
    let x0 = spread(w0), x1 = spread(w1), x2 = spread(w2), x3 = spread(w3)
    return (x0 | (x2 << 8), x1 | (x3 << 8))
}

/// Inverse of `aesInterleaveIn`.
@inline(__always) func aesInterleaveOut(_ a: UInt64, _ b: UInt64) -> (UInt32, UInt32, UInt32, UInt32) {
    @inline(__always) func gather(_ x: UInt64) -> UInt32 {
        var v = x & 0x00ff_00ff_00ff_00ff
        v = (v | (v >> 8)) & 0x0000_ffff_0000_ffff
        return UInt32(truncatingIfNeeded: v) | UInt32(truncatingIfNeeded: v >> 16)
    }
    return (gather(a), gather(b), gather(a >> 8), gather(b >> 8))
}

// MARK: - Loading and storing up to four blocks

extension AESSlices {
    /// Block `j` (0...3) from 16 bytes at `p`.
    @inline(__always)
    mutating func setBlock(_ j: Int, _ p: UnsafeRawPointer) {
        let (a, b) = aesInterleaveIn(p.loadLE32(0), p.loadLE32(4), p.loadLE32(8), p.loadLE32(12))
        setBlock(j, a, b)
    }

    @inline(__always)
    mutating func setBlock(_ j: Int, _ a: UInt64, _ b: UInt64) {
        switch j {
        case 0: q0 = a; q4 = b
        case 1: q1 = a; q5 = b
        case 2: q2 = a; q6 = b
        default: q3 = a; q7 = b
        }
    }

    /// Block `j` to 16 bytes at `p` (after `ortho`).
    @inline(__always)
    func getBlock(_ j: Int, _ p: UnsafeMutableRawPointer) {
        let a: UInt64, b: UInt64
        switch j {
        case 0: a = q0; b = q4
        case 1: a = q1; b = q5
        case 2: a = q2; b = q6
        default: a = q3; b = q7
        }
        let (w0, w1, w2, w3) = aesInterleaveOut(a, b)
        p.storeLE32(w0, 0); p.storeLE32(w1, 4); p.storeLE32(w2, 8); p.storeLE32(w3, 12)
    }
}

// MARK: - Cipher

extension AESSlices {
    /// Encrypts the four bitsliced blocks with the expanded schedule (8 words per round key).
    @inline(__always)
    mutating func encrypt(_ skey: UnsafePointer<UInt64>, _ rounds: Int) {
        addRoundKey(skey)
        var r = 1
        while r < rounds {
            subBytes()
            shiftRows()
            mixColumns()
            addRoundKey(skey + 8 * r)
            r += 1
        }
        subBytes()
        shiftRows()
        addRoundKey(skey + 8 * rounds)
    }

    @inline(__always)
    mutating func decrypt(_ skey: UnsafePointer<UInt64>, _ rounds: Int) {
        addRoundKey(skey + 8 * rounds)
        var r = rounds - 1
        while r > 0 {
            invShiftRows()
            invSubBytes()
            addRoundKey(skey + 8 * r)
            invMixColumns()
            r -= 1
        }
        invShiftRows()
        invSubBytes()
        addRoundKey(skey)
    }
}

/// Wraps the whole-cipher calls so that the large round body is emitted once, not at every use.
enum AESPortableCore {
    /// Encrypts `count` (1...4) blocks from `input` to `output` (may be equal).
    @inline(never)
    static func encrypt(_ skey: UnsafePointer<UInt64>, _ rounds: Int,
                        _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ count: Int) {
        var q = AESSlices()
        for j in 0..<count { q.setBlock(j, input + 16 * j) }
        q.ortho()
        q.encrypt(skey, rounds)
        q.ortho()
        for j in 0..<count { q.getBlock(j, output + 16 * j) }
        wipe(&q)
    }

    /// Decrypts `count` (1...4) blocks.
    @inline(never)
    static func decrypt(_ skey: UnsafePointer<UInt64>, _ rounds: Int,
                        _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ count: Int) {
        var q = AESSlices()
        for j in 0..<count { q.setBlock(j, input + 16 * j) }
        q.ortho()
        q.decrypt(skey, rounds)
        q.ortho()
        for j in 0..<count { q.getBlock(j, output + 16 * j) }
        wipe(&q)
    }

    /// One block held as two 64-bit halves (little-endian loads of bytes 0..7 and 8..15).
    @inline(never)
    static func encryptOne(_ skey: UnsafePointer<UInt64>, _ rounds: Int, _ lo: UInt64, _ hi: UInt64) -> (UInt64, UInt64) {
        var q = AESSlices()
        let (a, b) = aesInterleaveIn(UInt32(truncatingIfNeeded: lo), UInt32(truncatingIfNeeded: lo >> 32),
                                     UInt32(truncatingIfNeeded: hi), UInt32(truncatingIfNeeded: hi >> 32))
        q.q0 = a; q.q4 = b
        q.ortho()
        q.encrypt(skey, rounds)
        q.ortho()
        let (w0, w1, w2, w3) = aesInterleaveOut(q.q0, q.q4)
        wipe(&q)
        return (UInt64(w0) | UInt64(w1) << 32, UInt64(w2) | UInt64(w3) << 32)
    }

    @inline(never)
    static func decryptOne(_ skey: UnsafePointer<UInt64>, _ rounds: Int, _ lo: UInt64, _ hi: UInt64) -> (UInt64, UInt64) {
        var q = AESSlices()
        let (a, b) = aesInterleaveIn(UInt32(truncatingIfNeeded: lo), UInt32(truncatingIfNeeded: lo >> 32),
                                     UInt32(truncatingIfNeeded: hi), UInt32(truncatingIfNeeded: hi >> 32))
        q.q0 = a; q.q4 = b
        q.ortho()
        q.decrypt(skey, rounds)
        q.ortho()
        let (w0, w1, w2, w3) = aesInterleaveOut(q.q0, q.q4)
        wipe(&q)
        return (UInt64(w0) | UInt64(w1) << 32, UInt64(w2) | UInt64(w3) << 32)
    }

    /// SubWord of the key schedule, through the same circuit (constant time).
    static func subWord(_ x: UInt32) -> UInt32 {
        var q = AESSlices()
        q.q0 = UInt64(x)
        q.ortho()
        q.subBytes()
        q.ortho()
        let out = UInt32(truncatingIfNeeded: q.q0)
        wipe(&q)
        return out
    }

    /// The FIPS-197 key expansion into `4 * (rounds + 1)` little-endian words at `w`. Returns the
    /// number of rounds, or 0 for a key length other than 16, 24, 32.
    static func expandWords(_ key: UnsafeRawPointer, _ keyLength: Int, _ w: UnsafeMutablePointer<UInt32>) -> Int {
        let rounds = aesRounds(keyLength: keyLength)
        guard rounds > 0 else { return 0 }
        aesExpandKeyWords(w, key: key, nk: keyLength / 4, rounds: rounds, subWord: subWord)
        return rounds
    }

    /// Expands a key into the bitsliced schedule: 8 words per round key, `8 * (rounds + 1)` words at
    /// `skey` (120 for AES-256). Every round key is replicated in the four block lanes.
    static func expandKey(_ key: UnsafeRawPointer, _ keyLength: Int, _ skey: UnsafeMutablePointer<UInt64>) -> Int {
        withScratch { scratch in
            let w = scratch.bindMemory(to: UInt32.self, capacity: 60)
            let rounds = expandWords(key, keyLength, w)
            guard rounds > 0 else { return 0 }
            for r in 0...rounds {
                var q = AESSlices()
                let (a, b) = aesInterleaveIn(w[4 * r], w[4 * r + 1], w[4 * r + 2], w[4 * r + 3])
                q.q0 = a; q.q1 = a; q.q2 = a; q.q3 = a
                q.q4 = b; q.q5 = b; q.q6 = b; q.q7 = b
                q.ortho()
                // After the transposition, word i holds bit i of every byte of the four lanes; the
                // lanes are identical, so each word is the round key's bit plane for all four blocks.
                let k = skey + 8 * r
                k[0] = q.q0; k[1] = q.q1; k[2] = q.q2; k[3] = q.q3
                k[4] = q.q4; k[5] = q.q5; k[6] = q.q6; k[7] = q.q7
                wipe(&q)
            }
            return rounds
        }
    }
}
