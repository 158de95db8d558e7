// The emulated ARMv8 cryptography instructions (RampartKernelSupport/ARMv8Emulated.swift) checked on
// their own against answers that owe nothing to them or to the kernels built on them: FIPS 197's
// round-by-round states (appendix C.1, AES-128), the portable GHASH's carry-less product (a different
// algorithm: integer multiplication of operands with holes), and FIPS 180-4's SHA-256 example "abc"
// (the working variables after rounds t = 0…3, computed here from the standard's round function, and
// the ones the standard's worked example prints). The kernels' end-to-end tests (KernelRegistryTests,
// through forEachImplementation) run the same instructions inside whole kernels; this file pins each
// instruction so that a wrong one is named, not just a wrong digest. Scripts/arm64-emulation.sh also
// compares every emulated instruction with the real one under qemu-aarch64.

#if !arch(arm64)
@testable import Rampart
internal import RampartKernelSupport
import RampartTestSupport
import Testing

@Suite("Emulated ARMv8 instructions")
struct ARMv8EmulatedTests {
    typealias E = ARMv8Emulated

    /// A 128-bit register from its 16 bytes in memory order (byte 0 is the low byte of lane 0).
    static func reg(_ hex: String) -> SIMD2<UInt64> {
        let b = hexBytes(hex)
        var v = SIMD2<UInt64>()
        for i in 0..<16 { v[i / 8] |= UInt64(b[i]) << (8 * (i % 8)) }
        return v
    }

    // FIPS 197, appendix C.1 (AES-128, key 000102…0f, plaintext 00112233…ff).
    static let key0 = reg("000102030405060708090a0b0c0d0e0f")
    static let key1 = reg("d6aa74fdd2af72fadaa678f1d6ab76fe")
    static let key9 = reg("549932d1f08557681093ed9cbe2c974e")
    static let key10 = reg("13111d7fe3944a17f307a78b4d2b30c5")

    /// AESE is AddRoundKey, SubBytes, ShiftRows; AESMC is MixColumns: round 1 of the cipher, state by
    /// state (round[1].s_row, .m_col, then round[2].start after the round key).
    @Test func aesRoundAgainstFIPS197() {
        let input = Self.reg("00112233445566778899aabbccddeeff")
        let sRow = E.aese(input, Self.key0)
        #expect(sRow == Self.reg("6353e08c0960e104cd70b751bacad0e7"))
        let mCol = E.aesmc(sRow)
        #expect(mCol == Self.reg("5f72641557f5bc92f7be3b291db9f91a"))
        #expect(mCol ^ Self.key1 == Self.reg("89d810e8855ace682d1843d8cb128fe4"))
    }

    /// AESD is AddRoundKey, InvShiftRows, InvSubBytes; AESIMC is InvMixColumns: round 1 of the inverse
    /// cipher (round[1].is_box, .ik_add, then round[2].istart).
    @Test func aesInverseRoundAgainstFIPS197() {
        let output = Self.reg("69c4e0d86a7b0430d8cdb78070b4c55a")
        let isBox = E.aesd(output, Self.key10)
        #expect(isBox == Self.reg("bd6e7c3df2b5779e0b61216e8b10b689"))
        let ikAdd = isBox ^ Self.key9
        #expect(ikAdd == Self.reg("e9f74eec023020f61bf2ccf2353c21c7"))
        #expect(E.aesimc(ikAdd) == Self.reg("54d990a16ba09ab596bbf40ea111702f"))
        // AESIMC undoes AESMC on any state.
        #expect(E.aesimc(E.aesmc(output)) == output)
    }

