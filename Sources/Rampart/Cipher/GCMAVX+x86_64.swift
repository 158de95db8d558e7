// x86_64 binding of the AVX build of the GHASH and GCM loops (RampartAccelAESAVX: RampartKernelSupport's
// shared bodies compiled with AVX as well, under their own entry-point names). GHASHKernel (in
// AESKernels+x86_64.swift) calls it when `GHASHKernel.avx` is set.
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelAESAVX

enum GCMAVX {
    @inline(__always)
    static func absorb(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer, _ blocks: UnsafeRawPointer, _ n: Int) {
        ghashBlocksAVX(table, state, blocks, n)
    }
    @inline(__always)
    static func encrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                        _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniAVXGCMEncrypt(rk, rounds, table, counter, state, src, dst, n)
    }
    @inline(__always)
    static func decrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                        _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        aesniAVXGCMDecrypt(rk, rounds, table, counter, state, src, dst, n)
    }
}

#endif
