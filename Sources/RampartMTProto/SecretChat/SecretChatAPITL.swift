// The API-layer TL of secret chats (Docs/MTProto.md §7.1): the RPCs a client sends to open, use and close
// a secret chat, and the objects and updates the server answers with. Enough for the test server's relay
// and for a client; the end-to-end payload (`data`, `bytes`) stays opaque here. Ids are those of the
// current API schema (checked against gotd/td `_schema/telegram.tl` and tdlib `telegram_api.tl`).
//
// Older layers used other ids for several of these (with `int` user ids: `encryptedChatWaiting#3bf703dc`,
// `encryptedChatRequested#62718a82`, `encryptedChat#fa56ce36`, `encryptedChatDiscarded#13d6dd27`; with an
// `int` file size: `encryptedFile#4a70994c`;
// `sendEncrypted#a9776773`, `sendEncryptedFile#9a901b66` and `discardEncryption#edd923c5` had no flags).
// They decode as ``SecretChatError/unknownConstructor(_:)``.

extension SecretChat {
    /// The API-layer TL of secret chats (Docs/MTProto.md §7.1).
    public enum API {
        /// Constructor ids of the API layer (current layer).
        public enum Constructor {
            /// `messages.getDhConfig#26cf8950 version:int random_length:int = messages.DhConfig`
            public static let getDhConfig: UInt32 = 0x26cf_8950
            /// `messages.dhConfig#2c221edd g:int p:bytes version:int random:bytes`
            public static let dhConfig: UInt32 = 0x2c22_1edd
            /// `messages.dhConfigNotModified#c0e24635 random:bytes`
            public static let dhConfigNotModified: UInt32 = 0xc0e2_4635
            /// `messages.requestEncryption#f64daf43 user_id:InputUser random_id:int g_a:bytes = EncryptedChat`
            public static let requestEncryption: UInt32 = 0xf64d_af43
            /// `messages.acceptEncryption#3dbc0415 peer:InputEncryptedChat g_b:bytes key_fingerprint:long = EncryptedChat`
            public static let acceptEncryption: UInt32 = 0x3dbc_0415
            /// `messages.discardEncryption#f393aea0 flags:# delete_history:flags.0?true chat_id:int = Bool`
            public static let discardEncryption: UInt32 = 0xf393_aea0
            /// `messages.sendEncrypted#44fa7a15 flags:# silent:flags.0?true peer:InputEncryptedChat random_id:long data:bytes`
            public static let sendEncrypted: UInt32 = 0x44fa_7a15
            /// `messages.sendEncryptedFile#5559481d flags:# silent:flags.0?true peer:InputEncryptedChat random_id:long
            /// data:bytes file:InputEncryptedFile`
            public static let sendEncryptedFile: UInt32 = 0x5559_481d
            /// `messages.sendEncryptedService#32d439a4 peer:InputEncryptedChat random_id:long data:bytes`
            public static let sendEncryptedService: UInt32 = 0x32d4_39a4
            /// `encryptedChatEmpty#ab7ec0a0 id:int`
            public static let encryptedChatEmpty: UInt32 = 0xab7e_c0a0
            /// `encryptedChatWaiting#66b25953 id:int access_hash:long date:int admin_id:long participant_id:long`
            public static let encryptedChatWaiting: UInt32 = 0x66b2_5953
            /// `encryptedChatRequested#48f1d94c flags:# folder_id:flags.0?int id:int access_hash:long date:int
            /// admin_id:long participant_id:long g_a:bytes`
            public static let encryptedChatRequested: UInt32 = 0x48f1_d94c
            /// `encryptedChat#61f0d4c7 id:int access_hash:long date:int admin_id:long participant_id:long
            /// g_a_or_b:bytes key_fingerprint:long`
            public static let encryptedChat: UInt32 = 0x61f0_d4c7
            /// `encryptedChatDiscarded#1e1c7c45 flags:# history_deleted:flags.0?true id:int`
            public static let encryptedChatDiscarded: UInt32 = 0x1e1c_7c45
            /// `inputEncryptedChat#f141b5e1 chat_id:int access_hash:long`
            public static let inputEncryptedChat: UInt32 = 0xf141_b5e1
            /// `encryptedMessage#ed18c118 random_id:long chat_id:int date:int bytes:bytes file:EncryptedFile`
            public static let encryptedMessage: UInt32 = 0xed18_c118
            /// `encryptedMessageService#23734b06 random_id:long chat_id:int date:int bytes:bytes`
            public static let encryptedMessageService: UInt32 = 0x2373_4b06
            /// `updateEncryption#b4a2e88d chat:EncryptedChat date:int`
            public static let updateEncryption: UInt32 = 0xb4a2_e88d
            /// `updateNewEncryptedMessage#12bcbd9a message:EncryptedMessage qts:int`
            public static let updateNewEncryptedMessage: UInt32 = 0x12bc_bd9a
            /// `inputEncryptedFileEmpty#1837c364`
            public static let inputEncryptedFileEmpty: UInt32 = 0x1837_c364
            /// `inputEncryptedFileUploaded#64bd0306 id:long parts:int md5_checksum:string key_fingerprint:int`
            public static let inputEncryptedFileUploaded: UInt32 = 0x64bd_0306
            /// `inputEncryptedFile#5a17b5e5 id:long access_hash:long`
            public static let inputEncryptedFile: UInt32 = 0x5a17_b5e5
            /// `inputEncryptedFileBigUploaded#2dc173c8 id:long parts:int key_fingerprint:int`
            public static let inputEncryptedFileBigUploaded: UInt32 = 0x2dc1_73c8
            /// `encryptedFileEmpty#c21f497e`
            public static let encryptedFileEmpty: UInt32 = 0xc21f_497e
            /// `encryptedFile#a8008cd8 id:long access_hash:long size:long dc_id:int key_fingerprint:int`
            public static let encryptedFile: UInt32 = 0xa800_8cd8
            /// `messages.sentEncryptedMessage#560f8935 date:int`
            public static let sentEncryptedMessage: UInt32 = 0x560f_8935
            /// `messages.sentEncryptedFile#9493ff32 date:int file:EncryptedFile`
            public static let sentEncryptedFile: UInt32 = 0x9493_ff32
            /// `inputUserEmpty#b98886cf`
            public static let inputUserEmpty: UInt32 = 0xb988_86cf
            /// `inputUserSelf#f7c1b13f`
            public static let inputUserSelf: UInt32 = 0xf7c1_b13f
            /// `inputUser#f21158c6 user_id:long access_hash:long`
            public static let inputUser: UInt32 = 0xf211_58c6
            /// `users.getUsers#0d91a548`
            public static let getUsers: UInt32 = 0x0d91_a548
            /// `user#020b1422` (the current schema's user; older layers used other ids)
            public static let user: UInt32 = 0x020b_1422
            /// `userEmpty#d3bc4b7a`
            public static let userEmpty: UInt32 = 0xd3bc_4b7a
            /// `updateShort#78d4dec1`
            public static let updateShort: UInt32 = 0x78d4_dec1
            /// `updates#74ae4240`
            public static let updates: UInt32 = 0x74ae_4240
            /// `upload.saveFilePart#b304a621`
            public static let saveFilePart: UInt32 = 0xb304_a621
            /// `upload.getFile#be5335be`
            public static let getFile: UInt32 = 0xbe53_35be
            /// `messages.receivedQueue#55a5bb66`
            public static let receivedQueue: UInt32 = 0x55a5_bb66
            /// `inputEncryptedFileLocation#f5235d55`
            public static let inputEncryptedFileLocation: UInt32 = 0xf523_5d55
            /// `upload.file#096a18d5`
            public static let uploadFile: UInt32 = 0x096a_18d5
            /// `storage.fileUnknown#aa963b05`
            public static let storageFileUnknown: UInt32 = 0xaa96_3b05
        }

