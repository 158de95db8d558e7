// AES with the x86_64 AES-NI instructions: key expansion, ECB, CTR, CBC and IGE, and the eight-lane
// multi-buffer IGE encryption. The bodies live once in X86AES.swift (shared with the higher AES
// tiers); this module compiles them with only +aes +pclmul +ssse3 +sse4.1 (see Package.swift)
// into its uniquely named entry points. The caller must have checked the CPU features (the registry:
// Rampart/Platform/Registrations.swift). Every entry point is @inline(never) and takes raw pointers
// and a block count: the whole loop of a buffer runs here, one call per buffer.

import Swift
import RampartKernelSupport

#if arch(x86_64)

/// Expands a 16-, 24- or 32-byte key into `rounds + 1` encryption round keys at `enc` and the
/// matching equivalent-inverse-cipher keys (for aesdec) at `dec`; each area needs 16 * (rounds + 1)
/// bytes (240 for AES-256). Returns the number of rounds (10, 12, 14), or 0 for another key length.
@inline(never)
public func aesniExpandKey(_ key: UnsafeRawPointer, _ keyLength: Int,
                           _ enc: UnsafeMutableRawPointer, _ dec: UnsafeMutableRawPointer) -> Int {
    X86AES.expandKey(key, keyLength, enc, dec)
}

/// The AES-256 encryption schedule alone (15 round keys, 240 bytes at `enc`) for callers that only
/// encrypt (the multi-buffer IGE kernels). Returns 14, the number of rounds.
@inline(never)
public func aesniExpandKey256Encrypt(_ key: UnsafeRawPointer, _ enc: UnsafeMutableRawPointer) -> Int {
    X86AES.expandKey256(key, enc)
    return 14
}

/// Four AES-256 encryption schedules at once (``X86AES/expandKeys256Encrypt4(_:_:_:)``): the key at
/// `keys[i]` expands to 240 bytes at `enc + i * stride`, the same bytes as
/// ``aesniExpandKey256Encrypt(_:_:)``.
@inline(never)
public func aesniExpandKeys256Encrypt4(_ keys: UnsafePointer<UnsafeRawPointer>, _ enc: UnsafeMutableRawPointer, _ stride: Int) {
    X86AES.expandKeys256Encrypt4(keys, enc, stride)
}

/// Encrypts `blocks` 16-byte blocks (ECB) with the encryption schedule `rk`.
@inline(never)
public func aesniEncryptECB(_ rk: UnsafeRawPointer, _ rounds: Int,
                            _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.encryptECB(rk, rounds, input, output, blocks)
}

/// Decrypts `blocks` 16-byte blocks (ECB) with the decryption schedule `dk`.
@inline(never)
public func aesniDecryptECB(_ dk: UnsafeRawPointer, _ rounds: Int,
                            _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.decryptECB(dk, rounds, input, output, blocks)
}

/// XORs `blocks` blocks of CTR keystream into `input`, writing `output`. `counter` points at the
/// 16-byte big-endian counter block; it is advanced by `blocks` (wrapping modulo 2^128).
@inline(never)
public func aesniCTR(_ rk: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer,
                     _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.ctr(rk, rounds, counter, input, output, blocks)
}

/// CBC encryption of `blocks` blocks; `iv` (16 bytes) is replaced by the last ciphertext block.
@inline(never)
public func aesniCBCEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                            _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.cbcEncrypt(rk, rounds, iv, input, output, blocks)
}

/// CBC decryption of `blocks` blocks with the decryption schedule; `iv` becomes the last
/// ciphertext block.
@inline(never)
public func aesniCBCDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                            _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.cbcDecrypt(dk, rounds, iv, input, output, blocks)
}

/// IGE encryption, c_i = E(p_i ^ c_{i-1}) ^ p_{i-1}. `iv` is 32 bytes: c_0 then p_0 (MTProto's
/// layout); it is replaced by (last ciphertext block, last plaintext block).
@inline(never)
public func aesniIGEEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                            _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.igeEncrypt(rk, rounds, iv, input, output, blocks)
}

/// IGE decryption, p_i = D(c_i ^ p_{i-1}) ^ c_{i-1}, with the decryption schedule. `iv` as for
/// encryption (c_0 then p_0); it is replaced by (last ciphertext block, last plaintext block).
@inline(never)
public func aesniIGEDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                            _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
    X86AES.igeDecrypt(dk, rounds, iv, input, output, blocks)
}

