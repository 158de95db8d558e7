// The ARMv8 SHA kernels of this tier as the registry sees them.

import Swift
import RampartKernelSupport

#if arch(arm64) || RAMPART_TYPECHECK_ARM64 || RAMPART_EMULATE_ARM64

/// SHA-1 on the ARMv8 SHA-1 instructions.
public enum ARMv8SHA1: SHA1Implementation {
    public static var name: String { armImplementationName("armv8-sha1") }
    public static var requires: KernelFeatures { armImplementationRequires([.armSHA2]) }
    public static func blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int) {
        armSHA1Blocks(state, data, count)
    }
}

/// SHA-256 on the ARMv8 SHA-256 instructions.
public enum ARMv8SHA256: SHA256Implementation {
    public static var name: String { armImplementationName("armv8-sha2") }
    public static var requires: KernelFeatures { armImplementationRequires([.armSHA2]) }
    public static func blocks(_ state: UnsafeMutablePointer<UInt32>, _ data: UnsafeRawPointer, _ count: Int) {
        sha256RoundConstants.withUnsafeBufferPointer { armSHA256Blocks(state, data, count, $0.baseAddress!) }
    }
}

#endif
