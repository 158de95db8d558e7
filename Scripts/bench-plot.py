#!/usr/bin/env python3
"""Draws the benchmark results of `rampart-bench --json FILE` as an SVG bar chart.

For every benchmark row (one operation at one size) that has a "rampart" result and an "openssl"
and/or "libsodium" result, the chart shows the speed ratio rampart / reference of the medians (MB/s
or ops/s; in both higher is faster, so a ratio above 1 means Rampart is faster). Bars start at the
bold parity line (1.0x) and run right when Rampart is faster, left when it is slower, on a
logarithmic axis (0.5x to 20x, widened to the 1-2-5 tick that covers the data, at most 0.1x to
100x; a ratio beyond that is drawn to the edge and its number says "off scale"). Rows are grouped
by family (sha256, aes256-gcm, threema, ...); OpenSSL and libsodium bars have their own colours.
Other implementations in the file (rampart-portable, openssl-vartime, ...) are not drawn.

With --markdown it also writes the benchmark page (Docs/Benchmarks.md): the run's date, machine and
commit, the chart, and the full table in the layout rampart-bench prints (every implementation in the
file, not only the charted ones). When that page exists, its section "## Notes on the rows" and all
that follows are kept: the notes are written by hand, the rest is rewritten.

Regenerate the chart and the page from one full run with:
  swift run -c release rampart-bench --json bench.json
  python3 Scripts/bench-plot.py bench.json Docs/images/benchmark.svg \
      --markdown Docs/Benchmarks.md --commit "$(git rev-parse --short HEAD)" --machine "2-core cloud VM, ..."

Usage: python3 Scripts/bench-plot.py RESULTS.json OUT.svg [--filter SUBSTRING ...]
                                     [--markdown PAGE [--commit HASH] [--machine TEXT]]
  --filter keeps only operations containing any of the substrings (commas also separate them);
           it applies to the chart and the table.
  --commit the commit the run was built from (default: the repository's HEAD).
  --machine a description of the machine, printed beside the CPU name the run recorded.
Exit status 2 (with a message) when RESULTS.json cannot be read or is not in the expected form.
Standard library only.
"""
import argparse
import json
import math
import os
import subprocess
import sys
from xml.sax.saxutils import escape

# Families whose names contain '-' and must stay whole; checked longest first.
FAMILIES = sorted(["aes256-ige", "aes256-cbc", "aes256-ctr", "aes256-gcm", "chacha20-poly1305",
                   "mtproto", "secret-chat", "threema"], key=len, reverse=True)
REFERENCES = [("openssl", "OpenSSL", "#2f6db5"), ("libsodium", "libsodium", "#e0801f")]
LO_CAP, HI_CAP = 0.1, 100.0          # the axis never goes beyond these; bars are clamped to it
TICKS = [m * 10.0 ** e for e in range(-1, 3) for m in (1, 2, 5)]   # 0.1, 0.2, 0.5, 1 ... 500

# Geometry (px). Labels are right-aligned at LABEL_X; the axis runs from AXIS_X0 to AXIS_X1.
WIDTH, LABEL_X, AXIS_X0, AXIS_X1 = 900, 262, 310, 840
BAR_H, BAR_GAP, ROW_PAD, GROUP_H, TOP = 11, 2, 7, 24, 112
FONT = 'font-family="Helvetica, Arial, sans-serif"'


def fail(message):
    print(f"bench-plot: {message}", file=sys.stderr)
    sys.exit(2)


def family(operation):
    for prefix in FAMILIES:
        if operation == prefix or operation.startswith(prefix + "-"):
            return prefix
    return operation.split("-", 1)[0]


