// Run-time CPU feature detection and the one dispatch seam every primitive uses.
//
// This is the only folder of the `Rampart` target that talks to the operating system.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The instruction-set extensions Rampart's hardware kernels can use, as detected at run time.
public struct CPUFeatures: Sendable, Equatable, CustomStringConvertible {
    /// x86_64 SHA extensions (SHA-1 and SHA-256 rounds).
    public var sha = false
    /// x86_64 AES-NI.
    public var aes = false
    /// x86_64 carry-less multiply.
    public var pclmul = false
    /// x86_64 SSSE3 (byte shuffles).
    public var ssse3 = false
    /// x86_64 SSE4.1.
    public var sse41 = false
    /// x86_64 AVX2 (256-bit integer vectors).
    public var avx2 = false
    /// x86_64 BMI2 (`rorx`, `mulx`).
    public var bmi2 = false
    /// x86_64 ADX (`adcx`, `adox`).
    public var adx = false
    /// x86_64 vector AES on 256-bit registers.
    public var vaes = false
    /// x86_64 vector carry-less multiply on 256-bit registers.
    public var vpclmulqdq = false
    /// x86_64 AVX-512 Foundation with the VL extension (EVEX operations on 256-bit registers:
    /// rotates, ternary logic), with the AVX2 tier.
    public var avx512vl = false
    /// x86_64 AVX-512 integer fused multiply-add on 52-bit digits (`vpmadd52luq`/`vpmadd52huq`), with
    /// AVX-512F and VL and the AVX2 tier (reported only together with ``avx512vl``).
    public var avx512ifma = false
    /// arm64 AES instructions (`aese`, `aesd`, `aesmc`, `aesimc`).
    public var armAES = false
    /// arm64 64-bit polynomial multiply (`pmull`).
    public var armPMULL = false
    /// arm64 SHA-1 instructions (`sha1c`, `sha1p`, `sha1m`, `sha1h`, `sha1su0`, `sha1su1`).
    public var armSHA1 = false
    /// arm64 SHA-256 instructions (`sha256h`, `sha256h2`, `sha256su0`, `sha256su1`).
    public var armSHA2 = false
    /// arm64 SHA-512 instructions of ARMv8.2 (`sha512h`, `sha512h2`, `sha512su0`, `sha512su1`).
    public var armSHA512 = false

    public init() {}

    /// Every feature with its name, in a fixed order.
    nonisolated(unsafe) static let all: [(name: String, flag: WritableKeyPath<CPUFeatures, Bool>)] = [
        ("sha", \.sha), ("aes", \.aes), ("pclmulqdq", \.pclmul), ("ssse3", \.ssse3), ("sse4.1", \.sse41),
        ("avx2", \.avx2), ("bmi2", \.bmi2), ("adx", \.adx), ("vaes", \.vaes), ("vpclmulqdq", \.vpclmulqdq),
        ("avx512vl", \.avx512vl), ("avx512ifma", \.avx512ifma),
        ("arm-aes", \.armAES), ("arm-pmull", \.armPMULL), ("arm-sha1", \.armSHA1), ("arm-sha2", \.armSHA2),
        ("arm-sha512", \.armSHA512),
    ]

    /// The names of the features that are present, in a fixed order.
    public var names: [String] { CPUFeatures.all.filter { self[keyPath: $0.flag] }.map(\.name) }

    /// These features without the named ones (names as in ``names``; unknown names are ignored).
    public func removing(_ disabled: Set<String>) -> CPUFeatures {
        var f = self
        for (name, flag) in CPUFeatures.all where disabled.contains(name) { f[keyPath: flag] = false }
        return f
    }

    public var description: String { names.joined(separator: " ") }
}

/// Which implementation of a primitive to run.
public struct Backend: Sendable, Hashable, CustomStringConvertible {
    /// `0xFFFF`: hardware, `0xFFFE`: portable, else a pin (primitive number, implementation index).
    @usableFromInline let code: UInt16

    @inlinable init(code: UInt16) { self.code = code }

    init(primitiveID: UInt8, implementationIndex: UInt8) {
        code = UInt16(primitiveID) << 8 | UInt16(implementationIndex)
    }

    /// The portable, constant-time Swift implementation.
    public static let portable = Backend(code: 0xFFFE)
    /// The implementation each primitive's registry selected: a hardware kernel the CPU supports whose
    /// self-test passed, else the portable code.
    public static let hardware = Backend(code: 0xFFFF)

    var primitiveID: UInt8 { UInt8(truncatingIfNeeded: code >> 8) }
    var implementationIndex: UInt8 { UInt8(truncatingIfNeeded: code) }

    /// `hardware`, `portable`, or `sha256=avx2` for a pin.
    public var description: String {
        switch code {
        case Backend.hardware.code: return "hardware"
        case Backend.portable.code: return "portable"
        default: return Registries.describe(self)
        }
    }
}

