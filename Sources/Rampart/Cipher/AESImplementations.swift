// The AES family's portable implementations as the registry sees them (Platform/Registry.swift), their
// known-answer self-tests and the fault switch's corrupted forms. The kernels declare their own
// conformances in their modules (RampartAccelAESNI, RampartAccelAESAVX, RampartAccelVAES,
// RampartAccelVAES512, RampartAccelAESSHA, RampartAccelARMv8).

internal import RampartKernelSupport

// MARK: - Portable implementations

/// The bitsliced constant-time AES of AESPortable.swift, in the `.bitsliced` schedule layout.
enum AESPortable: AESImplementation {
    static var name: String { "portable" }
    static var requires: KernelFeatures { [] }
    static var layout: AESScheduleLayout { .bitsliced }
    /// Eight words per round key, fifteen round keys for AES-256.
    static var scheduleBytes: Int { 8 * 8 * 15 }

    @inline(__always) static func skey(_ schedule: UnsafeRawPointer) -> UnsafePointer<UInt64> {
        schedule.assumingMemoryBound(to: UInt64.self)
    }

    static func expandKey(_ key: UnsafeRawPointer, _ keyLength: Int, _ schedule: UnsafeMutableRawPointer) -> Int {
        AESPortableCore.expandKey(key, keyLength, schedule.assumingMemoryBound(to: UInt64.self))
    }

    static func encryptECB(_ schedule: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) {
        let k = skey(schedule)
        var i = 0
        while i < n {
            let m = min(4, n - i)
            AESPortableCore.encrypt(k, rounds, src + 16 * i, dst + 16 * i, m)
            i += m
        }
    }

    static func decryptECB(_ schedule: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) {
        let k = skey(schedule)
        var i = 0
        while i < n {
            let m = min(4, n - i)
            AESPortableCore.decrypt(k, rounds, src + 16 * i, dst + 16 * i, m)
            i += m
        }
    }

    static func ctr(_ schedule: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer,
                    _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        let k = skey(schedule)
        var hi = UnsafeRawPointer(counter).loadBE64(0), lo = UnsafeRawPointer(counter).loadBE64(8)
        withScratch { ks in
            var i = 0
            while i < n {
                let m = min(4, n - i)
                for j in 0..<m {
                    ks.storeBE64(hi, 16 * j); ks.storeBE64(lo, 16 * j + 8)
                    lo &+= 1
                    if lo == 0 { hi &+= 1 }  // the counter is public: branching on it leaks nothing
                }
                AESPortableCore.encrypt(k, rounds, ks, ks, m)
                xorBytes(dst + 16 * i, src + 16 * i, UnsafeRawPointer(ks), 16 * m)
                i += m
            }
        }
        counter.storeBE64(hi, 0); counter.storeBE64(lo, 8)
    }

    static func cbcEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        let k = skey(schedule)
        var c0 = UnsafeRawPointer(iv).loadLE64(0), c1 = UnsafeRawPointer(iv).loadLE64(8)
        for i in 0..<n {
            (c0, c1) = AESPortableCore.encryptOne(k, rounds, src.loadLE64(16 * i) ^ c0, src.loadLE64(16 * i + 8) ^ c1)
            dst.storeLE64(c0, 16 * i); dst.storeLE64(c1, 16 * i + 8)
        }
        iv.storeLE64(c0, 0); iv.storeLE64(c1, 8)
    }

    static func cbcDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        let k = skey(schedule)
        withScratch { buf in
            // buf[0..<16]: previous ciphertext block; buf[16..<80]: decrypted blocks.
            buf.copyMemory(from: iv, byteCount: 16)
            let d = UnsafeRawPointer(buf + 16)
            var i = 0
            while i < n {
                let m = min(4, n - i)
                AESPortableCore.decrypt(k, rounds, src + 16 * i, buf + 16, m)
                // Keep the last ciphertext block of the group before an in-place write overwrites it.
                let last0 = src.loadLE64(16 * (i + m - 1)), last1 = src.loadLE64(16 * (i + m - 1) + 8)
                // Highest block first: block j needs ciphertext j - 1, still intact in the input.
                var j = m - 1
                while j > 0 {
                    let o = 16 * (i + j)
                    dst.storeLE64(d.loadLE64(16 * j) ^ src.loadLE64(o - 16), o)
                    dst.storeLE64(d.loadLE64(16 * j + 8) ^ src.loadLE64(o - 8), o + 8)
                    j -= 1
                }
                dst.storeLE64(d.loadLE64(0) ^ UnsafeRawPointer(buf).loadLE64(0), 16 * i)
                dst.storeLE64(d.loadLE64(8) ^ UnsafeRawPointer(buf).loadLE64(8), 16 * i + 8)
                buf.storeLE64(last0, 0); buf.storeLE64(last1, 8)
                i += m
            }
            iv.copyMemory(from: buf, byteCount: 16)
        }
    }

    static func igeEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        let k = skey(schedule)
        let v = UnsafeRawPointer(iv)
        var c0 = v.loadLE64(0), c1 = v.loadLE64(8), p0 = v.loadLE64(16), p1 = v.loadLE64(24)
        for i in 0..<n {
            let x0 = src.loadLE64(16 * i), x1 = src.loadLE64(16 * i + 8)
            let (e0, e1) = AESPortableCore.encryptOne(k, rounds, x0 ^ c0, x1 ^ c1)
            c0 = e0 ^ p0; c1 = e1 ^ p1
            p0 = x0; p1 = x1
            dst.storeLE64(c0, 16 * i); dst.storeLE64(c1, 16 * i + 8)
        }
        iv.storeLE64(c0, 0); iv.storeLE64(c1, 8); iv.storeLE64(p0, 16); iv.storeLE64(p1, 24)
    }

    static func igeDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        let k = skey(schedule)
        let v = UnsafeRawPointer(iv)
        var c0 = v.loadLE64(0), c1 = v.loadLE64(8), p0 = v.loadLE64(16), p1 = v.loadLE64(24)
        for i in 0..<n {
            let x0 = src.loadLE64(16 * i), x1 = src.loadLE64(16 * i + 8)
            let (d0, d1) = AESPortableCore.decryptOne(k, rounds, x0 ^ p0, x1 ^ p1)
            p0 = d0 ^ c0; p1 = d1 ^ c1
            c0 = x0; c1 = x1
            dst.storeLE64(p0, 16 * i); dst.storeLE64(p1, 16 * i + 8)
        }
        iv.storeLE64(c0, 0); iv.storeLE64(c1, 8); iv.storeLE64(p0, 16); iv.storeLE64(p1, 24)
    }
}

