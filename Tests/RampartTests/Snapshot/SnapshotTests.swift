// The snapshot format (Rampart/Snapshot): the writer and reader, strict decoding of malformed bytes,
// sealing under a key and under a password, and XChaCha20-Poly1305 against its published vector.

@testable import Rampart
import RampartTestSupport
import Testing

private let testType = SnapshotType("TEST")

/// A small value with one field of each kind, as a real type would write it.
private struct Sample: Snapshottable, Equatable {
    static let snapshotType = testType
    var counter: UInt64
    var signed: Int32
    var flag: Bool
    var key: [UInt8]       // 32 bytes
    var note: [UInt8]      // at most 64
    var ids: [Int64]       // at most 100
    var deadline: Double?

    func snapshot() -> SnapshotBytes {
        var w = SnapshotWriter(type: Self.snapshotType, version: 1)
        w.uint64(counter)
        w.int32(signed)
        w.bool(flag)
        w.fixed(key)
        w.bytes(note)
        w.list(ids) { $0.int64($1) }
        w.optional(deadline) { $0.double($1) }
        return w.finish()
    }

    init(counter: UInt64, signed: Int32, flag: Bool, key: [UInt8], note: [UInt8], ids: [Int64], deadline: Double?) {
        (self.counter, self.signed, self.flag, self.key, self.note, self.ids, self.deadline) = (counter, signed, flag, key, note, ids, deadline)
    }

    init(restoring snapshot: SnapshotBytes) throws(RampartError) {
        var r = try SnapshotReader(snapshot, type: Self.snapshotType, versions: 1...1)
        counter = try r.uint64()
        signed = try r.int32()
        flag = try r.bool("flag")
        key = try r.fixed(32)
        note = try r.bytes("note", max: 64)
        ids = try r.list("ids", max: 100, minElementBytes: 8) { (r) throws(RampartError) in try r.int64() }
        deadline = try r.optional("deadline") { (r) throws(RampartError) in try r.double("deadline") }
        try r.finish()
    }
}

private let sample = Sample(counter: 0x0102_0304_0506_0708, signed: -2, flag: true, key: Array(0..<32), note: Array("hello".utf8),
                            ids: [1, -1, Int64.max], deadline: 1.5)

@Suite("State snapshots")
struct SnapshotTests {
    @Test func headerAndFieldLayout() {
        let s = sample.snapshot()
        let b = s.copyBytes()
        // "RSNP", "TEST", version 1, body length.
        #expect(Array(b[0..<4]) == Array("RSNP".utf8))
        #expect(Array(b[4..<8]) == Array("TEST".utf8))
        #expect(Array(b[8..<10]) == [1, 0])
        let body = b.count - 14
        #expect(Array(b[10..<14]) == [UInt8(body & 0xFF), UInt8(body >> 8 & 0xFF), 0, 0])
        // The first field: the counter, little-endian.
        #expect(Array(b[14..<22]) == [8, 7, 6, 5, 4, 3, 2, 1])
        #expect(s.type == testType)
    }

    @Test func restoreThenSnapshotGivesTheSameBytes() throws {
        let s = sample.snapshot()
        let restored = try Sample(restoring: s)
        #expect(restored == sample)
        #expect(restored.snapshot() == s)
        let empty = Sample(counter: 0, signed: 0, flag: false, key: [UInt8](repeating: 0, count: 32), note: [], ids: [], deadline: nil)
        #expect(try Sample(restoring: empty.snapshot()) == empty)
    }

    @Test func everyTruncationIsATypedError() {
        let b = sample.snapshot().copyBytes()
        for n in 0..<b.count {
            #expect(throws: RampartError.self) { _ = try Sample(restoring: SnapshotBytes(copying: b[0..<n])) }
        }
    }

