// SHA-256 compression (FIPS 180-4) with an AVX2 message schedule and BMI scalar rounds: the kernel for
// processors without the SHA extensions (Intel before Ice Lake server, and Goldmont).
//
// Compiled with -parse-stdlib and +avx +avx2 +ssse3 +sse4.1 +bmi +bmi2 only. The caller must have
// checked for AVX2, BMI1 and BMI2. The whole multi-block loop lives here: one call per buffer.
//
// The shape of SHA512AVX2.swift, for 32-bit words, and of OpenSSL's AVX2 code: two blocks, A and B,
// share one message schedule. A 256-bit vector holds W[t..t+3] of block A in its low half and of block
// B in its high half, so one vector step computes eight schedule words. The recurrence reads
// W[t-15..t-12] and W[t-7..t-4], which straddle two vectors (`align`, vpalignr inside each 128-bit
// half), and W[t-2], W[t-1], of which only two exist when a step starts: σ1 runs twice, first on
// W[t-2..t-1] for the step's words 0 and 1, then on those two new words for its words 2 and 3
// (`sigma1Pair`). Every vector is stored with K added (W+K) in a 512-byte table on the stack.
//
// The rounds are scalar (rorx: a rotate that keeps its source, so each Σ is three independent rotates
// and two XORs; andn for Ch), about 23 instructions per round, so the four-wide front end bounds them
// near six cycles a round. The 12 schedule steps (about 30 vector instructions each) run inside block
// A's rounds 0..47; block B's 64 rounds then read their half of the table. An odd final block is
// scheduled with itself as B and B's rounds are skipped.
//
// The vector code is written with the Builtin operations of Vec8.swift (which says why).
//
// No branch and no memory address depends on the data: the loop bounds are the block count.

import Swift
import RampartKernelSupport

#if arch(x86_64)

private typealias V = V8

@_transparent private func add(_ a: V, _ b: V) -> V { add8(a, b) }
@_transparent private func xor(_ a: V, _ b: V) -> V { xor8(a, b) }
@_transparent private func shr(_ a: V, _ n: UInt32) -> V { shr8(a, n) }
@_transparent private func shl(_ a: V, _ n: UInt32) -> V { shl8(a, n) }
@_transparent private func shr64(_ a: V, _ n: UInt64) -> V { shr64x4(a, n) }
@_transparent private func shuffle(_ v: V, _ mask: SIMD4<UInt64>) -> V { shuffle8(v, mask) }
@_transparent private func byteSwap32(_ v: V) -> V { byteSwap8(v) }

/// (lo[1], lo[2], lo[3], hi[0]) in each 128-bit half: the four words that start one word after `lo`'s
/// (vpalignr).
@_transparent private func align(_ lo: V, _ hi: V) -> V {
    let l = unsafeBitCast(lo, to: SIMD8<UInt32>.self), h = unsafeBitCast(hi, to: SIMD8<UInt32>.self)
    return unsafeBitCast(SIMD8<UInt32>(l[1], l[2], l[3], h[0], l[5], l[6], l[7], h[4]), to: V.self)
}

/// σ0 on every lane: rotr 7 ^ rotr 18 ^ shr 3.
@_transparent private func smallSigma0(_ x: V) -> V {
    xor(xor(xor(shr(x, 7), shl(x, 25)), xor(shr(x, 18), shl(x, 14))), shr(x, 3))
}

/// σ1 of two words per half, given each twice (x, x, y, y): a 64-bit shift of the pair (x, x) puts a
/// rotation of x in its low word (two 64-bit shifts instead of four 32-bit shifts and two XORs), and
/// the byte shuffle `place` moves σ1(x), σ1(y) to words 0 and 1 or 2 and 3 of each half, zeroing the
/// other two.
@_transparent private func sigma1Pair(_ d: V, _ place: SIMD4<UInt64>) -> V {
    shuffle(xor(xor(shr(d, 10), shr64(d, 17)), shr64(d, 19)), place)
}

@inline(__always) private func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &>> n) | (x &<< (32 &- n)) }

/// One round; the caller rotates the roles of the eight working variables. `bc` holds b ^ c on entry
/// and a ^ b on exit, which is the next round's b ^ c.
@inline(__always)
private func round(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
                   _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32, _ wk: UInt32,
                   _ bc: inout UInt32) {
    let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
    // Ch(e, f, g) = (e & f) ^ (~e & g); the two terms never share a bit, so they can be added
    // (and ~e & g is one andn).
    let t1 = (h &+ wk) &+ (e & f) &+ (~e & g) &+ s1
    let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
    // Maj(a, b, c) = ((a ^ b) & (b ^ c)) ^ b: three operations, and a ^ b is the next round's b ^ c.
    let ab = a ^ b
    let maj = (ab & bc) ^ b
    bc = ab
    d = d &+ t1
    h = (t1 &+ maj) &+ s0
}

