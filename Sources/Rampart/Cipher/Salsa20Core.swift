// The Salsa20 core (Bernstein, "The Salsa20 family of stream ciphers") on four SIMD4<UInt32> rows.
//
// The 4×4 word matrix is held in the "diagonal" layout used by the classic SSE2 implementations of
// Salsa20 and scrypt: lane k of row m holds word (4m + 5k) mod 16, so
//
//     a = (x0,  x5,  x10, x15)      the diagonal
//     b = (x4,  x9,  x14, x3)
//     c = (x8,  x13, x2,  x7)
//     d = (x12, x1,  x6,  x11)
//
// In this layout the four column quarter-rounds act lane-wise on whole vectors
// (b ^= (a+d)<<<7, c ^= (b+a)<<<9, d ^= (c+b)<<<13, a ^= (d+c)<<<18); rotating the lanes of b, c
// and d turns the four row quarter-rounds into the same vector pattern, and rotating them back
// restores the layout. No scalar word ever leaves the vector registers.
//
// Equivalently: word i of the diagonal layout (row i/4, lane i%4) is word (5·i) mod 16 of the
// standard layout, and word w of the standard layout is word (13·w) mod 16 of the diagonal layout.
//
// The round count is a parameter (double rounds: 4 for Salsa20/8 in scrypt, 10 for Salsa20/20,
// HSalsa20 and XSalsa20). Everything here is internal and inlined into its callers.

/// The Salsa20 state: four rows of four 32-bit words in the diagonal layout (see the file comment).
@usableFromInline
struct Salsa20State {
    @usableFromInline var a: SIMD4<UInt32>
    @usableFromInline var b: SIMD4<UInt32>
    @usableFromInline var c: SIMD4<UInt32>
    @usableFromInline var d: SIMD4<UInt32>

    @inlinable @inline(__always)
    init(a: SIMD4<UInt32>, b: SIMD4<UInt32>, c: SIMD4<UInt32>, d: SIMD4<UInt32>) {
        self.a = a; self.b = b; self.c = c; self.d = d
    }

    /// Loads 64 bytes that are already in the diagonal layout (native-endian words, 16-byte aligned).
    @inlinable @inline(__always)
    init(diagonal p: UnsafeRawPointer) {
        a = p.load(fromByteOffset: 0, as: SIMD4<UInt32>.self)
        b = p.load(fromByteOffset: 16, as: SIMD4<UInt32>.self)
        c = p.load(fromByteOffset: 32, as: SIMD4<UInt32>.self)
        d = p.load(fromByteOffset: 48, as: SIMD4<UInt32>.self)
    }

    /// Stores the state in the diagonal layout (native-endian words, 16-byte aligned).
    @inlinable @inline(__always)
    func store(diagonal p: UnsafeMutableRawPointer) {
        p.storeBytes(of: a, toByteOffset: 0, as: SIMD4<UInt32>.self)
        p.storeBytes(of: b, toByteOffset: 16, as: SIMD4<UInt32>.self)
        p.storeBytes(of: c, toByteOffset: 32, as: SIMD4<UInt32>.self)
        p.storeBytes(of: d, toByteOffset: 48, as: SIMD4<UInt32>.self)
    }

    /// Loads 64 bytes in the standard layout (sixteen little-endian words x0..x15, any alignment).
    @inlinable @inline(__always)
    init(standard p: UnsafeRawPointer) {
        @inline(__always) func w(_ i: Int) -> UInt32 { p.loadLE32(4 * i) }
        a = SIMD4(w(0), w(5), w(10), w(15))
        b = SIMD4(w(4), w(9), w(14), w(3))
        c = SIMD4(w(8), w(13), w(2), w(7))
        d = SIMD4(w(12), w(1), w(6), w(11))
    }

    /// Stores the state in the standard layout (sixteen little-endian words x0..x15, any alignment).
    @inlinable @inline(__always)
    func store(standard p: UnsafeMutableRawPointer) {
        for k in 0..<4 {
            p.storeLE32(a[k], 4 * ((5 * k) & 15))
            p.storeLE32(b[k], 4 * ((4 + 5 * k) & 15))
            p.storeLE32(c[k], 4 * ((8 + 5 * k) & 15))
            p.storeLE32(d[k], 4 * ((12 + 5 * k) & 15))
        }
    }