    @Test func malformedHeadersAndFields() {
        let b = sample.snapshot().copyBytes()
        func restore(_ bytes: [UInt8]) -> RampartError? {
            do { _ = try Sample(restoring: SnapshotBytes(copying: bytes)); return nil } catch { return error }
        }
        var x = b; x[0] = 0x58
        #expect(restore(x) == .invalidSnapshot(.notASnapshot))
        x = b; x[4] = 0x58  // "XEST"
        #expect(restore(x) == .invalidSnapshot(.wrongType(expected: "TEST", found: "XEST")))
        x = b; x[8] = 2
        #expect(restore(x) == .invalidSnapshot(.unsupportedVersion(type: "TEST", version: 2)))
        #expect(restore(b + [0]) == .invalidSnapshot(.trailingBytes))
        x = b; x[10] &+= 1  // a body length one longer than what follows
        #expect(restore(x) == .invalidSnapshot(.truncated))
        x = b; x[26] = 2  // the flag byte (after 8 + 4 bytes of body)
        #expect(restore(x) == .invalidSnapshot(.invalidField("flag")))
        // A list count far beyond what is left is refused before any allocation.
        let idsCountAt = 14 + 8 + 4 + 1 + 32 + 4 + 5
        x = b; x[idsCountAt + 3] = 0x7F
        #expect(restore(x) == .invalidSnapshot(.invalidField("ids")))
        // A note longer than its bound.
        x = b; x[14 + 13 + 32] = 65
        #expect(restore(x) == .invalidSnapshot(.invalidField("note")))
    }

    @Test func sealedUnderAKey() throws {
        var rng = SplitMix64(seed: 0x5EA1)
        let key = SymmetricKey(data: (0..<32).map { UInt8($0 * 7 & 0xFF) })
        let s = sample.snapshot()
        let sealed = try SealedSnapshot.seal(s, key: key, using: &rng)
        #expect(Array(sealed[0..<4]) == Array("RSNK".utf8))
        #expect(SealedSnapshot.type(of: sealed) == testType)
        #expect(sealed.count == 4 + 6 + 24 + s.count + 16)
        let opened = try SealedSnapshot.open(sealed, key: key, type: testType)
        #expect(opened == s)
        // Two seals of the same snapshot differ (random nonces).
        #expect(try SealedSnapshot.seal(s, key: key, using: &rng) != sealed)
        // Every byte matters: header (associated data), nonce, ciphertext, tag.
        for i in stride(from: 0, to: sealed.count, by: 3) {
            var t = sealed; t[i] ^= 0x01
            #expect(throws: RampartError.self, "byte \(i)") { _ = try SealedSnapshot.open(t, key: key, type: testType) }
        }
        let other = SymmetricKey(data: [UInt8](repeating: 9, count: 32))
        #expect(throws: RampartError.invalidSnapshot(.authenticationFailure)) { _ = try SealedSnapshot.open(sealed, key: other, type: testType) }
        #expect(throws: RampartError.invalidSnapshot(.wrongType(expected: "ABCD", found: "TEST"))) {
            _ = try SealedSnapshot.open(sealed, key: key, type: SnapshotType("ABCD"))
        }
        for n in [0, 3, 8, 33, 49] {
            #expect(throws: RampartError.self) { _ = try SealedSnapshot.open(sealed.prefix(n), key: key, type: testType) }
        }
        #expect(throws: RampartError.invalidKeyLength) { _ = try SealedSnapshot.seal(s, key: SymmetricKey(data: [1, 2]), using: &rng) }
    }

    @Test func sealedUnderAPassword() throws {
        var rng = SplitMix64(seed: 0x9A55)
        let s = sample.snapshot()
        let cost = SealedSnapshot.PasswordCost(iterations: 1, memoryKiB: 64, parallelism: 1)
        let password = Array("correct horse battery staple".utf8)
        let sealed = try SealedSnapshot.seal(s, password: password, cost: cost, using: &rng)
        #expect(Array(sealed[0..<4]) == Array("RSNW".utf8))
        #expect(try SealedSnapshot.open(sealed, password: password, type: testType) == s)
        #expect(throws: RampartError.invalidSnapshot(.authenticationFailure)) {
            _ = try SealedSnapshot.open(sealed, password: Array("wrong".utf8), type: testType)
        }
        // The costs are authenticated: lowering them breaks the tag; raising them past the limit is
        // refused before any work.
        var t = sealed; t[10] = 2
        #expect(throws: RampartError.invalidSnapshot(.authenticationFailure)) { _ = try SealedSnapshot.open(t, password: password, type: testType) }
        t = sealed; t[17] = 0xFF  // memory 0xFF000040 KiB
        #expect(throws: RampartError.invalidSnapshot(.costTooHigh)) { _ = try SealedSnapshot.open(t, password: password, type: testType) }
        let strict = SealedSnapshot.PasswordCost(iterations: 1, memoryKiB: 32, parallelism: 1)
        #expect(throws: RampartError.invalidSnapshot(.costTooHigh)) {
            _ = try SealedSnapshot.open(sealed, password: password, type: testType, limit: strict)
        }
        // A key-sealed snapshot is not a password-sealed one.
        let keySealed = try SealedSnapshot.seal(s, key: SymmetricKey(data: [UInt8](repeating: 1, count: 32)), using: &rng)
        #expect(throws: RampartError.invalidSnapshot(.notASnapshot)) { _ = try SealedSnapshot.open(keySealed, password: password, type: testType) }
    }

    /// draft-irtf-cfrg-xchacha-03, appendix A.3.1.
    @Test func xchachaPoly1305PublishedVector() throws {
        let key = SymmetricKey(data: Array(0x80...0x9F).map { UInt8($0) })
        let nonce = Array(0x40...0x57).map { UInt8($0) }
        let aad = hexBytes("50515253c0c1c2c3c4c5c6c7")
        let message = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
        let sealed = try SealedSnapshot.xchachaSeal(key: key, nonce: nonce, aad: aad, message)
        #expect(sealed == hexBytes("bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff921f9664c97637da9768812f615c68b13b52ec0875924c1c7987947deafd8780acf49"))
    }
}

