// The `csp_e2e_fs.Envelope` protobuf (Docs/Threema.md §1.5): the body of an outer E2E message of
// type 0xa0. Field numbers follow threema-protocols' `csp-e2e-fs.proto` and `common.proto`
// (`GroupIdentity`); the codec is written here against RampartCodecs' reader and writer.
//
// Decoding is strict where the schema leaves room: a known field may appear only once, the
// `content` oneof exactly once, enums take only their defined values, the session ID has 16 bytes
// and ephemeral keys 32. Unknown field numbers are skipped (protobuf's rule for newer senders).
// Encoding writes fields in ascending number order and leaves out proto3 defaults (zero scalars,
// empty bytes), so `decode(encode(x)) == x` and re-encoding a decoded canonical message gives the
// same bytes.

import RampartCodecs

extension Ibex {
    /// A protocol version: major in the high byte, minor in the low byte (`V1_0 = 0x0100`).
    public typealias Version = UInt32

    /// The versions Threema has defined so far.
    public enum Versions {
        /// Version 1.0.
        public static let v1_0: Version = 0x0100
        /// Version 1.1 (all 1:1 message types encapsulated).
        public static let v1_1: Version = 0x0101
        /// Version 1.2 (group messages encapsulated).
        public static let v1_2: Version = 0x0102
    }

    /// `VersionRange { uint32 min = 1; uint32 max = 2; }`.
    public struct VersionRange: Sendable, Hashable {
        /// The lowest version supported.
        public var min: Version
        /// The highest version supported.
        public var max: Version
        /// A range; `min` must not exceed `max` for it to encode and decode.
        public init(min: Version, max: Version) {
            self.min = min
            self.max = max
        }
    }

    /// `common.GroupIdentity { fixed64 group_id = 1; string creator_identity = 2; }`.
    public struct GroupIdentity: Sendable, Hashable {
        /// The 8-byte group ID (the little-endian value of the bytes the apps store).
        public var groupID: UInt64
        /// The group's creator.
        public var creator: ThreemaID
        /// A group identity.
        public init(groupID: UInt64, creator: ThreemaID) {
            self.groupID = groupID
            self.creator = creator
        }
    }

    /// `Init` and `Accept`: `{ bytes fssk = 1; VersionRange supported_version = 2; }`.
    public struct KeyOffer: Sendable, Hashable {
        /// The sender's 32-byte ephemeral public key (FSSK).
        public var ephemeralPublicKey: [UInt8]
        /// The versions the sender supports; absent means 1.0 … 1.0 (§1.5).
        public var supportedVersion: VersionRange?
        /// An offer.
        public init(ephemeralPublicKey: [UInt8], supportedVersion: VersionRange?) {
            self.ephemeralPublicKey = ephemeralPublicKey
            self.supportedVersion = supportedVersion
        }
        /// `supportedVersion`, or 1.0 … 1.0 when absent.
        public var effectiveVersionRange: VersionRange {
            supportedVersion ?? VersionRange(min: Versions.v1_0, max: Versions.v1_0)
        }
    }

    /// `Reject { fixed64 message_id = 1; Cause cause = 2; GroupIdentity group_identity = 3; }`.
    public struct Reject: Sendable, Hashable {
        /// `Reject.Cause`.
        public enum Cause: UInt32, Sendable, Hashable {
            /// The message could not be decrypted, had the wrong DH type or version.
            case stateMismatch = 0
            /// No session with this ID.
            case unknownSession = 1
            /// The receiver has forward secrecy switched off.
            case disabledByLocal = 2
        }
        /// The ID of the message that could not be decrypted.
        public var messageID: UInt64
        /// Why.
        public var cause: Cause
        /// The group the message was sent in, if any.
        public var groupIdentity: GroupIdentity?
        /// A reject.
        public init(messageID: UInt64, cause: Cause, groupIdentity: GroupIdentity? = nil) {
            self.messageID = messageID
            self.cause = cause
            self.groupIdentity = groupIdentity
        }
    }

    /// `Terminate { Cause cause = 1; }`.
    public struct Terminate: Sendable, Hashable {
        /// `Terminate.Cause`.
        public enum Cause: UInt32, Sendable, Hashable {
            /// No session with this ID.
            case unknownSession = 0
            /// The session is being reset.
            case reset = 1
            /// The sender has forward secrecy switched off.
            case disabledByLocal = 2
            /// The directory says the receiver does not support forward secrecy.
            case disabledByRemote = 3
        }
        /// Why.
        public var cause: Cause
        /// A terminate.
        public init(cause: Cause) { self.cause = cause }
    }

