import Rampart
import RampartCodecs
import RampartTestSupport
import Testing
@_spi(Testing) @testable import RampartThreema

@Suite("Threema ID backups")
struct IDBackupTests {
    @Test func roundTripAndTextForm() throws {
        var rng = SplitMix64(seed: 30)
        let text = try IDBackup.encode(identity: alice, password: "correct horse", using: &rng)
        #expect(text.count == 99)   // 80 Base32 characters in 20 groups of 4
        #expect(text.split(separator: "-").allSatisfy { $0.count == 4 })
        // The real cost (100 000 PBKDF2 iterations) once; then retyped forms at a test cost.
        let back = try IDBackup.decode(text, password: "correct horse")
        #expect(back.id == alice.id && back.privateKey.rawRepresentation == alice.privateKey.rawRepresentation)
        let cheap = try IDBackup.encode(identity: alice, password: "correct horse", salt: [9, 8, 7, 6, 5, 4, 3, 2], iterations: 10)
        // What users type back: lower case, spaces, line breaks, missing dashes.
        let retyped = cheap.lowercased().replacingDashes(with: " ") + "\n"
        #expect(try IDBackup.decode(retyped, password: "correct horse", iterations: 10).id == alice.id)
        #expect(try IDBackup.decode(cheap.replacingDashes(with: ""), password: "correct horse", iterations: 10).id == alice.id)
    }

    @Test func wrongPasswordIsTypedNeverGarbage() throws {
        let text = try IDBackup.encode(identity: bob, password: "password1", salt: [1, 2, 3, 4, 5, 6, 7, 8], iterations: 10)
        var wrongCheck = 0
        for guess in ["password2", "Password1", "password1 ", "12345678", "passwordpassword"] {
            do {
                _ = try IDBackup.decode(text, password: guess, iterations: 10)
                Issue.record("a wrong password decoded")
            } catch ThreemaError.wrongPassword {
                wrongCheck += 1
            } catch ThreemaError.malformedBackup(.invalidIdentity) {
                // The 2-byte check passed by chance (1/65 536) but the ID is not one: still refused.
            }
        }
        #expect(wrongCheck >= 4)
    }

    @Test(arguments: ["", "ABCD", String(repeating: "A", count: 79), String(repeating: "A", count: 80) + "1", "AAAA-AAA=", "€€€€"])
    func malformedTextIsTyped(_ text: String) {
        #expect(throws: ThreemaError.self) { try IDBackup.decode(text, password: "password1") }
    }

    @Test func version1RoundTripAtATestCost() throws {
        let text = try IDBackup.encodeVersion1(identity: alice, password: "ThisIsABadPassword", salt: [1, 2, 3, 4, 5, 6, 7, 8],
                                               memoryKiB: 64, iterations: 1)
        #expect(text.count == 129)   // 104 Base32 characters in 26 groups
        let raw = try Base32.decode(text, mode: .lenient)
        #expect(raw.count == 65 && raw[0] == 1)
        let back = try IDBackup.decodeVersioned(raw, password: "ThisIsABadPassword", memoryKiB: 64, iterations: 1)
        #expect(back.id == alice.id && back.publicKey == alice.publicKey)
        #expect(throws: ThreemaError.wrongPassword) {
            try IDBackup.decodeVersioned(raw, password: "ThisIsAGoodPassword", memoryKiB: 64, iterations: 1)
        }
        for i in [0, 1, 9, 30, 48, 49, 64] where i != 0 {
            var t = raw
            t[i] ^= 0x10
            #expect(throws: ThreemaError.wrongPassword) {
                try IDBackup.decodeVersioned(t, password: "ThisIsABadPassword", memoryKiB: 64, iterations: 1)
            }
        }
        #expect(throws: ThreemaError.malformedBackup(.invalidLength(64))) {
            try IDBackup.decodeVersioned(Array(raw.prefix(64)), password: "ThisIsABadPassword", memoryKiB: 64, iterations: 1)
        }
    }

    /// libthreema's own negative cases: version 0x00 is the explicit legacy marker, 0xFF unknown.
    @Test(arguments: [("AD77-7777", UInt8(0)), ("7777-7777", UInt8(0xFF))])
    func libthreemaVersionErrors(_ text: String, _ version: UInt8) {
        #expect(throws: ThreemaError.malformedBackup(.unsupportedVersion(version))) { try IDBackup.decode(text, password: "password1") }
    }

    @Test func versionedBackupsAreRecognised() throws {
        // A 60-byte decode is not legacy: its first byte is the version.
        let raw = [UInt8(7)] + [UInt8](repeating: 0, count: 59)
        #expect(throws: ThreemaError.malformedBackup(.unsupportedVersion(7))) {
            try IDBackup.decode(Base32.encode(raw), password: "password1")
        }
    }

    @Test func passwordLength() {
        #expect(throws: ThreemaError.invalidPasswordLength(allowed: 8...4096)) {
            try IDBackup.encode(identity: alice, password: "short", salt: [UInt8](repeating: 0, count: 8))
        }
    }

    @Test func randomTextNeverTraps() {
        var rng = SplitMix64(seed: 31)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567abc- \n=1".utf8)
        for i in 0..<300 {
            let n = i % 3 == 0 ? 80 : Int(rng.next() % 120)
            let text = String(decoding: (0..<n).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }, as: UTF8.self)
            _ = try? IDBackup.decode(text, password: "password1", iterations: 10)
        }
    }
}

