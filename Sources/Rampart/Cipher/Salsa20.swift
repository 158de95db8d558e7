// Salsa20/20 (Bernstein), HSalsa20 and XSalsa20 ("Extending the Salsa20 nonce"), as in NaCl.
//
// The 16-word input block (standard layout, little-endian words) is
//
//     x0 = "expa"   x1..x4 = key[0..16]    x5 = "nd 3"   x6, x7 = nonce (8 bytes)
//     x8, x9 = 64-bit block counter (low word first)     x10 = "2-by"
//     x11..x14 = key[16..32]               x15 = "te k"
//
// Three code paths share this file's seam (`salsa20XOR`):
//
// * one block at a time on the diagonal SIMD4 rows of `Salsa20State` (Cipher/Salsa20Core.swift, the core
//   scrypt's Salsa20/8 runs on): HSalsa20, the first block of a secretbox, and short tails;
// * four blocks at once, one SIMD4 vector per state word holding that word of four consecutive blocks
//   (the layout of libsodium's `xmm6int` code): the portable bulk path, SSE2 on x86_64, NEON on arm64;
// * eight blocks at once in a kernel tier (RampartKernelSupport/Salsa20Lanes8.swift, built for AVX2 and
//   AVX-512VL): the hardware bulk path.
//
// Which code runs is the `salsa20` registry's implementation for the caller's backend
// (`Registries.salsa20.implementation(for:)`, Cipher/StreamImplementations.swift): every function here
// takes it as `impl`. Its single blocks are the portable cores below, the AVX-512VL build's or scalar
// ones (on AMD processors); its two- and four-block runs the portable ones or the AVX-512VL build's.
//
// A partial last block is handled by the stream types, which keep the unused keystream bytes.

internal import RampartKernelSupport

/// The Salsa20 constants "expand 32-byte k" as four little-endian words (x0, x5, x10, x15).
@usableFromInline let salsaSigma: (UInt32, UInt32, UInt32, UInt32) = (0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574)

/// Builds the Salsa20 input block from a 32-byte key and the four words x6...x9 (nonce and counter
/// for Salsa20, the 16-byte input for HSalsa20).
@inline(__always)
func salsa20Input(key k: UnsafeRawPointer, _ w6: UInt32, _ w7: UInt32, _ w8: UInt32, _ w9: UInt32) -> SIMD16<UInt32> {
    SIMD16(salsaSigma.0, k.loadLE32(0), k.loadLE32(4), k.loadLE32(8), k.loadLE32(12),
           salsaSigma.1, w6, w7, w8, w9,
           salsaSigma.2, k.loadLE32(16), k.loadLE32(20), k.loadLE32(24), k.loadLE32(28),
           salsaSigma.3)
}

/// The input block as the four diagonal rows of `Salsa20State`.
@inline(__always)
func salsa20Diagonal(_ x: SIMD16<UInt32>) -> Salsa20State {
    Salsa20State(a: SIMD4(x[0], x[5], x[10], x[15]), b: SIMD4(x[4], x[9], x[14], x[3]),
                 c: SIMD4(x[8], x[13], x[2], x[7]), d: SIMD4(x[12], x[1], x[6], x[11]))
}

/// HSalsa20: 32-byte key and 16-byte input to a 32-byte output (words z0, z5, z10, z15, z6, z7, z8,
/// z9 of the Salsa20/20 rounds, without the feed-forward addition). `out` may alias `key`.
func hsalsa20(key: UnsafeRawPointer, input n: UnsafeRawPointer, output out: UnsafeMutableRawPointer) {
    hsalsa20Core(salsa20Input(key: key, n.loadLE32(0), n.loadLE32(4), n.loadLE32(8), n.loadLE32(12)), out, .zero)
}

/// HSalsa20 on an input block. `z` must be zero: it is a parameter of a function with public linkage
/// so that the optimizer cannot see its value and cancel the lane rotations of the row round against
/// their inverses (see ``Salsa20State/doubleRounds(_:z:)``; about 25% faster with it).
@usableFromInline @inline(never)
func hsalsa20Core(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer, _ z: SIMD4<UInt32>) {
    var s = salsa20Diagonal(x)
    s.doubleRounds(10, z: z)
    // Diagonal layout: a = (x0, x5, x10, x15); x6 = d[2], x7 = c[3], x8 = c[0], x9 = b[1].
    out.storeLE32(s.a[0], 0); out.storeLE32(s.a[1], 4); out.storeLE32(s.a[2], 8); out.storeLE32(s.a[3], 12)
    out.storeLE32(s.d[2], 16); out.storeLE32(s.c[3], 20); out.storeLE32(s.c[0], 24); out.storeLE32(s.b[1], 28)
    wipe(&s)
}

