// SHA-256 compression of sixteen or thirty-two independent messages at once (multi-buffer), one per
// 32-bit lane of 512-bit AVX-512 registers: for processors with full-width 512-bit units (AMD Zen 5),
// where messages in vectors outrun even two interleaved SHA-NI chains (Docs/Architecture.md §6.6).
// MTProto's batch encryption feeds it (Rampart's MultiBuffer).
//
// Compiled with -parse-stdlib and +avx512f +avx512vl (RampartAccelAVX512); the caller must have
// checked for AVX-512F and VL. The rotations are written as two shifts and an OR, which LLVM makes one
// vprord; the three-way XORs become one vpternlogd each, and Ch and Maj are vpternlogd by intrinsic.
//
// Each call runs `n` blocks on every lane. A group of sixteen lanes keeps its eight working variables
// in eight vectors (a..h, lane l = message l). Each block of the sixteen lanes is loaded as sixteen
// rows and transposed in registers (four stages of vpermt2d, then a byte swap per vector) into a
// 4 KiB stack table per group, W[t] of every lane at byte 64t; the message schedule W[16..63] is
// computed into the same table two rounds ahead of its use. (Scalar transposition, a 32-bit load,
// bswap and store per word, took a quarter more time per block: 10.9 against 8.2 ns per block and
// lane for 32 lanes.)
//
// One group's rounds are bound by latency, not by the vector units: on Zen 5 a 512-bit add, rotate
// or vpternlogd takes two cycles, and LLVM's reassociation adds Σ1 before W + K, so a round's chain
// from e is five of them (measured 59 TSC cycles per block and lane). Loading the eight rounds' W + K
// ahead of them took that from 67; the 32-lane kernel runs two groups' rounds interleaved, which fills
// the latency with the other group's work (46 cycles per block and lane with the scalar transposition,
// 35 with the register one; the two-SHA-NI-chain kernel takes about 85). Cycles are at the 4.26 GHz
// this VM's cores ran at. No branch and no memory address depends on the data or the states.

import Swift
import RampartKernelSupport

#if arch(x86_64)

typealias V16 = Builtin.Vec16xInt32

@_transparent private func splat(_ n: UInt32) -> V16 { unsafeBitCast(SIMD16<UInt32>(repeating: n), to: V16.self) }
@_transparent private func add(_ a: V16, _ b: V16) -> V16 { Builtin.add_Vec16xInt32(a, b) }
@_transparent private func xor(_ a: V16, _ b: V16) -> V16 { Builtin.xor_Vec16xInt32(a, b) }
@_transparent private func and(_ a: V16, _ b: V16) -> V16 { Builtin.and_Vec16xInt32(a, b) }
@_transparent private func or(_ a: V16, _ b: V16) -> V16 { Builtin.or_Vec16xInt32(a, b) }
@_transparent private func shr(_ a: V16, _ n: UInt32) -> V16 { Builtin.lshr_Vec16xInt32(a, splat(n)) }
@_transparent private func shl(_ a: V16, _ n: UInt32) -> V16 { Builtin.shl_Vec16xInt32(a, splat(n)) }
/// A rotation of every lane (one vprord).
@_transparent private func rotr(_ a: V16, _ n: UInt32) -> V16 { or(shr(a, n), shl(a, 32 &- n)) }
/// Ch(e, f, g) = (e & f) | (~e & g): one vpternlogd (truth table 0xCA). The immediate is written
/// in each call because the intrinsic needs a constant even in debug builds.
@_transparent private func choose(_ e: V16, _ f: V16, _ g: V16) -> V16 {
    Builtin.int_x86_avx512_pternlog_d_512(e, f, g, Int32(0xCA)._value)
}
/// Maj(a, b, c): one vpternlogd (truth table 0xE8).
@_transparent private func majority(_ a: V16, _ b: V16, _ c: V16) -> V16 {
    Builtin.int_x86_avx512_pternlog_d_512(a, b, c, Int32(0xE8)._value)
}

