// Many X25519 scalar multiplications at once: a server answering many handshakes, a group call deriving
// a key with every participant. With `Kernels.x25519Lanes` active, eight run in one ladder, one per vector
// lane (RampartAccelAVX2/X25519Lanes.swift); the rest, and every one elsewhere, run one by one.

extension Curve25519 {
    /// X25519 (RFC 7748 §5) of each pair: `result[i] = X25519(scalars[i], points[i])`, the same bytes
    /// ``scalarMultiply(scalar:point:)`` gives for each, computed eight at a time where the processor
    /// has a lane kernel (``Kernels/x25519Lanes``). No all-zero check: see
    /// ``KeyAgreement/PrivateKey/sharedSecretsFromKeyAgreement(with:)`` for key agreement.
    ///
    /// - Throws: ``RampartError/invalidParameter(_:)`` when the arrays differ in length,
    ///   ``RampartError/invalidKeyLength`` / ``RampartError/invalidPublicKey`` for a scalar / point that
    ///   is not 32 bytes (nothing is computed then).
    public static func scalarMultiply(scalars: [[UInt8]], points: [[UInt8]]) throws(RampartError) -> [[UInt8]] {
        try scalarMultiply(scalars: scalars, points: points, backend: CPU.defaultBackend)
    }

    /// As ``scalarMultiply(scalars:points:)``, pinned to one implementation and, on `.hardware`, to
    /// one lane-kernel tier by name (nil: the registry's; tests run every tier the machine has).
    @_spi(Testing)
    public static func scalarMultiply(scalars: [[UInt8]], points: [[UInt8]], backend: Backend,
                                      laneKernel: String? = nil) throws(RampartError) -> [[UInt8]] {
        guard scalars.count == points.count else { throw .invalidParameter("points: one per scalar") }
        for s in scalars where s.count != 32 { throw .invalidKeyLength }
        for p in points where p.count != 32 { throw .invalidPublicKey }
        let n = scalars.count
        var k = [UInt8](repeating: 0, count: 32 * n), u = [UInt8](repeating: 0, count: 32 * n)
        defer { k.secureWipe() }
        for i in 0..<n {
            k.replaceSubrange(32 * i ..< 32 * i + 32, with: scalars[i])
            u.replaceSubrange(32 * i ..< 32 * i + 32, with: points[i])
        }
        var out = [UInt8](repeating: 0, count: 32 * n)
        k.withUnsafeBytes { kb in
            u.withUnsafeBytes { ub in
                out.withUnsafeMutableBytes { o in
                    x25519Batch(count: n, scalars: kb.baseAddress, scalarStride: 32, points: ub.baseAddress,
                                out: o.baseAddress, backend: backend, laneKernel: laneKernel)
                }
            }
        }
        return (0..<n).map { Array(out[32 * $0 ..< 32 * $0 + 32]) }
    }
}

extension Curve25519.KeyAgreement.PrivateKey {
    /// The X25519 shared secrets with each of `publicKeys`, in order: what
    /// ``sharedSecretFromKeyAgreement(with:)`` gives for each, computed eight at a time where the
    /// processor has a lane kernel (a group call's fan-out to every participant).
    ///
    /// - Throws: ``RampartError/invalidPublicKey`` when any result is all zeros (a peer sent a point
    ///   of small order, RFC 7748 §6.1); no secret is returned then. Call
    ///   ``sharedSecretFromKeyAgreement(with:)`` per key to find which.
    public func sharedSecretsFromKeyAgreement(with publicKeys: [Curve25519.KeyAgreement.PublicKey]) throws(RampartError) -> [SharedSecret] {
        let n = publicKeys.count
        var u = [UInt8](repeating: 0, count: 32 * n)
        for (i, key) in publicKeys.enumerated() {
            withUnsafeBytes(of: key.bytes) { u.replaceSubrange(32 * i ..< 32 * i + 32, with: $0) }
        }
        var out = [UInt8](repeating: 0, count: 32 * n)
        defer { out.secureWipe() }
        secret.withUnsafeBytes { s in
            u.withUnsafeBytes { ub in
                out.withUnsafeMutableBytes { o in
                    x25519Batch(count: n, scalars: s.baseAddress, scalarStride: 0, points: ub.baseAddress,
                                out: o.baseAddress, backend: CPU.defaultBackend, laneKernel: nil)
                }
            }
        }
        // One OR per secret and one public outcome for the batch (the error, as in the single call).
        var allNonzero: UInt8 = 1
        for i in 0..<n {
            var acc: UInt8 = 0
            for j in 0..<32 { acc |= out[32 * i + j] }
            allNonzero &= UInt8(truncatingIfNeeded: (UInt16(acc) &+ 0xFF) >> 8)   // 1 when acc ≠ 0
        }
        guard declassified(allNonzero) == 1 else { throw .invalidPublicKey }
        return (0..<n).map { i in out.withUnsafeBytes { SharedSecret(key: SymmetricKey(data: UnsafeRawBufferPointer(rebasing: $0[32 * i ..< 32 * i + 32]))) } }
    }
}

