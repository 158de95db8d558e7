#!/usr/bin/env python3
"""Writes Vectors/mtproto/secret_chat.json: secret-chat vectors (Docs/MTProto.md §7, §10.D4, §10.D5).

Copied: D4 (a creator-sent message under the sample auth key used as a chat key) and D5 (the key-image
bytes), from Vectors/mtproto/derived_vectors.json; both are recomputed here and the script
stops on a mismatch. Self-computed (ours, same formulas): the same payload written by the acceptor
(x = 8), a v1 message, a key exchange with fixed exponents and server randomness, file-key fingerprints
and an encrypted file. Needs the Python `cryptography` package (AES-ECB, from which IGE is built).

    python3 Vectors/mtproto/generate_secret_chat.py
"""
import hashlib, json, os, sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

HERE = os.path.dirname(os.path.abspath(__file__))
DERIVED = os.path.join(HERE, "derived_vectors.json")

PRIME = int(
    "C71CAEB9C6B1C9048E6C522F70F13F73980D40238E3E21C14934D037563D930F"
    "48198A0AA7C14058229493D22530F4DBFA336F6E0AC925139543AED44CCE7C37"
    "20FD51F69458705AC68CD4FE6B6B13ABDC9746512969328454F18FAF8C595F64"
    "2477FE96BB2A941D5BCD1D4AC8CC49880708FA9B378E3C4F3A9060BEE67CF9A4"
    "A4A695811051907E162753B56B0F6B410DBA74D8A84B2A14B3144E0EF1284754"
    "FD17ED950D5965B4B9DD46582DB1178D169C6BC465B0D6FF9CA3928FEF5B9AE4"
    "E418FC15E83EBEA0F87FA9FF5EED70050DED2849F47BF959D956850CE929851F"
    "0D8115F635B105EE2E4E15D04B2454BF6F4FADF034B10403119CD8E3B92FCC5B", 16)


def sha1(b): return hashlib.sha1(b).digest()
def sha256(b): return hashlib.sha256(b).digest()
def hx(b): return b.hex().upper()


def ige(key, iv, data, encrypt):
    ecb = Cipher(algorithms.AES(key), modes.ECB())
    c_prev, p_prev = iv[:16], iv[16:]
    out = b""
    for i in range(0, len(data), 16):
        blk = data[i:i + 16]
        if encrypt:
            e = ecb.encryptor().update(bytes(a ^ b for a, b in zip(blk, c_prev)))
            c = bytes(a ^ b for a, b in zip(e, p_prev))
            out += c; p_prev, c_prev = blk, c
        else:
            d = ecb.decryptor().update(bytes(a ^ b for a, b in zip(blk, p_prev)))
            p = bytes(a ^ b for a, b in zip(d, c_prev))
            out += p; c_prev, p_prev = blk, p
    return out


def kdf2(key, mk, x):
    a = sha256(mk + key[x:x + 36]); b = sha256(key[40 + x:76 + x] + mk)
    return a[:8] + b[8:24] + a[24:32], b[:8] + a[8:24] + b[24:32]


def kdf1(key, mk, x):
    a = sha1(mk + key[x:x + 32]); b = sha1(key[32 + x:48 + x] + mk + key[48 + x:64 + x])
    c = sha1(key[64 + x:96 + x] + mk); d = sha1(mk + key[96 + x:128 + x])
    return a[:8] + b[8:20] + c[4:16], a[8:20] + b[:8] + c[16:20] + d[:8]


def v2(key, tl, pad, x):
    pt = len(tl).to_bytes(4, "little") + tl + pad
    assert len(pt) % 16 == 0 and 12 <= len(pad) <= 1024
    mk = sha256(key[88 + x:120 + x] + pt)[8:24]
    k, iv = kdf2(key, mk, x)
    return pt, mk, k, iv, sha1(key)[12:20] + mk + ige(k, iv, pt, True)


def v1(key, tl, pad):
    data = len(tl).to_bytes(4, "little") + tl
    pt = data + pad
    assert len(pt) % 16 == 0 and len(pad) <= 15
    mk = sha1(data)[4:20]
    k, iv = kdf1(key, mk, 0)
    return pt, mk, k, iv, sha1(key)[12:20] + mk + ige(k, iv, pt, True)


