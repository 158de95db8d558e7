// `rampart mtproto secret-chat dh-config | dh | seal | open | encode | decode | file-*`: the secret-chat
// primitives of RampartMTProto (Docs/MTProto.md §7.2, §7.3, §7.5, §7.7) as commands that a script can
// drive one step at a time (Tests/Interop/tg_secret_interop.py plays them against tg-secret). Keys never
// come from argv: chat keys and file keys are files (written mode 0600), TL and messages go through
// stdin and stdout. Exit status: 0 done, 1 a cryptographic refusal (a DH check, a fingerprint mismatch,
// a message that does not open, malformed TL), 2 bad usage.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartMTProto

let secretChatToolsUsage = """
       rampart mtproto secret-chat dh-config
       rampart mtproto secret-chat dh --role creator|acceptor --key-out F
       rampart mtproto secret-chat seal --key-file F --sender creator|acceptor [--version v2|v1] < tl > data
       rampart mtproto secret-chat open --key-file F [--other-key-file F2] --sender creator|acceptor [--allow-v1 yes] < data > tl
       rampart mtproto secret-chat encode --kind KIND --in-seq-no N --out-seq-no N [--random-id N] [--layer L] [...] > tl
       rampart mtproto secret-chat decode < tl
       rampart mtproto secret-chat file-fingerprint --file-key F
       rampart mtproto secret-chat file-encrypt --file-key F < file > encrypted
       rampart mtproto secret-chat file-decrypt --file-key F --size N < encrypted > file

  dh-config  prints the DH configuration the tools use (Telegram's prime, g = 3, version 1):
             `g: 3`, `p: HEX`, `version: 1`.
  dh         one side of the key exchange (Docs/MTProto.md §7.2, and a re-key's RequestKey/AcceptKey, §7.6).
             creator: prints `g_a: HEX` (stdout is flushed), then reads one line `G_B_HEX KEY_FINGERPRINT`
             (decimal int64) from stdin, checks g_b and the fingerprint, writes the 256-byte key to
             --key-out and prints `key_fingerprint: N`. The secret exponent never leaves the process.
             acceptor: reads g_a as hex from stdin, checks it, prints `g_b: HEX` and
             `key_fingerprint: N` and writes the key to --key-out.
  seal       encrypts one serialized decryptedMessageLayer (stdin) for the chat (§7.3): v2 with the
             sender's x (creator 0, acceptor 8), or v1; writes key_fingerprint ‖ msg_key ‖ ciphertext.
  open       decrypts one message written by --sender with the key (and --other-key-file, the other key
             during a re-key); writes the TL on stdout and `opened: key_fingerprint N vV` on stderr.
             Any refusal: `rampart: message rejected` on stderr, nothing on stdout, exit 1.
  encode     writes a decryptedMessageLayer (31 random bytes, --layer default 144, wire-form sequence
             numbers) around one message. KIND: text (decryptedMessage#91cc4674, the text read from
             stdin as UTF-8), notify-layer (--value L), request-key (--exchange-id N, g_a hex on stdin),
             accept-key (--exchange-id N --key-fingerprint N, g_b hex on stdin), commit-key
             (--exchange-id N --key-fingerprint N), abort-key (--exchange-id N), noop,
             resend (--start N --end N).
  decode     reads a decryptedMessageLayer and prints it as one JSON object (layer, in_seq_no,
             out_seq_no, random_bytes (a count), kind, random_id, text (and media: a document's
             mime_type, size, key, iv and caption) or action with its fields).
  file-*     secret-chat files (§7.7); --file-key holds 64 bytes, the AES key then the IV.
             file-fingerprint prints `key_fingerprint: N` (int32 from MD5(key ‖ iv));
             file-encrypt pads with zeros to whole blocks and encrypts with AES-256-IGE;
             file-decrypt decrypts and cuts to --size bytes.
  Standard input is bounded by the protocol: 16 MiB of TL (seal, decode, encode's text), one message
  carrying that (open), 64 KiB of hex (dh, request-key, accept-key), 2 GiB for files; more is bad
  usage (`input too large`, exit 2), as is a text whose message would exceed 16 MiB of TL.
"""

