// RSA keys (PKCS#1 and SubjectPublicKeyInfo, strict DER), the raw public and private operations and
// key generation. No padding schemes live here: MTProto's RSA_PAD and the legacy scheme are built on
// the raw operations by the protocol module.

/// RSA public and private keys and their raw (unpadded) operations.
public enum RSA {
    /// The DER of the rsaEncryption AlgorithmIdentifier: OID 1.2.840.113549.1.1.1 and NULL.
    static let rsaAlgorithmIdentifier: [UInt8] = [0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00]

    /// An RSA public key (n, e).
    public struct PublicKey: Sendable, Hashable {
        /// The modulus n.
        public let modulus: BigUInt
        /// The public exponent e.
        public let publicExponent: BigUInt
        /// The Montgomery context of n, built once.
        let montgomery: Modulus

        public static func == (a: PublicKey, b: PublicKey) -> Bool {
            a.modulus == b.modulus && a.publicExponent == b.publicExponent
        }

        public func hash(into h: inout Hasher) {
            h.combine(modulus)
            h.combine(publicExponent)
        }

        /// A key from its numbers.
        ///
        /// - Throws: ``RampartError/invalidRSAKey`` unless n is odd with 512 to 16384 bits and e is odd
        ///   with 3 ≤ e < n.
        public init(modulus: BigUInt, publicExponent: BigUInt) throws(RampartError) {
            guard modulus.isOdd, (512...16384).contains(modulus.bitWidth), publicExponent.isOdd,
                  publicExponent >= BigUInt(3), publicExponent < modulus else { throw .invalidRSAKey }
            self.modulus = modulus
            self.publicExponent = publicExponent
            montgomery = try Modulus(modulus)
        }

        /// Parses PEM: `BEGIN RSA PUBLIC KEY` (PKCS#1, as Telegram publishes its keys) or
        /// `BEGIN PUBLIC KEY` (SubjectPublicKeyInfo). The text must hold exactly one block.
        ///
        /// - Throws: ``RampartError/invalidDER(_:)`` for malformed armour or DER,
        ///   ``RampartError/invalidRSAKey`` for unusable numbers.
        public init(pemRepresentation pem: String) throws(RampartError) {
            let blocks = try PEM.decodeAll(pem)
            guard blocks.count == 1 else { throw .invalidDER(.invalidPEM) }
            try self.init(pemBlock: blocks[0])
        }

        init(pemBlock b: (label: String, der: [UInt8])) throws(RampartError) {
            switch b.label {
            case "RSA PUBLIC KEY": try self.init(pkcs1DERRepresentation: b.der)
            case "PUBLIC KEY": try self.init(derRepresentation: b.der)
            default: throw .invalidDER(.invalidPEM)
            }
        }

        /// Every public key in a PEM text with several blocks (for example Telegram's key list).
        public static func all(pemRepresentation pem: String) throws(RampartError) -> [PublicKey] {
            var keys: [PublicKey] = []
            for b in try PEM.decodeAll(pem) { keys.append(try PublicKey(pemBlock: b)) }
            return keys
        }

        /// Parses a PKCS#1 `RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }`.
        public init(pkcs1DERRepresentation der: [UInt8]) throws(RampartError) {
            var top = DERReader(der)
            var seq = try top.element(0x30)
            try top.finish()
            let n = try seq.positiveInteger()
            let e = try seq.positiveInteger()
            try seq.finish()
            try self.init(modulus: n, publicExponent: e)
        }

        /// Parses a SubjectPublicKeyInfo with the rsaEncryption algorithm (parameters NULL).
        public init(derRepresentation der: [UInt8]) throws(RampartError) {
            var top = DERReader(der)
            var spki = try top.element(0x30)
            try top.finish()
            var alg = try spki.element(0x30)
            var oid = try alg.element(0x06)
            guard Array(oid.rest) == [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01] else { throw .invalidDER(.unsupported) }
            oid.offset = oid.end
            let null = try alg.element(0x05)
            guard null.isAtEnd else { throw .invalidDER(.unsupported) }
            try alg.finish()
            let bits = try spki.element(0x03)
            try spki.finish()
            let content = Array(bits.rest)
            guard let unused = content.first else { throw .invalidDER(.truncated) }
            guard unused == 0 else { throw .invalidDER(.unsupported) }
            try self.init(pkcs1DERRepresentation: Array(content.dropFirst()))
        }

