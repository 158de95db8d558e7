// Group-call media frames (Docs/Threema.md §10, `group-call.struct.yml`): AES-256-GCM under
// PCMFK = BLAKE2b(key = PCMK, salt "mf", personal "3ma-call", input = GCKH).
//
//     wire frame = unencrypted header ‖ ciphertext ‖ tag (16) ‖ footer (6)
//     footer     = u8 epoch ‖ u8 ratchet counter ‖ u32-LE MFSN
//     nonce      = u32-LE MFSN ‖ 8 zero bytes
//     AAD        = footer ‖ unencrypted header
//
// The unencrypted header is empty for Opus. For VP8 it is 10 bytes on a key frame and 3 otherwise;
// a key frame is one whose first byte has bit 0 **clear**: that is VP8's frame tag (RFC 6386 §9.1,
// `key_frame` = 0 means key frame) and what the desktop client does. The protocol text says bit 0
// set; we follow VP8 and desktop (Docs/Threema.md §10.3). A frame shorter than its header keeps all
// its bytes as header (the header never reaches into the tag). Empty frames pass through unchanged
// (no MFSN is used).
//
// The MFSN is one counter per sender, shared by all media types, incremented once per frame, never
// reset on a ratchet step or epoch change. The protocol's creation steps increment it twice (steps 4
// and 10); we increment once, as the desktop client does (§10.3).

import Rampart

extension GroupCall {
    /// The codec of a media frame: it decides the unencrypted header.
    public enum MediaCodec: String, Sendable, Hashable, CaseIterable {
        /// Opus audio: no unencrypted header.
        case opus
        /// VP8 video: 10 bytes on a key frame (bit 0 of the first byte clear), else 3.
        case vp8
    }

    /// Constants and helpers of the media-frame format.
    public enum MediaFrame {
        /// The AES-GCM tag length.
        public static let tagByteCount = 16
        /// The footer length: epoch, ratchet counter, MFSN.
        public static let footerByteCount = 6
        /// What encryption adds to a non-empty frame (tag and footer).
        public static let overheadByteCount = tagByteCount + footerByteCount
        /// The largest wire frame accepted: 65536 bytes, the protocol's limit (desktop accepts
        /// 131072; we keep the protocol's, so frames we produce are accepted everywhere).
        public static let maximumWireByteCount = 65536
        /// The largest plaintext frame sealed: 65536 − 16 − 6.
        public static let maximumFrameByteCount = maximumWireByteCount - overheadByteCount

        /// The length of the unencrypted header of a frame of `codec` whose first byte is
        /// `firstByte`, when at most `available` bytes can belong to it.
        public static func unencryptedHeaderByteCount(codec: MediaCodec, firstByte: UInt8, available: Int) -> Int {
            switch codec {
            case .opus: return 0
            case .vp8: return min(firstByte & 1 == 0 ? 10 : 3, max(available, 0))   // the frame tag is public
            }
        }

        /// The footer of a wire frame.
        public struct Footer: Sendable, Hashable {
            /// The sender's media-key epoch.
            public var epoch: UInt8
            /// The sender's ratchet counter.
            public var ratchetCounter: UInt8
            /// The media frame sequence number.
            public var mfsn: UInt32
            /// A footer.
            public init(epoch: UInt8, ratchetCounter: UInt8, mfsn: UInt32) {
                self.epoch = epoch
                self.ratchetCounter = ratchetCounter
                self.mfsn = mfsn
            }
            /// The footer of `wire` (the last 6 bytes), or nil when it is shorter than tag and footer.
            public init?<C: Collection<UInt8>>(of wire: C) where C.Index == Int {
                guard wire.count >= MediaFrame.overheadByteCount else { return nil }
                let e = wire.endIndex
                epoch = wire[e - 6]
                ratchetCounter = wire[e - 5]
                mfsn = UInt32(wire[e - 4]) | UInt32(wire[e - 3]) << 8 | UInt32(wire[e - 2]) << 16 | UInt32(wire[e - 1]) << 24
            }
        }

