// The ARMv8 instructions the kernels of this target use, one wrapper each, in two backends: the real
// instructions (Builtin intrinsics) on arm64, and on other processors, when RAMPART_EMULATE_ARM64 is set
// (Package.swift sets it), their emulation in portable Swift (RampartKernelSupport/ARMv8Emulated.swift,
// checked against the real instructions under qemu by Scripts/arm64-emulation.sh). The kernel sources
// are the same files in both builds; the emulated build lets `swift test` run them everywhere.

import Swift
import RampartKernelSupport

#if arch(arm64) || RAMPART_TYPECHECK_ARM64

@inline(__always) func armBytes(_ v: SIMD2<UInt64>) -> Builtin.Vec16xInt8 { unsafeBitCast(v, to: Builtin.Vec16xInt8.self) }
@inline(__always) func armVec(_ v: Builtin.Vec16xInt8) -> SIMD2<UInt64> { unsafeBitCast(v, to: SIMD2<UInt64>.self) }
@inline(__always) func armAESE(_ s: SIMD2<UInt64>, _ k: SIMD2<UInt64>) -> SIMD2<UInt64> { armVec(Builtin.int_aarch64_crypto_aese(armBytes(s), armBytes(k))) }
@inline(__always) func armAESD(_ s: SIMD2<UInt64>, _ k: SIMD2<UInt64>) -> SIMD2<UInt64> { armVec(Builtin.int_aarch64_crypto_aesd(armBytes(s), armBytes(k))) }
@inline(__always) func armAESMC(_ s: SIMD2<UInt64>) -> SIMD2<UInt64> { armVec(Builtin.int_aarch64_crypto_aesmc(armBytes(s))) }
@inline(__always) func armAESIMC(_ s: SIMD2<UInt64>) -> SIMD2<UInt64> { armVec(Builtin.int_aarch64_crypto_aesimc(armBytes(s))) }
@inline(__always) func armPMULL(_ a: UInt64, _ b: UInt64) -> SIMD2<UInt64> {
    unsafeBitCast(Builtin.int_aarch64_neon_pmull64(a._value, b._value), to: SIMD2<UInt64>.self)
}

#elseif RAMPART_EMULATE_ARM64

@inline(__always) func armAESE(_ s: SIMD2<UInt64>, _ k: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.aese(s, k) }
@inline(__always) func armAESD(_ s: SIMD2<UInt64>, _ k: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.aesd(s, k) }
@inline(__always) func armAESMC(_ s: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.aesmc(s) }
@inline(__always) func armAESIMC(_ s: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.aesimc(s) }
@inline(__always) func armPMULL(_ a: UInt64, _ b: UInt64) -> SIMD2<UInt64> { ARMv8Emulated.pmull(a, b) }

#endif
