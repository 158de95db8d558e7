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
    /// A Diffie-Hellman prime, generator or public value failed the checks (Docs/MTProto.md §4).
    case dhCheckFailed(DHCheckFailure)
    /// A number that should be the product of two primes (MTProto `pq`) is not.
    case factorizationFailed(FactorizationFailure)
    /// An RSA key is malformed or inconsistent, or an RSA input is not below the modulus.
    case invalidRSAKey
    /// A state snapshot was refused (Snapshot/Snapshot.swift): not a snapshot, another type, an
    /// unknown version, a malformed field, or a sealed one that did not open.
    case invalidSnapshot(SnapshotFault)
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

// MARK: - Descriptions

extension RampartError: CustomStringConvertible {
    /// A one-line reason, lowercase, for logs and command-line tools.
    public var description: String {
        switch self {
        case .invalidKeyLength: return "invalid key length"
        case .invalidNonceLength: return "invalid nonce length"
        case .invalidOutputLength: return "invalid output length"
        case .invalidParameter(let p): return "invalid parameter \(p)"
        case .memoryLimitExceeded(let required, let limit): return "needs \(required) bytes of memory, limit is \(limit)"
        case .invalidEncoding: return "invalid encoding"
        case .invalidInputLength: return "invalid input length"
        case .invalidPadding: return "invalid padding"
        case .invalidPublicKey: return "invalid public key"
        case .authenticationFailure: return "authentication failure"
        case .invalidDER(let f): return "malformed DER/PEM (\(f))"
        case .invalidModulus: return "the modulus must be odd and greater than one"
        case .noInverse: return "no modular inverse exists"
        case .negativeResult: return "negative result"
        case .divisionByZero: return "division by zero"
        case .dhCheckFailed(let f): return "Diffie-Hellman check failed (\(f))"
        case .factorizationFailed(let f): return "factorization failed (\(f))"
        case .invalidRSAKey: return "invalid RSA key or input"
        case .invalidSnapshot(let f): return "invalid snapshot (\(f))"
        }
    }
}

extension SnapshotFault: CustomStringConvertible {
    /// What was wrong with the snapshot.
    public var description: String {
        switch self {
        case .notASnapshot: return "not a snapshot of this kind"
        case .wrongType(let expected, let found): return "a \(found) snapshot where \(expected) was expected"
        case .unsupportedVersion(let type, let version): return "\(type) snapshot version \(version) is not supported"
        case .truncated: return "the bytes end inside a field"
        case .trailingBytes: return "bytes after the last field"
        case .invalidField(let field): return "field \(field) out of range"
        case .authenticationFailure: return "wrong key or password, or altered bytes"
        case .costTooHigh: return "key-derivation costs above the limit"
        case .stale(let generation, let newest): return "generation \(generation) is older than \(newest), already seen"
        }
    }
}

extension DERFault: CustomStringConvertible {
    /// What was wrong with the DER or PEM input.
    public var description: String {
        switch self {
        case .truncated: return "input ends inside an element"
        case .unexpectedTag: return "unexpected tag"
        case .nonMinimalLength: return "length not in its shortest definite form"
        case .lengthTooLarge: return "length beyond the input"
        case .nonMinimalInteger: return "INTEGER with a redundant leading byte"
        case .negativeInteger: return "negative INTEGER"
        case .zeroInteger: return "zero INTEGER"
        case .trailingData: return "data after the last element"
        case .unsupported: return "unsupported version, algorithm or BIT STRING padding"
        case .invalidPEM: return "malformed PEM armour or Base64"
        }
    }
}

extension DHCheckFailure: CustomStringConvertible {
    /// Which Diffie-Hellman check failed.
    public var description: String {
        switch self {
        case .primeBitLength: return "the prime is not 2048 bits"
        case .notSafePrime: return "not a safe prime"
        case .generatorNotAllowed: return "generator not in 2...7"
        case .generatorNotQuadraticResidue: return "the generator does not generate the subgroup of order (p-1)/2"
        case .valueOutOfRange: return "value out of range"
        }
    }
}

extension FactorizationFailure: CustomStringConvertible {
    /// Why the number was not factored.
    public var description: String {
        switch self {
        case .prime: return "the number is prime or below 4"
        case .moreThanTwoFactors: return "more than two prime factors"
        case .notFound: return "no factor found within the iteration budget"
        }
    }
}