        /// Writes footer (6) ‖ header into `aad` (at least 16 bytes) and the 12-byte nonce into
        /// `nonce`; returns the AAD length.
        @inline(__always)
        static func prepare(footer: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer,
                            aad: UnsafeMutableRawBufferPointer, nonce: UnsafeMutableRawBufferPointer) -> Int {
            // At most 16 bytes: byte stores, no library call.
            let a = aad.baseAddress!, f = footer.baseAddress!
            for i in 0..<6 { a.storeBytes(of: f.load(fromByteOffset: i, as: UInt8.self), toByteOffset: i, as: UInt8.self) }
            if let hb = header.baseAddress {
                for i in 0..<header.count { a.storeBytes(of: hb.load(fromByteOffset: i, as: UInt8.self), toByteOffset: 6 + i, as: UInt8.self) }
            }
            nonce.baseAddress!.storeBytes(of: f.loadUnaligned(fromByteOffset: 2, as: UInt32.self), toByteOffset: 0, as: UInt32.self)
            nonce.baseAddress!.storeBytes(of: UInt64(0), toByteOffset: 4, as: UInt64.self)
            return 6 + header.count
        }

        /// Checks and decrypts the wire frame at `wire` (frame length `n`, header `h`, then tag and
        /// footer) into `out`, copying the header after the tag verified. False when it does not
        /// verify (the payload bytes of `out` are zeroed then).
        @inline(__always)
        static func open(_ wire: UnsafeRawPointer, into out: UnsafeMutableRawPointer, frameByteCount n: Int,
                         headerByteCount h: Int, using cipher: AES.Cipher) -> Bool {
            let footer = wire + n + tagByteCount
            var scratch: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            let ok = withUnsafeMutableBytes(of: &scratch) { s -> Bool in
                let aad = UnsafeMutableRawBufferPointer(rebasing: s[0..<16])
                let nonce = UnsafeMutableRawBufferPointer(rebasing: s[16..<28])
                let aadCount = prepare(footer: UnsafeRawBufferPointer(start: footer, count: 6),
                                       header: UnsafeRawBufferPointer(start: wire, count: h), aad: aad, nonce: nonce)
                do throws(RampartError) {
                    try AES.GCM.open(UnsafeRawBufferPointer(start: wire + h, count: n - h),
                                     into: UnsafeMutableRawBufferPointer(start: out + h, count: n - h),
                                     tag: UnsafeRawBufferPointer(start: wire + n, count: 16), using: cipher,
                                     nonce: UnsafeRawBufferPointer(nonce),
                                     authenticating: UnsafeRawBufferPointer(rebasing: aad[0..<aadCount]))
                    return true
                } catch { return false }
            }
            if ok && h > 0 && UnsafeRawPointer(out) != wire { out.copyMemory(from: wire, byteCount: h) }
            return ok
        }
    }

    /// The sending side of one participant's media: the applied media key with its expanded frame
    /// key, and the MFSN. Seals frames in place or into new arrays. Not thread-safe: the MFSN must
    /// not be shared between concurrent callers (it is a nonce).
    public struct MediaFrameEncryptor: Sendable {
        let keyHash: SymmetricKey
        /// The applied media key (epoch, ratchet counter, PCMK).
        public private(set) var mediaKey: MediaKey
        private var cipher: AES.Cipher
        private var next: UInt64

        /// An encryptor with `mediaKey` applied, the first frame numbered `firstMFSN`.
        ///
        /// - Throws: ``ThreemaError/invalidArgument(_:)`` unless `keyHash` (GCKH) has 32 bytes.
        public init(keyHash: SymmetricKey, mediaKey: MediaKey, firstMFSN: UInt32 = 0) throws(ThreemaError) {
            guard keyHash.byteCount == 32 else { throw .invalidArgument("GCKH has 32 bytes") }
            self.keyHash = keyHash
            self.mediaKey = mediaKey
            cipher = try GroupCall.cipher(mediaKey, keyHash)
            next = UInt64(firstMFSN)
        }

        /// The MFSN of the next frame, or nil when all 2^32 numbers are used.
        public var nextMFSN: UInt32? { next <= UInt64(UInt32.max) ? UInt32(next) : nil }

        /// A participant joined: turn the ratchet once and use the new key from the next frame on.
        /// The MFSN continues.
        ///
        /// - Throws: ``GroupCallFault/ratchetExhausted`` at counter 255 (the call must end); the
        ///   encryptor is unchanged.
        public mutating func ratchet() throws(ThreemaError) {
            let k = try mediaKey.ratcheted()
            cipher = try GroupCall.cipher(k, keyHash)
            mediaKey = k
        }

