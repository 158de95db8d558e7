// The chat-server protocol's framing after the handshake (Docs/Threema.md, "Chat-server protocol"):
// nonces `cookie ‖ u64-le(sequence number)`, frames `u16-le length ‖ box`, an incremental frame
// decoder with a bounded buffer, and the transport that seals and opens containers with the
// session key.

import Rampart

/// The chat-server protocol (CSP): the TCP transport between a Threema client and the chat server.
/// Everything here is sans I/O: bytes in, bytes out and events.
///
/// ```swift
/// var (client, hello) = CSP.Client.start(configuration: config, using: &rng)   // send `hello`
/// let out = try client.receive(bytesFromSocket)          // send out.outgoing, handle out.events
/// let frame = try client.send(.echoRequest([1, 2, 3]))   // once established
/// ```
public enum CSP {
    /// The cookie length (CCK, SCK).
    public static let cookieLength = 16
    /// The largest frame `length` (the box, tag included) this implementation sends or accepts.
    public static let maximumFrameLength = 8192
    /// The smallest frame `length`: the 16-byte tag and the 4-byte container header.
    public static let minimumFrameLength = Box.tagByteCount + 4
    /// The largest encrypted login-extensions length accepted (the indicator allows 65 535).
    public static let maximumExtensionsLength = 8192
    /// `client-hello`: `TCK.public ‖ CCK`.
    public static let clientHelloLength = 32 + cookieLength
    /// `server-hello`: `SCK ‖ box(TSK.public ‖ CCK)`.
    public static let serverHelloLength = cookieLength + 32 + cookieLength + Box.tagByteCount
    /// The plaintext `login-data`.
    public static let loginDataLength = 8 + 32 + cookieLength + 24 + 32 + 16
    /// The `login` box (`login-data` sealed).
    public static let loginBoxLength = loginDataLength + Box.tagByteCount
    /// `login-ack`: 16 reserved bytes sealed.
    public static let loginAckLength = 16 + Box.tagByteCount
    /// The magic that marks an extension indicator in the login data.
    public static let extensionMagic: [UInt8] = Array("threema-clever-extension-field".utf8)

    /// The nonce `cookie ‖ u64-le(sequenceNumber)`.
    static func nonce(_ cookie: [UInt8], _ sequenceNumber: UInt64) -> [UInt8] {
        cookie + withUnsafeBytes(of: sequenceNumber.littleEndian) { Array($0) }
    }

    /// One direction's nonces: a cookie and the next sequence number (starting at 1, never reused,
    /// never skipped, never wrapped).
    struct NonceSequence: Sendable, Hashable {
        let cookie: [UInt8]
        private(set) var next: UInt64 = 1

        init(cookie: [UInt8], next: UInt64 = 1) {
            self.cookie = cookie
            self.next = next
        }

        /// The nonce for the next sequence number; ``advance()`` moves past it.
        func current() throws(ThreemaError) -> [UInt8] {
            guard next != .max else { throw .csp(.sequenceNumberExhausted) }
            return CSP.nonce(cookie, next)
        }

        /// As ``current()`` without an allocation: calls `body` with the 24 nonce bytes.
        func withCurrent<T>(_ body: (UnsafeRawPointer) -> T) throws(ThreemaError) -> T {
            guard next != .max, cookie.count == CSP.cookieLength else { throw .csp(.sequenceNumberExhausted) }
            var n: (UInt64, UInt64, UInt64) = (0, 0, next.littleEndian)
            return withUnsafeMutableBytes(of: &n) { b in
                cookie.withUnsafeBytes { b.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: CSP.cookieLength) }
                return body(UnsafeRawPointer(b.baseAddress!))
            }
        }

