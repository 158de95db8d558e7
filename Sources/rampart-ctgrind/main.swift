// rampart-ctgrind: constant time, checked mechanically (the ctgrind method).
//
// Every case marks its secrets as undefined for valgrind's memcheck (a client request; no effect
// outside valgrind) and runs one secret-handling operation. Memcheck then reports every conditional
// jump and every memory address that depends on a secret. Values that are public by design are
// declassified: in the library at the commented `declassify` points (a comparison's outcome, an
// authenticated plaintext), and here for what the protocol puts on the wire (a ciphertext, a public
// key) and for the results a case checks.
//
// Usage (Scripts/ctgrind.sh runs it in CI):
//   valgrind --tool=memcheck rampart-ctgrind run [CASE...]   every case, or the named ones
//   rampart-ctgrind list                                     the case names
// `run` prints one line per case with the number of memcheck errors it caused and exits 1 when a
// case that must be clean reported errors or when a canary (a deliberate leak that proves the check
// works) reported none. Outside valgrind `run` only checks that the cases compute correct results.

@_spi(Testing) import Rampart
import RampartMTProto
import RampartCodecs
@_spi(Testing) import RampartThreema
import RampartTestSupport
import RampartTestSupportC

#if canImport(Glibc)
import Glibc
#endif

// MARK: Marking

/// Marks the bytes of `a` as secret (undefined for memcheck).
func secret(_ a: [UInt8]) { a.withUnsafeBytes { rampart_ct_secret($0.baseAddress, $0.count) } }
/// Marks the bytes of `a` as public again.
func publish(_ a: [UInt8]) { a.withUnsafeBytes { rampart_ct_public($0.baseAddress, $0.count) } }
/// Marks the limbs of a number as secret.
func secret(_ x: BigUInt) { x.withUnsafeLimbBytes { rampart_ct_secret($0.baseAddress, $0.count) } }
/// A public copy of `x` (its value checked by the case).
func published(_ x: BigUInt) -> BigUInt { x.withUnsafeLimbBytes { rampart_ct_public($0.baseAddress, $0.count) }; return x }
/// A public copy of `a` (its value checked by the case, or put on the wire).
func published(_ a: [UInt8]) -> [UInt8] { publish(a); return a }
/// The key's bytes, public (for results a case checks).
func published(_ k: SymmetricKey) -> [UInt8] { published(k.withUnsafeBytes { Array($0) }) }
/// A public copy of a value.
func published<T: BitwiseCopyable>(_ v: T) -> T {
    var x = v
    withUnsafeMutableBytes(of: &x) { rampart_ct_public($0.baseAddress, $0.count) }
    return x
}

struct CheckFailed: Error, CustomStringConvertible {
    var description: String
}

func check(_ ok: Bool, _ what: @autoclosure () -> String) throws {
    if !published(ok) { throw CheckFailed(description: what()) }
}

// MARK: Cases

struct Case {
    let name: String
    /// A canary must be reported: it proves that marking and reporting work.
    var canary = false
    let body: () throws -> Void
}

var cases: [Case] = []

@MainActor func add(_ name: String, canary: Bool = false, _ body: @escaping () throws -> Void) {
    cases.append(Case(name: name, canary: canary, body: body))
}

// Canaries: a branch on a secret and a secret-indexed load. Both must be reported.
@inline(never) func leakyBranch(_ s: [UInt8]) -> Int {
    var n = 0
    for b in s where b & 1 == 1 { n += 1 }
    return n
}
let canaryTable: [UInt8] = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 7) }
@inline(never) func leakyLookup(_ s: [UInt8]) -> UInt8 {
    var acc: UInt8 = 0
    for b in s { acc ^= canaryTable[Int(b)] }
    return acc
}

add("canary-branch", canary: true) {
    var rng = SplitMix64(seed: 1)
    let s = rng.bytes(16)
    secret(s)
    _ = published(leakyBranch(s))
}
add("canary-lookup", canary: true) {
    var rng = SplitMix64(seed: 2)
    let s = rng.bytes(16)
    secret(s)
    _ = published(leakyLookup(s))
}

// AES: key expansion and every mode with a secret key and secret plaintext, on both backends.
for backend in [Backend.portable, Backend.hardware] {
    let bname = backend == .portable ? "portable" : "hardware"
    for keyBytes in [16, 24, 32] {
        add("aes\(keyBytes * 8)-\(bname)") {
            var rng = SplitMix64(seed: UInt64(keyBytes))
            let key = rng.bytes(keyBytes), plain = rng.bytes(96), iv32 = rng.bytes(32), iv16 = rng.bytes(16)
            secret(key)
            secret(plain)
            let cipher = try AES.Cipher(key: key, backend: backend)
            let ige = try AES.IGE.encrypt(plain, using: cipher, iv: iv32)
            let igeBack = try AES.IGE.decrypt(published(ige), using: cipher, iv: iv32)
            try check(published(igeBack) == published(plain), "IGE round trip")
            let cbc = try AES.CBC.encrypt(plain, using: cipher, iv: iv16)
            _ = try AES.CBC.decrypt(published(cbc), using: cipher, iv: iv16)
            let ctr = try AES.CTR(cipher: cipher, counter: iv16)
            _ = published(ctr.process(plain))
            // PKCS#7: the padding check's outcome is public; the padding bytes are not.
            var padded = plain + [UInt8](repeating: 0, count: 16)
            let n = try padded.withUnsafeMutableBytes { b in
                try iv16.withUnsafeBytes { v in try AES.CBC.encryptPKCS7(b, messageCount: plain.count, using: cipher, iv: v) }
            }
            var ct = published(Array(padded[0..<n]))
            let m = try ct.withUnsafeMutableBytes { b in
                try iv16.withUnsafeBytes { v in try AES.CBC.decryptPKCS7(b, using: cipher, iv: v) }
            }
            try check(m == plain.count, "PKCS#7 round trip")
        }
        add("aes\(keyBytes * 8)-gcm-\(bname)") {
            var rng = SplitMix64(seed: 100 + UInt64(keyBytes))
            // 67 bytes: the 128-bit kernel; 600 bytes: the wide (VAES) kernel where it runs, then the 128-bit tail.
            for size in [67, 600] {
            let key = rng.bytes(keyBytes), plain = rng.bytes(size), aad = rng.bytes(13)
            secret(key)
            secret(plain)
            // Both kinds of cipher: the GHASH table made per call, and made once by init(gcmKey:).
            for cipher in [try AES.Cipher(key: key, backend: backend),
                           try AES.Cipher(gcmKey: SymmetricKey(data: key).pinned(to: backend))] {
            let nonce = try AES.GCM.Nonce(data: rng.bytes(12))
            let box = try AES.GCM.seal(plain, using: cipher, nonce: nonce, authenticating: aad)
            let wire = try AES.GCM.SealedBox(combined: published(box.combined!))
            let opened = try AES.GCM.open(wire, using: cipher, authenticating: aad)
            try check(published(opened) == published(plain), "GCM round trip")
            var forged = wire.combined!
            forged[forged.count - 1] ^= 1
            let bad = try AES.GCM.SealedBox(combined: forged)
            var refused = false
            do { _ = try AES.GCM.open(bad, using: cipher, authenticating: aad) } catch { refused = true }
            try check(refused, "GCM forgery refused")
            }
            }
        }
    }
}

