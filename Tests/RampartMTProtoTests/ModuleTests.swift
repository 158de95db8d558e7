import Testing
import RampartMTProto

@Test func mtprotoErrorsAreDistinct() {
    #expect(MTProtoError.truncated != MTProtoError.rejectedMessage)
    #expect(MTProtoError.unexpectedConstructor(1) != MTProtoError.unexpectedConstructor(2))
}