        /// Applies a new media key (the pending key of a new epoch, after it was announced) from the
        /// next frame on. The MFSN continues.
        public mutating func apply(_ key: MediaKey) throws(ThreemaError) {
            cipher = try GroupCall.cipher(key, keyHash)
            mediaKey = key
        }

        /// Seals `frame` (`header ‖ payload`) and returns the wire frame (empty stays empty).
        ///
        /// - Throws: ``GroupCallFault/frameTooLarge(_:)`` above ``GroupCall/MediaFrame/maximumFrameByteCount``,
        ///   ``GroupCallFault/frameSequenceNumberExhausted``; the encryptor is unchanged.
        public mutating func seal<C: Collection<UInt8>>(_ frame: C, codec: MediaCodec) throws(ThreemaError) -> [UInt8] {
            let n = frame.count
            if n == 0 { return [] }
            guard n <= MediaFrame.maximumFrameByteCount else { throw .groupCall(.frameTooLarge(n)) }
            var out: [UInt8] = []
            out.reserveCapacity(n + MediaFrame.overheadByteCount)
            out.append(contentsOf: frame)
            out.append(contentsOf: repeatElement(0, count: MediaFrame.overheadByteCount))
            var failure: ThreemaError?
            let produced = out.withUnsafeMutableBytes { o -> Int in
                do throws(ThreemaError) { return try seal(inPlace: o, frameByteCount: n, codec: codec) } catch { failure = error; return 0 }
            }
            if let failure { throw failure }
            assert(produced == out.count)
            return out
        }

