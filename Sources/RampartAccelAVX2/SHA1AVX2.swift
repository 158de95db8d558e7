// SHA-1 compression (FIPS 180-4) with an AVX2 message schedule and BMI scalar rounds: the kernel for
// processors without the SHA extensions (Intel before Ice Lake server, and Goldmont). SHA-1 is here for
// the protocols that still use it (MTProto's auth_key_id and v1 envelope, HMAC-SHA1 in PBKDF2).
//
// Compiled with -parse-stdlib and +avx +avx2 +ssse3 +sse4.1 +bmi +bmi2 only. The caller must have
// checked for AVX2, BMI1 and BMI2. The whole multi-block loop lives here: one call per buffer.
//
// The shape of SHA256AVX2.swift (and of OpenSSL's and Intel's AVX2 SHA-1): two blocks, A and B, share
// one message schedule, W[t..t+3] of block A in the low half of a 256-bit vector and of block B in the
// high half. Words 16..31 follow W[t] = rol1(W[t-3] ^ W[t-8] ^ W[t-14] ^ W[t-16]), where the last word
// of a quad needs the first (W[t+3] reads W[t]): it is computed with 0 in its place and then corrected
// by rol2 of the first word's pre-rotation value (rol1(rol1(x)) = rol2(x)). From word 32 on the
// equivalent recurrence W[t] = rol2(W[t-6] ^ W[t-16] ^ W[t-28] ^ W[t-32]) has no dependency inside a
// quad. Each quad is stored with its round constant added (W+K) in a 640-byte table on the stack; the
// rounds read it through a pointer that LLVM cannot prove equal to the table (`opaque`), which keeps it
// from forwarding the vector stores to the scalar loads as extracts (see SHA256AVX2.swift).
//
// The rounds are scalar: rol 5 and rol 30 are rorx (a rotate that keeps its source), Ch is
// (b & c) + (~b & d) with andn, Maj is (b & c) + (d & (b ^ c)) (both pairs of terms never share a bit),
// about ten instructions per round. The schedule of quads 4..19 runs inside block A's rounds; block B's
// 80 rounds then read their half of the table. An odd final block is scheduled with itself as B and
// B's rounds are skipped.
//
// No branch and no memory address depends on the data: the loop bounds are the block count.

import Swift
import RampartKernelSupport

#if arch(x86_64)

private typealias V = V8

@_transparent private func splat(_ n: UInt32) -> V { splat8(n) }
@_transparent private func add(_ a: V, _ b: V) -> V { add8(a, b) }
@_transparent private func xor(_ a: V, _ b: V) -> V { xor8(a, b) }
@_transparent private func rol(_ a: V, _ n: UInt32) -> V { rotl8(a, n) }
@_transparent private func vector(_ v: SIMD8<UInt32>) -> V { vector8(v) }
@_transparent private func simd(_ v: V) -> SIMD8<UInt32> { simd8(v) }
@_transparent private func shuffle(_ v: V, _ mask: SIMD4<UInt64>) -> V { shuffle8(v, mask) }
@_transparent private func byteSwap32(_ v: V) -> V { byteSwap8(v) }

/// (lo[2], lo[3], hi[0], hi[1]) in each 128-bit half (vpalignr by 8 bytes).
@_transparent private func align8(_ lo: V, _ hi: V) -> V {
    let l = simd(lo), h = simd(hi)
    return vector(SIMD8<UInt32>(l[2], l[3], h[0], h[1], l[6], l[7], h[4], h[5]))
}

/// (x[1], x[2], x[3], 0) in each half (vpsrldq by 4 bytes).
@_transparent private func down1(_ x: V) -> V {
    shuffle(x, SIMD4<UInt64>(0x0b0a090807060504, 0x808080800f0e0d0c, 0x0b0a090807060504, 0x808080800f0e0d0c))
}

/// (0, 0, 0, x[0]) in each half (vpslldq by 12 bytes).
@_transparent private func up3(_ x: V) -> V {
    shuffle(x, SIMD4<UInt64>(0x8080808080808080, 0x0302010080808080, 0x8080808080808080, 0x0302010080808080))
}

@_transparent private func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &<< n) | (x &>> (32 &- n)) }

/// The round constants (FIPS 180-4 §4.2.1), one per twenty rounds.
@_transparent private func roundConstant(_ quad: Int) -> V {
    switch quad / 5 {
    case 0: splat(0x5a827999)
    case 1: splat(0x6ed9eba1)
    case 2: splat(0x8f1bbcdc)
    default: splat(0xca62c1d6)
    }
}

/// The message schedule's window: the last eight quads of both blocks, oldest first.
private struct Schedule {
    var q0, q1, q2, q3, q4, q5, q6, q7: V

