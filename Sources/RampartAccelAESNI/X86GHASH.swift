// GHASH with PCLMULQDQ, and AES-GCM with the CTR and GHASH passes fused in one loop: the one copy of
// the bodies, compiled by this module (SSE encoding, GHASHCLMUL.swift) and RampartAccelAESAVX (AVX's
// VEX encoding) into their own uniquely named entry points (see X86AES.swift).
//
// GHASH is computed through POLYVAL (RFC 8452, appendix A): with every block byte-reversed, the
// field element is the plain little-endian 128-bit integer, the carry-less product needs no bit
// shift, and the reduction is a Montgomery step (multiplication by x^-128) made of two carry-less
// multiplications by the constant 0xc2000000_00000000. H is pre-multiplied by x (mulX_POLYVAL) so
// that the products come out right:
//
//     GHASH(H, X_1..X_n) = rev(POLYVAL(mulX(rev(H)), rev(X_1), ..., rev(X_n)))
//
// The table holds the "Montgomery powers" H_k = H^k x^(-128(k-1)) for k = 1...8 and, for Karatsuba,
// the XOR of the two halves of each. Eight blocks are multiplied by H_8...H_1, the unreduced 256-bit
// products summed, and one reduction done per eight blocks (aggregated reduction).
//
// The GHASH state crosses the API in GHASH's own byte order (the 16 bytes of Y_i in SP 800-38D).

import Swift

#if arch(x86_64)

extension X86AES {
    @_alwaysEmitIntoClient @inline(__always)
    public static func clmul00(_ a: V, _ b: V) -> V { bv(Builtin.int_x86_pclmulqdq(bi(a), bi(b), UInt8(0x00)._value)) }
                               @_alwaysEmitIntoClient @inline(__always)
                               public static func clmul11(_ a: V, _ b: V) -> V { bv(Builtin.int_x86_pclmulqdq(bi(a), bi(b), UInt8(0x11)._value)) }
                               
                               /// The two 64-bit halves exchanged (pshufd).
                               ///
                               /// The shuffles and XORs of the reduction are written with byte shuffles and `Builtin` XORs, not with
                               /// `V(v[1], v[0])` and SIMD operators: from those LLVM computed the lanes apart, through general
                               /// registers (vpextrq, scalar xor, vmovq, punpcklqdq: about twenty instructions on the GHASH chain of
                               /// each eight blocks, measured in the GCM loops).
                               @_alwaysEmitIntoClient @inline(__always)
                               public static func swapHalves(_ v: V) -> V { pshufb(v, V(0x0f0e_0d0c_0b0a_0908, 0x0706_0504_0302_0100)) }
                               /// (0, v.lo): the low half moved up (pslldq 8).
                               @_alwaysEmitIntoClient @inline(__always)
                               public static func upHalf(_ v: V) -> V { pshufb(v, V(0x8080_8080_8080_8080, 0x0706_0504_0302_0100)) }
                               /// (v.hi, 0): the high half moved down (psrldq 8).
                               @_alwaysEmitIntoClient @inline(__always)
                               public static func downHalf(_ v: V) -> V { pshufb(v, V(0x0f0e_0d0c_0b0a_0908, 0x8080_8080_8080_8080)) }
                               /// XOR as one vector operation.
                               @_alwaysEmitIntoClient @inline(__always)
                               public static func vxor(_ a: V, _ b: V) -> V { bv(Builtin.xor_Vec2xInt64(bi(a), bi(b))) }
                               
                               /// Bits 57, 62 and 63: (x^121 + x^126 + x^127) / x^64, the part of the POLYVAL modulus
                               /// x^128 + x^127 + x^126 + x^121 + 1 that the Montgomery step multiplies by.
                               @_alwaysEmitIntoClient
                               public static var polyvalConstant: V { V(0xc200_0000_0000_0000, 0) }
                               
