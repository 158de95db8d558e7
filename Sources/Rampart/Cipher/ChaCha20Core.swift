// ChaCha20 (RFC 8439 §2.1–2.4: 32-bit block counter, 96-bit nonce) and HChaCha20.
//
// The 16-word input block (little-endian words):
//
//     x0..x3   = "expa" "nd 3" "2-by" "te k"
//     x4..x11  = key (32 bytes)
//     x12      = block counter          x13..x15 = nonce (12 bytes)
//
// Three code paths share this file's seam (`chacha20XOR`), as for Salsa20 (Cipher/Salsa20.swift):
//
// * one block at a time on the four SIMD4 rows (the column round acts lane-wise on rows; rotating the
//   lanes of rows 1, 2 and 3 by 1, 2 and 3 turns the diagonal round into the same pattern):
//   HChaCha20, the Poly1305 key block of the AEAD, and short tails;
// * four blocks at once, one SIMD4 vector per state word holding that word of four consecutive blocks:
//   the portable bulk path (SSE2 on x86_64, NEON on arm64);
// * eight blocks at once in a kernel tier (RampartKernelSupport/ChaCha20Lanes8.swift, built for AVX2 and
//   AVX-512VL; the `chacha20` registry's implementation for the caller's backend): the hardware bulk path.
//
// Every operation is an addition, XOR or fixed rotation of 32-bit words: no secret-dependent branch
// or memory index anywhere. The counter is RFC 8439's single 32-bit word; it wraps modulo 2^32 here,
// and the public API refuses a message that would make it wrap.

internal import RampartKernelSupport

/// The ChaCha20 constants "expand 32-byte k" as four little-endian words.
@usableFromInline let chachaSigma: (UInt32, UInt32, UInt32, UInt32) = (0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574)

/// The ChaCha20 input block for a 32-byte key, a block counter and a 12-byte nonce.
@inline(__always)
func chacha20Input(key k: UnsafeRawPointer, counter: UInt32, nonce n: UnsafeRawPointer) -> SIMD16<UInt32> {
    SIMD16(chachaSigma.0, chachaSigma.1, chachaSigma.2, chachaSigma.3,
           k.loadLE32(0), k.loadLE32(4), k.loadLE32(8), k.loadLE32(12),
           k.loadLE32(16), k.loadLE32(20), k.loadLE32(24), k.loadLE32(28),
           counter, n.loadLE32(0), n.loadLE32(4), n.loadLE32(8))
}

/// `x <<< n` on each lane. Written with `&+` rather than `|` (Docs/Architecture.md §6.1).
@inline(__always)
func chachaRotate(_ x: SIMD4<UInt32>, _ n: UInt32) -> SIMD4<UInt32> {
    (x &<< n) &+ (x &>> (32 &- n))
}

/// The ChaCha quarter-round on four lanes at once: `a += b; d ^= a; d <<<= 16; c += d; b ^= c;
/// b <<<= 12; a += b; d ^= a; d <<<= 8; c += d; b ^= c; b <<<= 7`.
@inline(__always)
func chachaQR(_ a: inout SIMD4<UInt32>, _ b: inout SIMD4<UInt32>, _ c: inout SIMD4<UInt32>, _ d: inout SIMD4<UInt32>) {
    a &+= b; d = chachaRotate(d ^ a, 16)
    c &+= d; b = chachaRotate(b ^ c, 12)
    a &+= b; d = chachaRotate(d ^ a, 8)
    c &+= d; b = chachaRotate(b ^ c, 7)
}

/// The twenty ChaCha rounds on the four rows of one block (no feed-forward addition).
@inline(__always)
func chachaRounds(_ a: inout SIMD4<UInt32>, _ b: inout SIMD4<UInt32>, _ c: inout SIMD4<UInt32>, _ d: inout SIMD4<UInt32>) {
    for _ in 0..<10 {
        chachaQR(&a, &b, &c, &d)
        // Diagonals: lane k of the rotated rows holds (x_k, x_{4+(k+1)%4}, x_{8+(k+2)%4}, x_{12+(k+3)%4}).
        b = SIMD4(b[1], b[2], b[3], b[0]); c = SIMD4(c[2], c[3], c[0], c[1]); d = SIMD4(d[3], d[0], d[1], d[2])
        chachaQR(&a, &b, &c, &d)
        b = SIMD4(b[3], b[0], b[1], b[2]); c = SIMD4(c[2], c[3], c[0], c[1]); d = SIMD4(d[1], d[2], d[3], d[0])
    }
}

