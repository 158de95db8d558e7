// The hash, hmac, kdf and info commands.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartReference

let hashUsage = """
usage: rampart hash <sha1|sha256|sha512|blake2b> [--length N] [--key HEX] [--salt HEX] [--personal HEX]
  Hashes standard input and prints the lowercase hex digest and a newline.
  BLAKE2b only: --length 1..64 (default 64), --key 0..64 bytes, --salt and --personal 16 bytes each.
"""

func hashCommand(_ args: [String]) {
    let o = Options(args, allowed: ["length", "key", "salt", "personal"], positional: 1...1, command: "hash")
    if o.help { print(hashUsage); exit(0) }
    let alg = o.positional[0]
    switch alg {
    case "sha1", "sha256", "sha512":
        if !o.values.isEmpty { usageError("hash: --length/--key/--salt/--personal apply to blake2b only") }
        let hex: String
        switch alg {
        case "sha1": var h = Insecure.SHA1(); readStdin { h.update(bufferPointer: $0) }; hex = h.finalize().description
        case "sha256": var h = SHA256(); readStdin { h.update(bufferPointer: $0) }; hex = h.finalize().description
        default: var h = SHA512(); readStdin { h.update(bufferPointer: $0) }; hex = h.finalize().description
        }
        print(hex)
    case "blake2b":
        let length = o.int("length", "hash") ?? 64
        let key = o.hex("key", "hash") ?? []
        let salt = o.hex("salt", "hash"), personal = o.hex("personal", "hash")
        var h: BLAKE2b
        do {
            h = try BLAKE2b(outputByteCount: length, key: key, salt: salt, personal: personal)
        } catch {
            usageError("hash: \(error)")
        }
        readStdin { h.update(bufferPointer: $0) }
        print(h.finalize().description)
    default:
        usageError("hash: unknown algorithm '\(alg)' (sha1, sha256, sha512, blake2b)")
    }
}

let hmacUsage = """
usage: rampart hmac <sha1|sha256|sha512> --key HEX
  Computes the HMAC of standard input under the hex key and prints it as lowercase hex.
"""

func hmacCommand(_ args: [String]) {
    let o = Options(args, allowed: ["key"], positional: 1...1, command: "hmac")
    if o.help { print(hmacUsage); exit(0) }
    guard let keyBytes = o.hex("key", "hmac") else { usageError("hmac: missing --key") }
    let key = SymmetricKey(data: keyBytes)
    switch o.positional[0] {
    case "sha1": var h = HMAC<Insecure.SHA1>(key: key); readStdin { h.update(bufferPointer: $0) }; print(h.finalize().description)
    case "sha256": var h = HMAC<SHA256>(key: key); readStdin { h.update(bufferPointer: $0) }; print(h.finalize().description)
    case "sha512": var h = HMAC<SHA512>(key: key); readStdin { h.update(bufferPointer: $0) }; print(h.finalize().description)
    default: usageError("hmac: unknown algorithm '\(o.positional[0])' (sha1, sha256, sha512)")
    }
}

let kdfUsage = """
usage: rampart kdf pbkdf2 --hash <sha1|sha256|sha512> --password-hex HEX --salt-hex HEX --iterations N --length N
       rampart kdf scrypt --password-hex HEX --salt-hex HEX --n N --r R --p P --length N
  Derives a key and prints it as lowercase hex. scrypt refuses parameters needing more than 4 GiB.
"""