        mutating func advance() { next += 1 }
    }

    /// The incremental frame decoder: fed arbitrary pieces of the TCP stream, it returns every
    /// complete frame's box. It buffers at most one incomplete frame (2 + ``maximumFrameLength``
    /// bytes) and checks the length prefix before it reserves anything for the box.
    public struct FrameDecoder: Sendable, Hashable {
        private var header: [UInt8] = []
        private var body: [UInt8] = []
        private var expected = -1

        /// An empty decoder.
        public init() {}

        /// The bytes held for an incomplete frame (header and body).
        public var bufferedByteCount: Int { header.count + body.count }

        /// Consumes `chunk` and returns the boxes of the frames it completes, in order.
        ///
        /// - Throws: ``CSPFault/frameTooLarge(_:)`` or ``CSPFault/frameTooShort(_:)`` for a length
        ///   prefix outside ``minimumFrameLength``...``maximumFrameLength``; the decoder is unchanged
        ///   then (the boxes completed before the bad prefix are not returned either).
        public mutating func decode<C: Collection<UInt8>>(_ chunk: C) throws(ThreemaError) -> [[UInt8]] {
            try decodeAtomically(Array(chunk)[...]).map { Array($0) }
        }

        /// What ``restore(_:completed:)`` needs to undo a decode: the header bytes, the length of
        /// the partial body and the expected length (no copy of the body).
        struct Mark {
            let header: [UInt8]
            let bodyCount: Int
            let expected: Int
        }

        var mark: Mark { Mark(header: header, bodyCount: body.count, expected: expected) }

        /// Undoes the decodes since `mark`, given the boxes they completed: the old partial body is
        /// the first completed box's prefix, or the current body's prefix when none completed. The
        /// decoder works in place (no copy of a buffered frame per chunk), so 1-byte chunks cost
        /// linear time.
        mutating func restore(_ mark: Mark, completed boxes: [ArraySlice<UInt8>]) {
            if let first = boxes.first {
                body = Array(first.prefix(mark.bodyCount))
            } else {
                body.removeSubrange(mark.bodyCount...)
            }
            header = mark.header
            expected = mark.expected
        }

        /// ``decodeInPlace(_:into:)`` that leaves the decoder unchanged when it throws.
        mutating func decodeAtomically(_ input: ArraySlice<UInt8>) throws(ThreemaError) -> [ArraySlice<UInt8>] {
            let m = mark
            var boxes: [ArraySlice<UInt8>] = []
            do { try decodeInPlace(input, into: &boxes) } catch {
                restore(m, completed: boxes)
                throw error
            }
            return boxes
        }

        private mutating func decodeInPlace(_ input: ArraySlice<UInt8>, into boxes: inout [ArraySlice<UInt8>]) throws(ThreemaError) {
            var rest = input
            while !rest.isEmpty {
                if expected < 0 {
                    let take = min(2 - header.count, rest.count)
                    header += rest.prefix(take)
                    rest = rest.dropFirst(take)
                    guard header.count == 2 else { break }
                    let length = Int(header[0]) | Int(header[1]) << 8
                    guard length <= CSP.maximumFrameLength else { throw .csp(.frameTooLarge(length)) }
                    guard length >= CSP.minimumFrameLength else { throw .csp(.frameTooShort(length)) }
                    expected = length
                    if rest.count >= length {
                        // The whole box is here: no intermediate buffer.
                        boxes.append(rest.prefix(length))
                        rest = rest.dropFirst(length)
                        header = []
                        expected = -1
                        continue
                    }
                    body.reserveCapacity(length)
                }
                let take = min(expected - body.count, rest.count)
                body += rest.prefix(take)
                rest = rest.dropFirst(take)
                guard body.count == expected else { break }
                boxes.append(body[...])
                body = []
                header = []
                expected = -1
            }
        }
    }

    /// The established session: the key `X25519HSalsa20(TSK, TCK)` shared by both directions, the
    /// sending and receiving nonce sequences, and the receiving frame decoder. A value: every
    /// throwing method leaves it unchanged.
    public struct Transport: Sendable {
        let key: Box.SharedKey
        private(set) var sending: NonceSequence
        private(set) var receiving: NonceSequence
        private var decoder = FrameDecoder()

        init(key: Box.SharedKey, sending: NonceSequence, receiving: NonceSequence) {
            self.key = key
            self.sending = sending
            self.receiving = receiving
        }

        /// The next sequence number this side will send.
        public var nextSendingSequenceNumber: UInt64 { sending.next }
        /// The next sequence number this side expects.
        public var nextReceivingSequenceNumber: UInt64 { receiving.next }
        /// Bytes held for an incomplete incoming frame.
        public var bufferedByteCount: Int { decoder.bufferedByteCount }

        /// Seals a container (`type ‖ 3 reserved bytes ‖ data`) into a frame.
        ///
        /// - Throws: ``CSPFault/frameTooLarge(_:)`` when the box would exceed
        ///   ``CSP/maximumFrameLength``, ``CSPFault/sequenceNumberExhausted``.
        public mutating func seal(type: UInt8, data: [UInt8]) throws(ThreemaError) -> [UInt8] {
            let length = Box.tagByteCount + 4 + data.count
            guard length <= CSP.maximumFrameLength else { throw .csp(.frameTooLarge(length)) }
            // One buffer: length ‖ tag ‖ (type ‖ reserved ‖ data), sealed in place.
            let key = self.key.symmetricKey
            let sealed: Bool
            var frame: [UInt8] = []
            sealed = try sending.withCurrent { nonce in
                var ok = false
                frame = [UInt8](unsafeUninitializedCapacity: 2 + length) { buffer, count in
                    let b = UnsafeMutableRawPointer(buffer.baseAddress!)
                    b.storeBytes(of: UInt16(length).littleEndian, as: UInt16.self)
                    b.storeBytes(of: type, toByteOffset: 18, as: UInt8.self)
                    (b + 19).initializeMemory(as: UInt8.self, repeating: 0, count: 3)
                    data.withUnsafeBytes { if $0.count > 0 { (b + 22).copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
                    ok = (try? SecretBox.seal(inPlace: b + 18, count: length - Box.tagByteCount, tag: b + 2, using: key,
                                              nonce: nonce)) != nil
                    count = 2 + length
                }
                return ok
            }
            guard sealed else { throw .invalidArgument("box") }
            sending.advance()
            return frame
        }

        /// Seals a payload into a frame.
        public mutating func seal(_ payload: Payload) throws(ThreemaError) -> [UInt8] {
            try seal(type: payload.type, data: payload.data)
        }

        /// Decodes the frames `chunk` completes, opens each with the expected sequence number and
        /// parses its payload.
        ///
        /// - Throws: the ``FrameDecoder`` faults, ``CSPFault/authenticationFailed(_:)`` with
        ///   ``CSPBox/frame(sequenceNumber:)``, ``CSPFault/malformedPayload(type:)``; the transport
        ///   is unchanged then and no payload of the chunk is released.
        public mutating func receive<C: Collection<UInt8>>(_ chunk: C) throws(ThreemaError) -> [Payload] {
            try receiveAtomically(Array(chunk)[...], accepting: { _ in true })
        }

        /// The generic `receive` for an array (no generic dispatch, no copy of the chunk).
        public mutating func receive(_ chunk: [UInt8]) throws(ThreemaError) -> [Payload] {
            try receiveAtomically(chunk[...], accepting: { _ in true })
        }

        /// Decodes, opens and parses in place; on any failure (or a payload `accepting` refuses,
        /// ``CSPFault/unexpectedPayload(type:)``) the decoder and the receiving sequence number
        /// are put back as they were.
        mutating func receiveAtomically(_ chunk: ArraySlice<UInt8>,
                                        accepting: (Payload) -> Bool) throws(ThreemaError) -> [Payload] {
            let m = decoder.mark
            let savedReceiving = receiving
            let boxes = try decoder.decodeAtomically(chunk)
            var payloads: [Payload] = []
            do throws(ThreemaError) {
                for box in boxes {
                    let p = try open(box)
                    guard accepting(p) else { throw ThreemaError.csp(.unexpectedPayload(type: p.type)) }
                    payloads.append(p)
                }
            } catch {
                decoder.restore(m, completed: boxes)
                receiving = savedReceiving
                throw error
            }
            return payloads
        }

        /// Opens one frame's box with the next receiving sequence number.
        mutating func open(_ box: ArraySlice<UInt8>) throws(ThreemaError) -> Payload {
            guard box.count >= CSP.minimumFrameLength else {
                throw .csp(.authenticationFailed(.frame(sequenceNumber: receiving.next)))
            }
            // Verified and decrypted straight into the array that becomes the payload's data.
            let n = box.count - Box.tagByteCount
            let key = self.key.symmetricKey
            var opened = false
            var container = try receiving.withCurrent { nonce in
                [UInt8](unsafeUninitializedCapacity: n) { buffer, count in
                    box.withUnsafeBytes { b in
                        opened = (try? SecretBox.open(b.baseAddress! + Box.tagByteCount, count: n, tag: b.baseAddress!,
                                                      into: buffer.baseAddress!, using: key, nonce: nonce)) ?? false
                    }
                    count = opened ? n : 0
                }
            }
            guard opened else { throw .csp(.authenticationFailed(.frame(sequenceNumber: receiving.next))) }
            container.withUnsafeBytes { declassify($0.baseAddress!, $0.count) }   // authenticated: parsed
            let type = container[0]
            container.removeFirst(4)
            let payload: Payload
            do { payload = try Payload(type: type, data: container) } catch {
                container.secureWipe()
                throw error
            }
            // Echo and opaque payloads keep this array as their data; the parsed types copied what
            // they keep, so the decrypted container is wiped.
            switch payload {
            case .echoRequest, .echoResponse, .opaque: break
            default: container.secureWipe()
            }
            receiving.advance()
            return payload
        }
    }
}