private let toolCommands: Set<String> = [
    "dh-config", "dh", "seal", "open", "encode", "decode", "file-fingerprint", "file-encrypt", "file-decrypt",
]

/// Runs a secret-chat tool command if `args` names one; false otherwise.
func secretChatToolCommand(_ args: [String]) -> Bool {
    guard let name = args.first, toolCommands.contains(name) else { return false }
    let cmd = "mtproto secret-chat \(name)"
    let o = Options(Array(args.dropFirst()), allowed: [
        "role", "key-out", "key-file", "other-key-file", "sender", "version", "allow-v1", "kind", "in-seq-no",
        "out-seq-no", "random-id", "layer", "value", "exchange-id", "key-fingerprint", "start", "end",
        "file-key", "size",
    ], positional: 0...0, command: cmd)
    if o.help { print("usage:" + secretChatToolsUsage.dropFirst(6)); exit(0) }
    switch name {
    case "dh-config":
        let c = SecretChat.DHConfig.telegram()
        print("g: \(c.g)")
        print("p: \(Hex.encode(c.prime))")
        print("version: \(c.version)")
    case "dh": dhTool(o, cmd)
    case "seal": sealTool(o, cmd)
    case "open": openTool(o, cmd)
    case "encode": encodeTool(o, cmd)
    case "decode": decodeTool(cmd)
    default: fileTool(name, o, cmd)
    }
    return true
}

/// A cryptographic refusal: one line on stderr, exit status 1.
private func refuse(_ message: String) -> Never {
    printError("rampart: \(message)")
    exit(1)
}

/// How much standard input each tool reads at most (more is bad usage: `input too large`). The TL
/// limits are the protocol's (``SecretChat/Envelope/maxTLLength``); a DH value is 256 bytes, so its
/// hex line is far below 64 KiB; files are bounded as Telegram bounds documents (2 GiB).
private enum StdinLimit {
    static let tl = SecretChat.Envelope.maxTLLength
    static let message = SecretChat.Envelope.headerLength + 4 + SecretChat.Envelope.maxTLLength + 1024
    static let hexLine = 64 << 10
    static let file = 1 << 31
}