    /// Word `w` (0..<16) of the standard layout.
    @inlinable @inline(__always)
    func word(_ w: Int) -> UInt32 {
        let i = (13 &* w) & 15
        switch i >> 2 {
        case 0: return a[i & 3]
        case 1: return b[i & 3]
        case 2: return c[i & 3]
        default: return d[i & 3]
        }
    }

    @inlinable @inline(__always)
    static func ^ (x: Salsa20State, y: Salsa20State) -> Salsa20State {
        Salsa20State(a: x.a ^ y.a, b: x.b ^ y.b, c: x.c ^ y.c, d: x.d ^ y.d)
    }

    @inlinable @inline(__always)
    static func ^= (x: inout Salsa20State, y: Salsa20State) { x = x ^ y }

    @inlinable @inline(__always)
    static func &+ (x: Salsa20State, y: Salsa20State) -> Salsa20State {
        Salsa20State(a: x.a &+ y.a, b: x.b &+ y.b, c: x.c &+ y.c, d: x.d &+ y.d)
    }

    /// Applies `count` Salsa20 double rounds (a column round then a row round) in place.
    ///
    /// `z` must be zero. Hot loops pass a zero the optimizer cannot see (a parameter of a function
    /// with public linkage): adding it to the lane-rotated rows stops LLVM from cancelling each lane
    /// rotation against its inverse, which moves the rotations onto the critical path of the row
    /// round (two extra shuffles of latency per quarter-round step, about 25% slower). The additions
    /// themselves are off the critical path. (An XOR does not work: LLVM reassociates it with the
    /// round's XOR and cancels the rotations anyway.)
    @inlinable @inline(__always)
    mutating func doubleRounds(_ count: Int, z: SIMD4<UInt32> = .zero) {
        var a = self.a, b = self.b, c = self.c, d = self.d
        var i = 0
        while i < count {
            // Column round: the four columns are the four lanes.
            b ^= salsaRotate(a &+ d, 7)
            c ^= salsaRotate(b &+ a, 9)
            d ^= salsaRotate(c &+ b, 13)
            a ^= salsaRotate(d &+ c, 18)
            // Rotate lanes so that the rows line up as (a, d', c', b'): lane k now holds row k.
            b = SIMD4(b[3], b[0], b[1], b[2]) &+ z
            c = SIMD4(c[2], c[3], c[0], c[1]) &+ z
            d = SIMD4(d[1], d[2], d[3], d[0]) &+ z
            // Row round, same pattern with the roles of b and d exchanged.
            d ^= salsaRotate(a &+ b, 7)
            c ^= salsaRotate(d &+ a, 9)
            b ^= salsaRotate(c &+ d, 13)
            a ^= salsaRotate(b &+ c, 18)
            // Back to the diagonal layout.
            b = SIMD4(b[1], b[2], b[3], b[0]) &+ z
            c = SIMD4(c[2], c[3], c[0], c[1]) &+ z
            d = SIMD4(d[3], d[0], d[1], d[2]) &+ z
            i &+= 1
        }
        self.a = a; self.b = b; self.c = c; self.d = d
    }

    /// The Salsa20 core function: `self + doubleRounds(self)` (the feed-forward addition included).
    @inlinable @inline(__always)
    func core(doubleRounds count: Int, z: SIMD4<UInt32> = .zero) -> Salsa20State {
        var x = self
        x.doubleRounds(count, z: z)
        return x &+ self
    }
}

/// Lane-wise rotate left by a constant. Written with `&+` rather than `|`: the two halves never
/// overlap, and the `|` form is matched as a funnel shift and scalarised on baseline x86_64.
@inlinable @inline(__always)
func salsaRotate(_ x: SIMD4<UInt32>, _ n: UInt32) -> SIMD4<UInt32> {
    (x &<< n) &+ (x &>> (32 &- n))
}

/// The Salsa20 core on 64 bytes in the standard layout: `output = input + rounds(input)`, with
/// `doubleRounds` double rounds (4 = Salsa20/8, 10 = Salsa20/20). `output` may equal `input`.
@usableFromInline
func salsa20Core(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, doubleRounds: Int) {
    Salsa20State(standard: input).core(doubleRounds: doubleRounds).store(standard: output)
}
