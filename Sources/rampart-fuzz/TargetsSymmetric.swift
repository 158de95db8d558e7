// Authenticated-decryption and cipher-mode targets: NaCl secretbox and box, AES-GCM, and the AES
// modes whose decryption reads file input (CBC with PKCS#7, IGE, CTR).
//
// Properties: a box opens only if it is exactly what seal produces (anything else fails with no
// plaintext: separate output buffers are zeroed, in-place buffers keep the ciphertext for secretbox
// and are wiped for GCM); every entry point agrees with the others and the hardware and portable
// backends agree; PKCS#7 decryption accepts exactly the valid paddings and round-trips.

@_spi(Testing) import Rampart

/// The outcome of one open: the plaintext or the error.
typealias OpenResult = Result<[UInt8], RampartError>

func result(_ body: () throws(RampartError) -> [UInt8]) -> OpenResult {
    Result { () throws(RampartError) in try body() }
}

// MARK: - secretbox-open

let secretBoxOpenTarget = FuzzTarget(
    name: "secretbox-open",
    summary: "SecretBox.open (combined, detached, into-buffer, in-place; portable and hardware) on arbitrary and sealed-then-mutated boxes: only genuine boxes open, failures release nothing",
    maxLength: 8192,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let key: SymmetricKey = flags & 4 == 0 ? Fixtures.naclKey : SymmetricKey(data: input.bytes(Int(input.byte() % 40)))
        let nonce = flags & 8 == 0 ? input.fixed(24) : input.bytes(Int(input.byte() % 30))
        var box: [UInt8]
        var genuine: [UInt8]? = nil
        var message: [UInt8] = []
        if flags & 1 == 0 {
            box = input.rest()
        } else {
            message = input.bytes(Int(input.u16() % 4000))
            guard let sealed = try? SecretBox.seal(message, using: Fixtures.naclKey, nonce: nonce) else {
                FuzzCheck.require(nonce.count != 24, "seal refused a 24-byte nonce")
                return
            }
            let portable = try? SecretBox.seal(message, using: Fixtures.naclKey.pinned(to: .portable), nonce: nonce)
            FuzzCheck.require(portable == sealed, "portable and hardware seal differ")
            genuine = sealed
            box = flags & 2 == 0 ? sealed : mutate(sealed, &input)
        }
        let hw = result { () throws(RampartError) in try SecretBox.open(box, using: key.pinned(to: .hardware), nonce: nonce) }
        let pt = result { () throws(RampartError) in try SecretBox.open(box, using: key.pinned(to: .portable), nonce: nonce) }
        FuzzCheck.require(hw == pt, "secretbox open: hardware and portable differ")
        // Into a separate buffer: zero-filled on failure.
        if box.count >= 16 {
            let detached = result { () throws(RampartError) in
                try SecretBox.openDetached(ciphertext: box[16...], tag: box[0..<16], using: key, nonce: nonce)
            }
            FuzzCheck.require(detached == hw, "detached open differs from combined open")
            var out = [UInt8](repeating: 0xA5, count: box.count - 16)
            let into = box.withUnsafeBytes { b in
                out.withUnsafeMutableBytes { o in
                    Result { () throws(RampartError) in try SecretBox.open(b, into: o, using: key, nonce: nonce) }
                }
            }
            switch (into, hw) {
            case (.success, .success(let m)): FuzzCheck.require(out == m, "open(into:) plaintext")
            case (.failure(let e), .failure(let e2)):
                FuzzCheck.require(e == e2, "open(into:) error \(e) vs \(e2)")
                if e == .authenticationFailure { FuzzCheck.require(out.allSatisfy { $0 == 0 }, "open(into:) left bytes after a failure") }
            default: FuzzCheck.fail("open(into:) disagrees with open")
            }
            // In place: the buffer keeps the ciphertext on failure.
            var buf = Array(box[16...])
            let tag = Array(box[0..<16])
            let inPlace = buf.withUnsafeMutableBytes { b in
                tag.withUnsafeBytes { t in Result { () throws(RampartError) in try SecretBox.open(inPlace: b, tag: t, using: key, nonce: nonce) } }
            }
            switch (inPlace, hw) {
            case (.success, .success(let m)): FuzzCheck.require(buf == m, "open(inPlace:) plaintext")
            case (.failure, .failure): FuzzCheck.require(buf == Array(box[16...]), "open(inPlace:) changed the buffer on failure")
            default: FuzzCheck.fail("open(inPlace:) disagrees with open")
            }
        }
        switch hw {
        case .success(let m):
            FuzzStats.note("secretbox: opened")
            // Only what seal makes opens.
            guard let again = try? SecretBox.seal(m, using: key, nonce: nonce) else { FuzzCheck.fail("re-seal failed") }
            FuzzCheck.require(again == box, "an opened box is not what seal produces for its plaintext")
            if let g = genuine { FuzzCheck.require(box == g && m == message, "a modified box opened") }
        case .failure(let e):
            FuzzCheck.require(genuine == nil || box != genuine || key != Fixtures.naclKey || nonce.count != 24,
                              "a genuine box did not open: \(e)")
            switch e {
            case .authenticationFailure: FuzzCheck.require(box.count >= 16 && nonce.count == 24 && key.byteCount == 32, "auth failure for bad lengths")
            case .invalidInputLength: FuzzCheck.require(box.count < 16, "invalidInputLength")
            case .invalidNonceLength: FuzzCheck.require(nonce.count != 24, "invalidNonceLength")
            case .invalidKeyLength: FuzzCheck.require(key.byteCount != 32, "invalidKeyLength")
            default: FuzzCheck.fail("unexpected secretbox error \(e)")
            }
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        for n in [0, 31, 33, 1200] {
            var w = SeedWriter()
            w.byte(1)
            w.raw([UInt8](repeating: 0x24, count: 24))
            w.u16(UInt16(n))
            w.raw((0..<n).map { UInt8(truncatingIfNeeded: $0) })
            out.append(w.bytes)
        }
        var w = SeedWriter()
        w.byte(0)
        w.raw([UInt8](repeating: 0x24, count: 24))
        if let b = try? SecretBox.seal([UInt8](repeating: 1, count: 40), using: Fixtures.naclKey, nonce: [UInt8](repeating: 0x24, count: 24)) {
            w.raw(b)
        }
        out.append(w.bytes)
        return out
    })

