/// The package root (the directory of Package.swift), found from this file's path at build time:
/// tests read `Vectors/` from here whatever the working directory.
public let projectRoot: String = {
    var path = #filePath
    // …/Sources/RampartTestSupport/ProjectFiles.swift: drop three components.
    for _ in 0..<3 {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        path = String(path[..<slash])
    }
    return path
}()