/// One line of standard input (without its newline), at most `limit` bytes; nil at the end of the input.
private func readStdinLine(limit: Int, _ cmd: String) -> String? {
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while true {
        let n = read(0, &byte, 1)
        if n < 0 && errno == EINTR { continue }
        if n < 0 { usageError("\(cmd): cannot read standard input: \(String(cString: strerror(errno)))") }
        if n == 0 { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
        if byte == 0x0A { return String(decoding: line, as: UTF8.self) }
        guard line.count < limit else { usageError("\(cmd): input too large (a line of more than \(limit) bytes)") }
        line.append(byte)
    }
}

private func side(_ o: Options, _ name: String, _ cmd: String) -> SecretChat.Side {
    switch o.require(name, cmd) {
    case "creator": return .creator
    case "acceptor": return .acceptor
    default: usageError("\(cmd): --\(name) must be creator or acceptor")
    }
}

private func int64Option(_ o: Options, _ name: String, _ cmd: String) -> Int64? {
    guard let v = o.values[name] else { return nil }
    guard let n = Int64(v) else { usageError("\(cmd): --\(name) must be a signed 64-bit integer") }
    return n
}

private func int32Option(_ o: Options, _ name: String, _ cmd: String) -> Int32? {
    guard let v = o.values[name] else { return nil }
    guard let n = Int32(v) else { usageError("\(cmd): --\(name) must be a signed 32-bit integer") }
    return n
}

/// Writes `bytes` to `path` (created or truncated, mode 0600).
private func writeSecretFile(_ path: String, _ bytes: UnsafeRawBufferPointer, _ cmd: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { usageError("\(cmd): cannot write \(path)") }
    defer { close(fd) }
    _ = fchmod(fd, 0o600)
    var off = 0
    while off < bytes.count {
        let n = write(fd, bytes.baseAddress! + off, bytes.count - off)
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { usageError("\(cmd): cannot write \(path)") }
        off += n
    }
}

/// Hex text with surrounding whitespace removed, or a usage error.
private func hexText(_ text: String, _ what: String, _ cmd: String) -> [UInt8] {
    let t = text.filter { !$0.isWhitespace }
    guard let b = try? Hex.decode(t) else { usageError("\(cmd): \(what) is not valid hex") }
    return b
}

private func dhTool(_ o: Options, _ cmd: String) {
    let out = o.require("key-out", cmd)
    let config = SecretChat.DHConfig.telegram()
    var rng = SecureRandom()
    let key: SecretChat.Key
    switch side(o, "role", cmd) {
    case .creator:
        let request: SecretChat.KeyRequest
        do { request = try SecretChat.KeyRequest(config: config, using: &rng) } catch { refuse("\(error)") }
        print("g_a: \(Hex.encode(request.gA))")
        fflush(nil)
        guard let line = readStdinLine(limit: StdinLimit.hexLine, cmd) else {
            usageError("\(cmd): expected `G_B_HEX KEY_FINGERPRINT` on stdin")
        }
        let parts = line.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, let fp = Int64(parts[1]) else {
            usageError("\(cmd): expected `G_B_HEX KEY_FINGERPRINT` on stdin")
        }
        let gB = hexText(String(parts[0]), "g_b", cmd)
        do { key = try request.complete(gB: gB, keyFingerprint: fp) } catch {
            refuse(error == .fingerprintMismatch ? "key fingerprint mismatch: discard the chat" : "\(error)")
        }
    case .acceptor:
        var input = readAllStdin(limit: StdinLimit.hexLine, cmd)
        let gA = hexText(String(decoding: input, as: UTF8.self), "g_a", cmd)
        input.secureWipe()
        let acceptance: SecretChat.KeyAcceptance
        do { acceptance = try SecretChat.KeyAcceptance(gA: gA, config: config, using: &rng) } catch { refuse("\(error)") }
        // The key is stored before g_b goes out: a --key-out that cannot be written leaves stdout empty.
        acceptance.key.withUnsafeBytes { writeSecretFile(out, $0, cmd) }
        print("g_b: \(Hex.encode(acceptance.gB))")
        print("key_fingerprint: \(acceptance.key.fingerprint)")
        return
    }
    key.withUnsafeBytes { writeSecretFile(out, $0, cmd) }
    print("key_fingerprint: \(key.fingerprint)")
}

private func sealTool(_ o: Options, _ cmd: String) {
    let key = readChatKey(o.require("key-file", cmd), cmd)
    let sender = side(o, "sender", cmd)
    var tl = readAllStdin(limit: StdinLimit.tl, cmd)
    defer { tl.secureWipe() }
    var rng = SecureRandom()
    do {
        switch o.values["version"] ?? "v2" {
        case "v2": writeStdout(try SecretChat.Envelope.encrypt(tl, key: key, sender: sender, using: &rng))
        case "v1": writeStdout(try SecretChat.Envelope.encryptV1(tl, key: key, using: &rng))
        default: usageError("\(cmd): --version must be v2 or v1")
        }
    } catch {
        usageError("\(cmd): \(error)")
    }
}

private func openTool(_ o: Options, _ cmd: String) {
    var keys = [readChatKey(o.require("key-file", cmd), cmd)]
    if let other = o.values["other-key-file"] { keys.append(readChatKey(other, cmd)) }
    let sender = side(o, "sender", cmd)
    let allowV1: Bool
    switch o.values["allow-v1"] ?? "no" {
    case "yes": allowV1 = true
    case "no": allowV1 = false
    default: usageError("\(cmd): --allow-v1 must be yes or no")
    }
    let data = readAllStdin(limit: StdinLimit.message, cmd)
    guard var opened = try? SecretChat.Envelope.decrypt(data, keys: keys, sender: sender, allowV1: allowV1) else {
        refuse("message rejected")
    }
    printError("opened: key_fingerprint \(opened.key.fingerprint) \(opened.version == .v2 ? "v2" : "v1")")
    writeStdout(opened.tl)
    opened.tl.secureWipe()
}

private func encodeTool(_ o: Options, _ cmd: String) {
    guard let inSeq = int32Option(o, "in-seq-no", cmd), let outSeq = int32Option(o, "out-seq-no", cmd) else {
        usageError("\(cmd): --in-seq-no and --out-seq-no are required")
    }
    let layer = int32Option(o, "layer", cmd) ?? SecretChat.Layer.current
    var rng = SecureRandom()
    let randomID = int64Option(o, "random-id", cmd) ?? Int64(bitPattern: rng.next())
    func exchangeID() -> Int64 {
        guard let v = int64Option(o, "exchange-id", cmd) else { usageError("\(cmd): missing --exchange-id") }
        return v
    }
    func fingerprint() -> Int64 {
        guard let v = int64Option(o, "key-fingerprint", cmd) else { usageError("\(cmd): missing --key-fingerprint") }
        return v
    }
    func stdinHex(_ what: String) -> [UInt8] {
        hexText(String(decoding: readAllStdin(limit: StdinLimit.hexLine, cmd), as: UTF8.self), what, cmd)
    }
    let message: SecretChat.DecryptedMessage
    switch o.require("kind", cmd) {
    case "text":
        var bytes = readAllStdin(limit: StdinLimit.tl, cmd)
        defer { bytes.secureWipe() }
        guard let text = String(validating: bytes, as: UTF8.self) else { usageError("\(cmd): the text on stdin is not UTF-8") }
        message = .message(SecretChat.PlainMessage(randomID: randomID, message: text))
    case "notify-layer":
        guard let v = int32Option(o, "value", cmd) else { usageError("\(cmd): missing --value") }
        message = .service(randomID: randomID, action: .notifyLayer(v))
    case "request-key": message = .service(randomID: randomID, action: .requestKey(exchangeID: exchangeID(), gA: stdinHex("g_a")))
    case "accept-key":
        message = .service(randomID: randomID, action: .acceptKey(exchangeID: exchangeID(), gB: stdinHex("g_b"),
                                                                  keyFingerprint: fingerprint()))
    case "commit-key": message = .service(randomID: randomID, action: .commitKey(exchangeID: exchangeID(), keyFingerprint: fingerprint()))
    case "abort-key": message = .service(randomID: randomID, action: .abortKey(exchangeID: exchangeID()))
    case "noop": message = .service(randomID: randomID, action: .noop)
    case "resend":
        guard let s = int32Option(o, "start", cmd), let e = int32Option(o, "end", cmd) else { usageError("\(cmd): missing --start or --end") }
        message = .service(randomID: randomID, action: .resend(startSeqNo: s, endSeqNo: e))
    default:
        usageError("\(cmd): --kind must be text, notify-layer, request-key, accept-key, commit-key, abort-key, noop or resend")
    }
    do {
        // serialize() throws for a text TL cannot hold (2^24 bytes or more) where `serialized` would trap.
        var tl = try SecretChat.DecryptedMessageLayer(layer: layer, inSeqNo: inSeq, outSeqNo: outSeq, message: message,
                                                      using: &rng).serialize()
        defer { tl.secureWipe() }
        guard tl.count <= SecretChat.Envelope.maxTLLength else {
            usageError("\(cmd): input too large (the message would be \(tl.count) bytes of TL, more than \(SecretChat.Envelope.maxTLLength))")
        }
        writeStdout(tl)
    } catch .invalidPlaintext(let why) {
        usageError("\(cmd): input too large (\(why))")
    } catch {
        usageError("\(cmd): \(error)")
    }
}

/// A JSON string literal.
private func jsonString(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if u.value < 0x20 {
                let h = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            } else {
                out.unicodeScalars.append(u)
            }
        }
    }
    return out + "\""
}

