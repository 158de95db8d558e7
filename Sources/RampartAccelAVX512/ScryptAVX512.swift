// scryptBlockMix (RFC 7914 §4) with AVX-512VL: the same computation as KDF/Scrypt.swift's portable
// `scryptBlockMix`, on the diagonal rows of SalsaShortAVX512.swift. scrypt's Salsa20/8 cores run one
// after the other (each takes the previous output), so a BlockMix is one latency-bound chain; each
// rotation on it is one `vprold` here against two shifts and an add in the portable SSE2 code, 3 cycles
// per quarter-round step instead of 4. ROMix's loops stay in KDF/Scrypt.swift, which calls this once
// per BlockMix (16 Salsa20/8 cores at r = 8): the call costs nothing next to the chain, and the memory
// index of ROMix's second loop, secret by scrypt's design, stays where the constant-time check marks it.
//
// Blocks are in the diagonal layout of `Salsa20State` (four rows of four native-endian words, 64 bytes
// per sub-block, the layout KDF/Scrypt.swift's `shuffleIn` writes). No branch and no memory address
// depends on the data: the loops run r iterations and four double rounds, and `mask == nil` is public.

import Swift

#if arch(x86_64)

extension Diagonal {
    /// A sub-block in the diagonal layout at `p`.
    @_transparent init(rows p: UnsafeRawPointer) {
        a = v4(p.loadUnaligned(fromByteOffset: 0, as: W4.self))
        b = v4(p.loadUnaligned(fromByteOffset: 16, as: W4.self))
        c = v4(p.loadUnaligned(fromByteOffset: 32, as: W4.self))
        d = v4(p.loadUnaligned(fromByteOffset: 48, as: W4.self))
    }

    /// XORs the sub-block at `p` (diagonal layout) into the rows.
    @_transparent mutating func xor(rows p: UnsafeRawPointer) {
        a = xor4(a, v4(p.loadUnaligned(fromByteOffset: 0, as: W4.self)))
        b = xor4(b, v4(p.loadUnaligned(fromByteOffset: 16, as: W4.self)))
        c = xor4(c, v4(p.loadUnaligned(fromByteOffset: 32, as: W4.self)))
        d = xor4(d, v4(p.loadUnaligned(fromByteOffset: 48, as: W4.self)))
    }

    /// Stores the rows at `p` (diagonal layout).
    @_transparent func store(rows p: UnsafeMutableRawPointer) {
        p.storeBytes(of: w4(a), toByteOffset: 0, as: W4.self)
        p.storeBytes(of: w4(b), toByteOffset: 16, as: W4.self)
        p.storeBytes(of: w4(c), toByteOffset: 32, as: W4.self)
        p.storeBytes(of: w4(d), toByteOffset: 48, as: W4.self)
    }

    /// Salsa20/8: four double rounds, then the feed-forward addition.
    @_transparent func salsa8(_ z: V4) -> Diagonal {
        var t = self
        var i = 0
        while i < 4 {
            t.doubleRound(z)
            i &+= 1
        }
        t.a = add4(t.a, a); t.b = add4(t.b, b); t.c = add4(t.c, c); t.d = add4(t.d, d)
        return t
    }
}

/// scryptBlockMix on diagonal-layout blocks of 128·`r` bytes: `output = BlockMix(input ^ mask)` (no XOR
/// when `mask` is nil). Returns Integerify of the output, the low 64 bits of its last sub-block.
/// `output` must not overlap the inputs. `z` must be zero (see SalsaShortAVX512.swift). Needs AVX-512VL.
@inline(never)
public func scryptBlockMixAVX512(_ input: UnsafeRawPointer, _ mask: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer,
                                 _ r: Int, _ z: SIMD4<UInt32>) -> UInt64 {
    let zv = v4(z)
    let last = 64 &* (2 &* r &- 1)
    var x = Diagonal(rows: input + last)
    if let m = mask { x.xor(rows: m + last) }
    var i = 0
    var inp = input
    var msk = mask
    var even = output
    var odd = output + 64 &* r
    while i < r {
        // Y[2i] goes to the first half of the output, Y[2i+1] to the second half.
        x.xor(rows: inp)
        if let m = msk { x.xor(rows: m) }
        x = x.salsa8(zv)
        x.store(rows: even)
        x.xor(rows: inp + 64)
        if let m = msk { x.xor(rows: m + 64) }
        x = x.salsa8(zv)
        x.store(rows: odd)
        inp += 128
        msk = msk.map { $0 + 128 }
        even += 64
        odd += 64
        i &+= 1
    }
    // Word 0 is row a lane 0; word 1 is diagonal word 13 (row d, lane 1).
    let a = w4(x.a), d = w4(x.d)
    return UInt64(a[0]) | UInt64(d[1]) << 32
}

#endif
