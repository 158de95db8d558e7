// Secret-chat sequence numbers (Docs/MTProto.md §7.4; core.telegram.org/api/end-to-end/seq_no) and layer
// negotiation (§7.2, §7.3). Pure values: the caller decrypts and decodes, then hands the wire-form numbers
// here and acts on the verdict.

extension SecretChat {
    /// Layer numbers that change the protocol (tdlib `SecretChatLayer`).
    public enum Layer {
        /// The layer a peer is assumed to have until it says otherwise (Docs/MTProto.md §7.2).
        public static let initialRemote: Int32 = 46
        /// `decryptedMessageLayer` and sequence numbers exist from this layer on.
        public static let sequenceNumbers: Int32 = 17
        /// MTProto 2.0 for secret chats: 1.0-encrypted messages are refused from here on.
        public static let mtproto2: Int32 = 73
        /// Underline, strike-through and blockquote entities.
        public static let newEntities: Int32 = 101
        /// Deleting messages when the chat is closed.
        public static let deleteMessagesOnClose: Int32 = 123
        /// `decryptedMessageMediaDocument` with `size:long`.
        public static let supportBigFiles: Int32 = 143
        /// This implementation's layer (tdlib `Current`, spoiler and custom-emoji entities).
        public static let current: Int32 = 144
    }

    /// The layers of both sides of a chat. The peer's layer starts at 46 and only rises, when a higher
    /// one is seen in a `decryptedMessageLayer` or a `decryptedMessageActionNotifyLayer`; a lower value
    /// is ignored.
    public struct LayerNegotiation: Equatable, Sendable {
        /// Our layer (announced with NotifyLayer and written into every `decryptedMessageLayer`).
        public let local: Int32
        /// The highest layer the peer has shown.
        public private(set) var remote: Int32

        /// Starts with the peer at `remote` (46 by default).
        public init(local: Int32 = Layer.current, remote: Int32 = Layer.initialRemote) {
            self.local = local
            self.remote = remote
        }

        /// The layer both sides speak: the lower of the two.
        public var effective: Int32 { min(local, remote) }

        /// Whether MTProto 1.0-encrypted messages are still accepted (and sent): only while the
        /// effective layer is below 73 (``Layer/mtproto2``).
        public var allowsV1: Bool { effective < Layer.mtproto2 }

        /// Whether the peer runs a newer layer than ours (the user should be told to update).
        public var remoteIsNewer: Bool { remote > local }

        /// Raises the peer's layer to `layer` if that is higher. Returns whether it rose.
        @discardableResult
        public mutating func observe(_ layer: Int32) -> Bool {
            guard layer > remote else { return false }
            remote = layer
            return true
        }

        /// Raises the peer's layer from an accepted message: its `layer` field and, for a NotifyLayer
        /// action, the announced layer. Returns whether it rose.
        @discardableResult
        public mutating func observe(_ message: DecryptedMessageLayer) -> Bool {
            var raised = observe(message.layer)
            if case .notifyLayer(let l)? = message.message.action { raised = observe(l) || raised }
            return raised
        }
    }
}

extension SecretChat {
    /// Which side of the chat we are: the creator called `messages.requestEncryption`, the acceptor
    /// answered it. It fixes the parities of the sequence numbers (Docs/MTProto.md §7.4).
    public enum SequenceRole: Sendable, Equatable, Hashable {
        /// The side that created the chat: sends `out = 2k + 1`, `in = 2j`.
        case creator
        /// The side that accepted it: sends `out = 2k`, `in = 2j + 1`.
        case acceptor
    }

