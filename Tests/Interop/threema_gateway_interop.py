#!/usr/bin/env python3
"""Threema Gateway SDK (threema.gateway, MIT, libsodium via libnacl) <-> `rampart threema` interop.

Both directions, several sizes, tampered messages refused:
  * SDK -> Rampart: the SDK packs, pads and encrypts text, file (with thumbnail), image and
    delivery-receipt messages to a Rampart identity (through `Message.send(get_data_only=True)`, with
    an in-memory stand-in for the Gateway's HTTP connection that stores uploaded blobs). The test wraps
    the SDK's nonce and box in the legacy envelope the Gateway server would deliver, and
    `rampart threema message open` must return the SDK's body; `rampart threema blob decrypt` must
    return the file and thumbnail, `rampart box open` the (deprecated, public-key encrypted) image.
  * Rampart -> SDK: `rampart threema message seal` (both envelope formats) to an SDK identity; the SDK's
    `Message.receive` decrypts the box, strips the padding and parses the message. Blobs encrypted by
    `rampart threema blob encrypt` are decrypted by the SDK's file message parser.
  * Every tampered envelope (one bit flipped in the box or the nonce) exits 1 with nothing on stdout.

Usage: threema_gateway_interop.py PATH/TO/rampart     (exit 0 when everything held)
"""
import asyncio, binascii, datetime, json, os, random, struct, subprocess, sys

import libnacl.public
from threema.gateway import e2e
from threema.gateway.key import Key

RAMPART = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/rampart"
rng = random.Random(0x7e3a)
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)


