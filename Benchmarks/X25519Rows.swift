// X25519 and NaCl box rows.

@_spi(Testing) import Rampart
import RampartReference

/// `x25519`: one scalar multiplication with a fixed private key and peer public key (key agreement,
/// including the zero check).
func x25519Rows() -> [Row] {
    let skBytes = Array(UnsafeRawBufferPointer(buffer(32)))
    let peerSecret = Array(UnsafeRawBufferPointer(buffer(33)).dropFirst())
    let sk = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: skBytes)
    let peer = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: peerSecret).publicKey
    let out = UnsafeMutableRawPointer.allocate(byteCount: 32, alignment: 64)
    var cs = [Contender(implementation: "rampart") {
        let s = try! sk.sharedSecretFromKeyAgreement(with: peer)
        consume(s.withUnsafeBytes { $0[0] })
    }]
    if let o = OpenSSLX25519.shared, let x = o.exchange(privateKey: skBytes, peerPublicKey: peer.rawRepresentation) {
        cs.append(Contender(implementation: "openssl") { _ = x.derive(into: out); consume(out) })
    }
    if let s = SodiumBox.shared {
        let pk = peer.rawRepresentation
        cs.append(Contender(implementation: "libsodium") {
            skBytes.withUnsafeBytes { k in pk.withUnsafeBytes { p in
                _ = s.scalarMult(scalar: k.baseAddress!, point: p.baseAddress!, into: out)
            } }
            consume(out)
        })
    }
    return [Row(operation: "x25519", size: 0, unit: .opsps, contenders: cs)]
}

/// `x25519-batch`: eight independent scalar multiplications (eight private keys, eight peers) as one
/// operation: through the batch call (`rampart`, the lane kernel where there is one), one by one
/// (`rampart-one-by-one`), and one by one in OpenSSL and libsodium. The goal is the batch at twice the
/// one-by-one rate.
func x25519BatchRows() -> [Row] {
    let n = 8
    let scalars = (0..<n).map { Array(UnsafeRawBufferPointer(buffer(40 + $0)).prefix(32)) }
    let points = (0..<n).map { i in
        try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Array(UnsafeRawBufferPointer(buffer(64 + i)).prefix(32))).publicKey.rawRepresentation
    }
    let out = UnsafeMutableRawPointer.allocate(byteCount: 32, alignment: 64)
    var cs = [Contender(implementation: "rampart") {
        let r = try! Curve25519.scalarMultiply(scalars: scalars, points: points)
        consume(r[n - 1][0])
    }, Contender(implementation: "rampart-one-by-one") {
        for i in 0..<n { consume(try! Curve25519.scalarMultiply(scalar: scalars[i], point: points[i])[0]) }
    }]
    if let o = OpenSSLX25519.shared {
        let xs = (0..<n).compactMap { o.exchange(privateKey: scalars[$0], peerPublicKey: points[$0]) }
        if xs.count == n {
            cs.append(Contender(implementation: "openssl") { for x in xs { _ = x.derive(into: out) }; consume(out) })
        }
    }
    if let s = SodiumBox.shared {
        cs.append(Contender(implementation: "libsodium") {
            for i in 0..<n {
                scalars[i].withUnsafeBytes { k in points[i].withUnsafeBytes { p in
                    _ = s.scalarMult(scalar: k.baseAddress!, point: p.baseAddress!, into: out)
                } }
            }
            consume(out)
        })
    }
    return [Row(operation: "x25519-batch", size: n, unit: .opsps, contenders: cs)]
}

/// `box-beforenm` (X25519 + HSalsa20) and `box-seal` with a precomputed key at 64, 256, 1024, 16384 bytes.
func boxRows() -> [Row] {
    let skBytes = Array(UnsafeRawBufferPointer(buffer(32)))
    let peerSecret = Array(UnsafeRawBufferPointer(buffer(33)).dropFirst())
    let sk = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: skBytes)
    let peer = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: peerSecret).publicKey
    let pk = peer.rawRepresentation
    let out = UnsafeMutableRawPointer.allocate(byteCount: 16384 + 16, alignment: 64)
    var rows: [Row] = []
    var cs = [Contender(implementation: "rampart") {
        let k = try! Box.SharedKey(publicKey: peer, privateKey: sk)
        consume(k.symmetricKey.withUnsafeBytes { $0[0] })
    }]
    if let s = SodiumBox.shared {
        cs.append(Contender(implementation: "libsodium") {
            pk.withUnsafeBytes { p in skBytes.withUnsafeBytes { k in
                _ = s.beforeNM(publicKey: p.baseAddress!, secretKey: k.baseAddress!, into: out)
            } }
            consume(out)
        })
    }
    rows.append(Row(operation: "box-beforenm", size: 0, unit: .opsps, contenders: cs))

    let shared = try! Box.SharedKey(publicKey: peer, privateKey: sk)
    let sodiumKey = shared.symmetricKey.withUnsafeBytes { Array($0) }
    let nonce = Array(UnsafeRawBufferPointer(buffer(24)))
    for size in [64, 256, 1024, 16384] {
        let m = UnsafeRawBufferPointer(buffer(size))
        let o = UnsafeMutableRawBufferPointer(start: out, count: size + 16)
        var cs = [Contender(implementation: "rampart") {
            try! shared.seal(m, into: o, nonce: nonce)
            consume(out)
        }]
        if let s = SodiumBox.shared {
            cs.append(Contender(implementation: "libsodium") {
                nonce.withUnsafeBytes { n in sodiumKey.withUnsafeBytes { k in
                    s.sealAfterNM(m, into: out, nonce: n.baseAddress!, key: k.baseAddress!)
                } }
                consume(out)
            })
        }
        rows.append(Row(operation: "box-seal", size: size, unit: .mbps, contenders: cs))
    }
    return rows
}
