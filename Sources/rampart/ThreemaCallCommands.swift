// `rampart threema call-id` and `rampart threema call frame-seal|frame-open` (a contract: keep the
// names and flags). Docs/Threema.md §10.
//
//   rampart threema call-id --creator ID --group-id HEX (--gck HEX | --gck-file F) --sfu-url URL
//                           [--protocol-version N]                                    -> call ID hex
//   rampart threema call frame-seal --codec opus|vp8 (--gck HEX | --gck-file F) (--pcmk HEX | --pcmk-file F)
//                                   [--epoch N] [--ratchet N] --mfsn N [--in F]     -> wire frame
//   rampart threema call frame-open --codec opus|vp8 (--gck HEX | --gck-file F) (--pcmk HEX | --pcmk-file F)
//                                   [--epoch N] [--ratchet N] [--in F]              -> frame
//
// Frames are raw bytes on stdin (or --in) and stdout. Exit status: 0 success, 1 a frame that does not
// open (nothing on stdout), 2 bad usage.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Rampart
import RampartThreema

let threemaCallIDUsage = """
usage: rampart threema call-id --creator ID --group-id HEX (--gck HEX | --gck-file F) --sfu-url URL
                               [--protocol-version N]
  Prints the group call ID (64 hex digits): BLAKE2b-256 (salt "i", personal "3ma-call") of the creator's
  Threema ID, the 8-byte group ID, the protocol version as one byte (default 1), the 32-byte group call
  key (GCK) and the UTF-8 SFU base URL. A key file holds 32 raw bytes or 64 hex digits.
"""

let threemaCallUsage = """
usage: rampart threema call frame-seal --codec opus|vp8 (--gck HEX | --gck-file F) (--pcmk HEX | --pcmk-file F)
                                       [--epoch N] [--ratchet N] --mfsn N [--in F]
       rampart threema call frame-open --codec opus|vp8 (--gck HEX | --gck-file F) (--pcmk HEX | --pcmk-file F)
                                       [--epoch N] [--ratchet N] [--in F]
  Group-call media frames (AES-256-GCM under PCMFK): header ‖ ciphertext ‖ tag ‖ footer (epoch, ratchet
  counter, u32-LE MFSN). --pcmk is the participant's media key at ratchet counter 0 of --epoch (default 0);
  frame-seal turns it --ratchet times (default 0) and seals the frame on standard input (or --in) with
  the given MFSN. frame-open expects the frame's epoch to be --epoch and turns the key to the frame's
  counter (at least --ratchet); it exits 1 with nothing on stdout when the frame does not open. VP8 frames
  keep 10 (key frame: bit 0 of the first byte clear) or 3 bytes in the clear; Opus none. Empty frames
  pass through. A key file holds 32 raw bytes or 64 hex digits. Standard input (or --in) holds at
  most 65536 bytes, the protocol's largest wire frame; more is bad usage (exit 2).
"""

/// A 32-byte key from `--NAME HEX` or `--NAME-file F` (32 raw bytes, or 64 hex digits and white space).
func callKey(_ o: Options, _ name: String, _ command: String) -> SymmetricKey {
    let hexValue = o.values[name], path = o.values[name + "-file"]
    var raw: [UInt8]
    switch (hexValue, path) {
    case (.some, .some): usageError("\(command): give --\(name) or --\(name)-file, not both")
    case (.none, .none): usageError("\(command): missing --\(name) or --\(name)-file")
    case (.some, .none): raw = hex32(o, name, command)
    case (.none, .some(let p)):
        raw = readFile(p, limit: 4096, command)
        if raw.count != 32 {
            let text = String(decoding: raw.filter { ![0x20, 0x09, 0x0a, 0x0d].contains($0) }, as: UTF8.self)
            raw.secureWipe()
            guard let decoded = try? Hex.decode(text), decoded.count == 32 else {
                usageError("\(command): \(p) must hold 32 raw bytes or 64 hex digits")
            }
            raw = decoded
        }
    }
    defer { raw.secureWipe() }
    return SymmetricKey(data: raw)
}

