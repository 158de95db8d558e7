// Group calls (Docs/Threema.md §10): call IDs, key derivations, handshake messages, participant
// boxes and media frames.
//
// Values from the research digest's threema_vectors.json (also in Vectors/threema/group_call.json):
// * "group_call_id__threema-android CallIdTest.kt", "group_call_id__threema-ios …CallIDTests.swift"
//   (published by Threema);
// * "group_call_self_computed" (self-computed from the protocol text, NOT published).
// Vectors/threema/group_call.json holds the same values plus cases computed by
// Vectors/generate_group_call.py with hashlib, cryptography (OpenSSL) and PyNaCl.

import Foundation
import Rampart
import RampartReference
import RampartTestSupport
import Testing
@_spi(Testing) @testable import RampartThreema

private func key(_ hex: String) -> SymmetricKey { SymmetricKey(data: hexBytes(hex)) }
private func bytes(_ k: SymmetricKey) -> [UInt8] { k.withUnsafeBytes { Array($0) } }
/// The error `body` throws (nil when it returns; a non-Threema error fails the comparison).
private func gcError(_ body: () throws -> Void) -> ThreemaError? {
    do { try body() } catch { return (error as? ThreemaError) ?? .invalidArgument("not a ThreemaError: \(error)") }
    return nil
}

private let zeroGCK = key(String(repeating: "00", count: 32))
private let pcmk1111 = key(String(repeating: "11", count: 32))

// MARK: - Published and self-computed values

@Test func groupCallPublishedCallIDs() throws {
    let android = GroupCall.Start(protocolVersion: 1, gck: zeroGCK, sfuBaseURL: "abcdef")
    #expect(hexString(try android.callID(creator: try ThreemaID("ABCD1234"), groupID: hexBytes("0102030405060708")))
            == "198bb21c1254116a5b420e4744ad5681a955fbbfbab2cdc2a83fbf1751eb8ae0")
    let ios = GroupCall.Start(protocolVersion: 0, gck: key(String(repeating: "01", count: 32)), sfuBaseURL: "sfu.threema.test")
    #expect(hexString(try ios.callID(creator: try ThreemaID("ECHOECHO"), groupID: [UInt8](repeating: 0, count: 8)))
            == "3b922298c2ad04a5fbef3dfa8270059ee8552789f7194aacb65a3c0e70f79607")
    // The call ID depends on every input.
    let other = GroupCall.Start(protocolVersion: 1, gck: zeroGCK, sfuBaseURL: "abcdeg")
    #expect(try other.callID(creator: try ThreemaID("ABCD1234"), groupID: hexBytes("0102030405060708"))
            != (try android.callID(creator: try ThreemaID("ABCD1234"), groupID: hexBytes("0102030405060708"))))
}

@Test func groupCallSelfComputedKeys() throws {
    let keys = try GroupCall.Keys(gck: zeroGCK)
    #expect(hexString(bytes(keys.keyHash)) == "5eb3cb2cdfd23199a5574e44d4bf5aa8f1f46c012e6fcd64af08dbae900b8ada")
    #expect(hexString(bytes(keys.handshakeKey)) == "603b1358c7bcd1f8b9d27c812745b26b761c4c387ec1a032cbc086f12138058c")
    #expect(hexString(bytes(keys.stateKey)) == "46c04c0589cffd9d5ddaf8087f1142f40587af3bc3ce5eefe4474e7636fbc9f0")
    let mk = try GroupCall.MediaKey(epoch: 0, ratchetCounter: 0, pcmk: pcmk1111)
    let r1 = try mk.ratcheted()
    #expect(r1.ratchetCounter == 1 && r1.epoch == 0)
    #expect(hexString(bytes(r1.pcmk)) == "7cf934dc9c619bd8dbee5de66afe97bc33d4d26ce2cf7d5eece36db2081bc32f")
    #expect(hexString(bytes(mk.frameKey(keyHash: keys.keyHash))) == "3702939ab30641b9be415c0e09ab62a40c32c20b2d5923ff4c352a933cc46ff7")
    // The Opus example: epoch 0, counter 0, MFSN 7.
    var enc = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk, firstMFSN: 7)
    let wire = try enc.seal(Array("opus-frame-bytes".utf8), codec: .opus)
    #expect(hexString(wire) == "1bbb4f7a05334c8ea17f565a9266173809759d31b0da0f9db2582bdeda54b431000007000000")
    #expect(enc.nextMFSN == 8)
    var dec = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: mk)
    #expect(try dec.open(wire, codec: .opus) == Array("opus-frame-bytes".utf8))
}

private struct VectorFile {
    let json: [String: Any]
    init() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: projectRoot + "/Vectors/threema/group_call.json"))
        json = try JSONSerialization.jsonObject(with: data) as! [String: Any]
    }
    func list(_ name: String) -> [[String: Any]] { json[name] as? [[String: Any]] ?? [] }
}

