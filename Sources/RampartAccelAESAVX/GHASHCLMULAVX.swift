// GHASH and the stitched AES-GCM loops of RampartAccelAESNI/X86GHASH.swift compiled with AVX as well
// (+aes +pclmul +ssse3 +sse4.1 +avx, see Package.swift): VEX encodings, whose three-operand forms save
// the register copies of the stitched loops. The same bodies as RampartAccelAESNI's `ghashBlocks`,
// `aesniGCMEncrypt` and `aesniGCMDecrypt`, under their own names. Chosen where AVX2 is present
// (`ghash: pclmulqdq+avx`): measured on Cascade Lake, AES-256-GCM at 16 KiB and 1 MiB, seal 0.65x ->
// 0.85x, open 0.75x -> 0.80x OpenSSL's AVX code.

import Swift
import RampartAccelAESNI
import RampartKernelSupport

#if arch(x86_64)

/// Absorbs `blocks` 16-byte blocks into the GHASH state (16 bytes, GHASH byte order), with the table
/// of RampartAccelAESNI's `ghashPrecompute`.
@inline(never)
public func ghashBlocksAVX(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer,
                           _ data: UnsafeRawPointer, _ blocks: Int) {
    X86AES.ghashBlocks(table, state, data, blocks)
}

/// AES-GCM encryption of `blocks` whole blocks, CTR and GHASH stitched eight blocks at a time
/// (``X86AES/gcmEncrypt(_:_:_:_:_:_:_:_:)``).
@inline(never)
public func aesniAVXGCMEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                               _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                               _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.gcmEncrypt(rk, rounds, table, counter, state, input, output, blocks)
}

/// AES-GCM decryption of `blocks` whole blocks, GHASH of the ciphertext and CTR in one pass
/// (``X86AES/gcmDecrypt(_:_:_:_:_:_:_:_:)``).
@inline(never)
public func aesniAVXGCMDecrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                               _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                               _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.gcmDecrypt(rk, rounds, table, counter, state, input, output, blocks)
}

/// ``GHASHCLMUL`` with its absorb and GCM loops in the AVX build (the table is the same, computed by
/// RampartAccelAESNI's `ghashPrecompute`): chosen where AVX2 is present.
public enum GHASHCLMULAVX: GHASHImplementation {
    public static var name: String { "pclmulqdq+avx" }
    public static var requires: KernelFeatures { [.aes, .pclmul, .ssse3, .sse41, .avx2] }
    public static var aesLayout: AESScheduleLayout { .aesni }
    public static func precompute(_ h: UnsafeRawPointer, _ table: UnsafeMutableRawPointer, absorbBlocks: Int, gcmBlocks: Int) {
        GHASHCLMUL.precompute(h, table, absorbBlocks: absorbBlocks, gcmBlocks: gcmBlocks)
    }
    public static func absorb(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer, _ data: UnsafeRawPointer, _ n: Int) {
        ghashBlocksAVX(table, state, data, n)
    }
    public static func gcmEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                                  _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniAVXGCMEncrypt(schedule, rounds, table, counter, state, src, dst, n)
    }
    public static func gcmDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                                  _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniAVXGCMDecrypt(schedule, rounds, table, counter, state, src, dst, n)
    }
}

#endif