/// One Salsa20/20 keystream block for input block `x` into `out` (64 bytes, standard layout): the
/// portable `block` of the `salsa20` registry, with the opaque zero of ``hsalsa20Core(_:_:_:)``.
@usableFromInline @inline(never)
func salsa20BlockCore(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer, _ z: SIMD4<UInt32>) {
    var s = salsa20Diagonal(x)
    s = s.core(doubleRounds: 10, z: z)
    s.store(standard: out)
    wipe(&s)
}

/// Keystream blocks `n` and `n + 1` (`n` = the counter in words 8 and 9 of `x`) into `out` (128 bytes,
/// standard layout): the portable `blocks2`, with the opaque zero of ``salsa20BlockCore(_:_:_:)``. The
/// two blocks are independent chains in one loop, so an out-of-order core runs them side by side: about
/// the time of one block (the rounds of one block are latency-bound).
@usableFromInline @inline(never)
func salsa20Block2Core(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer, _ z: SIMD4<UInt32>) {
    var y = x
    let next = (UInt64(x[8]) | UInt64(x[9]) << 32) &+ 1
    y[8] = UInt32(truncatingIfNeeded: next)
    y[9] = UInt32(truncatingIfNeeded: next >> 32)
    let s0 = salsa20Diagonal(x), s1 = salsa20Diagonal(y)
    var t0 = s0, t1 = s1
    var i = 0
    while i < 10 {
        t0.doubleRounds(1, z: z)
        t1.doubleRounds(1, z: z)
        i &+= 1
    }
    t0 = t0 &+ s0
    t1 = t1 &+ s1
    t0.store(standard: out)
    t1.store(standard: out + 64)
    wipe(&t0)
    wipe(&t1)
}

/// `dst[i] = src[i] ^ ks[i]` for `count` bytes, 16 at a time (`dst` may be `src`).
@inline(__always)
func xorKeystream(_ dst: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ ks: UnsafeRawPointer, _ count: Int) {
    var i = 0
    while i + 16 <= count {
        let v = src.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self) ^ ks.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
        dst.storeBytes(of: v, toByteOffset: i, as: SIMD16<UInt8>.self)
        i += 16
    }
    while i < count {
        dst.storeBytes(of: src.load(fromByteOffset: i, as: UInt8.self) ^ ks.load(fromByteOffset: i, as: UInt8.self),
                       toByteOffset: i, as: UInt8.self)
        i += 1
    }
}

// MARK: - Bulk XOR

/// XORs `count` bytes of Salsa20/20 keystream, starting at the block boundary given by the counter in
/// `x` (words 8 and 9), from `src` into `dst` (which may be the same buffer), and advances the counter
/// by the number of blocks used (a partial last block counts as one). Whole 512-byte groups go to
/// `impl`'s eight-block loop when it is a kernel, the rest to the four-block code.
@inline(__always)
func salsa20XOR(_ x: inout SIMD16<UInt32>, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ count: Int,
                _ impl: any Salsa20Implementation.Type) {
    var done = 0
    if count >= 512 && impl.isKernel {
        let groups = count >> 9
        withUnsafeMutableBytes(of: &x) { impl.xor($0.baseAddress!, src, dst, groups) }
        done = groups << 9
    }
    if done < count {
        salsa20XORPortable(&x, src + done, dst + done, count - done, impl)
    }
}

