import Foundation
import RampartTestSupport
import RampartVectors
import Testing

/// Every case of Vectors/threema/published.json: the apps' and the Gateway SDK's published values,
/// and envelopes, directory responses and vouches computed independently with PyNaCl and hashlib.
/// The two scrypt cases (64 MiB each) are heavy: they run in release builds (unless `RAMPART_SKIP_HEAVY=1`,
/// as the sanitizer runs set it) and `rampart vectors`.
@Test func threemaVectorFile() throws {
    let options = VectorOptions(includeHeavy: runsHeavyCases)
    let results = try VectorRunner.run(file: projectRoot + "/Vectors/threema/published.json", options: options)
    #expect(results.count >= (options.includeHeavy ? 18 : 16))
    for r in results where !r.passed { Issue.record("\(r)") }
}
