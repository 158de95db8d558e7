// Typed failures of the group-call layer (Docs/Threema.md §10). Reported through
// `ThreemaError.groupCall(_:)`; authentication failures of boxes and frames are reported as
// `ThreemaError.authenticationFailed`, as everywhere else in the module.

import RampartCodecs

/// Why a group-call operation (key derivation, message decoding, participant box, media frame) was
/// refused. Every refusal leaves the state it was given (channel, encryptor, decryptor) unchanged.
public enum GroupCallFault: Error, Equatable, Hashable, Sendable {
    /// The Protocol Buffers bytes of a group-call message do not parse.
    case malformedProtobuf(ProtobufError)
    /// A field (or a second member of a `content` oneof) appears twice.
    case duplicateField(UInt32)
    /// A required field is absent (field number given).
    case missingField(UInt32)
    /// The envelope carries no member of its `content` oneof.
    case missingContent
    /// A key, public key or cookie field has the wrong length (field number and length given).
    case invalidLength(field: UInt32, length: Int)
    /// A value does not fit its range: a protocol version over 255 for the call ID, an epoch or
    /// ratchet counter over 255 in a `MediaKey`.
    case valueOutOfRange(field: UInt32)
    /// A group ID that is not 8 bytes.
    case invalidGroupID(Int)
    /// The media-key ratchet is at 255 and cannot turn again: the call must end.
    case ratchetExhausted
    /// The peer presents the same cookie as this side (a reflection): refused.
    case reflectedCookie
    /// The peer presents the same ephemeral public key (PCK) as this side (a reflection): refused.
    case reflectedPublicKey
    /// A handshake message of the other variant: `GuestAuth` where `Auth` is expected or the
    /// reverse.
    case wrongHandshakeVariant
    /// An `Auth`/`GuestAuth` whose repeated PCK or PCCK is not this side's (a replay or a
    /// message meant for another participant).
    case authMismatch
    /// A `Hello` from a Threema ID that is not a member of the call's group (group-scoped calls
    /// admit members only).
    case notAGroupMember
    /// A handshake message in a handshake state that does not expect one (for example a second
    /// `Hello`, or anything after the handshake is done).
    case unexpectedHandshakeMessage
    /// An `Auth` without media keys (the protocol promises at least the applied one).
    case missingMediaKeys
    /// The sequence number of a participant box would pass 2^64 − 1.
    case sequenceNumberExhausted
    /// The media frame sequence number would pass 2^32 − 1 under this sender.
    case frameSequenceNumberExhausted
    /// A media frame (plaintext when sealing, wire bytes when opening) is longer than the limit
    /// (``GroupCall/MediaFrame/maximumWireByteCount``).
    case frameTooLarge(Int)
    /// A non-empty media frame shorter than the 16-byte tag and the 6-byte footer.
    case frameTooShort(Int)
    /// A frame's epoch is neither the current media key's nor that of a successor the receiver
    /// holds (an old epoch, or a rekey that has not arrived).
    case unknownEpoch(current: UInt8, frame: UInt8)
    /// A frame's ratchet counter is below the receiver's counter for that epoch: the key is gone.
    case ratchetCounterInPast(current: UInt8, frame: UInt8)
    /// A frame's MFSN was accepted before (replay).
    case replayedFrame(mfsn: UInt32)
    /// A frame's MFSN lies further behind the newest accepted one than the replay window reaches.
    case frameTooOld(mfsn: UInt32)
    /// More pending media keys than ``GroupCall/MediaFrameDecryptor/maximumSuccessors``.
    case tooManyPendingKeys
    /// An `Auth`/`GuestAuth` without any media key, or a decryptor given no key.
    case noMediaKey
    /// A secretbox with a prepended nonce shorter than nonce and tag.
    case boxTooShort(Int)
    /// A string field is not valid UTF-8 or an identity is not a Threema ID.
    case invalidText(field: UInt32)
}