@Test func groupCallVectorFile() throws {
    let file = try VectorFile()
    #expect(file.json["kind"] as? String == "threema-group-call")
    let ids = file.list("call_ids")
    #expect(ids.count == 2)
    for c in ids {
        let start = GroupCall.Start(protocolVersion: UInt32(c["protocol_version"] as! Int), gck: key(c["gck"] as! String),
                                    sfuBaseURL: c["sfu_base_url"] as! String)
        let id = try start.callID(creator: try ThreemaID(c["creator"] as! String), groupID: hexBytes(c["group_id"] as! String))
        #expect(hexString(id) == c["call_id"] as! String, "\(c["source"] ?? "")")
    }

    let k = try #require(file.json["keys"] as? [String: String])
    let keys = try GroupCall.Keys(gck: key(k["gck"]!))
    #expect(hexString(bytes(keys.keyHash)) == k["gckh"])
    #expect(hexString(bytes(keys.handshakeKey)) == k["gchk"])
    #expect(hexString(bytes(keys.stateKey)) == k["gcsk"])
    let mk = try GroupCall.MediaKey(epoch: 0, ratchetCounter: 0, pcmk: key(k["pcmk"]!))
    #expect(hexString(bytes(try mk.ratcheted().pcmk)) == k["pcmk_ratchet_1"])
    #expect(hexString(bytes(try mk.ratcheted().ratcheted().pcmk)) == k["pcmk_ratchet_2"])
    #expect(hexString(bytes(try mk.ratcheted(to: 2).pcmk)) == k["pcmk_ratchet_2"])
    #expect(hexString(bytes(mk.frameKey(keyHash: keys.keyHash))) == k["pcmfk"])
    #expect(hexString(bytes(try mk.ratcheted().frameKey(keyHash: keys.keyHash))) == k["pcmfk_ratchet_1"])
    #expect(hexString(bytes(try keys.adminMessageKey(gcak: key(k["gcak"]!)))) == k["gcamk"])
    let alice = try ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: hexBytes(k["alice_ck_secret"]!))
    let bob = try ThreemaContact(id: ThreemaID("00000BOB"), publicKey: hexBytes(k["bob_ck_public"]!))
    #expect(hexString(bytes(try keys.normalHandshakeAuthKey(identity: alice, peer: bob))) == k["gcnhak"])

    let frames = file.list("frames")
    #expect(frames.count == 6)
    for f in frames {
        let codec = GroupCall.MediaCodec(rawValue: f["codec"] as! String)!
        let counter = UInt8(f["ratchet_counter"] as! Int), keyCounter = UInt8(f["key_ratchet_counter"] as! Int)
        let base = try GroupCall.MediaKey(epoch: UInt8(f["epoch"] as! Int), ratchetCounter: keyCounter, pcmk: key(f["pcmk"] as! String))
        let plain = hexBytes(f["frame"] as! String), wire = hexBytes(f["wire"] as! String)
        // Seal: the sender's key turned to the frame's counter.
        var enc = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: base, firstMFSN: UInt32(f["mfsn"] as! Int))
        for _ in keyCounter..<counter { try enc.ratchet() }
        #expect(try enc.seal(plain, codec: codec) == wire, "seal \(f["frame"] ?? "")")
        // Open: a receiver still at the key's counter catches up.
        var dec = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: base)
        #expect(try dec.open(wire, codec: codec) == plain, "open \(f["frame"] ?? "")")
        #expect(dec.mediaKey.ratchetCounter == counter)
    }

    let boxes = file.list("participant_boxes")
    #expect(boxes.count == 3)
    let boxKey = key(boxes[0]["key"] as! String), cookie = hexBytes(boxes[0]["cookie"] as! String)
    let other = [UInt8](repeating: 0x55, count: 16)
    var sender = try GroupCall.ParticipantChannel(sharedKey: boxKey, localPublicKey: [], localCookie: cookie, remoteCookie: other)
    var receiver = try GroupCall.ParticipantChannel(sharedKey: boxKey, localPublicKey: [], localCookie: other, remoteCookie: cookie)
    for b in boxes {
        #expect(sender.sendSequenceNumber == UInt64(b["sequence_number"] as! Int))
        let box = try sender.seal(hexBytes(b["plaintext"] as! String))
        #expect(hexString(box) == b["box"] as! String)
        #expect(try receiver.open(hexBytes(b["box"] as! String)) == hexBytes(b["plaintext"] as! String))
    }
}

// MARK: - GroupCallStart

