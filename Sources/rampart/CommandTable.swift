// The one table of `rampart` commands: dispatch, `rampart --help` and every group's help, the
// `--help` of every command, and the synopses the README's CLI section must list
// (`rampart help --synopses`, checked by Scripts/check-cli.py in CI). The names and flags are a
// contract other tools script against: keep them.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One command: the words that name it, the synopsis lines the README carries, a one-line summary
/// for its group's help, the text `--help` prints, and its entry point (given the arguments after
/// the words).
struct CLICommand {
    let words: [String]
    let synopses: [String]
    let summary: String
    let usage: String
    let run: ([String]) -> Void

    init(_ words: String, _ synopses: [String], _ summary: String, usage: String? = nil, run: @escaping ([String]) -> Void) {
        self.words = words.split(separator: " ").map(String.init)
        self.synopses = synopses
        self.summary = summary
        let head = "usage: " + synopses.joined(separator: "\n       ")
        if let usage { self.usage = usage.hasPrefix("usage:") ? usage : head + "\n" + usage } else { self.usage = head + "\n  " + summary }
        self.run = run
    }
}

/// Groups of commands and what their help says of them.
let commandGroups: [(words: [String], summary: String)] = [
    (["kdf"], "derive a key from a hex password and salt"),
    (["mtproto"], "Telegram MTProto: the loopback test server, its client, secret chats"),
    (["mtproto", "secret-chat"], "Telegram secret chats: the key image, the steps one at a time, a whole client"),
    (["threema"], "Threema: messages, blobs, address-book hashes, 3mid, Safe, ID backups, Ibex, calls, the chat server"),
]

