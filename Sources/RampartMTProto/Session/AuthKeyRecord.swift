// What a client keeps of an auth key between runs (Docs/MTProto.md §2.7), plain or protected by a
// password as the MTProto description's "Storing an Authorization Key on a Client Device" suggests:
// SHA1 of the record in front, the whole AES-CBC encrypted under a key from the password. Rampart derives
// that key with PBKDF2-HMAC-SHA512 (the description uses the password itself as the key, which no
// demanding user should accept) and checks the SHA1 in constant time.

/// An auth key with what belongs to it: its DC, its expiry (a temporary key) and its server salts.
public struct AuthKeyRecord: Sendable, Equatable {
    /// The key.
    public var authKey: AuthKey
    /// The DC it was made with.
    public var dc: Int32
    /// Unix time at which a temporary key expires; nil for a permanent key.
    public var expiresAt: Int64?
    /// The salts known for it (current and future).
    public var salts: ServerSalts

    /// A record.
    public init(authKey: AuthKey, dc: Int32, expiresAt: Int64? = nil, salts: ServerSalts) {
        self.authKey = authKey
        self.dc = dc
        self.expiresAt = expiresAt
        self.salts = salts
    }

    static let plainMagic: [UInt8] = Array("RMAK".utf8)
    static let sealedMagic: [UInt8] = Array("RMPW".utf8)
    static let version: UInt8 = 1
    /// PBKDF2 iterations written by default (HMAC-SHA512).
    public static let defaultIterations = 200_000
    /// The most iterations a record may ask for when it is opened (a crafted file cannot make
    /// opening it take more than a few seconds).
    public static let maxIterations = 10_000_000

    /// The plain serialization (it holds the key: store it where only the user can read it, or use
    /// ``sealed(password:iterations:using:)``): `RMAK`, version 1, flags (bit 0: expiry), two zero
    /// bytes, dc (int32), expiry (int64, 0 without), the 256 key bytes, the current salt (int64) and
    /// its end of validity (int64, −1 unknown), the number of future salts (uint16, at most 64) and
    /// each as valid_since, valid_until (int32) and salt (int64). Little-endian throughout.
    public func serialized() -> [UInt8] {
        var w = TLWriter(capacity: 300 + 16 * salts.future.count)
        w.raw(Self.plainMagic)
        w.raw([Self.version, expiresAt == nil ? 0 : 1, 0, 0])
        w.int32(dc)
        w.int64(expiresAt ?? 0)
        authKey.withUnsafeBytes { w.raw(Array($0)) }
        w.int64(salts.current)
        w.int64(salts.currentValidUntil.map { Int64($0) } ?? -1)
        let future = salts.future.prefix(ServiceMessage.maxFutureSalts)
        w.raw([UInt8(future.count & 0xFF), UInt8(future.count >> 8)])
        for s in future { w.int32(s.validSince); w.int32(s.validUntil); w.int64(s.salt) }
        return w.bytes
    }

    /// Reads ``serialized()``.
    /// - Throws: ``MTProtoError/invalidKeyRecord(_:)``.
    public init(serialized bytes: some Collection<UInt8>) throws(MTProtoError) {
        var r = TLReader(Array(bytes))
        do throws(MTProtoError) {
            guard try r.raw(4) == Self.plainMagic else { throw .invalidKeyRecord("not an auth key record") }
            let head = try r.raw(4)
            guard head[0] == Self.version else { throw .invalidKeyRecord("version \(head[0])") }
            guard head[1] & ~1 == 0, head[2] == 0, head[3] == 0 else { throw .invalidKeyRecord("unknown flags") }
            let dc = try r.int32()
            let expiry = try r.int64()
            var keyBytes = try r.raw(AuthKey.byteCount)
            defer { keyBytes.secureWipe() }
            let key = try AuthKey(keyBytes)
            var salts = ServerSalts(current: try r.int64())
            let until = try r.int64()
            if until >= 0 { salts = ServerSalts(current: salts.current, validUntil: Double(until)) }
            let countBytes = try r.raw(2)
            let count = Int(countBytes[0]) | Int(countBytes[1]) << 8
            guard count <= ServiceMessage.maxFutureSalts else { throw .invalidKeyRecord("\(count) future salts") }
            var future: [FutureSalt] = []
            for _ in 0..<count { future.append(FutureSalt(validSince: try r.int32(), validUntil: try r.int32(), salt: try r.int64())) }
            salts.add(future)
            try r.finish()
            self.init(authKey: key, dc: dc, expiresAt: head[1] & 1 == 1 ? expiry : nil, salts: salts)
        } catch .invalidKeyRecord(let why) {
            throw .invalidKeyRecord(why)
        } catch {
            throw .invalidKeyRecord("\(error)")
        }
    }

