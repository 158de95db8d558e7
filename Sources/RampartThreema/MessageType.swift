// End-to-end message types (Docs/Threema.md §2.3, `common.proto` CspE2eMessageType).

/// The type byte of an end-to-end message container. A struct rather than an enum so that a type
/// this library does not know survives decoding unchanged (``isKnown`` tells).
public struct MessageType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The byte on the wire.
    public let rawValue: UInt8
    /// Any byte is a type; unknown ones are carried opaquely.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let text = MessageType(rawValue: 0x01)
    public static let image = MessageType(rawValue: 0x02)                 // deprecated
    public static let location = MessageType(rawValue: 0x10)
    public static let video = MessageType(rawValue: 0x13)                 // deprecated
    public static let audio = MessageType(rawValue: 0x14)                 // deprecated
    public static let pollSetup = MessageType(rawValue: 0x15)
    public static let pollVote = MessageType(rawValue: 0x16)
    public static let file = MessageType(rawValue: 0x17)
    public static let contactSetProfilePicture = MessageType(rawValue: 0x18)
    public static let contactDeleteProfilePicture = MessageType(rawValue: 0x19)
    public static let contactRequestProfilePicture = MessageType(rawValue: 0x1a)
    public static let groupText = MessageType(rawValue: 0x41)
    public static let groupLocation = MessageType(rawValue: 0x42)
    public static let groupImage = MessageType(rawValue: 0x43)
    public static let groupVideo = MessageType(rawValue: 0x44)
    public static let groupAudio = MessageType(rawValue: 0x45)
    public static let groupFile = MessageType(rawValue: 0x46)
    public static let groupSetup = MessageType(rawValue: 0x4a)
    public static let groupName = MessageType(rawValue: 0x4b)
    public static let groupLeave = MessageType(rawValue: 0x4c)
    public static let groupCallStart = MessageType(rawValue: 0x4f)
    public static let groupSetProfilePicture = MessageType(rawValue: 0x50)
    public static let groupSyncRequest = MessageType(rawValue: 0x51)
    public static let groupPollSetup = MessageType(rawValue: 0x52)
    public static let groupPollVote = MessageType(rawValue: 0x53)
    public static let groupDeleteProfilePicture = MessageType(rawValue: 0x54)
    public static let callOffer = MessageType(rawValue: 0x60)
    public static let callAnswer = MessageType(rawValue: 0x61)
    public static let callICECandidates = MessageType(rawValue: 0x62)
    public static let callHangup = MessageType(rawValue: 0x63)
    public static let callRinging = MessageType(rawValue: 0x64)
    public static let deliveryReceipt = MessageType(rawValue: 0x80)
    public static let groupDeliveryReceipt = MessageType(rawValue: 0x81)
    public static let reaction = MessageType(rawValue: 0x82)
    public static let groupReaction = MessageType(rawValue: 0x83)
    public static let typingIndicator = MessageType(rawValue: 0x90)
    public static let edit = MessageType(rawValue: 0x91)
    public static let delete = MessageType(rawValue: 0x92)
    public static let groupEdit = MessageType(rawValue: 0x93)
    public static let groupDelete = MessageType(rawValue: 0x94)
    public static let forwardSecurityEnvelope = MessageType(rawValue: 0xa0)
    public static let empty = MessageType(rawValue: 0xfc)
    public static let workSyncDelta = MessageType(rawValue: 0xfd)
    public static let webSessionResume = MessageType(rawValue: 0xfe)
    public static let authToken = MessageType(rawValue: 0xff)

    /// Every type of the table with its name, in wire order.
    public static let known: [(MessageType, String)] = [
        (.text, "text"), (.image, "image"), (.location, "location"), (.video, "video"), (.audio, "audio"),
        (.pollSetup, "poll-setup"), (.pollVote, "poll-vote"), (.file, "file"),
        (.contactSetProfilePicture, "contact-set-profile-picture"),
        (.contactDeleteProfilePicture, "contact-delete-profile-picture"),
        (.contactRequestProfilePicture, "contact-request-profile-picture"),
        (.groupText, "group-text"), (.groupLocation, "group-location"), (.groupImage, "group-image"),
        (.groupVideo, "group-video"), (.groupAudio, "group-audio"), (.groupFile, "group-file"),
        (.groupSetup, "group-setup"), (.groupName, "group-name"), (.groupLeave, "group-leave"),
        (.groupCallStart, "group-call-start"), (.groupSetProfilePicture, "group-set-profile-picture"),
        (.groupSyncRequest, "group-sync-request"), (.groupPollSetup, "group-poll-setup"),
        (.groupPollVote, "group-poll-vote"), (.groupDeleteProfilePicture, "group-delete-profile-picture"),
        (.callOffer, "call-offer"), (.callAnswer, "call-answer"), (.callICECandidates, "call-ice-candidates"),
        (.callHangup, "call-hangup"), (.callRinging, "call-ringing"),
        (.deliveryReceipt, "delivery-receipt"), (.groupDeliveryReceipt, "group-delivery-receipt"),
        (.reaction, "reaction"), (.groupReaction, "group-reaction"), (.typingIndicator, "typing-indicator"),
        (.edit, "edit"), (.delete, "delete"), (.groupEdit, "group-edit"), (.groupDelete, "group-delete"),
        (.forwardSecurityEnvelope, "forward-security-envelope"), (.empty, "empty"),
        (.workSyncDelta, "work-sync-delta"), (.webSessionResume, "web-session-resume"), (.authToken, "auth-token"),
    ]

    /// The type's name in the table, or `nil` for a type this library does not know.
    public var name: String? { Self.known.first { $0.0 == self }?.1 }
    /// Whether the type is in the table.
    public var isKnown: Bool { name != nil }

    /// Which group container wraps the body of this type (`common.proto`): the creator container
    /// (`group ID (8)`, for messages between the creator and a member: setup, name, profile picture,
    /// sync request) or the member container (`creator ID (8) ‖ group ID (8)`, for everything a
    /// member sends to the group). `nil` for 1:1 types.
    public var groupPrefixKind: GroupPrefix.Kind? {
        switch self {
        case .groupSetup, .groupName, .groupSetProfilePicture, .groupDeleteProfilePicture, .groupSyncRequest:
            .creatorContainer
        case .groupText, .groupLocation, .groupImage, .groupVideo, .groupAudio, .groupFile, .groupLeave,
             .groupCallStart, .groupPollSetup, .groupPollVote, .groupDeliveryReceipt,
             .groupReaction, .groupEdit, .groupDelete:
            .memberContainer
        default:
            nil
        }
    }

    public var description: String { name ?? "unknown(0x\(String(rawValue, radix: 16)))" }
}
