// One side of a Diffie-Hellman exchange over a 2048-bit MTProto prime, shared by the auth-key handshake
// (both sides, Docs/MTProto.md §3.2) and secret chats (both roles and re-keying, Docs/MTProto.md §7.2):
// a secret exponent from the caller's generator, its public value inside the range of §4, and the
// shared value at fixed width with the constant-time exponentiation.

/// A secret exponent (256 random bytes read big-endian, owned by a wiped allocation) and its public
/// value `g^x mod p`, which lies in the range of Docs/MTProto.md §4.
struct DHKeyPair: Sendable {
    /// The exponent's 256 big-endian bytes (secret; wiped when released).
    let secret: SecretBytes
    /// `g^secret mod p`.
    let publicValue: BigUInt

    /// Draws 256-byte exponents from `rng` until `g^x mod p` passes ``DiffieHellman/checkPublicValue(_:prime:)``
    /// (at most 16 draws; nil when none does, which for a 2048-bit safe prime does not happen in
    /// practice). Each draw takes 256 bytes from `rng` in `fillRandom` order. When `mixing` is given
    /// (the server's `random` of `messages.dhConfig`, Docs/MTProto.md §4), its first 256 bytes are XORed
    /// into the local bytes: server randomness is only mixed in, never used alone.
    static func generate<R: RandomNumberGenerator>(g: Int32, prime: BigUInt, modulus: Modulus,
                                                   mixing: [UInt8]? = nil, using rng: inout R) -> DHKeyPair? {
        for _ in 0..<16 {
            let candidate = SecretBytes(count: 256) { out in
                fillRandom(out, using: &rng)
                if let mix = mixing {
                    for i in 0..<min(256, mix.count) { out[i] ^= mix[i] }
                }
            }
            // The exponent's bytes go to the power at full width (no BigUInt: it would skip leading
            // zero bytes, a branch on the secret).
            let gx = candidate.withUnsafeBytes {
                modulus.constantTimePower(BigUInt(UInt64(UInt32(bitPattern: g))), exponentBigEndian: $0)
            }
            // g^x goes on the wire: public from here on (for the constant-time checker).
            gx.withUnsafeLimbBytes { if let b = $0.baseAddress { declassify(b, $0.count) } }
            // Our own value outside the range of §4: draw another exponent (the loop bounds the tries).
            if (try? DiffieHellman.checkPublicValue(gx, prime: prime)) != nil {
                return DHKeyPair(secret: candidate, publicValue: gx)
            }
        }
        return nil
    }

    /// `peer^secret mod p` as exactly 256 big-endian bytes (left-padded), computed at fixed width with
    /// the constant-time exponentiation. The caller owns the bytes and wipes them. The peer's value is
    /// not checked here.
    func sharedKey(with peer: BigUInt, modulus: Modulus) throws(RampartError) -> [UInt8] {
        let r: Result<[UInt8], RampartError> = secret.withUnsafeBytes { e in
            Result { () throws(RampartError) in try modulus.constantTimePower(peer, exponentBigEndian: e, byteCount: 256) }
        }
        return try r.get()
    }
}
