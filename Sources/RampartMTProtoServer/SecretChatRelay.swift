// The test server's side of secret chats (Docs/MTProto.md §7.9): test users, the DH configuration, the
// chat handshake (request, accept, discard), the relay of encrypted messages and files, and the updates
// it pushes to the other member. Sans-I/O: the TestServer maps auth keys to users and connections and
// delivers the pushes. The relay only ever holds what the clients encrypted end to end: it cannot read
// a message or a file, and never tries.

import RampartMTProto

/// The secret-chat relay of the loopback test server.
///
/// Users are numbered (1, 2, …) as their auth keys first call a relay method; `users.getUsers` with
/// `inputUserSelf` tells a client its number. A user's access hash is derived from its number and a
/// random value of this relay, so that only ids learned from the relay work. Every store is bounded
/// (``Limits``); a request over a limit gets an `rpc_error` and changes nothing.
public struct SecretChatRelay {
    /// A test user's id.
    public typealias UserID = Int64

    /// What the relay may hold.
    public struct Limits: Sendable, Equatable {
        /// Chats open (requested or accepted) at once (default 4096).
        public var maxChats = 4096
        /// Bytes of uploaded parts not yet sent with `sendEncryptedFile`, all users together (default
        /// 64 MiB); over it the part is refused with 400 `FILE_PARTS_TOO_MANY`.
        public var maxUploadBytes = 64 << 20
        /// Uploads in progress per user (default 16); over it the oldest is dropped.
        public var maxUploadsPerUser = 16
        /// Bytes of stored encrypted files, all users together (default 128 MiB); the oldest files
        /// are forgotten to make room.
        public var maxFileBytes = 128 << 20
        /// The largest file (default 32 MiB).
        public var maxFileSize = 32 << 20

        public init() {}
    }

    /// Updates for a user (an `Updates` object), to be pushed on that user's connection.
    public struct Push: Sendable, Equatable {
        /// The user to deliver to.
        public var user: UserID
        /// The serialized `Updates`.
        public var updates: [UInt8]
        /// The `qts` of the encrypted message it carries (nil for a chat's state change).
        public var qts: Int32? = nil
    }

    /// What one request produced.
    public struct Outcome: Sendable {
        /// The result for the caller's `rpc_result` (an `rpc_error` when refused).
        public var result: [UInt8]
        /// Updates for other users.
        public var pushes: [Push] = []
        /// Log lines.
        public var log: [String] = []
        /// The caller said it has received its encrypted messages up to this `qts`
        /// (`messages.receivedQueue`): what the server keeps for redelivery up to there may go.
        public var acknowledgedQts: Int32?
    }

    struct Chat {
        let id: Int32
        let accessHash: Int64
        let date: Int32
        let admin: UserID
        let participant: UserID
        let gA: [UInt8]
        /// The `random_id` of the `requestEncryption` that opened it (a repeated request gets the
        /// same chat).
        let requestRandomID: Int32
        var gB: [UInt8]?
        var keyFingerprint: Int64?

        func other(than user: UserID) -> UserID { user == admin ? participant : admin }
    }

    struct StoredFile {
        let accessHash: Int64
        let bytes: [UInt8]
        let keyFingerprint: Int32
        let date: Int32
    }

    struct Upload {
        var parts: [Int32: [UInt8]] = [:]
        var byteCount = 0
        var tick: UInt64
    }

    /// The limits in force.
    public let limits: Limits
    /// 1-based indices of the `sendEncrypted` calls (over all chats) the relay acknowledges but does
    /// not deliver: the test hook that induces a gap (`rampart mtproto serve --drop-secret-message N`).
    public var dropMessages: Set<Int> = []
    /// `sendEncrypted` calls seen so far.
    public private(set) var sendCount = 0
    /// Messages (`sendEncrypted*`) relayed so far.
    public private(set) var relayedCount = 0

    private let hashKey: UInt64
    private var nextUser: UserID = 1
    private var chats: [Int32: Chat] = [:]
    private var qts: [UserID: Int32] = [:]
    private var files: [Int64: StoredFile] = [:]
    private var fileOrder: [Int64] = []
    private var fileBytes = 0
    private var uploads: [UserID: [Int64: Upload]] = [:]
    private var uploadBytes = 0
    private var tick: UInt64 = 0
    /// The `random_id`s of the last messages each user sent (a message sent again with the same
    /// `random_id`, as a client does after a restart, is acknowledged and not delivered twice).
    private var recentRandomIDs: [UserID: RecentSet<Int64>] = [:]