    /// Loads and byte-swaps the sixteen words of block A (`pa`) and block B (`pb`) and stores them with
    /// K added in quads 0..3 of the table.
    @_transparent
    init(_ pa: UnsafeRawPointer, _ pb: UnsafeRawPointer, _ wk: UnsafeMutableRawPointer) {
        @_transparent func load(_ j: Int) -> V {
            let lo = pa.loadUnaligned(fromByteOffset: 16 &* j, as: SIMD4<UInt32>.self)
            let hi = pb.loadUnaligned(fromByteOffset: 16 &* j, as: SIMD4<UInt32>.self)
            let x = byteSwap32(vector(SIMD8<UInt32>(lowHalf: lo, highHalf: hi)))
            wk.storeBytes(of: simd(add(x, roundConstant(j))), toByteOffset: 32 &* j, as: SIMD8<UInt32>.self)
            return x
        }
        let z = splat(0)
        q0 = z; q1 = z; q2 = z; q3 = z
        q4 = load(0); q5 = load(1); q6 = load(2); q7 = load(3)
    }

    /// Schedules quad j (4...19), stores it with K added and slides the window.
    @_transparent
    mutating func step(_ j: Int, _ wk: UnsafeMutableRawPointer) {
        let n: V
        if j < 8 {
            // W[t..t+3] = rol1(W[t-16..] ^ W[t-14..] ^ W[t-8..] ^ (W[t-3], W[t-2], W[t-1], 0)), then
            // the last word corrected by rol2 of the first word's pre-rotation value.
            let x = xor(xor(q4, align8(q4, q5)), xor(q6, down1(q7)))
            n = xor(rol(x, 1), rol(up3(x), 2))
        } else {
            // W[t..t+3] = rol2(W[t-6..] ^ W[t-16..] ^ W[t-28..] ^ W[t-32..]).
            n = rol(xor(xor(align8(q6, q7), q4), xor(q1, q0)), 2)
        }
        wk.storeBytes(of: simd(add(n, roundConstant(j))), toByteOffset: 32 &* j, as: SIMD8<UInt32>.self)
        q0 = q1; q1 = q2; q2 = q3; q3 = q4; q4 = q5; q5 = q6; q6 = q7; q7 = n
    }
}

/// The five working variables and the four round functions, five rounds at a time (the roles rotate
/// back after five).
private struct Working {
    var a, b, c, d, e: UInt32

    @inline(__always)
    init(_ p: UnsafeMutablePointer<UInt32>) {
        a = p[0]; b = p[1]; c = p[2]; d = p[3]; e = p[4]
    }

    @inline(__always)
    func addInto(_ p: UnsafeMutablePointer<UInt32>) {
        p[0] &+= a; p[1] &+= b; p[2] &+= c; p[3] &+= d; p[4] &+= e
    }

    /// Rounds 0..19: Ch(b, c, d) = (b & c) + (~b & d).
    @_transparent static func ch(_ a: UInt32, _ b: inout UInt32, _ c: UInt32, _ d: UInt32, _ e: inout UInt32, _ wk: UInt32) {
        e = e &+ wk &+ (b & c) &+ (~b & d) &+ rotl(a, 5)
        b = rotl(b, 30)
    }
    /// Rounds 20..39 and 60..79: b ^ c ^ d.
    @_transparent static func parity(_ a: UInt32, _ b: inout UInt32, _ c: UInt32, _ d: UInt32, _ e: inout UInt32, _ wk: UInt32) {
        e = e &+ wk &+ (b ^ c ^ d) &+ rotl(a, 5)
        b = rotl(b, 30)
    }
    /// Rounds 40..59: Maj(b, c, d) = (b & c) + (d & (b ^ c)).
    @_transparent static func maj(_ a: UInt32, _ b: inout UInt32, _ c: UInt32, _ d: UInt32, _ e: inout UInt32, _ wk: UInt32) {
        e = e &+ wk &+ (b & c) &+ (d & (b ^ c)) &+ rotl(a, 5)
        b = rotl(b, 30)
    }

