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
            try spki.rsaAlgorithmIdentifier()
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
        /// n = p·q, dp = d mod (p − 1), dq = d mod (q − 1), qinv < p, q·qinv ≡ 1 (mod p),
        /// e·dp ≡ 1 (mod p − 1), e·dq ≡ 1 (mod q − 1), and d fits in n's limbs. Primality of p and q is
        /// not re-tested. The key keeps its own copies of the numbers; the caller's values are not
        /// retained (wipe them with `wipe()`).
        ///
        /// The checks run in fixed-width constant-time arithmetic (``init(modulus:publicExponent:fixedWidth:)``),
        /// but a `BigUInt` shows its limb count: keys parsed from DER or PEM never become one.
        ///
        /// - Throws: ``RampartError/invalidRSAKey`` when a check fails.
        public init(modulus n: BigUInt, publicExponent e: BigUInt, privateExponent d: BigUInt, prime1 p: BigUInt, prime2 q: BigUInt,
                    exponent1 dp: BigUInt, exponent2 dq: BigUInt, coefficient qinv: BigUInt) throws(RampartError) {
            try self.init(modulus: n, publicExponent: e,
                          fixedWidth: (d: d.limbs, p: p.limbs, q: q.limbs, dp: dp.limbs, dq: dq.limbs, qinv: qinv.limbs))
        }

        /// Builds a key from its public numbers and its secret ones as little-endian limbs of any
        /// width (DER's fixed widths, with zero limbs on top allowed), checking the consistency
        /// conditions of ``init(modulus:publicExponent:privateExponent:prime1:prime2:exponent1:exponent2:coefficient:)``
        /// in time that depends on the limb counts only.
        ///
        /// Public by design, and made so at these points only: the significant limb counts of p and q
        /// (declassified in `BigUInt(secretLimbs:)`: a `Modulus` has a public limb count, and these
        /// follow from n's up to one limb), whether p and q are usable moduli (odd and above one:
        /// declassified in `Modulus.init`), and the one bit that says whether every other check
        /// passed. The checks: n = p·q by a schoolbook product compared with masks; d mod (p − 1) and
        /// e·dp mod (p − 1) by `LimbMath.reduceCT` (word-serial division without a divide instruction,
        /// any parity; p − 1 is p with its low bit cleared, p being odd); q·qinv mod p by Montgomery
        /// products modulo p; qinv < p by a borrow.
        init(modulus n: BigUInt, publicExponent e: BigUInt,
             fixedWidth s: (d: [UInt64], p: [UInt64], q: [UInt64], dp: [UInt64], dq: [UInt64], qinv: [UInt64])) throws(RampartError) {
            publicKey = try PublicKey(modulus: n, publicExponent: e)
            var pv = BigUInt(secretLimbs: s.p), qv = BigUInt(secretLimbs: s.q)
            defer { pv.wipe(); qv.wipe() }
            let nn = n.limbs.count, np = pv.limbs.count, nq = qv.limbs.count, ne = e.limbs.count
            // p·q has np + nq or np + nq − 1 limbs (public counts): anything else cannot be n (and an
            // absurdly long p or q costs nothing more).
            guard np > 0, nq > 0, nn <= np + nq, np + nq <= nn + 1 else { throw .invalidRSAKey }
            let mp: Modulus, mq: Modulus
            do { mp = try Modulus(pv); mq = try Modulus(qv) } catch { throw .invalidRSAKey }
            let k = max(np, nq)
            // Layout: d (nn) | p, p − 1, dp, qinv (np each) | q, q − 1, dq (nq each) | p·q, n (np + nq each)
            //         | e·dp or e·dq (ne + k) | r (k), t (k + 1)
            let ws = 4 * np + 3 * nq + 2 * (np + nq) + (ne + k) + 2 * k + 1 + nn
            let (ok, stored) = Modulus.withWorkspace(limbs: ws) { w -> (UInt64, Secrets) in
                let d = w, p = d + nn, p1 = p + np, dp = p1 + np, qinv = dp + np
                let q = qinv + np, q1 = q + nq, dq = q1 + nq, pq = dq + nq, nPad = pq + np + nq
                let ed = nPad + np + nq, r = ed + ne + k, t = r + k
                var ok = ~UInt64(0)
                // The numbers at their widths (the limbs of p and q beyond np and nq are zero: that is
                // how np and nq were found); d, dp, dq and qinv must fit theirs.
                _ = LimbMath.fit(s.p, into: p, np)
                _ = LimbMath.fit(s.q, into: q, nq)
                ok &= ~LimbMath.fit(s.d, into: d, nn)
                ok &= ~LimbMath.fit(s.dp, into: dp, np)
                ok &= ~LimbMath.fit(s.dq, into: dq, nq)
                ok &= ~LimbMath.fit(s.qinv, into: qinv, np)
                // n = p·q.
                LimbMath.multiply(pq, p, np, q, nq)
                n.limbs.withUnsafeBufferPointer { nPad.update(from: $0.baseAddress!, count: nn) }
                ok &= LimbMath.equalMask(pq, nPad, np + nq)
                // p − 1 and q − 1: p and q are odd (Modulus.init refused them otherwise).
                p1.update(from: p, count: np)
                p1[0] &= ~1
                q1.update(from: q, count: nq)
                q1[0] &= ~1
                // dp = d mod (p − 1), dq = d mod (q − 1).
                LimbMath.reduceCT(r, d, nn, modulo: p1, np, scratch: t)
                ok &= LimbMath.equalMask(r, dp, np)
                LimbMath.reduceCT(r, d, nn, modulo: q1, nq, scratch: t)
                ok &= LimbMath.equalMask(r, dq, nq)
                // e·dp ≡ 1 (mod p − 1), e·dq ≡ 1 (mod q − 1).
                e.limbs.withUnsafeBufferPointer { pe in
                    LimbMath.multiply(ed, pe.baseAddress!, ne, dp, np)
                    LimbMath.reduceCT(r, ed, ne + np, modulo: p1, np, scratch: t)
                    ok &= LimbMath.isOneMask(r, np)
                    LimbMath.multiply(ed, pe.baseAddress!, ne, dq, nq)
                    LimbMath.reduceCT(r, ed, ne + nq, modulo: q1, nq, scratch: t)
                    ok &= LimbMath.isOneMask(r, nq)
                }
                // qinv < p and q·qinv ≡ 1 (mod p) (q reduced modulo p first: PKCS#1 does not order p and q).
                ok &= LimbMath.lessMask(qinv, p, np)
                var qCopy = Array(UnsafeBufferPointer(start: q, count: nq))
                var qModP = mp.reduceCT(qCopy)
                var product = mp.multiplyCT(qModP, qinv)
                ok &= product.withUnsafeBufferPointer { LimbMath.isOneMask($0.baseAddress!, np) }
                qCopy.secureWipe()
                qModP.secureWipe()
                product.secureWipe()
                let stored = Secrets(d: SecretLimbs(copying: d, count: nn), p: SecretLimbs(copying: p, count: np),
                                     q: SecretLimbs(copying: q, count: nq), dp: SecretLimbs(copying: dp, count: np),
                                     dq: SecretLimbs(copying: dq, count: nq), qinv: SecretLimbs(copying: qinv, count: np))
                return (ok, stored)
            }
            // Public by design: whether the key is consistent (it is loaded or refused); which check
            // failed is not released.
            guard declassified(ok) == ~UInt64(0) else { throw .invalidRSAKey }
            secrets = stored
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

        /// Parses PEM: `BEGIN RSA PRIVATE KEY` (PKCS#1, version 0, two primes) or `BEGIN PRIVATE KEY`
        /// (PKCS#8 with rsaEncryption, what `openssl genpkey` and most libraries write). The text must
        /// hold exactly one block; lines may end in LF or CRLF.
        ///
        /// - Throws: ``RampartError/invalidDER(_:)``, ``RampartError/invalidRSAKey``.
        public init(pemRepresentation pem: String) throws(RampartError) {
            var blocks = try PEM.decodeAll(pem)
            // Wiped in place: no other reference to the decoded DER is kept.
            defer { for i in blocks.indices { blocks[i].der.secureWipe() } }
            guard blocks.count == 1 else { throw .invalidDER(.invalidPEM) }
            switch blocks[0].label {
            case "RSA PRIVATE KEY": try self.init(pkcs1DERRepresentation: blocks[0].der)
            case "PRIVATE KEY": try self.init(pkcs8DERRepresentation: blocks[0].der)
            default: throw .invalidDER(.invalidPEM)
            }
        }

        /// Parses a PKCS#8 `PrivateKeyInfo` (RFC 5208; version 0, algorithm rsaEncryption with NULL
        /// parameters, no attributes) around PKCS#1 `RSAPrivateKey` DER.
        ///
        /// Read as ``init(pkcs1DERRepresentation:)`` reads PKCS#1, in place (no copy of the inner
        /// key); the wrapper's version and algorithm identifier are public by design.
        public init(pkcs8DERRepresentation der: [UInt8]) throws(RampartError) {
            var top = DERReader(der)
            var info = try top.element(0x30)
            try top.finish()
            guard try info.smallInteger() == 0 else { throw .invalidDER(.unsupported) }
            try info.rsaAlgorithmIdentifier()
            var key = try info.element(0x04)
            try info.finish()
            try self.init(rsaPrivateKey: &key)
        }

        /// Parses PKCS#1 `RSAPrivateKey` DER (version 0).
        ///
        /// The DER may be treated as secret as a whole: the reader makes public only its structure
        /// (tags and lengths), the version, n and e, and whether each secret integer is well formed
        /// (`DERReader`); the secret integers are read at the fixed width their lengths give and
        /// checked in constant time (``init(modulus:publicExponent:fixedWidth:)``).
        public init(pkcs1DERRepresentation der: [UInt8]) throws(RampartError) {
            var top = DERReader(der)
            try self.init(rsaPrivateKey: &top)
        }

        /// Reads `RSAPrivateKey` DER that fills `top` (PKCS#1 alone, or PKCS#8's OCTET STRING).
        init(rsaPrivateKey top: inout DERReader) throws(RampartError) {
            var seq = try top.element(0x30)
            try top.finish()
            guard try seq.smallInteger() == 0 else { throw .invalidDER(.unsupported) }
            let n = try seq.positiveInteger(), e = try seq.positiveInteger()
            var d = [UInt64](), p = [UInt64](), q = [UInt64](), dp = [UInt64](), dq = [UInt64](), qinv = [UInt64]()
            defer { d.secureWipe(); p.secureWipe(); q.secureWipe(); dp.secureWipe(); dq.secureWipe(); qinv.secureWipe() }
            d = try seq.secretInteger()
            p = try seq.secretInteger()
            q = try seq.secretInteger()
            dp = try seq.secretInteger()
            dq = try seq.secretInteger()
            qinv = try seq.secretInteger()
            try seq.finish()
            try self.init(modulus: n, publicExponent: e, fixedWidth: (d: d, p: p, q: q, dp: dp, dq: dq, qinv: qinv))
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

        /// PKCS#8 `PrivateKeyInfo` DER (version 0, rsaEncryption). Holds the secret: wipe it
        /// (`secureWipe()`) when done.
        public var pkcs8DERRepresentation: [UInt8] {
            var inner = pkcs1DERRepresentation
            defer { inner.secureWipe() }
            var octets = DERWriter.secretElement(0x04, inner)
            defer { octets.secureWipe() }
            return DERWriter.secretSequence([DERWriter.element(0x02, [0]), RSA.rsaAlgorithmIdentifier, octets])
        }

        /// PKCS#8 PEM (`BEGIN PRIVATE KEY`).
        public var pkcs8PEMRepresentation: String {
            var der = pkcs8DERRepresentation
            defer { der.secureWipe() }
            return PEM.encode(label: "PRIVATE KEY", der: der)
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
