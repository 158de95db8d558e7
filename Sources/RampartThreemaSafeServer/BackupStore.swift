// Where a Safe server keeps its backups: a protocol, a directory implementation (one file per
// backup, atomic replacement) and an in-memory one for tests. The directory store is the one piece
// of file I/O in this target; the HTTP logic never touches the file system directly.

#if canImport(Glibc)
import Glibc
private let sysRead = Glibc.read
private let sysWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let sysRead = Darwin.read
private let sysWrite = Darwin.write
#endif

/// A file's modification time in Unix seconds.
private func modifiedSeconds(_ st: stat) -> Double {
    #if canImport(Darwin)
    return Double(st.st_mtimespec.tv_sec) + Double(st.st_mtimespec.tv_nsec) / 1e9
    #else
    return Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9
    #endif
}

/// A Threema Safe backup ID as the server API uses it: exactly 64 lowercase hex characters (the
/// first 32 bytes of the Safe master key, Docs/Threema.md §4.2).
public struct SafeBackupID: Hashable, Sendable, CustomStringConvertible {
    /// The 64 lowercase hex characters.
    public let hex: String

    /// Nil unless `text` is exactly 64 characters of `0-9a-f`.
    public init?(_ text: some StringProtocol) {
        let u = text.utf8
        guard u.count == 64, u.allSatisfy({ isDigit($0) || ($0 >= 0x61 && $0 <= 0x66) }) else { return nil }
        hex = String(text)
    }

    /// The hex form.
    public var description: String { hex }
}

/// A stored backup with its modification time (Unix seconds).
public struct StoredBackup: Sendable, Equatable {
    /// The blob as uploaded.
    public var bytes: [UInt8]
    /// When it was last written, Unix seconds.
    public var modified: Double

    /// A backup.
    public init(bytes: [UInt8], modified: Double) {
        self.bytes = bytes
        self.modified = modified
    }
}

