// `rampart threema id-backup encode|decode` and `rampart threema safe encrypt|decrypt|backup|restore`.
//
//   rampart threema id-backup encode --id ID --secret-key HEX [--password-file F]   -> backup text
//   rampart threema id-backup decode [--password-file F] [--backup-file F]          -> "ID SECRET-KEY-HEX"
//   rampart threema safe encrypt --key HEX      stdin JSON -> stdout nonce ‖ secretbox(gzip level 0)
//   rampart threema safe decrypt --key HEX      stdin blob -> stdout JSON (validated)
//   rampart threema safe backup --server URL --id ID [--password-file F] [--json-file F]
//   rampart threema safe restore --server URL --id ID [--password-file F]            -> stdout JSON
//
// Passwords never come from argv: from --password-file, else standard input (then the other input
// must come from a file).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartCodecs
import RampartThreema

let threemaSafeUsage = """
usage: rampart threema safe derive --id ID [--password-file F]
       rampart threema safe encrypt --key HEX          (stdin JSON -> stdout backup blob)
       rampart threema safe decrypt --key HEX          (stdin backup blob -> stdout JSON)
       rampart threema safe backup --server URL --id ID [--password-file F] [--json-file F]
                                   [--server-auth-file F] [--timeout S]
       rampart threema safe restore --server URL --id ID [--password-file F] [--server-auth-file F] [--timeout S]
  derive:  prints the backup ID (64 hex) and the encryption key (64 hex) on two lines.
  encrypt: gzip (level 0, as the apps) and secretbox under the 32-byte key with a random nonce; the
           JSON must be a valid Safe backup document (schema version 1).
  decrypt: any gzip level or plain JSON inside; exit 1 with nothing on stdout when the blob does not
           authenticate or the document is not a valid backup.
  backup:  derives the keys from the password (8 to 4096 bytes), validates and encrypts the document
           (from --json-file, or standard input when the password comes from --password-file), checks the
           server's maxBackupBytes (GET config) and uploads it with PUT <server>/backups/<backup ID>;
           prints the backup ID. restore downloads, decrypts and validates it and prints the JSON.
           --server is an http:// URL (plain HTTP: for a loopback or trusted-network server; this tool
           has no TLS) without credentials: HTTP Basic credentials come from --server-auth-file (one
           line user:password). Each request must be answered within --timeout seconds (default
           60); responses are read with a size cap. Failures exit 1.
  The password comes from --password-file or standard input, never from the command line.
"""

func threemaExtraCommand(_ name: String, _ args: [String]) -> Bool {
    switch name {
    case "id-backup": threemaIDBackupCommand(args)
    case "safe-server": threemaSafeServerCommand(args)
    case "ibex": threemaIbexCommand(args)
    case "serve", "client-test": threemaChatCommand(name, args)
    default: return false
    }
    return true
}

func threemaSafeExtraCommand(_ name: String, _ args: [String]) -> Bool {
    switch name {
    case "encrypt", "decrypt": threemaSafeCryptCommand(name, args)
    case "backup", "restore": threemaSafeServerClientCommand(name, args)
    default: return false
    }
    return true
}

/// The whole contents of a file (at most `limit` bytes), or a usage error: a file that cannot be
/// opened, a read error (a directory: EISDIR) — never taken for the end of the file — or one larger
/// than `limit`.
func readFile(_ path: String, limit: Int, _ command: String) -> [UInt8] {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { usageError("\(command): cannot read \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 1 << 16)
    defer { buf.secureWipe() }
    while true {
        let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n < 0 {
            let why = String(cString: strerror(errno))
            out.secureWipe()
            usageError("\(command): cannot read \(path): \(why)")
        }
        if n == 0 { break }
        guard n <= limit - out.count else {
            out.secureWipe()
            usageError("\(command): \(path) is larger than \(limit) bytes")
        }
        out += buf[0..<n]
    }
    return out
}

func threemaIDBackupCommand(_ args: [String]) {
    let cmd = "threema id-backup"
    let usage = """
        usage: rampart threema id-backup encode --id ID --secret-key HEX [--password-file F]
               rampart threema id-backup decode [--backup-file F] [--password-file F]
          encode: prints the backup (80 Base32 characters in dash-separated groups of 4).
          decode: reads the backup text (lower case, spaces and missing dashes are fine) from --backup-file,
                  or from standard input when the password comes from --password-file; prints
                  "ID SECRET-KEY-HEX". A wrong password exits 1 with nothing on stdout.
          The password (8 to 4096 bytes) comes from --password-file or standard input, never argv.
        """
    if args.isEmpty { usageText(usage, help: false) }
    let o = Options(args, allowed: ["id", "secret-key", "password-file", "backup-file"], positional: 1...1, command: cmd)
    if o.help { usageText(usage, help: true) }
    guard ["encode", "decode"].contains(o.positional[0]) else { usageError("\(cmd): expected encode or decode") }
    if o.positional[0] == "encode" {
        guard let id = threemaID(o, "id", cmd) else { usageError("\(cmd) encode: missing --id") }
        var sk = hex32(o, "secret-key", cmd)
        defer { sk.secureWipe() }
        let password = readPassword(o, cmd)
        var rng = SecureRandom()
        do { print(try IDBackup.encode(identity: ThreemaIdentity(id: id, privateKey: sk), password: password, using: &rng)) } catch {
            usageError("\(cmd) encode: \(error)")
        }
    } else {
        let text: String
        if let path = o.values["backup-file"] {
            text = String(decoding: readFile(path, limit: 4096, cmd), as: UTF8.self)
        } else {
            guard o.values["password-file"] != nil else {
                usageError("\(cmd) decode: give the backup with --backup-file or the password with --password-file")
            }
            text = String(decoding: readAllStdin(limit: 4096, cmd + " decode"), as: UTF8.self)
        }
        let password = readPassword(o, cmd)
        do {
            let identity = try IDBackup.decode(text, password: password)
            print("\(identity.id) \(Hex.encode(identity.privateKey.rawRepresentation))")
        } catch .invalidPasswordLength(let allowed) {
            usageError("\(cmd) decode: the password must have \(allowed.lowerBound) to \(allowed.upperBound) bytes")
        } catch {
            checkFailure("\(cmd) decode: \(error)")
        }
    }
}

func threemaSafeCryptCommand(_ mode: String, _ args: [String]) {
    let cmd = "threema safe \(mode)"
    let o = Options(args, allowed: ["key"], positional: 0...0, command: cmd)
    if o.help { print(threemaSafeUsage); exit(0) }
    var k = hex32(o, "key", cmd)
    let key = SymmetricKey(data: k)
    k.secureWipe()
    // The JSON is at most ThreemaSafe.maximumPlaintextBytes; its blob (nonce, tag, gzip framing) a little more.
    var input = readAllStdin(limit: ThreemaSafe.maximumPlaintextBytes + (mode == "encrypt" ? 0 : 1 << 20), cmd)
    defer { input.secureWipe() }
    if mode == "encrypt" {
        do {
            let doc = try SafeBackup(jsonBytes: input)
            var rng = SecureRandom()
            let blob = try ThreemaSafe.encrypt(json: doc.jsonBytes, key: key, using: &rng)
            blob.withUnsafeBytes { writeStdout($0) }
        } catch {
            usageError("\(cmd): \(error)")
        }
    } else {
        do {
            let json = try ThreemaSafe.decrypt(input, key: key)
            _ = try SafeBackup(jsonBytes: json)
            json.withUnsafeBytes { writeStdout($0) }
        } catch {
            checkFailure("\(cmd): \(error)")
        }
    }
}
