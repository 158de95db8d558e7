// Threema Safe backups (whitepaper "Threema Safe"; Docs/Threema.md §4.2): the JSON document,
// compressed with gzip at level 0 as the apps write it, encrypted as `nonce ‖ secretbox`.

import Rampart
import RampartCodecs

/// A Threema Safe backup document (schema version 1): validated on reading, every member kept in
/// order (unknown members too, so a restore-and-backup round trip loses nothing).
///
/// Checked: `info.version` (1; a higher version is refused as unsupported), `user.privatekey` (Base64
/// of 32 bytes), `settings.syncContacts` (a bool); the types of every documented member that is
/// present (contacts, groups, distribution lists, links, verification levels 0...2, group IDs as 16
/// lowercase hex digits, Threema IDs, Base64 public keys of 32 bytes).
public struct SafeBackup: Sendable, Equatable {
    /// The highest schema version this library reads and the one it writes.
    public static let version = 1

    /// The whole document.
    public let json: JSONValue

    /// `info.device` (`"<app version>/<locale>"`), when present.
    public var device: String? { json["info"]?["device"]?.string }
    /// The identity's secret key from `user.privatekey`.
    public let privateKey: [UInt8]
    /// `user.nickname`, when present.
    public var nickname: String? { json["user"]?["nickname"]?.string }
    /// The contacts' IDs, in order.
    public var contactIDs: [ThreemaID] {
        (json["contacts"]?.array ?? []).compactMap { c in c["identity"]?.string.flatMap { try? ThreemaID($0) } }
    }

    /// Validates a parsed document.
    ///
    /// - Throws: ``ThreemaError/malformedSafeBackup(_:)`` (`schema` naming the member, or
    ///   `unsupportedVersion`).
    public init(json: JSONValue) throws(ThreemaError) {
        guard json.object != nil else { throw schema("top level is not an object") }
        guard let info = json["info"], info.object != nil else { throw schema("info") }
        guard let version = info["version"]?.number?.int64 else { throw schema("info.version") }
        guard version >= 1 else { throw schema("info.version") }
        guard version <= Int64(Self.version) else { throw .malformedSafeBackup(.unsupportedVersion(Int(clamping: version))) }
        try optional(info, "device", "info.device", String.self)
        guard let user = json["user"], user.object != nil else { throw schema("user") }
        guard let pk = user["privatekey"]?.string, let key = try? Base64.decode(pk), key.count == 32 else {
            throw schema("user.privatekey")
        }
        try optional(user, "nickname", "user.nickname", String.self)
        try optional(user, "profilePic", "user.profilePic", String.self)
        if let release = user["profilePicRelease"], !release.isNull {
            guard let list = release.array, list.allSatisfy({ $0.string != nil }) else { throw schema("user.profilePicRelease") }
        }
        if let links = user["links"] {
            guard let list = links.array else { throw schema("user.links") }
            for l in list {
                guard let type = l["type"]?.string, ["mobile", "email"].contains(type), l["value"]?.string != nil else {
                    throw schema("user.links[]")
                }
                try optional(l, "name", "user.links[].name", String.self)
            }
        }
        for (i, c) in try list(json, "contacts").enumerated() {
            let path = "contacts[\(i)]"
            guard c.object != nil, let id = c["identity"]?.string, (try? ThreemaID(id)) != nil else { throw schema(path + ".identity") }
            if let p = c["publickey"] {
                guard let s = p.string, let k = try? Base64.decode(s), k.count == 32 else { throw schema(path + ".publickey") }
            }
            try level(c, "verification", path)
            try level(c, "readReceipts", path)
            try level(c, "typingIndicators", path)
            for b in ["workVerified", "hidden", "private"] { try optional(c, b, path + "." + b, Bool.self) }
            for s in ["firstname", "lastname", "nickname"] { try optional(c, s, path + "." + s, String.self) }
            try timestamp(c, "createdAt", path, nullable: false)
            try timestamp(c, "lastUpdate", path, nullable: true)
        }
        for (i, g) in try list(json, "groups").enumerated() {
            let path = "groups[\(i)]"
            guard g.object != nil, let id = g["id"]?.string, id.utf8.count == 16,
                  id.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else { throw schema(path + ".id") }
            guard let creator = g["creator"]?.string, (try? ThreemaID(creator)) != nil else { throw schema(path + ".creator") }
            try members(g, path, required: false)
            try optional(g, "groupname", path + ".groupname", String.self)
            for b in ["deleted", "private"] { try optional(g, b, path + "." + b, Bool.self) }
            try timestamp(g, "createdAt", path, nullable: false)
            try timestamp(g, "lastUpdate", path, nullable: true)
        }
        for (i, d) in try list(json, "distributionlists").enumerated() {
            let path = "distributionlists[\(i)]"
            guard d.object != nil, d["name"]?.string != nil else { throw schema(path + ".name") }
            try members(d, path, required: true)
            try optional(d, "private", path + ".private", Bool.self)
            try timestamp(d, "createdAt", path, nullable: false)
            try timestamp(d, "lastUpdate", path, nullable: true)
        }
        guard let settings = json["settings"], settings.object != nil else { throw schema("settings") }
        guard settings["syncContacts"]?.bool != nil else { throw schema("settings.syncContacts") }
        for b in ["blockUnknown", "readReceipts", "sendTyping", "threemaCalls", "relayThreemaCalls", "disableScreenshots",
                  "incognitoKeyboard"] {
            try optional(settings, b, "settings." + b, Bool.self)
        }
        for l in ["blockedContacts", "syncExcludedIds", "recentEmojis"] {
            if let v = settings[l] {
                guard let a = v.array, a.allSatisfy({ $0.string != nil }) else { throw schema("settings." + l) }
            }
        }
        self.json = json
        privateKey = key
    }

