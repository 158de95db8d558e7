// Secrets must not outlive their owners: each test makes a fresh secret (from the shared seeded
// generator, a seed of its own, so that a failure reproduces), checks that a scan of the
// process's writable memory finds it while its owner is alive (the scanner works), releases every
// owner and checks that the scan finds it nowhere, in freed heap or on a stack.
//
// The scanner reads /proc/self/maps and every private writable mapping through /proc/self/mem
// (a mapping that disappears while it is read gives an error instead of a crash). The test keeps the
// secret only XOR-masked, so its own copy never matches.

#if os(Linux)
import Glibc
import Testing
@testable import RampartMTProto
@testable @_spi(Testing) import Rampart
import RampartTestSupport

/// A secret kept masked (XOR 0xA5), with the two byte orders a copy may have: as written and
/// byte-reversed (a big-endian number as little-endian limbs, or the reverse).
struct MaskedNeedle {
    static let mask: UInt8 = 0xA5
    let masked: [UInt8]

    init(_ bytes: UnsafeRawBufferPointer) { masked = bytes.map { $0 ^ MaskedNeedle.mask } }

    var reversed: MaskedNeedle { MaskedNeedle(masked: masked.reversed()) }
    private init(masked: [UInt8]) { self.masked = masked }
}

enum MemoryScan {
    /// The private writable mappings of this process (start, length).
    static func writableRegions() -> [(start: UInt, length: Int)] {
        guard let f = fopen("/proc/self/maps", "r") else { return [] }
        defer { fclose(f) }
        var out: [(UInt, Int)] = []
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), f) != nil {
            let text = String(cString: line)
            let fields = text.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2 else { continue }
            let perms = fields[1]
            guard perms.hasPrefix("rw"), perms.hasSuffix("p") else { continue }
            if text.contains("[vvar]") || text.contains("[vsyscall]") || text.contains("[vdso]") { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let lo = UInt(range[0], radix: 16), let hi = UInt(range[1], radix: 16), hi > lo else { continue }
            // Sanitizer shadow and metadata (terabytes, and regions of several GiB, of reserved
            // address space under ASan and TSan) are not program data; nothing these tests
            // allocate at once comes near 2 GiB.
            guard hi - lo < 1 << 31 else { continue }
            out.append((lo, Int(hi - lo)))
        }
        return out
    }

    /// How many times `needle` (or its byte reversal) occurs in this process's writable memory.
    /// With `explain`, under AddressSanitizer, each occurrence's heap chunk is described (where it
    /// was allocated and freed): ASan's quarantine keeps freed memory unreused, which makes this test
    /// stricter there, and the description names the code that left the copy.
    static func count(_ needle: MaskedNeedle, explain: Bool = false) -> Int {
        let forward = needle.masked, backward = needle.reversed.masked
        let n = forward.count
        let chunk = 1 << 20
        // The read buffer is its own mapping, skipped by the scan: reading it into itself would
        // multiply whatever it holds.
        let size = chunk + n
        guard let raw = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), raw != MAP_FAILED else {
            return -1
        }
        let buffer = UnsafeMutableRawBufferPointer(start: raw, count: size)
        let own = UInt(bitPattern: raw)
        defer {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            munmap(raw, size)
        }
        var hits = 0
        let mem = open("/proc/self/mem", O_RDONLY)
        guard mem >= 0 else { return -1 }
        defer { close(mem) }
        // Every writable range except the buffer itself (the kernel may merge its mapping with a
        // neighbour, so the range is cut out rather than the whole mapping skipped).
        var ranges: [(start: UInt, length: Int)] = []
        for (start, length) in writableRegions() {
            let end = start + UInt(length), ownEnd = own + UInt(size)
            if ownEnd <= start || own >= end {
                ranges.append((start, length))
            } else {
                if own > start { ranges.append((start, Int(own - start))) }
                if ownEnd < end { ranges.append((ownEnd, Int(end - ownEnd))) }
            }
        }
        for (start, length) in ranges {
            var offset = 0
            while offset < length {
                // Overlap consecutive chunks by n − 1 bytes so no occurrence straddles unseen.
                let want = min(chunk + n - 1, length - offset)
                let got = pread(mem, buffer.baseAddress, want, off_t(Int64(bitPattern: UInt64(start) + UInt64(offset))))
                if got >= n {
                    let a = occurrences(in: UnsafeRawBufferPointer(start: buffer.baseAddress, count: got), forward)
                    let b = occurrences(in: UnsafeRawBufferPointer(start: buffer.baseAddress, count: got), backward)
                    if explain, a + b > 0, let f = describe {
                        for i in hitOffsets { f(UnsafeMutableRawPointer(bitPattern: start + UInt(offset) + UInt(i))) }
                    }
                    hitOffsets = []
                    hits += a + b
                }
                offset += chunk
            }
        }
        return hits
    }

    /// Offsets of the occurrences in the last chunk scanned (the suite is serialized).
    nonisolated(unsafe) static var hitOffsets: [Int] = []
    /// AddressSanitizer's `__asan_describe_address`, when this process runs under it.
    nonisolated(unsafe) static let describe: (@convention(c) (UnsafeMutableRawPointer?) -> Void)? = {
        guard let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_describe_address") else { return nil }
        return unsafeBitCast(sym, to: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self)
    }()

    /// Candidates are found with `memchr` on the first byte (libc's vectorized search: a byte-by-byte
    /// Swift loop made these scans take minutes in debug builds and under AddressSanitizer), then
    /// compared whole.
    private static func occurrences(in hay: UnsafeRawBufferPointer, _ masked: [UInt8]) -> Int {
        let n = masked.count
        guard n > 0, hay.count >= n, let base = hay.baseAddress else { return 0 }
        let first = Int32(masked[0] ^ MaskedNeedle.mask)
        var hits = 0
        var i = 0
        let last = hay.count - n  // the last offset where a whole occurrence fits
        while i <= last {
            guard let p = memchr(base + i, first, last - i + 1) else { break }
            i = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(p))
            var k = 1
            while k < n && hay[i + k] ^ MaskedNeedle.mask == masked[k] { k += 1 }
            if k == n { hits += 1; hitOffsets.append(i) }
            i += 1
        }
        return hits
    }
}

