// SHA-512 compression with the ARMv8.2 SHA-512 instructions (sha512h, sha512h2, sha512su0, sha512su1;
// LLVM's "sha3" feature), arm64 only. Two rounds per sha512h/sha512h2 pair on the state pairs a:b, c:d,
// e:f, g:h (lane 0 the first letter):
//   sha512h(W1:W0 + K1:K0 + g:h, f:g, d:e) gives T1 of both rounds;
//   e:f of two rounds later is c:d + T1, and sha512h2(T1, c:d, a:b) gives a:b (T1 + T2);
// then (a:b, c:d, e:f, g:h) become (new a:b, a:b, new e:f, e:f). The schedule two words per
// sha512su0/sha512su1 pair: W[t..t+1] = σ1(W[t-2..t-1]) + W[t-7..t-6] + σ0(W[t-15..t-14]) + W[t-16..t-15].
// (The Arm ARM describes each instruction alone; Joel Sing's notes in OpenBSD's sha512_aarch64_ce.S
// describe how they combine, which this follows.)
//
// Scripts/arm64-kernels.sh compiles it to arm64 machine code and runs it under qemu-aarch64 against
// FIPS 180-4's examples and hashlib. Constant time: no branch and no address depends on the data.

import Swift
import RampartKernelSupport

#if arch(arm64) || RAMPART_TYPECHECK_ARM64 || RAMPART_EMULATE_ARM64

typealias DV = SIMD2<UInt64>

/// Lanes 1 of `a` and 0 of `b` (`ext #8`).
@inline(__always) func armExt(_ a: DV, _ b: DV) -> DV { DV(a[1], b[0]) }
@inline(__always) func armLoadBE64(_ p: UnsafeRawPointer, _ offset: Int) -> DV {
    let v = p.loadUnaligned(fromByteOffset: offset, as: DV.self)
    return DV(v[0].byteSwapped, v[1].byteSwapped)
}

/// Compresses `count` 128-byte blocks at `data` into the eight state words at `state` (FIPS 180-4
/// §6.4.2); `k` is the 80 round constants.
@inline(never)
public func armSHA512Blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ count: Int,
                            _ k: UnsafePointer<UInt64>) {
    let st = UnsafeMutableRawPointer(state), kp = UnsafeRawPointer(k)
    var hab = st.loadUnaligned(as: DV.self), hcd = st.loadUnaligned(fromByteOffset: 16, as: DV.self)
    var hef = st.loadUnaligned(fromByteOffset: 32, as: DV.self), hgh = st.loadUnaligned(fromByteOffset: 48, as: DV.self)
    var p = data
    var n = count
    while n > 0 {
        var w = (armLoadBE64(p, 0), armLoadBE64(p, 16), armLoadBE64(p, 32), armLoadBE64(p, 48),
                 armLoadBE64(p, 64), armLoadBE64(p, 80), armLoadBE64(p, 96), armLoadBE64(p, 112))
        var ab = hab, cd = hcd, ef = hef, gh = hgh
        /// Rounds 2j and 2j + 1 with W[2j..2j+1] in `wj`.
        @inline(__always) func rounds(_ wj: DV, _ j: Int) {
            let wk = wj &+ kp.loadUnaligned(fromByteOffset: 16 &* j, as: DV.self)
            let sum = DV(wk[1], wk[0]) &+ gh
            let t1 = armSHA512H(sum, armExt(ef, gh), armExt(cd, ef))
            let newEF = cd &+ t1
            let newAB = armSHA512H2(t1, cd, ab)
            gh = ef; ef = newEF; cd = ab; ab = newAB
        }
        /// W[t..t+1] from `m0` (W[t-16..t-15]), `m1`, `m4`, `m5` and `m7` (the pairs 1, 4, 5 and 7 after it).
        @inline(__always) func schedule(_ m0: DV, _ m1: DV, _ m4: DV, _ m5: DV, _ m7: DV) -> DV {
            armSHA512SU1(armSHA512SU0(m0, m1), m7, armExt(m4, m5))
        }
        rounds(w.0, 0); rounds(w.1, 1); rounds(w.2, 2); rounds(w.3, 3)
        rounds(w.4, 4); rounds(w.5, 5); rounds(w.6, 6); rounds(w.7, 7)
        var j = 8
        while j < 40 {
            w.0 = schedule(w.0, w.1, w.4, w.5, w.7); rounds(w.0, j)
            w.1 = schedule(w.1, w.2, w.5, w.6, w.0); rounds(w.1, j &+ 1)
            w.2 = schedule(w.2, w.3, w.6, w.7, w.1); rounds(w.2, j &+ 2)
            w.3 = schedule(w.3, w.4, w.7, w.0, w.2); rounds(w.3, j &+ 3)
            w.4 = schedule(w.4, w.5, w.0, w.1, w.3); rounds(w.4, j &+ 4)
            w.5 = schedule(w.5, w.6, w.1, w.2, w.4); rounds(w.5, j &+ 5)
            w.6 = schedule(w.6, w.7, w.2, w.3, w.5); rounds(w.6, j &+ 6)
            w.7 = schedule(w.7, w.0, w.3, w.4, w.6); rounds(w.7, j &+ 7)
            j &+= 8
        }
        hab = hab &+ ab; hcd = hcd &+ cd; hef = hef &+ ef; hgh = hgh &+ gh
        p += 128
        n &-= 1
    }
    st.storeBytes(of: hab, as: DV.self)
    st.storeBytes(of: hcd, toByteOffset: 16, as: DV.self)
    st.storeBytes(of: hef, toByteOffset: 32, as: DV.self)
    st.storeBytes(of: hgh, toByteOffset: 48, as: DV.self)
}

#endif