extension String {
    func replacingDashes(with s: String) -> String { split(separator: "-", omittingEmptySubsequences: false).joined(separator: s) }
}

@Suite("Threema Safe")
struct SafeTests {
    /// Keys at a test cost (N = 1024); the real cost is checked by the published vector (release) and
    /// by `realCostMatchesTheAndroidVector` below.
    static let keys = try! SafeKeys(passwordBytes: Array("shootdeathstar".utf8), identity: ThreemaID("ECHOECHO"), n: 1024)

    @Test(.enabled(if: !isDebugBuild, "scrypt at N = 65536 takes ~20 s unoptimised: checked in release builds (and by `rampart vectors`)"))
    func realCostMatchesTheAndroidVector() throws {
        let k = try SafeKeys(password: "shootdeathstar", identity: ThreemaID("ECHOECHO"))
        #expect(k.backupIDHex == "066384d3695fbbd9f31a7d533900fd0cd8d1373beb6a28678522d2a49980c9c3")
    }

    @Test func backupRoundTrip() throws {
        var rng = SplitMix64(seed: 40)
        let doc = SafeBackup(identity: alice, nickname: "Alice")
        let blob = try ThreemaSafe.backup(doc, keys: Self.keys, using: &rng)
        // nonce ‖ tag ‖ gzip: level 0 (stored blocks) as the apps write it.
        let plain = try SecretBox.open(blob[24...], using: Self.keys.encryptionKey, nonce: blob[0..<24])
        #expect(plain[0] == 0x1f && plain[1] == 0x8b && plain[10] & 0x06 == 0)   // BTYPE 00: stored
        let back = try ThreemaSafe.restore(blob, keys: Self.keys)
        #expect(back == doc)
        #expect(back.nickname == "Alice")
        #expect(try back.identity(id: alice.id).publicKey == alice.publicKey)
    }

    @Test func readsAnyGzipAndPlainJSON() throws {
        var rng = SplitMix64(seed: 41)
        let json = SafeBackup(identity: bob).jsonBytes
        // Plain JSON in the box, as the whitepaper words it.
        let nonce = randomBytes(count: 24, using: &rng)
        let plainBlob = nonce + (try SecretBox.seal(json, using: Self.keys.encryptionKey, nonce: nonce))
        #expect(try ThreemaSafe.decrypt(plainBlob, key: Self.keys.encryptionKey) == json)
        // Tampering anywhere: authentication failure, nothing released.
        for i in [0, 23, 24, 39, 40, plainBlob.count - 1] {
            var t = plainBlob
            t[i] ^= 1
            #expect(throws: ThreemaError.authenticationFailed) { try ThreemaSafe.decrypt(t, key: Self.keys.encryptionKey) }
        }
        #expect(throws: ThreemaError.malformedSafeBackup(.tooShort)) { try ThreemaSafe.decrypt([1, 2, 3], key: Self.keys.encryptionKey) }
        // Neither gzip nor JSON.
        let junk = nonce + (try SecretBox.seal([0x42, 0x43], using: Self.keys.encryptionKey, nonce: nonce))
        #expect(throws: ThreemaError.self) { try ThreemaSafe.decrypt(junk, key: Self.keys.encryptionKey) }
    }

