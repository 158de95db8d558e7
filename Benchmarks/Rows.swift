// The benchmark rows: every operation, the Rampart paths and whichever references are installed.

@_spi(Testing) import Rampart
import RampartReference
import RampartTestSupport

/// A 64-byte-aligned buffer of `size` pseudo-random bytes that lives for the whole run.
func buffer(_ size: Int) -> UnsafeMutableRawBufferPointer {
    let b = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 64)
    var g = SplitMix64(seed: UInt64(size))
    for i in 0..<b.count { b[i] = UInt8(truncatingIfNeeded: g.next()) }
    return UnsafeMutableRawBufferPointer(rebasing: b[0..<size])
}

let bulkSizes = [64, 1024, 16384, 1_048_576]

/// `sha1`, `sha256`, `sha512` rows.
func shaRows() -> [Row] {
    var rows: [Row] = []
    let out = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
    for alg in ["sha1", "sha256", "sha512"] {
        for size in bulkSizes {
            let data = UnsafeRawBufferPointer(buffer(size))
            var cs: [Contender] = []
            func rampart(_ backend: Backend) -> () -> Void {
                switch alg {
                case "sha1": return { var h = Insecure.SHA1(backend: backend); h.update(bufferPointer: data); consume(h.finalize().withUnsafeBytes { $0[0] }) }
                case "sha256": return { var h = SHA256(backend: backend); h.update(bufferPointer: data); consume(h.finalize().withUnsafeBytes { $0[0] }) }
                default: return { var h = SHA512(backend: backend); h.update(bufferPointer: data); consume(h.finalize().withUnsafeBytes { $0[0] }) }
                }
            }
            cs.append(Contender(implementation: "rampart", op: rampart(.hardware)))
            cs.append(Contender(implementation: "rampart-portable", op: rampart(.portable)))
            if let ctx = OpenSSL.shared?.digestContext(alg) {
                cs.append(Contender(implementation: "openssl") { ctx.hash(data, into: out); consume(out) })
            }
            if let s = Sodium.shared, s.supports(alg) {
                cs.append(Contender(implementation: "libsodium") { s.hash(alg, data, into: out); consume(out) })
            }
            rows.append(Row(operation: alg, size: size, unit: .mbps, contenders: cs))
        }
    }
    return rows
}

/// `hmac-sha256` rows: one-shot MAC per call with a 32-byte key, as a user calls it.
func hmacRows() -> [Row] {
    var rows: [Row] = []
    let out = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
    let keyBytes = buffer(32)
    let key = SymmetricKey(data: UnsafeRawBufferPointer(keyBytes))
    for size in bulkSizes {
        let data = UnsafeRawBufferPointer(buffer(size))
        var cs: [Contender] = [
            Contender(implementation: "rampart") {
                consume(HMAC<SHA256>.authenticationCode(for: data, using: key).withUnsafeBytes { $0[0] })
            },
            Contender(implementation: "rampart-portable") {
                var h = HMAC<SHA256>(key: key, makeHash: { SHA256(backend: .portable) })
                h.update(bufferPointer: data)
                consume(h.finalize().withUnsafeBytes { $0[0] })
            },
        ]
        if let o = OpenSSL.shared, o.supports("sha256") {
            cs.append(Contender(implementation: "openssl") { o.hmac("sha256", key: UnsafeRawBufferPointer(keyBytes), data: data, into: out); consume(out) })
        }
        if let s = Sodium.shared {
            cs.append(Contender(implementation: "libsodium") { s.hmacSHA256(key: UnsafeRawBufferPointer(keyBytes), data: data, into: out); consume(out) })
        }
        rows.append(Row(operation: "hmac-sha256", size: size, unit: .mbps, contenders: cs))
    }
    return rows
}

/// `pbkdf2-sha256-100000`: 100 000 iterations, 32-byte output, 8-byte password, 16-byte salt.
func pbkdf2Rows() -> [Row] {
    let pw = Array("password".utf8), salt = Array(UnsafeRawBufferPointer(buffer(16)))
    let out = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 64)
    func rampart(_ b: Backend) -> () -> Void {
        return {
            pw.withUnsafeBytes { p in salt.withUnsafeBytes { s in
                try! PBKDF2.derive(password: p, salt: s, prf: .hmacSHA256, iterations: 100_000, into: out, backend: b)
            } }
            consume(out.baseAddress!)
        }
    }
    var cs = [Contender(implementation: "rampart", op: rampart(.hardware)),
              Contender(implementation: "rampart-portable", op: rampart(.portable))]
    if let o = OpenSSL.shared, o.supports("sha256") {
        cs.append(Contender(implementation: "openssl") { consume(try! o.pbkdf2("sha256", password: pw, salt: salt, iterations: 100_000, length: 32)[0]) })
    }
    return [Row(operation: "pbkdf2-sha256-100000", size: 0, unit: .opsps, contenders: cs)]
}
