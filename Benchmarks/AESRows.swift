// AES rows: IGE, CBC, CTR and GCM with AES-256, Rampart's two paths against OpenSSL and libsodium.
//
// IGE rows carry two OpenSSL references: `openssl` is the legacy AES_ige_encrypt (table-based, what
// MTProto clients built on OpenSSL call), `openssl-cbc-encrypt` is EVP AES-256-CBC encryption of the
// same buffer: a sequential AES-NI chain, the physical speed limit of IGE.

@_spi(Testing) import Rampart
import RampartReference

func aesRows() -> [Row] {
    var rows: [Row] = []
    let keyBytes = Array(UnsafeRawBufferPointer(buffer(32)))
    let hw = try! AES.Cipher(key: keyBytes, backend: .hardware)
    let sw = try! AES.Cipher(key: keyBytes, backend: .portable)
    // IGE and CBC advance their IV on every call (the chain continues); the GCM nonce is separate.
    let iv32 = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 16)
    iv32.copyMemory(from: UnsafeRawBufferPointer(buffer(32)))
    let iv16 = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 16)
    iv16.copyMemory(from: UnsafeRawBufferPointer(buffer(16)))
    let nonce = UnsafeRawBufferPointer(buffer(12))
    let noAAD = UnsafeRawBufferPointer(start: nil, count: 0)
    let tag = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 16)
    let ossl = OpenSSLAES.shared
    let sodium = SodiumAES256GCM.shared

    for size in bulkSizes {
        let data = buffer(size)  // processed in place, again and again
        let src = UnsafeRawBufferPointer(buffer(size))
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: size + 16, alignment: 64)
        let work = UnsafeMutableRawBufferPointer(rebasing: out[0..<size])

        // EVP AES-256-CBC encryption of the same buffer: the IGE rows' second reference.
        let cbcEncryptRef: Contender? = ossl?.context(mode: "cbc", key: keyBytes, encrypt: true).map { ctx in
            Contender(implementation: "openssl-cbc-encrypt") { ctx.run(iv: iv16.baseAddress, src, into: out.baseAddress!); consume(out.baseAddress!) }
        }

        for encrypt in [true, false] {
            func ige(_ c: AES.Cipher) -> () -> Void {
                encrypt ? { try! AES.IGE.encrypt(data, using: c, iv: iv32); consume(data.baseAddress!) }
                        : { try! AES.IGE.decrypt(data, using: c, iv: iv32); consume(data.baseAddress!) }
            }
            var cs = [Contender(implementation: "rampart", op: ige(hw)),
                      Contender(implementation: "rampart-portable", op: ige(sw))]
            if let k = ossl?.legacyKey(keyBytes, encrypt: encrypt) {
                cs.append(Contender(implementation: "openssl") { k.ige(src, into: out.baseAddress!, iv: iv32.baseAddress!); consume(out.baseAddress!) })
            }
            if let r = cbcEncryptRef { cs.append(r) }
            rows.append(Row(operation: "aes256-ige-\(encrypt ? "encrypt" : "decrypt")", size: size, unit: .mbps, contenders: cs))
        }

        for encrypt in [true, false] {
            func cbc(_ c: AES.Cipher) -> () -> Void {
                encrypt ? { try! AES.CBC.encrypt(data, using: c, iv: iv16); consume(data.baseAddress!) }
                        : { try! AES.CBC.decrypt(data, using: c, iv: iv16); consume(data.baseAddress!) }
            }
            var cs = [Contender(implementation: "rampart", op: cbc(hw)),
                      Contender(implementation: "rampart-portable", op: cbc(sw))]
            if let ctx = ossl?.context(mode: "cbc", key: keyBytes, encrypt: encrypt) {
                cs.append(Contender(implementation: "openssl") { ctx.run(iv: iv16.baseAddress, src, into: out.baseAddress!); consume(out.baseAddress!) })
            }
            rows.append(Row(operation: "aes256-cbc-\(encrypt ? "encrypt" : "decrypt")", size: size, unit: .mbps, contenders: cs))
        }

        do {
            let counter = Array(UnsafeRawBufferPointer(iv16))
            let sHW = try! AES.CTR(cipher: hw, counter: counter), sSW = try! AES.CTR(cipher: sw, counter: counter)
            var cs = [Contender(implementation: "rampart") { try! sHW.xor(src, into: work); consume(work.baseAddress!) },
                      Contender(implementation: "rampart-portable") { try! sSW.xor(src, into: work); consume(work.baseAddress!) }]
            if let ctx = ossl?.context(mode: "ctr", key: keyBytes, encrypt: true) {
                cs.append(Contender(implementation: "openssl") { ctx.run(iv: iv16.baseAddress, src, into: out.baseAddress!); consume(out.baseAddress!) })
            }
            rows.append(Row(operation: "aes256-ctr", size: size, unit: .mbps, contenders: cs))
        }

        // GCM: seal `src` into `work`; open a valid sealed copy of `src` into `work`. Every side keeps
        // its per-key GCM state between calls: OpenSSL an EVP context, libsodium the beforenm state,
        // Rampart a cipher made with init(gcmKey:) (key schedule and GHASH powers).
        let gcmHW = try! AES.Cipher(gcmKey: SymmetricKey(data: keyBytes))
        let sealed = UnsafeMutableRawBufferPointer.allocate(byteCount: size + 16, alignment: 64)
        let sealedTag = UnsafeMutableRawBufferPointer(rebasing: sealed[size...])
        try! AES.GCM.seal(src, into: UnsafeMutableRawBufferPointer(rebasing: sealed[..<size]), tag: sealedTag,
                          using: hw, nonce: nonce, authenticating: noAAD)
        let sealedCT = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(sealed)[..<size])
        do {
            func seal(_ c: AES.Cipher) -> () -> Void {
                { try! AES.GCM.seal(src, into: work, tag: tag, using: c, nonce: nonce, authenticating: noAAD); consume(tag.baseAddress!) }
            }
            var cs = [Contender(implementation: "rampart", op: seal(gcmHW)), Contender(implementation: "rampart-portable", op: seal(sw))]
            if let ctx = ossl?.context(mode: "gcm", key: keyBytes, encrypt: true) {
                cs.append(Contender(implementation: "openssl") {
                    _ = ctx.gcm(nonce: nonce, aad: noAAD, src, into: out.baseAddress!, tag: tag.baseAddress!); consume(tag.baseAddress!)
                })
            }
            if let st = sodium?.state(key: keyBytes) {
                cs.append(Contender(implementation: "libsodium") { st.seal(nonce: nonce.baseAddress!, aad: noAAD, src, into: out.baseAddress!); consume(out.baseAddress!) })
            }
            rows.append(Row(operation: "aes256-gcm-seal", size: size, unit: .mbps, contenders: cs))
        }
        do {
            let tagIn = UnsafeRawBufferPointer(sealedTag)
            func open(_ c: AES.Cipher) -> () -> Void {
                { try! AES.GCM.open(sealedCT, into: work, tag: tagIn, using: c, nonce: nonce, authenticating: noAAD); consume(work.baseAddress!) }
            }
            var cs = [Contender(implementation: "rampart", op: open(gcmHW)), Contender(implementation: "rampart-portable", op: open(sw))]
            if let ctx = ossl?.context(mode: "gcm", key: keyBytes, encrypt: false) {
                let t = UnsafeMutableRawPointer(mutating: tagIn.baseAddress!)
                cs.append(Contender(implementation: "openssl") {
                    if !ctx.gcm(nonce: nonce, aad: noAAD, sealedCT, into: out.baseAddress!, tag: t) { fail("OpenSSL GCM open failed") }
                    consume(out.baseAddress!)
                })
            }
            if let st = sodium?.state(key: keyBytes) {
                let all = UnsafeRawBufferPointer(sealed)
                cs.append(Contender(implementation: "libsodium") {
                    if !st.open(nonce: nonce.baseAddress!, aad: noAAD, all, into: out.baseAddress!) { fail("libsodium GCM open failed") }
                    consume(out.baseAddress!)
                })
            }
            rows.append(Row(operation: "aes256-gcm-open", size: size, unit: .mbps, contenders: cs))
        }
    }
    return rows
}
