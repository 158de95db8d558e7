// SymmetricKey and SymmetricKeySize: bit counts, equality, sizes.

import Testing
@_spi(Testing) import Rampart

@Test func symmetricKeySizeRefusesBadBitCounts() throws {
    for bad in [-8, -1, 0, 1, 7, 12, 255, SymmetricKeySize.maximumBitCount + 8, Int.min, Int.max] {
        #expect(throws: RampartError.invalidKeyLength) { _ = try SymmetricKeySize(bitCount: bad) }
    }
    for good in [8, 128, 200, 256, 512, SymmetricKeySize.maximumBitCount] {
        let size = try SymmetricKeySize(bitCount: good)
        #expect(SymmetricKey(size: size).bitCount == good)
    }
    #expect(SymmetricKeySize.bits192.bitCount == 192)
}

@Test func symmetricKeyEqualityAndSize() {
    let a = SymmetricKey(data: [1, 2, 3]), b = SymmetricKey(data: [1, 2, 3]), c = SymmetricKey(data: [1, 2, 4])
    #expect(a == b)
    #expect(a != c)
    #expect(SymmetricKey(size: .bits256).byteCount == 32)
    #expect(SymmetricKey(size: .bits256) != SymmetricKey(size: .bits256))
}
