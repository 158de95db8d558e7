// Golden files (Docs/Snapshots.md §5): a version-1 snapshot of every type is kept as hex under
// `Vectors/snapshots/`, restored by the tests, so that a change that breaks old snapshots fails them.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A golden file that is not there (run once with `RAMPART_WRITE_GOLDEN=1` to write it, then commit it).
public struct GoldenFileMissing: Error, CustomStringConvertible {
    /// The file's path.
    public let path: String
    public var description: String { "golden file \(path) is missing (RAMPART_WRITE_GOLDEN=1 writes it)" }
}

/// The bytes of `Vectors/snapshots/<name>.hex` (hex, whitespace ignored). When the file is missing and
/// `RAMPART_WRITE_GOLDEN=1`, it is written from `make` first (done once, when a type gets its version 1).
public func goldenSnapshotBytes(_ name: String, _ make: () -> [UInt8]) throws -> [UInt8] {
    let path = projectRoot + "/Vectors/snapshots/\(name).hex"
    if let f = fopen(path, "rb") {
        defer { fclose(f) }
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
            if n == 0 { break }
            text += buffer[..<n]
        }
        return hexBytes(String(decoding: text, as: UTF8.self))
    }
    guard let flag = getenv("RAMPART_WRITE_GOLDEN"), String(cString: flag) == "1" else { throw GoldenFileMissing(path: path) }
    let bytes = make()
    let hex = Array((hexString(bytes) + "\n").utf8)
    guard let f = fopen(path, "wb") else { throw GoldenFileMissing(path: path) }
    defer { fclose(f) }
    _ = hex.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) }
    return bytes
}
