// Ibex ratchet and root keys (Docs/Threema.md §1.2, §1.3).
//
// Values from the research digest's threema_vectors.json (not read at test time; recomputed in
// Vectors/threema/published.json by Vectors/generate_threema.py):
// * "published_threema_vectors_reverified" → "kdf_ratchet__threema-android KDFRatchetTest.java":
//   threema-android domain/src/test/java/ch/threema/domain/fs/KDFRatchetTest.java (published);
//   the chain key after one turn is self-computed there.
// * "ibex_fs_self_computed": a full session computed following the Android and iOS DHSession
//   semantics (NOT published by Threema; regression values until checked against a real client).

@_spi(Testing) import Rampart
import RampartTestSupport
import Testing
@_spi(Testing) @testable import RampartThreema

enum IbexVectors {
    // KDFRatchetTest.java
    static let initialChainKey = "421e73cf324785dee4c4830f2efbb8cd4b258ed8520a608a6ce340aaa7400024"
    static let after1TurnEncryptionKey = "60d3de2d849fa8b3d9799e8e50b09a7ef1d4e1e855c99fdb711bfe29466cdad3"
    static let after100TurnsEncryptionKey = "d2acf6e1c7262eb360ad92b6a74e0f9ad6ee129278742fc2462ae72916eaa334"
    static let chainKeyAfter1Turn = "f956254b49fa5f7b330a7abbee0b4da2aaa655c4729082e94c253bce57854450"

    // ibex_fs_self_computed
    static let aliceID = "000ALICE"
    static let aliceCKSecret = "6eda2ebb8527ff5bd0e8719602f710c13e162a3be612de0ad2a2ff66f5050630"
    static let aliceCKPublic = "a201c59230f2d720fa59c5c5766accc04346ef5823ad6ed09128bfc06a2b7054"
    static let bobID = "00000BOB"
    static let bobCKSecret = "533058227925006d86bb8dd88b0442ed73fbc49216b6e94b0870a7761d979eca"
    static let bobCKPublic = "cd270df90fe03385e4fe67778eba23c9b8978ebc94a685daff3d3d42a5da2b42"
    static let aliceFSSKSecret = String(repeating: "a1", count: 32)
    static let aliceFSSKPublic = "c306fb0ef2bf8b7f93bad98155fa37daec74db0c4cbeda6c6f1dba9d36558252"
    static let bobFSSKSecret = String(repeating: "b2", count: 32)
    static let bobFSSKPublic = "db48257e1237976a74ad8cfedca00213408fe89ac6251f1b930245f242b5c31a"
    static let ss = "0f3cb77de3b0a992f4f793e30eb099617e33ae51f97b91aa368d0819c0243451"   // X(aCK, bCK)
    static let se = "527fdfdd62e7d3d33a0fcec9ff576ddf629e7baf59ddb7c1a5e4f9a6203f745b"   // X(aFSSK, bCK)
    static let es = "2d08e826b6af13af01c3a3f7ac0dadfdc4314f22b927968444c7af44e0ea187a"   // X(aCK, bFSSK)
    static let ee = "56bb7c2478c79d32eb23211467732d7353092e04a78c209678a30a173d2b4c72"   // X(aFSSK, bFSSK)
    static let rootKey2DH = "0845eb80570f6f8ba55a04174a08f39b19cf4626757f5c23a1f174f3622a7a59"
    /// What the 2DH key would be with ss ‖ se as BLAKE2b input instead of key (§7.1): must differ.
    static let rootKey2DHInputForm = "da0e5fe2bc232c14ed700dbe75716798b81a7832342152d361c8a23c39d9d7bc"
    static let intermediate4DH = "8546c6f8a6ba68d9b4580f6e8dd83d5f20dd9ef908b3566ce15b818834297e0b198655169baf66fca0b64419e18d50ac58c8925b8fcf5cfcae959b04f4e6bfa1"
    static let alice4DHK0 = "d150ebf7e5e4bd85dcd6090e105f1759c632326e69bfe902e4aa8b5767ca4d80"
    static let bob4DHK0 = "ef8f5173d618b72eede67361e649bccb0393fcb7d3c9fb45a94adfadc5928b68"
    static let alice4DHMessageKey1 = "0a59997181c6e1740e72fab06d87266dcf1cd1d738cdc0c62e3ad8fcd75ebf9c"
    static let alice4DHChainKey2 = "024dfa98afbadc85bf06c6a36dabba8e1d52ce4ed461b29203f34ca83c4e5c3d"
    static let alice4DHMessageKey2 = "38c94dd6167ed71fe5cb2fd8019eabd6750d03dbaa49999b41c9ee1e91dd3caa"
    static let alice2DHMessageKey1 = "2a3253dc1fe3ab558a4fdaa7a2b94a0792bb290c80638b10b798aac9d886e3b4"
    static let exampleInner = "014869"
    static let exampleEncryptedInner = "0a3c48869ea369b4e63ddcfd9238c456302472"   // tag ‖ ct, key alice4DHMessageKey1, zero nonce