/// The table-free constant-time GHASH of GHASH.swift; its table holds the derived key
/// (``GHASHPortableKey``, 48 bytes). GCM runs CTR on the portable AES, then GHASH, four blocks at a
/// time.
extension GHASHPortable: GHASHImplementation {
    static var name: String { "portable" }
    static var requires: KernelFeatures { [] }
    static var aesLayout: AESScheduleLayout { .bitsliced }

    static func precompute(_ h: UnsafeRawPointer, _ table: UnsafeMutableRawPointer, absorbBlocks: Int, gcmBlocks: Int) {
        table.initializeMemory(as: GHASHPortableKey.self, to: GHASHPortableKey(hashKey: h))
    }

    static func absorb(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer, _ data: UnsafeRawPointer, _ n: Int) {
        absorb(table.assumingMemoryBound(to: GHASHPortableKey.self).pointee, state, data, n)
    }

    static func gcmEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                           _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        GCMEngine.ctrAndHash(AESPortable.self, schedule, rounds, counter, src, dst, n, true) { absorb(table, state, $0, $1) }
    }

    static func gcmDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer,
                           _ counter: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer,
                           _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        GCMEngine.ctrAndHash(AESPortable.self, schedule, rounds, counter, src, dst, n, false) { absorb(table, state, $0, $1) }
    }
}

/// IGE decryption on the portable AES, then the portable SHA-256 over the whole blocks of
/// prefix ‖ plaintext.
enum IGESHA256Portable: IGESHA256Implementation {
    static var name: String { "portable" }
    static var requires: KernelFeatures { [] }
    static var aesLayout: AESScheduleLayout { .bitsliced }

    static func decrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer,
                        _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int,
                        _ state: UnsafeMutablePointer<UInt32>, _ prefix: UnsafeRawPointer) -> Int {
        AESPortable.igeDecrypt(schedule, rounds, iv, src, dst, n)
        let blocks = (32 + 16 * n) / 64
        guard blocks > 0 else { return 0 }
        // SHA-256 block 0 is the prefix and the first 32 plaintext bytes; the others lie in `dst`.
        withUnsafeTemporaryAllocation(byteCount: 64, alignment: 16) { first in
            first.baseAddress!.copyMemory(from: prefix, byteCount: 32)
            (first.baseAddress! + 32).copyMemory(from: UnsafeRawPointer(dst), byteCount: 32)
            SHA256Portable.blocks(state, UnsafeRawPointer(first.baseAddress!), 1)
            secureZero(first)
        }
        SHA256Portable.blocks(state, UnsafeRawPointer(dst + 32), blocks - 1)
        return 64 * blocks - 32
    }
}

/// One lane: each message alone on the portable AES (MultiBuffer runs the jobs one by one on their own
/// backend instead when this is selected).
enum IGELanesPortable: IGELanesImplementation {
    static var name: String { "portable" }
    static var requires: KernelFeatures { [] }
    static var lanes: Int { 1 }
    static var scheduleBytes: Int { AESPortable.scheduleBytes }
    static var scratchBytes: Int { 0 }

    static func expandKeys256(_ keys: UnsafePointer<UnsafeRawPointer>, _ count: Int, _ schedules: UnsafeMutableRawPointer) -> Int {
        for i in 0..<count { _ = AESPortable.expandKey(keys[i], 32, schedules + scheduleBytes * i) }
        return 14
    }

    static func encrypt(_ schedules: UnsafePointer<UnsafeRawPointer>, _ rounds: Int, _ ivs: UnsafePointer<UnsafeMutableRawPointer>,
                        _ data: UnsafePointer<UnsafeMutableRawPointer>, _ strides: UnsafePointer<Int>, _ n: Int,
                        _ scratch: UnsafeMutableRawPointer) {
        for b in 0..<n {
            let p = data[0] + b * strides[0]
            AESPortable.igeEncrypt(schedules[0], rounds, ivs[0], p, p, 1)
        }
    }
}

// MARK: - Known-answer self-tests
//
// They work on raw memory (one allocation a test, the published values parsed once into another), so
// that all of them together stay cheap even in a debug build, where collection code is slow.

