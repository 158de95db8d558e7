// The auth-key handshake: the official sample, Docs/MTProto.md §10.G vectors, round trips and bad input.

import Foundation
import Testing
@testable import RampartMTProto
import RampartTestSupport

/// The sample (Vectors/mtproto/handshake_sample.json ships with the project).
private struct Sample {
    let d: [String: Any]
    init?() {
        let path = projectRoot + "/Vectors/mtproto/handshake_sample.json"
        guard let data = FileManager.default.contents(atPath: path),
              let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        d = obj
    }
    func hex(_ k: String) -> [UInt8] { hexBytes((d[k] as! String).lowercased()) }
    func int(_ k: String) -> Int64 { (d[k] as! NSNumber).int64Value }
}

private func le64(_ b: [UInt8]) -> UInt64 { b.reversed().reduce(0) { $0 << 8 | UInt64($1) } }

@Test func handshakeSampleReplaysThroughTheClient() throws {
    let s = try #require(Sample(), "Vectors/mtproto/handshake_sample.json is part of the project")
    let key = try RSA.PublicKey(pemRepresentation: telegramProductionKeyPEM)
    #expect(key.mtprotoFingerprint == 0xD09D_1D85_DE64_FD85)
    var client = ClientHandshake(configuration: .init(publicKeys: [key], dc: 2))
    // Randomness in the order the client draws it: nonce, new_nonce, RSA_PAD padding, RSA_PAD
    // temp_key (not published: any value), b, the set_client_DH_params padding.
    var rng = ReplayRNG(chunks: [s.hex("nonce"), s.hex("new_nonce"), s.hex("random_padding_bytes"),
                           [UInt8](repeating: 0x42, count: 32), s.hex("b"), s.hex("client_padding")])
    let reqPQ = client.start(using: &rng)
    #expect(reqPQ == hexBytes("f18e7ebe") + s.hex("nonce"))
    // The sample's whole unencrypted packet (msg_id 0x65ABC0FC000DF764).
    #expect(UnencryptedMessage.encode(msgId: 0x65AB_C0FC_000D_F764, body: reqPQ) ==
            hexBytes("000000000000000064f70d00fcc0ab6514000000f18e7ebe15a084b3b9ca2a17f03925f44b78fe68"))

    let fingerprints = (s.d["fingerprints"] as! [String]).map { le64(hexBytes($0.lowercased())) }
    let resPQ = ResPQ(nonce: s.hex("nonce"), serverNonce: s.hex("server_nonce"), pq: s.hex("pq_bytes"),
                      fingerprints: fingerprints)
    guard case .send(let reqDHBody) = try client.receive(resPQ.serialized, now: 1_705_754_876, using: &rng) else {
        Issue.record("expected req_DH_params"); return
    }
    let reqDH = try ReqDHParams(parsing: reqDHBody)
    #expect(reqDH.p == hexBytes("3c2357cf") && reqDH.q == hexBytes("56bfb29f"))
    #expect(reqDH.fingerprint == 0xD09D_1D85_DE64_FD85)
    #expect(reqDH.encryptedData.count == 256)
    // The inner data the client encrypted (the RSA_PAD output itself depends on the unpublished temp_key).
    let inner = PQInnerData(pq: s.hex("pq_bytes"), p: reqDH.p, q: reqDH.q, nonce: s.hex("nonce"),
                            serverNonce: s.hex("server_nonce"), newNonce: s.hex("new_nonce"), kind: .dc(2))
    #expect(inner.serialized == s.hex("p_q_inner_data_dc"))

    let ok = ServerDHParams.ok(nonce: s.hex("nonce"), serverNonce: s.hex("server_nonce"), encryptedAnswer: s.hex("encrypted_answer"))
    guard case .send(let setBody) = try client.receive(ok.serialized, now: 1_705_754_800, using: &rng) else {
        Issue.record("expected set_client_DH_params"); return
    }
    let set = try SetClientDHParams(parsing: setBody)
    #expect(set.encryptedData == s.hex("client_encrypted_data"), "byte-for-byte client encrypted_data")

    let dhGenOK = DHGenAnswer(kind: .ok, nonce: s.hex("nonce"), serverNonce: s.hex("server_nonce"),
                              newNonceHash: s.hex("new_nonce_hash1"))
    guard case .completed(let result) = try client.receive(dhGenOK.serialized, now: 1_705_754_801, using: &rng) else {
        Issue.record("expected completion"); return
    }
    #expect(result.authKey.withUnsafeBytes { Array($0) } == s.hex("auth_key"))
    #expect(result.authKey.idBytes == hexBytes("8ae7a271969a9b1f"))
    #expect(result.authKey.auxHashBytes == hexBytes("26d6ceeff1381295"))
    #expect(result.serverSalt == -97_066_050_441_302_190)
    #expect(result.timeOffset == 1_705_754_877 - 1_705_754_800)
    #expect(result.dc == 2 && result.expiresIn == nil)
    #expect(client.isCompleted)
}

