// Base64 (RampartEncoding, re-exported by RampartCodecs): the masked, constant-time decoder and
// encoder against RFC 4648, every character class, padding and canonical pad bits, and randomized
// texts against the two decoders it replaced (RampartCodecs' and PEM's, kept here as references).

import RampartCodecs
import RampartTestSupport
import Testing

/// The RampartCodecs decoder as it was before the one Base64 (commit 661f8f1), written with tables
/// and branches: the reference for the error semantics.
private func referenceDecode(_ text: [UInt8]) -> Result<[UInt8], Base64.DecodingError> {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    func value(_ c: UInt8) -> UInt32? { alphabet.firstIndex(of: c).map { UInt32($0) } }
    guard text.count % 4 == 0 else { return .failure(.invalidLength) }
    var pad = 0
    if text.count >= 4, text[text.count - 1] == 0x3D { pad = text[text.count - 2] == 0x3D ? 2 : 1 }
    var out: [UInt8] = []
    var firstBad: Int? = nil
    var i = 0
    while i < text.count {
        let last = i + 4 == text.count
        let symbols = last ? 4 - pad : 4
        var v: UInt32 = 0
        for j in 0..<4 {
            if j < symbols {
                let d = value(text[i + j])
                if d == nil, firstBad == nil { firstBad = i + j }
                v = v << 6 | (d ?? 0)
            } else {
                v <<= 6
            }
        }
        out.append(UInt8(v >> 16))
        if symbols >= 3 { out.append(UInt8(v >> 8 & 0xFF)) }
        if symbols == 4 { out.append(UInt8(v & 0xFF)) }
        if last, pad > 0, (pad == 2 ? v & 0xFFFF : v & 0xFF) != 0 { return .failure(.nonCanonical) }
        i += 4
    }
    if let firstBad { return .failure(.invalidCharacter(offset: firstBad)) }
    return .success(out)
}

/// PEM's own decoder as it was before (commit 661f8f1, `PEM.base64Decode`): accept or reject only
/// (empty text refused).
private func referencePEMDecode(_ s: [UInt8]) -> [UInt8]? {
    func value(_ c: UInt8) -> UInt32? {
        switch c {
        case 0x41...0x5A: return UInt32(c - 0x41)
        case 0x61...0x7A: return UInt32(c - 0x61 + 26)
        case 0x30...0x39: return UInt32(c - 0x30 + 52)
        case 0x2B: return 62
        case 0x2F: return 63
        default: return nil
        }
    }
    guard s.count % 4 == 0, !s.isEmpty else { return nil }
    var out: [UInt8] = []
    var i = 0
    while i < s.count {
        let last = i + 4 == s.count
        let pad = last ? (s[i + 3] == 0x3D ? (s[i + 2] == 0x3D ? 2 : 1) : 0) : 0
        var v: UInt32 = 0
        for k in 0..<4 {
            if k >= 4 - pad { v <<= 6; continue }
            guard let d = value(s[i + k]) else { return nil }
            v = v << 6 | d
        }
        out.append(UInt8(v >> 16))
        if pad < 2 { out.append(UInt8((v >> 8) & 0xFF)) }
        if pad < 1 { out.append(UInt8(v & 0xFF)) }
        if (pad == 1 && v & 0xFF != 0) || (pad == 2 && v & 0xFFFF != 0) { return nil }
        i += 4
    }
    return out
}

private let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

private func decoded(_ text: [UInt8]) -> Result<[UInt8], Base64.DecodingError> {
    Result { () throws(Base64.DecodingError) in try Base64.decode(bytes: text) }
}