/// The published answers the self-tests check (and their inputs), parsed once into one buffer.
private enum KAT: Int, CaseIterable {
    case fipsKey, fipsPlain, fips128, fips192, fips256, sp800Key,
         sp800Plain, cbcIV, cbcAnswer, ctrCounter, ctrAnswer, ige1Key,
         ige1IV, ige1Plain, ige1Answer, ige2Key, ige2IV, ige2Plain,
         ige2Answer, mtKey, mtIV, mtPlain, mtCipher, gcmKey,
         gcmNonce, gcmAAD, gcmPlain, gcmAnswer16, gcmTag16, gcmNonce18,
         gcmTag18, gcmTagLong, igeSHA12, igeSHA3

    var hex: String {
        switch self {
        // FIPS-197 Appendix C: the keys are its first 16, 24 or 32 bytes
        case .fipsKey: return "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
        // FIPS-197 Appendix C: the plaintext
        case .fipsPlain: return "00112233445566778899aabbccddeeff"
        // FIPS-197 C.1 (AES-128)
        case .fips128: return "69c4e0d86a7b0430d8cdb78070b4c55a"
        // FIPS-197 C.2 (AES-192)
        case .fips192: return "dda97ca4864cdfe06eaf70a0ec0d7191"
        // FIPS-197 C.3 (AES-256)
        case .fips256: return "8ea2b7ca516745bfeafc49904b496089"
        // SP 800-38A F.2.5 and F.5.5: the AES-256 key
        case .sp800Key: return "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"
        // the four plaintext blocks
        case .sp800Plain: return """
            6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51\
            30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710
            """
        // F.2.5 (CBC-AES256): IV
        case .cbcIV: return "000102030405060708090a0b0c0d0e0f"
        // ciphertext
        case .cbcAnswer: return """
            f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d\
            39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b
            """
        // F.5.5 (CTR-AES256): initial counter block
        case .ctrCounter: return "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
        // ciphertext
        case .ctrAnswer: return """
            601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5\
            2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6
            """
        // OpenSSL's test/igetest.c, first vector (AES-128): key
        case .ige1Key: return "000102030405060708090a0b0c0d0e0f"
        // IV
        case .ige1IV: return "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
        // plaintext
        case .ige1Plain: return "0000000000000000000000000000000000000000000000000000000000000000"
        // ciphertext
        case .ige1Answer: return "1a8519a6557be652e9da8e43da4ef4453cf456b4ca488aa383c79c98b34797cb"
        // second vector: key
        case .ige2Key: return "5468697320697320616e20696d706c65"
        // IV
        case .ige2IV: return "6d656e746174696f6e206f6620494745206d6f646520666f72204f70656e5353"
        // plaintext
        case .ige2Plain: return "99706487a1cde613bc6de0b6f24b1c7aa448c8b9c3403e3467a8cad89340f53b"
        // ciphertext
        case .ige2Answer: return "4c2e204c6574277320686f70652042656e20676f74206974207269676874210a"
        // Telegram's AES-256-IGE sample (the auth-key exchange's server_DH_inner_data,
        // Vectors/aes_published.json mtproto-auth-key-sample-answer): key
        case .mtKey: return "d32e4a7f18252ae2b0406b84633e1117833ed75bda40011d1e1700e3e08a8ae7"
        // IV
        case .mtIV: return "4ffc40d969d49934ed3740ff66d9179947a5e1d85c4c7f15555920c1845fad32"
        // the first twenty plaintext blocks
        case .mtPlain: return """
            adddf2feb5e14f93ee8d3a5181f9d89a39e4439cba0d89b515a084b3b9ca2a17\
            f03925f44b78fe68d6701fcd212ceb87c966e5318f5564a803000000fe000100\
            c71caeb9c6b1c9048e6c522f70f13f73980d40238e3e21c14934d037563d930f\
            48198a0aa7c14058229493d22530f4dbfa336f6e0ac925139543aed44cce7c37\
            20fd51f69458705ac68cd4fe6b6b13abdc9746512969328454f18faf8c595f64\
            2477fe96bb2a941d5bcd1d4ac8cc49880708fa9b378e3c4f3a9060bee67cf9a4\
            a4a695811051907e162753b56b0f6b410dba74d8a84b2a14b3144e0ef1284754\
            fd17ed950d5965b4b9dd46582db1178d169c6bc465b0d6ff9ca3928fef5b9ae4\
            e418fc15e83ebea0f87fa9ff5eed70050ded2849f47bf959d956850ce929851f\
            0d8115f635b105ee2e4e15d04b2454bf6f4fadf034b10403119cd8e3b92fcc5b
            """
        // the first twenty ciphertext blocks
        case .mtCipher: return """
            fef627ac3a88027bc6583f95d82e610066a87b839614ee343cd8d37f2b2c81fc\
            964561ba164f44e4b3c39a6cc74c6e2f2687c2e5872658e4301734b3814d420c\
            684d94c0b93c4b335dbb346266cdad20b3eec91ae49b59e130eab877fd03c07b\
            a786da8eff7bddcb773e0c4c1c7c66fe5c5a39d32a76400d71fbd2a09d5bfdf3\
            b3976f17c1da7fd77349cbd97ebc5217181541f43d8dedb3027dc3989623dcf8\
            49ff391832f409903e7620ebbf7675cefa13cec90570bb0ee196c5bb67db169d\
            b902c1192f67d9a74b1b9782ff02fd4db78c76117d6639a6ed87f5deb37ed492\
            96f2c94ea835d0988a270749c3e6d1d0b0be88f3985d683e48f2e2ac7648175e\
            e72bea1b52641c23ec8eefbd6025516e91cce20c25cb5159b5c9d9ca19a15dd4\
            a44f422946b758ec4c968bde0832e2389d5b9f3c3ac520ac58753747717f7276
            """
        // The GCM specification (McGrew and Viega), test cases 15, 16 and 18: key
        case .gcmKey: return "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"
        // nonce of 15 and 16
        case .gcmNonce: return "cafebabefacedbaddecaf888"
        // associated data of 16 and 18
        case .gcmAAD: return "feedfacedeadbeeffeedfacedeadbeefabaddad2"
        // plaintext of 15 (of 16 and 18: its first 60 bytes)
        case .gcmPlain: return """
            d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72\
            1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255
            """
        // ciphertext of 16
        case .gcmAnswer16: return """
            522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa\
            8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662
            """
        // tag of 16
        case .gcmTag16: return "76fc6ece0f4e1768cddf8853bb2d551b"
        // nonce of 18
        case .gcmNonce18: return """
            9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728\
            c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b
            """
        // tag of 18
        case .gcmTag18: return "a44a8266ee1c8eb0c8b5d4cf5ae9f19a"
        // the tag of 400 bytes of the plaintext of 15 repeated, under the key, nonce and
        // associated data of 16 (OpenSSL; the pure-Python GCM of Vectors/generate.py agrees)
        case .gcmTagLong: return "2113f9e2dd89fa637bbacb853b75c001"
        // SHA-256(00 01 … 1f ‖ the first twelve plaintext blocks of the IGE sample) (Python hashlib)
        case .igeSHA12: return "bce5016d769b7195651694370839bad278896aa4bbb5fcc1c9ed6f21aff0d7d2"
        // SHA-256(00 01 … 1f ‖ its first three plaintext blocks)
        case .igeSHA3: return "6ad21b76f0e8062abd23a20b0b3aa865e834a7ffa6ddbcd9c891383d02c4cbfb"
        }
    }


