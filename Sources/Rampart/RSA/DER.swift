// Strict DER (the subset RSA keys need: SEQUENCE, INTEGER, NULL, OBJECT IDENTIFIER, BIT STRING).
// Everything is rejected that a canonical encoder would not produce: long-form lengths below 128 or
// with leading zero bytes, indefinite lengths, integers with redundant leading bytes, trailing bytes.
// PEM armour is in PEM.swift.
//
// A private key's DER is secret as a whole, and the reader treats it so (issue 36; the ctgrind cases
// rsa-private-pem and rsa-private-der mark every byte). What it makes public, each at a commented
// `declassified` point: the tags and length octets (the structure: every key of a size has the same
// one, give or take a byte per integer), the content of the public INTEGERs (the version, n, e), a
// PKCS#8 wrapper's algorithm identifier, and for each secret INTEGER whether its encoding is valid. The secret INTEGERs (d, p, q, dp, dq, qinv)
// are read at the fixed width their length gives (`secretInteger()`): no leading byte is stripped,
// no branch or address follows their values.

/// A reader over DER bytes.
struct DERReader {
    let bytes: [UInt8]
    var offset: Int
    let end: Int

    init(_ bytes: [UInt8]) { self.bytes = bytes; offset = 0; end = bytes.count }
    private init(_ bytes: [UInt8], _ start: Int, _ end: Int) { self.bytes = bytes; offset = start; self.end = end }

    var isAtEnd: Bool { offset == end }

    /// Reads one element with tag `tag`; returns a reader over its contents.
    ///
    /// Public by design (declassified here): the tag and the length octets. They are the structure of
    /// the encoding, the same for every key of a size except the length of an integer that happens to
    /// need a byte less; the content stays as secret as the caller's bytes were.
    mutating func element(_ tag: UInt8) throws(RampartError) -> DERReader {
        guard offset < end else { throw .invalidDER(.truncated) }
        guard declassified(bytes[offset]) == tag else { throw .invalidDER(.unexpectedTag) }
        offset += 1
        guard offset < end else { throw .invalidDER(.truncated) }
        let first = declassified(bytes[offset])
        offset += 1
        var length: Int
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count != 0 else { throw .invalidDER(.nonMinimalLength) }  // indefinite form
            guard count <= 4 else { throw .invalidDER(.lengthTooLarge) }
            guard end - offset >= count else { throw .invalidDER(.truncated) }
            guard declassified(bytes[offset]) != 0 else { throw .invalidDER(.nonMinimalLength) }
            length = 0
            for k in 0..<count { length = length << 8 | Int(declassified(bytes[offset + k])) }
            offset += count
            guard length >= 0x80 else { throw .invalidDER(.nonMinimalLength) }
        }
        guard end - offset >= length else { throw .invalidDER(.truncated) }
        let inner = DERReader(bytes, offset, offset + length)
        offset += length
        return inner
    }

    /// The remaining bytes.
    var rest: ArraySlice<UInt8> { bytes[offset..<end] }

    /// A positive INTEGER that is public (a modulus, a public exponent).
    ///
    /// Public by design (declassified here): the content octets, which a private key's DER carries
    /// next to the secrets (n and e are the public half of the key).
    mutating func positiveInteger() throws(RampartError) -> BigUInt {
        let v = try integerBytes(declassifying: true)
        guard v.first.map({ $0 & 0x80 == 0 }) ?? false else { throw .invalidDER(.negativeInteger) }
        let value = BigUInt(bigEndian: v)
        guard !value.isZero else { throw .invalidDER(.zeroInteger) }
        return value
    }

    /// A non-negative INTEGER that fits in an Int (versions; public, declassified as in
    /// ``positiveInteger()``).
    mutating func smallInteger() throws(RampartError) -> Int {
        let v = try integerBytes(declassifying: true)
        guard v.count <= 4, v[v.startIndex] & 0x80 == 0 else { throw .invalidDER(.unsupported) }
        return v.reduce(0) { $0 << 8 | Int($1) }
    }

    /// The content octets of an INTEGER, checked to be minimal; declassified first when asked.
    private mutating func integerBytes(declassifying: Bool) throws(RampartError) -> ArraySlice<UInt8> {
        let r = try element(0x02)
        let v = r.rest
        guard !v.isEmpty else { throw .invalidDER(.truncated) }
        if declassifying { v.withUnsafeBytes { declassify($0.baseAddress!, $0.count) } }
        if v.count > 1 {
            let b0 = v[v.startIndex], b1 = v[v.startIndex + 1]
            if (b0 == 0 && b1 & 0x80 == 0) || (b0 == 0xFF && b1 & 0x80 != 0) { throw .invalidDER(.nonMinimalInteger) }
        }
        return v
    }

    /// A positive INTEGER that is secret (d, p, q, dp, dq, qinv of a private key), as
    /// `⌈length / 8⌉` limbs, least significant first: the width follows from the content length
    /// (public, like every DER length), and a leading zero byte is read like any other byte, so no
    /// branch and no address depends on the value.
    ///
    /// The checks of ``positiveInteger()`` (minimal encoding, not negative, not zero) are computed
    /// with masks over the value and give one status. Public by design (declassified here): that
    /// status, zero for every well-formed key, so that a malformed one is refused with the same
    /// error as before.
    mutating func secretInteger() throws(RampartError) -> [UInt64] {
        let r = try element(0x02)
        let v = r.rest
        guard !v.isEmpty else { throw .invalidDER(.truncated) }
        let (limbs, status) = v.withUnsafeBytes { raw -> ([UInt64], UInt64) in
            let l = LimbMath.limbs(bigEndianFixed: raw)
            @inline(__always) func equal(_ a: UInt8, _ b: UInt8) -> UInt64 { ConstantTime.isZeroMask(UInt64(a ^ b)) }
            @inline(__always) func highBit(_ a: UInt8) -> UInt64 { 0 &- UInt64(a >> 7) }
            let b0 = raw[0]
            // 00 followed by a byte below 80, or FF followed by a byte from 80: a redundant first byte.
            var nonMinimal: UInt64 = 0
            if raw.count > 1 {
                let b1 = raw[1]
                nonMinimal = (equal(b0, 0) & ~highBit(b1)) | (equal(b0, 0xFF) & highBit(b1))
            }
            let negative = highBit(b0)
            var any: UInt64 = 0
            for x in l { any |= x }
            let zero = ConstantTime.isZeroMask(any)
            // The first failing check, in the order positiveInteger() makes them.
            return (l, (nonMinimal & 1) | (~nonMinimal & negative & 2) | (~nonMinimal & ~negative & zero & 3))
        }
        let verdict = declassified(status)
        if verdict == 0 { return limbs }
        var l = limbs
        l.secureWipe()
        switch verdict {
        case 1: throw .invalidDER(.nonMinimalInteger)
        case 2: throw .invalidDER(.negativeInteger)
        default: throw .invalidDER(.zeroInteger)
        }
    }

    /// The AlgorithmIdentifier of rsaEncryption (OID 1.2.840.113549.1.1.1, parameters NULL), as
    /// SubjectPublicKeyInfo and PKCS#8 carry it.
    ///
    /// Public by design (declassified here): the OID's content octets, which name the algorithm
    /// (in a PKCS#8 private key they are the same for every RSA key).
    mutating func rsaAlgorithmIdentifier() throws(RampartError) {
        var alg = try element(0x30)
        var oid = try alg.element(0x06)
        let content = oid.rest
        content.withUnsafeBytes { if let b = $0.baseAddress { declassify(b, $0.count) } }
        guard content.elementsEqual([0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]) else { throw .invalidDER(.unsupported) }
        oid.offset = oid.end
        let null = try alg.element(0x05)
        guard null.isAtEnd else { throw .invalidDER(.unsupported) }
        try alg.finish()
    }

    /// Throws unless every byte was consumed.
    func finish() throws(RampartError) {
        guard isAtEnd else { throw .invalidDER(.trailingData) }
    }
}