// MARK: - box-open

let boxOpenTarget = FuzzTarget(
    name: "box-open",
    summary: "Box.open and Box.SharedKey.open with arbitrary peer public keys and boxes: small-order keys refused, only genuine boxes open, one-shot equals precomputed",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let pkBytes = flags & 1 == 0 ? Fixtures.aliceNaCl.publicKey.rawRepresentation : input.bytes(Int(input.byte() % 40))
        let nonce = input.fixed(24)
        guard let pk = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: pkBytes) else {
            FuzzCheck.require(pkBytes.count != 32, "a 32-byte public key was refused")
            return
        }
        FuzzCheck.require(pkBytes.count == 32 && pk.rawRepresentation == pkBytes, "public key bytes")
        var box: [UInt8]
        var genuine: [UInt8]? = nil
        if flags & 2 == 0 {
            box = input.rest()
        } else {
            let message = input.bytes(Int(input.u16() % 2000))
            guard let sealed = try? Box.seal(message, nonce: nonce, to: Fixtures.bobNaCl.publicKey, from: Fixtures.aliceNaCl) else {
                FuzzCheck.fail("box seal failed")
            }
            genuine = sealed
            box = flags & 4 == 0 ? sealed : mutate(sealed, &input)
        }
        let oneShot = result { () throws(RampartError) in try Box.open(box, nonce: nonce, from: pk, to: Fixtures.bobNaCl) }
        // The all-zero shared secret is exactly the case the key agreement refuses.
        let raw = try? Curve25519.scalarMultiply(scalar: Fixtures.bobNaCl.rawRepresentation, point: pkBytes)
        let smallOrder = raw.map { $0.allSatisfy { $0 == 0 } } ?? true
        let shared = try? Box.SharedKey(publicKey: pk, privateKey: Fixtures.bobNaCl)
        FuzzCheck.require((shared == nil) == smallOrder, "SharedKey refusal does not match an all-zero X25519 result")
        if smallOrder {
            FuzzCheck.require(oneShot == .failure(.invalidPublicKey), "small-order key: \(oneShot)")
            return
        }
        let pre = result { () throws(RampartError) in try shared!.open(box, nonce: nonce) }
        FuzzCheck.require(pre == oneShot, "precomputed and one-shot open differ")
        if case .success(let m) = oneShot {
            FuzzStats.note("box: opened")
            FuzzCheck.require((try? shared!.seal(m, nonce: nonce)) == box, "an opened box is not what seal produces")
            if let g = genuine { FuzzCheck.require(box == g, "a modified box opened") }
        } else if let g = genuine, box == g, pkBytes == Fixtures.aliceNaCl.publicKey.rawRepresentation {
            FuzzCheck.fail("a genuine box did not open: \(oneShot)")
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        var w = SeedWriter()
        w.byte(2); w.raw([UInt8](repeating: 0x42, count: 24)); w.u16(50); w.raw([UInt8](repeating: 7, count: 50))
        out.append(w.bytes)
        var z = SeedWriter()
        z.byte(1); z.byte(32); z.raw([UInt8](repeating: 0, count: 32)); z.raw([UInt8](repeating: 0x42, count: 24)); z.raw([UInt8](repeating: 9, count: 40))
        out.append(z.bytes)
        var e = SeedWriter()  // a point of order 8 (RFC 7748's list)
        e.byte(1); e.byte(32)
        e.raw([0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3, 0xfa, 0xf1, 0x9f, 0xc4, 0x6a,
               0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32, 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00])
        e.raw([UInt8](repeating: 0x42, count: 24))
        out.append(e.bytes)
        return out
    })

