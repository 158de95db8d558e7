// Directory-side derivations as pure functions: address-book hashes, the revocation key, the
// directory challenge response and the chat-server login vouch (Docs/Threema.md §2.4).

import Rampart
import RampartCodecs

/// Hashes of contact identifiers for address-book synchronisation (whitepaper "Address Book
/// Synchronization"): HMAC-SHA256 under keys that every Threema client shares. They hide nothing
/// from someone who can enumerate phone numbers; the directory only ever sees the hashes.
public enum AddressBookHash {
    /// The HMAC key for e-mail addresses.
    public static let emailKey: [UInt8] = try! Hex.decode("30a5500fed9701fa6defdb610841900febb8e430881f7ad816826264ec09bad7")
    /// The HMAC key for phone numbers.
    public static let phoneKey: [UInt8] = try! Hex.decode("85adf8226953f3d96cfd5d09bf29555eb955fcd8aa5ec4f9fcd869e258370723")

    /// An e-mail address as the apps hash it: surrounding white space removed, lower-cased (ASCII
    /// letters only, as Java's `toLowerCase` does for the addresses the apps accept).
    public static func normalizedEmail(_ address: String) -> String {
        let trimmed = address.utf8.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        return String(decoding: trimmed.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// The hashes to look up for an e-mail address: one, or two for Gmail (the same mailbox under
    /// `@gmail.com` and `@googlemail.com`).
    public static func email(_ address: String) -> [[UInt8]] {
        let normalized = normalizedEmail(address)
        var forms = [normalized]
        for (a, b) in [("@gmail.com", "@googlemail.com"), ("@googlemail.com", "@gmail.com")]
        where normalized.hasSuffix(a) {
            forms.append(String(normalized.dropLast(a.count)) + b)
        }
        return forms.map { hmac(emailKey, Array($0.utf8)) }
    }

    /// The hash of a phone number given in E.164 form (`+41 79 123 45 67` and `41791234567` are the
    /// same number): every character other than a digit is dropped, as the apps hash digits only.
    ///
    /// - Throws: ``ThreemaError/invalidArgument(_:)`` when fewer than 3 or more than 15 digits remain
    ///   (E.164 allows at most 15).
    public static func phone(_ number: String) throws(ThreemaError) -> [UInt8] {
        let digits = number.utf8.filter { $0 >= 0x30 && $0 <= 0x39 }
        guard (3...15).contains(digits.count) else { throw .invalidArgument("an E.164 number has 3 to 15 digits") }
        return hmac(phoneKey, digits)
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || (c >= 0x09 && c <= 0x0D) }

    private static func hmac(_ key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)).bytes
    }
}

/// Derivations for the directory server and the chat-server login.
public enum DirectoryAuthentication {
    /// The revocation key the directory stores (whitepaper "ID Revocation"):
    /// `Base64(SHA-256(UTF-8 password)[0..<4])`.
    public static func revocationKey(password: String) -> String {
        let digest = SHA256.hash(data: Array(password.utf8)).bytes
        return Base64.encode(digest.prefix(4))
    }

    /// The response to a directory challenge: the server sends `token` and its temporary public key
    /// `tokenRespKeyPub`; the answer is
    /// `BLAKE2b-256(key = BLAKE2b-256(key = X25519HSalsa20(CK, tokenRespKeyPub), salt "dir", personal "3ma-csp"), input = token)`.
    ///
    /// - Throws: ``ThreemaError/invalidPublicKey`` for a small-order server key.
    public static func challengeResponse<T: Collection<UInt8>>(
        token: T, serverPublicKey: Curve25519.KeyAgreement.PublicKey, identity: ThreemaIdentity
    ) throws(ThreemaError) -> [UInt8] {
        let shared = try PairKeys.sharedKey(identity.privateKey, serverPublicKey)
        let key = ThreemaKDF.derive(key: shared.symmetricKey, salt: "dir", personal: "3ma-csp")
        return ThreemaKDF.mac(key: key, input: Array(token))
    }

    /// The vouch a client sends in its chat-server login (`csp.struct.yml`, `login` with `v2`):
    /// `VouchKey = BLAKE2b-256(key = SS1 ‖ SS2, salt "v2", personal "3ma-csp")` with
    /// `SS1 = X25519HSalsa20(CK, permanent server key)` and `SS2 = X25519HSalsa20(CK, TSK.public)`
    /// (the server's temporary key), then `vouch = BLAKE2b-256(key = VouchKey, input = SCK ‖ TCK.public)`
    /// where `SCK` is the server cookie and `TCK` the client's temporary key.
    ///
    /// - Throws: ``ThreemaError/invalidPublicKey`` for a small-order server key.
    public static func loginVouch<C: Collection<UInt8>>(
        identity: ThreemaIdentity,
        serverPermanentKey: Curve25519.KeyAgreement.PublicKey,
        serverTemporaryKey: Curve25519.KeyAgreement.PublicKey,
        serverCookie: C,
        clientTemporaryKey: Curve25519.KeyAgreement.PublicKey
    ) throws(ThreemaError) -> [UInt8] {
        let ss1 = try PairKeys.sharedKey(identity.privateKey, serverPermanentKey)
        let ss2 = try PairKeys.sharedKey(identity.privateKey, serverTemporaryKey)
        return loginVouch(ss1: ss1, ss2: ss2, serverCookie: Array(serverCookie), clientTemporaryKey: clientTemporaryKey)
    }
}