        /// `InputUser`, the forms a secret-chat request needs (`inputUserFromMessage` is not accepted).
        public enum InputUser: TLObject {
            /// `inputUserEmpty#b98886cf`
            case empty
            /// `inputUserSelf#f7c1b13f`
            case inputSelf
            /// `inputUser#f21158c6 user_id:long access_hash:long`
            case user(userID: Int64, accessHash: Int64)

            public func encode(into w: inout TLWriter) {
                switch self {
                case .empty: w.constructor(Constructor.inputUserEmpty)
                case .inputSelf: w.constructor(Constructor.inputUserSelf)
                case .user(let id, let hash): w.constructor(Constructor.inputUser); w.int64(id); w.int64(hash)
                }
            }

            public static func decode(from r: inout TLReader) throws(SecretChatError) -> InputUser {
                switch try r.scUInt32() {
                case Constructor.inputUserEmpty: return .empty
                case Constructor.inputUserSelf: return .inputSelf
                case Constructor.inputUser:
                    let id = try r.scInt64()
                    return .user(userID: id, accessHash: try r.scInt64())
                case let id: throw .unknownConstructor(id)
                }
            }
        }

        /// `inputEncryptedChat#f141b5e1 chat_id:int access_hash:long`
        public struct InputEncryptedChat: TLObject {
            /// `chat_id`
            public var chatID: Int32
            /// `access_hash`
            public var accessHash: Int64

