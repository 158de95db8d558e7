// Shared helpers for the differential tests against OpenSSL and libsodium.

import Testing
import RampartReference
@_spi(Testing) import Rampart
import RampartTestSupport

let backends: [Backend] = [.hardware, .portable]

/// Lengths 0...1100 (every length around the 64- and 128-byte blocks) plus seeded random lengths up to 4096.
let crossLengths: [Int] = {
    var g = SplitMix64(seed: 4096)
    return Array(0...1100) + (0..<60).map { _ in Int.random(in: 1101...4096, using: &g) } + [4095, 4096]
}()

/// The reference library or nil. Without it the test is skipped, unless RAMPART_REQUIRE_REFERENCE=1,
/// in which case its absence is recorded as a failure.
func requireOpenSSL() -> OpenSSL? {
    if let o = OpenSSL.shared { return o }
    if Reference.required { Issue.record("RAMPART_REQUIRE_REFERENCE=1 but OpenSSL libcrypto was not found") }
    return nil
}

func requireSodium() -> Sodium? {
    if let s = Sodium.shared { return s }
    if Reference.required { Issue.record("RAMPART_REQUIRE_REFERENCE=1 but libsodium was not found") }
    return nil
}

let openSSLPresentOrRequired = OpenSSL.shared != nil || Reference.required
let sodiumPresentOrRequired = Sodium.shared != nil || Reference.required
let noOpenSSL = "OpenSSL libcrypto not found (apt-get install libssl3): cross-check skipped"
let noSodium = "libsodium not found (apt-get install libsodium23): cross-check skipped"

/// `message` placed at byte offset `offset` of a larger buffer, so kernels see unaligned input.
func withUnaligned<R>(_ message: [UInt8], offset: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    var storage = [UInt8](repeating: 0xEE, count: message.count + offset + 8)
    storage.replaceSubrange(offset..<(offset + message.count), with: message)
    return storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + message.count)])) }
}

/// Hashes with Rampart on `backend`, feeding the message in random pieces.
func rampartDigest(_ alg: String, _ msg: [UInt8], backend: Backend, offset: Int, rng: inout SplitMix64) -> [UInt8] {
    var cuts: [Int] = []
    if msg.count > 1 {
        cuts = (0..<Int.random(in: 0...3, using: &rng)).map { _ in Int.random(in: 0...msg.count, using: &rng) }.sorted()
    }
    return withUnaligned(msg, offset: offset) { buf in
        func feed(_ update: (UnsafeRawBufferPointer) -> Void) {
            var start = 0
            for c in cuts + [msg.count] {
                update(UnsafeRawBufferPointer(rebasing: buf[start..<c]))
                start = c
            }
        }
        switch alg {
        case "sha1": var h = Insecure.SHA1(backend: backend); feed { h.update(bufferPointer: $0) }; return h.finalize().bytes
        case "md5": var h = Insecure.MD5(backend: backend); feed { h.update(bufferPointer: $0) }; return h.finalize().bytes
        case "sha256": var h = SHA256(backend: backend); feed { h.update(bufferPointer: $0) }; return h.finalize().bytes
        case "sha512": var h = SHA512(backend: backend); feed { h.update(bufferPointer: $0) }; return h.finalize().bytes
        default:
            var h = try! BLAKE2b(outputByteCount: 64, key: [], salt: nil, personal: nil, backend: backend)
            feed { h.update(bufferPointer: $0) }
            return h.finalize().bytes
        }
    }
}
