// Secret-chat key fingerprints and the key image people compare (Docs/MTProto.md §7.7): the SHA-1 and
// SHA-256 fingerprints the iOS client stores, the 36-byte key hash and its 12 × 12 picture (8 × 8 for
// the legacy 16-byte hash), and an SVG rendering of it.

extension SecretChat {
    /// SHA-1 of the key (20 bytes): the fingerprint the iOS client stores for the original key and
    /// the source of the first 16 bytes of the key hash (Docs/MTProto.md §7.7). Not the 8-byte
    /// `key_fingerprint` of the exchange (``Key/fingerprint``).
    public static func sha1Fingerprint(of key: Key) -> [UInt8] {
        key.withUnsafeBytes { Insecure.SHA1.hash(bufferPointer: $0).bytes }
    }

    /// SHA-256 of the key (32 bytes), the iOS client's second stored fingerprint (Docs/MTProto.md §7.7).
    public static func sha256Fingerprint(of key: Key) -> [UInt8] {
        key.withUnsafeBytes { SHA256.hash(bufferPointer: $0).bytes }
    }

    /// The 36-byte key hash the key image is drawn from (Docs/MTProto.md §7.7):
    /// `SHA1(originalKey)[0..<16] ‖ SHA256(layer46Key)[0..<20]`, where `layer46Key` is the key in use
    /// when the chat reached layer 46 (the original key for a chat created at layer 46 or later, the
    /// default). Re-keying does not change it.
    public static func keyHash(originalKey: Key, layer46Key: Key? = nil) -> [UInt8] {
        Array(sha1Fingerprint(of: originalKey).prefix(16)) + Array(sha256Fingerprint(of: layer46Key ?? originalKey).prefix(20))
    }

    /// The key image (Docs/MTProto.md §7.7): a square grid of colour indices, 12 × 12 for the 36-byte
    /// key hash or 8 × 8 for a legacy 16-byte one, 2 bits per cell taken least-significant first
    /// (`(hash[i / 4] >> (2 · (i % 4))) & 3` for cell `i`, rows top to bottom), coloured with
    /// ``palette``. Both participants see the same picture exactly when they hold the same key.
    public struct KeyImage: Sendable, Hashable {
        /// The four colours, as 0xRRGGBB: white, light blue, dark blue, blue.
        public static let palette: [UInt32] = [0xFFFFFF, 0xD5E6F3, 0x2D5775, 0x2F99C9]

        /// Cells per side: 12, or 8 for a legacy hash.
        public let side: Int
        /// `side · side` colour indices (0…3), row by row from the top left.
        public let cells: [UInt8]

        /// The image of a key hash (36 bytes, or 16 for the legacy form).
        /// - Throws: ``SecretChatError/invalidKey`` for any other length.
        public init(keyHash: [UInt8]) throws(SecretChatError) {
            switch keyHash.count {
            case 36: side = 12
            case 16: side = 8
            default: throw .invalidKey
            }
            cells = KeyImage.cells(keyHash, side)
        }

        /// The image of a chat's key (see ``SecretChat/keyHash(originalKey:layer46Key:)``).
        public init(originalKey: Key, layer46Key: Key? = nil) {
            side = 12
            cells = KeyImage.cells(SecretChat.keyHash(originalKey: originalKey, layer46Key: layer46Key), 12)
        }

        /// Cell i = bits 2i, 2i+1 of the hash, least-significant first within each byte.
        static func cells(_ hash: [UInt8], _ side: Int) -> [UInt8] {
            (0..<(side * side)).map { i in (hash[i >> 2] >> UInt8(2 * (i & 3))) & 3 }
        }

        /// The colour (0xRRGGBB) of the cell at `row`, `column` (both from 0).
        public func color(row: Int, column: Int) -> UInt32 { KeyImage.palette[Int(cells[row * side + column])] }

        /// The picture as a standalone SVG document, `cellSize` user units per cell (at least 1).
        public func svg(cellSize: Int = 16) -> String {
            let c = max(1, cellSize), size = side * c
            var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(size)" height="\(size)" viewBox="0 0 \(size) \(size)" shape-rendering="crispEdges">

            """
            for row in 0..<side {
                for column in 0..<side {
                    out += "<rect x=\"\(column * c)\" y=\"\(row * c)\" width=\"\(c)\" height=\"\(c)\" fill=\"#\(hex6(color(row: row, column: column)))\"/>\n"
                }
            }
            return out + "</svg>\n"
        }
    }
}

/// Six uppercase hex digits of a 0xRRGGBB colour.
private func hex6(_ v: UInt32) -> String {
    let digits = Array("0123456789ABCDEF")
    return String((0..<6).map { digits[Int((v >> UInt32(20 - 4 * $0)) & 0xF)] })
}
