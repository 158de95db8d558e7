// arm64 bindings of the AES and GHASH kernels (see Platform/Kernels.swift): the ARMv8 cryptography
// extensions (RampartAccelARMv8). Type-checked on x86_64 with `-D RAMPART_TYPECHECK_ARM64` (see
// Sources/RampartAccelARMv8/ARMv8AES.swift); run `rampart vectors` on an arm64 machine before relying on it.
#if arch(arm64) || RAMPART_TYPECHECK_ARM64

internal import RampartAccelARMv8

enum AESKernel {
    static let name: String? = "armv8-aes"
    static func supported(_ f: CPUFeatures) -> Bool { f.armAES }

    /// Expands a 16-, 24- or 32-byte key into encryption round keys at `enc` and decryption round keys
    /// at `dec`; returns the number of rounds.
    @inline(__always)
    static func expandKey(_ key: UnsafeRawPointer, _ n: Int, _ enc: UnsafeMutableRawPointer,
                          _ dec: UnsafeMutableRawPointer) -> Int { armExpandKey(key, n, enc, dec) }
    @inline(__always)
    static func encryptECB(_ rk: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) { armEncryptECB(rk, rounds, src, dst, n) }
    @inline(__always)
    static func decryptECB(_ dk: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) { armDecryptECB(dk, rounds, src, dst, n) }
    @inline(__always)
    static func ctr(_ rk: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                    _ dst: UnsafeMutableRawPointer, _ n: Int) { armCTR(rk, rounds, counter, src, dst, n) }
    @inline(__always)
    static func cbcEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) { armCBCEncrypt(rk, rounds, iv, src, dst, n) }
    @inline(__always)
    static func cbcDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) { armCBCDecrypt(dk, rounds, iv, src, dst, n) }
    @inline(__always)
    static func igeEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) { armIGEEncrypt(rk, rounds, iv, src, dst, n) }
    @inline(__always)
    static func igeDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) { armIGEDecrypt(dk, rounds, iv, src, dst, n) }
}

enum GHASHKernel {
    static let name: String? = "pmull"
    static let selectedName: String? = name
    static func supported(_ f: CPUFeatures) -> Bool { f.armPMULL }
    /// No stitched AES + GHASH kernel on arm64 yet: GCM runs CTR and GHASH as two kernels.
    static let stitchesGCM = false

    @inline(__always)
    static func precompute(_ h: UnsafeRawPointer, _ table: UnsafeMutableRawPointer, _ allPowers: Bool) {
        armGHASHPrecompute(h, table)
    }
    @inline(__always)
    static func absorb(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer, _ blocks: UnsafeRawPointer, _ n: Int) {
        armGHASHBlocks(table, state, blocks, n)
    }
    static func gcmEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                           _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: GHASHKernel.stitchesGCM is false on arm64")
    }
    static func gcmDecrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                           _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: GHASHKernel.stitchesGCM is false on arm64")
    }
}


/// No wide GCM tier on this architecture (its choice is inactive, so these are unreachable).
enum GHASHWideKernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static func extend(_ table: UnsafeMutableRawPointer) {
        preconditionFailure("unreachable: Kernels.ghashWide is inactive on this architecture")
    }
    static func gcmEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                           _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: Kernels.ghashWide is inactive on this architecture")
    }
    static func gcmDecrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                           _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: Kernels.ghashWide is inactive on this architecture")
    }
}

enum AESWideKernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static func ctr(_ rk: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                    _ dst: UnsafeMutableRawPointer, _ n: Int) -> Int {
        preconditionFailure("unreachable: Kernels.aesWide is inactive on this architecture")
    }
    static func cbcDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) -> Int {
        preconditionFailure("unreachable: Kernels.aesWide is inactive on this architecture")
    }
}

enum IGESHA256Kernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static func decrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                        _ buffer: UnsafeMutableRawPointer, _ n: Int, _ words: UnsafeMutablePointer<UInt32>, _ prefix: UnsafeRawPointer,
                        _ k: UnsafePointer<UInt32>) -> Int {
        preconditionFailure("unreachable: Kernels.igeSHA256 is inactive on this architecture")
    }
}

enum IGELanesKernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static let lanes = 1
    static func expandKeys256(_ keys: UnsafePointer<UnsafeRawPointer>, _ count: Int, _ enc: UnsafeMutableRawPointer) -> Int {
        preconditionFailure("unreachable: Kernels.igeLanes is inactive on this architecture")
    }
    static let scratchBytes = 0
    static func encrypt(_ schedules: UnsafePointer<UnsafeRawPointer>, _ rounds: Int, _ ivs: UnsafePointer<UnsafeMutableRawPointer>,
                        _ data: UnsafePointer<UnsafeMutableRawPointer>, _ strides: UnsafePointer<Int>, _ n: Int,
                        _ scratch: UnsafeMutableRawPointer) {
        preconditionFailure("unreachable: Kernels.igeLanes is inactive on this architecture")
    }
}

#endif
