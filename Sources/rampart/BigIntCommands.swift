// The prime and rsa commands.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart

let primeUsage = """
usage: rampart prime check --hex HEX [--safe]
  Tests the number (big-endian hex) with trial division and 64 Miller-Rabin rounds and prints
  `prime` or `composite`. With --safe it also tests (p - 1)/2 and prints `safe-prime` when both are
  prime (`prime` when only p is).
"""

func primeCommand(_ args: [String]) {
    let safe = args.contains("--safe")
    let o = Options(args.filter { $0 != "--safe" }, allowed: ["hex"], positional: 1...1, command: "prime")
    if o.help { print(primeUsage); exit(0) }
    guard o.positional == ["check"] else { usageError("prime: expected `prime check --hex HEX [--safe]` (see rampart prime --help)") }
    let hex = o.require("hex", "prime check")
    let n: BigUInt
    do { n = try BigUInt(hex: hex) } catch { usageError("prime check: --hex is not valid hex") }
    guard n.bitWidth <= 16384 else { usageError("prime check: numbers above 16384 bits are not accepted") }
    var rng = SecureRandom()
    guard n.isProbablePrime(rounds: 64, using: &rng) else { print("composite"); return }
    if safe && DiffieHellman.isSafePrimeAnySize(n, rounds: 64, using: &rng) {
        print("safe-prime")
    } else {
        print("prime")
    }
}

let rsaUsage = """
usage: rampart rsa keygen --out FILE
       rampart rsa public --key FILE
  keygen  generates a 2048-bit key (e = 65537) and writes it to FILE as PKCS#1 PEM
          (BEGIN RSA PRIVATE KEY, file mode 0600).
  public  reads a private key (PKCS#1) or public keys (PKCS#1 or SubjectPublicKeyInfo) PEM and
          prints each public key as PKCS#1 PEM, then `mtproto-fingerprint: HEX` (the MTProto key
          fingerprint as a 64-bit integer in hex).
"""

func rsaCommand(_ args: [String]) {
    let o = Options(args, allowed: ["out", "key"], positional: 1...1, command: "rsa")
    if o.help { print(rsaUsage); exit(0) }
    switch o.positional[0] {
    case "keygen":
        guard o.values["key"] == nil else { usageError("rsa keygen: unknown option --key") }
        let path = o.require("out", "rsa keygen")
        // Opened first: a path that cannot be written (a directory, no permission) fails at once, not
        // after the key generation.
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { usageError("rsa keygen: cannot write \(path): \(String(cString: strerror(errno)))") }
        var rng = SecureRandom()
        let key: RSA.PrivateKey
        do { key = try RSA.PrivateKey.generate(bits: 2048, using: &rng) } catch { close(fd); usageError("rsa keygen: \(error)") }
        var pem = Array(key.pemRepresentation.utf8)
        defer { pem.secureWipe() }
        let written = writeFully(fd, pem)
        close(fd)
        guard written else { usageError("rsa keygen: cannot write \(path)") }
    case "public":
        guard o.values["out"] == nil else { usageError("rsa public: unknown option --out") }
        let path = o.require("key", "rsa public")
        guard var text = readTextFile(path) else { usageError("rsa public: cannot read \(path)") }
        defer { text = "" }
        let keys: [RSA.PublicKey]
        if text.contains("-----BEGIN RSA PRIVATE KEY-----") {
            do { keys = [try RSA.PrivateKey(pemRepresentation: text).publicKey] } catch { usageError("rsa public: \(error)") }
        } else {
            // A file may list several public keys (Telegram publishes its keys that way): print each.
            do { keys = try RSA.PublicKey.all(pemRepresentation: text) } catch { usageError("rsa public: \(error)") }
        }
        for pub in keys {
            print(pub.pkcs1PEMRepresentation, terminator: "")
            let f = String(pub.mtprotoFingerprint, radix: 16)
            print("mtproto-fingerprint: " + String(repeating: "0", count: 16 - f.count) + f)
        }
    default:
        usageError("rsa: unknown subcommand '\(o.positional[0])' (keygen, public)")
    }
}

/// The contents of a (small) text file, or nil when it cannot be opened or read (a directory, a read
/// error: never taken for the end of the file) or holds more than 1 MiB.
func readTextFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n < 0 { return nil }
        if n == 0 { break }
        bytes += chunk[0..<n]
        if bytes.count > 1 << 20 { return nil }
    }
    return String(decoding: bytes, as: UTF8.self)
}
