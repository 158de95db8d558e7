// DEFLATE (RFC 1951) decoding: stored, fixed-Huffman and dynamic-Huffman blocks, with every validity
// check of zlib's inflate (over-subscribed and incomplete code sets, code-length repeats without a
// previous length or past the end, literal/length symbols 286–287, distance symbols 30–31, distances
// before the start of the output, NLEN ≠ ~LEN, block type 3). The wrappers, zlib (RFC 1950) and gzip
// (RFC 1952), are in Zlib.swift and Gzip.swift.
//
// Decoding is table-driven: each Huffman code gets a 2^10-entry table indexed by the next 10 input
// bits, whose entry gives the symbol and its code length directly. Codes longer than 10 bits (rare by
// construction: each occurs with probability below 2^-10) fall back to the canonical count/first
// walk of zlib's puff.c. Bits are taken from a 64-bit buffer refilled up to 7 bytes at a time.
//
// Untrusted input: every read is checked against the end of the input, output is produced into a
// buffer that never grows beyond the caller's `maxOutputBytes` (the limit is checked before each
// literal and each copy, so a decompression bomb stops at the limit), and the input is never mutated.

/// An error from decoding DEFLATE, zlib or gzip data. Decoders never trap on any input.
public enum DeflateError: Error, Equatable, Sendable {
    /// The input ends before the stream (or its wrapper's trailer) does.
    case truncated
    /// A block header names block type 3 (reserved).
    case invalidBlockType
    /// A stored block's NLEN is not the one's complement of its LEN.
    case storedLengthMismatch
    /// A dynamic block header is invalid: more than 286 literal/length or 30 distance codes, a
    /// repeat code (16) with no previous length, or repeats running past the number of lengths.
    case invalidCodeLengths
    /// A code-length set assigns more codes than its bit lengths can hold (over-subscribed).
    case overSubscribedCode
    /// A code-length set leaves codes unassigned where DEFLATE does not allow it (any incomplete
    /// code-length code; a literal/length or distance code other than a single one-bit code).
    case incompleteCode
    /// A dynamic block gives the end-of-block symbol (256) no code.
    case missingEndOfBlock
    /// The input holds a bit pattern that is no code, or a literal/length symbol 286–287 or a
    /// distance symbol 30–31.
    case invalidSymbol
    /// A match refers back further than the output produced so far.
    case distanceTooFarBack
    /// The output would exceed the caller's `maxOutputBytes` (the associated value).
    case outputLimitExceeded(Int)
    /// Bytes follow the end of the stream where none are allowed.
    case trailingData
    /// A gzip member does not start with 1F 8B, or a zlib header's check bits are wrong.
    case invalidHeader
    /// The compression method is not 8 (deflate), or a zlib window size is above 32 KiB.
    case unsupportedMethod
    /// A gzip header sets a reserved flag bit (5, 6 or 7), or a zlib header asks for a preset
    /// dictionary (FDICT), which this decoder does not support.
    case unsupportedFlags
    /// A gzip header's CRC16 (FHCRC) does not match the header.
    case headerChecksumMismatch
    /// The CRC-32 (gzip) or Adler-32 (zlib) of the output does not match the trailer.
    case checksumMismatch
    /// A gzip trailer's ISIZE is not the output length modulo 2^32.
    case sizeMismatch
}

