// Bodies of the common end-to-end message types (Threema protocol `csp-e2e` structs; Docs/Threema.md
// §2.3). Each decodes from the container body with a typed error and never traps. The file message's
// JSON body is in FileMessage.swift.

/// A `text` (0x01) or `group-text` body: UTF-8 text.
public struct TextMessage: Hashable, Sendable {
    /// The text.
    public var text: String
    /// A text message.
    public init(_ text: String) { self.text = text }

    /// Decodes a body (strict UTF-8).
    ///
    /// - Throws: ``ThreemaError/malformedBody(_:)`` (`invalidUTF8`).
    public init(decoding body: [UInt8]) throws(ThreemaError) {
        guard let s = String(validating: body, as: UTF8.self) else { throw .malformedBody(.invalidUTF8) }
        text = s
    }

    /// The body bytes.
    public var encoded: [UInt8] { Array(text.utf8) }
}

/// A `location` (0x10) body: UTF-8 lines. The first is `latitude,longitude[,accuracy]` (decimal
/// degrees, accuracy in metres); an optional second and third line carry a point-of-interest name
/// and an address (with only two lines, the second is the address), as the apps write them.
public struct LocationMessage: Hashable, Sendable {
    public var latitude: Double
    public var longitude: Double
    /// Accuracy in metres, when known.
    public var accuracy: Double?
    /// The point of interest's name.
    public var name: String?
    /// The address.
    public var address: String?

    public init(latitude: Double, longitude: Double, accuracy: Double? = nil, name: String? = nil, address: String? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.name = name
        self.address = address
    }

    /// Decodes a body.
    ///
    /// - Throws: ``ThreemaError/malformedBody(_:)`` for invalid UTF-8, coordinates that are not
    ///   numbers or out of range (|lat| ≤ 90, |lon| ≤ 180, accuracy ≥ 0), or more than 3 lines.
    public init(decoding body: [UInt8]) throws(ThreemaError) {
        guard let text = String(validating: body, as: UTF8.self) else { throw .malformedBody(.invalidUTF8) }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard (1...3).contains(lines.count) else { throw .malformedBody(.invalidValue("location lines")) }
        let parts = lines[0].split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3,
              let lat = Self.number(parts[0]), let lon = Self.number(parts[1]),
              abs(lat) <= 90, abs(lon) <= 180 else { throw .malformedBody(.invalidValue("coordinates")) }
        latitude = lat
        longitude = lon
        if parts.count == 3 {
            guard let acc = Self.number(parts[2]), acc >= 0 else { throw .malformedBody(.invalidValue("accuracy")) }
            accuracy = acc
        } else {
            accuracy = nil
        }
        switch lines.count {
        case 3: name = lines[1].isEmpty ? nil : lines[1]; address = lines[2].isEmpty ? nil : lines[2]
        case 2: name = nil; address = lines[1].isEmpty ? nil : lines[1]
        default: name = nil; address = nil
        }
    }

    private static func number(_ s: Substring) -> Double? {
        // Plain decimals only: no exponent, no "nan"/"inf", at most 32 characters.
        guard !s.isEmpty, s.count <= 32,
              s.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D || $0 == 0x2B }) else { return nil }
        guard let v = Double(s), v.isFinite else { return nil }
        return v
    }

    /// The body bytes.
    public var encoded: [UInt8] {
        var text = "\(latitude),\(longitude)" + (accuracy.map { ",\($0)" } ?? "")
        if let name { text += "\n" + name + "\n" + (address ?? "") } else if let address { text += "\n" + address }
        return Array(text.utf8)
    }
}

/// A `delivery-receipt` (0x80) or `group-delivery-receipt` body: a status byte and one or more
/// message IDs (8 bytes each).
public struct DeliveryReceipt: Hashable, Sendable {
    /// The receipt status.
    public struct Status: RawRepresentable, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let received = Status(rawValue: 0x01)
        public static let read = Status(rawValue: 0x02)
        /// The user acknowledged ("thumbs up"; deprecated in favour of reactions).
        public static let acknowledged = Status(rawValue: 0x03)
        /// The user declined ("thumbs down"; deprecated in favour of reactions).
        public static let declined = Status(rawValue: 0x04)
    }

    public var status: Status
    public var messageIDs: [UInt64]

    public init(status: Status, messageIDs: [UInt64]) {
        self.status = status
        self.messageIDs = messageIDs
    }

    /// Decodes a body.
    ///
    /// - Throws: ``ThreemaError/malformedBody(_:)`` unless it is one status byte followed by a
    ///   positive multiple of 8 bytes.
    public init(decoding body: [UInt8]) throws(ThreemaError) {
        guard body.count >= 9 else { throw .malformedBody(.tooShort) }
        guard (body.count - 1) % 8 == 0 else { throw .malformedBody(.trailingBytes) }
        status = Status(rawValue: body[0])
        messageIDs = stride(from: 1, to: body.count, by: 8).map { le64(body, $0) }
    }

    /// The body bytes.
    public var encoded: [UInt8] {
        var out = [status.rawValue]
        for id in messageIDs { appendLE(id, to: &out) }
        return out
    }
}

