// x86_64 bindings of the hash kernels (see Platform/Kernels.swift): SHA-1 and SHA-256 on the SHA
// extensions (RampartAccelSHA) or, without them, on AVX2 with BMI2 (RampartAccelAVX2); SHA-512 on
// AVX2 with BMI2; BLAKE2b on AVX2 or in scalar registers with BMI2 (RampartAccelBMI2).
#if arch(x86_64) && !RAMPART_TYPECHECK_ARM64

internal import RampartAccelSHA
internal import RampartAccelAVX2
internal import RampartAccelBMI2

/// The x86_64 SHA-1 and SHA-256 kernels, best first: the SHA extensions, then an AVX2 message schedule
/// with BMI2 rounds for processors without them.
enum SHAKernelTier: CaseIterable {
    case shaNI, avx2

    var name: String {
        switch self {
        case .shaNI: "sha-ni"
        case .avx2: "avx2"
        }
    }

    /// `avx2` implies BMI1 and BMI2 (CPU.swift requires all of them for the AVX2 tier).
    func supported(_ f: CPUFeatures) -> Bool {
        switch self {
        case .shaNI: f.sha && f.ssse3 && f.sse41
        case .avx2: f.avx2
        }
    }
}

enum SHA1Kernel {
    typealias Tier = SHAKernelTier

    /// The best kernel this architecture has.
    static let name: String? = Tier.shaNI.name
    /// The best kernel the processor runs, if any.
    static func tier(_ f: CPUFeatures) -> Tier? { Tier.allCases.first { $0.supported(f) } }
    static func supported(_ f: CPUFeatures) -> Bool { tier(f) != nil }
    /// The kernel `Kernels.sha1` runs (`nil` when that choice is inactive).
    static let selected: Tier? = tier(CPU.features)

    /// Compresses `count` 64-byte blocks into the five state words with the selected kernel.
    @inline(__always)
    static func blocks(_ words: inout SIMD8<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int) {
        self.blocks(selected ?? .avx2, &words, blocks, count)
    }

    /// Compresses with the given kernel, which the caller has checked the processor supports.
    @inline(__always)
    static func blocks(_ tier: Tier, _ words: inout SIMD8<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int) {
        withUnsafeMutablePointer(to: &words) { w in
            w.withMemoryRebound(to: UInt32.self, capacity: 8) { state in
                switch tier {
                case .shaNI: sha1BlocksSHANI(state, blocks, count)
                case .avx2: sha1BlocksAVX2(state, blocks, count)
                }
            }
        }
    }
}

enum SHA256Kernel {
    typealias Tier = SHAKernelTier

    /// The best kernel this architecture has.
    static let name: String? = Tier.shaNI.name
    /// The best kernel the processor runs, if any.
    static func tier(_ f: CPUFeatures) -> Tier? { Tier.allCases.first { $0.supported(f) } }
    static func supported(_ f: CPUFeatures) -> Bool { tier(f) != nil }
    /// The kernel `Kernels.sha256` runs (`nil` when that choice is inactive).
    static let selected: Tier? = tier(CPU.features)

    /// The round constants as the AVX2 kernel reads them: K[4j..4j+3] twice (once per block of a pair).
    static let constantQuads: [UInt32] = {
        var t: [UInt32] = []
        t.reserveCapacity(128)
        for j in 0..<16 {
            for _ in 0..<2 { for i in 0..<4 { t.append(sha256K[4 * j + i]) } }
        }
        return t
    }()

    /// Compresses `count` 64-byte blocks into the eight state words with the selected kernel (`k`: the
    /// 64 round constants in order).
    @inline(__always)
    static func blocks(_ words: inout SIMD8<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int,
                       _ k: UnsafePointer<UInt32>) {
        self.blocks(selected ?? .avx2, &words, blocks, count, k)
    }

    /// Compresses with the given kernel, which the caller has checked the processor supports.
    @inline(__always)
    static func blocks(_ tier: Tier, _ words: inout SIMD8<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int,
                       _ k: UnsafePointer<UInt32>) {
        withUnsafeMutablePointer(to: &words) { w in
            w.withMemoryRebound(to: UInt32.self, capacity: 8) { state in
                switch tier {
                case .shaNI:
                    sha256BlocksSHANI(state, blocks, count, k)
                case .avx2:
                    constantQuads.withUnsafeBufferPointer { sha256BlocksAVX2(state, blocks, count, $0.baseAddress!) }
                }
            }
        }
    }
}