    /// Where the value starts in ``buffer``.
    var p: UnsafeRawPointer { UnsafeRawPointer(KAT.buffer.base + KAT.buffer.offsets[rawValue]) }

    /// Every value's bytes, one after the other, and where each starts.
    nonisolated(unsafe) private static let buffer: (base: UnsafeMutableRawPointer, offsets: [Int]) = {
        var offsets: [Int] = [], total = 0
        for k in allCases { offsets.append(total); total += k.hex.utf8.count / 2 }
        let base = UnsafeMutableRawPointer.allocate(byteCount: total, alignment: 16)
        for k in allCases {
            var q = base + offsets[k.rawValue], high: UInt8? = nil
            for c in k.hex.utf8 {
                let v = Hex.value(c)!
                if let h = high { q.storeBytes(of: h << 4 | v, as: UInt8.self); q += 1; high = nil } else { high = v }
            }
        }
        return (base, offsets)
    }()
}

/// Whether the `count` bytes at `a` and `b` are equal.
private func same(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
    var d: UInt64 = 0, i = 0
    while i + 8 <= count {
        d |= a.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        i += 8
    }
    while i < count {
        d |= UInt64(a.load(fromByteOffset: i, as: UInt8.self) ^ b.load(fromByteOffset: i, as: UInt8.self))
        i += 1
    }
    return d == 0
}

/// `count` copies of the `size` bytes at `source` at `to`.
private func repeated(_ source: UnsafeRawPointer, _ size: Int, _ count: Int, to: UnsafeMutableRawPointer) {
    for k in 0..<count { (to + size * k).copyMemory(from: source, byteCount: size) }
}

/// A 4 KiB work area (64-byte aligned) for `body`; the self-tests use published keys only, so nothing
/// is wiped.
private func withTestArea<R>(_ body: (UnsafeMutableRawPointer) -> R) -> R {
    let p = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 64)
    defer { p.deallocate() }
    return body(p)
}

/// The 128-bit big-endian counter block `c + k` at `to`.
private func counter(_ c: UnsafeRawPointer, plus k: Int, to: UnsafeMutableRawPointer) {
    let lo = c.loadBE64(8), (sum, carry) = lo.addingReportingOverflow(UInt64(k))
    to.storeBE64(c.loadBE64(0) &+ (carry ? 1 : 0), 0)
    to.storeBE64(sum, 8)
}

/// The IGE chain state before block `i` of Telegram's sample (c_{i−1} ‖ p_{i−1}, the IV for i = 0)
/// at `to`: IGE's first blocks depend only on the first blocks, so every run of the sample's blocks
/// from block i on, started from this state, is a published answer.
private func mtprotoChain(before i: Int, to: UnsafeMutableRawPointer) {
    if i == 0 {
        to.copyMemory(from: KAT.mtIV.p, byteCount: 32)
    } else {
        to.copyMemory(from: KAT.mtCipher.p + 16 * (i - 1), byteCount: 16)
        (to + 16).copyMemory(from: KAT.mtPlain.p + 16 * (i - 1), byteCount: 16)
    }
}

