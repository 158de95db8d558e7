// The hashes' portable implementations as the registry sees them (Platform/Registry.swift), their
// known-answer self-tests and the fault switch's corrupted forms. The kernels declare their own
// conformances in their modules (RampartAccelSHA, RampartAccelAVX2, RampartAccelBMI2,
// RampartAccelAVX512).

internal import RampartKernelSupport

// MARK: - Portable implementations

enum SHA1Portable: SHA1Implementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static func blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int) {
        var w = SIMD8<UInt32>(state[0], state[1], state[2], state[3], state[4], 0, 0, 0)
        sha1BlocksPortable(&w, data, count)
        for i in 0..<5 { state[i] = w[i] }
    }
}

enum SHA256Portable: SHA256Implementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static func blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int) {
        var w = SIMD8<UInt32>(UnsafeBufferPointer(start: state, count: 8))
        sha256BlocksPortable(&w, data, count)
        for i in 0..<8 { state[i] = w[i] }
    }
}

enum SHA512Portable: SHA512Implementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ count: Int) {
        var w = SIMD8<UInt64>(UnsafeBufferPointer(start: state, count: 8))
        sha512BlocksPortable(&w, data, count)
        for i in 0..<8 { state[i] = w[i] }
    }
}

enum BLAKE2bPortable: BLAKE2bImplementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ count: Int, _ lastLength: Int) {
        blake2bBlocksPortable(UnsafeMutableRawPointer(state), data, count, lastLength)
    }
}

/// No lane kernel: one message per call, on the portable SHA-256 (MultiBuffer runs the jobs one by
/// one on their own backend instead when this is selected).
enum SHA256LanesPortable: SHA256LanesImplementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static let lanes = 1
    static let tableBytes = 0
    static func compress(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                         _ strides: UnsafePointer<Int>, _ n: Int, _ table: UnsafeMutableRawPointer) {
        var p = UnsafeRawPointer(data[0])
        for _ in 0..<n {
            SHA256Portable.blocks(states[0], p, 1)
            p += strides[0]
        }
    }
}

// MARK: - Known-answer self-tests

/// The one padded block of the message "abc" for SHA-1 and SHA-256 (FIPS 180-4 §5.1.1).
private func abcBlock64() -> [UInt8] {
    var b = [UInt8](repeating: 0, count: 64)
    b[0] = 0x61; b[1] = 0x62; b[2] = 0x63; b[3] = 0x80; b[63] = 24
    return b
}

/// FIPS 180-4's answer for SHA-1("abc") (FIPS 180-2 Appendix A.1).
func sha1SelfTest(_ impl: any SHA1Implementation.Type) -> Bool {
    var state: [UInt32] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0]
    let block = abcBlock64()
    state.withUnsafeMutableBufferPointer { s in block.withUnsafeBytes { impl.blocks(s.baseAddress!, $0.baseAddress!, 1) } }
    return state == [0xa9993e36, 0x4706816a, 0xba3e2571, 0x7850c26c, 0x9cd0d89d]
}

/// SHA-256's initial hash value (FIPS 180-4 §5.3.3).
private let sha256IV: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
/// SHA-256("abc") as state words (FIPS 180-2 Appendix B.1).
private let sha256ABC: [UInt32] = [0xba7816bf, 0x8f01cfea, 0x414140de, 0x5dae2223, 0xb00361a3, 0x96177a9c, 0xb410ff61, 0xf20015ad]

func sha256SelfTest(_ impl: any SHA256Implementation.Type) -> Bool {
    var state = sha256IV
    let block = abcBlock64()
    state.withUnsafeMutableBufferPointer { s in block.withUnsafeBytes { impl.blocks(s.baseAddress!, $0.baseAddress!, 1) } }
    return state == sha256ABC
}

/// SHA-512("abc") (FIPS 180-2 Appendix C.1): one padded 128-byte block from the initial value.
func sha512SelfTest(_ impl: any SHA512Implementation.Type) -> Bool {
    var state: [UInt64] = [0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
                           0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179]
    var block = [UInt8](repeating: 0, count: 128)
    block[0] = 0x61; block[1] = 0x62; block[2] = 0x63; block[3] = 0x80; block[127] = 24
    state.withUnsafeMutableBufferPointer { s in block.withUnsafeBytes { impl.blocks(s.baseAddress!, $0.baseAddress!, 1) } }
    return state == [0xddaf35a193617aba, 0xcc417349ae204131, 0x12e6fa4e89a97ea2, 0x0a9eeee64b55d39a,
                     0x2192992a274fc1a8, 0x36ba3c23a3feebbd, 0x454d4423643ce80e, 0x2a9ac94fa54ca49f]
}

/// BLAKE2b-512("abc") (RFC 7693 Appendix A): the parameter block folded into the IV, one final block
/// of 3 bytes.
func blake2bSelfTest(_ impl: any BLAKE2bImplementation.Type) -> Bool {
    var state: [UInt64] = [blake2bIV.0 ^ 0x0101_0040, blake2bIV.1, blake2bIV.2, blake2bIV.3,
                           blake2bIV.4, blake2bIV.5, blake2bIV.6, blake2bIV.7, 0, 0]
    var block = [UInt8](repeating: 0, count: 128)
    block[0] = 0x61; block[1] = 0x62; block[2] = 0x63
    state.withUnsafeMutableBufferPointer { s in block.withUnsafeBytes { impl.blocks(s.baseAddress!, $0.baseAddress!, 1, 3) } }
    return Array(state[0..<8]) == [0x0d4d1c983fa580ba, 0xe9f6129fb697276a, 0xb7c45a68142f214c, 0xd1a2ffdb6fbb124b,
                                   0x2d79ab2a39c5877d, 0x95cc3345ded552c2, 0x5a92f1dba88ad318, 0x239900d4ed8623b9]
}