@Suite(.serialized) struct SecretLifetimeTests {
    /// Runs `make` (which returns the masked secret and its owner), checks the secret is found while
    /// `owner` lives, drops it, and returns the count found afterwards.
    func foundAfterRelease<Owner>(_ make: () throws -> (MaskedNeedle, Owner)) rethrows -> (during: Int, after: Int) {
        var pair: (MaskedNeedle, Owner)? = try make()
        let needle = pair!.0
        let during = MemoryScan.count(needle)
        pair = nil
        _ = pair
        return (during, MemoryScan.count(needle, explain: true))
    }

    @Test func rsaPrimesAreGoneWhenTheKeyIsReleased() throws {
        var rng = SplitMix64(seed: 0x11FE_0001)
        for which in [1, 2] {   // region 1 is p, region 2 is q (see withSecretRegions)
            let (during, after) = try foundAfterRelease { () throws -> (MaskedNeedle, RSA.PrivateKey) in
                let key = try RSA.PrivateKey.generate(bits: 1024, using: &rng)
                var regions: [MaskedNeedle] = []
                key.withSecretRegions { regions.append(MaskedNeedle($0)) }
                // Use it, so that every code path that touches p and q has run.
                let c = try key.publicKey.rawPublic([1, 2, 3])
                _ = try key.rawPrivate(c)
                var der = key.pkcs1DERRepresentation
                der.secureWipe()
                return (regions[which], key)
            }
            #expect(during >= 1, "the scanner must find the prime while the key lives")
            #expect(after == 0, "a copy of the prime survived the key")
        }
    }

    @Test func rsaPrimesAreGoneAfterAPEMRoundTrip() throws {
        let (during, after) = try foundAfterRelease { () throws -> (MaskedNeedle, RSA.PrivateKey) in
            var rng = SplitMix64(seed: 0x11FE_0002)
            let generated = try RSA.PrivateKey.generate(bits: 1024, using: &rng)
            let pem = generated.pemRepresentation   // text: base64, never matches the binary needle
            let key = try RSA.PrivateKey(pemRepresentation: pem)
            var regions: [MaskedNeedle] = []
            key.withSecretRegions { regions.append(MaskedNeedle($0)) }
            _ = generated
            return (regions[1], key)
        }
        #expect(during >= 1)
        #expect(after == 0, "a copy of p survived the parsed key")
    }