/// The eight working variables.
private struct Working {
    var a, b, c, d, e, f, g, h: UInt32

    @inline(__always)
    init(_ p: UnsafeMutablePointer<UInt32>) {
        a = p[0]; b = p[1]; c = p[2]; d = p[3]; e = p[4]; f = p[5]; g = p[6]; h = p[7]
    }

    /// The feed-forward: `p[i] += self[i]`.
    @inline(__always)
    func addInto(_ p: UnsafeMutablePointer<UInt32>) {
        p[0] &+= a; p[1] &+= b; p[2] &+= c; p[3] &+= d; p[4] &+= e; p[5] &+= f; p[6] &+= g; p[7] &+= h
    }

    /// Eight rounds reading W+K of one block: rounds t..t+3 at `wk[0...3]`, t+4..t+7 at `wk[8...11]`.
    @inline(__always)
    mutating func eightRounds(_ wk: UnsafePointer<UInt32>, _ bc: inout UInt32) {
        round(a, b, c, &d, e, f, g, &h, wk[0], &bc)
        round(h, a, b, &c, d, e, f, &g, wk[1], &bc)
        round(g, h, a, &b, c, d, e, &f, wk[2], &bc)
        round(f, g, h, &a, b, c, d, &e, wk[3], &bc)
        round(e, f, g, &h, a, b, c, &d, wk[8], &bc)
        round(d, e, f, &g, h, a, b, &c, wk[9], &bc)
        round(c, d, e, &f, g, h, a, &b, wk[10], &bc)
        round(b, c, d, &e, f, g, h, &a, wk[11], &bc)
    }
}

/// The message schedule's window, W[t-16..t-1] of both blocks in four vectors.
private struct Schedule {
    var x0, x1, x2, x3: V

    /// Loads and byte-swaps the sixteen words of block A (`pa`) and block B (`pb`) and stores them with
    /// K added in quads 0..3 of the table.
    @_transparent
    init(_ pa: UnsafeRawPointer, _ pb: UnsafeRawPointer, _ k: UnsafeRawPointer, _ wk: UnsafeMutableRawPointer) {
        @_transparent func load(_ j: Int) -> V {
            let lo = pa.loadUnaligned(fromByteOffset: 16 &* j, as: SIMD4<UInt32>.self)
            let hi = pb.loadUnaligned(fromByteOffset: 16 &* j, as: SIMD4<UInt32>.self)
            let x = byteSwap32(unsafeBitCast(SIMD8<UInt32>(lowHalf: lo, highHalf: hi), to: V.self))
            let kq = unsafeBitCast(k.loadUnaligned(fromByteOffset: 32 &* j, as: SIMD8<UInt32>.self), to: V.self)
            wk.storeBytes(of: unsafeBitCast(add(x, kq), to: SIMD8<UInt32>.self), toByteOffset: 32 &* j, as: SIMD8<UInt32>.self)
            return x
        }
        x0 = load(0); x1 = load(1); x2 = load(2); x3 = load(3)
    }

    /// Schedules quad j (4...15) from the previous four, stores it with K added and slides the window.
    @_transparent
    mutating func step(_ j: Int, _ k: UnsafeRawPointer, _ wk: UnsafeMutableRawPointer) {
        // (w2, w2, w3, w3) and (w0, w0, w1, w1) of each half; words 0 and 2 of each half to words 0
        // and 1, or to words 2 and 3, zeros elsewhere.
        let high2 = SIMD4<UInt64>(0x0b0a09080b0a0908, 0x0f0e0d0c0f0e0d0c, 0x0b0a09080b0a0908, 0x0f0e0d0c0f0e0d0c)
        let low2 = SIMD4<UInt64>(0x0302010003020100, 0x0706050407060504, 0x0302010003020100, 0x0706050407060504)
        let toLow = SIMD4<UInt64>(0x0b0a090803020100, 0x8080808080808080, 0x0b0a090803020100, 0x8080808080808080)
        let toHigh = SIMD4<UInt64>(0x8080808080808080, 0x0b0a090803020100, 0x8080808080808080, 0x0b0a090803020100)
        var n = add(add(x0, align(x2, x3)), smallSigma0(align(x0, x1)))
        // Words 0 and 1: σ1 of W[t-2], W[t-1] (x3's words 2 and 3); then words 2 and 3: σ1 of the two
        // words just made.
        n = add(n, sigma1Pair(shuffle(x3, high2), toLow))
        n = add(n, sigma1Pair(shuffle(n, low2), toHigh))
        let kq = unsafeBitCast(k.loadUnaligned(fromByteOffset: 32 &* j, as: SIMD8<UInt32>.self), to: V.self)
        wk.storeBytes(of: unsafeBitCast(add(n, kq), to: SIMD8<UInt32>.self), toByteOffset: 32 &* j, as: SIMD8<UInt32>.self)
        x0 = x1; x1 = x2; x2 = x3; x3 = n
    }
}