/// CPU facts, read once at first use.
public enum CPU {
    /// The features the processor and operating system report.
    public static let detected: CPUFeatures = detect()

    /// `true` when `RAMPART_FORCE_PORTABLE=1` is set in the environment.
    public static let forcePortable: Bool = {
        guard let v = getenv("RAMPART_FORCE_PORTABLE") else { return false }
        let s = String(cString: v)
        return s == "1" || s == "true" || s == "yes"
    }()

    /// Features turned off one by one with `RAMPART_DISABLE_FEATURES` (comma-separated names as in
    /// ``CPUFeatures/names``, e.g. `sha`: valgrind does not implement SHA-NI, so the constant-time
    /// check runs with the portable hashes and every other kernel).
    public static let disabledFeatures: Set<String> = {
        guard let v = getenv("RAMPART_DISABLE_FEATURES") else { return [] }
        return Set(String(cString: v).split(separator: ",").map { String($0).trimmingCharacters() })
    }()

    /// The features hardware kernels may use: `detected` without ``disabledFeatures``, or none when
    /// the portable path is forced.
    public static let features: CPUFeatures = forcePortable ? CPUFeatures() : detected.removing(disabledFeatures)

    /// The backend new objects use unless told otherwise.
    public static let defaultBackend: Backend = forcePortable ? .portable : .hardware

    /// A short description of the processor (model name), for benchmark reports.
    public static let modelName: String = readModelName()

    /// Whether the processor is AMD's (`vendor_id` AuthenticAMD on Linux, `machdep.cpu.vendor` on
    /// Darwin). Not a feature: kernels that both vendors run correctly but at different speeds choose
    /// by it (Kernels.modexp2048).
    public static let isAMD: Bool = {
        #if os(Linux)
        return cpuinfoField("vendor_id") == "AuthenticAMD"
        #elseif canImport(Darwin)
        var size = 0
        guard sysctlbyname("machdep.cpu.vendor", nil, &size, nil, 0) == 0, size > 0 else { return false }
        var buf = [CChar](repeating: 0, count: size)
        guard sysctlbyname("machdep.cpu.vendor", &buf, &size, nil, 0) == 0 else { return false }
        return String(cString: buf) == "AuthenticAMD"
        #else
        return false
        #endif
    }()

    /// Whether the processor executes 512-bit AVX-512 instructions at full width (AMD from the Zen 5
    /// family, 0x1A, on: four 512-bit units; Zen 4 splits each into two 256-bit halves, and Intel's
    /// cores lower their clock under 512-bit code). Not a feature: only the 512-bit SHA-256 lane
    /// kernels choose by it; false where it cannot be read.
    public static let fullWidthAVX512: Bool = {
        #if os(Linux)
        guard isAMD, features.avx512vl, let family = cpuinfoField("cpu family").flatMap({ Int($0) }) else { return false }
        return family >= 0x1A
        #else
        return false
        #endif
    }()