@Test func telegramKeysHaveTheirPublishedFingerprints() {
    // Docs/MTProto.md §3.6: production 0xD09D1D85DE64FD85, test DC 0xB25898DF208D2603.
    #expect(TelegramPublicKeys.all.map(\.mtprotoFingerprint) == [0xD09D_1D85_DE64_FD85, 0xB258_98DF_208D_2603])
}

@Test func rsaPadMatchesGotdVector() throws {
    // Docs/MTProto.md §10.G6: production key, 144 × 'a', every random byte zero.
    let key = try RSA.PublicKey(pemRepresentation: telegramProductionKeyPEM)
    var zero = ReplayRNG([])
    let out = try RSAPad.encrypt([UInt8](repeating: 0x61, count: 144), key: key, using: &zero)
    #expect(hexString(out) == "bf68719e836806b040cd261ecaf66eb3c4ba19f3bbea3031b2e6cf29167bab647201d101b291dc5b716a42e789a38d947fe59e9bcce8f30ef46a946743ea8b6babbce7fc0afc46b802aa453e83471d82a4dfad83f971f350b4b4fb474cd1c48fdf427e4b5fecce9ec3178ae7dac3985856fdefa21d6fdc5e0e0fd8a57bc4f51580d637d372be8d87c9aa3fde8e6f8287bcb3be846aadcdd59465375479e248f62ed438f9804fbe36d41ca906243a5f740f3937949aa149ba8a8b8e68b3f3e1e3cd3f946387520e21eee55845e1f015a919a22f6a72bfaecd2cae946c91983b41f9ffabe97963bbde8f30eaf5fd3c5b8cecab8711bd269e441b6084f385726ff0")
}

@Test(arguments: [
    ("311c85db234aa2640afc4a76a735cf5b1f0fd68bd17fa181e1229ad867cc024d", "a5cf4d33f4a11ea877ba4aa573907330",
     "f011280887c7bb01df0fc4e17830e0b91fbb8be4b2267cb985ae25f33b527253",
     "3212d579ee35452ed23e0d0c92841aa7d31b2e9bdef2151e80d15860311c85db"),
    ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "002122232425262728292a2b2c2d2e2f",
     "0a2d0f607499a866848e41798a34315e4922c39fe55c6caf5bc322c4b8c08c6a",
     "9cb702d4fd6e5d25e864070e166e6218f6783e8511471a5ab7802cf200010203"),
    ("845fad32d10a4c7967da49a89fbe508ad24aa3150992b499b3b2c72cdc0f364c", "d6701fcd212ceb87c966e5318f5564a8",
     "d32e4a7f18252ae2b0406b84633e1117833ed75bda40011d1e1700e3e08a8ae7",
     "4ffc40d969d49934ed3740ff66d9179947a5e1d85c4c7f15555920c1845fad32"),
])
func temporaryKeyIV(newNonce: String, serverNonce: String, key: String, iv: String) {
    // Docs/MTProto.md §10.G7 (a), (b) and the sample's tmp_aes_key/iv.
    let (k, v) = HandshakeCrypto.temporaryKeyIV(newNonce: hexBytes(newNonce), serverNonce: hexBytes(serverNonce))
    #expect(hexString(k) == key)
    #expect(hexString(v) == iv)
}