/// A DER writer (definite minimal lengths).
@_spi(Testing) public enum DERWriter {
    static func length(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        var b: [UInt8] = []
        var v = n
        while v > 0 { b.insert(UInt8(v & 0xFF), at: 0); v >>= 8 }
        return [0x80 | UInt8(b.count)] + b
    }

    /// One element: tag, minimal length, content.
    public static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag] + length(content.count) + content }

    /// A SEQUENCE of the encoded parts.
    public static func sequence(_ parts: [[UInt8]]) -> [UInt8] { element(0x30, parts.flatMap { $0 }) }

    /// A non-negative INTEGER holding a secret: the intermediate bytes are wiped (the returned
    /// encoding is the caller's to wipe).
    static func secretInteger(_ v: BigUInt) -> [UInt8] {
        var raw = v.bigEndianBytes()
        var b = [UInt8]()
        b.reserveCapacity(raw.count + 1)   // no reallocation: no stray copy of the secret
        if raw.isEmpty || raw[0] & 0x80 != 0 { b.append(0) }
        b.append(contentsOf: raw)
        defer { raw.secureWipe(); b.secureWipe() }
        return element(0x02, b)
    }

    /// A SEQUENCE of parts that hold secrets, assembled in one allocation (no stray copies).
    static func secretSequence(_ parts: [[UInt8]]) -> [UInt8] {
        var content = [UInt8]()
        content.reserveCapacity(parts.reduce(0) { $0 + $1.count })
        for p in parts { content.append(contentsOf: p) }
        defer { content.secureWipe() }
        return element(0x30, content)
    }

    /// One element whose content is a secret, assembled in one allocation (no stray copies; the
    /// returned encoding is the caller's to wipe).
    static func secretElement(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        let header = [tag] + length(content.count)
        var out = [UInt8]()
        out.reserveCapacity(header.count + content.count)
        out.append(contentsOf: header)
        out.append(contentsOf: content)
        return out
    }

    /// A non-negative INTEGER.
    public static func integer(_ v: BigUInt) -> [UInt8] {
        var b = v.bigEndianBytes()
        if b.isEmpty || b[0] & 0x80 != 0 { b.insert(0, at: 0) }
        return element(0x02, b)
    }
}
