// Poly1305 (Bernstein; RFC 8439 §2.5): a one-time authenticator over GF(2^130 - 5).
//
// Arithmetic in radix 2^64: the accumulator h = h0 + h1·2^64 + h2·2^128 with h2 small, the clamped
// key r = r0 + r1·2^64. Because r1 is a multiple of 4 (clamping), h1·r1·2^128 = h1·(r1/4)·2^130
// ≡ h1·(5·r1/4) (mod p), so with s1 = r1 + r1/4 one block costs four 64×64→128-bit products and two
// small ones (the structure of OpenSSL's scalar x86_64 code):
//
//     d0 = h0·r0 + h1·s1                       < 2^128 + 2^126
//     d1 = h0·r1 + h1·r0 + h2·s1               (h2 ≤ 7, so h2·s1 < 2^65; d1 < 2^129 + 2^65)
//     d2 = h2·r0                               < 2^63
//
// then carries d0 → d1 → d2 and folds everything above bit 130 back times 5. After each block
// h < 2^130 + 2^66 (h2 ≤ 4), so h + m + 2^128 keeps h2 ≤ 7 and nothing overflows. Everything is
// branch-free and the data never selects a memory address.

internal import RampartKernelSupport

/// The Poly1305 state, for use inside Rampart (one-shot paths keep it on the stack and wipe it).
@usableFromInline
struct Poly1305State {
    var r0: UInt64, r1: UInt64, s1: UInt64
    var h0: UInt64 = 0, h1: UInt64 = 0, h2: UInt64 = 0
    /// The second key half s (added at the end).
    var pad0: UInt64, pad1: UInt64
    /// A partial block and how many of its bytes are filled.
    var pendingBlock: SIMD16<UInt8> = .zero
    var pendingCount: Int = 0
    /// The backend whose `poly1305` implementation takes runs of ``poly1305WideMinimumBlocks`` blocks
    /// and more (looked up on the long runs only, off the short messages' path; `Backend.portable`
    /// keeps every block on the portable code).
    let backend: Backend

    /// Starts with a 32-byte one-time key `r || s` on `backend`.
    init(key k: UnsafeRawPointer, backend: Backend) {
        self.backend = backend
        r0 = k.loadLE64(0) & 0x0fff_fffc_0fff_ffff
        r1 = k.loadLE64(8) & 0x0fff_fffc_0fff_fffc
        s1 = r1 &+ (r1 >> 2)
        pad0 = k.loadLE64(16)
        pad1 = k.loadLE64(24)
    }

    /// Absorbs `count` bytes.
    mutating func update(_ p: UnsafeRawPointer, _ count: Int) { absorb(p, count) }

    /// The 16-byte tag of everything absorbed, written to `out`. The state is left unchanged.
    ///
    /// The accumulator is finished in registers: no copy of the state (key included) is made, so
    /// there is none to wipe (only the padded last block, when there is one).
    func finalize(into out: UnsafeMutableRawPointer) {
        var h0 = self.h0, h1 = self.h1, h2 = self.h2
        if pendingCount > 0 {
            // Pad the last block with a 1 byte and zeros; it gets no 2^128 bit.
            var b = pendingBlock
            b[pendingCount] = 1
            for i in (pendingCount + 1)..<16 { b[i] = 0 }
            let w = unsafeBitCast(b, to: SIMD2<UInt64>.self)
            poly1305Block(&h0, &h1, &h2, m0: UInt64(littleEndian: w[0]), m1: UInt64(littleEndian: w[1]), hibit: 0,
                          r0: r0, r1: r1, s1: s1)
            wipe(&b)
        }
        // Full reduction: h < 2^130 + 2^66 here. Compute g = h + 5 - 2^130; take g when it is
        // non-negative (h ≥ p), else h. h - p < p always holds, so one subtraction suffices.
        // First fold h2's bits above 130 (there may be up to 4 in h2: 2^130 ≤ h is possible).
        let c = (h2 >> 2) &* 5
        h2 &= 3
        var o: UInt64
        (h0, o) = adc(h0, c, 0)
        (h1, o) = adc(h1, 0, o)
        h2 &+= o
        var g0: UInt64, g1: UInt64
        (g0, o) = adc(h0, 5, 0)
        (g1, o) = adc(h1, 0, o)
        let g2 = h2 &+ o
        // g2 ≥ 4 exactly when h ≥ p: mask = all-ones then.
        let mask = 0 &- (g2 >> 2)
        h0 = (h0 & ~mask) | (g0 & mask)
        h1 = (h1 & ~mask) | (g1 & mask)
        // tag = (h + s) mod 2^128
        (h0, o) = adc(h0, pad0, 0)
        h1 = h1 &+ pad1 &+ o
        out.storeLE64(h0, 0)
        out.storeLE64(h1, 8)
    }
}