/// Raw DEFLATE (RFC 1951) streams, without a zlib or gzip wrapper.
///
/// ```swift
/// let plain = try Deflate.decompress(raw, maxOutputBytes: 1 << 20)
/// ```
///
/// Memory: the output buffer grows by doubling and never beyond `maxOutputBytes`; the returned array
/// is a copy of it, so the peak is at most twice the limit plus about 20 KiB of Huffman tables.
/// Time is linear in the input and output sizes.
public enum Deflate {
    /// Decodes a complete raw DEFLATE stream. Every byte of `data` must belong to the stream (the
    /// unused bits of the final byte must be present but are ignored).
    ///
    /// - Parameters:
    ///   - data: the compressed bytes (not mutated).
    ///   - maxOutputBytes: the most output accepted; more is ``DeflateError/outputLimitExceeded(_:)``,
    ///     raised as soon as a block would produce the first byte past it. Must be ≥ 0.
    /// - Returns: the decompressed bytes.
    /// - Throws: ``DeflateError`` for malformed or truncated input, output over the limit, or
    ///   ``DeflateError/trailingData`` when whole bytes follow the final block.
    public static func decompress<C: Collection<UInt8>>(_ data: C, maxOutputBytes: Int) throws(DeflateError) -> [UInt8] {
        let (out, used, total) = try withBytes(data) { inflate($0, from: 0, maxOutputBytes: maxOutputBytes) }.get()
        guard used == total else { throw .trailingData }
        return out
    }

    /// Decodes the raw DEFLATE stream at the start of `data` and says where it ended, for callers
    /// that know what follows (a wrapper's trailer, another stream).
    ///
    /// - Returns: the decompressed bytes and the number of input bytes the stream occupied (up to and
    ///   including the byte holding its last bit).
    /// - Throws: as ``decompress(_:maxOutputBytes:)``, except that trailing bytes are not an error.
    public static func decompressPrefix<C: Collection<UInt8>>(_ data: C, maxOutputBytes: Int) throws(DeflateError) -> (output: [UInt8], consumed: Int) {
        let (out, used, _) = try withBytes(data) { inflate($0, from: 0, maxOutputBytes: maxOutputBytes) }.get()
        return (out, used)
    }

    /// Runs the inflater over `input[start...]`: the output, the end offset of the stream in `input`,
    /// and `input.count`.
    static func inflate(_ input: UnsafeBufferPointer<UInt8>, from start: Int, maxOutputBytes: Int) -> Result<([UInt8], Int, Int), DeflateError> {
        var inflater = Inflater(input: input, position: start, limit: max(0, maxOutputBytes))
        defer { inflater.release() }
        do throws(DeflateError) {
            try inflater.run()
        } catch {
            return .failure(error)
        }
        return .success((inflater.outputArray(), inflater.consumedEnd, input.count))
    }
}

/// Calls `body` with the bytes of `data` as one contiguous buffer (copying only when `data` has no
/// contiguous storage).
@inline(__always)
func withBytes<C: Collection<UInt8>, R>(_ data: C, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if let r = data.withContiguousStorageIfAvailable(body) { return r }
    return Array(data).withUnsafeBufferPointer(body)
}

// MARK: - Huffman tables

/// A canonical Huffman decoding table (RFC 1951 §3.2.2) for up to 320 symbols.
///
/// `fast[bits & 1023]` is `symbol | length << 16` for codes of at most 10 bits (0 when the next 10
/// bits begin no such code); `count[len]` and `symbols` (sorted by code) serve the slow walk.
struct HuffmanTable {
    static let fastBits = 10
    var fast: [UInt32]
    var count: [UInt16]
    var symbols: [UInt16]
    /// The longest code length in use (0 for an empty code).
    var maxLength = 0

    init() {
        fast = [UInt32](repeating: 0, count: 1 << HuffmanTable.fastBits)
        count = [UInt16](repeating: 0, count: 16)
        symbols = [UInt16](repeating: 0, count: 320)
    }

    /// Kinds of code set, for zlib's completeness rules.
    enum Kind { case codeLengths, litLen, distance, fixed }

