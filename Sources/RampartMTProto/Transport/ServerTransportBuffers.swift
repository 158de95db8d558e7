// What a server needs to bound its memory per connection (the test server in RampartMTProtoServer
// uses it): how many received bytes a connection's transport holds, and a way to give back the
// capacity a large frame left behind (the byte queues keep their capacity when drained, so a client
// that sent one 1 MiB frame would otherwise pin 1–2 MiB for the life of its connection while
// counting as 0 buffered bytes). Package access: not part of the library's API.

extension ServerTransport {
    /// Received bytes not yet decoded into packets.
    package var bufferedByteCount: Int {
        switch state {
        case .detecting: return pending.count
        case .plain(let d, _): return d.bufferedByteCount
        case .obfuscated(let o): return o.decoder.bufferedByteCount
        case .fakeTLS(let t): return t.bufferedByteCount
        case .http(let h): return h.bufferedByteCount
        }
    }

    /// Reallocates the receive queue to fit the bytes it holds (a copy of at most one partial frame).
    package func releaseSpareCapacity() {
        switch state {
        case .detecting:
            pending.shrinkToFit()
        case .plain(var d, let e):
            state = .detecting  // drop the reference so `d` is uniquely owned while mutated
            d.buffer.shrinkToFit()
            state = .plain(d, e)
        case .obfuscated(let o):
            o.decoder.buffer.shrinkToFit()
        case .fakeTLS(let t):
            t.releaseSpareCapacity()
        case .http(let h):
            h.releaseSpareCapacity()
        }
    }
}

extension FakeTLSServer {
    /// Received bytes not yet decoded into packets: records not yet complete, the obfuscated2 header
    /// not yet complete, and the inner decoder's partial frame.
    var bufferedByteCount: Int { received.count + stream.count + (inner?.decoder.bufferedByteCount ?? 0) }

    func releaseSpareCapacity() {
        received.shrinkToFit()
        inner?.decoder.buffer.shrinkToFit()
    }
}

extension ByteQueue {
    /// Replaces the storage with one that holds exactly the unconsumed bytes.
    mutating func shrinkToFit() {
        let rest = takeAll()  // releases the old storage
        if !rest.isEmpty { append(contentsOf: rest) }
    }
}
