// The keys of one secret chat (Docs/MTProto.md §7.6), in the shape of Telegram-iOS `SecretChatKeychain`:
// each key with its fingerprint, its validity (the original key indefinitely, a re-keyed one from the
// sequence index at which it took over) and its use counts, which drive the re-key trigger.

extension SecretChat {
    /// The keys a chat holds: the current one and, during a re-key, the previous one (Docs/MTProto.md
    /// §7.6). A value type; keys are ``SecretChat/Key`` values, whose bytes are wiped when the last copy
    /// is released, so a retired key is wiped as soon as no copy of the keychain holds it.
    ///
    /// Validity follows Telegram-iOS: the original key is ``Validity/indefinite``; a re-keyed key is
    /// valid from the raw `out_seq_no` of the first message this side encrypted with it
    /// (``Validity/sequenceBasedIndexRange(fromCanonicalIndex:)``). ``latestKey(validFor:)`` picks the
    /// key of an outgoing message by its raw `out_seq_no`.
    public struct Keychain: Sendable, Equatable {
        /// From which message a key applies.
        public enum Validity: Sendable, Hashable {
            /// The chat's original key: valid for every index no later key covers.
            case indefinite
            /// A re-keyed key: valid from this raw `out_seq_no` on.
            case sequenceBasedIndexRange(fromCanonicalIndex: Int32)
        }

        /// One key with its bookkeeping.
        public struct Entry: Sendable, Equatable {
            /// The key (256 bytes, wiped when released).
            public let key: Key
            /// Where it applies.
            public let validity: Validity
            /// Messages encrypted or decrypted with it (the re-key trigger counts these, §7.6).
            public internal(set) var useCount: Int32
            /// Messages encrypted with it (the one-week trigger needs at least one).
            public internal(set) var encryptedCount: Int32
            /// When it was added, in the session clock's seconds.
            public let createdAt: Int64

            /// The key's `key_fingerprint`.
            public var fingerprint: Int64 { key.fingerprint }
        }

        /// The keys, oldest first.
        public private(set) var entries: [Entry] = []

        /// An empty keychain.
        public init() {}

        /// The key for the message with raw sequence index `index`: the re-keyed key with the largest
        /// start at or below `index`, otherwise the indefinite (original) key, otherwise nil.
        public func latestKey(validFor index: Int32) -> Entry? {
            var best: Entry?
            var bestFrom = Int32.min
            for e in entries {
                if case .sequenceBasedIndexRange(let from) = e.validity, from <= index, best == nil || from > bestFrom {
                    best = e
                    bestFrom = from
                }
            }
            if let best { return best }
            return entries.first { $0.validity == .indefinite }
        }

        /// The key with this `key_fingerprint`, if held.
        public func key(fingerprint: Int64) -> Entry? {
            entries.first { $0.fingerprint == fingerprint }
        }

        /// Adds `key` with `validity` and zero use counts. A key whose fingerprint is already held is
        /// not added twice.
        public mutating func add(_ key: Key, validity: Validity, createdAt: Int64) {
            guard self.key(fingerprint: key.fingerprint) == nil else { return }
            entries.append(Entry(key: key, validity: validity, useCount: 0, encryptedCount: 0, createdAt: createdAt))
        }

        /// Removes the key with this fingerprint (its bytes are wiped once no other copy holds them).
        /// Returns whether a key was removed.
        @discardableResult
        public mutating func retire(fingerprint: Int64) -> Bool {
            guard let i = entries.firstIndex(where: { $0.fingerprint == fingerprint }) else { return false }
            entries.remove(at: i)
            return true
        }

        /// Removes every key.
        public mutating func removeAll() { entries.removeAll() }

        /// Counts one use of the key with this fingerprint (saturating).
        mutating func recordUse(fingerprint: Int64, encrypted: Bool) {
            guard let i = entries.firstIndex(where: { $0.fingerprint == fingerprint }) else { return }
            if entries[i].useCount < .max { entries[i].useCount += 1 }
            if encrypted, entries[i].encryptedCount < .max { entries[i].encryptedCount += 1 }
        }
    }
}

// MARK: - Snapshot fields (the secret chat session's snapshot, Docs/Snapshots.md §4)

extension SecretChat.Keychain {
    /// The most keys a snapshot may hold.
    static let maxSnapshotKeys = 4096

    /// The entries, oldest first: key (256 bytes), validity (uint8 0 indefinite, 1 from an index,
    /// with the index as int32), use count and encrypted count (int32), created at (int64).
    func write(to w: inout SnapshotWriter) {
        w.list(entries) { w, e in
            e.key.write(to: &w)
            switch e.validity {
            case .indefinite: w.uint8(0)
            case .sequenceBasedIndexRange(let from): w.uint8(1); w.int32(from)
            }
            w.int32(e.useCount)
            w.int32(e.encryptedCount)
            w.int64(e.createdAt)
        }
    }

    init(reading r: inout SnapshotReader) throws(RampartError) {
        self.init()
        entries = try r.list("keychain", max: Self.maxSnapshotKeys, minElementBytes: 256 + 1 + 16) { (r) throws(RampartError) in
            let key = try SecretChat.Key(reading: &r)
            let validity: Validity
            switch try r.uint8() {
            case 0: validity = .indefinite
            case 1: validity = .sequenceBasedIndexRange(fromCanonicalIndex: try r.int32())
            default: throw .invalidSnapshot(.invalidField("key validity"))
            }
            let uses = try r.int32(), encrypted = try r.int32(), created = try r.int64()
            guard uses >= 0, encrypted >= 0 else { throw .invalidSnapshot(.invalidField("key counts")) }
            return Entry(key: key, validity: validity, useCount: uses, encryptedCount: encrypted, createdAt: created)
        }
        // One entry per fingerprint, as add(_:validity:createdAt:) keeps them.
        guard Set(entries.map(\.fingerprint)).count == entries.count else { throw .invalidSnapshot(.invalidField("keychain")) }
    }
}