/// The W+K table of two blocks: sixteen quads, block A in the low half of each.
private struct Table {
    var q: (SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>,
            SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>)
    @inline(__always) init() {
        let z = SIMD8<UInt32>(repeating: 0)
        q = (z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z)
    }
}

/// Compresses `count` 64-byte blocks into `state` (eight words, native order). `k` points to the 64
/// round constants laid out in quads for both blocks (K[4j..4j+3] twice for j = 0..<16, 128 words).
///
/// The W+K table is a local of this function, so the rounds address it from the stack pointer and
/// need no register for its address (the round code needs nearly all of them); it is wiped with
/// volatile stores before returning. Both blocks' rounds run as loops with an index: unrolled, LLVM
/// forwards the table's vector stores to the rounds' scalar loads as vector extracts, which cost ALU
/// slots where the loads were free.
@inline(never)
public func sha256BlocksAVX2(_ state: UnsafeMutablePointer<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int,
                             _ k: UnsafePointer<UInt32>) {
    var storage = Table()
    // The address of the local without a closure (which LLVM left out of line, the table's address
    // then living in a register or a stack slot).
    let table = UnsafeMutableRawPointer(Builtin.addressof(&storage))
    let words = table.assumingMemoryBound(to: UInt32.self)
    let kRaw = UnsafeRawPointer(k)
    var p = blocks
    var remaining = count
    while remaining > 0 {
        let pb = remaining >= 2 ? p + 64 : p
        var w = Schedule(p, pb, kRaw, table)

        // Block A: rounds 0..47 with the schedule of quads 4..15 interleaved, then 48..63. The
        // chaining value is reloaded from `state` (not kept in registers across the rounds).
        var s = Working(state)
        var bc = s.b ^ s.c
        var j = 0
        repeat {
            s.eightRounds(words + 8 &* j, &bc)
            s.eightRounds(words + (8 &* j &+ 16), &bc)
            w.step(j &+ 4, kRaw, table); w.step(j &+ 5, kRaw, table)
            w.step(j &+ 6, kRaw, table); w.step(j &+ 7, kRaw, table)
            j &+= 4
        } while j < 12
        s.eightRounds(words + 96, &bc)
        s.eightRounds(words + 112, &bc)
        s.addInto(state)

        if remaining >= 2 {
            // Block B: a loop of sixteen rounds over its half of the table.
            s = Working(state)
            bc = s.b ^ s.c
            var i = 4
            repeat {
                s.eightRounds(words + i, &bc)
                s.eightRounds(words + (i &+ 16), &bc)
                i &+= 32
            } while i < 128
            s.addInto(state)
            p += 128
            remaining &-= 2
        } else {
            p += 64
            remaining &-= 1
        }
    }
    // Wipe the schedule of the last blocks (volatile stores: not removable as dead).
    volatileZero(table, 512)
}

/// The round constants as ``sha256BlocksAVX2(_:_:_:_:)`` reads them: K[4j..4j+3] twice (once per
/// block of a pair).
let sha256ConstantQuads: [UInt32] = {
    var t: [UInt32] = []
    t.reserveCapacity(128)
    for j in 0..<16 {
        for _ in 0..<2 { for i in 0..<4 { t.append(sha256RoundConstants[4 * j + i]) } }
    }
    return t
}()

/// SHA-256 with an AVX2 message schedule and BMI2 rounds (processors without the SHA extensions).
public enum SHA256AVX2: SHA256Implementation {
    public static let name = "avx2"
    public static let requires: KernelFeatures = [.avx2]
    @inline(__always)
    public static func blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int) {
        sha256ConstantQuads.withUnsafeBufferPointer { sha256BlocksAVX2(state, data, count, $0.baseAddress!) }
    }
}

/// Eight messages at once, one per lane of 256-bit AVX2 registers (SHA256LanesAVX2.swift).
public enum SHA256Lanes8AVX2: SHA256LanesImplementation {
    public static let name = "avx2-x8"
    public static let requires: KernelFeatures = [.avx2]
    public static let lanes = 8
    public static let tableBytes = 2048
    @inline(__always)
    public static func compress(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                                _ strides: UnsafePointer<Int>, _ n: Int, _ table: UnsafeMutableRawPointer) {
        sha256RoundConstants.withUnsafeBufferPointer { sha256Lanes8AVX2(states, data, strides, n, $0.baseAddress!, table) }
    }
}

#endif