/// SHA-256 of several independent messages at once (MTProto's batch encryption). On processors with
/// full-width 512-bit units (Zen 5), sixteen or thirty-two messages, one per lane of 512-bit registers
/// (`avx512-x16`, `avx512-x32`: about 59 and 46 cycles per block and message, against about 85 for
/// two SHA-NI chains). Elsewhere with the SHA extensions, two messages whose `sha256rnds2` chains
/// alternate (`sha-ni-x2`: one chain leaves the SHA unit idle between dependent rounds,
/// RampartAccelSHA/SHA256NI.swift). Without them, eight messages, one per lane of 256-bit registers:
/// eight messages in vectors do about three times the work per cycle of the scalar rounds. Two
/// builds of that source: with AVX-512VL (vprord, vpternlogd) where present, else AVX2.
enum SHA256LanesKernel {
    enum Tier: CaseIterable {
        case avx512x32, avx512x16, shaNI, avx512, avx2

        var name: String {
            switch self {
            case .avx512x32: "avx512-x32"
            case .avx512x16: "avx512-x16"
            case .shaNI: "sha-ni-x2"
            case .avx512: "avx512vl-x8"
            case .avx2: "avx2-x8"
            }
        }

        func capable(_ f: CPUFeatures) -> Bool {
            switch self {
            case .avx512x32, .avx512x16, .avx512: f.avx512vl
            case .shaNI: SHAKernelTier.shaNI.supported(f)
            case .avx2: f.avx2
            }
        }

        /// Messages per kernel call.
        var lanes: Int {
            switch self {
            case .avx512x32: 32
            case .avx512x16: 16
            case .shaNI: 2
            case .avx512, .avx2: 8
            }
        }
        /// Scratch bytes `compress` needs in `table`: the vector kernels' transposed schedules.
        var tableBytes: Int {
            switch self {
            case .avx512x32: 8192
            case .avx512x16: 4096
            case .shaNI: 0
            case .avx512, .avx2: 2048
            }
        }

        /// The tier to run `jobs` jobs with when this one is selected: the 512-bit kernels give way
        /// to narrower ones when too many of their lanes would idle (break-even from the per-block
        /// costs above: 32 lanes pay from 17 jobs, 16 lanes against two SHA-NI chains from 11).
        func forJobs(_ jobs: Int, _ f: CPUFeatures) -> Tier {
            switch self {
            case .avx512x32 where jobs <= 16: Tier.avx512x16.forJobs(jobs, f)
            case .avx512x16 where jobs < 11 && Tier.shaNI.capable(f): .shaNI
            default: self
            }
        }
    }

    /// The tier the registry selects, if any. On processors with full-width 512-bit units, the
    /// 32-lane kernel (narrower ones for fewer jobs, `Tier.forJobs`). With the SHA extensions: the
    /// two-message kernel on AMD processors (Zen 4: 1.47x the throughput of two single-message calls)
    /// and none on Intel's, where interleaving did not pay (Sapphire Rapids: about 125 cycles per block
    /// and message with four chains interleaved against 103 alone), so the jobs run one by one there.
    /// Without them the eight-lane kernels.
    static func tier(_ f: CPUFeatures, fullWidth512: Bool) -> Tier? {
        if fullWidth512 && Tier.avx512x32.capable(f) { return .avx512x32 }
        if Tier.shaNI.capable(f) { return CPU.isAMD ? .shaNI : nil }
        return Tier.allCases.first { ($0 == .avx512 || $0 == .avx2) && $0.capable(f) }
    }
    static func supported(_ f: CPUFeatures) -> Bool { tier(f, fullWidth512: CPU.fullWidthAVX512) != nil }
    static let selected: Tier? = tier(CPU.features, fullWidth512: CPU.fullWidthAVX512)
    /// The name `Kernels.sha256Lanes` shows.
    static let name: String? = selected?.name ?? Tier.avx2.name

