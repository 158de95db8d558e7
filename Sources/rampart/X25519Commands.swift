// The x25519 and box commands.
//
//   rampart x25519 --scalar HEX [--point HEX]                              -> hex u-coordinate
//   rampart box seal|open --secret-key HEX --public-key HEX --nonce HEX    stdin -> stdout, raw bytes

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart

let x25519Usage = """
usage: rampart x25519 --scalar HEX [--point HEX]
  The X25519 function of RFC 7748: prints scalar · point as 64 lowercase hex digits and a newline.
  --scalar 32 bytes as hex (clamped as RFC 7748 requires); --point a 32-byte u-coordinate as hex
  (default: the base point 9, which gives the public key of the scalar). The result may be all
  zeros for small-order points; this command does not refuse it.
"""

let boxUsage = """
usage: rampart box <seal|open> --secret-key HEX --public-key HEX --nonce HEX
  NaCl crypto_box (X25519, HSalsa20, XSalsa20-Poly1305) of standard input, written raw to standard
  output. seal: from --secret-key to the recipient --public-key; output is tag (16 bytes) ||
  ciphertext, as libsodium's crypto_box_easy. open: --secret-key is the recipient's, --public-key
  the sender's; on an authentication failure nothing is written and the exit status is 1.
  Keys 32 bytes as hex, --nonce 24 bytes as hex.
"""

func x25519Command(_ args: [String]) {
    let o = Options(args, allowed: ["scalar", "point"], positional: 0...0, command: "x25519")
    if o.help { print(x25519Usage); exit(0) }
    guard var scalar = o.hex("scalar", "x25519") else { usageError("x25519: missing --scalar") }
    defer { scalar.secureWipe() }
    guard scalar.count == 32 else { usageError("x25519: --scalar must be 32 bytes (64 hex digits), got \(scalar.count)") }
    let point = o.hex("point", "x25519")
    if let point, point.count != 32 { usageError("x25519: --point must be 32 bytes (64 hex digits), got \(point.count)") }
    do {
        let out = try Curve25519.scalarMultiply(scalar: scalar, point: point)
        print(Hex.encode(out))
    } catch {
        usageError("x25519: \(error)")
    }
}

func boxCommand(_ args: [String]) {
    if args.first == "--help" || args.first == "-h" { print(boxUsage); exit(0) }
    let o = Options(args, allowed: ["secret-key", "public-key", "nonce"], positional: 1...1, command: "box")
    if o.help { print(boxUsage); exit(0) }
    let mode = o.positional[0]
    guard mode == "seal" || mode == "open" else { usageError("box: unknown mode '\(mode)' (seal, open)") }
    guard var sk = o.hex("secret-key", "box") else { usageError("box: missing --secret-key") }
    defer { sk.secureWipe() }
    guard let pk = o.hex("public-key", "box") else { usageError("box: missing --public-key") }
    guard let nonce = o.hex("nonce", "box") else { usageError("box: missing --nonce") }
    guard sk.count == 32 else { usageError("box: --secret-key must be 32 bytes (64 hex digits), got \(sk.count)") }
    guard pk.count == 32 else { usageError("box: --public-key must be 32 bytes (64 hex digits), got \(pk.count)") }
    guard nonce.count == 24 else { usageError("box: --nonce must be 24 bytes (48 hex digits), got \(nonce.count)") }
    let privateKey: Curve25519.KeyAgreement.PrivateKey
    let publicKey: Curve25519.KeyAgreement.PublicKey
    do {
        privateKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: sk)
        publicKey = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: pk)
    } catch {
        usageError("box: \(error)")
    }
    var input: [UInt8] = []
    readStdin { input.append(contentsOf: $0) }
    defer { input.secureWipe() }
    if mode == "seal" {
        do {
            let sealed = try Box.seal(input, nonce: nonce, to: publicKey, from: privateKey)
            sealed.withUnsafeBytes { writeStdout($0) }
        } catch {
            usageError("box seal: \(error)")
        }
    } else {
        do {
            var message = try Box.open(input, nonce: nonce, from: publicKey, to: privateKey)
            message.withUnsafeBytes { writeStdout($0) }
            message.secureWipe()
        } catch .authenticationFailure {
            printError("rampart: box open: authentication failed (wrong keys or nonce, or the box was modified)")
            exit(1)
        } catch .invalidInputLength {
            // As libsodium and `secretbox open`: too short to hold a tag is an authentication failure.
            printError("rampart: box open: input shorter than the 16-byte tag, cannot be a box")
            exit(1)
        } catch {
            usageError("box open: \(error)")
        }
    }
}