    /// `Encapsulated.DHType`.
    public enum DHType: UInt32, Sendable, Hashable {
        /// Initiator → responder before the session is bidirectional.
        case twoDH = 0
        /// Either direction once both ephemeral keys are known.
        case fourDH = 1
    }

    /// `Encapsulated { DHType dh_type = 1; uint64 counter = 2; bytes encrypted_inner = 3;
    /// uint32 offered_version = 4; uint32 applied_version = 5; GroupIdentity group_identity = 6; }`.
    public struct Encapsulated: Sendable, Hashable {
        /// Which ratchet encrypted the inner message.
        public var dhType: DHType
        /// The ratchet counter of the message key.
        public var counter: UInt64
        /// `tag ‖ ciphertext` of `type ‖ body` under the message key with a zero nonce.
        public var encryptedInner: [UInt8]
        /// The offered version as sent (0 reads as 1.0, see ``effectiveOfferedVersion``).
        public var offeredVersion: Version
        /// The applied version as sent (0 reads as the offered one, see ``effectiveAppliedVersion``).
        public var appliedVersion: Version
        /// The group of a group message, absent for 1:1.
        public var groupIdentity: GroupIdentity?
        /// An encapsulated message.
        public init(dhType: DHType, counter: UInt64, encryptedInner: [UInt8], offeredVersion: Version,
                    appliedVersion: Version, groupIdentity: GroupIdentity? = nil) {
            self.dhType = dhType
            self.counter = counter
            self.encryptedInner = encryptedInner
            self.offeredVersion = offeredVersion
            self.appliedVersion = appliedVersion
            self.groupIdentity = groupIdentity
        }
        /// `offeredVersion`, with 0 read as 1.0.
        public var effectiveOfferedVersion: Version { offeredVersion == 0 ? Versions.v1_0 : offeredVersion }
        /// `appliedVersion`, with 0 read as the effective offered version.
        public var effectiveAppliedVersion: Version { appliedVersion == 0 ? effectiveOfferedVersion : appliedVersion }
    }

    /// `csp_e2e_fs.Envelope { bytes session_id = 1; oneof content { … = 2…6 } }`.
    public struct Envelope: Sendable, Hashable {
        /// The `content` oneof.
        public enum Content: Sendable, Hashable {
            /// Field 2: the initiator's offer.
            case initiate(KeyOffer)
            /// Field 3: the responder's answer.
            case accept(KeyOffer)
            /// Field 4.
            case reject(Reject)
            /// Field 5.
            case terminate(Terminate)
            /// Field 6.
            case encapsulated(Encapsulated)
        }
        /// The 16-byte session ID.
        public var sessionID: [UInt8]
        /// What the envelope carries.
        public var content: Content
        /// An envelope.
        public init(sessionID: [UInt8], content: Content) {
            self.sessionID = sessionID
            self.content = content
        }

        /// The length of a session ID (`FS_SESSION_ID_LENGTH`).
        public static let sessionIDLength = 16

        /// The protobuf bytes.
        ///
        /// - Throws: ``ThreemaError/ibex(_:)`` for a session ID other than 16 bytes, an ephemeral
        ///   key other than 32 bytes or a version range with `min > max` (what decoding refuses).
        public func encoded() throws(ThreemaError) -> [UInt8] {
            guard sessionID.count == Self.sessionIDLength else { throw .ibex(.invalidSessionIDLength(sessionID.count)) }
            var w = ProtobufWriter(reservingCapacity: 64 + (Self.encapsulatedInner(content)?.count ?? 0))
            w.bytes(1, sessionID)
            switch content {
            case .initiate(let o): w.bytes(2, try Ibex.encode(o))
            case .accept(let o): w.bytes(3, try Ibex.encode(o))
            case .reject(let r):
                var m = ProtobufWriter()
                if r.messageID != 0 { m.fixed64(1, r.messageID) }
                if r.cause.rawValue != 0 { m.varint(2, UInt64(r.cause.rawValue)) }
                if let g = r.groupIdentity { m.bytes(3, Ibex.encode(g)) }
                w.bytes(4, m.bytes)
            case .terminate(let t):
                var m = ProtobufWriter()
                if t.cause.rawValue != 0 { m.varint(1, UInt64(t.cause.rawValue)) }
                w.bytes(5, m.bytes)
            case .encapsulated(let e):
                // The message that every chat message travels in: written in place (its length is
                // computed first), so the ciphertext is copied once.
                let group = e.groupIdentity.map { Ibex.encode($0) }
                typealias W = ProtobufWriter
                var n = 0
                if e.dhType.rawValue != 0 { n += W.varintFieldByteCount(1, UInt64(e.dhType.rawValue)) }
                if e.counter != 0 { n += W.varintFieldByteCount(2, e.counter) }
                if !e.encryptedInner.isEmpty { n += W.lengthDelimitedFieldByteCount(3, byteCount: e.encryptedInner.count) }
                if e.offeredVersion != 0 { n += W.varintFieldByteCount(4, UInt64(e.offeredVersion)) }
                if e.appliedVersion != 0 { n += W.varintFieldByteCount(5, UInt64(e.appliedVersion)) }
                if let group { n += W.lengthDelimitedFieldByteCount(6, byteCount: group.count) }
                w.lengthDelimitedHeader(6, byteCount: n)
                if e.dhType.rawValue != 0 { w.varint(1, UInt64(e.dhType.rawValue)) }
                if e.counter != 0 { w.varint(2, e.counter) }
                if !e.encryptedInner.isEmpty { w.bytes(3, e.encryptedInner) }
                if e.offeredVersion != 0 { w.varint(4, UInt64(e.offeredVersion)) }
                if e.appliedVersion != 0 { w.varint(5, UInt64(e.appliedVersion)) }
                if let group { w.bytes(6, group) }
            }
            return w.bytes
        }