@Test func groupCallStartRoundTripAndStrictDecoding() throws {
    var rng = SplitMix64(seed: 0x6c)
    let gck = SymmetricKey(size: .bits256, using: &rng)
    let start = GroupCall.Start(gck: gck, sfuBaseURL: "https://sfu.threema.ch")
    let encoded = try start.encoded()
    #expect(try GroupCall.Start(decoding: encoded) == start)
    #expect(encoded.first == 0x08 && encoded[1] == 0x01)   // field 1 = 1 first (canonical order)

    func refuse(_ b: [UInt8], _ fault: GroupCallFault) {
        #expect(gcError { _ = try GroupCall.Start(decoding: b) } == .groupCall(fault), "\(hexString(b))")
    }
    refuse([], .missingField(2))
    refuse([0x12, 0x01, 0x00], .invalidLength(field: 2, length: 1))
    refuse(encoded + [0x08, 0x02], .duplicateField(1))
    refuse([0x12, 0x20] + [UInt8](repeating: 0, count: 32) + [0x1a, 0x01, 0xff], .invalidText(field: 3))
    refuse([0x12], .malformedProtobuf(.truncated))
    refuse([0x0a, 0x00] + [0x12, 0x20] + [UInt8](repeating: 0, count: 32), .malformedProtobuf(.wrongWireType(field: 1)))
    // Unknown fields are skipped.
    #expect(try GroupCall.Start(decoding: encoded + [0x78, 0x05]) == start)
    // The call ID needs a u8 version and an 8-byte group ID.
    let big = GroupCall.Start(protocolVersion: 256, gck: gck, sfuBaseURL: "x")
    #expect(gcError { _ = try big.callID(creator: try ThreemaID("ABCD1234"), groupID: [UInt8](repeating: 0, count: 8)) }
            == .groupCall(.valueOutOfRange(field: 1)))
    #expect(gcError { _ = try start.callID(creator: try ThreemaID("ABCD1234"), groupID: [UInt8](repeating: 0, count: 7)) }
            == .groupCall(.invalidGroupID(7)))
    #expect(gcError { _ = try GroupCall.Keys(gck: SymmetricKey(data: [1, 2, 3])) } == .groupCall(.invalidLength(field: 2, length: 3)))
}

// MARK: - Media key ratchet and epochs

@Test func groupCallRatchetAndEpochs() throws {
    var rng = SplitMix64(seed: 0x42)
    var k = GroupCall.MediaKey.random(epoch: 254, using: &rng)
    k = try k.ratcheted(to: 255)
    #expect(k.ratchetCounter == 255)
    #expect(gcError { _ = try k.ratcheted() } == .groupCall(.ratchetExhausted))
    #expect(gcError { _ = try k.ratcheted(to: 3) } == .groupCall(.ratchetCounterInPast(current: 255, frame: 3)))
    let n1 = k.nextEpoch(using: &rng)
    #expect(n1.epoch == 255 && n1.ratchetCounter == 0 && n1.pcmk != k.pcmk)
    let n2 = n1.nextEpoch(using: &rng)
    #expect(n2.epoch == 0)   // wraps
    #expect(gcError { _ = try GroupCall.MediaKey(epoch: 0, ratchetCounter: 0, pcmk: SymmetricKey(data: [1])) }
            == .groupCall(.invalidLength(field: 3, length: 1)))
}

private func setup(seed: UInt64) throws -> (GroupCall.Keys, GroupCall.MediaKey, SplitMix64) {
    var rng = SplitMix64(seed: seed)
    let keys = try GroupCall.Keys(gck: SymmetricKey(size: .bits256, using: &rng))
    return (keys, GroupCall.MediaKey.random(using: &rng), rng)
}

@Test func groupCallFrameRatchetTakesEffectAtTheRightFrame() throws {
    var (keys, mk, _) = try setup(seed: 1)
    var enc = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk)
    var dec = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: mk)
    let a = try enc.seal([1, 2, 3], codec: .opus)          // counter 0, MFSN 0
    try enc.ratchet()                                         // someone joined
    let b = try enc.seal([4, 5, 6], codec: .opus)          // counter 1, MFSN 1
    #expect(GroupCall.MediaFrame.Footer(of: a) == .init(epoch: 0, ratchetCounter: 0, mfsn: 0))
    #expect(GroupCall.MediaFrame.Footer(of: b) == .init(epoch: 0, ratchetCounter: 1, mfsn: 1))
    #expect(try dec.open(a, codec: .opus) == [1, 2, 3])
    #expect(try dec.open(b, codec: .opus) == [4, 5, 6])
    #expect(dec.mediaKey.ratchetCounter == 1)
    // A late frame of counter 0 is refused now (its key is gone); nothing changes.
    var enc0 = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk, firstMFSN: 100)
    let late = try enc0.seal([9], codec: .opus)
    let before = dec.stateForTesting
    #expect(gcError { _ = try dec.open(late, codec: .opus) } == .groupCall(.ratchetCounterInPast(current: 1, frame: 0)))
    #expect(dec.stateForTesting == before)
    // Ratchet 255 ends the call for the sender.
    mk = try mk.ratcheted(to: 255)
    var end = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk)
    #expect(gcError { try end.ratchet() } == .groupCall(.ratchetExhausted))
    #expect(end.mediaKey.ratchetCounter == 255)
}

