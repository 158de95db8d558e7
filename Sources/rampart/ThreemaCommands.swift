// The `rampart threema` commands (a contract: keep the names and flags).
//
//   rampart threema message seal --secret-key HEX --public-key HEX --from ID --to ID [--type HEX]
//                                [--nickname S] [--message-id HEX] [--created-at MS] [--flags N] [--legacy]
//   rampart threema message open --secret-key HEX --public-key HEX --from ID [--id ID] [--with-type]
//   rampart threema blob encrypt|decrypt --key HEX [--thumbnail]
//   rampart threema hash email|phone VALUE
//   rampart threema 3mid --id ID --public-key HEX [--expiry S] | rampart threema 3mid --parse PAYLOAD
//   rampart threema safe derive --id ID [--password-file F]
//   rampart threema call-id …, rampart threema call frame-seal|frame-open … (ThreemaCallCommands.swift)
//   rampart threema serve --port P [--key FILE] [--identities FILE] [--register-on-login] [--trace FILE] ...
//   rampart threema client-test --port P --server-key HEX [--pairs N] [--messages N] [--duration S]
//
// Data flows raw from stdin to stdout; keys are hex flags; passwords come from stdin or a file,
// never from argv. Exit status: 0 success, 1 authentication or check failure (nothing on stdout),
// 2 bad usage.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartThreema


let threemaMessageUsage = """
usage: rampart threema message seal --secret-key HEX --public-key HEX --from ID --to ID [--type HEX]
                                    [--nickname S] [--message-id HEX] [--created-at MS] [--flags N] [--legacy]
       rampart threema message open --secret-key HEX --public-key HEX --from ID [--id ID] [--with-type]
  seal: standard input is the message body (raw bytes; a text message's UTF-8); standard output is the
        whole envelope. --secret-key is the sender's identity key, --public-key the receiver's.
        --type is the type byte in hex (default 01, text); --message-id 8 bytes as 16 hex digits
        (default random); --created-at Unix milliseconds (default now); --flags the flag byte (default 1,
        send push); --legacy writes the format without metadata box.
  open: standard input is the envelope (either format); standard output is the body. --secret-key is the
        receiver's identity key, --public-key the sender's and --from the sender's ID (the contact that
        public key belongs to): an envelope whose header names another sender is refused ("the sender
        does not match --from"). --id (default: the envelope's receiver) must match the envelope.
        --with-type writes the type byte before the body. The sender, message ID, time and nickname are
        printed to stderr. Any authentication or format failure, or a sender other than --from: exit 1,
        nothing on stdout.
"""

let threemaBlobUsage = """
usage: rampart threema blob <encrypt|decrypt> --key HEX [--thumbnail]
  XSalsa20-Poly1305 of standard input under the 32-byte blob key with the fixed file nonce 00..01
  (--thumbnail: 00..02). encrypt writes tag || ciphertext; decrypt exits 1 with nothing on stdout when
  the blob does not authenticate.
"""

/// A command's usage text: on standard output with exit status 0 when it was asked for (`--help`),
/// else on standard error with exit status 2 (bad usage).
func usageText(_ text: String, help: Bool) -> Never {
    if help {
        print(text)
        exit(0)
    }
    printError(text)
    exit(2)
}

/// Boolean flags the option parser does not know (it takes only `--name value` pairs): removed from
/// `args`, returned as a set.
func takeFlags(_ args: inout [String], _ names: Set<String>) -> Set<String> {
    var found: Set<String> = []
    args.removeAll { a in
        guard a.hasPrefix("--"), names.contains(String(a.dropFirst(2))) else { return false }
        found.insert(String(a.dropFirst(2)))
        return true
    }
    return found
}


func threemaID(_ o: Options, _ name: String, _ command: String) -> ThreemaID? {
    guard let s = o.values[name] else { return nil }
    do { return try ThreemaID(s) } catch { usageError("\(command): --\(name) is not a Threema ID (8 characters A-Z, 0-9)") }
}

func hex32(_ o: Options, _ name: String, _ command: String) -> [UInt8] {
    guard let v = o.hex(name, command) else { usageError("\(command): missing --\(name)") }
    guard v.count == 32 else { usageError("\(command): --\(name) must be 32 bytes (64 hex digits)") }
    return v
}

/// Exit status 1 with one line on stderr (authentication or check failure).
func checkFailure(_ message: String) -> Never {
    printError("rampart: \(message)")
    exit(1)
}