@_transparent private func load(_ p: UnsafeRawPointer, _ offset: Int) -> V16 {
    unsafeBitCast(p.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt32>.self), to: V16.self)
}
@_transparent private func store(_ v: V16, _ p: UnsafeMutableRawPointer, _ offset: Int) {
    p.storeBytes(of: unsafeBitCast(v, to: SIMD16<UInt32>.self), toByteOffset: offset, as: SIMD16<UInt32>.self)
}

/// The eight working variables, one message per lane.
private struct Lanes16 {
    var a, b, c, d, e, f, g, h: V16

    /// One round with W[t] + K[t] in `wk`; the caller rotates the roles of the variables.
    @_transparent
    static func round(_ a: V16, _ b: V16, _ c: V16, _ d: inout V16, _ e: V16, _ f: V16, _ g: V16, _ h: inout V16, _ wk: V16) {
        let s1 = xor(xor(rotr(e, 6), rotr(e, 11)), rotr(e, 25))
        let ch = choose(e, f, g)
        let t1 = add(add(add(h, wk), ch), s1)
        let s0 = xor(xor(rotr(a, 2), rotr(a, 13)), rotr(a, 22))
        let maj = majority(a, b, c)
        d = add(d, t1)
        h = add(add(t1, maj), s0)
    }

    /// Round t of a block, `i` = t % 8 picking the roles of the variables.
    @_transparent
    mutating func round(_ i: Int, _ wk: V16) {
        switch i {
        case 0: Lanes16.round(a, b, c, &d, e, f, g, &h, wk)
        case 1: Lanes16.round(h, a, b, &c, d, e, f, &g, wk)
        case 2: Lanes16.round(g, h, a, &b, c, d, e, &f, wk)
        case 3: Lanes16.round(f, g, h, &a, b, c, d, &e, wk)
        case 4: Lanes16.round(e, f, g, &h, a, b, c, &d, wk)
        case 5: Lanes16.round(d, e, f, &g, h, a, b, &c, wk)
        case 6: Lanes16.round(c, d, e, &f, g, h, a, &b, wk)
        default: Lanes16.round(b, c, d, &e, f, g, h, &a, wk)
        }
    }

    /// The feed-forward: every variable plus the block's starting value.
    @_transparent
    mutating func feedForward(_ y: Lanes16) {
        a = add(a, y.a); b = add(b, y.b); c = add(c, y.c); d = add(d, y.d)
        e = add(e, y.e); f = add(f, y.f); g = add(g, y.g); h = add(h, y.h)
    }
}

extension Lanes16 {
    /// Lanes `16 group ..< 16 group + 16` of the states (word w of lane l at `states[l][w]`): row j
    /// holds the eight words of lanes j and j + 8 (one 256-bit load each), and an 8 × 8 transposition
    /// in both 256-bit halves at once (the last three stages of `transpose`) makes row w word w of
    /// every lane.
    @_transparent
    init(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ group: Int, _ idx: TransposeIndices) {
        @_transparent func row(_ j: Int) -> V16 {
            let lo = UnsafeRawPointer(states[16 &* group &+ j]).loadUnaligned(as: SIMD8<UInt32>.self)
            let hi = UnsafeRawPointer(states[16 &* group &+ j &+ 8]).loadUnaligned(as: SIMD8<UInt32>.self)
            return unsafeBitCast(SIMD16(lowHalf: lo, highHalf: hi), to: V16.self)
        }
        var r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3), r4 = row(4), r5 = row(5), r6 = row(6), r7 = row(7)
        transpose8(&r0, &r1, &r2, &r3, &r4, &r5, &r6, &r7, idx)
        self.init(a: r0, b: r1, c: r2, d: r3, e: r4, f: r5, g: r6, h: r7)
    }

    /// Stores the variables back to lanes `16 group ..< 16 group + 16` of the states (the inverse of
    /// the loading transposition: the same transposition).
    @_transparent
    func store(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ group: Int, _ idx: TransposeIndices) {
        var r0 = a, r1 = b, r2 = c, r3 = d, r4 = e, r5 = f, r6 = g, r7 = h
        transpose8(&r0, &r1, &r2, &r3, &r4, &r5, &r6, &r7, idx)
        @_transparent func row(_ v: V16, _ j: Int) {
            let x = unsafeBitCast(v, to: SIMD16<UInt32>.self)
            UnsafeMutableRawPointer(states[16 &* group &+ j]).storeBytes(of: x.lowHalf, as: SIMD8<UInt32>.self)
            UnsafeMutableRawPointer(states[16 &* group &+ j &+ 8]).storeBytes(of: x.highHalf, as: SIMD8<UInt32>.self)
        }
        row(r0, 0); row(r1, 1); row(r2, 2); row(r3, 3); row(r4, 4); row(r5, 5); row(r6, 6); row(r7, 7)
    }
}

