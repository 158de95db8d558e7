// The decrypted content of a message box: `type ‖ body ‖ padding` (Docs/Threema.md §2.3), and the
// group container prefixes.

/// A message container: the type byte, the body, and PKCS#7-style padding of N bytes of value N.
public struct MessageContainer: Hashable, Sendable {
    /// The message type.
    public var type: MessageType
    /// The body, without padding.
    public var body: [UInt8]

    /// A container for `body` of `type`.
    public init(type: MessageType, body: [UInt8]) {
        self.type = type
        self.body = body
    }

    /// The least number of bytes of `body ‖ padding` (the protocol text and the Gateway SDK; Android
    /// counts the type byte too, which a receiver cannot tell apart).
    public static let minimumPaddedBodyByteCount = 32

    /// `type ‖ body ‖ padding`, with N drawn uniformly from 1...255 and raised to
    /// `32 − body.count` when the body is shorter (so `body ‖ padding` has at least 32 bytes).
    public func encoded<R: RandomNumberGenerator>(using rng: inout R) -> [UInt8] {
        encoded(paddingLength: Self.paddingLength(bodyByteCount: body.count, using: &rng))
    }

    /// `type ‖ body ‖ padding` with a given padding length (1...255): for tests and vectors.
    ///
    /// - Precondition: `1 <= paddingLength <= 255`.
    public func encoded(paddingLength n: Int) -> [UInt8] {
        precondition((1...255).contains(n), "container padding is 1...255 bytes")
        var out = [UInt8]()
        out.reserveCapacity(1 + body.count + n)
        out.append(type.rawValue)
        out.append(contentsOf: body)
        out.append(contentsOf: repeatElement(UInt8(n), count: n))
        return out
    }

    /// The padding length for a body: random 1...255, at least `32 − bodyByteCount`.
    public static func paddingLength<R: RandomNumberGenerator>(bodyByteCount: Int, using rng: inout R) -> Int {
        max(Int.random(in: 1...255, using: &rng), minimumPaddedBodyByteCount - bodyByteCount)
    }

    /// Decodes a decrypted container. Every producer's padding is accepted (the last byte N says how
    /// many bytes to strip; no minimum length is required, since the apps differ on it). Refused:
    /// fewer than 2 bytes, N = 0, and N that would reach the type byte.
    ///
    /// Only the last byte is read for the length; the padding bytes themselves are not checked,
    /// as the apps do not check them either.
    ///
    /// - Throws: ``ThreemaError/invalidPadding``.
    public init(decoding bytes: [UInt8]) throws(ThreemaError) {
        guard bytes.count >= 2, let last = bytes.last else { throw .invalidPadding }
        let n = Int(last)
        guard n >= 1, bytes.count - n >= 1 else { throw .invalidPadding }
        type = MessageType(rawValue: bytes[0])
        body = Array(bytes[1..<(bytes.count - n)])
    }

    /// As ``init(decoding:)``, taking over `bytes` as the body's storage (the type byte and the
    /// padding are removed in place, no copy). On error `bytes` is unchanged.
    init(consuming bytes: inout [UInt8]) throws(ThreemaError) {
        guard bytes.count >= 2, let last = bytes.last else { throw .invalidPadding }
        let n = Int(last)
        guard n >= 1, bytes.count - n >= 1 else { throw .invalidPadding }
        type = MessageType(rawValue: bytes[0])
        bytes.removeLast(n)
        bytes.removeFirst()
        body = bytes
        bytes = []
    }
}

/// The prefix of a group message body.
public struct GroupPrefix: Hashable, Sendable {
    /// Which container a group message type uses.
    public enum Kind: Sendable, Hashable {
        /// `group ID (8)`: messages between the creator and a member about the group itself.
        case creatorContainer
        /// `creator ID (8) ‖ group ID (8)`: messages a member (or the creator) sends to the group.
        case memberContainer
    }

    /// The group's creator (absent in a creator container: the creator is one of the two parties).
    public let creator: ThreemaID?
    /// The 8-byte group ID the creator chose.
    public let groupID: UInt64

    /// A creator-container prefix.
    public init(groupID: UInt64) {
        creator = nil
        self.groupID = groupID
    }

    /// A member-container prefix.
    public init(creator: ThreemaID, groupID: UInt64) {
        self.creator = creator
        self.groupID = groupID
    }

    /// The prefix bytes (the group ID little-endian, as the apps store it as 8 raw bytes).
    public var encoded: [UInt8] {
        (creator?.bytes ?? []) + withUnsafeBytes(of: groupID.littleEndian) { Array($0) }
    }

    /// Splits a group message body into its prefix and the inner body.
    ///
    /// - Throws: ``ThreemaError/malformedBody(_:)`` when the body is too short or the creator is not
    ///   a Threema ID.
    public static func split(_ body: [UInt8], kind: Kind) throws(ThreemaError) -> (GroupPrefix, [UInt8]) {
        switch kind {
        case .creatorContainer:
            guard body.count >= 8 else { throw .malformedBody(.tooShort) }
            return (GroupPrefix(groupID: le64(body, 0)), Array(body[8...]))
        case .memberContainer:
            guard body.count >= 16 else { throw .malformedBody(.tooShort) }
            guard let creator = try? ThreemaID(bytes: body[0..<8]) else { throw .malformedBody(.invalidValue("creator")) }
            return (GroupPrefix(creator: creator, groupID: le64(body, 8)), Array(body[16...]))
        }
    }
}

func le64(_ b: [UInt8], _ o: Int) -> UInt64 {
    var v: UInt64 = 0
    for i in 0..<8 { v |= UInt64(b[o + i]) << (8 * UInt64(i)) }
    return v
}

func le32(_ b: [UInt8], _ o: Int) -> UInt32 {
    var v: UInt32 = 0
    for i in 0..<4 { v |= UInt32(b[o + i]) << (8 * UInt32(i)) }
    return v
}

func appendLE<T: FixedWidthInteger>(_ v: T, to out: inout [UInt8]) {
    withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
}
