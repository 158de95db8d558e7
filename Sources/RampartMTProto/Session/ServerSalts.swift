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
    /// Until when (server time, Unix seconds) ``current`` is valid, when that is known (it came from
    /// `future_salts`, or a server's schedule); nil for a salt whose validity nobody stated (the
    /// handshake's, bad_server_salt's, new_session_created's).
    public private(set) var currentValidUntil: Double?
    /// Known future salts, sorted by `validSince`; expired ones are dropped by ``salt(at:)``.
    public private(set) var future: [FutureSalt] = []
    /// A server's previous salt, still accepted until ``previousValidUntil`` after a change.
    public private(set) var previous: Int64?
    /// Until when ``previous`` is accepted.
    public private(set) var previousValidUntil: Double = 0

    /// How long a server keeps accepting the salt it replaced: 300 s (the MTProto description: "messages
    /// with the old salt are still accepted for a further 300 seconds").
    public static let previousSaltGrace: Double = 300

    /// Salts starting from `current` (valid until `validUntil`, if known).
    public init(current: Int64, validUntil: Double? = nil) {
        self.current = current
        currentValidUntil = validUntil
    }

    /// The initial server salt (Docs/MTProto.md §2.3): bytes 0..<8 of new_nonce XOR bytes 0..<8 of
    /// server_nonce, read as a little-endian int64. Returns nil unless new_nonce has 32 bytes and
    /// server_nonce 16.
    public static func initialSalt(newNonce: [UInt8], serverNonce: [UInt8]) -> Int64? {
        guard newNonce.count == 32, serverNonce.count == 16 else { return nil }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(newNonce[i] ^ serverNonce[i]) << (8 * UInt64(i)) }
        return Int64(bitPattern: v)
    }

    /// Makes `salt` the current salt (bad_server_salt's new_server_salt, new_session_created's salt);
    /// its validity is unknown.
    public mutating func adopt(_ salt: Int64) {
        current = salt
        currentValidUntil = nil
    }

    /// Adds future salts (from `future_salts`, or a server's schedule), keeping them sorted and
    /// without duplicates.
    public mutating func add(_ salts: [FutureSalt]) {
        for s in salts where s.validUntil > s.validSince && !future.contains(s) { future.append(s) }
        future.sort { ($0.validSince, $0.validUntil) < ($1.validSince, $1.validUntil) }
    }

    /// Client: the salt to use at `serverTime` (Unix seconds). Of the salts valid then (the future salts
    /// whose window contains it, and ``current`` while its known validity lasts), the one valid the
    /// longest becomes current. When none is and ``current``'s known validity has run out, the salt
    /// falls back to 0 (the server answers bad_server_salt with a good one, as MtProtoKit expects).
    /// A current salt of unknown validity is kept. Expired future salts are dropped.
    public mutating func salt(at serverTime: Double) -> Int64 {
        future.removeAll { Double($0.validUntil) <= serverTime }
        let valid = future.filter { Double($0.validSince) <= serverTime }
        let best = valid.max { $0.validUntil < $1.validUntil }
        if let best, currentValidUntil.map({ Double(best.validUntil) > $0 || $0 <= serverTime }) ?? true {
            current = best.salt
            currentValidUntil = Double(best.validUntil)
        } else if best == nil, let until = currentValidUntil, until <= serverTime {
            current = 0
            currentValidUntil = nil
        }
        return current
    }

    /// Server: moves to the salt of the schedule valid at `serverTime` once ``current``'s validity has
    /// ended; the replaced salt stays acceptable for ``previousSaltGrace`` seconds after the change.
    /// Returns whether the salt changed.
    @discardableResult
    public mutating func advance(at serverTime: Double, grace: Double = ServerSalts.previousSaltGrace) -> Bool {
        guard let until = currentValidUntil, serverTime >= until else { return false }
        future.removeAll { Double($0.validUntil) <= serverTime }
        guard let next = future.filter({ Double($0.validSince) <= serverTime }).max(by: { $0.validUntil < $1.validUntil })
        else { return false }
        previous = current
        previousValidUntil = until + grace
        current = next.salt
        currentValidUntil = Double(next.validUntil)
        future.removeAll { $0 == next }
        return true
    }

    /// Whether `salt` is acceptable at `serverTime`: the current salt, the previous one during its
    /// grace period, or a future salt valid then. A server ``Session`` applies it to every message
    /// before committing it, and refuses others with ``MTProtoError/badServerSalt(_:)``.
    public func accepts(_ salt: Int64, at serverTime: Double) -> Bool {
        salt == current
            || (previous == salt && serverTime < previousValidUntil)
            || future.contains { $0.salt == salt && Double($0.validSince) <= serverTime && serverTime < Double($0.validUntil) }
    }

    /// What a server answers to `get_future_salts num` at `serverTime`: the current salt (with its
    /// window, or an hour from now when it has none) and then the scheduled ones, at most `count`
    /// (1…64).
    public func announced(at serverTime: Double, count: Int) -> [FutureSalt] {
        let now = Int32(clamping: Int64(serverTime.isFinite ? Swift.max(0, Swift.min(serverTime, 2_000_000_000)) : 0))
        let until = currentValidUntil.map { Int32(clamping: Int64($0)) } ?? now &+ 3600
        let first = FutureSalt(validSince: now, validUntil: Swift.max(until, now &+ 1), salt: current)
        return Array(([first] + future.filter { Double($0.validUntil) > serverTime }).prefix(Swift.max(1, Swift.min(count, 64))))
    }
}

// MARK: - Snapshot fields (Session's snapshot, Docs/Snapshots.md §4)

extension ServerSalts {
    /// At most this many future salts are kept in a snapshot (a server sends up to 64).
    static let maxSnapshotFutureSalts = 64

    /// current (int64), its validity (optional double), the future salts (list of valid_since,
    /// valid_until: int32, salt: int64), previous (optional int64), its end of validity (double).
    func write(to w: inout SnapshotWriter) {
        w.int64(current)
        w.optional(currentValidUntil) { $0.double($1) }
        w.list(future.prefix(Self.maxSnapshotFutureSalts)) { w, s in w.int32(s.validSince); w.int32(s.validUntil); w.int64(s.salt) }
        w.optional(previous) { $0.int64($1) }
        w.double(previousValidUntil)
    }

    /// Reads ``write(to:)``: future salts sorted and distinct, each with until > since.
    init(reading r: inout SnapshotReader) throws(RampartError) {
        current = try r.int64()
        currentValidUntil = try r.optional("salt validity") { (r) throws(RampartError) in try r.double("salt validity") }
        future = try r.list("future salts", max: Self.maxSnapshotFutureSalts, minElementBytes: 16) { (r) throws(RampartError) in
            FutureSalt(validSince: try r.int32(), validUntil: try r.int32(), salt: try r.int64())
        }
        // As ``add(_:)`` keeps them: each valid for a while, sorted by (valid_since, valid_until), distinct.
        for (i, s) in future.enumerated() {
            guard s.validUntil > s.validSince else { throw .invalidSnapshot(.invalidField("future salts")) }
            if i > 0 {
                let p = future[i - 1]
                guard (p.validSince, p.validUntil) <= (s.validSince, s.validUntil), p != s else {
                    throw .invalidSnapshot(.invalidField("future salts order"))
                }
            }
        }
        previous = try r.optional("previous salt") { (r) throws(RampartError) in try r.int64() }
        previousValidUntil = try r.double("previous salt validity")
    }
}
