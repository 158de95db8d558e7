// BLAKE2b and scrypt rows.

@_spi(Testing) import Rampart
import RampartReference

/// `blake2b-512` rows: unkeyed 64-byte BLAKE2b.
func blake2bRows() -> [Row] {
    var rows: [Row] = []
    let out = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
    for size in bulkSizes {
        let data = UnsafeRawBufferPointer(buffer(size))
        func rampart(_ b: Backend) -> () -> Void {
            return {
                var h = try! BLAKE2b(outputByteCount: 64, key: [], salt: nil, personal: nil, backend: b)
                h.update(bufferPointer: data)
                consume(h.finalize().withUnsafeBytes { $0[0] })
            }
        }
        var cs = [Contender(implementation: "rampart", op: rampart(.hardware)),
                  Contender(implementation: "rampart-portable", op: rampart(.portable))]
        if let ctx = OpenSSL.shared?.digestContext("blake2b-512") {
            cs.append(Contender(implementation: "openssl") { ctx.hash(data, into: out); consume(out) })
        }
        if let s = Sodium.shared {
            cs.append(Contender(implementation: "libsodium") { s.hash("blake2b-512", data, into: out); consume(out) })
        }
        rows.append(Row(operation: "blake2b-512", size: size, unit: .mbps, contenders: cs))
    }
    return rows
}

/// `scrypt-n65536-r8-p1`: 64 MiB of memory, 32-byte output; also reports peak memory per call.
func scryptRows() -> [Row] {
    let pw = Array("password".utf8), salt = Array(UnsafeRawBufferPointer(buffer(16)))
    let out = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 64)
    func rampart(_ b: Backend) -> () -> Void {
        return {
            pw.withUnsafeBytes { p in salt.withUnsafeBytes { s in
                try! Scrypt.derive(password: p, salt: s, n: 65536, r: 8, p: 1, into: out, memoryLimit: 1 << 30, backend: b)
            } }
            consume(out.baseAddress!)
        }
    }
    var cs = [Contender(implementation: "rampart", op: rampart(.hardware)),
              Contender(implementation: "rampart-portable", op: rampart(.portable))]
    if let o = OpenSSL.shared {
        cs.append(Contender(implementation: "openssl") { consume(try! o.scrypt(password: pw, salt: salt, n: 65536, r: 8, p: 1, length: 32)[0]) })
    }
    if let s = Sodium.shared {
        cs.append(Contender(implementation: "libsodium") { consume(try! s.scrypt(password: pw, salt: salt, n: 65536, r: 8, p: 1, length: 32)[0]) })
    }
    let ops = Dictionary(uniqueKeysWithValues: cs.map { ($0.implementation, $0.op) })
    return [Row(operation: "scrypt-n65536-r8-p1", size: 0, unit: .opsps, contenders: cs,
                memoryProbe: { name in ops[name].flatMap { op in peakMemory(op) } })]
}
