// X25519's portable implementations as the registry sees them (Platform/Registry.swift), their
// known-answer self-tests (RFC 7748 §5.2) and the fault switch's corrupted forms. The kernels declare
// their own conformances (RampartAccelBMI2/X25519BMI2.swift, RampartAccelAVX2 and RampartAccelAVX512's
// X25519LanesEntry.swift).

internal import RampartKernelSupport

/// The portable radix-2^51 ladder.
enum X25519Portable: X25519Implementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static func scalarMultiply(_ out: UnsafeMutableRawPointer, _ k0: UInt64, _ k1: UInt64, _ k2: UInt64, _ k3: UInt64,
                               _ point: UnsafeRawPointer?) {
        x25519Ladder(out, k0, k1, k2, k3, point)
    }
}

/// No lane kernel: one pair per call on the portable ladder (x25519Batch runs the pairs one by one on
/// their backend instead when this is selected).
enum X25519LanesPortable: X25519LanesImplementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static let lanes = 1
    static func scalarMultiply(_ result: UnsafeMutablePointer<UInt64>, _ points: UnsafePointer<UInt64>,
                               _ scalars: UnsafePointer<UInt64>) {
        // Radix 2^25.5 to bytes, the ladder, and back.
        @inline(__always) func limb(_ t: Int) -> UInt64 { points[2 * t] &+ (points[2 * t + 1] << 26) }
        var x = Field25519(limb(0), limb(1), limb(2), limb(3), limb(4))
        var u = [UInt8](repeating: 0, count: 32), r = [UInt8](repeating: 0, count: 32)
        u.withUnsafeMutableBytes { x.store($0.baseAddress!) }
        u.withUnsafeBytes { up in
            r.withUnsafeMutableBytes { x25519Ladder($0.baseAddress!, scalars[0], scalars[1], scalars[2], scalars[3], up.baseAddress!) }
        }
        var y = r.withUnsafeBytes { Field25519(bytes: $0.baseAddress!) }
        for (t, l) in [y.l0, y.l1, y.l2, y.l3, y.l4].enumerated() {
            result[2 * t] = l & ((1 << 26) - 1)
            result[2 * t + 1] = l >> 26
        }
        wipe(&x); wipe(&y)
        u.withUnsafeMutableBytes { secureZero($0) }
        r.withUnsafeMutableBytes { secureZero($0) }
    }
}

/// RFC 7748 §5.2, the first vector.
private let rfc7748Scalar: [UInt8] = hexBytes("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4")
private let rfc7748Point: [UInt8] = hexBytes("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c")
private let rfc7748Result: [UInt8] = hexBytes("c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552")

private func hexBytes(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var it = s.utf8.makeIterator()
    func nibble(_ c: UInt8) -> UInt8 { c <= 0x39 ? c - 0x30 : c - 0x57 }
    while let h = it.next(), let l = it.next() { out.append(nibble(h) << 4 | nibble(l)) }
    return out
}

/// The RFC's scalar as clamped words.
private func clampedWords(_ s: [UInt8]) -> (UInt64, UInt64, UInt64, UInt64) {
    s.withUnsafeBytes { p in
        (UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 0, as: UInt64.self)) & ~7,
         UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
         UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
         (UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)) & ((1 << 63) - 1)) | (1 << 62))
    }
}

func x25519SelfTest(_ impl: any X25519Implementation.Type) -> Bool {
    let k = clampedWords(rfc7748Scalar)
    var out = [UInt8](repeating: 0, count: 32)
    out.withUnsafeMutableBytes { o in rfc7748Point.withUnsafeBytes { impl.scalarMultiply(o.baseAddress!, k.0, k.1, k.2, k.3, $0.baseAddress!) } }
    return out == rfc7748Result
}

/// The RFC's pair in every lane.
func x25519LanesSelfTest(_ impl: any X25519LanesImplementation.Type) -> Bool {
    let lanes = impl.lanes
    let k = clampedWords(rfc7748Scalar)
    let x = rfc7748Point.withUnsafeBytes { Field25519(bytes: $0.baseAddress!) }
    var scalars = [UInt64](repeating: 0, count: 4 * lanes)
    var points = [UInt64](repeating: 0, count: 10 * lanes)
    var result = [UInt64](repeating: 0, count: 10 * lanes)
    for j in 0..<lanes {
        scalars[j] = k.0; scalars[lanes + j] = k.1; scalars[2 * lanes + j] = k.2; scalars[3 * lanes + j] = k.3
        for (t, l) in [x.l0, x.l1, x.l2, x.l3, x.l4].enumerated() {
            points[2 * t * lanes + j] = l & ((1 << 26) - 1)
            points[(2 * t + 1) * lanes + j] = l >> 26
        }
    }
    result.withUnsafeMutableBufferPointer { r in
        points.withUnsafeBufferPointer { p in scalars.withUnsafeBufferPointer { impl.scalarMultiply(r.baseAddress!, p.baseAddress!, $0.baseAddress!) } }
    }
    for j in 0..<lanes {
        @inline(__always) func limb(_ t: Int) -> UInt64 { result[2 * t * lanes + j] &+ (result[(2 * t + 1) * lanes + j] << 26) }
        var y = Field25519(limb(0), limb(1), limb(2), limb(3), limb(4))
        var bytes = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeMutableBytes { y.store($0.baseAddress!) }
        guard bytes == rfc7748Result else { return false }
    }
    return true
}

/// The implementation with one output bit flipped.
enum FaultyX25519<Base: X25519Implementation>: X25519Implementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static func scalarMultiply(_ out: UnsafeMutableRawPointer, _ k0: UInt64, _ k1: UInt64, _ k2: UInt64, _ k3: UInt64,
                               _ point: UnsafeRawPointer?) {
        Base.scalarMultiply(out, k0, k1, k2, k3, point)
        out.storeBytes(of: out.load(as: UInt8.self) ^ 1, as: UInt8.self)
    }
}

enum FaultyX25519Lanes<Base: X25519LanesImplementation>: X25519LanesImplementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static var lanes: Int { Base.lanes }
    static func scalarMultiply(_ result: UnsafeMutablePointer<UInt64>, _ points: UnsafePointer<UInt64>,
                               _ scalars: UnsafePointer<UInt64>) {
        Base.scalarMultiply(result, points, scalars)
        result[0] ^= 1
    }
}

func faultyX25519(_ b: any X25519Implementation.Type) -> any X25519Implementation.Type {
    func wrap<B: X25519Implementation>(_: B.Type) -> any X25519Implementation.Type { FaultyX25519<B>.self }
    return wrap(b)
}
func faultyX25519Lanes(_ b: any X25519LanesImplementation.Type) -> any X25519LanesImplementation.Type {
    func wrap<B: X25519LanesImplementation>(_: B.Type) -> any X25519LanesImplementation.Type { FaultyX25519Lanes<B>.self }
    return wrap(b)
}
