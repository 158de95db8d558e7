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

/// Reads an MTProto vector file that came from `../shared/vectors/mtproto`: the project's copy in
/// `Vectors/mtproto/` (a user's clone has it), else the shared folder, else prints a visible skip line
/// and returns nil.
func sharedMTProtoFile(_ name: String) -> Data? {
    if let own = FileManager.default.contents(atPath: projectRoot + "/Vectors/mtproto/" + name) { return own }
    guard let dir = sharedMTProtoVectors, let d = FileManager.default.contents(atPath: dir + "/" + name) else {
        print("SKIP: ../shared/vectors/mtproto/\(name) is not present (a user's clone has no shared vectors)")
        return nil
    }
    return d
}
