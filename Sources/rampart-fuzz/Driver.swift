// The bridge to libFuzzer: LLVMFuzzerRunDriver (reached through RampartTestSupportC's weak
// declaration) calls back into a C function pointer, which runs the selected target.

import RampartTestSupportC
#if canImport(Glibc)
import Glibc
#endif

/// The target libFuzzer drives (set once before the driver starts).
nonisolated(unsafe) var activeTarget: FuzzTarget?

/// libFuzzer's per-input callback.
private let fuzzOne: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
    let bytes: [UInt8] = (size == 0 || data == nil) ? [] : Array(UnsafeBufferPointer(start: data!, count: size))
    activeTarget!.run(bytes)
    return 0
}

/// Runs libFuzzer on `target` with `arguments` (argv[0] first, then libFuzzer flags and corpus
/// directories). Returns libFuzzer's exit status (it normally exits by itself).
func runLibFuzzer(_ target: FuzzTarget, _ arguments: [String]) -> Int32 {
    activeTarget = target
    var cArgs: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    var argc = Int32(arguments.count)
    return cArgs.withUnsafeMutableBufferPointer { buf in
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = buf.baseAddress
        return rampart_fuzz_run_driver(&argc, &argv, fuzzOne)
    }
}

/// What the current input is being checked for, printed by the SIGSEGV handler of `replay` (a KDF
/// that accepts a huge output length crashes on an inaccessible page instead of allocating it).
enum FuzzExpectation {
    private static let capacity = 512
    nonisolated(unsafe) private static let buffer: UnsafeMutablePointer<CChar> = {
        let b = UnsafeMutablePointer<CChar>.allocate(capacity: capacity)
        b.initialize(repeating: 0, count: capacity)
        return b
    }()

    static func set(_ s: String) {
        let bytes = Array(("rampart-fuzz: crashed while checking: " + s + "\n").utf8.prefix(capacity - 1))
        for (i, c) in bytes.enumerated() { buffer[i] = CChar(bitPattern: c) }
        buffer[bytes.count] = 0
    }

    static func clear() { buffer[0] = 0 }

    /// Installs a SIGSEGV/SIGBUS handler that prints the expectation, then dies with the signal.
    /// Not used under libFuzzer, whose own handler reports the crash and saves the input.
    static func installHandler() {
        _ = buffer
        #if canImport(Glibc)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { sig in
            let b = FuzzExpectation.buffer
            if b[0] != 0 { _ = write(2, b, strlen(b)) }
            signal(sig, SIG_DFL)
            raise(sig)
        }
        sigemptyset(&action.sa_mask)
        sigaction(SIGSEGV, &action, nil)
        sigaction(SIGBUS, &action, nil)
        #endif
    }
}