    /// The sequence numbers of one chat, from one side (Docs/MTProto.md §7.4).
    ///
    /// Raw counters count messages sent and messages received in order (service messages included);
    /// on the wire a raw `n` is `2n + parity`. Numbers are assigned once, when a message is created
    /// (``nextOutgoing()``), and never change. ``receive(inSeqNo:outSeqNo:resend:item:)`` classifies
    /// a received message:
    ///
    /// * in order: it is delivered, followed by any queued messages that are now in order;
    /// * a duplicate (`out_seq_no` already received or queued): dropped, nothing changes;
    /// * a gap (`out_seq_no` beyond the next one expected): queued, and for a new hole the
    ///   `decryptedMessageActionResend` to send (start = last good out + 2, end = received out − 2, wire
    ///   form); a message that lands in a hole already asked for is queued without a new request;
    /// * a wrong parity, a negative number, an `in_seq_no` below the last accepted one or above our
    ///   sent count, an unsatisfiable Resend, a full queue, or an `out_seq_no` of 2³¹ − 1 or more (raw
    ///   2³⁰ − 1: the counters would overflow): ``SecretChatError/protocolViolation(_:)``,
    ///   after which the chat must be aborted.
    ///
    /// A peer's Resend is honoured once, on arrival, even when its own message is queued: pass its range
    /// as `resend` and send again the messages listed in ``Reception/toResend``. A Resend delivered
    /// later from the queue must not be acted on again. The counters change only when a message is
    /// accepted; a throwing call changes nothing at all.
    public struct SequenceNumbers<Item: Sendable>: Sendable {
        /// What ``receive(inSeqNo:outSeqNo:resend:item:)`` decided.
        public struct Reception: Sendable {
            /// Items now in order, to process in this order (empty for a duplicate or a queued message).
            public var delivered: [Item] = []
            /// The message was a duplicate and was dropped.
            public var isDuplicate = false
            /// A Resend to send to the peer (a new gap was found), in wire form.
            public var resendRequest: DecryptedMessageAction?
            /// Our outgoing `out_seq_no` values (wire form) the peer asked to have sent again, in order.
            public var toResend: [Int32] = []
        }

        struct Queued: Sendable {
            var rawIn: Int32
            var item: Item
        }

        /// Our side.
        public let role: SequenceRole
        /// Messages we have created (the raw `out_seq_no` of the next one).
        public private(set) var sentCount: Int32 = 0
        /// Messages received in order (the raw `out_seq_no` expected next, C + 1).
        public private(set) var receivedCount: Int32 = 0
        /// The raw `in_seq_no` of the last accepted message: how many of ours the peer has seen.
        public private(set) var peerReceivedCount: Int32 = 0
        /// The highest raw `out_seq_no` seen from the peer (received or queued), −1 before the first.
        public private(set) var highestSeen: Int32 = -1
        /// The most messages held while a gap is open; one more is a protocol violation.
        public let maximumQueued: Int
        var queue: [Int32: Queued] = [:]

        /// Fresh counters for `role`; at most `maximumQueued` (default 1000) messages wait in gaps.
        public init(role: SequenceRole, maximumQueued: Int = 1000) {
            self.role = role
            self.maximumQueued = max(0, maximumQueued)
        }

        /// The messages waiting for a gap to fill.
        public var queuedCount: Int { queue.count }

        /// The parity of `out_seq_no` in our messages (1 for the creator).
        public var ourOutParity: Int32 { role == .creator ? 1 : 0 }
        /// The parity of `in_seq_no` in our messages (0 for the creator).
        public var ourInParity: Int32 { role == .creator ? 0 : 1 }
        /// The parity of `out_seq_no` in the peer's messages.
        public var peerOutParity: Int32 { 1 - ourOutParity }
        /// The parity of `in_seq_no` in the peer's messages.
        public var peerInParity: Int32 { 1 - ourInParity }

        /// The `out_seq_no` (wire form) of the peer's next in-order message.
        public var expectedOutSeqNo: Int32 { 2 &* receivedCount &+ peerOutParity }

        /// The largest raw counter whose wire form still fits an `int`.
        static var rawLimit: Int32 { (Int32.max - 1) / 2 }

