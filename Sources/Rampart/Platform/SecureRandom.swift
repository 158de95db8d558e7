// A fast cryptographically secure generator: ChaCha20 with fast key erasure (the construction of
// OpenBSD's arc4random and of Bernstein's "fast-key-erasure RNGs"), one state per thread, seeded from
// the operating system and reseeded from it after every 1 MiB of output and at least every 5 minutes.
//
// Why: `SystemRandomNumberGenerator` makes one getrandom(2) call per 8 bytes. A server answering
// ~70 000 MTProto pings per second spent about half its CPU in that system call (issue 17), while all
// the cryptography took under a tenth. Here one ChaCha20 refill of 1 KiB (about half a microsecond
// with AVX2) serves 124 calls of 8 bytes, and the OS is asked for 32 bytes once per MiB.
//
// Each refill runs ChaCha20 under the current key with a zero nonce over 1 KiB; the first 32 bytes
// become the next key at once and the old key is gone, so state captured later cannot reconstruct
// earlier output (backtracking resistance). Reseeding replaces the key with ChaCha20 output keyed by
// (current key XOR 32 fresh OS bytes): the OS entropy enters every 1 MiB (prediction resistance against
// a captured state, after the next reseed).
//
// fork(2): a child must never repeat its parent's stream. On Linux the state lives in a page marked
// MADV_WIPEONFORK, which the kernel zero-fills in the child, and a zero "seeded" word forces a fresh
// seed from the OS. Independently, a pthread_atfork child handler bumps a generation counter that
// every output compares with its state's (one load), which covers kernels without that advice and
// Darwin. Threads never share a state (pthread-specific
// storage), so there is no lock and no false sharing.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A cryptographically secure random number generator for keys, nonces and padding: ChaCha20 with
/// fast key erasure over a per-thread state, seeded and reseeded from the operating system (every
/// 1 MiB of output and every 5 minutes), safe across `fork`.
///
/// Every API of this library that takes a generator uses this one when the caller passes none, and so
/// do the benchmarks' rows: it is what users get. It costs one OS call per MiB instead of
/// `SystemRandomNumberGenerator`'s one per 8 bytes.
///
/// ```swift
/// var rng = SecureRandom()
/// let nonce = (0..<24).map { _ in UInt8.random(in: 0...255, using: &rng) }
/// var key = [UInt8](repeating: 0, count: 32)
/// key.withUnsafeMutableBytes { SecureRandom.fill($0) }
/// ```
///
/// The generator has no state of its own (it reads the calling thread's), so copies are free and
/// `Sendable`. If the operating system cannot provide randomness, the process traps (as
/// `SystemRandomNumberGenerator` does): there is no safe way to continue.
public struct SecureRandom: RandomNumberGenerator, Sendable {
    /// One byte of storage, never read: an empty struct has no address of its own, and
    /// ThreadSanitizer then saw every thread's `inout` generator at one shared address and reported
    /// races between unrelated generators (CI's sanitizer step). With a byte, each value is its own.
    private var storage: UInt8 = 0

    /// A generator that reads the calling thread's state.
    public init() {}

    /// The next 64 random bits.
    @inline(__always)
    public mutating func next() -> UInt64 {
        DRBGState.current().next()
    }

    /// Fills `buffer` with random bytes.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        DRBGState.current().fill(base, buffer.count)
    }

    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: max(0, count))
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }

    /// Output bytes after which a thread's state takes 32 fresh bytes from the OS (1 MiB).
    public static let reseedBytes = 1 << 20
    /// Seconds after which a thread's state reseeds from the OS at its next refill (300).
    public static let reseedSeconds: Int64 = 300
}

/// One thread's generator state, in its own page (Linux: MADV_WIPEONFORK).
///
/// Layout of the page: `seeded` (UInt64, 0 = must seed), `pid`, `outputSinceReseed`, `reseedAt`
/// (monotonic seconds), `position` (next unread byte of the buffer), `reseeds`, then the 32-byte key at 64 and
/// the 1 KiB buffer at 128. The buffer's first 32 bytes are never output: each refill writes the next
/// key there and wipes them.
final class DRBGState {
    static let pageSize = 4096
    static let bufferOffset = 128
    static let bufferSize = 1024
    static let keyOffset = 64