// MARK: - gcm-open

let gcmOpenTarget = FuzzTarget(
    name: "gcm-open",
    summary: "AES.GCM.open (SealedBox, combined form, raw buffers; AES-NI/PCLMUL and portable) with any key size, nonce length, AAD: only genuine boxes open, failures wipe the output",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let sizeChoice = Int(flags >> 5)
        let keyBytes = input.bytes(sizeChoice < 6 ? [16, 24, 32][sizeChoice % 3] : sizeChoice == 6 ? 0 : Int(input.byte() % 40))
        let nonce = input.bytes(flags & 1 == 0 ? 12 : Int(input.byte() % 80))
        let aad = input.lengthPrefixed(max: 300)
        guard let hw = try? AES.Cipher(key: keyBytes, backend: .hardware), let pt = try? AES.Cipher(key: keyBytes, backend: .portable) else {
            FuzzCheck.require(![16, 24, 32].contains(keyBytes.count), "a \(keyBytes.count)-byte AES key was refused")
            return
        }
        var ciphertext: [UInt8], tag: [UInt8]
        var genuine: (ct: [UInt8], tag: [UInt8], aad: [UInt8], message: [UInt8])? = nil
        if flags & 2 == 0 {
            tag = input.bytes(flags & 4 == 0 ? 16 : Int(input.byte() % 20))
            ciphertext = input.rest()
        } else {
            let message = input.bytes(Int(input.u16() % 2000))
            guard let n = try? AES.GCM.Nonce(data: nonce),
                  let sealed = try? AES.GCM.seal(message, using: hw, nonce: n, authenticating: aad) else {
                FuzzCheck.require(nonce.isEmpty, "GCM seal refused a \(nonce.count)-byte nonce")
                return
            }
            let sealedPT = try? AES.GCM.seal(message, using: pt, nonce: n, authenticating: aad)
            FuzzCheck.require(sealedPT == sealed, "GCM seal: hardware and portable differ")
            genuine = (sealed.ciphertext, sealed.tag, aad, message)
            ciphertext = sealed.ciphertext
            tag = sealed.tag
            if flags & 4 != 0 {
                let all = mutate(tag + ciphertext, &input)
                tag = Array(all.prefix(16))
                ciphertext = Array(all.dropFirst(16))
            }
        }
        var aadUsed = aad
        if flags & 8 != 0, genuine != nil { aadUsed = mutate(aad, &input) }
        let opened: [OpenResult] = [hw, pt].map { cipher in
            result { () throws(RampartError) in
                let box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
                return try AES.GCM.open(box, using: cipher, authenticating: aadUsed)
            }
        }
        FuzzCheck.require(opened[0] == opened[1], "GCM open: hardware and portable differ")
        // The raw-buffer forms: separate output and in place, both wiped on failure.
        for cipher in [hw, pt] {
            var out = [UInt8](repeating: 0xA5, count: ciphertext.count)
            let into = ciphertext.withUnsafeBytes { c in out.withUnsafeMutableBytes { o in tag.withUnsafeBytes { t in
                nonce.withUnsafeBytes { n in aadUsed.withUnsafeBytes { a in
                    Result { () throws(RampartError) in try AES.GCM.open(c, into: o, tag: t, using: cipher, nonce: n, authenticating: a) }
                } }
            } } }
            var buf = ciphertext
            let inPlace = buf.withUnsafeMutableBytes { b in tag.withUnsafeBytes { t in nonce.withUnsafeBytes { n in aadUsed.withUnsafeBytes { a in
                Result { () throws(RampartError) in try AES.GCM.open(b, tag: t, using: cipher, nonce: n, authenticating: a) }
            } } } }
            switch opened[0] {
            case .success(let m):
                FuzzCheck.require((try? into.get()) != nil && out == m && (try? inPlace.get()) != nil && buf == m, "raw GCM open differs")
            case .failure:
                FuzzCheck.require((try? into.get()) == nil && (try? inPlace.get()) == nil, "raw GCM open succeeded where open failed")
                FuzzCheck.require(out.allSatisfy { $0 == 0 } && buf.allSatisfy { $0 == 0 }, "a failed GCM open left plaintext in the buffer")
            }
        }
        switch opened[0] {
        case .success(let m):
            FuzzStats.note("gcm: opened")
            guard let n = try? AES.GCM.Nonce(data: nonce), let again = try? AES.GCM.seal(m, using: hw, nonce: n, authenticating: aadUsed) else {
                FuzzCheck.fail("re-seal failed")
            }
            FuzzCheck.require(again.ciphertext == ciphertext && again.tag == tag, "an opened GCM box is not what seal produces")
            if let g = genuine {
                FuzzCheck.require(g.ct == ciphertext && g.tag == tag && g.aad == aadUsed && m == g.message, "a modified GCM box opened")
            }
            if nonce.count == 12, let combined = try? AES.GCM.SealedBox(combined: nonce + ciphertext + tag) {
                FuzzCheck.require((try? AES.GCM.open(combined, using: hw, authenticating: aadUsed)) == m, "combined form")
                FuzzCheck.require(combined.combined == nonce + ciphertext + tag, "combined round trip")
            }
        case .failure(let e):
            if let g = genuine, g.ct == ciphertext, g.tag == tag, g.aad == aadUsed { FuzzCheck.fail("a genuine GCM box did not open: \(e)") }
            switch e {
            case .authenticationFailure: break
            case .invalidNonceLength: FuzzCheck.require(nonce.isEmpty, "invalidNonceLength for \(nonce.count) bytes")
            default: FuzzCheck.fail("unexpected GCM error \(e)")
            }
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        for (flags, n) in [(UInt8(2), 0), (2 | 0x20, 17), (2 | 0x40 | 1, 64)] {
            var w = SeedWriter()
            w.byte(flags)
            if flags & 1 == 1 { w.byte(7) }
            w.raw([UInt8](repeating: 0x11, count: [16, 24, 32][Int(flags >> 5)]))
            w.raw([UInt8](repeating: 0x12, count: flags & 1 == 1 ? 7 : 12))
            w.lengthPrefixed([1, 2, 3])
            w.u16(UInt16(n))
            w.raw((0..<n).map { UInt8(truncatingIfNeeded: $0 * 7) })
            out.append(w.bytes)
        }
        return out
    })