        /// Assigns the wire-form numbers of the next outgoing message and counts it as sent. Throws
        /// ``SecretChatError/protocolViolation(_:)`` once 2³⁰ − 1 messages have been sent (the wire form
        /// would overflow).
        public mutating func nextOutgoing() throws(SecretChatError) -> (inSeqNo: Int32, outSeqNo: Int32) {
            guard sentCount < Self.rawLimit else { throw .protocolViolation("out_seq_no exhausted") }
            let numbers = (inSeqNo: 2 * receivedCount + ourInParity, outSeqNo: 2 * sentCount + ourOutParity)
            sentCount += 1
            return numbers
        }

        /// Validates a peer's Resend of our messages: wire-form bounds with our out parity, in order, and
        /// only messages we have sent. Returns the wire `out_seq_no` values to send again.
        public func resendList(startSeqNo: Int32, endSeqNo: Int32) throws(SecretChatError) -> [Int32] {
            guard startSeqNo >= 0, endSeqNo >= startSeqNo,
                  startSeqNo & 1 == ourOutParity, endSeqNo & 1 == ourOutParity,
                  endSeqNo >> 1 < sentCount
            else { throw .protocolViolation("unsatisfiable resend \(startSeqNo)...\(endSeqNo)") }
            return Array(stride(from: startSeqNo, through: endSeqNo, by: 2))
        }

        /// Classifies a received message with wire-form `inSeqNo` and `outSeqNo` (see the type's
        /// description). `resend` is the range of a `decryptedMessageActionResend` the message carries.
        public mutating func receive(inSeqNo: Int32, outSeqNo: Int32, resend: (startSeqNo: Int32, endSeqNo: Int32)? = nil,
                                     item: Item) throws(SecretChatError) -> Reception {
            guard inSeqNo >= 0, outSeqNo >= 0 else { throw .protocolViolation("negative sequence number") }
            guard inSeqNo & 1 == peerInParity, outSeqNo & 1 == peerOutParity else {
                throw .protocolViolation("sequence number parity")
            }
            let rawOut = outSeqNo >> 1
            let rawIn = inSeqNo >> 1
            // 2³⁰ − 1 messages would make our next in_seq_no overflow an int.
            guard rawOut < Self.rawLimit else { throw .protocolViolation("out_seq_no exhausted") }
            var result = Reception()
            if rawOut < receivedCount || queue[rawOut] != nil {
                result.isDuplicate = true
                return result
            }
            guard rawIn >= peerReceivedCount else { throw .protocolViolation("in_seq_no decreased") }
            guard rawIn <= sentCount else { throw .protocolViolation("in_seq_no beyond our messages") }
            if let resend {
                result.toResend = try resendList(startSeqNo: resend.startSeqNo, endSeqNo: resend.endSeqNo)
            }
            var s = self
            if rawOut == s.receivedCount {
                result.delivered.append(item)
                s.receivedCount += 1
                s.peerReceivedCount = rawIn
                s.highestSeen = max(s.highestSeen, rawOut)
                while let next = s.queue.removeValue(forKey: s.receivedCount) {
                    guard next.rawIn >= s.peerReceivedCount else {
                        throw .protocolViolation("in_seq_no decreased in a queued message")
                    }
                    result.delivered.append(next.item)
                    s.receivedCount += 1
                    s.peerReceivedCount = next.rawIn
                }
            } else {
                guard s.queue.count < s.maximumQueued else { throw .protocolViolation("too many messages in gaps") }
                s.queue[rawOut] = Queued(rawIn: rawIn, item: item)
                if rawOut > s.highestSeen + 1 {
                    let first = s.highestSeen + 1
                    result.resendRequest = .resend(startSeqNo: 2 * first + peerOutParity, endSeqNo: outSeqNo - 2)
                }
                s.highestSeen = max(s.highestSeen, rawOut)
            }
            self = s
            return result
        }
    }
}

