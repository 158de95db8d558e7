// SHA-256 compression of eight independent messages at once (multi-buffer), one per 32-bit lane of
// 256-bit AVX2 registers: for processors without the SHA extensions, where one message's rounds are
// bound by the scalar round chain (SHA256AVX2.swift) and eight messages' rounds in vectors do about
// three times the work per cycle. MTProto's batch encryption feeds it (Rampart's MultiBuffer).
//
// Compiled with -parse-stdlib and +avx +avx2 +ssse3 +sse4.1 +bmi +bmi2 only, here, and once more with
// +avx512f +avx512vl as RampartAccelAVX512 (a symbolic link to this file): there LLVM turns each
// rotation (two shifts and an OR) into one vprord and each three-way XOR, Ch and Maj into one
// vpternlogd, on the same 256-bit registers. The caller must have checked for AVX2 (or AVX-512VL).
// The vector code uses the Builtin operations of Vec8.swift.
//
// Each call runs `n` blocks on every lane: the eight states are loaded into eight vectors (a..h, lane
// l = message l), each block's sixteen words are transposed through a stack table (scalar big-endian
// loads, one 32-bit store per word), and the 64 rounds run in vectors, computing the message schedule
// W[16..63] into the same table two rounds ahead of its use. AVX2 has no vector rotate: each rotation
// is two shifts and an OR. No branch and no memory address depends on the data or the states.

import Swift

#if arch(x86_64)

private typealias V = V8

@_transparent private func splat(_ n: UInt32) -> V { splat8(n) }
@_transparent private func add(_ a: V, _ b: V) -> V { add8(a, b) }
@_transparent private func xor(_ a: V, _ b: V) -> V { xor8(a, b) }
@_transparent private func and(_ a: V, _ b: V) -> V { and8(a, b) }
@_transparent private func shr(_ a: V, _ n: UInt32) -> V { shr8(a, n) }
@_transparent private func rotr(_ a: V, _ n: UInt32) -> V { rotr8(a, n) }
/// ~a & b (vpandn).
@_transparent private func andNot(_ a: V, _ b: V) -> V { and(xor(a, splat(~0)), b) }

@_transparent private func load(_ p: UnsafeRawPointer, _ offset: Int) -> V {
    unsafeBitCast(p.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt32>.self), to: V.self)
}
@_transparent private func store(_ v: V, _ p: UnsafeMutableRawPointer, _ offset: Int) {
    p.storeBytes(of: unsafeBitCast(v, to: SIMD8<UInt32>.self), toByteOffset: offset, as: SIMD8<UInt32>.self)
}

/// The eight working variables, one message per lane.
private struct Lanes {
    var a, b, c, d, e, f, g, h: V

    /// One round with W[t] + K[t] in `wk`; the caller rotates the roles of the variables.
    @_transparent
    static func round(_ a: V, _ b: V, _ c: V, _ d: inout V, _ e: V, _ f: V, _ g: V, _ h: inout V, _ wk: V) {
        let s1 = xor(xor(rotr(e, 6), rotr(e, 11)), rotr(e, 25))
        let ch = xor(and(e, f), andNot(e, g))
        let t1 = add(add(add(h, wk), ch), s1)
        let s0 = xor(xor(rotr(a, 2), rotr(a, 13)), rotr(a, 22))
        // Maj(a, b, c) = (a & b) ^ (c & (a ^ b)).
        let maj = xor(and(a, b), and(c, xor(a, b)))
        d = add(d, t1)
        h = add(add(t1, s0), maj)
    }
}

/// σ0 of every lane: rotr 7 ^ rotr 18 ^ shr 3.
@_transparent private func smallSigma0(_ x: V) -> V { xor(xor(rotr(x, 7), rotr(x, 18)), shr(x, 3)) }
/// σ1 of every lane: rotr 17 ^ rotr 19 ^ shr 10.
@_transparent private func smallSigma1(_ x: V) -> V { xor(xor(rotr(x, 17), rotr(x, 19)), shr(x, 10)) }

