// The ARMv8 cryptography instructions the arm64 kernels call, one wrapper each: AESE, AESD, AESMC,
// AESIMC, PMULL (RampartAccelARMv8), SHA1C/P/M/H/SU0/SU1 and SHA256H/H2/SU0/SU1 (RampartAccelARMv8SHA),
// SHA512H/H2/SU0/SU1 (RampartAccelARMv8SHA512), and the stitched IGE-SHA-256 kernel's AES and SHA-256
// ones (RampartAccelARMv8AESSHA). Two backends with the same names and signatures:
//
// - this file, the real instructions (Builtin intrinsics), on arm64;
// - ARMv8Emulated.swift, their architectural semantics in portable Swift, everywhere else, so that the
//   kernel sources (the same files, under RAMPART_EMULATE_ARM64, which Package.swift sets) build and run
//   in every `swift test`.
//
// `@_alwaysEmitIntoClient`: each wrapper is compiled into the kernel target that calls it, with that
// target's `-target-feature` flags (+aes, +sha2, +sha3); this module itself is built without them and
// emits none of these instructions. Scripts/arm64-emulation.sh compiles this file to arm64 code and
// compares every wrapper with its emulated twin under qemu-aarch64.

import Swift

#if arch(arm64) || RAMPART_TYPECHECK_ARM64

@_alwaysEmitIntoClient @inline(__always) public func armBytes(_ v: SIMD2<UInt64>) -> Builtin.Vec16xInt8 { unsafeBitCast(v, to: Builtin.Vec16xInt8.self) }
@_alwaysEmitIntoClient @inline(__always) public func armVec(_ v: Builtin.Vec16xInt8) -> SIMD2<UInt64> { unsafeBitCast(v, to: SIMD2<UInt64>.self) }
@_alwaysEmitIntoClient @inline(__always) public func armAESE(_ s: SIMD2<UInt64>, _ k: SIMD2<UInt64>) -> SIMD2<UInt64> { armVec(Builtin.int_aarch64_crypto_aese(armBytes(s), armBytes(k))) }
@_alwaysEmitIntoClient @inline(__always) public func armAESD(_ s: SIMD2<UInt64>, _ k: SIMD2<UInt64>) -> SIMD2<UInt64> { armVec(Builtin.int_aarch64_crypto_aesd(armBytes(s), armBytes(k))) }
@_alwaysEmitIntoClient @inline(__always) public func armAESMC(_ s: SIMD2<UInt64>) -> SIMD2<UInt64> { armVec(Builtin.int_aarch64_crypto_aesmc(armBytes(s))) }
@_alwaysEmitIntoClient @inline(__always) public func armAESIMC(_ s: SIMD2<UInt64>) -> SIMD2<UInt64> { armVec(Builtin.int_aarch64_crypto_aesimc(armBytes(s))) }
@_alwaysEmitIntoClient @inline(__always) public func armPMULL(_ a: UInt64, _ b: UInt64) -> SIMD2<UInt64> {
    unsafeBitCast(Builtin.int_aarch64_neon_pmull64(a._value, b._value), to: SIMD2<UInt64>.self)
}

@_alwaysEmitIntoClient @inline(__always) public func armWords(_ v: SIMD4<UInt32>) -> Builtin.Vec4xInt32 { unsafeBitCast(v, to: Builtin.Vec4xInt32.self) }
@_alwaysEmitIntoClient @inline(__always) public func armSV(_ v: Builtin.Vec4xInt32) -> SIMD4<UInt32> { unsafeBitCast(v, to: SIMD4<UInt32>.self) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA256H(_ abcd: SIMD4<UInt32>, _ efgh: SIMD4<UInt32>, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha256h(armWords(abcd), armWords(efgh), armWords(wk)))
}
@_alwaysEmitIntoClient @inline(__always) public func armSHA256H2(_ efgh: SIMD4<UInt32>, _ abcd: SIMD4<UInt32>, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha256h2(armWords(efgh), armWords(abcd), armWords(wk)))
}
@_alwaysEmitIntoClient @inline(__always) public func armSHA256SU0(_ w0: SIMD4<UInt32>, _ w1: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha256su0(armWords(w0), armWords(w1)))
}
@_alwaysEmitIntoClient @inline(__always) public func armSHA256SU1(_ x: SIMD4<UInt32>, _ w2: SIMD4<UInt32>, _ w3: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha256su1(armWords(x), armWords(w2), armWords(w3)))
}
@_alwaysEmitIntoClient @inline(__always) public func armSHA1C(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha1c(armWords(abcd), e._value, armWords(wk)))
}
@_alwaysEmitIntoClient @inline(__always) public func armSHA1P(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha1p(armWords(abcd), e._value, armWords(wk)))
}
@_alwaysEmitIntoClient @inline(__always) public func armSHA1M(_ abcd: SIMD4<UInt32>, _ e: UInt32, _ wk: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha1m(armWords(abcd), e._value, armWords(wk)))
}
@_alwaysEmitIntoClient @inline(__always) public func armSHA1H(_ a: UInt32) -> UInt32 { UInt32(Builtin.int_aarch64_crypto_sha1h(a._value)) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA1SU0(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>, _ c: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha1su0(armWords(a), armWords(b), armWords(c)))
}
@_alwaysEmitIntoClient @inline(__always) public func armSHA1SU1(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>) -> SIMD4<UInt32> {
    armSV(Builtin.int_aarch64_crypto_sha1su1(armWords(a), armWords(b)))
}

@_alwaysEmitIntoClient @inline(__always) public func armQ(_ v: SIMD2<UInt64>) -> Builtin.Vec2xInt64 { unsafeBitCast(v, to: Builtin.Vec2xInt64.self) }
@_alwaysEmitIntoClient @inline(__always) public func armDV(_ v: Builtin.Vec2xInt64) -> SIMD2<UInt64> { unsafeBitCast(v, to: SIMD2<UInt64>.self) }
@_alwaysEmitIntoClient @inline(__always) public func armSHA512H(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> {
    armDV(Builtin.int_aarch64_crypto_sha512h(armQ(w), armQ(x), armQ(y)))
}
@_alwaysEmitIntoClient @inline(__always) public func armSHA512H2(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> {
    armDV(Builtin.int_aarch64_crypto_sha512h2(armQ(w), armQ(x), armQ(y)))
}
@_alwaysEmitIntoClient @inline(__always) public func armSHA512SU0(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>) -> SIMD2<UInt64> {
    armDV(Builtin.int_aarch64_crypto_sha512su0(armQ(w), armQ(x)))
}
@_alwaysEmitIntoClient @inline(__always) public func armSHA512SU1(_ w: SIMD2<UInt64>, _ x: SIMD2<UInt64>, _ y: SIMD2<UInt64>) -> SIMD2<UInt64> {
    armDV(Builtin.int_aarch64_crypto_sha512su1(armQ(w), armQ(x), armQ(y)))
}

#endif
