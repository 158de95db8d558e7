// GHASH with PCLMULQDQ, and AES-GCM with the CTR and GHASH passes fused in one loop, compiled without
// AVX (legacy SSE encoding) from the shared bodies of X86GHASH.swift, which also
// explains the POLYVAL formulation and the table layout. RampartAccelAESAVX compiles the same bodies
// with AVX into its own entry points.

import Swift
import RampartKernelSupport

#if arch(x86_64)

/// Fills `table` (256 bytes, 16-byte aligned) from the hash key H (16 bytes, E_K(0^128)): the
/// Montgomery powers H_1 ... H_8 and their Karatsuba halves, or only H_1 when `allPowers` is false
/// (enough when no call will absorb eight blocks at once, and seven multiplications cheaper).
@inline(never)
public func ghashPrecompute(_ hashKey: UnsafeRawPointer, _ table: UnsafeMutableRawPointer, _ allPowers: Bool = true) {
    X86AES.ghashPrecompute(hashKey, table, allPowers)
}

/// Absorbs `blocks` 16-byte blocks into the GHASH state (16 bytes, GHASH byte order).
@inline(never)
public func ghashBlocks(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer,
                        _ data: UnsafeRawPointer, _ blocks: Int) {
    X86AES.ghashBlocks(table, state, data, blocks)
}

/// AES-GCM encryption of `blocks` whole blocks: CTR with the 32-bit counter of `counter` (16 bytes,
/// advanced by `blocks`), then GHASH of the ciphertext into `state` (16 bytes, GHASH byte order),
/// stitched eight blocks at a time (``X86AES/gcmEncrypt(_:_:_:_:_:_:_:_:)``).
@inline(never)
public func aesniGCMEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                            _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                            _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.gcmEncrypt(rk, rounds, table, counter, state, input, output, blocks)
}

/// AES-GCM decryption of `blocks` whole blocks: GHASH of the ciphertext `input` into `state` and CTR
/// decryption into `output`, in one pass. The caller checks the tag and wipes `output` on failure.
@inline(never)
public func aesniGCMDecrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                            _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                            _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.gcmDecrypt(rk, rounds, table, counter, state, input, output, blocks)
}

/// GHASH on PCLMULQDQ with GCM's CTR and GHASH stitched on AES-NI (legacy SSE encoding: processors
/// without AVX2), reading the `.aesni` schedule layout. The table is the 256-byte one of
/// ``ghashPrecompute(_:_:_:)``.
public enum GHASHCLMUL: GHASHImplementation {
    public static var name: String { "pclmulqdq" }
    public static var requires: KernelFeatures { [.aes, .pclmul, .ssse3, .sse41] }
    public static var aesLayout: AESScheduleLayout { .aesni }
    /// H_1 ... H_8 when some call takes eight blocks at once, else H_1 alone.
    public static func precompute(_ h: UnsafeRawPointer, _ table: UnsafeMutableRawPointer, absorbBlocks: Int, gcmBlocks: Int) {
        ghashPrecompute(h, table, max(absorbBlocks, gcmBlocks) >= 8)
    }
    public static func absorb(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer, _ data: UnsafeRawPointer, _ n: Int) {
        ghashBlocks(table, state, data, n)
    }
    public static func gcmEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                                  _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniGCMEncrypt(schedule, rounds, table, counter, state, src, dst, n)
    }
    public static func gcmDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                                  _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniGCMDecrypt(schedule, rounds, table, counter, state, src, dst, n)
    }
}

#endif