func threemaMessageCommand(_ argsIn: [String]) {
    var args = argsIn
    let flags = takeFlags(&args, ["legacy", "with-type"])
    let cmd = "threema message"
    if argsIn.isEmpty { usageText(threemaMessageUsage, help: false) }
    let o = Options(args, allowed: ["secret-key", "public-key", "from", "to", "id", "type", "nickname", "message-id",
                                    "created-at", "flags"], positional: 1...1, command: cmd)
    if o.help { usageText(threemaMessageUsage, help: true) }
    guard ["seal", "open"].contains(o.positional[0]) else { usageError("\(cmd): expected seal or open") }
    // Options of the other operation are refused rather than ignored.
    let foreign = o.positional[0] == "seal" ? (["id"], ["with-type"]) : (["to", "type", "nickname", "message-id", "created-at", "flags"], ["legacy"])
    if let name = foreign.0.first(where: { o.values[$0] != nil }) ?? foreign.1.first(where: { flags.contains($0) }) {
        usageError("\(cmd) \(o.positional[0]): --\(name) is not an option of \(o.positional[0])")
    }
    var sk = hex32(o, "secret-key", cmd)
    defer { sk.secureWipe() }
    let pk = hex32(o, "public-key", cmd)
    // seal: our ID; open: the sender's, the contact whose key --public-key is.
    let from = threemaID(o, "from", cmd)
    if o.positional[0] == "open" && from == nil {
        usageError("\(cmd) open: missing --from (the sender's ID, whose public key --public-key is)")
    }
    let to = threemaID(o, "to", cmd)
    if o.positional[0] == "seal" && (from == nil || to == nil) { usageError("\(cmd) seal: --from and --to are required") }
    let receiverID = threemaID(o, "id", cmd)
    var input: [UInt8] = []
    readStdin { input.append(contentsOf: $0) }
    defer { input.secureWipe() }
    var rng = SecureRandom()
    if o.positional[0] == "seal", let from, let to {
        let type = o.hex("type", cmd) ?? [0x01]
        guard type.count == 1 else { usageError("\(cmd) seal: --type is one byte in hex, e.g. 01") }
        var messageID: UInt64?
        if let idBytes = o.hex("message-id", cmd) {
            guard idBytes.count == 8 else { usageError("\(cmd) seal: --message-id is 8 bytes (16 hex digits)") }
            messageID = idBytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        }
        let created = o.values["created-at"].map { v -> UInt64 in
            guard let n = UInt64(v) else { usageError("\(cmd) seal: --created-at is Unix milliseconds") }
            return n
        } ?? UInt64(time(nil)) * 1000
        let flagByte = o.int("flags", cmd) ?? 1
        guard flagByte <= 255 else { usageError("\(cmd) seal: --flags is a byte") }
        do {
            let me = try ThreemaIdentity(id: from, privateKey: sk)
            let peer = try ThreemaContact(id: to, publicKey: pk)
            let msg = OutgoingMessage(type: MessageType(rawValue: type[0]), body: input, createdAt: created,
                                      flags: MessageFlags(rawValue: UInt8(flagByte)), nickname: o.values["nickname"],
                                      messageID: messageID, using: &rng)
            let sealed = try EndToEnd.seal(msg, from: me, keys: PairKeys(identity: me, contact: peer),
                                           format: flags.contains("legacy") ? .legacy : .withMetadata, using: &rng)
            sealed.withUnsafeBytes { writeStdout($0) }
        } catch {
            usageError("\(cmd) seal: \(error)")
        }
    } else if let from {
        // The key belongs to a contact: the envelope's header must name that contact as its sender. (Taking
        // the sender from the header would print whatever ID an attacker wrote there.)
        do {
            let env = try MessageEnvelope(parsing: input)
            guard env.sender == from else {
                checkFailure("\(cmd) open: the sender does not match --from: the envelope names \(env.sender), not \(from)")
            }
            let me = try ThreemaIdentity(id: receiverID ?? env.receiver, privateKey: sk)
            let sender = try ThreemaContact(id: from, publicKey: pk)
            var store = InMemoryNonceStore()
            let m = try env.open(as: me, keys: PairKeys(identity: me, contact: sender), nonceStore: &store)
            printError("sender=\(m.sender) receiver=\(m.receiver) message-id=\(Hex.encode(withUnsafeBytes(of: m.messageID.littleEndian) { Array($0) })) "
                       + "type=\(String(format2: m.container.type.rawValue)) created-at=\(m.createdAt) "
                       + "metadata=\(m.metadata != nil ? "yes" : "no") nickname=\(m.nickname ?? "")")
            var out = (flags.contains("with-type") ? [m.container.type.rawValue] : []) + m.container.body
            out.withUnsafeBytes { writeStdout($0) }
            out.secureWipe()
        } catch {
            checkFailure("\(cmd) open: \(error)")
        }
    }
}

extension String {
    /// Two lowercase hex digits.
    init(format2 byte: UInt8) { self = Hex.encode([byte]) }
}