    @Test func decompressionBombIsCapped() throws {
        // 17 MiB of zeros in stored blocks is too much; in a dynamic-Huffman stream it would be tiny.
        // Build a gzip of highly compressible data with the stored writer only where cheap: a raw
        // stream of many back-references is the real bomb; use the codec's own check on the size.
        var rng = SplitMix64(seed: 42)
        let big = [UInt8](repeating: 0x20, count: ThreemaSafe.maximumPlaintextBytes + 1)
        let gz = Gzip.compressStored(big)
        let nonce = randomBytes(count: 24, using: &rng)
        let blob = nonce + (try SecretBox.seal(gz, using: Self.keys.encryptionKey, nonce: nonce))
        #expect(throws: ThreemaError.malformedSafeBackup(.tooLarge(limit: ThreemaSafe.maximumPlaintextBytes))) {
            try ThreemaSafe.decrypt(blob, key: Self.keys.encryptionKey)
        }
    }

    static let validDocument = """
    {"info":{"version":1,"device":"5.0/de_CH"},
     "user":{"privatekey":"\(Base64.encode([UInt8](repeating: 7, count: 32)))","nickname":"Echo",
             "profilePicRelease":["*"],"links":[{"type":"mobile","name":"home","value":"41791234567"}]},
     "contacts":[{"identity":"ECHOECHO","publickey":"\(Base64.encode([UInt8](repeating: 9, count: 32)))",
                  "verification":2,"createdAt":1700000000000,"lastUpdate":null,"hidden":false,"readReceipts":0}],
     "groups":[{"id":"0123456789abcdef","creator":"ECHOECHO","groupname":"g","members":["ECHOECHO","000ALICE"],
                "createdAt":1,"deleted":false}],
     "distributionlists":[{"name":"d","members":["00000BOB"],"createdAt":2}],
     "settings":{"syncContacts":true,"blockedContacts":["*SPAMMER"],"recentEmojis":["x"]},
     "future":{"kept":true}}
    """

    @Test func schemaAcceptsTheFullDocument() throws {
        let doc = try SafeBackup(jsonBytes: Array(Self.validDocument.utf8))
        #expect(doc.contactIDs == [try ThreemaID("ECHOECHO")])
        #expect(doc.device == "5.0/de_CH")
        #expect(doc.json["future"]?["kept"]?.bool == true)   // unknown members survive
        #expect(try SafeBackup(jsonBytes: doc.jsonBytes) == doc)
    }

    @Test(arguments: [
        (#""version":1"#, #""version":2"#, ThreemaError.malformedSafeBackup(.unsupportedVersion(2))),
        (#""version":1"#, #""version":0"#, .malformedSafeBackup(.schema("info.version"))),
        (#""version":1"#, #""version":"1""#, .malformedSafeBackup(.schema("info.version"))),
        (#""syncContacts":true"#, #""syncContacts":1"#, .malformedSafeBackup(.schema("settings.syncContacts"))),
        (#""verification":2"#, #""verification":3"#, .malformedSafeBackup(.schema("contacts[0].verification"))),
        (#""identity":"ECHOECHO""#, #""identity":"echoecho""#, .malformedSafeBackup(.schema("contacts[0].identity"))),
        (#""id":"0123456789abcdef""#, #""id":"0123456789ABCDEF""#, .malformedSafeBackup(.schema("groups[0].id"))),
        (#""members":["00000BOB"]"#, #""members":["bob"]"#, .malformedSafeBackup(.schema("distributionlists[0].members"))),
        (#""type":"mobile""#, #""type":"fax""#, .malformedSafeBackup(.schema("user.links[]"))),
        (#""lastUpdate":null"#, #""lastUpdate":-1"#, .malformedSafeBackup(.schema("contacts[0].lastUpdate"))),
    ] as [(String, String, ThreemaError)])
    func schemaViolationsAreNamed(_ from: String, _ to: String, _ error: ThreemaError) {
        let text = Self.validDocument.replacingFirst(from, with: to)
        #expect(text != Self.validDocument)
        #expect(throws: error) { try SafeBackup(jsonBytes: Array(text.utf8)) }
    }

    @Test func privateKeyMustBe32Bytes() {
        let text = Self.validDocument.replacingFirst(Base64.encode([UInt8](repeating: 7, count: 32)),
                                                     with: Base64.encode([UInt8](repeating: 7, count: 31)))
        #expect(throws: ThreemaError.malformedSafeBackup(.schema("user.privatekey"))) { try SafeBackup(jsonBytes: Array(text.utf8)) }
    }

    @Test func mutatedDocumentsNeverTrap() {
        var rng = SplitMix64(seed: 43)
        let valid = Array(Self.validDocument.utf8)
        for _ in 0..<3000 { _ = try? SafeBackup(jsonBytes: mutated(valid, &rng)) }
    }

    @Test func passwordRules() {
        #expect(throws: ThreemaError.invalidPasswordLength(allowed: 8...4096)) { try SafeKeys(password: "1234567", identity: alice.id) }
        #expect(throws: ThreemaError.invalidPasswordLength(allowed: 8...4096)) {
            try SafeKeys(password: String(repeating: "x", count: 4097), identity: alice.id)
        }
    }
}

extension String {
    func replacingFirst(_ a: String, with b: String) -> String {
        guard let r = range(of: a) else { return self }
        return replacingCharacters(in: r, with: b)
    }
}

@Suite("Threema local master key")
struct MasterKeyTests {
    @Test func protectAndUnlock() throws {
        var rng = SplitMix64(seed: 50)
        let master = SymmetricKey(size: .bits256, using: &rng)
        let stored = try ProtectedMasterKey.protect(masterKey: master, passphrase: "superSecretPassword",
                                                    salt: randomBytes(count: 8, using: &rng), n: 1024)
        #expect(try stored.unlock(passphrase: "superSecretPassword", n: 1024) == master)
        #expect(throws: ThreemaError.wrongPassword) { try stored.unlock(passphrase: "superSecretPasswort", n: 1024) }
        #expect(throws: ThreemaError.self) { try ProtectedMasterKey(protectedKey: [1], salt: [], verification: []) }
    }
}

@Suite("Threema file messages")
struct FileMessageTests {
    @Test func roundTripAndSDKForm() throws {
        let f = try FileMessage(blobID: [UInt8](repeating: 0xab, count: 16), thumbnailBlobID: [UInt8](repeating: 0xcd, count: 16),
                                key: [UInt8](repeating: 1, count: 32), mediaType: "image/jpeg", fileName: "a.jpg", size: 1234,
                                caption: "hi", renderingType: 1, thumbnailMediaType: "image/jpeg")
        #expect(try FileMessage(decoding: f.encoded) == f)
        // The Gateway SDK's form: b, k, m, n, s, i (and t, d).
        let sdk = #"{"b":"\#(String(repeating: "0", count: 32))","k":"\#(String(repeating: "1", count: 64))","m":"application/pdf","n":"x.pdf","s":5,"i":0,"x":{"h":1}}"#
        let g = try FileMessage(decoding: Array(sdk.utf8))
        #expect(g.size == 5 && g.fileName == "x.pdf" && g.thumbnailBlobID == nil && g.renderingType == nil)
        #expect(g.otherMembers.map(\.key) == ["x"])
        guard case .file(let h) = try MessageBody(MessageContainer(type: .file, body: Array(sdk.utf8))) else {
            Issue.record("not a file"); return
        }
        #expect(h == g)
    }

    @Test(arguments: [#"{}"#, #"[]"#, #"{"b":"00","k":"11","m":"x","s":1}"#,
                      #"{"b":"\#(String(repeating: "0", count: 32))","k":"\#(String(repeating: "1", count: 64))","m":"x","s":-1}"#,
                      #"{"b":"\#(String(repeating: "0", count: 32))","k":"\#(String(repeating: "1", count: 64))","m":1,"s":1}"#,
                      #"{"b":"\#(String(repeating: "z", count: 32))","k":"\#(String(repeating: "1", count: 64))","m":"x","s":1}"#,
                      "not json"])
    func malformedFileBodies(_ text: String) {
        #expect(throws: ThreemaError.self) { try FileMessage(decoding: Array(text.utf8)) }
    }
}
