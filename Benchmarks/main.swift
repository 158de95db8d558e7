// rampart-bench: Rampart against OpenSSL and libsodium, same process, same buffers.
//
//   swift run -c release rampart-bench [--filter S[,S…]]… [--quick] [--json FILE] [--wall]

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartReference

let usage = """
usage: rampart-bench [--filter S[,S...]]... [--quick] [--json FILE] [--wall]
  Measures Rampart against OpenSSL and libsodium (when installed) in one process and prints a table.
  --filter S   only rows whose operation name contains S; several substrings separated by
               commas or repeated --filter options select the rows matching any of them
  --quick      fewer, shorter samples (a smoke run)
  --json FILE  also write the results as JSON to FILE
  --wall       time with the wall clock instead of this thread's CPU time
"""

func fail(_ message: String) -> Never {
    var m = "rampart-bench: \(message)\n"
    m.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}

var filters: [String] = []
var quick = false
var jsonPath: String? = nil
var args = Array(CommandLine.arguments.dropFirst())
while !args.isEmpty {
    let a = args.removeFirst()
    switch a {
    case "--help", "-h": print(usage); exit(0)
    case "--quick": quick = true
    case "--wall": useWallClock = true
    case "--filter":
        guard !args.isEmpty else { fail("--filter needs a value") }
        let parts = args.removeFirst().split(separator: ",").map(String.init).filter { !$0.isEmpty }
        guard !parts.isEmpty else { fail("--filter needs a non-empty value") }
        filters += parts
    case "--json":
        guard !args.isEmpty else { fail("--json needs a file name") }
        jsonPath = args.removeFirst()
    default: fail("unknown argument \(a) (see --help)")
    }
}

let settings = quick ? Settings(samples: 3, sampleSeconds: 0.01, slowSamples: 1)
                     : Settings(samples: 9, sampleSeconds: 0.08, slowSamples: 5)

print("Rampart benchmark \(isoDate()) (\(useWallClock ? "wall clock" : "thread CPU time"))")
print("CPU: \(CPU.modelName) [\(CPU.detected)]\(CPU.forcePortable ? " (RAMPART_FORCE_PORTABLE=1)" : "")")
print("kernels: \(Kernels.summary)")
let failedSelfTests = Kernels.all.flatMap { k in k.failedSelfTests.map { "\(k.primitive):\($0)" } }
print("self-tests: \(Kernels.selfTestNanoseconds / 1000) µs" + (failedSelfTests.isEmpty ? ", all passed"
      : "; FAILED (never run): \(failedSelfTests.joined(separator: ", "))"))
print(Reference.summary)
print("")

/// The row groups with the operation names each one produces: a group's setup (buffers, keys,
/// primes, handshakes) runs only when `--filter` can select one of its rows.
let groups: [(operations: [String], build: () -> [Row])] = [
    (["sha1", "sha256", "sha512"], shaRows),
    (["blake2b-512"], blake2bRows),
    (["hmac-sha256"], hmacRows),
    (["pbkdf2-sha256-100000"], pbkdf2Rows),
    (["scrypt-n65536-r8-p1"], scryptRows),
    (["aes256-ige-encrypt", "aes256-ige-decrypt", "aes256-cbc-encrypt", "aes256-cbc-decrypt", "aes256-ctr",
      "aes256-gcm-seal", "aes256-gcm-open"], aesRows),
    (["xsalsa20", "poly1305", "secretbox-seal", "secretbox-open"], salsaRows),
    (["chacha20-poly1305-seal", "chacha20-poly1305-open"], chachaPolyRows),
    (["argon2id-m65536-t3-p1"], argon2Rows),
    (["x25519"], x25519Rows),
    (["x25519-batch"], x25519BatchRows),
    (["box-beforenm", "box-seal"], boxRows),
    (["modexp-2048-", "safe-prime-check-2048", "rsa2048-public", "rsa2048-private", "pq-factorize"], bigIntRows),
    (["mtproto-encrypt-v2", "mtproto-decrypt-v2"], mtprotoEnvelopeRows),
    (["mtproto-encrypt-batch-v2"], mtprotoBatchRows),
    (["aes256-ige-lanes"], multiBufferRows),
    (["mtproto-handshake"], mtprotoHandshakeRows),
    (["mtproto-server-pings"], mtprotoServerPingRows),
    (["random-bytes"], randomRows),
    (["secret-chat-encrypt", "secret-chat-decrypt"], secretChatMessageRows),
    (["secret-chat-dh"], secretChatDHRows),
    (["secret-chat-rekey"], secretChatRekeyRows),
    (["snapshot-secret-chat-seal", "snapshot-secret-chat-restore"], snapshotRows),
    (["snapshot-mtproto-connection-seal", "snapshot-mtproto-connection-restore"], connectionSnapshotRows),
    (["threema-message-seal", "threema-message-open", "threema-group-seal-100", "threema-blob-encrypt",
      "threema-safe-derive", "threema-id-backup-decode"], threemaRows),
    (["threema-ibex-encapsulate"], ibexRows),
    (["threema-csp-frame", "threema-csp-handshake"], threemaCSPRows),
    (["threema-call-frame-seal", "threema-call-frame-open"], threemaCallRows),
]

