// TL targets: the reader's primitives, the service messages and containers, the handshake's TL
// objects and the unencrypted message envelope.
//
// Properties: every read either consumes exactly the bytes of its value (which the writer re-creates
// byte for byte: the reader is strict, one encoding per value) or throws with the position unchanged;
// every object a decoder accepts serializes back to the bytes it came from.

import Rampart
import RampartMTProto
import RampartTestSupport

/// Constructors worth expecting (the fuzzer also learns them from the comparisons).
let tlConstructors: [UInt32] = [TL.vector, TL.boolTrue, TL.boolFalse, ServiceConstructor.msgContainer, ServiceConstructor.ping,
                                HandshakeConstructor.resPQ, HandshakeConstructor.reqPQMulti, 0]
let tlLengthLimits = [0, 3, 253, 254, 512, 1 << 24]

let tlReaderTarget = FuzzTarget(
    name: "tl-reader",
    summary: "TLReader: a program of reads over arbitrary bytes; each read consumes exactly its canonical encoding or throws with the position unchanged; writer→reader round trip",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let ops = input.bytes(Int(input.byte() % 24))
        if input.byte() & 1 == 1 {
            writerRoundTrip(ops, &input)
            return
        }
        let buffer = input.rest()
        var r = TLReader(buffer)
        for op in ops {
            let before = r.position
            let param = Int(op >> 4)
            func consumed() -> [UInt8] { Array(buffer[before..<r.position]) }
            func le(_ n: Int) -> UInt64 {
                var v: UInt64 = 0
                for k in 0..<n { v |= UInt64(buffer[before + k]) << (8 * UInt64(k)) }
                return v
            }
            do throws(MTProtoError) {
                switch op & 15 {
                case 0:
                    let v = try r.uint32()
                    FuzzCheck.require(r.position == before + 4 && UInt64(v) == le(4), "uint32")
                case 1:
                    let v = try r.int64()
                    FuzzCheck.require(r.position == before + 8 && UInt64(bitPattern: v) == le(8), "int64")
                case 2:
                    let v = try r.peekConstructor()
                    FuzzCheck.require(r.position == before && UInt64(v) == le(4), "peekConstructor moved or misread")
                case 3:
                    try r.expect(tlConstructors[param % tlConstructors.count])
                    FuzzCheck.require(r.position == before + 4 && UInt32(le(4)) == tlConstructors[param % tlConstructors.count], "expect")
                case 4:
                    let count = param * 5 - 10  // negative counts included
                    let v = try r.raw(count)
                    FuzzCheck.require(count >= 0 && v == consumed() && v.count == count, "raw(\(count))")
                case 5:
                    let v = try r.int256()
                    FuzzCheck.require(v.count == 32 && v == consumed(), "int256")
                case 6:
                    let v = try r.bool()
                    FuzzCheck.require(r.position == before + 4 && UInt32(le(4)) == (v ? TL.boolTrue : TL.boolFalse), "bool")
                case 7:
                    let limit = tlLengthLimits[param % tlLengthLimits.count]
                    let v = try r.tlBytes(maxLength: limit)
                    var w = TLWriter()
                    w.tlBytes(v)
                    FuzzCheck.require(v.count <= limit && w.bytes == consumed(), "tlBytes is not the canonical encoding of its value")
                case 8:
                    let limit = tlLengthLimits[param % tlLengthLimits.count]
                    let s = try r.string(maxLength: limit)
                    var w = TLWriter()
                    w.string(s)
                    FuzzCheck.require(w.bytes == consumed(), "string does not re-encode to its bytes")
                case 9:
                    let v = try r.bigInteger(maxBytes: tlLengthLimits[param % tlLengthLimits.count])
                    var copy = TLReader(buffer)
                    try copy.skip(before)
                    let raw = try copy.tlBytes()
                    FuzzCheck.require(copy.position == r.position && v == BigUInt(bigEndian: raw), "bigInteger")
                    FuzzCheck.require(v.bigEndianBytes() == Array(raw.drop(while: { $0 == 0 })), "bigInteger bytes")
                case 10:
                    let boxed = param & 1 == 1
                    let max = [0, 1, 10, 1000][(param >> 1) & 3]
                    let minSize = [0, 1, 4, 8][(param >> 1) & 3]
                    let n = try r.vectorCount(boxed: boxed, max: max, minElementSize: minSize)
                    FuzzCheck.require(n >= 0 && n <= max && r.position == before + (boxed ? 8 : 4), "vectorCount")
                    FuzzCheck.require(n * Swift.max(minSize, 1) <= r.remaining, "vectorCount \(n) does not fit the remaining bytes")
                case 11:
                    let v = try r.vectorOfInt64(max: [0, 3, 8192][param % 3])
                    var w = TLWriter()
                    w.vectorOfInt64(v)
                    FuzzCheck.require(w.bytes == consumed(), "vectorOfInt64 does not re-encode")
                case 12:
                    let count = param * 3 - 4
                    try r.skip(count)
                    FuzzCheck.require(count >= 0 && r.position == before + count, "skip(\(count))")
                case 13:
                    try r.finish()
                    FuzzCheck.require(r.isAtEnd && r.remaining == 0, "finish() passed with bytes left")
                case 14:
                    let v = try r.int128()
                    FuzzCheck.require(v == consumed() && v.count == 16, "int128")
                default:
                    let v = try r.int32()
                    FuzzCheck.require(UInt64(UInt32(bitPattern: v)) == le(4), "int32")
                }
            } catch {
                FuzzCheck.require(r.position == before, "a throwing read (op \(op & 15), \(error)) moved the position")
                if op & 15 == 13 { FuzzCheck.require(!r.isAtEnd, "finish() threw at the end") }
            }
            FuzzCheck.require(r.remaining == buffer.count - r.position && r.rest.count == r.remaining, "remaining")
        }
    },
    seeds: {
        var w = TLWriter()
        w.constructor(TL.vector); w.int32(2); w.int64(5); w.int64(-1)
        w.tlBytes([UInt8](repeating: 1, count: 300)); w.string("héllo"); w.bool(true); w.bigInteger(BigUInt(0x1234_5678_9ABC))
        let reads: [UInt8] = [0xB2, 0x0B | 0x20, 0x07 | 0x50, 0x08 | 0x50, 0x06, 0x09 | 0x20, 0x0D]
        var s = SeedWriter()
        s.byte(UInt8(reads.count)); s.raw(reads); s.byte(0); s.raw(w.bytes)
        var t = SeedWriter()
        t.byte(5); t.raw([0, 7, 7 | 0x20, 10, 15]); t.byte(1); t.raw([UInt8](repeating: 0x41, count: 40))
        return [s.bytes, t.bytes]
    })