/// Rows i and i + m swap their off-diagonal m × m blocks (one stage of `transpose`).
@_transparent private func pair(_ a: inout V16, _ b: inout V16, _ lo: V16, _ hi: V16) {
    let x = permute(a, lo, b), y = permute(a, hi, b)
    a = x; b = y
}

/// An 8 × 8 transposition of 32-bit words in each 256-bit half of eight rows.
@_transparent private func transpose8(_ r0: inout V16, _ r1: inout V16, _ r2: inout V16, _ r3: inout V16,
                                      _ r4: inout V16, _ r5: inout V16, _ r6: inout V16, _ r7: inout V16, _ idx: TransposeIndices) {
    pair(&r0, &r4, idx.lo4, idx.hi4); pair(&r1, &r5, idx.lo4, idx.hi4); pair(&r2, &r6, idx.lo4, idx.hi4); pair(&r3, &r7, idx.lo4, idx.hi4)
    pair(&r0, &r2, idx.lo2, idx.hi2); pair(&r1, &r3, idx.lo2, idx.hi2); pair(&r4, &r6, idx.lo2, idx.hi2); pair(&r5, &r7, idx.lo2, idx.hi2)
    pair(&r0, &r1, idx.lo1, idx.hi1); pair(&r2, &r3, idx.lo1, idx.hi1); pair(&r4, &r5, idx.lo1, idx.hi1); pair(&r6, &r7, idx.lo1, idx.hi1)
}

/// σ0 of every lane: rotr 7 ^ rotr 18 ^ shr 3.
@_transparent private func smallSigma0(_ x: V16) -> V16 { xor(xor(rotr(x, 7), rotr(x, 18)), shr(x, 3)) }
/// σ1 of every lane: rotr 17 ^ rotr 19 ^ shr 10.
@_transparent private func smallSigma1(_ x: V16) -> V16 { xor(xor(rotr(x, 17), rotr(x, 19)), shr(x, 10)) }

/// W[t] from the sixteen before it, into the group's table.
@_transparent private func schedule(_ table: UnsafeMutableRawPointer, _ t: Int) {
    let w = add(add(smallSigma1(load(table, 64 &* (t &- 2))), load(table, 64 &* (t &- 7))),
                add(smallSigma0(load(table, 64 &* (t &- 15))), load(table, 64 &* (t &- 16))))
    store(w, table, 64 &* t)
}

/// The index vectors of the four transposition stages (see `transpose`).
private struct TransposeIndices {
    var lo8, hi8, lo4, hi4, lo2, hi2, lo1, hi1: V16

    @_transparent
    init() {
        /// Stage m: within each run of 2m words, `lo` keeps row i's first m words and appends row
        /// (i + m)'s first m; `hi` takes row i's last m words and row (i + m)'s last m.
        @_transparent func make(_ m: UInt32) -> (V16, V16) {
            var lo = SIMD16<UInt32>(), hi = SIMD16<UInt32>()
            var j: UInt32 = 0
            while j < 16 {
                let p = j % (2 &* m)
                lo[Int(j)] = p < m ? j : 16 &+ j &- m
                hi[Int(j)] = p < m ? j &+ m : 16 &+ j
                j &+= 1
            }
            return (unsafeBitCast(lo, to: V16.self), unsafeBitCast(hi, to: V16.self))
        }
        (lo8, hi8) = make(8); (lo4, hi4) = make(4); (lo2, hi2) = make(2); (lo1, hi1) = make(1)
    }
}

