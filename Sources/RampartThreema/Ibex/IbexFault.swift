// Typed failures of the Ibex forward-secrecy layer (Docs/Threema.md §1). Reported through
// `ThreemaError.ibex(_:)`.

import RampartCodecs

/// Why an Ibex operation (ratchet catch-up, envelope decoding, encapsulated-message decryption)
/// was refused. Every refusal leaves the state it was given unchanged.
public enum IbexFault: Error, Equatable, Hashable, Sendable {
    /// A message counter lies behind the ratchet's counter: the ratchet only turns forward, so
    /// the key for that counter is gone (or was never derived).
    case counterInPast(ratchet: UInt64, message: UInt64)
    /// A message counter lies more than ``Ibex/KDFRatchet/maxCounterIncrement`` steps ahead of
    /// the ratchet (Docs/Threema.md §1.3, §7.3).
    case counterTooFarAhead(ratchet: UInt64, message: UInt64)
    /// The Protocol Buffers bytes of a `csp_e2e_fs.Envelope` do not parse.
    case malformedProtobuf(ProtobufError)
    /// The session ID is not 16 bytes.
    case invalidSessionIDLength(Int)
    /// An ephemeral public key (FSSK) in `Init` or `Accept` is not 32 bytes.
    case invalidEphemeralKeyLength(Int)
    /// The envelope carries none of `Init`, `Accept`, `Reject`, `Terminate`, `Encapsulated`.
    case missingContent
    /// A field (or a second member of the `content` oneof) appears twice.
    case duplicateField(UInt32)
    /// A required field is absent (for example `Init.fssk`).
    case missingField(UInt32)
    /// An enum value outside the ones this implementation knows (field number given).
    case unknownEnumValue(field: UInt32, value: UInt64)
    /// A `VersionRange` whose minimum exceeds its maximum, or a version over 32 bits.
    case invalidVersionRange
    /// The group identity's creator is not a Threema ID.
    case invalidGroupCreator
    /// The message needs a ratchet the session's state does not have (for example a 4DH message
    /// in `R20`, or sending in `R20`).
    case stateMismatch
    /// An encapsulated message's versions do not fit the session (applied above offered, or a 2DH
    /// message not at the `Init`'s minimum version).
    case versionMismatch
    /// The decrypted inner message is empty (it must hold at least the type byte).
    case emptyInner
    /// An `Accept` or `Init` was given to a session in a state that does not expect it.
    case unexpectedKeyOffer
    /// An encapsulated message names a session this side does not have.
    case unknownSession
    /// The decrypted inner message's type may not be encapsulated at the applied version
    /// (``Ibex/minimumVersion(for:)``), or never (0xa0 inside 0xa0).
    case innerTypeNotAllowed(UInt8)
    /// A group message type without a group identity in `Encapsulated`, or a 1:1 type with one.
    case groupIdentityMismatch
}
