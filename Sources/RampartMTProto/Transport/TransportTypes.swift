// Shared vocabulary of the transport codecs (Docs/MTProto.md §6): which framing, which end of the connection,
// what a decoder yields, and the byte queue that the streaming decoders buffer into.
//
// Every decoder in Transport/ follows one contract:
// * `feed(_:)` appends bytes (split anywhere, any chunk size, even empty) and never fails;
// * `next()` returns the next complete event, `nil` when more bytes are needed, or throws a typed
//   ``MTProtoError`` for malformed input;
// * errors are sticky: after a `next()` throws, every later call throws the same error, and all events
//   that precede the bad bytes have been delivered first; close the connection. For the framing
//   decoder (and obfuscated2, which only decrypts in front of it) a throwing `next()` moreover changes
//   no state at all (tag, no-op packets and sequence numbers included): the bad frame stays buffered.
//   The layered connection objects (ServerTransport, FakeTLSClient) may keep progress made below the
//   bad bytes (a detected transport, a verified server hello, records already unwrapped);
// * a length field is checked against the configured maximum as soon as the header is buffered, before
//   the body arrives and before anything is allocated for it.

/// The MTProto transport framings of Docs/MTProto.md §6.1–6.4.
public enum TransportFraming: Sendable, Hashable, CaseIterable {
    /// Abridged (§6.1): tag `EF`, a 1- or 4-byte length in 4-byte units. Payloads must be a multiple of 4.
    case abridged
    /// Intermediate (§6.2): tag `EE EE EE EE`, a 4-byte little-endian length.
    case intermediate
    /// Padded intermediate (§6.3): tag `DD DD DD DD`, like intermediate plus 0–15 random bytes after
    /// the payload. Payloads must be a multiple of 4 (the reader strips `length % 4` bytes).
    case paddedIntermediate
    /// Full (§6.4): no tag; `length | seq_no | payload | CRC32`, sequence number and CRC checked.
    case full

    /// The bytes a client sends once before its first packet on a plain TCP connection (§6.1–6.3);
    /// empty for full.
    public var tag: [UInt8] {
        switch self {
        case .abridged: return [0xEF]
        case .intermediate: return [0xEE, 0xEE, 0xEE, 0xEE]
        case .paddedIntermediate: return [0xDD, 0xDD, 0xDD, 0xDD]
        case .full: return []
        }
    }

    /// The 4-byte protocol tag placed at bytes 56..<60 of an obfuscated2 header (§6.6 step 2), or
    /// `nil` for full, which obfuscated2 does not carry.
    public var obfuscationTag: [UInt8]? {
        switch self {
        case .abridged: return [0xEF, 0xEF, 0xEF, 0xEF]
        case .intermediate: return [0xEE, 0xEE, 0xEE, 0xEE]
        case .paddedIntermediate: return [0xDD, 0xDD, 0xDD, 0xDD]
        case .full: return nil
        }
    }

    /// The framing whose obfuscation tag (§6.6) is `tag`, if any.
    public init?<C: Collection<UInt8>>(obfuscationTag tag: C) {
        let t = Array(tag)
        guard let f = [TransportFraming.abridged, .intermediate, .paddedIntermediate].first(where: { $0.obfuscationTag == t })
        else { return nil }
        self = f
    }
}

/// Which end of the connection a codec works for. A `.client` encoder writes client→server frames and
/// a `.client` decoder reads server→client frames; `.server` is the mirror image.
public enum TransportRole: Sendable, Hashable {
    /// The connecting end: sends tags and headers, may request quick acks, receives quick acks and
    /// transport errors.
    case client
    /// The accepting end: expects tags, sees quick-ack requests, sends quick acks and transport errors.
    case server
}

/// What a transport decoder yields.
public enum TransportEvent: Sendable, Hashable {
    /// A complete packet (normally an MTProto message). `quickAckRequested` is the client's quick-ack
    /// request flag (§6.1, §6.2); it can only be `true` on the server side.
    case packet([UInt8], quickAckRequested: Bool)
    /// A quick acknowledgement from the server (Docs/MTProto.md §1.7): the 32-bit value with bit 31 set, to be
    /// matched against the value computed from the sent message's msg_key.
    case quickAck(UInt32)
    /// A transport-level error code from the server (§6.5), e.g. −404 (auth key not found),
    /// −429 (transport flood), −444 (invalid DC).
    case transportError(Int32)
}

/// Limits shared by the codecs.
public enum TransportLimits {
    /// The default largest packet (payload) a codec accepts or produces: 16 MiB.
    public static let defaultMaxPacketLength = 16 * 1024 * 1024
}

// MARK: - Byte helpers

@inline(__always)
func readLE32<C: RandomAccessCollection<UInt8>>(_ b: C, _ at: C.Index) -> UInt32 where C.Index == Int {
    UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
}

@inline(__always)
func appendLE32(_ v: UInt32, to out: inout [UInt8]) {
    out.append(UInt8(truncatingIfNeeded: v))
    out.append(UInt8(truncatingIfNeeded: v >> 8))
    out.append(UInt8(truncatingIfNeeded: v >> 16))
    out.append(UInt8(truncatingIfNeeded: v >> 24))
}

@inline(__always)
func le32Bytes(_ v: UInt32) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(4)
    appendLE32(v, to: &out)
    return out
}

/// A FIFO of received bytes: appends at the end, consumes from the front, compacts lazily.
struct ByteQueue: Sendable, Hashable {
    private var storage: [UInt8] = []
    private var head = 0

    /// Equal when the unconsumed bytes are equal (whatever the compaction state).
    static func == (a: ByteQueue, b: ByteQueue) -> Bool { a.storage[a.head...] == b.storage[b.head...] }
    func hash(into h: inout Hasher) { h.combine(count); for x in storage[head...] { h.combine(x) } }

    /// Buffered bytes not yet consumed.
    var count: Int { storage.count - head }

    var isEmpty: Bool { count == 0 }

    mutating func append<C: Collection<UInt8>>(contentsOf bytes: C) {
        if head > 0 && head >= storage.count / 2 {
            storage.removeFirst(head)
            head = 0
        }
        storage.append(contentsOf: bytes)
    }

    /// Byte `i` of the unconsumed bytes (caller checks `i < count`).
    subscript(i: Int) -> UInt8 { storage[head + i] }

    /// Little-endian uint32 at unconsumed offset `i` (caller checks `i + 4 <= count`).
    func le32(_ i: Int) -> UInt32 { readLE32(storage, head + i) }

    /// A copy of unconsumed bytes `range`.
    func bytes(_ range: Range<Int>) -> [UInt8] { Array(storage[(head + range.lowerBound)..<(head + range.upperBound)]) }

    /// Runs `body` over unconsumed bytes `range` without copying.
    func withBytes<R>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        storage.withUnsafeBytes { all in
            body(UnsafeRawBufferPointer(rebasing: all[(head + range.lowerBound)..<(head + range.upperBound)]))
        }
    }

    /// Drops the first `n` unconsumed bytes (caller checks `n <= count`).
    mutating func consume(_ n: Int) {
        head += n
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        }
    }

    /// Removes and returns all unconsumed bytes.
    mutating func takeAll() -> [UInt8] {
        let out = Array(storage[head...])
        storage.removeAll(keepingCapacity: false)
        head = 0
        return out
    }
}
