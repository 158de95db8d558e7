// The client side of Threema Safe: `rampart threema safe backup|restore --server URL --id ID`.
// Derives the keys from the password, then PUTs or GETs `<server>/backups/<backup ID>` over plain
// HTTP/1.1 (the tool has no TLS: a loopback or trusted-network server, such as
// `rampart threema safe-server`). Socket code stays in the executable.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartCodecs
import RampartThreema
import RampartThreemaSafeServer

/// A parsed `http://host[:port][/path/]` server URL. Credentials never come from the command line:
/// a URL with `user:password@` is refused (they come from `--server-auth-file`).
struct SafeServerURL {
    var host: String
    var port: UInt16
    var basePath: String

    init?(_ text: String) {
        guard text.hasPrefix("http://") else { return nil }
        var rest = Substring(text.dropFirst(7))
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        rest = rest[slash...]
        guard !authority.contains("@") else { return nil }
        var hostPart = authority, portNumber: UInt16 = 80
        if let colon = authority.lastIndex(of: ":") {
            let digits = authority[authority.index(after: colon)...]
            guard digits.utf8.count <= 5, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let p = UInt16(digits), p > 0 else { return nil }
            portNumber = p
            hostPart = authority[..<colon]
        }
        guard !hostPart.isEmpty, hostPart.utf8.count <= 253,
              hostPart.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        guard rest.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), rest.utf8.count <= 2048 else { return nil }
        host = String(hostPart)
        port = portNumber
        basePath = rest.isEmpty ? "/" : (rest.hasSuffix("/") ? String(rest) : String(rest) + "/")
    }
}

/// A failed exchange with the Safe server, in plain words.
struct SafeClientError: Error, CustomStringConvertible {
    var description: String
}

/// Milliseconds left until `deadline` (monotonic), at least 0 and at most Int32.max.
private func remaining(_ deadline: Int64) -> Int32 {
    Int32(clamping: max(0, deadline - monotonicMilliseconds()))
}

/// A non-blocking TCP connection to `url`'s host, made before `deadline`.
private func connectBefore(_ deadline: Int64, _ url: SafeServerURL) throws(SafeClientError) -> Int32 {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    #if canImport(Glibc)
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    #else
    hints.ai_socktype = SOCK_STREAM
    #endif
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(url.host, String(url.port), &hints, &list) == 0, let first = list else {
        throw SafeClientError(description: "cannot resolve \(url.host)")
    }
    defer { freeaddrinfo(list) }
    var entry: UnsafeMutablePointer<addrinfo>? = first
    while let e = entry {
        entry = e.pointee.ai_next
        let s = socket(e.pointee.ai_family, e.pointee.ai_socktype, e.pointee.ai_protocol)
        guard s >= 0 else { continue }
        guard (try? Socket.setNonBlocking(s)) != nil else { close(s); continue }
        if connect(s, e.pointee.ai_addr, e.pointee.ai_addrlen) == 0 { return s }
        guard errno == EINPROGRESS else { close(s); continue }
        var p = pollfd(fd: s, events: Int16(POLLOUT), revents: 0)
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        if poll(&p, 1, remaining(deadline)) > 0, getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) == 0, err == 0 {
            return s
        }
        close(s)
    }
    throw SafeClientError(description: "cannot connect to \(url.host):\(url.port)")
}

/// One HTTP/1.1 exchange (`Connection: close`) completed before `deadline` (monotonic ms): the
/// response, read in linear time with its body bounded by `maxResponseBytes`.
func httpExchange(_ url: SafeServerURL, method: String, path: String, headers: [(String, String)], body: [UInt8],
                  authorization: String?, maxResponseBytes: Int,
                  deadline: Int64) throws(SafeClientError) -> HTTPResponseReader.Response {
    let fd = try connectBefore(deadline, url)
    defer { close(fd) }
    var request = "\(method) \(url.basePath)\(path) HTTP/1.1\r\nHost: \(url.host):\(url.port)\r\nUser-Agent: Rampart\r\n"
    for (k, v) in headers { request += "\(k): \(v)\r\n" }
    if let a = authorization { request += "Authorization: \(a)\r\n" }
    if method == "PUT" { request += "Content-Length: \(body.count)\r\n" }
    request += "Connection: close\r\n\r\n"
    do { try Socket.writeAll(fd, Array(request.utf8) + body, timeoutMs: remaining(deadline)) } catch {
        throw SafeClientError(description: "sending the request: \(error)")
    }
    var reader = HTTPResponseReader(limits: .init(maxBodyBytes: maxResponseBytes), headRequest: method == "HEAD")
    while true {
        let left = remaining(deadline)
        guard left > 0 else { throw SafeClientError(description: "no complete response within the deadline") }
        let chunk: [UInt8]
        do { chunk = try Socket.readSome(fd, timeoutMs: left) } catch {
            throw SafeClientError(description: "reading the response: \(error)")
        }
        do throws(HTTPResponseError) {
            if chunk.isEmpty { return try reader.finish() }
            reader.append(chunk)
            if let r = try reader.response() { return r }
        } catch {
            throw SafeClientError(description: "the server's response: \(error)")
        }
    }
}