/// IGE encryption of eight independent messages at once, `blocks` blocks each, in place
/// (``X86AES/igeEncrypt8(_:_:_:_:_:_:)``: lane `i` has schedule `schedules[i]`, 32-byte IV `ivs[i]`,
/// data at `data[i]` advancing `strides[i]` bytes per block, 0 for an idle lane).
@inline(never)
public func aesniIGEEncrypt8(_ schedules: UnsafePointer<UnsafeRawPointer>, _ rounds: Int,
                             _ ivs: UnsafePointer<UnsafeMutableRawPointer>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                             _ strides: UnsafePointer<Int>, _ blocks: Int) {
    X86AES.igeEncrypt8(schedules, rounds, ivs, data, strides, blocks)
}

/// `count` AES-256 encryption schedules (240 bytes each, `stride` bytes apart from `enc`) for the
/// multi-buffer IGE kernels: four keys at a time in lockstep, the rest one by one. Returns 14, the
/// number of rounds.
public func aesniExpandKeys256Encrypt(_ keys: UnsafePointer<UnsafeRawPointer>, _ count: Int, _ enc: UnsafeMutableRawPointer,
                                      _ stride: Int) -> Int {
    var i = 0
    while i + 4 <= count {
        aesniExpandKeys256Encrypt4(keys + i, enc + stride * i, stride)
        i += 4
    }
    while i < count {
        _ = aesniExpandKey256Encrypt(keys[i], enc + stride * i)
        i += 1
    }
    return 14
}

// MARK: - Conformances (Rampart/Platform/Registrations.swift lists them)

/// AES on AES-NI, in the `.aesni` schedule layout: encryption round keys at offset 0, decryption keys
/// at 256.
public enum AESNI: AESImplementation {
    public static var name: String { "aes-ni" }
    public static var requires: KernelFeatures { [.aes, .ssse3, .sse41] }
    public static var layout: AESScheduleLayout { .aesni }
    public static var scheduleBytes: Int { 512 }
    /// Offset of the decryption round keys.
    public static var decryptionOffset: Int { 256 }

    public static func expandKey(_ key: UnsafeRawPointer, _ keyLength: Int, _ schedule: UnsafeMutableRawPointer) -> Int {
        aesniExpandKey(key, keyLength, schedule, schedule + decryptionOffset)
    }
    public static func encryptECB(_ schedule: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                                  _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniEncryptECB(schedule, rounds, src, dst, n)
    }
    public static func decryptECB(_ schedule: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                                  _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniDecryptECB(schedule + decryptionOffset, rounds, src, dst, n)
    }
    public static func ctr(_ schedule: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniCTR(schedule, rounds, counter, src, dst, n)
    }
    public static func cbcEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniCBCEncrypt(schedule, rounds, iv, src, dst, n)
    }
    public static func cbcDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniCBCDecrypt(schedule + decryptionOffset, rounds, iv, src, dst, n)
    }
    public static func igeEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniIGEEncrypt(schedule, rounds, iv, src, dst, n)
    }
    public static func igeDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                                  _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniIGEDecrypt(schedule + decryptionOffset, rounds, iv, src, dst, n)
    }
}

/// Eight IGE messages at once on AES-NI, one round of every lane per step, so that the two AES units
/// stay busy (MTProto's batch encryption where the 512-bit VAES kernel does not run).
public enum IGELanesAESNIx8: IGELanesImplementation {
    public static var name: String { "aes-ni-x8" }
    public static var requires: KernelFeatures { [.aes, .ssse3, .sse41] }
    public static var lanes: Int { 8 }
    public static var scheduleBytes: Int { 256 }
    public static var scratchBytes: Int { 0 }
    public static func expandKeys256(_ keys: UnsafePointer<UnsafeRawPointer>, _ count: Int, _ schedules: UnsafeMutableRawPointer) -> Int {
        aesniExpandKeys256Encrypt(keys, count, schedules, scheduleBytes)
    }
    public static func encrypt(_ schedules: UnsafePointer<UnsafeRawPointer>, _ rounds: Int, _ ivs: UnsafePointer<UnsafeMutableRawPointer>,
                               _ data: UnsafePointer<UnsafeMutableRawPointer>, _ strides: UnsafePointer<Int>, _ n: Int,
                               _ scratch: UnsafeMutableRawPointer) {
        aesniIGEEncrypt8(schedules, rounds, ivs, data, strides, n)
    }
}

#endif
