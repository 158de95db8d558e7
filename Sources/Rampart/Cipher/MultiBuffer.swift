// Many independent messages through one kernel at once (multi-buffer): AES-IGE encryption, and the
// SHA-256 jobs of the same callers.
//
// Every IGE block depends on the one before, so one message leaves the AES units idle between
// dependent instructions (Docs/Architecture.md §6.6). With several messages in hand (a server pushing
// updates to many clients) the chains of different messages are independent: a lane kernel steps
// eight IGE chains together (sixteen with 512-bit VAES on processors with full-width 512-bit units).
// This file is the scheduler that feeds the lanes: each lane takes the next job when its job ends,
// and a lane with nothing left runs on a scratch block (stride 0) until the others finish, as Intel's
// multi-buffer job managers do. SHA-256 jobs run 32 or 16 lanes at a time
// on processors with full-width 512-bit units (Zen 5), eight at a time where the SHA extensions are
// absent, two at a time (their SHA-NI chains alternating) on other AMD processors with them, and one
// by one on Intel processors with them (see ``MultiBuffer/sha256(_:backend:laneKernel:)``).
//
// Everything the scheduler decides depends on the jobs' lengths only (public); keys, states and data
// go straight to the kernels, whose loops do not branch on them. Without the lane kernels (another
// architecture, `Backend.portable`, or missing CPU features) every job runs alone on the single-message
// path, with the same results.

internal import RampartKernelSupport

