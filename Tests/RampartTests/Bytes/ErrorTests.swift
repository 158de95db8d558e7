// Errors describe themselves (CustomStringConvertible): one distinct line per case, nested reasons
// included, no Swift case syntax leaking into logs.

import Testing
import Rampart

@Test func rampartErrorsDescribeThemselves() {
    let all: [RampartError] = [
        .invalidKeyLength, .invalidNonceLength, .invalidOutputLength, .invalidParameter("r"),
        .memoryLimitExceeded(required: 2, limit: 1), .invalidEncoding, .invalidInputLength, .invalidPadding,
        .invalidPublicKey, .authenticationFailure, .invalidDER(.truncated), .invalidModulus, .noInverse,
        .negativeResult, .divisionByZero, .dhCheckFailed(.notSafePrime), .factorizationFailed(.notFound),
        .invalidRSAKey,
    ]
    let texts = all.map { "\($0)" }
    #expect(Set(texts).count == all.count, "\(texts)")
    #expect(texts.allSatisfy { !$0.isEmpty && !$0.contains("(\"") })
    #expect("\(RampartError.memoryLimitExceeded(required: 2048, limit: 1024))" == "needs 2048 bytes of memory, limit is 1024")
    #expect("\(RampartError.invalidDER(.trailingData))" == "malformed DER/PEM (data after the last element)")

    let der: [DERFault] = [.truncated, .unexpectedTag, .nonMinimalLength, .lengthTooLarge, .nonMinimalInteger,
                           .negativeInteger, .zeroInteger, .trailingData, .unsupported, .invalidPEM]
    #expect(Set(der.map { "\($0)" }).count == der.count)
    let dh: [DHCheckFailure] = [.primeBitLength, .notSafePrime, .generatorNotAllowed, .generatorNotQuadraticResidue,
                                .valueOutOfRange]
    #expect(Set(dh.map { "\($0)" }).count == dh.count)
    let factor: [FactorizationFailure] = [.prime, .moreThanTwoFactors, .notFound]
    #expect(Set(factor.map { "\($0)" }).count == factor.count)
}