/// The writer's values read back through the reader.
private func writerRoundTrip(_ ops: [UInt8], _ input: inout FuzzInput) {
    var w = TLWriter()
    enum V: Equatable { case u32(UInt32), i64(Int64), bytes([UInt8]), string(String), bool(Bool), vec([Int64]), big(BigUInt) }
    var values: [V] = []
    for op in ops {
        switch op % 7 {
        case 0: let v = input.u32(); w.uint32(v); values.append(.u32(v))
        case 1: let v = Int64(bitPattern: input.u64()); w.int64(v); values.append(.i64(v))
        case 2:
            let b = input.bytes(Int(input.u16() % 700))
            w.tlBytes(b); values.append(.bytes(b))
        case 3:
            let s = String(decoding: input.bytes(Int(input.byte())), as: UTF8.self)
            w.string(s); values.append(.string(s))
        case 4: let v = input.bool(); w.bool(v); values.append(.bool(v))
        case 5:
            let v = (0..<Int(input.byte() % 9)).map { _ in Int64(bitPattern: input.u64()) }
            w.vectorOfInt64(v); values.append(.vec(v))
        default:
            let v = BigUInt(bigEndian: input.bytes(Int(input.byte() % 80)))
            w.bigInteger(v); values.append(.big(v))
        }
    }
    FuzzCheck.require(w.bytes.count % 4 == 0, "TL values are not 4-byte aligned")
    var r = TLReader(w.bytes)
    for v in values {
        let got: V?
        switch v {
        case .u32: got = (try? r.uint32()).map { .u32($0) }
        case .i64: got = (try? r.int64()).map { .i64($0) }
        case .bytes: got = (try? r.tlBytes()).map { .bytes($0) }
        case .string: got = (try? r.string()).map { .string($0) }
        case .bool: got = (try? r.bool()).map { .bool($0) }
        case .vec: got = (try? r.vectorOfInt64(max: 8192)).map { .vec($0) }
        case .big: got = (try? r.bigInteger()).map { .big($0) }
        }
        FuzzCheck.require(got == v, "TL writer→reader round trip: wrote \(v), read \(String(describing: got))")
    }
    FuzzCheck.require(r.isAtEnd, "bytes left after reading back every value")
}