def size_text(size):
    for unit, name in ((1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= unit:
            n = size / unit
            return f"{n:g} {name}" if n == int(n) else f"{n:.1f} {name}"
    return f"{size} B"


def ratio_text(r):
    return f"{r:.3f}x" if r < 0.1 else f"{r:.2f}x" if r < 10 else f"{r:.1f}x" if r < 100 else f"{r:.0f}x"


def load(path):
    """Returns (header dict, {(operation, size): {"unit": u, implementation: median}}) in file order."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        fail(f"cannot read {path}: {e}")
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        fail(f"{path}: expected an object with a \"results\" list")
    rows = {}
    for i, item in enumerate(data["results"]):
        try:
            op, size, impl = item["operation"], item["size"], item["implementation"]
            unit, median = item["unit"], item["median"]
            if not (isinstance(op, str) and isinstance(impl, str) and isinstance(unit, str)
                    and isinstance(size, int) and isinstance(median, (int, float))):
                raise TypeError("wrong field types")
        except KeyError as e:
            fail(f"{path}: results[{i}] has no {e} field")
        except TypeError as e:
            fail(f"{path}: results[{i}] is malformed ({e})")
        row = rows.setdefault((op, size), {"unit": unit, "order": [], "peaks": {}})
        if impl not in row:
            row[impl] = float(median)
            row["order"].append(impl)
            if isinstance(item.get("peakMemoryBytes"), int):
                row["peaks"][impl] = item["peakMemoryBytes"]
    machine = data.get("machine") if isinstance(data.get("machine"), dict) else {}
    return {"cpu": str(machine.get("cpu", "unknown CPU")), "date": str(data.get("date", "")),
            "features": [str(x) for x in machine.get("features", []) or []]}, rows


def comparisons(rows, filters):
    """Groups [(family, [(label, [(reference index, ratio)])])] in order of first appearance."""
    sizes_per_op = {}
    for op, size in rows:
        sizes_per_op.setdefault(op, set()).add(size)
    groups = {}
    for (op, size), row in rows.items():
        if filters and not any(s in op for s in filters):
            continue
        mine = row.get("rampart")
        bars = [(i, mine / row[key]) for i, (key, _, _) in enumerate(REFERENCES)
                if mine is not None and mine > 0 and row.get(key, 0) > 0]
        if not bars:
            continue
        # ops/s rows and size 0 get no size text, unless needed to tell two rows apart.
        show_size = size > 0 and (row["unit"] != "ops/s" or len(sizes_per_op[op]) > 1)
        label = f"{op} {size_text(size)}" if show_size else op
        groups.setdefault(family(op), []).append((label, bars))
    return list(groups.items())


def axis_range(groups):
    ratios = [r for _, rows in groups for _, bars in rows for _, r in bars] or [1.0]
    lo = max([t for t in TICKS if t <= min(0.5, min(ratios))] or [LO_CAP])
    hi = min([t for t in TICKS if t >= max(20.0, max(ratios))] or [HI_CAP])
    return max(lo, LO_CAP), min(hi, HI_CAP)


def render(header, groups):
    lo, hi = axis_range(groups)
    x = lambda r: AXIS_X0 + (math.log(r) - math.log(lo)) / (math.log(hi) - math.log(lo)) * (AXIS_X1 - AXIS_X0)
    body, y = [], TOP
    for name, rows in groups:
        y += GROUP_H
        body.append(f'<text x="16" y="{y - 7}" font-size="13" font-weight="bold" fill="#222">{escape(name)}</text>')
        body.append(f'<line x1="16" y1="{y - 2}" x2="{AXIS_X1}" y2="{y - 2}" stroke="#bbb" stroke-width="0.6"/>')
        for label, bars in rows:
            height = len(bars) * BAR_H + (len(bars) - 1) * BAR_GAP
            top = y + ROW_PAD / 2
            body.append(f'<text x="{LABEL_X}" y="{top + height / 2 + 4:.1f}" font-size="12" '
                        f'text-anchor="end" fill="#333">{escape(label)}</text>')
            for k, (ref, ratio) in enumerate(bars):
                by = top + k * (BAR_H + BAR_GAP)
                shown = min(max(ratio, lo), hi)            # clamp to the axis
                x1, x2 = sorted((x(1.0), x(shown)))
                body.append(f'<rect x="{x1:.1f}" y="{by:.1f}" width="{max(x2 - x1, 1):.1f}" height="{BAR_H}" '
                            f'fill="{REFERENCES[ref][2]}"><title>Rampart / {REFERENCES[ref][1]}: '
                            f'{ratio_text(ratio)}</title></rect>')
                ty = by + BAR_H - 2
                if shown != ratio:                         # off scale: write the number inside the bar
                    anchor, tx = ("end", x2 - 4) if ratio > 1 else ("start", x1 + 4)
                    body.append(f'<text x="{tx:.1f}" y="{ty:.1f}" font-size="10" font-weight="bold" fill="#fff" '
                                f'text-anchor="{anchor}">{ratio_text(ratio)} (off scale)</text>')
                else:                                      # number just past the end of the bar
                    anchor, tx = ("start", x2 + 4) if ratio >= 1 else ("end", x1 - 4)
                    body.append(f'<text x="{tx:.1f}" y="{ty:.1f}" font-size="10" fill="#333" '
                                f'text-anchor="{anchor}">{ratio_text(ratio)}</text>')
            y += height + ROW_PAD
    if not groups:
        y += GROUP_H
        body.append(f'<text x="{WIDTH / 2}" y="{y}" font-size="13" text-anchor="middle" '
                    f'fill="#666">no rows with Rampart and OpenSSL or libsodium results</text>')
    bottom, height = y + 6, y + 46
    # Gridlines and tick labels (top and bottom), then the parity line over the bars.
    grid = []
    for t in [t for t in TICKS if lo <= t <= hi] if groups else []:
        tx, text = x(t), f"{t:g}x"
        grid.append(f'<line x1="{tx:.1f}" y1="{TOP}" x2="{tx:.1f}" y2="{bottom}" stroke="#ddd" stroke-width="1"/>')
        for ty in (TOP - 6, bottom + 16):
            grid.append(f'<text x="{tx:.1f}" y="{ty}" font-size="11" text-anchor="middle" fill="#555">{text}</text>')
    px = x(1.0)
    parity = (f'<line x1="{px:.1f}" y1="{TOP - 2}" x2="{px:.1f}" y2="{bottom}" stroke="#000" stroke-width="2"/>'
              f'<text x="{px:.1f}" y="{bottom + 32}" font-size="11" font-weight="bold" text-anchor="middle">parity</text>'
              f'<text x="{px - 30:.1f}" y="{bottom + 32}" font-size="11" text-anchor="end" fill="#555">← Rampart slower</text>'
              f'<text x="{px + 30:.1f}" y="{bottom + 32}" font-size="11" fill="#555">Rampart faster →</text>') if groups else ""
    # Title, explanation and legend.
    title = f"Rampart vs OpenSSL and libsodium — {header['cpu']}, {header['date']}"
    note = "Speed ratio Rampart / reference (median throughput; higher = Rampart faster), log scale"
    if header["features"]:
        note += "; CPU features: " + ", ".join(header["features"])
    title_size = min(16.0, (WIDTH - 24) / (0.72 * len(title)))   # shrink a long CPU name to fit
    head = [f'<text x="{WIDTH / 2}" y="28" font-size="{title_size:.1f}" font-weight="bold" text-anchor="middle" '
            f'fill="#111">{escape(title)}</text>',
            f'<text x="{WIDTH / 2}" y="48" font-size="11" text-anchor="middle" fill="#555">{escape(note)}</text>']
    lx = WIDTH / 2 - 150
    for key, name, colour in REFERENCES:
        head.append(f'<rect x="{lx}" y="62" width="14" height="11" fill="{colour}"/>'
                    f'<text x="{lx + 20}" y="72" font-size="12" fill="#222">Rampart / {name}</text>')
        lx += 170
    return "\n".join([
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0f}" '
        f'viewBox="0 0 {WIDTH} {height:.0f}" {FONT}>',
        f'<rect x="0" y="0" width="{WIDTH}" height="{height:.0f}" fill="#fff"/>',
        *head, *grid, *body, parity, "</svg>", ""])


# The text table, as rampart-bench prints it (Benchmarks/main.swift and Benchmarks/Harness.swift).
TABLE_HEADER = ["operation", "size", "Rampart", "portable", "OpenSSL", "libsodium", "vs best ref", "other"]
STANDARD = ["rampart", "rampart-portable", "openssl", "libsodium"]
NOTES_HEADING = "## Notes on the rows"


def fmt(x, digits=1):
    """Rounds half away from zero to `digits` decimals, as the benchmark's fmt does."""
    m = 10 ** digits
    r = math.copysign(math.floor(abs(x) * m + 0.5) / m, x)
    return f"{r:.{digits}f}"


def cell(row, impl):
    if impl not in row:
        return "absent"
    median = row[impl]
    if row["unit"] == "MB/s":
        return fmt(median) + " MB/s"
    ms = 1000 / max(median, 1e-12)
    text = fmt(median, 2) + "/s (" + (fmt(ms, 1) + " ms)" if ms >= 1 else fmt(ms * 1000, 1) + " µs)")
    if impl in row["peaks"]:
        text += " " + fmt(row["peaks"][impl] / 1048576, 1) + " MiB"
    return text


def table_lines(rows, filters):
    table = [TABLE_HEADER]
    for (op, size), row in rows.items():
        if filters and not any(s in op for s in filters):
            continue
        mine = row.get("rampart")
        refs = [row[k] for k in ("openssl", "libsodium") if k in row]
        ratio = fmt(mine / max(refs), 2) + "x" if mine is not None and refs and max(refs) > 0 else "-"
        others = []
        for impl in row["order"]:
            if impl in STANDARD:
                continue
            text = impl + " " + cell(row, impl)
            if mine is not None and row[impl] > 0:
                text += " (" + fmt(mine / row[impl], 2) + "x)"
            others.append(text)
        table.append([op, str(size) if row["unit"] == "MB/s" else "-",
                      *(cell(row, impl) for impl in STANDARD), ratio, ", ".join(others)])
    widths = [max(len(r[c]) for r in table) for c in range(len(TABLE_HEADER))]
    lines = []
    for i, r in enumerate(table):
        lines.append("  ".join(t.rjust(widths[c]) if c > 0 else t.ljust(widths[c]) for c, t in enumerate(r)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def head_commit():
    try:
        out = subprocess.run(["git", "-C", os.path.dirname(os.path.realpath(__file__)), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def render_markdown(header, rows, filters, svg_path, md_path, commit, machine, notes):
    cpu = header["cpu"] + (f" ({machine})" if machine else "")
    features = " ".join(header["features"])
    chart = os.path.relpath(os.path.abspath(svg_path), os.path.dirname(os.path.abspath(md_path)))
    scope = f" Only operations containing {', '.join(filters)}." if filters else ""
    out = [
        "# Benchmarks",
        "",
        "<!-- Written by Scripts/bench-plot.py from one rampart-bench --json run; everything above",
        f"     \"{NOTES_HEADING}\" is rewritten on the next run, the notes are kept. -->",
        "",
        f"Rampart against OpenSSL and libsodium: one run of `rampart-bench` on {header['date'] or 'an unrecorded date'},",
        f"commit {commit}, on {cpu}.{scope}",
        f"CPU features: {features or 'not recorded'}.",
        "",
        f"![Rampart against OpenSSL and libsodium, ratio per row (log scale)]({chart})",
        "",
        "## How to read the table",
        "",
        "Each row is the median of interleaved samples taken in one process on the same buffers, timed by the",
        "benchmark thread's CPU time (`--wall` for the wall clock). A whole run takes about ten minutes, and",
        "rows drift by up to ±10% between runs on a shared VM. The \"vs best ref\" column is Rampart's speed",
        "over the best reference (for per-call rows, the inverse time ratio): above 1.00x is faster. The",
        "\"other\" column shows extra contenders with Rampart's ratio over them: in IGE rows OpenSSL's EVP",
        "AES-256-CBC encryption (the bound of one sequential AES chain), in modexp rows the variable-time",
        "powers, in `mtproto-encrypt-v2` the OpenSSL composition with a free padding generator, in",
        "`mtproto-server-pings` and `random-bytes` the standard library's `SystemRandomNumberGenerator`, in",
        "`mtproto-encrypt-batch-v2` and `aes256-ige-lanes` the same messages through the single-message calls.",
        "",
        "## The table",
        "",
        "```",
        f"Rampart benchmark {header['date']}",
        f"CPU: {header['cpu']} [{features}]",
        "",
        *table_lines(rows, filters),
        "",
        "MB/s = 10^6 bytes per second; per-call rows show calls/s, (ms per call) and peak memory; "
        "ratio > 1 means Rampart is faster than the best reference.",
        "```",
        "",
        "## Regenerating this page",
        "",
        "```sh",
        "swift run -c release rampart-bench --json bench.json      # about ten minutes",
        "python3 Scripts/bench-plot.py bench.json Docs/images/benchmark.svg \\",
        "    --markdown Docs/Benchmarks.md --commit \"$(git rev-parse --short HEAD)\" --machine \"...\"",
        "```",
        "",
        "The README's benchmark summary quotes figures of this page: update it with the page.",
        "",
    ]
    return "\n".join(out) + "\n" + (notes if notes else NOTES_HEADING + "\n\nNone yet.\n")


def kept_notes(md_path):
    """The hand-written notes of an existing page: its NOTES_HEADING line and everything after it."""
    try:
        with open(md_path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        fail(f"cannot read {md_path}: {e}")
    at = text.find("\n" + NOTES_HEADING + "\n")
    return text[at + 1:] if at >= 0 else None


def main():
    parser = argparse.ArgumentParser(description="Draw rampart-bench JSON results as an SVG chart.")
    parser.add_argument("results", help="JSON file written by rampart-bench --json")
    parser.add_argument("out", help="SVG file to write")
    parser.add_argument("--filter", nargs="+", action="extend", default=[], metavar="SUBSTRING",
                        help="keep only operations containing any of these substrings")
    parser.add_argument("--markdown", metavar="PAGE", help="also write the benchmark page (Docs/Benchmarks.md)")
    parser.add_argument("--commit", help="the commit the run was built from (default: HEAD)")
    parser.add_argument("--machine", default="", help="a description of the machine, beside the CPU name")
    args = parser.parse_args()
    filters = [s for f in args.filter for s in f.split(",") if s]
    header, rows = load(args.results)
    groups = comparisons(rows, filters)
    if not groups:
        print("bench-plot: warning: no rows to compare; writing an empty chart", file=sys.stderr)
    try:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(render(header, groups))
    except OSError as e:
        fail(f"cannot write {args.out}: {e}")
    print(f"wrote {args.out} ({sum(len(r) for _, r in groups)} rows)")
    if args.markdown:
        page = render_markdown(header, rows, filters, args.out, args.markdown, args.commit or head_commit(),
                               args.machine, kept_notes(args.markdown))
        try:
            with open(args.markdown, "w", encoding="utf-8") as f:
                f.write(page)
        except OSError as e:
            fail(f"cannot write {args.markdown}: {e}")
        print(f"wrote {args.markdown}")


if __name__ == "__main__":
    main()
