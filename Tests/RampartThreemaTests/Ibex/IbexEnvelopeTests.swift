// The csp_e2e_fs.Envelope codec (Docs/Threema.md §1.5): hand-assembled bytes, round trips, strict
// refusals and a seeded random/mutation fuzz run.

import RampartCodecs
import RampartTestSupport
import Testing
@_spi(Testing) @testable import RampartThreema

@Suite struct IbexEnvelopeTests {
    static let sid = [UInt8](0..<16)
    static let fssk = [UInt8](repeating: 0x42, count: 32)
    static let group = Ibex.GroupIdentity(groupID: 0x0807060504030201, creator: try! ThreemaID("000ALICE"))

    static var samples: [Ibex.Envelope] {
        let v = Ibex.VersionRange(min: Ibex.Versions.v1_0, max: Ibex.Versions.v1_2)
        return [
            .init(sessionID: sid, content: .initiate(.init(ephemeralPublicKey: fssk, supportedVersion: v))),
            .init(sessionID: sid, content: .initiate(.init(ephemeralPublicKey: fssk, supportedVersion: nil))),
            .init(sessionID: sid, content: .accept(.init(ephemeralPublicKey: fssk, supportedVersion: .init(min: 0, max: 0)))),
            .init(sessionID: sid, content: .reject(.init(messageID: 0x1122334455667788, cause: .unknownSession))),
            .init(sessionID: sid, content: .reject(.init(messageID: 0, cause: .stateMismatch, groupIdentity: group))),
            .init(sessionID: sid, content: .terminate(.init(cause: .unknownSession))),
            .init(sessionID: sid, content: .terminate(.init(cause: .disabledByRemote))),
            .init(sessionID: sid, content: .encapsulated(.init(dhType: .fourDH, counter: 300, encryptedInner: [1, 2, 3],
                                                               offeredVersion: 0x0102, appliedVersion: 0x0101,
                                                               groupIdentity: group))),
            .init(sessionID: sid, content: .encapsulated(.init(dhType: .twoDH, counter: 0, encryptedInner: [],
                                                               offeredVersion: 0, appliedVersion: 0))),
        ]
    }

    @Test func handAssembledBytes() throws {
        // Envelope { session_id = 00…0f, encapsulated { dh_type FOURDH, counter 300, inner 010203,
        //            offered 0x0102, applied 0x0101 } }
        let expected: [UInt8] = [0x0a, 0x10] + Self.sid + [
            0x32, 0x10,
            0x08, 0x01,
            0x10, 0xac, 0x02,
            0x1a, 0x03, 0x01, 0x02, 0x03,
            0x20, 0x82, 0x02,
            0x28, 0x81, 0x02,
        ]
        let e = Ibex.Envelope(sessionID: Self.sid, content: .encapsulated(.init(
            dhType: .fourDH, counter: 300, encryptedInner: [1, 2, 3], offeredVersion: 0x0102, appliedVersion: 0x0101)))
        #expect(try e.encoded() == expected)
        #expect(try Ibex.Envelope(decoding: expected) == e)

        // Reject { message_id fixed64, cause UNKNOWN_SESSION, group { group_id, creator "000ALICE" } }
        let reject: [UInt8] = [0x0a, 0x10] + Self.sid + [0x22, 0x20,
            0x09, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
            0x10, 0x01,
            0x1a, 0x13, 0x09, 1, 2, 3, 4, 5, 6, 7, 8, 0x12, 0x08] + Array("000ALICE".utf8)
        let decoded = try Ibex.Envelope(decoding: reject)
        #expect(decoded.content == .reject(.init(messageID: 0x1122334455667788, cause: .unknownSession, groupIdentity: Self.group)))
        #expect(try decoded.encoded() == reject)

        // Unknown fields are skipped, also inside the content.
        let withUnknown: [UInt8] = [0x78, 0x05, 0x0a, 0x10] + Self.sid + [0x2a, 0x04, 0x08, 0x03, 0x38, 0x00]
        #expect(try Ibex.Envelope(decoding: withUnknown).content == .terminate(.init(cause: .disabledByRemote)))
    }

    @Test func roundTrips() throws {
        for e in Self.samples {
            let bytes = try e.encoded()
            let d = try Ibex.Envelope(decoding: bytes)
            #expect(d == e)
            #expect(try d.encoded() == bytes)
        }
    }

