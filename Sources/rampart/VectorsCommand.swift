// `rampart vectors [PATH...]`: runs vector files and prints per-family counts and a final total.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import RampartVectors

let vectorsUsage = """
usage: rampart vectors [--root DIR] [--verbose] [PATH...]
  Runs every vector file Rampart knows (the project's Vectors/, the published collections in
  Vectors/collected/ included), or only the files given, through every implementation path (hardware
  and portable). Prints the pass/fail count per family and a final line `N passed, M failed`. Exit
  status 1 on any failure.
  --root DIR   project root (default: the current directory, or the directory holding Vectors/)
  --verbose    print every case, not only failures
"""

func vectorsCommand(_ args: [String]) {
    var root: String? = nil
    var verbose = false
    var paths: [String] = []
    var i = 0
    while i < args.count {
        switch args[i] {
        case "--help", "-h": print(vectorsUsage); exit(0)
        case "--verbose": verbose = true
        case "--root":
            guard i + 1 < args.count else { usageError("vectors: --root needs a directory") }
            root = args[i + 1]; i += 1
        case let a where a.hasPrefix("--"): usageError("vectors: unknown option \(a)")
        case let a: paths.append(a)
        }
        i += 1
    }
    let fm = FileManager.default
    // Default root: the current directory when it holds Vectors/, else the source tree this binary was built from.
    let sourceRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    let cwd = fm.currentDirectoryPath
    let base = root ?? (fm.fileExists(atPath: cwd + "/Vectors") ? cwd : sourceRoot)
    var files = paths
    if files.isEmpty {
        files = VectorRunner.knownFiles(root: base)
        if files.isEmpty { usageError("vectors: no vector files under \(base)/Vectors (use --root or give paths)") }
    }
    var perFamily: [String: (Int, Int)] = [:]
    var order: [String] = []
    var passed = 0, failed = 0
    // The files run concurrently (a long file no longer holds the others up); results print in file order.
    let fileList = files
    let outcomes = ConcurrentResults<Result<[VectorResult], Error>>(count: fileList.count)
    DispatchQueue.concurrentPerform(iterations: fileList.count) { i in
        outcomes[i] = Result { try VectorRunner.run(file: fileList[i]) }
    }
    for (f, outcome) in zip(files, outcomes.values) {
        let results: [VectorResult]
        switch outcome {
        case .success(let r)?: results = r
        case .failure(let error)?:
            print("FAIL \(f): \(error)")
            failed += 1
            continue
        case nil:
            print("FAIL \(f): not run")
            failed += 1
            continue
        }
        if results.isEmpty { print("note: \(f) has no cases Rampart runs") }
        for r in results {
            if perFamily[r.family] == nil { order.append(r.family); perFamily[r.family] = (0, 0) }
            if r.passed { passed += 1; perFamily[r.family]!.0 += 1 } else { failed += 1; perFamily[r.family]!.1 += 1 }
            if !r.passed || verbose { print(r) }
        }
    }
    let width = order.map(\.count).max() ?? 0
    for fam in order.sorted() {
        let (p, m) = perFamily[fam]!
        print(fam.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(p) passed, \(m) failed")
    }
    print("\(passed) passed, \(failed) failed")
    exit(failed == 0 ? 0 : 1)
}
