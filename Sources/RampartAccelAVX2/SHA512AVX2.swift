// SHA-512 compression (FIPS 180-4) with an AVX2 message schedule and BMI scalar rounds.
//
// Compiled with -parse-stdlib and +avx +avx2 +ssse3 +sse4.1 +bmi +bmi2 only. The caller must have
// checked for AVX2, BMI1 and BMI2. The whole multi-block loop lives here: one call per buffer.
//
// Two blocks, A and B, share one message schedule: a 256-bit vector holds the word pair
// (W[t], W[t+1]) of block A in its low half and of block B in its high half, so one vector step
// computes four schedule words. The recurrence needs W[t-15..t-14] and W[t-7..t-6], which straddle
// two pairs; `align` takes them from neighbouring vectors inside each 128-bit half (vpalignr).
// Every pair is stored with K added (W+K) in a 1280-byte table. σ0's rotation by 8 is a byte
// shuffle (vpshufb).
//
// The rounds are scalar (rorx: a rotate that leaves its source intact, so each Σ is three
// independent rotations and two XORs; andn for Ch). They are bound by instruction throughput (27
// instructions a round as compiled), not by the two dependency chains (five operations from e to
// e, four from a to a; see `round` for the measurements). The 64 schedule steps of rounds 16..79
// are interleaved with block A's rounds, so the vector unit works while the scalar rounds run; block
// B's rounds then read their half of the table. An odd final block is scheduled with itself as B
// and B's rounds are skipped.

import Swift
import RampartKernelSupport

#if arch(x86_64)

private typealias Pair4 = SIMD4<UInt64>

/// Byte swap of every 64-bit lane (vpshufb).
@inline(__always) private func byteSwap64(_ v: Pair4) -> Pair4 {
    let mask = Pair4(0x0001020304050607, 0x08090a0b0c0d0e0f, 0x0001020304050607, 0x08090a0b0c0d0e0f)
    let r = Builtin.int_x86_avx2_pshuf_b(
        unsafeBitCast(v, to: Builtin.Vec32xInt8.self), unsafeBitCast(mask, to: Builtin.Vec32xInt8.self))
    return unsafeBitCast(r, to: Pair4.self)
}

/// (lo[1], hi[0]) in each 128-bit half: the pair that starts one word after `lo`'s pair.
@inline(__always) private func align(_ lo: Pair4, _ hi: Pair4) -> Pair4 {
    Pair4(lo[1], hi[0], lo[3], hi[2])
}

/// Rotates every 64-bit lane right by 8: a byte permutation (one vpshufb instead of two shifts and
/// an XOR).
@inline(__always) private func rotr8(_ v: Pair4) -> Pair4 {
    let mask = Pair4(0x0007060504030201, 0x080f0e0d0c0b0a09, 0x0007060504030201, 0x080f0e0d0c0b0a09)
    let r = Builtin.int_x86_avx2_pshuf_b(
        unsafeBitCast(v, to: Builtin.Vec32xInt8.self), unsafeBitCast(mask, to: Builtin.Vec32xInt8.self))
    return unsafeBitCast(r, to: Pair4.self)
}

/// σ0 on every lane: rotr 1 ^ rotr 8 ^ shr 7.
@inline(__always) private func smallSigma0(_ x: Pair4) -> Pair4 {
    (x &>> 1) ^ (x &<< 63) ^ rotr8(x) ^ (x &>> 7)
}

/// σ1 on every lane: rotr 19 ^ rotr 61 ^ shr 6.
@inline(__always) private func smallSigma1(_ x: Pair4) -> Pair4 {
    (x &>> 19) ^ (x &<< 45) ^ (x &>> 61) ^ (x &<< 3) ^ (x &>> 6)
}

@inline(__always) private func rotr(_ x: UInt64, _ n: UInt64) -> UInt64 { (x &>> n) | (x &<< (64 &- n)) }