    /// The DH configuration served: Telegram's 2048-bit prime, g = 3.
    public static let dhConfig = SecretChat.DHConfig.telegram(version: 1)

    /// A relay with no users.
    public init<R: RandomNumberGenerator>(limits: Limits = Limits(), using rng: inout R) {
        self.limits = limits
        hashKey = rng.next()
    }

    /// Whether requests with this constructor are the relay's.
    public static func handles(_ constructor: UInt32) -> Bool {
        typealias C = SecretChat.API.Constructor
        switch constructor {
        case C.getDhConfig, C.requestEncryption, C.acceptEncryption, C.discardEncryption, C.sendEncrypted,
             C.sendEncryptedFile, C.sendEncryptedService, C.getUsers, C.saveFilePart, C.getFile, C.receivedQueue:
            return true
        default:
            return false
        }
    }

    /// A new test user (the caller maps it to an auth key).
    public mutating func newUser() -> UserID {
        defer { nextUser += 1 }
        return nextUser
    }

    /// The access hash of `user` (stable for the relay's lifetime).
    public func accessHash(of user: UserID) -> Int64 {
        var x = UInt64(bitPattern: user) ^ hashKey
        x = (x ^ (x >> 30)) &* 0xbf58_476d_1ce4_e5b9
        x = (x ^ (x >> 27)) &* 0x94d0_49bb_1331_11eb
        return Int64(bitPattern: x ^ (x >> 31))
    }

    /// The `qts` of the last encrypted message relayed to `user` (0 before the first).
    public func qts(of user: UserID) -> Int32 { qts[user] ?? 0 }

    /// Chats open now.
    public var chatCount: Int { chats.count }
    /// Bytes of stored files and pending uploads.
    public var heldFileBytes: Int { fileBytes + uploadBytes }