add("x25519") {
    var rng = SplitMix64(seed: 7)
    let a = rng.bytes(32), b = rng.bytes(32)
    let alice = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: a)
    let bob = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: b)
    // The public keys are public.
    let pa = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: published(alice.publicKey.rawRepresentation))
    let pb = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: published(bob.publicKey.rawRepresentation))
    secret(a)
    secret(b)
    let alice2 = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: a)
    let bob2 = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: b)
    _ = published(alice2.publicKey.rawRepresentation)
    let s1 = try alice2.sharedSecretFromKeyAgreement(with: pb)
    let s2 = try bob2.sharedSecretFromKeyAgreement(with: pa)
    try check(s1 == s2, "X25519 agreement")
    let raw = try Curve25519.scalarMultiply(scalar: a, point: published(pb.rawRepresentation))
    _ = published(raw)
    // A secret u-coordinate as well (non-canonical, ignored top bit set), through the kernel
    // (Kernels.x25519, when active) and the portable ladder.
    var u = rng.bytes(32)
    u[31] |= 0x80
    secret(u)
    for backend in [Backend.hardware, .portable] {
        _ = published(try Curve25519.scalarMultiply(scalar: a, point: u, backend: backend))
    }
}

add("x25519-batch") {
    // Nine pairs with secret scalars and secret points (a full batch of eight through each lane kernel
    // valgrind can run, and one alone), then a fan-out key agreement with nine public peers.
    var rng = SplitMix64(seed: 17)
    let scalars = (0..<9).map { _ in rng.bytes(32) }, points = (0..<9).map { _ in rng.bytes(32) }
    for x in scalars + points { secret(x) }
    let r = try Curve25519.scalarMultiply(scalars: scalars, points: points)
    for x in r { _ = published(x) }
    // The AVX2 build of the lane kernel, which the registry does not select (valgrind runs no AVX-512).
    for kernel in Curve25519.x25519LaneKernels {
        _ = try Curve25519.scalarMultiply(scalars: scalars, points: points, backend: .hardware, laneKernel: kernel).map(published)
    }
    let me = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: scalars[0])
    let peers = try (0..<9).map { _ in
        try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: rng.bytes(32)).publicKey
    }
    let shared = try me.sharedSecretsFromKeyAgreement(with: peers)
    try check(shared[3] == (try me.sharedSecretFromKeyAgreement(with: peers[3])), "X25519 fan-out")
}

add("poly1305") {
    // 75 bytes stay in the scalar code; 600, 1300 and 4100 bytes (37 to 256 full blocks) reach
    // Kernels.poly1305's kernel where it is active (under valgrind the AVX2 one: AVX-512 is hidden),
    // then the portable code must agree.
    var rng = SplitMix64(seed: 8)
    for size in [75, 600, 1300, 4100] {
        let key = rng.bytes(32), msg = rng.bytes(size)
        secret(key)
        secret(msg)
        let k = SymmetricKey(data: key)
        let tag = try Poly1305.authenticationCode(for: msg, using: k)
        let wire = published(Array(tag))
        try check(try Poly1305.isValidAuthenticationCode(wire, authenticating: msg, using: k), "Poly1305 verify")
        try check(published(Array(try Poly1305.authenticationCode(for: msg, using: k.pinned(to: .portable)))) == wire,
                  "Poly1305 kernel and portable code agree")
        var bad = wire
        bad[0] ^= 1
        try check(!(try Poly1305.isValidAuthenticationCode(bad, authenticating: msg, using: k)), "Poly1305 forgery")
    }
}

for backend in [Backend.portable, Backend.hardware] {
    let bname = backend == .portable ? "portable" : "hardware"
    add("secretbox-\(bname)") {
        // Every keystream shape of the short path (1, 2, 4 or 8 blocks at once) and the long one.
        var rng = SplitMix64(seed: 9)
        for size in [100, 20, 90, 200, 450, 1200] {
            let key = rng.bytes(32), msg = rng.bytes(size), nonce = rng.bytes(24)
            secret(key)
            secret(msg)
            let k = SymmetricKey(data: key)
            let box = published(try SecretBox.seal(msg, using: k.pinned(to: backend), nonce: nonce))
            let opened = try SecretBox.open(box, using: k.pinned(to: backend), nonce: nonce)
            try check(published(opened) == published(msg), "secretbox round trip")
            var bad = box
            bad[3] ^= 0x40
            var refused = false
            do { _ = try SecretBox.open(bad, using: k.pinned(to: backend), nonce: nonce) } catch { refused = true }
            try check(refused, "secretbox forgery refused")
        }
    }
}

