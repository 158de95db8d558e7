// Randomness rows (issue 17): `random-bytes`, Rampart's SecureRandom against OpenSSL's RAND_bytes (a
// per-thread AES-256 CTR-DRBG), libsodium's randombytes_buf (getrandom(2) per call on Linux) and, as an
// extra, the standard library's SystemRandomNumberGenerator (getrandom(2) per 8 bytes), which every API
// here used when the caller passed no generator; and `mtproto-server-pings`, the loopback test server's
// logic answering pings from 100 sessions, in pongs per CPU-second of the server alone, with the
// generator a server gets (SecureRandom) and, as the extra, with SystemRandomNumberGenerator.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartMTProto
import RampartMTProtoServer
import RampartReference
import RampartTestSupport

func randomRows() -> [Row] {
    var rows: [Row] = []
    for size in [16, 64, 1024] {
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)  // lives for the run
        var contenders = [Contender(implementation: "rampart") {
            SecureRandom.fill(out)
            consume(out[size - 1])
        }]
        if let o = OpenSSL.shared, o.randBytes(out.baseAddress!, size) {
            contenders.append(Contender(implementation: "openssl") {
                _ = o.randBytes(out.baseAddress!, size)
                consume(out[size - 1])
            })
        }
        if let s = Sodium.shared, s.randomBytes(out.baseAddress!, size) {
            contenders.append(Contender(implementation: "libsodium") {
                _ = s.randomBytes(out.baseAddress!, size)
                consume(out[size - 1])
            })
        }
        contenders.append(Contender(implementation: "system-rng") {
            var g = SystemRandomNumberGenerator()
            var i = 0
            while i < size {
                var v = g.next()
                let n = min(8, size - i)
                withUnsafeBytes(of: &v) { (out.baseAddress! + i).copyMemory(from: $0.baseAddress!, byteCount: n) }
                i += n
            }
            consume(out[size - 1])
        })
        rows.append(Row(operation: "random-bytes", size: size, unit: .mbps, contenders: contenders))
    }
    return rows
}

/// Unix time now (the test server's clock).
func unixNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

func mtprotoServerPingRows() -> [Row] {
    var keyRNG = SplitMix64(seed: 0x5045_4E47)
    guard let key = try? RSA.PrivateKey.generate(bits: 2048, using: &keyRNG) else { return [] }
    var conf = TestServer.Configuration(handshake: .init(privateKeys: [key], dc: 2))
    conf.rsaLimitPerAddress = nil
    conf.rsaLimitGlobal = nil
    guard var server = try? TestServer(configuration: conf) else { return [] }
    // 100 clients, each with its auth key and session on its own connection.
    var crng = SplitMix64(seed: 1), srng = SplitMix64(seed: 2)
    var clients: [(session: Session, transport: ClientTransport)] = []
    for id in 0..<100 {
        guard var c = try? ClientConnection(transport: .plain(.intermediate), handshake: .init(publicKeys: [key.publicKey], dc: 2),
                                            using: &crng),
              var toServer = try? c.start(now: unixNow(), using: &crng) else { fatalError("client setup") }
        server.open(id)
        for _ in 0..<4 where !toServer.isEmpty {
            let reply = server.receive(toServer, from: id, now: unixNow(), using: &srng)
            guard let r = try? c.receive(reply.send, now: unixNow(), using: &crng) else { fatalError("handshake \(id)") }
            toServer = r.send
        }
        guard let s = c.session else { fatalError("no session for client \(id)") }
        clients.append((s, c.transport))
    }
    var next = 0
    var pingId: Int64 = 0
    /// One ping from the next client (prepared untimed), the server's handling of it timed.
    func contender<R: RandomNumberGenerator>(_ name: String, _ rng: R) -> Contender {
        var rng = rng
        return Contender.selfTimed(name) {
            let k = next
            next = (next + 1) % clients.count
            pingId &+= 1
            let t = unixNow()
            guard let out = try? clients[k].session.encrypt(ServiceMessage.ping(pingId: pingId).encoded(), contentRelated: true,
                                                           now: t, using: &crng),
                  let bytes = try? clients[k].transport.encode(out.packet, using: &crng) else { fatalError("ping") }
            let t0 = now()
            let reply = server.receive(bytes, from: k, now: t, using: &rng)
            let dt = now() - t0
            guard !reply.close, let last = reply.send.last else { fatalError("the server did not answer: \(reply.log)") }
            consume(last)
            return dt
        }
    }
    return [Row(operation: "mtproto-server-pings", size: 0, unit: .opsps,
                contenders: [contender("rampart", SecureRandom()), contender("system-rng", SystemRandomNumberGenerator())])]
}
