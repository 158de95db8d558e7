// Arbitrary-precision unsigned integers with 64-bit limbs.
//
// `BigUInt` is the general-purpose, *variable-time* integer: its operations take time that depends
// on the values (their limb counts at least). Use it for public values (moduli, public exponents,
// ciphertexts, DH parameters) and for setup. Secret exponents go through `Modulus`'s constant-time
// exponentiation, which works on fixed-width limb buffers (see Montgomery.swift).

/// An arbitrary-precision unsigned integer (64-bit limbs, least significant limb first).
///
/// Every operation is total: subtraction that would go negative, division by zero and a missing
/// modular inverse throw ``RampartError`` instead of trapping. Arithmetic here is variable-time; do
/// not feed it secrets except where a doc comment says otherwise.
public struct BigUInt: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Limbs, least significant first, with no zero limbs at the top (zero has no limbs).
    @usableFromInline internal var limbs: [UInt64]

    /// Zero.
    public init() { limbs = [] }

    /// The value of `v`.
    public init(_ v: UInt64) { limbs = v == 0 ? [] : [v] }

    /// The value of 64-bit limbs `l`, least significant first (zero limbs at the top are dropped).
    public init(limbs l: [UInt64]) {
        limbs = l
        normalize()
    }

    /// The integer whose big-endian magnitude is `bytes` (leading zero bytes are allowed).
    /// No temporary copy of `bytes` is made: leading zero bytes are skipped first, so the limbs are
    /// allocated once at their final count. Skipping them is a branch on each (variable time, like
    /// the rest of `BigUInt`); a secret of a public width is read with
    /// `LimbMath.limbs(bigEndianFixed:)` instead (an RSA private key's numbers, `DERReader.secretInteger()`).
    public init<C: Collection<UInt8>>(bigEndian bytes: C) {
        // Contiguous bytes (arrays, slices of them, Data): eight at a time, no element-wise generic
        // iteration (which, called through a non-specialized generic function such as
        // `RSA.PublicKey.rawPublic`, cost more than the RSA-2048 public operation's arithmetic).
        if let l = bytes.withContiguousStorageIfAvailable({ BigUInt.limbs(bigEndian: UnsafeRawBufferPointer($0)) }) {
            limbs = l
            return
        }
        var start = bytes.startIndex
        while start != bytes.endIndex, bytes[start] == 0 { start = bytes.index(after: start) }
        let digits = bytes[start...]
        let count = digits.count
        var l = [UInt64](repeating: 0, count: (count + 7) / 8)
        var k = count - 1   // byte position of the current byte, from the most significant
        for b in digits {
            l[k >> 3] |= UInt64(b) << (UInt64(k & 7) * 8)
            k -= 1
        }
        limbs = l   // already normalised: its top limb holds a nonzero byte
    }

    /// The normalized limbs of the big-endian magnitude `raw` (leading zero bytes skipped first, so
    /// the limbs are allocated once at their final count and no copy of the bytes is made).
    static func limbs(bigEndian raw: UnsafeRawBufferPointer) -> [UInt64] {
        var start = 0
        while start < raw.count, raw[start] == 0 { start += 1 }
        let count = raw.count - start
        var l = [UInt64](repeating: 0, count: (count + 7) / 8)
        l.withUnsafeMutableBufferPointer { out in
            var hi = raw.count   // limb i holds bytes hi-8..<hi
            for i in 0..<out.count {
                if hi - 8 >= start {
                    out[i] = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: hi - 8, as: UInt64.self))
                } else {
                    var v: UInt64 = 0
                    for j in start..<hi { v = v << 8 | UInt64(raw[j]) }
                    out[i] = v
                }
                hi -= 8
            }
        }
        return l
    }

    /// Parses hexadecimal digits (upper or lower case, any length, optional `0x` prefix).
    ///
    /// - Throws: ``RampartError/invalidEncoding`` for an empty string or a non-hex character.
    public init(hex: some StringProtocol) throws(RampartError) {
        var digits = Array(hex.utf8)
        if digits.count >= 2, digits[0] == 0x30, digits[1] == 0x78 || digits[1] == 0x58 { digits.removeFirst(2) }
        guard !digits.isEmpty else { throw .invalidEncoding }
        var l = [UInt64](repeating: 0, count: (digits.count + 15) / 16)
        var k = 0
        for c in digits.reversed() {
            guard let v = Hex.value(c) else { throw .invalidEncoding }
            l[k >> 4] |= UInt64(v) << (UInt64(k & 15) * 4)
            k += 1
        }
        self.init(limbs: l)
    }

    /// The value of fixed-width limbs that hold a secret (the result of a constant-time
    /// computation): the number of significant limbs is found without a branch on the limbs and is
    /// then declassified, since a returned number's length is public by design (a `BigUInt` has no
    /// other form). The limbs themselves are copied, never inspected.
    init(secretLimbs l: [UInt64]) {
        var count: UInt64 = 0
        for i in 0..<l.count {
            let nonzero = ~ConstantTime.isZeroMaskBarrier(l[i])
            count = ConstantTime.select(nonzero, UInt64(i + 1), count)
        }
        // Public by design: the length of the returned number.
        limbs = Array(l[0..<Int(declassified(count))])
    }

    /// Calls `body` with the bytes of the limbs (for the constant-time checker, which marks them).
    package func withUnsafeLimbBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { limbs.withUnsafeBytes(body) }

    @inlinable internal mutating func normalize() {
        while let last = limbs.last, last == 0 { limbs.removeLast() }
    }

    /// `true` for zero.
    @inlinable public var isZero: Bool { limbs.isEmpty }
    /// `true` when the lowest bit is set.
    @inlinable public var isOdd: Bool { (limbs.first ?? 0) & 1 == 1 }
    /// The number of significant bits (0 for zero).
    @inlinable public var bitWidth: Int {
        guard let top = limbs.last else { return 0 }
        return limbs.count * 64 - top.leadingZeroBitCount
    }
    /// The number of 64-bit limbs in use.
    public var limbCount: Int { limbs.count }

    /// Bit `i` (bit 0 is the least significant); `false` beyond the top.
    @inlinable public func bit(_ i: Int) -> Bool {
        guard i >= 0, i >> 6 < limbs.count else { return false }
        return (limbs[i >> 6] >> UInt64(i & 63)) & 1 == 1
    }

    /// The low 64 bits.
    public var low64: UInt64 { limbs.first ?? 0 }

    /// The minimal big-endian bytes (empty for zero).
    public func bigEndianBytes() -> [UInt8] {
        let n = (bitWidth + 7) / 8
        return (try? bigEndianBytes(count: n)) ?? []
    }

    /// Big-endian bytes left-padded with zeros to exactly `count` bytes.
    ///
    /// - Throws: ``RampartError/invalidOutputLength`` when the value needs more than `count` bytes.
    public func bigEndianBytes(count: Int) throws(RampartError) -> [UInt8] {
        guard count >= 0, (bitWidth + 7) / 8 <= count else { throw .invalidOutputLength }
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { o in
            // Whole limbs as eight big-endian bytes from the end, then the top limb's bytes.
            var k = 0
            while k < limbs.count, count - 8 * (k + 1) >= 0 {
                o.storeBytes(of: limbs[k].bigEndian, toByteOffset: count - 8 * (k + 1), as: UInt64.self)
                k += 1
            }
            var b = 8 * k
            while b < min(count, limbs.count * 8) {
                o[count - 1 - b] = UInt8(truncatingIfNeeded: limbs[b >> 3] >> (UInt64(b & 7) * 8))
                b += 1
            }
        }
        return out
    }

    /// Lowercase hexadecimal without leading zeros (`"0"` for zero).
    public var hexString: String {
        if isZero { return "0" }
        var s = Hex.encode(bigEndianBytes())
        if s.first == "0" { s.removeFirst() }
        return s
    }

    /// Hexadecimal form (``hexString``).
    public var description: String { hexString }

    /// Overwrites the limbs with zeros and makes the value zero (for secrets).
    public mutating func wipe() {
        limbs.withUnsafeMutableBytes { secureZero($0) }
        limbs = []
    }

    // MARK: Comparison

    /// Three-way comparison: -1, 0 or 1.
    @inlinable public static func compare(_ a: BigUInt, _ b: BigUInt) -> Int {
        if a.limbs.count != b.limbs.count { return a.limbs.count < b.limbs.count ? -1 : 1 }
        var i = a.limbs.count - 1
        while i >= 0 {
            if a.limbs[i] != b.limbs[i] { return a.limbs[i] < b.limbs[i] ? -1 : 1 }
            i -= 1
        }
        return 0
    }

    @inlinable public static func < (a: BigUInt, b: BigUInt) -> Bool { compare(a, b) < 0 }

    // MARK: Addition and subtraction

    /// The sum (never overflows).
    public static func + (a: BigUInt, b: BigUInt) -> BigUInt {
        let (long, short) = a.limbs.count >= b.limbs.count ? (a.limbs, b.limbs) : (b.limbs, a.limbs)
        var r = long
        r.append(0)
        var carry: UInt64 = 0
        for i in 0..<long.count {
            let (s1, o1) = r[i].addingReportingOverflow(i < short.count ? short[i] : 0)
            let (s2, o2) = s1.addingReportingOverflow(carry)
            r[i] = s2
            carry = ctBit(o1) &+ ctBit(o2)
        }
        r[long.count] = carry
        return BigUInt(limbs: r)
    }

    /// `a += b`.
    public static func += (a: inout BigUInt, b: BigUInt) { a = a + b }

    /// `a - b` and whether it wrapped (then the value is `a - b + 2^(64·max(limbs))`).
    public func subtractingReportingOverflow(_ b: BigUInt) -> (partialValue: BigUInt, overflow: Bool) {
        let n = Swift.max(limbs.count, b.limbs.count)
        var r = [UInt64](repeating: 0, count: n)
        var borrow: UInt64 = 0
        for i in 0..<n {
            let x = i < limbs.count ? limbs[i] : 0
            let y = i < b.limbs.count ? b.limbs[i] : 0
            let (d1, o1) = x.subtractingReportingOverflow(y)
            let (d2, o2) = d1.subtractingReportingOverflow(borrow)
            r[i] = d2
            borrow = ctBit(o1) &+ ctBit(o2)
        }
        return (BigUInt(limbs: r), borrow != 0)
    }

    /// `a - b`.
    ///
    /// - Throws: ``RampartError/negativeResult`` when `b > a`.
    public static func - (a: BigUInt, b: BigUInt) throws(RampartError) -> BigUInt {
        let (r, o) = a.subtractingReportingOverflow(b)
        if o { throw .negativeResult }
        return r
    }

    /// `self - b` when `b <= self`, else `nil`.
    public func subtracting(_ b: BigUInt) -> BigUInt? {
        let (r, o) = subtractingReportingOverflow(b)
        return o ? nil : r
    }

    /// `self − b` where the caller knows `b ≤ self` by construction (p − 1 for a p above one, the
    /// larger of two compared values minus the smaller): no error to handle and no silent
    /// substitute. A call with `b > self` is a programming error and traps; never pass values whose
    /// order comes unchecked from input.
    public func subtracting(knownSmaller b: BigUInt) -> BigUInt {
        let (r, o) = subtractingReportingOverflow(b)
        precondition(!o, "BigUInt.subtracting(knownSmaller:): the subtrahend is larger")
        return r
    }

    /// `|self − b|`, for either order.
    public func distance(to b: BigUInt) -> BigUInt {
        self >= b ? subtracting(knownSmaller: b) : b.subtracting(knownSmaller: self)
    }

    // MARK: Multiplication

    /// The product (schoolbook; no Karatsuba yet: the 2048-bit hot paths use Montgomery kernels).
    public static func * (a: BigUInt, b: BigUInt) -> BigUInt {
        if a.isZero || b.isZero { return BigUInt() }
        var r = [UInt64](repeating: 0, count: a.limbs.count + b.limbs.count)
        a.limbs.withUnsafeBufferPointer { pa in
            b.limbs.withUnsafeBufferPointer { pb in
                r.withUnsafeMutableBufferPointer { pr in
                    LimbMath.multiply(pr.baseAddress!, pa.baseAddress!, pa.count, pb.baseAddress!, pb.count)
                }
            }
        }
        return BigUInt(limbs: r)
    }

    /// `a *= b`.
    public static func *= (a: inout BigUInt, b: BigUInt) { a = a * b }

    // MARK: Shifts

    /// `a · 2^n` (negative `n` shifts right).
    public static func << (a: BigUInt, n: Int) -> BigUInt {
        if n < 0 { return a >> (n == Int.min ? Int.max : -n) }
        if a.isZero || n == 0 { return a }
        let ls = n / 64, bs = UInt64(n % 64)
        var r = [UInt64](repeating: 0, count: a.limbs.count + ls + 1)
        for i in 0..<a.limbs.count {
            r[i + ls] |= a.limbs[i] << bs
            if bs != 0 { r[i + ls + 1] = a.limbs[i] >> (64 - bs) }
        }
        return BigUInt(limbs: r)
    }

    /// `⌊a / 2^n⌋` (negative `n` shifts left).
    public static func >> (a: BigUInt, n: Int) -> BigUInt {
        if n < 0 { return a << (n == Int.min ? Int.max : -n) }
        let ls = n / 64, bs = UInt64(n % 64)
        if ls >= a.limbs.count { return BigUInt() }
        var r = [UInt64](repeating: 0, count: a.limbs.count - ls)
        for i in 0..<r.count {
            var v = a.limbs[i + ls] >> bs
            if bs != 0, i + ls + 1 < a.limbs.count { v |= a.limbs[i + ls + 1] << (64 - bs) }
            r[i] = v
        }
        return BigUInt(limbs: r)
    }

    /// The number of trailing zero bits (0 for zero).
    public var trailingZeroBitCount: Int {
        for (i, l) in limbs.enumerated() where l != 0 { return i * 64 + l.trailingZeroBitCount }
        return 0
    }

    // MARK: Division

    /// Quotient and remainder (Knuth, TAOCP vol. 2, algorithm 4.3.1 D).
    ///
    /// - Throws: ``RampartError/divisionByZero`` when `divisor` is zero.
    public func quotientAndRemainder(dividingBy divisor: BigUInt) throws(RampartError) -> (quotient: BigUInt, remainder: BigUInt) {
        guard !divisor.isZero else { throw .divisionByZero }
        if self < divisor { return (BigUInt(), self) }
        if divisor.limbs.count == 1 {
            let (q, r) = divided(bySmall: divisor.limbs[0])
            return (q, BigUInt(r))
        }
        let (q, r) = LimbMath.divide(limbs, divisor.limbs)
        return (BigUInt(limbs: q), BigUInt(limbs: r))
    }

    /// `self mod m`.
    ///
    /// - Throws: ``RampartError/divisionByZero`` when `m` is zero.
    public func remainder(dividingBy m: BigUInt) throws(RampartError) -> BigUInt {
        try quotientAndRemainder(dividingBy: m).remainder
    }

    /// `self / d` and `self mod d` for a one-limb divisor `d > 0`.
    internal func divided(bySmall d: UInt64) -> (BigUInt, UInt64) {
        var q = [UInt64](repeating: 0, count: limbs.count)
        var r: UInt64 = 0
        var i = limbs.count - 1
        while i >= 0 {
            let (qq, rr) = d.dividingFullWidth((r, limbs[i]))
            q[i] = qq
            r = rr
            i -= 1
        }
        return (BigUInt(limbs: q), r)
    }

    /// `self mod d` for `d > 0` (0 for `d == 0`).
    public func remainder(dividingByWord d: UInt64) -> UInt64 {
        guard d != 0 else { return 0 }
        var r: UInt64 = 0
        var i = limbs.count - 1
        while i >= 0 {
            r = d.dividingFullWidth((r, limbs[i])).remainder
            i -= 1
        }
        return r
    }

    // MARK: Number theory

    /// The greatest common divisor (binary GCD; `gcd(0, b) = b`).
    public static func gcd(_ a: BigUInt, _ b: BigUInt) -> BigUInt {
        if a.isZero { return b }
        if b.isZero { return a }
        var u = a, v = b
        let shift = Swift.min(u.trailingZeroBitCount, v.trailingZeroBitCount)
        u = u >> u.trailingZeroBitCount
        while !v.isZero {
            v = v >> v.trailingZeroBitCount
            if u > v { swap(&u, &v) }
            v = v.subtracting(knownSmaller: u)  // u ≤ v after the swap
        }
        return u << shift
    }

    /// The inverse of `self` modulo `m`: the `x` in `[0, m)` with `self · x ≡ 1 (mod m)`.
    ///
    /// Variable-time (extended Euclid); do not use on secrets where timing matters.
    /// - Throws: ``RampartError/noInverse`` when `gcd(self, m) ≠ 1` or `m ≤ 1`.
    public func inverse(modulo m: BigUInt) throws(RampartError) -> BigUInt {
        guard m > BigUInt(1) else { throw .noInverse }
        // Extended Euclid with non-negative coefficients tracked as (value, sign).
        var r0 = m, r1 = try remainder(dividingBy: m)
        var t0 = BigUInt(), t1 = BigUInt(1)
        var s0 = false, s1 = false  // sign flags: true = negative
        while !r1.isZero {
            let (q, r2) = try r0.quotientAndRemainder(dividingBy: r1)
            // t2 = t0 - q * t1 (signed)
            let qt = q * t1
            var t2: BigUInt, s2: Bool
            if s0 == s1 {
                // t0 and q*t1 have the same sign: difference
                if t0 >= qt { t2 = t0.subtracting(knownSmaller: qt); s2 = s0 } else { t2 = qt.subtracting(knownSmaller: t0); s2 = !s0 }
            } else {
                t2 = t0 + qt; s2 = s0
            }
            if t2.isZero { s2 = false }
            r0 = r1; r1 = r2
            t0 = t1; s0 = s1
            t1 = t2; s1 = s2
        }
        guard r0 == BigUInt(1) else { throw .noInverse }
        let t = try t0.remainder(dividingBy: m)
        if s0 && !t.isZero { return m.subtracting(knownSmaller: t) }  // t < m
        return t
    }

    /// `self^exponent mod m` for public values (variable time). `m` may be even.
    ///
    /// - Throws: ``RampartError/divisionByZero`` when `m` is zero.
    public func power(_ exponent: BigUInt, modulo m: BigUInt) throws(RampartError) -> BigUInt {
        guard !m.isZero else { throw .divisionByZero }
        if m == BigUInt(1) { return BigUInt() }
        if m.isOdd {
            let mod = try Modulus(m)
            return mod.publicPower(self, exponent)
        }
        var result = BigUInt(1)
        var base = try remainder(dividingBy: m)
        var i = exponent.bitWidth - 1
        while i >= 0 {
            result = try (result * result).remainder(dividingBy: m)
            if exponent.bit(i) { result = try (result * base).remainder(dividingBy: m) }
            i -= 1
        }
        base.wipe()
        return result
    }

    // MARK: Random values

    /// A uniformly random value in `[0, bound)` from `rng` (rejection sampling).
    ///
    /// - Throws: ``RampartError/invalidParameter(_:)`` when `bound` is zero.
    public static func random<R: RandomNumberGenerator>(below bound: BigUInt, using rng: inout R) throws(RampartError) -> BigUInt {
        guard !bound.isZero else { throw .invalidParameter("bound") }
        let bits = bound.bitWidth
        while true {
            let r = random(bits: bits, using: &rng)
            if r < bound { return r }
        }
    }

    /// A uniformly random value of at most `bits` bits.
    public static func random<R: RandomNumberGenerator>(bits: Int, using rng: inout R) -> BigUInt {
        guard bits > 0 else { return BigUInt() }
        let n = (bits + 63) / 64
        var l = (0..<n).map { _ in rng.next() }
        let extra = n * 64 - bits
        if extra > 0 { l[n - 1] &= UInt64.max >> UInt64(extra) }
        return BigUInt(limbs: l)
    }
}

