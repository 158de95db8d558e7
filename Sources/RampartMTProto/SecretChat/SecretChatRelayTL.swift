// The API-layer TL a secret chat needs around its own methods (Docs/MTProto.md §7.9): the user a client
// learns its id from, the `Updates` envelopes the server pushes updates in, and the file download
// answer. Only the fields the relay of `rampart mtproto serve` and its clients use are modelled; a value
// with other fields set is refused with a typed error rather than half read.

extension SecretChat.API {
    /// `user#020b1422` as the test relay describes its users: `flags` with `access_hash` (bit 0),
    /// `first_name` (bit 1) and `self` (bit 10), an empty `flags2`, the id. A user with any other field
    /// (photo, status, usernames, …) is ``SecretChatError/malformedTL(_:)``: TL carries no lengths, so
    /// fields this type does not model cannot be skipped.
    public struct User: SecretChat.TLObject {
        /// `id`
        public var id: Int64
        /// `access_hash`
        public var accessHash: Int64?
        /// `first_name`
        public var firstName: String?
        /// `self`: the user is the caller.
        public var isSelf: Bool

        /// A user value.
        public init(id: Int64, accessHash: Int64? = nil, firstName: String? = nil, isSelf: Bool = false) {
            self.id = id
            self.accessHash = accessHash
            self.firstName = firstName
            self.isSelf = isSelf
        }

        static let flagAccessHash: UInt32 = 1 << 0, flagFirstName: UInt32 = 1 << 1, flagSelf: UInt32 = 1 << 10

        public func encode(into w: inout TLWriter) {
            var flags: UInt32 = 0
            if accessHash != nil { flags |= Self.flagAccessHash }
            if firstName != nil { flags |= Self.flagFirstName }
            if isSelf { flags |= Self.flagSelf }
            w.constructor(Constructor.user); w.uint32(flags); w.uint32(0); w.int64(id)
            if let accessHash { w.int64(accessHash) }
            if let firstName { w.string(firstName) }
        }

        public static func decode(from r: inout TLReader) throws(SecretChatError) -> User {
            let c = try r.scUInt32()
            guard c == Constructor.user else { throw .unknownConstructor(c) }
            let flags = try r.scFlags(allowed: flagAccessHash | flagFirstName | flagSelf)
            _ = try r.scFlags(allowed: 0)
            var u = User(id: try r.scInt64(), isSelf: flags & flagSelf != 0)
            if flags & flagAccessHash != 0 { u.accessHash = try r.scInt64() }
            if flags & flagFirstName != 0 { u.firstName = try r.scString() }
            return u
        }
    }

    /// The `Updates` envelopes that carry secret-chat updates. The chats and users vectors of
    /// `updates` must be empty here (this relay never sends any).
    public enum Updates: SecretChat.TLObject {
        /// `updateShort#78d4dec1 update:Update date:int`
        case short(update: Update, date: Int32)
        /// `updates#74ae4240 updates:Vector<Update> users:Vector<User> chats:Vector<Chat> date:int seq:int`
        case updates([Update], date: Int32, seq: Int32)

        /// The updates carried, in order.
        public var updates: [Update] {
            switch self {
            case .short(let u, _): [u]
            case .updates(let us, _, _): us
            }
        }

        public func encode(into w: inout TLWriter) {
            switch self {
            case .short(let u, let date):
                w.constructor(Constructor.updateShort); u.encode(into: &w); w.int32(date)
            case .updates(let us, let date, let seq):
                w.constructor(Constructor.updates); w.vectorHeader(count: us.count)
                for u in us { u.encode(into: &w) }
                w.vectorHeader(count: 0); w.vectorHeader(count: 0); w.int32(date); w.int32(seq)
            }
        }

        public static func decode(from r: inout TLReader) throws(SecretChatError) -> Updates {
            switch try r.scUInt32() {
            case Constructor.updateShort:
                let u = try Update.decode(from: &r)
                return .short(update: u, date: try r.scInt32())
            case Constructor.updates:
                let n = try r.scVectorCount(minElementSize: 8)
                var us: [Update] = []
                for _ in 0..<n { us.append(try Update.decode(from: &r)) }
                guard try r.scVectorCount(minElementSize: 4) == 0, try r.scVectorCount(minElementSize: 4) == 0 else {
                    throw .malformedTL("updates with users or chats")
                }
                let date = try r.scInt32()
                return .updates(us, date: date, seq: try r.scInt32())
            case let id:
                throw .unknownConstructor(id)
            }
        }
    }

    /// `upload.file#096a18d5 type:storage.FileType mtime:int bytes:bytes`, the answer to
    /// `upload.getFile`, with the type `storage.fileUnknown#aa963b05` (an encrypted file has no
    /// type the server can know). Other file types are ``SecretChatError/unknownConstructor(_:)``.
    public struct UploadFile: SecretChat.TLObject {
        /// `mtime`
        public var modified: Int32
        /// `bytes`: the requested part of the encrypted file.
        public var bytes: [UInt8]

        /// A file part.
        public init(modified: Int32, bytes: [UInt8]) {
            self.modified = modified
            self.bytes = bytes
        }

        public func encode(into w: inout TLWriter) {
            w.constructor(Constructor.uploadFile); w.constructor(Constructor.storageFileUnknown)
            w.int32(modified); w.tlBytes(bytes)
        }

        public static func decode(from r: inout TLReader) throws(SecretChatError) -> UploadFile {
            let c = try r.scUInt32()
            guard c == Constructor.uploadFile else { throw .unknownConstructor(c) }
            let type = try r.scUInt32()
            guard type == Constructor.storageFileUnknown else { throw .unknownConstructor(type) }
            let modified = try r.scInt32()
            return UploadFile(modified: modified, bytes: try r.scBytes())
        }
    }

    /// Decodes `Vector<User>` (the answer to `users.getUsers`).
    public static func decodeUsers(_ bytes: [UInt8]) throws(SecretChatError) -> [User] {
        var r = TLReader(bytes)
        let n = try r.scVectorCount(minElementSize: 16)
        var users: [User] = []
        for _ in 0..<n { users.append(try User.decode(from: &r)) }
        try r.scFinish()
        return users
    }

    /// Encodes `Vector<User>`.
    public static func encodeUsers(_ users: [User]) -> [UInt8] {
        var w = TLWriter()
        w.vectorHeader(count: users.count)
        for u in users { u.encode(into: &w) }
        return w.bytes
    }
}