    static var alice: ThreemaIdentity { try! ThreemaIdentity(id: ThreemaID(aliceID), privateKey: hexBytes(aliceCKSecret)) }
    static var bob: ThreemaIdentity { try! ThreemaIdentity(id: ThreemaID(bobID), privateKey: hexBytes(bobCKSecret)) }
    static var aliceFSSK: Curve25519.KeyAgreement.PrivateKey { try! .init(rawRepresentation: hexBytes(aliceFSSKSecret)) }
    static var bobFSSK: Curve25519.KeyAgreement.PrivateKey { try! .init(rawRepresentation: hexBytes(bobFSSKSecret)) }
}

func keyHex(_ k: SymmetricKey) -> String { k.withUnsafeBytes { hexString($0) } }

@Suite struct IbexRatchetTests {
    /// A ratchet turns its chain key in place only when it owns it alone: turning a copy leaves the
    /// original's key as it was, and both paths give the same successor.
    @Test func turningACopyLeavesTheOriginal() throws {
        func bytes(_ r: Ibex.KDFRatchet) -> [UInt8] { r.chainKeyForTesting.withUnsafeBytes { Array($0) } }
        var a = try Ibex.KDFRatchet(chainKey: SymmetricKey(data: (0..<32).map { UInt8($0 &* 7) }))
        let before = bytes(a)
        var b = a            // shares the key storage
        b.turn()             // must not write into a's key
        #expect(bytes(a) == before)
        a.turn()             // a owns its key alone now: turned in place
        #expect(bytes(a) == bytes(b) && bytes(a) != before && a.counter == b.counter)
        var c = a
        c.turn(); c.turn(); a.turn(); a.turn()
        #expect(bytes(a) == bytes(c))
        // A key value shared with a pinned copy is not overwritten either.
        var k = SymmetricKey(data: before)
        let pinned = k.pinned(to: .portable)
        #expect(!k.replaceBytesIfUniquelyOwned { $0.initializeMemory(as: UInt8.self, repeating: 0) })
        #expect(pinned.withUnsafeBytes { Array($0) } == before)
    }

    @Test func publishedOneTurn() throws {
        // KDFRatchetTest starts at counter 0; the counter only labels the keys.
        var r = try Ibex.KDFRatchet(counter: 0, chainKey: SymmetricKey(data: hexBytes(IbexVectors.initialChainKey)))
        r.turn()
        #expect(r.counter == 1)
        #expect(keyHex(r.currentEncryptionKey) == IbexVectors.after1TurnEncryptionKey)
        #expect(keyHex(r.chainKeyForTesting) == IbexVectors.chainKeyAfter1Turn)
    }

    @Test func publishedHundredTurns() throws {
        var r = try Ibex.KDFRatchet(counter: 0, chainKey: SymmetricKey(data: hexBytes(IbexVectors.initialChainKey)))
        for _ in 0..<100 { r.turn() }
        #expect(r.counter == 100)
        #expect(keyHex(r.currentEncryptionKey) == IbexVectors.after100TurnsEncryptionKey)
        var s = try Ibex.KDFRatchet(counter: 0, chainKey: SymmetricKey(data: hexBytes(IbexVectors.initialChainKey)))
        #expect(try s.turn(until: 100) == 100)
        #expect(keyHex(s.currentEncryptionKey) == IbexVectors.after100TurnsEncryptionKey)
    }

    @Test func catchUpLimits() throws {
        let ck = SymmetricKey(data: hexBytes(IbexVectors.initialChainKey))
        var r = try Ibex.KDFRatchet(counter: 5, chainKey: ck)
        #expect(try r.turn(until: 5) == 0)
        #expect(throws: ThreemaError.ibex(.counterInPast(ratchet: 5, message: 4))) { try r.turn(until: 4) }
        #expect(throws: ThreemaError.ibex(.counterTooFarAhead(ratchet: 5, message: 25006))) { try r.turn(until: 25006) }
        #expect(throws: ThreemaError.ibex(.counterTooFarAhead(ratchet: 5, message: .max))) { try r.turn(until: .max) }
        #expect(r.counter == 5)
        #expect(r.chainKeyForTesting == ck)   // refused jumps leave the state as it was
        #expect(try r.turn(until: 25005) == 25000)
        #expect(r.counter == 25005)
        #expect(throws: ThreemaError.invalidArgument("an Ibex chain key has 32 bytes")) {
            try Ibex.KDFRatchet(chainKey: SymmetricKey(data: [UInt8](repeating: 1, count: 16)))
        }
    }
}