func threemaBlobCommand(_ argsIn: [String]) {
    var args = argsIn
    let flags = takeFlags(&args, ["thumbnail"])
    let cmd = "threema blob"
    if argsIn.isEmpty { usageText(threemaBlobUsage, help: false) }
    let o = Options(args, allowed: ["key"], positional: 1...1, command: cmd)
    if o.help { usageText(threemaBlobUsage, help: true) }
    guard ["encrypt", "decrypt"].contains(o.positional[0]) else { usageError("\(cmd): expected encrypt or decrypt") }
    var k = hex32(o, "key", cmd)
    let key = SymmetricKey(data: k)
    k.secureWipe()
    let kind: ThreemaBlob.Kind = flags.contains("thumbnail") ? .thumbnail : .file
    var input: [UInt8] = []
    if o.positional[0] == "encrypt" { input = [UInt8](repeating: 0, count: 16) }
    readStdin { input.append(contentsOf: $0) }
    defer { input.secureWipe() }
    do {
        if o.positional[0] == "encrypt" {
            try input.withUnsafeMutableBytes { try ThreemaBlob.encrypt(inPlace: $0, key: key, kind: kind) }
            input.withUnsafeBytes { writeStdout($0) }
        } else {
            try input.withUnsafeMutableBytes { try ThreemaBlob.decrypt(inPlace: $0, key: key, kind: kind) }
            input.withUnsafeBytes { writeStdout(UnsafeRawBufferPointer(rebasing: $0[16...])) }
        }
    } catch ThreemaError.authenticationFailed {
        checkFailure("\(cmd) decrypt: authentication failed (wrong key or nonce, or the blob was modified)")
    } catch {
        usageError("\(cmd): \(error)")
    }
}

func threemaHashCommand(_ args: [String]) {
    let cmd = "threema hash"
    let usage = "usage: rampart threema hash <email|phone> VALUE\n  HMAC-SHA256 address-book hash(es) as hex, one per line."
    if args.isEmpty { usageText(usage, help: false) }
    let o = Options(args, allowed: [], positional: 2...2, command: cmd)
    if o.help { usageText(usage, help: true) }
    switch o.positional[0] {
    case "email":
        for h in AddressBookHash.email(o.positional[1]) { print(Hex.encode(h)) }
    case "phone":
        do { print(Hex.encode(try AddressBookHash.phone(o.positional[1]))) } catch { usageError("\(cmd) phone: \(error)") }
    default:
        usageError("\(cmd): expected email or phone")
    }
}

func threemaQRCommand(_ args: [String]) {
    let cmd = "threema 3mid"
    let usage = """
        usage: rampart threema 3mid --id ID --public-key HEX [--expiry UNIX-SECONDS]
               rampart threema 3mid --parse PAYLOAD
          Writes the contact QR payload, or parses one and prints "ID PUBLIC-KEY-HEX [EXPIRY]"
          (exit 1 when it is malformed).
        """
    if args.isEmpty { usageText(usage, help: false) }
    let o = Options(args, allowed: ["id", "public-key", "expiry", "parse"], positional: 0...0, command: cmd)
    if o.help { usageText(usage, help: true) }
    if o.values.isEmpty { usageText(usage, help: false) }
    if let payload = o.values["parse"] {
        if let other = ["id", "public-key", "expiry"].first(where: { o.values[$0] != nil }) {
            usageError("\(cmd): --parse takes no --\(other)")
        }
        do {
            let qr = try ContactQRCode(parsing: payload)
            print("\(qr.id) \(Hex.encode(qr.publicKey))" + (qr.expiry.map { " \($0)" } ?? ""))
        } catch {
            checkFailure("\(cmd): \(error)")
        }
        return
    }
    guard let id = threemaID(o, "id", cmd) else { usageError("\(cmd): missing --id") }
    let pk = hex32(o, "public-key", cmd)
    let expiry = o.values["expiry"].map { v -> UInt64 in
        guard let n = UInt64(v) else { usageError("\(cmd): --expiry is Unix seconds") }
        return n
    }
    do { print(ContactQRCode(contact: try ThreemaContact(id: id, publicKey: pk), expiry: expiry).payload) } catch {
        usageError("\(cmd): \(error)")
    }
}

/// The password: the contents of `--password-file` or, without it, standard input; one trailing
/// newline (LF or CRLF) is removed. Never from argv.
func readPassword(_ o: Options, _ command: String) -> String {
    var bytes: [UInt8] = []
    if let path = o.values["password-file"] {
        bytes = readFile(path, limit: 1 << 16, command)
    } else {
        bytes = readAllStdin(limit: 1 << 16, command)
    }
    if bytes.last == 0x0A { bytes.removeLast() }
    if bytes.last == 0x0D { bytes.removeLast() }
    defer { bytes.secureWipe() }
    guard let s = String(validating: bytes, as: UTF8.self) else { usageError("\(command): the password is not UTF-8") }
    return s
}

func threemaSafeCommand(_ args: [String]) {
    let cmd = "threema safe"
    guard let sub = args.first, sub != "--help", sub != "-h" else { usageText(threemaSafeUsage, help: !args.isEmpty) }
    let rest = Array(args.dropFirst())
    switch sub {
    case "derive":
        let o = Options(rest, allowed: ["id", "password-file"], positional: 0...0, command: cmd + " derive")
        if o.help { usageText(threemaSafeUsage, help: true) }
        guard let id = threemaID(o, "id", cmd + " derive") else { usageError("\(cmd) derive: missing --id") }
        let password = readPassword(o, cmd + " derive")
        do {
            let keys = try SafeKeys(password: password, identity: id)
            print(keys.backupIDHex)
            print(keys.encryptionKey.withUnsafeBytes { Hex.encode($0) })
        } catch {
            usageError("\(cmd) derive: \(error)")
        }
    default:
        if !threemaSafeExtraCommand(sub, rest) { usageError("\(cmd): unknown command '\(sub)'") }
    }
}
