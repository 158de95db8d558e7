// The Montgomery kernels on raw limbs: the dispatched kernel (BMI2/ADX, with the generated unrolled
// kernels for 16 and 32 limbs) against the portable one and against BigUInt arithmetic, for limb
// counts around the unrolled sizes and for moduli and values at the edges.

import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

/// n-limb moduli of several shapes: random with the top bit set, close to 2^(64n) (all-ones limbs),
/// just above 2^(64(n−1)) (a small top limb), sparse (2^(64n−1) + 1), random low limbs under an
/// all-ones top half.
func montgomeryTestModuli(_ n: Int, _ g: inout some RandomNumberGenerator, random count: Int) -> [[UInt64]] {
    var out: [[UInt64]] = []
    for k in 0..<count {
        var m = (0..<n).map { _ in UInt64.random(in: 0...UInt64.max, using: &g) }
        switch k % 5 {
        case 0: m[n - 1] |= 1 << 63
        case 1: m[n - 1] = UInt64.random(in: 1...3, using: &g)
        case 2: for j in (n / 2)..<n { m[j] = .max }
        case 3: m[n - 1] = UInt64.random(in: 1...UInt64.max, using: &g)
        default: break
        }
        if m[n - 1] == 0 { m[n - 1] = 1 }
        m[0] |= 1
        if n == 1 && m[0] < 3 { m[0] = 3 }
        out.append(m)
    }
    out.append([UInt64](repeating: .max, count: n))                      // 2^(64n) − 1
    var sparse = [UInt64](repeating: 0, count: n)
    sparse[0] = 1; sparse[n - 1] |= 1 << 63
    out.append(sparse)                                                   // 2^(64n−1) + 1
    var small = [UInt64](repeating: 0, count: n)
    small[0] = .max; small[n - 1] |= 1
    out.append(small)                                                    // 2^(64(n−1)) + 2^64 − 1
    var nearTop = [UInt64](repeating: .max, count: n)
    nearTop[0] = .max - 2                                                // 2^(64n) − 3
    out.append(nearTop)
    return out
}

/// Values below `m`: random, 0, 1, m − 1, m − 2 and all-ones limbs reduced.
func montgomeryTestValues(_ mod: Modulus, _ g: inout some RandomNumberGenerator, random count: Int) -> [BigUInt] {
    let n = mod.limbCount
    var out: [BigUInt] = []
    for _ in 0..<count {
        out.append(mod.reduce(BigUInt(limbs: (0..<n).map { _ in UInt64.random(in: 0...UInt64.max, using: &g) })))
    }
    let m = mod.value
    out.append(BigUInt())
    out.append(BigUInt(1))
    out.append(try! m - BigUInt(1))
    if m > BigUInt(2) { out.append(try! m - BigUInt(2)) }
    out.append(mod.reduce(BigUInt(limbs: [UInt64](repeating: .max, count: n))))
    return out
}

@Suite struct BigIntMontgomeryKernelTests {
    static let limbCounts = [1, 2, 3, 4, 5, 8, 15, 16, 17, 24, 31, 32, 33]

    @Test(arguments: limbCounts)
    func kernelsAgree(n: Int) throws {
        var g = SplitMix64(seed: 0x4D6F_6E74 &+ UInt64(n))
        for mLimbs in montgomeryTestModuli(n, &g, random: 10) {
            let mod = try Modulus(BigUInt(limbs: mLimbs))
            #expect(mod.limbCount == n)
            let m = mod.value
            let r = BigUInt(1) << (64 * n)
            let values = montgomeryTestValues(mod, &g, random: 6)
            for (i, a) in values.enumerated() {
                let b = values[(i * 7 + 3) % values.count]
                let hw = mod.montgomeryProduct(a, b, backend: .hardware)
                let sw = mod.montgomeryProduct(a, b, backend: .portable)
                #expect(hw == sw, "mul n=\(n) m=\(m)")
                // hw · R ≡ a · b (mod m), and hw < m.
                #expect(hw < m)
                #expect(try (hw * r).remainder(dividingBy: m) == (a * b).remainder(dividingBy: m), "mul n=\(n) m=\(m)")
                let sq = mod.montgomerySquare(a, backend: .hardware)
                #expect(sq == mod.montgomeryProduct(a, a, backend: .hardware), "square n=\(n) m=\(m)")
                #expect(sq == mod.montgomerySquare(a, backend: .portable), "square n=\(n) m=\(m)")
            }
            // The first operand may be any value below R.
            let top = BigUInt(limbs: [UInt64](repeating: .max, count: n))
            for b in values.prefix(3) {
                let hw = mod.montgomeryProduct(top, b, backend: .hardware)
                #expect(hw == mod.montgomeryProduct(top, b, backend: .portable))
                #expect(try (hw * r).remainder(dividingBy: m) == (top * b).remainder(dividingBy: m))
            }
        }
    }
}