    /// Builds the table from code lengths (0 = symbol unused, 1…15).
    ///
    /// Over-subscribed sets are always refused. Incomplete sets are refused for the code-length code
    /// and, for literal/length and distance codes, unless they consist of one code of length 1 (or
    /// none), as zlib allows; `.fixed` (RFC 1951's fixed codes, whose distance code lists 32 symbols
    /// of which 30 are used) skips the completeness check.
    mutating func build(lengths: UnsafeBufferPointer<UInt8>, kind: Kind) throws(DeflateError) {
        for i in 0..<16 { count[i] = 0 }
        for l in lengths { count[Int(l)] += 1 }
        var left = 1
        var maxLen = 0
        for len in 1..<16 {
            left <<= 1
            left -= Int(count[len])
            if left < 0 { throw .overSubscribedCode }
            if count[len] != 0 { maxLen = len }
        }
        maxLength = maxLen
        if left > 0 {
            switch kind {
            case .codeLengths: throw .incompleteCode
            case .litLen, .distance: if maxLen > 1 { throw .incompleteCode }
            case .fixed: break
            }
        }
        // Offsets of each length's first symbol in `symbols`, then canonical codes.
        var offs = [Int](repeating: 0, count: 16)
        for len in 1..<15 { offs[len + 1] = offs[len] + Int(count[len]) }
        var nextCode = [Int](repeating: 0, count: 16)
        var code = 0
        for len in 1..<16 {
            code = (code + (len > 1 ? Int(count[len - 1]) : 0)) << 1   // count[0] counts unused symbols
            nextCode[len] = code
        }
        for i in 0..<fast.count { fast[i] = 0 }
        for (sym, l) in lengths.enumerated() where l != 0 {
            let len = Int(l)
            symbols[offs[len]] = UInt16(sym)
            offs[len] += 1
            let c = nextCode[len]
            nextCode[len] += 1
            guard len <= HuffmanTable.fastBits else { continue }
            // DEFLATE sends codes most-significant bit first: index the table by the reversed code.
            var rev = 0
            for b in 0..<len { rev |= ((c >> b) & 1) << (len - 1 - b) }
            let entry = UInt32(sym) | UInt32(len) << 16
            var i = rev
            while i < (1 << HuffmanTable.fastBits) {
                fast[i] = entry
                i += 1 << len
            }
        }
    }
}

// MARK: - The inflater

/// Length base values and extra bits for symbols 257…285 (RFC 1951 §3.2.5).
private let lengthBase: [UInt16] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                    35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
private let lengthExtra: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                    3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
/// Distance base values and extra bits for symbols 0…29.
private let distBase: [UInt32] = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385,
                                  513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
private let distExtra: [UInt8] = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7,
                                  8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]
/// The order in which a dynamic header sends the code-length code's lengths.
private let codeLengthOrder: [Int] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

/// RFC 1951 §3.2.6's fixed codes, built once.
private let fixedTables: (litLen: HuffmanTable, dist: HuffmanTable) = {
    var lengths = [UInt8](repeating: 8, count: 288)
    for i in 144..<256 { lengths[i] = 9 }
    for i in 256..<280 { lengths[i] = 7 }
    var lit = HuffmanTable()
    var dist = HuffmanTable()
    // Both sets are valid by construction: `try!` cannot fail.
    lengths.withUnsafeBufferPointer { try! lit.build(lengths: $0, kind: .fixed) }
    [UInt8](repeating: 5, count: 32).withUnsafeBufferPointer { try! dist.build(lengths: $0, kind: .fixed) }
    return (lit, dist)
}()

/// The decoding state of one stream: input position and bit buffer, output buffer.
struct Inflater {
    let input: UnsafeBufferPointer<UInt8>
    /// Next input byte to load into `bitBuffer`.
    var position: Int
    /// Unconsumed bits, least significant first; bits at and above `bitCount` are zero.
    var bitBuffer: UInt64 = 0
    var bitCount = 0

    let limit: Int
    var out: UnsafeMutablePointer<UInt8>?
    var outCount = 0
    var outCapacity = 0

    init(input: UnsafeBufferPointer<UInt8>, position: Int, limit: Int) {
        self.input = input
        self.position = position
        self.limit = limit
    }

    /// The offset just past the last input byte the stream used.
    var consumedEnd: Int { position - bitCount / 8 }

    mutating func release() {
        out?.deallocate()
        out = nil
    }