extension Poly1305State {
    /// Hands the accumulator and key to a stitched kernel as six words (r0, r1, s1, h0, h1, h2)
    /// and takes the accumulator back. There must be no partial block buffered.
    mutating func stitched(_ x: inout SIMD16<UInt32>,
                           _ body: (UnsafeMutableRawPointer, UnsafeMutablePointer<UInt64>) -> Void) {
        var words = SIMD8<UInt64>(r0, r1, s1, h0, h1, h2, 0, 0)
        withUnsafeMutableBytes(of: &x) { xs in
            withUnsafeMutableBytes(of: &words) { w in body(xs.baseAddress!, w.baseAddress!.assumingMemoryBound(to: UInt64.self)) }
        }
        h0 = words[3]; h1 = words[4]; h2 = words[5]
        wipe(&words)
    }
}

extension Poly1305State: BlockAbsorbing {
    static var absorbBlockSize: Int { 16 }
    static var holdsBackFullBlock: Bool { false }
    mutating func compressBlocks(_ blocks: UnsafeRawPointer, _ count: Int) {
        if count >= poly1305WideMinimumBlocks && backend != .portable {
            poly1305BlocksWide(&self, blocks, count, Registries.poly1305.implementation(for: backend))
        } else {
            poly1305Blocks(&self, blocks, count, 1)
        }
    }
}

/// Absorbs `count` full blocks: whole groups (eight or four blocks) in `impl` when it is a kernel
/// (the `poly1305` registry's), the rest in ``poly1305Blocks``. Out of line, so that the short
/// messages' path keeps its small frame.
@inline(never)
func poly1305BlocksWide(_ st: inout Poly1305State, _ blocks: UnsafeRawPointer, _ count: Int,
                        _ impl: any Poly1305Implementation.Type) {
    let groups = count / impl.groupBlocks
    guard impl.isKernel, groups > 0 else {
        poly1305Blocks(&st, blocks, count, 1)
        return
    }
    var words = SIMD8<UInt64>(st.r0, st.r1, st.s1, st.h0, st.h1, st.h2, 0, 0)
    withUnsafeMutableBytes(of: &words) { w in impl.blocks(w.baseAddress!.assumingMemoryBound(to: UInt64.self), blocks, groups) }
    st.h0 = words[3]; st.h1 = words[4]; st.h2 = words[5]
    wipe(&words)
    let done = groups * impl.groupBlocks
    if done < count { poly1305Blocks(&st, blocks + 16 * done, count - done, 1) }
}

/// The shortest run of blocks handed to the wide kernel: below it, computing the key's powers and
/// summing the lanes costs more than the scalar blocks save (for the AVX2 kernel, 512-byte messages
/// are level with the scalar code: 4.34 GB/s each). Measured on Zen 5 (`rampart-bench --filter
/// poly1305` with extra sizes): 256-byte messages 4.0 GB/s scalar against 3.2 through the kernel,
/// 384-byte ones 4.2 against 4.3, 512-byte ones 4.4 against 5.7.
let poly1305WideMinimumBlocks = 32

/// `a + b + carry`, returning the sum and the carry out (0 or 1).
@inline(__always) func adc(_ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) { poly1305AddWithCarry(a, b, carry) }

/// Absorbs `count` 16-byte blocks, each with `hibit` (1 for full blocks, 0 for the padded last one)
/// at bit 128.
@inline(never)
func poly1305Blocks(_ st: inout Poly1305State, _ p: UnsafeRawPointer, _ count: Int, _ hibit: UInt64) {
    let r0 = st.r0, r1 = st.r1, s1 = st.s1
    var h0 = st.h0, h1 = st.h1, h2 = st.h2
    var p = p
    var n = count
    while n > 0 {
        poly1305Block(&h0, &h1, &h2, m0: p.loadLE64(0), m1: p.loadLE64(8), hibit: hibit, r0: r0, r1: r1, s1: s1)
        p += 16
        n &-= 1
    }
    st.h0 = h0; st.h1 = h1; st.h2 = h2
}