extension Curve25519 {
    /// The X25519 lane kernels this processor can run and whose self-tests passed, best first (the
    /// registry selects only the AVX-512 build: Platform/Registrations.swift).
    package static var x25519LaneKernels: [String] {
        Kernels.implementations(of: "x25519-lanes").filter { $0 != "portable" }
    }
}

/// Below this many pairs left, the rest run one by one: one pass of the eight-lane ladder costs about
/// four single multiplications on the `mulx` kernel (AVX-512, Cascade Lake: 151 µs against 36 µs;
/// `rampart-bench --filter x25519`).
let x25519LanesMinimum = 5

/// X25519 of `count` pairs: scalar i at `scalars + i·scalarStride` (stride 0: one scalar for all), point i
/// at `points + 32·i`, result i to `out + 32·i`. Constant time in the scalars and points; which pairs go
/// through the lane kernel depends only on `count`.
func x25519Batch(count n: Int, scalars: UnsafeRawPointer?, scalarStride: Int, points: UnsafeRawPointer?,
                 out: UnsafeMutableRawPointer?, backend: Backend, laneKernel: String?) {
    guard n > 0, let scalars, let points, let out else { return }
    var tier = Registries.x25519Lanes.implementation(for: backend)
    if let laneKernel, backend == .hardware, let named = Registries.x25519Lanes.runnableImplementation(named: laneKernel) {
        tier = named
    }
    var i = 0
    if tier.lanes > 1 {
        let lanes = tier.lanes
        var k = [UInt64](repeating: 0, count: 4 * lanes)
        var u = [UInt64](repeating: 0, count: 10 * lanes)
        var r = [UInt64](repeating: 0, count: 10 * lanes)
        defer { k.withUnsafeMutableBytes { secureZero($0) }; r.withUnsafeMutableBytes { secureZero($0) } }
        while n - i >= x25519LanesMinimum {
            let m = min(lanes, n - i)
            for j in 0..<lanes {
                // Lanes past the batch multiply 9 by the clamped zero scalar; their results are dropped.
                var w: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
                var x = Field25519(9, 0, 0, 0, 0)
                if j < m {
                    let s = scalars + (i + j) * scalarStride
                    w = (UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                         UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                         UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
                         UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
                    x = Field25519(bytes: points + 32 * (i + j))
                }
                // Clamp (RFC 7748 §5, decodeScalar25519).
                k[j] = w.0 & ~7
                k[lanes + j] = w.1
                k[2 * lanes + j] = w.2
                k[3 * lanes + j] = (w.3 & ((1 << 63) - 1)) | (1 << 62)
                w = (0, 0, 0, 0)
                // Radix 2^51 to 2^25.5: limb 2t holds the low 26 bits of l_t, limb 2t + 1 the high 25.
                func split(_ t: Int, _ limb: UInt64) {
                    u[2 * t * lanes + j] = limb & ((1 << 26) - 1)
                    u[(2 * t + 1) * lanes + j] = limb >> 26
                }
                split(0, x.l0); split(1, x.l1); split(2, x.l2); split(3, x.l3); split(4, x.l4)
            }
            k.withUnsafeBufferPointer { kp in
                u.withUnsafeBufferPointer { up in
                    r.withUnsafeMutableBufferPointer { rp in
                        tier.scalarMultiply(rp.baseAddress!, up.baseAddress!, kp.baseAddress!)
                    }
                }
            }
            for j in 0..<m {
                // Radix 2^25.5 back to 2^51 (limbs up to 2^51 + 2^44: `store` carries and reduces).
                @inline(__always) func limb(_ t: Int) -> UInt64 { r[2 * t * lanes + j] &+ (r[(2 * t + 1) * lanes + j] << 26) }
                var x = Field25519(limb(0), limb(1), limb(2), limb(3), limb(4))
                x.store(out + 32 * (i + j))
                wipe(&x)
            }
            i += m
        }
    }
    while i < n {
        x25519(scalar: scalars + i * scalarStride, point: points + 32 * i, out: out + 32 * i, backend: backend)
        i += 1
    }
}
