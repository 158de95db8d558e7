// The Threema Safe server (what `rampart threema safe-server` runs) fed arbitrary connection bytes.

import RampartThreemaSafeServer

/// A Safe server with an in-memory store, no rate limit and no per-read output budget (so that how
/// the bytes are split cannot change what it answers), Basic auth when `auth`.
private func makeSafeServer(auth: Bool) -> SafeServer {
    var conf = SafeServer.Configuration(maxBackupBytes: 256, retentionDays: 1)
    conf.rateLimitPerClient = nil
    conf.maxOutputBytesPerReceive = Int.max
    conf.headerLimits = .init(maxRequestLineBytes: 128, maxHeaderCount: 8, maxHeaderBytes: 512)
    if auth { conf.credentials = SafeServerCredentials(user: "u", password: "p") }
    return SafeServer(configuration: conf, store: InMemoryBackupStore())
}

/// Feeds `bytes` in pieces of the given sizes (cycled); returns the output without interim
/// `100 Continue` responses (which depend on the split), and whether the server closed.
private func feed(_ server: inout SafeServer, _ bytes: [UInt8], pieces: [Int]) -> (out: [UInt8], closed: Bool) {
    _ = server.open(1, address: "127.0.0.1", now: 1_800_000_000)
    var out: [UInt8] = []
    var i = 0, k = 0
    while i < bytes.count {
        let end = min(bytes.count, i + pieces[k % pieces.count])
        k += 1
        let r = server.receive(Array(bytes[i..<end]), from: 1, now: 1_800_000_000)
        out += r.send
        FuzzCheck.require(server.bufferedByteCount(of: 1) <= 512 + 256, "the parser holds more than its bound")
        if r.close { return (stripContinue(out), true) }
        i = end
    }
    return (stripContinue(out), false)
}

private let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

private func stripContinue(_ out: [UInt8]) -> [UInt8] {
    var result: [UInt8] = []
    var i = 0
    while i < out.count {
        if out[i...].starts(with: continueLine) { i += continueLine.count; continue }
        result.append(out[i])
        i += 1
    }
    return result
}

let safeServerTarget = FuzzTarget(
    name: "safe-server",
    summary: "SafeServer (what `rampart threema safe-server` runs) fed a connection's bytes whole and in pieces: never traps, the parser stays within its bound, every answer starts with a status line, and the split changes nothing",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let flags = input.byte()
        let pieces = (0..<3).map { _ in 1 + Int(input.byte() % 64) }
        let bytes = input.rest()
        var whole = makeSafeServer(auth: flags & 1 == 1)
        var split = makeSafeServer(auth: flags & 1 == 1)
        let a = feed(&whole, bytes, pieces: [Int.max])
        let b = feed(&split, bytes, pieces: pieces)
        FuzzCheck.require(a.out == b.out && a.closed == b.closed, "the answer depends on how the bytes were split")
        FuzzCheck.require(a.out.isEmpty || a.out.starts(with: Array("HTTP/1.1 ".utf8)), "an answer without a status line")
        if a.out.starts(with: Array("HTTP/1.1 2".utf8)) { FuzzStats.note("safe-server: 2xx answer") }
        if a.closed { FuzzStats.note("safe-server: closed") }
    },
    seeds: {
        let id = String(repeating: "ab", count: 32)
        let auth = "Authorization: Basic dTpw\r\n"
        let requests = [
            "GET /config HTTP/1.1\r\nHost: x\r\n\(auth)\r\n",
            "PUT /backups/\(id) HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/octet-stream\r\nContent-Length: 5\r\n\r\nhello"
                + "GET /backups/\(id) HTTP/1.1\r\nHost: x\r\n\(auth)Accept: application/octet-stream\r\n\r\n"
                + "DELETE /backups/\(id) HTTP/1.1\r\nHost: x\r\n\(auth)Connection: close\r\n\r\n",
            "PUT /backups/\(id) HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc",
            "PUT /backups/\(id) HTTP/1.1\r\nHost: x\r\nContent-Length: 300\r\n\r\n" + String(repeating: "z", count: 300),
            "GET /config HTTP/1.0\r\n\r\n",
        ]
        return requests.enumerated().map { k, r in [UInt8(k & 1), 1, 7, 13] + Array(r.utf8) }
    })

/// Feeds a response to a reader in pieces (cycled sizes); the outcome and the largest hold.
private func readResponse(_ bytes: [UInt8], pieces: [Int]) -> (outcome: String, maxHeld: Int) {
    var r = HTTPResponseReader(limits: .init(maxHeaderBytes: 512, maxHeaderCount: 8, maxBodyBytes: 256))
    var i = 0, k = 0, held = 0
    while i < bytes.count {
        let end = min(bytes.count, i + pieces[k % pieces.count])
        k += 1
        r.append(bytes[i..<end])
        i = end
        held = max(held, r.heldByteCount)
        do {
            if let done = try r.response() { return ("\(done.status) \(done.body)", held) }
        } catch {
            return ("error \(error)", held)
        }
    }
    do { let done = try r.finish(); return ("\(done.status) \(done.body) at close", held) } catch { return ("error \(error)", held) }
}

let safeClientResponseTarget = FuzzTarget(
    name: "safe-client-response",
    summary: "HTTPResponseReader (what `rampart threema safe backup|restore` reads a server's answer with) fed a hostile server's bytes whole and in pieces: never traps, holds at most head + body + one piece, and the split changes nothing",
    maxLength: 4096,
    run: { data in
        var input = FuzzInput(data)
        let pieces = (0..<3).map { _ in 1 + Int(input.byte() % 64) }
        let bytes = input.rest()
        let a = readResponse(bytes, pieces: [Int.max])
        let b = readResponse(bytes, pieces: pieces)
        FuzzCheck.require(a.outcome == b.outcome, "the response depends on how the bytes were split")
        FuzzCheck.require(b.maxHeld <= 512 + 256 + 64, "the reader holds more than its bound")
        if !a.outcome.hasPrefix("error") { FuzzStats.note("safe-client-response: a response") }
    },
    seeds: {
        let responses = [
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\n",
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\n\r\nuntil the close",
            "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nabc",
        ]
        return responses.map { [1, 7, 13] + Array($0.utf8) }
    })
