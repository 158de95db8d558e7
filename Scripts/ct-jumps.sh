#!/usr/bin/env bash
# Constant time of the kernels valgrind cannot run, checked on the object code: valgrind (the ctgrind
# check, Scripts/ctgrind.sh) does not implement AVX-512, so the AVX-512 IFMA exponentiation kernel
# (RampartAccelIFMA), the IFMA Poly1305 kernel (same target: one-time keys and messages pass
# through it) and the 512-bit multi-buffer kernels of MTProto's batch encryption (SHA-256 lanes
# in RampartAccelAVX512, AES-IGE lanes in RampartAccelVAES512: auth keys and plaintexts pass through
# them) are checked here instead. For each secret-handling function of the kernel this
# disassembles the release binary, prints every conditional jump with the instruction that set its
# flags, and fails when a function has more conditional jumps than the reviewed count below (a new
# branch appeared: review it, see Docs/Architecture.md §6.11) or is missing.
#
#   Scripts/ct-jumps.sh [BINARY]     (default: the release rampart-bench; build it first)
#
# The reviewed jumps: the products' digit loop (amm*); in the table reads (select*) the entry-count
# checks and loop, the overflow trap of the entry address and the stack protector. The table-read
# masks are `sete` results passed through a value barrier, not jumps. In the exponentiation around
# them (powerCT, powerCTPair, the window bits, the conversions, the final subtraction) every jump
# tests a public value: limb, digit and window counts, bit positions, the workspace alignment,
# overflow traps, the stack protector. In the multi-buffer kernels every jump is a loop over public
# counts: blocks, rounds, the 48 scheduled words, the lanes of the index-vector set-up.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-$(swift build -c release --show-bin-path)/rampart-bench}
[ -x "$bin" ] || { echo "ct-jumps: $bin not found (swift build -c release first)" >&2; exit 1; }
# function (mangled-name fragment) : reviewed number of conditional jumps
checks=(
    "RampartAccelIFMA5amm20yy:1"
    "RampartAccelIFMA7amm20x2yy:1"
    "RampartAccelIFMA5amm40yy:1"
    "RampartAccelIFMA8select20yy:5"
    "RampartAccelIFMA10select20x2yy:5"
    "RampartAccelIFMA8select40yy:5"
    # The orchestration around them: every jump on public values (limb and window counts, positions,
    # the workspace alignment, overflow traps); the final subtraction's borrow is a masked blend.
    "RampartAccelIFMA010MontgomeryC0O4bitsy:8"
    "RampartAccelIFMA010MontgomeryC0O10reduceOnce:18"
    "RampartAccelIFMA010MontgomeryC0O8toDigits:8"
    "RampartAccelIFMA010MontgomeryC0O10fromDigits:8"
    "RampartAccelIFMA010MontgomeryC0O7powerCT_:22"
    "RampartAccelIFMA010MontgomeryC0O11powerCTPair:20"
    # Poly1305 on IFMA: every jump tests the group count (two groups a step or one; the last step's
    # per-lane powers); the key powers, the lanes and the carries are straight-line code.
    "RampartAccelIFMA014poly1305BlocksC0:5"
    # Multi-buffer kernels (Docs/Architecture.md §6.6): loops over blocks, rounds and schedule words.
    "RampartAccelAVX512013sha256Lanes32:26"
    "RampartAccelAVX512013sha256Lanes16:14"
    "RampartAccelVAES51216vaesIGEEncrypt16:8"
)
dis=$(mktemp)
trap 'rm -f "$dis"' EXIT
objdump -d --no-show-raw-insn "$bin" > "$dis"
fail=0
for c in "${checks[@]}"; do
    sym=${c%%:*} want=${c##*:}
    body=$(awk -v f="$sym" 'index($0, f) && /^[0-9a-f]+ </ {on=1; next} on && /^$/ {exit} on' "$dis")
    if [ -z "$body" ]; then
        echo "ct-jumps: $sym not found in $bin" >&2
        fail=1
        continue
    fi
    jumps=$(echo "$body" | grep -B1 -E $'\tj[a-z]+ ' | grep -vE $'\tjmp ' | grep -E $'\tj' || true)
    n=$(echo -n "$jumps" | grep -c . || true)
    echo "$sym: $n conditional jumps (reviewed: $want)"
    echo "$body" | grep -B1 -E $'\tj[a-z]+ ' | grep -vE '^--$' | grep -vE $'\tjmp ' | sed 's/^/    /' | cut -c1-100
    if [ "$n" -gt "$want" ]; then
        echo "ct-jumps: $sym has $n conditional jumps, $want reviewed: a new branch to review" >&2
        fail=1
    fi
done

# The shared bodies of RampartKernelSupport (the eight-lane SHA-256, Salsa20, ChaCha20 and X25519
# loops, Argon2's compression, Poly1305's block) must be inlined into each tier's entry points, so
# that they run compiled with that tier's features. A call from a kernel tier into RampartKernelSupport
# would run code compiled for no tier, or, for an `@_alwaysEmitIntoClient` body that two tiers emit
# out of line, whichever copy the linker kept (an AVX-512 copy on an AVX2-only processor). Allowed:
# addressors of constants (round constants, feature sets) and the scan of a public exponent's bits
# (slidingWindowScan, whose closures are the tier's own code).
# The arm64 tiers built on x86_64 run on emulated instructions (RampartKernelSupport/ARMv8Emulated.swift,
# never selected, tests only): they are left out of these checks.
calls=$(awk '/^[0-9a-f]+ </ {fn=$2; next}
    /\tcall/ && fn ~ /^<\$s[0-9]+RampartAccel/ && fn !~ /RampartAccelARMv8/ && $NF ~ /^<\$s20RampartKernelSupport/ {print fn " -> " $NF}' "$dis" |
    grep -vE 'vau>$|17slidingWindowScan' || true)
if [ -n "$calls" ]; then
    echo "ct-jumps: kernel tiers call shared bodies out of line (mark them @inline(__always)):" >&2
    echo "$calls" | sed 's/^/    /' >&2
    fail=1
else
    echo "shared bodies: no kernel tier calls into RampartKernelSupport out of line"
fi

# The same for the standard library's generic specializations: the kernels' hot code must not call
# them (each module emits its own weak copy, compiled with its own features, and the linker keeps one:
# the eight-block Salsa20 kernels called SIMD8.lowHalf/highHalf 64 times per group, 8 % of a 256-byte
# secretbox). One-time initializers (constant tables, feature sets) may.
stdcalls=$(awk '/^[0-9a-f]+ </ {fn=$2; next}
    /\tcall/ && fn ~ /^<\$s[0-9]+RampartAccel/ && fn !~ /RampartAccelARMv8/ && fn !~ /(vpfi|WZ|requires)/ && $NF ~ /^<\$ss.*Tg/ {print fn " -> " $NF}' "$dis" || true)
if [ -n "$stdcalls" ]; then
    echo "ct-jumps: kernel code calls standard-library specializations out of line:" >&2
    echo "$stdcalls" | sed 's/^/    /' >&2
    fail=1
else
    echo "standard library: no kernel calls a generic specialization out of line"
fi

# And the other direction: a weak symbol that a kernel tier's object file and another module both
# define is linked once, so portable code may run the tier's copy. Every such linked copy must use
# baseline instructions only (no VEX/EVEX: no v-prefixed mnemonic, no ymm/zmm register).
objs=$(dirname "$bin")
if ls "$objs"/RampartAccel*.build/*.o > /dev/null 2>&1; then
    tierweak=$(for o in "$objs"/RampartAccel*.build/*.o; do case "$o" in */RampartAccelARMv8*) continue;; esac
        nm "$o" 2>/dev/null | awk '$2 == "W" {print $3}'; done | sort -u)
    otherweak=$(for o in "$objs"/*.build/*.o; do case "$o" in */RampartAccel*) continue;; esac
        nm "$o" 2>/dev/null | awk '$2 == "W" {print $3}'; done | sort -u)
    shared=$(comm -12 <(echo "$tierweak") <(echo "$otherweak"))
    bad=""
    for sym in $shared; do
        body=$(awk -v f="<$sym>:" '$2 == f {on=1; next} on && /^$/ {exit} on' "$dis")
        if echo "$body" | grep -qE $'\tv[a-z]|%[yz]mm'; then bad="$bad $sym"; fi
    done
    if [ -n "$bad" ]; then
        echo "ct-jumps: weak symbols shared by a kernel tier and portable code were linked with vector-extension code:$bad" >&2
        fail=1
    else
        echo "weak symbols: $(echo "$shared" | grep -c . || true) shared between kernel tiers and other modules, every linked copy baseline code"
    fi
else
    echo "weak symbols: no object files beside $bin, not checked"
fi
exit $fail
