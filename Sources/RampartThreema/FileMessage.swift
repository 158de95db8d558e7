// The `file` message body (0x17; group 0x46 after the group prefix): compact JSON naming the blobs
// and their key (Threema protocol `file` message; the Gateway SDK's FileMessage).

import Rampart
import RampartCodecs

/// A file message body. JSON members (single letters on the wire): `b` blob ID (32 hex), `t`
/// thumbnail blob ID, `k` blob key (64 hex), `m` media type, `n` file name, `s` size in bytes, `i`
/// deprecated rendering flag, `j` rendering type (0 file, 1 media, 2 sticker), `d` caption, `p`
/// thumbnail media type, `c` correlation ID, `x` metadata object. Required: `b`, `k`, `m`, `s`;
/// other members, known or not, are kept.
public struct FileMessage: Sendable, Equatable {
    /// The file blob's 16-byte ID.
    public var blobID: [UInt8]
    /// The thumbnail blob's ID, when there is a thumbnail.
    public var thumbnailBlobID: [UInt8]?
    /// The 32-byte key of both blobs (file nonce …01, thumbnail nonce …02).
    public var key: [UInt8]
    /// The media type.
    public var mediaType: String
    /// The file name.
    public var fileName: String?
    /// The file size in bytes.
    public var size: Int64
    /// The caption.
    public var caption: String?
    /// The rendering type (0 file, 1 media, 2 sticker), when given.
    public var renderingType: Int64?
    /// The thumbnail's media type.
    public var thumbnailMediaType: String?
    /// Members not modelled here (`x`, `c`, unknown ones), in order.
    public var otherMembers: [JSONMember]

    /// A file message.
    public init(blobID: [UInt8], thumbnailBlobID: [UInt8]? = nil, key: [UInt8], mediaType: String, fileName: String?,
                size: Int64, caption: String? = nil, renderingType: Int64? = 0, thumbnailMediaType: String? = nil) throws(ThreemaError) {
        guard blobID.count == 16, thumbnailBlobID.map({ $0.count == 16 }) ?? true, key.count == 32, size >= 0 else {
            throw .invalidArgument("blob IDs have 16 bytes, keys 32, sizes are not negative")
        }
        self.blobID = blobID
        self.thumbnailBlobID = thumbnailBlobID
        self.key = key
        self.mediaType = mediaType
        self.fileName = fileName
        self.size = size
        self.caption = caption
        self.renderingType = renderingType
        self.thumbnailMediaType = thumbnailMediaType
        otherMembers = []
    }

    /// Decodes a body.
    ///
    /// - Throws: ``ThreemaError/malformedBody(_:)``.
    public init(decoding body: [UInt8]) throws(ThreemaError) {
        let json: JSONValue
        do { json = try JSONValue(parsing: body, maxDepth: 16, maxInputBytes: 1 << 16) } catch {
            throw .malformedBody(.invalidValue("file JSON: \(error)"))
        }
        guard let members = json.object else { throw .malformedBody(.invalidValue("file JSON is not an object")) }
        func hex(_ k: String, _ n: Int) throws(ThreemaError) -> [UInt8]? {
            guard let v = json[k] else { return nil }
            guard let s = v.string, s.utf8.count == 2 * n, let b = try? Hex.decode(s) else {
                throw .malformedBody(.invalidValue("file.\(k)"))
            }
            return b
        }
        func text(_ k: String) throws(ThreemaError) -> String? {
            guard let v = json[k] else { return nil }
            guard let s = v.string else { throw .malformedBody(.invalidValue("file.\(k)")) }
            return s
        }
        guard let b = try hex("b", 16) else { throw .malformedBody(.invalidValue("file.b missing")) }
        guard let k = try hex("k", 32) else { throw .malformedBody(.invalidValue("file.k missing")) }
        guard let m = try text("m") else { throw .malformedBody(.invalidValue("file.m missing")) }
        guard let s = json["s"]?.number?.int64, s >= 0 else { throw .malformedBody(.invalidValue("file.s")) }
        blobID = b
        key = k
        mediaType = m
        size = s
        thumbnailBlobID = try hex("t", 16)
        fileName = try text("n")
        caption = try text("d")
        thumbnailMediaType = try text("p")
        if let j = json["j"] {
            guard let r = j.number?.int64 else { throw .malformedBody(.invalidValue("file.j")) }
            renderingType = r
        } else {
            renderingType = nil
        }
        let modelled: Set<String> = ["b", "t", "k", "m", "n", "s", "d", "j", "p", "i"]
        otherMembers = members.filter { !modelled.contains($0.key) }
    }

    /// The body bytes: compact JSON.
    public var encoded: [UInt8] {
        var m: [JSONMember] = [JSONMember("b", .string(Hex.encode(blobID)))]
        if let thumbnailBlobID { m.append(JSONMember("t", .string(Hex.encode(thumbnailBlobID)))) }
        m.append(JSONMember("k", .string(Hex.encode(key))))
        m.append(JSONMember("m", .string(mediaType)))
        if let fileName { m.append(JSONMember("n", .string(fileName))) }
        m.append(JSONMember("s", .number(JSONNumber(size))))
        // `i` (deprecated rendering flag) mirrors `j`: 1 for media, else 0, for old receivers.
        m.append(JSONMember("i", .number(JSONNumber(renderingType == 1 ? 1 : 0))))
        if let renderingType { m.append(JSONMember("j", .number(JSONNumber(renderingType)))) }
        if let caption { m.append(JSONMember("d", .string(caption))) }
        if let thumbnailMediaType { m.append(JSONMember("p", .string(thumbnailMediaType))) }
        m += otherMembers
        return JSONValue.object(m).serialized()
    }
}

/// The deprecated `image` message body (0x02): the image blob is box-encrypted (the sender's and
/// receiver's identity keys) with its own nonce: `blob ID (16) ‖ size (u32 LE) ‖ nonce (24)`.
public struct ImageMessage: Hashable, Sendable {
    public var blobID: [UInt8]
    public var size: UInt32
    public var nonce: [UInt8]

    /// - Throws: ``ThreemaError/malformedBody(_:)`` unless the body has exactly 44 bytes.
    public init(decoding body: [UInt8]) throws(ThreemaError) {
        guard body.count >= 44 else { throw .malformedBody(.tooShort) }
        guard body.count == 44 else { throw .malformedBody(.trailingBytes) }
        blobID = Array(body[0..<16])
        size = le32(body, 16)
        nonce = Array(body[20..<44])
    }
}