            /// A chat reference.
            public init(chatID: Int32, accessHash: Int64) {
                self.chatID = chatID
                self.accessHash = accessHash
            }

            public func encode(into w: inout TLWriter) {
                w.constructor(Constructor.inputEncryptedChat); w.int32(chatID); w.int64(accessHash)
            }

            public static func decode(from r: inout TLReader) throws(SecretChatError) -> InputEncryptedChat {
                try r.scExpect(Constructor.inputEncryptedChat)
                let id = try r.scInt32()
                return InputEncryptedChat(chatID: id, accessHash: try r.scInt64())
            }
        }

        /// `EncryptedChat`: a chat as the server reports it.
        public enum EncryptedChat: TLObject {
            /// `encryptedChatEmpty#ab7ec0a0 id:int`
            case empty(id: Int32)
            /// `encryptedChatWaiting#66b25953`: the creator waits for the other side.
            case waiting(Waiting)
            /// `encryptedChatRequested#48f1d94c`: the other side is asked (carries `g_a`).
            case requested(Requested)
            /// `encryptedChat#61f0d4c7`: established (carries `g_a_or_b` and the key fingerprint).
            case chat(Chat)
            /// `encryptedChatDiscarded#1e1c7c45 flags:# history_deleted:flags.0?true id:int`
            case discarded(historyDeleted: Bool, id: Int32)

            /// The fields of `encryptedChatWaiting`.
            public struct Waiting: Equatable, Sendable {
                /// `id`
                public var id: Int32
                /// `access_hash`
                public var accessHash: Int64
                /// `date`
                public var date: Int32
                /// `admin_id` (the creator)
                public var adminID: Int64
                /// `participant_id`
                public var participantID: Int64

                /// A waiting chat.
                public init(id: Int32, accessHash: Int64, date: Int32, adminID: Int64, participantID: Int64) {
                    self.id = id
                    self.accessHash = accessHash
                    self.date = date
                    self.adminID = adminID
                    self.participantID = participantID
                }
            }

            /// The fields of `encryptedChatRequested`.
            public struct Requested: Equatable, Sendable {
                /// `folder_id:flags.0?int`
                public var folderID: Int32?
                /// `id`
                public var id: Int32
                /// `access_hash`
                public var accessHash: Int64
                /// `date`
                public var date: Int32
                /// `admin_id`
                public var adminID: Int64
                /// `participant_id`
                public var participantID: Int64
                /// `g_a`
                public var gA: [UInt8]

                /// A requested chat.
                public init(folderID: Int32? = nil, id: Int32, accessHash: Int64, date: Int32, adminID: Int64,
                            participantID: Int64, gA: [UInt8]) {
                    self.folderID = folderID
                    self.id = id
                    self.accessHash = accessHash
                    self.date = date
                    self.adminID = adminID
                    self.participantID = participantID
                    self.gA = gA
                }
            }

            /// The fields of `encryptedChat`.
            public struct Chat: Equatable, Sendable {
                /// `id`
                public var id: Int32
                /// `access_hash`
                public var accessHash: Int64
                /// `date`
                public var date: Int32
                /// `admin_id`
                public var adminID: Int64
                /// `participant_id`
                public var participantID: Int64
                /// `g_a_or_b`: `g_b` for the creator, `g_a` for the other side.
                public var gAOrB: [UInt8]
                /// `key_fingerprint`
                public var keyFingerprint: Int64

                /// An established chat.
                public init(id: Int32, accessHash: Int64, date: Int32, adminID: Int64, participantID: Int64,
                            gAOrB: [UInt8], keyFingerprint: Int64) {
                    self.id = id
                    self.accessHash = accessHash
                    self.date = date
                    self.adminID = adminID
                    self.participantID = participantID
                    self.gAOrB = gAOrB
                    self.keyFingerprint = keyFingerprint
                }
            }

