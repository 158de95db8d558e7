// The AES-256 encryption schedules of the multi-buffer IGE path (the AES-NI lane kernels'
// `expandKeys256`: four keys at a time in lockstep, the rest one by one) against the one-key expansion
// of the AES-NI implementation every other AES caller uses, and against FIPS-197's published last round
// key.

#if arch(x86_64)
@testable import Rampart
import RampartTestSupport
import Testing

@Suite("AES-256 key schedules, four at a time")
struct AESKeyScheduleTests {
    @Test("Four-at-a-time schedules equal one-key schedules (FIPS-197 A.3, all-zero, all-ones, random keys)",
          arguments: [1, 3, 4, 5, 8, 13])
    func fourAtATimeMatchesOneByOne(count: Int) throws {
        guard let lanes = Registries.igeLanes.runnableImplementation(named: "aes-ni-x8"),
              let aesni = Registries.aes.runnableImplementation(named: "aes-ni") else {
            print("skipped: this processor has no AES-NI (the schedules run only where it does)")
            return
        }
        var rng = SplitMix64(seed: UInt64(count) &* 0x9e37)
        var keys: [[UInt8]] = [hexBytes("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"),
                               [UInt8](repeating: 0, count: 32), [UInt8](repeating: 0xff, count: 32)]
        while keys.count < count { keys.append((0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }) }
        keys = Array(keys.prefix(count))
        // One flat buffer, so that every key's pointer stays valid during the call.
        let flat = keys.flatMap { $0 }
        var schedules = [UInt8](repeating: 0xa5, count: 256 * count)
        let rounds = flat.withUnsafeBytes { raw in
            schedules.withUnsafeMutableBytes { out in
                let pointers = (0..<count).map { UnsafeRawPointer(raw.baseAddress! + 32 * $0) }
                return pointers.withUnsafeBufferPointer { lanes.expandKeys256($0.baseAddress!, count, out.baseAddress!) }
            }
        }
        #expect(rounds == 14)
        for (i, key) in keys.enumerated() {
            // AES-NI's layout: the encryption round keys first.
            var schedule = [UInt8](repeating: 0, count: aesni.scheduleBytes)
            let r = key.withUnsafeBytes { k in schedule.withUnsafeMutableBytes { aesni.expandKey(k.baseAddress!, 32, $0.baseAddress!) } }
            #expect(r == 14)
            #expect(Array(schedules[256 * i ..< 256 * i + 240]) == Array(schedule[0..<240]), "key \(i) of \(count)")
            // The 16 bytes after each schedule are not written.
            #expect(schedules[256 * i + 240 ..< 256 * i + 256].allSatisfy { $0 == 0xa5 }, "key \(i) of \(count)")
        }
        // FIPS-197 Appendix A.3: w[56..59], the last round key of its AES-256 example key.
        #expect(Array(schedules[224..<240]) == hexBytes("fe4890d1e6188d0b046df344706c631e"))
    }
}
#endif
