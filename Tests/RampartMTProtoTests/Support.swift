// Shared helpers of the MTProto tests.

import Foundation
import Testing
import RampartTestSupport

/// Reads `Vectors/mtproto/<name>` (the auth-key sample and the derived vectors; provenance in
/// Vectors/README.md); a missing file is a test failure, not a skip.
func mtprotoVectorFile(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> Data? {
    guard let d = FileManager.default.contents(atPath: projectRoot + "/Vectors/mtproto/" + name) else {
        Issue.record("Vectors/mtproto/\(name) is missing", sourceLocation: sourceLocation)
        return nil
    }
    return d
}
