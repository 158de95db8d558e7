// SHA-256 compression with the ARMv8 SHA-256 instructions (sha256h, sha256h2, sha256su0, sha256su1),
// arm64 only: four rounds per sha256h/sha256h2 pair, the message schedule four words per
// sha256su0/sha256su1 pair, as the Arm ARM's SHA256H pseudocode (C7.2, "SHA256H") defines them; the
// structure of every ARMv8 SHA-256 implementation (Linux's sha2-ce, OpenSSL's sha256-armv8).
//
// Scripts/arm64-kernels.sh compiles this file to arm64 machine code and runs it under qemu-aarch64
// against FIPS 180-4's examples and Python's hashlib; it is not measured on Apple silicon.
// Constant time: no branch and no address depends on the message or the state.

import Swift
import RampartKernelSupport

#if arch(arm64) || RAMPART_TYPECHECK_ARM64 || RAMPART_EMULATE_ARM64

typealias SV = SIMD4<UInt32>

/// Four big-endian message words.
@inline(__always) func armLoadBE(_ p: UnsafeRawPointer, _ offset: Int) -> SV {
    let v = p.loadUnaligned(fromByteOffset: offset, as: SV.self)
    return SV(v[0].byteSwapped, v[1].byteSwapped, v[2].byteSwapped, v[3].byteSwapped)
}

/// Compresses `count` 64-byte blocks at `data` into the eight state words at `state` (FIPS 180-4
/// §6.2.2); `k` is the 64 round constants.
@inline(never)
public func armSHA256Blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int,
                            _ k: UnsafePointer<UInt32>) {
    let st = UnsafeMutableRawPointer(state), kp = UnsafeRawPointer(k)
    var abcd = st.loadUnaligned(as: SV.self), efgh = st.loadUnaligned(fromByteOffset: 16, as: SV.self)
    var p = data
    var n = count
    while n > 0 {
        var w0 = armLoadBE(p, 0), w1 = armLoadBE(p, 16), w2 = armLoadBE(p, 32), w3 = armLoadBE(p, 48)
        let abcd0 = abcd, efgh0 = efgh
        @inline(__always) func rounds(_ w: SV, _ group: Int) {
            let wk = w &+ kp.loadUnaligned(fromByteOffset: 16 &* group, as: SV.self)
            let a = abcd
            abcd = armSHA256H(abcd, efgh, wk)
            efgh = armSHA256H2(efgh, a, wk)
        }
        var g = 0
        while g < 12 {
            rounds(w0, g); w0 = armSHA256SU1(armSHA256SU0(w0, w1), w2, w3)
            rounds(w1, g &+ 1); w1 = armSHA256SU1(armSHA256SU0(w1, w2), w3, w0)
            rounds(w2, g &+ 2); w2 = armSHA256SU1(armSHA256SU0(w2, w3), w0, w1)
            rounds(w3, g &+ 3); w3 = armSHA256SU1(armSHA256SU0(w3, w0), w1, w2)
            g &+= 4
        }
        rounds(w0, 12); rounds(w1, 13); rounds(w2, 14); rounds(w3, 15)
        abcd = abcd &+ abcd0
        efgh = efgh &+ efgh0
        p += 64
        n &-= 1
    }
    st.storeBytes(of: abcd, as: SV.self)
    st.storeBytes(of: efgh, toByteOffset: 16, as: SV.self)
}

#endif
