// The implementation registry: for each primitive with hardware kernels, its implementations in order
// of preference (the kernel tiers of this architecture, then the portable Swift code), each declaring
// its name and the CPU features it needs (RampartKernelSupport/Seam.swift). Once per process, every
// implementation the processor can run checks a published answer (a power-on self-test, as FIPS 140
// asks of a module; neither OpenSSL nor libsodium runs one by default), and the first that passes is
// selected. An implementation that fails is skipped and reported (`Kernels`, `rampart info`, the
// benchmark header): a miscompiled or mis-detected kernel falls back to correct code instead of
// producing wrong output.
//
// Objects on `Backend.hardware` run the selected implementation, on `Backend.portable` the portable
// code; the test SPI `Backend.pinned(_:to:)` runs a named one, so that tests can check every
// implementation this processor executes (`Kernels.implementations(of:)`).
//
// `RAMPART_FAULT=primitive:implementation[,…]` (for tests of this safety net) corrupts the named
// implementations' output for the whole process: their self-tests then fail and selection skips
// them.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
internal import RampartKernelSupport

/// How an implementation fared when its primitive's implementation was selected.
public enum ImplementationState: String, Sendable, Hashable {
    /// Selected: objects on `Backend.hardware` run it.
    case selected
    /// Its self-test passed; another one was preferred.
    case passed
    /// This processor runs it, but selection did not need it (a better one passed first), so its
    /// self-test was not run: only tests reach it, through a pin.
    case untested
    /// This processor lacks a feature it needs (or the portable code is forced, or it needs another
    /// primitive's kernel that was not selected).
    case unsupported
    /// Its self-test gave a wrong answer: it is never run.
    case failed
}

extension ImplementationState {
    /// Whether the processor runs it and it did not fail its self-test.
    var isRunnable: Bool { self == .selected || self == .passed || self == .untested }
}

/// One implementation of a primitive and how it fared at selection.
public struct ImplementationStatus: Sendable, Hashable, CustomStringConvertible {
    /// The implementation's name (`portable`, `sha-ni`, …).
    public let name: String
    /// Selected, passed, unsupported or failed.
    public let state: ImplementationState

    /// `"sha-ni (selected)"`.
    public var description: String { "\(name) (\(state.rawValue))" }
}

/// The process-wide fault switch: `primitive:implementation` pairs from `RAMPART_FAULT`.
enum FaultSwitch {
    static let names: Set<String> = {
        guard let v = getenv("RAMPART_FAULT") else { return [] }
        return Set(String(cString: v).split(separator: ",").map { String($0).trimmingCharacters() })
    }()
}

/// One primitive's implementations, best first with the portable code last, and the one selected.
/// `I` is the primitive's implementation protocol as an existential metatype
/// (`any SHA256Implementation.Type`).
struct Registry<I>: @unchecked Sendable {
    /// The primitive's name (`"sha256"`).
    let primitive: String
    /// The primitive's number in ``Backend`` pins.
    let id: UInt8
    /// Every implementation of this architecture, best first, the portable code last.
    let implementations: [I]
    /// How each fared, in the same order.
    let statuses: [ImplementationStatus]
    /// The implementation objects on `Backend.hardware` run.
    let selected: I
    /// The portable implementation (objects on `Backend.portable`).
    let portable: I
    /// Nanoseconds of CPU time the self-tests took together (the selecting thread's).
    let selfTestNanoseconds: UInt64

    /// Checks the candidates the processor runs in order and selects the first that passes (the
    /// ones after it, and the ones that may not be selected, are left untested).
    ///
    /// - Parameters:
    ///   - candidates: the kernel tiers best first, then the portable code (last, always supported).
    ///   - features: the processor's features as the kernels need them.
    ///   - extra: further conditions of a candidate beyond its features (another primitive's kernel
    ///     it shares state with, a vendor preference); false counts as unsupported.
    ///   - selectable: whether a candidate may be selected (false: not self-tested at start, runnable for
    ///     tests through a pin, never chosen, e.g. a build measured no faster than the next one).
    ///   - selfTest: the known-answer test.
    ///   - faulty: the candidate wrapped so that its output is corrupted (the fault switch).
    ///   - faults: `primitive:implementation` names to corrupt.
    init(_ primitive: String, id: UInt8, _ candidates: [I], features: KernelFeatures = CPU.kernelFeatures,
         name: (I) -> String, requires: (I) -> KernelFeatures, extra: (I) -> Bool = { _ in true },
         selectable: (I) -> Bool = { _ in true },
         selfTest: (I) -> Bool, faulty: (I) -> I, faults: Set<String> = FaultSwitch.names) {
        precondition(!candidates.isEmpty, "a registry needs at least the portable implementation")
        self.primitive = primitive
        self.id = id
        let start = threadCPUNanoseconds()
        var impls: [I] = []
        var states: [ImplementationState] = []
        var chosen: Int?
        for (k, c) in candidates.enumerated() {
            let isPortable = k == candidates.count - 1
            let impl = faults.contains("\(primitive):\(name(c))") ? faulty(c) : c
            impls.append(impl)
            guard isPortable || (features.isSuperset(of: requires(c)) && extra(c)) else {
                states.append(.unsupported)
                continue
            }
            // After the selection, and a kernel that may never be selected (runnable through a pin
            // only, whose callers test it against the portable code), cost no self-test at start. The
            // arm64 kernels on emulated instructions (`…-emulated`) are never selected.
            if chosen != nil || !(isPortable || (selectable(c) && !name(c).hasSuffix("-emulated"))) {
                states.append(.untested)
                continue
            }
            let ok = selfTest(impl)
            states.append(ok ? .passed : .failed)
            if ok { chosen = k }
        }
        // The portable code is run even if its self-test failed (there is nothing else); the failure
        // stays visible in `statuses`.
        let index = chosen ?? impls.count - 1
        if states[index] == .passed { states[index] = .selected }
        selfTestNanoseconds = threadCPUNanoseconds() &- start
        implementations = impls
        statuses = zip(candidates, states).map { ImplementationStatus(name: name($0), state: $1) }
        selected = impls[index]
        portable = impls[impls.count - 1]
    }

