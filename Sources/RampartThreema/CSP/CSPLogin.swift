// The chat-server login: the extensions a client announces (client info, CSP device ID, message
// payload version, device cookie) and the 128-byte `login-data`.

import Rampart

extension CSP {
    /// One login extension of a type this implementation does not interpret, kept as bytes.
    public struct OpaqueExtension: Sendable, Hashable {
        /// The extension type.
        public var type: UInt8
        /// The payload.
        public var payload: [UInt8]

        /// An extension.
        public init(type: UInt8, payload: [UInt8]) {
            self.type = type
            self.payload = payload
        }
    }

    /// The login extensions (`extension` entries `type u8 ‖ u16-le length ‖ payload` in the
    /// extensions box). Each type appears at most once.
    public struct LoginExtensions: Sendable, Hashable {
        /// Type `0x00`: `<app-version>;<platform>;<lang>/<country>;<rest>` (UTF-8).
        public var clientInfo: String?
        /// Type `0x01`: the CSP device ID (u64-le).
        public var cspDeviceID: UInt64?
        /// Type `0x02`: the message payload version (`0x00` legacy-message, `0x01`
        /// message-with-metadata-box; newer apps send the same byte as feature bits, `0x01` metadata
        /// messages, `0x02` echo requests from the server). Absent means `0x00` to the server.
        public var messagePayloadVersion: UInt8?
        /// Type `0x03`: the 16-byte device cookie.
        public var deviceCookie: [UInt8]?
        /// Other types, in the order received.
        public var other: [OpaqueExtension]

        /// Extensions; by default only the metadata-message payload version.
        public init(clientInfo: String? = nil, cspDeviceID: UInt64? = nil, messagePayloadVersion: UInt8? = 0x01,
                    deviceCookie: [UInt8]? = nil, other: [OpaqueExtension] = []) {
            self.clientInfo = clientInfo
            self.cspDeviceID = cspDeviceID
            self.messagePayloadVersion = messagePayloadVersion
            self.deviceCookie = deviceCookie
            self.other = other
        }

        /// The extension entries, in type order (known types first, then ``other``).
        ///
        /// - Throws: ``ThreemaError/invalidArgument(_:)`` for a device cookie other than 16 bytes,
        ///   a payload over 65 535 bytes, or an ``other`` entry with a known type.
        public func encoded() throws(ThreemaError) -> [UInt8] {
            var out: [UInt8] = []
            func put(_ type: UInt8, _ payload: [UInt8]) throws(ThreemaError) {
                guard payload.count <= 0xFFFF else { throw .invalidArgument("an extension payload has at most 65535 bytes") }
                out += [type, UInt8(truncatingIfNeeded: payload.count), UInt8(truncatingIfNeeded: payload.count >> 8)] + payload
            }
            if let clientInfo { try put(0x00, Array(clientInfo.utf8)) }
            if let cspDeviceID { try put(0x01, withUnsafeBytes(of: cspDeviceID.littleEndian) { Array($0) }) }
            if let messagePayloadVersion { try put(0x02, [messagePayloadVersion]) }
            if let deviceCookie {
                guard deviceCookie.count == 16 else { throw .invalidArgument("a device cookie has 16 bytes") }
                try put(0x03, deviceCookie)
            }
            for e in other {
                guard e.type > 0x03 else { throw .invalidArgument("extension type \(e.type) has its own field") }
                try put(e.type, e.payload)
            }
            return out
        }

        /// Parses decrypted extension entries.
        ///
        /// - Throws: ``CSPFault/malformedExtension(_:)`` (with the offending type) for a truncated
        ///   entry, a repeated type, a wrong length for a known type or client info that is not
        ///   UTF-8.
        public init(decoding bytes: [UInt8]) throws(ThreemaError) {
            self.init(messagePayloadVersion: nil)
            var seen = Set<UInt8>()
            var i = 0
            while i < bytes.count {
                let type = bytes[i]
                guard bytes.count - i >= 3 else { throw .csp(.malformedExtension(type)) }
                let n = Int(bytes[i + 1]) | Int(bytes[i + 2]) << 8
                guard bytes.count - i - 3 >= n, seen.insert(type).inserted else { throw .csp(.malformedExtension(type)) }
                let payload = Array(bytes[(i + 3)..<(i + 3 + n)])
                i += 3 + n
                switch type {
                case 0x00:
                    guard let s = String(validating: payload, as: UTF8.self) else { throw .csp(.malformedExtension(type)) }
                    clientInfo = s
                case 0x01:
                    guard n == 8 else { throw .csp(.malformedExtension(type)) }
                    cspDeviceID = le64(payload, 0)
                case 0x02:
                    guard n == 1 else { throw .csp(.malformedExtension(type)) }
                    messagePayloadVersion = payload[0]
                case 0x03:
                    guard n == 16 else { throw .csp(.malformedExtension(type)) }
                    deviceCookie = payload
                default:
                    other.append(OpaqueExtension(type: type, payload: payload))
                }
            }
        }
    }

