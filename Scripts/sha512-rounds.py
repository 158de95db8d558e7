#!/usr/bin/env python3
"""Cycles per SHA-512 round for hand-written x86-64 instruction sequences (BMI1/BMI2).

A measurement tool for the comment on `round` in Sources/RampartAccelAVX2/SHA512AVX2.swift, not a
test: it takes LLVM out of the picture so that the instruction stream alone can be compared. Each
sequence is sixteen rounds with the eight working variables rotating through eight registers and W+K
read from a 16-word table in L1 (no message schedule); the loop runs it many times and the time is
calibrated against a chain of dependent `add`s (one cycle each), so the figures are core cycles.

    python3 Scripts/sha512-rounds.py          # needs cc (gcc or clang) and an x86-64 CPU with BMI2

Sequences: `openssl` (the BMI2 round of OpenSSL's sha512-x86_64.pl: Maj as b ^ ((a ^ b) & (b ^ c))
with b ^ c carried, Σ0 added in the next round), `rampart` (the committed Swift round as LLVM emits
it, without the spilled table-pointer reload), `rampart-maj` (the same with OpenSSL's Maj) and
`four-chain` (new e as ((d + h + W+K) + Ch) + Σ1, new a from new e − d: four operations from e to e).
"""
import os
import subprocess
import sys
import tempfile

V = ["%rax", "%rbx", "%rcx", "%rdx", "%r8", "%r9", "%r10", "%r11"]  # a..h at the start
T0, T1, T2, T3, T4 = "%r12", "%r13", "%r15", "%rsi", "%rdi"
TABLE = "%r14"


def rotate(v):
    a, b, c, d, e, f, g, h = v
    return [h, a, b, c, d, e, f, g]


def openssl():
    out, v, x2, x3 = [], V[:], T2, T3
    for i in range(16):
        a, b, c, d, e, f, g, h = v
        out += [f"add {8 * i}({TABLE}),{h}", f"and {e},{T4}", f"rorx $41,{e},{T0}", f"rorx $18,{e},{x2}",
                f"lea ({a},{T1}),{a}", f"lea ({h},{T4}),{h}", f"andn {g},{e},{T4}", f"xor {x2},{T0}",
                f"rorx $14,{e},{T1}", f"lea ({h},{T4}),{h}", f"xor {T1},{T0}", f"mov {a},{x2}",
                f"rorx $39,{a},{T4}", f"lea ({h},{T0}),{h}", f"xor {b},{x2}", f"rorx $34,{a},{T1}",
                f"rorx $28,{a},{T0}", f"lea ({d},{h}),{d}", f"and {x2},{x3}", f"xor {T4},{T1}",
                f"xor {b},{x3}", f"xor {T0},{T1}", f"lea ({h},{x3}),{h}", f"mov {e},{T4}"]
        x2, x3 = x3, x2
        v = rotate(v)
    return out


def sigma(x, rotations):
    r0, r1, r2 = rotations
    return [f"rorx ${r0},{x},{T0}", f"rorx ${r1},{x},{T1}", f"xor {T0},{T1}", f"rorx ${r2},{x},{T0}",
            f"xor {T1},{T0}"]


def rampart(openssl_maj):
    out, v, bc, ab = [], V[:], T3, T4
    for i in range(16):
        a, b, c, d, e, f, g, h = v
        # t1 = h + W+K + (e & f) + (~e & g) + Σ1(e) in T2
        out += sigma(e, (14, 18, 41))
        out += [f"add {8 * i}({TABLE}),{h}", f"mov {e},{T1}", f"and {f},{T1}", f"add {h},{T1}",
                f"andn {g},{e},{T2}", f"add {T1},{T2}", f"add {T0},{T2}"]
        out += sigma(a, (28, 34, 39))
        if openssl_maj:
            out += [f"mov {a},{ab}", f"xor {b},{ab}", f"and {ab},{bc}", f"xor {b},{bc}",
                    f"lea ({T2},{bc}),{h}", f"add {T0},{h}", f"add {T2},{d}"]
            bc, ab = ab, bc
        else:
            out += [f"mov {b},{T1}", f"xor {c},{T1}", f"and {a},{T1}", f"mov {b},{h}", f"and {c},{h}",
                    f"add {T1},{h}", f"add {T0},{h}", f"add {T2},{d}", f"add {T2},{h}"]
        v = rotate(v)
    return out


def four_chain():
    out, v = [], V[:]
    for i in range(16):
        a, b, c, d, e, f, g, h = v
        out += [f"add {8 * i}({TABLE}),{h}", f"mov {d},{T3}", f"add {h},{d}"]
        out += sigma(e, (14, 18, 41))
        out += [f"mov {e},{T1}", f"and {f},{T1}", f"add {T1},{d}", f"andn {g},{e},{T2}", f"add {T2},{d}",
                f"add {T0},{d}"]
        out += sigma(a, (28, 34, 39))
        out += [f"mov {b},{T1}", f"xor {c},{T1}", f"and {a},{T1}", f"mov {b},{h}", f"and {c},{h}",
                f"add {T1},{h}", f"add {T0},{h}", f"sub {T3},{h}", f"add {d},{h}"]
        v = rotate(v)
    return out


CLOBBERS = '"rax","rbx","rcx","rdx","rsi","rdi","r8","r9","r10","r11","r12","r13","r14","r15","memory"'


def c_source(sequences):
    lines = ["#include <stdio.h>", "#include <stdint.h>", "#include <x86intrin.h>", "#define N 5000000",
             "int main(void) {",
             "  static uint64_t table[16];",
             "  for (int i = 0; i < 16; i++) table[i] = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);",
             "  double add = 1e30;"]
    chain = "\\n ".join(["add %%rax,%%rax"] * 64)
    lines.append("  for (int r = 0; r < 3; r++) { uint64_t t0 = __rdtsc();"
                 f' for (long i = 0; i < N; i++) asm volatile("{chain}" ::: "rax");'
                 " double t = (double)(__rdtsc() - t0) / N / 64; if (t < add) add = t; }")
    for name, seq in sequences:
        body = "\\n ".join(s.replace("%", "%%") for s in seq)
        lines.append(f"  {{ double best = 1e30; for (int r = 0; r < 3; r++) {{ uint64_t t0 = __rdtsc();"
                     f' for (long i = 0; i < N; i++) asm volatile("mov %0,%%r14\\n {body}" :: "r"(table) : {CLOBBERS});'
                     f" double t = (double)(__rdtsc() - t0) / N / 16 / add; if (t < best) best = t; }}"
                     f' printf("%-12s %5.2f cycles a round, {len(seq) // 16} instructions a round\\n", "{name}", best); }}')
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def main():
    sequences = [("openssl", openssl()), ("rampart", rampart(False)), ("rampart-maj", rampart(True)),
                 ("four-chain", four_chain())]
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "rounds.c"), os.path.join(tmp, "rounds")
        with open(src, "w") as f:
            f.write(c_source(sequences))
        subprocess.run([cc, "-O2", "-mbmi", "-mbmi2", src, "-o", exe], check=True)
        sys.exit(subprocess.run([exe]).returncode)


if __name__ == "__main__":
    main()
