// Batches of X25519 (Curve25519.scalarMultiply(scalars:points:), PrivateKey.sharedSecretsFromKeyAgreement)
// against one-by-one portable multiplications: every batch size from 0 to 19 (full batches of eight,
// padded ones, and the remainder that runs one by one), every lane kernel this machine has, random and
// edge inputs (the points and scalars at the edges of both radix representations).

import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

/// `v` as 32 little-endian bytes, from four 64-bit words.
private func le(_ w: [UInt64]) -> [UInt8] {
    w.flatMap { x in (0..<8).map { UInt8(truncatingIfNeeded: x >> (8 * $0)) } }
}

/// u-coordinates at the edges of the field, of radix 2^51 and of radix 2^25.5, and small-order points.
private let edgePoints: [[UInt8]] = {
    let pLow: UInt64 = 0xFFFF_FFFF_FFFF_FFED, top: UInt64 = 0x7FFF_FFFF_FFFF_FFFF, m = UInt64.max
    var out: [[UInt8]] = [
        le([0, 0, 0, 0]), le([1, 0, 0, 0]), le([9, 0, 0, 0]),
        le([pLow - 1, m, m, top]), le([pLow, m, m, top]), le([pLow + 1, m, m, top]), le([pLow + 18, m, m, top]),
        le([m, m, m, m]), le([m, 0, 0, 0]), le([0, m, 0, 0]), le([0, 0, m, 0]), le([0, 0, 0, top]),
        le([(1 << 26) - 1, 0, 0, 0]), le([1 << 26, 0, 0, 0]), le([(1 << 51) - 1, 0, 0, 0]),
        le([0x3FF_FFFF_FC00_0000, 0, 0, 0]),
        hexBytes("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
        hexBytes("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
        hexBytes("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    ]
    out += out.map { u in var v = u; v[31] ^= 0x80; return v }
    return out
}()

private let edgeScalars: [[UInt8]] = [
    [UInt8](repeating: 0, count: 32), [UInt8](repeating: 0xFF, count: 32),
    [UInt8](repeating: 0x55, count: 32), [UInt8](repeating: 0xAA, count: 32),
    le([8, 0, 0, 1 << 62]), le([UInt64.max - 7, UInt64.max, UInt64.max, UInt64.max >> 1]),
]

/// One by one on the portable ladder: what every batch must equal.
private func oneByOne(_ scalars: [[UInt8]], _ points: [[UInt8]]) throws -> [[UInt8]] {
    try zip(scalars, points).map { try Curve25519.scalarMultiply(scalar: $0, point: $1, backend: .portable) }
}

/// The batch through the registry's choice, the portable backend, and each lane kernel.
private func everyWay(_ scalars: [[UInt8]], _ points: [[UInt8]]) throws -> [(String, [[UInt8]])] {
    var out = [("default", try Curve25519.scalarMultiply(scalars: scalars, points: points)),
               ("portable", try Curve25519.scalarMultiply(scalars: scalars, points: points, backend: .portable))]
    for kernel in Curve25519.x25519LaneKernels {
        out.append((kernel, try Curve25519.scalarMultiply(scalars: scalars, points: points, backend: .hardware, laneKernel: kernel)))
    }
    return out
}

@Suite("X25519 batches")
struct X25519BatchTests {
    @Test("Every batch size from 0 to 19 equals one-by-one multiplication, on every lane kernel")
    func sizes() throws {
        var g = SplitMix64(seed: 0x8A7C_4E5)
        for n in 0...19 {
            let scalars = (0..<n).map { _ in g.bytes(32) }
            let points = (0..<n).map { i -> [UInt8] in
                var u = g.bytes(32)
                if i % 3 == 0 { for j in 8..<31 { u[j] = 0xFF } }   // carries through every limb
                return u
            }
            let want = try oneByOne(scalars, points)
            for (way, got) in try everyWay(scalars, points) { #expect(got == want, "n=\(n) \(way)") }
        }
    }

    @Test("Edge points and scalars, eight different pairs per batch, equal one-by-one multiplication")
    func edges() throws {
        var scalars: [[UInt8]] = [], points: [[UInt8]] = []
        for (i, u) in edgePoints.enumerated() {
            for (j, k) in edgeScalars.enumerated() where (i + j) % 2 == 0 {
                scalars.append(k)
                points.append(u)
            }
        }
        let want = try oneByOne(scalars, points)
        for (way, got) in try everyWay(scalars, points) {
            #expect(got.count == want.count)
            for i in 0..<min(got.count, want.count) {
                #expect(got[i] == want[i], "\(way) k=\(Hex.encode(scalars[i])) u=\(Hex.encode(points[i]))")
            }
        }
    }

    @Test("RFC 7748 §5.2 vectors at every lane position")
    func rfcVectorsInEveryLane() throws {
        let k1 = hexBytes("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4")
        let u1 = hexBytes("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c")
        let r1 = hexBytes("c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552")
        let k2 = hexBytes("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d")
        let u2 = hexBytes("e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493")
        let r2 = hexBytes("95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957")
        for lane in 0..<8 {
            var scalars = (0..<8).map { _ in k2 }, points = (0..<8).map { _ in u2 }
            scalars[lane] = k1
            points[lane] = u1
            for (way, got) in try everyWay(scalars, points) {
                for i in 0..<8 { #expect(got[i] == (i == lane ? r1 : r2), "\(way) lane \(i)") }
            }
        }
    }

    @Test("Fan-out key agreement equals one shared secret at a time; a small-order peer fails the batch")
    func fanOut() throws {
        var g = SplitMix64(seed: 0xFA_2551)
        let me = Curve25519.KeyAgreement.PrivateKey(using: &g)
        for n in [0, 1, 2, 3, 8, 9, 13] {
            let peers = (0..<n).map { _ in Curve25519.KeyAgreement.PrivateKey(using: &g).publicKey }
            let batch = try me.sharedSecretsFromKeyAgreement(with: peers)
            #expect(batch.count == n)
            for i in 0..<n { #expect(batch[i] == (try me.sharedSecretFromKeyAgreement(with: peers[i])), "n=\(n) peer \(i)") }
        }
        var peers = (0..<9).map { _ in Curve25519.KeyAgreement.PrivateKey(using: &g).publicKey }
        for bad in [0, 5, 8] {
            peers[bad] = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: hexBytes(
                "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"))
            #expect(throws: RampartError.invalidPublicKey) { try me.sharedSecretsFromKeyAgreement(with: peers) }
            peers[bad] = Curve25519.KeyAgreement.PrivateKey(using: &g).publicKey
        }
        #expect(try me.sharedSecretsFromKeyAgreement(with: peers).count == 9)
    }

    @Test("Mismatched counts and wrong lengths are typed errors")
    func badInput() throws {
        let k = [UInt8](repeating: 1, count: 32), u = [UInt8](repeating: 9, count: 32)
        #expect(throws: RampartError.invalidParameter("points: one per scalar")) { try Curve25519.scalarMultiply(scalars: [k, k], points: [u]) }
        #expect(throws: RampartError.invalidKeyLength) { try Curve25519.scalarMultiply(scalars: [k, Array(k.prefix(31))], points: [u, u]) }
        #expect(throws: RampartError.invalidPublicKey) { try Curve25519.scalarMultiply(scalars: [k, k, k], points: [u, u, u + [0]]) }
        #expect(try Curve25519.scalarMultiply(scalars: [], points: []) == [])
    }

    @Test("The registry names the lane kernel")
    func registry() {
        if Kernels.x25519Lanes.isActive {
            // Only the AVX-512 build is selected (the AVX2 one is no faster than one by one).
            #expect(Kernels.x25519Lanes.selected == "avx512-x8")
            #expect(Curve25519.x25519LaneKernels.first == Kernels.x25519Lanes.selected)
        } else {
            #expect(Kernels.x25519Lanes.selected == "portable")
        }
    }
}