func kdfCommand(_ args: [String]) {
    guard let sub = args.first else { usageError("kdf: expected pbkdf2 or scrypt (see rampart kdf --help)") }
    let rest = Array(args.dropFirst())
    switch sub {
    case "--help", "-h": print(kdfUsage); exit(0)
    case "pbkdf2":
        let o = Options(rest, allowed: ["hash", "password-hex", "salt-hex", "iterations", "length"], positional: 0...0,
                        command: "kdf pbkdf2")
        if o.help { print(kdfUsage); exit(0) }
        let prf: PBKDF2.PseudoRandomFunction
        switch o.require("hash", "kdf pbkdf2") {
        case "sha1": prf = .hmacSHA1
        case "sha256": prf = .hmacSHA256
        case "sha512": prf = .hmacSHA512
        case let h: usageError("kdf pbkdf2: unknown --hash '\(h)' (sha1, sha256, sha512)")
        }
        guard let pw = o.hex("password-hex", "kdf pbkdf2") else { usageError("kdf pbkdf2: missing --password-hex") }
        guard let salt = o.hex("salt-hex", "kdf pbkdf2") else { usageError("kdf pbkdf2: missing --salt-hex") }
        guard let iterations = o.int("iterations", "kdf pbkdf2") else { usageError("kdf pbkdf2: missing --iterations") }
        guard let length = o.int("length", "kdf pbkdf2") else { usageError("kdf pbkdf2: missing --length") }
        do {
            let k = try PBKDF2.deriveKey(password: pw, salt: salt, prf: prf, iterations: iterations, outputByteCount: length)
            print(k.withUnsafeBytes { Hex.encode($0) })
        } catch {
            usageError("kdf pbkdf2: \(error)")
        }
    case "scrypt":
        let o = Options(rest, allowed: ["password-hex", "salt-hex", "n", "r", "p", "length"], positional: 0...0, command: "kdf scrypt")
        if o.help { print(kdfUsage); exit(0) }
        guard let pw = o.hex("password-hex", "kdf scrypt") else { usageError("kdf scrypt: missing --password-hex") }
        guard let salt = o.hex("salt-hex", "kdf scrypt") else { usageError("kdf scrypt: missing --salt-hex") }
        guard let n = o.int("n", "kdf scrypt") else { usageError("kdf scrypt: missing --n") }
        guard let r = o.int("r", "kdf scrypt") else { usageError("kdf scrypt: missing --r") }
        guard let p = o.int("p", "kdf scrypt") else { usageError("kdf scrypt: missing --p") }
        guard let length = o.int("length", "kdf scrypt") else { usageError("kdf scrypt: missing --length") }
        do {
            let k = try Scrypt.deriveKey(password: pw, salt: salt, n: n, r: r, p: p, outputByteCount: length,
                                         memoryLimit: 1 << 32)
            print(k.withUnsafeBytes { Hex.encode($0) })
        } catch {
            usageError("kdf scrypt: \(error)")
        }
    default:
        usageError("kdf: unknown function '\(sub)' (pbkdf2, scrypt)")
    }
}

let infoUsage = """
usage: rampart info
  Prints the CPU, the instruction-set extensions Rampart detected, for each primitive (Kernels.all)
  the implementation selected and how every implementation fared (selected, passed, unsupported,
  or a failed self-test), the self-tests' time, and the reference libraries found.
"""

func infoCommand(_ args: [String]) {
    let o = Options(args, allowed: [], positional: 0...0, command: "info")
    if o.help { print(infoUsage); exit(0) }
    print("CPU: \(CPU.modelName)")
    print("features: \(CPU.detected)")
    print("portable forced: \(CPU.forcePortable)")
    if !CPU.disabledFeatures.isEmpty { print("disabled: \(CPU.disabledFeatures.sorted().joined(separator: ","))") }
    print("kernels use: \(CPU.features)")
    print("selected kernels (the implementations the processor runs check a published answer in order; the first to pass is selected):")
    for k in Kernels.all {
        let note = k.kernel == nil ? " (no kernel on this architecture)"
            : k.isActive ? "" : " (\(k.kernel!) not usable here)"
        let states = k.implementations.map { i -> String in
            switch i.state {
            case .failed: return "\(i.name): SELF-TEST FAILED, never run"
            default: return "\(i.name): \(i.state.rawValue)"
            }
        }
        let time = states.isEmpty ? "" : ", self-tests \(k.selfTestNanoseconds / 1000) µs"
        print("  \(k.primitive): \(k.selected)\(note)" + (states.isEmpty ? "" : "  [\(states.joined(separator: ", "))\(time)]"))
    }
    print("self-tests: \(Kernels.selfTestNanoseconds / 1000) µs in all")
    print(Reference.summary)
}