@Test func groupCallEpochChangeAndOldEpochRefusal() throws {
    var (keys, mk, rng) = try setup(seed: 2)
    var enc = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk)
    var dec = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: mk)
    let old = try enc.seal([1, 1], codec: .opus)
    try enc.ratchet()
    let oldRatcheted = try enc.seal([1, 2], codec: .opus)
    let next = enc.mediaKey.nextEpoch(using: &rng)
    try enc.apply(next)                                       // someone left; MFSN continues
    let fresh = try enc.seal([2, 2], codec: .opus)
    #expect(GroupCall.MediaFrame.Footer(of: fresh) == .init(epoch: 1, ratchetCounter: 0, mfsn: 2))

    #expect(try dec.open(old, codec: .opus) == [1, 1])
    // The new epoch's key has not arrived: refused, unchanged.
    var before = dec.stateForTesting
    #expect(gcError { _ = try dec.open(fresh, codec: .opus) } == .groupCall(.unknownEpoch(current: 0, frame: 1)))
    #expect(dec.stateForTesting == before)
    try dec.addPendingKey(next)
    // A forged frame of the pending epoch does not apply the key.
    var forged = fresh
    forged[0] ^= 1
    before = dec.stateForTesting
    #expect(gcError { _ = try dec.open(forged, codec: .opus) } == .authenticationFailed)
    #expect(dec.stateForTesting == before)
    #expect(try dec.open(fresh, codec: .opus) == [2, 2])
    #expect(dec.mediaKey.epoch == 1 && dec.pendingKeys.isEmpty)
    // The old epoch is gone (even a frame never seen before).
    before = dec.stateForTesting
    #expect(gcError { _ = try dec.open(oldRatcheted, codec: .opus) } == .groupCall(.unknownEpoch(current: 1, frame: 0)))
    #expect(dec.stateForTesting == before)
    _ = mk
    // Epochs wrap: 255 is followed by 0, and Auth's key list (applied, then pending) seeds a decryptor.
    let k255 = GroupCall.MediaKey.random(epoch: 255, using: &rng), k0 = k255.nextEpoch(using: &rng)
    #expect(k0.epoch == 0)
    var encW = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: k255, firstMFSN: 1000)
    var decW = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKeys: [k255, k0])
    let f255 = try encW.seal([5], codec: .opus)
    try encW.apply(k0)
    let f0 = try encW.seal([6], codec: .opus)
    #expect(try decW.open(f0, codec: .opus) == [6])
    #expect(decW.mediaKey.epoch == 0 && decW.pendingKeys.isEmpty)
    #expect(gcError { _ = try decW.open(f255, codec: .opus) } == .groupCall(.unknownEpoch(current: 0, frame: 255)))
    // Pending keys are bounded.
    for _ in 0..<GroupCall.MediaFrameDecryptor.maximumSuccessors { try dec.addPendingKey(GroupCall.MediaKey.random(epoch: 9, using: &rng)) }
    #expect(gcError { try dec.addPendingKey(GroupCall.MediaKey.random(epoch: 9, using: &rng)) } == .groupCall(.tooManyPendingKeys))
    mk = next
}

@Test func groupCallReplayWindow() throws {
    let (keys, mk, _) = try setup(seed: 3)
    var enc = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk)
    var frames: [[UInt8]] = []
    for i in 0..<1100 { frames.append(try enc.seal([UInt8(truncatingIfNeeded: i), 7], codec: .opus)) }
    var dec = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: mk)
    #expect(try dec.open(frames[5], codec: .opus).first == 5)
    var before = dec.stateForTesting
    #expect(gcError { _ = try dec.open(frames[5], codec: .opus) } == .groupCall(.replayedFrame(mfsn: 5)))
    #expect(dec.stateForTesting == before)
    // Reordered frames inside the window are accepted once.
    #expect(try dec.open(frames[3], codec: .opus).first == 3)
    #expect(gcError { _ = try dec.open(frames[3], codec: .opus) } == .groupCall(.replayedFrame(mfsn: 3)))
    #expect(try dec.open(frames[1030], codec: .opus).first == UInt8(truncatingIfNeeded: 1030))
    #expect(try dec.open(frames[7], codec: .opus).first == 7)     // 1023 behind: still inside
    before = dec.stateForTesting
    #expect(gcError { _ = try dec.open(frames[6], codec: .opus) } == .groupCall(.frameTooOld(mfsn: 6)))
    #expect(dec.stateForTesting == before)
    #expect(gcError { _ = try dec.open(frames[1030], codec: .opus) } == .groupCall(.replayedFrame(mfsn: 1030)))
    #expect(try dec.open(frames[1099], codec: .opus).first == UInt8(truncatingIfNeeded: 1099))
    #expect(gcError { _ = try dec.open(frames[7], codec: .opus) } == .groupCall(.frameTooOld(mfsn: 7)))
    #expect(try dec.open(frames[1031], codec: .opus).first == UInt8(truncatingIfNeeded: 1031))
    #expect(gcError { _ = try dec.open(frames[1031], codec: .opus) } == .groupCall(.replayedFrame(mfsn: 1031)))
}