/// vpermt2d: word j of the result is word idx[j] of a ‖ b (a's words 0..15, b's 16..31).
@_transparent private func permute(_ a: V16, _ idx: V16, _ b: V16) -> V16 { Builtin.int_x86_avx512_vpermi2var_d_512(a, idx, b) }

/// Byte swap of every lane: rotl 8 supplies bytes 0 and 2, rotr 8 bytes 1 and 3 (one vpternlogd).
@_transparent private func byteSwap(_ v: V16) -> V16 {
    let even = splat(0x00FF_00FF)
    return or(and(rotr(v, 24), even), and(rotr(v, 8), xor(even, splat(~0))))
}

/// Transposes one block of each of the sixteen lanes `first ..< first + 16` into `tb`: W[t] of every
/// lane (big-endian words) as the vector at byte 64t. The sixteen blocks are loaded as rows and
/// transposed in four stages of two-source permutations (rows m apart swap their off-diagonal m × m
/// blocks, m = 8, 4, 2, 1), then byte-swapped.
@_transparent
private func transpose(_ tb: UnsafeMutableRawPointer, _ data: UnsafePointer<UnsafeMutableRawPointer>, _ strides: UnsafePointer<Int>,
                       _ first: Int, _ block: Int, _ idx: TransposeIndices) {
    @_transparent func row(_ l: Int) -> V16 { load(data[first &+ l] + block &* strides[first &+ l], 0) }
    var r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3), r4 = row(4), r5 = row(5), r6 = row(6), r7 = row(7)
    var r8 = row(8), r9 = row(9), r10 = row(10), r11 = row(11), r12 = row(12), r13 = row(13), r14 = row(14), r15 = row(15)
    pair(&r0, &r8, idx.lo8, idx.hi8); pair(&r1, &r9, idx.lo8, idx.hi8); pair(&r2, &r10, idx.lo8, idx.hi8); pair(&r3, &r11, idx.lo8, idx.hi8)
    pair(&r4, &r12, idx.lo8, idx.hi8); pair(&r5, &r13, idx.lo8, idx.hi8); pair(&r6, &r14, idx.lo8, idx.hi8); pair(&r7, &r15, idx.lo8, idx.hi8)
    pair(&r0, &r4, idx.lo4, idx.hi4); pair(&r1, &r5, idx.lo4, idx.hi4); pair(&r2, &r6, idx.lo4, idx.hi4); pair(&r3, &r7, idx.lo4, idx.hi4)
    pair(&r8, &r12, idx.lo4, idx.hi4); pair(&r9, &r13, idx.lo4, idx.hi4); pair(&r10, &r14, idx.lo4, idx.hi4); pair(&r11, &r15, idx.lo4, idx.hi4)
    pair(&r0, &r2, idx.lo2, idx.hi2); pair(&r1, &r3, idx.lo2, idx.hi2); pair(&r4, &r6, idx.lo2, idx.hi2); pair(&r5, &r7, idx.lo2, idx.hi2)
    pair(&r8, &r10, idx.lo2, idx.hi2); pair(&r9, &r11, idx.lo2, idx.hi2); pair(&r12, &r14, idx.lo2, idx.hi2); pair(&r13, &r15, idx.lo2, idx.hi2)
    pair(&r0, &r1, idx.lo1, idx.hi1); pair(&r2, &r3, idx.lo1, idx.hi1); pair(&r4, &r5, idx.lo1, idx.hi1); pair(&r6, &r7, idx.lo1, idx.hi1)
    pair(&r8, &r9, idx.lo1, idx.hi1); pair(&r10, &r11, idx.lo1, idx.hi1); pair(&r12, &r13, idx.lo1, idx.hi1); pair(&r14, &r15, idx.lo1, idx.hi1)
    store(byteSwap(r0), tb, 0); store(byteSwap(r1), tb, 64); store(byteSwap(r2), tb, 128); store(byteSwap(r3), tb, 192)
    store(byteSwap(r4), tb, 256); store(byteSwap(r5), tb, 320); store(byteSwap(r6), tb, 384); store(byteSwap(r7), tb, 448)
    store(byteSwap(r8), tb, 512); store(byteSwap(r9), tb, 576); store(byteSwap(r10), tb, 640); store(byteSwap(r11), tb, 704)
    store(byteSwap(r12), tb, 768); store(byteSwap(r13), tb, 832); store(byteSwap(r14), tb, 896); store(byteSwap(r15), tb, 960)
}

