// Algorithm code that the portable primitives and the hardware kernel tiers share, as `@inlinable`
// functions: each module that calls one compiles it with its own target features, so the kernels
// keep their instructions and there is one copy of the logic. Nothing here branches on or indexes
// by a secret (the loop structure depends on the key length only).

import Swift

/// The number of AES rounds for a key of `keyLength` bytes (10, 12, 14), or 0 for another length.
@inlinable @inline(__always)
public func aesRounds(keyLength: Int) -> Int {
    switch keyLength {
    case 16: return 10
    case 24: return 12
    case 32: return 14
    default: return 0
    }
}

/// The FIPS-197 key expansion (§5.2): writes `4 · (rounds + 1)` little-endian words at `w` from the
/// `4 · nk`-byte key at `key`. `subWord` applies the S-box to each byte of a word: the portable code
/// passes its constant-time bitsliced S-box, the kernels their AES instruction (the key expansion is
/// the same everywhere; only SubWord differs). RotWord on a little-endian word is a right rotation by
/// 8, and Rcon goes in the first byte.
@inlinable @inline(__always)
public func aesExpandKeyWords(_ w: UnsafeMutablePointer<UInt32>, key: UnsafeRawPointer, nk: Int, rounds: Int,
                              subWord: (UInt32) -> UInt32) {
    for i in 0..<nk { w[i] = UInt32(littleEndian: key.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
    var rcon: UInt32 = 1
    var tmp = w[nk - 1]
    var j = 0
    for i in nk..<(4 * (rounds + 1)) {
        if j == 0 {
            tmp = subWord((tmp >> 8) | (tmp << 24)) ^ rcon
            rcon = (rcon << 1) ^ (0x11b & (0 &- (rcon >> 7)))
        } else if nk > 6 && j == 4 {
            tmp = subWord(tmp)
        }
        tmp ^= w[i - nk]
        w[i] = tmp
        j += 1
        if j == nk { j = 0 }
    }
}
