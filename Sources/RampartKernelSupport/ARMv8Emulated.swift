// The ARMv8 cryptography instructions the arm64 kernels use, in portable Swift with their architectural
// semantics (Arm Architecture Reference Manual for A-profile, section C7.2: the pseudocode of AESE,
// AESD, AESMC, AESIMC, PMULL, SHA1C/SHA1P/SHA1M, SHA1H, SHA1SU0, SHA1SU1, SHA256H, SHA256H2, SHA256SU0,
// SHA256SU1, SHA512H, SHA512H2, SHA512SU0, SHA512SU1, and the shared functions AESSubBytes,
// AESShiftRows, AESMixColumns, SHAchoose, SHAmajority, SHAparity, SHAhashSIGMA0/1, SHA256hash).
// Vectors as SIMD2<UInt64> (128 bits, byte i of the register is byte i of the value, little-endian
// lanes) and SIMD4<UInt32> (lane i is element i). Not constant time (the S-box is a table): for
// checking the kernels' logic on x86_64, never for secrets. Scripts/arm64-emulation.sh checks every
// function against the real instruction under qemu-aarch64.

import Swift

#if !arch(arm64)

/// The emulated instructions (not built for arm64, where the real ones run).
public enum ARMv8Emulated {
    // MARK: AES

    static let sbox: [UInt8] = {
        var inverse = [UInt8](repeating: 0, count: 256)
        func xtime(_ a: UInt8) -> UInt8 { (a << 1) ^ (a & 0x80 != 0 ? 0x1B : 0) }
        func mul(_ a: UInt8, _ b: UInt8) -> UInt8 {
            var a = a, b = b, r: UInt8 = 0
            while b != 0 { if b & 1 != 0 { r ^= a }; a = xtime(a); b >>= 1 }
            return r
        }
        for a in 1..<256 { for b in 1..<256 where mul(UInt8(a), UInt8(b)) == 1 { inverse[a] = UInt8(b); break } }
        return (0..<256).map { x in
            let b = inverse[x]
            var r: UInt8 = 0x63 ^ b
            for i in 1...4 { r ^= (b << UInt8(i)) | (b >> UInt8(8 - i)) }
            return r
        }
    }()
    static let inverseSbox: [UInt8] = {
        var t = [UInt8](repeating: 0, count: 256)
        for (i, s) in sbox.enumerated() { t[Int(s)] = UInt8(i) }
        return t
    }()

    static func bytes(_ v: SIMD2<UInt64>) -> [UInt8] { (0..<16).map { UInt8(truncatingIfNeeded: v[$0 / 8] >> (8 * ($0 % 8))) } }
    static func vector(_ b: [UInt8]) -> SIMD2<UInt64> {
        var v = SIMD2<UInt64>()
        for i in 0..<16 { v[i / 8] |= UInt64(b[i]) << (8 * (i % 8)) }
        return v
    }
    static func gmul(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var a = a, b = b, r: UInt8 = 0
        while b != 0 { if b & 1 != 0 { r ^= a }; a = (a << 1) ^ (a & 0x80 != 0 ? 0x1B : 0); b >>= 1 }
        return r
    }