/// Every AES entry point against published answers: FIPS-197 Appendix C.1–C.3 (AES-128, -192, -256) on
/// nine blocks at once (an eight-block group and a single block) both ways; SP 800-38A F.2.5 (CBC) and
/// F.5.5 (CTR), and, for the kernels that only take groups of sixteen blocks, CBC decryption of its
/// ciphertext repeated five times (block 4k of it decrypts to p_1 ⊕ IV ⊕ c_4) and twenty CTR blocks
/// (the first four published, every one equal to the ECB encryption of its counter block); OpenSSL's
/// IGE test vectors (AES-128) and the first eight blocks of Telegram's AES-256 sample, both ways; with
/// the chaining values every call leaves behind.
func aesSelfTest(_ impl: any AESImplementation.Type) -> Bool {
    withTestArea { area in
        // The schedule, then the data (up to 20 blocks), the expected data, and the chaining values.
        let schedule = area, data = area + 1024, want = area + 1536, iv = area + 2048, wantIV = area + 2112
        var ok = true
        for (n, answer, wantRounds) in [(16, KAT.fips128, 10), (24, KAT.fips192, 12), (32, KAT.fips256, 14)] {
            let rounds = impl.expandKey(KAT.fipsKey.p, n, schedule)
            repeated(KAT.fipsPlain.p, 16, 9, to: data)
            impl.encryptECB(schedule, rounds, data, data, 9)
            for k in 0..<9 { ok = ok && same(data + 16 * k, answer.p, 16) }
            impl.decryptECB(schedule, rounds, data, data, 9)
            for k in 0..<9 { ok = ok && same(data + 16 * k, KAT.fipsPlain.p, 16) }
            ok = ok && rounds == wantRounds
        }
        let rounds = impl.expandKey(KAT.sp800Key.p, 32, schedule)
        ok = ok && rounds == 14
        // CBC: F.2.5 both ways.
        data.copyMemory(from: KAT.sp800Plain.p, byteCount: 64)
        iv.copyMemory(from: KAT.cbcIV.p, byteCount: 16)
        impl.cbcEncrypt(schedule, rounds, iv, data, data, 4)
        ok = ok && same(data, KAT.cbcAnswer.p, 64) && same(iv, KAT.cbcAnswer.p + 48, 16)
        iv.copyMemory(from: KAT.cbcIV.p, byteCount: 16)
        impl.cbcDecrypt(schedule, rounds, iv, data, data, 4)
        ok = ok && same(data, KAT.sp800Plain.p, 64) && same(iv, KAT.cbcAnswer.p + 48, 16)
        // The ciphertext five times (a sixteen-block group and four): block 4k, k ≥ 1, is chained to
        // c_4 instead of the IV.
        repeated(KAT.cbcAnswer.p, 64, 5, to: data)
        repeated(KAT.sp800Plain.p, 64, 5, to: want)
        xorBytes(wantIV, KAT.cbcIV.p, KAT.cbcAnswer.p + 48, 16)
        for k in 1..<5 { xorBytes(want + 64 * k, UnsafeRawPointer(want + 64 * k), UnsafeRawPointer(wantIV), 16) }
        iv.copyMemory(from: KAT.cbcIV.p, byteCount: 16)
        impl.cbcDecrypt(schedule, rounds, iv, data, data, 20)
        ok = ok && same(data, want, 320) && same(iv, KAT.cbcAnswer.p + 48, 16)
        // CTR: F.5.5, then twenty keystream blocks, each the ECB encryption of its counter block.
        data.copyMemory(from: KAT.sp800Plain.p, byteCount: 64)
        iv.copyMemory(from: KAT.ctrCounter.p, byteCount: 16)
        impl.ctr(schedule, rounds, iv, data, data, 4)
        counter(KAT.ctrCounter.p, plus: 4, to: wantIV)
        ok = ok && same(data, KAT.ctrAnswer.p, 64) && same(iv, wantIV, 16)
        data.initializeMemory(as: UInt8.self, repeating: 0, count: 320)
        iv.copyMemory(from: KAT.ctrCounter.p, byteCount: 16)
        impl.ctr(schedule, rounds, iv, data, data, 20)
        for k in 0..<20 { counter(KAT.ctrCounter.p, plus: k, to: want + 16 * k) }
        impl.encryptECB(schedule, rounds, want, want, 20)
        counter(KAT.ctrCounter.p, plus: 20, to: wantIV)
        ok = ok && same(data, want, 320) && same(iv, wantIV, 16)
        xorBytes(data, UnsafeRawPointer(data), KAT.sp800Plain.p, 64)
        ok = ok && same(data, KAT.ctrAnswer.p, 64)
        // IGE: OpenSSL's vectors, then the first eight blocks of Telegram's sample.
        for (key, iv0, plain, answer) in [(KAT.ige1Key, KAT.ige1IV, KAT.ige1Plain, KAT.ige1Answer),
                                          (KAT.ige2Key, KAT.ige2IV, KAT.ige2Plain, KAT.ige2Answer)] {
            let r = impl.expandKey(key.p, 16, schedule)
            ok = ok && igeBothWays(impl, schedule, r, iv0.p, plain.p, answer.p, 2, area + 2176)
        }
        let r = impl.expandKey(KAT.mtKey.p, 32, schedule)
        ok = ok && igeBothWays(impl, schedule, r, KAT.mtIV.p, KAT.mtPlain.p, KAT.mtCipher.p, 8, area + 2176)
        return ok
    }
}

