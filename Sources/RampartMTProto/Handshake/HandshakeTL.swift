// The TL constructors of the auth-key handshake (Docs/MTProto.md §3.1), as Swift values with strict encoders and
// decoders. Nonces are opaque byte strings (int128 = 16 bytes, int256 = 32 bytes); big numbers travel
// as TL `bytes` holding a minimal big-endian magnitude.

/// Constructor ids of the handshake (Docs/MTProto.md §3.1) and of `bind_auth_key_inner` (Docs/MTProto.md §5).
public enum HandshakeConstructor {
    /// `req_pq#60469778` (legacy)
    public static let reqPQ: UInt32 = 0x6046_9778
    /// `req_pq_multi#be7e8ef1`
    public static let reqPQMulti: UInt32 = 0xbe7e_8ef1
    /// `resPQ#05162463`
    public static let resPQ: UInt32 = 0x0516_2463
    /// `p_q_inner_data#83c95aec` (legacy)
    public static let pqInnerData: UInt32 = 0x83c9_5aec
    /// `p_q_inner_data_dc#a9f55f95`
    public static let pqInnerDataDC: UInt32 = 0xa9f5_5f95
    /// `p_q_inner_data_temp#3c6a84d4` (legacy temporary)
    public static let pqInnerDataTemp: UInt32 = 0x3c6a_84d4
    /// `p_q_inner_data_temp_dc#56fddf88`
    public static let pqInnerDataTempDC: UInt32 = 0x56fd_df88
    /// `req_DH_params#d712e4be`
    public static let reqDHParams: UInt32 = 0xd712_e4be
    /// `server_DH_params_fail#79cb045d`
    public static let serverDHParamsFail: UInt32 = 0x79cb_045d
    /// `server_DH_params_ok#d0e8075c`
    public static let serverDHParamsOK: UInt32 = 0xd0e8_075c
    /// `server_DH_inner_data#b5890dba`
    public static let serverDHInnerData: UInt32 = 0xb589_0dba
    /// `client_DH_inner_data#6643b654`
    public static let clientDHInnerData: UInt32 = 0x6643_b654
    /// `set_client_DH_params#f5045f1f`
    public static let setClientDHParams: UInt32 = 0xf504_5f1f
    /// `dh_gen_ok#3bcbf734`
    public static let dhGenOK: UInt32 = 0x3bcb_f734
    /// `dh_gen_retry#46dc1fb9`
    public static let dhGenRetry: UInt32 = 0x46dc_1fb9
    /// `dh_gen_fail#a69dae02`
    public static let dhGenFail: UInt32 = 0xa69d_ae02
    /// `bind_auth_key_inner#75a3f765`
    public static let bindAuthKeyInner: UInt32 = 0x75a3_f765
    /// `auth.bindTempAuthKey#cdd42a05`
    public static let bindTempAuthKey: UInt32 = 0xcdd4_2a05
}

/// Size limits on handshake fields (generous; real values are far smaller).
enum HandshakeLimits {
    /// pq, p, q: at most 64 bytes each (real ones are 8 and 4).
    static let smallNumberBytes = 64
    /// dh_prime, g_a, g_b: at most 256 bytes (2048 bits).
    static let dhNumberBytes = 256
    /// RSA-encrypted payloads and encrypted answers.
    static let encryptedBytes = 4096
    /// Fingerprints offered in resPQ.
    static let fingerprints = 64
}

/// `req_pq_multi#be7e8ef1 nonce:int128` (or the legacy `req_pq#60469778`).
public struct ReqPQ: Sendable, Equatable {
    /// The client's 16-byte nonce.
    public var nonce: [UInt8]
    /// Whether this is the legacy `req_pq` constructor.
    public var legacy: Bool

    public init(nonce: [UInt8], legacy: Bool = false) {
        self.nonce = nonce
        self.legacy = legacy
    }

    /// The TL serialization.
    public var serialized: [UInt8] {
        var w = TLWriter(capacity: 20)
        w.constructor(legacy ? HandshakeConstructor.reqPQ : HandshakeConstructor.reqPQMulti)
        w.raw(nonce)
        return w.bytes
    }

