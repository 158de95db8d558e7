// The hash kernels on architectures without one (everything but x86_64 today; an arm64 SHA-2 kernel
// would get its own `+arm64.swift` file). The choices in Platform/Kernels.swift are inactive here, so
// no engine reaches these entry points.
#if !arch(x86_64) || RAMPART_TYPECHECK_ARM64

/// No SHA-1/SHA-256 kernel on this architecture: an empty list of tiers.
enum SHAKernelTier: CaseIterable {
    var name: String { "" }
    func supported(_ f: CPUFeatures) -> Bool { false }
}

enum SHA1Kernel {
    typealias Tier = SHAKernelTier
    static let name: String? = nil
    static func tier(_ f: CPUFeatures) -> Tier? { nil }
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static let selected: Tier? = nil
    static func blocks(_ words: inout SIMD8<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int) {
        preconditionFailure("unreachable: Kernels.sha1 is inactive on this architecture")
    }
    static func blocks(_ tier: Tier, _ words: inout SIMD8<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int) {
        preconditionFailure("unreachable: no SHA-1 kernel on this architecture")
    }
}

enum SHA256Kernel {
    typealias Tier = SHAKernelTier
    static let name: String? = nil
    static func tier(_ f: CPUFeatures) -> Tier? { nil }
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static let selected: Tier? = nil
    static func blocks(_ words: inout SIMD8<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int,
                       _ k: UnsafePointer<UInt32>) {
        preconditionFailure("unreachable: Kernels.sha256 is inactive on this architecture")
    }
    static func blocks(_ tier: Tier, _ words: inout SIMD8<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int,
                       _ k: UnsafePointer<UInt32>) {
        preconditionFailure("unreachable: no SHA-256 kernel on this architecture")
    }
}

enum SHA256LanesKernel {
    enum Tier: CaseIterable {
        var name: String { "" }
        func capable(_ f: CPUFeatures) -> Bool { false }
        var lanes: Int { 1 }
        var tableBytes: Int { 0 }
        func forJobs(_ jobs: Int, _ f: CPUFeatures) -> Tier { self }
    }
    static let name: String? = nil
    static func tier(_ f: CPUFeatures) -> Tier? { nil }
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static let selected: Tier? = nil
    static func compress(_ tier: Tier, _ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                         _ strides: UnsafePointer<Int>, _ n: Int, _ table: UnsafeMutableRawPointer) {
        preconditionFailure("unreachable: Kernels.sha256Lanes is inactive on this architecture")
    }
}

enum SHA512Kernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static func blocks(_ words: inout SIMD8<UInt64>, _ blocks: UnsafeRawPointer, _ count: Int) {
        preconditionFailure("unreachable: Kernels.sha512 is inactive on this architecture")
    }
}

enum BLAKE2bKernel {
    static let name: String? = nil
    static func supported(_ f: CPUFeatures) -> Bool { false }
    static func blocks(_ state: UnsafeMutableRawPointer, _ blocks: UnsafeRawPointer, _ count: Int, _ lastLength: Int) {
        preconditionFailure("unreachable: Kernels.blake2b is inactive on this architecture")
    }
}

#endif
