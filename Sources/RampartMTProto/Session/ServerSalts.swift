// Server salts (Docs/MTProto.md §2.3): the current salt plus future salts with validity windows.

/// The server salts a client knows: the current one and future salts (from `future_salts`), chosen
/// by server time.
///
/// The initial salt after the handshake is `new_nonce[0..<8] XOR server_nonce[0..<8]` (see
/// ``initialSalt(newNonce:serverNonce:)``). On `bad_server_salt` (code 48) or `new_session_created`
/// the client adopts the salt it was given (``adopt(_:)``); ``Session`` does this itself.
public struct ServerSalts: Sendable, Hashable {
    /// The salt currently in use.
    public private(set) var current: Int64
    /// Known future salts, sorted by `validSince`; expired ones are dropped by ``salt(at:)``.
    public private(set) var future: [FutureSalt] = []

    /// Salts starting from `current`.
    public init(current: Int64) { self.current = current }

    /// The initial server salt (Docs/MTProto.md §2.3): bytes 0..<8 of new_nonce XOR bytes 0..<8 of
    /// server_nonce, read as a little-endian int64. Returns nil unless new_nonce has 32 bytes and
    /// server_nonce 16.
    public static func initialSalt(newNonce: [UInt8], serverNonce: [UInt8]) -> Int64? {
        guard newNonce.count == 32, serverNonce.count == 16 else { return nil }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(newNonce[i] ^ serverNonce[i]) << (8 * UInt64(i)) }
        return Int64(bitPattern: v)
    }

    /// Makes `salt` the current salt (bad_server_salt's new_server_salt, new_session_created's salt).
    public mutating func adopt(_ salt: Int64) { current = salt }

    /// Adds future salts (from `future_salts`), keeping them sorted and without duplicates.
    public mutating func add(_ salts: [FutureSalt]) {
        for s in salts where s.validUntil > s.validSince && !future.contains(s) { future.append(s) }
        future.sort { ($0.validSince, $0.validUntil) < ($1.validSince, $1.validUntil) }
    }

    /// The salt to use at `serverTime` (Unix seconds): the earliest-starting future salt valid at
    /// that time becomes current; expired future salts are dropped. Without one, ``current``.
    public mutating func salt(at serverTime: Double) -> Int64 {
        future.removeAll { Double($0.validUntil) <= serverTime }
        if let s = future.first(where: { Double($0.validSince) <= serverTime }) { current = s.salt }
        return current
    }

    /// Whether `salt` is acceptable at `serverTime`: the current salt or a future salt valid then.
    /// A server ``Session`` applies it to every message before committing it, and refuses others
    /// with ``MTProtoError/badServerSalt(_:)``.
    public func accepts(_ salt: Int64, at serverTime: Double) -> Bool {
        salt == current || future.contains { $0.salt == salt && Double($0.validSince) <= serverTime && serverTime < Double($0.validUntil) }
    }
}
