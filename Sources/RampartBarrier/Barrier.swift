// Value barriers: a value passed through here comes back after a volatile store and a volatile load,
// so the optimizer knows nothing about it (not that it is 0 or all-ones, not that it came from a
// comparison). Constant-time code passes its masks through a barrier so that LLVM cannot turn a
// masked selection back into a branch or a conditional load (it did exactly that to the Montgomery
// table selection; see Sources/Rampart/Bytes/ConstantTime.swift). This is the pure-Swift equivalent
// of BoringSSL's `value_barrier_w` (an empty inline-asm statement), which Swift cannot express.
//
// Compiled with -parse-stdlib for `Builtin`, and no CPU features. The cost is a store and a load
// through the stack (a few cycles); use it once per mask, not per word.

import Swift

/// `x`, through a volatile store and load that the optimizer cannot see through.
@inlinable @inline(__always)
public func valueBarrier(_ x: UInt64) -> UInt64 {
    var slot: UInt64 = 0
    return withUnsafeMutablePointer(to: &slot) { p in
        let raw = UnsafeMutableRawPointer(p)._rawValue
        Builtin.atomicstore_monotonic_volatile_Int64(raw, x._value)
        return UInt64(Builtin.atomicload_monotonic_volatile_Int64(raw))
    }
}