        /// Seals the frame in `buffer[0 ..< frameByteCount]` in place; the tag and footer are written
        /// after it, so `buffer` needs `frameByteCount + 22` bytes. Returns the wire length (0 for an
        /// empty frame).
        ///
        /// - Throws: as ``seal(_:codec:)``, and ``ThreemaError/invalidArgument(_:)`` when the buffer
        ///   is too small.
        public mutating func seal(inPlace buffer: UnsafeMutableRawBufferPointer, frameByteCount n: Int,
                                  codec: MediaCodec) throws(ThreemaError) -> Int {
            guard n >= 0, n <= buffer.count else { throw .invalidArgument("the frame lies outside the buffer") }
            return try seal(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<n]), into: buffer, codec: codec)
        }

        /// Seals `frame` into `output` (at least `frame.count + 22` bytes; the same memory as the
        /// frame at offset 0, or not overlapping it). Returns the wire length (0 for an empty frame).
        ///
        /// - Throws: as ``seal(_:codec:)``, and ``ThreemaError/invalidArgument(_:)`` when the output
        ///   is too small.
        public mutating func seal(_ frame: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                                  codec: MediaCodec) throws(ThreemaError) -> Int {
            let n = frame.count
            if n == 0 { return 0 }
            guard n <= MediaFrame.maximumFrameByteCount else { throw .groupCall(.frameTooLarge(n)) }
            guard output.count >= n + MediaFrame.overheadByteCount, let out = output.baseAddress, let src = frame.baseAddress else {
                throw .invalidArgument("the output needs room for the frame, the tag and the footer")
            }
            guard next <= UInt64(UInt32.max) else { throw .groupCall(.frameSequenceNumberExhausted) }
            let mfsn = UInt32(next)
            let h = MediaFrame.unencryptedHeaderByteCount(codec: codec, firstByte: src.load(as: UInt8.self), available: n)
            if h > 0 && UnsafeRawPointer(out) != src { out.copyMemory(from: src, byteCount: h) }
            let footer = out + n + MediaFrame.tagByteCount
            footer.storeBytes(of: mediaKey.epoch, as: UInt8.self)
            (footer + 1).storeBytes(of: mediaKey.ratchetCounter, as: UInt8.self)
            (footer + 2).storeBytes(of: mfsn.littleEndian, toByteOffset: 0, as: UInt32.self)
            let c = cipher
            let failed = withUnsafeTemporaryAllocation(byteCount: 32, alignment: 16) { scratch -> RampartError? in
                let aad = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<16])
                let nonce = UnsafeMutableRawBufferPointer(rebasing: scratch[16..<28])
                let aadCount = MediaFrame.prepare(footer: UnsafeRawBufferPointer(start: footer, count: 6),
                                                  header: UnsafeRawBufferPointer(start: src, count: h), aad: aad, nonce: nonce)
                do throws(RampartError) {
                    try AES.GCM.seal(UnsafeRawBufferPointer(start: src + h, count: n - h),
                                     into: UnsafeMutableRawBufferPointer(start: out + h, count: n - h),
                                     tag: UnsafeMutableRawBufferPointer(start: out + n, count: 16), using: c,
                                     nonce: UnsafeRawBufferPointer(nonce),
                                     authenticating: UnsafeRawBufferPointer(rebasing: aad[0..<aadCount]))
                    return nil
                } catch { return error }
            }
            if let failed { throw .invalidArgument("AES-GCM: \(failed)") }   // unreachable: lengths are checked
            next += 1
            return n + MediaFrame.overheadByteCount
        }
    }

    /// The receiving side of one remote participant's media: the applied media key, pending keys of
    /// later epochs (from `Auth` and rekey messages), and a replay window over the MFSN.
    ///
    /// A frame is refused, with the decryptor unchanged, when its epoch is neither the applied
    /// key's nor a pending key's (``GroupCallFault/unknownEpoch(current:frame:)``: an old epoch, or
    /// one whose key has not arrived), when its ratchet counter is below the key's
    /// (``GroupCallFault/ratchetCounterInPast(current:frame:)``), when its MFSN was accepted before
    /// or is older than the window (``GroupCallFault/replayedFrame(mfsn:)``,
    /// ``GroupCallFault/frameTooOld(mfsn:)``), or when it does not authenticate. An accepted frame
    /// of a pending epoch applies that key and drops the keys before it (never back); an accepted
    /// frame with a higher ratchet counter moves the applied key forward to that counter.
    public struct MediaFrameDecryptor: Sendable {
        /// The most pending keys held at once.
        public static let maximumSuccessors = 16
        /// How many MFSNs behind the newest accepted one are still accepted once (audio and video
        /// share the counter and arrive through separate pipelines, so a window of a few frames
        /// would drop reordered video).
        public static let replayWindowSize = ReplayWindow.size

        let keyHash: SymmetricKey
        /// The applied media key of the remote participant.
        public private(set) var mediaKey: MediaKey
        /// Announced keys of later epochs, oldest first.
        public private(set) var pendingKeys: [MediaKey] = []
        private var cipher: AES.Cipher
        private var window = ReplayWindow()
        /// The newest accepted MFSN, nil before the first frame.
        public var newestMFSN: UInt32? { window.newest }

        /// A decryptor with the applied key first and any pending keys after it (the order of
        /// `Auth.media_keys`).
        ///
        /// - Throws: ``GroupCallFault/noMediaKey`` for an empty list,
        ///   ``GroupCallFault/tooManyPendingKeys``, ``ThreemaError/invalidArgument(_:)`` unless GCKH
        ///   has 32 bytes.
        public init(keyHash: SymmetricKey, mediaKeys: [MediaKey]) throws(ThreemaError) {
            guard keyHash.byteCount == 32 else { throw .invalidArgument("GCKH has 32 bytes") }
            guard let first = mediaKeys.first else { throw .groupCall(.noMediaKey) }
            guard mediaKeys.count - 1 <= Self.maximumSuccessors else { throw .groupCall(.tooManyPendingKeys) }
            self.keyHash = keyHash
            mediaKey = first
            pendingKeys = Array(mediaKeys.dropFirst())
            cipher = try GroupCall.cipher(first, keyHash)
        }

        /// A decryptor with one applied key.
        public init(keyHash: SymmetricKey, mediaKey: MediaKey) throws(ThreemaError) {
            try self.init(keyHash: keyHash, mediaKeys: [mediaKey])
        }

        /// Stores a key announced by a rekey message; it is applied by the first frame of its epoch.
        ///
        /// - Throws: ``GroupCallFault/tooManyPendingKeys`` (unchanged then).
        public mutating func addPendingKey(_ key: MediaKey) throws(ThreemaError) {
            guard pendingKeys.count < Self.maximumSuccessors else { throw .groupCall(.tooManyPendingKeys) }
            pendingKeys.append(key)
        }

        /// Turns the applied key once, when the caller knows the remote participant's ratchet
        /// advanced (optional: the first frame with a higher counter advances it anyway).
        ///
        /// - Throws: ``GroupCallFault/ratchetExhausted``.
        public mutating func ratchet() throws(ThreemaError) {
            let k = try mediaKey.ratcheted()
            cipher = try GroupCall.cipher(k, keyHash)
            mediaKey = k
        }

        /// Opens a wire frame and returns `header ‖ payload` (empty stays empty).
        ///
        /// - Throws: see the type's description; ``GroupCallFault/frameTooShort(_:)``,
        ///   ``GroupCallFault/frameTooLarge(_:)``, ``ThreemaError/authenticationFailed``. Never traps.
        public mutating func open<C: Collection<UInt8>>(_ wire: C, codec: MediaCodec) throws(ThreemaError) -> [UInt8] {
            var buf = Array(wire)
            var failure: ThreemaError?
            let n = buf.withUnsafeMutableBytes { b -> Int in
                do throws(ThreemaError) { return try open(inPlace: b, codec: codec) } catch { failure = error; return 0 }
            }
            if let failure { throw failure }
            buf.removeLast(buf.count - n)
            return buf
        }

        /// Opens the wire frame filling `buffer` in place: on success `buffer[0 ..< result]` holds
        /// `header ‖ payload`. On an authentication failure the payload bytes are zeroed.
        ///
        /// - Throws: as ``open(_:codec:)``; the decryptor is unchanged on every refusal.
        public mutating func open(inPlace buffer: UnsafeMutableRawBufferPointer, codec: MediaCodec) throws(ThreemaError) -> Int {
            try open(UnsafeRawBufferPointer(buffer), into: buffer, codec: codec)
        }

        /// Opens `wire` into `output` (at least `wire.count − 22` bytes; the same memory as the wire
        /// frame at offset 0, or not overlapping it) and returns the frame length. On an
        /// authentication failure the output's payload bytes are zeroed.
        ///
        /// - Throws: as ``open(_:codec:)``, and ``ThreemaError/invalidArgument(_:)`` when the output
        ///   is too small; the decryptor is unchanged on every refusal.
        public mutating func open(_ wire: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                                  codec: MediaCodec) throws(ThreemaError) -> Int {
            let w = wire.count
            guard w > 0, let base = wire.baseAddress else { return 0 }
            guard w <= MediaFrame.maximumWireByteCount else { throw .groupCall(.frameTooLarge(w)) }
            guard w >= MediaFrame.overheadByteCount else { throw .groupCall(.frameTooShort(w)) }
            let n = w - MediaFrame.overheadByteCount
            guard output.count >= n, let out = output.baseAddress ?? (n == 0 ? UnsafeMutableRawPointer(mutating: base) : nil) else {
                throw .invalidArgument("the output needs room for the frame")
            }
            let footer = base + n + MediaFrame.tagByteCount
            let epoch = footer.load(as: UInt8.self), counter = (footer + 1).load(as: UInt8.self)
            let mfsn = UInt32(littleEndian: (footer + 2).loadUnaligned(as: UInt32.self))
            try window.check(mfsn)

            let h = MediaFrame.unencryptedHeaderByteCount(codec: codec, firstByte: base.load(as: UInt8.self), available: n)
            // The common case: the applied key.
            if epoch == mediaKey.epoch && counter == mediaKey.ratchetCounter {
                guard MediaFrame.open(base, into: out, frameByteCount: n, headerByteCount: h, using: cipher) else {
                    throw .authenticationFailed
                }
                window.accept(mfsn)
                return n
            }

            // Otherwise: the applied key turned forward, or the first pending key of the frame's epoch.
            var pendingIndex: Int?
            let base0: MediaKey
            if epoch == mediaKey.epoch {
                base0 = mediaKey
            } else if let i = pendingKeys.firstIndex(where: { $0.epoch == epoch }) {
                pendingIndex = i
                base0 = pendingKeys[i]
            } else {
                throw .groupCall(.unknownEpoch(current: mediaKey.epoch, frame: epoch))
            }
            guard counter >= base0.ratchetCounter else {
                throw .groupCall(.ratchetCounterInPast(current: base0.ratchetCounter, frame: counter))
            }
            let k = try base0.ratcheted(to: counter)
            let c = try GroupCall.cipher(k, keyHash)
            guard MediaFrame.open(base, into: out, frameByteCount: n, headerByteCount: h, using: c) else {
                throw .authenticationFailed
            }
            // Accepted: commit the key change and the replay window.
            mediaKey = k
            cipher = c
            if let i = pendingIndex { pendingKeys.removeFirst(i + 1) }
            window.accept(mfsn)
            return n
        }

        /// What a refusal must leave unchanged (tests and fuzz targets compare it).
        @_spi(Testing) public var stateForTesting: String {
            "\(mediaKey.epoch)/\(mediaKey.ratchetCounter)/\(hexDigest(mediaKey.pcmk)) pending \(pendingKeys.map { "\($0.epoch)/\($0.ratchetCounter)" }) newest \(String(describing: newestMFSN)) window \(window.snapshot)"
        }

    }

    /// The MFSNs accepted from one sender: the newest one and a bitmap of the
    /// ``MediaFrameDecryptor/replayWindowSize`` numbers up to it (bit `m mod size` for MFSN `m`),
    /// stored inline (no heap allocation, cheap to copy).
    struct ReplayWindow: Sendable {
        /// The window size in MFSNs.
        static let size = 1024
        private(set) var newest: UInt32?
        private var bits: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                           UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

        // Word access through a pointer to the inline storage (a dynamically indexed SIMD vector
        // would be spilled whole); `mutating` so no copy of the 128 bytes is made.
        @inline(__always)
        private mutating func isSet(_ m: UInt32) -> Bool {
            let bit = Int(m & UInt32(Self.size - 1))
            return withUnsafeMutableBytes(of: &bits) { $0.load(fromByteOffset: (bit >> 6) << 3, as: UInt64.self) } & (1 << UInt64(bit & 63)) != 0
        }

        @inline(__always)
        private mutating func update(_ m: UInt32, set: Bool) {
            let bit = Int(m & UInt32(Self.size - 1))
            let mask: UInt64 = 1 << UInt64(bit & 63)
            withUnsafeMutableBytes(of: &bits) { b in
                let o = (bit >> 6) << 3
                let w = b.load(fromByteOffset: o, as: UInt64.self)
                b.storeBytes(of: set ? w | mask : w & ~mask, toByteOffset: o, as: UInt64.self)
            }
        }

        /// Refuses a replayed MFSN or one older than the window.
        @inline(__always)
        mutating func check(_ mfsn: UInt32) throws(ThreemaError) {   // reads only (mutating: no copy)
            guard let hi = newest, mfsn <= hi else { return }
            guard hi - mfsn < UInt32(Self.size) else { throw .groupCall(.frameTooOld(mfsn: mfsn)) }
            guard !isSet(mfsn) else { throw .groupCall(.replayedFrame(mfsn: mfsn)) }
        }

        /// Records an accepted MFSN (after ``check(_:)`` passed and the frame authenticated).
        @inline(__always)
        mutating func accept(_ mfsn: UInt32) {
            if let hi = newest {
                if mfsn == hi &+ 1 && mfsn != 0 {   // the common case: the next frame (its bit is stale, one word)
                    newest = mfsn
                } else if mfsn > hi {
                    let d = Int(mfsn - hi)
                    if d >= Self.size {
                        bits = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                    } else {
                        var m = hi
                        for _ in 0..<d { m += 1; update(m, set: false) }
                    }
                    newest = mfsn
                }
            } else {
                newest = mfsn
            }
            update(mfsn, set: true)
        }

        var snapshot: [UInt64] { withUnsafeBytes(of: bits) { Array($0.bindMemory(to: UInt64.self)) } }
    }

    /// A short fingerprint of a key for test state comparisons (BLAKE2b, not the key itself).
    static func hexDigest(_ k: SymmetricKey) -> String {
        var h = try! BLAKE2b(outputByteCount: 8)   // a valid length
        k.withUnsafeBytes { h.update(bufferPointer: $0) }
        return h.finalize().bytes.map { String($0, radix: 16) }.joined()
    }

    /// The AES-256 cipher of a media key's PCMFK.
    static func cipher(_ key: MediaKey, _ keyHash: SymmetricKey) throws(ThreemaError) -> AES.Cipher {
        do { return try AES.Cipher(gcmKey: key.frameKey(keyHash: keyHash)) } catch {
            throw .invalidArgument("PCMFK: \(error)")   // unreachable: PCMFK has 32 bytes
        }
    }
}