    /// The name of the selected implementation.
    var selectedName: String { statuses.first { $0.state == .selected }?.name ?? "portable" }

    /// Whether a kernel (not the portable code) is selected.
    var kernelSelected: Bool { selectedName != "portable" }

    /// The implementation an object on `backend` runs.
    @inline(__always)
    func implementation(for backend: Backend) -> I {
        if backend.code == Backend.hardware.code { return selected }
        if backend.code == Backend.portable.code { return portable }
        return pinned(backend)
    }

    /// A pinned backend's implementation: the named one for this primitive, the selected one for
    /// the others.
    @inline(never)
    func pinned(_ backend: Backend) -> I {
        guard backend.primitiveID == id, Int(backend.implementationIndex) < implementations.count else { return selected }
        return implementations[Int(backend.implementationIndex)]
    }

    /// The names of the implementations this processor runs and whose self-tests did not fail, best
    /// first.
    var runnable: [String] { statuses.filter { $0.state.isRunnable }.map(\.name) }

    /// The implementation for `backend` when that is a kernel the registry selected (`.hardware`) or
    /// one a pin names for this primitive (the portable one included); nil for `.portable` and for a
    /// selection that fell to the portable code (the caller's own portable path runs then).
    func kernelOrPin(for backend: Backend) -> I? {
        if backend.code == Backend.hardware.code { return kernelSelected ? selected : nil }
        if backend.code == Backend.portable.code { return nil }
        guard backend.primitiveID == id else { return kernelSelected ? selected : nil }
        return pinned(backend)
    }

    /// Implementation `name` when this processor runs it and its self-test passed.
    func runnableImplementation(named name: String) -> I? {
        guard let k = statuses.firstIndex(where: { $0.name == name }), statuses[k].state.isRunnable else { return nil }
        return implementations[k]
    }

    /// A backend that runs implementation `name` of this primitive; nil when it is not runnable here.
    func backend(pinnedTo name: String) -> Backend? {
        guard let k = statuses.firstIndex(where: { $0.name == name }), statuses[k].state.isRunnable else { return nil }
        return Backend(primitiveID: id, implementationIndex: UInt8(k))
    }

    /// This registry's line in `Kernels`.
    var choice: KernelChoice {
        let kernels = statuses.dropLast()
        let kernel = kernelSelected ? selectedName : kernels.first { $0.state != .unsupported }?.name ?? kernels.first?.name
        return KernelChoice(primitive, kernel: kernel, supported: kernelSelected, implementations: statuses,
                            selfTestNanoseconds: selfTestNanoseconds)
    }
}

/// The calling thread's CPU time in nanoseconds: what the self-tests cost, without the time other
/// threads and processes held the core (tests run in parallel).
func threadCPUNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

extension CPU {
    /// ``features`` as the kernels declare their needs.
    static let kernelFeatures: KernelFeatures = kernelFeatures(of: features)

    /// `f` as the kernels declare their needs.
    static func kernelFeatures(of f: CPUFeatures) -> KernelFeatures {
        var k: KernelFeatures = []
        if f.sha { k.insert(.sha) }
        if f.aes { k.insert(.aes) }
        if f.pclmul { k.insert(.pclmul) }
        if f.ssse3 { k.insert(.ssse3) }
        if f.sse41 { k.insert(.sse41) }
        if f.avx2 { k.insert(.avx2) }
        if f.bmi2 { k.insert(.bmi2) }
        if f.adx { k.insert(.adx) }
        if f.vaes { k.insert(.vaes) }
        if f.vpclmulqdq { k.insert(.vpclmulqdq) }
        if f.avx512vl { k.insert(.avx512vl) }
        if f.avx512ifma { k.insert(.avx512ifma) }
        if f.armAES { k.insert(.armAES) }
        if f.armPMULL { k.insert(.armPMULL) }
        if f.armSHA2 { k.insert(.armSHA2) }
        if f.armSHA512 { k.insert(.armSHA512) }
        return k
    }
}
