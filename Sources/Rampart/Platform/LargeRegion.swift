// Large working regions (scrypt's V) mapped directly from the kernel.
//
// scrypt's second loop reads 128·r-byte blocks at random offsets of a region of 128·r·N bytes. With
// 4 KiB pages nearly every such read misses the TLB (64 MiB is 16 384 pages, several times what the
// second-level TLB holds), and the page walk sits on the critical path because the next index
// depends on the block just read. Backing the region with 2 MiB transparent huge pages (Linux
// `madvise(MADV_HUGEPAGE)`, honoured when THP is in `madvise` or `always` mode) removes those misses.
// The mapping is aligned to 2 MiB so that whole huge pages fit; only pages that are touched count
// toward the resident set, so the alignment slack costs address space, not memory.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A zero-filled, read-write region of at least `byteCount` bytes, 64-byte aligned.
/// Call ``release()`` exactly once; it wipes the region and returns it to the system.
struct LargeRegion {
    /// First usable byte.
    let base: UnsafeMutableRawPointer
    /// Usable bytes (what was asked for).
    let byteCount: Int
    /// What to unmap, when the region came from `mmap`; nil for a heap allocation.
    private let mapping: (start: UnsafeMutableRawPointer, length: Int)?

    /// Regions below this size come from the heap: huge pages would not pay for the system calls.
    static let mappingThreshold = 4 << 20
    private static let hugePage = 2 << 20

    init(byteCount: Int) {
        self.byteCount = byteCount
        #if os(Linux)
        if byteCount >= Self.mappingThreshold, let m = Self.mapAligned(byteCount) {
            base = m.base
            mapping = (m.start, m.length)
            return
        }
        #endif
        base = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
        mapping = nil
    }

    #if os(Linux)
    /// Maps `byteCount` bytes (rounded up to whole pages) at a 2 MiB boundary and asks for huge pages.
    private static func mapAligned(_ byteCount: Int) -> (start: UnsafeMutableRawPointer, length: Int,
                                                          base: UnsafeMutableRawPointer)? {
        let page = 4096
        let length = (byteCount + page - 1) & ~(page - 1)
        let (padded, overflow) = length.addingReportingOverflow(hugePage)
        guard !overflow else { return nil }
        guard let raw = mmap(nil, padded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              raw != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        // Trim to a 2 MiB-aligned start; give the head and tail slack back.
        let address = UInt(bitPattern: raw)
        let aligned = (address + UInt(hugePage - 1)) & ~UInt(hugePage - 1)
        let head = Int(aligned - address)
        let tail = padded - head - length
        if head > 0 { munmap(raw, head) }
        let start = raw + head
        if tail > 0 { munmap(start + length, tail) }
        // Advisory: if THP is disabled this fails harmlessly and the region keeps 4 KiB pages.
        _ = madvise(start, length, Int32(MADV_HUGEPAGE))
        return (start, length, start)
    }
    #endif

    /// Wipes the region and returns it to the system.
    func release() {
        secureZero(UnsafeMutableRawBufferPointer(start: base, count: byteCount))
        #if os(Linux)
        if let m = mapping {
            munmap(m.start, m.length)
            return
        }
        #endif
        base.deallocate()
    }
}