/// One round; the caller rotates the roles of the eight working variables. `bc` holds b ^ c on entry
/// and a ^ b on exit, which is the next round's b ^ c.
///
/// Measured variants (1 MiB, ratio to OpenSSL's AVX2 code): Maj as b ^ ((a ^ b) & bc), one
/// operation fewer but one longer chain from a: 0.86×; the form below: 0.88×; a separate
/// d + (h + W+K) + Ch sum to shorten the chain from e: 0.74× (LLVM then needs more registers than
/// x86 has).
///
/// On Zen 5 (2026-11-29) this core runs such rounds at about 4.5 instructions a cycle whatever the
/// dependency chains, so the instruction count decides. `python3 Scripts/sha512-rounds.py` times
/// hand-written sequences: OpenSSL's 24-instruction round 5.4–5.5 cycles, the form below as LLVM
/// emits it (26 without the table-pointer reload) 5.7–5.8, with OpenSSL's Maj (24) 5.6, a chain of
/// four from e to e (28) 6.2. LLVM emits 27 a round here (Maj as (a & bc) + (b & c) costs two more
/// than b ^ ((a ^ b) & bc), and the spilled table pointer is reloaded before each W+K load): about
/// 6.0 cycles, 1120–1140 MB/s in a stand-alone loop. Tried in that loop and no faster: OpenSSL's Maj
/// (everywhere or in block B only: more spills where the schedule is interleaved); chains of four
/// from e and from a (new e as one sum ending in Σ1, new a from new e − d), level once
/// `-Xllvm -misched=ilpmin` removes the spills and 935–950 MB/s without it; `-mtune=znver3/4/5`;
/// `freeze` to pin the association (InstCombine drops it). Per-module LLVM options, which a tier
/// target of its own could set (2026-11-29, same loop, 1113–1144 MB/s for the committed form between
/// runs): `-misched=ilpmax` 1057–1089, `ilpmin` 1108, `-pre-RA-sched=list-ilp` 1069, `list-hybrid`
/// 999, `-regalloc=basic` 930, `pbqp` 619; `-post-RA-scheduler`, `-enable-post-misched`,
/// `-misched-postra`, `-twoaddr-reschedule=false`, `-disable-machine-cse`, `-pre-RA-sched=source`
/// within that range. Vector rounds lose: each dependent `vpaddq`, `vpternlogq` or `vprorq` takes two
/// cycles on Zen 5.
@inline(__always)
private func round(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: inout UInt64,
                   _ e: UInt64, _ f: UInt64, _ g: UInt64, _ h: inout UInt64, _ wk: UInt64,
                   _ bc: inout UInt64) {
    let s1 = rotr(e, 14) ^ rotr(e, 18) ^ rotr(e, 41)
    // Ch(e, f, g) = (e & f) ^ (~e & g); the two terms never share a bit, so they can be added
    // (and ~e & g is one andn).
    let t1 = (h &+ wk) &+ (e & f) &+ (~e & g) &+ s1
    let s0 = rotr(a, 28) ^ rotr(a, 34) ^ rotr(a, 39)
    // Maj(a, b, c) = (a & (b ^ c)) + (b & c) (disjoint terms): only a & (b ^ c) waits for a.
    let ab = a ^ b
    let m = a & bc
    bc = ab
    d = d &+ t1
    h = ((t1 &+ (b & c)) &+ m) &+ s0
}

/// The eight working variables.
private struct Working {
    var a, b, c, d, e, f, g, h: UInt64

    @inline(__always)
    init(_ p: UnsafeMutablePointer<UInt64>) {
        a = p[0]; b = p[1]; c = p[2]; d = p[3]; e = p[4]; f = p[5]; g = p[6]; h = p[7]
    }

    /// The feed-forward: `p[i] += self[i]`.
    @inline(__always)
    func addInto(_ p: UnsafeMutablePointer<UInt64>) {
        p[0] &+= a; p[1] &+= b; p[2] &+= c; p[3] &+= d; p[4] &+= e; p[5] &+= f; p[6] &+= g; p[7] &+= h
    }

    /// Eight rounds reading W+K at `wk[0]`, `wk[stride]`, ... (stride in words).
    @inline(__always)
    mutating func eightRounds(_ wk: UnsafePointer<UInt64>, _ bc: inout UInt64) {
        // Round t of a pair table lives at word 4·(t/2) + t%2 (block A; block B adds 2).
        round(a, b, c, &d, e, f, g, &h, wk[0], &bc)
        round(h, a, b, &c, d, e, f, &g, wk[1], &bc)
        round(g, h, a, &b, c, d, e, &f, wk[4], &bc)
        round(f, g, h, &a, b, c, d, &e, wk[5], &bc)
        round(e, f, g, &h, a, b, c, &d, wk[8], &bc)
        round(d, e, f, &g, h, a, b, &c, wk[9], &bc)
        round(c, d, e, &f, g, h, a, &b, wk[12], &bc)
        round(b, c, d, &e, f, g, h, &a, wk[13], &bc)
    }
}