            /// The chat's id.
            public var id: Int32 {
                switch self {
                case .empty(let id), .discarded(_, let id): id
                case .waiting(let c): c.id
                case .requested(let c): c.id
                case .chat(let c): c.id
                }
            }

            public func encode(into w: inout TLWriter) {
                switch self {
                case .empty(let id):
                    w.constructor(Constructor.encryptedChatEmpty); w.int32(id)
                case .waiting(let c):
                    w.constructor(Constructor.encryptedChatWaiting)
                    w.int32(c.id); w.int64(c.accessHash); w.int32(c.date); w.int64(c.adminID); w.int64(c.participantID)
                case .requested(let c):
                    w.constructor(Constructor.encryptedChatRequested)
                    w.uint32(c.folderID == nil ? 0 : 1)
                    if let f = c.folderID { w.int32(f) }
                    w.int32(c.id); w.int64(c.accessHash); w.int32(c.date); w.int64(c.adminID); w.int64(c.participantID)
                    w.tlBytes(c.gA)
                case .chat(let c):
                    w.constructor(Constructor.encryptedChat)
                    w.int32(c.id); w.int64(c.accessHash); w.int32(c.date); w.int64(c.adminID); w.int64(c.participantID)
                    w.tlBytes(c.gAOrB); w.int64(c.keyFingerprint)
                case .discarded(let deleted, let id):
                    w.constructor(Constructor.encryptedChatDiscarded); w.uint32(deleted ? 1 : 0); w.int32(id)
                }
            }

            public static func decode(from r: inout TLReader) throws(SecretChatError) -> EncryptedChat {
                switch try r.scUInt32() {
                case Constructor.encryptedChatEmpty:
                    return .empty(id: try r.scInt32())
                case Constructor.encryptedChatWaiting:
                    let id = try r.scInt32(), hash = try r.scInt64(), date = try r.scInt32()
                    let admin = try r.scInt64()
                    return .waiting(Waiting(id: id, accessHash: hash, date: date, adminID: admin, participantID: try r.scInt64()))
                case Constructor.encryptedChatRequested:
                    let flags = try r.scFlags(allowed: 1)
                    let folder = flags & 1 != 0 ? try r.scInt32() : nil
                    let id = try r.scInt32(), hash = try r.scInt64(), date = try r.scInt32()
                    let admin = try r.scInt64(), participant = try r.scInt64()
                    return .requested(Requested(folderID: folder, id: id, accessHash: hash, date: date, adminID: admin,
                                                participantID: participant, gA: try r.scBytes()))
                case Constructor.encryptedChat:
                    let id = try r.scInt32(), hash = try r.scInt64(), date = try r.scInt32()
                    let admin = try r.scInt64(), participant = try r.scInt64()
                    let g = try r.scBytes()
                    return .chat(Chat(id: id, accessHash: hash, date: date, adminID: admin, participantID: participant,
                                      gAOrB: g, keyFingerprint: try r.scInt64()))
                case Constructor.encryptedChatDiscarded:
                    let flags = try r.scFlags(allowed: 1)
                    return .discarded(historyDeleted: flags & 1 != 0, id: try r.scInt32())
                case let id:
                    throw .unknownConstructor(id)
                }
            }
        }

        /// `InputEncryptedFile`: the file a `sendEncryptedFile` attaches.
        public enum InputEncryptedFile: TLObject {
            /// `inputEncryptedFileEmpty#1837c364`
            case empty
            /// `inputEncryptedFileUploaded#64bd0306 id:long parts:int md5_checksum:string key_fingerprint:int`
            case uploaded(id: Int64, parts: Int32, md5Checksum: String, keyFingerprint: Int32)
            /// `inputEncryptedFile#5a17b5e5 id:long access_hash:long` (a file already on the server)
            case file(id: Int64, accessHash: Int64)
            /// `inputEncryptedFileBigUploaded#2dc173c8 id:long parts:int key_fingerprint:int`
            case bigUploaded(id: Int64, parts: Int32, keyFingerprint: Int32)

