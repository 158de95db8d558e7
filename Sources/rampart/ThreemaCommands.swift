// `rampart threema <subcommand>`: the dispatch table of the Threema command group. A new subcommand
// lives in its own file (as ThreemaSafeServerCommand.swift does) and adds one entry here.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `threema` subcommands: name, one-line summary, entry point (gets the arguments after the name).
let threemaSubcommands: [(name: String, summary: String, run: @Sendable ([String]) -> Void)] = [
    ("safe-server", "a Threema Safe backup server on 127.0.0.1 (the whitepaper's API)", threemaSafeServerCommand),
]

var threemaUsage: String {
    "usage: rampart threema <subcommand> [options]\n\nsubcommands:\n"
        + threemaSubcommands.map { "  " + $0.name.padding(toLength: 14) + $0.summary }.joined(separator: "\n")
        + "\n\nRun `rampart threema <subcommand> --help` for its options."
}

func threemaCommand(_ args: [String]) {
    guard let sub = args.first else { usageError("threema: expected a subcommand (see rampart threema --help)") }
    if sub == "--help" || sub == "-h" { print(threemaUsage); exit(0) }
    guard let entry = threemaSubcommands.first(where: { $0.name == sub }) else {
        usageError("threema: unknown subcommand '\(sub)' (\(threemaSubcommands.map(\.name).joined(separator: ", ")))")
    }
    entry.run(Array(args.dropFirst()))
}

private extension String {
    func padding(toLength n: Int) -> String { count >= n ? self + " " : self + String(repeating: " ", count: n - count) }
}
