// Group-call protobuf messages (Docs/Threema.md §10): `GroupCallStart` (an end-to-end message body)
// with the call ID, and the participant-to-participant messages of `group-call.proto`: the relay
// `OuterEnvelope`, the handshake `HelloEnvelope` (`Hello`, `GuestHello`) and `AuthEnvelope`
// (`Auth`, `GuestAuth`), `MediaKey`, and the post-handshake `Envelope`.
//
// Decoding is strict as for the Ibex envelope: a known field may appear only once, a `content`
// oneof exactly once, keys have 32 bytes and cookies 16, counters fit their u8 range, strings are
// UTF-8. Unknown field numbers are skipped. Encoding writes fields in ascending order and leaves out
// proto3 defaults, and refuses what decoding would refuse.

import Rampart
import RampartCodecs

extension GroupCall {
    /// The length of a participant cookie (PCCK).
    public static let cookieByteCount = 16
    /// The length of an X25519 public key (PCK.public).
    public static let publicKeyByteCount = 32

    /// `GroupCallStart { uint32 protocol_version = 1; bytes gck = 2; string sfu_base_url = 3; }`:
    /// the message that announces a group call to the members of a group.
    public struct Start: Sendable, Equatable {
        /// The protocol version of the call (``GroupCall/protocolVersion``).
        public var protocolVersion: UInt32
        /// The 32-byte group call key `GCK`.
        public var gck: SymmetricKey
        /// The SFU base URL the call runs on.
        public var sfuBaseURL: String

        /// A start message.
        public init(protocolVersion: UInt32 = GroupCall.protocolVersion, gck: SymmetricKey, sfuBaseURL: String) {
            self.protocolVersion = protocolVersion
            self.gck = gck
            self.sfuBaseURL = sfuBaseURL
        }

        /// The call ID: `BLAKE2b(out 32, unkeyed, salt "i", personal "3ma-call", input = creator (8
        /// ASCII) ‖ group ID (8) ‖ u8(protocol version) ‖ GCK (32) ‖ UTF-8(SFU base URL))`.
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)`` with ``GroupCallFault/invalidGroupID(_:)`` unless
        ///   the group ID has 8 bytes, ``GroupCallFault/valueOutOfRange(field:)`` (field 1) for a
        ///   protocol version over 255, ``GroupCallFault/invalidLength(field:length:)`` for a GCK
        ///   that is not 32 bytes.
        public func callID<G: Collection<UInt8>>(creator: ThreemaID, groupID: G) throws(ThreemaError) -> [UInt8] {
            guard groupID.count == 8 else { throw .groupCall(.invalidGroupID(groupID.count)) }
            guard protocolVersion <= 255 else { throw .groupCall(.valueOutOfRange(field: 1)) }
            guard gck.byteCount == 32 else { throw .groupCall(.invalidLength(field: 2, length: gck.byteCount)) }
            var h = try! BLAKE2b(outputByteCount: 32, key: [UInt8](), salt: ThreemaKDF.padded16("i"),
                                 personal: ThreemaKDF.padded16(GroupCall.personal))   // valid constants
            h.update(data: creator.bytes)
            h.update(data: Array(groupID))
            h.update(data: [UInt8(protocolVersion)])
            gck.withUnsafeBytes { h.update(bufferPointer: $0) }
            h.update(data: Array(sfuBaseURL.utf8))
            return h.finalize().bytes
        }