        /// PKCS#1 DER.
        public var pkcs1DERRepresentation: [UInt8] {
            DERWriter.sequence([DERWriter.integer(modulus), DERWriter.integer(publicExponent)])
        }
        /// PKCS#1 PEM (`BEGIN RSA PUBLIC KEY`).
        public var pkcs1PEMRepresentation: String { PEM.encode(label: "RSA PUBLIC KEY", der: pkcs1DERRepresentation) }
        /// SubjectPublicKeyInfo DER.
        public var derRepresentation: [UInt8] {
            DERWriter.sequence([RSA.rsaAlgorithmIdentifier, DERWriter.element(0x03, [0] + pkcs1DERRepresentation)])
        }
        /// SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`).
        public var pemRepresentation: String { PEM.encode(label: "PUBLIC KEY", der: derRepresentation) }

        /// The modulus length in bits.
        public var keySizeInBits: Int { modulus.bitWidth }
        /// The modulus length in bytes (the size of raw inputs and outputs).
        public var byteCount: Int { (modulus.bitWidth + 7) / 8 }

        /// The raw public operation `x^e mod n` on a big-endian input of at most ``byteCount`` bytes,
        /// returned as exactly ``byteCount`` bytes. No padding is added or checked.
        ///
        /// - Throws: ``RampartError/invalidRSAKey`` when the input is longer than the modulus or its
        ///   value is not below n.
        public func rawPublic<C: Collection<UInt8>>(_ input: C) throws(RampartError) -> [UInt8] {
            guard input.count <= byteCount else { throw .invalidRSAKey }
            let x = BigUInt(bigEndian: input)
            guard x < modulus else { throw .invalidRSAKey }
            return try montgomery.publicPower(x, publicExponent).bigEndianBytes(count: byteCount)
        }

        /// The MTProto key fingerprint (Docs/MTProto.md §3.6): the lower 64 bits of
        /// `SHA1(TL bytes(n) ‖ TL bytes(e))`, i.e. digest bytes 12..<20 read as a little-endian integer.
        public var mtprotoFingerprint: UInt64 {
            var tl: [UInt8] = []
            for v in [modulus, publicExponent] {
                let b = v.bigEndianBytes()
                if b.count <= 253 {
                    tl.append(UInt8(b.count))
                } else {
                    tl += [0xFE, UInt8(b.count & 0xFF), UInt8((b.count >> 8) & 0xFF), UInt8((b.count >> 16) & 0xFF)]
                }
                tl += b
                while tl.count % 4 != 0 { tl.append(0) }
            }
            let d = Insecure.SHA1.hash(data: tl).bytes
            var f: UInt64 = 0
            for k in 0..<8 { f |= UInt64(d[12 + k]) << (8 * UInt64(k)) }
            return f
        }
    }

    /// An RSA private key with its CRT parameters. The secret numbers are wiped when the last copy of
    /// the key is released.
    public struct PrivateKey: Sendable {
        /// The secret numbers, each in storage it owns (wiped when the last copy of the key is
        /// released). `dp`, `qinv` have p's limb count, `dq` q's, `d` n's.
        final class Secrets: Sendable {
            let d, p, q, dp, dq, qinv: SecretLimbs
            init(d: SecretLimbs, p: SecretLimbs, q: SecretLimbs, dp: SecretLimbs, dq: SecretLimbs, qinv: SecretLimbs) {
                self.d = d; self.p = p; self.q = q; self.dp = dp; self.dq = dq; self.qinv = qinv
            }
            var all: [SecretLimbs] { [d, p, q, dp, dq, qinv] }
        }

        /// The public half.
        public let publicKey: PublicKey
        let secrets: Secrets
        /// Montgomery contexts of p and q: they own copies of p and q (wiped with the key).
        let modP: Modulus, modQ: Modulus

