#!/usr/bin/env python3
"""Writes Vectors/codecs/deflate.json: DEFLATE (RFC 1951), zlib (RFC 1950) and gzip (RFC 1952) streams
for RampartCodecs' decoders and its stored-block writers.

* `cases`: seeded data (text-like, random bytes, byte runs, a mix of the three) of sizes 0, 1, 2, 3,
  257, 1001, 20 000, 65 539 and 307 200 bytes (the largest ones with fewer settings, to keep the file small), compressed by Python's zlib module (the system zlib) at levels
  0, 1, 6 and 9 with the default, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE and Z_FIXED strategies, as raw
  DEFLATE, zlib and gzip in turn, some with small windows (windowBits 9 and 10). Each case gives the
  compressed bytes, the plain data's length and CRC-32, and the plain bytes themselves when short.
* `gzipHeaders`: gzip members whose headers use FTEXT, FEXTRA, FNAME, FCOMMENT and FHCRC, assembled
  here byte by byte around a zlib raw stream and checked with Python's gzip module.
* `storedWriter`: what libz.so.1 itself writes at level 0 for gzip (deflateInit2 windowBits 31),
  zlib (windowBits 15) and raw DEFLATE (windowBits -15), given the whole input and deflateBound bytes
  of output in one deflate(Z_FINISH) call (through ctypes), for the data whose byte i is (7i + 3) mod
  256: the output's length and CRC-32, and its bytes when short. Rampart's writers must produce exactly these bytes.

Every compressed case is decompressed again here with zlib and checked. Deterministic: fixed seeds, and
zlib's output depends only on its version (recorded in the file). Python standard library only.
Run from the project root:  python3 Vectors/generate_deflate.py
"""
import ctypes, ctypes.util, gzip, json, os, random, zlib

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "codecs", "deflate.json")
SHORT = 300  # plain or written bytes up to this length are stored in full

WORDS = ["threema", "safe", "backup", "identity", "nickname", "contact", "group", "message", "\"id\"",
         "\"publicKey\"", "true", "false", "null", "{", "}", "[", "]", ":", ",", "0", "1", "42", "1024",
         "the", "of", "and", "a", "to", "in", "is", "you", "that", "it", "he", "was", "for", "on", "are"]


def data(kind, n, seed):
    r = random.Random(seed)
    if kind == "text":
        out = bytearray()
        while len(out) < n:
            out += r.choice(WORDS).encode() + r.choice([b" ", b" ", b"\n", b""])
        return bytes(out[:n])
    if kind == "random":
        return bytes(r.getrandbits(8) for _ in range(n))
    if kind == "runs":
        out = bytearray()
        while len(out) < n:
            out += bytes([r.choice([0, 0, 0xFF, r.getrandbits(8)])]) * r.randint(1, 600)
        return bytes(out[:n])
    # mix: segments of the three kinds
    out = bytearray()
    i = 0
    while len(out) < n:
        out += data(["text", "random", "runs"][i % 3], r.randint(1, 5000), seed * 31 + i)
        i += 1
    return bytes(out[:n])


STRATEGIES = {"default": zlib.Z_DEFAULT_STRATEGY, "filtered": zlib.Z_FILTERED,
              "huffmanOnly": zlib.Z_HUFFMAN_ONLY, "rle": zlib.Z_RLE, "fixed": zlib.Z_FIXED}
FORMATS = {"raw": -15, "zlib": 15, "gzip": 31}
COMBOS = [(0, "default"), (1, "default"), (6, "default"), (9, "default"), (6, "fixed"),
          (6, "huffmanOnly"), (6, "rle"), (9, "filtered")]

cases = []
counter = 0


def add(kind, size, level, strategy, fmt, window=15, seed=None):
    global counter
    seed = seed if seed is not None else 1000 + len(cases)
    plain = data(kind, size, seed)
    wbits = {"raw": -window, "zlib": window, "gzip": 16 + window}[fmt]
    c = zlib.compressobj(level, zlib.DEFLATED, wbits, 8, STRATEGIES[strategy])
    comp = c.compress(plain) + c.flush()
    assert zlib.decompress(comp, wbits if fmt != "raw" else -15) == plain
    case = {"id": f"{fmt}-{kind}-{size}-l{level}-{strategy}" + (f"-w{window}" if window != 15 else ""),
            "format": fmt, "level": level, "strategy": strategy, "windowBits": window,
            "plainLength": size, "plainCRC32": zlib.crc32(plain), "compressed": comp.hex()}
    if size <= SHORT:
        case["plain"] = plain.hex()
    cases.append(case)
    counter += 1


fmts = list(FORMATS)
for size in [0, 1, 2, 3, 257, 1001]:
    for kind in ["text", "random", "runs", "mix"]:
        for level, strategy in COMBOS:
            add(kind, size, level, strategy, fmts[counter % 3])
for kind in ["text", "mix"]:
    for level, strategy in COMBOS:
        add(kind, 65_539, level, strategy, fmts[counter % 3])
add("random", 65_539, 6, "default", "gzip")
add("text", 307_200, 6, "default", "raw")
add("text", 307_200, 9, "default", "gzip")
for window in [9, 10]:
    for fmt in fmts:
        add("text", 20_000, 9, "default", fmt, window=window)