        /// The protobuf bytes (they carry the GCK: wipe them when done).
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)`` for a GCK that is not 32 bytes.
        public func encoded() throws(ThreemaError) -> [UInt8] {
            guard gck.byteCount == 32 else { throw .groupCall(.invalidLength(field: 2, length: gck.byteCount)) }
            var w = ProtobufWriter()
            if protocolVersion != 0 { w.varint(1, UInt64(protocolVersion)) }
            gck.withUnsafeBytes { w.bytes(2, $0) }
            if !sfuBaseURL.isEmpty { w.string(3, sfuBaseURL) }
            return w.bytes
        }

        /// Decodes protobuf bytes strictly (see the file comment): the GCK is required and has 32
        /// bytes, the URL is UTF-8.
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)``; never traps.
        public init<C: Collection<UInt8>>(decoding bytes: C) throws(ThreemaError) {
            do throws(GroupCallFault) {
                var seen: UInt64 = 0
                var version: UInt32 = 0
                var gck: SymmetricKey?
                var url = ""
                var r = ProtobufReader(bytes)
                while let f = try GroupCall.next(&r) {
                    switch f.number {
                    case 1:
                        try GroupCall.once(&seen, 1)
                        version = try GroupCall.uint32(f)
                    case 2:
                        try GroupCall.once(&seen, 2)
                        let b = try GroupCall.bytes(f)
                        guard b.count == 32 else { throw .invalidLength(field: 2, length: b.count) }
                        gck = SymmetricKey(data: b)
                    case 3:
                        try GroupCall.once(&seen, 3)
                        url = try GroupCall.string(f)
                    default: break
                    }
                }
                guard let gck else { throw .missingField(2) }
                self.init(protocolVersion: version, gck: gck, sfuBaseURL: url)
            } catch {
                throw .groupCall(error)
            }
        }
    }

    /// `Handshake.Hello { string identity = 1; string nickname = 2; bytes pck = 3; bytes pcck = 4; }`.
    public struct Hello: Sendable, Hashable {
        /// The sender's Threema ID.
        public var identity: ThreemaID
        /// The sender's nickname (without `~`).
        public var nickname: String
        /// The sender's 32-byte ephemeral public key `PCK.public` towards the receiver.
        public var pck: [UInt8]
        /// The sender's 16-byte cookie `PCCK`.
        public var pcck: [UInt8]
        /// A hello.
        public init(identity: ThreemaID, nickname: String, pck: [UInt8], pcck: [UInt8]) {
            self.identity = identity
            self.nickname = nickname
            self.pck = pck
            self.pcck = pcck
        }
    }

    /// `Handshake.GuestHello { string name = 1; bytes pck = 2; bytes pcck = 3; }`.
    public struct GuestHello: Sendable, Hashable {
        /// The guest's self-chosen name.
        public var name: String
        /// The sender's 32-byte ephemeral public key.
        public var pck: [UInt8]
        /// The sender's 16-byte cookie.
        public var pcck: [UInt8]
        /// A guest hello.
        public init(name: String, pck: [UInt8], pcck: [UInt8]) {
            self.name = name
            self.pck = pck
            self.pcck = pcck
        }
    }

    /// `Handshake.Auth` and `Handshake.GuestAuth` (the same fields): `{ bytes pck = 1; bytes pcck = 2;
    /// repeated MediaKey media_keys = 3; }`. The PCK and PCCK repeat the **receiver's** values from
    /// its hello; the media keys are the sender's applied key followed by any pending ones.
    public struct Auth: Sendable, Equatable {
        /// The receiver's PCK.public, repeated.
        public var pck: [UInt8]
        /// The receiver's PCCK, repeated.
        public var pcck: [UInt8]
        /// The applied media key, then pending ones (at least one).
        public var mediaKeys: [MediaKey]
        /// An auth.
        public init(pck: [UInt8], pcck: [UInt8], mediaKeys: [MediaKey]) {
            self.pck = pck
            self.pcck = pcck
            self.mediaKeys = mediaKeys
        }
    }

    /// `Handshake.HelloEnvelope { bytes padding = 1; oneof content { Hello hello = 2; GuestHello
    /// guest_hello = 3; } }`, sealed with `GCHK` (random nonce ‖ box).
    public struct HelloEnvelope: Sendable, Hashable {
        /// The `content` oneof.
        public enum Content: Sendable, Hashable {
            /// Field 2.
            case hello(Hello)
            /// Field 3.
            case guestHello(GuestHello)
        }
        /// Random padding, ignored by the receiver.
        public var padding: [UInt8]
        /// The hello.
        public var content: Content
        /// An envelope.
        public init(padding: [UInt8] = [], content: Content) {
            self.padding = padding
            self.content = content
        }

        /// The protobuf bytes.
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)`` for a PCK that is not 32 bytes or a PCCK that is
        ///   not 16.
        public func encoded() throws(ThreemaError) -> [UInt8] {
            do throws(GroupCallFault) {
                var w = ProtobufWriter()
                if !padding.isEmpty { w.bytes(1, padding) }
                var m = ProtobufWriter()
                switch content {
                case .hello(let h):
                    try GroupCall.checkKeys(pck: h.pck, pckField: 3, pcck: h.pcck, pcckField: 4)
                    m.string(1, h.identity.string)
                    if !h.nickname.isEmpty { m.string(2, h.nickname) }
                    m.bytes(3, h.pck)
                    m.bytes(4, h.pcck)
                    w.bytes(2, m.bytes)
                case .guestHello(let g):
                    try GroupCall.checkKeys(pck: g.pck, pckField: 2, pcck: g.pcck, pcckField: 3)
                    if !g.name.isEmpty { m.string(1, g.name) }
                    m.bytes(2, g.pck)
                    m.bytes(3, g.pcck)
                    w.bytes(3, m.bytes)
                }
                return w.bytes
            } catch {
                throw .groupCall(error)
            }
        }

        /// Decodes protobuf bytes strictly (see the file comment).
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)``; never traps.
        public init<C: Collection<UInt8>>(decoding bytes: C) throws(ThreemaError) {
            do throws(GroupCallFault) {
                var padding: [UInt8]?
                var content: Content?
                var r = ProtobufReader(bytes)
                while let f = try GroupCall.next(&r) {
                    switch f.number {
                    case 1:
                        guard padding == nil else { throw .duplicateField(1) }
                        padding = Array(try GroupCall.bytes(f))
                    case 2, 3:
                        guard content == nil else { throw .duplicateField(f.number) }
                        let body = try GroupCall.bytes(f)
                        content = f.number == 2 ? .hello(try GroupCall.decodeHello(body))
                                                : .guestHello(try GroupCall.decodeGuestHello(body))
                    default: break
                    }
                }
                guard let content else { throw .missingContent }
                self.init(padding: padding ?? [], content: content)
            } catch {
                throw .groupCall(error)
            }
        }
    }

    /// `Handshake.AuthEnvelope { bytes padding = 1; oneof content { Auth auth = 2; GuestAuth
    /// guest_auth = 3; } }`.
    public struct AuthEnvelope: Sendable, Equatable {
        /// The `content` oneof.
        public enum Content: Sendable, Equatable {
            /// Field 2: both sides are Threema users.
            case auth(Auth)
            /// Field 3: either side is a guest.
            case guestAuth(Auth)
        }
        /// Random padding, ignored by the receiver.
        public var padding: [UInt8]
        /// The auth.
        public var content: Content
        /// An envelope.
        public init(padding: [UInt8] = [], content: Content) {
            self.padding = padding
            self.content = content
        }

        /// The protobuf bytes (they carry media keys: wipe them when done).
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)`` for a PCK or PCCK of the wrong length or no
        ///   media key.
        public func encoded() throws(ThreemaError) -> [UInt8] {
            do throws(GroupCallFault) {
                var w = ProtobufWriter()
                if !padding.isEmpty { w.bytes(1, padding) }
                let (field, a): (UInt32, Auth)
                switch content {
                case .auth(let x): (field, a) = (2, x)
                case .guestAuth(let x): (field, a) = (3, x)
                }
                try GroupCall.checkKeys(pck: a.pck, pckField: 1, pcck: a.pcck, pcckField: 2)
                guard !a.mediaKeys.isEmpty else { throw .noMediaKey }
                var m = ProtobufWriter()
                m.bytes(1, a.pck)
                m.bytes(2, a.pcck)
                for k in a.mediaKeys { m.bytes(3, GroupCall.encode(k)) }
                w.bytes(field, m.bytes)
                return w.bytes
            } catch {
                throw .groupCall(error)
            }
        }

        /// Decodes protobuf bytes strictly (see the file comment); at least one media key.
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)``; never traps.
        public init<C: Collection<UInt8>>(decoding bytes: C) throws(ThreemaError) {
            do throws(GroupCallFault) {
                var padding: [UInt8]?
                var content: Content?
                var r = ProtobufReader(bytes)
                while let f = try GroupCall.next(&r) {
                    switch f.number {
                    case 1:
                        guard padding == nil else { throw .duplicateField(1) }
                        padding = Array(try GroupCall.bytes(f))
                    case 2, 3:
                        guard content == nil else { throw .duplicateField(f.number) }
                        let a = try GroupCall.decodeAuth(try GroupCall.bytes(f))
                        content = f.number == 2 ? .auth(a) : .guestAuth(a)
                    default: break
                    }
                }
                guard let content else { throw .missingContent }
                self.init(padding: padding ?? [], content: content)
            } catch {
                throw .groupCall(error)
            }
        }
    }

    /// `ParticipantToParticipant.OuterEnvelope { uint32 sender = 1; uint32 receiver = 2; bytes
    /// encrypted_data = 4; }`: what the SFU relays between two participants.
    public struct OuterEnvelope: Sendable, Hashable {
        /// The sender's participant ID.
        public var sender: UInt32
        /// The receiver's participant ID.
        public var receiver: UInt32
        /// The inner envelope, encrypted as the handshake state says.
        public var encryptedData: [UInt8]
        /// An outer envelope.
        public init(sender: UInt32, receiver: UInt32, encryptedData: [UInt8]) {
            self.sender = sender
            self.receiver = receiver
            self.encryptedData = encryptedData
        }

        /// The protobuf bytes.
        public var encoded: [UInt8] {
            var w = ProtobufWriter()
            if sender != 0 { w.varint(1, UInt64(sender)) }
            if receiver != 0 { w.varint(2, UInt64(receiver)) }
            if !encryptedData.isEmpty { w.bytes(4, encryptedData) }
            return w.bytes
        }

        /// Decodes protobuf bytes strictly (see the file comment).
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)``; never traps.
        public init<C: Collection<UInt8>>(decoding bytes: C) throws(ThreemaError) {
            do throws(GroupCallFault) {
                var seen: UInt64 = 0
                var e = OuterEnvelope(sender: 0, receiver: 0, encryptedData: [])
                var r = ProtobufReader(bytes)
                while let f = try GroupCall.next(&r) {
                    switch f.number {
                    case 1:
                        try GroupCall.once(&seen, 1)
                        e.sender = try GroupCall.uint32(f)
                    case 2:
                        try GroupCall.once(&seen, 2)
                        e.receiver = try GroupCall.uint32(f)
                    case 4:
                        try GroupCall.once(&seen, 4)
                        e.encryptedData = Array(try GroupCall.bytes(f))
                    default: break
                    }
                }
                self = e
            } catch {
                throw .groupCall(error)
            }
        }
    }

    /// The post-handshake `ParticipantToParticipant.Envelope { bytes padding = 1; oneof content {
    /// bytes encrypted_admin_envelope = 2; MediaKey rekey = 3; CaptureState capture_state = 4;
    /// HoldState hold_state = 5; } }`. `CaptureState` is kept as its protobuf bytes (checked to parse
    /// as protobuf fields, not interpreted).
    public struct Envelope: Sendable, Equatable {
        /// The `content` oneof.
        public enum Content: Sendable, Equatable {
            /// Field 2: an `Admin.Envelope`, encrypted with `GCAMK`.
            case encryptedAdminEnvelope([UInt8])
            /// Field 3: the sender's next media key.
            case rekey(MediaKey)
            /// Field 4: the protobuf bytes of a `CaptureState`.
            case captureState([UInt8])
            /// Field 5: the sender is on hold.
            case holdState
        }
        /// Random padding, ignored by the receiver.
        public var padding: [UInt8]
        /// The content.
        public var content: Content
        /// An envelope.
        public init(padding: [UInt8] = [], content: Content) {
            self.padding = padding
            self.content = content
        }

        /// The protobuf bytes.
        public var encoded: [UInt8] {
            var w = ProtobufWriter()
            if !padding.isEmpty { w.bytes(1, padding) }
            switch content {
            case .encryptedAdminEnvelope(let b): w.bytes(2, b)
            case .rekey(let k): w.bytes(3, GroupCall.encode(k))
            case .captureState(let b): w.bytes(4, b)
            case .holdState: w.bytes(5, [UInt8]())
            }
            return w.bytes
        }

        /// Decodes protobuf bytes strictly (see the file comment).
        ///
        /// - Throws: ``ThreemaError/groupCall(_:)``; never traps.
        public init<C: Collection<UInt8>>(decoding bytes: C) throws(ThreemaError) {
            do throws(GroupCallFault) {
                var padding: [UInt8]?
                var content: Content?
                var r = ProtobufReader(bytes)
                while let f = try GroupCall.next(&r) {
                    switch f.number {
                    case 1:
                        guard padding == nil else { throw .duplicateField(1) }
                        padding = Array(try GroupCall.bytes(f))
                    case 2...5:
                        guard content == nil else { throw .duplicateField(f.number) }
                        let body = try GroupCall.bytes(f)
                        switch f.number {
                        case 2: content = .encryptedAdminEnvelope(Array(body))
                        case 3: content = .rekey(try GroupCall.decodeMediaKey(body))
                        case 4:
                            var inner = ProtobufReader(body)
                            while try GroupCall.next(&inner) != nil {}
                            content = .captureState(Array(body))
                        default:
                            var inner = ProtobufReader(body)
                            while try GroupCall.next(&inner) != nil {}
                            content = .holdState
                        }
                    default: break
                    }
                }
                guard let content else { throw .missingContent }
                self.init(padding: padding ?? [], content: content)
            } catch {
                throw .groupCall(error)
            }
        }
    }
}