        /// Builds a key from its PKCS#1 numbers, checking that they are consistent:
        /// n = p·q, dp = d mod (p − 1), dq = d mod (q − 1), q·qinv ≡ 1 (mod p), e·dp ≡ 1 (mod p − 1),
        /// e·dq ≡ 1 (mod q − 1). Primality of p and q is not re-tested. The key keeps its own copies
        /// of the numbers; the caller's values are not retained (wipe them with `wipe()`).
        ///
        /// The consistency checks use variable-time arithmetic (they run once, when the key is
        /// loaded); every operation with the key afterwards is constant time.
        ///
        /// - Throws: ``RampartError/invalidRSAKey`` when a check fails.
        public init(modulus n: BigUInt, publicExponent e: BigUInt, privateExponent d: BigUInt, prime1 p: BigUInt, prime2 q: BigUInt,
                    exponent1 dp: BigUInt, exponent2 dq: BigUInt, coefficient qinv: BigUInt) throws(RampartError) {
            publicKey = try PublicKey(modulus: n, publicExponent: e)
            let one = BigUInt(1)
            guard p > one, q > one else { throw .invalidRSAKey }
            var p1 = p.subtracting(knownSmaller: one), q1 = q.subtracting(knownSmaller: one)  // p, q > 1 (checked above)
            var t1 = p * q, t2 = (try? d.remainder(dividingBy: p1)) ?? BigUInt(), t3 = (try? d.remainder(dividingBy: q1)) ?? BigUInt()
            var qq = q * qinv, edp = e * dp, edq = e * dq
            var t4 = (try? qq.remainder(dividingBy: p)) ?? BigUInt()
            var t5 = (try? edp.remainder(dividingBy: p1)) ?? BigUInt(), t6 = (try? edq.remainder(dividingBy: q1)) ?? BigUInt()
            qq.wipe(); edp.wipe(); edq.wipe()
            let consistent = t1 == n && t2 == dp && t3 == dq && qinv < p && t4 == one && t5 == one && t6 == one
                && d.limbs.count <= n.limbs.count
            p1.wipe(); q1.wipe(); t1.wipe(); t2.wipe(); t3.wipe(); t4.wipe(); t5.wipe(); t6.wipe()
            guard consistent, let mp = try? Modulus(p), let mq = try? Modulus(q) else { throw .invalidRSAKey }
            let np = p.limbs.count, nq = q.limbs.count
            secrets = Secrets(d: SecretLimbs(d, count: n.limbs.count), p: SecretLimbs(p, count: np),
                              q: SecretLimbs(q, count: nq), dp: SecretLimbs(dp, count: np),
                              dq: SecretLimbs(dq, count: nq), qinv: SecretLimbs(qinv, count: np))
            modP = mp
            modQ = mq
        }

        /// Generates a key with a modulus of exactly `bits` bits and e = 65537 from `rng` (which must
        /// be a cryptographically secure generator outside tests).
        ///
        /// p and q are random primes of `bits/2` bits with their two top bits set, 20 Miller-Rabin
        /// rounds each (in constant-time exponentiation), `|p − q| > 2^(bits/2 − 100)`, and
        /// d = e⁻¹ mod lcm(p − 1, q − 1). The inverses are computed with variable-time Euclid.
        /// - Throws: ``RampartError/invalidParameter(_:)`` unless `bits` is a multiple of 128 between
        ///   1024 and 8192.
        public static func generate<R: RandomNumberGenerator>(bits: Int = 2048, using rng: inout R) throws(RampartError) -> PrivateKey {
            guard bits % 128 == 0, (1024...8192).contains(bits) else { throw .invalidParameter("bits") }
            let e = BigUInt(65537), one = BigUInt(1)
            while true {
                // Every secret intermediate is wiped when the attempt ends; the key keeps its own copies.
                var p = try BigUInt.randomPrime(bits: bits / 2, coprimeTo: e, using: &rng)
                var q = try BigUInt.randomPrime(bits: bits / 2, coprimeTo: e, using: &rng)
                var diff = BigUInt(), p1 = BigUInt(), q1 = BigUInt(), g = BigUInt(), phi = BigUInt(), lambda = BigUInt()
                var d = BigUInt(), qinv = BigUInt(), dp = BigUInt(), dq = BigUInt()
                defer {
                    p.wipe(); q.wipe(); diff.wipe(); p1.wipe(); q1.wipe(); g.wipe(); phi.wipe(); lambda.wipe()
                    d.wipe(); qinv.wipe(); dp.wipe(); dq.wipe()
                }
                if p < q { swap(&p, &q) }
                diff = p.subtracting(knownSmaller: q)  // q ≤ p after the swap
                guard diff.bitWidth > bits / 2 - 100 else { continue }
                let n = p * q
                guard n.bitWidth == bits else { continue }
                // Assigned straight into the wiped variables (an optional binding would be a second,
                // unwiped reference to the same buffer).
                p1 = p.subtracting(knownSmaller: one)  // generated primes: above one
                q1 = q.subtracting(knownSmaller: one)
                g = BigUInt.gcd(p1, q1)
                phi = p1 * q1
                lambda = (try? phi.quotientAndRemainder(dividingBy: g).quotient) ?? BigUInt()
                d = (try? e.inverse(modulo: lambda)) ?? BigUInt()
                guard d.bitWidth > bits / 2 else { continue }
                // q⁻¹ mod p = q^(p−2) mod p (p is prime): constant time, and every intermediate lives
                // in wiped Montgomery storage (extended Euclid left copies of p in freed memory).
                var pm2 = p.subtracting(knownSmaller: BigUInt(2))  // p is a generated prime above 2
                qinv = (try? Modulus(p))?.constantTimePower(q, pm2) ?? BigUInt()
                pm2.wipe()
                guard !qinv.isZero else { continue }
                dp = try d.remainder(dividingBy: p1)
                dq = try d.remainder(dividingBy: q1)
                return try PrivateKey(modulus: n, publicExponent: e, privateExponent: d, prime1: p, prime2: q,
                                      exponent1: dp, exponent2: dq, coefficient: qinv)
            }
        }

