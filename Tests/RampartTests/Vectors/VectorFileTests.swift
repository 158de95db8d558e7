// Every vector file of Vectors/ (the project's own and the published collections of Vectors/collected/)
// through both implementation paths. Heavy cases (16.7 M PBKDF2 iterations, scrypt N = 2^20) run only in release
// builds and in `rampart vectors`; `RAMPART_SKIP_HEAVY=1` leaves them out of a release build too (the
// sanitizer runs set it: `rampart vectors` runs them in CI's plain release build).

import Foundation
import Testing
import RampartVectors
import RampartTestSupport

let ownVectorFiles: [String] = {
    let dir = projectRoot + "/Vectors"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
    return names.filter { $0.hasSuffix(".json") }.sorted()
}()

let vectorOptions = VectorOptions(includeHeavy: runsHeavyCases)

func expectAllPass(_ path: String) throws {
    let results = try VectorRunner.run(file: path, options: vectorOptions)
    #expect(!results.isEmpty, "no cases ran from \(path)")
    for r in results where !r.passed {
        Issue.record("\(r)")
    }
}

@Test func ownVectorFilesExist() {
    #expect(ownVectorFiles.count >= 10, "Vectors/ should hold the project's vector files")
}

@Test(arguments: ownVectorFiles)
func ownVectorFile(_ name: String) throws {
    try expectAllPass(projectRoot + "/Vectors/" + name)
}

/// The files in published formats (Wycheproof, NIST CAVP, the BLAKE2 and NaCl collections, the MTProto
/// handshake sample), each by its own runner.
@Test(arguments: VectorRunner.namedFiles)
func namedVectorFile(_ relative: String) throws {
    let path = projectRoot + "/Vectors/" + relative
    guard FileManager.default.fileExists(atPath: path) else {
        Issue.record("vector file missing: Vectors/\(relative)")
        return
    }
    try expectAllPass(path)
}

/// A deliberately wrong expectation must be reported as a failure (the runner can fail).
@Test func runnerDetectsWrongValues() throws {
    let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-bad-\(getpid()).json").path
    let bad = #"{"kind": "hash", "cases": [{"algorithm": "sha256", "msg": "616263", "digest": "00"}]}"#
    try bad.write(toFile: tmp, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: tmp) }
    let results = try VectorRunner.run(file: tmp)
    #expect(results.count == 1)
    #expect(results.allSatisfy { !$0.passed })
}
