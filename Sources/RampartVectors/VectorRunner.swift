// Loading and running reference-vector files: shared by `rampart vectors` and the test targets.

import Foundation
@_spi(Testing) import Rampart

/// The outcome of one vector case (run through every backend that applies).
public struct VectorResult: Sendable, CustomStringConvertible {
    /// Family name, e.g. `sha256` or `pbkdf2-hmac-sha1`.
    public var family: String
    /// File and case identifier.
    public var id: String
    /// Whether every backend produced the expected result.
    public var passed: Bool
    /// What went wrong, when it did.
    public var detail: String

    public init(family: String, id: String, passed: Bool, detail: String = "") {
        self.family = family
        self.id = id
        self.passed = passed
        self.detail = detail
    }

    public var description: String { "\(passed ? "PASS" : "FAIL") \(family) \(id)\(detail.isEmpty ? "" : ": " + detail)" }
}

/// Options for running vectors.
public struct VectorOptions: Sendable {
    /// Run cases marked heavy (large iteration counts, the N = 2^20 scrypt case). Use release builds.
    public var includeHeavy: Bool
    public init(includeHeavy: Bool = true) { self.includeHeavy = includeHeavy }
}

/// Errors of the vector loader.
public enum VectorFileError: Error, CustomStringConvertible {
    case unreadable(String)
    case unknownFormat(String)
    case malformed(String, String)

    public var description: String {
        switch self {
        case .unreadable(let p): return "cannot read \(p)"
        case .unknownFormat(let p): return "unknown vector file format: \(p)"
        case .malformed(let p, let why): return "malformed vector file \(p): \(why)"
        }
    }
}

/// Locates vector files and dispatches each to the runner for its format.
public enum VectorRunner {
    /// The project's own vector folder under `root`.
    public static func projectVectorsDirectory(root: String) -> String { root + "/Vectors" }

    /// Every vector file the runner knows: all `*.json` in `Vectors/`, then the files in its subfolders
    /// that are read by kind or by name (among them the published collections of `Vectors/collected/`).
    /// The list is the same in every checkout; a listed file that is missing fails when it is run.
    public static func knownFiles(root: String) -> [String] {
        let own = projectVectorsDirectory(root: root)
        var files: [String] = []
        if let names = try? FileManager.default.contentsOfDirectory(atPath: own) {
            files += names.filter { $0.hasSuffix(".json") }.sorted().map { own + "/" + $0 }
        }
        for rel in subfolderFiles where !files.contains(own + "/" + rel) {
            files.append(own + "/" + rel)
        }
        return files
    }

    /// Files in subfolders of `Vectors/` that `knownFiles` lists, relative to `Vectors/`.
    public static var subfolderFiles: [String] { ["mtproto/message.json", "threema/published.json"] + namedFiles }

    /// Files in a published format (not the project's `kind` files), relative to `Vectors/`: each is
    /// recognised by name and has a runner of its own.
    public static var namedFiles: [String] { namedRunners.map(\.0) }

    /// A runner for a file in a published format: file name, parsed JSON (or the raw bytes of a text file), options.
    typealias FileRunner = (String, Any, VectorOptions) throws -> [VectorResult]

    static var namedRunners: [(String, FileRunner)] { [
        ("collected/rfc_standard_vectors.json", CollectedVectors.rfcStandard),
        ("collected/wycheproof/hmac_sha256_test.json", CollectedVectors.wycheproofHMAC),
        ("collected/wycheproof/pbkdf2_hmacsha1_test.json", CollectedVectors.wycheproofPBKDF2),
        ("collected/wycheproof/pbkdf2_hmacsha256_test.json", CollectedVectors.wycheproofPBKDF2),
        ("collected/blake2/blake2b-kat.txt", CollectedVectors.blake2bKATText),
        ("collected/blake2/blake2b-kat-subset.json", CollectedVectors.blake2bKATSubset),
        ("collected/blake2/blake2b-emilbayes-salt-personal.json", CollectedVectors.blake2bSaltPersonal),
        ("collected/blake2/pycryptodome-blake2b-tv1.txt", CollectedVectors.blake2bChains),
        ("collected/blake2/pycryptodome-blake2b-tv2.txt", CollectedVectors.blake2bChains),
        ("collected/nacl_classic.json", CollectedVectors.naclClassic),
        ("collected/wycheproof/x25519_test.json", CollectedVectors.wycheproofX25519),
        ("collected/wycheproof/chacha20_poly1305_test.json", ChaChaArgon2Vectors.wycheproofCollected),
        // The handshake replay and the sample's two IGE steps.
        ("mtproto/handshake_sample.json", { name, json, options in
            try MTProtoVectors.handshakeSample(name, json, options) + CollectedVectors.mtprotoHandshakeAES(name, json, options)
        }),
    ] + CollectedVectors.aesRunners }

    /// The runner for a file in a published format: `path` ends with the file's name relative to
    /// `Vectors/` (or, for a file of `Vectors/collected/`, relative to that folder).
    static func namedRunner(for path: String) -> (run: FileRunner, isJSON: Bool)? {
        for (rel, runner) in namedRunners {
            let key = rel.hasPrefix("collected/") ? String(rel.dropFirst("collected/".count)) : rel
            if path.hasSuffix("/" + key) || path == key { return (runner, rel.hasSuffix(".json")) }
        }
        return nil
    }

