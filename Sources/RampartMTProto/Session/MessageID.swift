// msg_id generation and rules (Docs/MTProto.md §2.1), seq_no (§2.2), the time window (§1.6.9).

/// msg_id rules (Docs/MTProto.md §2.1): `msg_id ≈ unixtime · 2³²`; client ids ≡ 0 (mod 4); server responses
/// ≡ 1 and other server messages ≡ 3 (mod 4).
public enum MessageID {
    /// The time part of a msg_id in Unix seconds (`msg_id / 2³²`).
    public static func seconds(of msgId: Int64) -> Double { Double(msgId) / 4_294_967_296 }

    /// A time in Unix seconds as a msg_id-scale integer (`t · 2³²`), clamped to `0...Int64.max`
    /// (NaN gives 0), so no caller-supplied time can trap.
    public static func scaled(_ seconds: Double) -> Int64 {
        let v = seconds * 4_294_967_296
        if v.isNaN || v <= 0 { return 0 }
        if v >= 9.223_372_036_854_775e18 { return .max }
        return Int64(v)
    }

    /// Whether `msgId` has the parity of a message sent in `direction` (Docs/MTProto.md §1.6.7): divisible by 4
    /// from a client, odd (1 or 3 mod 4) from a server.
    public static func hasValidParity(_ msgId: Int64, sender direction: MTProtoDirection) -> Bool {
        direction == .clientToServer ? msgId & 3 == 0 : msgId & 1 == 1
    }

    /// Whether a server msg_id marks a response (≡ 1 mod 4) rather than a server-initiated message.
    public static func isResponse(_ msgId: Int64) -> Bool { msgId & 3 == 1 }
}

/// Generates strictly increasing msg_ids from an injected clock (Docs/MTProto.md §2.1).
///
/// Time is passed in as Unix seconds (`now`, a `Double`); the generator adds the clock offset
/// (server time − local time) when one is known. Ids keep the low 32 bits a non-zero fraction of
/// the second, carry the role's residue mod 4, and if the clock stalls or goes back they continue
/// from the last id + 4.
public struct MessageIDGenerator: Sendable, Hashable {
    /// Whose ids these are (the residue mod 4).
    public let role: MTProtoRole
    /// The last id generated (0 before the first).
    public private(set) var lastId: Int64 = 0
    /// Server time − local time in seconds, once known (from the handshake's `server_time` or a
    /// server msg_id); `nil` before.
    public var timeOffset: Double?

    /// A generator for `role`, with the offset if it is already known.
    public init(role: MTProtoRole, timeOffset: Double? = nil) {
        self.role = role
        self.timeOffset = timeOffset
    }

    /// Learns the offset from a server time (e.g. `server_time` of server_DH_inner_data) seen at
    /// local time `now`.
    public mutating func synchronize(serverTime: Double, now: Double) {
        let o = serverTime - now
        if o.isFinite { timeOffset = o }
    }

    /// Learns the offset from a msg_id the server generated, received at local time `now` (also
    /// what a client does on bad_msg_notification 16/17, Docs/MTProto.md §2.5).
    public mutating func synchronize(serverMsgId: Int64, now: Double) {
        synchronize(serverTime: MessageID.seconds(of: serverMsgId), now: now)
    }

    /// The estimated server time at local time `now` (`now` itself while the offset is unknown).
    public func serverTime(at now: Double) -> Double { now + (timeOffset ?? 0) }

    /// How far the clock may go back before ``clockWentBack(now:)`` says so: 10 s. Less than that, ids
    /// continue from the last one + 4 and stay well inside the server's 30 s window.
    public static let backwardTolerance: Double = 10

    /// Whether the (server-adjusted) clock at `now` is more than ``backwardTolerance`` seconds behind
    /// the last id generated: ids continuing from the last one would run ahead of server time, so a
    /// client starts a new session instead, as MtProtoKit does (``Session`` does it itself).
    public func clockWentBack(now: Double) -> Bool {
        lastId != 0 && MessageID.scaled(serverTime(at: now)) < (lastId & ~3) &- MessageID.scaled(Self.backwardTolerance)
    }