# gzip headers with the optional fields.
gzip_headers = []
for i, (flags, mtime, xfl, os_, extra, name, comment) in enumerate([
        (0x01, 0, 0, 3, None, None, None),
        (0x04, 1_700_000_000, 2, 0, b"AB\x04\x00rmpt", None, None),
        (0x08, 12345, 4, 255, None, b"backup.json", None),
        (0x10, 0, 0, 11, None, None, b"a comment"),
        (0x02, 0, 0, 3, None, None, None),
        (0x1F, 0x01020304, 4, 3, b"", b"n", b""),
        (0x1E, 7, 0, 7, b"\x00" * 300, b"x" * 200, b"c" * 50)]):
    plain = data("text", 500 + i * 37, 500 + i)
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    raw = c.compress(plain) + c.flush()
    h = bytearray(b"\x1f\x8b\x08" + bytes([flags]) + mtime.to_bytes(4, "little") + bytes([xfl, os_]))
    if flags & 4:
        h += len(extra).to_bytes(2, "little") + extra
    if flags & 8:
        h += name + b"\0"
    if flags & 16:
        h += comment + b"\0"
    if flags & 2:
        h += (zlib.crc32(h) & 0xFFFF).to_bytes(2, "little")
    member = bytes(h) + raw + zlib.crc32(plain).to_bytes(4, "little") + len(plain).to_bytes(4, "little")
    assert gzip.decompress(member) == plain
    entry = {"id": f"gzip-flags-{flags:02x}", "flags": flags, "mtime": mtime, "xfl": xfl, "os": os_,
             "plainLength": len(plain), "plainCRC32": zlib.crc32(plain), "member": member.hex()}
    if extra is not None:
        entry["extra"] = extra.hex()
    if name is not None:
        entry["name"] = name.hex()
    if comment is not None:
        entry["comment"] = comment.hex()
    gzip_headers.append(entry)

# The system zlib's own level-0 output, for the writers.
libz = ctypes.CDLL(ctypes.util.find_library("z") or "libz.so.1")


class ZStream(ctypes.Structure):
    _fields_ = [("next_in", ctypes.c_void_p), ("avail_in", ctypes.c_uint), ("total_in", ctypes.c_ulong),
                ("next_out", ctypes.c_void_p), ("avail_out", ctypes.c_uint), ("total_out", ctypes.c_ulong),
                ("msg", ctypes.c_char_p), ("state", ctypes.c_void_p), ("zalloc", ctypes.c_void_p),
                ("zfree", ctypes.c_void_p), ("opaque", ctypes.c_void_p), ("data_type", ctypes.c_int),
                ("adler", ctypes.c_ulong), ("reserved", ctypes.c_ulong)]


libz.zlibVersion.restype = ctypes.c_char_p
ZVERSION = libz.zlibVersion()


def zlib_level0(plain, wbits):
    s = ZStream()
    assert libz.deflateInit2_(ctypes.byref(s), 0, 8, wbits, 8, 0, ZVERSION, ctypes.sizeof(ZStream)) == 0
    ib = ctypes.create_string_buffer(plain, max(1, len(plain)))
    bound = libz.deflateBound(ctypes.byref(s), ctypes.c_ulong(len(plain)))
    ob = ctypes.create_string_buffer(bound)
    s.next_in, s.avail_in = ctypes.addressof(ib), len(plain)
    s.next_out, s.avail_out = ctypes.addressof(ob), bound
    assert libz.deflate(ctypes.byref(s), 4) == 1  # Z_FINISH -> Z_STREAM_END
    out = ob.raw[:s.total_out]
    libz.deflateEnd(ctypes.byref(s))
    return out


stored = []
for size in [0, 1, 5, 300, 65_534, 65_535, 65_536, 131_070, 131_071, 200_000]:
    plain = bytes((i * 7 + 3) & 0xFF for i in range(size))  # reproducible in the tests
    for fmt, wbits in FORMATS.items():
        out = zlib_level0(plain, wbits)
        assert zlib.decompress(out, wbits) == plain
        entry = {"id": f"stored-{fmt}-{size}", "format": fmt, "plainLength": size, "plainCRC32": zlib.crc32(plain),
                 "outputLength": len(out), "outputCRC32": zlib.crc32(out)}
        if len(out) <= SHORT:
            entry["output"] = out.hex()
        stored.append(entry)

doc = {
    "kind": "deflate",
    "source": "generated by Vectors/generate_deflate.py with Python's zlib module (zlib "
              + zlib.ZLIB_RUNTIME_VERSION + ") and, for storedWriter, libz.so.1 " + ZVERSION.decode()
              + " through ctypes; gzip header cases assembled by the script and checked with Python's gzip module",
    "licence": "ours (Apache-2.0)",
    "cases": cases,
    "gzipHeaders": gzip_headers,
    "storedWriter": stored,
}
os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, "w") as f:
    json.dump(doc, f, indent=0)
    f.write("\n")
print(OUT, len(cases), "cases,", len(gzip_headers), "gzip headers,", len(stored), "stored-writer cases,",
      os.path.getsize(OUT), "bytes")