add("xsalsa20") {
    // The one-shot XOR (HSalsa20, the four-block code, the one- and four-block tails, the AVX2 kernel)
    // and a stream split across calls, on both backends.
    var rng = SplitMix64(seed: 17)
    for backend in [Backend.portable, Backend.hardware] {
        for size in [40, 64, 100, 300, 700, 1100] {
            let key = rng.bytes(32), msg = rng.bytes(size), nonce = rng.bytes(24)
            secret(key)
            secret(msg)
            let k = SymmetricKey(data: key).pinned(to: backend)
            let ct = try XSalsa20.xor(msg, key: k, nonce: nonce)
            var stream = try XSalsa20(key: k, nonce: nonce)
            let first = stream.xor(ct[..<(size / 3)])
            let rest = stream.xor(ct[(size / 3)...])
            try check(published(first + rest) == published(msg), "XSalsa20 round trip")
        }
    }
}

for backend in [Backend.portable, Backend.hardware] {
    let bname = backend == .portable ? "portable" : "hardware"
    add("chacha20poly1305-\(bname)") {
        // 1100 bytes: two AVX2 groups, then the portable four-block path and a tail.
        var rng = SplitMix64(seed: 15)
        let key = rng.bytes(32), msg = rng.bytes(1100), aad = rng.bytes(21)
        let nonce = try ChaChaPoly.Nonce(data: rng.bytes(12))
        secret(key)
        secret(msg)
        let k = SymmetricKey(data: key).pinned(to: backend)
        let box = try ChaChaPoly.seal(msg, using: k, nonce: nonce, authenticating: aad)
        let sealed = try ChaChaPoly.SealedBox(nonce: nonce, ciphertext: published(box.ciphertext), tag: published(box.tag))
        let opened = try ChaChaPoly.open(sealed, using: k, authenticating: aad)
        try check(published(opened) == published(msg), "ChaCha20-Poly1305 round trip")
        // Into a separate buffer (on AVX2 the stitched kernel writes keystream, then the plaintext).
        var into = [UInt8](repeating: 0, count: msg.count)
        try sealed.ciphertext.withUnsafeBytes { c in try into.withUnsafeMutableBytes { o in try sealed.tag.withUnsafeBytes { t in
            try Array(nonce).withUnsafeBytes { n in try aad.withUnsafeBytes { a in
                try ChaChaPoly.open(c, into: o, tag: t, using: k, nonce: n, authenticating: a)
            } }
        } } }
        try check(published(into) == published(msg), "ChaCha20-Poly1305 open into a buffer")
        var bad = sealed.tag
        bad[7] ^= 0x10
        var refused = false
        do { _ = try ChaChaPoly.open(ChaChaPoly.SealedBox(nonce: nonce, ciphertext: sealed.ciphertext, tag: bad), using: k,
                                     authenticating: aad) } catch { refused = true }
        try check(refused, "ChaCha20-Poly1305 forgery refused")
        _ = published(try ChaCha20.xor(msg, key: k, nonce: Array(nonce), counter: 7))
    }
    add("argon2id-\(bname)") {
        // Password and secret undefined: the data-independent half (first pass, slices 0 and 1), G, H'
        // and H0 must not branch or index on them; the data-dependent reference words are declassified
        // inside (Argon2id's documented access pattern), so only that leak is admitted.
        var rng = SplitMix64(seed: 16)
        let pw = rng.bytes(19), pepper = rng.bytes(16), salt = rng.bytes(16)
        secret(pw)
        secret(pepper)
        let tag = try Argon2id.deriveKey(password: pw, salt: salt, iterations: 2, memoryKiB: 64, parallelism: 2,
                                         outputByteCount: 72, secret: pepper, backend: backend)
        _ = published(tag)
    }
}

add("box") {
    var rng = SplitMix64(seed: 10)
    let a = rng.bytes(32), b = rng.bytes(32), msg = rng.bytes(50), nonce = rng.bytes(24)
    let pa = try Curve25519.KeyAgreement.PublicKey(
        rawRepresentation: published(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: a).publicKey.rawRepresentation))
    let pb = try Curve25519.KeyAgreement.PublicKey(
        rawRepresentation: published(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: b).publicKey.rawRepresentation))
    secret(a)
    secret(b)
    secret(msg)
    let alice = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: a)
    let bob = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: b)
    let sealed = published(try Box.seal(msg, nonce: nonce, to: pb, from: alice))
    let opened = try Box.open(sealed, nonce: nonce, from: pa, to: bob)
    try check(published(opened) == published(msg), "box round trip")
    let shared = try Box.SharedKey(publicKey: pa, privateKey: bob)
    var bad = sealed
    bad[20] ^= 1
    var refused = false
    do { _ = try shared.open(bad, nonce: nonce) } catch { refused = true }
    try check(refused, "box forgery refused")
}

add("hmac") {
    var rng = SplitMix64(seed: 11)
    for keyLength in [20, 64, 131] {
        let key = rng.bytes(keyLength), msg = rng.bytes(77)
        secret(key)
        secret(msg)
        let k = SymmetricKey(data: key)
        let t1 = published(Array(HMAC<SHA256>.authenticationCode(for: msg, using: k)))
        try check(HMAC<SHA256>.isValidAuthenticationCode(t1, authenticating: msg, using: k), "HMAC-SHA256 verify")
        let t2 = published(Array(HMAC<SHA512>.authenticationCode(for: msg, using: k)))
        try check(HMAC<SHA512>.isValidAuthenticationCode(t2, authenticating: msg, using: k), "HMAC-SHA512 verify")
        let t3 = published(Array(HMAC<Insecure.SHA1>.authenticationCode(for: msg, using: k)))
        var bad = t3
        bad[5] ^= 1
        try check(!HMAC<Insecure.SHA1>.isValidAuthenticationCode(bad, authenticating: msg, using: k), "HMAC-SHA1 forgery")
    }
}