/// Runs independent AES-256-IGE jobs and SHA-256 jobs through the multi-buffer kernels.
package enum MultiBuffer {
    /// SHA-256's initial state (FIPS 180-4 §5.3.3), a..h, for jobs that start a hash.
    package static var sha256InitialState: SIMD8<UInt32> { SHA256Compressor.initialWords }

    /// Up to three runs of whole 64-byte blocks, compressed in order into one SHA-256 state.
    package struct SHA256Job {
        /// Eight words a..h: the initial value or a mid-state; the compressions land here.
        package var state: UnsafeMutablePointer<UInt32>
        /// The runs: (first byte, number of 64-byte blocks); unused runs have 0 blocks.
        package var runs: (UnsafeRawPointer, Int, UnsafeRawPointer, Int, UnsafeRawPointer, Int)

        package init(state: UnsafeMutablePointer<UInt32>, _ r0: (UnsafeRawPointer, Int),
                     _ r1: (UnsafeRawPointer, Int)? = nil, _ r2: (UnsafeRawPointer, Int)? = nil) {
            self.state = state
            let none = (r0.0, 0)
            let a = r1 ?? none, b = r2 ?? none
            runs = (r0.0, r0.1, a.0, a.1, b.0, b.1)
        }

        @inline(__always) func run(_ k: Int) -> (UnsafeRawPointer, Int) {
            switch k {
            case 0: return (runs.0, runs.1)
            case 1: return (runs.2, runs.3)
            case 2: return (runs.4, runs.5)
            default: return (runs.0, 0)
            }
        }
    }

    /// One message to encrypt with AES-256-IGE in place.
    package struct IGEJob {
        /// The 32-byte key.
        package var key: UnsafeRawPointer
        /// The 32-byte IV (c_0 then p_0), replaced by the last ciphertext and plaintext blocks.
        package var iv: UnsafeMutableRawPointer
        /// The data, encrypted in place.
        package var data: UnsafeMutableRawPointer
        /// Whole 16-byte blocks.
        package var blocks: Int

        package init(key: UnsafeRawPointer, iv: UnsafeMutableRawPointer, data: UnsafeMutableRawPointer, blocks: Int) {
            self.key = key
            self.iv = iv
            self.data = data
            self.blocks = blocks
        }
    }

    /// Compresses every job's runs into its state. Where `Kernels.sha256Lanes` selected a lane kernel,
    /// the jobs go through it, each lane taking the next job when its own ends: 32 or 16 at a time in
    /// 512-bit registers on processors with full-width 512-bit units (`avx512-x32`, or `avx512-x16`
    /// and then `sha-ni-x2` for fewer jobs: ``laneImplementation(_:jobs:)``), eight at a time without
    /// the SHA extensions, two at a time with them on other AMD processors (`sha-ni-x2`, the two SHA-NI
    /// chains alternating). Otherwise (Intel processors with the SHA extensions, where one SHA-NI chain
    /// already kept the SHA unit busy: a block cost about 103 TSC cycles alone and 125 per lane with
    /// four chains interleaved, Docs/Architecture.md §6.6) the jobs run one after the other and only
    /// save the caller its concatenations. A backend pinned to a lane kernel
    /// (`Kernels.pinned("sha256-lanes", to:)`) runs that one whatever the number of jobs.
    package static func sha256(_ jobs: UnsafeBufferPointer<SHA256Job>, backend: Backend = CPU.defaultBackend) {
        var tier = Registries.sha256Lanes.implementation(for: backend)
        if backend == .hardware { tier = laneImplementation(tier, jobs: jobs.count) }
        guard tier.lanes > 1, jobs.count > 1 else {
            for j in jobs {
                var w = SIMD8<UInt32>()
                for i in 0..<8 { w[i] = j.state[i] }
                for k in 0..<3 {
                    let (p, n) = j.run(k)
                    if n > 0 { SHA256Compressor.compress(&w, p, n, backend) }
                }
                for i in 0..<8 { j.state[i] = w[i] }
                withUnsafeMutableBytes(of: &w) { secureZero($0) }
            }
            return
        }
        let laneCount = tier.lanes, tableBytes = tier.tableBytes
        // The kernel's scratch (the vector kernels' transposed schedules, 2 to 8 KiB; none for the
        // two-lane SHA-NI kernel, so none to wipe), then an idle lane's state (32 bytes) and block (64).
        withUnsafeTemporaryAllocation(byteCount: tableBytes + 32 + 64, alignment: 64) { area in
            let table = area.baseAddress!, idleState = table + tableBytes, idle = idleState + 32
            idleState.initializeMemory(as: UInt8.self, repeating: 0, count: 96)
            withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt32>.self, capacity: laneCount) { states in
                schedule(lanes: laneCount, jobCount: jobs.count, blockBytes: 64, idle: idle,
                         run: { j, r in let (p, n) = jobs[j].run(r); return (UnsafeMutableRawPointer(mutating: p), n) }
                ) { job, data, strides, n in
                    for l in 0..<laneCount {
                        let j = job[l]
                        states[l] = j >= 0 ? jobs[j].state : idleState.assumingMemoryBound(to: UInt32.self)
                    }
                    tier.compress(UnsafePointer(states.baseAddress!), data, strides, n, table)
                }
            }
            secureZero(area)
        }
    }

    /// The lane kernel to run `jobs` jobs with when `selected` is the registry's choice: the 512-bit
    /// kernels give way to narrower ones when too many of their lanes would idle (break-even from the
    /// per-block costs of Platform/Registrations.swift: 32 lanes pay from 17 jobs, 16 lanes against
    /// two SHA-NI chains from 11).
    static func laneImplementation(_ selected: any SHA256LanesImplementation.Type,
                                   jobs: Int) -> any SHA256LanesImplementation.Type {
        let r = Registries.sha256Lanes
        if selected.name == "avx512-x32" && jobs <= 16, let x16 = r.runnableImplementation(named: "avx512-x16") {
            return laneImplementation(x16, jobs: jobs)
        }
        if selected.name == "avx512-x16" && jobs < 11, let x2 = r.runnableImplementation(named: "sha-ni-x2") {
            return x2
        }
        return selected
    }

    /// Encrypts every job in place with AES-256-IGE through the `ige-lanes` registry's implementation
    /// for `backend` (eight lanes on AES-NI, sixteen on 512-bit VAES where the 512-bit units are full
    /// width), which expands the jobs' keys itself (four at a time). With one lane (the portable code,
    /// another architecture) or one job, each job runs alone on `backend`'s IGE.
    package static func igeEncrypt(_ jobs: UnsafeBufferPointer<IGEJob>, backend: Backend = CPU.defaultBackend) {
        let tier = Registries.igeLanes.implementation(for: backend)
        guard tier.lanes > 1, jobs.count > 1 else {
            for j in jobs where j.blocks > 0 {
                let c = AES.Cipher(key256: j.key, backend: backend)
                AES.IGE.encrypt(j.data, blocks: j.blocks, using: c, iv: j.iv)
            }
            return
        }
        let lanes = tier.lanes, scratchBytes = tier.scratchBytes, sb = tier.scheduleBytes
        // Each job's schedule, `sb` bytes apiece; an idle lane's schedule (zero) and scratch block after
        // them; then the kernel's scratch (the wide kernel's interleaved schedules).
        withUnsafeTemporaryAllocation(byteCount: sb * (jobs.count + 1) + 64 + scratchBytes, alignment: 64) { area in
            let base = area.baseAddress!
            let rounds = withUnsafeTemporaryAllocation(of: UnsafeRawPointer.self, capacity: jobs.count) { keys in
                for (i, j) in jobs.enumerated() { keys[i] = j.key }
                return tier.expandKeys256(UnsafePointer(keys.baseAddress!), jobs.count, base)
            }
            let idleSchedule = base + sb * jobs.count, idle = idleSchedule + sb, scratch = idle + 64
            idleSchedule.initializeMemory(as: UInt8.self, repeating: 0, count: sb + 64)
            withUnsafeTemporaryAllocation(of: UnsafeRawPointer.self, capacity: lanes) { schedules in
                withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer.self, capacity: lanes) { ivs in
                    schedule(lanes: lanes, jobCount: jobs.count, blockBytes: 16, idle: idle,
                             run: { j, r in (jobs[j].data, r == 0 ? jobs[j].blocks : 0) }
                    ) { job, data, strides, n in
                        for l in 0..<lanes {
                            let j = job[l]
                            schedules[l] = UnsafeRawPointer(j >= 0 ? base + sb * j : idleSchedule)
                            ivs[l] = j >= 0 ? jobs[j].iv : idle + 16
                        }
                        tier.encrypt(UnsafePointer(schedules.baseAddress!), rounds, UnsafePointer(ivs.baseAddress!), data,
                                     strides, n, scratch)
                    }
                }
            }
            secureZero(area)
        }
    }

    /// The lane scheduler. `run(job, r)` gives a job's run `r` (0, 1, 2, …; 0 blocks past its
    /// last); `step(jobOfLane, data, strides, n)` runs `n` blocks on every lane (job −1: idle, on
    /// `idle` with stride 0). Each lane takes the next job as soon as its own is done; `n` is the
    /// fewest blocks left in any busy lane's current run.
    private static func schedule(lanes: Int, jobCount: Int, blockBytes: Int, idle: UnsafeMutableRawPointer,
                                 run: (Int, Int) -> (UnsafeMutableRawPointer, Int),
                                 step: (UnsafePointer<Int>, UnsafePointer<UnsafeMutableRawPointer>, UnsafePointer<Int>, Int) -> Void) {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 4 * lanes) { ints in
            withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer.self, capacity: lanes) { data in
                let job = ints.baseAddress!, runIndex = job + lanes, left = runIndex + lanes, stride = left + lanes
                var next = 0
                /// Moves lane `l` to its job's next non-empty run, or to the next job, or to idle.
                func advance(_ l: Int) {
                    if job[l] >= 0 {
                        var r = runIndex[l] + 1
                        while r < 3 {
                            let (p, n) = run(job[l], r)
                            if n > 0 { runIndex[l] = r; data[l] = p; left[l] = n; stride[l] = blockBytes; return }
                            r += 1
                        }
                    }
                    while next < jobCount {
                        let j = next
                        next += 1
                        for r in 0..<3 {
                            let (p, n) = run(j, r)
                            if n > 0 { job[l] = j; runIndex[l] = r; data[l] = p; left[l] = n; stride[l] = blockBytes; return }
                        }
                    }
                    job[l] = -1; runIndex[l] = 0; data[l] = idle; left[l] = .max; stride[l] = 0
                }
                for l in 0..<lanes { job[l] = -1; advance(l) }
                while true {
                    var n = Int.max
                    for l in 0..<lanes where job[l] >= 0 { n = min(n, left[l]) }
                    if n == .max { break }
                    step(UnsafePointer(job), UnsafePointer(data.baseAddress!), UnsafePointer(stride), n)
                    for l in 0..<lanes where job[l] >= 0 {
                        data[l] += n * blockBytes
                        left[l] -= n
                        if left[l] == 0 { advance(l) }
                    }
                }
            }
        }
    }
}
