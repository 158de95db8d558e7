import Foundation
import RampartTestSupport
import RampartVectors
import Testing

/// Every case of Vectors/threema/published.json: the apps' and the Gateway SDK's published values,
/// and envelopes, directory responses and vouches computed independently with PyNaCl and hashlib.
/// The two scrypt cases (64 MiB each) are heavy: they run in release builds and `rampart vectors`.
@Test func threemaVectorFile() throws {
    #if DEBUG
    let options = VectorOptions(includeHeavy: false)
    #else
    let options = VectorOptions(includeHeavy: true)
    #endif
    let results = try VectorRunner.run(file: projectRoot + "/Vectors/threema/published.json", options: options)
    #expect(results.count >= (options.includeHeavy ? 18 : 16))
    for r in results where !r.passed { Issue.record("\(r)") }
}