private func decodeTool(_ cmd: String) {
    var tl = readAllStdin(limit: StdinLimit.tl, cmd)
    defer { tl.secureWipe() }
    let layer: SecretChat.DecryptedMessageLayer
    do { layer = try SecretChat.DecryptedMessageLayer.decode(tl) } catch { refuse("\(error)") }
    var fields: [String] = [
        "\"layer\": \(layer.layer)", "\"in_seq_no\": \(layer.inSeqNo)", "\"out_seq_no\": \(layer.outSeqNo)",
        "\"random_bytes\": \(layer.randomBytes.count)",
    ]
    if let id = layer.message.randomID { fields.append("\"random_id\": \(id)") }
    switch layer.message {
    case .message(let m), .message46(let m):
        fields.append("\"kind\": \"message\"")
        fields.append("\"text\": \(jsonString(m.message))")
        switch m.media {
        case .document(let d)?:
            // The file key is in the plaintext `open` already wrote; the receiver needs it for the file.
            fields.append("\"media\": {\"type\": \"document\", \"mime_type\": \(jsonString(d.mimeType)), "
                          + "\"size\": \(d.size), \"key\": \"\(Hex.encode(d.key))\", \"iv\": \"\(Hex.encode(d.iv))\", "
                          + "\"caption\": \(jsonString(d.caption))}")
        case .photo?: fields.append("\"media\": {\"type\": \"photo\"}")
        case .empty?, nil: break
        }
    case .message23(_, _, let text, _), .message8(_, _, let text, _):
        fields.append("\"kind\": \"message\"")
        fields.append("\"text\": \(jsonString(text))")
    case .service(_, let action), .service8(_, _, let action):
        fields.append("\"kind\": \"service\"")
        let a: String
        switch action {
        case .requestKey(let id, let gA): a = "\"type\": \"request_key\", \"exchange_id\": \(id), \"g_a\": \"\(Hex.encode(gA))\""
        case .acceptKey(let id, let gB, let fp):
            a = "\"type\": \"accept_key\", \"exchange_id\": \(id), \"g_b\": \"\(Hex.encode(gB))\", \"key_fingerprint\": \(fp)"
        case .commitKey(let id, let fp): a = "\"type\": \"commit_key\", \"exchange_id\": \(id), \"key_fingerprint\": \(fp)"
        case .abortKey(let id): a = "\"type\": \"abort_key\", \"exchange_id\": \(id)"
        case .noop: a = "\"type\": \"noop\""
        case .notifyLayer(let l): a = "\"type\": \"notify_layer\", \"layer\": \(l)"
        case .resend(let s, let e): a = "\"type\": \"resend\", \"start_seq_no\": \(s), \"end_seq_no\": \(e)"
        default: a = "\"type\": \"other\""
        }
        fields.append("\"action\": {\(a)}")
    case .unsupported(let u):
        fields.append("\"kind\": \"unsupported\", \"constructor\": \(u.constructor)")
    }
    print("{" + fields.joined(separator: ", ") + "}")
}