    /// Runs one file. Our own files carry a `"kind"` field; files in a published format are recognised
    /// by name.
    public static func run(file path: String, options: VectorOptions = VectorOptions()) throws -> [VectorResult] {
        guard let data = FileManager.default.contents(atPath: path) else { throw VectorFileError.unreadable(path) }
        let name = (path as NSString).lastPathComponent
        if let (runner, isJSON) = namedRunner(for: path) {
            let json: Any = isJSON ? try JSONSerialization.jsonObject(with: data) : data
            return try runner(name, json, options)
        }
        guard let json = try? JSONSerialization.jsonObject(with: data),
              let obj = json as? [String: Any], let kind = obj["kind"] as? String,
              let cases = obj["cases"] as? [[String: Any]]
        else { throw VectorFileError.unknownFormat(path) }
        guard let runner = kindRunners[kind] else { throw VectorFileError.unknownFormat(path + " (kind \(kind))") }
        var out: [VectorResult] = []
        for (i, c) in cases.enumerated() {
            if (c["heavy"] as? Bool ?? false) && !options.includeHeavy { continue }
            let id = "\(name)#\(c["id"] as? String ?? String(i))"
            do {
                out.append(try runner(id, c))
            } catch {
                out.append(VectorResult(family: kind, id: id, passed: false, detail: "\(error)"))
            }
        }
        return out
    }

    /// Runners for the `"kind"` values of the project's own files.
    static var kindRunners: [String: (String, [String: Any]) throws -> VectorResult] { [
        "hash": OwnVectors.hash,
        "hmac": OwnVectors.hmac,
        "pbkdf2": OwnVectors.pbkdf2,
        "hkdf": OwnVectors.hkdf,
        "blake2b": OwnVectors.blake2bCase,
        "scrypt": OwnVectors.scryptCase,
        "stream": OwnVectors.streamCase,
        "hsalsa20": OwnVectors.hsalsa20Case,
        "poly1305": OwnVectors.poly1305Case,
        "secretbox": OwnVectors.secretboxCase,
        "modexp": BigIntVectors.modexp,
        "primality": BigIntVectors.primality,
        "pq": BigIntVectors.pq,
        "aes": OwnVectors.aesCase,
        "x25519": OwnVectors.x25519Case,
        "box": OwnVectors.boxCase,
        "mtproto-message": MTProtoVectors.messageCase,
        "threema": ThreemaVectors.threemaCase,
        "chacha20": ChaChaArgon2Vectors.chacha20Case,
        "chacha20poly1305": ChaChaArgon2Vectors.aeadCase,
        "argon2id": ChaChaArgon2Vectors.argon2idCase,
    ] }
}

// MARK: - Field helpers

func field<T>(_ c: [String: Any], _ k: String, _ id: String) throws -> T {
    guard let v = c[k] as? T else { throw VectorFileError.malformed(id, "missing or mistyped field \(k)") }
    return v
}

func hexField(_ c: [String: Any], _ k: String, _ id: String) throws -> [UInt8] {
    let s: String = try field(c, k, id)
    do { return try Hex.decode(s) } catch { throw VectorFileError.malformed(id, "bad hex in \(k)") }
}

func intField(_ c: [String: Any], _ k: String, _ id: String) throws -> Int {
    if let i = c[k] as? Int { return i }
    if let n = c[k] as? NSNumber { return n.intValue }
    throw VectorFileError.malformed(id, "missing integer field \(k)")
}

/// Both backends, the hardware one first (it is the default path).
let allBackends: [Backend] = [.hardware, .portable]

/// What went wrong computing on `backend`, or nil when the output is `expected`.
private func failure(on b: Backend, expected: [UInt8], _ compute: (Backend) throws -> [UInt8]) -> String? {
    do {
        let got = try compute(b)
        return got == expected ? nil : "\(b): got \(Hex.encode(got)) want \(Hex.encode(expected))"
    } catch {
        return "\(b): threw \(error)"
    }
}

/// Checks `compute(backend)` against `expected` on every backend, the backends on their own threads: for
/// long single chains (RFC 7748's million iterations), which otherwise run one after the other on one core.
func checkConcurrently(_ family: String, _ id: String, expected: [UInt8],
                       _ compute: @Sendable (Backend) throws -> [UInt8]) -> VectorResult {
    let outcomes = ConcurrentResults<String>(count: allBackends.count)  // "" for a pass
    DispatchQueue.concurrentPerform(iterations: allBackends.count) { i in
        outcomes[i] = failure(on: allBackends[i], expected: expected, compute) ?? ""
    }
    let failures = zip(allBackends, outcomes.values).map { b, o in o ?? "\(b): not run" }.filter { !$0.isEmpty }
    return VectorResult(family: family, id: id, passed: failures.isEmpty, detail: failures.joined(separator: "; "))
}

/// One slot per index, written by `DispatchQueue.concurrentPerform` workers (each index by one worker only)
/// and read after it returns.
public final class ConcurrentResults<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [T?]
    public init(count: Int) { slots = Array(repeating: nil, count: count) }
    public subscript(i: Int) -> T? {
        get { lock.lock(); defer { lock.unlock() }; return slots[i] }
        set { lock.lock(); slots[i] = newValue; lock.unlock() }
    }
    /// Every slot, in index order (nil where nothing was stored).
    public var values: [T?] { lock.lock(); defer { lock.unlock() }; return slots }
}

/// Checks `compute(backend)` against `expected` on every backend.
func check(_ family: String, _ id: String, expected: [UInt8], _ compute: (Backend) throws -> [UInt8]) -> VectorResult {
    let failures = allBackends.compactMap { failure(on: $0, expected: expected, compute) }
    return VectorResult(family: family, id: id, passed: failures.isEmpty, detail: failures.joined(separator: "; "))
}