/// Poly1305 (RFC 8439 §2.5), NaCl's `crypto_onetimeauth`: a 16-byte authenticator under a 32-byte
/// one-time key.
///
/// ```swift
/// let tag = try Poly1305.authenticationCode(for: message, using: oneTimeKey)
/// var mac = try Poly1305(key: oneTimeKey); mac.update(data: part1); mac.update(data: part2)
/// let same = mac.finalize()
/// ```
///
/// - Important: a Poly1305 key must authenticate **one** message only. Two tags under the same key
///   let an attacker forge. Derive the key per message (as ``SecretBox`` does from its keystream).
///
/// The key and the running state are wiped when the last copy of the value is released.
public struct Poly1305 {
    /// Key size in bytes (32).
    public static let keyByteCount = 32
    /// Tag size in bytes (16).
    public static let tagByteCount = 16

    /// A Poly1305 tag. Equality is constant time.
    public struct Tag: Hashable, Sequence, CustomStringConvertible, Sendable {
        @usableFromInline var storage: SIMD16<UInt8>
        /// The tag's bytes.
        public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
        /// Lowercase hexadecimal.
        public var description: String { Hex.encode(bytes) }
        public func makeIterator() -> Array<UInt8>.Iterator { bytes.makeIterator() }
        /// Calls `body` with the tag's 16 bytes.
        @inlinable
        public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
            var s = storage
            return try Swift.withUnsafeBytes(of: &s) { (b) throws(E) -> R in try body(b) }
        }
        /// Constant-time comparison.
        public static func == (a: Tag, b: Tag) -> Bool {
            let d = unsafeBitCast(a.storage ^ b.storage, to: SIMD2<UInt64>.self)
            return ConstantTime.isZeroMask(d[0] | d[1]) != 0
        }
        public func hash(into h: inout Hasher) { h.combine(bytes) }
        /// Compares with raw tag bytes in constant time; a wrong length is unequal.
        public func constantTimeEquals<C: Collection<UInt8>>(_ other: C) -> Bool {
            withUnsafeBytes { a in withContiguousBytes(other) { b in ConstantTime.equals(a, b) } }
        }
    }

    final class Storage {
        var state: Poly1305State
        init(_ s: Poly1305State) { state = s }
        deinit { wipe(&state) }
    }

    var storage: Storage

    /// Starts a computation under a 32-byte one-time key.
    ///
    /// - Throws: ``RampartError/invalidKeyLength`` unless the key has 32 bytes.
    public init(key: SymmetricKey) throws(RampartError) {
        storage = Storage(try withKey32(key) { Poly1305State(key: $0, backend: key.backend) })
    }

    /// Absorbs message bytes.
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        guard let p = bufferPointer.baseAddress, bufferPointer.count > 0 else { return }
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.state) }
        storage.state.update(p, bufferPointer.count)
    }

    /// Absorbs message bytes.
    public mutating func update<D: Collection<UInt8>>(data: D) {
        withContiguousBytes(data) { update(bufferPointer: $0) }
    }

    /// The tag of everything absorbed so far (the state is left unchanged).
    public func finalize() -> Tag {
        var t = SIMD16<UInt8>()
        withUnsafeMutableBytes(of: &t) { storage.state.finalize(into: $0.baseAddress!) }
        return Tag(storage: t)
    }

    /// The tag of `data` under the one-time `key`.
    ///
    /// - Throws: ``RampartError/invalidKeyLength`` unless the key has 32 bytes.
    @_specialize(where D == [UInt8])
    @_specialize(where D == UnsafeRawBufferPointer)
    public static func authenticationCode<D: Collection<UInt8>>(for data: D, using key: SymmetricKey) throws(RampartError) -> Tag {
        var st = try withKey32(key) { Poly1305State(key: $0, backend: key.backend) }
        withContiguousBytes(data) { d in
            if let p = d.baseAddress, d.count > 0 { st.update(p, d.count) }
        }
        return tag(consuming: &st)
    }

    /// The tag of a state that has absorbed the whole message; the state is wiped.
    private static func tag(consuming st: inout Poly1305State) -> Tag {
        var t = SIMD16<UInt8>()
        withUnsafeMutableBytes(of: &t) { st.finalize(into: $0.baseAddress!) }
        wipe(&st)
        return Tag(storage: t)
    }

    /// Checks raw tag bytes against `data` and the one-time `key` in constant time. A tag of the
    /// wrong length is invalid.
    ///
    /// - Throws: ``RampartError/invalidKeyLength`` unless the key has 32 bytes.
    public static func isValidAuthenticationCode<C: Collection<UInt8>, D: Collection<UInt8>>(
        _ tag: C, authenticating data: D, using key: SymmetricKey
    ) throws(RampartError) -> Bool {
        try authenticationCode(for: data, using: key).constantTimeEquals(tag)
    }
}
