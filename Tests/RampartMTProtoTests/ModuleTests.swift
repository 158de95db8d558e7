import Testing
import RampartMTProto

@Test func mtprotoErrorsAreDistinct() {
    #expect(MTProtoError.truncated != MTProtoError.rejectedMessage)
    #expect(MTProtoError.unexpectedConstructor(1) != MTProtoError.unexpectedConstructor(2))
}

@Test func mtprotoErrorsDescribeThemselves() {
    let all: [MTProtoError] = [
        .truncated, .unexpectedConstructor(0x05162463), .malformedTL("x"), .trailingBytes, .rejectedMessage,
        .invalidMessage("x"), .invalidAuthKey, .invalidServiceMessage("x"), .handshakeFailed("x"),
        .badServerSalt(RejectedSalt(msgId: 1, seqNo: 1, sessionId: 2, salt: 3)), .wrongDC(requested: 3, served: 2),
        .dhCheckFailed("x"), .unknownFingerprint, .primitive(.invalidKeyLength), .invalidFrame("x"),
        .frameTooLarge(5), .unknownTransport, .frameCheckFailed("x"), .fakeTLSFailed("x"), .invalidProxySecret("x"),
    ]
    let texts = all.map { "\($0)" }
    #expect(Set(texts).count == all.count, "\(texts)")
    #expect(texts.allSatisfy { !$0.isEmpty && !$0.contains("(\"") })
    #expect("\(MTProtoError.unexpectedConstructor(0x05162463))" == "unexpected TL constructor 0x05162463")
    #expect("\(MTProtoError.unexpectedConstructor(0x1cb5c415))".hasSuffix("0x1cb5c415"))
    #expect("\(MTProtoError.primitive(.authenticationFailure))" == "authentication failure")
    #expect("\(MTProtoError.frameTooLarge(2_000_000))".contains("2000000"))
    #expect("\(MTProtoError.wrongDC(requested: 10003, served: 2))".contains("DC 10003"))
    #expect("\(MTProtoError.badServerSalt(RejectedSalt(msgId: 1, seqNo: 1, sessionId: 2, salt: 0x55)))".contains("0x0000000000000055"))
}