@Suite("Base64")
struct Base64Tests {
    @Test("RFC 4648 §10 vectors", arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func rfcVectors(plain: String, encoded: String) throws {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(Base64.encodedBytes(Array(plain.utf8)) == Array(encoded.utf8))
        #expect(try Base64.decode(encoded) == Array(plain.utf8))
        #expect(try Base64.decode(bytes: Array(encoded.utf8)) == Array(plain.utf8))
        #expect(try Base64.decode(("xx" + encoded).dropFirst(2)) == Array(plain.utf8))   // a Substring
    }

    @Test("Every byte value at every position of a full and of a padded quantum: the alphabet decodes to its index, the rest (and '=') is refused at its offset")
    func everyCharacterClass() throws {
        for c in 0...255 {
            let c = UInt8(c)
            let index = alphabet.firstIndex(of: c)
            for position in 0..<4 {
                // In the first (full) quantum of two, and in the last, unpadded one.
                for prefix in [[UInt8](), Array("QUJD".utf8)] {
                    var text = prefix + Array("AAAA".utf8)
                    text[prefix.count + position] = c
                    let r = decoded(text)
                    #expect(r == referenceDecode(text), "byte \(c) at \(position)")
                    if let index {
                        let v = UInt32(index) << (18 - 6 * UInt32(position))
                        let want = prefix.isEmpty ? [] : Array("ABC".utf8)
                        #expect(r == .success(want + [UInt8(v >> 16), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]))
                    } else if c != 0x3D || position < 3 {   // "AAA=" is padding, not a bad character
                        #expect(r == .failure(.invalidCharacter(offset: prefix.count + position)), "byte \(c) at \(position)")
                    }
                }
                // In a quantum padded with "==" (positions 0 and 1 carry symbols) or "=" (0 to 2).
                for pad in 1...2 where position < 4 - pad {
                    var text = Array("AAAA".utf8)
                    for k in (4 - pad)..<4 { text[k] = 0x3D }
                    text[position] = c
                    #expect(decoded(text) == referenceDecode(text), "byte \(c) at \(position), pad \(pad)")
                    if index == nil, c != 0x3D {
                        #expect(decoded(text) == .failure(.invalidCharacter(offset: position)))
                    }
                }
            }
        }
    }

    @Test("Padding: only one or two '=' at the very end; elsewhere '=' is a bad character")
    func padding() {
        #expect(decoded(Array("QQ==".utf8)) == .success([0x41]))
        #expect(decoded(Array("QUI=".utf8)) == .success([0x41, 0x42]))
        #expect(decoded(Array("QUJD".utf8)) == .success([0x41, 0x42, 0x43]))
        #expect(decoded(Array("Q===".utf8)) == .failure(.invalidCharacter(offset: 1)))
        #expect(decoded(Array("====".utf8)) == .failure(.invalidCharacter(offset: 0)))
        #expect(decoded(Array("QQ=A".utf8)) == .failure(.invalidCharacter(offset: 2)))
        #expect(decoded(Array("=QUI".utf8)) == .failure(.invalidCharacter(offset: 0)))
        #expect(decoded(Array("QQ==QUJD".utf8)) == .failure(.invalidCharacter(offset: 2)))
        #expect(decoded(Array("QUJD=QI=".utf8)) == .failure(.invalidCharacter(offset: 4)))
        #expect(decoded(Array("QQ".utf8)) == .failure(.invalidLength))
        #expect(decoded(Array("QQ=".utf8)) == .failure(.invalidLength))
        #expect(decoded(Array("QQ===".utf8)) == .failure(.invalidLength))
        #expect(decoded([]) == .success([]))
        // The first bad character's offset, whatever follows it.
        #expect(decoded(Array("QU!D#UJD".utf8)) == .failure(.invalidCharacter(offset: 2)))
        #expect(decoded(Array("QUJDQUJ\n".utf8)) == .failure(.invalidCharacter(offset: 7)))
        #expect(decoded(Array(" QUJDQUJ".utf8)) == .failure(.invalidCharacter(offset: 0)))
    }

    @Test("Canonical pad bits: with '=' the last symbol's low 2 bits, with '==' its low 4, must be zero")
    func canonicalPadBits() {
        for (index, c) in alphabet.enumerated() {
            let one = Array("QU".utf8) + [c, 0x3D], two = [0x51, c, 0x3D, 0x3D]
            #expect(decoded(one) == (index & 3 == 0 ? .success([0x41, UInt8(0x40 | index >> 2)]) : .failure(.nonCanonical)))
            #expect(decoded(two) == (index & 15 == 0 ? .success([UInt8(0x40 | index >> 4)]) : .failure(.nonCanonical)))
            #expect(decoded(one) == referenceDecode(one))
            #expect(decoded(two) == referenceDecode(two))
        }
        // Non-canonical pad bits are reported before a bad character, as before.
        #expect(decoded(Array("!UJDQB==".utf8)) == .failure(.nonCanonical))
        #expect(decoded(Array("!UJDQA==".utf8)) == .failure(.invalidCharacter(offset: 0)))
    }

    @Test("Round trips, lengths 0…300, against a table encoder")
    func roundTrips() throws {
        var rng = SplitMix64(seed: 64)
        for n in 0...300 {
            let data = rng.bytes(n)
            var reference: [UInt8] = []
            var i = 0
            while i < n {
                let chunk = Array(data[i..<min(i + 3, n)])
                let v = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
                for k in 0..<4 { reference.append(k <= chunk.count ? alphabet[Int(v >> (18 - 6 * UInt32(k)) & 63)] : 0x3D) }
                i += 3
            }
            let text = Base64.encodedBytes(data)
            #expect(text == reference, "length \(n)")
            #expect(Base64.encode(data[...]) == String(decoding: reference, as: UTF8.self))
            #expect(try Base64.decode(bytes: text) == data)
            #expect(try Base64.decode(String(decoding: text, as: UTF8.self)) == data)
        }
    }

    @Test("Random texts and mutated encodings: the same outcome as RampartCodecs' old decoder, the same accept/reject and bytes as PEM's")
    func againstOldDecoders() {
        var rng = SplitMix64(seed: 4648)
        let symbols = alphabet + Array("====".utf8) + [0x20, 0x0A, 0x0D, 0x2D, 0x5F, 0x2E, 0x00, 0x7F, 0x80, 0xC3, 0xFF]
        var accepted = 0
        for round in 0..<20_000 {
            var text: [UInt8]
            if round % 2 == 0 {
                text = (0..<Int(rng.next() % 25)).map { _ in symbols[Int(rng.next() % UInt64(symbols.count))] }
            } else {
                text = Base64.encodedBytes(rng.bytes(Int(rng.next() % 20)))
                if !text.isEmpty {
                    let at = Int(rng.next() % UInt64(text.count))
                    switch rng.next() % 4 {
                    case 0: text[at] = symbols[Int(rng.next() % UInt64(symbols.count))]
                    case 1: text[text.count - 1 - Int(rng.next() % min(3, UInt64(text.count)))] = alphabet[Int(rng.next() % 64)]
                    case 2: text.insert(0x3D, at: at)
                    default: break
                    }
                }
            }
            let r = decoded(text)
            #expect(r == referenceDecode(text), "\(text)")
            let pem = text.isEmpty ? nil : try? r.get()
            #expect(pem == referencePEMDecode(text), "\(text)")
            if case .success = r { accepted += 1 }
        }
        #expect(accepted > 5000)   // both outcomes well represented
    }
}
