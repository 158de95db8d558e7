// RampartThreema's errors in plain sentences, for people (the CLI, the servers' logs): never a Swift
// type name. The cases themselves are documented where they are declared.

import RampartCodecs

extension ThreemaError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidIdentity: return "not a Threema ID (8 characters: A-Z, 0-9, the first may be *)"
        case .invalidPublicKey: return "not a usable public key (32 bytes, not a small-order point)"
        case .invalidQRCode(let f): return "not a Threema contact code: \(f)"
        case .malformedEnvelope(let f): return "not a Threema message: \(f)"
        case .wrongReceiver: return "the message is addressed to another identity"
        case .replayedNonce: return "the message was seen before (its nonce is a replay)"
        case .authenticationFailed: return "authentication failed: wrong key or tampered data"
        case .malformedMetadata(let e): return "the message metadata does not decode: \(e)"
        case .metadataMessageIDMismatch: return "the metadata's message ID differs from the envelope's"
        case .invalidPadding: return "the message padding is malformed"
        case .malformedBody(let f): return "the message body does not decode: \(f)"
        case .invalidPasswordLength(let allowed):
            return "the password must be \(allowed.lowerBound) to \(allowed.upperBound) bytes of UTF-8"
        case .malformedBackup(let f): return "not a Threema ID backup: \(f)"
        case .wrongPassword: return "wrong password"
        case .malformedSafeBackup(let f): return "not a valid Threema Safe backup: \(f)"
        case .invalidArgument(let text): return text
        case .ibex(let f): return "Ibex refused the message: \(f)"
        case .csp(let f): return "chat-server protocol: \(f)"
        case .groupCall(let f): return "group call: \(f)"
        }
    }
}

extension QRCodeFault: CustomStringConvertible {
    public var description: String {
        switch self {
        case .wrongScheme: return "it does not start with 3mid:"
        case .wrongFieldCount: return "it needs two or three comma-separated fields"
        case .invalidIdentity: return "the identity is not a Threema ID"
        case .invalidPublicKey: return "the public key is not 64 hex digits"
        case .invalidExpiry: return "the expiry is not a number of seconds"
        }
    }
}

extension EnvelopeFault: CustomStringConvertible {
    public var description: String {
        switch self {
        case .tooShort(let n): return "\(n) bytes, at least 104 needed (header, nonce and a box)"
        case .invalidSender: return "the sender is not a Threema ID"
        case .invalidReceiver: return "the receiver is not a Threema ID"
        case .metadataLengthOutOfRange(let n): return "a metadata length of \(n) bytes runs past the end"
        case .metadataTooShort(let n): return "a metadata box of \(n) bytes is shorter than its 16-byte tag"
        }
    }
}

extension MessageBodyFault: CustomStringConvertible {
    public var description: String {
        switch self {
        case .tooShort: return "shorter than its type requires"
        case .trailingBytes: return "bytes left over after the body"
        case .invalidUTF8: return "a text field is not UTF-8"
        case .invalidValue(let text): return text
        }
    }
}

extension BackupFault: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidCharacter: return "a character outside Base32"
        case .invalidLength(let n): return "\(n) bytes decoded, 50 expected"
        case .unsupportedVersion(let v): return "version \(v) is not supported"
        case .invalidIdentity: return "the decrypted identity is not a Threema ID"
        }
    }
}

extension SafeFault: CustomStringConvertible {
    public var description: String {
        switch self {
        case .tooShort: return "shorter than a nonce and a tag (40 bytes)"
        case .compression(let text): return "the contents do not decompress: \(text)"
        case .tooLarge(let limit): return "larger than \(limit) bytes when decompressed"
        case .json(let text): return "the JSON is malformed: \(text)"
        case .schema(let path): return "the member \(path) does not follow the Threema Safe schema"
        case .unsupportedVersion(let v): return "version \(v) is newer than this library reads"
        }
    }
}

extension IbexFault: CustomStringConvertible {
    public var description: String {
        switch self {
        case .counterInPast(let r, let m): return "message counter \(m) lies behind the ratchet's \(r): its key is gone"
        case .counterTooFarAhead(let r, let m): return "message counter \(m) lies too far ahead of the ratchet's \(r)"
        case .malformedProtobuf(let e): return "the envelope does not parse: \(e)"
        case .invalidSessionIDLength(let n): return "a session ID of \(n) bytes, 16 expected"
        case .invalidEphemeralKeyLength(let n): return "an ephemeral key of \(n) bytes, 32 expected"
        case .missingContent: return "the envelope carries no content"
        case .duplicateField(let f): return "field \(f) appears twice"
        case .missingField(let f): return "the required field \(f) is missing"
        case .unknownEnumValue(let f, let v): return "value \(v) of field \(f) is unknown"
        case .invalidVersionRange: return "the version range is invalid"
        case .invalidGroupCreator: return "the group creator is not a Threema ID"
        case .stateMismatch: return "the session's state has no ratchet for this message"
        case .versionMismatch: return "the message's versions do not fit the session"
        case .emptyInner: return "the inner message is empty"
        case .unexpectedKeyOffer: return "the session does not expect a key offer now"
        case .unknownSession: return "the message names an unknown session"
        case .innerTypeNotAllowed(let t): return "message type 0x\(String(t, radix: 16)) may not be encapsulated here"
        case .groupIdentityMismatch: return "the group identity does not fit the message type"
        }
    }
}

