#!/usr/bin/env python3
"""Writes Vectors/threema/csp_handshake.json: one chat-server-protocol handshake and two frames,
computed here independently of Rampart with PyNaCl (libsodium: crypto_scalarmult_base,
crypto_box_beforenm, crypto_box_afternm) and hashlib.blake2b, from fixed keys and cookies.

The layout follows csp.struct.yml (threema-android, domain/libthreema/threema-protocols): nonces are
cookie || u64-le(sequence number), both directions start at 1; client-hello = TCK.public || CCK;
server-hello = SCK || box(TSK.public || CCK, SK <-> TCK, SCK||1); login = box(login-data, TCK <-> TSK,
CCK||1) || box(extensions, CCK||2); login-ack = box(16 zero bytes, SCK||2); frames = u16-le length ||
box(type || 3 zero bytes || data) with CCK||3 / SCK||3. Run from the repository root:
    python3 Vectors/generate_threema_csp.py
"""
import hashlib, json, os, struct, sys

try:
    from nacl.bindings import crypto_box_afternm, crypto_box_beforenm, crypto_box_open_afternm, crypto_scalarmult_base
except ImportError:
    sys.exit("PyNaCl is needed: pip install pynacl")


def blake2b(data, key, salt=b"", personal=b""):
    return hashlib.blake2b(data, digest_size=32, key=key, salt=salt.ljust(16, b"\0"), person=personal.ljust(16, b"\0")).digest()


def nonce(cookie, seq):
    return cookie + struct.pack("<Q", seq)


sk, ck, tck, tsk = (bytes([b]) * 32 for b in (0x51, 0xA1, 0x61, 0x62))
cck, sck = b"\xc1" * 16, b"\x5c" * 16
identity = b"000ALICE"
SK, CK, TCK, TSK = (crypto_scalarmult_base(k) for k in (sk, ck, tck, tsk))

client_hello = TCK + cck
hello_key = crypto_box_beforenm(TCK, sk)            # X25519HSalsa20(SK.secret, TCK.public)
assert hello_key == crypto_box_beforenm(SK, tck)
server_hello = sck + crypto_box_afternm(TSK + cck, nonce(sck, 1), hello_key)

session = crypto_box_beforenm(TSK, tck)             # X25519HSalsa20(TCK.secret, TSK.public)
assert session == crypto_box_beforenm(TCK, tsk)
ss1, ss2 = crypto_box_beforenm(SK, ck), crypto_box_beforenm(TSK, ck)
vouch_key = blake2b(b"", ss1 + ss2, b"v2", b"3ma-csp")
vouch = blake2b(sck + TCK, vouch_key)

client_info = b"5.0;A;de/CH;Pixel;14"
extensions = (bytes([0x00]) + struct.pack("<H", len(client_info)) + client_info
              + bytes([0x01]) + struct.pack("<H", 8) + struct.pack("<Q", 0x0102030405060708)
              + bytes([0x02, 1, 0, 1])
              + bytes([0x03]) + struct.pack("<H", 16) + b"\xdc" * 16)
login_data = (identity + b"threema-clever-extension-field" + struct.pack("<H", len(extensions) + 16)
              + sck + b"\0" * 24 + vouch + b"\0" * 16)
assert len(login_data) == 128
login = crypto_box_afternm(login_data, nonce(cck, 1), session) + crypto_box_afternm(extensions, nonce(cck, 2), session)
login_ack = crypto_box_afternm(b"\0" * 16, nonce(sck, 2), session)


def frame(container, cookie, seq):
    box = crypto_box_afternm(container, nonce(cookie, seq), session)
    return struct.pack("<H", len(box)) + box


client_frame = frame(bytes([0x00, 0, 0, 0, 1, 2, 3]), cck, 3)                              # echo-request 010203
server_frame = frame(bytes([0x81, 0, 0, 0]) + b"00000BOB" + struct.pack("<Q", 0x1122334455667788), sck, 3)   # outgoing-message-ack
assert crypto_box_open_afternm(client_frame[2:], nonce(cck, 3), session)[4:] == bytes([1, 2, 3])

case = {
    "id": "csp-handshake-1", "op": "csp-handshake",
    "source": "self-computed with PyNaCl (libsodium) and hashlib from fixed keys; layout per csp.struct.yml",
    "server_secret": sk.hex(), "client_identity": identity.decode(), "client_secret": ck.hex(),
    "client_temporary_secret": tck.hex(), "server_temporary_secret": tsk.hex(),
    "client_cookie": cck.hex(), "server_cookie": sck.hex(),
    "client_info": client_info.decode(), "csp_device_id": "0102030405060708", "message_payload_version": 1,
    "device_cookie": (b"\xdc" * 16).hex(),
    "extensions": extensions.hex(), "vouch": vouch.hex(),
    "client_hello": client_hello.hex(), "server_hello": server_hello.hex(), "login": login.hex(), "login_ack": login_ack.hex(),
    "client_frame_echo_request": client_frame.hex(), "server_frame_outgoing_message_ack": server_frame.hex(),
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "threema", "csp_handshake.json")
with open(out, "w") as f:
    json.dump({"kind": "threema-csp", "source": "Vectors/generate_threema_csp.py (PyNaCl)", "cases": [case]}, f, indent=1)
    f.write("\n")
print("wrote", out)
