// Stored auth keys (Docs/MTProto.md §2.7): the plain and the password-protected record against the vector
// built in Python (Vectors/mtproto/auth_key_record.json), a wrong password, every altered byte, crafted
// headers.

import Foundation
import Testing
@testable import RampartMTProto
import Rampart
import RampartTestSupport

nonisolated(unsafe) private let vector: [String: Any] = {
    guard let d = FileManager.default.contents(atPath: projectRoot + "/Vectors/mtproto/auth_key_record.json"),
          let o = try? JSONSerialization.jsonObject(with: d) as? [String: Any] else { return [:] }
    return o
}()

private func hex(_ k: String) -> [UInt8] { hexBytes((vector[k] as? String) ?? "") }
private func int(_ k: String) -> Int64 { (vector[k] as? NSNumber)?.int64Value ?? 0 }

@Suite struct AuthKeyRecordTests {
    /// The record the vector describes.
    private func expected() throws -> AuthKeyRecord {
        var salts = ServerSalts(current: int("salt"), validUntil: Double(int("salt_valid_until")))
        let future = (vector["future_salts"] as? [[String: Any]] ?? []).map {
            FutureSalt(validSince: Int32(($0["valid_since"] as? NSNumber)?.int32Value ?? 0),
                       validUntil: Int32(($0["valid_until"] as? NSNumber)?.int32Value ?? 0),
                       salt: ($0["salt"] as? NSNumber)?.int64Value ?? 0)
        }
        salts.add(future)
        return AuthKeyRecord(authKey: try AuthKey(hex("key")), dc: Int32(int("dc")), expiresAt: int("expires_at"), salts: salts)
    }

    @Test func plainRecordMatchesTheVector() throws {
        try #require(!vector.isEmpty, "Vectors/mtproto/auth_key_record.json is missing")
        let record = try expected()
        #expect(record.serialized() == hex("plain"))
        #expect(try AuthKeyRecord(serialized: hex("plain")) == record)
        // A permanent key without future salts round-trips too.
        let permanent = AuthKeyRecord(authKey: record.authKey, dc: -4, salts: ServerSalts(current: 9))
        #expect(try AuthKeyRecord(serialized: permanent.serialized()) == permanent)
    }

    @Test func sealedRecordMatchesTheVectorBothWays() throws {
        try #require(!vector.isEmpty, "Vectors/mtproto/auth_key_record.json is missing")
        let password = Array(((vector["password"] as? String) ?? "").utf8)
        // Opening what Python sealed.
        #expect(try AuthKeyRecord(opening: hex("sealed"), password: password) == expected())
        // Sealing with the same salt and IV gives Python's bytes.
        var rng = ReplayRNG(chunks: [hex("pbkdf2_salt"), hex("iv")])
        let sealed = try expected().sealed(password: password, iterations: Int(int("iterations")), using: &rng)
        #expect(sealed == hex("sealed"))
    }

    @Test func wrongPasswordAndAlteredBytesAreRefused() throws {
        try #require(!vector.isEmpty, "Vectors/mtproto/auth_key_record.json is missing")
        let password = Array(((vector["password"] as? String) ?? "").utf8)
        let sealed = hex("sealed")
        #expect(throws: MTProtoError.wrongPassword) { try AuthKeyRecord(opening: sealed, password: password + [0x21]) }
        #expect(throws: MTProtoError.wrongPassword) { try AuthKeyRecord(opening: sealed, password: [UInt8]()) }
        // Every byte altered: refused (never a record), header bytes as invalidKeyRecord or a
        // different derivation, ciphertext bytes as wrongPassword.
        // (The iteration count, bytes 6..<10, is left alone here: a larger count is only slower, and
        // the limit is checked below.)
        for i in stride(from: 0, to: sealed.count, by: 5) where !(6..<10).contains(i) {
            var bad = sealed
            bad[i] ^= 0x40
            #expect(throws: MTProtoError.self, "byte \(i)") { try AuthKeyRecord(opening: bad, password: password) }
        }
        for n in [0, 4, 41, 57, sealed.count - 1] {
            #expect(throws: MTProtoError.self, "\(n) bytes") { try AuthKeyRecord(opening: Array(sealed.prefix(n)), password: password) }
        }
        // A header asking for more iterations than allowed is refused before any work.
        var slow = sealed
        slow.replaceSubrange(6..<10, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: MTProtoError.invalidKeyRecord("iterations 4294967295")) { try AuthKeyRecord(opening: slow, password: password) }
        // Plain records: any truncation or a flipped magic/flag byte is a typed error.
        let plain = hex("plain")
        for n in [0, 7, 8 + 12 + 255, plain.count - 1] {
            #expect(throws: MTProtoError.self) { try AuthKeyRecord(serialized: plain.prefix(n)) }
        }
        for i in [0, 4, 5, 6] {
            var bad = plain
            bad[i] ^= 0x02
            #expect(throws: MTProtoError.self, "byte \(i)") { try AuthKeyRecord(serialized: bad) }
        }
        #expect(throws: MTProtoError.self) { try AuthKeyRecord(serialized: plain + [0]) }
    }

    @Test func sealRefusesIterationsOutsideTheLimits() throws {
        var rng = SplitMix64(seed: 9)
        let record = AuthKeyRecord(authKey: try AuthKey(randomBytes(count: 256, using: &rng)), dc: 2, salts: ServerSalts(current: 1))
        for n in [0, -1, AuthKeyRecord.maxIterations + 1] {
            #expect(throws: MTProtoError.invalidKeyRecord("iterations \(n)")) { _ = try record.sealed(password: [1], iterations: n, using: &rng) }
        }
        let sealed = try record.sealed(password: Array("pw".utf8), iterations: 7, using: &rng)
        #expect(Array(sealed[6..<10]) == [7, 0, 0, 0])
        #expect(try AuthKeyRecord(opening: sealed, password: Array("pw".utf8)) == record)
    }
}
