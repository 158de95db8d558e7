// The ARMv8.2 SHA-512 kernel of this tier as the registry sees it.

import Swift
import RampartKernelSupport

#if arch(arm64) || RAMPART_TYPECHECK_ARM64 || RAMPART_EMULATE_ARM64

/// SHA-512 on the ARMv8.2 SHA-512 instructions (Apple M1 and later, Neoverse V1 and later).
public enum ARMv8SHA512: SHA512Implementation {
    public static var name: String { armImplementationName("armv8-sha512") }
    public static var requires: KernelFeatures { armImplementationRequires([.armSHA512]) }
    public static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ count: Int) {
        sha512RoundConstants.withUnsafeBufferPointer { armSHA512Blocks(state, data, count, $0.baseAddress!) }
    }
}

#endif