    /// A minimal valid document for `identity` (what a fresh install would back up).
    public init(identity: ThreemaIdentity, nickname: String? = nil, device: String = "Rampart/en") {
        var user: [JSONMember] = [JSONMember("privatekey", .string(Base64.encode(identity.privateKey.rawRepresentation)))]
        if let nickname { user.append(JSONMember("nickname", .string(nickname))) }
        let doc = JSONValue.object([
            JSONMember("info", .object([JSONMember("version", .number(JSONNumber(Int64(Self.version)))),
                                        JSONMember("device", .string(device))])),
            JSONMember("user", .object(user)),
            JSONMember("contacts", .array([])),
            JSONMember("groups", .array([])),
            JSONMember("distributionlists", .array([])),
            JSONMember("settings", .object([JSONMember("syncContacts", .bool(false))])),
        ])
        try! self.init(json: doc)
    }

    /// Parses and validates JSON text.
    ///
    /// - Throws: ``ThreemaError/malformedSafeBackup(_:)`` (`json` for malformed JSON, or a schema
    ///   error).
    public init(jsonBytes: [UInt8]) throws(ThreemaError) {
        let value: JSONValue
        do { value = try JSONValue(parsing: jsonBytes, maxInputBytes: ThreemaSafe.maximumPlaintextBytes) } catch {
            throw .malformedSafeBackup(.json("\(error)"))
        }
        try self.init(json: value)
    }

    /// The identity the backup restores (the ID comes from the caller: the Safe backup does not
    /// store it; it is the scrypt salt).
    public func identity(id: ThreemaID) throws(ThreemaError) -> ThreemaIdentity {
        try ThreemaIdentity(id: id, privateKey: privateKey)
    }

    /// Compact JSON bytes.
    public var jsonBytes: [UInt8] { json.serialized() }
}

private func schema(_ path: String) -> ThreemaError { .malformedSafeBackup(.schema(path)) }

private func optional<T>(_ v: JSONValue, _ key: String, _ path: String, _ type: T.Type) throws(ThreemaError) {
    guard let m = v[key] else { return }
    let ok = type == String.self ? m.string != nil : type == Bool.self ? m.bool != nil : false
    guard ok else { throw schema(path) }
}

private func list(_ v: JSONValue, _ key: String) throws(ThreemaError) -> [JSONValue] {
    guard let m = v[key] else { return [] }
    guard let a = m.array else { throw schema(key) }
    return a
}

private func level(_ v: JSONValue, _ key: String, _ path: String) throws(ThreemaError) {
    guard let m = v[key] else { return }
    guard let n = m.number?.int64, (0...2).contains(n) else { throw schema(path + "." + key) }
}