@Test func rsaPadAndLegacyDecodeWithThePrivateKey() throws {
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    var rng = SplitMix64(seed: 9)
    for n in [0, 1, 100, 143, 144] {
        let data = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        let enc = try RSAPad.encrypt(data, key: priv.publicKey, using: &rng)
        let padded = try RSAPad.decrypt(enc, key: priv)
        #expect(padded.count == 192 && Array(padded.prefix(n)) == data)
        // Any flipped bit is refused with the one RSA_PAD error.
        var bad = enc
        bad[Int(rng.next() % 256)] ^= 1 << UInt8(rng.next() % 8)
        #expect(throws: MTProtoError.self) { _ = try RSAPad.decrypt(bad, key: priv) }
    }
    #expect(throws: MTProtoError.self) { _ = try RSAPad.encrypt([UInt8](repeating: 0, count: 145), key: priv.publicKey, using: &rng) }
    #expect(throws: MTProtoError.self) { _ = try RSAPad.decrypt([UInt8](repeating: 1, count: 255), key: priv) }
    // Legacy SHA-1 padding with p_q_inner_data.
    let inner = PQInnerData(pq: [0x17, 0xED, 0x48, 0x94, 0x1A, 0x08, 0xF9, 0x81], p: [0x49, 0x4C, 0x55, 0x3B],
                            q: [0x53, 0x91, 0x10, 0x73], nonce: [UInt8](repeating: 1, count: 16),
                            serverNonce: [UInt8](repeating: 2, count: 16), newNonce: [UInt8](repeating: 3, count: 32), kind: .legacy)
    let enc = try RSALegacyPad.encrypt(inner.serialized, key: priv.publicKey, using: &rng)
    let back = try RSALegacyPad.decrypt(enc, key: priv) { (r: inout TLReader) throws(MTProtoError) in try PQInnerData(reading: &r) }
    #expect(back == inner)
    var bad = enc
    bad[200] ^= 0x80
    #expect(throws: MTProtoError.self) {
        _ = try RSALegacyPad.decrypt(bad, key: priv) { (r: inout TLReader) throws(MTProtoError) in try PQInnerData(reading: &r) }
    }
}

/// Runs client and server against each other; returns both results.
private func runHandshake(mode: ClientHandshake.Mode = .permanent, seed: UInt64,
                          mutateServerConfig: (inout ServerHandshake.Configuration) -> Void = { _ in })
    throws -> (client: HandshakeResult, server: HandshakeResult) {
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    var sconf = ServerHandshake.Configuration(privateKeys: [priv], dc: 2)
    mutateServerConfig(&sconf)
    var server = try ServerHandshake(configuration: sconf)
    var client = ClientHandshake(configuration: .init(publicKeys: [priv.publicKey], dc: 2, mode: mode))
    var crng = SplitMix64(seed: seed), srng = SplitMix64(seed: seed ^ 0xFFFF)
    var toServer = client.start(using: &crng)
    for _ in 0..<6 {
        switch try server.receive(toServer, now: 1_800_000_000, using: &srng) {
        case .send(let b):
            guard case .send(let next) = try client.receive(b, now: 1_800_000_005, using: &crng) else {
                throw MTProtoError.handshakeFailed("client finished early")
            }
            toServer = next
        case .completed(let sres, let b):
            guard case .completed(let cres) = try client.receive(b, now: 1_800_000_005, using: &crng) else {
                throw MTProtoError.handshakeFailed("client did not finish")
            }
            return (cres, sres)
        case .failed(let b):
            // The client must check new_nonce_hash3 and end in the failed state.
            do { _ = try client.receive(b, now: 1_800_000_005, using: &crng) } catch {
                if client.isFailed { throw MTProtoError.handshakeFailed("dh_gen_fail") }
                throw error
            }
            throw MTProtoError.handshakeFailed("client accepted dh_gen_fail")
        }
    }
    throw MTProtoError.handshakeFailed("too many steps")
}

@Test func clientAndServerAgree() throws {
    let (c, s) = try runHandshake(seed: 1)
    #expect(c.authKey.withUnsafeBytes { Array($0) } == s.authKey.withUnsafeBytes { Array($0) })
    #expect(c.serverSalt == s.serverSalt)
    #expect(c.timeOffset == -5)
    #expect(s.dc == 2 && s.expiresIn == nil)
    let (tc, ts) = try runHandshake(mode: .temporary(expiresIn: 86_400), seed: 2)
    #expect(tc.authKey.id == ts.authKey.id)
    #expect(ts.expiresIn == 86_400 && tc.expiresIn == 86_400)
    #expect(tc.authKey.id != c.authKey.id)
}