    /// `n` blocks on each of `tier.lanes` lanes (state pointers, data pointers, byte strides) with the
    /// given tier, which the caller has checked the processor runs; `table` is `tier.tableBytes` of
    /// scratch (the vector kernels' transposed schedules, 64-byte aligned).
    @inline(__always)
    static func compress(_ tier: Tier, _ states: UnsafePointer<UnsafeMutablePointer<UInt32>>, _ data: UnsafePointer<UnsafeMutableRawPointer>,
                         _ strides: UnsafePointer<Int>, _ n: Int, _ table: UnsafeMutableRawPointer) {
        sha256K.withUnsafeBufferPointer { k in
            switch tier {
            case .avx512x32: SHA256LanesAVX512.compress32(states, data, strides, n, k.baseAddress!, table)
            case .avx512x16: SHA256LanesAVX512.compress16(states, data, strides, n, k.baseAddress!, table)
            case .shaNI: sha256BlocksSHANIx2(states, data, strides, n, k.baseAddress!)
            case .avx512: SHA256LanesAVX512.compress(states, data, strides, n, k.baseAddress!, table)
            case .avx2: sha256Lanes8AVX2(states, data, strides, n, k.baseAddress!, table)
            }
        }
    }
}

enum SHA512Kernel {
    static let name: String? = "avx2"
    /// `avx2` implies BMI1 and BMI2 (CPU.swift requires all of them for the AVX2 tier).
    static func supported(_ f: CPUFeatures) -> Bool { f.avx2 }

    /// The round constants as the AVX2 kernel reads them: K[2j], K[2j+1] twice (once per block of a
    /// pair).
    static let constantPairs: [UInt64] = {
        var t: [UInt64] = []
        t.reserveCapacity(160)
        for j in 0..<40 {
            let k0: UInt64 = sha512K[2 * j], k1: UInt64 = sha512K[2 * j + 1]
            t.append(k0); t.append(k1); t.append(k0); t.append(k1)
        }
        return t
    }()

    /// Compresses `count` 128-byte blocks into the eight state words.
    @inline(__always)
    static func blocks(_ words: inout SIMD8<UInt64>, _ blocks: UnsafeRawPointer, _ count: Int) {
        constantPairs.withUnsafeBufferPointer { k in
            withUnsafeMutableBytes(of: &words) { w in
                withScratch1280 { table in
                    sha512BlocksAVX2(w.baseAddress!.assumingMemoryBound(to: UInt64.self), blocks, count,
                                     k.baseAddress!, table)
                }
            }
        }
    }
}

enum BLAKE2bKernel {
    /// The BLAKE2b kernels: the four columns in one AVX2 vector, or in four scalar chains with BMI2
    /// `rorx` (RampartAccelBMI2/BLAKE2bBMI2.swift gives the figures).
    enum Tier: CaseIterable {
        case avx2, bmi2

        var name: String {
            switch self {
            case .avx2: "avx2"
            case .bmi2: "bmi2-scalar"
            }
        }

        func capable(_ f: CPUFeatures) -> Bool {
            switch self {
            case .avx2: f.avx2
            case .bmi2: f.bmi2
            }
        }
    }

    /// The preferred order: the scalar kernel first on AMD processors, where it is the faster one
    /// (about 1.8x the AVX2 kernel on Zen 4), the AVX2 kernel first elsewhere (faster on the Intel
    /// cores measured).
    static let order: [Tier] = CPU.isAMD ? [.bmi2, .avx2] : [.avx2, .bmi2]
    /// The kernel the registry selects, if any.
    static let selected: Tier? = order.first { $0.capable(CPU.features) }
    static let name: String? = selected?.name ?? Tier.avx2.name
    static func supported(_ f: CPUFeatures) -> Bool { order.contains { $0.capable(f) } }
    /// The kernels the processor runs (the tests run each).
    static var available: [Tier] { CPU.forcePortable ? [] : Tier.allCases.filter { $0.capable(CPU.features) } }

    /// Compresses `count` 128-byte blocks into `state` (h[0..7], t[0], t[1]); see `blake2bCompress`.
    @inline(__always)
    static func blocks(_ state: UnsafeMutableRawPointer, _ blocks: UnsafeRawPointer, _ count: Int, _ lastLength: Int,
                       tier: Tier? = selected) {
        let s = state.assumingMemoryBound(to: UInt64.self)
        if tier == .bmi2 {
            blake2bBlocksBMI2(s, blocks, count, lastLength)
        } else {
            blake2bBlocksAVX2(s, blocks, count, lastLength)
        }
    }
}

#endif