    /// What the server learned from a successful login.
    public struct Login: Sendable, Hashable {
        /// The authenticated identity (its vouch verified against the looked-up key).
        public let identity: ThreemaID
        /// The identity public key the lookup returned.
        public let publicKey: Curve25519.KeyAgreement.PublicKey
        /// The client's extensions. A client without an extension indicator sent its client info in
        /// the login data's 32-byte field; it appears here as ``LoginExtensions/clientInfo``.
        public let extensions: LoginExtensions
        /// Whether the login data carried the extension indicator (`false`: the old client-info
        /// field).
        public let usedExtensionIndicator: Bool

        public static func == (a: Login, b: Login) -> Bool {
            a.identity == b.identity && a.publicKey == b.publicKey && a.extensions == b.extensions
                && a.usedExtensionIndicator == b.usedExtensionIndicator
        }

        public func hash(into h: inout Hasher) {
            h.combine(identity)
            h.combine(extensions)
        }
    }

    /// The plaintext `login-data` fields.
    struct LoginData {
        var identityBytes: [UInt8]
        /// 32 bytes: the extension indicator (magic ‖ u16-le length) or zero-padded client info.
        var clientInfoOrIndicator: [UInt8]
        var repeatedServerCookie: [UInt8]
        var reserved1: [UInt8]
        var vouch: [UInt8]
        var reserved2: [UInt8]

        init(identity: ThreemaID, extensionsLength: Int, serverCookie: [UInt8], vouch: [UInt8]) {
            identityBytes = identity.bytes
            clientInfoOrIndicator = CSP.extensionMagic + [UInt8(truncatingIfNeeded: extensionsLength),
                                                          UInt8(truncatingIfNeeded: extensionsLength >> 8)]
            repeatedServerCookie = serverCookie
            reserved1 = [UInt8](repeating: 0, count: 24)
            self.vouch = vouch
            reserved2 = [UInt8](repeating: 0, count: 16)
        }

        init(decoding b: [UInt8]) {
            precondition(b.count == CSP.loginDataLength)
            identityBytes = Array(b[0..<8])
            clientInfoOrIndicator = Array(b[8..<40])
            repeatedServerCookie = Array(b[40..<56])
            reserved1 = Array(b[56..<80])
            vouch = Array(b[80..<112])
            reserved2 = Array(b[112..<128])
        }

        var encoded: [UInt8] {
            identityBytes + clientInfoOrIndicator + repeatedServerCookie + reserved1 + vouch + reserved2
        }

        /// The encrypted extensions length when the indicator is present, else nil.
        var extensionsLength: Int? {
            guard clientInfoOrIndicator.prefix(30).elementsEqual(CSP.extensionMagic) else { return nil }
            return Int(clientInfoOrIndicator[30]) | Int(clientInfoOrIndicator[31]) << 8
        }
    }
}

extension DirectoryAuthentication {
    /// The vouch from the two shared keys (either side computes them with its own secrets):
    /// `BLAKE2b-256(key = BLAKE2b-256(key = SS1 ‖ SS2, salt "v2", personal "3ma-csp"), input = SCK ‖ TCK.public)`.
    static func loginVouch(ss1: Box.SharedKey, ss2: Box.SharedKey, serverCookie: [UInt8],
                           clientTemporaryKey: Curve25519.KeyAgreement.PublicKey) -> [UInt8] {
        var both = ss1.symmetricKey.withUnsafeBytes { Array($0) } + ss2.symmetricKey.withUnsafeBytes { Array($0) }
        defer { both.secureWipe() }
        let vouchKey = ThreemaKDF.derive(key: SymmetricKey(data: both), salt: "v2", personal: "3ma-csp")
        return ThreemaKDF.mac(key: vouchKey, input: serverCookie + clientTemporaryKey.rawRepresentation)
    }
}
