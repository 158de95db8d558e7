// The four MTProto framings (Docs/MTProto.md §6.1–6.4) with quick-ack framing (§1.7, §6.1, §6.2) and the
// transport-level special packets (§6.5), as an encoder and a streaming decoder. Plain values: no I/O,
// no clock; the only randomness (padded intermediate's padding) comes in as a parameter.

import RampartCodecs  // CRC32 (full transport)

/// Turns packets into transport frames for one direction of one connection (Docs/MTProto.md §6.1–6.4).
///
/// A `.client` encoder prepends the framing's tag (§6.1–6.3) to its first frame unless told not to
/// (inside obfuscated2 the tag travels in the 64-byte header instead). A full-transport encoder numbers
/// its frames from 0 (§6.4).
///
/// ```swift
/// var enc = TransportEncoder(framing: .intermediate, role: .client)
/// let bytes = try enc.encode(message, using: &rng)   // EE EE EE EE | length | message
/// ```
public struct TransportEncoder: Sendable, Hashable {
    /// The framing written.
    public let framing: TransportFraming
    /// The end of the connection this encoder writes for.
    public let role: TransportRole
    /// The largest payload accepted.
    public let maxPacketLength: Int
    /// Whether the tag has yet to be written (`true` until the first frame of a tag-sending encoder).
    public private(set) var tagPending: Bool
    /// The sequence number the next full-transport frame gets (§6.4).
    public private(set) var sequenceNumber: UInt32 = 0

    /// An encoder for `framing`.
    ///
    /// - Parameters:
    ///   - framing: the transport framing.
    ///   - role: `.client` writes client→server frames (and may request quick acks), `.server` writes
    ///     server→client frames (and may write quick-ack replies and transport errors).
    ///   - sendsTag: whether the first frame starts with ``TransportFraming/tag``. Defaults to `true`
    ///     for a client and `false` for a server (servers never echo it); pass `false` inside
    ///     obfuscated2 (§6.6).
    ///   - maxPacketLength: the largest payload accepted (default 16 MiB).
    public init(framing: TransportFraming, role: TransportRole, sendsTag: Bool? = nil,
                maxPacketLength: Int = TransportLimits.defaultMaxPacketLength) {
        self.framing = framing
        self.role = role
        self.maxPacketLength = max(0, maxPacketLength)
        self.tagPending = (sendsTag ?? (role == .client)) && !framing.tag.isEmpty
    }

    /// Frames one packet.
    ///
    /// - Parameters:
    ///   - packet: the payload (normally an MTProto message). Abridged and padded intermediate need a
    ///     multiple of 4 bytes; intermediate and full accept any length.
    ///   - quickAckRequest: asks the server for a quick ack (§1.7): bit 7 of the first abridged length
    ///     byte, bit 31 of the intermediate/full length. Clients only.
    ///   - rng: the source of padded intermediate's random padding (§6.3): 0–15 bytes from a client,
    ///     0–3 from a server, as the official MTProxy sends (Telethon removes only `length % 4` bytes
    ///     of padding and fails on more); unused otherwise.
    /// - Returns: the frame bytes (with the tag in front when it is still pending).
    /// - Throws: ``MTProtoError/frameTooLarge(_:)`` above `maxPacketLength`,
    ///   ``MTProtoError/invalidFrame(_:)`` for a length the framing cannot carry or a quick-ack request
    ///   from a server. The encoder is unchanged after an error.
    public mutating func encode<P: Collection<UInt8>, R: RandomNumberGenerator>(
        _ packet: P, quickAckRequest: Bool = false, using rng: inout R
    ) throws(MTProtoError) -> [UInt8] {
        try encode(packet, quickAckRequest: quickAckRequest, paddingLimit: role == .server ? 4 : 16, using: &rng)
    }