        /// Calls `body` with every memory region that holds a secret of this key (for the
        /// constant-time checker, which marks them).
        package func withSecretRegions(_ body: (UnsafeRawBufferPointer) -> Void) {
            for x in secrets.all { body(UnsafeRawBufferPointer(start: x.base, count: x.count * 8)) }
            for mod in [modP, modQ] { mod.withSecretRegion(body) }
        }

        /// Parses PKCS#1 PEM (`BEGIN RSA PRIVATE KEY`, version 0, two primes).
        ///
        /// - Throws: ``RampartError/invalidDER(_:)``, ``RampartError/invalidRSAKey``.
        public init(pemRepresentation pem: String) throws(RampartError) {
            var blocks = try PEM.decodeAll(pem)
            // Wiped in place: no other reference to the decoded DER is kept.
            defer { for i in blocks.indices { blocks[i].der.secureWipe() } }
            guard blocks.count == 1, blocks[0].label == "RSA PRIVATE KEY" else { throw .invalidDER(.invalidPEM) }
            try self.init(pkcs1DERRepresentation: blocks[0].der)
        }

        /// Parses PKCS#1 `RSAPrivateKey` DER (version 0).
        public init(pkcs1DERRepresentation der: [UInt8]) throws(RampartError) {
            var top = DERReader(der)
            var seq = try top.element(0x30)
            try top.finish()
            guard try seq.smallInteger() == 0 else { throw .invalidDER(.unsupported) }
            let n = try seq.positiveInteger(), e = try seq.positiveInteger()
            var d = try seq.positiveInteger(), p = try seq.positiveInteger(), q = try seq.positiveInteger()
            var dp = try seq.positiveInteger(), dq = try seq.positiveInteger(), qinv = try seq.positiveInteger()
            defer { d.wipe(); p.wipe(); q.wipe(); dp.wipe(); dq.wipe(); qinv.wipe() }
            try seq.finish()
            try self.init(modulus: n, publicExponent: e, privateExponent: d, prime1: p, prime2: q,
                          exponent1: dp, exponent2: dq, coefficient: qinv)
        }

        /// PKCS#1 `RSAPrivateKey` DER. Holds the secret: wipe it (`secureWipe()`) when done.
        public var pkcs1DERRepresentation: [UInt8] {
            var parts = [DERWriter.element(0x02, [0]), DERWriter.integer(publicKey.modulus),
                         DERWriter.integer(publicKey.publicExponent)]
            for limbs in secrets.all {
                var x = limbs.value
                parts.append(DERWriter.secretInteger(x))
                x.wipe()
            }
            let der = DERWriter.secretSequence(parts)
            for i in parts.indices { parts[i].secureWipe() }
            return der
        }

        /// PKCS#1 PEM (`BEGIN RSA PRIVATE KEY`).
        public var pemRepresentation: String {
            var der = pkcs1DERRepresentation
            defer { der.secureWipe() }
            return PEM.encode(label: "RSA PRIVATE KEY", der: der)
        }