nonisolated(unsafe) let commandTable: [CLICommand] = [
    CLICommand("hash", ["rampart hash sha1|sha256|sha512|blake2b [--length N] [--key HEX] [--salt HEX] [--personal HEX] < in"],
               "hash standard input, print lowercase hex", usage: hashUsage, run: hashCommand),
    CLICommand("hmac", ["rampart hmac sha1|sha256|sha512 --key HEX < in"], "HMAC of standard input, lowercase hex",
               usage: hmacUsage, run: hmacCommand),
    CLICommand("kdf pbkdf2", ["rampart kdf pbkdf2 --hash sha1|sha256|sha512 --password-hex HEX --salt-hex HEX --iterations N --length N"],
               "PBKDF2-HMAC, lowercase hex", usage: kdfUsage, run: { kdfCommand(["pbkdf2"] + $0) }),
    CLICommand("kdf scrypt", ["rampart kdf scrypt --password-hex HEX --salt-hex HEX --n N --r R --p P --length N"],
               "scrypt, lowercase hex", usage: kdfUsage, run: { kdfCommand(["scrypt"] + $0) }),
    CLICommand("aes", ["rampart aes ige-encrypt|ige-decrypt|cbc-encrypt|cbc-decrypt|ctr-encrypt|ctr-decrypt --key HEX --iv HEX [--padding pkcs7] < in",
                       "rampart aes gcm-seal|gcm-open --key HEX --nonce HEX [--aad HEX] < in"],
               "AES-IGE, CBC, CTR and GCM of standard input (raw bytes)", usage: aesUsage, run: aesCommand),
    CLICommand("secretbox", ["rampart secretbox seal|open --key HEX --nonce HEX < in"], "NaCl secretbox of standard input",
               usage: secretboxUsage, run: secretboxCommand),
    CLICommand("stream", ["rampart stream xsalsa20 --key HEX --nonce HEX < in"], "XSalsa20 keystream XOR of standard input",
               usage: streamUsage, run: streamCommand),
    CLICommand("x25519", ["rampart x25519 --scalar HEX [--point HEX]"], "RFC 7748 X25519 (the public key without --point)",
               usage: x25519Usage, run: x25519Command),
    CLICommand("box", ["rampart box seal|open --secret-key HEX --public-key HEX --nonce HEX < in"], "NaCl crypto_box of standard input",
               usage: boxUsage, run: boxCommand),
    CLICommand("prime", ["rampart prime check --hex HEX [--safe]"], "print prime, safe-prime or composite",
               usage: primeUsage, run: primeCommand),
    CLICommand("rsa", ["rampart rsa keygen --out FILE", "rampart rsa public --key FILE"],
               "a 2048-bit RSA key to a PEM file; a public key's PEM and fingerprint", usage: rsaUsage, run: rsaCommand),
    CLICommand("mtproto serve", ["rampart mtproto serve --port P [--rsa-key FILE] [--transports all] [--secret HEX]"],
               "the loopback MTProto test server (MTProxy secrets, the secret-chat relay; limits: --help)",
               usage: mtprotoUsage, run: { mtprotoCommand(["serve"] + $0) }),
    CLICommand("mtproto ping", ["rampart mtproto ping --port P --rsa-key PUB.pem --transport NAME [--secret HEX] [--pfs S]"],
               "the Swift client against it: handshake, ping, rpc_error, a bound temporary key",
               usage: mtprotoUsage, run: { mtprotoCommand(["ping"] + $0) }),
    CLICommand("mtproto secret-chat visualize",
               ["rampart mtproto secret-chat visualize (--key-hash HEX | --key-file F [--layer46-key-file F2]) --out FILE.svg [--cell N]"],
               "a secret chat's key image as an SVG", usage: secretChatUsage, run: { secretChatCommand(["visualize"] + $0) }),
    CLICommand("mtproto secret-chat dh-config", ["rampart mtproto secret-chat dh-config"], "the DH parameters the steps use",
               usage: secretChatToolsUsage, run: { secretChatCommand(["dh-config"] + $0) }),
    CLICommand("mtproto secret-chat dh", ["rampart mtproto secret-chat dh --role creator|acceptor --key-out F"],
               "one side of the key exchange (g_a / g_b through standard input and output)",
               usage: secretChatToolsUsage, run: { secretChatCommand(["dh"] + $0) }),
    CLICommand("mtproto secret-chat seal", ["rampart mtproto secret-chat seal --key-file F --sender creator|acceptor [--version v1] < tl"],
               "the encrypted envelope of end-to-end TL", usage: secretChatToolsUsage, run: { secretChatCommand(["seal"] + $0) }),
    CLICommand("mtproto secret-chat open", ["rampart mtproto secret-chat open --key-file F --sender creator|acceptor [--other-key-file F2] < envelope"],
               "the end-to-end TL of an envelope", usage: secretChatToolsUsage, run: { secretChatCommand(["open"] + $0) }),
    CLICommand("mtproto secret-chat encode", ["rampart mtproto secret-chat encode --kind KIND --in-seq-no N --out-seq-no N [--layer L]"],
               "a decryptedMessageLayer", usage: secretChatToolsUsage, run: { secretChatCommand(["encode"] + $0) }),
    CLICommand("mtproto secret-chat decode", ["rampart mtproto secret-chat decode < tl"], "end-to-end TL as JSON",
               usage: secretChatToolsUsage, run: { secretChatCommand(["decode"] + $0) }),
    CLICommand("mtproto secret-chat file-fingerprint", ["rampart mtproto secret-chat file-fingerprint --file-key F"],
               "an encrypted file's key fingerprint", usage: secretChatToolsUsage, run: { secretChatCommand(["file-fingerprint"] + $0) }),
    CLICommand("mtproto secret-chat file-encrypt", ["rampart mtproto secret-chat file-encrypt --file-key F < file"],
               "an encrypted file", usage: secretChatToolsUsage, run: { secretChatCommand(["file-encrypt"] + $0) }),
    CLICommand("mtproto secret-chat file-decrypt", ["rampart mtproto secret-chat file-decrypt --file-key F --size N < encrypted"],
               "a decrypted file cut to its size", usage: secretChatToolsUsage, run: { secretChatCommand(["file-decrypt"] + $0) }),
    CLICommand("mtproto secret-chat chat", ["rampart mtproto secret-chat chat --port P --rsa-key PUB.pem [--peer N --peer-access-hash H] [--state FILE --file-bytes 0]"],
               "a whole secret-chat client through serve's relay", usage: secretChatRelayUsage, run: secretChatRelayCommand),
    CLICommand("threema message", ["rampart threema message seal --secret-key HEX --public-key HEX --from ID --to ID [--legacy] < body",
                                   "rampart threema message open --secret-key HEX --public-key HEX --from ID [--with-type] < envelope"],
               "an end-to-end message: body to envelope, envelope to body", usage: threemaMessageUsage, run: threemaMessageCommand),
    CLICommand("threema blob", ["rampart threema blob encrypt|decrypt --key HEX [--thumbnail] < in"], "a media blob",
               usage: threemaBlobUsage, run: threemaBlobCommand),
    CLICommand("threema hash", ["rampart threema hash email|phone VALUE"], "address-book hashes, hex",
               run: threemaHashCommand),
    CLICommand("threema 3mid", ["rampart threema 3mid --id ID --public-key HEX [--expiry S]", "rampart threema 3mid --parse PAYLOAD"],
               "the contact QR payload", run: threemaQRCommand),
    CLICommand("threema safe", ["rampart threema safe derive --id ID [--password-file F]",
                                "rampart threema safe encrypt|decrypt --key HEX < in",
                                "rampart threema safe backup --server URL --id ID --password-file F [--json-file F] [--server-auth-file F] [--timeout S]",
                                "rampart threema safe restore --server URL --id ID [--password-file F] [--server-auth-file F] [--timeout S]"],
               "Threema Safe: the keys, the encrypted blob, the server round trip", usage: threemaSafeUsage, run: threemaSafeCommand),
    CLICommand("threema id-backup", ["rampart threema id-backup encode --id ID --secret-key HEX [--password-file F]",
                                     "rampart threema id-backup decode [--backup-file F] [--password-file F]"],
               "the Threema ID backup text", run: threemaIDBackupCommand),
    CLICommand("threema safe-server", ["rampart threema safe-server --port P --dir DIR [--auth-file F] [--rate R[:B]]"],
               "a Threema Safe backup server on 127.0.0.1 (quotas, caps, timers: --help)",
               usage: threemaSafeServerUsage, run: threemaSafeServerCommand),
    CLICommand("threema ibex", ["rampart threema ibex demo [--seed N]"], "two parties run an Ibex session, every state printed",
               usage: threemaIbexUsage, run: threemaIbexCommand),
    CLICommand("threema call-id", ["rampart threema call-id --creator ID --group-id HEX --gck HEX|--gck-file F --sfu-url URL [--protocol-version N]"],
               "a group call's ID", usage: threemaCallIDUsage, run: threemaCallIDCommand),
    CLICommand("threema call", ["rampart threema call frame-seal|frame-open --codec opus|vp8 --gck HEX --pcmk HEX [--epoch N] [--ratchet N] [--mfsn N] < frame"],
               "a group call's media frames", usage: threemaCallUsage, run: threemaCallCommand),
    CLICommand("threema serve", ["rampart threema serve --port P [--key FILE] [--dir DIR] [--identities FILE] [--register-on-login] [--trace FILE]"],
               "the loopback chat server (CSP; limits: --help)", usage: threemaServeUsage, run: { threemaChatCommand("serve", $0) }),
    CLICommand("threema client-test", ["rampart threema client-test --port P --server-key HEX [--pairs N] [--messages N]",
                                        "rampart threema client-test --port P --server-key HEX --side a|b --identities FILE --state FILE"],
               "client pairs against it: end-to-end messages, Ibex, the offline queue", usage: threemaClientTestUsage,
               run: { threemaChatCommand("client-test", $0) }),
    CLICommand("vectors", ["rampart vectors [PATH...]"], "every vector file through the hardware and portable paths",
               usage: vectorsUsage, run: vectorsCommand),
    CLICommand("info", ["rampart info"], "CPU features, each primitive's implementations and the selected one, reference libraries",
               usage: infoUsage, run: infoCommand),
]

