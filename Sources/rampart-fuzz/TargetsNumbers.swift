// Number and parameter targets: BigUInt parsing (hex and big-endian bytes) and arithmetic identities
// (with Montgomery exponentiation checked against schoolbook square-and-multiply), hex decoding and
// MTProxy secrets, and the parameter checks of PBKDF2, scrypt and BLAKE2b.
//
// The KDF target bounds its own work (tiny iteration counts and N) but requires that huge output
// lengths be refused with a typed error: it asks for them through the raw-buffer API with an output
// pointer into an inaccessible page, so a KDF that accepts one crashes at its first write instead of
// allocating gigabytes.

@_spi(Testing) import Rampart
import RampartMTProto
import RampartTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `base^exponent mod m` by square-and-multiply over BigUInt (the reference for the Montgomery code).
func referencePower(_ base: BigUInt, _ exponent: BigUInt, _ m: BigUInt) -> BigUInt? {
    guard !m.isZero, var b = try? base.remainder(dividingBy: m) else { return nil }
    var r = (try? BigUInt(1).remainder(dividingBy: m)) ?? BigUInt()
    for i in 0..<exponent.bitWidth {
        if exponent.bit(i) { guard let v = try? (r * b).remainder(dividingBy: m) else { return nil }; r = v }
        guard let sq = try? (b * b).remainder(dividingBy: m) else { return nil }
        b = sq
    }
    return r
}

/// The canonical hex form BigUInt(hex:) must give back: lower case, no `0x`, no leading zeros.
private func normalizedHex(_ s: [UInt8]) -> String? {
    var d = s
    if d.count >= 2, d[0] == 0x30, d[1] == 0x78 || d[1] == 0x58 { d.removeFirst(2) }
    guard !d.isEmpty, d.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }) else {
        return nil
    }
    let lower = d.map { (0x41...0x46).contains($0) ? $0 + 0x20 : $0 }.drop(while: { $0 == 0x30 })
    return lower.isEmpty ? "0" : String(decoding: lower, as: UTF8.self)
}

let bigUIntParseTarget = FuzzTarget(
    name: "biguint-parse",
    summary: "BigUInt(hex:) and BigUInt(bigEndian:): accepted exactly the hex digit strings, canonical round trips through hexString and bigEndianBytes(count:), order consistent",
    maxLength: 2048,
    run: { data in
        var input = FuzzInput(data)
        let mode = input.byte()
        let body = input.rest()
        if mode & 1 == 0 {
            let expected = normalizedHex(body)
            do throws(RampartError) {
                let v = try BigUInt(hex: text(body))
                guard let e = expected else { FuzzCheck.fail("BigUInt(hex:) accepted a non-hex string") }
                FuzzCheck.require(v.hexString == e, "BigUInt(hex:) round trip: \(v.hexString) vs \(e)")
                FuzzCheck.require((try? BigUInt(hex: v.hexString)) == v && (try? BigUInt(hex: "0x" + e)) == v, "hexString parses back")
            } catch {
                FuzzCheck.require(expected == nil, "BigUInt(hex:) refused a hex string: \(error)")
                FuzzCheck.require(error == .invalidEncoding, "BigUInt(hex:) error \(error)")
            }
            return
        }
        let v = BigUInt(bigEndian: body)
        let minimal = Array(body.drop(while: { $0 == 0 }))
        FuzzCheck.require(v.bigEndianBytes() == minimal, "bigEndianBytes() is not the minimal form")
        FuzzCheck.require((v.bitWidth + 7) / 8 == minimal.count && v.isZero == minimal.isEmpty, "bitWidth")
        FuzzCheck.require((try? v.bigEndianBytes(count: body.count)) == body, "bigEndianBytes(count:) round trip")
        FuzzCheck.require((try? v.bigEndianBytes(count: minimal.count - 1)) == nil || minimal.isEmpty, "bigEndianBytes(count:) too short accepted")
        FuzzCheck.require((try? BigUInt(hex: hexString(body.isEmpty ? [0] : body))) == v, "hex and big-endian parsing disagree")
        FuzzCheck.require(BigUInt(limbs: limbs(minimal)) == v, "limbs")
        // Order: compare as (length, bytes).
        let half = body.count / 2
        let a = Array(body[0..<half].drop(while: { $0 == 0 })), b = Array(body[half...].drop(while: { $0 == 0 }))
        let lexLess = a.count != b.count ? a.count < b.count : a.lexicographicallyPrecedes(b)
        FuzzCheck.require((BigUInt(bigEndian: a) < BigUInt(bigEndian: b)) == lexLess, "BigUInt order")
    },
    seeds: {
        [[0] + Array("0x00ffEE1234567890abcdef".utf8), [0] + Array(DiffieHellman.telegramPrime.hexString.utf8),
         [1] + [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1] + DiffieHellman.telegramPrime.bigEndianBytes()]
    })

