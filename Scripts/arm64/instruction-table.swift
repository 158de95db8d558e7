import Swift

// Instruction number `op` applied to (a, b, c) through the wrappers the kernels call: compiled with
// Sources/RampartKernelSupport/ARMv8Instructions.swift for arm64 (the real instructions, run under
// qemu-aarch64 by instructions.swift) and with ARMv8Emulated.swift for this machine (emulation-check),
// so Scripts/arm64-emulation.sh compares exactly the two backends of `armAESE`, `armSHA256H`, ….
typealias Q = SIMD2<UInt64>
@inline(__always) func w4(_ v: Q) -> SIMD4<UInt32> { unsafeBitCast(v, to: SIMD4<UInt32>.self) }
@inline(__always) func q(_ v: SIMD4<UInt32>) -> Q { unsafeBitCast(v, to: Q.self) }

/// The 19 instructions, numbered as Scripts/arm64-emulation.sh names them; nil for another number.
func instruction(_ op: Int, _ a: Q, _ b: Q, _ c: Q) -> Q? {
    let e = UInt32(truncatingIfNeeded: b[0])
    switch op {
    case 0: return armAESE(a, b)
    case 1: return armAESD(a, b)
    case 2: return armAESMC(a)
    case 3: return armAESIMC(a)
    case 4: return armPMULL(a[0], b[0])
    case 5: return q(armSHA1C(w4(a), e, w4(c)))
    case 6: return q(armSHA1P(w4(a), e, w4(c)))
    case 7: return q(armSHA1M(w4(a), e, w4(c)))
    case 8: return Q(UInt64(armSHA1H(e)), 0)
    case 9: return q(armSHA1SU0(w4(a), w4(b), w4(c)))
    case 10: return q(armSHA1SU1(w4(a), w4(b)))
    case 11: return q(armSHA256H(w4(a), w4(b), w4(c)))
    case 12: return q(armSHA256H2(w4(a), w4(b), w4(c)))
    case 13: return q(armSHA256SU0(w4(a), w4(b)))
    case 14: return q(armSHA256SU1(w4(a), w4(b), w4(c)))
    case 15: return armSHA512H(a, b, c)
    case 16: return armSHA512H2(a, b, c)
    case 17: return armSHA512SU0(a, b)
    case 18: return armSHA512SU1(a, b, c)
    default: return nil
    }
}