    /// Five rounds of function `f` (0: Ch, 1 and 3: parity, 2: Maj) reading W+K at `wk[0]`, `wk[1]`,
    /// ... with rounds 4i..4i+3 of a block at `wk[8i...8i+3]` (`index` maps a round to its word).
    @_transparent
    mutating func fiveRounds(_ f: Int, _ wk: UnsafePointer<UInt32>, _ t: Int) {
        @_transparent func w(_ r: Int) -> UInt32 { wk[8 &* (r >> 2) &+ (r & 3)] }
        switch f {
        case 0:
            Working.ch(a, &b, c, d, &e, w(t)); Working.ch(e, &a, b, c, &d, w(t &+ 1))
            Working.ch(d, &e, a, b, &c, w(t &+ 2)); Working.ch(c, &d, e, a, &b, w(t &+ 3))
            Working.ch(b, &c, d, e, &a, w(t &+ 4))
        case 2:
            Working.maj(a, &b, c, d, &e, w(t)); Working.maj(e, &a, b, c, &d, w(t &+ 1))
            Working.maj(d, &e, a, b, &c, w(t &+ 2)); Working.maj(c, &d, e, a, &b, w(t &+ 3))
            Working.maj(b, &c, d, e, &a, w(t &+ 4))
        default:
            Working.parity(a, &b, c, d, &e, w(t)); Working.parity(e, &a, b, c, &d, w(t &+ 1))
            Working.parity(d, &e, a, b, &c, w(t &+ 2)); Working.parity(c, &d, e, a, &b, w(t &+ 3))
            Working.parity(b, &c, d, e, &a, w(t &+ 4))
        }
    }

    /// Twenty rounds of function `f` starting at round `t` (a multiple of 20).
    @_transparent
    mutating func twentyRounds(_ f: Int, _ wk: UnsafePointer<UInt32>, _ t: Int) {
        fiveRounds(f, wk, t); fiveRounds(f, wk, t &+ 5); fiveRounds(f, wk, t &+ 10); fiveRounds(f, wk, t &+ 15)
    }
}

/// The W+K table of two blocks: twenty quads, block A in the low half of each.
private struct Table {
    var q: (SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>,
            SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>,
            SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>,
            SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>)
    @inline(__always) init() {
        let z = SIMD8<UInt32>(repeating: 0)
        q = (z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z)
    }
}

/// `p`, through a volatile store and load: the same address, which LLVM cannot prove.
@_transparent private func opaque(_ p: UnsafeMutableRawPointer) -> UnsafePointer<UInt32> {
    var slot = Int64(Int(bitPattern: p))
    let raw = UnsafeMutableRawPointer(Builtin.addressof(&slot))._rawValue
    Builtin.atomicstore_monotonic_volatile_Int64(raw, slot._value)
    let v = Int64(Builtin.atomicload_monotonic_volatile_Int64(raw))
    return UnsafePointer(bitPattern: Int(v))!
}

/// Compresses `count` 64-byte blocks into `state` (five words a..e, native order).
@inline(never)
public func sha1BlocksAVX2(_ state: UnsafeMutablePointer<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int) {
    var storage = Table()
    let table = UnsafeMutableRawPointer(Builtin.addressof(&storage))
    let words = opaque(table)
    var p = blocks
    var remaining = count
    while remaining > 0 {
        let pb = remaining >= 2 ? p + 64 : p
        var w = Schedule(p, pb, table)

        // Block A: the schedule of quads 4..19 runs one step per four rounds, each quad made 16 rounds
        // before its first use.
        var s = Working(state)
        s.fiveRounds(0, words, 0); w.step(4, table); w.step(5, table)
        s.fiveRounds(0, words, 5); w.step(6, table)
        s.fiveRounds(0, words, 10); w.step(7, table)
        s.fiveRounds(0, words, 15); w.step(8, table)
        s.fiveRounds(1, words, 20); w.step(9, table)
        s.fiveRounds(1, words, 25); w.step(10, table)
        s.fiveRounds(1, words, 30); w.step(11, table); w.step(12, table)
        s.fiveRounds(1, words, 35); w.step(13, table)
        s.fiveRounds(2, words, 40); w.step(14, table)
        s.fiveRounds(2, words, 45); w.step(15, table)
        s.fiveRounds(2, words, 50); w.step(16, table); w.step(17, table)
        s.fiveRounds(2, words, 55); w.step(18, table)
        s.fiveRounds(3, words, 60); w.step(19, table)
        s.fiveRounds(3, words, 65)
        s.fiveRounds(3, words, 70)
        s.fiveRounds(3, words, 75)
        s.addInto(state)

        if remaining >= 2 {
            s = Working(state)
            let wb = words + 4
            s.twentyRounds(0, wb, 0); s.twentyRounds(1, wb, 20); s.twentyRounds(2, wb, 40); s.twentyRounds(3, wb, 60)
            s.addInto(state)
            p += 128
            remaining &-= 2
        } else {
            p += 64
            remaining &-= 1
        }
    }
    // Wipe the schedule of the last blocks (volatile stores: not removable as dead).
    volatileZero(table, 640)
}

/// SHA-1 with an AVX2 message schedule and BMI2 rounds (processors without the SHA extensions).
public enum SHA1AVX2: SHA1Implementation {
    public static let name = "avx2"
    public static let requires: KernelFeatures = [.avx2]
    @inline(__always)
    public static func blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int) {
        sha1BlocksAVX2(state, data, count)
    }
}

#endif