    /// Parses a whole message body (a client's handshake padding may follow, as TDLib sends it:
    /// ``TLReader/finishAllowingHandshakePadding()``).
    public init(parsing body: [UInt8]) throws(MTProtoError) {
        var r = TLReader(body)
        let id = try r.constructor()
        guard id == HandshakeConstructor.reqPQMulti || id == HandshakeConstructor.reqPQ else {
            throw .unexpectedConstructor(id)
        }
        nonce = try r.int128()
        legacy = id == HandshakeConstructor.reqPQ
        try r.finishAllowingHandshakePadding()
    }
}

/// `resPQ#05162463 nonce:int128 server_nonce:int128 pq:bytes server_public_key_fingerprints:Vector<long>`
public struct ResPQ: Sendable, Equatable {
    public var nonce: [UInt8]
    public var serverNonce: [UInt8]
    /// pq as big-endian bytes (8 in practice).
    public var pq: [UInt8]
    /// The fingerprints of the server's RSA keys (Docs/MTProto.md §3.6), as unsigned 64-bit values.
    public var fingerprints: [UInt64]

    public init(nonce: [UInt8], serverNonce: [UInt8], pq: [UInt8], fingerprints: [UInt64]) {
        self.nonce = nonce
        self.serverNonce = serverNonce
        self.pq = pq
        self.fingerprints = fingerprints
    }

    public var serialized: [UInt8] {
        var w = TLWriter(capacity: 64)
        w.constructor(HandshakeConstructor.resPQ)
        w.raw(nonce)
        w.raw(serverNonce)
        w.tlBytes(pq)
        w.vectorOfInt64(fingerprints.map { Int64(bitPattern: $0) })
        return w.bytes
    }

    public init(parsing body: [UInt8]) throws(MTProtoError) {
        var r = TLReader(body)
        try r.expect(HandshakeConstructor.resPQ)
        nonce = try r.int128()
        serverNonce = try r.int128()
        pq = try r.tlBytes(maxLength: HandshakeLimits.smallNumberBytes)
        fingerprints = try r.vectorOfInt64(max: HandshakeLimits.fingerprints).map { UInt64(bitPattern: $0) }
        try r.finish()
    }
}

/// `p_q_inner_data*`: the four variants (Docs/MTProto.md §3.1), told apart by ``Kind``.
public struct PQInnerData: Sendable, Equatable {
    /// Which constructor, with its extra fields.
    public enum Kind: Sendable, Equatable {
        /// `p_q_inner_data#83c95aec` (legacy, permanent key)
        case legacy
        /// `p_q_inner_data_dc#a9f55f95`
        case dc(Int32)
        /// `p_q_inner_data_temp#3c6a84d4` (legacy, temporary key)
        case legacyTemporary(expiresIn: Int32)
        /// `p_q_inner_data_temp_dc#56fddf88`
        case temporaryDC(Int32, expiresIn: Int32)

        /// The `expires_in` of a temporary key, nil for a permanent one.
        public var expiresIn: Int32? {
            switch self {
            case .legacy, .dc: return nil
            case .legacyTemporary(let e), .temporaryDC(_, let e): return e
            }
        }

        /// The DC id, when the constructor carries one.
        public var dc: Int32? {
            switch self {
            case .legacy, .legacyTemporary: return nil
            case .dc(let d), .temporaryDC(let d, _): return d
            }
        }
    }

    public var pq: [UInt8]
    public var p: [UInt8]
    public var q: [UInt8]
    public var nonce: [UInt8]
    public var serverNonce: [UInt8]
    /// The client's 32-byte new_nonce (secret).
    public var newNonce: [UInt8]
    public var kind: Kind

    public init(pq: [UInt8], p: [UInt8], q: [UInt8], nonce: [UInt8], serverNonce: [UInt8], newNonce: [UInt8], kind: Kind) {
        self.pq = pq
        self.p = p
        self.q = q
        self.nonce = nonce
        self.serverNonce = serverNonce
        self.newNonce = newNonce
        self.kind = kind
    }