/// The shared body of the 16- and 32-lane kernels: `two` (a constant in each caller) adds the second
/// group of sixteen lanes, whose rounds interleave with the first group's. Written with `while` loops
/// and no closures so that debug builds (tests) stay usable.
@inline(__always)
private func sha256LanesAVX512(_ two: Bool, _ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                               _ strides: UnsafePointer<Int>, _ n: Int, _ k: UnsafePointer<UInt32>, _ table: UnsafeMutableRawPointer) {
    guard n > 0 else { return }
    let idx = TransposeIndices()
    var s = Lanes16(states, 0, idx)
    var r = two ? Lanes16(states, 1, idx) : s
    let table2 = table + 4096
    @_transparent func wk(_ tb: UnsafeMutableRawPointer, _ t: Int) -> V16 { add(load(tb, 64 &* t), splat(k[t])) }
    var block = 0
    while block < n {
        transpose(table, data, strides, 0, block, idx)
        if two { transpose(table2, data, strides, 16, block, idx) }
        let start = s, start2 = r
        // Rounds t ..< t + 8, their W + K loaded first (see the file comment): all eight for one
        // group, four at a time for two (fewer registers); while t < 48 the schedule of
        // W[t + 16 ..< t + 24] between them.
        var t = 0
        while t < 64 {
            let more = t < 48
            if two {
                var i = 0
                while i < 8 {
                    let w0 = wk(table, t &+ i), w1 = wk(table, t &+ i &+ 1), w2 = wk(table, t &+ i &+ 2), w3 = wk(table, t &+ i &+ 3)
                    let v0 = wk(table2, t &+ i), v1 = wk(table2, t &+ i &+ 1), v2 = wk(table2, t &+ i &+ 2), v3 = wk(table2, t &+ i &+ 3)
                    s.round(i, w0); r.round(i, v0)
                    if more { schedule(table, t &+ 16 &+ i); schedule(table2, t &+ 16 &+ i) }
                    s.round(i &+ 1, w1); r.round(i &+ 1, v1)
                    if more { schedule(table, t &+ 17 &+ i); schedule(table2, t &+ 17 &+ i) }
                    s.round(i &+ 2, w2); r.round(i &+ 2, v2)
                    if more { schedule(table, t &+ 18 &+ i); schedule(table2, t &+ 18 &+ i) }
                    s.round(i &+ 3, w3); r.round(i &+ 3, v3)
                    if more { schedule(table, t &+ 19 &+ i); schedule(table2, t &+ 19 &+ i) }
                    i &+= 4
                }
            } else {
                let w0 = wk(table, t), w1 = wk(table, t &+ 1), w2 = wk(table, t &+ 2), w3 = wk(table, t &+ 3)
                let w4 = wk(table, t &+ 4), w5 = wk(table, t &+ 5), w6 = wk(table, t &+ 6), w7 = wk(table, t &+ 7)
                s.round(0, w0)
                if more { schedule(table, t &+ 16); schedule(table, t &+ 17) }
                s.round(1, w1); s.round(2, w2)
                if more { schedule(table, t &+ 18); schedule(table, t &+ 19) }
                s.round(3, w3); s.round(4, w4)
                if more { schedule(table, t &+ 20); schedule(table, t &+ 21) }
                s.round(5, w5); s.round(6, w6)
                if more { schedule(table, t &+ 22); schedule(table, t &+ 23) }
                s.round(7, w7)
            }
            t &+= 8
        }
        s.feedForward(start)
        if two { r.feedForward(start2) }
        block &+= 1
    }
    s.store(states, 0, idx)
    if two { r.store(states, 1, idx) }
}