add("digests") {
    var rng = SplitMix64(seed: 12)
    let a = rng.bytes(200)
    var b = a
    b[199] ^= 1
    secret(a)
    secret(b)
    try check(SHA256.hash(data: a) == SHA256.hash(data: a), "SHA-256 equal")
    try check(SHA256.hash(data: a) != SHA256.hash(data: b), "SHA-256 differ")
    try check(SHA512.hash(data: a) != SHA512.hash(data: b), "SHA-512 differ")
    try check(Insecure.SHA1.hash(data: a) == Insecure.SHA1.hash(data: a), "SHA-1 equal")
    let key = rng.bytes(64)
    secret(key)
    let h1 = try BLAKE2b.hash(data: a, outputByteCount: 64, key: key)
    let h2 = try BLAKE2b.hash(data: b, outputByteCount: 64, key: key)
    try check(h1 != h2, "BLAKE2b differ")
}

add("kdf") {
    var rng = SplitMix64(seed: 13)
    let pw = rng.bytes(23), salt = rng.bytes(16)
    secret(pw)
    let k1 = try PBKDF2.deriveKey(password: pw, salt: salt, prf: .hmacSHA256, iterations: 3, outputByteCount: 40)
    let k2 = try PBKDF2.deriveKey(password: pw, salt: salt, prf: .hmacSHA512, iterations: 2, outputByteCount: 70)
    let k3 = try Scrypt.deriveKey(password: pw, salt: salt, n: 16, r: 2, p: 2, outputByteCount: 64)
    _ = published(k1)
    _ = published(k2)
    _ = published(k3)
}

add("stream") {
    var rng = SplitMix64(seed: 14)
    let key = rng.bytes(32), nonce = rng.bytes(24), data = rng.bytes(300)
    secret(key)
    secret(data)
    _ = published(try XSalsa20.xor(data, key: SymmetricKey(data: key), nonce: nonce))
}

// Montgomery exponentiation: a secret exponent, then a secret base, on the modulus sizes in use.
let prime2048 = try! BigUInt(hex:
    "C71CAEB9C6B1C9048E6C522F70F13F73980D40238E3E21C14934D037563D930F48198A0AA7C14058229493D22530F4DB" +
    "FA336F6E0AC925139543AED44CCE7C3720FD51F69458705AC68CD4FE6B6B13ABDC9746512969328454F18FAF8C595F64" +
    "2477FE96BB2A941D5BCD1D4AC8CC49880708FA9B378E3C4F3A9060BEE67CF9A4A4A695811051907E162753B56B0F6B41" +
    "0DBA74D8A84B2A14B3144E0EF1284754FD17ED950D5965B4B9DD46582DB1178D169C6BC465B0D6FF9CA3928FEF5B9AE4" +
    "E418FC15E83EBEA0F87FA9FF5EED70050DED2849F47BF959D956850CE929851F0D8115F635B105EE2E4E15D04B2454BF" +
    "6F4FADF034B10403119CD8E3B92FCC5B")

for bits in [256, 2048] {
    add("modexp-secret-exponent-\(bits)") {
        var rng = SplitMix64(seed: UInt64(bits))
        let mod = try Modulus(prime2048)
        let g = BigUInt(3)
        let e = BigUInt.random(bits: bits, using: &rng) | BigUInt(1) << (bits - 1)
        let want = mod.publicPower(g, e)
        secret(e)
        let y = mod.constantTimePower(g, e)
        try check(published(y) == want, "g^e")
    }
}
// A size with no unrolled kernel (24 limbs): the generic Montgomery loops (BMI2 with hardware, the
// portable ones with RAMPART_FORCE_PORTABLE=1): RampartKernelSupport/MontgomeryLoops.swift compiled twice.
add("modexp-secret-exponent-1536-generic-loops") {
    var rng = SplitMix64(seed: 1536)
    let m = BigUInt(bigEndian: rng.bytes(192)) | BigUInt(1) | BigUInt(1) << 1535
    let mod = try Modulus(m)
    let g = BigUInt(3)
    let e = BigUInt.random(bits: 1536, using: &rng) | BigUInt(1) << 1535
    let want = mod.publicPower(g, e)
    secret(e)
    let y = mod.constantTimePower(g, e)
    try check(published(y) == want, "g^e mod a 1536-bit modulus")
}
add("modexp-secret-base") {
    var rng = SplitMix64(seed: 3)
    let mod = try Modulus(prime2048)
    let base = try BigUInt.random(below: prime2048, using: &rng)
    let e = BigUInt.random(bits: 2048, using: &rng)
    let want = mod.publicPower(base, e)
    secret(base)
    secret(e)
    let y = mod.constantTimePower(base, e)
    try check(published(y) == want, "b^e")
}

// Diffie-Hellman at fixed width, as both MTProto handshake sides compute g^a and g_b^a.
add("dh-fixed-width") {
    var rng = SplitMix64(seed: 6)
    let mod = try Modulus(prime2048)
    let a = BigUInt(bigEndian: rng.bytes(256))
    let gB = mod.publicPower(BigUInt(3), BigUInt(bigEndian: rng.bytes(256)))
    let want = try mod.publicPower(gB, a).bigEndianBytes(count: 256)
    secret(a)
    let gA = mod.constantTimePower(BigUInt(3), a)     // sent on the wire: its length is public
    _ = published(gA)
    let key = try mod.constantTimePower(gB, a, byteCount: 256)
    try check(published(key) == want, "g_b^a")
    // The exponent as secret bytes read at full width (how DHKeyPair draws it), with a leading zero
    // byte: no branch may follow the leading zeros.
    var raw = rng.bytes(256)
    raw[0] = 0
    let wantRaw = try mod.publicPower(gB, BigUInt(bigEndian: raw)).bigEndianBytes(count: 256)
    secret(raw)
    let keyRaw = try raw.withUnsafeBytes { try mod.constantTimePower(gB, exponentBigEndian: $0, byteCount: 256) }
    try check(published(keyRaw) == wantRaw, "g_b^a from exponent bytes")
    _ = published(raw.withUnsafeBytes { mod.constantTimePower(BigUInt(3), exponentBigEndian: $0) })
}