@Test func serverAcceptsLegacyRSAFromPythonStyleClients() throws {
    // A client that sends p_q_inner_data with the SHA-1 padding (as Telethon does).
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    var server = try ServerHandshake(configuration: .init(privateKeys: [priv]))
    var rng = SplitMix64(seed: 77)
    let nonce = MTProtoRandom.bytes(16, using: &rng)
    guard case .send(let resBody) = try server.receive(ReqPQ(nonce: nonce, legacy: true).serialized, now: 0, using: &rng) else {
        Issue.record("no resPQ"); return
    }
    let res = try ResPQ(parsing: resBody)
    let (p, q) = try Factorization.factorPQ(BigUInt(bigEndian: res.pq))
    #expect(p.bigEndianBytes().count == 4 && q.bigEndianBytes().count == 4 && p < q)
    let inner = PQInnerData(pq: res.pq, p: p.bigEndianBytes(), q: q.bigEndianBytes(), nonce: nonce,
                            serverNonce: res.serverNonce, newNonce: MTProtoRandom.bytes(32, using: &rng), kind: .legacy)
    let enc = try RSALegacyPad.encrypt(inner.serialized, key: priv.publicKey, using: &rng)
    let req = ReqDHParams(nonce: nonce, serverNonce: res.serverNonce, p: inner.p, q: inner.q,
                          fingerprint: priv.publicKey.mtprotoFingerprint, encryptedData: enc)
    guard case .send(let dh) = try server.receive(req.serialized, now: 0, using: &rng) else { Issue.record("no DH params"); return }
    guard case .ok = try ServerDHParams(parsing: dh) else { Issue.record("not server_DH_params_ok"); return }
    // With legacy RSA refused, the same request fails.
    var strict = try ServerHandshake(configuration: .init(privateKeys: [priv], acceptLegacyRSA: false))
    var r2 = SplitMix64(seed: 78)
    _ = try strict.receive(ReqPQ(nonce: nonce).serialized, now: 0, using: &r2)
    #expect(throws: MTProtoError.self) { _ = try strict.receive(req.serialized, now: 0, using: &r2) }
}

@Test func clientRejectsBadServerMessagesAndStaysPut() throws {
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    var server = try ServerHandshake(configuration: .init(privateKeys: [priv]))
    var client = ClientHandshake(configuration: .init(publicKeys: [priv.publicKey], dc: 2))
    var crng = SplitMix64(seed: 3), srng = SplitMix64(seed: 4)
    let req = client.start(using: &crng)
    guard case .send(let resBody) = try server.receive(req, now: 0, using: &srng) else { Issue.record("no resPQ"); return }
    let res = try ResPQ(parsing: resBody)
    // Wrong nonce, unknown fingerprint, prime pq, truncated, wrong constructor: all typed errors.
    var wrongNonce = res
    wrongNonce.nonce[0] ^= 1
    #expect(throws: MTProtoError.self) { _ = try client.receive(wrongNonce.serialized, now: 0, using: &crng) }
    var unknownKey = res
    unknownKey.fingerprints = [1, 2]
    #expect(throws: MTProtoError.unknownFingerprint) { _ = try client.receive(unknownKey.serialized, now: 0, using: &crng) }
    var primePQ = res
    primePQ.pq = BigUInt(1_000_000_007).bigEndianBytes()
    #expect(throws: MTProtoError.self) { _ = try client.receive(primePQ.serialized, now: 0, using: &crng) }
    var threeFactors = res
    threeFactors.pq = BigUInt(3 * 5 * 7 * 1_000_003).bigEndianBytes()
    #expect(throws: MTProtoError.self) { _ = try client.receive(threeFactors.serialized, now: 0, using: &crng) }
    // A pq above 64 bits (the fuzzer's 240-bit one kept the client factoring for ~10 s) is refused
    // by its length, before any factoring (the error says which check refused it).
    var hugePQ = res
    hugePQ.pq = [UInt8](repeating: 0xC3, count: 30)
    #expect(throws: MTProtoError.handshakeFailed("pq is longer than 64 bits")) {
        _ = try client.receive(hugePQ.serialized, now: 0, using: &crng)
    }
    #expect(throws: MTProtoError.self) { _ = try client.receive(Array(resBody.dropLast(3)), now: 0, using: &crng) }
    #expect(throws: MTProtoError.self) { _ = try client.receive(DHGenAnswer(kind: .ok, nonce: res.nonce, serverNonce: res.serverNonce, newNonceHash: [UInt8](repeating: 0, count: 16)).serialized, now: 0, using: &crng) }
    // The genuine resPQ still works after all that.
    guard case .send(let reqDH) = try client.receive(resBody, now: 0, using: &crng) else { Issue.record("no req_DH_params"); return }
    guard case .send(let dhBody) = try server.receive(reqDH, now: 0, using: &srng) else { Issue.record("no DH params"); return }
    // A flipped bit in the encrypted answer (SHA-1 or parse failure), a wrong nonce: refused.
    guard case .ok(let n, let sn, let answer) = try ServerDHParams(parsing: dhBody) else { Issue.record("not ok"); return }
    for i in [0, 19, 20, 100, answer.count - 1] {
        var bad = answer
        bad[i] ^= 4
        #expect(throws: MTProtoError.self) {
            _ = try client.receive(ServerDHParams.ok(nonce: n, serverNonce: sn, encryptedAnswer: bad).serialized, now: 0, using: &crng)
        }
    }
    #expect(throws: MTProtoError.self) {
        _ = try client.receive(ServerDHParams.ok(nonce: n, serverNonce: sn, encryptedAnswer: Array(answer.dropLast(16))).serialized, now: 0, using: &crng)
    }
    guard case .send(let setBody) = try client.receive(dhBody, now: 0, using: &crng) else { Issue.record("no set_client_DH_params"); return }
    guard case .completed(_, let okBody) = try server.receive(setBody, now: 0, using: &srng) else { Issue.record("server not done"); return }
    var badHash = try DHGenAnswer(parsing: okBody)
    badHash.newNonceHash[5] ^= 1
    #expect(throws: MTProtoError.self) { _ = try client.receive(badHash.serialized, now: 0, using: &crng) }
    guard case .completed = try client.receive(okBody, now: 0, using: &crng) else { Issue.record("client not done"); return }
}

