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

/// A parsed `http://[user:password@]host[:port][/path/]` server URL.
struct SafeServerURL {
    var host: String
    var port: UInt16
    var basePath: String
    var authorization: String?

    init?(_ text: String) {
        guard text.hasPrefix("http://") else { return nil }
        var rest = Substring(text.dropFirst(7))
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        rest = rest[slash...]
        if let at = authority.lastIndex(of: "@") {
            let credentials = authority[..<at]
            authorization = "Basic " + Base64.encode(Array(percentDecoded(credentials).utf8))
            authority = authority[authority.index(after: at)...]
        }
        var hostPart = authority, portNumber: UInt16 = 80
        if let colon = authority.lastIndex(of: ":") {
            guard let p = UInt16(authority[authority.index(after: colon)...]), p > 0 else { return nil }
            portNumber = p
            hostPart = authority[..<colon]
        }
        guard !hostPart.isEmpty, hostPart.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        host = String(hostPart)
        port = portNumber
        basePath = rest.isEmpty ? "/" : (rest.hasSuffix("/") ? String(rest) : String(rest) + "/")
    }
}

/// `%XX` escapes of user info decoded (anything malformed is kept as written).
func percentDecoded(_ s: Substring) -> String {
    var out: [UInt8] = []
    let b = Array(s.utf8)
    var i = 0
    while i < b.count {
        if b[i] == 0x25, i + 2 < b.count, let v = UInt8(String(decoding: b[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
            out.append(v); i += 3
        } else {
            out.append(b[i]); i += 1
        }
    }
    return String(decoding: out, as: UTF8.self)
}

/// One HTTP/1.1 exchange (`Connection: close`): the status and body of the response.
func httpExchange(_ url: SafeServerURL, method: String, path: String, headers: [(String, String)], body: [UInt8],
                  maxResponseBytes: Int, command: String) -> (status: Int, body: [UInt8]) {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    #if canImport(Glibc)
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    #else
    hints.ai_socktype = SOCK_STREAM
    #endif
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(url.host, String(url.port), &hints, &list) == 0, let first = list else {
        checkFailure("\(command): cannot resolve \(url.host)")
    }
    defer { freeaddrinfo(list) }
    var fd: Int32 = -1
    var entry: UnsafeMutablePointer<addrinfo>? = first
    while let e = entry {
        let s = socket(e.pointee.ai_family, e.pointee.ai_socktype, e.pointee.ai_protocol)
        if s >= 0 {
            if connect(s, e.pointee.ai_addr, e.pointee.ai_addrlen) == 0 { fd = s; break }
            close(s)
        }
        entry = e.pointee.ai_next
    }
    guard fd >= 0 else { checkFailure("\(command): cannot connect to \(url.host):\(url.port)") }
    defer { close(fd) }
    var request = "\(method) \(url.basePath)\(path) HTTP/1.1\r\nHost: \(url.host):\(url.port)\r\nUser-Agent: Rampart\r\n"
    for (k, v) in headers { request += "\(k): \(v)\r\n" }
    if let a = url.authorization { request += "Authorization: \(a)\r\n" }
    if method == "PUT" { request += "Content-Length: \(body.count)\r\n" }
    request += "Connection: close\r\n\r\n"
    do { try Socket.writeAll(fd, Array(request.utf8) + body, timeoutMs: 30_000) } catch {
        checkFailure("\(command): \(error)")
    }
    var response: [UInt8] = []
    while true {
        let chunk: [UInt8]
        do { chunk = try Socket.readSome(fd, timeoutMs: 30_000) } catch { checkFailure("\(command): \(error)") }
        if chunk.isEmpty { break }
        response += chunk
        guard response.count <= maxResponseBytes + 16_384 else { checkFailure("\(command): response too large") }
        if let parsed = parseHTTPResponse(response), parsed.complete { return (parsed.status, parsed.body) }
    }
    guard let parsed = parseHTTPResponse(response) else { checkFailure("\(command): malformed HTTP response") }
    return (parsed.status, parsed.body)
}

/// A response's status and body, once the headers are in; `complete` when Content-Length bytes of
/// body have arrived (without Content-Length the body runs to the end of the connection).
func parseHTTPResponse(_ r: [UInt8]) -> (status: Int, body: [UInt8], complete: Bool)? {
    let end: [UInt8] = [13, 10, 13, 10]
    guard r.count >= 4, let headerEnd = (0...(r.count - 4)).first(where: { Array(r[$0..<($0 + 4)]) == end }) else { return nil }
    let head = String(decoding: r[0..<headerEnd], as: UTF8.self)
    let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
    let statusParts = lines[0].split(separator: " ")
    guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else { return nil }
    var length: Int?
    for line in lines.dropFirst() {
        let kv = line.split(separator: ":", maxSplits: 1)
        if kv.count == 2, kv[0].lowercased() == "content-length" {
            length = Int(kv[1].trimmingSpaces())
        }
    }
    let body = Array(r[(headerEnd + 4)...])
    if let length { return (status, Array(body.prefix(length)), body.count >= length) }
    return (status, body, false)
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return s
    }
}

func threemaSafeServerClientCommand(_ mode: String, _ args: [String]) {
    let cmd = "threema safe \(mode)"
    let o = Options(args, allowed: ["server", "id", "password-file", "json-file"], positional: 0...0, command: cmd)
    if o.help { print(threemaSafeUsage); exit(0) }
    guard let server = o.values["server"] else { usageError("\(cmd): missing --server") }
    guard let url = SafeServerURL(server) else {
        usageError("\(cmd): --server must be an http:// URL (this tool has no TLS): http://[user:password@]host[:port][/path/]")
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
        let config = httpExchange(url, method: "GET", path: "config", headers: [("Accept", "application/json")], body: [],
                                  maxResponseBytes: 4096, command: cmd)
        if config.status == 200, let limit = (try? JSONValue(parsing: config.body))?["maxBackupBytes"]?.number?.int64,
           blob.count > limit {
            checkFailure("\(cmd): the backup has \(blob.count) bytes, the server accepts \(limit)")
        }
        let r = httpExchange(url, method: "PUT", path: path, headers: [("Content-Type", "application/octet-stream")],
                             body: blob, maxResponseBytes: 4096, command: cmd)
        guard (200...299).contains(r.status) else {
            checkFailure("\(cmd): the server answered \(r.status): \(String(decoding: r.body.prefix(200), as: UTF8.self))")
        }
        print(keys.backupIDHex)
    } else {
        let r = httpExchange(url, method: "GET", path: path, headers: [("Accept", "application/octet-stream")], body: [],
                             maxResponseBytes: 64 << 20, command: cmd)
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
