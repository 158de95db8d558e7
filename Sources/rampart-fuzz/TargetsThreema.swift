// Fuzz targets for RampartThreema's decoders: the end-to-end envelope (parse and open), the decoders
// of decrypted content (metadata protobuf, container padding, message bodies, file JSON), the
// `3mid:` QR payload, Threema Safe JSON, and ID backup text.

import Rampart
import RampartCodecs
@_spi(Testing) import RampartThreema
import RampartTestSupport

private let fuzzAlice = try! ThreemaIdentity(id: ThreemaID("000ALICE"), privateKey: [UInt8](repeating: 0x11, count: 32))
private let fuzzBob = try! ThreemaIdentity(id: ThreemaID("00000BOB"), privateKey: [UInt8](repeating: 0x22, count: 32))
private let bobKeys = try! PairKeys(identity: fuzzBob, contact: fuzzAlice.contact)

let threemaEnvelopeTarget = FuzzTarget(
    name: "threema-envelope",
    summary: "message-with-metadata-box / legacy envelopes: parse (typed error or fields that re-encode to the input), then open for 00000BOB from 000ALICE with a nonce store: an error leaves the store unchanged; an accepted message re-opens as a replay",
    maxLength: 4096,
    run: { data in
        guard let env = try? MessageEnvelope(parsing: data) else { return }
        FuzzCheck.require(env.encoded == data, "envelope re-encoding differs")
        var store = InMemoryNonceStore()
        do {
            let m = try env.open(as: fuzzBob, keys: bobKeys, nonceStore: &store)
            FuzzCheck.require(store.count == 1, "accepted message not remembered")
            FuzzCheck.require(m.messageID == env.messageID, "message ID differs")
            FuzzCheck.require((try? env.open(as: fuzzBob, keys: bobKeys, nonceStore: &store)) == nil, "replay accepted")
        } catch {
            FuzzCheck.require(store.count == 0, "a refused message changed the nonce store")
        }
    },
    seeds: {
        var rng = SplitMix64(seed: 0x7e3a)
        let keys = try! PairKeys(identity: fuzzAlice, contact: fuzzBob.contact)
        return [EnvelopeFormat.withMetadata, .legacy].flatMap { format in
            [0, 5, 200].map { n in
                let msg = OutgoingMessage(type: .text, body: [UInt8](repeating: 0x41, count: n), createdAt: 1_700_000_000_000,
                                          nickname: "Alice", using: &rng)
                return try! EndToEnd.seal(msg, from: fuzzAlice, keys: keys, format: format, using: &rng)
            }
        }
    }
)

let threemaDecodersTarget = FuzzTarget(
    name: "threema-decoders",
    summary: "decrypted-content decoders chosen by the first byte: MessageMetadata protobuf (re-encodes to an equal value), container padding + message body by type, file JSON (re-encoding decodes equal), 3mid payloads (payload round trip), Safe JSON schema: value or typed error",
    maxLength: 1 << 14,
    run: { data in
        var input = FuzzInput(data)
        let which = input.int(in: 0...4)
        let body = input.rest()
        switch which {
        case 0:
            if let m = try? MessageMetadata(decoding: body) {
                FuzzCheck.require((try? MessageMetadata(decoding: m.encoded)) == m, "metadata round trip")
            }
        case 1:
            if let c = try? MessageContainer(decoding: body) {
                FuzzCheck.require(c.body.count <= body.count - 2, "container body longer than possible")
                _ = try? MessageBody(c)
            }
        case 2:
            if let f = try? FileMessage(decoding: body) {
                FuzzCheck.require((try? FileMessage(decoding: f.encoded)) == f, "file body round trip")
            }
        case 3:
            if let q = try? ContactQRCode(parsing: String(decoding: body, as: UTF8.self)) {
                FuzzCheck.require((try? ContactQRCode(parsing: q.payload)) == q, "3mid round trip")
            }
        default:
            if let s = try? SafeBackup(jsonBytes: body) {
                FuzzCheck.require((try? SafeBackup(jsonBytes: s.jsonBytes)) == s, "Safe JSON round trip")
            }
        }
    },
    seeds: {
        let meta = MessageMetadata(nickname: "Alice", messageID: 7, createdAt: 1_700_000_000_000).encoded
        let container = MessageContainer(type: .deliveryReceipt, body: [2] + [UInt8](repeating: 1, count: 16)).encoded(paddingLength: 20)
        let file = try! FileMessage(blobID: [UInt8](repeating: 1, count: 16), key: [UInt8](repeating: 2, count: 32),
                                    mediaType: "image/png", fileName: "a.png", size: 10).encoded
        let qr = Array(ContactQRCode(identity: fuzzAlice, expiry: 99).payload.utf8)
        let safe = SafeBackup(identity: fuzzAlice, nickname: "A").jsonBytes
        return [[0] + meta, [1] + container, [2] + file, [3] + qr, [4] + safe]
    }
)

