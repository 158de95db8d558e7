// Insecure.MD5 (RFC 1321): the RFC's test suite from Vectors/rfc1321_md5.json, one-shot and split
// at every point, plus the block-boundary lengths against an incremental byte-by-byte feed.
// The differential test against OpenSSL is in CrossCheckTests (md5MatchesOpenSSL).

import Foundation
import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

/// The cases of Vectors/rfc1321_md5.json as (id, message, digest).
private let md5Cases: [(String, [UInt8], [UInt8])] = {
    guard let d = FileManager.default.contents(atPath: projectRoot + "/Vectors/rfc1321_md5.json"),
          let o = try? JSONSerialization.jsonObject(with: d) as? [String: Any],
          let cases = o["cases"] as? [[String: Any]] else { return [] }
    return cases.compactMap { c in
        guard let id = c["id"] as? String, let m = c["msg"] as? String, let dg = c["digest"] as? String,
              let msg = try? Hex.decode(m), let digest = try? Hex.decode(dg) else { return nil }
        return (id, msg, digest)
    }
}()

@Suite struct MD5Tests {
    @Test func vectorFileHasTheSevenRFCCases() {
        #expect(md5Cases.count == 7, "Vectors/rfc1321_md5.json should hold RFC 1321's seven strings")
    }

    @Test(arguments: md5Cases.map(\.0))
    func rfc1321(_ id: String) throws {
        let (_, msg, want) = try #require(md5Cases.first { $0.0 == id })
        #expect(Insecure.MD5.hash(data: msg).bytes == want)
        #expect(Insecure.MD5.hash(data: msg).constantTimeEquals(want))
        // Every split point of the message across two updates, and a byte-at-a-time feed.
        for cut in 0...msg.count {
            var h = Insecure.MD5()
            h.update(data: msg[..<cut]); h.update(data: msg[cut...])
            #expect(h.finalize().bytes == want, "split at \(cut)")
        }
        var h = Insecure.MD5()
        for b in msg { h.update(data: [b]) }
        #expect(h.finalize().bytes == want)
    }

    @Test func finalizeLeavesTheHasherUsable() {
        var h = Insecure.MD5()
        h.update(data: Array("a".utf8))
        _ = h.finalize()
        h.update(data: Array("bc".utf8))
        #expect(h.finalize() == Insecure.MD5.hash(data: Array("abc".utf8)))
        #expect(Insecure.MD5.byteCount == 16 && Insecure.MD5.blockByteCount == 64)
        #expect(Insecure.MD5.hash(data: [UInt8]()).description == "d41d8cd98f00b204e9800998ecf8427e")
    }

    /// Lengths around the 56-byte padding boundary and block sizes: one-shot equals a random split.
    @Test func paddingBoundariesAgreeWithIncrementalFeeds() {
        var g = SplitMix64(seed: 1321)
        for n in 0...300 {
            let msg = g.bytes(n)
            let one = Insecure.MD5.hash(data: msg)
            let cut = n == 0 ? 0 : Int.random(in: 0...n, using: &g)
            var h = Insecure.MD5()
            h.update(data: msg[..<cut]); h.update(data: msg[cut...])
            #expect(h.finalize() == one, "length \(n), cut \(cut)")
        }
    }
}
