// The `rampart` command-line tool. Its flags are a contract other tools script against: keep them.
//
//   rampart hash <sha1|sha256|sha512|blake2b> [--length N] [--key HEX] [--salt HEX] [--personal HEX]
//   rampart hmac <sha1|sha256|sha512> --key HEX
//   rampart kdf pbkdf2 --hash <sha1|sha256|sha512> --password-hex HEX --salt-hex HEX --iterations N --length N
//   rampart kdf scrypt --password-hex HEX --salt-hex HEX --n N --r R --p P --length N
//   rampart aes <ige|cbc|ctr>-<encrypt|decrypt> --key HEX --iv HEX | aes gcm-seal|gcm-open --key HEX --nonce HEX [--aad HEX]
//   rampart secretbox seal|open --key HEX --nonce HEX
//   rampart x25519 --scalar HEX [--point HEX]
//   rampart box seal|open --secret-key HEX --public-key HEX --nonce HEX
//   rampart stream xsalsa20 --key HEX --nonce HEX
//   rampart prime check --hex HEX [--safe]
//   rampart rsa keygen --out FILE | rampart rsa public --key FILE
//   rampart mtproto serve --port P [--rsa-key FILE] [--transports all]
//   rampart mtproto ping --port P --rsa-key PUB.pem --transport NAME
//   rampart mtproto secret-chat visualize (--key-hash HEX | --key-file F [--layer46-key-file F2]) --out FILE.svg [--cell N]
//   rampart threema message seal|open | blob encrypt|decrypt | hash email|phone | 3mid | safe ...
//     (see Sources/rampart/ThreemaCommands.swift)
//   rampart threema safe-server --port P --dir DIR [--max-backup-bytes N] [--retention-days N] [--auth-file FILE] [--rate R[:B]]
//   rampart vectors [PATH...]
//   rampart info
//
// Exit status: 0 success, 1 a vector failed, 2 bad usage or bad parameters (one line on stderr).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let topUsage = """
usage: rampart <command> [options]

commands:
  hash <sha1|sha256|sha512|blake2b>   hash stdin, print lowercase hex
  hmac <sha1|sha256|sha512>           HMAC of stdin under --key HEX
  kdf pbkdf2 | kdf scrypt             derive a key from hex password and salt
  aes <mode>-<encrypt|decrypt>        AES-IGE/CBC/CTR or gcm-seal/gcm-open of stdin (raw bytes)
  secretbox seal|open                 NaCl secretbox of stdin under --key HEX --nonce HEX (raw bytes)
  stream xsalsa20                     XSalsa20 keystream XOR of stdin under --key HEX --nonce HEX
  x25519 --scalar HEX [--point HEX]   RFC 7748 X25519 (public key when --point is omitted)
  box seal|open                       NaCl crypto_box of stdin (--secret-key, --public-key, --nonce)
  prime check --hex HEX [--safe]      print prime, safe-prime or composite
  rsa keygen|public                   2048-bit RSA key to a PEM file; public key PEM and fingerprint
  mtproto serve|ping                  loopback MTProto test server; Swift client ping against it
  mtproto secret-chat visualize       a secret chat's key image as an SVG
  threema <command>                   Threema: messages, blobs, address-book hashes, 3mid, Safe, ID backups
  vectors [PATH...]                   run reference vector files, print pass/fail counts
  info                                CPU features, selected kernels and reference libraries

Run `rampart <command> --help` for a command's options.
"""

/// Writes one line to stderr.
func printError(_ s: String) {
    var line = s + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// Bad usage or bad parameters: one line on stderr, exit status 2.
func usageError(_ message: String) -> Never {
    printError("rampart: \(message)")
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    printError(topUsage)
    exit(2)
}
arguments.removeFirst()

switch command {
case "--help", "-h", "help": print(topUsage)
case "hash": hashCommand(arguments)
case "hmac": hmacCommand(arguments)
case "kdf": kdfCommand(arguments)
case "aes": aesCommand(arguments)
case "secretbox": secretboxCommand(arguments)
case "x25519": x25519Command(arguments)
case "box": boxCommand(arguments)
case "stream": streamCommand(arguments)
case "prime": primeCommand(arguments)
case "rsa": rsaCommand(arguments)
case "mtproto": mtprotoCommand(arguments)
case "threema": threemaCommand(arguments)
case "vectors": vectorsCommand(arguments)
case "info": infoCommand(arguments)
default: usageError("unknown command '\(command)' (see rampart --help)")
}
// What print() buffered must reach standard output: a failed write (a full disk, /dev/full) is an error.
if fflush(nil) != 0 {
    printError("rampart: cannot write standard output: \(String(cString: strerror(errno)))")
    exit(1)
}
exit(0)
