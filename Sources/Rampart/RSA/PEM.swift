// PEM armour around DER: `-----BEGIN label-----`, Base64 lines, `-----END label-----`. The Base64 is
// the package's one implementation (RampartEncoding's, constant time in the data).
//
// A private key's PEM text is secret as a whole, and the reader treats it so (issue 36; the ctgrind
// case rsa-private-pem marks every byte of the text). What it makes public, each at a commented
// declassification point: the positions of the line ends and whether a line ends in CR (the layout
// of the text), whether a line starts with five dashes, and then that armour line whole (its label).
// Base64 lines are only copied, at positions the line ends give, and decoded without a branch on
// their characters; whether the Base64 is valid and how much padding it has are public too
// (RampartEncoding's `Base64`).

internal import RampartEncoding

/// PEM armour with strict Base64 bodies.
public enum PEM {
    /// Decodes every PEM block in `text`: its label (`RSA PUBLIC KEY`, `PUBLIC KEY`, ...) and DER.
    ///
    /// Lines may end in LF or CRLF; blank lines and text outside blocks are ignored. The body must be
    /// canonical Base64 (standard alphabet, `=` padding, zero pad bits). The text may hold a secret
    /// (a private key): see the file comment for what the parsing reveals.
    /// - Throws: ``RampartError/invalidDER(_:)`` with `.invalidPEM` for unmatched armour or bad
    ///   Base64, and when there is no block at all.
    public static func decodeAll(_ text: String) throws(RampartError) -> [(label: String, der: [UInt8])] {
        if let r = text.utf8.withContiguousStorageIfAvailable({ decodeAll(UnsafeRawBufferPointer($0)) }) {
            return try r.get()
        }
        var copy = Array(text.utf8)
        defer { copy.secureWipe() }
        return try copy.withUnsafeBytes { decodeAll($0) }.get()
    }

    static func decodeAll(_ text: UnsafeRawBufferPointer) -> Result<[(label: String, der: [UInt8])], RampartError> {
        var out: [(label: String, der: [UInt8])] = []
        var label: [UInt8]? = nil
        // The Base64 of the block being read, in one allocation for the whole text (no reallocation
        // leaves a copy behind), wiped after each block.
        var body = [UInt8]()
        body.reserveCapacity(text.count)
        defer { body.secureWipe() }
        let begin = Array("-----BEGIN ".utf8), end = Array("-----END ".utf8), dashes = Array("-----".utf8)
        func hasPrefix(_ l: UnsafeRawBufferPointer, _ p: [UInt8]) -> Bool { l.count >= p.count && l.prefix(p.count).elementsEqual(p) }

        func line(_ start: Int, _ stop: Int) throws(RampartError) {
            var stop = stop
            // Public by design: whether the line ends in CR (a CRLF line end is layout, not content).
            if stop > start, declassified(ConstantTime.isZeroMask(UInt64(text[stop - 1] ^ 0x0D))) != 0 { stop -= 1 }
            let l = UnsafeRawBufferPointer(rebasing: text[start..<stop])
            // Public by design: whether the line starts with five dashes, i.e. is armour (a Base64
            // line never does), and then the armour line itself (BEGIN or END and the label).
            var armour = false
            if l.count >= 5 {
                var d: UInt64 = 0
                for k in 0..<5 { d |= UInt64(l[k] ^ 0x2D) }
                armour = declassified(ConstantTime.isZeroMask(d)) != 0
                if armour { declassify(l.baseAddress!, l.count) }
            }
            if let lb = label {
                if !armour {
                    body.append(contentsOf: l)   // within the reserved capacity
                    return
                }
                guard hasPrefix(l, end), l.elementsEqual(end + lb + dashes), !body.isEmpty else { throw .invalidDER(.invalidPEM) }
                let der: [UInt8]
                do { der = try Base64.decode(bytes: body) } catch {
                    throw .invalidDER(.invalidPEM)
                }
                out.append((String(decoding: lb, as: UTF8.self), der))
                label = nil
                body.secureWipe()
                body.removeAll(keepingCapacity: true)
            } else if armour, hasPrefix(l, begin) {
                guard l.count > begin.count + dashes.count, l.suffix(dashes.count).elementsEqual(dashes) else {
                    throw .invalidDER(.invalidPEM)
                }
                label = Array(l.dropFirst(begin.count).dropLast(dashes.count))
            } else if armour, hasPrefix(l, end) {
                throw .invalidDER(.invalidPEM)
            }
        }

        do throws(RampartError) {
            try forEachLine(text, line)
            guard label == nil, !out.isEmpty else { throw .invalidDER(.invalidPEM) }
            return .success(out)
        } catch {
            for i in out.indices { out[i].der.secureWipe() }
            return .failure(error)
        }
    }

