// x86_64 bindings of the AES and GHASH kernels (see Platform/Kernels.swift): AES-NI, and PCLMULQDQ
// GHASH stitched with AES-NI for GCM (RampartAccelAESNI).
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelAESNI
internal import RampartAccelVAES
internal import RampartAccelVAES512
internal import RampartAccelAESSHA

enum AESKernel {
    static let name: String? = "aes-ni"
    static func supported(_ f: CPUFeatures) -> Bool { f.aes && f.ssse3 && f.sse41 }

    /// Expands a 16-, 24- or 32-byte key into encryption round keys at `enc` and decryption round keys
    /// at `dec`; returns the number of rounds.
    @inline(__always)
    static func expandKey(_ key: UnsafeRawPointer, _ n: Int, _ enc: UnsafeMutableRawPointer,
                          _ dec: UnsafeMutableRawPointer) -> Int { aesniExpandKey(key, n, enc, dec) }
    @inline(__always)
    static func encryptECB(_ rk: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) { aesniEncryptECB(rk, rounds, src, dst, n) }
    @inline(__always)
    static func decryptECB(_ dk: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) { aesniDecryptECB(dk, rounds, src, dst, n) }
    @inline(__always)
    static func ctr(_ rk: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                    _ dst: UnsafeMutableRawPointer, _ n: Int) { aesniCTR(rk, rounds, counter, src, dst, n) }
    @inline(__always)
    static func cbcEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) { aesniCBCEncrypt(rk, rounds, iv, src, dst, n) }
    @inline(__always)
    static func cbcDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) { aesniCBCDecrypt(dk, rounds, iv, src, dst, n) }
    @inline(__always)
    static func igeEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) { aesniIGEEncrypt(rk, rounds, iv, src, dst, n) }
    @inline(__always)
    static func igeDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) { aesniIGEDecrypt(dk, rounds, iv, src, dst, n) }
}

enum GHASHKernel {
    static let name: String? = "pclmulqdq"
    static func supported(_ f: CPUFeatures) -> Bool { f.pclmul }
    /// Whether the GHASH and GCM loops run their AVX build (RampartAccelAESAVX, the same source with
    /// VEX encoding): on processors with AVX2 (hence AVX). Measured on Cascade Lake, AES-256-GCM at
    /// 16 KiB and 1 MiB: seal 0.65x -> 0.85x, open 0.75x -> 0.80x OpenSSL's AVX code.
    static let avx = CPU.features.avx2
    /// The name `Kernels.ghash` shows.
    static let selectedName: String? = avx ? "pclmulqdq+avx" : name
    /// Whether whole GCM blocks run in one stitched AES + GHASH kernel (``gcmEncrypt``).
    static let stitchesGCM = true

    /// Writes the GHASH table for hash key `h` (16 bytes); `allPowers` adds the eight-block powers.
    @inline(__always)
    static func precompute(_ h: UnsafeRawPointer, _ table: UnsafeMutableRawPointer, _ allPowers: Bool) {
        ghashPrecompute(h, table, allPowers)
    }
    @inline(__always)
    static func absorb(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer, _ blocks: UnsafeRawPointer, _ n: Int) {
        if avx { GCMAVX.absorb(table, state, blocks, n); return }
        ghashBlocks(table, state, blocks, n)
    }
    /// CTR (GCM's 32-bit counter) and GHASH of the ciphertext over `n` whole blocks, sealing.
    @inline(__always)
    static func gcmEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                           _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        if avx { GCMAVX.encrypt(rk, rounds, table, counter, state, src, dst, n); return }
        aesniGCMEncrypt(rk, rounds, table, counter, state, src, dst, n)
    }
    /// GHASH of the ciphertext and CTR over `n` whole blocks, opening.
    @inline(__always)
    static func gcmDecrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                           _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        if avx { GCMAVX.decrypt(rk, rounds, table, counter, state, src, dst, n); return }
        aesniGCMDecrypt(rk, rounds, table, counter, state, src, dst, n)
    }
}

/// IGE decryption stitched with SHA-256 of the plaintext (MTProto's receiver): AES-NI and SHA-NI in
/// one loop.
enum IGESHA256Kernel {
    static let name: String? = "aes-ni+sha-ni"
    static func supported(_ f: CPUFeatures) -> Bool { f.aes && f.sha && f.ssse3 && f.sse41 }

    /// Decrypts `n` blocks from `src` into `buffer` and absorbs prefix ‖ plaintext into `words` as far as whole
    /// SHA-256 blocks go; returns the plaintext bytes absorbed.
    @inline(__always)
    static func decrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                        _ buffer: UnsafeMutableRawPointer, _ n: Int, _ words: UnsafeMutablePointer<UInt32>, _ prefix: UnsafeRawPointer,
                        _ k: UnsafePointer<UInt32>) -> Int {
        aesniIGEDecryptSHA256(dk, rounds, iv, src, buffer, n, words, prefix, k)
    }
}