            public func encode(into w: inout TLWriter) {
                switch self {
                case .empty:
                    w.constructor(Constructor.inputEncryptedFileEmpty)
                case .uploaded(let id, let parts, let md5, let fp):
                    w.constructor(Constructor.inputEncryptedFileUploaded); w.int64(id); w.int32(parts); w.string(md5); w.int32(fp)
                case .file(let id, let hash):
                    w.constructor(Constructor.inputEncryptedFile); w.int64(id); w.int64(hash)
                case .bigUploaded(let id, let parts, let fp):
                    w.constructor(Constructor.inputEncryptedFileBigUploaded); w.int64(id); w.int32(parts); w.int32(fp)
                }
            }

            public static func decode(from r: inout TLReader) throws(SecretChatError) -> InputEncryptedFile {
                switch try r.scUInt32() {
                case Constructor.inputEncryptedFileEmpty:
                    return .empty
                case Constructor.inputEncryptedFileUploaded:
                    let id = try r.scInt64(), parts = try r.scInt32(), md5 = try r.scString()
                    return .uploaded(id: id, parts: parts, md5Checksum: md5, keyFingerprint: try r.scInt32())
                case Constructor.inputEncryptedFile:
                    let id = try r.scInt64()
                    return .file(id: id, accessHash: try r.scInt64())
                case Constructor.inputEncryptedFileBigUploaded:
                    let id = try r.scInt64(), parts = try r.scInt32()
                    return .bigUploaded(id: id, parts: parts, keyFingerprint: try r.scInt32())
                case let id:
                    throw .unknownConstructor(id)
                }
            }
        }

        /// `EncryptedFile`: a file as the server stores it.
        public enum EncryptedFile: TLObject {
            /// `encryptedFileEmpty#c21f497e`
            case empty
            /// `encryptedFile#a8008cd8 id:long access_hash:long size:long dc_id:int key_fingerprint:int`
            case file(id: Int64, accessHash: Int64, size: Int64, dcID: Int32, keyFingerprint: Int32)

            public func encode(into w: inout TLWriter) {
                switch self {
                case .empty:
                    w.constructor(Constructor.encryptedFileEmpty)
                case .file(let id, let hash, let size, let dc, let fp):
                    w.constructor(Constructor.encryptedFile); w.int64(id); w.int64(hash); w.int64(size); w.int32(dc); w.int32(fp)
                }
            }

            public static func decode(from r: inout TLReader) throws(SecretChatError) -> EncryptedFile {
                switch try r.scUInt32() {
                case Constructor.encryptedFileEmpty:
                    return .empty
                case Constructor.encryptedFile:
                    let id = try r.scInt64(), hash = try r.scInt64(), size = try r.scInt64(), dc = try r.scInt32()
                    return .file(id: id, accessHash: hash, size: size, dcID: dc, keyFingerprint: try r.scInt32())
                case let id:
                    throw .unknownConstructor(id)
                }
            }
        }

        /// `EncryptedMessage`: a message as the relay delivers it. `bytes` is the end-to-end ciphertext
        /// (`key_fingerprint ‖ msg_key ‖ IGE`, Docs/MTProto.md §7.3).
        public enum EncryptedMessage: TLObject {
            /// `encryptedMessage#ed18c118 random_id:long chat_id:int date:int bytes:bytes file:EncryptedFile`
            case message(randomID: Int64, chatID: Int32, date: Int32, bytes: [UInt8], file: EncryptedFile)
            /// `encryptedMessageService#23734b06 random_id:long chat_id:int date:int bytes:bytes`
            case service(randomID: Int64, chatID: Int32, date: Int32, bytes: [UInt8])

            public func encode(into w: inout TLWriter) {
                switch self {
                case .message(let id, let chat, let date, let bytes, let file):
                    w.constructor(Constructor.encryptedMessage)
                    w.int64(id); w.int32(chat); w.int32(date); w.tlBytes(bytes); file.encode(into: &w)
                case .service(let id, let chat, let date, let bytes):
                    w.constructor(Constructor.encryptedMessageService)
                    w.int64(id); w.int32(chat); w.int32(date); w.tlBytes(bytes)
                }
            }

