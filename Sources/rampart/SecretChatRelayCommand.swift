// `rampart mtproto secret-chat chat`: one side of a secret chat through `rampart mtproto serve`'s relay.
// The logic is RampartMTProtoServer's SecretChatRelayClient; this file owns the socket and the output.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartMTProto
import RampartMTProtoServer

let secretChatRelayUsage = """
       rampart mtproto secret-chat chat --port P --rsa-key PUB.pem [--peer USER --peer-access-hash H]
                                        [--messages N] [--burst N] [--file-bytes N] [--transport NAME] [--svg FILE]
                                        [--state FILE]

  chat       one side of a secret chat through the relay of `rampart mtproto serve` on 127.0.0.1:P
             (Docs/MTProto.md §7.9). Logs in as a numbered test user and prints
             `user N access-hash H`. Without --peer it waits for a chat request and accepts it;
             with --peer it requests a chat with that user. Both sides then exchange --messages texts
             (default 300, both directions together) in bursts of --burst (default 10), re-keying
             every 100 messages as the protocol asks, answer resend requests, check that every text
             arrives once and in order; the requester then sends an encrypted file of --file-bytes
             (default 1048576; 0: none) that the acceptor downloads, decrypts and confirms, and
             discards the chat. Prints the final key_fingerprint, the key hash (the key image) and
             the counts; --svg writes the key image. Exit status 0 when everything arrived and
             checked, 1 otherwise.

  --state FILE  survive being killed (SIGKILL included) at any point: the connection, the chat
             and the progress are saved to FILE (written atomically: a temporary file, fsync,
             rename; mode 0600; not encrypted: keep it private) before each step that reaches the
             server, and a run started again with the same options and FILE goes on where the
             saved state left off (the relay delivers again what was not acknowledged; a message
             is sent again under the same random_id, which the relay delivers once). Texts only:
             needs --file-bytes 0. Prints `restarts: N` at the end. A run whose FILE holds a
             finished chat prints its summary again.
"""

/// A socket as the relay client's link.
private final class SocketLink: MTProtoLink {
    let fd: Int32
    init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }

    func write(_ bytes: [UInt8]) throws(SecretChatRelayClient.Failure) {
        do { try Socket.writeAll(fd, bytes) } catch { throw .init("write: \(error)") }
    }

    func read(timeoutMs: Int) throws(SecretChatRelayClient.Failure) -> [UInt8] {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let r = poll(&p, 1, Int32(clamping: timeoutMs))
        if r == 0 { return [] }
        guard r > 0 else { throw .init("poll: errno \(errno)") }
        let bytes: [UInt8]
        do { bytes = try Socket.readSome(fd, timeoutMs: 0) } catch { throw .init("read: \(error)") }
        guard !bytes.isEmpty else { throw .init("the server closed the connection") }
        return bytes
    }
}

