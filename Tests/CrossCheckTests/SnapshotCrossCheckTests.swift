// Sealed snapshots against libsodium: XChaCha20-Poly1305 (crypto_aead_xchacha20poly1305_ietf) on
// random sizes and nonces both ways, and whole sealed snapshots (under a key, and under a password
// through libsodium's Argon2id) opened by libsodium from their documented layout.

import Testing
import RampartReference
@_spi(Testing) @testable import Rampart
import RampartTestSupport

@Suite("Sealed snapshots against libsodium")
struct SnapshotCrossCheckTests {
    @Test(.enabled(if: sodiumPresentOrRequired, Comment(rawValue: noSodium)))
    func xchachaPoly1305BothWays() throws {
        guard requireSodium() != nil else { return }
        guard let x = SodiumXChaCha20Poly1305.shared else { Issue.record("libsodium lacks XChaCha20-Poly1305"); return }
        var g = SplitMix64(seed: 0x0C4A)
        for n in Array(0...130) + [255, 256, 1000, 4097] {
            let key = g.bytes(32), nonce = g.bytes(24), aad = g.bytes(n % 37), message = g.bytes(n)
            let ours = try SealedSnapshot.xchachaSeal(key: SymmetricKey(data: key), nonce: nonce, aad: aad, message)
            #expect(ours == (try x.seal(key: key, nonce: nonce, aad: aad, message)), "\(n) bytes")
            #expect(try x.open(key: key, nonce: nonce, aad: aad, ours) == message)
        }
    }

    @Test(.enabled(if: sodiumPresentOrRequired, Comment(rawValue: noSodium)))
    func sealedSnapshotsOpenWithLibsodium() throws {
        guard let sodium = requireSodium() else { return }
        guard let x = SodiumXChaCha20Poly1305.shared else { Issue.record("libsodium lacks XChaCha20-Poly1305"); return }
        var g = SplitMix64(seed: 0x5EA7)
        var w = SnapshotWriter(type: SnapshotType("XCHK"), version: 3)
        w.bytes(g.bytes(200))
        w.uint64(42)
        let snapshot = w.finish()
        let plain = snapshot.copyBytes()
        // Under a key: header (10 bytes after the magic's 4) and nonce are the associated data.
        let key = g.bytes(32)
        let sealed = try SealedSnapshot.seal(snapshot, key: SymmetricKey(data: key), using: &g)
        let opened = try x.open(key: key, nonce: Array(sealed[10..<34]), aad: Array(sealed[0..<34]), Array(sealed[34...]))
        #expect(opened == plain)
        // Under a password (one lane: libsodium's Argon2id has p = 1).
        let password = Array("hunter2 but longer".utf8)
        let cost = SealedSnapshot.PasswordCost(iterations: 2, memoryKiB: 256, parallelism: 1)
        let pw = try SealedSnapshot.seal(snapshot, password: password, cost: cost, using: &g)
        let salt = Array(pw[22..<38])
        guard let derived = sodium.chacha?.argon2id(password: password, salt: salt, iterations: 2, memoryKiB: 256, length: 32) else {
            Issue.record("libsodium Argon2id failed"); return
        }
        let openedPW = try x.open(key: derived, nonce: Array(pw[38..<62]), aad: Array(pw[0..<62]), Array(pw[62...]))
        #expect(openedPW == plain)
    }
}
