// The `rampart` command-line tool. Its commands and flags are a contract other tools script against:
// keep them. The commands are listed once, in CommandTable.swift (`rampart help --synopses` prints
// every command line).
//
// Exit status: 0 success, 1 a failed check (authentication, a vector), 2 bad usage or bad parameters
// (one line on stderr).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif


/// Writes one line to stderr.
func printError(_ s: String) {
    var line = s + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// Bad usage or bad parameters: one line on stderr, exit status 2.
func usageError(_ message: String) -> Never {
    printError("rampart: \(message)")
    exit(2)
}

dispatch(Array(CommandLine.arguments.dropFirst()))
// What print() buffered must reach standard output: a failed write (a full disk, /dev/full) is an error.
if fflush(nil) != 0 {
    printError("rampart: cannot write standard output: \(String(cString: strerror(errno)))")
    exit(1)
}
exit(0)
