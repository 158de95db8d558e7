#!/usr/bin/env python3
"""Generates Vectors/bigint_*.json: modular exponentiation (Python's built-in pow), primality
(deterministic facts: published primes, Carmichael numbers, strong pseudoprimes; each primality
claim re-checked with `openssl prime` when the openssl CLI is installed) and pq factorisations.
Python standard library only."""
import json, random, shutil, subprocess, os

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(20261123)

def h(n): return format(n, "x")

# Modular exponentiation: odd and even moduli of many sizes, exponents 0 .. 4096 bits.
cases = []
for i in range(120):
    mbits = rng.choice([2, 8, 63, 64, 65, 127, 128, 129, 256, 512, 1023, 1024, 2048]) if i < 100 else rng.randint(2, 2048)
    m = rng.getrandbits(mbits) | (1 << (mbits - 1))
    if i % 5 != 4: m |= 1
    b = rng.getrandbits(mbits + rng.randint(0, 64))
    e = rng.getrandbits(rng.choice([0, 1, 17, 64, 256, 1024, mbits]) if mbits < 1024 else rng.choice([0, 17, 256]))
    cases.append({"id": f"modexp-{i}", "base": h(b), "exponent": h(e), "modulus": h(m), "result": h(pow(b, e, m))})
json.dump({"kind": "modexp", "source": "generated with Python's pow (independent of Rampart and OpenSSL)", "cases": cases},
          open(os.path.join(HERE, "bigint_modexp.json"), "w"), indent=1)

TG = int("C71CAEB9C6B1C9048E6C522F70F13F73980D40238E3E21C14934D037563D930F48198A0AA7C14058229493D22530F4DBFA336F6E0AC925139543AED44CCE7C3720FD51F69458705AC68CD4FE6B6B13ABDC9746512969328454F18FAF8C595F642477FE96BB2A941D5BCD1D4AC8CC49880708FA9B378E3C4F3A9060BEE67CF9A4A4A695811051907E162753B56B0F6B410DBA74D8A84B2A14B3144E0EF1284754FD17ED950D5965B4B9DD46582DB1178D169C6BC465B0D6FF9CA3928FEF5B9AE4E418FC15E83EBEA0F87FA9FF5EED70050DED2849F47BF959D956850CE929851F0D8115F635B105EE2E4E15D04B2454BF6F4FADF034B10403119CD8E3B92FCC5B", 16)
G14 = int("FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3BE39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA051015728E5A8AACAA68FFFFFFFFFFFFFFFF", 16)
prim = [
    ("telegram dh_prime", TG, True, True), ("telegram (p-1)/2", TG >> 1, True, False),
    ("RFC 3526 group 14", G14, True, True), ("RFC 3526 group 14 (p-1)/2", G14 >> 1, True, False),
    ("2^127-1", 2**127 - 1, True, False), ("2^255-19", 2**255 - 19, True, False),
    ("2^521-1 (prime, not safe)", 2**521 - 1, True, False), ("2^607-1", 2**607 - 1, True, False),
    ("P-256 prime", 2**256 - 2**224 + 2**192 + 2**96 - 1, True, False),
    ("telegram p + 2", TG + 2, False, False), ("2^2047", 2**2047, False, False),
    ("(2^127-1)(2^521-1)", (2**127 - 1) * (2**521 - 1), False, False), ("(2^255-19)^2", (2**255 - 19) ** 2, False, False),
]
for c in [561, 1105, 1729, 2465, 2821, 6601, 8911, 41041, 825265, 321197185, 5394826801, 232250619601, 9746347772161,
          0x32680B630D77C8A82BE8FD6880B42C88AA160F11403E48530EC01]:
    prim.append((f"Carmichael {c}", c, False, False))
for c in [2047, 3277, 4033, 4681, 8321, 15841, 29341, 42799, 49141, 52633, 3215031751, 3825123056546413051,
          318665857834031151167461, 3317044064679887385961981]:
    prim.append((f"strong pseudoprime to base 2: {c}", c, False, False))
cases = [{"id": name, "n": h(n), "prime": p, "safe": s} for name, n, p, s in prim]
if shutil.which("openssl"):
    for name, n, p, s in prim:
        out = subprocess.run(["openssl", "prime", "-hex", h(n)], capture_output=True, text=True).stdout
        assert out.strip().endswith("is prime") == p, name
        if s:
            out = subprocess.run(["openssl", "prime", "-hex", h(n >> 1)], capture_output=True, text=True).stdout
            assert out.strip().endswith("is prime"), name
json.dump({"kind": "primality", "source": "published primes (Telegram, RFC 3526, Mersenne, Curve25519, P-256), Carmichael numbers and strong pseudoprimes to base 2 (OEIS A002997, A001262, Jaeschke); re-checked with openssl prime",
           "cases": cases}, open(os.path.join(HERE, "bigint_primality.json"), "w"), indent=1)

def isprime(n):
    if n < 2: return False
    for p in [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]:
        if n % p == 0: return n == p
    d, s = n - 1, 0
    while d % 2 == 0: d //= 2; s += 1
    for a in [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]:
        x = pow(a, d, n)
        if x in (1, n - 1): continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1: break
        else: return False
    return True

def prime_near(x):
    x |= 1
    while not isprime(x): x += 2
    return x

pq_sample, p = 1468428376148703121, 0x3C2357CF  # Docs/MTProto.md §10.A: p = 3C 23 57 CF
assert pq_sample % p == 0
cases = []
cases.append({"id": "mtproto handshake sample", "pq": h(pq_sample), "p": h(p), "q": h(pq_sample // p)})
cases.append({"id": "mtproto old sample (gotd)", "pq": "17ed48941a08f981", "p": "494c553b", "q": "53911073"})
for i in range(30):
    a = prime_near(rng.randint(2**30, 2**31)); b = prime_near(rng.randint(2**31, 2**32))
    if (a * b).bit_length() > 64: continue
    cases.append({"id": f"semiprime-{i}", "pq": h(a * b), "p": h(min(a, b)), "q": h(max(a, b))})
for n in [2**61 - 1, 4294967291, 3 * 5 * 7, 1000003 * 1000033 * 101, 0x17ED48941A08F981 * 3]:
    cases.append({"id": f"reject-{h(n)}", "pq": h(n), "error": "prime" if isprime(n) else "moreThanTwoFactors"})
json.dump({"kind": "pq", "source": "MTProto handshake samples (Docs/MTProto.md §10.A, §9.3) and generated semiprimes (Python)", "cases": cases},
          open(os.path.join(HERE, "bigint_pq.json"), "w"), indent=1)
print("ok")
