// Each ARMv8 cryptography instruction alone, for Scripts/arm64-emulation.sh: instruction-table.swift on
// the real wrappers (Sources/RampartKernelSupport/ARMv8Instructions.swift), compiled to arm64 code and
// run under qemu-aarch64; its answers are compared with the emulated wrappers' (ARMv8Emulated.swift).

import Swift

/// `out = op(a, b, c)` for instruction number `op` (zero for an unknown number).
@_cdecl("rampart_arm64_instruction")
public func rampartARM64Instruction(_ op: Int, _ pa: UnsafeRawPointer, _ pb: UnsafeRawPointer, _ pc: UnsafeRawPointer,
                                    _ out: UnsafeMutableRawPointer) {
    let a = pa.loadUnaligned(as: Q.self), b = pb.loadUnaligned(as: Q.self), c = pc.loadUnaligned(as: Q.self)
    out.storeBytes(of: instruction(op, a, b, c) ?? Q(), as: Q.self)
}
