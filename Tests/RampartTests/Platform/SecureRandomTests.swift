// SecureRandom (Platform/SecureRandom.swift): its output is ChaCha20's keystream with fast key erasure
// (checked against the public ChaCha20 API), it reseeds from the OS, threads and forked children get
// streams of their own, and the bytes look uniform.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import Rampart
import Testing

@Suite("SecureRandom")
struct SecureRandomTests {
    @Test("Output is the ChaCha20 keystream after the 32 bytes that become the next key (fast key erasure)")
    func constructionMatchesChaCha20() throws {
        let key = (0..<32).map { UInt8($0 &* 7 &+ 3) }
        // The thread's generator must not stay on this known stream for whatever runs next on it
        // (a sanitizer run found a later test's "random" key among this test's freed buffers).
        defer { DRBGState.current().resetForTesting() }
        DRBGState.current().setKeyForTesting(key)
        var out = [UInt8](repeating: 0, count: 992 + 100)
        out.withUnsafeMutableBytes { SecureRandom.fill($0) }
        let stream = try ChaCha20.xor([UInt8](repeating: 0, count: 1024), key: SymmetricKey(data: key), nonce: [UInt8](repeating: 0, count: 12))
        #expect(Array(out[0..<992]) == Array(stream[32...]))
        // The second refill is keyed by the first run's first 32 bytes.
        let next = try ChaCha20.xor([UInt8](repeating: 0, count: 1024), key: SymmetricKey(data: Array(stream[0..<32])),
                                    nonce: [UInt8](repeating: 0, count: 12))
        #expect(Array(out[992...]) == Array(next[32..<132]))
        // next() reads the same stream, 8 bytes at a time, little-endian.
        DRBGState.current().setKeyForTesting(key)
        var g = SecureRandom()
        let words = (0..<4).map { _ in g.next() }
        let expected = (0..<4).map { i in (0..<8).reduce(UInt64(0)) { $0 | UInt64(stream[32 + 8 * i + $1]) << (8 * $1) } }
        #expect(words == expected)
        // After the reset the stream is a fresh one from the OS, not the known one.
        DRBGState.current().resetForTesting()
        var fresh = SecureRandom()
        let after = (0..<4).map { _ in fresh.next() }
        #expect(after != Array((0..<4).map { i in (0..<8).reduce(UInt64(0)) { $0 | UInt64(stream[64 + 8 * i + $1]) << (8 * $1) } }))
        #expect(DRBGState.current().reseeds >= 1)
    }

    @Test("Every 1 MiB of output takes fresh bytes from the OS, and the stream is not the unseeded one")
    func reseedsFromTheOS() {
        let state = DRBGState.current()
        let before = state.reseeds
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        for _ in 0..<3 { buffer.withUnsafeMutableBytes { SecureRandom.fill($0) } }
        #expect(state.reseeds - before >= 2)
    }

    @Test("Calls and threads get different bytes; sizes 0…5000 fill completely")
    func distinctOutputs() async {
        let a = SecureRandom.bytes(32), b = SecureRandom.bytes(32)
        #expect(a != b)
        for n in [0, 1, 7, 8, 31, 33, 991, 992, 993, 2048, 5000] {
            let x = SecureRandom.bytes(n)
            #expect(x.count == n)
            if n >= 32 { #expect(x.contains { $0 != 0 }) }
        }
        let other = await Task.detached { SecureRandom.bytes(64) }.value
        #expect(other != SecureRandom.bytes(64))
    }

    @Test("Bytes look uniform: every byte value within 6 sigma over 4 MiB, bits balanced")
    func roughlyUniform() {
        var counts = [Int](repeating: 0, count: 256)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var ones = 0
        for _ in 0..<4 {
            buffer.withUnsafeMutableBytes { SecureRandom.fill($0) }
            for b in buffer { counts[Int(b)] += 1; ones += b.nonzeroBitCount }
        }
        let n = Double(4 << 20), p = 1.0 / 256
        let sigma = (n * p * (1 - p)).squareRoot()
        #expect(counts.allSatisfy { abs(Double($0) - n * p) < 6 * sigma })
        #expect(abs(Double(ones) - n * 4) < 6 * (n * 8 * 0.25).squareRoot())
    }

    #if os(Linux)
    @Test("A forked child does not repeat its parent's bytes")
    func forkedChildGetsItsOwnStream() throws {
        // Prime this thread's state so that its buffer holds unread bytes at the fork.
        _ = SecureRandom.bytes(16)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        var childBytes = [UInt8](repeating: 0, count: 64)
        let pid = fork()
        if pid == 0 {
            // The child: no allocation, no Swift runtime work beyond the fill.
            childBytes.withUnsafeMutableBytes { b in
                SecureRandom.fill(b)
                _ = write(fds[1], b.baseAddress, 64)
            }
            _exit(0)
        }
        #expect(pid > 0)
        close(fds[1])
        let parentBytes = SecureRandom.bytes(64)
        var got = 0
        try childBytes.withUnsafeMutableBytes { b in
            while got < 64 {
                let n = read(fds[0], b.baseAddress! + got, 64 - got)
                guard n > 0 else { throw CancellationError() }
                got += n
            }
        }
        close(fds[0])
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        #expect(got == 64)
        #expect(childBytes != parentBytes, "the child repeated the parent's stream")
        #expect(childBytes.contains { $0 != 0 })
    }
    #endif
}