/// Compresses `n` 64-byte blocks on each of sixteen lanes: lane l's state is the eight words at
/// `states[l]`, its blocks start at `data[l]`, `strides[l]` bytes apart (0 for an idle lane that
/// repeats one scratch block, else 64). `k` points to the 64 round constants. `table` is 4 KiB of
/// scratch (64-byte aligned) for the transposed message schedule, which the caller wipes.
@inline(never)
public func sha256Lanes16AVX512(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                                _ strides: UnsafePointer<Int>, _ n: Int, _ k: UnsafePointer<UInt32>, _ table: UnsafeMutableRawPointer) {
    sha256LanesAVX512(false, states, data, strides, n, k, table)
}

/// ``sha256Lanes16AVX512(_:_:_:_:_:_:)`` on thirty-two lanes (two groups of sixteen, interleaved);
/// `table` is 8 KiB.
@inline(never)
public func sha256Lanes32AVX512(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                                _ strides: UnsafePointer<Int>, _ n: Int, _ k: UnsafePointer<UInt32>, _ table: UnsafeMutableRawPointer) {
    sha256LanesAVX512(true, states, data, strides, n, k, table)
}

/// Thirty-two messages at once on 512-bit registers (processors with full-width 512-bit units).
public enum SHA256Lanes32AVX512: SHA256LanesImplementation {
    public static let name = "avx512-x32"
    public static let requires: KernelFeatures = [.avx512vl]
    public static let lanes = 32
    public static let tableBytes = 8192
    @inline(__always)
    public static func compress(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                                _ strides: UnsafePointer<Int>, _ n: Int, _ table: UnsafeMutableRawPointer) {
        sha256RoundConstants.withUnsafeBufferPointer { sha256Lanes32AVX512(states, data, strides, n, $0.baseAddress!, table) }
    }
}

/// Sixteen messages at once on 512-bit registers.
public enum SHA256Lanes16AVX512: SHA256LanesImplementation {
    public static let name = "avx512-x16"
    public static let requires: KernelFeatures = [.avx512vl]
    public static let lanes = 16
    public static let tableBytes = 4096
    @inline(__always)
    public static func compress(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                                _ strides: UnsafePointer<Int>, _ n: Int, _ table: UnsafeMutableRawPointer) {
        sha256RoundConstants.withUnsafeBufferPointer { sha256Lanes16AVX512(states, data, strides, n, $0.baseAddress!, table) }
    }
}

/// Eight messages at once on 256-bit registers with AVX-512VL rotations and ternary logic (the
/// eight-lane body of RampartKernelSupport compiled with AVX-512VL).
public enum SHA256Lanes8AVX512VL: SHA256LanesImplementation {
    public static let name = "avx512vl-x8"
    public static let requires: KernelFeatures = [.avx512vl]
    public static let lanes = 8
    public static let tableBytes = 2048
    @inline(__always)
    public static func compress(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                                _ strides: UnsafePointer<Int>, _ n: Int, _ table: UnsafeMutableRawPointer) {
        sha256RoundConstants.withUnsafeBufferPointer { sha256Lanes8AVX512VL(states, data, strides, n, $0.baseAddress!, table) }
    }
}

/// RampartKernelSupport's eight-lane body (`sha256Lanes8`) compiled with AVX-512F and VL: one vprord per
/// rotation, one vpternlogd per three-way XOR, Ch and Maj, on 256-bit registers.
@inline(never)
public func sha256Lanes8AVX512VL(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                                 _ strides: UnsafePointer<Int>, _ n: Int, _ k: UnsafePointer<UInt32>, _ table: UnsafeMutableRawPointer) {
    sha256Lanes8(states, data, strides, n, k, table)
}

#endif