    /// `encode` with padded intermediate's padding drawn from `0..<paddingLimit`.
    mutating func encode<P: Collection<UInt8>, R: RandomNumberGenerator>(
        _ packet: P, quickAckRequest: Bool, paddingLimit: UInt64, using rng: inout R
    ) throws(MTProtoError) -> [UInt8] {
        let n = packet.count
        guard n <= maxPacketLength else { throw .frameTooLarge(n) }
        if quickAckRequest && role != .client { throw .invalidFrame("only a client requests quick acks") }
        var out: [UInt8] = []
        switch framing {
        case .abridged:
            guard n % 4 == 0 else { throw .invalidFrame("abridged payload length \(n) is not a multiple of 4") }
            let units = n / 4
            guard units <= 0xFF_FFFF else { throw .frameTooLarge(n) }
            out.reserveCapacity(n + 5)
            if tagPending { out.append(0xEF) }
            let flag: UInt8 = quickAckRequest ? 0x80 : 0
            if units < 0x7F {
                out.append(UInt8(units) | flag)
            } else {
                out.append(0x7F | flag)
                out.append(UInt8(truncatingIfNeeded: units))
                out.append(UInt8(truncatingIfNeeded: units >> 8))
                out.append(UInt8(truncatingIfNeeded: units >> 16))
            }
            out.append(contentsOf: packet)
        case .intermediate, .paddedIntermediate:
            var padding = 0
            if framing == .paddedIntermediate {
                guard n % 4 == 0 else { throw .invalidFrame("padded intermediate payload length \(n) is not a multiple of 4") }
                padding = Int(rng.next() % paddingLimit)
            }
            let len = n + padding
            guard len <= 0x7FFF_FFFF else { throw .frameTooLarge(n) }
            out.reserveCapacity(len + 8)
            if tagPending { out.append(contentsOf: framing.tag) }
            appendLE32(UInt32(len) | (quickAckRequest ? 0x8000_0000 : 0), to: &out)
            out.append(contentsOf: packet)
            if padding > 0 { out.append(contentsOf: randomBytes(padding, using: &rng)) }
        case .full:
            guard n <= 0x7FFF_FFFF - 12 else { throw .frameTooLarge(n) }
            let len = UInt32(n + 12)
            out.reserveCapacity(n + 12)
            appendLE32(len | (quickAckRequest ? 0x8000_0000 : 0), to: &out)
            appendLE32(sequenceNumber, to: &out)
            out.append(contentsOf: packet)
            appendLE32(CRC32.checksum(data: out), to: &out)
            sequenceNumber &+= 1
        }
        tagPending = false
        return out
    }

    /// A quick-ack reply (server → client, Docs/MTProto.md §1.7): the 4-byte value with bit 31 set, little-endian
    /// in intermediate, padded intermediate and full, byte-swapped (big-endian) in abridged. It takes
    /// the place of a length field and does not advance the full transport's sequence number.
    public func encodeQuickAck(_ value: UInt32) -> [UInt8] {
        let v = value | 0x8000_0000
        if framing == .abridged { return le32Bytes(v.byteSwapped) }
        return le32Bytes(v)
    }

    /// A transport error packet (server → client, §6.5): the int32 `code` (e.g. −404) as a 4-byte
    /// payload in this framing. Padded intermediate adds 0–3 padding bytes from `rng`, so that the
    /// padded payload stays below the 16 bytes under which a client reads a special packet.
    public mutating func encodeTransportError<R: RandomNumberGenerator>(_ code: Int32, using rng: inout R) throws(MTProtoError) -> [UInt8] {
        try encode(le32Bytes(UInt32(bitPattern: code)), quickAckRequest: false, paddingLimit: 4, using: &rng)
    }
}