// A secret modulus (an RSA prime): Montgomery constants and a product, constant time in its value.
add("modulus-secret") {
    var rng = SplitMix64(seed: 15)
    let p = try BigUInt.randomPrime(bits: 1024, using: &rng)
    let x = try BigUInt.random(below: p, using: &rng), y = try BigUInt.random(below: p, using: &rng)
    let want = try (x * y).remainder(dividingBy: p)
    secret(p)
    secret(x)
    let mod = try Modulus(p)
    let z = mod.multiply(x, y)
    try check(published(z) == want, "x·y mod p")
}

// RSA private (CRT) with every secret component of the key marked.
let rsaKey: RSA.PrivateKey = {
    var rng = SplitMix64(seed: 2048)
    return try! RSA.PrivateKey.generate(bits: 2048, using: &rng)
}()
add("rsa-private") {
    var rng = SplitMix64(seed: 4)
    let m = try BigUInt.random(below: rsaKey.publicKey.modulus, using: &rng).bigEndianBytes(count: 256)
    let c = try rsaKey.publicKey.rawPublic(m)
    rsaKey.withSecretRegions { rampart_ct_secret($0.baseAddress, $0.count) }
    let back = try rsaKey.rawPrivate(c)
    rsaKey.withSecretRegions { rampart_ct_public($0.baseAddress, $0.count) }
    try check(published(back) == m, "RSA round trip")
}

// Loading a private key (issue 36): every byte of the PEM text (PKCS#1 with LF and with CRLF line
// ends, PKCS#8) or of the DER marked secret. Only the library's declassification points make anything
// public: the armour lines and the positions of the line ends, the DER tags and lengths, the version,
// n and e (and PKCS#8's algorithm identifier), each secret integer's validity, the limb counts of p
// and q, and the consistency checks' one accept bit (`grep -n declassif Sources/Rampart/RSA`). The
// loaded key is checked with a private operation (constant time itself: rsa-private).
@MainActor func checkLoadedKey(_ key: RSA.PrivateKey, seed: UInt64) throws {
    try check(key.publicKey == rsaKey.publicKey, "loaded key's public half")
    var rng = SplitMix64(seed: seed)
    let m = try BigUInt.random(below: rsaKey.publicKey.modulus, using: &rng).bigEndianBytes(count: 256)
    let c = try rsaKey.publicKey.rawPublic(m)
    try check(published(try key.rawPrivate(c)) == m, "loaded key's private operation")
}
add("rsa-private-pem") {
    let lf = rsaKey.pemRepresentation
    // PKCS#1 with LF and with CRLF line ends, and PKCS#8 (`BEGIN PRIVATE KEY`, OpenSSL's default).
    for var text in [lf, lf.split(separator: "\n").joined(separator: "\r\n") + "\r\n", rsaKey.pkcs8PEMRepresentation] {
        text.withUTF8 { rampart_ct_secret($0.baseAddress, $0.count) }
        let key = try RSA.PrivateKey(pemRepresentation: text)
        text.withUTF8 { rampart_ct_public($0.baseAddress, $0.count) }
        try checkLoadedKey(key, seed: 5)
    }
}
add("rsa-private-der") {
    let der = rsaKey.pkcs1DERRepresentation
    secret(der)
    let key = try RSA.PrivateKey(pkcs1DERRepresentation: der)
    publish(der)
    try checkLoadedKey(key, seed: 6)
}

// MTProto: a session decrypts a packet under a secret auth key (and a server reads the session_id it claims).
add("mtproto-session") {
    var rng = SplitMix64(seed: 5)
    let keyBytes = rng.bytes(256)
    secret(keyBytes)
    let key = try AuthKey(keyBytes)
    var client = Session(client: key, sessionId: 0x1234_5678, salt: 42, timeOffset: 0)
    var server = Session(server: key, salt: 42)
    let now = 1_700_000_000.0
    let out = try client.encrypt([0x78, 0x97, 0x46, 0x60] + rng.bytes(12), contentRelated: true, now: now, using: &rng)
    let wire = published(out.packet)
    // The session_id a packet claims, read before the msg_key check (a server with several sessions
    // per key picks the session by it): one block decrypted under the secret key, the result declassified.
    try check(EncryptedMessage.claimedSessionId(wire, authKey: key, direction: .clientToServer) == 0x1234_5678,
              "claimed session_id")
    let got = try server.decrypt(wire, now: now)
    try check(got.count == 1, "one message")
    var bad = wire
    bad[bad.count - 5] ^= 1
    var refused = false
    do { _ = try server.decrypt(bad, now: now) } catch { refused = true }
    try check(refused, "tampered packet refused")
}

// Batch encryption (Docs/MTProto.md §1.8): nine messages of different lengths under three secret keys,
// from three sessions through Session.prepare/seal (multi-buffer IGE lanes, the lane scheduler, the
// scratch SHA-256 blocks); every packet opened by its server session.
add("mtproto-batch") {
    var rng = SplitMix64(seed: 25)
    let now = 1_700_000_000.0
    var clients: [Session] = [], servers: [Session] = []
    for i in 0..<3 {
        let keyBytes = rng.bytes(256)
        secret(keyBytes)
        let key = try AuthKey(keyBytes)
        clients.append(Session(client: key, sessionId: Int64(0x1234_5670 + i), salt: 42, timeOffset: 0))
        servers.append(Session(server: key, salt: 42))
    }
    var prepared: [PreparedMessage] = []
    for m in 0..<9 {
        let body = [0x78, 0x97, 0x46, 0x60] + rng.bytes(4 * (m * 29 % 97))
        secret(body)
        prepared.append(try clients[m % 3].prepare(body, contentRelated: true, now: now, using: &rng))
    }
    let sealed = Session.seal(prepared, using: &rng)
    for (m, out) in sealed.enumerated() {
        let got = try servers[m % 3].decrypt(published(out.packet), now: now)
        try check(got.count == 1, "message \(m) opened")
    }
}

