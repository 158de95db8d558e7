// Each ARMv8 cryptography instruction alone, for Scripts/arm64-emulation.sh: compiled to arm64 code and
// run under qemu-aarch64, its answers are compared with RampartAccelARMv8/ARMv8Emulated.swift's.

import Swift

typealias Q = SIMD2<UInt64>
typealias S = SIMD4<UInt32>
@inline(__always) func b16(_ v: Q) -> Builtin.Vec16xInt8 { unsafeBitCast(v, to: Builtin.Vec16xInt8.self) }
@inline(__always) func w4(_ v: Q) -> Builtin.Vec4xInt32 { unsafeBitCast(v, to: Builtin.Vec4xInt32.self) }
@inline(__always) func d2(_ v: Q) -> Builtin.Vec2xInt64 { unsafeBitCast(v, to: Builtin.Vec2xInt64.self) }
@inline(__always) func q<T>(_ v: T) -> Q { unsafeBitCast(v, to: Q.self) }

/// `out = op(a, b, c)` for instruction number `op` (the order of Scripts/arm64/emulation-check/main.swift).
@_cdecl("rampart_arm64_instruction")
public func rampartARM64Instruction(_ op: Int, _ pa: UnsafeRawPointer, _ pb: UnsafeRawPointer, _ pc: UnsafeRawPointer,
                                    _ out: UnsafeMutableRawPointer) {
    let a = pa.loadUnaligned(as: Q.self), b = pb.loadUnaligned(as: Q.self), c = pc.loadUnaligned(as: Q.self)
    let e = UInt32(truncatingIfNeeded: b[0])
    var r = Q()
    switch op {
    case 0: r = q(Builtin.int_aarch64_crypto_aese(b16(a), b16(b)))
    case 1: r = q(Builtin.int_aarch64_crypto_aesd(b16(a), b16(b)))
    case 2: r = q(Builtin.int_aarch64_crypto_aesmc(b16(a)))
    case 3: r = q(Builtin.int_aarch64_crypto_aesimc(b16(a)))
    case 4: r = q(Builtin.int_aarch64_neon_pmull64(a[0]._value, b[0]._value))
    case 5: r = q(Builtin.int_aarch64_crypto_sha1c(w4(a), e._value, w4(c)))
    case 6: r = q(Builtin.int_aarch64_crypto_sha1p(w4(a), e._value, w4(c)))
    case 7: r = q(Builtin.int_aarch64_crypto_sha1m(w4(a), e._value, w4(c)))
    case 8: r = Q(UInt64(UInt32(Builtin.int_aarch64_crypto_sha1h(e._value))), 0)
    case 9: r = q(Builtin.int_aarch64_crypto_sha1su0(w4(a), w4(b), w4(c)))
    case 10: r = q(Builtin.int_aarch64_crypto_sha1su1(w4(a), w4(b)))
    case 11: r = q(Builtin.int_aarch64_crypto_sha256h(w4(a), w4(b), w4(c)))
    case 12: r = q(Builtin.int_aarch64_crypto_sha256h2(w4(a), w4(b), w4(c)))
    case 13: r = q(Builtin.int_aarch64_crypto_sha256su0(w4(a), w4(b)))
    case 14: r = q(Builtin.int_aarch64_crypto_sha256su1(w4(a), w4(b), w4(c)))
    case 15: r = q(Builtin.int_aarch64_crypto_sha512h(d2(a), d2(b), d2(c)))
    case 16: r = q(Builtin.int_aarch64_crypto_sha512h2(d2(a), d2(b), d2(c)))
    case 17: r = q(Builtin.int_aarch64_crypto_sha512su0(d2(a), d2(b)))
    case 18: r = q(Builtin.int_aarch64_crypto_sha512su1(d2(a), d2(b), d2(c)))
    default: break
    }
    out.storeBytes(of: r, as: Q.self)
}