            public static func decode(from r: inout TLReader) throws(SecretChatError) -> EncryptedMessage {
                switch try r.scUInt32() {
                case Constructor.encryptedMessage:
                    let id = try r.scInt64(), chat = try r.scInt32(), date = try r.scInt32(), bytes = try r.scBytes()
                    return .message(randomID: id, chatID: chat, date: date, bytes: bytes, file: try EncryptedFile.decode(from: &r))
                case Constructor.encryptedMessageService:
                    let id = try r.scInt64(), chat = try r.scInt32(), date = try r.scInt32()
                    return .service(randomID: id, chatID: chat, date: date, bytes: try r.scBytes())
                case let id:
                    throw .unknownConstructor(id)
                }
            }
        }

        /// The updates a secret chat receives.
        public enum Update: TLObject {
            /// `updateEncryption#b4a2e88d chat:EncryptedChat date:int`
            case encryption(chat: EncryptedChat, date: Int32)
            /// `updateNewEncryptedMessage#12bcbd9a message:EncryptedMessage qts:int`
            case newEncryptedMessage(message: EncryptedMessage, qts: Int32)

            public func encode(into w: inout TLWriter) {
                switch self {
                case .encryption(let chat, let date):
                    w.constructor(Constructor.updateEncryption); chat.encode(into: &w); w.int32(date)
                case .newEncryptedMessage(let m, let qts):
                    w.constructor(Constructor.updateNewEncryptedMessage); m.encode(into: &w); w.int32(qts)
                }
            }

            public static func decode(from r: inout TLReader) throws(SecretChatError) -> Update {
                switch try r.scUInt32() {
                case Constructor.updateEncryption:
                    let chat = try EncryptedChat.decode(from: &r)
                    return .encryption(chat: chat, date: try r.scInt32())
                case Constructor.updateNewEncryptedMessage:
                    let m = try EncryptedMessage.decode(from: &r)
                    return .newEncryptedMessage(message: m, qts: try r.scInt32())
                case let id:
                    throw .unknownConstructor(id)
                }
            }
        }

        /// `messages.DhConfig`, the answer to `messages.getDhConfig`. `p` is the big-endian prime as TL
        /// `bytes` (its checks are Docs/MTProto.md §4, done by the key exchange).
        public enum DhConfig: TLObject {
            /// `messages.dhConfig#2c221edd g:int p:bytes version:int random:bytes`
            case config(g: Int32, p: [UInt8], version: Int32, random: [UInt8])
            /// `messages.dhConfigNotModified#c0e24635 random:bytes`
            case notModified(random: [UInt8])

            /// The server's random bytes (mixed into local entropy only).
            public var random: [UInt8] {
                switch self {
                case .config(_, _, _, let r), .notModified(let r): r
                }
            }

            public func encode(into w: inout TLWriter) {
                switch self {
                case .config(let g, let p, let version, let random):
                    w.constructor(Constructor.dhConfig); w.int32(g); w.tlBytes(p); w.int32(version); w.tlBytes(random)
                case .notModified(let random):
                    w.constructor(Constructor.dhConfigNotModified); w.tlBytes(random)
                }
            }

            public static func decode(from r: inout TLReader) throws(SecretChatError) -> DhConfig {
                switch try r.scUInt32() {
                case Constructor.dhConfig:
                    let g = try r.scInt32(), p = try r.scBytes(), version = try r.scInt32()
                    return .config(g: g, p: p, version: version, random: try r.scBytes())
                case Constructor.dhConfigNotModified:
                    return .notModified(random: try r.scBytes())
                case let id:
                    throw .unknownConstructor(id)
                }
            }
        }

        /// `messages.SentEncryptedMessage`, the answer to the three send methods.
        public enum SentEncryptedMessage: TLObject {
            /// `messages.sentEncryptedMessage#560f8935 date:int`
            case message(date: Int32)
            /// `messages.sentEncryptedFile#9493ff32 date:int file:EncryptedFile`
            case file(date: Int32, file: EncryptedFile)

            public func encode(into w: inout TLWriter) {
                switch self {
                case .message(let date): w.constructor(Constructor.sentEncryptedMessage); w.int32(date)
                case .file(let date, let file):
                    w.constructor(Constructor.sentEncryptedFile); w.int32(date); file.encode(into: &w)
                }
            }

            public static func decode(from r: inout TLReader) throws(SecretChatError) -> SentEncryptedMessage {
                switch try r.scUInt32() {
                case Constructor.sentEncryptedMessage: return .message(date: try r.scInt32())
                case Constructor.sentEncryptedFile:
                    let date = try r.scInt32()
                    return .file(date: date, file: try EncryptedFile.decode(from: &r))
                case let id: throw .unknownConstructor(id)
                }
            }
        }

