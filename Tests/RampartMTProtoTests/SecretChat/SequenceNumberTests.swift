// Secret-chat sequence numbers (Docs/MTProto.md §7.4) from both roles, and layer negotiation (§7.2).

import Testing
import RampartMTProto
import RampartTestSupport

private typealias Seq = SecretChat.SequenceNumbers<Int>

/// `count` outgoing wire numbers from `side`.
private func send(_ side: inout Seq, _ count: Int) throws -> [(inSeqNo: Int32, outSeqNo: Int32)] {
    try (0..<count).map { _ in try side.nextOutgoing() }
}

@Test func seqWireFormsByRole() throws {
    var a = Seq(role: .creator), b = Seq(role: .acceptor)
    let fromA = try send(&a, 3)
    #expect(fromA.map(\.outSeqNo) == [1, 3, 5] && fromA.map(\.inSeqNo) == [0, 0, 0])
    for (i, n) in fromA.enumerated() {
        let r = try b.receive(inSeqNo: n.inSeqNo, outSeqNo: n.outSeqNo, item: i)
        #expect(r.delivered == [i] && !r.isDuplicate && r.resendRequest == nil)
    }
    #expect(b.receivedCount == 3 && b.expectedOutSeqNo == 7)
    let fromB = try send(&b, 2)
    #expect(fromB.map(\.outSeqNo) == [0, 2] && fromB.map(\.inSeqNo) == [7, 7])  // 2·3 + 1
    for (i, n) in fromB.enumerated() {
        #expect(try a.receive(inSeqNo: n.inSeqNo, outSeqNo: n.outSeqNo, item: 10 + i).delivered == [10 + i])
    }
    #expect(a.peerReceivedCount == 3 && a.receivedCount == 2)
    // Numbers assigned at creation: a's next message acknowledges b's two.
    #expect(try a.nextOutgoing() == (inSeqNo: 4, outSeqNo: 7))
}

@Test func seqDuplicateIsDroppedWithoutChange() throws {
    for role in [SecretChat.SequenceRole.creator, .acceptor] {
        var peer = Seq(role: role == .creator ? .acceptor : .creator)
        var me = Seq(role: role)
        let n = try send(&peer, 2)
        _ = try me.receive(inSeqNo: n[0].inSeqNo, outSeqNo: n[0].outSeqNo, item: 0)
        let before = me
        let r = try me.receive(inSeqNo: n[0].inSeqNo, outSeqNo: n[0].outSeqNo, item: 99)
        #expect(r.isDuplicate && r.delivered.isEmpty && me == before)
        // A duplicate of a queued message is dropped too.
        let m = try send(&peer, 2)  // raw 2 and 3: 1 is missing
        _ = try me.receive(inSeqNo: m[1].inSeqNo, outSeqNo: m[1].outSeqNo, item: 3)
        let queued = me
        #expect(try me.receive(inSeqNo: m[1].inSeqNo, outSeqNo: m[1].outSeqNo, item: 3).isDuplicate)
        #expect(me == queued)
    }
}

@Test func seqGapQueuesAsksOnceAndDeliversInOrder() throws {
    for role in [SecretChat.SequenceRole.creator, .acceptor] {
        var peer = Seq(role: role == .creator ? .acceptor : .creator)
        var me = Seq(role: role)
        let n = try send(&peer, 4)  // raw 0...3
        let p = peer.ourOutParity
        #expect(try me.receive(inSeqNo: n[0].inSeqNo, outSeqNo: n[0].outSeqNo, item: 0).delivered == [0])
        // raw 3 arrives: raw 1 and 2 are missing. start = last good out + 2, end = received out − 2.
        let r3 = try me.receive(inSeqNo: n[3].inSeqNo, outSeqNo: n[3].outSeqNo, item: 3)
        #expect(r3.delivered.isEmpty && r3.resendRequest == .resend(startSeqNo: n[0].outSeqNo + 2, endSeqNo: n[3].outSeqNo - 2))
        #expect(r3.resendRequest == .resend(startSeqNo: 2 + p, endSeqNo: 4 + p))
        #expect(me.receivedCount == 1 && me.queuedCount == 1)
        // raw 2 fills part of the hole: queued, no second request.
        let r2 = try me.receive(inSeqNo: n[2].inSeqNo, outSeqNo: n[2].outSeqNo, item: 2)
        #expect(r2.delivered.isEmpty && r2.resendRequest == nil)
        // raw 1 closes it: 1, 2, 3 delivered in order.
        let r1 = try me.receive(inSeqNo: n[1].inSeqNo, outSeqNo: n[1].outSeqNo, item: 1)
        #expect(r1.delivered == [1, 2, 3] && me.receivedCount == 4 && me.queuedCount == 0)
    }
}