    private static func readFile(_ path: String) -> String? {
        #if os(Linux)
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > 1 << 22 { break }
        }
        return String(decoding: bytes, as: UTF8.self)
        #else
        return nil
        #endif
    }

    private static func cpuinfoField(_ name: String) -> String? {
        guard let text = readFile("/proc/cpuinfo") else { return nil }
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            if parts[0].trimmingSpaces() == name { return String(parts[1].trimmingSpaces()) }
        }
        return nil
    }

    private static func readModelName() -> String {
        #if os(Linux)
        return cpuinfoField("model name") ?? cpuinfoField("CPU part").map { "arm64 part \($0)" } ?? "unknown"
        #elseif canImport(Darwin)
        var size = 0
        guard sysctlbyname("machdep.cpu.brand_string", nil, &size, nil, 0) == 0, size > 0 else { return "unknown" }
        var buf = [CChar](repeating: 0, count: size)
        guard sysctlbyname("machdep.cpu.brand_string", &buf, &size, nil, 0) == 0 else { return "unknown" }
        return String(cString: buf)
        #else
        return "unknown"
        #endif
    }

    private static func detect() -> CPUFeatures {
        var f = CPUFeatures()
        #if os(Linux)
        #if arch(x86_64)
        guard let flags = cpuinfoField("flags") else { return f }
        let set = Set(flags.split(separator: " ").map(String.init))
        f.sha = set.contains("sha_ni")
        f.aes = set.contains("aes")
        f.pclmul = set.contains("pclmulqdq")
        f.ssse3 = set.contains("ssse3")
        f.sse41 = set.contains("sse4_1")
        // The AVX2 kernel tier (RampartAccelAVX2) is compiled with +bmi and +bmi2 as well: every
        // processor with AVX2 has them, but a virtual machine may hide a flag, so require all four.
        f.avx2 = set.contains("avx2") && set.contains("avx") && set.contains("bmi1") && set.contains("bmi2")
        f.bmi2 = set.contains("bmi2")
        f.adx = set.contains("adx")
        f.vaes = set.contains("vaes")
        f.vpclmulqdq = set.contains("vpclmulqdq")
        f.avx512vl = f.avx2 && set.contains("avx512f") && set.contains("avx512vl")
        f.avx512ifma = f.avx512vl && f.bmi2 && f.adx && set.contains("avx512ifma")
        #elseif arch(arm64)
        f = CPUFeatures(linuxHWCAP: linuxAuxiliaryValue(linuxAT_HWCAP), hwcap2: linuxAuxiliaryValue(linuxAT_HWCAP2))
        #endif
        #elseif canImport(Darwin)
        func has(_ name: String) -> Bool? {
            var v: Int32 = 0
            var size = MemoryLayout<Int32>.size
            return sysctlbyname(name, &v, &size, nil, 0) == 0 ? v != 0 : nil
        }
        #if arch(arm64)
        f = CPUFeatures(appleSysctl: has)
        #elseif arch(x86_64)
        func present(_ name: String) -> Bool { has(name) ?? false }
        f.aes = present("hw.optional.aes")
        f.ssse3 = present("hw.optional.supplementalsse3")
        f.sse41 = present("hw.optional.sse4_1")
        f.avx2 = present("hw.optional.avx2_0") && present("hw.optional.bmi1") && present("hw.optional.bmi2")
        f.bmi2 = present("hw.optional.bmi2")
        f.pclmul = f.aes  // every Mac with AES-NI has PCLMULQDQ
        f.avx512vl = f.avx2 && present("hw.optional.avx512f") && present("hw.optional.avx512vl")
        f.avx512ifma = f.avx512vl && f.bmi2 && present("hw.optional.adx") && present("hw.optional.avx512ifma")
        #endif
        #endif
        return f
    }
}

// MARK: - arm64 feature decoding (pure, so that the tests check it on any machine)

/// `getauxval`'s keys for the hardware capability words (Linux `<elf.h>`: AT_HWCAP 16, AT_HWCAP2 26).
let linuxAT_HWCAP: UInt = 16, linuxAT_HWCAP2: UInt = 26

#if os(Linux)
@_silgen_name("getauxval") private func c_getauxval(_ type: UInt) -> UInt

/// The auxiliary vector's value for `key` (0 when absent).
func linuxAuxiliaryValue(_ key: UInt) -> UInt64 { UInt64(c_getauxval(key)) }
#endif

extension CPUFeatures {
    /// The arm64 features in Linux's hardware capability words (`getauxval(AT_HWCAP)` and
    /// `AT_HWCAP2`; bits from the kernel's `arch/arm64/include/uapi/asm/hwcap.h`: HWCAP_AES 1 << 3,
    /// HWCAP_PMULL 1 << 4, HWCAP_SHA1 1 << 5, HWCAP_SHA2 1 << 6, HWCAP_SHA512 1 << 21). AT_HWCAP2 carries
    /// none of the features the kernels use today; it is read so that later ones can be added here.
    init(linuxHWCAP hwcap: UInt64, hwcap2: UInt64) {
        self.init()
        armAES = hwcap & (1 << 3) != 0
        armPMULL = hwcap & (1 << 4) != 0
        armSHA1 = hwcap & (1 << 5) != 0
        armSHA2 = hwcap & (1 << 6) != 0
        armSHA512 = hwcap & (1 << 21) != 0
        _ = hwcap2
    }

    /// The arm64 features Apple's `sysctlbyname` reports (`hw.optional.arm.FEAT_AES`, `FEAT_PMULL`,
    /// `FEAT_SHA1`, `FEAT_SHA256`, `FEAT_SHA512`: 1 or 0; nil when the name is unknown, as on macOS and iOS
    /// before 12 and 15). Every Apple arm64 processor has AES, PMULL, SHA-1 and SHA-256, so an unknown
    /// name counts as present for those four and absent for SHA-512.
    init(appleSysctl has: (String) -> Bool?) {
        self.init()
        armAES = has("hw.optional.arm.FEAT_AES") ?? true
        armPMULL = has("hw.optional.arm.FEAT_PMULL") ?? true
        armSHA1 = has("hw.optional.arm.FEAT_SHA1") ?? true
        armSHA2 = has("hw.optional.arm.FEAT_SHA256") ?? true
        armSHA512 = has("hw.optional.arm.FEAT_SHA512") ?? false
    }
}

extension String {
    func trimmingCharacters() -> String { String(Substring(self).trimmingSpaces()) }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}