private func fileTool(_ name: String, _ o: Options, _ cmd: String) {
    var raw = readFile(o.require("file-key", cmd), limit: 64, cmd)
    defer { raw.secureWipe() }
    guard raw.count == 64 else { usageError("\(cmd): --file-key must hold 64 bytes (key then IV), not \(raw.count)") }
    var k = Array(raw[0..<32]), iv = Array(raw[32..<64])
    defer { k.secureWipe(); iv.secureWipe() }
    guard let fileKey = try? SecretChat.FileKey(key: k, iv: iv) else { usageError("\(cmd): bad file key") }
    switch name {
    case "file-fingerprint": print("key_fingerprint: \(fileKey.fingerprint)")
    case "file-encrypt":
        var plain = readAllStdin(limit: StdinLimit.file, cmd)
        defer { plain.secureWipe() }
        writeStdout(fileKey.encrypt(plain))
    default:
        guard let size = o.int("size", cmd) else { usageError("\(cmd): missing --size") }
        // Any size reaches the library, which refuses one that does not match the data (exit 1).
        let data = readAllStdin(limit: StdinLimit.file + 16, cmd)
        guard var plain = try? fileKey.decrypt(data, size: size) else {
            refuse("the encrypted file does not have the padded length of --size bytes")
        }
        writeStdout(plain)
        plain.secureWipe()
    }
}