        private static func encapsulatedInner(_ c: Content) -> [UInt8]? {
            if case .encapsulated(let e) = c { return e.encryptedInner }
            return nil
        }

        /// Decodes protobuf bytes strictly (see the file comment).
        ///
        /// - Throws: ``ThreemaError/ibex(_:)`` with the ``IbexFault`` that names the problem;
        ///   never traps.
        public init<C: Collection<UInt8>>(decoding bytes: C) throws(ThreemaError) {
            do throws(IbexFault) {
                var sessionID: [UInt8]?
                var content: Content?
                var r = ProtobufReader(bytes)
                while let f = try Ibex.next(&r) {
                    switch f.number {
                    case 1:
                        guard sessionID == nil else { throw .duplicateField(1) }
                        sessionID = Array(try Ibex.bytes(f))
                    case 2...6:
                        guard content == nil else { throw .duplicateField(f.number) }
                        let body = try Ibex.bytes(f)
                        switch f.number {
                        case 2: content = .initiate(try Ibex.decodeOffer(body))
                        case 3: content = .accept(try Ibex.decodeOffer(body))
                        case 4: content = .reject(try Ibex.decodeReject(body))
                        case 5: content = .terminate(try Ibex.decodeTerminate(body))
                        default: content = .encapsulated(try Ibex.decodeEncapsulated(body))
                        }
                    default: break
                    }
                }
                let id = sessionID ?? []
                guard id.count == Self.sessionIDLength else { throw .invalidSessionIDLength(id.count) }
                guard let content else { throw .missingContent }
                self.init(sessionID: id, content: content)
            } catch {
                throw .ibex(error)
            }
        }
    }
}

// MARK: - Field helpers

extension Ibex {
    static func next(_ r: inout ProtobufReader) throws(IbexFault) -> ProtobufField? {
        do { return try r.next() } catch { throw .malformedProtobuf(error) }
    }

    static func bytes(_ f: ProtobufField) throws(IbexFault) -> ArraySlice<UInt8> {
        do { return try f.bytes() } catch { throw .malformedProtobuf(error) }
    }

    static func varint(_ f: ProtobufField) throws(IbexFault) -> UInt64 {
        do { return try f.varint() } catch { throw .malformedProtobuf(error) }
    }

    static func uint32(_ f: ProtobufField) throws(IbexFault) -> UInt32 {
        let v = try varint(f)
        guard v <= UInt64(UInt32.max) else { throw .malformedProtobuf(.invalidValue(field: f.number)) }
        return UInt32(v)
    }

    static func enumValue<E: RawRepresentable<UInt32>>(_ f: ProtobufField, _: E.Type) throws(IbexFault) -> E {
        let v = try varint(f)
        guard v <= UInt64(UInt32.max), let e = E(rawValue: UInt32(v)) else {
            throw .unknownEnumValue(field: f.number, value: v)
        }
        return e
    }

    /// Marks `number` as seen, refusing a second occurrence.
    static func once(_ seen: inout UInt64, _ number: UInt32) throws(IbexFault) {
        let bit: UInt64 = 1 << UInt64(number)
        guard seen & bit == 0 else { throw .duplicateField(number) }
        seen |= bit
    }

    static func encode(_ o: KeyOffer) throws(ThreemaError) -> [UInt8] {
        guard o.ephemeralPublicKey.count == 32 else { throw .ibex(.invalidEphemeralKeyLength(o.ephemeralPublicKey.count)) }
        var w = ProtobufWriter()
        w.bytes(1, o.ephemeralPublicKey)
        if let v = o.supportedVersion {
            guard v.min <= v.max else { throw .ibex(.invalidVersionRange) }
            var m = ProtobufWriter()
            if v.min != 0 { m.varint(1, UInt64(v.min)) }
            if v.max != 0 { m.varint(2, UInt64(v.max)) }
            w.bytes(2, m.bytes)
        }
        return w.bytes
    }