/// Limb-array kernels shared by `BigUInt` and `Modulus`. Loops have fixed trip counts given the
/// lengths; nothing here branches on limb values except the division's correction steps.
@usableFromInline
enum LimbMath {
    /// `r[0..<an+bn] = a · b` (schoolbook). `r` must not alias the inputs.
    @inlinable
    static func multiply(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ an: Int,
                         _ b: UnsafePointer<UInt64>, _ bn: Int) {
        r.update(repeating: 0, count: an + bn)
        for i in 0..<bn {
            let bi = b[i]
            var carry: UInt64 = 0
            for j in 0..<an {
                let p = a[j].multipliedFullWidth(by: bi)
                let (s1, o1) = p.low.addingReportingOverflow(r[i + j])
                let (s2, o2) = s1.addingReportingOverflow(carry)
                r[i + j] = s2
                carry = p.high &+ ctBit(o1) &+ ctBit(o2)
            }
            r[i + an] = carry
        }
    }

    /// The low `count` bytes of the little-endian limbs `l`, big-endian (left-padded with zeros when
    /// the limbs are shorter): fixed positions, no branch on the values.
    static func bigEndianBytes(_ l: [UInt64], count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        for k in 0..<min(count, l.count * 8) {
            out[count - 1 - k] = UInt8(truncatingIfNeeded: l[k >> 3] >> (UInt64(k & 7) * 8))
        }
        return out
    }