/// The protocol's name for ``GroupCall/Start``.
public typealias GroupCallStart = GroupCall.Start

// MARK: - Field helpers

extension GroupCall {
    static func next(_ r: inout ProtobufReader) throws(GroupCallFault) -> ProtobufField? {
        do { return try r.next() } catch { throw .malformedProtobuf(error) }
    }

    static func bytes(_ f: ProtobufField) throws(GroupCallFault) -> ArraySlice<UInt8> {
        do { return try f.bytes() } catch { throw .malformedProtobuf(error) }
    }

    static func string(_ f: ProtobufField) throws(GroupCallFault) -> String {
        do { return try f.string() } catch { throw .invalidText(field: f.number) }
    }

    static func uint32(_ f: ProtobufField) throws(GroupCallFault) -> UInt32 {
        let v: UInt64
        do { v = try f.varint() } catch { throw .malformedProtobuf(error) }
        guard v <= UInt64(UInt32.max) else { throw .malformedProtobuf(.invalidValue(field: f.number)) }
        return UInt32(v)
    }

    /// Marks `number` as seen, refusing a second occurrence.
    static func once(_ seen: inout UInt64, _ number: UInt32) throws(GroupCallFault) {
        let bit: UInt64 = 1 << UInt64(number)
        guard seen & bit == 0 else { throw .duplicateField(number) }
        seen |= bit
    }