import Foundation

@Suite("XChaCha20-Poly1305 (sealed snapshots) against Wycheproof")
struct XChaChaWycheproofTests {
    /// Every case of Wycheproof's `xchacha20_poly1305_test.json` (Vectors/collected/wycheproof): the
    /// 246 valid ones seal to the expected ciphertext and tag and open again; of the 69 invalid ones,
    /// those with a 24-byte nonce fail to open (modified tags and ciphertexts) and the others are
    /// refused for their nonce length.
    @Test func everyCase() throws {
        let path = projectRoot + "/Vectors/collected/wycheproof/xchacha20_poly1305_test.json"
        let data = try #require(FileManager.default.contents(atPath: path), "missing \(path)")
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let groups = try #require(root["testGroups"] as? [[String: Any]])
        var valid = 0, invalid = 0
        for g in groups {
            for t in g["tests"] as? [[String: Any]] ?? [] {
                func hex(_ k: String) -> [UInt8] { hexBytes(t[k] as? String ?? "") }
                let id = t["tcId"] as? Int ?? -1
                let key = SymmetricKey(data: hex("key")), nonce = hex("iv"), aad = hex("aad"), msg = hex("msg")
                let sealed = hex("ct") + hex("tag")
                if t["result"] as? String == "valid" {
                    valid += 1
                    #expect(try SealedSnapshot.xchachaSeal(key: key, nonce: nonce, aad: aad, msg) == sealed, "tcId \(id)")
                    #expect(try SealedSnapshot.xchachaOpen(key: key, nonce: nonce, aad: aad, sealed) == msg, "tcId \(id)")
                } else {
                    invalid += 1
                    if nonce.count == 24 {
                        #expect(try SealedSnapshot.xchachaOpen(key: key, nonce: nonce, aad: aad, sealed) == nil, "tcId \(id)")
                    } else {
                        #expect(throws: RampartError.invalidNonceLength, "tcId \(id)") {
                            _ = try SealedSnapshot.xchachaOpen(key: key, nonce: nonce, aad: aad, sealed)
                        }
                    }
                }
            }
        }
        #expect(valid == 246 && invalid == 69)
    }
}
