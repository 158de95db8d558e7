// Unaligned little/big-endian loads and stores over raw pointers.

extension UnsafeRawPointer {
    @inlinable @inline(__always)
    func loadBE32(_ offset: Int) -> UInt32 { UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    @inlinable @inline(__always)
    func loadBE64(_ offset: Int) -> UInt64 { UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    @inlinable @inline(__always)
    func loadLE32(_ offset: Int) -> UInt32 { UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    @inlinable @inline(__always)
    func loadLE64(_ offset: Int) -> UInt64 { UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
}

extension UnsafeMutableRawPointer {
    @inlinable @inline(__always)
    func storeBE32(_ v: UInt32, _ offset: Int) { storeBytes(of: v.bigEndian, toByteOffset: offset, as: UInt32.self) }
    @inlinable @inline(__always)
    func storeBE64(_ v: UInt64, _ offset: Int) { storeBytes(of: v.bigEndian, toByteOffset: offset, as: UInt64.self) }
    @inlinable @inline(__always)
    func storeLE32(_ v: UInt32, _ offset: Int) { storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt32.self) }
    @inlinable @inline(__always)
    func storeLE64(_ v: UInt64, _ offset: Int) { storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt64.self) }
}