private func timestamp(_ v: JSONValue, _ key: String, _ path: String, nullable: Bool) throws(ThreemaError) {
    guard let m = v[key] else { return }
    if nullable && m.isNull { return }
    guard let n = m.number?.int64, n >= 0 else { throw schema(path + "." + key) }
}

private func members(_ v: JSONValue, _ path: String, required: Bool) throws(ThreemaError) {
    guard let m = v["members"] else {
        if required { throw schema(path + ".members") }
        return
    }
    guard let a = m.array, a.allSatisfy({ $0.string.flatMap { try? ThreemaID($0) } != nil }) else {
        throw schema(path + ".members")
    }
}

/// Encryption of Threema Safe backups: `nonce (24) ‖ XSalsa20-Poly1305(backup key, nonce, gzip(JSON))`.
///
/// The whitepaper calls the secretbox plaintext the UTF-8 JSON; the apps gzip it first, at level 0
/// (stored blocks, so that compression cannot leak content through the size). Rampart writes what the
/// apps write and reads both: any valid gzip stream (every deflate level), or JSON that starts with
/// `{` (after optional white space). Decompression is capped at ``maximumPlaintextBytes``.
public enum ThreemaSafe {
    /// The most bytes a backup may decompress to (16 MiB; the whitepaper's example server accepts
    /// 512 KiB of encrypted backup).
    public static let maximumPlaintextBytes = 16 << 20

    /// Encrypts JSON bytes (gzip level 0, then secretbox) with a random nonce.
    public static func encrypt<R: RandomNumberGenerator>(json: [UInt8], key: SymmetricKey, using rng: inout R) throws(ThreemaError) -> [UInt8] {
        let nonce = randomBytes(24, using: &rng)
        var plain = Gzip.compressStored(json)
        defer { plain.secureWipe() }
        do { return nonce + (try SecretBox.seal(plain, using: key, nonce: nonce)) } catch { throw .invalidArgument("key") }
    }

    /// Decrypts a backup to its JSON bytes.
    ///
    /// - Throws: ``ThreemaError/malformedSafeBackup(_:)`` (`tooShort`, `compression`, `tooLarge`),
    ///   ``ThreemaError/authenticationFailed`` (wrong password or tampered backup; nothing released).
    public static func decrypt(_ blob: [UInt8], key: SymmetricKey) throws(ThreemaError) -> [UInt8] {
        guard blob.count >= 24 + 16 else { throw .malformedSafeBackup(.tooShort) }
        var plain: [UInt8]
        do { plain = try SecretBox.open(blob[24...], using: key, nonce: blob[0..<24]) } catch { throw .authenticationFailed }
        defer { plain.secureWipe() }
        // Public by design from here: the authenticated backup, which its owner decompresses and parses.
        plain.withUnsafeBytes { if let p = $0.baseAddress { declassify(p, $0.count) } }
        if plain.count >= 2, plain[0] == 0x1f, plain[1] == 0x8b {
            do { return try Gzip.decompress(plain, maxOutputBytes: maximumPlaintextBytes) } catch .outputLimitExceeded {
                throw .malformedSafeBackup(.tooLarge(limit: maximumPlaintextBytes))
            } catch { throw .malformedSafeBackup(.compression("\(error)")) }
        }
        guard let first = plain.first(where: { ![0x20, 0x09, 0x0a, 0x0d].contains($0) }), first == 0x7b else {
            throw .malformedSafeBackup(.compression("neither gzip nor JSON"))
        }
        guard plain.count <= maximumPlaintextBytes else { throw .malformedSafeBackup(.tooLarge(limit: maximumPlaintextBytes)) }
        return plain
    }

    /// Encrypts a backup document under the keys derived from the password.
    public static func backup<R: RandomNumberGenerator>(_ document: SafeBackup, keys: SafeKeys, using rng: inout R) throws(ThreemaError) -> [UInt8] {
        try encrypt(json: document.jsonBytes, key: keys.encryptionKey, using: &rng)
    }

    /// Decrypts and validates a backup.
    public static func restore(_ blob: [UInt8], keys: SafeKeys) throws(ThreemaError) -> SafeBackup {
        try SafeBackup(jsonBytes: decrypt(blob, key: keys.encryptionKey))
    }
}
