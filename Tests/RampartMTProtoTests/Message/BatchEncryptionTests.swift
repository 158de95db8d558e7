// Batch encryption (EncryptedMessage.encrypt(batch:), Session.prepare/seal; Docs/MTProto.md §1.8): the same
// packets as encrypting each message alone, on the multi-buffer path and on the portable one, and
// every packet accepted by the receiver's checks.

import Testing
@_spi(Testing) import Rampart
@testable import RampartMTProto
import RampartTestSupport

/// A generator that counts its draws (to check that a refused batch draws nothing).
private struct CountingRNG: RandomNumberGenerator {
    var inner = SplitMix64(seed: 1)
    var draws = 0
    mutating func next() -> UInt64 { draws += 1; return inner.next() }
}

/// `count` items over three keys, both directions, bodies of 0 to a few KiB (one of 16 KiB).
private func items(_ count: Int, padding: PaddingPolicy, seed: UInt64 = 5) -> [EncryptedMessage.BatchItem] {
    let keys = [msgRandomKey(seed), msgRandomKey(seed + 1), msgRandomKey(seed + 2)]
    var g = SplitMix64(seed: seed)
    return (0..<count).map { i in
        let length = i == 7 ? 16384 : 4 * Int(g.next() % 700)
        // msg_id parity as the receiver checks it: ≡ 0 (mod 4) from a client, odd from a server.
        let direction: MTProtoDirection = i % 2 == 0 ? .clientToServer : .serverToClient
        let id = Int64(bitPattern: g.next() & ~3) | (direction == .clientToServer ? 0 : 1)
        let header = MessageHeader(salt: Int64(bitPattern: g.next()), sessionId: Int64(bitPattern: g.next()), msgId: id, seqNo: Int32(i))
        return EncryptedMessage.BatchItem(body: g.bytes(length), header: header, authKey: keys[i % 3], direction: direction,
                                          padding: padding)
    }
}

@Suite struct BatchEncryptionTests {
    /// With minimal padding a batch draws the same bytes from the generator as one-by-one encryption
    /// (no padding lengths are drawn), so the packets must be identical byte for byte. 37 items: more
    /// than two chunks of the lane scheduler, lanes refilled mid-message.
    @Test(arguments: [Backend.hardware, Backend.portable])
    func batchEqualsOneByOne(backend: Backend) throws {
        let batch = items(37, padding: .minimal)
        var g1 = SplitMix64(seed: 42), g2 = SplitMix64(seed: 42)
        let sealed = try EncryptedMessage.encrypt(batch: batch, backend: backend, using: &g1)
        #expect(sealed.count == batch.count)
        for (i, item) in batch.enumerated() {
            let one = try EncryptedMessage.encrypt(body: item.body, header: item.header, authKey: item.authKey,
                                                   direction: item.direction, padding: .minimal, using: &g2)
            #expect(sealed[i].packet == one.packet, "item \(i), \(item.body.count) bytes")
            #expect(sealed[i].quickAck == one.quickAck, "quick ack of item \(i)")
        }
        #expect(g1.state == g2.state)
    }

    /// Random and bucket padding: every packet passes the receiver's checks under its own key and
    /// direction, with its header, body and quick-ack value.
    @Test(arguments: [PaddingPolicy.random, .buckets])
    func everyPacketDecrypts(padding: PaddingPolicy) throws {
        let batch = items(21, padding: padding, seed: 11)
        var g = SplitMix64(seed: 3)
        let sealed = try EncryptedMessage.encrypt(batch: batch, using: &g)
        for (i, item) in batch.enumerated() {
            var window = ReplayWindow()
            let m = try EncryptedMessage.decrypt(sealed[i].packet, authKey: item.authKey, direction: item.direction,
                                                 sessionId: item.header.sessionId, replayWindow: &window)
            #expect(m.body == item.body && m.header == item.header, "item \(i)")
            #expect(m.quickAck == sealed[i].quickAck)
            // Under another of the batch's keys the packet is refused.
            var other = ReplayWindow()
            #expect(throws: MTProtoError.rejectedMessage) {
                try EncryptedMessage.decrypt(sealed[i].packet, authKey: batch[i % 3 == 0 ? 1 : 0].authKey,
                                             direction: item.direction, sessionId: nil, replayWindow: &other)
            }
        }
    }

    /// A bad body anywhere refuses the whole batch before anything is drawn or encrypted.
    @Test func badBodyRefusesTheBatch() throws {
        var batch = items(9, padding: .random)
        batch[6].body = [1, 2, 3, 4, 5, 6]
        var g = CountingRNG()
        #expect(throws: MTProtoError.self) { try EncryptedMessage.encrypt(batch: batch, using: &g) }
        #expect(g.draws == 0)
        #expect(try EncryptedMessage.encrypt(batch: [], using: &g).isEmpty)
    }

    /// Session.prepare numbers like Session.encrypt (msg_ids, seq_nos, salts), and Session.seal's
    /// packets are accepted by the peer session, from several sessions at once.
    @Test func sessionsPrepareAndSealTogether() throws {
        let now = 1_705_754_877.0
        var clients = (0..<5).map { i in
            Session(client: msgRandomKey(UInt64(20 + i)), sessionId: Int64(100 + i), salt: 77, timeOffset: 0, padding: .random)
        }
        var servers = (0..<5).map { i in Session(server: msgRandomKey(UInt64(20 + i)), salt: 77) }
        var g = SplitMix64(seed: 8)
        var prepared: [PreparedMessage] = []
        var reference = clients
        for round in 0..<3 {
            for i in 0..<5 {
                let body = g.bytes(4 * (round * 37 + i))
                let p = try clients[i].prepare(body, contentRelated: true, now: now + Double(round), using: &g)
                var g2 = g
                let alone = try reference[i].encrypt(body, contentRelated: true, now: now + Double(round), using: &g2)
                #expect(p.msgId == alone.msgId && p.seqNo == alone.seqNo, "session \(i), round \(round)")
                prepared.append(p)
            }
        }
        #expect(clients.map(\.seqNo) == reference.map(\.seqNo))
        let out = Session.seal(prepared, using: &g)
        #expect(out.count == prepared.count)
        for (k, o) in out.enumerated() {
            let i = k % 5
            let got = try servers[i].decrypt(o.packet, now: now + 3)
            #expect(got.count == 1 && got[0].msgId == o.msgId && got[0].body == prepared[k].item.body)
        }
        // A bad body changes nothing.
        let before = clients[0].seqNo
        #expect(throws: MTProtoError.self) { try clients[0].prepare([1, 2], contentRelated: true, now: now, using: &g) }
        #expect(clients[0].seqNo == before)
    }
}