    /// AESE: AESSubBytes(AESShiftRows(state ^ key)). ShiftRows takes byte 5i mod 16 to position i.
    public static func aese(_ s: SIMD2<UInt64>, _ k: SIMD2<UInt64>) -> SIMD2<UInt64> {
        let x = bytes(s ^ k)
        return vector((0..<16).map { sbox[Int(x[(5 * $0) % 16])] })
    }
    /// AESD: AESInvSubBytes(AESInvShiftRows(state ^ key)). InvShiftRows takes byte 13i mod 16.
    public static func aesd(_ s: SIMD2<UInt64>, _ k: SIMD2<UInt64>) -> SIMD2<UInt64> {
        let x = bytes(s ^ k)
        return vector((0..<16).map { inverseSbox[Int(x[(13 * $0) % 16])] })
    }
    static func mixColumns(_ s: SIMD2<UInt64>, _ m: (UInt8, UInt8, UInt8, UInt8)) -> SIMD2<UInt64> {
        let x = bytes(s)
        var out = [UInt8](repeating: 0, count: 16)
        for c in 0..<4 {
            let a = Array(x[4 * c..<4 * c + 4])
            for r in 0..<4 {
                out[4 * c + r] = gmul(a[r], m.0) ^ gmul(a[(r + 1) % 4], m.1) ^ gmul(a[(r + 2) % 4], m.2) ^ gmul(a[(r + 3) % 4], m.3)
            }
        }
        return vector(out)
    }
    /// AESMC: MixColumns (rows of 02 03 01 01).
    public static func aesmc(_ s: SIMD2<UInt64>) -> SIMD2<UInt64> { mixColumns(s, (2, 3, 1, 1)) }
    /// AESIMC: InvMixColumns (rows of 0e 0b 0d 09).
    public static func aesimc(_ s: SIMD2<UInt64>) -> SIMD2<UInt64> { mixColumns(s, (0x0E, 0x0B, 0x0D, 0x09)) }

    /// PMULL (64 × 64 → 128 bits, carry-less): lane 0 the low half of the product.
    public static func pmull(_ a: UInt64, _ b: UInt64) -> SIMD2<UInt64> {
        var lo: UInt64 = 0, hi: UInt64 = 0
        for i in 0..<64 where (b >> i) & 1 != 0 {
            lo ^= a << i
            if i > 0 { hi ^= a >> (64 - i) }
        }
        return SIMD2(lo, hi)
    }

    // MARK: SHA-1 and SHA-256

