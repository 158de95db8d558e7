import Rampart
import RampartTestSupport
import Testing
@_spi(Testing) @testable import RampartThreema

@Suite("Threema identities and trust")
struct IdentityTests {
    @Test(arguments: ["ECHOECHO", "000ALICE", "*THREEMA", "A1B2C3D4", "00000000"])
    func validIDs(_ s: String) throws {
        let id = try ThreemaID(s)
        #expect(id.string == s)
        #expect(id.isGatewayID == s.hasPrefix("*"))
    }

    @Test(arguments: ["", "ECHOECH", "ECHOECHOE", "echoecho", "ECHO*ECH", "ECHO ECH", "ÄCHOECHO", "ECHOECH\u{0}", "**THREEM"])
    func invalidIDs(_ s: String) {
        #expect(throws: ThreemaError.invalidIdentity) { try ThreemaID(s) }
    }

    @Test func fingerprintIsTruncatedSHA256() throws {
        let fp = alice.contact.fingerprint
        #expect(fp.bytes == Array(SHA256.hash(data: alice.publicKey.rawRepresentation).bytes.prefix(16)))
        #expect(fp.description.count == 32)
        #expect(fp != bob.contact.fingerprint)
    }

    @Test func verificationLevels() {
        #expect(VerificationLevel(rawValue: 3) == nil)
        #expect(VerificationLevel(rawValue: -1) == nil)
        let work = VerificationLevel(rawValue: 1, workVerified: true)!
        #expect(work.afterMatchingQRScan() == VerificationLevel(rawValue: 2, workVerified: true))
        #expect(VerificationLevel.unverified < .serverVerified && .serverVerified < .fullyVerified)
        #expect(work.description == "server-verified (work)")
    }

    @Test func qrCodeRoundTripAndVerification() throws {
        let qr = ContactQRCode(identity: alice)
        #expect(qr.payload == "3mid:000ALICE," + Hex.encode(alice.publicKey.rawRepresentation))
        let parsed = try ContactQRCode(parsing: qr.payload)
        #expect(parsed == qr)
        #expect(parsed.verifies(alice.contact))
        #expect(!parsed.verifies(bob.contact))
        let otherKey = ThreemaContact(id: alice.id, publicKey: bob.publicKey)
        #expect(!parsed.verifies(otherKey))
        let expiring = try ContactQRCode(parsing: qr.payload + ",1700000000")
        #expect(expiring.expiry == 1_700_000_000)
        #expect(expiring.payload == qr.payload + ",1700000000")
        #expect(expiring.verifies(alice.contact, now: 1_700_000_000))
        #expect(!expiring.verifies(alice.contact, now: 1_700_000_001))
        // Upper-case hex is read (and written back lower case).
        let upper = try ContactQRCode(parsing: "3mid:000ALICE," + Hex.encode(alice.publicKey.rawRepresentation).uppercased())
        #expect(upper == qr)
    }

    @Test(arguments: [
        ("3mId:000ALICE,", QRCodeFault.wrongScheme),
        ("000ALICE", .wrongScheme),
        ("3mid:000ALICE", .wrongFieldCount),
        ("3mid:000ALICE,aa,1,2", .wrongFieldCount),
        ("3mid:000alice," + String(repeating: "ab", count: 32), .invalidIdentity),
        ("3mid:000ALICE," + String(repeating: "ab", count: 31), .invalidPublicKey),
        ("3mid:000ALICE," + String(repeating: "zz", count: 32), .invalidPublicKey),
        ("3mid:000ALICE, " + String(repeating: "ab", count: 32), .invalidPublicKey),
        ("3mid:000ALICE," + String(repeating: "ab", count: 32) + ",", .invalidExpiry),
        ("3mid:000ALICE," + String(repeating: "ab", count: 32) + ",-1", .invalidExpiry),
        ("3mid:000ALICE," + String(repeating: "ab", count: 32) + ",99999999999999999999", .invalidExpiry),
        ("3mid:000ALICE," + String(repeating: "ab", count: 32) + ",1e9", .invalidExpiry),
    ] as [(String, QRCodeFault)])
    func malformedQRCodes(_ payload: String, _ fault: QRCodeFault) {
        #expect(throws: ThreemaError.invalidQRCode(fault)) { try ContactQRCode(parsing: payload) }
    }

    @Test func qrParserNeverTraps() {
        var rng = SplitMix64(seed: 0x3e1d)
        let valid = Array(ContactQRCode(identity: alice, expiry: 5).payload.utf8)
        for _ in 0..<5000 {
            let input = rng.next() % 2 == 0 ? mutated(valid, &rng) : randomBytes(count: Int(rng.next() % 100), using: &rng)
            _ = try? ContactQRCode(parsing: String(decoding: input, as: UTF8.self))
        }
    }

    @Test func emailNormalisationAndGmail() {
        #expect(AddressBookHash.normalizedEmail("  Test@Threema.CH \n") == "test@threema.ch")
        #expect(AddressBookHash.email(" TEST@threema.ch") == AddressBookHash.email("test@threema.ch"))
        #expect(AddressBookHash.email("a@example.com").count == 1)
        let gmail = AddressBookHash.email("Someone@GMail.com")
        let googlemail = AddressBookHash.email("someone@googlemail.com")
        #expect(gmail.count == 2 && googlemail.count == 2)
        #expect(Set(gmail) == Set(googlemail))
    }

    @Test func phoneNumbers() throws {
        #expect(try AddressBookHash.phone("+41 79 123 45 67") == AddressBookHash.phone("41791234567"))
        #expect(throws: ThreemaError.self) { try AddressBookHash.phone("+12") }
        #expect(throws: ThreemaError.self) { try AddressBookHash.phone(String(repeating: "1", count: 16)) }
    }

    @Test func directoryDerivationsRefuseSmallOrderKeys() throws {
        let zero = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: [UInt8](repeating: 0, count: 32))
        #expect(throws: ThreemaError.invalidPublicKey) {
            try DirectoryAuthentication.challengeResponse(token: [1, 2, 3], serverPublicKey: zero, identity: alice)
        }
        #expect(throws: ThreemaError.invalidPublicKey) {
            try DirectoryAuthentication.loginVouch(identity: alice, serverPermanentKey: bob.publicKey, serverTemporaryKey: zero,
                                                   serverCookie: [UInt8](repeating: 0, count: 16), clientTemporaryKey: eve.publicKey)
        }
    }
}