/// The portable bulk path: four blocks at a time, then a 1..4-block tail through a stack buffer; the
/// blocks on `impl`'s short-message cores (``salsa20x4(_:_:_:_:)``, its `block`).
@inline(never)
func salsa20XORPortable(_ x: inout SIMD16<UInt32>, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                        _ count: Int, _ impl: any Salsa20Implementation.Type) {
    var counter = UInt64(x[8]) | UInt64(x[9]) << 32
    var off = 0
    while count - off >= 256 {
        salsa20x4(x, counter, impl) { j, k, ks in
            let p = off + 64 * j + 16 * k
            let v = src.loadUnaligned(fromByteOffset: p, as: SIMD4<UInt32>.self) ^ ks
            dst.storeBytes(of: v, toByteOffset: p, as: SIMD4<UInt32>.self)
        }
        counter &+= 4
        off += 256
    }
    let rest = count - off
    if rest > 0 {
        // The whole 16-byte pieces of the tail straight from the registers; only the piece that holds
        // the partial end goes through `last` (the tail's length is public).
        let whole = rest & ~15
        var last = SIMD4<UInt32>()
        if rest > 64 {
            salsa20x4(x, counter, impl) { j, k, ks in
                let p = 64 * j + 16 * k
                if p < whole {
                    let v = src.loadUnaligned(fromByteOffset: off + p, as: SIMD4<UInt32>.self) ^ ks
                    dst.storeBytes(of: v, toByteOffset: off + p, as: SIMD4<UInt32>.self)
                } else if p == whole {
                    last = ks
                }
            }
        } else {
            var y = x
            y[8] = UInt32(truncatingIfNeeded: counter)
            y[9] = UInt32(truncatingIfNeeded: counter >> 32)
            var block = SIMD16<UInt32>()
            withUnsafeMutableBytes(of: &block) { b in
                impl.block(y, b.baseAddress!)
                xorKeystream(dst + off, src + off, UnsafeRawPointer(b.baseAddress!), whole)
                if whole < 64 { last = b.baseAddress!.loadUnaligned(fromByteOffset: whole, as: SIMD4<UInt32>.self) }
            }
            wipe(&block)
        }
        if whole < rest {
            withUnsafeBytes(of: &last) { l in
                xorKeystream(dst + off + whole, src + off + whole, l.baseAddress!, rest - whole)
            }
            wipe(&last)
        }
        counter &+= UInt64((rest + 63) >> 6)
    }
    x[8] = UInt32(truncatingIfNeeded: counter)
    x[9] = UInt32(truncatingIfNeeded: counter >> 32)
}

/// Salsa20 quarter-round on one word of four blocks: `b ^= (a+d)<<<7; c ^= (b+a)<<<9;
/// d ^= (c+b)<<<13; a ^= (d+c)<<<18`.
@inline(__always)
func salsaQR(_ a: inout SIMD4<UInt32>, _ b: inout SIMD4<UInt32>, _ c: inout SIMD4<UInt32>, _ d: inout SIMD4<UInt32>) {
    b ^= salsaRotate(a &+ d, 7)
    c ^= salsaRotate(b &+ a, 9)
    d ^= salsaRotate(c &+ b, 13)
    a ^= salsaRotate(d &+ c, 18)
}

/// Transposes a 4×4 matrix of words held as four rows.
@inline(__always)
func transpose4(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>, _ c: SIMD4<UInt32>, _ d: SIMD4<UInt32>)
    -> (SIMD4<UInt32>, SIMD4<UInt32>, SIMD4<UInt32>, SIMD4<UInt32>) {
    let t0 = SIMD4(a[0], b[0], a[1], b[1]), t1 = SIMD4(a[2], b[2], a[3], b[3])
    let t2 = SIMD4(c[0], d[0], c[1], d[1]), t3 = SIMD4(c[2], d[2], c[3], d[3])
    return (SIMD4(t0[0], t0[1], t2[0], t2[1]), SIMD4(t0[2], t0[3], t2[2], t2[3]),
            SIMD4(t1[0], t1[1], t3[0], t3[1]), SIMD4(t1[2], t1[3], t3[2], t3[3]))
}

