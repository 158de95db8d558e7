// Argon2id: parameter validation (typed errors, nothing allocated), the RFC 9106 §5.3 vector through
// both backends and both API forms, memory rounding to 4·p blocks, and H' output lengths on both
// sides of 64 bytes. The vector file (Vectors/rfc9106_argon2id.json) adds cross-implementation cases.

import Testing
@_spi(Testing) import Rampart
import RampartTestSupport

private func expectError(_ expected: RampartError, sourceLocation: SourceLocation = #_sourceLocation,
                         _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected \(expected), nothing was thrown", sourceLocation: sourceLocation)
    } catch let e as RampartError {
        #expect(e == expected, sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}

private func derive(_ pw: [UInt8], _ salt: [UInt8], t: Int, m: Int, p: Int, length: Int, secret: [UInt8] = [],
                    ad: [UInt8] = [], limit: Int = Argon2id.defaultMemoryLimit, backend: Backend = .hardware) throws -> [UInt8] {
    try Argon2id.deriveKey(password: pw, salt: salt, iterations: t, memoryKiB: m, parallelism: p, outputByteCount: length,
                           secret: secret, associatedData: ad, memoryLimit: limit, backend: backend).withUnsafeBytes { Array($0) }
}

@Suite struct Argon2Tests {
    let salt = [UInt8](repeating: 2, count: 16)

    @Test func parameterErrors() {
        expectError(.invalidParameter("salt")) { _ = try derive([1], [UInt8](repeating: 0, count: 7), t: 1, m: 8, p: 1, length: 32) }
        expectError(.invalidParameter("iterations")) { _ = try derive([1], salt, t: 0, m: 8, p: 1, length: 32) }
        expectError(.invalidParameter("parallelism")) { _ = try derive([1], salt, t: 1, m: 8, p: 0, length: 32) }
        expectError(.invalidParameter("parallelism")) { _ = try derive([1], salt, t: 1, m: 1 << 30, p: 1 << 24, length: 32) }
        expectError(.invalidParameter("memoryKiB")) { _ = try derive([1], salt, t: 1, m: 7, p: 1, length: 32) }
        expectError(.invalidParameter("memoryKiB")) { _ = try derive([1], salt, t: 1, m: 31, p: 4, length: 32) }
        expectError(.invalidOutputLength) { _ = try derive([1], salt, t: 1, m: 8, p: 1, length: 3) }
        expectError(.invalidOutputLength) { _ = try derive([1], salt, t: 1, m: 8, p: 1, length: Argon2id.maximumOutputByteCount + 1) }
        expectError(.memoryLimitExceeded(required: 1024 * 1024 + 4096, limit: 1 << 20)) {
            _ = try derive([1], salt, t: 1, m: 1024, p: 1, length: 32, limit: 1 << 20)
        }
        #expect(Argon2id.memoryRequired(memoryKiB: 37, parallelism: 2) == 32 * 1024 + 4096)
        #expect(Argon2id.memoryRequired(memoryKiB: 15, parallelism: 2) == nil)
    }

    @Test(arguments: [Backend.hardware, .portable])
    func rfc9106Vector(_ backend: Backend) throws {
        let tag = try derive([UInt8](repeating: 1, count: 32), salt, t: 3, m: 32, p: 4, length: 32,
                             secret: [UInt8](repeating: 3, count: 8), ad: [UInt8](repeating: 4, count: 12), backend: backend)
        #expect(Hex.encode(tag) == "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659")
        // The raw-buffer form gives the same bytes.
        var out = [UInt8](repeating: 0, count: 32)
        let pw = [UInt8](repeating: 1, count: 32), k = [UInt8](repeating: 3, count: 8), x = [UInt8](repeating: 4, count: 12)
        try pw.withUnsafeBytes { p in try salt.withUnsafeBytes { s in try k.withUnsafeBytes { kb in try x.withUnsafeBytes { xb in
            try out.withUnsafeMutableBytes { o in
                try Argon2id.derive(password: p, salt: s, iterations: 3, memoryKiB: 32, parallelism: 4, secret: kb,
                                    associatedData: xb, into: o)
            }
        } } } }
        #expect(out == tag)
    }

    @Test func memoryIsRoundedDownToFourBlocksPerLane() throws {
        // m = 37, p = 2 uses 32 blocks, but m itself enters H0: the tags differ from m = 32.
        let a = try derive([9], salt, t: 1, m: 37, p: 2, length: 32)
        let b = try derive([9], salt, t: 1, m: 32, p: 2, length: 32)
        #expect(a != b)
        #expect(try derive([9], salt, t: 1, m: 37, p: 2, length: 32, backend: .portable) == a)
    }

    @Test func outputLengthsAroundTheHPrimeBoundary() throws {
        var previous: [[UInt8]] = []
        for length in [4, 32, 63, 64, 65, 96, 97, 128, 1000] {
            let hw = try derive([1, 2, 3], salt, t: 2, m: 16, p: 1, length: length)
            let pt = try derive([1, 2, 3], salt, t: 2, m: 16, p: 1, length: length, backend: .portable)
            #expect(hw == pt && hw.count == length)
            #expect(!previous.contains(hw))
            previous.append(hw)
        }
    }
}