    /// The serialized value holds new_nonce: wipe it when done. Its buffer is reserved at full
    /// size, so no reallocation leaves a stray copy behind.
    public var serialized: [UInt8] {
        var w = TLWriter(capacity: 160)
        switch kind {
        case .legacy: w.constructor(HandshakeConstructor.pqInnerData)
        case .dc: w.constructor(HandshakeConstructor.pqInnerDataDC)
        case .legacyTemporary: w.constructor(HandshakeConstructor.pqInnerDataTemp)
        case .temporaryDC: w.constructor(HandshakeConstructor.pqInnerDataTempDC)
        }
        w.tlBytes(pq)
        w.tlBytes(p)
        w.tlBytes(q)
        w.raw(nonce)
        w.raw(serverNonce)
        w.raw(newNonce)
        switch kind {
        case .legacy: break
        case .dc(let dc): w.int32(dc)
        case .legacyTemporary(let e): w.int32(e)
        case .temporaryDC(let dc, let e): w.int32(dc); w.int32(e)
        }
        return w.bytes
    }

    /// Parses the inner data from `r`, leaving any bytes after it (RSA padding) unread.
    public init(reading r: inout TLReader) throws(MTProtoError) {
        let id = try r.constructor()
        pq = try r.tlBytes(maxLength: HandshakeLimits.smallNumberBytes)
        p = try r.tlBytes(maxLength: HandshakeLimits.smallNumberBytes)
        q = try r.tlBytes(maxLength: HandshakeLimits.smallNumberBytes)
        nonce = try r.int128()
        serverNonce = try r.int128()
        newNonce = try r.int256()
        switch id {
        case HandshakeConstructor.pqInnerData: kind = .legacy
        case HandshakeConstructor.pqInnerDataDC: kind = .dc(try r.int32())
        case HandshakeConstructor.pqInnerDataTemp: kind = .legacyTemporary(expiresIn: try r.int32())
        case HandshakeConstructor.pqInnerDataTempDC:
            let dc = try r.int32()
            kind = .temporaryDC(dc, expiresIn: try r.int32())
        default: throw .unexpectedConstructor(id)
        }
    }
}

/// `req_DH_params#d712e4be nonce:int128 server_nonce:int128 p:bytes q:bytes public_key_fingerprint:long encrypted_data:bytes`
public struct ReqDHParams: Sendable, Equatable {
    public var nonce: [UInt8]
    public var serverNonce: [UInt8]
    public var p: [UInt8]
    public var q: [UInt8]
    public var fingerprint: UInt64
    /// RSA_PAD (or legacy RSA) output, 256 bytes.
    public var encryptedData: [UInt8]

    public init(nonce: [UInt8], serverNonce: [UInt8], p: [UInt8], q: [UInt8], fingerprint: UInt64, encryptedData: [UInt8]) {
        self.nonce = nonce
        self.serverNonce = serverNonce
        self.p = p
        self.q = q
        self.fingerprint = fingerprint
        self.encryptedData = encryptedData
    }

    public var serialized: [UInt8] {
        var w = TLWriter(capacity: 320)
        w.constructor(HandshakeConstructor.reqDHParams)
        w.raw(nonce)
        w.raw(serverNonce)
        w.tlBytes(p)
        w.tlBytes(q)
        w.uint64(fingerprint)
        w.tlBytes(encryptedData)
        return w.bytes
    }

    public init(parsing body: [UInt8]) throws(MTProtoError) {
        var r = TLReader(body)
        try r.expect(HandshakeConstructor.reqDHParams)
        nonce = try r.int128()
        serverNonce = try r.int128()
        p = try r.tlBytes(maxLength: HandshakeLimits.smallNumberBytes)
        q = try r.tlBytes(maxLength: HandshakeLimits.smallNumberBytes)
        fingerprint = try r.uint64()
        encryptedData = try r.tlBytes(maxLength: HandshakeLimits.encryptedBytes)
        try r.finishAllowingHandshakePadding()
    }
}

