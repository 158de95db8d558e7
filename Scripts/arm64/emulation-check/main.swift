import Swift

// The x86_64 side of Scripts/arm64-emulation.sh: reads "op a b c" lines (32 hex digits each) and prints
// the emulated wrappers' answer for instruction `op` (../instruction-table.swift, with ARMv8Emulated.swift).

func parse(_ s: Substring) -> SIMD2<UInt64> {
    let b = stride(from: 0, to: 32, by: 2).map { UInt8(s.dropFirst($0).prefix(2), radix: 16)! }
    var v = SIMD2<UInt64>()
    for i in 0..<16 { v[i / 8] |= UInt64(b[i]) << (8 * (i % 8)) }
    return v
}
func hex(_ v: SIMD2<UInt64>) -> String {
    (0..<16).map { i in let b = UInt8(truncatingIfNeeded: v[i / 8] >> (8 * (i % 8))); return (b < 16 ? "0" : "") + String(b, radix: 16) }.joined()
}

while let line = readLine() {
    let f = line.split(separator: " ")
    guard f.count == 4, let op = Int(f[0]) else { continue }
    let a = parse(f[1]), b = parse(f[2]), c = parse(f[3])
    guard let r = instruction(op, a, b, c) else { continue }
    print(hex(r))
}