        /// The secret-chat RPCs (what a relay reads from a client). Answers: `getDhConfig` →
        /// ``DhConfig``; `requestEncryption`, `acceptEncryption` → ``EncryptedChat``;
        /// `discardEncryption` → `Bool`; the send methods → ``SentEncryptedMessage``.
        public enum Request: TLObject {
            /// `messages.getDhConfig#26cf8950 version:int random_length:int`
            case getDhConfig(version: Int32, randomLength: Int32)
            /// `messages.requestEncryption#f64daf43 user_id:InputUser random_id:int g_a:bytes`
            case requestEncryption(userID: InputUser, randomID: Int32, gA: [UInt8])
            /// `messages.acceptEncryption#3dbc0415 peer:InputEncryptedChat g_b:bytes key_fingerprint:long`
            case acceptEncryption(peer: InputEncryptedChat, gB: [UInt8], keyFingerprint: Int64)
            /// `messages.discardEncryption#f393aea0 flags:# delete_history:flags.0?true chat_id:int`
            case discardEncryption(deleteHistory: Bool, chatID: Int32)
            /// `messages.sendEncrypted#44fa7a15 flags:# silent:flags.0?true peer:InputEncryptedChat random_id:long data:bytes`
            case sendEncrypted(silent: Bool, peer: InputEncryptedChat, randomID: Int64, data: [UInt8])
            /// `messages.sendEncryptedFile#5559481d flags:# silent:flags.0?true peer:InputEncryptedChat random_id:long
            /// data:bytes file:InputEncryptedFile`
            case sendEncryptedFile(silent: Bool, peer: InputEncryptedChat, randomID: Int64, data: [UInt8], file: InputEncryptedFile)
            /// `messages.sendEncryptedService#32d439a4 peer:InputEncryptedChat random_id:long data:bytes`
            case sendEncryptedService(peer: InputEncryptedChat, randomID: Int64, data: [UInt8])
            /// `users.getUsers#0d91a548 id:Vector<InputUser>` (a client learns its own user id with
            /// `inputUserSelf`); answer: `Vector<User>` (``User``).
            case getUsers(ids: [InputUser])
            /// `upload.saveFilePart#b304a621 file_id:long file_part:int bytes:bytes` (the parts of an
            /// encrypted file before `sendEncryptedFile`); answer: `Bool`.
            case saveFilePart(fileID: Int64, part: Int32, bytes: [UInt8])
            /// `upload.getFile#be5335be flags:# precise:flags.0?true cdn_supported:flags.1?true
            /// location:InputFileLocation offset:long limit:int`, with the location
            /// `inputEncryptedFileLocation#f5235d55 id:long access_hash:long` (other locations are
            /// ``SecretChatError/unknownConstructor(_:)``); answer: ``UploadFile``.
            case getFile(precise: Bool, fileID: Int64, accessHash: Int64, offset: Int64, limit: Int32)
            /// `messages.receivedQueue#55a5bb66 max_qts:int`: the encrypted messages up to `max_qts`
            /// are received (the server may forget them); answer: `Vector<long>` (the random_ids of
            /// messages it forgot, which this test relay leaves empty).
            case receivedQueue(maxQts: Int32)