/// SHA-256("abc") on every lane at once, each lane's block at its own address (stride 0: one block).
func sha256LanesSelfTest(_ impl: any SHA256LanesImplementation.Type) -> Bool {
    let lanes = impl.lanes
    var states = [[UInt32]](repeating: sha256IV, count: lanes)
    var blocks = [[UInt8]](repeating: abcBlock64(), count: lanes)
    var table = [UInt8](repeating: 0, count: impl.tableBytes + 64)
    var statePointers: [UnsafeMutablePointer<UInt32>] = []
    var dataPointers: [UnsafeMutableRawPointer] = []
    // Stable addresses for the call: copy into allocations the test owns.
    let stateArea = UnsafeMutablePointer<UInt32>.allocate(capacity: 8 * lanes)
    let blockArea = UnsafeMutableRawPointer.allocate(byteCount: 64 * lanes, alignment: 64)
    defer { stateArea.deallocate(); blockArea.deallocate() }
    for l in 0..<lanes {
        for i in 0..<8 { stateArea[8 * l + i] = states[l][i] }
        blocks[l].withUnsafeBytes { blockArea.advanced(by: 64 * l).copyMemory(from: $0.baseAddress!, byteCount: 64) }
        statePointers.append(stateArea + 8 * l)
        dataPointers.append(blockArea + 64 * l)
    }
    let strides = [Int](repeating: 0, count: lanes)
    table.withUnsafeMutableBytes { t in
        // 64-byte alignment inside the array.
        let base = t.baseAddress!
        let aligned = base + (64 - Int(bitPattern: base) & 63) & 63
        statePointers.withUnsafeBufferPointer { s in
            dataPointers.withUnsafeBufferPointer { d in
                strides.withUnsafeBufferPointer { impl.compress(s.baseAddress!, d.baseAddress!, $0.baseAddress!, 1, aligned) }
            }
        }
    }
    for l in 0..<lanes { states[l] = Array(UnsafeBufferPointer(start: stateArea + 8 * l, count: 8)) }
    return states.allSatisfy { $0 == sha256ABC }
}

// MARK: - The fault switch's corrupted forms

/// The implementation with one state bit flipped after every call.
enum FaultySHA1<Base: SHA1Implementation>: SHA1Implementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static func blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int) {
        Base.blocks(state, data, count)
        state[0] ^= 1
    }
}

enum FaultySHA256<Base: SHA256Implementation>: SHA256Implementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static func blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int) {
        Base.blocks(state, data, count)
        state[0] ^= 1
    }
}

enum FaultySHA512<Base: SHA512Implementation>: SHA512Implementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ count: Int) {
        Base.blocks(state, data, count)
        state[0] ^= 1
    }
}

enum FaultyBLAKE2b<Base: BLAKE2bImplementation>: BLAKE2bImplementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ count: Int, _ lastLength: Int) {
        Base.blocks(state, data, count, lastLength)
        state[0] ^= 1
    }
}

enum FaultySHA256Lanes<Base: SHA256LanesImplementation>: SHA256LanesImplementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static var lanes: Int { Base.lanes }
    static var tableBytes: Int { Base.tableBytes }
    static func compress(_ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                         _ strides: UnsafePointer<Int>, _ n: Int, _ table: UnsafeMutableRawPointer) {
        Base.compress(states, data, strides, n, table)
        states[0][0] ^= 1
    }
}

func faultySHA1(_ b: any SHA1Implementation.Type) -> any SHA1Implementation.Type {
    func wrap<B: SHA1Implementation>(_: B.Type) -> any SHA1Implementation.Type { FaultySHA1<B>.self }
    return wrap(b)
}
func faultySHA256(_ b: any SHA256Implementation.Type) -> any SHA256Implementation.Type {
    func wrap<B: SHA256Implementation>(_: B.Type) -> any SHA256Implementation.Type { FaultySHA256<B>.self }
    return wrap(b)
}
func faultySHA512(_ b: any SHA512Implementation.Type) -> any SHA512Implementation.Type {
    func wrap<B: SHA512Implementation>(_: B.Type) -> any SHA512Implementation.Type { FaultySHA512<B>.self }
    return wrap(b)
}
func faultyBLAKE2b(_ b: any BLAKE2bImplementation.Type) -> any BLAKE2bImplementation.Type {
    func wrap<B: BLAKE2bImplementation>(_: B.Type) -> any BLAKE2bImplementation.Type { FaultyBLAKE2b<B>.self }
    return wrap(b)
}
func faultySHA256Lanes(_ b: any SHA256LanesImplementation.Type) -> any SHA256LanesImplementation.Type {
    func wrap<B: SHA256LanesImplementation>(_: B.Type) -> any SHA256LanesImplementation.Type { FaultySHA256Lanes<B>.self }
    return wrap(b)
}