@Test func groupCallFrameLayoutAndLimits() throws {
    let (keys, mk, _) = try setup(seed: 4)
    var enc = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk, firstMFSN: 0x01020304)
    // Empty frames pass through and use no MFSN.
    #expect(try enc.seal([], codec: .opus) == [] && enc.nextMFSN == 0x01020304)
    // VP8 key frame (bit 0 clear): 10 clear bytes; delta frame (bit 0 set): 3.
    let keyFrame: [UInt8] = [0x50] + Array(1...40)
    let delta: [UInt8] = [0x51] + Array(1...40)
    let wk = try enc.seal(keyFrame, codec: .vp8), wd = try enc.seal(delta, codec: .vp8)
    #expect(Array(wk[..<10]) == Array(keyFrame[..<10]) && wk[10...40] != keyFrame[10...40])
    #expect(Array(wd[..<3]) == Array(delta[..<3]) && wd[3] != delta[3] || wd[4] != delta[4])
    #expect(wk.count == keyFrame.count + 22 && Array(wk.suffix(6)) == [mk.epoch, 0, 4, 3, 2, 1])
    #expect(Array(wd.suffix(4)) == [5, 3, 2, 1])   // one increment per frame
    // Header bytes are authenticated.
    var dec = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: mk)
    var t = wk
    t[9] ^= 0x80
    #expect(gcError { _ = try dec.open(t, codec: .vp8) } == .authenticationFailed)
    #expect(try dec.open(wk, codec: .vp8) == keyFrame)
    // Opened as Opus (wrong codec), the header becomes ciphertext: refused.
    #expect(gcError { _ = try dec.open(wd, codec: .opus) } == .authenticationFailed)
    #expect(try dec.open(wd, codec: .vp8) == delta)
    // Sizes.
    #expect(gcError { _ = try enc.seal([UInt8](repeating: 1, count: 65515), codec: .opus) } == .groupCall(.frameTooLarge(65515)))
    let maxWire = try enc.seal([UInt8](repeating: 1, count: 65514), codec: .opus)
    #expect(maxWire.count == 65536)
    #expect(try dec.open(maxWire, codec: .opus).count == 65514)
    #expect(gcError { _ = try dec.open([UInt8](repeating: 0, count: 65537), codec: .opus) } == .groupCall(.frameTooLarge(65537)))
    #expect(gcError { _ = try dec.open([UInt8](repeating: 0, count: 21), codec: .opus) } == .groupCall(.frameTooShort(21)))
    #expect(try dec.open([UInt8](), codec: .vp8) == [])
    // MFSN exhaustion.
    var last = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk, firstMFSN: .max)
    _ = try last.seal([1], codec: .opus)
    #expect(last.nextMFSN == nil)
    #expect(gcError { _ = try last.seal([1], codec: .opus) } == .groupCall(.frameSequenceNumberExhausted))
    // In place, with room for tag and footer.
    var enc2 = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk, firstMFSN: 500)
    var buf = delta + [UInt8](repeating: 0, count: 22)
    let n = try buf.withUnsafeMutableBytes { b in try enc2.seal(inPlace: b, frameByteCount: delta.count, codec: .vp8) }
    #expect(n == buf.count)
    var dec2 = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: mk)
    let m = try buf.withUnsafeMutableBytes { b in try dec2.open(inPlace: b, codec: .vp8) }
    #expect(Array(buf[..<m]) == delta)
    var small = [UInt8](repeating: 0, count: 10)
    #expect(throws: ThreemaError.self) { try small.withUnsafeMutableBytes { b in _ = try enc2.seal(inPlace: b, frameByteCount: 5, codec: .opus) } }
}

@Test func groupCallFrameTamperingIsRefusedWithoutStateChange() throws {
    let (keys, mk, _) = try setup(seed: 5)
    var enc = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk)
    try enc.ratchet()
    let frame: [UInt8] = [0x30] + Array(repeating: 0x42, count: 30)
    let wire = try enc.seal(frame, codec: .vp8)
    var dec = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: mk)
    let before = dec.stateForTesting
    for i in wire.indices {
        for bit in [0, 7] {
            var t = wire
            t[i] ^= UInt8(1 << bit)
            #expect(throws: ThreemaError.self) { _ = try dec.open(t, codec: .vp8) }
            #expect(dec.stateForTesting == before, "byte \(i) bit \(bit)")
        }
    }
    for cut in 1...wire.count - 1 {
        #expect(throws: ThreemaError.self) { _ = try dec.open(Array(wire[..<cut]), codec: .vp8) }
    }
    #expect(dec.stateForTesting == before)
    #expect(try dec.open(wire, codec: .vp8) == frame)
    #expect(dec.stateForTesting != before)
}

// MARK: - Cross-check with OpenSSL's AES-256-GCM

private let openSSLAESOrRequired = OpenSSLAES.shared != nil || Reference.required

