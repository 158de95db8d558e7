// GHASH and the stitched AES-GCM loops of RampartAccelAESNI/X86GHASH.swift compiled with AVX as well
// (+aes +pclmul +ssse3 +sse4.1 +avx, see Package.swift): VEX encodings, whose three-operand forms save
// the register copies of the stitched loops. The same bodies as RampartAccelAESNI's `ghashBlocks`,
// `aesniGCMEncrypt` and `aesniGCMDecrypt`, under their own names. Chosen where AVX2 is present
// (`ghash: pclmulqdq+avx`): measured on Cascade Lake, AES-256-GCM at 16 KiB and 1 MiB, seal 0.65x ->
// 0.85x, open 0.75x -> 0.80x OpenSSL's AVX code.

import Swift
import RampartAccelAESNI

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

#endif