                               /// Montgomery reduction of the 256-bit product hi * x^128 + lo: returns (hi * x^128 + lo) * x^-128
                               /// modulo the POLYVAL polynomial.
                               @_alwaysEmitIntoClient @inline(__always)
                               public static func reduce(_ lo: V, _ hi: V) -> V {
        let c = polyvalConstant
        var x = vxor(swapHalves(lo), clmul00(lo, c))
        x = vxor(swapHalves(x), clmul00(x, c))
        return vxor(hi, x)
    }

    /// Unreduced Karatsuba partial products of x * h; `hk` holds h.lo ^ h.hi in lane 0.
    @_alwaysEmitIntoClient @inline(__always)
    public static func mulParts(_ x: V, _ h: V, _ hk: V, _ lo: inout V, _ mid: inout V, _ hi: inout V) {
        lo ^= clmul00(x, h)
        hi ^= clmul11(x, h)
        mid ^= clmul00(x ^ swapHalves(x), hk)
    }

    /// Folds Karatsuba parts into a reduced product.
    @_alwaysEmitIntoClient @inline(__always)
    public static func finish(_ lo: V, _ mid: V, _ hi: V) -> V {
        let m = vxor(vxor(mid, lo), hi)
        return reduce(vxor(lo, upHalf(m)), vxor(hi, downHalf(m)))
    }

    @_alwaysEmitIntoClient @inline(__always)
    public static func dot(_ a: V, _ b: V) -> V {
        var lo = V(0, 0), mid = V(0, 0), hi = V(0, 0)
        mulParts(a, b, b ^ swapHalves(b), &lo, &mid, &hi)
        return finish(lo, mid, hi)
    }

    /// Fills `table` (256 bytes, 16-byte aligned) from the hash key H (16 bytes, E_K(0^128)). With
    /// `allPowers` false only H_1 is computed: enough when no call will absorb eight blocks at once
    /// (short messages), and seven multiplications cheaper.
    @_alwaysEmitIntoClient @inline(__always)
    public static func ghashPrecompute(_ hashKey: UnsafeRawPointer, _ table: UnsafeMutableRawPointer, _ allPowers: Bool) {
        // mulX_POLYVAL(rev(H)): shift left by one, reduce the bit that falls out, without a branch.
        let h = pshufb(load(hashKey, 0), reverseBytesMask)
        let carry = 0 &- (h[1] >> 63)
        let h1 = V(h[0] << 1, (h[1] << 1) | (h[0] >> 63)) ^ V(carry & 1, carry & 0xc200_0000_0000_0000)
        var p = h1
        for k in 0..<(allPowers ? 8 : 1) {
            store(p, table, 16 * k)
            store(p ^ swapHalves(p), table, 128 + 16 * k)
            p = dot(p, h1)
        }
    }

    /// Absorbs `blocks` 16-byte blocks into the GHASH state (16 bytes, GHASH byte order).
    @_alwaysEmitIntoClient @inline(__always)
    public static func ghashBlocks(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer,
                                   _ data: UnsafeRawPointer, _ blocks: Int) {
        let rev = reverseBytesMask
        var y = pshufb(load(state, 0), rev)
        var i = 0
        while i + 8 <= blocks {
            y = absorb8(table, y, data + 16 * i)
            i += 8
        }
        let h1 = load(table, 0), hk1 = load(table, 128)
        while i < blocks {
            y = y ^ pshufb(load(data, 16 * i), rev)
            var lo = V(0, 0), mid = V(0, 0), hi = V(0, 0)
            mulParts(y, h1, hk1, &lo, &mid, &hi)
            y = finish(lo, mid, hi)
            i += 1
        }
        store(pshufb(y, rev), state, 0)
    }

