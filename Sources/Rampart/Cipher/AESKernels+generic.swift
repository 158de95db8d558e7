// The AES and GHASH kernels on architectures with neither AES-NI nor the ARMv8 cryptography extensions:
// `Kernels.aes` and `Kernels.ghash` are inactive there, so no engine reaches these entry points.
#if !arch(x86_64) && !arch(arm64) && !RAMPART_TYPECHECK_ARM64

enum AESKernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }

    /// Expands a 16-, 24- or 32-byte key into encryption round keys at `enc` and decryption round keys
    /// at `dec`; returns the number of rounds.
    static func expandKey(_ key: UnsafeRawPointer, _ n: Int, _ enc: UnsafeMutableRawPointer,
                          _ dec: UnsafeMutableRawPointer) -> Int {
        preconditionFailure("unreachable: Kernels.aes is inactive on this architecture")
    }
    static func encryptECB(_ rk: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: Kernels.aes is inactive on this architecture")
    }
    static func decryptECB(_ dk: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: Kernels.aes is inactive on this architecture")
    }
    static func ctr(_ rk: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                    _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: Kernels.aes is inactive on this architecture")
    }
    static func cbcEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: Kernels.aes is inactive on this architecture")
    }
    static func cbcDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: Kernels.aes is inactive on this architecture")
    }
    static func igeEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: Kernels.aes is inactive on this architecture")
    }
    static func igeDecrypt(_ dk: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: Kernels.aes is inactive on this architecture")
    }
}

enum GHASHKernel {
    static let name: String? = nil
    static let selectedName: String? = name
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static let stitchesGCM = false

    static func precompute(_ h: UnsafeRawPointer, _ table: UnsafeMutableRawPointer, _ allPowers: Bool) {
        preconditionFailure("unreachable: Kernels.ghash is inactive on this architecture")
    }
    static func absorb(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer, _ blocks: UnsafeRawPointer, _ n: Int) {
        preconditionFailure("unreachable: Kernels.ghash is inactive on this architecture")
    }
    static func gcmEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                           _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: Kernels.ghash is inactive on this architecture")
    }
    static func gcmDecrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                           _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        preconditionFailure("unreachable: Kernels.ghash is inactive on this architecture")
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
