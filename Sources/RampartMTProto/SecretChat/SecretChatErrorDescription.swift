// SecretChatError in plain sentences, for people (the CLI, the relay's logs).

extension SecretChatError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .rejectedMessage: return "the secret-chat message was rejected (unknown key, failed check or tampered)"
        case .dhCheckFailed(let text): return "the Diffie-Hellman values failed a check: \(text)"
        case .fingerprintMismatch: return "the peer's key fingerprint does not match the computed key"
        case .invalidKey: return "a secret-chat key must be 256 bytes"
        case .invalidPlaintext(let text): return "cannot encrypt this: \(text)"
        case .malformedTL(let text): return "the decrypted message is malformed: \(text)"
        case .protocolViolation(let text): return "the peer broke the protocol: \(text)"
        case .unknownConstructor(let c): return "unknown TL constructor 0x\(String(c, radix: 16))"
        case .tooFewRandomBytes(let n): return "the message carries \(n) random bytes, at least 15 are required"
        case .wrongState(let text): return "not now: \(text)"
        }
    }
}
