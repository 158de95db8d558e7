// HKDF (RFC 5869) in CryptoKit's shape. The vectors (Wycheproof, RFC 5869 A.4-A.7, generated cases
// for SHA-1/256/512 through both backends) run from Vectors/hkdf.json with the other vector files;
// these tests cover the API shapes, the consistency of the parts and the output limit.

import Testing
import Rampart
import RampartTestSupport

private func bytes(_ k: SymmetricKey) -> [UInt8] { k.withUnsafeBytes { Array($0) } }

@Test("RFC 5869 A.1 through every CryptoKit-shaped entry point")
func hkdfEntryPointsAgree() throws {
    let ikm = SymmetricKey(data: [UInt8](repeating: 0x0b, count: 22))
    let salt = hexBytes("000102030405060708090a0b0c"), info = hexBytes("f0f1f2f3f4f5f6f7f8f9")
    let okm = hexBytes("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
    #expect(Array(prk) == hexBytes("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5"))
    #expect(bytes(HKDF<SHA256>.expand(pseudoRandomKey: prk, info: info, outputByteCount: 42)) == okm)
    #expect(bytes(HKDF<SHA256>.expand(pseudoRandomKey: Array(prk), info: info, outputByteCount: 42)) == okm)
    #expect(bytes(HKDF<SHA256>.expand(pseudoRandomKey: SymmetricKey(data: Array(prk)), info: info, outputByteCount: 42)) == okm)
    #expect(bytes(HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: 42)) == okm)
    // Prefixes: a shorter output is the start of a longer one.
    #expect(bytes(HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: 7)) == Array(okm[..<7]))
    #expect(bytes(HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: 0)).isEmpty)
}

@Test("No salt is HashLen zero bytes (RFC 5869 §2.2, A.3)")
func hkdfWithoutSalt() {
    let ikm = SymmetricKey(data: [UInt8](repeating: 0x0b, count: 22))
    let okm = hexBytes("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    #expect(bytes(HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, info: [UInt8](), outputByteCount: 42)) == okm)
    #expect(bytes(HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: [UInt8](repeating: 0, count: 32),
                                         info: [UInt8](), outputByteCount: 42)) == okm)
}

@Test("SharedSecret.hkdfDerivedSymmetricKey as in CryptoKit")
func sharedSecretHKDF() throws {
    let a = Curve25519.KeyAgreement.PrivateKey(), b = Curve25519.KeyAgreement.PrivateKey()
    let s1 = try a.sharedSecretFromKeyAgreement(with: b.publicKey)
    let s2 = try b.sharedSecretFromKeyAgreement(with: a.publicKey)
    let salt = Array("salt".utf8), info = Array("info".utf8)
    let k1 = s1.hkdfDerivedSymmetricKey(using: SHA256.self, salt: salt, sharedInfo: info, outputByteCount: 32)
    let k2 = s2.hkdfDerivedSymmetricKey(using: SHA256.self, salt: salt, sharedInfo: info, outputByteCount: 32)
    #expect(k1 == k2 && k1.bitCount == 256)
    let raw = s1.withUnsafeBytes { SymmetricKey(data: Array($0)) }
    #expect(k1 == HKDF<SHA256>.deriveKey(inputKeyMaterial: raw, salt: salt, info: info, outputByteCount: 32))
    #expect(k1 != s1.hkdfDerivedSymmetricKey(using: SHA512.self, salt: salt, sharedInfo: info, outputByteCount: 32))
}

@Test("The output limit is 255 hash lengths; the limit itself works")
func hkdfLimit() {
    #expect(HKDF<SHA256>.maximumOutputByteCount == 8160)
    #expect(HKDF<Insecure.SHA1>.maximumOutputByteCount == 5100)
    #expect(HKDF<SHA512>.maximumOutputByteCount == 16320)
    let k = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: [1, 2, 3]), info: [UInt8](), outputByteCount: 8160)
    #expect(k.bitCount == 8160 * 8)
}

#if os(Linux) || os(macOS)
@Test("Asking for more than 255 hash lengths traps (Wycheproof's invalid cases: 8161 bytes)")
func hkdfOverLimitTraps() async {
    await #expect(processExitsWith: .failure) {
        _ = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: [1]), info: [UInt8](), outputByteCount: 8161)
    }
    await #expect(processExitsWith: .failure) {
        _ = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: [1]), info: [UInt8](), outputByteCount: -1)
    }
}
#endif