/// One ChaCha20 keystream block for input block `x` into `out` (64 bytes, any alignment).
@inline(never)
func chacha20Block(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) {
    let a0 = x.lowHalf.lowHalf, b0 = x.lowHalf.highHalf, c0 = x.highHalf.lowHalf, d0 = x.highHalf.highHalf
    var a = a0, b = b0, c = c0, d = d0
    chachaRounds(&a, &b, &c, &d)
    out.storeBytes(of: le(a &+ a0), toByteOffset: 0, as: SIMD4<UInt32>.self)
    out.storeBytes(of: le(b &+ b0), toByteOffset: 16, as: SIMD4<UInt32>.self)
    out.storeBytes(of: le(c &+ c0), toByteOffset: 32, as: SIMD4<UInt32>.self)
    out.storeBytes(of: le(d &+ d0), toByteOffset: 48, as: SIMD4<UInt32>.self)
    wipe(&a); wipe(&b); wipe(&c); wipe(&d)
}

/// HChaCha20 (draft-irtf-cfrg-xchacha §2.2): a 32-byte key and a 16-byte input to 32 bytes (words 0–3
/// and 12–15 of the rounds, without the feed-forward addition). `out` may alias `key`.
func hchacha20Core(key k: UnsafeRawPointer, input n: UnsafeRawPointer, output out: UnsafeMutableRawPointer) {
    var a = SIMD4(chachaSigma.0, chachaSigma.1, chachaSigma.2, chachaSigma.3)
    var b = SIMD4(k.loadLE32(0), k.loadLE32(4), k.loadLE32(8), k.loadLE32(12))
    var c = SIMD4(k.loadLE32(16), k.loadLE32(20), k.loadLE32(24), k.loadLE32(28))
    var d = SIMD4(n.loadLE32(0), n.loadLE32(4), n.loadLE32(8), n.loadLE32(12))
    chachaRounds(&a, &b, &c, &d)
    out.storeBytes(of: le(a), toByteOffset: 0, as: SIMD4<UInt32>.self)
    out.storeBytes(of: le(d), toByteOffset: 16, as: SIMD4<UInt32>.self)
    wipe(&a); wipe(&b); wipe(&c); wipe(&d)
}

// MARK: - Bulk XOR

/// XORs `count` bytes of ChaCha20 keystream, starting at the block boundary given by the counter in
/// `x` (word 12), from `src` into `dst` (the same buffer or disjoint ones), and advances the counter
/// (modulo 2^32) by the number of blocks used (a partial last block counts as one). Whole 512-byte
/// groups go to `impl`'s eight-block loop when it is a kernel (`Registries.chacha20.implementation(for:)`
/// of the caller's backend), the rest to the four-block code.
@inline(__always)
func chacha20XOR(_ x: inout SIMD16<UInt32>, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ count: Int,
                 _ impl: any ChaCha20Implementation.Type) {
    var done = 0
    if count >= 512 && impl.isKernel {
        let groups = count >> 9
        withUnsafeMutableBytes(of: &x) { impl.xor($0.baseAddress!, src, dst, groups) }
        done = groups << 9
    }
    if done < count {
        chacha20XORPortable(&x, src + done, dst + done, count - done)
    }
}