    /// Handles one request (`body`, a TL function the relay ``handles(_:)``) from `user`.
    public mutating func handle<R: RandomNumberGenerator>(_ body: [UInt8], from user: UserID, now: Double,
                                                          using rng: inout R) -> Outcome {
        let request: SecretChat.API.Request
        do {
            request = try SecretChat.API.Request.decode(body)
        } catch {
            return refuse(400, "INPUT_REQUEST_INVALID", "user \(user): undecodable request (\(error))")
        }
        let date = now.isFinite ? Int32(clamping: Int64(max(0, min(now, 2_000_000_000)))) : 0
        switch request {
        case .getUsers(let ids):
            var found: [SecretChat.API.User] = []
            for id in ids.prefix(200) {
                switch id {
                case .inputSelf:
                    found.append(describe(user, isSelf: true))
                case .user(let other, let hash) where isKnown(other) && hash == accessHash(of: other):
                    found.append(describe(other, isSelf: other == user))
                default:
                    break
                }
            }
            return Outcome(result: SecretChat.API.encodeUsers(found))

        case .getDhConfig(let version, let randomLength):
            guard (0...1024).contains(randomLength) else { return refuse(400, "RANDOM_LENGTH_INVALID") }
            var random = [UInt8](repeating: 0, count: Int(randomLength))
            for i in random.indices { random[i] = UInt8(truncatingIfNeeded: rng.next()) }
            let c = Self.dhConfig
            let answer: SecretChat.API.DhConfig = version == c.version
                ? .notModified(random: random) : .config(g: c.g, p: c.prime, version: c.version, random: random)
            return Outcome(result: answer.serialized)

        case .requestEncryption(let input, let randomID, let gA):
            guard case .user(let peer, let hash) = input, isKnown(peer), hash == accessHash(of: peer), peer != user else {
                return refuse(400, "USER_ID_INVALID")
            }
            guard !gA.isEmpty, gA.count <= 256 else { return refuse(400, "DH_G_A_INVALID") }
            if let same = chats.values.first(where: { $0.admin == user && $0.participant == peer && $0.requestRandomID == randomID && $0.gA == gA }) {
                // The same request again (a client restarted before it saw the answer): the same chat.
                return Outcome(result: SecretChat.API.EncryptedChat.waiting(.init(id: same.id, accessHash: same.accessHash, date: same.date,
                                                                                   adminID: user, participantID: peer)).serialized)
            }
            guard chats.count < limits.maxChats else {
                return refuse(400, "ENCRYPTION_LIMIT", "user \(user): secret chat refused (\(limits.maxChats) chats open)")
            }
            var id: Int32
            repeat { id = Int32(truncatingIfNeeded: rng.next() >> 33) } while id == 0 || chats[id] != nil
            let chat = Chat(id: id, accessHash: Int64(bitPattern: rng.next()), date: date, admin: user,
                            participant: peer, gA: gA, requestRandomID: randomID)
            chats[id] = chat
            let waiting = SecretChat.API.EncryptedChat.waiting(.init(id: id, accessHash: chat.accessHash, date: date,
                                                                     adminID: user, participantID: peer))
            let requested = SecretChat.API.EncryptedChat.requested(.init(id: id, accessHash: chat.accessHash, date: date,
                                                                         adminID: user, participantID: peer, gA: gA))
            var o = Outcome(result: waiting.serialized)
            o.pushes.append(push(.encryption(chat: requested, date: date), to: peer, date: date))
            o.log.append("secret chat \(id): requested by user \(user) for user \(peer)")
            return o

        case .acceptEncryption(let input, let gB, let fingerprint):
            guard var chat = chats[input.chatID], chat.accessHash == input.accessHash, chat.participant == user else {
                return refuse(400, "CHAT_ID_INVALID")
            }
            if let accepted = chat.gB {
                // The same acceptance again (a client restarted before it saw the answer) gets the
                // same answer; another one is refused.
                guard accepted == gB, chat.keyFingerprint == fingerprint else { return refuse(400, "ENCRYPTION_ALREADY_ACCEPTED") }
                return Outcome(result: SecretChat.API.EncryptedChat.chat(.init(id: chat.id, accessHash: chat.accessHash, date: chat.date,
                                                                               adminID: chat.admin, participantID: chat.participant,
                                                                               gAOrB: chat.gA, keyFingerprint: fingerprint)).serialized)
            }
            guard !gB.isEmpty, gB.count <= 256 else { return refuse(400, "DH_G_B_INVALID") }
            chat.gB = gB
            chat.keyFingerprint = fingerprint
            chats[chat.id] = chat
            func encrypted(_ gAOrB: [UInt8]) -> SecretChat.API.EncryptedChat {
                .chat(.init(id: chat.id, accessHash: chat.accessHash, date: chat.date, adminID: chat.admin,
                            participantID: chat.participant, gAOrB: gAOrB, keyFingerprint: fingerprint))
            }
            var o = Outcome(result: encrypted(chat.gA).serialized)
            o.pushes.append(push(.encryption(chat: encrypted(gB), date: date), to: chat.admin, date: date))
            o.log.append("secret chat \(chat.id): accepted by user \(user)")
            return o

        case .discardEncryption(let deleteHistory, let id):
            guard let chat = chats[id], chat.admin == user || chat.participant == user else {
                return refuse(400, "ENCRYPTION_ALREADY_DECLINED")
            }
            chats[id] = nil
            var w = TLWriter()
            w.bool(true)
            var o = Outcome(result: w.bytes)
            let discarded = SecretChat.API.EncryptedChat.discarded(historyDeleted: deleteHistory, id: id)
            o.pushes.append(push(.encryption(chat: discarded, date: date), to: chat.other(than: user), date: date))
            o.log.append("secret chat \(id): discarded by user \(user)")
            return o

        case .sendEncrypted(_, let peer, let randomID, let data):
            sendCount += 1
            return relay(data, randomID: randomID, peer: peer, service: false, file: nil, from: user, date: date,
                         drop: dropMessages.contains(sendCount))

        case .sendEncryptedService(let peer, let randomID, let data):
            return relay(data, randomID: randomID, peer: peer, service: true, file: nil, from: user, date: date, drop: false)

        case .sendEncryptedFile(_, let peer, let randomID, let data, let input):
            // The chat is checked before a file is stored, so that a refusal changes nothing.
            guard let chat = chats[peer.chatID], chat.accessHash == peer.accessHash,
                  chat.admin == user || chat.participant == user, chat.gB != nil
            else { return refuse(400, "CHAT_ID_INVALID") }
            let file: SecretChat.API.EncryptedFile
            switch input {
            case .empty:
                file = .empty
            case .file(let id, let hash):
                guard let f = files[id], f.accessHash == hash else { return refuse(400, "FILE_ID_INVALID") }
                file = .file(id: id, accessHash: hash, size: Int64(f.bytes.count), dcID: 2, keyFingerprint: f.keyFingerprint)
            case .uploaded(let id, let parts, _, let fp), .bigUploaded(let id, let parts, let fp):
                switch storeUpload(id, parts: parts, keyFingerprint: fp, from: user, date: date, using: &rng) {
                case .success(let f): file = f
                case .failure(let e): return refuse(e.code, e.message)
                }
            }
            return relay(data, randomID: randomID, peer: peer, service: false, file: file, from: user, date: date, drop: false)

        case .saveFilePart(let id, let part, let bytes):
            guard (0..<4000).contains(part) else { return refuse(400, "FILE_PART_INVALID") }
            guard !bytes.isEmpty else { return refuse(400, "FILE_PART_EMPTY") }
            guard bytes.count <= 512 << 10 else { return refuse(400, "FILE_PART_TOO_BIG") }
            var mine = uploads[user] ?? [:]
            var upload = mine[id] ?? Upload(tick: 0)
            let replaced = upload.parts[part]?.count ?? 0
            guard uploadBytes - replaced + bytes.count <= limits.maxUploadBytes,
                  upload.byteCount - replaced + bytes.count <= limits.maxFileSize
            else { return refuse(400, "FILE_PARTS_TOO_MANY", "user \(user): upload refused (upload budget)") }
            tick &+= 1
            upload.tick = tick
            upload.parts[part] = bytes
            upload.byteCount += bytes.count - replaced
            uploadBytes += bytes.count - replaced
            mine[id] = upload
            if mine.count > limits.maxUploadsPerUser, let oldest = mine.min(by: { $0.value.tick < $1.value.tick }) {
                uploadBytes -= oldest.value.byteCount
                mine[oldest.key] = nil
            }
            uploads[user] = mine
            var w = TLWriter()
            w.bool(true)
            return Outcome(result: w.bytes)

        case .getFile(_, let id, let hash, let offset, let limit):
            guard let f = files[id], f.accessHash == hash else { return refuse(400, "FILE_ID_INVALID") }
            guard offset >= 0, offset % 1024 == 0 else { return refuse(400, "OFFSET_INVALID") }
            guard limit > 0, limit <= 1 << 20, limit % 1024 == 0 else { return refuse(400, "LIMIT_INVALID") }
            let start = Int(min(offset, Int64(f.bytes.count)))
            let end = min(start + Int(limit), f.bytes.count)
            return Outcome(result: SecretChat.API.UploadFile(modified: f.date, bytes: Array(f.bytes[start..<end])).serialized)

        case .receivedQueue(let maxQts):
            var w = TLWriter()
            w.vectorHeader(count: 0)
            var o = Outcome(result: w.bytes)
            o.acknowledgedQts = min(maxQts, qts(of: user))
            return o
        }
    }