            public func encode(into w: inout TLWriter) {
                switch self {
                case .getDhConfig(let version, let length):
                    w.constructor(Constructor.getDhConfig); w.int32(version); w.int32(length)
                case .requestEncryption(let user, let id, let gA):
                    w.constructor(Constructor.requestEncryption); user.encode(into: &w); w.int32(id); w.tlBytes(gA)
                case .acceptEncryption(let peer, let gB, let fp):
                    w.constructor(Constructor.acceptEncryption); peer.encode(into: &w); w.tlBytes(gB); w.int64(fp)
                case .discardEncryption(let delete, let chat):
                    w.constructor(Constructor.discardEncryption); w.uint32(delete ? 1 : 0); w.int32(chat)
                case .sendEncrypted(let silent, let peer, let id, let data):
                    w.constructor(Constructor.sendEncrypted); w.uint32(silent ? 1 : 0)
                    peer.encode(into: &w); w.int64(id); w.tlBytes(data)
                case .sendEncryptedFile(let silent, let peer, let id, let data, let file):
                    w.constructor(Constructor.sendEncryptedFile); w.uint32(silent ? 1 : 0)
                    peer.encode(into: &w); w.int64(id); w.tlBytes(data); file.encode(into: &w)
                case .sendEncryptedService(let peer, let id, let data):
                    w.constructor(Constructor.sendEncryptedService); peer.encode(into: &w); w.int64(id); w.tlBytes(data)
                case .getUsers(let ids):
                    w.constructor(Constructor.getUsers); w.vectorHeader(count: ids.count)
                    for u in ids { u.encode(into: &w) }
                case .saveFilePart(let id, let part, let bytes):
                    w.constructor(Constructor.saveFilePart); w.int64(id); w.int32(part); w.tlBytes(bytes)
                case .getFile(let precise, let id, let hash, let offset, let limit):
                    w.constructor(Constructor.getFile); w.uint32(precise ? 1 : 0)
                    w.constructor(Constructor.inputEncryptedFileLocation); w.int64(id); w.int64(hash)
                    w.int64(offset); w.int32(limit)
                case .receivedQueue(let maxQts):
                    w.constructor(Constructor.receivedQueue); w.int32(maxQts)
                }
            }

            public static func decode(from r: inout TLReader) throws(SecretChatError) -> Request {
                switch try r.scUInt32() {
                case Constructor.getDhConfig:
                    let version = try r.scInt32()
                    return .getDhConfig(version: version, randomLength: try r.scInt32())
                case Constructor.requestEncryption:
                    let user = try InputUser.decode(from: &r), id = try r.scInt32()
                    return .requestEncryption(userID: user, randomID: id, gA: try r.scBytes())
                case Constructor.acceptEncryption:
                    let peer = try InputEncryptedChat.decode(from: &r), gB = try r.scBytes()
                    return .acceptEncryption(peer: peer, gB: gB, keyFingerprint: try r.scInt64())
                case Constructor.discardEncryption:
                    let flags = try r.scFlags(allowed: 1)
                    return .discardEncryption(deleteHistory: flags & 1 != 0, chatID: try r.scInt32())
                case Constructor.sendEncrypted:
                    let flags = try r.scFlags(allowed: 1)
                    let peer = try InputEncryptedChat.decode(from: &r), id = try r.scInt64()
                    return .sendEncrypted(silent: flags & 1 != 0, peer: peer, randomID: id, data: try r.scBytes())
                case Constructor.sendEncryptedFile:
                    let flags = try r.scFlags(allowed: 1)
                    let peer = try InputEncryptedChat.decode(from: &r), id = try r.scInt64(), data = try r.scBytes()
                    return .sendEncryptedFile(silent: flags & 1 != 0, peer: peer, randomID: id, data: data,
                                              file: try InputEncryptedFile.decode(from: &r))
                case Constructor.sendEncryptedService:
                    let peer = try InputEncryptedChat.decode(from: &r), id = try r.scInt64()
                    return .sendEncryptedService(peer: peer, randomID: id, data: try r.scBytes())
                case Constructor.getUsers:
                    let n = try r.scVectorCount(minElementSize: 4)
                    var ids: [InputUser] = []
                    ids.reserveCapacity(n)
                    for _ in 0..<n { ids.append(try InputUser.decode(from: &r)) }
                    return .getUsers(ids: ids)
                case Constructor.saveFilePart:
                    let id = try r.scInt64(), part = try r.scInt32()
                    return .saveFilePart(fileID: id, part: part, bytes: try r.scBytes())
                case Constructor.getFile:
                    // cdn_supported (bit 1) is accepted and ignored: this relay has no CDN.
                    let flags = try r.scFlags(allowed: 3)
                    let location = try r.scUInt32()
                    guard location == Constructor.inputEncryptedFileLocation else { throw .unknownConstructor(location) }
                    let id = try r.scInt64(), hash = try r.scInt64(), offset = try r.scInt64()
                    return .getFile(precise: flags & 1 != 0, fileID: id, accessHash: hash, offset: offset,
                                    limit: try r.scInt32())
                case Constructor.receivedQueue:
                    return .receivedQueue(maxQts: try r.scInt32())
                case let id:
                    throw .unknownConstructor(id)
                }
            }
        }
    }
}