/// A storage failure (the server answers 500 and logs it). Messages never name the backup: a
/// backup ID is derived from the user's password and must not reach a log.
public struct SafeStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed (the call and errno's text).
    public var message: String

    /// An error with its message.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// Storage for Safe backups. Implementations must replace a backup atomically: a reader sees the
/// old bytes or the new ones, never a mix or a truncation, even across a crash.
public protocol SafeBackupStore: AnyObject {
    /// The backup's modification time, or nil when there is none.
    func modificationTime(of id: SafeBackupID) throws(SafeStoreError) -> Double?
    /// The backup's size in bytes, or nil when there is none.
    func byteCount(of id: SafeBackupID) throws(SafeStoreError) -> Int?
    /// The backup, or nil when there is none.
    func read(_ id: SafeBackupID) throws(SafeStoreError) -> StoredBackup?
    /// Creates or replaces the backup, recording `now` as its modification time.
    func write(_ id: SafeBackupID, _ bytes: [UInt8], now: Double) throws(SafeStoreError)
    /// Deletes the backup; false when there was none.
    func delete(_ id: SafeBackupID) throws(SafeStoreError) -> Bool
    /// Every backup with its modification time.
    func list() throws(SafeStoreError) -> [(id: SafeBackupID, modified: Double)]
}

/// Backups in memory (tests). `failWrites` makes every write fail, for the 500 path.
public final class InMemoryBackupStore: SafeBackupStore {
    /// Every backup held.
    public private(set) var backups: [SafeBackupID: StoredBackup] = [:]
    /// Makes every ``write(_:_:now:)`` throw.
    public var failWrites = false

    /// An empty store.
    public init() {}

    public func modificationTime(of id: SafeBackupID) throws(SafeStoreError) -> Double? { backups[id]?.modified }
    public func byteCount(of id: SafeBackupID) throws(SafeStoreError) -> Int? { backups[id]?.bytes.count }
    public func read(_ id: SafeBackupID) throws(SafeStoreError) -> StoredBackup? { backups[id] }

    public func write(_ id: SafeBackupID, _ bytes: [UInt8], now: Double) throws(SafeStoreError) {
        if failWrites { throw SafeStoreError("write failed (injected)") }
        backups[id] = StoredBackup(bytes: bytes, modified: now)
    }

    public func delete(_ id: SafeBackupID) throws(SafeStoreError) -> Bool { backups.removeValue(forKey: id) != nil }

    public func list() throws(SafeStoreError) -> [(id: SafeBackupID, modified: Double)] {
        backups.map { ($0.key, $0.value.modified) }
    }
}

/// Backups as files in one directory: the file `<id>` holds the blob, its mtime is the backup's
/// modification time.
///
/// A write goes to a temporary file `.tmp-<id>-<n>` in the same directory (mode 0600), which is
/// written in full, given the modification time, `fsync`ed and closed, then renamed over `<id>`;
/// the directory is `fsync`ed after the rename. A crash at any point leaves either the old file or
/// the new one under `<id>` (plus perhaps a stray temporary file, which ``removeStaleTemporaries(now:olderThan:)``
/// deletes); never a truncated backup. Other names in the directory are ignored.
public final class DirectoryBackupStore: SafeBackupStore {
    /// The directory holding the backup files.
    public let directory: String
    /// A file larger than this is not read (an error instead): bounds what a stray or planted file
    /// can make the server allocate. The server sets it to its maxBackupBytes.
    public var maxFileBytes = Int.max
    private var counter: UInt64 = 0
    /// Test hook: called after the temporary file is complete and before the rename. Returning
    /// false simulates a crash there: the write fails and the temporary file is left as a crash
    /// would leave it.
    var beforeRename: ((String) -> Bool)?

    /// Uses `directory`, which must exist.
    public init(directory: String) throws(SafeStoreError) {
        var st = stat()
        guard stat(directory, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
            throw SafeStoreError("\(directory) is not a directory")
        }
        self.directory = directory
    }

    private func path(_ name: String) -> String { directory + "/" + name }

    private static func errorText(_ what: String) -> SafeStoreError {
        SafeStoreError("\(what): \(String(cString: strerror(errno)))")
    }

    public func modificationTime(of id: SafeBackupID) throws(SafeStoreError) -> Double? {
        try status(of: id).map(modifiedSeconds)
    }

    public func byteCount(of id: SafeBackupID) throws(SafeStoreError) -> Int? {
        try status(of: id).map { Int($0.st_size) }
    }

    private func status(of id: SafeBackupID) throws(SafeStoreError) -> stat? {
        var st = stat()
        guard stat(path(id.hex), &st) == 0 else {
            if errno == ENOENT { return nil }
            throw Self.errorText("stat of a backup")
        }
        return st
    }

    public func read(_ id: SafeBackupID) throws(SafeStoreError) -> StoredBackup? {
        let fd = open(path(id.hex), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw Self.errorText("open of a backup")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Self.errorText("fstat of a backup") }
        let size = Int(st.st_size)
        guard size <= maxFileBytes else { throw SafeStoreError("a backup file of \(size) bytes, over the limit of \(maxFileBytes)") }
        var bytes = [UInt8](repeating: 0, count: size)
        var off = 0
        while off < size {
            let n = bytes.withUnsafeMutableBytes { sysRead(fd, $0.baseAddress! + off, size - off) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Self.errorText("read of a backup") }
            off += n
        }
        return StoredBackup(bytes: bytes, modified: modifiedSeconds(st))
    }

    public func write(_ id: SafeBackupID, _ bytes: [UInt8], now: Double) throws(SafeStoreError) {
        counter &+= 1
        let temp = ".tmp-\(id.hex)-\(getpid())-\(counter)"
        let fd = open(path(temp), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.errorText("create of a temporary file") }
        var ok = false
        defer { if !ok { unlink(path(temp)) } }
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { sysWrite(fd, $0.baseAddress! + off, bytes.count - off) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { let e = Self.errorText("write of a temporary file"); close(fd); throw e }
            off += n
        }
        let whole = now.rounded(.down)
        var times = [timespec(tv_sec: Int(whole), tv_nsec: Int((now - whole) * 1e9)),
                     timespec(tv_sec: Int(whole), tv_nsec: Int((now - whole) * 1e9))]
        guard futimens(fd, &times) == 0 else { let e = Self.errorText("futimens of a temporary file"); close(fd); throw e }
        guard fsync(fd) == 0 else { let e = Self.errorText("fsync of a temporary file"); close(fd); throw e }
        guard close(fd) == 0 else { throw Self.errorText("close of a temporary file") }
        if let hook = beforeRename, !hook(path(temp)) {
            ok = true  // a crash leaves the temporary file behind
            throw SafeStoreError("simulated crash before rename")
        }
        guard rename(path(temp), path(id.hex)) == 0 else { throw Self.errorText("rename of a temporary file") }
        ok = true
        syncDirectory()
    }

    /// fsync of the directory, so that the rename itself is durable.
    private func syncDirectory() {
        let d = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard d >= 0 else { return }
        _ = fsync(d)
        close(d)
    }

    public func delete(_ id: SafeBackupID) throws(SafeStoreError) -> Bool {
        guard unlink(path(id.hex)) == 0 else {
            if errno == ENOENT { return false }
            throw Self.errorText("unlink of a backup")
        }
        syncDirectory()
        return true
    }

    /// Names in the directory (`.` and `..` excluded).
    private func names() throws(SafeStoreError) -> [String] {
        guard let dir = opendir(directory) else { throw Self.errorText("opendir \(directory)") }
        defer { closedir(dir) }
        var result: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { result.append(name) }
        }
        return result
    }

    public func list() throws(SafeStoreError) -> [(id: SafeBackupID, modified: Double)] {
        var result: [(id: SafeBackupID, modified: Double)] = []
        for name in try names() {
            guard let id = SafeBackupID(name), let m = try modificationTime(of: id) else { continue }
            result.append((id, m))
        }
        return result
    }

    /// Deletes temporary files left by a crash mid-write: those whose writing process (the pid in
    /// the name `.tmp-<id>-<pid>-<n>`) no longer runs, and any whose mtime is more than `age`
    /// seconds before `now`. The server calls it at start and every hour; returns how many.
    public func removeStaleTemporaries(now: Double, olderThan age: Double = 3600) throws(SafeStoreError) -> Int {
        var removed = 0
        for name in try names() where name.hasPrefix(".tmp-") {
            var st = stat()
            guard stat(path(name), &st) == 0 else { continue }
            if (now - modifiedSeconds(st) > age || !Self.writerRuns(name)), unlink(path(name)) == 0 { removed += 1 }
        }
        return removed
    }

    /// Whether the process named in a temporary file's name runs (another server on the same
    /// directory may be writing it); a name without a readable pid counts as abandoned.
    static func writerRuns(_ name: String) -> Bool {
        let parts = name.split(separator: "-")
        guard parts.count == 4, let pid = Int32(parts[2]), pid > 0 else { return false }
        if pid == getpid() { return true }
        return kill(pid, 0) == 0 || errno == EPERM
    }
}
