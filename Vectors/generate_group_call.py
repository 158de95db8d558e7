#!/usr/bin/env python3
"""Writes Vectors/threema/group_call.json from Vectors/collected/threema_vectors.json.

The two call IDs are Threema's published values (threema-android CallIdTest.kt, threema-ios
CallIDTests.swift); the key chain and the Opus frame are the shared self-computed example. Each is
recomputed here with hashlib (BLAKE2b) and the `cryptography` package (AES-256-GCM, OpenSSL) before it
is written. The further cases (VP8 frames, a frame after a ratchet step and in a new epoch, GCAMK,
GCNHAK, participant boxes) are computed by this script with hashlib, cryptography and PyNaCl
(libsodium), independently of the Swift code. Run from the repository root:
    python3 Vectors/generate_group_call.py [path/to/threema_vectors.json]
"""
import hashlib, json, os, struct, sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from nacl.bindings import crypto_box_beforenm, crypto_scalarmult_base, crypto_secretbox

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "collected", "threema_vectors.json")
d = json.load(open(src))
pub = d["published_threema_vectors_reverified"]
sc = d["group_call_self_computed"]
ibex = d["ibex_fs_self_computed"]
P = b"3ma-call"


def b2(key, salt, data=b""):
    return hashlib.blake2b(data, digest_size=32, key=key, salt=salt.ljust(16, b"\0"), person=P.ljust(16, b"\0")).digest()


def call_id(creator, group_id, version, gck, url):
    return b2(b"", b"i", creator.encode() + group_id + bytes([version]) + gck + url.encode())


def frame(pcmfk, epoch, counter, mfsn, data, codec):
    h = 0 if codec == "opus" else min(10 if data[0] & 1 == 0 else 3, len(data))
    footer = bytes([epoch, counter]) + struct.pack("<I", mfsn)
    nonce = struct.pack("<I", mfsn) + bytes(8)
    ct = AESGCM(pcmfk).encrypt(nonce, data[h:], footer + data[:h])
    return data[:h] + ct + footer


out = {"kind": "threema-group-call", "source": (
    "Group-call values: the call IDs are Threema's published test values (threema-android CallIdTest.kt, threema-ios "
    "GroupCalls/Tests/GroupCallsTests/CallIDTests.swift); keys and the Opus frame are the self-computed example of "
    "Vectors/collected/threema_vectors.json (group_call_self_computed); the remaining cases are self-computed by "
    "Vectors/generate_group_call.py with hashlib, cryptography (OpenSSL) and PyNaCl (libsodium). Facts only; no code copied."),
    "call_ids": [], "keys": {}, "frames": [], "participant_boxes": []}

# Published call IDs.
for name, key in [("threema-android CallIdTest.kt", "group_call_id__threema-android CallIdTest.kt"),
                  ("threema-ios CallIDTests.swift", "group_call_id__threema-ios GroupCalls/Tests/GroupCallsTests/CallIDTests.swift")]:
    v = pub[key]
    want = next(x for k, x in v.items() if k.startswith("call_id"))
    got = call_id(v["creator"], bytes.fromhex(v["group_id"]), v["protocol_version"], bytes.fromhex(v["gck"]), v["sfu_base_url"])
    assert got.hex() == want, name
    out["call_ids"].append({"source": name + " (published)", "creator": v["creator"], "group_id": v["group_id"],
                            "protocol_version": v["protocol_version"], "gck": v["gck"], "sfu_base_url": v["sfu_base_url"],
                            "call_id": want})

