// XSalsa20, Poly1305 and secretbox rows (the names contain "salsa", "poly1305" or "secretbox";
// `--filter salsa` selects the stream rows only).

@_spi(Testing) import Rampart
import RampartReference

/// `xsalsa20`, `poly1305`, `secretbox-seal`, `secretbox-open` at every bulk size and at 256 bytes (the
/// size of a Threema message box, between the one- and the multi-block paths).
func salsaRows() -> [Row] {
    var rows: [Row] = []
    let keyBytes = buffer(32), nonceBytes = buffer(24)
    let key = SymmetricKey(data: UnsafeRawBufferPointer(keyBytes))
    let nonce = Array(UnsafeRawBufferPointer(nonceBytes))
    let k = UnsafeRawPointer(keyBytes.baseAddress!), n = UnsafeRawPointer(nonceBytes.baseAddress!)
    let sodium = Sodium.shared?.salsa
    for size in [64, 256] + bulkSizes.filter({ $0 > 64 }) {
        let data = UnsafeRawBufferPointer(buffer(size))
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: size + 16, alignment: 64)
        let outBody = UnsafeMutableRawBufferPointer(rebasing: out[0..<size])

        // xsalsa20: keystream XOR of the buffer under a fresh (key, nonce): the one-shot raw-buffer call
        // that corresponds to crypto_stream_xsalsa20_xor.
        func stream(_ b: Backend) -> () -> Void {
            return {
                try! XSalsa20.xor(data, into: outBody, key: key.pinned(to: b), nonce: nonce)
                consume(out.baseAddress!)
            }
        }
        var cs = [Contender(implementation: "rampart", op: stream(.hardware)),
                  Contender(implementation: "rampart-portable", op: stream(.portable))]
        if let s = sodium {
            cs.append(Contender(implementation: "libsodium") { s.xsalsa20Xor(data, into: out.baseAddress!, nonce: n, key: k); consume(out.baseAddress!) })
        }
        rows.append(Row(operation: "xsalsa20", size: size, unit: .mbps, contenders: cs))

        // poly1305: one-shot tag under a 32-byte key.
        cs = [Contender(implementation: "rampart") {
            consume(try! Poly1305.authenticationCode(for: data, using: key).withUnsafeBytes { $0[0] })
        }]
        if let s = sodium {
            cs.append(Contender(implementation: "libsodium") { s.poly1305(data, into: out.baseAddress!, key: k); consume(out.baseAddress!) })
        }
        rows.append(Row(operation: "poly1305", size: size, unit: .mbps, contenders: cs))

        // secretbox-seal: tag || ciphertext into a caller buffer (crypto_secretbox_easy).
        func seal(_ b: Backend) -> () -> Void {
            return {
                try! SecretBox.seal(data, into: out, using: key.pinned(to: b), nonce: nonce)
                consume(out.baseAddress!)
            }
        }
        cs = [Contender(implementation: "rampart", op: seal(.hardware)),
              Contender(implementation: "rampart-portable", op: seal(.portable))]
        if let s = sodium {
            cs.append(Contender(implementation: "libsodium") { s.secretboxEasy(data, into: out.baseAddress!, nonce: n, key: k); consume(out.baseAddress!) })
        }
        rows.append(Row(operation: "secretbox-seal", size: size, unit: .mbps, contenders: cs))

        // secretbox-open: a valid box of `size` message bytes, opened into a separate buffer.
        let box = UnsafeMutableRawBufferPointer.allocate(byteCount: size + 16, alignment: 64)
        try! SecretBox.seal(data, into: box, using: key, nonce: nonce)
        let boxIn = UnsafeRawBufferPointer(box)
        func open(_ b: Backend) -> () -> Void {
            return {
                try! SecretBox.open(boxIn, into: outBody, using: key.pinned(to: b), nonce: nonce)
                consume(out.baseAddress!)
            }
        }
        cs = [Contender(implementation: "rampart", op: open(.hardware)),
              Contender(implementation: "rampart-portable", op: open(.portable))]
        if let s = sodium {
            cs.append(Contender(implementation: "libsodium") {
                _ = s.secretboxOpenEasy(boxIn, into: out.baseAddress!, nonce: n, key: k); consume(out.baseAddress!)
            })
        }
        rows.append(Row(operation: "secretbox-open", size: size, unit: .mbps, contenders: cs))
    }
    return rows
}
