// ChaCha20-Poly1305 and Argon2id rows against libsodium (crypto_aead_chacha20poly1305_ietf_*,
// crypto_pwhash with Argon2id 1.3).

@_spi(Testing) import Rampart
import RampartReference

/// `chacha20-poly1305-seal` / `-open` at 16 KiB and 1 MiB (no associated data; libsodium's detached
/// layout differs only in where the tag goes).
func chachaPolyRows() -> [Row] {
    var rows: [Row] = []
    let keyBytes = buffer(32), nonceBytes = buffer(12)
    let key = SymmetricKey(data: UnsafeRawBufferPointer(keyBytes))
    let k = UnsafeRawPointer(keyBytes.baseAddress!), n = UnsafeRawPointer(nonceBytes.baseAddress!)
    let nonce = UnsafeRawBufferPointer(nonceBytes)
    let noAAD = UnsafeRawBufferPointer(start: nil, count: 0)
    let sodium = Sodium.shared?.chacha
    for size in [16 << 10, 1 << 20] {
        let data = UnsafeRawBufferPointer(buffer(size))
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: size + 16, alignment: 64)
        let body = UnsafeMutableRawBufferPointer(rebasing: out[0..<size])
        let tag = UnsafeMutableRawBufferPointer(rebasing: out[size...])
        func seal(_ b: Backend) -> () -> Void {
            return {
                try! ChaChaPoly.seal(data, into: body, tag: tag, using: key.pinned(to: b), nonce: nonce, authenticating: noAAD)
                consume(out.baseAddress!)
            }
        }
        var cs = [Contender(implementation: "rampart", op: seal(.hardware)),
                  Contender(implementation: "rampart-portable", op: seal(.portable))]
        if let s = sodium {
            cs.append(Contender(implementation: "libsodium") { s.aeadEncrypt(data, aad: noAAD, into: out.baseAddress!, nonce: n, key: k); consume(out.baseAddress!) })
        }
        rows.append(Row(operation: "chacha20-poly1305-seal", size: size, unit: .mbps, contenders: cs))

        // A valid box, opened into a separate buffer.
        let box = UnsafeMutableRawBufferPointer.allocate(byteCount: size + 16, alignment: 64)
        try! ChaChaPoly.seal(data, into: UnsafeMutableRawBufferPointer(rebasing: box[0..<size]),
                             tag: UnsafeMutableRawBufferPointer(rebasing: box[size...]), using: key, nonce: nonce, authenticating: noAAD)
        let ct = UnsafeRawBufferPointer(rebasing: box[0..<size]), boxTag = UnsafeRawBufferPointer(rebasing: box[size...])
        func open(_ b: Backend) -> () -> Void {
            return {
                try! ChaChaPoly.open(ct, into: body, tag: boxTag, using: key.pinned(to: b), nonce: nonce, authenticating: noAAD)
                consume(out.baseAddress!)
            }
        }
        cs = [Contender(implementation: "rampart", op: open(.hardware)),
              Contender(implementation: "rampart-portable", op: open(.portable))]
        if let s = sodium {
            cs.append(Contender(implementation: "libsodium") {
                _ = s.aeadDecrypt(UnsafeRawBufferPointer(box), aad: noAAD, into: out.baseAddress!, nonce: n, key: k); consume(out.baseAddress!)
            })
        }
        rows.append(Row(operation: "chacha20-poly1305-open", size: size, unit: .mbps, contenders: cs))
    }
    return rows
}

/// `argon2id-m65536-t3-p1`: 64 MiB, three passes, one lane, 32-byte output.
func argon2Rows() -> [Row] {
    let pw = Array("password".utf8), salt = Array(UnsafeRawBufferPointer(buffer(16)))
    let out = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 64)
    func rampart(_ b: Backend) -> () -> Void {
        return {
            let key = try! Argon2id.deriveKey(password: pw, salt: salt, iterations: 3, memoryKiB: 65536, parallelism: 1,
                                              outputByteCount: 32, backend: b)
            consume(key.withUnsafeBytes { $0[0] })
        }
    }
    var cs = [Contender(implementation: "rampart", op: rampart(.hardware)),
              Contender(implementation: "rampart-portable", op: rampart(.portable))]
    if let s = Sodium.shared?.chacha {
        cs.append(Contender(implementation: "libsodium") {
            pw.withUnsafeBytes { p in salt.withUnsafeBytes { sb in
                _ = s.argon2id(password: p, salt16: sb.baseAddress!, iterations: 3, memoryKiB: 65536, into: out)
            } }
            consume(out.baseAddress!)
        })
    }
    let ops = Dictionary(uniqueKeysWithValues: cs.map { ($0.implementation, $0.op) })
    return [Row(operation: "argon2id-m65536-t3-p1", size: 0, unit: .opsps, contenders: cs,
                memoryProbe: { name in ops[name].flatMap { op in peakMemory(op) } })]
}