# The key chain of the shared self-computed example, plus GCAMK and GCNHAK.
gck = bytes.fromhex(sc["gck"])
gckh, gchk, gcsk = b2(gck, b"#"), b2(gck, b"h"), b2(gck, b"s")
assert (gckh.hex(), gchk.hex(), gcsk.hex()) == (sc["gckh"], sc["gchk"], sc["gcsk"])
pcmk = bytes.fromhex(sc["pcmk"])
r1 = b2(pcmk, b"m'")
assert r1.hex() == sc["pcmk_ratchet_1"]
pcmfk = b2(pcmk, b"mf", gckh)
assert pcmfk.hex() == sc["pcmfk(pcmk,gckh)"]
r2 = b2(r1, b"m'")
gcak = bytes(range(32))
alice_sk, bob_sk = bytes.fromhex(ibex["alice_ck_secret"]), bytes.fromhex(ibex["bob_ck_secret"])
alice_pk, bob_pk = crypto_scalarmult_base(alice_sk), crypto_scalarmult_base(bob_sk)
s_ab = crypto_box_beforenm(bob_pk, alice_sk)
assert s_ab == crypto_box_beforenm(alice_pk, bob_sk)
out["keys"] = {
    "source": "shared self-computed example (gck .. pcmfk); gcamk, gcnhak and pcmk_ratchet_2 self-computed here",
    "gck": sc["gck"], "gckh": gckh.hex(), "gchk": gchk.hex(), "gcsk": gcsk.hex(),
    "pcmk": sc["pcmk"], "pcmk_ratchet_1": r1.hex(), "pcmk_ratchet_2": r2.hex(), "pcmfk": pcmfk.hex(),
    "pcmfk_ratchet_1": b2(r1, b"mf", gckh).hex(),
    "gcak": gcak.hex(), "gcamk": b2(gcak, b"am", gckh).hex(),
    "alice_ck_secret": alice_sk.hex(), "bob_ck_public": bob_pk.hex(), "gcnhak": b2(s_ab, b"nha", gckh).hex(),
}

# Frames. The Opus example is the shared one; the others are computed here.
ex = sc["opus_frame_example"]
opus = frame(pcmfk, 0, 0, 7, ex["payload_utf8"].encode(), "opus")
assert opus.hex() == ex["wire_frame=header||ct||tag||footer"]
out["frames"].append({"source": "shared self-computed example", "codec": "opus", "pcmk": sc["pcmk"], "epoch": 0, "ratchet_counter": 0,
                      "key_ratchet_counter": 0, "mfsn": 7, "frame": ex["payload_utf8"].encode().hex(), "wire": opus.hex()})
vp8_key = bytes([0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x80, 0x02, 0xe0, 0x01]) + bytes(range(40))   # bit 0 clear: key frame
vp8_delta = bytes([0x31, 0x07, 0x00]) + bytes(range(100, 160))                                         # bit 0 set: 3-byte header
short = bytes([0x01, 0x02])                                                                              # shorter than its header
cases = [("vp8", 0, 0, 0, 8, vp8_key, pcmk), ("vp8", 0, 0, 0, 9, vp8_delta, pcmk), ("vp8", 0, 0, 0, 10, short, pcmk),
         ("opus", 0, 1, 0, 11, b"after one ratchet step", r1), ("opus", 0, 2, 0, 12, b"two steps, receiver at zero", r2)]
for codec, epoch, counter, key_counter, mfsn, data, key in cases:
    w = frame(b2(key, b"mf", gckh), epoch, counter, mfsn, data, codec)
    out["frames"].append({"source": "self-computed (hashlib + cryptography)", "codec": codec, "pcmk": sc["pcmk"], "epoch": epoch,
                          "ratchet_counter": counter, "key_ratchet_counter": key_counter, "mfsn": mfsn, "frame": data.hex(), "wire": w.hex()})

# Participant boxes: nonce = cookie (16) ‖ u64-LE sequence number, from 1.
cookie = bytes(range(0xa0, 0xb0))
for seq, msg in [(1, b"first"), (2, b"second"), (3, b"")]:
    box = crypto_secretbox(msg, cookie + struct.pack("<Q", seq), s_ab)
    out["participant_boxes"].append({"source": "self-computed (PyNaCl)", "key": s_ab.hex(), "cookie": cookie.hex(), "sequence_number": seq,
                                     "plaintext": msg.hex(), "box": box.hex()})

path = os.path.join(os.path.dirname(__file__), "threema", "group_call.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print("wrote", path)
