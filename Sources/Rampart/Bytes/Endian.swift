// Unaligned little/big-endian loads and stores over raw pointers, shared by every module of the
// package (`package` access): protocol code uses these, not copies of its own.

extension UnsafeRawPointer {
    @inlinable @inline(__always)
    package func loadBE32(_ offset: Int) -> UInt32 { UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    @inlinable @inline(__always)
    package func loadBE64(_ offset: Int) -> UInt64 { UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    @inlinable @inline(__always)
    package func loadLE32(_ offset: Int) -> UInt32 { UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    @inlinable @inline(__always)
    package func loadLE64(_ offset: Int) -> UInt64 { UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
}

extension UnsafeMutableRawPointer {
    @inlinable @inline(__always)
    package func storeBE32(_ v: UInt32, _ offset: Int) { storeBytes(of: v.bigEndian, toByteOffset: offset, as: UInt32.self) }
    @inlinable @inline(__always)
    package func storeBE64(_ v: UInt64, _ offset: Int) { storeBytes(of: v.bigEndian, toByteOffset: offset, as: UInt64.self) }
    @inlinable @inline(__always)
    package func storeLE32(_ v: UInt32, _ offset: Int) { storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt32.self) }
    @inlinable @inline(__always)
    package func storeLE64(_ v: UInt64, _ offset: Int) { storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt64.self) }
}

extension UnsafeMutableRawPointer {
    @inlinable @inline(__always)
    package func loadBE32(_ offset: Int) -> UInt32 { UnsafeRawPointer(self).loadBE32(offset) }
    @inlinable @inline(__always)
    package func loadBE64(_ offset: Int) -> UInt64 { UnsafeRawPointer(self).loadBE64(offset) }
    @inlinable @inline(__always)
    package func loadLE32(_ offset: Int) -> UInt32 { UnsafeRawPointer(self).loadLE32(offset) }
    @inlinable @inline(__always)
    package func loadLE64(_ offset: Int) -> UInt64 { UnsafeRawPointer(self).loadLE64(offset) }
}