extension CSPBox: CustomStringConvertible {
    public var description: String {
        switch self {
        case .login: return "the login box"
        case .loginExtensions: return "the login extensions box"
        case .loginAck: return "the login acknowledgement"
        case .frame(let n): return "frame \(n)"
        }
    }
}

extension CSPFault: CustomStringConvertible {
    public var description: String {
        switch self {
        case .cookiesEqual: return "the server cookie equals the client cookie"
        case .repeatedCookieMismatch: return "a repeated cookie differs"
        case .serverKeyNotPermitted: return "the server's key is not one of the permitted keys"
        case .authenticationFailed(let box): return "\(box) did not authenticate"
        case .sequenceNumberExhausted: return "the sequence numbers are used up"
        case .unknownIdentity(let id): return "the identity \(id) is unknown to the server"
        case .invalidVouch: return "the login vouch does not match the identity's key"
        case .invalidLoginIdentity: return "the login's identity is not a Threema ID"
        case .reservedNotZero: return "a reserved field of the login is not zero"
        case .invalidExtensionsLength(let n): return "an extensions length of \(n) bytes is invalid"
        case .malformedExtension(let t): return "login extension \(t) is malformed"
        case .frameTooLarge(let n): return "a frame of \(n) bytes is over the limit"
        case .frameTooShort(let n): return "a frame of \(n) bytes is shorter than a tag and a header"
        case .malformedPayload(let t): return "a payload of type 0x\(String(t, radix: 16)) does not parse"
        case .unexpectedPayload(let t): return "a payload of type 0x\(String(t, radix: 16)) may not come from this side"
        case .invalidState: return "the connection's state does not allow this"
        }
    }
}

extension GroupCallFault: CustomStringConvertible {
    public var description: String {
        switch self {
        case .malformedProtobuf(let e): return "the message does not parse: \(e)"
        case .duplicateField(let f): return "field \(f) appears twice"
        case .missingField(let f): return "the required field \(f) is missing"
        case .missingContent: return "the message carries no content"
        case .invalidLength(let f, let n): return "field \(f) has \(n) bytes, a wrong length"
        case .valueOutOfRange(let f): return "the value of field \(f) is out of range"
        case .invalidGroupID(let n): return "a group ID of \(n) bytes, 8 expected"
        case .ratchetExhausted: return "the media-key ratchet is used up: the call must end"
        case .reflectedCookie: return "the peer presents this side's own cookie"
        case .reflectedPublicKey: return "the peer presents this side's own public key"
        case .wrongHandshakeVariant: return "a handshake message of the other variant"
        case .authMismatch: return "the authentication repeats keys that are not this side's"
        case .notAGroupMember: return "the sender is not a member of the call's group"
        case .unexpectedHandshakeMessage: return "a handshake message the handshake does not expect now"
        case .missingMediaKeys: return "the authentication carries no media keys"
        case .sequenceNumberExhausted: return "the sequence numbers are used up"
        case .frameSequenceNumberExhausted: return "the frame sequence numbers are used up"
        case .frameTooLarge(let n): return "a media frame of \(n) bytes is over the limit"
        case .frameTooShort(let n): return "a media frame of \(n) bytes is shorter than a tag and a footer"
        case .unknownEpoch(let current, let frame): return "epoch \(frame) is unknown (the current one is \(current))"
        case .ratchetCounterInPast(let current, let frame): return "ratchet counter \(frame) lies behind \(current): its key is gone"
        case .replayedFrame(let mfsn): return "frame \(mfsn) was seen before"
        case .frameTooOld(let mfsn): return "frame \(mfsn) is older than the replay window"
        case .tooManyPendingKeys: return "too many media keys are pending"
        case .noMediaKey: return "no media key"
        case .boxTooShort(let n): return "a box of \(n) bytes is shorter than a nonce and a tag"
        case .invalidText(let f): return "field \(f) is not valid text or not a Threema ID"
        }
    }
}
