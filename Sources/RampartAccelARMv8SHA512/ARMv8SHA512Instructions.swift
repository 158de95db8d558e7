// The ARMv8.2 SHA-512 instructions the kernel of this target uses, real on arm64 and emulated
// elsewhere under RAMPART_EMULATE_ARM64 (see RampartAccelARMv8/ARMv8Instructions.swift).

import Swift
import RampartKernelSupport

#if arch(arm64) || RAMPART_TYPECHECK_ARM64

@inline(__always) func armQ(_ v: SIMD2<UInt64>) -> Builtin.Vec2xInt64 { unsafeBitCast(v, to: Builtin.Vec2xInt64.self) }
@inline(__always) func armDV(_ v: Builtin.Vec2xInt64) -> SIMD2<UInt64> { unsafeBitCast(v, to: SIMD2<UInt64>.self) }
@inline(__always) func armSHA512H(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> {
    armDV(Builtin.int_aarch64_crypto_sha512h(armQ(w), armQ(x), armQ(y)))
}
@inline(__always) func armSHA512H2(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> {
    armDV(Builtin.int_aarch64_crypto_sha512h2(armQ(w), armQ(x), armQ(y)))
}
@inline(__always) func armSHA512SU0(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>) -> SIMD2<UInt64> {
    armDV(Builtin.int_aarch64_crypto_sha512su0(armQ(w), armQ(x)))
}
@inline(__always) func armSHA512SU1(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> {
    armDV(Builtin.int_aarch64_crypto_sha512su1(armQ(w), armQ(x), armQ(y)))
}

#elseif RAMPART_EMULATE_ARM64

@inline(__always) func armSHA512H(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.sha512h(w, x, y) }
@inline(__always) func armSHA512H2(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.sha512h2(w, x, y) }
@inline(__always) func armSHA512SU0(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.sha512su0(w, x) }
@inline(__always) func armSHA512SU1(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> { ARMv8Emulated.sha512su1(w, x, y) }

#endif
