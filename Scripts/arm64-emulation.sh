#!/usr/bin/env bash
# The emulated ARMv8 instructions (Sources/RampartKernelSupport/ARMv8Emulated.swift, portable Swift) against
# the real ones, through the very wrappers the kernels call (ARMv8Instructions.swift on arm64): 19
# instructions x 400 random operands each (plus edge values) through both, the real
# ones compiled to arm64 and run under qemu-aarch64, the emulated ones compiled for this machine.
# Needs what Scripts/arm64-kernels.sh needs (it builds the aarch64 standard library module first).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${RAMPART_ARM64_WORK:-.build/arm64}
[ -f "$work/mods/Swift.swiftmodule/aarch64-unknown-linux-gnu.swiftmodule" ] || { echo "arm64-emulation: run Scripts/arm64-kernels.sh first" >&2; exit 1; }
swiftc=$(command -v swiftc)
root=$(cd "$(dirname "$(readlink -f "$swiftc")")/.." && pwd)
f=(-Xcc -Xclang -Xcc -target-feature -Xcc -Xclang -Xcc)
"$swiftc" -frontend -c -target aarch64-unknown-linux-gnu -parse-stdlib -parse-as-library -O -I "$work/mods" \
    -resource-dir "$root/lib/swift" -module-name RampartARM64Instructions "${f[@]}" +aes "${f[@]}" +sha2 "${f[@]}" +sha3 \
    Sources/RampartKernelSupport/ARMv8Instructions.swift Scripts/arm64/instruction-table.swift \
    Scripts/arm64/instructions.swift -o "$work/instructions.o"
aarch64-linux-gnu-gcc -static -O2 -o "$work/instructions" Scripts/arm64/instruction_driver.c "$work/instructions.o"
"$swiftc" -O -parse-stdlib -module-name EmulationCheck Sources/RampartKernelSupport/ARMv8Emulated.swift \
    Scripts/arm64/instruction-table.swift Scripts/arm64/emulation-check/main.swift -o "$work/emulated"
python3 - "$work" <<'PY'
import random, subprocess, sys
work = sys.argv[1]
rng = random.Random(0xE4A1)
names = ["aese", "aesd", "aesmc", "aesimc", "pmull", "sha1c", "sha1p", "sha1m", "sha1h", "sha1su0", "sha1su1",
         "sha256h", "sha256h2", "sha256su0", "sha256su1", "sha512h", "sha512h2", "sha512su0", "sha512su1"]
edges = ["00" * 16, "ff" * 16, "80" + "00" * 15, "00" * 15 + "80", "01" + "00" * 15]
lines = []
for op in range(len(names)):
    for i in range(400):
        v = [edges[(i + j) % len(edges)] if i < 25 else "%032x" % rng.getrandbits(128) for j in range(3)]
        lines.append(f"{op} {v[0]} {v[1]} {v[2]}")
text = "\n".join(lines) + "\n"
real = subprocess.run(["qemu-aarch64-static", "-cpu", "max", f"{work}/instructions"], input=text, capture_output=True, text=True, check=True).stdout.split()
emu = subprocess.run([f"{work}/emulated"], input=text, capture_output=True, text=True, check=True).stdout.split()
bad = {}
for line, r, e in zip(lines, real, emu):
    if r != e:
        bad.setdefault(names[int(line.split()[0])], (line, r, e))
if len(real) != len(lines) or len(emu) != len(lines):
    print(f"arm64-emulation: {len(real)} real and {len(emu)} emulated answers for {len(lines)} cases", file=sys.stderr); sys.exit(1)
for n, (line, r, e) in bad.items():
    print(f"arm64-emulation: {n} differs: {line} -> real {r}, emulated {e}", file=sys.stderr)
if bad:
    sys.exit(1)
print(f"arm64-emulation: {len(names)} instructions, {len(lines)} operand sets: the emulated instructions equal the real ones under qemu")
PY
