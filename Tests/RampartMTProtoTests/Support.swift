// Shared helpers of the MTProto tests.

import Foundation
import Testing
import RampartTestSupport
import Rampart

/// Reads `Vectors/mtproto/<name>` (the auth-key sample and the derived vectors; provenance in
/// Vectors/README.md); a missing file is a test failure, not a skip.
func mtprotoVectorFile(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> Data? {
    guard let d = FileManager.default.contents(atPath: projectRoot + "/Vectors/mtproto/" + name) else {
        Issue.record("Vectors/mtproto/\(name) is missing", sourceLocation: sourceLocation)
        return nil
    }
    return d
}

/// The golden snapshot at `Vectors/snapshots/<name>.hex` (``goldenSnapshotBytes(_:_:)``).
func goldenSnapshot(_ name: String, _ make: () -> SnapshotBytes) throws -> SnapshotBytes {
    SnapshotBytes(copying: try goldenSnapshotBytes(name) { make().copyBytes() })
}