    static func checkKeys(pck: [UInt8], pckField: UInt32, pcck: [UInt8], pcckField: UInt32) throws(GroupCallFault) {
        guard pck.count == publicKeyByteCount else { throw .invalidLength(field: pckField, length: pck.count) }
        guard pcck.count == cookieByteCount else { throw .invalidLength(field: pcckField, length: pcck.count) }
    }

    static func encode(_ k: MediaKey) -> [UInt8] {
        var w = ProtobufWriter()
        if k.epoch != 0 { w.varint(1, UInt64(k.epoch)) }
        if k.ratchetCounter != 0 { w.varint(2, UInt64(k.ratchetCounter)) }
        k.pcmk.withUnsafeBytes { w.bytes(3, $0) }
        return w.bytes
    }

    static func decodeMediaKey(_ body: ArraySlice<UInt8>) throws(GroupCallFault) -> MediaKey {
        var seen: UInt64 = 0
        var epoch: UInt32 = 0, counter: UInt32 = 0
        var pcmk: SymmetricKey?
        var r = ProtobufReader(body)
        while let f = try next(&r) {
            switch f.number {
            case 1:
                try once(&seen, 1)
                epoch = try uint32(f)
            case 2:
                try once(&seen, 2)
                counter = try uint32(f)
            case 3:
                try once(&seen, 3)
                let b = try bytes(f)
                guard b.count == 32 else { throw .invalidLength(field: 3, length: b.count) }
                pcmk = SymmetricKey(data: b)
            default: break
            }
        }
        guard epoch <= 255 else { throw .valueOutOfRange(field: 1) }
        guard counter <= 255 else { throw .valueOutOfRange(field: 2) }
        guard let pcmk else { throw .missingField(3) }
        do { return try MediaKey(epoch: UInt8(epoch), ratchetCounter: UInt8(counter), pcmk: pcmk) } catch {
            throw .invalidLength(field: 3, length: pcmk.byteCount)   // unreachable: checked above
        }
    }

