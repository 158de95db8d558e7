#!/usr/bin/env python3
"""Renders the AVX-512 IFMA almost-Montgomery multiplications (radix 2^52) as straight-line Swift:

  Sources/RampartAccelIFMA/MontgomeryIFMA.generated.swift

  amm20    one product of 20-digit numbers (1024-bit moduli: RSA-2048's CRT primes)
  amm20x2  two independent 20-digit products interleaved (both CRT halves of one RSA operation)
  amm40    one product of 40-digit numbers (2048-bit moduli: Diffie-Hellman, modexp-2048)
  select20, select20x2, select40   the constant-time window-table reads of the same sizes

Each accumulator is a named 256-bit register variable (r0, r1, ...), so the accumulators stay in
registers for the whole product: a loop over an array of vectors would leave them in memory. The
helpers (madd52lo/hi, shr1, normalise) are in MontgomeryIFMA.swift; the algorithm is described there.

Usage:
  python3 Scripts/gen_montgomery_ifma.py              rewrite the generated file in place
  python3 Scripts/gen_montgomery_ifma.py --stdout     print it instead (Scripts/check-generated.sh)
Standard library only.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
PATH = "Sources/RampartAccelIFMA/MontgomeryIFMA.generated.swift"
SCRIPT = "Scripts/gen_montgomery_ifma.py"


def body(tag, vectors, a, b, m, k0, indent):
    """One iteration of the product loop for one operand set; `tag` suffixes every name."""
    p = " " * indent
    r = [f"r{tag}{k}" for k in range(vectors)]
    out = []
    out.append(f"{p}let bi{tag} = {b}[i]")
    out.append(f"{p}// Digit 0 exactly, in scalar registers: y makes it divisible by 2^52.")
    out.append(f"{p}var t{tag} = UInt128(acc{tag}) &+ UInt128(a0{tag}) &* UInt128(bi{tag})")
    out.append(f"{p}let y{tag} = (UInt64(truncatingIfNeeded: t{tag}) &* {k0}) & mask52")
    out.append(f"{p}t{tag} = t{tag} &+ UInt128(m0{tag}) &* UInt128(y{tag})")
    out.append(f"{p}acc{tag} = UInt64(truncatingIfNeeded: t{tag} >> 52)")
    out.append(f"{p}let vb{tag} = Y(repeating: bi{tag}), vy{tag} = Y(repeating: y{tag})")
    out.append(f"{p}// Low halves of a·b_i and m·y at their digits, then one digit down.")
    out.append(p + "; ".join(f"{r[k]} = madd52lo({r[k]}, ld({a}, {k}), vb{tag})" for k in range(vectors)))
    out.append(p + "; ".join(f"{r[k]} = madd52lo({r[k]}, ld({m}, {k}), vy{tag})" for k in range(vectors)))
    shifts = [f"{r[k]} = shr1({r[k]}, {r[k + 1]})" for k in range(vectors - 1)] + [f"{r[-1]} = shr1({r[-1]}, zero)"]
    out.append(p + "; ".join(shifts))
    out.append(f"{p}acc{tag} = acc{tag} &+ {r[0]}[0]")
    out.append(f"{p}// High halves, one digit up from their products: after the shift, at the same lanes.")
    out.append(p + "; ".join(f"{r[k]} = madd52hi({r[k]}, ld({a}, {k}), vb{tag})" for k in range(vectors)))
    out.append(p + "; ".join(f"{r[k]} = madd52hi({r[k]}, ld({m}, {k}), vy{tag})" for k in range(vectors)))
    return out


def prologue(tag, vectors, a, m, indent):
    p = " " * indent
    regs = ", ".join(f"r{tag}{k} = zero" for k in range(vectors))
    return [f"{p}let a0{tag} = {a}[0], m0{tag} = {m}[0]",
            f"{p}var acc{tag}: UInt64 = 0",
            f"{p}var {regs}"]


def epilogue(tag, vectors, r, indent):
    p = " " * indent
    regs = [f"r{tag}{k}" for k in range(vectors)]
    return [f"{p}r{tag}0[0] = acc{tag}",
            f"{p}normalise{vectors}({r}, " + ", ".join(regs) + ")"]


def single(digits):
    v = digits // 4
    lines = [
        f"/// `r = a · b · 2^−{52 * digits} mod m` up to one multiple of m (almost-Montgomery): r < 2m for a, b < 2m",
        f"/// and m < 2^{52 * digits - 2}, every digit of the result below 2^52. {digits} digits of 52 bits per number;",
        f"/// `k0 = −m⁻¹ mod 2^52`. `r` may alias `a` or `b` (it is written after the last read).",
        "@inline(never)",
        f"func amm{digits}(_ r: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,",
        f"{' ' * (len(f'func amm{digits}('))}_ m: UnsafePointer<UInt64>, _ k0: UInt64) {{",
        "    let zero = Y()",
    ]
    lines += prologue("", v, "a", "m", 4)
    lines.append(f"    for i in 0..<{digits} {{")
    lines += body("", v, "a", "b", "m", "k0", 8)
    lines.append("    }")
    lines += epilogue("", v, "r", 4)
    lines.append("}")
    return lines


def pair(digits):
    v = digits // 4
    lines = [
        f"/// Two independent ``amm{digits}(_:_:_:_:_:)`` products in one loop: each one's scalar chain (digit 0,",
        "/// y, the broadcast, the shift) is a long dependency, and two of them interleave in the schedule.",
        "@inline(never)",
        f"func amm{digits}x2(_ r1: UnsafeMutablePointer<UInt64>, _ a1: UnsafePointer<UInt64>, _ b1: UnsafePointer<UInt64>,",
        f"{' ' * len(f'func amm{digits}x2(')}_ m1: UnsafePointer<UInt64>, _ k01: UInt64,",
        f"{' ' * len(f'func amm{digits}x2(')}_ r2: UnsafeMutablePointer<UInt64>, _ a2: UnsafePointer<UInt64>, _ b2: UnsafePointer<UInt64>,",
        f"{' ' * len(f'func amm{digits}x2(')}_ m2: UnsafePointer<UInt64>, _ k02: UInt64) {{",
        "    let zero = Y()",
    ]
    lines += prologue("1", v, "a1", "m1", 4)
    lines += prologue("2", v, "a2", "m2", 4)
    lines.append(f"    for i in 0..<{digits} {{")
    lines += body("1", v, "a1", "b1", "m1", "k01", 8)
    lines += body("2", v, "a2", "b2", "m2", "k02", 8)
    lines.append("    }")
    lines += epilogue("1", v, "r1", 4)
    lines += epilogue("2", v, "r2", 4)
    lines.append("}")
    return lines


def normalise(vectors):
    regs = [f"r{k}" for k in range(vectors)]
    lines = [
        f"/// Stores {4 * vectors} accumulator lanes (each below 2^63) at `r` as digits below 2^52: one carry step on",
        "/// every lane at once, then the remaining single-bit carries resolved together from two bit masks",
        "/// (lanes above 2^52 − 1 generate a carry, lanes equal to it pass one on) as one integer addition.",
        "/// No branch: the masks come from vector compares.",
        "@inline(__always)",
        f"func normalise{vectors}(_ r: UnsafeMutablePointer<UInt64>, " + ", ".join(f"_ {x}: Y" for x in regs) + ") {",
        "    let mask = Y(repeating: mask52)",
        "    let " + ", ".join(f"c{k} = {regs[k]} &>> 52" for k in range(vectors)),
        f"    let s0 = ({regs[0]} & mask) &+ up(Y(), c0)",
    ]
    for k in range(1, vectors):
        lines.append(f"    let s{k} = ({regs[k]} & mask) &+ up(c{k - 1}, c{k})")
    lines.append("    let g = " + " | ".join(f"aboveBits(s{k}, mask) << {4 * k}" for k in range(vectors)))
    lines.append("    let p = " + " | ".join(f"equalBits(s{k}, mask) << {4 * k}" for k in range(vectors)))
    lines.append("    let carries = ((g << 1) &+ p) ^ p")
    for k in range(vectors):
        lines.append(f"    st(r, {k}, (s{k} &+ laneBits(carries >> {4 * k})) & mask)")
    lines.append("}")
    return lines


def select(vectors, halves):
    """Constant-time table reads for one operand (or two: both CRT halves in one pass)."""
    digits = 4 * vectors
    name = f"select{digits}" + ("x2" if halves == 2 else "")
    tags = ["1", "2"] if halves == 2 else [""]
    params = ", ".join(f"_ out{t}: UnsafeMutablePointer<UInt64>, _ table{t}: UnsafePointer<UInt64>, _ index{t}: Int" for t in tags)
    lines = [
        f"/// `out = table[index]` ({digits} digits per entry, `count` entries){' for two tables at once' if halves == 2 else ''}, reading",
        "/// every entry: each entry's mask passes a value barrier, so the compiler cannot turn the selection",
        "/// into a branch or a load of one entry; the accumulators stay in registers.",
        "@inline(never)",
        f"func {name}({params}, _ count: Int) {{",
    ]
    for t in tags:
        lines.append("    var " + ", ".join(f"s{t}{k} = Y()" for k in range(vectors)))
    lines.append("    for k in 0..<count {")
    for t in tags:
        lines.append(f"        let mask{t} = Y(repeating: entryMask(k, index{t}))")
        lines.append(f"        let e{t} = table{t} + k * {digits}")
        for k in range(0, vectors, 5):
            lines.append("        " + "; ".join(f"s{t}{j} |= ld(e{t}, {j}) & mask{t}" for j in range(k, min(k + 5, vectors))))
    lines.append("    }")
    for t in tags:
        for k in range(vectors):
            lines.append(f"    st(out{t}, {k}, s{t}{k})")
    lines.append("}")
    return lines


def render():
    out = [
        f"// GENERATED by {SCRIPT}: do not edit by hand; edit the script and regenerate.",
        "//",
        "// AVX-512 IFMA almost-Montgomery multiplication in radix 2^52 (see MontgomeryIFMA.swift for the",
        "// algorithm, its bounds and the helpers). Conditional jumps: the loop counter only.",
        "",
        "import Swift",
        "",
        "#if arch(x86_64)",
        "",
    ]
    for chunk in (normalise(5), normalise(10), single(20), pair(20), single(40), select(5, 1), select(5, 2), select(10, 1)):
        out += chunk
        out.append("")
    out.append("#endif")
    return "\n".join(out) + "\n"


def main():
    text = render()
    if "--stdout" in sys.argv[1:]:
        sys.stdout.write(text)
        return
    with open(os.path.join(ROOT, PATH), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
