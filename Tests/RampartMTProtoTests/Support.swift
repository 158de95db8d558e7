// Shared helpers of the MTProto tests.

import Foundation
import Testing
import RampartVectors

/// The project root, found from this file's path.
let mtprotoProjectRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// `../shared/vectors/mtproto`, when present (a user's clone does not have it).
let sharedMTProtoVectors: String? = {
    guard let root = VectorRunner.sharedVectorsDirectory(root: mtprotoProjectRoot) else { return nil }
    return root + "/mtproto"
}()

/// Reads a shared MTProto vector file, or prints a visible skip line and returns nil.
func sharedMTProtoFile(_ name: String) -> Data? {
    guard let dir = sharedMTProtoVectors, let d = FileManager.default.contents(atPath: dir + "/" + name) else {
        print("SKIP: ../shared/vectors/mtproto/\(name) is not present (a user's clone has no shared vectors)")
        return nil
    }
    return d
}

/// Lower-case hex to bytes (test input only; traps on bad hex).
func hexBytes(_ s: String) -> [UInt8] {
    let c = Array(s.utf8.filter { $0 != 32 && $0 != 10 })
    precondition(c.count % 2 == 0)
    func v(_ x: UInt8) -> UInt8 { x <= 57 ? x - 48 : (x | 0x20) - 87 }
    return stride(from: 0, to: c.count, by: 2).map { v(c[$0]) << 4 | v(c[$0 + 1]) }
}

/// Bytes to lower-case hex.
func hexString(_ b: some Sequence<UInt8>) -> String {
    b.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}
