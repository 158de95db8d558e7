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

#endif
