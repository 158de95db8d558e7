#!/usr/bin/env python3
"""Writes Vectors/mtproto/message.json: the MTProto message-layer vectors of Docs/MTProto.md §10 (G1-G5 from
gotd/td's unit tests, D1/D2 derived with the spec's formulas) and re-checks every value.

Inputs are the vectors of Docs/MTProto.md §10.G/§10.D (G values written out below) and
Vectors/mtproto/{handshake_sample,derived_vectors}.json. Python standard library plus the
`cryptography` package (AES-ECB for a hand-written IGE). Run: python3 Vectors/mtproto/generate_message.py
"""
import hashlib, json, os, sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

HERE = os.path.dirname(os.path.abspath(__file__))

def h(s): return bytes.fromhex(s)
def sha1(*p): return hashlib.sha1(b"".join(p)).digest()
def sha256(*p): return hashlib.sha256(b"".join(p)).digest()

def kdf2(k, mk, x):
    a = sha256(mk, k[x:x + 36]); b = sha256(k[40 + x:76 + x], mk)
    return a[:8] + b[8:24] + a[24:32], b[:8] + a[8:24] + b[24:32]

def kdf1(k, mk, x):
    a = sha1(mk, k[x:x + 32]); b = sha1(k[32 + x:48 + x], mk, k[48 + x:64 + x])
    c = sha1(k[64 + x:96 + x], mk); d = sha1(mk, k[96 + x:128 + x])
    return a[:8] + b[8:20] + c[4:16], a[8:20] + b[:8] + c[16:20] + d[:8]

def ige_encrypt(key, iv, data):
    e = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    c_prev, p_prev, out = iv[:16], iv[16:], b""
    for i in range(0, len(data), 16):
        p = data[i:i + 16]
        c = bytes(x ^ y for x, y in zip(e.update(bytes(x ^ y for x, y in zip(p, c_prev))), p_prev))
        out += c; c_prev, p_prev = c, p
    return out

key_seq = bytes(range(256))
hs = os.path.join(HERE, "handshake_sample.json")
sample_key = h(json.load(open(hs))["auth_key"])
assert len(sample_key) == 256

cases = []
def case(**kw): cases.append(kw)

# G1: auth_key_id and aux_hash of the key 00 01 ... FF.
d = sha1(key_seq)
assert d[12:20].hex().upper() == "32D1586EA457DFC8" and d[:8].hex().upper() == "4916D6BDB7F78E68"
case(id="G1", type="auth_key_id", auth_key=key_seq.hex().upper(), id_wire="32D1586EA457DFC8", aux_hash_wire="4916D6BDB7F78E68")
d = sha1(sample_key)
assert d[12:20].hex().upper() == "8AE7A271969A9B1F" and d[:8].hex().upper() == "26D6CEEFF1381295"
case(id="A-auth_key_id", type="auth_key_id", auth_key=sample_key.hex().upper(), id_wire="8AE7A271969A9B1F", aux_hash_wire="26D6CEEFF1381295")

mk = bytes(range(16))
for cid, x, k, iv in [("G2", 0, "704ED09C8B41668AE8F99D244738F71DBDDC44469B6BBD4AA8573DD042BD059E", "4D266000A550EDABBF4C7CE40FD0043CC92230184CD317A5CC9C2482FD3B9318"),
                      ("G3", 8, "217725799B245806458174A1FCFBC883906807B15033FDD0EA2B4D69CF9C364E", "669A6538917A4FA56CA32360A431C9160BE4AD887140980DAB91CE7BDC47FFBC")]:
    assert kdf2(key_seq, mk, x) == (h(k), h(iv)), cid
    case(id=cid, type="kdf-v2", auth_key=key_seq.hex().upper(), msg_key=mk.hex().upper(), x=x, aes_key=k, aes_iv=iv)

g4 = b"bind-message-test-payload"
assert sha1(g4)[4:20].hex().upper() == "FC11A3669566DE22B87F66550DC3DE6D"
case(id="G4", type="msg-key-v1", plaintext=g4.hex().upper(), msg_key="FC11A3669566DE22B87F66550DC3DE6D")
k5, iv5 = "17D7295CA9213D1AB656ACDB1AD48B2EA7F3A8F7095098D5508B900BBD5FCCFC", "2D7D16A65A84108E9805656CAA474501CC580AA2EDC33ABFD0BFAD785464D1C6"
assert kdf1(key_seq, mk, 0) == (h(k5), h(iv5))
case(id="G5", type="kdf-v1", auth_key=key_seq.hex().upper(), msg_key=mk.hex().upper(), x=0, aes_key=k5, aes_iv=iv5)

dv = json.load(open(os.path.join(HERE, "derived_vectors.json")))
for cid, name, direction, x, body_key in [("D1", "c2s", "client-to-server", 0, "body_ping"), ("D2", "s2c", "server-to-client", 8, "body_pong")]:
    v = dv[name]
    pt = h(v["plaintext"])
    body, pad = h(v[body_key]), h(v["padding"])
    salt, sess = h(dv["sample_initial_server_salt_wire_bytes"]), h(dv["c2s"]["session_id_wire"])
    msg_id = int(v["msg_id"], 16)
    assert pt == salt + sess + msg_id.to_bytes(8, "little") + v["seq_no"].to_bytes(4, "little") + len(body).to_bytes(4, "little") + body + pad
    large = sha256(sample_key[88 + x:120 + x], pt)
    assert large[8:24].hex().upper() == v["msg_key"]
    key, iv = kdf2(sample_key, large[8:24], x)
    assert (key.hex().upper(), iv.hex().upper()) == (v["aes_key"], v["aes_iv"])
    packet = sha1(sample_key)[12:20] + large[8:24] + ige_encrypt(key, iv, pt)
    assert packet.hex().upper() == v["full_packet"]
    qa = int.from_bytes(large[:4], "little") | 0x80000000
    if "quick_ack_uint32" in v: assert qa == int(v["quick_ack_uint32"], 16)
    case(id=cid, type="envelope-v2", direction=direction, auth_key=sample_key.hex().upper(),
         salt_wire=salt.hex().upper(), session_id_wire=sess.hex().upper(), msg_id=v["msg_id"], seq_no=v["seq_no"],
         body=body.hex().upper(), padding=pad.hex().upper(), plaintext=v["plaintext"], msg_key=v["msg_key"],
         aes_key=v["aes_key"], aes_iv=v["aes_iv"], packet=v["full_packet"], quick_ack="0x%08x" % qa)

out = {"kind": "mtproto-message",
       "source": "Docs/MTProto.md §10.G (gotd/td crypto unit tests: G1-G5) and §10.D (D1/D2, derived with the reference formulas); sample auth_key from core.telegram.org/mtproto/samples-auth_key",
       "cases": cases}
with open(os.path.join(HERE, "message.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print("wrote", len(cases), "cases")