    static func encode(_ g: GroupIdentity) -> [UInt8] {
        var w = ProtobufWriter()
        if g.groupID != 0 { w.fixed64(1, g.groupID) }
        w.bytes(2, g.creator.bytes)
        return w.bytes
    }

    static func decodeOffer(_ body: ArraySlice<UInt8>) throws(IbexFault) -> KeyOffer {
        var seen: UInt64 = 0
        var key: [UInt8]?
        var range: VersionRange?
        var r = ProtobufReader(body)
        while let f = try next(&r) {
            switch f.number {
            case 1:
                try once(&seen, 1)
                key = Array(try bytes(f))
            case 2:
                try once(&seen, 2)
                range = try decodeVersionRange(try bytes(f))
            default: break
            }
        }
        guard let key else { throw .missingField(1) }
        guard key.count == 32 else { throw .invalidEphemeralKeyLength(key.count) }
        return KeyOffer(ephemeralPublicKey: key, supportedVersion: range)
    }

    static func decodeVersionRange(_ body: ArraySlice<UInt8>) throws(IbexFault) -> VersionRange {
        var seen: UInt64 = 0
        var v = VersionRange(min: 0, max: 0)
        var r = ProtobufReader(body)
        while let f = try next(&r) {
            switch f.number {
            case 1:
                try once(&seen, 1)
                v.min = try uint32(f)
            case 2:
                try once(&seen, 2)
                v.max = try uint32(f)
            default: break
            }
        }
        guard v.min <= v.max else { throw .invalidVersionRange }
        return v
    }

    static func decodeGroupIdentity(_ body: ArraySlice<UInt8>) throws(IbexFault) -> GroupIdentity {
        var seen: UInt64 = 0
        var groupID: UInt64 = 0
        var creator: ThreemaID?
        var r = ProtobufReader(body)
        while let f = try next(&r) {
            switch f.number {
            case 1:
                try once(&seen, 1)
                do { groupID = try f.fixed64() } catch { throw .malformedProtobuf(error) }
            case 2:
                try once(&seen, 2)
                do { creator = try ThreemaID(bytes: try bytes(f)) } catch { throw .invalidGroupCreator }
            default: break
            }
        }
        guard let creator else { throw .invalidGroupCreator }
        return GroupIdentity(groupID: groupID, creator: creator)
    }

    static func decodeReject(_ body: ArraySlice<UInt8>) throws(IbexFault) -> Reject {
        var seen: UInt64 = 0
        var reject = Reject(messageID: 0, cause: .stateMismatch)
        var r = ProtobufReader(body)
        while let f = try next(&r) {
            switch f.number {
            case 1:
                try once(&seen, 1)
                do { reject.messageID = try f.fixed64() } catch { throw .malformedProtobuf(error) }
            case 2:
                try once(&seen, 2)
                reject.cause = try enumValue(f, Reject.Cause.self)
            case 3:
                try once(&seen, 3)
                reject.groupIdentity = try decodeGroupIdentity(try bytes(f))
            default: break
            }
        }
        return reject
    }

    static func decodeTerminate(_ body: ArraySlice<UInt8>) throws(IbexFault) -> Terminate {
        var seen: UInt64 = 0
        var t = Terminate(cause: .unknownSession)
        var r = ProtobufReader(body)
        while let f = try next(&r) {
            if f.number == 1 {
                try once(&seen, 1)
                t.cause = try enumValue(f, Terminate.Cause.self)
            }
        }
        return t
    }

    static func decodeEncapsulated(_ body: ArraySlice<UInt8>) throws(IbexFault) -> Encapsulated {
        var seen: UInt64 = 0
        var e = Encapsulated(dhType: .twoDH, counter: 0, encryptedInner: [], offeredVersion: 0, appliedVersion: 0)
        var r = ProtobufReader(body)
        while let f = try next(&r) {
            switch f.number {
            case 1:
                try once(&seen, 1)
                e.dhType = try enumValue(f, DHType.self)
            case 2:
                try once(&seen, 2)
                e.counter = try varint(f)
            case 3:
                try once(&seen, 3)
                e.encryptedInner = Array(try bytes(f))
            case 4:
                try once(&seen, 4)
                e.offeredVersion = try uint32(f)
            case 5:
                try once(&seen, 5)
                e.appliedVersion = try uint32(f)
            case 6:
                try once(&seen, 6)
                e.groupIdentity = try decodeGroupIdentity(try bytes(f))
            default: break
            }
        }
        return e
    }
}