/// Big-endian bytes as 64-bit limbs, least significant first.
private func limbs(_ be: [UInt8]) -> [UInt64] {
    var out: [UInt64] = []
    var i = be.count
    while i > 0 {
        let lo = max(0, i - 8)
        out.append(be[lo..<i].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        i = lo
    }
    return out
}

let bigUIntArithTarget = FuzzTarget(
    name: "biguint-arith",
    summary: "BigUInt arithmetic identities (add/sub/mul/divmod/shifts/gcd/inverse) and Modulus multiply, publicPower and constantTimePower against square-and-multiply",
    maxLength: 1024,
    run: { data in
        var input = FuzzInput(data)
        let a = BigUInt(bigEndian: input.bytes(Int(input.byte() % 130)))
        let b = BigUInt(bigEndian: input.bytes(Int(input.byte() % 130)))
        let m = BigUInt(bigEndian: input.bytes(Int(input.byte() % 130)))
        let e = BigUInt(bigEndian: input.bytes(Int(input.byte() % 40)))
        let shift = Int(input.u16() % 600)
        let sum = a + b
        FuzzCheck.require(sum == b + a && sum.subtracting(b) == a && (try? sum - a) == b, "addition/subtraction")
        FuzzCheck.require((a.subtracting(b) == nil) == (a < b), "subtracting() and order")
        let (d, borrow) = a.subtractingReportingOverflow(b)
        FuzzCheck.require(borrow == (a < b) && (borrow || d == a.subtracting(b)), "subtractingReportingOverflow")
        let product = a * b
        FuzzCheck.require(product == b * a, "multiplication commutes")
        do throws(RampartError) {
            let (q, r) = try a.quotientAndRemainder(dividingBy: b)
            FuzzCheck.require(!b.isZero && q * b + r == a && r < b, "division identity")
            let back = try? product.quotientAndRemainder(dividingBy: b)
            FuzzCheck.require(back?.quotient == a && back?.remainder == BigUInt(), "(a·b)/b")
            FuzzCheck.require((try? a.remainder(dividingBy: b)) == r, "remainder")
        } catch {
            FuzzCheck.require(b.isZero && error == .divisionByZero, "division error \(error)")
        }
        let w = b.low64
        if w != 0 { FuzzCheck.require(BigUInt(a.remainder(dividingByWord: w)) == (try? a.remainder(dividingBy: BigUInt(w))), "word remainder") }
        FuzzCheck.require((a << shift) >> shift == a && (a >> shift) == (try? a.quotientAndRemainder(dividingBy: BigUInt(1) << shift))?.quotient,
                          "shifts")
        let g = BigUInt.gcd(a, b)
        if !g.isZero {
            FuzzCheck.require((try? a.remainder(dividingBy: g))?.isZero == true && (try? b.remainder(dividingBy: g))?.isZero == true, "gcd divides")
        }
        if let inv = try? a.inverse(modulo: m) {
            FuzzCheck.require(inv < m && (try? (a * inv).remainder(dividingBy: m)) == BigUInt(1), "inverse")
        }
        // Modular exponentiation three ways.
        if let reference = referencePower(a, e, m) {
            FuzzCheck.require((try? a.power(e, modulo: m)) == reference, "power(_:modulo:) differs from square-and-multiply")
        }
        guard let mod = try? Modulus(m) else {
            FuzzCheck.require(!m.isOdd || m <= BigUInt(1), "Modulus refused an odd modulus above one")
            return
        }
        FuzzStats.note("biguint: modulus")
        FuzzCheck.require(m.isOdd && m > BigUInt(1) && mod.value == m && mod.bitWidth == m.bitWidth, "Modulus accepted \(m)")
        let reference = referencePower(a, e, m)
        FuzzCheck.require(mod.publicPower(a, e) == reference, "publicPower differs from square-and-multiply")
        FuzzCheck.require(mod.constantTimePower(a, e) == reference, "constantTimePower differs from square-and-multiply")
        FuzzCheck.require(mod.multiply(a, b) == (try? product.remainder(dividingBy: m)), "Modulus.multiply")
        FuzzCheck.require(mod.reduce(product) == (try? product.remainder(dividingBy: m)), "Modulus.reduce")
    },
    seeds: {
        var out: [[UInt8]] = []
        let p = DiffieHellman.telegramPrime.bigEndianBytes()
        for (la, lb, lm, le) in [(8, 8, 8, 8), (64, 3, 65, 33), (128, 128, 129, 39), (1, 0, 1, 0)] {
            var w = SeedWriter()
            w.byte(UInt8(la)); w.raw(Array(p.prefix(la)))
            w.byte(UInt8(lb)); w.raw(Array(p.suffix(lb)))
            w.byte(UInt8(lm)); w.raw(lm > 1 ? Array(p.suffix(lm)) : [1])
            w.byte(UInt8(le)); w.raw(Array(p.prefix(le)))
            w.u16(70)
            out.append(w.bytes)
        }
        return out
    })

// MARK: - hex

let hexTarget = FuzzTarget(
    name: "hex",
    summary: "Hex.decode (exactly even-length hex digit strings, lower-case round trip) and MTProxySecret from bytes and hex (16 / dd+16 / ee+16+domain)",
    maxLength: 1024,
    run: { data in
        var input = FuzzInput(data)
        let mode = input.byte()
        let body = input.rest()
        let s = text(body)
        let isHex = body.count % 2 == 0 && body.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
        do throws(RampartError) {
            let d = try Hex.decode(s)
            FuzzCheck.require(isHex, "Hex.decode accepted a non-hex string")
            FuzzCheck.require(Hex.encode(d) == String(decoding: body.map { (0x41...0x46).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self),
                              "Hex round trip")
        } catch {
            FuzzCheck.require(!isHex && error == .invalidEncoding, "Hex.decode refused a hex string or threw \(error)")
        }
        // MTProxy secrets (tg://proxy?secret=...): the byte form and the hex form agree.
        let raw = mode & 1 == 0 ? body : (try? Hex.decode(s)) ?? []
        let expectedMode: MTProxySecret.Mode?
        if raw.count == 16 { expectedMode = .plain }
        else if raw.count == 17 && raw[0] == 0xDD { expectedMode = .secure }
        else if raw.count >= 18 && raw[0] == 0xEE { expectedMode = .fakeTLS(domain: Array(raw[17..<min(raw.count, 17 + 182)])) }
        else { expectedMode = nil }
        do throws(MTProtoError) {
            let secret = try MTProxySecret(bytes: raw)
            FuzzCheck.require(secret.mode == expectedMode, "MTProxySecret mode \(secret.mode) vs \(String(describing: expectedMode))")
            FuzzCheck.require(secret.key.byteCount == 16 && secret.key == SymmetricKey(data: raw.count == 16 ? raw[...] : raw[1..<17]),
                              "MTProxySecret key")
            FuzzCheck.require(secret.framing == (expectedMode == .plain ? .intermediate : .paddedIntermediate), "secret framing")
            FuzzCheck.require((try? MTProxySecret(hex: hexString(raw))) == secret, "hex and byte forms of a secret differ")
            FuzzStats.note("hex: proxy secret")
        } catch {
            FuzzCheck.require(expectedMode == nil, "MTProxySecret refused a valid secret: \(error)")
        }
    },
    seeds: {
        [[0] + Array("00ff10Aa".utf8), [1] + Array(("dd" + String(repeating: "ab", count: 16)).utf8),
         [1] + Array(("ee" + String(repeating: "cd", count: 16) + hexString(Array("example.com".utf8))).utf8), [0] + Array(repeating: 0x41, count: 16)]
    })

// MARK: - kdf-params

/// Output lengths at or above this must be refused (the 100 GB requests, with a wide margin
/// for whatever bound the library chooses).
let kdfHugeOutput = 1 << 34

/// One inaccessible page: the output "buffer" of requests that must be refused.
nonisolated(unsafe) let guardPage: UnsafeMutableRawPointer = {
    #if canImport(Glibc)
    guard let p = mmap(nil, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), p != MAP_FAILED else {
        FuzzCheck.fail("mmap of the guard page failed")
    }
    return p
    #else
    return UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 4096)
    #endif
}()

/// An output length from the input: small, huge, at a boundary, or any Int.
private func outputLength(_ input: inout FuzzInput, blockSize: Int) -> Int {
    switch input.byte() % 5 {
    case 0, 1: return Int(input.u16() % 2049)
    case 2: return kdfHugeOutput + Int(input.u32())
    case 3: return Int(UInt32.max) * blockSize - 1 + Int(Int8(bitPattern: input.byte()))
    default: return Int(truncatingIfNeeded: input.u64())
    }
}

/// Asks for `length` output bytes into the guard page; the KDF must throw before writing. (A KDF that
/// accepts the length crashes here with SIGSEGV at its first output write.)
private func kdfHugeOutputMustBeRefused(_ what: String, _ length: Int, _ derive: (UnsafeMutableRawBufferPointer) throws(RampartError) -> Void) {
    FuzzExpectation.set("\(what) must refuse an output of \(length) bytes with a typed error")
    defer { FuzzExpectation.clear() }
    do throws(RampartError) {
        try derive(UnsafeMutableRawBufferPointer(start: guardPage, count: length))
        FuzzCheck.fail("\(what) accepted an output length of \(length) bytes")
    } catch {
        FuzzStats.note("kdf: huge output refused")
    }
}

/// PBKDF2 from HMAC (RFC 8018 §5.2), the reference for the optimized core.
private func referencePBKDF2<H: HashFunction>(_: H.Type, password: [UInt8], salt: [UInt8], iterations: Int, count: Int) -> [UInt8] {
    let key = SymmetricKey(data: password)
    var out: [UInt8] = []
    var block: UInt32 = 1
    while out.count < count {
        var u = HMAC<H>.authenticationCode(for: salt + [UInt8(block >> 24), UInt8((block >> 16) & 0xFF), UInt8((block >> 8) & 0xFF), UInt8(block & 0xFF)],
                                           using: key).bytes
        var t = u
        for _ in 1..<max(iterations, 1) {
            u = HMAC<H>.authenticationCode(for: u, using: key).bytes
            for k in 0..<t.count { t[k] ^= u[k] }
        }
        out += t
        block += 1
    }
    return Array(out.prefix(count))
}

let kdfParamsTarget = FuzzTarget(
    name: "kdf-params",
    summary: "PBKDF2, scrypt and BLAKE2b parameters from the input: invalid ones refused with typed errors, huge outputs and memory refused, valid small ones match references and both backends",
    maxLength: 512,
    run: { data in
        var input = FuzzInput(data)
        let which = input.byte()
        let password = input.lengthPrefixed(max: 100), salt = input.lengthPrefixed(max: 100)
        switch which % 3 {
        case 0:
            let prf = PBKDF2.PseudoRandomFunction.allCases[Int(input.byte() % 3)]
            let hLen = [PBKDF2.PseudoRandomFunction.hmacSHA1: 20, .hmacSHA256: 32, .hmacSHA512: 64][prf]!
            let iterations = input.bool() ? Int(input.byte() % 8) - 1 : Int(truncatingIfNeeded: input.u64())
            let length = outputLength(&input, blockSize: hLen)
            if length >= kdfHugeOutput {
                let it = min(max(iterations, -1), 3)
                password.withUnsafeBytes { p in salt.withUnsafeBytes { s in
                    kdfHugeOutputMustBeRefused("PBKDF2-\(prf)", length) { (o) throws(RampartError) in
                        try PBKDF2.derive(password: p, salt: s, prf: prf, iterations: it, into: o)
                    }
                } }
                return
            }
            let valid = iterations >= 1 && length >= 1
            guard !valid || (iterations <= 64 && length <= 2048) else { return }  // valid but too slow to run here
            do throws(RampartError) {
                let key = try PBKDF2.deriveKey(password: password, salt: salt, prf: prf, iterations: iterations, outputByteCount: length)
                FuzzCheck.require(valid, "PBKDF2 accepted iterations \(iterations), length \(length)")
                let got = key.withUnsafeBytes { Array($0) }
                let reference: [UInt8]
                switch prf {
                case .hmacSHA1: reference = referencePBKDF2(Insecure.SHA1.self, password: password, salt: salt, iterations: iterations, count: length)
                case .hmacSHA256: reference = referencePBKDF2(SHA256.self, password: password, salt: salt, iterations: iterations, count: length)
                case .hmacSHA512: reference = referencePBKDF2(SHA512.self, password: password, salt: salt, iterations: iterations, count: length)
                }
                FuzzCheck.require(got == reference, "PBKDF2 differs from the HMAC reference")
                var portable = [UInt8](repeating: 0, count: length)
                let ok = password.withUnsafeBytes { p in salt.withUnsafeBytes { s in portable.withUnsafeMutableBytes { o in
                    (try? PBKDF2.derive(password: p, salt: s, prf: prf, iterations: iterations, into: o, backend: .portable)) != nil
                } } }
                FuzzCheck.require(ok && portable == got, "PBKDF2 portable backend differs")
            } catch {
                FuzzCheck.require(!valid, "PBKDF2 refused iterations \(iterations), length \(length): \(error)")
                if case .invalidParameter = error {
                    FuzzCheck.require(iterations < 1, "PBKDF2 invalidParameter for iterations \(iterations)")
                } else {
                    FuzzCheck.require(error == .invalidOutputLength && length < 1, "PBKDF2 error \(error)")
                }
            }
        case 1:
            let choice = input.byte()
            let n = choice & 1 == 0 ? 1 << Int(input.byte() % 70) : Int(truncatingIfNeeded: input.u64())
            let r = choice & 2 == 0 ? Int(input.byte() % 9) : Int(truncatingIfNeeded: input.u64())
            let p = choice & 4 == 0 ? Int(input.byte() % 5) : Int(truncatingIfNeeded: input.u64())
            let length = outputLength(&input, blockSize: 32)
            if length >= kdfHugeOutput {
                // Cheap parameters and the default memory limit: only the length is wrong.
                password.withUnsafeBytes { pw in salt.withUnsafeBytes { s in
                    kdfHugeOutputMustBeRefused("scrypt", length) { (o) throws(RampartError) in
                        try Scrypt.derive(password: pw, salt: s, n: 16, r: 1, p: 1, into: o)
                    }
                } }
                return
            }
            let paramsValid = n >= 2 && n & (n &- 1) == 0 && r >= 1 && p >= 1 && (r >= 4 || n >> (16 * max(r, 1)) == 0)
                && r.multipliedReportingOverflow(by: p).overflow == false && r * p < 1 << 30
            let required = Scrypt.memoryRequired(n: n, r: r, p: p)
            let smallOutput = (1...2048).contains(length)
            let cheap = paramsValid && smallOutput && (required ?? .max) <= 1 << 22 && n * r * p <= 1 << 12
            // Cheap: run it. Otherwise a memory limit one byte short must make it refuse.
            let limit = cheap ? (1 << 24) : max(0, (required ?? 1) - 1)
            do throws(RampartError) {
                let key = try Scrypt.deriveKey(password: password, salt: salt, n: n, r: r, p: p, outputByteCount: length, memoryLimit: limit)
                FuzzCheck.require(cheap, "scrypt accepted N=\(n) r=\(r) p=\(p) length \(length) with a memory limit of \(limit)")
                let got = key.withUnsafeBytes { Array($0) }
                var portable = [UInt8](repeating: 0, count: length)
                let ok = password.withUnsafeBytes { pw in salt.withUnsafeBytes { s in portable.withUnsafeMutableBytes { o in
                    (try? Scrypt.derive(password: pw, salt: s, n: n, r: r, p: p, into: o, memoryLimit: limit, backend: .portable)) != nil
                } } }
                FuzzCheck.require(ok && portable == got, "scrypt portable backend differs")
                // A shorter output is a prefix (the final PBKDF2 has one iteration).
                if length > 1, let short = try? Scrypt.deriveKey(password: password, salt: salt, n: n, r: r, p: p,
                                                                  outputByteCount: length / 2, memoryLimit: limit) {
                    FuzzCheck.require(short.withUnsafeBytes { Array($0) } == Array(got.prefix(length / 2)), "scrypt prefix")
                }
                FuzzStats.note("kdf: scrypt ran")
            } catch {
                FuzzCheck.require(!cheap, "scrypt refused N=\(n) r=\(r) p=\(p) length \(length): \(error)")
                // With a small output the reason is known; otherwise any typed refusal will do.
                if paramsValid && smallOutput {
                    guard case .memoryLimitExceeded = error else { FuzzCheck.fail("scrypt over the memory limit threw \(error)") }
                }
                if !paramsValid && smallOutput {
                    guard case .invalidParameter = error else { FuzzCheck.fail("scrypt with invalid parameters threw \(error)") }
                }
            }
        default:
            let outLen = Int(Int8(bitPattern: input.byte()))
            let key = input.bytes(Int(input.byte() % 80))
            let saltP: [UInt8]? = input.bool() ? input.bytes(Int(input.byte() % 20)) : nil
            let personal: [UInt8]? = input.bool() ? input.bytes(Int(input.byte() % 20)) : nil
            let valid = (1...64).contains(outLen) && key.count <= 64 && (saltP?.count ?? 16) == 16 && (personal?.count ?? 16) == 16
            let message = input.rest()
            do throws(RampartError) {
                var h = try BLAKE2b(outputByteCount: outLen, key: key, salt: saltP, personal: personal, backend: .hardware)
                var q = try BLAKE2b(outputByteCount: outLen, key: key, salt: saltP, personal: personal, backend: .portable)
                FuzzCheck.require(valid, "BLAKE2b accepted out \(outLen) key \(key.count) salt \(String(describing: saltP?.count))")
                h.update(data: message)
                for c in FuzzSplit.chunks(message, mode: 2, seed: UInt64(outLen & 0xFF)) { q.update(data: c) }
                let d = h.finalize()
                FuzzCheck.require(d == q.finalize() && d.bytes.count == outLen, "BLAKE2b backends or splits differ")
            } catch {
                FuzzCheck.require(!valid, "BLAKE2b refused valid parameters: \(error)")
            }
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        var w = SeedWriter()
        w.byte(0); w.lengthPrefixed(Array("password".utf8)); w.lengthPrefixed(Array("salt".utf8)); w.byte(1); w.byte(1); w.byte(3); w.byte(0); w.u16(40)
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(1); w.lengthPrefixed(Array("pw".utf8)); w.lengthPrefixed(Array("NaCl".utf8)); w.byte(0); w.byte(4); w.byte(1); w.byte(2); w.byte(0); w.u16(64)
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(2); w.lengthPrefixed([]); w.lengthPrefixed([]); w.byte(32); w.byte(3); w.raw([1, 2, 3]); w.byte(1); w.byte(16); w.raw([UInt8](repeating: 5, count: 16))
        w.byte(0); w.raw(Array("abc".utf8))
        out.append(w.bytes)
        return out
    })

// MARK: - dh-params

let dhParamsTarget = FuzzTarget(
    name: "dh-params",
    summary: "what a client computes on a server's handshake values: factorPQ of pq (64-bit and up to 64 bytes), g_a range check, generator rule, safe-prime test: results verified, refusals typed",
    maxLength: 600,
    timeout: 10,
    run: { data in
        var input = FuzzInput(data)
        let mode = input.byte()
        switch mode % 4 {
        case 0:
            let pq = input.u64()
            do throws(RampartError) {
                let (p, q) = try Factorization.factorPQ(pq)
                FuzzCheck.require(p <= q && p.multipliedFullWidth(by: q) == (0, pq) && Factorization.isPrime(p) && Factorization.isPrime(q),
                                  "factorPQ(\(pq)) = \(p) · \(q)")
                FuzzStats.note("dh: pq factored")
            } catch {
                if case .factorizationFailed(.prime) = error {
                    FuzzCheck.require(pq < 4 || Factorization.isPrime(pq), "factorPQ called \(pq) prime")
                } else {
                    guard case .factorizationFailed = error else { FuzzCheck.fail("factorPQ error \(error)") }
                    FuzzCheck.require(pq >= 4 && !Factorization.isPrime(pq), "factorPQ refused \(pq)")
                }
            }
        case 1:
            // A client handed a resPQ with any pq the TL layer admits (up to 64 bytes): it must answer
            // (or refuse) in bounded time, and the p and q it sends must be pq's factors.
            let pqBytes = input.bytes(Int(input.byte() % 65))
            var rng = SplitMix64(seed: 1)
            var client = ClientHandshake(configuration: .init(publicKeys: [Fixtures.rsa2048.publicKey], dc: 2))
            guard let req = try? ReqPQ(parsing: client.start(using: &rng)) else { FuzzCheck.fail("req_pq") }
            let res = ResPQ(nonce: req.nonce, serverNonce: [UInt8](repeating: 7, count: 16), pq: pqBytes,
                            fingerprints: [Fixtures.rsa2048.publicKey.mtprotoFingerprint])
            guard case .send(let body)? = try? client.receive(res.serialized, now: 0, using: &rng) else { return }
            guard let dh = try? ReqDHParams(parsing: body) else { FuzzCheck.fail("req_DH_params does not parse") }
            let p = BigUInt(bigEndian: dh.p), q = BigUInt(bigEndian: dh.q)
            FuzzCheck.require(p <= q && p > BigUInt(1) && p * q == BigUInt(bigEndian: pqBytes), "the client sent p, q that are not pq's factors")
            FuzzStats.note("dh: client factored pq")
        case 2:
            let prime = mode & 4 == 0 ? DiffieHellman.telegramPrime : BigUInt(bigEndian: input.bytes(Int(input.u16() % 300)))
            let v = BigUInt(bigEndian: input.rest())
            let bound = BigUInt(1) << 1984
            var expected = prime.bitWidth == 2048 && v > BigUInt(1) && v >= bound
            if expected, let pm1 = prime.subtracting(BigUInt(1)), let upper = prime.subtracting(bound) {
                expected = v < pm1 && v <= upper
            } else {
                expected = false
            }
            do throws(RampartError) {
                try DiffieHellman.checkPublicValue(v, prime: prime)
                FuzzCheck.require(expected, "checkPublicValue accepted a value outside [2^1984, p − 2^1984]")
            } catch {
                FuzzCheck.require(!expected, "checkPublicValue refused a value in range: \(error)")
                let want: DHCheckFailure = prime.bitWidth == 2048 ? .valueOutOfRange : .primeBitLength
                FuzzCheck.require(error == .dhCheckFailed(want), "checkPublicValue error \(error)")
            }
        default:
            let g = Int(Int8(bitPattern: input.byte()))
            var pBytes = input.fixed(256)
            pBytes[0] |= 0x80
            pBytes[255] |= 1
            let p = BigUInt(bigEndian: pBytes)
            let residueOK: Bool
            switch g {
            case 2: residueOK = p.remainder(dividingByWord: 8) == 7
            case 3: residueOK = p.remainder(dividingByWord: 3) == 2
            case 4: residueOK = true
            case 5: residueOK = [1, 4].contains(p.remainder(dividingByWord: 5))
            case 6: residueOK = [19, 23].contains(p.remainder(dividingByWord: 24))
            case 7: residueOK = [3, 5, 6].contains(p.remainder(dividingByWord: 7))
            default: residueOK = false
            }
            FuzzCheck.require(DiffieHellman.isValidGenerator(g, prime: p) == residueOK, "generator rule for g = \(g)")
            var rng = SplitMix64(seed: UInt64(bitPattern: Int64(g)))
            if DiffieHellman.isSafePrime(p, rounds: 2, using: &rng) {
                // About one odd 2048-bit value in 760 000 is a safe prime, so libFuzzer at 40 000 runs a
                // second does meet them (Tests/Fuzz/corpus/dh-params/regression-fuzzed-safe-prime-*).
                // A pass is therefore checked, not forbidden: Telegram's prime, or p and (p − 1) / 2 both
                // pass Fermat tests to bases 2, 3 and 5 computed by BigUInt.power (another code path
                // than the Miller-Rabin under test, with fixed bases).
                FuzzCheck.require(p == DiffieHellman.telegramPrime || fermatProbablePrime(p) && fermatProbablePrime(p >> 1),
                                  "a composite 2048-bit value passed the safe-prime test")
                FuzzStats.note("dh: safe prime passed")
            }
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        var w = SeedWriter()
        w.byte(0); w.u64(0x17ED_4894_1A08_F981)
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(1); w.byte(8); w.raw([0x17, 0xED, 0x48, 0x94, 0x1A, 0x08, 0xF9, 0x81])
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(2); w.raw(Array(DiffieHellman.telegramPrime.bigEndianBytes().reversed()))
        out.append(w.bytes)
        w = SeedWriter()
        w.byte(3); w.byte(3); w.raw(DiffieHellman.telegramPrime.bigEndianBytes())
        out.append(w.bytes)
        return out
    })

/// Fermat probable-prime test of an odd `n > 5` to the bases 2, 3 and 5, by plain modular powers.
private func fermatProbablePrime(_ n: BigUInt) -> Bool {
    guard n.isOdd, n > BigUInt(5), let e = n.subtracting(BigUInt(1)) else { return false }
    for base: UInt64 in [2, 3, 5] {
        guard let r = try? BigUInt(base).power(e, modulo: n), r == BigUInt(1) else { return false }
    }
    return true
}

let numberTargets: [FuzzTarget] = [bigUIntParseTarget, bigUIntArithTarget, hexTarget, kdfParamsTarget, dhParamsTarget]
