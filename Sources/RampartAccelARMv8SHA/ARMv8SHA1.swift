// SHA-1 compression with the ARMv8 SHA-1 instructions (sha1c, sha1p, sha1m, sha1h, sha1su0, sha1su1),
// arm64 only: four rounds per sha1c/sha1p/sha1m (Choose, Parity, Majority: rounds 0-19, 20-39 and
// 60-79, 40-59), the next group's E from sha1h (A rotated by 30), the schedule four words per
// sha1su0/sha1su1 pair (Arm ARM C7.2, "SHA1C", "SHA1H", "SHA1SU0", "SHA1SU1").
//
// Scripts/arm64-kernels.sh compiles it to arm64 machine code and runs it under qemu-aarch64 against
// FIPS 180-4's examples and hashlib. Constant time: no branch and no address depends on the data.

import Swift
import RampartKernelSupport

#if arch(arm64) || RAMPART_TYPECHECK_ARM64 || RAMPART_EMULATE_ARM64

/// W[t..t+3] from the sixteen words before them (`w0` oldest).
@inline(__always) func armSHA1Schedule(_ w0: SV, _ w1: SV, _ w2: SV, _ w3: SV) -> SV {
    armSHA1SU1(armSHA1SU0(w0, w1, w2), w3)
}

/// Compresses `count` 64-byte blocks at `data` into the five state words at `state` (FIPS 180-4
/// §6.1.2).
@inline(never)
public func armSHA1Blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int) {
    var abcd = UnsafeRawPointer(state).loadUnaligned(as: SV.self)
    var e = state[4]
    let k0 = SV(repeating: 0x5a82_7999), k1 = SV(repeating: 0x6ed9_eba1)
    let k2 = SV(repeating: 0x8f1b_bcdc), k3 = SV(repeating: 0xca62_c1d6)
    var p = data
    var n = count
    while n > 0 {
        var w0 = armLoadBE(p, 0), w1 = armLoadBE(p, 16), w2 = armLoadBE(p, 32), w3 = armLoadBE(p, 48)
        let abcd0 = abcd, e0 = e
        @inline(__always) func choose(_ w: SV, _ k: SV) { let next = armSHA1H(abcd[0]); abcd = armSHA1C(abcd, e, w &+ k); e = next }
        @inline(__always) func parity(_ w: SV, _ k: SV) { let next = armSHA1H(abcd[0]); abcd = armSHA1P(abcd, e, w &+ k); e = next }
        @inline(__always) func majority(_ w: SV, _ k: SV) { let next = armSHA1H(abcd[0]); abcd = armSHA1M(abcd, e, w &+ k); e = next }
        // Groups of four rounds; after each of the first sixteen, its words give way to four new ones.
        choose(w0, k0); w0 = armSHA1Schedule(w0, w1, w2, w3)
        choose(w1, k0); w1 = armSHA1Schedule(w1, w2, w3, w0)
        choose(w2, k0); w2 = armSHA1Schedule(w2, w3, w0, w1)
        choose(w3, k0); w3 = armSHA1Schedule(w3, w0, w1, w2)
        choose(w0, k0); w0 = armSHA1Schedule(w0, w1, w2, w3)
        parity(w1, k1); w1 = armSHA1Schedule(w1, w2, w3, w0)
        parity(w2, k1); w2 = armSHA1Schedule(w2, w3, w0, w1)
        parity(w3, k1); w3 = armSHA1Schedule(w3, w0, w1, w2)
        parity(w0, k1); w0 = armSHA1Schedule(w0, w1, w2, w3)
        parity(w1, k1); w1 = armSHA1Schedule(w1, w2, w3, w0)
        majority(w2, k2); w2 = armSHA1Schedule(w2, w3, w0, w1)
        majority(w3, k2); w3 = armSHA1Schedule(w3, w0, w1, w2)
        majority(w0, k2); w0 = armSHA1Schedule(w0, w1, w2, w3)
        majority(w1, k2); w1 = armSHA1Schedule(w1, w2, w3, w0)
        majority(w2, k2); w2 = armSHA1Schedule(w2, w3, w0, w1)
        parity(w3, k3); w3 = armSHA1Schedule(w3, w0, w1, w2)
        parity(w0, k3)
        parity(w1, k3)
        parity(w2, k3)
        parity(w3, k3)
        abcd = abcd &+ abcd0
        e = e &+ e0
        p += 64
        n &-= 1
    }
    UnsafeMutableRawPointer(state).storeBytes(of: abcd, as: SV.self)
    state[4] = e
}

#endif