let threemaIDBackupTarget = FuzzTarget(
    name: "threema-id-backup",
    summary: "ID backup text (lenient Base32, legacy and versioned) with a 1-iteration PBKDF2: identity or typed error; an accepted backup re-encodes with its salt to the same bytes",
    maxLength: 512,
    run: { data in
        let text = String(decoding: data, as: UTF8.self)
        guard let id = try? IDBackup.decode(text, password: "password1", iterations: 1) else { return }
        FuzzCheck.require(id.publicKey == id.privateKey.publicKey, "identity key pair inconsistent")
    },
    seeds: {
        let text = try! IDBackup.encode(identity: fuzzAlice, password: "password1", salt: [1, 2, 3, 4, 5, 6, 7, 8], iterations: 1)
        return [Array(text.utf8), Array(text.lowercased().utf8)]
    }
)

let threemaTargets = [threemaEnvelopeTarget, threemaDecodersTarget, threemaIDBackupTarget, threemaCSPTarget, threemaGroupCallTarget]

// MARK: - Group calls

private let fuzzCallKeys = try! GroupCall.Keys(gck: SymmetricKey(data: [UInt8](repeating: 0x33, count: 32)))
private let fuzzMediaKey = try! GroupCall.MediaKey(epoch: 4, ratchetCounter: 1, pcmk: SymmetricKey(data: [UInt8](repeating: 0x44, count: 32)))
private let fuzzNextMediaKey = try! GroupCall.MediaKey(epoch: 5, ratchetCounter: 0, pcmk: SymmetricKey(data: [UInt8](repeating: 0x55, count: 32)))
private let fuzzPCKa = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0x66, count: 32))
private let fuzzPCKb = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0x77, count: 32))
private let fuzzCookieA = [UInt8](repeating: 0xa0, count: 16), fuzzCookieB = [UInt8](repeating: 0xb0, count: 16)