    /// A copy of the output (the buffer itself stays owned by the inflater, which frees it).
    func outputArray() -> [UInt8] {
        guard let out, outCount > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: out, count: outCount))
    }

    // MARK: Bits

    /// Tops the bit buffer up to at least 57 bits, or with all remaining input.
    @inline(__always)
    mutating func refill() {
        guard bitCount <= 56 else { return }
        let n = input.count
        if position + 8 <= n {
            let word = UInt64(littleEndian: UnsafeRawPointer(input.baseAddress! + position).loadUnaligned(as: UInt64.self))
            let take = (63 - bitCount) >> 3          // 1…7 whole bytes fit
            let mask: UInt64 = (1 << UInt64(take * 8)) - 1
            bitBuffer |= (word & mask) << UInt64(bitCount)
            position += take
            bitCount += take * 8
        } else {
            while bitCount <= 56 && position < n {
                bitBuffer |= UInt64(input[position]) << UInt64(bitCount)
                position += 1
                bitCount += 8
            }
        }
    }

    /// Takes `n` (0…32) bits, least significant first.
    @inline(__always)
    mutating func bits(_ n: Int) throws(DeflateError) -> UInt32 {
        if bitCount < n {
            refill()
            if bitCount < n { throw .truncated }
        }
        let v = UInt32(truncatingIfNeeded: bitBuffer & ((1 << UInt64(n)) - 1))
        bitBuffer >>= UInt64(n)
        bitCount -= n
        return v
    }

    /// Decodes one symbol with `table`.
    @inline(__always)
    mutating func decode(_ table: borrowing HuffmanTable) throws(DeflateError) -> Int {
        if bitCount < 15 { refill() }
        let entry = table.fast[Int(truncatingIfNeeded: bitBuffer) & ((1 << HuffmanTable.fastBits) - 1)]
        let len = Int(entry >> 16)
        if len != 0 {
            if len > bitCount { throw .truncated }
            bitBuffer >>= UInt64(len)
            bitCount -= len
            return Int(entry & 0xFFFF)
        }
        return try decodeSlow(table)
    }

    /// The canonical walk (puff.c's `decode`) for codes longer than the fast table, and for bit
    /// patterns that are no code at all.
    mutating func decodeSlow(_ table: borrowing HuffmanTable) throws(DeflateError) -> Int {
        var code = 0, first = 0, index = 0
        var buf = bitBuffer
        // Past the longest code the bits are no code: say so rather than asking for more input.
        for len in stride(from: 1, through: table.maxLength, by: 1) {
            if len > bitCount { throw .truncated }
            code |= Int(buf & 1)
            buf >>= 1
            let count = Int(table.count[len])
            if code - count < first {
                bitBuffer >>= UInt64(len)
                bitCount -= len
                return Int(table.symbols[index + (code - first)])
            }
            index += count
            first += count
            first <<= 1
            code <<= 1
        }
        throw .invalidSymbol
    }

    // MARK: Output

    /// Makes room for `n` more output bytes, or reports the limit.
    @inline(__always)
    mutating func reserve(_ n: Int) throws(DeflateError) {
        if outCount + n > outCapacity { try grow(n) }
    }

    mutating func grow(_ n: Int) throws(DeflateError) {
        let needed = outCount + n
        guard needed <= limit else { throw .outputLimitExceeded(limit) }
        var capacity = max(outCapacity * 2, 32 * 1024, needed)
        capacity = min(capacity, limit)
        let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        if let out {
            fresh.update(from: out, count: outCount)
            out.deallocate()
        }
        out = fresh
        outCapacity = capacity
    }

    // MARK: Blocks

    mutating func run() throws(DeflateError) {
        var last = false
        var litLen = HuffmanTable()
        var dist = HuffmanTable()
        while !last {
            last = try bits(1) == 1
            switch try bits(2) {
            case 0:
                try stored()
            case 1:
                try codes(fixedTables.litLen, fixedTables.dist)
            case 2:
                try dynamicHeader(&litLen, &dist)
                try codes(litLen, dist)
            default:
                throw .invalidBlockType
            }
        }
    }

    /// A stored block (§3.2.4): byte-align, LEN, NLEN, LEN raw bytes.
    mutating func stored() throws(DeflateError) {
        // Drop the partial byte, then hand the whole buffered bytes back to the input.
        bitBuffer >>= UInt64(bitCount & 7)
        bitCount &= ~7
        position -= bitCount / 8
        bitBuffer = 0
        bitCount = 0
        guard input.count - position >= 4 else { throw .truncated }
        let len = Int(input[position]) | Int(input[position + 1]) << 8
        let nlen = Int(input[position + 2]) | Int(input[position + 3]) << 8
        guard len == ~nlen & 0xFFFF else { throw .storedLengthMismatch }
        position += 4
        guard input.count - position >= len else { throw .truncated }
        try reserve(len)
        if len > 0 {
            (out! + outCount).update(from: input.baseAddress! + position, count: len)
        }
        outCount += len
        position += len
    }

    /// A dynamic block's header (§3.2.7): the code-length code, then the literal/length and distance
    /// code lengths.
    mutating func dynamicHeader(_ litLen: inout HuffmanTable, _ dist: inout HuffmanTable) throws(DeflateError) {
        let nlen = Int(try bits(5)) + 257
        let ndist = Int(try bits(5)) + 1
        let ncode = Int(try bits(4)) + 4
        guard nlen <= 286, ndist <= 30 else { throw .invalidCodeLengths }
        var lengths = [UInt8](repeating: 0, count: 320)
        for i in 0..<ncode { lengths[codeLengthOrder[i]] = UInt8(try bits(3)) }
        var lencode = HuffmanTable()
        try lengths.withUnsafeBufferPointer { (b) throws(DeflateError) in
            try lencode.build(lengths: UnsafeBufferPointer(rebasing: b[0..<19]), kind: .codeLengths)
        }
        var index = 0
        while index < nlen + ndist {
            let sym = try decode(lencode)
            if sym < 16 {
                lengths[index] = UInt8(sym)
                index += 1
                continue
            }
            var value: UInt8 = 0
            let repeatCount: Int
            switch sym {
            case 16:
                guard index > 0 else { throw .invalidCodeLengths }
                value = lengths[index - 1]
                repeatCount = 3 + Int(try bits(2))
            case 17:
                repeatCount = 3 + Int(try bits(3))
            default:
                repeatCount = 11 + Int(try bits(7))
            }
            guard index + repeatCount <= nlen + ndist else { throw .invalidCodeLengths }
            for _ in 0..<repeatCount {
                lengths[index] = value
                index += 1
            }
        }
        guard lengths[256] != 0 else { throw .missingEndOfBlock }
        try lengths.withUnsafeBufferPointer { (b) throws(DeflateError) in
            try litLen.build(lengths: UnsafeBufferPointer(rebasing: b[0..<nlen]), kind: .litLen)
            try dist.build(lengths: UnsafeBufferPointer(rebasing: b[nlen..<(nlen + ndist)]), kind: .distance)
        }
    }

    /// The compressed data of a fixed or dynamic block, up to and including end-of-block.
    mutating func codes(_ litLen: borrowing HuffmanTable, _ dist: borrowing HuffmanTable) throws(DeflateError) {
        while true {
            let sym = try decode(litLen)
            if sym < 256 {
                try reserve(1)
                out![outCount] = UInt8(truncatingIfNeeded: sym)
                outCount += 1
                continue
            }
            if sym == 256 { return }
            let li = sym - 257
            guard li < 29 else { throw .invalidSymbol }
            let length = Int(lengthBase[li]) + Int(try bits(Int(lengthExtra[li])))
            let ds = try decode(dist)
            guard ds < 30 else { throw .invalidSymbol }
            let distance = Int(distBase[ds]) + Int(try bits(Int(distExtra[ds])))
            guard distance <= outCount else { throw .distanceTooFarBack }
            try reserve(length)
            let dst = out! + outCount
            let src = dst - distance
            if distance >= length {
                dst.update(from: src, count: length)
            } else {
                // Overlapping copy: the match repeats the last `distance` bytes.
                for i in 0..<length { dst[i] = src[i] }
            }
            outCount += length
        }
    }
}
