// arm64 feature detection, decoded from recorded values on any machine: Linux's hardware capability
// words (getauxval(AT_HWCAP), bit positions of arch/arm64/include/uapi/asm/hwcap.h) and Apple's
// hw.optional.arm.FEAT_* sysctl values.

@_spi(Testing) @testable import Rampart
import Testing

@Suite("arm64 feature detection")
struct ARM64FeatureTests {
    /// `Features:` lines of /proc/cpuinfo, encoded with hwcap.h's bit positions (fp 0, asimd 1,
    /// evtstrm 2, aes 3, pmull 4, sha1 5, sha2 6, crc32 7, atomics 8, fphp 9, asimdhp 10, cpuid 11,
    /// asimdrdm 12, jscvt 13, fcma 14, lrcpc 15, dcpop 16, sha3 17, sm3 18, sm4 19, asimddp 20,
    /// sha512 21, sve 22, ssbs 28).
    @Test(arguments: [
        // Raspberry Pi 4 (Cortex-A72 without the cryptography extensions): fp asimd evtstrm crc32 cpuid.
        (UInt64(0x887), [String]()),
        // Cortex-A53 with them: fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid.
        (UInt64(0x8FF), ["arm-aes", "arm-pmull", "arm-sha1", "arm-sha2"]),
        // Neoverse N1 (AWS Graviton2): ... asimdrdm lrcpc dcpop asimddp ssbs, no sha512.
        (UInt64(0x1011_9FFF), ["arm-aes", "arm-pmull", "arm-sha1", "arm-sha2"]),
        // Neoverse V1 (AWS Graviton3): every bit up to sve, sha3 and sha512 among them.
        (UInt64(0x7F_FFFF), ["arm-aes", "arm-pmull", "arm-sha1", "arm-sha2", "arm-sha512"]),
        // PMULL without AES cannot occur, but the bits are read independently.
        (UInt64(1 << 4 | 1 << 21), ["arm-pmull", "arm-sha512"]),
    ])
    func linuxHWCAP(_ hwcap: UInt64, _ expected: [String]) {
        let f = CPUFeatures(linuxHWCAP: hwcap, hwcap2: 0)
        #expect(f.names == expected)
        // AT_HWCAP2 carries none of these features.
        #expect(CPUFeatures(linuxHWCAP: 0, hwcap2: ~0).names == [])
    }

    @Test func appleSysctl() {
        // Apple M1 and later (macOS 12+): every FEAT_ name answers 1.
        let m1: [String: Bool] = ["hw.optional.arm.FEAT_AES": true, "hw.optional.arm.FEAT_PMULL": true,
                                  "hw.optional.arm.FEAT_SHA1": true, "hw.optional.arm.FEAT_SHA256": true,
                                  "hw.optional.arm.FEAT_SHA512": true]
        #expect(CPUFeatures(appleSysctl: { m1[$0] }).names == ["arm-aes", "arm-pmull", "arm-sha1", "arm-sha2", "arm-sha512"])
        // A processor answering 0 for SHA-512 (A11-class cores).
        var a11 = m1
        a11["hw.optional.arm.FEAT_SHA512"] = false
        #expect(CPUFeatures(appleSysctl: { a11[$0] }).names == ["arm-aes", "arm-pmull", "arm-sha1", "arm-sha2"])
        // An OS that knows none of the names (before macOS 12 / iOS 15): the four every Apple arm64
        // processor has, and no SHA-512.
        #expect(CPUFeatures(appleSysctl: { _ in nil }).names == ["arm-aes", "arm-pmull", "arm-sha1", "arm-sha2"])
        // A name answering 0 is believed.
        #expect(CPUFeatures(appleSysctl: { $0.hasSuffix("FEAT_AES") ? false : nil }).armAES == false)
    }

    #if os(Linux)
    @Test func getauxvalIsReachable() {
        // Any Linux kernel fills AT_HWCAP (on x86_64 with CPUID's feature word): the call links and runs.
        #expect(linuxAuxiliaryValue(linuxAT_HWCAP) != 0)
    }
    #endif

    @Test func kernelFeaturesCarryTheARMBits() {
        var f = CPUFeatures()
        f.armAES = true
        f.armSHA512 = true
        #expect(f.names == ["arm-aes", "arm-sha512"])
        #expect(f.removing(["arm-sha512"]).names == ["arm-aes"])
        let k = CPU.kernelFeatures(of: f)
        #expect(k.contains(.armAES) && k.contains(.armSHA512) && !k.contains(.armPMULL) && !k.contains(.armSHA2))
    }
}
