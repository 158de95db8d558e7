// Many MTProto 2.0 messages encrypted at once (a server pushing updates to many clients): the same
// envelope as `EncryptedMessage.encrypt` (Docs/MTProto.md §1.1–§1.3), with msg_key, the KDF and
// AES-256-IGE run as multi-buffer jobs, several messages per kernel pass (Docs/MTProto.md §1.8).

import Rampart

extension EncryptedMessage {
    /// One message of a batch for ``encrypt(batch:using:)``: what ``encrypt(body:header:authKey:direction:padding:using:)``
    /// takes for one message.
    public struct BatchItem: Sendable {
        /// `message_data`, a serialized TL object; its length must be a multiple of 4.
        public var body: [UInt8]
        /// salt, session_id, msg_id and seq_no.
        public var header: MessageHeader
        /// The key this message is encrypted under (each message may have its own).
        public var authKey: AuthKey
        /// Who sends: `.clientToServer` (x = 0) or `.serverToClient` (x = 8).
        public var direction: MTProtoDirection
        /// How the padding length is chosen; the padding bytes are random.
        public var padding: PaddingPolicy

        /// One message of a batch.
        public init(body: [UInt8], header: MessageHeader, authKey: AuthKey, direction: MTProtoDirection,
                    padding: PaddingPolicy = .random) {
            self.body = body
            self.header = header
            self.authKey = authKey
            self.direction = direction
            self.padding = padding
        }
    }

    /// Messages encrypted per pass of the lane kernels: enough to fill the widest SHA-256 lane kernel
    /// (32 lanes), and a bound on the scratch memory (about 1 KiB each, below the allocator's trim
    /// threshold).
    static let batchChunk = 32

    /// Encrypts many messages, each exactly as ``encrypt(body:header:authKey:direction:padding:using:)``
    /// would (the same packet layout, checks and quick-ack value), and faster in total: the SHA-256
    /// computations (msg_key and the KDF) of several messages (2 to 32, by processor) and the AES-IGE
    /// chains of eight run interleaved in the multi-buffer kernels where the CPU has them (x86_64 with
    /// AES-NI, and SHA-NI or AVX2); elsewhere the messages go one by one.
    ///
    /// Padding lengths and bytes are drawn from `rng` in item order.
    /// - Returns: one `(packet, quickAck)` per item, in order.
    /// - Throws: ``MTProtoError/invalidMessage(_:)`` when any body is not a multiple of 4 bytes or is
    ///   longer than ``maxBodyLength``; then nothing is encrypted and nothing is drawn from `rng`.
    public static func encrypt<R: RandomNumberGenerator>(batch items: [BatchItem], using rng: inout R)
        throws(MTProtoError) -> [(packet: [UInt8], quickAck: UInt32)] {
        for (i, item) in items.enumerated() {
            guard item.body.count % 4 == 0 else { throw .invalidMessage("item \(i): message_data length \(item.body.count) is not a multiple of 4") }
            guard item.body.count <= maxBodyLength else { throw .invalidMessage("item \(i): message_data longer than \(maxBodyLength) bytes") }
        }
        return sealChecked(items, backend: CPU.defaultBackend, using: &rng)
    }

    /// ``encrypt(batch:using:)`` pinned to one implementation: `.portable` runs every message through
    /// the single-message kernels (tests compare the two).
    static func encrypt<R: RandomNumberGenerator>(batch items: [BatchItem], backend: Backend, using rng: inout R)
        throws(MTProtoError) -> [(packet: [UInt8], quickAck: UInt32)] {
        for item in items where item.body.count % 4 != 0 || item.body.count > maxBodyLength {
            throw .invalidMessage("message_data length \(item.body.count)")
        }
        return sealChecked(items, backend: backend, using: &rng)
    }

    /// The batch encryption of items whose bodies are known to be valid (a multiple of 4 bytes, at
    /// most ``maxBodyLength``): ``Session/seal(_:using:)`` prepared them.
    static func sealChecked<R: RandomNumberGenerator>(_ items: [BatchItem], backend: Backend, using rng: inout R)
        -> [(packet: [UInt8], quickAck: UInt32)] {
        var out: [(packet: [UInt8], quickAck: UInt32)] = []
        out.reserveCapacity(items.count)
        items.withUnsafeBufferPointer { all in
            var start = 0
            while start < all.count {
                let end = min(all.count, start + batchChunk)
                sealChunk(UnsafeBufferPointer(rebasing: all[start..<end]), into: &out, backend: backend, using: &rng)
                start = end
            }
        }
        return out
    }