// MARK: - service messages

let serviceMessageTarget = FuzzTarget(
    name: "service-message",
    summary: "ServiceMessage(decoding:) and MessageContainer.decode on arbitrary bodies: accepted bodies re-encode byte for byte; container rules hold",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let containerId = flags & 1 == 1 ? Int64(bitPattern: input.u64()) : nil
        let body = input.rest()
        if let m = try? ServiceMessage(decoding: body) {
            FuzzCheck.require(m.encoded() == body, "service message \(m) does not re-encode to its body")
            FuzzStats.note("service-message: decoded")
            _ = m.isContentRelated
            if case .unknown(let c, let b) = m {
                FuzzCheck.require(b == body && UInt64(c) == UInt64(body[0]) | UInt64(body[1]) << 8 | UInt64(body[2]) << 16 | UInt64(body[3]) << 24,
                                  "unknown constructor")
            }
            if case .msgsAck(let ids) = m { FuzzCheck.require(ids.count <= ServiceMessage.maxAckIds, "too many acks") }
        }
        do throws(MTProtoError) {
            let messages = try MessageContainer.decode(body, containerMsgId: containerId)
            FuzzCheck.require(MessageContainer.encode(messages) == body, "container does not re-encode")
            FuzzStats.note("container: decoded")
            FuzzCheck.require(messages.count <= MessageContainer.maxMessages, "container with \(messages.count) messages")
            for c in messages {
                FuzzCheck.require(c.body.count >= 4 && c.body.count % 4 == 0, "inner body length \(c.body.count)")
                FuzzCheck.require(containerId.map { c.msgId < $0 } ?? true, "inner msg_id not below the container's")
                FuzzCheck.require(Array(c.body.prefix(4)) != [0xDC, 0xF8, 0xF1, 0x73], "nested container accepted")
            }
        } catch {
            // Refusals are typed (MTProtoError); nothing more is promised.
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        let samples: [ServiceMessage] = [
            .ping(pingId: 7), .pong(msgId: 8, pingId: 7), .msgsAck([1, 2, 3]), .rpcError(RPCError(code: 400, message: "BAD")),
            .futureSalts(reqMsgId: 4, now: 5, salts: [FutureSalt(validSince: 1, validUntil: 2, salt: 3)]),
            .newSessionCreated(firstMsgId: 1, uniqueId: 2, serverSalt: 3), .gzipPacked([1, 2, 3, 4, 5]),
            .msgsStateInfo(reqMsgId: 1, info: [1, 2]), .rpcResult(reqMsgId: 9, result: [1, 2, 3, 4]),
            .badServerSalt(badMsgId: 1, badMsgSeqNo: 2, errorCode: 48, newServerSalt: 4),
        ]
        for m in samples { out.append([0] + m.encoded()) }
        let container = MessageContainer.encode([ContainerMessage(msgId: 4, seqNo: 1, body: ServiceMessage.ping(pingId: 1).encoded()),
                                                 ContainerMessage(msgId: 8, seqNo: 2, body: ServiceMessage.msgsAck([4]).encoded())])
        var w = SeedWriter()
        w.byte(1); w.u64(100); w.raw(container)
        out.append(w.bytes)
        return out
    })