// MARK: - aes-modes

let aesModesTarget = FuzzTarget(
    name: "aes-modes",
    summary: "AES-CBC PKCS#7 decryption (exactly the valid paddings, round trip, buffer wiped on bad padding), IGE and CBC raw round trips, CTR split invariance; hardware = portable",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let keyBytes = input.fixed([16, 24, 32, 32][Int(flags & 3)])
        guard let hw = try? AES.Cipher(key: keyBytes, backend: .hardware), let pt = try? AES.Cipher(key: keyBytes, backend: .portable) else {
            FuzzCheck.fail("AES key setup")
        }
        switch (flags >> 2) & 3 {
        case 0:
            let iv = input.fixed(16)
            let ct = input.rest()
            let results = [hw, pt].map { c in result { () throws(RampartError) in try AES.CBC.decrypt(ct, using: c, iv: iv, padding: .pkcs7) } }
            FuzzCheck.require(results[0] == results[1], "CBC PKCS#7: hardware and portable differ")
            let raw = try? AES.CBC.decrypt(ct, using: hw, iv: iv, padding: .none)
            // The padding rule, checked on the raw decryption.
            var valid = false
            if let r = raw, let last = r.last, (1...16).contains(last), r.count >= Int(last) {
                valid = r.suffix(Int(last)).allSatisfy { $0 == last }
            }
            switch results[0] {
            case .success(let m):
                FuzzCheck.require(valid && raw.map { Array($0.prefix(m.count)) } == m && raw!.count - m.count == Int(raw!.last!),
                                  "CBC PKCS#7 accepted a bad padding or stripped the wrong length")
                FuzzCheck.require((try? AES.CBC.encrypt(m, using: hw, iv: iv, padding: .pkcs7)) == ct, "CBC PKCS#7 round trip")
                FuzzStats.note("aes: PKCS#7 accepted")
            case .failure(let e):
                FuzzCheck.require(!valid, "CBC PKCS#7 refused a valid padding: \(e)")
                FuzzCheck.require(e == (ct.count % 16 == 0 ? .invalidPadding : .invalidInputLength), "CBC PKCS#7 error \(e)")
                if ct.count % 16 == 0 {
                    var buf = ct
                    let n = buf.withUnsafeMutableBytes { b in iv.withUnsafeBytes { v in
                        Result { () throws(RampartError) in try AES.CBC.decryptPKCS7(b, using: hw, iv: v) }
                    } }
                    FuzzCheck.require((try? n.get()) == nil && buf.allSatisfy { $0 == 0 }, "decryptPKCS7 left plaintext after bad padding")
                }
            }
        case 1:
            let iv = input.fixed(flags & 0x10 == 0 ? 32 : 16)
            var blocks = input.rest()
            blocks.removeLast(blocks.count % 16)
            if flags & 0x10 == 0 {
                let d = [hw, pt].map { c in try? AES.IGE.decrypt(blocks, using: c, iv: iv) }
                FuzzCheck.require(d[0] != nil && d[0] == d[1], "IGE decrypt: hardware and portable differ")
                FuzzCheck.require((try? AES.IGE.encrypt(d[0]!, using: pt, iv: iv)) == blocks, "IGE round trip")
            } else {
                let d = [hw, pt].map { c in try? AES.CBC.decrypt(blocks, using: c, iv: iv, padding: .none) }
                FuzzCheck.require(d[0] != nil && d[0] == d[1], "CBC decrypt: hardware and portable differ")
                FuzzCheck.require((try? AES.CBC.encrypt(d[0]!, using: pt, iv: iv, padding: .none)) == blocks, "CBC round trip")
            }
        default:
            let counter = input.fixed(16)
            let split = input.byte()
            let msg = input.rest()
            guard let a = try? AES.CTR(cipher: hw, counter: counter), let b = try? AES.CTR(cipher: pt, counter: counter) else {
                FuzzCheck.fail("CTR setup")
            }
            let whole = a.process(msg)
            var pieces: [UInt8] = []
            for c in FuzzSplit.chunks(msg, mode: split, seed: UInt64(split)) { pieces += b.process(c) }
            FuzzCheck.require(whole == pieces, "CTR: split or backend changed the keystream")
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        for (flags, n) in [(UInt8(2), 15), (0, 32), (1 | 4, 64), (4 | 0x10, 48), (8 | 2, 100)] {
            var w = SeedWriter()
            w.byte(flags)
            w.raw([UInt8](repeating: 0x31, count: [16, 24, 32, 32][Int(flags & 3)]))
            if (flags >> 2) & 3 == 0 {
                let iv = [UInt8](repeating: 0x32, count: 16)
                w.raw(iv)
                if let c = try? AES.CBC.encrypt([UInt8](repeating: 0x33, count: n), using: SymmetricKey(data: [UInt8](repeating: 0x31, count: [16, 24, 32, 32][Int(flags & 3)])), iv: iv) {
                    w.raw(c)
                }
            } else {
                w.raw([UInt8](repeating: 0x34, count: 32 + n))
            }
            out.append(w.bytes)
        }
        return out
    })