@Suite struct IbexRootKeyTests {
    typealias V = IbexVectors

    @Test func publicKeys() {
        #expect(hexString(V.alice.publicKey.rawRepresentation) == V.aliceCKPublic)
        #expect(hexString(V.bob.publicKey.rawRepresentation) == V.bobCKPublic)
        #expect(hexString(V.aliceFSSK.publicKey.rawRepresentation) == V.aliceFSSKPublic)
        #expect(hexString(V.bobFSSK.publicKey.rawRepresentation) == V.bobFSSKPublic)
    }

    func bothSides() throws -> (Ibex.SharedSecrets, Ibex.SharedSecrets) {
        let a = try Ibex.SharedSecrets.initiator(identity: V.alice, peer: V.bob.contact, ephemeral: V.aliceFSSK,
                                                 peerEphemeral: V.bobFSSK.publicKey)
        let b = try Ibex.SharedSecrets.responder(identity: V.bob, peer: V.alice.contact, ephemeral: V.bobFSSK,
                                                 peerEphemeral: V.aliceFSSK.publicKey)
        return (a, b)
    }

    @Test func sharedSecretsAgree() throws {
        let (a, b) = try bothSides()
        for s in [a, b] {
            #expect(keyHex(s.ss) == V.ss)
            #expect(keyHex(s.se) == V.se)
            #expect(s.es.map(keyHex) == V.es)
            #expect(s.ee.map(keyHex) == V.ee)
        }
        let early = try Ibex.SharedSecrets.initiator(identity: V.alice, peer: V.bob.contact, ephemeral: V.aliceFSSK,
                                                     peerEphemeral: nil)
        #expect(keyHex(early.ss) == V.ss && keyHex(early.se) == V.se)
        #expect(early.es == nil && early.ee == nil && early.intermediate4DH == nil)
        #expect(early.rootKeys4DH(local: V.alice.id, remote: V.bob.id) == nil)
    }

    @Test func rootKey2DH() throws {
        let (a, b) = try bothSides()
        let ka = a.rootKey2DH(initiator: V.alice.id)
        let kb = b.rootKey2DH(initiator: V.alice.id)   // the salt names the initiator on both sides
        #expect(keyHex(ka) == V.rootKey2DH)
        #expect(ka == kb)
        #expect(keyHex(ka) != V.rootKey2DHInputForm)
        let r = try Ibex.KDFRatchet(chainKey: ka)
        #expect(r.counter == 1)
        #expect(keyHex(r.currentEncryptionKey) == V.alice2DHMessageKey1)
    }

    @Test func rootKeys4DH() throws {
        let (a, b) = try bothSides()
        #expect(a.intermediate4DH.map(keyHex) == V.intermediate4DH)
        #expect(b.intermediate4DH.map(keyHex) == V.intermediate4DH)
        let ka = try #require(a.rootKeys4DH(local: V.alice.id, remote: V.bob.id))
        let kb = try #require(b.rootKeys4DH(local: V.bob.id, remote: V.alice.id))
        #expect(keyHex(ka.local) == V.alice4DHK0)
        #expect(keyHex(ka.remote) == V.bob4DHK0)
        #expect(ka.local == kb.remote && ka.remote == kb.local)

        var r = try Ibex.KDFRatchet(chainKey: ka.local)
        #expect(keyHex(r.currentEncryptionKey) == V.alice4DHMessageKey1)
        r.turn()
        #expect(r.counter == 2)
        #expect(keyHex(r.chainKeyForTesting) == V.alice4DHChainKey2)
        #expect(keyHex(r.currentEncryptionKey) == V.alice4DHMessageKey2)
    }

    @Test func encapsulatedExample() throws {
        let key = SymmetricKey(data: hexBytes(V.alice4DHMessageKey1))
        let zero = [UInt8](repeating: 0, count: 24)
        #expect(hexString(try SecretBox.seal(hexBytes(V.exampleInner), using: key, nonce: zero)) == V.exampleEncryptedInner)
        #expect(hexString(try SecretBox.open(hexBytes(V.exampleEncryptedInner), using: key, nonce: zero)) == V.exampleInner)
    }
}
