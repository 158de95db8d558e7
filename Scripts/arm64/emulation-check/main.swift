import Swift

// The x86_64 side of Scripts/arm64-emulation.sh: reads "op a b c" lines (32 hex digits each) and prints
// ARMv8Emulated's answer for instruction `op` (numbered as in ../instructions.swift).

func parse(_ s: Substring) -> SIMD2<UInt64> {
    let b = stride(from: 0, to: 32, by: 2).map { UInt8(s.dropFirst($0).prefix(2), radix: 16)! }
    var v = SIMD2<UInt64>()
    for i in 0..<16 { v[i / 8] |= UInt64(b[i]) << (8 * (i % 8)) }
    return v
}
func s4(_ v: SIMD2<UInt64>) -> SIMD4<UInt32> { unsafeBitCast(v, to: SIMD4<UInt32>.self) }
func q(_ v: SIMD4<UInt32>) -> SIMD2<UInt64> { unsafeBitCast(v, to: SIMD2<UInt64>.self) }
func hex(_ v: SIMD2<UInt64>) -> String {
    (0..<16).map { i in let b = UInt8(truncatingIfNeeded: v[i / 8] >> (8 * (i % 8))); return (b < 16 ? "0" : "") + String(b, radix: 16) }.joined()
}

while let line = readLine() {
    let f = line.split(separator: " ")
    guard f.count == 4, let op = Int(f[0]) else { continue }
    let a = parse(f[1]), b = parse(f[2]), c = parse(f[3])
    let e = UInt32(truncatingIfNeeded: b[0])
    typealias E = ARMv8Emulated
    let r: SIMD2<UInt64>
    switch op {
    case 0: r = E.aese(a, b)
    case 1: r = E.aesd(a, b)
    case 2: r = E.aesmc(a)
    case 3: r = E.aesimc(a)
    case 4: r = E.pmull(a[0], b[0])
    case 5: r = q(E.sha1c(s4(a), e, s4(c)))
    case 6: r = q(E.sha1p(s4(a), e, s4(c)))
    case 7: r = q(E.sha1m(s4(a), e, s4(c)))
    case 8: r = SIMD2(UInt64(E.sha1h(e)), 0)
    case 9: r = q(E.sha1su0(s4(a), s4(b), s4(c)))
    case 10: r = q(E.sha1su1(s4(a), s4(b)))
    case 11: r = q(E.sha256h(s4(a), s4(b), s4(c)))
    case 12: r = q(E.sha256h2(s4(a), s4(b), s4(c)))
    case 13: r = q(E.sha256su0(s4(a), s4(b)))
    case 14: r = q(E.sha256su1(s4(a), s4(b), s4(c)))
    case 15: r = E.sha512h(a, b, c)
    case 16: r = E.sha512h2(a, b, c)
    case 17: r = E.sha512su0(a, b)
    case 18: r = E.sha512su1(a, b, c)
    default: continue
    }
    print(hex(r))
}
