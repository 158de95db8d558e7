// RSA private keys written by other software, loaded through the constant-time path (issue 36):
// OpenSSL 3.0 (`openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048`, PKCS#8, and the same key
// through `openssl pkey -traditional`, PKCS#1) and Python's `cryptography` 48 (a 1100-bit key, whose
// primes do not fill their top limb, as `TraditionalOpenSSL` and `PKCS8`), with LF and CRLF line ends.
// The moduli are OpenSSL's (`openssl rsa -noout -modulus`). Every malformed variant (armour, Base64,
// DER, an inconsistent number) is refused with a typed error, never a trap.

import Testing
@_spi(Testing) @testable import Rampart
import RampartTestSupport

@Suite struct RSAPrivateKeyInteropTests {
    static let openSSLPKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCXgIl5SJ/zuVPN
        uMTJ6SVnImd0nNZwqxcEgHFlW18DFl71iFstUVIDG62lp0jZaXeMZIrF0YNmnuBz
        3yRPM0wrZfWGg/Ql5NoooHWJFe4NrKEQoUS2dwlzbzDj45DArbrw+o6R3r8bBRet
        spLyEXmk3gJkBH8kv5tEiWyuhmLabv8senf6vkX/wG6/PVjfacvI4lPsVHXi51JJ
        xP8yVTVMIc0EnzrymqN32BP+BgKUAA+UxXO1YYi/Dv7c4jb76NeBASqEh4sugZs9
        bBj4SNUy9/55Enc1O3tCdESni56l9yBYeFs333QCKJtiyzJO7ZeYyIr9rnQMleAB
        D96eDqTfAgMBAAECggEAKoB3UKyUnum7fmea4XAEO7I1psvHBvWgb/VemoovFe0l
        N6mItqZtJQ0TQnkzITcKwDqGied0fwoMOsV7aLKh6Dziy9lh2W2h3CrjvlEGJxTq
        XIF5htzPLHChnRT+y2cRnkAUVgzQvRJJKcQCoGFRqHRV5Fw0lQkh1HDfKfjua4uw
        O1+jvKWJRdONEYfEFRHzSjrDc+t8YV+XWHpn9G/OOstcfAWqohZbzEFKQCHZtXgI
        J4dHn14bBsbprOJERzd8i2PgSMzLLGtR6VXfbYd6tTGfgfQCq/U4z+X5cALTyTBF
        NcXK5pwyXHFnoW0hVFpzRufbNmUSP6VbG7flfr1UsQKBgQDUxI9vFbpw5iQ1yI5w
        7+fuaEggnQbPYhv1Wzr40IC/7mqz9//hWOgzCUBqed5oE4P+3J/yZOvUWJ3ptHAM
        SVekInVi+xFzWk89JYIfhTGYyqFcC0dnNV+UF9nwTVeTKgF/JFwZdHcIMB4vW2ft
        tKWueOULkl9V2auJCR3/ZXmPzwKBgQC2SSXXXq3hboHmj2Wtk0m+9vzphhvuNrgR
        eDkpgfaB4Br8H7B14GOt+X1/teA+wlIsVjZ9hmCatHyXbU0QYaFSL1St/3PLxeBA
        xjQxVcEQW0XosDs9ViQBN3Gaok/lTel37qLvPK2Bbbiv3nfp6nAEV0+04kdjXQi5
        sFOaBhNN8QKBgGrDGsn92CjQgnjuYvMunm2VrCOZR5KGQ0sxdPzm+sPUKXyWw7Ha
        v+DkEoubDUuiB0i6ghPKKj/KG6rqXJL9tllo5Qg+vTnppfsjuBCC8Ckf/CnIixKx
        yHzyHuyikoAIwul+YCxxsUzNgEf5EMRJMh3DEgNldisI5zcC+SdvTrknAoGBAJBL
        Wv8fXXlD5uRBwvUh0JCwJwgcNuPcwNxjVKx8ykuIwROvahoFZCKFikicCkTjwfSC
        0mOPCc2s7atYxFYhUngiK2AJBPrbSmc7/njHLyrpdW96gYpOM/Yak30a2y/i+tsL
        NkM2vwnjdv0Ql8+82qs1Ck1fia8oKA4FfEhCYumhAoGAQU27QRwDeTkU2ucR6xHE
        CglVt2RRJey+4733SEgXI1z6PSS6VUt5RV9ZYykNIS7cFl0F/TryNMMMH/bwz0Ha
        ac3xz9HjOnmqRcUSK4P6adW4WlFgv/GjWI7yEPDkQXcnZ068+s3TV2HHX5rdUAFc
        mNPkEEUJrWeXQpoKmCcBblM=
        -----END PRIVATE KEY-----
        """ + "\n"
    static let openSSLPKCS1 = """
        -----BEGIN RSA PRIVATE KEY-----
        MIIEowIBAAKCAQEAl4CJeUif87lTzbjEyeklZyJndJzWcKsXBIBxZVtfAxZe9Yhb
        LVFSAxutpadI2Wl3jGSKxdGDZp7gc98kTzNMK2X1hoP0JeTaKKB1iRXuDayhEKFE
        tncJc28w4+OQwK268PqOkd6/GwUXrbKS8hF5pN4CZAR/JL+bRIlsroZi2m7/LHp3
        +r5F/8Buvz1Y32nLyOJT7FR14udSScT/MlU1TCHNBJ868pqjd9gT/gYClAAPlMVz
        tWGIvw7+3OI2++jXgQEqhIeLLoGbPWwY+EjVMvf+eRJ3NTt7QnREp4uepfcgWHhb
        N990AiibYssyTu2XmMiK/a50DJXgAQ/eng6k3wIDAQABAoIBACqAd1CslJ7pu35n
        muFwBDuyNabLxwb1oG/1XpqKLxXtJTepiLambSUNE0J5MyE3CsA6honndH8KDDrF
        e2iyoeg84svZYdltodwq475RBicU6lyBeYbczyxwoZ0U/stnEZ5AFFYM0L0SSSnE
        AqBhUah0VeRcNJUJIdRw3yn47muLsDtfo7yliUXTjRGHxBUR80o6w3PrfGFfl1h6
        Z/RvzjrLXHwFqqIWW8xBSkAh2bV4CCeHR59eGwbG6aziREc3fItj4EjMyyxrUelV
        322HerUxn4H0Aqv1OM/l+XAC08kwRTXFyuacMlxxZ6FtIVRac0bn2zZlEj+lWxu3
        5X69VLECgYEA1MSPbxW6cOYkNciOcO/n7mhIIJ0Gz2Ib9Vs6+NCAv+5qs/f/4Vjo
        MwlAanneaBOD/tyf8mTr1Fid6bRwDElXpCJ1YvsRc1pPPSWCH4UxmMqhXAtHZzVf
        lBfZ8E1XkyoBfyRcGXR3CDAeL1tn7bSlrnjlC5JfVdmriQkd/2V5j88CgYEAtkkl
        116t4W6B5o9lrZNJvvb86YYb7ja4EXg5KYH2geAa/B+wdeBjrfl9f7XgPsJSLFY2
        fYZgmrR8l21NEGGhUi9Urf9zy8XgQMY0MVXBEFtF6LA7PVYkATdxmqJP5U3pd+6i
        7zytgW24r9536epwBFdPtOJHY10IubBTmgYTTfECgYBqwxrJ/dgo0IJ47mLzLp5t
        lawjmUeShkNLMXT85vrD1Cl8lsOx2r/g5BKLmw1LogdIuoITyio/yhuq6lyS/bZZ
        aOUIPr056aX7I7gQgvApH/wpyIsSsch88h7sopKACMLpfmAscbFMzYBH+RDESTId
        wxIDZXYrCOc3Avknb065JwKBgQCQS1r/H115Q+bkQcL1IdCQsCcIHDbj3MDcY1Ss
        fMpLiMETr2oaBWQihYpInApE48H0gtJjjwnNrO2rWMRWIVJ4IitgCQT620pnO/54
        xy8q6XVveoGKTjP2GpN9Gtsv4vrbCzZDNr8J43b9EJfPvNqrNQpNX4mvKCgOBXxI
        QmLpoQKBgEFNu0EcA3k5FNrnEesRxAoJVbdkUSXsvuO990hIFyNc+j0kulVLeUVf
        WWMpDSEu3BZdBf068jTDDB/28M9B2mnN8c/R4zp5qkXFEiuD+mnVuFpRYL/xo1iO
        8hDw5EF3J2dOvPrN01dhx1+a3VABXJjT5BBFCa1nl0KaCpgnAW5T
        -----END RSA PRIVATE KEY-----
        """ + "\n"
    static let openSSLModulus = "97808979489FF3B953CDB8C4C9E925672267749CD670AB17048071655B5F03165EF5885B2D5152031BADA5A748D969778C648AC5D183669EE073DF244F334C2B65F58683F425E4DA28A0758915EE0DACA110A144B67709736F30E3E390C0ADBAF0FA8E91DEBF1B0517ADB292F21179A4DE0264047F24BF9B44896CAE8662DA6EFF2C7A77FABE45FFC06EBF3D58DF69CBC8E253EC5475E2E75249C4FF3255354C21CD049F3AF29AA377D813FE060294000F94C573B56188BF0EFEDCE236FBE8D781012A84878B2E819B3D6C18F848D532F7FE791277353B7B427444A78B9EA5F72058785B37DF7402289B62CB324EED9798C88AFDAE740C95E0010FDE9E0EA4DF"

    static let pythonPKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIICnwIBADANBgkqhkiG9w0BAQEFAASCAokwggKFAgEAAoGKDWuFYU87G1y2Pid8
        ga9pRN7KIqLQJAz3HPbCCsOXA+KX9dR0MuhtS1Ohc7yealqEggBaYl2dgwUy3S96
        ilIR22XKTycVVUQoXmkFc0aZB4ZWt7T5z/0yPotvJUnGlvdT9U2STyu1p0uyA6W/
        BhV60vwidQt4DwCjxtZUY7seejlHclx5aL6AAk9rAgMBAAECgYoBYHq61So3UHfS
        QLLhi2G9ky4iB5pbWIkyC481E4Q2/dShgD67ymUMSXRTL5MBTnAx9l9PoFM80he5
        4dksv+bdH8B2Boh5wYiE35qYJbDFFdPiqvTLikam5IAUbD3eBEoUuBHRAIOMUGTs
        TYdcyxBvwcOeH2lZOJT28X4XDaZtUN5ubN9ZnxT75cECRT0J6tZRMJEC/g6BYkDn
        bqkAZj5599/li7owwaZ9yQFYoXTREgu+SCwx7kK24LOyalxO0W5d8aRsfyPNMfwA
        JGIrhx/cwwJFOEjGC1zW34MTVCRxK8SUMdXhH8bh/c2HEuiuSnc1iqbkzao+oNph
        Si/MuQAkEB5xHphOU/XVZq8ePBpQRfV39R7T6rg5AkUU6ikFdpxlk9jpr3uzMZnB
        Xtmp3rEIjubpzXsNSVxukagBFwJP88tXGWTCh1dHO4MmTfuFDbuW03ZdFhpidsoA
        uVl7mXECRSd9sC9CyaTz0/kCxMEf4ZcB6T4hjmlE7tQunDO1ZsTNCtbe76hu8Tpb
        RXo8hhElOttro/G3GC8/CajEEbS0YaGEKs6SyQJFNZtW5CfUWTvLE7u5U0d86QO6
        4aUCKbnZsOSEDSowTaFBn856JWyuyya+MnvonQ5JUtqH/Kc8yFDwTAMtILokMW+s
        kCuD
        -----END PRIVATE KEY-----
        """ + "\n"
    static let pythonPKCS1 = """
        -----BEGIN RSA PRIVATE KEY-----
        MIIChQIBAAKBig1rhWFPOxtctj4nfIGvaUTeyiKi0CQM9xz2wgrDlwPil/XUdDLo
        bUtToXO8nmpahIIAWmJdnYMFMt0veopSEdtlyk8nFVVEKF5pBXNGmQeGVre0+c/9
        Mj6LbyVJxpb3U/VNkk8rtadLsgOlvwYVetL8InULeA8Ao8bWVGO7Hno5R3JceWi+
        gAJPawIDAQABAoGKAWB6utUqN1B30kCy4YthvZMuIgeaW1iJMguPNROENv3UoYA+
        u8plDEl0Uy+TAU5wMfZfT6BTPNIXueHZLL/m3R/AdgaIecGIhN+amCWwxRXT4qr0
        y4pGpuSAFGw93gRKFLgR0QCDjFBk7E2HXMsQb8HDnh9pWTiU9vF+Fw2mbVDebmzf
        WZ8U++XBAkU9CerWUTCRAv4OgWJA526pAGY+efff5Yu6MMGmfckBWKF00RILvkgs
        Me5CtuCzsmpcTtFuXfGkbH8jzTH8ACRiK4cf3MMCRThIxgtc1t+DE1QkcSvElDHV
        4R/G4f3NhxLorkp3NYqm5M2qPqDaYUovzLkAJBAecR6YTlP11WavHjwaUEX1d/Ue
        0+q4OQJFFOopBXacZZPY6a97szGZwV7Zqd6xCI7m6c17DUlcbpGoARcCT/PLVxlk
        wodXRzuDJk37hQ27ltN2XRYaYnbKALlZe5lxAkUnfbAvQsmk89P5AsTBH+GXAek+
        IY5pRO7ULpwztWbEzQrW3u+obvE6W0V6PIYRJTrba6PxtxgvPwmoxBG0tGGhhCrO
        kskCRTWbVuQn1Fk7yxO7uVNHfOkDuuGlAim52bDkhA0qME2hQZ/OeiVsrssmvjJ7
        6J0OSVLah/ynPMhQ8EwDLSC6JDFvrJArgw==
        -----END RSA PRIVATE KEY-----
        """ + "\n"
    static let pythonModulus = "D6B85614F3B1B5CB63E277C81AF6944DECA22A2D0240CF71CF6C20AC39703E297F5D47432E86D4B53A173BC9E6A5A8482005A625D9D830532DD2F7A8A5211DB65CA4F27155544285E6905734699078656B7B4F9CFFD323E8B6F2549C696F753F54D924F2BB5A74BB203A5BF06157AD2FC22750B780F00A3C6D65463BB1E7A3947725C7968BE80024F6B"