    @Test func authKeyIsGoneAfterTheHandshakeAndSessions() throws {
        let (during, after) = try foundAfterRelease { () throws -> (MaskedNeedle, [AuthKey]) in
            let priv = try RSA.PrivateKey(pemRepresentation: handshakeTestKeyPEM)
            var server = try ServerHandshake(configuration: .init(privateKeys: [priv], dc: 2))
            var client = ClientHandshake(configuration: .init(publicKeys: [priv.publicKey], dc: 2))
            var crng = SplitMix64(seed: 0x11FE_0003), srng = SplitMix64(seed: 0x11FE_0004)
            var toServer = client.start(using: &crng)
            for _ in 0..<6 {
                switch try server.receive(toServer, now: 1_800_000_000, using: &srng) {
                case .send(let b):
                    guard case .send(let next) = try client.receive(b, now: 1_800_000_000, using: &crng) else {
                        throw MTProtoError.handshakeFailed("client finished early")
                    }
                    toServer = next
                case .completed(let sres, let b):
                    guard case .completed(let cres) = try client.receive(b, now: 1_800_000_000, using: &crng) else {
                        throw MTProtoError.handshakeFailed("client did not finish")
                    }
                    // Use the key: a message each way.
                    var cs = Session(client: cres.authKey, sessionId: 7, salt: cres.serverSalt, timeOffset: 0)
                    var ss = Session(server: sres.authKey, salt: sres.serverSalt)
                    let out = try cs.encrypt([0x78, 0x97, 0x46, 0x60, 1, 2, 3, 4, 5, 6, 7, 8], contentRelated: true,
                                             now: 1_800_000_000, using: &crng)
                    _ = try ss.decrypt(out.packet, now: 1_800_000_000)
                    // 64 bytes from the middle of the key: any copy of the key contains them.
                    let needle = cres.authKey.withUnsafeBytes { MaskedNeedle(UnsafeRawBufferPointer(rebasing: $0[96..<160])) }
                    return (needle, [cres.authKey, sres.authKey])
                case .failed:
                    throw MTProtoError.handshakeFailed("dh_gen_fail")
                }
            }
            throw MTProtoError.handshakeFailed("too many steps")
        }
        #expect(during >= 1, "the scanner must find the auth key while it lives")
        #expect(after == 0, "a copy of the auth key survived the handshake, the sessions and the key")
    }

    @Test(arguments: [Backend.portable, Backend.hardware])
    func aesKeyIsGoneWhenTheCipherIsReleased(_ backend: Backend) throws {
        let (during, after) = try foundAfterRelease { () throws -> (MaskedNeedle, (SymmetricKey, AES.Cipher)) in
            let key = SymmetricKey(size: .bits256)
            let cipher = try AES.Cipher(key: key, backend: backend)
            var block = [UInt8](repeating: 7, count: 64)
            try block.withUnsafeMutableBytes { try cipher.encrypt(blocks: $0) }
            _ = try AES.IGE.encrypt(block, using: cipher, iv: [UInt8](repeating: 1, count: 32))
            _ = try AES.GCM.seal(block, using: key, nonce: AES.GCM.Nonce())
            return (key.withUnsafeBytes { MaskedNeedle($0) }, (key, cipher))
        }
        #expect(during >= 1)
        #expect(after == 0, "a copy of the AES key survived the key and the cipher")
    }