/// The help of the group named by `words` (`[]`: the whole tool): its commands and subgroups with
/// their summaries.
func groupHelp(_ words: [String]) -> String {
    var rows: [(String, String)] = []
    var seen = Set<String>()
    // In the table's order: a command one word below the group, or the subgroup a deeper one is in.
    for c in commandTable where c.words.count > words.count && Array(c.words.prefix(words.count)) == words {
        let name = c.words[words.count]
        guard seen.insert(name).inserted else { continue }
        if c.words.count == words.count + 1 {
            rows.append((name, c.summary))
        } else if let g = commandGroups.first(where: { $0.words == words + [name] }) {
            rows.append(("\(name) <command>", g.summary))
        }
    }
    let width = rows.map(\.0.count).max() ?? 0
    let head = words.isEmpty ? "rampart" : "rampart " + words.joined(separator: " ")
    var text = "usage: \(head) <command> [options]\n\ncommands:\n"
    for (name, summary) in rows {
        text += "  \(name)\(String(repeating: " ", count: width - name.count))  \(summary)\n"
    }
    text += "\nRun `\(head) <command> --help` for a command's options."
    if words.isEmpty { text += " `rampart help --synopses` lists every command line." }
    return text
}

/// Runs the command `arguments` name, or prints help: `--help` (or `-h`) after any command prints
/// its help on standard output (exit 0); a group without a command prints the group's help on
/// standard error (exit 2).
func dispatch(_ arguments: [String]) {
    if arguments.first == "help" {
        let rest = Array(arguments.dropFirst())
        switch rest {
        case []: print(groupHelp([])); return
        case ["--synopses"]: for c in commandTable { for s in c.synopses { print(s) } }; return
        case ["--commands"]: for c in commandTable { print(c.words.joined(separator: " ")) }; return
        default: dispatch(rest + ["--help"]); return
        }
    }
    let wantsHelp = arguments.contains("--help") || arguments.contains("-h")
    // The longest command whose words begin the arguments.
    let match = commandTable.filter { $0.words.count <= arguments.count && Array(arguments.prefix($0.words.count)) == $0.words }
        .max { $0.words.count < $1.words.count }
    if let c = match {
        if wantsHelp { print(c.usage); return }
        c.run(Array(arguments.dropFirst(c.words.count)))
        return
    }
    // A group (or the whole tool) without a command.
    let words = arguments.prefix { !$0.hasPrefix("-") }
    var group: [String] = []
    for g in commandGroups where g.words.count <= words.count && Array(words.prefix(g.words.count)) == g.words
        && g.words.count > group.count {
        group = g.words
    }
    if words.count > group.count {
        let unknown = (group + [words[group.count]]).joined(separator: " ")
        let see = group.isEmpty ? "rampart --help" : "rampart \(group.joined(separator: " ")) --help"
        usageError("unknown command '\(unknown)' (see \(see))")
    }
    if wantsHelp { print(groupHelp(group)); return }
    printError(groupHelp(group))
    exit(2)
}