    static let keys: [(name: String, pkcs8: String, pkcs1: String, modulus: String)] = [
        ("OpenSSL", openSSLPKCS8, openSSLPKCS1, openSSLModulus),
        ("cryptography", pythonPKCS8, pythonPKCS1, pythonModulus),
    ]

    static func crlf(_ text: String) -> String { text.split(separator: "\n").joined(separator: "\r\n") + "\r\n" }

    @Test func loadsPKCS1AndPKCS8WithLFAndCRLF() throws {
        for k in Self.keys {
            let reference = try RSA.PrivateKey(pemRepresentation: k.pkcs1)
            #expect(try reference.publicKey.modulus == BigUInt(hex: k.modulus), "\(k.name)")
            #expect(reference.publicKey.publicExponent == BigUInt(65537), "\(k.name)")
            for text in [k.pkcs1, k.pkcs8, Self.crlf(k.pkcs1), Self.crlf(k.pkcs8)] {
                let key = try RSA.PrivateKey(pemRepresentation: text)
                #expect(key.pkcs1DERRepresentation == reference.pkcs1DERRepresentation, "\(k.name)")
                // Written back exactly as the other software wrote it (64-character lines, LF).
                #expect(key.pemRepresentation == k.pkcs1, "\(k.name)")
                #expect(key.pkcs8PEMRepresentation == k.pkcs8, "\(k.name)")
            }
            // The DER forms directly, and the private operation against the public one.
            let der1 = try PEM.decodeAll(k.pkcs1)[0].der, der8 = try PEM.decodeAll(k.pkcs8)[0].der
            #expect(try RSA.PrivateKey(pkcs1DERRepresentation: der1).pkcs8DERRepresentation == der8, "\(k.name)")
            #expect(try RSA.PrivateKey(pkcs8DERRepresentation: der8).pkcs1DERRepresentation == der1, "\(k.name)")
            var rng = SplitMix64(seed: 3671)
            for _ in 0..<3 {
                let m = try BigUInt.random(below: reference.publicKey.modulus, using: &rng).bigEndianBytes(count: reference.publicKey.byteCount)
                #expect(try reference.rawPrivate(reference.publicKey.rawPublic(m)) == m, "\(k.name)")
            }
        }
    }