    /// Per-message scratch: the first and last SHA-256 blocks of msg_key (64 each), the two KDF blocks
    /// (64 each), three states (32 each), aes_key ‖ aes_iv (64).
    private static let scratchBytes = 512

    /// Encrypts `items` (already checked) and appends their packets to `out`.
    /// The items are read in place (`items[i].body`, not copies of the items: no reference counting
    /// per item and pass).
    private static func sealChunk<R: RandomNumberGenerator>(_ items: UnsafeBufferPointer<BatchItem>, into out: inout [(packet: [UInt8], quickAck: UInt32)],
                                                           backend: Backend, using rng: inout R) {
        let count = items.count
        // Plaintext lengths first (padding lengths drawn in item order), then one buffer for all packets.
        var offsets = [Int](repeating: 0, count: count + 1)
        var pads = [Int](repeating: 0, count: count)
        for i in 0..<count {
            let bodyLength = items[i].body.count
            pads[i] = items[i].padding.paddingLength(bodyLength: bodyLength, using: &rng)
            offsets[i + 1] = offsets[i] + 24 + 32 + bodyLength + pads[i]
        }
        // The library's generator has no sequence to keep: every padding byte of the chunk in one call.
        let bulk = R.self == SecureRandom.self
        let bulkPadding = UnsafeMutableRawBufferPointer.allocate(byteCount: bulk ? pads.reduce(0, +) : 0, alignment: 16)
        defer {
            secureZero(bulkPadding)
            bulkPadding.deallocate()
        }
        if bulk { SecureRandom.fill(bulkPadding) }
        let packets = UnsafeMutableRawPointer.allocate(byteCount: max(offsets[count], 1), alignment: 16)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: scratchBytes * count, alignment: 16)
        defer {
            secureZero(scratch)
            scratch.deallocate()
            // Ciphertext only by now: IGE overwrote every plaintext byte in place.
            packets.deallocate()
        }
        let s = scratch.baseAddress!
        @inline(__always) func first(_ i: Int) -> UnsafeMutableRawPointer { s + scratchBytes * i }
        @inline(__always) func tail(_ i: Int) -> UnsafeMutableRawPointer { first(i) + 64 }
        @inline(__always) func kdfA(_ i: Int) -> UnsafeMutableRawPointer { first(i) + 128 }
        @inline(__always) func kdfB(_ i: Int) -> UnsafeMutableRawPointer { first(i) + 192 }
        @inline(__always) func state(_ i: Int, _ which: Int) -> UnsafeMutablePointer<UInt32> {
            (first(i) + 256 + 32 * which).assumingMemoryBound(to: UInt32.self)
        }
        @inline(__always) func keyIV(_ i: Int) -> UnsafeMutableRawPointer { first(i) + 352 }
        @inline(__always) func plain(_ i: Int) -> UnsafeMutableRawPointer { packets + offsets[i] + 24 }
        let initial = MultiBuffer.sha256InitialState
        // Each item is read once (below): its key's bytes and its direction are kept for the KDF.
        var keys = [UnsafeRawPointer?](repeating: nil, count: count), keyIds = [UInt64](repeating: 0, count: count)
        var xs = [Int](repeating: 0, count: count)

