// `rampart aes`: AES-IGE/CBC/CTR and AES-GCM over standard input, raw bytes out.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart

let aesUsage = """
usage: rampart aes <ige|cbc|ctr>-<encrypt|decrypt> --key HEX --iv HEX [--padding none|pkcs7]
       rampart aes gcm-seal|gcm-open --key HEX --nonce HEX [--aad HEX]
  Reads standard input and writes the result to standard output as raw bytes.
  --key    16, 24 or 32 bytes (AES-128/192/256; MTProto uses 32)
  --iv     IGE: 32 bytes (previous ciphertext block || previous plaintext block, as MTProto);
           CBC: 16 bytes; CTR: the 16-byte big-endian initial counter block
  --padding  CBC only: none (default; input must be a multiple of 16) or pkcs7
  --nonce  GCM: 1 or more bytes (12 is standard)     --aad  GCM additional authenticated data
  gcm-seal writes ciphertext || 16-byte tag; gcm-open reads ciphertext || tag and writes the plaintext
  only when the tag verifies. Authentication or padding failure: a message on stderr, nothing on
  stdout, exit status 1. Bad usage or parameters (key, IV or input length): one line on stderr, exit 2.
"""

/// Reads all of standard input.
func readAllStdin() -> [UInt8] {
    var all: [UInt8] = []
    readStdin { all.append(contentsOf: $0) }
    return all
}

/// Writes all of `bytes` to standard output.
func writeStdout(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { b in
        var off = 0
        while off < b.count {
            let n = write(1, b.baseAddress! + off, b.count - off)
            if n < 0 {
                if errno == EINTR { continue }
                printError("rampart: cannot write stdout")
                exit(1)
            }
            off += n
        }
    }
}

func aesCommand(_ args: [String]) {
    guard let sub = args.first else { usageError("aes: expected an operation (see rampart aes --help)") }
    if sub == "--help" || sub == "-h" { print(aesUsage); exit(0) }
    let rest = Array(args.dropFirst())
    let command = "aes \(sub)"
    switch sub {
    case "ige-encrypt", "ige-decrypt", "cbc-encrypt", "cbc-decrypt", "ctr-encrypt", "ctr-decrypt":
        let o = Options(rest, allowed: ["key", "iv", "padding"], positional: 0...0, command: command)
        if o.help { print(aesUsage); exit(0) }
        guard var key = o.hex("key", command) else { usageError("\(command): missing --key") }
        guard let iv = o.hex("iv", command) else { usageError("\(command): missing --iv") }
        defer { key.secureWipe() }
        let mode = String(sub.prefix(3)), encrypt = sub.hasSuffix("encrypt")
        let cipher: AES.Cipher
        do { cipher = try AES.Cipher(key: key) } catch { usageError("\(command): \(error) (16, 24 or 32 bytes)") }
        var padding = AES.CBC.Padding.none
        if let p = o.values["padding"] {
            guard mode == "cbc" else { usageError("\(command): --padding applies to cbc only") }
            switch p {
            case "none": padding = .none
            case "pkcs7": padding = .pkcs7
            default: usageError("\(command): --padding must be none or pkcs7")
            }
        }
        let wantIV = mode == "ige" ? 32 : 16
        guard iv.count == wantIV else { usageError("\(command): --iv must be \(wantIV) bytes, got \(iv.count)") }
        var input = readAllStdin()
        defer { input.secureWipe() }
        if mode != "ctr" && !(mode == "cbc" && padding == .pkcs7 && encrypt) && input.count % 16 != 0 {
            usageError("\(command): input length \(input.count) is not a multiple of 16")
        }
        do {
            var out: [UInt8]
            switch mode {
            case "ige": out = encrypt ? try AES.IGE.encrypt(input, using: cipher, iv: iv) : try AES.IGE.decrypt(input, using: cipher, iv: iv)
            case "cbc":
                out = encrypt ? try AES.CBC.encrypt(input, using: cipher, iv: iv, padding: padding)
                              : try AES.CBC.decrypt(input, using: cipher, iv: iv, padding: padding)
            default: out = try AES.CTR(cipher: cipher, counter: iv).process(input)
            }
            writeStdout(out)
            out.secureWipe()
        } catch .invalidPadding {
            printError("rampart: \(command): invalid padding")
            exit(1)
        } catch {
            usageError("\(command): \(error)")
        }
    case "gcm-seal", "gcm-open":
        let o = Options(rest, allowed: ["key", "nonce", "aad"], positional: 0...0, command: command)
        if o.help { print(aesUsage); exit(0) }
        guard var key = o.hex("key", command) else { usageError("\(command): missing --key") }
        guard let nonceBytes = o.hex("nonce", command) else { usageError("\(command): missing --nonce") }
        let aad = o.hex("aad", command) ?? []
        defer { key.secureWipe() }
        let cipher: AES.Cipher
        do { cipher = try AES.Cipher(key: key) } catch { usageError("\(command): \(error) (16, 24 or 32 bytes)") }
        let nonce: AES.GCM.Nonce
        do { nonce = try AES.GCM.Nonce(data: nonceBytes) } catch { usageError("\(command): --nonce must not be empty") }
        var input = readAllStdin()
        defer { input.secureWipe() }
        if sub == "gcm-seal" {
            do {
                let box = try AES.GCM.seal(input, using: cipher, nonce: nonce, authenticating: aad)
                writeStdout(box.ciphertext + box.tag)
            } catch {
                usageError("\(command): \(error)")
            }
        } else {
            guard input.count >= AES.GCM.tagByteCount else {
                printError("rampart: \(command): authentication failure (input shorter than the 16-byte tag)")
                exit(1)
            }
            do {
                let box = try AES.GCM.SealedBox(nonce: nonce, ciphertext: input.dropLast(AES.GCM.tagByteCount),
                                                tag: input.suffix(AES.GCM.tagByteCount))
                var plain = try AES.GCM.open(box, using: cipher, authenticating: aad)
                writeStdout(plain)
                plain.secureWipe()
            } catch .authenticationFailure {
                printError("rampart: \(command): authentication failure")
                exit(1)
            } catch {
                usageError("\(command): \(error)")
            }
        }
    default:
        usageError("aes: unknown operation '\(sub)' (ige|cbc|ctr)-(encrypt|decrypt), gcm-seal, gcm-open")
    }
}