func secretChatRelayCommand(_ args: [String]) {
    let cmd = "mtproto secret-chat chat"
    let o = Options(args, allowed: ["port", "rsa-key", "peer", "peer-access-hash", "messages", "burst", "file-bytes",
                                    "transport", "svg", "state"], positional: 0...0, command: cmd)
    if o.help { print("usage:" + secretChatRelayUsage.dropFirst(6)); exit(0) }
    guard let port = o.int("port", cmd), (1...65_535).contains(port) else { usageError("\(cmd): --port must be 1...65535") }
    let keyPath = o.require("rsa-key", cmd)
    let transportName = o.values["transport"] ?? "intermediate"
    // Not HTTP: the relay pushes updates, which over HTTP need a long poll this driver does not keep.
    guard transportName != "http", let transport = clientTransport(transportName, dc: 2) else { usageError("\(cmd): unknown transport '\(transportName)'") }
    var plan = SecretChatRelayClient.Plan()
    plan.messages = o.int("messages", cmd) ?? plan.messages
    plan.burst = o.int("burst", cmd) ?? plan.burst
    plan.fileBytes = o.int("file-bytes", cmd) ?? plan.fileBytes
    guard (0...100_000).contains(plan.messages), (1...1000).contains(plan.burst), (0...(16 << 20)).contains(plan.fileBytes) else {
        usageError("\(cmd): --messages 0...100000, --burst 1...1000, --file-bytes 0...16777216")
    }
    let peer = o.int("peer", cmd)
    guard (peer == nil) == (o.values["peer-access-hash"] == nil) else { usageError("\(cmd): --peer and --peer-access-hash go together") }
    guard let peerHash = o.values["peer-access-hash"].map({ Int64($0) }) ?? Optional(0) else {
        usageError("\(cmd): --peer-access-hash must be a signed 64-bit integer")
    }
    let statePath = o.values["state"]
    if statePath != nil, plan.fileBytes != 0 {
        usageError("\(cmd): --state carries texts only: add --file-bytes 0")
    }
    // Every option is checked before the key file is read.
    let keys = readServerPublicKeys(keyPath, cmd)
    func fail(_ s: String) -> Never {
        print("FAIL: \(s)")
        fflush(nil)
        exit(1)
    }
    let fd: Int32
    do { fd = try Socket.connect(port: UInt16(port)) } catch { fail("\(error)") }
    let summary: SecretChatRelayClient.Summary
    do {
        let client = try SecretChatRelayClient(link: SocketLink(fd: fd), publicKeys: keys, transport: transport,
                                               clock: { unixNow() }, log: { print($0); fflush(nil) })
        if let statePath {
            summary = try resumableRun(client, statePath: statePath, peer: peer.map { (Int64($0), peerHash) }, plan: plan, cmd)
        } else {
        try client.connect()
        print("user \(client.user) access-hash \(client.accessHash)")
        fflush(nil)
        if let peer {
            summary = try client.runCreator(peer: Int64(peer), peerAccessHash: peerHash, plan: plan)
        } else {
            summary = try client.runAcceptor(plan: plan)
        }
        }
    } catch {
        fail(error.description)
    }
    print("key_fingerprint: \(summary.fingerprint)")
    print("key-hash: \(Hex.encode(summary.keyHash))")
    print("rekeys: \(summary.rekeys)")
    print("texts sent: \(summary.sent), received: \(summary.received)")
    print("gaps seen: \(summary.gaps), messages resent: \(summary.resent)")
    if statePath != nil { print("restarts: \(summary.restarts)") }
    if let f = summary.fileSHA256 { print("file sha256: \(Hex.encode(f))") }
    if let path = o.values["svg"] {
        guard let image = try? SecretChat.KeyImage(keyHash: summary.keyHash) else { fail("no key image") }
        guard writeWholeFile(path, Array(image.svg(cellSize: 16).utf8)) else { fail("cannot write \(path)") }
    }
    print("secret chat ok")
}

/// `--state FILE`: the run from the saved state (when FILE holds one), saving it atomically at
/// every step.
private func resumableRun(_ client: SecretChatRelayClient, statePath: String, peer: (Int64, Int64)?,
                          plan: SecretChatRelayClient.Plan, _ cmd: String) throws(SecretChatRelayClient.Failure) -> SecretChatRelayClient.Summary {
    var saved: SnapshotBytes?
    if access(statePath, F_OK) == 0 {
        var bytes = readFile(statePath, limit: 64 << 20, cmd)
        saved = SnapshotBytes(copying: bytes)
        bytes.secureWipe()
    }
    return try client.runResumable(role: peer == nil ? .acceptor : .creator, peer: peer.map { (id: $0.0, accessHash: $0.1) },
                                   plan: plan, saved: saved) { (state) throws(SecretChatRelayClient.Failure) in
        guard state.withUnsafeBytes({ writeFileAtomically(statePath, $0) }) else {
            throw .init("cannot write the state to \(statePath): \(String(cString: strerror(errno)))")
        }
    }
}
