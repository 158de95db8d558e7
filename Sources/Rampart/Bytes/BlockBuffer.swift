// Block buffering shared by everything that consumes input in fixed blocks: the Merkle–Damgård hashes
// (SHA-1, SHA-256, SHA-512), BLAKE2b and Poly1305. One loop completes a buffered partial block, hands
// whole blocks straight from the caller's buffer to the compression function (one call for the run),
// and keeps the tail; the types differ only in their block size, their compression function and
// whether a full block must wait for more input (BLAKE2b marks the final block, so it cannot compress
// a block before it knows another follows).

/// A state that absorbs input in blocks of ``absorbBlockSize`` bytes through ``absorb(_:_:)``.
protocol BlockAbsorbing {
    /// A fixed-size value holding at least ``absorbBlockSize`` bytes (the partial block).
    associatedtype PendingBlock
    /// The block size in bytes.
    static var absorbBlockSize: Int { get }
    /// `true` when a full block stays buffered until more input arrives (BLAKE2b's last block).
    static var holdsBackFullBlock: Bool { get }
    /// The buffered bytes (the first ``pendingCount`` of them are input).
    var pendingBlock: PendingBlock { get set }
    /// How many bytes of ``pendingBlock`` are filled (0 up to the block size).
    var pendingCount: Int { get set }
    /// Compresses `count` whole blocks at `blocks` (none of them final, for BLAKE2b).
    mutating func compressBlocks(_ blocks: UnsafeRawPointer, _ count: Int)
}

extension BlockAbsorbing {
    /// Absorbs `count` bytes at `input`.
    @inline(__always)
    mutating func absorb(_ input: UnsafeRawPointer, _ count: Int) {
        var p = input
        var n = count
        let bs = Self.absorbBlockSize
        if pendingCount > 0 {
            let used = pendingCount, take = Swift.min(bs - used, n)
            withUnsafeMutableBytes(of: &pendingBlock) { b in
                b.baseAddress!.advanced(by: used).copyMemory(from: p, byteCount: take)
            }
            pendingCount = used + take
            p += take
            n -= take
            if pendingCount < bs || (Self.holdsBackFullBlock && n == 0) { return }
            // Compress from a copy (the state is mutated meanwhile), then wipe both: the block may
            // hold key material (BLAKE2b's key block, Poly1305's message under a one-time key).
            var block = pendingBlock
            withUnsafeBytes(of: &block) { compressBlocks($0.baseAddress!, 1) }
            wipe(&block)
            wipe(&pendingBlock)
            pendingCount = 0
        }
        // Whole blocks from the input; a type that holds back keeps 1...bs bytes for the buffer.
        let whole = Self.holdsBackFullBlock ? (n > 0 ? (n - 1) / bs : 0) : n / bs
        if whole > 0 {
            compressBlocks(p, whole)
            p += whole * bs
            n -= whole * bs
        }
        if n > 0 {
            withUnsafeMutableBytes(of: &pendingBlock) { b in b.baseAddress!.copyMemory(from: p, byteCount: n) }
            pendingCount = n
        }
    }
}