    /// y' = (y + X_0) H_8 + X_1 H_7 + ... + X_7 H_1 with one reduction; `y` in POLYVAL order.
    @_alwaysEmitIntoClient @inline(__always)
    public static func absorb8(_ t: UnsafeRawPointer, _ y: V, _ p: UnsafeRawPointer) -> V {
        let rev = reverseBytesMask
        var lo = V(0, 0), mid = V(0, 0), hi = V(0, 0)
        mulParts(y ^ pshufb(load(p, 0), rev), load(t, 112), load(t, 240), &lo, &mid, &hi)
        mulParts(pshufb(load(p, 16), rev), load(t, 96), load(t, 224), &lo, &mid, &hi)
        mulParts(pshufb(load(p, 32), rev), load(t, 80), load(t, 208), &lo, &mid, &hi)
        mulParts(pshufb(load(p, 48), rev), load(t, 64), load(t, 192), &lo, &mid, &hi)
        mulParts(pshufb(load(p, 64), rev), load(t, 48), load(t, 176), &lo, &mid, &hi)
        mulParts(pshufb(load(p, 80), rev), load(t, 32), load(t, 160), &lo, &mid, &hi)
        mulParts(pshufb(load(p, 96), rev), load(t, 16), load(t, 144), &lo, &mid, &hi)
        mulParts(pshufb(load(p, 112), rev), load(t, 0), load(t, 128), &lo, &mid, &hi)
        return finish(lo, mid, hi)
    }

    /// Same as `absorb8` on eight blocks held in registers (already byte-reversed: POLYVAL order).
    @_alwaysEmitIntoClient @inline(__always)
    public static func absorb8(_ t: UnsafeRawPointer, _ y: V, _ x0: V, _ x1: V, _ x2: V, _ x3: V,
                               _ x4: V, _ x5: V, _ x6: V, _ x7: V) -> V {
        var lo = V(0, 0), mid = V(0, 0), hi = V(0, 0)
        mulParts(y ^ x0, load(t, 112), load(t, 240), &lo, &mid, &hi)
        mulParts(x1, load(t, 96), load(t, 224), &lo, &mid, &hi)
        mulParts(x2, load(t, 80), load(t, 208), &lo, &mid, &hi)
        mulParts(x3, load(t, 64), load(t, 192), &lo, &mid, &hi)
        mulParts(x4, load(t, 48), load(t, 176), &lo, &mid, &hi)
        mulParts(x5, load(t, 32), load(t, 160), &lo, &mid, &hi)
        mulParts(x6, load(t, 16), load(t, 144), &lo, &mid, &hi)
        mulParts(x7, load(t, 0), load(t, 128), &lo, &mid, &hi)
        return finish(lo, mid, hi)
    }

    // MARK: - GCM

    /// GCM's counter increment: the last 32 bits of the block, big-endian, modulo 2^32. With the block
    /// byte-reversed the counter is the lowest 32-bit lane.
    @_alwaysEmitIntoClient @inline(__always)
    public static func inc32(_ c: V, _ n: UInt32) -> V {
        unsafeBitCast(unsafeBitCast(c, to: SIMD4<UInt32>.self) &+ SIMD4<UInt32>(n, 0, 0, 0), to: V.self)
    }