@Test func seqGapBeforeTheFirstMessageAndASecondHole() throws {
    var peer = Seq(role: .creator)
    var me = Seq(role: .acceptor)
    let n = try send(&peer, 6)  // outs 1, 3, 5, 7, 9, 11
    let r = try me.receive(inSeqNo: n[2].inSeqNo, outSeqNo: n[2].outSeqNo, item: 2)
    #expect(r.resendRequest == .resend(startSeqNo: 1, endSeqNo: 3))
    // raw 5 opens a new hole (raw 3 and 4) beyond the queued raw 2: one request for it.
    let r5 = try me.receive(inSeqNo: n[5].inSeqNo, outSeqNo: n[5].outSeqNo, item: 5)
    #expect(r5.resendRequest == .resend(startSeqNo: 7, endSeqNo: 9))
    for i in [4, 0, 3] { #expect(try me.receive(inSeqNo: n[i].inSeqNo, outSeqNo: n[i].outSeqNo, item: i).resendRequest == nil) }
    #expect(try me.receive(inSeqNo: n[1].inSeqNo, outSeqNo: n[1].outSeqNo, item: 1).delivered == [1, 2, 3, 4, 5])
}

@Test func seqWrongParityAborts() throws {
    for role in [SecretChat.SequenceRole.creator, .acceptor] {
        var me = Seq(role: role)
        _ = try me.nextOutgoing()
        let before = me
        let goodOut = me.peerOutParity, goodIn = me.peerInParity
        for (i, o) in [(goodIn, 1 - goodOut), (1 - goodIn, goodOut), (1 - goodIn, 1 - goodOut)] {
            #expect(throws: SecretChatError.protocolViolation("sequence number parity")) {
                try me.receive(inSeqNo: i, outSeqNo: o, item: 0)
            }
            // A mirrored message of our own (our parities) is refused the same way.
            #expect(throws: SecretChatError.self) { try me.receive(inSeqNo: me.ourInParity, outSeqNo: me.ourOutParity, item: 0) }
        }
        #expect(me == before)
    }
}

@Test func seqInSeqNoBounds() throws {
    var a = Seq(role: .creator), b = Seq(role: .acceptor)
    // Negative numbers.
    #expect(throws: SecretChatError.protocolViolation("negative sequence number")) { try b.receive(inSeqNo: -1, outSeqNo: 1, item: 0) }
    #expect(throws: SecretChatError.protocolViolation("negative sequence number")) { try b.receive(inSeqNo: 0, outSeqNo: -1, item: 0) }
    // b has sent nothing: a message from a claiming to have received one of b's (in raw 1) is refused.
    #expect(throws: SecretChatError.protocolViolation("in_seq_no beyond our messages")) { try b.receive(inSeqNo: 2, outSeqNo: 1, item: 0) }
    // in_seq_no may equal our sent count (last out + 1), not exceed it.
    _ = try send(&b, 2)
    #expect(try b.receive(inSeqNo: 4, outSeqNo: 1, item: 0).delivered == [0])
    #expect(throws: SecretChatError.protocolViolation("in_seq_no beyond our messages")) { try b.receive(inSeqNo: 6, outSeqNo: 3, item: 1) }
    // in_seq_no must not decrease.
    let before = b
    #expect(throws: SecretChatError.protocolViolation("in_seq_no decreased")) { try b.receive(inSeqNo: 2, outSeqNo: 3, item: 1) }
    #expect(b == before)
    // The creator's side: the acceptor's in_seq_no is odd.
    _ = try send(&a, 1)
    #expect(try a.receive(inSeqNo: 3, outSeqNo: 0, item: 0).delivered == [0])
    #expect(throws: SecretChatError.protocolViolation("in_seq_no decreased")) { try a.receive(inSeqNo: 1, outSeqNo: 2, item: 1) }
}