extension SecretChat.SequenceNumbers.Queued: Equatable where Item: Equatable {}
extension SecretChat.SequenceNumbers: Equatable where Item: Equatable {}
extension SecretChat.SequenceNumbers.Reception: Equatable where Item: Equatable {}

extension SecretChat.SequenceNumbers where Item == SecretChat.DecryptedMessageLayer {
    /// Classifies a decoded `decryptedMessageLayer`: its wire numbers, and its Resend action if it
    /// carries one (honoured now, see ``receive(inSeqNo:outSeqNo:resend:item:)``).
    public mutating func receive(_ layer: SecretChat.DecryptedMessageLayer) throws(SecretChatError) -> Reception {
        var resend: (startSeqNo: Int32, endSeqNo: Int32)?
        if case .resend(let start, let end)? = layer.message.action { resend = (start, end) }
        return try receive(inSeqNo: layer.inSeqNo, outSeqNo: layer.outSeqNo, resend: resend, item: layer)
    }
}

// MARK: - Snapshot fields (the secret chat session's snapshot, Docs/Snapshots.md §4)

extension SecretChat.SequenceNumbers {
    /// sentCount, receivedCount, peerReceivedCount, highestSeen (int32 each), maximumQueued (uint32),
    /// then the queue in ascending raw out_seq_no: raw out, raw in (int32) and the item.
    func write(to w: inout SnapshotWriter, item: (inout SnapshotWriter, Item) -> Void) {
        w.int32(sentCount)
        w.int32(receivedCount)
        w.int32(peerReceivedCount)
        w.int32(highestSeen)
        w.uint32(UInt32(clamping: maximumQueued))
        w.list(queue.keys.sorted()) { w, k in
            let q = queue[k]!
            w.int32(k)
            w.int32(q.rawIn)
            item(&w, q.item)
        }
    }

    /// Reads ``write(to:item:)``: counters in range and consistent, the queue above the received count,
    /// at most `maximumQueued`, ascending.
    init(role: SecretChat.SequenceRole, reading r: inout SnapshotReader,
         item: (inout SnapshotReader) throws(RampartError) -> Item) throws(RampartError) {
        let sent = try r.int32(), received = try r.int32(), peerReceived = try r.int32(), highest = try r.int32()
        let maxQueued = Int(try r.uint32())
        guard sent >= 0, sent <= Self.rawLimit, received >= 0, received <= Self.rawLimit,
              peerReceived >= 0, peerReceived <= sent, highest >= received - 1, highest < Self.rawLimit,
              maxQueued <= 1 << 16 else {
            throw .invalidSnapshot(.invalidField("sequence numbers"))
        }
        self.init(role: role, maximumQueued: maxQueued)
        sentCount = sent
        receivedCount = received
        peerReceivedCount = peerReceived
        highestSeen = highest
        var last = received
        let entries = try r.list("queued messages", max: maxQueued, minElementBytes: 8) { (r) throws(RampartError) -> (Int32, Queued) in
            let rawOut = try r.int32(), rawIn = try r.int32()
            return (rawOut, Queued(rawIn: rawIn, item: try item(&r)))
        }
        for (rawOut, q) in entries {
            guard rawOut > last, rawOut <= highest, q.rawIn >= 0, q.rawIn <= sent else { throw .invalidSnapshot(.invalidField("queued messages")) }
            last = rawOut
            queue[rawOut] = q
        }
    }
}

extension SecretChat.LayerNegotiation {
    /// Local and remote layers (int32 each).
    func write(to w: inout SnapshotWriter) {
        w.int32(local)
        w.int32(remote)
    }

    init(reading r: inout SnapshotReader) throws(RampartError) {
        let local = try r.int32(), remote = try r.int32()
        guard local > 0, remote >= SecretChat.Layer.initialRemote else { throw .invalidSnapshot(.invalidField("layers")) }
        self.init(local: local, remote: remote)
    }
}