    /// AES-GCM encryption of `blocks` whole blocks: CTR with the 32-bit counter of `counter` (16 bytes,
    /// advanced by `blocks`), then GHASH of the ciphertext into `state` (16 bytes, GHASH byte order).
    ///
    /// Stitched: the GHASH of batch n−1 (its byte-reversed ciphertext kept in a stack buffer) runs inside
    /// the AES rounds of batch n, one block (three carry-less multiplications) per round in rounds 1–8,
    /// so the multiplier and the AES unit work side by side. (Issued as one block of GHASH before the
    /// rounds, as before, the two measured 0.65x OpenSSL's stitched code on Cascade Lake: the scheduler
    /// ran them largely in turn.)
    @_alwaysEmitIntoClient @inline(__always)
    public static func gcmEncrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                                  _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                                  _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
        let rev = reverseBytesMask
        let k0 = load(rk, 0), kl = load(rk, 16 * rounds)
        var ctr = pshufb(load(counter, 0), rev)
        var y = pshufb(load(state, 0), rev)
        var i = 0
        var pending = false
        var xs = (V(0, 0), V(0, 0), V(0, 0), V(0, 0), V(0, 0), V(0, 0), V(0, 0), V(0, 0))
        withUnsafeMutableBytes(of: &xs) { xb in
            let xp = xb.baseAddress!
            while i + 8 <= blocks {
                var s0 = pshufb(ctr, rev) ^ k0, s1 = pshufb(inc32(ctr, 1), rev) ^ k0
                var s2 = pshufb(inc32(ctr, 2), rev) ^ k0, s3 = pshufb(inc32(ctr, 3), rev) ^ k0
                var s4 = pshufb(inc32(ctr, 4), rev) ^ k0, s5 = pshufb(inc32(ctr, 5), rev) ^ k0
                var s6 = pshufb(inc32(ctr, 6), rev) ^ k0, s7 = pshufb(inc32(ctr, 7), rev) ^ k0
                ctr = inc32(ctr, 8)
                var lo = V(0, 0), mid = V(0, 0), hi = V(0, 0)
                var r = 1
                while r < rounds {
                    let k = load(rk, 16 * r)
                    s0 = aesenc(s0, k); s1 = aesenc(s1, k); s2 = aesenc(s2, k); s3 = aesenc(s3, k)
                    s4 = aesenc(s4, k); s5 = aesenc(s5, k); s6 = aesenc(s6, k); s7 = aesenc(s7, k)
                    if pending && r <= 8 {
                        // Block r−1 of the previous batch times H^(9−r).
                        var x = load(xp, 16 * (r - 1))
                        if r == 1 { x ^= y }
                        mulParts(x, load(table, 128 - 16 * r), load(table, 256 - 16 * r), &lo, &mid, &hi)
                    }
                    r += 1
                }
                if pending { y = finish(lo, mid, hi) }
                let o = 16 * i
                let c0 = aesenclast(s0, kl ^ load(input, o)), c1 = aesenclast(s1, kl ^ load(input, o + 16))
                let c2 = aesenclast(s2, kl ^ load(input, o + 32)), c3 = aesenclast(s3, kl ^ load(input, o + 48))
                let c4 = aesenclast(s4, kl ^ load(input, o + 64)), c5 = aesenclast(s5, kl ^ load(input, o + 80))
                let c6 = aesenclast(s6, kl ^ load(input, o + 96)), c7 = aesenclast(s7, kl ^ load(input, o + 112))
                store(c0, output, o); store(c1, output, o + 16); store(c2, output, o + 32); store(c3, output, o + 48)
                store(c4, output, o + 64); store(c5, output, o + 80); store(c6, output, o + 96); store(c7, output, o + 112)
                store(pshufb(c0, rev), xp, 0); store(pshufb(c1, rev), xp, 16); store(pshufb(c2, rev), xp, 32)
                store(pshufb(c3, rev), xp, 48); store(pshufb(c4, rev), xp, 64); store(pshufb(c5, rev), xp, 80)
                store(pshufb(c6, rev), xp, 96); store(pshufb(c7, rev), xp, 112)
                pending = true
                i += 8
            }
            if pending { y = absorb8(table, y, load(xp, 0), load(xp, 16), load(xp, 32), load(xp, 48),
                                     load(xp, 64), load(xp, 80), load(xp, 96), load(xp, 112)) }
            // The stack buffer held ciphertext only (public), but leave nothing behind anyway.
            xb.initializeMemory(as: UInt8.self, repeating: 0)
        }
        let h1 = load(table, 0), hk1 = load(table, 128)
        while i < blocks {
            let c = encrypt1(pshufb(ctr, rev), rk, rounds) ^ load(input, 16 * i)
            store(c, output, 16 * i)
            ctr = inc32(ctr, 1)
            var lo = V(0, 0), mid = V(0, 0), hi = V(0, 0)
            mulParts(y ^ pshufb(c, rev), h1, hk1, &lo, &mid, &hi)
            y = finish(lo, mid, hi)
            i += 1
        }
        store(pshufb(ctr, rev), counter, 0)
        store(pshufb(y, rev), state, 0)
    }

    /// AES-GCM decryption of `blocks` whole blocks: GHASH of the ciphertext `input` into `state` and
    /// CTR decryption into `output`, in one pass. The caller checks the tag and wipes `output` on failure.
    ///
    /// Stitched like ``gcmEncrypt(_:_:_:_:_:_:_:_:)``: the batch's own ciphertext is known up front, so its GHASH runs
    /// in the AES rounds of the same batch (one block per round in rounds 1–8).
    @_alwaysEmitIntoClient @inline(__always)
    public static func gcmDecrypt(_ rk: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                                  _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                                  _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, _ blocks: Int) {
        let rev = reverseBytesMask
        let k0 = load(rk, 0), kl = load(rk, 16 * rounds)
        var ctr = pshufb(load(counter, 0), rev)
        var y = pshufb(load(state, 0), rev)
        var i = 0
        while i + 8 <= blocks {
            let o = 16 * i
            var s0 = pshufb(ctr, rev) ^ k0, s1 = pshufb(inc32(ctr, 1), rev) ^ k0
            var s2 = pshufb(inc32(ctr, 2), rev) ^ k0, s3 = pshufb(inc32(ctr, 3), rev) ^ k0
            var s4 = pshufb(inc32(ctr, 4), rev) ^ k0, s5 = pshufb(inc32(ctr, 5), rev) ^ k0
            var s6 = pshufb(inc32(ctr, 6), rev) ^ k0, s7 = pshufb(inc32(ctr, 7), rev) ^ k0
            ctr = inc32(ctr, 8)
            var lo = V(0, 0), mid = V(0, 0), hi = V(0, 0)
            var r = 1
            while r < rounds {
                let k = load(rk, 16 * r)
                s0 = aesenc(s0, k); s1 = aesenc(s1, k); s2 = aesenc(s2, k); s3 = aesenc(s3, k)
                s4 = aesenc(s4, k); s5 = aesenc(s5, k); s6 = aesenc(s6, k); s7 = aesenc(s7, k)
                if r <= 8 {
                    // Block r−1 of this batch times H^(9−r).
                    var x = pshufb(load(input, o + 16 * (r - 1)), rev)
                    if r == 1 { x = vxor(x, y) }
                    mulParts(x, load(table, 128 - 16 * r), load(table, 256 - 16 * r), &lo, &mid, &hi)
                }
                r += 1
            }
            y = finish(lo, mid, hi)
            store(aesenclast(s0, kl ^ load(input, o)), output, o)
            store(aesenclast(s1, kl ^ load(input, o + 16)), output, o + 16)
            store(aesenclast(s2, kl ^ load(input, o + 32)), output, o + 32)
            store(aesenclast(s3, kl ^ load(input, o + 48)), output, o + 48)
            store(aesenclast(s4, kl ^ load(input, o + 64)), output, o + 64)
            store(aesenclast(s5, kl ^ load(input, o + 80)), output, o + 80)
            store(aesenclast(s6, kl ^ load(input, o + 96)), output, o + 96)
            store(aesenclast(s7, kl ^ load(input, o + 112)), output, o + 112)
            i += 8
        }
        let h1 = load(table, 0), hk1 = load(table, 128)
        while i < blocks {
            let c = load(input, 16 * i)
            var lo = V(0, 0), mid = V(0, 0), hi = V(0, 0)
            mulParts(y ^ pshufb(c, rev), h1, hk1, &lo, &mid, &hi)
            y = finish(lo, mid, hi)
            store(encrypt1(pshufb(ctr, rev), rk, rounds) ^ c, output, 16 * i)
            ctr = inc32(ctr, 1)
            i += 1
        }
        store(pshufb(ctr, rev), counter, 0)
        store(pshufb(y, rev), state, 0)
    }
}

#endif