    static func decodeHello(_ body: ArraySlice<UInt8>) throws(GroupCallFault) -> Hello {
        var seen: UInt64 = 0
        var identity: ThreemaID?
        var nickname = ""
        var pck: [UInt8]?, pcck: [UInt8]?
        var r = ProtobufReader(body)
        while let f = try next(&r) {
            switch f.number {
            case 1:
                try once(&seen, 1)
                do { identity = try ThreemaID(try string(f)) } catch { throw .invalidText(field: 1) }
            case 2:
                try once(&seen, 2)
                nickname = try string(f)
            case 3:
                try once(&seen, 3)
                pck = Array(try bytes(f))
            case 4:
                try once(&seen, 4)
                pcck = Array(try bytes(f))
            default: break
            }
        }
        guard let identity else { throw .missingField(1) }
        guard let pck else { throw .missingField(3) }
        guard let pcck else { throw .missingField(4) }
        try checkKeys(pck: pck, pckField: 3, pcck: pcck, pcckField: 4)
        return Hello(identity: identity, nickname: nickname, pck: pck, pcck: pcck)
    }

    static func decodeGuestHello(_ body: ArraySlice<UInt8>) throws(GroupCallFault) -> GuestHello {
        var seen: UInt64 = 0
        var name = ""
        var pck: [UInt8]?, pcck: [UInt8]?
        var r = ProtobufReader(body)
        while let f = try next(&r) {
            switch f.number {
            case 1:
                try once(&seen, 1)
                name = try string(f)
            case 2:
                try once(&seen, 2)
                pck = Array(try bytes(f))
            case 3:
                try once(&seen, 3)
                pcck = Array(try bytes(f))
            default: break
            }
        }
        guard let pck else { throw .missingField(2) }
        guard let pcck else { throw .missingField(3) }
        try checkKeys(pck: pck, pckField: 2, pcck: pcck, pcckField: 3)
        return GuestHello(name: name, pck: pck, pcck: pcck)
    }

    static func decodeAuth(_ body: ArraySlice<UInt8>) throws(GroupCallFault) -> Auth {
        var seen: UInt64 = 0
        var pck: [UInt8]?, pcck: [UInt8]?
        var keys: [MediaKey] = []
        var r = ProtobufReader(body)
        while let f = try next(&r) {
            switch f.number {
            case 1:
                try once(&seen, 1)
                pck = Array(try bytes(f))
            case 2:
                try once(&seen, 2)
                pcck = Array(try bytes(f))
            case 3:
                guard keys.count < MediaFrameDecryptor.maximumSuccessors + 1 else { throw .tooManyPendingKeys }
                keys.append(try decodeMediaKey(try bytes(f)))
            default: break
            }
        }
        guard let pck else { throw .missingField(1) }
        guard let pcck else { throw .missingField(2) }
        try checkKeys(pck: pck, pckField: 1, pcck: pcck, pcckField: 2)
        guard !keys.isEmpty else { throw .noMediaKey }
        return Auth(pck: pck, pcck: pcck, mediaKeys: keys)
    }
}
