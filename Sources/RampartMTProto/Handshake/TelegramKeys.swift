// Telegram's published RSA public keys (Docs/MTProto.md §3.6), public data, so clients and tests need no network.

/// The RSA keys Telegram's servers use for the auth-key handshake (PKCS#1 PEM, e = 65537).
public enum TelegramPublicKeys {
    /// The production key: fingerprint 0xD09D1D85DE64FD85 (wire bytes 85 FD 64 DE 85 1D 9D D0).
    public static let productionPEM = """
    -----BEGIN RSA PUBLIC KEY-----
    MIIBCgKCAQEA6LszBcC1LGzyr992NzE0ieY+BSaOW622Aa9Bd4ZHLl+TuFQ4lo4g
    5nKaMBwK/BIb9xUfg0Q29/2mgIR6Zr9krM7HjuIcCzFvDtr+L0GQjae9H0pRB2OO
    62cECs5HKhT5DZ98K33vmWiLowc621dQuwKWSQKjWf50XYFw42h21P2KXUGyp2y/
    +aEyZ+uVgLLQbRA1dEjSDZ2iGRy12Mk5gpYc397aYp438fsJoHIgJ2lgMv5h7WY9
    t6N/byY9Nw9p21Og3AoXSL2q/2IJ1WRUhebgAdGVMlV1fkuOQoEzR7EdpqtQD9Cs
    5+bfo3Nhmcyvk5ftB0WkJ9z6bNZ7yxrP8wIDAQAB
    -----END RSA PUBLIC KEY-----
    """

    /// The test-DC key: fingerprint 0xB25898DF208D2603.
    public static let testPEM = """
    -----BEGIN RSA PUBLIC KEY-----
    MIIBCgKCAQEAyMEdY1aR+sCR3ZSJrtztKTKqigvO/vBfqACJLZtS7QMgCGXJ6XIR
    yy7mx66W0/sOFa7/1mAZtEoIokDP3ShoqF4fVNb6XeqgQfaUHd8wJpDWHcR2OFwv
    plUUI1PLTktZ9uW2WE23b+ixNwJjJGwBDJPQEQFBE+vfmH0JP503wr5INS1poWg/
    j25sIWeYPHYeOrFp/eXaqhISP6G+q2IeTaWTXpwZj4LzXq5YOpk4bYEQ6mvRq7D1
    aHWfYmlEGepfaYR8Q0YqvvhYtMte3ITnuSJs171+GDqpdKcSwHnd6FudwGO4pcCO
    j4WcDuXc2CTHgH8gFTNhp/Y8/SpDOhvn9QIDAQAB
    -----END RSA PUBLIC KEY-----
    """

    /// Both keys, parsed.
    public static var all: [RSA.PublicKey] {
        // Constants of this file, not input: both parse (a test checks it), so nothing is dropped.
        [productionPEM, testPEM].compactMap { try? RSA.PublicKey(pemRepresentation: $0) }
    }
}