/// IGE encryption of the `n` blocks at `plain` gives `answer` and decryption gives `plain` back, each
/// leaving the last (ciphertext, plaintext) pair as the IV. `work` is 16·`n` + 64 bytes.
private func igeBothWays(_ impl: any AESImplementation.Type, _ schedule: UnsafeRawPointer, _ rounds: Int, _ iv0: UnsafeRawPointer,
                         _ plain: UnsafeRawPointer, _ answer: UnsafeRawPointer, _ n: Int, _ work: UnsafeMutableRawPointer) -> Bool {
    let iv = work, data = work + 32
    data.copyMemory(from: plain, byteCount: 16 * n)
    iv.copyMemory(from: iv0, byteCount: 32)
    impl.igeEncrypt(schedule, rounds, iv, data, data, n)
    var ok = same(data, answer, 16 * n) && same(iv, answer + 16 * (n - 1), 16) && same(iv + 16, plain + 16 * (n - 1), 16)
    iv.copyMemory(from: iv0, byteCount: 32)
    impl.igeDecrypt(schedule, rounds, iv, data, data, n)
    ok = ok && same(data, plain, 16 * n) && same(iv, answer + 16 * (n - 1), 16) && same(iv + 16, plain + 16 * (n - 1), 16)
    return ok
}

/// The AES implementation a GHASH or IGE-SHA-256 implementation's self-test runs with: the first
/// runnable one of the layout it reads (the portable code for the portable layout, even if its own
/// self-test failed), or nil.
private func aesReading(_ layout: AESScheduleLayout) -> (any AESImplementation.Type)? {
    Registries.aesImplementation(reading: layout) ?? (layout == .bitsliced ? AESPortable.self : nil)
}

/// GHASH through the GCM engine with the AES implementation whose schedule layout its GCM loop reads:
/// the GCM spec's test case 16 (60 bytes: three blocks and a tail, 20 bytes of associated data) sealed
/// and opened, test case 18 (a 60-byte nonce, hashed into the first counter) sealed; and, for the
/// eight- and sixteen-block loops, 400 bytes (25 blocks: a sixteen-block group, an eight-block one and
/// a single block) of test case 15's plaintext repeated, under test case 16's key, nonce and associated
/// data, against a tag computed with OpenSSL, sealed with a table made for the call and opened with one
/// made for any length (a `gcmKey` cipher's).
func ghashSelfTest(_ ghash: any GHASHImplementation.Type) -> Bool {
    guard let aes = aesReading(ghash.aesLayout) else { return false }
    return withTestArea { area in
        let schedule = area, table = area + 1024, message = area + 1536, output = area + 1936, tag = area + 2336
        let rounds = aes.expandKey(KAT.gcmKey.p, 32, schedule)
        let stitched = ghash.aesLayout == aes.layout
        /// Seals (or opens, checking the tag at `tag`) the `n` bytes at `message` into `output`.
        func gcm(_ n: Int, nonce: KAT, aad: Bool, sealing: Bool, prepared: Bool) -> Bool {
            if prepared {
                output.initializeMemory(as: UInt8.self, repeating: 0, count: 16)
                aes.encryptECB(schedule, rounds, output, output, 1)
                ghash.precompute(output, table, absorbBlocks: .max, gcmBlocks: .max)
            }
            let nonceBytes = UnsafeRawBufferPointer(start: nonce.p, count: nonce.hex.utf8.count / 2)
            let aadBytes = UnsafeRawBufferPointer(start: aad ? KAT.gcmAAD.p : nil, count: aad ? 20 : 0)
            return GCMEngine.run(aes: aes, schedule: schedule, rounds: rounds, ghash: ghash, stitched: stitched,
                                 table: prepared ? UnsafeRawPointer(table) : nil, nonceBytes, aadBytes,
                                 UnsafeRawBufferPointer(start: message, count: n), UnsafeMutableRawBufferPointer(start: output, count: n),
                                 sealing: sealing, tagOut: sealing ? tag : nil, tagIn: sealing ? nil : UnsafeRawPointer(tag))
        }
        message.copyMemory(from: KAT.gcmPlain.p, byteCount: 60)
        var ok = gcm(60, nonce: .gcmNonce, aad: true, sealing: true, prepared: false)
        ok = ok && same(output, KAT.gcmAnswer16.p, 60) && same(tag, KAT.gcmTag16.p, 16)
        message.copyMemory(from: KAT.gcmAnswer16.p, byteCount: 60)
        ok = ok && gcm(60, nonce: .gcmNonce, aad: true, sealing: false, prepared: false) && same(output, KAT.gcmPlain.p, 60)
        message.copyMemory(from: KAT.gcmPlain.p, byteCount: 60)
        ok = ok && gcm(60, nonce: .gcmNonce18, aad: true, sealing: true, prepared: false) && same(tag, KAT.gcmTag18.p, 16)
        // 400 bytes: the 64-byte plaintext six times and 16 bytes of it.
        repeated(KAT.gcmPlain.p, 64, 6, to: message)
        (message + 384).copyMemory(from: KAT.gcmPlain.p, byteCount: 16)
        ok = ok && gcm(400, nonce: .gcmNonce, aad: true, sealing: true, prepared: false) && same(tag, KAT.gcmTagLong.p, 16)
        message.copyMemory(from: output, byteCount: 400)
        ok = ok && gcm(400, nonce: .gcmNonce, aad: true, sealing: false, prepared: true)
        for k in 0..<6 { ok = ok && same(output + 64 * k, KAT.gcmPlain.p, 64) }
        return ok && same(output + 384, KAT.gcmPlain.p, 16)
    }
}

