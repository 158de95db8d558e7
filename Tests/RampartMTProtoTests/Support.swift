// Shared helpers of the MTProto tests.

import Foundation
import Testing
import RampartVectors
import RampartTestSupport

/// `../shared/vectors/mtproto`, when present (a user's clone does not have it).
let sharedMTProtoVectors: String? = {
    guard let root = VectorRunner.sharedVectorsDirectory(root: projectRoot) else { return nil }
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