def main():
    shared = json.load(open(DERIVED))
    sample = json.load(open(os.path.join(HERE, "handshake_sample.json")))
    key = bytes.fromhex(sample["auth_key"])
    d4 = shared["secret_chat_creator"]
    tl = bytes.fromhex(d4["decrypted_layer_tl"])
    pt, mk, k, iv, data = v2(key, tl, b"\x55" * 24, 0)
    for name, got in [("plaintext", pt), ("msg_key", mk), ("aes_key", k), ("aes_iv", iv),
                      ("message", data), ("key_fingerprint_wire", sha1(key)[12:20])]:
        if d4[name].upper() != hx(got):
            sys.exit("D4 %s does not recompute" % name)
    d5 = sha1(key)[:16] + sha256(key)[:20]
    if shared["key_visualization_36_bytes"].upper() != hx(d5):
        sys.exit("D5 does not recompute")
    cases = [{"id": "D4", "type": "message-v2", "origin": "copied (derived_vectors.json secret_chat_creator), recomputed",
              "key": hx(key), "sender": "creator", "tl": hx(tl), "padding": hx(b"\x55" * 24), "plaintext": hx(pt),
              "key_fingerprint_wire": hx(sha1(key)[12:20]), "msg_key": hx(mk), "aes_key": hx(k), "aes_iv": hx(iv), "data": hx(data)}]
    pad = bytes(range(0xA0, 0xA0 + 24)) + b"\xAA" * 16
    pt, mk, k, iv, data = v2(key, tl, pad, 8)
    cases.append({"id": "S1-acceptor", "type": "message-v2", "origin": "ours: the D4 payload written by the acceptor (x = 8)",
                  "key": hx(key), "sender": "acceptor", "tl": hx(tl), "padding": hx(pad), "plaintext": hx(pt),
                  "key_fingerprint_wire": hx(sha1(key)[12:20]), "msg_key": hx(mk), "aes_key": hx(k), "aes_iv": hx(iv), "data": hx(data)})
    pad1 = bytes(range(8))  # 4 + 52 + 8 = 64
    pt, mk, k, iv, data = v1(key, tl, pad1)
    cases.append({"id": "S2-v1", "type": "message-v1", "origin": "ours: the D4 payload as MTProto 1.0 (KDF v1, x = 0)",
                  "key": hx(key), "sender": "acceptor", "tl": hx(tl), "padding": hx(pad1), "plaintext": hx(pt),
                  "key_fingerprint_wire": hx(sha1(key)[12:20]), "msg_key": hx(mk), "aes_key": hx(k), "aes_iv": hx(iv), "data": hx(data)})
    cases.append({"id": "D5", "type": "key-hash", "origin": "copied (derived_vectors.json key_visualization_36_bytes), recomputed",
                  "original_key": hx(key), "layer46_key": hx(key), "key_hash": hx(d5),
                  "sha1_fingerprint": hx(sha1(key)), "sha256_fingerprint": hx(sha256(key))})
    # Key exchange, g = 3 and Telegram's prime; each exponent is local XOR server random (§4).
    a_local = bytes((7 * i + 1) & 0xFF for i in range(256)); a_server = bytes((3 * i) & 0xFF for i in range(256))
    b_local = sha256(b"b-local") * 8; b_server = sha256(b"b-server")  # 32 bytes: only the prefix is mixed
    a = bytes(p ^ q for p, q in zip(a_local, a_server))
    b = bytes(b_local[i] ^ (b_server[i] if i < len(b_server) else 0) for i in range(256))
    ga = pow(3, int.from_bytes(a, "big"), PRIME); gb = pow(3, int.from_bytes(b, "big"), PRIME)
    for v in (ga, gb):
        assert 2 ** 1984 <= v <= PRIME - 2 ** 1984
    k1 = pow(gb, int.from_bytes(a, "big"), PRIME).to_bytes(256, "big")
    assert k1 == pow(ga, int.from_bytes(b, "big"), PRIME).to_bytes(256, "big")
    cases.append({"id": "S3-dh", "type": "key-exchange", "origin": "ours: fixed exponents, Telegram's prime, g = 3",
                  "g": 3, "a_local": hx(a_local), "a_server_random": hx(a_server), "b_local": hx(b_local),
                  "b_server_random": hx(b_server), "g_a": hx(ga.to_bytes(256, "big")), "g_b": hx(gb.to_bytes(256, "big")),
                  "key": hx(k1), "key_fingerprint": int.from_bytes(sha1(k1)[12:20], "little", signed=True)})
    # Encrypted files: fingerprint = LE32(md5(key ‖ iv)[0..4]) XOR LE32(md5(key ‖ iv)[4..8]) (tdlib calc_fingerprint).
    for i, seed in enumerate([b"file-0", b"file-1", b"file-2"]):
        fk = sha256(seed + b"key"); fiv = sha256(seed + b"iv")
        m = hashlib.md5(fk + fiv).digest()
        fp = int.from_bytes(m[0:4], "little", signed=True) ^ int.from_bytes(m[4:8], "little", signed=True)
        size = [0, 100, 1000][i]
        plain = bytes((j * 31 + i) & 0xFF for j in range(size))
        padded = plain + b"\x00" * ((16 - size % 16) % 16)
        cases.append({"id": "S4-file-%d" % i, "type": "file", "origin": "ours: tdlib FileEncryptionKey::calc_fingerprint formula",
                      "key": hx(fk), "iv": hx(fiv), "md5": hx(m), "key_fingerprint": fp,
                      "plaintext": hx(plain), "ciphertext": hx(ige(fk, fiv, padded, True))})
    out = {"kind": "mtproto-secret-chat",
           "source": "D4/D5 copied from Vectors/mtproto/derived_vectors.json (Docs/MTProto.md §10.D4, §10.D5, derived "
                     "with the reference formulas from the official sample auth key) and recomputed; S* computed by "
                     "Vectors/mtproto/generate_secret_chat.py (hashlib, IGE over cryptography's AES-ECB)",
           "cases": cases}
    with open(os.path.join(HERE, "secret_chat.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
