// The Argon2 compression function G and the segment-filling loop (RFC 9106 §3.4–3.6), shared by
// Rampart's portable Argon2id (KDF/Argon2.swift) and the AVX2 kernel (RampartAccelAVX2/
// Argon2AVX2.swift): one copy of the logic, compiled by each caller with its own target features
// (SSE2 in Rampart, AVX2 in the kernel module).
//
// A block is 128 little-endian 64-bit words. G(X, Y): R = X ⊕ Y; Q = P applied to each of the eight
// rows of sixteen words (words 16i ... 16i+15); Z = P applied to each of the eight columns (words 2i,
// 2i+1, 2i+16, 2i+17, ..., 2i+112, 2i+113); G = Z ⊕ R. P is one BLAKE2b round without message words,
// with the BlaMka multiplication: a = a + b + 2·lo32(a)·lo32(b).
//
// The sixteen words of one P are held as four rows of four lanes (`SIMD4<UInt64>`), as in the
// BLAKE2b code: the four column G steps act lane-wise, then rows b, c and d are rotated by one, two
// and three lanes for the diagonal steps and rotated back. The loops over rows and columns are not
// unrolled, so the stdlib's generic SIMD operators stay cheap to compile.
//
// Timing: G itself has no branch and no secret memory index. The segment loop reads the reference
// block at an index computed from the previous block in data-dependent passes (Argon2id: everything
// after the first half of the first pass); that access pattern is inherent to Argon2id and documented
// on the public API.

import Swift

public typealias Argon2V = SIMD4<UInt64>

@usableFromInline @_transparent func a2xor(_ a: Argon2V, _ b: Argon2V) -> Argon2V { a ^ b }
@usableFromInline @_transparent func a2rotr(_ x: Argon2V, _ n: UInt64) -> Argon2V {
    // `&+` rather than `|`: the halves never overlap (Docs/Architecture.md §6.1).
    (x &>> n) &+ (x &<< (64 &- n))
}
/// a + b + 2·lo32(a)·lo32(b) on each lane (the multiplication is `pmuludq`).
@usableFromInline @_transparent func a2blamka(_ a: Argon2V, _ b: Argon2V) -> Argon2V {
    let m = Argon2V(repeating: 0xFFFF_FFFF)
    let p = (a & m) &* (b & m)
    return a &+ b &+ (p &+ p)
}
@usableFromInline @_transparent func a2lanes(_ x: Argon2V) -> SIMD4<UInt64> { x }
@usableFromInline @_transparent func a2vec(_ x: SIMD4<UInt64>) -> Argon2V { x }

/// The BlaMka G function on four columns at once.
@usableFromInline @_transparent
func a2g(_ a: inout Argon2V, _ b: inout Argon2V, _ c: inout Argon2V, _ d: inout Argon2V) {
    a = a2blamka(a, b); d = a2rotr(a2xor(d, a), 32)
    c = a2blamka(c, d); b = a2rotr(a2xor(b, c), 24)
    a = a2blamka(a, b); d = a2rotr(a2xor(d, a), 16)
    c = a2blamka(c, d); b = a2rotr(a2xor(b, c), 63)
}

/// One P: column steps, then diagonal steps (rows b, c, d rotated left by 1, 2, 3 lanes and back).
@usableFromInline @_transparent
func a2p(_ a: inout Argon2V, _ b: inout Argon2V, _ c: inout Argon2V, _ d: inout Argon2V) {
    a2g(&a, &b, &c, &d)
    var x = a2lanes(b), y = a2lanes(c), z = a2lanes(d)
    b = a2vec(SIMD4(x[1], x[2], x[3], x[0])); c = a2vec(SIMD4(y[2], y[3], y[0], y[1])); d = a2vec(SIMD4(z[3], z[0], z[1], z[2]))
    a2g(&a, &b, &c, &d)
    x = a2lanes(b); y = a2lanes(c); z = a2lanes(d)
    b = a2vec(SIMD4(x[3], x[0], x[1], x[2])); c = a2vec(SIMD4(y[2], y[3], y[0], y[1])); d = a2vec(SIMD4(z[1], z[2], z[3], z[0]))
}