/// Whether `--filter` selects an operation (everything without a filter).
@MainActor func selected(_ operation: String) -> Bool { filters.isEmpty || filters.contains { operation.contains($0) } }

var rows: [Row] = []
for group in groups {
    // A filter may name a whole family ("aes256-gcm") or a part of a name ("2048"): a group is built when
    // any of its operation names, or a filter as a prefix of one, could match.
    guard filters.isEmpty || group.operations.contains(where: { op in
        filters.contains { op.contains($0) || $0.hasPrefix(op) }
    }) else { continue }
    let built = group.build()
    for row in built where !group.operations.contains(where: { row.operation.hasPrefix($0) }) {
        fail("benchmark row \(row.operation) is not listed in its group's operation names (Benchmarks/main.swift)")
    }
    rows += built.filter { selected($0.operation) }
}
if rows.isEmpty { fail("no row matches --filter \(filters.joined(separator: ","))") }

var results: [(Row, [Stat])] = []
for row in rows {
    let stats = measure(row, settings)
    let line = stats.map { "\($0.implementation) \(fmt($0.median, row.unit == .mbps ? 1 : 2)) \(row.unit.rawValue)" }.joined(separator: ", ")
    print("  \(row.operation) \(row.size): \(line)")
    fflush(nil)
    results.append((row, stats))
}

// The table.
let header = ["operation", "size", "Rampart", "portable", "OpenSSL", "libsodium", "vs best ref", "other"]
let standardImplementations: Set<String> = ["rampart", "rampart-portable", "openssl", "libsodium"]
var table: [[String]] = [header]
for (row, stats) in results {
    func s(_ name: String) -> Stat? { stats.first { $0.implementation == name } }
    let refs = [s("openssl"), s("libsodium")].compactMap { $0 }
    let ratio: String
    if let r = s("rampart"), let best = refs.map(\.median).max(), best > 0 {
        ratio = fmt(r.median / best, 2) + "x"
    } else { ratio = "-" }
    let sizeText = row.unit == .mbps ? String(row.size) : "-"
    table.append([row.operation, sizeText, cell(s("rampart"), row.unit), cell(s("rampart-portable"), row.unit),
                  cell(s("openssl"), row.unit), cell(s("libsodium"), row.unit), ratio,
                  // Extra references a row may carry (e.g. openssl-cbc-encrypt in the IGE rows), with Rampart's ratio.
                  stats.filter { !standardImplementations.contains($0.implementation) }.map { o in
                      o.implementation + " " + cell(o, row.unit) + (s("rampart").map { o.median > 0 ? " (" + fmt($0.median / o.median, 2) + "x)" : "" } ?? "")
                  }.joined(separator: ", ")])
}
let widths = (0..<header.count).map { c in table.map { $0[c].count }.max() ?? 0 }
print("")
for (i, r) in table.enumerated() {
    print(r.enumerated().map { c, t in pad(t, widths[c], right: c > 0) }.joined(separator: "  "))
    if i == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
}
print("")
print("MB/s = 10^6 bytes per second; per-call rows show calls/s, (ms per call) and peak memory; ratio > 1 means Rampart is faster than the best reference.")

if let path = jsonPath {
    var j = "{\n  \"date\": \(jsonString(isoDate())),\n"
    j += "  \"machine\": {\"cpu\": \(jsonString(CPU.modelName)), \"features\": [\(CPU.detected.names.map(jsonString).joined(separator: ", "))]},\n"
    j += "  \"results\": [\n"
    var items: [String] = []
    for (row, stats) in results {
        for s in stats {
            var item = "    {\"operation\": \(jsonString(row.operation)), \"size\": \(row.size), \"implementation\": \(jsonString(s.implementation)), "
            item += "\"unit\": \(jsonString(row.unit.rawValue)), \"median\": \(s.median), \"min\": \(s.min), \"max\": \(s.max)"
            if let p = s.peakBytes { item += ", \"peakMemoryBytes\": \(p)" }
            items.append(item + "}")
        }
    }
    j += items.joined(separator: ",\n") + "\n  ]\n}\n"
    guard let f = fopen(path, "w") else { fail("cannot write \(path)") }
    fputs(j, f)
    fclose(f)
    print("wrote \(path)")
}