/// Compresses `count` 128-byte blocks into `state` (eight words, native order). `k` points to the
/// 80 round constants laid out in pairs for both blocks (K[2j], K[2j+1], K[2j], K[2j+1] for
/// j = 0..<40, 160 words); `table` to 1280 bytes of scratch (8-byte aligned), which the caller wipes.
@inline(never)
public func sha512BlocksAVX2(_ state: UnsafeMutablePointer<UInt64>, _ blocks: UnsafeRawPointer, _ count: Int,
                             _ k: UnsafePointer<UInt64>, _ table: UnsafeMutableRawPointer) {
    do {
        let wk = table
        let words = wk.assumingMemoryBound(to: UInt64.self)
        let kRaw = UnsafeRawPointer(k)
        var p = blocks
        var remaining = count
        while remaining > 0 {
            let pb = remaining >= 2 ? p + 128 : p

            @inline(__always) func kPair(_ j: Int) -> Pair4 {
                kRaw.loadUnaligned(fromByteOffset: 32 &* j, as: Pair4.self)
            }
            @inline(__always) func load(_ j: Int) -> Pair4 {
                let lo = p.loadUnaligned(fromByteOffset: 16 &* j, as: SIMD2<UInt64>.self)
                let hi = pb.loadUnaligned(fromByteOffset: 16 &* j, as: SIMD2<UInt64>.self)
                let x = byteSwap64(Pair4(lowHalf: lo, highHalf: hi))
                wk.storeBytes(of: x &+ kPair(j), toByteOffset: 32 &* j, as: Pair4.self)
                return x
            }
            var x0 = load(0), x1 = load(1), x2 = load(2), x3 = load(3)
            var x4 = load(4), x5 = load(5), x6 = load(6), x7 = load(7)

            /// Schedule pair j (8...39) from the previous eight and slide the window.
            @inline(__always) func schedule(_ j: Int) {
                let n = x0 &+ smallSigma0(align(x0, x1)) &+ align(x4, x5) &+ smallSigma1(x7)
                wk.storeBytes(of: n &+ kPair(j), toByteOffset: 32 &* j, as: Pair4.self)
                x0 = x1; x1 = x2; x2 = x3; x3 = x4; x4 = x5; x5 = x6; x6 = x7; x7 = n
            }

            // Block A: rounds 0..63 with the schedule of pairs 8..39 interleaved, then 64..79.
            // The chaining value is reloaded from `state` (not kept in registers across the rounds,
            // where it would only add to the register pressure).
            var s = Working(state)
            var bc = s.b ^ s.c
            var j = 0
            while j < 32 {
                s.eightRounds(words + 4 &* j, &bc)
                schedule(j &+ 8); schedule(j &+ 9); schedule(j &+ 10); schedule(j &+ 11)
                j &+= 4
            }
            while j < 40 {
                s.eightRounds(words + 4 &* j, &bc)
                j &+= 4
            }
            s.addInto(state)

            if remaining >= 2 {
                s = Working(state)
                bc = s.b ^ s.c
                let wb = words + 2
                s.eightRounds(wb, &bc); s.eightRounds(wb + 16, &bc); s.eightRounds(wb + 32, &bc)
                s.eightRounds(wb + 48, &bc); s.eightRounds(wb + 64, &bc); s.eightRounds(wb + 80, &bc)
                s.eightRounds(wb + 96, &bc); s.eightRounds(wb + 112, &bc); s.eightRounds(wb + 128, &bc)
                s.eightRounds(wb + 144, &bc)
                s.addInto(state)
                p += 256
                remaining &-= 2
            } else {
                p += 128
                remaining &-= 1
            }
        }
    }
}

/// The round constants as ``sha512BlocksAVX2(_:_:_:_:_:)`` reads them: K[2j], K[2j+1] twice (once per
/// block of a pair).
let sha512ConstantPairs: [UInt64] = {
    var t: [UInt64] = []
    t.reserveCapacity(160)
    for j in 0..<40 {
        let k0 = sha512RoundConstants[2 * j], k1 = sha512RoundConstants[2 * j + 1]
        t.append(k0); t.append(k1); t.append(k0); t.append(k1)
    }
    return t
}()

/// 1280 bytes of stack scratch (two 128-byte-block message schedules).
private struct SHA512Scratch {
    var storage: (SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>,
                  SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>,
                  SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>,
                  SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>, SIMD64<UInt8>)
    init() {
        let z = SIMD64<UInt8>(repeating: 0)
        storage = (z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z)
    }
}

/// SHA-512 with an AVX2 message schedule and BMI2 rounds.
public enum SHA512AVX2: SHA512Implementation {
    public static let name = "avx2"
    public static let requires: KernelFeatures = [.avx2]
    @inline(__always)
    public static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ count: Int) {
        var scratch = SHA512Scratch()
        sha512ConstantPairs.withUnsafeBufferPointer { k in
            withUnsafeMutableBytes(of: &scratch) { table in
                sha512BlocksAVX2(state, data, count, k.baseAddress!, table.baseAddress!)
                volatileZero(table.baseAddress!, 1280)  // the message schedule
            }
        }
    }
}

#endif