    @Test func secretChatKeyAndExponentsAreGoneAfterTheExchangeAndMessages() throws {
        // The chat key (64 bytes from its middle) and the creator's exponent a (64 bytes from its middle).
        var needles: [MaskedNeedle] = []
        let (during, after) = try foundAfterRelease { () throws -> (MaskedNeedle, [SecretChat.Key]) in
            var rng = SplitMix64(seed: 0x11FE_0005)
            let config = SecretChat.DHConfig.telegram()
            let request = try SecretChat.KeyRequest(config: config, serverRandom: [1, 2, 3], using: &rng)
            let accept = try SecretChat.KeyAcceptance(gA: request.gA, config: config, using: &rng)
            let key = try request.complete(gB: accept.gB, keyFingerprint: accept.keyFingerprint)
            needles.append(request.pair.secret.withUnsafeBytes { MaskedNeedle(UnsafeRawBufferPointer(rebasing: $0[96..<160])) })
            // Use the key: v2 both ways and v1.
            let tl = [UInt8](repeating: 0x42, count: 64)
            let a = try SecretChat.Envelope.encrypt(tl, key: key, sender: .creator, using: &rng)
            _ = try SecretChat.Envelope.decrypt(a, keys: [accept.key], sender: .creator, allowV1: false)
            let b = try SecretChat.Envelope.encryptV1(tl, key: accept.key, using: &rng)
            _ = try SecretChat.Envelope.decrypt(b, keys: [key], sender: .acceptor, allowV1: true)
            let needle = key.withUnsafeBytes { MaskedNeedle(UnsafeRawBufferPointer(rebasing: $0[96..<160])) }
            return (needle, [key, accept.key])
        }
        #expect(during >= 1, "the scanner must find the chat key while it lives")
        #expect(after == 0, "a copy of the chat key survived the exchange, the messages and the key")
        #expect(MemoryScan.count(needles[0]) == 0, "a copy of the secret exponent survived the exchange")
    }

    /// A secret chat's key and the creator's pending re-key exponent go through a snapshot of the
    /// session, sealed, opened and restored: once the sessions and the snapshots are released, neither
    /// is left in memory.
    @Test func secretChatSnapshotSecretsAreGoneAfterRestore() throws {
        var exponent: MaskedNeedle?
        let (during, after) = try foundAfterRelease { () throws -> (MaskedNeedle, [AnyObject]) in
            var net = try SCNet(seed: 0x11FE_0008)
            try net.pump()
            try net.sendA("hello")
            try net.pump()
            _ = try net.a.requestRekey(using: &net.rng)   // a pending exponent in the snapshot
            guard case .requested(_, let request)? = net.a.rekey else { throw SecretChatError.wrongState("no re-key") }
            exponent = request.pair.secret.withUnsafeBytes { MaskedNeedle(UnsafeRawBufferPointer(rebasing: $0[96..<160])) }
            let wrap = SymmetricKey(size: .bits256)
            let sealed = try SealedSnapshot.seal(net.a.snapshot(), key: wrap, using: &net.rng)
            let opened = try SealedSnapshot.open(sealed, key: wrap, type: SecretChat.Session.snapshotType)
            let restored = try SecretChat.Session(restoring: opened, clock: net.clock.clock)
            #expect(restored.fingerprint == net.a.fingerprint)
            let key = try #require(net.a.keychain.entries.first?.key)
            let needle = key.withUnsafeBytes { MaskedNeedle(UnsafeRawBufferPointer(rebasing: $0[96..<160])) }
            return (needle, [opened, SessionBox(restored), SessionBox(net.a), SessionBox(net.b)])
        }
        #expect(during >= 1)
        #expect(after == 0, "a copy of the chat key survived the snapshot, its seal and the restore")
        #expect(MemoryScan.count(try #require(exponent)) == 0, "a copy of the re-key exponent survived")
    }