@Test(.enabled(if: openSSLAESOrRequired, "OpenSSL libcrypto not found (apt-get install libssl3): cross-check skipped"))
func groupCallFramesMatchOpenSSL() throws {
    guard let o = OpenSSLAES.shared else {
        Issue.record("RAMPART_REQUIRE_REFERENCE=1 but OpenSSL's AES functions were not found")
        return
    }
    var rng = SplitMix64(seed: 0x0551)
    let keys = try GroupCall.Keys(gck: SymmetricKey(size: .bits256, using: &rng))
    let mk = GroupCall.MediaKey.random(epoch: 3, using: &rng)
    let pcmfk = bytes(mk.frameKey(keyHash: keys.keyHash))
    var enc = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk, firstMFSN: 0xfffffff0)
    var dec = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: mk)
    for i in 0..<12 {
        let codec: GroupCall.MediaCodec = i % 2 == 0 ? .opus : .vp8
        let len = [1, 2, 3, 9, 10, 11, 16, 17, 160, 1200, 4095, 65514][i]
        let frame = rng.bytes(len)
        let mfsn = enc.nextMFSN!
        let wire = try enc.seal(frame, codec: codec)
        // The same composition from OpenSSL's calls.
        let h = codec == .opus ? 0 : min(frame[0] & 1 == 0 ? 10 : 3, len)
        let footer = [mk.epoch, 0] + withUnsafeBytes(of: mfsn.littleEndian) { Array($0) }
        let nonce = withUnsafeBytes(of: mfsn.littleEndian) { Array($0) } + [UInt8](repeating: 0, count: 8)
        let (ct, tag) = try o.gcmSeal(key: pcmfk, nonce: nonce, aad: footer + frame[..<h], Array(frame[h...]))
        #expect(wire == Array(frame[..<h]) + ct + tag + footer, "length \(len) \(codec)")
        #expect(try o.gcmOpen(key: pcmfk, nonce: nonce, aad: footer + frame[..<h], Array(wire[h..<(wire.count - 22)]),
                              tag: Array(wire[(wire.count - 22)..<(wire.count - 6)])) == Array(frame[h...]))
        #expect(try dec.open(wire, codec: codec) == frame)
    }
}

// MARK: - Participant channel and handshake

private func pair(_ rng: inout SplitMix64) throws -> (GroupCall.ParticipantChannel, GroupCall.ParticipantChannel,
                                                        Curve25519.KeyAgreement.PrivateKey, Curve25519.KeyAgreement.PrivateKey) {
    let a = Curve25519.KeyAgreement.PrivateKey(using: &rng), b = Curve25519.KeyAgreement.PrivateKey(using: &rng)
    let ca = rng.bytes(16), cb = rng.bytes(16)
    let ab = try GroupCall.ParticipantChannel(localKey: a, localCookie: ca, remotePublicKey: b.publicKey.rawRepresentation, remoteCookie: cb)
    let ba = try GroupCall.ParticipantChannel(localKey: b, localCookie: cb, remotePublicKey: a.publicKey.rawRepresentation, remoteCookie: ca)
    return (ab, ba, a, b)
}

@Test func groupCallChannelSequenceNumbers() throws {
    var rng = SplitMix64(seed: 0xc4)
    var (ab, ba, a, _) = try pair(&rng)
    let m1 = try ab.seal([1]), m2 = try ab.seal([2]), m3 = try ab.seal([3])
    #expect(ab.sendSequenceNumber == 4)
    #expect(try ba.open(m1) == [1])
    // Replayed and skipped messages are refused; the counter does not move.
    #expect(gcError { _ = try ba.open(m1) } == .authenticationFailed)
    #expect(gcError { _ = try ba.open(m3) } == .authenticationFailed)
    #expect(ba.receiveSequenceNumber == 2)
    #expect(try ba.open(m2) == [2])
    #expect(try ba.open(m3) == [3])
    // The directions are independent: the reply starts at 1 under the other cookie.
    let r = try ba.seal([9])
    #expect(try ab.open(r) == [9] && ab.receiveSequenceNumber == 2)
    // The box uses cookie ‖ u64-LE number: check the nonce of m1 with SecretBox directly.
    let s = try Ibex.sharedSecret(a, ba.localPublicKey.isEmpty ? a.publicKey : try .init(rawRepresentation: ba.localPublicKey))
    #expect(try SecretBox.open(m1, using: s, nonce: ab.localCookie + [1, 0, 0, 0, 0, 0, 0, 0]) == [1])
    // Reflections are refused.
    let cookie = rng.bytes(16)
    #expect(gcError { _ = try GroupCall.ParticipantChannel(sharedKey: s, localPublicKey: [], localCookie: cookie, remoteCookie: cookie) }
            == .groupCall(.reflectedCookie))
    #expect(gcError { _ = try GroupCall.ParticipantChannel(localKey: a, localCookie: cookie, remotePublicKey: a.publicKey.rawRepresentation,
                                                           remoteCookie: rng.bytes(16)) } == .groupCall(.reflectedPublicKey))
    #expect(gcError { _ = try GroupCall.ParticipantChannel(localKey: a, localCookie: [1], remotePublicKey: rng.bytes(32),
                                                           remoteCookie: rng.bytes(16)) } == .groupCall(.invalidLength(field: 4, length: 1)))
}