// Secret chats (Docs/MTProto.md §7.3, §7.7): a secret chat key and message; v2 encrypted by one side and
// opened by the other, a tampered message refused; a file encrypted and decrypted under a secret key
// and IV (its MD5 fingerprint goes on the wire).
add("secret-chat") {
    var rng = SplitMix64(seed: 15)
    let keyBytes = rng.bytes(256), tl = rng.bytes(64), fileKey = rng.bytes(32), fileIV = rng.bytes(32), file = rng.bytes(100)
    secret(keyBytes)
    secret(tl)
    secret(fileKey)
    secret(fileIV)
    secret(file)
    let key = try SecretChat.Key(keyBytes)
    let data = published(try SecretChat.Envelope.encrypt(tl, key: key, sender: .acceptor, using: &rng))
    let opened = try SecretChat.Envelope.decrypt(data, keys: [key], sender: .acceptor, allowV1: false)
    try check(published(opened.tl) == published(tl), "secret-chat round trip")
    var bad = data
    bad[bad.count - 3] ^= 1
    var refused = false
    do { _ = try SecretChat.Envelope.decrypt(bad, keys: [key], sender: .acceptor, allowV1: false) } catch { refused = true }
    try check(refused, "tampered secret-chat message refused")
    let fk = try SecretChat.FileKey(key: fileKey, iv: fileIV)
    _ = published(fk.fingerprint)
    let encrypted = published(fk.encrypt(file))
    try check(published(try fk.decrypt(encrypted, size: 100)) == published(file), "secret-chat file round trip")
}

// Secret-chat session (Docs/MTProto.md §7.6): two sessions whose chat key is secret exchange their
// NotifyLayers (v1), run a complete re-key (RequestKey, AcceptKey, CommitKey, Noop) under it, switch
// to the new key and exchange a message; fingerprints and the decrypted TL are public by design. The DH exponents are not marked:
// DHKeyPair reads them with BigUInt(bigEndian:), which skips leading zero bytes (a branch on the
// secret that memcheck reports; to be fixed there).
add("secret-chat-session") {
    var rng = SplitMix64(seed: 16)
    let config = SecretChat.DHConfig.telegram()
    let clock: SecretChat.Clock = { 0 }
    var a = try SecretChat.Session.requesting(config: config, clock: clock, using: &rng)
    guard let gA = a.gA else { throw CheckFailed(description: "no g_a") }
    var b = SecretChat.Session.requested(gA: gA, clock: clock)
    let (gB, fp) = try b.accept(config: config, using: &rng)
    var toA = try b.handleEncryptedChat(gAOrB: gA, keyFingerprint: fp, using: &rng)
    var toB = try a.handleEncryptedChat(gAOrB: gB, keyFingerprint: fp, using: &rng)
    // The chat key (one allocation shared by both sessions' keychains here) is secret from now on,
    // through the NotifyLayers (MTProto 1.0: the peer's layer starts at 46) and the re-key (v2).
    for e in a.keychain.entries + b.keychain.entries { e.key.withUnsafeBytes { rampart_ct_secret($0.baseAddress, $0.count) } }
    func settle() throws {
        var rounds = 0
        while !toA.isEmpty || !toB.isEmpty {
            rounds += 1
            try check(rounds < 10, "settles")
            for m in toB { toA += try b.receive(m.data, using: &rng).outgoing }
            toB = []
            for m in toA { toB += try a.receive(m.data, using: &rng).outgoing }
            toA = []
        }
    }
    try settle()
    let before = a.fingerprint
    toB = [try a.requestRekey(using: &rng)]
    try settle()
    try check(a.fingerprint != before && a.fingerprint == b.fingerprint, "re-key completed")
    try check(!a.isRekeyBusy && !b.isRekeyBusy, "old keys retired")
    toB = try a.send(.message(SecretChat.PlainMessage(randomID: 1, message: "after")), using: &rng)
    var got: [SecretChat.DecryptedMessageLayer] = []
    for m in toB { got += try b.receive(m.data, using: &rng).messages }
    try check(got.count == 1, "message under the new key")
    try check(published(a.keyHash) == published(b.keyHash), "key image")
}

// Threema: identity keys, a message body and passwords secret; seal and open an end-to-end message
// (pair keys: X25519, HSalsa20, BLAKE2b MMK; both boxes), a blob, an ID backup and a Safe blob.
add("threema") {
    var rng = SplitMix64(seed: 14)
    let a = rng.bytes(32), b = rng.bytes(32), body = rng.bytes(90), blobKey = rng.bytes(32)
    let alicePub = published(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: a).publicKey.rawRepresentation)
    let bobPub = published(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: b).publicKey.rawRepresentation)
    secret(a)
    secret(b)
    secret(body)
    secret(blobKey)
    let alice = try ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: a)
    let bob = try ThreemaIdentity(id: ThreemaID("00000BOB"), privateKey: b)
    let toBob = try PairKeys(identity: alice, contact: ThreemaContact(id: bob.id, publicKey: bobPub))
    let fromAlice = try PairKeys(identity: bob, contact: ThreemaContact(id: alice.id, publicKey: alicePub))
    let msg = OutgoingMessage(type: .text, body: body, createdAt: 1_700_000_000_000, nickname: "Alice", using: &rng)
    let sealed = published(try EndToEnd.seal(msg, from: alice, keys: toBob, using: &rng))
    var store = InMemoryNonceStore()
    let opened = try MessageEnvelope(parsing: sealed).open(as: bob, keys: fromAlice, nonceStore: &store)
    try check(published(opened.container.body) == published(body), "Threema message round trip")
    var bad = sealed
    bad[bad.count - 3] ^= 1
    var refused = false
    do { _ = try MessageEnvelope(parsing: bad).open(keys: fromAlice) } catch { refused = true }
    try check(refused, "tampered Threema message refused")
    // The one-pass open over the wire bytes, and a long body (the paired boxes' long fallback).
    var store2 = InMemoryNonceStore()
    let again = try EndToEnd.open(sealed, as: bob, keys: fromAlice, nonceStore: &store2)
    try check(published(again.container.body) == published(body), "one-pass open")
    refused = false
    do { _ = try EndToEnd.open(bad, keys: fromAlice) } catch { refused = true }
    try check(refused, "tampered Threema message refused (one pass)")
    let longBody = rng.bytes(700)
    secret(longBody)
    let long = OutgoingMessage(type: .text, body: longBody, createdAt: 1_700_000_000_000, nickname: "Alice", using: &rng)
    let sealedLong = published(try EndToEnd.seal(long, from: alice, keys: toBob, using: &rng))
    try check(published(try EndToEnd.open(sealedLong, keys: fromAlice).container.body) == published(longBody), "long message")
    let key = SymmetricKey(data: blobKey)
    let blob = published(try ThreemaBlob.encrypt(body, key: key, kind: .file))
    try check(published(try ThreemaBlob.decrypt(blob, key: key, kind: .file)) == published(body), "blob round trip")
    let text = try IDBackup.encode(identity: alice, password: "ctgrind password", salt: rng.bytes(8), iterations: 50)
    let restored = try IDBackup.decode(text, password: "ctgrind password", iterations: 50)
    try check(published(restored.privateKey.rawRepresentation) == published(a), "ID backup round trip")
    let safe = published(try ThreemaSafe.encrypt(json: SafeBackup(identity: alice).jsonBytes, key: key, using: &rng))
    _ = try ThreemaSafe.decrypt(safe, key: key)
}