        /// The raw private operation `x^d mod n` with the CRT, in constant time with respect to the
        /// secret values (the input reductions, both exponentiations, the recombination and the
        /// check), followed by a fault check with the public exponent (a miscomputed CRT half would
        /// leak a factor of n). Input and output as in ``PublicKey/rawPublic(_:)``.
        ///
        /// - Throws: ``RampartError/invalidRSAKey`` for an input not below n (or a failed fault check).
        public func rawPrivate<C: Collection<UInt8>>(_ input: C) throws(RampartError) -> [UInt8] {
            let k = publicKey.byteCount
            guard input.count <= k else { throw .invalidRSAKey }
            let c = BigUInt(bigEndian: input)
            guard c < publicKey.modulus else { throw .invalidRSAKey }
            let s = secrets
            let np = modP.limbCount, nq = modQ.limbCount, nn = publicKey.modulus.limbs.count
            let cl = Modulus.padded(c, nn)
            // m1 = c^dp mod p, m2 = c^dq mod q
            var m1 = modP.reduceCT(cl), m2 = modQ.reduceCT(cl)
            if np == nq {
                // Both halves at once where the kernel can (interleaved IFMA products for 1024-bit primes).
                m1.withUnsafeMutableBufferPointer { b1 in m2.withUnsafeMutableBufferPointer { b2 in
                    Modulus.powerCTPair(modP, b1.baseAddress!, b1.baseAddress!, s.dp.pointer,
                                        modQ, b2.baseAddress!, b2.baseAddress!, s.dq.pointer, expLimbs: np)
                } }
            } else {
                m1.withUnsafeMutableBufferPointer { b in modP.powerCT(b.baseAddress!, b.baseAddress!, s.dp.pointer, np) }
                m2.withUnsafeMutableBufferPointer { b in modQ.powerCT(b.baseAddress!, b.baseAddress!, s.dq.pointer, nq) }
            }
            // h = qinv · (m1 − m2) mod p
            var m2p = modP.reduceCT(m2)
            var h0 = modP.subtractCT(m1, m2p)
            var h = modP.multiplyCT(h0, s.qinv.pointer)
            // m = m2 + h · q (fixed lengths: np + nq limbs)
            var m = [UInt64](repeating: 0, count: np + nq)
            m.withUnsafeMutableBufferPointer { pm in h.withUnsafeBufferPointer { ph in
                LimbMath.multiply(pm.baseAddress!, ph.baseAddress!, np, s.q.pointer, nq)
            } }
            var carry: UInt64 = 0
            for i in 0..<(np + nq) {
                let (s1, o1) = m[i].addingReportingOverflow(i < nq ? m2[i] : 0)
                let (s2, o2) = s1.addingReportingOverflow(carry)
                m[i] = s2
                carry = ctBit(o1) &+ ctBit(o2)
            }
            // Fault check on fixed-width limbs: m^e mod n must give c back (m < n < R, so the low nn
            // limbs hold all of m; the sliding window follows the public e only).
            var mm = [UInt64](repeating: 0, count: nn), check = [UInt64](repeating: 0, count: nn)
            for i in 0..<min(nn, np + nq) { mm[i] = m[i] }
            let e = publicKey.publicExponent.limbs
            mm.withUnsafeBufferPointer { pb in check.withUnsafeMutableBufferPointer { pc in e.withUnsafeBufferPointer { pe in
                publicKey.montgomery.powerVT(pc.baseAddress!, pb.baseAddress!, pe.baseAddress, pe.count, montgomeryOut: false)
            } } }
            // Public by design (through ConstantTime.equals): whether the check passed.
            let ok = check.withUnsafeBytes { a in cl.withUnsafeBytes { b in ConstantTime.equals(a, b) } }
            var out = LimbMath.bigEndianBytes(mm, count: k)
            for wipe in [{ m1.withUnsafeMutableBytes { secureZero($0) } }, { m2.withUnsafeMutableBytes { secureZero($0) } },
                         { m2p.withUnsafeMutableBytes { secureZero($0) } }, { h0.withUnsafeMutableBytes { secureZero($0) } },
                         { h.withUnsafeMutableBytes { secureZero($0) } }, { m.withUnsafeMutableBytes { secureZero($0) } },
                         { mm.withUnsafeMutableBytes { secureZero($0) } }] as [() -> Void] { wipe() }
            guard ok else {
                out.secureWipe()
                throw .invalidRSAKey
            }
            return out
        }
    }
}

