#!/usr/bin/env python3
"""Writes Vectors/hkdf.json: HKDF (RFC 5869) vectors for Rampart's `hkdf` runner.

* Wycheproof's hkdf_sha256_test.json (C2SP/wycheproof, Apache-2.0), its valid cases transcribed (the
  three invalid ones ask for 8161 bytes, over 255 * 32: Rampart traps on that, as CryptoKit does, and
  a test checks the trap). Its first cases are RFC 5869 Appendix A.1-A.3.
* RFC 5869 Appendix A.4-A.7 (HKDF-SHA-1), transcribed.
* Generated cases for SHA-1, SHA-256 and SHA-512 (seeded inputs, odd lengths, empty salt and info,
  outputs up to the 255-block limit), computed with Python's hmac module (OpenSSL), an
  implementation independent of Rampart.

Every case is recomputed here with the stdlib HKDF below; the script stops on any disagreement.
Run from the project root:  python3 Vectors/generate_hkdf.py [path/to/wycheproof/hkdf_sha256_test.json]
(default: the copy in Vectors/collected/wycheproof/).
"""
import hashlib, hmac, json, os, random, sys

OUT = os.path.dirname(os.path.abspath(__file__))
HASHES = {"sha1": hashlib.sha1, "sha256": hashlib.sha256, "sha512": hashlib.sha512}


def hkdf(name, ikm, salt, info, n):
    h = HASHES[name]
    prk = hmac.new(salt or b"\0" * h().digest_size, ikm, h).digest()
    out, t, i = b"", b"", 1
    while len(out) < n:
        t = hmac.new(prk, t + info + bytes([i]), h).digest()
        out += t
        i += 1
    return out[:n]


cases = []
def add(cid, name, ikm, salt, info, okm):
    assert hkdf(name, ikm, salt, info, len(okm)) == okm, cid
    cases.append({"id": cid, "hash": name, "ikm": ikm.hex(), "salt": salt.hex(), "info": info.hex(), "okm": okm.hex()})


w = json.load(open(sys.argv[1] if len(sys.argv) > 1 else os.path.join(OUT, "collected", "wycheproof", "hkdf_sha256_test.json")))
for g in w["testGroups"]:
    for t in g["tests"]:
        if t["result"] != "valid":
            continue
        add(f"wycheproof-{t['tcId']}", "sha256", bytes.fromhex(t["ikm"]), bytes.fromhex(t["salt"]),
            bytes.fromhex(t["info"]), bytes.fromhex(t["okm"]))

# RFC 5869 Appendix A.4-A.7 (SHA-1), transcribed.
add("rfc5869-A.4", "sha1", bytes.fromhex("0b" * 11), bytes.fromhex("000102030405060708090a0b0c"),
    bytes.fromhex("f0f1f2f3f4f5f6f7f8f9"),
    bytes.fromhex("085a01ea1b10f36933068b56efa5ad81a4f14b822f5b091568a9cdd4f155fda2c22e422478d305f3f896"))
add("rfc5869-A.5", "sha1", bytes(range(0x00, 0x50)), bytes(range(0x60, 0xb0)), bytes(range(0xb0, 0x100)),
    bytes.fromhex("0bd770a74d1160f7c9f12cd5912a06ebff6adcae899d92191fe4305673ba2ffe8fa3f1a4e5ad79f3f334b3b202b2173c"
                  "486ea37ce3d397ed034c7f9dfeb15c5e927336d0441f4c4300e2cff0d0900b52d3b4"))
add("rfc5869-A.6", "sha1", bytes.fromhex("0b" * 22), b"", b"",
    bytes.fromhex("0ac1af7002b3d761d1e55298da9d0506b9ae52057220a306e07b6b87e8df21d0ea00033de03984d34918"))
add("rfc5869-A.7", "sha1", bytes.fromhex("0c" * 22), b"", b"",
    bytes.fromhex("2c91117204d745f3500d636a62f64f0ab3bae548aa53d423b0d1f27ebba6f5e5673a081d70cce7acfc48"))

rng = random.Random(5869)
for name, size in (("sha1", 20), ("sha256", 32), ("sha512", 64)):
    for n in (0, 1, size - 1, size, size + 1, 2 * size + 7, 255 * size - 1, 255 * size):
        ikm = rng.randbytes(rng.randrange(0, 80))
        salt = rng.randbytes(rng.choice((0, 1, size, 129)))
        info = rng.randbytes(rng.choice((0, 3, 200)))
        add(f"generated-{name}-{n}", name, ikm, salt, info, hkdf(name, ikm, salt, info, n))

with open(os.path.join(OUT, "hkdf.json"), "w") as f:
    json.dump({"kind": "hkdf", "source": "Wycheproof hkdf_sha256_test.json (valid cases), RFC 5869 A.4-A.7, "
               "generated with Python hmac (Vectors/generate_hkdf.py)", "cases": cases}, f, indent=1)
    f.write("\n")
print(f"wrote hkdf.json: {len(cases)} cases")