let threemaGroupCallTarget = FuzzTarget(
    name: "threema-group-call",
    summary: "group calls, chosen by the first byte: media-frame open (opus/vp8) with an applied and a pending key: a refusal leaves the decryptor unchanged, an accepted frame is refused as a replay; the Hello (under GCHK), Auth, post-handshake and outer envelopes and GroupCallStart: value (re-encodes to an equal value) or typed error; a guest Auth in the channel: a refusal leaves the channel's counter at 1",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let which = input.int(in: 0...5)
        let codec: GroupCall.MediaCodec = input.bool() ? .vp8 : .opus
        let body = input.rest()
        switch which {
        case 0:
            var dec = try! GroupCall.MediaFrameDecryptor(keyHash: fuzzCallKeys.keyHash, mediaKeys: [fuzzMediaKey, fuzzNextMediaKey])
            let before = dec.stateForTesting
            guard let frame = try? dec.open(body, codec: codec) else {
                FuzzCheck.require(dec.stateForTesting == before, "a refused frame changed the decryptor")
                return
            }
            FuzzCheck.require(frame.count == max(body.count - 22, 0), "opened frame length")
            if body.isEmpty { return }
            let after = dec.stateForTesting
            FuzzCheck.require((try? dec.open(body, codec: codec)) == nil, "replayed frame accepted")
            FuzzCheck.require(dec.stateForTesting == after, "a refused replay changed the decryptor")
        case 1:
            if let h = try? fuzzCallKeys.openHello(body) {
                FuzzCheck.require((try? GroupCall.HelloEnvelope(decoding: try h.encoded())) == h, "hello round trip")
            }
            if let h = try? GroupCall.HelloEnvelope(decoding: body) {
                FuzzCheck.require((try? GroupCall.HelloEnvelope(decoding: try h.encoded())) == h, "hello round trip")
            }
        case 2:
            if let a = try? GroupCall.AuthEnvelope(decoding: body) {
                FuzzCheck.require((try? GroupCall.AuthEnvelope(decoding: try a.encoded())) == a, "auth round trip")
            }
        case 3:
            if let e = try? GroupCall.Envelope(decoding: body) {
                FuzzCheck.require((try? GroupCall.Envelope(decoding: e.encoded)) == e, "envelope round trip")
            }
            if let o = try? GroupCall.OuterEnvelope(decoding: body) {
                FuzzCheck.require((try? GroupCall.OuterEnvelope(decoding: o.encoded)) == o, "outer envelope round trip")
            }
        case 4:
            if let s = try? GroupCall.Start(decoding: body) {
                FuzzCheck.require((try? GroupCall.Start(decoding: try s.encoded())) == s, "GroupCallStart round trip")
            }
        default:
            var channel = try! GroupCall.ParticipantChannel(localKey: fuzzPCKb, localCookie: fuzzCookieB,
                                                            remotePublicKey: fuzzPCKa.publicKey.rawRepresentation, remoteCookie: fuzzCookieA)
            if (try? channel.openAuth(body, gcnhak: nil)) == nil {
                FuzzCheck.require(channel.receiveSequenceNumber == 1, "a refused auth moved the channel")
            } else {
                FuzzCheck.require(channel.receiveSequenceNumber == 2, "an accepted auth did not move the channel")
            }
        }
    },
    seeds: {
        var rng = SplitMix64(seed: 0x6a11)
        var out: [[UInt8]] = []
        var enc = try! GroupCall.MediaFrameEncryptor(keyHash: fuzzCallKeys.keyHash, mediaKey: fuzzMediaKey, firstMFSN: 40)
        for (flag, n) in [(0, 20), (1, 30), (1, 2)] {
            out.append([0, UInt8(flag)] + (try! enc.seal(rng.bytes(n), codec: flag == 1 ? .vp8 : .opus)))
        }
        try! enc.ratchet()
        out.append([0, 0] + (try! enc.seal(rng.bytes(12), codec: .opus)))
        try! enc.apply(fuzzNextMediaKey)
        out.append([0, 1] + (try! enc.seal([0x50] + rng.bytes(15), codec: .vp8)))
        let hello = GroupCall.HelloEnvelope(padding: [1, 2], content: .hello(.init(
            identity: try! ThreemaID("000ALICE"), nickname: "A", pck: fuzzPCKa.publicKey.rawRepresentation, pcck: fuzzCookieA)))
        out.append([1, 0] + (try! fuzzCallKeys.sealHello(hello, using: &rng)))
        let auth = GroupCall.AuthEnvelope(content: .guestAuth(.init(pck: fuzzPCKb.publicKey.rawRepresentation, pcck: fuzzCookieB,
                                                                    mediaKeys: [fuzzMediaKey, fuzzNextMediaKey])))
        out.append([2, 0] + (try! auth.encoded()))
        out.append([3, 0] + GroupCall.Envelope(content: .rekey(fuzzNextMediaKey)).encoded)
        out.append([3, 0] + GroupCall.OuterEnvelope(sender: 1, receiver: 2, encryptedData: [9, 9]).encoded)
        out.append([4, 0] + (try! GroupCall.Start(gck: fuzzCallKeys.stateKey, sfuBaseURL: "https://sfu.example").encoded()))
        var sender = try! GroupCall.ParticipantChannel(localKey: fuzzPCKa, localCookie: fuzzCookieA,
                                                       remotePublicKey: fuzzPCKb.publicKey.rawRepresentation, remoteCookie: fuzzCookieB)
        out.append([5, 0] + (try! sender.sealAuth(auth, gcnhak: nil, using: &rng)))
        return out
    }
)