/// A streaming decoder for one direction of one connection (Docs/MTProto.md §6.1–6.5).
///
/// Feed it bytes as they arrive, split anywhere, then call ``next()`` until it returns `nil`:
///
/// ```swift
/// var dec = TransportDecoder(framing: .intermediate, role: .server)
/// dec.feed(chunk)
/// while let event = try dec.next() { ... }
/// ```
///
/// A `.server` decoder reads client frames: it expects the framing's tag first (unless told otherwise)
/// and reports quick-ack request flags. A `.client` decoder reads server frames: it turns quick-ack
/// replies into ``TransportEvent/quickAck(_:)`` and, as tdlib does, reads every payload shorter than 16
/// bytes as a special packet (§6.5): int32 0 is a no-op (no event), −1 followed by 4 bytes is a quick
/// ack, any other value is ``TransportEvent/transportError(_:)``; 0–3 bytes is an error.
///
/// Error contract: a ``next()`` that throws consumes nothing and leaves the decoder unchanged (the bad
/// frame stays buffered, the full transport's expected sequence number does not move), so every later
/// call throws the same error; close the connection. Lengths are checked against `maxPacketLength`
/// as soon as the length field is buffered, before any allocation for the body.
public struct TransportDecoder: Sendable, Hashable {
    /// The framing read.
    public let framing: TransportFraming
    /// The end of the connection this decoder reads for.
    public let role: TransportRole
    /// The largest payload accepted (padding and the full transport's 12 bytes come on top).
    public let maxPacketLength: Int
    /// Whether the framing's tag has yet to be read.
    public private(set) var tagPending: Bool
    /// The sequence number the next full-transport frame must carry (§6.4).
    public private(set) var expectedSequenceNumber: UInt32 = 0
    var buffer = ByteQueue()

    /// A decoder for `framing`.
    ///
    /// - Parameters:
    ///   - framing: the transport framing.
    ///   - role: `.server` reads client→server frames, `.client` reads server→client frames.
    ///   - expectsTag: whether the stream starts with ``TransportFraming/tag`` (checked, then skipped).
    ///     Defaults to `true` for a server and `false` for a client; pass `false` when the tag was
    ///     already consumed (by ``TransportDetector``) or travels in an obfuscated2 header.
    ///   - maxPacketLength: the largest payload accepted (default 16 MiB).
    public init(framing: TransportFraming, role: TransportRole, expectsTag: Bool? = nil,
                maxPacketLength: Int = TransportLimits.defaultMaxPacketLength) {
        self.framing = framing
        self.role = role
        self.maxPacketLength = max(0, maxPacketLength)
        self.tagPending = (expectsTag ?? (role == .server)) && !framing.tag.isEmpty
    }

    /// Bytes received but not yet decoded.
    public var bufferedByteCount: Int { buffer.count }

    /// Appends received bytes. Never fails; decoding happens in ``next()``.
    public mutating func feed<C: Collection<UInt8>>(_ bytes: C) {
        buffer.append(contentsOf: bytes)
    }

    /// Decodes the next event.
    ///
    /// - Returns: the next packet, quick ack or transport error, or `nil` when more bytes are needed.
    /// - Throws: ``MTProtoError/invalidFrame(_:)`` (wrong tag, short special packet),
    ///   ``MTProtoError/frameTooLarge(_:)`` (length above the limit; thrown from the header alone),
    ///   ``MTProtoError/frameCheckFailed(_:)`` (full transport: bad CRC32 or sequence number). Nothing is
    ///   consumed when it throws.
    public mutating func next() throws(MTProtoError) -> TransportEvent? {
        // Nothing is committed until an event is returned or more bytes are needed, so that a throw
        // (possibly after a tag or a no-op packet) leaves the decoder exactly as it was.
        var offset = 0
        if tagPending {
            let tag = framing.tag
            let have = min(tag.count, buffer.count)
            // A wrong first byte is rejected at once rather than after four.
            for i in 0..<have where buffer[i] != tag[i] { throw .invalidFrame("wrong transport tag") }
            guard have == tag.count else { return nil }
            offset = tag.count
        }
        var sequenced: UInt32 = 0
        while true {
            guard let frame = try parse(at: offset, sequenceNumber: expectedSequenceNumber &+ sequenced) else {
                commit(offset, sequenced)
                return nil
            }
            offset += frame.consumed
            if frame.sequenced { sequenced += 1 }
            if let e = frame.event {
                commit(offset, sequenced)
                return e
            }
            // A no-op special packet: keep going.
        }
    }

    private mutating func commit(_ consumed: Int, _ sequenced: UInt32) {
        if consumed > 0 && tagPending { tagPending = false }
        buffer.consume(consumed)
        expectedSequenceNumber &+= sequenced
    }

    /// One parsed frame: how many bytes it spans, whether it used a full-transport sequence number,
    /// and its event (nil for a no-op).
    private struct Parsed {
        var consumed: Int
        var sequenced: Bool
        var event: TransportEvent?
    }

