// SHA-256 compression of eight independent messages at once (multi-buffer), one per 32-bit lane of
// 256-bit registers: for processors without the SHA extensions, where one message's rounds are bound
// by the scalar round chain and eight messages' rounds in vectors do about three times the work per
// cycle. MTProto's batch encryption feeds it (Rampart's MultiBuffer). The one body of two kernels,
// `@_alwaysEmitIntoClient` as in Salsa20Lanes8.swift: RampartAccelAVX2's `sha256Lanes8AVX2` (two
// shifts and an OR per rotation) and RampartAccelAVX512's `sha256Lanes8AVX512VL`, where LLVM turns
// each rotation into one vprord and each three-way XOR, Ch and Maj into one vpternlogd, on the same
// 256-bit registers. The vector code uses the Builtin operations of Vec8.swift.
//
// Each call runs `n` blocks on every lane: the eight states are loaded into eight vectors (a..h, lane
// l = message l), each block's sixteen words are transposed through a stack table (scalar big-endian
// loads, one 32-bit store per word), and the 64 rounds run in vectors, computing the message schedule
// W[16..63] into the same table two rounds ahead of its use. No branch and no memory address depends
// on the data or the states.

import Swift

#if arch(x86_64)

/// ~a & b (vpandn).
@usableFromInline @_alwaysEmitIntoClient @_transparent func s8andNot(_ a: V8, _ b: V8) -> V8 { and8(xor8(a, splat8(~0)), b) }

@usableFromInline @_alwaysEmitIntoClient @_transparent func s8load(_ p: UnsafeRawPointer, _ offset: Int) -> V8 {
    unsafeBitCast(p.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt32>.self), to: V8.self)
}
@usableFromInline @_alwaysEmitIntoClient @_transparent func s8store(_ v: V8, _ p: UnsafeMutableRawPointer, _ offset: Int) {
    p.storeBytes(of: unsafeBitCast(v, to: SIMD8<UInt32>.self), toByteOffset: offset, as: SIMD8<UInt32>.self)
}

/// The eight working variables, one message per lane.
@usableFromInline struct SHA256Lanes8State {
    @usableFromInline var a, b, c, d, e, f, g, h: V8

    @usableFromInline @_alwaysEmitIntoClient @_transparent
    init(a: V8, b: V8, c: V8, d: V8, e: V8, f: V8, g: V8, h: V8) {
        self.a = a; self.b = b; self.c = c; self.d = d; self.e = e; self.f = f; self.g = g; self.h = h
    }

    /// One round with W[t] + K[t] in `wk`; the caller rotates the roles of the variables.
    @usableFromInline @_alwaysEmitIntoClient @_transparent
    static func round(_ a: V8, _ b: V8, _ c: V8, _ d: inout V8, _ e: V8, _ f: V8, _ g: V8, _ h: inout V8, _ wk: V8) {
        let s1 = xor8(xor8(rotr8(e, 6), rotr8(e, 11)), rotr8(e, 25))
        let ch = xor8(and8(e, f), s8andNot(e, g))
        let t1 = add8(add8(add8(h, wk), ch), s1)
        let s0 = xor8(xor8(rotr8(a, 2), rotr8(a, 13)), rotr8(a, 22))
        // Maj(a, b, c) = (a & b) ^ (c & (a ^ b)).
        let maj = xor8(and8(a, b), and8(c, xor8(a, b)))
        d = add8(d, t1)
        h = add8(add8(t1, s0), maj)
    }
}

/// σ0 of every lane: rotr 7 ^ rotr 18 ^ shr 3.
@usableFromInline @_alwaysEmitIntoClient @_transparent func s8sigma0(_ x: V8) -> V8 { xor8(xor8(rotr8(x, 7), rotr8(x, 18)), shr8(x, 3)) }
/// σ1 of every lane: rotr 17 ^ rotr 19 ^ shr 10.
@usableFromInline @_alwaysEmitIntoClient @_transparent func s8sigma1(_ x: V8) -> V8 { xor8(xor8(rotr8(x, 17), rotr8(x, 19)), shr8(x, 10)) }

