#!/usr/bin/env python3
"""Writes Rampart's own vector files (Vectors/*.json).

Two kinds of file come out of this script:

* Transcribed published KATs (FIPS 180 examples, RFC 4231, RFC 6070, RFC 7914, RFC 7693, the BLAKE2
  keyed KATs). The expected values are literals below, copied from the publications; the script
  recomputes each one with Python's hashlib/hmac and stops if any literal disagrees.
* Cross-implementation vectors (files named generated_*.json): inputs from a seeded PRNG, outputs
  from CPython's hashlib and hmac (OpenSSL for SHA-1/SHA-2/HMAC/PBKDF2/scrypt, the BLAKE2 reference
  code for BLAKE2b). They cover odd lengths, block boundaries and every BLAKE2b parameter combination.

Run from the project root:  python3 Vectors/generate.py   (needs only the Python standard library).
The BLAKE2 keyed KAT file is built from blake2b-kat.txt of the BLAKE2 reference repository when
given as an argument: python3 Vectors/generate.py path/to/blake2b-kat.txt
"""
import hashlib, hmac, json, os, random, sys

OUT = os.path.dirname(os.path.abspath(__file__))


def write(name, kind, source, cases):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump({"kind": kind, "source": source, "cases": cases}, f, indent=1)
        f.write("\n")
    print(f"wrote {name}: {len(cases)} cases")


def h(b):
    return b.hex()


# ---------------------------------------------------------------- FIPS 180 examples (transcribed)
A448 = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
A896 = (b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
        b"mnopqrstnopqrstu")