func threemaSafeServerClientCommand(_ mode: String, _ args: [String]) {
    let cmd = "threema safe \(mode)"
    let o = Options(args, allowed: ["server", "id", "password-file", "json-file", "server-auth-file", "timeout"], positional: 0...0, command: cmd)
    if o.help { print(threemaSafeUsage); exit(0) }
    if !o.positional.isEmpty { usageError("\(cmd): unexpected argument \(o.positional[0])") }
    guard let server = o.values["server"] else { usageError("\(cmd): missing --server") }
    guard let url = SafeServerURL(server) else {
        usageError("\(cmd): --server must be an http:// URL without credentials (this tool has no TLS; "
                   + "credentials come from --server-auth-file): http://host[:port][/path/]")
    }
    let timeout = o.int("timeout", cmd) ?? 60
    guard (1...3600).contains(timeout) else { usageError("\(cmd): --timeout must be 1...3600 seconds") }
    var authorization: String?
    if let path = o.values["server-auth-file"] {
        var line = readFile(path, limit: 4096, cmd)
        defer { line.secureWipe() }
        while let last = line.last, last == 0x0A || last == 0x0D { line.removeLast() }
        guard line.contains(0x3A), line.first != 0x3A, !line.contains(0x0A) else {
            usageError("\(cmd): --server-auth-file must hold one line user:password")
        }
        authorization = "Basic " + Base64.encode(line)
    }
    /// One exchange within the --timeout that starts now; a failure exits 1 with its reason.
    func exchange(_ method: String, _ path: String, _ headers: [(String, String)], body: [UInt8] = [],
                  maxResponseBytes: Int) -> HTTPResponseReader.Response {
        do {
            return try httpExchange(url, method: method, path: path, headers: headers, body: body,
                                    authorization: authorization, maxResponseBytes: maxResponseBytes,
                                    deadline: monotonicMilliseconds() + Int64(timeout) * 1000)
        } catch {
            checkFailure("\(cmd): \(error)")
        }
    }
    guard let id = threemaID(o, "id", cmd) else { usageError("\(cmd): missing --id") }
    if mode == "backup", o.values["json-file"] == nil, o.values["password-file"] == nil {
        usageError("\(cmd): the document comes from standard input, so give the password with --password-file")
    }
    var json: [UInt8] = []
    if mode == "backup" {
        if let path = o.values["json-file"] {
            json = readFile(path, limit: ThreemaSafe.maximumPlaintextBytes, cmd)
        } else {
            readStdin { json.append(contentsOf: $0) }
        }
    }
    defer { json.secureWipe() }
    let password = readPassword(o, cmd)
    let keys: SafeKeys
    do { keys = try SafeKeys(password: password, identity: id) } catch { usageError("\(cmd): \(error)") }
    let path = "backups/" + keys.backupIDHex
    if mode == "backup" {
        let document: SafeBackup
        do { document = try SafeBackup(jsonBytes: json) } catch { usageError("\(cmd): \(error)") }
        var rng = SecureRandom()
        let blob: [UInt8]
        do { blob = try ThreemaSafe.backup(document, keys: keys, using: &rng) } catch { usageError("\(cmd): \(error)") }
        // The server's limit (GET config), as the apps check it before uploading.
        let config = exchange("GET", "config", [("Accept", "application/json")], maxResponseBytes: 4096)
        if config.status == 200, let limit = (try? JSONValue(parsing: config.body))?["maxBackupBytes"]?.number?.int64,
           blob.count > limit {
            checkFailure("\(cmd): the backup has \(blob.count) bytes, the server accepts \(limit)")
        }
        let r = exchange("PUT", path, [("Content-Type", "application/octet-stream")], body: blob, maxResponseBytes: 4096)
        guard (200...299).contains(r.status) else {
            checkFailure("\(cmd): the server answered \(r.status): "
                         + String(decoding: r.body.prefix(200).map { $0 >= 0x20 && $0 < 0x7F ? $0 : 0x3F }, as: UTF8.self))
        }
        print(keys.backupIDHex)
    } else {
        let r = exchange("GET", path, [("Accept", "application/octet-stream")], maxResponseBytes: 64 << 20)
        guard r.status == 200 else {
            checkFailure("\(cmd): the server answered \(r.status)\(r.status == 404 ? " (no backup for this ID and password)" : "")")
        }
        do {
            let document = try ThreemaSafe.restore(r.body, keys: keys)
            document.jsonBytes.withUnsafeBytes { writeStdout($0) }
        } catch {
            checkFailure("\(cmd): \(error)")
        }
    }
}
