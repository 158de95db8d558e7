// The chat hub's durable state as an append-only journal (Docs/Threema.md §9.5): registered
// identities, their logins, queued messages and their removal. The hub produces the records; the
// socket owner appends them to `--dir`/journal (write, then fdatasync) before it sends anything the
// records commit to (an `outgoing-message-ack`), and rewrites the file from a snapshot (temporary
// file, fsync, rename, directory fsync) at start and when it has grown well past the live state.
//
// File: the 24-byte header, then records `u32-le length ‖ u32-le CRC-32 ‖ kind ‖ payload`, where
// length counts kind and payload and the CRC covers them. A torn or corrupt record ends the valid
// prefix: everything from it on is ignored (a kill can only tear the last write).

import Rampart
import RampartCodecs
import RampartThreema

/// The chat hub's journal format.
public enum ChatJournal {
    /// The first bytes of a journal file.
    public static let header: [UInt8] = Array("rampart-chat-journal v1\n".utf8)

    /// Record kinds.
    enum Kind: UInt8 {
        /// `id (8) ‖ public key (32) ‖ last login (f64 bits, u64-le)`: a registration.
        case identity = 1
        /// `id (8)`: a registered identity forgotten (expired); its queue goes with it.
        case forget = 2
        /// `id (8) ‖ time (f64 bits)`: a login of a registered identity (for expiry).
        case login = 3
        /// `receiver (8) ‖ expires (f64 bits) ‖ address length (1) ‖ address ‖ envelope`.
        case enqueue = 4
        /// `receiver (8) ‖ sender (8) ‖ message ID (u64-le)`: released (acknowledged, expired, dropped).
        case remove = 5
    }

    /// The largest record accepted when reading (an envelope is at most one 8 KiB frame).
    static let maximumRecordLength = 64 * 1024

    /// One framed record.
    static func record(_ kind: Kind, _ payload: [UInt8]) -> [UInt8] {
        let body = [kind.rawValue] + payload
        var out: [UInt8] = []
        out.reserveCapacity(8 + body.count)
        appendLE(UInt32(body.count), to: &out)
        appendLE(CRC32.checksum(data: body), to: &out)
        out += body
        return out
    }

    /// The records of a journal file in order, and the length of its valid prefix (the caller
    /// truncates the file there). Nil when the header is wrong: not a journal.
    static func parse(_ file: [UInt8]) -> (records: [(Kind, ArraySlice<UInt8>)], validLength: Int)? {
        guard file.count >= header.count, file.prefix(header.count).elementsEqual(header) else {
            return file.isEmpty ? ([], 0) : nil
        }
        var records: [(Kind, ArraySlice<UInt8>)] = []
        var at = header.count
        while file.count - at >= 8 {
            let length = Int(readLE32(file, at)), crc = readLE32(file, at + 4)
            guard length >= 1, length <= maximumRecordLength, file.count - at - 8 >= length else { break }
            let body = file[(at + 8)..<(at + 8 + length)]
            guard CRC32.checksum(data: body) == crc, let kind = Kind(rawValue: body.first!) else { break }
            records.append((kind, body.dropFirst()))
            at += 8 + length
        }
        return (records, at)
    }

    static func appendLE(_ v: UInt32, to out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out += $0 }
    }

    static func appendLE(_ v: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out += $0 }
    }

    static func appendTime(_ t: Double, to out: inout [UInt8]) { appendLE(t.bitPattern, to: &out) }

    static func readLE32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }

    static func readLE64(_ b: ArraySlice<UInt8>, _ at: Int) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<8 { v |= UInt64(b[at + k]) << (8 * k) }
        return v
    }

    static func readTime(_ b: ArraySlice<UInt8>, _ at: Int) -> Double? {
        let t = Double(bitPattern: readLE64(b, at))
        return t.isFinite ? t : nil
    }
}

/// What ``ChatHub/restore(journal:now:)`` found in a journal.
public struct ChatRestoreSummary: Sendable, Equatable {
    /// Records applied.
    public var records = 0
    /// Registered identities after the replay.
    public var identities = 0
    /// Messages queued after the replay.
    public var messages = 0
    /// Messages dropped because their lifetime ended while the server was down.
    public var expired = 0
    /// Bytes at the end of the file that did not form a valid record (a torn write), ignored.
    public var ignoredTailBytes = 0
    /// The length of the file's valid prefix.
    public var validLength = 0
}
