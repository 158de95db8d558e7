// A small, strict option parser: `--name value` pairs, positional words, `--help`.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart

/// Parsed options of one command. Unknown or repeated options are usage errors, and so is a count of
/// positional words outside what the command declares.
struct Options {
    var values: [String: String] = [:]
    var positional: [String] = []
    var help = false

    /// Parses `args`, accepting only `allowed` option names (without dashes) that each take a value and
    /// between `positional.lowerBound` and `positional.upperBound` positional words (a command name such
    /// as `seal`, a hash algorithm, a value). Unless `--help` is among `args`, a word beyond the upper
    /// bound is a usage error (`unexpected argument X`), and so are fewer words than the lower bound.
    init(_ args: [String], allowed: Set<String>, positional expected: ClosedRange<Int>, command: String) {
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
        guard !help else { return }
        if positional.count > expected.upperBound { usageError("\(command): unexpected argument \(positional[expected.upperBound])") }
        if positional.count < expected.lowerBound {
            usageError("\(command): missing argument (see rampart \(command) --help)")
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

    /// An integer option that must lie in `range` (a usage error naming the range otherwise).
    func int(_ name: String, _ command: String, in range: ClosedRange<Int>) -> Int? {
        guard let v = values[name] else { return nil }
        guard let n = Int(v), range.contains(n) else {
            usageError("\(command): --\(name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return n
    }
}

/// Reads standard input in chunks, handing each to `body`. A read error is a usage error (standard
/// input is a directory, for instance), never the end of the input.
func readStdin(_ body: (UnsafeRawBufferPointer) -> Void) {
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 64)
    defer { chunk.deallocate() }
    while true {
        let n = read(0, chunk.baseAddress, chunk.count)
        if n < 0 {
            if errno == EINTR { continue }
            usageError("cannot read standard input: \(String(cString: strerror(errno)))")
        }
        if n == 0 { break }
        body(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
    }
}

/// Reads all of standard input, at most `limit` bytes: more is a usage error (`input too large`),
/// reported as soon as the limit is passed (the rest is not read).
func readAllStdin(limit: Int, _ command: String) -> [UInt8] {
    var all: [UInt8] = []
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 64)
    defer { chunk.deallocate() }
    while true {
        let n = read(0, chunk.baseAddress, chunk.count)
        if n < 0 {
            if errno == EINTR { continue }
            all.secureWipe()
            usageError("\(command): cannot read standard input: \(String(cString: strerror(errno)))")
        }
        if n == 0 { break }
        guard n <= limit - all.count else {
            all.secureWipe()
            secureZero(chunk)
            usageError("\(command): input too large (more than \(limit) bytes)")
        }
        all.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
    }
    secureZero(chunk)
    return all
}