/// Compresses `n` 64-byte blocks on each of eight lanes: lane l's state is the eight words at
/// `states[l]`, its blocks start at `data[l]`, `strides[l]` bytes apart (0 for an idle lane that
/// repeats one scratch block). `k` points to the 64 round constants. `table` is 2 KiB of scratch
/// (32-byte aligned) for the transposed message schedule, which the caller wipes.
@_alwaysEmitIntoClient @inline(__always)
public func sha256Lanes8(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                        _ strides: UnsafePointer<Int>, _ n: Int, _ k: UnsafePointer<UInt32>, _ table: UnsafeMutableRawPointer) {
    guard n > 0 else { return }
    @_transparent func gather(_ w: Int) -> V8 {
        unsafeBitCast(SIMD8<UInt32>(states[0][w], states[1][w], states[2][w], states[3][w],
                                    states[4][w], states[5][w], states[6][w], states[7][w]), to: V8.self)
    }
    var s = SHA256Lanes8State(a: gather(0), b: gather(1), c: gather(2), d: gather(3), e: gather(4), f: gather(5), g: gather(6), h: gather(7))
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
            @_transparent func wk(_ t: Int) -> V8 { add8(s8load(table, 32 &* t), splat8(k[t])) }
            /// W[t] from the sixteen before it, into the table.
            @_transparent func schedule(_ t: Int) {
                let w = add8(add8(s8sigma1(s8load(table, 32 &* (t &- 2))), s8load(table, 32 &* (t &- 7))),
                            add8(s8sigma0(s8load(table, 32 &* (t &- 15))), s8load(table, 32 &* (t &- 16))))
                s8store(w, table, 32 &* t)
            }
            // Rounds t ..< t + 8, and while t < 48 the schedule of W[t + 16 ..< t + 24], which the
            // rounds of the iteration after next read: the schedule's chain (W[t] needs W[t - 2])
            // then runs beside the rounds' chain instead of in a loop of its own before them, where it
            // took about a third of the kernel's time (measured, 2026-11-29).
            var t = 0
            while t < 64 {
                let more = t < 48
                SHA256Lanes8State.round(s.a, s.b, s.c, &s.d, s.e, s.f, s.g, &s.h, wk(t))
                if more { schedule(t &+ 16); schedule(t &+ 17) }
                SHA256Lanes8State.round(s.h, s.a, s.b, &s.c, s.d, s.e, s.f, &s.g, wk(t &+ 1))
                SHA256Lanes8State.round(s.g, s.h, s.a, &s.b, s.c, s.d, s.e, &s.f, wk(t &+ 2))
                if more { schedule(t &+ 18); schedule(t &+ 19) }
                SHA256Lanes8State.round(s.f, s.g, s.h, &s.a, s.b, s.c, s.d, &s.e, wk(t &+ 3))
                SHA256Lanes8State.round(s.e, s.f, s.g, &s.h, s.a, s.b, s.c, &s.d, wk(t &+ 4))
                if more { schedule(t &+ 20); schedule(t &+ 21) }
                SHA256Lanes8State.round(s.d, s.e, s.f, &s.g, s.h, s.a, s.b, &s.c, wk(t &+ 5))
                SHA256Lanes8State.round(s.c, s.d, s.e, &s.f, s.g, s.h, s.a, &s.b, wk(t &+ 6))
                if more { schedule(t &+ 22); schedule(t &+ 23) }
                SHA256Lanes8State.round(s.b, s.c, s.d, &s.e, s.f, s.g, s.h, &s.a, wk(t &+ 7))
                t &+= 8
            }
            s.a = add8(s.a, start.a); s.b = add8(s.b, start.b); s.c = add8(s.c, start.c); s.d = add8(s.d, start.d)
            s.e = add8(s.e, start.e); s.f = add8(s.f, start.f); s.g = add8(s.g, start.g); s.h = add8(s.h, start.h)
            p.0 += strides[0]; p.1 += strides[1]; p.2 += strides[2]; p.3 += strides[3]
            p.4 += strides[4]; p.5 += strides[5]; p.6 += strides[6]; p.7 += strides[7]
        }
    }
    @_transparent func scatter(_ v: V8, _ w: Int) {
        let x = unsafeBitCast(v, to: SIMD8<UInt32>.self)
        states[0][w] = x[0]; states[1][w] = x[1]; states[2][w] = x[2]; states[3][w] = x[3]
        states[4][w] = x[4]; states[5][w] = x[5]; states[6][w] = x[6]; states[7][w] = x[7]
    }
    scatter(s.a, 0); scatter(s.b, 1); scatter(s.c, 2); scatter(s.d, 3)
    scatter(s.e, 4); scatter(s.f, 5); scatter(s.g, 6); scatter(s.h, 7)
}

#endif