// MARK: - mac-verify

/// HMAC verification of received code bytes for one hash.
private func checkHMAC<H: HashFunction>(_: H.Type, key: SymmetricKey, message: [UInt8], code: [UInt8], genuine: Bool) {
    let computed = HMAC<H>.authenticationCode(for: message, using: key)
    let expected = Array(computed) == code
    FuzzCheck.require(HMAC<H>.isValidAuthenticationCode(code, authenticating: message, using: key) == expected,
                      "HMAC<\(H.self)> verification disagrees with comparing the code")
    FuzzCheck.require(!genuine || expected, "a genuine HMAC<\(H.self)> code did not verify")
    var h = HMAC<H>(key: key)
    h.update(data: message.prefix(message.count / 2))
    h.update(data: message.dropFirst(message.count / 2))
    FuzzCheck.require(h.finalize() == computed, "HMAC<\(H.self)> incremental differs")
}

let macVerifyTarget = FuzzTarget(
    name: "mac-verify",
    summary: "HMAC (SHA-1/256/512) and Poly1305 verification of received tags (any length): valid iff equal to the computed tag; incremental = one-shot; Poly1305 kernel = portable",
    maxLength: 2048,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let key = SymmetricKey(data: input.bytes(Int(input.byte() % 140)))
        let codeLength = Int(input.byte() % 70)
        let genuine = flags & 2 != 0
        let message = input.lengthPrefixed(max: 1500)
        var code = input.bytes(codeLength)
        switch Int(flags >> 2) % 4 {
        case 0:
            if genuine { code = Array(HMAC<SHA256>.authenticationCode(for: message, using: key)) }
            checkHMAC(SHA256.self, key: key, message: message, code: code, genuine: genuine)
        case 1:
            if genuine { code = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key)) }
            checkHMAC(Insecure.SHA1.self, key: key, message: message, code: code, genuine: genuine)
        case 2:
            if genuine { code = Array(HMAC<SHA512>.authenticationCode(for: message, using: key)) }
            checkHMAC(SHA512.self, key: key, message: message, code: code, genuine: genuine)
        default:
            do throws(RampartError) {
                let tag = try Poly1305.authenticationCode(for: message, using: key)
                if genuine { code = Array(tag) }
                let ok = try Poly1305.isValidAuthenticationCode(code, authenticating: message, using: key)
                FuzzCheck.require(ok == (Array(tag) == code), "Poly1305 verification disagrees with comparing the tag")
                var p = try Poly1305(key: key)
                for c in FuzzSplit.chunks(message, mode: flags >> 4, seed: UInt64(flags)) { p.update(data: c) }
                FuzzCheck.require(p.finalize() == tag, "Poly1305 incremental differs")
                // Runs of 32 blocks and more take Kernels.poly1305's kernel where it is active.
                let portable = try Poly1305.authenticationCode(for: message, using: key.pinned(to: .portable))
                FuzzCheck.require(portable == tag, "Poly1305 kernel and portable code differ")
                // Each implementation the processor runs, pinned (the AVX2 kernel too where IFMA is the default).
                for name in Kernels.implementations(of: "poly1305") {
                    let pinned = try Poly1305.authenticationCode(for: message, using: key.pinned(to: Kernels.pinned("poly1305", to: name)!))
                    FuzzCheck.require(pinned == portable, "Poly1305 implementation \(name) and portable code differ")
                }
            } catch {
                FuzzCheck.require(key.byteCount != 32 && error == .invalidKeyLength, "Poly1305 error \(error)")
            }
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        for (flags, keyLen) in [(UInt8(2), 32), (2 | 4, 20), (2 | 8, 130), (2 | 12, 32), (12, 32)] {
            var w = SeedWriter()
            w.byte(flags); w.byte(UInt8(keyLen)); w.raw([UInt8](repeating: 0x0B, count: keyLen)); w.byte(16)
            w.lengthPrefixed(Array("Hi There".utf8)); w.raw([UInt8](repeating: 1, count: 16))
            out.append(w.bytes)
        }
        return out
    })

