// Salsa20/20 for short messages with AVX-512VL: the latency-bound single-block chains (the XSalsa20
// input block through HSalsa20, one or two keystream blocks) and four blocks at once, on 128-bit
// vectors. Only in this tier (no AVX2 build): what makes it faster than the portable SSE2 code of
// Cipher/Salsa20Core.swift and Cipher/Salsa20.swift, which it mirrors, is `vprold`, one instruction and
// one cycle of latency per rotation where SSE2 and AVX2 need two shifts and an OR (two cycles). A
// quarter-round step is add, rotate, XOR: 3 cycles instead of 4 on the chain of one block, and about
// 40% fewer instructions when four blocks fill the ports.
//
// Shapes, as in the portable code: one block in the diagonal layout of `Salsa20State` (lane k of row m
// holds word (4m + 5k) mod 16; the row round rotates the lanes of b, c, d and back); four blocks with
// one vector per state word (lane j = block counter + j), transposed to bytes at the end. The vector
// code uses Builtin operations on `Builtin.Vec4xInt32` (see RampartKernelSupport/Salsa20Lanes8.swift for why), the lane
// rotations SIMD4 subscripts (one `vpshufd` each).
//
// `z` is a zero the optimizer cannot see (a parameter of a public function): added to the rotated rows,
// it stops LLVM from cancelling each lane rotation of the row round against its inverse, which would
// put the rotations on the critical path (Salsa20Core.swift's `doubleRounds` says more).
//
// No branch and no memory address depends on the key, the nonce or the keystream: the loops run a
// fixed number of double rounds.

import Swift

#if arch(x86_64)

typealias V4 = Builtin.Vec4xInt32
typealias W4 = SIMD4<UInt32>

@_transparent func v4(_ x: W4) -> V4 { unsafeBitCast(x, to: V4.self) }
@_transparent func w4(_ x: V4) -> W4 { unsafeBitCast(x, to: W4.self) }
@_transparent func add4(_ a: V4, _ b: V4) -> V4 { Builtin.add_Vec4xInt32(a, b) }
@_transparent func xor4(_ a: V4, _ b: V4) -> V4 { Builtin.xor_Vec4xInt32(a, b) }
@_transparent func splat4(_ n: UInt32) -> V4 { v4(W4(repeating: n)) }
/// Rotate left every lane: LLVM makes the OR of the two shifts one `vprold`.
@_transparent func rotl4(_ a: V4, _ n: UInt32) -> V4 {
    Builtin.or_Vec4xInt32(Builtin.shl_Vec4xInt32(a, splat4(n)), Builtin.lshr_Vec4xInt32(a, splat4(32 &- n)))
}
/// `b ^= (a + d) <<< n`.
@_transparent func step4(_ b: inout V4, _ a: V4, _ d: V4, _ n: UInt32) { b = xor4(b, rotl4(add4(a, d), n)) }

/// The lanes of `x` rotated so that lane k holds lane (k - s) mod 4.
@_transparent func lanes(_ x: V4, _ s: Int) -> V4 {
    let w = w4(x)
    switch s {
    case 1: return v4(W4(w[3], w[0], w[1], w[2]))
    case 2: return v4(W4(w[2], w[3], w[0], w[1]))
    default: return v4(W4(w[1], w[2], w[3], w[0]))
    }
}

/// One block in the diagonal layout.
struct Diagonal {
    var a, b, c, d: V4

    /// From the sixteen input words (standard layout).
    @_transparent init(_ x: SIMD16<UInt32>) {
        a = v4(W4(x[0], x[5], x[10], x[15])); b = v4(W4(x[4], x[9], x[14], x[3]))
        c = v4(W4(x[8], x[13], x[2], x[7])); d = v4(W4(x[12], x[1], x[6], x[11]))
    }

    @_transparent mutating func doubleRound(_ z: V4) {
        step4(&b, a, d, 7); step4(&c, b, a, 9); step4(&d, c, b, 13); step4(&a, d, c, 18)
        b = add4(lanes(b, 1), z); c = add4(lanes(c, 2), z); d = add4(lanes(d, 3), z)
        step4(&d, a, b, 7); step4(&c, d, a, 9); step4(&b, c, d, 13); step4(&a, b, c, 18)
        b = add4(lanes(b, 3), z); c = add4(lanes(c, 2), z); d = add4(lanes(d, 1), z)
    }