/// Compresses `n` 64-byte blocks on each of eight lanes: lane l's state is the eight words at
/// `states[l]`, its blocks start at `data[l]`, `strides[l]` bytes apart (0 for an idle lane that
/// repeats one scratch block). `k` points to the 64 round constants. `table` is 2 KiB of scratch
/// (32-byte aligned) for the transposed message schedule, which the caller wipes.
@inline(never)
public func sha256Lanes8AVX2(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                             _ strides: UnsafePointer<Int>, _ n: Int, _ k: UnsafePointer<UInt32>, _ table: UnsafeMutableRawPointer) {
    guard n > 0 else { return }
    @_transparent func gather(_ w: Int) -> V {
        unsafeBitCast(SIMD8<UInt32>(states[0][w], states[1][w], states[2][w], states[3][w],
                                    states[4][w], states[5][w], states[6][w], states[7][w]), to: V.self)
    }
    var s = Lanes(a: gather(0), b: gather(1), c: gather(2), d: gather(3), e: gather(4), f: gather(5), g: gather(6), h: gather(7))
    let words = table.assumingMemoryBound(to: UInt32.self)
    do {
        var p = (data[0], data[1], data[2], data[3], data[4], data[5], data[6], data[7])
        for _ in 0..<n {
            // Transpose: word t of lane l to table[8t + l].
            @_transparent func lane(_ l: Int, _ q: UnsafeMutableRawPointer) {
                for t in 0..<16 { words[8 &* t &+ l] = UInt32(bigEndian: q.loadUnaligned(fromByteOffset: 4 &* t, as: UInt32.self)) }
            }
            lane(0, p.0); lane(1, p.1); lane(2, p.2); lane(3, p.3); lane(4, p.4); lane(5, p.5); lane(6, p.6); lane(7, p.7)
            let start = s
            @_transparent func wk(_ t: Int) -> V { add(load(table, 32 &* t), splat(k[t])) }
            /// W[t] from the sixteen before it, into the table.
            @_transparent func schedule(_ t: Int) {
                let w = add(add(smallSigma1(load(table, 32 &* (t &- 2))), load(table, 32 &* (t &- 7))),
                            add(smallSigma0(load(table, 32 &* (t &- 15))), load(table, 32 &* (t &- 16))))
                store(w, table, 32 &* t)
            }
            // Rounds t ..< t + 8, and while t < 48 the schedule of W[t + 16 ..< t + 24], which the
            // rounds of the iteration after next read: the schedule's chain (W[t] needs W[t - 2])
            // then runs beside the rounds' chain instead of in a loop of its own before them, where it
            // took about a third of the kernel's time (measured, 2026-11-29).
            var t = 0
            while t < 64 {
                let more = t < 48
                Lanes.round(s.a, s.b, s.c, &s.d, s.e, s.f, s.g, &s.h, wk(t))
                if more { schedule(t &+ 16); schedule(t &+ 17) }
                Lanes.round(s.h, s.a, s.b, &s.c, s.d, s.e, s.f, &s.g, wk(t &+ 1))
                Lanes.round(s.g, s.h, s.a, &s.b, s.c, s.d, s.e, &s.f, wk(t &+ 2))
                if more { schedule(t &+ 18); schedule(t &+ 19) }
                Lanes.round(s.f, s.g, s.h, &s.a, s.b, s.c, s.d, &s.e, wk(t &+ 3))
                Lanes.round(s.e, s.f, s.g, &s.h, s.a, s.b, s.c, &s.d, wk(t &+ 4))
                if more { schedule(t &+ 20); schedule(t &+ 21) }
                Lanes.round(s.d, s.e, s.f, &s.g, s.h, s.a, s.b, &s.c, wk(t &+ 5))
                Lanes.round(s.c, s.d, s.e, &s.f, s.g, s.h, s.a, &s.b, wk(t &+ 6))
                if more { schedule(t &+ 22); schedule(t &+ 23) }
                Lanes.round(s.b, s.c, s.d, &s.e, s.f, s.g, s.h, &s.a, wk(t &+ 7))
                t &+= 8
            }
            s.a = add(s.a, start.a); s.b = add(s.b, start.b); s.c = add(s.c, start.c); s.d = add(s.d, start.d)
            s.e = add(s.e, start.e); s.f = add(s.f, start.f); s.g = add(s.g, start.g); s.h = add(s.h, start.h)
            p.0 += strides[0]; p.1 += strides[1]; p.2 += strides[2]; p.3 += strides[3]
            p.4 += strides[4]; p.5 += strides[5]; p.6 += strides[6]; p.7 += strides[7]
        }
    }
    @_transparent func scatter(_ v: V, _ w: Int) {
        let x = unsafeBitCast(v, to: SIMD8<UInt32>.self)
        states[0][w] = x[0]; states[1][w] = x[1]; states[2][w] = x[2]; states[3][w] = x[3]
        states[4][w] = x[4]; states[5][w] = x[5]; states[6][w] = x[6]; states[7][w] = x[7]
    }
    scatter(s.a, 0); scatter(s.b, 1); scatter(s.c, 2); scatter(s.d, 3)
    scatter(s.e, 4); scatter(s.f, 5); scatter(s.g, 6); scatter(s.h, 7)
}

#endif
