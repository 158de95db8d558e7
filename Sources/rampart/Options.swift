// A small, strict option parser: `--name value` pairs, positional words, `--help`.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart

/// Parsed options of one command. Unknown or repeated options are usage errors.
struct Options {
    var values: [String: String] = [:]
    var positional: [String] = []
    var help = false

    /// Parses `args`, accepting only `allowed` option names (without dashes) that each take a value.
    init(_ args: [String], allowed: Set<String>, command: String) {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "--help" || a == "-h" {
                help = true
            } else if a.hasPrefix("--") {
                let name = String(a.dropFirst(2))
                guard allowed.contains(name) else { usageError("\(command): unknown option \(a)") }
                guard i + 1 < args.count else { usageError("\(command): \(a) needs a value") }
                guard values[name] == nil else { usageError("\(command): \(a) given twice") }
                values[name] = args[i + 1]
                i += 1
            } else {
                positional.append(a)
            }
            i += 1
        }
    }

    /// A required option.
    func require(_ name: String, _ command: String) -> String {
        guard let v = values[name] else { usageError("\(command): missing --\(name)") }
        return v
    }

    /// A hex option (empty string is allowed and means no bytes).
    func hex(_ name: String, _ command: String) -> [UInt8]? {
        guard let v = values[name] else { return nil }
        do { return try Hex.decode(v) } catch { usageError("\(command): --\(name) is not valid hex") }
    }

    /// A non-negative integer option.
    func int(_ name: String, _ command: String) -> Int? {
        guard let v = values[name] else { return nil }
        guard let n = Int(v), n >= 0 else { usageError("\(command): --\(name) must be a non-negative integer") }
        return n
    }
}

/// Reads standard input in chunks, handing each to `body`.
func readStdin(_ body: (UnsafeRawBufferPointer) -> Void) {
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 64)
    defer { chunk.deallocate() }
    while true {
        let n = read(0, chunk.baseAddress, chunk.count)
        if n < 0 {
            if errno == EINTR { continue }
            printError("rampart: cannot read stdin")
            exit(1)
        }
        if n == 0 { break }
        body(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
    }
}
