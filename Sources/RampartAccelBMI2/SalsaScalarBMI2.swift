// The Salsa20/20 core in sixteen scalar registers (`rorx` rotations): the XSalsa20 input block (the
// HSalsa20 subkey around the rest of the nonce) and one keystream block, the two cores a short XSalsa20
// message costs. Preferred on AMD processors (Rampart/Platform/Registrations.swift pairs it with the
// eight-block tiers: `avx512vl+bmi2`, `avx2+bmi2`), where the 128-bit vector form of the same core
// (RampartAccelAVX512/SalsaShortAVX512.swift and the portable diagonal code) measured about 1.8
// times slower than scalar code (Zen 5: a 64-byte
// `xsalsa20` call 262 ns, of which each vector core about 118 ns; libsodium's scalar HSalsa20 about
// 65 ns). The four quarter-rounds of a round are four independent chains of add, rotate and XOR, which
// the integer units run side by side. Mirrors Cipher/Salsa20Stream.swift's `xsalsa20InputCore` and
// Cipher/Salsa20.swift's `salsa20BlockCore`; the tests compare them.
//
// Constant time: straight-line code over the words (a loop of ten double rounds), no table and no
// branch on the data.

import Swift
import RampartKernelSupport

#if arch(x86_64)

@inline(__always) private func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &<< n) | (x &>> (32 &- n)) }

@inline(__always) private func le32(_ p: UnsafeRawPointer, _ offset: Int) -> UInt32 {
    UInt32(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
}

/// The sixteen state words in standard order.
private struct SalsaWords {
    var x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15: UInt32

    @inline(__always)
    init(_ x: SIMD16<UInt32>) {
        x0 = x[0]; x1 = x[1]; x2 = x[2]; x3 = x[3]; x4 = x[4]; x5 = x[5]; x6 = x[6]; x7 = x[7]
        x8 = x[8]; x9 = x[9]; x10 = x[10]; x11 = x[11]; x12 = x[12]; x13 = x[13]; x14 = x[14]; x15 = x[15]
    }

    /// A column round and a row round, the four quarter-rounds of each interleaved step by step.
    @inline(__always)
    mutating func doubleRound() {
        x4 ^= rotl(x0 &+ x12, 7); x9 ^= rotl(x5 &+ x1, 7); x14 ^= rotl(x10 &+ x6, 7); x3 ^= rotl(x15 &+ x11, 7)
        x8 ^= rotl(x4 &+ x0, 9); x13 ^= rotl(x9 &+ x5, 9); x2 ^= rotl(x14 &+ x10, 9); x7 ^= rotl(x3 &+ x15, 9)
        x12 ^= rotl(x8 &+ x4, 13); x1 ^= rotl(x13 &+ x9, 13); x6 ^= rotl(x2 &+ x14, 13); x11 ^= rotl(x7 &+ x3, 13)
        x0 ^= rotl(x12 &+ x8, 18); x5 ^= rotl(x1 &+ x13, 18); x10 ^= rotl(x6 &+ x2, 18); x15 ^= rotl(x11 &+ x7, 18)
        x1 ^= rotl(x0 &+ x3, 7); x6 ^= rotl(x5 &+ x4, 7); x11 ^= rotl(x10 &+ x9, 7); x12 ^= rotl(x15 &+ x14, 7)
        x2 ^= rotl(x1 &+ x0, 9); x7 ^= rotl(x6 &+ x5, 9); x8 ^= rotl(x11 &+ x10, 9); x13 ^= rotl(x12 &+ x15, 9)
        x3 ^= rotl(x2 &+ x1, 13); x4 ^= rotl(x7 &+ x6, 13); x9 ^= rotl(x8 &+ x11, 13); x14 ^= rotl(x13 &+ x12, 13)
        x0 ^= rotl(x3 &+ x2, 18); x5 ^= rotl(x4 &+ x7, 18); x10 ^= rotl(x9 &+ x8, 18); x15 ^= rotl(x14 &+ x13, 18)
    }

    @inline(__always)
    mutating func twentyRounds() {
        var i = 0
        while i < 10 {
            doubleRound()
            i &+= 1
        }
    }
}

private let sigma0: UInt32 = 0x6170_7865, sigma1: UInt32 = 0x3320_646e
private let sigma2: UInt32 = 0x7962_2d32, sigma3: UInt32 = 0x6b20_6574

/// The XSalsa20 input block (sixteen words, standard layout) for a 32-byte `key`, a 24-byte `nonce` and
/// block `counter`: the HSalsa20 subkey of the key and nonce[0..<16] (words 0, 5, 10, 15, 6, 7, 8, 9 of
/// the rounds, no feed-forward), then the Salsa20 block around it.
@inline(never)
public func xsalsa20InputScalar(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
    var s = SalsaWords(SIMD16(sigma0, le32(key, 0), le32(key, 4), le32(key, 8), le32(key, 12),
                              sigma1, le32(nonce, 0), le32(nonce, 4), le32(nonce, 8), le32(nonce, 12),
                              sigma2, le32(key, 16), le32(key, 20), le32(key, 24), le32(key, 28), sigma3))
    s.twentyRounds()
    return SIMD16(sigma0, s.x0, s.x5, s.x10, s.x15, sigma1, le32(nonce, 16), le32(nonce, 20),
                  UInt32(truncatingIfNeeded: counter), UInt32(truncatingIfNeeded: counter >> 32),
                  sigma2, s.x6, s.x7, s.x8, s.x9, sigma3)
}

/// The keystream block of input block `x` (its counter in words 8 and 9) into `out`: 64 bytes, the
/// twenty rounds plus the input, little-endian words.
@inline(never)
public func salsa20BlockScalar(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) {
    var s = SalsaWords(x)
    s.twentyRounds()
    @inline(__always) func put(_ i: Int, _ v: UInt32) {
        out.storeBytes(of: (v &+ x[i]).littleEndian, toByteOffset: 4 &* i, as: UInt32.self)
    }
    put(0, s.x0); put(1, s.x1); put(2, s.x2); put(3, s.x3); put(4, s.x4); put(5, s.x5); put(6, s.x6); put(7, s.x7)
    put(8, s.x8); put(9, s.x9); put(10, s.x10); put(11, s.x11); put(12, s.x12); put(13, s.x13); put(14, s.x14)
    put(15, s.x15)
}

/// The single-block cores in scalar registers (`bmi2`), for Rampart to pair with an eight-block tier.
public enum Salsa20BMI2: Salsa20BlockImplementation {
    public static let name = "bmi2"
    public static let requires: KernelFeatures = [.bmi2]
    @inline(__always)
    public static func xsalsa20Input(_ key: UnsafeRawPointer, _ nonce: UnsafeRawPointer, _ counter: UInt64) -> SIMD16<UInt32> {
        xsalsa20InputScalar(key, nonce, counter)
    }
    @inline(__always)
    public static func block(_ x: SIMD16<UInt32>, _ out: UnsafeMutableRawPointer) { salsa20BlockScalar(x, out) }
}

#endif