extension Modulus {
    /// `x mod m` for a limb array of any length, in constant time for that length: Horner's rule over
    /// chunks of n limbs in Montgomery arithmetic. Returns n limbs.
    func reduceCT(_ x: [UInt64]) -> [UInt64] {
        let n = limbCount
        var acc = [UInt64](repeating: 0, count: n)
        let chunks = (x.count + n - 1) / n
        withWorkspace(limbs: 3 * n + 2) { ws in
            let chunk = ws, tmp = ws + n, t = tmp + n
            let pm = m
            acc.withUnsafeMutableBufferPointer { pa in
                let a = pa.baseAddress!
                var k = chunks - 1
                while k >= 0 {
                    // acc = acc · R mod m
                    Montgomery.mul(a, a, rr, pm, n, m0inv, t, hardware)
                    // chunk mod m = (chunk · R² / R) · 1 / R
                    for j in 0..<n { chunk[j] = k * n + j < x.count ? x[k * n + j] : 0 }
                    Montgomery.mul(tmp, chunk, rr, pm, n, m0inv, t, hardware)
                    for j in 0..<n { chunk[j] = 0 }
                    chunk[0] = 1
                    Montgomery.mul(tmp, tmp, chunk, pm, n, m0inv, t, hardware)
                    Modulus.addModCT(a, tmp, pm, n, t)
                    k -= 1
                }
            }
        }
        return acc
    }

    /// `a − b mod m` for reduced n-limb values, constant time.
    func subtractCT(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        let n = limbCount
        var r = [UInt64](repeating: 0, count: n)
        var borrow: UInt64 = 0
        for j in 0..<n {
            let (d1, o1) = a[j].subtractingReportingOverflow(b[j])
            let (d2, o2) = d1.subtractingReportingOverflow(borrow)
            r[j] = d2
            borrow = ctBit(o1) &+ ctBit(o2)
        }
        // Add m back when the difference went negative.
        let mask = 0 &- borrow
        var carry: UInt64 = 0
        for j in 0..<n {
            let (s1, o1) = r[j].addingReportingOverflow(m[j] & mask)
            let (s2, o2) = s1.addingReportingOverflow(carry)
            r[j] = s2
            carry = ctBit(o1) &+ ctBit(o2)
        }
        return r
    }

    /// `a · b mod m` for reduced n-limb values, constant time (two Montgomery products).
    func multiplyCT(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        b.withUnsafeBufferPointer { multiplyCT(a, $0.baseAddress!) }
    }

    /// `a · b mod m` for reduced n-limb values (`b` a raw n-limb buffer), constant time.
    func multiplyCT(_ a: [UInt64], _ b: UnsafePointer<UInt64>) -> [UInt64] {
        let n = limbCount
        var r = [UInt64](repeating: 0, count: n)
        withWorkspace(limbs: n + 2) { t in
            a.withUnsafeBufferPointer { pa in r.withUnsafeMutableBufferPointer { pr in
                Montgomery.mul(pr.baseAddress!, pa.baseAddress!, b, m, n, m0inv, t, hardware)
                Montgomery.mul(pr.baseAddress!, pr.baseAddress!, rr, m, n, m0inv, t, hardware)
            } }
        }
        return r
    }

    /// Calls `body` with the memory holding m and its constants (for the constant-time checker).
    package func withSecretRegion(_ body: (UnsafeRawBufferPointer) -> Void) {
        withExtendedLifetime(storage) { body(UnsafeRawBufferPointer(start: storage.base, count: storage.count * 8)) }
    }

    /// `a = a + b mod m` for reduced values, constant time. `t` is n + 2 limbs of scratch.
    static func addModCT(_ a: UnsafeMutablePointer<UInt64>, _ b: UnsafePointer<UInt64>, _ m: UnsafePointer<UInt64>,
                         _ n: Int, _ t: UnsafeMutablePointer<UInt64>) {
        var carry: UInt64 = 0
        for j in 0..<n {
            let (s1, o1) = a[j].addingReportingOverflow(b[j])
            let (s2, o2) = s1.addingReportingOverflow(carry)
            t[j] = s2
            carry = ctBit(o1) &+ ctBit(o2)
        }
        Montgomery.subtractIfAtLeast(a, t, carry, m, n)
    }
}