func threemaCallIDCommand(_ args: [String]) {
    let cmd = "threema call-id"
    if args.isEmpty { usageText(threemaCallIDUsage, help: false) }
    let o = Options(args, allowed: ["creator", "group-id", "protocol-version", "gck", "gck-file", "sfu-url"], positional: 0...0,
                    command: cmd)
    if o.help { usageText(threemaCallIDUsage, help: true) }
    guard let creator = threemaID(o, "creator", cmd) else { usageError("\(cmd): missing --creator") }
    guard let group = o.hex("group-id", cmd), group.count == 8 else { usageError("\(cmd): --group-id must be 8 bytes (16 hex digits)") }
    let version = o.int("protocol-version", cmd) ?? Int(GroupCall.protocolVersion)
    guard version <= 255 else { usageError("\(cmd): --protocol-version must be 0...255") }
    let url = o.require("sfu-url", cmd)
    let start = GroupCall.Start(protocolVersion: UInt32(version), gck: callKey(o, "gck", cmd), sfuBaseURL: url)
    do { print(Hex.encode(try start.callID(creator: creator, groupID: group))) } catch {
        usageError("\(cmd): \(error)")
    }
}

func threemaCallCommand(_ args: [String]) {
    let cmd = "threema call"
    if args.isEmpty { usageText(threemaCallUsage, help: false) }
    let o = Options(args, allowed: ["codec", "gck", "gck-file", "pcmk", "pcmk-file", "epoch", "ratchet", "mfsn", "in"],
                    positional: 1...1, command: cmd)
    if o.help { usageText(threemaCallUsage, help: true) }
    guard ["frame-seal", "frame-open"].contains(o.positional[0]) else { usageError("\(cmd): expected frame-seal or frame-open") }
    let sub = o.positional[0]
    guard let codec = GroupCall.MediaCodec(rawValue: o.require("codec", cmd)) else { usageError("\(cmd): --codec is opus or vp8") }
    let epoch = o.int("epoch", cmd) ?? 0, ratchet = o.int("ratchet", cmd) ?? 0
    guard epoch <= 255, ratchet <= 255 else { usageError("\(cmd): --epoch and --ratchet are 0...255") }
    let keys: GroupCall.Keys
    let mediaKey: GroupCall.MediaKey
    do {
        keys = try GroupCall.Keys(gck: callKey(o, "gck", cmd))
        mediaKey = try GroupCall.MediaKey(epoch: UInt8(epoch), ratchetCounter: 0, pcmk: callKey(o, "pcmk", cmd)).ratcheted(to: UInt8(ratchet))
    } catch { usageError("\(cmd): \(error)") }
    var input: [UInt8]
    if let path = o.values["in"] {
        input = readFile(path, limit: GroupCall.MediaFrame.maximumWireByteCount, cmd)
    } else {
        input = readAllStdin(limit: GroupCall.MediaFrame.maximumWireByteCount, cmd)
    }
    defer { input.secureWipe() }
    if sub == "frame-seal" {
        guard let m = o.values["mfsn"] else { usageError("\(cmd) frame-seal: missing --mfsn") }
        guard let mfsn = UInt32(m) else { usageError("\(cmd) frame-seal: --mfsn is 0...4294967295") }
        do {
            var enc = try GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mediaKey, firstMFSN: mfsn)
            writeStdout(try enc.seal(input, codec: codec))
        } catch { usageError("\(cmd) frame-seal: \(error)") }
    } else {
        guard o.values["mfsn"] == nil else { usageError("\(cmd) frame-open: the MFSN comes from the frame; no --mfsn") }
        do {
            var dec = try GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: mediaKey)
            var frame = try dec.open(input, codec: codec)
            writeStdout(frame)
            frame.secureWipe()
        } catch { checkFailure("\(cmd) frame-open: \(error)") }
    }
}