    /// Forgets the last id (for a new session: ids start again from the clock).
    public mutating func restart() { lastId = 0 }

    /// The next msg_id at local time `now`. A server's id is ≡ 1 (mod 4) when `isResponse`, else
    /// ≡ 3; a client's is always ≡ 0 and ignores `isResponse`.
    public mutating func next(now: Double, isResponse: Bool = false) -> Int64 {
        let residue: Int64 = role == .client ? 0 : (isResponse ? 1 : 3)
        var base = MessageID.scaled(serverTime(at: now)) & ~3
        if base & 0xFFFF_FFFF == 0 { base |= 4 }  // the fraction must be non-zero
        let lastBase = lastId & ~3
        if base <= lastBase { base = lastBase &+ 4 }
        lastId = base | residue
        return lastId
    }
}

/// seq_no of outgoing messages (Docs/MTProto.md §2.2): with `c` the number of content-related messages sent,
/// a content-related message gets `2c + 1` (and `c` grows), any other message `2c`.
public struct SeqNoCounter: Sendable, Hashable {
    /// Content-related messages sent so far.
    public private(set) var contentRelatedCount: Int32 = 0

    public init() {}

    /// The seq_no for the next message.
    public mutating func next(contentRelated: Bool) -> Int32 {
        let s = contentRelatedCount &* 2
        if contentRelated {
            contentRelatedCount &+= 1
            return s | 1
        }
        return s
    }
}

/// The receiver's time window (Docs/MTProto.md §1.6.9): a msg_id whose time part lies more than
/// `maxFuture` seconds ahead of or `maxPast` seconds behind the server time is rejected.
/// The bounds themselves are accepted.
public struct TimeWindow: Sendable, Hashable {
    /// Seconds a msg_id may lie in the future (30 by default).
    public var maxFuture: Double
    /// Seconds a msg_id may lie in the past (300 by default).
    public var maxPast: Double

    /// 30 s ahead, 300 s behind.
    public static let standard = TimeWindow(maxFuture: 30, maxPast: 300)

    public init(maxFuture: Double, maxPast: Double) {
        self.maxFuture = maxFuture
        self.maxPast = maxPast
    }

    /// Whether `msgId` is inside the window around `serverTime` (Unix seconds). Computed on the
    /// msg_id scale (integers) so that the edges are exact.
    public func accepts(msgId: Int64, serverTime: Double) -> Bool {
        let now = MessageID.scaled(serverTime)
        let ahead = MessageID.scaled(maxFuture), behind = MessageID.scaled(maxPast)
        let (hi, o1) = now.addingReportingOverflow(ahead)
        let (lo, o2) = now.subtractingReportingOverflow(behind)
        return msgId <= (o1 ? .max : hi) && msgId >= (o2 ? .min : lo)
    }
}

/// The last `capacity` received msg_ids (Docs/MTProto.md §1.6.8; tdlib keeps 1000).
///
/// A msg_id is refused when it equals a stored one, or when the window is full and the id is not
/// above the lowest stored one. Otherwise it is stored and, if the window overflows, the lowest id
/// is evicted.
public struct ReplayWindow: Sendable, Hashable {
    /// How many ids are kept.
    public let capacity: Int
    /// Sorted ids; the live ones are `ids[start...]` (evicted entries are dropped in batches).
    private var ids: [Int64] = []
    private var start = 0

    /// An empty window keeping the last `capacity` ids (at least 1).
    public init(capacity: Int = 1000) {
        self.capacity = max(1, capacity)
        ids.reserveCapacity(self.capacity + 1)
    }

    /// The number of ids stored.
    public var count: Int { ids.count - start }
    /// Whether `capacity` ids are stored.
    public var isFull: Bool { count >= capacity }
    /// The lowest stored id.
    public var lowest: Int64? { start < ids.count ? ids[start] : nil }
    /// The highest stored id.
    public var highest: Int64? { start < ids.count ? ids[ids.count - 1] : nil }