    static func rol(_ x: UInt32, _ n: UInt32) -> UInt32 { (x << n) | (x >> (32 - n)) }
    static func ror(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
    static func choose(_ x: UInt32, _ y: UInt32, _ z: UInt32) -> UInt32 { ((y ^ z) & x) ^ z }
    static func majority(_ x: UInt32, _ y: UInt32, _ z: UInt32) -> UInt32 { (x & y) | ((x | y) & z) }
    static func parity(_ x: UInt32, _ y: UInt32, _ z: UInt32) -> UInt32 { x ^ y ^ z }

    /// SHA1C, SHA1P, SHA1M: four rounds on X = abcd with Y = e, the function `f` of b, c, d each round;
    /// after each round (Y : X) rotates left by 32 bits.
    static func sha1Rounds(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ w: SIMD4<UInt32>,
                           _ f: (UInt32, UInt32, UInt32) -> UInt32) -> SIMD4<UInt32> {
        var x = abcd, y = e
        for i in 0..<4 {
            let t = f(x[1], x[2], x[3])
            y = y &+ rol(x[0], 5) &+ t &+ w[i]
            x[1] = rol(x[1], 30)
            (x, y) = (SIMD4(y, x[0], x[1], x[2]), x[3])
        }
        return x
    }
    public static func sha1c(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ w: SIMD4<UInt32>) -> SIMD4<UInt32> { sha1Rounds(abcd, e, w, choose) }
    public static func sha1p(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ w: SIMD4<UInt32>) -> SIMD4<UInt32> { sha1Rounds(abcd, e, w, parity) }
    public static func sha1m(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ w: SIMD4<UInt32>) -> SIMD4<UInt32> { sha1Rounds(abcd, e, w, majority) }
    /// SHA1H: rotate left by 30.
    public static func sha1h(_ x: UInt32) -> UInt32 { rol(x, 30) }
    /// SHA1SU0: (op2<63:0> : op1<127:64>) ^ op1 ^ op3.
    public static func sha1su0(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>, _ c: SIMD4<UInt32>) -> SIMD4<UInt32> {
        SIMD4(a[2], a[3], b[0], b[1]) ^ a ^ c
    }
    /// SHA1SU1: T = op1 ^ (op2 >> 32 bits); each element rotated by 1, the last also xored with element 0 rotated by 2.
    public static func sha1su1(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>) -> SIMD4<UInt32> {
        let t = a ^ SIMD4(b[1], b[2], b[3], 0)
        return SIMD4(rol(t[0], 1), rol(t[1], 1), rol(t[2], 1), rol(t[3], 1) ^ rol(t[0], 2))
    }

    /// SHA256hash: four rounds; X = abcd, Y = efgh; part 1 returns X, part 2 Y.
    static func sha256Hash(_ x0: SIMD4<UInt32>, _ y0: SIMD4<UInt32>, _ w: SIMD4<UInt32>, part1: Bool) -> SIMD4<UInt32> {
        var x = x0, y = y0
        for i in 0..<4 {
            let chs = choose(y[0], y[1], y[2])
            let maj = majority(x[0], x[1], x[2])
            let t = y[3] &+ (ror(y[0], 6) ^ ror(y[0], 11) ^ ror(y[0], 25)) &+ chs &+ w[i]
            x[3] = t &+ x[3]
            y[3] = t &+ (ror(x[0], 2) ^ ror(x[0], 13) ^ ror(x[0], 22)) &+ maj
            (y, x) = (SIMD4(x[3], y[0], y[1], y[2]), SIMD4(y[3], x[0], x[1], x[2]))
        }
        return part1 ? x : y
    }
    /// SHA256H Qd(abcd), Qn(efgh), Vm: the new abcd.
    public static func sha256h(_ abcd: SIMD4<UInt32>, _ efgh: SIMD4<UInt32>, _ w: SIMD4<UInt32>) -> SIMD4<UInt32> {
        sha256Hash(abcd, efgh, w, part1: true)
    }
    /// SHA256H2 Qd(efgh), Qn(abcd), Vm: the new efgh.
    public static func sha256h2(_ efgh: SIMD4<UInt32>, _ abcd: SIMD4<UInt32>, _ w: SIMD4<UInt32>) -> SIMD4<UInt32> {
        sha256Hash(abcd, efgh, w, part1: false)
    }
    /// SHA256SU0: element e = op1[e] + σ0(T[e]) with T = op2<31:0> : op1<127:32>.
    public static func sha256su0(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>) -> SIMD4<UInt32> {
        let t = SIMD4(a[1], a[2], a[3], b[0])
        var r = SIMD4<UInt32>()
        for e in 0..<4 { r[e] = a[e] &+ (ror(t[e], 7) ^ ror(t[e], 18) ^ (t[e] >> 3)) }
        return r
    }
    /// SHA256SU1: σ1 of op3's high elements, then of the result's low elements.
    public static func sha256su1(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>, _ c: SIMD4<UInt32>) -> SIMD4<UInt32> {
        let t0 = SIMD4(b[1], b[2], b[3], c[0])
        func sigma1(_ x: UInt32) -> UInt32 { ror(x, 17) ^ ror(x, 19) ^ (x >> 10) }
        var r = SIMD4<UInt32>()
        r[0] = sigma1(c[2]) &+ a[0] &+ t0[0]
        r[1] = sigma1(c[3]) &+ a[1] &+ t0[1]
        r[2] = sigma1(r[0]) &+ a[2] &+ t0[2]
        r[3] = sigma1(r[1]) &+ a[3] &+ t0[3]
        return r
    }

    // MARK: SHA-512

    static func ror64(_ x: UInt64, _ n: UInt64) -> UInt64 { (x >> n) | (x << (64 - n)) }

    /// SHA512H Qd(W), Qn(X), Vm(Y).
    public static func sha512h(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> {
        var sigma1 = ror64(y[1], 14) ^ ror64(y[1], 18) ^ ror64(y[1], 41)
        var hi = (y[1] & x[0]) ^ (~y[1] & x[1])
        hi = hi &+ sigma1 &+ w[1]
        let tmp = hi &+ y[0]
        sigma1 = ror64(tmp, 14) ^ ror64(tmp, 18) ^ ror64(tmp, 41)
        var lo = (tmp & y[1]) ^ (~tmp & x[0])
        lo = lo &+ sigma1 &+ w[0]
        return SIMD2(lo, hi)
    }
    /// SHA512H2 Qd(W), Qn(X), Vm(Y).
    public static func sha512h2(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> {
        var sigma0 = ror64(y[0], 28) ^ ror64(y[0], 34) ^ ror64(y[0], 39)
        var hi = (x[0] & y[1]) ^ (x[0] & y[0]) ^ (y[1] & y[0])
        hi = hi &+ sigma0 &+ w[1]
        sigma0 = ror64(hi, 28) ^ ror64(hi, 34) ^ ror64(hi, 39)
        var lo = (hi & y[0]) ^ (hi & y[1]) ^ (y[1] & y[0])
        lo = lo &+ sigma0 &+ w[0]
        return SIMD2(lo, hi)
    }
    /// SHA512SU0 Vd(W), Vn(X).
    public static func sha512su0(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>) -> SIMD2<UInt64> {
        func sigma0(_ v: UInt64) -> UInt64 { ror64(v, 1) ^ ror64(v, 8) ^ (v >> 7) }
        return SIMD2(w[0] &+ sigma0(w[1]), w[1] &+ sigma0(x[0]))
    }
    /// SHA512SU1 Vd(W), Vn(X), Vm(Y).
    public static func sha512su1(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> {
        func sigma1(_ v: UInt64) -> UInt64 { ror64(v, 19) ^ ror64(v, 61) ^ (v >> 6) }
        return SIMD2(w[0] &+ sigma1(x[0]) &+ y[0], w[1] &+ sigma1(x[1]) &+ y[1])
    }
}

// MARK: - The kernels' wrappers on this backend (ARMv8Instructions.swift has the real ones)

#if !RAMPART_TYPECHECK_ARM64

@_alwaysEmitIntoClient @inline(__always) public func armAESE(_ s: SIMD2<UInt64>, _ k: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.aese(s, k) }
@_alwaysEmitIntoClient @inline(__always) public func armAESD(_ s: SIMD2<UInt64>, _ k: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.aesd(s, k) }
@_alwaysEmitIntoClient @inline(__always) public func armAESMC(_ s: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.aesmc(s) }
@_alwaysEmitIntoClient @inline(__always) public func armAESIMC(_ s: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.aesimc(s) }
@_alwaysEmitIntoClient @inline(__always) public func armPMULL(_ a: UInt64, _ b: UInt64) -> SIMD2<UInt64> { ARMv8Emulated.pmull(a, b) }

@_alwaysEmitIntoClient @inline(__always) public func armSHA256H(_ abcd: SIMD4<UInt32>, _ efgh: SIMD4<UInt32>, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha256h(abcd, efgh, wk) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA256H2(_ efgh: SIMD4<UInt32>, _ abcd: SIMD4<UInt32>, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha256h2(efgh, abcd, wk) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA256SU0(_ w0: SIMD4<UInt32>, _ w1: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha256su0(w0, w1) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA256SU1(_ x: SIMD4<UInt32>, _ w2: SIMD4<UInt32>, _ w3: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha256su1(x, w2, w3) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA1C(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha1c(abcd, e, wk) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA1P(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha1p(abcd, e, wk) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA1M(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha1m(abcd, e, wk) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA1H(_ a: UInt32) -> UInt32 { ARMv8Emulated.sha1h(a) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA1SU0(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>, _ c: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha1su0(a, b, c) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA1SU1(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha1su1(a, b) }

@_alwaysEmitIntoClient @inline(__always) public func armSHA512H(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.sha512h(w, x, y) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA512H2(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.sha512h2(w, x, y) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA512SU0(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.sha512su0(w, x) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA512SU1(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.sha512su1(w, x, y) }

#endif

#endif