@Test func seqQueuedMessageWithDecreasingInSeqNoAbortsOnDelivery() throws {
    var me = Seq(role: .acceptor)
    _ = try send(&me, 3)
    // Queued raw 1 says the peer had seen 1 of ours; then raw 0 arrives saying 3: raw 1 would go backwards.
    _ = try me.receive(inSeqNo: 2, outSeqNo: 3, item: 1)
    let before = me
    #expect(throws: SecretChatError.protocolViolation("in_seq_no decreased in a queued message")) {
        try me.receive(inSeqNo: 6, outSeqNo: 1, item: 0)
    }
    #expect(me == before)
}

@Test func seqResendHonouredOnceAndChecked() throws {
    var a = Seq(role: .creator)
    _ = try send(&a, 5)  // our outs 1, 3, 5, 7, 9
    // In order, carrying Resend(3...7).
    let r = try a.receive(inSeqNo: 1, outSeqNo: 0, resend: (3, 7), item: 0)
    #expect(r.toResend == [3, 5, 7] && r.delivered == [0])
    // The same message again: a duplicate, not honoured again.
    let dup = try a.receive(inSeqNo: 1, outSeqNo: 0, resend: (3, 7), item: 0)
    #expect(dup.isDuplicate && dup.toResend.isEmpty)
    // In a gap: honoured on arrival, queued; its later delivery does not honour it again.
    let g = try a.receive(inSeqNo: 1, outSeqNo: 4, resend: (1, 1), item: 2)
    #expect(g.toResend == [1] && g.delivered.isEmpty && g.resendRequest == .resend(startSeqNo: 2, endSeqNo: 2))
    let fill = try a.receive(inSeqNo: 1, outSeqNo: 2, item: 1)
    #expect(fill.delivered == [1, 2] && fill.toResend.isEmpty)
    // Unsatisfiable: beyond what we sent, our parity wrong, reversed, negative. State unchanged.
    let before = a
    for (s, e) in [(1, 11), (2, 4), (7, 3), (-1, 3), (1, Int32.max)] as [(Int32, Int32)] {
        #expect(throws: SecretChatError.self) { try a.receive(inSeqNo: 1, outSeqNo: 6, resend: (s, e), item: 3) }
        #expect(throws: SecretChatError.self) { try a.resendList(startSeqNo: s, endSeqNo: e) }
    }
    #expect(a == before)
    // The acceptor's outs are even.
    var b = Seq(role: .acceptor)
    _ = try send(&b, 3)
    #expect(try b.resendList(startSeqNo: 0, endSeqNo: 4) == [0, 2, 4])
    #expect(throws: SecretChatError.self) { try b.resendList(startSeqNo: 1, endSeqNo: 3) }
}

@Test func seqNumbersNearTheIntLimit() throws {
    // A raw out_seq_no of 2^30 - 1 would overflow our next in_seq_no once accepted: refused.
    var me = Seq(role: .acceptor)
    #expect(throws: SecretChatError.protocolViolation("out_seq_no exhausted")) { try me.receive(inSeqNo: 0, outSeqNo: Int32.max, item: 0) }
    var c = Seq(role: .creator)
    #expect(try c.receive(inSeqNo: 1, outSeqNo: Int32.max - 3, item: 0).resendRequest == .resend(startSeqNo: 0, endSeqNo: Int32.max - 5))
}