    /// Parses the frame that starts `o` bytes into the buffer, changing nothing.
    private func parse(at o: Int, sequenceNumber: UInt32) throws(MTProtoError) -> Parsed? {
        let avail = buffer.count - o
        switch framing {
        case .abridged:
            guard avail >= 1 else { return nil }
            let b0 = buffer[o]
            if role == .client && b0 & 0x80 != 0 {
                // A quick-ack reply: four bytes, the value big-endian (§1.7).
                guard avail >= 4 else { return nil }
                return Parsed(consumed: 4, sequenced: false, event: .quickAck(buffer.le32(o).byteSwapped))
            }
            let ack = b0 & 0x80 != 0
            let short = Int(b0 & 0x7F)
            var header = 1
            var units = short
            if short == 0x7F {
                guard avail >= 4 else { return nil }
                header = 4
                units = Int(buffer.le32(o) >> 8)
            }
            let length = units * 4  // at most 0xFFFFFF * 4: no overflow
            guard length <= maxPacketLength else { throw .frameTooLarge(length) }
            guard avail >= header + length else { return nil }
            return try finish(buffer.bytes((o + header)..<(o + header + length)), consumed: header + length, ack: ack)

        case .intermediate, .paddedIntermediate:
            guard avail >= 4 else { return nil }
            let raw = buffer.le32(o)
            if role == .client && raw & 0x8000_0000 != 0 {
                return Parsed(consumed: 4, sequenced: false, event: .quickAck(raw))
            }
            let ack = raw & 0x8000_0000 != 0
            let length = Int(raw & 0x7FFF_FFFF)
            let slack = framing == .paddedIntermediate ? 15 : 0  // room for the padding
            guard length - slack <= maxPacketLength else { throw .frameTooLarge(length) }
            guard avail >= 4 + length else { return nil }
            let payloadLength = framing == .paddedIntermediate ? length - length % 4 : length
            return try finish(buffer.bytes((o + 4)..<(o + 4 + payloadLength)), consumed: 4 + length, ack: ack)

        case .full:
            guard avail >= 4 else { return nil }
            let raw = buffer.le32(o)
            if role == .client && raw & 0x8000_0000 != 0 {
                return Parsed(consumed: 4, sequenced: false, event: .quickAck(raw))
            }
            let ack = raw & 0x8000_0000 != 0
            let length = Int(raw & 0x7FFF_FFFF)
            guard length >= 12 else { throw .invalidFrame("full transport length \(length) is below 12") }
            guard length - 12 <= maxPacketLength else { throw .frameTooLarge(length - 12) }
            guard avail >= length else { return nil }
            let crc = buffer.withBytes(o..<(o + length - 4)) { CRC32.checksum(bufferPointer: $0) }
            guard crc == buffer.le32(o + length - 4) else { throw .frameCheckFailed("CRC32 mismatch") }
            let seq = buffer.le32(o + 4)
            guard seq == sequenceNumber else {
                throw .frameCheckFailed("sequence number \(seq), expected \(sequenceNumber)")
            }
            var p = try finish(buffer.bytes((o + 8)..<(o + length - 4)), consumed: length, ack: ack)
            p.sequenced = true
            return p
        }
    }

    /// Wraps a payload; on the client side, payloads under 16 bytes are special packets (§6.5).
    private func finish(_ payload: [UInt8], consumed: Int, ack: Bool) throws(MTProtoError) -> Parsed {
        guard role == .client && payload.count < 16 else {
            return Parsed(consumed: consumed, sequenced: false, event: .packet(payload, quickAckRequested: ack))
        }
        guard payload.count >= 4 else { throw .invalidFrame("server packet of \(payload.count) bytes") }
        let code = Int32(bitPattern: readLE32(payload, 0))
        if code == 0 { return Parsed(consumed: consumed, sequenced: false, event: nil) }
        if code == -1 && payload.count >= 8 {
            return Parsed(consumed: consumed, sequenced: false, event: .quickAck(readLE32(payload, 4)))
        }
        return Parsed(consumed: consumed, sequenced: false, event: .transportError(code))
    }
}
