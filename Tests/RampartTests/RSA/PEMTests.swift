// PEM armour (issue 36): the line splitter that finds line ends without a branch on a byte, against
// the split-based reader it replaced, over lines of every length around the 8-byte words it reads.

import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

/// PEM.decodeAll as it was before (commit 661f8f1: `split` at LF and prefix comparisons), over the
/// same Base64: the reference for the line handling.
private func referenceDecodeAll(_ text: String) -> [[UInt8]]? {
    var out: [[UInt8]] = []
    var label: [UInt8]? = nil
    var body: [UInt8] = []
    let begin = Array("-----BEGIN ".utf8), end = Array("-----END ".utf8), dashes = Array("-----".utf8)
    func hasPrefix(_ l: ArraySlice<UInt8>, _ p: [UInt8]) -> Bool { l.count >= p.count && l.prefix(p.count).elementsEqual(p) }
    for raw in Array(text.utf8).split(separator: 0x0A, omittingEmptySubsequences: false) {
        var line = raw
        if line.last == 0x0D { line = line.dropLast() }
        if let l = label {
            if hasPrefix(line, end) {
                guard line.elementsEqual(end + l + dashes), let der = try? PEM.base64Decode(body) else { return nil }
                out.append(l + [0] + der)
                label = nil
                body = []
            } else if hasPrefix(line, dashes) {
                return nil
            } else {
                body += line
            }
        } else if hasPrefix(line, begin) {
            guard line.count > begin.count + dashes.count, line.suffix(dashes.count).elementsEqual(dashes) else { return nil }
            label = Array(line.dropFirst(begin.count).dropLast(dashes.count))
        } else if hasPrefix(line, end) {
            return nil
        }
    }
    guard label == nil, !out.isEmpty else { return nil }
    return out
}

@Suite struct PEMLineTests {
    @Test func linesOfEveryLengthAroundWordBoundaries() throws {
        var rng = SplitMix64(seed: 366)
        let der = rng.bytes(200)
        let b64 = String(decoding: PEM.base64Encode(der), as: UTF8.self)
        for width in [1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 63, 64, 65, 300] {
            for ending in ["\n", "\r\n"] {
                var lines = ["preamble text", "-----BEGIN TEST-----"]
                var i = b64.startIndex
                while i < b64.endIndex {
                    let j = b64.index(i, offsetBy: width, limitedBy: b64.endIndex) ?? b64.endIndex
                    lines.append(String(b64[i..<j]))
                    i = j
                }
                lines.append("-----END TEST-----")
                for tail in ["", ending, ending + "trailing"] {
                    let text = lines.joined(separator: ending) + tail
                    let blocks = try PEM.decodeAll(text)
                    #expect(blocks.count == 1 && blocks[0].label == "TEST" && blocks[0].der == der, "width \(width)")
                }
            }
        }
    }

    @Test func randomTextsAgainstTheOldSplitter() {
        var rng = SplitMix64(seed: 367)
        let pool = ["-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "-----BEGIN X-----", "-----END X-----",
                    "-----BEGIN -----", "-----BEGIN X----", "", "\r", "-----", "----", "-----FOO-----", "junk", "QUJD", "QQ==",
                    "QUI=", "QU", "JD", "QUJ\rD", "QU JD", "=", "-----END X-----\r", "\r\r"]
        var accepted = 0
        for _ in 0..<5000 {
            let count = Int(rng.next() % 9)
            var text = ""
            for k in 0..<count {
                if k > 0 { text += rng.next() % 3 == 0 ? "\r\n" : "\n" }
                text += pool[Int(rng.next() % UInt64(pool.count))]
            }
            if rng.next() % 2 == 0 { text = "-----BEGIN X-----\n" + text + "\n-----END X-----" }
            let got = try? PEM.decodeAll(text).map { Array($0.label.utf8) + [0] + $0.der }
            #expect(got == referenceDecodeAll(text), "\(text.debugDescription)")
            if got != nil { accepted += 1 }
        }
        #expect(accepted > 50)   // accepted texts are a minority, but well represented
    }
}