    /// The feed-forward addition and the 64 keystream bytes (standard layout, little-endian words).
    @_transparent func store(adding x: Diagonal, _ out: UnsafeMutableRawPointer) {
        let ra = w4(add4(a, x.a)), rb = w4(add4(b, x.b)), rc = w4(add4(c, x.c)), rd = w4(add4(d, x.d))
        // Word w of the standard layout is lane (13w mod 16) % 4 of row (13w mod 16) / 4.
        out.storeBytes(of: W4(ra[0], rd[1], rc[2], rb[3]), toByteOffset: 0, as: W4.self)
        out.storeBytes(of: W4(rb[0], ra[1], rd[2], rc[3]), toByteOffset: 16, as: W4.self)
        out.storeBytes(of: W4(rc[0], rb[1], ra[2], rd[3]), toByteOffset: 32, as: W4.self)
        out.storeBytes(of: W4(rd[0], rc[1], rb[2], ra[3]), toByteOffset: 48, as: W4.self)
    }
}

@_transparent func loadLE32(_ p: UnsafeRawPointer, _ offset: Int) -> UInt32 {
    UInt32(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
}

let sigma: (UInt32, UInt32, UInt32, UInt32) = (0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574)

/// The HSalsa20 input of `key` and nonce[0..<16], diagonal layout.
@_transparent func hsalsaInput(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer) -> Diagonal {
    Diagonal(SIMD16(sigma.0, loadLE32(key, 0), loadLE32(key, 4), loadLE32(key, 8), loadLE32(key, 12),
                    sigma.1, loadLE32(nonce, 0), loadLE32(nonce, 4), loadLE32(nonce, 8), loadLE32(nonce, 12),
                    sigma.2, loadLE32(key, 16), loadLE32(key, 20), loadLE32(key, 24), loadLE32(key, 28), sigma.3))
}

/// The XSalsa20 input block around the HSalsa20 state `s` (after its rounds): the subkey is words z0,
/// z5, z10, z15, z6, z7, z8, z9, which are a[0...3], d[2], c[3], c[0], b[1].
@_transparent func xsalsaBlock(_ s: Diagonal, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
    let a = w4(s.a), b = w4(s.b), c = w4(s.c), d = w4(s.d)
    return SIMD16(sigma.0, a[0], a[1], a[2], a[3], sigma.1, loadLE32(nonce, 16), loadLE32(nonce, 20),
                  UInt32(truncatingIfNeeded: counter), UInt32(truncatingIfNeeded: counter >> 32),
                  sigma.2, d[2], c[3], c[0], b[1], sigma.3)
}

/// The XSalsa20 input block (sixteen words, standard layout) for a 32-byte `key`, a 24-byte `nonce` and
/// block `counter`: the HSalsa20 subkey of the key and nonce[0..<16], then the Salsa20 block around it
/// (Cipher/Salsa20Stream.swift's `xsalsa20InputCore`).
@inline(never)
public func xsalsa20InputAVX512(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64,
                                _ z: SIMD4<UInt32>) -> SIMD16<UInt32> {
    var s = hsalsaInput(key, nonce)
    let zv = v4(z)
    var i = 0
    while i < 10 {
        s.doubleRound(zv)
        i &+= 1
    }
    return xsalsaBlock(s, nonce, counter)
}

/// The XSalsa20 input blocks (counter 0) of two keys under one nonce, the two HSalsa20 chains in one
/// loop (`xsalsa20InputPairCore`: the two boxes of a Threema envelope).
@inline(never)
public func xsalsa20InputPairAVX512(_ keyA: UnsafeRawPointer, _ keyB: UnsafeRawPointer, _ nonce: UnsafeRawPointer,
                                    _ z: SIMD4<UInt32>) -> (SIMD16<UInt32>, SIMD16<UInt32>) {
    var a = hsalsaInput(keyA, nonce), b = hsalsaInput(keyB, nonce)
    let zv = v4(z)
    var i = 0
    while i < 10 {
        a.doubleRound(zv)
        b.doubleRound(zv)
        i &+= 1
    }
    return (xsalsaBlock(a, nonce, 0), xsalsaBlock(b, nonce, 0))
}

/// Keystream blocks n and n + 1 (n = the counter in words 8 and 9 of `x`, which the second block
/// increments with carry) into `out`: 64 bytes when `two` is false, else 128. The two chains run in
/// one loop (about the time of one: each is latency-bound).
@inline(never)
public func salsa20BlocksAVX512(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer, _ two: Bool, _ z: SIMD4<UInt32>) {
    let zv = v4(z)
    let first = Diagonal(x)
    var t0 = first
    if !two {
        var i = 0
        while i < 10 {
            t0.doubleRound(zv)
            i &+= 1
        }
        t0.store(adding: first, out)
        return
    }
    var y = x
    let next = (UInt64(x[8]) | UInt64(x[9]) << 32) &+ 1
    y[8] = UInt32(truncatingIfNeeded: next)
    y[9] = UInt32(truncatingIfNeeded: next >> 32)
    let second = Diagonal(y)
    var t1 = second
    var i = 0
    while i < 10 {
        t0.doubleRound(zv)
        t1.doubleRound(zv)
        i &+= 1
    }
    t0.store(adding: first, out)
    t1.store(adding: second, out + 64)
}

/// Four keystream blocks, counters n ..< n + 4 (n in words 8 and 9 of `x`, with carry), into `out`
/// (256 bytes): one vector per state word, lane j = block j.
@inline(never)
public func salsa20Blocks4AVX512(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) {
    let n = UInt64(x[8]) | UInt64(x[9]) << 32
    let n1 = n &+ 1, n2 = n &+ 2, n3 = n &+ 3
    let c8 = v4(W4(UInt32(truncatingIfNeeded: n), UInt32(truncatingIfNeeded: n1), UInt32(truncatingIfNeeded: n2),
                   UInt32(truncatingIfNeeded: n3)))
    let c9 = v4(W4(UInt32(truncatingIfNeeded: n >> 32), UInt32(truncatingIfNeeded: n1 >> 32), UInt32(truncatingIfNeeded: n2 >> 32),
                   UInt32(truncatingIfNeeded: n3 >> 32)))
    let i0 = splat4(x[0]), i1 = splat4(x[1]), i2 = splat4(x[2]), i3 = splat4(x[3])
    let i4 = splat4(x[4]), i5 = splat4(x[5]), i6 = splat4(x[6]), i7 = splat4(x[7])
    let i10 = splat4(x[10]), i11 = splat4(x[11]), i12 = splat4(x[12]), i13 = splat4(x[13])
    let i14 = splat4(x[14]), i15 = splat4(x[15])
    var x0 = i0, x1 = i1, x2 = i2, x3 = i3, x4 = i4, x5 = i5, x6 = i6, x7 = i7
    var x8 = c8, x9 = c9, x10 = i10, x11 = i11, x12 = i12, x13 = i13, x14 = i14, x15 = i15
    var r = 0
    while r < 10 {
        // Columns, the four quarter-rounds step by step side by side.
        step4(&x4, x0, x12, 7); step4(&x9, x5, x1, 7); step4(&x14, x10, x6, 7); step4(&x3, x15, x11, 7)
        step4(&x8, x4, x0, 9); step4(&x13, x9, x5, 9); step4(&x2, x14, x10, 9); step4(&x7, x3, x15, 9)
        step4(&x12, x8, x4, 13); step4(&x1, x13, x9, 13); step4(&x6, x2, x14, 13); step4(&x11, x7, x3, 13)
        step4(&x0, x12, x8, 18); step4(&x5, x1, x13, 18); step4(&x10, x6, x2, 18); step4(&x15, x11, x7, 18)
        // Rows.
        step4(&x1, x0, x3, 7); step4(&x6, x5, x4, 7); step4(&x11, x10, x9, 7); step4(&x12, x15, x14, 7)
        step4(&x2, x1, x0, 9); step4(&x7, x6, x5, 9); step4(&x8, x11, x10, 9); step4(&x13, x12, x15, 9)
        step4(&x3, x2, x1, 13); step4(&x4, x7, x6, 13); step4(&x9, x8, x11, 13); step4(&x14, x13, x12, 13)
        step4(&x0, x3, x2, 18); step4(&x5, x4, x7, 18); step4(&x10, x9, x8, 18); step4(&x15, x14, x13, 18)
        r &+= 1
    }
    /// Words q·4 ..< q·4 + 4 of the four blocks (after the feed-forward), transposed: block j's 16 bytes
    /// at offset 64·j + 16·q.
    @_transparent func quad(_ a: V4, _ b: V4, _ c: V4, _ d: V4, _ q: Int) {
        let p = w4(a), s = w4(b), t = w4(c), u = w4(d)
        out.storeBytes(of: W4(p[0], s[0], t[0], u[0]), toByteOffset: 16 &* q, as: W4.self)
        out.storeBytes(of: W4(p[1], s[1], t[1], u[1]), toByteOffset: 64 &+ 16 &* q, as: W4.self)
        out.storeBytes(of: W4(p[2], s[2], t[2], u[2]), toByteOffset: 128 &+ 16 &* q, as: W4.self)
        out.storeBytes(of: W4(p[3], s[3], t[3], u[3]), toByteOffset: 192 &+ 16 &* q, as: W4.self)
    }
    quad(add4(x0, i0), add4(x1, i1), add4(x2, i2), add4(x3, i3), 0)
    quad(add4(x4, i4), add4(x5, i5), add4(x6, i6), add4(x7, i7), 1)
    quad(add4(x8, c8), add4(x9, c9), add4(x10, i10), add4(x11, i11), 2)
    quad(add4(x12, i12), add4(x13, i13), add4(x14, i14), add4(x15, i15), 3)
}

#endif