    /// Whether `id` is stored.
    public func contains(_ id: Int64) -> Bool {
        let i = position(of: id)
        return i < ids.count && ids[i] == id
    }

    /// The `msgs_state_info` byte for `id` as this receiver knows it (Docs/MTProto.md §2.5): 4 received, 3 not
    /// received and above every stored id, 2 not received inside the stored range, 1 unknown (below it,
    /// or nothing stored).
    public func stateByte(of id: Int64) -> UInt8 {
        if contains(id) { return 4 }
        guard let low = lowest, let high = highest else { return 1 }
        if id > high { return 3 }
        return id >= low ? 2 : 1
    }

    /// Whether ``insert(_:)`` would accept `id` (nothing changes): not when it is stored already or
    /// lower than every stored id, from the first stored id on (Docs/MTProto.md §1.6.8), not only once
    /// the window is full.
    public func accepts(_ id: Int64) -> Bool {
        if let low = lowest, id < low { return false }
        return !contains(id)
    }

    /// Stores `id` if the rule accepts it; returns whether it did.
    @discardableResult
    public mutating func insert(_ id: Int64) -> Bool {
        guard accepts(id) else { return false }
        if let high = highest, id < high {
            ids.insert(id, at: position(of: id))
        } else {
            ids.append(id)
        }
        if count > capacity {
            start += 1
            if start >= capacity {  // compact: amortised O(1) per eviction
                ids.removeFirst(start)
                start = 0
            }
        }
        return true
    }

    /// First index in `ids[start...]` whose value is ≥ `id`.
    private func position(of id: Int64) -> Int {
        var lo = start, hi = ids.count
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            if ids[mid] < id { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    public static func == (a: ReplayWindow, b: ReplayWindow) -> Bool {
        a.capacity == b.capacity && a.ids[a.start...] == b.ids[b.start...]
    }

    public func hash(into h: inout Hasher) {
        h.combine(capacity)
        for i in ids[start...] { h.combine(i) }
    }
}

// MARK: - Snapshot fields (Session's snapshot, Docs/Snapshots.md §4)

extension MessageIDGenerator {
    /// The last msg_id (int64) and the clock offset (optional double).
    func write(to w: inout SnapshotWriter) {
        w.int64(lastId)
        w.optional(timeOffset) { $0.double($1) }
    }

    init(role: MTProtoRole, reading r: inout SnapshotReader) throws(RampartError) {
        self.init(role: role)
        lastId = try r.int64()
        guard lastId >= 0 else { throw .invalidSnapshot(.invalidField("last msg_id")) }
        timeOffset = try r.optional("time offset") { (r) throws(RampartError) in try r.double("time offset") }
        if let o = timeOffset, !o.isFinite { throw .invalidSnapshot(.invalidField("time offset")) }
    }
}

extension SeqNoCounter {
    /// The content-related messages sent (int32).
    func write(to w: inout SnapshotWriter) { w.int32(contentRelatedCount) }

    init(reading r: inout SnapshotReader) throws(RampartError) {
        self.init()
        contentRelatedCount = try r.int32()
        guard contentRelatedCount >= 0 else { throw .invalidSnapshot(.invalidField("seq_no")) }
    }
}

extension ReplayWindow {
    /// The largest capacity a snapshot may declare.
    static let maxSnapshotCapacity = 1 << 20

    /// The capacity (uint32), then the stored ids (list of int64, ascending).
    func write(to w: inout SnapshotWriter) {
        w.uint32(UInt32(capacity))
        w.list(ids[start...]) { $0.int64($1) }
    }

    init(reading r: inout SnapshotReader) throws(RampartError) {
        let capacity = Int(try r.uint32())
        guard capacity >= 1, capacity <= Self.maxSnapshotCapacity else { throw .invalidSnapshot(.invalidField("replay capacity")) }
        self.init(capacity: capacity)
        ids = try r.list("replay window", max: capacity, minElementBytes: 8) { (r) throws(RampartError) in try r.int64() }
        for i in ids.indices.dropFirst() where ids[i - 1] >= ids[i] { throw .invalidSnapshot(.invalidField("replay window order")) }
    }
}