    /// The record protected by `password`: `RMPW`, version 1, the PRF (3: HMAC-SHA512), the PBKDF2
    /// iterations (uint32), a random 16-byte salt and 16-byte IV, then AES-256-CBC (PKCS#7) of
    /// `SHA1(record) ‖ record` under the 32 bytes PBKDF2 derives from the password and salt.
    /// - Throws: ``MTProtoError/invalidKeyRecord(_:)`` for iterations outside 1…``maxIterations``.
    public func sealed<R: RandomNumberGenerator>(password: some Collection<UInt8>, iterations: Int = defaultIterations,
                                                 using rng: inout R) throws(MTProtoError) -> [UInt8] {
        guard (1...Self.maxIterations).contains(iterations) else { throw .invalidKeyRecord("iterations \(iterations)") }
        let salt = MTProtoRandom.bytes(16, using: &rng), iv = MTProtoRandom.bytes(16, using: &rng)
        var plain = serialized()
        defer { plain.secureWipe() }
        var message = Insecure.SHA1.hash(data: plain).bytes + plain
        defer { message.secureWipe() }
        let ciphertext: [UInt8]
        do {
            ciphertext = try AES.CBC.encrypt(message, using: Self.cipher(password, salt, iterations), iv: iv)
        } catch {
            throw .primitive(error)
        }
        var w = TLWriter(capacity: 42 + ciphertext.count)
        w.raw(Self.sealedMagic)
        w.raw([Self.version, 3])
        w.uint32(UInt32(iterations))
        w.raw(salt)
        w.raw(iv)
        w.raw(ciphertext)
        return w.bytes
    }

    /// AES-256 under the 32 bytes PBKDF2-HMAC-SHA512 derives from `password` and `salt`.
    static func cipher(_ password: some Collection<UInt8>, _ salt: some Collection<UInt8>,
                       _ iterations: Int) throws(RampartError) -> AES.Cipher {
        let key = try PBKDF2.deriveKey(password: Array(password), salt: salt, prf: .hmacSHA512, iterations: iterations,
                                       outputByteCount: 32)
        return try AES.Cipher(key: key)
    }

    /// Opens ``sealed(password:iterations:using:)``.
    /// - Throws: ``MTProtoError/wrongPassword`` when the password is wrong or the ciphertext was
    ///   altered (bad padding and a SHA1 mismatch are the same error); ``MTProtoError/invalidKeyRecord(_:)``
    ///   for a header this version does not write. No key material is returned or kept on failure.
    public init(opening sealed: some Collection<UInt8>, password: some Collection<UInt8>) throws(MTProtoError) {
        let b = Array(sealed)
        guard b.count >= 42 + 16, Array(b[0..<4]) == Self.sealedMagic else { throw .invalidKeyRecord("not a sealed auth key record") }
        guard b[4] == Self.version, b[5] == 3 else { throw .invalidKeyRecord("version \(b[4]), PRF \(b[5])") }
        let iterations = Int(UInt32(b[6]) | UInt32(b[7]) << 8 | UInt32(b[8]) << 16 | UInt32(b[9]) << 24)
        guard (1...Self.maxIterations).contains(iterations) else { throw .invalidKeyRecord("iterations \(iterations)") }
        guard (b.count - 42) % 16 == 0 else { throw .invalidKeyRecord("ciphertext not whole blocks") }
        let salt = b[10..<26], iv = b[26..<42], ciphertext = b[42...]
        var message: [UInt8]
        do {
            message = try AES.CBC.decrypt(ciphertext, using: Self.cipher(password, salt, iterations), iv: iv)
        } catch {
            // A wrong key shows up as bad padding.
            throw .wrongPassword
        }
        defer { message.secureWipe() }
        guard message.count > 20 else { throw .wrongPassword }
        let digest = Insecure.SHA1.hash(data: message[20...]).bytes
        guard ConstantTime.equals(digest, message[0..<20]) else { throw .wrongPassword }
        try self.init(serialized: message[20...])
    }
}