@usableFromInline @_transparent func a2load(_ p: UnsafeRawPointer, _ word: Int) -> Argon2V {
    p.loadUnaligned(fromByteOffset: 8 &* word, as: SIMD4<UInt64>.self)
}
@usableFromInline @_transparent func a2load2(_ p: UnsafeRawPointer, _ w0: Int, _ w1: Int) -> Argon2V {
    let lo = p.loadUnaligned(fromByteOffset: 8 &* w0, as: SIMD2<UInt64>.self)
    let hi = p.loadUnaligned(fromByteOffset: 8 &* w1, as: SIMD2<UInt64>.self)
    return a2vec(SIMD4(lowHalf: lo, highHalf: hi))
}
@usableFromInline @_transparent func a2store(_ p: UnsafeMutableRawPointer, _ word: Int, _ v: Argon2V) {
    p.storeBytes(of: a2lanes(v), toByteOffset: 8 &* word, as: SIMD4<UInt64>.self)
}
@usableFromInline @_transparent func a2store2(_ p: UnsafeMutableRawPointer, _ w0: Int, _ w1: Int, _ v: Argon2V) {
    let l = a2lanes(v)
    p.storeBytes(of: l.lowHalf, toByteOffset: 8 &* w0, as: SIMD2<UInt64>.self)
    p.storeBytes(of: l.highHalf, toByteOffset: 8 &* w1, as: SIMD2<UInt64>.self)
}

/// next = G(prev, ref), or G(prev, ref) ⊕ next when `withXor` (passes after the first). `scratch` is
/// 1024 bytes. `next` may be the same block as `ref` (address generation), never `prev`.
@inlinable @inline(__always)
public func argon2Compress(_ prev: UnsafeRawPointer, _ ref: UnsafeRawPointer, _ next: UnsafeMutableRawPointer,
                           _ scratch: UnsafeMutableRawPointer, _ withXor: Bool) {
    // R = prev ⊕ ref into scratch; the rows of P straight from the inputs.
    var i = 0
    while i < 8 {
        let w = 16 &* i
        var a = a2xor(a2load(prev, w), a2load(ref, w))
        var b = a2xor(a2load(prev, w &+ 4), a2load(ref, w &+ 4))
        var c = a2xor(a2load(prev, w &+ 8), a2load(ref, w &+ 8))
        var d = a2xor(a2load(prev, w &+ 12), a2load(ref, w &+ 12))
        a2p(&a, &b, &c, &d)
        a2store(scratch, w, a); a2store(scratch, w &+ 4, b); a2store(scratch, w &+ 8, c); a2store(scratch, w &+ 12, d)
        i &+= 1
    }
    i = 0
    while i < 8 {
        let w = 2 &* i
        var a = a2load2(scratch, w, w &+ 16)
        var b = a2load2(scratch, w &+ 32, w &+ 48)
        var c = a2load2(scratch, w &+ 64, w &+ 80)
        var d = a2load2(scratch, w &+ 96, w &+ 112)
        a2p(&a, &b, &c, &d)
        a2store2(scratch, w, w &+ 16, a); a2store2(scratch, w &+ 32, w &+ 48, b)
        a2store2(scratch, w &+ 64, w &+ 80, c); a2store2(scratch, w &+ 96, w &+ 112, d)
        i &+= 1
    }
    // next = Z ⊕ R (⊕ next), R recomputed from the inputs (word by word, so `next` may alias `ref`).
    i = 0
    if withXor {
        while i < 128 {
            let v = a2xor(a2xor(a2load(scratch, i), a2load(next, i)), a2xor(a2load(prev, i), a2load(ref, i)))
            a2store(next, i, v)
            i &+= 4
        }
    } else {
        while i < 128 {
            let v = a2xor(a2load(scratch, i), a2xor(a2load(prev, i), a2load(ref, i)))
            a2store(next, i, v)
            i &+= 4
        }
    }
}

/// The position of one segment and the instance's shape (RFC 9106 §3.4).
public struct Argon2Segment {
    public var pass: Int, lane: Int, slice: Int
    public var lanes: Int, laneLength: Int, segmentLength: Int, memoryBlocks: Int, passes: Int
    /// 0 Argon2d, 1 Argon2i, 2 Argon2id.
    public var type: Int
    /// The constant-time checker's declassification hook (`nil` outside `rampart-ctgrind`): called on
    /// every data-dependent reference word, which Argon2id reveals through its memory accesses by design.
    public var declassify: (@convention(c) (UnsafeRawPointer?, Int) -> Void)? = nil

    @inlinable
    public init(pass: Int, lane: Int, slice: Int, lanes: Int, laneLength: Int, memoryBlocks: Int, passes: Int, type: Int) {
        self.pass = pass; self.lane = lane; self.slice = slice
        self.lanes = lanes; self.laneLength = laneLength; self.segmentLength = laneLength / 4
        self.memoryBlocks = memoryBlocks; self.passes = passes; self.type = type
    }
}