@Test func clientRejectsBadDHParameters() throws {
    // A server that offers a non-safe prime, a bad generator, or g_a out of range.
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    for (label, prime, g) in [("g = 2 is not a residue for Telegram's prime", DiffieHellman.telegramPrime, Int32(2)),
                              ("prime - 2 is not prime", try DiffieHellman.telegramPrime - BigUInt(2), Int32(4))] {
        var sconf = ServerHandshake.Configuration(privateKeys: [priv])
        sconf.prime = prime
        sconf.g = g
        // The server refuses a generator that is not allowed up front; build the answer by hand then.
        var client = ClientHandshake(configuration: .init(publicKeys: [priv.publicKey], dc: 2, primeRounds: 8))
        var crng = SplitMix64(seed: 5)
        let nonce = try ReqPQ(parsing: client.start(using: &crng)).nonce
        let serverNonce = [UInt8](repeating: 9, count: 16)
        let res = ResPQ(nonce: nonce, serverNonce: serverNonce, pq: BigUInt(1_229_739_323 * 1_402_015_859).bigEndianBytes(),
                        fingerprints: [priv.publicKey.mtprotoFingerprint])
        guard case .send(let reqDH) = try client.receive(res.serialized, now: 0, using: &crng) else { Issue.record("no req"); return }
        let padded = try RSAPad.decrypt(try ReqDHParams(parsing: reqDH).encryptedData, key: priv)
        var r = TLReader(padded)
        let inner = try PQInnerData(reading: &r)
        let (k, iv) = HandshakeCrypto.temporaryKeyIV(newNonce: inner.newNonce, serverNonce: serverNonce)
        let mod = try Modulus(prime)
        let gA = mod.publicPower(BigUInt(UInt64(g)), BigUInt(bigEndian: [UInt8](repeating: 0x5A, count: 256)))
        let answer = ServerDHInnerData(nonce: nonce, serverNonce: serverNonce, g: g, dhPrime: prime.bigEndianBytes(),
                                       gA: gA.bigEndianBytes(), serverTime: 0)
        var srng = SplitMix64(seed: 6)
        let enc = try HandshakeCrypto.hashAndEncrypt(answer.serialized, key: k, iv: iv, using: &srng)
        let msg = ServerDHParams.ok(nonce: nonce, serverNonce: serverNonce, encryptedAnswer: enc).serialized
        #expect(throws: MTProtoError.self, Comment(rawValue: label)) { _ = try client.receive(msg, now: 0, using: &crng) }
    }
}

