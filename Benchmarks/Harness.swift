// Measurement harness: same process, same buffers, warm-up, interleaved samples, medians.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which clock samples are timed with: the CPU time of this thread (the default: time the thread
/// was descheduled in favour of other processes does not count, which keeps ratios stable on busy
/// shared machines) or the monotonic wall clock (`--wall`).
nonisolated(unsafe) var useWallClock = false

/// Seconds on the selected clock.
func now() -> Double {
    var ts = timespec()
    clock_gettime(useWallClock ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// A sink the optimiser cannot see through, so measured work is not removed.
nonisolated(unsafe) var sink: UInt8 = 0
@inline(never) func consume(_ p: UnsafeRawPointer) { sink &+= p.load(as: UInt8.self) }
@inline(never) func consume(_ b: UInt8) { sink &+= b }

/// One implementation of one row: a name and a closure doing one operation.
struct Contender {
    var implementation: String   // "rampart", "rampart-portable", "openssl", "libsodium"
    var op: () -> Void
    /// A self-timed operation instead of `op`: it does one operation and returns the seconds (on
    /// the selected clock, ``now()``) of the part that counts, leaving out its own preparation (e.g.
    /// a client encrypting the ping a server row measures the server on).
    var timed: (() -> Double)? = nil

    init(implementation: String, op: @escaping () -> Void) {
        self.implementation = implementation
        self.op = op
    }

    /// A self-timed contender (see ``timed``).
    static func selfTimed(_ implementation: String, _ timed: @escaping () -> Double) -> Contender {
        var c = Contender(implementation: implementation) { _ = timed() }
        c.timed = timed
        return c
    }

    /// Runs `iterations` operations and returns the seconds they count for.
    func run(_ iterations: Int) -> Double {
        if let timed {
            var total = 0.0
            for _ in 0..<iterations { total += timed() }
            return total
        }
        let t0 = now()
        for _ in 0..<iterations { op() }
        return now() - t0
    }
}

/// What a row measures.
enum Unit: String { case mbps = "MB/s", opsps = "ops/s" }

/// One benchmark row.
struct Row {
    var operation: String
    var size: Int
    var unit: Unit
    var contenders: [Contender]
    /// Optional per-implementation peak memory probe (bytes), run once after timing.
    var memoryProbe: ((String) -> Int?)? = nil
}

/// Median, min and max of one implementation's samples.
struct Stat {
    var implementation: String
    var median: Double
    var min: Double
    var max: Double
    var peakBytes: Int? = nil
}

struct Settings {
    var samples: Int
    var sampleSeconds: Double
    var slowSamples: Int
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    if s.isEmpty { return 0 }
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// Measures a row: calibrate each contender to about `sampleSeconds` per sample, warm up, then take
/// samples round-robin (the order rotates each round) so drift hits every contender alike.
func measure(_ row: Row, _ settings: Settings) -> [Stat] {
    let n = row.contenders.count
    var iterations = [Int](repeating: 1, count: n)
    var slow = false
    for (i, c) in row.contenders.enumerated() {
        // Warm-up and calibration: grow the count until a batch takes a measurable time.
        var iters = 1
        while true {
            let dt = c.run(iters)
            if dt >= settings.sampleSeconds / 4 || iters >= 1 << 30 {
                iterations[i] = max(1, Int(Double(iters) * settings.sampleSeconds / max(dt, 1e-9)))
                if dt / Double(iters) > settings.sampleSeconds { slow = true; iterations[i] = 1 }
                break
            }
            iters *= dt < settings.sampleSeconds / 100 ? 10 : 2
        }
    }
    let rounds = slow ? settings.slowSamples : settings.samples
    var samples = [[Double]](repeating: [], count: n)
    for r in 0..<rounds {
        for k in 0..<n {
            let i = (k + r) % n
            let c = row.contenders[i]
            let iters = iterations[i]
            let dt = max(c.run(iters), 1e-9)
            let perSecond = Double(iters) / dt
            samples[i].append(row.unit == .mbps ? perSecond * Double(row.size) / 1e6 : perSecond)
        }
    }
    return row.contenders.enumerated().map { i, c in
        var s = Stat(implementation: c.implementation, median: median(samples[i]),
                     min: samples[i].min() ?? 0, max: samples[i].max() ?? 0)
        s.peakBytes = row.memoryProbe?(c.implementation)
        return s
    }
}

// MARK: - Peak memory (Linux: VmHWM after resetting it through /proc/self/clear_refs)

func procStatusKiB(_ field: String) -> Int? {
    guard let f = fopen("/proc/self/status", "r") else { return nil }
    defer { fclose(f) }
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, Int32(line.count), f) != nil {
        let s = String(cString: line)
        if s.hasPrefix(field + ":") {
            let digits = s.dropFirst(field.count + 1).filter { $0.isNumber }
            return Int(digits)
        }
    }
    return nil
}

/// Runs `body` and returns how far the resident set rose above its level before the call (bytes),
/// or nil where the kernel does not let us reset the high-water mark.
func peakMemory(_ body: () -> Void) -> Int? {
    guard let f = fopen("/proc/self/clear_refs", "w") else { return nil }
    fputs("5", f)
    fclose(f)
    guard let before = procStatusKiB("VmRSS") else { return nil }
    body()
    guard let peak = procStatusKiB("VmHWM") else { return nil }
    return max(0, peak - before) * 1024
}

// MARK: - Output

func pad(_ s: String, _ w: Int, right: Bool = false) -> String {
    let n = s.count
    if n >= w { return s }
    let sp = String(repeating: " ", count: w - n)
    return right ? sp + s : s + sp
}

func fmt(_ x: Double, _ digits: Int = 1) -> String {
    var m = 1.0
    for _ in 0..<digits { m *= 10 }
    let r = (x * m).rounded() / m
    var s = String(r)
    if let dot = s.firstIndex(of: ".") {
        let frac = s[s.index(after: dot)...].count
        if frac < digits { s += String(repeating: "0", count: digits - frac) }
    } else if digits > 0 { s += "." + String(repeating: "0", count: digits) }
    return s
}

func cell(_ s: Stat?, _ unit: Unit) -> String {
    guard let s else { return "absent" }
    switch unit {
    case .mbps: return fmt(s.median) + " MB/s"
    case .opsps:
        let ms = 1000 / max(s.median, 1e-12)
        var t = fmt(s.median, 2) + "/s (" + (ms >= 1 ? fmt(ms, 1) + " ms)" : fmt(ms * 1000, 1) + " µs)")
        if let p = s.peakBytes { t += " " + fmt(Double(p) / 1048576, 1) + " MiB" }
        return t
    }
}

func jsonString(_ s: String) -> String {
    var out = "\""
    for ch in s.unicodeScalars {
        switch ch {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        default:
            if ch.value < 0x20 { out += "\\u00" + (ch.value < 16 ? "0" : "") + String(ch.value, radix: 16) } else { out.unicodeScalars.append(ch) }
        }
    }
    return out + "\""
}

func isoDate() -> String {
    var t = time(nil)
    var tmv = tm()
    gmtime_r(&t, &tmv)
    var buf = [CChar](repeating: 0, count: 64)
    let n = strftime(&buf, buf.count, "%Y-%m-%dT%H:%M:%SZ", &tmv)
    return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