/// Fills one segment of `memory` (all blocks, 1024 bytes each). `work` is 4 · 1024 bytes: the
/// compression scratch, the address-generation input block, the address block and a zero block.
@inlinable @inline(__always)
public func argon2FillSegment(_ memory: UnsafeMutableRawPointer, _ pos: Argon2Segment, _ work: UnsafeMutableRawPointer) {
    let scratch = work, input = work + 1024, addresses = work + 2048
    let dataIndependent = pos.type == 1 || (pos.type == 2 && pos.pass == 0 && pos.slice < 2)
    // The all-zero block, G's first argument during address generation.
    let zero = UnsafeRawPointer(work + 3072)
    @inline(__always) func nextAddresses() {
        input.storeBytes(of: input.load(fromByteOffset: 48, as: UInt64.self) &+ 1, toByteOffset: 48, as: UInt64.self)
        argon2Compress(zero, UnsafeRawPointer(input), addresses, scratch, false)
        argon2Compress(zero, UnsafeRawPointer(addresses), addresses, scratch, false)
    }
    if dataIndependent {
        var k = 0
        while k < 256 { input.storeBytes(of: UInt64(0), toByteOffset: 8 &* (k < 128 ? k : k &+ 128), as: UInt64.self); k &+= 1 }
        input.storeBytes(of: UInt64(pos.pass), toByteOffset: 0, as: UInt64.self)
        input.storeBytes(of: UInt64(pos.lane), toByteOffset: 8, as: UInt64.self)
        input.storeBytes(of: UInt64(pos.slice), toByteOffset: 16, as: UInt64.self)
        input.storeBytes(of: UInt64(pos.memoryBlocks), toByteOffset: 24, as: UInt64.self)
        input.storeBytes(of: UInt64(pos.passes), toByteOffset: 32, as: UInt64.self)
        input.storeBytes(of: UInt64(pos.type), toByteOffset: 40, as: UInt64.self)
    }
    var start = 0
    if pos.pass == 0 && pos.slice == 0 {
        start = 2
        if dataIndependent { nextAddresses() }
    }
    let seg = pos.segmentLength
    var cur = pos.lane &* pos.laneLength &+ pos.slice &* seg &+ start
    var prev = cur % pos.laneLength == 0 ? cur &+ pos.laneLength &- 1 : cur &- 1
    var i = start
    while i < seg {
        if cur % pos.laneLength == 1 { prev = cur &- 1 }
        let pseudoRand: UInt64
        if dataIndependent {
            if i % 128 == 0 { nextAddresses() }
            pseudoRand = addresses.load(fromByteOffset: 8 &* (i % 128), as: UInt64.self)
        } else {
            var word = memory.load(fromByteOffset: 1024 &* prev, as: UInt64.self)
            if let hook = pos.declassify { withUnsafeBytes(of: &word) { hook($0.baseAddress, 8) } }
            pseudoRand = word
        }
        var refLane = Int(truncatingIfNeeded: (pseudoRand >> 32) % UInt64(pos.lanes))
        if pos.pass == 0 && pos.slice == 0 { refLane = pos.lane }
        let sameLane = refLane == pos.lane
        // index_alpha (RFC 9106 §3.4.1.2).
        let area: Int
        if pos.pass == 0 {
            if pos.slice == 0 {
                area = i &- 1
            } else if sameLane {
                area = pos.slice &* seg &+ i &- 1
            } else {
                area = pos.slice &* seg &+ (i == 0 ? -1 : 0)
            }
        } else if sameLane {
            area = pos.laneLength &- seg &+ i &- 1
        } else {
            area = pos.laneLength &- seg &+ (i == 0 ? -1 : 0)
        }
        var rel = pseudoRand & 0xFFFF_FFFF
        rel = (rel &* rel) >> 32
        let relative = UInt64(area) &- 1 &- ((UInt64(area) &* rel) >> 32)
        let startPos = pos.pass != 0 && pos.slice != 3 ? (pos.slice &+ 1) &* seg : 0
        let refIndex = Int(truncatingIfNeeded: (UInt64(startPos) &+ relative) % UInt64(pos.laneLength))
        let refBlock = memory + 1024 &* (pos.laneLength &* refLane &+ refIndex)
        argon2Compress(UnsafeRawPointer(memory + 1024 &* prev), UnsafeRawPointer(refBlock), memory + 1024 &* cur,
                       scratch, pos.pass != 0)
        i &+= 1
        cur &+= 1
        prev &+= 1
    }
}
