// `mtproto-handshake`: one complete auth-key exchange, client and server state machines in one
// process (req_pq_multi … dh_gen_ok: pq factoring, RSA_PAD, RSA private decode, four 2048-bit
// constant-time modular exponentiations), in handshakes per second. No reference composes this.

import RampartMTProto
import RampartTestSupport

func mtprotoHandshakeRows() -> [Row] {
    var keyRNG = SplitMix64(seed: 0x4D54_5052)
    guard let key = try? RSA.PrivateKey.generate(bits: 2048, using: &keyRNG),
          let serverTemplate = try? ServerHandshake(configuration: .init(privateKeys: [key], dc: 2)) else {
        return []
    }
    var seed: UInt64 = 1
    let op = {
        seed &+= 1
        var crng = SplitMix64(seed: seed), srng = SplitMix64(seed: ~seed)
        var client = ClientHandshake(configuration: .init(publicKeys: [key.publicKey], dc: 2))
        var server = serverTemplate
        var toServer = client.start(using: &crng)
        for _ in 0..<4 {
            guard let step = try? server.receive(toServer, now: 1_800_000_000, using: &srng) else { fatalError("server step failed") }
            switch step {
            case .send(let b):
                guard case .send(let next)? = try? client.receive(b, now: 1_800_000_000, using: &crng) else { fatalError("client step failed") }
                toServer = next
            case .completed(_, let b):
                guard case .completed(let r)? = try? client.receive(b, now: 1_800_000_000, using: &crng) else { fatalError("client did not finish") }
                consume(r.authKey.idBytes[0])
                return
            case .failed:
                fatalError("dh_gen_fail")
            }
        }
        fatalError("handshake did not finish")
    }
    return [Row(operation: "mtproto-handshake", size: 0, unit: .opsps, contenders: [Contender(implementation: "rampart", op: op)])]
}