// Ibex: identity keys, both ephemeral keys and the message bodies secret; Init, a 2DH message, Accept
// and 4DH messages both ways through two processors (X25519 shared secrets with the small-order
// check, the BLAKE2b root keys and ratchet, secretbox under each message key), then a tampered
// message refused.
add("ibex") {
    var rng = SplitMix64(seed: 15)
    let a = rng.bytes(32), b = rng.bytes(32), body = rng.bytes(60)
    let alicePub = published(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: a).publicKey.rawRepresentation)
    let bobPub = published(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: b).publicKey.rawRepresentation)
    secret(a)
    secret(b)
    secret(body)
    let alice = try ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: a)
    let bob = try ThreemaIdentity(id: ThreemaID("00000BOB"), privateKey: b)
    let aliceContact = try ThreemaContact(id: alice.id, publicKey: alicePub)
    let bobContact = try ThreemaContact(id: bob.id, publicKey: bobPub)
    // The processors draw session IDs and ephemeral keys from this generator (public to memcheck:
    // session IDs are public and sorted; every key below still depends on the secret identity keys).
    var secretRNG = SplitMix64(seed: 16)
    var ap = Ibex.Processor(identity: alice, store: Ibex.InMemorySessionStore())
    var bp = Ibex.Processor(identity: bob, store: Ibex.InMemorySessionStore())
    var delivered: [[UInt8]] = []
    func exchange(_ out: [Ibex.OutgoingMessage], from: inout Ibex.Processor<Ibex.InMemorySessionStore>,
                  to: inout Ibex.Processor<Ibex.InMemorySessionStore>, sender: ThreemaContact, receiver: ThreemaContact) throws {
        for m in out {
            guard case .envelope(let e) = m else { continue }
            let wire = published(try e.encoded())
            let r = try to.receive(body: wire, from: sender, messageID: 1, now: 5, using: &secretRNG)
            if case .message(_, let inner, _, _) = r.event { delivered.append(published(inner)) }
            try exchange(r.replies.map { .envelope($0) }, from: &to, to: &from, sender: receiver, receiver: sender)
        }
    }
    try exchange(try ap.encapsulate(type: .text, body: body, to: bobContact, now: 5, using: &secretRNG),
                 from: &ap, to: &bp, sender: aliceContact, receiver: bobContact)
    try exchange(try bp.encapsulate(type: .text, body: body, to: aliceContact, now: 5, using: &secretRNG),
                 from: &bp, to: &ap, sender: bobContact, receiver: aliceContact)
    try exchange(try ap.encapsulate(type: .text, body: body, to: bobContact, now: 5, using: &secretRNG),
                 from: &ap, to: &bp, sender: aliceContact, receiver: bobContact)
    try check(delivered.count == 3 && delivered.allSatisfy { $0 == published(body) }, "Ibex messages delivered")
    try check(bp.store.sessions(peer: alice.id).first?.state == .rl44, "Ibex session bidirectional")
    // A tampered 4DH message: refused (Reject), no plaintext.
    guard case .envelope(var e) = try ap.encapsulate(type: .text, body: body, to: bobContact, now: 5, using: &secretRNG).last,
          case .encapsulated(var m) = e.content else { try check(false, "no encapsulated message"); return }
    m.encryptedInner[m.encryptedInner.count - 1] ^= 1
    e.content = .encapsulated(m)
    let r = bp.receive(e, from: aliceContact, messageID: 2, now: 5, using: &secretRNG)
    guard case .refused = r.event else { try check(false, "tampered Ibex message accepted"); return }
}