    @Test func versionDefaults() {
        let e = Ibex.Encapsulated(dhType: .twoDH, counter: 1, encryptedInner: [], offeredVersion: 0, appliedVersion: 0)
        #expect(e.effectiveOfferedVersion == 0x0100 && e.effectiveAppliedVersion == 0x0100)
        let f = Ibex.Encapsulated(dhType: .twoDH, counter: 1, encryptedInner: [], offeredVersion: 0x0102, appliedVersion: 0)
        #expect(f.effectiveAppliedVersion == 0x0102)
        #expect(Ibex.KeyOffer(ephemeralPublicKey: Self.fssk, supportedVersion: nil).effectiveVersionRange
                == .init(min: 0x0100, max: 0x0100))
    }

    @Test func strictRefusals() throws {
        func fault(_ bytes: [UInt8]) -> IbexFault? {
            do { _ = try Ibex.Envelope(decoding: bytes); return nil } catch {
                if case .ibex(let f) = error { return f }
                return nil
            }
        }
        let head: [UInt8] = [0x0a, 0x10] + Self.sid
        #expect(fault([]) == .invalidSessionIDLength(0))
        #expect(fault([0x0a, 0x01, 0x00, 0x2a, 0x00]) == .invalidSessionIDLength(1))
        #expect(fault(head) == .missingContent)
        #expect(fault(head + head + [0x2a, 0x00]) == .duplicateField(1))
        #expect(fault(head + [0x2a, 0x00, 0x2a, 0x00]) == .duplicateField(5))
        #expect(fault(head + [0x2a, 0x00, 0x32, 0x00]) == .duplicateField(6))
        #expect(fault(head + [0x2a, 0x02, 0x08, 0x04]) == .unknownEnumValue(field: 1, value: 4))
        #expect(fault(head + [0x32, 0x02, 0x08, 0x02]) == .unknownEnumValue(field: 1, value: 2))
        #expect(fault(head + [0x22, 0x02, 0x10, 0x03]) == .unknownEnumValue(field: 2, value: 3))
        #expect(fault(head + [0x12, 0x00]) == .missingField(1))
        #expect(fault(head + [0x12, 0x03, 0x0a, 0x01, 0x00]) == .invalidEphemeralKeyLength(1))
        #expect(fault(head + [0x12, 0x26, 0x0a, 0x20] + Self.fssk + [0x12, 0x02, 0x08, 0x05]) == .invalidVersionRange)
        #expect(fault(head + [0x32, 0x06, 0x20, 0x80, 0x80, 0x80, 0x80, 0x10]) == .malformedProtobuf(.invalidValue(field: 4)))
        #expect(fault(head + [0x32, 0x02, 0x10, 0x81]) == .malformedProtobuf(.truncated))
        #expect(fault(head + [0x32, 0x02, 0x1d, 0x00]) == .malformedProtobuf(.truncated))
        #expect(fault(head + [0x32, 0x05, 0x1d, 0, 0, 0, 0]) == .malformedProtobuf(.wrongWireType(field: 3)))
        #expect(fault(head + [0x32, 0x04, 0x32, 0x02, 0x12, 0x00]) == .invalidGroupCreator)
        #expect(fault(head + [0x32, 0x02, 0x32, 0x00]) == .invalidGroupCreator)
        #expect(fault([0x0b]) == .malformedProtobuf(.unsupportedWireType(3)))
        #expect(fault([0x0d, 0, 0, 0, 0]) == .malformedProtobuf(.wrongWireType(field: 1)))
    }

    @Test func encodeRefusesWhatDecodeRefuses() {
        let bad: [Ibex.Envelope] = [
            .init(sessionID: [1], content: .terminate(.init(cause: .reset))),
            .init(sessionID: Self.sid, content: .initiate(.init(ephemeralPublicKey: [1, 2], supportedVersion: nil))),
            .init(sessionID: Self.sid, content: .accept(.init(ephemeralPublicKey: Self.fssk,
                                                              supportedVersion: .init(min: 2, max: 1)))),
        ]
        for e in bad { #expect(throws: ThreemaError.self) { try e.encoded() } }
    }

    /// Seeded random bytes and mutations of valid envelopes: every input decodes or throws a
    /// ThreemaError (typed throws make any other outcome a trap), and whatever decodes re-encodes to
    /// something that decodes to the same value.
    @Test func fuzz() throws {
        var rng = SplitMix64(seed: 0x1bE4)
        let seeds = try Self.samples.map { try $0.encoded() }
        var decodedCount = 0
        for i in 0..<(isDebugBuild ? 6000 : 30000) {
            let input: [UInt8]
            if i % 3 == 0 {
                input = randomBytes(count: Int(rng.next() % 96), using: &rng)
            } else {
                var b = seeds[Int(rng.next() % UInt64(seeds.count))]
                for _ in 0...(rng.next() % 3) { b = mutated(b, &rng) }
                input = b
            }
            guard let e = try? Ibex.Envelope(decoding: input) else { continue }
            decodedCount += 1
            let again = try e.encoded()
            #expect(try Ibex.Envelope(decoding: again) == e)
        }
        #expect(decodedCount > 100)
    }
}