// MARK: - handshake TL

let handshakeTLTarget = FuzzTarget(
    name: "handshake-tl",
    summary: "the handshake's TL objects (req_pq … dh_gen_*, inner data) parsed strictly: accepted bytes re-serialize exactly (a client message may carry TDLib's handshake padding after its object); decryptAndVerify of IGE payloads",
    maxLength: 2048,
    run: { data in
        var input = FuzzInput(data)
        let which = input.byte()
        let body = input.rest()
        func prefixOK(_ serialized: [UInt8], _ r: TLReader) {
            FuzzCheck.require(serialized == Array(body[0..<r.position]), "inner data does not re-serialize to the bytes read")
            FuzzStats.note("handshake-tl: inner data parsed")
        }
        switch which % 11 {
        case 0: if let v = try? ReqPQ(parsing: body) { FuzzCheck.require(isPaddedForm(v.serialized, body), "req_pq round trip") }
        case 1: if let v = try? ResPQ(parsing: body) { FuzzCheck.require(v.serialized == body, "resPQ round trip") }
        case 2: if let v = try? ReqDHParams(parsing: body) { FuzzCheck.require(isPaddedForm(v.serialized, body), "req_DH_params round trip") }
        case 3: if let v = try? ServerDHParams(parsing: body) { FuzzCheck.require(v.serialized == body, "server_DH_params round trip") }
        case 4: if let v = try? SetClientDHParams(parsing: body) {
            FuzzCheck.require(isPaddedForm(v.serialized, body), "set_client_DH_params round trip")
        }
        case 5: if let v = try? DHGenAnswer(parsing: body) { FuzzCheck.require(v.serialized == body, "dh_gen round trip") }
        case 6:
            var r = TLReader(body)
            if let v = try? PQInnerData(reading: &r) { prefixOK(v.serialized, r) }
        case 7:
            var r = TLReader(body)
            if let v = try? ServerDHInnerData(reading: &r) { prefixOK(v.serialized, r) }
        case 8:
            var r = TLReader(body)
            if let v = try? ClientDHInnerData(reading: &r) { prefixOK(v.serialized, r) }
        default:
            // decryptAndVerify: the payload (input) hashed, padded and IGE-encrypted under a fixed key,
            // optionally corrupted; it must verify iff untouched and parse to the same object.
            let key = [UInt8](repeating: 0x11, count: 32), iv = [UInt8](repeating: 0x22, count: 32)
            var rng = SplitMix64(seed: UInt64(which))
            guard let enc = try? HandshakeCrypto.hashAndEncrypt(body, key: key, iv: iv, using: &rng) else {
                FuzzCheck.fail("hashAndEncrypt refused a payload")
            }
            let flip = which & 0x80 != 0
            var wire = enc
            if flip { wire[Int(which & 0x3F) % wire.count] ^= 0x01 }
            let parsed = try? HandshakeCrypto.decryptAndVerify(wire, key: key, iv: iv) { (r: inout TLReader) throws(MTProtoError) in
                try ServerDHInnerData(reading: &r)
            }
            var r = TLReader(body)
            let direct = try? ServerDHInnerData(reading: &r)
            if flip {
                FuzzCheck.require(parsed == nil, "a corrupted encrypted payload verified")
            } else {
                // The hash covers the whole payload, so it verifies iff the object fills the payload.
                let expected = r.position == body.count ? direct : nil
                FuzzCheck.require(parsed == expected, "decryptAndVerify disagrees with parsing the payload")
            }
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        let n16 = [UInt8](repeating: 1, count: 16), n32 = [UInt8](repeating: 2, count: 32)
        out.append([0] + ReqPQ(nonce: n16).serialized)
        out.append([1] + ResPQ(nonce: n16, serverNonce: n16, pq: [0x17, 0xED, 0x48, 0x94, 0x1A, 0x08, 0xF9, 0x81], fingerprints: [1, 2]).serialized)
        out.append([2] + ReqDHParams(nonce: n16, serverNonce: n16, p: [1, 2, 3, 4], q: [5, 6, 7, 8], fingerprint: 9,
                                     encryptedData: [UInt8](repeating: 3, count: 256)).serialized)
        out.append([3] + ServerDHParams.ok(nonce: n16, serverNonce: n16, encryptedAnswer: [UInt8](repeating: 4, count: 64)).serialized)
        out.append([4] + SetClientDHParams(nonce: n16, serverNonce: n16, encryptedData: [UInt8](repeating: 5, count: 32)).serialized)
        out.append([5] + DHGenAnswer(kind: .ok, nonce: n16, serverNonce: n16, newNonceHash: n16).serialized)
        out.append([6] + PQInnerData(pq: [1, 2], p: [1], q: [2], nonce: n16, serverNonce: n16, newNonce: n32,
                                     kind: .temporaryDC(2, expiresIn: 60)).serialized + [0, 0])
        let inner = ServerDHInnerData(nonce: n16, serverNonce: n16, g: 3, dhPrime: DiffieHellman.telegramPrime.bigEndianBytes(),
                                      gA: [UInt8](repeating: 7, count: 256), serverTime: 1_700_000_000).serialized
        out.append([7] + inner)
        out.append([8] + ClientDHInnerData(nonce: n16, serverNonce: n16, retryID: 0, gB: [UInt8](repeating: 8, count: 256)).serialized)
        out.append([9] + inner)
        out.append([9 | 0x80] + inner)
        return out
    })

// MARK: - unencrypted messages

let unencryptedMessageTarget = FuzzTarget(
    name: "unencrypted-message",
    summary: "UnencryptedMessage.decode (strict and with transport junk): accepts exactly the well-formed packets, which re-encode byte for byte",
    maxLength: 2048,
    run: { data in
        var input = FuzzInput(data)
        let allowTrailing = input.bool()
        let packet = input.rest()
        // The documented rule, evaluated independently.
        var expected = packet.count >= 20 && packet[0..<8].allSatisfy { $0 == 0 }
        var n = 0
        if expected {
            n = Int(Int32(bitPattern: UInt32(packet[16]) | UInt32(packet[17]) << 8 | UInt32(packet[18]) << 16 | UInt32(packet[19]) << 24))
            let rest = packet.count - 20
            expected = n >= 0 && n % 4 == 0 && n <= EncryptedMessage.maxBodyLength && (allowTrailing ? n <= rest : n == rest)
        }
        do throws(MTProtoError) {
            let m = try UnencryptedMessage.decode(packet, allowTrailingBytes: allowTrailing)
            FuzzCheck.require(expected, "an ill-formed unencrypted message was accepted")
            FuzzStats.note("unencrypted: accepted")
            let again = UnencryptedMessage.encode(msgId: m.msgId, body: m.body)
            FuzzCheck.require(again == Array(packet[0..<(20 + n)]), "unencrypted message does not re-encode")
        } catch {
            FuzzCheck.require(!expected, "a well-formed unencrypted message was refused: \(error)")
            guard case .invalidMessage = error else { FuzzCheck.fail("unexpected error \(error)") }
        }
    },
    seeds: {
        [[0] + UnencryptedMessage.encode(msgId: 0x51E5_7AC4_0000_0004, body: ReqPQ(nonce: [UInt8](repeating: 1, count: 16)).serialized),
         [1] + UnencryptedMessage.encode(msgId: 5, body: [1, 2, 3, 4, 5, 6, 7, 8]) + [9, 9, 9]]
    })

let tlTargets: [FuzzTarget] = [tlReaderTarget, serviceMessageTarget, handshakeTLTarget, unencryptedMessageTarget]

/// A client handshake message accepted from `body` re-encodes to `body` itself, or to its prefix when the
/// rest is TDLib's handshake padding (fewer than 256 bytes, the whole a multiple of 16).
private func isPaddedForm(_ encoded: [UInt8], _ body: [UInt8]) -> Bool {
    encoded == body || (body.starts(with: encoded) && body.count % 16 == 0 && body.count - encoded.count < 256)
}
