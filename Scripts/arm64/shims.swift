// Thin C entry points to the arm64 kernels, for Scripts/arm64-kernels.sh: compiled with the kernels to
// arm64 machine code (no Swift runtime: the kernels call none) and linked with driver.c, then run
// under qemu-aarch64. Not part of any product.

import Swift
import RampartAccelARMv8
import RampartAccelARMv8SHA
import RampartAccelARMv8SHA512
import RampartAccelARMv8AESSHA

/// Runs one case. `op`: 0 ECB encrypt, 1 ECB decrypt, 2 CTR, 3 CBC encrypt, 4 CBC decrypt, 5 IGE
/// encrypt, 6 IGE decrypt (`iv`: the 32-byte IGE vector), 7 GHASH (`key`: H, `state`: 16 bytes in and
/// out), 8 GCM encrypt, 9 GCM decrypt (`iv`: the 16-byte counter block, `state`: the GHASH state in and
/// out). 10: SHA-256 of whole blocks (`key`: the 64 round constants, little-endian words; `state`: 32
/// bytes, the state words in and out). 13: IGE decryption stitched with SHA-256 (`key`: the AES key,
/// then the 32-byte prefix, then the round constants; `state` as for 10). `iv` is updated as the
/// kernels leave it. Returns the rounds (0 for a bad key length).
@_cdecl("rampart_arm64_case")
public func rampartARM64Case(_ op: Int, _ key: UnsafeRawPointer, _ keyLength: Int, _ iv: UnsafeMutableRawPointer,
                             _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int,
                             _ state: UnsafeMutableRawPointer, _ schedule: UnsafeMutableRawPointer) -> Int {
    if op == 10 {
        // SHA-256 of whole 64-byte blocks (`blocks` counts 16-byte units): `state` holds the eight words (host order) in and out, `key` the 64
        // round constants.
        armSHA256Blocks(state.assumingMemoryBound(to: UInt32.self), input, blocks / 4, key.assumingMemoryBound(to: UInt32.self))
        return 1
    }
    if op == 11 {
        // SHA-1 of whole 64-byte blocks: `state` holds the five words (host order) in and out.
        armSHA1Blocks(state.assumingMemoryBound(to: UInt32.self), input, blocks / 4)
        return 1
    }
    if op == 12 {
        // SHA-512 of whole 128-byte blocks: `state` holds the eight words in and out, `key` the 80
        // round constants.
        armSHA512Blocks(state.assumingMemoryBound(to: UInt64.self), input, blocks / 8, key.assumingMemoryBound(to: UInt64.self))
        return 1
    }
    if op == 7 {
        armGHASHPrecompute(key, schedule)
        armGHASHBlocks(UnsafeRawPointer(schedule), state, input, blocks)
        return 1
    }
    if op == 13 {
        // keyLength = AES key + 32 + 256.
        let aesLength = keyLength - 288
        let rounds = armExpandKey(key, aesLength, schedule, schedule + 256)
        guard rounds > 0 else { return 0 }
        _ = armIGEDecryptSHA256(UnsafeRawPointer(schedule + 256), rounds, iv, input, output, blocks,
                                state.assumingMemoryBound(to: UInt32.self), key + aesLength,
                                (key + aesLength + 32).assumingMemoryBound(to: UInt32.self))
        return rounds
    }
    let rounds = armExpandKey(key, keyLength, schedule, schedule + 256)
    guard rounds > 0 else { return 0 }
    let enc = UnsafeRawPointer(schedule), dec = UnsafeRawPointer(schedule + 256)
    switch op {
    case 0: armEncryptECB(enc, rounds, input, output, blocks)
    case 1: armDecryptECB(dec, rounds, input, output, blocks)
    case 2: armCTR(enc, rounds, iv, input, output, blocks)
    case 3: armCBCEncrypt(enc, rounds, iv, input, output, blocks)
    case 4: armCBCDecrypt(dec, rounds, iv, input, output, blocks)
    case 5: armIGEEncrypt(enc, rounds, iv, input, output, blocks)
    case 6: armIGEDecrypt(dec, rounds, iv, input, output, blocks)
    case 8, 9:
        // The hash key H = E(K, 0) through the ECB kernel, then the GCM kernel.
        let zero = schedule + 512, table = schedule + 528
        for i in 0..<16 { zero.storeBytes(of: 0, toByteOffset: i, as: UInt8.self) }
        armEncryptECB(enc, rounds, UnsafeRawPointer(zero), zero, 1)
        armGHASHPrecompute(UnsafeRawPointer(zero), table)
        if op == 8 {
            armGCMEncrypt(enc, rounds, UnsafeRawPointer(table), iv, state, input, output, blocks)
        } else {
            armGCMDecrypt(enc, rounds, UnsafeRawPointer(table), iv, state, input, output, blocks)
        }
    default: return 0
    }
    return rounds
}
