// rampart-fuzz: libFuzzer targets for every decoder and every function that takes network or file
// input (Scripts/fuzz.sh builds it with -sanitize=fuzzer,address and runs each target). Without
// libFuzzer linked, `replay` runs inputs (the committed corpus, a crash reproducer) through a target
// once, so a normal build checks the corpus too.

import Foundation
import Rampart
import RampartTestSupport
import RampartTestSupportC

let usage = """
usage: rampart-fuzz list [-l]                         the targets (-l: with max_len and summary)
       rampart-fuzz run <target> [libFuzzer flags] [corpus dirs]
                                                      libFuzzer on one target (needs a -sanitize=fuzzer build)
       rampart-fuzz replay <target> <files or dirs>   every input through the target once
       rampart-fuzz replay-all <corpus root>          <root>/<target>/* for every target (all must exist)
       rampart-fuzz seed <target> <dir>               write the target's generated seed inputs to <dir>
       rampart-fuzz seed-all <corpus root>            seed every target into <root>/<target>
A property violation traps ("rampart-fuzz property violated: ..."); libFuzzer then saves the input.
"""

/// Prints to stderr.
func say(_ s: String) {
    FileHandle.standardError.write(Data((s + "\n").utf8))
}

func die(_ s: String, code: Int32 = 2) -> Never {
    say(s)
    exit(code)
}

func target(named name: String) -> FuzzTarget {
    guard let t = allTargets.first(where: { $0.name == name }) else {
        die("rampart-fuzz: unknown target '\(name)' (rampart-fuzz list)")
    }
    return t
}

/// Regular files named by `paths` (directories expanded one level, sorted, dot files skipped).
func inputFiles(_ paths: [String]) -> [String] {
    var out: [String] = []
    let fm = FileManager.default
    for p in paths {
        var isDir: ObjCBool = false
        guard fm.fileExists(atPath: p, isDirectory: &isDir) else { die("rampart-fuzz: no such file: \(p)") }
        if isDir.boolValue {
            let names = ((try? fm.contentsOfDirectory(atPath: p)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
            out += names.map { p + "/" + $0 }
        } else {
            out.append(p)
        }
    }
    return out
}

/// Runs every file through `t`; a violation traps after the file name has been printed.
func replay(_ t: FuzzTarget, _ files: [String], verbose: Bool) {
    for f in files {
        guard let d = FileManager.default.contents(atPath: f) else { die("rampart-fuzz: cannot read \(f)") }
        if verbose { say("replay \(t.name) \(f) (\(d.count) bytes)") }
        FuzzExpectation.set("\(t.name) on \(f)")
        t.run([UInt8](d))
        FuzzExpectation.clear()
    }
}

/// Writes `t`'s seeds into `dir`, each named by the SHA-1 of its bytes (libFuzzer's naming).
func writeSeeds(_ t: FuzzTarget, into dir: String) -> Int {
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let seeds = t.seeds()
    for s in seeds {
        t.run(s)  // every seed must pass its own target
        let name = hexString(Insecure.SHA1.hash(data: s).bytes)
        guard FileManager.default.createFile(atPath: dir + "/" + name, contents: Data(s)) else {
            die("rampart-fuzz: cannot write \(dir)/\(name)")
        }
    }
    return seeds.count
}

var args = Array(CommandLine.arguments.dropFirst())
let commands: Set<String> = ["list", "run", "replay", "replay-all", "seed", "seed-all", "help", "--help", "-h"]

// libFuzzer's -fork, -jobs and -minimize_crash re-run the program with libFuzzer flags only; the
// target travels in the environment then.
if let name = ProcessInfo.processInfo.environment["RAMPART_FUZZ_TARGET"], args.first.map({ !commands.contains($0) }) ?? true {
    args = ["run", name] + args
}

switch args.first {
case "list":
    for t in allTargets {
        print(args.contains("-l") ? "\(t.name)\tmax_len=\(t.maxLength)\ttimeout=\(t.timeout)\t\(t.summary)" : t.name)
    }

case "run":
    guard args.count >= 2 else { die(usage) }
    let t = target(named: args[1])
    guard rampart_fuzz_available() != 0 else {
        die("rampart-fuzz: libFuzzer is not linked into this build; build with -Xswiftc -sanitize=fuzzer,address " +
            "(Scripts/fuzz.sh), or use `rampart-fuzz replay`")
    }
    setenv("RAMPART_FUZZ_TARGET", t.name, 1)
    // The target's defaults first: libFuzzer lets a later flag override an earlier one.
    let fuzzerArgs = [CommandLine.arguments[0], "-max_len=\(t.maxLength)", "-timeout=\(t.timeout)"]
        + (t.slow ? ["-len_control=0"] : []) + args.dropFirst(2)
    exit(runLibFuzzer(t, fuzzerArgs))

case "replay":
    guard args.count >= 3 else { die(usage) }
    let t = target(named: args[1])
    let files = inputFiles(Array(args.dropFirst(2)))
    FuzzStats.enabled = true
    FuzzExpectation.installHandler()
    replay(t, files, verbose: true)
    say("rampart-fuzz: \(t.name): \(files.count) inputs replayed, no property violated (\(FuzzStats.take()))")

case "replay-all":
    guard args.count == 2 else { die(usage) }
    let root = args[1]
    let present = Set(((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { !$0.hasPrefix(".") })
    let unknown = present.subtracting(allTargets.map(\.name))
    guard unknown.isEmpty else { die("rampart-fuzz: corpus folders without a target: \(unknown.sorted().joined(separator: ", "))") }
    var total = 0
    FuzzStats.enabled = true
    FuzzExpectation.installHandler()
    for t in allTargets {
        guard present.contains(t.name) else { die("rampart-fuzz: no corpus for \(t.name) in \(root) (rampart-fuzz seed \(t.name) \(root)/\(t.name))") }
        let files = inputFiles([root + "/" + t.name])
        guard !files.isEmpty else { die("rampart-fuzz: empty corpus folder \(root)/\(t.name)") }
        let start = DispatchTime.now().uptimeNanoseconds
        replay(t, files, verbose: false)
        let ms = (DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
        let notes = FuzzStats.take()
        print("\(t.name): \(files.count) inputs ok (\(ms) ms)\(notes.isEmpty ? "" : "; " + notes)")
        total += files.count
    }
    print("rampart-fuzz: \(allTargets.count) targets, \(total) inputs replayed, no property violated")

case "seed":
    guard args.count == 3 else { die(usage) }
    let t = target(named: args[1])
    FuzzStats.enabled = true
    print("\(t.name): \(writeSeeds(t, into: args[2])) seeds written to \(args[2]) (\(FuzzStats.take()))")

case "seed-all":
    guard args.count == 2 else { die(usage) }
    FuzzStats.enabled = true
    for t in allTargets { print("\(t.name): \(writeSeeds(t, into: args[1] + "/" + t.name)) seeds (\(FuzzStats.take()))") }

case "help", "--help", "-h":
    print(usage)

default:
    die(usage)
}