/// The stitched decryption through the AES implementation whose layout it reads: the first twelve and
/// the first three blocks of Telegram's AES-256-IGE sample decrypt to the published plaintext (with the
/// chaining values left as the IV), and the SHA-256 state it returns, finished by the portable SHA-256
/// over the rest and the padding, is SHA-256(00 01 … 1f ‖ that plaintext).
func igeSHA256SelfTest(_ impl: any IGESHA256Implementation.Type) -> Bool {
    guard let aes = aesReading(impl.aesLayout) else { return false }
    return withTestArea { area in
        let schedule = area, data = area + 1024, iv = area + 1280, wantIV = area + 1312, prefix = area + 1344
        let tail = area + 1408  // 128 bytes
        let state = (area + 1536).bindMemory(to: UInt32.self, capacity: 8)
        let rounds = aes.expandKey(KAT.mtKey.p, 32, schedule)
        for k in 0..<32 { prefix.storeBytes(of: UInt8(k), toByteOffset: k, as: UInt8.self) }
        var ok = rounds == 14
        for (n, digest) in [(12, KAT.igeSHA12), (3, KAT.igeSHA3)] {
            data.copyMemory(from: KAT.mtCipher.p, byteCount: 16 * n)
            iv.copyMemory(from: KAT.mtIV.p, byteCount: 32)
            let initial: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
            for w in 0..<8 { state[w] = initial[w] }
            let hashed = impl.decrypt(schedule, rounds, iv, data, data, n, state, prefix)
            mtprotoChain(before: n, to: wantIV)
            ok = ok && hashed == 64 * ((32 + 16 * n) / 64) - 32 && same(data, KAT.mtPlain.p, 16 * n) && same(iv, wantIV, 32)
            guard ok else { return false }
            // The rest of 00 … 1f ‖ plaintext (under 64 bytes here) and the padding: one or two blocks.
            let total = 32 + 16 * n, rest = total - 32 - hashed
            tail.initializeMemory(as: UInt8.self, repeating: 0, count: 128)
            tail.copyMemory(from: data + hashed, byteCount: rest)
            tail.storeBytes(of: 0x80, toByteOffset: rest, as: UInt8.self)
            let blocks = rest + 9 <= 64 ? 1 : 2
            tail.storeBE64(UInt64(8 * total), 64 * blocks - 8)
            SHA256Portable.blocks(state, UnsafeRawPointer(tail), blocks)
            for w in 0..<8 { ok = ok && state[w] == digest.p.loadBE32(4 * w) }
        }
        return ok
    }
}

/// Every lane at once on Telegram's AES-256-IGE sample: lane l encrypts the sample's blocks l ..< l + 4
/// from the chain state the sample has before block l, so each lane has its own published answer.
func igeLanesSelfTest(_ impl: any IGELanesImplementation.Type) -> Bool {
    let lanes = impl.lanes, sb = impl.scheduleBytes
    // The schedules, the kernel's scratch, each lane's IV (32 bytes) and data (64), its expected IV.
    let ivs = sb * lanes + impl.scratchBytes, data = ivs + 32 * lanes, wantIVs = data + 64 * lanes
    let area = UnsafeMutableRawPointer.allocate(byteCount: wantIVs + 32 * lanes, alignment: 64)
    defer { area.deallocate() }
    return withUnsafeTemporaryAllocation(of: UnsafeRawPointer.self, capacity: 3 * lanes) { pointers in
        withUnsafeTemporaryAllocation(of: Int.self, capacity: lanes) { strides in
            let p = pointers.baseAddress!
            for l in 0..<lanes {
                p[l] = KAT.mtKey.p
                mtprotoChain(before: l, to: area + ivs + 32 * l)
                (area + data + 64 * l).copyMemory(from: KAT.mtPlain.p + 16 * l, byteCount: 64)
                strides[l] = 16
            }
            let rounds = impl.expandKeys256(UnsafePointer(p), lanes, area)
            for l in 0..<lanes {
                p[l] = UnsafeRawPointer(area + sb * l)
                p[lanes + l] = UnsafeRawPointer(area + ivs + 32 * l)
                p[2 * lanes + l] = UnsafeRawPointer(area + data + 64 * l)
            }
            p.withMemoryRebound(to: UnsafeMutableRawPointer.self, capacity: 3 * lanes) { m in
                impl.encrypt(UnsafePointer(p), rounds, UnsafePointer(m + lanes), UnsafePointer(m + 2 * lanes),
                             UnsafePointer(strides.baseAddress!), 4, area + sb * lanes)
            }
            var ok = rounds == 14
            for l in 0..<lanes {
                mtprotoChain(before: l + 4, to: area + wantIVs + 32 * l)
                ok = ok && same(area + data + 64 * l, KAT.mtCipher.p + 16 * l, 64) && same(area + ivs + 32 * l, area + wantIVs + 32 * l, 32)
            }
            return ok
        }
    }
}

// MARK: - The fault switch's corrupted forms