/// `server_DH_params_ok#d0e8075c` or `server_DH_params_fail#79cb045d`.
public enum ServerDHParams: Sendable, Equatable {
    /// `server_DH_params_ok nonce server_nonce encrypted_answer:bytes`
    case ok(nonce: [UInt8], serverNonce: [UInt8], encryptedAnswer: [UInt8])
    /// `server_DH_params_fail nonce server_nonce new_nonce_hash:int128`
    case fail(nonce: [UInt8], serverNonce: [UInt8], newNonceHash: [UInt8])

    public var serialized: [UInt8] {
        var w = TLWriter(capacity: 640)
        switch self {
        case let .ok(nonce, serverNonce, answer):
            w.constructor(HandshakeConstructor.serverDHParamsOK)
            w.raw(nonce)
            w.raw(serverNonce)
            w.tlBytes(answer)
        case let .fail(nonce, serverNonce, hash):
            w.constructor(HandshakeConstructor.serverDHParamsFail)
            w.raw(nonce)
            w.raw(serverNonce)
            w.raw(hash)
        }
        return w.bytes
    }

    public init(parsing body: [UInt8]) throws(MTProtoError) {
        var r = TLReader(body)
        let id = try r.constructor()
        switch id {
        case HandshakeConstructor.serverDHParamsOK:
            let n = try r.int128(), s = try r.int128()
            self = .ok(nonce: n, serverNonce: s, encryptedAnswer: try r.tlBytes(maxLength: HandshakeLimits.encryptedBytes))
        case HandshakeConstructor.serverDHParamsFail:
            let n = try r.int128(), s = try r.int128()
            self = .fail(nonce: n, serverNonce: s, newNonceHash: try r.int128())
        default: throw .unexpectedConstructor(id)
        }
        try r.finish()
    }
}

/// `server_DH_inner_data#b5890dba nonce server_nonce g:int dh_prime:bytes g_a:bytes server_time:int`
public struct ServerDHInnerData: Sendable, Equatable {
    public var nonce: [UInt8]
    public var serverNonce: [UInt8]
    public var g: Int32
    /// dh_prime, big-endian.
    public var dhPrime: [UInt8]
    /// g_a, big-endian.
    public var gA: [UInt8]
    /// The server's unix time.
    public var serverTime: Int32

    public init(nonce: [UInt8], serverNonce: [UInt8], g: Int32, dhPrime: [UInt8], gA: [UInt8], serverTime: Int32) {
        self.nonce = nonce
        self.serverNonce = serverNonce
        self.g = g
        self.dhPrime = dhPrime
        self.gA = gA
        self.serverTime = serverTime
    }

    public var serialized: [UInt8] {
        var w = TLWriter(capacity: 580)
        w.constructor(HandshakeConstructor.serverDHInnerData)
        w.raw(nonce)
        w.raw(serverNonce)
        w.int32(g)
        w.tlBytes(dhPrime)
        w.tlBytes(gA)
        w.int32(serverTime)
        return w.bytes
    }

    /// Parses from `r`, leaving padding after the value unread.
    public init(reading r: inout TLReader) throws(MTProtoError) {
        try r.expect(HandshakeConstructor.serverDHInnerData)
        nonce = try r.int128()
        serverNonce = try r.int128()
        g = try r.int32()
        dhPrime = try r.tlBytes(maxLength: HandshakeLimits.dhNumberBytes)
        gA = try r.tlBytes(maxLength: HandshakeLimits.dhNumberBytes)
        serverTime = try r.int32()
    }
}

/// `client_DH_inner_data#6643b654 nonce server_nonce retry_id:long g_b:bytes` (field order per the
/// wire, Docs/MTProto.md §9.2).
public struct ClientDHInnerData: Sendable, Equatable {
    public var nonce: [UInt8]
    public var serverNonce: [UInt8]
    /// 0 on the first attempt, then the previous attempt's auth_key_aux_hash.
    public var retryID: UInt64
    /// g_b, big-endian.
    public var gB: [UInt8]

