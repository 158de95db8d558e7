// The registry's safety net (Platform/Registry.swift): an implementation whose output is corrupted
// (the fault switch) fails its known-answer self-test and is skipped, and what is selected instead
// gives the published answers; the portable code, failing, is still run and reported; pins reach
// exactly the named implementation.

@_spi(Testing) @testable import Rampart
internal import RampartKernelSupport
import Glibc
import Testing

private func sha256ABC(_ impl: any SHA256Implementation.Type) -> [UInt32] {
    var state: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
    var block = [UInt8](repeating: 0, count: 64)
    block[0] = 0x61; block[1] = 0x62; block[2] = 0x63; block[3] = 0x80; block[63] = 24
    state.withUnsafeMutableBufferPointer { s in block.withUnsafeBytes { impl.blocks(s.baseAddress!, $0.baseAddress!, 1) } }
    return state
}

private let publishedABC: [UInt32] = [0xba7816bf, 0x8f01cfea, 0x414140de, 0x5dae2223, 0xb00361a3, 0x96177a9c, 0xb410ff61, 0xf20015ad]

private func sha256Registry(faults: Set<String>) -> Registry<any SHA256Implementation.Type> {
    Registry("sha256", id: 2, Registries.sha256Candidates, name: { $0.name }, requires: { $0.requires },
             selfTest: sha256SelfTest, faulty: { faultySHA256($0) }, faults: faults)
}

@Suite("Implementation registry")
struct RegistryTests {
    /// Each runnable implementation in turn is corrupted: selection skips it, the one selected gives
    /// FIPS 180's answer, and the corrupted one really gives a wrong one (so the test would fail if
    /// selection ignored the self-test).
    @Test func aFaultyImplementationIsSkipped() {
        let clean = sha256Registry(faults: [])
        // The arm64 kernels on emulated instructions are never selected (so never self-tested at start).
        for (k, name) in clean.runnable.enumerated() where !name.hasSuffix("-emulated") {
            // This one and every one before it faulty, so that selection reaches it.
            let r = sha256Registry(faults: Set(clean.runnable[...k].map { "sha256:\($0)" }))
            let i = r.statuses.firstIndex { $0.name == name }!
            #expect(r.statuses[i].state == .failed, "\(name)")
            #expect(sha256ABC(r.implementations[i]) != publishedABC, "the fault switch did not corrupt \(name)")
            if name != "portable" {
                #expect(r.selectedName != name)
                #expect(sha256ABC(r.selected) == publishedABC, "selected \(r.selectedName) with \(name) faulty")
            } else {
                // Nothing comes after the portable code: it is run, and its failure stays visible.
                #expect(r.statuses.last?.state == .failed)
            }
        }
        // Without faults the first runnable one is selected and gives the answer; the ones after it are
        // not tested.
        #expect(clean.selectedName == clean.runnable.first)
        #expect(clean.statuses.drop { $0.state != .selected }.dropFirst().allSatisfy { $0.state == .untested })
        #expect(sha256ABC(clean.selected) == publishedABC)
    }

    /// Every kernel faulty: the portable code is selected.
    @Test func allKernelsFaultyFallsBackToPortable() {
        let names = sha256Registry(faults: []).statuses.map(\.name).filter { $0 != "portable" }
        let r = sha256Registry(faults: Set(names.map { "sha256:\($0)" }))
        #expect(r.selectedName == "portable")
        #expect(!r.kernelSelected)
        #expect(sha256ABC(r.selected) == publishedABC)
    }

    /// A candidate whose features are missing is never tested nor selected.
    @Test func missingFeaturesAreUnsupported() {
        let r = Registry<any SHA256Implementation.Type>(
            "sha256", id: 2, Registries.sha256Candidates, features: [], name: { $0.name }, requires: { $0.requires },
            selfTest: { impl in
                if impl.name != "portable" { Issue.record("no kernel may be self-tested without its features") }
                return sha256SelfTest(impl)
            },
            faulty: { $0 }, faults: [])
        #expect(r.selectedName == "portable")
        // Emulated arm64 kernels need no feature: runnable through pins, never selected nor tested.
        #expect(r.statuses.dropLast().allSatisfy { $0.state == ($0.name.hasSuffix("-emulated") ? .untested : .unsupported) })
    }

    /// Pins: a backend pinned to each runnable implementation runs exactly it; other primitives keep
    /// their selection; unknown names give nil.
    @Test func pins() {
        for name in Kernels.implementations(of: "sha256") {
            let b = Kernels.pinned("sha256", to: name)!
            #expect(Registries.sha256.implementation(for: b).name == name)
            #expect(Registries.sha1.implementation(for: b).name == Registries.sha1.selectedName)
            #expect(b.description == "sha256=\(name)")
        }
        #expect(Kernels.pinned("sha256", to: "no-such-kernel") == nil)
        #expect(Kernels.pinned("no-such-primitive", to: "portable") == nil)
        #expect(Backend.hardware.description == "hardware" && Backend.portable.description == "portable")
    }

    /// Every registry reports its self-test time (measured once per process, at first use). Optimized,
    /// all of them together stay under a millisecond (0.27-0.37 ms on a Zen 4 core; `.ci/run` checks
    /// the release `rampart info` figure too). Unoptimized code runs the same vectors 10-20 times
    /// slower (5.2 ms in a debug CI run), so a debug build only guards against a self-test that grew
    /// by an order of magnitude. Under AddressSanitizer or ThreadSanitizer (Scripts/sanitizers.sh runs
    /// this suite in release) every memory access is instrumented: 1.05 ms in one CI run, so the bound
    /// is ten times looser there; the uninstrumented figure is what `.ci/run` checks.
    @Test func selfTestsAreCheap() {
        _ = Kernels.all
        #if DEBUG
        let bound: UInt64 = 50_000_000
        #else
        let runtimes: [String] = ["__asan_init", "__tsan_init"]
        let sanitized = runtimes.contains { dlsym(UnsafeMutableRawPointer(bitPattern: 0), $0) != nil }
        let bound: UInt64 = sanitized ? 10_000_000 : 1_000_000
        #endif
        #expect(Kernels.selfTestNanoseconds < bound, "\(Kernels.selfTestNanoseconds) ns")
        print("self-tests of every registry: \(Kernels.selfTestNanoseconds) ns")
    }
}