@Test func serverRejectsBadClientMessages() throws {
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    var server = try ServerHandshake(configuration: .init(privateKeys: [priv], dc: 2))
    var srng = SplitMix64(seed: 11), crng = SplitMix64(seed: 12)
    // Nothing but req_pq is accepted first; garbage is a typed error.
    #expect(throws: MTProtoError.self) { _ = try server.receive([1, 2, 3], now: 0, using: &srng) }
    #expect(throws: MTProtoError.self) { _ = try server.receive(SetClientDHParams(nonce: [UInt8](repeating: 0, count: 16), serverNonce: [UInt8](repeating: 0, count: 16), encryptedData: [0]).serialized, now: 0, using: &srng) }
    var client = ClientHandshake(configuration: .init(publicKeys: [priv.publicKey], dc: 3))
    guard case .send(let resBody) = try server.receive(client.start(using: &crng), now: 0, using: &srng) else { return }
    guard case .send(let reqBody) = try client.receive(resBody, now: 0, using: &crng) else { return }
    // DC 3 asked of a DC 2 server: the −444 case.
    #expect(throws: MTProtoError.wrongDC(requested: 3, served: 2)) { _ = try server.receive(reqBody, now: 0, using: &srng) }
    var req = try ReqDHParams(parsing: reqBody)
    req.fingerprint ^= 1
    #expect(throws: MTProtoError.unknownFingerprint) { _ = try server.receive(req.serialized, now: 0, using: &srng) }
    req = try ReqDHParams(parsing: reqBody)
    req.encryptedData[17] ^= 1
    #expect(throws: MTProtoError.self) { _ = try server.receive(req.serialized, now: 0, using: &srng) }
    // Random bodies never trap.
    var fuzz = SplitMix64(seed: 13)
    for _ in 0..<300 {
        var b = MTProtoRandom.bytes(Int(fuzz.next() % 400), using: &fuzz)
        if b.count >= 4, fuzz.next() % 2 == 0 {
            let ids = [HandshakeConstructor.reqDHParams, HandshakeConstructor.setClientDHParams, HandshakeConstructor.reqPQMulti]
            let id = ids[Int(fuzz.next() % 3)]
            for k in 0..<4 { b[k] = UInt8(truncatingIfNeeded: id >> (8 * UInt32(k))) }
        }
        _ = try? server.receive(b, now: 0, using: &srng)
        _ = try? client.receive(b, now: 0, using: &crng)
    }
}

/// Counts calls; answers "in use" for the first `busy` ones.
private final class BusyKeys: @unchecked Sendable {
    var calls = 0
    let busy: Int
    init(busy: Int) { self.busy = busy }
    func inUse(_ id: UInt64) -> Bool {
        calls += 1
        return calls <= busy
    }
}

@Test func dhGenRetryAndFail() throws {
    // Two collisions: the client retries twice (retry_id = the rejected key's aux hash) and ends
    // with the same key as the server.
    let twice = BusyKeys(busy: 2)
    let (c, s) = try runHandshake(seed: 31) { $0.keyIdInUse = { twice.inUse($0) } }
    #expect(twice.calls == 3)
    #expect(c.authKey == s.authKey)
    // Always in use: after maxRetries the server answers dh_gen_fail and the client is failed.
    let always = BusyKeys(busy: .max)
    #expect(throws: MTProtoError.handshakeFailed("dh_gen_fail")) {
        _ = try runHandshake(seed: 32) { $0.keyIdInUse = { always.inUse($0) }; $0.maxRetries = 1 }
    }
    #expect(always.calls == 2)
}

