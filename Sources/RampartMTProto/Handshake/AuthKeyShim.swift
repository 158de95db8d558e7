// TEMPORARY stand-in for Message/AuthKey.swift (being written on branch `msg`); removed when that
// branch lands. Same names as the real type.

public struct AuthKey: Sendable {
    let bytes: [UInt8]
    public init(_ bytes: some Collection<UInt8>) throws(MTProtoError) {
        guard bytes.count == 256 else { throw .invalidAuthKey }
        self.bytes = Array(bytes)
    }
    public var idBytes: [UInt8] { Array(Insecure.SHA1.hash(data: bytes).bytes[12..<20]) }
    public var id: UInt64 { idBytes.reversed().reduce(0) { $0 << 8 | UInt64($1) } }
    public var auxHashBytes: [UInt8] { Array(Insecure.SHA1.hash(data: bytes).bytes[0..<8]) }
    public var auxHash: UInt64 { auxHashBytes.reversed().reduce(0) { $0 << 8 | UInt64($1) } }
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try bytes.withUnsafeBytes(body) }
}