/// Four Salsa20/20 blocks with counters `counter ... counter + 3`; hands each 16-byte piece of
/// keystream (block `j`, piece `k`, words in little-endian byte order) to `emit`. When `impl` has vector
/// blocks of its own (the AVX-512VL build) they compute the blocks into a stack buffer, which is wiped;
/// otherwise the portable code below runs inline (the portable `blocks4`).
@inline(__always)
func salsa20x4(_ x: SIMD16<UInt32>, _ counter: UInt64, _ impl: any Salsa20Implementation.Type,
               _ emit: (Int, Int, SIMD4<UInt32>) -> Void) {
    typealias V = SIMD4<UInt32>
    if impl.vectorBlocks {
        var y = x
        y[8] = UInt32(truncatingIfNeeded: counter)
        y[9] = UInt32(truncatingIfNeeded: counter >> 32)
        var blocks = (SIMD16<UInt32>(), SIMD16<UInt32>(), SIMD16<UInt32>(), SIMD16<UInt32>())
        withUnsafeMutableBytes(of: &blocks) { b in
            impl.blocks4(y, b.baseAddress!)
            for j in 0..<4 {
                for k in 0..<4 { emit(j, k, b.load(fromByteOffset: 64 * j + 16 * k, as: V.self)) }
            }
        }
        wipe(&blocks)
        return
    }
    let lo = UInt32(truncatingIfNeeded: counter)
    let c8 = V(repeating: lo) &+ V(0, 1, 2, 3)
    // Carry into the high word where the low word wrapped (c8 < lo).
    let carry = V(repeating: 0).replacing(with: 1, where: c8 .< V(repeating: lo))
    let c9 = V(repeating: UInt32(truncatingIfNeeded: counter >> 32)) &+ carry
    var x0 = V(repeating: x[0]), x1 = V(repeating: x[1]), x2 = V(repeating: x[2]), x3 = V(repeating: x[3])
    var x4 = V(repeating: x[4]), x5 = V(repeating: x[5]), x6 = V(repeating: x[6]), x7 = V(repeating: x[7])
    var x8 = c8, x9 = c9, x10 = V(repeating: x[10]), x11 = V(repeating: x[11])
    var x12 = V(repeating: x[12]), x13 = V(repeating: x[13]), x14 = V(repeating: x[14]), x15 = V(repeating: x[15])
    for _ in 0..<10 {
        salsaQR(&x0, &x4, &x8, &x12)
        salsaQR(&x5, &x9, &x13, &x1)
        salsaQR(&x10, &x14, &x2, &x6)
        salsaQR(&x15, &x3, &x7, &x11)
        salsaQR(&x0, &x1, &x2, &x3)
        salsaQR(&x5, &x6, &x7, &x4)
        salsaQR(&x10, &x11, &x8, &x9)
        salsaQR(&x15, &x12, &x13, &x14)
    }
    x0 &+= V(repeating: x[0]); x1 &+= V(repeating: x[1]); x2 &+= V(repeating: x[2]); x3 &+= V(repeating: x[3])
    x4 &+= V(repeating: x[4]); x5 &+= V(repeating: x[5]); x6 &+= V(repeating: x[6]); x7 &+= V(repeating: x[7])
    x8 &+= c8; x9 &+= c9; x10 &+= V(repeating: x[10]); x11 &+= V(repeating: x[11])
    x12 &+= V(repeating: x[12]); x13 &+= V(repeating: x[13]); x14 &+= V(repeating: x[14]); x15 &+= V(repeating: x[15])
    let (a0, a1, a2, a3) = transpose4(x0, x1, x2, x3)
    let (b0, b1, b2, b3) = transpose4(x4, x5, x6, x7)
    let (c0, c1, c2, c3) = transpose4(x8, x9, x10, x11)
    let (d0, d1, d2, d3) = transpose4(x12, x13, x14, x15)
    emit(0, 0, le(a0)); emit(0, 1, le(b0)); emit(0, 2, le(c0)); emit(0, 3, le(d0))
    emit(1, 0, le(a1)); emit(1, 1, le(b1)); emit(1, 2, le(c1)); emit(1, 3, le(d1))
    emit(2, 0, le(a2)); emit(2, 1, le(b2)); emit(2, 2, le(c2)); emit(2, 3, le(d2))
    emit(3, 0, le(a3)); emit(3, 1, le(b3)); emit(3, 2, le(c3)); emit(3, 3, le(d3))
}

/// Puts the words of `v` in little-endian byte order (a no-op on little-endian machines).
@inline(__always)
func le(_ v: SIMD4<UInt32>) -> SIMD4<UInt32> {
    #if _endian(big)
    return SIMD4(v[0].byteSwapped, v[1].byteSwapped, v[2].byteSwapped, v[3].byteSwapped)
    #else
    return v
    #endif
}