    /// PMULL (64 × 64 → 128 carry-less) against the portable GHASH's product: its low half directly,
    /// its high half from the bit-reversed operands, on edge values and a seeded sample.
    @Test func pmullAgainstPortableCarrylessProduct() {
        var operands: [UInt64] = [0, 1, 2, 3, 0x8000_0000_0000_0000, ~0, 0xc200_0000_0000_0000,
                                  0x5555_5555_5555_5555, 0xaaaa_aaaa_aaaa_aaaa, 0x0123_4567_89ab_cdef]
        var x: UInt64 = 0x9e37_79b9_7f4a_7c15
        for _ in 0..<40 {
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            operands.append(x ^ (x >> 29))
        }
        for a in operands {
            for b in operands {
                let low = clmulLow64(a, b)
                let high = reverseBits64(clmulLow64(reverseBits64(a), reverseBits64(b))) >> 1
                #expect(E.pmull(a, b) == SIMD2(low, high), "pmull(\(a), \(b))")
            }
        }
        // The product's top bit is always clear (the degree is at most 126).
        #expect(E.pmull(~0, ~0)[1] >> 63 == 0)
    }

    /// SHA256H/SHA256H2 run four rounds: from the initial hash value with W[t] + K[t] of the padded
    /// message "abc", they give FIPS 180-4's working variables after t = 3.
    @Test func sha256hAgainstFIPS180Rounds() {
        let abcd = SIMD4<UInt32>(0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a)
        let efgh = SIMD4<UInt32>(0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)
        // W[0] = "abc" ‖ 0x80, W[1…3] = 0; K[0…3].
        let wk = SIMD4<UInt32>(0x6162_6380, 0, 0, 0) &+ SIMD4(0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5)
        // The standard's round function, written out (FIPS 180-4 §6.2.2 step 3), one round at a time.
        var v = [abcd[0], abcd[1], abcd[2], abcd[3], efgh[0], efgh[1], efgh[2], efgh[3]]
        func ror(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
        var rows: [[UInt32]] = []
        for t in 0..<4 {
            let (a, b, c, d, e, f, g, h) = (v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7])
            let t1 = h &+ (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) &+ ((e & f) ^ (~e & g)) &+ wk[t]
            let t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
            v = [t1 &+ t2, a, b, c, d &+ t1, e, f, g]
            rows.append(v)
        }
        // FIPS 180-4's example (SHA256.pdf, "abc"), t = 0 and t = 3, as printed.
        #expect(rows[0] == [0x5d6a_ebcd, 0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xfa2a_4622, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab])
        #expect(rows[3] == [0xd550_f666, 0xc8c3_47a7, 0x5a6a_d9ad, 0x5d6a_ebcd, 0x24e0_0850, 0xf929_39eb, 0x78ce_7989, 0xfa2a_4622])
        // SHA256H's X = abcd (a in element 0), Y = efgh.
        let newABCD = E.sha256h(abcd, efgh, wk)
        let newEFGH = E.sha256h2(efgh, abcd, wk)
        #expect(newABCD == SIMD4(rows[3][0], rows[3][1], rows[3][2], rows[3][3]))
        #expect(newEFGH == SIMD4(rows[3][4], rows[3][5], rows[3][6], rows[3][7]))
    }

    /// SHA256SU0/SU1 extend the schedule: W[16…19] of "abc" from W[0…15], against the standard's
    /// W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16].
    @Test func sha256ScheduleAgainstFIPS180() {
        var w = [UInt32](repeating: 0, count: 20)
        w[0] = 0x6162_6380; w[15] = 24
        func ror(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
        for t in 16..<20 {
            let s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = s1 &+ w[t - 7] &+ s0 &+ w[t - 16]
        }
        let q0 = SIMD4(w[0], w[1], w[2], w[3]), q1 = SIMD4(w[4], w[5], w[6], w[7])
        let q2 = SIMD4(w[8], w[9], w[10], w[11]), q3 = SIMD4(w[12], w[13], w[14], w[15])
        let next = E.sha256su1(E.sha256su0(q0, q1), q2, q3)
        #expect(next == SIMD4(w[16], w[17], w[18], w[19]))
    }
}
#endif