    // MARK: Internals

    private func isKnown(_ user: UserID) -> Bool { user >= 1 && user < nextUser }

    private func describe(_ user: UserID, isSelf: Bool) -> SecretChat.API.User {
        SecretChat.API.User(id: user, accessHash: accessHash(of: user), firstName: "Test user \(user)", isSelf: isSelf)
    }

    private func refuse(_ code: Int32, _ message: String, _ log: String? = nil) -> Outcome {
        var o = Outcome(result: ServiceMessage.rpcError(RPCError(code: code, message: message)).encoded())
        if let log { o.log.append(log) }
        return o
    }

    private mutating func push(_ update: SecretChat.API.Update, to user: UserID, date: Int32) -> Push {
        Push(user: user, updates: SecretChat.API.Updates.short(update: update, date: date).serialized)
    }

    /// Delivers `data` to the other member of the chat as `updateNewEncryptedMessage`.
    private mutating func relay(_ data: [UInt8], randomID: Int64, peer: SecretChat.API.InputEncryptedChat, service: Bool,
                                file: SecretChat.API.EncryptedFile?, from user: UserID, date: Int32, drop: Bool) -> Outcome {
        guard let chat = chats[peer.chatID], chat.accessHash == peer.accessHash,
              chat.admin == user || chat.participant == user
        else { return refuse(400, "CHAT_ID_INVALID") }
        guard chat.gB != nil else { return refuse(400, "ENCRYPTION_ID_INVALID") }
        let sent: SecretChat.API.SentEncryptedMessage = file.map { .file(date: date, file: $0) } ?? .message(date: date)
        var o = Outcome(result: sent.serialized)
        if recentRandomIDs[user] == nil, recentRandomIDs.count >= 2 * limits.maxChats {
            var members = Set<UserID>()
            for c in chats.values { members.insert(c.admin); members.insert(c.participant) }
            recentRandomIDs = recentRandomIDs.filter { members.contains($0.key) }
        }
        guard recentRandomIDs[user, default: RecentSet(capacity: 1024)].insert(randomID) else {
            o.log.append("secret chat \(chat.id): message \(randomID) from user \(user) seen before (random_id): acknowledged, not delivered again")
            return o
        }
        if drop {
            o.log.append("secret chat \(chat.id): message #\(sendCount) from user \(user) dropped (test hook --drop-secret-message)")
            return o
        }
        let to = chat.other(than: user)
        if qts[to] == nil, qts.count >= 2 * limits.maxChats {
            // Forget the counters of users in no open chat (a user in a new chat starts again at 1).
            var members = Set<UserID>()
            for c in chats.values { members.insert(c.admin); members.insert(c.participant) }
            qts = qts.filter { members.contains($0.key) }
        }
        let q = (qts[to] ?? 0) &+ 1
        qts[to] = q
        let message: SecretChat.API.EncryptedMessage = service
            ? .service(randomID: randomID, chatID: chat.id, date: date, bytes: data)
            : .message(randomID: randomID, chatID: chat.id, date: date, bytes: data, file: file ?? .empty)
        var p = push(.newEncryptedMessage(message: message, qts: q), to: to, date: date)
        p.qts = q
        o.pushes.append(p)
        relayedCount += 1
        return o
    }