@Test func seqQueueIsBounded() throws {
    var me = Seq(role: .acceptor, maximumQueued: 2)
    _ = try me.receive(inSeqNo: 0, outSeqNo: 5, item: 2)
    _ = try me.receive(inSeqNo: 0, outSeqNo: 7, item: 3)
    let before = me
    #expect(throws: SecretChatError.protocolViolation("too many messages in gaps")) { try me.receive(inSeqNo: 0, outSeqNo: 9, item: 4) }
    #expect(me == before)
    // The in-order message still gets through and drains the queue.
    _ = try me.receive(inSeqNo: 0, outSeqNo: 1, item: 0)
    #expect(try me.receive(inSeqNo: 0, outSeqNo: 3, item: 1).delivered == [1, 2, 3])
}

@Test func seqReceivesDecodedLayers() throws {
    var a = SecretChat.SequenceNumbers<SecretChat.DecryptedMessageLayer>(role: .creator)
    _ = try a.nextOutgoing()
    _ = try a.nextOutgoing()
    let l = try SecretChat.DecryptedMessageLayer(randomBytes: [UInt8](repeating: 1, count: 15), layer: 144, inSeqNo: 1,
                                                 outSeqNo: 0, message: .service(randomID: 1, action: .resend(startSeqNo: 1, endSeqNo: 3)))
    let r = try a.receive(l)
    #expect(r.delivered == [l] && r.toResend == [1, 3])
}

@Test func seqRandomStreamsNeverTrapAndThrowsChangeNothing() {
    var rng = SplitMix64(seed: 0x5e9)
    for _ in 0..<200 {
        var me = Seq(role: rng.next() & 1 == 0 ? .creator : .acceptor, maximumQueued: 8)
        for step in 0..<60 {
            if rng.next() % 4 == 0 { _ = try? me.nextOutgoing() }
            let inS = Int32(truncatingIfNeeded: rng.next() % 24) - 2
            let outS = Int32(truncatingIfNeeded: rng.next() % 40) - 2
            let resend: (Int32, Int32)? = rng.next() % 5 == 0 ? (Int32(rng.next() % 12), Int32(rng.next() % 12)) : nil
            let before = me
            do {
                let r = try me.receive(inSeqNo: inS, outSeqNo: outS, resend: resend.map { (startSeqNo: $0.0, endSeqNo: $0.1) }, item: step)
                #expect(me.receivedCount >= before.receivedCount && me.peerReceivedCount >= before.peerReceivedCount)
                #expect(r.delivered.count == Int(me.receivedCount - before.receivedCount))
                if r.isDuplicate { #expect(me == before) }
            } catch {
                #expect(me == before)
            }
        }
    }
}

// MARK: Layers

@Test func layerConstants() {
    #expect(SecretChat.Layer.mtproto2 == 73 && SecretChat.Layer.newEntities == 101)
    #expect(SecretChat.Layer.deleteMessagesOnClose == 123 && SecretChat.Layer.supportBigFiles == 143)
    #expect(SecretChat.Layer.current == 144 && SecretChat.Layer.initialRemote == 46)
}

@Test func layerNegotiationRisesOnly() throws {
    var n = SecretChat.LayerNegotiation()
    #expect(n.local == 144 && n.remote == 46 && n.effective == 46 && n.allowsV1)
    #expect(!n.observe(45) && n.remote == 46)
    func layer(_ l: Int32, _ action: SecretChat.DecryptedMessageAction = .noop) throws -> SecretChat.DecryptedMessageLayer {
        try .init(randomBytes: [UInt8](repeating: 0, count: 15), layer: l, inSeqNo: 0, outSeqNo: 0,
                  message: .service(randomID: 1, action: action))
    }
    #expect(n.observe(try layer(72)) && n.allowsV1)
    #expect(n.observe(try layer(73)) && !n.allowsV1 && n.effective == 73)
    // NotifyLayer inside an older layer object raises to the announced layer.
    #expect(n.observe(try layer(73, .notifyLayer(144))) && n.remote == 144 && !n.remoteIsNewer)
    #expect(!n.observe(try layer(100, .notifyLayer(120))) && n.remote == 144)
    #expect(n.observe(200) && n.remoteIsNewer && n.effective == 144 && !n.allowsV1)
}