fips = [
    ("sha1", b"abc", None, "a9993e364706816aba3e25717850c26c9cd0d89d"),
    ("sha1", A448, None, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
    ("sha1", b"a", 1000000, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"),
    ("sha256", b"abc", None, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ("sha256", A448, None, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ("sha256", b"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
    ("sha512", b"abc", None, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                              "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
    ("sha512", A896, None, "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
                            "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"),
    ("sha512", b"a", 1000000, "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
                               "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b"),
]
cases = []
for i, (alg, msg, times, want) in enumerate(fips):
    full = msg * (times or 1)
    assert hashlib.new(alg, full).hexdigest() == want, (alg, msg[:8])
    c = {"id": f"{alg}-{i}", "algorithm": alg}
    if times:
        c.update({"repeat": h(msg), "times": times})
    else:
        c["msg"] = h(msg)
    c["digest"] = want
    cases.append(c)
write("fips180_sha_kat.json", "hash", "FIPS 180-2 Appendix examples (SHA-1, SHA-256, SHA-512), incl. one million 'a'", cases)

# ---------------------------------------------------------------- RFC 4231 (HMAC-SHA-256/512)
rfc4231 = [
    (b"\x0b" * 20, b"Hi There", None),
    (b"Jefe", b"what do ya want for nothing?", None),
    (b"\xaa" * 20, b"\xdd" * 50, None),
    (bytes(range(1, 26)), b"\xcd" * 50, None),
    (b"\x0c" * 20, b"Test With Truncation", 16),
    (b"\xaa" * 131, b"Test Using Larger Than Block-Size Key - Hash Key First", None),
    (b"\xaa" * 131, b"This is a test using a larger than block-size key and a larger than block-size data. The key needs "
                    b"to be hashed before being used by the HMAC algorithm.", None),
]
# Published values for SHA-256 (RFC 4231 section 4), checked against CPython's hmac below.
rfc4231_sha256 = [
    "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
    "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
    "a3b6167473100ee06e0c796c2955552b",
    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
    "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
]
cases = []
for i, (key, msg, trunc) in enumerate(rfc4231):
    for alg in ("sha256", "sha512"):
        mac = hmac.new(key, msg, alg).hexdigest()
        if trunc:
            mac = mac[: 2 * trunc]
        if alg == "sha256":
            assert mac == rfc4231_sha256[i], i
        cases.append({"id": f"tc{i + 1}-{alg}", "algorithm": alg, "key": h(key), "msg": h(msg), "mac": mac})
write("rfc4231_hmac.json", "hmac", "RFC 4231 test cases 1-7 (HMAC-SHA-256 and HMAC-SHA-512; tc5 truncated to 128 bits)", cases)

# ---------------------------------------------------------------- RFC 6070 / RFC 7914 PBKDF2 (transcribed)
pb = [
    ("sha1", b"password", b"salt", 1, "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
    ("sha1", b"password", b"salt", 2, "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
    ("sha1", b"password", b"salt", 4096, "4b007901b765489abead49d926f721d065a429c1"),
    ("sha1", b"password", b"salt", 16777216, "eefe3d61cd4da4e4e9945b3d6ba2158c2634e984"),
    ("sha1", b"passwordPASSWORDpassword", b"saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096,
     "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038"),
    ("sha1", b"pass\0word", b"sa\0lt", 4096, "56fa6aa75548099dcc37d7f03425e0c3"),
    ("sha256", b"passwd", b"salt", 1, "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
                                      "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"),
    ("sha256", b"Password", b"NaCl", 80000, "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56"
                                            "a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"),
]
cases = []
for i, (alg, pw, salt, it, want) in enumerate(pb):
    if it <= 100000:
        assert hashlib.pbkdf2_hmac(alg, pw, salt, it, len(want) // 2).hex() == want, i
    c = {"id": ("rfc6070-" if alg == "sha1" else "rfc7914-") + str(i), "prf": alg, "password": h(pw), "salt": h(salt),
         "iterations": it, "dk": want}
    if it > 100000:
        c["heavy"] = True
    cases.append(c)
write("rfc6070_rfc7914_pbkdf2.json", "pbkdf2", "RFC 6070 (PBKDF2-HMAC-SHA1) and RFC 7914 section 11 (PBKDF2-HMAC-SHA256)", cases)

# ---------------------------------------------------------------- RFC 7914 scrypt (transcribed)
sc = [
    (b"", b"", 16, 1, 1, "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
                         "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"),
    (b"password", b"NaCl", 1024, 8, 16, "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
                                        "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"),
    (b"pleaseletmein", b"SodiumChloride", 16384, 8, 1, "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2"
                                                       "d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"),
    (b"pleaseletmein", b"SodiumChloride", 1048576, 8, 1, "2101cb9b6a511aaeaddbbe09cf70f881ec568d574a2ffd4dabe5ee9820adaa47"
                                                         "8e56fd8f4ba5d09ffa1c6d927c40f4c337304049e8a952fbcbf45c6fa77a41a4"),
]
cases = []
for i, (pw, salt, n, r, p, want) in enumerate(sc):
    if n * r <= 1024 * 16:
        assert hashlib.scrypt(pw, salt=salt, n=n, r=r, p=p, maxmem=1 << 30, dklen=64).hex() == want, i
    c = {"id": f"rfc7914-{i + 1}", "password": h(pw), "salt": h(salt), "n": n, "r": r, "p": p, "dk": want}
    if n * r > 16384 * 8:
        c["heavy"] = True
    cases.append(c)
write("rfc7914_scrypt.json", "scrypt", "RFC 7914 section 12 (scrypt); the N = 2^20 case (1 GiB) is marked heavy", cases)

# ---------------------------------------------------------------- RFC 7693 and BLAKE2 keyed KATs
cases = [{"id": "rfc7693-abc", "msg": h(b"abc"), "outlen": 64, "key": "",
          "digest": "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
                    "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"}]
assert hashlib.blake2b(b"abc").hexdigest() == cases[0]["digest"]
if len(sys.argv) > 1:
    text = open(sys.argv[1]).read().split("\n\n")
    for block in text:
        fields = dict(line.split(":\t", 1) if ":\t" in line else (line.rstrip(":"), "") for line in block.strip().split("\n") if line)
        if "hash" not in fields:
            continue
        msg, key, want = bytes.fromhex(fields.get("in", "")), bytes.fromhex(fields["key"]), fields["hash"]
        assert hashlib.blake2b(msg, key=key).hexdigest() == want
        cases.append({"id": f"kat-keyed-{len(msg)}", "msg": h(msg), "outlen": 64, "key": h(key), "digest": want})
    write("blake2b_kat.json", "blake2b",
          "RFC 7693 Appendix A ('abc') and the keyed KATs of the BLAKE2 reference repository (testvectors/blake2b-kat.txt, CC0)",
          cases)
else:
    print("blake2b_kat.json not rewritten (give blake2b-kat.txt as an argument)")

# ---------------------------------------------------------------- generated cross-implementation vectors
rng = random.Random(20261122)


def rb(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


lengths = sorted(set(list(range(0, 20)) + [31, 55, 56, 57, 63, 64, 65, 111, 112, 113, 119, 127, 128, 129, 191, 255, 256, 257,
                                             511, 1000, 1023, 1025, 4095, 4097]))
cases = []
for alg in ("sha1", "sha256", "sha512"):
    for n in lengths:
        m = rb(n)
        cases.append({"id": f"{alg}-{n}", "algorithm": alg, "msg": h(m), "digest": hashlib.new(alg, m).hexdigest()})
write("generated_sha.json", "hash", "generated by Vectors/generate.py: CPython hashlib (OpenSSL), seeded random messages", cases)

cases = []
for alg in ("sha1", "sha256", "sha512"):
    for kl in (0, 1, 16, 20, 32, 63, 64, 65, 127, 128, 129, 200):
        for n in (0, 1, 63, 64, 65, 300):
            k, m = rb(kl), rb(n)
            cases.append({"id": f"{alg}-k{kl}-m{n}", "algorithm": alg, "key": h(k), "msg": h(m),
                          "mac": hmac.new(k, m, alg).hexdigest()})
write("generated_hmac.json", "hmac", "generated by Vectors/generate.py: CPython hmac (OpenSSL), seeded random keys and messages", cases)

cases = []
for alg in ("sha1", "sha256", "sha512"):
    for (pl, sl, it, dl) in ((0, 0, 1, 1), (1, 1, 1, 20), (8, 16, 2, 32), (65, 8, 3, 64), (129, 33, 10, 65),
                             (16, 16, 1000, 100), (200, 64, 5, 17)):
        pw, salt = rb(pl), rb(sl)
        cases.append({"id": f"{alg}-p{pl}-s{sl}-c{it}-l{dl}", "prf": alg, "password": h(pw), "salt": h(salt),
                      "iterations": it, "dk": hashlib.pbkdf2_hmac(alg, pw, salt, it, dl).hex()})
write("generated_pbkdf2.json", "pbkdf2", "generated by Vectors/generate.py: CPython hashlib.pbkdf2_hmac (OpenSSL)", cases)

cases = []
for outlen in (1, 2, 16, 20, 31, 32, 33, 48, 63, 64):
    for kl in (0, 1, 32, 63, 64):
        for use_salt in (False, True):
            for use_pers in (False, True):
                for n in (0, 1, 127, 128, 129, 256, 300):
                    key, m = rb(kl), rb(n)
                    salt = rb(16) if use_salt else None
                    pers = rb(16) if use_pers else None
                    d = hashlib.blake2b(m, digest_size=outlen, key=key, salt=salt or b"", person=pers or b"").hexdigest()
                    c = {"id": f"o{outlen}-k{kl}-s{int(use_salt)}-p{int(use_pers)}-m{n}", "msg": h(m), "outlen": outlen,
                         "key": h(key), "digest": d}
                    if salt:
                        c["salt"] = h(salt)
                    if pers:
                        c["personal"] = h(pers)
                    cases.append(c)
write("generated_blake2b.json", "blake2b",
      "generated by Vectors/generate.py: CPython hashlib.blake2b (BLAKE2 reference code); all output/key/salt/personal combinations",
      cases)

cases = []
for (pl, sl, n, r, p, dl) in ((0, 0, 2, 1, 1, 1), (3, 5, 4, 1, 2, 31), (8, 16, 16, 2, 1, 33), (13, 7, 64, 3, 2, 65),
                              (32, 32, 256, 1, 3, 64), (1, 1, 1024, 2, 1, 100), (20, 20, 8, 16, 1, 32)):
    pw, salt = rb(pl), rb(sl)
    cases.append({"id": f"n{n}-r{r}-p{p}-l{dl}", "password": h(pw), "salt": h(salt), "n": n, "r": r, "p": p,
                  "dk": hashlib.scrypt(pw, salt=salt, n=n, r=r, p=p, maxmem=1 << 30, dklen=dl).hex()})
write("generated_scrypt.json", "scrypt", "generated by Vectors/generate.py: CPython hashlib.scrypt (OpenSSL)", cases)
