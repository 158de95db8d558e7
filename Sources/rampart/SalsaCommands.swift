// The secretbox and stream commands.
//
//   rampart secretbox seal|open --key HEX --nonce HEX     stdin -> stdout, raw bytes, tag || ciphertext
//   rampart stream xsalsa20 --key HEX --nonce HEX         stdin XOR keystream -> stdout, raw bytes

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart

let secretboxUsage = """
usage: rampart secretbox <seal|open> --key HEX --nonce HEX
  NaCl crypto_secretbox (XSalsa20-Poly1305) of standard input, written raw to standard output.
  seal: output is tag (16 bytes) || ciphertext, as libsodium's crypto_secretbox_easy.
  open: input is tag || ciphertext; on an authentication failure nothing is written and the exit
        status is 1.
  --key 32 bytes as hex, --nonce 24 bytes as hex.
"""

let streamUsage = """
usage: rampart stream xsalsa20 --key HEX --nonce HEX
  XORs standard input with the XSalsa20 keystream (crypto_stream_xsalsa20_xor) and writes the result
  raw to standard output; encrypts and decrypts alike. No authentication.
  --key 32 bytes as hex, --nonce 24 bytes as hex.
"""

/// Writes all of `bytes` to standard output; exit status 1 when that fails.
func writeStdout(_ bytes: UnsafeRawBufferPointer) {
    var off = 0
    while off < bytes.count {
        let n = write(1, bytes.baseAddress! + off, bytes.count - off)
        if n < 0 {
            if errno == EINTR { continue }
            printError("rampart: cannot write stdout")
            exit(1)
        }
        off += n
    }
}

/// The `--key` and `--nonce` options, checked for length (bad usage otherwise).
func keyAndNonce(_ o: Options, _ command: String) -> (SymmetricKey, [UInt8]) {
    guard let key = o.hex("key", command) else { usageError("\(command): missing --key") }
    guard let nonce = o.hex("nonce", command) else { usageError("\(command): missing --nonce") }
    guard key.count == 32 else { usageError("\(command): --key must be 32 bytes (64 hex digits), got \(key.count)") }
    guard nonce.count == 24 else { usageError("\(command): --nonce must be 24 bytes (48 hex digits), got \(nonce.count)") }
    var k = key
    defer { k.secureWipe() }
    return (SymmetricKey(data: k), nonce)
}

func secretboxCommand(_ args: [String]) {
    if args.first == "--help" || args.first == "-h" { print(secretboxUsage); exit(0) }
    let o = Options(args, allowed: ["key", "nonce"], positional: 1...1, command: "secretbox")
    if o.help { print(secretboxUsage); exit(0) }
    let mode = o.positional[0]
    guard mode == "seal" || mode == "open" else { usageError("secretbox: unknown mode '\(mode)' (seal, open)") }
    let (key, nonce) = keyAndNonce(o, "secretbox")
    var input: [UInt8] = []
    readStdin { input.append(contentsOf: $0) }
    defer { input.secureWipe() }
    if mode == "seal" {
        do {
            let box = try SecretBox.seal(input, using: key, nonce: nonce)
            box.withUnsafeBytes { writeStdout($0) }
        } catch {
            usageError("secretbox seal: \(error)")
        }
    } else {
        do {
            var message = try SecretBox.open(input, using: key, nonce: nonce)
            message.withUnsafeBytes { writeStdout($0) }
            message.secureWipe()
        } catch .authenticationFailure {
            printError("rampart: secretbox open: authentication failed (wrong key or nonce, or the box was modified)")
            exit(1)
        } catch .invalidInputLength {
            printError("rampart: secretbox open: input shorter than the 16-byte tag, cannot be a box")
            exit(1)
        } catch {
            usageError("secretbox open: \(error)")
        }
    }
}

func streamCommand(_ args: [String]) {
    if args.first == "--help" || args.first == "-h" { print(streamUsage); exit(0) }
    let o = Options(args, allowed: ["key", "nonce"], positional: 1...1, command: "stream")
    if o.help { print(streamUsage); exit(0) }
    guard o.positional[0] == "xsalsa20" else { usageError("stream: unknown cipher '\(o.positional[0])' (xsalsa20)") }
    let (key, nonce) = keyAndNonce(o, "stream")
    var s: XSalsa20
    do { s = try XSalsa20(key: key, nonce: nonce) } catch { usageError("stream: \(error)") }
    let out = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 64)
    defer { out.deallocate() }
    readStdin { chunk in
        let dst = UnsafeMutableRawBufferPointer(rebasing: out[0..<chunk.count])
        try? s.xor(chunk, into: dst)
        writeStdout(UnsafeRawBufferPointer(dst))
    }
    secureZero(out)
}