    /// Calls `body` with the bounds `start..<stop` of every line of `text`, split at LF (the LF
    /// excluded; the piece after the last LF is a line too, empty when the text ends with one).
    ///
    /// The text is read eight bytes at a time and the LF bytes of each word are found with a SWAR
    /// zero-byte test (exact: `(x & 7F…) + 7F…` cannot carry between bytes), without a branch on a
    /// byte. Public by design (declassified here): the mask of LF positions, i.e. where the lines end.
    static func forEachLine(_ text: UnsafeRawBufferPointer,
                            _ body: (_ start: Int, _ stop: Int) throws(RampartError) -> Void) throws(RampartError) {
        let n = text.count
        var start = 0, i = 0
        while i < n {
            var w: UInt64 = 0
            if n - i >= 8 {
                w = UInt64(littleEndian: text.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            } else {
                // Bytes past the end stay zero: 0 ^ 0A is not zero, so they are never an LF.
                for j in 0..<(n - i) { w |= UInt64(text[i + j]) << UInt64(8 * j) }
            }
            let x = w ^ 0x0A0A_0A0A_0A0A_0A0A
            let low7 = (x & 0x7F7F_7F7F_7F7F_7F7F) &+ 0x7F7F_7F7F_7F7F_7F7F
            var lf = declassified(~(low7 | x | 0x7F7F_7F7F_7F7F_7F7F))   // 80 in each LF byte
            while lf != 0 {
                let k = i + lf.trailingZeroBitCount >> 3
                try body(start, k)
                start = k + 1
                lf &= lf &- 1
            }
            i += 8
        }
        try body(start, n)
    }

    /// Wraps DER in PEM armour with 64-character Base64 lines and a final newline. The DER may be a
    /// secret (a private key): it is encoded without tables or branches on its bytes, and the
    /// intermediate copies are wiped (the returned text is the caller's).
    public static func encode(label: String, der: [UInt8]) -> String {
        var b64 = Base64.encodedBytes(der)
        defer { b64.secureWipe() }
        let l = Array(label.utf8)
        var s = [UInt8]()
        s.reserveCapacity(2 * l.count + 32 + b64.count + (b64.count + 63) / 64)   // exact: no reallocation
        defer { s.secureWipe() }
        s += Array("-----BEGIN ".utf8) + l + Array("-----\n".utf8)
        var i = 0
        while i < b64.count {
            let j = min(i + 64, b64.count)
            s.append(contentsOf: b64[i..<j])
            s.append(0x0A)
            i = j
        }
        s += Array("-----END ".utf8) + l + Array("-----\n".utf8)
        return String(decoding: s, as: UTF8.self)
    }

    /// Base64 with padding (RampartEncoding's `Base64`, for the tests and fuzz targets).
    @_spi(Testing) public static func base64Encode(_ d: [UInt8]) -> [UInt8] { Base64.encodedBytes(d) }

    /// Strict Base64 as PEM bodies take it (RampartEncoding's `Base64`; empty text is refused).
    ///
    /// - Throws: ``RampartError/invalidDER(_:)`` with `.invalidPEM`.
    @_spi(Testing) public static func base64Decode(_ s: [UInt8]) throws(RampartError) -> [UInt8] {
        guard !s.isEmpty, let d = try? Base64.decode(bytes: s) else { throw .invalidDER(.invalidPEM) }
        return d
    }
}