let symmetricTargets: [FuzzTarget] = [secretBoxOpenTarget, boxOpenTarget, gcmOpenTarget, chachaPolyOpenTarget, aesModesTarget, macVerifyTarget]

// MARK: - chachapoly-open

/// ChaCha20-Poly1305 boxes as `ciphertext ‖ tag` with a 12-byte nonce and associated data.
let chachaPolyOpenTarget = FuzzTarget(
    name: "chachapoly-open",
    summary: "ChaChaPoly.open (allocating, into-buffer, in-place; portable and hardware) on arbitrary and sealed-then-mutated boxes: only genuine boxes open, failures release nothing",
    maxLength: 8192,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let key: SymmetricKey = flags & 4 == 0 ? Fixtures.naclKey : SymmetricKey(data: input.bytes(Int(input.byte() % 40)))
        let nonce = flags & 8 == 0 ? input.fixed(12) : input.bytes(Int(input.byte() % 20))
        let aad = input.bytes(Int(input.byte() % 64))
        var box: [UInt8]
        var genuine: [UInt8]? = nil
        var message: [UInt8] = []
        if flags & 1 == 0 {
            box = input.rest()
        } else {
            message = input.bytes(Int(input.u16() % 4000))
            guard let n = try? ChaChaPoly.Nonce(data: nonce),
                  let sealed = try? ChaChaPoly.seal(message, using: Fixtures.naclKey, nonce: n, authenticating: aad) else {
                FuzzCheck.require(nonce.count != 12, "seal refused a 12-byte nonce")
                return
            }
            let portable = try? ChaChaPoly.seal(message, using: Fixtures.naclKey.pinned(to: .portable), nonce: n, authenticating: aad)
            FuzzCheck.require(portable == sealed, "portable and hardware seal differ")
            genuine = sealed.ciphertext + sealed.tag
            box = flags & 2 == 0 ? genuine! : mutate(genuine!, &input)
        }
        func open(_ b: Backend) -> OpenResult {
            result { () throws(RampartError) in
                guard box.count >= 16 else { throw .invalidInputLength }
                // The raw-buffer forms check the key before the nonce; check in the same order here
                // so that a box with both wrong reports the same error on every path.
                guard key.byteCount == 32 else { throw .invalidKeyLength }
                let sb = try ChaChaPoly.SealedBox(nonce: try ChaChaPoly.Nonce(data: nonce), ciphertext: box.dropLast(16),
                                                  tag: box.suffix(16))
                return try ChaChaPoly.open(sb, using: key.pinned(to: b), authenticating: aad)
            }
        }
        let hw = open(.hardware), pt = open(.portable)
        FuzzCheck.require(hw == pt, "chachapoly open: hardware and portable differ")
        if box.count >= 16 {
            let ct = Array(box.dropLast(16)), tag = Array(box.suffix(16))
            // Into a separate buffer: zero-filled on failure.
            var out = [UInt8](repeating: 0xA5, count: ct.count)
            let into = ct.withUnsafeBytes { c in out.withUnsafeMutableBytes { o in tag.withUnsafeBytes { t in
                nonce.withUnsafeBytes { n in aad.withUnsafeBytes { a in
                    Result { () throws(RampartError) in try ChaChaPoly.open(c, into: o, tag: t, using: key, nonce: n, authenticating: a) }
                } }
            } } }
            switch (into, hw) {
            case (.success, .success(let m)): FuzzCheck.require(out == m, "open(into:) plaintext")
            case (.failure(let e), .failure(let e2)):
                FuzzCheck.require(e == e2, "open(into:) error \(e) vs \(e2)")
                FuzzCheck.require(out.allSatisfy { $0 == 0 }, "open(into:) left bytes after a failure")
            default: FuzzCheck.fail("open(into:) disagrees with open")
            }
            // In place: the buffer keeps the ciphertext on failure.
            var buf = ct
            let inPlace = buf.withUnsafeMutableBytes { b in tag.withUnsafeBytes { t in
                nonce.withUnsafeBytes { n in aad.withUnsafeBytes { a in
                    Result { () throws(RampartError) in try ChaChaPoly.open(b, tag: t, using: key, nonce: n, authenticating: a) }
                } }
            } }
            switch (inPlace, hw) {
            case (.success, .success(let m)): FuzzCheck.require(buf == m, "open(inPlace) plaintext")
            case (.failure, .failure): FuzzCheck.require(buf == ct, "open(inPlace) changed the buffer on failure")
            default: FuzzCheck.fail("open(inPlace) disagrees with open")
            }
        }
        switch hw {
        case .success(let m):
            FuzzStats.note("chachapoly: opened")
            guard let again = try? ChaChaPoly.seal(m, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: aad) else {
                FuzzCheck.fail("re-seal failed")
            }
            FuzzCheck.require(again.ciphertext + again.tag == box, "an opened box is not what seal produces for its plaintext")
            if let g = genuine { FuzzCheck.require(box == g && m == message, "a modified box opened") }
        case .failure(let e):
            FuzzCheck.require(genuine == nil || box != genuine || key != Fixtures.naclKey || nonce.count != 12,
                              "a genuine box did not open: \(e)")
            switch e {
            case .authenticationFailure: FuzzCheck.require(box.count >= 16 && nonce.count == 12 && key.byteCount == 32, "auth failure for bad lengths")
            case .invalidInputLength: FuzzCheck.require(box.count < 16, "invalidInputLength")
            case .invalidNonceLength: FuzzCheck.require(nonce.count != 12, "invalidNonceLength")
            case .invalidKeyLength: FuzzCheck.require(key.byteCount != 32, "invalidKeyLength")
            default: FuzzCheck.fail("unexpected chachapoly error \(e)")
            }
        }
    },
    seeds: {
        var out: [[UInt8]] = []
        for n in [0, 17, 600] {
            var w = SeedWriter()
            w.byte(1)
            w.raw([UInt8](repeating: 0x12, count: 12))
            w.byte(5)
            w.raw([1, 2, 3, 4, 5])
            w.u16(UInt16(n))
            w.raw((0..<n).map { UInt8(truncatingIfNeeded: $0) })
            out.append(w.bytes)
        }
        return out
    }
)
