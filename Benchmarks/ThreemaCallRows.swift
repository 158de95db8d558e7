// Threema group-call media frames: RampartThreema's MediaFrameEncryptor/MediaFrameDecryptor against
// the same frame composition built from OpenSSL's EVP AES-256-GCM calls (header copy, footer, nonce
// u32-LE MFSN ‖ 0^8, AAD footer ‖ header, seal or open with the tag), for a 160-byte Opus frame and
// a 1200-byte VP8 delta frame (3 clear bytes). Both sides reuse an expanded key (an EVP context /
// an AES.Cipher inside the encryptor) and write into a preallocated output buffer.
//
// Opening checks the MFSN against a replay window, so Rampart cannot open one frame twice: both
// sides cycle over the same ring of 64 frames with consecutive MFSNs, and Rampart starts from a
// fresh copy of its decryptor at the start of each cycle (its cost is in the Rampart figure).
// OpenSSL's side does no replay or epoch check. Each contender's mutable state lives in a small
// class with exclusivity checks off (the harness is single-threaded), the same for every contender. The open rows also show `rampart-gcm-only`:
// Rampart's AES.GCM.open on the same prepared inputs, without the frame layer.

import Rampart
import RampartReference
import RampartThreema

func threemaCallRows() -> [Row] {
    var rows: [Row] = []
    let gck = SymmetricKey(data: Array(UnsafeRawBufferPointer(buffer(32))))
    let keys = try! GroupCall.Keys(gck: gck)
    let mediaKey = try! GroupCall.MediaKey(epoch: 2, ratchetCounter: 3, pcmk: SymmetricKey(data: Array(UnsafeRawBufferPointer(buffer(32 + 7)).suffix(32))))
    let pcmfk = mediaKey.frameKey(keyHash: keys.keyHash).withUnsafeBytes { Array($0) }
    let ossl = OpenSSLAES.shared
    let ring = 64

    for (codec, size) in [(GroupCall.MediaCodec.opus, 160), (.vp8, 1200)] {
        let frame = buffer(size)
        if codec == .vp8 { frame.storeBytes(of: 0x31, as: UInt8.self) }   // bit 0 set: delta frame, 3-byte header
        let src = UnsafeRawBufferPointer(frame)
        let header = codec == .opus ? 0 : 3
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: size + 64, alignment: 64)
        let aadNonce = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 16)

        // Seal.
        do {
            let se = SealState(try! GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mediaKey))
            var cs = [Contender(implementation: "rampart") {
                _ = try! se.enc.seal(src, into: out, codec: codec)
                consume(out.baseAddress! + size)
            }]
            if let ctx = ossl?.context(mode: "gcm", key: pcmfk, encrypt: true) {
                let so = SealState(se.enc)
                cs.append(Contender(implementation: "openssl") {
                    let mfsn = so.mfsn
                    let o = out.baseAddress!
                    if header > 0 { o.copyMemory(from: src.baseAddress!, byteCount: header) }
                    let footer = o + size + 16
                    footer.storeBytes(of: mediaKey.epoch, as: UInt8.self)
                    (footer + 1).storeBytes(of: mediaKey.ratchetCounter, as: UInt8.self)
                    (footer + 2).storeBytes(of: mfsn.littleEndian, toByteOffset: 0, as: UInt32.self)
                    let a = aadNonce.baseAddress!
                    a.copyMemory(from: footer, byteCount: 6)
                    if header > 0 { (a + 6).copyMemory(from: src.baseAddress!, byteCount: header) }
                    (a + 16).storeBytes(of: mfsn.littleEndian, toByteOffset: 0, as: UInt32.self)
                    (a + 20).storeBytes(of: UInt64(0), toByteOffset: 0, as: UInt64.self)
                    _ = ctx.gcm(nonce: UnsafeRawBufferPointer(start: a + 16, count: 12), aad: UnsafeRawBufferPointer(start: a, count: 6 + header),
                                UnsafeRawBufferPointer(rebasing: src[header...]), into: o + header, tag: o + size)
                    so.mfsn &+= 1
                    consume(o + size)
                })
            }
            rows.append(Row(operation: "threema-call-frame-seal", size: size, unit: .mbps, contenders: cs))
        }

        // Open: a ring of frames with consecutive MFSNs.
        do {
            var enc = try! GroupCall.MediaFrameEncryptor(keyHash: keys.keyHash, mediaKey: mediaKey)
            let wireSize = size + GroupCall.MediaFrame.overheadByteCount
            let wires = UnsafeMutableRawBufferPointer.allocate(byteCount: ring * wireSize, alignment: 64)
            for i in 0..<ring {
                _ = try! enc.seal(src, into: UnsafeMutableRawBufferPointer(rebasing: wires[(i * wireSize)..<((i + 1) * wireSize)]), codec: codec)
            }
            func wire(_ i: Int) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(wires)[(i * wireSize)..<((i + 1) * wireSize)])
            }
            let pristine = try! GroupCall.MediaFrameDecryptor(keyHash: keys.keyHash, mediaKey: mediaKey)
            let st = OpenState(pristine)
            var cs = [Contender(implementation: "rampart") {
                if st.i == ring { st.i = 0; st.dec = pristine }
                _ = try! st.dec.open(wire(st.i), into: out, codec: codec)
                st.i += 1
                consume(out.baseAddress!)
            }]
            do {   // Rampart's AES.GCM.open alone on the same inputs: the layer's own cost is the difference.
                let c = try! AES.Cipher(gcmKey: SymmetricKey(data: pcmfk))
                let sk = OpenState(pristine)
                cs.append(Contender(implementation: "rampart-gcm-only") {
                    if sk.i == ring { sk.i = 0 }
                    let w = wire(sk.i).baseAddress!
                    let n = wireSize - 22
                    let a = aadNonce.baseAddress!
                    a.copyMemory(from: w + n + 16, byteCount: 6)
                    if header > 0 { (a + 6).copyMemory(from: w, byteCount: header) }
                    (a + 16).copyMemory(from: w + n + 18, byteCount: 4)
                    (a + 20).storeBytes(of: UInt64(0), toByteOffset: 0, as: UInt64.self)
                    try! AES.GCM.open(UnsafeRawBufferPointer(start: w + header, count: n - header),
                                      into: UnsafeMutableRawBufferPointer(start: out.baseAddress! + header, count: n - header),
                                      tag: UnsafeRawBufferPointer(start: w + n, count: 16), using: c,
                                      nonce: UnsafeRawBufferPointer(start: a + 16, count: 12), authenticating: UnsafeRawBufferPointer(start: a, count: 6 + header))
                    sk.i += 1
                    consume(out.baseAddress!)
                })
            }
            if let ctx = ossl?.context(mode: "gcm", key: pcmfk, encrypt: false) {
                let sj = OpenState(pristine)
                cs.append(Contender(implementation: "openssl") {
                    if sj.i == ring { sj.i = 0 }
                    let w = wire(sj.i).baseAddress!
                    let n = wireSize - 22
                    let footer = w + n + 16
                    let a = aadNonce.baseAddress!
                    a.copyMemory(from: footer, byteCount: 6)
                    if header > 0 { (a + 6).copyMemory(from: w, byteCount: header) }
                    (a + 16).copyMemory(from: footer + 2, byteCount: 4)
                    (a + 20).storeBytes(of: UInt64(0), toByteOffset: 0, as: UInt64.self)
                    let ok = ctx.gcm(nonce: UnsafeRawBufferPointer(start: a + 16, count: 12), aad: UnsafeRawBufferPointer(start: a, count: 6 + header),
                                     UnsafeRawBufferPointer(start: w + header, count: n - header), into: out.baseAddress! + header,
                                     tag: UnsafeMutableRawPointer(mutating: w + n))
                    if !ok { fail("OpenSSL frame open failed") }
                    if header > 0 { out.baseAddress!.copyMemory(from: w, byteCount: header) }
                    sj.i += 1
                    consume(out.baseAddress!)
                })
            }
            rows.append(Row(operation: "threema-call-frame-open", size: size, unit: .mbps, contenders: cs))
        }
    }
    return rows
}

/// The mutable state of an open contender (the ring position, and Rampart's decryptor), the same
/// holder for every contender. The benchmark runs on one thread, so the dynamic exclusivity checks
/// of captured variables are switched off for all of them alike.
private final class OpenState {
    @exclusivity(unchecked) var dec: GroupCall.MediaFrameDecryptor
    @exclusivity(unchecked) var i = 0
    init(_ d: GroupCall.MediaFrameDecryptor) { dec = d }
}

/// The mutable state of a seal contender (Rampart's encryptor, or the MFSN of the OpenSSL
/// composition), with exclusivity checks off as for ``OpenState``.
private final class SealState {
    @exclusivity(unchecked) var enc: GroupCall.MediaFrameEncryptor
    @exclusivity(unchecked) var mfsn: UInt32 = 0
    init(_ e: GroupCall.MediaFrameEncryptor) { enc = e }
}