@Test func groupCallHandshakeMessages() throws {
    var rng = SplitMix64(seed: 0x4a)
    let keys = try GroupCall.Keys(gck: SymmetricKey(size: .bits256, using: &rng))
    var (ab, ba, a, b) = try pair(&rng)
    // Hello under GCHK.
    let hello = GroupCall.HelloEnvelope(padding: rng.bytes(5), content: .hello(.init(
        identity: try ThreemaID("000ALICE"), nickname: "Alice", pck: a.publicKey.rawRepresentation, pcck: ab.localCookie)))
    let sealedHello = try keys.sealHello(hello, using: &rng)
    #expect(try keys.openHello(sealedHello) == hello)
    var bad = sealedHello
    bad[30] ^= 1
    #expect(gcError { _ = try keys.openHello(bad) } == .authenticationFailed)
    #expect(gcError { _ = try keys.openHello(sealedHello.prefix(39)) } == .groupCall(.boxTooShort(39)))
    let guest = GroupCall.HelloEnvelope(content: .guestHello(.init(name: "Guest", pck: rng.bytes(32), pcck: rng.bytes(16))))
    #expect(try GroupCall.HelloEnvelope(decoding: try guest.encoded()) == guest)
    #expect(gcError { _ = try GroupCall.HelloEnvelope(content: .guestHello(.init(name: "", pck: [1], pcck: rng.bytes(16)))).encoded() }
            == .groupCall(.invalidLength(field: 2, length: 1)))

    // Normal Auth: inner box under GCNHAK inside the channel box; it repeats the receiver's PCK and PCCK.
    let alice = try ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: rng.bytes(32))
    let bob = try ThreemaIdentity(id: ThreemaID("00000BOB"), privateKey: rng.bytes(32))
    let gcnhakA = try keys.normalHandshakeAuthKey(identity: alice, peer: bob.contact)
    let gcnhakB = try keys.normalHandshakeAuthKey(identity: bob, peer: alice.contact)
    #expect(gcnhakA == gcnhakB)
    let mk = GroupCall.MediaKey.random(using: &rng)
    let auth = GroupCall.AuthEnvelope(content: .auth(.init(pck: b.publicKey.rawRepresentation, pcck: ba.localCookie,
                                                           mediaKeys: [mk, mk.nextEpoch(using: &rng)])))
    let sealedAuth = try ab.sealAuth(auth, gcnhak: gcnhakA, using: &rng)
    // Wrong variant and wrong key are refused, the channel unchanged.
    #expect(throws: ThreemaError.self) { _ = try ba.openAuth(sealedAuth, gcnhak: nil) }   // nonce ‖ box is no protobuf
    #expect(gcError { _ = try ba.openAuth(sealedAuth, gcnhak: keys.stateKey) } == .authenticationFailed)
    #expect(ba.receiveSequenceNumber == 1)
    #expect(try ba.openAuth(sealedAuth, gcnhak: gcnhakB) == auth)
    #expect(ba.receiveSequenceNumber == 2)
    // An auth that repeats someone else's values: authMismatch, counter unchanged.
    let wrong = GroupCall.AuthEnvelope(content: .auth(.init(pck: rng.bytes(32), pcck: ba.localCookie, mediaKeys: [mk])))
    let sealedWrong = try ab.sealAuth(wrong, gcnhak: gcnhakA, using: &rng)
    #expect(gcError { _ = try ba.openAuth(sealedWrong, gcnhak: gcnhakB) } == .groupCall(.authMismatch))
    #expect(ba.receiveSequenceNumber == 2)
    #expect(gcError { _ = try ab.sealAuth(wrong, gcnhak: nil, using: &rng) } == .groupCall(.wrongHandshakeVariant))
    // Guest auth goes straight into the channel box.
    var (gab, gba, _, gb) = try pair(&rng)
    let gauth = GroupCall.AuthEnvelope(content: .guestAuth(.init(pck: gb.publicKey.rawRepresentation, pcck: gba.localCookie, mediaKeys: [mk])))
    #expect(try gba.openAuth(try gab.sealAuth(gauth, gcnhak: nil, using: &rng), gcnhak: nil) == gauth)
    // Post-handshake envelopes.
    for content: GroupCall.Envelope.Content in [.rekey(mk), .holdState, .captureState([0x0a, 0x02, 0x0a, 0x00]), .encryptedAdminEnvelope([1, 2])] {
        let e = GroupCall.Envelope(padding: [0], content: content)
        #expect(try gba.openEnvelope(try gab.seal(e)) == e)
    }
    // Auth without media keys, media keys out of range.
    #expect(gcError { _ = try GroupCall.AuthEnvelope(decoding: [0x12, 0x34, 0x0a, 0x20] + rng.bytes(32) + [0x12, 0x10] + rng.bytes(16)) }
            == .groupCall(.noMediaKey))
    #expect(gcError { _ = try GroupCall.Envelope(decoding: [0x1a, 0x25, 0x08, 0x80, 0x02, 0x1a, 0x20] + rng.bytes(32)) }
            == .groupCall(.valueOutOfRange(field: 1)))
    // Call state under GCSK.
    let state = rng.bytes(50)
    #expect(try keys.openCallState(try keys.sealCallState(state, using: &rng)) == state)
    // OuterEnvelope.
    let outer = GroupCall.OuterEnvelope(sender: 3, receiver: 7, encryptedData: sealedAuth)
    #expect(try GroupCall.OuterEnvelope(decoding: outer.encoded) == outer)
    #expect(gcError { _ = try GroupCall.OuterEnvelope(decoding: [0x08, 0x01, 0x08, 0x02]) } == .groupCall(.duplicateField(1)))
}