/// The portable bulk path: four blocks at a time, then a 1..4-block tail through a stack buffer.
@inline(never)
func chacha20XORPortable(_ x: inout SIMD16<UInt32>, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                         _ count: Int) {
    var counter = x[12]
    var off = 0
    while count - off >= 256 {
        chacha20x4(x, counter) { j, k, ks in
            let p = off + 64 * j + 16 * k
            let v = src.loadUnaligned(fromByteOffset: p, as: SIMD4<UInt32>.self) ^ ks
            dst.storeBytes(of: v, toByteOffset: p, as: SIMD4<UInt32>.self)
        }
        counter &+= 4
        off += 256
    }
    let rest = count - off
    if rest > 0 {
        withScratch { tmp in
            if rest > 64 {
                chacha20x4(x, counter) { j, k, ks in
                    tmp.storeBytes(of: ks, toByteOffset: 64 * j + 16 * k, as: SIMD4<UInt32>.self)
                }
            } else {
                var y = x
                y[12] = counter
                chacha20Block(y, tmp)
                wipe(&y)
            }
            var i = 0
            while i + 8 <= rest {
                let v = src.loadUnaligned(fromByteOffset: off + i, as: UInt64.self) ^ tmp.load(fromByteOffset: i, as: UInt64.self)
                dst.storeBytes(of: v, toByteOffset: off + i, as: UInt64.self)
                i += 8
            }
            while i < rest {
                dst.storeBytes(of: src.load(fromByteOffset: off + i, as: UInt8.self) ^ tmp.load(fromByteOffset: i, as: UInt8.self),
                               toByteOffset: off + i, as: UInt8.self)
                i += 1
            }
        }
        counter &+= UInt32(truncatingIfNeeded: (rest + 63) >> 6)
    }
    x[12] = counter
}

/// Four ChaCha20 blocks with counters `counter ... counter + 3` (mod 2^32); hands each 16-byte piece
/// of keystream (block `j`, piece `k`, words in little-endian byte order) to `emit`.
@inline(__always)
func chacha20x4(_ x: SIMD16<UInt32>, _ counter: UInt32, _ emit: (Int, Int, SIMD4<UInt32>) -> Void) {
    typealias V = SIMD4<UInt32>
    let c12 = V(repeating: counter) &+ V(0, 1, 2, 3)
    var x0 = V(repeating: x[0]), x1 = V(repeating: x[1]), x2 = V(repeating: x[2]), x3 = V(repeating: x[3])
    var x4 = V(repeating: x[4]), x5 = V(repeating: x[5]), x6 = V(repeating: x[6]), x7 = V(repeating: x[7])
    var x8 = V(repeating: x[8]), x9 = V(repeating: x[9]), x10 = V(repeating: x[10]), x11 = V(repeating: x[11])
    var x12 = c12, x13 = V(repeating: x[13]), x14 = V(repeating: x[14]), x15 = V(repeating: x[15])
    for _ in 0..<10 {
        chachaQR(&x0, &x4, &x8, &x12)
        chachaQR(&x1, &x5, &x9, &x13)
        chachaQR(&x2, &x6, &x10, &x14)
        chachaQR(&x3, &x7, &x11, &x15)
        chachaQR(&x0, &x5, &x10, &x15)
        chachaQR(&x1, &x6, &x11, &x12)
        chachaQR(&x2, &x7, &x8, &x13)
        chachaQR(&x3, &x4, &x9, &x14)
    }
    x0 &+= V(repeating: x[0]); x1 &+= V(repeating: x[1]); x2 &+= V(repeating: x[2]); x3 &+= V(repeating: x[3])
    x4 &+= V(repeating: x[4]); x5 &+= V(repeating: x[5]); x6 &+= V(repeating: x[6]); x7 &+= V(repeating: x[7])
    x8 &+= V(repeating: x[8]); x9 &+= V(repeating: x[9]); x10 &+= V(repeating: x[10]); x11 &+= V(repeating: x[11])
    x12 &+= c12; x13 &+= V(repeating: x[13]); x14 &+= V(repeating: x[14]); x15 &+= V(repeating: x[15])
    let (a0, a1, a2, a3) = transpose4(x0, x1, x2, x3)
    let (b0, b1, b2, b3) = transpose4(x4, x5, x6, x7)
    let (c0, c1, c2, c3) = transpose4(x8, x9, x10, x11)
    let (d0, d1, d2, d3) = transpose4(x12, x13, x14, x15)
    emit(0, 0, le(a0)); emit(0, 1, le(b0)); emit(0, 2, le(c0)); emit(0, 3, le(d0))
    emit(1, 0, le(a1)); emit(1, 1, le(b1)); emit(1, 2, le(c1)); emit(1, 3, le(d1))
    emit(2, 0, le(a2)); emit(2, 1, le(b2)); emit(2, 2, le(c2)); emit(2, 3, le(d2))
    emit(3, 0, le(a3)); emit(3, 1, le(b3)); emit(3, 2, le(c3)); emit(3, 3, le(d3))
}