    @Test func wrongArmourIsRefused() throws {
        let k = Self.keys[1]
        func refused(_ text: String, _ fault: DERFault = .invalidPEM, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(throws: RampartError.invalidDER(fault), sourceLocation: sourceLocation) { try RSA.PrivateKey(pemRepresentation: text) }
        }
        let lines1 = k.pkcs1.split(separator: "\n").map(String.init), lines8 = k.pkcs8.split(separator: "\n").map(String.init)
        func text(_ l: [String]) -> String { l.joined(separator: "\n") + "\n" }
        refused(text(lines1.dropLast() + ["-----END PRIVATE KEY-----"]))                   // mismatched END
        refused(text(Array(lines1.dropLast())))                                             // no END
        refused(text(Array(lines1.dropFirst())))                                            // no BEGIN
        refused(text(["-----BEGIN RSA PUBLIC KEY-----"] + lines1.dropFirst().dropLast() + ["-----END RSA PUBLIC KEY-----"]))
        refused(text(["-----BEGIN ENCRYPTED PRIVATE KEY-----"] + lines8.dropFirst().dropLast() + ["-----END ENCRYPTED PRIVATE KEY-----"]))
        refused(k.pkcs1 + k.pkcs1)                                                          // two blocks
        refused("")
        // The labels swapped: each body read as the other format fails in its DER.
        #expect(throws: RampartError.self) {
            try RSA.PrivateKey(pemRepresentation: text(["-----BEGIN PRIVATE KEY-----"] + lines1.dropFirst().dropLast() + ["-----END PRIVATE KEY-----"]))
        }
        #expect(throws: RampartError.self) {
            try RSA.PrivateKey(pemRepresentation: text(["-----BEGIN RSA PRIVATE KEY-----"] + lines8.dropFirst().dropLast() + ["-----END RSA PRIVATE KEY-----"]))
        }
    }

    @Test func badBase64IsRefused() {
        let k = Self.keys[1]
        var lines = k.pkcs8.split(separator: "\n").map { Array($0.utf8) }
        for (at, c) in [(0, UInt8(ascii: "!")), (5, UInt8(ascii: "=")), (63, UInt8(ascii: "-")), (10, UInt8(ascii: " ")), (20, 0x80)] {
            var l = lines
            l[2][at] = c
            let text = String(decoding: l.joined(separator: [0x0A]) + [0x0A], as: UTF8.self)
            #expect(throws: RampartError.invalidDER(.invalidPEM), "\(c) at \(at)") { try RSA.PrivateKey(pemRepresentation: text) }
        }
        // A character dropped (length not a multiple of 4), and non-zero pad bits.
        lines[2].removeLast()
        #expect(throws: RampartError.invalidDER(.invalidPEM)) {
            try RSA.PrivateKey(pemRepresentation: String(decoding: lines.joined(separator: [0x0A]) + [0x0A], as: UTF8.self))
        }
    }

    /// Every byte of the DER changed (one bit flipped, and set to zero): never accepted, always a
    /// typed error. A flip inside d, p, q, dp, dq or qinv leaves the DER well formed and is caught by
    /// the consistency checks.
    @Test func everyCorruptedByteIsRefused() throws {
        let k = Self.keys[1]
        let der8 = try PEM.decodeAll(k.pkcs8)[0].der
        var inconsistent = 0
        for i in der8.indices {
            for change in [{ (b: UInt8) in b ^ 0x01 }, { (b: UInt8) in b ^ 0x80 }] {
                var bad = der8
                bad[i] = change(bad[i])
                do {
                    _ = try RSA.PrivateKey(pkcs8DERRepresentation: bad)
                    Issue.record("byte \(i) changed to \(bad[i]) was accepted")
                } catch {
                    if error == .invalidRSAKey { inconsistent += 1 }
                }
            }
        }
        // The secret integers make up most of the key: most flips reach the consistency checks.
        #expect(inconsistent > der8.count)
    }

    @Test func aCorruptedByteOfDIsInconsistent() throws {
        let k = Self.keys[0]
        var der = try PEM.decodeAll(k.pkcs1)[0].der
        // RSAPrivateKey: version, n, e, then d; change d's last content byte.
        var top = DERReader(der)
        var seq = try top.element(0x30)
        for _ in 0..<4 { _ = try seq.element(0x02) }
        der[seq.offset - 1] ^= 0x04
        #expect(throws: RampartError.invalidRSAKey) { try RSA.PrivateKey(pkcs1DERRepresentation: der) }
        // And in a PEM text, through PEM's Base64.
        let pem = PEM.encode(label: "RSA PRIVATE KEY", der: der)
        #expect(throws: RampartError.invalidRSAKey) { try RSA.PrivateKey(pemRepresentation: pem) }
    }

    @Test func pkcs8WrapperIsStrict() throws {
        let k = Self.keys[1]
        let der1 = try PEM.decodeAll(k.pkcs1)[0].der
        let alg = RSA.rsaAlgorithmIdentifier
        func wrap(_ parts: [[UInt8]]) -> [UInt8] { DERWriter.sequence(parts) }
        let v0 = DERWriter.element(0x02, [0]), octets = DERWriter.element(0x04, der1)
        #expect(try RSA.PrivateKey(pkcs8DERRepresentation: wrap([v0, alg, octets])).pkcs1DERRepresentation == der1)
        // Version 1 (RFC 5958 with a public key), another algorithm, parameters other than NULL,
        // attributes, a BIT STRING instead of the OCTET STRING, trailing bytes.
        #expect(throws: RampartError.invalidDER(.unsupported)) {
            try RSA.PrivateKey(pkcs8DERRepresentation: wrap([DERWriter.element(0x02, [1]), alg, octets]))
        }
        var otherOID = alg
        otherOID[12] = 0x0A                                             // 1.2.840.113549.1.1.10 (RSASSA-PSS)
        #expect(throws: RampartError.invalidDER(.unsupported)) { try RSA.PrivateKey(pkcs8DERRepresentation: wrap([v0, otherOID, octets])) }
        let withParameters = DERWriter.sequence([Array(alg[2..<13]), DERWriter.element(0x02, [1])])
        #expect(throws: RampartError.self) { try RSA.PrivateKey(pkcs8DERRepresentation: wrap([v0, withParameters, octets])) }
        #expect(throws: RampartError.invalidDER(.trailingData)) {
            try RSA.PrivateKey(pkcs8DERRepresentation: wrap([v0, alg, octets, DERWriter.element(0xA0, [])]))
        }
        #expect(throws: RampartError.invalidDER(.unexpectedTag)) {
            try RSA.PrivateKey(pkcs8DERRepresentation: wrap([v0, alg, DERWriter.element(0x03, [0] + der1)]))
        }
        #expect(throws: RampartError.invalidDER(.trailingData)) { try RSA.PrivateKey(pkcs8DERRepresentation: wrap([v0, alg, octets]) + [0]) }
        #expect(throws: RampartError.invalidDER(.trailingData)) {
            try RSA.PrivateKey(pkcs8DERRepresentation: wrap([v0, alg, DERWriter.element(0x04, der1 + [0])]))
        }
    }
}