def run(args, data=b""):
    p = subprocess.run([RAMPART] + args, input=data, capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


class FakeResponse:
    def __init__(self, data):
        self._data = data

    async def read(self):
        return self._data


class FakeConnection:
    """What the SDK's messages need of a Gateway connection: our identity and key, the peer's public
    key, reception capabilities, and blob upload/download (in memory)."""
    blocking = False

    def __init__(self, identity, private_key, peers):
        self.id = identity
        self.key = private_key
        self.peers = peers
        self.blobs = {}

    @property
    def unwrap(self):
        return self

    async def get_public_key(self, identity):
        return self.peers[identity]

    async def get_reception_capabilities(self, identity):
        return set(e2e.ReceptionCapability)

    async def upload(self, data):
        blob_id = os.urandom(16).hex()
        self.blobs[blob_id] = bytes(data)
        return blob_id

    async def download(self, blob_id):
        return FakeResponse(self.blobs[blob_id])


def legacy_envelope(sender, receiver, nonce, box, message_id=None):
    """The legacy-message envelope (Docs/Threema.md §2.1) around the SDK's nonce and box, as the
    Gateway server delivers it."""
    mid = message_id if message_id is not None else os.urandom(8)
    header = sender.encode() + receiver.encode() + mid + struct.pack("<IBBH", 1700000000, 1, 0, 0) + bytes(32)
    return header + nonce + box


async def main():
    # The SDK side: gateway identity *SDKTEST with a libnacl key pair; the Rampart side: RAMPART1.
    sdk_keys = libnacl.public.SecretKey()
    rampart_secret = os.urandom(32)
    rc, out, _ = run(["x25519", "--scalar", rampart_secret.hex()])
    assert rc == 0, "rampart x25519 failed"
    rampart_public = bytes.fromhex(out.decode().strip())
    sdk_conn = FakeConnection("*SDKTEST", sdk_keys.sk, {"RAMPART1": rampart_public})
    open_args = ["threema", "message", "open", "--secret-key", rampart_secret.hex(), "--public-key", sdk_keys.pk.hex(),
                 "--from", "*SDKTEST", "--with-type"]

    # SDK -> Rampart: text messages of several sizes (the SDK pads at random; 1...4000 bytes).
    for size in [1, 5, 31, 32, 33, 200, 1000, 4000]:
        text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzäöü€ ") for _ in range(size))
        msg = e2e.TextMessage(sdk_conn, to_id="RAMPART1", key=rampart_public, text=text)
        nonce, box = await msg.send(get_data_only=True)
        env = legacy_envelope("*SDKTEST", "RAMPART1", nonce, box)
        rc, out, err = run(open_args, env)
        check(rc == 0 and out == b"\x01" + text.encode(), f"SDK text {size} -> rampart open: rc={rc} {err.strip()}")
        # Tampered: flip one bit in the box or in the nonce.
        for pos in [len(env) - 1, len(env) - len(box), 64 + 3]:
            t = bytearray(env)
            t[pos] ^= 0x04
            rc, out, _ = run(open_args, bytes(t))
            check(rc == 1 and out == b"", f"tampered SDK text (byte {pos}) refused with exit 1 and no output")

    # SDK -> Rampart: delivery receipts.
    ids = [os.urandom(8) for _ in range(3)]
    msg = e2e.DeliveryReceipt(sdk_conn, to_id="RAMPART1", key=rampart_public,
                              receipt_type=e2e.DeliveryReceipt.ReceiptType.read, message_ids=ids)
    nonce, box = await msg.send(get_data_only=True)
    rc, out, err = run(open_args, legacy_envelope("*SDKTEST", "RAMPART1", nonce, box))
    check(rc == 0 and out == b"\x80\x02" + b"".join(ids), f"SDK delivery receipt -> rampart: {err.strip()}")

    # SDK -> Rampart: file messages with thumbnails (secret-key blobs with the fixed nonces).
    for size in [0, 1, 100, 70000]:
        content = os.urandom(size)
        thumb = os.urandom(300)
        msg = e2e.FileMessage(sdk_conn, to_id="RAMPART1", key=rampart_public, file_content=content,
                              mime_type="application/octet-stream", file_name="f.bin",
                              thumbnail_content=thumb, caption="a caption")
        nonce, box = await msg.send(get_data_only=True)
        rc, out, err = run(open_args, legacy_envelope("*SDKTEST", "RAMPART1", nonce, box))
        check(rc == 0 and out[:1] == b"\x17", f"SDK file {size} -> rampart open: {err.strip()}")
        if rc != 0:
            continue
        body = json.loads(out[1:])
        check(body["s"] == size and body["d"] == "a caption", "file JSON fields")
        rc, plain, err = run(["threema", "blob", "decrypt", "--key", body["k"]], sdk_conn.blobs[body["b"]])
        check(rc == 0 and plain == content, f"SDK file blob {size} -> rampart blob decrypt: {err.strip()}")
        rc, plain, err = run(["threema", "blob", "decrypt", "--key", body["k"], "--thumbnail"], sdk_conn.blobs[body["t"]])
        check(rc == 0 and plain == thumb, f"SDK thumbnail -> rampart blob decrypt --thumbnail: {err.strip()}")
        bad = bytearray(sdk_conn.blobs[body["b"]])
        bad[len(bad) // 2] ^= 1
        rc, plain, _ = run(["threema", "blob", "decrypt", "--key", body["k"]], bytes(bad))
        check(rc == 1 and plain == b"", "tampered blob refused")

    # SDK -> Rampart: the deprecated image message (the image is box-encrypted with its own nonce).
    image = os.urandom(5000)
    msg = e2e.ImageMessage(sdk_conn, to_id="RAMPART1", key=rampart_public, image=image, mime_type="image/jpeg")
    nonce, box = await msg.send(get_data_only=True)
    rc, out, err = run(open_args, legacy_envelope("*SDKTEST", "RAMPART1", nonce, box))
    check(rc == 0 and out[:1] == b"\x02" and len(out) == 1 + 16 + 4 + 24, f"SDK image -> rampart open: {err.strip()}")
    if rc == 0:
        blob_id, length, image_nonce = out[1:17], struct.unpack("<I", out[17:21])[0], out[21:45]
        rc, plain, err = run(["box", "open", "--secret-key", rampart_secret.hex(), "--public-key", sdk_keys.pk.hex(),
                              "--nonce", image_nonce.hex()], sdk_conn.blobs[blob_id.hex()])
        check(rc == 0 and plain == image and length == len(image), f"SDK image blob -> rampart box open: {err.strip()}")

    # Rampart -> SDK: text in both envelope formats; the SDK decrypts the box and parses.
    rampart_conn = FakeConnection("*SDKTEST", sdk_keys.sk, {"RAMPART1": rampart_public})
    for fmt in [[], ["--legacy"]]:
        for size in [0, 1, 31, 32, 500, 3000]:
            text = "".join(rng.choice("xyz ÄÖÜ✓") for _ in range(size))
            rc, env, err = run(["threema", "message", "seal", "--secret-key", rampart_secret.hex(), "--public-key",
                                sdk_keys.pk.hex(), "--from", "RAMPART1", "--to", "*SDKTEST", "--nickname", "Ramp"] + fmt,
                               text.encode())
            check(rc == 0, f"rampart seal {size} {fmt}: {err.strip()}")
            m = struct.unpack("<H", env[30:32])[0]
            check((m == 0) == (fmt == ["--legacy"]), "metadata box present unless --legacy")
            nonce, box = env[64 + m:88 + m], env[88 + m:]
            params = {"from_id": "RAMPART1", "message_id": env[16:24], "date": datetime.datetime.now()}
            got = await e2e.Message.receive(rampart_conn, params, nonce, box)
            check(got.type == e2e.Message.Type.text_message and got.text == text, f"rampart text {size} {fmt} -> SDK")
            # The Gateway nickname field carries the nickname for a Gateway receiver.
            check(env[32:36] == b"Ramp", "legacy nickname field set for a Gateway ID receiver")

    # Rampart -> SDK: a delivery receipt and a file message whose blobs Rampart encrypted.
    ids = [os.urandom(8) for _ in range(2)]
    rc, env, err = run(["threema", "message", "seal", "--secret-key", rampart_secret.hex(), "--public-key",
                        sdk_keys.pk.hex(), "--from", "RAMPART1", "--to", "*SDKTEST", "--type", "80"], b"\x01" + b"".join(ids))
    m = struct.unpack("<H", env[30:32])[0]
    got = await e2e.Message.receive(rampart_conn, {"from_id": "RAMPART1", "message_id": env[16:24], "date": None},
                                    env[64 + m:88 + m], env[88 + m:])
    check(got.type == e2e.Message.Type.delivery_receipt and got.message_ids == ids and got.receipt_type == e2e.DeliveryReceipt.ReceiptType.received,
          "rampart delivery receipt -> SDK")
    for size in [0, 10, 100000]:
        blob_key = os.urandom(32)
        content, thumb = os.urandom(size), os.urandom(123)
        rc, enc_file, _ = run(["threema", "blob", "encrypt", "--key", blob_key.hex()], content)
        rc2, enc_thumb, _ = run(["threema", "blob", "encrypt", "--key", blob_key.hex(), "--thumbnail"], thumb)
        fid, tid = os.urandom(16).hex(), os.urandom(16).hex()
        rampart_conn.blobs[fid], rampart_conn.blobs[tid] = enc_file, enc_thumb
        body = json.dumps({"b": fid, "t": tid, "k": blob_key.hex(), "m": "application/octet-stream", "n": "x.bin",
                           "s": size, "i": 0}, separators=(",", ":")).encode()
        rc3, env, err = run(["threema", "message", "seal", "--secret-key", rampart_secret.hex(), "--public-key",
                             sdk_keys.pk.hex(), "--from", "RAMPART1", "--to", "*SDKTEST", "--type", "17"], body)
        m = struct.unpack("<H", env[30:32])[0]
        got = await e2e.Message.receive(rampart_conn, {"from_id": "RAMPART1", "message_id": env[16:24], "date": None},
                                        env[64 + m:88 + m], env[88 + m:])
        check(rc == rc2 == rc3 == 0 and got.type == e2e.Message.Type.file_message and got.file_content == content
              and got.thumbnail_content == thumb, f"rampart file {size} + blobs -> SDK")

    backups_interop(rampart_secret)
    print(f"threema gateway interop: {checks - failures}/{checks} checks passed")
    return failures == 0


def backups_interop(secret):
    """ID backups and Threema Safe against Python's hashlib, gzip and libsodium (libnacl): each side
    writes, the other reads."""
    import base64, gzip, hashlib, tempfile
    import libnacl
    tmp = tempfile.mkdtemp()
    pw_path = os.path.join(tmp, "pw")
    password = "interop password ✓"
    with open(pw_path, "w") as f:
        f.write(password + "\n")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

    def b32(data):
        bits = "".join(f"{b:08b}" for b in data)
        bits += "0" * (-len(bits) % 5)
        return "".join(alphabet[int(bits[i:i + 5], 2)] for i in range(0, len(bits), 5))

    def b32decode(text):
        bits = "".join(f"{alphabet.index(c):05b}" for c in text)
        return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits) - len(bits) % 8, 8))

    # Python writes a legacy ID backup; rampart decodes it.
    salt = os.urandom(8)
    key = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 100000, 32)
    plain = b"ECHOECHO" + secret
    plain += hashlib.sha256(plain).digest()[:2]
    raw = salt + libnacl.crypto_stream_xor(plain, bytes(24), key)
    text = "-".join(b32(raw)[i:i + 4] for i in range(0, 80, 4))
    backup_path = os.path.join(tmp, "backup")
    with open(backup_path, "w") as f:
        f.write(text.lower())
    rc, out, err = run(["threema", "id-backup", "decode", "--backup-file", backup_path, "--password-file", pw_path])
    check(rc == 0 and out.decode().split() == ["ECHOECHO", secret.hex()], f"python ID backup -> rampart decode: {err.strip()}")
    # rampart writes one; Python decodes it.
    rc, out, err = run(["threema", "id-backup", "encode", "--id", "ECHOECHO", "--secret-key", secret.hex(), "--password-file", pw_path])
    raw = b32decode(out.decode().strip().replace("-", ""))
    key = hashlib.pbkdf2_hmac("sha256", password.encode(), raw[:8], 100000, 32)
    plain = libnacl.crypto_stream_xor(raw[8:], bytes(24), key)
    check(rc == 0 and len(raw) == 50 and plain[:8] == b"ECHOECHO" and plain[8:40] == secret
          and plain[40:] == hashlib.sha256(plain[:40]).digest()[:2], f"rampart ID backup -> python: {err.strip()}")

    # Threema Safe keys: scrypt(password, ID, 65536, 8, 1, 64).
    mk = hashlib.scrypt(password.encode(), salt=b"ECHOECHO", n=65536, r=8, p=1, dklen=64, maxmem=256 << 20)
    rc, out, err = run(["threema", "safe", "derive", "--id", "ECHOECHO", "--password-file", pw_path])
    check(rc == 0 and out.decode().split() == [mk[:32].hex(), mk[32:].hex()], f"safe derive vs hashlib.scrypt: {err.strip()}")
    doc = {"info": {"version": 1, "device": "python"}, "user": {"privatekey": base64.b64encode(secret).decode(), "nickname": "Py"},
           "contacts": [{"identity": "00000BOB", "verification": 1}], "settings": {"syncContacts": True}}
    js = json.dumps(doc, separators=(",", ":")).encode()
    # Python writes blobs (gzip at several levels, and plain JSON); rampart reads them.
    for level in [0, 6, 9, None]:
        inner = js if level is None else gzip.compress(js, compresslevel=level)
        nonce = os.urandom(24)
        blob = nonce + libnacl.crypto_secretbox(inner, nonce, mk[32:])
        rc, out, err = run(["threema", "safe", "decrypt", "--key", mk[32:].hex()], blob)
        check(rc == 0 and json.loads(out) == doc, f"python Safe blob (gzip level {level}) -> rampart decrypt: {err.strip()}")
        t = bytearray(blob)
        t[30] ^= 1
        rc, out, _ = run(["threema", "safe", "decrypt", "--key", mk[32:].hex()], bytes(t))
        check(rc == 1 and out == b"", "tampered Safe blob refused")
    # rampart writes one; Python reads it (level-0 gzip inside).
    rc, blob, err = run(["threema", "safe", "encrypt", "--key", mk[32:].hex()], js)
    inner = libnacl.crypto_secretbox_open(blob[24:], blob[:24], mk[32:])
    check(rc == 0 and inner[:2] == b"\x1f\x8b" and json.loads(gzip.decompress(inner)) == doc, f"rampart Safe blob -> python: {err.strip()}")


if __name__ == "__main__":
    sys.exit(0 if asyncio.run(main()) else 1)