@Test func serverRejectsOutOfRangeGBAndStaysPut() throws {
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    var server = try ServerHandshake(configuration: .init(privateKeys: [priv]))
    var client = ClientHandshake(configuration: .init(publicKeys: [priv.publicKey], dc: 2))
    var crng = SplitMix64(seed: 41), srng = SplitMix64(seed: 42)
    guard case .send(let res) = try server.receive(client.start(using: &crng), now: 0, using: &srng),
          case .send(let reqBody) = try client.receive(res, now: 0, using: &crng),
          case .send(let dh) = try server.receive(reqBody, now: 0, using: &srng),
          case .send(let goodSet) = try client.receive(dh, now: 0, using: &crng) else {
        Issue.record("handshake did not get to set_client_DH_params"); return
    }
    // Recover new_nonce as the server does, then send g_b values outside 2^1984 ≤ g_b ≤ p − 2^1984.
    let req = try ReqDHParams(parsing: reqBody)
    var r = TLReader(try RSAPad.decrypt(req.encryptedData, key: priv))
    let inner = try PQInnerData(reading: &r)
    let (k, iv) = HandshakeCrypto.temporaryKeyIV(newNonce: inner.newNonce, serverNonce: inner.serverNonce)
    let p = DiffieHellman.telegramPrime
    for gB in [BigUInt(1), BigUInt(2), try (BigUInt(1) << 1984) - BigUInt(1), try p - BigUInt(1), p, try p - (BigUInt(1) << 1983)] {
        let body = ClientDHInnerData(nonce: inner.nonce, serverNonce: inner.serverNonce, retryID: 0, gB: gB.bigEndianBytes())
        let enc = try HandshakeCrypto.hashAndEncrypt(body.serialized, key: k, iv: iv, using: &crng)
        let set = SetClientDHParams(nonce: inner.nonce, serverNonce: inner.serverNonce, encryptedData: enc)
        #expect(throws: MTProtoError.self) { _ = try server.receive(set.serialized, now: 0, using: &srng) }
    }
    // A wrong retry_id and a wrong nonce are refused too.
    let gB = DiffieHellman.telegramPrime >> 1
    for (retry, nonce) in [(UInt64(7), inner.nonce), (0, [UInt8](repeating: 0, count: 16))] {
        let body = ClientDHInnerData(nonce: nonce, serverNonce: inner.serverNonce, retryID: retry, gB: gB.bigEndianBytes())
        let enc = try HandshakeCrypto.hashAndEncrypt(body.serialized, key: k, iv: iv, using: &crng)
        let set = SetClientDHParams(nonce: inner.nonce, serverNonce: inner.serverNonce, encryptedData: enc)
        #expect(throws: MTProtoError.self) { _ = try server.receive(set.serialized, now: 0, using: &srng) }
    }
    // The server is still waiting: the genuine message completes the exchange.
    guard case .completed(let sres, let ok) = try server.receive(goodSet, now: 0, using: &srng),
          case .completed(let cres) = try client.receive(ok, now: 0, using: &crng) else {
        Issue.record("genuine set_client_DH_params refused after the bad ones"); return
    }
    #expect(sres.authKey == cres.authKey)
}

/// TDLib pads its unencrypted handshake messages: `(−size & 15) + 16·k` random bytes after the TL
/// object, counted in message_data_length. The server completes such a handshake; padding that breaks
/// the rule (not to a multiple of 16, or 256 bytes or more) is still refused.
@Test(arguments: [0, 1, 15] as [Int])
func serverAcceptsTDLibHandshakePadding(extraBlocks: Int) throws {
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    var server = try ServerHandshake(configuration: .init(privateKeys: [priv], dc: 2))
    var client = ClientHandshake(configuration: .init(publicKeys: [priv.publicKey], dc: 2))
    var srng = SplitMix64(seed: 31), crng = SplitMix64(seed: 32)
    func padded(_ body: [UInt8]) -> [UInt8] {
        body + [UInt8](repeating: 0xA5, count: (-body.count & 15) + 16 * extraBlocks)
    }
    var toServer = padded(client.start(using: &crng))
    #expect(toServer.count % 16 == 0)
    var serverKey: UInt64?
    for _ in 0..<3 {
        let answer: [UInt8]
        switch try server.receive(toServer, now: 0, using: &srng) {
        case .send(let b): answer = b
        case .completed(let result, let b): answer = b; serverKey = result.authKey.id
        case .failed: Issue.record("dh_gen_fail"); return
        }
        switch try client.receive(answer, now: 0, using: &crng) {
        case .send(let next): toServer = padded(next)
        case .completed(let result):
            #expect(serverKey == result.authKey.id)
            return
        }
    }
    Issue.record("the padded handshake did not complete")
}

@Test func serverRefusesOtherTrailingBytes() throws {
    let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
    var client = ClientHandshake(configuration: .init(publicKeys: [priv.publicKey], dc: 2))
    var crng = SplitMix64(seed: 33)
    let body = client.start(using: &crng)  // 20 bytes
    for extra in [4, 12 + 256, 28 + 16 * 15 + 16] {
        var server = try ServerHandshake(configuration: .init(privateKeys: [priv], dc: 2))
        var srng = SplitMix64(seed: 34)
        #expect(throws: MTProtoError.self, "\(extra) trailing bytes") {
            _ = try server.receive(body + [UInt8](repeating: 1, count: extra), now: 0, using: &srng)
        }
    }
}
