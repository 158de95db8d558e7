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
    /// A public key has the wrong length or is unusable (for X25519: a small-order point that makes
    /// the shared secret all zeros).
    case invalidPublicKey
    /// Authentication failed: a tag or padding did not verify. No plaintext is released.
    case authenticationFailure
    /// Strict DER (or its PEM/Base64 armour) was rejected; the associated value says why.
    case invalidDER(DERFault)
    /// A modulus Montgomery arithmetic cannot use: even, zero or one.
    case invalidModulus
    /// The value has no inverse modulo the modulus (they share a factor).
    case noInverse
    /// A subtraction would have a negative result.
    case negativeResult
    /// Division (or reduction) by zero.
    case divisionByZero
    /// A Diffie-Hellman prime, generator or public value failed the checks (MTProto spec section 4).
    case dhCheckFailed(DHCheckFailure)
    /// A number that should be the product of two primes (MTProto `pq`) is not.
    case factorizationFailed(FactorizationFailure)
    /// An RSA key is malformed or inconsistent, or an RSA input is not below the modulus.
    case invalidRSAKey
}

/// Why strict DER/PEM parsing failed (see ``RampartError/invalidDER(_:)``).
public enum DERFault: Error, Equatable, Hashable, Sendable {
    /// The input ends inside an element.
    case truncated
    /// An element has a different tag than the structure requires.
    case unexpectedTag
    /// A length is not in its shortest form, or uses the indefinite form.
    case nonMinimalLength
    /// A length does not fit in the input (or in four bytes).
    case lengthTooLarge
    /// An INTEGER has a redundant leading byte.
    case nonMinimalInteger
    /// An INTEGER that must be positive is negative.
    case negativeInteger
    /// An INTEGER that must be positive is zero.
    case zeroInteger
    /// Bytes follow the last element.
    case trailingData
    /// An unsupported version, algorithm identifier or BIT STRING padding.
    case unsupported
    /// The PEM armour or its Base64 body is malformed.
    case invalidPEM
}

/// Which Diffie-Hellman check failed (see ``RampartError/dhCheckFailed(_:)``).
public enum DHCheckFailure: Error, Equatable, Hashable, Sendable {
    /// The prime is not exactly 2048 bits long.
    case primeBitLength
    /// p or (p - 1) / 2 is not prime.
    case notSafePrime
    /// g is not one of 2, 3, 4, 5, 6, 7.
    case generatorNotAllowed
    /// g does not generate the subgroup of order (p - 1) / 2 (it is not a quadratic residue mod p).
    case generatorNotQuadraticResidue
    /// A value (g, g_a, g_b) is outside 1 < x < p - 1 or outside [2^1984, p - 2^1984].
    case valueOutOfRange
}

/// Why a factorisation was refused (see ``RampartError/factorizationFailed(_:)``).
public enum FactorizationFailure: Error, Equatable, Hashable, Sendable {
    /// The number is prime (or below 4).
    case prime
    /// The number has more than two prime factors (counted with multiplicity).
    case moreThanTwoFactors
    /// No factor was found within the iteration budget.
    case notFound
}