/// The wide tier of the parallel AES modes: VAES on 256-bit vectors, sixteen blocks per iteration
/// (CTR and CBC decryption; GCM has its own, ``GHASHWideKernel``). Each entry runs whole 16-block
/// groups and returns the blocks done; the 128-bit kernel does the rest.
enum AESWideKernel {
    static let name: String? = "vaes"
    static func supported(_ f: CPUFeatures) -> Bool { f.vaes && f.avx2 }

    @inline(__always)
    static func ctr(_ rk: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                    _ dst: UnsafeMutableRawPointer, _ n: Int) -> Int { vaesCTR(rk, rounds, counter, src, dst, n) }
    @inline(__always)
    static func cbcDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) -> Int { vaesCBCDecrypt(dk, rounds, iv, src, dst, n) }
}

/// The wide GCM tier: VAES and VPCLMULQDQ on 256-bit vectors, sixteen blocks per iteration, with a
/// 512-byte power table (H_1 ... H_16) whose first 256 bytes are GHASHKernel's table.
enum GHASHWideKernel {
    static let name: String? = "vaes+vpclmulqdq"
    static func supported(_ f: CPUFeatures) -> Bool { f.vaes && f.vpclmulqdq && f.avx2 }

    /// Adds H_9 ... H_16 to a table whose first 256 bytes GHASHKernel.precompute wrote with all powers.
    @inline(__always)
    static func extend(_ table: UnsafeMutableRawPointer) { vaesGHASHExtendTable(table) }
    /// CTR and GHASH over `n` whole blocks, `n` a multiple of 16, sealing.
    @inline(__always)
    static func gcmEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                           _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        vaesGCMEncrypt(rk, rounds, table, counter, state, src, dst, n)
    }
    /// GHASH and CTR over `n` whole blocks, `n` a multiple of 16, opening.
    @inline(__always)
    static func gcmDecrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                           _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        vaesGCMDecrypt(rk, rounds, table, counter, state, src, dst, n)
    }
}

/// IGE encryption of several independent messages at once (multi-buffer, ``MultiBuffer``). On
/// processors with full-width 512-bit units (Zen 5), sixteen messages, four per 512-bit register, with
/// VAES (`vaes512-x16`, RampartAccelVAES512; 32 messages in eight registers measured slower:
/// 9.5 against 10.5 GB/s); elsewhere eight with AES-NI, one round of every lane per
/// step so that the two AES units stay busy (`aes-ni-x8`).
enum IGELanesKernel {
    /// Whether the 512-bit VAES kernel runs here.
    static let wide: Bool = {
        let f = CPU.features
        return f.vaes && f.avx512vl && f.aes && CPU.fullWidthAVX512
    }()
    static let name: String? = wide ? "vaes512-x16" : "aes-ni-x8"
    static func supported(_ f: CPUFeatures) -> Bool { f.aes && f.ssse3 && f.sse41 }
    static let lanes = wide ? 16 : 8
    /// Scratch bytes `encrypt` needs (the wide kernel's interleaved key schedules; key material, which
    /// the caller wipes).
    static let scratchBytes = wide ? 64 * 15 * 4 : 0

    /// Expands the 32-byte keys `keys[0..<count]` into their 15 encryption round keys each (240 bytes,
    /// the schedules 256 bytes apart from `enc`), four keys at a time; returns 14, the number of rounds.
    @inline(__always)
    static func expandKeys256(_ keys: UnsafePointer<UnsafeRawPointer>, _ count: Int, _ enc: UnsafeMutableRawPointer) -> Int {
        var i = 0
        while i + 4 <= count {
            aesniExpandKeys256Encrypt4(keys + i, enc + 256 * i, 256)
            i += 4
        }
        while i < count {
            _ = aesniExpandKey256Encrypt(keys[i], enc + 256 * i)
            i += 1
        }
        return 14
    }

    /// `n` blocks of each of `lanes` lanes (schedules, 32-byte IVs, in-place data, byte strides);
    /// `scratch` is `scratchBytes` bytes, 64-byte aligned.
    @inline(__always)
    static func encrypt(_ schedules: UnsafePointer<UnsafeRawPointer>, _ rounds: Int, _ ivs: UnsafePointer<UnsafeMutableRawPointer>,
                        _ data: UnsafePointer<UnsafeMutableRawPointer>, _ strides: UnsafePointer<Int>, _ n: Int,
                        _ scratch: UnsafeMutableRawPointer) {
        if wide {
            vaesIGEEncrypt16(schedules, rounds, ivs, data, strides, n, scratch)
        } else {
            aesniIGEEncrypt8(schedules, rounds, ivs, data, strides, n)
        }
    }
}

#endif