/// The implementation with one output bit flipped after every call.
enum FaultyAES<Base: AESImplementation>: AESImplementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static var layout: AESScheduleLayout { Base.layout }
    static var scheduleBytes: Int { Base.scheduleBytes }
    static func expandKey(_ key: UnsafeRawPointer, _ keyLength: Int, _ schedule: UnsafeMutableRawPointer) -> Int {
        Base.expandKey(key, keyLength, schedule)
    }
    private static func corrupt(_ dst: UnsafeMutableRawPointer, _ n: Int) {
        if n > 0 { dst.storeBytes(of: dst.load(as: UInt8.self) ^ 1, as: UInt8.self) }
    }
    static func encryptECB(_ schedule: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        Base.encryptECB(schedule, rounds, src, dst, n); corrupt(dst, n)
    }
    static func decryptECB(_ schedule: UnsafeRawPointer, _ rounds: Int, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        Base.decryptECB(schedule, rounds, src, dst, n); corrupt(dst, n)
    }
    static func ctr(_ schedule: UnsafeRawPointer, _ rounds: Int, _ counter: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                    _ dst: UnsafeMutableRawPointer, _ n: Int) {
        Base.ctr(schedule, rounds, counter, src, dst, n); corrupt(dst, n)
    }
    static func cbcEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) {
        Base.cbcEncrypt(schedule, rounds, iv, src, dst, n); corrupt(dst, n)
    }
    static func cbcDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) {
        Base.cbcDecrypt(schedule, rounds, iv, src, dst, n); corrupt(dst, n)
    }
    static func igeEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) {
        Base.igeEncrypt(schedule, rounds, iv, src, dst, n); corrupt(dst, n)
    }
    static func igeDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                           _ dst: UnsafeMutableRawPointer, _ n: Int) {
        Base.igeDecrypt(schedule, rounds, iv, src, dst, n); corrupt(dst, n)
    }
}

/// The implementation with one bit of the GHASH state flipped after every absorb and GCM call.
enum FaultyGHASH<Base: GHASHImplementation>: GHASHImplementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static var aesLayout: AESScheduleLayout { Base.aesLayout }
    static func precompute(_ h: UnsafeRawPointer, _ table: UnsafeMutableRawPointer, absorbBlocks: Int, gcmBlocks: Int) {
        Base.precompute(h, table, absorbBlocks: absorbBlocks, gcmBlocks: gcmBlocks)
    }
    private static func corrupt(_ state: UnsafeMutableRawPointer) { state.storeBytes(of: state.load(as: UInt8.self) ^ 1, as: UInt8.self) }
    static func absorb(_ table: UnsafeRawPointer, _ state: UnsafeMutableRawPointer, _ data: UnsafeRawPointer, _ n: Int) {
        Base.absorb(table, state, data, n); corrupt(state)
    }
    static func gcmEncrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                           _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        Base.gcmEncrypt(schedule, rounds, table, counter, state, src, dst, n); corrupt(state)
    }
    static func gcmDecrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ table: UnsafeRawPointer, _ counter: UnsafeMutableRawPointer,
                           _ state: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, _ n: Int) {
        Base.gcmDecrypt(schedule, rounds, table, counter, state, src, dst, n); corrupt(state)
    }
}

/// The implementation with one bit of the SHA-256 state flipped after every call.
enum FaultyIGESHA256<Base: IGESHA256Implementation>: IGESHA256Implementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static var aesLayout: AESScheduleLayout { Base.aesLayout }
    static func decrypt(_ schedule: UnsafeRawPointer, _ rounds: Int, _ iv: UnsafeMutableRawPointer, _ src: UnsafeRawPointer,
                        _ dst: UnsafeMutableRawPointer, _ n: Int, _ state: UnsafeMutablePointer<UInt32>, _ prefix: UnsafeRawPointer) -> Int {
        let hashed = Base.decrypt(schedule, rounds, iv, src, dst, n, state, prefix)
        state[0] ^= 1
        return hashed
    }
}

/// The implementation with one bit of lane 0's first block flipped after every call.
enum FaultyIGELanes<Base: IGELanesImplementation>: IGELanesImplementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static var lanes: Int { Base.lanes }
    static var scheduleBytes: Int { Base.scheduleBytes }
    static var scratchBytes: Int { Base.scratchBytes }
    static func expandKeys256(_ keys: UnsafePointer<UnsafeRawPointer>, _ count: Int, _ schedules: UnsafeMutableRawPointer) -> Int {
        Base.expandKeys256(keys, count, schedules)
    }
    static func encrypt(_ schedules: UnsafePointer<UnsafeRawPointer>, _ rounds: Int, _ ivs: UnsafePointer<UnsafeMutableRawPointer>,
                        _ data: UnsafePointer<UnsafeMutableRawPointer>, _ strides: UnsafePointer<Int>, _ n: Int,
                        _ scratch: UnsafeMutableRawPointer) {
        Base.encrypt(schedules, rounds, ivs, data, strides, n, scratch)
        if n > 0 { data[0].storeBytes(of: data[0].load(as: UInt8.self) ^ 1, as: UInt8.self) }
    }
}

func faultyAES(_ b: any AESImplementation.Type) -> any AESImplementation.Type {
    func wrap<B: AESImplementation>(_: B.Type) -> any AESImplementation.Type { FaultyAES<B>.self }
    return wrap(b)
}
func faultyGHASH(_ b: any GHASHImplementation.Type) -> any GHASHImplementation.Type {
    func wrap<B: GHASHImplementation>(_: B.Type) -> any GHASHImplementation.Type { FaultyGHASH<B>.self }
    return wrap(b)
}
func faultyIGESHA256(_ b: any IGESHA256Implementation.Type) -> any IGESHA256Implementation.Type {
    func wrap<B: IGESHA256Implementation>(_: B.Type) -> any IGESHA256Implementation.Type { FaultyIGESHA256<B>.self }
    return wrap(b)
}
func faultyIGELanes(_ b: any IGELanesImplementation.Type) -> any IGELanesImplementation.Type {
    func wrap<B: IGELanesImplementation>(_: B.Type) -> any IGELanesImplementation.Type { FaultyIGELanes<B>.self }
    return wrap(b)
}