    let page: UnsafeMutableRawPointer
    /// Whether the kernel wipes the page in a forked child (otherwise the pid is compared).
    let wipesOnFork: Bool
    /// Whether the page came from mmap (else from the heap).
    let mapped: Bool

    private init() {
        #if os(Linux)
        let p = mmap(nil, Self.pageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        if let p, p != MAP_FAILED {
            page = p
            mapped = true
            wipesOnFork = madvise(p, Self.pageSize, 18 /* MADV_WIPEONFORK, Linux 4.14 */) == 0
            _ = madvise(p, Self.pageSize, 16 /* MADV_DONTDUMP: keep the key out of core dumps */)
            return
        }
        #endif
        page = UnsafeMutableRawPointer.allocate(byteCount: Self.pageSize, alignment: 64)
        page.initializeMemory(as: UInt8.self, repeating: 0, count: Self.pageSize)
        mapped = false
        wipesOnFork = false
    }

    deinit {
        secureZero(UnsafeMutableRawBufferPointer(start: page, count: Self.pageSize))
        #if os(Linux)
        if mapped {
            munmap(page, Self.pageSize)
            return
        }
        #endif
        page.deallocate()
    }

    // MARK: Fields

    private var seeded: UInt64 {
        get { page.load(fromByteOffset: 0, as: UInt64.self) }
        set { page.storeBytes(of: newValue, toByteOffset: 0, as: UInt64.self) }
    }
    /// ``forkGeneration`` when the state was last seeded.
    private var generation: UInt64 {
        get { page.load(fromByteOffset: 8, as: UInt64.self) }
        set { page.storeBytes(of: newValue, toByteOffset: 8, as: UInt64.self) }
    }
    private var outputSinceReseed: Int {
        get { page.load(fromByteOffset: 16, as: Int.self) }
        set { page.storeBytes(of: newValue, toByteOffset: 16, as: Int.self) }
    }
    private var reseedAt: Int64 {
        get { page.load(fromByteOffset: 24, as: Int64.self) }
        set { page.storeBytes(of: newValue, toByteOffset: 24, as: Int64.self) }
    }
    /// Next unread byte of the buffer (`bufferSize` = empty). 0 after a wipe, which `next` treats as
    /// empty too because an unseeded state refills first.
    private var position: Int {
        get { page.load(fromByteOffset: 32, as: Int.self) }
        set { page.storeBytes(of: newValue, toByteOffset: 32, as: Int.self) }
    }

    // MARK: Output

    @inline(__always)
    func next() -> UInt64 {
        let pos = position
        if seeded != 0, pos <= Self.bufferSize - 8, generation == Self.forkGeneration {
            let p = page + Self.bufferOffset + pos
            let v = p.loadUnaligned(as: UInt64.self)
            p.storeBytes(of: 0, as: UInt64.self)  // output never stays behind in the state
            position = pos + 8
            return v
        }
        var v: UInt64 = 0
        withUnsafeMutableBytes(of: &v) { fill($0.baseAddress!, 8) }
        return v
    }

    func fill(_ out: UnsafeMutableRawPointer, _ count: Int) {
        var done = 0
        while done < count {
            if seeded == 0 || position >= Self.bufferSize || generation != Self.forkGeneration { refill() }
            let pos = position
            let n = min(count - done, Self.bufferSize - pos)
            let src = page + Self.bufferOffset + pos
            (out + done).copyMemory(from: src, byteCount: n)
            src.initializeMemory(as: UInt8.self, repeating: 0, count: n)
            position = pos + n
            done += n
        }
    }

    /// Refills the buffer: seeds first when the state is new, was wiped by fork, belongs to another
    /// process, or is due for a reseed; then one ChaCha20 run whose first 32 bytes become the key.
    private func refill() {
        let now = monotonicSeconds()
        let current = Self.forkGeneration
        let forked = seeded != 0 && generation != current
        if seeded == 0 || forked || outputSinceReseed >= SecureRandom.reseedBytes || now >= reseedAt {
            reseed(fresh: seeded == 0 || forked)
            generation = current
            reseedAt = now + SecureRandom.reseedSeconds
            outputSinceReseed = 0
            seeded = 1
        }
        let key = page + Self.keyOffset
        let buffer = page + Self.bufferOffset
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: Self.bufferSize)
        var zeroNonce: (UInt64, UInt32) = (0, 0)  // on the stack: a refill allocates nothing (safe after fork)
        withUnsafeBytes(of: &zeroNonce) { n in
            var x = chacha20Input(key: key, counter: 0, nonce: n.baseAddress!)
            chacha20XOR(&x, buffer, buffer, Self.bufferSize, Registries.chacha20.implementation(for: CPU.defaultBackend))
            wipe(&x)
        }
        // Fast key erasure: the first 32 bytes are the next key, and are not output.
        key.copyMemory(from: buffer, byteCount: 32)
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: 32)
        position = 32
        outputSinceReseed += Self.bufferSize - 32
    }

    /// New key = OS bytes (a fresh state) or OS bytes XOR the current key (a periodic reseed: the old
    /// state's entropy is kept, the OS's added). The OS bytes come through the standard library's
    /// `SystemRandomNumberGenerator` (getrandom(2) on Linux, arc4random on Darwin), which traps when
    /// the OS cannot provide them.
    private func reseed(fresh: Bool) {
        let key = page + Self.keyOffset
        var os = SystemRandomNumberGenerator()
        for i in 0..<4 {
            let old: UInt64 = fresh ? 0 : key.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self)
            key.storeBytes(of: old ^ os.next(), toByteOffset: 8 * i, as: UInt64.self)
        }
        reseeds += 1
    }

    /// How many times this state took bytes from the OS (for tests).
    var reseeds: Int {
        get { page.load(fromByteOffset: 40, as: Int.self) }
        set { page.storeBytes(of: newValue, toByteOffset: 40, as: Int.self) }
    }

    /// Test hook: forgets the state (buffer and key wiped); the next output seeds afresh from the OS.
    /// Every test that calls ``setKeyForTesting(_:)`` must call this when done, or later code on the
    /// same thread would draw from a stream the test made predictable.
    func resetForTesting() {
        secureZero(UnsafeMutableRawBufferPointer(start: page, count: Self.pageSize))
    }

    /// Test hook: the state keyed with `key`, seeded, no reseed due for an hour, buffer empty. Pair
    /// it with ``resetForTesting()``.
    func setKeyForTesting(_ key: [UInt8]) {
        precondition(key.count == 32)
        key.withUnsafeBytes { (page + Self.keyOffset).copyMemory(from: $0.baseAddress!, byteCount: 32) }
        seeded = 1
        generation = Self.forkGeneration
        outputSinceReseed = 0
        reseedAt = monotonicSeconds() + 3600
        position = Self.bufferSize
    }

    // MARK: Fork

    /// Counts the forks this process is a child of (a pthread_atfork child handler adds 1): a state
    /// seeded under another value belongs to an ancestor and reseeds before its next output. This
    /// covers systems without MADV_WIPEONFORK; where the advice holds, the kernel has zeroed the
    /// page anyway.
    nonisolated(unsafe) static var forkGeneration: UInt64 = 0
    private static let atforkRegistered: Bool = {
        pthread_atfork(nil, nil, { DRBGState.forkGeneration &+= 1 }) == 0
    }()

    // MARK: Per-thread state

    nonisolated(unsafe) private static var key = pthread_key_t()
    private static let keyCreated: Bool = {
        pthread_key_create(&key) { p in
            guard let p else { return }
            Unmanaged<DRBGState>.fromOpaque(p).release()
        } == 0
    }()

    /// The calling thread's state (created on first use).
    @inline(__always)
    static func current() -> DRBGState {
        if _fastPath(keyCreated), let p = pthread_getspecific(key) {
            return Unmanaged<DRBGState>.fromOpaque(p).takeUnretainedValue()
        }
        return makeCurrent()
    }

    @inline(never)
    private static func makeCurrent() -> DRBGState {
        _ = atforkRegistered
        let s = DRBGState()
        guard keyCreated else { return s }  // no thread-specific storage: a state per call (still secure)
        _ = pthread_setspecific(key, Unmanaged.passRetained(s).toOpaque())
        return s
    }
}

/// Monotonic seconds (for the reseed interval).
private func monotonicSeconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec)
}