    /// Joins the uploaded parts 0..<parts of `id` into a stored file.
    private mutating func storeUpload<R: RandomNumberGenerator>(_ id: Int64, parts: Int32, keyFingerprint: Int32, from user: UserID,
                                                               date: Int32, using rng: inout R) -> Result<SecretChat.API.EncryptedFile, RPCError> {
        guard let upload = uploads[user]?[id], parts >= 1, parts <= 4000, upload.parts.count == Int(parts),
              (0..<parts).allSatisfy({ upload.parts[$0] != nil }), upload.byteCount <= limits.maxFileBytes
        else { return .failure(RPCError(code: 400, message: "FILE_PARTS_INVALID")) }
        uploads[user]?[id] = nil
        if uploads[user]?.isEmpty == true { uploads[user] = nil }
        uploadBytes -= upload.byteCount
        var bytes: [UInt8] = []
        bytes.reserveCapacity(upload.byteCount)
        for p in 0..<parts { bytes += upload.parts[p] ?? [] }
        while fileBytes + bytes.count > limits.maxFileBytes, !fileOrder.isEmpty {
            let old = fileOrder.removeFirst()
            fileBytes -= files.removeValue(forKey: old)?.bytes.count ?? 0
        }
        var fileID: Int64
        repeat { fileID = Int64(bitPattern: rng.next()) } while files[fileID] != nil
        let stored = StoredFile(accessHash: Int64(bitPattern: rng.next()), bytes: bytes, keyFingerprint: keyFingerprint, date: date)
        files[fileID] = stored
        fileOrder.append(fileID)
        fileBytes += bytes.count
        return .success(.file(id: fileID, accessHash: stored.accessHash, size: Int64(bytes.count), dcID: 2,
                              keyFingerprint: keyFingerprint))
    }
}

/// The last `capacity` distinct values inserted (a replay cache): an insertion past the capacity
/// forgets the oldest value.
struct RecentSet<Element: Hashable> {
    let capacity: Int
    private var set: Set<Element> = []
    private var ring: [Element] = []
    private var next = 0

    init(capacity: Int) { self.capacity = max(capacity, 1) }

    /// Adds `value`; false when it is there already.
    mutating func insert(_ value: Element) -> Bool {
        guard set.insert(value).inserted else { return false }
        if ring.count < capacity {
            ring.append(value)
        } else {
            set.remove(ring[next])
            ring[next] = value
            next = (next + 1) % capacity
        }
        return true
    }
}
