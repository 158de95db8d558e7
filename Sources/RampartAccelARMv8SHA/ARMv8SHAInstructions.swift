// The ARMv8 SHA-1 and SHA-256 instructions the kernels of this target use, real on arm64 and emulated
// elsewhere under RAMPART_EMULATE_ARM64 (see RampartAccelARMv8/ARMv8Instructions.swift).

import Swift
import RampartKernelSupport

#if arch(arm64) || RAMPART_TYPECHECK_ARM64

@inline(__always) func armWords(_ v: SIMD4<UInt32>) -> Builtin.Vec4xInt32 { unsafeBitCast(v, to: Builtin.Vec4xInt32.self) }
@inline(__always) func armSV(_ v: Builtin.Vec4xInt32) -> SIMD4<UInt32> { unsafeBitCast(v, to: SIMD4<UInt32>.self) }
@inline(__always) func armSHA256H(_ abcd: SIMD4<UInt32>, _ efgh: SIMD4<UInt32>, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha256h(armWords(abcd), armWords(efgh), armWords(wk)))
}
@inline(__always) func armSHA256H2(_ efgh: SIMD4<UInt32>, _ abcd: SIMD4<UInt32>, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha256h2(armWords(efgh), armWords(abcd), armWords(wk)))
}
@inline(__always) func armSHA256SU0(_ w0: SIMD4<UInt32>, _ w1: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha256su0(armWords(w0), armWords(w1)))
}
@inline(__always) func armSHA256SU1(_ x: SIMD4<UInt32>, _ w2: SIMD4<UInt32>, _ w3: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha256su1(armWords(x), armWords(w2), armWords(w3)))
}
@inline(__always) func armSHA1C(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha1c(armWords(abcd), e._value, armWords(wk)))
}
@inline(__always) func armSHA1P(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha1p(armWords(abcd), e._value, armWords(wk)))
}
@inline(__always) func armSHA1M(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha1m(armWords(abcd), e._value, armWords(wk)))
}
@inline(__always) func armSHA1H(_ a: UInt32) -> UInt32 { UInt32(Builtin.int_aarch64_crypto_sha1h(a._value)) }
@inline(__always) func armSHA1SU0(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>, _ c: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha1su0(armWords(a), armWords(b), armWords(c)))
}
@inline(__always) func armSHA1SU1(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha1su1(armWords(a), armWords(b)))
}

#elseif RAMPART_EMULATE_ARM64

@inline(__always) func armSHA256H(_ abcd: SIMD4<UInt32>, _ efgh: SIMD4<UInt32>, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha256h(abcd, efgh, wk) }
@inline(__always) func armSHA256H2(_ efgh: SIMD4<UInt32>, _ abcd: SIMD4<UInt32>, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha256h2(efgh, abcd, wk) }
@inline(__always) func armSHA256SU0(_ w0: SIMD4<UInt32>, _ w1: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha256su0(w0, w1) }
@inline(__always) func armSHA256SU1(_ x: SIMD4<UInt32>, _ w2: SIMD4<UInt32>, _ w3: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha256su1(x, w2, w3) }
@inline(__always) func armSHA1C(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha1c(abcd, e, wk) }
@inline(__always) func armSHA1P(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha1p(abcd, e, wk) }
@inline(__always) func armSHA1M(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha1m(abcd, e, wk) }
@inline(__always) func armSHA1H(_ a: UInt32) -> UInt32 { ARMv8Emulated.sha1h(a) }
@inline(__always) func armSHA1SU0(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>, _ c: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha1su0(a, b, c) }
@inline(__always) func armSHA1SU1(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>) -> SIMD4<UInt32> { ARMv8Emulated.sha1su1(a, b) }

#endif