    /// A connection's permanent key through its snapshot (`MCON`), sealed, opened, restored and
    /// snapshotted again: once the connections and the snapshots are released, no copy is left.
    @Test func connectionSnapshotSecretsAreGoneAfterRestore() throws {
        let (during, after) = try foundAfterRelease { () throws -> (MaskedNeedle, [AnyObject]) in
            var rng = SplitMix64(seed: 0x11FE_0009)
            var raw = randomBytes(count: AuthKey.byteCount, using: &rng)
            let key = try AuthKey(raw)
            raw.secureWipe()
            let needle = key.withUnsafeBytes { MaskedNeedle(UnsafeRawBufferPointer(rebasing: $0[96..<160])) }
            let config = ClientHandshake.Configuration(publicKeys: [], dc: 2, mode: .temporary(expiresIn: 900))
            var c = try ClientConnection(transport: .plain(.intermediate), handshake: config, permanentKey: key, using: &rng)
            _ = try c.request([0x78, 0x97, 0x46, 0x60, 1, 2, 3, 4], now: 1_800_000_000, using: &rng)
            let wrap = SymmetricKey(size: .bits256)
            let sealed = try SealedSnapshot.seal(c.snapshot(), key: wrap, using: &rng)
            let opened = try SealedSnapshot.open(sealed, key: wrap, type: ClientConnection.snapshotType)
            let restored = try ClientConnection(restoring: opened, transport: .plain(.intermediate), handshake: config, using: &rng)
            let again = restored.snapshot()
            #expect(restored.permanentKey == key && again == opened)
            return (needle, [opened, again, ConnectionBox(restored), ConnectionBox(c)])
        }
        #expect(during >= 1)
        #expect(after == 0, "a copy of the permanent key survived the connection snapshot, its seal and the restore")
    }

    /// A key written into a snapshot (after 300 bytes, so the writer grows its buffer), the snapshot
    /// sealed under a key and under a password, opened again and the key read back into secret
    /// storage: once everything is released, no copy of the key is left (the writer, the sealing and
    /// the reader wipe what they held).
    @Test func snapshotSecretsAreGoneAfterSealAndRestore() throws {
        let (during, after) = try foundAfterRelease { () throws -> (MaskedNeedle, [AnyObject]) in
            var rng = SplitMix64(seed: 0x11FE_0007)
            let secret = SymmetricKey(size: .bits256)
            let type = SnapshotType("SCAN")
            var w = SnapshotWriter(type: type, version: 1)
            w.bytes([UInt8](repeating: 0x33, count: 300))
            secret.withUnsafeBytes { w.fixed($0) }
            let snapshot = w.finish()
            let wrap = SymmetricKey(size: .bits256)
            let sealed = try SealedSnapshot.seal(snapshot, key: wrap, using: &rng)
            let opened = try SealedSnapshot.open(sealed, key: wrap, type: type)
            let cost = SealedSnapshot.PasswordCost(iterations: 1, memoryKiB: 64, parallelism: 1)
            let pw = try SealedSnapshot.seal(opened, password: Array("pw".utf8), cost: cost, using: &rng)
            let reopened = try SealedSnapshot.open(pw, password: Array("pw".utf8), type: type)
            var r = try SnapshotReader(reopened, type: type, versions: 1...1)
            _ = try r.bytes("padding", max: 300)
            let restored = try r.secret(32)
            try r.finish()
            // Compared in place: an array copy here would be a copy of the secret the scan finds.
            #expect(restored.withUnsafeBytes { b in secret.withUnsafeBytes { ConstantTime.equals(b, $0) } })
            return (secret.withUnsafeBytes { MaskedNeedle($0) }, [SymmetricKeyBox(secret), snapshot, opened, reopened, restored])
        }
        #expect(during >= 1)
        #expect(after == 0, "a copy of a snapshot's secret survived the snapshot, its seals and the restore")
    }

    @Test func fileKeyIsGoneWhenReleased() throws {
        let (during, after) = try foundAfterRelease { () throws -> (MaskedNeedle, SecretChat.FileKey) in
            var rng = SplitMix64(seed: 0x11FE_0006)
            let fk = SecretChat.FileKey(using: &rng)
            let file = [UInt8](repeating: 9, count: 1000)
            _ = try fk.decrypt(fk.encrypt(file), size: 1000)
            _ = fk.fingerprint
            return (fk.storage.withUnsafeBytes { MaskedNeedle($0) }, fk)
        }
        #expect(during >= 1)
        #expect(after == 0, "a copy of the file key and IV survived the key")
    }
}
/// A session as an object, for the owner lists above.
final class ConnectionBox {
    let connection: ClientConnection
    init(_ c: ClientConnection) { connection = c }
}

final class SessionBox {
    let session: SecretChat.Session
    init(_ s: SecretChat.Session) { session = s }
}

/// A key as an object, for the owner lists above.
final class SymmetricKeyBox {
    let key: SymmetricKey
    init(_ key: SymmetricKey) { self.key = key }
}
#endif