    public init(nonce: [UInt8], serverNonce: [UInt8], retryID: UInt64, gB: [UInt8]) {
        self.nonce = nonce
        self.serverNonce = serverNonce
        self.retryID = retryID
        self.gB = gB
    }

    public var serialized: [UInt8] {
        var w = TLWriter(capacity: 304)
        w.constructor(HandshakeConstructor.clientDHInnerData)
        w.raw(nonce)
        w.raw(serverNonce)
        w.uint64(retryID)
        w.tlBytes(gB)
        return w.bytes
    }

    /// Parses from `r`, leaving padding after the value unread.
    public init(reading r: inout TLReader) throws(MTProtoError) {
        try r.expect(HandshakeConstructor.clientDHInnerData)
        nonce = try r.int128()
        serverNonce = try r.int128()
        retryID = try r.uint64()
        gB = try r.tlBytes(maxLength: HandshakeLimits.dhNumberBytes)
    }
}

/// `set_client_DH_params#f5045f1f nonce server_nonce encrypted_data:bytes`
public struct SetClientDHParams: Sendable, Equatable {
    public var nonce: [UInt8]
    public var serverNonce: [UInt8]
    public var encryptedData: [UInt8]

    public init(nonce: [UInt8], serverNonce: [UInt8], encryptedData: [UInt8]) {
        self.nonce = nonce
        self.serverNonce = serverNonce
        self.encryptedData = encryptedData
    }

    public var serialized: [UInt8] {
        var w = TLWriter(capacity: 380)
        w.constructor(HandshakeConstructor.setClientDHParams)
        w.raw(nonce)
        w.raw(serverNonce)
        w.tlBytes(encryptedData)
        return w.bytes
    }

    public init(parsing body: [UInt8]) throws(MTProtoError) {
        var r = TLReader(body)
        try r.expect(HandshakeConstructor.setClientDHParams)
        nonce = try r.int128()
        serverNonce = try r.int128()
        encryptedData = try r.tlBytes(maxLength: HandshakeLimits.encryptedBytes)
        try r.finishAllowingHandshakePadding()
    }
}

/// `dh_gen_ok#3bcbf734`, `dh_gen_retry#46dc1fb9` or `dh_gen_fail#a69dae02`, each with
/// `nonce server_nonce new_nonce_hashN:int128`.
public struct DHGenAnswer: Sendable, Equatable {
    /// Which answer; the raw value is N of new_nonce_hashN.
    public enum Kind: UInt8, Sendable {
        case ok = 1, retry = 2, fail = 3
    }
    public var kind: Kind
    public var nonce: [UInt8]
    public var serverNonce: [UInt8]
    public var newNonceHash: [UInt8]

    public init(kind: Kind, nonce: [UInt8], serverNonce: [UInt8], newNonceHash: [UInt8]) {
        self.kind = kind
        self.nonce = nonce
        self.serverNonce = serverNonce
        self.newNonceHash = newNonceHash
    }

    static func constructor(_ k: Kind) -> UInt32 {
        switch k {
        case .ok: return HandshakeConstructor.dhGenOK
        case .retry: return HandshakeConstructor.dhGenRetry
        case .fail: return HandshakeConstructor.dhGenFail
        }
    }

    public var serialized: [UInt8] {
        var w = TLWriter(capacity: 52)
        w.constructor(DHGenAnswer.constructor(kind))
        w.raw(nonce)
        w.raw(serverNonce)
        w.raw(newNonceHash)
        return w.bytes
    }

    public init(parsing body: [UInt8]) throws(MTProtoError) {
        var r = TLReader(body)
        let id = try r.constructor()
        switch id {
        case HandshakeConstructor.dhGenOK: kind = .ok
        case HandshakeConstructor.dhGenRetry: kind = .retry
        case HandshakeConstructor.dhGenFail: kind = .fail
        default: throw .unexpectedConstructor(id)
        }
        nonce = try r.int128()
        serverNonce = try r.int128()
        newNonceHash = try r.int128()
        try r.finish()
    }
}