        // Plaintexts, and the msg_key jobs: SHA-256(auth_key[88+x ..< 120+x] ‖ plaintext) as block 0
        // (the 32 key bytes and the first 32 plaintext bytes), the whole blocks after it in place, and
        // one padded final block (the plaintext is a multiple of 16 bytes, so at most 48 are left).
        withUnsafeTemporaryAllocation(of: MultiBuffer.SHA256Job.self, capacity: 2 * count) { jobs in
            var padStart = 0
            for i in 0..<count {
                let pt = plain(i), bodyLength = items[i].body.count, plainLength = 32 + bodyLength + pads[i]
                let h = items[i].header
                pt.storeLE64(UInt64(bitPattern: h.salt), 0)
                pt.storeLE64(UInt64(bitPattern: h.sessionId), 8)
                pt.storeLE64(UInt64(bitPattern: h.msgId), 16)
                pt.storeLE32(UInt32(bitPattern: h.seqNo), 24)
                pt.storeLE32(UInt32(truncatingIfNeeded: bodyLength), 28)
                items[i].body.withUnsafeBytes { b in if bodyLength > 0 { (pt + 32).copyMemory(from: b.baseAddress!, byteCount: bodyLength) } }
                let padding = UnsafeMutableRawBufferPointer(start: pt + 32 + bodyLength, count: pads[i])
                if bulk {
                    padding.copyMemory(from: UnsafeRawBufferPointer(rebasing: bulkPadding[padStart..<padStart + pads[i]]))
                    padStart += pads[i]
                } else {
                    fillRandom(padding, using: &rng)
                }

                let x = items[i].direction.x, key = items[i].authKey.pointer(0)
                keys[i] = key
                keyIds[i] = items[i].authKey.id
                xs[i] = x
                first(i).copyMemory(from: key + 88 + x, byteCount: 32)
                (first(i) + 32).copyMemory(from: pt, byteCount: 32)
                let middle = (plainLength - 32) / 64, rest = (plainLength - 32) % 64
                let t = tail(i)
                t.initializeMemory(as: UInt8.self, repeating: 0, count: 64)
                if rest > 0 { t.copyMemory(from: pt + 32 + 64 * middle, byteCount: rest) }
                t.storeBytes(of: 0x80, toByteOffset: rest, as: UInt8.self)
                t.storeBE64(UInt64(32 + plainLength) * 8, 56)
                let st = state(i, 0)
                for w in 0..<8 { st[w] = initial[w] }
                jobs[i] = MultiBuffer.SHA256Job(state: st, (UnsafeRawPointer(first(i)), 1), (UnsafeRawPointer(pt + 32), middle),
                                                (UnsafeRawPointer(t), 1))
            }
            MultiBuffer.sha256(UnsafeBufferPointer(rebasing: jobs[0..<count]), backend: backend)

            // auth_key_id, msg_key (msg_key_large[8..<24]) and the KDF jobs:
            // SHA-256(msg_key ‖ auth_key[x ..< x+36]) and SHA-256(auth_key[40+x ..< 76+x] ‖ msg_key),
            // 52 bytes each, one padded block.
            for i in 0..<count {
                let packet = plain(i) - 24, large = state(i, 0), x = xs[i], key = keys[i]!
                packet.storeLE64(keyIds[i], 0)
                for w in 0..<4 { packet.storeBE32(large[2 + w], 8 + 4 * w) }
                let a = kdfA(i), b = kdfB(i)
                a.initializeMemory(as: UInt8.self, repeating: 0, count: 128)
                a.copyMemory(from: packet + 8, byteCount: 16)
                (a + 16).copyMemory(from: key + x, byteCount: 36)
                b.copyMemory(from: key + 40 + x, byteCount: 36)
                (b + 36).copyMemory(from: packet + 8, byteCount: 16)
                a.storeBytes(of: 0x80, toByteOffset: 52, as: UInt8.self)
                a.storeBE64(52 * 8, 56)
                b.storeBytes(of: 0x80, toByteOffset: 52, as: UInt8.self)
                b.storeBE64(52 * 8, 56)
                let sa = state(i, 1), sb = state(i, 2)
                for w in 0..<8 { sa[w] = initial[w]; sb[w] = initial[w] }
                jobs[2 * i] = MultiBuffer.SHA256Job(state: sa, (UnsafeRawPointer(a), 1))
                jobs[2 * i + 1] = MultiBuffer.SHA256Job(state: sb, (UnsafeRawPointer(b), 1))
            }
            MultiBuffer.sha256(UnsafeBufferPointer(jobs), backend: backend)
        }

        // aes_key = a[0..<8] ‖ b[8..<24] ‖ a[24..<32], aes_iv = b[0..<8] ‖ a[8..<24] ‖ b[24..<32] (big-endian
        // state words), then every message's IGE chain.
        withUnsafeTemporaryAllocation(of: MultiBuffer.IGEJob.self, capacity: count) { jobs in
            for i in 0..<count {
                let a = state(i, 1), b = state(i, 2), k = keyIV(i)
                for w in 0..<8 {
                    let fromA = w < 2 || w >= 6
                    k.storeBE32(fromA ? a[w] : b[w], 4 * w)
                    k.storeBE32(fromA ? b[w] : a[w], 32 + 4 * w)
                }
                let plainLength = offsets[i + 1] - offsets[i] - 24
                jobs[i] = MultiBuffer.IGEJob(key: UnsafeRawPointer(k), iv: k + 32, data: plain(i), blocks: plainLength / 16)
            }
            MultiBuffer.igeEncrypt(UnsafeBufferPointer(jobs), backend: backend)
        }

        for i in 0..<count {
            let packet = UnsafeRawBufferPointer(start: plain(i) - 24, count: offsets[i + 1] - offsets[i])
            out.append((Array(packet), declassified(state(i, 0)[0].byteSwapped | 0x8000_0000)))
        }
    }
}