// Threema chat-server protocol: identity key, server permanent key and both temporary keys
// secret; a whole handshake (hello box under SK ↔ TCK, login vouch made and verified, login and
// extension boxes, login-ack) and one frame each way.
add("threema-csp") {
    var rng = SplitMix64(seed: 15)
    let ck = rng.bytes(32), sk = rng.bytes(32), tck = rng.bytes(32), tsk = rng.bytes(32)
    let ckPub = published(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: ck).publicKey.rawRepresentation)
    let skPub = published(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: sk).publicKey.rawRepresentation)
    for k in [ck, sk, tck, tsk] { secret(k) }
    let alice = try ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: ck)
    let serverKey = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: skPub)
    let alicePub = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: ckPub)
    let config = CSP.Server.Configuration(permanentKey: try .init(rawRepresentation: sk)) { $0 == alice.id ? alicePub : nil }
    var server = try CSP.Server(configuration: config, temporaryKey: try .init(rawRepresentation: tsk), cookie: rng.bytes(16))
    var (client, hello) = try CSP.Client.start(
        configuration: .init(identity: alice, permittedServerKeys: [serverKey], extensions: CSP.LoginExtensions(clientInfo: "ct")),
        temporaryKey: try .init(rawRepresentation: tck), cookie: rng.bytes(16))
    let serverHello = published(try server.receive(published(hello)).outgoing)
    let login = published(try client.receive(serverHello).outgoing)
    let ack = try server.receive(login)
    try check(ack.events.count == 1, "CSP login verified")
    try check(try client.receive(published(ack.outgoing)).events == [.loginAcknowledged], "CSP login acknowledged")
    let up = published(try client.send(.echoRequest([1, 2, 3])))
    try check(try server.receive(up).events == [.payload(.echoRequest([1, 2, 3]))], "CSP frame client to server")
    let down = published(try server.send(.alert("ct")))
    try check(try client.receive(down).events == [.payload(.alert("ct"))], "CSP frame server to client")
}

// Threema group calls: GCK, the media key (PCMK), the ephemeral participant keys and the frame
// payloads secret; derive the call keys, turn the ratchet, seal and open an Opus and a VP8 frame
// (the VP8 header is public by design: it travels in the clear), and a participant box.
add("threema-group-call") {
    var rng = SplitMix64(seed: 15)
    let gck = rng.bytes(32), pcmk = rng.bytes(32), opus = rng.bytes(70), vp8 = [0x30] + rng.bytes(69)
    let pa = rng.bytes(32), pb = rng.bytes(32)
    let pubB = published(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: pb).publicKey.rawRepresentation)
    let pubA = published(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: pa).publicKey.rawRepresentation)
    secret(gck)
    secret(pcmk)
    secret(opus)
    secret(vp8)
    vp8.withUnsafeBytes { rampart_ct_public($0.baseAddress, 3) }
    secret(pa)
    secret(pb)
    let keys = try GroupCall.Keys(gck: SymmetricKey(data: gck))
    let key = try GroupCall.MediaKey(epoch: 1, ratchetCounter: 0, pcmk: SymmetricKey(data: pcmk))
    var enc = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: key, firstMFSN: 5)
    var dec = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: key)
    let w1 = published(try enc.seal(opus, codec: .opus))
    try enc.ratchet()
    let w2 = published(try enc.seal(vp8, codec: .vp8))
    try check(published(try dec.open(w1, codec: .opus)) == published(opus), "group-call Opus frame round trip")
    try check(published(try dec.open(w2, codec: .vp8)) == published(vp8), "group-call VP8 frame round trip")
    var bad = w2
    bad[20] ^= 1
    var refused = false
    do { _ = try dec.open(bad, codec: .vp8) } catch { refused = true }
    try check(refused, "tampered group-call frame refused")
    var ab = try GroupCall.ParticipantChannel(localKey: Curve25519.KeyAgreement.PrivateKey(rawRepresentation: pa),
                                              localCookie: [UInt8](repeating: 1, count: 16), remotePublicKey: pubB,
                                              remoteCookie: [UInt8](repeating: 2, count: 16))
    var ba = try GroupCall.ParticipantChannel(localKey: Curve25519.KeyAgreement.PrivateKey(rawRepresentation: pb),
                                              localCookie: [UInt8](repeating: 2, count: 16), remotePublicKey: pubA,
                                              remoteCookie: [UInt8](repeating: 1, count: 16))
    let box = published(try ab.seal(opus))
    try check(published(try ba.open(box)) == published(opus), "participant box round trip")
}

// MARK: Driver

let args = Array(CommandLine.arguments.dropFirst())
if args.first == "list" {
    for c in cases { print(c.canary ? "\(c.name) (canary)" : c.name) }
    exit(0)
}
guard args.first == "run" else {
    print("usage: rampart-ctgrind list | run [CASE...]   (under valgrind --tool=memcheck)")
    exit(2)
}
let wanted = Set(args.dropFirst())
let unknown = wanted.subtracting(cases.map(\.name))
if !unknown.isEmpty {
    print("unknown case(s): \(unknown.sorted().joined(separator: ", "))")
    exit(2)
}
let underValgrind = rampart_ct_running_on_valgrind() != 0
if !underValgrind {
    print("note: not running under valgrind: results are checked, constant time is not")
}
CTGrind.declassifyHook = { p, n in rampart_ct_public(p, n) }
CodecsCT.declassifyHook = { p, n in rampart_ct_public(p, n) }
print("kernels: \(Kernels.summary)")

var failed: [String] = []
var caseErrors: UInt = 0
let startErrors = rampart_ct_error_count()
for c in cases where wanted.isEmpty || wanted.contains(c.name) {
    let before = rampart_ct_error_count()
    var note = ""
    do { try c.body() } catch { note = " error: \(error)"; failed.append(c.name) }
    let errors = rampart_ct_error_count() - before
    caseErrors += errors
    var verdict = errors == 0 ? "clean" : "\(errors) error(s)"
    if underValgrind {
        if c.canary {
            verdict += errors > 0 ? " (canary: reported, as it must be)" : " (canary NOT reported: the check is broken)"
            if errors == 0 { failed.append(c.name) }
        } else if errors > 0 {
            failed.append(c.name)
        }
    }
    print("\(c.name): \(verdict)\(note)")
}
// Errors outside the cases (before the first one, or between them) fail the run too.
let outside = startErrors + (rampart_ct_error_count() - startErrors - caseErrors)
if underValgrind && outside > 0 {
    print("errors outside the cases: \(outside)")
    failed.append("(outside the cases)")
}
if failed.isEmpty {
    print(underValgrind ? "ctgrind: all cases clean, canaries reported" : "ctgrind: all cases computed correct results")
    exit(0)
}
print("ctgrind: FAILED: \(failed.joined(separator: ", "))")
exit(1)
