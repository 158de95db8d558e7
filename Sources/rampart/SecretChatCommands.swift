// `rampart mtproto secret-chat …`: Telegram secret-chat tools over RampartMTProto's SecretChat
// (Docs/MTProto.md §7): `visualize`, the key image as an SVG; the step-by-step tools are in
// SecretChatInteropCommands.swift.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartMTProto

let secretChatUsage = """
usage: rampart mtproto secret-chat visualize (--key-hash HEX | --key-file F [--layer46-key-file F2]) --out FILE.svg [--cell N]

  visualize  draws the key image people compare to verify a secret chat (Docs/MTProto.md §7.7) and
             writes it as an SVG to --out (replaced if it exists). Prints the key hash and, with
             --key-file, the key's key_fingerprint and its SHA-1 and SHA-256 fingerprints.
               --key-hash HEX          the 36-byte key hash (12 x 12 image) or a legacy 16-byte one (8 x 8)
               --key-file F            the 256-byte chat key (raw bytes, or 512 hex digits); the hash is
                                       SHA1(key)[0..<16] ‖ SHA256(key)[0..<20]
               --layer46-key-file F2   the key in use when the chat reached layer 46, if it differs
                                       from the original key (its SHA-256 half of the hash)
               --cell N                pixels per cell (default 16)
"""

func secretChatCommand(_ args: [String]) {
    if args.first == "chat" { secretChatRelayCommand(Array(args.dropFirst())); return }
    if secretChatToolCommand(args) { return }
    let cmd = "mtproto secret-chat"
    let o = Options(args, allowed: ["key-hash", "key-file", "layer46-key-file", "out", "cell"], positional: 1...1, command: cmd)
    if o.help { print(secretChatUsage + "\n" + secretChatToolsUsage + "\n" + secretChatRelayUsage); exit(0) }
    guard o.positional == ["visualize"] else { usageError("\(cmd): expected `visualize`, `chat`, `dh-config`, `dh`, `seal`, `open`, `encode`, `decode` or `file-*` (see rampart mtproto secret-chat --help)") }
    let out = o.require("out", "\(cmd) visualize")
    let cell = o.int("cell", cmd) ?? 16
    guard (1...256).contains(cell) else { usageError("\(cmd): --cell must be 1...256") }
    let hash: [UInt8]
    var lines: [String] = []   // printed once the SVG is written: a failure leaves stdout empty
    if let h = o.hex("key-hash", cmd) {
        guard o.values["key-file"] == nil, o.values["layer46-key-file"] == nil else {
            usageError("\(cmd): give --key-hash or --key-file, not both")
        }
        hash = h
    } else if let path = o.values["key-file"] {
        let key = readChatKey(path, cmd)
        let layer46 = o.values["layer46-key-file"].map { readChatKey($0, cmd) }
        hash = SecretChat.keyHash(originalKey: key, layer46Key: layer46)
        lines.append("key_fingerprint: \(key.fingerprint) (\(Hex.encode(key.fingerprintBytes)))")
        lines.append("sha1-fingerprint: \(Hex.encode(SecretChat.sha1Fingerprint(of: key)))")
        lines.append("sha256-fingerprint: \(Hex.encode(SecretChat.sha256Fingerprint(of: key)))")
    } else {
        usageError("\(cmd): missing --key-hash or --key-file")
    }
    guard let image = try? SecretChat.KeyImage(keyHash: hash) else {
        usageError("\(cmd): the key hash must be 36 bytes (or 16 for the legacy image), not \(hash.count)")
    }
    lines.append("key-hash: \(Hex.encode(hash))")
    guard writeWholeFile(out, Array(image.svg(cellSize: cell).utf8)) else {
        usageError("\(cmd): cannot write \(out): \(String(cString: strerror(errno)))")
    }
    for line in lines { print(line) }
    print("wrote \(out) (\(image.side)x\(image.side))")
}

/// Writes `bytes` to `path` (created or replaced, mode 0644); false when that fails.
func writeWholeFile(_ path: String, _ bytes: [UInt8]) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return writeFully(fd, bytes)
}

/// Writes all of `bytes` to the blocking descriptor `fd` (a file), retrying after signals; false
/// when a write fails.
func writeFully(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { writeFully(fd, $0) }
}

/// ``writeFully(_:_:)`` from memory (a secret's storage, written in place).
func writeFully(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var written = 0
    while written < bytes.count {
        let n = write(fd, bytes.baseAddress! + written, bytes.count - written)
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return false }
        written += n
    }
    return true
}

/// Replaces `path` so that a crash at any point leaves the old file or the new one, whole: the bytes
/// go to `path.tmp` (mode 0600), which is synced, renamed over `path`, and the directory synced.
/// False on any failure (the old file is then still in place).
func writeFileAtomically(_ path: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
    let temporary = path + ".tmp"
    let t = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard t >= 0 else { return false }
    guard writeFully(t, bytes), fsync(t) == 0 else { close(t); unlink(temporary); return false }
    close(t)
    guard rename(temporary, path) == 0 else { unlink(temporary); return false }
    let slash = path.lastIndex(of: "/")
    let dir = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    let d = open(dir, O_RDONLY)
    if d >= 0 { _ = fsync(d); close(d) }
    return true
}

/// A 256-byte chat key from a file: raw bytes, or 512 hex digits (whitespace ignored).
func readChatKey(_ path: String, _ cmd: String) -> SecretChat.Key {
    var bytes = readFile(path, limit: 4096, cmd)
    defer { bytes.secureWipe() }
    if bytes.count != 256 {
        let text = String(decoding: bytes.filter { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }, as: UTF8.self)
        guard var decoded = try? Hex.decode(text) else { usageError("\(cmd): \(path) is neither 256 raw bytes nor hex") }
        defer { decoded.secureWipe() }
        guard let k = try? SecretChat.Key(decoded) else { usageError("\(cmd): \(path) does not hold a 256-byte key") }
        return k
    }
    guard let k = try? SecretChat.Key(bytes) else { usageError("\(cmd): \(path) does not hold a 256-byte key") }
    return k
}
