// The one error type of the `Rampart` module.

/// Errors thrown by Rampart's primitives. Every bad input produces one of these; none traps.
public enum RampartError: Error, Equatable, Hashable, Sendable {
    /// A key has a length the algorithm does not accept.
    case invalidKeyLength
    /// A nonce or IV has a length the algorithm does not accept.
    case invalidNonceLength
    /// An output length outside the algorithm's range was requested.
    case invalidOutputLength
    /// A parameter (cost, salt or personalization size, iteration count...) is out of range.
    case invalidParameter(String)
    /// A memory cost above the caller's limit was requested.
    case memoryLimitExceeded(required: Int, limit: Int)
    /// Text that should be hex/base64/PEM/DER is malformed.
    case invalidEncoding
    /// Input length is not acceptable (for example, not a multiple of the block size).
    case invalidInputLength
    /// PKCS#7 padding did not verify after decryption (one error for every kind of bad padding).
    case invalidPadding
    /// Authentication failed: a tag or padding did not verify. No plaintext is released.
    case authenticationFailure
}