// MARK: - Mutation fuzz

@Test func groupCallDecoderMutationFuzz() throws {
    var rng = SplitMix64(seed: 0xf022)
    let keys = try GroupCall.Keys(gck: SymmetricKey(size: .bits256, using: &rng))
    let mk = GroupCall.MediaKey.random(using: &rng)
    var enc = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk)
    var dec = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: mk)
    try dec.addPendingKey(mk.nextEpoch(using: &rng))
    var seeds: [[UInt8]] = []
    for codec in GroupCall.MediaCodec.allCases {
        for n in [1, 5, 40] { seeds.append(try enc.seal(rng.bytes(n), codec: codec)) }
    }
    let (ab, ba, a, b) = try pair(&rng)
    seeds.append(try GroupCall.HelloEnvelope(content: .hello(.init(identity: try ThreemaID("000ALICE"), nickname: "A",
                                                                  pck: a.publicKey.rawRepresentation, pcck: ab.localCookie))).encoded())
    seeds.append(try GroupCall.AuthEnvelope(content: .auth(.init(pck: b.publicKey.rawRepresentation, pcck: ba.localCookie, mediaKeys: [mk]))).encoded())
    seeds.append(GroupCall.Envelope(content: .rekey(mk)).encoded)
    seeds.append(try GroupCall.Start(gck: keys.stateKey, sfuBaseURL: "https://x").encoded())
    let iterations = isDebugBuild ? 3000 : 20000
    for i in 0..<iterations {
        var m = mutated(seeds[i % seeds.count], &rng)
        if i % 7 == 0 { m = rng.bytes(Int(rng.next() % 64)) }
        let before = dec.stateForTesting
        do { _ = try dec.open(m, codec: i % 2 == 0 ? .opus : .vp8) } catch { #expect(dec.stateForTesting == before) }
        _ = try? GroupCall.HelloEnvelope(decoding: m)
        _ = try? GroupCall.AuthEnvelope(decoding: m)
        _ = try? GroupCall.OuterEnvelope(decoding: m)
        _ = try? GroupCall.Envelope(decoding: m)
        if let s = try? GroupCall.Start(decoding: m) { #expect(try GroupCall.Start(decoding: try s.encoded()) == s) }
        if let h = try? GroupCall.HelloEnvelope(decoding: m) { #expect(try GroupCall.HelloEnvelope(decoding: try h.encoded()) == h) }
        var probe = ba
        if (try? probe.openAuth(m, gcnhak: nil)) == nil { #expect(probe.receiveSequenceNumber == 1) }
    }
}

@Test func groupCallRawBufferVariantsAgreeWithArrays() throws {
    var (keys, mk, rng) = try setup(seed: 6)
    var encA = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mk, firstMFSN: 77)
    var encB = encA
    for (codec, frame) in [(GroupCall.MediaCodec.opus, rng.bytes(160)), (.vp8, [0x90] + rng.bytes(1199)), (.vp8, [0x91] + rng.bytes(40))] {
        let want = try encA.seal(frame, codec: codec)
        var out = [UInt8](repeating: 0xee, count: frame.count + 30)
        let n = try frame.withUnsafeBytes { f in try out.withUnsafeMutableBytes { o in try encB.seal(f, into: o, codec: codec) } }
        #expect(Array(out[..<n]) == want && out[n...].allSatisfy { $0 == 0xee })
        var decA = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: mk)
        var plain = [UInt8](repeating: 0xee, count: frame.count + 3)
        let m = try want.withUnsafeBytes { w in try plain.withUnsafeMutableBytes { o in try decA.open(w, into: o, codec: codec) } }
        #expect(Array(plain[..<m]) == frame && plain[m...].allSatisfy { $0 == 0xee })
        var small = [UInt8](repeating: 0, count: frame.count - 1)
        #expect(throws: ThreemaError.self) {
            _ = try want.withUnsafeBytes { w in try small.withUnsafeMutableBytes { o in try decA.open(w, into: o, codec: codec) } }
        }
    }
}