    /// Knuth D: `u / v` with `v.count ≥ 2`, `v` normalised (top limb nonzero), `u ≥ v`.
    static func divide(_ u: [UInt64], _ v: [UInt64]) -> ([UInt64], [UInt64]) {
        let n = v.count, m = u.count - n
        let s = UInt64(v[n - 1].leadingZeroBitCount)
        var vn = [UInt64](repeating: 0, count: n)
        for i in stride(from: n - 1, to: 0, by: -1) {
            vn[i] = (v[i] << s) | (s == 0 ? 0 : v[i - 1] >> (64 - s))
        }
        vn[0] = v[0] << s
        var un = [UInt64](repeating: 0, count: u.count + 1)
        un[u.count] = s == 0 ? 0 : u[u.count - 1] >> (64 - s)
        for i in stride(from: u.count - 1, to: 0, by: -1) {
            un[i] = (u[i] << s) | (s == 0 ? 0 : u[i - 1] >> (64 - s))
        }
        un[0] = u[0] << s
        // The normalised copies may hold a secret operand (an RSA prime as a divisor): wiped.
        defer {
            un.withUnsafeMutableBytes { secureZero($0) }
            vn.withUnsafeMutableBytes { secureZero($0) }
        }
        var q = [UInt64](repeating: 0, count: m + 1)
        let vTop = vn[n - 1], vNext = vn[n - 2]
        var j = m
        while j >= 0 {
            let ujn = un[j + n], ujn1 = un[j + n - 1], ujn2 = un[j + n - 2]
            var qhat: UInt64, rhat: UInt64
            var rhatOverflow = false
            if ujn >= vTop {
                // ujn == vTop (ujn > vTop cannot happen): qhat = b - 1, rhat = ujn1 + vTop.
                qhat = UInt64.max
                (rhat, rhatOverflow) = ujn1.addingReportingOverflow(vTop)
            } else {
                (qhat, rhat) = vTop.dividingFullWidth((ujn, ujn1))
            }
            while !rhatOverflow {
                let p = qhat.multipliedFullWidth(by: vNext)
                if p.high > rhat || (p.high == rhat && p.low > ujn2) {
                    qhat &-= 1
                    (rhat, rhatOverflow) = rhat.addingReportingOverflow(vTop)
                } else { break }
            }
            // un[j...j+n] -= qhat · vn
            var borrow: UInt64 = 0, carry: UInt64 = 0
            for i in 0..<n {
                let p = qhat.multipliedFullWidth(by: vn[i])
                let (plo, c1) = p.low.addingReportingOverflow(carry)
                carry = p.high &+ ctBit(c1)
                let (t1, b1) = un[i + j].subtractingReportingOverflow(plo)
                let (t2, b2) = t1.subtractingReportingOverflow(borrow)
                un[i + j] = t2
                borrow = ctBit(b1) &+ ctBit(b2)
            }
            let (t1, b1) = un[j + n].subtractingReportingOverflow(carry)
            let (t2, b2) = t1.subtractingReportingOverflow(borrow)
            un[j + n] = t2
            if b1 || b2 {
                // qhat was one too large: add vn back.
                qhat &-= 1
                var c: UInt64 = 0
                for i in 0..<n {
                    let (s1, o1) = un[i + j].addingReportingOverflow(vn[i])
                    let (s2, o2) = s1.addingReportingOverflow(c)
                    un[i + j] = s2
                    c = ctBit(o1) &+ ctBit(o2)
                }
                un[j + n] &+= c
            }
            q[j] = qhat
            j -= 1
        }
        var r = [UInt64](repeating: 0, count: n)
        for i in 0..<n {
            r[i] = (un[i] >> s) | (s == 0 ? 0 : un[i + 1] << (64 - s))
        }
        return (q, r)
    }
}
