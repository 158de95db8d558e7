// The X25519 kernel (radix 2^64 with mulx, Kernels.x25519) against the portable radix-2^51 ladder on
// random and edge inputs: u-coordinates 0, 1, p − 1, p, p + 1, 2^255 − 1, the small-order points,
// non-canonical values and the same with the ignored top bit set; scalars at the clamping edges.
// On a machine without the kernel (or with the portable path forced) both sides run the portable code.

import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

/// `v` as 32 little-endian bytes, from four 64-bit words.
private func le(_ w: [UInt64]) -> [UInt8] {
    w.flatMap { x in (0..<8).map { UInt8(truncatingIfNeeded: x >> (8 * $0)) } }
}

/// u-coordinates at the edges of the field and of the radix-2^64 representation.
private func edgePoints() -> [[UInt8]] {
    let pLow: UInt64 = 0xFFFF_FFFF_FFFF_FFED, top: UInt64 = 0x7FFF_FFFF_FFFF_FFFF, m = UInt64.max
    var out: [[UInt8]] = [
        le([0, 0, 0, 0]), le([1, 0, 0, 0]), le([9, 0, 0, 0]),
        le([pLow - 1, m, m, top]),          // p − 1
        le([pLow, m, m, top]),              // p
        le([pLow + 1, m, m, top]),          // p + 1
        le([pLow + 18, m, m, top]),         // 2^255 − 1
        le([m, m, m, m]),                   // 2^256 − 1 (top bit ignored: 2^255 − 1)
        le([m, 0, 0, 0]), le([0, m, 0, 0]), le([0, 0, m, 0]), le([0, 0, 0, top]),
        le([0, 0, 0, 1 << 63]),             // only the ignored bit: u = 0
        le([37, 0, 0, 0]), le([38, 0, 0, 0]), le([m - 37, m, m, m]),
        // The points of order 8 (and the same plus p, non-canonical).
        hexBytes("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
        hexBytes("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
        hexBytes("cdeb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b880"),
        hexBytes("4c9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f11d7"),
        hexBytes("d9ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
        hexBytes("daffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
        hexBytes("dbffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
    ]
    // Each of the above with the ignored top bit flipped.
    out += out.map { u in var v = u; v[31] ^= 0x80; return v }
    return out
}

/// Scalars at the edges (clamping makes them all valid).
private func edgeScalars() -> [[UInt8]] {
    [[UInt8](repeating: 0, count: 32), [UInt8](repeating: 0xFF, count: 32),
     [UInt8](repeating: 0x55, count: 32), [UInt8](repeating: 0xAA, count: 32),
     le([8, 0, 0, 1 << 62]), le([UInt64.max - 7, UInt64.max, UInt64.max, UInt64.max >> 1])]
}

@Suite("X25519 kernel")
struct X25519KernelTests {
    @Test("The kernel equals the portable ladder on edge points and scalars")
    func edgeInputs() throws {
        for k in edgeScalars() {
            for u in edgePoints() {
                let hw = try Curve25519.scalarMultiply(scalar: k, point: u, backend: .hardware)
                let sw = try Curve25519.scalarMultiply(scalar: k, point: u, backend: .portable)
                #expect(hw == sw, "k=\(Hex.encode(k)) u=\(Hex.encode(u))")
            }
            let hw = try Curve25519.scalarMultiply(scalar: k, point: [UInt8]?.none, backend: .hardware)
            #expect(hw == (try Curve25519.scalarMultiply(scalar: k, point: [UInt8]?.none, backend: .portable)))
        }
    }

    @Test("The kernel equals the portable ladder on random inputs")
    func randomInputs() throws {
        var g = SplitMix64(seed: 0x2551_9B41)
        for i in 0..<300 {
            let k = g.bytes(32)
            var u = g.bytes(32)
            // Push some words to the edges of their range (carries through every limb).
            if i % 3 == 0 { for j in 8..<31 { u[j] = 0xFF } }
            if i % 5 == 0 { for j in 0..<8 { u[j] = 0xFF } }
            let hw = try Curve25519.scalarMultiply(scalar: k, point: u, backend: .hardware)
            let sw = try Curve25519.scalarMultiply(scalar: k, point: u, backend: .portable)
            #expect(hw == sw, "k=\(Hex.encode(k)) u=\(Hex.encode(u))")
            let pubHW = try Curve25519.scalarMultiply(scalar: k, point: [UInt8]?.none, backend: .hardware)
            let pubSW = try Curve25519.scalarMultiply(scalar: k, point: [UInt8]?.none, backend: .portable)
            #expect(pubHW == pubSW)
        }
    }

    @Test("Small-order points give zero on both paths, and the key agreement refuses them")
    func smallOrder() throws {
        let k = [UInt8](repeating: 0x42, count: 32), zero = [UInt8](repeating: 0, count: 32)
        for u in ["0000000000000000000000000000000000000000000000000000000000000000",
                  "0100000000000000000000000000000000000000000000000000000000000000",
                  "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
                  "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
                  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
                  "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
                  "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"] {
            for b in [Backend.hardware, .portable] {
                #expect(try Curve25519.scalarMultiply(scalar: k, point: hexBytes(u), backend: b) == zero, "\(b) u=\(u)")
            }
        }
    }

    @Test("The registry names the kernel")
    func registry() {
        #expect(Kernels.all.contains { $0.primitive == "x25519" })
        if Kernels.x25519.isActive { #expect(Kernels.x25519.selected == "bmi2+adx") }
    }
}