/// A `typing-indicator` (0x90) body: one byte, 1 while typing, 0 when stopped.
public struct TypingIndicator: Hashable, Sendable {
    public var isTyping: Bool
    public init(isTyping: Bool) { self.isTyping = isTyping }

    /// - Throws: ``ThreemaError/malformedBody(_:)`` unless the body is exactly one byte 0 or 1.
    public init(decoding body: [UInt8]) throws(ThreemaError) {
        guard body.count == 1 else { throw .malformedBody(body.isEmpty ? .tooShort : .trailingBytes) }
        guard body[0] <= 1 else { throw .malformedBody(.invalidValue("typing")) }
        isTyping = body[0] == 1
    }

    public var encoded: [UInt8] { [isTyping ? 1 : 0] }
}

/// A `set-profile-picture` body (contact 0x18, group 0x50 after the group prefix): the blob ID
/// (16 bytes), the blob size (u32, little-endian) and the blob key (32 bytes). Contact
/// delete-profile-picture (0x19) and request-profile-picture (0x1a) have empty bodies.
public struct SetProfilePicture: Hashable, Sendable {
    public var blobID: [UInt8]
    public var size: UInt32
    public var key: [UInt8]

    /// - Throws: ``ThreemaError/invalidArgument(_:)`` for a blob ID other than 16 bytes or a key
    ///   other than 32.
    public init(blobID: [UInt8], size: UInt32, key: [UInt8]) throws(ThreemaError) {
        guard blobID.count == 16, key.count == 32 else { throw .invalidArgument("blob IDs have 16 bytes, keys 32") }
        self.blobID = blobID
        self.size = size
        self.key = key
    }

    /// - Throws: ``ThreemaError/malformedBody(_:)`` unless the body has exactly 52 bytes.
    public init(decoding body: [UInt8]) throws(ThreemaError) {
        guard body.count >= 52 else { throw .malformedBody(.tooShort) }
        guard body.count == 52 else { throw .malformedBody(.trailingBytes) }
        blobID = Array(body[0..<16])
        size = le32(body, 16)
        key = Array(body[20..<52])
    }

    public var encoded: [UInt8] {
        var out = blobID
        appendLE(size, to: &out)
        return out + key
    }
}

/// Checks that a body which must be empty (contact delete/request profile picture) is.
///
/// - Throws: ``ThreemaError/malformedBody(_:)`` (`trailingBytes`).
public func requireEmptyBody(_ body: [UInt8]) throws(ThreemaError) {
    guard body.isEmpty else { throw .malformedBody(.trailingBytes) }
}

/// A decoded message body by type. Types without a model here, and unknown types, are kept as
/// ``opaque(_:_:)`` with their raw body: decoding never traps and never drops a message.
public enum MessageBody: Equatable, Sendable {
    case text(TextMessage)
    case location(LocationMessage)
    case deliveryReceipt(DeliveryReceipt)
    case typing(TypingIndicator)
    case file(FileMessage)
    case image(ImageMessage)
    case setProfilePicture(SetProfilePicture)
    case deleteProfilePicture
    case requestProfilePicture
    /// A group message: the prefix and the inner body decoded as the matching 1:1 type where there
    /// is one (`group-text` → text, …).
    indirect case group(GroupPrefix, MessageBody)
    /// Anything else: the type and the raw body.
    case opaque(MessageType, [UInt8])

    /// Decodes a container's body according to its type.
    ///
    /// - Throws: ``ThreemaError/malformedBody(_:)`` when a known type's body is malformed.
    public init(_ container: MessageContainer) throws(ThreemaError) {
        let t = container.type, body = container.body
        if let kind = t.groupPrefixKind {
            let (prefix, inner) = try GroupPrefix.split(body, kind: kind)
            let innerType: MessageType? = switch t {
            case .groupText: .text
            case .groupLocation: .location
            case .groupDeliveryReceipt: .deliveryReceipt
            case .groupFile: .file
            case .groupSetProfilePicture: .contactSetProfilePicture
            case .groupDeleteProfilePicture: .contactDeleteProfilePicture
            default: nil
            }
            if let innerType {
                self = .group(prefix, try MessageBody(MessageContainer(type: innerType, body: inner)))
            } else {
                self = .group(prefix, .opaque(t, inner))
            }
            return
        }
        switch t {
        case .text: self = .text(try TextMessage(decoding: body))
        case .location: self = .location(try LocationMessage(decoding: body))
        case .file: self = .file(try FileMessage(decoding: body))
        case .image: self = .image(try ImageMessage(decoding: body))
        case .deliveryReceipt: self = .deliveryReceipt(try DeliveryReceipt(decoding: body))
        case .typingIndicator: self = .typing(try TypingIndicator(decoding: body))
        case .contactSetProfilePicture: self = .setProfilePicture(try SetProfilePicture(decoding: body))
        case .contactDeleteProfilePicture: try requireEmptyBody(body); self = .deleteProfilePicture
        case .contactRequestProfilePicture: try requireEmptyBody(body); self = .requestProfilePicture
        default: self = .opaque(t, body)
        }
    }
}
