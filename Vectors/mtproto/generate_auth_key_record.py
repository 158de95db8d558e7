#!/usr/bin/env python3
"""Writes Vectors/mtproto/auth_key_record.json: a stored auth key record in both forms (Docs/MTProto.md §2.7),
built here from the format's description with hashlib (SHA1, PBKDF2-HMAC-SHA512) and the `cryptography`
package (AES-256-CBC), not with Rampart: the plain record, and the record sealed with a password, a fixed
PBKDF2 salt and IV and few iterations (so that a test can run it). Self-computed (ours).

    python3 Vectors/mtproto/generate_auth_key_record.py
"""
import hashlib, json, os, struct
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

HERE = os.path.dirname(os.path.abspath(__file__))

key = bytes((i * 7 + 3) & 0xFF for i in range(256))
dc, expires = 2, 1_800_000_000
current, current_until = 0x1122334455667788, 1_800_003_600
future = [(1_800_003_600, 1_800_007_200, -5), (1_800_007_200, 1_800_010_800, 77)]

plain = b"RMAK" + bytes([1, 1, 0, 0]) + struct.pack("<iq", dc, expires) + key
plain += struct.pack("<qq", current, current_until) + struct.pack("<H", len(future))
for since, until, salt in future:
    plain += struct.pack("<iiq", since, until, salt)

password = "correct horse battery staple".encode()
iterations = 64
salt = bytes(range(0xA0, 0xB0))
iv = bytes(range(0xB0, 0xC0))
aes_key = hashlib.pbkdf2_hmac("sha512", password, salt, iterations, 32)
message = hashlib.sha1(plain).digest() + plain
pad = 16 - len(message) % 16
message += bytes([pad]) * pad
enc = Cipher(algorithms.AES(aes_key), modes.CBC(iv)).encryptor()
sealed = b"RMPW" + bytes([1, 3]) + struct.pack("<I", iterations) + salt + iv + enc.update(message) + enc.finalize()

out = {
    "kind": "mtproto-auth-key-record",
    "source": "self-computed (ours): Vectors/mtproto/generate_auth_key_record.py, hashlib and cryptography",
    "key": key.hex(), "dc": dc, "expires_at": expires,
    "salt": current, "salt_valid_until": current_until,
    "future_salts": [{"valid_since": a, "valid_until": b, "salt": c} for a, b, c in future],
    "plain": plain.hex(),
    "password": password.decode(), "iterations": iterations, "pbkdf2_salt": salt.hex(), "iv": iv.hex(),
    "sealed": sealed.hex(),
}
with open(os.path.join(HERE, "auth_key_record.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
