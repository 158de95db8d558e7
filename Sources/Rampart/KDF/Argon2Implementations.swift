// Argon2's implementations as the registry sees them (Platform/Registry.swift): the portable segment
// fill, the known-answer self-test and the fault switch's corrupted form. The kernel declares its own
// conformance in its module (RampartAccelAVX2/Argon2AVX2.swift).

internal import RampartKernelSupport

/// The portable segment fill (`argon2FillSegmentPortable`: the shared loop with Rampart's baseline
/// features).
enum Argon2Portable: Argon2Implementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static func fillSegment(_ memory: UnsafeMutableRawPointer, _ position: Argon2Segment, _ work: UnsafeMutableRawPointer) {
        argon2FillSegmentPortable(memory, position, work)
    }
}

/// One data-dependent Argon2id segment (pass 1, slice 2, lane 1 of sixteen blocks in two lanes: two
/// compressions G with the XOR of later passes, their reference blocks chosen by the data) over fixed
/// memory contents, against the fingerprint of the portable fill's result. Not RFC 9106's published
/// vector, which costs 88 compressions (about 45 µs per implementation in a release build and 25 ms
/// in a debug one); Argon2Tests runs that one, and every published and generated Argon2id case,
/// through every implementation.
func argon2SelfTest(_ impl: any Argon2Implementation.Type) -> Bool {
    let blocks = 16
    let memory = UnsafeMutableRawPointer.allocate(byteCount: 1024 * (blocks + 4), alignment: 64)
    defer { memory.deallocate() }
    for w in 0..<(128 * blocks) { memory.storeBytes(of: (UInt64(w) &+ 1) &* 0x9e37_79b9_7f4a_7c15, toByteOffset: 8 * w, as: UInt64.self) }
    let work = memory + 1024 * blocks
    work.initializeMemory(as: UInt8.self, repeating: 0, count: 4096)
    impl.fillSegment(memory, Argon2Segment(pass: 1, lane: 1, slice: 2, lanes: 2, laneLength: 8, memoryBlocks: blocks, passes: 2, type: 2), work)
    return selfTestFingerprint(Array(UnsafeRawBufferPointer(start: memory, count: 1024 * blocks))) == argon2SegmentFingerprint
}

/// ``argon2SelfTest(_:)``'s answer: the portable fill's memory, fingerprinted.
let argon2SegmentFingerprint: UInt64 = 0x90ff_c9b7_7040_76a0

/// The implementation with one memory bit flipped after every segment.
enum FaultyArgon2<Base: Argon2Implementation>: Argon2Implementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static func fillSegment(_ memory: UnsafeMutableRawPointer, _ position: Argon2Segment, _ work: UnsafeMutableRawPointer) {
        Base.fillSegment(memory, position, work)
        let last = 1024 * (position.lane * position.laneLength + (position.slice + 1) * position.segmentLength - 1)
        memory.storeBytes(of: memory.load(fromByteOffset: last, as: UInt8.self) ^ 1, toByteOffset: last, as: UInt8.self)
    }
}

func faultyArgon2(_ b: any Argon2Implementation.Type) -> any Argon2Implementation.Type {
    func wrap<B: Argon2Implementation>(_: B.Type) -> any Argon2Implementation.Type { FaultyArgon2<B>.self }
    return wrap(b)
}
